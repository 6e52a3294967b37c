"""Tests of npukit.data: CameraNet's procedurally drawn images.

References are independent of the code under test: label counts by
``np.bincount``, pixel statistics of the corners (mostly background).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npukit import data
from npukit.data import CLASSES, shapes_dataset


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
    # a 1-D array of labels names the same classes as the list
    _, again = shapes_dataset(12, seed=0, size=48, classes=np.array([CLASSES.index("ring"), 0]))
    assert np.array_equal(again, labels)


def test_biased_subset_is_bright_on_white():
    plain, _ = shapes_dataset(256, seed=11)
    bright, _ = shapes_dataset(256, seed=11, **data.BRIGHT_WHITE)
    corners = lambda x: x[:, :, [0, 0, -1, -1], [0, -1, 0, -1]]  # noqa: E731 - mostly background
    assert np.median(corners(bright)) >= 0.95
    assert np.median(corners(plain)) < 0.75
    assert bright.mean() > plain.mean() + 0.2
    dark, _ = shapes_dataset(256, seed=11, background="dark")
    assert np.median(corners(dark)) < 0.25


def test_zero_noise_and_equal_brightness_are_allowed():
    images, _ = shapes_dataset(4, seed=2, noise=0, brightness=(1, 1))
    assert np.all(np.isfinite(images))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n": -1}, ValueError, "n must be >= 0"),
        ({"n": 2.5}, TypeError, "n must be an integer"),
        ({"n": True}, TypeError, "n must be an integer"),
        ({"n": 4, "seed": -3}, ValueError, "seed must be >= 0"),
        ({"n": 4, "size": 8}, ValueError, "size must be >= 16"),
        ({"n": 4, "size": 16.0}, TypeError, "size must be an integer"),
        ({"n": 4, "background": "blue"}, ValueError, "background must be one of"),
        ({"n": 4, "brightness": (1.5, 1.0)}, ValueError, "brightness must satisfy"),
        ({"n": 4, "brightness": (0.5, float("inf"))}, ValueError, "brightness must satisfy"),
        ({"n": 4, "brightness": (float("nan"), 1.0)}, ValueError, "brightness must satisfy"),
        ({"n": 4, "brightness": "bright"}, TypeError, "brightness must be a pair"),
        ({"n": 4, "brightness": (True, 1.0)}, TypeError, "brightness must be a pair"),
        ({"n": 4, "noise": -0.1}, ValueError, "noise must be a number"),
        ({"n": 4, "noise": float("nan")}, ValueError, "noise must be a number"),
        ({"n": 4, "classes": ["hexagon"]}, ValueError, "classes must name classes"),
        ({"n": 4, "classes": [8]}, ValueError, "classes must hold labels"),
        ({"n": 4, "classes": []}, ValueError, "classes must have at least 1 item"),
        ({"n": 4, "classes": "ring"}, TypeError, "classes must be a list or tuple"),
        ({"n": 4, "classes": [-1]}, ValueError, r"classes\[0\] must be >= 0"),
        ({"n": 4, "classes": [0, 1.5]}, TypeError, r"classes\[1\] must be an integer"),
    ],
)
def test_dataset_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        shapes_dataset(**kwargs)
