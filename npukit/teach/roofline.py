"""Lab 3's predict-then-measure question: a ReLU's rate, predicted from your roofline, then timed.

The learner predicts, before timing it, the GFLOP/s a ReLU reaches over a
large array on the machine whose roofline the lab measured; the check compares
the prediction with this run's own measurement and, when they are far apart,
names the likely slip: the flat roof instead of the slanted one, the
bandwidth in GB/s taken for GFLOP/s, a ReLU counted as reading but not
writing, and, when the prediction is right by the roofline, the write-allocate
reads the roofline does not count. See lab 3 (labs/03_graphs.ipynb) and
chapter 3, "Graphs and the roofline" (chapters/03_graphs.md).

Given the array size and the thread count, the check times the ReLU again
itself, with npukit's own timer taken when :mod:`npukit.teach` was imported,
and compares the prediction with that: a notebook that hands it another
number as "the measurement" (a name such as ``roofline`` rebound in an
earlier cell, a measurement cell edited) does not decide the outcome. A
prediction is taken by its value as a number: a float subclass cannot choose
its value when the check reads it. What it cannot stop: a prediction cell that
times a ReLU itself. Read a prediction cell that calls ``stream_bandwidth``
or times ``np.maximum``.
"""

from __future__ import annotations

import concurrent.futures
import math
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..roofline import stream_bandwidth as _stream_bandwidth
from .core import CheckFailed, NotAttempted

__all__ = ["check_relu_prediction"]

#: A prediction passes within this factor of the measurement, either way (a timed ReLU on a shared
#: machine varies by tens of percent between runs; a wrong road is off by a factor of 3 to 40).
FACTOR = 2.0

#: What the check's own timing relies on, as it was when npukit.teach was imported (compared at check time).
_CLOCKS = ((time, "time.perf_counter", "perf_counter", time.perf_counter),
           (concurrent.futures, "concurrent.futures.ThreadPoolExecutor", "ThreadPoolExecutor", ThreadPoolExecutor))


def _value(x: Any) -> float | None:
    """The number ``x`` holds, read without calling any of its methods (None if it is not a real number).

    A ``float`` subclass is read as the float it stores, an ``int`` subclass
    as its integer value, a NumPy scalar through its buffer: a subclass whose
    ``__float__`` looks something up later cannot choose what is compared.
    """
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, int):
        return float(int.__index__(x))
    if isinstance(x, (np.floating, np.integer)):
        return float(np.asarray(x).astype(np.float64).item())
    return None


def _number(x: Any, name: str) -> float:
    """``x`` as a float if it is a finite real number > 0 (the lab's own measurements, not the learner's)."""
    v = _value(x)
    if v is None:
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    return v


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


def _timed_again(nbytes: Any, threads: Any) -> float:
    """The ReLU's rate in GFLOP/s, timed by this check as the lab times it (``nbytes`` array, ``threads``)."""
    from .. import _check

    nbytes = _check.integer(nbytes, "nbytes", minimum=4096)
    threads = _check.integer(threads, "threads", minimum=1)
    for module, label, key, original in _CLOCKS:
        if getattr(module, key, None) is not original:
            raise CheckFailed(f"ReLU rate: {label} was replaced after npukit.teach was imported, so no timing can "
                              "be trusted. Remove the change, restart the kernel and run the notebook again.")
    return _stream_bandwidth(int(nbytes), kernel="relu", threads=int(threads), repeat=3, warmup=1) / 8 / 1e9


def check_relu_prediction(predicted_gflops: Any, measured_gflops: float, *, peak_gflops: float,
                          bandwidth_gbs: float, nbytes: int | None = None, threads: int | None = None) -> None:
    """Compare a predicted ReLU rate (GFLOP/s) with this run's measurement, within a factor of 2.

    ``peak_gflops`` and ``bandwidth_gbs`` are the roofline the lab measured
    (the numbers the prediction should come from). With ``nbytes`` and
    ``threads`` (the array size and thread count the lab timed the ReLU
    with) the check times the ReLU again itself and compares the prediction
    with its own timing, not with ``measured_gflops``; the message gives both.
    A prediction that misses gets a hint naming the likely slip; one that is
    right by the roofline but still misses is told what the roofline leaves
    out.

    Raises
    ------
    NotAttempted
        If the prediction is still ``None`` or ``...``.
    CheckFailed
        If the prediction is not a positive number of GFLOP/s or is more than
        a factor of 2 from the measurement, or if the timer was replaced.
    TypeError, ValueError
        If a measurement, ``nbytes`` or ``threads`` is not a positive number,
        or only one of ``nbytes`` and ``threads`` is given.

    Examples
    --------
    >>> check_relu_prediction(23.0, 2.1, peak_gflops=150.0, bandwidth_gbs=23.0)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: ReLU rate: you predicted 23 GFLOP/s, this run measured 2.1 GFLOP/s. Your prediction is the bandwidth in GB/s. A ReLU does 1 FLOP for every 8 bytes it moves (4 read, 4 written), so its GFLOP/s is the bandwidth in GB/s divided by 8.
    """
    name = "ReLU rate"
    measured = _number(measured_gflops, "measured_gflops")
    peak = _number(peak_gflops, "peak_gflops")
    bandwidth = _number(bandwidth_gbs, "bandwidth_gbs")
    if (nbytes is None) != (threads is None):
        raise TypeError("give both nbytes and threads (the ReLU's array size and thread count), or neither")
    if nbytes is not None:
        from .. import _check

        nbytes = _check.integer(nbytes, "nbytes", minimum=4096)
        threads = _check.integer(threads, "threads", minimum=1)
    if predicted_gflops is None or predicted_gflops is Ellipsis:
        raise NotAttempted(f"{name}: not attempted yet (set predicted_relu_gflops to a number first).")
    p = _value(predicted_gflops)
    if p is None:
        raise CheckFailed(f"{name}: your prediction must be a number of GFLOP/s, got {predicted_gflops!r}"[:200])
    if not math.isfinite(p) or p <= 0:
        raise CheckFailed(f"{name}: your prediction must be a positive number of GFLOP/s, got {p!r}")
    said, aside = f"{name}: you predicted {p:.3g} GFLOP/s, this run measured {measured:.3g} GFLOP/s", ""
    if nbytes is not None:
        cell = measured
        measured = _timed_again(nbytes, threads)
        said = (f"{name}: you predicted {p:.3g} GFLOP/s; timed again by this check, the ReLU ran at "
                f"{measured:.3g} GFLOP/s")
        aside = (f" The measurement cell above said {cell:.3g} GFLOP/s: timings of one machine vary between runs."
                 if measured / FACTOR <= cell <= measured * FACTOR else
                 f" The measurement handed to this check, {cell:.3g} GFLOP/s, is far from that: if the machine was "
                 "busy, run the measurement cell and this one again.")
    if measured / FACTOR <= p <= measured * FACTOR:
        print(f"✓ {said} (within a factor of {FACTOR:g}).{aside}")
        return
    hint = _slip(p, peak, bandwidth)
    if not hint and measured / FACTOR <= p / 1e9 <= measured * FACTOR:
        hint = "Your prediction looks like FLOP/s: the question asks for GFLOP/s (1 GFLOP/s = 1e9 FLOP/s)."
    if not hint and abs(p - bandwidth / 8) <= 0.15 * bandwidth / 8:
        hint = ("Your prediction is the roofline's bound, and the measurement is far from it. The roofline "
                "counts 8 bytes per element; a write-allocate cache reads each output line before writing it "
                "(12 bytes), and other programs running slow a measurement down. Compare the ReLU's rate with "
                "the copy's over the same array.")
    if not hint:
        hint = ("Start from the roofline: attainable = min(peak, bandwidth × intensity), with the intensity of a "
                "float32 ReLU (1 FLOP per 4 bytes read and 4 written).")
    raise CheckFailed(f"{said}. {hint}{aside}")
