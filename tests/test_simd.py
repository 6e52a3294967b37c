"""Tests for npukit.simd, against ONNX's reference grouped Conv, brute-force loops and NumPy."""

from __future__ import annotations

import functools
import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npukit import simd


@functools.lru_cache(maxsize=None)
def _onnx_depthwise(channels, stride, pad):
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node("Conv", ["X", "W"], ["Y"], group=channels, strides=[stride, stride], pads=[pad] * 4)
    graph = helper.make_graph(
        [node], "dw",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, None), helper.make_tensor_value_info("W", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    return ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


@st.composite
def dw_cases(draw):
    k = draw(st.sampled_from([1, 3, 5]))
    stride, pad = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    h = draw(st.integers(max(1, k - 2 * pad), 9))
    w = draw(st.integers(max(1, k - 2 * pad), 9))
    return draw(st.integers(1, 2)), draw(st.integers(1, 6)), h, w, k, stride, pad


@settings(max_examples=60, deadline=None)
@given(case=dw_cases(), seed=st.integers(0, 2**16))
def test_depthwise_conv_equals_onnx_grouped_conv_in_both_layouts(case, seed):
    n, c, h, w, k, stride, pad = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    wt = rng.standard_normal((c, k, k)).astype(np.float32)
    want = _onnx_depthwise(c, stride, pad).run(None, {"X": x, "W": wt[:, None]})[0]
    got = simd.depthwise_conv(x, wt, stride=stride, pad=pad)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    got_nhwc = simd.depthwise_conv(np.ascontiguousarray(x.transpose(0, 2, 3, 1)), wt, "NHWC", stride=stride, pad=pad)
    assert got_nhwc.shape == (n, want.shape[2], want.shape[3], c)
    np.testing.assert_allclose(got_nhwc.transpose(0, 3, 1, 2), want, rtol=1e-5, atol=1e-5)


def test_depthwise_conv_brute_force_and_strided_input():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, 12, 10))[:, :, ::2]          # a non-contiguous view works too
    wt = rng.standard_normal((3, 3, 3))
    got = simd.depthwise_conv(x, wt, stride=2, pad=1)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    for c in range(3):
        for i in range(got.shape[2]):
            for j in range(got.shape[3]):
                assert math.isclose(got[0, c, i, j], float((xp[0, c, 2 * i:2 * i + 3, 2 * j:2 * j + 3] * wt[c]).sum()),
                                    rel_tol=1e-12, abs_tol=1e-12)
    assert got.dtype == np.float64


@settings(max_examples=80, deadline=None)
@given(extent=st.integers(1, 2000), lanes=st.integers(1, 64))
def test_lane_fill_counts_the_vector_instructions(extent, lanes):
    instructions = 0
    left = extent
    while left > 0:                      # one vector instruction per (partly empty) group of lanes
        instructions += 1
        left -= lanes
    assert simd.lane_fill(extent, lanes) == pytest.approx(extent / (instructions * lanes))


@settings(max_examples=60, deadline=None)
@given(exp=st.integers(0, 14), data=st.data())
def test_channel_sweep_holds_the_volume(exp, data):
    elements = 2**exp * data.draw(st.sampled_from([1, 3, 5]))
    divisors = [d for d in range(1, elements + 1) if elements % d == 0]
    channels = data.draw(st.lists(st.sampled_from(divisors), min_size=1, max_size=5))
    for (n, c, h, w), want_c in zip(simd.channel_sweep(elements, channels), channels):
        assert (n, c) == (1, want_c) and c * h * w == elements and h <= w
        assert not any((h * w) % d == 0 for d in range(h + 1, math.isqrt(h * w) + 1))   # as square as possible


@pytest.mark.parametrize("op", simd.LAYOUT_OPS)
def test_measure_layouts_times_both_layouts(op):
    shapes = [(1, 4, 8, 8), (2, 16, 4, 4)]
    timings = simd.measure_layouts(shapes, op, repeat=1, warmup=0, rounds=1)
    assert [t.shape for t in timings] == shapes and all(t.op == op for t in timings)
    assert all(t.rounds == 3 for t in timings)                     # one round asked for, the fewest with a spread made
    for t in timings:
        per_round = [a / b for a, b in zip(t.nchw_times, t.nhwc_times)]
        assert t.nchw_s == statistics.median(t.nchw_times) and t.nhwc_s == statistics.median(t.nhwc_times)
        assert t.ratio == pytest.approx(statistics.median(per_round)) == pytest.approx(t.verdict.ratio)
        assert t.verdict.low <= t.verdict.ratio <= t.verdict.high and t.verdict.rounds == 3
    assert timings[1].label == "16×4×4"


def test_layout_timing_verdict_pairs_the_rounds():
    """The verdict divides NCHW by NHWC round by round: a slow round slows both sides and cancels."""
    t = simd.LayoutTiming("scale", (1, 4, 8, 8), 2e-6, 1e-6, (1e-6, 2e-6, 4e-6, 2e-6, 8e-6),
                          (0.5e-6, 1e-6, 2e-6, 1e-6, 4e-6))
    assert t.ratio == 2.0 and (t.verdict.low, t.verdict.high, t.verdict.word) == (2.0, 2.0, "slower")
    assert simd.LayoutTiming("scale", (1, 4, 8, 8), 2e-6, 1e-6).verdict is None
    with pytest.raises(ValueError, match="same number of rounds"):
        simd.LayoutTiming("scale", (1, 4, 8, 8), 2e-6, 1e-6, (2e-6, 2e-6), (1e-6,))
    with pytest.raises(ValueError, match="nchw_s must be the median"):
        simd.LayoutTiming("scale", (1, 4, 8, 8), 3e-6, 1e-6, (2e-6, 2e-6), (1e-6, 1e-6))


@pytest.mark.parametrize("op", simd.LAYOUT_OPS)
def test_the_timed_calls_compute_the_same_result_in_both_layouts(op):
    """What is timed is the same arithmetic: compare the two outputs (checked independently of simd)."""
    nchw, nhwc = simd._layout_calls(op, (2, 5, 6, 7), 3)
    a, b = nchw(), nhwc()
    a = a.reshape(2, 5, 6, 7)
    b = b.reshape(2, 6, 7, 5).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_layout_timing_record():
    t = simd.LayoutTiming("scale", (1, 64, 8, 8), 2e-6, 1e-6)
    assert t.ratio == 2.0 and t.label == "64×8×8"
    with pytest.raises(ValueError, match="op"):
        simd.LayoutTiming("conv", (1, 64, 8, 8), 2e-6, 1e-6)
    with pytest.raises(ValueError, match="shape"):
        simd.LayoutTiming("scale", (1, 64, 8), 2e-6, 1e-6)
    with pytest.raises(ValueError, match="nhwc_s"):
        simd.LayoutTiming("scale", (1, 64, 8, 8), 2e-6, 0.0)


# ---- the figures that draw them (npukit.figures.layouts) -------------------------------


def test_layout_timing_figure_plots_time_per_value():
    from npukit import figures

    t = [simd.LayoutTiming("depthwise", (1, 4, 32, 32), 4096e-9, 8192e-9)]
    fig = figures.layouts.layout_timing_figure(t, title="t")
    assert [tr.y[0] for tr in fig.data] == pytest.approx([1.0, 2.0])   # ns per value: 4096 values
    assert fig.layout.yaxis.type == "log" and fig.layout.title.text == "t"


@pytest.mark.parametrize("layout,block", [("NCHW", 4), ("NHWC", 4), ("blocked", 4), ("blocked", 8)])
def test_memory_strip_figure_places_every_element(layout, block):
    from npukit import figures

    c, h, w = 6, 2, 3
    fig = figures.layouts.memory_strip_figure(layout, block=block, channels=c, height=h, width=w)
    text = np.asarray(fig.data[0].text).ravel()
    x = np.arange(c * h * w).reshape(1, c, h, w)          # each element's value is its (c, h, w) index
    if layout == "NCHW":
        mem = x.ravel()
    elif layout == "NHWC":
        mem = x.transpose(0, 2, 3, 1).ravel()
    else:                                                 # written out: blocks of `block` channels innermost
        cb = -(-c // block)
        mem = np.full(cb * h * w * block, -1)
        for ci in range(c):
            for hi in range(h):
                for wi in range(w):
                    mem[(((ci // block) * h + hi) * w + wi) * block + ci % block] = x[0, ci, hi, wi]
    want = ["" if v < 0 else str(v // (h * w)) for v in mem]
    assert list(text[:len(want)]) == want
