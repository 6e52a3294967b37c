"""Integer-only arithmetic of a quantized layer: int32 sums, then one fixed-point rescale.

The invariant this module teaches:

    *An INT8 layer is exact integer sums plus one rounding.* With
    ``x = s_x (q_x − z_x)`` and symmetric weights ``w = s_w q_w``, a layer's
    output is ``s_x s_w · a`` where the accumulator
    ``a = Σ q_w (q_x − z_x) + q_b`` is an exact int32 sum. Bringing it back
    to 8 bits with scale ``s_y`` multiplies by ``M = s_x s_w / s_y``, written
    as an int32 ``M0`` in [2^30, 2^31) and a right shift, ``M = M0·2^−(31+shift)``,
    and rounds (Jacob et al. 2018). Correct implementations differ in where
    the output zero point goes (before or after the rounding: they disagree
    on ties when it is odd), in how many times they round, and in float32
    steps: a bit-exact comparison must fix all three first.

:func:`quantize_multiplier` writes ``M`` as ``(M0, shift)``; :func:`requantize`
rounds ``a·M`` once, exactly, half to even, with the zero point added before
the rounding (``onnx.reference``'s QLinearConv and QLinearMatMul) or after it
(QLinearMatMul's formula, and ONNX Runtime's order), or twice, as gemmlowp
does; :func:`qmatmul` and :func:`qconv` are the int32 kernels;
:func:`integer_forward` runs a whole QDQ model (from :func:`npukit.ptq.to_qdq`)
with them and nothing else. The number formats are in :mod:`npukit.quant`.

See chapter 6, "Quantization" (chapters/06_quant.md), section "Integer-only inference".
"""

from __future__ import annotations

import numbers as _numbers
from typing import Any

import numpy as np

from . import _check
from .graphs import _walkable
from .quant import DTYPES, _float32, quantize

__all__ = [
    "quantize_multiplier",
    "requantize",
    "qmatmul",
    "qconv",
    "integer_forward",
]


def quantize_multiplier(real: Any) -> tuple[Any, Any]:
    """Write a positive real multiplier as ``M0 · 2^−31 · 2^−shift`` with int32 ``M0`` in [2^30, 2^31).

    ``M0 / 2^31`` is the mantissa in [0.5, 1); ``shift`` is the right shift
    (negative for a multiplier ≥ 1). For a float32 ``real`` (what an ONNX
    model stores) the representation is exact.

    See chapter 6, "Integer-only inference" (chapters/06_quant.md).

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
    if isinstance(real, np.ndarray):
        _check.real_array(real, "real")  # complex would drop its imaginary part, bool would be 1.0
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
    """gemmlowp's RoundingDivideByPOT: round(x / 2^e), ties away from zero (|x| < 2^31)."""
    e = np.minimum(e, 32)                                 # |x| / 2^32 < 1/2 rounds to 0 all the same
    mask = (np.left_shift(np.int64(1), e)) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> e) + (remainder > threshold)


def requantize(acc: np.ndarray, multiplier: Any, shift: Any, zero_point: Any = 0, dtype: str = "uint8", *,
               rounding: str = "half_even") -> np.ndarray:
    """Bring int32 accumulators back to a quantized type: ``saturate(round(acc·M0·2^−(31+shift)) + z)``.

    Three roundings, each exact (integer arithmetic, no float32 step):
    ``"half_even"``, ``round(a·M + z)`` once, ties to even: what
    ``onnx.reference`` computes for QLinearConv and QLinearMatMul, and
    OpenVINO's order (its FakeQuantize adds z, in float32, before it rounds);
    ``"half_even_zp_after"``, ``round(a·M) + z``: QLinearMatMul's formula
    (as QuantizeLinear's) and ONNX Runtime's order (which rounds in float32),
    different from the first only on exact ties with an odd ``z``;
    ``"double"``, gemmlowp's (Jacob et al.'s, TFLite's) two integer
    roundings, a rounding high multiply by ``M0`` (ties toward +inf) and a
    rounding right shift (ties away from zero), then ``+ z``: the first can
    push the second across a tie, one step off.

    See chapter 6, "Integer-only inference" (chapters/06_quant.md).

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
        The output type (a key of :data:`npukit.quant.DTYPES`).
    rounding : {"half_even", "half_even_zp_after", "double"}

    Returns
    -------
    numpy.ndarray
        In the storage dtype of ``dtype``.

    Raises
    ------
    TypeError, ValueError
        For non-integer ``acc``, values outside int32, ``multiplier`` outside
        [2^30, 2^31), ``shift`` < −31, a zero point outside the type, or (for
        ``"double"``) ``acc·2^−shift`` outside int32.

    Examples
    --------
    >>> m0, shift = quantize_multiplier(0.25)
    >>> requantize(np.int32([10, 14, -6]), m0, shift, 0, "int8").tolist()   # 2.5, 3.5, -1.5
    [2, 4, -2]
    >>> requantize(np.int32([10, 14, -6]), m0, shift, 0, "int8", rounding="double").tolist()
    [3, 4, -2]
    >>> requantize(np.int32([2, 6, 10]), m0, shift, 3, "int8").tolist()    # 0.5, 1.5, 2.5 and z = 3
    [4, 4, 6]
    >>> requantize(np.int32([2, 6, 10]), m0, shift, 3, "int8", rounding="half_even_zp_after").tolist()
    [3, 5, 5]
    """
    acc = _check.as_array(acc, "acc")
    if acc.dtype.kind not in "iu":
        raise TypeError(f"acc must be an integer array (int32 accumulators), got {acc.dtype}")
    acc = acc.astype(np.int64)
    if acc.size and (acc.min() < -2**31 or acc.max() >= 2**31):
        raise ValueError("acc must hold int32 values")
    lo, hi, store = DTYPES[_check.one_of(dtype, "dtype", tuple(DTYPES))]
    _check.one_of(rounding, "rounding", ("half_even", "half_even_zp_after", "double"))
    m0, n = np.asarray(multiplier), np.asarray(shift)
    if m0.dtype.kind not in "iu" or n.dtype.kind not in "iu":
        raise TypeError("multiplier and shift must be integers (from quantize_multiplier)")
    m0, n = m0.astype(np.int64), n.astype(np.int64)
    for arr, what in ((m0, "multiplier"), (n, "shift"), (np.asarray(zero_point), "zero_point")):
        try:
            if (arr.size == 0 or np.broadcast_shapes(arr.shape, acc.shape) != acc.shape
                    or (arr.size > 1 and arr.ndim != acc.ndim)):  # (C,) against (N, C, H, W) would scale along W
                raise ValueError
        except ValueError:
            raise ValueError(f"{what} must be one value or have acc's {acc.ndim} axes and broadcast against its "
                             f"shape {acc.shape} (one per channel: shape (1, C, 1, 1)), got shape {arr.shape}") from None
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
    elif rounding == "half_even_zp_after":
        q = _shift_round_half_even(acc * m0, 31 + n, np.zeros_like(z)) + z
    else:                                                 # gemmlowp: all in int32
        left, right = np.maximum(-n, 0), np.maximum(n, 0)
        shifted = acc << left
        if shifted.size and (shifted.min() < -2**31 or shifted.max() >= 2**31):
            raise ValueError("acc·2^-shift must fit int32 for rounding='double' (gemmlowp's int32 arithmetic)")
        q = _rdbpot(_srdhm(shifted, m0), right) + z
    return np.clip(q, lo, hi).astype(store)


def _int_operand(q: Any, name: str) -> np.ndarray:
    q = _check.as_array(q, name)
    if q.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got {q.dtype}")
    return q


def _int_range(q: np.ndarray) -> tuple[int, int]:
    """The range of an integer operand's dtype: a zero point must be a value of that type."""
    info = np.iinfo(q.dtype)
    return int(info.min), int(info.max)


def _exact_int32(total: np.ndarray, what: str) -> np.ndarray:
    if total.size and (total.min() < -2**31 or total.max() >= 2**31):
        raise ValueError(f"{what} overflows int32 accumulators")
    return total.astype(np.int32)


def qmatmul(a: np.ndarray, a_zero_point: Any, b: np.ndarray, b_zero_point: Any = 0) -> np.ndarray:
    """Integer matrix product ``(a − z_a) @ (b − z_b)`` with exact int32 accumulators.

    Products of 8-bit integers and their sums are computed exactly (in
    float64 through BLAS, which is exact for integers below 2^53, then
    checked to fit int32). ``b_zero_point`` may be 1-D along ``b``'s columns.

    See chapter 6, "Integer-only inference" (chapters/06_quant.md).

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
    za = _check.integer(a_zero_point, "a_zero_point")
    _check.zero_point(za, "a_zero_point", *_int_range(a), f"a's dtype {a.dtype}")
    _check.zero_point(b_zero_point, "b_zero_point", *_int_range(b), f"b's dtype {b.dtype}")
    zb = np.asarray(b_zero_point)
    if zb.dtype.kind not in "iu" or zb.size not in (1, b.shape[1]) or zb.ndim > 1:
        raise ValueError(f"b_zero_point must be an integer or one integer per column of b ({b.shape[1]}), "
                         f"got {zb.ravel()[:4]}")
    total = (a.astype(np.float64) - za) @ (b.astype(np.float64) - zb.astype(np.float64))
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

    See chapter 6, "Integer-only inference" (chapters/06_quant.md).

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
    x_zero_point = _check.integer(x_zero_point, "x_zero_point")
    _check.zero_point(x_zero_point, "x_zero_point", *_int_range(x), f"x's dtype {x.dtype}")
    _check.zero_point(w_zero_point, "w_zero_point", *_int_range(w), f"w's dtype {w.dtype}")
    stride, pad = _check.integer(stride, "stride", minimum=1), _check.integer(pad, "pad", minimum=0)
    groups = _check.integer(groups, "groups", minimum=1)
    if x.ndim == 4 and w.ndim == 4:  # the float64 padded input and its windows, before NumPy tries
        hp, wp = x.shape[2] + 2 * pad, x.shape[3] + 2 * pad
        _check.allocation(8 * x.shape[0] * x.shape[1] * hp * wp * max(1, w.shape[2] * w.shape[3] // stride**2), "pad")
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


# ---- a whole QDQ model, with integers only ------------------------------------------------------


def _graph(model: Any) -> tuple[Any, dict[str, np.ndarray]]:
    import onnx
    from onnx import numpy_helper

    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"model must be an onnx.ModelProto, got {type(model).__name__}")
    return model.graph, {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def _attrs(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


class _IntegerRun:
    """The state of :func:`integer_forward`: quantized activations and pending int32 sums, by tensor name."""

    def __init__(self, graph: Any, inits: dict[str, np.ndarray]) -> None:
        self.graph, self.inits = graph, inits
        self.producer = {o: n for n in graph.node for o in n.output}
        self.q: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}    # values, scale, zero point
        self.acc: dict[str, tuple[np.ndarray, np.ndarray, bool]] = {}        # int32 sums, scale, ReLU pending
        self.logits: dict[str, np.ndarray] = {}

    def source(self, t: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        node = self.producer.get(t)
        if node is not None and node.op_type == "Flatten" and t in self.q:
            return self.q[t]
        if node is None or node.op_type != "DequantizeLinear" or node.input[0] not in self.q:
            raise ValueError(f"integer_forward needs a fully quantized model: {t!r} is not a dequantized activation")
        return self.q[node.input[0]]

    def stored(self, t: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        node = self.producer.get(t)
        if node is None or node.op_type != "DequantizeLinear" or node.input[0] not in self.inits:
            raise ValueError(f"integer_forward needs quantized weights: {t!r} is not a dequantized initializer")
        i = self.inits
        return i[node.input[0]], i[node.input[1]].astype(np.float32), i[node.input[2]].astype(np.int64)

    def quantize_linear(self, node: Any, images: np.ndarray) -> None:
        s, z = self.inits[node.input[1]].astype(np.float32), self.inits[node.input[2]].astype(np.int64)
        if node.input[0] == self.graph.input[0].name:               # the only float → integer step
            self.q[node.output[0]] = (quantize(images, s, z, "uint8"), s, z)
            return
        total, s_acc, relu = self.acc[node.input[0]]
        m0, shift = quantize_multiplier((s_acc / s).astype(np.float32))  # M = s_x·s_w / s_y, as QLinearConv
        shape = (1, -1) + (1,) * (total.ndim - 2) if np.ndim(m0) else ()
        y = requantize(total, np.reshape(m0, shape), np.reshape(shift, shape), z, "uint8")
        self.q[node.output[0]] = (np.maximum(y, z).astype(y.dtype) if relu else y, s, z)   # ReLU: a clamp at z

    def layer(self, node: Any) -> None:
        a = _attrs(node)
        xq, sx, zx = self.source(node.input[0])
        wq, sw, zw = self.stored(node.input[1])
        bq = self.stored(node.input[2])[0] if len(node.input) > 2 else None
        if node.op_type == "Conv":
            total = qconv(xq, int(zx), wq, zw, bq, stride=a.get("strides", [1])[0], pad=a.get("pads", [0])[0],
                          groups=a.get("group", 1))
        else:
            total = qmatmul(xq, int(zx), wq.T if a.get("transB", 0) else wq, 0) + (0 if bq is None else bq)
        s_acc = (sx * sw).astype(np.float32)
        if node.output[0] in (o.name for o in self.graph.output):     # the logits: back to float
            self.logits[node.output[0]] = (total * (s_acc.reshape(1, -1) if node.op_type == "Gemm" else s_acc)
                                           ).astype(np.float32)
        self.acc[node.output[0]] = (total.astype(np.int64), s_acc, False)

    def step(self, node: Any, images: np.ndarray) -> None:
        op = node.op_type
        if op == "QuantizeLinear":
            self.quantize_linear(node, images)
        elif op in ("Conv", "Gemm"):
            self.layer(node)
        elif op == "Relu":
            self.acc[node.output[0]] = self.acc[node.input[0]][:2] + (True,)
        elif op == "GlobalAveragePool":                               # an integer sum, rescaled by 1/(H·W)
            xq, sx, zx = self.source(node.input[0])
            total = (xq.astype(np.int64) - zx).sum(axis=(2, 3), keepdims=True)
            self.acc[node.output[0]] = (total, (sx / np.float32(xq.shape[2] * xq.shape[3])).astype(np.float32), False)
        elif op == "Flatten":
            xq, sx, zx = self.source(node.input[0])
            self.q[node.output[0]] = (xq.reshape(len(xq), -1), sx, zx)
        elif op != "DequantizeLinear":
            raise ValueError(f"integer_forward does not run {op} nodes ({node.name!r})")


def integer_forward(qdq_model: Any, images: np.ndarray, *, record: bool = False) -> Any:
    """Run a QDQ model from :func:`npukit.ptq.to_qdq` with integer kernels only, as an INT8 accelerator would.

    Each Conv or Gemm between dequantized int8 weights and a dequantized uint8
    activation becomes :func:`qconv` / :func:`qmatmul`
    (int32 sums, int32 bias); a Relu followed by a QuantizeLinear becomes
    :func:`requantize` (``M = s_x·s_w / s_y`` in float32, as
    ``onnx.reference``'s QLinearConv computes it, written exactly as ``M0``
    and ``shift``; the zero point added before the one rounding, as there)
    and a clamp at the output zero point; a GlobalAveragePool sums integers and
    requantizes by ``s_x / (H·W·s_y)``. Only the input's QuantizeLinear and
    the logits' final rescale touch floats.

    See chapter 6, "CameraNet as a QDQ model, on a real runtime" (chapters/06_quant.md).

    Parameters
    ----------
    qdq_model : onnx.ModelProto
        A fully quantized model made by :func:`npukit.ptq.to_qdq` (no ``keep_float``).
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
    >>> from npukit.ptq import to_qdq
    >>> qdq = to_qdq(rewrites.fold_batchnorm(net.to_onnx()), images)
    >>> logits = integer_forward(qdq, images)
    >>> float((logits.argmax(1) == net(images).argmax(1)).mean())
    1.0
    """
    graph, inits = _graph(_walkable(qdq_model, "qdq_model"))
    images = _float32(images, "images")
    record = _check.boolean(record, "record")
    if images.ndim != 4 or len(images) == 0:
        raise ValueError(f"images must be a non-empty (n, C, H, W) batch, got shape {images.shape}")
    logits, acts = [], []
    for i in range(0, len(images), 256):                        # in slices: the int64 sums stay small
        run = _IntegerRun(graph, inits)
        for node in graph.node:
            run.step(node, images[i:i + 256])
        if graph.output[0].name not in run.logits:
            raise ValueError("integer_forward needs a model whose output is a quantized Conv or Gemm's")
        logits.append(run.logits[graph.output[0].name])
        acts.append({k.removesuffix(".q"): v[0] for k, v in run.q.items() if k.endswith(".q")})
    out = np.concatenate(logits)
    if record:
        return out, {k: np.concatenate([a[k] for a in acts]) for k in acts[0]}
    return out
