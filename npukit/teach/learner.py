"""The learner's process when grading: runs the lab's cells with the learner's solutions, answers calls.

The checking process (:mod:`npukit.teach.checking`) starts it as
``python -I -m npukit.teach.learner READ_FD WRITE_FD`` in a fresh directory of its own, and talks to it
through :mod:`npukit.teach.isolation` (the invariant: only data crosses). Before any cell runs, it sets
itself up in ways the learner's code cannot undo:

* **an audit hook** (PEP 578: a hook cannot be removed once added). While a learner's cell or function is
  on the stack it refuses: compiling or running code from source the grader's screen did not see
  (``exec``, ``eval``, ``compile``, re-running a loaded module), creating code or function objects,
  reading a frame or a code object (``sys._getframe``, ``inspect.currentframe``, a traceback's or a
  generator's frame, ``__code__``, ``__defaults__``), setting a profile or trace hook, adding an audit
  hook, gc's object lists, ctypes, ``marshal``, processes, signals, sockets, writing files outside this
  directory, reading another process's ``/proc`` entry, and importing a module a solution may not import
  (:data:`npukit.teach.screen.ALLOWED_IMPORTS`). A refusal raises ``PermissionError`` and is reported to
  the checking process, which fails the check that was running.
* **no threads**: Python 3.11 has no audit event for starting one, so the functions that do are
  replaced; a learner's code that starts a thread gets ``PermissionError``.
* **each call in a check** runs under the watch (:func:`npukit.teach.guard.watch`) with that check's
  refusals, after the check's forbidden module functions have been swapped for refusing stand-ins, and
  against the notebook **as it stood when the function's cell ended**: a prediction cannot read what a
  later cell measured.

See the instructor guide, "Grading" (chapters/instructor.md).
"""

from __future__ import annotations

import builtins
import contextlib
import io
import linecache
import os
import sys
import types
from typing import Any, Callable

SOLUTION = "<solution cell "   # the file name of code compiled from a learner's solution cell starts so
LAB = "<lab cell "


def _is_learner(frame: Any) -> bool:
    return frame.f_code.co_filename.startswith(SOLUTION)


def _learner_on_stack(frame: Any) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith(SOLUTION):
            return True
        frame = frame.f_back
    return False


# Events refused while the learner's code is on the stack (a prefix before the first dot, or a full name).
_REFUSED_FAMILIES = {"ctypes", "gc", "socket", "subprocess", "signal", "pty", "mmap", "shutil", "resource",
                     "webbrowser", "winreg", "msvcrt", "_winapi", "sqlite3", "urllib", "http", "ftplib", "smtplib",
                     "telnetlib", "imaplib", "poplib", "nntplib", "tempfile"}
_REFUSED_EVENTS = {"function.__new__", "code.__new__", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                   "os.fork", "os.forkpty", "os.kill", "os.killpg", "os.remove", "os.rename", "os.rmdir",
                   "os.mkdir", "os.chmod", "os.chown", "os.chdir", "os.link", "os.symlink", "os.truncate",
                   "os.utime", "os.chflags", "os.lchflags", "os.setxattr", "os.removexattr", "os.startfile",
                   "builtins.input", "builtins.breakpoint", "sys.excepthook", "sys.unraisablehook",
                   "sys._current_frames", "cpython.PyInterpreterState_Clear", "os.putenv", "os.unsetenv"}
_DIRECT_EVENTS = {"object.__getattr__", "object.__setattr__", "object.__delattr__", "marshal.loads", "marshal.load",
                  "pickle.find_class"}   # refused when the learner's own line does it (imports use marshal)
_CODE_GENERATORS = ("dataclasses.py", os.path.join("collections", "__init__.py"), "enum.py")
_WHY = {
    "compile": "running code from a string: a graded solution is the code in its cell",
    "exec": "running code from a string or another module: a graded solution is the code in its cell",
    "sys._getframe": "reading the interpreter's frames",
    "object.__getattr__": "reading the interpreter's internals (a frame, a code object, default values)",
    "object.__setattr__": "changing a function's code or defaults",
    "import": "importing a module a solution does not need",
    "open": "writing files outside the grading directory, or reading another process",
    "sys.setprofile": "changing the profile hook the grader watches calls with",
    "sys.settrace": "setting a trace hook",
    "sys.addaudithook": "adding an audit hook",
    "thread": "starting a thread: the watch sees only the thread the function runs in",
}


def _why(event: str) -> str:
    return _WHY.get(event) or _WHY.get(event.split(".")[0]) or "something a solution never needs"


def make_audit_hook(here: str, refusals: list, watch_codes: frozenset) -> Callable[[str, tuple], None]:
    """The audit hook of a learner's process rooted at ``here`` (see the module docstring).

    ``refusals`` receives one ``{"event", "why", "detail"}`` per refusal; ``watch_codes`` are the code
    objects allowed to set the profile hook (:func:`npukit.teach.guard.watch`, this process's callbacks).
    """
    from . import screen

    here = os.path.realpath(here) + os.sep
    own = f"/proc/{os.getpid()}"
    state = {"busy": False}
    getframe, realpath, fsdecode = sys._getframe, os.path.realpath, os.fsdecode

    def importer(frame: Any) -> Any:
        """The frame an import was asked from: past the import machinery and importlib.import_module."""
        while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                     or f"{os.sep}importlib{os.sep}" in frame.f_code.co_filename):
            frame = frame.f_back
        return frame

    def fresh_module(filename: str) -> str | None:
        for name, module in list(sys.modules.items()):
            if getattr(module, "__file__", None) == filename:
                return name
        return None

    def running_again(filename: str) -> bool:
        """Code from ``filename`` whose module was imported before (not one being imported right now)."""
        for module in list(sys.modules.values()):
            if getattr(module, "__file__", None) == filename:
                return not getattr(getattr(module, "__spec__", None), "_initializing", False)
        return False

    def refuse(event: str, detail: str) -> None:
        refusals.append({"event": event, "why": _why(event), "detail": detail[:200]})
        raise PermissionError(f"not allowed when grading: {detail} ({_why(event)})")

    def writes(args: tuple) -> bool:
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 else 0
        if isinstance(mode, str) and any(c in mode for c in "wax+"):
            return True
        return isinstance(flags, int) and bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC))

    def other_process(path: str) -> bool:
        parts = path.split(os.sep)
        return len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and f"/proc/{parts[2]}" != own

    def judge(event: str, args: tuple) -> None:
        caller = getframe(2)      # 0: judge, 1: hook, 2: the frame whose operation raised the event
        if event in ("sys.setprofile", "sys.settrace"):
            if caller.f_code not in watch_codes:
                refuse(event, f"{event}()")
            return
        if event == "sys.addaudithook":
            refuse(event, "sys.addaudithook()")
        direct = _is_learner(caller)
        if event in _DIRECT_EVENTS:
            if direct:
                refuse(event, f"the attribute {args[1]!r} of a {type(args[0]).__name__}" if event.startswith("object.")
                       else event)
            return
        if event == "sys._getframe":
            if direct or (caller.f_code.co_filename.endswith(("inspect.py", "traceback.py"))
                          and _learner_on_stack(caller)):
                refuse(event, "reading a frame")
            return
        if event == "import":
            asker, name = importer(caller), str(args[0])
            if asker is not None and _is_learner(asker) and name and not screen.allowed_import(name):
                refuse(event, f"import {args[0]}")
            return
        if not _learner_on_stack(caller):
            return
        if event in ("compile", "exec"):
            filename = caller.f_code.co_filename
            if direct:
                refuse(event, f"{event}() in the solution")
            if filename.endswith(_CODE_GENERATORS):       # dataclasses, namedtuple, enum: code from names
                return
            if event == "compile":
                source, name = args[0], str(args[1])
                if name.startswith(os.sep) and name.endswith(".py") and not running_again(name):
                    module, asker = fresh_module(name), importer(caller)   # a module imported for the first time
                    if module and asker is not None and _is_learner(asker) and not screen.allowed_import(module):
                        refuse("import", f"import {module}")              # (importlib.import_module raises no
                    return                                                # "import" event)
                text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
                if isinstance(text, str) and not screen.refusals(text):
                    return                                # e.g. typing evaluating a forward reference
                refuse(event, f"compiling code for {name}")
            code = args[0]
            name = getattr(code, "co_filename", "")
            if name.startswith(os.sep) and not running_again(name):
                module, asker = fresh_module(name), importer(caller)
                if module and asker is not None and _is_learner(asker) and not screen.allowed_import(module):
                    refuse("import", f"import {module}")
                return
            if name.startswith(os.sep) or name.startswith(SOLUTION) or name.startswith(LAB):
                refuse(event, f"running the code of {os.path.basename(name) or name} again")
            return
        if event == "open" or event in ("os.listdir", "os.scandir"):
            path = args[0]
            if isinstance(path, int) or path is None:
                return
            path = realpath(fsdecode(path))
            if other_process(path):
                refuse("open", f"opening {path}")
            if event == "open" and writes(args) and not (path + os.sep).startswith(here):
                refuse("open", f"writing {path}")
            return
        if event in _REFUSED_EVENTS or event.split(".")[0] in _REFUSED_FAMILIES:
            refuse(event, event)

    interesting = ({"sys.setprofile", "sys.settrace", "sys.addaudithook", "sys._getframe", "import", "compile",
                    "exec", "open", "os.listdir", "os.scandir"} | _DIRECT_EVENTS | _REFUSED_EVENTS)

    def hook(event: str, args: tuple) -> None:
        if state["busy"] or (event not in interesting and event.split(".")[0] not in _REFUSED_FAMILIES):
            return
        state["busy"] = True
        try:
            judge(event, args)
        finally:
            state["busy"] = False

    return hook


def _refuse_threads(refusals: list) -> None:
    """Replace the functions that start threads: refused while the learner's code is on the stack."""
    import _thread
    import threading

    real = _thread.start_new_thread

    def start_new_thread(function: Any, args: tuple, kwargs: dict | None = None) -> int:
        if _learner_on_stack(sys._getframe(1)):
            refusals.append({"event": "thread", "why": _why("thread"), "detail": "starting a thread"})
            raise PermissionError(f"not allowed when grading: starting a thread ({_why('thread')})")
        return real(function, args, kwargs or {})

    _thread.start_new_thread = threading._start_new_thread = start_new_thread


class _Tail(io.TextIOBase):
    """A text stream keeping only its last ``limit`` characters: a cell printing without end fills no memory."""

    def __init__(self, limit: int = 20000) -> None:
        self.limit, self.text = limit, ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text = (self.text + str(text))[-self.limit:]
        return len(text)

    def getvalue(self) -> str:
        return self.text


def _display(*objects: Any, **options: Any) -> None:
    """IPython's ``display`` when there is no IPython: shows nothing (nobody looks at a grading run)."""


# ---- the session -------------------------------------------------------------------------------------------


class Session:
    """The learner's process: a namespace, the functions handed out, and the loop answering the checker."""

    def __init__(self, pipe: Any, here: str) -> None:
        from . import guard
        from .isolation import Codec, Lent

        self.pipe, self.here, self.guard = pipe, here, guard
        self.codec = Codec("learner", stand_in=lambda ref, kind: Lent(ref, kind, self))
        self.ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
        self.handles: dict[int, tuple[Any, dict]] = {}
        self.refusals: list[dict] = []
        self._forbid_cache: dict[tuple, Any] = {}

    # -- cells -----------------------------------------------------------------------------------------------

    def run(self, msg: dict) -> tuple[dict, list]:
        index, source, kind = int(msg["cell"]), str(msg["source"]), str(msg["kind"])
        filename = f"{SOLUTION if kind == 'solution' else LAB}{index}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        before = dict(self.ns)
        out, error = _Tail(), None
        self.refusals.clear()
        try:
            code = compile(source, filename, "exec")
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                exec(code, self.ns)
        except BaseException as exc:  # noqa: BLE001 - a cell's failure is reported, never ours
            error = self._describe(exc)
        blobs: list[bytes] = []
        bound = {}
        if kind == "solution":
            snapshot = dict(self.ns)
            for name, value in list(self.ns.items()):
                if name.startswith("__") or before.get(name, _MISSING) is value:
                    continue
                bound[name] = self._handed_out(value, snapshot, blobs)
        self.codec.release()
        return {"error": error, "stdout": out.getvalue(), "bound": bound,
                "refused": list(self.refusals)}, blobs

    def _handed_out(self, value: Any, snapshot: dict, blobs: list) -> dict:
        from .isolation import CannotCross

        if isinstance(value, types.ModuleType):
            return {"kind": "other", "type": "module"}
        if callable(value):
            handle = len(self.handles) + 1
            self.handles[handle] = (value, snapshot)
            return {"kind": "function", "handle": handle}
        try:
            return {"kind": "value", "value": self.codec.encode(value, blobs)}
        except CannotCross:
            return {"kind": "other", "type": type(value).__name__}
        except Exception as exc:  # noqa: BLE001 - converting ran the learner's code, which failed
            return {"kind": "error", "error": self._describe(exc)}

    def set(self, msg: dict, blobs: list) -> tuple[dict, list]:
        """Take the checking process's values of what a lab cell measured (one measurement for both)."""
        values = self.codec.decode(msg["values"], blobs)
        self.ns.update(values)
        self.codec.release()
        return {"ok": True}, []

    # -- calls -----------------------------------------------------------------------------------------------

    def call(self, msg: dict, blobs: list) -> tuple[dict, list]:
        from .isolation import CannotCross, _import

        obj, snapshot = self.handles[int(msg["handle"])]
        args = self.codec.decode(msg["args"], blobs)
        kwargs = self.codec.decode(msg["kwargs"], blobs)
        forbidden = self._forbidden(tuple(msg["forbid"])) if msg.get("forbid") is not None else None
        target = obj
        if msg.get("around"):
            helper = _import(str(msg["around"]))
            if not (isinstance(helper, types.FunctionType) and helper.__module__.startswith("npukit.teach.")):
                raise ValueError("around must name a function of an npukit.teach module")
            target = lambda *a, **k: helper(obj, *a, **k)  # noqa: E731
        if forbidden is not None:
            label = self.guard.forbidden_label(obj, forbidden)
            if label is not None:
                return {"is": label}, []
        out: list[bytes] = []
        converted: list = []

        def run(*a: Any) -> None:   # under the watch: converting the result runs the learner's code too
            converted.append(self.codec.encode(target(*a, **kwargs), out))

        live = dict(self.ns)
        self.ns.clear()
        self.ns.update(snapshot)
        self.refusals.clear()
        seen, error = None, None
        try:
            with contextlib.redirect_stdout(_Tail()), contextlib.redirect_stderr(_Tail()):
                if forbidden is None:
                    run(*args)
                else:
                    with self._stand_ins(forbidden):
                        _, seen, error = self.guard.watch(run, tuple(args), forbidden)
        except BaseException as exc:  # noqa: BLE001 - the learner's failure is reported
            error = exc
        finally:
            self.ns.clear()
            self.ns.update(live)
        reply: dict[str, Any] = {"writes": self.codec.writes(out), "refused": list(self.refusals)}
        if seen is not None and (seen.called is not None or seen.unhooked):
            reply["forbidden"] = {"called": seen.called, "direct": seen.direct, "unhooked": seen.unhooked}
        elif isinstance(error, CannotCross):
            reply["cannot"] = str(error)
        elif error is not None:
            reply["raised"] = self._describe(error)
        else:
            reply["result"] = converted[0]
        return reply, out

    def _forbidden(self, paths: tuple) -> Any:
        from .isolation import _import

        if paths in self._forbid_cache:   # a check calls the function many times with one list
            return self._forbid_cache[paths]
        forbidden = self.guard.Forbidden()
        for path in paths:
            try:
                forbidden.add(_import(str(path)))
            except Exception:  # noqa: BLE001 - a name this process does not have cannot be called here either
                continue
        forbidden.paths = list(paths)
        self._forbid_cache[paths] = forbidden
        return forbidden

    @contextlib.contextmanager
    def _stand_ins(self, forbidden: Any) -> Any:
        """Swap the check's forbidden module-level functions for refusing stand-ins while the call runs."""
        from .isolation import _import

        swapped = []
        for path in forbidden.paths:
            module, _, name = str(path).partition(":")
            try:
                owner = sys.modules.get(module) or _import(module)
            except Exception:  # noqa: BLE001
                continue
            names = [name] if name and "." not in name else [] if name else [
                k for k, v in list(vars(owner).items()) if callable(v) and getattr(v, "__module__", None) == module]
            for k in names:
                real = vars(owner).get(k)
                if real is None or not callable(real):
                    continue
                if isinstance(real, type):
                    if any(isinstance(v, types.FunctionType) for v in vars(real).values()):
                        continue   # a Python class: the watch sees its code run
                    stand_in = self._refusing_type(real, f"{module}.{k}")   # a C type: calling it is unseen
                else:
                    stand_in = self._refusing(real, f"{module}.{k}")
                swapped.append((owner, k, real))
                setattr(owner, k, stand_in)
        try:
            yield
        finally:
            for owner, k, real in reversed(swapped):
                setattr(owner, k, real)

    def _by_learner(self, frame: Any) -> bool:
        """Walking out from ``frame``: does a learner's (or a lab cell's) frame come before a checker's?"""
        while frame is not None:
            if _is_learner(frame) or frame.f_code.co_filename.startswith(LAB):
                return True
            if self.guard.is_teach_code(frame.f_code):
                return False     # the checker's own code, or this process's
            frame = frame.f_back
        return False

    def _refusing(self, real: Any, label: str) -> Any:
        refusals, by_learner = self.refusals, self._by_learner

        def refused(*args: Any, **kwargs: Any) -> Any:
            if not by_learner(sys._getframe(1)):
                return real(*args, **kwargs)
            refusals.append({"event": "call", "why": "this exercise asks you to work it out yourself",
                             "detail": f"calling {label}"})
            raise PermissionError(f"not allowed in this exercise: {label}")

        return refused

    def _refusing_type(self, real: type, label: str) -> type:
        """A stand-in for a C type: ``isinstance`` and attributes as the type's; constructing one is refused."""
        refusals, by_learner = self.refusals, self._by_learner

        class Refusing(type):
            def __instancecheck__(cls, obj: Any) -> bool:
                return isinstance(obj, real)

            def __subclasscheck__(cls, sub: Any) -> bool:
                return issubclass(sub, real)

            def __getattr__(cls, name: str) -> Any:
                return getattr(real, name)

            def __call__(cls, *args: Any, **kwargs: Any) -> Any:
                if not by_learner(sys._getframe(1)):
                    return real(*args, **kwargs)
                refusals.append({"event": "call", "why": "this exercise asks you to work it out yourself",
                                 "detail": f"constructing {label}"})
                raise PermissionError(f"not allowed in this exercise: constructing {label}")

        return Refusing(real.__name__, (), {"__module__": real.__module__})

    # -- callbacks to lent objects ---------------------------------------------------------------------------

    def callback(self, kind: str, ref: int, **fields: Any) -> Any:
        """Ask the checking process about a lent object (called by :class:`~npukit.teach.isolation.Lent`)."""
        import gc

        blobs: list[bytes] = []
        header = {"cb": kind, "ref": ref, **{k: self.codec.encode(v, blobs) for k, v in fields.items()}}
        # The exchange is this process's own code: the watch rests while it runs (a callback timed by the
        # learner's code costs the round trip only). No learner's code can run meanwhile: nothing of it is
        # dropped here before the watch is back (``fields`` lives until the return), and gc waits.
        watching, collecting = sys.getprofile(), gc.isenabled()
        gc.disable()
        sys.setprofile(None)
        try:
            self.pipe.send(header, blobs)
            reply, blobs = self.pipe.receive()
            value = self.codec.decode(reply.get("value"), blobs) if "raised" not in reply else None
        finally:
            sys.setprofile(watching)
            if collecting:
                gc.enable()
        if "raised" in reply:
            raise _rebuilt(reply["raised"])
        return value

    # -- the loop ---------------------------------------------------------------------------------------------

    def _describe(self, exc: BaseException) -> dict:
        from . import core

        kind = ("NotAttempted" if isinstance(exc, core.NotAttempted) else
                "CheckFailed" if isinstance(exc, core.CheckFailed) else None)
        return {"type": type(exc).__name__, "check": kind,
                "bases": [c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins"],
                "message": str(exc)[:2000], "where": core._learner_lines(exc.__traceback__)[-8:],
                "learner": core._raised_by_learner(exc.__traceback__)}

    def serve(self) -> None:
        while True:
            try:
                msg, blobs = self.pipe.receive()
            except EOFError:
                return
            op = msg.get("op")
            if op == "exit":
                return
            handler = {"run": lambda: self.run(msg), "set": lambda: self.set(msg, blobs),
                       "call": lambda: self.call(msg, blobs),
                       "release": lambda: (self.codec.release() or ({"ok": True}, []))}.get(op)
            try:
                reply, out = handler() if handler else ({"failed": f"unknown request {op!r}"}, [])
            except Exception as exc:  # noqa: BLE001 - reported to the checking process, which decides
                reply, out = {"failed": f"{type(exc).__name__}: {exc}"[:500]}, []
            self.pipe.send(reply, out)


_MISSING = object()


def _rebuilt(info: dict) -> BaseException:
    """The exception the checking process raised while serving a lent object, rebuilt here."""
    from . import core

    message = str(info.get("message", ""))
    if info.get("check") == "NotAttempted":
        return core.NotAttempted(message)
    if info.get("check") == "CheckFailed":
        return core.CheckFailed(message)
    cls = getattr(builtins, str(info.get("type", "")), None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls(message)
    return RuntimeError(f"{info.get('type')}: {message}")


def main(argv: list[str] | None = None) -> int:
    """Set the process up (see the module docstring), then answer the checking process until it is done."""
    argv = sys.argv[1:] if argv is None else argv
    read_fd, write_fd = int(argv[0]), int(argv[1])
    sys.dont_write_bytecode = True
    import numpy  # noqa: F401  (loaded before the learner's code, as in a lab's first cell)

    from . import guard
    from .isolation import Pipe

    import npukit.teach  # noqa: F401  (the checkers' references exist here too, so the watch knows them)

    session = Session(Pipe(read_fd, write_fd), os.getcwd())
    builtins.display = _display
    _refuse_threads(session.refusals)
    sys.addaudithook(make_audit_hook(os.getcwd(), session.refusals,
                                     frozenset({guard.watch.__code__, Session.callback.__code__})))
    session.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
