"""How fast a GEMM really runs on this machine, and where the time goes.

Chapter 4's model (:mod:`npukit.gemm`) counts the bytes a tile schedule moves.
This module measures what the machine does with the same product: a ladder
of GFLOP/s from Python loops to BLAS (:func:`ladder`), where the time of a
tiled product goes, tile size by tile size, next to the model that predicts it
(:func:`breakdown`), and what locality alone buys in a blocked against a naive
transpose (:func:`transposes`). Every measurement warms up, repeats and keeps
the least disturbed run; every number it gives is a time on this machine, so
the chapter quotes it with the machine's name.

See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from numbers import Real
from typing import Any, Callable, Sequence

import numpy as np

from . import _check, measure
from .gemm import _tile, tiled_matmul, traffic

__all__ = ["Rung", "ladder", "Timings", "Breakdown", "breakdown", "Transposes", "transposes"]


#: Environment variables that cap the threads of the common BLAS libraries.
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def _positives(values: Any, name: str, *, default: list[int] | None = None) -> list[int]:
    """``values`` (or ``default`` when None) as a non-empty list of integers ≥ 1."""
    values = default if values is None and default is not None else _check.sequence(values, name, min_length=1)
    return [_check.integer(v, f"{name}[{i}]", minimum=1) for i, v in enumerate(values)]


def _timing(repeat: Any, warmup: Any, seed: Any) -> tuple[int, int, np.random.Generator]:
    repeat = _check.integer(repeat, "repeat", minimum=1, maximum=1_000)
    warmup = _check.integer(warmup, "warmup", minimum=0, maximum=1_000)
    return repeat, warmup, np.random.default_rng(_check.integer(seed, "seed", minimum=0))


def _fastest(fn: Callable[[], Any], repeat: int, number: int = 1) -> float:
    """Seconds per call of ``fn``: the fastest of ``repeat`` timings of ``number`` calls, after one warm-up.

    The fastest run is the least disturbed one on a machine shared with other work.
    """
    fn()
    return min(measure.timeit(fn, repeat=1, warmup=0, number=number) for _ in range(repeat))


def _seconds(values: Any, name: str, *, zero: bool = False) -> tuple[float, ...]:
    """``values`` as a tuple of finite times > 0 (or ≥ 0 with ``zero``)."""
    out = []
    for i, v in enumerate(_check.sequence(values, name)):
        out.append(0.0 if zero and isinstance(v, Real) and not isinstance(v, bool) and v == 0
                   else _check.positive(v, f"{name}[{i}]"))
    return tuple(out)


@dataclass(frozen=True)
class Rung:
    """One measured way of computing ``A @ B`` at ``n×n×n`` (see :func:`ladder`).

    ``seconds``: median time of one product; ``gflops = 2·n³/seconds/1e9``;
    ``error``: largest difference from ``numpy.matmul``, relative to the
    product's largest entry; ``ok``: within the dtype's tolerance. See
    chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
    """

    name: str
    n: int
    seconds: float
    gflops: float
    error: float
    ok: bool

    def __post_init__(self) -> None:
        _check.text(self.name, "name")
        _check.integer(self.n, "n", minimum=1)
        for field in ("seconds", "gflops"):
            object.__setattr__(self, field, _check.positive(getattr(self, field), field))
        if isinstance(self.error, bool) or not isinstance(self.error, Real):
            raise TypeError(f"error must be a real number, got {type(self.error).__name__}")
        if self.error < 0:  # NaN passes: a product with NaN in it has no finite error
            raise ValueError(f"error must be >= 0 (or NaN), got {self.error!r}")
        _check.boolean(self.ok, "ok")


def _python_matmul(a: list, b: list) -> list:
    """C = A·B with three Python loops over lists (the bottom rung)."""
    n, k, m = len(a), len(b), len(b[0])
    c = [[0.0] * m for _ in range(n)]
    for i in range(n):
        ai, ci = a[i], c[i]
        for j in range(m):
            s = 0.0
            for p in range(k):
                s += ai[p] * b[p][j]
            ci[j] = s
    return c


def _row_matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """C = A·B with one vector operation per (i, k): C[i, :] += A[i, k]·B[k, :]."""
    C = np.zeros((A.shape[0], B.shape[1]), dtype=A.dtype)
    for i in range(A.shape[0]):
        ci, ai = C[i], A[i]
        for p in range(A.shape[1]):
            ci += ai[p] * B[p]
    return C


def _rung(name: str, n: int, fn: Callable[[], Any], want: np.ndarray, repeat: int, warmup: int) -> Rung:
    """Check ``fn()`` against ``want`` (relative to the largest entry), then time it."""
    got = np.asarray(fn(), dtype=want.dtype)
    err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
    tol = 1e-4 if want.dtype == np.float32 else 1e-10
    secs = measure.timeit(fn, repeat=repeat, warmup=warmup)
    return Rung(name, n, secs, 2.0 * n**3 / secs / 1e9, err, bool(err <= tol))


def ladder(n: int = 1024, *, python_n: int = 48, row_n: int = 128, small_tile: Sequence[int] = (32, 32, 32),
           good_tile: Sequence[int] = (256, 256, 256), dtype: Any = "float32", repeat: int = 5, warmup: int = 1,
           seed: int = 0) -> list[Rung]:
    """Measure five ways of computing a square GEMM, slowest first.

    ``python`` (three Python loops over lists, at ``python_n``),
    ``row-vectorised`` (one NumPy vector update per ``(i, k)``, at
    ``row_n``), ``tiled, small tile`` and ``tiled, good tile``
    (:func:`npukit.gemm.tiled_matmul`, at ``n``) and ``numpy.matmul`` (BLAS,
    at ``n``). Each result is checked against ``numpy.matmul`` and timed with
    :func:`npukit.measure.timeit`; GFLOP/s (``2·n³/t``) makes sizes
    comparable. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    n, python_n, row_n : int
        Sizes of the fast rungs, the pure-Python rung and the row-vectorised rung.
    small_tile, good_tile : tuple of int
        Tiles of the two tiled rungs.
    dtype : dtype-like
        ``"float32"`` or ``"float64"``.
    repeat, warmup, seed : int
        Timed repetitions (≥ 1; at most 3 for the slow rungs), warm-up calls
        (≥ 0; at most 1 for the slow rungs), seed of the inputs (≥ 0).

    Returns
    -------
    list of Rung
        In ladder order.

    Raises
    ------
    TypeError, ValueError
        If a size, tile, count or seed is not an integer in range, or
        ``dtype`` is not float32 or float64.

    Examples
    --------
    >>> rungs = ladder(32, python_n=8, row_n=8, small_tile=(8, 8, 8), good_tile=(16, 16, 32), repeat=1, warmup=0)
    >>> [r.name for r in rungs], all(r.ok for r in rungs)
    (['python', 'row-vectorised', 'tiled, small tile', 'tiled, good tile', 'numpy.matmul'], True)
    """
    n, python_n, row_n = (_check.integer(v, k, minimum=1, maximum=top)  # python_n³ and row_n² Python steps
                          for v, k, top in ((n, "n", 8192), (python_n, "python_n", 256), (row_n, "row_n", 512)))
    small_tile, good_tile = _tile(small_tile, "small_tile"), _tile(good_tile, "good_tile")
    dt = _check.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    repeat, warmup, rng = _timing(repeat, warmup, seed)

    def inputs(size: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.standard_normal((size, size)).astype(dt), rng.standard_normal((size, size)).astype(dt)

    slow = dict(repeat=min(repeat, 3), warmup=min(warmup, 1))  # the two slow rungs
    A, B = inputs(python_n)
    a, b = A.tolist(), B.tolist()
    rungs = [_rung("python", python_n, lambda: _python_matmul(a, b), A @ B, **slow)]
    A1, B1 = inputs(row_n)
    rungs.append(_rung("row-vectorised", row_n, lambda: _row_matmul(A1, B1), A1 @ B1, **slow))
    A2, B2 = inputs(n)
    want = A2 @ B2
    rungs.append(_rung("tiled, small tile", n, lambda: tiled_matmul(A2, B2, small_tile), want, repeat, warmup))
    rungs.append(_rung("tiled, good tile", n, lambda: tiled_matmul(A2, B2, good_tile), want, repeat, warmup))
    rungs.append(_rung("numpy.matmul", n, lambda: np.matmul(A2, B2), want, repeat, warmup))
    return rungs


@dataclass(frozen=True)
class Timings:
    """What :func:`breakdown` measured with one setting of BLAS's threads.

    Once per setting: ``numpy``, the seconds of one ``numpy.matmul`` of the
    whole product; ``step``, the seconds of one step of
    :func:`npukit.gemm.tiled_matmul` with 1×1×1 tiles (the loop and two calls
    into NumPy, with nothing to compute); ``bandwidth``, the bytes per second
    of copying an operand-sized array. Per tile side, in seconds: ``tiled``
    (the tiled product), ``python`` (its loop with the products taken out),
    ``accumulate`` (its in-place additions alone), ``calls`` (its BLAS calls
    alone, back to back, on its tiles) and ``kernel`` (one call of the tile's
    size on the same tile again and again, so always from cache). See chapter
    4, "GEMM and tiling" (chapters/04_gemm.md).
    """

    threads: str
    numpy: float
    step: float
    bandwidth: float
    tiled: tuple[float, ...]
    python: tuple[float, ...]
    accumulate: tuple[float, ...]
    calls: tuple[float, ...]
    kernel: tuple[float, ...]

    def __post_init__(self) -> None:
        _check.one_of(self.threads, "threads", ("all", "one"))
        for field in ("numpy", "step", "bandwidth"):
            object.__setattr__(self, field, _check.positive(getattr(self, field), field))
        per_side = ("tiled", "python", "accumulate", "calls", "kernel")
        for field in per_side:
            object.__setattr__(self, field, _seconds(getattr(self, field), field, zero=field == "accumulate"))
        if len({len(getattr(self, f)) for f in per_side}) != 1 or not self.tiled:
            raise ValueError(f"{', '.join(per_side)} must have one time per tile side, and at least one")


@dataclass(frozen=True)
class Breakdown:
    """Where the time of an ``n³`` float32 :func:`npukit.gemm.tiled_matmul` goes, per cubic tile side.

    ``all``: measured with BLAS's threads as they are; ``one``: the same
    measurements with BLAS held to one thread. :meth:`components` splits each
    measured time, :meth:`model` predicts it. See chapter 4, "GEMM and
    tiling" (chapters/04_gemm.md).
    """

    n: int
    sides: tuple[int, ...]
    all: Timings
    one: Timings

    def __post_init__(self) -> None:
        _check.integer(self.n, "n", minimum=1)
        object.__setattr__(self, "sides", tuple(_positives(self.sides, "sides")))
        if any(b >= c for b, c in zip(self.sides, self.sides[1:])):
            raise ValueError(f"sides must be increasing, got {self.sides}")
        for field in ("all", "one"):
            t = _check.instance(getattr(self, field), field, Timings)
            if len(t.tiled) != len(self.sides):
                raise ValueError(f"{field} must have one time per side ({len(self.sides)}), got {len(t.tiled)}")

    def _pick(self, threads: str) -> Timings:
        return self.all if _check.one_of(threads, "threads", ("all", "one")) == "all" else self.one

    def steps(self) -> np.ndarray:
        """Tile steps of each side: ``⌈n/b⌉³``."""
        return (-(-self.n // np.array(self.sides))) ** 3

    def components(self, threads: str = "all") -> dict[str, np.ndarray]:
        """Each side's measured time, split into parts that add up to it exactly (seconds).

        With ``s`` the whole product's speed-up from BLAS's threads (1 on one
        thread) and ``steps`` the tile steps:

        * ``arithmetic``: ``numpy.matmul``'s time for the whole product, its
          FLOPs at BLAS's best rate;
        * ``small calls``: ``steps`` tile-sized calls on a tile in cache, on
          one thread, minus the whole product's time on one thread, over
          ``s``: entering BLAS, packing, and BLAS's lower rate on small blocks;
        * ``threading``: what those calls lose with BLAS's threads beyond the
          ``s``-fold speed-up (zero on one thread);
        * ``tile traffic``: the calls on the product's own tiles (fetched from
          memory) minus the same calls on a tile in cache;
        * ``accumulation`` and ``Python loop``: measured alone;
        * ``rest``: the measured time minus the loop, the additions and the calls.
        """
        t, one = self._pick(threads), self.one
        s = one.numpy / t.numpy if threads == "all" else 1.0
        steps = self.steps()
        hot, hot1 = steps * np.array(t.kernel), steps * np.array(one.kernel)
        calls, tiled = np.array(t.calls), np.array(t.tiled)
        python, acc = np.array(t.python), np.array(t.accumulate)
        return {"arithmetic": np.full(len(self.sides), t.numpy), "small calls": (hot1 - one.numpy) / s,
                "threading": hot - hot1 / s, "tile traffic": calls - hot, "accumulation": acc,
                "Python loop": python, "rest": tiled - python - acc - calls}

    def moved(self) -> np.ndarray:
        """Bytes each side's tiled product moves: its tiles, and its C-tile at every k-step.

        Every step loads an A- and a B-tile (order ``mnk``'s traffic,
        :func:`npukit.gemm.traffic` with ``line=1``), and every k-step reads
        and writes its C-tile (``np.add`` into ``C``), the first writes it only.
        """
        n = self.n
        counts = -(-n // np.array(self.sides))
        ab = np.array([(lambda x: x.a_read + x.b_read)(traffic(n, n, n, (b, b, b), "mnk", 4, line=1)) for b in self.sides])
        return ab + (2 * counts - 1) * n * n * 4

    def model(self, threads: str = "all") -> np.ndarray:
        """The model's time for each side (seconds): steps, bytes and FLOPs, each at a measured rate.

        ``steps·step + moved/bandwidth + numpy``: a fixed cost per tile step
        (measured with 1×1×1 tiles), the bytes of :meth:`moved` at the rate of
        an operand-sized copy, and the FLOPs at the whole product's rate. No
        parameter is fitted to the tiled products' times.
        """
        t = self._pick(threads)
        return self.steps() * t.step + self.moved() / t.bandwidth + t.numpy


def _measure_tiling(n: int, sides: Sequence[int], repeat: int, seed: int) -> dict:
    """Every time :class:`Timings` holds, measured in this process (BLAS's threads as they are)."""
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    C = np.empty((n, n), np.float32)
    fastest = lambda f, **kw: _fastest(f, repeat, **kw)  # noqa: E731
    small = np.ones((16, 16), np.float32)
    many = max(repeat, 9)  # the whole product is quick: more tries to catch a quiet moment
    got: dict = {"numpy": _fastest(lambda: np.matmul(A, B, out=C), many),
                 "step": fastest(lambda: tiled_matmul(small, small, (1, 1, 1))) / 16**3,
                 "bandwidth": 2 * A.nbytes / fastest(lambda: np.copyto(C, A))}
    for key in ("tiled", "python", "accumulate", "calls", "kernel"):
        got[key] = []
    for b in sides:
        cuts = [slice(s, s + b) for s in range(0, n, b)]
        steps = list(itertools.product(cuts, cuts, cuts))
        scratch = np.empty((min(b, n), min(b, n)), np.float32)
        pairs = [(A[i, p], B[p, j]) for i, j, p in steps]

        def loop() -> None:  # tiled_matmul's loop, with the products taken out
            for i, j, p in steps:
                c = C[i, j]
                A[i, p], B[p, j], p.start == 0, scratch[: c.shape[0], : c.shape[1]]

        def calls() -> None:
            for a, bb in pairs:
                np.matmul(a, bb, out=scratch[: a.shape[0], : bb.shape[1]])

        c, (a0, b0) = C[:b, :b], pairs[0]
        passes = len(cuts) ** 2 * (len(cuts) - 1)
        got["tiled"].append(fastest(lambda: tiled_matmul(A, B, (b, b, b))))
        got["python"].append(fastest(loop))
        got["calls"].append(fastest(calls))
        got["kernel"].append(_fastest(lambda: np.matmul(a0, b0, out=scratch), many, number=max(1, 2**22 // b**3)))
        got["accumulate"].append(passes * fastest(lambda: np.add(c, scratch, out=c), number=20) if passes else 0.0)
    return got


def _one_thread(n: int, sides: Sequence[int], repeat: int, seed: int) -> dict:
    """:func:`_measure_tiling` in a fresh Python whose BLAS may use one thread only."""
    env = dict(os.environ, **{v: "1" for v in _THREAD_VARS})
    code = ("import json; from npukit import blas as g; "
            f"print(json.dumps(g._measure_tiling({n}, {list(sides)}, {repeat}, {seed})))")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    if done.returncode:
        raise RuntimeError(f"the one-thread measurement failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def breakdown(n: int = 1024, sides: Sequence[int] = (32, 64, 128, 256, 512), *, repeat: int = 5,
              seed: int = 0) -> Breakdown:
    """Measure where the time of ``tiled_matmul`` on an ``n³`` float32 product goes, for cubic tiles.

    For each side ``b`` it times, separately: the tiled product; its loop
    with the products taken out (Python); its in-place additions alone
    (accumulation: ``⌈n/b⌉ − 1`` passes over C); its BLAS calls alone, back
    to back, on views of the same tiles; and, once, ``numpy.matmul`` on the
    whole product and the per-element costs of entering NumPy, copying and
    adding. Everything is measured twice: with BLAS's threads as they are
    (``all``), and in a fresh Python process with BLAS held to one thread
    (``one``); the difference shows what threads do for small calls. Each time
    is the fastest of ``repeat`` runs after one warm-up, the least disturbed on
    a shared machine. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    n : int
        Matrix size (≥ 1).
    sides : sequence of int
        Tile sides ``b`` (tile ``(b, b, b)``), at least one, in increasing order.
    repeat, seed : int
        Timed repetitions (≥ 1) and the seed of the inputs (≥ 0).

    Returns
    -------
    Breakdown

    Raises
    ------
    TypeError, ValueError
        If ``n``, a side, ``repeat`` or ``seed`` is not an integer in range,
        or ``sides`` is empty or not increasing.
    RuntimeError
        If the one-thread process fails.

    Examples
    --------
    >>> bd = breakdown(64, sides=(16, 32), repeat=1)
    >>> list(bd.components("one")), bd.model("all").shape
    (['arithmetic', 'small calls', 'threading', 'tile traffic', 'accumulation', 'Python loop', 'rest'], (2,))
    """
    n = _check.integer(n, "n", minimum=1, maximum=8192)
    sides = _positives(sides, "sides")
    if any(b >= c for b, c in zip(sides, sides[1:])):
        raise ValueError(f"sides must be increasing, got {sides}")
    repeat, _, _ = _timing(repeat, 0, seed)
    timings = {"all": _measure_tiling(n, sides, repeat, seed), "one": _one_thread(n, sides, repeat, seed)}
    return Breakdown(n, tuple(sides), *(Timings(threads=k, **v) for k, v in timings.items()))


@dataclass(frozen=True)
class Transposes:
    """A plain copy, a naive and blocked transposes of an ``n×n`` array (see :func:`transposes`).

    Times in seconds: ``copy`` (``np.copyto(out, a)``), ``naive``
    (``np.copyto(out, a.T)``: every read jumps a row ahead) and ``blocked``,
    one per side in ``sides`` (``b×b`` blocks, each transposed within a cache).
    See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
    """

    n: int
    itemsize: int
    copy: float
    naive: float
    sides: tuple[int, ...]
    blocked: tuple[float, ...]

    def __post_init__(self) -> None:
        _check.integer(self.n, "n", minimum=1)
        _check.integer(self.itemsize, "itemsize", minimum=1)
        for field in ("copy", "naive"):
            object.__setattr__(self, field, _check.positive(getattr(self, field), field))
        object.__setattr__(self, "sides", tuple(_positives(self.sides, "sides")))
        if any(b >= c for b, c in zip(self.sides, self.sides[1:])):
            raise ValueError(f"sides must be increasing, got {self.sides}")
        object.__setattr__(self, "blocked", _seconds(self.blocked, "blocked"))
        if len(self.blocked) != len(self.sides):
            raise ValueError(f"blocked must have one time per side ({len(self.sides)}), got {len(self.blocked)}")

    def rate(self, seconds: float) -> float:
        """Bytes read plus bytes written per second, for a transpose or copy that took ``seconds``."""
        return 2 * self.n**2 * self.itemsize / _check.positive(seconds, "seconds")


def transposes(n: int = 4096, sides: Sequence[int] = (16, 32, 64, 128, 256, 512), *, repeat: int = 3,
               seed: int = 0) -> Transposes:
    """Time a float32 ``n×n`` copy, its naive transpose and blocked transposes with ``b×b`` blocks.

    The naive transpose ``np.copyto(out, a.T)`` writes ``out`` row by row
    and so reads ``a`` down its columns: one element from each line, the
    line's other elements needed again only ``n`` reads later. A blocked
    transpose copies ``b×b`` blocks, each small enough for its lines to stay
    in a cache until all their elements are used. Every result is checked
    against ``a.T``. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    n : int
        Array side (≥ 1); make ``n`` lines (``n·64`` bytes) larger than the L1 cache.
    sides : sequence of int
        Block sides, at least one.
    repeat, seed : int
        Timed repetitions (≥ 1; the fastest counts, after one warm-up) and seed (≥ 0).

    Returns
    -------
    Transposes

    Raises
    ------
    TypeError, ValueError
        If an argument is not an integer in range or ``sides`` is empty.

    Examples
    --------
    >>> t = transposes(64, sides=(8, 16), repeat=1)
    >>> t.sides, len(t.blocked), t.rate(t.copy) > 0
    ((8, 16), 2, True)
    """
    n = _check.integer(n, "n", minimum=1)
    _check.allocation(2 * 4 * n * n, "n")  # the float32 matrix and its transpose
    sides = _positives(sides, "sides")
    if any(b >= c for b, c in zip(sides, sides[1:])):
        raise ValueError(f"sides must be increasing, got {sides}")
    repeat, _, rng = _timing(repeat, 0, seed)
    a = rng.standard_normal((n, n), dtype=np.float32)
    out = np.empty_like(a)
    tifastest = lambda f: _fastest(f, repeat)  # noqa: E731
    copy, naive = tifastest(lambda: np.copyto(out, a)), tifastest(lambda: np.copyto(out, a.T))
    blocked = []
    for b in sides:
        cuts = [slice(s, s + b) for s in range(0, n, b)]

        def block() -> None:
            for i, j in itertools.product(cuts, cuts):
                np.copyto(out[j, i], a[i, j].T)

        out.fill(0)
        blocked.append(tifastest(block))
        if not np.array_equal(out, a.T):
            raise AssertionError(f"the blocked transpose with b = {b} is wrong")
    return Transposes(n, a.itemsize, copy, naive, tuple(sides), tuple(blocked))
