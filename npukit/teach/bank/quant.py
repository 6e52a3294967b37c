"""Questions on chapter 6, "Quantization" (chapters/06_quant.md)."""

from __future__ import annotations

import math

import numpy as np

from .core import choice, fmt, numeric, plural, short

U = "6"


def _q(x, s, z):
    """ONNX QuantizeLinear to uint8: divide in float32, round half to even, add z, saturate."""
    return float(np.clip(np.rint(np.float32(x) / np.float32(s)) + z, 0, 255))


def _near_half(v, eps=1e-3):
    return abs(v - math.floor(v) - 0.5) < eps


def _draw_quantize(rng):
    s = float(rng.choice([0.5, 0.25, 0.125]))        # powers of two: x/s is exact, ties can be asked on purpose
    return dict(x=float(rng.integers(-40, 400)) * s / 2, s=s, z=int(rng.integers(0, 256)))


def _multiplier(m):
    mant, exp = math.frexp(m)                        # m = mant · 2**exp, mant in [0.5, 1)
    m0 = round(mant * 2**31)
    if m0 == 2**31:
        m0, exp = 2**30, exp + 1
    return m0, -exp


def _m_exact(sx, sw, sy):
    """M from the decimal scales, in float64 (exact to 16 digits)."""
    return sx * sw / sy


def _m_float32(sx, sw, sy):
    """M as an ONNX model's float32 scales define it: s_x·s_w, then / s_y, each rounded to float32 (chapter 6)."""
    return float(np.float32(sx) * np.float32(sw) / np.float32(sy))


_M_TEXT = ("M = s_x·s_w/s_y, computed either from the decimal scales as given (in float64) or in float32 from "
           "the float32 scales an ONNX model stores (chapter 6 shows both; either answer is accepted)")


def _zp(lo, hi):
    s = (hi - lo) / 255
    return round(-lo / s)


def _draw_zp(rng):
    while True:
        lo, hi = round(float(rng.uniform(-4, -0.01)), 2), round(float(rng.uniform(0.01, 8)), 2)
        if not _near_half(-lo / ((hi - lo) / 255)):
            return dict(lo=lo, hi=hi)


def _draw_scales(rng):
    while True:        # n is the same whether M is computed in float64 or float32 (no power of two in between)
        p = dict(sx=round(float(rng.uniform(0.005, 0.05)), 4), sw=round(float(rng.uniform(0.001, 0.01)), 4),
                 sy=round(float(rng.uniform(0.02, 0.2)), 3))
        if _multiplier(_m_exact(**p))[1] == _multiplier(_m_float32(**p))[1]:
            return p


def _draw_requant(rng):
    while True:
        p = dict(**_draw_scales(rng), a=int(rng.integers(-20000, 20000)))
        if not _near_half(p["a"] * p["sx"] * p["sw"] / p["sy"]):
            return p


QUESTIONS = [
    numeric(
        "ch6-quantize", U, 1,
        "Quantize x = {x} to uint8 with scale s = {s} and zero point z = {z}, exactly as ONNX QuantizeLinear does. "
        "What is q?",
        dict(x=0.75, s=0.5, z=3),
        _q,
        lambda x, s, z, answer: (f"x/s = {np.float32(x) / np.float32(s):g}; round half to even, then add z = {z}, then "
                                 f"saturate to [0, 255]: q = {fmt(answer)}."),
        _draw_quantize,
        mistakes=[(lambda x, s, z: float(np.clip(np.rint(x / s + z), 0, 255)),
                   "That rounds x/s + z; ONNX rounds x/s first and adds z after (they differ on ties when z is odd)."),
                  (lambda x, s, z: float(np.clip(math.floor(x / s + 0.5) + z, 0, 255)),
                   "That rounds half up; ONNX rounds ties to even.")],
        source="ex-ch6-hand"),
    numeric(
        "ch6-dequantize", U, 1,
        "Dequantize q = {q} (uint8) with scale s = {s} and zero point z = {z}, as ONNX DequantizeLinear does.",
        dict(q=9, s=0.5, z=3),
        lambda q, s, z: (q - z) * s,
        lambda q, s, z, answer: f"x̂ = (q − z)·s = ({q} − {z})·{s} = {fmt(answer)}.",
        lambda rng: dict(q=int(rng.integers(0, 256)), s=float(rng.choice([0.5, 0.25, 0.125, 0.0625])),
                         z=int(rng.integers(0, 256))),
        abs_tol=1e-6,
        mistakes=[(lambda q, s, z: q * s - z, "The zero point is subtracted before scaling: (q − z)·s.")],
        source="ex-ch6-hand"),
    numeric(
        "ch6-zero-point", U, 2,
        "An activation's calibrated range is [{lo}, {hi}]. An asymmetric uint8 quantizer maps it onto 0 … 255 with "
        "s = (max − min)/255. What zero point z = round(−min/s) does it get?",
        dict(lo=-1.0, hi=3.0),
        _zp,
        lambda lo, hi, answer: (f"s = ({hi} − ({lo}))/255 = {(hi - lo) / 255:.6f}; −min/s = {-lo / ((hi - lo) / 255):.3f}, "
                                f"which rounds to {fmt(answer)}: the level that stands for a real 0."),
        _draw_zp,
        mistakes=[(lambda lo, hi: 0, "z = 0 is the symmetric case; an asymmetric range with a negative minimum puts "
                   "zero above level 0.")],
        source="chapter 6, symmetric or asymmetric"),
    numeric(
        "ch6-shift", U, 3,
        "A layer has s_x = {sx}, s_w = {sw} and s_y = {sy}. Integer hardware writes its requantization multiplier "
        "M = s_x·s_w/s_y as M0 · 2⁻³¹ · 2⁻ⁿ with M0 in [2³⁰, 2³¹). What is the right shift n?",
        dict(sx=0.02, sw=0.004, sy=0.05),
        lambda sx, sw, sy: _multiplier(_m_exact(sx, sw, sy))[1],
        lambda sx, sw, sy, answer: (f"M = {_m_exact(sx, sw, sy):.6g} = {math.frexp(_m_exact(sx, sw, sy))[0]:.6f} · "
                                    f"2^-{fmt(answer)}, with the mantissa in [0.5, 1): n = {fmt(answer)}."),
        _draw_scales,
        source="ex-ch6-multiplier"),
    numeric(
        "ch6-m0", U, 3,
        "A layer has s_x = {sx}, s_w = {sw} and s_y = {sy}. Its requantization multiplier is " + _M_TEXT + ". "
        "Integer hardware writes M as M0 · 2⁻³¹ · 2⁻ⁿ with M0 in [2³⁰, 2³¹). What is the int32 multiplier M0, "
        "rounded to the nearest integer?",
        dict(sx=0.02, sw=0.004, sy=0.05),
        lambda sx, sw, sy: _multiplier(_m_exact(sx, sw, sy))[0],
        lambda sx, sw, sy, answer: (
            f"From the decimal scales, M = {_m_exact(sx, sw, sy):.6g} = "
            f"{math.frexp(_m_exact(sx, sw, sy))[0]:.6f} · 2^-{_multiplier(_m_exact(sx, sw, sy))[1]}, and "
            f"M0 = round(mantissa · 2³¹) = {fmt(answer)}. In float32, M is the float32 number "
            f"{_m_float32(sx, sw, sy):.9g}; its M0 is its 24-bit significand shifted left by 7 bits, "
            f"{fmt(_multiplier(_m_float32(sx, sw, sy))[0])}. "
            + ("The two agree here." if _multiplier(_m_float32(sx, sw, sy))[0] == answer else
               "They differ in the last digits; the float32 one is what the model's scales define.")),
        _draw_scales,
        also=[(lambda sx, sw, sy: _multiplier(_m_float32(sx, sw, sy))[0],
               "Right, for M computed in float32 from float32 scales (its last 7 bits are zero); from the decimal "
               "scales M0 differs in the last digits.")],
        source="ex-ch6-multiplier"),
    numeric(
        "ch6-requantize", U, 3,
        "An int32 accumulator a = {a} is requantized with M = s_x·s_w/s_y (s_x = {sx}, s_w = {sw}, s_y = {sy}) and "
        "output zero point 0, rounding a·M once to the nearest integer. What is the output value before saturation?",
        dict(a=1000, sx=0.02, sw=0.004, sy=0.05),
        lambda a, sx, sw, sy: round(a * sx * sw / sy),
        lambda a, sx, sw, sy, answer: f"a·M = {a}·{sx * sw / sy:.6g} = {a * sx * sw / sy:.4f}, which rounds to {fmt(answer)}.",
        _draw_requant,
        mistakes=[(lambda a, sx, sw, sy: math.floor(a * sx * sw / sy), "That truncates; requantization rounds.")],
        source="ex-ch6-multiplier"),
    numeric(
        "ch6-sqnr", U, 2,
        "A tensor x = [{a}, −{a}, {a}, −{a}] is quantized to x̂ = [{a} + {e}, −{a} + {e}, {a} − {e}, −{a} − {e}]. "
        "What is its SQNR, 10·log10(Σx² / Σ(x − x̂)²), in dB? (Two decimals.)",
        dict(a=1.0, e=0.1),
        lambda a, e: 10 * math.log10(a * a / (e * e)),
        lambda a, e, answer: f"Σx² = 4·{a}², Σ(x − x̂)² = 4·{e}²: 10·log10({a}²/{e}²) = {answer:.2f} dB.",
        lambda rng: dict(a=round(float(rng.uniform(0.5, 4)), 2), e=round(float(rng.uniform(0.001, 0.2)), 3)),
        abs_tol=0.006,
        mistakes=[(lambda a, e: 10 * math.log10(a / e), "SQNR compares powers (squares), not amplitudes.")],
        source="chapter 6, SQNR"),
    numeric(
        "ch6-channel-levels", U, 1,
        "A weight tensor has two output channels, one with values spread over [−1, 1], one over [−{r}, {r}]. With "
        "one symmetric int8 scale for the whole tensor (s = max|w|/127), how many distinct levels do the small "
        "channel's quantized values use?",
        dict(r=0.01),
        lambda r: 2 * round(127 * r) + 1,
        lambda r, answer: (f"s = 1/127, so the small channel reaches at most round({r}·127) = "
                           f"{plural(round(127 * r), 'level')} either side of 0: {fmt(answer)} levels. With a scale per channel it would use all 255."),
        lambda rng: dict(r=float(rng.choice([0.01, 0.02, 0.03, 0.05, 0.1, 0.2]))),
        mistakes=[(lambda r: 255, "That is per channel: each channel gets its own scale and all 255 levels.")],
        source="ex-ch6-channel"),
    choice(
        "ch6-bf16-tie", U, 1,
        "bf16 keeps 7 significand bits after the leading 1. What does rounding the float32 value 1 + 2⁻⁸ to bf16 "
        "(round to nearest, ties to even) give?",
        ("1.0", "Right: 1 + 2⁻⁸ lies half-way between 1 and 1 + 2⁻⁷ and goes to the one whose last bit is even."),
        [("1 + 2⁻⁷", "That rounds the tie up; ties go to the even neighbour."),
         ("1 + 2⁻⁸, exactly", "bf16 cannot represent it: its step near 1 is 2⁻⁷."),
         ("NaN", "Rounding gives NaN only from a NaN, or on overflow in some FP8 formats; 1 + 2⁻⁸ is well inside "
          "bf16's range.")],
        source="chapter 6, smaller floats"),
    choice(
        "ch6-per-channel-why", U, 1,
        "Why may weight scales be per output channel while activation scales are not per input channel?",
        ("A weight scale multiplies one output channel's whole sum and can be applied after it; a per-input-channel "
         "scale would have to be applied inside the sum.", "Right. (Before a depthwise convolution, which never "
         "sums across channels, per-channel activation scales are legal: NNCF uses them there.)"),
        [("Activations have too few channels for per-channel scales.", "Channel counts are not the reason; the "
          "arithmetic is."),
         ("ONNX allows per-axis scales only for weights.", "QuantizeLinear takes an axis for any tensor; the "
          "integer arithmetic is what forbids it for a convolution's input."),
         ("Activation ranges do not differ between channels.", "They do (chapter 0's exercise shows it).")],
        source="self-check 2"),
    choice(
        "ch6-wide-narrow", U, 5,
        "A calibration set's activation ranges come out wider than the deployment data's. Is that a problem for "
        "INT8, and what about ranges that are too narrow?",
        ("Wider only coarsens the step, which 8 bits absorbed on CameraNet; narrower clips the real values above "
         "its top, and what that costs depends on how many are clipped and by how much.",
         "Right: chapter 6's bright set clipped few deep values and NNCF's input range clipped pixels only by a "
         "little; its night set clipped much more of the input range and cost accuracy."),
        [("Both directions cost about the same accuracy.", "Clipping loses the large values outright; a coarser "
          "step loses a fraction of a level on each."),
         ("Wider is worse: values waste levels.", "Wasted levels cost resolution, which 8 bits had to spare here."),
         ("Neither matters once BatchNorm is folded.", "BatchNorm at inference is a fixed scale and shift; it adapts "
          "to nothing.")],
        source="self-check 4"),
    choice(
        "ch6-reciprocal", U, 1,
        "What can `rint(x · (1/s))` get wrong that `rint(x / s)` gets right?",
        ("It rounds twice (1/s, then the product), so near a half-way point it can land on the other integer: "
         "one level, on values within a float32 step of a tie.", "Right: OpenVINO's FakeQuantize multiplies."),
        [("It saturates differently.", "Saturation happens after rounding in both."),
         ("It gives a different result for every value.", "The two agree except near half-way points."),
         ("Nothing: multiplication by the reciprocal is exact in float32.", "1/s is itself rounded to float32.")],
        source="self-check 3"),
    choice(
        "ch6-int8-kernels", U, 4,
        "You compile a QDQ model with OpenVINO's CPU plugin and read the executed graph. What shows that a "
        "convolution really ran in INT8?",
        ("Its runtime precision is u8 or i8 and its kernel name ends in `_I8`.", "Right: the Q/DQ pattern was "
         "recognized and an integer kernel chosen."),
        [("The model file contains QuantizeLinear nodes.", "The file says what to compute; the executed graph says "
          "what ran."),
         ("Its output precision is f32.", "Dequantized outputs can be f32 either way."),
         ("The logits differ from the float model's.", "A float model in bf16 also differs; only the kernels tell.")],
        source="chapter 6, QDQ on a real runtime"),
    short(
        "ch6-zp-after", U, 1,
        "Why does ONNX add the zero point after rounding x/s, and when does the order matter?",
        "So that q − z is exactly the rounded x/s: the grid of real values is s times the integers whatever z is, "
        "and every implementation gets the same bits. Computed exactly, with an integer z, the two orders differ "
        "only on exact ties, and only when z is odd (round(2.5) + 1 = 3, round(3.5) = 4). Computed in float32, "
        "x/s + z is itself rounded to 24 significant bits, so a value within a float32 step of a tie can land on "
        "one, and the orders can then differ for any z, even ones (chapter 6: x/s just above 26.5 with z = 28). "
        "Requantization meets the same choice, and runtimes make it differently, so two correct INT8 runtimes can "
        "differ by one level.",
        [(1, "q − z equals round(x/s): the grid does not depend on z."),
         (1, "Exact arithmetic: the order matters only on exact ties, and only for odd z (an example helps)."),
         (1, "In float32 the sum x/s + z is rounded first, so near-ties can differ for any z, even ones."),
         (1, "Consequence: runtimes that place z differently (or compute in float32) can differ by one level.")],
        source="self-check 1"),
    short(
        "ch6-runtime-diff", U, 3,
        "OpenVINO's INT8 logits differ from your integer pipeline's by a few hundredths. Which test tells you "
        "whether that is a bug?",
        "Compare every quantized tensor level by level, starting from the input, and run each of your layers on "
        "the runtime's own inputs. Differences that start as single levels at near-ties, and that the runtime's "
        "documented formula (its FakeQuantize, its float32 rounding) reproduces exactly, are rounding, inherited "
        "and amplified downstream; a large difference appearing at one layer from identical inputs is a bug.",
        [(1, "Compare quantized tensors level by level, from the input on."),
         (1, "Separate inherited differences from new ones (same inputs per layer)."),
         (1, "Single levels at near-ties explained by the documented formula are rounding; a jump is a bug.")],
        source="self-check 5"),
]
