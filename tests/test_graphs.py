"""Tests of npukit.graphs against independent references.

* MACs: explicit loops over the ONNX attributes (sliding windows enumerated
  one position at a time), written here without the counting formula.
* BatchNorm folding and fusion: onnx.reference.ReferenceEvaluator on the
  original model; onnx.checker on the result.
* Memory plans: random DAGs built with onnx.helper; lifetimes recomputed here
  from the node list, live bytes by a step-by-step sweep.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from npukit import figures
from npukit import graphs

OPSET = [helper.make_opsetid("", 17)]


def _model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "t", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=OPSET)


def _vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


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


def test_batchnorm_counts_two_flops_per_element_and_folding_keeps_macs():
    m = graphs.example_chain(blocks=2, channels=4, size=5)
    bn = [r for r in graphs.op_counts(m) if r.op_type == "BatchNormalization"][0]
    assert (bn.macs, bn.flops, bn.param_bytes) == (0, 200, 4 * 4 * 4)
    before, after = graphs.totals(graphs.op_counts(m)), graphs.totals(graphs.op_counts(graphs.fold_batchnorm(m)))
    assert before["macs"] == after["macs"] and before["flops"] == after["flops"] + 3 * 200


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


# ---- BatchNorm folding ---------------------------------------------------------------------


@st.composite
def conv_bn_models(draw):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    group = draw(st.sampled_from([1, 2]))
    c_in = group * draw(st.integers(1, 3))
    c_out = group * draw(st.integers(1, 3))
    k = draw(st.sampled_from([1, 3]))
    bias = draw(st.booleans())
    eps = draw(st.sampled_from([1e-5, 1e-3]))
    stride = draw(st.integers(1, 2))
    w = rng.standard_normal((c_out, c_in // group, k, k)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W")]
    conv_in = ["x", "W"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(c_out).astype(np.float32), "b"))
        conv_in.append("b")
    stats = dict(gamma=rng.uniform(0.5, 2.0, c_out), beta=rng.standard_normal(c_out),
                 mean=rng.standard_normal(c_out), var=rng.uniform(0.1, 2.0, c_out))
    inits += [numpy_helper.from_array(v.astype(np.float32), n) for n, v in stats.items()]
    nodes = [
        helper.make_node("Conv", conv_in, ["c"], name="conv", group=group, pads=[k // 2] * 4, strides=[stride] * 2),
        helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["bn"], name="bn", epsilon=eps),
        helper.make_node("Relu", ["bn"], ["y"], name="relu"),
    ]
    size = draw(st.integers(3, 8))
    out = (size + 2 * (k // 2) - k) // stride + 1
    m = _model(nodes, [_vi("x", [2, c_in, size, size])], [_vi("y", [2, c_out, out, out])], inits)
    x = rng.standard_normal((2, c_in, size, size)).astype(np.float32)
    return m, x


def _assert_folded_equal(model, feeds):
    folded = graphs.fold_batchnorm(model)
    onnx.checker.check_model(folded, full_check=True)
    assert not any(n.op_type == "BatchNormalization" for n in folded.graph.node)
    want = ReferenceEvaluator(model).run(None, feeds)
    got = ReferenceEvaluator(folded).run(None, feeds)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    return folded


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_bn_models())
def test_fold_batchnorm_matches_onnx_reference(case):
    model, x = case
    folded = _assert_folded_equal(model, {"x": x})
    assert [n.op_type for n in folded.graph.node] == ["Conv", "Relu"]
    assert folded.graph.node[0].doc_string == "folded: bn"
    # the input model is left alone
    assert [n.op_type for n in model.graph.node] == ["Conv", "BatchNormalization", "Relu"]


def test_fold_batchnorm_on_a_deeper_chain_and_unfoldable_bn():
    m = graphs.example_chain(blocks=3, channels=5, size=7, seed=4)
    x = np.random.default_rng(0).standard_normal((1, 3, 7, 7)).astype(np.float32)
    folded = _assert_folded_equal(m, {"x": x})
    assert len(folded.graph.node) == len(m.graph.node) - 4
    # BN on a graph input, and BN after a Conv whose output is also read elsewhere:
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(rng.standard_normal((3, 3, 1, 1)).astype(np.float32), "W")]
    for p in ("1", "2"):
        inits += [numpy_helper.from_array(rng.uniform(0.5, 2, 3).astype(np.float32), "g" + p),
                  numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b" + p),
                  numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "m" + p),
                  numpy_helper.from_array(rng.uniform(0.2, 2, 3).astype(np.float32), "v" + p)]
    nodes = [
        helper.make_node("BatchNormalization", ["x", "g1", "b1", "m1", "v1"], ["n1"], name="bn_input"),
        helper.make_node("Conv", ["n1", "W"], ["c"], name="conv"),
        helper.make_node("BatchNormalization", ["c", "g2", "b2", "m2", "v2"], ["n2"], name="bn_shared"),
        helper.make_node("Add", ["n2", "c"], ["y"], name="add"),
    ]
    m2 = _model(nodes, [_vi("x", [1, 3, 4, 4])], [_vi("y", [1, 3, 4, 4])], inits)
    folded2 = _assert_folded_equal(m2, {"x": rng.standard_normal((1, 3, 4, 4)).astype(np.float32)})
    assert [n.op_type for n in folded2.graph.node] == ["Mul", "Add", "Conv", "Mul", "Add", "Add"]


def _cameranet_onnx():
    """CameraNet's ONNX graph: the shipped weights, or fresh ones with random BN statistics."""
    try:
        from npukit.models import CameraNet
    except ImportError as exc:  # pragma: no cover - models is chapter 0
        pytest.skip(f"npukit.models is not available: {exc}")
    try:
        net = CameraNet.pretrained()
    except FileNotFoundError:
        net = CameraNet(seed=0)
        rng = np.random.default_rng(0)
        for key, value in net.params.items():
            role = key.rsplit(".", 1)[1]
            if role in ("scale", "var"):
                net.params[key] = rng.uniform(0.5, 2.0, value.shape).astype(np.float32)
            elif role in ("bias", "mean"):
                net.params[key] = rng.standard_normal(value.shape).astype(np.float32)
    return net.to_onnx()


def test_fold_batchnorm_on_cameranet():
    model = _cameranet_onnx()
    assert any(n.op_type == "BatchNormalization" for n in model.graph.node)
    (inp,) = [v for v in model.graph.input if v.name not in {t.name for t in model.graph.initializer}]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    x = np.random.default_rng(0).uniform(0, 1, shape).astype(np.float32)
    folded = _assert_folded_equal(model, {inp.name: x})
    counts = graphs.op_counts(model)
    assert graphs.totals(counts)["macs"] > 0
    plan = graphs.plan_memory(folded)
    assert plan.lower_bound_bytes <= plan.peak_bytes <= plan.naive_bytes


# ---- fusion -------------------------------------------------------------------------------


def test_fusion_keeps_outputs_and_saves_exactly_the_intermediate_traffic():
    m = graphs.fold_batchnorm(graphs.example_chain(blocks=3, channels=4, size=6, seed=2))
    x = np.random.default_rng(5).standard_normal((1, 3, 6, 6)).astype(np.float32)
    r = graphs.fuse_conv_add_relu(m)
    onnx.checker.check_model(r.model)
    assert [n.op_type for n in r.model.graph.node] == ["FusedConv"] * 4
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = graphs.run_reference(r.model, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # every removed tensor is 1×4×6×6 float32, written once and read once
    assert sum(len(f.removed) for f in r.fusions) == 1 + 3 * 2
    assert r.bytes_saved == 7 * 2 * (4 * 36 * 4)
    before, after = graphs.totals(graphs.op_counts(m)), graphs.totals(graphs.op_counts(r.model))
    assert before["flops"] == after["flops"]
    moved = lambda t: t["param_bytes"] + t["act_bytes"]  # noqa: E731
    assert moved(before) - moved(after) == r.bytes_saved


def test_fusion_leaves_shared_intermediates_alone():
    w = numpy_helper.from_array(np.ones((2, 2, 1, 1), np.float32), "W")
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "c"], ["y"], name="add")]  # c is read twice
    m = _model(nodes, [_vi("x", [1, 2, 3, 3])], [_vi("y", [1, 2, 3, 3])], [w])
    r = graphs.fuse_conv_add_relu(m)
    assert r.fusions == () and r.bytes_saved == 0
    assert [n.op_type for n in r.model.graph.node] == ["Conv", "Relu", "Add"]


# ---- memory planning ----------------------------------------------------------------------


@st.composite
def random_dags(draw):
    """A random DAG of 1-D float32 tensors: Relu keeps a size, Pad grows it, Concat adds sizes."""
    n_nodes = draw(st.integers(1, 14))
    sizes = {"x": draw(st.integers(1, 40))}
    tensors = ["x"]
    nodes, inits = [], []
    for i in range(n_nodes):
        op = draw(st.sampled_from(["Relu", "Pad", "Concat"]))
        out = f"t{i}"
        if op == "Relu":
            a = draw(st.sampled_from(tensors))
            nodes.append(helper.make_node("Relu", [a], [out], name=f"n{i}"))
            sizes[out] = sizes[a]
        elif op == "Pad":
            a = draw(st.sampled_from(tensors))
            lo, hi = draw(st.integers(0, 30)), draw(st.integers(0, 30))
            inits.append(numpy_helper.from_array(np.array([lo, hi], np.int64), f"pads{i}"))
            nodes.append(helper.make_node("Pad", [a, f"pads{i}"], [out], name=f"n{i}"))
            sizes[out] = sizes[a] + lo + hi
        else:
            ins = draw(st.lists(st.sampled_from(tensors), min_size=1, max_size=3))
            nodes.append(helper.make_node("Concat", ins, [out], name=f"n{i}", axis=0))
            sizes[out] = sum(sizes[a] for a in ins)
        tensors.append(out)
    read = {t for n in nodes for t in n.input}
    outputs = [t for t in tensors[1:] if t not in read]
    outputs += [t for t in tensors[1:] if t in read and draw(st.integers(0, 5)) == 0]
    model = _model(nodes, [_vi("x", [sizes["x"]])], [_vi(t, [sizes[t]]) for t in outputs], inits)
    alignment = draw(st.sampled_from([1, 4, 64]))
    return model, sizes, set(outputs), alignment


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_dags())
def test_plan_memory_never_overlaps_live_tensors(case):
    model, sizes, outputs, alignment = case
    onnx.checker.check_model(model)
    plan = graphs.plan_memory(model, alignment=alignment)
    nodes = list(model.graph.node)  # built in topological order, which the plan keeps
    assert plan.order == tuple(n.name for n in nodes)
    # lifetimes, recomputed here from the node list
    want = {}
    for step, node in enumerate(nodes):
        t = node.output[0]
        if t not in outputs:
            readers = [s for s, other in enumerate(nodes) if t in other.input]
            want[t] = (4 * sizes[t], step, max(readers, default=step))
    got = {b.tensor: (b.size, b.first, b.last) for b in plan.buffers}
    assert got == want
    for b in plan.buffers:
        assert b.offset % alignment == 0
    for a, b in itertools.combinations(plan.buffers, 2):
        live_together = a.first <= b.last and b.first <= a.last
        share_bytes = a.offset < b.offset + b.size and b.offset < a.offset + a.size
        assert not (live_together and share_bytes), (a, b)
    # step-by-step sweep of live bytes
    sweep = max((sum(s for s, f, l in want.values() if f <= step <= l) for step in range(len(nodes))), default=0)
    assert plan.lower_bound_bytes == sweep
    assert sweep <= plan.peak_bytes <= plan.naive_bytes
    assert plan.naive_bytes == sum(-(-s // alignment) * alignment for s, _, _ in want.values())


def test_plan_memory_reuses_on_a_chain():
    plan = graphs.plan_memory(graphs.example_chain(blocks=6, channels=8, size=8, residual=False))
    one = 8 * 8 * 8 * 4
    assert plan.peak_bytes == 2 * one  # a chain needs two buffers, ping-pong
    assert plan.naive_bytes == len(plan.buffers) * one
    b = plan.buffer("block2.conv")
    assert (b.first, b.last) == (plan.order.index("block2.conv"), plan.order.index("block2.bn"))
    with pytest.raises(KeyError, match="not an intermediate"):
        plan.buffer("x")


def test_live_peak_matches_a_sweep():
    rng = np.random.default_rng(7)
    for _ in range(20):
        iv = []
        for _ in range(rng.integers(0, 10)):
            f = int(rng.integers(0, 8))
            iv.append((int(rng.integers(0, 100)), f, f + int(rng.integers(0, 4))))
        sweep = max((sum(s for s, f, l in iv if f <= t <= l) for t in range(12)), default=0)
        assert graphs.live_peak(iv) == sweep


# ---- the machine and the figures ----------------------------------------------------------


def test_measure_machine_reports_positive_numbers_and_how():
    m = graphs.measure_machine(repeat=1, n=128, nbytes=2**20)
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
    plan = graphs.plan_memory(m)
    lf = figures.graphs.lifetime_figure(plan)
    assert len(lf.data) == 2 * len(plan.buffers) + 2


def test_numbers_records():
    from npukit import tally

    rows = graphs.numbers(tally.Context(machine=graphs.MachineSpec(1e11, 1e10, "toy", "a", "b")))
    assert all(isinstance(r, tally.Row) and r.chapter == 3 for r in rows)
    assert "toy" in rows[-1].how and rows[-1].value == "100 GFLOP/s, 10.0 GB/s"


# ---- error paths ---------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [graphs.op_counts, graphs.fold_batchnorm, graphs.fuse_conv_add_relu,
                                graphs.plan_memory, graphs.topological_order, graphs.tensor_shapes,
                                figures.graphs.graph_figure])
def test_not_a_model_is_a_type_error(fn):
    with pytest.raises(TypeError, match="model must be an onnx.ModelProto"):
        fn("model.onnx")


def test_unknown_shapes_are_a_clear_error():
    m = _model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [_vi("x", ["N", 4])], [_vi("y", None)])
    with pytest.raises(ValueError, match="tensor 'x' .*relu.* unknown shape"):
        graphs.op_counts(m)
    with pytest.raises(ValueError, match="unknown shape"):
        graphs.plan_memory(m)


def test_cycles_and_dangling_inputs_are_clear_errors():
    cyc = _model([helper.make_node("Relu", ["b"], ["a"], name="one"),
                  helper.make_node("Add", ["x", "a"], ["b"], name="two")],
                 [_vi("x", [2])], [_vi("b", [2])])
    for fn in (graphs.topological_order, graphs.op_counts, graphs.plan_memory, graphs.fold_batchnorm):
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
    with pytest.raises(ValueError, match="alignment must be a positive power of two"):
        graphs.plan_memory(m, alignment=48)
    with pytest.raises(ValueError, match="itemsize must be >= 1"):
        graphs.op_counts(m, itemsize=0)
    with pytest.raises(ValueError, match="repeat must be >= 1"):
        graphs.measure_machine(repeat=0)
    with pytest.raises(TypeError, match="machine must be a MachineSpec"):
        figures.graphs.roofline_figure("fast")
    with pytest.raises(TypeError, match=r"counts\[0\] must be an OpCount"):
        figures.graphs.roofline_figure(graphs.MachineSpec(1, 1, "a", "b", "c"), [{"flops": 1}])
    with pytest.raises(ValueError, match=r"extra\[0\] must be a dict"):
        figures.graphs.roofline_figure(graphs.MachineSpec(1, 1, "a", "b", "c"), extra=[{"name": "x", "intensity": 0}])
    with pytest.raises(TypeError, match="plan must be a MemoryPlan"):
        figures.graphs.lifetime_figure(m)
    with pytest.raises(ValueError, match=r"intervals\[0\]"):
        graphs.live_peak([(10, 3, 1)])
    with pytest.raises(TypeError, match="inputs must be a dict"):
        graphs.run_reference(m, [np.zeros((1, 3, 4, 4), np.float32)])
    from npukit import tally

    with pytest.raises(TypeError, match="machine must be a MachineSpec"):
        tally.Context(machine="fast")
    with pytest.raises(TypeError, match=r"counts\[0\] must be an OpCount"):
        graphs.totals([1])
    with pytest.raises(ValueError, match="blocks must be >= 0"):
        graphs.example_chain(blocks=-1)


def test_unsupported_ops_and_batchnorm_modes():
    m = _model([helper.make_node("Softmax", ["x"], ["y"], name="sm")], [_vi("x", [1, 4])], [_vi("y", [1, 4])])
    with pytest.raises(ValueError, match="no counting rule for op_type 'Softmax'.*supported: "):
        graphs.op_counts(m)
    base = graphs.example_chain(blocks=0, channels=2, size=4)
    train = onnx.ModelProto()
    train.CopyFrom(base)
    bn = [n for n in train.graph.node if n.op_type == "BatchNormalization"][0]
    bn.attribute.append(helper.make_attribute("training_mode", 1))
    with pytest.raises(ValueError, match="training mode"):
        graphs.fold_batchnorm(train)
    dyn = onnx.ModelProto()
    dyn.CopyFrom(base)
    bn = [n for n in dyn.graph.node if n.op_type == "BatchNormalization"][0]
    bn.input[1] = "x_scale"
    dyn.graph.input.append(_vi("x_scale", [2]))
    with pytest.raises(ValueError, match="non-constant parameters"):
        graphs.fold_batchnorm(dyn)


# ---- the lab's checkers accept npukit.graphs and catch typical mistakes ----------------------


def test_chapter3_checkers_agree_with_graphs_and_catch_mistakes(capsys):
    from npukit import teach

    def macs_via_graphs(x_shape, w_shape, stride, pad, dilation, group):
        node = helper.make_node("Conv", ["x", "W"], ["y"], group=group, strides=[stride] * 2, pads=[pad] * 4,
                                dilations=[dilation] * 2)
        w = numpy_helper.from_array(np.zeros(w_shape, np.float32), "W")
        return graphs.op_counts(_model([node], [_vi("x", list(x_shape))], [_vi("y", None)], [w]))[0].macs

    teach.check_conv_macs(macs_via_graphs)
    assert "40 fresh cases agree" in capsys.readouterr().out

    def macs_ignoring_group(x_shape, w_shape, stride, pad, dilation, group):
        return macs_via_graphs(x_shape, w_shape, stride, pad, dilation, group) * group

    with pytest.raises(AssertionError, match="conv MACs: wrong answer"):
        teach.check_conv_macs(macs_ignoring_group)

    def fold_via_graphs(W, b, gamma, beta, mean, var, eps):
        c_out = W.shape[0]
        group = 1  # folding does not depend on the group; pick an input that fits W
        nodes = [helper.make_node("Conv", ["x", "W", "b"], ["c"]),
                 helper.make_node("BatchNormalization", ["c", "g", "B", "m", "v"], ["y"], epsilon=eps)]
        inits = [numpy_helper.from_array(a, n) for a, n in
                 ((W, "W"), (b, "b"), (gamma, "g"), (beta, "B"), (mean, "m"), (var, "v"))]
        x = _vi("x", [1, W.shape[1] * group, W.shape[2], W.shape[3]])
        folded = graphs.fold_batchnorm(_model(nodes, [x], [_vi("y", [1, c_out, 1, 1])], inits))
        arrays = {t.name: numpy_helper.to_array(t) for t in folded.graph.initializer}
        conv = folded.graph.node[0]
        return arrays[conv.input[1]], arrays[conv.input[2]]

    teach.check_fold_bn(fold_via_graphs)
    assert "12 fresh cases agree" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="fold BN: wrong answer.*b_folded is wrong"):  # bias not scaled
        teach.check_fold_bn(lambda W, b, g, B, m, v, eps: (W * (g / np.sqrt(v + eps))[:, None, None, None], b + B))
    with pytest.raises(AssertionError, match="fold BN: wrong answer.*eps 0.001.*W_folded is wrong"):  # eps forgotten
        teach.check_fold_bn(lambda W, b, g, B, m, v, eps: (W * (g / np.sqrt(v))[:, None, None, None],
                                                           (b - m) * g / np.sqrt(v) + B))
    with pytest.raises(AssertionError, match="return a pair"):
        teach.check_fold_bn(lambda W, b, g, B, m, v, eps: W)

    teach.check_live_peak(graphs.live_peak)
    assert "30 fresh cases agree" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="live peak: wrong answer"):
        teach.check_live_peak(lambda ts: sum(s for s, _, _ in ts))  # the naive total

    spec = lambda f, b, p, bw: graphs.MachineSpec(p, bw, "x", "", "").attainable(f / b)  # noqa: E731
    teach.check_attainable(spec)
    assert "40 fresh cases agree" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="attainable: wrong answer"):
        teach.check_attainable(lambda f, b, p, bw: min(p, bw * b / f))  # intensity upside down
    with pytest.raises(AssertionError, match="compute-bound kernel"):
        teach.check_attainable(lambda f, b, p, bw: bw * f / b)  # no flat roof
