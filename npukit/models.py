"""CameraNet, the course's running example: its data, its NumPy network and its ONNX export.

A smart camera has to say what it sees. ``CameraNet`` is a small convolutional
network that does this for 32×32 RGB images of eight kinds of shapes and
stripes, drawn procedurally by :func:`shapes_dataset`. It is written in plain
NumPy, forward and backward, and trained here, deterministically, so that every
later chapter works with a model that has real weights, real activation
statistics and a real accuracy.

The invariant this module keeps: **one model, three executions, one answer.**
The NumPy forward pass (``net(images)``), the exported ONNX graph run by
``onnx.reference`` and the same graph compiled by OpenVINO in float32 give the
same logits to within 1e-5, and every ONNX node and initializer is named after
the layer it came from (``stem.conv``, ``block1.dw``, ``block1.pw_bn``, ``fc``
…), so a later chapter can map any node back to the layer in this file.

The shipped weights (``npukit/data/cameranet.npz``) were produced by exactly::

    train(epochs=8, n_train=6000, batch=64, lr=0.03, weight_decay=0.0001, smoothing=0.1, seed=0, data_seed=100)

(the string :data:`TRAIN_CALL`; :func:`reproduce` runs it, and
``python -m npukit.models`` — ``make weights`` — re-trains and rewrites the
file, byte for byte the same when the weights come out the same).

Inside the NumPy forward pass activations are kept channels-last (NHWC), because
then a 1×1 convolution is a single matrix multiply; the public interface and the
ONNX graph are channels-first (NCHW), like the input images.

See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).
"""

from __future__ import annotations

if __name__ == "__main__":  # `python -m npukit.models` (make weights): see main()
    import os

    # One BLAS thread: the same weights, and on a busy machine several times
    # faster, because a second BLAS thread mostly waits for a free core.
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

import json
import math
import pathlib
import struct
import time
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from . import _check

__all__ = [
    "CLASSES",
    "BRIGHT_WHITE",
    "HELDOUT_SEED",
    "TRAIN_KWARGS",
    "TRAIN_CALL",
    "WEIGHTS_PATH",
    "Layer",
    "CameraNet",
    "shapes_dataset",
    "train",
    "reproduce",
    "accuracy",
    "summary",
    "summary_table",
    "numbers",
    "confusion_matrix",
    "figure_samples",
    "figure_confusion",
    "figure_cost",
]

#: Class names, in label order (label ``k`` is ``CLASSES[k]``).
CLASSES: tuple[str, ...] = (
    "circle",
    "square",
    "triangle",
    "cross",
    "ring",
    "horizontal stripes",
    "vertical stripes",
    "diagonal stripes",
)

#: Keyword arguments of :func:`shapes_dataset` that draw a *biased* subset:
#: only bright images on a white background (chapter 6 calibrates on it).
BRIGHT_WHITE: dict[str, Any] = {"background": "light", "brightness": (1.15, 1.4)}

#: Seed of the held-out images used to state CameraNet's accuracy. Training
#: draws its images from ``data_seed`` (100 by default), never from this seed.
HELDOUT_SEED: int = 1

#: The exact training call that produced the shipped weights.
TRAIN_KWARGS: dict[str, Any] = {
    "epochs": 8,
    "n_train": 6000,
    "batch": 64,
    "lr": 0.03,
    "weight_decay": 0.0001,
    "smoothing": 0.1,
    "seed": 0,
    "data_seed": 100,
}
TRAIN_CALL: str = "train(" + ", ".join(f"{k}={v!r}" for k, v in TRAIN_KWARGS.items()) + ")"

#: Where :meth:`CameraNet.pretrained` reads the shipped weights.
WEIGHTS_PATH = pathlib.Path(__file__).parent / "data" / "cameranet.npz"

BN_EPSILON = 1e-5  # ONNX BatchNormalization's default epsilon
BN_MOMENTUM = 0.1  # weight of the new batch in the running statistics

# ---------------------------------------------------------------------------
# The data: procedurally drawn shapes
# ---------------------------------------------------------------------------

_BACKGROUNDS = ("random", "light", "dark")


def _signed_distance(kind: str, u: np.ndarray, v: np.ndarray, r: np.ndarray, period: np.ndarray,
                     phase: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """Signed distance (pixels, positive inside) to a shape of class ``kind``.

    ``u, v`` are pixel coordinates relative to the shape's centre, rotated by
    the shape's angle; ``dx, dy`` are the same coordinates unrotated.
    """
    if kind == "circle":
        return r - np.hypot(u, v)
    if kind == "square":
        return 0.85 * r - np.maximum(np.abs(u), np.abs(v))
    if kind == "triangle":
        # Equilateral triangle of circumradius 1.2 r: inside all three edges,
        # whose outward normals point at 90°, 210° and 330°.
        edges = [u * math.cos(a) + v * math.sin(a) for a in np.deg2rad([90.0, 210.0, 330.0])]
        return 0.6 * r - np.maximum(np.maximum(edges[0], edges[1]), edges[2])
    if kind == "cross":
        half_width = np.maximum(1.5, 0.3 * r)
        bar_1 = np.minimum(r - np.abs(u), half_width - np.abs(v))
        bar_2 = np.minimum(half_width - np.abs(u), r - np.abs(v))
        return np.maximum(bar_1, bar_2)
    if kind == "ring":
        thickness = np.maximum(2.0, 0.35 * r)
        return thickness / 2 - np.abs(np.hypot(u, v) - (r - thickness / 2))
    # Stripes: bands of width period/2 across v, inside an upright square patch.
    band = period / 4 - np.abs(np.mod(v + phase, period) - period / 2)
    patch = (r + 3) - np.maximum(np.abs(dx), np.abs(dy))
    return np.minimum(band, patch)


def _rotation(kind: str, jitter: np.ndarray, turn: np.ndarray, side: np.ndarray) -> np.ndarray:
    """The rotation angle (radians) of each shape of class ``kind``."""
    if kind == "triangle":
        return turn  # any orientation is still a triangle
    if kind == "vertical stripes":
        return np.pi / 2 + jitter / 2
    if kind == "diagonal stripes":
        return np.where(side, np.pi / 4, -np.pi / 4) + jitter / 2
    if kind == "horizontal stripes":
        return jitter / 2
    return jitter


def shapes_dataset(
    n: int,
    seed: int = 0,
    *,
    size: int = 32,
    background: str = "random",
    brightness: tuple[float, float] = (0.6, 1.3),
    noise: float = 0.06,
    classes: Sequence[int | str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` labelled RGB images of shapes and stripes, deterministically.

    Each image shows one object of a class in :data:`CLASSES` with a random
    colour on a random background, at a random position, size and angle, lit by
    a random gradient, scaled by a random brightness and covered in Gaussian
    noise. Labels are balanced (every class appears ``n // len(classes)`` or one
    more times) and shuffled. The same arguments always give the same images.

    Parameters
    ----------
    n : int
        Number of images (>= 0).
    seed : int
        Seed of the ``np.random.default_rng`` that draws everything.
    size : int
        Image height and width in pixels (>= 16).
    background : {"random", "light", "dark"}
        Background colours: any colour, near-white, or near-black.
    brightness : (float, float)
        Range of the overall gain applied to each image (values are clipped to
        [0, 1] afterwards, so a gain above 1 saturates light areas).
    noise : float
        Largest standard deviation of the additive Gaussian noise (>= 0); each
        image draws its own between 0 and this.
    classes : sequence of int or str, optional
        Draw only these classes (labels keep their meaning in :data:`CLASSES`).

    Returns
    -------
    images : numpy.ndarray
        float32, shape ``(n, 3, size, size)`` (NCHW), values in [0, 1].
    labels : numpy.ndarray
        int64, shape ``(n,)``, indices into :data:`CLASSES`.

    Raises
    ------
    TypeError
        If ``n``, ``seed`` or ``size`` is not an integer, or ``brightness`` is
        not a pair of numbers.
    ValueError
        If a value is out of range, ``background`` is unknown or ``classes``
        names an unknown class.

    Examples
    --------
    >>> images, labels = shapes_dataset(16, seed=0)
    >>> images.shape, images.dtype, labels.dtype
    ((16, 3, 32, 32), dtype('float32'), dtype('int64'))
    >>> [CLASSES[k] for k in labels[:3]]
    ['triangle', 'cross', 'cross']
    >>> bool(np.array_equal(shapes_dataset(16, seed=0)[0], images))
    True

    A biased subset, only bright images on a white background:

    >>> bright, _ = shapes_dataset(64, seed=0, **BRIGHT_WHITE)
    >>> float(bright.mean()) > float(images.mean())
    True
    """
    n = _check.integer(n, "n", minimum=0)
    seed = _check.integer(seed, "seed", minimum=0)
    size = _check.integer(size, "size", minimum=16)
    _check.one_of(background, "background", _BACKGROUNDS)
    if (not isinstance(brightness, (tuple, list)) or len(brightness) != 2
            or not all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in brightness)):
        raise TypeError(f"brightness must be a pair of numbers (low, high), got {brightness!r}")
    lo_gain, hi_gain = float(brightness[0]), float(brightness[1])
    if not 0 < lo_gain <= hi_gain:
        raise ValueError(f"brightness must satisfy 0 < low <= high, got {brightness!r}")
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 <= noise < 1:
        raise ValueError(f"noise must be a number in [0, 1), got {noise!r}")
    if classes is None:
        class_ids = np.arange(len(CLASSES))
    else:
        class_ids = np.array([_class_index(c) for c in classes], dtype=np.int64)
        if class_ids.size == 0:
            raise ValueError("classes must name at least one class")

    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.resize(class_ids, n)).astype(np.int64)
    scale = size / 32.0

    # Every per-image random number is drawn here, for all n images, in a fixed
    # order, so that the images depend only on n, the seed and the options.
    r = rng.uniform(5.0, 11.0, n) * scale  # object radius in pixels
    cx = rng.uniform(r + 1, size - r - 1)
    cy = rng.uniform(r + 1, size - r - 1)
    jitter = rng.uniform(-0.35, 0.35, n)  # about ±20°
    turn = rng.uniform(0.0, 2 * np.pi, n)
    side = rng.random(n) < 0.5
    period = rng.uniform(5.0, 8.0, n) * scale
    phase = rng.uniform(0.0, 1.0, n) * period
    if background == "light":
        bg = rng.uniform(0.85, 1.0, (n, 3))
    elif background == "dark":
        bg = rng.uniform(0.0, 0.15, (n, 3))
    else:
        bg = rng.uniform(0.0, 1.0, (n, 3))
    fg = rng.uniform(0.0, 1.0, (n, 3))
    light_angle = rng.uniform(0.0, 2 * np.pi, n)
    light_slope = rng.uniform(0.0, 0.3, n)
    gain = rng.uniform(lo_gain, hi_gain, n)
    sigma = rng.uniform(0.0, noise, n)

    # Keep the object visible: where it is too close in colour to the
    # background, move each channel half the range away from the background.
    faint = np.abs(fg - bg).max(axis=1) < 0.4
    fg[faint] = np.where(bg[faint] > 0.5, bg[faint] - 0.5, bg[faint] + 0.5)

    ys, xs = np.mgrid[0:size, 0:size].astype(np.float64) + 0.5  # pixel centres
    coverage = np.zeros((n, size, size))
    for k in np.unique(labels):
        i = np.flatnonzero(labels == k)
        kind = CLASSES[k]
        dx, dy = xs - cx[i, None, None], ys - cy[i, None, None]
        angle = _rotation(kind, jitter[i], turn[i], side[i])[:, None, None]
        u = dx * np.cos(angle) + dy * np.sin(angle)
        v = -dx * np.sin(angle) + dy * np.cos(angle)
        sd = _signed_distance(kind, u, v, r[i, None, None], period[i, None, None],
                              phase[i, None, None], dx, dy)
        coverage[i] = np.clip(sd + 0.5, 0.0, 1.0)  # anti-aliased edge, one pixel wide

    cov = coverage[:, None]  # (n, 1, size, size)
    images = bg[:, :, None, None] * (1 - cov) + fg[:, :, None, None] * cov
    ramp = ((xs - size / 2) * np.cos(light_angle)[:, None, None]
            + (ys - size / 2) * np.sin(light_angle)[:, None, None]) / (size / 2)
    images *= (1 + light_slope[:, None, None] * ramp)[:, None] * gain[:, None, None, None]
    images += sigma[:, None, None, None] * rng.standard_normal(images.shape)
    return np.clip(images, 0.0, 1.0).astype(np.float32), labels


def _class_index(c: int | str) -> int:
    if isinstance(c, str):
        if c not in CLASSES:
            raise ValueError(f"classes must name classes in CLASSES, got {c!r}")
        return CLASSES.index(c)
    k = _check.integer(c, "classes[i]", minimum=0)
    if k >= len(CLASSES):
        raise ValueError(f"classes must hold labels in 0..{len(CLASSES) - 1}, got {k}")
    return k


# ---------------------------------------------------------------------------
# The network
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """One layer of CameraNet; ``name`` is also its ONNX node's name.

    ``op`` is the ONNX operator type; ``kernel``, ``stride`` and ``groups``
    matter only for ``Conv`` (``groups == cin`` is a depthwise convolution).
    """

    name: str
    op: str
    cin: int
    cout: int
    kernel: int = 1
    stride: int = 1
    groups: int = 1


def _layers(stem: int, blocks: Sequence[tuple[int, int]], num_classes: int) -> tuple[Layer, ...]:
    """CameraNet's layers, in execution order."""
    out = [
        Layer("stem.conv", "Conv", 3, stem, kernel=3, stride=2),
        Layer("stem.bn", "BatchNormalization", stem, stem),
        Layer("stem.relu", "Relu", stem, stem),
    ]
    c = stem
    for i, (width, stride) in enumerate(blocks, start=1):
        b = f"block{i}"
        out += [
            Layer(f"{b}.dw", "Conv", c, c, kernel=3, stride=stride, groups=c),
            Layer(f"{b}.dw_bn", "BatchNormalization", c, c),
            Layer(f"{b}.dw_relu", "Relu", c, c),
            Layer(f"{b}.pw", "Conv", c, width),
            Layer(f"{b}.pw_bn", "BatchNormalization", width, width),
            Layer(f"{b}.pw_relu", "Relu", width, width),
        ]
        c = width
    out += [
        Layer("pool", "GlobalAveragePool", c, c),
        Layer("flatten", "Flatten", c, c),
        Layer("fc", "Gemm", c, num_classes),
    ]
    return tuple(out)


# Each operator below works on channels-last (N, H, W, C) activations and has a
# forward function returning (output, cache) and a backward function taking
# (d_output, cache) and returning the gradients of its inputs.


def _windows(xp: np.ndarray, k: int, stride: int, ho: int, wo: int):
    """The k×k shifted views of a padded NHWC tensor, one per kernel tap (i, j)."""
    for i in range(k):
        for j in range(k):
            yield i, j, xp[:, i:i + stride * (ho - 1) + 1:stride, j:j + stride * (wo - 1) + 1:stride, :]


def _out_size(h: int, k: int, stride: int) -> int:
    return (h + 2 * (k // 2) - k) // stride + 1


def _conv_forward(x: np.ndarray, w: np.ndarray, layer: Layer):
    """Convolution with 'same' padding; ``w`` has the ONNX layout (Cout, Cin/groups, k, k)."""
    n, h, wd, cin = x.shape
    k, s = layer.kernel, layer.stride
    if k == 1:  # pointwise: one matrix multiply over all N·H·W pixels
        y = x.reshape(-1, cin) @ w[:, :, 0, 0].T
        return y.reshape(n, h, wd, -1), (x, w)
    ho, wo = _out_size(h, k, s), _out_size(wd, k, s)
    xp = np.pad(x, ((0, 0), (k // 2, k // 2), (k // 2, k // 2), (0, 0)))
    if layer.groups > 1:  # depthwise (groups == channels): each channel has its own k×k filter
        y = np.zeros((n, ho, wo, cin), dtype=x.dtype)
        for i, j, view in _windows(xp, k, s, ho, wo):
            y += view * w[:, 0, i, j]
        return y, (xp, w)
    # dense k×k: im2col, then one matrix multiply
    cols = np.stack([view for _, _, view in _windows(xp, k, s, ho, wo)], axis=3)  # (n, ho, wo, k·k, cin)
    cols = cols.reshape(n * ho * wo, k * k * cin)
    w_mat = w.transpose(2, 3, 1, 0).reshape(k * k * cin, -1)  # rows ordered (i, j, cin) like cols
    y = cols @ w_mat
    return y.reshape(n, ho, wo, -1), (xp, cols, w_mat, w)


def _conv_backward(dy: np.ndarray, cache, layer: Layer):
    """Gradients (dx, dw) of :func:`_conv_forward`."""
    k, s = layer.kernel, layer.stride
    if k == 1:
        x, w = cache
        cin = x.shape[-1]
        dy2 = dy.reshape(-1, dy.shape[-1])
        dx = (dy2 @ w[:, :, 0, 0]).reshape(x.shape)
        dw = (dy2.T @ x.reshape(-1, cin))[:, :, None, None]
        return dx, dw
    p = k // 2
    n, ho, wo, cout = dy.shape
    if layer.groups > 1:
        xp, w = cache
        dxp = np.zeros_like(xp)
        dw = np.zeros_like(w)
        for (i, j, view), (_, _, d_view) in zip(_windows(xp, k, s, ho, wo), _windows(dxp, k, s, ho, wo)):
            dw[:, 0, i, j] = _channel_sum(view * dy)
            d_view += dy * w[:, 0, i, j]  # writes through the view into dxp
        return dxp[:, p:-p, p:-p, :], dw
    xp, cols, w_mat, w = cache
    cin = xp.shape[-1]
    dy2 = dy.reshape(-1, cout)
    dw = (cols.T @ dy2).reshape(k, k, cin, cout).transpose(3, 2, 0, 1)
    dcols = (dy2 @ w_mat.T).reshape(n, ho, wo, k, k, cin)
    dxp = np.zeros_like(xp)
    for i, j, d_view in _windows(dxp, k, s, ho, wo):  # col2im: each tap's gradient goes back where it came from
        d_view += dcols[:, :, :, i, j, :]
    return dxp[:, p:-p, p:-p, :], dw


def _channel_sum(a: np.ndarray) -> np.ndarray:
    """Sum an NHWC tensor over every axis but the channels.

    ``np.einsum`` adds up each channel in one pass over memory, several times
    faster than ``a.sum(axis=(0, 1, 2))``, which adds one short row of C
    numbers at a time. (A matrix–vector product with a vector of ones is
    faster still on an idle machine, but it calls multithreaded BLAS, whose
    threads stall when other programs share the cores.)
    """
    return np.einsum("mc->c", a.reshape(-1, a.shape[-1]))


def _bn_forward(x: np.ndarray, scale, bias, mean, var, train: bool):
    """BatchNormalization over N, H, W; in training mode with the batch's statistics."""
    if train:
        m = x.shape[0] * x.shape[1] * x.shape[2]
        mean = _channel_sum(x) / m
        centred = x - mean
        var = _channel_sum(centred * centred) / m
    else:
        centred = x - mean
    inv_std = 1 / np.sqrt(var + BN_EPSILON)
    x_hat = centred * inv_std
    return scale * x_hat + bias, (x_hat, inv_std, scale, mean, var)


def _bn_backward(dy: np.ndarray, cache):
    """Gradients (dx, dscale, dbias) of a training-mode :func:`_bn_forward`."""
    x_hat, inv_std, scale, _, _ = cache
    m = dy.shape[0] * dy.shape[1] * dy.shape[2]
    dbias = _channel_sum(dy)
    dscale = _channel_sum(dy * x_hat)
    dx = (scale * inv_std / m) * (m * dy - dbias - x_hat * dscale)
    return dx, dscale, dbias


def _check_images(images: Any, size: int, name: str = "images", dtypes: tuple = (np.float32,)) -> np.ndarray:
    images = _check.as_array(images, name)
    if images.ndim != 4 or images.shape[1:] != (3, size, size):
        raise ValueError(f"{name} must have shape (n, 3, {size}, {size}) (NCHW RGB), got {images.shape}")
    if images.dtype not in dtypes:
        want = " or ".join(np.dtype(d).name for d in dtypes)
        raise TypeError(f"{name} must have dtype {want}, got {images.dtype}")
    return _check.finite(images, name)


class CameraNet:
    """A small CNN for 32×32 RGB images, in NumPy, forward and backward.

    ``stem.conv`` (3×3, stride 2) + BN + ReLU, then depthwise-separable blocks
    (depthwise 3×3 + BN + ReLU, pointwise 1×1 + BN + ReLU), a global average
    pool and a fully connected layer to the classes. Convolutions have no bias:
    the BatchNormalization after each one supplies it.

    Parameters
    ----------
    stem : int
        Channels out of the stem convolution.
    blocks : sequence of (width, stride)
        One depthwise-separable block per pair: its output channels and the
        stride of its depthwise convolution (1 or 2).
    num_classes : int
        Outputs of the classifier.
    size : int
        Input height and width.
    seed : int
        Seed of the He-normal weight initialisation.

    Attributes
    ----------
    layers : tuple of Layer
        The layers in execution order; their names are the ONNX node names.
    params : dict of str to numpy.ndarray
        Every stored float32 array, keyed ``"<layer>.<role>"``: ``weight`` for
        convolutions and ``fc`` (plus ``fc.bias``); ``scale``, ``bias``,
        ``mean``, ``var`` for BatchNormalization. The keys are the ONNX
        initializer names.
    train_call : str or None
        The training call stored with loaded weights.

    Examples
    --------
    >>> net = CameraNet.pretrained()
    >>> images, labels = shapes_dataset(8, seed=HELDOUT_SEED)
    >>> logits = net(images)
    >>> logits.shape, logits.dtype
    ((8, 8), dtype('float32'))
    >>> [layer.name for layer in net.layers[:4]]
    ['stem.conv', 'stem.bn', 'stem.relu', 'block1.dw']
    """

    TRAINABLE = ("weight", "scale", "bias")

    def __init__(self, *, stem: int = 16, blocks: Sequence[tuple[int, int]] = ((32, 1), (64, 2), (128, 2)),
                 num_classes: int = len(CLASSES), size: int = 32, seed: int = 0) -> None:
        stem = _check.integer(stem, "stem", minimum=1)
        num_classes = _check.integer(num_classes, "num_classes", minimum=2)
        self.size = _check.integer(size, "size", minimum=4)
        seed = _check.integer(seed, "seed", minimum=0)
        blocks = tuple((int(w), int(s)) for w, s in blocks)
        for i, (w, s) in enumerate(blocks):
            if w < 1 or s not in (1, 2):
                raise ValueError(f"blocks[{i}] must be (width >= 1, stride 1 or 2), got {(w, s)}")
        self.config = {"stem": stem, "blocks": [list(b) for b in blocks], "num_classes": num_classes, "size": self.size}
        self.layers = _layers(stem, blocks, num_classes)
        rng = np.random.default_rng(seed)
        self.params: dict[str, np.ndarray] = {}
        for layer in self.layers:
            if layer.op == "Conv":
                fan_in = layer.cin // layer.groups * layer.kernel ** 2
                shape = (layer.cout, layer.cin // layer.groups, layer.kernel, layer.kernel)
                self.params[f"{layer.name}.weight"] = rng.normal(0, math.sqrt(2 / fan_in), shape).astype(np.float32)
            elif layer.op == "BatchNormalization":
                c = layer.cout
                self.params[f"{layer.name}.scale"] = np.ones(c, np.float32)
                self.params[f"{layer.name}.bias"] = np.zeros(c, np.float32)
                self.params[f"{layer.name}.mean"] = np.zeros(c, np.float32)
                self.params[f"{layer.name}.var"] = np.ones(c, np.float32)
            elif layer.op == "Gemm":
                shape = (layer.cout, layer.cin)
                self.params[f"{layer.name}.weight"] = rng.normal(0, math.sqrt(1 / layer.cin), shape).astype(np.float32)
                self.params[f"{layer.name}.bias"] = np.zeros(layer.cout, np.float32)
        self._caches: list | None = None
        self.train_call: str | None = None  # set by load() from the file

    def __repr__(self) -> str:
        c = self.config
        return (f"CameraNet(stem={c['stem']}, blocks={[tuple(b) for b in c['blocks']]}, "
                f"num_classes={c['num_classes']}, size={c['size']})")

    # -- loading and saving ---------------------------------------------------

    @classmethod
    def pretrained(cls) -> "CameraNet":
        """The trained CameraNet shipped with npukit (``npukit/data/cameranet.npz``).

        Returns
        -------
        CameraNet
            A fresh copy; changing it does not change the next call's result.

        Examples
        --------
        >>> net = CameraNet.pretrained()
        >>> net.params["stem.conv.weight"].shape
        (16, 3, 3, 3)
        """
        return cls.load(WEIGHTS_PATH)

    @classmethod
    def load(cls, path: str | pathlib.Path) -> "CameraNet":
        """Read a CameraNet written by :meth:`save`.

        Parameters
        ----------
        path : str or pathlib.Path
            An ``.npz`` file with the arrays of ``params``, the architecture
            (``__config__``) and optionally the training call (``__train_call__``).

        Returns
        -------
        CameraNet
            With ``train_call`` set from the file (``None`` if it has none).

        Raises
        ------
        ValueError
            If the file lacks an array the architecture needs, or has one of
            the wrong shape.

        Examples
        --------
        >>> net = CameraNet.load(WEIGHTS_PATH)
        >>> net.train_call == TRAIN_CALL
        True
        """
        with np.load(path, allow_pickle=False) as f:
            config = json.loads(str(f["__config__"]))
            net = cls(stem=config["stem"], blocks=config["blocks"], num_classes=config["num_classes"],
                      size=config["size"])
            for key, want in net.params.items():
                if key not in f:
                    raise ValueError(f"{path} lacks the array {key!r}")
                if f[key].shape != want.shape:
                    raise ValueError(f"{path}: {key} has shape {f[key].shape}, expected {want.shape}")
                net.params[key] = f[key].astype(np.float32)
            net.train_call = str(f["__train_call__"]) if "__train_call__" in f else None
        return net

    def save(self, path: str | pathlib.Path, train_call: str | None = None) -> None:
        """Write the weights, the architecture and (optionally) the training call to an ``.npz``.

        The file is a compressed ``.npz`` that ``np.load`` reads; unlike
        ``np.savez_compressed`` it stamps every member with the same date, so
        the same weights always give the same bytes (a re-training that
        reproduces them leaves no diff in git).

        Parameters
        ----------
        path : str or pathlib.Path
            Where to write (overwritten).
        train_call : str, optional
            The call that produced the weights, stored for :meth:`load`.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.npz"
        >>> CameraNet(stem=4, blocks=[(8, 2)]).save(path, train_call="none")
        >>> CameraNet.load(path)
        CameraNet(stem=4, blocks=[(8, 2)], num_classes=8, size=32)
        """
        import io
        import zipfile

        arrays = dict(self.params)
        arrays["__config__"] = np.array(json.dumps(self.config))
        if train_call is not None:
            arrays["__train_call__"] = np.array(train_call)
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for key, value in arrays.items():
                member = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                member.compress_type = zipfile.ZIP_DEFLATED
                buffer = io.BytesIO()
                np.lib.format.write_array(buffer, value, allow_pickle=False)
                archive.writestr(member, buffer.getvalue())

    # -- forward and backward --------------------------------------------------

    def __call__(self, images: np.ndarray) -> np.ndarray:
        """Logits for a batch of images, in inference mode (BN uses running statistics).

        Parameters
        ----------
        images : numpy.ndarray
            float32, shape ``(n, 3, size, size)``, finite.

        Returns
        -------
        numpy.ndarray
            float32 logits, shape ``(n, num_classes)``; ``argmax(axis=1)`` is
            the predicted label.

        Raises
        ------
        TypeError
            If ``images`` is not a NumPy array or not float32.
        ValueError
            If its shape is not ``(n, 3, size, size)`` or it holds NaN or infinity.

        Examples
        --------
        >>> net = CameraNet.pretrained()
        >>> net(np.zeros((2, 3, 32, 32), np.float32)).shape
        (2, 8)
        >>> net(np.zeros((2, 32, 32, 3), np.float32))
        Traceback (most recent call last):
        ...
        ValueError: images must have shape (n, 3, 32, 32) (NCHW RGB), got (2, 32, 32, 3)
        """
        images = _check_images(images, self.size)
        out = [self._run(images[i:i + 512], train=False)[0] for i in range(0, len(images), 512)]
        if not out:
            return np.zeros((0, self.layers[-1].cout), np.float32)
        return np.concatenate(out)

    def activations(self, images: np.ndarray) -> dict[str, np.ndarray]:
        """Every layer's output for ``images`` (inference mode), keyed by layer name.

        Feature maps are returned NCHW, like the ONNX tensors of the same names
        (the last one, ``fc``, is the logits).

        Parameters
        ----------
        images : numpy.ndarray
            float32, shape ``(n, 3, size, size)``, finite.

        Returns
        -------
        dict of str to numpy.ndarray
            One entry per layer, in execution order.

        Raises
        ------
        TypeError, ValueError
            For bad ``images``, as for calling the network.

        Examples
        --------
        >>> net = CameraNet.pretrained()
        >>> acts = net.activations(np.zeros((1, 3, 32, 32), np.float32))
        >>> acts["stem.relu"].shape, acts["pool"].shape, acts["fc"].shape
        ((1, 16, 16, 16), (1, 128, 1, 1), (1, 8))
        """
        images = _check_images(images, self.size)
        _, record = self._run(images, train=False, record=True)
        return {name: np.ascontiguousarray(a.transpose(0, 3, 1, 2) if a.ndim == 4 else a)
                for name, a in record.items()}

    def forward(self, images: np.ndarray, *, train: bool = False) -> np.ndarray:
        """Logits of one pass, in training or inference mode.

        With ``train=True`` every BatchNormalization normalises with the
        batch's own mean and variance, moves its running statistics towards
        them (momentum 0.1) and the pass is remembered for :meth:`backward`.

        Parameters
        ----------
        images : numpy.ndarray
            float32 (or float64, which with float64 ``params`` makes a float64
            network for gradient checks), shape ``(n, 3, size, size)``.
        train : bool
            Training mode.

        Returns
        -------
        numpy.ndarray
            Logits, shape ``(n, num_classes)``, in the images' precision.

        Raises
        ------
        TypeError, ValueError
            For bad ``images``, as for calling the network.

        Examples
        --------
        >>> net = CameraNet.pretrained()
        >>> images, _ = shapes_dataset(4, seed=0)
        >>> bool(np.array_equal(net.forward(images), net(images)))
        True
        """
        images = _check_images(images, self.size, dtypes=(np.float32, np.float64))
        logits, _ = self._run(images, train=train)
        return logits

    def _run(self, images: np.ndarray, *, train: bool, record: bool = False):
        x = images.transpose(0, 2, 3, 1)  # NCHW -> NHWC, a view
        caches, outputs = [], {}
        p = self.params
        for layer in self.layers:
            name = layer.name
            if layer.op == "Conv":
                x, cache = _conv_forward(x, p[f"{name}.weight"], layer)
            elif layer.op == "BatchNormalization":
                x, cache = _bn_forward(x, p[f"{name}.scale"], p[f"{name}.bias"], p[f"{name}.mean"],
                                       p[f"{name}.var"], train)
                if train:
                    n = x.shape[0] * x.shape[1] * x.shape[2]
                    _, _, _, mean, var = cache
                    m = BN_MOMENTUM
                    p[f"{name}.mean"] = ((1 - m) * p[f"{name}.mean"] + m * mean).astype(p[f"{name}.mean"].dtype)
                    # the running variance uses the unbiased estimate, as PyTorch does
                    unbiased = var * n / max(n - 1, 1)
                    p[f"{name}.var"] = ((1 - m) * p[f"{name}.var"] + m * unbiased).astype(p[f"{name}.var"].dtype)
            elif layer.op == "Relu":
                x = np.maximum(x, 0)
                cache = x > 0
            elif layer.op == "GlobalAveragePool":
                cache = x.shape
                x = x.mean(axis=(1, 2), keepdims=True)
            elif layer.op == "Flatten":
                cache = x.shape
                x = x.reshape(x.shape[0], -1)
            elif layer.op == "Gemm":
                cache = x
                x = x @ p[f"{name}.weight"].T + p[f"{name}.bias"]
            caches.append(cache)
            if record:
                outputs[name] = x
        self._caches = caches if train else None
        return x, outputs

    def backward(self, d_logits: np.ndarray) -> dict[str, np.ndarray]:
        """Gradients of a scalar loss, given its gradient with respect to the
        logits of the last ``forward(..., train=True)``.

        Parameters
        ----------
        d_logits : numpy.ndarray
            d loss / d logits, shape ``(n, num_classes)``.

        Returns
        -------
        dict
            One entry per trainable parameter (same keys as ``params``) and
            ``"image"``, the gradient with respect to the input (NCHW).

        Raises
        ------
        RuntimeError
            If no training-mode forward pass came before.

        Examples
        --------
        >>> net = CameraNet(stem=4, blocks=[(8, 2)])
        >>> images, _ = shapes_dataset(2, seed=0)
        >>> logits = net.forward(images, train=True)
        >>> grads = net.backward(np.ones_like(logits))
        >>> grads["image"].shape, grads["fc.bias"].tolist()
        ((2, 3, 32, 32), [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0])
        """
        if self._caches is None:
            raise RuntimeError("backward needs a preceding forward(images, train=True)")
        grads: dict[str, np.ndarray] = {}
        dx = d_logits
        p = self.params
        for layer, cache in zip(reversed(self.layers), reversed(self._caches)):
            name = layer.name
            if layer.op == "Gemm":
                grads[f"{name}.weight"] = dx.T @ cache
                grads[f"{name}.bias"] = _channel_sum(dx)
                dx = dx @ p[f"{name}.weight"]
            elif layer.op == "Flatten":
                dx = dx.reshape(cache)
            elif layer.op == "GlobalAveragePool":
                n, h, w, c = cache
                dx = np.broadcast_to(dx / (h * w), cache)
            elif layer.op == "Relu":
                dx = dx * cache
            elif layer.op == "BatchNormalization":
                dx, grads[f"{name}.scale"], grads[f"{name}.bias"] = _bn_backward(dx, cache)
            elif layer.op == "Conv":
                dx, grads[f"{name}.weight"] = _conv_backward(dx, cache, layer)
        grads["image"] = dx.transpose(0, 3, 1, 2)
        return grads

    def loss_and_grads(self, images: np.ndarray, labels: np.ndarray, *,
                       smoothing: float = 0.0) -> tuple[float, dict[str, np.ndarray]]:
        """Mean softmax cross-entropy of a training-mode pass, and its gradients.

        Parameters
        ----------
        images : numpy.ndarray
            As for :meth:`forward`.
        labels : numpy.ndarray
            Integer labels, shape ``(n,)``.
        smoothing : float
            Label smoothing ε (0 for plain cross-entropy).

        Returns
        -------
        loss : float
        grads : dict
            As returned by :meth:`backward`.

        Raises
        ------
        TypeError, ValueError
            For bad ``images`` or ``labels``.

        Examples
        --------
        >>> net = CameraNet(stem=4, blocks=[(8, 2)], seed=0)
        >>> images, labels = shapes_dataset(4, seed=0)
        >>> loss, grads = net.loss_and_grads(images, labels)
        >>> grads["block1.pw.weight"].shape == net.params["block1.pw.weight"].shape
        True
        """
        labels = _check.as_array(labels, "labels")
        logits = self.forward(images, train=True)
        if labels.shape != (len(logits),) or labels.dtype.kind not in "iu":
            raise ValueError(f"labels must be integers of shape ({len(logits)},), got {labels.dtype} {labels.shape}")
        loss, d_logits = _cross_entropy(logits, labels, smoothing)
        return loss, self.backward(d_logits)

    def trainable(self) -> list[str]:
        """Names of the trainable parameters (BN running statistics are not).

        Returns
        -------
        list of str
            Keys of ``params``.

        Examples
        --------
        >>> CameraNet(stem=4, blocks=[(8, 2)]).trainable()[:4]
        ['stem.conv.weight', 'stem.bn.scale', 'stem.bn.bias', 'block1.dw.weight']
        """
        return [k for k in self.params if k.rsplit(".", 1)[1] in self.TRAINABLE]

    # -- ONNX --------------------------------------------------------------------

    def to_onnx(self, batch: int | str | None = None, *, opset: int = 17) -> Any:
        """Export the network as an ONNX model built with ``onnx.helper``.

        One input ``"image"`` (float32, NCHW), one output ``"logits"``. Every
        layer is one node named like the layer, whose output tensor has the
        same name (the last is ``"logits"``); weights are initializers named
        like the keys of ``params``. BatchNormalization stays a separate node
        after each convolution (chapter 3 folds it).

        Parameters
        ----------
        batch : int, str or None
            The batch dimension: ``None`` (default) for 1, an int for another
            static batch, a string for a symbolic (dynamic) dimension of that name.
        opset : int
            ONNX opset version (17 or later).

        Returns
        -------
        onnx.ModelProto
            A model that passes ``onnx.checker.check_model``.

        Raises
        ------
        TypeError
            If ``batch`` or ``opset`` has the wrong type.
        ValueError
            If ``batch`` < 1 or is an empty string, ``opset`` < 17, or a weight
            is not finite.

        Examples
        --------
        >>> import onnx
        >>> model = CameraNet.pretrained().to_onnx()
        >>> onnx.checker.check_model(model)
        >>> [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        [1, 3, 32, 32]
        >>> [n.name for n in model.graph.node][:3]
        ['stem.conv', 'stem.bn', 'stem.relu']
        >>> CameraNet.pretrained().to_onnx(batch=0)
        Traceback (most recent call last):
        ...
        ValueError: batch must be >= 1, got 0
        """
        import onnx
        from onnx import TensorProto, helper, numpy_helper

        if batch is None:
            batch = 1
        if isinstance(batch, str):
            if not batch.isidentifier():
                raise ValueError(f"batch must be an int or a dimension name such as 'N', got {batch!r}")
        else:
            batch = _check.integer(batch, "batch", minimum=1)
        opset = _check.integer(opset, "opset", minimum=17)
        for key, value in self.params.items():
            _check.finite(value, f"params[{key!r}]")

        nodes, inits = [], []
        prev = "image"
        for layer in self.layers:
            name = layer.name
            out = "logits" if layer is self.layers[-1] else name
            if layer.op == "Conv":
                k, pad = layer.kernel, layer.kernel // 2
                node = helper.make_node("Conv", [prev, f"{name}.weight"], [out], name=name,
                                        kernel_shape=[k, k], strides=[layer.stride] * 2,
                                        pads=[pad] * 4, dilations=[1, 1], group=layer.groups)
                keys = [f"{name}.weight"]
            elif layer.op == "BatchNormalization":
                keys = [f"{name}.{role}" for role in ("scale", "bias", "mean", "var")]
                node = helper.make_node("BatchNormalization", [prev, *keys], [out], name=name, epsilon=BN_EPSILON)
            elif layer.op == "Gemm":
                keys = [f"{name}.weight", f"{name}.bias"]
                node = helper.make_node("Gemm", [prev, *keys], [out], name=name, transB=1)
            elif layer.op == "Flatten":
                keys = []
                node = helper.make_node("Flatten", [prev], [out], name=name, axis=1)
            else:  # Relu, GlobalAveragePool
                keys = []
                node = helper.make_node(layer.op, [prev], [out], name=name)
            nodes.append(node)
            inits += [numpy_helper.from_array(self.params[key].astype(np.float32), key) for key in keys]
            prev = out

        image = helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, 3, self.size, self.size])
        logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, self.layers[-1].cout])
        graph = helper.make_graph(nodes, "CameraNet", [image], [logits], initializer=inits,
                                  doc_string="CameraNet from npukit.models; input: RGB in [0, 1], NCHW")
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="npukit", producer_version="0.1.0", ir_version=8)
        helper.set_model_props(model, {"classes": json.dumps(list(CLASSES[:self.layers[-1].cout]))})
        onnx.checker.check_model(model)
        return model


def _cross_entropy(logits: np.ndarray, labels: np.ndarray, smoothing: float = 0.0) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy and its gradient with respect to the logits.

    With label smoothing ε the target puts 1 − ε on the true class and spreads
    ε evenly over all classes, which keeps the logits from growing without bound.
    """
    n, k = logits.shape
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    target = np.full_like(log_probs, smoothing / k)
    target[np.arange(n), labels] += 1 - smoothing
    loss = -(target * log_probs).sum(axis=1).mean()
    return float(loss), (np.exp(log_probs) - target) / n


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


def train(
    *,
    epochs: int = 8,
    n_train: int = 6000,
    batch: int = 64,
    lr: float = 0.03,
    weight_decay: float = 0.0001,
    smoothing: float = 0.1,
    seed: int = 0,
    data_seed: int = 100,
    arch: dict[str, Any] | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[CameraNet, list[float]]:
    """Train a CameraNet from scratch, deterministically.

    Draws ``n_train`` images with ``shapes_dataset(n_train, seed=data_seed)``,
    then runs AdamW (β = 0.9, 0.999; decoupled weight decay on convolution and
    ``fc`` weights only) on shuffled mini-batches for ``epochs`` epochs, with
    the learning rate following a cosine from ``lr`` down to 0 and label
    smoothing ``smoothing`` in the loss. The same call gives the same weights
    (on the same machine and NumPy build; another BLAS may round differently).

    Parameters
    ----------
    epochs, n_train, batch : int
        Passes over the data, training images, images per step (a last
        incomplete batch of an epoch is skipped, so BN always sees ``batch``).
    lr, weight_decay, smoothing : float
        Peak learning rate, AdamW weight decay, label smoothing ε.
    seed : int
        Seed of the weight initialisation and of the shuffling.
    data_seed : int
        Seed of the training images (keep it away from :data:`HELDOUT_SEED`).
    arch : dict, optional
        Keyword arguments for :class:`CameraNet` (``stem``, ``blocks`` …).
    log : callable, optional
        Called with one progress line per epoch (e.g. ``print``).

    Returns
    -------
    net : CameraNet
        The trained network.
    losses : list of float
        The training loss of every step.

    Raises
    ------
    TypeError, ValueError
        If a count is not a positive integer, a rate is negative, or
        ``n_train < batch``.

    Examples
    --------
    >>> net, losses = train(epochs=1, n_train=64, batch=32, seed=0)
    >>> len(losses)
    2
    """
    epochs = _check.integer(epochs, "epochs", minimum=1)
    batch = _check.integer(batch, "batch", minimum=2)
    n_train = _check.integer(n_train, "n_train", minimum=batch)
    seed = _check.integer(seed, "seed", minimum=0)
    for name, value in (("lr", lr), ("weight_decay", weight_decay), ("smoothing", smoothing)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
            raise ValueError(f"{name} must be a number in [0, 1), got {value!r}")

    images, labels = shapes_dataset(n_train, seed=data_seed)
    net = CameraNet(seed=seed, **(arch or {}))
    names = net.trainable()
    m1 = {k: np.zeros_like(net.params[k]) for k in names}
    m2 = {k: np.zeros_like(net.params[k]) for k in names}
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    rng = np.random.default_rng(seed)
    steps_per_epoch = n_train // batch
    total = epochs * steps_per_epoch
    losses: list[float] = []
    start = time.perf_counter()
    for epoch in range(epochs):
        order = rng.permutation(n_train)
        for s in range(steps_per_epoch):
            idx = order[s * batch:(s + 1) * batch]
            t = len(losses)
            rate = lr * 0.5 * (1 + math.cos(math.pi * t / total))
            loss, grads = net.loss_and_grads(images[idx], labels[idx], smoothing=smoothing)
            losses.append(loss)
            for k in names:
                g = grads[k]
                m1[k] = beta1 * m1[k] + (1 - beta1) * g
                m2[k] = beta2 * m2[k] + (1 - beta2) * g * g
                m_hat = m1[k] / (1 - beta1 ** (t + 1))
                v_hat = m2[k] / (1 - beta2 ** (t + 1))
                step = m_hat / (np.sqrt(v_hat) + eps)
                if k.endswith(".weight"):
                    step = step + weight_decay * net.params[k]
                net.params[k] = (net.params[k] - rate * step).astype(np.float32)
        if log is not None:
            recent = losses[-steps_per_epoch:]
            log(f"epoch {epoch + 1}/{epochs}: mean loss {sum(recent) / len(recent):.4f}, "
                f"{time.perf_counter() - start:.1f} s")
    return net, losses


def reproduce(log: Callable[[str], None] | None = None) -> CameraNet:
    """Re-run :data:`TRAIN_CALL`, the training that made the shipped weights.

    Parameters
    ----------
    log : callable, optional
        Receives one progress line per epoch.

    Returns
    -------
    CameraNet
        The re-trained network (on the machine that made the shipped file,
        bit for bit the same weights).

    Examples
    --------
    >>> net = reproduce(log=print)  # doctest: +SKIP
    epoch 1/8: ...
    """
    net, _ = train(**TRAIN_KWARGS, log=log)
    return net


def accuracy(net: CameraNet, images: np.ndarray, labels: np.ndarray) -> float:
    """Fraction of ``images`` whose predicted class (argmax of the logits) is ``labels``.

    Parameters
    ----------
    net : CameraNet
    images : numpy.ndarray
        float32, shape ``(n, 3, size, size)``.
    labels : numpy.ndarray
        Integer labels, shape ``(n,)``.

    Returns
    -------
    float
        In [0, 1] (NaN for no images).

    Raises
    ------
    TypeError, ValueError
        For bad ``images`` (as for calling the network) or ``labels`` that are
        not integers of shape ``(n,)``.

    Examples
    --------
    >>> net = CameraNet.pretrained()
    >>> acc = accuracy(net, *shapes_dataset(200, seed=HELDOUT_SEED))
    >>> acc > 0.9
    True
    """
    logits = net(images)
    labels = _check.as_array(labels, "labels")
    if labels.shape != (len(logits),) or labels.dtype.kind not in "iu":
        raise ValueError(f"labels must be integers of shape ({len(logits)},), got {labels.dtype} {labels.shape}")
    return float((logits.argmax(axis=1) == labels).mean()) if len(labels) else float("nan")


# ---------------------------------------------------------------------------
# Tables and figures
# ---------------------------------------------------------------------------


def summary(net: CameraNet, batch: int = 1) -> list[dict[str, Any]]:
    """One record per layer: what it is, its shapes, parameters and MACs.

    Parameters
    ----------
    net : CameraNet
    batch : int
        Batch size for the shapes and the MACs.

    Returns
    -------
    list of dict
        Keys ``layer`` (= ONNX node name), ``op`` (ONNX operator), ``detail``,
        ``input`` and ``output`` (NCHW shape tuples), ``params`` (trainable
        numbers: weights, fc bias, BN scale and bias; BN's running mean and
        variance are stored too but not trained) and ``macs`` (multiply–
        accumulates; 0 for layers that do none).

    Raises
    ------
    TypeError
        If ``net`` is not a CameraNet.

    Examples
    --------
    >>> rows = summary(CameraNet.pretrained())
    >>> rows[0]["layer"], rows[0]["input"], rows[0]["output"], rows[0]["macs"]
    ('stem.conv', (1, 3, 32, 32), (1, 16, 16, 16), 110592)
    >>> sum(r["macs"] for r in rows)
    569344
    """
    if not isinstance(net, CameraNet):
        raise TypeError(f"net must be a CameraNet, got {type(net).__name__}")
    batch = _check.integer(batch, "batch", minimum=1)
    shape: tuple[int, ...] = (batch, 3, net.size, net.size)
    rows = []
    for layer in net.layers:
        params, macs = 0, 0
        if layer.op == "Conv":
            h = _out_size(shape[2], layer.kernel, layer.stride)
            w = _out_size(shape[3], layer.kernel, layer.stride)
            out = (batch, layer.cout, h, w)
            params = net.params[f"{layer.name}.weight"].size
            macs = batch * h * w * layer.cout * (layer.cin // layer.groups) * layer.kernel ** 2
            kind = "depthwise" if layer.groups > 1 else ("pointwise" if layer.kernel == 1 else "dense")
            detail = f"{kind} {layer.kernel}×{layer.kernel}, stride {layer.stride}, {layer.cin}→{layer.cout}"
        elif layer.op == "BatchNormalization":
            out, params, detail = shape, 2 * layer.cout, f"{layer.cout} channels"
        elif layer.op == "Relu":
            out, detail = shape, "max(x, 0)"
        elif layer.op == "GlobalAveragePool":
            out, detail = (batch, shape[1], 1, 1), f"mean over {shape[2]}×{shape[3]}"
        elif layer.op == "Flatten":
            out, detail = (batch, shape[1]), "to (N, C)"
        else:  # Gemm
            out = (batch, layer.cout)
            params = layer.cin * layer.cout + layer.cout
            macs = batch * layer.cin * layer.cout
            detail = f"fully connected, {layer.cin}→{layer.cout}"
        rows.append({"layer": layer.name, "op": layer.op, "detail": detail, "input": shape,
                     "output": out, "params": int(params), "macs": int(macs)})
        shape = out
    return rows


def summary_table(net: CameraNet, batch: int = 1) -> Any:
    """:func:`summary` as an HTML table (``npukit.viz.table``), with a total row.

    Parameters
    ----------
    net : CameraNet
    batch : int
        Batch size for the shapes and the MACs.

    Returns
    -------
    IPython.display.HTML

    Raises
    ------
    TypeError
        If ``net`` is not a CameraNet.

    Examples
    --------
    >>> html = summary_table(CameraNet.pretrained())
    >>> "block1.pw" in html.data and "total" in html.data
    True
    """
    from . import viz

    rows = summary(net, batch)

    def dims(s: tuple[int, ...]) -> str:
        return "×".join(map(str, s))

    body = [(r["layer"], r["op"], r["detail"], dims(r["input"]), dims(r["output"]),
             f"{r['params']:,}", f"{r['macs']:,}") for r in rows]
    body.append(("total", "", "", "", "", f"{sum(r['params'] for r in rows):,}",
                 f"{sum(r['macs'] for r in rows):,}"))
    return viz.table(body, ["layer", "op", "detail", "input", "output", "params", "MACs"])


def numbers(net: CameraNet, n: int = 2000, seed: int = HELDOUT_SEED) -> list[dict[str, Any]]:
    """Chapter 0's rows of the "numbers so far" table (``npukit.viz.numbers_table``).

    Parameters
    ----------
    net : CameraNet
    n, seed : int
        Size and seed of the held-out set for the accuracy.

    Returns
    -------
    list of dict
        Records ``{"chapter": 0, "quantity", "value" (formatted), "how"}``:
        trainable parameters, weight bytes in float32, MACs per image and
        held-out accuracy.

    Raises
    ------
    TypeError, ValueError
        If ``net`` is not a CameraNet or ``n``, ``seed`` are not valid.

    Examples
    --------
    >>> rows = numbers(CameraNet.pretrained(), n=100)
    >>> [r["quantity"] for r in rows]
    ['parameters (trainable)', 'weight bytes, float32', 'MACs per image', 'held-out accuracy']
    """
    rows = summary(net)
    n = _check.integer(n, "n", minimum=1)
    params = sum(r["params"] for r in rows)
    stored = sum(a.size for a in net.params.values())
    macs = sum(r["macs"] for r in rows)
    acc = accuracy(net, *shapes_dataset(n, seed=seed))
    return [
        {"chapter": 0, "quantity": "parameters (trainable)", "value": f"{params:,}",
         "how": "counted: conv and fc weights, fc bias, BN scale and bias"},
        {"chapter": 0, "quantity": "weight bytes, float32", "value": f"{4 * stored:,} B ({4 * stored / 1024:.1f} KiB)",
         "how": f"{stored:,} stored numbers (with BN running statistics) × 4 bytes"},
        {"chapter": 0, "quantity": "MACs per image", "value": f"{macs:,}",
         "how": "summed over layers: output elements × inputs per output"},
        {"chapter": 0, "quantity": "held-out accuracy", "value": f"{acc:.1%}",
         "how": f"NumPy float32 on {n:,} images of shapes_dataset(seed={seed})"},
    ]


def confusion_matrix(net: CameraNet, images: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Counts of (true class, predicted class) pairs.

    Parameters
    ----------
    net : CameraNet
    images : numpy.ndarray
        float32, shape ``(n, 3, size, size)``.
    labels : numpy.ndarray
        Integer labels, shape ``(n,)``.

    Returns
    -------
    numpy.ndarray
        int64, shape ``(K, K)`` with ``K = len(CLASSES)``: row = true class,
        column = predicted class; the diagonal holds the correct answers.

    Raises
    ------
    TypeError, ValueError
        For bad ``images`` or ``labels``.

    Examples
    --------
    >>> m = confusion_matrix(CameraNet.pretrained(), *shapes_dataset(80, seed=HELDOUT_SEED))
    >>> m.shape, int(m.sum())
    ((8, 8), 80)
    """
    predicted = net(images).argmax(axis=1)
    labels = _check.as_array(labels, "labels")
    if labels.shape != predicted.shape or labels.dtype.kind not in "iu":
        raise ValueError(f"labels must be integers of shape {predicted.shape}, got {labels.dtype} {labels.shape}")
    k = len(CLASSES)
    return np.bincount(labels * k + predicted, minlength=k * k).reshape(k, k)


def figure_confusion(matrix: np.ndarray, *, title: str | None = None) -> Any:
    """A heatmap of a confusion matrix, each cell labelled with its count.

    Parameters
    ----------
    matrix : numpy.ndarray
        Square integer counts from :func:`confusion_matrix`.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``matrix`` is not a ``(K, K)`` array with ``K = len(CLASSES)``.

    Examples
    --------
    >>> fig = figure_confusion(np.eye(8, dtype=int) * 5)
    >>> fig.data[0].type
    'heatmap'
    """
    import plotly.graph_objects as go

    from . import viz

    k = len(CLASSES)
    matrix = _check.as_array(matrix, "matrix")
    if matrix.shape != (k, k):
        raise ValueError(f"matrix must have shape ({k}, {k}), got {matrix.shape}")
    rows = matrix.sum(axis=1, keepdims=True)
    share = matrix / np.maximum(rows, 1)  # colour by the share of each true class
    fig = go.Figure(go.Heatmap(
        z=share, x=list(CLASSES), y=list(CLASSES), text=matrix, texttemplate="%{text}",
        colorscale=[[0, "#ffffff"], [0.05, "#cfe3f2"], [1, viz.PALETTE[0]]], zmin=0, zmax=1,
        colorbar=dict(title="share of row", tickformat=".0%"),
        hovertemplate="true %{y}<br>predicted %{x}<br>%{text} images<extra></extra>"))
    fig.update_xaxes(title="predicted class", tickangle=-30)
    fig.update_yaxes(title="true class", autorange="reversed")
    return viz.style(fig, height=520, title=title)


def figure_cost(net: CameraNet, *, title: str | None = None) -> Any:
    """Where CameraNet's work and weights are: each layer's share of MACs and of parameters.

    Parameters
    ----------
    net : CameraNet
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        Two bar series over the layers that do multiply–accumulates
        (convolutions and ``fc``).

    Raises
    ------
    TypeError
        If ``net`` is not a CameraNet.

    Examples
    --------
    >>> fig = figure_cost(CameraNet.pretrained())
    >>> [t.name for t in fig.data]
    ['share of MACs', 'share of parameters']
    """
    import plotly.graph_objects as go

    from . import viz

    rows = [r for r in summary(net) if r["macs"] > 0]
    macs = np.array([r["macs"] for r in rows], dtype=float)
    params = np.array([r["params"] for r in rows], dtype=float)
    names = [r["layer"] for r in rows]
    fig = go.Figure([
        go.Bar(x=names, y=macs / macs.sum(), name="share of MACs", marker_color=viz.PALETTE[0],
               customdata=macs, hovertemplate="%{x}: %{customdata:,.0f} MACs (%{y:.1%})<extra></extra>"),
        go.Bar(x=names, y=params / params.sum(), name="share of parameters", marker_color=viz.PALETTE[1],
               customdata=params, hovertemplate="%{x}: %{customdata:,.0f} weights (%{y:.1%})<extra></extra>"),
    ])
    fig.update_layout(barmode="group", legend=dict(x=0.01, y=0.99))
    fig.update_yaxes(title="share of the network", tickformat=".0%")
    fig.update_xaxes(title="layer")
    return viz.style(fig, height=400, title=title)


def _png_data_uri(rgb: np.ndarray) -> str:
    """Encode an (H, W, 3) uint8 image as a PNG ``data:`` URI (stdlib only)."""
    import base64

    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))  # filter type 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure_samples(images: np.ndarray, labels: np.ndarray, *, predictions: np.ndarray | None = None,
                   cols: int = 8, title: str | None = None) -> Any:
    """A grid of images with their class names (and predictions, if given).

    Parameters
    ----------
    images : numpy.ndarray
        float32 ``(n, 3, H, W)`` with values in [0, 1] (1 <= n <= 64).
    labels : numpy.ndarray
        Integer labels, shape ``(n,)``.
    predictions : numpy.ndarray, optional
        Predicted labels; a wrong one is shown in red as "→ predicted".
    cols : int
        Images per row.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If the arrays have the wrong type or shape.

    Examples
    --------
    >>> fig = figure_samples(*shapes_dataset(8, seed=0), cols=4)
    >>> len(fig.data), len(fig.layout.annotations)
    (1, 8)
    """
    import plotly.graph_objects as go

    from . import viz

    images = _check.as_array(images, "images")
    if images.ndim != 4 or images.shape[1] != 3 or not 1 <= len(images) <= 64:
        raise ValueError(f"images must have shape (n, 3, H, W) with 1 <= n <= 64, got {images.shape}")
    labels = _check.as_array(labels, "labels")
    if labels.shape != (len(images),):
        raise ValueError(f"labels must have shape ({len(images)},), got {labels.shape}")
    if predictions is not None and _check.as_array(predictions, "predictions").shape != labels.shape:
        raise ValueError(f"predictions must have shape {labels.shape}, got {predictions.shape}")
    cols = min(_check.integer(cols, "cols", minimum=1), len(images))
    n, _, h, w = images.shape
    rows = -(-n // cols)
    gap, label_space = 2, 10  # pixels between tiles, and under each tile for its name
    cell_w, cell_h = w + gap, h + label_space
    mosaic = np.full((rows * cell_h, cols * cell_w - gap, 3), 255, np.uint8)
    annotations = []
    for i in range(n):
        r, c = divmod(i, cols)
        tile = np.clip(images[i].transpose(1, 2, 0), 0, 1)
        mosaic[r * cell_h:r * cell_h + h, c * cell_w:c * cell_w + w] = np.round(tile * 255).astype(np.uint8)
        text, color = CLASSES[labels[i]], "#222"
        if predictions is not None and predictions[i] != labels[i]:
            text, color = f"{CLASSES[labels[i]]} → {CLASSES[predictions[i]]}", viz.PALETTE[3]
        annotations.append(dict(x=c * cell_w + w / 2, y=r * cell_h + h + 0.5, text=text, showarrow=False,
                                yanchor="top", font=dict(size=10, color=color), xref="x", yref="y"))
    fig = go.Figure(go.Image(source=_png_data_uri(mosaic), hoverinfo="skip"))
    fig.update_layout(annotations=annotations)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return viz.style(fig, height=int(110 + 95 * rows), title=title)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m npukit.models [--out PATH]``: re-train with :data:`TRAIN_CALL` and write the weights.

    Prints one line per epoch, then the training time and the held-out
    accuracy. ``make weights`` runs it to rewrite the shipped file.

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status, 0.

    Examples
    --------
    >>> main(["--out", "/tmp/cameranet.npz"])  # doctest: +SKIP
    npukit.models: train(epochs=8, ...)
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m npukit.models",
                                     description="Re-train CameraNet with TRAIN_CALL and write its weights.")
    parser.add_argument("--out", default=str(WEIGHTS_PATH), help=f"where to write (default: {WEIGHTS_PATH})")
    args = parser.parse_args(argv)
    print(f"npukit.models: {TRAIN_CALL}", flush=True)
    start = time.perf_counter()
    net = reproduce(log=lambda line: print(line, flush=True))
    seconds = time.perf_counter() - start
    net.save(args.out, train_call=TRAIN_CALL)
    held_out = accuracy(net, *shapes_dataset(2000, seed=HELDOUT_SEED))
    print(f"trained in {seconds:.1f} s; held-out accuracy {held_out:.2%}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
