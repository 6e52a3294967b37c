"""Lab 3's predict-then-measure question: a ReLU's rate, predicted from your roofline, then timed.

The learner predicts, before timing it, the GFLOP/s a ReLU reaches over a
large array on the machine whose roofline the lab measured; the check compares
the prediction with this run's own measurement and, when they are far apart,
names the likely slip: the flat roof instead of the slanted one, the
bandwidth in GB/s taken for GFLOP/s, a ReLU counted as reading but not
writing, and, when the prediction is right by the roofline, the write-allocate
reads the roofline does not count. See lab 3 (labs/03_graphs.ipynb) and
chapter 3, "Graphs and the roofline" (chapters/03_graphs.md).
"""

from __future__ import annotations

import math
from typing import Any

from .core import CheckFailed, NotAttempted

__all__ = ["check_relu_prediction"]

#: A prediction passes within this factor of the measurement, either way (a timed ReLU on a shared
#: machine varies by tens of percent between runs; a wrong road is off by a factor of 3 to 40).
FACTOR = 2.0


def _number(x: Any, name: str) -> float:
    """``x`` as a float if it is a finite real number > 0 (the lab's own measurements, not the learner's)."""
    import numbers

    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {x!r}")
    return float(x)


def _slip(p: float, peak: float, bandwidth: float) -> str:
    """The usual wrong roads to a ReLU prediction, as a hint (empty if none fits)."""
    near = lambda a, b: abs(a - b) <= 0.15 * abs(b)  # noqa: E731
    if near(p, peak):
        return ("Your prediction is the flat roof, the peak. A ReLU does 1 FLOP per 8 bytes, far left of the "
                "ridge: its roof is the slanted one, bandwidth × intensity.")
    if near(p, bandwidth):
        return ("Your prediction is the bandwidth in GB/s. A ReLU does 1 FLOP for every 8 bytes it moves "
                "(4 read, 4 written), so its GFLOP/s is the bandwidth in GB/s divided by 8.")
    if near(p, bandwidth / 4):
        return ("You divided the bandwidth by 4, as if the ReLU only read its float32 input. It also writes "
                "4 bytes per element: 8 bytes per FLOP.")
    return ""


def check_relu_prediction(predicted_gflops: Any, measured_gflops: float, *, peak_gflops: float,
                          bandwidth_gbs: float) -> None:
    """Compare a predicted ReLU rate (GFLOP/s) with this run's measurement, within a factor of 2.

    ``peak_gflops`` and ``bandwidth_gbs`` are the roofline the lab measured
    (the numbers the prediction should come from). A prediction that misses
    gets a hint naming the likely slip; one that is right by the roofline but
    still misses is told what the roofline leaves out.

    Examples
    --------
    >>> check_relu_prediction(2.9, 2.1, peak_gflops=150.0, bandwidth_gbs=23.0)
    ✓ ReLU rate: you predicted 2.9 GFLOP/s, this run measured 2.1 GFLOP/s (within a factor of 2).
    >>> check_relu_prediction(23.0, 2.1, peak_gflops=150.0, bandwidth_gbs=23.0)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: ReLU rate: you predicted 23 GFLOP/s, this run measured 2.1 GFLOP/s. Your prediction is the bandwidth in GB/s. A ReLU does 1 FLOP for every 8 bytes it moves (4 read, 4 written), so its GFLOP/s is the bandwidth in GB/s divided by 8.
    """
    name = "ReLU rate"
    measured = _number(measured_gflops, "measured_gflops")
    peak = _number(peak_gflops, "peak_gflops")
    bandwidth = _number(bandwidth_gbs, "bandwidth_gbs")
    if predicted_gflops is None or predicted_gflops is Ellipsis:
        raise NotAttempted(f"{name}: not attempted yet (set predicted_relu_gflops to a number first).")
    if isinstance(predicted_gflops, bool) or not isinstance(predicted_gflops, (int, float)):
        raise CheckFailed(f"{name}: your prediction must be a number of GFLOP/s, got {predicted_gflops!r}")
    p = float(predicted_gflops)
    if not math.isfinite(p) or p <= 0:
        raise CheckFailed(f"{name}: your prediction must be a positive number of GFLOP/s, got {p!r}")
    said = f"{name}: you predicted {p:.3g} GFLOP/s, this run measured {measured:.3g} GFLOP/s"
    if measured / FACTOR <= p <= measured * FACTOR:
        print(f"✓ {said} (within a factor of {FACTOR:g}).")
        return
    hint = _slip(p, peak, bandwidth)
    if not hint and abs(p - bandwidth / 8) <= 0.15 * bandwidth / 8:
        hint = ("Your prediction is the roofline's bound, and the measurement is far from it. The roofline "
                "counts 8 bytes per element; a write-allocate cache reads each output line before writing it "
                "(12 bytes), and other programs running slow a measurement down. Compare the ReLU's rate with "
                "the copy's over the same array.")
    if not hint:
        hint = ("Start from the roofline: attainable = min(peak, bandwidth × intensity), with the intensity of a "
                "float32 ReLU (1 FLOP per 4 bytes read and 4 written).")
    raise CheckFailed(f"{said}. {hint}")
