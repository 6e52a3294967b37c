"""Checkers for lab 6, "Quantization" (labs/06_quant.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and compares
it with an independent reference (ONNX's reference evaluator, exact rational
arithmetic, a NumPy loop); see :mod:`npukit.teach.core`. npukit's own
implementations (:mod:`npukit.quant`) and this module are off limits while the
learner's function runs.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from .core import CheckFailed, _rng, learner_call

__all__ = [
    "check_quantize",
    "check_requantize",
    "check_channel_scales",
    "check_calibration_prediction",
]

_RANGES = {"uint8": (0, 255), "int8": (-128, 127), "uint4": (0, 15), "int4": (-8, 7)}


def _forbidden() -> list:
    from .. import quant

    return [quant.quantize, quant.dequantize, quant.fake_quantize, quant.requantize, quant.QParams,
            quant.choose_qparams, quant.Observer, quant.quantize_multiplier, sys.modules[__name__]]


def _onnx_quantize(x: np.ndarray, scale: float, zero_point: int, dtype: str) -> np.ndarray:
    """QuantizeLinear-21 under onnx.reference, as int64 values."""
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    t = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8, "uint4": TensorProto.UINT4, "int4": TensorProto.INT4}[dtype]
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", t, None)],
                              [numpy_helper.from_array(np.float32(scale), "s"), helper.make_tensor("z", t, [], [zero_point])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.int64)


def _reference_quantizer() -> Any:
    """The reference evaluator's QuantizeLinear: the checker's reference, so off limits too."""
    from onnx.reference.ops.op_quantize_linear import _CommonQuantizeLinear

    return _CommonQuantizeLinear


def _first_wrong(got: np.ndarray, want: np.ndarray) -> tuple[tuple, Any, Any]:
    i = tuple(int(v) for v in np.argwhere(got != want)[0])
    return i, want[i], got[i]


def _values(name: str, got: Any, shape: tuple) -> np.ndarray:
    if not isinstance(got, np.ndarray):
        raise CheckFailed(f"{name}: return a NumPy array, got {type(got).__name__}")
    if got.shape != shape:
        raise CheckFailed(f"{name}: the result must have the input's shape {shape}, got {got.shape}")
    if got.dtype.kind not in "iu":
        raise CheckFailed(f"{name}: the result must be an integer array (e.g. np.uint8), got {got.dtype}")
    return got.astype(np.int64)


def check_quantize(fn: Callable[[np.ndarray, float, int, str], np.ndarray]) -> None:
    """Check ``fn(x, scale, zero_point, dtype)`` is ONNX QuantizeLinear (per tensor).

    Fresh cases: 24 float32 arrays of 40–200 values with scales from 1e-3 to
    10, zero points anywhere in the type's range (odd and even), dtypes
    uint8, int8, uint4 and int4, a third of the values placed exactly on
    half-way points and some far outside the range. Reference: ONNX's
    reference evaluator. The answer must be an integer array of the input's
    shape with the right values (any integer dtype). A wrong value is
    reported with its position, the expected and the returned value and a
    hint naming the usual mistake.

    Examples
    --------
    >>> from npukit.quant import quantize
    >>> check_quantize(lambda x, s, z, t: quantize(x, s, z, t))
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: quantize: your function called npukit.quant.quantize. ...
    """
    rng = _rng(6101)
    dtypes = ("uint8", "int8", "uint4", "int4")
    cases = []
    for k in range(24):
        dtype = dtypes[k % 4]
        lo, hi = _RANGES[dtype]
        scale = float(np.float32(10 ** rng.uniform(-3, 1)))
        zp = int(rng.integers(lo, hi + 1))
        n = int(rng.integers(40, 201))
        x = rng.uniform(lo - zp - 8, hi - zp + 8, n) * scale
        ties = rng.random(n) < 0.35
        x = np.where(ties, (np.floor(x / scale) + 0.5) * scale, x).astype(np.float32)
        cases.append((x, scale, zp, dtype))
    for x, scale, zp, dtype in cases:
        want = _onnx_quantize(x, scale, zp, dtype)
        got = _values("quantize", learner_call("quantize", fn, x.copy(), scale, zp, dtype,
                                               forbid=_forbidden() + [_reference_quantizer()]), x.shape)
        if not np.array_equal(got, want):
            i, w, g = _first_wrong(got, want)
            r = float(np.float32(x[i]) / np.float32(scale))
            lo, hi = _RANGES[dtype]
            xi, s32 = np.float32(x[i]), np.float32(scale)
            guesses = {  # what common mistakes return for this element
                "wrap": int(np.rint(xi / s32) + zp) if not lo <= np.rint(xi / s32) + zp <= hi else None,
                "recip": int(np.clip(np.rint(xi * (np.float32(1) / s32)) + zp, lo, hi)),
            }
            if guesses["wrap"] is not None:
                hint = f"x/scale + zero_point = {r + zp:.2f} is outside [{lo}, {hi}]: clamp (saturate), do not wrap"
            elif abs(r % 1 - 0.5) < 1e-6:
                hint = (f"x/scale = {r} is a tie: round half to even (np.rint), and add the zero point after "
                        "rounding, not before (round(2.5) + 1 = 3, but round(3.5) = 4)")
            elif g == guesses["recip"]:
                hint = "divide by the float32 scale (x / np.float32(scale)); multiplying by 1/scale rounds differently"
            else:
                hint = "q = clip(rint(x / scale) + zero_point, qmin, qmax)"
            raise CheckFailed(f"quantize: wrong value for dtype={dtype!r}, scale={scale!r}, zero_point={zp}: at index "
                              f"{i[0]}, x = {x[i]!r}: expected {w}, got {g}. Hint: {hint}.")
    print(f"✓ quantize: {len(cases)} fresh cases agree with ONNX's reference QuantizeLinear.")


def _exact_requantize(acc: int, m0: int, shift: int, zp: int, lo: int, hi: int) -> int:
    """round_half_even(acc·m0 / 2^(31+shift) + zp), clamped: exact rational arithmetic."""
    v = Fraction(acc * m0, 2 ** (31 + shift)) + zp
    return min(max(round(v), lo), hi)          # Python's round of a Fraction: half to even


def check_requantize(fn: Callable[[np.ndarray, int, int, int, str], np.ndarray]) -> None:
    """Check ``fn(acc, m0, shift, zero_point, dtype)`` requantizes int32 accumulators.

    The answer must be ``clamp(round(acc·m0·2^−(31+shift) + zero_point))``,
    rounding once, half to even, as ONNX's QLinearConv and QLinearMatMul do.
    Fresh cases: 16 arrays of 64 accumulators in ±2^20 with multipliers
    ``m0`` in [2^30, 2^31) (some with few significant bits, so that exact
    ties occur), shifts 0–16, uint8 and int8 outputs. Reference: exact
    rational arithmetic (``fractions.Fraction``).

    Examples
    --------
    >>> check_requantize(lambda acc, m0, shift, zp, dtype: acc)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: requantize: wrong value ...
    """
    rng = _rng(6102)
    cases = []
    for k in range(16):
        dtype = ("uint8", "int8")[k % 2]
        lo, hi = _RANGES[dtype]
        m0 = int(rng.integers(2**30, 2**31)) if k % 3 else 2**30     # M0 = 1/2 exactly: ties are common
        shift = int(rng.integers(0, 17))
        zp = int(rng.integers(lo, hi + 1))
        acc = rng.integers(-2**20, 2**20, 64).astype(np.int32)
        if m0 == 2**30:                                                 # acc / 2^(shift+1) = j + 1/2
            acc[:16] = (2 * rng.integers(-40, 40, 16) + 1) * 2**shift
        cases.append((acc, m0, shift, zp, dtype))
    for acc, m0, shift, zp, dtype in cases:
        lo, hi = _RANGES[dtype]
        want = np.array([_exact_requantize(int(a), m0, shift, zp, lo, hi) for a in acc])
        got = _values("requantize", learner_call("requantize", fn, acc.copy(), m0, shift, zp, dtype,
                                                  forbid=_forbidden()), acc.shape)
        if not np.array_equal(got, want):
            i, w, g = _first_wrong(got, want)
            exact = Fraction(int(acc[i]) * m0, 2 ** (31 + shift))
            hint = ("the exact value is a tie: round half to even after adding the zero point"
                    if exact.denominator == 2 else "compute acc·m0 in int64 (or Python int) and divide by 2**(31 + shift)")
            raise CheckFailed(f"requantize: wrong value for m0={m0}, shift={shift}, zero_point={zp}, dtype={dtype!r}: "
                              f"acc[{i[0]}] = {int(acc[i])} (acc·M = {float(exact):.6f}): expected {w}, got {g}. "
                              f"Hint: {hint}.")
    print(f"✓ requantize: {len(cases)} fresh cases agree with exact rational arithmetic.")


def check_channel_scales(fn: Callable[[np.ndarray], np.ndarray]) -> None:
    """Check ``fn(w)`` returns symmetric int8 scales, one per output channel (axis 0).

    ``scale[c] = max|w[c]| / 127``, and 1.0 for a channel that is all zeros
    (any positive scale quantizes zeros exactly; a zero scale would divide
    by zero). Fresh cases: 10 float32 weight tensors of 2–4 dimensions with
    1–16 channels whose ranges differ by up to 10^4, some with an all-zero
    channel. Reference: a loop over channels in NumPy.

    Examples
    --------
    >>> check_channel_scales(lambda w: np.ones(len(w)))
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: channel scales: wrong scale ...
    """
    rng = _rng(6103)
    cases = []
    for k in range(10):
        shape = (int(rng.integers(1, 17)),) + tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4))))
        w = rng.standard_normal(shape) * (10.0 ** rng.uniform(-3, 1, size=(shape[0],) + (1,) * (len(shape) - 1)))
        if k % 3 == 0:
            w[int(rng.integers(0, shape[0]))] = 0
        cases.append(w.astype(np.float32))
    for w in cases:
        want = np.array([np.abs(w[c]).max() / 127 if np.abs(w[c]).max() > 0 else 1.0 for c in range(len(w))])
        got = learner_call("channel scales", fn, w.copy(), forbid=_forbidden())
        got = np.asarray(got, dtype=np.float64) if isinstance(got, (np.ndarray, list, tuple)) else got
        if not isinstance(got, np.ndarray) or got.shape != (len(w),):
            raise CheckFailed(f"channel scales: for w of shape {w.shape} return {len(w)} scales (one per output "
                              f"channel, axis 0), got {got if not isinstance(got, np.ndarray) else got.shape}")
        bad = np.flatnonzero(~np.isclose(got, want, rtol=1e-5, atol=0))
        if len(bad):
            c = int(bad[0])
            hint = ("this channel is all zeros: return a positive scale such as 1.0" if want[c] == 1.0 and not w[c].any()
                    else "take the largest |w| over every axis but 0, then divide by 127")
            raise CheckFailed(f"channel scales: wrong scale for w of shape {w.shape}, channel {c} "
                              f"(max|w| = {np.abs(w[c]).max():.6g}): expected {want[c]:.6g}, got {got[c]:.6g}. Hint: {hint}.")
    print(f"✓ channel scales: {len(cases)} fresh cases agree with the reference.")


def check_calibration_prediction(predicted_drop: Any, measured_drop: float, *, tolerance: float = 0.05) -> None:
    """Compare a predicted accuracy drop (a fraction, e.g. 0.1 for ten points) with the measured one.

    Raises
    ------
    CheckFailed
        If the prediction is missing, not a number, or off by more than ``tolerance``.

    Examples
    --------
    >>> check_calibration_prediction(0.12, 0.15)
    ✓ prediction: you predicted a drop of 12.0 points; the run measured 15.0.
    """
    if predicted_drop is None or predicted_drop is ...:
        from .core import NotAttempted

        raise NotAttempted("prediction: not attempted yet (set predicted_drop to a number first).")
    if isinstance(predicted_drop, bool) or not isinstance(predicted_drop, (int, float, np.floating)):
        raise CheckFailed(f"prediction: predicted_drop must be a number (a fraction such as 0.1), got {predicted_drop!r}")
    p, m = float(predicted_drop), float(measured_drop)
    if p > 1:
        raise CheckFailed(f"prediction: write the drop as a fraction (0.1 for ten points), got {p}")
    if abs(p - m) > tolerance:
        why = ("the drop is larger than you expected: the night set's input range ends well below the brightest "
               "held-out pixels, and everything above it is clipped at the very first layer" if m > p else
               "the drop is smaller than you expected: a range that is too wide only coarsens the step; "
               "only a range that is too narrow clips")
        raise CheckFailed(f"prediction: you predicted a drop of {100 * p:.1f} points; the run measured "
                          f"{100 * m:.1f}. {why}.")
    print(f"✓ prediction: you predicted a drop of {100 * p:.1f} points; the run measured {100 * m:.1f}.")
