"""Lab 3's predict-then-measure question: a ReLU's rate, predicted from your roofline, then timed.

The learner predicts, before timing it, the GFLOP/s a ReLU reaches over the
array the lab's roofline copied, on the same threads. A ReLU does 1 FLOP per 8
bytes it reads and writes, far left of the ridge, so its roof is the slanted
one, bandwidth / 8. Its ordinary stores read each output line before writing
it (write-allocate). Whether the copy that set the bandwidth paid that read
too is what chapter 3 teaches to ask: glibc's ``memmove`` writes each
thread's slice with streaming stores only above a threshold
(:func:`npukit.roofline.streaming_store_threshold`). Above it the copy skips
the read and the ReLU moves 12 bytes of DRAM traffic for the 8 it counts: 1.5
times the copy's time, two thirds of the slanted roof. Below it the copy
writes through the cache as well and chapter 3's model is the copy's own
time, bandwidth / 8; but some cores skip the read for whole-line writes, so
there the ReLU may still take up to 1.5 times as long. See lab 3
(labs/03_graphs.ipynb) and chapter 3, "Graphs and the roofline"
(chapters/03_graphs.md).

The check does not compare with a rate measured in another cell: it times the
copy and the ReLU again itself, on the same array and threads, taking turns in
interleaved rounds, in CPU time (:mod:`npukit.teach.retime`), and compares in
relative units. At the roofline's bandwidth ``B``, a prediction of ``p``
GFLOP/s says the ReLU takes ``B / (8 p)`` times the copy's time over the same
array (1 for the slanted roof itself, 1.5 with write-allocate); the check
measures that ratio. A prediction passes within 15 % of it (more when the
rounds spread more, up to 20 %: below the factor of 1.5 by which the two
models differ). Chapter 3's model for this machine passes too when the run
measured the other one (1.5 always; 1.0 as well where the copy's slices are
below glibc's threshold, or the threshold is unknown), and the check says so.
A prediction is taken by its value as a number: a float subclass cannot choose
its value when the check reads it. What it cannot stop in a notebook: a
prediction cell that times a ReLU itself (read a prediction cell that calls
``stream_bandwidth`` or times ``np.maximum``).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import numpy as np

from .. import _check
from .core import CheckFailed, NotAttempted
from .retime import PROCESS_TIME, THREAD_TIME, retimed

__all__ = ["check_relu_prediction"]

#: A prediction passes within this fraction of the re-timed ratio (a right one's model error: write-allocate
#: costs a little less than a full line on some cores) …
FLOOR = 0.15
#: … or within the rounds' spread, up to this: below the factor of 1.5 by which "the slanted roof itself"
#: (write-allocate ignored) misses the ratio 1.5, and far below the factor of 2 to 12 of the other slips.
CEILING = 0.2

_POOL = ThreadPoolExecutor   # as imported: the check's threads are its own


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


def _slip(p: float, peak: float, bandwidth: float, measured_ratio: float, why: str = "") -> str:
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
    if near(p, bandwidth / 8) and measured_ratio > 1.2:
        return ("Your prediction is the slanted roof itself, bandwidth / 8: the ReLU would run as fast as the copy. "
                "But the ReLU's ordinary stores read each output line before writing it (write-allocate): 12 bytes "
                "of DRAM traffic for every 8 the roofline counts, a cost the copy that set your bandwidth did not "
                f"pay on this run{f' ({why})' if why else ''}: streaming stores, or a copy's whole-line writes, "
                "need not read the lines first.")
    if measured_ratio / 1.2 <= bandwidth / (8 * p / 1e9) <= measured_ratio * 1.2:
        return "Your prediction looks like FLOP/s: the question asks for GFLOP/s (1 GFLOP/s = 1e9 FLOP/s)."
    return ("Start from the roofline: attainable = min(peak, bandwidth × intensity), with the intensity of a "
            "float32 ReLU (1 FLOP per 4 bytes read and 4 written), and ask what its stores cost that the copy's "
            "did not.")


def _models(nbytes: int, threads: int) -> tuple[tuple[float, ...], str, str]:
    """Chapter 3's predicted ReLU/copy time ratios for this copy, why (the clause the check prints), and
    why 1.0 counts where it is one of them (that clause continued).

    Each thread copies its own slice, and glibc decides per call whether to stream
    (:func:`npukit.roofline.streaming_store_threshold`): above the threshold the copy skips the
    write-allocate read and the ReLU does not (1.5); below it both write through the cache (1.0),
    though some cores skip the read for whole-line writes (1.5 again); with no threshold known, either.
    """
    from .. import roofline

    threshold = roofline.streaming_store_threshold()
    piece = nbytes / threads / 2**20
    if threshold is None:
        why = "this machine's C library does not report its streaming threshold"
        return (1.0, 1.5), why, f"{why}, so either model counts"
    where = "above" if nbytes / threads > threshold else "below"
    why = (f"each thread copies a {piece:,.0f} MiB slice, {where} glibc's streaming threshold of "
           f"{threshold / 2**20:,.0f} MiB")
    if where == "above":
        return (1.5,), why, ""
    return (1.0, 1.5), why, f"{why}, so the copy writes through the cache and pays the extra read too"


def _kernels(nbytes: int, threads: int, pool: Any) -> tuple[dict[str, Callable[[], Any]], Callable[[], float]]:
    """The copy and the ReLU over ``nbytes`` on ``threads`` threads, as the lab timed them, and their clock.

    One contiguous slice per thread of ``pool`` (NumPy releases the GIL while it copies or computes), the
    copy ``numpy.copyto`` (glibc's ``memmove``), the ReLU ``numpy.maximum(x, 0, out=y)``: what
    :func:`npukit.roofline.stream_bandwidth` times. The clock is the CPU time of the threads that run them.
    """
    n = nbytes // 4
    src = np.ones(n, dtype=np.float32)
    dst = np.zeros_like(src)   # touched now: no round pays the page faults
    bounds = [(k * n // threads, (k + 1) * n // threads) for k in range(threads)]

    def kernel(kind: str) -> Callable[[], Any]:
        def part(b: tuple[int, int]) -> None:
            s, d = src[b[0]:b[1]], dst[b[0]:b[1]]
            if kind == "copy":
                np.copyto(d, s)
            else:
                np.maximum(s, 0, out=d)

        if threads == 1:
            return lambda: part(bounds[0])
        return lambda: list(pool.map(part, bounds))

    return {"copy": kernel("copy"), "ReLU": kernel("relu")}, (THREAD_TIME if threads == 1 else PROCESS_TIME)


def check_relu_prediction(predicted_gflops: Any, measured_gflops: float, *, peak_gflops: float,
                          bandwidth_gbs: float, nbytes: int | None = None, threads: int | None = None) -> None:
    """Compare a predicted ReLU rate (GFLOP/s) with the ReLU timed again by this check, beside the copy.

    ``peak_gflops`` and ``bandwidth_gbs`` are the roofline the lab measured
    (the numbers the prediction should come from); ``nbytes`` and
    ``threads`` the array size and thread count of the lab's copy and ReLU
    (default: :func:`npukit.roofline.copy_bytes` and every core). The check
    times the copy and the ReLU again, in interleaved rounds of CPU time, and
    compares the ratio the prediction implies, ``bandwidth / (8 ×
    prediction)`` (the ReLU's time over the copy's), with the one it
    measured: within 15 %, or the rounds' spread up to 20 %; if they spread
    more even after measuring three times, it raises
    :class:`~npukit.teach.retime.TooNoisy` (re-run). Chapter 3's model for
    this copy passes where the run measured the other: 1.5 (write-allocate)
    always, and 1.0 (the copy's own time) where each thread's slice is below
    glibc's streaming threshold or none is known. ``measured_gflops``,
    the lab's own measurement, is only reported. A prediction that misses
    gets a hint naming the likely slip.

    Raises
    ------
    NotAttempted
        If the prediction is still ``None`` or ``...``.
    CheckFailed
        If the prediction is not a positive number of GFLOP/s or is too far from the re-timed ratio
        (:class:`~npukit.teach.retime.TooNoisy` if the rounds cannot tell).
    TypeError, ValueError
        If a measurement, ``nbytes`` or ``threads`` is not a positive number,
        or only one of ``nbytes`` and ``threads`` is given.

    Examples
    --------
    >>> check_relu_prediction(23.0, 2.1, peak_gflops=150.0, bandwidth_gbs=23.0, nbytes=2**22, threads=1)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: ReLU rate: you predicted 23 GFLOP/s, ... Your prediction is the bandwidth in GB/s. A ReLU does 1 FLOP for every 8 bytes it moves (4 read, 4 written), so its GFLOP/s is the bandwidth in GB/s divided by 8.
    """
    from .. import measure, roofline

    name = "ReLU rate"
    measured = _number(measured_gflops, "measured_gflops")
    peak = _number(peak_gflops, "peak_gflops")
    bandwidth = _number(bandwidth_gbs, "bandwidth_gbs")
    if (nbytes is None) != (threads is None):
        raise TypeError("give both nbytes and threads (the ReLU's array size and thread count), or neither")
    if nbytes is None:
        nbytes, threads = roofline.copy_bytes(), measure.cores()
    nbytes = _check.integer(nbytes, "nbytes", minimum=4096)
    threads = _check.integer(threads, "threads", minimum=1, maximum=1024)
    if predicted_gflops is None or predicted_gflops is Ellipsis:
        raise NotAttempted(f"{name}: not attempted yet (set predicted_relu_gflops to a number first).")
    p = _value(predicted_gflops)
    if p is None:
        raise CheckFailed(f"{name}: your prediction must be a number of GFLOP/s, got {predicted_gflops!r}"[:200])
    if not math.isfinite(p) or p <= 0:
        raise CheckFailed(f"{name}: your prediction must be a positive number of GFLOP/s, got {p!r}")
    _check.allocation(2 * nbytes, "nbytes")   # the source and the destination
    predicted_ratio = bandwidth / (8 * p)
    models, why, why_one = _models(nbytes, threads)
    model = min(models, key=lambda m: abs(predicted_ratio / m - 1))   # the model the prediction is nearest
    with _POOL(threads) as pool:
        fns, clock = _kernels(nbytes, threads, pool)
        # chapter 3's answer for this copy (1.5 with write-allocate; 1.0 too where the copy writes through the
        # cache): where it fails too, the run is not graded
        c, judged = retimed(name, fns, {"ReLU": predicted_ratio}, floor=FLOOR, ceiling=CEILING, clock=clock,
                            rounds=15, warmup=1, reference={"ReLU": model})
    j, v = judged["ReLU"], c.verdict("ReLU")
    said = (f"{name}: you predicted {p:.3g} GFLOP/s, which at your roofline's {bandwidth:.3g} GB/s is "
            f"{predicted_ratio:.2f} times the copy's time over the same array; timed again by this check beside the "
            f"copy ({nbytes / 2**20:,.0f} MiB on {threads} thread(s), {v.rounds} interleaved rounds of CPU time), "
            f"the ReLU took {v.ratio:.2f} times the copy's time ({v.confidence:.0%} interval {v.low:.2f} to "
            f"{v.high:.2f}), {bandwidth / (8 * v.ratio):.3g} GFLOP/s at that bandwidth (the cell above measured "
            f"{measured:.3g} GFLOP/s, a separate timing: this check grades its own rounds)")
    lesson = abs(predicted_ratio / model - 1) <= FLOOR and measure.judge(
        model, v, floor=FLOOR, ceiling=CEILING).outcome == "fail"
    if j.passed and lesson and model == 1.5:   # write-allocate, on a run where the machine did something else
        ran = ("the ReLU's stores did not pay the extra read, or the copy's paid it too" if v.ratio < model else
               "the ReLU took longer still than write-allocate explains")
        print(f"✓ {said}: not what this run measured, but your prediction is chapter 3's write-allocate model "
              f"(1.5 times the copy's time; {why}), and while this check ran {ran}: the machine, not your "
              "reasoning, differed, so it counts. Chapter 3's copy sweep shows when a machine's stores stream.")
        return
    if j.passed and lesson:   # the copy writes through the cache too: the same time, on a run that measured other
        ran = ("the ReLU took longer than the copy (some cores skip the extra read for a copy's whole-line "
               "writes; this check does not measure why)" if v.ratio > model else
               "the ReLU took less time than the copy")
        print(f"✓ {said}: not what this run measured, but your prediction is chapter 3's model for your copy "
              f"(the copy's own time: {why_one}), and while this check ran {ran}: the machine, not your "
              "reasoning, differed, so it counts.")
        return
    if j.passed:
        print(f"✓ {said}; within the tolerance of {j.tolerance:.0%}.")
        return
    raise CheckFailed(f"{said}: more than {j.tolerance:.0%} apart. {_slip(p, peak, bandwidth, v.ratio, why)}")
