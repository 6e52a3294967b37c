"""Bad inputs for npukit.figures.cameranet: one bad argument at a time, the others valid."""

import numpy as np
from badinput import bad

from npukit.data import shapes_dataset
from npukit.figures import cameranet as F
from npukit.models import CameraNet

IMAGES, LABELS = shapes_dataset(6, seed=0)
MATRIX = np.eye(8, dtype=np.int64)

CASES = [
    # confusion_figure
    bad(F.confusion_figure, MATRIX.tolist(), exc=TypeError, names="matrix"),
    bad(F.confusion_figure, np.eye(3, dtype=np.int64), names="matrix"),
    bad(F.confusion_figure, np.eye(8), exc=TypeError, names="matrix"),
    bad(F.confusion_figure, -MATRIX, names="matrix"),
    bad(F.confusion_figure, MATRIX, title=3, exc=TypeError, names="title"),
    # cost_figure
    bad(F.cost_figure, "CameraNet", exc=TypeError, names="net"),
    bad(F.cost_figure, CameraNet(stem=4, blocks=[(8, 2)]), title=["t"], exc=TypeError, names="title"),
    # samples_figure
    bad(F.samples_figure, IMAGES.tolist(), LABELS, exc=TypeError, names="images"),
    bad(F.samples_figure, IMAGES[0], LABELS, names="images"),
    bad(F.samples_figure, IMAGES[:0], LABELS[:0], names="images"),
    bad(F.samples_figure, np.zeros((65, 3, 8, 8), np.float32), np.zeros(65, np.int64), names="images"),
    bad(F.samples_figure, (IMAGES * 255).astype(np.uint8), LABELS, exc=TypeError, names="images"),
    bad(F.samples_figure, np.full_like(IMAGES, np.nan), LABELS, names="images"),
    bad(F.samples_figure, IMAGES, LABELS[:3], names="labels"),
    bad(F.samples_figure, IMAGES, -np.ones(6, np.int64), names="labels"),
    bad(F.samples_figure, IMAGES, np.full(6, 8), names="labels"),
    bad(F.samples_figure, IMAGES, LABELS.astype(float), exc=TypeError, names="labels"),
    bad(F.samples_figure, IMAGES, LABELS, predictions=LABELS[:2], names="predictions"),
    bad(F.samples_figure, IMAGES, LABELS, predictions=np.full(6, 99), names="predictions"),
    bad(F.samples_figure, IMAGES, LABELS, predictions=LABELS.tolist(), exc=TypeError, names="predictions"),
    bad(F.samples_figure, IMAGES, LABELS, cols=0, names="cols"),
    bad(F.samples_figure, IMAGES, LABELS, cols=2.0, exc=TypeError, names="cols"),
    bad(F.samples_figure, IMAGES, LABELS, title=1, exc=TypeError, names="title"),
]
