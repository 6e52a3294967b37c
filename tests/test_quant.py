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


def _brute_force_top(x: np.ndarray, bits: int, n: int = 4000) -> tuple[float, float]:
    """The clip top c in (0, max] whose unsigned ``bits``-bit quantize–dequantize MSE is smallest, by trying n of them."""
    x = x.astype(np.float64).ravel()
    best = (np.inf, 0.0)
    for c in np.linspace(x.max() / n, x.max(), n):
        s = c / (2**bits - 1)
        err = float(np.mean((np.clip(np.rint(x / s), 0, 2**bits - 1) * s - x) ** 2))
        best = min(best, (err, float(c)))
    return best[1], best[0]


def _mse_of(x: np.ndarray, top: float, bits: int) -> float:
    s = top / (2**bits - 1)
    return float(np.mean((np.clip(np.rint(x.astype(np.float64) / s), 0, 2**bits - 1) * s - x) ** 2))


@pytest.mark.parametrize("bits", [8, 4, 3])
def test_mse_range_is_searched_for_the_bit_width(bits):
    """choose_range's "mse" clip at b bits is the brute-force optimum of b-bit quantization, not the 8-bit one."""
    rng = np.random.default_rng(bits)
    x = np.maximum(rng.standard_normal(30000) * rng.exponential(1.0, 30000), 0).astype(np.float32)   # ReLU-like
    lo, hi = quant.choose_range(x, bits, False, method="mse")
    assert float(lo) == 0.0
    top, err = _brute_force_top(x, bits)
    assert _mse_of(x, float(hi), bits) <= err * 1.002                 # as good as trying 4000 clips
    if bits < 8:
        top8 = float(quant.choose_range(x, 8, False, method="mse")[1])
        assert _mse_of(x, top8, bits) > 1.2 * err and float(hi) < 0.9 * top8      # the 8-bit clip is far off


def test_clipping_figure_clips_cameranets_activation_at_the_4_bit_optimum():
    """Figure 6.2's "mse" clip at 4 bits, on block2.pw_relu of 64 calibration images, against a brute-force search."""
    from npukit.data import shapes_dataset
    from npukit.figures import quant as fq
    from npukit.models import CameraNet

    act = CameraNet.pretrained().activations(shapes_dataset(64, seed=7)[0])["block2.pw_relu"]
    fig = fq.clipping_figure(act, bits=(4,), methods=("mse",))
    step = next(s for s in fig.layout.sliders[0].steps if s.label == "4-bit mse")
    top = max(shape.x0 for shape in step.args[1]["shapes"])
    want, err = _brute_force_top(act, 4, n=1000)
    assert _mse_of(act, top, 4) <= err * 1.002
    assert abs(top - want) < 0.05 * want
    assert f"MSE {_mse_of(act, top, 4):.2e}" in step.args[1]["title.text"]


def test_choose_qparams_mse_uses_its_dtypes_grid():
    rng = np.random.default_rng(1)
    x = rng.exponential(1.0, 20000).astype(np.float32)
    for dtype, bits in (("uint8", 8), ("uint4", 4)):
        p = quant.choose_qparams(x, dtype, False, method="mse")
        top = float(p.scale) * (quant.qrange(dtype)[1] - int(p.zero_point))
        assert np.isclose(top, float(quant.choose_range(x, bits, False, method="mse")[1]), rtol=1e-6)


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




@pytest.mark.parametrize("fmt,onnx_type", [("float8_e4m3fn", TensorProto.FLOAT8E4M3FN), ("float8_e5m2", TensorProto.FLOAT8E5M2)])
@pytest.mark.parametrize("saturate", [True, False])
def test_fp8_with_infinities_matches_onnx_cast(fmt, onnx_type, saturate):
    """ONNX Cast (opset 21) to FP8 and back, including ±inf, NaN and values beyond the largest finite one."""
    x = np.concatenate([_all_kinds_of_float32(2000, seed=11), np.float32([np.inf, -np.inf, 1e6, -1e6, 500, 3e-10])])
    cast = helper.make_node("Cast", ["x"], ["y"], to=onnx_type, saturate=int(saturate))
    back = helper.make_node("Cast", ["y"], ["z"], to=TensorProto.FLOAT)
    graph = helper.make_graph([cast, back], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [len(x)])])
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])).run(None, {"x": x})[0]
        assert _same_bits(quant.to_float(x, fmt, saturate=saturate), want)
