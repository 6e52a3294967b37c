"""Chapter 4's figures, and the speed measurements they draw (chapters/04_gemm.md).

The traffic model lives in :mod:`npukit.gemm`; what this machine does with a
tiled product is measured here, beside the figures that draw it, and nowhere
else: :func:`ladder` (GFLOP/s from Python loops to BLAS), :func:`breakdown`
(where the time of :func:`npukit.gemm.tiled_matmul` goes, tile size by tile
size, next to a model that predicts it) and :func:`transposes` (a blocked
against a naive transpose: locality measured). Every ``*_figure`` returns a
``plotly.graph_objects.Figure`` styled by :func:`npukit.viz.style`; plotly is
imported inside them.

See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from .. import _check, measure, viz
from ..gemm import Traffic, _dims, _itemsizes, _order, _tile, compulsory, footprint, tiled_matmul, traffic

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["Rung", "ladder", "Timings", "Breakdown", "breakdown", "Transposes", "transposes", "traffic_figure",
           "ladder_figure", "breakdown_figure", "transpose_figure", "schedule_figure"]

_FAMILY = {"mnk": "C stays", "nmk": "C stays", "mkn": "A stays", "kmn": "A stays", "nkm": "B stays", "knm": "B stays"}

#: Environment variables that cap the threads of the common BLAS libraries.
_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def _positives(values: Any, name: str, *, default: list[int] | None = None) -> list[int]:
    """``values`` (or ``default`` when None) as a non-empty list of integers ≥ 1."""
    values = default if values is None else _check.sequence(values, name, min_length=1)
    return [_check.integer(v, f"{name}[{i}]", minimum=1) for i, v in enumerate(values)]


def _timing(repeat: Any, warmup: Any, seed: Any) -> tuple[int, int, np.random.Generator]:
    repeat, warmup = _check.integer(repeat, "repeat", minimum=1), _check.integer(warmup, "warmup", minimum=0)
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


# ---- the measured ladder -----------------------------------------------------------


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
    n, python_n, row_n = (_check.integer(v, k, minimum=1) for v, k in ((n, "n"), (python_n, "python_n"), (row_n, "row_n")))
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


# ---- where the time of a tiled product goes ------------------------------------------


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
    code = ("import json; from npukit.figures import gemm as g; "
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
    n = _check.integer(n, "n", minimum=1)
    sides = _positives(sides, "sides")
    if any(b >= c for b, c in zip(sides, sides[1:])):
        raise ValueError(f"sides must be increasing, got {sides}")
    repeat, _, _ = _timing(repeat, 0, seed)
    timings = {"all": _measure_tiling(n, sides, repeat, seed), "one": _one_thread(n, sides, repeat, seed)}
    return Breakdown(n, tuple(sides), *(Timings(threads=k, **v) for k, v in timings.items()))


# ---- locality, measured: a transpose --------------------------------------------------


def _data_cache_bytes(level: int) -> int | None:
    """The size of this CPU's level-``level`` data (or unified) cache, from Linux's sysfs (None elsewhere)."""
    import glob

    for path in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        try:
            with open(f"{path}/level") as f:
                lev = int(f.read())
            with open(f"{path}/type") as f:
                kind = f.read().strip()
            with open(f"{path}/size") as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        if lev == level and kind in ("Data", "Unified"):
            scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
            return int(text.rstrip("KMG")) * scale
    return None


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
    sides = _positives(sides, "sides")
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


# ---- figures ------------------------------------------------------------------------


def _traffic_traces(dims: tuple, isz: int, csz: int, line: int, buf: int, orders: list[str], sizes: list[int],
                    depths: list[int], scale: float, unit: str) -> list[go.Scatter]:
    """One line per (depth, order): total traffic against the output-tile side, None where the tile does not fit."""
    import plotly.graph_objects as go

    traces = []
    for di, bk in enumerate(depths):
        for oi, order in enumerate(orders):
            ys = [traffic(*dims, (b, b, bk), order, isz, c_itemsize=csz, line=line).total / scale
                  if footprint(*dims, (b, b, bk), isz, c_itemsize=csz) <= buf else None for b in sizes]
            traces.append(go.Scatter(
                x=sizes, y=ys, mode="lines+markers", name=f"{order} ({_FAMILY[order]})",
                line=dict(color=viz.PALETTE[oi % len(viz.PALETTE)]), visible=di == 0,
                hovertemplate="bm = bn = %{x}<br>%{y:.3g} " + unit + "<extra>" + order + "</extra>",
            ))
    return traces


def traffic_figure(M: int, N: int, K: int, buffer_bytes: int, itemsize: int = 4, *, c_itemsize: int | None = None,
                   line: int = 64, orders: Sequence[str] = ("mnk", "mkn", "nkm"), sizes: Sequence[int] | None = None,
                   depths: Sequence[int] | None = None) -> go.Figure:
    """Interactive figure: DRAM traffic (whole lines) against tile size for a fixed buffer.

    The x axis is the side ``b`` of a square output tile (``bm = bn = b``);
    a slider picks the reduction depth ``bk``. One line per loop order shows
    :func:`npukit.gemm.traffic`'s total; points whose tiles do not fit
    ``buffer_bytes`` are left out, so each line stops where the buffer is
    full. Dotted lines mark the compulsory minimum and the untiled schedule
    (1×1×1 tiles, ``mnk``). The slider is plotly's, so the figure works in a
    static page. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions.
    buffer_bytes : int
        The buffer size.
    itemsize, c_itemsize : int
        Element sizes of the inputs and of the accumulator (default: ``itemsize``).
    line : int
        Bytes per transfer (see :func:`npukit.gemm.traffic`).
    orders : sequence of str
        Loop orders to draw, at least one.
    sizes : sequence of int, optional
        Output-tile sides to evaluate (default: powers of two up to ``max(M, N)``).
    depths : sequence of int, optional
        ``bk`` values for the slider (default: powers of two up to ``K``).

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        For bad dimensions, item sizes or ``line`` (as :func:`npukit.gemm.traffic`),
        an unknown order, or ``orders``, ``sizes`` or ``depths`` that is not a
        non-empty list or tuple of valid values.

    Examples
    --------
    >>> fig = traffic_figure(256, 256, 256, buffer_bytes=64 * 1024)
    >>> len(fig.layout.sliders[0].steps) > 1
    True
    """
    import plotly.graph_objects as go

    M, N, K = _dims(M, N, K)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    buf = _check.integer(buffer_bytes, "buffer_bytes", minimum=1)
    line = _check.integer(line, "line", minimum=1)
    orders = [_order(o, f"orders[{i}]") for i, o in enumerate(_check.sequence(orders, "orders", min_length=1))]
    sizes = _positives(sizes, "sizes", default=[2**e for e in range(max(M, N).bit_length())])
    depths = _positives(depths, "depths", default=[2**e for e in range(K.bit_length())])
    low = compulsory(M, N, K, isz, c_itemsize=csz, line=line).total
    high = traffic(M, N, K, (1, 1, 1), "mnk", isz, c_itemsize=csz, line=line).total
    unit, scale = next((u, 2.0**e) for u, e in (("GiB", 30), ("MiB", 20), ("KiB", 10), ("B", 0)) if low >= 2.0**e / 10)
    fig = go.Figure(_traffic_traces((M, N, K), isz, csz, line, buf, orders, sizes, depths, scale, unit))
    for y, label, dash in ((low, "compulsory minimum", "dot"), (high, "untiled (1×1×1 tiles)", "dash")):
        fig.add_trace(go.Scatter(x=[sizes[0], sizes[-1]], y=[y / scale] * 2, mode="lines", name=label,
                                 line=dict(color=viz.PALETTE[7], dash=dash),
                                 hovertemplate=f"{label}: %{{y:.3g}} {unit}<extra></extra>"))
    drawn = [y for tr in fig.data for y in tr.y if y is not None]
    lo, hi = min(drawn), max(drawn)  # one y range for every slider position
    per = len(orders)
    steps = []
    for di, bk in enumerate(depths):
        vis = [False] * (per * len(depths)) + [True, True]
        vis[di * per : (di + 1) * per] = [True] * per
        steps.append(dict(method="update", args=[{"visible": vis}], label=str(bk)))
    ticks = [x for x in sizes if x & (x - 1) == 0] + ([sizes[-1]] if sizes[-1] & (sizes[-1] - 1) else [])
    fig.update_layout(
        sliders=[dict(active=0, steps=steps, currentvalue=dict(prefix="bk = "), pad=dict(t=50))],
        xaxis=dict(title="output tile side bm = bn", type="log", tickvals=ticks),
        yaxis=dict(title=f"DRAM traffic ({unit}, log)", type="log", range=[math.log10(lo) - 0.2, math.log10(hi) + 0.2]),
    )
    return viz.style(fig, height=480, title=f"{M}×{N}×{K} GEMM, {buf / 1024:g} KiB buffer, {line}-byte lines")


def ladder_figure(rungs: Sequence[Rung], peak_gflops: float | None = None) -> go.Figure:
    """Bar chart of a :func:`ladder`: GFLOP/s per rung, log scale.

    Parameters
    ----------
    rungs : sequence of Rung
        As returned by :func:`ladder`.
    peak_gflops : float, optional
        The machine's measured peak; drawn as a dashed line, and each bar is
        labelled with its fraction of it.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``rungs`` is not a list or tuple of :class:`Rung`, or ``peak_gflops`` not a number.
    ValueError
        If ``rungs`` is empty or ``peak_gflops`` is not finite and positive.

    Examples
    --------
    >>> fig = ladder_figure([Rung("numpy.matmul", 64, 1e-4, 5.2, 0.0, True)], peak_gflops=10.0)
    >>> fig.data[0].text[0]
    '5.2 GFLOP/s<br>52% of peak'
    """
    import plotly.graph_objects as go

    rungs = list(_check.sequence(rungs, "rungs", min_length=1))
    for i, r in enumerate(rungs):
        _check.instance(r, f"rungs[{i}]", Rung)
    if peak_gflops is not None:
        peak_gflops = _check.positive(peak_gflops, "peak_gflops")

    def label(r: Rung) -> str:
        s = f"{r.gflops:.3g} GFLOP/s"
        if peak_gflops is not None:
            frac = r.gflops / peak_gflops
            s += f"<br>{frac:.0%} of peak" if frac >= 0.01 else f"<br>{frac:.1e} of peak"
        return s

    fig = go.Figure(go.Bar(
        x=[f"{r.name}<br>(n = {r.n})" for r in rungs], y=[r.gflops for r in rungs], text=[label(r) for r in rungs],
        textposition="auto",  # inside tall bars (clear of the peak line), above short ones
        textangle=0, textfont=dict(size=12), hovertemplate="%{x}<br>%{text}<extra></extra>",
        marker_color=[viz.PALETTE[i % len(viz.PALETTE)] for i in range(len(rungs))],
    ))
    if peak_gflops is not None:
        fig.add_hline(y=peak_gflops, line=dict(color="#444", dash="dash"))
        fig.add_annotation(  # on a log axis an annotation's y is log10 of the value
            x=0, xref="paper", y=math.log10(peak_gflops), yref="y", yshift=12, xanchor="left",
            text=f"measured peak {peak_gflops:.3g} GFLOP/s", showarrow=False,
        )
    top = max([r.gflops for r in rungs] + [peak_gflops or 0])
    low = min(r.gflops for r in rungs)
    fig.update_layout(
        yaxis=dict(title="GFLOP/s (log)", type="log", range=[math.log10(low) - 0.5, math.log10(top) + 0.8]),
        showlegend=False,
    )
    return viz.style(fig, height=460, title="From Python loops to BLAS: the GEMM ladder")


_PARTS = ("arithmetic", "small calls", "threading", "tile traffic", "accumulation", "Python loop", "rest")


def breakdown_figure(bd: Breakdown) -> go.Figure:
    """Stacked bars of a :func:`breakdown`: each tile side's time, split, in units of ``numpy.matmul``'s time.

    One bar per tile side, its parts from :meth:`Breakdown.components`
    (a negative part is left out: the others then overshoot the
    measurement). Diamonds mark the measured time, crosses the model's
    (:meth:`Breakdown.model`). Two buttons switch between BLAS's threads as
    they are and BLAS held to one thread; heights are divided by
    ``numpy.matmul``'s time with the same threads, so 1 is "as fast as one
    BLAS call". The axis stops a little above every side but the smallest;
    a bar that goes beyond it is labelled with its height. See chapter 4,
    "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    bd : Breakdown

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``bd`` is not a :class:`Breakdown`.

    Examples
    --------
    >>> t = dict(numpy=1e-3, step=1e-6, bandwidth=1e10, tiled=[3e-3], python=[1e-4], accumulate=[1e-4],
    ...          calls=[2e-3], kernel=[1e-6])
    >>> fig = breakdown_figure(Breakdown(64, (16,), Timings("all", **t), Timings("one", **t)))
    >>> len(fig.layout.updatemenus[0].buttons), fig.data[0].name
    (2, 'arithmetic')
    """
    import plotly.graph_objects as go

    bd = _check.instance(bd, "bd", Breakdown)
    x = [f"{b}×{b}×{b}" for b in bd.sides]
    fig, notes, tops = go.Figure(), {}, {}
    for threads in ("all", "one"):
        scale = bd._pick(threads).numpy
        parts = bd.components(threads)
        for i, name in enumerate(_PARTS):
            y = np.maximum(parts[name], 0) / scale
            fig.add_trace(go.Bar(x=x, y=y, name=name, marker_color=viz.PALETTE[i], visible=threads == "all",
                                 legendgroup=name, hovertemplate=f"{name}: %{{y:.2f}}×<extra></extra>"))
        marks = {"measured": np.array(bd._pick(threads).tiled) / scale, "model": bd.model(threads) / scale}
        for name, symbol in (("measured", "diamond"), ("model", "x")):
            fig.add_trace(go.Scatter(x=x, y=marks[name], mode="markers", name=name, visible=threads == "all",
                                     marker=dict(symbol=symbol, size=12, color="#222"),
                                     hovertemplate=f"{name}: %{{y:.2f}}×<extra></extra>"))
        tops[threads] = np.maximum(sum(np.maximum(v, 0) for v in parts.values()) / scale,
                                   np.maximum(marks["measured"], marks["model"]))
    # the smallest tiles take many times longer than the rest: cut the axis above the others and label them
    rest = np.concatenate([t[1:] for t in tops.values()]) if len(bd.sides) > 1 else np.array([])
    cap = 1.15 * max(2.0, float(rest.max())) if rest.size else None
    for threads, top in tops.items():
        notes[threads] = [dict(x=xi, y=cap, text=f"↑ {v:.0f}×", showarrow=False, yanchor="bottom", bgcolor="white")
                          for xi, v in zip(x, top) if cap is not None and v > cap]
    per = len(_PARTS) + 2
    buttons = [dict(label=label, method="update", args=[{"visible": [k // per == i for k in range(2 * per)]},
                                                        {"annotations": notes[threads]}])
               for i, (label, threads) in enumerate((("BLAS: all threads", "all"), ("BLAS: one thread", "one")))]
    fig.update_layout(barmode="stack", updatemenus=[dict(type="buttons", direction="right", buttons=buttons,
                                                        x=1, xanchor="right", y=1.02, yanchor="bottom")],
                      annotations=notes["all"], xaxis=dict(title="tile"),
                      yaxis=dict(title="time ÷ numpy.matmul's time", range=None if cap is None else [0, cap * 1.1]))
    viz.style(fig, height=500, title=f"tiled_matmul, n = {bd.n}")
    return fig.update_layout(margin=dict(t=90))


def transpose_figure(t: Transposes) -> go.Figure:
    """Line chart of :func:`transposes`: bytes moved per second against block side.

    Dashed lines mark the plain copy (the best any transpose can do) and the
    naive transpose; the solid line is the blocked transpose for each block
    side. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    t : Transposes

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``t`` is not a :class:`Transposes`.

    Examples
    --------
    >>> fig = transpose_figure(Transposes(64, 4, 1e-5, 1e-4, (8, 16), (3e-5, 2e-5)))
    >>> [tr.name for tr in fig.data]
    ['blocked transpose', 'plain copy', 'naive transpose (copyto(out, a.T))']
    """
    import plotly.graph_objects as go

    t = _check.instance(t, "t", Transposes)
    gbs = lambda s: t.rate(s) / 1e9  # noqa: E731
    fig = go.Figure(go.Scatter(x=list(t.sides), y=[gbs(s) for s in t.blocked], mode="lines+markers",
                               name="blocked transpose", line=dict(color=viz.PALETTE[0]),
                               hovertemplate="b = %{x}: %{y:.3g} GB/s<extra></extra>"))
    for i, (name, s) in enumerate((("plain copy", t.copy), ("naive transpose (copyto(out, a.T))", t.naive))):
        fig.add_trace(go.Scatter(x=[t.sides[0], t.sides[-1]], y=[gbs(s)] * 2, mode="lines", name=name,
                                 line=dict(color=viz.PALETTE[3 + 4 * i], dash="dash"),
                                 hovertemplate=f"{name}: %{{y:.3g}} GB/s<extra></extra>"))
    fig.update_layout(xaxis=dict(title="block side b (blocks b×b)", type="log", tickvals=list(t.sides)),
                      yaxis=dict(title="GB/s (bytes read + written, log)", type="log"))
    return viz.style(fig, height=420, title=f"Transposing a {t.n}×{t.n} float32 array")


def schedule_figure(t: Traffic, low: Traffic, *, title: str = "") -> go.Figure:
    """Bars of one schedule's DRAM traffic by operand, beside the compulsory minimum.

    The lab's live control draws this for the tile its sliders choose (see
    lab 4, labs/04_gemm.ipynb, and chapter 4, chapters/04_gemm.md).

    Parameters
    ----------
    t, low : npukit.gemm.Traffic
        The schedule's traffic and the compulsory traffic.
    title : str
        The figure's title.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``t`` or ``low`` is not a :class:`npukit.gemm.Traffic`, or ``title`` not a string.

    Examples
    --------
    >>> from npukit.gemm import traffic, compulsory
    >>> fig = schedule_figure(traffic(64, 64, 64, (16, 16, 16)), compulsory(64, 64, 64))
    >>> list(fig.data[0].x)
    ['A read', 'B read', 'C read back', 'C written']
    """
    import plotly.graph_objects as go

    t, low = _check.instance(t, "t", Traffic), _check.instance(low, "low", Traffic)
    title = _check.text(title, "title")
    names = ["A read", "B read", "C read back", "C written"]
    fig = go.Figure()
    for i, (label, x) in enumerate((("this tile", t), ("compulsory", low))):
        fig.add_trace(go.Bar(x=names, y=[x.a_read, x.b_read, x.c_read, x.c_write], name=label,
                             marker_color=viz.PALETTE[[0, 7][i]], hovertemplate="%{x}: %{y:,} B<extra></extra>"))
    fig.update_layout(barmode="group", yaxis=dict(title="bytes (log)", type="log"))
    return viz.style(fig, height=380, title=title or None)
