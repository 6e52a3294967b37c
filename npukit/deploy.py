"""Deploying a model: which device runs it, what the runtime made of it, and how to time it honestly.

The invariant this module teaches: **a deployed model is not the graph you
exported.** A runtime picks a device (or falls back), fuses layers, inserts
layout and precision conversions, and runs the result after a cold start
that costs more than every later inference. Each function makes one step
visible on OpenVINO's CPU plugin (an NPU or GPU when present):
:func:`choose_device` and :func:`compile` (device, precision, hint, cache);
:func:`executed_graph` and :func:`profile_layers` (what ran, and why a layer
is slow); :func:`benchmark` and :class:`AsyncPipeline` (cold and steady
latency, overlapping requests on a timeline). What a device accepts is
:mod:`npukit.contract`. ``openvino`` is imported inside the functions.

See chapter 7, "Deploying to an NPU" (chapters/07_deploy.md).
"""

from __future__ import annotations

import dataclasses
import pathlib
import statistics
import threading
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import _check, _tally
from .graphs import _walkable

__all__ = [
    "DEVICES", "PRECISIONS", "HINTS", "DeviceChoice", "choose_device", "compile",
    "ExecutedOp", "executed_graph", "OVERHEAD_FRACTION", "RESOLUTION_US", "LayerTime", "LayerProfile",
    "profile_layers", "profile_many",
    "TAIL_RUNS", "Benchmark", "benchmark", "benchmark_many", "Job", "AsyncPipeline", "explain_error", "numbers",
]

#: The physical device families a course lab may ask for, in order of preference.
DEVICES = ("NPU", "GPU", "CPU")
#: Values of ``INFERENCE_PRECISION_HINT`` :func:`compile` accepts (None: the device's default).
PRECISIONS = ("f32", "bf16", "f16")
#: Values of ``PERFORMANCE_HINT`` :func:`compile` accepts.
HINTS = ("LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT")


def _core(core: Any = None) -> Any:
    if core is not None:
        if not hasattr(core, "available_devices"):
            raise TypeError(f"core must be an openvino.Core (or None for a new one), got {type(core).__name__}")
        return core
    import openvino as ov

    return ov.Core()


# ---- devices ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DeviceChoice:
    """Which device a program will use, what was there, and whether it fell back."""

    device: str  #: the device to compile for, as OpenVINO names it ("NPU", "GPU.0", "CPU" …)
    available: tuple[str, ...]  #: ``Core.available_devices`` as found
    names: dict  #: device → its FULL_DEVICE_NAME
    fell_back: bool  #: True if the first preferred device was missing
    message: str  #: what was printed

    def __post_init__(self) -> None:
        _check.record(self, text=("device", "message"), names=("available",), flags=("fell_back",))
        if not isinstance(self.names, dict):
            raise TypeError(f"names must be a dict of device → full name, got {type(self.names).__name__}")
        if self.device not in self.available:
            raise ValueError(f"device must be one of available ({', '.join(self.available)}), got {self.device!r}")

    def __str__(self) -> str:
        return self.device


def _present(name: str, available: Sequence[str]) -> str | None:
    """The available device ``name`` denotes: ``"GPU"`` is any ``GPU.n``, ``"GPU.1"`` only itself."""
    if name in available:
        return name
    return next((d for d in available if d.split(".")[0] == name), None)


def choose_device(preferred: Sequence[str] = DEVICES, require: str | None = None, *,
                  core: Any = None, quiet: bool = False) -> DeviceChoice:
    """Pick the first device of ``preferred`` this machine has; say loudly when that is a fallback.

    Neither run silently on the CPU nor crash without an NPU: the first
    available device of ``preferred`` is chosen and a message says which, in
    capitals when it is a fallback (``NO NPU FOUND: falling back to the CPU
    plugin``); a missing ``require`` is an error that says how to fix it.
    ``"GPU"`` matches ``GPU.0``, ``GPU.1`` …; a name OpenVINO does not list
    counts as missing. (OpenVINO's ``AUTO:NPU,CPU`` falls back silently.)
    The course's one device choice: :func:`npukit.measure.device_report`
    calls it too.

    Parameters
    ----------
    preferred : sequence of str
        Physical device names in order of preference, e.g. ``("NPU", "GPU", "CPU")``.
    require : {"NPU", "GPU", "CPU"}, optional
        A device that must be present.
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
        For a bad ``preferred`` (not device names, or a virtual device) or ``require``.
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
        if not _check.text(d, f"preferred[{i}]"):
            raise ValueError(f"preferred[{i}] must be a device name such as 'NPU', got ''")
        if ":" in d or d.split(".")[0] in ("AUTO", "HETERO", "MULTI", "BATCH"):
            raise ValueError(f"preferred[{i}] must name a physical device such as 'NPU', 'GPU' or 'CPU', "
                             f"not the virtual device {d!r} (compile for that directly)")
    if require is not None:
        _check.one_of(require, "require", DEVICES)
    quiet = _check.boolean(quiet, "quiet")
    core = _core(core)
    available = tuple(core.available_devices)
    names = {}
    for d in available:
        try:
            names[d] = str(core.get_property(d, "FULL_DEVICE_NAME"))
        except Exception:  # a fake core or a device that cannot answer
            names[d] = d
    seen = ", ".join(f"{d} ({names[d]})" for d in available) or "none"
    if require is not None and _present(require, available) is None:
        raise RuntimeError(
            f"require={require!r}: no {require} on this machine (OpenVINO sees {seen}). "
            f"Install the {require} driver, or pass require=None to fall back to {', '.join(preferred)}.")
    wanted = (require,) if require is not None else preferred
    rank = next((i for i, d in enumerate(wanted) if _present(d, available)), None)
    if rank is None:
        raise RuntimeError(f"none of preferred={tuple(preferred)} is available; OpenVINO sees {seen}")
    pick = _present(wanted[rank], available)
    fell_back = rank > 0
    lines = [f"OpenVINO devices on this machine: {seen}"]
    if fell_back:
        missing = list(wanted[:rank])
        lines.append(f"NO {' OR '.join(missing)} FOUND: falling back to the {wanted[rank]} plugin. Speeds are "
                     f"{wanted[rank]} speeds, not {missing[0]} speeds, and results may differ slightly from "
                     f"{missing[0]} results (an NPU computes in FP16; the precision you set applies to the "
                     f"{wanted[rank]}).")
    else:
        lines.append(f"Using {pick}.")
    message = "\n".join(lines)
    if not quiet:
        print(message)
    return DeviceChoice(pick, available, names, fell_back, message)


def _read_path(model: str | pathlib.Path) -> pathlib.Path:
    path = pathlib.Path(model)
    if not path.is_file():
        raise FileNotFoundError(f"model: no such file {str(path)!r}; pass an existing .onnx/.xml path, "
                                "an onnx.ModelProto or an openvino.Model")
    return path


def _read(model: Any, core: Any) -> Any:
    """An ``openvino.Model`` from an ONNX ModelProto, a path, serialized bytes or a Model."""
    if isinstance(model, (str, pathlib.Path)):
        return core.read_model(str(_read_path(model)))
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
    AVX512-BF16, so the course always states it. ``hint`` sets
    ``PERFORMANCE_HINT`` (LATENCY: one inference at a time, as fast as
    possible; THROUGHPUT: several streams, so several requests run at once);
    ``cache_dir`` sets ``CACHE_DIR`` so a second compile loads the compiled
    blob (give a path, not a model, and a cache hit skips reading the model
    too: a path is handed to ``Core.compile_model`` as it is); ``profile``
    sets ``PERF_COUNT`` for :func:`profile_layers`.

    Parameters
    ----------
    model : onnx.ModelProto, str, pathlib.Path, bytes or openvino.Model
    device : str
        ``"CPU"``, ``"NPU"``, ``"GPU"`` or a virtual one (``"AUTO:NPU,CPU"`` …);
        a physical device this machine lacks is a ``ValueError`` listing those present.
    precision : {"f32", "bf16", "f16"} or None
        ``INFERENCE_PRECISION_HINT``, passed to any device (a device that
        cannot compute in it refuses); None keeps the device's default.
    hint : {"LATENCY", "THROUGHPUT", "CUMULATIVE_THROUGHPUT"} or None
    cache_dir, profile, config, core
        ``CACHE_DIR``; ``PERF_COUNT``; further properties as they are
        (OpenVINO rejects unknown ones); the ``openvino.Core`` to use.

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
    profile = _check.boolean(profile, "profile")
    if cache_dir is not None:
        _check.path(cache_dir, "cache_dir")  # an int or bytes would name a folder "0" or "b'x'"
    _check_graph(model)
    core = _core(core)
    _device(device, core)
    _check_config(config or {}, device, core)
    props: dict[str, Any] = {}
    if precision is not None:
        props["INFERENCE_PRECISION_HINT"] = precision
    if hint is not None:
        props["PERFORMANCE_HINT"] = hint
    if profile:
        props["PERF_COUNT"] = True
    if cache_dir is not None:
        props["CACHE_DIR"] = str(cache_dir)
    props.update(config or {})
    if isinstance(model, (str, pathlib.Path)):
        # A path goes to compile_model as it is: with a CACHE_DIR hit OpenVINO then skips reading and
        # converting the model as well ("Make it even faster", Model Caching Overview).
        _read_path(model)
        return core.compile_model(str(model), device, props)
    return core.compile_model(_read(model, core), device, props)


def _check_graph(model: Any) -> None:
    """Refuse an ONNX model (a ModelProto, an .onnx file or its bytes) with a cycle or a dangling input.

    OpenVINO's ONNX reader never returns on a cyclic graph and reports a
    dangling input as a C++ trace, so the graph is checked first. Anything
    else (OpenVINO IR, an ``openvino.Model``) is left to OpenVINO.
    """
    if type(model).__name__ == "ModelProto":
        _walkable(model)
    elif isinstance(model, (str, pathlib.Path)) and str(model).endswith(".onnx") and pathlib.Path(model).is_file():
        import onnx

        _walkable(onnx.load(str(model), load_external_data=False))
    elif isinstance(model, bytes) and not model.lstrip().startswith(b"<"):  # not IR XML: must be ONNX
        import onnx
        from google.protobuf.message import DecodeError

        try:
            proto = onnx.load_from_string(model)
        except DecodeError as exc:
            raise ValueError("model: these bytes are neither a serialized ONNX model nor OpenVINO IR XML") from exc
        if not proto.graph.node:
            raise ValueError("model: these bytes hold no ONNX graph (no nodes); pass a serialized ONNX model")
        _walkable(proto)


def _device(device: Any, core: Any) -> str:
    """``device`` if it names a device family OpenVINO knows and, if physical, this machine has."""
    if not isinstance(device, str) or not device:
        raise TypeError(f"device must be a device name such as 'CPU', got {device!r}")
    family = device.split(":")[0].split(".")[0]
    if family in DEVICES and family not in {d.split(".")[0] for d in core.available_devices}:
        raise ValueError(f"device {device!r} is not on this machine (OpenVINO sees {', '.join(core.available_devices)}); "
                         "use choose_device() to pick one with a visible fallback")
    if family not in DEVICES + ("AUTO", "HETERO", "MULTI", "BATCH"):
        raise ValueError(f"device must be one of {', '.join(DEVICES)} or AUTO/HETERO/MULTI:…, got {device!r}")
    return device


#: Properties the OpenVINO Core itself takes in a compile config, whatever the device.
_CORE_PROPERTIES = frozenset({"CACHE_DIR", "CACHE_MODE", "ENABLE_MMAP", "FORCE_TBB_TERMINATE", "ALLOW_AUTO_BATCHING",
                              "AUTO_BATCH_TIMEOUT"})


def _check_config(config: Mapping, device: str, core: Any) -> None:
    """Refuse a config key the (physical) device does not list, before OpenVINO answers with a C++ trace."""
    for k, v in config.items():
        if not isinstance(k, str):
            raise TypeError(f"config keys must be property names (str), got {type(k).__name__} {k!r}")
        if not isinstance(v, (str, int, float, bool)) and type(v).__module__.split(".")[0] != "openvino":
            raise TypeError(f"config[{k!r}] must be a str, number or bool, got {type(v).__name__}")
    if not config or device.split(":")[0].split(".")[0] not in DEVICES:
        return
    try:
        known = set(core.get_property(device, "SUPPORTED_PROPERTIES")) | _CORE_PROPERTIES
    except Exception:  # a fake core, or a device that cannot list them: OpenVINO will judge
        return
    unknown = sorted(set(config) - known)
    if unknown:
        raise ValueError(f"config has properties {device} does not support: {', '.join(unknown)} "
                         f"(it supports {', '.join(sorted(known - _CORE_PROPERTIES))})")


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
    on_constants: bool = False  #: every input is a constant (weights), so it runs once, not per inference

    def __post_init__(self) -> None:
        _check.record(self, text=("name", "layer_type", "primitive", "precision", "output_precision", "output_layout"),
                      names=("input_layouts", "input_precisions", "inputs", "original"), counts=("order",),
                      flags=("on_constants",))
        if len(self.input_layouts) != len(self.input_precisions):
            raise ValueError(f"input_layouts and input_precisions must have one entry per input, "
                             f"got {len(self.input_layouts)} and {len(self.input_precisions)}")

    @property
    def fused(self) -> bool:
        """True if it executes more than one of the model's layers."""
        return len(self.original) > 1

    @property
    def converts_layout(self) -> bool:
        """An inserted Reorder that rewrites an activation in another memory layout."""
        return (self.layer_type == "Reorder" and not self.on_constants
                and any(x != self.output_layout for x in self.input_layouts))

    @property
    def converts_precision(self) -> bool:
        """An operation that converts an activation's precision: a Reorder, a Convert, a quantizing step."""
        if self.on_constants or all(p == self.output_precision for p in self.input_precisions):
            return False
        return self.layer_type in ("Reorder", "Convert") or (
            self.layer_type in ("Subgraph", "Eltwise", "FakeQuantize") and self.output_precision in ("u8", "i8"))


def executed_graph(compiled: Any, *, constants: bool = False) -> list[ExecutedOp]:
    """The operations a compiled model executes, in order, with fusion, layouts and precisions.

    Reads ``compiled.get_runtime_model()``: each op's runtime info gives its
    layer type, kernel, precisions, layout and the original layers fused into
    it (a fused convolution may carry a new name, e.g. ``Multiply_…`` after
    OpenVINO folded a BatchNormalization into its weights). A Reorder or
    Convert whose inputs are all constants converts weights once; only the
    ones on activations count as :attr:`ExecutedOp.converts_layout` or
    :attr:`ExecutedOp.converts_precision`. ``constants=False`` leaves out
    ``Const`` operations (weights).

    The executed graph is a view the CPU plugin gives. The Intel NPU plugin's
    ``get_runtime_model`` returns a placeholder that holds only the model's
    parameters and results (``src/plugins/intel_npu``, ``CompiledModel::
    get_runtime_model``), and a HETERO model joins its devices' runtime
    models (``src/plugins/hetero``), so its NPU part is such a placeholder:
    a runtime model without a single executed layer, or with some operations
    that are no executed layer (a partial table), is a ``RuntimeError`` that
    says so, not a list. On such a device the
    per-layer profile (:func:`profile_layers`) is what there is.

    Raises
    ------
    TypeError
        If ``compiled`` is not a compiled model or ``constants`` not a bool.
    RuntimeError
        If the device exposes no executed graph, or only part of one (see above).

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> ops = executed_graph(compile(CameraNet.pretrained().to_onnx(), "CPU"))
    >>> [op.original for op in ops if op.layer_type == "Convolution"][0][-2:]
    ('stem.bn', 'stem.relu')
    """
    if not hasattr(compiled, "get_runtime_model"):
        raise TypeError(f"compiled must be an openvino.CompiledModel, got {type(compiled).__name__}")
    constants = _check.boolean(constants, "constants")
    info_of, constant, out = {}, set(), []
    ops = list(compiled.get_runtime_model().get_ordered_ops())
    infos = [{k: v.astype(str) for k, v in op.get_rt_info().items()} for op in ops]
    if not any("layerType" in info for info in infos):
        raise RuntimeError(_no_executed_graph(compiled, len(ops)))
    missing = [op.get_friendly_name() for op, info in zip(ops, infos) if "layerType" not in info]
    if missing:   # a HETERO model whose NPU part is the NPU plugin's placeholder: a partial table would mislead
        raise RuntimeError(
            f"compiled: {_devices(compiled)} exposes only part of an executed graph: {len(missing)} of its "
            f"{len(ops)} runtime operations ({', '.join(missing[:5])}{', …' if len(missing) > 5 else ''}) are no "
            "executed layer (no 'layerType' in their runtime info). A HETERO model joins its devices' runtime "
            "models, and the Intel NPU plugin's part is a placeholder, so the layers it runs cannot be read. "
            "Compile with profile=True and use deploy.profile_layers for the per-layer times it reports.")
    for op, info in zip(ops, infos):
        info_of[op.get_friendly_name()] = info
        srcs = tuple(i.get_source_output().get_node().get_friendly_name() for i in op.inputs())
        if info.get("layerType") == "Const" or (srcs and all(s in constant for s in srcs)):
            constant.add(op.get_friendly_name())
        if info.get("layerType") == "Const" and not constants:
            continue
        out.append(ExecutedOp(
            name=op.get_friendly_name(), layer_type=info.get("layerType", "?"), primitive=info.get("primitiveType", "?"),
            precision=info.get("runtimePrecision", "?"), output_precision=info.get("outputPrecisions", "?"),
            output_layout=info.get("outputLayouts", "?"),
            input_layouts=tuple(info_of[s].get("outputLayouts", "?") for s in srcs if s in info_of),
            input_precisions=tuple(info_of[s].get("outputPrecisions", "?") for s in srcs if s in info_of),
            inputs=srcs, original=tuple(x for x in info.get("originalLayersNames", "").split(",") if x),
            order=int(info.get("execOrder", len(out))), on_constants=bool(srcs) and all(s in constant for s in srcs)))
    return out


def _devices(compiled: Any) -> str:
    """The devices a compiled model runs on (``EXECUTION_DEVICES``), or "this device" if it cannot say."""
    try:
        return ", ".join(str(d) for d in compiled.get_property("EXECUTION_DEVICES")) or "this device"
    except Exception:  # a fake, or a plugin that does not report it
        return "this device"


def _no_executed_graph(compiled: Any, n_ops: int) -> str:
    return (f"compiled: {_devices(compiled)} exposes no executed graph. Its runtime model holds {n_ops} "
            "operations and none of them is an executed layer (no 'layerType' in their runtime info): the "
            "Intel NPU plugin returns such a placeholder, with only the model's inputs and outputs, so fused "
            "layers, inserted Reorders and kernel precisions cannot be read on it. Compile with profile=True "
            "and use deploy.profile_layers: the per-layer times PERF_COUNT reports are what this device gives.")


#: A layer that runs at less than this fraction of the rate its roof allows (its roofline bound over its
#: measured time) is tagged ``overhead-bound``: most of its time goes to what the roofline does not count.
OVERHEAD_FRACTION = 0.5

#: How far below its true mean a CPU layer's time from :func:`profile_layers` can be, µs. OpenVINO's
#: ``PerfCount`` (``perf_count.h`` in ``src/plugins/intel_cpu``) cuts each
#: run's time to whole microseconds before summing, then averages with integer division: each step
#: loses up to a microsecond, so after the difference of two readings a layer is low by up to about 2 µs.
#: Two layers whose times differ by less than this cannot be ranked.
RESOLUTION_US = 2.0


@dataclasses.dataclass(frozen=True)
class LayerTime:
    """One executed layer's measured time, and why it may be slow."""

    name: str
    layer_type: str
    kernel: str
    microseconds: float  #: median real time over the runs
    share: float  #: fraction of the summed layer times
    tags: tuple  #: e.g. ("layout conversion",), ("memory-bound",), ("overhead-bound",), ("above roof",)
    roof_fraction: float | None = None  #: its roofline bound over its time (1: on the roof); None if not judged
    times: tuple = ()  #: µs in each round of :func:`profile_many` (rounds aligned across models)
    original: tuple = ()  #: the model's layers fused into it (the executed graph's, where the device gives one)
    flops: float | None = None  #: FLOPs of the ONNX layer that judged it (its achieved rate: flops / time)

    def __post_init__(self) -> None:
        _check.record(self, text=("name", "layer_type", "kernel"), names=("tags", "original"),
                      seconds=("microseconds",))
        if self.flops is not None:
            object.__setattr__(self, "flops", _check.real(self.flops, "flops", minimum=0.0))
        object.__setattr__(self, "share", _check.real(self.share, "share", minimum=0.0, maximum=1.0))
        if self.roof_fraction is not None:
            object.__setattr__(self, "roof_fraction", _check.real(self.roof_fraction, "roof_fraction", minimum=0.0))
        times = _check.sequence(self.times, "times")
        object.__setattr__(self, "times", tuple(_check.real(t, f"times[{i}]", minimum=0.0)
                                                for i, t in enumerate(times)))

    @property
    def quartiles(self) -> tuple[float, float]:
        """First and third quartiles of :attr:`times` across rounds, µs, bracketing the median (a figure's
        whiskers); ``(microseconds, microseconds)`` with fewer than two rounds."""
        if len(self.times) < 2:
            return (self.microseconds, self.microseconds)
        q1, q3 = np.percentile(self.times, [25, 75])
        return (min(float(q1), self.microseconds), max(float(q3), self.microseconds))


@dataclasses.dataclass(frozen=True)
class LayerProfile:
    """A per-layer profile in rounds: each layer's mean time per round, and each round's whole inference.

    ``rows`` are the executed layers, slowest first, each with its mean µs
    in every round (:attr:`LayerTime.times`); ``wall`` holds each round's
    mean seconds of ``request.infer`` timed from Python, with the counters
    on. A round's layers add up to less than its wall time: the rest
    (starting the request, handing the input and output over, scheduling)
    is in no layer. Made by :func:`profile_many`.
    """

    rows: tuple  #: LayerTime per executed layer, slowest first
    wall: tuple  #: seconds of one whole inference, mean of each round

    def __post_init__(self) -> None:
        rows = _check.sequence(self.rows, "rows", min_length=1)
        for i, r in enumerate(rows):
            _check.instance(r, f"rows[{i}]", LayerTime, "deploy.LayerTime")
        wall = _check.sequence(self.wall, "wall", min_length=1)
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "wall", tuple(_check.positive(t, f"wall[{i}]") for i, t in enumerate(wall)))
        if any(len(r.times) != len(self.wall) for r in rows):
            raise ValueError(f"rows and wall must hold the same runs: every row needs {len(self.wall)} times")

    def sums(self, keep: Callable[[LayerTime], bool] | None = None) -> tuple[float, ...]:
        """Seconds per round summed over the rows ``keep`` accepts (all rows by default)."""
        if keep is not None and not callable(keep):
            raise TypeError(f"keep must be a function of a LayerTime, or None, got {type(keep).__name__}")
        rows = [r for r in self.rows if keep is None or keep(r)]
        return tuple(sum(r.times[i] for r in rows) * 1e-6 for i in range(len(self.wall)))

    @property
    def outside(self) -> tuple[float, ...]:
        """Per round, the share of the wall time that no layer accounts for: ``1 - sum(layers) / wall``.

        A layer's time is counted in whole microseconds (:func:`profile_layers`),
        so each layer's time is low by up to :data:`RESOLUTION_US` per run:
        :attr:`outside_at_least` takes that off.
        """
        return tuple(1 - s / w for s, w in zip(self.sums(), self.wall))

    @property
    def outside_at_least(self) -> tuple[float, ...]:
        """Per round, ``outside`` with :data:`RESOLUTION_US` added to every layer's time (a lower bound)."""
        n = len(self.rows)
        return tuple(1 - (s + n * RESOLUTION_US * 1e-6) / w for s, w in zip(self.sums(), self.wall))


def _device_list(compiled: Any) -> list[str]:
    try:
        return [str(d) for d in compiled.get_property("EXECUTION_DEVICES")]
    except Exception:  # a fake, or a plugin that does not report it
        return []


def _running_mean(compiled: Any) -> bool:
    """True for the CPU plugin, whose counters report each layer's mean over every inference since compiling."""
    devices = _device_list(compiled)
    return bool(devices) and all(d.strip("()").split(".")[0] == "CPU" for d in devices)


def _readings(request: Any, meta: dict) -> dict[str, float]:
    """µs per executed layer, as ``profiling_info`` reports them now (a layer listed twice: summed)."""
    out: dict[str, float] = {}
    for p in request.profiling_info:
        if p.status.name == "EXECUTED":
            out[p.node_name] = out.get(p.node_name, 0.0) + p.real_time.total_seconds() * 1e6
            meta[p.node_name] = (p.node_type, p.exec_type)
    return out


def _block(compiled: Any, inputs: Any, runs: int, meta: dict) -> tuple[dict[str, float], float]:
    """Per-layer mean µs over ``runs`` inferences of a freshly compiled model, and their mean wall seconds.

    The CPU plugin's counters are means over every inference since the model
    was compiled, in whole µs (``PerfCount`` in ``src/plugins/intel_cpu``):
    after the first inference a layer's reading is its exact total, so the
    mean of the ``runs`` that follow is ``((runs + 1) · last − first) / runs``,
    low by up to :data:`RESOLUTION_US` (each run cut to whole µs, then an
    integer mean). Other plugins report each inference's
    own times: then it is the median of the per-run readings.
    """
    request = compiled.create_infer_request()
    request.infer(inputs)  # the first inference, by itself
    first = _readings(request, meta)
    cumulative = _running_mean(compiled)
    per_run: dict[str, list[float]] = {}
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        request.infer(inputs)
        walls.append(time.perf_counter() - t0)
        if not cumulative:
            for name, us in _readings(request, meta).items():
                per_run.setdefault(name, []).append(us)
    if cumulative:
        last = _readings(request, meta)
        means = {k: max(0.0, ((runs + 1) * v - first.get(k, 0.0)) / runs) for k, v in last.items()}
    else:
        means = {k: statistics.median(v) for k, v in per_run.items()}
    if not means and not first:
        raise RuntimeError(f"compiled: {_devices(compiled)} reported no executed layer in PERF_COUNT's profiling info, "
                           "so there is no per-layer time to show on this device")
    return means, statistics.fmean(walls)


def _profile(compiled: Any, times: dict, meta: dict, wall: list, model: Any, machine: Any,
             device_of: Mapping[str, str] | None) -> LayerProfile:
    """One model's rows from its rounds: median µs, share, tags (see :func:`profile_layers`)."""
    import warnings

    try:
        executed = {op.name: op for op in executed_graph(compiled)}
    except RuntimeError as exc:  # an NPU: times only, no conversion or fusion tags
        warnings.warn(f"{exc} The profile below has no conversion tags, and its roofline tags use the "
                      "device's own layer names.", stacklevel=3)
        executed = {}
    counts = _bounds(model, machine) if model is not None and machine is not None else {}
    med = {k: statistics.median(v) for k, v in times.items()}
    total = sum(med.values()) or 1.0
    rows = []
    for name, us in sorted(med.items(), key=lambda kv: -kv[1]):
        kind, kernel = meta[name]
        op = executed.get(name)
        tags, fraction = [], None
        if op is not None and op.converts_layout:
            tags.append("layout conversion")
        if op is not None and op.converts_precision:
            tags.append("precision conversion")
        if "ref" in kernel.split("_"):
            tags.append("reference kernel")
        originals = op.original if op is not None else ()
        if device_of and any(device_of.get(o, "NPU") != "NPU" for o in originals or (name,)):
            tags.append("fallback")
        judged = [counts[o] for o in originals or (name,) if o in counts]
        if judged and us > 0:
            c = judged[0]
            fraction = max(c.flops / machine.peak_flops, c.bytes / machine.bandwidth) * 1e6 / us
            # faster than its bound is a failed measurement (machine.check_roof), never a side of the ridge
            tags.append("above roof" if fraction > 1 else "overhead-bound" if fraction < OVERHEAD_FRACTION
                        else f"{machine.bound(c.intensity)}-bound")
        rows.append(LayerTime(name, kind, kernel, us, us / total, tuple(tags), fraction, tuple(times[name]),
                              tuple(originals), judged[0].flops if judged and us > 0 else None))
    return LayerProfile(tuple(rows), tuple(wall))


def _profile_args(runs: Any, model: Any, machine: Any, device_of: Any) -> int:
    runs = _check.integer(runs, "runs", minimum=1, maximum=10_000)
    if (model is None) != (machine is None):
        raise ValueError("model and machine go together: pass both (the ONNX model and a graphs.MachineSpec) "
                         "for the roofline tags, or neither")
    if model is not None:
        from .graphs import MachineSpec

        if type(model).__name__ != "ModelProto":
            raise TypeError(f"model must be an onnx.ModelProto, got {type(model).__name__}")
        _walkable(model)
        _check.instance(machine, "machine", MachineSpec, "graphs.MachineSpec")
    if device_of is not None and not isinstance(device_of, Mapping):
        raise TypeError(f"device_of must map layer names to devices, got {type(device_of).__name__}")
    for k, v in (device_of or {}).items():
        _check.text(k, "device_of keys")
        _check.text(v, f"device_of[{k!r}]")
    return runs


def _profiled(compiled: Any, name: str) -> None:
    if not hasattr(compiled, "create_infer_request"):
        raise TypeError(f"{name} must be an openvino.CompiledModel, got {type(compiled).__name__}")
    try:
        on = str(compiled.get_property("PERF_COUNT")).upper() in ("YES", "TRUE", "1")
    except Exception:
        on = False
    if not on:
        raise ValueError(f"{name} was compiled without PERF_COUNT: use deploy.compile(..., profile=True)")


def profile_layers(compiled: Any, inputs: Any, runs: int = 20, *, model: Any = None, machine: Any = None,
                   device_of: Mapping[str, str] | None = None) -> list[LayerTime]:
    """Per-layer times from ``PERF_COUNT``, each layer tagged with why it costs what it costs.

    ``compiled`` must be freshly compiled with ``profile=True`` and not run
    yet: the CPU plugin's counters hold, per layer, the mean over every
    inference since the model was compiled, shared by all its requests, in
    whole microseconds (``PerfCount`` in OpenVINO's ``src/plugins/intel_cpu``).
    So the first inference, which pays the cold start, is run by itself and
    read; the mean of the ``runs`` inferences after it follows from the
    readings before and after them, low by up to :data:`RESOLUTION_US`
    (each run is cut to whole µs, then averaged by integer division), and a
    layer faster than a microsecond counts as 0. (The per-run times are not
    available from the CPU plugin; other plugins report each inference's
    own, and then each layer's time is the median of the runs.)

    Tags: ``layout conversion`` / ``precision conversion`` (a Reorder the
    runtime inserted), ``reference kernel`` (a slow generic implementation),
    ``fallback`` (``device_of`` says it ran off the NPU), and — given the ONNX
    ``model`` and a roofline ``machine`` (chapter 3) — the layer's
    :attr:`LayerTime.roof_fraction` (its roofline bound, from the FLOPs and
    bytes of the ONNX layer doing its arithmetic, over its measured time)
    and one of ``overhead-bound`` (below :data:`OVERHEAD_FRACTION` of its
    roof: most of its time is in neither the arithmetic nor the bytes),
    ``memory-bound`` or ``compute-bound`` (which side of the ridge it sits
    on), or ``above roof`` (it ran faster than its bound allows: a failed
    measurement of the roof or of the layer's time, to be checked with
    :func:`npukit.shared.roof_check` on ``flops / time``, never a cache). On a device without an executed graph (an NPU, see
    :func:`executed_graph`) a ``UserWarning`` says the conversion tags are
    missing; a device that reports no layer at all is a ``RuntimeError``.
    See chapter 7, "Deploying to an NPU" (chapters/07_deploy.md).

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> compiled = compile(CameraNet.pretrained().to_onnx(), "CPU", profile=True)
    >>> rows = profile_layers(compiled, np.zeros((1, 3, 32, 32), np.float32), runs=2)
    >>> any("layout conversion" in r.tags for r in rows), len(rows[0].times)
    (True, 1)
    """
    runs = _profile_args(runs, model, machine, device_of)
    _profiled(compiled, "compiled")
    _check_inputs(compiled, inputs)
    meta: dict = {}
    means, wall = _block(compiled, inputs, runs, meta)
    times = {k: [v] for k, v in means.items()}
    return list(_profile(compiled, times, meta, [wall], model, machine, device_of).rows)


def profile_many(factories: Mapping[str, Callable[[], Any]], inputs: Any, runs: int = 40, *, rounds: int = 5,
                 models: Mapping[str, Any] | None = None, machine: Any = None,
                 seed: int = 0) -> dict[str, LayerProfile]:
    """Profile several models against each other, in interleaved rounds, each round on a fresh compilation.

    ``factories[name]()`` compiles model ``name`` with ``profile=True``
    (for example ``lambda: deploy.compile(m, profile=True)``). In each of
    ``rounds`` rounds every model, in a shuffled order, is compiled afresh
    and profiled as :func:`profile_layers` does (its first inference by
    itself, then ``runs`` more), because the CPU plugin's counters are means
    since compiling and cannot be reset. ``profile[name].rows[k].times[i]``
    of every model then come from the same round ``i``, so per-round sums
    (:meth:`LayerProfile.sums`) can be compared with
    ``measure.Comparison.from_times``. Each round also times the whole
    inferences from Python (:attr:`LayerProfile.wall`). ``models`` gives the
    ONNX model of each name for the roofline tags (with ``machine``). See
    chapter 8, "The minimal closed loop" (chapters/08_capstone.md).

    Raises
    ------
    TypeError, ValueError
        If ``factories`` is not a mapping of at least one name to a function
        that returns a model compiled with ``profile=True``, the inputs do
        not fit one, ``models`` and ``machine`` do not come together, or a
        count is out of range.
    RuntimeError
        If a device reports no executed layer.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> m = CameraNet.pretrained().to_onnx()
    >>> p = profile_many({"f32": lambda: compile(m, profile=True),
    ...                   "bf16": lambda: compile(m, precision="bf16", profile=True)},
    ...                  np.zeros((1, 3, 32, 32), np.float32), runs=3, rounds=2)
    >>> sorted(p), len(p["f32"].wall), len(p["f32"].sums())
    (['bf16', 'f32'], 2, 2)
    """
    if not isinstance(factories, Mapping) or not factories:
        raise TypeError("factories must be a mapping of names to functions that compile a model with profile=True")
    for k, f in factories.items():
        if not callable(f):
            raise TypeError(f"factories[{k!r}] must be a function of no argument that returns a compiled model, "
                            f"got {type(f).__name__}")
    if models is not None and (not isinstance(models, Mapping) or set(models) != set(factories)):
        raise TypeError("models must map every name of factories to its onnx.ModelProto, or be None")
    if (models is None) != (machine is None):
        raise ValueError("models and machine go together: pass both for the roofline tags, or neither")
    runs = _profile_args(runs, None, None, None)
    rounds = _check.integer(rounds, "rounds", minimum=1, maximum=1000)
    seed = _check.integer(seed, "seed", minimum=0)
    for k in factories:
        if models is not None:
            _profile_args(runs, models[k], machine, None)
    names = list(factories)
    times: dict[str, dict[Any, list[float]]] = {k: {} for k in names}
    meta: dict[str, dict] = {k: {} for k in names}
    wall: dict[str, list[float]] = {k: [] for k in names}
    last: dict[str, Any] = {}
    named: dict[str, dict] = {k: {} for k in names}    # a layer's key → its name in the latest compilation
    order = np.random.default_rng(seed)
    for i in range(rounds):
        for j in order.permutation(len(names)):
            k = names[j]
            compiled = factories[k]()
            _profiled(compiled, f"factories[{k!r}]()")
            _check_inputs(compiled, inputs)
            found: dict = {}
            means, w = _block(compiled, inputs, runs, found)
            # OpenVINO generates some names anew in every compilation (Multiply_4300, then Multiply_4307 …):
            # a layer is the same layer across rounds by its place in the executed graph, where there is one
            try:
                key = {op.name: (op.order, op.layer_type) for op in executed_graph(compiled)}
            except RuntimeError:
                key = {}
            for name, us in means.items():
                kk = key.get(name, name)
                named[k][kk] = name
                meta[k][name] = found[name]
                if kk not in times[k]:
                    times[k][kk] = [0.0] * i      # a layer first seen now: 0 µs in the earlier rounds
                times[k][kk].append(us)
            for v in times[k].values():
                v.extend([0.0] * (i + 1 - len(v)))
            wall[k].append(w)
            last[k] = compiled
    out = {}
    for k in names:
        by_name = {named[k][kk]: v for kk, v in times[k].items()}
        out[k] = _profile(last[k], by_name, meta[k], wall[k], None if models is None else models[k], machine, None)
    return out


#: Elementwise operators a runtime fuses into the convolution or matrix product before them.
_FUSABLE = ("BatchNormalization", "Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh")


def _bounds(model: Any, machine: Any) -> dict[str, Any]:
    """ONNX node or output name → the ``graphs.OpCount`` that judges it on the roofline.

    A runtime fuses BatchNormalization and activations into the convolution
    before them (and may rename the convolution), so a name that belongs to
    such a follower is judged by the Conv/Gemm/MatMul it follows, whose
    FLOPs and bytes are the fused layer's. Any other node (a pooling, say) is
    judged by its own intensity.
    """
    from .graphs import op_counts

    if type(model).__name__ != "ModelProto":
        raise TypeError(f"model must be an onnx.ModelProto, got {type(model).__name__}")
    counts = {c.name: c for c in op_counts(model)}
    producer = {t: n for n in model.graph.node for t in n.output}
    out: dict[str, Any] = {}
    for n in model.graph.node:
        anchor = n
        while anchor.op_type in _FUSABLE and anchor.input and anchor.input[0] in producer:
            anchor = producer[anchor.input[0]]
        if anchor.op_type not in ("Conv", "Gemm", "MatMul"):
            anchor = n
        c = counts.get(anchor.name)
        if c is None or not c.bytes:
            continue
        for key in (n.name, *n.output):
            out[key] = c
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


#: Runs a tail percentile needs beyond it (:meth:`Benchmark.percentile`).
TAIL_RUNS = 10


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """Cold and steady-state latency of one compiled model, in seconds."""

    first: float  #: the first inference of a fresh request
    times: tuple  #: the steady-state runs, after warm-up

    def __post_init__(self) -> None:
        object.__setattr__(self, "first", _check.positive(self.first, "first"))
        times = _check.sequence(self.times, "times", min_length=1)
        object.__setattr__(self, "times", tuple(_check.positive(t, f"times[{i}]") for i, t in enumerate(times)))

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def maximum(self) -> float:
        """The slowest steady-state run: what a high percentile of a short benchmark really reports."""
        return max(self.times)

    def percentile(self, q: float) -> float:
        """The ``q``-th percentile of the steady-state times, if the runs can tell it.

        A tail percentile needs runs beyond it: at least
        :data:`TAIL_RUNS` runs above a percentile over 50 (or below one
        under 50), else it is a ``ValueError`` (the 99th of 200 runs is
        their second-slowest, a single run's noise). The 99th needs
        1,000 runs, the 90th 100; report :attr:`maximum` otherwise. The
        median, the minimum (0) and the maximum (100) are always given.
        """
        q = _check.real(q, "q")
        if not 0 <= q <= 100:
            raise ValueError(f"q must be in [0, 100], got {q}")
        beyond = len(self.times) * min(q, 100 - q) / 100
        if q not in (0, 50, 100) and beyond < TAIL_RUNS:
            need = int(np.ceil(TAIL_RUNS * 100 / min(q, 100 - q)))
            raise ValueError(f"q={q:g}: {len(self.times)} runs leave {beyond:.1f} runs beyond the {q:g}th percentile, "
                             f"fewer than {TAIL_RUNS}; time at least {need:,} runs, or report Benchmark.maximum "
                             "(the slowest run) instead")
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
    warmup = _check.integer(warmup, "warmup", minimum=0, maximum=100_000)
    runs = _check.integer(runs, "runs", minimum=1, maximum=100_000)
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



def _prime(compiled: Any) -> None:
    """One untimed inference of a one-convolution model on ``compiled``'s device: it pays the process's one-time
    start-up (the plugin's thread pool and the like), which would otherwise land on whichever first inference
    came first. A device it cannot be compiled for (a fake in the tests) is left alone."""
    try:
        import openvino as ov

        x = ov.opset13.parameter([1, 3, 32, 32], ov.Type.f32)
        w = ov.opset13.constant(np.ones((16, 3, 3, 3), np.float32))
        conv = ov.opset13.convolution(x, w, [1, 1], [1, 1], [1, 1], [1, 1])
        tiny = ov.Model([ov.opset13.relu(conv)], [x], "prime")
        device = (_device_list(compiled) or ["CPU"])[0].strip("()").split(".")[0]
        ov.Core().compile_model(tiny, device).create_infer_request().infer([np.zeros((1, 3, 32, 32), np.float32)])
    except Exception:  # noqa: BLE001 - priming is best effort
        pass


def benchmark_many(compiled: Mapping[str, Any], inputs: Any, warmup: int = 10, runs: int = 200, *,
                   seed: int = 0) -> dict[str, Benchmark]:
    """Benchmark several compiled models against each other, in interleaved rounds.

    :func:`benchmark` run once per model, one model after the other, lets
    whatever else the machine does in those seconds decide the comparison.
    Here each model gets a fresh request whose first inference is timed,
    in an order shuffled by ``seed``, after one untimed inference of a
    one-operation model on the same device (it pays the process's one-time
    start-up, which would otherwise fall on whichever model came first);
    then, after ``warmup`` untimed inferences of each, every one of ``runs``
    rounds times one inference of each model, in a shuffled order, through
    :func:`npukit.measure.compare`. ``result[name].times[i]`` of every model
    come from the same round ``i``, so ``measure.Comparison.from_times({k:
    b.times for k, b in result.items()})`` gives paired verdicts. See
    chapter 7, "Deploying to an NPU" (chapters/07_deploy.md).

    Parameters
    ----------
    compiled : mapping of str to openvino.CompiledModel
        At least two models, by name, that take the same ``inputs``.
    inputs
        As for :func:`benchmark`.
    warmup, runs : int
        Untimed inferences per model (>= 0) and rounds (>= 3).
    seed : int
        Seed of the rounds' order (>= 0).

    Returns
    -------
    dict of str to Benchmark

    Raises
    ------
    TypeError, ValueError
        If ``compiled`` is not such a mapping, the inputs do not fit a model,
        or a count is out of range.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> m = CameraNet.pretrained().to_onnx()
    >>> b = benchmark_many({"f32": compile(m), "bf16": compile(m, precision="bf16")},
    ...                    np.zeros((1, 3, 32, 32), np.float32), 2, 5)
    >>> sorted(b), len(b["f32"].times)
    (['bf16', 'f32'], 5)
    """
    from .timing import compare

    if not isinstance(compiled, Mapping) or len(compiled) < 2:
        raise TypeError("compiled must be a mapping of at least two names to openvino.CompiledModel objects")
    warmup = _check.integer(warmup, "warmup", minimum=0)
    runs = _check.integer(runs, "runs", minimum=3)
    seed = _check.integer(seed, "seed", minimum=0)
    for k, c in compiled.items():
        if not hasattr(c, "create_infer_request"):
            raise TypeError(f"compiled[{k!r}] must be an openvino.CompiledModel, got {type(c).__name__}")
        _check_inputs(c, inputs)
    requests = {k: c.create_infer_request() for k, c in compiled.items()}
    _prime(next(iter(compiled.values())))
    first = {}
    order = list(requests)
    np.random.default_rng(seed).shuffle(order)
    for k in order:
        t0 = time.perf_counter()
        requests[k].infer(inputs)
        first[k] = time.perf_counter() - t0
    timed = compare({k: (lambda r=r: r.infer(inputs)) for k, r in requests.items()}, rounds=runs, warmup=warmup,
                    number=1, seed=seed)
    return {k: Benchmark(first[k], timed.times[k]) for k in compiled}

@dataclasses.dataclass(frozen=True)
class Job:
    """One asynchronous inference: which request ran it, and when (seconds from the pipeline's start)."""

    job: int
    request: int
    fill_start: float  #: the host starts writing the input into the request's own tensor
    start: float  #: start_async called
    end: float  #: the completion callback ran

    def __post_init__(self) -> None:
        _check.record(self, counts=("job", "request"), seconds=("fill_start", "start", "end"))
        if not self.fill_start <= self.start <= self.end:
            raise ValueError(f"fill_start <= start <= end must hold, got {self.fill_start}, {self.start}, {self.end}")


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
        self.n = _check.integer(requests, "requests", minimum=1, maximum=64)
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
        if work is not None and not callable(work):
            raise TypeError(f"work must be a function of one input, or None, got {type(work).__name__}")
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
        for i, j in enumerate(jobs):
            if not isinstance(j, Job):
                raise TypeError(f"jobs[{i}] must be a deploy.Job (from AsyncPipeline.run), got {type(j).__name__}")
        return len(jobs) / (max(j.end for j in jobs) - min(j.fill_start for j in jobs))


def explain_error(exc: BaseException) -> str:
    """What an OpenVINO error says, without its trace: the informative lines, library paths cut to file names.

    OpenVINO prefixes its messages with one ``Exception from
    src/…/file.cpp:N:`` line per layer it passed through (the first,
    ``src/inference/src/cpp/core.cpp``, is the same for every error); this
    drops those prefixes and keeps the rest, with each absolute path
    shortened to its last part, so that a table can show what OpenVINO
    itself said. See chapter 7, "Deploying to an NPU" (chapters/07_deploy.md).

    Parameters
    ----------
    exc : BaseException
        The exception OpenVINO raised.

    Returns
    -------
    str
        One line; the exception's type name if nothing else remains.

    Raises
    ------
    TypeError
        If ``exc`` is not an exception.

    Examples
    --------
    >>> explain_error(RuntimeError("Exception from src/inference/src/cpp/core.cpp:117:\\n"
    ...                            "Cannot load library \\"/opt/ov/libs/libx.so\\": no such file"))
    'Cannot load library "libx.so": no such file'
    """
    import re

    if not isinstance(exc, BaseException):
        raise TypeError(f"exc must be an exception, got {type(exc).__name__}")
    text = re.sub(r"Exception from \S+:\d+:", " ", str(exc))
    text = re.sub(r"(?:/[^\s\"':]+)+/([^\s\"':/]+)", r"\1", text)
    text = " ".join(text.split()).strip(" ;")
    return text or type(exc).__name__


def numbers(ctx: Any) -> list:
    """Chapter 7's rows of the "numbers so far" table: what OpenVINO's CPU plugin did with CameraNet.

    Examples
    --------
    >>> from npukit import tally
    >>> [r.quantity for r in numbers(tally.Context())][0]
    'executed operations (OpenVINO CPU, f32)'

    The latency is ``ctx.latency["FP32"]``: for the shipped model the
    build's one measurement (:func:`npukit.shared.latency`), interleaved
    with the other precisions, which every page quotes.
    """
    _tally.inputs(ctx)
    _check.image_batch(ctx.images, "ctx.images")
    compiled = compile(ctx.model, "CPU", precision="f32")
    ops = [op for op in executed_graph(compiled) if op.layer_type not in ("Input", "Output") and not op.on_constants]
    reorders = sum(op.converts_layout for op in ops)
    b = ctx.latency["FP32"]
    how = "deploy.executed_graph(deploy.compile(model, 'CPU', precision='f32'))"
    return [
        _tally.Row(7, "executed operations (OpenVINO CPU, f32)",
                   f"{len(ops)} per inference ({reorders} inserted layout Reorders)", how),
        _tally.Row(7, "latency, batch 1, CPU f32: first / steady median",
                   f"{b.first * 1e3:.2f} ms / {b.median * 1e3:.3f} ms",
                   f"deploy.benchmark_many, {len(b.times)} rounds interleaved with BF16 and INT8 (npukit.shared.latency)"),
    ]
