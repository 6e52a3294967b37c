"""Tests of npukit.graphs and npukit.figures.graphs against independent references.

* MACs: explicit loops over the ONNX attributes (sliding windows enumerated
  one position at a time), written here without the counting formula; for
  CameraNet, the per-layer MACs of npukit.models.summary.
* The roofline: a machine spec must be positive and finite to be drawn.

Folding, fusion and memory planning (npukit.rewrites) are in test_rewrites.py.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper
from support import onnx_model as _model
from support import value_info as _vi

from npukit import figures, graphs, rewrites, roofline

# ---- independent counts ------------------------------------------------------------------


def loop_window_positions(size, k, stride, dilation, pad_begin, pad_end):
    """Slide a dilated window over a padded axis and count where it fits."""
    count, start = 0, -pad_begin
    while start + dilation * (k - 1) <= size - 1 + pad_end:
        count += 1
        start += stride
    return count


def loop_conv_macs(x_shape, w_shape, strides, pads, dilations):
    """Count multiply-accumulates by walking every output element and every tap."""
    n, _, *spatial = x_shape
    c_out, c_in_per_group, *kernel = w_shape
    rank = len(spatial)
    positions = [
        loop_window_positions(spatial[a], kernel[a], strides[a], dilations[a], pads[a], pads[a + rank])
        for a in range(rank)
    ]
    macs = 0
    for _ in range(n):
        for _ in range(c_out):
            for _ in itertools.product(*[range(p) for p in positions]):
                for _ in range(c_in_per_group):
                    for _ in itertools.product(*[range(k) for k in kernel]):
                        macs += 1
    return macs, (n, c_out, *positions)


@st.composite
def conv_configs(draw):
    rank = draw(st.sampled_from([1, 2, 2, 2]))
    group = draw(st.sampled_from([1, 1, 2, 3]))
    depthwise = draw(st.booleans())
    c_in = group * draw(st.integers(1, 3))
    if depthwise:
        group = c_in
        c_out = c_in * draw(st.integers(1, 2))
    else:
        c_out = group * draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, 3)) for _ in range(rank)]
    dilations = [draw(st.integers(1, 2)) for _ in range(rank)]
    strides = [draw(st.integers(1, 3)) for _ in range(rank)]
    pads = [draw(st.integers(0, 2)) for _ in range(2 * rank)]
    spatial = []
    for a in range(rank):
        reach = dilations[a] * (kernel[a] - 1) + 1
        spatial.append(draw(st.integers(max(1, reach - pads[a] - pads[a + rank]), 9)))
    n = draw(st.integers(1, 2))
    bias = draw(st.booleans())
    return dict(x=(n, c_in, *spatial), w=(c_out, c_in // group, *kernel), group=group,
                strides=strides, pads=pads, dilations=dilations, bias=bias)


@settings(max_examples=40, deadline=None)
@given(conv_configs())
def test_conv_macs_match_a_loop_count(cfg):
    inputs = ["x", "W"] + (["B"] if cfg["bias"] else [])
    inits = [numpy_helper.from_array(np.zeros(cfg["w"], np.float32), "W")]
    if cfg["bias"]:
        inits.append(numpy_helper.from_array(np.zeros(cfg["w"][0], np.float32), "B"))
    node = helper.make_node("Conv", inputs, ["y"], name="conv", group=cfg["group"], strides=cfg["strides"],
                            pads=cfg["pads"], dilations=cfg["dilations"], kernel_shape=list(cfg["w"][2:]))
    m = _model([node], [_vi("x", list(cfg["x"]))], [_vi("y", None)], inits)
    (c,) = graphs.op_counts(m)
    macs, y_shape = loop_conv_macs(cfg["x"], cfg["w"], cfg["strides"], cfg["pads"], cfg["dilations"])
    assert c.output_shape == y_shape
    assert c.macs == macs
    outputs = math.prod(y_shape)
    assert c.flops == 2 * macs + (outputs if cfg["bias"] else 0)
    assert c.param_bytes == 4 * (math.prod(cfg["w"]) + (cfg["w"][0] if cfg["bias"] else 0))
    assert c.act_bytes_in == 4 * math.prod(cfg["x"])
    assert c.act_bytes_out == 4 * outputs
    assert c.intensity == pytest.approx(c.flops / (c.param_bytes + c.act_bytes_in + c.act_bytes_out))


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 12), n=st.integers(1, 12), k=st.integers(1, 12), trans_a=st.booleans(),
       trans_b=st.booleans(), bias=st.booleans())
def test_gemm_macs_match_a_loop_count(m, n, k, trans_a, trans_b, bias):
    a_shape = (k, m) if trans_a else (m, k)
    b_shape = (n, k) if trans_b else (k, n)
    inits = [numpy_helper.from_array(np.zeros(b_shape, np.float32), "B")]
    inputs = ["A", "B"]
    if bias:
        inits.append(numpy_helper.from_array(np.zeros(n, np.float32), "C"))
        inputs.append("C")
    node = helper.make_node("Gemm", inputs, ["Y"], transA=int(trans_a), transB=int(trans_b))
    model = _model([node], [_vi("A", list(a_shape))], [_vi("Y", None)], inits)
    (c,) = graphs.op_counts(model)
    loops = sum(1 for _ in range(m) for _ in range(n) for _ in range(k))
    assert c.macs == loops
    assert c.flops == 2 * loops + (m * n if bias else 0)
    assert c.output_shape == (m, n)
    assert c.param_bytes == 4 * (k * n + (n if bias else 0))


@settings(max_examples=15, deadline=None)
@given(batch=st.integers(1, 3), m=st.integers(1, 6), n=st.integers(1, 6), k=st.integers(1, 6))
def test_batched_matmul_macs_match_a_loop_count(batch, m, n, k):
    node = helper.make_node("MatMul", ["A", "B"], ["Y"])
    model = _model([node], [_vi("A", [batch, m, k]), _vi("B", [k, n])], [_vi("Y", None)])
    (c,) = graphs.op_counts(model)
    assert c.macs == sum(1 for _ in range(batch) for _ in range(m) for _ in range(n) for _ in range(k))
    assert c.act_bytes_in == 4 * (batch * m * k + k * n) and c.param_bytes == 0


def test_elementwise_pool_view_and_itemsize_rules():
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flat"),
        helper.make_node("Add", ["f", "bias"], ["y"], name="add"),
    ]
    bias = numpy_helper.from_array(np.zeros((1, 8), np.float32), "bias")
    m = _model(nodes, [_vi("x", [1, 8, 6, 6])], [_vi("y", [1, 8])], [bias])
    c = {r.name: r for r in graphs.op_counts(m)}
    assert (c["relu"].flops, c["relu"].act_bytes_in, c["relu"].act_bytes_out) == (288, 1152, 1152)
    assert c["relu"].intensity == pytest.approx(288 / 2304)
    assert c["pool"].flops == 8 * 3 * 3 * 4 and c["pool"].output_shape == (1, 8, 3, 3)
    assert c["gap"].flops == 72 and c["gap"].output_shape == (1, 8, 1, 1)
    assert (c["flat"].flops, c["flat"].bytes, c["flat"].intensity) == (0, 0, 0.0)
    assert c["add"].param_bytes == 32 and c["add"].flops == 8
    int8 = {r.name: r for r in graphs.op_counts(m, itemsize=1)}
    assert int8["relu"].act_bytes_in == 288 and int8["relu"].intensity == pytest.approx(4 * c["relu"].intensity)



def test_totals_add_up():
    counts = graphs.op_counts(graphs.example_chain(blocks=2, channels=4, size=6))
    t = graphs.totals(counts)
    assert t["macs"] == sum(c.macs for c in counts)
    assert t["intensity"] == pytest.approx(t["flops"] / (t["param_bytes"] + t["act_bytes"]))


# ---- topological order --------------------------------------------------------------------


def test_topological_order_repairs_a_shuffled_graph():
    m = graphs.example_chain(blocks=3, channels=2, size=4)
    rng = np.random.default_rng(3)
    nodes = list(m.graph.node)
    perm = rng.permutation(len(nodes))
    del m.graph.node[:]
    m.graph.node.extend(nodes[k] for k in perm)
    order = graphs.topological_order(m)
    assert sorted(order) == list(range(len(nodes)))
    seen = {"x"} | {t.name for t in m.graph.initializer}
    for i in order:
        node = m.graph.node[i]
        assert all(t in seen for t in node.input), node.name
        seen.update(node.output)
    # the counts do not depend on the order nodes are listed in
    assert graphs.totals(graphs.op_counts(m)) == graphs.totals(graphs.op_counts(graphs.example_chain(3, 2, 4)))


# ---- the machine and the figures ----------------------------------------------------------


def test_measure_machine_reports_positive_numbers_and_how():
    m = roofline.measure_machine(repeat=1, n=128, nbytes=2**20)
    assert isinstance(m, graphs.MachineSpec)
    assert m.peak_flops > 1e6 and m.bandwidth > 1e6
    assert "matmul" in m.peak_how and "copyto" in m.bandwidth_how and m.cpu
    assert m.attainable(m.ridge) == pytest.approx(m.peak_flops)
    assert m.bound(m.ridge / 2) == "memory" and m.bound(m.ridge * 2) == "compute"


def test_figures_build():
    m = graphs.example_chain(blocks=2, channels=4, size=6)
    spec = graphs.MachineSpec(1e11, 1e10, "toy", "assumed", "assumed")
    fig = figures.graphs.roofline_figure(spec, graphs.op_counts(m), extra=[{"name": "GEMM", "intensity": 100.0}])
    roof = fig.data[0]
    assert max(roof.y) == pytest.approx(100.0) and fig.layout.yaxis.type == "log"
    g = figures.graphs.graph_figure(m, title="chain")
    assert {"Conv", "BatchNormalization", "Relu", "Add", "input", "output"} <= {t.name for t in g.data if t.name}
    plan = rewrites.plan_memory(m)
    lf = figures.graphs.lifetime_figure(plan)
    assert len(lf.data) == 2 * len(plan.buffers) + 2


# ---- error paths ---------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [graphs.op_counts, graphs.topological_order, graphs.tensor_shapes,
                                figures.graphs.graph_figure])
def test_not_a_model_is_a_type_error(fn):
    with pytest.raises(TypeError, match="model must be an onnx.ModelProto"):
        fn("model.onnx")


def test_unknown_shapes_are_a_clear_error():
    m = _model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [_vi("x", ["N", 4])], [_vi("y", None)])
    with pytest.raises(ValueError, match="tensor 'x' .*relu.* unknown shape"):
        graphs.op_counts(m)


def test_cycles_and_dangling_inputs_are_clear_errors():
    cyc = _model([helper.make_node("Relu", ["b"], ["a"], name="one"),
                  helper.make_node("Add", ["x", "a"], ["b"], name="two")],
                 [_vi("x", [2])], [_vi("b", [2])])
    for fn in (graphs.topological_order, graphs.op_counts):
        with pytest.raises(ValueError, match="cycle.*one, two"):
            fn(cyc)
    dangling = _model([helper.make_node("Relu", ["ghost"], ["y"], name="r")], [_vi("x", [2])], [_vi("y", [2])])
    with pytest.raises(ValueError, match="reads tensor 'ghost'"):
        graphs.topological_order(dangling)
    twice = _model([helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Neg", ["x"], ["y"], name="b")],
                   [_vi("x", [2])], [_vi("y", [2])])
    with pytest.raises(ValueError, match="written by two nodes"):
        graphs.topological_order(twice)


def test_bad_arguments_name_themselves():
    m = graphs.example_chain(blocks=1, channels=2, size=4)
    with pytest.raises(ValueError, match="itemsize must be >= 1"):
        graphs.op_counts(m, itemsize=0)
    with pytest.raises(ValueError, match="repeat must be >= 1"):
        roofline.measure_machine(repeat=0)
    with pytest.raises(TypeError, match="machine must be a MachineSpec"):
        figures.graphs.roofline_figure("fast")
    with pytest.raises(TypeError, match=r"counts\[0\] must be an OpCount"):
        figures.graphs.roofline_figure(graphs.MachineSpec(1, 1, "a", "b", "c"), [{"flops": 1}])
    with pytest.raises(ValueError, match=r"extra\[0\] must be a dict"):
        figures.graphs.roofline_figure(graphs.MachineSpec(1, 1, "a", "b", "c"), extra=[{"name": "x", "intensity": 0}])
    with pytest.raises(TypeError, match="plan must be a MemoryPlan"):
        figures.graphs.lifetime_figure(m)
    from npukit import tally

    with pytest.raises(TypeError, match="machine must be a MachineSpec"):
        tally.Context(machine="fast")
    with pytest.raises(TypeError, match=r"counts\[0\] must be an OpCount"):
        graphs.totals([1])
    with pytest.raises(ValueError, match="blocks must be >= 0"):
        graphs.example_chain(blocks=-1)


def test_unsupported_ops():
    m = _model([helper.make_node("Softmax", ["x"], ["y"], name="sm")], [_vi("x", [1, 4])], [_vi("y", [1, 4])])
    with pytest.raises(ValueError, match="no counting rule for op_type 'Softmax'.*supported: "):
        graphs.op_counts(m)


# ---- the lab's checkers accept npukit.graphs and catch typical mistakes ----------------------


def test_chapter3_checkers_agree_with_graphs_and_catch_mistakes(capsys):
    from npukit import teach

    def macs_via_graphs(x_shape, w_shape, stride, pad, dilation, group):
        node = helper.make_node("Conv", ["x", "W"], ["y"], group=group, strides=[stride] * 2, pads=[pad] * 4,
                                dilations=[dilation] * 2)
        w = numpy_helper.from_array(np.zeros(w_shape, np.float32), "W")
        return graphs.op_counts(_model([node], [_vi("x", list(x_shape))], [_vi("y", None)], [w]))[0].macs

    from npukit.teach import core
    from npukit.teach import graphs as T

    with pytest.raises(AssertionError, match="your function called npukit.graphs"):   # the library is refused
        teach.check_conv_macs(macs_via_graphs)
    rng = np.random.default_rng(1)   # ... and the checker's reference agrees with it
    cases = [((1, 4, int(h), 9), (8, 4 // g, k, k), s, p, d, g) for h, k, s, p, d, g in
             zip(rng.integers(5, 12, 6), (1, 3, 3, 5, 3, 1), (1, 2, 1, 2, 3, 1), (0, 1, 2, 0, 1, 2), (1, 1, 2, 1, 2, 1),
                 (1, 2, 4, 1, 2, 4))]
    core.check("conv MACs", macs_via_graphs, cases, T._macs_by_loops)
    capsys.readouterr()

    def macs_ignoring_group(x_shape, w_shape, stride, pad, dilation, group):
        (n, c_in, h, w), (c_out, _, kh, kw) = x_shape, w_shape
        ho = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
        wo = (w + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
        return n * c_out * ho * wo * c_in * kh * kw   # every input channel: group times too many

    with pytest.raises(AssertionError, match="(?s)conv MACs: wrong answer.*group = .* times too large"):
        teach.check_conv_macs(macs_ignoring_group)

    def fold_via_graphs(W, b, gamma, beta, mean, var, eps):
        c_out = W.shape[0]
        group = 1  # folding does not depend on the group; pick an input that fits W
        nodes = [helper.make_node("Conv", ["x", "W", "b"], ["c"]),
                 helper.make_node("BatchNormalization", ["c", "g", "B", "m", "v"], ["y"], epsilon=eps)]
        inits = [numpy_helper.from_array(a, n) for a, n in
                 ((W, "W"), (b, "b"), (gamma, "g"), (beta, "B"), (mean, "m"), (var, "v"))]
        x = _vi("x", [1, W.shape[1] * group, W.shape[2], W.shape[3]])
        folded = rewrites.fold_batchnorm(_model(nodes, [x], [_vi("y", [1, c_out, 1, 1])], inits))
        arrays = {t.name: numpy_helper.to_array(t) for t in folded.graph.initializer}
        conv = folded.graph.node[0]
        return arrays[conv.input[1]], arrays[conv.input[2]]

    with pytest.raises(AssertionError, match="your function called npukit.rewrites"):
        teach.check_fold_bn(fold_via_graphs)
    W, b, g, B, m, v = (rng.uniform(0.5, 2, s).astype(np.float32) for s in ((4, 3, 3, 3), 4, 4, 4, 4, 4))
    x = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    w2, b2 = fold_via_graphs(W, b, g, B, m, v, 1e-5)
    conv = rewrites.run_reference(_model([helper.make_node("Conv", ["x", "W", "b"], ["y"], pads=[1] * 4)],
                                         [_vi("x", [1, 3, 5, 5])], [_vi("y", None)],
                                         [numpy_helper.from_array(w2, "W"), numpy_helper.from_array(b2, "b")]),
                                  {"x": x})[0]
    np.testing.assert_allclose(conv, T._conv_bn_reference(W, b, g, B, m, v, 1e-5, x, 1), rtol=1e-4, atol=1e-5)
    with pytest.raises(AssertionError, match="fold BN: wrong answer.*b_folded is wrong"):  # bias not scaled
        teach.check_fold_bn(lambda W, b, g, B, m, v, eps: (W * (g / np.sqrt(v + eps))[:, None, None, None], b + B))
    with pytest.raises(AssertionError, match="fold BN: wrong answer.*eps 0.001.*W_folded (is wrong|leaves eps)"):  # eps forgotten
        teach.check_fold_bn(lambda W, b, g, B, m, v, eps: (W * (g / np.sqrt(v))[:, None, None, None],
                                                           (b - m) * g / np.sqrt(v) + B))
    with pytest.raises(AssertionError, match="return a pair"):
        teach.check_fold_bn(lambda W, b, g, B, m, v, eps: W)

    with pytest.raises(AssertionError, match="your function is npukit.rewrites.live_peak itself"):
        teach.check_live_peak(rewrites.live_peak)
    core.check("live peak", rewrites.live_peak, [([(64, 3, 3)],), ([(100, 0, 1), (50, 1, 2), (80, 2, 3)],),
                                                 ([(5, 0, 9), (7, 2, 3), (1, 3, 8)],)], T._peak_by_sweep)
    with pytest.raises(AssertionError, match="live peak: wrong answer"):
        teach.check_live_peak(lambda ts: sum(s for s, _, _ in ts))  # the naive total

    spec = lambda f, b, p, bw: graphs.MachineSpec(p, bw, "x", "", "").attainable(f / b)  # noqa: E731
    with pytest.raises(AssertionError, match="your function called npukit.graphs.MachineSpec"):
        teach.check_attainable(spec)
    core.check("attainable", spec, [(1e9, 1e8, 1e11, 2e10), (1e9, 1e6, 1e11, 2e10)],
               lambda f, b, p, bw: f / max(f / p, b / bw))
    with pytest.raises(AssertionError, match="attainable: wrong answer"):
        teach.check_attainable(lambda f, b, p, bw: min(p, bw * b / f))  # intensity upside down
    with pytest.raises(AssertionError, match="compute-bound kernel"):
        teach.check_attainable(lambda f, b, p, bw: bw * f / b)  # no flat roof


# ---- the machine spec is checked, so the roofline can always be drawn -------------------------


@pytest.mark.parametrize("field, value, exc", [
    ("peak_flops", 0.0, ValueError), ("peak_flops", -1e9, ValueError), ("peak_flops", float("nan"), ValueError),
    ("peak_flops", float("inf"), ValueError), ("peak_flops", "1e11", TypeError), ("peak_flops", True, TypeError),
    ("bandwidth", 0, ValueError), ("bandwidth", -5.0, ValueError), ("bandwidth", float("nan"), ValueError),
    ("bandwidth", None, TypeError),
])
def test_machine_spec_refuses_a_roof_that_cannot_be_drawn(field, value, exc):
    args = dict(peak_flops=1e11, bandwidth=1e10, cpu="toy", peak_how="assumed", bandwidth_how="assumed") | {field: value}
    with pytest.raises(exc, match=field):
        graphs.MachineSpec(**args)


def test_machine_spec_draws_and_checks_intensities():
    spec = graphs.MachineSpec(2e11, 25e9, "toy", "assumed", "assumed")
    assert spec.ridge == 8.0 and spec.attainable(0.5) == 12.5e9 and spec.attainable(100.0) == 2e11
    np.testing.assert_array_equal(spec.attainable([1.0, 16.0]), [25e9, 2e11])
    fig = figures.graphs.roofline_figure(spec, extra=[{"name": "tiny", "intensity": 1e-3}])
    assert min(fig.data[0].y) == pytest.approx(25e9 * 1e-3 / 2.5 / 1e9)  # the roof starts at the smallest point / 2.5
    for bad, exc in ((-1.0, ValueError), (float("nan"), ValueError), ("2", TypeError), (True, TypeError)):
        with pytest.raises(exc, match="intensity"):
            spec.attainable(bad)
        with pytest.raises(exc, match="intensity"):
            spec.bound(bad)
    with pytest.raises(TypeError, match="intensity must be one number"):
        spec.bound([1.0, 2.0])
    with pytest.raises(TypeError, match="cpu must be a str"):
        graphs.MachineSpec(1e11, 1e10, None, "a", "b")


def test_op_count_records_check_their_fields():
    c = graphs.OpCount("n", "Relu", 0, 8, 0, 32, 32, 0.125, [1, 8])
    assert c.output_shape == (1, 8) and c.bytes == 64
    with pytest.raises(ValueError, match="macs must be >= 0"):
        graphs.OpCount("n", "Relu", -1, 8, 0, 32, 32, 0.125, (1, 8))
    with pytest.raises(ValueError, match="intensity must be finite and >= 0"):
        graphs.OpCount("n", "Relu", 0, 8, 0, 32, 32, float("nan"), (1, 8))


def test_roofline_extra_points_are_checked():
    spec = graphs.MachineSpec(1e11, 1e10, "toy", "a", "b")
    with pytest.raises(ValueError, match=r"extra\[0\].*unknown keys \['achived'\]"):
        figures.graphs.roofline_figure(spec, extra=[{"name": "GEMM", "intensity": 50.0, "achived": 1e9}])
    with pytest.raises(ValueError, match=r"extra\[0\].*achieved must be a finite number > 0"):
        figures.graphs.roofline_figure(spec, extra=[{"name": "GEMM", "intensity": 50.0, "achieved": 0}])
    with pytest.raises(TypeError, match="extra must be a list or tuple"):
        figures.graphs.roofline_figure(spec, extra={"name": "GEMM", "intensity": 50.0})
    with pytest.raises(TypeError, match="title must be a string"):
        figures.graphs.roofline_figure(spec, title=3)


def test_example_chain_flags_must_be_bools():
    with pytest.raises(TypeError, match="batchnorm must be True or False"):
        graphs.example_chain(batchnorm="no")
    with pytest.raises(TypeError, match="residual must be True or False"):
        graphs.example_chain(residual=0)


# ---- one network, two counts ---------------------------------------------------------------------


def test_cameranet_macs_agree_with_the_models_summary():
    """CameraNet's MACs counted from its ONNX graph equal those npukit.models.summary computes from its layers."""
    from npukit.models import CameraNet, summary

    net = CameraNet()
    rows = summary(net)
    counts = {c.name: c.macs for c in graphs.op_counts(net.to_onnx()) if c.macs}
    assert sum(counts.values()) == sum(r["macs"] for r in rows) > 0
    assert {r["layer"]: r["macs"] for r in rows if r["macs"]} == counts  # layer by layer, by name


def test_bound_on_the_ridge_is_compute():
    """At the ridge both roofs give the same rate: the peak is reached, so the kernel is compute-bound."""
    m = graphs.MachineSpec(100e9, 10e9, "toy", "assumed", "assumed")
    assert m.ridge == 10.0
    assert m.bound(10.0) == "compute" and m.bound(np.nextafter(10.0, 0)) == "memory"
    assert m.attainable(10.0) == m.peak_flops


def test_constant_and_shape_nodes_move_no_bytes():
    """A Constant's output and a Shape's answer are parameters: computed once, they cost a node run on its own no DRAM traffic."""
    x = _vi("x", [1, 4, 8, 8])
    c = helper.make_node("Constant", [], ["c"], name="c", value=numpy_helper.from_array(np.ones(4, np.float32)))
    sh = helper.make_node("Shape", ["x"], ["s"], name="shape")
    add = helper.make_node("Add", ["x", "c4"], ["y"], name="add")
    r = helper.make_node("Reshape", ["c", "shape4"], ["c4"], name="reshape")
    shape4 = numpy_helper.from_array(np.array([1, 4, 1, 1], np.int64), "shape4")
    m = _model([c, r, sh, add], [x], [_vi("y", [1, 4, 8, 8]), helper.make_tensor_value_info("s", 7, [4])], [shape4])
    counts = {k.name: k for k in graphs.op_counts(m)}
    assert counts["c"].bytes == 0 and counts["shape"].bytes == 0
    assert counts["add"].bytes == 4 * (256 + 4 + 256)       # x and the reshaped constant in, y out
