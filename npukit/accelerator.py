"""The array in a system: whole networks on it, its peak and delivered rate, and the memory that feeds it.

:mod:`npukit.systolic` times one GEMM on one array. This module puts that
array to work. The invariant it teaches:

    *An array delivers its peak only when the layers fill it and the memory
    feeds it.* Peak TOPS is ``2 · rows · cols · clock`` (a MAC is two
    operations); a network gets the peak times its utilization (how well each
    layer's GEMM fits the array, :func:`model_table`), and no more than the
    roofline of chapter 3 allows (DRAM bandwidth × arithmetic intensity,
    :func:`array_machine`). Between the array and DRAM sits SRAM: it must
    serve the array's edges every cycle (:func:`bank_conflicts` counts what a
    bad layout costs) and hide DRAM behind the computation
    (:func:`fold_timeline`, with and without double buffering).

:func:`resnet18_layers` and :func:`cameranet_layers` write a network down as
GEMMs in SCALE-Sim's convention (``M`` = output pixels, ``N`` = filters,
``K`` = filter window × input channels), :func:`model_table` and
:func:`aspect_sweep` run them through :func:`npukit.systolic.estimate`.

See chapter 5, "Systolic arrays" (chapters/05_systolic.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import _check, _tally
from .graphs import MachineSpec
from .systolic import DATAFLOWS, Estimate, estimate

__all__ = [
    "Layer",
    "LayerEstimate",
    "ModelTable",
    "resnet18_layers",
    "cameranet_layers",
    "model_table",
    "aspect_sweep",
    "peak_tops",
    "array_machine",
    "dram_bytes",
    "resident_bytes",
    "feed_addresses",
    "bank_conflicts",
    "fold_timeline",
    "numbers",
]


def _array(rows: Any, cols: Any) -> tuple[int, int]:
    return _check.integer(rows, "rows", minimum=1), _check.integer(cols, "cols", minimum=1)


# ---- whole networks --------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """One layer as GEMM work: ``count`` GEMMs of ``M × N × K`` run one after another.

    ``macs`` is the layer's useful MACs (default ``count·M·N·K``); it is
    smaller when a mapping computes zeros, as a depthwise layer lowered to
    one dense GEMM does. ``inputs`` and ``weights`` are the elements of the
    layer's input tensor and of its parameters, each counted once, as
    chapter 3's ``graphs.op_counts`` counts them; they default to
    ``count·M·K`` and ``count·K·N``, the GEMM operands as stored matrices
    (right for a fully connected layer). A convolution gives its input
    tensor's size instead: its ``A`` is the im2col matrix, which repeats
    each input pixel in up to ``k²`` rows and exists only on chip.
    """

    name: str
    M: int
    N: int
    K: int
    count: int = 1
    macs: int = 0
    kind: str = ""
    inputs: int = 0
    weights: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a string, got {type(self.name).__name__}")
        for attr in ("M", "N", "K", "count"):
            _check.integer(getattr(self, attr), attr, minimum=1)
        for attr in ("macs", "inputs", "weights"):
            _check.integer(getattr(self, attr), attr, minimum=0)
        _check.text(self.kind, "kind")
        if self.macs > self.count * self.M * self.N * self.K:
            raise ValueError(f"macs must be at most count·M·N·K = {self.count * self.M * self.N * self.K:,} "
                             f"(the useful part of the GEMMs' work), got {self.macs:,}")
        defaults = {"macs": self.count * self.M * self.N * self.K, "inputs": self.count * self.M * self.K,
                    "weights": self.count * self.K * self.N}
        for attr, value in defaults.items():
            if not getattr(self, attr):
                object.__setattr__(self, attr, value)

    @property
    def outputs(self) -> int:
        """Elements of the layer's output tensor: ``count·M·N``."""
        return self.count * self.M * self.N


def resnet18_layers() -> list[Layer]:
    """The convolutions and the classifier of ResNet-18 on a 224×224 image, as GEMMs.

    Architecture from He et al. 2016 (Table 1, 18-layer column): a 7×7/2
    stem of 64 filters, then four stages of two basic blocks (two 3×3
    convolutions each) with 64, 128, 256 and 512 channels on 56², 28², 14²
    and 7² maps; the first convolution of stages 2–4 has stride 2 and a 1×1
    stride-2 projection on its shortcut; a 512→1000 fully connected layer
    ends it. ``M`` = output pixels, ``N`` = filters, ``K`` = k²·C_in
    (SCALE-Sim's convention); identical layers are merged with ``count``.
    ``inputs`` is each convolution's input tensor (``C_in·H·W`` per GEMM,
    before padding), not the im2col matrix.

    Returns
    -------
    list of Layer

    Examples
    --------
    >>> layers = resnet18_layers()
    >>> sum(l.count for l in layers), round(sum(l.macs for l in layers) / 1e9, 2)
    (21, 1.81)
    >>> layers[0].inputs, layers[0].weights, layers[0].outputs       # 3×224×224 in, 64×112×112 out
    (150528, 9408, 802816)
    """
    out = [Layer("conv1 7×7/2, 3→64", 112 * 112, 64, 49 * 3, kind="stem", inputs=3 * 224 * 224)]
    c_in, size = 64, 56
    for stage, c in enumerate((64, 128, 256, 512), start=2):
        if stage > 2:
            size //= 2
            before = c_in * (2 * size) ** 2             # the previous stage's output
            out.append(Layer(f"conv{stage}_1a 3×3/2, {c_in}→{c}", size * size, c, 9 * c_in, kind="3×3",
                             inputs=before))
            out.append(Layer(f"conv{stage} proj 1×1/2, {c_in}→{c}", size * size, c, c_in, kind="1×1",
                             inputs=before))
            out.append(Layer(f"conv{stage} 3×3, {c}→{c}", size * size, c, 9 * c, count=3, kind="3×3",
                             inputs=3 * c * size * size))
        else:
            out.append(Layer(f"conv{stage} 3×3, {c}→{c}", size * size, c, 9 * c, count=4, kind="3×3",
                             inputs=4 * c * size * size))
        c_in = c
    out.append(Layer("fc 512→1000", 1, 1000, 512, kind="fc"))
    return out


def cameranet_layers(net: Any = None, *, batch: int = 1, depthwise: str = "per-channel") -> list[Layer]:
    """CameraNet's convolutions and classifier as GEMMs, from :func:`npukit.models.summary`.

    A dense or pointwise convolution is one GEMM with ``M = batch·Ho·Wo``,
    ``N = C_out``, ``K = k²·C_in``. A depthwise convolution is a grouped
    convolution with one channel per group; ``depthwise`` says how it is mapped:

    * ``"per-channel"`` (SCALE-Sim's own way): ``C`` separate GEMMs of
      ``M × 1 × k²``, each filling one column and ``k²`` rows of the array;
    * ``"dense"``: one GEMM of ``M × C × k²C`` whose weight matrix is block
      diagonal, all but ``1/C`` of its MACs multiply zeros.

    Each layer's ``inputs`` and ``weights`` are its input tensor and its
    parameters as :func:`npukit.models.summary` reports them, so
    :func:`dram_bytes` counts what chapter 3's ``graphs.op_counts`` counts.

    Parameters
    ----------
    net : CameraNet, optional
        Default: ``CameraNet()`` (only the architecture matters).
    batch : int
        Images per call.
    depthwise : str
        ``"per-channel"`` or ``"dense"``.

    Returns
    -------
    list of Layer

    Raises
    ------
    TypeError, ValueError
        For a bad ``batch`` or ``depthwise``.

    Examples
    --------
    >>> [(l.name, l.M, l.N, l.K, l.count) for l in cameranet_layers()][:3]
    [('stem.conv', 256, 16, 27, 1), ('block1.dw', 256, 1, 9, 16), ('block1.pw', 256, 32, 16, 1)]
    """
    from . import models

    batch = _check.integer(batch, "batch", minimum=1)
    if not isinstance(depthwise, str):
        raise TypeError(f"depthwise must be a string, 'per-channel' or 'dense'; got {type(depthwise).__name__}")
    _check.one_of(depthwise, "depthwise", ("per-channel", "dense"))
    if net is not None:  # an ONNX model has no .layers: summarise the CameraNet it came from
        _check.instance(net, "net", models.CameraNet, "models.CameraNet (or None for the default one)")
    net = models.CameraNet() if net is None else net
    by_name = {layer.name: layer for layer in net.layers}
    out = []
    for r in models.summary(net, batch):
        tensors = dict(inputs=math.prod(r["input"]), weights=r["params"])
        if r["op"] == "Gemm":
            out.append(Layer(r["layer"], batch, r["output"][1], r["input"][1], kind="fc", **tensors))
        if r["op"] != "Conv":
            continue
        layer = by_name[r["layer"]]
        _, c_out, h, w = r["output"]
        M, k2 = batch * h * w, layer.kernel**2
        if r["kind"] == "depthwise" and depthwise == "per-channel":
            out.append(Layer(r["layer"], M, 1, k2, count=c_out, kind="depthwise", **tensors))
        elif r["kind"] == "depthwise":
            out.append(Layer(r["layer"], M, c_out, k2 * c_out, macs=r["macs"], kind="depthwise", **tensors))
        else:
            out.append(Layer(r["layer"], M, c_out, k2 * layer.cin, kind=r["kind"], **tensors))
        if out[-1].macs != r["macs"]:  # the lowering must do exactly the layer's MACs
            raise RuntimeError(f"cameranet_layers: {r['layer']} lowers to {out[-1].macs} MACs, the layer has {r['macs']}")
    return out


@dataclass(frozen=True)
class LayerEstimate:
    """One row of a :class:`ModelTable`: a layer, one GEMM's estimate, and the layer's totals."""

    layer: Layer
    estimate: Estimate
    cycles: int
    utilization: float

    def __post_init__(self) -> None:
        _check.instance(self.layer, "layer", Layer, "accelerator.Layer")
        _check.instance(self.estimate, "estimate", Estimate, "systolic.Estimate")
        e = self.estimate
        if (e.M, e.N, e.K) != (self.layer.M, self.layer.N, self.layer.K):
            raise ValueError(f"estimate must be of the layer's GEMM {(self.layer.M, self.layer.N, self.layer.K)}, "
                             f"got {(e.M, e.N, e.K)}")
        if _check.integer(self.cycles, "cycles", minimum=1) != self.layer.count * e.cycles:
            raise ValueError(f"cycles must be count × the estimate's cycles = {self.layer.count * e.cycles}, "
                             f"got {self.cycles}")
        want = self.layer.macs / (e.rows * e.cols * self.cycles)
        if not np.isclose(_check.real(self.utilization, "utilization"), want, rtol=1e-9, atol=0):
            raise ValueError(f"utilization must be macs / (PEs × cycles) = {want}, got {self.utilization}")


@dataclass(frozen=True)
class ModelTable:
    """Every layer of a network on one array (see :func:`model_table`)."""

    rows: int
    cols: int
    dataflow: str
    layers: tuple[LayerEstimate, ...]

    def __post_init__(self) -> None:
        R, C = _array(self.rows, self.cols)
        _check.one_of(self.dataflow, "dataflow", DATAFLOWS)
        layers = _check.sequence(self.layers, "layers", min_length=1)
        for i, x in enumerate(layers):
            _check.instance(x, f"layers[{i}]", LayerEstimate, "accelerator.LayerEstimate")
            if (x.estimate.rows, x.estimate.cols, x.estimate.dataflow) != (R, C, self.dataflow):
                raise ValueError(f"layers[{i}] must be estimated on this {R}×{C} {self.dataflow} array, got "
                                 f"{x.estimate.rows}×{x.estimate.cols} {x.estimate.dataflow}")
        object.__setattr__(self, "layers", layers)

    @property
    def cycles(self) -> int:
        """All layers' cycles, run one after another."""
        return sum(x.cycles for x in self.layers)

    @property
    def macs(self) -> int:
        """All layers' useful MACs."""
        return sum(x.layer.macs for x in self.layers)

    @property
    def utilization(self) -> float:
        """Useful MACs / (PEs × cycles) over the whole network."""
        return self.macs / (self.rows * self.cols * self.cycles)


def model_table(layers: Sequence[Layer], rows: int, cols: int, dataflow: str = "ws") -> ModelTable:
    """Run each layer through :func:`estimate`: cycles and utilization per layer and in total.

    A layer of ``count`` GEMMs costs ``count`` times one GEMM's cycles (as
    SCALE-Sim's per-layer reports add up), and its utilization counts only
    its useful MACs.

    Parameters
    ----------
    layers : sequence of Layer
        E.g. :func:`resnet18_layers` or :func:`cameranet_layers`.
    rows, cols : int
        Array size.
    dataflow : str
        ``"os"``, ``"ws"`` or ``"is"``.

    Returns
    -------
    ModelTable

    Raises
    ------
    TypeError, ValueError
        If ``layers`` is not a non-empty sequence of :class:`Layer`, or the
        array size or dataflow is bad.

    Examples
    --------
    >>> t = model_table(resnet18_layers(), 32, 32, "ws")
    >>> t.layers[0].estimate.folds, round(t.utilization, 3)
    (10, 0.62)
    """
    layers = _check.sequence(layers, "layers", min_length=1)
    R, C = _array(rows, cols)
    out = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, Layer):
            raise TypeError(f"layers[{i}] must be an accelerator.Layer, got {type(layer).__name__}")
        e = estimate(layer.M, layer.N, layer.K, R, C, dataflow)
        cycles = layer.count * e.cycles
        out.append(LayerEstimate(layer, e, cycles, layer.macs / (R * C * cycles)))
    return ModelTable(R, C, out[0].estimate.dataflow, tuple(out))


def aspect_sweep(layers: Sequence[Layer], pes: int, dataflow: str = "ws") -> list[tuple[int, int, int]]:
    """Cycles of a network on every power-of-two array shape with ``pes`` PEs.

    Parameters
    ----------
    layers : sequence of Layer
        The network.
    pes : int
        PEs in the array, a power of two (e.g. ``1024`` for 32×32).
    dataflow : str
        ``"os"``, ``"ws"`` or ``"is"``.

    Returns
    -------
    list of tuple
        ``(rows, cols, cycles)`` for ``rows = 1, 2, 4, … pes``.

    Raises
    ------
    TypeError, ValueError
        If ``pes`` is not a power of two, or as :func:`model_table`.

    Examples
    --------
    >>> min(aspect_sweep(resnet18_layers(), 1024, "ws"), key=lambda x: x[2])[:2]
    (16, 64)
    """
    pes = _check.power_of_two(pes, "pes")
    return [(1 << e, pes >> e, model_table(layers, 1 << e, pes >> e, dataflow).cycles)
            for e in range(pes.bit_length())]


# ---- peak, delivered, and the array's appetite for bytes ---------------------------


def peak_tops(rows: int, cols: int, clock_hz: float, ops_per_mac: int = 2) -> float:
    """Peak rate in tera-operations per second: ``ops_per_mac · rows · cols · clock / 10¹²``.

    Vendors count a MAC as two operations (a multiply and an add).

    Parameters
    ----------
    rows, cols : int
        Array size.
    clock_hz : float
        Clock frequency in hertz.
    ops_per_mac : int
        Operations counted per MAC (2 in datasheets; 1 gives tera-MACs/s).

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        For a non-positive size, clock or ``ops_per_mac``.

    Examples
    --------
    >>> round(peak_tops(128, 128, 1e9), 2)            # 16,384 MACs per cycle at 1 GHz
    32.77
    """
    R, C = _array(rows, cols)
    clock = _check.positive(clock_hz, "clock_hz")
    ops = _check.integer(ops_per_mac, "ops_per_mac", minimum=1)
    return ops * R * C * clock / 1e12


def array_machine(rows: int, cols: int, clock_hz: float, dram_bandwidth: float) -> MachineSpec:
    """An array and its DRAM as a chapter-3 roofline (:class:`npukit.graphs.MachineSpec`).

    The peak is ``2 · rows · cols · clock`` operations per second; the
    bandwidth is given in bytes per second.

    Parameters
    ----------
    rows, cols : int
        Array size.
    clock_hz : float
        Clock frequency in hertz.
    dram_bandwidth : float
        DRAM bandwidth in bytes per second.

    Returns
    -------
    npukit.graphs.MachineSpec

    Raises
    ------
    TypeError, ValueError
        For a non-positive size, clock or bandwidth.

    Examples
    --------
    >>> m = array_machine(32, 32, 1e9, 16e9)
    >>> m.peak_flops / 1e12, m.ridge
    (2.048, 128.0)
    """
    R, C = _array(rows, cols)
    clock = _check.positive(clock_hz, "clock_hz")
    bw = _check.positive(dram_bandwidth, "dram_bandwidth")
    return MachineSpec(2.0 * R * C * clock, bw, f"{R}×{C} systolic array at {clock / 1e9:g} GHz",
                       "2 ops per MAC × PEs × clock (assumed clock)", "assumed DRAM bandwidth")


def dram_bytes(layer: Layer, itemsize: int = 1, out_itemsize: int | None = None) -> int:
    """Compulsory DRAM bytes of a layer: its input, its weights and its output, each tensor once.

    What an array must still move from and to DRAM when its SRAM holds
    everything the folds reuse (:func:`resident_bytes` says how much that is
    under SCALE-Sim's weight-stationary schedule: the input, while folds
    stream it again, and the 32-bit partial sums, while the folds of ``K``
    add up). This is chapter 3's ``graphs.op_counts`` convention: the im2col
    matrix, which repeats each input pixel up to ``k²`` times, is built on
    chip and never crosses DRAM, and an INT8 layer writes its requantized
    output, one byte per element.

    Parameters
    ----------
    layer : Layer
        The layer (its ``inputs``, ``weights`` and ``outputs``).
    itemsize : int
        Bytes per input and weight element (1 for INT8).
    out_itemsize : int, optional
        Bytes per output element; default ``itemsize`` (an INT8 layer
        writes its requantized INT8 output, not its 32-bit sums).

    Returns
    -------
    int
        ``(inputs + weights)·itemsize + outputs·out_itemsize``.

    Raises
    ------
    TypeError, ValueError
        If ``layer`` is not a :class:`Layer`, or an itemsize is not a
        positive integer.

    Examples
    --------
    >>> conv = Layer("3×3, 16→32 on 8×8", M=64, N=32, K=144, inputs=16 * 8 * 8)
    >>> dram_bytes(conv)                          # INT8: 1,024 + 4,608 + 2,048
    7680
    >>> conv.count * conv.M * conv.K              # the im2col matrix, 9× the input
    9216
    """
    if not isinstance(layer, Layer):
        raise TypeError(f"layer must be an accelerator.Layer, got {type(layer).__name__}")
    isz = _check.integer(itemsize, "itemsize", minimum=1)
    osz = isz if out_itemsize is None else _check.integer(out_itemsize, "out_itemsize", minimum=1)
    return (layer.inputs + layer.weights) * isz + layer.outputs * osz


def resident_bytes(layer: Layer, rows: int, cols: int, *, itemsize: int = 1,
                   acc_itemsize: int = 4) -> tuple[int, int]:
    """On-chip bytes a weight-stationary layer must keep for :func:`dram_bytes` to hold.

    SCALE-Sim 3 runs a weight-stationary layer's folds with the folds of
    ``N`` (the array's columns) in the outer loop and the folds of ``K``
    (its rows) inside, and every fold streams all ``M`` rows of ``A``
    (``systolic_compute_ws.py``). Reading each tensor from DRAM once then
    needs, for each of the layer's ``count`` GEMMs in turn:

    * its input, if two folds use the same input element: there are several
      folds of ``N`` (each streams ``A`` again), or several folds of ``K``
      and ``A`` repeats input elements (``M·K`` more than the GEMM's input
      elements: a window larger than 1×1). The whole input tensor is
      counted, an upper bound: the elements live across a fold boundary are
      fewer (edge pixels, and pixels a stride skips or uses once; about half
      of them for a small 3×3/2 layer). Otherwise a few rows of the input at
      a time suffice, and they are not counted here;
    * the partial sums of one fold of ``N``, ``M × min(N, cols)``
      accumulators, if there are several folds of ``K`` to add up.

    The weights pass through once, a tile per fold, and are not counted.

    Parameters
    ----------
    layer : Layer
        The layer (its ``M``, ``N``, ``K``, ``count`` and ``inputs``).
    rows, cols : int
        Array size.
    itemsize : int
        Bytes per input element (1 for INT8).
    acc_itemsize : int
        Bytes per partial sum (4: INT32 accumulators).

    Returns
    -------
    tuple of int
        ``(input bytes, partial-sum bytes)`` kept on chip at once.

    Raises
    ------
    TypeError, ValueError
        If ``layer`` is not a :class:`Layer`, or the array size or an
        itemsize is not a positive integer.

    Examples
    --------
    >>> stem = resnet18_layers()[0]               # 7×7/2, K = 147: two folds of K on 128 rows
    >>> resident_bytes(stem, 128, 128)            # 3×224×224 input, 12,544 × 64 sums of 4 bytes
    (150528, 3211264)
    >>> resident_bytes(Layer("1×1, 64→64", M=100, N=64, K=64, inputs=6400), 128, 128)   # one fold
    (0, 0)
    """
    if not isinstance(layer, Layer):
        raise TypeError(f"layer must be an accelerator.Layer, got {type(layer).__name__}")
    R, C = _array(rows, cols)
    isz = _check.integer(itemsize, "itemsize", minimum=1)
    asz = _check.integer(acc_itemsize, "acc_itemsize", minimum=1)
    e = estimate(layer.M, layer.N, layer.K, R, C, "ws")
    per_gemm = -(-layer.inputs // layer.count)
    repeats = layer.M * layer.K > per_gemm
    keep_input = e.col_folds > 1 or (e.row_folds > 1 and repeats)
    psums = layer.M * min(layer.N, C) * asz if e.row_folds > 1 else 0
    return (per_gemm * isz if keep_input else 0), psums


def feed_addresses(M: int, K: int, rows: int, ld: int | None = None) -> np.ndarray:
    """SRAM word addresses the left edge of a weight-stationary array reads, cycle by cycle.

    ``A`` (``M × K``) is stored row-major with a leading dimension ``ld``
    (default ``K``; larger means padded rows): ``A[m, k]`` is at word
    ``m·ld + k``. In the first fold, array row ``r`` reads ``A[t - r, r]``
    at stream cycle ``t`` — a skewed diagonal of the matrix.

    Returns
    -------
    numpy.ndarray
        ``(M + rows - 1, rows)`` addresses, ``-1`` where a row reads nothing.

    Raises
    ------
    TypeError, ValueError
        For non-integer or non-positive sizes, or ``ld < K``.

    Examples
    --------
    >>> feed_addresses(3, 2, rows=2).tolist()
    [[0, -1], [2, 1], [4, 3], [-1, 5]]
    """
    M = _check.integer(M, "M", minimum=1)
    K = _check.integer(K, "K", minimum=1)
    R = _check.integer(rows, "rows", minimum=1)
    ld = K if ld is None else _check.integer(ld, "ld", minimum=1)
    _check.allocation(8 * 3 * (M + R) * R, "M and rows")  # int64 (M + rows - 1) × rows addresses, and temporaries
    if ld < K:
        raise ValueError(f"ld must be >= K = {K} (a row of A must fit), got {ld}")
    t = np.arange(M + R - 1)[:, None]
    r = np.arange(R)[None, :]
    m = t - r
    ok = (m >= 0) & (m < M) & (r < K)
    return np.where(ok, m * ld + r, -1)


def bank_conflicts(addresses: np.ndarray, banks: int) -> int:
    """Extra cycles a banked SRAM needs to serve one request per port per cycle.

    Word ``a`` lives in bank ``a % banks``; a bank serves one word per
    cycle, so a cycle whose requests hit one bank ``n`` times takes ``n``
    cycles instead of one. Returns the sum of those extra cycles
    (``-1`` addresses are idle ports).

    Parameters
    ----------
    addresses : numpy.ndarray
        Integer addresses, shape ``(cycles, ports)``.
    banks : int
        Number of banks.

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        If ``addresses`` is not a 2-D integer array, or ``banks`` < 1.

    Examples
    --------
    >>> bank_conflicts(feed_addresses(8, 8, rows=4), banks=4)     # K = 8: rows hit distinct banks
    0
    >>> bank_conflicts(feed_addresses(8, 5, rows=4), banks=4)     # K = 5 ≡ 1 (mod 4): all in one bank
    21
    """
    addresses = _check.as_array(addresses, "addresses")
    if addresses.ndim != 2 or addresses.dtype.kind not in "iu":
        raise ValueError(f"addresses must be a 2-D integer array (cycles, ports), got {addresses.dtype} "
                         f"{addresses.shape}")
    banks = _check.integer(banks, "banks", minimum=1, maximum=2**20)
    if addresses.size and addresses.min() < -1:  # -1 is an idle port; another negative is no address
        raise ValueError(f"addresses must be word addresses >= 0 (or -1 for an idle port), got {addresses.min()}")
    extra = 0
    for row in addresses:
        hit = row[row >= 0] % banks
        if hit.size:
            extra += int(np.bincount(hit, minlength=banks).max()) - 1
    return extra


def fold_timeline(est: Estimate, dram_bytes_per_cycle: float, *, itemsize: int = 1,
                  double_buffer: bool = True) -> tuple[int, int]:
    """Cycles of a layer whose folds load their operands from DRAM, with or without double buffering.

    Before it can run, each fold needs its stationary tile (``rows·cols``
    elements; none for OS) and its streamed operands (``T·rows`` elements,
    plus ``T·cols`` for OS, whose two inputs both stream) in SRAM. The model
    assumes no reuse between folds (the worst case: an SRAM that holds only
    the folds in flight) and keeps outputs on chip until the end (their
    write-back is left out). Without double buffering a fold waits for its
    own loads, ``load + compute`` per fold; with two buffers the next fold's
    loads run while the current fold computes, so after the first load a
    fold costs ``max(compute, load)``.

    Parameters
    ----------
    est : Estimate
        The layer, from :func:`estimate`.
    dram_bytes_per_cycle : float
        DRAM bandwidth in bytes per array cycle.
    itemsize : int
        Bytes per operand element.
    double_buffer : bool
        Overlap the next fold's loads with the current fold's compute.

    Returns
    -------
    tuple of int
        ``(total cycles, stall cycles)``; stalls are the cycles beyond the
        compute cycles ``folds · per_fold``.

    Raises
    ------
    TypeError, ValueError
        If ``est`` is not an Estimate, or the bandwidth or itemsize is bad.

    Examples
    --------
    >>> e = estimate(1024, 64, 64, 32, 32, "ws")         # 4 folds of 1,118 cycles
    >>> fold_timeline(e, 64.0, double_buffer=False), fold_timeline(e, 64.0)
    ((6584, 2112), (5000, 528))
    """
    if not isinstance(est, Estimate):
        raise TypeError(f"est must be a systolic.Estimate, got {type(est).__name__}")
    bw = _check.positive(dram_bytes_per_cycle, "dram_bytes_per_cycle")
    isz = _check.integer(itemsize, "itemsize", minimum=1)
    double_buffer = _check.boolean(double_buffer, "double_buffer")
    if est.dataflow == "os":
        elements = est.stream * (est.rows + est.cols)
    else:
        elements = est.rows * est.cols + est.stream * est.rows
    load = math.ceil(elements * isz / bw)
    compute = est.per_fold
    if double_buffer:
        total = load + (est.folds - 1) * max(compute, load) + compute
    else:
        total = est.folds * (load + compute)
    return total, total - est.folds * compute


# ---- numbers so far -----------------------------------------------------------------


def numbers(ctx: _tally.Inputs) -> list[_tally.Row]:
    """Chapter 5's rows of the "numbers so far" table: CameraNet on a systolic array.

    Follows the contract of :mod:`npukit.tally`: CameraNet's layers
    (depthwise mapped per channel) on a 32×32 weight-stationary array, and
    its largest pointwise layer on a 128×128 one, both for one image (the
    batch is in the rows' labels: chapter 4's rows use the context's batch).

    Examples
    --------
    >>> from npukit import tally
    >>> [r.chapter for r in numbers(tally.Context())]
    [5, 5, 5]
    """
    from .gemm import largest_pointwise

    _tally.inputs(ctx)
    t = model_table(cameranet_layers(ctx.net), 32, 32, "ws")
    name, (M, N, K) = largest_pointwise(ctx.net)        # chapter 4's (M = c_out, N = pixels)
    big = estimate(N, M, K, 128, 128, "ws")               # here: M = pixels, N = filters
    return [
        _tally.Row(5, "CameraNet, batch 1, on a 32×32 weight-stationary array (depthwise per channel)",
                   f"{t.cycles:,} cycles, utilization {t.utilization:.1%}", "npukit.accelerator.model_table"),
        _tally.Row(5, f"{name}, batch 1, on a 128×128 array (WS)",
                  f"{big.cycles:,} cycles, utilization {big.utilization:.2%}", "npukit.systolic.estimate"),
        _tally.Row(5, "peak of a 128×128 INT8 array at 1 GHz (a MAC = 2 ops)",
                  f"{peak_tops(128, 128, 1e9):.1f} TOPS", "npukit.accelerator.peak_tops"),
    ]
