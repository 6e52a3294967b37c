"""Quantization: real numbers on an integer grid, exactly as the ONNX standard defines it.

The invariant this module teaches:

    *A quantized tensor is integers plus a rule.* ``q = saturate(round(x / s) + z)``
    and ``x ≈ (q − z)·s``, with the division done in float32, ties rounded to
    the even integer, the zero point added after rounding and the result
    clamped to the type's range: ONNX QuantizeLinear / DequantizeLinear, bit
    for bit. Integer kernels then compute ``Σ (q_x − z_x)(q_w − z_w)`` exactly
    in int32, and one fixed-point multiply ``M0·2^−(31+shift)`` with a single
    rounding brings the sum back to 8 bits (Jacob et al. 2018).

:func:`quantize` / :func:`dequantize` are the ONNX operators (per tensor, per
axis, blocked); :func:`choose_qparams` and :class:`Observer` pick scales from
data (min–max, percentile, MSE); :func:`quantize_multiplier` and
:func:`requantize` do the fixed-point rescale; :func:`qmatmul` / :func:`qconv`
are integer kernels; :func:`to_float` rounds to bf16, fp16 and FP8;
:func:`to_qdq` writes CameraNet as an ONNX QDQ model and
:func:`integer_forward` runs such a model with integer arithmetic only.

See chapter 6, "Quantization" (chapters/06_quant.md).
"""

from __future__ import annotations

import numbers as _numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from . import _check

if TYPE_CHECKING:
    from . import tally

__all__ = [
    "DTYPES",
    "FLOAT_FORMATS",
    "QParams",
    "qrange",
    "quantize",
    "dequantize",
    "fake_quantize",
    "choose_qparams",
    "Observer",
    "quantize_multiplier",
    "requantize",
    "qmatmul",
    "qconv",
    "to_float",
    "to_bfloat16",
    "sqnr",
    "cosine",
    "calibrate",
    "to_qdq",
    "integer_forward",
    "numbers",
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
    zero point is in (ties to even). Chapter 6 measures it against the
    runtime itself.

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
        qrange(self.dtype)
        s = np.asarray(self.scale)
        if s.dtype.kind not in "fiu" or not (np.all(np.isfinite(s)) and np.all(s > 0)):
            raise ValueError(f"scale must be finite and > 0, got {s.ravel()[:4]}")

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


def _from_range(lo: np.ndarray, hi: np.ndarray, dtype: str, symmetric: bool) -> tuple[np.ndarray, np.ndarray]:
    """Scale and zero point that map [lo, hi] (widened to include 0) onto the type's grid."""
    qmin, qmax = qrange(dtype)
    lo, hi = np.minimum(np.asarray(lo, np.float64), 0), np.maximum(np.asarray(hi, np.float64), 0)
    if symmetric:  # zero exactly at the middle of the grid; signed types leave -128 unused
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


def _mse_clip(x: np.ndarray, axes: tuple, dtype: str, symmetric: bool, grid: int = 60) -> tuple:
    """The range [t·lo, t·hi] (t in a grid over (0, 1]) whose quantize–dequantize error is smallest."""
    lo, hi = x.min(axis=axes, keepdims=True), x.max(axis=axes, keepdims=True)
    best, best_lo, best_hi = None, lo, hi
    for t in np.linspace(1.0 / grid, 1.0, grid):
        scale, zp = _from_range(lo * t, hi * t, dtype, symmetric)
        qmin, qmax = qrange(dtype)
        q = np.clip(np.rint(x / scale).astype(np.float64) + zp, qmin, qmax)
        err = ((q - zp) * scale - x) ** 2
        err = err.mean(axis=axes, keepdims=True)
        better = err if best is None else np.minimum(best, err)
        pick = err <= (better if best is None else best)
        best_lo, best_hi = np.where(pick, lo * t, best_lo), np.where(pick, hi * t, best_hi)
        best = better
    return best_lo, best_hi


def choose_qparams(x: np.ndarray, dtype: str = "int8", symmetric: bool = True, axis: int | None = None,
                   method: str = "minmax", *, percentile: float = 99.99) -> QParams:
    """Pick scale and zero point for ``x`` (per tensor, or per slice along ``axis``).

    The range [lo, hi] comes from ``method``: ``"minmax"`` (the extremes),
    ``"percentile"`` (the ``percentile``-th and ``100 − percentile``-th
    percentiles, or of ``|x|`` when symmetric) or ``"mse"`` (the clipping that
    minimises the mean squared quantize–dequantize error, searched on a grid).
    The range always includes 0, so that zero is exact. Asymmetric:
    ``scale = (hi − lo)/(qmax − qmin)``, ``zero_point = qmin − round(lo/scale)``.
    Symmetric: ``scale = max(|lo|, hi)/127`` for 8 bits (−127…127, "narrow
    range") and zero point 0 (128 for unsigned types).

    Parameters
    ----------
    x : numpy.ndarray
        float32 or float64 data, finite, not empty.
    dtype : str
        A key of :data:`DTYPES`.
    symmetric : bool
    axis : int, optional
        Per-channel along this axis (weights: 0 for a Conv's output channels).
    method : {"minmax", "percentile", "mse"}
    percentile : float
        In (50, 100], for ``method="percentile"``.

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
    x = _check.as_array(x, "x")
    if x.dtype.kind != "f":
        raise TypeError(f"x must be a float array, got {x.dtype}")
    if x.size == 0:
        raise ValueError("x must not be empty")
    _check.finite(x, "x")
    _check.one_of(method, "method", _METHODS)
    qrange(dtype)
    if not isinstance(symmetric, bool):
        raise TypeError(f"symmetric must be True or False, got {symmetric!r}")
    axes = _reduce_axes(x, axis)
    x = x.astype(np.float64)
    if method == "minmax":
        lo, hi = x.min(axis=axes, keepdims=True), x.max(axis=axes, keepdims=True)
    elif method == "percentile":
        if isinstance(percentile, bool) or not isinstance(percentile, _numbers.Real) or not 50 < percentile <= 100:
            raise ValueError(f"percentile must be a number in (50, 100], got {percentile!r}")
        if symmetric:
            hi = np.percentile(np.abs(x), percentile, axis=axes, keepdims=True)
            lo = -hi
        else:
            lo = np.percentile(x, 100 - percentile, axis=axes, keepdims=True)
            hi = np.percentile(x, percentile, axis=axes, keepdims=True)
    else:
        lo, hi = _mse_clip(x, axes, dtype, symmetric)
    scale, zp = _from_range(lo, hi, dtype, symmetric)
    if axis is None:
        return QParams(scale.reshape(()), zp.reshape(()), dtype, None)
    return QParams(scale.ravel(), zp.ravel(), dtype, axis % x.ndim)


class Observer:
    """Statistics of a tensor accumulated over calibration batches, then turned into a quantizer.

    ``"minmax"`` keeps the running extremes. ``"percentile"`` and ``"mse"``
    keep a histogram over [−R, R) with ``bins`` bins; when a batch exceeds R,
    R doubles and neighbouring bins merge, so the histogram never needs the
    data again (the way calibration tools such as ONNX Runtime's work).

    Parameters
    ----------
    method : {"minmax", "percentile", "mse"}
    percentile : float
        In (50, 100], for ``"percentile"``.
    bins : int
        Histogram bins (even, ≥ 64).

    Examples
    --------
    >>> obs = Observer("percentile", percentile=99.0)
    >>> for k in range(3):
    ...     _ = obs.update(np.arange(100, dtype=np.float32) * (k + 1))
    >>> obs.count, round(float(obs.qparams("uint8", symmetric=False).scale) * 255)
    (300, 289)
    """

    def __init__(self, method: str = "minmax", *, percentile: float = 99.99, bins: int = 2048) -> None:
        self.method = _check.one_of(method, "method", _METHODS)
        if isinstance(percentile, bool) or not isinstance(percentile, _numbers.Real) or not 50 < percentile <= 100:
            raise ValueError(f"percentile must be a number in (50, 100], got {percentile!r}")
        self.percentile = float(percentile)
        self.bins = _check.integer(bins, "bins", minimum=64)
        if self.bins % 2:
            raise ValueError(f"bins must be even, got {bins}")
        self.lo, self.hi, self.count = np.inf, -np.inf, 0
        self.radius = 0.0
        self.hist = np.zeros(self.bins, np.int64)

    def update(self, x: np.ndarray) -> "Observer":
        """Add a batch. Returns the observer, so calls chain.

        Raises
        ------
        TypeError, ValueError
            If ``x`` is not a float array, is empty or has NaN/inf.
        """
        x = _check.as_array(x, "x")
        if x.dtype.kind != "f":
            raise TypeError(f"x must be a float array, got {x.dtype}")
        if x.size == 0:
            raise ValueError("x must not be empty")
        _check.finite(x, "x")
        x = x.ravel().astype(np.float64)
        self.lo, self.hi, self.count = min(self.lo, x.min()), max(self.hi, x.max()), self.count + x.size
        if self.method == "minmax":
            return self
        need = max(abs(self.lo), abs(self.hi), 1e-30)
        if self.radius == 0.0:
            self.radius = 2.0 ** np.ceil(np.log2(need))
        while need >= self.radius:  # double the range: bin i joins new bin (i + bins/2) // 2
            merged = np.zeros_like(self.hist)
            np.add.at(merged, (np.arange(self.bins) + self.bins // 2) // 2, self.hist)
            self.hist, self.radius = merged, 2 * self.radius
        idx = np.floor((x + self.radius) / (2 * self.radius) * self.bins).astype(np.int64)
        self.hist += np.bincount(np.clip(idx, 0, self.bins - 1), minlength=self.bins)
        return self

    def qparams(self, dtype: str = "uint8", symmetric: bool = False) -> QParams:
        """The quantizer for everything seen so far.

        Raises
        ------
        ValueError
            If no batch was added.
        """
        if self.count == 0:
            raise ValueError("the observer has seen no data: call update(batch) first (calibration data is empty)")
        qrange(dtype)
        if self.method == "minmax":
            lo, hi = self.lo, self.hi
        else:
            width = 2 * self.radius / self.bins
            edges = -self.radius + width * np.arange(self.bins + 1)
            centres = (edges[:-1] + edges[1:]) / 2
            if self.method == "percentile":
                cum = np.cumsum(self.hist) / self.count
                if symmetric:
                    folded = np.abs(centres)
                    order = np.argsort(folded, kind="stable")
                    c = np.cumsum(self.hist[order]) / self.count
                    hi = folded[order][np.searchsorted(c, self.percentile / 100)] + width / 2
                    lo = -hi
                else:
                    hi = edges[1:][min(np.searchsorted(cum, self.percentile / 100), self.bins - 1)]
                    lo = edges[:-1][np.searchsorted(cum, (100 - self.percentile) / 100)]
                lo, hi = max(lo, self.lo), min(hi, self.hi)
            else:
                data = np.repeat(centres, np.minimum(self.hist, 1))  # one representative per occupied bin,
                weights = self.hist[self.hist > 0].astype(np.float64)  # weighted by its count
                lo, hi = self._mse(data, weights, dtype, symmetric)
        scale, zp = _from_range(np.float64(lo), np.float64(hi), dtype, symmetric)
        return QParams(scale.reshape(()), zp.reshape(()), dtype, None)

    def _mse(self, values: np.ndarray, weights: np.ndarray, dtype: str, symmetric: bool) -> tuple[float, float]:
        qmin, qmax = qrange(dtype)
        best = (np.inf, self.lo, self.hi)
        for t in np.linspace(1 / 60, 1.0, 60):
            scale, zp = _from_range(np.float64(self.lo * t), np.float64(self.hi * t), dtype, symmetric)
            q = np.clip(np.rint(values / scale) + zp, qmin, qmax)
            err = float(np.sum(weights * ((q - zp) * scale - values) ** 2))
            if err <= best[0]:
                best = (err, self.lo * t, self.hi * t)
        return best[1], best[2]


# ---- integer arithmetic --------------------------------------------------------------------


def quantize_multiplier(real: Any) -> tuple[Any, Any]:
    """Write a positive real multiplier as ``M0 · 2^−31 · 2^−shift`` with int32 ``M0`` in [2^30, 2^31).

    ``M0 / 2^31`` is the mantissa in [0.5, 1); ``shift`` is the right shift
    (negative for a multiplier ≥ 1). For a float32 ``real`` (what an ONNX
    model stores) the representation is exact.

    Parameters
    ----------
    real : float or numpy.ndarray
        Positive, finite, below 2^31.

    Returns
    -------
    (M0, shift)
        ints, or int64 arrays for an array input.

    Raises
    ------
    TypeError, ValueError
        If ``real`` is not a real number (array) or is ≤ 0, not finite or ≥ 2^31.

    Examples
    --------
    >>> quantize_multiplier(0.75)
    (1610612736, 0)
    >>> m0, shift = quantize_multiplier(np.float32(0.0123))
    >>> m0 / 2**31 * 2.0**-shift == float(np.float32(0.0123))
    True
    """
    if isinstance(real, bool) or not isinstance(real, (_numbers.Real, np.ndarray)):
        raise TypeError(f"real must be a positive number or array, got {type(real).__name__}")
    r = np.asarray(real, dtype=np.float64)
    if not (np.all(np.isfinite(r)) and np.all(r > 0) and np.all(r < 2.0**31)):
        raise ValueError(f"real must be finite, > 0 and < 2**31, got {r.ravel()[:4]}")
    frac, exp = np.frexp(r)                               # r = frac · 2^exp, frac in [0.5, 1)
    m0 = np.rint(frac * 2.0**31).astype(np.int64)
    carry = m0 == 2**31                                   # rounding reached 1.0: renormalise
    m0, exp = np.where(carry, m0 // 2, m0), np.where(carry, exp + 1, exp)
    shift = (-exp).astype(np.int64)
    if r.ndim == 0:
        return int(m0), int(shift)
    return m0, shift


def _shift_round_half_even(total: np.ndarray, n: np.ndarray, zp: np.ndarray) -> np.ndarray:
    """round_half_to_even(total / 2^n + zp) for int64 ``total`` and n ≥ 0, exactly, in integers."""
    big = n > 62                                          # |total| < 2^62 ≤ 2^(n−1): rounds to zp
    n = np.where(big, 0, n)
    floor = total >> n
    rem = total - (floor << n)
    half = np.where(n > 0, np.left_shift(np.int64(1), np.maximum(n - 1, 0)), 1)
    up = (rem > half) | ((rem == half) & (n > 0) & ((floor + zp) % 2 == 1))
    return np.where(big, zp, floor + up + zp)


def _srdhm(a: np.ndarray, m0: np.ndarray) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul: round(a·m0 / 2^31), ties toward +inf (its nudge)."""
    ab = a * m0
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    s = ab + nudge
    return np.where(s >= 0, s >> 31, -((-s) >> 31))      # C division truncates toward zero


def _rdbpot(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT: round(x / 2^e), ties away from zero."""
    mask = (np.left_shift(np.int64(1), e)) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> e) + (remainder > threshold)


def requantize(acc: np.ndarray, multiplier: Any, shift: Any, zero_point: Any = 0, dtype: str = "uint8", *,
               rounding: str = "half_even") -> np.ndarray:
    """Bring int32 accumulators back to a quantized type: ``saturate(round(acc·M0·2^−(31+shift)) + z)``.

    ``rounding="half_even"`` rounds once, exactly, ties to even, on the value
    with the zero point added (what ONNX QLinearMatMul/QLinearConv's
    reference does). ``rounding="double"`` is gemmlowp's (and Jacob et al.'s)
    two-step integer version: a rounding high multiply by ``M0`` (ties toward
    +inf) and then a rounding right shift (ties away from zero), the zero
    point added after; the first rounding can push the second across a tie,
    so it sometimes differs by one step.

    Parameters
    ----------
    acc : numpy.ndarray
        int32 (or int64 holding int32 values) accumulators.
    multiplier, shift : int or numpy.ndarray
        From :func:`quantize_multiplier`; arrays broadcast against ``acc``
        (per-channel requantization).
    zero_point : int or numpy.ndarray
        The output's zero point.
    dtype : str
        The output type (a key of :data:`DTYPES`).
    rounding : {"half_even", "double"}

    Returns
    -------
    numpy.ndarray
        In the storage dtype of ``dtype``.

    Raises
    ------
    TypeError, ValueError
        For non-integer ``acc``, values outside int32, ``multiplier`` outside
        [2^30, 2^31), ``shift`` < −31, or a zero point outside the type.

    Examples
    --------
    >>> m0, shift = quantize_multiplier(0.25)
    >>> requantize(np.int32([10, 14, -6]), m0, shift, 0, "int8").tolist()   # 2.5, 3.5, -1.5
    [2, 4, -2]
    >>> requantize(np.int32([10, 14, -6]), m0, shift, 0, "int8", rounding="double").tolist()
    [3, 4, -2]
    """
    acc = _check.as_array(acc, "acc")
    if acc.dtype.kind not in "iu":
        raise TypeError(f"acc must be an integer array (int32 accumulators), got {acc.dtype}")
    acc = acc.astype(np.int64)
    if acc.size and (acc.min() < -2**31 or acc.max() >= 2**31):
        raise ValueError("acc must hold int32 values")
    lo, hi, store = DTYPES[_check.one_of(dtype, "dtype", tuple(DTYPES))]
    _check.one_of(rounding, "rounding", ("half_even", "double"))
    m0, n = np.asarray(multiplier), np.asarray(shift)
    if m0.dtype.kind not in "iu" or n.dtype.kind not in "iu":
        raise TypeError("multiplier and shift must be integers (from quantize_multiplier)")
    m0, n = m0.astype(np.int64), n.astype(np.int64)
    if m0.size and (m0.min() < 2**30 or m0.max() >= 2**31):
        raise ValueError(f"multiplier must be in [2**30, 2**31) (M0 in [0.5, 1) as int32), got {m0.ravel()[:4]}")
    if n.size and n.min() < -31:
        raise ValueError(f"shift must be >= -31, got {n.min()}")
    z = np.asarray(zero_point)
    if z.dtype.kind not in "iu" or (z.size and (z.min() < lo or z.max() > hi)):
        raise ValueError(f"zero_point must be integers in {dtype}'s range [{lo}, {hi}]")
    z = z.astype(np.int64)
    if rounding == "half_even":
        q = _shift_round_half_even(acc * m0, 31 + n, z)
    else:
        left, right = np.maximum(-n, 0), np.maximum(n, 0)
        q = _rdbpot(_srdhm(acc << left, m0), right) + z
    return np.clip(q, lo, hi).astype(store)


def _int_operand(q: Any, name: str) -> np.ndarray:
    q = _check.as_array(q, name)
    if q.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got {q.dtype}")
    return q


def _exact_int32(total: np.ndarray, what: str) -> np.ndarray:
    if total.size and (total.min() < -2**31 or total.max() >= 2**31):
        raise ValueError(f"{what} overflows int32 accumulators")
    return total.astype(np.int32)


def qmatmul(a: np.ndarray, a_zero_point: Any, b: np.ndarray, b_zero_point: Any = 0) -> np.ndarray:
    """Integer matrix product ``(a − z_a) @ (b − z_b)`` with exact int32 accumulators.

    Products of 8-bit integers and their sums are computed exactly (in
    float64 through BLAS, which is exact for integers below 2^53, then
    checked to fit int32). ``b_zero_point`` may be 1-D along ``b``'s columns.

    Raises
    ------
    TypeError, ValueError
        For non-integer operands, shapes that do not multiply, or int32 overflow.

    Examples
    --------
    >>> a = np.array([[130, 120]], np.uint8); b = np.array([[2], [-3]], np.int8)
    >>> qmatmul(a, 128, b).tolist()                 # (2·2) + (−8·−3)
    [[28]]
    """
    a, b = _int_operand(a, "a"), _int_operand(b, "b")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"a and b must be 2-D with a.shape[1] == b.shape[0], got {a.shape} and {b.shape}")
    za, zb = np.asarray(a_zero_point, np.float64), np.asarray(b_zero_point, np.float64)
    total = (a.astype(np.float64) - za) @ (b.astype(np.float64) - zb)
    return _exact_int32(total, "the product")


def _conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int, groups: int) -> np.ndarray:
    """NCHW convolution of already zero-point-shifted (or float) operands; padding adds zeros."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xz = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    win = np.lib.stride_tricks.sliding_window_view(xz, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride][:, :, :ho, :wo]
    if groups == 1:
        cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * ho * wo, cg * kh * kw)
        return (cols @ w.reshape(m, -1).T).reshape(n, ho, wo, m).transpose(0, 3, 1, 2)
    if groups == c == m and cg == 1:                        # depthwise: one k×k filter per channel
        return np.einsum("nchwij,cij->nchw", win, w[:, 0], optimize=True)
    win = win.reshape(n, groups, cg, ho, wo, kh, kw)
    out = np.einsum("ngchwij,gmcij->ngmhw", win, w.reshape(groups, m // groups, cg, kh, kw), optimize=True)
    return out.reshape(n, m, ho, wo)


def qconv(x: np.ndarray, x_zero_point: Any, w: np.ndarray, w_zero_point: Any = 0, bias: np.ndarray | None = None, *,
          stride: int = 1, pad: int = 0, groups: int = 1) -> np.ndarray:
    """Integer 2-D convolution (NCHW, ONNX weight layout) with exact int32 accumulators.

    The input is padded with its *zero point*, so that a padded pixel is the
    real value 0, as QLinearConv requires. ``bias`` is int32 with scale
    ``s_x·s_w`` and is added to the sums.

    Parameters
    ----------
    x : numpy.ndarray
        (N, C, H, W) integers.
    x_zero_point : int
    w : numpy.ndarray
        (M, C/groups, k, k) integers.
    w_zero_point : int or numpy.ndarray
        Scalar or per output channel.
    bias : numpy.ndarray, optional
        (M,) int32.
    stride, pad, groups : int

    Returns
    -------
    numpy.ndarray
        int32, (N, M, Ho, Wo).

    Raises
    ------
    TypeError, ValueError
        For non-integer operands, shapes that do not fit, or int32 overflow.

    Examples
    --------
    >>> x = np.full((1, 1, 2, 2), 10, np.uint8)
    >>> qconv(x, 10, np.ones((1, 1, 1, 1), np.int8)).ravel().tolist()
    [0, 0, 0, 0]
    """
    x, w = _int_operand(x, "x"), _int_operand(w, "w")
    stride, pad = _check.integer(stride, "stride", minimum=1), _check.integer(pad, "pad", minimum=0)
    groups = _check.integer(groups, "groups", minimum=1)
    if x.ndim != 4 or w.ndim != 4 or x.shape[1] != w.shape[1] * groups or w.shape[0] % groups:
        raise ValueError(f"x (N, C, H, W) and w (M, C/groups, k, k) do not fit with groups={groups}: "
                         f"{x.shape}, {w.shape}")
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    zw = np.asarray(w_zero_point)
    if zw.dtype.kind not in "iu" or zw.size not in (1, m):
        raise ValueError(f"w_zero_point must be an integer or one integer per output channel ({m}), got {zw.ravel()[:4]}")
    wz = w.astype(np.float64) - zw.astype(np.float64).reshape(-1, 1, 1, 1)
    out = _conv(x.astype(np.float64) - float(x_zero_point), wz, stride, pad, groups)
    if bias is not None:
        bias = _int_operand(bias, "bias")
        if bias.shape != (m,):
            raise ValueError(f"bias must have shape ({m},), got {bias.shape}")
        out = out + bias.reshape(1, m, 1, 1)
    return _exact_int32(out, "the convolution")


# ---- low-precision floats ------------------------------------------------------------------


def to_float(x: np.ndarray, fmt: str, *, saturate: bool = False) -> np.ndarray:
    """Round float32 values to a low-precision float format; the result is float32 holding them exactly.

    Round to nearest, ties to even, with the format's subnormals. A value past
    the largest finite one becomes inf (bfloat16, float16, float8_e5m2) or NaN
    (float8_e4m3fn, which has no inf), or, with ``saturate=True``, the largest
    finite value of its sign (ONNX's ``saturate`` for FP8). NaN stays NaN (its
    payload is not kept); −0 stays −0.

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
    x, y = _check.as_array(x, "x"), _check.as_array(y, "y")
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


# ---- CameraNet as a QDQ model ------------------------------------------------------------------


def _graph(model: Any) -> tuple[Any, dict[str, np.ndarray]]:
    import onnx
    from onnx import numpy_helper

    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"model must be an onnx.ModelProto, got {type(model).__name__}")
    return model.graph, {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def _attrs(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


_FLOAT_OPS = ("Conv", "Relu", "GlobalAveragePool", "Flatten", "Gemm")


def _float_forward(model: Any, images: np.ndarray) -> dict[str, np.ndarray]:
    """Every tensor of a float Conv/Relu/GlobalAveragePool/Flatten/Gemm chain, computed in NumPy."""
    graph, inits = _graph(model)
    env = {graph.input[0].name: images.astype(np.float32)}
    for node in graph.node:
        if node.op_type not in _FLOAT_OPS:
            raise ValueError(f"model must hold only {', '.join(_FLOAT_OPS)} nodes (fold BatchNormalization "
                             f"first with npukit.rewrites.fold_batchnorm); found {node.op_type} {node.name!r}")
        x, a = env[node.input[0]], _attrs(node)
        if node.op_type == "Conv":
            w = inits[node.input[1]]
            y = _conv(x, w, a.get("strides", [1])[0], a.get("pads", [0])[0], a.get("group", 1))
            if len(node.input) > 2:
                y = y + inits[node.input[2]].reshape(1, -1, 1, 1)
        elif node.op_type == "Relu":
            y = np.maximum(x, 0)
        elif node.op_type == "GlobalAveragePool":
            y = x.mean(axis=(2, 3), keepdims=True)
        elif node.op_type == "Flatten":
            y = x.reshape(len(x), -1)
        else:
            w = inits[node.input[1]]
            y = x @ (w.T if a.get("transB", 0) else w) + inits[node.input[2]]
        env[node.output[0]] = y.astype(np.float32)
    return env


def _activation_edges(model: Any, keep_float: Sequence[str]) -> list[str]:
    """Tensors that get a Q/DQ pair: the input and every Relu/GlobalAveragePool output feeding a quantized layer."""
    graph, _ = _graph(model)
    readers: dict[str, list[Any]] = {}
    for node in graph.node:
        for t in node.input:
            readers.setdefault(t, []).append(node)

    def feeds_quantized(t: str) -> bool:
        for r in readers.get(t, []):
            if r.op_type in ("Conv", "Gemm"):
                if r.name not in keep_float:
                    return True
            elif r.op_type in ("Flatten", "GlobalAveragePool", "Relu") and feeds_quantized(r.output[0]):
                return True
        return False

    edges = [graph.input[0].name] + [n.output[0] for n in graph.node if n.op_type in ("Relu", "GlobalAveragePool")]
    return [t for t in edges if feeds_quantized(t)]


def calibrate(model: Any, calibration_data: np.ndarray, *, method: str = "minmax", percentile: float = 99.99,
              batch: int = 64, keep_float: Sequence[str] = ()) -> dict[str, QParams]:
    """uint8 quantizers for a model's activations, from :class:`Observer` statistics over the data.

    Parameters
    ----------
    model : onnx.ModelProto
        A float Conv/Relu/GlobalAveragePool/Flatten/Gemm chain (CameraNet with
        BatchNormalization folded).
    calibration_data : numpy.ndarray
        float32 inputs, (n, ...) with n ≥ 1.
    method, percentile
        As for :class:`Observer`.
    batch : int
        Images per pass (the observers accumulate across passes).
    keep_float : sequence of str
        Conv/Gemm node names left in float (their inputs need no quantizer).

    Returns
    -------
    dict
        Tensor name → :class:`QParams` (uint8, asymmetric, per tensor).

    Raises
    ------
    TypeError, ValueError
        For a model that is not such a chain, empty or non-finite data.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> from npukit.data import shapes_dataset
    >>> from npukit import rewrites
    >>> model = rewrites.fold_batchnorm(CameraNet.pretrained().to_onnx())
    >>> q = calibrate(model, shapes_dataset(16, seed=3)[0])
    >>> list(q)[:3], q["image"].dtype
    (['image', 'stem.relu', 'block1.dw_relu'], 'uint8')
    """
    data = _check.as_array(calibration_data, "calibration_data")
    if data.dtype != np.float32 or data.ndim < 2:
        raise TypeError(f"calibration_data must be a float32 batch (n, ...), got {data.dtype} {data.shape}")
    if len(data) == 0:
        raise ValueError("calibration_data must hold at least one input")
    _check.finite(data, "calibration_data")
    batch = _check.integer(batch, "batch", minimum=1)
    edges = _activation_edges(model, keep_float)
    observers = {t: Observer(method, percentile=percentile) for t in edges}
    for i in range(0, len(data), batch):
        env = _float_forward(model, data[i:i + batch])
        for t, obs in observers.items():
            obs.update(env[t])
    return {t: obs.qparams("uint8", symmetric=False) for t, obs in observers.items()}


def to_qdq(model: Any, calibration_data: np.ndarray, *, method: str = "minmax", percentile: float = 99.99,
           per_channel: bool = True, keep_float: Sequence[str] = (), fixed: dict[str, QParams] | None = None) -> Any:
    """Write a float model as an ONNX QDQ model: uint8 activations, int8 weights, int32 biases.

    Every activation edge (:func:`calibrate`) gets a QuantizeLinear →
    DequantizeLinear pair; every quantized Conv/Gemm reads its weights through
    a DequantizeLinear of int8 values (symmetric, per output channel or per
    tensor) and its bias as int32 with scale ``s_x·s_w``, zero point 0. The
    float operators stay: a runtime that recognises the pattern runs them in
    integer arithmetic.

    Parameters
    ----------
    model : onnx.ModelProto
        As for :func:`calibrate`.
    calibration_data : numpy.ndarray
        As for :func:`calibrate`.
    method, percentile
        The activation observer.
    per_channel : bool
        Weight scales per output channel (True) or one per tensor.
    keep_float : sequence of str
        Conv/Gemm node names to leave in float (mixed precision).
    fixed : dict, optional
        Tensor name → :class:`QParams` that replace calibrated ones (e.g. the
        input's known range: scale 1/255).

    Returns
    -------
    onnx.ModelProto
        Checked with ``onnx.checker``; opset 21 (or the model's, if newer).

    Raises
    ------
    TypeError, ValueError
        As for :func:`calibrate`, or for a ``keep_float`` name that is not a
        Conv/Gemm node of the model.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> from npukit.data import shapes_dataset
    >>> from npukit import rewrites
    >>> model = rewrites.fold_batchnorm(CameraNet.pretrained().to_onnx())
    >>> qdq = to_qdq(model, shapes_dataset(16, seed=3)[0])
    >>> [n.op_type for n in qdq.graph.node][:5]
    ['QuantizeLinear', 'DequantizeLinear', 'DequantizeLinear', 'DequantizeLinear', 'Conv']
    """
    import onnx
    from onnx import helper, numpy_helper

    graph, inits = _graph(model)
    layers = {n.name for n in graph.node if n.op_type in ("Conv", "Gemm")}
    keep_float = tuple(_check.sequence(list(keep_float) if isinstance(keep_float, tuple) else keep_float, "keep_float"))
    for name in keep_float:
        if name not in layers:
            raise ValueError(f"keep_float must name Conv/Gemm nodes of the model ({', '.join(sorted(layers))}), got {name!r}")
    if not isinstance(per_channel, bool):
        raise TypeError(f"per_channel must be True or False, got {per_channel!r}")
    act = calibrate(model, calibration_data, method=method, percentile=percentile, keep_float=keep_float)
    for t, p in (fixed or {}).items():
        if t not in act or not isinstance(p, QParams):
            raise ValueError(f"fixed must map quantized tensors ({', '.join(act)}) to QParams, got {t!r}")
        act[t] = p
    nodes, new_inits, rename = [], [], {}
    flat = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "Flatten"}

    def edge(t: str) -> str:  # the quantized tensor behind a chain of Flattens
        while t in flat:
            t = flat[t]
        return t

    def const(name: str, value: np.ndarray) -> str:
        new_inits.append(numpy_helper.from_array(value, name))
        return name

    def qdq_pair(t: str) -> None:
        p = act[t]
        s, z = const(f"{t}.scale", np.asarray(p.scale, np.float32)), const(f"{t}.zero_point", np.asarray(p.zero_point, np.uint8))
        nodes.append(helper.make_node("QuantizeLinear", [t, s, z], [f"{t}.q"], name=f"{t}.quantize"))
        nodes.append(helper.make_node("DequantizeLinear", [f"{t}.q", s, z], [f"{t}.dq"], name=f"{t}.dequantize"))
        rename[t] = f"{t}.dq"

    if graph.input[0].name in act:
        qdq_pair(graph.input[0].name)
    for node in graph.node:
        inputs = [rename.get(i, i) for i in node.input]
        if node.op_type in ("Conv", "Gemm") and node.name not in keep_float:
            w = inits[node.input[1]]
            wp = choose_qparams(w, "int8", True, axis=0 if per_channel else None)
            sw = np.asarray(wp.scale, np.float32)
            sx = np.asarray(act[edge(node.input[0])].scale, np.float32)
            wq = const(f"{node.input[1]}.int8", wp.quantize(w) if per_channel else quantize(w, sw, 0, "int8"))
            ws, wz = const(f"{node.input[1]}.scale", sw), const(f"{node.input[1]}.zero_point", np.zeros(sw.shape, np.int8))
            nodes.append(helper.make_node("DequantizeLinear", [wq, ws, wz], [f"{node.input[1]}.dq"], axis=0,
                                          name=f"{node.input[1]}.dequantize"))
            inputs[1] = f"{node.input[1]}.dq"
            if len(node.input) > 2:
                sb = (sx * sw).astype(np.float32)                     # bias scale s_x·s_w, zero point 0
                b = inits[node.input[2]]
                bq = np.clip(np.rint(b.astype(np.float64) / sb), -2**31, 2**31 - 1).astype(np.int32)
                bs = const(f"{node.input[2]}.scale", sb)
                bz = const(f"{node.input[2]}.zero_point", np.zeros(sb.shape, np.int32))
                nodes.append(helper.make_node("DequantizeLinear", [const(f"{node.input[2]}.int32", bq), bs, bz],
                                              [f"{node.input[2]}.dq"], axis=0, name=f"{node.input[2]}.dequantize"))
                inputs[2] = f"{node.input[2]}.dq"
        new = helper.make_node(node.op_type, inputs, list(node.output), name=node.name)
        new.attribute.extend(node.attribute)
        nodes.append(new)
        if node.output[0] in act:
            qdq_pair(node.output[0])
        for out in graph.output:
            if out.name == node.output[0] and out.name in rename:
                raise ValueError("the model's output must not be a quantized activation edge")
    used = {i for n in nodes for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    out_graph = helper.make_graph(nodes, f"{graph.name}_qdq", list(graph.input), list(graph.output),
                                  initializer=kept + new_inits)
    opset = max(21, max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")))
    out = helper.make_model(out_graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="npukit.quant",
                            ir_version=model.ir_version)
    onnx.checker.check_model(out)
    return out


def _qdq_params(inits: dict, node: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values, scale, zero point) of a DequantizeLinear node over an initializer."""
    return inits[node.input[0]], inits[node.input[1]].astype(np.float32), inits[node.input[2]].astype(np.int64)


def integer_forward(qdq_model: Any, images: np.ndarray, *, record: bool = False) -> Any:
    """Run a QDQ model from :func:`to_qdq` with integer kernels only, as an INT8 accelerator would.

    Each Conv or Gemm between dequantized int8 weights and a dequantized uint8
    activation becomes :func:`qconv` / :func:`qmatmul` (int32 sums, int32
    bias); a Relu followed by a QuantizeLinear becomes :func:`requantize`
    (``M = s_x·s_w / s_y`` in float32, as QLinearConv computes it, written
    exactly as ``M0``, ``shift``) and a clamp at the output zero point; a
    GlobalAveragePool sums integers and requantizes by ``s_x / (H·W·s_y)``.
    Only the input's QuantizeLinear and the logits' final rescale touch floats.

    Parameters
    ----------
    qdq_model : onnx.ModelProto
        A fully quantized model made by :func:`to_qdq` (no ``keep_float``).
    images : numpy.ndarray
        float32 inputs.
    record : bool
        Also return every quantized activation (uint8), keyed by tensor name.

    Returns
    -------
    numpy.ndarray or (numpy.ndarray, dict)
        float32 logits, and with ``record`` the activations.

    Raises
    ------
    TypeError, ValueError
        For bad ``images`` or a model that is not a fully quantized QDQ chain.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> from npukit.data import shapes_dataset
    >>> from npukit import rewrites
    >>> net = CameraNet.pretrained()
    >>> images, _ = shapes_dataset(16, seed=3)
    >>> qdq = to_qdq(rewrites.fold_batchnorm(net.to_onnx()), images)
    >>> logits = integer_forward(qdq, images)
    >>> float((logits.argmax(1) == net(images).argmax(1)).mean())
    1.0
    """
    graph, inits = _graph(qdq_model)
    images = _float32(images, "images")
    producer = {o: n for n in graph.node for o in n.output}
    q: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}      # quantized activations
    acc: dict[str, tuple[np.ndarray, np.ndarray, bool]] = {}          # int32 sums, their scale, relu pending
    out: dict[str, np.ndarray] = {}

    def source(t: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        node = producer.get(t)
        if node is not None and node.op_type == "Flatten" and t in q:
            return q[t]
        if node is None or node.op_type != "DequantizeLinear" or node.input[0] not in q:
            raise ValueError(f"integer_forward needs a fully quantized model: {t!r} is not a dequantized activation")
        return q[node.input[0]]

    def weight(t: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        node = producer.get(t)
        if node is None or node.op_type != "DequantizeLinear" or node.input[0] not in inits:
            raise ValueError(f"integer_forward needs quantized weights: {t!r} is not a dequantized initializer")
        return _qdq_params(inits, node)

    for node in graph.node:
        a, op = _attrs(node), node.op_type
        if op == "QuantizeLinear":
            s, z = inits[node.input[1]].astype(np.float32), inits[node.input[2]]
            if node.input[0] == graph.input[0].name:
                q[node.output[0]] = (quantize(images, s, z, "uint8"), s, z.astype(np.int64))
            else:
                total, s_acc, relu = acc[node.input[0]]
                m0, shift = quantize_multiplier((s_acc / s).astype(np.float32))
                shape = (1, -1) + (1,) * (total.ndim - 2) if np.ndim(m0) else ()
                y = requantize(total, np.reshape(m0, shape), np.reshape(shift, shape), z.astype(np.int64), "uint8")
                q[node.output[0]] = (np.maximum(y, z) if relu else y, s, z.astype(np.int64))   # ReLU: a clamp
        elif op == "DequantizeLinear":
            continue
        elif op in ("Conv", "Gemm"):
            xq, sx, zx = source(node.input[0])
            wq, sw, zw = weight(node.input[1])
            bq = weight(node.input[2])[0] if len(node.input) > 2 else None
            if op == "Conv":
                total = qconv(xq, int(zx), wq, zw, bq, stride=a.get("strides", [1])[0], pad=a.get("pads", [0])[0],
                              groups=a.get("group", 1))
            else:
                total = qmatmul(xq, int(zx), wq.T if a.get("transB", 0) else wq, 0) + (0 if bq is None else bq)
            s_acc = (sx * sw).astype(np.float32)
            if node.output[0] in (o.name for o in graph.output):
                out[node.output[0]] = (total * (s_acc.reshape(1, -1) if op == "Gemm" else s_acc)).astype(np.float32)
            acc[node.output[0]] = (total.astype(np.int64), s_acc, False)
        elif op == "Relu":
            total, s_acc, _ = acc[node.input[0]]
            acc[node.output[0]] = (total, s_acc, True)
        elif op == "GlobalAveragePool":
            xq, sx, zx = source(node.input[0])
            hw = xq.shape[2] * xq.shape[3]
            total = (xq.astype(np.int64) - zx).sum(axis=(2, 3), keepdims=True)
            acc[node.output[0]] = (total, (sx / np.float32(hw)).astype(np.float32), False)
        elif op == "Flatten":
            xq, sx, zx = source(node.input[0])
            q[node.output[0]] = (xq.reshape(len(xq), -1), sx, zx)
        else:
            raise ValueError(f"integer_forward does not run {op} nodes ({node.name!r})")
    logits = out[graph.output[0].name]
    if record:
        return logits, {k.removesuffix(".q"): v[0] for k, v in q.items() if k.endswith(".q")}
    return logits


def numbers(ctx: tally.Context) -> list[tally.Row]:
    """Chapter 6's rows of the "numbers so far" table: CameraNet in INT8.

    Follows the contract of :mod:`npukit.tally`: folds ``ctx.net``'s
    BatchNormalization, writes it as a QDQ model calibrated (min–max) on 128
    images of ``shapes_dataset(seed=7)``, and runs it with
    :func:`integer_forward` on 500 held-out images.

    Examples
    --------
    >>> from npukit import tally
    >>> [r.quantity for r in numbers(tally.Context())][0]
    'weight bytes, INT8 per-channel (+ int32 biases, float32 scales)'
    """
    from . import rewrites, tally
    from .data import shapes_dataset
    from .train import HELDOUT_SEED

    if not isinstance(ctx, tally.Context):
        raise TypeError(f"ctx must be a tally.Context, got {type(ctx).__name__}")
    folded = rewrites.fold_batchnorm(ctx.model)
    qdq = to_qdq(folded, shapes_dataset(128, seed=7)[0])
    images, labels = shapes_dataset(500, seed=HELDOUT_SEED)
    q_logits, f_logits = integer_forward(qdq, images), ctx.net(images)
    from onnx import numpy_helper

    stored = {t.name: numpy_helper.to_array(t) for t in qdq.graph.initializer}
    w8 = sum(a.size for k, a in stored.items() if k.endswith(".int8"))
    rest = sum(a.nbytes for k, a in stored.items() if not k.endswith(".int8"))
    w32 = sum(a.size for k, a in stored.items() if k.endswith(".int8")) * 4
    agree = float((q_logits.argmax(1) == f_logits.argmax(1)).mean())
    acc = float((q_logits.argmax(1) == labels).mean())
    return [
        tally.Row(6, "weight bytes, INT8 per-channel (+ int32 biases, float32 scales)",
                  f"{w8 + rest:,} B (float32 weights: {w32:,} B)", "npukit.quant.to_qdq initializers"),
        tally.Row(6, "INT8 top-1 agreement with float32", f"{agree:.1%} (accuracy {acc:.1%})",
                  "npukit.quant.integer_forward on 500 held-out images, min-max calibration on 128"),
    ]
