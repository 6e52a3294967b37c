"""Checkers for lab 6, "Quantization" (labs/06_quant.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and compares
it with an independent reference (ONNX's reference evaluator, exact rational
arithmetic, a NumPy loop); see :mod:`npukit.teach.core`. While the learner's
function runs, npukit's own quantization modules (:mod:`npukit.quant`,
:mod:`npukit.qarith`, :mod:`npukit.ptq`), this module, ONNX's reference
evaluator and the Python front ends of ONNX Runtime and OpenVINO are off
limits (:func:`npukit.teach.core.learner_call`).

Every call draws new cases (the first call in a session always draws the same
ones, so a lab's stored output does not change): an answer copied from a
failure message does not help with the next run. A failure names the first
wrong element (its index, the input, the expected and the returned value) and
a hint for the mistake that gives that value; it never shows the whole answer.
The reference is computed only after the learner's function has returned.
"""

from __future__ import annotations

import sys
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from .. import _check
from .core import CheckFailed, _rng, learner_call

__all__ = [
    "check_quantize",
    "check_requantize",
    "check_channel_scales",
    "check_calibration_prediction",
]

_RANGES = {"uint8": (0, 255), "int8": (-128, 127), "uint4": (0, 15), "int4": (-8, 7)}
_CALLS: dict[str, int] = {}


def _fresh(name: str, seed: int) -> np.random.Generator:
    """A generator for this checker's ``k``-th call in this session: new cases every call."""
    k = _CALLS.get(name, 0)
    _CALLS[name] = k + 1
    return _rng(seed + 7919 * k)


def _forbidden() -> list:
    """npukit's implementations, this module, and the runtimes that would compute the answer."""
    import openvino
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.ops.op_quantize_linear import _CommonQuantizeLinear
    from onnxruntime.capi.onnxruntime_inference_collection import InferenceSession, Session

    from .. import ptq, qarith, quant

    return [quant, qarith, ptq, sys.modules[__name__], ReferenceEvaluator, _CommonQuantizeLinear,
            Session, InferenceSession, openvino.CompiledModel, openvino.InferRequest]


def _call(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    return learner_call(name, fn, *(a.copy() if isinstance(a, np.ndarray) else a for a in args), forbid=_forbidden())


def _values(name: str, got: Any, shape: tuple) -> np.ndarray:
    if not isinstance(got, np.ndarray):
        raise CheckFailed(f"{name}: return a NumPy array, got {type(got).__name__}")
    if got.shape != shape:
        raise CheckFailed(f"{name}: the result must have the input's shape {shape}, got {got.shape}")
    if got.dtype.kind not in "iu":
        raise CheckFailed(f"{name}: the result must be an integer array (e.g. np.int16), got {got.dtype}")
    return got.astype(np.int64)


def _hint(mistakes: Callable[[int], list[tuple[Any, str]]], got: np.ndarray, wrong: np.ndarray, default: str) -> str:
    """The hint for the usual mistake that explains the learner's answer.

    ``mistakes(e)`` lists, for element ``e``, what each usual mistake returns
    and its hint. A mistake that gives every wrong element the learner's
    value wins; failing that, the (at most two) that give the first one.
    The hint text is the one for the first wrong element.
    """
    first = mistakes(int(wrong[0]))
    rows = [first] + [mistakes(int(e)) for e in wrong[1:64]]
    whole = [j for j in range(len(first)) if all(r[j][0] == got[int(e)] for r, e in zip(rows, wrong))]
    found = [first[j][1] for j in whole[:1]] or [hint for value, hint in first if value == got[int(wrong[0])]][:2]
    if not found:
        return default
    return found[0] if len(found) == 1 else f"either {found[0]}; or {found[1]}"


# ---- exercise 1: QuantizeLinear ----------------------------------------------------------------


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


def _quantize_cases(rng: np.random.Generator) -> list[tuple]:
    """24 cases: every dtype with odd and even zero points, a third of the values on ties, some far out."""
    cases = []
    for k in range(24):
        dtype = tuple(_RANGES)[k % 4]
        lo, hi = _RANGES[dtype]
        scale = float(np.float32(10 ** rng.uniform(-3, 1)))
        zp = int(rng.integers(lo, hi + 1))
        if zp % 2 != (k // 4) % 2:                     # alternate odd and even zero points
            zp = zp + 1 if zp < hi else zp - 1
        n = int(rng.integers(40, 201))
        x = rng.uniform(lo - zp - 8, hi - zp + 8, n) * scale          # some saturate on each side
        ties = rng.random(n) < 0.35
        x = np.where(ties, (np.floor(x / scale) + 0.5) * scale, x).astype(np.float32)
        x[:2] = np.float32([(lo - zp - 200) * scale, (hi - zp + 200) * scale])   # far outside
        cases.append((x, scale, zp, dtype))
    return cases


def _quantize_mistakes(x: np.float32, scale: float, zp: int, dtype: str) -> list[tuple[Any, str]]:
    """What each usual mistake returns for this element, with its hint."""
    lo, hi = _RANGES[dtype]
    s32 = np.float32(scale)
    r = x / s32
    span = hi - lo + 1
    with np.errstate(invalid="ignore", over="ignore"):
        mistakes = [
            (int(np.clip(np.rint(r + np.float32(zp)), lo, hi)),
             f"round x/scale = {float(r)} first (to {int(np.rint(r))}), then add the zero point: "
             + ("rounding x/scale + zero_point sends a tie to the other neighbour when the zero point is odd"
                if r % 1 == 0.5 else f"in float32, x/scale + zero_point = {float(r + np.float32(zp))} has already "
                "lost the digits that decide the rounding")),
            (int((np.rint(r) + zp - lo) % span + lo) if not lo <= np.rint(r) + zp <= hi else None,
             f"x/scale + zero_point = {float(r) + zp:.1f} is outside [{lo}, {hi}]: saturate (clamp), do not wrap"),
            (int(np.clip(np.floor(r + np.float32(0.5)) + zp, lo, hi)),
             f"x/scale = {float(r)} is a tie: round half to even (np.rint or np.round), not half up"),
            (int(np.clip(np.rint(x * (np.float32(1) / s32)) + zp, lo, hi)),
             "divide by the float32 scale (x / np.float32(scale)); x·(1/scale) rounds twice and lands on the "
             "other side of a half-way point"),
            (int(np.clip(np.rint(np.float64(x) / np.float64(scale)) + zp, lo, hi)),
             "divide in float32 as ONNX does (x / np.float32(scale)); in float64 a value float32 rounds onto a "
             "half-way point is not one"),
            (int(np.clip(np.trunc(r) + zp, lo, hi)), "round to the nearest integer, do not truncate"),
            (int(np.clip(np.rint(r), lo, hi) + zp), "add the zero point before you saturate"),
        ]
    return mistakes


def check_quantize(fn: Callable[[np.ndarray, float, int, str], np.ndarray]) -> None:
    """Check ``fn(x, scale, zero_point, dtype)`` is ONNX QuantizeLinear (per tensor).

    Fresh cases: 24 float32 arrays of 40–200 values with scales from 1e-3 to
    10, odd and even zero points anywhere in the type's range, dtypes uint8,
    int8, uint4 and int4, a third of the values placed on half-way points
    and some far outside the range. Reference: ONNX's reference evaluator.
    The answer must be an integer array of the input's shape (any integer
    dtype). A wrong value is reported with its index, the input, the
    expected and the returned value and a hint naming the usual mistake.

    Examples
    --------
    >>> from npukit.quant import quantize as q
    >>> check_quantize(lambda x, s, z, t: q(x, s, z, t))
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: quantize: your function called npukit.quant.quantize. ...
    """
    cases = _quantize_cases(_fresh("quantize", 6101))
    for x, scale, zp, dtype in cases:
        got = _values("quantize", _call("quantize", fn, x, scale, zp, dtype), x.shape)
        want = _onnx_quantize(x, scale, zp, dtype)
        if not np.array_equal(got, want):
            wrong = np.flatnonzero(got != want)
            i = int(wrong[0])
            hint = _hint(lambda e: _quantize_mistakes(x[e], scale, zp, dtype), got, wrong,
                         "q = clip(rint(x / float32(scale)) + zero_point, qmin, qmax)")
            raise CheckFailed(f"quantize: wrong value for dtype={dtype!r}, scale={scale!r}, zero_point={zp}: at index "
                              f"{i}, x = {x[i]!r}: expected {want[i]}, got {got[i]}. Hint: {hint}.")
    print(f"✓ quantize: {len(cases)} fresh cases agree with ONNX's reference QuantizeLinear.")


# ---- exercise 3: requantize ----------------------------------------------------------------------


#: The two accepted places of the zero point: name → (what the success line says, v ↦ the integer).
_ZP_FORMS = {
    "after": "zero point added after the rounding, as QLinearMatMul's formula says",
    "before": "zero point added before the rounding, as onnx.reference computes",
}


def _exact_requantize(acc: int, m0: int, shift: int, zp: int, lo: int, hi: int, form: str = "after") -> int:
    """round_half_even(acc·m0 / 2^(31+shift)) + zp (or round_half_even(… + zp)), clamped: exact rational arithmetic."""
    v = Fraction(acc * m0, 2 ** (31 + shift))
    q = round(v) + zp if form == "after" else round(v + zp)   # Python's round of a Fraction: half to even
    return min(max(q, lo), hi)


def _double_rounding_traps(rng: np.random.Generator, m0: int, shift: int, n: int) -> np.ndarray:
    """Accumulators whose a·M is just below a half-way point, while round(a·m0/2^31) lands on it."""
    out = []
    for _ in range(50 * n):
        if len(out) == n or shift < 1:
            break
        j = int(rng.integers(-60, 60))
        u = (2 * j + 1) * 2 ** (shift - 1)                   # u / 2^shift = j + 1/2
        a = (2 * u - 1) * 2**30 // m0 + 1                     # a·m0/2^31 just above u − 1/2 …
        if Fraction(a * m0, 2**31) < u and abs(a) < 2**31:    # … and below u: one rounding gives j, two give a tie
            out.append(a)
    return np.array(out, np.int64)


def _requantize_cases(rng: np.random.Generator) -> list[tuple]:
    """16 cases: random sums, exact ties (M0 = 2^30), double-rounding traps, saturation, odd and even zero points."""
    cases = []
    for k in range(16):
        dtype = ("uint8", "int8")[k % 2]
        lo, hi = _RANGES[dtype]
        m0 = 2**30 if k % 4 < 2 else int(rng.integers(2**30, 2**31))    # M0 = 1/2 exactly: ties are common
        shift = int(rng.integers(1, 17))
        zp = int(rng.integers(lo, hi + 1))
        if zp % 2 != (k // 4) % 2:                                           # the tie cases: odd and even
            zp = zp + 1 if zp < hi else zp - 1
        acc = rng.integers(-2**20, 2**20, 64)
        if m0 == 2**30:                                                      # acc·M = acc / 2^(shift+1) = i + 1/2
            acc[:16] = (2 * rng.integers(-40, 40, 16) + 1) * 2**shift
        traps = _double_rounding_traps(rng, m0, shift, 16)
        acc[16:16 + len(traps)] = traps
        acc[-2:] = (2**31 - 1, -2**31)                                       # saturate both ways
        cases.append((acc.astype(np.int32), m0, shift, zp, dtype))
    return cases


def _requantize_mistakes(acc: int, m0: int, shift: int, zp: int, dtype: str, forms: list[str]) -> list[tuple[Any, str]]:
    """What each usual mistake returns for this accumulator, with its hint (``forms``: the places still possible)."""
    lo, hi = _RANGES[dtype]
    exact = Fraction(acc * m0, 2 ** (31 + shift))
    clamp = lambda v: min(max(int(v), lo), hi)  # noqa: E731
    high = (Fraction(acc * m0, 2**31) + Fraction(1, 2)).__floor__()       # a rounding high multiply
    twice = ("round once, exactly: acc·M is just off a half-way point here, and an earlier rounding (of "
             "acc·m0/2^31, or of a float32 product) moved it onto one")
    f32 = float(np.float32(acc) * np.float32(m0 * 2.0 ** (-31 - shift)))
    mistakes = [
        (clamp((exact + Fraction(1, 2)).__floor__() + zp), "a tie rounds to the even integer, not up"),
        (clamp((exact + zp + Fraction(1, 2)).__floor__()), "a tie rounds to the even integer, not up"),
        (clamp(round(Fraction(high, 2**shift)) + zp), twice),
        (clamp(round(Fraction(round(Fraction(acc * m0, 2**31)), 2**shift)) + zp), twice),
        (clamp(np.rint(f32) + zp), "float32 keeps only 24 significand bits: compute acc·m0 exactly in int64"),
        (clamp(round(Fraction(acc * m0, 2**shift)) + zp), "divide by 2**(31 + shift), not 2**shift"),
    ]
    if forms == ["after"]:
        mistakes.insert(0, (clamp(round(exact + zp)), "on an earlier case your function added the zero point "
                            "after rounding, here before it (round(v + zp) differs from round(v) + zp on a tie "
                            "when zp is odd): add it in one place"))
    elif forms == ["before"]:
        mistakes.insert(0, (clamp(round(exact) + zp), "on an earlier case your function added the zero point "
                            "before rounding, here after it (round(v) + zp differs from round(v + zp) on a tie "
                            "when zp is odd): add it in one place"))
    v = round(exact) + zp
    wrapped = ((v - lo) % (hi - lo + 1)) + lo if not lo <= v <= hi else None
    return [(wrapped, f"the value {v} is outside [{lo}, {hi}]: saturate, do not wrap")] + mistakes


def check_requantize(fn: Callable[[np.ndarray, int, int, int, str], np.ndarray]) -> None:
    """Check ``fn(acc, m0, shift, zero_point, dtype)`` requantizes int32 accumulators.

    The answer must round ``v = acc·m0·2^−(31+shift)`` once, exactly, half
    to even, add ``zero_point`` and clamp to the type. Two places of the
    zero point are accepted, because both are in use and neither is wrong:
    after the rounding, ``round(v) + zero_point`` (the formula in the text
    of ONNX's QLinearMatMul, as in QuantizeLinear's, and ONNX Runtime's
    order), or
    before it, ``round(v + zero_point)`` (what ``onnx.reference`` computes,
    and OpenVINO's order). They differ only on exact ties when the zero
    point is odd; the cases hold such ties, and the function must follow the
    same place on every case.
    Fresh cases: 16 arrays of 64 int32 accumulators with multipliers ``m0``
    in [2^30, 2^31) (half of them 2^30, so that exact ties occur in
    uint8 and int8 cases, with odd and even zero points),
    shifts 1–16, odd and even zero points, uint8 and int8 outputs, values
    that saturate, and accumulators on which rounding twice (``acc·m0/2^31``
    first, then the shift) gives a different answer. Reference: exact
    rational arithmetic (``fractions.Fraction``).

    Examples
    --------
    >>> check_requantize(lambda acc, m0, shift, zp, dtype: acc)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: requantize: wrong value ...
    """
    cases = _requantize_cases(_fresh("requantize", 6102))
    forms = list(_ZP_FORMS)
    for acc, m0, shift, zp, dtype in cases:
        got = _values("requantize", _call("requantize", fn, acc, m0, shift, zp, dtype), acc.shape)
        lo, hi = _RANGES[dtype]
        want = {f: np.array([_exact_requantize(int(a), m0, shift, zp, lo, hi, f) for a in acc]) for f in forms}
        still = [f for f in forms if np.array_equal(got, want[f])]
        if not still:
            ref = want[forms[0]]
            wrong = np.flatnonzero(got != ref)
            i = int(wrong[0])
            a = int(acc[i])
            other = [f"{want[f][i]} ({_ZP_FORMS[f].split(',')[0]})" for f in forms[1:] if want[f][i] != ref[i]]
            expected = f"{ref[i]}" + (f" ({_ZP_FORMS[forms[0]].split(',')[0]}) or {other[0]}" if other else "")
            hint = _hint(lambda e: _requantize_mistakes(int(acc[e]), m0, shift, zp, dtype, forms), got, wrong,
                         "compute acc·m0 exactly (np.int64 or Python int: it needs up to 62 bits) and divide by "
                         "2**(31 + shift)")
            raise CheckFailed(f"requantize: wrong value for m0={m0}, shift={shift}, zero_point={zp}, dtype={dtype!r}: "
                              f"acc[{i}] = {a} (acc·M = {float(Fraction(a * m0, 2 ** (31 + shift))):.6f}): "
                              f"expected {expected}, got {got[i]}. Hint: {hint}.")
        forms = still
    print(f"✓ requantize: {len(cases)} fresh cases agree with exact rational arithmetic ({_ZP_FORMS[forms[0]]}).")


# ---- exercise 2: per-channel scales ------------------------------------------------------------


def check_channel_scales(fn: Callable[[np.ndarray], np.ndarray]) -> None:
    """Check ``fn(w)`` returns symmetric int8 scales, one per output channel (axis 0).

    ``scale[c] = max|w[c]| / 127``; for a channel that is all zeros any
    positive, finite scale passes (every positive scale quantizes zeros
    exactly; a zero scale would divide by zero). Fresh cases: 12 float32 weight tensors of 2–4 dimensions with
    1–16 channels whose ranges differ by up to 10^4, channels whose largest
    magnitude is negative, square ones (axis 0 and 1 of the same length)
    and some with an all-zero channel. Reference: a loop over channels in
    NumPy.

    Examples
    --------
    >>> check_channel_scales(lambda w: np.ones(len(w)))
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: channel scales: wrong scale ...
    """
    rng = _fresh("channel scales", 6103)
    cases = []
    for k in range(12):
        shape = (int(rng.integers(2, 17)),) + tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4))))
        if k % 4 == 1:
            shape = (shape[0], shape[0]) + shape[2:]               # a wrong axis gives the right length
        w = rng.standard_normal(shape) * (10.0 ** rng.uniform(-3, 1, size=(shape[0],) + (1,) * (len(shape) - 1)))
        c = int(rng.integers(0, shape[0]))
        w[c] = -np.abs(w[c]) * 2                                     # the largest magnitude is negative
        if k % 3 == 0:
            w[(c + 1) % shape[0]] = 0
        cases.append(w.astype(np.float32))
    for w in cases:
        got = _call("channel scales", fn, w)
        got = np.asarray(got, dtype=np.float64) if isinstance(got, (np.ndarray, list, tuple)) else got
        if not isinstance(got, np.ndarray) or got.shape != (len(w),):
            raise CheckFailed(f"channel scales: for w of shape {w.shape} return {len(w)} scales (one per output "
                              f"channel, axis 0), got {got.shape if isinstance(got, np.ndarray) else type(got).__name__}")
        amaxes = np.array([np.abs(w[c]).max() for c in range(len(w))])
        with np.errstate(invalid="ignore"):
            right = np.where(amaxes > 0, np.isclose(got, amaxes / 127, rtol=1e-5, atol=0),
                             np.isfinite(got) & (got > 0))         # all zeros: any positive scale
        bad = np.flatnonzero(~right)
        if len(bad):
            c = int(bad[0])
            amax = float(np.abs(w[c]).max())
            if amax == 0:
                raise CheckFailed(f"channel scales: wrong scale for w of shape {w.shape}, channel {c}, which is all "
                                  f"zeros: got {got[c]:.6g}. Hint: any positive scale quantizes zeros exactly "
                                  "(1.0, say); zero would divide by zero.")
            if np.isclose(got[c], float(w[c].max()) / 127, rtol=1e-5):
                hint = "take the largest magnitude, np.abs(w[c]).max(): here the extreme weight is negative"
            elif np.isclose(got[c], float(np.abs(w).max()) / 127, rtol=1e-5):
                hint = "that is one scale for the whole tensor; take each channel's own largest |w|"
            else:
                hint = "take the largest |w| over every axis but 0, then divide by 127"
            raise CheckFailed(f"channel scales: wrong scale for w of shape {w.shape}, channel {c} "
                              f"(max|w| = {amax:.6g}): expected {amax / 127:.6g}, got {got[c]:.6g}. Hint: {hint}.")
    print(f"✓ channel scales: {len(cases)} fresh cases agree with the reference.")


# ---- exercise 4: predict, then measure -------------------------------------------------------------


_DROP: dict[int, float] = {}

#: The biased calibration set of lab 6's prediction: dim images (brightness 0.2–0.4) on any background.
#: Chapter 6 measures other sets (night, bright white, dim on a light background), not this one.
_PREDICTION_SET: dict[str, Any] = {"brightness": (0.2, 0.4)}


def _sealed(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` run with nothing of the notebook in reach: a prediction may not read the measurement."""
    import builtins
    import types

    if not isinstance(fn, types.FunctionType):
        return fn   # graded (a Remote): it runs in the learner's process, against the notebook before the measurement
    if fn.__closure__:
        raise CheckFailed("prediction: write my_prediction as a plain function that returns your number")
    sealed = types.FunctionType(fn.__code__, {"__builtins__": builtins, "np": np}, fn.__name__, fn.__defaults__)

    def run() -> Any:
        try:
            return sealed()
        except NameError as e:
            raise CheckFailed(f"prediction: my_prediction must return your own number, not read the notebook's "
                              f"variables ({e}); predict before you measure") from None

    return run


def _measured_drop(n_images: int) -> float:
    """The lab's experiment, run by the checker: INT8 accuracy with representative minus dim calibration."""
    if n_images not in _DROP:
        import openvino as ov

        from .. import ptq, rewrites
        from ..data import shapes_dataset
        from ..models import CameraNet
        from ..train import HELDOUT_SEED

        folded = rewrites.fold_batchnorm(CameraNet.pretrained().to_onnx())
        images, truth = shapes_dataset(n_images, seed=HELDOUT_SEED)
        core, acc = ov.Core(), []
        for kw in ({}, _PREDICTION_SET):
            qdq = ptq.to_qdq(folded, shapes_dataset(256, seed=7, **kw)[0], method="percentile", percentile=99.99)
            model = core.read_model(qdq.SerializeToString(), b"")
            model.reshape({"image": [n_images, 3, 32, 32]})
            compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
            acc.append(float((compiled(images)[0].argmax(1) == truth).mean()))
        _DROP[n_images] = acc[0] - acc[1]
    return _DROP[n_images]


def check_calibration_prediction(fn: Callable[[], Any], measured_drop: float, *, n_images: int = 1000,
                                 tolerance: float = 0.05) -> None:
    """Compare the learner's predicted accuracy drop ``fn()`` (a fraction) with the measured one.

    The experiment is lab 6's: CameraNet quantized with a percentile observer
    on 256 representative images or on 256 dim ones (``brightness=(0.2,
    0.4)`` on any background, a set chapter 6 does not measure), run by
    OpenVINO on ``n_images`` held-out images. The checker runs it itself, so a
    ``measured_drop`` that is not this run's measurement is refused too.

    Raises
    ------
    NotAttempted
        If ``fn`` still raises ``NotImplementedError``.
    CheckFailed
        If the prediction is not a fraction, ``measured_drop`` is not the
        measurement, or the prediction is off by more than ``tolerance``.

    Examples
    --------
    >>> check_calibration_prediction(lambda: 15, 0.147)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: prediction: write the drop as a fraction between 0 and 1 (0.1 for ten points), got 15.0
    """
    if not callable(fn):
        raise TypeError(f"fn must be your function my_prediction (returning a fraction), got {type(fn).__name__}")
    _check.real(measured_drop, "measured_drop")
    n_images = _check.integer(n_images, "n_images", minimum=1, maximum=100_000)  # the experiment runs again on them
    tolerance = _check.positive(tolerance, "tolerance")
    p = learner_call("prediction", _sealed(fn), forbid=_forbidden())
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise CheckFailed(f"prediction: return a number (a fraction such as 0.1), got {p!r}")
    p = float(p)
    if not 0 <= p <= 1:
        raise CheckFailed(f"prediction: write the drop as a fraction between 0 and 1 (0.1 for ten points), got {p}")
    m = _measured_drop(n_images)
    if not np.isclose(float(measured_drop), m, rtol=0, atol=1e-9):
        raise CheckFailed(f"prediction: measured_drop = {float(measured_drop):.4f} is not what this experiment "
                          "measures; re-run the measurement cell as it is")
    if abs(p - m) > tolerance:
        why = ("the drop is larger than you expected: the dim set's input range ends well below the brightest "
               "held-out pixels, and every pixel above it is clipped at the very first layer" if m > p else
               "the drop is smaller than you expected: what costs accuracy is how much of the real data the "
               "calibrated range clips, and by how much; compare this set's share with the night set's in chapter 6")
        raise CheckFailed(f"prediction: you predicted a drop of {100 * p:.1f} points; the run measured "
                          f"{100 * m:.1f}. {why}.")
    print(f"✓ prediction: you predicted a drop of {100 * p:.1f} points; the run measured {100 * m:.1f}.")

