"""Tests of npukit.timing (re-exported by npukit.measure): interleaved rounds, verdicts and judged predictions.

Nothing here times real code. Every function under test is a fake whose call
advances a fake clock by a chosen duration, with seeded multiplicative noise,
so the tests are exact, fast and cannot flake:

* a function twice as slow is "slower", half as slow "faster", and two
  identical noisy functions are "indistinguishable" in almost every seed;
* interleaving is what makes a comparison survive a drifting machine: with the
  machine slowing down during the run, paired per-round ratios still find two
  identical functions indistinguishable, where timing one after the other
  would call the second slower;
* the order changes every round, warm-up and calibration make the calls they say;
* the verdict's rule at its edges, its sentence for each outcome;
* judge and recheck: pass, fail and "rerun", the floor and the ceiling.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from npukit import measure, timing
from npukit.timing import Comparison, Verdict, compare, judge, recheck


class FakeClock:
    """A clock that only the fake functions move: each call adds its duration × noise × the machine's slowdown."""

    def __init__(self, seed: int = 0, drift: float = 0.0):
        self.now = 0.0
        self.rng = np.random.default_rng(seed)
        self.drift = drift  # the machine slows by this fraction per second of fake time
        self.calls: list[str] = []

    def __call__(self) -> float:
        return self.now

    def fn(self, name: str, seconds: float, sigma: float = 0.05):
        def call():
            self.calls.append(name)
            self.now += seconds * self.rng.lognormal(0.0, sigma) * (1 + self.drift * self.now)
        return call


def test_measure_reexports_the_one_compare():
    assert measure.compare is timing.compare and measure.Verdict is timing.Verdict
    assert measure.judge is timing.judge and measure.recheck is timing.recheck


def test_twice_as_slow_is_slower_and_half_is_faster():
    clock = FakeClock(seed=1)
    c = compare({"base": clock.fn("base", 1e-3), "slow": clock.fn("slow", 2e-3), "fast": clock.fn("fast", 0.5e-3)},
                clock=clock, rounds=15)
    slow, fast = c.verdict("slow"), c.verdict("fast")
    assert slow.word == "slower" and slow.low <= 2.0 <= slow.high and abs(slow.ratio - 2) < 0.1
    assert fast.word == "faster" and fast.low <= 0.5 <= fast.high and abs(fast.speedup - 2) < 0.2
    assert set(c.verdicts) == {"slow", "fast"}


def test_identical_functions_are_indistinguishable_almost_always():
    words = []
    for seed in range(40):
        clock = FakeClock(seed=seed)
        c = compare({"a": clock.fn("a", 1e-3, sigma=0.08), "b": clock.fn("b", 1e-3, sigma=0.08)},
                    clock=clock, rounds=15, seed=seed)
        words.append(c.verdict("b").word)
    assert words.count("indistinguishable") >= 38, words


def test_a_small_true_difference_below_the_threshold_is_not_called_one():
    clock = FakeClock(seed=3)
    c = compare({"a": clock.fn("a", 1e-3, sigma=0.01), "b": clock.fn("b", 1.03e-3, sigma=0.01)},
                clock=clock, rounds=31)
    v = c.verdict("b")
    assert v.low > 1.0 and v.word == "indistinguishable"           # real, but under the 5 % threshold
    assert c.verdict("b").word != compare({"a": clock.fn("a", 1e-3, 0.01), "b": clock.fn("b", 1.03e-3, 0.01)},
                                          clock=clock, rounds=31, threshold=0.01).verdict("b").word


def test_interleaving_survives_a_drifting_machine():
    """The machine slows down 2 % per fake millisecond: sequential timing blames whoever runs second."""
    clock = FakeClock(seed=5, drift=20.0)
    c = compare({"a": clock.fn("a", 1e-4, 0.02), "b": clock.fn("b", 1e-4, 0.02)}, clock=clock, rounds=21, number=5)
    assert c.verdict("b").word == "indistinguishable"
    later = FakeClock(seed=5, drift=20.0)                        # the same two functions, one after the other
    a, b = later.fn("a", 1e-4, 0.02), later.fn("b", 1e-4, 0.02)
    t0 = later(); [a() for _ in range(105)]; ta = later() - t0
    t0 = later(); [b() for _ in range(105)]; tb = later() - t0
    assert tb / ta > 1 + timing.NOISE_THRESHOLD                  # …which would have been called "slower"


def test_the_order_changes_every_round():
    clock = FakeClock()
    compare({"a": clock.fn("a", 1e-3), "b": clock.fn("b", 1e-3), "c": clock.fn("c", 1e-3)}, clock=clock, rounds=12,
            warmup=0, number=1)
    rounds = [tuple(clock.calls[i:i + 3]) for i in range(0, 36, 3)]
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds)      # every function once per round
    assert len(set(rounds)) > 2 and {r[0] for r in rounds} == {"a", "b", "c"}
    clock = FakeClock()
    compare({"a": clock.fn("a", 1e-3), "b": clock.fn("b", 1e-3)}, clock=clock, rounds=4, warmup=0, number=1,
            order="rotate")
    assert clock.calls == ["a", "b", "b", "a", "a", "b", "b", "a"]


def test_warmup_and_calibration_make_the_calls_they_say():
    clock = FakeClock()
    c = compare({"short": clock.fn("short", 1e-4, 0), "long": clock.fn("long", 3e-3, 0)}, clock=clock, rounds=3,
                warmup=2, min_time=1.5e-3)
    assert c.number == {"short": 20, "long": 1}                     # 1, 2, 5, 10, 20: the first round ≥ 1.5 ms
    calibration = 1 + 2 + 5 + 10 + 20
    assert clock.calls.count("short") == 2 + calibration + 3 * 20
    assert clock.calls.count("long") == 2 + 1 + 3 * 1
    assert c["short"] == pytest.approx(1e-4) and c.median("long") == pytest.approx(3e-3)


def test_comparison_gives_whiskers_and_paired_ratios():
    c = Comparison.from_times({"a": [1.0, 2.0, 3.0, 4.0], "b": [2.0, 4.0, 6.0, 8.0]})
    assert c.ratios("b") == (2.0, 2.0, 2.0, 2.0) and c.verdict("b").low == c.verdict("b").high == 2.0
    assert c.ratios("a", "b") == (0.5,) * 4 and c.verdict("a", baseline="b").word == "faster"
    assert c.spread("a") == (1.75, 3.25) and c.whiskers("a") == (2.5, 0.75, 0.75)
    assert c.rounds == 4 and c.names == ("a", "b") and c.baseline == "a"


@pytest.mark.parametrize("low, high, word", [
    (1.051, 1.2, "slower"), (1.05, 1.2, "indistinguishable"), (0.8, 1 / 1.05 - 1e-9, "faster"),
    (0.8, 1 / 1.05 + 1e-9, "indistinguishable"), (0.5, 2.0, "indistinguishable"),
])
def test_the_verdict_rule_at_its_edges(low, high, word):
    v = Verdict("b", "a", ratio=math.sqrt(low * high), low=low, high=high, confidence=0.95, threshold=0.05, rounds=9)
    assert v.word == word


def test_each_phrase_reads_as_its_outcome():
    def phrase(ratio, low, high):
        return Verdict("INT8", "FP32", ratio, low, high, 0.95, 0.05, 21).phrase
    assert phrase(0.7, 0.65, 0.75).startswith("faster than FP32: 0.70 of its time (95% interval 0.65 to 0.75")
    assert phrase(1.4, 1.3, 1.5).startswith("slower than FP32: 1.40 times its time")
    same = phrase(1.0, 0.97, 1.04)
    assert same.startswith("indistinguishable from FP32 within the noise: 0.97 to 1.04") and "under 5%" in same


def test_judge_passes_fails_and_asks_for_a_rerun():
    tight = Verdict("x", "y", 2.0, 1.95, 2.05, 0.95, 0.05, 15)
    assert judge(2.15, tight).outcome == "pass"                     # within the 10 % floor
    assert judge(2.3, tight).outcome == "fail" and judge(1.0, tight).outcome == "fail"
    medium = Verdict("x", "y", 2.0, 1.6, 2.4, 0.95, 0.05, 15)      # spread 25 %: the tolerance follows it
    assert judge(2.45, medium).outcome == "pass" and judge(2.6, medium).outcome == "fail"
    assert judge(2.45, medium).tolerance == pytest.approx(0.25)
    noisy = Verdict("x", "y", 2.0, 1.2, 3.6, 0.95, 0.05, 15)       # spread 80 %, above the 35 % ceiling
    assert judge(2.0, noisy).outcome == "rerun" and judge(4.0, noisy).outcome == "rerun"
    assert judge(8.0, noisy).outcome == "fail" and judge(0.5, noisy).outcome == "fail"  # wrong whatever the truth
    assert "Re-run" in judge(2.0, noisy).message and "within" in judge(2.15, tight).message
    assert judge(2.3, tight).passed is False and judge(2.15, tight).passed is True


def test_judge_floor_and_ceiling():
    v = Verdict("x", "y", 1.0, 0.99, 1.01, 0.95, 0.05, 15)
    assert judge(1.25, v, floor=0.3, ceiling=0.5).outcome == "pass"
    assert judge(1.25, v, floor=0.1, ceiling=0.5).outcome == "fail"
    with pytest.raises(ValueError, match="floor must be <= ceiling"):
        judge(1.0, v, floor=0.4, ceiling=0.3)


def test_recheck_measures_both_sides_in_turns_and_judges():
    clock = FakeClock(seed=2)
    right = recheck(3.0, {"one": clock.fn("one", 1e-3), "three": clock.fn("three", 3e-3)}, clock=clock, rounds=9)
    assert right.outcome == "pass" and right.verdict.baseline == "one" and right.verdict.name == "three"
    clock = FakeClock(seed=2)
    assert recheck(1.5, {"one": clock.fn("one", 1e-3), "three": clock.fn("three", 3e-3)}, clock=clock,
                   rounds=9).outcome == "fail"


def test_recheck_tries_again_when_too_noisy():
    clock = FakeClock(seed=4)
    fns = {"a": clock.fn("a", 1e-3, sigma=1.0), "b": clock.fn("b", 2e-3, sigma=1.0)}   # a very busy machine
    once = recheck(2.0, fns, clock=clock, rounds=5, attempts=1, number=1, warmup=0)
    assert once.outcome == "rerun"
    before = len(clock.calls)
    again = recheck(2.0, fns, clock=clock, rounds=5, attempts=3, number=1, warmup=0)
    assert again.outcome == "rerun" and len(clock.calls) - before == 3 * 2 * 5      # three measurements of 5 rounds


def test_compare_refuses_bad_arguments():
    ok = {"a": lambda: None, "b": lambda: None}
    with pytest.raises(ValueError, match="at least two"):
        compare({"a": lambda: None})
    with pytest.raises(TypeError, match=r"fns\['b'\] must be callable"):
        compare({"a": lambda: None, "b": 3})
    with pytest.raises(ValueError, match="baseline must be one of"):
        compare(ok, baseline="c")
    with pytest.raises(ValueError, match="rounds must be >= 3"):
        compare(ok, rounds=2)
    with pytest.raises(ValueError, match="order must be one of"):
        compare(ok, order="random")
    with pytest.raises(ValueError, match=r"times must hold the same number of rounds"):
        Comparison.from_times({"a": [1.0, 2.0], "b": [1.0, 2.0, 3.0]})


def test_a_wide_indistinguishable_interval_is_unclear_and_more_rounds_settle_it():
    # very noisy identical functions: 5 rounds leave the interval wide ("unclear"); max_rounds adds rounds
    # until it is narrow enough to say "indistinguishable", or stops at the cap
    clock = FakeClock(seed=4)
    few = compare({"a": clock.fn("a", 1e-3, sigma=0.6), "b": clock.fn("b", 1e-3, sigma=0.6)},
                  clock=clock, rounds=5, number=1)
    assert few.verdict("b").outcome == "unclear" and "not told apart from a" in few.verdict("b").statement
    clock = FakeClock(seed=4)
    more = compare({"a": clock.fn("a", 1e-3, sigma=0.25), "b": clock.fn("b", 1e-3, sigma=0.25)},
                   clock=clock, rounds=5, number=1, max_rounds=200)
    v = more.verdict("b")
    assert 5 < more.rounds <= 200 and more.rounds % 5 == 0 and v.outcome == "indistinguishable"
    assert v.spread <= timing.SPREAD_CEILING and v.statement == v.phrase
    clock = FakeClock(seed=4)
    capped = compare({"a": clock.fn("a", 1e-3, sigma=2.0), "b": clock.fn("b", 1e-3, sigma=2.0)},
                     clock=clock, rounds=5, number=1, max_rounds=12)
    assert capped.rounds == 12 and capped.verdict("b").outcome == "unclear"
    clear = Verdict("a", "b", 0.20, 0.08, 0.90, 0.95, 0.05, 5)             # wide but wholly below 1: faster
    assert clear.word == "faster" and clear.outcome == "faster"
    wide = Verdict("a", "b", 0.20, 0.08, 0.97, 0.95, 0.05, 5)              # chapter 4's 'indistinguishable' 0.20
    assert wide.word == "indistinguishable" and wide.outcome == "unclear"
