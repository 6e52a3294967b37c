"""One look for the whole book, and honest measurements.

Every figure in the course is a plotly ``graph_objects`` figure passed through
:func:`style`, so colours, fonts and sizes agree from chapter to chapter. The
palette is Okabe–Ito, which stays distinguishable under the common forms of
colour blindness.

Every measured number goes through :func:`timeit` (warm-up, repeats, median)
and says which machine made it (:func:`machine_summary`).

plotly and OpenVINO are imported inside the functions that need them, so
``import npukit.viz`` is cheap.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import statistics
import time
from typing import Any, Callable, Iterable, Sequence

#: Okabe & Ito (2008) colour-blind-safe palette, without black.
PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#999999",  # grey
)

FONT = "Inter, 'Helvetica Neue', Arial, sans-serif"


def style(fig: Any, *, height: int = 420, title: str | None = None) -> Any:
    """Apply the book's look to a plotly figure and return it.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure to style (changed in place).
    height : int
        Height in pixels; the width follows the page.
    title : str, optional
        A title to set.

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig`` itself, so calls can be chained.

    Raises
    ------
    TypeError
        If ``fig`` is not a plotly figure.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> fig = style(go.Figure(go.Bar(x=[1, 2], y=[3, 4])), title="demo")
    >>> fig.layout.title.text
    'demo'
    """
    import plotly.graph_objects as go

    if not isinstance(fig, go.Figure):
        raise TypeError(f"fig must be a plotly.graph_objects.Figure, got {type(fig).__name__}")
    fig.update_layout(
        template="plotly_white",
        colorway=list(PALETTE),
        font=dict(family=FONT, size=14, color="#222"),
        height=height,
        margin=dict(l=60, r=20, t=60 if (title or fig.layout.title.text) else 30, b=50),
        hoverlabel=dict(font=dict(family=FONT)),
        legend=dict(bgcolor="rgba(255,255,255,0.7)"),
    )
    if title is not None:
        fig.update_layout(title=dict(text=title, x=0.0, xanchor="left"))
    return fig


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


def table(rows: Iterable[Sequence[Any]], header: Sequence[str]) -> Any:
    """Render rows as an HTML table (an ``IPython.display.HTML`` object).

    Numbers are shown as given; format them before passing them in.

    Parameters
    ----------
    rows : iterable of sequences
        One sequence of cells per row, each as long as ``header``.
    header : sequence of str
        Column titles.

    Raises
    ------
    ValueError
        If a row's length differs from the header's.

    Examples
    --------
    >>> html = table([("a", 1)], ["name", "value"])
    >>> "<td>a</td>" in html.data
    True
    """
    from html import escape

    from IPython.display import HTML

    header = list(header)
    body = []
    for i, row in enumerate(rows):
        row = list(row)
        if len(row) != len(header):
            raise ValueError(f"rows[{i}] has {len(row)} cells, header has {len(header)}")
        body.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>")
    head = "<tr>" + "".join(f"<th>{escape(str(h))}</th>" for h in header) + "</tr>"
    return HTML(
        '<table class="npukit-table"><thead>' + head + "</thead><tbody>" + "".join(body) + "</tbody></table>"
    )


def numbers_table(*row_lists: Iterable[dict]) -> Any:
    """The "numbers so far" table: CameraNet's running tally, chapter by chapter.

    Each chapter module offers ``numbers(...)`` returning a list of records
    ``{"chapter": int, "quantity": str, "value": str, "how": str}``; a page
    passes the lists of every chapter up to itself, and the table is rebuilt
    from live computations at every build.

    Examples
    --------
    >>> t = numbers_table([{"chapter": 0, "quantity": "parameters", "value": "12,345",
    ...                     "how": "counted"}])
    >>> "parameters" in t.data
    True
    """
    rows = []
    for records in row_lists:
        for r in records:
            missing = {"chapter", "quantity", "value", "how"} - set(r)
            if missing:
                raise ValueError(f"a numbers record lacks {sorted(missing)}: {r!r}")
            rows.append((r["chapter"], r["quantity"], r["value"], r["how"]))
    return table(rows, ["ch.", "quantity", "value", "how it was obtained"])


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

    devices = list(ov.Core().available_devices)
    print(f"OpenVINO devices on this machine: {', '.join(devices) or 'none'}")
    for d in preferred:
        if any(x == d or x.startswith(d + ".") for x in devices):
            print(f"Using {d}.")
            return d
    print(f"No {' or '.join(preferred)} found: falling back to the CPU plugin (results are the same, speed differs).")
    return "CPU"
