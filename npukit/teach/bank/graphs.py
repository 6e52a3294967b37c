"""Questions on chapter 3, "Graphs and the roofline" (chapters/03_graphs.md)."""

from __future__ import annotations

from ..._arith import conv_out_size
from .core import choice, fmt, numeric, short

U = "3"



def _dw_counts(c, h, s):
    """MACs and float32 bytes (input, weights, output) of a depthwise 3×3 convolution, padding 1."""
    o = conv_out_size(h, 3, s, 1, 1)
    macs = c * o * o * 9
    return macs, 4 * (c * h * h + 9 * c + c * o * o)


QUESTIONS = [
    numeric(
        "ch3-pointwise-macs", U, 1,
        "A 1×1 convolution from {cin} to {cout} channels runs on a {h}×{h} map (batch 1). How many MACs does it do?",
        dict(cin=64, cout=64, h=56),
        lambda cin, cout, h: h * h * cin * cout,
        lambda cin, cout, h, answer: f"{h}·{h} output positions × {cout} outputs × {cin} inputs = {fmt(answer)} MACs.",
        lambda rng: dict(cin=int(rng.choice([16, 32, 64, 128])), cout=int(rng.choice([16, 32, 64, 128, 256])),
                         h=int(rng.choice([7, 14, 28, 56]))),
        mistakes=[(lambda cin, cout, h: 2 * h * h * cin * cout, "That is FLOPs: one MAC is two FLOPs.")],
        source="self-check 1"),
    numeric(
        "ch3-gemm-flops", U, 1,
        "An ONNX Gemm computes Y = X·Wᵀ + b with X of {m}×{k}, W of {n}×{k} and a bias of {n} values. How many "
        "FLOPs does it do, counting a MAC as 2 FLOPs and each bias addition as 1?",
        dict(m=1, k=128, n=8),
        lambda m, k, n: 2 * m * n * k + m * n,
        lambda m, k, n, answer: f"2·{m}·{n}·{k} for the MACs plus {m}·{n} for the bias: {fmt(answer)} FLOPs.",
        lambda rng: dict(m=int(rng.choice([1, 4, 16, 64])), k=int(rng.choice([64, 128, 256, 512])),
                         n=int(rng.choice([8, 10, 100, 1000]))),
        mistakes=[(lambda m, k, n: m * n * k, "That is the MAC count, without the bias: a MAC is 2 FLOPs.")],
        source="chapter 3, counting rules"),
    numeric(
        "ch3-dw-intensity", U, 1,
        "A depthwise 3×3 convolution, stride {s}, padding 1, on a 1×{c}×{h}×{h} float32 input runs on its own: "
        "it reads its input and weights from DRAM and writes its output once. What is its arithmetic intensity "
        "in FLOP/byte? (Three decimals.)",
        dict(c=32, h=16, s=2),
        lambda c, h, s: 2 * _dw_counts(c, h, s)[0] / _dw_counts(c, h, s)[1],
        lambda c, h, s, answer: (f"{fmt(_dw_counts(c, h, s)[0])} MACs = {fmt(2 * _dw_counts(c, h, s)[0])} FLOPs "
                                 f"over {fmt(_dw_counts(c, h, s)[1])} bytes (input, 9·{c} weights, output): "
                                 f"{answer:.3f} FLOP/byte."),
        lambda rng: dict(c=int(rng.choice([16, 32, 64, 128])), h=int(rng.choice([8, 14, 16, 28, 56])),
                         s=int(rng.integers(1, 3))),
        abs_tol=0.0006,
        mistakes=[(lambda c, h, s: _dw_counts(c, h, s)[0] / _dw_counts(c, h, s)[1],
                   "That counts MACs per byte; intensity is in FLOPs, two per MAC.")],
        source="ex-ch3-depthwise"),
    numeric(
        "ch3-ridge", U, 3,
        "A machine's roofline has a peak of {p} GFLOP/s and a bandwidth of {w} GB/s. Where is its ridge point, in "
        "FLOP/byte? (Two decimals.)",
        dict(p=140, w=18),
        lambda p, w: p / w,
        lambda p, w, answer: f"I* = P / W = {p} / {w} = {answer:.2f} FLOP/byte.",
        lambda rng: dict(p=int(rng.integers(20, 2000)), w=int(rng.integers(5, 200))),
        abs_tol=0.006, mistakes=[(lambda p, w: w / p, "That is W / P; the ridge is the peak divided by the bandwidth.")],
        source="ex-ch3-threads"),
    numeric(
        "ch3-attainable", U, 3,
        "On a machine with a peak of {p} GFLOP/s and {w} GB/s of bandwidth, what rate (GFLOP/s) can a kernel of "
        "arithmetic intensity {i} FLOP/byte attain at most? (Two decimals.)",
        dict(p=140, w=30, i=0.875),
        lambda p, w, i: min(p, w * i),
        lambda p, w, i, answer: f"min(P, W·I) = min({p}, {w}·{i}) = {answer:.2f} GFLOP/s.",
        lambda rng: dict(p=int(rng.integers(20, 500)), w=int(rng.integers(5, 100)),
                         i=float(rng.choice([0.125, 0.25, 0.875, 2.0, 8.0, 15.2, 40.0]))),
        abs_tol=0.006,
        mistakes=[(lambda p, w, i: p, "That is the peak: a kernel left of the ridge is limited by bandwidth.")],
        source="lab 3, attainable"),
    numeric(
        "ch3-copy-bandwidth", U, 2,
        "A program copies a {gib} GiB array into another in {t} s. What bandwidth, in GB/s (10⁹ bytes per second), "
        "does STREAM's convention assign the copy? (Two decimals.)",
        dict(gib=1, t=0.1),
        lambda gib, t: 2 * gib * 2**30 / t / 1e9,
        lambda gib, t, answer: (f"STREAM counts bytes read plus bytes written, 2·{gib}·2³⁰ bytes in {t} s: "
                                f"{answer:.2f} GB/s."),
        lambda rng: dict(gib=int(rng.integers(1, 5)), t=float(rng.choice([0.05, 0.08, 0.1, 0.2, 0.25]))),
        abs_tol=0.006,
        mistakes=[(lambda gib, t: gib * 2**30 / t / 1e9, "That counts only the bytes read; a copy also writes them."),
                  (lambda gib, t: 2 * gib / t, "That is GiB/s; 1 GB is 10⁹ bytes, 1 GiB is 2³⁰.")],
        source="ex-ch3-copy"),
    choice(
        "ch3-double-peak", U, 3,
        "A machine's peak FLOP/s doubles; its bandwidth does not change. Which of a model's layers get faster?",
        ("Only those right of the old ridge (compute-bound), by up to twice.", "Right: memory-bound layers are "
         "limited by bytes over bandwidth."),
        [("All of them, twice as fast.", "Layers left of the ridge wait for memory, which did not change."),
         ("Only the memory-bound ones.", "Those are exactly the ones the peak does not limit."),
         ("None: the ridge moves left, so more layers become memory-bound.",
          "The ridge moves right (P/W grows), and compute-bound layers still gain.")],
        source="self-check 2"),
    choice(
        "ch3-above-roof", U, 4,
        "A measured kernel sits above the slanted DRAM roof of a roofline. What does that show?",
        ("Its bytes came from a cache, whose higher bandwidth gives a higher slanted roof; a roof per memory level "
         "places it.", "Right: the DRAM roof bounds kernels whose bytes come from DRAM."),
        [("The roofline model is wrong.", "The model is right for data from DRAM; this kernel's data were closer."),
         ("The kernel did fewer FLOPs than counted.", "The FLOP count is fixed by the layer, not by the kernel's "
          "speed."),
         ("The clock ran faster than the peak allows.", "Then it would be above the flat roof, not the slanted one.")],
        source="self-check 3"),
    choice(
        "ch3-write-allocate", U, 2,
        "A program copies an array of S bytes, many times larger than the caches, with ordinary stores that write "
        "through a write-allocate cache. How many bytes does DRAM move?",
        ("3S: read the source, read each destination line for ownership, write it back.", "Right. (Streaming "
         "stores avoid the extra read, and some recent cores skip it for whole-line writes: measure.)"),
        [("2S: read once, write once.", "That is what the program asks for (and what STREAM counts); the read for "
          "ownership adds S."),
         ("S: the cache absorbs the writes.", "A copy larger than the caches must write its destination back."),
         ("4S: the source is read twice.", "The source is read once; the extra read is the destination's.")],
        source="chapter 3, write-allocate"),
    choice(
        "ch3-mac-ops", U, 1,
        "A layer does 1.5 million multiply–accumulates. How many operations does it do in the convention of FLOP "
        "counts and of vendors' TOPS figures?",
        ("3 million: a MAC is a multiply and an add.", "Right."),
        [("1.5 million: a MAC is one operation.", "Counting a MAC as one operation halves every figure; vendors "
          "count two."),
         ("6 million: a MAC reads two operands and writes one result.", "Operand reads are bytes, not operations."),
         ("It depends on the precision.", "The count does not; the time per operation does.")],
        source="chapter 3, MACs and FLOPs"),
    short(
        "ch3-fastest-vs-median", U, 2,
        "Why is a roof measured as the fastest of several runs, while a kernel placed under it reports its median?",
        "The roof is what the machine can do; other programs can only slow a run down, so the fastest run is the "
        "best estimate of the ceiling. A kernel's median is what a user of the kernel typically gets, noise "
        "included.",
        [(1, "Noise only slows runs: the fastest run estimates the ceiling."),
         (1, "The median describes what a kernel typically delivers, noise included.")],
        source="self-check 4"),
    short(
        "ch3-mismatched-threads", U, 2,
        "On a two-core machine the peak is measured on both cores and the bandwidth with a single-threaded copy. "
        "What does this do to the ridge and to the layers' classification, and when is measuring both on one "
        "thread right?",
        "The one-thread bandwidth is too low for a two-thread peak, so the ridge P/W lies too far right, and "
        "layers whose intensity lies between the true and the false ridge are called memory-bound although they "
        "are compute-bound (buying bandwidth would not help them). Measuring both on one thread is right when the "
        "model will run on one thread (for example `INFERENCE_NUM_THREADS=1`).",
        [(1, "The ridge moves right (bandwidth underestimated)."),
         (1, "Some compute-bound layers are misclassified as memory-bound."),
         (1, "Both numbers on one thread when the model runs on one thread.")],
        source="ex-ch3-threads"),
]
