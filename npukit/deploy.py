"""Deploying a model: what runs where, what the runtime inserted, and how to time it honestly.

The invariant this module teaches: **a deployed model is not the graph you
exported.** A runtime picks a device (or falls back), splits the graph where a
device lacks an operator (and pays for every tensor that crosses the split),
fuses layers, inserts layout and precision conversions, and runs the result
after a cold start that costs more than every later inference. Each function
here makes one of those steps visible on a real runtime, OpenVINO's CPU
plugin, with the NPU and GPU used when present:

* :func:`choose_device` — prefer an NPU, say loudly when it falls back, fail
  when a missing device is demanded; :func:`compile` — one place for the
  device, the precision, the performance hint and the cache;
* :func:`supported_ops`, :class:`NPUProfile`, :func:`check_contract`,
  :func:`partition` — which operators a device takes, and the bytes that cross
  between NPU and CPU subgraphs when it does not take them all;
* :func:`executed_graph`, :func:`profile_layers` — the graph that actually ran,
  layer by layer, each slow layer tagged with why;
* :func:`benchmark`, :class:`AsyncPipeline` — cold and steady-state latency,
  and a timeline of overlapping asynchronous requests;
* :func:`decompose_groupnorm`, :func:`split_model`, :func:`quantize_qdq`,
  :func:`ort_session` — an operator a device lacks, a pipeline of models, an
  INT8 model, and ONNX Runtime beside OpenVINO.

``openvino``, ``onnx`` and ``onnxruntime`` are imported inside the functions.

See chapter 7, "Deploying to an NPU" (chapters/07_deploy.md).
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import statistics
import threading
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from . import _check

__all__ = [
    "DEVICES", "PRECISIONS", "HINTS",
    "DeviceChoice", "choose_device", "compile", "supported_ops",
    "NPUProfile", "ILLUSTRATIVE_NPU", "Violation", "check_contract", "Partition", "partition",
    "ExecutedOp", "executed_graph", "LayerTime", "profile_layers",
    "Benchmark", "benchmark", "Job", "AsyncPipeline", "host_alignment",
    "groupnorm_model", "decompose_groupnorm", "split_model", "quantize_qdq", "ort_session",
    "numbers",
]

#: The physical device families a course lab may ask for, in order of preference.
DEVICES = ("NPU", "GPU", "CPU")
#: Values of ``INFERENCE_PRECISION_HINT`` :func:`compile` accepts (None: the device's default).
PRECISIONS = ("f32", "bf16", "f16")
#: Values of ``PERFORMANCE_HINT`` :func:`compile` accepts.
HINTS = ("LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT")


def _core(core: Any = None) -> Any:
    if core is not None:
        return core
    import openvino as ov

    return ov.Core()


# ---- devices ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DeviceChoice:
    """Which device a program will use, what was there, and whether it fell back."""

    device: str  #: the device to compile for ("NPU", "GPU" or "CPU")
    available: tuple[str, ...]  #: ``Core.available_devices`` as found
    names: dict  #: device → its FULL_DEVICE_NAME
    fell_back: bool  #: True if the first preferred device was missing
    message: str  #: what was printed

    def __str__(self) -> str:
        return self.device


def choose_device(preferred: Sequence[str] = DEVICES, require: str | None = None, *,
                  core: Any = None, quiet: bool = False) -> DeviceChoice:
    """Pick the first device of ``preferred`` this machine has; say loudly when that is a fallback.

    A deployment script should neither silently run on the CPU when it was
    meant for the NPU nor crash on a laptop without one. So: the first
    available device of ``preferred`` is chosen, a message says which (and, in
    capitals, when it is not the first choice); ``require`` names a device that
    *must* be present, and its absence is an error that says how to fix it.
    ``GPU.0``/``GPU.1`` count as ``GPU``. (OpenVINO's own ``AUTO:NPU,CPU``
    falls back silently; plain ``AUTO`` never picks the NPU.)

    Parameters
    ----------
    preferred : sequence of str
        Device families in order of preference, each from :data:`DEVICES`.
    require : str, optional
        A device from :data:`DEVICES` that must be present.
    core : openvino.Core, optional
        The core to ask (default: a new one). Tests pass a fake.
    quiet : bool
        Do not print the message.

    Returns
    -------
    DeviceChoice

    Raises
    ------
    TypeError, ValueError
        For a bad ``preferred`` or ``require``.
    RuntimeError
        If ``require`` is missing, or none of ``preferred`` is present.

    Examples
    --------
    >>> choice = choose_device(("CPU",), quiet=True)
    >>> choice.device, choice.fell_back
    ('CPU', False)
    """
    preferred = _check.sequence(preferred, "preferred", min_length=1)
    for i, d in enumerate(preferred):
        _check.one_of(d, f"preferred[{i}]", DEVICES)
    if require is not None:
        _check.one_of(require, "require", DEVICES)
    core = _core(core)
    available = tuple(core.available_devices)
    families = {d.split(".")[0]: d for d in reversed(available)}
    names = {}
    for d in available:
        try:
            names[d] = str(core.get_property(d, "FULL_DEVICE_NAME"))
        except Exception:  # a fake core or a device that cannot answer
            names[d] = d
    if require is not None and require not in families:
        raise RuntimeError(
            f"require={require!r}: no {require} on this machine (OpenVINO sees {', '.join(available) or 'none'}). "
            f"Install the {require} driver, or pass require=None to fall back to {', '.join(preferred)}.")
    pick = require or next((d for d in preferred if d in families), None)
    if pick is None:
        raise RuntimeError(f"none of preferred={tuple(preferred)} is available; OpenVINO sees {available}")
    fell_back = pick != preferred[0] and require is None
    lines = [f"OpenVINO devices on this machine: {', '.join(f'{d} ({names[d]})' for d in available) or 'none'}"]
    if fell_back:
        missing = [d for d in preferred[:preferred.index(pick)]]
        lines.append(f"NO {' OR '.join(missing)} FOUND: FALLING BACK TO {pick}. Results are the same; speeds are "
                     f"{pick} speeds, not {missing[0]} speeds.")
    else:
        lines.append(f"Using {pick}.")
    message = "\n".join(lines)
    if not quiet:
        print(message)
    return DeviceChoice(pick, available, names, fell_back, message)


def _read(model: Any, core: Any) -> Any:
    """An ``openvino.Model`` from an ONNX ModelProto, a path, serialized bytes or a Model."""
    if isinstance(model, (str, pathlib.Path)):
        path = pathlib.Path(model)
        if not path.is_file():
            raise FileNotFoundError(f"model: no such file {str(path)!r}; pass an existing .onnx/.xml path, "
                                    "an onnx.ModelProto or an openvino.Model")
        return core.read_model(str(path))
    if isinstance(model, bytes):
        return core.read_model(model, b"")
    if type(model).__name__ == "ModelProto":
        return core.read_model(model.SerializeToString(), b"")
    if type(model).__name__ == "Model":
        return model
    raise TypeError(f"model must be an onnx.ModelProto, a path, bytes or an openvino.Model, got {type(model).__name__}")


def compile(model: Any, device: str = "CPU", *, precision: str | None = "f32", hint: str | None = "LATENCY",
            cache_dir: str | pathlib.Path | None = None, profile: bool = False,
            config: Mapping[str, Any] | None = None, core: Any = None) -> Any:
    """Compile a model for a device with an explicit precision, performance hint and cache.

    The CPU plugin's default precision is bf16 on CPUs with AMX or
    AVX512-BF16 and f32 elsewhere, so the course always states it. ``hint``
    sets ``PERFORMANCE_HINT`` (LATENCY: one stream; THROUGHPUT: as many
    streams as pay off); ``cache_dir`` sets ``CACHE_DIR`` so a second compile
    loads the blob; ``profile`` sets ``PERF_COUNT`` for :func:`profile_layers`.

    Parameters
    ----------
    model : onnx.ModelProto, str, pathlib.Path, bytes or openvino.Model
    device : str
        An OpenVINO device name: ``"CPU"``, ``"NPU"``, ``"GPU"``, or a virtual one
        (``"AUTO:NPU,CPU"``, ``"HETERO:NPU,CPU"``, ``"MULTI:…"``).
    precision : {"f32", "bf16", "f16"} or None
        ``INFERENCE_PRECISION_HINT``; None keeps the device's default.
    hint : {"LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"} or None
    cache_dir : path, optional
    profile : bool
    config : mapping, optional
        Further properties, passed as they are (OpenVINO rejects unknown ones).
    core : openvino.Core, optional

    Returns
    -------
    openvino.CompiledModel

    Raises
    ------
    TypeError, ValueError, FileNotFoundError
        For bad arguments, naming the argument; a physical device this machine
        lacks is a ``ValueError`` that lists the devices present.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> compiled = compile(CameraNet.pretrained().to_onnx(), "CPU", precision="f32")
    >>> compiled.get_property("INFERENCE_PRECISION_HINT")
    <Type: 'float32'>
    """
    if not isinstance(device, str) or not device:
        raise TypeError(f"device must be a device name such as 'CPU', got {device!r}")
    if precision is not None:
        _check.one_of(precision, "precision", PRECISIONS)
    if hint is not None:
        _check.one_of(hint, "hint", HINTS)
    if config is not None and not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping of property names to values, got {type(config).__name__}")
    core = _core(core)
    family = device.split(":")[0].split(".")[0]
    if family in DEVICES and family not in {d.split(".")[0] for d in core.available_devices}:
        raise ValueError(f"device {device!r} is not on this machine (OpenVINO sees {', '.join(core.available_devices)}); "
                         "use choose_device() to pick one with a visible fallback")
    if family not in DEVICES + ("AUTO", "HETERO", "MULTI", "BATCH"):
        raise ValueError(f"device must be one of {', '.join(DEVICES)} or AUTO/HETERO/MULTI:…, got {device!r}")
    props: dict[str, Any] = {}
    if precision is not None and family == "CPU":
        props["INFERENCE_PRECISION_HINT"] = precision
    if hint is not None:
        props["PERFORMANCE_HINT"] = hint
    if profile:
        props["PERF_COUNT"] = True
    if cache_dir is not None:
        props["CACHE_DIR"] = str(cache_dir)
    props.update(config or {})
    return core.compile_model(_read(model, core), device, props)


def supported_ops(model: Any, device: str = "CPU", *, core: Any = None) -> dict[str, str]:
    """``Core.query_model``: each operation of the model the device can run, mapped to that device.

    An operation absent from the result is one the device cannot run: on an
    NPU it would fall back (under ``HETERO``) or fail to compile.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> ops = supported_ops(CameraNet.pretrained().to_onnx(), "CPU")
    >>> ops["stem.conv"]
    'CPU'
    """
    if not isinstance(device, str) or not device:
        raise TypeError(f"device must be a device name such as 'CPU', got {device!r}")
    core = _core(core)
    if device.split(".")[0] not in core.available_devices and device in DEVICES:
        raise ValueError(f"device {device!r} is not on this machine (OpenVINO sees {', '.join(core.available_devices)})")
    return dict(core.query_model(_read(model, core), device))


# ---- an NPU contract ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class NPUProfile:
    """What one (hypothetical) NPU compiler accepts: a contract a model's graph must meet.

    Each field is one rule; ``sources`` says, per rule, which published NPU
    constraint inspired it. The profile is illustrative, not any vendor's
    real list (see chapter 7).
    """

    name: str
    ops: frozenset  #: ONNX operator types the NPU runs
    max_rank: int = 4  #: no tensor of higher rank
    conv_strides: tuple = (1, 2)  #: allowed Conv strides
    static_shapes: bool = True  #: every dimension known at compile time
    dtypes: frozenset = frozenset({"float32", "float16", "int8", "uint8", "int32"})  #: tensor element types
    max_tensors: int = 64  #: at most this many tensors (activations + weights) in one NPU subgraph
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "NPUProfile":
        """Build a profile from a dict (as read from JSON).

        Examples
        --------
        >>> NPUProfile.from_dict({"name": "toy", "ops": ["Conv", "Relu"]}).ops == {"Conv", "Relu"}
        True
        """
        if not isinstance(d, Mapping):
            raise TypeError(f"d must be a mapping (e.g. parsed JSON), got {type(d).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        extra = set(d) - known
        if extra or "name" not in d or "ops" not in d:
            raise ValueError(f"d must have 'name' and 'ops' and only keys from {sorted(known)}; got {sorted(d)}")
        kw = dict(d)
        kw["ops"] = frozenset(_check.sequence(list(kw["ops"]), "d['ops']"))
        if "dtypes" in kw:
            kw["dtypes"] = frozenset(kw["dtypes"])
        if "conv_strides" in kw:
            kw["conv_strides"] = tuple(kw["conv_strides"])
        kw["max_rank"] = _check.integer(kw.get("max_rank", 4), "d['max_rank']", minimum=1)
        kw["max_tensors"] = _check.integer(kw.get("max_tensors", 64), "d['max_tensors']", minimum=2)
        return cls(**kw)

    def to_dict(self) -> dict:
        """The profile as JSON-ready data."""
        d = dataclasses.asdict(self)
        d["ops"], d["dtypes"], d["conv_strides"] = sorted(self.ops), sorted(self.dtypes), list(self.conv_strides)
        d["sources"] = dict(self.sources)
        return d

    def without(self, *ops: str) -> "NPUProfile":
        """The same profile lacking some operator types.

        Examples
        --------
        >>> "Relu" in ILLUSTRATIVE_NPU.without("Relu").ops
        False
        """
        for i, op in enumerate(ops):
            if not isinstance(op, str):
                raise TypeError(f"ops[{i}] must be an operator type name, got {type(op).__name__}")
        return dataclasses.replace(self, name=f"{self.name} without {', '.join(ops)}", ops=self.ops - set(ops))


#: The course's illustrative NPU: each rule's inspiration is cited in chapter 7's references.
ILLUSTRATIVE_NPU = NPUProfile(
    name="illustrative NPU",
    ops=frozenset({"Conv", "Relu", "Clip", "Add", "Mul", "MaxPool", "AveragePool", "GlobalAveragePool",
                   "Gemm", "MatMul", "Flatten", "Reshape", "Concat", "Sigmoid", "Softmax",
                   "BatchNormalization", "QuantizeLinear", "DequantizeLinear"}),
    sources={
        "op": "supported-operator lists: Intel NPU plugin, AMD Ryzen AI (Vitis AI EP), Qualcomm QNN EP",
        "static_shape": "Intel NPU plugin and OpenVINO's feature table: no dynamic shapes on the NPU",
        "dtype": "Ryzen AI: INT8 QDQ models; Intel NPU: FP16/INT8 execution; no 64-bit tensors",
        "rank": "operator constraints of NPU stacks (≤ 4-D tensors for most vision operators)",
        "conv_stride": "the source article's contract table (strides 1 or 2)",
        "max_tensors": "the source article's contract table (≤ 64 tensors per NPU task)",
    },
)


@dataclasses.dataclass(frozen=True)
class Violation:
    """One broken rule: which node, which rule, and what exactly."""

    node: str
    op_type: str
    rule: str  #: "op", "rank", "conv_stride", "static_shape" or "dtype"
    detail: str


def _shapes(model: Any) -> dict[str, tuple[tuple, str]]:
    """Every tensor's (shape with None for unknown dims, dtype name) after ONNX shape inference."""
    import onnx
    from onnx import helper

    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        t = vi.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)
        out[vi.name] = (dims, np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type)).name)
    for init in inferred.graph.initializer:
        out[init.name] = (tuple(init.dims), np.dtype(helper.tensor_dtype_to_np_dtype(init.data_type)).name)
    return out


def _model_proto(model: Any, name: str = "model") -> Any:
    if type(model).__name__ != "ModelProto":
        raise TypeError(f"{name} must be an onnx.ModelProto, got {type(model).__name__}")
    return model


def check_contract(model: Any, profile: NPUProfile = ILLUSTRATIVE_NPU) -> list[Violation]:
    """Every node of an ONNX model that breaks a rule of ``profile``, one :class:`Violation` per rule.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> check_contract(CameraNet.pretrained().to_onnx())
    []
    >>> [v.node for v in check_contract(CameraNet.pretrained().to_onnx(), ILLUSTRATIVE_NPU.without("Relu"))][:2]
    ['stem.relu', 'block1.dw_relu']
    """
    model = _model_proto(model)
    if not isinstance(profile, NPUProfile):
        raise TypeError(f"profile must be an NPUProfile, got {type(profile).__name__}")
    shapes = _shapes(model)
    out = []
    for i, node in enumerate(model.graph.node):
        name = node.name or f"{node.op_type}_{i}"
        if node.op_type not in profile.ops:
            out.append(Violation(name, node.op_type, "op", f"{node.op_type} is not in the NPU's operator list"))
        if node.op_type == "Conv":
            strides = next((list(a.ints) for a in node.attribute if a.name == "strides"), [1])
            if any(s not in profile.conv_strides for s in strides):
                out.append(Violation(name, node.op_type, "conv_stride", f"strides {strides} not in {profile.conv_strides}"))
        for t in [*node.input, *node.output]:
            if not t or t not in shapes:
                continue
            dims, dtype = shapes[t]
            if len(dims) > profile.max_rank:
                out.append(Violation(name, node.op_type, "rank", f"{t} has rank {len(dims)} > {profile.max_rank}"))
            if profile.static_shapes and any(d is None or d == 0 for d in dims) and t not in {i.name for i in model.graph.initializer}:
                out.append(Violation(name, node.op_type, "static_shape", f"{t} has shape {dims} with unknown dimensions"))
            if dtype not in profile.dtypes:
                out.append(Violation(name, node.op_type, "dtype", f"{t} is {dtype}"))
    unique = {(v.node, v.rule, v.detail): v for v in out}
    return list(unique.values())


@dataclasses.dataclass(frozen=True)
class Partition:
    """A model split into device subgraphs, and the tensors that cross between them."""

    subgraphs: tuple  #: (device, tuple of node names) in execution order
    crossings: tuple  #: (tensor, from subgraph index, to subgraph index, bytes)

    @property
    def crossing_bytes(self) -> int:
        """Bytes copied between devices per inference (each crossing tensor once per consumer subgraph)."""
        return sum(c[3] for c in self.crossings)


def partition(model: Any, profile: NPUProfile = ILLUSTRATIVE_NPU) -> Partition:
    """Split a model into NPU and CPU subgraphs by ``profile`` and count the bytes that cross.

    Nodes are taken in topological order; a node with any contract violation
    runs on the CPU, every other on the NPU, and consecutive nodes on one
    device form one subgraph, which is cut again whenever it would hold more
    than ``profile.max_tensors`` tensors (activations and weights). A tensor
    made in one subgraph and read in another is copied once per reading
    subgraph; graph inputs and outputs (host I/O) are not counted.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> p = partition(CameraNet.pretrained().to_onnx(), ILLUSTRATIVE_NPU.without("GlobalAveragePool"))
    >>> [d for d, _ in p.subgraphs], p.crossing_bytes
    (['NPU', 'CPU', 'NPU'], 8704)
    """
    from .graphs import topological_order

    model = _model_proto(model)
    bad = {v.node for v in check_contract(model, profile)}
    shapes = _shapes(model)
    inits = {i.name for i in model.graph.initializer}
    nodes = model.graph.node
    groups: list[tuple[str, list]] = []
    tensors_in_group: set = set()
    for idx in topological_order(model):
        node = nodes[idx]
        name = node.name or f"{node.op_type}_{idx}"
        device = "CPU" if name in bad else "NPU"
        mine = {t for t in [*node.input, *node.output] if t}
        if (not groups or groups[-1][0] != device
                or (device == "NPU" and len(tensors_in_group | mine) > profile.max_tensors)):
            groups.append((device, []))
            tensors_in_group = set()
        groups[-1][1].append(idx)
        tensors_in_group |= mine
    made_in = {t: g for g, (_, idxs) in enumerate(groups) for i in idxs for t in nodes[i].output}
    crossings = []
    for g, (_, idxs) in enumerate(groups):
        read = {t for i in idxs for t in nodes[i].input if t and t not in inits}
        for t in sorted(read):
            if t in made_in and made_in[t] != g and groups[made_in[t]][0] != groups[g][0]:
                dims, dtype = shapes[t]
                crossings.append((t, made_in[t], g, int(np.prod(dims)) * np.dtype(dtype).itemsize))
    subgraphs = tuple((d, tuple(nodes[i].name or f"{nodes[i].op_type}_{i}" for i in idxs)) for d, idxs in groups)
    return Partition(subgraphs, tuple(crossings))


# ---- the executed graph and per-layer profiles ---------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ExecutedOp:
    """One operation of the graph OpenVINO executes, read from its runtime info."""

    name: str
    layer_type: str  #: e.g. Convolution, Reorder, Subgraph, FullyConnected, Input, Const
    primitive: str  #: the kernel, e.g. brgconv_avx512_f32 (differs between CPUs)
    precision: str  #: runtimePrecision
    output_precision: str
    output_layout: str  #: e.g. abcd (NCHW), acdb (NHWC)
    input_layouts: tuple
    input_precisions: tuple
    inputs: tuple  #: friendly names of the operations feeding it
    original: tuple  #: names of the model's layers fused into it
    order: int

    @property
    def fused(self) -> bool:
        """True if it executes more than one of the model's layers."""
        return len(self.original) > 1

    @property
    def converts_layout(self) -> bool:
        return self.layer_type == "Reorder" and any(x != self.output_layout for x in self.input_layouts)

    @property
    def converts_precision(self) -> bool:
        return any(p != self.output_precision for p in self.input_precisions) and self.layer_type in ("Reorder", "Convert")


def executed_graph(compiled: Any, *, constants: bool = False) -> list[ExecutedOp]:
    """The operations a compiled model executes, in order, with fusion, layouts and precisions.

    Reads ``compiled.get_runtime_model()``: each op's runtime info gives its
    layer type, kernel, precisions, layout and the original layers fused into
    it. ``constants=False`` leaves out ``Const`` operations (weights).

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> ops = executed_graph(compile(CameraNet.pretrained().to_onnx(), "CPU"))
    >>> [op.original for op in ops if op.layer_type == "Convolution"][0][-2:]
    ('stem.bn', 'stem.relu')
    """
    if not hasattr(compiled, "get_runtime_model"):
        raise TypeError(f"compiled must be an openvino.CompiledModel, got {type(compiled).__name__}")
    info_of, out = {}, []
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = {k: v.astype(str) for k, v in op.get_rt_info().items()}
        info_of[op.get_friendly_name()] = info
        srcs = tuple(i.get_source_output().get_node().get_friendly_name() for i in op.inputs())
        if info.get("layerType") == "Const" and not constants:
            continue
        out.append(ExecutedOp(
            name=op.get_friendly_name(), layer_type=info.get("layerType", "?"), primitive=info.get("primitiveType", "?"),
            precision=info.get("runtimePrecision", "?"), output_precision=info.get("outputPrecisions", "?"),
            output_layout=info.get("outputLayouts", "?"),
            input_layouts=tuple(info_of[s].get("outputLayouts", "?") for s in srcs if s in info_of),
            input_precisions=tuple(info_of[s].get("outputPrecisions", "?") for s in srcs if s in info_of),
            inputs=srcs, original=tuple(x for x in info.get("originalLayersNames", "").split(",") if x),
            order=int(info.get("execOrder", len(out)))))
    return out


@dataclasses.dataclass(frozen=True)
class LayerTime:
    """One executed layer's measured time, and why it may be slow."""

    name: str
    layer_type: str
    kernel: str
    microseconds: float  #: median real time over the runs
    share: float  #: fraction of the summed layer times
    tags: tuple  #: e.g. ("layout conversion",), ("memory-bound",)


def profile_layers(compiled: Any, inputs: Any, runs: int = 20, *, model: Any = None, machine: Any = None,
                   device_of: Mapping[str, str] | None = None) -> list[LayerTime]:
    """Per-layer times from ``PERF_COUNT``, each layer tagged with why it costs what it costs.

    Tags: ``layout conversion`` / ``precision conversion`` (a Reorder the
    runtime inserted), ``reference kernel`` (a slow generic implementation),
    ``fallback`` (``device_of`` says it ran off the NPU), and — given the ONNX
    ``model`` and a roofline ``machine`` (chapter 3) — ``memory-bound`` or
    ``compute-bound`` from the arithmetic intensity of the layers fused into it.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> compiled = compile(CameraNet.pretrained().to_onnx(), "CPU", profile=True)
    >>> rows = profile_layers(compiled, np.zeros((1, 3, 32, 32), np.float32), runs=2)
    >>> any("layout conversion" in r.tags for r in rows)
    True
    """
    runs = _check.integer(runs, "runs", minimum=1)
    if not hasattr(compiled, "create_infer_request"):
        raise TypeError(f"compiled must be an openvino.CompiledModel, got {type(compiled).__name__}")
    try:
        on = str(compiled.get_property("PERF_COUNT")).upper() in ("YES", "TRUE", "1")
    except Exception:
        on = False
    if not on:
        raise ValueError("compiled was compiled without PERF_COUNT: use deploy.compile(..., profile=True)")
    request = compiled.create_infer_request()
    _check_inputs(compiled, inputs)
    request.infer(inputs)  # warm-up
    times: dict[str, list[float]] = {}
    meta = {}
    for _ in range(runs):
        request.infer(inputs)
        for p in request.profiling_info:
            if p.status.name == "EXECUTED":
                times.setdefault(p.node_name, []).append(p.real_time.total_seconds() * 1e6)
                meta[p.node_name] = (p.node_type, p.exec_type)
    executed = {op.name: op for op in executed_graph(compiled)}
    bound = _bounds(model, machine) if model is not None and machine is not None else {}
    med = {k: statistics.median(v) for k, v in times.items()}
    total = sum(med.values()) or 1.0
    rows = []
    for name, us in sorted(med.items(), key=lambda kv: -kv[1]):
        kind, kernel = meta[name]
        op = executed.get(name)
        tags = []
        if op is not None and op.converts_layout:
            tags.append("layout conversion")
        if op is not None and op.converts_precision:
            tags.append("precision conversion")
        if "ref" in kernel.split("_"):
            tags.append("reference kernel")
        originals = op.original if op is not None else ()
        if device_of and any(device_of.get(o, "NPU") != "NPU" for o in originals or (name,)):
            tags.append("fallback")
        kinds = [bound[o] for o in originals or (name,) if o in bound]
        if kinds:
            tags.append(f"{kinds[0]}-bound")
        rows.append(LayerTime(name, kind, kernel, us, us / total, tuple(tags)))
    return rows


def _bounds(model: Any, machine: Any) -> dict[str, str]:
    """ONNX node or output name → "memory"/"compute", judged by the layer that does the arithmetic.

    A runtime fuses BatchNormalization and Relu into the convolution before
    them (and may rename the convolution), so a name that belongs to such an
    elementwise follower is judged by the Conv/Gemm/MatMul it follows.
    """
    from .graphs import op_counts

    model = _model_proto(model)
    counts = {c.name: c for c in op_counts(model)}
    nodes = {n.name: n for n in model.graph.node}
    producer = {t: n for n in model.graph.node for t in n.output}
    out: dict[str, str] = {}
    for n in model.graph.node:
        anchor = n
        while anchor.op_type not in ("Conv", "Gemm", "MatMul") and anchor.input and anchor.input[0] in producer:
            anchor = producer[anchor.input[0]]
        if anchor.op_type not in ("Conv", "Gemm", "MatMul"):
            anchor = n
        c = counts.get(anchor.name)
        if c is None or anchor.name not in nodes:
            continue
        kind = machine.bound(c.flops / c.bytes) if c.bytes else "compute"
        for key in (n.name, *n.output):
            out[key] = kind
    return out


# ---- measuring --------------------------------------------------------------------------------------


def _check_inputs(compiled: Any, inputs: Any) -> None:
    """Refuse inputs whose shape or dtype does not match the compiled model's (static) inputs."""
    arrays = list(inputs.values()) if isinstance(inputs, Mapping) else [inputs]
    ports = compiled.inputs
    if len(arrays) != len(ports):
        raise ValueError(f"inputs must give {len(ports)} array(s), one per model input, got {len(arrays)}")
    for port, a in zip(ports, arrays):
        a = _check.as_array(a, "inputs")
        ps = port.get_partial_shape()
        want = port.get_element_type().to_dtype()
        if a.dtype != want:
            raise ValueError(f"inputs: {port.get_any_name()} must be {want}, got {a.dtype}; convert with .astype")
        if ps.is_static and tuple(a.shape) != tuple(ps.to_shape()):
            raise ValueError(f"inputs: {port.get_any_name()} must have shape {tuple(ps.to_shape())}, got {a.shape}; "
                             "reshape the model (model.reshape) or pad the input")


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """Cold and steady-state latency of one compiled model, in seconds."""

    first: float  #: the first inference of a fresh request
    times: tuple  #: the steady-state runs, after warm-up

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile of the steady-state times."""
        if not 0 <= q <= 100:
            raise ValueError(f"q must be in [0, 100], got {q}")
        return float(np.percentile(self.times, q))


def benchmark(compiled: Any, inputs: Any, warmup: int = 5, runs: int = 50) -> Benchmark:
    """Time a fresh request's first inference, then ``runs`` inferences after ``warmup`` untimed ones.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> b = benchmark(compile(CameraNet.pretrained().to_onnx()), np.zeros((1, 3, 32, 32), np.float32), 2, 5)
    >>> len(b.times), b.median > 0
    (5, True)
    """
    warmup = _check.integer(warmup, "warmup", minimum=0)
    runs = _check.integer(runs, "runs", minimum=1)
    if not hasattr(compiled, "create_infer_request"):
        raise TypeError(f"compiled must be an openvino.CompiledModel, got {type(compiled).__name__}")
    _check_inputs(compiled, inputs)
    request = compiled.create_infer_request()
    t0 = time.perf_counter()
    request.infer(inputs)
    first = time.perf_counter() - t0
    for _ in range(warmup):
        request.infer(inputs)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        request.infer(inputs)
        times.append(time.perf_counter() - t0)
    return Benchmark(first, tuple(times))


@dataclasses.dataclass(frozen=True)
class Job:
    """One asynchronous inference: which request ran it, and when (seconds from the pipeline's start)."""

    job: int
    request: int
    fill_start: float  #: the host starts writing the input into the request's own tensor
    start: float  #: start_async called
    end: float  #: the completion callback ran


class AsyncPipeline:
    """Run inputs through ``requests`` infer requests at once, recording each job's timestamps.

    Each request owns its input tensor; the host fills a free request's tensor
    (one buffer per request: with two requests, double buffering) and starts
    it, and the completion callback stamps the end and frees the request. With
    one request the host waits for every inference; with more, filling one
    buffer overlaps the inference of another.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> pipe = AsyncPipeline(compile(CameraNet.pretrained().to_onnx()), requests=2)
    >>> jobs = pipe.run([np.zeros((1, 3, 32, 32), np.float32)] * 6)
    >>> len(jobs), sorted({j.request for j in jobs})
    (6, [0, 1])
    """

    def __init__(self, compiled: Any, requests: int = 2) -> None:
        if not hasattr(compiled, "create_infer_request"):
            raise TypeError(f"compiled must be an openvino.CompiledModel, got {type(compiled).__name__}")
        import queue

        self.compiled = compiled
        self.n = _check.integer(requests, "requests", minimum=1)
        self.requests = [compiled.create_infer_request() for _ in range(self.n)]
        self.outputs: dict[int, np.ndarray] = {}
        self._free: queue.Queue = queue.Queue()
        self._job = [-1] * self.n  # the job each request is running
        self._stamps: dict[int, list] = {}
        self._t0 = 0.0
        self._lock = threading.Lock()
        for rid, req in enumerate(self.requests):
            # set once: replacing a callback while OpenVINO may still be running it is not safe
            req.set_callback(self._done, rid)

    def _done(self, rid: int) -> None:
        """Completion callback, on one of OpenVINO's threads: stamp the end, keep the output, free the request."""
        end = time.perf_counter() - self._t0
        job = self._job[rid]
        with self._lock:
            self._stamps[job].append(end)
            self.outputs[job] = self.requests[rid].get_output_tensor(0).data.copy()
        self._free.put(rid)

    def run(self, inputs: Sequence[np.ndarray], *, work: Callable[[np.ndarray], Any] | None = None) -> list[Job]:
        """Push every array of ``inputs`` through; return the jobs in submission order.

        ``work``, if given, is called on each input on the host before it is
        written into a request (pre-processing that can overlap inference).
        """
        inputs = _check.sequence(inputs, "inputs", min_length=1)
        for a in inputs:
            _check_inputs(self.compiled, a)
        while not self._free.empty():
            self._free.get()
        for i in range(self.n):
            self._free.put(i)
        self._stamps = {}
        self._t0 = time.perf_counter()
        for job, x in enumerate(inputs):
            rid = self._free.get()
            fill = time.perf_counter() - self._t0
            if work is not None:
                work(x)
            req = self.requests[rid]
            req.get_input_tensor(0).data[...] = x
            self._job[rid] = job
            with self._lock:
                self._stamps[job] = [rid, fill, time.perf_counter() - self._t0]
            req.start_async()
        for _ in range(self.n):  # every request back in the free queue: all callbacks have run
            self._free.get(timeout=60)
        return [Job(j, *self._stamps[j]) for j in range(len(inputs))]

    @staticmethod
    def throughput(jobs: Sequence[Job]) -> float:
        """Inferences per second over the whole run."""
        jobs = _check.sequence(jobs, "jobs", min_length=1)
        return len(jobs) / (max(j.end for j in jobs) - min(j.fill_start for j in jobs))


def host_alignment(samples: int = 2000, nbytes: int = 1000) -> dict[int, float]:
    """The fraction of fresh ``openvino.Tensor`` host buffers whose address is a multiple of 16, 64, 128.

    Measured, not promised: OpenVINO's default allocator guarantees 16 bytes;
    anything more is luck. Keeps every tensor alive until counted, so the
    allocator cannot hand one address back twice.

    Examples
    --------
    >>> host_alignment(50)[16]
    1.0
    """
    import openvino as ov

    samples = _check.integer(samples, "samples", minimum=1)
    nbytes = _check.integer(nbytes, "nbytes", minimum=1)
    tensors = [ov.Tensor(ov.Type.u8, [nbytes]) for _ in range(samples)]
    addresses = [t.data.ctypes.data for t in tensors]
    return {a: sum(x % a == 0 for x in addresses) / samples for a in (16, 64, 128)}


# ---- an operator the device lacks: GroupNormalization ---------------------------------------------


def groupnorm_model(channels: int = 16, groups: int = 4, size: int = 8, *, seed: int = 0) -> Any:
    """A small ONNX model (opset 21): Conv 3×3 → GroupNormalization → Relu, on a (1, 3, size, size) input.

    Examples
    --------
    >>> [n.op_type for n in groupnorm_model().graph.node]
    ['Conv', 'GroupNormalization', 'Relu']
    """
    from onnx import TensorProto, checker, helper, numpy_helper

    channels = _check.integer(channels, "channels", minimum=1)
    groups = _check.integer(groups, "groups", minimum=1)
    size = _check.integer(size, "size", minimum=1)
    if channels % groups:
        raise ValueError(f"groups must divide channels ({channels}), got {groups}")
    rng = np.random.default_rng(_check.integer(seed, "seed", minimum=0))
    inits = [numpy_helper.from_array(rng.standard_normal((channels, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array((1 + 0.1 * rng.standard_normal(channels)).astype(np.float32), "gamma"),
             numpy_helper.from_array((0.1 * rng.standard_normal(channels)).astype(np.float32), "beta")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("GroupNormalization", ["c", "gamma", "beta"], ["g"], name="gn",
                              num_groups=groups, epsilon=1e-5),
             helper.make_node("Relu", ["g"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "gn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, size, size])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    checker.check_model(model, full_check=True)
    return model


def decompose_groupnorm(model: Any) -> Any:
    """Replace every GroupNormalization by the primitives an NPU compiler would lower it to.

    ``(N, C, H, W)`` → Reshape to ``(N, G, C/G·H·W)`` → ReduceMean → Sub →
    Mul (square) → ReduceMean → Add ε → Sqrt → Div → Reshape back → Mul by
    the per-channel scale → Add the bias: thirteen nodes of supported types
    (two of them, reshaping the scale and bias, fold to constants), with
    full-size intermediate tensors between them unless a compiler fuses them.
    Shapes must be static. The result passes ``onnx.checker``.

    Examples
    --------
    >>> from collections import Counter
    >>> ops = Counter(n.op_type for n in decompose_groupnorm(groupnorm_model()).graph.node)
    >>> ops["GroupNormalization"], ops["ReduceMean"], ops["Reshape"]
    (0, 2, 4)
    """
    import onnx
    from onnx import helper, numpy_helper

    model = _model_proto(model)
    shapes = _shapes(model)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    extra = []
    for node in model.graph.node:
        if node.op_type != "GroupNormalization":
            out.graph.node.append(node)
            continue
        x, scale, bias = node.input
        dims, _ = shapes[x]
        if any(d is None for d in dims) or len(dims) < 3:
            raise ValueError(f"model: {node.name} needs a static input shape of rank >= 3, got {dims}")
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        g, eps = int(attrs["num_groups"]), float(attrs.get("epsilon", 1e-5))
        n, c = dims[0], dims[1]
        p = f"{node.name or 'gn'}/"
        bshape = [c] + [1] * (len(dims) - 2)
        extra += [numpy_helper.from_array(np.array([n, g, -1], np.int64), p + "grouped"),
                  numpy_helper.from_array(np.array(dims, np.int64), p + "shape"),
                  numpy_helper.from_array(np.array([2], np.int64), p + "axes"),
                  numpy_helper.from_array(np.array(eps, np.float32), p + "eps"),
                  numpy_helper.from_array(np.array(bshape, np.int64), p + "cshape")]
        mk = helper.make_node
        out.graph.node.extend([
            mk("Reshape", [x, p + "grouped"], [p + "xg"], name=p + "reshape"),
            mk("ReduceMean", [p + "xg", p + "axes"], [p + "mean"], name=p + "mean", keepdims=1),
            mk("Sub", [p + "xg", p + "mean"], [p + "d"], name=p + "sub"),
            mk("Mul", [p + "d", p + "d"], [p + "d2"], name=p + "square"),
            mk("ReduceMean", [p + "d2", p + "axes"], [p + "var"], name=p + "var", keepdims=1),
            mk("Add", [p + "var", p + "eps"], [p + "ve"], name=p + "add_eps"),
            mk("Sqrt", [p + "ve"], [p + "std"], name=p + "sqrt"),
            mk("Div", [p + "d", p + "std"], [p + "ng"], name=p + "div"),
            mk("Reshape", [p + "ng", p + "shape"], [p + "n"], name=p + "unreshape"),
            mk("Reshape", [scale, p + "cshape"], [p + "s"], name=p + "scale_shape"),
            mk("Reshape", [bias, p + "cshape"], [p + "b"], name=p + "bias_shape"),
            mk("Mul", [p + "n", p + "s"], [p + "ns"], name=p + "scale"),
            mk("Add", [p + "ns", p + "b"], [node.output[0]], name=p + "bias"),
        ])
    out.graph.initializer.extend(extra)
    onnx.checker.check_model(out)
    return out


# ---- pipelines, INT8, ONNX Runtime -----------------------------------------------------------------


def split_model(model: Any, cuts: Sequence[str]) -> list[Any]:
    """Cut a single-input, single-output ONNX model at the named tensors into a chain of models.

    Each piece reads the previous piece's output; running them in turn gives
    the whole model's output. This is how a pipeline of models (encoder →
    denoiser → decoder) hands tensors from one compiled model to the next.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> parts = split_model(CameraNet.pretrained().to_onnx(), ["block1.pw_relu"])
    >>> [p.graph.input[0].name for p in parts], [p.graph.output[0].name for p in parts]
    (['image', 'block1.pw_relu'], ['block1.pw_relu', 'logits'])
    """
    import onnx.utils

    model = _model_proto(model)
    cuts = _check.sequence(cuts, "cuts", min_length=1)
    made = {t for n in model.graph.node for t in n.output}
    for i, t in enumerate(cuts):
        if t not in made:
            raise ValueError(f"cuts[{i}] must be a tensor the model computes, got {t!r}")
    inferred = onnx.shape_inference.infer_shapes(model)
    ex = onnx.utils.Extractor(inferred)
    ends = [model.graph.input[0].name, *cuts, model.graph.output[0].name]
    return [ex.extract_model([a], [b]) for a, b in zip(ends, ends[1:])]


def quantize_qdq(model: Any, calibration: np.ndarray, *, per_channel: bool = True) -> Any:
    """An INT8 QDQ model made with ONNX Runtime's ``quantize_static`` (u8 activations, s8 weights).

    The calibration reader feeds ``calibration`` one image at a time; min-max
    ranges are recorded and QuantizeLinear/DequantizeLinear pairs inserted
    around each Conv and Gemm. (Chapter 6 builds QDQ graphs by hand; this is
    the practitioners' tool.) Fold BatchNorm first (``rewrites.fold_batchnorm``)
    so the quantized convolutions are the ones that will run.

    Examples
    --------
    >>> from npukit.data import shapes_dataset
    >>> from npukit.rewrites import fold_batchnorm
    >>> from npukit.models import CameraNet
    >>> q = quantize_qdq(fold_batchnorm(CameraNet.pretrained().to_onnx()), shapes_dataset(8, seed=3)[0])
    >>> sorted({n.op_type for n in q.graph.node} & {"QuantizeLinear", "DequantizeLinear"})
    ['DequantizeLinear', 'QuantizeLinear']
    """
    import tempfile

    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    model = _model_proto(model)
    calibration = _check.as_array(calibration, "calibration")
    name = model.graph.input[0].name
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    if calibration.ndim != len(dims) or tuple(calibration.shape[1:]) != tuple(dims[1:]) or calibration.dtype != np.float32:
        raise ValueError(f"calibration must be float32 images of shape (n, {', '.join(map(str, dims[1:]))}), "
                         f"got {calibration.dtype} {calibration.shape}")

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter([{name: calibration[i:i + 1]} for i in range(len(calibration))])

        def get_next(self) -> Any:
            return next(self.it, None)

    import logging

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer's advice to pre-process goes to the root logger
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = pathlib.Path(tmp) / "float.onnx", pathlib.Path(tmp) / "qdq.onnx"
        onnx.save(model, src)
        try:
            quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ, per_channel=bool(per_channel),
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        finally:
            root.setLevel(level)
        return onnx.load(str(dst))


def ort_session(model: Any, level: str = "all", *, threads: int | None = None) -> Any:
    """An ONNX Runtime session on the CPU execution provider with a named graph-optimisation level.

    ``level``: ``"disabled"``, ``"basic"`` (constant folding, redundant nodes),
    ``"extended"`` (fusions such as Conv+Relu), ``"all"`` (plus layout
    optimisations, NCHWc on x86).

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> s = ort_session(CameraNet.pretrained().to_onnx())
    >>> s.get_providers()
    ['CPUExecutionProvider']
    """
    import onnxruntime as ort

    model = _model_proto(model)
    levels = {"disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
              "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
    _check.one_of(level, "level", tuple(levels))
    opts = ort.SessionOptions()
    opts.graph_optimization_level = levels[level]
    opts.log_severity_level = 3
    if threads is not None:
        opts.intra_op_num_threads = _check.integer(threads, "threads", minimum=1)
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def numbers(ctx: Any) -> list:
    """Chapter 7's rows of the "numbers so far" table: what OpenVINO's CPU plugin did with CameraNet.

    Examples
    --------
    >>> from npukit import tally
    >>> [r.quantity for r in numbers(tally.Context())][0]
    'executed operations (OpenVINO CPU, f32)'
    """
    from . import tally

    if not isinstance(ctx, tally.Context):
        raise TypeError(f"ctx must be a tally.Context, got {type(ctx).__name__}")
    compiled = compile(ctx.model, "CPU", precision="f32")
    ops = [op for op in executed_graph(compiled) if op.layer_type not in ("Input", "Output")]
    reorders = sum(op.layer_type == "Reorder" for op in ops)
    b = benchmark(compiled, ctx.images[:1], warmup=5, runs=30)
    how = "deploy.executed_graph(deploy.compile(model, 'CPU', precision='f32'))"
    return [
        tally.Row(7, "executed operations (OpenVINO CPU, f32)", f"{len(ops)} ({reorders} inserted Reorders)", how),
        tally.Row(7, "latency, batch 1, CPU f32: first / steady median",
                  f"{b.first * 1e3:.2f} ms / {b.median * 1e3:.3f} ms", "deploy.benchmark (this machine)"),
    ]
