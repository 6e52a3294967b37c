"""How fast a GEMM really runs on this machine, and where the time goes.

Chapter 4's model (:mod:`npukit.gemm`) counts the bytes a tile schedule moves.
This module measures what the machine does with the same product: a ladder
of GFLOP/s from Python loops to BLAS (:func:`ladder`), where the time of a
tiled product goes, tile size by tile size, next to the model that predicts it
(:func:`breakdown`), and what locality alone buys in a blocked against a naive
transpose (:func:`transposes`). The ladder and the breakdown time all their
parts in the same interleaved rounds (:func:`npukit.measure.compare`), keep
every round and report medians, so any two parts can be compared round by
round with a spread (:func:`rates`, :meth:`Breakdown.verdict`); the
transposes keep the least disturbed of a few runs. Every number is a time on
this machine, so the chapter quotes it with the machine's name.

See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import _check, measure
from .gemm import _tile, tiled_matmul, traffic

__all__ = ["Rung", "ladder", "rates", "Timings", "Breakdown", "breakdown", "Transposes", "transposes"]


def _positives(values: Any, name: str, *, default: list[int] | None = None) -> list[int]:
    """``values`` (or ``default`` when None) as a non-empty list of integers ≥ 1."""
    values = default if values is None and default is not None else _check.sequence(values, name, min_length=1)
    return [_check.integer(v, f"{name}[{i}]", minimum=1) for i, v in enumerate(values)]


def _timing(repeat: Any, warmup: Any, seed: Any) -> tuple[int, int, np.random.Generator]:
    repeat = _check.integer(repeat, "repeat", minimum=1, maximum=1_000)
    warmup = _check.integer(warmup, "warmup", minimum=0, maximum=1_000)
    return repeat, warmup, np.random.default_rng(_check.integer(seed, "seed", minimum=0))


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

    ``seconds``: median time of one product over the interleaved rounds;
    ``gflops = 2·n³/seconds/1e9``; ``times``: the time of each round (empty
    for a record built from two numbers), in the same rounds as the other
    rungs of its ladder; ``error``: largest difference from
    ``numpy.matmul``, relative to the product's largest entry; ``ok``:
    within the dtype's tolerance. :func:`rates` compares rungs round by
    round. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
    """

    name: str
    n: int
    seconds: float
    gflops: float
    error: float
    ok: bool
    times: tuple = ()  #: seconds per product, one per interleaved round

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
        times = _check.round_times(self.times, "times")
        if len(times) == 1:
            raise ValueError("times must hold no rounds or at least 2")
        if times and not np.isclose(self.seconds, np.median(times), rtol=1e-9, atol=0):
            raise ValueError(f"seconds must be the median of times, {float(np.median(times))!r}; got {self.seconds!r}")
        object.__setattr__(self, "times", times)

    @property
    def rounds(self) -> int:
        """Interleaved rounds behind ``seconds`` (0 for a record built from two numbers)."""
        return len(self.times)

    @property
    def flops(self) -> int:
        """FLOPs of one product, ``2·n³``."""
        return 2 * self.n**3

    def spread(self) -> tuple[float, float] | None:
        """First and third quartiles of the rung's GFLOP/s over its rounds (None without rounds)."""
        if not self.times:
            return None
        q1, q3 = np.percentile(self.times, [25, 75])
        return self.flops / q3 / 1e9, self.flops / q1 / 1e9


def rates(rungs: Sequence[Rung]) -> Any:
    """A ladder's rungs as a :class:`npukit.measure.Comparison` of **seconds per FLOP**, round by round.

    Rungs run at different sizes, so their times are divided by their FLOPs:
    ``rates(rungs).verdict(b.name, a.name)`` is ``b``'s time per FLOP over
    ``a``'s in the same rounds (below 1: ``b`` computed faster), with its
    bootstrap interval. Every rung must come from the same :func:`ladder`
    call (the same rounds). See chapter 4, "GEMM and tiling"
    (chapters/04_gemm.md).

    Raises
    ------
    TypeError, ValueError
        If ``rungs`` is not a list or tuple of at least two :class:`Rung`
        with per-round times of the same length.

    Examples
    --------
    >>> a = Rung("a", 8, 2e-3, 2 * 8**3 / 2e-3 / 1e9, 0.0, True, (1e-3, 2e-3, 4e-3))
    >>> b = Rung("b", 8, 1e-3, 2 * 8**3 / 1e-3 / 1e9, 0.0, True, (0.5e-3, 1e-3, 2e-3))
    >>> rates([a, b]).verdict("b").ratio
    0.5
    """
    from .timing import Comparison

    rungs = _check.sequence(rungs, "rungs", min_length=2)
    for i, r in enumerate(rungs):
        _check.instance(r, f"rungs[{i}]", Rung)
    if len({len(r.times) for r in rungs}) != 1 or not rungs[0].times:
        raise ValueError("rungs must all have per-round times from the same ladder (the same number of rounds)")
    return Comparison.from_times({r.name: [t / r.flops for t in r.times] for r in rungs})


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


def _check_result(fn: Callable[[], Any], want: np.ndarray) -> tuple[float, bool]:
    """``fn()`` against ``want``: the largest difference relative to the largest entry, and whether it is within tolerance."""
    got = np.asarray(fn(), dtype=want.dtype)
    err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
    return err, bool(err <= (1e-4 if want.dtype == np.float32 else 1e-10))


def ladder(n: int = 1024, *, python_n: int = 48, row_n: int = 128, small_tile: Sequence[int] = (32, 32, 32),
           good_tile: Sequence[int] = (256, 256, 256), dtype: Any = "float32", rounds: int = 9, warmup: int = 1,
           seed: int = 0) -> list[Rung]:
    """Measure five ways of computing a square GEMM, slowest first, in the same interleaved rounds.

    ``python`` (three Python loops over lists, at ``python_n``),
    ``row-vectorised`` (one NumPy vector update per ``(i, k)``, at
    ``row_n``), ``tiled, small tile`` and ``tiled, good tile``
    (:func:`npukit.gemm.tiled_matmul`, at ``n``) and ``numpy.matmul`` (BLAS,
    at ``n``). Each result is checked against ``numpy.matmul``; then
    :func:`npukit.measure.compare` times all five in ``rounds`` rounds in a
    shuffled order, so a burst of load from other programs slows every
    rung of that round alike. GFLOP/s (``2·n³/t``) makes sizes comparable;
    :func:`rates` compares two rungs round by round. See chapter 4, "GEMM and
    tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    n, python_n, row_n : int
        Sizes of the fast rungs, the pure-Python rung and the row-vectorised rung.
    small_tile, good_tile : tuple of int
        Tiles of the two tiled rungs.
    dtype : dtype-like
        ``"float32"`` or ``"float64"``.
    rounds, warmup, seed : int
        Interleaved rounds (≥ 3), untimed calls of each rung before them
        (≥ 0), seed of the inputs and of the rounds' order (≥ 0).

    Returns
    -------
    list of Rung
        In ladder order, each with its per-round times.

    Raises
    ------
    TypeError, ValueError
        If a size, tile, count or seed is not an integer in range, or
        ``dtype`` is not float32 or float64.

    Examples
    --------
    >>> rungs = ladder(32, python_n=8, row_n=8, small_tile=(8, 8, 8), good_tile=(16, 16, 32), rounds=3, warmup=0)
    >>> [r.name for r in rungs], all(r.ok for r in rungs), len(rungs[0].times)
    (['python', 'row-vectorised', 'tiled, small tile', 'tiled, good tile', 'numpy.matmul'], True, 3)
    """
    n, python_n, row_n = (_check.integer(v, k, minimum=1, maximum=top)  # python_n³ and row_n² Python steps
                          for v, k, top in ((n, "n", 8192), (python_n, "python_n", 256), (row_n, "row_n", 512)))
    small_tile, good_tile = _tile(small_tile, "small_tile"), _tile(good_tile, "good_tile")
    dt = _check.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    rounds = _check.integer(rounds, "rounds", minimum=3, maximum=1_000)
    _, warmup, rng = _timing(1, warmup, seed)

    def inputs(size: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.standard_normal((size, size)).astype(dt), rng.standard_normal((size, size)).astype(dt)

    A, B = inputs(python_n)
    a, b = A.tolist(), B.tolist()
    A1, B1 = inputs(row_n)
    A2, B2 = inputs(n)
    want = A2 @ B2
    cases = {"python": (python_n, lambda: _python_matmul(a, b), A @ B),
             "row-vectorised": (row_n, lambda: _row_matmul(A1, B1), A1 @ B1),
             "tiled, small tile": (n, lambda: tiled_matmul(A2, B2, small_tile), want),
             "tiled, good tile": (n, lambda: tiled_matmul(A2, B2, good_tile), want),
             "numpy.matmul": (n, lambda: np.matmul(A2, B2), want)}
    checked = {k: _check_result(fn, w) for k, (_, fn, w) in cases.items()}
    c = measure.compare({k: fn for k, (_, fn, _) in cases.items()}, rounds=rounds, warmup=warmup, seed=seed)
    out = []
    for k, (size, _, _) in cases.items():
        secs = c.median(k)
        out.append(Rung(k, size, secs, 2.0 * size**3 / secs / 1e9, *checked[k], c.times[k]))
    return out


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
    comparison: Any = None  #: the interleaved rounds behind the medians (a measure.Comparison), or None
    rungs: tuple = ()  #: a GEMM ladder timed in the same rounds (``breakdown(..., ladder=...)``), or empty

    def __post_init__(self) -> None:
        from .timing import Comparison

        _check.integer(self.n, "n", minimum=1)
        object.__setattr__(self, "sides", tuple(_positives(self.sides, "sides")))
        if any(b >= c for b, c in zip(self.sides, self.sides[1:])):
            raise ValueError(f"sides must be increasing, got {self.sides}")
        for field in ("all", "one"):
            t = _check.instance(getattr(self, field), field, Timings)
            if len(t.tiled) != len(self.sides):
                raise ValueError(f"{field} must have one time per side ({len(self.sides)}), got {len(t.tiled)}")
        if self.comparison is not None:
            _check.instance(self.comparison, "comparison", Comparison, "measure.Comparison")
            want = {f"{th} {part}" for th in ("all", "one") for part in ("numpy", *(f"{k} {b}" for b in self.sides
                                                                                     for k in ("tiled", "kernel")))}
            missing = sorted(want - set(self.comparison.names))
            if missing:
                raise ValueError(f"comparison must hold the rounds of every side's product and kernel on both "
                                 f"thread settings; missing {', '.join(missing)}")
        rungs = _check.sequence(self.rungs, "rungs")
        for i, r in enumerate(rungs):
            _check.instance(r, f"rungs[{i}]", Rung)
            if self.comparison is None or len(r.times) != self.comparison.rounds:
                raise ValueError(f"rungs[{i}] must have one time per round of comparison (the same rounds)")
        object.__setattr__(self, "rungs", rungs)

    def _rounds(self) -> Any:
        if self.comparison is None:
            raise ValueError("this Breakdown has no interleaved rounds (comparison is None): it cannot give a verdict")
        return self.comparison

    def verdict(self, side: int, threads: str = "all") -> Any:
        """The tiled product with ``side``³ tiles against one ``numpy.matmul``, round by round, same threads.

        A :class:`npukit.measure.Verdict` of tiled time over numpy's time; its
        ``speedup`` is the tiled product's speed as a fraction of numpy's.
        """
        side = _check.one_of(side, "side", self.sides)
        th = self._pick(threads).threads
        return self._rounds().verdict(f"{th} tiled {side}", f"{th} numpy")

    def thread_verdict(self, part: str = "numpy") -> Any:
        """BLAS's threads as they are against one thread, round by round: ``"numpy"`` or ``"kernel <side>"``.

        A :class:`npukit.measure.Verdict` of the all-threads time over the
        one-thread time; its ``speedup`` is what the threads gained.
        """
        _check.text(part, "part")
        c = self._rounds()
        _check.one_of(f"all {part}", "part", tuple(k for k in c.names if k.startswith("all ")))
        return c.verdict(f"all {part}", f"one {part}")

    def measured(self, threads: str = "all") -> tuple[np.ndarray, np.ndarray | None]:
        """Each side's tiled time in units of numpy's (same threads), and the rounds' quartiles of it.

        With rounds, the value is the median of the per-round ratios (the
        verdict's ratio) and the second array holds each side's first and
        third quartile; without, ``tiled / numpy`` of the medians and None.
        """
        t = self._pick(threads)
        if self.comparison is None:
            return np.array(t.tiled) / t.numpy, None
        ratios = [self.comparison.ratios(f"{t.threads} tiled {b}", f"{t.threads} numpy") for b in self.sides]
        return (np.array([np.median(r) for r in ratios]),
                np.array([np.percentile(r, [25, 75]) for r in ratios]))

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


def _tiling_calls(n: int, sides: Sequence[int], seed: int) -> tuple[dict, dict, tuple]:
    """What :class:`Timings` holds, as functions to time: ``{name: fn}`` and ``{name: what one call counts}``.

    Names are ``"numpy"``, ``"step"`` (one call is 16³ steps), ``"copy"``
    (one call moves ``2·n²·4`` bytes) and, per side ``b``, ``"tiled b"``,
    ``"python b"``, ``"calls b"``, ``"kernel b"`` and ``"accumulate b"``
    (one call is one addition of a tile; the product makes ``passes`` of
    them, the count returned for it); and the operands ``(A, B)``.
    """
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    C = np.empty((n, n), np.float32)
    small = np.ones((16, 16), np.float32)
    fns: dict = {"numpy": lambda: np.matmul(A, B, out=C),
                 "step": lambda: tiled_matmul(small, small, (1, 1, 1)),
                 "copy": lambda: np.copyto(C, A)}
    per: dict = {"step": 16**3, "copy": 2 * A.nbytes}
    for b in sides:
        cuts = [slice(s, s + b) for s in range(0, n, b)]
        steps = list(itertools.product(cuts, cuts, cuts))
        scratch = np.empty((min(b, n), min(b, n)), np.float32)
        pairs = [(A[i, p], B[p, j]) for i, j, p in steps]

        def loop(steps: list = steps, scratch: np.ndarray = scratch) -> None:  # the loop, products taken out
            for i, j, p in steps:
                c = C[i, j]
                A[i, p], B[p, j], p.start == 0, scratch[: c.shape[0], : c.shape[1]]

        def calls(pairs: list = pairs, scratch: np.ndarray = scratch) -> None:
            for a, bb in pairs:
                np.matmul(a, bb, out=scratch[: a.shape[0], : bb.shape[1]])

        c, (a0, b0) = C[:b, :b], pairs[0]
        fns[f"tiled {b}"] = lambda b=b: tiled_matmul(A, B, (b, b, b))
        fns[f"python {b}"], fns[f"calls {b}"] = loop, calls
        fns[f"kernel {b}"] = lambda a0=a0, b0=b0, scratch=scratch: np.matmul(a0, b0, out=scratch)
        passes = len(cuts) ** 2 * (len(cuts) - 1)
        if passes:
            fns[f"accumulate {b}"] = lambda c=c, scratch=scratch: np.add(c, scratch, out=c)
            per[f"accumulate {b}"] = passes
    return fns, per, (A, B)


#: The parts of :func:`breakdown` that call BLAS, timed once per thread setting; the others (the Python loop,
#: the additions, the copy) do not depend on BLAS's threads and are timed once for both.
_BLAS_PARTS = ("numpy", "step", "tiled", "calls", "kernel")


def breakdown(n: int = 1024, sides: Sequence[int] = (32, 64, 128, 256, 512), *, rounds: int = 5,
              seed: int = 0, ladder: Mapping[str, int] | None = None) -> Breakdown:
    """Measure where the time of ``tiled_matmul`` on an ``n³`` float32 product goes, for cubic tiles.

    For each side ``b`` it times: the tiled product; its loop with the
    products taken out (Python); one of its in-place additions (accumulation:
    ``⌈n/b⌉²(⌈n/b⌉ − 1)`` of them); its BLAS calls alone, back to back, on
    views of the same tiles; one tile-sized call on a tile that stays in
    cache; and, once, ``numpy.matmul`` on the whole product, a step of the
    loop with nothing to compute and a copy of an operand. The parts that
    call BLAS are timed twice, with BLAS's threads as they are (``all``) and
    held to one thread (``one``, with ``threadpoolctl``); the others do not
    depend on BLAS's threads and serve both. Everything is timed by
    :func:`npukit.measure.compare` in the same ``rounds`` interleaved rounds,
    in a shuffled order, so a busy moment slows every part of that round
    alike: :class:`Timings` holds the medians, and :meth:`Breakdown.verdict`
    and :meth:`Breakdown.thread_verdict` compare two of them round by round.
    With ``ladder``, the two slow rungs of :func:`ladder` join the same
    rounds and :attr:`Breakdown.rungs` is a ladder whose three fast rungs
    *are* the breakdown's measurements (its tiled products of sides
    ``small`` and ``good`` and its ``numpy.matmul``, all threads), so a page
    that shows both quotes each quantity once. See chapter 4, "GEMM and
    tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    n : int
        Matrix size (≥ 1).
    sides : sequence of int
        Tile sides ``b`` (tile ``(b, b, b)``), at least one, in increasing order.
    rounds, seed : int
        Interleaved rounds (≥ 3) and the seed of the inputs and the rounds' order (≥ 0).
    ladder : mapping, optional
        ``{"python_n": …, "row_n": …, "small": …, "good": …}``: the sizes of
        the pure-Python and row-vectorised rungs (as for :func:`ladder`) and
        the two tile sides, each one of ``sides``, of the tiled rungs.

    Returns
    -------
    Breakdown

    Raises
    ------
    TypeError, ValueError
        If ``n``, a side, ``rounds`` or ``seed`` is not an integer in range,
        or ``sides`` is empty or not increasing.

    Examples
    --------
    >>> bd = breakdown(64, sides=(16, 32), rounds=3)
    >>> list(bd.components("one")), bd.model("all").shape, bd.verdict(32).rounds
    (['arithmetic', 'small calls', 'threading', 'tile traffic', 'accumulation', 'Python loop', 'rest'], (2,), 3)
    """
    from threadpoolctl import ThreadpoolController

    n = _check.integer(n, "n", minimum=1, maximum=8192)
    sides = _positives(sides, "sides")
    if any(b >= c for b, c in zip(sides, sides[1:])):
        raise ValueError(f"sides must be increasing, got {sides}")
    rounds = _check.integer(rounds, "rounds", minimum=3, maximum=1_000)
    seed = _check.integer(seed, "seed", minimum=0)
    if ladder is not None:
        if not isinstance(ladder, Mapping) or set(ladder) != {"python_n", "row_n", "small", "good"}:
            raise TypeError(f"ladder must be a mapping with the keys python_n, row_n, small and good, got {ladder!r}")
        python_n = _check.integer(ladder["python_n"], "ladder['python_n']", minimum=1, maximum=256)
        row_n = _check.integer(ladder["row_n"], "ladder['row_n']", minimum=1, maximum=512)
        small, good = (_check.one_of(ladder[k], f"ladder[{k!r}]", tuple(sides)) for k in ("small", "good"))
    fns, per, (A, B) = _tiling_calls(n, sides, seed)
    slow = {}
    if ladder is not None:
        rng = np.random.default_rng(seed + 1)
        Ap, Bp = (rng.standard_normal((python_n, python_n)) for _ in range(2))
        a, b = Ap.tolist(), Bp.tolist()
        Ar, Br = (rng.standard_normal((row_n, row_n)).astype(np.float32) for _ in range(2))
        slow = {"python": (python_n, lambda: _python_matmul(a, b), Ap @ Bp),
                "row-vectorised": (row_n, lambda: _row_matmul(Ar, Br), Ar @ Br)}
        checked = {k: _check_result(fn, w) for k, (_, fn, w) in slow.items()}
        want = A @ B
        for k, side in (("tiled, small tile", small), ("tiled, good tile", good)):
            checked[k] = _check_result(lambda side=side: tiled_matmul(A, B, (side, side, side)), want)
        checked["numpy.matmul"] = _check_result(lambda: np.matmul(A, B), want)
    controller = ThreadpoolController()

    def one_thread(fn: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            with controller.limit(limits=1, user_api="blas"):
                return fn()
        return call

    timed = {}
    for name, fn in fns.items():
        if name.split()[0] in _BLAS_PARTS:
            timed[f"all {name}"], timed[f"one {name}"] = fn, one_thread(fn)
        else:
            timed[f"both {name}"] = fn
    for name, (_, fn, _) in slow.items():  # no BLAS in either
        timed[f"ladder {name}"] = fn
    c = measure.compare(timed, rounds=rounds, warmup=0, seed=seed)  # calibrating a round's calls warms each up
    rungs = []
    if ladder is not None:
        for k, size, key in (("python", python_n, "ladder python"),
                             ("row-vectorised", row_n, "ladder row-vectorised"),
                             ("tiled, small tile", n, f"all tiled {small}"),
                             ("tiled, good tile", n, f"all tiled {good}"),
                             ("numpy.matmul", n, "all numpy")):
            secs = c.median(key)
            rungs.append(Rung(k, size, secs, 2.0 * size**3 / secs / 1e9, *checked[k], c.times[key]))

    def timings(th: str) -> Timings:
        def med(name: str) -> float:
            key = f"{th} {name}" if f"{th} {name}" in c.times else f"both {name}"
            return c.median(key) if key in c.times else 0.0

        return Timings(th, med("numpy"), med("step") / per["step"], per["copy"] / med("copy"),
                       tuple(med(f"tiled {b}") for b in sides), tuple(med(f"python {b}") for b in sides),
                       tuple(med(f"accumulate {b}") * per.get(f"accumulate {b}", 0) for b in sides),
                       tuple(med(f"calls {b}") for b in sides), tuple(med(f"kernel {b}") for b in sides))

    return Breakdown(n, tuple(sides), timings("all"), timings("one"), c, tuple(rungs))


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
    #: name → seconds per call, one per interleaved round ("copy", "naive", "blocked <b>", and with
    #: ``odd_n`` "odd copy" and "odd naive"); empty for a record built from medians alone
    times: dict = field(default_factory=dict)
    odd_n: int = 0  #: side of the second array (not a power of two) timed in the same rounds, or 0

    def __post_init__(self) -> None:
        _check.integer(self.n, "n", minimum=1)
        _check.integer(self.odd_n, "odd_n", minimum=0)
        if not isinstance(self.times, Mapping):
            raise TypeError(f"times must be a mapping of names to per-round times, got {type(self.times).__name__}")
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

    @property
    def comparison(self) -> measure.Comparison:
        """The interleaved rounds (:attr:`times`) as a :class:`npukit.measure.Comparison`, the naive transpose the baseline.

        Raises
        ------
        ValueError
            For a record without rounds.
        """
        if not self.times:
            raise ValueError("this Transposes holds medians only, no interleaved rounds")
        return measure.Comparison.from_times(self.times, baseline="naive")

    def verdict(self, name: str, baseline: str = "naive") -> measure.Verdict:
        """``name``'s time over ``baseline``'s (names of :attr:`times`), round by round."""
        return self.comparison.verdict(name, baseline)

    def odd_verdict(self) -> measure.Verdict:
        """The odd-sided array's naive transpose in units of its copy, over the power-of-two one's, per round.

        Below 1: the transpose of the array whose rows are not a power of two apart cost fewer copies' time.
        """
        if not self.odd_n:
            raise ValueError("this Transposes has no odd-sided array (odd_n = 0)")
        t = self.times
        pow2 = [a / b for a, b in zip(t["naive"], t["copy"])]
        odd = [a / b for a, b in zip(t["odd naive"], t["odd copy"])]
        return measure.Comparison.from_times({f"{self.n}²": pow2, f"{self.odd_n}²": odd}).verdict(f"{self.odd_n}²")


def transposes(n: int = 4096, sides: Sequence[int] = (16, 32, 64, 128, 256, 512), *, rounds: int = 15,
               seed: int = 0, odd: int = 0) -> Transposes:
    """Time a float32 ``n×n`` copy, its naive transpose and blocked transposes with ``b×b`` blocks, interleaved.

    The naive transpose ``np.copyto(out, a.T)`` writes ``out`` row by row
    and so reads ``a`` down its columns: one element from each line, the
    line's other elements needed again only ``n`` reads later. A blocked
    transpose copies ``b×b`` blocks, each small enough for its lines to stay
    in a cache until all their elements are used. With ``odd`` > 0 a copy
    and a naive transpose of an ``(n + odd)``-sided array join them, whose
    rows are not a power of two apart. Everything is timed by
    :func:`npukit.measure.compare` in the same ``rounds`` interleaved rounds
    (one call each per round, after one warm-up), so any two can be compared
    round by round (:meth:`Transposes.verdict`,
    :meth:`Transposes.odd_verdict`). Every result is checked against
    ``a.T``. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    n : int
        Array side (≥ 1); make ``n`` lines (``n·64`` bytes) larger than the L1 cache.
    sides : sequence of int
        Block sides, at least one, increasing.
    rounds, seed : int
        Interleaved rounds (≥ 3) and seed of the data and the rounds' order (≥ 0).
    odd : int
        Added to ``n`` for the second array (≥ 0; 0: none).

    Returns
    -------
    Transposes

    Raises
    ------
    TypeError, ValueError
        If an argument is not an integer in range or ``sides`` is empty.

    Examples
    --------
    >>> t = transposes(64, sides=(8, 16), rounds=3, odd=8)
    >>> t.sides, len(t.blocked), t.rate(t.copy) > 0, t.odd_n, t.verdict("blocked 16").rounds
    ((8, 16), 2, True, 72, 3)
    """
    n = _check.integer(n, "n", minimum=1)
    odd = _check.integer(odd, "odd", minimum=0, maximum=10_000)
    _check.allocation(2 * 4 * (n * n + (n + odd) ** 2 * (odd > 0)), "n")  # the matrices and their transposes
    sides = _positives(sides, "sides")
    if any(b >= c for b, c in zip(sides, sides[1:])):
        raise ValueError(f"sides must be increasing, got {sides}")
    rounds = _check.integer(rounds, "rounds", minimum=3, maximum=1_000)
    rng = np.random.default_rng(_check.integer(seed, "seed", minimum=0))
    a = rng.standard_normal((n, n), dtype=np.float32)
    out = np.empty_like(a)
    fns: dict[str, Callable[[], Any]] = {"copy": lambda: np.copyto(out, a), "naive": lambda: np.copyto(out, a.T)}
    for b in sides:
        cuts = [slice(s, s + b) for s in range(0, n, b)]

        def block(cuts: list = cuts) -> None:
            for i, j in itertools.product(cuts, cuts):
                np.copyto(out[j, i], a[i, j].T)

        out.fill(0)
        block()
        if not np.array_equal(out, a.T):
            raise AssertionError(f"the blocked transpose with b = {b} is wrong")
        fns[f"blocked {b}"] = block
    if odd:
        a2 = rng.standard_normal((n + odd, n + odd), dtype=np.float32)
        out2 = np.empty_like(a2)
        fns["odd copy"], fns["odd naive"] = (lambda: np.copyto(out2, a2)), (lambda: np.copyto(out2, a2.T))
    c = measure.compare(fns, baseline="naive", rounds=rounds, warmup=1, number=1, seed=seed)
    return Transposes(n, a.itemsize, c["copy"], c["naive"], tuple(sides), tuple(c[f"blocked {b}"] for b in sides),
                      dict(c.times), n + odd if odd else 0)
