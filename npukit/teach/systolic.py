"""Checkers for lab 5, "Systolic arrays" (labs/05_systolic.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and compares
it with an independent reference written here (an enumeration of when every
MAC of every fold happens), never with :mod:`npukit.systolic`, which the
learner's function may not call; see :mod:`npukit.teach.core`.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable

import numpy as np

from .core import CheckFailed, _rng, check

__all__ = ["check_fold_cycles", "check_best_shape", "check_ws_busy", "check_utilization_prediction"]

_MAP = {"os": ("M", "N", "K"), "ws": ("K", "N", "M"), "is": ("K", "M", "N")}


def _forbid() -> tuple:
    from .. import systolic

    return (systolic, sys.modules[__name__])


def _cycles(M: int, N: int, K: int, R: int, C: int, df: str) -> int:
    """SCALE-Sim's compute cycles, by walking the folds and timing each fold's last MAC.

    In a fold, PE (r, c) does its MAC on stream element s at cycle
    ``pre + s + r + c`` (``pre`` = R for a weight/input preload, 0 for OS);
    every fold is scheduled as if full, and the report is the last busy
    cycle's index.
    """
    size = {"M": M, "N": N, "K": K}
    rows_dim, cols_dim, stream = (size[x] for x in _MAP[df])
    pre = 0 if df == "os" else R
    clock = 0
    for _ in range(math.ceil(rows_dim / R) * math.ceil(cols_dim / C)):
        last_mac = pre + (stream - 1) + (R - 1) + (C - 1)
        clock += last_mac + 1
    return clock - 1


def _cycle_hint(case: tuple, got: Any, want: int) -> str:
    M, N, K, R, C, df = case
    if got == want + 1:
        return "SCALE-Sim reports the index of the last busy cycle: subtract one from the total."
    others = [d for d in _MAP if d != df and _cycles(M, N, K, R, C, d) == got]
    if others:
        return f"that is the answer for dataflow {others[0]!r}: check which dimensions {df!r} maps to rows, columns and time."
    size = {"M": M, "N": N, "K": K}
    rd, cd, t = (size[x] for x in _MAP[df])
    pre = 0 if df == "os" else R
    per_fold = pre + R + C + t - 2
    if got == (rd // R or 1) * (cd // C or 1) * per_fold - 1:
        return "a partial fold costs a full one: use ceil(size / array side) folds, not floor."
    if got == per_fold - 1:
        return f"this problem needs {math.ceil(rd / R)}×{math.ceil(cd / C)} folds, not one."
    return f"one fold here costs {per_fold} cycles and there are {math.ceil(rd / R) * math.ceil(cd / C)} folds."


def check_fold_cycles(fn: Callable[[int, int, int, int, int, str], int]) -> None:
    """Check ``fn(M, N, K, rows, cols, dataflow) -> cycles`` (SCALE-Sim 3's compute cycles).

    Fresh cases: 36 GEMMs with dimensions 1–300 on arrays of 1–64 rows and
    columns, every dataflow. Reference: a walk over the folds that times the
    last MAC of each (see the chapter's cycle convention). A wrong answer is
    reported with a hint (off by one, another dataflow's answer, floor for
    ceil, one fold). Calling :mod:`npukit.systolic` is refused.

    Examples
    --------
    >>> def mine(M, N, K, rows, cols, dataflow):
    ...     sr, sc, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]
    ...     per_fold = (0 if dataflow == "os" else rows) + rows + cols + t - 2
    ...     return -(-sr // rows) * -(-sc // cols) * per_fold - 1
    >>> check_fold_cycles(mine)
    ✓ fold cycles: 36 fresh cases agree with the reference.
    """
    rng = _rng(5101)
    cases = []
    for i in range(36):
        M, N, K = (int(v) for v in rng.integers(1, 301, size=3))
        R, C = (int(v) for v in rng.integers(1, 65, size=2))
        cases.append((M, N, K, R, C, ("os", "ws", "is")[i % 3]))

    current: list = []

    def reference(*case: Any) -> int:      # check() calls it first, then the learner's function
        current[:] = [case]
        return _cycles(*case)

    def compare(got: Any, want: int) -> bool:
        if isinstance(got, (int, np.integer)) and not isinstance(got, bool) and int(got) == want:
            return True
        M, N, K, R, C, df = case = current[0]
        if isinstance(got, float) and got == want:
            raise CheckFailed(f"fold cycles: for M={M}, N={N}, K={K} on a {R}×{C} array, dataflow {df!r}, the "
                              f"value is right but a float ({got!r}); cycles are whole numbers: return an int "
                              "(ceil(a / b) is -(-a // b) in integer arithmetic)")
        raise CheckFailed(f"fold cycles: wrong answer for M={M}, N={N}, K={K} on a {R}×{C} array, "
                          f"dataflow {df!r}: expected {want}, got {got!r}.\n  Hint: {_cycle_hint(case, got, want)}")

    check("fold cycles", fn, cases, reference, compare=compare, forbid=_forbid())


def check_best_shape(fn: Callable[[int, int, int, int, str], tuple[int, int]]) -> None:
    """Check ``fn(M, N, K, pes, dataflow) -> (rows, cols)``: the fastest power-of-two shape with ``pes`` PEs.

    Fresh cases: 16 GEMMs with dimensions 1–2000 and ``pes`` from 16 to
    4096, every dataflow. The answer must use exactly ``pes`` PEs with
    power-of-two sides and take as few cycles as the best shape found by
    trying them all (any of several equally fast shapes is accepted).
    Calling :mod:`npukit.systolic` is refused.

    Examples
    --------
    >>> def mine(M, N, K, pes, dataflow):
    ...     shapes = [(2**e, pes // 2**e) for e in range(pes.bit_length())]
    ...     sr, sc, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]
    ...     def cycles(r, c):
    ...         return -(-sr // r) * -(-sc // c) * ((0 if dataflow == "os" else r) + r + c + t - 2) - 1
    ...     return min(shapes, key=lambda s: cycles(*s))
    >>> check_best_shape(mine)
    ✓ best shape: 16 fresh cases agree with the reference.
    """
    rng = _rng(5102)
    cases = []
    for i in range(16):
        M, N, K = (int(v) for v in rng.integers(1, 2001, size=3))
        cases.append((M, N, K, 2 ** int(rng.integers(4, 13)), ("os", "ws", "is")[i % 3]))

    current: list = []

    def reference(M: int, N: int, K: int, pes: int, df: str) -> dict:
        current[:] = [(M, N, K, pes, df)]
        shapes = [(2**e, pes // 2**e) for e in range(pes.bit_length())]
        return {s: _cycles(M, N, K, *s, df) for s in shapes}

    def compare(got: Any, table: dict) -> bool:
        M, N, K, pes, df = current[0]
        best = min(table.values())
        winners = [s for s, v in table.items() if v == best]
        where = f"best shape: wrong answer for M={M}, N={N}, K={K}, pes={pes}, dataflow {df!r}"
        try:
            assert len(got) == 2
            shape = (int(got[0]), int(got[1]))
        except Exception:
            raise CheckFailed(f"{where}: expected a tuple (rows, cols), got {got!r}") from None
        if shape not in table:
            raise CheckFailed(f"{where}: {shape} is not a power-of-two shape with rows × cols = {pes} "
                              f"(a best shape is {winners[0]}, {best} cycles)")
        if table[shape] != best:
            raise CheckFailed(f"{where}: {shape[0]}×{shape[1]} takes {table[shape]} cycles; "
                              f"{winners[0][0]}×{winners[0][1]} takes {best}")
        return True

    check("best shape", fn, cases, reference, compare=compare, forbid=_forbid())


def _ws_busy(M: int, K: int, N: int) -> np.ndarray:
    """Busy PEs per cycle of one weight-stationary fold on a K×N array, by listing every MAC."""
    busy = np.zeros(2 * K + N + M - 2, dtype=int)
    for m in range(M):
        for r in range(K):
            for c in range(N):
                busy[K + m + r + c] += 1
    return busy


def check_ws_busy(fn: Callable[[int, int, int], np.ndarray]) -> None:
    """Check ``fn(M, K, N) -> busy`` for one weight-stationary fold on a ``K × N`` array.

    ``busy[t]`` is the number of PEs doing a MAC in cycle ``t``; the array
    first spends ``K`` cycles loading weights, so the result has
    ``2K + N + M - 2`` entries. Fresh cases: 20 with ``M``, ``K``, ``N`` in
    1–14. Reference: a loop over every MAC (row ``m`` of ``A`` reaches PE
    ``(r, c)`` at cycle ``K + m + r + c``). Calling :mod:`npukit.systolic`
    is refused.

    Examples
    --------
    >>> def mine(M, K, N):
    ...     t = np.arange(2 * K + N + M - 2)[:, None, None, None]
    ...     m, r, c = np.ogrid[:M, :K, :N]
    ...     return (t == K + m + r + c).sum(axis=(1, 2, 3))
    >>> check_ws_busy(mine)
    ✓ weight-stationary busy PEs: 20 fresh cases agree with the reference.
    """
    rng = _rng(5103)
    cases = [tuple(int(v) for v in rng.integers(1, 15, size=3)) for _ in range(20)]

    current: list = []

    def reference(M: int, K: int, N: int) -> np.ndarray:
        current[:] = [(M, K, N)]
        return _ws_busy(M, K, N)

    def compare(got: Any, want: np.ndarray) -> bool:
        M, K, N = current[0]
        got_a = np.asarray(got)
        where = f"weight-stationary busy PEs: wrong answer for M={M}, K={K}, N={N}"
        if got_a.shape != want.shape:
            raise CheckFailed(f"{where}: expected {len(want)} cycles (K preload + K + N + M - 2), "
                              f"got an array of shape {got_a.shape}")
        bad = np.flatnonzero(got_a != want)
        if bad.size:
            t = int(bad[0])
            raise CheckFailed(f"{where}: in cycle {t} expected {want[t]} busy PEs, got {got_a[t]} "
                              f"(cycles 0–{K - 1} load weights; row m of A reaches PE (r, c) at cycle K + m + r + c)")
        return True

    check("weight-stationary busy PEs", fn, cases, reference, compare=compare, forbid=_forbid())


def check_utilization_prediction(fn: Callable[[], float], measured: Any, *, rtol: float = 0.25) -> None:
    """Compare the learner's predicted utilization with one measured by the simulator.

    ``fn()`` returns the prediction, a fraction in [0, 1] (worked out by hand
    from the cycle convention; :mod:`npukit.systolic` may not be called).
    ``measured`` is the :class:`npukit.systolic.Simulation` of the same layer.
    The prediction passes if it is within ``rtol`` (relative) of the
    measurement; otherwise the message shows where the cycles went, so the
    gap can be explained.

    Examples
    --------
    >>> from npukit.systolic import simulate
    >>> sim = simulate(np.ones((16, 64), int), np.ones((64, 128), int), 128, 128, "ws")
    >>> check_utilization_prediction(lambda: 0.02, sim)
    ✓ utilization prediction: you predicted 2.00%, the simulator measured 2.02%.
    """
    from ..systolic import Simulation

    if not isinstance(measured, Simulation):
        raise TypeError(f"measured must be a systolic.Simulation, got {type(measured).__name__}")
    from .core import learner_call

    got = learner_call("utilization prediction", fn, forbid=_forbid())
    try:
        guess = float(got)
    except (TypeError, ValueError):
        raise CheckFailed(f"utilization prediction: return a fraction such as 0.05, got {got!r}") from None
    truth = measured.utilization
    if guess > 1.0:
        raise CheckFailed(f"utilization prediction: {guess!r} is more than 1; give a fraction (0.05 for 5 %), "
                          "not a percentage")
    if abs(guess - truth) <= rtol * truth:
        print(f"✓ utilization prediction: you predicted {guess:.2%}, the simulator measured {truth:.2%}.")
        return
    R, C, folds, df = measured.rows, measured.cols, len(measured.fold_cycles), measured.dataflow
    M, N = measured.product.shape
    K = measured.macs // (M * N)
    size = {"M": M, "N": N, "K": K}
    s_r, s_c, t = (size[x] for x in _MAP[df])
    pre = 0 if df == "os" else R
    raise CheckFailed(
        f"utilization prediction: you predicted {guess:.2%}, the simulator measured {truth:.2%} "
        f"({measured.macs:,} MACs / ({R}×{C} PEs × {measured.last_cycle:,} cycles)).\n"
        f"  Where the cycles went: {folds} fold(s), each preload {pre} + fill {R - 1} + stream {t} + drain {C - 1} "
        f"= {pre + R + C + t - 2} cycles, and the layer's {_MAP[df][0]} × {_MAP[df][1]} = {s_r} × {s_c} fills "
        f"{min(s_r, R) * min(s_c, C):,} of the {R * C:,} PEs of a fold. Only the stream does work."
    )
