"""Predict-then-measure checks for labs 1 and 2.

A learner writes a prediction in a variable *before* the lab measures; these
checks compare it with the run's own measurement, within a tolerance, and
explain the gap when it is too large. There is no answer to copy from a
failure message ahead of time: the measurement is this run's. Lab 1 predicts
how many fresh arrays land on a 128-byte boundary (chapter 1, "Tensors are
memory", chapters/01_tensors.md); lab 2 predicts what a layout conversion
costs next to a plain copy (chapter 2, "Layouts", chapters/02_layouts.md),
which the check times again itself, beside a copy, in interleaved rounds of
CPU time (:mod:`npukit.teach.retime`), rather than trust the lab's cell.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping

import numpy as np

from .. import _check
from .core import CheckFailed, NotAttempted

__all__ = ["check_alignment_prediction", "check_conversion_prediction"]


def _prediction(name: str, predicted: Any, *, low: float, high: float | None) -> float:
    """The learner's prediction as a float in [low, high] (no upper bound if None), or the one-line outcome."""
    if predicted is None or predicted is Ellipsis:
        raise NotAttempted(f"{name}: not attempted yet (set your prediction first).")
    if isinstance(predicted, bool) or not isinstance(predicted, numbers.Real) or not math.isfinite(predicted):
        raise CheckFailed(f"{name}: your prediction must be a number, got {predicted!r}")
    p = float(predicted)
    if high is None and p <= low:
        raise CheckFailed(f"{name}: your prediction must be a number greater than {low:g}, got {p:g}")
    if high is not None and not low <= p <= high:
        raise CheckFailed(f"{name}: your prediction must be between {low:g} and {high:g}, got {p:g}")
    return p


def check_alignment_prediction(predicted: Any, census: Mapping[int, int], *, alignment: int = 128,
                               step: int | None = None, tolerance: float = 0.06) -> None:
    """Compare a predicted share of ``alignment``-aligned arrays with a measured alignment census.

    ``census`` is :func:`npukit.tensors.alignment_census`'s result: how many
    arrays were aligned to *exactly* each power of two. ``step``, if given,
    is the measured distance in bytes between consecutive arrays, used to
    explain a gap. See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Raises
    ------
    NotAttempted, CheckFailed
        If the prediction is missing, not a fraction, or further than
        ``tolerance`` from the measured share.
    TypeError, ValueError
        If ``census``, ``alignment``, ``step`` or ``tolerance`` is malformed.

    Examples
    --------
    >>> check_alignment_prediction(0.5, {16: 200, 32: 100, 64: 50, 128: 25, 256: 25})
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: alignment: you predicted 50.0% of the arrays 128-byte aligned; this run measured 12.5%, more than 6% apart. Why: malloc promises only 16-byte alignment, so a share of 128-byte aligned arrays above 16/128 = 12.5% needs luck the allocator does not give.
    """
    if not isinstance(census, Mapping) or not census:
        raise TypeError(f"census must be a non-empty mapping of alignment -> count, got {type(census).__name__}")
    counts = {_check.power_of_two(k, "each alignment in census"): _check.integer(v, f"census[{k}]", minimum=0)
              for k, v in census.items()}
    total = sum(counts.values())
    if total == 0:
        raise ValueError("census must count at least one array")
    alignment = _check.power_of_two(alignment, "alignment")
    if step is not None:
        step = _check.integer(step, "step", minimum=1)
    tolerance = _check.fraction(tolerance, "tolerance")
    p = _prediction("alignment", predicted, low=0.0, high=1.0)
    measured = sum(v for k, v in counts.items() if k >= alignment) / total
    if abs(p - measured) > tolerance:
        why = (f"malloc promises only 16-byte alignment, so a share of {alignment}-byte aligned arrays above "
               f"16/{alignment} = {16 / alignment:.1%} needs luck the allocator does not give"
               if p > measured else
               "the addresses are not random: arrays of one size are placed one after another")
        if step is not None:
            cycle = alignment // math.gcd(step, alignment)
            why += (f". Here consecutive arrays sat {step:,} bytes apart, {step % alignment} more than a multiple "
                    f"of {alignment}, so their start addresses cycle through {cycle} positions within "
                    f"{alignment} bytes and one in {cycle} lands on a boundary")
        raise CheckFailed(f"alignment: you predicted {p:.1%} of the arrays {alignment}-byte aligned; this run "
                          f"measured {measured:.1%}, more than {tolerance:.0%} apart. Why: {why}.")
    print(f"✓ alignment: you predicted {p:.1%} of the arrays {alignment}-byte aligned; this run measured "
          f"{measured:.1%}.")


#: Lab 2's conversion prediction passes within this fraction of the re-timed ratio (the model "a conversion that
#: moves only axes of length 1 is a plain copy" leaves out the call that makes the permuted view each time:
#: 1.1 to 1.3 times a copy of this small tensor) …
CONVERSION_FLOOR = 0.4
#: … or within the rounds' spread, up to this: below the factor of 2 by which "free, it is a view" (0.1 or
#: 0.5) and "as slow as a real conversion" (2.5, 8) miss.
CONVERSION_CEILING = 0.5


def _conversion_rounds(conversion: Any) -> tuple[dict, Any]:
    """A plain copy and ``conversion``'s layout conversion of the same tensor, as the lab timed them, and their
    clock (the calling thread's CPU time: NumPy copies on the calling thread)."""
    from ..layouts import _conversion_calls, _measurable
    from .retime import THREAD_TIME

    shape, src, block = _measurable(conversion.shape, conversion.src, conversion.dst)
    x = np.random.default_rng(0).standard_normal(shape).astype(conversion.dtype)
    copy_out = np.empty_like(x)
    convert, _ = _conversion_calls(x, src, conversion.dst, block)
    return {"copy": lambda: np.copyto(copy_out, x), "conversion": convert}, THREAD_TIME


def check_conversion_prediction(predicted: Any, conversion: Any) -> None:
    """Compare a predicted conversion / copy time ratio with the ratio this check times again.

    ``conversion`` is the lab's :class:`npukit.layouts.Conversion`; the
    check takes its shape, layouts and dtype and times a plain copy and the
    conversion again itself, taking turns in interleaved rounds of CPU time
    (:mod:`npukit.teach.retime`), the way :func:`npukit.layouts.measure_conversion`
    times them. The prediction passes within 40 % of the measured ratio (a
    factor of 1.4 either way; the rounds' spread up to 50 % if larger;
    beyond that the check measures again, and raises
    :class:`~npukit.teach.retime.TooNoisy` if it still cannot tell). The
    lab's own ratio, ``conversion.slowdown``, is only reported. See chapter
    2, "Layouts" (chapters/02_layouts.md).

    Raises
    ------
    NotAttempted, CheckFailed
        If the prediction is missing, not a positive number, or too far from
        the measured ratio.
    TypeError, ValueError
        If ``conversion`` is not a Conversion.

    Examples
    --------
    >>> from npukit.layouts import Conversion
    >>> c = Conversion((16, 1, 28, 28), "NCHW", "NHWC", "float32", 50176, 1.1e-6, 1e-6, 1e-7)
    >>> check_conversion_prediction(0.1, c)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: conversion: you predicted 0.10× a copy's time; ... Why: a conversion moves the same bytes as a plain copy, in a less friendly order: it cannot be cheaper than one.
    """
    from ..layouts import Conversion, conversion_is_free
    from .retime import retimed

    _check.instance(conversion, "conversion", Conversion)
    p = _prediction("conversion", predicted, low=0.0, high=None)
    fns, clock = _conversion_rounds(conversion)
    c, judged = retimed("conversion", fns, {"conversion": p}, floor=CONVERSION_FLOOR, ceiling=CONVERSION_CEILING,
                        clock=clock, rounds=21)
    v, j = c.verdict("conversion"), judged["conversion"]
    m = v.ratio
    seen = (f"timed again by this check beside a copy ({v.rounds} interleaved rounds of CPU time), "
            f"{conversion.label} took {m:.2f}× the copy's time ({v.confidence:.0%} interval {v.low:.2f} to "
            f"{v.high:.2f}; the lab's cell measured {conversion.slowdown:.2f}×)")
    if j.passed:
        print(f"✓ conversion: you predicted {p:.2f}× a copy's time; {seen}.")
        return
    blocked = not conversion.dst.isalpha()
    free = not blocked and conversion_is_free(conversion.shape, conversion.src, conversion.dst)
    if p < 1 / (1 + CONVERSION_FLOOR):
        why = ("a conversion moves the same bytes as a plain copy, in a less friendly order: it cannot be "
               "cheaper than one")
    elif free and p > m:
        why = ("only axes of length 1 moved, so the permuted bytes are already in the new order (your "
               "Exercise 1): the conversion is a plain copy and costs what a copy costs, plus the call that makes "
               "the permuted view")
    elif free:
        why = ("only axes of length 1 moved, so the bytes are already in the new order, but each conversion call "
               "also makes the permuted view and pays a call's fixed cost: on a small tensor that is a visible "
               "share of a copy's time")
    elif p > m:
        why = ("this machine gathered the scattered values better than you expected: the caches held the "
               "channel planes the conversion reads from")
    else:
        why = ("each output value gathers its input from another channel plane, so most of every cache line "
               "fetched waits in the cache, and the inner loop is short: that costs more than you expected")
    raise CheckFailed(f"conversion: you predicted {p:.2f}× a copy's time; {seen}: more than {j.tolerance:.0%} "
                      f"apart. Why: {why}.")
