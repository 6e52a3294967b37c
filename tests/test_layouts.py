"""Tests for npukit.layouts, against NumPy, brute-force loops and ONNX's reference Conv."""

from __future__ import annotations

import functools
import itertools
import math
import statistics

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from npukit import figures
from npukit import layouts as L

LAYOUT_SETS = ["NCHW", "CHW", "NCDHW", "NC", "HW"]


@st.composite
def layout_pairs(draw):
    """(shape, src, dst) with random letter sets, orders and sizes."""
    letters = draw(st.sampled_from(LAYOUT_SETS))
    src = "".join(draw(st.permutations(letters)))
    dst = "".join(draw(st.permutations(letters)))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=len(src), max_size=len(src))))
    return shape, src, dst


# ---- convert and permutation ------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(case=layout_pairs(), seed=st.integers(0, 2**16))
def test_convert_matches_transpose_and_round_trips(case, seed):
    shape, src, dst = case
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    axes = [src.index(a) for a in dst]  # written out independently of L.permutation
    y = L.convert(x, src, dst)
    assert y.flags.c_contiguous
    np.testing.assert_array_equal(y, np.transpose(x, axes))
    np.testing.assert_array_equal(L.convert(y, dst, src), x)
    v = L.convert(x, src, dst, copy=False)
    assert np.shares_memory(v, x) and v.shape == y.shape


@pytest.mark.parametrize("copy", ["no", 0, 1, None, "False"])
def test_convert_copy_must_be_a_bool(copy):
    """A truthy string must not silently mean "copy"."""
    with pytest.raises(TypeError, match="copy must be True or False"):
        L.convert(np.zeros((1, 2, 3, 4)), "NCHW", "NHWC", copy=copy)
    assert not L.convert(np.zeros((1, 2, 3, 4)), "NCHW", "NHWC", copy=np.False_).flags.c_contiguous


def test_convert_named_layouts():
    x = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    y = L.convert(x, "NCHW", "NHWC")
    for n, c, h, w in itertools.product(range(2), range(3), range(4), range(5)):
        assert y[n, h, w, c] == x[n, c, h, w]
    img = x[0]
    hwc = L.convert(img, "CHW", "HWC")
    assert hwc.shape == (4, 5, 3) and hwc[1, 2, 0] == img[0, 1, 2]
    assert L.permutation("NCHW", "NCHW") == (0, 1, 2, 3)


@settings(max_examples=150, deadline=None)
@given(case=layout_pairs())
def test_conversion_is_free_agrees_with_numpy(case):
    shape, src, dst = case
    x = np.zeros(shape, np.float32)
    perm = [src.index(a) for a in dst]
    moved = not np.shares_memory(np.ascontiguousarray(np.transpose(x, perm)), x)
    assert L.conversion_is_free(shape, src, dst) == (not moved)


def test_conversion_is_free_empty_tensor():
    assert L.conversion_is_free((0, 3, 4, 4), "NCHW", "NHWC")


def test_onednn_tags():
    assert L.onednn_tag("NCHW") == "abcd"
    assert L.onednn_tag("NHWC") == "acdb"
    assert L.onednn_tag("NCHW", 16) == "aBcd16b"
    assert L.onednn_tag("NCDHW", 8) == "aBcde8b"
    assert L.onednn_tag("NDHWC") == "acdeb"
    assert L.onednn_tag("HWC") == "bca"


@pytest.mark.parametrize(
    "args, exc, match",
    [
        (([1, 2], "NC", "CN"), TypeError, "x must be a numpy.ndarray"),
        ((np.zeros((1, 2)), 4, "CN"), TypeError, "src must be a layout string"),
        ((np.zeros((1, 2)), "NC", None), TypeError, "dst must be a layout string"),
        ((np.zeros((1, 2, 3, 4)), "NCXW", "NHWC"), ValueError, "src must be a layout string of the letters"),
        ((np.zeros((1, 2, 3, 4)), "NCHW", ""), ValueError, "dst must be a layout string of the letters"),
        ((np.zeros((1, 2, 3, 4)), "NCHH", "NHCH"), ValueError, "src must not repeat a letter"),
        ((np.zeros((1, 2, 3, 4)), "NCHW", "NHW"), ValueError, "dst must have the same letters as src"),
        ((np.zeros((2, 3, 4)), "NCHW", "NHWC"), ValueError, r"src 'NCHW' names 4 axes but x has 3"),
    ],
)
def test_convert_errors(args, exc, match):
    with pytest.raises(exc, match=match):
        L.convert(*args)


@pytest.mark.parametrize(
    "fn, args, exc, match",
    [
        (L.conversion_is_free, ((1, 3, 4), "NCHW", "NHWC"), ValueError, "names 4 axes but shape has 3"),
        (L.conversion_is_free, ((1, -3, 4, 4), "NCHW", "NHWC"), ValueError, r"shape\[1\] must be non-negative"),
        (L.onednn_tag, ("NCHQ",), ValueError, "layout must be a layout string"),
        (L.onednn_tag, ("NHW", 16), ValueError, "block needs a channel axis"),
        (L.onednn_tag, ("NCHW", 0), ValueError, "block must be >= 1"),
        (L.onednn_tag, ("NCHW", 2.0), TypeError, "block must be an integer"),
        (L.round_up, (-1, 4), ValueError, "n must be >= 0"),
        (L.round_up, (3, 0), ValueError, "multiple must be >= 1"),
    ],
)
def test_layout_helper_errors(fn, args, exc, match):
    with pytest.raises(exc, match=match):
        fn(*args)


# ---- blocked layouts and padding ---------------------------------------------------


BLOCKED_DTYPES = ["float32", "float16", "float64", "int8", "uint8", "int32", "int64", "bool", "complex64"]


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 3), c=st.integers(1, 40), spatial=st.lists(st.integers(1, 5), min_size=0, max_size=3),
    block=st.sampled_from([1, 2, 3, 4, 8, 16]), seed=st.integers(0, 2**16), dtype=st.sampled_from(BLOCKED_DTYPES),
)
def test_blocked_round_trip_and_element_map(n, c, spatial, block, seed, dtype):
    x = (np.random.default_rng(seed).standard_normal((n, c, *spatial)) * 50).astype(dtype)
    b = L.to_blocked(x, block)
    cb = -(-c // block)
    assert b.shape == (n, cb, *spatial, block) and b.flags.c_contiguous
    assert b.dtype == x.dtype  # a blocked layout moves elements, it does not convert them
    # every element where the blocked formula says, checked by a loop over channels
    for ch in range(c):
        np.testing.assert_array_equal(b[:, ch // block, ..., ch % block], x[:, ch])
    # the padding is zeros
    assert not b[:, -1, ..., c - (cb - 1) * block:].any()
    y = L.from_blocked(b, block, c)
    np.testing.assert_array_equal(y, x)
    assert y.dtype == x.dtype and y.flags.c_contiguous and not np.shares_memory(y, b)


@pytest.mark.parametrize("dtype", BLOCKED_DTYPES)
def test_to_blocked_keeps_dtype_and_bytes(dtype):
    """Each element keeps its exact bytes: compared as raw bytes with a loop over channels."""
    x = (np.arange(2 * 5 * 3 * 2) % 7 - 3).reshape(2, 5, 3, 2).astype(dtype)
    b = L.to_blocked(x, 4)
    assert b.dtype == x.dtype and b.itemsize == x.itemsize and b.nbytes == 2 * 2 * 3 * 2 * 4 * x.itemsize
    for ch in range(5):
        assert b[:, ch // 4, :, :, ch % 4].tobytes() == x[:, ch].tobytes()
    assert L.from_blocked(b, 4, 5).dtype == x.dtype


def test_to_blocked_non_contiguous_input():
    x = np.arange(2 * 5 * 3 * 4, dtype=np.float32).reshape(2, 3, 4, 5).transpose(0, 3, 1, 2)  # NHWC bytes
    np.testing.assert_array_equal(L.from_blocked(L.to_blocked(x, 4), 4, 5), x)


def test_from_blocked_without_blocks_is_refused():
    with pytest.raises(ValueError, match="Cb >= 1"):
        L.from_blocked(np.zeros((1, 0, 3, 3, 8)), 8, 3)


def test_padding_cost_record_is_checked():
    assert L.PaddingCost([1, 3], [1, 16], 12, 64).shape == (1, 3)  # lists become tuples
    with pytest.raises(ValueError, match="nbytes and padded_nbytes must count one itemsize"):
        L.PaddingCost((1, 3), (1, 16), 12, 60)  # 4 bytes per element before, 3.75 after
    with pytest.raises(ValueError, match="padded_shape must have the axes of shape"):
        L.PaddingCost((1, 3), (1, 2), 12, 8)


def test_padding_cost():
    x = np.ones((2, 3, 4, 4), np.float32)
    padded = np.pad(x, ((0, 0), (0, 13), (0, 0), (0, 0)))  # 3 channels zero-padded to 16, by NumPy
    cost = L.padding_cost((2, 3, 4, 4), 16)
    assert cost.padded_shape == padded.shape and cost.padded_nbytes == padded.nbytes and cost.nbytes == x.nbytes
    assert cost.wasted_bytes == 2 * 13 * 16 * 4 and math.isclose(cost.wasted_fraction, 13 / 16)
    assert L.padding_cost((1, 4, 4, 3), 8, axis=-1).padded_shape == (1, 4, 4, 8)
    assert L.padding_cost((1, 64, 7, 7), 16, itemsize=1).wasted_bytes == 0
    assert L.padding_cost((0, 3), 4).wasted_fraction == 0.0


@pytest.mark.parametrize(
    "fn, args, exc, match",
    [
        (L.to_blocked, ([[1.0]], 4), TypeError, "x must be a numpy.ndarray"),
        (L.to_blocked, (np.zeros(3), 4), ValueError, "x must have at least 2 axes"),
        (L.to_blocked, (np.zeros((1, 3)), 0), ValueError, "block must be >= 1"),
        (L.to_blocked, (np.zeros((1, 3)), "4"), TypeError, "block must be an integer"),
        (L.from_blocked, (np.zeros((1, 4)), 4, 3), ValueError, "x must have at least 3 axes"),
        (L.from_blocked, (np.zeros((1, 2, 3, 3, 8)), 16, 20), ValueError, r"block must equal the last axis of x \(8\)"),
        (L.from_blocked, (np.zeros((1, 2, 3, 3, 8)), 8, 20), ValueError, r"channels must be in 9\.\.16"),
        (L.from_blocked, (np.zeros((1, 2, 3, 3, 8)), 8, 8), ValueError, r"channels must be in 9\.\.16"),
        (L.from_blocked, (np.zeros((1, 2, 3, 3, 8)), 8, 0), ValueError, "channels must be >= 1"),
        (L.padding_cost, ((1, 3), 0), ValueError, "multiple must be >= 1"),
        (L.padding_cost, ((1, 3), 4, 5), ValueError, r"axis must be in \[-2, 2\)"),
        (L.padding_cost, ((1, 3), 4, 1, 0), ValueError, "itemsize must be >= 1"),
    ],
)
def test_blocked_and_padding_errors(fn, args, exc, match):
    with pytest.raises(exc, match=match):
        fn(*args)


# ---- im2col against ONNX's reference convolution -----------------------------------------


@functools.lru_cache(maxsize=None)
def _onnx_conv(strides, pads, dilations):
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("Conv", ["X", "W"], ["Y"], strides=list(strides), pads=list(pads), dilations=list(dilations))
    graph = helper.make_graph(
        [node], "conv",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, None), helper.make_tensor_value_info("W", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    return ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


@st.composite
def conv_cases(draw):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pads = tuple(draw(st.lists(st.integers(0, 2), min_size=4, max_size=4)))  # ONNX: top, left, bottom, right
    h = draw(st.integers(max(1, dh * (kh - 1) + 1 - pads[0] - pads[2]), 8))
    w = draw(st.integers(max(1, dw * (kw - 1) + 1 - pads[1] - pads[3]), 8))
    n, c, co = draw(st.integers(1, 2)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    return (n, c, h, w), (co, c, kh, kw), (sh, sw), pads, (dh, dw)


@settings(max_examples=60, deadline=None)
@given(case=conv_cases(), seed=st.integers(0, 2**16))
def test_im2col_gemm_equals_onnx_conv(case, seed):
    xshape, wshape, stride, pads, dilation = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(xshape).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    want = _onnx_conv(stride, pads, dilation).run(None, {"X": x, "W": w})[0]
    cols = L.im2col(x, wshape[2:], stride=stride, pad=pads, dilation=dilation)
    n, ho, wo = cols.shape[:3]
    assert cols.shape == (n, ho, wo, xshape[1], *wshape[2:])
    y = cols.reshape(n * ho * wo, -1) @ w.reshape(wshape[0], -1).T  # NHWC rows, as the issue states
    np.testing.assert_allclose(y.reshape(n, ho, wo, -1).transpose(0, 3, 1, 2), want, rtol=1e-4, atol=1e-4)
    assert np.shares_memory(cols, x) == (not any(pads))


@settings(max_examples=40, deadline=None)
@given(case=conv_cases(), seed=st.integers(0, 2**16))
def test_im2col_is_a_view_without_padding_and_matches_a_loop(case, seed):
    xshape, wshape, stride, _, dilation = case
    kh, kw = wshape[2:]
    assume(xshape[2] >= dilation[0] * (kh - 1) + 1 and xshape[3] >= dilation[1] * (kw - 1) + 1)
    base = np.random.default_rng(seed).standard_normal((xshape[0], xshape[1] + 1, xshape[2] + 2, xshape[3]))
    x = base[:, 1:, ::1, :][:, :, 1:-1]  # a non-contiguous view: im2col must follow any strides
    cols = L.im2col(x, (kh, kw), stride=stride, dilation=dilation)
    assert np.shares_memory(cols, x) and not cols.flags.writeable
    n, ho, wo = cols.shape[:3]
    for i, j, p, q in itertools.product(range(ho), range(wo), range(kh), range(kw)):
        np.testing.assert_array_equal(cols[:, i, j, :, p, q], x[:, :, i * stride[0] + p * dilation[0], j * stride[1] + q * dilation[1]])


@pytest.mark.parametrize("name, value", [("kernel", 2.7), ("kernel", (3, 2.0)), ("stride", "2"), ("pad", True),
                                         ("dilation", np.array([1, 1])), ("kernel", "33")])
def test_im2col_refuses_non_integers(name, value):
    """A float such as 2.7 must not be truncated to 2, nor a string read as digits."""
    args = {"kernel": 2, name: value}
    with pytest.raises(TypeError, match=name):
        L.im2col(np.zeros((1, 1, 6, 6)), **args)


def test_im2col_blowup_matches_materialised_copy():
    for shape, k, s, p in [((1, 16, 16, 16), 3, 1, 1), ((2, 3, 32, 32), 3, 2, 1), ((1, 4, 9, 7), (2, 3), (1, 2), 0)]:
        x = np.zeros(shape, np.float32)
        cols = np.ascontiguousarray(L.im2col(x, k, s, p))
        assert math.isclose(L.im2col_blowup(shape, k, s, p), cols.nbytes / x.nbytes)


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        ((np.zeros((1, 3, 4)), 3), {}, ValueError, "x must be 4-D NCHW"),
        (("x", 3), {}, TypeError, "x must be a numpy.ndarray"),
        ((np.zeros((1, 1, 4, 4)), 0), {}, ValueError, "kernel must be >= 1"),
        ((np.zeros((1, 1, 4, 4)), (3, 3, 3)), {}, ValueError, "kernel must be an integer or a pair"),
        ((np.zeros((1, 1, 4, 4)), 2.5), {}, TypeError, "kernel must be an integer"),
        ((np.zeros((1, 1, 4, 4)), 3), {"stride": 0}, ValueError, "stride must be >= 1"),
        ((np.zeros((1, 1, 4, 4)), 3), {"stride": (1, -2)}, ValueError, r"stride\[1\] must be >= 1"),
        ((np.zeros((1, 1, 4, 4)), 3), {"dilation": 0}, ValueError, "dilation must be >= 1"),
        ((np.zeros((1, 1, 4, 4)), 3), {"pad": -1}, ValueError, "pad must be >= 0"),
        ((np.zeros((1, 1, 4, 4)), 3), {"pad": (0, 0, -1, 0)}, ValueError, r"pad\[2\] must be >= 0"),
        ((np.zeros((1, 1, 4, 4)), 3), {"pad": (1, 1, 1)}, ValueError, "pad must be an integer, \\(ph, pw\\)"),
        ((np.zeros((1, 1, 4, 4)), 5), {}, ValueError, "does not fit the padded input"),
        ((np.zeros((1, 1, 4, 4)), 3), {"dilation": 2}, ValueError, "does not fit the padded input"),
    ],
)
def test_im2col_errors(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        L.im2col(*args, **kwargs)


@pytest.mark.parametrize(
    "fn, args, exc, match",
    [
        (L.im2col_blowup, ((1, 3, 4), 3), ValueError, "shape must be a non-empty 4-D NCHW shape"),
        (L.im2col_blowup, ((1, 3, 4, 4), 3, 1, -2), ValueError, "pad must be >= 0"),
    ],
)
def test_conv_helper_errors(fn, args, exc, match):
    with pytest.raises(exc, match=match):
        fn(*args)


# ---- measurement, numbers and figures (no timing assertions) ------------------------------


@pytest.mark.parametrize("dst", ["NHWC", "NCHW16c", "NCHW3c"])
def test_measure_conversion_record(dst):
    r = L.measure_conversion((1, 6, 4, 4), "NCHW", dst, repeat=1, warmup=0, rounds=1)
    assert r.nbytes == 6 * 16 * 4 and r.shape == (1, 6, 4, 4) and r.dst == dst
    assert r.convert_s > 0 and r.copy_s > 0
    assert r.convert_gbps > 0 and r.copy_gbps > 0 and r.slowdown > 0
    assert math.isnan(r.view_s) == (dst == "NCHW16c")
    assert r.label == f"1×6×4×4 NCHW→{dst}"


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        (((1, 3, 4),), {}, ValueError, "src 'NCHW' names 4 axes but shape has 3"),
        (((1, 3, 4, 4), "NCHW", "NHWQ"), {}, ValueError, "dst must be a layout string"),
        (((1, 3, 4, 4), "NHWC", "NHWC16c"), {}, ValueError, "a blocked dst needs src to start with 'NC'"),
        (((1, 3, 4, 4), "NCHW", "NCHW0c"), {}, ValueError, "the block size in dst must be >= 1"),
        (((1, 3, 4, 4),), {"repeat": 0}, ValueError, "repeat must be >= 1"),
        (((1, 3, 4, 4),), {"warmup": -1}, ValueError, "warmup must be >= 0"),
        (((1, 3, 4, 4),), {"rounds": 0}, ValueError, "rounds must be >= 1"),
        (((1, 3, 4, 4),), {"dtype": "float99"}, TypeError, "dtype must be a NumPy dtype"),
    ],
)
def test_measure_conversion_errors(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        L.measure_conversion(*args, **kwargs)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (((1, 0, 4, 4),), {}, "shape must have no axis of length 0"),
        (((1, 3, 4, 4),), {"dtype": object}, "dtype must be a numeric dtype"),
        (((1, 3, 4, 4),), {"dtype": "U4"}, "dtype must be a numeric dtype"),
        (((1, 3, 4, 4), "NCHW", "NCHW²c"), {}, "dst must be a layout string"),
    ],
)
def test_measure_conversion_refuses_meaningless_measurements(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        L.measure_conversion(*args, **kwargs)


@pytest.mark.parametrize("dtype", ["int8", "float16", "bool", "complex64"])
def test_measure_conversion_counts_the_dtype_bytes(dtype):
    r = L.measure_conversion((2, 3, 4, 5), dtype=dtype, repeat=1, warmup=0, rounds=1)
    assert r.dtype == dtype and r.nbytes == np.zeros((2, 3, 4, 5), dtype).nbytes


@pytest.mark.parametrize(
    "changes, exc, match",
    [
        ({"nbytes": 3072}, ValueError, "nbytes must be the size of shape"),  # float32 bytes counted as int8
        ({"copy_s": 0.0}, ValueError, "copy_s must be a finite number > 0"),  # copy_gbps would divide by zero
        ({"convert_s": float("nan")}, ValueError, "convert_s must be a finite number > 0"),
        ({"view_s": -1.0}, ValueError, "view_s must be a time >= 0"),
        ({"dst": "NHWQ"}, ValueError, "dst must be a layout string"),
        ({"shape": (1, 3, 32)}, ValueError, "names 4 axes but shape has 3"),
        ({"dtype": np.float32}, TypeError, "dtype must be a string"),
    ],
)
def test_conversion_record_is_checked(changes, exc, match):
    fields = dict(shape=(1, 3, 32, 32), src="NCHW", dst="NHWC", dtype="float32", nbytes=12288,
                  convert_s=4e-6, copy_s=1e-6, view_s=1e-7)
    with pytest.raises(exc, match=match):
        L.Conversion(**{**fields, **changes})
    assert math.isnan(L.Conversion(**{**fields, "dst": "NCHW16c", "view_s": float("nan")}).view_s)


def test_numbers_and_figures():
    c = L.Conversion((1, 3, 32, 32), "NCHW", "NHWC", "float32", 12288, 3e-6, 1e-6, 1e-7)
    from npukit import tally

    rows = L.numbers(tally.Context(conversions=[c]))
    assert rows[0].chapter == 2 and rows[0].value == "3.0 µs (3.0× a copy)"
    assert math.isclose(c.slowdown, 3.0) and math.isclose(c.copy_gbps, 2 * 12288 / 1e-6 / 1e9)
    with pytest.raises(TypeError, match=r"conversions\[0\] must be a Conversion"):
        L.numbers(tally.Context(conversions=[{"chapter": 2}]))
    fig = figures.layouts.bandwidth_figure([c], title="t")
    assert fig.layout.title.text == "t" and len(fig.data) == 2
    with pytest.raises(ValueError, match="results must hold at least one"):
        figures.layouts.bandwidth_figure([])
    with pytest.raises(TypeError, match=r"results\[0\] must be a Conversion"):
        figures.layouts.bandwidth_figure([1])
    assert len(figures.layouts.padding_figure().data) == 3
    with pytest.raises(ValueError, match="multiples"):
        figures.layouts.padding_figure(range(1, 4), (0,))
    with pytest.raises(TypeError, match="title must be a string or None"):
        figures.layouts.bandwidth_figure([c], title=3)
    with pytest.raises(TypeError, match="results must be a list or tuple"):
        figures.layouts.bandwidth_figure(c)
    with pytest.raises(TypeError, match="ctx must be a tally.Context"):
        L.numbers([c])


def test_padding_figure_points_and_bad_sequences():
    fig = figures.layouts.padding_figure(range(1, 6), [4, 8])
    # independent reference: zeros added by np.pad to reach the next multiple, as a share of the padded tensor
    for trace, m in zip(fig.data, (4, 8)):
        want = [(-c % m) / (c + (-c % m)) for c in range(1, 6)]
        np.testing.assert_allclose(trace.y, want)
        assert list(trace.x) == [1, 2, 3, 4, 5]
    for bad, exc in [("16", TypeError), ((8, 16.7), TypeError), ((), ValueError), ((8, -16), ValueError)]:
        with pytest.raises(exc, match="multiples"):
            figures.layouts.padding_figure(range(1, 6), bad)
    with pytest.raises(TypeError, match=r"channels\[1\] must be an integer"):
        figures.layouts.padding_figure((1, 2.5))


def test_element_order_figure_matches_the_layouts():
    """The slider's step k must mark the element whose offset is k, in every layout."""
    c, h, w, block = 5, 2, 3, 4
    fig = figures.layouts.element_order_figure(c, h, w, block, row=8)
    x = np.arange(c * h * w).reshape(1, c, h, w)
    flats = {
        "NCHW": x.ravel(),
        "NHWC": L.convert(x, "NCHW", "NHWC").ravel(),
        "nChw4c": L.to_blocked(x + 1, block).ravel() - 1,  # -1 marks padding
    }
    steps = fig.layout.sliders[0].steps
    assert len(steps) == max(f.size for f in flats.values())
    for li, (name, flat) in enumerate(flats.items()):
        assert fig.layout.updatemenus[0].buttons[li].label == name
        for k, e in enumerate(flat):
            xs, ys = steps[k].args[0]["x"][li], steps[k].args[0]["y"][li]
            mx, my = k % 8, -(h + 1) - k // 8  # memory slot k: row of 8 slots, below the tensor
            assert (xs[-5], ys[-5]) == (mx - 0.5, my + 0.5) and (xs[-1], ys[-1]) == (mx - 0.5, my + 0.5)
            if e < 0:  # padding: only the memory box (a closed square)
                assert len(xs) == 5
            else:
                cc, hh, ww = np.unravel_index(e, (c, h, w))
                # first the element's own cell (channel planes side by side), then the memory slot
                assert len(xs) == 10 and (xs[0], ys[0]) == (cc * (w + 1) + ww - 0.5, -hh - 0.5)
    with pytest.raises(ValueError, match="at most 256"):
        figures.layouts.element_order_figure(16, 8, 8)
    with pytest.raises(ValueError, match="channels must be >= 1"):
        figures.layouts.element_order_figure(0)


# ---- lab 2's checkers (npukit.teach): they accept right answers and reject wrong ones --------


def test_lab_checkers_refuse_the_module_and_agree_with_it():
    """The library is the exercise's answer, so the checks refuse it; their references agree with it."""
    from npukit import teach
    from npukit.teach import core, layouts as T

    for checker, library in [("check_to_blocked", L.to_blocked), ("check_from_blocked", L.from_blocked),
                             ("check_im2col_view", lambda x, k, s: L.im2col(x, k, stride=s))]:
        with pytest.raises(AssertionError, match="npukit.layouts"):
            getattr(teach, checker)(library)
    rng = np.random.default_rng(0)
    cases = [(T._tensor(rng), int(rng.choice(T._BLOCKS))) for _ in range(20)]
    core.check("to_blocked", L.to_blocked, cases, T._blocked_by_loops, rtol=0, atol=0)
    cases = [(T._blocked_by_loops(x, b), b, x.shape[1]) for x, b in cases]
    core.check("from_blocked", L.from_blocked, cases, lambda xb, b, c: np.stack([xb[:, i // b, :, :, i % b]
                                                                                for i in range(c)], axis=1),
               rtol=0, atol=0)
    cases = [(rng.standard_normal((2, 3, 5 + i, 7)).astype(np.float32), 1 + i % 3, 1 + i % 2) for i in range(5)]
    core.check("im2col", lambda x, k, s: np.ascontiguousarray(L.im2col(x, k, stride=s)), cases, T._patches_by_loops)
    perms = [((2, 1, 3), (1, 0, 2)), ((1, 4, 2), (1, 0, 2)), ((2, 3, 1, 1), (0, 2, 3, 1))]
    core.check("stays a view", lambda s, p: L.conversion_is_free(s, "NCDH"[: len(s)], "".join("NCDH"[i] for i in p)),
               perms, T._transpose_is_free)


def _blocked(x, block):
    """NCHW → nChw{block}c by a loop: the building block of the wrong answers below (npukit's is refused)."""
    n, c, h, w = x.shape
    out = np.zeros((n, -(-c // block), h, w, block), dtype=x.dtype)
    for ch in range(c):
        out[:, ch // block, :, :, ch % block] = x[:, ch]
    return out


def _im2col(x, k, s):
    n, c, h, w = x.shape
    sn, sc, sh, sw = x.strides
    return np.lib.stride_tricks.as_strided(x, (n, (h - k) // s + 1, (w - k) // s + 1, c, k, k),
                                           (sn, sh * s, sw * s, sc, sh, sw), writeable=False)


def _im2col_from_shape(x, k, s):
    """Strides computed from the shape, as if x were C-contiguous: wrong for channels-last input."""
    n, c, h, w = x.shape
    it = x.itemsize
    strides = (c * h * w * it, s * w * it, s * it, h * w * it, w * it, it)
    return np.lib.stride_tricks.as_strided(x, (n, (h - k) // s + 1, (w - k) // s + 1, c, k, k), strides, writeable=False)


def _blocked_without_zeros(x, block):
    n, c, h, w = x.shape
    out = np.full((n, -(-c // block), h, w, block), 7.0, dtype=x.dtype)
    for ch in range(c):
        out[:, ch // block, :, :, ch % block] = x[:, ch]
    return out


@pytest.mark.parametrize(
    "checker, wrong, match",
    [
        ("check_to_blocked", lambda x, b: np.ascontiguousarray(_blocked(x, b).transpose(0, 1, 4, 2, 3)), "to_blocked: wrong answer"),
        ("check_to_blocked", _blocked_without_zeros, "to_blocked: wrong answer"),
        ("check_from_blocked", lambda xb, b, c: np.ascontiguousarray(np.moveaxis(xb, -1, 2).reshape(xb.shape[0], -1, *xb.shape[2:4])),
         "from_blocked: wrong answer"),  # keeps the padding channels
        ("check_im2col_view", lambda x, k, s: np.ascontiguousarray(_im2col(x, k, s)), "does not share memory with x"),
        ("check_im2col_view", lambda x, k, s: _im2col(x, k, s).transpose(0, 2, 1, 3, 4, 5), "im2col as a view: wrong answer"),
        ("check_im2col_view", lambda x, k, s: [1], "return a numpy.ndarray"),
        ("check_im2col_view", _im2col_from_shape, "take the strides from x.strides"),
        ("check_im2col_view", lambda x, k, s: np.lib.stride_tricks.as_strided(
            x, _im2col(x, k, s).shape, _im2col(x, k, s).strides), "the result is writeable"),
        ("check_to_blocked", lambda x, b: np.moveaxis(np.pad(x, ((0, 0), (0, -x.shape[1] % b), (0, 0), (0, 0)))
                                                      .reshape(x.shape[0], -1, b, *x.shape[2:]), 2, -1),
         "not C-contiguous"),
        ("check_from_blocked", lambda xb, b, c: np.moveaxis(xb, -1, 2).reshape(xb.shape[0], -1, *xb.shape[2:4])[:, :c],
         "not C-contiguous"),
        ("check_stays_view", lambda s, p: list(p) == sorted(p), "stays a view: wrong answer"),
        ("check_stays_view", lambda s, p: "yes", "return True or False"),
    ],
)
def test_lab_checkers_reject_wrong_answers(checker, wrong, match):
    from npukit import teach

    with pytest.raises(AssertionError, match=match):
        getattr(teach, checker)(wrong)


def _fake_compare(times_of):
    """A stand-in for measure.compare: calls every function once, then returns the given per-round times."""
    from npukit import measure

    def fake(fns, **kw):
        for f in fns.values():
            f()
        return measure.Comparison.from_times({k: times_of(k) for k in fns})
    return fake


def test_measure_conversions_keeps_each_round_paired(monkeypatch):
    """Every copy and conversion of the call comes from the same rounds; the records keep them in order."""
    from npukit import measure

    per_round = {"copy 768": [1e-6, 2e-6, 4e-6], "0 conversion": [3e-6, 6e-6, 12e-6],   # one copy per byte size
                 "copy 1024": [2e-6, 4e-6, 8e-6], "1 conversion": [2e-6, 4e-6, 8e-6]}
    monkeypatch.setattr(measure, "compare", _fake_compare(per_round.__getitem__))
    a, b = L.measure_conversions([((1, 3, 8, 8), "NCHW", "NHWC"), ((1, 16, 4, 4), "NCHW", "NCHW8c")], rounds=3)
    assert (a.copy_times, a.convert_times) == (tuple(per_round["copy 768"]), tuple(per_round["0 conversion"]))
    assert a.copy_s == 2e-6 and a.convert_s == 6e-6 and a.rounds == 3
    assert a.ratios == pytest.approx((3.0, 3.0, 3.0)) and a.slowdown == pytest.approx(3.0)
    v = a.verdict      # a slow round slows both sides and cancels: the interval is the single ratio
    assert (v.word, v.baseline, v.rounds) == ("slower", "a plain copy", 3) and v.low == v.high == pytest.approx(3.0)
    assert b.verdict.word == "indistinguishable" and b.dst == "NCHW8c" and b.label == "1×16×4×4 NCHW→NCHW8c"
    # two conversions of one call compared round by round
    both = measure.Comparison.from_times({"a": a.convert_times, "b": b.convert_times}).verdict("b")
    assert both.ratio == pytest.approx(2 / 3) and both.word == "faster"


def test_conversions_of_one_byte_size_share_one_copy(monkeypatch):
    """Two conversions of the same bytes are held against one copy, timed once per round."""
    from npukit import measure

    seen = []
    per_round = {"copy 1024": [2e-6, 4e-6, 8e-6], "0 conversion": [3e-6, 6e-6, 12e-6],
                 "1 conversion": [4e-6, 8e-6, 16e-6]}

    def times_of(k):
        seen.append(k)
        return per_round[k]
    monkeypatch.setattr(measure, "compare", _fake_compare(times_of))
    a, b = L.measure_conversions([((1, 16, 4, 4), "NCHW", "NHWC"), ((1, 16, 4, 4), "NCHW", "NCHW8c")], rounds=3)
    assert sorted(seen) == ["0 conversion", "1 conversion", "copy 1024"] and a.copy_times == b.copy_times
    assert a.slowdown == pytest.approx(1.5) and b.slowdown == pytest.approx(2.0)


def test_measure_conversion_makes_at_least_three_rounds():
    r = L.measure_conversion((1, 6, 4, 4), "NCHW", "NHWC", repeat=1, warmup=0, rounds=1)
    assert r.rounds == 3 and r.convert_s == statistics.median(r.convert_times)
    assert r.verdict.low <= r.verdict.ratio <= r.verdict.high and r.verdict.ratio == pytest.approx(r.slowdown)


def test_conversion_without_rounds_has_no_verdict_and_the_figure_draws_whiskers():
    c = L.Conversion((1, 3, 32, 32), "NCHW", "NHWC", "float32", 12288, 3e-6, 1e-6, 1e-7)
    assert c.verdict is None and c.rounds == 0 and c.ratios == ()
    r = L.Conversion((1, 3, 32, 32), "NCHW", "NHWC", "float32", 12288, 3e-6, 1e-6, 1e-7,
                     (1e-6, 0.5e-6, 2e-6), (3e-6, 2e-6, 4e-6))
    fig = figures.layouts.bandwidth_figure([c, r])
    assert fig.data[0].error_x.arrayminus[0] == 0.0 and fig.data[0].error_x.array[1] > 0
    assert "95%" in fig.data[1].text[1] and "95%" not in fig.data[1].text[0]
    from npukit import tally

    row = L.numbers(tally.Context(conversions=[r]))[0]
    assert "95% interval" in row.value and "3 interleaved rounds" in row.how
