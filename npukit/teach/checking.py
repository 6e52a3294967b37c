"""The checking process when grading: runs the instructor's cells and checks, the learner's cells elsewhere.

``python -m npukit.teach.checking PLAN RESULT`` is started by the grader (:mod:`npukit.teach.grade`) for
one submission, in a fresh directory. ``PLAN`` (JSON, deleted once read) holds the grading seed, the time
allowed to each cell, a fresh directory for the learner's process, and the lab's code cells in order, each
marked ``lab`` (the instructor's), ``solution`` (the learner's, already screened) or ``check`` (the
instructor's check cell). This process:

1. starts the learner's process (:mod:`npukit.teach.learner`) in its own directory;
2. runs each ``lab`` cell here, then in the learner's process (up to the last solution cell: later cells
   cannot change what a check sees there), and hands the learner's process this process's values of the
   small plain variables the cell set (``t_step``, ``machine``): a measurement is made once, here, and a
   prediction is made from the same numbers the check compares it with;
3. runs each ``solution`` cell in the learner's process only, and binds here, under the names the
   instructor's solution cell defines (and no other: a learner's cell that reassigns a lab variable
   changes only the learner's process), a :class:`~npukit.teach.isolation.Remote` for each function and
   a copy of each plain value; the instructor's cell's imports are made here;
4. runs each ``check`` cell here, and records what the ledger (:mod:`npukit.teach.core`) says of it.

No learner's code ever runs in this process: what decides the grade (the checks, their references, the
timing, the ledger, the seed) is out of its reach. ``RESULT`` receives, after every cell, each cell's
output, error and ledger entries, and the learner's process's refusals.

See the instructor guide, "Grading" (chapters/instructor.md).
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import io
import json
import linecache
import os
import signal
import subprocess
import sys
import time
import types
from typing import Any

import numpy as np

from . import core, guard
from .isolation import CannotCross, Codec, Pipe, Remote, Stopped, public_name

_TEACH_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_SYNC_LIMIT = 64 * 1024     # bytes of a cell's plain values handed to the learner's process, at most


class CellTimeout(BaseException):
    """A cell of this process ran longer than the time allowed."""


def _lendable(obj: Any) -> bool:
    """Objects the learner's code may use through a stand-in: the checkers' and the instructor cells', OpenVINO's."""
    if isinstance(obj, types.FunctionType):
        name = obj.__code__.co_filename
        return name.startswith(_TEACH_DIR) or name.startswith("<lab cell ") or name.startswith("<check cell ")
    if isinstance(obj, types.MethodType):
        return _lendable(obj.__self__) or _lendable(obj.__func__)
    if isinstance(obj, types.BuiltinMethodType):
        owner = getattr(obj, "__self__", None)
        return owner is not None and not isinstance(owner, types.ModuleType) and _lendable(owner)
    if isinstance(obj, functools.partial):
        return _lendable(obj.func)
    if isinstance(obj, np.ndarray):
        return _foreign(obj)
    module = getattr(type(obj), "__module__", "") or ""
    return module.startswith(("npukit.teach", "openvino")) or (module == "__main__" and not isinstance(obj, type))


def _foreign(a: np.ndarray) -> bool:
    """A view of memory that an object other than an array owns (an OpenVINO tensor's data)."""
    base = a
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    return not isinstance(base, np.ndarray)


class Learner:
    """The learner's process, as the checking process sees it."""

    def __init__(self, directory: str, log: str, timeout: float) -> None:
        self.directory, self.log, self.timeout = directory, log, timeout
        self._replaying = False
        self.codec = Codec("checking", lendable=_lendable)
        self.history: list[tuple[dict, list]] = []    # run and set requests, replayed after a restart
        self.deadline: float | None = None
        self.dead: str | None = None
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        to_learner, from_learner = os.pipe(), os.pipe()
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")
               or k.startswith(("OPENBLAS_", "OMP_", "MKL_"))}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-m", "npukit.teach.learner", str(to_learner[0]), str(from_learner[1])],
                cwd=self.directory, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                pass_fds=(to_learner[0], from_learner[1]), start_new_session=True)
        os.close(to_learner[0])
        os.close(from_learner[1])
        self.pipe = Pipe(from_learner[0], to_learner[1])

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.pipe.send({"op": "exit"})
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._kill()
        for fd in (self.pipe.read_fd, self.pipe.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.process.wait(timeout=10)

    # -- requests ------------------------------------------------------------------------------------------

    def request(self, header: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
        """Send one request and serve the callbacks it makes until its answer comes."""
        if self.dead is not None:
            raise Stopped(self.dead)
        watching = sys.getprofile()   # a check's watch: nothing of the learner's runs here, so it can rest
        sys.setprofile(None)
        try:
            self.pipe.send(header, blobs)
            while True:
                reply, got = self.pipe.receive(self.deadline)
                if "cb" not in reply:
                    break
                answer, out = self._serve(reply, got)
                self.pipe.send(answer, out)
        except BaseException as exc:  # noqa: BLE001 - whatever stopped the exchange, the process is lost
            reason = self._lost(exc, header)
            if isinstance(exc, (TimeoutError, EOFError, OSError, Stopped, ValueError)):
                raise Stopped(reason) from None
            raise
        finally:
            sys.setprofile(watching)
        if "failed" in reply:
            raise Stopped(f"the learner's process could not do what was asked: {reply['failed']}")
        return reply, got

    def _lost(self, exc: BaseException, header: dict) -> str:
        """The exchange broke (a hang, a death, a timeout here): stop the process; start a fresh one with the
        same cells run (at most three times), so the exercises after a hanging one are still graded."""
        what = ("did not answer within the time allowed" if isinstance(exc, (TimeoutError, CellTimeout)) else
                "ended" if isinstance(exc, EOFError) else f"failed ({type(exc).__name__})")
        reason = f"the learner's process {what} while running {_what(header)}; the grader stopped it"
        self._kill()
        self.codec.release()
        self.dead = reason
        if self._replaying or self.restarts >= 3:
            return reason
        self.restarts += 1
        self.history = [(h, b) for h, b in self.history if h is not header]
        self._start()
        self.dead, self._replaying = None, True
        try:
            for old, old_blobs in self.history:
                self.deadline = time.monotonic() + self.timeout
                self.request(old, old_blobs)
        except Stopped:
            self.dead = reason
        finally:
            self._replaying = False
        return reason

    def run(self, index: int, source: str, kind: str) -> tuple[dict, list[bytes]]:
        header = {"op": "run", "cell": index, "source": source, "kind": kind}
        self.history.append((header, []))
        try:
            return self.request(header, [])
        except Stopped as exc:
            self.history = [(h, b) for h, b in self.history if h is not header]   # not run again after a restart
            return {"error": {"type": "Stopped", "message": str(exc), "where": []}, "bound": {}, "stdout": "",
                    "refused": []}, []

    def set(self, values: dict) -> None:
        blobs: list[bytes] = []
        header = {"op": "set", "values": self.codec.encode(values, blobs, lend=False)}
        self.codec.release()
        self.history.append((header, blobs))
        with contextlib.suppress(Stopped):
            self.request(header, blobs)

    def release(self) -> None:
        self.codec.release()
        if self.dead is None:
            with contextlib.suppress(Stopped):
                self.request({"op": "release"}, [])

    def call(self, handle: int, args: tuple, kwargs: dict, around: str | None) -> Any:
        calling = core._calling()
        blobs: list[bytes] = []
        header = {"op": "call", "handle": handle, "around": around,
                  "args": self.codec.encode(list(args), blobs), "kwargs": self.codec.encode(dict(kwargs), blobs),
                  "forbid": None if calling is None else list(calling[1].paths),
                  "exercise": None if calling is None else calling[0]}
        reply, got = self.request(header, blobs)
        self.codec.apply_writes(reply.get("writes"), got)
        refused = reply.get("refused") or []
        if refused:
            first = refused[0]
            raise core.RemoteForbidden(str(first.get("detail")), direct=True, why=str(first.get("why")))
        if "is" in reply:
            raise core.RemoteForbidden(is_=str(reply["is"]))
        if "forbidden" in reply:
            f = reply["forbidden"]
            raise core.RemoteForbidden(f.get("called"), direct=bool(f.get("direct")), unhooked=bool(f.get("unhooked")))
        if "raised" in reply:
            raise core.remote_error(reply["raised"])
        if "cannot" in reply:
            raise core.CheckFailed(f"{header['exercise'] or 'your function'}: your function returned "
                                   f"{reply['cannot']}.")
        return self.codec.decode(reply.get("result"), got)

    # -- callbacks: the learner's code using an object lent to it ---------------------------------------------

    def _serve(self, msg: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
        out: list[bytes] = []
        try:
            obj = self.codec.lent[int(msg["ref"])]
            kind = msg["cb"]
            if kind == "getattr":
                name = msg.get("name")
                if not public_name(name):
                    raise AttributeError(f"{name!r}: only public attributes of a lent object can be read")
                value = getattr(obj, name)
            elif kind == "call":
                value = obj(*self.codec.decode(msg.get("args", []), blobs), **self.codec.decode(msg.get("kwargs"), blobs))
            elif kind == "getitem":
                value = obj[self.codec.decode(msg.get("key"), blobs)]
            elif kind == "len":
                value = len(obj)
            elif kind == "list":
                value = list(obj)
            elif kind == "array":
                value = np.array(obj)
            else:
                raise ValueError(f"unknown request {kind!r}")
            if isinstance(value, np.ndarray) and _foreign(value):
                ref = self.codec._next()
                self.codec.lent[ref] = value
                return {"value": {"$": "lent", "ref": ref, "type": "ndarray"}}, out
            return {"value": self.codec.encode(value, out)}, out
        except Exception as exc:  # noqa: BLE001 - raised again in the learner's code
            check = ("NotAttempted" if isinstance(exc, core.NotAttempted) else
                     "CheckFailed" if isinstance(exc, core.CheckFailed) else None)
            return {"raised": {"type": type(exc).__name__, "check": check, "message": str(exc)[:2000]}}, []


def _what(header: dict) -> str:
    if header.get("op") == "run":
        return f"cell {header.get('cell')}"
    if header.get("op") == "call":
        return f"a call of your function{' for ' + header['exercise'] if header.get('exercise') else ''}"
    return "the notebook"


# ---- this process's cells -------------------------------------------------------------------------------


def _display(*objects: Any, **options: Any) -> None:
    """IPython's ``display`` when there is no IPython: shows nothing."""


def _alarm(signum: int, frame: Any) -> None:
    raise CellTimeout()


def _execute(source: str, ns: dict, filename: str, seconds: float) -> tuple[str, dict | None]:
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    out, error = io.StringIO(), None
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        code = compile(source, filename, "exec")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(code, ns)
    except CellTimeout:
        error = {"type": "Timeout", "message": f"the cell did not finish within {seconds:g} s"}
    except BaseException as exc:  # noqa: BLE001 - a failing cell is recorded; the next one runs
        text = str(exc).strip().splitlines()
        error = {"type": type(exc).__name__, "message": text[0] if text else ""}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return out.getvalue()[-20000:], error


def _syncable(value: Any, budget: list[int]) -> bool:
    """Small plain values and npukit records of them (no arrays: the two processes compute those alike)."""
    budget[0] -= 1
    if budget[0] < 0:
        return False
    if value is None or type(value) in (bool, int, float, complex, str) or (
            isinstance(value, np.generic) and value.dtype.kind in "biufc"):
        return True
    if type(value) in (tuple, list, set, frozenset):
        return all(_syncable(v, budget) for v in value)
    if type(value) is dict:
        return all(_syncable(k, budget) and _syncable(v, budget) for k, v in value.items())
    module = getattr(type(value), "__module__", "") or ""
    if module.startswith("npukit.") and not module.startswith("npukit.teach") and hasattr(value, "__dict__"):
        return all(_syncable(v, budget) for v in vars(value).values())
    return False


def _measured(before: dict, ns: dict) -> dict:
    """The small plain values a cell bound (new or rebound names)."""
    out = {}
    for name, value in ns.items():
        if name.startswith("_") or before.get(name, _MISSING) is value or isinstance(value, Remote):
            continue
        if _syncable(value, [4096]):
            out[name] = value
    blobs: list[bytes] = []
    try:
        size = len(json.dumps(Codec("checking").encode(out, blobs, lend=False))) + sum(map(len, blobs))
    except CannotCross:
        return {}
    return out if size <= _SYNC_LIMIT else {}


_MISSING = object()


def run_plan(plan: dict, result_path: str) -> dict:
    """Run the plan (see the module docstring); write the result after every cell; return it."""
    core._set_grade_seed(int(plan["seed"]))
    timeout = float(plan["timeout"])
    builtins.display = _display
    with contextlib.suppress(ImportError):
        import plotly.io

        plotly.io.renderers.default = ""
    ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    cells = plan["cells"]
    last_solution = max((c["index"] for c in cells if c["kind"] == "solution"), default=-1)
    learner = Learner(plan["learner_dir"], os.path.join(os.getcwd(), "learner.log"), timeout)
    result: dict[str, Any] = {"cells": [], "restarts": 0}
    try:
        for cell in cells:
            index, kind, source = int(cell["index"]), cell["kind"], cell["source"]
            record: dict[str, Any] = {"index": index, "kind": kind}
            learner.deadline = time.monotonic() + timeout
            if kind == "solution":
                reply, blobs = learner.run(index, source, "solution")
                record.update(stdout=reply.get("stdout", ""), error=reply.get("error"), refused=reply.get("refused"))
                if cell.get("imports"):   # the instructor's imports, made here: nothing of the learner's
                    _execute(cell["imports"], ns, f"<lab cell {index}>", timeout)
                wanted = set(cell.get("names", ()))
                for name, what in reply.get("bound", {}).items():
                    if name not in wanted:   # only what the instructor's cell defines: not a lab variable
                        continue
                    if what.get("kind") == "function":
                        ns[name] = Remote(learner, int(what["handle"]), name)
                    elif what.get("kind") == "value":
                        try:
                            ns[name] = learner.codec.decode(what["value"], blobs)
                        except Stopped as exc:
                            record["error"] = {"type": "Stopped", "message": str(exc)}
            else:
                before = dict(ns)
                start = len(core._LEDGER)
                out, error = _execute(source, ns, f"<{kind} cell {index}>", timeout)
                record.update(stdout=out, error=error)
                if kind == "check":
                    record["ledger"] = core._ledger_since(start)
                elif index < last_solution:
                    learner.deadline = time.monotonic() + timeout
                    learner.release()
                    reply, _ = learner.run(index, source, "lab")
                    if reply.get("error") or reply.get("refused"):   # the learner's process lacks what this cell made
                        record["learner"] = {"error": reply.get("error"), "refused": reply.get("refused")}
                    values = _measured(before, ns)
                    if values:
                        learner.set(values)
            learner.release()
            result["cells"].append(record)
            result["restarts"] = learner.restarts
            _write(result_path, result)
    finally:
        learner.close()
    return result


def _write(path: str, result: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    plan_path, result_path = argv
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    os.remove(plan_path)     # the seed is in this process's memory only
    try:
        run_plan(plan, result_path)
    except BaseException as exc:  # noqa: BLE001 - reported to the grader
        with contextlib.suppress(Exception):
            with open(result_path, encoding="utf-8") as f:
                result = json.load(f)
            result["fatal"] = f"{type(exc).__name__}: {exc}"[:500]
            _write(result_path, result)
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
