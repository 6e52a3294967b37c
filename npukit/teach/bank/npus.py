"""Questions on chapter 9, "Real NPUs, measured" (chapters/09_npus.md)."""

from __future__ import annotations

from .core import choice, fmt, numeric, short

U = "9"


def _bound_us(g, mb, p, w):
    return max(2 * g * 1e9 / (p * 1e12), mb * 1e6 / (w * 1e9)) * 1e6


def _image_s(te, u, v, n):
    return (te + 2 * n * u + v) / 1e3                 # one text encoding (the empty prompt's cached)


def _steps(b, te, u, v):
    return max(0, int((b - te - v) // (2 * u)))


def _fc_us(rng, m, k, n, p):
    frac = float(rng.uniform(0.08, 0.8))
    return max(0.1, round(2 * m * k * n / (p * 1e12 * frac) * 1e6, 1))


def _draw_fc(rng):
    m, k, n = (int(rng.choice([64, 256, 1024])), int(rng.choice([512, 1024, 2048, 4096])),
               int(rng.choice([512, 1024, 2048, 4096])))
    p = int(rng.choice([24, 45, 77, 80]))
    return dict(m=m, k=k, n=n, us=_fc_us(rng, m, k, n, p), p=p)


QUESTIONS = [
    numeric(
        "ch9-layer-bytes", U, 2,
        "A 3×3 convolution from {cin} to {cout} channels on a {h}×{h} input (stride 1, padding 1, no bias) runs in "
        "w8a8: INT8 weights and INT8 activations. How many bytes must one inference move at least, counting its "
        "weights, its input and its output once each?",
        dict(cin=64, cout=128, h=28),
        lambda cin, cout, h: cout * cin * 9 + cin * h * h + cout * h * h,
        lambda cin, cout, h, answer: (f"Weights {cout}·{cin}·9 = {fmt(cout * cin * 9)} B, input {cin}·{h}² = "
                                      f"{fmt(cin * h * h)} B, output {cout}·{h}² = {fmt(cout * h * h)} B: "
                                      f"{fmt(answer)} B."),
        lambda rng: dict(cin=int(rng.choice([16, 32, 64, 128])), cout=int(rng.choice([32, 64, 128, 256])),
                         h=int(rng.choice([7, 14, 28, 56]))),
        mistakes=[(lambda cin, cout, h: 4 * (cout * cin * 9 + cin * h * h + cout * h * h),
                   "That counts four bytes an element: w8a8 stores one."),
                  (lambda cin, cout, h: cout * cin * 9, "That is the weights alone; the input and output move too.")],
        source="chapter 9, counting the models ourselves"),
    numeric(
        "ch9-w8a16-bytes", U, 2,
        "A 1×1 convolution from {cin} to {cout} channels on a {h}×{h} input (no bias) runs in w8a16: INT8 weights, "
        "16-bit activations. How many bytes must one inference move at least, counting its weights, its input and "
        "its output once each?",
        dict(cin=96, cout=24, h=56),
        lambda cin, cout, h: cout * cin + 2 * (cin + cout) * h * h,
        lambda cin, cout, h, answer: (f"Weights {cout}·{cin} = {fmt(cout * cin)} B at one byte; activations "
                                      f"({cin} + {cout})·{h}² = {fmt((cin + cout) * h * h)} at two bytes: "
                                      f"{fmt(answer)} B."),
        lambda rng: dict(cin=int(rng.choice([16, 24, 96, 144, 192])), cout=int(rng.choice([16, 24, 32, 64])),
                         h=int(rng.choice([7, 14, 28, 56]))),
        mistakes=[(lambda cin, cout, h: cout * cin + (cin + cout) * h * h,
                   "That counts one byte an activation: w8a16's activations are 16 bits."),
                  (lambda cin, cout, h: 2 * (cout * cin + (cin + cout) * h * h),
                   "That counts two bytes a weight: w8a16's weights are 8 bits.")],
        source="chapter 9, counting the models ourselves"),
    numeric(
        "ch9-bound", U, 3,
        "A model does {g} GMAC (10⁹ multiply-accumulates) and must move {mb} MB (10⁶ bytes) in INT8. The NPU is "
        "rated {p} INT8 TOPS and its DRAM gives {w} GB/s. What is the roofline's lower bound on one inference, in "
        "µs? (One decimal.)",
        dict(g=4.1, mb=27.6, p=45, w=136.0),
        _bound_us,
        lambda g, mb, p, w, answer: (f"Compute: 2·{g}·10⁹ / {p}·10¹² = {2 * g * 1e3 / p:.1f} µs. Memory: "
                                     f"{mb}·10⁶ / {w}·10⁹ = {mb * 1e3 / w:.1f} µs. The bound is the larger: "
                                     f"{answer:.1f} µs."),
        lambda rng: dict(g=round(float(rng.uniform(0.3, 8)), 2), mb=round(float(rng.uniform(3, 100)), 1),
                         p=int(rng.choice([24, 45, 77, 80])), w=float(rng.choice([67.2, 84.8, 136.0, 228.0]))),
        abs_tol=0.06,
        mistakes=[(lambda g, mb, p, w: max(g * 1e9 / (p * 1e12), mb * 1e6 / (w * 1e9)) * 1e6,
                   "A MAC is two operations (a multiply and an add): TOPS count operations."),
                  (lambda g, mb, p, w: (2 * g * 1e9 / (p * 1e12) + mb * 1e6 / (w * 1e9)) * 1e6,
                   "The bound is the larger of the two times, not their sum: moving bytes and computing overlap.")],
        source="chapter 9, predict, then compare"),
    numeric(
        "ch9-delivered", U, 3,
        "A fully connected layer multiplies a {m}×{k} input by a {k}×{n} weight matrix. Its published latency on "
        "an NPU rated {p} TOPS is {us} µs. What percentage of the peak did it deliver? (One decimal.)",
        dict(m=256, k=2048, n=1024, us=120.0, p=45),
        lambda m, k, n, us, p: 100 * 2 * m * k * n / (us * 1e-6) / (p * 1e12),
        lambda m, k, n, us, p, answer: (f"{fmt(m * k * n)} MACs = {fmt(2 * m * k * n)} operations in {us} µs: "
                                        f"{2 * m * k * n / us / 1e6:.2f} TOPS of {p}, {answer:.1f} %."),
        _draw_fc,
        abs_tol=0.06,
        mistakes=[(lambda m, k, n, us, p: 100 * m * k * n / (us * 1e-6) / (p * 1e12),
                   "That counts a MAC as one operation; a TOPS rating counts two.")],
        source="chapter 9, predict, then compare"),
    numeric(
        "ch9-image-seconds", U, 5,
        "One Stable Diffusion image: the text encoder takes {te} ms, the UNet {u} ms per call, the VAE decoder "
        "{v} ms. It runs {n} denoising steps with classifier-free guidance (two UNet calls a step), and the empty "
        "prompt's encoding is cached. How many seconds does one image take? (Two decimals.)",
        dict(te=5, u=113, v=266, n=20),
        _image_s,
        lambda te, u, v, n, answer: (f"{te} + 2·{n}·{u} + {v} = {fmt(te + 2 * n * u + v)} ms: "
                                     f"{answer:.2f} s."),
        lambda rng: dict(te=int(rng.integers(3, 30)), u=int(rng.integers(40, 400)), v=int(rng.integers(100, 900)),
                         n=int(rng.choice([4, 10, 20, 30, 50]))),
        abs_tol=0.006,
        mistakes=[(lambda te, u, v, n: (te + n * u + v) / 1e3,
                   "With guidance the UNet runs twice a step (with the prompt and with the empty prompt)."),
                  (lambda te, u, v, n: 2 * n * u / 1e3, "The text encoder and the decoder run once per image too.")],
        source="chapter 9, a text-to-image pipeline, per image"),
    numeric(
        "ch9-steps", U, 5,
        "An app must make an image in {b} ms with classifier-free guidance, the empty prompt's encoding cached. "
        "The text encoder takes {te} ms, the UNet {u} ms per call, the VAE decoder {v} ms. How many denoising "
        "steps fit at most?",
        dict(b=3200, te=5, u=113, v=266),
        _steps,
        lambda b, te, u, v, answer: (f"({b} − {te} − {v}) / (2·{u}) = {(b - te - v) / (2 * u):.2f}, rounded down: "
                                     f"{fmt(answer)} steps."),
        lambda rng: dict(b=int(rng.choice([1000, 2000, 3200, 5000])), te=int(rng.integers(3, 30)),
                         u=int(rng.integers(20, 200)), v=int(rng.integers(100, 500))),
        mistakes=[(lambda b, te, u, v: max(0, int((b - te - v) // u)),
                   "That is one UNet call a step; guidance makes it two."),
                  (lambda b, te, u, v: max(0, int(b // (2 * u))),
                   "The text encoder and the decoder take their share of the budget first.")],
        source="ex-ch9-steps"),
    choice(
        "ch9-copied", U, 1,
        "Two devices of AI Hub's table show exactly the same latency for every model, to the microsecond. What "
        "should you check first?",
        ("Whether one is listed with the other as its reference chipset: its rows repeat the reference's, so they "
         "are one measurement, not two.", "Right: count such rows once (`t.select(distinct=True)`)."),
        [("Nothing: the two use the same chip, so the same numbers are expected.",
          "Two runs on one chip still differ by a few percent; identical figures are a copy."),
         ("Whether the table rounds its latencies to whole milliseconds.",
          "It gives them to the microsecond; rounding does not make every model agree."),
         ("Whether both devices ran the model on the CPU.",
          "Where the layers ran is a separate column; it does not make two devices' times identical.")],
        source="self-check 3"),
    choice(
        "ch9-gflops", U, 2,
        "torchvision gives ResNet-50's cost as 4.09 \"GFLOPS\". What must you establish before dividing it by a "
        "TOPS rating to get a time?",
        ("That the figure counts MACs (torchvision's does, so double it for operations), for which input size, "
         "and that the TOPS are at the precision the model runs in.", "Right."),
        [("Nothing: GFLOPS and TOPS are the same unit apart from a factor of 1000.",
          "torchvision's figure counts multiply-accumulates; a TOPS rating counts each as two operations."),
         ("Only that the model runs in float, since FLOPS are floating-point operations.",
          "The count of MACs does not depend on the precision; the rating does."),
         ("That the figure includes the weights' bytes.", "A count of operations has no bytes in it.")],
        source="self-check 2"),
    choice(
        "ch9-npu-only", U, 1,
        "A published run lists some of its layers on the CPU. Can you compare its latency with the NPU's roofline "
        "bound?",
        ("Not as a run of the NPU: part of its time is the CPU's and the copies between the two, so leave it out "
         "(`npu_only=True`) or report it apart.", "Right."),
        [("Yes: the CPU layers are few, so they do not matter.", "A few layers off the NPU can cost more than the "
          "rest, with their copies."),
         ("Yes, after adding the CPU's peak rate to the NPU's.", "Time on two units does not add up like rates."),
         ("No: such a run is always slower than the bound.", "Every run is slower than the bound; the question "
          "is what it measures.")],
        source="chapter 9, the published measurements"),
    choice(
        "ch9-small-layers", U, 4,
        "On each of chapter 9's four devices, MobileNet-v2's fastest INT8 run takes several times its roofline "
        "bound, and more than twice as many times as ResNet-50's takes its own. What explains most of the gap?",
        ("Costs the bound leaves out: a fixed cost per inference and per layer, many small and depthwise layers "
         "that keep a large matrix unit poorly used, activations that leave the chip.", "Right."),
        [("The NPU's bandwidth figure is wrong.", "A wrong bandwidth would move both models' bounds alike."),
         ("MobileNet-v2 does more MACs than ResNet-50.", "It does about a fourteenth of ResNet-50's."),
         ("The bound counts MobileNet-v2's weights twice.", "It counts every weight once, for both models.")],
        source="chapter 9, where the bound under-predicts"),
    choice(
        "ch9-runtime-mix", U, 5,
        "On one phone the fastest INT8 run of a model comes from LiteRT and the fastest float run from ONNX "
        "Runtime. What does their ratio measure?",
        ("A change of precision and a change of runtime together; compare INT8 with float within one runtime.",
         "Right: the runtime is part of the measurement."),
        [("INT8's gain on this NPU.", "Part of the ratio is LiteRT's advantage over ONNX Runtime."),
         ("Nothing: the two runtimes compile to the same NPU code.", "Their times for one model and precision "
          "differ, so their code does."),
         ("The bandwidth saved by 8-bit weights.", "A ratio of times does not separate bandwidth from "
          "arithmetic; and here it also holds the runtime change.")],
        source="chapter 9, INT8 against float on the same NPU"),
    short(
        "ch9-beat-bound", U, 3,
        "A published run is faster than the roofline bound you computed for it. List what could explain it, and "
        "say which you would check first.",
        "The bound assumes a peak rate, a bandwidth, an operation count and bytes that come from DRAM once per "
        "inference. A run beats it if one of these is wrong: a miscounted model (MACs counted as operations, the "
        "wrong input size or precision), a datasheet figure lower than the chip's (or one at another precision), or "
        "weights that stayed on chip between inferences, so they were not read from DRAM. Check the counts and "
        "the precisions first: they are the commonest error.",
        [(1, "The bound rests on peak, bandwidth, the count and the bytes moved per inference."),
         (1, "Names a wrong count or precision as a cause."),
         (1, "Names a wrong datasheet figure or weights kept on chip as a cause.")],
        source="self-check 1"),
    short(
        "ch9-45tops", U, 5,
        "Test the claim \"a 45 TOPS NPU delivers 5 to 10 effective TOPS\" with a table of published latencies. "
        "Which runs do you keep, what do you compute, and what can the data not show?",
        "Keep the runs measured on the 45-TOPS chip itself (not copied from a reference device), entirely on the "
        "NPU, in INT8, the precision the rating counts; report float and mixed precisions apart. For each, divide "
        "twice the model's MACs by the latency. The rates depend on the model, so the claim holds for some models "
        "and not others; the data cannot say why a given model is slow (the runtime is part of every measurement) "
        "nor what another model, runtime or driver would deliver.",
        [(1, "Keeps measured, NPU-only INT8 runs (copies and other precisions apart)."),
         (1, "Computes 2·MACs / latency per run."),
         (1, "Concludes that the rate depends on the model, and names a limit of the data (runtime, other models).")],
        source="chapter 9, what 45 TOPS delivers"),
]
