"""CameraNet, the course's running example: a NumPy network and its ONNX export.

A smart camera has to say what it sees. ``CameraNet`` is a small CNN that does
this for the 32×32 RGB images of :mod:`npukit.data`, in plain NumPy, so every
later chapter works with a model that has real weights, real activation
statistics and a real accuracy (it is trained by :mod:`npukit.train`).

The invariant this module keeps: **one model, three executions, one answer.**
The NumPy forward pass (``net(images)``), the ONNX graph of :func:`to_onnx` run
by ``onnx.reference`` and the same graph compiled by OpenVINO in float32 give
the same logits to within 1e-5, and every ONNX node and initializer is named
after the layer it came from (``stem.conv``, ``block1.dw``, ``block1.pw_bn``,
``fc`` …), so a later chapter can map any node back to the layer here.

Here: the layers (:class:`Layer`), the network (:class:`CameraNet`:
construction, forward, backward, save and load), the ONNX export
(:func:`to_onnx`) and the per-layer table (:func:`summary`). Each operator's
math is in ``npukit/_layers.py``, channels-last (NHWC, where a 1×1 convolution
is one matrix multiply); the interface and the ONNX graph are NCHW.

See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import _check, _layers
from ._arith import conv_out_size
from ._layers import BN_EPSILON  # noqa: F401  (models.BN_EPSILON, quoted in the instructor guide)
from .data import CLASSES

if TYPE_CHECKING:
    import onnx
    from IPython.display import HTML

__all__ = [
    "WEIGHTS_PATH",
    "Layer",
    "CameraNet",
    "to_onnx",
    "summary",
    "summary_table",
]


#: Where :meth:`CameraNet.pretrained` reads the shipped weights.
WEIGHTS_PATH = pathlib.Path(__file__).parent / "data" / "cameranet.npz"

_OPS = ("Conv", "BatchNormalization", "Relu", "GlobalAveragePool", "Flatten", "Gemm")
_MIN_OPSET = 17

# ---------------------------------------------------------------------------
# The layers
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """One layer of CameraNet; ``name`` is also its ONNX node's name.

    ``op`` is the ONNX operator type; ``kernel``, ``stride`` and ``groups``
    matter only for ``Conv`` (``groups == cin`` is a depthwise convolution).
    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Raises
    ------
    TypeError, ValueError
        If ``name`` is not a non-empty string, ``op`` is not one of CameraNet's
        operators, a size is not a positive integer or ``groups`` does not
        divide ``cin`` and ``cout``.

    Examples
    --------
    >>> Layer("block1.dw", "Conv", 16, 16, kernel=3, groups=16).kind
    'depthwise'
    """

    name: str
    op: str
    cin: int
    cout: int
    kernel: int = 1
    stride: int = 1
    groups: int = 1

    def __post_init__(self) -> None:
        if not _check.text(self.name, "name"):
            raise ValueError("name must not be empty")
        _check.one_of(self.op, "op", _OPS)
        for field in ("cin", "cout", "kernel", "stride", "groups"):
            _check.integer(getattr(self, field), field, minimum=1)
        if self.cin % self.groups or self.cout % self.groups:
            raise ValueError(f"groups must divide cin and cout, got groups={self.groups}, "
                             f"cin={self.cin}, cout={self.cout}")

    @property
    def kind(self) -> str:
        """``"depthwise"``, ``"pointwise"`` or ``"dense"`` for a Conv; the ONNX op type otherwise."""
        if self.op != "Conv":
            return self.op
        return "depthwise" if self.groups > 1 else ("pointwise" if self.kernel == 1 else "dense")


def _build_layers(stem: int, blocks: Sequence[tuple[int, int]], num_classes: int) -> tuple[Layer, ...]:
    """CameraNet's layers, in execution order."""
    out = [Layer("stem.conv", "Conv", 3, stem, kernel=3, stride=2),
           Layer("stem.bn", "BatchNormalization", stem, stem), Layer("stem.relu", "Relu", stem, stem)]
    c = stem
    for i, (width, stride) in enumerate(blocks, start=1):
        b = f"block{i}"
        out += [Layer(f"{b}.dw", "Conv", c, c, kernel=3, stride=stride, groups=c),
                Layer(f"{b}.dw_bn", "BatchNormalization", c, c), Layer(f"{b}.dw_relu", "Relu", c, c),
                Layer(f"{b}.pw", "Conv", c, width), Layer(f"{b}.pw_bn", "BatchNormalization", width, width),
                Layer(f"{b}.pw_relu", "Relu", width, width)]
        c = width
    out += [Layer("pool", "GlobalAveragePool", c, c), Layer("flatten", "Flatten", c, c),
            Layer("fc", "Gemm", c, num_classes)]
    return tuple(out)


#: The most channels a CameraNet layer may have: 16 × the widest shipped block (a width of 10**12 is a typo).
MAX_CHANNELS = 4096


def _check_blocks(blocks: Any) -> tuple[tuple[int, int], ...]:
    """``blocks`` as a tuple of (width, stride) int pairs, or a clear error naming the bad entry."""
    blocks = _check.sequence(blocks, "blocks", min_length=1)
    if len(blocks) > 64:
        raise ValueError(f"blocks must have at most 64 blocks, got {len(blocks)}")
    out = []
    for i, block in enumerate(blocks):
        if isinstance(block, (str, bytes)) or not isinstance(block, (list, tuple)) or len(block) != 2:
            raise TypeError(f"blocks[{i}] must be a (width, stride) pair, got {block!r}")
        width = _check.integer(block[0], f"blocks[{i}] width", minimum=1, maximum=MAX_CHANNELS)
        stride = _check.integer(block[1], f"blocks[{i}] stride")
        if stride not in (1, 2):
            raise ValueError(f"blocks[{i}] must be (width >= 1, stride 1 or 2), got {(width, stride)}")
        out.append((width, stride))
    return tuple(out)


def _check_images(images: Any, size: int, name: str = "images", dtypes: tuple = (np.float32,)) -> np.ndarray:
    images = _check.as_array(images, name)
    if images.ndim != 4 or images.shape[1:] != (3, size, size):
        raise ValueError(f"{name} must have shape (n, 3, {size}, {size}) (NCHW RGB), got {images.shape}")
    if images.dtype not in dtypes:
        want = " or ".join(np.dtype(d).name for d in dtypes)
        raise TypeError(f"{name} must have dtype {want}, got {images.dtype}")
    return _check.finite(images, name)


# ---------------------------------------------------------------------------
# The network
# ---------------------------------------------------------------------------


class CameraNet:
    """A small CNN for 32×32 RGB images, in NumPy, forward and backward.

    ``stem.conv`` (3×3, stride 2) + BN + ReLU, then depthwise-separable blocks
    (depthwise 3×3 + BN + ReLU, pointwise 1×1 + BN + ReLU), a global average
    pool and a fully connected layer to the classes. Convolutions have no bias:
    the BatchNormalization after each one supplies it. Every method that takes
    ``images`` wants a finite float32 NumPy array of shape ``(n, 3, size, size)``
    (NCHW RGB) and raises ``TypeError``/``ValueError`` naming ``images`` for
    anything else. See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    stem : int
        Channels out of the stem convolution.
    blocks : sequence of (width, stride)
        One depthwise-separable block per pair (at least one): its output
        channels and the stride of its depthwise convolution (1 or 2).
    num_classes : int
        Outputs of the classifier (>= 2).
    size : int
        Input height and width (>= 4).
    seed : int
        Seed of the He-normal weight initialisation.

    Attributes
    ----------
    layers : tuple of Layer
        The layers in execution order; their names are the ONNX node names.
    params : dict of str to numpy.ndarray
        Every stored float32 array, keyed ``"<layer>.<role>"`` (the ONNX
        initializer names): ``weight`` for convolutions and ``fc`` (plus
        ``fc.bias``); ``scale``, ``bias``, ``mean``, ``var`` for BN.
    train_call : str or None
        The training call stored with loaded weights.

    Raises
    ------
    TypeError, ValueError
        If an argument is not an integer in range, or ``blocks`` is not a
        non-empty sequence of (int width >= 1, stride 1 or 2) pairs.

    Examples
    --------
    >>> from npukit.data import shapes_dataset
    >>> net = CameraNet.pretrained()
    >>> logits = net(shapes_dataset(8, seed=1)[0])
    >>> logits.shape, logits.dtype
    ((8, 8), dtype('float32'))
    >>> [layer.name for layer in net.layers[:4]]
    ['stem.conv', 'stem.bn', 'stem.relu', 'block1.dw']
    """

    TRAINABLE = ("weight", "scale", "bias")

    def __init__(self, *, stem: int = 16, blocks: Sequence[tuple[int, int]] = ((32, 1), (64, 2), (128, 2)),
                 num_classes: int = len(CLASSES), size: int = 32, seed: int = 0) -> None:
        stem = _check.integer(stem, "stem", minimum=1, maximum=MAX_CHANNELS)
        blocks = _check_blocks(blocks)
        num_classes = _check.integer(num_classes, "num_classes", minimum=2, maximum=100_000)
        self.size = _check.integer(size, "size", minimum=4, maximum=1024)
        seed = _check.integer(seed, "seed", minimum=0)
        self.config = {"stem": stem, "blocks": [list(b) for b in blocks], "num_classes": num_classes, "size": self.size}
        self.layers = _build_layers(stem, blocks, num_classes)
        self.params = _layers.init_params(self.layers, seed)
        self._caches: list | None = None
        self._train_shape: tuple[int, ...] | None = None  # logits shape of the last training pass
        self.train_call: str | None = None  # set by load() from the file

    def __repr__(self) -> str:
        c = self.config
        return (f"CameraNet(stem={c['stem']}, blocks={[tuple(b) for b in c['blocks']]}, "
                f"num_classes={c['num_classes']}, size={c['size']})")

    # -- loading and saving ---------------------------------------------------

    @classmethod
    def pretrained(cls) -> CameraNet:
        """The trained CameraNet shipped with npukit (:data:`WEIGHTS_PATH`), a fresh copy each call.

        Examples
        --------
        >>> CameraNet.pretrained().params["stem.conv.weight"].shape
        (16, 3, 3, 3)
        """
        return cls.load(WEIGHTS_PATH)

    @classmethod
    def load(cls, path: str | pathlib.Path) -> CameraNet:
        """Read a CameraNet written by :meth:`save`; ``train_call`` comes from the file (or is ``None``).

        Parameters
        ----------
        path : str or pathlib.Path
            An ``.npz`` file with the arrays of ``params``, the architecture
            (``__config__``) and optionally the training call (``__train_call__``).

        Raises
        ------
        TypeError
            If ``path`` is not a str or path.
        FileNotFoundError
            If there is no such file.
        ValueError
            If ``path`` is a directory or not a CameraNet ``.npz``: not a zip
            of arrays, no architecture, or an array missing or misshapen.

        Examples
        --------
        >>> from npukit.train import TRAIN_CALL
        >>> CameraNet.load(WEIGHTS_PATH).train_call == TRAIN_CALL
        True
        """
        arrays = _read_npz(_check.path(path, "path"))
        try:
            config = json.loads(str(arrays["__config__"]))
            net = cls(**{k: config[k] for k in ("stem", "blocks", "num_classes", "size")})
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"path {str(path)!r} holds no valid CameraNet architecture (__config__): {exc}") from exc
        for key, want in net.params.items():
            if key not in arrays:
                raise ValueError(f"path {str(path)!r} lacks the array {key!r}")
            if arrays[key].shape != want.shape or arrays[key].dtype.kind != "f":
                raise ValueError(f"path {str(path)!r}: {key} has shape {arrays[key].shape} and dtype "
                                 f"{arrays[key].dtype}, expected float {want.shape}")
            net.params[key] = arrays[key].astype(np.float32)
        net.train_call = str(arrays["__train_call__"]) if "__train_call__" in arrays else None
        return net

    def save(self, path: str | pathlib.Path, train_call: str | None = None) -> None:
        """Write the weights, the architecture and (optionally) the training call to an ``.npz``.

        Unlike ``np.savez_compressed`` every member gets the same date, so the
        same weights always give the same bytes (a re-training that reproduces
        them leaves no diff in git).

        Parameters
        ----------
        path : str or pathlib.Path
            Where to write (overwritten).
        train_call : str, optional
            The call that produced the weights, stored for :meth:`load`.

        Raises
        ------
        TypeError
            If ``path`` is not a str or path, or ``train_call`` not a str.
        ValueError, FileNotFoundError
            If ``path`` is a directory, or its folder does not exist.

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

        path = _check.path(path, "path")
        train_call = _check.text(train_call, "train_call", optional=True)
        if path.is_dir():
            raise ValueError(f"path must name a file, got the directory {str(path)!r}")
        if not path.parent.is_dir():
            raise FileNotFoundError(f"path {str(path)!r}: its folder does not exist")
        arrays = dict(self.params, __config__=np.array(json.dumps(self.config)))
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
        """float32 logits ``(n, num_classes)`` in inference mode (BN uses running statistics).

        ``argmax(axis=1)`` is the predicted label. Bad ``images`` (see the
        class) raise ``TypeError`` or ``ValueError``.

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
        """Every layer's output for ``images`` (inference mode), keyed by layer name, in execution order.

        Feature maps are returned NCHW, like the ONNX tensors of the same names
        (the last one, ``fc``, is the logits). Bad ``images`` raise as for
        calling the network.

        Examples
        --------
        >>> acts = CameraNet.pretrained().activations(np.zeros((1, 3, 32, 32), np.float32))
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
            As for the class, or float64 (with float64 ``params``, a float64
            network for gradient checks); at least one in training mode.
        train : bool
            Training mode.

        Returns
        -------
        numpy.ndarray
            Logits ``(n, num_classes)`` in the images' precision.

        Raises
        ------
        TypeError, ValueError
            For bad ``images``, a non-bool ``train``, or no images in training mode.

        Examples
        --------
        >>> from npukit.data import shapes_dataset
        >>> net, images = CameraNet.pretrained(), shapes_dataset(4, seed=0)[0]
        >>> bool(np.array_equal(net.forward(images), net(images)))
        True
        """
        images = _check_images(images, self.size, dtypes=(np.float32, np.float64))
        if _check.boolean(train, "train") and len(images) == 0:
            raise ValueError("images must hold at least one image in training mode (BN needs batch statistics)")
        logits, _ = self._run(images, train=train)
        return logits

    def _run(self, images: np.ndarray, *, train: bool, record: bool = False):
        x = images.transpose(0, 2, 3, 1)  # NCHW -> NHWC, a view
        caches, outputs = [], {}
        for layer in self.layers:
            x, cache = _layers.forward(layer, x, self.params, train)
            caches.append(cache)
            if record:
                outputs[layer.name] = x
        self._caches = caches if train else None
        self._train_shape = x.shape if train else None
        return x, outputs

    def backward(self, d_logits: np.ndarray) -> dict[str, np.ndarray]:
        """Gradients of a scalar loss, given its gradient with respect to the
        logits of the last ``forward(..., train=True)``.

        Parameters
        ----------
        d_logits : numpy.ndarray
            d loss / d logits: finite floats of the shape of those logits.

        Returns
        -------
        dict
            One entry per trainable parameter (same keys as ``params``) and
            ``"image"``, the gradient with respect to the input (NCHW).

        Raises
        ------
        RuntimeError
            If no training-mode forward pass came before.
        TypeError, ValueError
            If ``d_logits`` is not a finite float array of that shape.

        Examples
        --------
        >>> from npukit.data import shapes_dataset
        >>> net = CameraNet(stem=4, blocks=[(8, 2)])
        >>> logits = net.forward(shapes_dataset(2, seed=0)[0], train=True)
        >>> grads = net.backward(np.ones_like(logits))
        >>> grads["image"].shape, grads["fc.bias"].tolist()
        ((2, 3, 32, 32), [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0])
        """
        d_logits = _check.as_array(d_logits, "d_logits")
        if self._caches is None:
            raise RuntimeError("backward needs a preceding forward(images, train=True)")
        if d_logits.dtype.kind != "f":
            raise TypeError(f"d_logits must be a float array, got dtype {d_logits.dtype}")
        if d_logits.shape != self._train_shape:
            raise ValueError(f"d_logits must have the shape of the last training pass's logits, "
                             f"{self._train_shape}, got {d_logits.shape}")
        grads: dict[str, np.ndarray] = {}
        dx = _check.finite(d_logits, "d_logits")
        for layer, cache in zip(reversed(self.layers), reversed(self._caches)):
            dx = _layers.backward(layer, dx, cache, self.params, grads)
        grads["image"] = dx.transpose(0, 3, 1, 2)
        return grads

    def trainable(self) -> list[str]:
        """Names (keys of ``params``) of the trainable parameters; BN running statistics are not.

        Examples
        --------
        >>> CameraNet(stem=4, blocks=[(8, 2)]).trainable()[:4]
        ['stem.conv.weight', 'stem.bn.scale', 'stem.bn.bias', 'block1.dw.weight']
        """
        return [k for k in self.params if k.rsplit(".", 1)[1] in self.TRAINABLE]

    def to_onnx(self, batch: int | str | None = None, *, opset: int = _MIN_OPSET) -> onnx.ModelProto:
        """This network as an ONNX model: :func:`to_onnx` (see there).

        Examples
        --------
        >>> CameraNet.pretrained().to_onnx().graph.node[0].name
        'stem.conv'
        """
        return to_onnx(self, batch, opset=opset)


def _read_npz(path: pathlib.Path) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file, or a clear error saying why ``path`` is not one."""
    import zipfile

    if path.is_dir():
        raise ValueError(f"path must be a CameraNet .npz file, got the directory {str(path)!r}")
    if not path.exists():
        raise FileNotFoundError(f"path {str(path)!r} does not exist (CameraNet.save writes such a file)")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"path {str(path)!r} is not an .npz file written by CameraNet.save (not a zip archive)")
    try:
        with np.load(path, allow_pickle=False) as f:
            return {key: f[key] for key in f.files}
    except (OSError, ValueError, EOFError, AttributeError, zipfile.BadZipFile) as exc:
        raise ValueError(f"path {str(path)!r} is not an .npz file written by CameraNet.save ({exc})") from exc


# ---------------------------------------------------------------------------
# The ONNX export
# ---------------------------------------------------------------------------


def _onnx_batch(batch: Any) -> int | str:
    if batch is None:
        return 1
    if isinstance(batch, str):
        if not batch.isidentifier():
            raise ValueError(f"batch must be an int or a dimension name such as 'N', got {batch!r}")
        return batch
    return _check.integer(batch, "batch", minimum=1)


def to_onnx(net: CameraNet, batch: int | str | None = None, *, opset: int = _MIN_OPSET) -> onnx.ModelProto:
    """Export a CameraNet as an ONNX model built with ``onnx.helper``.

    One input ``"image"`` (float32, NCHW), one output ``"logits"``. Every
    layer is one node named like the layer, whose output tensor has the same
    name (the last is ``"logits"``); weights are initializers named like the
    keys of ``params``. BatchNormalization stays a separate node after each
    convolution (chapter 3 folds it). See chapter 0, "Meet CameraNet"
    (chapters/00_cameranet.md).

    Parameters
    ----------
    net : CameraNet
    batch : int, str or None
        The batch dimension: ``None`` (default) for 1, an int for another
        static batch, a string for a symbolic (dynamic) dimension of that name.
    opset : int
        ONNX opset version, from 17 to the newest the installed ``onnx``
        knows (``onnx.defs.onnx_opset_version()``).

    Returns
    -------
    onnx.ModelProto
        A model that passes ``onnx.checker.check_model``.

    Raises
    ------
    TypeError
        If ``net`` is not a CameraNet, or ``batch`` or ``opset`` has the wrong type.
    ValueError
        If ``batch`` < 1 or is not a dimension name, ``opset`` is outside
        17 … the newest known, or a weight is not finite.

    Examples
    --------
    >>> import onnx
    >>> model = to_onnx(CameraNet.pretrained())
    >>> onnx.checker.check_model(model)
    >>> [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    [1, 3, 32, 32]
    >>> [n.name for n in model.graph.node][:3]
    ['stem.conv', 'stem.bn', 'stem.relu']
    >>> to_onnx(CameraNet.pretrained(), batch=0)
    Traceback (most recent call last):
    ...
    ValueError: batch must be >= 1, got 0
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    _check.instance(net, "net", CameraNet)
    batch = _onnx_batch(batch)
    opset, newest = _check.integer(opset, "opset"), onnx.defs.onnx_opset_version()
    if not _MIN_OPSET <= opset <= newest:
        raise ValueError(f"opset must be in {_MIN_OPSET}..{newest} (the opsets this onnx knows), got {opset}")
    for key, value in net.params.items():
        _check.finite(value, f"params[{key!r}]")
    nodes, inits, prev = [], [], "image"
    for layer in net.layers:
        out = "logits" if layer is net.layers[-1] else layer.name
        node, keys = _layers.onnx_node(layer, prev, out)
        nodes.append(node)
        inits += [numpy_helper.from_array(net.params[key].astype(np.float32), key) for key in keys]
        prev = out
    classes = net.layers[-1].cout
    image = helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, 3, net.size, net.size])
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, classes])
    graph = helper.make_graph(nodes, "CameraNet", [image], [logits], initializer=inits,
                              doc_string="CameraNet from npukit.models; input: RGB in [0, 1], NCHW")
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="npukit", producer_version="0.1.0",
                              ir_version=max(8, helper.find_min_ir_version_for(opsets)))
    helper.set_model_props(model, {"classes": json.dumps(list(CLASSES[:classes]))})
    onnx.checker.check_model(model)
    return model


# ---------------------------------------------------------------------------
# The per-layer table
# ---------------------------------------------------------------------------


def _summary_row(layer: Layer, shape: tuple[int, ...], net: CameraNet) -> dict[str, Any]:
    """One :func:`summary` record: ``layer`` applied to an input of NCHW ``shape``."""
    batch, params, macs = shape[0], 0, 0
    if layer.op == "Conv":
        h, w = (conv_out_size(d, layer.kernel, layer.stride, layer.kernel // 2, layer.kernel // 2) for d in shape[2:])
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
        out, params, macs = (batch, layer.cout), layer.cin * layer.cout + layer.cout, batch * layer.cin * layer.cout
        detail = f"fully connected, {layer.cin}→{layer.cout}"
    return {"layer": layer.name, "op": layer.op, "kind": layer.kind, "detail": detail, "input": shape,
            "output": out, "params": int(params), "macs": int(macs)}


def summary(net: CameraNet, batch: int = 1) -> list[dict[str, Any]]:
    """One record per layer: what it is, its shapes, parameters and MACs.

    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    net : CameraNet
    batch : int
        Batch size for the shapes and the MACs (>= 1).

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
    TypeError, ValueError
        If ``net`` is not a CameraNet or ``batch`` not a positive integer.

    Examples
    --------
    >>> rows = summary(CameraNet.pretrained())
    >>> rows[0]["layer"], rows[0]["input"], rows[0]["output"], rows[0]["macs"]
    ('stem.conv', (1, 3, 32, 32), (1, 16, 16, 16), 110592)
    >>> sum(r["macs"] for r in rows)
    569344
    """
    _check.instance(net, "net", CameraNet)
    batch = _check.integer(batch, "batch", minimum=1)
    shape: tuple[int, ...] = (batch, 3, net.size, net.size)
    rows = []
    for layer in net.layers:
        rows.append(_summary_row(layer, shape, net))
        shape = rows[-1]["output"]
    return rows


def summary_table(net: CameraNet, batch: int = 1) -> HTML:
    """:func:`summary` (same arguments, same errors) as an HTML table (``npukit.viz.table``), with a total row.

    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

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
