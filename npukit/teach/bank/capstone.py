"""Questions on chapter 8, "The minimal closed loop" (chapters/08_capstone.md)."""

from __future__ import annotations

from ..._arith import ceil_div
from .core import choice, fmt, numeric, plural, short

U = "8"



def _array_cycles(m, n, k, r):
    return ceil_div(k, r) * ceil_div(n, r) * (3 * r + m - 2)              # weight-stationary, chapter 5


def _array_bytes(m, n, k):
    return m * k + k * n + m * n          # INT8 input (a 1×1 layer's A is its input tensor), weights, output


def _array_us(m, n, k, r, ghz, gbs):
    return max(_array_cycles(m, n, k, r) / (ghz * 1e3), _array_bytes(m, n, k) / (gbs * 1e3))          # µs


def _fp32_bytes(cout, cin):
    return 4 * (cout * cin + cout)                   # float32 weights and the folded BatchNorm's biases


def _qdq_bytes(cout, cin):
    return cout * cin + 4 * cout + cout + 4 * cout   # int8 weights, float32 scales, int8 zero points, int32 bias


QUESTIONS = [
    numeric(
        "ch8-agreement", U, 2,
        "On {n} held-out images the float model and the deployed INT8 model pick the same class for all but {d} "
        "images. What is the top-1 agreement, in percent? (One decimal.)",
        dict(n=1000, d=23),
        lambda n, d: 100 * (n - d) / n,
        lambda n, d, answer: f"({n} − {d}) / {n} = {answer:.1f} %.",
        lambda rng: dict(n=int(rng.choice([500, 1000, 2000])), d=int(rng.integers(0, 120))),
        abs_tol=0.06,
        mistakes=[(lambda n, d: 100 * d / n, "That is the share of disagreements.")],
        source="chapter 8, stage 6"),
    numeric(
        "ch8-roofline-layer", U, 4,
        "A layer does {f} MFLOP and moves {b} MB (10⁶ bytes) in float32 on a machine whose roofline has a peak of "
        "{p} GFLOP/s and {w} GB/s. What is the roofline's lower bound on its time, in µs? (Two decimals.)",
        dict(f=2.1, b=0.3, p=100, w=20),
        lambda f, b, p, w: max(f * 1e6 / (p * 1e9), b * 1e6 / (w * 1e9)) * 1e6,
        lambda f, b, p, w, answer: (f"max(F/P, B/W) = max({f * 1e3 / p:.2f} µs, {b * 1e3 / w:.2f} µs) = "
                                    f"{answer:.2f} µs."),
        lambda rng: dict(f=round(float(rng.uniform(0.1, 20)), 2), b=round(float(rng.uniform(0.01, 3)), 2),
                         p=int(rng.integers(20, 400)), w=int(rng.integers(5, 80))),
        abs_tol=0.006,
        mistakes=[(lambda f, b, p, w: (f * 1e6 / (p * 1e9) + b * 1e6 / (w * 1e9)) * 1e6,
                   "The roofline bound is the larger of the two times, not their sum: bytes and arithmetic overlap."),
                  (lambda f, b, p, w: f * 1e6 / (p * 1e9) * 1e6, "That is the arithmetic alone; check the bytes.")],
        source="chapter 8, explaining every number"),
    numeric(
        "ch8-array-layer", U, 4,
        "A pointwise (1×1, stride 1) convolution runs in INT8 on a {r}×{r} weight-stationary array at {ghz} GHz with "
        "{gbs} GB/s of DRAM bandwidth. Its GEMM, in chapter 5's convention, has M = {m} output pixels, N = {n} "
        "filters and K = {k} input channels, so A (M×K) is the layer's input tensor itself. Taking the longer of "
        "two times, its array cycles (chapter 5's count) at the clock and its compulsory INT8 bytes (input, "
        "weights and output, each moved once) over the bandwidth, how many µs does it take at least? "
        "(Three decimals.)",
        dict(m=16, n=128, k=64, r=32, ghz=1.0, gbs=136.5),
        _array_us,
        lambda m, n, k, r, ghz, gbs, answer: (
            f"Cycles: ⌈{k}/{r}⌉·⌈{n}/{r}⌉ = {plural(ceil_div(k, r) * ceil_div(n, r), 'fold')} × (3·{r} + {m} − 2) "
            f"= {fmt(_array_cycles(m, n, k, r))}, {_array_cycles(m, n, k, r) / (ghz * 1e3):.3f} µs; bytes "
            f"{fmt(m * k)} + {fmt(k * n)} + {fmt(m * n)} = {fmt(_array_bytes(m, n, k))}, "
            f"{_array_bytes(m, n, k) / (gbs * 1e3):.3f} µs: {answer:.3f} µs."),
        lambda rng: dict(m=int(rng.choice([1, 16, 49, 64, 256])), n=int(rng.choice([8, 64, 128, 512])),
                         k=int(rng.choice([16, 32, 64, 128, 256])), r=int(rng.choice([16, 32, 64])),
                         ghz=float(rng.choice([0.8, 1.0, 1.2])), gbs=float(rng.choice([25.6, 50.0, 136.5]))),
        abs_tol=0.0006,
        mistakes=[(lambda m, n, k, r, ghz, gbs: (_array_cycles(m, n, k, r) / (ghz * 1e3)
                                                 + _array_bytes(m, n, k) / (gbs * 1e3)),
                   "That adds the two times; the bound is the longer of them, the array computing while the bytes "
                   "move.")],
        source="ex-ch8-datasheet"),
    numeric(
        "ch8-qdq-ratio", U, 1,
        "A 1×1 convolution from {cin} to {cout} channels, its BatchNorm folded in, stores {cout}·{cin} float32 "
        "weights and {cout} float32 biases. Quantized in QDQ form it stores int8 weights, one float32 scale and one "
        "int8 zero point per output channel, and an int32 bias per output channel. How many times smaller are its "
        "stored bytes? (Two decimals.)",
        dict(cin=64, cout=128),
        lambda cin, cout: _fp32_bytes(cout, cin) / _qdq_bytes(cout, cin),
        lambda cin, cout, answer: (f"Float32: 4·({fmt(cout * cin)} + {cout}) = {fmt(_fp32_bytes(cout, cin))} B. QDQ: "
                                   f"{fmt(cout * cin)} + {4 * cout} + {cout} + {4 * cout} = "
                                   f"{fmt(_qdq_bytes(cout, cin))} B. Ratio {answer:.2f}: less than 4, because the "
                                   "scales and zero points are extra and the biases do not shrink."),
        lambda rng: dict(cin=int(rng.choice([16, 32, 64, 128])), cout=int(rng.choice([16, 32, 64, 128, 256]))),
        abs_tol=0.006,
        mistakes=[(lambda cin, cout: 4.0, "Four is the ratio for the weights alone."),
                  (lambda cin, cout: 4 * cout * cin / _qdq_bytes(cout, cin),
                   "That leaves out the float32 model's biases, which the folded BatchNorm gave it.")],
        source="chapter 8, stage 3"),
    numeric(
        "ch8-widen-macs", U, 5,
        "Net2Net widening multiplies every layer's channels by {f}. By what factor do the MACs of a pointwise "
        "(1×1) convolution grow, and those of a depthwise one? Give the pointwise factor.",
        dict(f=2),
        lambda f: f * f,
        lambda f, answer: (f"A pointwise layer's work is C_in·C_out per pixel: both grow by {f}, so ×{fmt(answer)}. "
                           f"A depthwise layer's is 9·C per pixel: ×{f}."),
        lambda rng: dict(f=int(rng.integers(2, 5))),
        mistakes=[(lambda f: f, "That is the depthwise factor: a pointwise layer's work grows with both its input "
                   "and its output channels.")],
        source="chapter 8, variants"),
    choice(
        "ch8-fold-first", U, 1,
        "Why fold BatchNormalization before calibrating and quantizing, rather than letting the runtime fold it "
        "afterwards?",
        ("The INT8 weights, their scales and the activation ranges must be those of the graph that runs; folding "
         "after quantization scales quantized weights off their grid, or leaves BatchNorm in float.", "Right."),
        [("Folding is impossible after quantization.", "It is possible; the result is no longer an INT8 weight on "
          "the stored grid."),
         ("The runtime cannot fold BatchNorm.", "OpenVINO folds it (chapter 3b)."),
         ("Folding changes the model's predictions.", "It is exact in real arithmetic; only rounding changes.")],
        source="self-check 1"),
    choice(
        "ch8-which-stage", U, 2,
        "The weight checks of stage 3 pass, but INT8 agrees with the float model on only four answers in five. "
        "Which stage is at fault?",
        ("Calibration: the weight checks do not depend on the calibration images; recalibrate on images like the "
         "deployment's and fix known ranges such as the input's.", "Right."),
        [("Export: the ONNX graph must be wrong.", "Export is checked against onnx.reference in stage 1."),
         ("Compilation: OpenVINO chose bf16.", "The INT8 model's convolutions are checked to run in INT8 in stage 5."),
         ("Folding: BatchNorm was folded twice.", "Stage 2 checks that the folded graph gives the same logits.")],
        source="self-check 2"),
    choice(
        "ch8-gate", U, 2,
        "Why is top-1 agreement with the float model a better deployment gate than held-out accuracy?",
        ("Accuracy is an average that can stay level while individual answers change in both directions; agreement "
         "counts the answers the deployment changed.", "Right."),
        [("Accuracy needs labels, which a deployment never has.", "Held-out labels exist; the point is what the "
          "number hides."),
         ("Agreement is always higher, so it passes more easily.", "A gate is chosen for what it detects, not for "
          "passing."),
         ("Accuracy cannot be computed on INT8 models.", "It can; chapter 8 reports it.")],
        source="self-check 3"),
    choice(
        "ch8-below-roof", U, 4,
        "Your FP32 latency comes out below the roofline bound you measured on the same machine. Is the roofline "
        "wrong?",
        ("No: the bound is for data from the memory whose bandwidth was measured; a small model's tensors stay in "
         "cache, and a peak measured while other programs ran is too low. Repeat the measurement.", "Right."),
        [("Yes: the roofline does not apply to CPUs.", "It applies; the bandwidth roof is per memory level."),
         ("No: latency below the bound proves the timer is broken.", "Caches and a low peak explain it first."),
         ("Yes: the FLOP count must be wrong.", "The count comes from the graph and agrees with chapter 0.")],
        source="self-check 4"),
    choice(
        "ch8-array-estimate", U, 4,
        "The assumed NPU array's estimate for CameraNet is many times below the time measured on the CPU. Will an "
        "NPU of that shape be that much faster?",
        ("Not necessarily: the estimate counts compute cycles and compulsory DRAM bytes only; the input conversion, "
         "per-layer launches, the driver and the host are not in it. It is a lower bound; measure on the device.",
         "Right."),
        [("Yes, the estimate is cycle-accurate.", "Cycle-accurate for the array's compute, not for the system."),
         ("Yes, if the clock is as assumed.", "The clock scales the array's cycles only."),
         ("No, NPUs are always slower on small models.", "Not always; the estimate simply cannot say.")],
        source="self-check 5"),
    choice(
        "ch8-dynamic", U, 1,
        "CameraNet exported with a symbolic batch (`to_onnx(batch=\"N\")`) goes through folding and quantization. "
        "Which stage stops it, and why?",
        ("The contract check (stage 4): `static_shape` violations, because an NPU compiler plans every buffer at "
         "compile time.", "Right: fix the batch at export, or reshape, and pad a variable batch."),
        [("Folding (stage 2): BatchNorm cannot fold with a symbolic batch.", "Folding works on a dynamic graph."),
         ("Quantization (stage 3): calibration needs a fixed batch.", "Calibration runs images of any batch."),
         ("None: OpenVINO's NPU plugin accepts dynamic shapes.", "The NPU plugin needs static shapes.")],
        source="ex-ch8-dynamic"),
    short(
        "ch8-night", U, 1,
        "Calibrate CameraNet on night-time images and run the closed loop. Which check fails, and why can the "
        "earlier checks (export, fold, the weight checks, the contract, compilation) not notice?",
        "Only the verification stage fails: INT8's top-1 agreement with the float model falls below the threshold. "
        "None of the earlier checks depends on the calibration images: weights are quantized from their own values, "
        "and calibration sets only the activation ranges, which only a comparison of answers tests.",
        [(1, "Names the failing check: INT8 agreement with float (stage 6)."),
         (1, "Weights are quantized from their own values."),
         (1, "Calibration only sets activation ranges, visible only in the answers.")],
        source="ex-ch8-night"),
    short(
        "ch8-int8-pay", U, 3,
        "Suppose that at batch 1 CameraNet's INT8 model runs barely faster than FP32, although it moves a quarter "
        "of the bytes. Name two changes to the deployment (not to the network) that would let INT8 pay off more, and say why.",
        "Each layer is so small that a kernel's fixed cost weighs as much as its arithmetic, and the INT8 model adds "
        "a quantization of the input. Feed the model uint8 pixels directly (the camera's format), so the input "
        "quantization disappears; run several frames per call (a larger batch gives each kernel more work per "
        "launch); or run larger images.",
        [(1, "Explains the cause: fixed per-kernel costs and the extra quantize step dominate."),
         (1, "One change: uint8 input (no quantize step)."),
         (1, "Another: a larger batch or larger images (more work per launch).")],
        source="ex-ch8-int8"),
]
