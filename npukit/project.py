"""The term project: chapter 8's closed loop on a model the student brings.

The invariant this module keeps:

    *A model the course did not build gets the same checks as CameraNet.*
    Any image classifier in ONNX whose operators the course teaches is
    loaded and checked, folded, calibrated on the student's images and
    quantized, held against the NPU contract, compiled, verified against its
    own float graph, benchmarked in interleaved rounds, profiled, and
    explained by chapter 3's counts and chapter 5's array estimate; each
    stage ends in a :class:`npukit.capstone.Check` that can fail.

Here: :data:`OPERATORS` (what the loop accepts), :func:`load_model` (a path,
bytes or ``onnx.ModelProto``, refused with the first unsupported operator
named), :func:`closed_loop` and its record :class:`Project` (which writes an
HTML report). The handout's two worked examples are in :mod:`npukit.zoo`.

See "The term project" (chapters/project.md).
"""

from __future__ import annotations

import html
import math
import pathlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import _check
from .capstone import NPU_ARRAY, Check, LayerRow

if TYPE_CHECKING:
    import onnx

    from .accelerator import ModelTable
    from .graphs import MachineSpec

__all__ = ["OPERATORS", "load_model", "Project", "closed_loop"]

#: The ONNX operators the loop accepts: the ones the course teaches and every stage
#: (folding, quantization, the NPU contract, the counts) handles.
#: Reshape is not one: its shape input is an int64 tensor, which the illustrative NPU contract refuses
#: (chapter 7); export a flatten before the classifier as Flatten (``torch.flatten(x, 1)``).
OPERATORS = frozenset({"Conv", "BatchNormalization", "Relu", "Clip", "Add", "GlobalAveragePool",
                       "MaxPool", "AveragePool", "Flatten", "Gemm", "MatMul"})

_MIN_OPSET = 17
_CHAIN_OPS = frozenset({"Conv", "Relu", "GlobalAveragePool", "Flatten", "Gemm"})  # ptq.to_qdq's graphs

# ---------------------------------------------------------------------------
# Loading a model the student brings
# ---------------------------------------------------------------------------


def _as_proto(model: Any) -> onnx.ModelProto:
    import onnx

    if isinstance(model, (bytes, bytearray)):
        try:
            return onnx.load_from_string(bytes(model))
        except Exception as e:  # noqa: BLE001  (protobuf's DecodeError and friends)
            raise ValueError(f"model bytes are not a serialized ONNX model: {e}") from None
    if isinstance(model, (str, pathlib.Path)):
        p = _check.path(model, "model")
        if not p.is_file():
            raise ValueError(f"model must name an existing .onnx file, got {str(p)!r}")
        return onnx.load(str(p))
    if type(model).__name__ != "ModelProto":
        raise TypeError(f"model must be a path, bytes or an onnx.ModelProto, got {type(model).__name__}")
    return model


def _fix_shape(model: Any, input_shape: Any) -> None:
    """Give the one image input static dimensions: its own, or ``input_shape`` (N, C, H, W) where it has none."""
    dims = model.graph.input[0].type.tensor_type.shape.dim
    if input_shape is not None:
        shape = _check.shape(input_shape, "input_shape")
        if len(shape) != 4 or min(shape) < 1 or shape[0] != 1 or shape[1] != 3:
            raise ValueError(f"input_shape must be (1, 3, H, W) with H, W >= 1 (batch 1, RGB), got {shape}")
        if len(dims) != 4:
            raise ValueError(f"the model's input must be 4-D (N, C, H, W), it has {len(dims)} dimensions")
        for d, n, axis in zip(dims, shape, "NCHW"):
            if d.HasField("dim_value") and d.dim_value != n:
                raise ValueError(f"input_shape[{'NCHW'.index(axis)}] must match the model's static {axis} = "
                                 f"{d.dim_value}, got {n}")
            d.Clear()
            d.dim_value = n
    if len(dims) != 4 or not all(d.HasField("dim_value") and d.dim_value > 0 for d in dims):
        shown = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in dims]
        raise ValueError(f"the model's input must have a static shape (N, C, H, W), got {shown}: "
                         "pass input_shape=(1, 3, H, W) to fix it")
    if dims[0].dim_value != 1 or dims[1].dim_value != 3:
        raise ValueError(f"the model's input must be one RGB image (1, 3, H, W), got "
                         f"{[d.dim_value for d in dims]}: pass input_shape=(1, 3, H, W) or export batch 1")


def _name_nodes(proto: Any) -> None:
    """Give every unnamed node a unique name (``Conv_3``: its type and position); refuse duplicate names.

    The ledger, the profile and the weight checks pair layers by node name; ONNX allows a node without a
    name (``onnx.helper``'s default) and ``onnx.checker`` does not require names to be unique.
    """
    seen: dict[str, int] = {}
    for n in proto.graph.node:
        if n.name:
            seen[n.name] = seen.get(n.name, 0) + 1
    twice = sorted(k for k, v in seen.items() if v > 1)
    if twice:
        raise ValueError(f"model's node names must be unique (the report pairs layers by name), got "
                         f"{', '.join(f'{k!r} ({seen[k]} nodes)' for k in twice[:5])}: rename them")
    for i, n in enumerate(proto.graph.node):
        if not n.name:
            name, k = f"{n.op_type}_{i}", 1
            while name in seen:
                name, k = f"{n.op_type}_{i}_{k}", k + 1
            n.name = name
            seen[name] = 1


def _normalizer(proto: Any, normalize: Any) -> None:
    """Put ``(x - mean) / std`` per channel in front of the graph, as a 1×1 depthwise Conv (weights 1/std, bias
    -mean/std), which is exact; folded into the first convolution it would be wrong where that one pads."""
    from onnx import helper, numpy_helper

    pair = _check.sequence(normalize, "normalize", length=2)
    mean = np.array([_check.real(m, f"normalize[0][{i}]")
                     for i, m in enumerate(_check.sequence(pair[0], "normalize[0]", length=3))])
    std = np.array([_check.real(v, f"normalize[1][{i}]", minimum=1e-12)
                    for i, v in enumerate(_check.sequence(pair[1], "normalize[1]", length=3))])
    inits = {t.name for t in proto.graph.initializer}
    x = next(i.name for i in proto.graph.input if i.name not in inits)
    y = f"{x}.normalized"
    for n in proto.graph.node:
        n.input[:] = [y if t == x else t for t in n.input]
    w = numpy_helper.from_array((1 / std).astype(np.float32).reshape(3, 1, 1, 1), "input.normalize.weight")
    b = numpy_helper.from_array((-mean / std).astype(np.float32), "input.normalize.bias")
    proto.graph.initializer.extend([w, b])
    node = helper.make_node("Conv", [x, w.name, b.name], [y], name="input.normalize", group=3, kernel_shape=[1, 1])
    proto.graph.node.insert(0, node)


def load_model(model: Any, *, input_shape: Sequence[int] | None = None,
               normalize: tuple[Sequence[float], Sequence[float]] | None = None) -> onnx.ModelProto:
    """A student's image classifier, checked for the loop: opset >= 17, one static RGB input, known operators.

    ``model`` is a path to an ``.onnx`` file, its bytes or an
    ``onnx.ModelProto`` (copied, never changed). Its one input must be float32
    ``(1, 3, H, W)``; a symbolic dimension is fixed with ``input_shape``. Its
    one output is the logits ``(1, classes)``. Every node must be one of
    :data:`OPERATORS` in the default domain; the first that is not is named
    with its node. Node names must be unique; an unnamed node is named by
    its type and position (``Conv_0``). The model passes ``onnx.checker``
    with shape inference.
    See "The term project" (chapters/project.md).

    Parameters
    ----------
    model : str, pathlib.Path, bytes or onnx.ModelProto
        The model.
    input_shape : sequence of int, optional
        ``(1, 3, H, W)``: fixes the input's symbolic dimensions (static ones must match).
    normalize : (mean, std), optional
        Three means and three standard deviations, for a model trained on
        ``(x - mean) / std`` of pixels in [0, 1] (ImageNet's: ``((0.485,
        0.456, 0.406), (0.229, 0.224, 0.225))``): prepended as a node
        ``input.normalize``, a 1×1 depthwise Conv, so that the model's
        input is pixels in [0, 1].

    Returns
    -------
    onnx.ModelProto
        A checked copy with static shapes inferred.

    Raises
    ------
    TypeError, ValueError
        For a model of another type, an unreadable file, an opset below 17, an
        unsupported operator (the first, by node), two nodes of one name, a dynamic or non-RGB input
        left unfixed, or a bad ``input_shape``.

    Examples
    --------
    >>> from onnx import helper, TensorProto
    >>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    >>> y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])
    >>> g = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["y"], name="gate")], "g", [x], [y])
    >>> load_model(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    Traceback (most recent call last):
    ...
    ValueError: model uses Sigmoid (node 'gate'), which the closed loop does not support; it supports ...
    """
    import onnx

    src = _as_proto(model)
    proto = onnx.ModelProto()
    proto.CopyFrom(src)
    opset = max((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), default=0)
    if opset < _MIN_OPSET:
        raise ValueError(f"model must use ONNX opset >= {_MIN_OPSET}, got {opset} "
                         "(convert it with onnx.version_converter.convert_version)")
    for i, node in enumerate(proto.graph.node):
        if node.domain not in ("", "ai.onnx") or node.op_type not in OPERATORS:
            op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
            hint = (" (export the flatten as Flatten, e.g. torch.flatten(x, 1): a Reshape's int64 shape "
                    "breaks the NPU contract)") if op == "Reshape" else ""
            raise ValueError(f"model uses {op} (node {node.name or f'#{i}'!r}), which the closed loop does not "
                             f"support; it supports {', '.join(sorted(OPERATORS))}{hint}")
    _name_nodes(proto)
    if normalize is not None:
        if "input.normalize" in {n.name for n in proto.graph.node}:
            raise ValueError("normalize must not be given for a model that already has a node 'input.normalize'")
        _normalizer(proto, normalize)
    inits = {t.name for t in proto.graph.initializer}
    inputs = [i for i in proto.graph.input if i.name not in inits]
    if len(inputs) != 1 or len(proto.graph.output) != 1:
        raise ValueError(f"model must have one image input and one output, got {len(inputs)} inputs and "
                         f"{len(proto.graph.output)} outputs")
    if inputs[0].type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
        raise ValueError("the model's input must be float32 (RGB in [0, 1], NCHW)")
    while len(proto.graph.input) > 1:        # initializers listed as inputs (old exporters): keep the image only
        keep = [i for i in proto.graph.input if i.name not in inits]
        del proto.graph.input[:]
        proto.graph.input.extend(keep)
    _fix_shape(proto, input_shape)
    try:
        onnx.checker.check_model(proto, full_check=True)
        proto = onnx.shape_inference.infer_shapes(proto, strict_mode=True)
    except Exception as e:  # noqa: BLE001  (onnx's ValidationError and InferenceError)
        raise ValueError(f"model does not pass onnx.checker with shape inference: {e}") from None
    out = [d.dim_value for d in proto.graph.output[0].type.tensor_type.shape.dim]
    if len(out) != 2 or out[0] != 1 or out[1] < 2:
        raise ValueError(f"the model's output must be logits (1, classes >= 2), got shape {out}")
    return proto


# ---------------------------------------------------------------------------
# The closed loop on a loaded model
# ---------------------------------------------------------------------------


def _array_layers(folded: Any) -> list:
    """Every Conv, Gemm and MatMul of ``folded`` as chapter 5's GEMM work (a depthwise one per channel)."""
    from .accelerator import Layer as Work
    from .graphs import op_counts, tensor_shapes

    shapes = {k: v[0] for k, v in tensor_shapes(folded).items()}
    elements = {c.name: c for c in op_counts(folded, itemsize=1)}
    out = []
    for i, node in enumerate(folded.graph.node):
        c = elements.get(node.name or f"{node.op_type}_{i}")
        if node.op_type not in ("Conv", "Gemm", "MatMul") or c is None:
            continue
        tensors = dict(inputs=c.act_bytes_in, weights=c.param_bytes, macs=c.macs)
        if node.op_type == "Conv":
            cout, cin_g, kh, kw = shapes[node.input[1]]
            _, _, ho, wo = shapes[node.output[0]]
            g = shapes[node.input[0]][1] // cin_g
            kind = "depthwise" if g > 1 and cin_g == 1 else ("pointwise" if kh * kw == 1 else "dense")
            out.append(Work(node.name, ho * wo, cout // g, cin_g * kh * kw, count=g, kind=kind, **tensors))
        else:
            y = shapes[node.output[0]]
            k = c.macs // max(1, math.prod(y))
            out.append(Work(node.name, math.prod(y[:-1]), y[-1], max(1, k), kind="fc", **tensors))
    return out


def _ledger(folded: Any, machine: MachineSpec, profiles: dict) -> tuple[tuple, ModelTable]:
    """One :class:`npukit.capstone.LayerRow` per Conv/Gemm/MatMul, and the array's table of them."""
    from .accelerator import dram_bytes, model_table
    from .graphs import op_counts

    table = model_table(_array_layers(folded), int(NPU_ARRAY["rows"]), int(NPU_ARRAY["cols"]), "ws")
    est = {x.layer.name: x for x in table.layers}
    int8 = {c.name: c.bytes for c in op_counts(folded, itemsize=1)}
    rows = []
    for c in op_counts(folded):
        if c.name not in est:
            continue
        e = est[c.name]
        t_array = max(e.cycles / NPU_ARRAY["clock_hz"], dram_bytes(e.layer) / NPU_ARRAY["dram_bandwidth"])
        rows.append(LayerRow(c.name, e.layer.kind, c.macs, c.flops, c.bytes, int8[c.name],
                             machine.bound(c.flops / c.bytes),
                             1e6 * max(c.flops / machine.peak_flops, c.bytes / machine.bandwidth), e.cycles,
                             1e6 * t_array, {p: prof.get(c.name, 0.0) for p, prof in profiles.items()}))
    return tuple(rows), table


def _npu_bounds(model: Any) -> tuple:
    """Chapter 9's roofline bound of the folded model on each published NPU, if chapter 9's module is installed.

    As chapter 9 bounds a ``w8a8`` run: t >= max(2·MACs / peak, (weights + input + output) × 1 byte / bandwidth).
    """
    try:
        from . import npus  # chapter 9 (optional: the comparison is left out without it)
    except ImportError:
        return ()
    from .graphs import op_counts

    counts = op_counts(model, itemsize=1)
    macs = sum(c.macs for c in counts)
    shapes = [d.dim_value for t in (model.graph.input[0], model.graph.output[0])
              for d in t.type.tensor_type.shape.dim]
    io = math.prod(shapes[:4]) + math.prod(shapes[4:])
    nbytes = sum(math.prod(a.dims) for a in model.graph.initializer) + io
    out = []
    for d in npus.DEVICES.values():
        if d.peak_tops is None or d.bandwidth_gbs is None:
            continue
        compute, memory = 2 * macs / (d.peak_tops * 1e12), nbytes / (d.bandwidth_gbs * 1e9)
        out.append((d.name, max(compute, memory), "compute" if compute >= memory else "memory"))
    return tuple(out)


@dataclass(frozen=True)
class Project:
    """One run of :func:`closed_loop` on a student's model: checks, numbers, and its report.

    ``latency`` holds a :class:`npukit.deploy.Benchmark` per precision,
    timed in interleaved rounds; ``verdict`` is INT8's time over FP32's
    (:class:`npukit.timing.Verdict`, three outcomes); ``npu_bounds`` holds
    (device, seconds, roof) for chapter 9's published NPUs, empty when
    chapter 9's module is not installed. See "The term project" (chapters/project.md).
    """

    name: str
    model: Any  #: the loaded float model
    folded: Any
    qdq: Any
    quantizer: str  #: "npukit.ptq" or "onnxruntime"
    device: str
    device_message: str
    checks: tuple
    agreement: float  #: INT8 top-1 agreement with the float model on the held-out images
    accuracy: dict  #: "FP32", "INT8" → accuracy, when labels were given
    latency: dict
    verdict: Any
    layers: tuple
    array: Any
    machine: Any
    heldout: int
    npu_bounds: tuple = ()
    made_on: str = ""  #: the machine, date and library versions of the run (:func:`_made_on`)

    def __post_init__(self) -> None:
        from .accelerator import ModelTable
        from .graphs import MachineSpec
        from .timing import Verdict

        _check.text(self.name, "name")
        _check.one_of(self.quantizer, "quantizer", ("npukit.ptq", "onnxruntime"))
        object.__setattr__(self, "checks", _check.sequence(self.checks, "checks", min_length=1))
        for i, c in enumerate(self.checks):
            _check.instance(c, f"checks[{i}]", Check, "capstone.Check")
        _check.real(self.agreement, "agreement", minimum=0.0, maximum=1.0)
        _check.instance(self.verdict, "verdict", Verdict, "timing.Verdict")
        _check.instance(self.array, "array", ModelTable, "accelerator.ModelTable")
        _check.instance(self.machine, "machine", MachineSpec, "graphs.MachineSpec")
        _check.integer(self.heldout, "heldout", minimum=1)
        _check.text(self.made_on, "made_on")
        for i, r in enumerate(_check.sequence(self.layers, "layers", min_length=1)):
            _check.instance(r, f"layers[{i}]", LayerRow, "capstone.LayerRow")

    @property
    def passed(self) -> bool:
        """True if every stage's check passed."""
        return all(c.ok for c in self.checks)

    @property
    def macs(self) -> int:
        return sum(r.macs for r in self.layers)

    def to_html(self) -> str:
        """The report: the checks, the per-layer ledger, the roofline, the array estimate, the NPU bounds."""
        e, m, a = html.escape, self.machine, NPU_ARRAY
        flops, nbytes = sum(r.flops for r in self.layers), sum(r.bytes_fp32 for r in self.layers)
        ms = {k: b.median * 1e3 for k, b in self.latency.items()}
        checks = "".join(f"<tr><td>{e(c.stage)}</td><td>{e(c.quantity)}</td><td>{c.value:.4g}</td>"
                         f"<td>{e(c.rule)} {c.limit:g}</td><td>{'pass' if c.ok else 'FAIL'}</td></tr>"
                         for c in self.checks)
        precs = list(self.latency)
        head = "".join(f"<th>{e(p)} µs</th>" for p in precs)
        ledger = "".join(
            f"<tr><td>{e(r.name)}</td><td>{e(r.kind)}</td><td>{r.macs:,}</td><td>{r.bytes_fp32:,}</td>"
            f"<td>{r.bytes_int8:,}</td><td>{r.bound}</td><td>{r.roofline_us:.2f}</td><td>{r.cycles:,}</td>"
            f"<td>{r.array_us:.2f}</td>" + "".join(f"<td>{r.measured_us.get(p, 0.0):.1f}</td>" for p in precs)
            + "</tr>" for r in self.layers)
        npu = "".join(f"<tr><td>{e(d)}</td><td>{t * 1e6:.1f}</td><td>{roof}</td></tr>" for d, t, roof in
                      self.npu_bounds) or "<tr><td colspan=3>chapter 9's npukit.npus is not installed</td></tr>"
        acc = "; ".join(f"{k} accuracy {v:.1%}" for k, v in self.accuracy.items())
        return (
            f"<h2>Closed loop: {e(self.name)}</h2><p>{e(self.device_message)} Quantized by {e(self.quantizer)}; "
            f"{sum(c.ok for c in self.checks)} of {len(self.checks)} checks passed. INT8 gives FP32's top-1 answer "
            f"on {self.agreement:.1%} of {self.heldout} held-out images{'; ' + e(acc) if acc else ''}.</p>"
            + (f"<p>Measured on {e(self.made_on)}.</p>" if self.made_on else "")
            + f"<h3>Checks</h3><table><tr><th>stage</th><th>quantity</th><th>value</th><th>limit</th><th></th></tr>"
            f"{checks}</table><h3>Latency (batch 1, {e(self.device)}, interleaved rounds)</h3><p>"
            + ", ".join(f"{k} {v:.3f} ms" for k, v in ms.items()) + f". INT8 is {e(self.verdict.phrase)}.</p>"
            f"<h3>Roofline ({e(m.cpu)})</h3><p>{flops / nbytes:.2f} FLOP/B against a ridge of {m.ridge:.1f} "
            f"FLOP/B: {m.bound(flops / nbytes)}-bound as a whole; {sum(r.bound == 'memory' for r in self.layers)}"
            f" of {len(self.layers)} layers memory-bound.</p>"
            f"<h3>Array estimate (assumed {a['rows']:g}×{a['cols']:g} WS array at {a['clock_hz'] / 1e9:g} GHz)"
            f"</h3><p>{self.array.cycles:,} cycles ({self.array.cycles / a['clock_hz'] * 1e6:.1f} µs), "
            f"utilization {self.array.utilization:.1%}.</p>"
            f"<h3>Ledger</h3><table><tr><th>layer</th><th>kind</th><th>MACs</th><th>bytes FP32</th>"
            f"<th>bytes INT8</th><th>bound</th><th>roofline µs</th><th>cycles</th><th>array µs</th>{head}</tr>"
            f"{ledger}</table><h3>Published NPUs (chapter 9's roofline bound, INT8)</h3>"
            f"<table><tr><th>device</th><th>bound µs</th><th>roof</th></tr>{npu}</table>")

    def _repr_html_(self) -> str:
        return self.to_html()

    def write(self, path: str | pathlib.Path) -> pathlib.Path:
        """Write :meth:`to_html` as a standalone HTML page at ``path``; returns the path."""
        p = _check.path(path, "path")
        if p.suffix.lower() not in (".html", ".htm"):
            raise ValueError(f"path must end in .html, got {str(p)!r}")
        p.write_text(f"<!doctype html><meta charset='utf-8'><title>{html.escape(self.name)}</title>"
                     f"{self.to_html()}", encoding="utf-8")
        return p


def _images(x: Any, name: str, shape: tuple) -> np.ndarray:
    """float32 images in [0, 1] of the model's input shape, at least one."""
    x = _check.as_array(x, name)
    if x.dtype != np.float32 or x.ndim != 4 or x.shape[1:] != shape[1:] or not len(x):
        raise ValueError(f"{name} must be float32 images of shape (n >= 1, {', '.join(map(str, shape[1:]))}), "
                         f"the model's input; got {x.dtype} {x.shape}")
    if not (np.isfinite(x).all() and x.min() >= 0 and x.max() <= 1):
        raise ValueError(f"{name} pixels must be finite and lie in [0, 1] (not 0–255, not normalized: for a "
                         "model trained on (x - mean) / std, pass normalize=(mean, std))")
    return x


#: Calibration methods: chapter 6's observers (a plain chain), ONNX Runtime's (any other graph, or keep_float).
_PTQ_METHODS, _ORT_METHODS = ("minmax", "percentile", "mse"), ("minmax", "percentile", "entropy")


def _plain(node: Any) -> bool:
    """True if chapter 6's writer reads every attribute ``node`` sets (its calibration's NumPy forward
    pass takes one stride and one pad for all sides, and a Gemm as ``A @ B.T + C`` with its weight's
    channels on axis 0); a dilated or ``auto_pad`` Conv, or a Gemm with ``alpha``, ``beta``, ``transA``,
    ``transB=0`` or no bias, is not."""
    from onnx import helper

    a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
    if node.op_type == "Conv":
        return (set(a.get("dilations", [1])) == {1} and a.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")
                and len(set(a.get("pads", [0]))) == 1 and len(set(a.get("strides", [1]))) == 1)
    if node.op_type == "Gemm":
        return (a.get("alpha", 1.0) == 1.0 and a.get("beta", 1.0) == 1.0 and a.get("transA", 0) == 0
                and a.get("transB", 0) == 1 and len(node.input) == 3 and bool(node.input[2]))
    return True


def _uses_ptq(folded: Any, keep_float: Sequence[str]) -> bool:
    """Chapter 6's quantizer for a plain chain whose attributes it reads; ONNX Runtime's for anything else."""
    return (not keep_float and {n.op_type for n in folded.graph.node} <= _CHAIN_OPS
            and all(_plain(n) for n in folded.graph.node))


def _quantize(folded: Any, calibration: np.ndarray, method: str, keep_float: Sequence[str] = ()) -> tuple[Any, str]:
    """The course's quantizer for a plain chain (chapter 6), ONNX Runtime's for anything with Add, pools, Clip
    or with layers kept in float."""
    from . import contract, ptq

    if _uses_ptq(folded, keep_float):
        return ptq.to_qdq(folded, calibration, method=method), "npukit.ptq"
    return contract.ort_quantize_qdq(folded, calibration, method=method, exclude=list(keep_float)), "onnxruntime"


def _ops_beyond(model: Any) -> set:
    return {n.op_type for n in model.graph.node} - _CHAIN_OPS


def _weights_exact(qdq: Any, folded: Any, keep_float: Sequence[str] = ()) -> tuple[float, float]:
    """Chapter 8's weight checks (:func:`npukit.capstone._weights_exact`), layers paired by node name.

    ONNX Runtime may order the nodes of a graph with branches differently
    from the float model, and chapter 8 pairs layers by position; so the
    float graph's nodes are put in the QDQ graph's order first. A layer left
    in float (its weight not behind a DequantizeLinear) makes both counts
    NaN, which no check passes, unless the student asked for it
    (``keep_float``): those layers are left out of both graphs' pairing.
    """
    import onnx

    from .capstone import _weights_exact as exact

    kept = set(keep_float)
    order = {n.name: i for i, n in enumerate(qdq.graph.node)}
    ordered, quantized = onnx.ModelProto(), onnx.ModelProto()
    ordered.CopyFrom(folded)
    quantized.CopyFrom(qdq)
    nodes = sorted((n for n in ordered.graph.node if n.name not in kept), key=lambda n: order.get(n.name, -1))
    del ordered.graph.node[:]
    ordered.graph.node.extend(nodes)
    nodes = [n for n in quantized.graph.node if n.name not in kept]
    del quantized.graph.node[:]
    quantized.graph.node.extend(nodes)
    try:
        return exact(quantized, ordered)
    except KeyError:
        return float("nan"), float("nan")


def _front(model: Any, calibration: np.ndarray, method: str, few: np.ndarray, keep_float: Sequence[str] = ()
           ) -> tuple:
    """Fold, quantize and check the contract; each stage closed by a Check against onnx.reference."""
    from . import contract, rewrites
    from .capstone import _reference_logits

    ref = _reference_logits(model, few)
    tol = 1e-4 * max(1.0, float(np.abs(ref).max()))
    folded = rewrites.fold_batchnorm(model)
    qdq, quantizer = _quantize(folded, calibration, method, keep_float)
    wrong, bad = _weights_exact(qdq, folded, keep_float)
    part = contract.partition(qdq)
    return folded, qdq, quantizer, ref, tol, [
        Check("fold", "BatchNormalization nodes left", sum(n.op_type == "BatchNormalization"
                                                           for n in folded.graph.node), 0),
        Check("fold", "max |folded − float| (logits, onnx.reference)",
              float(np.abs(_reference_logits(folded, few) - ref).max()), tol),
        Check("quantize", "invalid scales or weight zero points", bad, 0),
        Check("quantize", "int8 weights ≠ QuantizeLinear (onnx.reference)", wrong, 0),
        Check("contract", "violations of the illustrative NPU contract", len(contract.check_contract(qdq)), 0),
        Check("contract", "bytes crossing NPU ↔ CPU per image", part.crossing_bytes, 0)]


def _shared(a: np.ndarray, b: np.ndarray) -> int:
    """How many images of ``b`` are also in ``a``, compared by content (a hash of their bytes)."""
    import hashlib

    seen = {hashlib.sha256(np.ascontiguousarray(im).tobytes()).digest() for im in a}
    return sum(hashlib.sha256(np.ascontiguousarray(im).tobytes()).digest() in seen for im in b)


def _made_on() -> str:
    """The machine and date (:func:`npukit.measure.machine_summary`) with the versions that made the numbers."""
    import onnx
    import onnxruntime
    import openvino

    from .measure import machine_summary

    return (f"{machine_summary()} · OpenVINO {openvino.get_version()} · ONNX Runtime {onnxruntime.__version__} · "
            f"onnx {onnx.__version__}")


def _choose(device: Any) -> tuple[str, str]:
    from . import deploy

    if device is None:
        choice = deploy.choose_device(("NPU", "CPU"))   # prints the fallback message when there is no NPU
        return choice.device, choice.message
    device = _check.text(device, "device")
    return device, f"Compiling for {device}, as asked."


def closed_loop(model: Any, calibration: np.ndarray, heldout: np.ndarray, *, labels: Any = None,
                name: str | None = None, input_shape: Sequence[int] | None = None,
                normalize: tuple[Sequence[float], Sequence[float]] | None = None, machine: MachineSpec | None = None, device: str | None = None, method: str = "minmax",
                keep_float: Sequence[str] = (), min_agreement: float = 0.9, min_heldout: int = 200,
                warmup: int = 10, runs: int = 30) -> Project:
    """Chapter 8's loop on any image classifier: load, fold, quantize, contract, compile, verify, benchmark, profile.

    ``model`` is what :func:`load_model` reads (with ``input_shape``).
    ``calibration`` (the student's own images) sets the INT8 ranges:
    chapter 6's :func:`npukit.ptq.to_qdq` for a plain chain of
    Conv/Relu/GlobalAveragePool/Flatten/Gemm, ONNX Runtime's
    ``quantize_static`` (:func:`npukit.contract.ort_quantize_qdq`) for a
    graph with Add, pools or Clip, which chapter 6's writer does not handle,
    or when ``keep_float`` names layers to leave in float. ``heldout`` images
    (never the calibration ones: two checks count the held-out images and
    the images both sets share, by content) decide the
    verification: FP32 against ``onnx.reference`` of the float model on the
    first 2, INT8's top-1 agreement with FP32 on all of them (>=
    ``min_agreement``), and accuracy when ``labels`` are given. FP32 and INT8
    are timed against each other in ``runs`` interleaved rounds
    (:func:`npukit.deploy.benchmark_many`), then profiled per layer on a
    second compilation with ``PERF_COUNT``. ``device=None`` takes the NPU
    when there is one and says loudly when it falls back to the CPU
    (:func:`npukit.deploy.choose_device`). A failed check stops nothing: it
    shows as a failed row of the report. See "The term project" (chapters/project.md).

    Parameters
    ----------
    model : str, pathlib.Path, bytes or onnx.ModelProto
        The float image classifier (see :func:`load_model`).
    calibration, heldout : numpy.ndarray
        float32 images ``(n, 3, H, W)`` in [0, 1], the model's input size.
    labels : numpy.ndarray, optional
        The held-out images' classes, for accuracy.
    name : str, optional
        The report's title (default: the graph's name).
    input_shape : sequence of int, optional
        ``(1, 3, H, W)`` for a model whose input has symbolic dimensions.
    normalize : (mean, std), optional
        A model's per-channel input normalization (see :func:`load_model`).
    machine : graphs.MachineSpec, optional
        This machine's roofline (default: :func:`npukit.machine.profile`'s).
    device : str, optional
        An OpenVINO device; default: the NPU if present, else the CPU, said loudly.
    method : str
        The calibration: chapter 6's observer for a chain (``"minmax"``,
        ``"percentile"``, ``"mse"``); ONNX Runtime's for any other graph
        (``"minmax"``, ``"percentile"``, ``"entropy"``).
    keep_float : sequence of str
        Names of nodes to leave in float (ONNX Runtime's ``nodes_to_exclude``);
        the contract's checks then count what crosses to the CPU.
    min_agreement : float
        The INT8 agreement the verification requires, in [0, 1].
    min_heldout : int
        The held-out images the report's check requires (the rubric's 200).
    warmup, runs : int
        Untimed inferences and interleaved rounds of the benchmark.

    Returns
    -------
    Project

    Raises
    ------
    TypeError, ValueError
        As for :func:`load_model`; for images that are not float32 in [0, 1]
        of the model's input shape, labels that do not match ``heldout``, or
        an option of the wrong type or out of range.

    Examples
    --------
    >>> closed_loop("model.onnx", None, None)
    Traceback (most recent call last):
    ...
    ValueError: model must name an existing .onnx file, got 'model.onnx'
    """
    from . import deploy
    from .capstone import _profile
    from .graphs import MachineSpec
    from .machine import profile
    from .timing import Comparison

    proto = load_model(model, input_shape=input_shape, normalize=normalize)
    shape = tuple(d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim)
    calibration = _images(calibration, "calibration", shape)
    heldout = _images(heldout, "heldout", shape)
    if len(heldout) > 10_000:
        raise ValueError(f"heldout must hold at most 10,000 images (each is run twice), got {len(heldout):,}")
    classes = proto.graph.output[0].type.tensor_type.shape.dim[1].dim_value
    if labels is not None:
        labels = _check.labels(labels, "labels", classes=classes, n=len(heldout))
    name = _check.text(name or proto.graph.name or "model", "name")
    keep_float = tuple(_check.text(k, f"keep_float[{i}]")
                       for i, k in enumerate(_check.sequence(keep_float, "keep_float")))
    unknown = sorted(set(keep_float) - {n.name for n in proto.graph.node if n.op_type in ("Conv", "Gemm", "MatMul")})
    if unknown:
        raise ValueError(f"keep_float must name Conv, Gemm or MatMul nodes of the model, got {unknown}")
    from .rewrites import fold_batchnorm

    chain = _uses_ptq(fold_batchnorm(proto), keep_float)       # as _quantize will see it
    choices = _PTQ_METHODS if chain else _ORT_METHODS
    method = _check.text(method, "method")
    if method not in choices:
        which = "chapter 6's quantizer (a plain chain)" if chain else "ONNX Runtime's quantizer (this graph)"
        raise ValueError(f"method must be one of {choices} for {which}, got {method!r}")
    min_agreement = _check.real(min_agreement, "min_agreement", minimum=0.0, maximum=1.0)
    min_heldout = _check.integer(min_heldout, "min_heldout", minimum=1, maximum=10_000)
    warmup = _check.integer(warmup, "warmup", minimum=0, maximum=100_000)
    runs = _check.integer(runs, "runs", minimum=3, maximum=100_000)
    machine = profile().machine if machine is None else _check.instance(machine, "machine", MachineSpec)
    device, message = _choose(device)
    few = heldout[:2]
    folded, qdq, quantizer, ref, tol, checks = _front(proto, calibration, method, few, keep_float)
    checks[:0] = [Check("data", "held-out images", len(heldout), min_heldout, ">="),
                  Check("data", "images both in calibration and held out", _shared(calibration, heldout), 0)]
    models = {"FP32": folded, "INT8": qdq}
    timed = {k: deploy.compile(m, device, precision="f32") for k, m in models.items()}
    not_int8 = sum(op.precision not in ("u8", "i8") for op in deploy.executed_graph(timed["INT8"])
                   if op.layer_type in ("Convolution", "FullyConnected"))
    checks.append(Check("compile", "INT8 convolutions not executed in INT8", not_int8, 0))
    latency = deploy.benchmark_many(timed, heldout[:1], warmup=warmup, runs=runs)  # first: a cold start
    verdict = Comparison.from_times({k: b.times for k, b in latency.items()}).verdict("INT8")
    out = {k: np.concatenate([c(im[None])[0] for im in heldout]) for k, c in timed.items()}
    checks.append(Check("verify", "max |FP32 − float| (logits, onnx.reference)",
                        float(np.abs(out["FP32"][:len(few)] - ref).max()), tol))
    agreement = float((out["INT8"].argmax(1) == out["FP32"].argmax(1)).mean())
    checks.append(Check("verify", "INT8 top-1 agreement with FP32", agreement, min_agreement, ">="))
    accuracy = {} if labels is None else {k: float((v.argmax(1) == labels).mean()) for k, v in out.items()}
    profiles = {k: _profile(deploy.compile(m, device, precision="f32", profile=True), heldout[:1], m)
                for k, m in models.items()}
    layers, table = _ledger(folded, machine, profiles)
    return Project(name, proto, folded, qdq, quantizer, device, message, tuple(checks), agreement, accuracy,
                   latency, verdict, layers, table, machine, len(heldout), _npu_bounds(folded), _made_on())
