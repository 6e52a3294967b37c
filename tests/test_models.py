"""Tests of npukit.train: the shapes data, CameraNet's NumPy passes, its training and its ONNX export.

References are independent of the code under test: finite differences for the
backward pass, ``onnx.reference.ReferenceEvaluator`` and OpenVINO's CPU plugin
for the forward pass and the export, ONNX shape inference for the summary.
"""

from __future__ import annotations

import copy
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npukit import data, figures, models, train
from npukit.data import CLASSES, shapes_dataset
from npukit.models import CameraNet

N_CHECK = 32  # images compared between NumPy, ONNX reference and OpenVINO


@pytest.fixture(scope="module")
def net() -> CameraNet:
    return CameraNet.pretrained()


@pytest.fixture(scope="module")
def check_images() -> np.ndarray:
    return shapes_dataset(N_CHECK, seed=7)[0]


@pytest.fixture(scope="module")
def held_out() -> tuple[np.ndarray, np.ndarray]:
    return shapes_dataset(2000, seed=train.HELDOUT_SEED)


# ---- the data ----------------------------------------------------------------


def test_dataset_shape_dtype_range():
    images, labels = shapes_dataset(40, seed=3)
    assert images.shape == (40, 3, 32, 32) and images.dtype == np.float32
    assert images.flags.c_contiguous
    assert labels.shape == (40,) and labels.dtype == np.int64
    assert images.min() >= 0.0 and images.max() <= 1.0
    assert np.bincount(labels, minlength=len(CLASSES)).tolist() == [5] * len(CLASSES)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 24), seed=st.integers(0, 2**32))
def test_dataset_is_deterministic_per_seed_and_balanced(n, seed):
    a, la = shapes_dataset(n, seed=seed)
    b, lb = shapes_dataset(n, seed=seed)
    assert a.shape == (n, 3, 32, 32) and la.shape == (n,)
    assert np.array_equal(a, b) and np.array_equal(la, lb)
    counts = np.bincount(la, minlength=len(CLASSES))
    assert counts.max() - counts.min() <= 1


def test_dataset_differs_between_seeds():
    assert not np.array_equal(shapes_dataset(8, seed=0)[0], shapes_dataset(8, seed=1)[0])


def test_dataset_size_and_class_subset():
    images, labels = shapes_dataset(12, seed=0, size=48, classes=["ring", 0])
    assert images.shape == (12, 3, 48, 48)
    assert set(labels.tolist()) == {0, CLASSES.index("ring")}


def test_biased_subset_is_bright_on_white():
    plain, _ = shapes_dataset(256, seed=11)
    bright, _ = shapes_dataset(256, seed=11, **data.BRIGHT_WHITE)
    corners = lambda x: x[:, :, [0, 0, -1, -1], [0, -1, 0, -1]]  # noqa: E731 - mostly background
    assert np.median(corners(bright)) >= 0.95
    assert np.median(corners(plain)) < 0.75
    assert bright.mean() > plain.mean() + 0.2
    dark, _ = shapes_dataset(256, seed=11, background="dark")
    assert np.median(corners(dark)) < 0.25


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n": -1}, ValueError, "n must be >= 0"),
        ({"n": 2.5}, TypeError, "n must be an integer"),
        ({"n": 4, "seed": -3}, ValueError, "seed must be >= 0"),
        ({"n": 4, "size": 8}, ValueError, "size must be >= 16"),
        ({"n": 4, "background": "blue"}, ValueError, "background must be one of"),
        ({"n": 4, "brightness": (1.5, 1.0)}, ValueError, "brightness must satisfy"),
        ({"n": 4, "brightness": "bright"}, TypeError, "brightness must be a pair"),
        ({"n": 4, "noise": -0.1}, ValueError, "noise must be a number"),
        ({"n": 4, "classes": ["hexagon"]}, ValueError, "classes must name classes"),
        ({"n": 4, "classes": [8]}, ValueError, "classes must hold labels"),
        ({"n": 4, "classes": []}, ValueError, "classes must name at least one"),
        ({"n": 4, "classes": [-1]}, ValueError, r"classes\[i\] must be >= 0"),
        ({"n": 4, "classes": [1.5]}, TypeError, r"classes\[i\] must be an integer"),
    ],
)
def test_dataset_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        shapes_dataset(**kwargs)


# ---- the forward pass ------------------------------------------------------------


def test_forward_shape_dtype(net, check_images):
    logits = net(check_images)
    assert logits.shape == (N_CHECK, len(CLASSES)) and logits.dtype == np.float32
    assert net(check_images[:0]).shape == (0, len(CLASSES))
    # batching inside __call__ does not change the answer
    assert np.array_equal(net(check_images[:5]), logits[:5])


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


def test_labels_checked(net, check_images):
    with pytest.raises(ValueError, match="labels must be integers of shape"):
        train.accuracy(net, check_images, np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="labels must be integers of shape"):
        net.loss_and_grads(check_images[:2], np.zeros(2, np.float32))
    with pytest.raises(RuntimeError, match="backward needs"):
        CameraNet().backward(np.zeros((1, 8), np.float32))


def test_constructor_bad_arguments():
    with pytest.raises(ValueError, match=r"blocks\[0\] must be \(width >= 1, stride 1 or 2\)"):
        CameraNet(blocks=[(8, 3)])
    with pytest.raises(TypeError, match="stem must be an integer"):
        CameraNet(stem=8.0)
    with pytest.raises(ValueError, match="num_classes must be >= 2"):
        CameraNet(num_classes=1)
    with pytest.raises(ValueError, match="size must be >= 4"):
        CameraNet(size=2)


# ---- the backward pass -------------------------------------------------------------


def test_gradients_match_finite_differences():
    """Central differences in float64 on a tiny net (a dense, a depthwise stride-2 conv, every op)."""
    tiny = CameraNet(stem=4, blocks=[(6, 1), (8, 2)], size=16, seed=3)
    tiny.params = {k: v.astype(np.float64) for k, v in tiny.params.items()}
    images, labels = shapes_dataset(5, seed=2, size=16)
    images = images.astype(np.float64)
    _, grads = tiny.loss_and_grads(images, labels, smoothing=0.1)

    def loss() -> float:
        logits = tiny.forward(images, train=True).astype(np.float64)
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        target = np.full_like(log_p, 0.1 / logits.shape[1])
        target[np.arange(len(labels)), labels] += 0.9
        return float(-(target * log_p).sum(axis=1).mean())

    rng = np.random.default_rng(0)
    arrays = {k: tiny.params[k] for k in tiny.trainable()} | {"image": images}
    h = 1e-6
    for key, array in arrays.items():
        for _ in range(4):
            idx = tuple(int(rng.integers(0, s)) for s in array.shape)
            old = array[idx]
            array[idx] = old + h
            up = loss()
            array[idx] = old - h
            down = loss()
            array[idx] = old
            numeric = (up - down) / (2 * h)
            assert abs(numeric - grads[key][idx]) <= 1e-7 + 1e-4 * abs(numeric), (key, idx, numeric, grads[key][idx])


# ---- training and the shipped weights ------------------------------------------------


def test_short_training_lowers_the_loss():
    _, losses = train.train(epochs=4, n_train=256, batch=32, seed=1)
    assert len(losses) == 32
    assert np.mean(losses[-4:]) < np.mean(losses[:4]) - 0.3


def test_training_is_deterministic():
    a, la = train.train(epochs=1, n_train=64, batch=32, seed=5)
    b, lb = train.train(epochs=1, n_train=64, batch=32, seed=5)
    assert la == lb
    assert all(np.array_equal(a.params[k], b.params[k]) for k in a.params)


def test_training_bad_arguments():
    with pytest.raises(ValueError, match="n_train must be >= 64"):
        train.train(n_train=10, batch=64)
    with pytest.raises(ValueError, match="lr must be a number in"):
        train.train(lr=-1.0)
    with pytest.raises(TypeError, match="epochs must be an integer"):
        train.train(epochs=2.0)


def test_shipped_weights_are_small_and_documented(net):
    assert models.WEIGHTS_PATH.stat().st_size < 1_000_000
    assert net.train_call == train.TRAIN_CALL
    assert train.TRAIN_CALL in models.__doc__
    assert train.HELDOUT_SEED != 100  # train()'s default data_seed


def test_shipped_weights_accuracy(net, held_out):
    assert train.accuracy(net, *held_out) >= 0.90


def test_retraining_reproduces_the_accuracy(net, held_out, tmp_path):
    """`python -m npukit.train` (make weights) re-trains from scratch to within 2 points of the shipped accuracy."""
    out = tmp_path / "retrained.npz"
    subprocess.run([sys.executable, "-m", "npukit.train", "--out", str(out)], check=True,
                   capture_output=True, text=True)
    retrained = CameraNet.load(out)
    assert retrained.train_call == train.TRAIN_CALL
    shipped = train.accuracy(net, *held_out)
    again = train.accuracy(retrained, *held_out)
    assert abs(again - shipped) <= 0.02, (shipped, again)


def test_save_load_round_trip(tmp_path, net):
    path = tmp_path / "net.npz"
    net.save(path, train_call="demo")
    loaded = CameraNet.load(path)
    assert loaded.train_call == "demo"
    assert all(np.array_equal(loaded.params[k], net.params[k]) for k in net.params)
    again = tmp_path / "again.npz"
    CameraNet.load(path).save(again, train_call="demo")
    assert again.read_bytes() == path.read_bytes()  # same weights, same bytes
    small = CameraNet(stem=4, blocks=[(8, 2)])
    small.save(path)
    with np.load(path) as f:
        arrays = dict(f)
    del arrays["fc.bias"]
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="lacks the array 'fc.bias'"):
        CameraNet.load(path)
    arrays["fc.bias"] = np.zeros(3, np.float32)
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match=r"fc.bias has shape \(3,\), expected \(8,\)"):
        CameraNet.load(path)


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
        ({"opset": 13}, ValueError, "opset must be >= 17"),
    ],
)
def test_onnx_bad_arguments(net, kwargs, error, match):
    with pytest.raises(error, match=match):
        net.to_onnx(**kwargs)


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


# ---- summary, numbers, figure ----------------------------------------------------


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


def test_summary_table_and_numbers(net):
    from npukit import tally

    html = models.summary_table(net).data
    assert all(layer.name in html for layer in net.layers)
    rows = train.numbers(tally.Context(net=net))
    assert {r.chapter for r in rows} == {0}
    assert rows[0].value == f"{sum(r['params'] for r in models.summary(net)):,}"
    assert "held-out accuracy" in tally.table(0, tally.Context(net=net)).data
    with pytest.raises(TypeError, match="net must be a CameraNet"):
        models.summary("CameraNet")
    with pytest.raises(TypeError, match="net must be a CameraNet"):
        tally.Context(net="CameraNet")


def test_figure_samples():
    import plotly.graph_objects as go

    images, labels = shapes_dataset(12, seed=0)
    wrong = (labels + 1) % len(CLASSES)
    fig = figures.cameranet.samples_figure(images, labels, predictions=wrong, cols=6)
    assert isinstance(fig, go.Figure) and fig.data[0].source.startswith("data:image/png;base64,")
    assert len(fig.layout.annotations) == 12 and "→" in fig.layout.annotations[0].text
    with pytest.raises(ValueError, match="images must have shape"):
        figures.cameranet.samples_figure(images[0], labels)
    with pytest.raises(ValueError, match="labels must have shape"):
        figures.cameranet.samples_figure(images, labels[:3])
    with pytest.raises(ValueError, match="predictions must have shape"):
        figures.cameranet.samples_figure(images, labels, predictions=labels[:2])
    with pytest.raises(TypeError, match="images must be a numpy.ndarray"):
        figures.cameranet.samples_figure(images.tolist(), labels)


def test_import_is_light():
    code = "import sys, npukit.models; print(sorted({'onnx', 'plotly', 'openvino'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_confusion_matrix_counts_pairs(net):
    images, labels = shapes_dataset(48, seed=9)
    predicted = np.argmax(net(images), axis=1)
    expected = np.zeros((len(CLASSES), len(CLASSES)), np.int64)
    for t, p in zip(labels, predicted):  # brute force
        expected[t, p] += 1
    assert np.array_equal(train.confusion_matrix(net, images, labels), expected)
    with pytest.raises(ValueError, match="labels must be integers"):
        train.confusion_matrix(net, images, labels[:5])


def test_confusion_and_cost_figures(net):
    fig = figures.cameranet.confusion_figure(np.eye(len(CLASSES), dtype=np.int64))
    assert fig.data[0].type == "heatmap"
    with pytest.raises(ValueError, match="matrix must have shape"):
        figures.cameranet.confusion_figure(np.eye(3))
    cost = figures.cameranet.cost_figure(net)
    assert list(cost.data[0].x) == [r["layer"] for r in models.summary(net) if r["macs"] > 0]
    assert abs(sum(cost.data[0].y) - 1) < 1e-9 and abs(sum(cost.data[1].y) - 1) < 1e-9
