"""Systolic arrays: a grid of multiply-accumulate units fed from its edges.

A systolic array of ``rows × cols`` processing elements (PEs) computes
``C[M×N] = A[M×K] · B[K×N]`` by passing operands from each PE to its
neighbour every clock instead of re-reading them from memory. One operand
(or the output) stays in the PEs; the others stream through, skewed by one
cycle per row or column. The invariant this module teaches:

    *A dataflow decides which matrix dimension each array dimension holds,
    and the cycles follow from that alone.* With the stationary dimensions
    mapped onto the array (``folds`` tiles of at most ``rows × cols``) and the
    third dimension streamed (length ``T``), every fold costs the same fixed
    number of cycles: a weight preload (``rows`` cycles, weight- and
    input-stationary only), a skew fill (``rows - 1``), the stream (``T``)
    and a drain (``cols - 1``). The numbers are SCALE-Sim 3's (version 3.0.0,
    stall-free): ``cycles = folds · per_fold - 1``.

=========  ====================  ====================  ===========  ===================
dataflow   array rows hold       array columns hold    stream T     per fold
=========  ====================  ====================  ===========  ===================
``"os"``   M (output rows)       N (output columns)    K            R + C + T - 2
``"ws"``   K (weight rows)       N (weight columns)    M            2R + C + T - 2
``"is"``   K (input columns)     M (input rows)        N            2R + C + T - 2
=========  ====================  ====================  ===========  ===================

Here, as in SCALE-Sim, ``A`` is the input feature map lowered to a matrix
(``M`` = output pixels, ``K`` = filter window × channels) and ``B`` the
filters (``N`` = number of filters).

:func:`estimate` is the closed form (with SCALE-Sim's SRAM access counts),
:func:`simulate` a cycle-level simulator that moves real operands through
registers and returns the exact product with a per-cycle trace,
:func:`model_table` runs a network's layers through :func:`estimate`.

See chapter 5, "Systolic arrays" (chapters/05_systolic.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import _check
from .graphs import MachineSpec

if TYPE_CHECKING:
    from . import tally

__all__ = [
    "DATAFLOWS",
    "Mapping",
    "Estimate",
    "Simulation",
    "Layer",
    "LayerEstimate",
    "ModelTable",
    "mapping",
    "estimate",
    "conv_dims",
    "estimate_conv",
    "simulate",
    "resnet18_layers",
    "cameranet_layers",
    "model_table",
    "aspect_sweep",
    "peak_tops",
    "array_machine",
    "dram_bytes",
    "feed_addresses",
    "bank_conflicts",
    "fold_timeline",
    "numbers",
]

#: The three classic dataflows: output-, weight- and input-stationary.
DATAFLOWS: tuple[str, ...] = ("os", "ws", "is")

#: Largest trace :func:`simulate` records (cycles × PEs).
TRACE_LIMIT = 2_000_000


# ---- argument checks ----------------------------------------------------------


def _dataflow(dataflow: Any) -> str:
    if not isinstance(dataflow, str):
        raise TypeError(f"dataflow must be a string, one of 'os', 'ws', 'is'; got {type(dataflow).__name__}")
    return _check.one_of(dataflow, "dataflow", DATAFLOWS)


def _array(rows: Any, cols: Any) -> tuple[int, int]:
    return _check.integer(rows, "rows", minimum=1), _check.integer(cols, "cols", minimum=1)


def _dims(M: Any, N: Any, K: Any) -> tuple[int, int, int]:
    return tuple(_check.integer(v, n, minimum=1) for v, n in ((M, "M"), (N, "N"), (K, "K")))  # type: ignore[return-value]


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# ---- the mapping and the closed form --------------------------------------------


@dataclass(frozen=True)
class Mapping:
    """Which GEMM dimension each part of the array holds (see :func:`mapping`).

    Attributes
    ----------
    dataflow : str
        ``"os"``, ``"ws"`` or ``"is"``.
    row_dim, col_dim : int
        The sizes mapped onto the array's rows and columns (SCALE-Sim's S_R, S_C).
    stream : int
        The size streamed through the array in time (SCALE-Sim's T).
    names : tuple of str
        The letters of ``(row_dim, col_dim, stream)``, e.g. ``("K", "N", "M")``.
    stationary : str
        What stays in the PEs: ``"C"`` (outputs), ``"B"`` (weights) or ``"A"`` (inputs).
    """

    dataflow: str
    row_dim: int
    col_dim: int
    stream: int
    names: tuple[str, str, str]
    stationary: str


def mapping(M: int, N: int, K: int, dataflow: str) -> Mapping:
    """Map ``C[M×N] = A[M×K]·B[K×N]`` onto an array under a dataflow.

    Output-stationary keeps each output ``C[m, n]`` in one PE and streams
    the ``K`` products through it; weight-stationary keeps ``B[k, n]`` in PE
    ``(k, n)`` and streams the ``M`` rows of ``A``; input-stationary keeps
    ``A[m, k]`` in PE ``(k, m)`` and streams the ``N`` columns of ``B``.

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    dataflow : str
        One of :data:`DATAFLOWS`.

    Returns
    -------
    Mapping

    Raises
    ------
    TypeError, ValueError
        For a non-integer or non-positive dimension, or an unknown dataflow.

    Examples
    --------
    >>> mapping(10, 7, 9, "ws")
    Mapping(dataflow='ws', row_dim=9, col_dim=7, stream=10, names=('K', 'N', 'M'), stationary='B')
    >>> mapping(10, 7, 9, "is").names
    ('K', 'M', 'N')
    """
    M, N, K = _dims(M, N, K)
    dataflow = _dataflow(dataflow)
    if dataflow == "os":
        return Mapping("os", M, N, K, ("M", "N", "K"), "C")
    if dataflow == "ws":
        return Mapping("ws", K, N, M, ("K", "N", "M"), "B")
    return Mapping("is", K, M, N, ("K", "M", "N"), "A")


@dataclass(frozen=True)
class Estimate:
    """Cycles, utilization and SRAM accesses of one GEMM on an array (see :func:`estimate`).

    Attributes
    ----------
    M, N, K, rows, cols : int
        The problem and the array.
    dataflow : str
        The dataflow.
    row_folds, col_folds, folds : int
        Tiles of the array's row and column dimension, and their product.
    preload, fill, stream, drain : int
        The terms of one fold's cycles: weight preload (``rows`` for WS/IS,
        0 for OS), skew fill ``rows - 1``, stream ``T``, drain ``cols - 1``.
    per_fold : int
        Their sum.
    cycles : int
        SCALE-Sim's compute cycles: ``folds · per_fold - 1`` (the index of
        the last busy cycle).
    macs : int
        ``M·N·K``.
    utilization : float
        ``macs / (cycles · rows · cols)``, in [0, 1] (SCALE-Sim's "overall
        utilization"; the one exception is a 1×1 output-stationary array,
        busy every cycle, where the ``- 1`` of ``cycles`` gives
        ``MNK / (MNK - 1)``).
    mapping_efficiency : float
        Mean over folds of (PEs holding data / ``rows · cols``), in [0, 1].
    ifmap_sram_reads, filter_sram_reads, ofmap_sram_writes : int
        Elements of ``A`` and ``B`` read from SRAM and of ``C`` written to it
        (partial sums included).
    """

    M: int
    N: int
    K: int
    rows: int
    cols: int
    dataflow: str
    row_folds: int
    col_folds: int
    folds: int
    preload: int
    fill: int
    stream: int
    drain: int
    per_fold: int
    cycles: int
    macs: int
    utilization: float
    mapping_efficiency: float
    ifmap_sram_reads: int
    filter_sram_reads: int
    ofmap_sram_writes: int


def estimate(M: int, N: int, K: int, rows: int, cols: int, dataflow: str = "ws") -> Estimate:
    """Compute cycles of ``C[M×N] = A[M×K]·B[K×N]`` on a ``rows × cols`` array, as SCALE-Sim 3 counts them.

    With the :func:`mapping` ``(S_R, S_C, T)`` of the dataflow, the array
    runs ``ceil(S_R/rows) · ceil(S_C/cols)`` folds back to back; each costs
    ``rows + cols + T - 2`` cycles for OS and ``2·rows + cols + T - 2`` for
    WS and IS (a weight or input preload of ``rows`` cycles first), and a
    partial fold costs as much as a full one. The total is
    ``folds · per_fold - 1`` because SCALE-Sim reports the index of the last
    busy cycle. SRAM accesses follow SCALE-Sim 3.0.0 too: the streamed and
    the stationary operand are each read once per fold that uses them, and
    partial sums are written once per fold of ``K``. (For OS, SCALE-Sim
    3.0.0's report adds ``rows + cols`` output writes per fold, an artefact
    of its bookkeeping; they are left out here.)

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    rows, cols : int
        Array size, each >= 1.
    dataflow : str
        ``"os"``, ``"ws"`` or ``"is"``.

    Returns
    -------
    Estimate

    Raises
    ------
    TypeError, ValueError
        For a non-integer or non-positive size, or an unknown dataflow.

    Examples
    --------
    >>> e = estimate(10, 7, 9, rows=4, cols=6, dataflow="ws")
    >>> e.folds, e.per_fold, e.cycles
    (6, 22, 131)
    >>> (e.preload, e.fill, e.stream, e.drain)
    (4, 3, 10, 5)
    >>> round(e.utilization, 4), round(e.mapping_efficiency, 4)
    (0.2004, 0.4375)
    """
    M, N, K = _dims(M, N, K)
    R, C = _array(rows, cols)
    m = mapping(M, N, K, dataflow)
    rf, cf = _cdiv(m.row_dim, R), _cdiv(m.col_dim, C)
    folds = rf * cf
    preload = 0 if m.dataflow == "os" else R
    per_fold = preload + (R - 1) + m.stream + (C - 1)
    cycles = folds * per_fold - 1
    macs = M * N * K
    if m.dataflow == "os":
        reads = (M * K * cf, K * N * rf, M * N)
    elif m.dataflow == "ws":
        reads = (M * K * cf, K * N, M * N * rf)
    else:
        reads = (M * K, K * N * cf, M * N * rf)
    return Estimate(
        M, N, K, R, C, m.dataflow, rf, cf, folds, preload, R - 1, m.stream, C - 1, per_fold, cycles, macs,
        utilization=macs / (cycles * R * C) if cycles else 1.0,
        mapping_efficiency=m.row_dim * m.col_dim / (folds * R * C),
        ifmap_sram_reads=reads[0], filter_sram_reads=reads[1], ofmap_sram_writes=reads[2],
    )


def conv_dims(ifmap_h: int, ifmap_w: int, filt_h: int, filt_w: int, channels: int, filters: int,
              stride: int = 1) -> tuple[int, int, int]:
    """``(M, N, K)`` of a convolution as a SCALE-Sim topology describes it.

    No padding (give the padded input size); ``Ho = ceil((H - Fh + S)/S)``
    and likewise ``Wo``, then ``M = Ho·Wo``, ``N = filters``,
    ``K = Fh·Fw·channels``. The ceiling is SCALE-Sim's: when ``S`` does not
    divide ``H - Fh`` it counts one more output row than a framework's
    ``floor((H - Fh)/S) + 1``. An input of ``(Ho - 1)·S + Fh`` gives exactly
    ``Ho`` either way.

    Parameters
    ----------
    ifmap_h, ifmap_w, filt_h, filt_w, channels, filters, stride : int
        As in a SCALE-Sim conv topology row; each >= 1 and the filter no
        larger than the input.

    Returns
    -------
    tuple of int

    Raises
    ------
    TypeError, ValueError
        For a non-integer or non-positive argument, or a filter larger than the input.

    Examples
    --------
    >>> conv_dims(9, 9, 3, 3, channels=4, filters=6)
    (49, 6, 36)
    >>> conv_dims(10, 10, 3, 3, 2, 8, stride=3)      # ceil(10/3) = 4 output rows, not 3
    (16, 8, 18)
    """
    names = ("ifmap_h", "ifmap_w", "filt_h", "filt_w", "channels", "filters", "stride")
    h, w, fh, fw, ch, nf, s = (_check.integer(v, n, minimum=1) for v, n in
                               zip((ifmap_h, ifmap_w, filt_h, filt_w, channels, filters, stride), names))
    if fh > h or fw > w:
        raise ValueError(f"filt_h × filt_w = {fh}×{fw} must fit the input ifmap_h × ifmap_w = {h}×{w}")
    ho, wo = _cdiv(h - fh + s, s), _cdiv(w - fw + s, s)
    return ho * wo, nf, fh * fw * ch


def estimate_conv(ifmap_h: int, ifmap_w: int, filt_h: int, filt_w: int, channels: int, filters: int,
                  stride: int, rows: int, cols: int, dataflow: str = "ws") -> Estimate:
    """:func:`estimate` of a convolution given as a SCALE-Sim topology row (see :func:`conv_dims`).

    Parameters
    ----------
    ifmap_h, ifmap_w, filt_h, filt_w, channels, filters, stride : int
        The layer, as :func:`conv_dims` takes it.
    rows, cols : int
        Array size.
    dataflow : str
        ``"os"``, ``"ws"`` or ``"is"``.

    Returns
    -------
    Estimate

    Raises
    ------
    TypeError, ValueError
        As :func:`conv_dims` and :func:`estimate`.

    Examples
    --------
    >>> estimate_conv(9, 9, 3, 3, 4, 6, 1, rows=4, cols=4, dataflow="os").cycles
    1091
    """
    M, N, K = conv_dims(ifmap_h, ifmap_w, filt_h, filt_w, channels, filters, stride)
    return estimate(M, N, K, rows, cols, dataflow)


# ---- the cycle-level simulator ----------------------------------------------------


@dataclass
class Simulation:
    """What :func:`simulate` returns.

    Attributes
    ----------
    product : numpy.ndarray
        ``A @ B``, computed by the simulated PEs (int64 for integer inputs,
        exact; float64 otherwise).
    fold_cycles : list of int
        Cycles of each fold, in the order run.
    busy : numpy.ndarray
        PEs doing a useful MAC in each cycle, shape ``(cycles,)``.
    macs : int
        Useful MACs done (``busy.sum()``; equals ``M·N·K``).
    trace : dict of numpy.ndarray, or None
        With ``trace=True``: per cycle and PE, ``"busy"`` (bool,
        ``(cycles, rows, cols)``), and the ``(i, j)`` index of the element of
        ``"a"``, ``"b"`` and ``"c"`` the PE holds (``-1`` for none; shape
        ``(cycles, rows, cols, 2)``), ``"fold"`` and ``"phase"`` per cycle
        (0 preload, 1 compute).
    """

    product: np.ndarray
    fold_cycles: list[int]
    busy: np.ndarray
    macs: int
    rows: int
    cols: int
    dataflow: str
    trace: dict[str, np.ndarray] | None = field(default=None, repr=False)

    @property
    def cycles(self) -> int:
        """All cycles the array ran: the sum of :attr:`fold_cycles`."""
        return int(sum(self.fold_cycles))

    @property
    def last_cycle(self) -> int:
        """Index of the last cycle (``cycles - 1``): the number SCALE-Sim reports."""
        return self.cycles - 1

    @property
    def utilization(self) -> float:
        """Useful MACs / (PEs × :attr:`last_cycle`), SCALE-Sim's "overall utilization"."""
        return self.macs / (self.rows * self.cols * max(self.last_cycle, 1))


class _Recorder:
    """Collects per-cycle busy counts and, optionally, the full trace."""

    def __init__(self, trace: bool, rows: int, cols: int) -> None:
        self.trace, self.rows, self.cols = trace, rows, cols
        self.busy: list[int] = []
        self.frames: dict[str, list] = {k: [] for k in ("busy", "a", "b", "c", "fold", "phase")}

    def step(self, busy: np.ndarray, fold: int, phase: int, a: Any = None, b: Any = None, c: Any = None) -> None:
        self.busy.append(int(busy.sum()))
        if self.trace:
            for key, value in (("busy", busy.copy()), ("a", a), ("b", b), ("c", c), ("fold", fold), ("phase", phase)):
                self.frames[key].append(value)

    def arrays(self) -> dict[str, np.ndarray] | None:
        if not self.trace:
            return None
        return {k: np.array(v) for k, v in self.frames.items()}


def _pair(i: np.ndarray, j: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Stack two index grids into ``(..., 2)``, with -1 where ``valid`` is False."""
    return np.where(valid[..., None], np.stack(np.broadcast_arrays(i, j), axis=-1), -1).astype(np.int32)


def _os_fold(A: np.ndarray, B: np.ndarray, m0: int, n0: int, R: int, C: int, rec: _Recorder, fold: int) -> np.ndarray:
    """One output-stationary fold: A's rows enter from the left, B's columns from the top.

    PE ``(r, c)`` meets ``A[m0+r, k]`` and ``B[k, n0+c]`` at cycle ``k + r + c``
    and keeps ``C[m0+r, n0+c]`` in its accumulator. Returns the ``R × C`` block.
    """
    T = A.shape[1]
    rm, cn = min(R, A.shape[0] - m0), min(C, B.shape[1] - n0)
    a_val = np.zeros((R, C), A.dtype)
    b_val = np.zeros((R, C), A.dtype)
    a_k = np.full((R, C), -1)
    b_k = np.full((R, C), -1)
    acc = np.zeros((R, C), A.dtype)
    r_idx, c_idx = np.arange(R), np.arange(C)
    for t in range(R + C + T - 2):
        a_val[:, 1:], a_k[:, 1:] = a_val[:, :-1], a_k[:, :-1]           # shift right
        b_val[1:, :], b_k[1:, :] = b_val[:-1, :], b_k[:-1, :]           # shift down
        k = t - r_idx
        ok = (k >= 0) & (k < T) & (r_idx < rm)
        a_k[:, 0] = np.where(ok, k, -1)
        a_val[:, 0] = np.where(ok, A[np.minimum(m0 + r_idx, A.shape[0] - 1), np.clip(k, 0, T - 1)], 0)
        k = t - c_idx
        ok = (k >= 0) & (k < T) & (c_idx < cn)
        b_k[0, :] = np.where(ok, k, -1)
        b_val[0, :] = np.where(ok, B[np.clip(k, 0, T - 1), np.minimum(n0 + c_idx, B.shape[1] - 1)], 0)
        busy = (a_k >= 0) & (b_k >= 0)
        acc += a_val * b_val
        if rec.trace:
            rows_m, cols_n = (m0 + r_idx)[:, None], (n0 + c_idx)[None, :]
            rec.step(busy, fold, 1, _pair(rows_m, a_k, a_k >= 0), _pair(b_k, cols_n, b_k >= 0),
                     _pair(rows_m, cols_n, busy))
        else:
            rec.step(busy, fold, 1)
    return acc[:rm, :cn]


def _stationary_fold(S: np.ndarray, W: np.ndarray, k0: int, c0: int, R: int, C: int, rec: _Recorder, fold: int,
                     label: Any) -> np.ndarray:
    """One fold with ``W`` held in the PEs and the rows of ``S`` streamed: ``S @ W`` for a block.

    Preload: ``R`` cycles shift the block ``W[k0:k0+R, c0:c0+C]`` down into
    the array, one row per cycle. Then row ``m`` of ``S`` enters array row
    ``r`` at cycle ``m + r`` and moves right one PE per cycle; partial sums
    move down, and the sum for ``(m, c)`` leaves the bottom row at cycle
    ``m + (R - 1) + c``. ``label(stream, k, col, mask)`` turns register
    contents into trace indices. Returns the ``T × C`` block of partial sums.
    """
    T = S.shape[0]
    kr, cn = min(R, W.shape[0] - k0), min(C, W.shape[1] - c0)
    r_idx, c_idx = np.arange(R), np.arange(C)
    block = np.zeros((R, C), S.dtype)
    block[:kr, :cn] = W[k0:k0 + kr, c0:c0 + cn]
    held = (r_idx[:, None] < kr) & (c_idx[None, :] < cn)
    w_val = np.zeros((R, C), S.dtype)
    w_row = np.full(R, -1)                      # which block row each array row holds
    none = np.zeros((R, C), bool)
    for t in range(R):                          # preload, bottom row first
        w_val[1:], w_row[1:] = w_val[:-1].copy(), w_row[:-1].copy()
        w_val[0], w_row[0] = block[R - 1 - t], R - 1 - t
        if rec.trace:
            ok = (w_row[:, None] >= 0) & (w_row[:, None] < kr) & (c_idx[None, :] < cn)
            rec.step(none, fold, 0, *label(None, (k0 + w_row)[:, None] + 0 * c_idx, c0 + c_idx[None, :], ok, none))
        else:
            rec.step(none, fold, 0)
    a_val = np.zeros((R, C), S.dtype)
    a_m = np.full((R, C), -1)
    psum = np.zeros((R, C), S.dtype)
    out = np.zeros((T, C), S.dtype)
    for t in range(T + R + C - 2):
        a_val[:, 1:], a_m[:, 1:] = a_val[:, :-1], a_m[:, :-1]
        m = t - r_idx
        ok = (m >= 0) & (m < T) & (r_idx < kr)
        a_m[:, 0] = np.where(ok, m, -1)
        a_val[:, 0] = np.where(ok, S[np.clip(m, 0, T - 1), np.minimum(k0 + r_idx, S.shape[1] - 1)], 0)
        prod = a_val * w_val
        psum[1:] = psum[:-1] + prod[1:]
        psum[0] = prod[0]
        m_out = t - (R - 1) - c_idx
        ok = (m_out >= 0) & (m_out < T)
        out[m_out[ok], c_idx[ok]] += psum[R - 1, ok]
        busy = (a_m >= 0) & held
        if rec.trace:
            rec.step(busy, fold, 1, *label(a_m, (k0 + r_idx)[:, None] + 0 * c_idx, c0 + c_idx[None, :], held, busy))
        else:
            rec.step(busy, fold, 1)
    return out[:, :cn]


def simulate(A: np.ndarray, B: np.ndarray, rows: int, cols: int, dataflow: str = "ws", *,
             trace: bool = False) -> Simulation:
    """Run ``A @ B`` on a ``rows × cols`` systolic array, cycle by cycle.

    Real operand values move through per-PE registers, one hop per cycle,
    vectorised over the array with NumPy: output-stationary streams ``A``
    from the left and ``B`` from the top into accumulators that hold ``C``;
    weight-stationary preloads a block of ``B`` and streams ``A``'s rows
    from the left while partial sums flow down and leave at the bottom;
    input-stationary does the same with ``A``'s block held and ``B``'s
    columns streamed (``Cᵀ = Bᵀ·Aᵀ``). Folds run one after another in the
    fixed schedule of :func:`estimate` (a ragged fold runs as long as a full
    one), and partial sums of different ``K`` folds add up in the output.

    Parameters
    ----------
    A : numpy.ndarray
        ``M × K``, integer or floating point.
    B : numpy.ndarray
        ``K × N``, of the same kind.
    rows, cols : int
        Array size.
    dataflow : str
        ``"os"``, ``"ws"`` or ``"is"``.
    trace : bool
        Record every PE's state in every cycle (for the animation); limited
        to ``cycles × rows × cols <=`` :data:`TRACE_LIMIT`.

    Returns
    -------
    Simulation
        ``product`` equals ``A @ B`` (exactly, for integers); ``fold_cycles``
        each equal :func:`estimate`'s ``per_fold`` and ``last_cycle`` its
        ``cycles``.

    Raises
    ------
    TypeError
        If ``A`` or ``B`` is not a NumPy array of integers or floats, or one
        is integer and the other not.
    ValueError
        If they are not 2-D with matching inner dimensions, are empty, the
        array size or dataflow is bad, or the trace would be too large.

    Examples
    --------
    >>> A = np.arange(12).reshape(4, 3)
    >>> B = np.arange(6).reshape(3, 2)
    >>> s = simulate(A, B, rows=2, cols=2, dataflow="os")
    >>> np.array_equal(s.product, A @ B), s.fold_cycles, s.last_cycle
    (True, [5, 5], 9)
    >>> s.last_cycle == estimate(4, 2, 3, 2, 2, "os").cycles
    True
    """
    A, B = _check.as_array(A, "A"), _check.as_array(B, "B")
    for name, x in (("A", A), ("B", B)):
        if x.dtype.kind not in "iuf":
            raise TypeError(f"{name} must hold integers or floats, got dtype {x.dtype}")
    if (A.dtype.kind == "f") != (B.dtype.kind == "f"):
        raise TypeError(f"A and B must both be integer or both floating point, got {A.dtype} and {B.dtype}")
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"A and B must be 2-D, got shapes {A.shape} and {B.shape}")
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A's columns must equal B's rows: A has shape {A.shape}, B has shape {B.shape}")
    if 0 in A.shape or 0 in B.shape:
        raise ValueError(f"A and B must not be empty, got shapes {A.shape} and {B.shape}")
    R, C = _array(rows, cols)
    est = estimate(A.shape[0], B.shape[1], A.shape[1], R, C, dataflow)
    if trace and (est.cycles + 1) * R * C > TRACE_LIMIT:
        raise ValueError(f"trace=True would record {(est.cycles + 1) * R * C:,} PE-cycles, more than "
                         f"{TRACE_LIMIT:,}; use a smaller problem or trace=False")
    kind = np.int64 if A.dtype.kind in "iu" else np.float64
    A, B = A.astype(kind), B.astype(kind)
    M, K = A.shape
    N = B.shape[1]
    rec = _Recorder(trace, R, C)
    out = np.zeros((M, N), kind)
    fold_cycles = []
    fold = 0

    def ws_label(stream: Any, k: np.ndarray, col: np.ndarray, held: np.ndarray, busy: np.ndarray) -> tuple:
        a = _pair(stream, k, stream >= 0) if stream is not None else np.full((R, C, 2), -1, np.int32)
        return a, _pair(k, col, held), _pair(stream if stream is not None else k, col, busy)

    def is_label(stream: Any, k: np.ndarray, col: np.ndarray, held: np.ndarray, busy: np.ndarray) -> tuple:
        b = _pair(k, stream, stream >= 0) if stream is not None else np.full((R, C, 2), -1, np.int32)
        return _pair(col, k, held), b, _pair(col, stream if stream is not None else k, busy)

    for i in range(est.row_folds):
        for j in range(est.col_folds):
            start = len(rec.busy)
            if est.dataflow == "os":
                out[i * R:i * R + R, j * C:j * C + C] = _os_fold(A, B, i * R, j * C, R, C, rec, fold)
            elif est.dataflow == "ws":
                out[:, j * C:j * C + C] += _stationary_fold(A, B, i * R, j * C, R, C, rec, fold, ws_label)
            else:
                out[j * C:j * C + C, :] += _stationary_fold(B.T, A.T, i * R, j * C, R, C, rec, fold, is_label).T
            fold_cycles.append(len(rec.busy) - start)
            fold += 1
    busy = np.array(rec.busy)
    return Simulation(out, fold_cycles, busy, int(busy.sum()), R, C, est.dataflow, rec.arrays())


# ---- whole networks --------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """One layer as GEMM work: ``count`` GEMMs of ``M × N × K`` run one after another.

    ``macs`` is the layer's useful MACs (default ``count·M·N·K``); it is
    smaller when a mapping computes zeros, as a depthwise layer lowered to
    one dense GEMM does.
    """

    name: str
    M: int
    N: int
    K: int
    count: int = 1
    macs: int = 0
    kind: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a string, got {type(self.name).__name__}")
        for attr in ("M", "N", "K", "count"):
            _check.integer(getattr(self, attr), attr, minimum=1)
        _check.integer(self.macs, "macs", minimum=0)
        if not self.macs:
            object.__setattr__(self, "macs", self.count * self.M * self.N * self.K)


def resnet18_layers() -> list[Layer]:
    """The convolutions and the classifier of ResNet-18 on a 224×224 image, as GEMMs.

    Architecture from He et al. 2016 (Table 1, 18-layer column): a 7×7/2
    stem of 64 filters, then four stages of two basic blocks (two 3×3
    convolutions each) with 64, 128, 256 and 512 channels on 56², 28², 14²
    and 7² maps; the first convolution of stages 2–4 has stride 2 and a 1×1
    stride-2 projection on its shortcut; a 512→1000 fully connected layer
    ends it. ``M`` = output pixels, ``N`` = filters, ``K`` = k²·C_in
    (SCALE-Sim's convention); identical layers are merged with ``count``.

    Returns
    -------
    list of Layer

    Examples
    --------
    >>> layers = resnet18_layers()
    >>> sum(l.count for l in layers), round(sum(l.macs for l in layers) / 1e9, 2)
    (21, 1.81)
    """
    out = [Layer("conv1 7×7/2, 3→64", 112 * 112, 64, 49 * 3, kind="stem")]
    c_in, size = 64, 56
    for stage, c in enumerate((64, 128, 256, 512), start=2):
        if stage > 2:
            size //= 2
            out.append(Layer(f"conv{stage}_1a 3×3/2, {c_in}→{c}", size * size, c, 9 * c_in, kind="3×3"))
            out.append(Layer(f"conv{stage} proj 1×1/2, {c_in}→{c}", size * size, c, c_in, kind="1×1"))
            out.append(Layer(f"conv{stage} 3×3, {c}→{c}", size * size, c, 9 * c, count=3, kind="3×3"))
        else:
            out.append(Layer(f"conv{stage} 3×3, {c}→{c}", size * size, c, 9 * c, count=4, kind="3×3"))
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
    net = models.CameraNet() if net is None else net
    by_name = {layer.name: layer for layer in net.layers}
    out = []
    for r in models.summary(net, batch):
        if r["op"] == "Gemm":
            out.append(Layer(r["layer"], batch, r["output"][1], r["input"][1], kind="fc"))
        if r["op"] != "Conv":
            continue
        layer = by_name[r["layer"]]
        _, c_out, h, w = r["output"]
        M, k2 = batch * h * w, layer.kernel**2
        if r["kind"] == "depthwise" and depthwise == "per-channel":
            out.append(Layer(r["layer"], M, 1, k2, count=c_out, kind="depthwise"))
        elif r["kind"] == "depthwise":
            out.append(Layer(r["layer"], M, c_out, k2 * c_out, macs=r["macs"], kind="depthwise"))
        else:
            out.append(Layer(r["layer"], M, c_out, k2 * layer.cin, kind=r["kind"]))
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


@dataclass(frozen=True)
class ModelTable:
    """Every layer of a network on one array (see :func:`model_table`)."""

    rows: int
    cols: int
    dataflow: str
    layers: tuple[LayerEstimate, ...]

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
    (10, 0.621)
    """
    layers = _check.sequence(layers, "layers", min_length=1)
    R, C = _array(rows, cols)
    out = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, Layer):
            raise TypeError(f"layers[{i}] must be a systolic.Layer, got {type(layer).__name__}")
        e = estimate(layer.M, layer.N, layer.K, R, C, dataflow)
        cycles = layer.count * e.cycles
        out.append(LayerEstimate(layer, e, cycles, layer.macs / (R * C * cycles)))
    return ModelTable(R, C, _dataflow(dataflow), tuple(out))


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


def dram_bytes(M: int, N: int, K: int, itemsize: int = 1, out_itemsize: int = 4) -> int:
    """Compulsory DRAM bytes of a GEMM: read ``A`` and ``B`` once, write ``C`` once.

    What an array whose SRAM holds a layer's operands (double buffered, so
    loads overlap compute) must still move from and to DRAM.

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions.
    itemsize, out_itemsize : int
        Bytes per element of ``A`` and ``B``, and of ``C``.

    Returns
    -------
    int
        ``(M·K + K·N)·itemsize + M·N·out_itemsize``.

    Raises
    ------
    TypeError, ValueError
        For non-integer or non-positive arguments.

    Examples
    --------
    >>> dram_bytes(256, 32, 16)                  # int8 operands, int32 outputs
    37376
    """
    M, N, K = _dims(M, N, K)
    isz = _check.integer(itemsize, "itemsize", minimum=1)
    osz = _check.integer(out_itemsize, "out_itemsize", minimum=1)
    return (M * K + K * N) * isz + M * N * osz


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
    banks = _check.integer(banks, "banks", minimum=1)
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


def numbers(ctx: tally.Context) -> list[tally.Row]:
    """Chapter 5's rows of the "numbers so far" table: CameraNet on a systolic array.

    Follows the contract of :mod:`npukit.tally`: CameraNet's layers
    (depthwise mapped per channel) on a 32×32 weight-stationary array, and
    its largest pointwise layer on a 128×128 one.

    Examples
    --------
    >>> from npukit import tally
    >>> [r.chapter for r in numbers(tally.Context())]
    [5, 5, 5]
    """
    from . import tally
    from .gemm import largest_pointwise

    if not isinstance(ctx, tally.Context):
        raise TypeError(f"ctx must be a tally.Context, got {type(ctx).__name__}")
    t = model_table(cameranet_layers(ctx.net), 32, 32, "ws")
    name, (M, N, K) = largest_pointwise(ctx.net)        # chapter 4's (M = c_out, N = pixels)
    big = estimate(N, M, K, 128, 128, "ws")               # here: M = pixels, N = filters
    return [
        tally.Row(5, "CameraNet on a 32×32 weight-stationary array (depthwise per channel)",
                  f"{t.cycles:,} cycles, utilization {t.utilization:.1%}", "npukit.systolic.model_table"),
        tally.Row(5, f"{name} on a 128×128 array (WS)",
                  f"{big.cycles:,} cycles, utilization {big.utilization:.2%}", "npukit.systolic.estimate"),
        tally.Row(5, "peak of a 128×128 INT8 array at 1 GHz (a MAC = 2 ops)",
                  f"{peak_tops(128, 128, 1e9):.1f} TOPS", "npukit.systolic.peak_tops"),
    ]
