"""How two timings compare: interleaved rounds, paired ratios, a bootstrap interval, a three-way verdict.

The invariant: **a difference between two timings is reported only when the
noise lets us see it.** :class:`Comparison` holds seconds per call of
several functions, one value per interleaved round (rounds aligned across
functions); :class:`Verdict` compares one function with a baseline from the
per-round ratios: their median, a bootstrap confidence interval of that
median (``scipy.stats.bootstrap``, seeded), and one of three words,
``"faster"``, ``"indistinguishable"`` or ``"slower"``, with a sentence
fragment that reads true whichever comes out. :func:`judge` decides a
learner's predicted ratio against a verdict: pass, fail, or "too noisy,
re-run". :func:`compare` times the rounds (re-exported as
``npukit.measure.compare``, the name pages use) and :func:`recheck` measures
again and judges, for a lab's timing check. Every timing goes through a
``clock`` argument, so the tests run the whole procedure on a fake clock.

The verdict follows Criterion.rs's rule (a change is reported only when the
whole confidence interval lies beyond a noise threshold;
https://bheisler.github.io/criterion.rs/book/analysis.html); pairing the
ratios by round follows Kalibera and Jones, "Rigorous benchmarking in
reasonable time" (ISMM 2013). See chapter 7, "Deploying to an NPU"
(chapters/07_deploy.md), and CONTRIBUTING.md, "How to compare two timings".
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

from . import _check

__all__ = ["NOISE_THRESHOLD", "SPREAD_CEILING", "compare", "in_blocks", "Comparison", "Verdict", "judge", "recheck",
           "Judgement"]

#: Ratios within this relative distance of 1 are never called a difference (Criterion.rs's
#: "noise threshold", whose default is 1 %): on a shared 2-core machine two runs of the same
#: code differ by a few percent, so a smaller difference is not evidence of one.
NOISE_THRESHOLD = 0.05

#: An "indistinguishable" verdict whose interval spreads by more than this (:attr:`Verdict.spread`) says
#: nothing: the run could not tell whether the two differ (:attr:`Verdict.outcome` ``"unclear"``). The same
#: bound as :func:`judge`'s default ``ceiling``, within which a lab's right prediction can be told from a wrong one.
SPREAD_CEILING = 0.35


def _bootstrap_median(ratios: Sequence[float], confidence: float, seed: int) -> tuple[float, float]:
    """Percentile-bootstrap interval of the median of ``ratios`` (``scipy.stats.bootstrap``, seeded).

    The percentile method is used rather than BCa: BCa's acceleration is undefined when many
    per-round ratios are equal (a coarse clock, or a fake one in a test), and the median of a
    dozen rounds gains nothing from it.
    """
    import numpy as np
    from scipy import stats

    data = np.asarray(ratios, dtype=float)
    if np.all(data == data[0]):
        return float(data[0]), float(data[0])
    res = stats.bootstrap((data,), np.median, confidence_level=confidence, n_resamples=2000,
                          method="percentile", vectorized=True, rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


@dataclass(frozen=True)
class Verdict:
    """How one function's time compares with a baseline's, from interleaved rounds.

    ``ratio`` is the median over rounds of ``time(name) / time(baseline)``
    measured in the same round; ``low`` and ``high`` bound it with
    probability ``confidence`` (a bootstrap interval over the rounds). The
    :attr:`word` is ``"slower"`` only if ``low > 1 + threshold``,
    ``"faster"`` only if ``high < 1 / (1 + threshold)``, else
    ``"indistinguishable"``: a difference smaller than the threshold, or one
    the noise does not let us see, is never reported as one. Made by
    :meth:`Comparison.verdict`; see chapter 7, "Deploying to an NPU"
    (chapters/07_deploy.md), and CONTRIBUTING.md, "How to compare two timings".

    Raises
    ------
    TypeError, ValueError
        If a name is not a non-empty string, the ratios are not finite
        numbers > 0 with ``low <= ratio <= high``, ``confidence`` is not in
        (0, 1), ``threshold`` not in [0, 1) or ``rounds`` not an integer >= 2.

    Examples
    --------
    >>> v = Verdict("INT8", "FP32", ratio=0.50, low=0.48, high=0.52, confidence=0.95, threshold=0.05, rounds=15)
    >>> v.word, v.speedup
    ('faster', 2.0)
    >>> print(v.phrase)
    faster than FP32: 0.50 of its time (95% interval 0.48 to 0.52, 15 interleaved rounds)
    >>> Verdict("a", "b", 1.01, 0.97, 1.06, 0.95, 0.05, 15).word
    'indistinguishable'
    """

    name: str
    baseline: str
    ratio: float  #: median over rounds of time(name) / time(baseline)
    low: float  #: low end of the interval of ``ratio``
    high: float  #: high end of the interval of ``ratio``
    confidence: float  #: the interval's confidence level, e.g. 0.95
    threshold: float  #: relative differences below this are never called one
    rounds: int  #: interleaved rounds behind the ratio

    def __post_init__(self) -> None:
        for f in ("name", "baseline"):
            if not _check.text(getattr(self, f), f):
                raise ValueError(f"{f} must not be empty")
        for f in ("ratio", "low", "high"):
            object.__setattr__(self, f, _check.positive(getattr(self, f), f))
        if not self.low <= self.ratio <= self.high:
            raise ValueError(f"low <= ratio <= high is required, got {self.low}, {self.ratio}, {self.high}")
        c = _check.fraction(self.confidence, "confidence")
        if c == 0:
            raise ValueError("confidence must be in (0, 1), got 0")
        object.__setattr__(self, "confidence", c)
        object.__setattr__(self, "threshold", _check.fraction(self.threshold, "threshold"))
        _check.integer(self.rounds, "rounds", minimum=2)

    @property
    def word(self) -> str:
        """``"faster"``, ``"indistinguishable"`` or ``"slower"`` (see the class docstring)."""
        if self.low > 1 + self.threshold:
            return "slower"
        if self.high < 1 / (1 + self.threshold):
            return "faster"
        return "indistinguishable"

    @property
    def outcome(self) -> str:
        """:attr:`word`, or ``"unclear"`` for an indistinguishable verdict whose :attr:`spread` exceeds
        :data:`SPREAD_CEILING`: such an interval holds both "equal" and "several times apart", and a page
        draws no conclusion from it.

        >>> Verdict("a", "b", 0.97, 0.64, 1.84, 0.95, 0.05, 15).outcome
        'unclear'
        >>> Verdict("a", "b", 1.01, 0.97, 1.06, 0.95, 0.05, 15).outcome
        'indistinguishable'
        """
        if self.word == "indistinguishable" and self.spread > SPREAD_CEILING:
            return "unclear"
        return self.word

    @property
    def statement(self) -> str:
        """:attr:`phrase`, or for an ``"unclear"`` :attr:`outcome` a fragment that says the run could not tell.

        Reads true after ``f"{name} was "``: ``"not told apart from FP32 by this run: its time 0.64 to 1.84
        times FP32's (…); an interval this wide holds both no difference and a large one"``.
        """
        if self.outcome != "unclear":
            return self.phrase
        return (f"not told apart from {self.baseline} by this run: its time {self.low:.2f} to {self.high:.2f} "
                f"times {self.baseline}'s ({self.confidence:.0%} interval, {self.rounds} interleaved rounds); "
                "an interval this wide holds both no difference and a large one")

    @property
    def speedup(self) -> float:
        """``1 / ratio``: how many times as fast as the baseline (the baseline's time over this one's)."""
        return 1 / self.ratio

    @property
    def spread(self) -> float:
        """The interval's relative half-width, ``max(high / ratio, ratio / low) - 1`` (0.1 means ±10 %)."""
        return max(self.high / self.ratio, self.ratio / self.low) - 1

    @property
    def interval(self) -> str:
        """The interval as text, ``"95% interval 0.48 to 0.52, 15 interleaved rounds"``."""
        return (f"{self.confidence:.0%} interval {self.low:.2f} to {self.high:.2f}, "
                f"{self.rounds} interleaved rounds")

    @property
    def phrase(self) -> str:
        """A fragment that reads true after ``f"{name} is "`` whatever the outcome.

        ``"faster than FP32: 0.50 of its time (…)"``, ``"slower than FP32:
        1.35 times its time (…)"`` or ``"indistinguishable from FP32 within
        the noise: 0.97 to 1.04 times its time (…; differences under 5% are
        not called one)"``.
        """
        if self.word == "faster":
            return f"faster than {self.baseline}: {self.ratio:.2f} of its time ({self.interval})"
        if self.word == "slower":
            return f"slower than {self.baseline}: {self.ratio:.2f} times its time ({self.interval})"
        return (f"indistinguishable from {self.baseline} within the noise: {self.low:.2f} to {self.high:.2f} "
                f"times its time ({self.confidence:.0%} interval, {self.rounds} interleaved rounds; "
                f"differences under {self.threshold:.0%} are not called one)")


@dataclass(frozen=True)
class Comparison:
    """Seconds per call of several functions, one value per interleaved round, and their verdicts.

    ``times[name][i]`` is the time per call of ``name`` in round ``i``; the
    same ``i`` is the same round for every function, which is what makes
    :meth:`verdict`'s per-round ratios paired. ``comparison[name]`` is the
    median time of ``name`` in seconds. Made by :func:`compare`, or by
    :meth:`from_times` from rounds measured elsewhere (for example
    :func:`npukit.deploy.benchmark_many`). See chapter 7, "Deploying to an
    NPU" (chapters/07_deploy.md), and CONTRIBUTING.md, "How to compare two timings".

    Raises
    ------
    TypeError, ValueError
        See :meth:`from_times`.

    Examples
    --------
    >>> c = Comparison.from_times({"a": [1.0, 1.1, 0.9], "b": [2.0, 2.2, 1.8]})
    >>> c.baseline, c["b"], c.verdict("b").ratio, c.verdict("b").word
    ('a', 2.0, 2.0, 'slower')
    >>> [round(w, 3) for w in c.whiskers("b", scale=1e3)]    # ms: median, its distance to q1 and to q3
    [2000.0, 100.0, 100.0]
    """

    times: dict  #: name → seconds per call, one per round, rounds aligned across names
    baseline: str  #: the name every verdict compares with by default
    number: dict  #: name → calls per round
    threshold: float = NOISE_THRESHOLD
    confidence: float = 0.95
    seed: int = 0  #: seed of the bootstrap resampling

    def __post_init__(self) -> None:
        times, number = self.times, self.number
        if not isinstance(times, Mapping):
            raise TypeError(f"times must be a mapping of names to per-round times, got {type(times).__name__}")
        if len(times) < 2:
            raise ValueError(f"times must hold at least two functions to compare, got {len(times)}")
        out: dict[str, tuple[float, ...]] = {}
        for k, v in times.items():
            if not isinstance(k, str) or not k:
                raise TypeError(f"times: each name must be a non-empty string, got {k!r}")
            if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
                raise TypeError(f"times[{k!r}] must be a sequence of seconds, got {type(v).__name__}")
            out[k] = tuple(_check.positive(t, f"times[{k!r}][{i}]") for i, t in enumerate(v))
        lengths = {len(v) for v in out.values()}
        if len(lengths) != 1:
            raise ValueError(f"times must hold the same number of rounds for every name, got {sorted(lengths)}")
        if lengths.pop() < 2:
            raise ValueError("times must hold at least 2 rounds per name")
        _check.one_of(self.baseline, "baseline", tuple(out))
        if not isinstance(number, Mapping):
            raise TypeError(f"number must be a mapping of names to calls per round, got {type(number).__name__}")
        calls = {k: _check.integer(number.get(k), f"number[{k!r}]", minimum=1) for k in out}
        if _check.fraction(self.confidence, "confidence") == 0:
            raise ValueError("confidence must be in (0, 1), got 0")
        object.__setattr__(self, "times", out)
        object.__setattr__(self, "number", calls)
        object.__setattr__(self, "threshold", _check.fraction(self.threshold, "threshold"))
        object.__setattr__(self, "confidence", float(self.confidence))
        object.__setattr__(self, "seed", _check.integer(self.seed, "seed", minimum=0))

    @classmethod
    def from_times(cls, times: Mapping[str, Sequence[float]], *, baseline: str | None = None,
                   number: Mapping[str, int] | None = None, threshold: float = NOISE_THRESHOLD,
                   confidence: float = 0.95, seed: int = 0) -> Comparison:
        """A comparison of rounds already measured, interleaved: ``times[name][i]`` from round ``i``.

        Parameters
        ----------
        times : mapping of str to sequence of float
            At least two names, each with the same number (>= 2) of finite
            times > 0 in seconds.
        baseline : str, optional
            One of the names (default: the first).
        number : mapping of str to int, optional
            Calls per round behind each time (default 1 each).
        threshold, confidence, seed
            As for :func:`compare`.

        Raises
        ------
        TypeError, ValueError
            If ``times`` is not such a mapping, ``baseline`` not one of its
            names, or ``threshold``, ``confidence`` or ``seed`` out of range.
        """
        if not isinstance(times, Mapping):
            raise TypeError(f"times must be a mapping of names to per-round times, got {type(times).__name__}")
        names = tuple(times)
        return cls(dict(times), names[0] if baseline is None and names else baseline,
                   dict.fromkeys(names, 1) if number is None else number, threshold, confidence, seed)

    @property
    def names(self) -> tuple[str, ...]:
        """The functions compared, baseline included, in the order given."""
        return tuple(self.times)

    @property
    def rounds(self) -> int:
        return len(next(iter(self.times.values())))

    def _name(self, name: str, arg: str = "name") -> str:
        return _check.one_of(name, arg, self.names)

    def __getitem__(self, name: str) -> float:
        return self.median(name)

    def items(self) -> list[tuple[str, float]]:
        """``(name, median seconds per call)`` for every function, in order (a dict's ``items``)."""
        return [(k, self.median(k)) for k in self.names]

    def median(self, name: str) -> float:
        """Median seconds per call of ``name`` over the rounds."""
        return statistics.median(self.times[self._name(name)])

    def spread(self, name: str) -> tuple[float, float]:
        """First and third quartiles of ``name``'s seconds per call over the rounds (its IQR's ends)."""
        import numpy as np

        q1, q3 = np.percentile(self.times[self._name(name)], [25, 75])
        return float(q1), float(q3)

    def whiskers(self, name: str, scale: float = 1.0) -> tuple[float, float, float]:
        """``(median, median − q1, q3 − median)`` times ``scale``: plotly's ``error_y`` for a bar or point."""
        scale = _check.positive(scale, "scale")
        m = self.median(name)
        q1, q3 = self.spread(name)
        return m * scale, (m - q1) * scale, (q3 - m) * scale

    def ratios(self, name: str, baseline: str | None = None) -> tuple[float, ...]:
        """Per-round ratios ``time(name) / time(baseline)``, paired by round."""
        b = self.baseline if baseline is None else self._name(baseline, "baseline")
        return tuple(x / y for x, y in zip(self.times[self._name(name)], self.times[b]))

    def verdict(self, name: str, baseline: str | None = None) -> Verdict:
        """How ``name`` compares with ``baseline`` (default :attr:`baseline`): see :class:`Verdict`."""
        import numpy as np

        b = self.baseline if baseline is None else self._name(baseline, "baseline")
        r = self.ratios(name, b)
        low, high = _bootstrap_median(r, self.confidence, self.seed)
        mid = float(np.median(r))
        return Verdict(name, b, mid, min(low, mid), max(high, mid), self.confidence, self.threshold, len(r))

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """Every function but the baseline → its :class:`Verdict` against the baseline."""
        return {k: self.verdict(k) for k in self.names if k != self.baseline}


# ---- timing the rounds ------------------------------------------------------------------------------

def _calibrate(fn: Callable[[], Any], min_time: float, clock: Callable[[], float]) -> int:
    """Calls per round so that a round of ``fn`` lasts at least ``min_time``: 1, 2, 5, 10, 20, 50 … (like timeit)."""
    number = 1
    while True:
        t0 = clock()
        for _ in range(number):
            fn()
        if clock() - t0 >= min_time or number >= 10**6:
            return number
        number = number * 5 // 2 if str(number)[0] == "2" else number * 2

def compare(fns: Mapping[str, Callable[[], Any]], *, baseline: str | None = None, rounds: int = 15,
            warmup: int = 2, number: int | Mapping[str, int] | None = None, min_time: float = 2e-3,
            order: str = "shuffle", threshold: float = NOISE_THRESHOLD, confidence: float = 0.95, seed: int = 0,
            clock: Callable[[], float] = time.perf_counter, max_rounds: int | None = None,
            settle: Sequence[tuple[str, str]] | None = None) -> Comparison:
    """Time several functions in interleaved rounds and compare each with a baseline.

    Every function is first called ``warmup`` times. Then each round calls
    every function ``number`` times in a row and records its time per call;
    the order of the functions changes every round (``order="shuffle"``:
    a seeded random permutation; ``"rotate"``: round ``i`` starts with
    function ``i mod k``), so that no function always runs first, after the
    same neighbour, or in the same phase of a drift. With ``number=None``
    the calls per round are calibrated per function (1, 2, 5, 10, 20 …
    until a round lasts ``min_time``), so that the clock's resolution and
    its own overhead do not matter. The ratios the verdicts use are paired:
    a function's time over the baseline's *in the same round*, so a slow
    minute slows both sides of each ratio. See chapter 7, "Deploying to an
    NPU" (chapters/07_deploy.md), and CONTRIBUTING.md, "How to compare two timings".

    Parameters
    ----------
    fns : mapping of str to callable
        Two or more functions called with no arguments, by name.
    baseline : str, optional
        The name the verdicts compare with (default: the first).
    rounds : int
        Interleaved rounds (>= 3).
    warmup : int
        Untimed calls of each function before anything is timed (>= 0).
    number : int or mapping of str to int, optional
        Calls per round (>= 1), for all or per name; default: calibrated.
    min_time : float
        Seconds a calibrated round lasts at least (> 0).
    order : {"shuffle", "rotate"}
    threshold : float
        Noise threshold of the verdicts, in [0, 1) (default :data:`NOISE_THRESHOLD`).
    confidence : float
        Confidence level of the verdicts' intervals, in (0, 1).
    seed : int
        Seed of the shuffled order and the bootstrap (>= 0).
    clock : callable
        Returns seconds; ``time.perf_counter`` unless a test passes a fake one.
    max_rounds : int, optional
        If given (>= ``rounds``): while some verdict against the baseline
        has an interval wider than :data:`SPREAD_CEILING` (its
        :attr:`Verdict.spread`, which a constant factor on either side does
        not change), time ``rounds`` more rounds, up to ``max_rounds`` in
        all. An indistinguishable verdict still that wide is ``"unclear"``
        (:attr:`Verdict.outcome`): one this run could not decide.
    settle : sequence of (name, baseline) pairs, optional
        The verdicts ``max_rounds`` waits for (default: every function
        against ``baseline``).

    Returns
    -------
    Comparison

    Raises
    ------
    TypeError, ValueError
        If ``fns`` is not a mapping of at least two names to callables, or
        another argument has the wrong type or is out of range.

    Examples
    --------
    A fake clock that each call advances by a known amount shows the rule
    without timing anything (a real call would be timed the same way):

    >>> now = [0.0]
    >>> def takes(seconds):
    ...     def fn():
    ...         now[0] += seconds
    ...     return fn
    >>> c = compare({"base": takes(1e-3), "twice": takes(2e-3), "same": takes(1e-3)},
    ...             clock=lambda: now[0], rounds=5)
    >>> c.number["base"], c.number["twice"], round(c["twice"], 6)
    (2, 1, 0.002)
    >>> {k: v.word for k, v in c.verdicts.items()}
    {'twice': 'slower', 'same': 'indistinguishable'}
    """
    if not isinstance(fns, Mapping):
        raise TypeError(f"fns must be a mapping of names to functions, got {type(fns).__name__}")
    if len(fns) < 2:
        raise ValueError(f"fns must hold at least two functions to compare, got {len(fns)}")
    for k, f in fns.items():
        if not isinstance(k, str) or not k:
            raise TypeError(f"fns: each name must be a non-empty string, got {k!r}")
        if not callable(f):
            raise TypeError(f"fns[{k!r}] must be callable, got {type(f).__name__}")
    names = tuple(fns)
    baseline = names[0] if baseline is None else _check.one_of(baseline, "baseline", names)
    rounds = _check.integer(rounds, "rounds", minimum=3)
    warmup = _check.integer(warmup, "warmup", minimum=0)
    min_time = _check.positive(min_time, "min_time")
    _check.one_of(order, "order", ("shuffle", "rotate"))
    threshold = _check.fraction(threshold, "threshold")
    if _check.fraction(confidence, "confidence") == 0:
        raise ValueError("confidence must be in (0, 1), got 0")
    seed = _check.integer(seed, "seed", minimum=0)
    if not callable(clock):
        raise TypeError(f"clock must be callable, got {type(clock).__name__}")
    limit = rounds if max_rounds is None else _check.integer(max_rounds, "max_rounds", minimum=rounds)
    if settle is None:
        pairs = [(k, baseline) for k in names if k != baseline]
    else:
        pairs = []
        for i, pair in enumerate(_check.sequence(settle, "settle")):
            a, b = _check.sequence(pair, f"settle[{i}]", length=2)
            pairs.append((_check.one_of(a, f"settle[{i}][0]", names), _check.one_of(b, f"settle[{i}][1]", names)))
    if isinstance(number, Mapping):
        calls = {k: _check.integer(number.get(k), f"number[{k!r}]", minimum=1) for k in names}
    elif number is not None:
        calls = dict.fromkeys(names, _check.integer(number, "number", minimum=1))
    else:
        calls = {}
    for k in names:
        for _ in range(warmup):
            fns[k]()
    if not calls:
        calls = {k: _calibrate(fns[k], min_time, clock) for k in names}
    import numpy as np

    rng = np.random.default_rng(seed)
    times: dict[str, list[float]] = {k: [] for k in names}
    done = 0
    while True:
        for i in range(done, min(done + rounds, limit)):
            turn = ([names[j] for j in rng.permutation(len(names))] if order == "shuffle"
                    else list(names[i % len(names):] + names[:i % len(names)]))
            for k in turn:
                fn, n = fns[k], calls[k]
                t0 = clock()
                for _ in range(n):
                    fn()
                times[k].append(max(clock() - t0, 1e-12) / n)   # a clock that did not tick: one picosecond
        done = len(times[baseline])
        result = Comparison.from_times(times, baseline=baseline, number=calls, threshold=threshold,
                                       confidence=confidence, seed=seed)
        if done >= limit or all(result.verdict(a, b).spread <= SPREAD_CEILING for a, b in pairs):
            return result


def in_blocks(fns: Mapping[str, Callable[[], Any]], *, blocks: int = 3, seed: int = 0,
              **options: Any) -> Iterator[Comparison]:
    """Time ``fns`` in up to ``blocks`` blocks of interleaved rounds: an iterator of every round so far.

    The first block is :func:`compare` with ``options`` (``rounds``,
    ``warmup``, ``number`` …), timed when this is called; each step of the
    iterator after it times the next block. Each later block times as many rounds again,
    in a fresh order (seed ``seed + k``), as warm as the rounds before it (no
    warm-up) and with the first block's calls per round, so the rounds add
    up as if one run had timed them all; the comparison yielded judges all
    of them. The caller stops when the rounds so far can decide
    (:func:`recheck`, :func:`npukit.teach.retime.retimed`). When the blocks
    are about equally noisy, twice the rounds give an interval about 1/√2 as
    wide; a burst of load in one block stays among the rounds, and the
    blocks after it outvote it. The calls per round stay those the first
    block calibrated, even if it calibrated during a burst.

    Raises
    ------
    TypeError, ValueError
        As for :func:`compare`; also if ``blocks`` is not an integer >= 1.

    Examples
    --------
    >>> now = [0.0]
    >>> def takes(seconds):
    ...     def fn():
    ...         now[0] += seconds
    ...     return fn
    >>> fns = {"one": takes(1e-3), "three": takes(3e-3)}
    >>> [c.verdict("three").rounds for c in in_blocks(fns, clock=lambda: now[0], rounds=5)]
    [5, 10, 15]
    """
    blocks = _check.integer(blocks, "blocks", minimum=1)
    seed = _check.integer(seed, "seed", minimum=0)
    first = compare(fns, seed=seed, **options)   # timed now, so that bad input raises at the call

    def every_round_so_far() -> Iterator[Comparison]:
        yield first
        pooled = {name: list(times) for name, times in first.times.items()}
        more = {**options, "warmup": 0, "number": first.number}
        for k in range(1, blocks):
            for name, times in compare(fns, seed=seed + k, **more).times.items():
                pooled[name].extend(times)
            yield Comparison.from_times(pooled, baseline=first.baseline, number=first.number,
                                        threshold=first.threshold, confidence=first.confidence, seed=seed + k)

    return every_round_so_far()


# ---- judging a prediction ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Judgement:
    """A timing prediction decided against a measured :class:`Verdict`: pass, fail or re-run.

    Made by :func:`judge`; ``outcome`` is ``"pass"``, ``"fail"`` or
    ``"rerun"``, ``tolerance`` the relative band the prediction was held to
    and ``message`` one line a lab's check prints or raises. See
    :func:`judge` for the rule.
    """

    outcome: str
    predicted: float
    verdict: Verdict
    tolerance: float
    floor: float
    ceiling: float

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def message(self) -> str:
        v, p = self.verdict, self.predicted
        measured = f"the measured ratio {v.ratio:.2f} ({v.interval})"
        off = max(p / v.ratio, v.ratio / p) - 1
        if self.outcome == "pass":
            return f"your prediction {p:.3g} is within {off:.0%} of {measured}; the tolerance was {self.tolerance:.0%}"
        if self.outcome == "fail":
            return (f"your prediction {p:.3g} is {off:.0%} away from {measured}, beyond the tolerance of "
                    f"{self.tolerance:.0%} that the rounds' spread allows")
        return (f"too noisy to judge: {measured} spreads by ±{v.spread:.0%}, more than the ±{self.ceiling:.0%} "
                "within which a right prediction can be told from a wrong one; other programs are using this "
                "machine. Re-run the check (and close what you can)")


def judge(predicted: float, verdict: Verdict, *, floor: float = 0.1, ceiling: float = 0.35) -> Judgement:
    """Decide a predicted ratio against a measured one: ``"pass"``, ``"fail"`` or ``"rerun"``.

    The rule a timing check follows (issue 19; see chapter 3's lab, labs/03_graphs.ipynb):

    * the tolerance is the measured interval's relative half-width
      (:attr:`Verdict.spread`), but never less than ``floor`` (a right
      prediction is allowed that much model error even on a quiet machine)
      and never more than ``ceiling``;
    * if the spread is at most ``ceiling``, the prediction passes when it is
      within the tolerance of the measured ratio (a factor of ``1 +
      tolerance`` either way) and fails otherwise;
    * if the spread is larger, the rounds cannot tell a right prediction
      from a wrong one: the outcome is ``"rerun"`` — unless the prediction
      lies outside the whole interval widened by ``ceiling``, which no ratio
      the rounds allow would pass: then it fails.

    Choose ``ceiling`` below the smallest factor by which the lab's typical
    wrong answers miss (a FLOPs-for-MACs slip misses by 2: a ceiling of 0.35
    keeps it out), and ``floor`` above the model error a right answer has.

    Parameters
    ----------
    predicted : float
        The learner's ratio (> 0), in the verdict's units: time of the
        verdict's ``name`` over its ``baseline``'s.
    verdict : Verdict
    floor, ceiling : float
        Relative tolerances with 0 <= floor <= ceiling < 1.

    Raises
    ------
    TypeError, ValueError
        For a prediction that is not a finite number > 0, a ``verdict`` that
        is not a :class:`Verdict`, or tolerances out of order or range.

    Examples
    --------
    >>> v = Verdict("tiled", "numpy", ratio=2.0, low=1.9, high=2.1, confidence=0.95, threshold=0.05, rounds=15)
    >>> judge(2.1, v).outcome, judge(4.0, v).outcome
    ('pass', 'fail')
    >>> noisy = Verdict("tiled", "numpy", ratio=2.0, low=1.2, high=3.5, confidence=0.95, threshold=0.05, rounds=15)
    >>> judge(2.1, noisy).outcome, judge(9.0, noisy).outcome
    ('rerun', 'fail')
    """
    predicted = _check.positive(predicted, "predicted")
    _check.instance(verdict, "verdict", Verdict, "measure.Verdict")
    floor, ceiling = _check.fraction(floor, "floor"), _check.fraction(ceiling, "ceiling")
    if floor > ceiling:
        raise ValueError(f"floor must be <= ceiling, got floor={floor} and ceiling={ceiling}")
    spread = verdict.spread
    tolerance = min(max(spread, floor), ceiling)
    within = 1 / (1 + tolerance) <= predicted / verdict.ratio <= 1 + tolerance
    if spread <= ceiling:
        outcome = "pass" if within else "fail"
    else:
        possible = verdict.low / (1 + ceiling) <= predicted <= verdict.high * (1 + ceiling)
        outcome = "rerun" if possible else "fail"
    return Judgement(outcome, predicted, verdict, tolerance, floor, ceiling)


def recheck(predicted: float, fns: Mapping[str, Callable[[], Any]], *, floor: float = 0.1, ceiling: float = 0.35,
            attempts: int = 2, **options: Any) -> Judgement:
    """Measure a ratio again in interleaved rounds and :func:`judge` a prediction of it.

    ``fns`` holds exactly two functions: the baseline first, then the one
    whose time over the baseline's was predicted. They are timed with
    :func:`compare` (``options`` are its keyword arguments: ``rounds``,
    ``number``, ``min_time`` …). A ``"rerun"`` outcome times as many rounds
    again and judges all of them (:func:`in_blocks`), up to ``attempts``
    blocks in all; the last judgement is returned. A timing check calls this inside the check, so
    that the ratio it grades was measured while the check ran, both sides
    in turns (CONTRIBUTING.md, "How to compare two timings").

    Raises
    ------
    TypeError, ValueError
        As for :func:`judge` and :func:`compare`; also if ``fns`` does not
        hold exactly two functions or ``attempts`` is not an integer >= 1.

    Examples
    --------
    >>> now = [0.0]
    >>> def takes(seconds):
    ...     def fn():
    ...         now[0] += seconds
    ...     return fn
    >>> j = recheck(3.0, {"one": takes(1e-3), "three": takes(3e-3)}, clock=lambda: now[0], rounds=5)
    >>> j.outcome, round(j.verdict.ratio, 3)
    ('pass', 3.0)
    """
    if not isinstance(fns, Mapping) or len(fns) != 2:
        raise ValueError("fns must be a mapping of exactly two functions: the baseline, then the predicted one")
    predicted = _check.positive(predicted, "predicted")
    attempts = _check.integer(attempts, "attempts", minimum=1)
    if "baseline" in options:
        raise TypeError("recheck takes no baseline= option: the first function of fns is the baseline")
    base, name = tuple(fns)
    for c in in_blocks(fns, blocks=attempts, **options):
        result = judge(predicted, c.verdict(name, base), floor=floor, ceiling=ceiling)
        if result.outcome != "rerun":
            break
    return result
