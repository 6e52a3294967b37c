"""Tests of npukit.train: the loss, training, the shipped weights, accuracy and the confusion matrix.

References are independent of the code under test: a cross-entropy written
out here and finite differences for the loss's gradients, a brute-force loop
for the confusion matrix, a count by hand for the accuracy, and a fresh
re-training (``python -m npukit.train``) for the shipped weights.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from support import assert_gradients_match

from npukit import models, train
from npukit.data import CLASSES, shapes_dataset
from npukit.models import CameraNet


@pytest.fixture(scope="module")
def net() -> CameraNet:
    return CameraNet.pretrained()


@pytest.fixture(scope="module")
def held_out() -> tuple[np.ndarray, np.ndarray]:
    return shapes_dataset(2000, seed=train.HELDOUT_SEED)


# ---- the loss ------------------------------------------------------------------------


def test_loss_gradients_match_finite_differences():
    """Central differences in float64 of a cross-entropy written here, with label smoothing 0.1."""
    tiny = CameraNet(stem=4, blocks=[(6, 1), (8, 2)], size=16, seed=3)
    tiny.params = {k: v.astype(np.float64) for k, v in tiny.params.items()}
    images, labels = shapes_dataset(5, seed=2, size=16)
    images = images.astype(np.float64)
    loss_value, grads = train.loss_and_grads(tiny, images, labels, smoothing=0.1)

    def loss() -> float:
        logits = tiny.forward(images, train=True).astype(np.float64)
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        target = np.full_like(log_p, 0.1 / logits.shape[1])
        target[np.arange(len(labels)), labels] += 0.9
        return float(-(target * log_p).sum(axis=1).mean())

    assert loss_value == pytest.approx(loss(), rel=1e-12)
    rng = np.random.default_rng(0)
    arrays = {k: tiny.params[k] for k in tiny.trainable()} | {"image": images}
    assert_gradients_match(loss, arrays, grads, rng)


def test_plain_cross_entropy_of_uniform_logits_is_log_k():
    tiny = CameraNet(stem=4, blocks=[(8, 2)])
    tiny.params["fc.weight"][:] = 0  # every logit is the (zero) bias: a uniform prediction
    loss, _ = train.loss_and_grads(tiny, *shapes_dataset(4, seed=0))
    assert loss == pytest.approx(math.log(len(CLASSES)), rel=1e-6)


@pytest.mark.parametrize(
    "labels, error, match",
    [
        (np.array([-1, 0, 0, 0]), ValueError, r"labels must be class indices in \[0, 8\), got -1"),
        (np.array([0, 8, 0, 0]), ValueError, r"labels must be class indices in \[0, 8\), got 8"),
        (np.zeros(3, np.int64), ValueError, "labels must have 4 entries"),
        (np.zeros(4, np.float32), TypeError, "labels must hold integer class indices"),
        (np.zeros(4, bool), TypeError, "labels must hold integer class indices"),
        (np.zeros((4, 1), np.int64), ValueError, "labels must be 1-D"),
        ([0, 1, 2, 3], TypeError, "labels must be a numpy.ndarray"),
    ],
)
def test_labels_are_range_checked_everywhere(net, labels, error, match):
    """A negative label would wrap to the last class and 99 would count as wrong: both are refused."""
    images = shapes_dataset(4, seed=0)[0]
    with pytest.raises(error, match=match):
        train.loss_and_grads(CameraNet(stem=4, blocks=[(8, 2)]), images, labels)
    with pytest.raises(error, match=match):
        train.accuracy(net, images, labels)
    with pytest.raises(error, match=match):
        train.confusion_matrix(net, images, labels)


def test_loss_and_grads_other_bad_arguments():
    tiny = CameraNet(stem=4, blocks=[(8, 2)])
    images, labels = shapes_dataset(4, seed=0)
    with pytest.raises(TypeError, match="net must be a CameraNet"):
        train.loss_and_grads("net", images, labels)
    with pytest.raises(ValueError, match=r"smoothing must be a number in \[0, 1\)"):
        train.loss_and_grads(tiny, images, labels, smoothing=1.0)
    with pytest.raises(TypeError, match="smoothing must be a real number"):
        train.loss_and_grads(tiny, images, labels, smoothing="0.1")
    with pytest.raises(ValueError, match="images must have shape"):
        train.loss_and_grads(tiny, images[0], labels)
    with pytest.raises(ValueError, match="images must hold at least one image in training mode"):
        train.loss_and_grads(tiny, images[:0], labels[:0])


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


def test_training_another_architecture_draws_images_of_its_size():
    lines = []
    net, losses = train.train(epochs=1, n_train=32, batch=16, arch={"stem": 4, "blocks": [(8, 2)], "size": 16},
                              log=lines.append)
    assert net.size == 16 and len(losses) == 2 and len(lines) == 1 and lines[0].startswith("epoch 1/1")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_train": 10, "batch": 64}, ValueError, "n_train must be >= 64"),
        ({"lr": -1.0}, ValueError, "lr must be a number in"),
        ({"lr": float("nan")}, ValueError, "lr must be a number in"),
        ({"weight_decay": "0"}, TypeError, "weight_decay must be a real number"),
        ({"smoothing": True}, TypeError, "smoothing must be a real number"),
        ({"epochs": 2.0}, TypeError, "epochs must be an integer"),
        ({"batch": 1}, ValueError, "batch must be >= 2"),
        ({"data_seed": -1}, ValueError, "data_seed must be >= 0"),
        ({"data_seed": 1.5}, TypeError, "data_seed must be an integer"),
        ({"arch": [("stem", 4)]}, TypeError, "arch must be a dict"),
        ({"arch": {"seed": 1}}, ValueError, "arch may hold stem, blocks, num_classes and size"),
        ({"arch": {"num_classes": 4}}, ValueError, r"arch\['num_classes'\] must be >= 8"),
        ({"arch": {"size": 8}}, ValueError, r"arch\['size'\] must be >= 16"),
        ({"arch": {"blocks": ((16.7, 1),)}}, TypeError, r"blocks\[0\] width must be an integer"),
        ({"log": "print"}, TypeError, "log must be callable"),
    ],
)
def test_training_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        train.train(**kwargs)


def test_shipped_weights_are_documented(net):
    assert net.train_call == train.TRAIN_CALL
    assert train.TRAIN_CALL in train.__doc__
    assert train.HELDOUT_SEED != train.TRAIN_KWARGS["data_seed"]


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


def test_main_refuses_bad_arguments_before_training(tmp_path):
    with pytest.raises(TypeError, match="argv must be a list or tuple"):
        train.main("--out x.npz")
    with pytest.raises(TypeError, match=r"argv\[1\] must be a string"):
        train.main(["--out", tmp_path / "x.npz"])
    with pytest.raises(ValueError, match="--out must name a file, got the directory"):
        train.main(["--out", str(tmp_path)])
    with pytest.raises(FileNotFoundError, match="its folder does not exist"):
        train.main(["--out", str(tmp_path / "nowhere" / "x.npz")])
    with pytest.raises(TypeError, match="log must be callable"):
        train.reproduce(log=3)


# ---- scoring ---------------------------------------------------------------------------


def test_accuracy_counts_correct_predictions(net):
    images, labels = shapes_dataset(50, seed=4)
    predicted = np.argmax(net(images), axis=1)
    right = sum(int(p == t) for p, t in zip(predicted, labels))  # by hand
    assert train.accuracy(net, images, labels) == right / 50
    wrong = (predicted + 1) % len(CLASSES)
    assert train.accuracy(net, images, wrong) == 0.0
    assert train.accuracy(net, images, predicted) == 1.0


def test_accuracy_of_no_images_is_nan(net):
    """The documented NaN, not 0.0: there is no accuracy of zero images."""
    images, labels = shapes_dataset(0, seed=0)
    acc = train.accuracy(net, images, labels)
    assert isinstance(acc, float) and math.isnan(acc)


def test_confusion_matrix_counts_pairs(net):
    images, labels = shapes_dataset(48, seed=9)
    predicted = np.argmax(net(images), axis=1)
    expected = np.zeros((len(CLASSES), len(CLASSES)), np.int64)
    for t, p in zip(labels, predicted):  # brute force
        expected[t, p] += 1
    got = train.confusion_matrix(net, images, labels)
    assert got.dtype == np.int64 and np.array_equal(got, expected)
    assert np.array_equal(train.confusion_matrix(net, images[:0], labels[:0]), np.zeros_like(expected))


def test_confusion_matrix_of_a_net_with_more_classes():
    wide = CameraNet(stem=4, blocks=[(8, 2)], num_classes=10)
    images = shapes_dataset(6, seed=0)[0]
    labels = np.array([9, 8, 0, 1, 2, 3])
    m = train.confusion_matrix(wide, images, labels)
    assert m.shape == (10, 10) and m.sum() == 6 and m[9].sum() == 1 and m[8].sum() == 1


def test_scoring_refuses_what_is_not_a_net(net):
    images, labels = shapes_dataset(4, seed=0)
    for func in (train.accuracy, train.confusion_matrix):
        with pytest.raises(TypeError, match="net must be a CameraNet"):
            func(lambda x: x, images, labels)
        with pytest.raises(TypeError, match="images must have dtype float32"):
            func(net, images.astype(np.float64), labels)


# ---- the "numbers so far" rows -----------------------------------------------------------


def test_numbers(net):
    from npukit import tally

    rows = train.numbers(tally.Context(net=net))
    assert {r.chapter for r in rows} == {0}
    summary = models.summary(net)
    assert rows[0].value == f"{sum(r['params'] for r in summary):,}"
    assert rows[2].value == f"{sum(r['macs'] for r in summary):,}"
    assert rows[3].value == f"{train.accuracy(net, *shapes_dataset(2000, seed=train.HELDOUT_SEED)):.1%}"
    with pytest.raises(TypeError, match="ctx must be a tally.Context"):
        train.numbers(net)
