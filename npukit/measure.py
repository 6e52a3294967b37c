"""Timing, machine and device reports: how the book measures, compares and says where it measured.

The invariants this module keeps: **a measured number comes with its
machine**, and **two timings are compared only in interleaved rounds, with
their spread, and reported by a verdict that can come out three ways.**

* :func:`timeit` warms up, repeats and reports the median of one function;
* :func:`compare` times several functions in interleaved rounds (the order
  shuffled each round, so that a burst of load from other programs, a clock
  change or a cache warming up hits all of them alike), after a warm-up and,
  if asked, a calibration of how many calls a round makes so that a round
  lasts long enough for the clock. Each round gives one time per function
  and one *paired* ratio per variant (its time over the baseline's in the
  same round). The result, a :class:`Comparison`, gives per-function medians
  and interquartile ranges (a figure's whiskers) and, per variant, a
  :class:`Verdict`: the median per-round ratio, a bootstrap confidence
  interval of that median (``scipy.stats.bootstrap``, seeded), and one of
  three words — ``"faster"``, ``"indistinguishable"``, ``"slower"`` — with
  a ready sentence fragment for a page to glue;
* :func:`judge` and :func:`recheck` decide a timing *prediction* (a lab's
  predict-then-measure check): pass, fail, or "too noisy, re-run";
* :func:`machine_summary` names the CPU, core count, library versions and
  date that every measured sentence in the book quotes; :func:`device_report`
  says which OpenVINO device a lab runs on, loudly when it falls back to the CPU.

The comparison (:func:`compare`, its records, the verdict's rule,
:func:`judge`, :func:`recheck`) lives in :mod:`npukit.timing`, which imports
no chapter module (so chapter 7's :mod:`npukit.deploy` can use it), and is
re-exported here: ``npukit.measure.compare`` is the one function pages call. This module only
measures and reports: the book's look (figure style, tables) is
:mod:`npukit.viz`, the machine's roofline profile :mod:`npukit.machine`.

Used where the book measures: chapter 1, "Tensors are memory"
(chapters/01_tensors.md), chapter 2, "Layouts" (chapters/02_layouts.md),
chapter 3, "Graphs and the roofline" (chapters/03_graphs.md), chapter 4,
"GEMM and tiling" (chapters/04_gemm.md) and chapter 7, "Deploying to an NPU"
(chapters/07_deploy.md), with :func:`timeit` and :func:`compare`; every
chapter from chapter 0, "Meet CameraNet" (chapters/00_cameranet.md), with
:func:`machine_summary`; lab 3 (labs/03_graphs.ipynb) with :func:`device_report`,
which is chapter 7's device choice (chapters/07_deploy.md). CONTRIBUTING.md,
"How to compare two timings", shows a page's use.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import statistics
import time
from typing import Any, Callable, Mapping, Sequence

from . import _check
from .timing import (NOISE_THRESHOLD, SPREAD_CEILING, Comparison, Judgement, Verdict, compare, in_blocks, judge,
                     recheck)

__all__ = [
    "cache_sizes",
    "last_level_cache",
    "timeit",
    "NOISE_THRESHOLD",
    "SPREAD_CEILING",
    "compare",
    "in_blocks",
    "Comparison",
    "Verdict",
    "judge",
    "recheck",
    "Judgement",
    "cpu_name",
    "cores",
    "machine_summary",
    "device_report",
]


def timeit(fn: Callable[[], Any], *, repeat: int = 7, warmup: int = 2, number: int = 1) -> float:
    """Median wall time of ``fn()`` in seconds, after warm-up calls.

    The first calls of a function pay for page faults, cache misses, lazy
    initialisation and (in OpenVINO) compilation; they are run and discarded.
    See chapter 1, "Tensors are memory" (chapters/01_tensors.md), the book's
    first measurement.

    Parameters
    ----------
    fn : callable
        Called with no arguments.
    repeat : int
        Timed repetitions; the median is returned.
    warmup : int
        Untimed calls before timing.
    number : int
        Calls per repetition (for very short functions); the time is per call.

    Returns
    -------
    float
        Median seconds per call.

    Raises
    ------
    TypeError
        If ``fn`` is not callable, or a count is not an integer.
    ValueError
        If ``repeat`` or ``number`` is < 1, or ``warmup`` < 0.

    Examples
    --------
    >>> t = timeit(lambda: sum(range(100)), repeat=3, warmup=1)
    >>> t > 0
    True
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    repeat = _check.integer(repeat, "repeat", minimum=1)
    warmup = _check.integer(warmup, "warmup", minimum=0)
    number = _check.integer(number, "number", minimum=1)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def cpu_name() -> str:
    """The CPU model name of this machine, as the OS reports it.

    Part of :func:`machine_summary`; see chapter 0, "Meet CameraNet"
    (chapters/00_cameranet.md).

    Examples
    --------
    >>> isinstance(cpu_name(), str) and len(cpu_name()) > 0
    True
    """
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cores() -> int:
    """The number of CPU cores this process may run on.

    Part of :func:`machine_summary`; see chapter 0, "Meet CameraNet"
    (chapters/00_cameranet.md).

    Examples
    --------
    >>> cores() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def machine_summary() -> str:
    """One line naming the machine that made a measurement.

    CPU model, cores available to this process, Python and NumPy versions and
    today's date, e.g. ``"Intel(R) Xeon(R) … · 2 cores · Python 3.11 ·
    NumPy 2.3 · 2026-11-30"``. Every page that measures quotes it, from
    chapter 0, "Meet CameraNet" (chapters/00_cameranet.md) on.

    Examples
    --------
    >>> "cores" in machine_summary()
    True
    """
    import numpy as np

    return (
        f"{cpu_name()} · {cores()} cores · Python {platform.python_version()} · "
        f"NumPy {np.__version__} · {_dt.date.today().isoformat()}"
    )


def cache_sizes() -> dict[str, int]:
    """This machine's data caches as the OS reports them, in bytes: ``{"L1d": …, "L2": …, "L3": …}``.

    Read from Linux's ``/sys/devices/system/cpu/cpu0/cache``; an empty dict
    where that is not available (macOS, Windows, some containers). A virtual
    machine reports what its hypervisor tells it, which may be the host's
    whole cache. Used wherever the book needs "larger than the last-level
    cache": chapter 2's conversion sizes and chapter 3's bandwidth measurement.

    Examples
    --------
    >>> sizes = cache_sizes()
    >>> all(isinstance(v, int) and v > 0 for v in sizes.values())
    True
    """
    import pathlib

    out: dict[str, int] = {}
    root = pathlib.Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction" or not size:
            continue
        units = {"K": 1024, "M": 1024**2, "G": 1024**3}
        value = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
        out[f"L{level}" + ("d" if kind == "Data" else "")] = value
    return out


def last_level_cache() -> int | None:
    """Bytes of the largest data cache :func:`cache_sizes` reports, or ``None`` if unknown.

    Examples
    --------
    >>> llc = last_level_cache()
    >>> llc is None or llc >= 2**16
    True
    """
    sizes = cache_sizes()
    return max(sizes.values()) if sizes else None


def device_report(preferred: Sequence[str] = ("NPU", "GPU")) -> str:
    """Say which OpenVINO devices this machine has and which one a lab will use.

    A thin wrapper of chapter 7's :func:`npukit.deploy.choose_device`, the
    course's one device-choice logic: the first of ``preferred`` that
    OpenVINO lists is used, else the CPU, and a fallback is announced in
    capitals. Returns the chosen device name. Used by lab 3
    (labs/03_graphs.ipynb) of chapter 3, "Graphs and the roofline"
    (chapters/03_graphs.md), and explained in chapter 7, "Deploying to an
    NPU" (chapters/07_deploy.md).

    Parameters
    ----------
    preferred : list or tuple of str
        Device names to try, in order (at least one, e.g. ``("NPU", "GPU")``);
        the CPU is tried last in any case.

    Returns
    -------
    str
        The device OpenVINO will be asked for (``"NPU"``, ``"GPU.0"``, ``"CPU"`` …).

    Raises
    ------
    TypeError, ValueError
        If ``preferred`` is not a non-empty list or tuple of device names.

    Examples
    --------
    >>> device_report() in ("NPU", "GPU", "CPU")  # doctest: +ELLIPSIS
    OpenVINO devices...
    True
    """
    from . import deploy

    preferred = _check.sequence(preferred, "preferred", min_length=1)
    order = preferred if "CPU" in preferred else (*preferred, "CPU")
    return deploy.choose_device(order).device
