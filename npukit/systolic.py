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
    and a drain (``cols - 1``), and the folds run back to back:
    ``cycles = folds · per_fold``. SCALE-Sim 3 (version 3.0.0, stall-free)
    reports the index of the last of those cycles, ``last_cycle = cycles - 1``,
    and divides by it for its utilization; :class:`Estimate` and
    :class:`Simulation` carry both numbers under these two names.

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
:func:`conv_dims` and :func:`estimate_conv` map a convolution the way a
SCALE-Sim topology row describes it, and :func:`simulate` is a cycle-level
simulator that moves real operands through registers and returns the exact
product with a per-cycle trace. The array inside a system (whole networks,
peak and delivered TOPS, the memory that feeds it) is :mod:`npukit.accelerator`.

See chapter 5, "Systolic arrays" (chapters/05_systolic.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import _check

__all__ = [
    "DATAFLOWS",
    "Mapping",
    "Estimate",
    "Simulation",
    "mapping",
    "estimate",
    "conv_dims",
    "estimate_conv",
    "simulate",
]

#: The three classic dataflows: output-, weight- and input-stationary.
DATAFLOWS: tuple[str, ...] = ("os", "ws", "is")

#: Largest trace :func:`simulate` records (cycles × PEs).
TRACE_LIMIT = 2_000_000
#: Most PE-cycles :func:`simulate` steps through (a 32×32 array on a 256³ GEMM is 23 million, about 2 s).
SIMULATE_LIMIT = 250_000_000

#: SCALE-Sim 3.0.0's own numbers for small GEMM and conv layers on six arrays, every dataflow
#: (written by ``make scalesim-reference``; the tests, the chapter and lab 5's checker read it).
SCALESIM_REFERENCE = Path(__file__).parent / "data" / "scalesim_reference.json"


def _dataflow(dataflow: Any) -> str:
    if not isinstance(dataflow, str):
        raise TypeError(f"dataflow must be a string, one of 'os', 'ws', 'is'; got {type(dataflow).__name__}")
    return _check.one_of(dataflow, "dataflow", DATAFLOWS)


def _array(rows: Any, cols: Any) -> tuple[int, int]:
    return _check.integer(rows, "rows", minimum=1), _check.integer(cols, "cols", minimum=1)


def _dims(M: Any, N: Any, K: Any) -> tuple[int, int, int]:
    return tuple(_check.integer(v, n, minimum=1) for v, n in ((M, "M"), (N, "N"), (K, "K")))  # type: ignore[return-value]


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

    def __post_init__(self) -> None:
        want = {"os": (("M", "N", "K"), "C"), "ws": (("K", "N", "M"), "B"), "is": (("K", "M", "N"), "A")}
        names, stationary = want[_dataflow(self.dataflow)]
        for f in ("row_dim", "col_dim", "stream"):
            _check.integer(getattr(self, f), f, minimum=1)
        if tuple(_check.sequence(self.names, "names", length=3)) != names:
            raise ValueError(f"names must be {names} for dataflow {self.dataflow!r}, got {tuple(self.names)}")
        if self.stationary != stationary:
            raise ValueError(f"stationary must be {stationary!r} for dataflow {self.dataflow!r}, got {self.stationary!r}")
        object.__setattr__(self, "names", names)


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
        Cycles the array runs: ``folds · per_fold`` (cycles 0 to
        ``cycles - 1``), the count :attr:`Simulation.cycles` gives too.
    macs : int
        ``M·N·K``.
    utilization : float
        ``macs / (cycles · rows · cols)``, in (0, 1]: the fraction of
        PE-cycles that do a useful MAC.
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

    @property
    def last_cycle(self) -> int:
        """Index of the last cycle, ``cycles - 1``: the number SCALE-Sim 3 reports as its compute cycles."""
        return self.cycles - 1

    @property
    def scalesim_utilization(self) -> float:
        """SCALE-Sim 3's "overall utilization", ``macs / (last_cycle · rows · cols)``.

        It divides by the last cycle's index rather than the count, so it is
        a little above :attr:`utilization` (and above 1 for a 1×1
        output-stationary array, busy in every one of its cycles).
        """
        return self.macs / (max(self.last_cycle, 1) * self.rows * self.cols)

    def __post_init__(self) -> None:  # the closed form's identities, so a hand-made record cannot contradict itself
        counts = ("M", "N", "K", "rows", "cols", "row_folds", "col_folds", "folds", "preload", "fill", "stream",
                  "drain", "per_fold", "cycles", "macs", "ifmap_sram_reads", "filter_sram_reads", "ofmap_sram_writes")
        _check.record(self, counts=counts)
        _dataflow(self.dataflow), _dims(self.M, self.N, self.K), _array(self.rows, self.cols)
        rules = {"fill": self.rows - 1, "drain": self.cols - 1, "preload": 0 if self.dataflow == "os" else self.rows,
                 "folds": self.row_folds * self.col_folds, "per_fold": self.preload + self.fill + self.stream + self.drain,
                 "cycles": self.folds * self.per_fold, "macs": self.M * self.N * self.K}
        for f, want in rules.items():
            if getattr(self, f) != want:
                raise ValueError(f"{f} must be {want} (see the Estimate docstring's formulas), got {getattr(self, f)}")
        want = self.macs / (self.cycles * self.rows * self.cols) if self.cycles else 1.0
        if not math.isclose(_check.real(self.utilization, "utilization"), want, rel_tol=1e-9):
            raise ValueError(f"utilization must be macs / (cycles · rows · cols) = {want}, got {self.utilization}")
        if not 0 < _check.real(self.mapping_efficiency, "mapping_efficiency") <= 1:
            raise ValueError(f"mapping_efficiency must be in (0, 1], got {self.mapping_efficiency}")


def estimate(M: int, N: int, K: int, rows: int, cols: int, dataflow: str = "ws") -> Estimate:
    """Compute cycles of ``C[M×N] = A[M×K]·B[K×N]`` on a ``rows × cols`` array, in SCALE-Sim 3's model.

    With the :func:`mapping` ``(S_R, S_C, T)`` of the dataflow, the array
    runs ``ceil(S_R/rows) · ceil(S_C/cols)`` folds back to back, each as long
    as a full one (the module's table): ``cycles = folds · per_fold``.
    SCALE-Sim reports the index of the last of them, :attr:`Estimate.last_cycle`
    ``= cycles - 1``. SRAM accesses follow SCALE-Sim 3.0.0:
    each operand is read once per fold that uses it, partial sums are written
    once per fold of ``K`` (SCALE-Sim's OS report adds ``rows + cols``
    writes per fold of bookkeeping, left out here).

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
    >>> e.folds, e.per_fold, e.cycles, e.last_cycle
    (6, 22, 132, 131)
    >>> (e.preload, e.fill, e.stream, e.drain)
    (4, 3, 10, 5)
    >>> round(e.utilization, 4), round(e.scalesim_utilization, 4), round(e.mapping_efficiency, 4)
    (0.1989, 0.2004, 0.4375)
    """
    M, N, K = _dims(M, N, K)
    R, C = _array(rows, cols)
    m = mapping(M, N, K, dataflow)
    rf, cf = -(-m.row_dim // R), -(-m.col_dim // C)
    folds = rf * cf
    preload = 0 if m.dataflow == "os" else R
    per_fold = preload + (R - 1) + m.stream + (C - 1)
    cycles = folds * per_fold
    macs = M * N * K
    if m.dataflow == "os":
        reads = (M * K * cf, K * N * rf, M * N)
    elif m.dataflow == "ws":
        reads = (M * K * cf, K * N, M * N * rf)
    else:
        reads = (M * K, K * N * cf, M * N * rf)
    return Estimate(
        M, N, K, R, C, m.dataflow, rf, cf, folds, preload, R - 1, m.stream, C - 1, per_fold, cycles, macs,
        utilization=macs / (cycles * R * C),
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
    ho, wo = -(-(h - fh + s) // s), -(-(w - fw + s) // s)
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
    1092
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
        ``"a"``, ``"b"`` and ``"c"`` the PE holds (``"c"``: the output a busy
        PE adds to, or, output-stationary, the sum its accumulator keeps;
        ``-1`` for none; shape
        ``(cycles, rows, cols, 2)``), ``"fold"`` and ``"phase"`` per cycle
        (0 preload, 1 compute).
    rows, cols : int
        The array.
    dataflow : str
        ``"os"``, ``"ws"`` or ``"is"``.
    """

    product: np.ndarray
    fold_cycles: list[int]
    busy: np.ndarray
    macs: int
    rows: int
    cols: int
    dataflow: str
    trace: dict[str, np.ndarray] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        _check.as_array(self.product, "product")
        if self.product.ndim != 2:
            raise ValueError(f"product must be 2-D (M × N), got shape {self.product.shape}")
        cycles = _check.sequence(self.fold_cycles, "fold_cycles", min_length=1)
        for i, c in enumerate(cycles):
            _check.integer(c, f"fold_cycles[{i}]", minimum=1)
        busy = _check.as_array(self.busy, "busy")
        if busy.ndim != 1 or busy.dtype.kind not in "iu" or len(busy) != sum(cycles):
            raise ValueError(f"busy must be 1-D integers, one per cycle ({sum(cycles)}), got {busy.dtype} {busy.shape}")
        if _check.integer(self.macs, "macs", minimum=0) != int(busy.sum()):
            raise ValueError(f"macs must be busy.sum() = {int(busy.sum())}, got {self.macs}")
        R, C = _array(self.rows, self.cols)
        if busy.size and (busy.min() < 0 or busy.max() > R * C):
            raise ValueError(f"busy must count PEs in [0, {R * C}], got values in [{busy.min()}, {busy.max()}]")
        _dataflow(self.dataflow)
        if self.trace is not None and not isinstance(self.trace, dict):
            raise TypeError(f"trace must be a dict of arrays or None, got {type(self.trace).__name__}")

    @property
    def cycles(self) -> int:
        """All cycles the array ran: the sum of :attr:`fold_cycles` (= :attr:`Estimate.cycles`)."""
        return int(sum(self.fold_cycles))

    @property
    def last_cycle(self) -> int:
        """Index of the last cycle, ``cycles - 1``: the number SCALE-Sim reports (= :attr:`Estimate.last_cycle`)."""
        return self.cycles - 1

    @property
    def last_mac(self) -> int:
        """Index of the last cycle in which a PE did a MAC.

        In a full fold it is the fold's last cycle: the fold's length follows
        from the data movement. A ragged last fold (or a product smaller than
        the array) does its last MAC earlier, and the schedule still runs to
        :attr:`last_cycle`: charging every fold in full is SCALE-Sim's
        convention, which :func:`simulate` follows, not something the
        operands need.
        """
        return int(np.flatnonzero(self.busy)[-1])

    @property
    def utilization(self) -> float:
        """Useful MACs / (PEs × :attr:`cycles`): the fraction of PE-cycles that did a MAC."""
        return self.macs / (self.rows * self.cols * self.cycles)

    @property
    def scalesim_utilization(self) -> float:
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
    and keeps ``C[m0+r, n0+c]`` in its accumulator from its first MAC to the
    end of the fold (the trace's ``"c"`` records it there, busy or not).
    Returns the ``R × C`` block.
    """
    T = A.shape[1]
    rm, cn = min(R, A.shape[0] - m0), min(C, B.shape[1] - n0)
    a_val = np.zeros((R, C), A.dtype)
    b_val = np.zeros((R, C), A.dtype)
    a_k = np.full((R, C), -1)
    b_k = np.full((R, C), -1)
    acc = np.zeros((R, C), A.dtype)
    r_idx, c_idx = np.arange(R), np.arange(C)
    mapped = (r_idx < rm)[:, None] & (c_idx < cn)[None, :]
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
            holds = mapped & (t >= r_idx[:, None] + c_idx[None, :])      # from the first MAC on
            rec.step(busy, fold, 1, _pair(rows_m, a_k, a_k >= 0), _pair(b_k, cols_n, b_k >= 0),
                     _pair(rows_m, cols_n, holds))
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


def _operands(A: Any, B: Any) -> tuple[np.ndarray, np.ndarray]:
    """Check ``A`` and ``B`` for :func:`simulate`; return them as int64 (integers) or float64."""
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
    kind = np.int64 if A.dtype.kind in "iu" else np.float64
    if kind is np.int64:  # every partial sum must fit int64, or the "exact" product wraps around silently
        big = max(abs(int(A.min())), abs(int(A.max()))) * max(abs(int(B.min())), abs(int(B.max()))) * A.shape[1]
        if big >= 2**63:
            raise ValueError(f"A and B: max|A|·max|B|·K = {big:.3e} would overflow the int64 accumulators")
    return A.astype(kind), B.astype(kind)


def _ws_label(stream: Any, k: np.ndarray, col: np.ndarray, held: np.ndarray, busy: np.ndarray) -> tuple:
    """Trace indices of a weight-stationary PE grid: A[m, k] streams, B[k, n] is held, C[m, n] is added to."""
    a = _pair(stream, k, stream >= 0) if stream is not None else np.full(held.shape + (2,), -1, np.int32)
    return a, _pair(k, col, held), _pair(stream if stream is not None else k, col, busy)


def _is_label(stream: Any, k: np.ndarray, col: np.ndarray, held: np.ndarray, busy: np.ndarray) -> tuple:
    """Trace indices of an input-stationary PE grid: A[m, k] is held, B[k, n] streams."""
    b = _pair(k, stream, stream >= 0) if stream is not None else np.full(held.shape + (2,), -1, np.int32)
    return _pair(col, k, held), b, _pair(col, stream if stream is not None else k, busy)


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
    fixed schedule of :func:`estimate`, and partial sums of different ``K``
    folds add up in the output. The schedule, not the data, sets the count:
    every fold runs its preload, fill, stream and drain in full, as
    SCALE-Sim charges it, so a ragged fold idles after its last MAC
    (:attr:`Simulation.last_mac` says when that was). Within a full fold the
    last MAC falls in the fold's last cycle.

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
        each equal :func:`estimate`'s ``per_fold``, and ``cycles`` (and
        ``last_cycle``) equal its ``cycles`` (and ``last_cycle``).

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
    >>> np.array_equal(s.product, A @ B), s.fold_cycles, s.cycles, s.last_cycle
    (True, [5, 5], 10, 9)
    >>> s.cycles == estimate(4, 2, 3, 2, 2, "os").cycles
    True
    >>> small = simulate(np.ones((3, 2), int), np.ones((2, 3), int), rows=8, cols=8)
    >>> small.last_mac, small.last_cycle            # a ragged fold: idle after cycle 13
    (13, 24)
    """
    A, B = _operands(A, B)
    R, C = _array(rows, cols)
    trace = _check.boolean(trace, "trace")
    est = estimate(A.shape[0], B.shape[1], A.shape[1], R, C, dataflow)
    if est.cycles * R * C > SIMULATE_LIMIT:
        raise ValueError(f"rows, cols and A, B: the simulation would step {est.cycles * R * C:,} PE-cycles, more "
                         f"than {SIMULATE_LIMIT:,} (minutes of NumPy); use systolic.estimate for large problems")
    if trace and est.cycles * R * C > TRACE_LIMIT:
        raise ValueError(f"trace=True would record {est.cycles * R * C:,} PE-cycles, more than "
                         f"{TRACE_LIMIT:,}; use a smaller problem or trace=False")
    rec = _Recorder(trace, R, C)
    out = np.zeros((A.shape[0], B.shape[1]), A.dtype)
    fold_cycles = []
    for i in range(est.row_folds):
        for j in range(est.col_folds):
            start, fold = len(rec.busy), len(fold_cycles)
            if est.dataflow == "os":
                out[i * R:i * R + R, j * C:j * C + C] = _os_fold(A, B, i * R, j * C, R, C, rec, fold)
            elif est.dataflow == "ws":
                out[:, j * C:j * C + C] += _stationary_fold(A, B, i * R, j * C, R, C, rec, fold, _ws_label)
            else:
                out[j * C:j * C + C, :] += _stationary_fold(B.T, A.T, i * R, j * C, R, C, rec, fold, _is_label).T
            fold_cycles.append(len(rec.busy) - start)
    busy = np.array(rec.busy)
    return Simulation(out, fold_cycles, busy, int(busy.sum()), R, C, est.dataflow, rec.arrays())
