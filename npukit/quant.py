"""Quantization: real numbers on a grid, exactly as the ONNX standard defines it.

The invariant this module teaches:

    *A quantized tensor is integers plus a rule.* ``q = saturate(round(x / s) + z)``
    and ``x ≈ (q − z)·s``, with the division done in float32, ties rounded to
    the even integer, the zero point added after rounding and the result
    clamped to the type's range: ONNX QuantizeLinear / DequantizeLinear, bit
    for bit. A smaller *float* format (bf16, fp16, FP8) is the other way to
    spend fewer bits: its exponent adapts to each value, but its range is
    fixed, so FP8 too is used with a scale per tensor.

:func:`quantize` / :func:`dequantize` are the ONNX operators (per tensor, per
axis, blocked) and :func:`fake_quantize` is the same operator as OpenVINO
evaluates it; :func:`choose_range` and :func:`choose_qparams` pick a range, a
scale and a zero point from data (min–max, percentile, MSE); :func:`to_float` rounds to bf16, fp16 and FP8;
:func:`sqnr` and :func:`cosine` measure the error. The integer arithmetic of a
quantized layer is in :mod:`npukit.qarith`; calibrating and quantizing a whole
model is in :mod:`npukit.ptq`.

See chapter 6, "Quantization" (chapters/06_quant.md).
"""

from __future__ import annotations

import numbers as _numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _check

__all__ = [
    "DTYPES",
    "FLOAT_FORMATS",
    "QParams",
    "qrange",
    "quantize",
    "dequantize",
    "fake_quantize",
    "choose_qparams",
    "choose_range",
    "to_float",
    "to_bfloat16",
    "sqnr",
    "cosine",
]

#: Integer types of ONNX QuantizeLinear: name → (lowest, highest, NumPy storage dtype).
#: int4/uint4 values are stored one per byte (int8/uint8), as in NumPy there is no 4-bit type.
DTYPES: dict[str, tuple[int, int, type]] = {
    "uint8": (0, 255, np.uint8),
    "int8": (-128, 127, np.int8),
    "uint4": (0, 15, np.uint8),
    "int4": (-8, 7, np.int8),
    "uint16": (0, 65535, np.uint16),
    "int16": (-32768, 32767, np.int16),
}

#: Low-precision float formats: name → (explicit mantissa bits, smallest normal exponent,
#: largest finite value, what overflow becomes: "inf" or "nan").
FLOAT_FORMATS: dict[str, tuple[int, int, float, str]] = {
    "bfloat16": (7, -126, float((2 - 2.0**-7) * 2.0**127), "inf"),
    "float16": (10, -14, 65504.0, "inf"),
    "float8_e4m3fn": (3, -6, 448.0, "nan"),
    "float8_e5m2": (2, -14, 57344.0, "inf"),
}


def qrange(dtype: str) -> tuple[int, int]:
    """The lowest and highest integer of a quantized type.

    See chapter 6, "The affine map, as ONNX defines it" (chapters/06_quant.md).

    Examples
    --------
    >>> qrange("int8"), qrange("uint4")
    ((-128, 127), (0, 15))
    """
    if not isinstance(dtype, str):
        raise TypeError(f"dtype must be a string such as 'int8', got {type(dtype).__name__}")
    lo, hi, _ = DTYPES[_check.one_of(dtype, "dtype", tuple(DTYPES))]
    return lo, hi


# ---- the ONNX operators ---------------------------------------------------------------


def _float32(x: Any, name: str) -> np.ndarray:
    x = _check.as_array(x, name)
    if x.dtype != np.float32:
        raise TypeError(f"{name} must be float32 (ONNX QuantizeLinear takes float32), got {x.dtype}; "
                        "convert with .astype(np.float32)")
    if np.isnan(x).any():
        raise ValueError(f"{name} must not contain NaN")
    return x


def _broadcast(param: np.ndarray, shape: tuple, axis: int, block_size: int, name: str) -> np.ndarray:
    """Reshape a per-tensor, per-axis or blocked parameter so that it broadcasts against ``shape``."""
    if param.ndim == 0 or (param.ndim == 1 and param.size == 1 and block_size == 0):
        return param.reshape(())
    if block_size == 0:
        if param.ndim != 1 or param.size != shape[axis]:
            raise ValueError(f"{name} must be a scalar or 1-D of length x.shape[{axis}] = {shape[axis]} "
                             f"(per-axis), got shape {param.shape}")
        return param.reshape([-1 if i == axis else 1 for i in range(len(shape))])
    want = tuple(-(-d // block_size) if i == axis else d for i, d in enumerate(shape))
    if param.shape != want:
        raise ValueError(f"{name} must have shape {want} for block_size={block_size} on axis {axis}, "
                         f"got {param.shape}")
    return np.repeat(param, block_size, axis=axis)[tuple(slice(0, d) for d in shape)]


def _params(shape: tuple, scale: Any, zero_point: Any, dtype: str, axis: int, block_size: int):
    if not isinstance(dtype, str):
        raise TypeError(f"dtype must be a string such as 'int8', got {type(dtype).__name__}")
    _check.one_of(dtype, "dtype", tuple(DTYPES))
    block_size = _check.integer(block_size, "block_size", minimum=0)
    axis = _check.integer(axis, "axis")
    ndim = len(shape)
    per_tensor = np.ndim(scale) == 0 or (np.size(scale) == 1 and block_size == 0)
    if not per_tensor:  # ONNX ignores axis for per-tensor parameters
        if not -ndim <= axis < ndim:
            raise ValueError(f"axis must be in [{-ndim}, {ndim}) for a {ndim}-D x, got {axis}")
        axis %= ndim
    if isinstance(scale, bool) or not isinstance(scale, (_numbers.Real, np.ndarray)):
        raise TypeError(f"scale must be a positive number or a float array, got {type(scale).__name__}")
    s = np.asarray(scale)
    if s.dtype.kind != "f" and not (s.ndim == 0 and s.dtype.kind in "iu"):
        raise TypeError(f"scale must be a float array, got {s.dtype}")
    s = s.astype(np.float32)
    if not (np.all(np.isfinite(s)) and np.all(s > 0)):
        raise ValueError(f"scale must be finite and > 0, got {s.ravel()[:4]}")
    lo, hi, store = DTYPES[dtype]
    if zero_point is None:
        z = np.zeros(s.shape, np.int64)
    else:
        if isinstance(zero_point, bool) or not isinstance(zero_point, (_numbers.Integral, np.ndarray)):
            raise TypeError(f"zero_point must be an integer or an integer array, got {type(zero_point).__name__}")
        z = np.asarray(zero_point)
        if z.dtype.kind not in "iu":
            raise TypeError(f"zero_point must hold integers, got {z.dtype}")
        if z.size and (z.min() < lo or z.max() > hi):
            raise ValueError(f"zero_point must lie in {dtype}'s range [{lo}, {hi}], got {z.ravel()[:4]}")
        if z.shape != s.shape and z.size != 1:
            raise ValueError(f"zero_point must have the shape of scale {s.shape}, got {z.shape}")
        z = z.astype(np.int64).reshape(s.shape) if z.size == s.size else np.broadcast_to(z.astype(np.int64).reshape(()), s.shape)
    return (_broadcast(s, shape, axis, block_size, "scale"), _broadcast(np.asarray(z), shape, axis, block_size, "zero_point"),
            lo, hi, store)


def quantize(x: np.ndarray, scale: Any, zero_point: Any = None, dtype: str = "uint8", *, axis: int = 1,
             block_size: int = 0) -> np.ndarray:
    """ONNX QuantizeLinear: ``q = saturate(round_half_to_even(x / scale) + zero_point)``.

    The division is done in float32 (the scale's type), ties go to the even
    integer, the zero point is added *after* rounding, and the result is
    clamped to the type's range (also for ±inf). Per tensor: scalar ``scale``;
    per axis: 1-D ``scale`` along ``axis``; blocked (ONNX opset ≥ 21): ``scale``
    with ``ceil(x.shape[axis] / block_size)`` entries along ``axis``.
    See chapter 6, "The affine map, as ONNX defines it" (chapters/06_quant.md).

    Parameters
    ----------
    x : numpy.ndarray
        float32, no NaN.
    scale : float or numpy.ndarray
        Positive and finite; stored as float32, as in an ONNX model.
    zero_point : int or numpy.ndarray, optional
        Integers in the type's range, the shape of ``scale``. Default 0.
    dtype : {"uint8", "int8", "uint4", "int4", "uint16", "int16"}
        The quantized type (ONNX's default is uint8).
    axis : int
        The axis of per-axis or blocked parameters (ONNX's default 1).
    block_size : int
        0 for per-tensor/per-axis, else the block length along ``axis``.

    Returns
    -------
    numpy.ndarray
        The integers, in the storage dtype of :data:`DTYPES` (int4 in int8).

    Raises
    ------
    TypeError
        If ``x`` is not a float32 array or a parameter has the wrong type.
    ValueError
        For NaN in ``x``, a scale ≤ 0 or not finite, a zero point outside the
        type's range, an axis out of range or parameters of the wrong shape.

    Examples
    --------
    >>> x = np.array([0.5, 1.5, 2.5, -0.5, 255.5, 300.0, -3.0], np.float32)
    >>> quantize(x, 1.0).tolist()                   # ties to even, then saturate
    [0, 2, 2, 0, 255, 255, 0]
    >>> quantize(np.float32([2.5]), 1.0, 1).tolist()  # round(2.5) = 2, then + 1
    [3]
    >>> quantize(np.float32([[1, -1], [1, -1]]), np.float32([0.5, 1.0]), dtype="int8", axis=0).tolist()
    [[2, -2], [1, -1]]
    """
    x = _float32(x, "x")
    s, z, lo, hi, store = _params(x.shape, scale, zero_point, dtype, axis, block_size)
    r = np.rint(x / s).astype(np.float64)                # float32 division, ties to even
    return np.clip(r + z, lo, hi).astype(store)          # zero point after rounding, then saturate


def dequantize(q: np.ndarray, scale: Any, zero_point: Any = None, dtype: str | None = None, *, axis: int = 1,
               block_size: int = 0) -> np.ndarray:
    """ONNX DequantizeLinear: ``x = (float32(q) − zero_point) · scale``, in float32.

    See chapter 6, "The affine map, as ONNX defines it" (chapters/06_quant.md).

    Parameters
    ----------
    q : numpy.ndarray
        Integers of the quantized type (the storage dtypes of :data:`DTYPES`).
    scale, zero_point, axis, block_size
        As for :func:`quantize`.
    dtype : str, optional
        The quantized type; default: inferred from ``q``'s dtype (int8 or uint8
        storage means int8/uint8; pass "int4"/"uint4" for 4-bit values).

    Returns
    -------
    numpy.ndarray
        float32.

    Raises
    ------
    TypeError, ValueError
        As for :func:`quantize`, and if ``q`` holds values outside the type.

    Examples
    --------
    >>> dequantize(np.array([0, 128, 255], np.uint8), 0.5, 128).tolist()
    [-64.0, 0.0, 63.5]
    """
    q = _check.as_array(q, "q")
    if q.dtype.kind not in "iu":
        raise TypeError(f"q must be an integer array, got {q.dtype}")
    if dtype is None:
        names = {np.dtype(np.uint8): "uint8", np.dtype(np.int8): "int8", np.dtype(np.uint16): "uint16",
                 np.dtype(np.int16): "int16"}
        if q.dtype not in names:
            raise TypeError(f"q must have dtype uint8, int8, uint16 or int16 (or pass dtype=), got {q.dtype}")
        dtype = names[q.dtype]
    s, z, lo, hi, _ = _params(q.shape, scale, zero_point, dtype, axis, block_size)
    if q.size and (q.min() < lo or q.max() > hi):
        raise ValueError(f"q must hold {dtype} values in [{lo}, {hi}], got values in [{q.min()}, {q.max()}]")
    return ((q.astype(np.float32) - z.astype(np.float32)) * s).astype(np.float32)


def fake_quantize(x: np.ndarray, scale: float, zero_point: int = 0, dtype: str = "uint8") -> np.ndarray:
    """QuantizeLinear the way OpenVINO's CPU plugin evaluates it, as a FakeQuantize, bit for bit.

    OpenVINO rewrites ``QuantizeLinear(x, s, z)`` as a FakeQuantize with input
    range ``[il, ih] = [(qmin − z)·s, (qmax − z)·s]`` and computes
    ``q = rint(x·isc + ish) + qmin`` with the float32 constants
    ``isc = (qmax − qmin)/(ih − il)`` and ``ish = −il·isc``: a multiply by an
    (inexact) reciprocal instead of a division, and rounding *after* the
    zero point is in (ties to even). See chapter 6, "CameraNet as a QDQ
    model, on a real runtime" (chapters/06_quant.md), which measures it
    against the runtime itself.

    Parameters
    ----------
    x : numpy.ndarray
        float32, no NaN.
    scale : float
        Per-tensor scale, > 0.
    zero_point : int
        In the type's range.
    dtype : str
        A key of :data:`DTYPES`.

    Returns
    -------
    numpy.ndarray
        In the storage dtype of ``dtype``.

    Raises
    ------
    TypeError, ValueError
        As for :func:`quantize` (per-tensor parameters only).

    Examples
    --------
    >>> x = np.float32([0.25, 0.75, 1.25])          # x / 0.5 = 0.5, 1.5, 2.5: ties
    >>> quantize(x, 0.5, 3).tolist(), fake_quantize(x, 0.5, 3).tolist()
    ([3, 5, 5], [4, 4, 6])
    """
    x = _float32(x, "x")
    if zero_point is None:  # the default is 0, as an int: None is not a zero point here
        raise TypeError("zero_point must be an integer in the type's range, got None")
    if np.size(scale) != 1 or np.size(zero_point) != 1:
        raise ValueError("scale and zero_point must be per-tensor (one number each)")
    s, z, lo, hi, store = _params(x.shape, scale, zero_point, dtype, 0, 0)
    f = np.float32
    s, z = f(s), int(z)
    il, ih = f(lo - z) * s, f(hi - z) * s
    isc = f(hi - lo) / f(ih - il)
    ish = f(-il * isc)
    v = np.rint(f(1) * (x * isc) + ish).astype(np.float64)   # float32 multiply, float32 add, ties to even
    return (np.clip(v, 0, hi - lo) + lo).astype(store)


# ---- choosing scales ---------------------------------------------------------------------


@dataclass(frozen=True)
class QParams:
    """A quantizer: scale(s), zero point(s), type and axis (``None`` = per tensor).

    See chapter 6, "Per tensor, per channel, per block" (chapters/06_quant.md).

    Examples
    --------
    >>> p = QParams(np.float32(0.5), np.int64(0), "int8")
    >>> p.quantize(np.float32([1.0, 100.0])).tolist(), float(p.dequantize(np.int8([3]))[0])
    ([2, 127], 1.5)
    """

    scale: np.ndarray
    zero_point: np.ndarray
    dtype: str
    axis: int | None = None

    def __post_init__(self) -> None:
        lo, hi = qrange(self.dtype)
        if isinstance(self.scale, (bool, np.bool_)) or not isinstance(self.scale, (_numbers.Real, np.ndarray)):
            raise TypeError(f"scale must be a positive number or a float array, got {type(self.scale).__name__}")
        s = np.asarray(self.scale)
        with np.errstate(over="ignore"):
            s32 = s.astype(np.float32) if s.dtype.kind in "fiu" else s
        if s.dtype.kind not in "fiu" or s.size == 0 or not (np.all(np.isfinite(s32)) and np.all(s > 0)):
            raise ValueError(f"scale must be finite (as float32) and > 0, got {s.ravel()[:4]}")
        z = _check.zero_point(self.zero_point, "zero_point", lo, hi, f"dtype {self.dtype}")
        if z.shape != s.shape and not (z.size == 1 and s.size == 1):
            raise ValueError(f"zero_point must have the shape of scale {s.shape}, got {z.shape}")
        if self.axis is not None:
            _check.integer(self.axis, "axis")
        elif s.size > 1:
            raise ValueError(f"axis must be given for {s.size} scales (per channel); None means one scale per tensor")

    def quantize(self, x: np.ndarray) -> np.ndarray:
        """:func:`quantize` with these parameters."""
        return quantize(x, np.asarray(self.scale, np.float32), np.asarray(self.zero_point), self.dtype,
                        axis=0 if self.axis is None else self.axis)

    def dequantize(self, q: np.ndarray) -> np.ndarray:
        """:func:`dequantize` with these parameters."""
        return dequantize(q, np.asarray(self.scale, np.float32), np.asarray(self.zero_point), self.dtype,
                          axis=0 if self.axis is None else self.axis)


_METHODS = ("minmax", "percentile", "mse")


def _reduce_axes(x: np.ndarray, axis: int | None) -> tuple:
    if axis is None:
        return tuple(range(x.ndim))
    axis = _check.integer(axis, "axis")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be in [{-x.ndim}, {x.ndim}) for a {x.ndim}-D x, or None; got {axis}")
    return tuple(i for i in range(x.ndim) if i != axis % x.ndim)


def _grid(bits: int, symmetric: bool) -> tuple[int, int]:
    """The integer grid of ``bits`` bits: signed for a symmetric quantizer, unsigned otherwise."""
    return (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if symmetric else (0, 2**bits - 1)


def _from_range(lo: np.ndarray, hi: np.ndarray, grid: str | tuple[int, int], symmetric: bool
                ) -> tuple[np.ndarray, np.ndarray]:
    """Scale and zero point that map [lo, hi] (widened to include 0) onto a grid (a dtype or (qmin, qmax))."""
    qmin, qmax = qrange(grid) if isinstance(grid, str) else grid
    lo, hi = np.minimum(np.asarray(lo, np.float64), 0), np.maximum(np.asarray(hi, np.float64), 0)
    if symmetric:  # zero exactly at the middle of the grid; only a clipped value reaches -128
        amax = np.maximum(-lo, hi)
        half = (qmax - qmin) // 2                                     # 127 for 8 bits
        scale = amax / half
        zp = np.full(amax.shape, 0 if qmin < 0 else half + 1, np.int64)
    else:
        scale = (hi - lo) / (qmax - qmin)
        safe = np.where(scale > 0, scale, 1.0)
        zp = np.clip(qmin - np.rint(lo / safe), qmin, qmax).astype(np.int64)
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)       # an all-zero tensor: any scale works
    return scale, zp


def _mse_clip(x: np.ndarray, axes: tuple, grid: tuple[int, int], symmetric: bool,
              weights: np.ndarray | None = None, lo: Any = None, hi: Any = None) -> tuple:
    """The range [t·lo, t·hi] whose quantize–dequantize error on ``grid`` is smallest.

    ``t`` is searched on 64 points in (0, 1], then on 65 points within one
    coarse step of the best: the optimum moves with the number of levels.
    ``weights`` (a histogram's counts, ``x`` its bin centres) weight the
    error; ``lo``/``hi`` default to the extremes of ``x``.
    """
    shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))     # x reduced over axes, kept
    lo = np.broadcast_to(x.min(axis=axes, keepdims=True) if lo is None else np.asarray(lo, np.float64), shape)
    hi = np.broadcast_to(x.max(axis=axes, keepdims=True) if hi is None else np.asarray(hi, np.float64), shape)
    w = np.ones_like(x) if weights is None else weights
    best, best_t = np.full(shape, np.inf), np.ones(shape)
    n = 64
    for k, t in enumerate([*np.linspace(1.0 / n, 1.0, n), *np.linspace(-1.0, 1.0, n + 1)]):
        if k == n:
            coarse = best_t.copy()                   # then the same offsets around each slice's best t
        t = np.broadcast_to(t if k < n else np.clip(coarse + t / n, 1.0 / (4 * n), 1.0), shape)
        scale, zp = _from_range(lo * t, hi * t, grid, symmetric)
        q = np.clip(np.rint(x / scale).astype(np.float64) + zp, *grid)
        err = (w * ((q - zp) * scale - x) ** 2).sum(axis=axes, keepdims=True) / w.sum(axis=axes, keepdims=True)
        pick = err <= best                           # ties: the wider range (t grows within a pass)
        best, best_t = np.where(pick, err, best), np.where(pick, t, best_t)
    return lo * best_t, hi * best_t


def _range(x: Any, axis: int | None, grid: tuple[int, int], symmetric: Any, method: Any,
           percentile: Any) -> tuple[np.ndarray, np.ndarray]:
    """Check the arguments; the [lo, hi] of ``method`` for data ``x`` on ``grid``, with kept dimensions."""
    x = _check.float_data(x, "x")
    _check.one_of(method, "method", _METHODS)
    symmetric = _check.boolean(symmetric, "symmetric")
    if isinstance(percentile, bool) or not isinstance(percentile, _numbers.Real) or not 50 < percentile <= 100:
        raise ValueError(f"percentile must be a number in (50, 100], got {percentile!r}")
    axes = _reduce_axes(x, axis)
    x = x.astype(np.float64)
    if method == "minmax":
        return x.min(axis=axes, keepdims=True), x.max(axis=axes, keepdims=True)
    if method == "mse":
        return _mse_clip(x, axes, grid, symmetric)
    if symmetric:
        hi = np.percentile(np.abs(x), percentile, axis=axes, keepdims=True)
        return -hi, hi
    return (np.percentile(x, 100 - percentile, axis=axes, keepdims=True),
            np.percentile(x, percentile, axis=axes, keepdims=True))


def choose_range(x: np.ndarray, bits: int = 8, symmetric: bool = True, axis: int | None = None,
                 method: str = "minmax", *, percentile: float = 99.99) -> tuple[np.ndarray, np.ndarray]:
    """The range [lo, hi] a quantizer on a ``bits``-bit grid covers (per tensor, or per slice along ``axis``).

    ``method``: ``"minmax"`` (the extremes), ``"percentile"`` (the
    ``percentile``-th and ``100 − percentile``-th percentiles, or of ``|x|``
    when symmetric) or ``"mse"`` (the clip with the smallest mean squared
    quantize–dequantize error on the grid: signed,
    ``[−2^(bits−1), 2^(bits−1) − 1]``, when ``symmetric``, else unsigned,
    ``[0, 2^bits − 1]``). Only ``"mse"`` depends on the grid: its clip moves
    in as the levels get coarser. :func:`choose_qparams` turns such a range
    into a scale and zero point.
    See chapter 6, "Choosing activation ranges: calibration" (chapters/06_quant.md).

    Parameters
    ----------
    x : numpy.ndarray
        float32 or float64 data, finite, not empty.
    bits : int
        From 2 to 16.
    symmetric : bool
    axis : int, optional
        One range per slice along this axis.
    method : {"minmax", "percentile", "mse"}
    percentile : float
        In (50, 100], for ``method="percentile"``.

    Returns
    -------
    (lo, hi)
        float64 arrays: 0-D per tensor, 1-D along ``axis``. Not yet widened
        to include 0 (the scale is).

    Raises
    ------
    TypeError, ValueError
        For an empty, non-finite or non-float ``x``, a bad ``bits``, method,
        percentile or axis.

    Examples
    --------
    >>> x = np.random.default_rng(0).exponential(size=20000).astype(np.float32)
    >>> [round(float(choose_range(x, b, False, method="mse")[1]), 2) for b in (8, 4)]   # fewer levels: clip lower
    [9.18, 6.17]
    """
    bits = _check.integer(bits, "bits", minimum=2)
    if bits > 16:
        raise ValueError(f"bits must be at most 16, got {bits}")
    lo, hi = _range(x, axis, _grid(bits, symmetric is True), symmetric, method, percentile)
    return (lo.reshape(()), hi.reshape(())) if axis is None else (lo.ravel(), hi.ravel())


def choose_qparams(x: np.ndarray, dtype: str = "int8", symmetric: bool = True, axis: int | None = None,
                   method: str = "minmax", *, percentile: float = 99.99) -> QParams:
    """Pick scale and zero point for ``x`` (per tensor, or per slice along ``axis``).

    The range [lo, hi] is :func:`choose_range`'s, on this ``dtype``'s grid,
    widened to include 0 so that zero is exact. Asymmetric:
    ``scale = (hi − lo)/(qmax − qmin)``, ``zero_point = qmin − round(lo/scale)``.
    Symmetric: ``scale = max(|lo|, hi)/127`` for 8 bits and zero point 0
    (128 for unsigned types): the levels −127…127 cover ``[−max, max]``
    ("narrow range"), so min–max never reaches −128; QuantizeLinear still
    saturates at −128, which a value below a clipped range (percentile,
    MSE) takes, and the MSE clip is searched on that full grid.
    See chapter 6, "Per tensor, per channel, per block" (chapters/06_quant.md).

    Parameters
    ----------
    dtype : str
        A key of :data:`DTYPES`.
    x, symmetric, axis, method, percentile
        As for :func:`choose_range` (weights per channel: axis 0, a Conv's
        output channels).

    Returns
    -------
    QParams

    Raises
    ------
    TypeError, ValueError
        For an empty, non-finite or non-float ``x``, an unknown method or
        dtype, or an axis out of range.

    Examples
    --------
    >>> w = np.float32([[-1.0, 0.5], [0.1, 0.2]])
    >>> [round(float(v), 6) for v in choose_qparams(w, "int8", axis=0).scale]     # max|w| / 127
    [0.007874, 0.001575]
    >>> p = choose_qparams(np.float32([0.0, 6.0]), "uint8", symmetric=False)
    >>> float(p.scale), int(p.zero_point)
    (0.0235294122248888, 0)
    """
    grid = qrange(dtype)
    lo, hi = _range(x, axis, grid, symmetric, method, percentile)
    scale, zp = _from_range(lo, hi, grid, symmetric)
    if axis is None:
        return QParams(scale.reshape(()), zp.reshape(()), dtype, None)
    return QParams(scale.ravel(), zp.ravel(), dtype, axis % np.ndim(x))


# ---- low-precision floats ------------------------------------------------------------------


def to_float(x: np.ndarray, fmt: str, *, saturate: bool = False) -> np.ndarray:
    """Round float32 values to a low-precision float format; the result is float32 holding them exactly.

    Round to nearest, ties to even, with the format's subnormals. A value past
    the largest finite one becomes inf (bfloat16, float16, float8_e5m2) or NaN
    (float8_e4m3fn, which has no inf), or, with ``saturate=True``, the largest
    finite value of its sign (ONNX's ``saturate`` for FP8). NaN stays NaN (its
    payload is not kept); −0 stays −0.
    See chapter 6, "Smaller floats: fp16, bf16 and FP8" (chapters/06_quant.md).

    Parameters
    ----------
    x : numpy.ndarray
        float32.
    fmt : {"bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"}
    saturate : bool

    Returns
    -------
    numpy.ndarray
        float32, every value representable in ``fmt``.

    Raises
    ------
    TypeError, ValueError
        If ``x`` is not a float32 array or ``fmt`` is unknown.

    Examples
    --------
    >>> to_float(np.float32([1 + 2**-8, 1 + 3 * 2**-8, 3.4e38]), "bfloat16").tolist()
    [1.0, 1.015625, inf]
    >>> to_float(np.float32([0.3, 500.0, -1e-3]), "float8_e4m3fn").tolist()
    [0.3125, nan, -0.001953125]
    """
    x = _check.as_array(x, "x")
    if x.dtype != np.float32:
        raise TypeError(f"x must be float32, got {x.dtype}")
    if not isinstance(fmt, str):
        raise TypeError(f"fmt must be a format name such as 'bfloat16', got {type(fmt).__name__}")
    saturate = _check.boolean(saturate, "saturate")  # "False" is a true string
    mbits, emin, largest, overflow = FLOAT_FORMATS[_check.one_of(fmt, "fmt", tuple(FLOAT_FORMATS))]
    with np.errstate(invalid="ignore", over="ignore"):          # signalling NaNs warn when cast
        a = x.astype(np.float64)
        mag = np.abs(a)
        _, exp = np.frexp(np.where(np.isfinite(mag), mag, 1.0))       # mag = f·2^exp, f in [0.5, 1)
        ulp = np.ldexp(1.0, np.maximum(exp - 1, emin) - mbits)         # step of the binade (or of subnormals)
        r = np.rint(mag / ulp) * ulp                                   # exact in float64; ties to even
        too_big = ~(r <= largest)                                      # also inf and NaN inputs
        big = largest if saturate else (np.inf if overflow == "inf" else np.nan)
        r = np.where(too_big, big, r)
        if not saturate and overflow == "inf":
            r = np.where(np.isinf(mag), np.inf, r)
        r = np.where(np.isnan(a), np.nan, r)
    return np.copysign(r, a).astype(np.float32)


def to_bfloat16(x: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 (1 sign, 8 exponent, 7 mantissa bits): ``to_float(x, "bfloat16")``.

    bfloat16 keeps float32's range and drops its 16 low mantissa bits, with
    round-to-nearest-even. The result is float32 with those 16 bits zero.
    See chapter 6, "Smaller floats: fp16, bf16 and FP8" (chapters/06_quant.md).

    Raises
    ------
    TypeError
        If ``x`` is not a float32 array.

    Examples
    --------
    >>> b = to_bfloat16(np.float32([3.14159265]))
    >>> b.tolist(), hex(int(b.view(np.uint32)[0]))
    ([3.140625], '0x40490000')
    """
    return to_float(x, "bfloat16")


# ---- error metrics ----------------------------------------------------------------------------


def _pair(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    x, y = _check.real_array(x, "x"), _check.real_array(y, "y")  # complex would lose its imaginary part
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same shape, got {x.shape} and {y.shape}")
    if x.size == 0:
        raise ValueError("x and y must not be empty")
    x, y = x.astype(np.float64), y.astype(np.float64)
    return _check.finite(x, "x"), _check.finite(y, "y")


def sqnr(x: np.ndarray, y: np.ndarray) -> float:
    """Signal-to-quantization-noise ratio of ``y`` as an approximation of ``x``, in dB.

    ``10·log10(Σx² / Σ(x − y)²)``; inf when equal. Each extra bit of a
    uniform quantizer adds about 6 dB.
    See chapter 6, "Smaller floats: fp16, bf16 and FP8" (chapters/06_quant.md).

    Raises
    ------
    TypeError, ValueError
        For non-arrays, different shapes, empty or non-finite data.

    Examples
    --------
    >>> round(sqnr(np.array([1.0, -1.0]), np.array([1.1, -0.9])), 2)
    20.0
    """
    x, y = _pair(x, y)
    noise = float(np.sum((x - y) ** 2))
    return float("inf") if noise == 0 else float(10 * np.log10(np.sum(x * x) / noise))


def cosine(x: np.ndarray, y: np.ndarray) -> float:
    """Cosine similarity of two tensors, flattened (1 = same direction).

    See chapter 6, "CameraNet as a QDQ model, on a real runtime" (chapters/06_quant.md).

    Raises
    ------
    TypeError, ValueError
        For non-arrays, different shapes, empty, non-finite or all-zero data.

    Examples
    --------
    >>> cosine(np.array([1.0, 0.0]), np.array([1.0, 1.0])).__round__(4)
    0.7071
    """
    x, y = _pair(x, y)
    nx, ny = np.linalg.norm(x), np.linalg.norm(y)
    if nx == 0 or ny == 0:
        raise ValueError("x and y must not be all zeros (their cosine is undefined)")
    return float(np.dot(x.ravel(), y.ravel()) / (nx * ny))

