"""Checkers for lab 5, "Systolic arrays" (labs/05_systolic.ipynb).

Each ``check_*`` calls the learner's function on fresh cases and compares it
with a reference that does not share the learner's formula, never with
:mod:`npukit.systolic`'s closed form or :mod:`npukit.accelerator`, which the
learner's function may not call (see :mod:`npukit.teach.core`). The cycle
count of a GEMM is checked against SCALE-Sim 3.0.0's own runs (the copy in
``npukit/data/scalesim_reference.json``, ragged folds among them) and, on
fresh cases, against the folds times the length of a full fold as the
cycle-level simulator :func:`npukit.systolic.simulate` times it, from the
cycle of its last MAC (the simulator runs every fold on a fixed schedule, so
its own count of a ragged fold is the convention, not evidence for it); the
busy-PE curve against a list of every MAC.

The cases are drawn from a large space with a new seed on every call, so a
table of answers copied from failure messages does not pass the next run. A
failure names its seed; ``check_…(fn, seed=S)`` draws the same cases again.
"""

from __future__ import annotations

import contextlib
import io
import itertools
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


def _simulated_fold(R: int, C: int, T: int, df: str) -> int:
    """Cycles of one full fold (every PE mapped, a stream of ``T``) as the register-level simulator times it.

    The fold's length is read from the data movement: the cycle of its last
    MAC (in the far corner, for the last streamed element) plus one, not the
    length of the simulator's loop. The product is checked too.
    """
    from ..systolic import simulate

    M, N, K = {"os": (R, C, T), "ws": (T, C, R), "is": (C, T, R)}[df]
    sim = simulate(np.ones((M, K), np.int64), np.ones((K, N), np.int64), R, C, df)
    if not np.array_equal(sim.product, np.full((M, N), K)) or len(sim.fold_cycles) != 1:
        raise RuntimeError("check_fold_cycles: the simulator computed a wrong product; report this")
    return int(np.flatnonzero(sim.busy)[-1]) + 1


def _fresh_cycles(M: int, N: int, K: int, R: int, C: int, df: str) -> int:
    """A fresh case's expected cycles: its folds, each as long as a full fold the simulator runs.

    A partial fold at a ragged edge is charged as a full one. That is
    SCALE-Sim's convention, not something the data movement requires (a
    ragged fold's last MAC comes earlier); the cases drawn from SCALE-Sim's
    own runs, ragged ones among them, are what check it.
    """
    s_r, s_c, t = _sizes(M, N, K, df)
    return math.ceil(s_r / R) * math.ceil(s_c / C) * _simulated_fold(R, C, t, df)


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


def _parts(M: int, N: int, K: int, R: int, C: int, df: str) -> tuple[int, int, int, int, int]:
    """``(S_R, S_C, T, folds, per_fold)`` of a case in the convention."""
    s_r, s_c, t = _sizes(M, N, K, df)
    return s_r, s_c, t, math.ceil(s_r / R) * math.ceil(s_c / C), (0 if df == "os" else R) + R + C + t - 2


def _ragged_sum(M: int, N: int, K: int, R: int, C: int, df: str, short_preload: bool) -> int:
    """A ragged fold charged only for its mapped rows and columns (fill and drain, or the preload)."""
    s_r, s_c, t = _sizes(M, N, K, df)
    total = 0
    for i in range(math.ceil(s_r / R)):
        r = min(R, s_r - i * R)
        for j in range(math.ceil(s_c / C)):
            c = min(C, s_c - j * C)
            pre = 0 if df == "os" else (r if short_preload else R)
            total += pre + R + C + t - 2 if short_preload else pre + r + c + t - 2
    return total


def _only(dfs: tuple[str, ...], wrong: Callable[..., Any]) -> Callable[..., Any]:
    """A mistake made in some dataflows only: the right answer in the others."""
    return lambda *case: wrong(*case) if case[5] in dfs else _cycles(*case)


def _variants() -> list[tuple[str, Callable[..., Any], Callable[..., str]]]:
    """Known mistakes as ``(kind, answer(case), hint(case))``; one kind may have several variants."""
    p = _parts
    last = ("the last cycle", lambda *a: _cycles(*a) - 1,
            lambda *a: "that is the index of the last cycle, the number SCALE-Sim reports; the array runs cycles "
                       "0 to that one, one cycle more.")
    minus = ("a - 1 per fold", lambda *a: p(*a)[3] * (p(*a)[4] - 1),
             lambda *a: "the folds run back to back: a fold takes preload + fill + stream + drain, with no - 1 "
                        "per fold.")
    out = [last, minus]
    for dfs in (("ws", "is"), ("ws",), ("is",)):
        out.append(("no preload", _only(dfs, lambda *a: p(*a)[3] * (p(*a)[4] - a[3])),
                    lambda *a: f"{a[5]!r} first preloads the stationary block, one array row per cycle: {a[3]} "
                               "more cycles per fold."))
        out.append(("a preload of cols", _only(dfs, lambda *a: p(*a)[3] * (p(*a)[4] - a[3] + a[4])),
                    lambda *a: f"the preload shifts the stationary block in one array row per cycle, so it takes "
                               f"rows = {a[3]} cycles, not cols = {a[4]}."))
    out.append(("a preload in OS", _only(("os",), lambda *a: p(*a)[3] * (p(*a)[4] + a[3])),
                lambda *a: "output-stationary has no preload: both operands stream in, nothing is loaded first."))
    out.append(("rows and cols swapped", lambda M, N, K, R, C, df: _cycles(M, N, K, C, R, df),
                lambda *a: f"rows and cols are swapped: the array has rows = {a[3]} (its height) and cols = {a[4]}."))
    for dfs in (("os", "ws", "is"), ("os",), ("ws",), ("is",)):
        out.append(("the mapping transposed",
                    _only(dfs, lambda *a: math.ceil(p(*a)[1] / a[3]) * math.ceil(p(*a)[0] / a[4]) * p(*a)[4]),
                    lambda *a: f"{a[5]!r} puts {_MAP[a[5]][0]} = {p(*a)[0]} on the array's rows and "
                               f"{_MAP[a[5]][1]} = {p(*a)[1]} on its columns; your folds have them the other way "
                               "round."))
    for answered in itertools.product(_MAP, repeat=3):     # each dataflow answered as some dataflow
        as_df = dict(zip(_MAP, answered))
        if any(k != v for k, v in as_df.items()):
            out.append(("another dataflow", lambda *a, m=as_df: _cycles(*a[:5], m[a[5]]),
                        lambda *a, m=as_df: f"that is the answer for dataflow {m[a[5]]!r}: check which dimensions "
                                            f"{a[5]!r} maps to rows, columns and time."))
    for df in _MAP:
        for wrong_t in "MNK":
            if wrong_t != _MAP[df][2]:
                out.append(("the wrong stream", _only((df,), lambda *a, d=wrong_t: p(*a)[3] * (
                    p(*a)[4] - p(*a)[2] + dict(zip("MNK", a[:3]))[d])),
                    lambda *a, d=wrong_t: f"{a[5]!r} streams {_MAP[a[5]][2]} = {p(*a)[2]} through the array "
                                          f"in time, not {d}."))
    ceil_hint = lambda *a: "a partial fold costs a full one: use ceil(size / array side) folds, not floor."  # noqa: E731
    out.append(("floor", lambda *a: max(p(*a)[0] // a[3], 1) * max(p(*a)[1] // a[4], 1) * p(*a)[4], ceil_hint))
    out.append(("floor", lambda *a: (p(*a)[0] // a[3]) * (p(*a)[1] // a[4]) * p(*a)[4], ceil_hint))
    out.append(("a // b + 1", lambda *a: (p(*a)[0] // a[3] + 1) * (p(*a)[1] // a[4] + 1) * p(*a)[4],
                lambda *a: "ceil(a / b) is not a // b + 1, which is one fold too many when b divides a; in "
                           "integers it is -(-a // b)."))
    frac_hint = lambda *a: "a partial fold costs as much as a full one (the schedule is fixed): count whole folds."  # noqa: E731
    out.append(("fractional folds", lambda *a: p(*a)[0] / a[3] * p(*a)[1] / a[4] * p(*a)[4], frac_hint))
    out.append(("fractional folds", lambda *a: max(p(*a)[0] / a[3], 1) * max(p(*a)[1] / a[4], 1) * p(*a)[4],
                frac_hint))
    ragged_hint = lambda *a: ("in this convention (SCALE-Sim's) a fold at a ragged edge costs as much as a full "  # noqa: E731
                              "one: the schedule is fixed, and the idle rows and columns take their cycles too.")
    out.append(("ragged folds shorter", lambda *a: _ragged_sum(*a, short_preload=False), ragged_hint))
    out.append(("ragged folds shorter", lambda *a: _ragged_sum(*a, short_preload=True), ragged_hint))
    out.append(("one fold", lambda *a: p(*a)[4],
                lambda *a: f"this problem needs {math.ceil(p(*a)[0] / a[3])}×{math.ceil(p(*a)[1] / a[4])} folds, "
                           "not one."))
    return out


def _same_answer(kind: str, model: Any, got: Any) -> bool:
    if isinstance(got, bool) or not isinstance(got, (int, float, np.integer, np.floating)):
        return False
    return abs(got - model) <= 1 if kind == "fractional folds" else got == model


def _cycle_hint(case: tuple, answers: dict[tuple, Any] | None) -> str:
    """A hint for the failing ``case``: a known mistake's, if exactly one kind of mistake gives every answer.

    ``answers`` holds the learner's answer to every case of the run (None if
    one of them could not be had). When no known mistake, or more than one
    kind, reproduces all of them, the hint only says what the right count is
    made of: a guess presented as a diagnosis would mislead.
    """
    s_r, s_c, _, folds, per_fold = _parts(*case)
    kinds: dict[str, Callable[..., str]] = {}
    if answers:
        for kind, answer, hint in _variants():
            if kind not in kinds and all(_same_answer(kind, answer(*c), got) for c, got in answers.items()):
                kinds[kind] = hint
    if len(kinds) == 1:
        return next(iter(kinds.values()))(*case)
    return f"one fold here costs {per_fold} cycles and there are {folds} folds."


def check_fold_cycles(fn: Callable[[int, int, int, int, int, str], int], *, seed: int | None = None) -> None:
    """Check ``fn(M, N, K, rows, cols, dataflow) -> cycles``, the cycles a GEMM takes on the array.

    Cases (a new draw each call unless ``seed`` is given): 12 of the layer
    runs SCALE-Sim 3.0.0 made for the course (GEMMs and convolutions on
    arrays of 3×5 to 16×16, every dataflow), where the expected count is
    SCALE-Sim's reported cycles plus one (it reports the index of the last
    cycle); and 12 fresh GEMMs (dimensions 1–48 on arrays of 1–16 rows and
    columns, a third exact multiples of the array's sides, a third fitting
    in one fold), where the expected count is the folds times the length of
    one full fold as :func:`npukit.systolic.simulate` times it, moving the
    operands register by register (its last MAC's cycle + 1). That a ragged
    fold costs a full one is SCALE-Sim's convention, checked by its own runs.
    A wrong answer gets a hint naming a mistake (the last cycle's index, a
    - 1 per fold, another dataflow's answer, the dataflow's mapping
    transposed, rows and columns swapped, a preload forgotten, added to OS
    or of cols cycles, floor or a // b + 1 for ceil, fractional folds,
    shorter ragged folds, one fold) only when that mistake, and no other,
    gives the learner's answers to all the cases. Calling
    :mod:`npukit.systolic` or :mod:`npukit.accelerator` is refused.

    Examples
    --------
    >>> def no_fill(M, N, K, rows, cols, dataflow):   # counts the streaming steps only, no fill or drain
    ...     sr, sc, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]
    ...     return -(-sr // rows) * -(-sc // cols) * t
    >>> check_fold_cycles(no_fill, seed=1)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: fold cycles: for M=..., N=..., K=... on a ... array (rows × cols), dataflow ...: expected ..., got ...
    """
    rng, seed = _rng(seed)
    cases, scalesim = _fold_cases(rng, 12, 12)
    current: list = []

    def reference(*case: Any) -> int:      # check() calls it after the learner's function
        current[:] = [case]
        return scalesim[case] if case in scalesim else _fresh_cycles(*case)

    def all_answers() -> dict[tuple, Any] | None:
        """The learner's answer to every case (for the hint), or None if one cannot be had."""
        answers = {}
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                for c in cases:
                    answers[c] = learner_call("fold cycles", fn, *c, forbid=_forbid())
        except Exception:
            return None
        return answers

    def compare(got: Any, want: int) -> bool:
        if isinstance(got, (int, np.integer)) and not isinstance(got, bool) and int(got) == want:
            return True
        M, N, K, R, C, df = case = current[0]
        source = "SCALE-Sim's run" if case in scalesim else "folds × the simulator's full fold"
        where = f"fold cycles: for M={M}, N={N}, K={K} on a {R}×{C} array (rows × cols), dataflow {df!r}"
        if isinstance(got, float) and got == want:
            raise CheckFailed(f"{where}, the value is right but a float ({got!r}); cycles are whole numbers: return "
                              "an int (ceil(a / b) is -(-a // b) in integer arithmetic)" + _again("check_fold_cycles",
                                                                                                   seed))
        raise CheckFailed(f"{where}: expected {want} ({source}), got {got!r}.\n  Hint: {_cycle_hint(case, all_answers())}"
                          + _again("check_fold_cycles", seed))

    shown = io.StringIO()                  # the learner's own prints pass through; check()'s summary is replaced
    try:
        with contextlib.redirect_stdout(shown):
            n = check("fold cycles", fn, cases, reference, compare=compare, forbid=_forbid())
    finally:
        sys.stdout.write("".join(line for line in shown.getvalue().splitlines(keepends=True)
                                 if not line.startswith("✓ fold cycles:")))
    print(f"✓ fold cycles: {n} cases agree, {len(scalesim)} with SCALE-Sim 3.0.0's own runs and "
          f"{n - len(scalesim)} fresh ones with the simulator's timing of a full fold.")


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


def _walk(M: int, N: int, K: int, R: int, C: int, df: str, preload: int) -> int:
    """Cycles with a given preload per fold (the right one is R for WS and IS, 0 for OS)."""
    s_r, s_c, t = _sizes(M, N, K, df)
    return math.ceil(s_r / R) * math.ceil(s_c / C) * (preload + R + C + t - 2)


def _preload_cases(rng: np.random.Generator) -> list[tuple]:
    """Per dataflow, two GEMMs whose best shapes change when the preload is got wrong.

    OS: with a preload of ``rows`` (or ``cols``) cycles added; WS and IS:
    with no preload, or one of ``cols`` cycles. In each case no shape that
    is best under the wrong preload is best under the right one, so a search
    built on that mistake fails whichever of its tied shapes it returns.
    """
    wrong = {"os": (lambda R, C: R, lambda R, C: C), "ws": (lambda R, C: 0, lambda R, C: C),
             "is": (lambda R, C: 0, lambda R, C: C)}
    cases = []
    for df, preloads in wrong.items():
        for pre in preloads:
            for _ in range(100_000):         # about one draw in 30 to 100 qualifies
                M, N, K = (int(v) for v in rng.integers(1, 2001, size=3))
                pes = 2 ** int(rng.integers(4, 13))
                shapes = [(2**e, pes // 2**e) for e in range(pes.bit_length())]
                right = {s: _walk(M, N, K, *s, df, 0 if df == "os" else s[0]) for s in shapes}
                bad = {s: _walk(M, N, K, *s, df, pre(*s)) for s in shapes}
                if not ({s for s in shapes if right[s] == min(right.values())}
                        & {s for s in shapes if bad[s] == min(bad.values())}):
                    cases.append((M, N, K, pes, df))
                    break
            else:  # pragma: no cover - never reached with these ranges
                raise RuntimeError("check_best_shape: no case where the preload changes the best shape")
    return cases


def check_best_shape(fn: Callable[[int, int, int, int, str], tuple[int, int]], *, seed: int | None = None) -> None:
    """Check ``fn(M, N, K, pes, dataflow) -> (rows, cols)``: the fastest power-of-two shape with ``pes`` PEs.

    Fresh cases (a new seed each call unless ``seed`` is given): 16 GEMMs
    with dimensions 1–2000 and ``pes`` from 16 to 4096, every dataflow, and
    6 where only an extreme shape wins, ``1 × pes`` or ``pes × 1`` (one of
    the two stationary dimensions is 1 and the other ``pes``), one of each
    per dataflow, so a search that leaves out the ends of the range fails;
    and 6 whose best shape changes when the preload is got wrong (added to
    OS, of ``rows`` or ``cols`` cycles; left out of WS or IS, or of ``cols``
    cycles), two per dataflow. The answer must use exactly ``pes`` PEs with power-of-two sides and take
    as few cycles as the best shape found by trying them all with the
    checker's own fold walk (any of several equally fast shapes is
    accepted). Calling :mod:`npukit.systolic` or :mod:`npukit.accelerator`
    is refused.

    Examples
    --------
    >>> check_best_shape(lambda M, N, K, pes, dataflow: (1, pes), seed=1)   # one row of PEs for every layer
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: best shape: wrong answer for M=..., N=..., K=..., pes=..., dataflow ...
    """
    rng, seed = _rng(seed)
    cases = []
    for i in range(16):
        M, N, K = (int(v) for v in rng.integers(1, 2001, size=3))
        cases.append((M, N, K, 2 ** int(rng.integers(4, 13)), ("os", "ws", "is")[i % 3]))
    cases += _extreme_shape_cases(rng) + _preload_cases(rng)
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
    new seed each call unless ``seed`` is given) and must agree exactly
    (to 1e-9) with the checker's own fold walk there, dividing by the count
    of cycles or, as SCALE-Sim does, by the last cycle's index, the same way
    on every layer. A function that is a quarter off is a different
    formula, and on the measured layer alone several wrong ones land
    within a quarter.

    Examples
    --------
    >>> from npukit.systolic import simulate
    >>> sim = simulate(np.ones((16, 64), int), np.ones((64, 128), int), 128, 128, "ws")
    >>> check_utilization_prediction(lambda M, N, K, rows, cols, dataflow: M * N * K / (M * N * K), sim)   # 100 %
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: utilization prediction: you predicted 100.00%, the simulator measured 2.01% (131,072 MACs / (128×128 PEs × 398 cycles)).
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
            f"({measured.macs:,} MACs / ({R}×{C} PEs × {measured.cycles:,} cycles)).\n"
            f"  Where the cycles went: {_where_cycles_went(M, N, K, R, C, df)}")
    n = 8
    forms = {"count", "last cycle"}          # useful MACs / (PEs × cycles), or SCALE-Sim's / (PEs × last cycle)
    for i in range(n):
        case = (*(int(v) for v in rng.integers(1, 601, size=3)), *(int(v) for v in rng.integers(2, 257, size=2)),
                ("os", "ws", "is")[i % 3])
        got = predicted(*case)               # the learner first: the reference is not on the stack yet
        want = _utilization(*case)
        cycles = _cycles(*case)
        by_form = {"count": want, "last cycle": want * cycles / (cycles - 1)}
        forms &= {f for f, v in by_form.items() if math.isclose(got, v, rel_tol=1e-9)}
        if not forms:
            m, n_, k, r, c, d = case
            raise CheckFailed(
                f"{name}: right for the measured layer, but for M={m}, N={n_}, K={k} on a {r}×{c} array, dataflow "
                f"{d!r}, you predict {got:.4%} where the convention gives {want:.4%}. A prediction must follow "
                f"from the sizes, not from the measurement, and on these layers it must be exact (dividing by the "
                f"cycles, or, as SCALE-Sim does, by the last cycle's index, the same way every time).\n  Where the "
                f"cycles went: {_where_cycles_went(*case)}" + _again("check_utilization_prediction", seed))
    print(f"✓ {name}: you predicted {guess:.2%}, the simulator measured {truth:.2%}; {n} fresh layers agree too.")
