"""Bad inputs for npukit.models: one bad argument at a time, the others valid."""

import pathlib
import tempfile

import numpy as np
from badinput import bad

from npukit import models
from npukit.data import shapes_dataset
from npukit.models import CameraNet, Layer

NET = CameraNet.pretrained()
IMAGES = shapes_dataset(2, seed=0)[0]
TMP = pathlib.Path(tempfile.mkdtemp(prefix="npukit-bad-models-"))
(TMP / "notes.txt").write_text("not weights")


def backward_after_training(d_logits):
    """CameraNet.backward right after a training pass of two images (logits (2, 8))."""
    tiny = CameraNet(stem=4, blocks=[(8, 2)])
    tiny.forward(IMAGES, train=True)
    return tiny.backward(d_logits)


CASES = [
    # Layer
    bad(Layer, "", "Relu", 1, 1, names="name"),
    bad(Layer, 3, "Relu", 1, 1, exc=TypeError, names="name"),
    bad(Layer, "x", "Softmax", 1, 1, names="op"),
    bad(Layer, "x", "Conv", 0, 1, names="cin"),
    bad(Layer, "x", "Conv", 4, 4.0, exc=TypeError, names="cout"),
    bad(Layer, "x", "Conv", 4, 4, kernel=True, exc=TypeError, names="kernel"),
    bad(Layer, "x", "Conv", 4, 4, stride=0, names="stride"),
    bad(Layer, "x", "Conv", 4, 6, groups=4, names="groups"),
    # CameraNet(...)
    bad(CameraNet, stem=0, names="stem"),
    bad(CameraNet, stem=16.7, exc=TypeError, names="stem"),
    bad(CameraNet, blocks=((16.7, 1),), exc=TypeError, names="blocks[0] width"),
    bad(CameraNet, blocks=((True, 1),), exc=TypeError, names="blocks[0] width"),
    bad(CameraNet, blocks=((16, 3),), names="blocks[0]"),
    bad(CameraNet, blocks=((16, 1.0),), exc=TypeError, names="blocks[0] stride"),
    bad(CameraNet, blocks=((0, 1),), names="blocks[0] width"),
    bad(CameraNet, blocks=(16, 1), exc=TypeError, names="blocks[0]"),
    bad(CameraNet, blocks="ab", exc=TypeError, names="blocks"),
    bad(CameraNet, blocks=(), names="blocks"),
    bad(CameraNet, num_classes=1, names="num_classes"),
    bad(CameraNet, size=2, names="size"),
    bad(CameraNet, size=32.0, exc=TypeError, names="size"),
    bad(CameraNet, seed=-1, names="seed"),
    # loading and saving
    bad(CameraNet.load, TMP, names="path"),
    bad(CameraNet.load, TMP / "missing.npz", exc=FileNotFoundError, names="path"),
    bad(CameraNet.load, TMP / "notes.txt", names="path"),
    bad(CameraNet.load, 3, exc=TypeError, names="path"),
    bad(CameraNet.load, "", names="path"),
    bad(NET.save, TMP, names="path"),
    bad(NET.save, TMP / "nowhere" / "x.npz", exc=FileNotFoundError, names="path"),
    bad(NET.save, None, exc=TypeError, names="path"),
    bad(NET.save, TMP / "x.npz", train_call=3, exc=TypeError, names="train_call"),
    # the passes
    bad(NET, IMAGES.tolist(), exc=TypeError, names="images"),
    bad(NET, IMAGES.astype(np.float64), exc=TypeError, names="images"),
    bad(NET, IMAGES.transpose(0, 2, 3, 1), names="images"),
    bad(NET, IMAGES[0], names="images"),
    bad(NET, np.full_like(IMAGES, np.nan), names="images"),
    bad(NET.activations, IMAGES.astype(np.uint8), exc=TypeError, names="images"),
    bad(NET.activations, IMAGES[:, :, :16], names="images"),
    bad(NET.forward, IMAGES.astype(np.float16), exc=TypeError, names="images"),
    bad(NET.forward, IMAGES, train=1, exc=TypeError, names="train"),
    bad(NET.forward, IMAGES, train="yes", exc=TypeError, names="train"),
    bad(CameraNet(stem=4, blocks=[(8, 2)]).forward, IMAGES[:0], train=True, names="images"),
    bad(backward_after_training, [1, 2], exc=TypeError, names="d_logits"),
    bad(backward_after_training, np.ones((3, 8)), names="d_logits"),
    bad(backward_after_training, np.ones((2, 8), np.int64), exc=TypeError, names="d_logits"),
    bad(backward_after_training, np.full((2, 8), np.inf), names="d_logits"),
    # ONNX export
    bad(models.to_onnx, "CameraNet", exc=TypeError, names="net"),
    bad(models.to_onnx, NET, batch=0, names="batch"),
    bad(models.to_onnx, NET, batch=2.0, exc=TypeError, names="batch"),
    bad(models.to_onnx, NET, batch=True, exc=TypeError, names="batch"),
    bad(models.to_onnx, NET, batch="2 images", names="batch"),
    bad(models.to_onnx, NET, opset=13, names="opset"),
    bad(models.to_onnx, NET, opset=99, names="opset"),
    bad(models.to_onnx, NET, opset="17", exc=TypeError, names="opset"),
    bad(NET.to_onnx, opset=16, names="opset"),
    bad(NET.to_onnx, batch=-1, names="batch"),
    # summary
    bad(models.summary, "CameraNet", exc=TypeError, names="net"),
    bad(models.summary, NET, 0, names="batch"),
    bad(models.summary, NET, 1.5, exc=TypeError, names="batch"),
    bad(models.summary_table, None, exc=TypeError, names="net"),
    bad(models.summary_table, NET, batch=-2, names="batch"),
    # sizes that would exhaust memory (issue 24, class 7)
    bad(CameraNet, stem=10**12, names="stem"),
    bad(CameraNet, num_classes=10**12, names="num_classes"),
    bad(CameraNet, blocks=[(10**12, 1)], names="blocks[0] width"),
    bad(CameraNet, blocks=[(8, 1)] * 65, names="blocks"),
    bad(CameraNet, size=10**12, names="size"),
]
