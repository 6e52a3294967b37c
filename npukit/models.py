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
``python -m npukit.train`` — ``make weights`` — re-trains and rewrites the
file, byte for byte the same when the weights come out the same).

Inside the NumPy forward pass activations are kept channels-last (NHWC), because
then a 1×1 convolution is a single matrix multiply; the public interface and the
ONNX graph are channels-first (NCHW), like the input images.

See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).
"""

from __future__ import annotations

import json
import math
import pathlib
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import _check
from ._arith import conv_out_size
from .data import CLASSES

__all__ = [
    "WEIGHTS_PATH",
    "Layer",
    "CameraNet",
    "summary",
    "summary_table",
]


#: Where :meth:`CameraNet.pretrained` reads the shipped weights.
WEIGHTS_PATH = pathlib.Path(__file__).parent / "data" / "cameranet.npz"

BN_EPSILON = 1e-5  # ONNX BatchNormalization's default epsilon
BN_MOMENTUM = 0.1  # weight of the new batch in the running statistics

# ---------------------------------------------------------------------------
# The data: procedurally drawn shapes
# ---------------------------------------------------------------------------


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

    @property
    def kind(self) -> str:
        """``"depthwise"``, ``"pointwise"`` or ``"dense"`` for a Conv; the ONNX op type otherwise."""
        if self.op != "Conv":
            return self.op
        return "depthwise" if self.groups > 1 else ("pointwise" if self.kernel == 1 else "dense")


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


def _conv_forward(x: np.ndarray, w: np.ndarray, layer: Layer):
    """Convolution with 'same' padding; ``w`` has the ONNX layout (Cout, Cin/groups, k, k)."""
    n, h, wd, cin = x.shape
    k, s = layer.kernel, layer.stride
    if k == 1:  # pointwise: one matrix multiply over all N·H·W pixels
        y = x.reshape(-1, cin) @ w[:, :, 0, 0].T
        return y.reshape(n, h, wd, -1), (x, w)
    ho, wo = conv_out_size(h, k, s, k // 2, k // 2), conv_out_size(wd, k, s, k // 2, k // 2)
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
    >>> from npukit.data import shapes_dataset
    >>> net = CameraNet.pretrained()
    >>> images, labels = shapes_dataset(8, seed=1)
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
        >>> from npukit.data import shapes_dataset
        >>> net = CameraNet.load(WEIGHTS_PATH)
        >>> from npukit.train import TRAIN_CALL
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
        >>> from npukit.data import shapes_dataset
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
        >>> from npukit.data import shapes_dataset
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
        >>> from npukit.data import shapes_dataset
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


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------


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
        Keys ``layer`` (= ONNX node name), ``op`` (ONNX operator), ``kind``
        (:attr:`Layer.kind`: ``"pointwise"`` … for a Conv), ``detail`` (for reading),
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
            h = conv_out_size(shape[2], layer.kernel, layer.stride, layer.kernel // 2, layer.kernel // 2)
            w = conv_out_size(shape[3], layer.kernel, layer.stride, layer.kernel // 2, layer.kernel // 2)
            out = (batch, layer.cout, h, w)
            params = net.params[f"{layer.name}.weight"].size
            macs = batch * h * w * layer.cout * (layer.cin // layer.groups) * layer.kernel ** 2
            detail = f"{layer.kind} {layer.kernel}×{layer.kernel}, stride {layer.stride}, {layer.cin}→{layer.cout}"
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
        rows.append({"layer": layer.name, "op": layer.op, "kind": layer.kind, "detail": detail, "input": shape,
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
