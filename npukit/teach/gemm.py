"""Checkers for lab 4, "GEMM and tiling" (labs/04_gemm.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases (drawn by
:func:`npukit.teach.core._rng`, so a grading seed changes them) and compares it
with an independent reference written here: ``numpy.matmul`` for the product,
a step-by-step walk of the loop nest that counts whole lines for the traffic,
and an exhaustive search over every tile for the best tile. While the
learner's function runs, :mod:`npukit.gemm` (the library's answers) and these
references are refused however they were imported (see
:mod:`npukit.teach.core`). A failure names the input and the first wrong
value, and adds a hint only when the answer is exactly what a known mistake
gives.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Callable

import numpy as np

from .. import _check
from ..gemm import tiled_matmul as _library_tiled
from .core import CheckFailed, _rng, around, check, learner_call
from .retime import THREAD_TIME, retimed

_NDARRAY = np.ndarray       # as imported: while the learner's function runs, the grader stands in for np.ndarray

__all__ = ["check_tiled_matmul", "check_schedule_traffic", "check_best_tile", "check_time_prediction"]

ORDERS = ("mnk", "mkn", "nmk", "nkm", "kmn", "knm")


def _forbid() -> tuple:
    """npukit's answers to the lab's exercises, and this module's references."""
    from .. import gemm

    return (gemm, _walk, _traffic, _optimum, _tiled_reference)


#: What strips the tile watch off an array (a plain ndarray over the same numbers, whose products go
#: unrecorded): the exercise needs none of it.
_STRIPPING = (np.ndarray, np.ndarray.view, np.ndarray.tolist, np.ndarray.tobytes, np.lib.stride_tricks.as_strided)


# ---- exercise 1: the tiled product --------------------------------------------------------


class _Watched(np.ndarray):
    """An array that records every matrix product it takes part in, and keeps watching what is made from it.

    ``@``, ``np.matmul``, ``np.dot`` and ``.dot`` are recorded with their
    operands' shapes; ``np.einsum``, ``np.tensordot`` and other whole-product
    functions are recorded as refused. What NumPy computes from a watched
    array (a slice, a sum, ``np.pad``, ``.view(np.ndarray)``) is watched too.
    The methods call nothing of this module: they run inside the learner's code.
    """

    _log: list = []
    _refused: tuple = ()

    @staticmethod
    def _plain(x: Any) -> Any:
        return _NDARRAY.view(x, _NDARRAY) if isinstance(x, _Watched) else x

    @staticmethod
    def _wrap(x: Any) -> Any:
        if type(x) is _NDARRAY:
            return _NDARRAY.view(x, _Watched)
        if isinstance(x, (tuple, list)):
            return type(x)(_Watched._wrap(v) for v in x)
        return x

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        plain = tuple(_Watched._plain(x) for x in inputs)
        if ufunc is np.matmul and method == "__call__":
            _Watched._log.append(("product", np.shape(plain[0]), np.shape(plain[1])))
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_Watched._plain(x) for x in out)
        result = getattr(ufunc, method)(*plain, **kwargs)
        return (out[0] if len(out) == 1 else out) if out is not None else _Watched._wrap(result)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func in _Watched._refused:
            _Watched._log.append(("refused", f"np.{func.__name__}", None))
        elif func is np.dot:
            _Watched._log.append(("product", np.shape(args[0]), np.shape(args[1])))
        return _Watched._wrap(super().__array_function__(func, types, args, kwargs))

    def dot(self, b: Any, out: Any = None) -> Any:  # type: ignore[override]
        return np.dot(self, b, out=out)

    def view(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        return _Watched._wrap(_NDARRAY.view(self, *args, **kwargs))

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        return _Watched._wrap(_NDARRAY.__array__(self, *args, **kwargs))


_Watched._refused = (np.einsum, np.tensordot, np.inner, np.vdot, np.kron, np.linalg.multi_dot)

#: NumPy functions that turn any array into a plain ``ndarray``; while a check runs they keep watching.
_STRIPPERS = ("asarray", "array", "ascontiguousarray", "asfortranarray", "copy", "frombuffer")


def _watched_run(fn: Callable, A: np.ndarray, B: np.ndarray, tile: tuple) -> Any:
    """``fn(A, B, tile)`` on watched copies, then a check that every product was at most one tile."""
    real = {name: getattr(np, name) for name in _STRIPPERS}

    def keeping(name: str) -> Callable:
        def convert(a: Any, *args: Any, **kwargs: Any) -> Any:
            out = real[name](a, *args, **kwargs)
            return _Watched._wrap(out) if isinstance(a, _Watched) else out

        return convert

    _Watched._log.clear()
    wa, wb = (_NDARRAY.__new__(_Watched, x.shape, x.dtype) for x in (A, B))  # owns its data: no .base to strip
    np.copyto(wa, A)
    np.copyto(wb, B)
    for name in _STRIPPERS:
        setattr(np, name, keeping(name))
    try:
        got = fn(wa, wb, tile)
    finally:
        for name in _STRIPPERS:
            setattr(np, name, real[name])
    bm, bn, bk = tile
    for kind, sa, sb in _Watched._log:
        if kind == "refused":
            raise CheckFailed(f"tiled matmul: your function called {sa}, which multiplies whole matrices in one "
                              "call. Multiply one A-tile by one B-tile at a time, with @ (or np.matmul, np.dot).")
        rows_a, inner_a = (sa[-2] if len(sa) >= 2 else 1), sa[-1]
        inner_b, cols_b = (sb[-2], sb[-1]) if len(sb) >= 2 else (sb[0], 1)
        if rows_a > bm or inner_a > bk or inner_b > bk or cols_b > bn:
            raise CheckFailed(
                f"tiled matmul: with tile (bm, bn, bk) = {tile} every product must be of an A-tile of at most "
                f"{bm}×{bk} by a B-tile of at most {bk}×{bn}, but your function multiplied a {sa} by a {sb} array "
                f"(A is {A.shape}, B is {B.shape}). Multiply one tile at a time.")
    return np.asarray(got) if isinstance(got, _NDARRAY) else got


class _Product:
    """The expected product of one case, and the certain diagnoses of a wrong one."""

    def __init__(self, A: np.ndarray, B: np.ndarray, tile: tuple) -> None:
        self.A, self.B, self.tile, self.want = A, B, tile, np.matmul(A, B)

    def judge(self, got: Any) -> bool:
        A, B, tile, want = self.A, self.B, self.tile, self.want
        where = f"tiled matmul: for A of shape {A.shape}, B of shape {B.shape} and tile {tile}"
        if not isinstance(got, np.ndarray):
            raise CheckFailed(f"{where}, return a NumPy array, got {type(got).__name__}.")
        if got.shape != want.shape:
            raise CheckFailed(f"{where}, the result should have shape {want.shape}, got {got.shape}.")
        if got.dtype != A.dtype:
            raise CheckFailed(f"{where}, the result should keep the inputs' dtype {A.dtype}, got {got.dtype}.")
        wrong = ~np.isclose(got, want, rtol=1e-4, atol=1e-5)
        if not wrong.any():
            return True
        i, j = (int(v) for v in np.argwhere(wrong)[0])
        hint = _product_hint(A, B, tile, got)
        raise CheckFailed(f"{where}, C[{i}, {j}] is {got[i, j]:.6g}, expected {want[i, j]:.6g} "
                          f"({int(wrong.sum())} of {wrong.size} elements differ)." + (f"\n  Hint: {hint}" if hint else ""))


def _tiled_reference(A: np.ndarray, B: np.ndarray, tile: tuple, *, add: bool = True, ragged: bool = True) -> np.ndarray:
    """A tiled product with a known mistake: ``add=False`` overwrites (``=``), ``ragged=False`` drops edge tiles."""
    (M, K), N = A.shape, B.shape[1]
    bm, bn, bk = tile
    stop = (lambda n, b: n) if ragged else (lambda n, b: n - n % b)
    C = np.zeros((M, N), A.dtype)
    for i in range(0, stop(M, bm), bm):
        for j in range(0, stop(N, bn), bn):
            for p in range(0, stop(K, bk), bk):
                part = A[i : i + bm, p : p + bk] @ B[p : p + bk, j : j + bn]
                C[i : i + bm, j : j + bn] = C[i : i + bm, j : j + bn] + part if add else part
    return C


def _product_hint(A: np.ndarray, B: np.ndarray, tile: tuple, got: np.ndarray) -> str | None:
    close = lambda x: bool(np.allclose(got, x, rtol=1e-4, atol=1e-5))  # noqa: E731
    (M, K), N = A.shape, B.shape[1]
    bm, bn, bk = tile
    if close(_tiled_reference(A, B, tile, add=False)):
        return ("C holds only the last k-step's product: each step must add into the C-tile "
                "(C[...] += ...), not overwrite it (C[...] = ...).")
    if (M % bm or N % bn or K % bk) and close(_tiled_reference(A, B, tile, ragged=False)):
        return (f"the last, shorter tiles are missing (M % bm = {M % bm}, N % bn = {N % bn}, K % bk = {K % bk}): "
                "loop with range(0, M, bm) so that the ragged edge tiles are included.")
    return None


def check_tiled_matmul(fn: Callable[[np.ndarray, np.ndarray, tuple], np.ndarray]) -> None:
    """Check ``fn(A, B, tile)`` computes ``A @ B`` tile by tile, for any shapes and tiles.

    Fresh cases: 12 float64 and float32 products with every dimension 1–37,
    tiles 1–40 (so edge tiles are ragged, and some tiles are larger than the
    whole matrix), plus one 1×1×1 tile. Reference: ``numpy.matmul``. The
    result must keep the inputs' dtype, and every matrix product the function
    makes (``@``, ``np.matmul``, ``np.dot``, ``.dot``) on the arrays it is
    given, or on anything made from them, must be of an A-tile of at most
    ``bm×bk`` by a B-tile of at most ``bk×bn``; ``np.einsum``,
    ``np.tensordot`` and other whole-product functions are refused, and so is
    :mod:`npukit.gemm`. A wrong element is reported with its index; the
    hint names ``=`` for ``+=`` or the ragged edge only when the answer is
    exactly what that mistake gives.

    Examples
    --------
    >>> def overwrite(A, B, tile):   # = where the k-steps must add up
    ...     bm, bn, bk = tile
    ...     C = np.zeros((A.shape[0], B.shape[1]), A.dtype)
    ...     for i in range(0, A.shape[0], bm):
    ...         for j in range(0, B.shape[1], bn):
    ...             for p in range(0, A.shape[1], bk):
    ...                 C[i:i + bm, j:j + bn] = A[i:i + bm, p:p + bk] @ B[p:p + bk, j:j + bn]
    ...     return C
    >>> check_tiled_matmul(overwrite)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: tiled matmul: for A of shape (15, 18), B of shape (18, 19) and tile (24, 10, 5), C[0, 0] is ..., expected ... (285 of 285 elements differ).
      Hint: C holds only the last k-step's product: each step must add into the C-tile (C[...] += ...), not overwrite it (C[...] = ...).
    """
    _check.function(fn, "fn")
    rng = _rng(4101)
    cases = []
    for k in range(12):
        M, N, K = (int(v) for v in rng.integers(1, 38, size=3))
        tile = tuple(int(v) for v in rng.integers(1, 41, size=3))
        dtype = np.float64 if k % 2 == 0 else np.float32
        cases.append((rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype), tile))
    cases.append((rng.standard_normal((3, 5)), rng.standard_normal((5, 4)), (1, 1, 1)))

    def learner(A: np.ndarray, B: np.ndarray, tile: tuple) -> Any:
        return around(_watched_run, fn, A, B, tile)   # the watched arrays live where the learner's code runs

    check("tiled matmul", learner, cases, _Product, compare=lambda got, want: want.judge(got),
          forbid=_forbid() + _STRIPPING)


# ---- exercise 2: the traffic of a schedule -------------------------------------------------


def _walk(M: int, N: int, K: int, tile: tuple, order: str, itemsize: int, line: int, *, per_row: bool = True,
          read_back: bool = True) -> dict[str, int]:
    """Bytes each operand moves in a tiled GEMM, by walking its loop nest step by step.

    The model of chapter 4: one buffer slot per operand; a tile needed by two
    consecutive steps stays, any other is loaded; a C-tile is written out when
    it leaves the buffer (and at the end) and read back if it was written
    before. Matrices are row-major with every row starting on a line; a tile
    moves row by row and each row costs every ``line``-byte line it touches.
    ``per_row=False`` (lines per whole tile) and ``read_back=False`` are known
    mistakes, for hints.
    """
    size = {"m": M, "n": N, "k": K}
    step = dict(zip("mnk", tile))

    def nbytes(r: str, c: str, at: dict) -> int:  # the lines of the tile at (at[r], at[c]), in bytes
        rows, cols = min(step[r], size[r] - at[r]), min(step[c], size[c] - at[c])
        if not per_row:
            return -(-rows * cols * itemsize // line) * line
        first, end = at[c] * itemsize, (at[c] + cols) * itemsize
        return rows * (-(-end // line) - first // line) * line

    held: dict[str, Any] = {"A": None, "B": None, "C": None}
    moved = {"A": 0, "B": 0, "C read back": 0, "C written": 0}
    in_dram: set = set()
    loops = [range(0, size[d], step[d]) for d in order]
    for x, y, z in ((x, y, z) for x in loops[0] for y in loops[1] for z in loops[2]):
        at = dict(zip(order, (x, y, z)))
        for name, (r, c) in (("A", "mk"), ("B", "kn")):
            if held[name] != (at[r], at[c]):
                held[name] = (at[r], at[c])
                moved[name] += nbytes(r, c, at)
        if held["C"] != (at["m"], at["n"]):
            if held["C"] is not None:  # evict: write the partial sums out
                moved["C written"] += nbytes("m", "n", dict(zip("mn", held["C"])))
                in_dram.add(held["C"])
            if (at["m"], at["n"]) in in_dram and read_back:  # coming back: read them in
                moved["C read back"] += nbytes("m", "n", at)
            held["C"] = (at["m"], at["n"])
    moved["C written"] += nbytes("m", "n", dict(zip("mn", held["C"])))
    return moved


def _pair(moved: dict[str, int]) -> tuple[int, int]:
    return moved["A"] + moved["B"] + moved["C read back"], moved["C written"]


def _traffic_hint(case: tuple, got: Any) -> str | None:
    M, N, K, tile, order, itemsize, line = case
    if line > 1 and got == _pair(_walk(M, N, K, tile, order, itemsize, 1)):
        return "that counts bytes; a transfer moves whole lines, so count every line a tile row touches."
    if got == _pair(_walk(M, N, K, tile, order, itemsize, line, per_row=False)):
        return ("that counts the lines of each tile as one block; a tile is moved row by row, and each row "
                "costs every line it touches.")
    if got == _pair(_walk(M, N, K, tile, order, itemsize, line, read_back=False)):
        return "a C-tile that returns to the buffer is read back (its partial sums)."
    return None


def check_schedule_traffic(fn: Callable[[int, int, int, tuple, str, int, int], tuple[int, int]]) -> None:
    """Check ``fn(M, N, K, tile, order, itemsize, line) -> (reads, writes)`` in bytes, in whole lines.

    Fresh cases: 40 schedules with dimensions 1–24, tiles 1–26 (ragged edges
    and tiles that cover a whole dimension included), every loop order,
    itemsizes 1, 2 and 4 and lines of 1–64 bytes. Reference: a step-by-step
    walk of the loop nest that loads a tile whenever the previous step did not
    hold it and charges each tile row the lines it touches (the model of
    chapter 4; the same itemsize for A, B and C). A wrong answer shows the
    expected and the returned pair for that case, and a hint only when the
    answer is exactly what a known mistake gives (bytes for lines, lines per
    tile for lines per row, no read-back). :mod:`npukit.gemm` is refused.

    Examples
    --------
    >>> def once(M, N, K, tile, order, itemsize, line):   # every element loaded once, whatever the schedule
    ...     return (M * K + K * N) * itemsize, M * N * itemsize
    >>> check_schedule_traffic(once)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: schedule traffic: wrong answer for M=20, N=10, K=24, tile=(15, 14, 9), order='mnk', itemsize=1, line=16: reads should be 2048 bytes, got 720.
    """
    rng = _rng(4102)
    cases = []
    for k in range(40):
        M, N, K = (int(v) for v in rng.integers(1, 25, size=3))
        tile = tuple(int(v) for v in rng.integers(1, 27, size=3))
        cases.append((M, N, K, tile, ORDERS[k % 6], int(rng.choice([1, 2, 4])), int(rng.choice([1, 4, 8, 16, 64]))))

    def compare(got: Any, want: tuple) -> bool:
        case, expected = want
        try:
            got = tuple(int(v) for v in got)
        except (TypeError, ValueError):
            got = None
        if got == expected:
            return True
        M, N, K, tile, order, itemsize, line = case
        k = next((i for i in range(2) if got is None or len(got) != 2 or got[i] != expected[i]), 0)
        what = ("reads", "writes")[k]
        hint = _traffic_hint(case, got) if got is not None else None
        shown = "not a pair of integers" if got is None or len(got) != 2 else got[k]
        raise CheckFailed(
            f"schedule traffic: wrong answer for M={M}, N={N}, K={K}, tile={tile}, order={order!r}, "
            f"itemsize={itemsize}, line={line}: {what} should be {expected[k]} bytes, got {shown}."
            + (f"\n  Hint: {hint}" if hint else ""))

    check("schedule traffic", fn, cases, lambda *case: (case, _pair(_walk(*case))), compare=compare,
          forbid=_forbid())


# ---- exercise 3: the best tile ------------------------------------------------------------


def _traffic(M: int, N: int, K: int, tiles: np.ndarray, itemsize: int, line: int) -> np.ndarray:
    """Bytes moved by order ``mnk`` for each tile (a row of ``tiles``), by re-fetch factors and lines per row.

    In ``mnk``: ``r_A = ⌈N/bn⌉`` if there is more than one k-step, ``r_B =
    ⌈M/bm⌉`` if there is more than one n- or k-step, ``r_C = 1``. The lines of
    one pass over a matrix are summed over its tile columns for every width.
    """
    def lines(cols: int, widths: np.ndarray) -> np.ndarray:
        table = np.zeros(cols + 1, np.int64)
        for b in range(1, cols + 1):
            starts = np.arange(0, cols, b)
            ends = np.minimum(starts + b, cols)
            table[b] = np.sum((ends * itemsize - 1) // line - starts * itemsize // line + 1)
        return table[np.minimum(widths, cols)] * line

    bm, bn, bk = tiles.T
    cm, cn, ck = -(-M // bm), -(-N // bn), -(-K // bk)
    r_a = np.where(ck > 1, cn, 1)
    r_b = np.where((cn > 1) | (ck > 1), cm, 1)
    return r_a * M * lines(K, bk) + r_b * K * lines(N, bn) + M * lines(N, bn)


def _optimum(M: int, N: int, K: int, buffer_bytes: int, itemsize: int, line: int) -> tuple:
    """Every tile that fits, scored; and the fewest bytes any of them moves (an exhaustive search)."""
    tiles = np.array([(a, b, c) for a in range(1, M + 1) for b in range(1, N + 1) for c in range(1, K + 1)], np.int64)
    bm, bn, bk = tiles.T
    fits = (bm * bk + bk * bn + bm * bn) * itemsize <= buffer_bytes
    score = dict(zip(map(tuple, tiles[fits].tolist()), _traffic(M, N, K, tiles[fits], itemsize, line).tolist()))
    return (M, N, K, buffer_bytes, itemsize, line), score, min(score.values())


def _judge_tile(got: Any, want: tuple) -> bool:
    (M, N, K, buffer_bytes, itemsize, line), score, best = want
    where = (f"best tile: wrong answer for M={M}, N={N}, K={K}, buffer_bytes={buffer_bytes}, itemsize={itemsize}, "
             f"line={line}")
    try:
        tile = tuple(int(v) for v in got)
    except (TypeError, ValueError):
        raise CheckFailed(f"{where}: expected a tile (bm, bn, bk) of three integers, got {got!r}") from None
    if len(tile) != 3 or min(tile) < 1:
        raise CheckFailed(f"{where}: expected a tile (bm, bn, bk) of three positive integers, got {got!r}")
    clipped = tuple(min(t, d) for t, d in zip(tile, (M, N, K)))  # a tile larger than the matrix is the matrix
    bm, bn, bk = clipped
    need = (bm * bk + bk * bn + bm * bn) * itemsize
    if need > buffer_bytes:
        raise CheckFailed(f"{where}: your tile {tile} needs {need} bytes for one A-, B- and C-tile, more than "
                          f"the buffer's {buffer_bytes}.")
    if score[clipped] != best:
        raise CheckFailed(f"{where}: your tile {tile} fits but moves {score[clipped]} bytes; a tile that fits "
                          f"can move as few as {best}.")
    return True


def check_best_tile(fn: Callable[[int, int, int, int, int, int], tuple[int, int, int]]) -> None:
    """Check ``fn(M, N, K, buffer_bytes, itemsize, line) -> (bm, bn, bk)`` for loop order mnk.

    Fresh cases: 10 GEMMs with dimensions 2–10, itemsizes 1, 2 and 4, lines
    of 1–64 bytes and buffers from a 1×1×1 tile to the whole problem, drawn at
    random. The answer must fit the buffer (one A-, B- and C-tile of
    ``itemsize``-byte elements, each tile clipped to the matrix) and move as
    few bytes, counted in whole lines, as the best of an exhaustive search
    over every tile. Any of several equally good tiles is accepted; a wrong
    one is told how many bytes it moves and the fewest possible, never which
    tile that is. :mod:`npukit.gemm` is refused.

    Examples
    --------
    >>> def largest(M, N, K, buffer_bytes, itemsize, line):   # the biggest cube that fits, not the least traffic
    ...     side = max(s for s in range(1, max(M, N, K) + 1) if 3 * s * s * itemsize <= buffer_bytes)
    ...     return min(side, M), min(side, N), min(side, K)
    >>> check_best_tile(largest)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: best tile: wrong answer for M=2, N=9, K=5, buffer_bytes=11, itemsize=1, line=4: your tile (1, 1, 1) fits but moves 792 bytes; a tile that fits can move as few as 260.
    """
    rng = _rng(4103)
    cases = []
    for _ in range(10):
        M, N, K = (int(v) for v in rng.integers(2, 11, size=3))
        itemsize, line = int(rng.choice([1, 2, 4])), int(rng.choice([1, 4, 8, 16, 64]))
        whole = (M * K + K * N + M * N) * itemsize
        low = 3 * itemsize
        cases.append((M, N, K, int(np.exp(rng.uniform(np.log(low), np.log(whole + 1)))), itemsize, line))
    check("best tile", fn, cases, _optimum, compare=_judge_tile, forbid=_forbid())


# ---- predict, then measure --------------------------------------------------------------


#: A prediction passes within this fraction of the re-timed ratio (the fixed-cost-per-step model's error:
#: a ragged edge step does a little less arithmetic than a full one) …
FLOOR = 0.1
#: … or within the rounds' spread, up to this: below the factor of 1.37 by which (72/16)³ = 91 steps (or time
#: ∝ FLOPs, (72/96)³ × 216 = 91 steps) misses the 125 steps of 16³ tiles on 72³, and the 1.95 of ⌊72/16⌋³ = 64.
CEILING = 0.15


def _products(n: int, step_n: int, tile: tuple) -> tuple[dict[str, Callable[[], Any]], Callable[[], float]]:
    """``tiled_matmul`` on a ``step_n³`` and an ``n³`` float32 product with ``tile``: the two the check times,
    and their clock.

    The library's product as it was when this module was imported; the matrices are drawn here. BLAS runs
    on one thread while the check times (:func:`_timed`), so the clock of the calling thread sees all the work.
    """
    rng = np.random.default_rng(4)
    pairs = {m: (rng.standard_normal((m, m), dtype=np.float32), rng.standard_normal((m, m), dtype=np.float32))
             for m in (step_n, n)}
    return {f"{m}³": (lambda a=a, b=b: _library_tiled(a, b, tile)) for m, (a, b) in pairs.items()}, THREAD_TIME


def _timed(name: str, products: tuple, predicted: float) -> tuple:
    """The n³ product's time over the step_n³ one's, in interleaved rounds of this thread's CPU time, judged."""
    from threadpoolctl import threadpool_limits

    fns, clock = products
    base, other = tuple(fns)
    with threadpool_limits(1):
        c, judged = retimed(name, fns, {other: predicted}, floor=FLOOR, ceiling=CEILING, clock=clock,
                            rounds=21, min_time=3e-3)
    return c.verdict(other), judged[other]


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:   # a closure cell not yet assigned
        return False
    return True


def check_time_prediction(fn: Callable[[], float], measured: float, *, n: int, tile: tuple, t_step: float,
                          step_n: int) -> None:
    """Compare the learner's predicted time of a tiled product with the product timed again by this check.

    ``fn()`` returns the prediction in seconds, worked out before the
    measurement from the cost of one tile step (``t_step``, measured on the
    ``step_n³`` product with the same tile) and the number of steps of
    ``tile`` on an ``n³`` product. The check does not trust two timings taken
    in different cells: it times the ``n³`` and the ``step_n³`` products
    again itself, taking turns in interleaved rounds of CPU time
    (:mod:`npukit.teach.retime`), and compares in relative units: the
    prediction over ``t_step`` × the steps of the ``step_n³`` product,
    against the measured ratio of the two products' times, so whatever the
    machine did while ``t_step`` was measured cancels out. It passes within
    10 % (or the rounds' spread, up to 15 %; beyond that it measures again,
    and raises :class:`~npukit.teach.retime.TooNoisy` if it still cannot
    tell); otherwise the message explains the gap: a certain slip (a floor
    for a ceiling, fractional steps, milliseconds for seconds) is named.
    ``measured``, the lab's own timing, is only reported.
    :mod:`npukit.gemm` is refused while ``fn`` runs.

    Examples
    --------
    >>> check_time_prediction(lambda: 4**3 * 2e-6, 3e-4, n=72, tile=(16, 16, 16), t_step=2e-6, step_n=96)  # ⌊72/16⌋³
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: time prediction: you predicted 0.128 ms, 64 steps; ...
      Hint: that is 64 steps; with ragged edge tiles there are ⌈n/b⌉ per dimension.
    """
    name = "time prediction"
    if isinstance(measured, bool) or not isinstance(measured, (int, float)) or not 0 < measured < math.inf:
        raise TypeError(f"measured must be a time in seconds (a number > 0), got {measured!r}")
    if isinstance(step_n, bool) or not isinstance(step_n, int) or step_n < 1:
        raise TypeError(f"step_n must be the side of the product t_step was measured on (an int >= 1), got {step_n!r}")
    n = _check.integer(n, "n", minimum=1, maximum=4096)  # the n³ product is timed again: 4096³ is seconds
    _check.integer(step_n, "step_n", maximum=4096)
    tile = tuple(_check.integer(b, f"tile[{i}]", minimum=1) for i, b in enumerate(_check.sequence(tile, "tile", length=3)))
    t_step = _check.positive(t_step, "t_step")
    from ..timing import Comparison, Verdict   # the lab's measurement cell keeps its rounds too (pair, v72)

    def measurement(v: Any) -> bool:
        return (isinstance(v, float) and v == measured) or isinstance(v, (Comparison, Verdict))

    target, bound = fn, []   # a partial's function, and the values a partial or a closure carries
    while isinstance(target, functools.partial):
        bound += [*target.args, *target.keywords.values()]
        target = target.func
    cells = getattr(target, "__closure__", None) or ()
    bound += [c.cell_contents for c in cells if _filled(c)]
    bound += list(getattr(target, "__defaults__", None) or ())
    if any(measurement(v) for v in bound):
        raise CheckFailed(f"{name}: your function carries the measurement (in a default, a closure or a "
                          "partial); a prediction is worked out before measuring, from t_step and the number of "
                          "steps.")
    space = getattr(target, "__globals__", {})  # a prediction comes before the measurement: hide it while fn runs
    hidden = {k: v for k, v in list(space.items()) if measurement(v)}
    for k in hidden:
        del space[k]
    try:
        got = learner_call(name, fn, forbid=_forbid())
    except (NameError, CheckFailed) as exc:
        missing = re.search(r"name '(\w+)' is not defined", str(exc))
        if missing and missing.group(1) in hidden:
            raise CheckFailed(f"{name}: your function reads the measurement ({missing.group(1)}); a prediction "
                              "is worked out before measuring, from t_step and the number of steps.") from None
        raise
    finally:
        space.update(hidden)
    try:
        guess = float(got)
    except (TypeError, ValueError):
        raise CheckFailed(f"{name}: return a time in seconds, such as 0.002, got {got!r}") from None
    if not (math.isfinite(guess) and guess > 0):
        raise CheckFailed(f"{name}: return a time in seconds, a number > 0, got {guess!r}")
    steps = math.prod(-(-n // b) for b in tile)
    ref_steps = math.prod(-(-step_n // b) for b in tile)
    # the prediction in the check's units: the n³ product's time over the step_n³ one's
    v, j = _timed(name, _products(n, step_n, tile), guess / (t_step * ref_steps))
    in_steps = v.ratio * ref_steps
    seen = (f"timed again beside the {step_n}³ product ({v.rounds} interleaved rounds of CPU time), the {n}³ product "
            f"takes as long as {in_steps:.0f} of its steps ({v.low * ref_steps:.0f} to {v.high * ref_steps:.0f}), "
            f"{in_steps * t_step * 1e3:.3g} ms at your t_step (the lab's measurement: {measured * 1e3:.3g} ms)")
    if j.passed:
        print(f"✓ {name}: you predicted {guess * 1e3:.3g} ms, {guess / t_step:.0f} steps; {seen}.")
        return
    said = guess / t_step
    near = lambda k: abs(said / k - 1) < 0.02  # noqa: E731
    floor = math.prod(max(n // b, 1) for b in tile)
    if steps != floor and near(floor):
        hint = f"that is {floor} steps; with ragged edge tiles there are ⌈n/b⌉ per dimension."
    elif near(math.prod(n / b for b in tile)) or near(ref_steps * (n / step_n) ** 3):
        hint = (f"that is {said:.3g} steps: " + ("(n/b)³ with fractions" if near(math.prod(n / b for b in tile))
                                                 else "") +
                (" and " if near(math.prod(n / b for b in tile)) and near(ref_steps * (n / step_n) ** 3) else "") +
                ("the time scaled with the FLOPs, (n/step_n)³ of the measured product's"
                 if near(ref_steps * (n / step_n) ** 3) else "") +
                ". A loop makes whole steps, ⌈n/b⌉ per dimension, and on a CPU each step, a ragged edge one too, "
                "costs about the same fixed time: count the steps.")
    elif abs(guess / 1e3 / (in_steps * t_step) - 1) <= CEILING:
        hint = "that looks like milliseconds; return seconds."
    else:
        hint = (f"the {n}³ product took as long as {in_steps:.0f} steps of the {step_n}³ one for its {steps} steps "
                f"of tile {tile}: a step's cost is mostly fixed, and the arithmetic of a small tile adds little.")
    raise CheckFailed(f"{name}: you predicted {guess * 1e3:.3g} ms, {said:.0f} steps; {seen}: more than "
                      f"{j.tolerance:.0%} apart.\n  Hint: {hint}")
