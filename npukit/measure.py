"""Timing, machine and device reports: how the book measures and says where it measured.

The invariant this module keeps: **a measured number comes with its machine.**
:func:`timeit` warms up, repeats and reports the median; :func:`machine_summary`
names the CPU, core count, library versions and date that every measured
sentence in the book quotes; :func:`device_report` says which OpenVINO device a
lab runs on and says so loudly when it falls back to the CPU.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import statistics
import time
from typing import Any, Callable, Sequence

from . import _check

__all__ = [
    "timeit",
    "cpu_name",
    "cores",
    "machine_summary",
    "device_report",
]


def timeit(fn: Callable[[], Any], *, repeat: int = 7, warmup: int = 2, number: int = 1) -> float:
    """Median wall time of ``fn()`` in seconds, after warm-up calls.

    The first calls of a function pay for page faults, cache misses, lazy
    initialisation and (in OpenVINO) compilation; they are run and discarded.

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
        If ``fn`` is not callable.
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
    if repeat < 1 or number < 1 or warmup < 0:
        raise ValueError(
            f"repeat and number must be >= 1 and warmup >= 0, got repeat={repeat}, "
            f"number={number}, warmup={warmup}"
        )
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
    NumPy 2.3 · 2026-11-30"``.

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


def device_report(preferred: Sequence[str] = ("NPU", "GPU")) -> str:
    """Say which OpenVINO devices this machine has and which one a lab will use.

    Returns the chosen device name (``"NPU"``, ``"GPU"`` or ``"CPU"``) and
    prints a visible message when it falls back to the CPU.

    Examples
    --------
    >>> device_report() in ("NPU", "GPU", "CPU")  # doctest: +ELLIPSIS
    OpenVINO devices...
    True
    """
    import openvino as ov

    preferred = _check.sequence(preferred, "preferred")
    devices = list(ov.Core().available_devices)
    print(f"OpenVINO devices on this machine: {', '.join(devices) or 'none'}")
    for d in preferred:
        if any(x == d or x.startswith(d + ".") for x in devices):
            print(f"Using {d}.")
            return d
    print(f"No {' or '.join(preferred)} found: falling back to the CPU plugin (results are the same, speed differs).")
    return "CPU"
