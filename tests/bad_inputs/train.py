"""Bad inputs for npukit.train: one bad argument at a time, the others valid.

No row trains for long: every bad argument is refused before training starts.
"""

import pathlib
import tempfile

import numpy as np
from badinput import bad

from npukit import train
from npukit.data import shapes_dataset
from npukit.models import CameraNet

NET = CameraNet.pretrained()
TINY = CameraNet(stem=4, blocks=[(8, 2)])
IMAGES, LABELS = shapes_dataset(4, seed=0)
TMP = pathlib.Path(tempfile.mkdtemp(prefix="npukit-bad-train-"))

CASES = [
    # loss_and_grads
    bad(train.loss_and_grads, "net", IMAGES, LABELS, exc=TypeError, names="net"),
    bad(train.loss_and_grads, TINY, IMAGES[0], LABELS, names="images"),
    bad(train.loss_and_grads, TINY, IMAGES.astype(np.int32), LABELS, exc=TypeError, names="images"),
    bad(train.loss_and_grads, TINY, IMAGES, np.array([-1, 0, 0, 0]), names="labels"),
    bad(train.loss_and_grads, TINY, IMAGES, np.array([0, 0, 0, 8]), names="labels"),
    bad(train.loss_and_grads, TINY, IMAGES, LABELS[:3], names="labels"),
    bad(train.loss_and_grads, TINY, IMAGES, LABELS.astype(np.float32), exc=TypeError, names="labels"),
    bad(train.loss_and_grads, TINY, IMAGES, LABELS.tolist(), exc=TypeError, names="labels"),
    bad(train.loss_and_grads, TINY, IMAGES, LABELS, smoothing=1.0, names="smoothing"),
    bad(train.loss_and_grads, TINY, IMAGES, LABELS, smoothing=float("nan"), names="smoothing"),
    bad(train.loss_and_grads, TINY, IMAGES, LABELS, smoothing="0.1", exc=TypeError, names="smoothing"),
    # train
    bad(train.train, epochs=0, names="epochs"),
    bad(train.train, epochs=2.0, exc=TypeError, names="epochs"),
    bad(train.train, n_train=10, batch=64, names="n_train"),
    bad(train.train, n_train=True, exc=TypeError, names="n_train"),
    bad(train.train, batch=1, names="batch"),
    bad(train.train, lr=-1.0, names="lr"),
    bad(train.train, lr=float("inf"), names="lr"),
    bad(train.train, weight_decay="0", exc=TypeError, names="weight_decay"),
    bad(train.train, smoothing=True, exc=TypeError, names="smoothing"),
    bad(train.train, seed=-1, names="seed"),
    bad(train.train, data_seed=-1, names="data_seed"),
    bad(train.train, data_seed=1.5, exc=TypeError, names="data_seed"),
    bad(train.train, arch=[("stem", 4)], exc=TypeError, names="arch"),
    bad(train.train, arch={"seed": 1}, names="arch"),
    bad(train.train, arch={"num_classes": 4}, names="arch['num_classes']"),
    bad(train.train, arch={"size": 8}, names="arch['size']"),
    bad(train.train, arch={"blocks": ((16.7, 1),)}, exc=TypeError, names="blocks[0] width"),
    bad(train.train, log="print", exc=TypeError, names="log"),
    # reproduce, main
    bad(train.reproduce, log=3, exc=TypeError, names="log"),
    bad(train.main, "--out x.npz", exc=TypeError, names="argv"),
    bad(train.main, ["--out", TMP / "x.npz"], exc=TypeError, names="argv[1]"),
    bad(train.main, ["--out", str(TMP)], names="--out"),
    bad(train.main, ["--out", str(TMP / "nowhere" / "x.npz")], exc=FileNotFoundError, names="--out"),
    # accuracy, confusion_matrix
    bad(train.accuracy, lambda x: x, IMAGES, LABELS, exc=TypeError, names="net"),
    bad(train.accuracy, NET, IMAGES.astype(np.float64), LABELS, exc=TypeError, names="images"),
    bad(train.accuracy, NET, IMAGES, np.array([0, 0, 0, 99]), names="labels"),
    bad(train.accuracy, NET, IMAGES, np.array([0, -1, 0, 0]), names="labels"),
    bad(train.accuracy, NET, IMAGES, LABELS[:2], names="labels"),
    bad(train.accuracy, NET, IMAGES, LABELS[:, None], names="labels"),
    bad(train.confusion_matrix, "net", IMAGES, LABELS, exc=TypeError, names="net"),
    bad(train.confusion_matrix, NET, IMAGES[:, :1], LABELS, names="images"),
    bad(train.confusion_matrix, NET, IMAGES, LABELS[:2], names="labels"),
    bad(train.confusion_matrix, NET, IMAGES, np.array([0, 0, 0, -1]), names="labels"),
    bad(train.confusion_matrix, NET, IMAGES, LABELS.astype(bool), exc=TypeError, names="labels"),
    # numbers
    bad(train.numbers, NET, exc=TypeError, names="ctx"),
    bad(train.numbers, None, exc=TypeError, names="ctx"),
]
