"""SIMD and layouts: which axis is innermost decides how full the vectors are.

The invariant this module teaches: **a vectorized kernel runs its inner loop
along the innermost axis of memory**, so a layout is good for an operation
when it puts a *long* axis innermost. In NCHW a 1×1 convolution is one matrix
product ``W[Cout×Cin] · X[Cin×H·W]`` whose rows are unit-stride pixel runs
(chapter 4 lowers it exactly so): no layout change is needed. A depthwise or
per-channel operation vectorizes along W in NCHW and along C in NHWC; as a
network shrinks its maps and widens its channels (CameraNet's last maps are
4×4 with 128 channels), only channels-innermost keeps the vectors full.
:func:`measure_layouts` times the same operation on the same values in both
layouts, so only that one thing changes.

See chapter 2, "Layouts" (chapters/02_layouts.md), section "What channels
innermost buys, and what it does not".
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Any, Callable, Sequence

import numpy as np

from . import _arith, _check

__all__ = ["lane_fill", "depthwise_conv", "LAYOUT_OPS", "LayoutTiming", "channel_sweep", "measure_layouts"]

#: The operations :func:`measure_layouts` times.
LAYOUT_OPS = ("depthwise", "scale", "pointwise")


def lane_fill(extent: int, lanes: int = 16) -> float:
    """The share of vector lanes doing useful work when a loop over ``extent`` values runs in vectors.

    A loop of ``extent`` iterations vectorized ``lanes`` at a time issues
    ⌈extent / lanes⌉ vector instructions; the last one is partly empty.
    ``lanes=16`` is one AVX-512 register of float32. Vectorizing a 4×4 map
    along its width fills 4 of 16 lanes; along 128 channels, all of them.
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    extent : int
        Values along the vectorized axis (≥ 1).
    lanes : int
        Values per vector register (≥ 1).

    Returns
    -------
    float
        ``extent / (lanes · ⌈extent / lanes⌉)``, in (0, 1].

    Raises
    ------
    TypeError, ValueError
        If ``extent`` or ``lanes`` is not a positive integer.

    Examples
    --------
    >>> lane_fill(4), lane_fill(128), lane_fill(3), lane_fill(20)
    (0.25, 1.0, 0.1875, 0.625)
    """
    extent = _check.integer(extent, "extent", minimum=1)
    lanes = _check.integer(lanes, "lanes", minimum=1)
    return extent / _arith.round_up(extent, lanes)


def _taps(xp: np.ndarray, w: np.ndarray, layout: str, stride: int, out: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """The k² multiply–adds of a depthwise convolution on a padded input, into ``out``."""
    kh, kw = w.shape[1:]
    ho, wo = (out.shape[2:] if layout == "NCHW" else out.shape[1:3])
    out[...] = 0
    for i in range(kh):
        for j in range(kw):
            rows, cols = slice(i, i + stride * (ho - 1) + 1, stride), slice(j, j + stride * (wo - 1) + 1, stride)
            if layout == "NCHW":  # one weight per channel plane: the inner loop runs along a row of W values
                np.multiply(xp[:, :, rows, cols], w[:, i, j, None, None], out=tmp)
            else:  # one weight vector per tap: the inner loop runs along the C channels of a pixel
                np.multiply(xp[:, rows, cols, :], w[:, i, j], out=tmp)
            out += tmp
    return out


def _depthwise_args(x: Any, w: Any, layout: Any, stride: Any, pad: Any) -> tuple:
    _check.as_array(x, "x"), _check.as_array(w, "w")
    layout = _check.one_of(layout, "layout", ("NCHW", "NHWC"))
    if x.ndim != 4 or 0 in x.shape or x.dtype.kind != "f":
        raise ValueError(f"x must be a non-empty 4-D float array in {layout}, got {x.dtype} shape {x.shape}")
    c = x.shape[1] if layout == "NCHW" else x.shape[3]
    if w.ndim != 3 or w.shape[0] != c or 0 in w.shape:
        raise ValueError(f"w must have shape (C, kh, kw) with C = {c} channels of x, got {w.shape}")
    _check.real_array(w, "w")  # complex weights would lose their imaginary part
    stride, pad = _check.integer(stride, "stride", minimum=1), _check.integer(pad, "pad", minimum=0)
    h, wd = (x.shape[2:] if layout == "NCHW" else x.shape[1:3])
    _check.allocation(x.itemsize * x.size // (h * wd) * (h + 2 * pad) * (wd + 2 * pad), "pad")  # the padded copy
    ho = _arith.conv_out_size(h, w.shape[1], stride, pad, pad)
    wo = _arith.conv_out_size(wd, w.shape[2], stride, pad, pad)
    if ho < 1 or wo < 1:
        raise ValueError(f"w's {w.shape[1]}×{w.shape[2]} kernel does not fit x's {h}×{wd} map padded by {pad}")
    return layout, stride, pad, (ho, wo)


def depthwise_conv(x: np.ndarray, w: np.ndarray, layout: str = "NCHW", *, stride: int = 1,
                   pad: int = 1) -> np.ndarray:
    """A depthwise convolution, vectorized along the innermost axis of ``layout``.

    Each output channel is its input channel convolved with its own
    ``kh × kw`` filter. It is computed the way a SIMD kernel computes it
    directly: ``kh·kw`` shifted multiply–adds over the whole tensor. In NCHW
    each shift multiplies a window of every channel plane by that channel's
    single weight, so the innermost loop runs along a row (W values); in
    NHWC it multiplies a window of pixels by the vector of C weights, so the
    innermost loop runs along the channels (C values). Same arithmetic, same
    result: only which axis the vector work runs along differs.
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    x : numpy.ndarray
        Float input, (N, C, H, W) for ``"NCHW"`` or (N, H, W, C) for ``"NHWC"``.
    w : numpy.ndarray
        Filters, shape (C, kh, kw) (ONNX's (C, 1, kh, kw) without the 1).
    layout : {"NCHW", "NHWC"}
    stride, pad : int
        Step between outputs (≥ 1) and zero padding on every side (≥ 0).

    Returns
    -------
    numpy.ndarray
        The output, in ``layout``, of ``x``'s dtype.

    Raises
    ------
    TypeError, ValueError
        If ``x`` or ``w`` is not an array of the right shape, ``layout`` is
        not NCHW or NHWC, or ``stride``/``pad`` is not an integer in range.

    Examples
    --------
    >>> x = np.arange(2 * 4 * 4, dtype=np.float32).reshape(1, 2, 4, 4)
    >>> w = np.ones((2, 3, 3), np.float32)
    >>> y = depthwise_conv(x, w)
    >>> y.shape, float(y[0, 0, 1, 1])          # the 3×3 sum around row 1, column 1
    ((1, 2, 4, 4), 45.0)
    >>> nhwc = depthwise_conv(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), w, "NHWC")
    >>> bool(np.array_equal(nhwc.transpose(0, 3, 1, 2), y))
    True
    """
    layout, stride, pad, (ho, wo) = _depthwise_args(x, w, layout, stride, pad)
    w = w.astype(x.dtype, copy=False)
    if layout == "NCHW":
        xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
        out = np.empty((x.shape[0], x.shape[1], ho, wo), x.dtype)
    else:
        xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
        out = np.empty((x.shape[0], ho, wo, x.shape[3]), x.dtype)
    return _taps(xp, w, layout, stride, out, np.empty_like(out))


@dataclasses.dataclass(frozen=True)
class LayoutTiming:
    """One operation timed on the same NCHW-shaped tensor stored in NCHW and in NHWC, in interleaved rounds.

    ``nchw_s`` and ``nhwc_s`` are median seconds per call; ``nchw_times``
    and ``nhwc_times`` the time of each interleaved round (empty for a
    record built from two numbers), with the medians' consistency checked.
    ``ratio`` is NCHW's time over NHWC's: above 1, NHWC was faster.
    ``shape`` is (N, C, H, W) whatever the layout. See chapter 2, "Layouts"
    (chapters/02_layouts.md).
    """

    op: str
    shape: tuple[int, ...]
    nchw_s: float
    nhwc_s: float
    nchw_times: tuple = ()  #: seconds per call in NCHW, one per interleaved round
    nhwc_times: tuple = ()  #: seconds per call in NHWC, the same rounds

    def __post_init__(self) -> None:
        _check.one_of(self.op, "op", LAYOUT_OPS)
        shape = _check.shape(self.shape, "shape")
        if len(shape) != 4 or 0 in shape:
            raise ValueError(f"shape must be a non-empty 4-D (N, C, H, W) shape, got {shape}")
        _check.positive(self.nchw_s, "nchw_s"), _check.positive(self.nhwc_s, "nhwc_s")
        a, b = _check.round_times(self.nchw_times, "nchw_times"), _check.round_times(self.nhwc_times, "nhwc_times")
        _check.paired_rounds(("nchw_s", a, self.nchw_s), ("nhwc_s", b, self.nhwc_s), "nchw_times and nhwc_times")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "nchw_times", a)
        object.__setattr__(self, "nhwc_times", b)

    @property
    def rounds(self) -> int:
        """Interleaved rounds behind the times (0 for a record built from two numbers)."""
        return len(self.nchw_times)

    @property
    def ratio(self) -> float:
        """NCHW time over NHWC time (> 1: NHWC faster): the median per-round ratio, or ``nchw_s / nhwc_s``."""
        if self.rounds:
            return float(np.median([x / y for x, y in zip(self.nchw_times, self.nhwc_times)]))
        return self.nchw_s / self.nhwc_s

    @property
    def verdict(self) -> Any:
        """NCHW against NHWC, round by round (:class:`npukit.measure.Verdict`), or None without rounds.

        ``ratio`` is NCHW's time over NHWC's; ``word`` is ``"faster"`` when
        NCHW was faster beyond the noise, ``"slower"`` when NHWC was.
        """
        if not self.rounds:
            return None
        from .timing import Comparison

        return Comparison.from_times({"NHWC": self.nhwc_times, "NCHW": self.nchw_times}).verdict("NCHW")

    @property
    def label(self) -> str:
        """``"C×H×W"``, e.g. ``"64×8×8"``."""
        return "×".join(map(str, self.shape[1:]))


def channel_sweep(elements: int = 4096, channels: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256)) -> list:
    """Shapes (1, C, H, W) holding the same number of values, channels growing as the map shrinks.

    ``C · H · W = elements`` for every C, with ``H ≤ W`` as close to square as
    the divisors allow: the way a CNN trades resolution for channels from its
    first layers to its last. See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    elements : int
        Values per tensor (≥ 1).
    channels : sequence of int
        Channel counts, each dividing ``elements``.

    Returns
    -------
    list of tuple

    Raises
    ------
    TypeError, ValueError
        If ``elements`` is not a positive integer, or a channel count is not a
        positive integer dividing it.

    Examples
    --------
    >>> channel_sweep(4096, (1, 2, 64, 256))
    [(1, 1, 64, 64), (1, 2, 32, 64), (1, 64, 8, 8), (1, 256, 4, 4)]
    """
    elements = _check.integer(elements, "elements", minimum=1)
    out = []
    for i, c in enumerate(_check.sequence(channels, "channels", min_length=1)):
        c = _check.integer(c, f"channels[{i}]", minimum=1)
        if elements % c:
            raise ValueError(f"channels[{i}] must divide elements ({elements}), got {c}")
        hw = elements // c
        h = max(d for d in range(1, math.isqrt(hw) + 1) if hw % d == 0)
        out.append((1, c, h, hw // h))
    return out


def _layout_calls(op: str, shape: tuple[int, ...], kernel: int) -> tuple[Callable, Callable]:
    """The two timed calls, NCHW and NHWC, each writing into buffers allocated beforehand."""
    n, c, h, w = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    xh = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    if op == "depthwise":
        wt, p = rng.standard_normal((c, kernel, kernel)).astype(np.float32), kernel // 2
        xp, xph = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p))), np.pad(xh, ((0, 0), (p, p), (p, p), (0, 0)))
        o, t = np.empty_like(x), np.empty_like(x)
        oh, th = np.empty_like(xh), np.empty_like(xh)
        return (lambda: _taps(xp, wt, "NCHW", 1, o, t)), (lambda: _taps(xph, wt, "NHWC", 1, oh, th))
    if op == "scale":  # BatchNorm at inference: y = x·s + b, one s and b per channel
        s, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
        o, oh = np.empty_like(x), np.empty_like(xh)
        s4, b4 = s[:, None, None], b[:, None, None]
        return ((lambda: np.add(np.multiply(x, s4, out=o), b4, out=o)),
                (lambda: np.add(np.multiply(xh, s, out=oh), b, out=oh)))
    wt = rng.standard_normal((c, c)).astype(np.float32)  # a 1×1 convolution from C to C channels
    x3, o3 = x.reshape(n, c, h * w), np.empty((n, c, h * w), np.float32)
    x2, o2, wtt = xh.reshape(n * h * w, c), np.empty((n * h * w, c), np.float32), wt.T
    return (lambda: np.matmul(wt, x3, out=o3)), (lambda: np.matmul(x2, wtt, out=o2))


def measure_layouts(shapes: Sequence[Sequence[int]], op: str = "depthwise", *, kernel: int = 3,
                    repeat: int | None = None, warmup: int = 1, rounds: int = 15, min_time: float = 0.01,
                    seed: int = 0, max_rounds: int | None = None) -> list[LayoutTiming]:
    """Time one operation on each shape twice, on the same values stored in NCHW and in NHWC.

    A controlled experiment: same values, same arithmetic, outputs in buffers
    allocated beforehand, and every layout of every shape timed by
    :func:`npukit.measure.compare` in the same ``rounds`` interleaved rounds
    (the order shuffled each round), so that a burst of load from other
    programs hits all of them alike and only which axis is innermost
    changes. :attr:`LayoutTiming.verdict` compares the two layouts round by
    round. The operations:

    * ``"depthwise"``: a ``kernel × kernel`` depthwise convolution's
      multiply–adds (:func:`depthwise_conv`, input padded beforehand);
      NCHW vectorizes along W, NHWC along C;
    * ``"scale"``: a per-channel ``y = x·s + b`` (BatchNorm at inference);
      NCHW runs along each H·W plane with one scalar, NHWC along C with a
      vector of scales;
    * ``"pointwise"``: a 1×1 convolution from C to C channels as one matrix
      product, ``W[C×C] · X[C×HW]`` on NCHW bytes (chapter 4's lowering) and
      ``X[HW×C] · Wᵀ`` on NHWC bytes. Neither needs a copy.

    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    shapes : sequence of (N, C, H, W)
        Tensor shapes, e.g. from :func:`channel_sweep`.
    op : {"depthwise", "scale", "pointwise"}
    kernel : int
        Depthwise kernel size (odd, ≥ 1; "same" padding).
    repeat : int, optional
        Calls of each per round (≥ 1); default: calibrated so that a round
        of each lasts at least ``min_time``.
    min_time : float
        Seconds (> 0) a calibrated round of each lasts at least: long
        enough that a time slice another program takes falls on both sides
        of a round's ratio rather than on one.
    warmup : int
        Untimed calls of each before the rounds (≥ 0).
    rounds : int
        Interleaved rounds (≥ 1; at least 3 are made, the fewest from which
        a verdict's interval is formed).
    seed : int
        Seed of the shuffled order (≥ 0).
    max_rounds : int, optional
        As for :func:`npukit.measure.compare`: rounds are added, ``rounds``
        at a time up to ``max_rounds``, while some shape's NCHW-against-NHWC
        verdict is unclear.

    Returns
    -------
    list of LayoutTiming

    Raises
    ------
    TypeError, ValueError
        For a bad shape, operation, kernel or timing parameter.

    Examples
    --------
    >>> (t,) = measure_layouts([(1, 16, 8, 8)], "scale", repeat=1, warmup=0, rounds=3)
    >>> t.label, t.nchw_s > 0 and t.nhwc_s > 0, t.rounds, t.verdict.baseline
    ('16×8×8', True, 3, 'NHWC')
    """
    from . import measure

    shapes = [_check.shape(s, f"shapes[{i}]") for i, s in enumerate(_check.sequence(shapes, "shapes", min_length=1))]
    for i, s in enumerate(shapes):
        if len(s) != 4 or 0 in s:
            raise ValueError(f"shapes[{i}] must be a non-empty 4-D (N, C, H, W) shape, got {s}")
    op = _check.one_of(op, "op", LAYOUT_OPS)
    kernel = _check.integer(kernel, "kernel", minimum=1)
    if kernel % 2 == 0:
        raise ValueError(f"kernel must be odd (same padding on both sides), got {kernel}")
    if repeat is not None:
        repeat = _check.integer(repeat, "repeat", minimum=1, maximum=10_000)
    warmup = _check.integer(warmup, "warmup", minimum=0, maximum=10_000)
    rounds = _check.integer(rounds, "rounds", minimum=1, maximum=1_000)
    seed = _check.integer(seed, "seed", minimum=0)
    for i, s in enumerate(shapes):  # inputs, outputs and padded copies in both layouts, float32
        _check.allocation(8 * 4 * math.prod(s[:2]) * (s[2] + kernel) * (s[3] + kernel), f"shapes[{i}]")
    fns = {}
    for i, s in enumerate(shapes):
        nchw, nhwc = _layout_calls(op, s, kernel)
        nchw(), nhwc()  # touch every buffer before timing
        fns[f"{i} NCHW"], fns[f"{i} NHWC"] = nchw, nhwc
    if max_rounds is not None:
        max_rounds = _check.integer(max_rounds, "max_rounds", minimum=max(rounds, 3), maximum=10_000)
    c = measure.compare(fns, rounds=max(rounds, 3), warmup=warmup, number=repeat, min_time=min_time, seed=seed,
                        max_rounds=max_rounds, settle=[(f"{i} NCHW", f"{i} NHWC") for i in range(len(shapes))])
    out = []
    for i, s in enumerate(shapes):
        a, b = c.times[f"{i} NCHW"], c.times[f"{i} NHWC"]
        out.append(LayoutTiming(op, s, statistics.median(a), statistics.median(b), a, b))
    return out
