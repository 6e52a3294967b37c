"""Tests of npukit.models: CameraNet's NumPy passes, save/load, ONNX export and summary.

References are independent of the code under test: finite differences for the
backward pass, ``onnx.reference.ReferenceEvaluator`` and OpenVINO's CPU plugin
for the forward pass and the export, ONNX shape inference for the summary, and
chapter 3's ``graphs.op_counts`` (which counts the ONNX graph) for the MACs.
"""

from __future__ import annotations

import copy
import subprocess
import sys

import numpy as np
import pytest
from support import assert_gradients_match

from npukit import models
from npukit.data import CLASSES, shapes_dataset
from npukit.models import CameraNet, Layer

N_CHECK = 32  # images compared between NumPy, ONNX reference and OpenVINO


@pytest.fixture(scope="module")
def net() -> CameraNet:
    return CameraNet.pretrained()


@pytest.fixture(scope="module")
def check_images() -> np.ndarray:
    return shapes_dataset(N_CHECK, seed=7)[0]


# ---- construction -------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"blocks": [(8, 3)]}, ValueError, r"blocks\[0\] must be \(width >= 1, stride 1 or 2\)"),
        ({"blocks": ((16.7, 1),)}, TypeError, r"blocks\[0\] width must be an integer, got float 16.7"),
        ({"blocks": ((True, 1),)}, TypeError, r"blocks\[0\] width must be an integer, got bool"),
        ({"blocks": ((16, 1.0),)}, TypeError, r"blocks\[0\] stride must be an integer"),
        ({"blocks": ((0, 1),)}, ValueError, r"blocks\[0\] width must be >= 1"),
        ({"blocks": [(8, 1, 2)]}, TypeError, r"blocks\[0\] must be a \(width, stride\) pair"),
        ({"blocks": ["ab"]}, TypeError, r"blocks\[0\] must be a \(width, stride\) pair"),
        ({"blocks": "ab"}, TypeError, "blocks must be a list or tuple"),
        ({"blocks": []}, ValueError, "blocks must have at least 1 item"),
        ({"stem": 8.0}, TypeError, "stem must be an integer"),
        ({"stem": True}, TypeError, "stem must be an integer"),
        ({"num_classes": 1}, ValueError, "num_classes must be >= 2"),
        ({"size": 2}, ValueError, "size must be >= 4"),
        ({"seed": -1}, ValueError, "seed must be >= 0"),
    ],
)
def test_constructor_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        CameraNet(**kwargs)


def test_constructor_widths_are_the_ones_asked_for():
    tiny = CameraNet(stem=5, blocks=[(7, 1), [9, 2]], num_classes=3, size=20)
    assert [(layer.cin, layer.cout) for layer in tiny.layers if layer.kind == "pointwise"] == [(5, 7), (7, 9)]
    assert tiny.params["fc.weight"].shape == (3, 9)
    assert tiny(np.zeros((2, 3, 20, 20), np.float32)).shape == (2, 3)


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        (("", "Relu", 1, 1), {}, ValueError, "name must not be empty"),
        ((3, "Relu", 1, 1), {}, TypeError, "name must be a string"),
        (("x", "Softmax", 1, 1), {}, ValueError, "op must be one of"),
        (("x", "Conv", 0, 1), {}, ValueError, "cin must be >= 1"),
        (("x", "Conv", 4, 4), {"kernel": 2.5}, TypeError, "kernel must be an integer"),
        (("x", "Conv", 4, 6), {"groups": 4}, ValueError, "groups must divide cin and cout"),
    ],
)
def test_layer_bad_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        Layer(*args, **kwargs)


def test_layer_kind():
    assert Layer("a", "Conv", 4, 4, kernel=3, groups=4).kind == "depthwise"
    assert Layer("b", "Conv", 4, 8).kind == "pointwise"
    assert Layer("c", "Conv", 3, 8, kernel=3).kind == "dense"
    assert Layer("d", "Relu", 8, 8).kind == "Relu"


# ---- the forward pass ------------------------------------------------------------


def test_forward_shape_dtype(net, check_images):
    logits = net(check_images)
    assert logits.shape == (N_CHECK, len(CLASSES)) and logits.dtype == np.float32
    assert net(check_images[:0]).shape == (0, len(CLASSES))
    # batching inside __call__ does not change the answer beyond float32 rounding:
    # BLAS may pick another kernel (another summation order) for another batch size
    np.testing.assert_allclose(net(check_images[:5]), logits[:5], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "bad, error, match",
    [
        ([[0.0]], TypeError, "images must be a numpy.ndarray"),
        (np.zeros((2, 3, 32, 32), np.float64), TypeError, "images must have dtype float32"),
        (np.zeros((2, 3, 32, 32), np.uint8), TypeError, "images must have dtype float32"),
        (np.zeros((2, 32, 32, 3), np.float32), ValueError, r"images must have shape \(n, 3, 32, 32\)"),
        (np.zeros((3, 32, 32), np.float32), ValueError, r"images must have shape"),
        (np.full((1, 3, 32, 32), np.nan, np.float32), ValueError, "images must be finite"),
    ],
)
def test_forward_bad_input(net, bad, error, match):
    with pytest.raises(error, match=match):
        net(bad)
    with pytest.raises(error, match=match):
        net.activations(bad)
    if getattr(bad, "dtype", None) != np.float64:  # forward takes float64 too (for gradient checks)
        with pytest.raises(error, match=match):
            net.forward(bad)


def test_forward_train_flag_and_empty_batch(net, check_images):
    with pytest.raises(TypeError, match="train must be True or False"):
        net.forward(check_images, train=1)
    with pytest.raises(ValueError, match="images must hold at least one image in training mode"):
        copy.deepcopy(net).forward(check_images[:0], train=True)
    assert net.forward(check_images[:0]).shape == (0, len(CLASSES))


# ---- the backward pass -------------------------------------------------------------


def test_gradients_match_finite_differences():
    """Central differences in float64 on a tiny net (a dense, a depthwise stride-2 conv, every op).

    The loss is linear in the logits, ``sum(R * logits)`` for a fixed random
    ``R``, so its gradient with respect to the logits is ``R``: nothing of
    npukit.train is involved.
    """
    tiny = CameraNet(stem=4, blocks=[(6, 1), (8, 2)], size=16, seed=3)
    tiny.params = {k: v.astype(np.float64) for k, v in tiny.params.items()}
    images = shapes_dataset(5, seed=2, size=16)[0].astype(np.float64)
    rng = np.random.default_rng(0)
    weights = rng.standard_normal((5, tiny.layers[-1].cout))
    tiny.forward(images, train=True)
    grads = tiny.backward(weights)

    def loss() -> float:
        return float((weights * tiny.forward(images, train=True)).sum())

    arrays = {k: tiny.params[k] for k in tiny.trainable()} | {"image": images}
    assert set(grads) == set(arrays)
    assert_gradients_match(loss, arrays, grads, rng)


def test_backward_bad_input():
    tiny = CameraNet(stem=4, blocks=[(8, 2)])
    with pytest.raises(RuntimeError, match="backward needs"):
        tiny.backward(np.zeros((1, 8), np.float32))
    images = shapes_dataset(3, seed=0)[0]
    tiny.forward(images, train=True)
    with pytest.raises(TypeError, match="d_logits must be a numpy.ndarray"):
        tiny.backward([1, 2])
    with pytest.raises(ValueError, match=r"d_logits must have the shape .* \(3, 8\), got \(2, 8\)"):
        tiny.backward(np.ones((2, 8)))
    with pytest.raises(TypeError, match="d_logits must be a float array"):
        tiny.backward(np.ones((3, 8), np.int64))
    with pytest.raises(ValueError, match="d_logits must be finite"):
        tiny.backward(np.full((3, 8), np.nan))
    tiny(images)  # an inference pass forgets the training pass
    with pytest.raises(RuntimeError, match="backward needs"):
        tiny.backward(np.ones((3, 8)))


# ---- saving and loading ----------------------------------------------------------------


def test_shipped_weights_are_small(net):
    assert models.WEIGHTS_PATH.stat().st_size < 1_000_000
    assert net.train_call is not None


def test_save_load_round_trip(tmp_path, net):
    path = tmp_path / "net.npz"
    net.save(path, train_call="demo")
    loaded = CameraNet.load(path)
    assert loaded.train_call == "demo"
    assert all(np.array_equal(loaded.params[k], net.params[k]) for k in net.params)
    again = tmp_path / "again.npz"
    CameraNet.load(str(path)).save(str(again), train_call="demo")
    assert again.read_bytes() == path.read_bytes()  # same weights, same bytes
    small = CameraNet(stem=4, blocks=[(8, 2)])
    small.save(path)
    assert CameraNet.load(path).train_call is None
    with np.load(path) as f:
        arrays = dict(f)
    del arrays["fc.bias"]
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="lacks the array 'fc.bias'"):
        CameraNet.load(path)
    arrays["fc.bias"] = np.zeros(3, np.float32)
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match=r"fc.bias has shape \(3,\)"):
        CameraNet.load(path)
    arrays["fc.bias"] = np.array(["a"] * 8)
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="fc.bias has shape .* and dtype <U1, expected float"):
        CameraNet.load(path)
    del arrays["__config__"]
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="path .* holds no valid CameraNet architecture"):
        CameraNet.load(path)


def test_load_and_save_refuse_bad_paths(tmp_path):
    with pytest.raises(ValueError, match="path must be a CameraNet .npz file, got the directory"):
        CameraNet.load(tmp_path)
    with pytest.raises(FileNotFoundError, match="path .*missing.npz' does not exist"):
        CameraNet.load(tmp_path / "missing.npz")
    (tmp_path / "notes.txt").write_text("not weights")
    with pytest.raises(ValueError, match="is not an .npz file written by CameraNet.save"):
        CameraNet.load(tmp_path / "notes.txt")
    np.save(tmp_path / "one.npy", np.zeros(3))
    with pytest.raises(ValueError, match="is not an .npz file"):
        CameraNet.load(tmp_path / "one.npy")
    with pytest.raises(TypeError, match="path must be a str or pathlib.Path"):
        CameraNet.load(3)
    with pytest.raises(ValueError, match="path must not be empty"):
        CameraNet.load("")
    net = CameraNet(stem=4, blocks=[(8, 2)])
    with pytest.raises(ValueError, match="path must name a file, got the directory"):
        net.save(tmp_path)
    with pytest.raises(FileNotFoundError, match="its folder does not exist"):
        net.save(tmp_path / "nowhere" / "x.npz")
    with pytest.raises(TypeError, match="train_call must be a string or None"):
        net.save(tmp_path / "x.npz", train_call=3)


def test_pretrained_returns_independent_copies():
    a = CameraNet.pretrained()
    a.params["fc.bias"][:] = 0
    assert not np.array_equal(CameraNet.pretrained().params["fc.bias"], a.params["fc.bias"])


# ---- ONNX export -------------------------------------------------------------------


def test_onnx_structure(net):
    import onnx

    model = net.to_onnx()
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version >= 17
    (inp,), (out,) = model.graph.input, model.graph.output
    assert inp.name == "image" and out.name == "logits"
    assert [d.dim_value for d in inp.type.tensor_type.shape.dim] == [1, 3, 32, 32]
    assert [d.dim_value for d in out.type.tensor_type.shape.dim] == [1, len(CLASSES)]
    assert [n.name for n in model.graph.node] == [layer.name for layer in net.layers]
    assert {i.name for i in model.graph.initializer} == set(net.params)


def test_onnx_keeps_batchnorm_nodes_after_each_conv(net):
    nodes = net.to_onnx().graph.node
    ops = [n.op_type for n in nodes]
    assert ops.count("BatchNormalization") == ops.count("Conv") == 7
    for i, n in enumerate(nodes):
        if n.op_type == "Conv":
            assert nodes[i + 1].op_type == "BatchNormalization"
            assert nodes[i + 1].input[0] == n.output[0]


def test_onnx_batch_options(net):
    static = net.to_onnx(batch=4)
    assert static.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 4
    dynamic = net.to_onnx(batch="N")
    assert dynamic.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"batch": 0}, ValueError, "batch must be >= 1"),
        ({"batch": 2.0}, TypeError, "batch must be an integer"),
        ({"batch": "2 images"}, ValueError, "batch must be an int or a dimension name"),
        ({"batch": True}, TypeError, "batch must be an integer"),
        ({"opset": 13}, ValueError, r"opset must be in 17\.\."),
        ({"opset": 99}, ValueError, r"opset must be in 17\.\.\d+ \(the opsets this onnx knows\), got 99"),
        ({"opset": 17.0}, TypeError, "opset must be an integer"),
        ({"opset": "17"}, TypeError, "opset must be an integer"),
    ],
)
def test_onnx_bad_arguments(net, kwargs, error, match):
    with pytest.raises(error, match=match):
        net.to_onnx(**kwargs)
    with pytest.raises(error, match=match):
        models.to_onnx(net, **kwargs)


def test_onnx_opset_range_ends_at_the_newest_onnx_knows(net):
    import onnx

    newest = onnx.defs.onnx_opset_version()
    model = models.to_onnx(net, opset=newest)
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version == newest
    with pytest.raises(ValueError, match="opset must be in"):
        models.to_onnx(net, opset=newest + 1)
    with pytest.raises(TypeError, match="net must be a CameraNet"):
        models.to_onnx("CameraNet")


def test_onnx_newest_opset_computes_the_same(net, check_images):
    import onnx
    from onnx.reference import ReferenceEvaluator

    model = models.to_onnx(net, batch=4, opset=onnx.defs.onnx_opset_version())
    (got,) = ReferenceEvaluator(model).run(None, {"image": check_images[:4]})
    np.testing.assert_allclose(got, net(check_images[:4]), rtol=0, atol=1e-5)


def test_onnx_rejects_non_finite_weights(net):
    broken = copy.deepcopy(net)
    broken.params["block2.pw.weight"][0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match=r"params\['block2.pw.weight'\] must be finite"):
        broken.to_onnx()


def test_onnx_reference_matches_numpy(net, check_images):
    from onnx.reference import ReferenceEvaluator

    (got,) = ReferenceEvaluator(net.to_onnx(batch=N_CHECK)).run(None, {"image": check_images})
    np.testing.assert_allclose(got, net(check_images), rtol=0, atol=1e-5)


def test_onnx_reference_matches_every_activation(net, check_images):
    """Every node output equals net.activations() under the same name (so later chapters can trust both)."""
    import onnx
    from onnx.reference import ReferenceEvaluator

    model = onnx.shape_inference.infer_shapes(net.to_onnx(batch=4))
    model.graph.output.extend(v for v in model.graph.value_info)
    names = [o.name for o in model.graph.output]
    outputs = dict(zip(names, ReferenceEvaluator(model).run(None, {"image": check_images[:4]})))
    acts = net.activations(check_images[:4])
    assert list(acts) == [layer.name for layer in net.layers]
    for name, value in acts.items():
        onnx_name = "logits" if name == "fc" else name
        np.testing.assert_allclose(outputs[onnx_name], value, rtol=0, atol=1e-5, err_msg=name)


def test_openvino_cpu_f32_matches_numpy(net, check_images):
    import openvino as ov

    core = ov.Core()
    model = core.read_model(net.to_onnx(batch=N_CHECK).SerializeToString(), b"")
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    got = compiled(check_images)[compiled.output(0)]
    np.testing.assert_allclose(got, net(check_images), rtol=0, atol=1e-5)


# ---- summary ---------------------------------------------------------------------


def test_summary_agrees_with_onnx_shape_inference(net):
    import onnx

    rows = models.summary(net, batch=2)
    model = onnx.shape_inference.infer_shapes(net.to_onnx(batch=2))
    shapes = {v.name: tuple(d.dim_value for d in v.type.tensor_type.shape.dim)
              for v in [*model.graph.value_info, *model.graph.output]}
    weights = {i.name: tuple(i.dims) for i in model.graph.initializer}
    for row, node in zip(rows, model.graph.node):
        assert row["layer"] == node.name and row["op"] == node.op_type
        assert row["output"] == shapes[node.output[0]]
        if node.op_type == "Conv":  # MACs: every output element reads Cin/groups × k × k inputs
            cout, cin_per_group, kh, kw = weights[node.input[1]]
            assert row["macs"] == np.prod(row["output"]) * cin_per_group * kh * kw
    trainable = sum(int(np.prod(s)) for k, s in weights.items() if not k.endswith((".mean", ".var")))
    assert sum(r["params"] for r in rows) == trainable


def test_summary_macs_equal_the_onnx_graph_count(net):
    """Chapter 0's per-layer MACs (models.summary) equal chapter 3's count over the ONNX graph."""
    from npukit import graphs

    for batch in (1, 3):
        rows = models.summary(net, batch=batch)
        counts = graphs.op_counts(net.to_onnx(batch=batch))
        assert [c.name for c in counts] == [r["layer"] for r in rows]
        assert [c.macs for c in counts] == [r["macs"] for r in rows]
        assert sum(c.macs for c in counts) == sum(r["macs"] for r in rows) > 0
    small = CameraNet(stem=4, blocks=[(6, 2), (10, 1)], num_classes=5, size=24)
    assert (sum(c.macs for c in graphs.op_counts(small.to_onnx()))
            == sum(r["macs"] for r in models.summary(small)))


def test_summary_table_and_bad_arguments(net):
    html = models.summary_table(net).data
    assert all(layer.name in html for layer in net.layers)
    assert f"{sum(r['macs'] for r in models.summary(net)):,}" in html
    for func in (models.summary, models.summary_table):
        with pytest.raises(TypeError, match="net must be a CameraNet"):
            func("CameraNet")
        with pytest.raises(ValueError, match="batch must be >= 1"):
            func(net, 0)
        with pytest.raises(TypeError, match="batch must be an integer"):
            func(net, 2.0)


def test_import_is_light():
    code = "import sys, npukit.models; print(sorted({'onnx', 'plotly', 'openvino'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---- chapter 0's figures (npukit.figures.cameranet) -------------------------------------


def test_samples_figure_draws_the_pixels_with_plotly():
    import plotly.graph_objects as go

    from npukit.figures import cameranet

    images, labels = shapes_dataset(12, seed=0)
    wrong = (labels + 1) % len(CLASSES)
    fig = cameranet.samples_figure(images, labels, predictions=wrong, cols=6)
    assert isinstance(fig, go.Figure) and fig.data[0].type == "image" and not fig.data[0].source
    z = np.asarray(fig.data[0].z)
    assert z.dtype == np.uint8 and z.shape == (2 * (32 + 10), 6 * (32 + 2) - 2, 3)
    for i in (0, 7, 11):  # tile i sits at row i // 6, column i % 6 (cells of 34 × 42 pixels)
        r, c = divmod(i, 6)
        tile = z[r * 42:r * 42 + 32, c * 34:c * 34 + 32]
        assert np.array_equal(tile, np.round(np.clip(images[i], 0, 1) * 255).astype(np.uint8).transpose(1, 2, 0))
    assert np.all(z[0:32, 32:34] == 255) and np.all(z[32:42] == 255)  # white gaps
    assert len(fig.layout.annotations) == 12 and "→" in fig.layout.annotations[0].text
    assert fig.layout.annotations[0].text == f"{CLASSES[labels[0]]} → {CLASSES[wrong[0]]}"
    right = cameranet.samples_figure(images, labels, predictions=labels)
    assert all("→" not in a.text for a in right.layout.annotations)
    assert '"bdata"' in fig.to_json()  # pixels travel as base64, not as a PNG file


def test_samples_figure_bad_arguments():
    from npukit.figures import cameranet

    images, labels = shapes_dataset(12, seed=0)
    cases = [
        ((images[0], labels), {}, ValueError, "images must have shape"),
        ((images[:0], labels[:0]), {}, ValueError, "images must have shape"),
        ((images, labels[:3]), {}, ValueError, "labels must have 12 entries"),
        ((images, -np.ones(12, np.int64)), {}, ValueError, r"labels must be class indices in \[0, 8\), got -1"),
        ((images, labels), {"predictions": labels[:2]}, ValueError, "predictions must have 12 entries"),
        ((images, labels), {"predictions": np.full(12, 8)}, ValueError,
         r"predictions must be class indices in \[0, 8\), got 8"),
        ((images, labels), {"cols": 0}, ValueError, "cols must be >= 1"),
        ((images, labels), {"cols": 2.0}, TypeError, "cols must be an integer"),
        ((images, labels), {"title": 3}, TypeError, "title must be a string or None"),
    ]
    for args, kwargs, error, match in cases:
        with pytest.raises(error, match=match):
            cameranet.samples_figure(*args, **kwargs)


def test_samples_figure_refuses_wrong_types():
    from npukit.figures import cameranet

    images, labels = shapes_dataset(4, seed=0)
    with pytest.raises(TypeError, match="images must be a numpy.ndarray"):
        cameranet.samples_figure(images.tolist(), labels)
    with pytest.raises(TypeError, match="images must hold floats"):
        cameranet.samples_figure((images * 255).astype(np.uint8), labels)
    with pytest.raises(ValueError, match="images must be finite"):
        cameranet.samples_figure(np.full_like(images, np.nan), labels)
    with pytest.raises(TypeError, match="labels must hold integer class indices"):
        cameranet.samples_figure(images, labels.astype(float))


def test_confusion_and_cost_figures(net):
    from npukit.figures import cameranet

    matrix = np.arange(64, dtype=np.int64).reshape(8, 8)
    fig = cameranet.confusion_figure(matrix)
    assert fig.data[0].type == "heatmap"
    np.testing.assert_allclose(fig.data[0].z, matrix / matrix.sum(axis=1, keepdims=True))
    for bad, error, match in [(np.eye(3, dtype=int), ValueError, "matrix must have shape"),
                              (np.eye(8), TypeError, "matrix must hold integer counts"),
                              (-np.eye(8, dtype=int), ValueError, "matrix must hold counts >= 0"),
                              ([[1]], TypeError, "matrix must be a numpy.ndarray")]:
        with pytest.raises(error, match=match):
            cameranet.confusion_figure(bad)
    cost = cameranet.cost_figure(net)
    rows = [r for r in models.summary(net) if r["macs"] > 0]
    assert list(cost.data[0].x) == [r["layer"] for r in rows]
    total = sum(r["macs"] for r in rows)
    np.testing.assert_allclose(cost.data[0].y, [r["macs"] / total for r in rows])
    assert abs(sum(cost.data[1].y) - 1) < 1e-9
    with pytest.raises(TypeError, match="net must be a CameraNet"):
        cameranet.cost_figure("net")
    with pytest.raises(TypeError, match="title must be a string"):
        cameranet.cost_figure(net, title=1)
