"""npukit.teach.retime: a check that cannot tell measures more rounds and judges them all together.

A fake clock that each call advances by a chosen amount stands in for the machine, so each test knows
the ratios its rounds hold: a burst of load in the first block of rounds, quiet rounds after it.
"""

from __future__ import annotations

import itertools

import pytest

from npukit.teach import retime
from npukit.teach.retime import TooNoisy


def _machine(relu_seconds):
    """A copy that takes 1 ms per call and a ReLU that takes the next of ``relu_seconds`` (ms) per call."""
    now, calls = [0.0], {"copy": 0, "relu": 0}
    relu = iter(relu_seconds)

    def copy():
        calls["copy"] += 1
        now[0] += 1e-3

    def rel():
        calls["relu"] += 1
        now[0] += next(relu) * 1e-3

    return {"copy": copy, "relu": rel}, (lambda: now[0]), calls


def test_a_noisy_block_is_outvoted_by_the_quiet_rounds_measured_after_it():
    burst = [3.0, 0.6, 3.0, 0.6, 1.5, 3.0, 0.6, 1.5, 3.0]          # 9 rounds a factor 5 apart: cannot tell
    quiet = itertools.repeat(1.5)
    fns, clock, calls = _machine(itertools.chain([1.5], burst, quiet))   # the warm-up call first
    before = len(retime.MEASUREMENTS)
    c, j = retime.retimed("ReLU", fns, {"relu": 1.5}, floor=0.15, ceiling=0.2, clock=clock, rounds=9,
                          number=1, warmup=1)
    assert j["relu"].passed and c.verdict("relu").rounds == 18          # both blocks, judged together
    assert c.verdict("relu").ratio == pytest.approx(1.5)
    assert retime.MEASUREMENTS[before:] == [2]
    assert calls == {"copy": 1 + 18, "relu": 1 + 18}                     # warmed up once, not once per block


def test_a_wrong_prediction_still_fails_on_the_pooled_rounds():
    burst = [3.0, 0.6, 3.0, 0.6, 1.5, 3.0, 0.6, 1.5, 3.0]
    fns, clock, _ = _machine(itertools.chain([1.5], burst, itertools.repeat(1.5)))
    c, j = retime.retimed("ReLU", fns, {"relu": 1.0}, floor=0.15, ceiling=0.2, clock=clock, rounds=9,
                          number=1, warmup=1)
    assert j["relu"].outcome == "fail" and c.verdict("relu").rounds == 18


def test_rounds_that_stay_noisy_raise_too_noisy_naming_every_round():
    fns, clock, calls = _machine(itertools.cycle([3.0, 0.6, 1.5]))
    with pytest.raises(TooNoisy, match=r"measured 3 times.*even all 27 rounds together spread too much"):
        retime.retimed("ReLU", fns, {"relu": 1.5}, floor=0.15, ceiling=0.2, clock=clock, rounds=9,
                       number=1, warmup=1)
    assert calls["copy"] == 1 + 27


def test_later_blocks_call_as_often_per_round_as_the_first_calibrated():
    fns, clock, calls = _machine(itertools.chain([1.5] * 3, [3.0, 0.6, 3.0, 0.6, 1.5, 3.0, 0.6, 1.5, 3.0] * 2,
                                                 itertools.repeat(1.5)))
    c, j = retime.retimed("ReLU", fns, {"relu": 1.5}, floor=0.15, ceiling=0.2, clock=clock, rounds=9,
                          warmup=0, min_time=2e-3)
    assert c.number == {"copy": 2, "relu": 2} and c.verdict("relu").rounds == 18 and j["relu"].passed
    assert calls == {"copy": 1 + 2 + 2 * 18, "relu": 1 + 2 + 2 * 18}    # calibrated once (1 call, then 2)
