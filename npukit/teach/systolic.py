"""Checkers for lab 5, "Systolic arrays" (labs/05_systolic.ipynb).

Each ``check_*`` calls the learner's function on fresh cases and compares it
with a reference that does not share the learner's formula, never with
:mod:`npukit.systolic`'s closed form or :mod:`npukit.accelerator`, which the
learner's function may not call (see :mod:`npukit.teach.core`). The cycle
count of a GEMM is checked against SCALE-Sim 3.0.0's own runs (the copy in
``npukit/data/scalesim_reference.json``) and against the cycle-level
simulator :func:`npukit.systolic.simulate`, which moves operands register by
register and counts the cycles it takes; the busy-PE curve against a list of
every MAC.

The cases are drawn from a large space with a new seed on every call, so a
table of answers copied from failure messages does not pass the next run. A
failure names its seed; ``check_…(fn, seed=S)`` draws the same cases again.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import secrets
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import _check
from .core import CheckFailed, check, learner_call

__all__ = ["check_fold_cycles", "check_best_shape", "check_ws_busy", "check_utilization_prediction"]

_MAP = {"os": ("M", "N", "K"), "ws": ("K", "N", "M"), "is": ("K", "M", "N")}

#: SCALE-Sim 3.0.0's output for small layers (``make scalesim-reference`` writes it).
_SCALESIM = Path(__file__).resolve().parents[1] / "data" / "scalesim_reference.json"


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
    """Cycles the array runs, by walking the folds and timing each fold's last MAC.

    In a fold, PE (r, c) does its MAC on stream element s at cycle
    ``pre + s + r + c`` (``pre`` = R for a weight/input preload, 0 for OS);
    every fold is scheduled as if full, and the next starts after it. Used
    for the shape search and the utilization prediction, whose exercises
    rest on the cycle count that :func:`check_fold_cycles` checks against
    SCALE-Sim and the simulator.
    """
    rows_dim, cols_dim, stream = _sizes(M, N, K, df)
    pre = 0 if df == "os" else R
    clock = 0
    for _ in range(math.ceil(rows_dim / R) * math.ceil(cols_dim / C)):
        last_mac = pre + (stream - 1) + (R - 1) + (C - 1)
        clock += last_mac + 1
    return clock


def _scalesim_runs() -> dict[tuple, int]:
    """``(M, N, K, rows, cols, dataflow)`` → SCALE-Sim 3.0.0's reported cycles, for every layer it ran.

    A conv run becomes its GEMM by SCALE-Sim's own rule (``Ho = ceil((H - Fh + S)/S)``;
    a depthwise run is one single-channel layer per channel).
    """
    runs: dict[tuple, int] = {}
    for c in json.loads(_SCALESIM.read_text(encoding="utf-8"))["cases"]:
        if c["kind"] == "gemm":
            dims, layers = (c["M"], c["N"], c["K"]), [c]
        else:
            s = c["stride"]
            ho, wo = (-(-(c[f"ifmap_{d}"] - c[f"filt_{d}"] + s) // s) for d in "hw")
            ch = 1 if c["depthwise"] else c["channels"]
            dims, layers = (ho * wo, c["filters"], c["filt_h"] * c["filt_w"] * ch), c["layers"]
        for layer in layers:
            runs[(*dims, c["rows"], c["cols"], c["dataflow"])] = int(layer["cycles"])
    return runs


def _simulated_cycles(M: int, N: int, K: int, R: int, C: int, df: str) -> int:
    """Cycles the register-level simulator takes for the GEMM (its product checked too)."""
    from ..systolic import simulate

    sim = simulate(np.ones((M, K), np.int64), np.ones((K, N), np.int64), R, C, df)
    if not np.array_equal(sim.product, np.full((M, N), K)):
        raise RuntimeError("check_fold_cycles: the simulator computed a wrong product; report this")
    return sim.cycles


def _small_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    """GEMMs the simulator runs in a few milliseconds, every dataflow: a third whose sizes are
    multiples of the array's sides, a third that fit in one fold, a third anything (dimensions
    1–48, sides 1–16, at most 24 folds and 1,500 cycles)."""
    cases: list[tuple] = []
    while len(cases) < n:
        i = len(cases)
        R, C = (int(v) for v in rng.integers(1, 17, size=2))
        df, kind = ("os", "ws", "is")[i % 3], (i // 3) % 3
        if kind == 0:        # exact multiples: catches a ceiling written as a // b + 1
            dims = {"M": R, "N": C, "K": R} if df == "os" else {"M": C, "N": C, "K": R}
            M, N, K = (dims[x] * int(rng.integers(1, 4)) for x in "MNK")
        elif kind == 1:       # fits: one fold
            M, N, K = (int(rng.integers(1, 49)) for _ in range(3))
            s_r, s_c, _ = _sizes(M, N, K, df)
            R, C = max(R, s_r), max(C, s_c)
        else:
            M, N, K = (int(v) for v in rng.integers(1, 49, size=3))
        s_r, s_c, t = _sizes(M, N, K, df)
        folds = math.ceil(s_r / R) * math.ceil(s_c / C)
        if folds <= 24 and folds * ((0 if df == "os" else R) + R + C + t) <= 1500 and max(M, N, K) <= 144:
            cases.append((M, N, K, R, C, df))
    return cases


def _fold_cases(rng: np.random.Generator, n_scalesim: int, n_small: int) -> tuple[list[tuple], dict[tuple, int]]:
    """``n_scalesim`` of SCALE-Sim's own runs (its cycles + 1 expected) and ``n_small`` fresh GEMMs, shuffled."""
    runs = _scalesim_runs()
    keys = sorted(runs)
    picked = [keys[int(i)] for i in rng.choice(len(keys), size=n_scalesim, replace=False)]
    cases = picked + _small_cases(rng, n_small)
    rng.shuffle(cases)
    return cases, {k: runs[k] + 1 for k in picked}


def _cycle_hint(case: tuple, got: Any, want: int) -> str:
    """Name the typical mistake that gives ``got`` for ``case``, if one does."""
    M, N, K, R, C, df = case
    s_r, s_c, t = _sizes(M, N, K, df)
    folds = math.ceil(s_r / R) * math.ceil(s_c / C)
    pre = 0 if df == "os" else R
    per_fold = pre + R + C + t - 2
    if got == want - 1:
        return ("that is the index of the last cycle, the number SCALE-Sim reports; the array runs cycles 0 to "
                "that one, one cycle more.")
    if got == folds * (per_fold - 1) and folds > 1:
        return "the folds run back to back: a fold takes preload + fill + stream + drain, with no - 1 per fold."
    if df != "os" and got == folds * (per_fold - R):
        return f"{df!r} first preloads the stationary block, one array row per cycle: {R} more cycles per fold."
    if df == "os" and got == folds * (per_fold + R):
        return "output-stationary has no preload: both operands stream in, nothing is loaded first."
    others = [d for d in _MAP if d != df and _cycles(M, N, K, R, C, d) == got]
    if others:
        return (f"that is the answer for dataflow {others[0]!r}: check which dimensions {df!r} maps to rows, "
                "columns and time.")
    names = _MAP[df]
    if s_r != s_c and got == math.ceil(s_c / R) * math.ceil(s_r / C) * per_fold:
        return (f"{df!r} puts {names[0]} = {s_r} on the array's rows and {names[1]} = {s_c} on its columns; "
                "your folds have them the other way round.")
    if R != C and _cycles(M, N, K, C, R, df) == got:
        return f"rows and cols are swapped: the array has rows = {R} (its height) and cols = {C}."
    if got == max(s_r // R, 1) * max(s_c // C, 1) * per_fold:
        return "a partial fold costs a full one: use ceil(size / array side) folds, not floor."
    if isinstance(got, (int, float, np.number)) and abs(got - (s_r / R) * (s_c / C) * per_fold) <= 1:
        return "a partial fold costs as much as a full one (the schedule is fixed): count whole folds."
    if got == per_fold and folds > 1:
        return f"this problem needs {math.ceil(s_r / R)}×{math.ceil(s_c / C)} folds, not one."
    return f"one fold here costs {per_fold} cycles and there are {folds} folds."


def check_fold_cycles(fn: Callable[[int, int, int, int, int, str], int], *, seed: int | None = None) -> None:
    """Check ``fn(M, N, K, rows, cols, dataflow) -> cycles``, the cycles a GEMM takes on the array.

    Cases (a new draw each call unless ``seed`` is given): 12 of the layer
    runs SCALE-Sim 3.0.0 made for the course (GEMMs and convolutions on
    arrays of 3×5 to 16×16, every dataflow), where the expected count is
    SCALE-Sim's reported cycles plus one (it reports the index of the last
    cycle); and 12 fresh GEMMs (dimensions 1–48 on arrays of 1–16 rows and
    columns, a third exact multiples of the array's sides, a third fitting
    in one fold), where the expected count is what
    :func:`npukit.systolic.simulate` takes moving the operands register by
    register. A wrong answer is reported with a hint (the last cycle's
    index, a - 1 per fold, another dataflow's answer, the dataflow's mapping
    transposed, rows and columns swapped, the preload, floor for ceil, one
    fold). Calling :mod:`npukit.systolic` or :mod:`npukit.accelerator` is
    refused.

    Examples
    --------
    >>> def mine(M, N, K, rows, cols, dataflow):
    ...     sr, sc, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]
    ...     per_fold = (0 if dataflow == "os" else rows) + rows + cols + t - 2
    ...     return -(-sr // rows) * -(-sc // cols) * per_fold
    >>> check_fold_cycles(mine)
    ✓ fold cycles: 24 cases agree, 12 with SCALE-Sim 3.0.0's own runs and 12 fresh ones with the simulator.
    """
    rng, seed = _rng(seed)
    cases, scalesim = _fold_cases(rng, 12, 12)
    current: list = []

    def reference(*case: Any) -> int:      # check() calls it after the learner's function
        current[:] = [case]
        return scalesim[case] if case in scalesim else _simulated_cycles(*case)

    def compare(got: Any, want: int) -> bool:
        if isinstance(got, (int, np.integer)) and not isinstance(got, bool) and int(got) == want:
            return True
        M, N, K, R, C, df = case = current[0]
        source = "SCALE-Sim's run" if case in scalesim else "the simulator"
        where = f"fold cycles: for M={M}, N={N}, K={K} on a {R}×{C} array (rows × cols), dataflow {df!r}"
        if isinstance(got, float) and got == want:
            raise CheckFailed(f"{where}, the value is right but a float ({got!r}); cycles are whole numbers: return "
                              "an int (ceil(a / b) is -(-a // b) in integer arithmetic)" + _again("check_fold_cycles",
                                                                                                   seed))
        raise CheckFailed(f"{where}: expected {want} ({source}), got {got!r}.\n  Hint: {_cycle_hint(case, got, want)}"
                          + _again("check_fold_cycles", seed))

    shown = io.StringIO()                  # the learner's own prints pass through; check()'s summary is replaced
    try:
        with contextlib.redirect_stdout(shown):
            n = check("fold cycles", fn, cases, reference, compare=compare, forbid=_forbid())
    finally:
        sys.stdout.write("".join(line for line in shown.getvalue().splitlines(keepends=True)
                                 if not line.startswith("✓ fold cycles:")))
    print(f"✓ fold cycles: {n} cases agree, {len(scalesim)} with SCALE-Sim 3.0.0's own runs and "
          f"{n - len(scalesim)} fresh ones with the simulator.")


def _extreme_shape_cases(rng: np.random.Generator) -> list[tuple]:
    """Per dataflow, a GEMM only ``1 × pes`` runs fastest and one only ``pes × 1`` does.

    With the row dimension 1 and the column dimension ``pes``, one row of
    ``pes`` columns holds it in a single fold, and every taller shape needs
    more folds; with them the other way round a ``pes × 1`` column does. The
    streamed dimension is anything.
    """
    cases = []
    for df in ("os", "ws", "is"):
        for tall in (False, True):
            pes, t = 2 ** int(rng.integers(4, 11)), int(rng.integers(1, 2001))
            s_r, s_c = (pes, 1) if tall else (1, pes)
            size = dict(zip(_MAP[df], (s_r, s_c, t)))
            cases.append((size["M"], size["N"], size["K"], pes, df))
    return cases


def check_best_shape(fn: Callable[[int, int, int, int, str], tuple[int, int]], *, seed: int | None = None) -> None:
    """Check ``fn(M, N, K, pes, dataflow) -> (rows, cols)``: the fastest power-of-two shape with ``pes`` PEs.

    Fresh cases (a new seed each call unless ``seed`` is given): 16 GEMMs
    with dimensions 1–2000 and ``pes`` from 16 to 4096, every dataflow, and
    6 where only an extreme shape wins, ``1 × pes`` or ``pes × 1`` (one of
    the two stationary dimensions is 1 and the other ``pes``), one of each
    per dataflow, so a search that leaves out the ends of the range fails.
    The answer must use exactly ``pes`` PEs with power-of-two sides and take
    as few cycles as the best shape found by trying them all with the
    checker's own fold walk (any of several equally fast shapes is
    accepted). Calling :mod:`npukit.systolic` or :mod:`npukit.accelerator`
    is refused.

    Examples
    --------
    >>> def mine(M, N, K, pes, dataflow):
    ...     shapes = [(2**e, pes // 2**e) for e in range(pes.bit_length())]
    ...     sr, sc, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]
    ...     def cycles(r, c):
    ...         return -(-sr // r) * -(-sc // c) * ((0 if dataflow == "os" else r) + r + c + t - 2)
    ...     return min(shapes, key=lambda s: cycles(*s))
    >>> check_best_shape(mine)
    ✓ best shape: 22 fresh cases agree with the reference.
    """
    rng, seed = _rng(seed)
    cases = []
    for i in range(16):
        M, N, K = (int(v) for v in rng.integers(1, 2001, size=3))
        cases.append((M, N, K, 2 ** int(rng.integers(4, 13)), ("os", "ws", "is")[i % 3]))
    cases += _extreme_shape_cases(rng)
    rng.shuffle(cases)
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
    >>> def mine(M, K, N):
    ...     t = np.arange(2 * K + N + M - 2)[:, None, None, None]
    ...     m, r, c = np.ogrid[:M, :K, :N]
    ...     return (t == K + m + r + c).sum(axis=(1, 2, 3))
    >>> check_ws_busy(mine)
    ✓ weight-stationary busy PEs: 20 fresh cases agree with the reference.
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
    """Useful MACs / (PEs × cycles the array runs)."""
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
    >>> def mine(M, N, K, rows, cols, dataflow):
    ...     sr, sc, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]
    ...     per_fold = (0 if dataflow == "os" else rows) + rows + cols + t - 2
    ...     return M * N * K / (rows * cols * -(-sr // rows) * -(-sc // cols) * per_fold)
    >>> check_utilization_prediction(mine, sim)
    ✓ utilization prediction: you predicted 2.01%, the simulator measured 2.01%; 8 fresh layers agree too.
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
            f"({measured.macs:,} MACs / ({R}×{C} PEs × {measured.cycles:,} cycles)).\n"
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
