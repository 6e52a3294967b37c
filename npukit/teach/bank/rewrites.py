"""Questions on chapter 3b, "Rewriting the graph" (chapters/03b_rewrites.md)."""

from __future__ import annotations

import math

from .core import choice, fmt, numeric, short

U = "3b"


def _bn_draw(rng):
    return dict(gamma=round(float(rng.uniform(0.2, 3.0)), 2), beta=round(float(rng.uniform(-2, 2)), 2),
                mean=round(float(rng.uniform(-2, 2)), 2), var=round(float(rng.uniform(0.05, 4.0)), 2))


def _scale(gamma, var, eps=1e-5):
    return gamma / math.sqrt(var + eps)


def _live_peak(a, b, c, d):
    # lifetimes (first, last): A 0-3, B 1-2, C 2-3, D 3-4 (the chapter's example)
    life = {"a": (a, 0, 3), "b": (b, 1, 2), "c": (c, 2, 3), "d": (d, 3, 4)}
    return max(sum(s for s, f, l in life.values() if f <= t <= l) for t in range(5))


QUESTIONS = [
    numeric(
        "ch3b-fold-bias", U, 1,
        "A convolution without bias is followed by a BatchNormalization with scale γ = {gamma}, shift β = {beta}, "
        "running mean μ = {mean}, variance σ² = {var} and ε = 1e-5. What bias does folding give the fused "
        "convolution's output channel? (Three decimals.)",
        dict(gamma=2.0, beta=0.5, mean=1.5, var=3.0),
        lambda gamma, beta, mean, var: beta - _scale(gamma, var) * mean,
        lambda gamma, beta, mean, var, answer: (f"s = γ/√(σ² + ε) = {_scale(gamma, var):.4f}; "
                                                f"b′ = β − s·μ = {answer:.3f}."),
        _bn_draw, abs_tol=0.0006,
        mistakes=[(lambda gamma, beta, mean, var: beta - gamma * mean,
                   "The mean is scaled by γ/√(σ² + ε), not by γ alone."),
                  (lambda gamma, beta, mean, var: _scale(gamma, var) * (beta - mean),
                   "β is added after scaling, not scaled with the mean.")],
        source="ex-ch3-fold"),
    numeric(
        "ch3b-fold-weight", U, 1,
        "A convolution is followed by a BatchNormalization with scale γ = {gamma}, variance σ² = {var} and "
        "ε = 1e-5. One weight of the convolution's output channel is {w}. What is it after folding the "
        "BatchNormalization into the convolution? (Four decimals.)",
        dict(gamma=2.0, var=3.0, w=0.3),
        lambda gamma, var, w: _scale(gamma, var) * w,
        lambda gamma, var, w, answer: f"W′ = s·W with s = γ/√(σ² + ε): {answer:.4f}.",
        lambda rng: dict(gamma=round(float(rng.uniform(0.2, 3.0)), 2), var=round(float(rng.uniform(0.05, 4.0)), 2),
                         w=round(float(rng.uniform(-1, 1)), 3)),
        abs_tol=0.00006,
        mistakes=[(lambda gamma, var, w: gamma * w, "Divide by √(σ² + ε) as well.")],
        source="chapter 3b, folding"),
    numeric(
        "ch3b-fusion-saves", U, 2,
        "A Conv → Relu pair runs as two kernels; the convolution's float32 output has shape `(1, {c}, {h}, {h})`. "
        "How many DRAM bytes does fusing the pair into one kernel save per inference?",
        dict(c=32, h=16),
        lambda c, h: 2 * c * h * h * 4,
        lambda c, h, answer: (f"The intermediate ({fmt(c * h * h * 4)} B) is no longer written by the convolution "
                              f"and read back by the Relu: 2S = {fmt(answer)} bytes."),
        lambda rng: dict(c=int(rng.choice([8, 16, 32, 64, 128])), h=int(rng.choice([4, 8, 14, 16, 28]))),
        mistakes=[(lambda c, h: c * h * h * 4, "The intermediate is both written and read back: 2S, not S.")],
        source="chapter 3b, fusion"),
    numeric(
        "ch3b-live-peak", U, 3,
        "Nodes 0–4 run in order. Tensor A ({a} KiB) is written by node 0 and read by nodes 1 and 3; B ({b} KiB) "
        "is written by 1 and read by 2; C ({c} KiB) is written by 2 and read by 3; D ({d} KiB) is written by 3 "
        "and read by 4. What is the most memory, in KiB, live at one step?",
        dict(a=4, b=8, c=2, d=8),
        _live_peak,
        lambda a, b, c, d, answer: (f"Lifetimes: A 0–3, B 1–2, C 2–3, D 3–4. At node 2, A + B + C = {a + b + c}; "
                                    f"at node 3, A + C + D = {a + c + d}: the peak is {fmt(answer)} KiB."),
        lambda rng: dict(a=int(rng.integers(1, 17)), b=int(rng.integers(1, 17)), c=int(rng.integers(1, 17)),
                         d=int(rng.integers(1, 17))),
        mistakes=[(lambda a, b, c, d: a + b + c + d, "That is one buffer per tensor; B and D are never live at once.")],
        source="ex-ch3-peak"),
    numeric(
        "ch3b-gemm-time", U, 4,
        "A {n}×{n}×{n} INT8 matrix product runs at a peak of {tops} TOPS (a MAC counted as two operations). How "
        "many milliseconds does its arithmetic take at the peak? (Three decimals.)",
        dict(n=4096, tops=10),
        lambda n, tops: 2 * n**3 / (tops * 1e12) * 1e3,
        lambda n, tops, answer: f"2·{n}³ = {fmt(2 * n ** 3)} operations / {tops}·10¹² per second = {answer:.3f} ms.",
        lambda rng: dict(n=int(rng.choice([1024, 2048, 4096, 8192])), tops=int(rng.choice([10, 15, 26, 45, 48]))),
        abs_tol=0.0006,
        mistakes=[(lambda n, tops: n**3 / (tops * 1e12) * 1e3, "That counts a MAC as one operation; TOPS counts two."),
                  (lambda n, tops: 140.0 if (n, tops) == (4096, 10) else None,
                   "The second source article's 0.14 s is ten times the arithmetic's time.")],
        source="chapter 3b, what 45 TOPS buys"),
    numeric(
        "ch3b-fc-intensity", U, 4,
        "A Gemm from {k} features to {n} classes (weights and bias included, every element 1 byte, INT8) runs on a "
        "batch of {m}. What is its intensity in operations per byte, counting 2 per MAC and 1 per bias addition? "
        "(Two decimals.)",
        dict(k=128, n=8, m=64),
        lambda k, n, m: (2 * m * k * n + m * n) / (m * k + m * n + k * n + n),
        lambda k, n, m, answer: (f"Operations 2·{m}·{k}·{n} + {m}·{n}; bytes {m}·{k} in, {m}·{n} out, {k}·{n} + {n} "
                                 f"weights and bias: {answer:.2f} op/byte. However large the batch, it stays below "
                                 f"(2·{k} + 1)·{n}/({k} + {n}) because each input byte feeds only {n} MACs."),
        lambda rng: dict(k=int(rng.choice([64, 128, 256, 512])), n=int(rng.choice([8, 10, 16, 100])),
                         m=int(rng.choice([1, 8, 64, 256]))),
        abs_tol=0.006, source="ex-ch3-fc-batch"),
    choice(
        "ch3b-fold-other-reader", U, 1,
        "Why may a BatchNormalization not be folded into a convolution whose output another node also reads?",
        ("The other reader needs the convolution's raw output, which no longer exists after the fold.", "Right."),
        [("Folding is only exact for convolutions without bias.", "Folding handles a bias: b′ = s(b − μ) + β."),
         ("ONNX forbids a tensor with two readers.", "A tensor may have any number of readers."),
         ("The fold changes the convolution's output shape.", "It changes only weights and bias.")],
        source="self-check 1"),
    choice(
        "ch3b-below-live", U, 3,
        "Can a memory plan use less memory than the most bytes live at one step?",
        ("Not without in-place operations: the tensors live at that step need distinct bytes.",
         "Right; with an in-place op (a Relu over its input) two of them share one buffer."),
        [("Yes, with a cleverer placement order.", "Placement cannot let two simultaneously live tensors share "
          "bytes."),
         ("Yes, by aligning buffers to 64 bytes.", "Alignment only adds padding."),
         ("Yes, greedy-by-size always reaches half of it.", "The live bytes are a lower bound for any plan.")],
        source="self-check 3"),
    choice(
        "ch3b-three-times-tops", U, 4,
        "Chip A has three times the TOPS of chip B and the same memory. When does a model run three times faster "
        "on A?",
        ("Only if its layers are compute-bound on both chips (right of both ridges).",
         "Right; layers left of both ridges run in bytes over bandwidth, the same on both."),
        [("Always: time is operations divided by TOPS.", "Only the arithmetic shrinks; memory-bound layers wait for "
          "the same bytes."),
         ("Only if the model is memory-bound.", "Memory-bound layers do not gain at all."),
         ("Never: TOPS figures are not comparable.", "They are comparable; they bound only the arithmetic.")],
        source="self-check 4"),
    choice(
        "ch3b-bn-before-conv", U, 1,
        "A BatchNormalization comes *before* a convolution that pads with zeros. Is folding it into that "
        "convolution's weights and bias exact?",
        ("Only in the interior: at the border the convolution pads the normalized input with zeros, where the "
         "rewrite assumes the shift t.", "Right; that is why runtimes fold Conv → BatchNorm, not the reverse."),
        [("Yes, folding is always exact in real arithmetic.", "It is exact for Conv → BatchNorm, not for BatchNorm "
          "→ padded Conv."),
         ("No, never: the scale cannot be moved into the weights.", "The scale moves; the constant shift is the "
          "problem at the border."),
         ("Only in float64.", "The error at the border is not rounding.")],
        source="ex-ch3-fold"),
    short(
        "ch3b-fusion-speed", U, 2,
        "Fusing Conv → Relu leaves the FLOPs unchanged. Why can it still make the pair up to twice as fast?",
        "Unfused, the pair reads the input, writes the convolution's output, reads it back and writes the result: "
        "four tensors' worth of traffic for tensors of similar size. Fused, it reads the input and writes the "
        "result: two. For memory-bound layers time follows bytes, so the pair can run up to twice as fast; a "
        "compute-bound pair gains nothing.",
        [(1, "Counts the traffic: four tensors unfused, two fused."),
         (1, "Time follows bytes for memory-bound layers."),
         (1, "Notes that compute-bound layers do not gain.")],
        source="self-check 2"),
    short(
        "ch3b-residual-arena", U, 3,
        "A residual chain of Conv → Add → Relu blocks, all tensors of one size, needs an arena of three tensors "
        "however deep it is, while a plain chain needs two. Explain both numbers.",
        "In a plain chain each tensor dies once the next node has read it, so at most two are live (a node's "
        "input and its output) and two buffers used in turn suffice. In a residual block the block's input must "
        "stay live across the convolution until its Add, so three are live at once: the block input, the "
        "convolution's output and the sum. Lifetimes do not grow with depth, so neither does the peak.",
        [(1, "Plain chain: a node's input and output are the only live tensors."),
         (1, "Residual: the block input stays live until the Add: three tensors."),
         (1, "The peak does not depend on depth because lifetimes are local.")],
        source="chapter 3b, Figure 3.7"),
]
