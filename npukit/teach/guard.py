"""What keeps a check honest: the watch on the learner's function and the seal on the checkers.

Two mechanisms, used by :mod:`npukit.teach.core` so that every lab's checkers
get them without code of their own:

* **The watch** (:func:`watch`). While a learner's function runs, a profile
  hook sees every Python call and every call of a built-in. A call of
  something forbidden — npukit's own implementation of the exercise, any
  function of a checker module (the references), the functions a checker
  lists (``np.shares_memory`` for a "predict, do not measure" exercise) —
  made from the learner's code, directly or through any library, is
  recorded and fails the check. Forbidden functions are recognised by their
  code objects (Python) or identity (built-ins), so an alias imported earlier
  (``from npukit.gemm import tiled_matmul as mm``) or a copy of the function
  object is caught too, wherever the learner's code found it (a module
  attribute, its globals, a closure). Calls the checker's own code makes
  while the learner's function is on the stack (a wrapper calling a
  reference, a stand-in the learner's code calls) are not the learner's and
  are allowed: a call is the learner's when, walking out from it, the
  learner's code comes before any of the checker's. A few calls are refused from any
  learner: looking at the checker's frames (``sys._getframe``,
  ``inspect.stack``), replacing the profile hook, starting threads.
* **The seal** (:func:`seal`). When ``npukit.teach`` has been imported, the
  functions, classes and submodules of every npukit, NumPy and ONNX module
  (and everything in ``npukit.teach``, including its classes' methods) are
  recorded; :func:`tampering` lists every attribute replaced,
  removed (or, in ``npukit.teach``, added) since. A check refuses to run, or
  to pass, while anything it relies on has been patched
  (``teach.core._same = lambda *a, **k: True``, ``np.allclose = ...``).

No in-process check is a sandbox: a learner who reads this module can still
find ways around it. What it guarantees is that the common shortcuts (calling
the library, patching the checker, reading the checker's frames) fail with a
message that says what happened. The grader (:mod:`npukit.teach.grade`) does
not rely on it for the grade: it runs the learner's code in a process of its
own and the checks in another (:mod:`npukit.teach.isolation`); there the
watch runs in the learner's process, where an audit hook keeps it from being
turned off (:mod:`npukit.teach.learner`).

See the instructor guide, "Grading" (chapters/instructor.md).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import sysconfig
import types
from typing import Any, Callable, Iterable

__all__ = ["Forbidden", "Watch", "watch", "seal", "tampering", "forbidden_label", "forbidden_of", "is_user_code"]

_TEACH_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NUMPY_DIR = os.path.dirname(os.path.abspath(__import__("numpy").__file__)) + os.sep
_NPUKIT_DIR = os.path.dirname(_TEACH_DIR.rstrip(os.sep)) + os.sep
_LIBRARY_DIRS = tuple(sorted({os.path.abspath(p) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
                              if (p := sysconfig.get_paths().get(key))} | {_NPUKIT_DIR}))


def is_teach_code(code: types.CodeType) -> bool:
    """True if ``code`` is part of :mod:`npukit.teach` (a checker, the core, this module)."""
    return code.co_filename.startswith(_TEACH_DIR)


@functools.lru_cache(maxsize=4096)
def _is_user_file(filename: str) -> bool:
    if filename.startswith("<frozen") or filename.startswith(_TEACH_DIR):
        return False
    if not filename.startswith("<") and not os.path.isabs(filename):
        return False   # a compiled extension's source name (numpy/random/_pcg64.pyx)
    return not os.path.abspath(filename).startswith(_LIBRARY_DIRS)


def is_user_code(code: types.CodeType) -> bool:
    """True if ``code`` is neither npukit's, nor the standard library's, nor an installed package's.

    A notebook cell, a test file or a doctest is user code.

    Examples
    --------
    >>> import json
    >>> is_user_code(json.dumps.__code__), is_user_code(is_user_code.__code__)
    (False, False)
    """
    return _is_user_file(code.co_filename)


# ---- what is forbidden ---------------------------------------------------------------------


class Forbidden:
    """A set of forbidden callables, recognised by code object or identity."""

    def __init__(self) -> None:
        self.code: dict[int, str] = {}          # id(code object) -> readable name
        self.builtin: dict[int, str] = {}       # id(built-in function) -> readable name
        self.method: dict[tuple[type, str], str] = {}  # (class, name) of a built-in method -> readable name
        self.numpy: dict[str, str] = {}         # name of a NumPy dispatcher around a C function -> readable name
        self._keep: list[Any] = []              # keeps the ids above valid
        self.paths: list[str] = []              # where each item given to forbidden_of can be imported

    def add(self, obj: Any, label: str | None = None) -> None:
        """Forbid ``obj``: a function, a class (its methods), a module (its functions and classes)."""
        if isinstance(obj, types.ModuleType):
            for k, v in list(vars(obj).items()):
                if getattr(v, "__module__", None) == obj.__name__ and (isinstance(v, type) or callable(v)):
                    self.add(v, f"{obj.__name__}.{k}")
            return
        owner = getattr(obj, "__objclass__", None)
        module = getattr(obj, "__module__", None) or getattr(owner, "__module__", None) or "?"
        if module == "numpy._core.multiarray" or module.startswith("numpy."):
            module = "numpy"   # as a learner writes it: numpy.ndarray.reshape, numpy.shares_memory
        label = label or f"{module}.{getattr(obj, '__qualname__', obj)}"
        if isinstance(obj, type):
            for k, v in list(vars(obj).items()):
                if isinstance(v, (staticmethod, classmethod)):
                    v = v.__func__
                for f in (v.fget, v.fset) if isinstance(v, property) else (v,):
                    if isinstance(f, types.FunctionType):
                        self.add(f, f"{label}.{k}")
                    elif type(f).__name__ == "instancemethod" and isinstance(f.__func__, types.BuiltinFunctionType):
                        self.add(f.__func__, f"{label}.{k}")   # a pybind11 method (ONNX Runtime's C session)
            return
        for code in _codes_of(obj):
            self.code[id(code)] = label
            self._keep.append(code)
        if type(obj).__name__ == "_ArrayFunctionDispatcher" and not _codes_of(obj):
            # NumPy wraps a C function in a dispatcher whose Python half it does not expose: match it by name
            self.numpy[obj.__name__] = f"numpy.{obj.__name__}"
        if isinstance(obj, types.BuiltinFunctionType):
            self.builtin[id(obj)] = label
            self._keep.append(obj)
        elif type(obj).__name__ in ("method_descriptor", "wrapper_descriptor") and hasattr(obj, "__objclass__"):
            self.method[(obj.__objclass__, obj.__name__)] = label

    def match_callable(self, fn: Any) -> str | None:
        """The label of ``fn`` if it is (or wraps) something forbidden, else None."""
        for obj in _unwrapped(fn):
            if type(obj).__name__ == "_ArrayFunctionDispatcher" and getattr(obj, "__name__", None) in self.numpy:
                return self.numpy[obj.__name__]
            if isinstance(obj, types.BuiltinFunctionType) and id(obj) in self.builtin:
                return self.builtin[id(obj)]
            for code in _codes_of(obj):
                if id(code) in self.code:
                    return self.code[id(code)]
        return None

    def match_c_call(self, fn: Any) -> str | None:
        label = self.builtin.get(id(fn))
        if label is None and self.method:
            owner = getattr(fn, "__self__", None)
            if owner is not None and not isinstance(owner, types.ModuleType):
                for cls in type(owner).__mro__:
                    label = self.method.get((cls, getattr(fn, "__name__", "")))
                    if label is not None:
                        break
        return label


def _codes_of(obj: Any) -> list[types.CodeType]:
    """The Python code objects behind a callable (a NumPy dispatcher has two)."""
    out = []
    for f in (obj, getattr(obj, "__wrapped__", None), getattr(obj, "_implementation", None)):
        if isinstance(f, types.MethodType):
            f = f.__func__
        if isinstance(f, types.FunctionType):
            out.append(f.__code__)
    return out


def _unwrapped(fn: Any) -> list[Any]:
    """``fn`` and what it wraps: partials, bound methods, decorators, a callable object's ``__call__``."""
    out, todo = [], [fn]
    while todo and len(out) < 16:
        f = todo.pop()
        out.append(f)
        if isinstance(f, functools.partial):
            todo.append(f.func)
        elif isinstance(f, types.MethodType):
            todo.append(f.__func__)
        elif getattr(f, "__wrapped__", None) is not None and not isinstance(f, type):
            todo.append(f.__wrapped__)
        elif not isinstance(f, (types.FunctionType, types.BuiltinFunctionType, type)) and callable(f):
            call = getattr(type(f), "__call__", None)
            if isinstance(call, types.FunctionType):
                todo.append(call)
    return out


@functools.lru_cache(maxsize=1)
def _always() -> tuple[Forbidden, Forbidden]:
    """Calls no learner's code may make (directly), and those it may make only through libraries."""
    import threading

    direct = Forbidden()
    for fn, label in [(sys._getframe, "sys._getframe"), (sys._current_frames, "sys._current_frames"),
                      (inspect.currentframe, "inspect.currentframe"), (inspect.stack, "inspect.stack"),
                      (inspect.getouterframes, "inspect.getouterframes"), (inspect.trace, "inspect.trace"),
                      (threading.Thread.start, "threading.Thread.start")]:
        direct.add(fn, label)
    import _thread
    import gc

    anywhere = Forbidden()
    for fn, label in [(sys.setprofile, "sys.setprofile"), (sys.settrace, "sys.settrace"),
                      (threading.setprofile, "threading.setprofile"), (threading.settrace, "threading.settrace"),
                      (_thread.start_new_thread, "_thread.start_new_thread"), (gc.get_referrers, "gc.get_referrers"),
                      (gc.get_objects, "gc.get_objects")]:
        anywhere.add(fn, label)
    return direct, anywhere


def _teach_functions() -> Forbidden:
    """Every module-level function of every loaded ``npukit.teach`` module (the checkers' references)."""
    names = tuple(sorted(m for m in sys.modules if m == "npukit.teach" or m.startswith("npukit.teach.")))
    return _teach_functions_of(names)


@functools.lru_cache(maxsize=8)
def _teach_functions_of(names: tuple[str, ...]) -> Forbidden:
    out = Forbidden()
    for name in names:
        mod = sys.modules.get(name)
        for k, v in list(vars(mod).items()) if mod is not None else ():
            if isinstance(v, types.FunctionType) and v.__module__ == name:
                out.add(v, f"{name}.{k}")
            elif callable(v) and getattr(v, "__npukit_check__", None) is not None:
                out.add(v.__npukit_check__, f"{name}.{k}")
    return out


def forbidden_label(fn: Any, forbid: Forbidden) -> str | None:
    """Why ``fn`` itself may not be the learner's function (None if it may)."""
    return forbid.match_callable(fn) or _teach_functions().match_callable(fn)


# ---- the watch -----------------------------------------------------------------------------


class Watch:
    """The result of :func:`watch`: the first forbidden call seen, if any."""

    def __init__(self) -> None:
        self.called: str | None = None
        self.direct = False      # the forbidden call was one that no learner code may make
        self.unhooked = False    # the learner's code replaced the profile hook


def watch(fn: Callable[..., Any], args: tuple, forbid: Forbidden) -> tuple[Any, Watch, Exception | None]:
    """Run ``fn(*args)`` under the watch; return its result, what was seen, and the exception it raised.

    See the module docstring for the rules.
    """
    seen = Watch()
    teach = _teach_functions()
    direct, anywhere = _always()
    stop = sys._getframe()
    match_code, teach_code, numpy_names = forbid.code, teach.code, forbid.numpy

    def from_user(frame: Any) -> bool:
        """Made by the learner's code: walking out from ``frame``, a user frame comes before a checker's."""
        f = frame
        while f is not None and f is not stop:
            filename = f.f_code.co_filename
            if filename.startswith(_TEACH_DIR):
                return False     # a checker's stand-in or the grader's channel, called by the learner's code
            if _is_user_file(filename):
                return True
            f = f.f_back
        return False

    def hook(frame: Any, event: str, arg: Any) -> None:
        if seen.called is not None:
            return
        if event == "call":
            code = frame.f_code
            key = id(code)
            label = match_code.get(key) or teach_code.get(key)
            if label is None and numpy_names and code.co_name in numpy_names and code.co_filename.startswith(_NUMPY_DIR):
                label = numpy_names[code.co_name]
            if label is not None and frame.f_back is not None and from_user(frame.f_back):
                seen.called = label
            elif key in direct.code and frame.f_back is not None and _is_user_file(frame.f_back.f_code.co_filename):
                seen.called, seen.direct = direct.code[key], True
        elif event == "c_call":
            label = forbid.match_c_call(arg)
            if label is not None and from_user(frame):
                seen.called = label
            else:
                label = direct.match_c_call(arg) if _is_user_file(frame.f_code.co_filename) else None
                if label is None:   # the cheap lookup first: walking the stack for every C call is slow
                    label = anywhere.match_c_call(arg)
                    label = label if label is not None and from_user(frame) else None
                if label is not None:
                    seen.called, seen.direct = label, True

    previous = sys.getprofile()
    result, error = None, None
    sys.setprofile(hook)
    try:
        result = fn(*args)
    except Exception as exc:   # the caller decides: a forbidden call outranks the error it caused
        error = exc
    finally:
        if sys.getprofile() is not hook:
            seen.unhooked = True
        sys.setprofile(previous)
    return result, seen, error


# ---- the seal ------------------------------------------------------------------------------

_WATCHED_PREFIXES = ("npukit", "numpy", "onnx", "ml_dtypes")
_WATCHED_STDLIB = ("builtins", "copy", "math", "operator", "functools", "fractions", "inspect", "types", "pickle",
                   "hashlib", "numbers", "sys")
_SYS_NAMES = ("setprofile", "getprofile", "settrace", "gettrace", "_getframe", "modules")
_BUILTIN_NAMES = ("abs", "all", "any", "bool", "callable", "compile", "complex", "dict", "divmod", "enumerate", "eval",
                  "exec", "float", "getattr", "hasattr", "hash", "id", "int", "isinstance", "issubclass", "iter",
                  "len", "list", "map", "max", "min", "next", "object", "pow", "range", "repr", "reversed", "round",
                  "set", "slice", "sorted", "str", "sum", "super", "tuple", "type", "zip")
_MISSING = object()
_snapshots: dict[str, tuple[types.ModuleType, dict[str, Any]]] = {}


def _watched(name: str) -> bool:
    return name in _WATCHED_STDLIB or any(name == p or name.startswith(p + ".") for p in _WATCHED_PREFIXES)


def _is_teach_module(name: str) -> bool:
    return name == "npukit.teach" or name.startswith("npukit.teach.")


def _attributes(mod: types.ModuleType) -> dict[str, Any]:
    """A module's attributes worth watching (for ``sys``, a few), and its checkers' class methods."""
    if mod is sys:
        return {k: getattr(sys, k) for k in _SYS_NAMES if hasattr(sys, k)}
    if mod.__name__ == "builtins":   # the ones checkers use (a kernel rebinds input, IPython adds display, _)
        return {k: vars(mod)[k] for k in _BUILTIN_NAMES if k in vars(mod)}
    items = {k: v for k, v in list(vars(mod).items()) if not (k.startswith("__") and k.endswith("__"))}
    if not _is_teach_module(mod.__name__):   # libraries: their functions, classes and submodules only
        return {k: v for k, v in items.items() if callable(v) or isinstance(v, types.ModuleType)}
    if _is_teach_module(mod.__name__):
        for k, v in list(items.items()):
            if isinstance(v, type) and v.__module__ == mod.__name__:
                for m, f in _methods(v).items():
                    items[f"{k}.{m}"] = f
    return items


def _methods(cls: type) -> dict[str, Any]:
    return {m: f for m, f in list(vars(cls).items()) if isinstance(f, (types.FunctionType, staticmethod, classmethod, property))}


def _current(mod: types.ModuleType, key: str) -> Any:
    if "." in key and _is_teach_module(mod.__name__):
        cls, attr = key.split(".", 1)
        owner = vars(mod).get(cls)
        return vars(owner).get(attr, _MISSING) if isinstance(owner, type) else _MISSING
    return getattr(mod, key, _MISSING) if mod is sys else vars(mod).get(key, _MISSING)


def _by_a_checker(value: Any) -> bool:
    """A stand-in a checker put in a library module while it runs (lab 4 swaps ``npukit.gemm`` functions)."""
    return isinstance(value, types.FunctionType) and is_teach_code(value.__code__)


def _from_notebook(value: Any) -> bool:
    return isinstance(value, types.FunctionType) and is_user_code(value.__code__)


def seal() -> None:
    """Record the watched modules' attributes now (modules loaded later are recorded when first seen)."""
    for name, mod in list(sys.modules.items()):
        if mod is not None and _watched(name) and name not in _snapshots:
            _snapshots[name] = (mod, _attributes(mod))


def _reseal(name: str) -> None:
    """Accept the current state of one module (a checker module's own legitimate update)."""
    mod = sys.modules.get(name)
    if mod is not None:
        _snapshots[name] = (mod, _attributes(mod))


def tampering() -> list[str]:
    """Everything replaced, removed or (in npukit.teach) added since :func:`seal`, as sentences.

    Examples
    --------
    >>> import npukit.teach
    >>> tampering()
    []
    """
    problems = []
    for name, mod in list(sys.modules.items()):   # modules loaded after the seal: recorded now, checked for
        if mod is not None and _watched(name) and name not in _snapshots:   # notebook code already in them
            attrs = _attributes(mod)
            problems += [f"{name}.{k} is code from the notebook" for k, v in attrs.items() if _from_notebook(v)]
            if not _is_teach_module(name):   # a checker's stand-in is not the library's own function
                attrs = {k: v for k, v in attrs.items() if not _by_a_checker(v)}
            _snapshots[name] = (mod, attrs)
    for name, (mod, attrs) in list(_snapshots.items()):
        if sys.modules.get(name, mod) is not mod:
            problems.append(f"sys.modules[{name!r}] was replaced")
            continue
        for key, value in attrs.items():
            now = _current(mod, key)
            if now is not value and not (_by_a_checker(now) and not _is_teach_module(name)):
                problems.append(f"{name}.{key} was {'removed' if now is _MISSING else 'replaced'}")
        if not _is_teach_module(name) and mod is not sys:   # a library's functions not seen before: record them
            for key, value in _attributes(mod).items():
                if key not in attrs and not _by_a_checker(value):
                    if _from_notebook(value):
                        problems.append(f"{name}.{key} is code from the notebook")
                    else:
                        attrs[key] = value
        if _is_teach_module(name):
            for key, value in list(vars(mod).items()):
                if isinstance(value, type) and value.__module__ == name:
                    problems += [f"{name}.{key}.{m} was added" for m in _methods(value) if f"{key}.{m}" not in attrs]
                if key in attrs or (key.startswith("__") and key.endswith("__")):
                    continue
                if isinstance(value, types.ModuleType) and _is_teach_module(value.__name__):
                    continue   # a submodule imported later
                problems.append(f"{name}.{key} was added")
    return problems


def forbidden_of(items: Iterable[Any]) -> Forbidden:
    """A :class:`Forbidden` holding ``items`` (functions, classes, modules, built-ins).

    Its ``paths`` name each item where another process can import it (``"numpy:shares_memory"``,
    ``"npukit.tensors"``), so that the grader's learner process can forbid the same things.
    """
    out = Forbidden()
    for item in items:
        out.add(item)
        path = _path_of(item)
        if path is not None and path not in out.paths:
            out.paths.append(path)
    return out


def _path_of(item: Any) -> str | None:
    """``"module:qualified.name"`` of a function, class or method, the name of a module, or None."""
    if isinstance(item, types.ModuleType):
        return item.__name__
    owner = getattr(item, "__objclass__", None)
    if isinstance(owner, type):
        module, qualname = owner.__module__, f"{owner.__qualname__}.{item.__name__}"
    else:
        module = getattr(item, "__module__", None) or ("builtins" if isinstance(item, types.BuiltinFunctionType)
                                                       else None)
        qualname = getattr(item, "__qualname__", None) or getattr(item, "__name__", None)
    if not module or not qualname or "<" in qualname:
        return None
    return f"{module}:{qualname}"
