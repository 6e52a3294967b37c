"""The term project's two worked examples: small networks with residual connections, trained with NumPy.

The invariant: **one program, three executions, one answer** (as for
CameraNet). An :class:`ExampleNet` is a list of :class:`npukit.models.Layer`
steps and residual steps; its NumPy forward pass, its ONNX graph run by
``onnx.reference`` and the same graph compiled by OpenVINO give the same
logits, and its backward pass gives the gradients finite differences give.

Here: :data:`EXAMPLES` (a MobileNetV2-style network of inverted residual
blocks and a ResNet-style network of basic blocks, Sandler et al. 2018 and
He et al. 2016, both for 32×32 images of :mod:`npukit.data`),
:class:`ExampleNet`, :func:`train_example` (how the shipped weights were made)
and :func:`example` (the shipped weights). They feed
:func:`npukit.project.closed_loop` on the term project's page.

See "The term project" (chapters/project.md).
"""

from __future__ import annotations

import math
import pathlib
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _check, _layers
from .models import Layer

if TYPE_CHECKING:
    import onnx

__all__ = ["EXAMPLES", "ExampleNet", "example", "train_example"]

_MIN_OPSET = 17
_DATA = pathlib.Path(__file__).parent / "data"
# ---------------------------------------------------------------------------
# The two worked examples: NumPy networks with residual connections
# ---------------------------------------------------------------------------

#: A program step that is not a layer: "push" (remember x), "swap" (x ↔ the remembered),
#: ("add", name) (x + the remembered, an ONNX Add node of that name).
_Step = Any


def _cbr(name: str, cin: int, cout: int, k: int = 3, s: int = 1, groups: int = 1, relu: bool = True) -> list:
    out = [Layer(f"{name}.conv", "Conv", cin, cout, kernel=k, stride=s, groups=groups),
           Layer(f"{name}.bn", "BatchNormalization", cout, cout)]
    return out + ([Layer(f"{name}.relu", "Relu", cout, cout)] if relu else [])


def _inverted(name: str, cin: int, cout: int, stride: int, expand: int = 3) -> list:
    """MobileNetV2's inverted residual: 1×1 expand, 3×3 depthwise, 1×1 linear projection, Add when shapes match."""
    mid = cin * expand
    body = (_cbr(f"{name}.expand", cin, mid, 1) + _cbr(f"{name}.dw", mid, mid, 3, stride, mid)
            + _cbr(f"{name}.project", mid, cout, 1, relu=False))
    return ["push", *body, ("add", f"{name}.add")] if stride == 1 and cin == cout else body


def _basic(name: str, cin: int, cout: int, stride: int) -> list:
    """ResNet's basic block: two 3×3 convolutions, a shortcut (1×1 projection when the shape changes), Add, ReLU."""
    body = _cbr(f"{name}.a", cin, cout, 3, stride) + _cbr(f"{name}.b", cout, cout, 3, relu=False)
    short = ["swap", *_cbr(f"{name}.short", cin, cout, 1, stride, relu=False)] if stride > 1 or cin != cout else []
    return ["push", *body, *short, ("add", f"{name}.add"), Layer(f"{name}.relu", "Relu", cout, cout)]


def _head(cin: int, classes: int) -> list:
    return [Layer("pool", "GlobalAveragePool", cin, cin), Layer("flatten", "Flatten", cin, cin),
            Layer("fc", "Gemm", cin, classes)]


#: The worked examples' architectures (8 classes, 32×32 RGB images).
EXAMPLES: dict[str, list] = {
    "mobilenet": (_cbr("stem", 3, 8, 3, 2) + _inverted("b1", 8, 16, 2) + _inverted("b2", 16, 16, 1)
                  + _inverted("b3", 16, 32, 2) + _inverted("b4", 32, 32, 1) + _head(32, 8)),
    "resnet": (_cbr("stem", 3, 16, 3, 2) + _basic("b1", 16, 16, 1) + _basic("b2", 16, 32, 2)
               + _basic("b3", 32, 32, 1) + _head(32, 8)),
}


def _pointwise(layer: Layer) -> bool:
    return layer.op == "Conv" and layer.kernel == 1 and layer.stride > 1


def _strided_forward(layer: Layer, x: np.ndarray, p: dict, train: bool) -> tuple:
    """``_layers.forward``, and a strided 1×1 convolution (a shortcut) as every ``stride``-th pixel, then 1×1."""
    if not _pointwise(layer):
        return _layers.forward(layer, x, p, train)
    s = layer.stride
    y, cache = _layers.forward(Layer(layer.name, "Conv", layer.cin, layer.cout), x[:, ::s, ::s], p, train)
    return y, (cache, x.shape)


def _strided_backward(layer: Layer, dy: np.ndarray, cache: Any, p: dict, grads: dict) -> np.ndarray:
    if not _pointwise(layer):
        return _layers.backward(layer, dy, cache, p, grads)
    inner, shape = cache
    dsub = _layers.backward(Layer(layer.name, "Conv", layer.cin, layer.cout), dy, inner, p, grads)
    dx = np.zeros(shape, dy.dtype)
    dx[:, ::layer.stride, ::layer.stride] = dsub
    return dx


class ExampleNet:
    """A small NumPy network given as a program of :class:`npukit.models.Layer` steps and residual steps.

    ``"push"`` remembers the current tensor, ``"swap"`` exchanges it with the
    remembered one (so a shortcut can be computed on the block's input), and
    ``("add", name)`` adds the remembered tensor back. Forward, backward and
    the ONNX export follow the program; each layer's math is CameraNet's
    (``npukit/_layers.py``, channels-last). See "The term project" (chapters/project.md).

    Raises
    ------
    TypeError, ValueError
        For a ``name`` that is not one of :data:`EXAMPLES` or a bad ``seed``.

    Examples
    --------
    >>> ExampleNet("vgg")
    Traceback (most recent call last):
    ...
    ValueError: name must be one of 'mobilenet', 'resnet'; got 'vgg'
    """

    size = 32

    def __init__(self, name: str, *, seed: int = 0) -> None:
        self.name = _check.one_of(_check.text(name, "name"), "name", tuple(EXAMPLES))
        self.program = EXAMPLES[self.name]
        self.layers = [s for s in self.program if isinstance(s, Layer)]
        self.params = _layers.init_params(self.layers, _check.integer(seed, "seed", minimum=0))

    def trainable(self) -> list[str]:
        return [k for k in self.params if k.rsplit(".", 1)[1] in ("weight", "scale", "bias")]

    def forward(self, images: np.ndarray, *, train: bool = False) -> np.ndarray:
        """Logits ``(n, 8)`` of NCHW float32 images; ``train=True`` uses batch statistics and keeps the caches."""
        images = _check.image_batch(images, "images")
        if images.shape[1:] != (3, self.size, self.size):
            raise ValueError(f"images must have shape (n, 3, {self.size}, {self.size}), got {images.shape}")
        x, stack, caches = images.transpose(0, 2, 3, 1), [], []
        for step in self.program:
            if isinstance(step, Layer):
                x, cache = _strided_forward(step, x, self.params, train)
                caches.append(cache)
            elif step == "push":
                stack.append(x)
            elif step == "swap":
                x, stack[-1] = stack[-1], x
            else:
                x = x + stack.pop()
        self._caches = caches if train else None
        return x

    __call__ = forward

    def backward(self, d_logits: np.ndarray) -> dict[str, np.ndarray]:
        """Gradients of the trainable parameters after ``forward(..., train=True)``."""
        if self._caches is None:
            raise RuntimeError("backward needs a preceding forward(images, train=True)")
        grads: dict[str, np.ndarray] = {}
        dx, stack, caches = d_logits, [], list(self._caches)
        for step in reversed(self.program):
            if isinstance(step, Layer):
                dx = _strided_backward(step, dx, caches.pop(), self.params, grads)
            elif step == "push":
                dx = dx + stack.pop()
            elif step == "swap":
                dx, stack[-1] = stack[-1], dx
            else:
                stack.append(dx)
        return grads

    def to_onnx(self) -> onnx.ModelProto:
        """The network as an ONNX model (opset 17, batch 1): input ``image``, output ``logits``."""
        import onnx
        from onnx import TensorProto, helper, numpy_helper

        nodes, inits, prev, stack = [], [], "image", []
        for step in self.program:
            if isinstance(step, Layer):
                out = "logits" if step is self.layers[-1] else step.name
                node, keys = _layers.onnx_node(step, prev, out)
                nodes.append(node)
                inits += [numpy_helper.from_array(self.params[k].astype(np.float32), k) for k in keys]
                prev = out
            elif step == "push":
                stack.append(prev)
            elif step == "swap":
                prev, stack[-1] = stack[-1], prev
            else:
                nodes.append(helper.make_node("Add", [stack.pop(), prev], [step[1]], name=step[1]))
                prev = step[1]
        graph = helper.make_graph(
            nodes, self.name, [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, self.layers[-1].cout])], inits)
        opsets = [helper.make_opsetid("", _MIN_OPSET)]
        model = helper.make_model(graph, opset_imports=opsets, producer_name="npukit.project", ir_version=8)
        onnx.checker.check_model(model)
        return model


def train_example(name: str, *, epochs: int = 3, n_train: int = 3000, batch: int = 50, lr: float = 0.02,
                  seed: int = 0, data_seed: int = 300) -> ExampleNet:
    """Train a worked example from scratch, deterministically (AdamW, cosine rate, as :func:`npukit.train.train`).

    The shipped weights (``npukit/data/project_<name>.npz``, read by
    :func:`example`) are this call's with its defaults. See "The term project"
    (chapters/project.md).

    Raises
    ------
    TypeError, ValueError
        For a bad ``name``, count, rate or seed.

    Examples
    --------
    >>> train_example("resnet", epochs=0)
    Traceback (most recent call last):
    ...
    ValueError: epochs must be >= 1, got 0
    """
    from .data import shapes_dataset
    from .train import _adamw_step, _cross_entropy

    epochs = _check.integer(epochs, "epochs", minimum=1, maximum=1000)
    batch = _check.integer(batch, "batch", minimum=2, maximum=4096)
    n_train = _check.integer(n_train, "n_train", minimum=batch, maximum=1_000_000)
    lr = _check.fraction(lr, "lr")
    data_seed = _check.integer(data_seed, "data_seed", minimum=0)
    net = ExampleNet(name, seed=seed)
    images, labels = shapes_dataset(n_train, seed=data_seed)
    moments = {k: (np.zeros_like(net.params[k]), np.zeros_like(net.params[k])) for k in net.trainable()}
    rng, steps = np.random.default_rng(seed), n_train // batch
    for epoch in range(epochs):
        order = rng.permutation(n_train)
        for s in range(steps):
            t = epoch * steps + s
            idx = order[s * batch:(s + 1) * batch]
            _, d_logits = _cross_entropy(net.forward(images[idx], train=True), labels[idx], 0.1)
            rate = lr * 0.5 * (1 + math.cos(math.pi * t / (epochs * steps)))
            _adamw_step(net, net.backward(d_logits), moments, t, rate, 1e-4)  # type: ignore[arg-type]
    return net


def example(name: str) -> ExampleNet:
    """A worked example with its shipped weights (:func:`train_example`'s, with its defaults).

    Examples
    --------
    >>> [n.op_type for n in example("resnet").to_onnx().graph.node].count("Add")
    3
    """
    net = ExampleNet(name)
    with np.load(_DATA / f"project_{net.name}.npz") as f:
        net.params = {k: f[k].astype(np.float32) for k in f.files}
    return net
