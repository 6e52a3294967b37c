"""Tests of npukit.qarith against independent references: ONNX QLinearMatMul/QLinearConv/ConvInteger
under onnx.reference, exact rational arithmetic, and the QDQ model run by onnx.reference and OpenVINO."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from npukit import ptq, qarith

# ---- integer arithmetic -----------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(real=st.floats(float(np.float32(1e-9)), float(np.float32(1e6)), width=32))
def test_quantize_multiplier_is_exact_for_float32(real):
    m0, shift = qarith.quantize_multiplier(np.float32(real))
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
    acc = qarith.qmatmul(a, za, b, 0)
    m0, shift = qarith.quantize_multiplier(np.float32(sa * sb) / sy)
    got = qarith.requantize(acc, m0, shift, zy, "uint8")
    assert np.array_equal(got, want)


def test_requantize_double_rounding_is_two_roundings():
    from fractions import Fraction

    def away(f: Fraction) -> int:  # round half away from zero
        return int((abs(f) + Fraction(1, 2)).__floor__()) * (1 if f >= 0 else -1)

    acc = np.arange(-2000, 2000, dtype=np.int32)
    for real in (0.125, 0.3, 0.0071):
        m0, shift = qarith.quantize_multiplier(np.float32(real))
        single = qarith.requantize(acc, m0, shift, 0, "int16")
        double = qarith.requantize(acc, m0, shift, 0, "int16", rounding="double")
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
    acc = qarith.qconv(x, zx, w, 0, bias, stride=stride, pad=pad, groups=groups)
    m0, shift = qarith.quantize_multiplier((np.float32(sx) * sw / np.float32(sy)).astype(np.float32))
    got = qarith.requantize(acc, m0.reshape(1, -1, 1, 1), shift.reshape(1, -1, 1, 1), zy, "uint8")
    assert np.array_equal(got, want)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_zero_point_after_rounding_is_round_then_add_and_differs_only_on_odd_ties(seed):
    rng = np.random.default_rng(seed)
    m0 = 2**30 if rng.random() < 0.5 else int(rng.integers(2**30, 2**31))
    shift, zp = int(rng.integers(0, 12)), int(rng.integers(0, 256))
    acc = rng.integers(-2**16, 2**16, 200).astype(np.int32)
    acc[:50] = (2 * rng.integers(-300, 300, 50) + 1) << shift           # with m0 = 2^30: exact ties
    after = qarith.requantize(acc, m0, shift, zp, "uint8", rounding="half_even_zp_after")
    before = qarith.requantize(acc, m0, shift, zp, "uint8")
    exact = [Fraction(int(a) * m0, 2 ** (31 + shift)) for a in acc]
    assert after.tolist() == [min(max(round(v) + zp, 0), 255) for v in exact]
    assert before.tolist() == [min(max(round(v + zp), 0), 255) for v in exact]
    differ = after != before
    assert all(v.denominator == 2 and zp % 2 == 1 for v, d in zip(exact, differ) if d)


def _qlinear_runtimes(node, inputs, inits, out_type):
    """Run one QLinear* node under onnx.reference, ONNX Runtime (CPU) and OpenVINO (CPU, f32)."""
    import onnxruntime as ort
    import openvino as ov

    graph = helper.make_graph([node], "q", [helper.make_tensor_value_info(k, TensorProto.UINT8, list(v.shape))
                                            for k, v in inputs.items()],
                              [helper.make_tensor_value_info("y", out_type, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    ref = ReferenceEvaluator(model).run(None, inputs)[0]
    ort_y = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)[0]
    core = ov.Core()
    ov_y = core.compile_model(core.read_model(model.SerializeToString(), b""), "CPU",
                              {"INFERENCE_PRECISION_HINT": "f32"})(inputs)[0]
    return ref, ort_y, ov_y


@pytest.mark.parametrize("op", ["QLinearMatMul", "QLinearConv"])
@pytest.mark.parametrize("zy", [3, 4, 0, 255 - 12])
def test_where_each_runtime_adds_the_output_zero_point(op, zy):
    """Exact ties a·M = k + 1/2 (M = 1/2): onnx.reference and OpenVINO round a·M + z; ONNX Runtime rounds a·M, then adds z."""
    a = np.arange(-11, 12, 2, dtype=np.int64)                        # a·M = −5.5 … 5.5
    za = 128
    x = (a + za).astype(np.uint8)
    f = np.float32
    if op == "QLinearMatMul":
        inputs = {"x": x.reshape(-1, 1)}
        inits = [numpy_helper.from_array(f(0.5), "sx"), numpy_helper.from_array(np.uint8(za), "zx"),
                 numpy_helper.from_array(np.int8([[1]]), "w"), numpy_helper.from_array(f(1.0), "sw"),
                 numpy_helper.from_array(np.int8(0), "zw"), numpy_helper.from_array(f(1.0), "sy"),
                 numpy_helper.from_array(np.uint8(zy), "zy")]
        node = helper.make_node("QLinearMatMul", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["y"])
    else:
        inputs = {"x": x.reshape(1, 1, 1, -1)}
        inits = [numpy_helper.from_array(f(0.5), "sx"), numpy_helper.from_array(np.uint8(za), "zx"),
                 numpy_helper.from_array(np.int8([[[[1]]]]), "w"), numpy_helper.from_array(f([1.0]), "sw"),
                 numpy_helper.from_array(np.int8([0]), "zw"), numpy_helper.from_array(f(1.0), "sy"),
                 numpy_helper.from_array(np.uint8(zy), "zy")]
        node = helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"], ["y"],
                                kernel_shape=[1, 1])
    ref, ort_y, ov_y = (v.ravel() for v in _qlinear_runtimes(node, inputs, inits, TensorProto.UINT8))
    m0, shift = qarith.quantize_multiplier(np.float32(0.5))
    before = qarith.requantize(a, m0, shift, zy, "uint8")
    after = qarith.requantize(a, m0, shift, zy, "uint8", rounding="half_even_zp_after")
    assert np.array_equal(ref, before) and np.array_equal(ov_y, before)
    assert np.array_equal(ort_y, after)
    assert np.array_equal(before, after) == (zy % 2 == 0)


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
    assert np.array_equal(qarith.qconv(x, 7, w, 9, pad=1), want)


# ---- a whole QDQ model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cameranet_qdq():
    from npukit import rewrites
    from npukit.data import shapes_dataset
    from npukit.models import CameraNet

    net = CameraNet.pretrained()
    folded = rewrites.fold_batchnorm(net.to_onnx())
    return net, folded, ptq.to_qdq(folded, shapes_dataset(32, seed=7)[0])


def test_qdq_cameranet_is_valid_and_close_to_reference(cameranet_qdq):
    from npukit.data import shapes_dataset

    net, folded, qdq = cameranet_qdq
    onnx.checker.check_model(qdq, full_check=True)
    images, _ = shapes_dataset(8, seed=11)
    ref = ReferenceEvaluator(qdq).run(None, {"image": images})[0]
    mine = qarith.integer_forward(qdq, images)
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


def test_integer_forward_records_uint8_and_slices_do_not_matter(cameranet_qdq):
    from npukit.data import shapes_dataset

    _, _, qdq = cameranet_qdq
    images, _ = shapes_dataset(300, seed=5)                # more than one 256-image slice
    logits, acts = qarith.integer_forward(qdq, images, record=True)
    assert all(a.dtype == np.uint8 and len(a) == 300 for a in acts.values())
    assert np.array_equal(logits[256:], qarith.integer_forward(qdq, images[256:]))
    assert np.array_equal(acts["block3.pw_relu"][:7], qarith.integer_forward(qdq, images[:7], record=True)[1]["block3.pw_relu"])


def test_double_rounding_refuses_what_int32_cannot_hold():
    m0, shift = qarith.quantize_multiplier(np.float32(3.0))          # a left shift of 2
    with pytest.raises(ValueError, match="int32"):
        qarith.requantize(np.int32([2**30]), m0, shift, 0, "int8", rounding="double")
    assert qarith.requantize(np.int32([2**30]), m0, shift, 0, "int8").tolist() == [127]


# ---- cases the mutation test of issue 24 showed untested ------------------------------------------


def test_quantize_multiplier_renormalises_when_rounding_reaches_one():
    """frac·2^31 rounds up to exactly 2^31 for a mantissa within 2^-32 of 1: M0 must become 2^30, shift one less."""
    real = 1 - 2.0**-33                                   # frexp gives frac = 1 - 2^-33, exp = 0
    m0, shift = qarith.quantize_multiplier(real)
    assert (m0, shift) == (2**30, -1)                     # 2^30 · 2^-31 · 2^1 = 1, the nearest M0 · 2^-k
    assert 2**30 <= m0 < 2**31
    m0s, shifts = qarith.quantize_multiplier(np.array([real, 0.75]))
    assert m0s.tolist() == [2**30, 1610612736] and shifts.tolist() == [-1, 0]


def test_qmatmul_subtracts_b_zero_point():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (3, 4)).astype(np.uint8)
    b = rng.integers(-128, 128, (4, 2)).astype(np.int8)
    want = (a.astype(np.int64) - 7) @ (b.astype(np.int64) - 3)
    assert np.array_equal(qarith.qmatmul(a, 7, b, 3), want)
    per_col = np.array([3, -5])
    assert np.array_equal(qarith.qmatmul(a, 7, b, per_col), (a.astype(np.int64) - 7) @ (b.astype(np.int64) - per_col))
