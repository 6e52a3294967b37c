"""Tests of npukit.quant against independent references: onnx.reference, ml_dtypes, OpenVINO, brute force."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from npukit import quant

ONNX_TYPES = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8, "uint4": TensorProto.UINT4,
              "int4": TensorProto.INT4, "uint16": TensorProto.UINT16, "int16": TensorProto.INT16}


def _zp_tensor(zp: np.ndarray, dtype: str, name: str):
    return helper.make_tensor(name, ONNX_TYPES[dtype], list(zp.shape), zp.ravel().astype(np.int64).tolist())


def onnx_quantize(x, scale, zp, dtype, axis=1, block_size=0):
    """QuantizeLinear-21 run by the reference evaluator; values returned as int64."""
    scale = np.asarray(scale, np.float32)
    zp = np.asarray(zp, np.int64).reshape(scale.shape)
    attrs = {"axis": axis} if scale.ndim else {}
    if block_size:
        attrs["block_size"] = block_size
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], **attrs)
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", ONNX_TYPES[dtype], None)],
                              initializer=[numpy_helper.from_array(scale, "s"), _zp_tensor(zp, dtype, "z")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return ReferenceEvaluator(model).run(None, {"x": x})[0].astype(np.int64)


def onnx_dequantize(q, scale, zp, dtype, axis=1, block_size=0):
    scale = np.asarray(scale, np.float32)
    zp = np.asarray(zp, np.int64).reshape(scale.shape)
    attrs = {"axis": axis} if scale.ndim else {}
    if block_size:
        attrs["block_size"] = block_size
    node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], **attrs)
    qt = helper.make_tensor("q", ONNX_TYPES[dtype], list(q.shape), q.ravel().astype(np.int64).tolist())
    graph = helper.make_graph([node], "dq", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=[qt, numpy_helper.from_array(scale, "s"), _zp_tensor(zp, dtype, "z")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    return ReferenceEvaluator(model).run(None, {})[0]


# ---- quantize / dequantize ------------------------------------------------------------------


@pytest.mark.parametrize("zp", [0, 1, 2, 3, 128, 255])
def test_half_way_values_and_saturation_match_onnx(zp):
    x = np.float32([0.5, 1.5, 2.5, -0.5, -1.5, 253.5, 254.5, 255.5, 300, -3, 0, -0.0, 1e6, -1e6, np.inf, -np.inf][:14])
    assert np.array_equal(quant.quantize(x, 1.0, zp, "uint8"), onnx_quantize(x, 1.0, zp, "uint8"))


@pytest.mark.parametrize("dtype", list(quant.DTYPES))
@pytest.mark.parametrize("zp_pick", ["low", "mid", "high", "negative"])
def test_negative_and_extreme_zero_points(dtype, zp_pick):
    lo, hi = quant.qrange(dtype)
    zp = {"low": lo, "mid": (lo + hi) // 2, "high": hi, "negative": min(-1, hi) if lo < 0 else lo}[zp_pick]
    x = (np.arange(-40, 41, dtype=np.float32) * 0.25)
    for s in (0.5, 0.1, 1 / 3):
        assert np.array_equal(quant.quantize(x, s, zp, dtype), onnx_quantize(x, s, zp, dtype))


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from(list(quant.DTYPES)), seed=st.integers(0, 2**32 - 1),
       kind=st.sampled_from(["tensor", "axis", "block"]))
def test_random_float32_match_onnx_every_dtype(dtype, seed, kind):
    rng = np.random.default_rng(seed)
    lo, hi = quant.qrange(dtype)
    shape = tuple(int(d) for d in rng.integers(1, 7, size=3))
    axis = int(rng.integers(0, 3))
    x = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3)).astype(np.float32)
    block = 0
    if kind == "tensor":
        pshape: tuple = ()
    elif kind == "axis":
        pshape = (shape[axis],)
    else:
        block = int(rng.integers(1, 4))
        pshape = tuple(-(-d // block) if i == axis else d for i, d in enumerate(shape))
    scale = (10.0 ** rng.uniform(-4, 1, size=pshape)).astype(np.float32)
    zp = rng.integers(lo, hi + 1, size=pshape)
    ties = rng.random(shape) < 0.3          # put many values exactly on half-way points
    s_b = np.broadcast_to(scale if kind == "tensor" else (
        scale.reshape([-1 if i == axis else 1 for i in range(3)]) if kind == "axis" else
        np.repeat(scale, block, axis=axis)[tuple(slice(0, d) for d in shape)]), shape)
    x = np.where(ties, (np.floor(x / s_b) + np.float32(0.5)) * s_b, x).astype(np.float32)
    got = quant.quantize(x, scale, zp, dtype, axis=axis, block_size=block)
    assert np.array_equal(got, onnx_quantize(x, scale, zp, dtype, axis, block))
    back = quant.dequantize(got, scale, zp, dtype, axis=axis, block_size=block)
    assert np.array_equal(back.view(np.uint32), onnx_dequantize(got, scale, zp, dtype, axis, block).view(np.uint32))


def test_reference_evaluator_wraps_beyond_int32_where_quantize_saturates():
    """onnx.reference casts rint(x/s) to int32 before clamping, so |x/s| >= 2**31 wraps; the spec saturates."""
    x = np.float32([3e9, -3e9])
    assert quant.quantize(x, 1.0, 0, "int8").tolist() == [127, -128]
    with np.errstate(invalid="ignore"):
        ref = onnx_quantize(x, 1.0, 0, "int8").tolist()
    assert ref != [127, -128]


def test_default_zero_point_and_type_are_uint8():
    q = quant.quantize(np.float32([-1.0, 1.0]), 0.5)
    assert q.dtype == np.uint8 and q.tolist() == [0, 2]


def test_quantize_refuses_bad_input():
    x = np.float32([1.0])
    with pytest.raises(ValueError, match="scale"):
        quant.quantize(x, 0.0)
    with pytest.raises(ValueError, match="scale"):
        quant.quantize(x, float("nan"))
    with pytest.raises(ValueError, match="zero_point"):
        quant.quantize(x, 1.0, 300)
    with pytest.raises(ValueError, match="zero_point"):
        quant.quantize(x, 1.0, -1, "uint8")
    with pytest.raises(ValueError, match="NaN"):
        quant.quantize(np.float32([np.nan]), 1.0)
    with pytest.raises(TypeError, match="float32"):
        quant.quantize(np.array([1.0]), 1.0)
    with pytest.raises(ValueError, match="axis"):
        quant.quantize(np.zeros((2, 3), np.float32), np.float32([1, 1]), axis=2)
    with pytest.raises(ValueError, match="scale"):
        quant.quantize(np.zeros((2, 3), np.float32), np.float32([1, 1]), axis=1)
    with pytest.raises(ValueError, match="dtype"):
        quant.quantize(x, 1.0, dtype="int3")


# ---- choosing scales --------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), symmetric=st.booleans(), dtype=st.sampled_from(["int8", "uint8", "int4"]))
def test_minmax_qparams_brute_force(seed, symmetric, dtype):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((5, 7)) * rng.uniform(0.01, 3, size=(5, 1))).astype(np.float32)
    p = quant.choose_qparams(w, dtype, symmetric, axis=0)
    lo, hi = quant.qrange(dtype)
    for c in range(5):
        mn, mx = min(float(w[c].min()), 0.0), max(float(w[c].max()), 0.0)
        if symmetric:
            want = max(-mn, mx) / ((hi - lo) // 2)
        else:
            want = (mx - mn) / (hi - lo)
        assert np.isclose(p.scale[c], want, rtol=1e-6)
        deq = p.dequantize(p.quantize(w))[c]
        assert np.abs(deq - w[c]).max() <= 0.5 * p.scale[c] * (1 + 1e-5) + 1e-12     # nothing clipped
    if symmetric:
        assert np.all(p.zero_point == (0 if lo < 0 else (hi - lo) // 2 + 1))


def test_zero_is_exact_and_mse_never_worse_than_minmax():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(5000), [40.0]]).astype(np.float32)     # one outlier
    for symmetric in (True, False):
        p = quant.choose_qparams(x, "int8", symmetric)
        assert p.dequantize(p.quantize(np.float32([0.0])))[0] == 0.0
        err = {m: np.mean((quant.choose_qparams(x, "int8", symmetric, method=m).dequantize(
            quant.choose_qparams(x, "int8", symmetric, method=m).quantize(x)) - x) ** 2) for m in ("minmax", "mse")}
        assert err["mse"] <= err["minmax"]


def test_observer_accumulates_like_one_batch():
    rng = np.random.default_rng(1)
    batches = [(rng.standard_normal(1000) * (k + 1)).astype(np.float32) for k in range(4)]
    whole = np.concatenate(batches)
    one, many = quant.Observer("minmax"), quant.Observer("minmax")
    one.update(whole)
    for b in batches:
        many.update(b)
    assert one.qparams("int8").scale == many.qparams("int8").scale
    assert many.qparams("uint8").scale == quant.choose_qparams(whole, "uint8", False).scale
    h1, h2 = quant.Observer("percentile"), quant.Observer("percentile")
    h1.update(whole)
    for b in batches:                     # growing range: bins merge as the radius doubles
        h2.update(b)
    assert h1.radius == h2.radius and np.array_equal(h1.hist, h2.hist)
    p = h2.qparams("uint8", symmetric=False)
    top = float(p.scale) * (255 - int(p.zero_point))
    assert np.percentile(whole, 99.99) <= top + 2 * h2.radius / h2.bins


def test_observer_refuses_empty_and_nan():
    with pytest.raises(ValueError, match="no data"):
        quant.Observer().qparams()
    with pytest.raises(ValueError, match="finite"):
        quant.Observer().update(np.float32([np.nan]))
    with pytest.raises(ValueError, match="empty"):
        quant.choose_qparams(np.zeros(0, np.float32))


# ---- integer arithmetic -----------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(real=st.floats(float(np.float32(1e-9)), float(np.float32(1e6)), width=32))
def test_quantize_multiplier_is_exact_for_float32(real):
    m0, shift = quant.quantize_multiplier(np.float32(real))
    assert 2**30 <= m0 < 2**31
    assert m0 * 2.0 ** (-31 - shift) == float(np.float32(real))


def _qlinear_matmul(a, sa, za, b, sb, zb, sy, zy, out_type):
    names = ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"]
    t = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
    inits = [numpy_helper.from_array(a, "a"), numpy_helper.from_array(np.float32(sa), "sa"),
             numpy_helper.from_array(np.asarray(za, a.dtype), "za"), numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.float32(sb), "sb"), numpy_helper.from_array(np.asarray(zb, b.dtype), "zb"),
             numpy_helper.from_array(np.float32(sy), "sy"), numpy_helper.from_array(np.asarray(zy, out_type), "zy")]
    node = helper.make_node("QLinearMatMul", names, ["y"])
    graph = helper.make_graph([node], "m", [], [helper.make_tensor_value_info("y", t[out_type], None)], initializer=inits)
    return ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])).run(None, {})[0]


def _scale(rng):
    """A float32 scale; a quarter of them powers of two, which make exact ties common."""
    return np.float32(2.0 ** rng.integers(-9, -2)) if rng.random() < 0.25 else np.float32(10 ** rng.uniform(-3, -1))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_requantize_matches_qlinearmatmul(seed):
    rng = np.random.default_rng(seed)
    m, k, n = (int(v) for v in rng.integers(1, 9, size=3))
    a = rng.integers(0, 256, size=(m, k), dtype=np.uint8)
    b = rng.integers(-128, 128, size=(k, n), dtype=np.int8)
    za, zy = int(rng.integers(0, 256)), int(rng.integers(0, 256))
    sa, sb, sy = _scale(rng), _scale(rng), _scale(rng) * np.float32(16)
    want = _qlinear_matmul(a, sa, za, b, sb, 0, sy, zy, np.uint8)
    acc = quant.qmatmul(a, za, b, 0)
    m0, shift = quant.quantize_multiplier(np.float32(sa * sb) / sy)
    got = quant.requantize(acc, m0, shift, zy, "uint8")
    assert np.array_equal(got, want)


def test_requantize_double_rounding_is_two_roundings():
    from fractions import Fraction

    def away(f: Fraction) -> int:  # round half away from zero
        return int((abs(f) + Fraction(1, 2)).__floor__()) * (1 if f >= 0 else -1)

    acc = np.arange(-2000, 2000, dtype=np.int32)
    for real in (0.125, 0.3, 0.0071):
        m0, shift = quant.quantize_multiplier(np.float32(real))
        single = quant.requantize(acc, m0, shift, 0, "int16")
        double = quant.requantize(acc, m0, shift, 0, "int16", rounding="double")
        exact = [Fraction(int(a) * m0, 2 ** (31 + shift)) for a in acc]
        assert single.tolist() == [round(f) for f in exact]                       # one rounding, ties to even
        up = [(Fraction(int(a) * m0, 2**31) + Fraction(1, 2)).__floor__() for a in acc]   # high mul: half up
        two = [away(Fraction(int(u), 2**shift)) for u in up]                               # shift: half away
        assert double.tolist() == two                                              # gemmlowp's two roundings
        assert np.count_nonzero(single != double) > 0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), depthwise=st.booleans())
def test_qconv_and_requantize_match_qlinearconv(seed, depthwise):
    rng = np.random.default_rng(seed)
    c = int(rng.integers(1, 5))
    m = c if depthwise else int(rng.integers(1, 5))
    groups = c if depthwise else 1
    k, stride, pad = int(rng.choice([1, 3])), int(rng.integers(1, 3)), int(rng.integers(0, 2))
    x = rng.integers(0, 256, size=(2, c, 6, 6), dtype=np.uint8)
    w = rng.integers(-127, 128, size=(m, c // groups, k, k), dtype=np.int8)
    bias = rng.integers(-5000, 5000, size=m, dtype=np.int32)
    zx, zy = int(rng.integers(0, 256)), int(rng.integers(0, 256))
    sx, sy = _scale(rng), _scale(rng) * np.float32(8)
    sw = np.array([_scale(rng) for _ in range(m)], np.float32)
    inits = [numpy_helper.from_array(x, "x"), numpy_helper.from_array(np.float32(sx), "sx"),
             numpy_helper.from_array(np.uint8(zx), "zx"), numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(sw, "sw"), numpy_helper.from_array(np.zeros(m, np.int8), "zw"),
             numpy_helper.from_array(np.float32(sy), "sy"), numpy_helper.from_array(np.uint8(zy), "zy"),
             numpy_helper.from_array(bias, "b")]
    node = helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"], ["y"],
                            kernel_shape=[k, k], strides=[stride] * 2, pads=[pad] * 4, group=groups)
    graph = helper.make_graph([node], "c", [], [helper.make_tensor_value_info("y", TensorProto.UINT8, None)],
                              initializer=inits)
    want = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])).run(None, {})[0]
    acc = quant.qconv(x, zx, w, 0, bias, stride=stride, pad=pad, groups=groups)
    m0, shift = quant.quantize_multiplier((np.float32(sx) * sw / np.float32(sy)).astype(np.float32))
    got = quant.requantize(acc, m0.reshape(1, -1, 1, 1), shift.reshape(1, -1, 1, 1), zy, "uint8")
    assert np.array_equal(got, want)


def test_qconv_matches_convinteger():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, size=(1, 3, 5, 5), dtype=np.uint8)
    w = rng.integers(0, 256, size=(4, 3, 3, 3), dtype=np.uint8)
    node = helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], pads=[1, 1, 1, 1])
    inits = [numpy_helper.from_array(x, "x"), numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(np.uint8(7), "zx"), numpy_helper.from_array(np.uint8(9), "zw")]
    graph = helper.make_graph([node], "c", [], [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
                              initializer=inits)
    want = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)])).run(None, {})[0]
    assert np.array_equal(quant.qconv(x, 7, w, 9, pad=1), want)


# ---- low-precision floats ------------------------------------------------------------------------


def _all_kinds_of_float32(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)       # every exponent: subnormals, inf, NaN
    x = bits.view(np.float32).copy()
    ties = (rng.integers(0, 2**16, size=n // 4, dtype=np.uint32) << 16) | np.uint32(0x8000)   # bf16 ties
    near = (rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 6, n)).astype(np.float32)       # FP8's range
    special = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 448, 464, 480, 57344, 61440, 65504, 65520,
                          2.0**-9, 2.0**-10, 3 * 2.0**-11, 2.0**-16, 2.0**-17, 1e-45, 3.4e38])
    return np.concatenate([x, ties.view(np.float32), near, special, -special])


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    nan = np.isnan(a)
    return bool(np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan].view(np.uint32), b[~nan].view(np.uint32)))


@pytest.mark.parametrize("fmt", ["bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"])
def test_float_formats_match_ml_dtypes_bit_for_bit(fmt):
    import ml_dtypes

    x = _all_kinds_of_float32(20000, seed=len(fmt))
    want = x.astype(np.float16 if fmt == "float16" else getattr(ml_dtypes, fmt)).astype(np.float32)
    with np.errstate(over="ignore"):
        assert _same_bits(quant.to_float(x, fmt), want)
    if fmt == "bfloat16":
        assert _same_bits(quant.to_bfloat16(x), want)


@pytest.mark.parametrize("fmt", ["float8_e4m3fn", "float8_e5m2"])
def test_saturating_fp8_matches_onnx(fmt):
    import ml_dtypes

    x = _all_kinds_of_float32(5000, seed=7)
    x = x[np.isfinite(x)]
    want = onnx.numpy_helper.saturate_cast(x, getattr(ml_dtypes, fmt)).astype(np.float32)
    assert _same_bits(quant.to_float(x, fmt, saturate=True), want)


def test_metrics():
    x = np.array([3.0, 4.0])
    assert quant.sqnr(x, x) == float("inf")
    assert quant.sqnr(x, x * 1.1) == pytest.approx(20.0)
    assert quant.cosine(x, 2 * x) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="shape"):
        quant.sqnr(x, x[:1])


# ---- OpenVINO and the QDQ model ------------------------------------------------------------------


def _ov_quantize(x, scale, zp, dtype):
    import openvino as ov

    t = ONNX_TYPES[dtype]
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", t, list(x.shape))],
                              initializer=[numpy_helper.from_array(np.float32(scale), "s"),
                                           _zp_tensor(np.asarray(zp), dtype, "z")])
    model = ov.Core().read_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString(), b"")
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return compiled(x)[0]


@pytest.mark.parametrize("scale,zp,dtype", [(0.5, 3, "uint8"), (0.5, 4, "uint8"), (0.1, 7, "uint8"),
                                            (0.037, -5, "int8"), (1 / 255, 0, "uint8")])
def test_fake_quantize_is_what_openvino_computes(scale, zp, dtype):
    rng = np.random.default_rng(0)
    ties = ((np.arange(4000) % 200) - 60 + 0.5).astype(np.float32) * np.float32(scale)
    x = np.concatenate([ties, rng.uniform(-150, 150, 4000).astype(np.float32) * np.float32(scale)])
    assert np.array_equal(quant.fake_quantize(x, scale, zp, dtype), _ov_quantize(x, scale, zp, dtype))


@pytest.fixture(scope="module")
def cameranet_qdq():
    from npukit import rewrites
    from npukit.data import shapes_dataset
    from npukit.models import CameraNet

    net = CameraNet.pretrained()
    folded = rewrites.fold_batchnorm(net.to_onnx())
    return net, folded, quant.to_qdq(folded, shapes_dataset(32, seed=7)[0])


def test_qdq_cameranet_is_valid_and_close_to_reference(cameranet_qdq):
    from npukit.data import shapes_dataset

    net, folded, qdq = cameranet_qdq
    onnx.checker.check_model(qdq, full_check=True)
    images, _ = shapes_dataset(8, seed=11)
    ref = ReferenceEvaluator(qdq).run(None, {"image": images})[0]
    mine = quant.integer_forward(qdq, images)
    assert np.allclose(mine, ref, atol=0.05)
    assert np.array_equal(mine.argmax(1), ref.argmax(1))


def test_qdq_cameranet_runs_int8_on_openvino(cameranet_qdq):
    import openvino as ov

    _, _, qdq = cameranet_qdq
    compiled = ov.Core().compile_model(ov.Core().read_model(qdq.SerializeToString(), b""), "CPU",
                                       {"INFERENCE_PRECISION_HINT": "f32"})
    convs = [op.get_rt_info() for op in compiled.get_runtime_model().get_ordered_ops()
             if op.get_rt_info()["layerType"].astype(str) in ("Convolution", "FullyConnected")]
    assert len(convs) == 8
    assert all(ri["runtimePrecision"].astype(str) in ("u8", "i8") for ri in convs)


def test_float_forward_matches_cameranet(cameranet_qdq):
    from npukit.data import shapes_dataset

    net, folded, _ = cameranet_qdq
    images, _ = shapes_dataset(4, seed=2)
    logits = quant._float_forward(folded, images)["logits"]
    assert np.allclose(logits, net(images), atol=1e-4)


def test_to_qdq_refuses_unfolded_models_and_empty_data(cameranet_qdq):
    from npukit.data import shapes_dataset
    from npukit.models import CameraNet

    _, folded, _ = cameranet_qdq
    with pytest.raises(ValueError, match="fold"):
        quant.to_qdq(CameraNet.pretrained().to_onnx(), shapes_dataset(2, seed=0)[0])
    with pytest.raises(ValueError, match="at least one"):
        quant.to_qdq(folded, np.zeros((0, 3, 32, 32), np.float32))
    with pytest.raises(ValueError, match="keep_float"):
        quant.to_qdq(folded, shapes_dataset(2, seed=0)[0], keep_float=["nope"])
