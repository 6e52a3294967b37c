"""Post-training quantization of a model: calibrate its activations, write it as an ONNX QDQ model.

The invariant this module teaches:

    *An activation's range is fixed once, from calibration data, and every
    later input is forced into it.* The range an observer picks on a few
    calibration images becomes a scale and a zero point in the model; an
    input beyond anything the calibration set showed is clipped to it.

:class:`Observer` accumulates statistics over batches; :func:`calibrate` runs
the float model (:func:`float_forward`) over calibration data; :func:`to_qdq`
writes the model in ONNX's QDQ form, which :func:`npukit.qarith.integer_forward`
runs with integer kernels only, as an INT8 accelerator would.

See chapter 6, "Quantization" (chapters/06_quant.md).
"""

from __future__ import annotations

import numbers as _numbers
from typing import Any, Sequence

import numpy as np

from . import _check, _tally
from .graphs import _walkable
from .qarith import _attrs, _conv, _graph, integer_forward
from .quant import QParams, _float32, _from_range, _mse_clip, choose_qparams, qrange

__all__ = [
    "Observer",
    "float_forward",
    "calibrate",
    "to_qdq",
    "numbers",
]

_METHODS = ("minmax", "percentile", "mse")


def _percentile(percentile: Any) -> float:
    if isinstance(percentile, bool) or not isinstance(percentile, _numbers.Real) or not 50 < percentile <= 100:
        raise ValueError(f"percentile must be a number in (50, 100], got {percentile!r}")
    return float(percentile)


class Observer:
    """Statistics of a tensor accumulated over calibration batches, then turned into a quantizer.

    ``"minmax"`` keeps the running extremes. ``"percentile"`` and ``"mse"``
    keep a histogram over [−R, R) with ``bins`` bins (even, ≥ 64); when a
    batch exceeds R, R doubles and neighbouring bins merge, so earlier
    batches are never needed again. (ONNX Runtime's histogram calibrators
    keep only a histogram too, but add bins of the same width instead.)
    ``percentile`` (in (50, 100]) is the share of values kept in the range.

    See chapter 6, "Choosing activation ranges: calibration" (chapters/06_quant.md).

    Examples
    --------
    >>> obs = Observer("percentile", percentile=99.0)
    >>> for k in range(3):
    ...     _ = obs.update(np.arange(100, dtype=np.float32) * (k + 1))
    >>> obs.count, round(float(obs.qparams("uint8", symmetric=False).scale) * 255)
    (300, 289)
    """

    def __init__(self, method: str = "minmax", *, percentile: float = 99.99, bins: int = 2048) -> None:
        self.method = _check.one_of(method, "method", _METHODS)
        self.percentile = _percentile(percentile)
        self.bins = _check.integer(bins, "bins", minimum=64, maximum=2**20)
        if self.bins % 2:
            raise ValueError(f"bins must be even, got {bins}")
        self.lo, self.hi, self.count = np.inf, -np.inf, 0
        self.radius = 0.0
        self.hist = np.zeros(self.bins, np.int64)

    def update(self, x: np.ndarray) -> "Observer":
        """Add a batch. Returns the observer, so calls chain.

        Raises
        ------
        TypeError, ValueError
            If ``x`` is not a float array, is empty or has NaN/inf.
        """
        x = _check.float_data(x, "x").ravel().astype(np.float64)
        self.lo, self.hi, self.count = min(self.lo, x.min()), max(self.hi, x.max()), self.count + x.size
        if self.method == "minmax":
            return self
        need = max(abs(self.lo), abs(self.hi), 1e-30)
        if self.radius == 0.0:
            self.radius = 2.0 ** np.ceil(np.log2(need))
        while need >= self.radius:  # double the range: bin i joins new bin (i + bins/2) // 2
            merged = np.zeros_like(self.hist)
            np.add.at(merged, (np.arange(self.bins) + self.bins // 2) // 2, self.hist)
            self.hist, self.radius = merged, 2 * self.radius
        idx = np.floor((x + self.radius) / (2 * self.radius) * self.bins).astype(np.int64)
        self.hist += np.bincount(np.clip(idx, 0, self.bins - 1), minlength=self.bins)
        return self

    def qparams(self, dtype: str = "uint8", symmetric: bool = False) -> QParams:
        """The quantizer for everything seen so far.

        Raises
        ------
        ValueError
            If no batch was added.
        """
        qrange(dtype)
        symmetric = _check.boolean(symmetric, "symmetric")
        if self.count == 0:
            raise ValueError("the observer has seen no data: call update(batch) first (calibration data is empty)")
        if self.method == "minmax":
            lo, hi = self.lo, self.hi
        elif self.method == "percentile":
            lo, hi = self._percentile_range(symmetric)
        else:
            edges = -self.radius + 2 * self.radius / self.bins * np.arange(self.bins + 1)
            centres = (edges[:-1] + edges[1:]) / 2
            occupied = self.hist > 0   # one representative per occupied bin, weighted by its count
            lo, hi = self._mse(centres[occupied], self.hist[occupied].astype(np.float64), dtype, symmetric)
        scale, zp = _from_range(np.float64(lo), np.float64(hi), dtype, symmetric)
        return QParams(scale.reshape(()), zp.reshape(()), dtype, None)

    def _percentile_range(self, symmetric: bool) -> tuple[float, float]:
        width = 2 * self.radius / self.bins
        edges = -self.radius + width * np.arange(self.bins + 1)
        share = self.percentile / 100
        if symmetric:                      # the percentile of |x|, from the histogram folded at 0
            folded = np.abs((edges[:-1] + edges[1:]) / 2)
            order = np.argsort(folded, kind="stable")
            c = np.cumsum(self.hist[order]) / self.count
            hi = folded[order][np.searchsorted(c, share)] + width / 2
            return max(-hi, self.lo), min(hi, self.hi)
        cum = np.cumsum(self.hist) / self.count
        hi = edges[1:][min(np.searchsorted(cum, share), self.bins - 1)]
        lo = edges[:-1][np.searchsorted(cum, (100 - self.percentile) / 100)]
        return max(lo, self.lo), min(hi, self.hi)

    def _mse(self, values: np.ndarray, weights: np.ndarray, dtype: str, symmetric: bool) -> tuple[float, float]:
        """The range with the smallest quantize–dequantize error over the histogram, for ``dtype``'s grid."""
        lo, hi = _mse_clip(values, (0,), qrange(dtype), symmetric, weights, np.float64(self.lo), np.float64(self.hi))
        return float(lo.ravel()[0]), float(hi.ravel()[0])


# ---- a float model, tensor by tensor ----------------------------------------------------------


_FLOAT_OPS = ("Conv", "Relu", "GlobalAveragePool", "Flatten", "Gemm")


def float_forward(model: Any, images: np.ndarray) -> dict[str, np.ndarray]:
    """Every tensor of a float Conv/Relu/GlobalAveragePool/Flatten/Gemm chain, computed in NumPy.

    What calibration observes, and what quantized activations are compared with.

    See chapter 6, "Choosing activation ranges: calibration" (chapters/06_quant.md).

    Parameters
    ----------
    model : onnx.ModelProto
        Such a chain: CameraNet with BatchNormalization folded
        (:func:`npukit.rewrites.fold_batchnorm`).
    images : numpy.ndarray
        float32 inputs, no NaN.

    Returns
    -------
    dict
        Tensor name → float32 array, the input included.

    Raises
    ------
    TypeError, ValueError
        For a model that is not such a chain or bad ``images``.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> from npukit.data import shapes_dataset
    >>> from npukit import rewrites
    >>> net = CameraNet.pretrained()
    >>> images, _ = shapes_dataset(4, seed=2)
    >>> env = float_forward(rewrites.fold_batchnorm(net.to_onnx()), images)
    >>> bool(np.allclose(env["logits"], net(images), atol=1e-4))
    True
    """
    graph, inits = _graph(_walkable(model))
    _images_fit(graph, _float32(images, "images"), "images")
    env = {graph.input[0].name: _float32(images, "images")}
    for node in graph.node:
        if node.op_type not in _FLOAT_OPS:
            raise ValueError(f"model must hold only {', '.join(_FLOAT_OPS)} nodes (fold BatchNormalization "
                             f"first with npukit.rewrites.fold_batchnorm); found {node.op_type} {node.name!r}")
        x, a = env[node.input[0]], _attrs(node)
        if node.op_type == "Conv":
            y = _conv(x, inits[node.input[1]], a.get("strides", [1])[0], a.get("pads", [0])[0], a.get("group", 1))
            if len(node.input) > 2:
                y = y + inits[node.input[2]].reshape(1, -1, 1, 1)
        elif node.op_type == "Relu":
            y = np.maximum(x, 0)
        elif node.op_type == "GlobalAveragePool":
            y = x.mean(axis=(2, 3), keepdims=True)
        elif node.op_type == "Flatten":
            y = x.reshape(len(x), -1)
        else:
            w = inits[node.input[1]]
            y = x @ (w.T if a.get("transB", 0) else w) + inits[node.input[2]]
        env[node.output[0]] = y.astype(np.float32)
    return env


def _images_fit(graph: Any, images: np.ndarray, name: str) -> None:
    """Refuse a batch that is not (n ≥ 1, C, H, W) with the model input's C, H, W (where they are static)."""
    dims = [d.dim_value if d.HasField("dim_value") else None for d in graph.input[0].type.tensor_type.shape.dim]
    if images.ndim != 4 or len(images) == 0 or len(dims) != 4 or any(
            d is not None and d != n for d, n in zip(dims[1:], images.shape[1:])):
        want = ", ".join("?" if d is None else str(d) for d in dims[1:])
        raise ValueError(f"{name} must be a non-empty batch of shape (n, {want}), got {images.shape}")


# ---- calibration ----------------------------------------------------------------------------


def _activation_edges(model: Any, keep_float: Sequence[str]) -> list[str]:
    """Tensors that get a Q/DQ pair: the input and every Relu/GlobalAveragePool output feeding a quantized layer."""
    graph, _ = _graph(model)
    readers: dict[str, list[Any]] = {}
    for node in graph.node:
        for t in node.input:
            readers.setdefault(t, []).append(node)

    def feeds_quantized(t: str) -> bool:
        for r in readers.get(t, []):
            if r.op_type in ("Conv", "Gemm"):
                if r.name not in keep_float:
                    return True
            elif r.op_type in ("Flatten", "GlobalAveragePool", "Relu") and feeds_quantized(r.output[0]):
                return True
        return False

    edges = [graph.input[0].name] + [n.output[0] for n in graph.node if n.op_type in ("Relu", "GlobalAveragePool")]
    return [t for t in edges if feeds_quantized(t)]


def calibrate(model: Any, calibration_data: np.ndarray, *, method: str = "minmax", percentile: float = 99.99,
              batch: int = 64, keep_float: Sequence[str] = ()) -> dict[str, QParams]:
    """uint8 quantizers for a model's activations, from :class:`Observer` statistics over the data.

    See chapter 6, "Choosing activation ranges: calibration" (chapters/06_quant.md).

    Parameters
    ----------
    model : onnx.ModelProto
        A float chain as for :func:`float_forward`.
    calibration_data : numpy.ndarray
        float32 inputs, (n, ...) with n ≥ 1.
    method, percentile
        As for :class:`Observer`.
    batch : int
        Images per pass (the observers accumulate across passes).
    keep_float : sequence of str
        Conv/Gemm node names left in float: their inputs need no quantizer.

    Returns
    -------
    dict
        Tensor name → :class:`npukit.quant.QParams` (uint8, asymmetric, per tensor).

    Raises
    ------
    TypeError, ValueError
        For a model that is not such a chain, empty or non-finite data.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> from npukit.data import shapes_dataset
    >>> from npukit import rewrites
    >>> model = rewrites.fold_batchnorm(CameraNet.pretrained().to_onnx())
    >>> q = calibrate(model, shapes_dataset(16, seed=3)[0])
    >>> list(q)[:3], q["image"].dtype
    (['image', 'stem.relu', 'block1.dw_relu'], 'uint8')
    """
    data = _check.as_array(calibration_data, "calibration_data")
    if data.dtype != np.float32 or data.ndim < 2:
        raise TypeError(f"calibration_data must be a float32 batch (n, ...), got {data.dtype} {data.shape}")
    if len(data) == 0:
        raise ValueError("calibration_data must hold at least one input")
    _check.finite(data, "calibration_data")
    _images_fit(_graph(_walkable(model))[0], data, "calibration_data")
    batch = _check.integer(batch, "batch", minimum=1)
    keep_float = _keep_float(model, keep_float)
    observers = {t: Observer(method, percentile=percentile) for t in _activation_edges(model, keep_float)}
    for i in range(0, len(data), batch):
        env = float_forward(model, data[i:i + batch])
        for t, obs in observers.items():
            obs.update(env[t])
    return {t: obs.qparams("uint8", symmetric=False) for t, obs in observers.items()}


def _keep_float(model: Any, keep_float: Any) -> tuple[str, ...]:
    graph, _ = _graph(model)
    layers = sorted(n.name for n in graph.node if n.op_type in ("Conv", "Gemm"))
    names = tuple(_check.sequence(list(keep_float) if isinstance(keep_float, tuple) else keep_float, "keep_float"))
    for name in names:
        if name not in layers:
            raise ValueError(f"keep_float must name Conv/Gemm nodes of the model ({', '.join(layers)}), got {name!r}")
    return names


# ---- the QDQ model ----------------------------------------------------------------------------


class _QDQWriter:
    """Collects the nodes and initializers of a QDQ graph as :func:`to_qdq` walks the float one."""

    def __init__(self, act: dict[str, QParams], inits: dict[str, np.ndarray], per_channel: bool) -> None:
        self.act, self.inits, self.per_channel = act, inits, per_channel
        self.nodes: list[Any] = []
        self.new_inits: list[Any] = []
        self.rename: dict[str, str] = {}

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.new_inits.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op: str, inputs: list[str], output: str, name: str, **attrs: Any) -> None:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [output], name=name, **attrs))

    def qdq_pair(self, t: str) -> None:
        """QuantizeLinear → DequantizeLinear on activation ``t``; later readers read ``t.dq``."""
        p = self.act[t]
        s = self.const(f"{t}.scale", np.asarray(p.scale, np.float32))
        z = self.const(f"{t}.zero_point", np.asarray(p.zero_point, np.uint8))
        self.node("QuantizeLinear", [t, s, z], f"{t}.q", f"{t}.quantize")
        self.node("DequantizeLinear", [f"{t}.q", s, z], f"{t}.dq", f"{t}.dequantize")
        self.rename[t] = f"{t}.dq"

    def dequantized(self, name: str, values: np.ndarray, scale: np.ndarray, zero: np.ndarray) -> str:
        """A DequantizeLinear (axis 0) over stored integers; returns the float tensor's name."""
        q, s, z = (self.const(f"{name}.{k}", v) for k, v in ((values.dtype.name, values), ("scale", scale),
                                                            ("zero_point", zero)))
        self.node("DequantizeLinear", [q, s, z], f"{name}.dq", f"{name}.dequantize", axis=0)
        return f"{name}.dq"

    def layer_inputs(self, node: Any, x_scale: np.ndarray, inputs: list[str]) -> list[str]:
        """int8 weights (symmetric, per channel or per tensor) and an int32 bias of scale s_x·s_w."""
        w = self.inits[node.input[1]]
        wp = choose_qparams(w, "int8", True, axis=0 if self.per_channel else None)
        sw = np.asarray(wp.scale, np.float32)
        inputs[1] = self.dequantized(node.input[1], wp.quantize(w), sw, np.zeros(sw.shape, np.int8))
        if len(node.input) > 2:
            sb = (np.float32(x_scale) * sw).astype(np.float32)              # bias scale s_x·s_w, zero point 0
            b = self.inits[node.input[2]].astype(np.float64)
            bq = np.clip(np.rint(b / sb), -2**31, 2**31 - 1).astype(np.int32)
            inputs[2] = self.dequantized(node.input[2], bq, sb, np.zeros(sb.shape, np.int32))
        return inputs


def _fixed(fixed: Any, act: dict[str, QParams]) -> dict[str, QParams]:
    """Check ``to_qdq``'s ``fixed``: known quantizers for some of the calibrated tensors."""
    if fixed is not None and not isinstance(fixed, dict):
        raise TypeError(f"fixed must be a dict of tensor name -> QParams, got {type(fixed).__name__}")
    for t, p in (fixed or {}).items():
        if t not in act or not isinstance(p, QParams):
            raise ValueError(f"fixed must map quantized tensors ({', '.join(act)}) to QParams, got {t!r}")
        if p.dtype != "uint8" or np.size(p.scale) != 1:  # written as a uint8, per-tensor Q/DQ pair
            raise ValueError(f"fixed[{t!r}] must be a per-tensor uint8 QParams (activations are uint8), "
                             f"got {p.dtype} with {np.size(p.scale)} scale(s)")
    return dict(fixed or {})


def to_qdq(model: Any, calibration_data: np.ndarray, *, method: str = "minmax", percentile: float = 99.99,
           per_channel: bool = True, keep_float: Sequence[str] = (), fixed: dict[str, QParams] | None = None) -> Any:
    """Write a float model as an ONNX QDQ model: uint8 activations, int8 weights, int32 biases.

    Each activation edge feeding a quantized layer gets a QuantizeLinear →
    DequantizeLinear pair (ranges from :func:`calibrate`); each quantized
    Conv/Gemm reads int8 weights (symmetric, per output channel or per tensor)
    and an int32 bias of scale ``s_x·s_w`` through DequantizeLinear. The
    float operators stay; a runtime that knows the pattern runs them in INT8.

    See chapter 6, "CameraNet as a QDQ model, on a real runtime" (chapters/06_quant.md).

    Parameters
    ----------
    model, calibration_data, method, percentile, keep_float
        As for :func:`calibrate`; ``keep_float`` layers stay in float
        (mixed precision).
    per_channel : bool
        Weight scales per output channel (True) or one per tensor.
    fixed : dict, optional
        Tensor name → :class:`npukit.quant.QParams` replacing calibrated ones
        (e.g. the input's known range: scale 1/255).

    Returns
    -------
    onnx.ModelProto
        Checked with ``onnx.checker``; opset 21 (or the model's, if newer).

    Raises
    ------
    TypeError, ValueError
        As for :func:`calibrate`; for a bad ``per_channel`` or ``fixed``.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> from npukit.data import shapes_dataset
    >>> from npukit import rewrites
    >>> model = rewrites.fold_batchnorm(CameraNet.pretrained().to_onnx())
    >>> qdq = to_qdq(model, shapes_dataset(16, seed=3)[0])
    >>> [n.op_type for n in qdq.graph.node][:5]
    ['QuantizeLinear', 'DequantizeLinear', 'DequantizeLinear', 'DequantizeLinear', 'Conv']
    """
    import onnx
    from onnx import helper

    graph, inits = _graph(_walkable(model))
    per_channel = _check.boolean(per_channel, "per_channel")
    keep_float = _keep_float(model, keep_float)
    act = calibrate(model, calibration_data, method=method, percentile=percentile, keep_float=keep_float)
    act.update(_fixed(fixed, act))
    flat = {n.output[0]: n.input[0] for n in graph.node if n.op_type == "Flatten"}
    outputs = {o.name for o in graph.output}
    out = _QDQWriter(act, inits, per_channel)
    if graph.input[0].name in act:
        out.qdq_pair(graph.input[0].name)
    for node in graph.node:
        inputs = [out.rename.get(i, i) for i in node.input]
        if node.op_type in ("Conv", "Gemm") and node.name not in keep_float:
            x = node.input[0]
            while x in flat:                               # the quantized tensor behind a Flatten
                x = flat[x]
            inputs = out.layer_inputs(node, act[x].scale, inputs)
        new = helper.make_node(node.op_type, inputs, list(node.output), name=node.name)
        new.attribute.extend(node.attribute)
        out.nodes.append(new)
        if node.output[0] in act:
            if node.output[0] in outputs:
                raise ValueError("the model's output must not be a quantized activation edge")
            out.qdq_pair(node.output[0])
    used = {i for n in out.nodes for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    qgraph = helper.make_graph(out.nodes, f"{graph.name}_qdq", list(graph.input), list(graph.output),
                               initializer=kept + out.new_inits)
    opset = max(21, max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")))
    result = helper.make_model(qgraph, opset_imports=[helper.make_opsetid("", opset)], producer_name="npukit.ptq",
                               ir_version=model.ir_version)
    onnx.checker.check_model(result)
    return result


def numbers(ctx: _tally.Inputs) -> list[_tally.Row]:
    """Chapter 6's rows of the "numbers so far" table: CameraNet in INT8.

    Follows the contract of :mod:`npukit.tally`: ``ctx.qdq``, CameraNet
    with BatchNorm folded and calibrated min–max on 128 images of
    ``shapes_dataset(seed=7)`` (chapter 8's INT8 model, from the build's store
    for the shipped network), its weight bytes as deployed
    (``ctx.weight_bytes``), and :func:`npukit.qarith.integer_forward` on the
    first 500 images of the held-out draw (``ctx.heldout``), with the float
    model's accuracy on the same 500 beside the INT8 one.

    See chapter 6, "CameraNet's numbers so far" (chapters/06_quant.md).

    Examples
    --------
    >>> from npukit import tally
    >>> [r.quantity for r in numbers(tally.Context())][0]
    'weight bytes, INT8 per-channel (+ int32 biases, float32 scales, zero points)'
    """
    _tally.inputs(ctx)
    n = 500
    images, labels = (a[:n] for a in ctx.heldout)
    q_logits, f_logits = integer_forward(ctx.qdq, images), ctx.net(images)
    agree = float((q_logits.argmax(1) == f_logits.argmax(1)).mean())
    acc = float((q_logits.argmax(1) == labels).mean())
    f_acc = float((f_logits.argmax(1) == labels).mean())   # float beside it on the same images, not chapter 0's
    w = ctx.weight_bytes
    return [
        _tally.Row(6, "weight bytes, INT8 per-channel (+ int32 biases, float32 scales, zero points)",
                   f"{w['INT8']:,} B (float32, BatchNorm folded: {w['FP32']:,} B)",
                   "initializers of npukit.ptq.to_qdq's model (npukit.shared.weight_bytes)"),
        _tally.Row(6, "INT8 top-1 agreement with float32",
                   f"{agree:.1%} (accuracy {acc:.1%}; float32 on the same {n} images: {f_acc:.1%})",
                   f"npukit.qarith.integer_forward on the first {n} held-out images, min-max calibration on 128"),
    ]
