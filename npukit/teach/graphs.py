"""Checkers for lab 3, "Graphs and the roofline" (labs/03_graphs.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and compares
it with an independent reference; see :mod:`npukit.teach.core`. While the
learner's function runs, :mod:`npukit.graphs` and :mod:`npukit.rewrites`
(which count MACs, bound performance, fold BatchNorm and plan memory) and
this module are off limits.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .core import CheckFailed, _rng, check, learner_call


def _library() -> tuple:
    from .. import graphs, rewrites

    return (graphs, rewrites)


def _positions_by_sliding(size: int, k: int, stride: int, pad: int, dilation: int) -> int:
    """Slide a dilated window along one padded axis and count where it fits."""
    count, start = 0, -pad
    while start + dilation * (k - 1) <= size - 1 + pad:
        count += 1
        start += stride
    return count


def _macs_by_loops(x_shape: tuple, w_shape: tuple, stride: int, pad: int, dilation: int, group: int) -> int:
    """Count a 2-D convolution's MACs: windows found by sliding, taps by looping."""
    n, _, h, w = x_shape
    c_out, c_in_per_group, kh, kw = w_shape
    rows = _positions_by_sliding(h, kh, stride, pad, dilation)
    cols = _positions_by_sliding(w, kw, stride, pad, dilation)
    taps = 0
    for _ in range(c_in_per_group):
        for _ in range(kh):
            for _ in range(kw):
                taps += 1
    macs = 0
    for _ in range(n * c_out):
        for _ in range(rows):
            macs += cols * taps
    return macs


def check_conv_macs(fn: Callable[[tuple, tuple, int, int, int, int], int]) -> None:
    """Check ``fn(x_shape, w_shape, stride, pad, dilation, group) -> MACs`` of a 2-D Conv.

    ONNX Conv semantics: ``x_shape = (N, C_in, H, W)``, ``w_shape = (C_out,
    C_in / group, kH, kW)``, the same stride, padding (both sides) and
    dilation on both axes; taps that land on padding count (a dense kernel
    computes them). Fresh cases: 40 layers, a third depthwise (``group =
    C_in``, ``w_shape[1] = 1``), a third grouped, the rest dense; kernels 1–7,
    strides 1–3, pads 0–3, dilations 1–2. Reference: the output positions are
    found by sliding the window one step at a time, and MACs are counted by
    loops over output rows and taps.

    A hint is added only when the answer is exactly what counting FLOPs
    (2 per MAC), or ignoring the groups, the dilation, the padding, the
    stride or the batch gives.

    Examples
    --------
    >>> def no_dilation(x_shape, w_shape, stride, pad, dilation, group):   # a dilated kernel taken as dense
    ...     (n, _, h, w), (c_out, c_in_g, kh, kw) = x_shape, w_shape
    ...     ho, wo = (h + 2 * pad - kh) // stride + 1, (w + 2 * pad - kw) // stride + 1
    ...     return n * c_out * ho * wo * c_in_g * kh * kw
    >>> check_conv_macs(no_dilation)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: conv MACs: wrong answer for input ((1, 37, 38, 12), (37, 1, 3, 3), 1, 3, 2, 37).
      expected 186480, got 223776.
      Hint: that is the count without dilation: a dilated kernel reaches dilation × (k − 1) + 1 pixels.
    """
    rng = _rng(3101)
    cases = []
    for k in range(40):
        kind = k % 3
        kernel = int(rng.choice([1, 3, 3, 5, 7]))
        stride, pad, dilation = int(rng.integers(1, 4)), int(rng.integers(0, 4)), int(rng.integers(1, 3))
        reach = dilation * (kernel - 1) + 1
        h, w = (int(v) for v in rng.integers(max(1, reach - 2 * pad), 41, size=2))
        if kind == 0:  # depthwise
            c_in = int(rng.integers(1, 65))
            group, c_out = c_in, c_in * int(rng.choice([1, 1, 2]))
        elif kind == 1:  # grouped
            group = int(rng.choice([2, 4, 8]))
            c_in, c_out = group * int(rng.integers(1, 9)), group * int(rng.integers(1, 9))
        else:  # dense
            group, c_in, c_out = 1, int(rng.integers(1, 65)), int(rng.integers(1, 65))
        cases.append(((int(rng.integers(1, 3)), c_in, h, w), (c_out, c_in // group, kernel, kernel),
                      stride, pad, dilation, group))

    def hint(got, want, x_shape, w_shape, stride, pad, dilation, group):
        slips = []   # (the count that slip gives, what to say); a hint only when exactly one gives the answer
        slips.append((2 * want, ("your count is twice too large: that is FLOPs, a multiply and an add each. A MAC "
                                 "(multiply-accumulate) counts the pair once.")))
        if group > 1:
            slips.append((want * group, (f"your count is group = {group} times too large: each output channel of a "
                                         f"grouped convolution reads only C_in / group = w_shape[1] = {w_shape[1]} "
                                         "input channels.")))
        if dilation > 1:
            slips.append((_macs_by_loops(x_shape, w_shape, stride, pad, 1, group),
                          "that is the count without dilation: a dilated kernel reaches dilation × (k − 1) + 1 pixels."))
        if pad > 0:
            slips.append((_macs_by_loops(x_shape, w_shape, stride, 0, dilation, group),
                          "that is the count without padding: the window also slides over the padded border."))
        if stride > 1:
            slips.append((_macs_by_loops(x_shape, w_shape, 1, pad, dilation, group),
                          (f"that is the count with stride 1: with stride {stride} the window jumps {stride} pixels "
                           "at a time.")))
        if x_shape[0] > 1:
            slips.append((want // x_shape[0], (f"that is the count for one image: this input holds a batch of "
                                               f"N = {x_shape[0]}.")))
        said = [text for count, text in slips if count == got and count != want]
        return said[0] if len(said) == 1 else None

    check("conv MACs", fn, cases, _macs_by_loops, hint=hint, forbid=_library())


def check_attainable(fn: Callable[[float, float, float, float], float]) -> None:
    """Check ``fn(flops, nbytes, peak, bandwidth) -> attainable FLOP/s`` (the roofline).

    A kernel of ``flops`` FLOPs that moves ``nbytes`` bytes, on a machine of
    ``peak`` FLOP/s and ``bandwidth`` bytes/s. Fresh cases: 40 kernels from
    elementwise (intensity 0.1) to large GEMMs (intensity 1000), on machines
    from a laptop CPU to an NPU. Reference: the time bound — the kernel cannot
    finish before ``flops / peak`` nor before ``nbytes / bandwidth`` — so its
    rate is at most ``flops / max(flops / peak, nbytes / bandwidth)``.

    A failure also says which side of the ridge the failing kernel is on.

    Examples
    --------
    >>> check_attainable(lambda flops, nbytes, peak, bandwidth: bandwidth * flops / nbytes)   # no flat roof
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: attainable: wrong answer for input (...).
      expected ..., got ....
      Hint: this kernel's intensity is 112 FLOP/byte and the ridge is at 60.4 FLOP/byte: a compute-bound kernel.
    """
    rng = _rng(3102)
    cases = []
    for _ in range(40):
        flops = float(10 ** rng.uniform(5, 12))
        intensity = float(10 ** rng.uniform(-1, 3))
        cases.append((flops, flops / intensity, float(10 ** rng.uniform(10, 14)), float(10 ** rng.uniform(10, 11.5))))

    def reference(flops, nbytes, peak, bandwidth):
        return flops / max(flops / peak, nbytes / bandwidth)

    def where(got, want, flops, nbytes, peak, bandwidth):
        side = "memory" if flops / nbytes < peak / bandwidth else "compute"
        return (f"this kernel's intensity is {flops / nbytes:.3g} FLOP/byte and the ridge is at "
                f"{peak / bandwidth:.3g} FLOP/byte: a {side}-bound kernel.")

    check("attainable", fn, cases, reference, rtol=1e-6, atol=0.0, hint=where, forbid=_library())


def _conv_bn_reference(W, b, gamma, beta, mean, var, eps, x, group):
    """The unfolded Conv → BatchNormalization, run by onnx.reference."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    pads = [W.shape[2] // 2] * 4
    conv = ReferenceEvaluator(helper.make_node("Conv", ["x", "W", "b"], ["c"], group=group, pads=pads))
    c = conv.run(None, {"x": x, "W": W, "b": b})[0]
    bn = ReferenceEvaluator(helper.make_node("BatchNormalization", ["c", "g", "B", "m", "v"], ["y"], epsilon=eps))
    return bn.run(None, {"c": c, "g": gamma, "B": beta, "m": mean, "v": var})[0]


def _fold_hint(w2, b2, W, b, gamma, beta, mean, var, eps) -> str:
    """What is wrong with a folded pair, named only when it is exactly what a known slip gives."""
    W, b, gamma, beta, mean, var = (np.asarray(a, dtype=np.float64) for a in (W, b, gamma, beta, mean, var))
    near = lambda a, c: a.shape == c.shape and np.allclose(a, c, rtol=1e-4, atol=1e-6)  # noqa: E731
    per_out = lambda f: W * f[:, None, None, None]  # noqa: E731
    s = gamma / np.sqrt(var + eps)
    if near(w2, per_out(s)):
        if np.any(b != 0) and near(b2, beta - mean * s):
            return ("W_folded is right; b_folded leaves out the convolution's own bias b (this layer's is not "
                    "zero): it reaches the BatchNormalization with the rest of the Conv's output")
        if near(b2, b + beta - mean * s):
            return ("W_folded is right; in b_folded the convolution's bias b is not scaled: it reaches the "
                    "BatchNormalization with the rest of the Conv's output, so it is scaled like it")
        return "W_folded is right and b_folded is wrong (the error is the same at every position of a channel)"
    if near(w2, per_out(gamma / np.sqrt(var))):
        return f"W_folded leaves eps = {eps:g} out of the scale (it matters when a channel's variance is small)"
    if near(w2, per_out(gamma / (var + eps))):
        return "W_folded divides by the variance (+ eps), where BatchNormalization divides by the standard deviation"
    if W.shape[1] == W.shape[0] and W.shape[0] > 1 and near(w2, W * s[None, :, None, None]):
        return ("W_folded scales W along axis 1 (the input channels of each group); BatchNormalization acts on the "
                "Conv's output channels, axis 0 of W")
    return ("W_folded is wrong: every weight of output channel o must be multiplied by the factor "
            "BatchNormalization applies to channel o, and nothing else")


def check_fold_bn(fn: Callable[..., tuple[np.ndarray, np.ndarray]]) -> None:
    """Check ``fn(W, b, gamma, beta, mean, var, eps) -> (W_folded, b_folded)``.

    ``W`` is a float32 Conv weight ``(C_out, C_in / group, k, k)`` and ``b``
    its bias ``(C_out,)``; the other arrays are a BatchNormalization's
    parameters ``(C_out,)``. Fresh cases: 12 layers (dense, grouped and
    depthwise; 1×1 and 3×3; zero and non-zero biases; eps 1e-5 or 1e-3).
    Reference: onnx.reference runs the *unfolded* Conv → BatchNormalization
    on a fresh input; the learner's folded weights must give the same output
    from a single Conv (run by onnx.reference too), within 1e-4 relative and
    1e-5 absolute. On a mismatch the message describes the layer and says
    whether only the bias is off (the error is a constant per channel), and
    names the slip when the answer is exactly what it gives: the conv bias
    left out or not scaled, eps left out, the variance for the standard
    deviation, the scale applied along the input-channel axis.

    :mod:`npukit.rewrites` (``fold_batchnorm``) may not be called.

    Examples
    --------
    >>> def no_eps(W, b, gamma, beta, mean, var, eps):
    ...     s = gamma / np.sqrt(var)
    ...     return W * s[:, None, None, None], (b - mean) * s + beta
    >>> check_fold_bn(no_eps)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: fold BN: wrong answer for a grouped 3×3 layer, ...; W_folded leaves eps = 0.001 out of the scale (it matters when a channel's variance is small).
    """
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    import copy

    rng = _rng(3103)
    f32 = lambda a: np.asarray(a, dtype=np.float32)  # noqa: E731
    n = 0
    for k in range(12):
        group = (1, 2, 0)[k % 3]
        c_in = int(rng.integers(1, 5)) * (group or 1)
        if group == 0:  # depthwise
            group, c_out = c_in, c_in
        else:
            c_out = group * int(rng.integers(1, 5))
        ksize = (1, 3)[k % 2]
        W = f32(rng.standard_normal((c_out, c_in // group, ksize, ksize)))
        b = f32(np.zeros(c_out) if k % 4 == 0 else rng.standard_normal(c_out))
        gamma, beta = f32(rng.uniform(0.3, 2.0, c_out)), f32(rng.standard_normal(c_out))
        mean, var = f32(rng.standard_normal(c_out)), f32(rng.uniform(0.05, 3.0, c_out))
        eps = (1e-5, 1e-3)[k % 2]
        x = f32(rng.standard_normal((1, c_in, int(rng.integers(3, 8)), int(rng.integers(3, 8)))))
        layer = (f"{'depthwise' if group == c_in and group > 1 else 'grouped' if group > 1 else 'dense'} "
                 f"{ksize}×{ksize} layer, W {W.shape}, group {group}, eps {eps:g}, "
                 f"{'zero' if k % 4 == 0 else 'non-zero'} conv bias")
        got = learner_call("fold BN", fn, *(copy.deepcopy(a) for a in (W, b, gamma, beta, mean, var, eps)),
                           forbid=_library())
        if not (type(got) in (tuple, list) and len(got) == 2):
            what = f"a {type(got).__name__} of length {len(got)}" if type(got) in (tuple, list) else repr(got)
            raise CheckFailed(f"fold BN: return a pair (W_folded, b_folded), got {what[:80]}")
        if not all(type(a) is np.ndarray and a.dtype.kind in "biuf" for a in got):
            raise CheckFailed(f"fold BN: return two NumPy arrays of numbers, got {type(got[0]).__name__} and "
                              f"{type(got[1]).__name__}")
        w2, b2 = (f32(a) for a in got)
        if w2.shape != W.shape or b2.shape != b.shape:
            raise CheckFailed(f"fold BN: for a {layer}: expected shapes {W.shape} and {b.shape}, "
                              f"got {w2.shape} and {b2.shape}")
        want = _conv_bn_reference(W, b, gamma, beta, mean, var, eps, x, group)
        conv = ReferenceEvaluator(helper.make_node("Conv", ["x", "W", "b"], ["y"], group=group,
                                                   pads=[ksize // 2] * 4))
        y = conv.run(None, {"x": x, "W": w2, "b": b2})[0]
        if not np.allclose(y, want, rtol=1e-4, atol=1e-5):
            diff = (y - want).astype(np.float64)
            hint = _fold_hint(w2, b2, W, b, gamma, beta, mean, var, eps)
            raise CheckFailed(
                f"fold BN: wrong answer for a {layer}: your single Conv's output differs from "
                f"Conv → BatchNormalization by up to {np.abs(diff).max():.3g}; {hint}."
            )
        n += 1
    print(f"✓ fold BN: {n} fresh cases agree with the reference.")


def _peak_by_sweep(tensors) -> int:
    """At every step, add up the sizes of the tensors live then; keep the largest sum."""
    if not tensors:
        return 0
    peak = 0
    for step in range(min(f for _, f, _ in tensors), max(last for _, _, last in tensors) + 1):
        peak = max(peak, sum(size for size, first, last in tensors if first <= step <= last))
    return peak


def check_live_peak(fn: Callable[[list], int]) -> None:
    """Check ``fn(tensors) -> peak bytes`` for a list of ``(size, first, last)`` lifetimes.

    A tensor is live at every step from ``first`` (the node that writes it)
    to ``last`` (the last node that reads it), both included. The answer is
    the largest total size live at any one step: the memory no plan can go
    below. Fresh cases: 30 lists of 0–25 tensors over 0–30 steps, with
    one-step lifetimes, nested lifetimes and tensors that end exactly where
    another begins. Reference: a sweep that adds up the live sizes at every
    step. A hint names the slip when the answer is exactly every size added
    up, the largest single tensor, or the peak with ``last`` excluded.

    :mod:`npukit.rewrites` (``live_peak``, ``plan_memory``) may not be called.

    Examples
    --------
    >>> check_live_peak(lambda tensors: sum(size for size, first, last in tensors))   # all alive at once
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: live peak: wrong answer for input ([(100, 0, 1), (50, 1, 2), (80, 2, 3)]).
      expected 150, got 230.
      Hint: that is every tensor's size added up: two tensors whose lifetimes do not overlap can use the same bytes.
    """
    rng = _rng(3104)
    cases = [([],), ([(64, 3, 3)],), ([(100, 0, 1), (50, 1, 2), (80, 2, 3)],)]
    for _ in range(27):
        tensors = []
        for _ in range(int(rng.integers(1, 26))):
            first = int(rng.integers(0, 30))
            tensors.append((int(rng.integers(1, 5000)), first, first + int(rng.integers(0, 8))))
        cases.append((tensors,))
    def hint(got, want, tensors):
        slips = [(sum(size for size, _, _ in tensors),
                  ("that is every tensor's size added up: two tensors whose lifetimes do not overlap can use the "
                   "same bytes.")),
                 (_peak_by_sweep([(size, first, last - 1) for size, first, last in tensors if last > first]),
                  "a tensor is still live at its `last` step (the node that reads it last): both ends are included."),
                 (max((size for size, _, _ in tensors), default=0),
                  "that is the largest single tensor: at some steps several tensors are live at once.")]
        said = [text for count, text in slips if count == got and count != want]
        return said[0] if len(said) == 1 else None

    check("live peak", fn, cases, _peak_by_sweep, hint=hint, forbid=_library())
