"""Tests of npukit.rewrites (chapter 3): folding, fusion, running and memory planning.

* BatchNorm folding and fusion: onnx.reference.ReferenceEvaluator on the
  original model; onnx.checker on the result.
* Memory plans: random DAGs built with onnx.helper; lifetimes recomputed here
  from the node list, live bytes by a step-by-step sweep.
"""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from support import onnx_model as _model
from support import value_info as _vi

from npukit import graphs, rewrites

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
    folded = rewrites.fold_batchnorm(model)
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
    plan = rewrites.plan_memory(folded)
    assert plan.lower_bound_bytes <= plan.peak_bytes <= plan.naive_bytes


# ---- fusion -------------------------------------------------------------------------------


def test_fusion_keeps_outputs_and_saves_exactly_the_intermediate_traffic():
    m = rewrites.fold_batchnorm(graphs.example_chain(blocks=3, channels=4, size=6, seed=2))
    x = np.random.default_rng(5).standard_normal((1, 3, 6, 6)).astype(np.float32)
    r = rewrites.fuse_conv_add_relu(m)
    onnx.checker.check_model(r.model)
    assert [n.op_type for n in r.model.graph.node] == ["FusedConv"] * 4
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = rewrites.run_reference(r.model, {"x": x})[0]
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
    r = rewrites.fuse_conv_add_relu(m)
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
    plan = rewrites.plan_memory(model, alignment=alignment)
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
    plan = rewrites.plan_memory(graphs.example_chain(blocks=6, channels=8, size=8, residual=False))
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
        assert rewrites.live_peak(iv) == sweep


def test_batchnorm_counts_two_flops_per_element_and_folding_keeps_macs():
    m = graphs.example_chain(blocks=2, channels=4, size=5)
    bn = [r for r in graphs.op_counts(m) if r.op_type == "BatchNormalization"][0]
    assert (bn.macs, bn.flops, bn.param_bytes) == (0, 200, 4 * 4 * 4)
    before, after = graphs.totals(graphs.op_counts(m)), graphs.totals(graphs.op_counts(rewrites.fold_batchnorm(m)))
    assert before["macs"] == after["macs"] and before["flops"] == after["flops"] + 3 * 200



# ---- fusion must not break a graph -----------------------------------------------------------


def test_fusion_refuses_an_add_that_reads_the_conv_twice():
    """Conv → Add(c, c) → Relu: fusing the Add would make the fused node read ``c``, which it no longer writes."""
    w = numpy_helper.from_array(np.random.default_rng(3).standard_normal((2, 2, 1, 1)).astype(np.float32), "W")
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv"),
             helper.make_node("Add", ["c", "c"], ["s"], name="double"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    m = _model(nodes, [_vi("x", [1, 2, 3, 3])], [_vi("y", [1, 2, 3, 3])], [w])
    r = rewrites.fuse_conv_add_relu(m)
    assert [n.op_type for n in r.model.graph.node] == ["Conv", "Add", "Relu"]
    assert r.fusions == () and r.bytes_saved == 0
    graphs.topological_order(r.model)  # every tensor a node reads is still written by someone
    x = np.random.default_rng(4).standard_normal((1, 2, 3, 3)).astype(np.float32)
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    np.testing.assert_allclose(rewrites.run_reference(r.model, {"x": x})[0], want, rtol=1e-6)


def test_fusion_takes_the_add_whose_other_input_is_the_residual():
    w = numpy_helper.from_array(np.random.default_rng(5).standard_normal((2, 2, 1, 1)).astype(np.float32), "W")
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv"),
             helper.make_node("Add", ["x", "c"], ["y"], name="add")]  # the Conv's output is the Add's second input
    m = _model(nodes, [_vi("x", [1, 2, 3, 3])], [_vi("y", [1, 2, 3, 3])], [w])
    r = rewrites.fuse_conv_add_relu(m)
    (fused,) = r.model.graph.node
    assert list(fused.input) == ["x", "W", "", "x"] and r.fusions[0].removed == ("c",)
    x = np.random.default_rng(6).standard_normal((1, 2, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(rewrites.run_reference(r.model, {"x": x})[0], ReferenceEvaluator(m).run(None, {"x": x})[0],
                               rtol=1e-6)


# ---- run_reference checks its inputs ------------------------------------------------------------


def test_run_reference_names_a_bad_input():
    m = graphs.example_chain(blocks=1, channels=2, size=4)
    x = np.zeros((1, 3, 4, 4), np.float32)
    np.testing.assert_array_equal(rewrites.run_reference(m, {"x": x})[0], ReferenceEvaluator(m).run(None, {"x": x})[0])
    with pytest.raises(ValueError, match=r"inputs has 'z', which is not a graph input; the inputs are \['x'\]"):
        rewrites.run_reference(m, {"x": x, "z": x})
    with pytest.raises(ValueError, match="inputs has no array for the graph input 'x'"):
        rewrites.run_reference(m, {})
    with pytest.raises(ValueError, match=r"inputs\['x'\] must have shape \(1, 3, 4, 4\), got \(1, 3, 4, 5\)"):
        rewrites.run_reference(m, {"x": np.zeros((1, 3, 4, 5), np.float32)})
    with pytest.raises(TypeError, match=r"inputs\['x'\] must have dtype float32, got float64"):
        rewrites.run_reference(m, {"x": x.astype(np.float64)})
    with pytest.raises(TypeError, match=r"inputs\['x'\] must be a numpy.ndarray"):
        rewrites.run_reference(m, {"x": x.tolist()})
    with pytest.raises(TypeError, match="inputs must be a dict"):
        rewrites.run_reference(m, [x])
    dyn = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", ["N", 2])], [_vi("y", ["N", 2])])
    assert rewrites.run_reference(dyn, {"x": -np.ones((5, 2), np.float32)})[0].shape == (5, 2)  # a symbolic dim fits any size


# ---- records, numbers and error paths -----------------------------------------------------------


def test_records_check_their_fields():
    with pytest.raises(ValueError, match="last must be >= first"):
        rewrites.Buffer("t", 4, 0, 3, 1)
    b = rewrites.Buffer("t", 64, 0, 0, 2)
    assert b.overlaps_in_time(rewrites.Buffer("u", 8, 64, 2, 3)) and not b.overlaps_in_memory(rewrites.Buffer("u", 8, 64, 2, 3))
    with pytest.raises(TypeError, match="other must be a Buffer"):
        b.overlaps_in_memory((0, 8))
    plan = rewrites.MemoryPlan(["n0", "n1", "n2"], [b], 64, 64, 64, 64)
    assert plan.order == ("n0", "n1", "n2") and plan.buffers == (b,) and plan.buffer("t") is b
    with pytest.raises(ValueError, match="past the 1 nodes of order"):  # a plan must agree with itself
        rewrites.MemoryPlan(["n0"], [b], 64, 64, 64, 64)
    with pytest.raises(ValueError, match="live together and share bytes"):
        rewrites.MemoryPlan(["n0", "n1", "n2"], [b, rewrites.Buffer("u", 8, 0, 1, 2)], 64, 128, 72, 64)
    with pytest.raises(TypeError, match=r"buffers\[0\] must be a Buffer"):
        rewrites.MemoryPlan(("n0",), ((64, 0, 0, 2),), 64, 64, 64, 64)
    with pytest.raises(ValueError, match="op_types must have one entry per node"):
        rewrites.Fusion(("a", "b"), ("Conv",), ("t",), 8)
    with pytest.raises(TypeError, match=r"fusions\[0\] must be a Fusion"):
        rewrites.FusionResult(graphs.example_chain(0, 1, 2), ("conv",))


def test_numbers_records():
    from npukit import tally

    rows = rewrites.numbers(tally.Context(machine=graphs.MachineSpec(1e11, 1e10, "toy", "a", "b")))
    assert all(isinstance(r, tally.Row) and r.chapter == 3 for r in rows)
    assert "toy" in rows[-1].how and rows[-1].value == "100 GFLOP/s, 10.0 GB/s"


@pytest.mark.parametrize("fn", [rewrites.fold_batchnorm, rewrites.fuse_conv_add_relu, rewrites.plan_memory])
def test_not_a_model_is_a_type_error(fn):
    with pytest.raises(TypeError, match="model must be an onnx.ModelProto"):
        fn("model.onnx")


def test_unknown_shapes_cycles_and_bad_arguments():
    m = _model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [_vi("x", ["N", 4])], [_vi("y", None)])
    with pytest.raises(ValueError, match="unknown shape"):
        rewrites.plan_memory(m)
    cyc = _model([helper.make_node("Relu", ["b"], ["a"], name="one"),
                  helper.make_node("Add", ["x", "a"], ["b"], name="two")],
                 [_vi("x", [2])], [_vi("b", [2])])
    for fn in (rewrites.plan_memory, rewrites.fold_batchnorm):
        with pytest.raises(ValueError, match="cycle.*one, two"):
            fn(cyc)
    chain = graphs.example_chain(blocks=1, channels=2, size=4)
    with pytest.raises(ValueError, match="alignment must be a positive power of two"):
        rewrites.plan_memory(chain, alignment=48)
    with pytest.raises(ValueError, match=r"intervals\[0\]"):
        rewrites.live_peak([(10, 3, 1)])
    with pytest.raises(TypeError, match=r"intervals\[0\] must be a list or tuple"):
        rewrites.live_peak(["abc"])
    with pytest.raises(TypeError, match="intervals must be an iterable"):
        rewrites.live_peak(5)


def test_batchnorm_modes_that_cannot_fold():
    base = graphs.example_chain(blocks=0, channels=2, size=4)
    train = onnx.ModelProto()
    train.CopyFrom(base)
    bn = [n for n in train.graph.node if n.op_type == "BatchNormalization"][0]
    bn.attribute.append(helper.make_attribute("training_mode", 1))
    with pytest.raises(ValueError, match="training mode"):
        rewrites.fold_batchnorm(train)
    dyn = onnx.ModelProto()
    dyn.CopyFrom(base)
    bn = [n for n in dyn.graph.node if n.op_type == "BatchNormalization"][0]
    bn.input[1] = "x_scale"
    dyn.graph.input.append(_vi("x_scale", [2]))
    with pytest.raises(ValueError, match="non-constant parameters"):
        rewrites.fold_batchnorm(dyn)
