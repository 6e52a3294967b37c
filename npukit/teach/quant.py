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

import math
import sys
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from .. import _check
from .core import CheckFailed, _rng, around, learner_call

__all__ = [
    "check_quantize",
    "check_requantize",
    "check_channel_scales",
    "check_calibration_prediction",
    "check_my_values",
]

_RANGES = {"uint8": (0, 255), "int8": (-128, 127), "uint4": (0, 15), "int4": (-8, 7)}
_CALLS: dict[str, int] = {}


def _fresh(name: str, seed: int) -> np.random.Generator:
    """A generator for this checker's ``k``-th call in this session: new cases every call."""
    k = _CALLS.get(name, 0)
    _CALLS[name] = k + 1
    return _rng(seed + 7919 * k)


def _forbidden() -> list:
    """npukit's implementations, this module, and the runtimes and references that would compute the answer.

    All of ``onnx.reference`` (its evaluator and every operator class, such
    as ``QLinearMatMul._run``), ONNX Runtime's Python front end and its C
    extension (``onnxruntime.capi``: a session built from
    ``_pybind_state.InferenceSession`` and its ``run``), and OpenVINO's
    ``Core``, ``CompiledModel`` and ``InferRequest``, both the Python
    wrappers and the C-level classes under them (``openvino._pyopenvino``).
    """
    import onnx.reference.ops._op_list  # noqa: F401  (loads every operator module, so each is forbidden)
    import onnxruntime.capi.onnxruntime_pybind11_state as ort_c
    import openvino
    import openvino._pyopenvino as ov_c
    from onnxruntime.capi.onnxruntime_inference_collection import InferenceSession, Session

    from .. import ptq, qarith, quant

    reference = [m for k, m in sorted(dict(sys.modules).items()) if m is not None and k.startswith("onnx.reference")]
    return [quant, qarith, ptq, sys.modules[__name__], *reference, ort_c, Session, InferenceSession,
            openvino.Core, openvino.CompiledModel, openvino.InferRequest, ov_c.Core, ov_c.CompiledModel,
            ov_c.InferRequest]


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
    """QuantizeLinear-21 under onnx.reference, as int64 values, saturated as the operator's text says.

    onnx.reference casts ``rint(x / scale)`` to int32 *before* it saturates,
    so where ``|x / scale| ≥ 2**31`` it returns what the cast made of the
    value, not the type's limit. The operator's text ("saturate"), ONNX
    Runtime and OpenVINO give the limit; there the expected value is the
    limit on the side of ``x``'s sign.
    """
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    t = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8, "uint4": TensorProto.UINT4, "int4": TensorProto.INT4}[dtype]
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", t, None)],
                              [numpy_helper.from_array(np.float32(scale), "s"), helper.make_tensor("z", t, [], [zero_point])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with np.errstate(invalid="ignore"):             # its cast of the values past int32 (replaced below)
        q = ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.int64)
    lo, hi = _RANGES[dtype]
    beyond = np.abs(x.astype(np.float64) / np.float64(np.float32(scale))) >= 2**31
    return np.where(beyond, np.where(x > 0, hi, lo), q)


def _quantize_cases(rng: np.random.Generator) -> list[tuple]:
    """24 cases: every dtype with odd and even zero points, a third of the values on ties, some far out.

    The first two values lie 200 steps outside the range; the last two are
    10**19.5 to 10**30 steps out, past what an int64 holds (2**63 ≈ 9.2e18),
    so a cast to a fixed-width integer before the saturation fails there.
    """
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
        x[-2:] = np.float32(10 ** rng.uniform(19.5, 30, 2) * scale * np.array([1, -1]))   # past int64
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
            (int(np.clip(np.rint(r).astype(np.int64) + zp, lo, hi)),     # before "wrap": both explain a huge value
             f"x/scale = {float(r):.3g} does not fit in an int64 (nor an int32): saturate the float values, then "
             "cast (np.clip before .astype)"),
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
    and some far outside the range, two of them past 2**63 steps.
    Reference: ONNX's reference evaluator, and the operator's saturation
    where that evaluator does not saturate (past 2**31 steps, see
    :func:`_onnx_quantize`).
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
    print(f"✓ quantize: {len(cases)} fresh cases agree with ONNX's QuantizeLinear (its reference evaluator, "
          "saturated past int32 as the operator's text says), far-out values included.")


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


def _exact_text(v: Fraction) -> str:
    """``v`` to six decimals, or as a half-way point plus or minus a little when it lies that close to one."""
    off = v - (v.__floor__() + Fraction(1, 2))                      # from the half-way point k + 1/2 above floor(v)
    if off == 0 or abs(off) >= Fraction(1, 10**6):
        return f"{float(v):.6f}"
    return f"{float(v - off):.1f} {'+' if off > 0 else '−'} {float(abs(off)):.2g}"


def _float64_trap(rng: np.random.Generator) -> tuple[int, int, int, int]:
    """``(acc, m0, shift, j)``: acc·m0 just off the tie (2j + 1)·2^(30 + shift), by less than half a float64 step.

    The product then needs 62 bits, and float64 (53 significand bits) rounds
    it onto the half-way point v = j + 1/2, which goes to the even neighbour:
    the other one than exact arithmetic gives when the product lies on that
    side of the tie. Such pairs are rare (about one in six million), so
    ``m0`` is searched in batches; shifts 23–25 put the tie in [2^61, 2^62)
    (float64 steps of 512) with ``acc`` in int32 and |j| ≤ 254.
    """
    while True:
        shift = int(rng.integers(23, 26))
        n = 31 + shift
        odd = rng.integers(2 ** (31 - shift), min(2 ** (32 - shift), 510), 32) | 1                 # 2|j| + 1
        sign = rng.choice([-1, 1], 32)
        tie = (odd << np.int64(n - 1))[:, None]                                                   # exact in int64
        m0 = rng.integers(2**30, 2**31, 200_000)
        acc = np.rint(tie / m0.astype(np.float64)).astype(np.int64)
        d = acc * m0 - tie                                                                         # exact: < 2^63
        j_even = ((sign * odd) >> 1)[:, None] % 2 == 0
        # float64 gives the tie (|d| < 256) and rounds it to even: wrong when the exact value is on the other side
        hit = (d != 0) & (np.abs(d) < 256) & (acc < 2**31) & ((sign[:, None] * d > 0) == j_even)
        rows, cols = np.nonzero(hit)
        if len(rows):
            i, k = int(rows[0]), int(cols[0])
            return int(sign[i] * acc[i, k]), int(m0[k]), shift, int((sign[i] * odd[i]) >> 1)


def _requantize_cases(rng: np.random.Generator) -> list[tuple]:
    """18 cases: random sums, exact ties (M0 = 2^30), double-rounding traps, saturation, odd and even zero points,
    and 2 with large accumulators and shifts 23–25, whose products need 62 bits (float64 has 53)."""
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
    for k in range(2):                                                       # float64 is not exact here
        dtype = ("uint8", "int8")[k % 2]
        lo, hi = _RANGES[dtype]
        trap, m0, shift, j = _float64_trap(rng)
        zp = int(rng.integers(max(lo, lo - j), min(hi, hi - j - 1) + 1))    # round(j + 1/2) + zp stays in range
        top = (hi - lo) * 2 ** (31 + shift) // m0                            # |acc·M| up to the type's span
        acc = rng.integers(-min(top, 2**31 - 1), min(top, 2**31 - 1), 64)
        acc[0], acc[-2:] = trap, (2**31 - 1, -2**31)
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
    f64 = float(np.float64(acc) * np.float64(m0)) / 2.0 ** (31 + shift)   # the product rounded to 53 bits
    bits = abs(acc * m0).bit_length()
    wide = (f"float64 keeps 53 significand bits and acc·m0 = {acc * m0} needs {bits}: rounded, it lands on a "
            "half-way point. Compute acc·m0 exactly (np.int64, or Python int) and round the quotient yourself")
    mistakes = [
        (clamp(np.rint(f64) + zp), wide),
        (clamp(np.rint(f64 + zp)), wide),
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
                              f"acc[{i}] = {a} (acc·M = {_exact_text(Fraction(a * m0, 2 ** (31 + shift)))}): "
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


#: Lab 6's biased calibration sets: 256 dim images, brightness (b, b + 0.2) instead of (0.6, 1.3), on every kind
#: of background (chapter 6 measures night images on dark backgrounds and dim ones on light backgrounds).
_DIM_WIDTH = 0.2
#: The set the lab measures itself: brightness 0.2–0.4, ``shapes_dataset(256, seed=7, ...)``.
_LAB_SET = (0.2, 7)
_DROP: dict[tuple, tuple[float, float]] = {}

#: What a prediction may use: its argument, numbers, ``math``, NumPy's arithmetic, and plain Python.
_NUMPY_NAMES = frozenset({
    "abs", "absolute", "arange", "arctan", "array", "asarray", "ceil", "clip", "cos", "cosh", "cumsum", "diff", "dot",
    "e", "exp", "exp2", "expm1", "float32", "float64", "floor", "hypot", "inf", "interp", "isfinite", "linspace",
    "log", "log10", "log1p", "log2", "maximum", "mean", "minimum", "pi", "polyfit", "polyval", "power", "prod",
    "rint", "round", "searchsorted", "sign", "sin", "sinh", "sqrt", "square", "sum", "tanh", "where"})
_BUILTIN_NAMES = ("abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float", "int", "isinstance",
                  "len", "list", "map", "max", "min", "pow", "print", "range", "reversed", "round", "sorted", "sum",
                  "tuple", "zip", "ValueError", "NotImplementedError")
_METHOD_NAMES = frozenset({"append", "item", "items", "keys", "values", "tolist"})


def _allowed_names() -> frozenset:
    import math

    return (_NUMPY_NAMES | _METHOD_NAMES | frozenset(_BUILTIN_NAMES) | {"np", "math"}
            | {k for k in vars(math) if not k.startswith("_")})


def _names_used(code: Any) -> set[str]:
    """Every global and attribute name ``code`` reads, its nested functions' and comprehensions' included."""
    import types

    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_used(const)
    return names


def _imports(code: Any) -> bool:
    """True if ``code`` (or a function or comprehension inside it) imports a module."""
    import dis
    import types

    return any(i.opname in ("IMPORT_NAME", "IMPORT_FROM") for i in dis.get_instructions(code)) or any(
        _imports(c) for c in code.co_consts if isinstance(c, types.CodeType))


def _pure(fn: Callable[[float], Any]) -> Callable[[float], Any]:
    """``fn`` as a function of its argument only: a prediction may not read the notebook (or the measurement).

    The function must be a plain ``def`` (no closure, no default values)
    whose code reads no name but its arguments, ``np``, ``math`` and the
    arithmetic in the lists above; it then runs with only those in reach.
    Graded, this runs in the learner's process, on the learner's own
    function (:func:`_pure_call`, through ``core.around``), so the
    notebook's ``images`` or ``folded`` are out of reach there too.
    """
    import builtins
    import math
    import types

    if not isinstance(fn, types.FunctionType) or fn.__closure__ or fn.__defaults__ or fn.__kwdefaults__:
        raise CheckFailed("prediction: write my_prediction as a plain function of `clipped` (def my_prediction"
                          "(clipped): ..., no default values, nothing from around it) that returns your number")
    if _imports(fn.__code__):
        raise CheckFailed("prediction: my_prediction may not import anything: use np and math as they are (the "
                          "check provides both); predict from the share clipped")
    other = sorted(_names_used(fn.__code__) - _allowed_names())
    if other:
        raise CheckFailed(f"prediction: my_prediction may use only its argument, numbers, math, NumPy's arithmetic "
                          f"(np.exp, np.interp …) and plain Python; it uses {', '.join(other)}. Predict from the "
                          "share clipped, not from the notebook's variables or modules")
    safe = {k: getattr(builtins, k) for k in _BUILTIN_NAMES}
    return types.FunctionType(fn.__code__, {"__builtins__": safe, "np": np, "math": math}, fn.__name__)


def _pure_call(fn: Callable[[float], Any], clipped: float) -> Any:
    """``fn(clipped)`` with only its argument, ``np`` and ``math`` in reach (:func:`_pure`), where ``fn`` lives."""
    return _pure(fn)(clipped)


#: The brightness ranges the two fresh sets' ``b`` is drawn from: one darker than the lab's set (a drop of about
#: 10–16 points), one lighter (about 3–5). Both drops are above the check's 2-point floor, so "predict 0" and a step
#: at the lab's share fail on every draw; still lighter sets (``b`` from 0.3) cost 0–2 points, within that floor of
#: 0, and would test nothing (review 6b, finding 2).
_FRESH_B = ((0.14, 0.17), (0.24, 0.27))


def _prediction_sets(rng: np.random.Generator) -> list[tuple[float, int]]:
    """The lab's set, then one darker and one lighter dim set drawn from ``rng``: (b, seed) each."""
    return [_LAB_SET, *((round(float(rng.uniform(lo, hi)), 3), int(rng.integers(100, 100_000)))
                        for lo, hi in _FRESH_B)]


def _measure(b: float, seed: int, n_images: int) -> tuple[float, float]:
    """(share of held-out pixels above the input range, accuracy drop) for the dim set (b, seed), run by OpenVINO.

    CameraNet (BatchNorm folded) quantized with a percentile observer on 256
    representative images (``seed=7``) or on 256 dim ones, in INT8 on the
    first ``n_images`` of the held-out draw (``shapes_dataset(2000,
    seed=HELDOUT_SEED)``); the drop is the first accuracy minus the second.
    """
    key = (b, seed, n_images)
    if key not in _DROP:
        import openvino as ov

        from .. import ptq, rewrites
        from ..data import shapes_dataset
        from ..models import CameraNet
        from ..train import HELDOUT_SEED

        folded = rewrites.fold_batchnorm(CameraNet.pretrained().to_onnx())
        images, truth = (a[:n_images] for a in shapes_dataset(2000, seed=HELDOUT_SEED))
        core = ov.Core()

        def accuracy(calibration: np.ndarray) -> float:
            qdq = ptq.to_qdq(folded, calibration, method="percentile", percentile=99.99)
            model = core.read_model(qdq.SerializeToString(), b"")
            model.reshape({"image": [len(images), 3, 32, 32]})
            compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
            return float((compiled(images)[0].argmax(1) == truth).mean())

        if ("rep", n_images) not in _DROP:
            _DROP["rep", n_images] = (0.0, accuracy(shapes_dataset(256, seed=7)[0]))
        dim = shapes_dataset(256, seed=seed, brightness=(b, b + _DIM_WIDTH))[0]
        top = float(ptq.calibrate(folded, dim, method="percentile")["image"].scale) * 255
        _DROP[key] = (float(np.mean(images > top)), _DROP["rep", n_images][1] - accuracy(dim))
    return _DROP[key]


def check_calibration_prediction(fn: Callable[[float], Any], measured_drop: float, *, n_images: int = 1000,
                                 atol: float = 0.02, rtol: float = 0.35) -> None:
    """Compare ``fn(clipped)``, a predicted accuracy drop (a fraction), with the drops this check measures.

    ``clipped`` is the share of held-out pixels above the top of the input
    range that a calibration set gives (percentile observer). The check
    measures three of lab 6's dim calibration sets, each against a
    representative one (:func:`_measure`): the lab's own (brightness
    0.2–0.4, whose drop the lab measured as ``measured_drop``), and two drawn
    fresh on every call (from the grading seed when grading), one darker
    and one lighter (``b`` from the ranges ``_FRESH_B``), both where the
    drop is several points, so neither a single number nor "no cost below
    some share" passes. A prediction passes within
    ``max(atol, rtol × measured)`` of each. ``fn`` may read nothing but its argument (:func:`_pure`).

    Raises
    ------
    NotAttempted
        If ``fn`` still raises ``NotImplementedError``.
    CheckFailed
        If ``fn`` is not a plain function of its argument, returns
        something that is not a fraction, ``measured_drop`` is not the
        measurement, or a prediction is off by more than the tolerance.
    TypeError, ValueError
        If ``fn`` is not callable, or ``measured_drop``, ``n_images``,
        ``atol`` or ``rtol`` is not a number in range.

    Examples
    --------
    >>> check_calibration_prediction(lambda clipped: 0.1, 0.5)   # not the lab's measurement
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: prediction: measured_drop = 0.5000 is not what this experiment measures; re-run the measurement cell as it is
    """
    if not callable(fn):
        raise TypeError(f"fn must be your function my_prediction (returning a fraction), got {type(fn).__name__}")
    measured_drop = _check.real(measured_drop, "measured_drop")
    n_images = _check.integer(n_images, "n_images", minimum=1)
    if n_images > 2000:
        raise ValueError(f"n_images must be at most 2000 (the held-out draw), got {n_images}")
    atol, rtol = _check.fraction(atol, "atol"), _check.positive(rtol, "rtol")
    sets = _prediction_sets(_fresh("prediction", 6104))
    from .isolation import Remote

    if not isinstance(fn, Remote):   # a wrong form is refused before the measurement runs
        _pure(fn)

    def predict(clipped: float) -> Any:   # graded, the rebuilt function runs in the learner's process
        return around(_pure_call, fn, clipped)

    measured = []
    for k, (b, seed) in enumerate(sets):
        clipped, drop = _measure(b, seed, n_images)
        if k == 0 and not np.isclose(float(measured_drop), drop, rtol=0, atol=1e-9):
            raise CheckFailed(f"prediction: measured_drop = {float(measured_drop):.4f} is not what this experiment "
                              "measures; re-run the measurement cell as it is")
        p = learner_call("prediction", predict, clipped, forbid=_prediction_forbidden())
        if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) or not np.isfinite(p):
            raise CheckFailed(f"prediction: return a number (a fraction such as 0.1), got {p!r} for clipped = "
                              f"{clipped:.3f}")
        p = float(p)
        if not 0 <= p <= 1:
            raise CheckFailed(f"prediction: write the drop as a fraction between 0 and 1 (0.1 for ten points), got "
                              f"{p} for clipped = {clipped:.3f}")
        what = ("the lab's dim set (brightness 0.2–0.4)" if k == 0 else
                f"a dim set of brightness {b:.2f}–{b + _DIM_WIDTH:.2f} (seed {seed})")
        if abs(p - drop) > max(atol, rtol * abs(drop)):
            why = ("larger than you expected: the range ends well below the bright held-out pixels, and every one "
                   "above it is clipped at the very first layer; the cost grows much faster than the share clipped"
                   if drop > p else
                   "smaller than you expected: a range that clips a small share of the pixels, by a little, costs "
                   "almost nothing; the cost grows much faster than the share clipped")
            raise CheckFailed(f"prediction: for {what}, whose input range leaves {clipped:.1%} of the held-out "
                              f"pixels above it, you predicted a drop of {100 * p:.1f} points; the run measured "
                              f"{100 * drop:.1f}. The drop is {why}.")
        measured.append(f"{clipped:.0%} clipped: {100 * p:.1f} predicted, {100 * drop:.1f} measured")
    print(f"✓ prediction: accuracy drop in points, for three dim calibration sets: {'; '.join(measured)}.")


def _prediction_forbidden() -> list:
    """What a prediction may not run: the experiment itself (quantization, the data, the network, the runtimes)."""
    from .. import data, models, rewrites, train

    return [*_forbidden(), data, models, rewrites, train]


# ---- exercise 5: your own values, by hand (a per-student variant) ----------------------------------------


def _onnx_dequantize(q: np.ndarray, scale: float, zero_point: int, dtype: str) -> np.ndarray:
    """DequantizeLinear-21 under onnx.reference, as float32 values."""
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    t = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8}[dtype]
    node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])
    graph = helper.make_graph([node], "dq", [helper.make_tensor_value_info("q", t, list(q.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.float32(scale), "s"), helper.make_tensor("z", t, [], [zero_point])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return ReferenceEvaluator(model).run(None, {"q": q.astype(dtype)})[0]


def _by_hand_mistakes(x: np.float32, scale: float, zp: int, dtype: str) -> list[tuple[int, str]]:
    """What each usual mistake gives for one value, with a hint that names the mistake, not the right code."""
    lo, hi = _RANGES[dtype]
    r = float(x / np.float32(scale))
    half_up = math.floor(r + 0.5)
    away = int(math.copysign(math.floor(abs(r) + 0.5), r))
    return [
        (int(np.clip(np.rint(r + zp), lo, hi)),
         "Add the zero point after rounding x/scale, not before: with an odd zero point, rounding x/scale + "
         "zero_point sends a half-way value to the other neighbour."),
        (int(np.clip(half_up + zp, lo, hi)), "Round half to even (as np.rint does), not half up."),
        (int(np.clip(away + zp, lo, hi)), "Round half to even (as np.rint does), not half away from zero."),
        (int(np.clip(math.trunc(r) + zp, lo, hi)), "Round to the nearest integer; do not truncate."),
        (int(np.rint(r) + zp), f"The code must lie in {dtype}'s range [{lo}, {hi}]: saturate."),
        (int((np.rint(r) + zp - lo) % (hi - lo + 1) + lo), f"Saturate to [{lo}, {hi}]; do not wrap around."),
        (int(np.clip(np.rint(r), lo, hi)), "Add the zero point."),
    ]


def check_my_values(q: Any, dequantized: Any, mine: Any) -> None:
    """Check the codes and dequantized values the learner worked out for their own values (lab 6, exercise 5).

    ``mine`` is the lab's :class:`npukit.teach.variants.Variant` for ``"06_quant"``: five values ``x``, a
    ``scale``, an odd ``zero_point`` and a ``dtype`` (uint8 or int8) drawn from the student's id, or chapter 6's
    exercise "Quantize by hand" without one. The checker draws the variant again itself
    (:func:`npukit.teach.variants.variant`, so under a grader the grader's id decides, whatever ``mine``
    holds) and compares ``q`` exactly with ONNX QuantizeLinear under ONNX's reference evaluator, and
    ``dequantized`` with DequantizeLinear of those codes (within 1e-6). A failure names the first wrong
    position and the usual mistake that gives the learner's code there, not the answer. See chapter 6,
    "Quantization" (chapters/06_quant.md).

    Raises
    ------
    NotAttempted
        If an answer is still ``None`` or ``...``.
    CheckFailed
        If an answer is not of the right kind, or wrong.
    TypeError
        If ``mine`` is not a Variant of lab 6.

    Examples
    --------
    >>> import os
    >>> from npukit.teach import variants
    >>> os.environ.pop("NPUKIT_STUDENT", None) and None
    >>> check_my_values([2, 3, 3, 5, 9], [1.0, 1.5, 1.5, 2.5, 4.5], variants.variant("06_quant"))  # q · s
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: your values: your codes are right, but 1.0 is not the dequantized value of code 2. Subtract the zero point first: x ≈ (q − zero_point) · scale.
    """
    from . import variants
    from .core import NotAttempted
    from .tensors import _check_variant

    name = "your values"
    _check_variant(mine, "06_quant", "lab 6")
    v = variants.variant("06_quant", mine.entered)
    if any(a is None or a is Ellipsis for a in (q, dequantized)):
        raise NotAttempted(f"{name}: not attempted yet (set my_q and my_dequantized).")
    x = np.float32(v.numbers["x"])
    scale, zp, dtype = float(v.numbers["scale"]), int(v.numbers["zero_point"]), str(v.numbers["dtype"])
    n = len(x)
    if (not isinstance(q, (list, tuple, np.ndarray)) or len(q) != n
            or any(isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)) for c in q)):
        raise CheckFailed(f"{name}: my_q must be a list of {n} whole numbers (the codes), got {q!r}")
    if (not isinstance(dequantized, (list, tuple, np.ndarray)) or len(dequantized) != n
            or any(isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, float, np.integer, np.floating))
                   for d in dequantized)):
        raise CheckFailed(f"{name}: my_dequantized must be a list of {n} numbers, got {dequantized!r}")
    codes = [int(c) for c in q]
    want = _onnx_quantize(x, scale, zp, dtype)
    for i in range(n):
        if codes[i] != int(want[i]):
            hints = [h for value, h in _by_hand_mistakes(x[i], scale, zp, dtype)
                     if value == codes[i] and value != int(want[i])]
            hint = " Or: ".join(dict.fromkeys(hints)) or "q = saturate(round_half_even(x / scale) + zero_point)."
            raise CheckFailed(f"{name}: the code of x[{i}] = {v.numbers['x'][i]!r} is not {codes[i]}. {hint}")
    back = _onnx_dequantize(np.asarray(want), scale, zp, dtype)
    for i in range(n):
        d = float(dequantized[i])
        if not np.isclose(d, float(back[i]), rtol=1e-6, atol=1e-6):
            hint = (" Subtract the zero point first: x ≈ (q − zero_point) · scale." if np.isclose(
                d, codes[i] * scale) or np.isclose(d, (codes[i] + zp) * scale) else
                " Dequantize the code: (q − zero_point) · scale, not x itself." if np.isclose(d, float(x[i])) else
                " x ≈ (q − zero_point) · scale.")
            raise CheckFailed(f"{name}: your codes are right, but {d!r} is not the dequantized value of code "
                              f"{codes[i]}.{hint}")
    who = "the public example" if v.student is None else f"variant {v.tag} of {v.student}"
    print(f"✓ {name}: {dtype}, scale {scale:g}, zero point {zp}: codes {codes}, dequantized "
          f"{[float(b) for b in back]} ({who}).")
