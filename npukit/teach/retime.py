"""What every predict-then-measure check shares: the ratio it grades is timed again inside the check.

The invariant: **a timing check grades a prediction only against a ratio it measured itself, while it
ran, in interleaved rounds, in CPU time, with a tolerance set by those rounds' spread.** A lab measures
something (a ReLU's rate, a product's time, a speed-up), the learner predicts it, and the check
compares. Compared with the lab's own measurement, taken in another cell minutes earlier, the grade
would depend on what else the machine was doing then: issue 19 saw the instructor's answer refused
(a ReLU re-timed at a third of the rate the lab's profile promised, on a machine with a load of 9 on
2 cores) and a wrong one pass. So each check here:

* **times again** what it compares, with :func:`npukit.measure.compare`: the functions take turns in
  interleaved rounds (the order shuffled each round) and every ratio is paired by round, so a burst
  of load slows both sides of the ratios it touches and the median over rounds outvotes it;
* **in CPU time**: the clock is :data:`PROCESS_TIME` (``time.process_time``, every thread of this
  process: a kernel split over threads, a runtime's worker thread) or :data:`THREAD_TIME`
  (``time.thread_time``, the calling thread alone, for single-threaded code). A core taken away by
  another program stops that clock, so time spent waiting for a core does not count; what other
  programs do to the memory bus and the caches still does, to both sides of a round alike.
  (A check of overlap, such as lab 7's two requests, needs wall time: it passes
  ``time.perf_counter``.) On a machine with two busy processes competing for its two cores the
  interleaved ratios spread by a few percent in CPU time, against tens of percent in wall time;
* **in relative units**: the prediction is turned into a ratio of two of the check's own timings
  (a ReLU's time over a copy's, a 72³ product's over a 96³ one's), so the speed of the machine at
  the moment cancels out;
* **with a tolerance from the rounds**: :func:`npukit.measure.judge` holds the prediction to the
  measured interval's relative half-width, never below ``floor`` (the model error a right
  prediction has) and never above ``ceiling`` (chosen below the factor by which the lab's typical
  wrong answers miss). When the rounds spread more than ``ceiling``, a right prediction cannot be
  told from a wrong one: the check times ``rounds`` more and judges all its rounds together
  (:func:`npukit.measure.in_blocks`, ``attempts`` blocks in all: when the blocks are about equally
  noisy, twice the rounds give an interval about 1/√2 as wide; a burst of load in one block stays
  among the rounds, and the blocks after it outvote it) and, if it still cannot tell, raises
  :class:`TooNoisy`, which asks for a re-run instead of failing a right
  answer or passing a wrong one. A prediction outside every ratio the rounds allow fails at once.

No learner's code runs while the check times: a check calls the learner's function before the
rounds (a prediction) or after them (a prediction from the rounds' own facts). When grading, the
checks run in the grader's process (chapters/instructor.md, "Grading"), so the clocks and the
timed code are out of the learner's reach. See CONTRIBUTING.md, "How to compare two timings", and
the instructor guide's exercise table for each check's floor and ceiling.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Mapping

from .. import measure
from .core import CheckFailed

__all__ = ["WALL_TIME", "PROCESS_TIME", "THREAD_TIME", "TooNoisy", "retimed"]

#: Wall time, as it was when npukit.teach was imported: for a check of overlap (work that waits, not computes).
WALL_TIME = time.perf_counter
#: CPU time of every thread of this process, as it was when npukit.teach was imported.
PROCESS_TIME = time.process_time
#: CPU time of the calling thread, as it was when npukit.teach was imported.
THREAD_TIME = time.thread_time

#: How many measurements each call of :func:`retimed` made (1 unless the rounds spread too much), in order:
#: the load test (tests/test_timing_checks.py) reports the re-measurements it caused.
MEASUREMENTS: list = []


class TooNoisy(CheckFailed):
    """The check's rounds spread too much to tell a right prediction from a wrong one: re-run the check."""


def retimed(name: str, fns: Mapping[str, Callable[[], Any]],
            predictions: Mapping[str, float] | Callable[[measure.Comparison], Mapping[str, float]], *,
            floor: float, ceiling: float, clock: Callable[[], float], rounds: int = 21, attempts: int = 3,
            reference: Mapping[str, float] | None = None,
            **options: Any) -> tuple[measure.Comparison, dict[str, measure.Judgement]]:
    """Time ``fns`` in interleaved rounds and judge each predicted ratio against the rounds' own.

    ``fns`` are the functions timed, the baseline first; ``predictions`` maps a name of ``fns`` to the
    predicted ratio of its time over the baseline's, or is a function that makes that mapping from the
    :class:`~npukit.measure.Comparison` just measured (a prediction computed from facts the same rounds
    measured; the learner's function is called then, never while the rounds run). ``options`` go to
    :func:`npukit.measure.compare` (``number``, ``min_time``, ``warmup`` …).

    Returns the comparison and one :class:`~npukit.measure.Judgement` per prediction once no judgement
    is ``"rerun"`` or one is ``"fail"`` (a prediction outside every ratio the rounds allow fails
    however noisy they were). While a judgement is ``"rerun"``, ``rounds`` more rounds are timed
    (in a fresh order, as warm and with as many calls per round as before) and every judgement is
    made again on all the rounds so far; :class:`TooNoisy` is raised when ``attempts`` such blocks
    together still leave a judgement at ``"rerun"``.

    ``reference`` maps a name to the ratio the check's own model predicts (the lesson's answer). A
    prediction within ``floor`` of it passes even where the rounds measured something else: the
    machine did not behave as the model says while the check ran (a ReLU's stores may skip the
    extra write-allocate read, on one run and not the next), and failing the learner would fail the
    lesson's own answer. The check says so beside its ✓. Any other prediction is graded as usual.

    Examples
    --------
    A fake clock that each call advances by a known amount shows the rule without timing anything:

    >>> now = [0.0]
    >>> def takes(seconds):
    ...     def fn():
    ...         now[0] += seconds
    ...     return fn
    >>> fns = {"copy": takes(2e-3), "relu": takes(3e-3)}
    >>> c, j = retimed("ReLU", fns, {"relu": 1.0}, floor=0.15, ceiling=0.2, clock=lambda: now[0], rounds=5)
    >>> round(c.verdict("relu").ratio, 3), j["relu"].outcome
    (1.5, 'fail')
    """
    judgements: dict[str, measure.Judgement] = {}
    for attempt, comparison in enumerate(measure.in_blocks(fns, blocks=attempts, rounds=rounds, clock=clock,
                                                           **options)):
        wanted = predictions(comparison) if callable(predictions) else predictions
        judgements = {k: measure.judge(p, comparison.verdict(k), floor=floor, ceiling=ceiling)
                      for k, p in wanted.items()}
        astray = {k for k, j in judgements.items() if j.outcome == "fail" and k in (reference or {})
                  and abs(wanted[k] / reference[k] - 1) <= floor     # the learner gave the lesson's answer
                  and measure.judge(reference[k], comparison.verdict(k), floor=floor,
                                    ceiling=ceiling).outcome == "fail"}
        judgements = {k: dataclasses.replace(j, outcome="pass") if k in astray else j for k, j in judgements.items()}
        outcomes = {j.outcome for j in judgements.values()}
        if "fail" in outcomes or "rerun" not in outcomes:
            MEASUREMENTS.append(attempt + 1)
            return comparison, judgements
    MEASUREMENTS.append(attempts)
    kind = "wall time" if clock is WALL_TIME else "CPU time"
    noisy = next(j for j in judgements.values() if j.outcome == "rerun")
    raise TooNoisy(f"{name}: {noisy.message}. (The check measured {attempts} times, in interleaved rounds of {kind}, "
                   f"and even all {noisy.verdict.rounds} rounds together spread too much to grade your prediction "
                   "either way.)")
