"""Checkers for lab 4, "GEMM and tiling" (labs/04_gemm.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and compares
it with an independent reference; see :mod:`npukit.teach.core`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .core import _rng, check


def _without(name: str, run: Callable[[], Any]) -> Any:
    """Run ``run()`` while ``npukit.gemm.<name>`` refuses to be called.

    The exercise is to write that function; a learner's answer that merely
    calls the library's version would teach nothing, so during the check the
    module attribute is swapped for a stub that fails with a clear message.
    """
    from .. import gemm

    real = getattr(gemm, name)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"this exercise asks you to write {name} yourself; do not call npukit.gemm.{name}")

    setattr(gemm, name, refuse)
    try:
        return run()
    finally:
        setattr(gemm, name, real)


class _Watched(np.ndarray):
    """An array that logs the shapes of every matrix product it takes part in.

    Covers ``@``, ``np.matmul``, ``np.dot`` and ``.dot``; the checker uses the
    log to make sure that no product is larger than one tile.
    """

    log: list = []

    @staticmethod
    def _plain(xs: Any) -> list:
        return [np.asarray(x) if isinstance(x, _Watched) else x for x in xs]

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        inputs = tuple(self._plain(inputs))
        if ufunc is np.matmul and method == "__call__":
            _Watched.log.append((np.shape(inputs[0]), np.shape(inputs[1])))
        if "out" in kwargs:
            kwargs["out"] = tuple(self._plain(kwargs["out"]))
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is np.dot:
            _Watched.log.append((np.shape(args[0]), np.shape(args[1])))
        return super().__array_function__(func, types, args, kwargs)

    def dot(self, other: Any, out: Any = None) -> Any:  # type: ignore[override]
        return np.dot(self, other, out=out)


def check_tiled_matmul(fn: Callable[[np.ndarray, np.ndarray, tuple], np.ndarray]) -> None:
    """Check ``fn(A, B, tile)`` computes ``A @ B`` tile by tile, for any shapes and tiles.

    Fresh cases: 12 float64 and float32 products with every dimension 1–37,
    tiles 1–40 (so edge tiles are ragged, and some tiles are larger than the
    whole matrix), plus one 1×1×1 tile. Reference: ``numpy.matmul``. The
    result must keep the inputs' dtype, and every matrix product the function
    makes (``@``, ``np.matmul``, ``np.dot``) must be of an A-tile of at most
    ``bm×bk`` by a B-tile of at most ``bk×bn``: one call ``A @ B`` on the
    whole matrices is not a tiled product, and calling
    ``npukit.gemm.tiled_matmul`` is refused while the check runs.
    Prints one line on success; raises ``AssertionError`` naming the input
    otherwise (this holds for every chapter-4 checker).

    Examples
    --------
    >>> from npukit.gemm import tiled_matmul
    >>> check_tiled_matmul(tiled_matmul)
    ✓ tiled matmul: 13 fresh cases agree with the reference.
    """
    rng = _rng(4101)
    cases = []
    for k in range(12):
        M, N, K = (int(v) for v in rng.integers(1, 38, size=3))
        tile = tuple(int(v) for v in rng.integers(1, 41, size=3))
        dtype = np.float64 if k % 2 == 0 else np.float32
        cases.append((rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype), tile))
    cases.append((rng.standard_normal((3, 5)), rng.standard_normal((5, 4)), (1, 1, 1)))

    def learner(A: np.ndarray, B: np.ndarray, tile: tuple) -> Any:
        bm, bn, bk = tile
        _Watched.log = []
        got = fn(A.view(_Watched), B.view(_Watched), tile)
        for sa, sb in _Watched.log:
            if len(sa) == 2 and len(sb) == 2 and (sa[0] > bm or sa[1] > bk or sb[1] > bn):
                raise AssertionError(
                    f"tiled matmul: with tile (bm, bn, bk) = {tile} every product must be of an A-tile of at "
                    f"most {bm}×{bk} by a B-tile of at most {bk}×{bn}, but your function multiplied a {sa} by "
                    f"a {sb} array (A is {A.shape}, B is {B.shape}). Multiply one tile at a time."
                )
        if isinstance(got, np.ndarray):
            got = np.asarray(got)
            if got.dtype != A.dtype:
                raise AssertionError(f"tiled matmul: the result should keep the inputs' dtype {A.dtype}, got {got.dtype}")
            if got.shape == (A.shape[0], B.shape[1]):
                want = A @ B
                bad = np.argwhere(~np.isclose(got, want, rtol=1e-4, atol=1e-5))
                if len(bad):
                    i, j = (int(v) for v in bad[0])
                    (M, K), N = A.shape, B.shape[1]
                    hints = []
                    if i >= M // bm * bm:
                        hints.append(f"row {i} is in the last, ragged row-tile (rows {M // bm * bm}–{M - 1}; bm = {bm})")
                    if j >= N // bn * bn:
                        hints.append(f"column {j} is in the last, ragged column-tile (columns {N // bn * bn}–{N - 1}; bn = {bn})")
                    hint = "; ".join(hints) or f"check the sum over k (K = {K}, bk = {bk})"
                    raise AssertionError(
                        f"tiled matmul: wrong answer for A of shape {A.shape}, B of shape {B.shape}, tile {tile}: "
                        f"C[{i}, {j}] is {got[i, j]:.4g}, expected {want[i, j]:.4g}. Hint: {hint}."
                    )
        return got

    def reference(A: np.ndarray, B: np.ndarray, tile: tuple) -> np.ndarray:
        return np.matmul(A, B)

    _without("tiled_matmul", lambda: check("tiled matmul", learner, cases, reference, rtol=1e-4, atol=1e-5))


def _walk(M: int, N: int, K: int, tile: tuple, order: str, itemsize: int) -> dict[str, int]:
    """Bytes each operand moves in a tiled GEMM, by walking its loop nest step by step.

    The model of chapter 4: one buffer slot per operand; a tile needed by two
    consecutive steps stays, any other is loaded; a C-tile is written out when
    it leaves the buffer (and at the end) and read back only if it was written
    before. Edge tiles move only their real bytes. Returns the bytes of A and
    B read, of C read back and of C written.
    """
    size = {"m": M, "n": N, "k": K}
    step = dict(zip("mnk", tile))

    def nbytes(r: str, c: str, at: dict) -> int:  # the real bytes of the tile at (at[r], at[c])
        return min(step[r], size[r] - at[r]) * min(step[c], size[c] - at[c]) * itemsize

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
                old = dict(zip("mn", held["C"]))
                moved["C written"] += nbytes("m", "n", old)
                in_dram.add(held["C"])
            if (at["m"], at["n"]) in in_dram:  # coming back: read them in
                moved["C read back"] += nbytes("m", "n", at)
            held["C"] = (at["m"], at["n"])
    moved["C written"] += nbytes("m", "n", dict(zip("mn", held["C"])))
    return moved


def _schedule_bytes(M: int, N: int, K: int, tile: tuple, order: str, itemsize: int) -> tuple[int, int]:
    """(reads, writes) of a tiled GEMM, from :func:`_walk`."""
    moved = _walk(M, N, K, tile, order, itemsize)
    return moved["A"] + moved["B"] + moved["C read back"], moved["C written"]


def check_schedule_traffic(fn: Callable[[int, int, int, tuple, str, int], tuple[int, int]]) -> None:
    """Check ``fn(M, N, K, tile, order, itemsize) -> (reads, writes)`` in bytes.

    Fresh cases: 40 schedules with dimensions 1–24, tiles 1–26 (ragged edges
    and tiles that cover a whole dimension included), every loop order and
    itemsizes 1, 2 and 4. Reference: a step-by-step walk of the loop nest
    that loads a tile whenever the previous step did not hold it (the model
    of chapter 4; the same itemsize for A, B and C). A wrong answer is
    reported with the expected bytes of each operand. Calling
    ``npukit.gemm.traffic`` is refused while the check runs.

    Examples
    --------
    >>> from npukit.gemm import traffic
    >>> def by_model(M, N, K, tile, order, itemsize):
    ...     t = traffic(M, N, K, tile, order, itemsize)
    ...     return t.reads, t.writes
    >>> check_schedule_traffic(by_model)
    ✓ schedule traffic: 40 fresh cases agree with the reference.
    """
    rng = _rng(4102)
    orders = ("mnk", "mkn", "nmk", "nkm", "kmn", "knm")
    cases = []
    for k in range(40):
        M, N, K = (int(v) for v in rng.integers(1, 25, size=3))
        tile = tuple(int(v) for v in rng.integers(1, 27, size=3))
        cases.append((M, N, K, tile, orders[k % 6], int(rng.choice([1, 2, 4]))))

    def learner(*case: Any) -> Any:
        got = fn(*case)
        got = tuple(int(v) for v in got) if isinstance(got, (tuple, list)) else got
        want = _schedule_bytes(*case)
        if got != want:
            moved = _walk(*case)
            M, N, K, tile, order, itemsize = case
            raise AssertionError(
                f"schedule traffic: wrong answer for M={M}, N={N}, K={K}, tile={tile}, order={order!r}, "
                f"itemsize={itemsize}.\n  expected: {want} = (A {moved['A']} + B {moved['B']} + C read back "
                f"{moved['C read back']}, C written {moved['C written']})\n  got:      {got}\n"
                "  Things to check: edge tiles move only their real elements; a loop that runs once (tile >= size) "
                "evicts nothing; C is written every time it leaves the buffer, including at the end, and read "
                "back every time it returns."
            )
        return got

    _without("traffic", lambda: check("schedule traffic", learner, cases, _schedule_bytes))


def _needs(M: int, N: int, K: int, tile: tuple, itemsize: int) -> int:
    """Buffer bytes for one A-, B- and C-tile, each clipped to the matrix."""
    bm, bn, bk = min(tile[0], M), min(tile[1], N), min(tile[2], K)
    return (bm * bk + bk * bn + bm * bn) * itemsize


class _Optimal:
    """The answer to "best tile": every tile that fits and moves the fewest bytes."""

    def __init__(self, M: int, N: int, K: int, buffer_bytes: int, itemsize: int) -> None:
        self.case = (M, N, K, buffer_bytes, itemsize)
        self.scored = {}
        for tile in ((a, b, c) for a in range(1, M + 1) for b in range(1, N + 1) for c in range(1, K + 1)):
            if _needs(M, N, K, tile, itemsize) <= buffer_bytes:
                self.scored[tile] = sum(_schedule_bytes(M, N, K, tile, "mnk", itemsize))
        self.best = min(self.scored.values())

    def judge(self, got: Any) -> bool:
        """True if ``got`` is a best tile; otherwise raise saying what is wrong with it."""
        M, N, K, buffer_bytes, itemsize = self.case
        where = f"best tile: wrong answer for M={M}, N={N}, K={K}, buffer_bytes={buffer_bytes}, itemsize={itemsize}"
        example = min(t for t, v in self.scored.items() if v == self.best)
        try:
            tile = tuple(int(v) for v in got)
        except (TypeError, ValueError):
            raise AssertionError(f"{where}: expected a tile (bm, bn, bk) of three integers, got {got!r}") from None
        if len(tile) != 3 or min(tile) < 1:
            raise AssertionError(f"{where}: expected a tile (bm, bn, bk) of three positive integers, got {got!r}")
        clipped = tuple(min(t, d) for t, d in zip(tile, (M, N, K)))  # a tile larger than the matrix is the matrix
        need = _needs(M, N, K, tile, itemsize)
        if need > buffer_bytes:
            raise AssertionError(
                f"{where}: your tile {tile} needs {need} bytes for one A-, B- and C-tile, more than the buffer "
                f"(a best tile is {example}, moving {self.best} bytes)"
            )
        if self.scored[clipped] != self.best:
            raise AssertionError(
                f"{where}: your tile {tile} fits but moves {self.scored[clipped]} bytes; the fewest possible is "
                f"{self.best} bytes, e.g. with tile {example}"
            )
        return True


def check_best_tile(fn: Callable[[int, int, int, int, int], tuple[int, int, int]]) -> None:
    """Check ``fn(M, N, K, buffer_bytes, itemsize) -> (bm, bn, bk)`` for loop order mnk.

    Fresh cases: 8 GEMMs with dimensions 2–9 and buffers from just above a
    1×1×1 tile to about the whole problem. The answer must fit the buffer
    (one A-, B- and C-tile of ``itemsize``-byte elements, each tile clipped
    to the matrix) and move as few bytes as the best of an exhaustive search
    over every tile, with the traffic counted by walking the loop nest. Any
    of several equally good tiles is accepted. Calling
    ``npukit.gemm.best_tile`` is refused while the check runs.

    Examples
    --------
    >>> from npukit.gemm import best_tile
    >>> check_best_tile(best_tile)
    ✓ best tile: 8 fresh cases agree with the reference.
    """
    rng = _rng(4103)
    cases = []
    for _ in range(8):
        M, N, K = (int(v) for v in rng.integers(2, 10, size=3))
        itemsize = int(rng.choice([1, 4]))
        whole = (M * K + K * N + M * N) * itemsize
        cases.append((M, N, K, int(rng.integers(3 * itemsize, whole + 1)), itemsize))
    _without("best_tile", lambda: check("best tile", fn, cases, _Optimal, compare=lambda got, want: want.judge(got)))
