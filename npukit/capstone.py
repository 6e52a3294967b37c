"""The minimal closed loop: CameraNet from NumPy to a verified, measured INT8 model, and its variants.

Chapter 8 teaches no new technique; it runs the earlier chapters' tools in
order, by hand, and closes every stage with a check. The invariant:

    *Every stage of the loop ends in a comparison that can fail.* Export is
    checked against the NumPy network, folding against the unfolded graph,
    quantization against ONNX's own QuantizeLinear, the deployed model
    against the float reference, and each measured time is explained by
    counts from the graph (MACs, bytes, roofline) and an estimate for a
    hypothetical NPU array.

Here: :func:`variant` (a wider CameraNet or one for larger images, derived
from the shipped weights without training), :func:`closed_loop` (the
stages chapter 8 walks through, packaged so that the "numbers so far" table
and lab 8's live control can rerun them for any variant), :data:`NPU_ARRAY`
(the assumed array) and :func:`numbers`.

See chapter 8, "The minimal closed loop" (chapters/08_capstone.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from . import _check, _tally
from .graphs import _walkable
from .models import CameraNet

if TYPE_CHECKING:
    from .accelerator import ModelTable
    from .graphs import MachineSpec

__all__ = ["NPU_ARRAY", "CALIBRATION_SEED", "variant", "Check", "LayerRow", "Loop", "closed_loop", "numbers"]

#: The hypothetical NPU array every estimate of chapter 8 uses: an ASSUMED
#: size, clock and DRAM bandwidth (chapter 5's 32×32 weight-stationary array
#: and its edge-SoC memory), not a product's datasheet.
#: The widest :func:`variant`: 16 × CameraNet's channels (2,048 in the last block).
MAX_WIDTH = 16

NPU_ARRAY: dict[str, float] = {"rows": 32, "cols": 32, "clock_hz": 1e9, "dram_bandwidth": 136.5e9}

#: Seed of the calibration images (chapter 6's representative set).
CALIBRATION_SEED = 7

#: Each precision the loop deploys: (which model, OpenVINO's INFERENCE_PRECISION_HINT).
_PRECISIONS = {"FP32": ("folded", "f32"), "BF16": ("folded", "bf16"), "INT8": ("qdq", "f32")}


def variant(width: float = 1.0, size: int = 32) -> CameraNet:
    """The shipped CameraNet, ``width`` times as wide (>= 1), for ``size``×``size`` images (>= 16), untrained.

    Net2Net widening (Chen et al., 2016): new channel ``j`` of a layer repeats
    old channel ``j mod c``, and every layer reading the copies divides their
    weights by the number of copies, so the wider network computes the same
    logits with more MACs and bytes. A global average pool ends the network, so
    the weights run on any image size (the accuracy there is measured, not
    assumed). See chapter 8, "The minimal closed loop" (chapters/08_capstone.md).

    Raises
    ------
    TypeError, ValueError
        For a ``width`` that is not a real number >= 1 or a ``size`` not an integer >= 16.

    Examples
    --------
    >>> from npukit.data import shapes_dataset
    >>> wide = variant(width=1.5)
    >>> wide.config["stem"], wide.config["blocks"]
    (24, [[48, 1], [96, 2], [192, 2]])
    >>> x = shapes_dataset(4, seed=0)[0]
    >>> bool(np.allclose(wide(x), CameraNet.pretrained()(x), atol=1e-4))
    True
    """
    width = _check.positive(width, "width")
    if width < 1:
        raise ValueError(f"width must be >= 1 (a variant copies channels, it cannot drop them), got {width}")
    if width > MAX_WIDTH:  # 1e6 would ask for 10**12-weight convolutions
        raise ValueError(f"width must be <= {MAX_WIDTH} (a {MAX_WIDTH}× CameraNet has {MAX_WIDTH * 128} channels), got {width}")
    size = _check.integer(size, "size", minimum=16, maximum=1024)
    base = CameraNet.pretrained()
    wide = lambda c: int(round(c * width))  # noqa: E731
    cfg = base.config
    net = CameraNet(stem=wide(cfg["stem"]), blocks=[(wide(w), s) for w, s in cfg["blocks"]],
                    num_classes=cfg["num_classes"], size=size)
    params, src = {}, np.arange(3)                 # src[j]: the old channel new channel j copies
    for layer in base.layers:
        p, n = base.params, layer.name
        copies = np.bincount(src)[src].astype(np.float32)   # how many new channels copy the same old one
        if layer.op == "Conv" and layer.kind == "depthwise":
            params[f"{n}.weight"] = p[f"{n}.weight"][src]
        elif layer.op == "Conv":
            out = np.arange(wide(layer.cout)) % layer.cout
            params[f"{n}.weight"] = p[f"{n}.weight"][out][:, src] / copies[None, :, None, None]
            src = out
        elif layer.op == "BatchNormalization":
            params.update({f"{n}.{k}": p[f"{n}.{k}"][src] for k in ("scale", "bias", "mean", "var")})
        elif layer.op == "Gemm":
            params[f"{n}.weight"] = p[f"{n}.weight"][:, src] / copies[None, :]
            params[f"{n}.bias"] = p[f"{n}.bias"].copy()
    net.params = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in params.items()}
    return net


@dataclass(frozen=True)
class Check:
    """One closing comparison of a stage: ``value`` against ``limit`` by ``rule`` ("<=" or ">=")."""

    stage: str
    quantity: str
    value: float
    limit: float
    rule: str = "<="

    def __post_init__(self) -> None:
        for f in ("stage", "quantity"):
            if not _check.text(getattr(self, f), f).strip():
                raise ValueError(f"{f} must not be empty")
        v = self.value  # NaN is a measurement that failed: it is kept, and never passes
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"value must be a real number, got {type(v).__name__} {v!r}")
        _check.real(self.limit, "limit")
        _check.one_of(self.rule, "rule", ("<=", ">="))

    @property
    def ok(self) -> bool:
        """True if the stage passed (a NaN value never passes)."""
        return bool(self.value <= self.limit if self.rule == "<=" else self.value >= self.limit)


@dataclass(frozen=True)
class LayerRow:
    """One Conv/Gemm layer explained: counts from the graph, estimates, and measured times (µs)."""

    name: str
    kind: str
    macs: int
    flops: int
    bytes_fp32: int  #: every input, weight and output through memory, float32 (chapter 3's op_counts)
    bytes_int8: int  #: the same with one byte per value
    bound: str  #: "memory" or "compute" on this machine's roofline
    roofline_us: float  #: this machine's lower bound, max(FLOPs / peak, bytes / bandwidth)
    cycles: int  #: on NPU_ARRAY, weight-stationary (chapter 5)
    array_us: float  #: max(cycles / clock, INT8 compulsory bytes / DRAM bandwidth)
    measured_us: dict = field(default_factory=dict)  #: precision → median µs from the per-layer profile

    def __post_init__(self) -> None:
        _check.record(self, text=("name", "kind"), counts=("macs", "flops", "bytes_fp32", "bytes_int8", "cycles"),
                      seconds=("roofline_us", "array_us"))
        if self.flops < 2 * self.macs:
            raise ValueError(f"flops must be at least 2 × macs = {2 * self.macs}, got {self.flops}")
        if self.bytes_int8 > self.bytes_fp32:
            raise ValueError(f"bytes_int8 must be at most bytes_fp32 ({self.bytes_fp32}), got {self.bytes_int8}")
        _check.one_of(self.bound, "bound", ("memory", "compute"))
        if not isinstance(self.measured_us, dict):
            raise TypeError(f"measured_us must be a dict of precision → µs, got {type(self.measured_us).__name__}")
        for k, v in self.measured_us.items():
            _check.text(k, "measured_us key")
            _check.real(v, f"measured_us[{k!r}]", minimum=0.0)


@dataclass(frozen=True)
class Loop:
    """Everything one run of :func:`closed_loop` made, checked and measured."""

    net: CameraNet
    model: Any  #: the exported ONNX model (batch 1)
    folded: Any  #: BatchNormalization folded
    qdq: Any  #: the INT8 QDQ model
    device: str
    checks: tuple
    accuracy: dict  #: "float" (NumPy) and each precision → held-out accuracy
    agreement: dict  #: precision → top-1 agreement with the NumPy float model
    max_diff: dict  #: precision → max |logits − NumPy float logits|
    latency: dict  #: precision → deploy.Benchmark
    layers: tuple  #: LayerRow per Conv/Gemm, in execution order
    array: ModelTable
    machine: MachineSpec
    heldout: int  #: held-out images behind ``accuracy`` and ``agreement``

    def __post_init__(self) -> None:
        from .accelerator import ModelTable
        from .deploy import Benchmark
        from .graphs import MachineSpec

        _check.instance(self.net, "net", CameraNet)
        for f in ("model", "folded", "qdq"):
            if type(getattr(self, f)).__name__ != "ModelProto":
                raise TypeError(f"{f} must be an onnx.ModelProto, got {type(getattr(self, f)).__name__}")
            _walkable(getattr(self, f), f)
        _check.text(self.device, "device")
        object.__setattr__(self, "checks", _check.sequence(self.checks, "checks", min_length=1))
        for i, c in enumerate(self.checks):
            _check.instance(c, f"checks[{i}]", Check)
        for f, lo, hi in (("accuracy", 0.0, 1.0), ("agreement", 0.0, 1.0), ("max_diff", 0.0, None)):
            d = getattr(self, f)
            if not isinstance(d, dict):
                raise TypeError(f"{f} must be a dict, got {type(d).__name__}")
            for k, v in d.items():
                _check.real(v, f"{f}[{k!r}]", minimum=lo, maximum=hi)
        if not isinstance(self.latency, dict) or not all(isinstance(b, Benchmark) for b in self.latency.values()):
            raise TypeError("latency must be a dict of precision → deploy.Benchmark")
        object.__setattr__(self, "layers", _check.sequence(self.layers, "layers"))
        for i, r in enumerate(self.layers):
            _check.instance(r, f"layers[{i}]", LayerRow)
        _check.instance(self.array, "array", ModelTable, "accelerator.ModelTable")
        _check.instance(self.machine, "machine", MachineSpec, "graphs.MachineSpec")
        _check.integer(self.heldout, "heldout", minimum=1)

    @property
    def passed(self) -> bool:
        """True if every stage's check passed."""
        return all(c.ok for c in self.checks)

    @property
    def macs(self) -> int:
        return sum(r.macs for r in self.layers)


def _weights_exact(qdq: Any, folded: Any) -> tuple[int, int]:
    """(values differing from ONNX QuantizeLinear, bad scales or zero points) over the QDQ model's weights."""
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    init = {t.name: numpy_helper.to_array(t) for t in qdq.graph.initializer}
    floats = {t.name: numpy_helper.to_array(t) for t in folded.graph.initializer}
    dq = {n.output[0]: n for n in qdq.graph.node if n.op_type == "DequantizeLinear"}
    layers = [[n for n in m.graph.node if n.op_type in ("Conv", "Gemm")] for m in (qdq, folded)]
    wrong = bad = 0
    for q_node, f_node in zip(*layers):
        d = dq[q_node.input[1]]
        q, scale, zp = (init[t] for t in d.input[:3])
        axis = next((a.i for a in d.attribute if a.name == "axis"), 1)
        bad += int(np.sum(~(np.isfinite(scale) & (scale > 0))) + np.sum(zp != 0))   # int8 weights: symmetric
        node = helper.make_node("QuantizeLinear", ["w", "s", "z"], ["q"], axis=axis)
        graph = helper.make_graph([node], "q", [helper.make_tensor_value_info("w", TensorProto.FLOAT, None)],
                                  [helper.make_tensor_value_info("q", TensorProto.INT8, None)],
                                  [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zp, "z")])
        ref = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
        wrong += int(np.sum(ref.run(None, {"w": floats[f_node.input[1]]})[0] != q))
    acts = [init[n.input[1]] for n in qdq.graph.node if n.op_type == "QuantizeLinear"]
    return wrong, bad + sum(int(np.sum(~(np.isfinite(s) & (s > 0)))) for s in acts)


def _reference_logits(model: Any, images: np.ndarray) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator

    ev, name = ReferenceEvaluator(model), model.graph.input[0].name
    return np.concatenate([ev.run(None, {name: im[None]})[0] for im in images])


def _layers(folded: Any, net: CameraNet, machine: MachineSpec, profiles: dict) -> tuple:
    """Every Conv/Gemm of the folded graph, explained (see :class:`LayerRow`)."""
    from .accelerator import cameranet_layers, dram_bytes, model_table
    from .graphs import op_counts

    table = model_table(cameranet_layers(net), int(NPU_ARRAY["rows"]), int(NPU_ARRAY["cols"]), "ws")
    est = {x.layer.name: x for x in table.layers}
    int8 = {c.name: c.bytes for c in op_counts(folded, itemsize=1)}
    rows = []
    for c in op_counts(folded):
        if c.op_type not in ("Conv", "Gemm"):
            continue
        e = est[c.name]
        L = e.layer
        t_array = max(e.cycles / NPU_ARRAY["clock_hz"],
                      dram_bytes(L) / NPU_ARRAY["dram_bandwidth"])
        rows.append(LayerRow(c.name, L.kind or c.op_type, c.macs, c.flops, c.bytes, int8[c.name],
                             machine.bound(c.flops / c.bytes),
                             1e6 * max(c.flops / machine.peak_flops, c.bytes / machine.bandwidth), e.cycles,
                             1e6 * t_array, {p: prof.get(c.name, 0.0) for p, prof in profiles.items()}))
    return tuple(rows), table


def _profile(compiled: Any, x: np.ndarray, model: Any) -> dict[str, float]:
    """ONNX Conv/Gemm node name → median µs of the executed layer it was fused into.

    OpenVINO may name a layer after its node with a suffix ("stem.conv/WithoutBiases", when the
    bias is split off): the part before the "/" is the node (npukit.project relies on it).
    """
    from .deploy import executed_graph, profile_layers

    alias = {**{n.name: n.name for n in model.graph.node}, **{o: n.name for n in model.graph.node for o in n.output}}
    times = {r.name: r.microseconds for r in profile_layers(compiled, x, runs=20)}
    out: dict[str, float] = {}
    for op in executed_graph(compiled):
        for o in op.original:
            o = o if o in alias else o.split("/")[0]
            if o in alias and op.name in times:
                out.setdefault(alias[o], times[op.name])
    return out


def _calibration(images: Any, size: int) -> None:
    """Refuse calibration images that would give wrong ranges without an error: wrong type, size or units."""
    images = _check.as_array(images, "calibration")
    if images.dtype != np.float32 or images.ndim != 4 or images.shape[1:] != (3, size, size) or not len(images):
        raise ValueError(f"calibration must be float32 images of shape (n >= 1, 3, {size}, {size}), the model's "
                         f"input; got {images.dtype} {images.shape}")
    if not (np.isfinite(images).all() and images.min() >= 0 and images.max() <= 1):
        raise ValueError("calibration pixels must be finite and lie in [0, 1] (the model's units, not 0–255)")


def _front(net: CameraNet, calibration: np.ndarray, method: str, few: np.ndarray, ref: np.ndarray) -> tuple:
    """Stages 1-4: export (batch 1), fold, calibrate and quantize, check the contract; each closed by a Check."""
    import onnx

    from . import contract, ptq, rewrites

    model = net.to_onnx()
    onnx.checker.check_model(model, full_check=True)
    unfolded = _reference_logits(model, few)
    folded = rewrites.fold_batchnorm(model)
    qdq = ptq.to_qdq(folded, calibration, method=method)
    wrong, bad = _weights_exact(qdq, folded)
    return model, folded, qdq, [
        Check("export", "max |onnx.reference − NumPy| (logits)", float(np.abs(unfolded - ref).max()), 1e-4),
        Check("fold", "BatchNormalization nodes left", sum(n.op_type == "BatchNormalization" for n in folded.graph.node), 0),
        Check("fold", "max |folded − unfolded| (onnx.reference)",
              float(np.abs(_reference_logits(folded, few) - unfolded).max()), 1e-4),
        Check("quantize", "invalid scales or weight zero points", bad, 0),
        Check("quantize", "int8 weights ≠ QuantizeLinear (onnx.reference)", wrong, 0),
        Check("contract", "violations of the illustrative NPU contract", len(contract.check_contract(qdq)), 0),
        Check("contract", "bytes crossing NPU ↔ CPU per image", contract.partition(qdq).crossing_bytes, 0)]


def closed_loop(net: CameraNet, *, machine: MachineSpec | None = None, device: str = "CPU",
                calibration: np.ndarray | None = None, method: str = "minmax", heldout: int = 500,
                min_agreement: float = 0.95, warmup: int = 10, runs: int = 100,
                latency: Mapping[str, Any] | None = None) -> Loop:
    """Run chapter 8's stages on ``net``: export, fold, quantize, contract, compile, verify, benchmark, profile.

    The calls chapter 8 makes one by one, in one place, so that the "numbers
    so far" table and lab 8's live control can rerun them for any variant.
    Each stage adds a :class:`Check`; a failed check stops nothing, it shows
    as a failed row. Stage 5's check reads the INT8 model's executed graph:
    its convolutions and fully connected layers must run INT8 kernels.
    Latency is measured on models compiled without ``PERF_COUNT``, the
    per-layer profile on a second compilation with it, so that profiling's
    own cost does not enter the benchmark; the precisions are timed against
    each other in interleaved rounds (:func:`npukit.deploy.benchmark_many`),
    so that a busy minute cannot decide which one is faster. The benchmark
    runs right after compiling, before the verification runs the models,
    so each ``latency[p].first`` is a cold start: the first inference of a
    freshly compiled model. See chapter 8, "The minimal closed loop" (chapters/08_capstone.md).

    Parameters: ``machine``, this machine's roofline (default: this
    build's profile, :func:`npukit.machine.profile`); ``device`` to compile
    for; ``calibration`` images (default: 128 of
    ``shapes_dataset(seed=CALIBRATION_SEED)``) and the observer ``method`` of
    :func:`npukit.ptq.to_qdq`; ``heldout``, how many images of the one
    held-out draw (:func:`npukit.data.heldout`, a prefix) score accuracy and
    agreement; ``min_agreement`` in [0, 1) that BF16 and INT8 must reach;
    ``warmup`` and ``runs`` (rounds) of the interleaved benchmark; ``latency``,
    precision → :class:`npukit.deploy.Benchmark` already measured for these
    models (the build's store passes the shipped model's, so it is measured
    once), instead of benchmarking here.

    Raises
    ------
    TypeError, ValueError
        For an argument of the wrong type or out of range.

    Examples
    --------
    >>> from npukit.graphs import MachineSpec
    >>> loop = closed_loop(CameraNet.pretrained(), machine=MachineSpec(1e11, 1e10, "example", "given", "given"),
    ...                    heldout=50, runs=5)
    >>> loop.passed, [c.stage for c in loop.checks][:3]
    (True, ['export', 'fold', 'fold'])
    """
    from . import deploy
    from .data import HELDOUT_N
    from .data import heldout as heldout_draw
    from .data import shapes_dataset
    from .graphs import MachineSpec
    from .machine import profile

    _check.instance(net, "net", CameraNet)
    device = _check.text(device, "device")
    method = _check.one_of(_check.text(method, "method"), "method", ("minmax", "percentile", "mse"))
    heldout = _check.integer(heldout, "heldout", minimum=1)
    if heldout > HELDOUT_N:
        raise ValueError(f"heldout must be at most {HELDOUT_N}, the size of the held-out draw, got {heldout}")
    min_agreement = _check.fraction(min_agreement, "min_agreement")
    warmup = _check.integer(warmup, "warmup", minimum=0, maximum=100_000)
    runs = _check.integer(runs, "runs", minimum=3, maximum=100_000)
    if calibration is None:
        calibration = shapes_dataset(128, seed=CALIBRATION_SEED, size=net.size)[0]
    _calibration(calibration, net.size)
    if latency is not None and not isinstance(latency, Mapping):
        raise TypeError(f"latency must be a mapping of precision names to deploy.Benchmark, got {type(latency).__name__}")
    if machine is None:
        machine = profile().machine
    _check.instance(machine, "machine", MachineSpec)
    images, labels = heldout_draw(heldout, size=net.size)
    ref = net(images)
    model, folded, qdq, checks = _front(net, calibration, method, images[:4], ref[:4])
    models = {"folded": folded, "qdq": qdq}
    accuracy = {"float": float((ref.argmax(1) == labels).mean())}
    agreement, max_diff, timed, profiles = {}, {}, {}, {}
    for label, (which, hint) in _PRECISIONS.items():          # 5: compile
        try:                                                   # timed without PERF_COUNT: profiling costs time
            timed[label] = deploy.compile(models[which], device, precision=hint)
        except RuntimeError:                                   # a precision this device does not offer
            checks.append(Check("compile", f"{label} compiled for {device}", 0, 1, ">="))
            continue
        if label == "INT8":
            not_int8 = sum(op.precision not in ("u8", "i8") for op in deploy.executed_graph(timed[label])
                           if op.layer_type in ("Convolution", "FullyConnected"))
            checks.append(Check("compile", "INT8 convolutions not executed in INT8", not_int8, 0))
    # 7, before anything else runs them: a fresh compiled model's first inference is a cold start
    if latency is None:
        latency = (deploy.benchmark_many(timed, images[:1], warmup=warmup, runs=runs) if len(timed) > 1 else
                   {k: deploy.benchmark(c, images[:1], warmup=warmup, runs=runs) for k, c in timed.items()})
    else:
        latency = dict(latency)
        for label in timed:
            if not isinstance(latency.get(label), deploy.Benchmark):
                raise ValueError(f"latency must hold a deploy.Benchmark for every precision compiled, "
                                 f"{', '.join(timed)}; {label!r} is missing")
    for label, compiled in timed.items():                      # 6 and 8: verify, profile
        which, hint = _PRECISIONS[label]
        top = np.concatenate([compiled(im[None])[0] for im in images])
        accuracy[label] = float((top.argmax(1) == labels).mean())
        agreement[label] = float((top.argmax(1) == ref.argmax(1)).mean())
        max_diff[label] = float(np.abs(top - ref).max())
        checks.append(Check("verify", f"max |{label} − float| (logits)", max_diff[label], 1e-4) if label == "FP32"
                      else Check("verify", f"{label} top-1 agreement with float", agreement[label], min_agreement, ">="))
        profiled = deploy.compile(models[which], device, precision=hint, profile=True)
        profiles[label] = _profile(profiled, images[:1], models[which])
    layers, table = _layers(folded, net, machine, profiles)
    return Loop(net, model, folded, qdq, device, tuple(checks), accuracy, agreement, max_diff, latency, layers,
                table, machine, heldout)


def numbers(ctx: _tally.Inputs) -> list[_tally.Row]:
    """Chapter 8's rows of the "numbers so far" table: bytes, roofline class, cycles, latency, agreement.

    Reads ``ctx.loop`` (:func:`closed_loop` of ``ctx.net``, run on first use).
    See chapter 8, "The minimal closed loop" (chapters/08_capstone.md).

    Raises
    ------
    TypeError
        If ``ctx`` is not a :class:`npukit.tally.Context`.

    Examples
    --------
    >>> from npukit import tally
    >>> from npukit.graphs import MachineSpec
    >>> ctx = tally.Context(machine=MachineSpec(1e11, 1e10, "example", "given", "given"))
    >>> [r.quantity for r in numbers(ctx)][:2]
    ['bytes per image through memory, every layer alone: float32 / INT8', 'roofline class on this machine']
    """
    _tally.inputs(ctx)
    loop, m, arr = ctx.loop, ctx.loop.machine, NPU_ARRAY
    flops, nbytes = sum(r.flops for r in loop.layers), sum(r.bytes_fp32 for r in loop.layers)
    n_mem = sum(r.bound == "memory" for r in loop.layers)
    ms = {k: b.median * 1e3 for k, b in loop.latency.items()}

    def per(d: dict, keys: tuple, fmt: str) -> str:
        return " / ".join(format(d[k], fmt) if k in d else "-" for k in keys)

    return [
        _tally.Row(8, "bytes per image through memory, every layer alone: float32 / INT8",
                  f"{nbytes:,} B / {sum(r.bytes_int8 for r in loop.layers):,} B", "graphs.op_counts of the folded graph's Conv and Gemm nodes (itemsize 4, then 1)"),
        _tally.Row(8, "roofline class on this machine",
                  f"{m.bound(flops / nbytes)}-bound: {flops / nbytes:.1f} FLOP/B vs ridge {m.ridge:.1f} FLOP/B; "
                  f"{n_mem} of {len(loop.layers)} layers memory-bound", f"MachineSpec.bound, measure_machine on {m.cpu}"),
        _tally.Row(8, f"cycles on an assumed {arr['rows']:g}×{arr['cols']:g} WS array at {arr['clock_hz'] / 1e9:g} GHz",
                  f"{loop.array.cycles:,} ({loop.array.cycles / arr['clock_hz'] * 1e6:.1f} µs, "
                  f"utilization {loop.array.utilization:.1%})", "accelerator.model_table (capstone.NPU_ARRAY)"),
        _tally.Row(8, f"latency, batch 1, {loop.device}: FP32 / BF16 / INT8 (median ms, after warm-up)",
                   per(ms, tuple(_PRECISIONS), ".3f"),
                   f"deploy.benchmark_many: {len(next(iter(loop.latency.values())).times)} interleaved rounds "
                   "(this machine)"),
        _tally.Row(8, "held-out accuracy: float / FP32 / BF16 / INT8", per(loop.accuracy, ("float", *_PRECISIONS), ".1%"),
                  f"NumPy, then OpenVINO on {loop.heldout:,} held-out images"),
        _tally.Row(8, "top-1 agreement with float: FP32 / BF16 / INT8", per(loop.agreement, tuple(_PRECISIONS), ".1%"),
                  "deployed models vs the NumPy network"),
        _tally.Row(8, "closed-loop checks passed", f"{sum(c.ok for c in loop.checks)} of {len(loop.checks)}",
                  "capstone.closed_loop"),
    ]
