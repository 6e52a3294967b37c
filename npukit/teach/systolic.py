"""Checkers for lab 5, "Systolic arrays" (labs/05_systolic.ipynb).

Each ``check_*`` calls the learner's function on fresh cases and compares it
with an independent reference written here (an enumeration of when every MAC
of every fold happens), never with :mod:`npukit.systolic` or
:mod:`npukit.accelerator`, which the learner's function may not call; see
:mod:`npukit.teach.core`.

The cases are drawn from a large space with a new seed on every call, so a
table of answers copied from failure messages does not pass the next run. A
failure names its seed; ``check_…(fn, seed=S)`` draws the same cases again.
"""

from __future__ import annotations

import math
import secrets
import sys
from typing import Any, Callable

import numpy as np

from .. import _check
from .core import CheckFailed, check, learner_call

__all__ = ["check_fold_cycles", "check_best_shape", "check_ws_busy", "check_utilization_prediction"]

_MAP = {"os": ("M", "N", "K"), "ws": ("K", "N", "M"), "is": ("K", "M", "N")}


def _forbid() -> tuple:
    from .. import accelerator, systolic

    return (systolic, accelerator, sys.modules[__name__])


def _rng(seed: Any) -> tuple[np.random.Generator, int]:
    """A generator for this call's cases: ``seed`` if given, a fresh one otherwise."""
    seed = secrets.randbits(32) if seed is None else _check.integer(seed, "seed", minimum=0)
    return np.random.default_rng(seed), seed


def _again(name: str, seed: int) -> str:
    return f"\n  (These cases came from seed {seed}; {name}(your_function, seed={seed}) draws them again.)"


def _sizes(M: int, N: int, K: int, df: str) -> tuple[int, int, int]:
    """(dimension on the array's rows, on its columns, streamed) for a dataflow."""
    size = {"M": M, "N": N, "K": K}
    return tuple(size[x] for x in _MAP[df])  # type: ignore[return-value]


def _cycles(M: int, N: int, K: int, R: int, C: int, df: str) -> int:
    """SCALE-Sim's compute cycles, by walking the folds and timing each fold's last MAC.

    In a fold, PE (r, c) does its MAC on stream element s at cycle
    ``pre + s + r + c`` (``pre`` = R for a weight/input preload, 0 for OS);
    every fold is scheduled as if full, and the report is the last busy
    cycle's index.
    """
    rows_dim, cols_dim, stream = _sizes(M, N, K, df)
    pre = 0 if df == "os" else R
    clock = 0
    for _ in range(math.ceil(rows_dim / R) * math.ceil(cols_dim / C)):
        last_mac = pre + (stream - 1) + (R - 1) + (C - 1)
        clock += last_mac + 1
    return clock - 1


def _fold_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """GEMMs and arrays, every dataflow: a third whose sizes are multiples of the array's sides, a third
    that fit in one fold, a third anything (dimensions 1–300, sides 1–64)."""
    cases = []
    for i in range(n):
        R, C = (int(v) for v in rng.integers(1, 65, size=2))
        df, kind = ("os", "ws", "is")[i % 3], (i // 3) % 3
        if kind == 0:        # exact multiples: catches a ceiling written as a // b + 1
            dims = {"M": R, "N": C, "K": R} if df == "os" else {"M": C, "N": C, "K": R}
            M, N, K = (dims[x] * int(rng.integers(1, 6)) for x in "MNK")
        elif kind == 1:       # fits: one fold
            M, N, K = (int(rng.integers(1, 301)) for _ in range(3))
            s_r, s_c, _ = _sizes(M, N, K, df)
            R, C = max(R, s_r), max(C, s_c)
        else:
            M, N, K = (int(v) for v in rng.integers(1, 301, size=3))
        cases.append((M, N, K, R, C, df))
    rng.shuffle(cases)
    return cases


def _cycle_hint(case: tuple, got: Any, want: int) -> str:
    """Name the typical mistake that gives ``got`` for ``case``, if one does."""
    M, N, K, R, C, df = case
    s_r, s_c, t = _sizes(M, N, K, df)
    folds = math.ceil(s_r / R) * math.ceil(s_c / C)
    pre = 0 if df == "os" else R
    per_fold = pre + R + C + t - 2
    if got == want + 1:
        return "SCALE-Sim reports the index of the last busy cycle: subtract one from the total."
    if got == folds * (per_fold - 1) and folds > 1:
        return "the - 1 is applied once to the whole run (the last busy cycle's index), not to every fold."
    others = [d for d in _MAP if d != df and _cycles(M, N, K, R, C, d) == got]
    if others:
        return (f"that is the answer for dataflow {others[0]!r}: check which dimensions {df!r} maps to rows, "
                "columns and time.")
    if R != C and _cycles(M, N, K, C, R, df) == got:
        return f"rows and cols are swapped: the array has rows = {R} (its height) and cols = {C}."
    if df != "os" and got == folds * (per_fold - R) - 1:
        return f"{df!r} first preloads the stationary block, one array row per cycle: {R} more cycles per fold."
    if df == "os" and got == folds * (per_fold + R) - 1:
        return "output-stationary has no preload: both operands stream in, nothing is loaded first."
    if got == max(s_r // R, 1) * max(s_c // C, 1) * per_fold - 1:
        return "a partial fold costs a full one: use ceil(size / array side) folds, not floor."
    if isinstance(got, (int, float, np.number)) and abs(got - (s_r / R) * (s_c / C) * per_fold + 1) <= 1:
        return "a partial fold costs as much as a full one (the schedule is fixed): count whole folds."
    if got == per_fold - 1 and folds > 1:
        return f"this problem needs {math.ceil(s_r / R)}×{math.ceil(s_c / C)} folds, not one."
    return f"one fold here costs {per_fold} cycles and there are {folds} folds."


def check_fold_cycles(fn: Callable[[int, int, int, int, int, str], int], *, seed: int | None = None) -> None:
    """Check ``fn(M, N, K, rows, cols, dataflow) -> cycles`` (SCALE-Sim 3's compute cycles).

    Fresh cases (a new seed each call unless ``seed`` is given): 36 GEMMs
    with dimensions 1–320 on arrays of 1–64 rows and columns (up to 300 for
    the ones that fit in one fold), every dataflow; a third are exact
    multiples of the array's sides, a third fit in one fold.
    Reference: a walk over the folds that times the last MAC of each (see
    the chapter's cycle convention). A wrong answer is reported with a hint
    (off by one, another dataflow's answer, rows and columns swapped, the
    preload, floor for ceil, one fold). Calling :mod:`npukit.systolic` or
    :mod:`npukit.accelerator` is refused.

    Examples
    --------
    >>> def no_fill(M, N, K, rows, cols, dataflow):   # counts the streaming steps only, no fill or drain
    ...     sr, sc, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]
    ...     return -(-sr // rows) * -(-sc // cols) * t
    >>> check_fold_cycles(no_fill, seed=1)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: fold cycles: for M=165, N=26, K=9 on a 165×42 array (rows × cols), dataflow 'os': expected 213, got 9.
      Hint: one fold here costs 214 cycles and there are 1 folds.
      (These cases came from seed 1; check_fold_cycles(your_function, seed=1) draws them again.)
    """
    rng, seed = _rng(seed)
    cases = _fold_cases(rng, 36)
    current: list = []

    def reference(*case: Any) -> int:      # check() calls it first, then the learner's function
        current[:] = [case]
        return _cycles(*case)

    def compare(got: Any, want: int) -> bool:
        if isinstance(got, (int, np.integer)) and not isinstance(got, bool) and int(got) == want:
            return True
        M, N, K, R, C, df = case = current[0]
        where = f"fold cycles: for M={M}, N={N}, K={K} on a {R}×{C} array (rows × cols), dataflow {df!r}"
        if isinstance(got, float) and got == want:
            raise CheckFailed(f"{where}, the value is right but a float ({got!r}); cycles are whole numbers: return "
                              "an int (ceil(a / b) is -(-a // b) in integer arithmetic)" + _again("check_fold_cycles",
                                                                                                   seed))
        raise CheckFailed(f"{where}: expected {want}, got {got!r}.\n  Hint: {_cycle_hint(case, got, want)}"
                          + _again("check_fold_cycles", seed))

    check("fold cycles", fn, cases, reference, compare=compare, forbid=_forbid())


def check_best_shape(fn: Callable[[int, int, int, int, str], tuple[int, int]], *, seed: int | None = None) -> None:
    """Check ``fn(M, N, K, pes, dataflow) -> (rows, cols)``: the fastest power-of-two shape with ``pes`` PEs.

    Fresh cases (a new seed each call unless ``seed`` is given): 16 GEMMs
    with dimensions 1–2000 and ``pes`` from 16 to 4096, every dataflow. The
    answer must use exactly ``pes`` PEs with power-of-two sides and take as
    few cycles as the best shape found by trying them all with the checker's
    own fold walk (any of several equally fast shapes is accepted). Calling
    :mod:`npukit.systolic` or :mod:`npukit.accelerator` is refused.

    Examples
    --------
    >>> check_best_shape(lambda M, N, K, pes, dataflow: (1, pes), seed=1)   # one row of PEs for every layer
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: best shape: wrong answer for M=947, N=1024, K=1511, pes=4096, ...
    """
    rng, seed = _rng(seed)
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
        again = _again("check_best_shape", seed)
        try:
            assert len(got) == 2
            shape = (int(got[0]), int(got[1]))
        except Exception:
            raise CheckFailed(f"{where}: expected a tuple (rows, cols), got {got!r}" + again) from None
        if shape not in table:
            raise CheckFailed(f"{where}: {shape} is not a power-of-two shape with rows × cols = {pes} "
                              f"(a best shape is {winners[0]}, {best} cycles)" + again)
        if table[shape] != best:
            swapped = " Are rows and cols swapped?" if table[shape[::-1]] == best else ""
            raise CheckFailed(f"{where}: {shape[0]}×{shape[1]} takes {table[shape]} cycles; "
                              f"{winners[0][0]}×{winners[0][1]} takes {best}.{swapped}" + again)
        return True

    check("best shape", fn, cases, reference, compare=compare, forbid=_forbid())


def _ws_busy(M: int, K: int, N: int) -> np.ndarray:
    """Busy PEs per cycle of one weight-stationary fold on a K×N array, by listing every MAC."""
    m, r, c = np.meshgrid(np.arange(M), np.arange(K), np.arange(N), indexing="ij")
    return np.bincount((K + m + r + c).ravel(), minlength=2 * K + N + M - 2)


def check_ws_busy(fn: Callable[[int, int, int], np.ndarray], *, seed: int | None = None) -> None:
    """Check ``fn(M, K, N) -> busy`` for one weight-stationary fold on a ``K × N`` array.

    ``busy[t]`` is the number of PEs doing a MAC in cycle ``t``; the array
    first spends ``K`` cycles loading weights, so the result has
    ``2K + N + M - 2`` entries. Fresh cases (a new seed each call unless
    ``seed`` is given): 20 with ``M`` in 1–64 and ``K``, ``N`` in 1–24.
    Reference: every MAC listed (row ``m`` of ``A`` reaches PE ``(r, c)`` at
    cycle ``K + m + r + c``) and counted per cycle. Calling
    :mod:`npukit.systolic` or :mod:`npukit.accelerator` is refused.

    Examples
    --------
    >>> check_ws_busy(lambda M, K, N: np.full(2 * K + N + M - 2, K * N), seed=1)   # every PE busy every cycle
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: weight-stationary busy PEs: wrong answer for M=31, K=13, N=19: in cycle 0 expected 0 busy PEs, got 247 (cycles 0–12 load weights; row m of A reaches PE (r, c) at cycle K + m + r + c).
      (These cases came from seed 1; check_ws_busy(your_function, seed=1) draws them again.)
    """
    rng, seed = _rng(seed)
    cases = [(int(rng.integers(1, 65)), int(rng.integers(1, 25)), int(rng.integers(1, 25))) for _ in range(20)]
    current: list = []

    def reference(M: int, K: int, N: int) -> np.ndarray:
        current[:] = [(M, K, N)]
        return _ws_busy(M, K, N)

    def compare(got: Any, want: np.ndarray) -> bool:
        M, K, N = current[0]
        where = f"weight-stationary busy PEs: wrong answer for M={M}, K={K}, N={N}"
        again = _again("check_ws_busy", seed)
        try:
            got_a = np.asarray(got)
        except Exception:
            raise CheckFailed(f"{where}: expected a 1-D array of counts, got {type(got).__name__}" + again) from None
        if got_a.shape != want.shape:
            n = got_a.shape[0] if got_a.ndim == 1 else None
            why = (" (the K cycles of weight preload are missing)" if n == K + N + M - 2 else
                   " (the array has K rows, which hold the weights, and N columns)" if n == 2 * N + K + M - 2 else "")
            raise CheckFailed(f"{where}: expected {len(want)} cycles (K preload + K + N + M - 2), got an array of "
                              f"shape {got_a.shape}{why}" + again)
        bad = np.flatnonzero(got_a != want)
        if bad.size:
            t = int(bad[0])
            shifted = ""
            if np.array_equal(got_a[1:], want[:-1]) or np.array_equal(got_a[:-1], want[1:]):
                shifted = " Your curve is the right shape, one cycle off: count cycles from 0."
            raise CheckFailed(f"{where}: in cycle {t} expected {want[t]} busy PEs, got {got_a[t]} "
                              f"(cycles 0–{K - 1} load weights; row m of A reaches PE (r, c) at cycle "
                              f"K + m + r + c).{shifted}" + again)
        return True

    check("weight-stationary busy PEs", fn, cases, reference, compare=compare, forbid=_forbid())


def _utilization(M: int, N: int, K: int, R: int, C: int, df: str) -> float:
    return M * N * K / (R * C * _cycles(M, N, K, R, C, df))


def _where_cycles_went(M: int, N: int, K: int, R: int, C: int, df: str) -> str:
    s_r, s_c, t = _sizes(M, N, K, df)
    pre = 0 if df == "os" else R
    folds = math.ceil(s_r / R) * math.ceil(s_c / C)
    return (f"{folds} fold(s), each preload {pre} + fill {R - 1} + stream {t} + drain {C - 1} = "
            f"{pre + R + C + t - 2} cycles, and the layer's {_MAP[df][0]} × {_MAP[df][1]} = {s_r} × {s_c} fills "
            f"{min(s_r, R) * min(s_c, C):,} of the {R * C:,} PEs of a fold. Only the stream does work.")


def _measured_layer(measured: Any) -> tuple[int, int, int, int, int, str]:
    """``(M, N, K, rows, cols, dataflow)`` of a :class:`npukit.systolic.Simulation`, checked against the walk."""
    from ..systolic import Simulation

    if not isinstance(measured, Simulation):
        raise TypeError(f"measured must be a systolic.Simulation, got {type(measured).__name__}")
    M, N = measured.product.shape
    K = measured.macs // (M * N)
    R, C, df = measured.rows, measured.cols, measured.dataflow
    s_r, s_c, t = _sizes(M, N, K, df)
    folds = math.ceil(s_r / R) * math.ceil(s_c / C)
    per_fold = (0 if df == "os" else R) + R + C + t - 2
    if (measured.macs != M * N * K or measured.fold_cycles != [per_fold] * folds
            or int(np.sum(measured.busy)) != measured.macs):
        raise CheckFailed("utilization prediction: `measured` is not an unchanged result of systolic.simulate "
                          "(its MACs, folds and busy cycles disagree); run the measurement cell again.")
    return M, N, K, R, C, df


def check_utilization_prediction(fn: Callable[[int, int, int, int, int, str], float], measured: Any, *,
                                 rtol: float = 0.25, seed: int | None = None) -> None:
    """Compare the learner's predicted utilization with the simulator's measurement, then with fresh layers.

    ``fn(M, N, K, rows, cols, dataflow)`` returns the predicted utilization,
    useful MACs / (PEs × cycles), as a fraction, worked out from the cycle
    convention (:mod:`npukit.systolic` and :mod:`npukit.accelerator` may not
    be called). ``measured`` is the :class:`npukit.systolic.Simulation` of a
    layer; the prediction for that layer passes if it is within ``rtol``
    (relative) of the measurement, and otherwise the message shows where the
    cycles went. A prediction must come from the sizes, not from the
    measurement: the same function is then asked about 8 fresh layers (a
    new seed each call unless ``seed`` is given) and must be as close to
    the checker's own fold walk there.

    Examples
    --------
    >>> from npukit.systolic import simulate
    >>> sim = simulate(np.ones((16, 64), int), np.ones((64, 128), int), 128, 128, "ws")
    >>> check_utilization_prediction(lambda M, N, K, rows, cols, dataflow: M * N * K / (M * N * K), sim)   # 100 %
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: utilization prediction: you predicted 100.00%, the simulator measured 2.02% (131,072 MACs / (128×128 PEs × 397 cycles)).
      Where the cycles went: 1 fold(s), each preload 128 + fill 127 + stream 16 + drain 127 = 398 cycles, and the layer's K × N = 64 × 128 fills 8,192 of the 16,384 PEs of a fold. Only the stream does work.
    """
    rtol = _check.positive(rtol, "rtol")
    M, N, K, R, C, df = _measured_layer(measured)
    rng, seed = _rng(seed)
    name = "utilization prediction"

    def predicted(*case: Any) -> float:
        got = learner_call(name, fn, *case, forbid=_forbid())
        try:
            guess = float(got)
        except (TypeError, ValueError):
            raise CheckFailed(f"{name}: return a fraction such as 0.05, got {got!r}") from None
        if not 0 <= guess <= 1:
            raise CheckFailed(f"{name}: {guess!r} is not a fraction in [0, 1]; give 0.05 for 5 %, not a percentage")
        return guess

    guess, truth = predicted(M, N, K, R, C, df), measured.utilization
    if abs(guess - truth) > rtol * truth:
        raise CheckFailed(
            f"{name}: you predicted {guess:.2%}, the simulator measured {truth:.2%} "
            f"({measured.macs:,} MACs / ({R}×{C} PEs × {measured.last_cycle:,} cycles)).\n"
            f"  Where the cycles went: {_where_cycles_went(M, N, K, R, C, df)}")
    n = 8
    for i in range(n):
        case = (*(int(v) for v in rng.integers(1, 601, size=3)), *(int(v) for v in rng.integers(2, 257, size=2)),
                ("os", "ws", "is")[i % 3])
        want, got = _utilization(*case), predicted(*case)
        if abs(got - want) > rtol * want:
            m, n_, k, r, c, d = case
            raise CheckFailed(
                f"{name}: right for the measured layer, but for M={m}, N={n_}, K={k} on a {r}×{c} array, dataflow "
                f"{d!r}, you predict {got:.2%} where the convention gives {want:.2%}. A prediction must follow "
                f"from the sizes, not from the measurement.\n  Where the cycles went: "
                f"{_where_cycles_went(*case)}" + _again("check_utilization_prediction", seed))
    print(f"✓ {name}: you predicted {guess:.2%}, the simulator measured {truth:.2%}; {n} fresh layers agree too.")
