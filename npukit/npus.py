"""Real NPUs, measured: published latencies of real edge NPUs against the course's roofline.

The invariant this module teaches: **a datasheet's peak is an upper bound
that real models approach only as far as their work lets them.** Qualcomm AI
Hub publishes the latency of each of its models on each of its devices
(:func:`table`, an extract of the ``qai-hub-models`` 0.65.0 wheel shipped in
``npukit/data/`` with its provenance and BSD-3 licence). The course counts the
same models' work itself (:func:`work`, on :mod:`npukit.archs`' graphs) and,
given a device's cited peak rate and DRAM bandwidth (:data:`DEVICES`), bounds
the latency from below with chapter 3's roofline (:func:`bound`):

    t ≥ max(2·MACs / peak, compulsory bytes / bandwidth)

where the compulsory bytes are the weights read once and the model's input
and output, at the precision the run used (:func:`element_bytes`).
:func:`compare` sets the bound beside the measurement: measured ÷ bound (how
far above the bound the run is) and the delivered rate, 2·MACs ÷ measured
time, as a fraction of the peak.

Conventions, stated once: a MAC is two operations (vendors' TOPS count that
way); a run is batch 1, the input shape AI Hub measured (224×224 images; a
64×64 latent for Stable Diffusion v1.5); a "float" run executes in FP16 on the
NPU, so its tensors are 2 bytes per element, a ``w8a8`` run 1 byte, a
``w8a16`` run 1-byte weights and 2-byte activations (``w8a16_mixed_int16``
is ``w8a16`` with its most quantization-sensitive layers in 16 bits, counted
as ``w8a16``: the bound stays a lower bound). Qualcomm quotes its NPU peaks in
INT8 operations and publishes no FP16 peak, so a float run's fraction of peak
is against the INT8 figure. A guided Stable Diffusion image encodes its
prompt once; the empty prompt's encoding is the same for every image and is
cached, as AI Hub's own application notes (:func:`pipeline_seconds`).

See chapter 9, "Real NPUs, measured" (chapters/09_npus.md).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from . import _check, _tally

if TYPE_CHECKING:
    from .graphs import MachineSpec

__all__ = ["Measurement", "Table", "Device", "Work", "Bound", "Comparison", "DEVICES", "FUSED", "table",
           "element_bytes", "work", "bound", "compare", "pipeline_seconds", "numbers"]

_FILE = "qai_hub_models.json"


@dataclass(frozen=True)
class Measurement:
    """One published run: a model (or one component of it) on a device, with one runtime and precision.

    ``ms`` is AI Hub's ``inference_time_milliseconds``; the layer counts say
    how many of the compiled model's layers ran on the NPU, the GPU and the
    CPU (``npu + gpu + cpu == total``).
    """

    model: str
    component: str
    precision: str
    device: str
    runtime: str
    ms: float
    memory_mb: tuple[int, int]
    npu_layers: int
    gpu_layers: int
    cpu_layers: int
    total_layers: int
    primary_unit: str
    qairt: str | None
    onnxruntime: str | None
    job_id: str

    def __post_init__(self) -> None:
        _check.record(self, text=("model", "component", "precision", "device", "runtime", "primary_unit", "job_id"),
                      counts=("npu_layers", "gpu_layers", "cpu_layers", "total_layers"))
        object.__setattr__(self, "ms", _check.positive(self.ms, "ms"))
        lo, hi = _check.sequence(self.memory_mb, "memory_mb", length=2)
        if _check.integer(lo, "memory_mb[0]", minimum=0) > _check.integer(hi, "memory_mb[1]", minimum=0):
            raise ValueError(f"memory_mb must be (min, max) with min <= max, got {self.memory_mb}")
        object.__setattr__(self, "memory_mb", (lo, hi))
        if self.npu_layers + self.gpu_layers + self.cpu_layers != self.total_layers or not self.total_layers:
            raise ValueError(f"total_layers must be npu_layers + gpu_layers + cpu_layers > 0, got {self.npu_layers} "
                             f"+ {self.gpu_layers} + {self.cpu_layers} against {self.total_layers}")
        for f in ("qairt", "onnxruntime"):
            _check.text(getattr(self, f), f, optional=True)

    @property
    def name(self) -> str:
        """``model`` for a one-graph model, ``model/component`` for a pipeline's part (the key of :func:`work`)."""
        return self.model if self.component in _SINGLE.get(self.model, ()) else f"{self.model}/{self.component}"

    @property
    def on_npu(self) -> bool:
        """True when every layer ran on the NPU."""
        return self.npu_layers == self.total_layers


#: AI Hub's component name of each one-graph model.
_SINGLE = {"mobilenet_v2": ("MobileNet-v2",), "squeezenet1_1": ("SqueezeNet-1.1",),
           "efficientnet_b0": ("EfficientNet-B0",), "resnet18": ("ResNet18",), "resnet50": ("ResNet50",),
           "resnet101": ("ResNet101",), "convnext_tiny": ("ConvNext-Tiny",)}


class Table:
    """The shipped extract of AI Hub's measurements (see :func:`table`).

    Attributes
    ----------
    measurements : tuple of Measurement
    devices : dict
        AI Hub's device name → its chipset entry (``chipset``,
        ``marketing_name``, ``htp_version``, ``reference_chipset`` …).
    models : dict
        AI Hub's model folder → its name and technical details.
    accuracy : tuple of tuple
        ``(model, device, precision, runtime, top1 %)`` from ``numerics.yaml``.
    provenance : dict
        Package, version, wheel hash, files, licence.
    """

    def __init__(self, data: dict) -> None:
        _check.instance(data, "data", dict)
        missing = [k for k in ("columns", "rows", "devices", "models", "accuracy", "provenance") if k not in data]
        if missing:
            raise ValueError(f"data must be the shipped table's dict; it lacks {', '.join(missing)}")
        cols = data["columns"]
        skip = ("inference_ms", "memory_min_mb", "memory_max_mb")
        self.measurements = tuple(
            Measurement(**{k: v for k, v in zip(cols, r) if k not in skip}, ms=float(r[cols.index("inference_ms")]),
                        memory_mb=(r[cols.index("memory_min_mb")], r[cols.index("memory_max_mb")]))
            for r in data["rows"])
        self.devices: dict = data["devices"]
        self.models: dict = data["models"]
        self.accuracy = tuple(tuple(r) for r in data["accuracy"])
        self.provenance: dict = data["provenance"]

    def select(self, *, name: str | None = None, device: str | None = None, precision: str | None = None,
               runtime: str | None = None, npu_only: bool = False, distinct: bool = False) -> list[Measurement]:
        """The measurements matching every filter given.

        ``name`` is a key of :func:`work` (``"resnet50"``,
        ``"stable_diffusion_v1_5/unet"``); ``npu_only`` keeps runs whose every
        layer ran on the NPU; ``distinct`` drops devices whose rows are copies
        of another device's (AI Hub lists some devices by a reference chipset
        and repeats that chipset's measurements for them, see :meth:`copy_of`).
        A run published only on copies (the reference device has no row for
        that model, precision and runtime) is still one measurement: it is
        kept once, under the reference device (for instance MobileNet-v2's
        INT8 QAIRT run, listed for the SA8255P and SA8650P ADP with one job
        id, is the SA8775P ADP's).

        Raises
        ------
        TypeError, ValueError
            If a filter is not a string, or names a model, device, precision or runtime the table lacks.

        Examples
        --------
        >>> t = table()
        >>> [m.ms for m in t.select(name="resnet50", device="Snapdragon X Elite CRD", precision="w8a8",
        ...                          runtime="qnn_dlc")]
        [0.939]
        """
        wanted = {"name": name, "device": device, "precision": precision, "runtime": runtime}
        for key, value in wanted.items():
            if value is not None:
                _check.text(value, key)
                known = {getattr(m, key) for m in self.measurements}
                if value not in known:
                    raise ValueError(f"{key} must be one of {', '.join(sorted(known))}; got {value!r}")
        _check.boolean(npu_only, "npu_only")
        _check.boolean(distinct, "distinct")
        rows = list(self.measurements)
        if distinct:
            run = lambda m: (m.name, m.precision, m.runtime)  # noqa: E731
            own = {(m.device, run(m)) for m in rows if self.copy_of(m.device) is None}
            kept, seen = [], set()
            for m in rows:
                ref = self.copy_of(m.device)
                if ref is None:
                    kept.append(m)
                elif (ref, run(m)) not in own and (ref, run(m)) not in seen:
                    seen.add((ref, run(m)))
                    kept.append(dataclasses.replace(m, device=ref))
            rows = kept
        return [m for m in rows
                if all(v is None or getattr(m, k) == v for k, v in wanted.items())
                and (not npu_only or m.on_npu)]

    def fastest(self, name: str, device: str, precision: str) -> Measurement | None:
        """The fastest run of ``name`` on ``device`` at ``precision`` that ran wholly on the NPU (None if none did).

        Examples
        --------
        >>> table().fastest("resnet50", "Snapdragon X Elite CRD", "w8a8").runtime
        'onnx'
        """
        runs = self.select(name=name, device=device, precision=precision, npu_only=True)
        return min(runs, key=lambda m: (m.ms, m.runtime)) if runs else None

    def copy_of(self, device: str) -> str | None:
        """The device whose measurements AI Hub repeats for ``device``, or None if ``device`` was measured itself.

        AI Hub's catalogue gives some devices a ``reference_chipset``; their
        rows in ``perf.yaml`` are that chipset's reference device's rows,
        number for number.

        Examples
        --------
        >>> table().copy_of("Dragonwing IQ-X7181"), table().copy_of("Snapdragon X Elite CRD")
        ('Snapdragon X Elite CRD', None)
        """
        _check.text(device, "device")
        if device not in self.devices:
            raise ValueError(f"device must be one of {', '.join(sorted(self.devices))}; got {device!r}")
        ref = self.devices[device].get("reference_chipset")
        if ref is None:
            return None
        return next((d for d, info in self.devices.items() if info["chipset"] == ref), None)


@functools.lru_cache(maxsize=1)
def _load() -> Table:
    with resources.files("npukit").joinpath("data", _FILE).open(encoding="utf-8") as f:
        return Table(json.load(f))


def table() -> Table:
    """The published measurements chapter 9 uses, read from the table shipped in ``npukit/data/``.

    Extracted from the ``qai-hub-models`` 0.65.0 wheel (Qualcomm AI Hub
    Models, BSD-3-Clause; the licence is ``npukit/data/qai_hub_models_LICENSE.txt``)
    by ``tools/qai_hub_table.py``, which regenerates it byte for byte. Nothing
    is downloaded. See chapter 9, "Real NPUs, measured" (chapters/09_npus.md).

    Returns
    -------
    Table

    Examples
    --------
    >>> t = table()
    >>> t.provenance["package"], t.provenance["version"], t.provenance["licence"]
    ('qai-hub-models', '0.65.0', 'BSD-3-Clause')
    """
    return _load()


# ---- devices ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Device:
    """A device's published peak rate and DRAM bandwidth, each with its source (None: not published).

    ``peak_tops`` is in tera-operations per second at ``tops_precision``
    (a MAC counts two operations); ``bandwidth_gbs`` in 10⁹ bytes per second.
    ``sources`` are keys of the book's bibliography (references.bib).
    """

    name: str
    chip: str
    peak_tops: float | None
    tops_precision: str | None
    bandwidth_gbs: float | None
    sources: tuple[str, ...]
    note: str = ""

    def __post_init__(self) -> None:
        _check.text(self.name, "name")
        _check.text(self.chip, "chip")
        for f in ("peak_tops", "bandwidth_gbs"):
            if getattr(self, f) is not None:
                object.__setattr__(self, f, _check.positive(getattr(self, f), f))
        _check.text(self.tops_precision, "tops_precision", optional=True)
        if (self.peak_tops is None) != (self.tops_precision is None):
            raise ValueError("tops_precision must be given exactly when peak_tops is")
        object.__setattr__(self, "sources", _check.sequence(self.sources, "sources"))

    def machine(self) -> MachineSpec:
        """The device as chapter 3's roofline (peak in op/s, bandwidth in bytes/s); both figures must be published.

        Examples
        --------
        >>> m = DEVICES["Snapdragon X Elite CRD"].machine()
        >>> m.peak_flops / 1e12, round(m.ridge)
        (45.0, 331)
        """
        from .graphs import MachineSpec

        if self.peak_tops is None or self.bandwidth_gbs is None:
            missing = "peak" if self.peak_tops is None else "bandwidth"
            raise ValueError(f"{self.name}: its {missing} is not published, so it has no complete roofline")
        return MachineSpec(self.peak_tops * 1e12, self.bandwidth_gbs * 1e9, f"{self.chip} NPU",
                           f"{self.peak_tops:g} {self.tops_precision} TOPS, cited", "cited DRAM bandwidth")


#: The devices of the table whose NPU peak or DRAM bandwidth the course could cite (chapter 9's table lists the
#: sources). A device of the table that is not here has neither figure published in a source the course found.
DEVICES: dict[str, Device] = {d.name: d for d in (
    Device("Snapdragon X Elite CRD", "Snapdragon X Elite", 45.0, "INT8", 136.0,
           ("mashdigi2023xelite", "notebookcheck2024xelite"),
           "Qualcomm's launch figure: LPDDR5x on up to 8 channels, up to 136 GB/s; the shipping parts' LPDDR5x-8448 "
           "on 8 × 16 bits gives 8448 MT/s × 16 B = 135.2 GB/s. The larger is used, so the bound stays a lower "
           "bound"),
    Device("Snapdragon X2 Elite CRD", "Snapdragon X2 Elite", 80.0, "INT8 (assumed)", 228.0,
           ("notebookcheck2025x2npu", "tweaktown2025x2sip"),
           "the X2 Elite Extreme reaches 228 GB/s, the other X2 Elite parts 152 GB/s; AI Hub does not say which "
           "part its reference design carries, so the larger figure is used and the bound stays a lower bound"),
    Device("Samsung Galaxy S25", "Snapdragon 8 Elite for Galaxy", 77.0, "INT8 (assumed)", 84.8,
           ("geektopia2024sd8elite", "mashdigi2026dragonwing"),
           "LPDDR5X at 10,600 MT/s on 64 bits = 84.8 GB/s. Qualcomm gives this phone chip's NPU speed-up, not a "
           "peak; the peak is the 77 TOPS Qualcomm quotes for the Dragonwing Q-8750, which AI Hub lists with the "
           "same SoC model number (69) and whose rows in the table are this phone's, number for number"),
    Device("Snapdragon 7 Gen 4 QRD", "Snapdragon 7 Gen 4", 24.0, "INT8 (assumed)", 67.2,
           ("mashdigi2026dragonwing", "hothardware2025sd7gen4"),
           "the 24 TOPS Qualcomm quotes for the Dragonwing Q-7790, whose rows in the table are this reference "
           "design's. LPDDR5X-4200: Qualcomm gives the memory clock, so 8400 MT/s; on a 64-bit bus (assumed, as "
           "on the 8 Elite; not published) 67.2 GB/s. A narrower bus would have less bandwidth, so the bound "
           "stays a lower bound"),
)}


def _device(device: Any) -> Device:
    if isinstance(device, Device):
        return device
    _check.text(device, "device")
    if device not in DEVICES:
        raise ValueError(f"device must be a Device or one of {', '.join(DEVICES)} (the devices with a cited peak or "
                         f"bandwidth); got {device!r}")
    return DEVICES[device]


# ---- work -----------------------------------------------------------------------------------------


#: precision → (bytes per weight, bytes per activation) on the NPU.
_BYTES = {"float": (2, 2), "w8a8": (1, 1), "w8a16": (1, 2), "w8a16_mixed_int16": (1, 2)}


def element_bytes(precision: str) -> tuple[int, int]:
    """Bytes per weight and per activation element for a run at ``precision``.

    ``"float"`` runs in FP16 on the NPU (AI Hub: float models "run in fp32 or
    fp16 (depending on compute unit)", and its NPUs take FP16): 2 and 2;
    ``"w8a8"``: 1 and 1; ``"w8a16"``: 1 and 2, and the same for
    ``w8a16_mixed_int16``, AI Hub's ``w8a16`` with its most
    quantization-sensitive layers (1 % of EfficientNet-B0's) in 16-bit weights
    and activations: counting those few weights as 1 byte keeps the bound a
    lower bound. See chapter 9, "Real NPUs, measured"
    (chapters/09_npus.md).

    Raises
    ------
    TypeError, ValueError
        If ``precision`` is not one of those strings.

    Examples
    --------
    >>> element_bytes("float"), element_bytes("w8a8"), element_bytes("w8a16")
    ((2, 2), (1, 1), (1, 2))
    """
    _check.text(precision, "precision")
    _check.one_of(precision, "precision", tuple(_BYTES))
    return _BYTES[precision]


@dataclass(frozen=True)
class Work:
    """What one inference of a model costs, counted from its graph (element counts, not bytes).

    ``weights`` are the parameter elements the nodes read (an embedding
    lookup reads only the rows it gathers); ``io`` the graph's input and
    output elements; ``activations`` the elements the nodes read and write
    when each runs on its own (chapter 3's per-node convention, no reuse
    between nodes) once the graph is rewritten as every compiler here does
    at the least: BatchNormalization folded into the convolution before it
    and ReLU or Clip fused into the node that produces their input
    (:data:`FUSED`, chapter 3b).
    """

    name: str
    macs: int
    parameters: int
    weights: int
    io: int
    activations: int
    nodes: int

    def __post_init__(self) -> None:
        _check.record(self, text=("name",), counts=("macs", "parameters", "weights", "io", "activations", "nodes"))
        if not self.io or not self.nodes:
            raise ValueError(f"io and nodes must be > 0 (a graph has an input and a node), got {self.io}, {self.nodes}")


#: Nodes whose own traffic :attr:`Work.activations` leaves out: folded (BatchNormalization into the
#: convolution before it) or fused (ReLU, Clip into their producer), so their input never goes to memory.
FUSED = ("BatchNormalization", "Relu", "Clip")


@functools.lru_cache(maxsize=None)
def _work(name: str) -> Work:
    from . import archs
    from .graphs import op_counts, tensor_shapes

    model = archs.build(name)
    counts = op_counts(model, itemsize=1)          # itemsize 1: every "byte" below is an element
    shapes = tensor_shapes(model)
    io = sum(math.prod(shapes[v.name][0]) for v in list(model.graph.input) + list(model.graph.output))
    weights = sum(c.act_bytes_out if c.op_type == "Gather" else c.param_bytes for c in counts)
    acts = sum(c.act_bytes_in + c.act_bytes_out for c in counts if c.op_type not in FUSED)
    return Work(name, sum(c.macs for c in counts), archs.parameter_count(model), int(weights), int(io), int(acts),
                len(counts))


def work(name: str) -> Work:
    """MACs, parameters and elements moved by one inference of a measured model, counted by chapter 3's rules.

    Built by :func:`npukit.archs.build` (no weights stored) and counted by
    :func:`npukit.graphs.op_counts`; computed once per model and cached. See
    chapter 9, "Real NPUs, measured" (chapters/09_npus.md).

    Parameters
    ----------
    name : str
        One of :data:`npukit.archs.MODELS`.

    Returns
    -------
    Work

    Raises
    ------
    TypeError, ValueError
        If ``name`` is not a known model.

    Examples
    --------
    >>> w = work("resnet50")
    >>> round(w.macs / 1e9, 2), w.parameters
    (4.09, 25557032)
    """
    from . import archs

    _check.text(name, "name")
    if name not in archs.MODELS:
        raise ValueError(f"name must be one of {', '.join(archs.MODELS)}; got {name!r}")
    return _work(name)


# ---- the bound and the comparison ---------------------------------------------------------------


@dataclass(frozen=True)
class Bound:
    """The roofline's lower bound on one inference's time, in seconds, and which roof sets it.

    ``compute_s`` is ``2·MACs / peak`` and ``memory_s`` the compulsory bytes
    over the bandwidth (None where the device's figure is not published);
    ``seconds`` the larger known term; ``limit`` ``"compute"`` or
    ``"memory"``. ``spill_s`` is the memory time if every node's
    activations also went through DRAM (:attr:`Work.activations`: chapter
    3's per-node bytes, BatchNormalization folded and ReLU/Clip fused): an
    estimate, not a bound.
    """

    name: str
    device: str
    precision: str
    compute_s: float | None
    memory_s: float | None
    spill_s: float | None
    seconds: float
    limit: str

    def __post_init__(self) -> None:
        _check.record(self, text=("name", "device", "precision"))
        for f in ("compute_s", "memory_s", "spill_s"):
            if getattr(self, f) is not None:
                object.__setattr__(self, f, _check.positive(getattr(self, f), f))
        terms = {k: v for k, v in (("compute", self.compute_s), ("memory", self.memory_s)) if v is not None}
        if not terms:
            raise ValueError("compute_s and memory_s must not both be None: a bound needs at least one roof")
        if (self.spill_s is None) != (self.memory_s is None) or (self.spill_s or 0) < (self.memory_s or 0):
            raise ValueError(f"spill_s must be given exactly with memory_s and be >= it, got {self.spill_s} and "
                             f"{self.memory_s}")
        _check.one_of(self.limit, "limit", tuple(terms))
        object.__setattr__(self, "seconds", _check.positive(self.seconds, "seconds"))
        if self.seconds != max(terms.values()) or terms[self.limit] != self.seconds:
            raise ValueError(f"seconds and limit must be the larger roof, got {self.seconds} ({self.limit}) for "
                             f"{terms}")


def bound(name: str, device: str | Device, precision: str) -> Bound:
    """The roofline lower bound on the latency of ``name`` on ``device`` at ``precision``.

    ``t ≥ max(2·MACs / peak, (weights·b_w + io·b_a) / bandwidth)`` with the
    element sizes of :func:`element_bytes`. A term whose figure the device
    does not publish is left out (the bound is then the other term alone). It
    bounds a run whose weights come from DRAM once per inference; a small
    model whose weights stay on chip between inferences can beat its memory
    term. See chapter 9, "Real NPUs, measured" (chapters/09_npus.md).

    Parameters
    ----------
    name : str
        A key of :func:`work`.
    device : str or Device
        A key of :data:`DEVICES`, or a :class:`Device`.
    precision : str
        As for :func:`element_bytes`.

    Returns
    -------
    Bound

    Raises
    ------
    TypeError, ValueError
        For an unknown model, device or precision.

    Examples
    --------
    >>> b = bound("resnet50", "Snapdragon X Elite CRD", "w8a8")
    >>> round(b.compute_s * 1e3, 3), round(b.memory_s * 1e3, 3), b.limit
    (0.182, 0.189, 'memory')
    """
    w, dev = work(name), _device(device)
    wb, ab = element_bytes(precision)
    compute = 2 * w.macs / (dev.peak_tops * 1e12) if dev.peak_tops is not None else None
    memory = spill = None
    if dev.bandwidth_gbs is not None:
        memory = (w.weights * wb + w.io * ab) / (dev.bandwidth_gbs * 1e9)
        spill = (w.weights * wb + w.activations * ab) / (dev.bandwidth_gbs * 1e9)
    terms = {k: v for k, v in (("compute", compute), ("memory", memory)) if v is not None}
    limit = max(terms, key=terms.get)
    return Bound(name, dev.name, precision, compute, memory, spill, terms[limit], limit)


@dataclass(frozen=True)
class Comparison:
    """A measurement beside its bound: ``ratio`` = measured ÷ bound (≥ 1 unless the bound's assumptions fail).

    ``delivered_tops`` is ``2·MACs / measured time`` in tera-operations per
    second, ``fraction`` that over the device's peak (None without a peak).
    """

    measurement: Measurement
    work: Work
    bound: Bound
    ratio: float
    delivered_tops: float
    fraction: float | None

    def __post_init__(self) -> None:
        m, w, b = (_check.instance(getattr(self, f), f, cls) for f, cls in
                   (("measurement", Measurement), ("work", Work), ("bound", Bound)))
        if not m.name == w.name == b.name or (m.device, m.precision) != (b.device, b.precision):
            raise ValueError(f"measurement, work and bound must be of one model, device and precision, got "
                             f"{m.name}/{m.device}/{m.precision}, {w.name}, {b.name}/{b.device}/{b.precision}")
        for f, want in (("ratio", m.ms / 1e3 / b.seconds), ("delivered_tops", 2 * w.macs / (m.ms / 1e3) / 1e12)):
            if not math.isclose(_check.positive(getattr(self, f), f), want, rel_tol=1e-9):
                raise ValueError(f"{f} must be {want:.6g} for this measurement, work and bound, got {getattr(self, f)}")
        if self.fraction is not None:
            _check.real(self.fraction, "fraction", minimum=0.0)


def compare(m: Measurement) -> Comparison:
    """Set a published measurement beside the roofline bound of its model on its device.

    See chapter 9, "Real NPUs, measured" (chapters/09_npus.md).

    Parameters
    ----------
    m : Measurement
        A row of :func:`table` whose device is in :data:`DEVICES`. A device
        whose rows copy another's (:meth:`Table.copy_of`) is not: compare the
        device it copies.

    Returns
    -------
    Comparison

    Raises
    ------
    TypeError, ValueError
        If ``m`` is not a Measurement, or its device is not in :data:`DEVICES`.

    Examples
    --------
    >>> c = compare(table().fastest("resnet50", "Snapdragon X Elite CRD", "w8a8"))
    >>> round(c.ratio, 1), round(c.delivered_tops, 1), round(c.fraction, 3)
    (4.5, 9.7, 0.216)
    """
    _check.instance(m, "m", Measurement)
    w, b = work(m.name), bound(m.name, m.device, m.precision)
    seconds = m.ms / 1e3
    delivered = 2 * w.macs / seconds / 1e12
    peak = DEVICES[m.device].peak_tops
    return Comparison(m, w, b, seconds / b.seconds, delivered, None if peak is None else delivered / peak)


def pipeline_seconds(device: str, steps: int, *, guidance: bool = True, runtime: str | None = None) -> float:
    """Seconds per 512×512 image of Stable Diffusion v1.5 on ``device``, from its components' published times.

    One image runs the text encoder on its prompt, the UNet once per
    denoising step (twice with classifier-free guidance: with the prompt and
    with the empty prompt) and the VAE decoder once: ``t_text + (1+g)·steps·
    t_unet + t_vae``. The empty prompt's encoding is the same for every image,
    so it is computed once and cached (AI Hub's application says so); an
    application that does not cache it adds one ``t_text`` per image. Each
    component takes its fastest run (or ``runtime``'s). The scheduler's
    arithmetic and the copies between components are left out. See chapter
    9, "Real NPUs, measured" (chapters/09_npus.md).

    Parameters
    ----------
    device : str
        A device of :func:`table` that measured all three components.
    steps : int
        Denoising steps (>= 1).
    guidance : bool
        Classifier-free guidance (two UNet calls a step).
    runtime : str, optional
        ``"qnn_context_binary"`` or ``"precompiled_qnn_onnx"``; default the fastest of each component.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        For a bad argument, or a device without all three components measured (the message lists those that have).

    Examples
    --------
    >>> round(pipeline_seconds("Snapdragon X Elite CRD", 20), 2)
    4.61
    """
    _check.text(device, "device")
    steps = _check.integer(steps, "steps", minimum=1)
    g = 2 if _check.boolean(guidance, "guidance") else 1
    t = table()
    # every row, and a run published only on copies once more under its reference device (Table.select, distinct)
    parts = {p: list({(m.device, m.runtime, m.ms): m for distinct in (False, True)
                      for m in t.select(name=f"stable_diffusion_v1_5/{p}", runtime=runtime, distinct=distinct)}.values())
             for p in ("text_encoder", "unet", "vae")}
    complete = sorted(set.intersection(*({m.device for m in runs} for runs in parts.values())))
    if device not in complete:
        raise ValueError(f"device must be one of {', '.join(complete)} (the devices with all three Stable Diffusion "
                         f"components published{f' with runtime {runtime!r}' if runtime else ''}); got {device!r}")
    times = {p: min(m.ms for m in runs if m.device == device) / 1e3 for p, runs in parts.items()}
    return times["text_encoder"] + g * steps * times["unet"] + times["vae"]


# ---- numbers so far -------------------------------------------------------------------------------


def numbers(ctx: _tally.Inputs) -> list[_tally.Row]:
    """Chapter 9's row of the "numbers so far" table: CameraNet's roofline bound on a real NPU.

    Follows the contract of :mod:`npukit.tally`: CameraNet's MACs
    (``models.summary``) and its INT8 compulsory bytes, in the book's one
    convention for weight bytes (``ctx.weight_bytes["INT8"]``, the QDQ
    graph's initializers, :func:`npukit.shared.weight_bytes`) plus one INT8
    image in and its logits out, on the Snapdragon X Elite's cited peak and
    bandwidth (:func:`bound`'s rule). See chapter 9, "Real NPUs, measured"
    (chapters/09_npus.md).

    Raises
    ------
    TypeError
        If ``ctx`` is not a :class:`npukit.tally.Context`.

    Examples
    --------
    >>> from npukit import tally
    >>> [r.chapter for r in numbers(tally.Context())]
    [9]
    """
    from .models import summary

    _tally.inputs(ctx)
    rows = summary(ctx.net)
    macs, io = sum(r["macs"] for r in rows), math.prod(rows[0]["input"]) + math.prod(rows[-1]["output"])
    nbytes = ctx.weight_bytes["INT8"] + io
    dev = DEVICES["Snapdragon X Elite CRD"]
    compute, memory = 2 * macs / (dev.peak_tops * 1e12), nbytes / (dev.bandwidth_gbs * 1e9)
    return [_tally.Row(9, "CameraNet's roofline bound on the Snapdragon X Elite NPU (INT8: weight bytes as "
                          "deployed, read once, and one image in and out)",
                       f"{max(compute, memory) * 1e9:,.0f} ns ({'compute' if compute >= memory else 'memory'}-bound, "
                       f"{nbytes:,} B)",
                       "npukit.npus.DEVICES (cited peak and bandwidth), models.summary, "
                       "npukit.shared.weight_bytes")]
