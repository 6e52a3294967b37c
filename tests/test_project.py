"""The term project's loop (npukit.project), against independent references.

The end-to-end test runs the whole loop on the shipped ResNet-style example
with 24 held-out images and 3 benchmark rounds (about 5 s here); the chain
test does the same on CameraNet, whose graph takes chapter 6's quantizer.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from npukit import data, project, zoo
from npukit.graphs import MachineSpec

MACHINE = MachineSpec(1e11, 1e10, "example", "given", "given")


def _with_node(model, op, name="gate"):
    """``model`` with one more node of type ``op`` applied to its logits."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    out = m.graph.output[0].name
    for n in m.graph.node:
        n.output[:] = [f"{o}_pre" if o == out else o for o in n.output]
    m.graph.node.append(helper.make_node(op, [f"{out}_pre"], [out], name=name))
    return m


def test_a_model_with_an_unsupported_operator_is_refused_by_name():
    model = _with_node(zoo.example("mobilenet").to_onnx(), "Softmax", "head.softmax")
    with pytest.raises(ValueError, match=r"model uses Softmax \(node 'head.softmax'\)"):
        project.load_model(model)
    with pytest.raises(ValueError, match=r"model uses Softmax \(node 'head.softmax'\)"):
        project.closed_loop(model, np.zeros((1, 3, 32, 32), np.float32), np.zeros((1, 3, 32, 32), np.float32))


def test_the_first_unsupported_operator_is_the_one_named():
    model = _with_node(_with_node(zoo.example("resnet").to_onnx(), "Sigmoid", "first"), "Tanh", "second")
    with pytest.raises(ValueError, match="Sigmoid \\(node 'first'\\)"):
        project.load_model(model)


def test_load_model_reads_paths_and_bytes_and_fixes_a_symbolic_batch(tmp_path):
    model = zoo.example("resnet").to_onnx()
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    assert project.load_model(path).graph.node[0].name == "stem.conv"
    assert project.load_model(model.SerializeToString()).graph.name == "resnet"
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    with pytest.raises(ValueError, match="input_shape"):
        project.load_model(model)
    fixed = project.load_model(model, input_shape=(1, 3, 32, 32))
    assert [d.dim_value for d in fixed.graph.input[0].type.tensor_type.shape.dim] == [1, 3, 32, 32]
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"   # the caller's model untouched


def _unnamed(names=("", "", "", "", "")):
    """Conv 3→8 3×3 (pad 1) on 8×8, Relu, Conv 8→16 1×1, GlobalAveragePool, Flatten, Gemm 16→4, as
    ``onnx.helper`` writes nodes without ``name=``; ``names`` names the Conv, Relu, Conv, pool and Gemm."""
    rng = np.random.default_rng(0)
    w = lambda *s: helper.make_tensor(f"w{len(s)}_{s[0]}", TensorProto.FLOAT, s, rng.normal(size=s).ravel())
    inits = [w(8, 3, 3, 3), w(16, 8, 1, 1), w(4, 16)]
    kw = [dict(name=n) if n else {} for n in names]
    nodes = [helper.make_node("Conv", ["x", inits[0].name], ["a"], pads=[1, 1, 1, 1], **kw[0]),
             helper.make_node("Relu", ["a"], ["b"], **kw[1]),
             helper.make_node("Conv", ["b", inits[1].name], ["c"], **kw[2]),
             helper.make_node("GlobalAveragePool", ["c"], ["d"], **kw[3]),
             helper.make_node("Flatten", ["d"], ["e"]),
             helper.make_node("Gemm", ["e", inits[2].name], ["y"], transB=1, **kw[4])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = helper.make_graph(nodes, "unnamed", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_unnamed_nodes_get_unique_names_and_the_ledger_counts_each_layer():
    loaded = project.load_model(_unnamed())
    names = [n.name for n in loaded.graph.node]
    assert names == ["Conv_0", "Relu_1", "Conv_2", "GlobalAveragePool_3", "Flatten_4", "Gemm_5"]
    rows, _ = project._ledger(loaded, MACHINE, {})
    by_hand = {"Conv_0": 64 * 8 * 3 * 9, "Conv_2": 64 * 16 * 8, "Gemm_5": 16 * 4}   # output × K
    assert {r.name: r.macs for r in rows} == by_hand
    assert [r.kind for r in rows] == ["dense", "pointwise", "fc"]
    clash = project.load_model(_unnamed(("Relu_1", "", "", "", "")))   # a given name is never reused
    assert len({n.name for n in clash.graph.node}) == 6 and clash.graph.node[0].name == "Relu_1"


def test_normalize_prepends_the_exact_per_channel_normalization():
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    model = _unnamed()
    loaded = project.load_model(model, normalize=(mean, std))
    assert loaded.graph.node[0].name == "input.normalize" and loaded.graph.node[0].op_type == "Conv"
    x = np.random.default_rng(1).random((1, 3, 8, 8), dtype=np.float32)
    by_numpy = (x - np.array(mean, np.float32)[:, None, None]) / np.array(std, np.float32)[:, None, None]
    want = ReferenceEvaluator(model).run(None, {"x": by_numpy.astype(np.float32)})[0]
    got = ReferenceEvaluator(loaded).run(None, {"x": x})[0]
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5)    # exact at the padded border too: the 3×3 conv pads
    with pytest.raises(ValueError, match="normalize"):
        project.closed_loop(model, x * 2 - 0.5, x, machine=MACHINE)   # normalized pixels: the error says what to pass


@pytest.mark.parametrize("change", ["transB=0", "alpha", "dilations", "asymmetric pads"])
def test_a_chain_with_attributes_chapter_6_does_not_read_goes_to_onnx_runtime(change):
    import onnxruntime as ort

    model = _unnamed()
    conv, gemm = model.graph.node[0], model.graph.node[5]
    if change == "transB=0":                                       # K = 16 ≠ N = 4
        w = next(t for t in model.graph.initializer if t.name == gemm.input[1])
        arr = onnx.numpy_helper.to_array(w).T.copy()
        w.CopyFrom(onnx.numpy_helper.from_array(arr, w.name))
        del gemm.attribute[:]
        gemm.attribute.append(helper.make_attribute("transB", 0))
    elif change == "alpha":
        gemm.attribute.append(helper.make_attribute("alpha", 0.5))
    elif change == "dilations":
        conv.attribute.append(helper.make_attribute("dilations", [2, 2]))
        del conv.attribute[0]
        conv.attribute.append(helper.make_attribute("pads", [2, 2, 2, 2]))
    else:
        del conv.attribute[0]
        conv.attribute.append(helper.make_attribute("pads", [0, 0, 2, 2]))
    bias = helper.make_tensor("gemm.b", TensorProto.FLOAT, [4], np.zeros(4))
    model.graph.initializer.append(bias)
    gemm.input.append("gemm.b")
    loaded = project.load_model(model)
    assert not project._uses_ptq(loaded, ())
    cal = np.random.default_rng(2).random((8, 3, 8, 8), dtype=np.float32)
    qdq, quantizer = project._quantize(loaded, cal, "minmax")
    assert quantizer == "onnxruntime"
    s = ort.InferenceSession(qdq.SerializeToString(), providers=["CPUExecutionProvider"])
    ref = ReferenceEvaluator(loaded)
    for im in cal[:2]:
        want = ref.run(None, {"x": im[None]})[0]
        assert np.abs(s.run(None, {"x": im[None]})[0] - want).max() <= 0.1 * np.abs(want).max()


def test_duplicate_node_names_are_refused():
    with pytest.raises(ValueError, match=r"node names must be unique.*'n' \(4 nodes\)"):
        project.load_model(_unnamed(("n", "n", "n", "", "n")))


@pytest.mark.parametrize("name", sorted(zoo.EXAMPLES))
def test_examples_match_onnx_reference_and_their_gradients(name):
    net = zoo.ExampleNet(name, seed=3)
    x, y = data.shapes_dataset(3, seed=5)
    ref = ReferenceEvaluator(net.to_onnx()).run(None, {"image": x[:1]})[0]
    np.testing.assert_allclose(net(x[:1]), ref, atol=1e-5)
    net.params = {k: v.astype(np.float64) for k, v in net.params.items()}
    x64 = x.astype(np.float64)

    def loss():
        logits = net.forward(x64, train=True)
        z = logits - logits.max(1, keepdims=True)
        return float(-(z[np.arange(3), y] - np.log(np.exp(z).sum(1))).mean())

    loss()
    logits = net.forward(x64, train=True)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    p[np.arange(3), y] -= 1
    grads = net.backward(p / 3)
    for key in [k for k in net.trainable() if k.endswith("conv.weight")][:: 3]:
        i = (0,) * net.params[key].ndim
        net.params[key][i] += 1e-6
        up = loss()
        net.params[key][i] -= 2e-6
        down = loss()
        net.params[key][i] += 1e-6
        assert grads[key][i] == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-8), key


@pytest.mark.parametrize("name", sorted(zoo.EXAMPLES))
def test_shipped_examples_learned_the_task(name):
    import onnxruntime as ort

    images, labels = data.heldout(200)
    s = ort.InferenceSession(zoo.example(name).to_onnx().SerializeToString(), providers=["CPUExecutionProvider"])
    top = np.array([s.run(None, {"image": im[None]})[0].argmax() for im in images])
    assert (top == labels).mean() > 0.5          # chance is 1/8


def test_the_loop_runs_end_to_end_on_a_residual_network(tmp_path):
    import onnxruntime as ort

    cal = data.shapes_dataset(32, seed=7)[0]
    images, labels = data.heldout(24)
    p = project.closed_loop(zoo.example("resnet").to_onnx(), cal, images, labels=labels, machine=MACHINE,
                            runs=3, warmup=1, min_agreement=0.75, min_heldout=24)   # 24 images: a loose gate, the loop is tested
    assert p.passed and p.quantizer == "onnxruntime"
    assert [c.stage for c in p.checks] == ["data", "data", "fold", "fold", "quantize", "quantize", "contract", "contract",
                                           "compile", "verify", "verify"]
    assert p.verdict.word in ("faster", "indistinguishable", "slower") and p.verdict.low <= p.verdict.high
    # INT8's answers, independently: ONNX Runtime runs the same QDQ model
    s = ort.InferenceSession(p.qdq.SerializeToString(), providers=["CPUExecutionProvider"])
    ort_top = np.array([s.run(None, {"image": im[None]})[0].argmax() for im in images])
    ref = ReferenceEvaluator(p.model)
    float_top = np.array([ref.run(None, {"image": im[None]})[0].argmax() for im in images])
    assert abs((ort_top == float_top).mean() - p.agreement) <= 2 / len(images)
    # the ledger's MACs, from the shapes by hand
    convs = [n for n in p.folded.graph.node if n.op_type in ("Conv", "Gemm")]
    assert [r.name for r in p.layers] == [n.name for n in convs]
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in onnx.shape_inference.infer_shapes(p.folded).graph.value_info}
    inits = {t.name: list(t.dims) for t in p.folded.graph.initializer}
    for n, r in zip(convs, p.layers):
        w = inits[n.input[1]]
        want = (np.prod(shapes[n.output[0]][1:]) * np.prod(w[1:]) if n.op_type == "Conv" else w[0] * w[1])
        assert r.macs == want, n.name
        assert p.array.layers[convs.index(n)].layer.macs == want
    html = p.write(tmp_path / "report.html").read_text(encoding="utf-8")
    for part in ("Checks", "Ledger", "Roofline", "Array estimate", "Published NPUs", "b2.short.conv", "OpenVINO 20",
                 "ONNX Runtime 1."):
        assert part in html


def test_one_layer_kept_in_float_with_another_calibration_and_the_data_checks_can_fail():
    """The rubric's "one change": ONNX Runtime's percentile calibration with one convolution left in float;
    the held-out images reused as calibration and too few of them fail the two data checks."""
    images = data.heldout(24)[0]
    p = project.closed_loop(zoo.example("resnet").to_onnx(), images[:16], images, machine=MACHINE, runs=3,
                            warmup=1, min_agreement=0.5, method="percentile", keep_float=["b2.short.conv"])
    failed = {c.quantity: c.value for c in p.checks if not c.ok}
    assert failed["held-out images"] == 24 and failed["images both in calibration and held out"] == 16
    kept = next(n for n in p.qdq.graph.node if n.name == "b2.short.conv")
    assert kept.input[1] in {t.name for t in p.qdq.graph.initializer}          # its float weight, no DQ
    dq = {n.output[0] for n in p.qdq.graph.node if n.op_type == "DequantizeLinear"}
    others = [n for n in p.qdq.graph.node if n.op_type in ("Conv", "Gemm") and n.name != "b2.short.conv"]
    assert others and all(n.input[1] in dq for n in others)
    assert {c.quantity: c.value for c in p.checks}["int8 weights ≠ QuantizeLinear (onnx.reference)"] == 0
    with pytest.raises(ValueError, match="method must be one of"):
        project.closed_loop(zoo.example("resnet").to_onnx(), images, images, machine=MACHINE, method="mse")


def test_a_chain_takes_chapter_6s_quantizer_and_its_checks_can_fail():
    from npukit.models import CameraNet

    cal = data.shapes_dataset(16, seed=7)[0]
    images = data.heldout(12)[0]
    net = CameraNet.pretrained()
    p = project.closed_loop(net.to_onnx(), cal, images, machine=MACHINE, runs=3, warmup=1, min_heldout=12,
                            method="mse")                                   # chapter 6's MSE observer
    assert p.quantizer == "npukit.ptq" and p.passed and p.accuracy == {}
    # calibrated on images 20 times too dark, every bright activation clips: only the verification fails
    dark = project.closed_loop(net.to_onnx(), cal * np.float32(0.05), images, machine=MACHINE, runs=3, warmup=1,
                                min_heldout=12)
    assert [c.quantity for c in dark.checks if not c.ok] == ["INT8 top-1 agreement with FP32"]
    assert not dark.passed and dark.agreement < 0.9
    with pytest.raises(ValueError, match="for chapter 6's quantizer"):        # its observers, not ORT's
        project.closed_loop(net.to_onnx(), cal, images, machine=MACHINE, method="entropy")


def test_the_published_npu_bounds_follow_chapter_9s_roofline(monkeypatch):
    """With chapter 9's module present (a stand-in here), each device with both figures gets its bound."""
    import sys
    import types

    import npukit
    from npukit import project as proj
    from npukit.graphs import op_counts
    from npukit.rewrites import fold_batchnorm

    fake = types.ModuleType("npukit.npus")
    fake.DEVICES = {"fast": types.SimpleNamespace(name="fast", peak_tops=10.0, bandwidth_gbs=1000.0),
                    "narrow": types.SimpleNamespace(name="narrow", peak_tops=1000.0, bandwidth_gbs=0.1),
                    "secret": types.SimpleNamespace(name="secret", peak_tops=None, bandwidth_gbs=5.0)}
    monkeypatch.setitem(sys.modules, "npukit.npus", fake)
    monkeypatch.setattr(npukit, "npus", fake, raising=False)
    folded = fold_batchnorm(zoo.example("mobilenet").to_onnx())
    macs = sum(c.macs for c in op_counts(folded))
    nbytes = sum(int(np.prod(t.dims)) for t in folded.graph.initializer) + 3 * 32 * 32 + 8
    bounds = {d: (t, roof) for d, t, roof in proj._npu_bounds(folded)}
    assert set(bounds) == {"fast", "narrow"}
    assert bounds["fast"][1] == "compute" and bounds["fast"][0] == pytest.approx(2 * macs / 10e12)
    assert bounds["narrow"][1] == "memory" and bounds["narrow"][0] == pytest.approx(nbytes / 0.1e9)
