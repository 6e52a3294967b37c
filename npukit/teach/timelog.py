"""Time on task: when a student ran a lab's cells and checks, and the minutes that adds up to.

The instructor guide ("How long it takes") asks for students' minutes, not
the computer's seconds. This module measures them, with nothing for the
student to note down:

* **The log.** With ``NPUKIT_TIME_LOG`` naming a file when ``npukit.teach``
  is imported, every cell the kernel runs and every check appends one JSON
  line to that file: the time (date and time of day), for a cell whether it
  raised, and for a check its name and outcome. The import's own ``start``
  line is written with the first of these, so a command that only imports
  ``npukit.teach`` writes nothing. Nothing else is written: no code, no
  answer, no output, no name. A relative path is
  taken from the kernel's working folder, which in Jupyter is the notebook's,
  so under nbgrader each lab's file lands in the lab's folder and is
  collected with the notebook. Unset (the default), nothing is written.
* **The minutes.** :func:`minutes` adds up the gaps between consecutive
  events, leaving out the gap before each kernel's ``start``. A gap longer than ``idle`` minutes is a break and counts as
  nothing, so a lab left open overnight does not count as a night's work,
  and neither does reading longer than ``idle`` without running a cell:
  the result is time at the notebook, which undercounts such reading.
  ``python -m npukit.teach minutes submitted/`` prints a class's table.

The log says when, never what: two students' logs can be compared, but a log
cannot show whose work it was.

Examples
--------
>>> events = [{"event": "start", "t": 0.0}, {"event": "cell", "t": 60.0},
...           {"event": "check", "t": 300.0, "check": "check_strides", "status": "failed"},
...           {"event": "check", "t": 420.0, "check": "check_strides", "status": "passed"},
...           {"event": "cell", "t": 420.0 + 3600}]          # an hour's break, then one more cell
>>> m = minutes(events, idle=15)
>>> m["active"], m["breaks"], m["passed"]["check_strides"], m["failed_before"]["check_strides"]
(7.0, 1, 7.0, 1)
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import time
import warnings
from typing import Any, Iterable

import numpy as np

from .. import _check

__all__ = ["TIME_LOG_ENV", "IDLE_MINUTES", "LOG_NAME", "read_log", "minutes", "find_logs", "summary", "report"]

#: The environment variable naming the log file; unset, nothing is logged.
TIME_LOG_ENV = "NPUKIT_TIME_LOG"
#: The log's file name the instructor guide recommends, and :func:`find_logs` looks for.
LOG_NAME = "npukit-time.jsonl"
#: A gap between two events longer than this many minutes is a break.
IDLE_MINUTES = 15.0

# The log's state, in a dict: the seal (npukit.teach.guard) refuses checks once a module-level
# name of npukit.teach is rebound, and the path is set after the seal. The "start" line waits
# for the first cell or check, so a command that only imports npukit.teach (the grader, the
# minutes command) writes nothing.
_state: dict[str, Any] = {"path": None, "since": None}


def _write(event: dict[str, Any]) -> None:
    path = _state["path"]
    if path is None:
        return
    lines = [{"t": round(time.time(), 3), **event}]
    if _state["since"] is not None:
        lines.insert(0, {"t": _state["since"], "event": "start"})
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write("".join(json.dumps(e, sort_keys=True) + "\n" for e in lines))
    except OSError as exc:   # a read-only folder or a full disk: say so once, then log nothing
        _state["path"] = None
        try:
            warnings.warn(f"{TIME_LOG_ENV}: cannot write {path} ({exc}); time on task is not logged", stacklevel=2)
        except Exception:    # warnings turned into errors: the log must never break a lab
            pass
        return
    _state["since"] = None


def _after_cell(result: Any) -> None:
    _write({"event": "cell", "ok": not (result.error_before_exec or result.error_in_exec)})


def start() -> None:
    """Open the log named by ``NPUKIT_TIME_LOG`` (called once, when ``npukit.teach`` is imported)."""
    name = os.environ.get(TIME_LOG_ENV, "").strip()
    if not name or _state["path"] is not None:
        return
    _state["path"] = pathlib.Path(name).expanduser().absolute()
    _state["since"] = round(time.time(), 3)
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.events.register("post_run_cell", _after_cell)


def record_check(check: str, status: str) -> None:
    """Log one check's outcome (called by every exported ``check_*``)."""
    _check.text(check, "check")
    _check.text(status, "status")
    _write({"event": "check", "check": check, "status": status})


def read_log(path: str | pathlib.Path) -> list[dict[str, Any]]:
    """The events of one log file, oldest first; a line that is not an event is skipped.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    """
    events = []
    for line in _check.path(path, "path").read_text(encoding="utf-8").splitlines():
        try:
            e = json.loads(line)
            _time(e)
        except ValueError:   # not JSON, or not an event with a time
            continue
        events.append(e)
    return sorted(events, key=_time)


def minutes(events: Iterable[dict[str, Any]], idle: float = IDLE_MINUTES) -> dict[str, Any]:
    """Minutes at the notebook from a log's events.

    Parameters
    ----------
    events : iterable of dict
        Events with a time ``t`` in seconds, as :func:`read_log` returns them.
    idle : float
        A gap longer than this many minutes is a break and counts as nothing.

    Returns
    -------
    dict
        ``active``: minutes of gaps no longer than ``idle``, leaving out the
        gap before each ``start`` line (a kernel started again, or a session
        of another lab in the same log); ``span``: minutes
        from the first event to the last; ``breaks``: how many gaps were longer;
        ``passed``: for each check that passed, the active minutes from the
        first event to its first pass; ``failed_before``: for each check, how
        many times it failed before that pass (or in all, if it never passed);
        ``cells``: cells run.

    Raises
    ------
    ValueError
        If ``idle`` is not positive, or an event has no time ``t``.
    """
    idle = _check.positive(idle, "idle")
    events = sorted(_iterable(events, "events", "event dicts"), key=_time)
    active, breaks, passed, failed = 0.0, 0, {}, {}
    for i, e in enumerate(events):
        if i and e.get("event") != "start":   # a new kernel's first line: the gap before it is not counted
            gap = (_time(e) - _time(events[i - 1])) / 60
            if gap > idle:
                breaks += 1
            else:
                active += gap
        if e.get("event") == "check" and e.get("check") not in passed:
            if e.get("status") == "passed":
                passed[e["check"]] = round(active, 1)
            elif e.get("status") == "failed":
                failed[e["check"]] = failed.get(e["check"], 0) + 1
    span = (_time(events[-1]) - _time(events[0])) / 60 if events else 0.0
    return {"active": round(active, 1), "span": round(span, 1), "breaks": breaks, "passed": passed,
            "failed_before": failed, "cells": sum(e.get("event") == "cell" for e in events)}


def _iterable(x: Any, name: str, of: str) -> list:
    if isinstance(x, (str, bytes, dict)) or not hasattr(x, "__iter__"):
        raise TypeError(f"{name} must be an iterable of {of}, got {type(x).__name__}")
    return list(x)


def _time(e: dict[str, Any]) -> float:
    t = e.get("t") if isinstance(e, dict) else None
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
        raise ValueError(f"events: each event needs a finite time 't' in seconds, got {e!r}")
    return float(t)


def find_logs(paths: Iterable[str | pathlib.Path], name: str = LOG_NAME) -> list[pathlib.Path]:
    """The log files among ``paths``: files as given, folders searched for ``name`` at any depth.

    Raises
    ------
    FileNotFoundError
        If a path does not exist.
    """
    _check.text(name, "name")
    found = []
    for p in (_check.path(q, "paths") for q in _check.sequence(paths, "paths")):
        if p.is_file():
            found.append(p)
        elif p.is_dir():
            found.extend(sorted(p.rglob(name)))
        else:
            raise FileNotFoundError(f"paths: {p} does not exist")
    return found


def _quantiles(values: list[float]) -> dict[str, float]:
    q = np.percentile(values, [0, 25, 50, 75, 100])
    return dict(zip(("min", "q1", "median", "q3", "max"), (round(float(v), 1) for v in q)))


def _sessions(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = []
    for e in events:
        if e.get("event") == "start" or not out:
            out.append([])
        out[-1].append(e)
    return out


def summary(logs: Iterable[str | pathlib.Path], checks_by_lab: dict[str, Iterable[str]], *,
            idle: float = IDLE_MINUTES) -> dict[str, Any]:
    """A class's minutes per lab, from the students' log files.

    Parameters
    ----------
    logs : iterable of path
        Log files, one per student and lab (:func:`find_logs`).
    checks_by_lab : dict
        Each lab's checker names (``{"01_tensors": ["check_strides", ...]}``).
        A log is cut into sessions at its ``start`` lines (one per kernel);
        a session belongs to the lab whose checks it ran, one that ran none
        to the lab whose notebook (``01_tensors.ipynb``) is the only lab beside
        the log, else to ``"?"``. A log with sessions of two labs (all labs in
        one folder) gives one row per lab.
    idle : float
        Passed to :func:`minutes`.

    Returns
    -------
    dict
        ``rows``: one dict per log and lab (``log``, ``lab``, and
        :func:`minutes`'s keys); ``labs``: per lab, ``logs``, ``active`` (min,
        q1, median, q3, max, in minutes, interpolated between logs as
        ``numpy.percentile`` does), ``finished`` (the same over the logs that
        passed every check of the lab) and ``exercises``: per check, how many
        logs passed it and the median minutes from the first event to its first
        pass.
    """
    if not isinstance(checks_by_lab, dict):
        raise TypeError(f"checks_by_lab must be a dict of lab name to checker names, got "
                        f"{type(checks_by_lab).__name__}")
    idle = _check.positive(idle, "idle")
    owner = {c: lab for lab, checks in checks_by_lab.items() for c in checks}
    rows = []
    for path in (_check.path(q, "logs") for q in _iterable(logs, "logs", "paths")):
        beside = [lab for lab in checks_by_lab if (path.parent / f"{lab}.ipynb").exists()]
        by_lab: dict[str, list[dict[str, Any]]] = {}
        for session in _sessions(read_log(path)):
            labs = {owner[e["check"]] for e in session if e.get("event") == "check" and e.get("check") in owner}
            lab = labs.pop() if len(labs) == 1 else (beside[0] if len(beside) == 1 and not labs else "?")
            by_lab.setdefault(lab, []).extend(session)
        rows += [{"log": str(path), "lab": lab, **minutes(events, idle)} for lab, events in by_lab.items()]
    out: dict[str, Any] = {}
    for lab in sorted({r["lab"] for r in rows}):
        mine = [r for r in rows if r["lab"] == lab]
        exercises = {}
        for check in checks_by_lab.get(lab, ()):
            times = [r["passed"][check] for r in mine if check in r["passed"]]
            exercises[check] = {"passed": len(times),
                                "median": _quantiles(times)["median"] if times else None}
        checks = set(checks_by_lab.get(lab, ()))
        done = [r["active"] for r in mine if checks and checks <= set(r["passed"])]
        out[lab] = {"logs": len(mine), "active": _quantiles([r["active"] for r in mine]), "exercises": exercises,
                    "finished": {"logs": len(done), "active": _quantiles(done) if done else None}}
    return {"rows": rows, "labs": out, "idle": idle}


def report(result: dict[str, Any]) -> str:
    """:func:`summary`'s result as text: one line per lab, then each lab's exercises."""
    if not isinstance(result, dict) or not {"labs", "idle"} <= set(result):
        raise TypeError("result must be the dict summary() returns (with 'labs' and 'idle')")
    lines = [f"minutes at the notebook (a gap over {result['idle']:g} min is a break and counts as nothing; "
             "'finished': the logs that passed every check; a middle half needs 4 logs)",
             f"{'lab':<14} {'logs':>4} {'median':>7} {'middle half':>12} {'longest':>8}   finished: logs, median"]

    def half(a: dict[str, float], n: int) -> str:
        return f"{a['q1']:>5.1f}–{a['q3']:<6.1f}" if n >= 4 else f"{'—':>12}"

    for lab, s in result["labs"].items():
        a, f = s["active"], s["finished"]
        done = f"{f['logs']}, {f['active']['median']:.1f}" if f["logs"] else "0"
        lines.append(f"{lab:<14} {s['logs']:>4} {a['median']:>7.1f} {half(a, s['logs'])} {a['max']:>8.1f}   {done}")
    for lab, s in result["labs"].items():
        for check, e in s["exercises"].items():
            at = "—" if e["median"] is None else f"{e['median']:.1f}"
            lines.append(f"  {lab} {check}: passed by {e['passed']} of {s['logs']}, median minute of first pass {at}")
    return "\n".join(lines)
