"""Tests for npukit.teach.predict: the predict-then-measure checks of labs 1 and 2."""

from __future__ import annotations

import pytest
from support import FakeRounds, swapped

from npukit.layouts import Conversion
from npukit.teach import predict
from npukit.teach.core import CheckFailed, NotAttempted
from npukit.teach.retime import TooNoisy

CENSUS = {16: 200, 32: 100, 64: 50, 128: 25, 256: 25}            # 12.5 % at 128 bytes or better


def conv(shape=(16, 1, 28, 28), dst="NHWC", convert_s=1.1e-6):
    n = 1
    for d in shape:
        n *= d
    return Conversion(shape, "NCHW", dst, "float32", 4 * n, convert_s, 1e-6, 1e-7)


@pytest.mark.parametrize("value", [None, ...])
def test_a_missing_prediction_is_not_attempted(value):
    with pytest.raises(NotAttempted, match="not attempted yet"):
        predict.check_alignment_prediction(value, CENSUS)
    with pytest.raises(NotAttempted, match="not attempted yet"):
        predict.check_conversion_prediction(value, conv())


@pytest.mark.parametrize("value", ["1/8", True, float("nan"), [0.1]])
def test_a_prediction_must_be_a_number(value):
    with pytest.raises(CheckFailed, match="must be a number"):
        predict.check_alignment_prediction(value, CENSUS)


def test_alignment_prediction_within_and_outside_the_tolerance(capsys):
    predict.check_alignment_prediction(0.1, CENSUS)                  # 2.5 points off: accepted
    assert "✓" in capsys.readouterr().out
    with pytest.raises(CheckFailed, match="needs luck") as info:
        predict.check_alignment_prediction(0.5, CENSUS, step=12304)
    assert "12,304 bytes apart, 16 more than a multiple of 128" in str(info.value)
    assert "one in 8 lands" in str(info.value)
    with pytest.raises(CheckFailed, match="not random"):
        predict.check_alignment_prediction(0.0, CENSUS)
    with pytest.raises(CheckFailed, match="between 0 and 1"):
        predict.check_alignment_prediction(12.5, CENSUS)             # a percentage, not a fraction


def test_alignment_share_counts_every_larger_alignment(capsys):
    predict.check_alignment_prediction(0.25, CENSUS, alignment=64)   # 50 + 25 + 25 of 400
    assert "25.0%" in capsys.readouterr().out


def _rounds(ratio, bursts=None):
    """The check's copy and conversion, faked: the conversion takes ``ratio`` times the copy's time."""
    fake = FakeRounds({"copy": 0.01, "conversion": ratio * 0.01}, bursts=bursts)   # one call a round
    return lambda conversion: (fake.fns, fake.clock)


def test_conversion_prediction_explains_the_gap(capsys):
    with swapped(predict, "_conversion_rounds", _rounds(1.2)):     # as this machine's CPU time measures it
        predict.check_conversion_prediction(1.0, conv())
        assert "✓" in capsys.readouterr().out
        with pytest.raises(CheckFailed, match="only axes of length 1 moved"):
            predict.check_conversion_prediction(2.5, conv())         # a free conversion predicted costly
        with pytest.raises(CheckFailed, match="cannot be cheaper"):
            predict.check_conversion_prediction(0.5, conv())
        with pytest.raises(CheckFailed, match="greater than 0"):
            predict.check_conversion_prediction(-1, conv())
    slow = conv((1, 64, 112, 112), convert_s=3e-6)
    with swapped(predict, "_conversion_rounds", _rounds(3.0)):
        with pytest.raises(CheckFailed, match="costs more than you expected"):
            predict.check_conversion_prediction(1.2, slow)
        predict.check_conversion_prediction(2.2, slow)                # within a factor of 1.4 of 3
    blocked = conv((1, 64, 112, 112), dst="NCHW16c", convert_s=2e-6)
    with swapped(predict, "_conversion_rounds", _rounds(2.0)):
        with pytest.raises(CheckFailed, match="gathered the scattered values better"):
            predict.check_conversion_prediction(5.0, blocked)


def test_conversion_prediction_is_graded_against_the_rounds_not_the_lab_s_record(capsys):
    """The lab's record said 3× (a busy moment); the check's own rounds say 1.2×: the right 1.0 passes."""
    busy = conv(convert_s=3e-6)
    with swapped(predict, "_conversion_rounds", _rounds(1.2)):
        predict.check_conversion_prediction(1.0, busy)
    out = capsys.readouterr().out
    assert "took 1.20× the copy's time" in out and "the lab's cell measured 3.00×" in out


def test_conversion_rounds_too_noisy_to_tell_ask_for_a_rerun():
    with swapped(predict, "_conversion_rounds", _rounds(1.2, {"conversion": (0.5, 2)})):   # a factor of 4 apart
        with pytest.raises(TooNoisy, match="too noisy to judge"):
            predict.check_conversion_prediction(1.0, conv())
        with pytest.raises(CheckFailed, match="more than 50% apart"):     # beyond any ratio the rounds allow
            predict.check_conversion_prediction(40.0, conv())


def test_conversion_rounds_time_the_lab_s_conversion():
    fns, clock = predict._conversion_rounds(conv((2, 3, 4, 5)))
    assert sorted(fns) == ["conversion", "copy"] and clock is predict_clock()
    for f in fns.values():
        f()


def predict_clock():
    from npukit.teach import retime

    return retime.THREAD_TIME
