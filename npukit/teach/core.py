"""The checking core shared by every lab's checkers.

A checker calls the learner's function on *fresh* cases — inputs the lab never
showed — drawn from a seeded RNG (:func:`_rng`), and compares each answer with
an independent reference (NumPy, ONNX's reference evaluator, a brute-force
loop), never with the lab's own solution. It prints one line on success and
raises :class:`CheckFailed` (an ``AssertionError``) naming the failing input
and the first wrong element otherwise.

Outcomes read as one line in a notebook, with no traceback through this
package: :class:`NotAttempted` when the learner's function still raises
``NotImplementedError`` (the student edition), :class:`CheckFailed` for a
wrong answer, and — when the learner's own code raises — the error with the
learner's lines only.

Three things every checker gets from here without code of its own:

* **The grading seed.** With ``NPUKIT_GRADE_SEED`` set in the environment when
  ``npukit.teach`` is imported (the grader does this), :func:`_rng` mixes it
  into every checker's seed, so the cases differ from the ones a student saw:
  a table copied from failure messages fails. The variable is removed from the
  environment once read.
* **The watch** (:mod:`npukit.teach.guard`): while the learner's function
  runs, calling npukit's implementation of the exercise, anything in a
  checker module, or what a checker passes as ``forbid`` fails the check,
  however it was imported; so does a learner's function that *is* one of them.
* **The seal**: every ``check_*`` exported by :mod:`npukit.teach` refuses to
  run, and to pass, once npukit, NumPy or the checkers have been patched
  (``teach.core._same = lambda *a, **k: True``), and records its outcome in a
  ledger the grader reads.

All of this runs beside the learner's code in a notebook, where it is
feedback. When grading, the checks run in a process of their own and the
learner's function is a :class:`~npukit.teach.isolation.Remote`: ``learner_call``
sends the check's refusals with each call, and what the learner's process saw
(a forbidden call, the function raising) comes back as :class:`RemoteForbidden`
or a :func:`remote_error`. :func:`around` runs checker code next to the
learner's function wherever it lives.

A checker should compute its expected answers after calling the learner's
function (as :func:`check` does): what is on the checker's stack while the
learner's code runs can be read by it.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import linecache
import math
import numbers
import os
import pickle
import sys
import traceback
import types
from typing import Any, Callable, Iterable

import numpy as np

from .. import _check
from . import guard, timelog

__all__ = [
    "CheckFailed",
    "NotAttempted",
    "check",
    "learner_call",
    "around",
    "GRADE_SEED_ENV",
]

#: The environment variable holding the secret grading seed.
GRADE_SEED_ENV = "NPUKIT_GRADE_SEED"


def _seed_from_environment() -> int | None:
    text = os.environ.pop(GRADE_SEED_ENV, None)
    if text is None or not text.strip():
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{GRADE_SEED_ENV} must be an integer, got {text!r}") from None


_GRADE_SEED: int | None = _seed_from_environment()
_LEDGER: list[dict[str, str]] = []   # one entry per exported check run: {"check", "status", "message"}
_CALLING: list[tuple[str, Any]] = []  # the learner_call in progress: (exercise, guard.Forbidden)


#: The class of a learner's function that lives in another process: isolation registers
#: :class:`~npukit.teach.isolation.Remote` here when it is imported (so core does not import isolation,
#: which imports core). Until then no function is remote.
_REMOTE: list = []


class CheckFailed(AssertionError):
    """A check that failed; a notebook shows only its message, not a traceback into npukit."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom error display
        return [f"\x1b[31m✗ {line}\x1b[0m" if i == 0 else line for i, line in enumerate(str(self).splitlines())]


class NotAttempted(CheckFailed):
    """The learner's function still raises ``NotImplementedError``: the exercise is not done yet."""


class LearnerError(CheckFailed):
    """The learner's own code raised an exception; shown with the learner's lines only.

    ``error`` is that exception, for checks that ask the learner to raise one.
    """

    def __init__(self, message: str, where: list[str], error: BaseException | None = None):
        super().__init__(message)
        self.where = where
        self.error = error

    def _render_traceback_(self) -> list[str]:
        return super()._render_traceback_() + self.where


class RemoteForbidden(BaseException):
    """Raised by a :class:`~npukit.teach.isolation.Remote` when the learner's process saw a refusal.

    A ``BaseException``, so that no checker's ``except Exception`` can hold it back: ``learner_call``
    turns it into the check's failure. ``is_`` names the forbidden function the learner's function is;
    else ``called`` what it called (``direct``: a call no function under check may make) and ``why``.
    """

    def __init__(self, called: str | None = None, *, direct: bool = False, unhooked: bool = False,
                 is_: str | None = None, why: str | None = None) -> None:
        super().__init__(called or is_)
        self.called, self.direct, self.unhooked, self.is_, self.why = called, direct, unhooked, is_, why


class RemoteError(Exception):
    """What the learner's function raised in the learner's process, rebuilt in the checking process.

    :func:`remote_error` makes one of a subclass that is also the built-in exception type raised
    (``ValueError`` …), so ``isinstance`` tests of the checkers still work; ``where`` holds the learner's
    lines of the traceback, ``by_learner`` whether the learner's own code raised it.
    """

    where: list[str] = []
    by_learner = False

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


_REMOTE_TYPES: dict[type, type] = {}


def remote_error(info: dict) -> Exception:
    """The exception described by ``info`` (``type``, ``bases``, ``message``, ``where``, ``learner``, ``check``)."""
    import builtins

    message = str(info.get("message", ""))
    if info.get("check") == "NotAttempted":
        return NotAttempted(message)
    if info.get("check") == "CheckFailed":
        return CheckFailed(message)
    base = next((getattr(builtins, b) for b in info.get("bases", ())
                 if isinstance(getattr(builtins, str(b), None), type) and issubclass(getattr(builtins, b), Exception)),
                Exception)
    if base not in _REMOTE_TYPES:
        _REMOTE_TYPES[base] = type(base.__name__, (RemoteError, base), {"__module__": "builtins"})
    exc = _REMOTE_TYPES[base](message)
    exc.where = [str(line) for line in info.get("where", ())][:8]
    exc.by_learner = bool(info.get("learner"))
    name = str(info.get("type", base.__name__))
    if name != base.__name__:
        exc.args = (f"{message} ({name})",)
    return exc


def _calling() -> tuple[str, Any] | None:
    """The exercise and refusals of the ``learner_call`` running now, or None."""
    return _CALLING[-1] if _CALLING else None


def around(helper: Callable[..., Any], fn: Callable[..., Any], *args: Any) -> Any:
    """``helper(fn, *args)``: checker code that must run right next to the learner's function.

    A checker that instruments the learner's function (hands it recording arrays, patches NumPy while
    it runs) calls it through this. In a notebook it is just that call. When grading, the learner's
    function lives in a process of its own (:mod:`npukit.teach.isolation`), where what the helper hands
    it would not survive the crossing: there the helper runs in the learner's process, next to the
    function, so it must be a module-level function of an ``npukit.teach`` module taking and returning
    plain values and reporting a wrong use by raising :class:`CheckFailed`.

    Examples
    --------
    >>> def twice(fn, x):
    ...     return fn(fn(x))
    >>> around(twice, lambda v: v + 1, 1)
    3
    """
    if not callable(helper):
        raise TypeError(f"helper must be callable (a checker's function), got {type(helper).__name__}")
    if not callable(fn):
        raise TypeError(f"fn must be callable (your function), got {type(fn).__name__}")
    if isinstance(fn, tuple(_REMOTE)):   # not a marker attribute: a learner's function can carry that
        return fn.around(helper, *args)
    return helper(fn, *args)


def _rng(seed: int) -> np.random.Generator:
    """The checkers' random generator: ``seed``, mixed with the grading seed when one is set.

    Examples
    --------
    >>> bool(_rng(3).integers(100) == np.random.default_rng(3).integers(100))
    True
    """
    seed = int(seed)
    return np.random.default_rng(seed if _GRADE_SEED is None else [seed, _GRADE_SEED])


def _fresh_rng(seed: int) -> np.random.Generator:
    """Cases drawn afresh on every run: from the grading seed when grading, from the OS's entropy otherwise.

    For checks whose failure messages cannot name the failing case (yes/no answers), so that a run's
    outcome says nothing about the next run's cases.
    """
    return _rng(seed) if _GRADE_SEED is not None else np.random.default_rng()


def _set_grade_seed(seed: int | None) -> None:
    """Use ``seed`` as the grading seed from now on (None: the lab's own cases). For tests and the grader."""
    global _GRADE_SEED
    _GRADE_SEED = None if seed is None else int(seed)
    guard._reseal(__name__)


def _grade_seed_digest() -> str:
    """A digest of the grading seed in force, for the grader to compare with the one it set."""
    return hashlib.sha256(repr(_GRADE_SEED).encode()).hexdigest()[:16]


# ---- calling the learner's function ---------------------------------------------------------


def learner_call(name: str, fn: Callable[..., Any], *args: Any, forbid: Iterable[Any] = ()) -> Any:
    """Call the learner's ``fn(*args)``, refusing shortcuts and turning "not done" into one line.

    Parameters
    ----------
    name : str
        The exercise, for messages.
    fn : callable
        The learner's function (or a checker's wrapper around it).
    *args
        Its arguments.
    forbid : iterable
        Functions, classes, built-ins or whole modules whose code the
        learner's function must not run: npukit's own implementation of the
        exercise (and NumPy functions that would answer it for the learner).
        Every function of every checker module is always forbidden. They are
        recognised by their code objects, so an alias
        (``from npukit.gemm import tiled_matmul as mm``) is caught too, and so
        is a learner's function that *is* one of them.

    Raises
    ------
    TypeError, ValueError
        If ``name`` is not a non-empty string, ``fn`` not callable or
        ``forbid`` not an iterable.
    NotAttempted
        If ``fn`` raises ``NotImplementedError``.
    CheckFailed
        If ``fn`` ran forbidden code, or raised another exception (the
        message names it and the input; the notebook shows the learner's
        lines of the traceback).

    Examples
    --------
    >>> import math
    >>> def mine(x):
    ...     return math.floor(x)
    >>> learner_call("floor", mine, 2.5)
    2
    >>> def todo(x):
    ...     raise NotImplementedError()
    >>> learner_call("floor", todo, 2.5)
    Traceback (most recent call last):
    ...
    npukit.teach.core.NotAttempted: floor: not attempted yet (the function still raises NotImplementedError).
    """
    _check_name(name)
    if not callable(fn):
        raise TypeError(f"fn must be callable (your function for {name}), got {type(fn).__name__}")
    forbidden = guard.forbidden_of(_check_iterable(forbid, "forbid"))
    return _call(name, fn, args, forbidden)


def _call(name: str, fn: Callable[..., Any], args: tuple, forbidden: guard.Forbidden) -> Any:
    for learner in _learners(fn):
        label = guard.forbidden_label(learner, forbidden)
        if label is not None:
            raise CheckFailed(f"{name}: your function is {label} itself. This exercise asks you to write it "
                              "yourself; npukit's implementation and the checkers' references are off limits.")
    why = None
    _CALLING.append((name, forbidden))
    try:
        result, seen, exc = guard.watch(fn, args, forbidden)
    except RemoteForbidden as refusal:   # the learner's process saw it (grading)
        if refusal.is_ is not None:
            raise CheckFailed(f"{name}: your function is {refusal.is_} itself. This exercise asks you to write it "
                              "yourself; npukit's implementation and the checkers' references are off limits.") from None
        result, seen, exc, why = None, guard.Watch(), None, refusal.why
        seen.called, seen.direct, seen.unhooked = refusal.called, refusal.direct, refusal.unhooked
    finally:
        _CALLING.pop()
    if exc is not None and seen.called is None and not seen.unhooked:
        if isinstance(exc, CheckFailed):
            raise exc
        remote = isinstance(exc, RemoteError)
        if isinstance(exc, NotImplementedError) and (exc.by_learner if remote else _raised_by_learner(exc.__traceback__)):
            raise NotAttempted(f"{name}: not attempted yet (the function still raises NotImplementedError).") from None
        where = exc.where if remote else _learner_lines(exc.__traceback__)
        if not where and not remote:
            raise exc   # an error of the checker itself, not of the learner's code
        raise LearnerError(f"{name}: your function raised {type(exc).__name__}: {_clip(str(exc), 200)} "
                           f"(input: {_inputs(args)}).", where, exc) from None
    if why is not None:
        raise CheckFailed(f"{name}: your function tried {seen.called}, which is not allowed when grading: {why}.")
    if seen.unhooked:
        raise CheckFailed(f"{name}: your function replaced the check's profile hook (sys.setprofile); "
                          "a function under check may not do that.")
    if seen.direct:
        raise CheckFailed(f"{name}: your function called {seen.called}. A function under check may not look "
                          "at the checker's frames, trace or profile calls, or start threads.")
    if seen.called is not None and seen.called.startswith("npukit"):
        raise CheckFailed(f"{name}: your function called {seen.called}. This exercise asks you to write it "
                          "yourself, so npukit's implementation and the checkers' references are off limits.")
    if seen.called is not None:
        raise CheckFailed(f"{name}: your function called {seen.called}, which this exercise does not allow: it asks "
                          "you to work the answer out, not to have Python or NumPy compute it for you.")
    return result


def _learners(fn: Callable[..., Any]) -> list[Any]:
    """The learner's functions in this check: ``fn`` unless a checker's own wrapper, and the check's arguments.

    The outermost npukit.teach frame on the stack is the ``check_*`` the
    notebook called; its callable arguments are the learner's functions.
    """
    out = [] if _is_wrapper(fn) else [fn]
    frame, outer = sys._getframe(2), None
    while frame is not None and guard.is_teach_code(frame.f_code):
        outer, frame = frame, frame.f_back
    if outer is None:
        return out
    code = outer.f_code
    if code in (check.__code__, learner_call.__code__):   # called directly: its learner argument
        given = outer.f_locals.get("learner" if code is check.__code__ else "fn")
        return out + ([given] if callable(given) and not _is_wrapper(given) else [])
    nargs = code.co_argcount + code.co_kwonlyargcount
    values = [outer.f_locals.get(n) for n in code.co_varnames[:nargs]]
    if code.co_flags & inspect.CO_VARARGS:
        values += list(outer.f_locals.get(code.co_varnames[nargs], ()))
    if code.co_flags & inspect.CO_VARKEYWORDS:
        extra = code.co_varnames[nargs + bool(code.co_flags & inspect.CO_VARARGS)]
        values += list((outer.f_locals.get(extra) or {}).values())
    return out + [v for v in values if callable(v) and not isinstance(v, type)]


def _is_wrapper(fn: Any) -> bool:
    """True for a function a checker defined inside itself to wrap the learner's."""
    return isinstance(fn, types.FunctionType) and guard.is_teach_code(fn.__code__) and "<locals>" in fn.__qualname__


def _raised_by_learner(tb: types.TracebackType | None) -> bool:
    last = None
    for frame, _ in traceback.walk_tb(tb):
        last = frame
    return last is not None and guard.is_user_code(last.f_code)


def _learner_lines(tb: types.TracebackType | None) -> list[str]:
    """The learner's frames of a traceback, formatted (empty if none is the learner's)."""
    lines = []
    for frame, lineno in traceback.walk_tb(tb):
        code = frame.f_code
        if guard.is_user_code(code):
            text = linecache.getline(code.co_filename, lineno).strip()
            lines.append(f"  line {lineno}, in {code.co_name}: {text}" if text else f"  line {lineno}, in {code.co_name}")
    return lines


# ---- comparing answers ---------------------------------------------------------------------


def _plain(x: Any) -> Any:
    """The learner's answer with subclasses of built-in types turned into the types themselves.

    An ``int`` subclass whose ``__eq__`` always says True, or an ndarray
    subclass, must not decide the comparison.
    """
    if isinstance(x, np.ndarray):
        return np.asarray(x)
    if isinstance(x, (tuple, list)):
        items = [_plain(v) for v in (tuple.__iter__(x) if isinstance(x, tuple) else list.__iter__(x))]
        return tuple(items) if isinstance(x, tuple) else items
    if isinstance(x, np.generic):   # a subclass's conversion methods must not run after the watch ends
        return x if type(x).__module__ == "numpy" else np.asarray(x)[()]
    for kind, exact in ((int, int.__index__), (float, float.__float__), (str, str.__str__)):
        if isinstance(x, kind) and type(x) is not kind and type(x) is not bool:
            return exact(x)
    return x


_NUMBER = (int, float, np.integer, np.floating)


def _is_number(x: Any) -> bool:
    return isinstance(x, _NUMBER) and not isinstance(x, (bool, np.bool_))


def _arraylike(x: Any) -> bool:
    if type(x) is np.ndarray:
        return x.dtype.kind in "biufc"
    if type(x) in (tuple, list):
        return all(_arraylike(v) for v in x)
    return _is_number(x) or isinstance(x, (bool, np.bool_, complex, np.complexfloating))


def _same(got: Any, want: Any, rtol: float, atol: float) -> bool:
    """True if ``got`` is ``want``'s answer: same kind of value, equal (floats within the tolerances)."""
    if isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
        if not (_arraylike(got) and _arraylike(want)):
            return False
        got_a, want_a = np.asarray(got), np.asarray(want)
        if got_a.shape != want_a.shape:
            return False
        if want_a.dtype.kind in "fc" or got_a.dtype.kind in "fc":
            return bool(np.allclose(got_a, want_a, rtol=rtol, atol=atol, equal_nan=True))
        return bool(np.array_equal(got_a, want_a))
    if isinstance(want, (bool, np.bool_)):
        return isinstance(got, (bool, np.bool_)) and bool(got) == bool(want)
    if _is_number(want):
        if not _is_number(got):
            return False
        if isinstance(want, (float, np.floating)):
            return bool(np.isclose(float(got), float(want), rtol=rtol, atol=atol))
        return float(got) == want if isinstance(got, (float, np.floating)) else int(got) == int(want)
    if type(want) in (tuple, list):
        return (type(got) in (tuple, list) and len(got) == len(want)
                and all(_same(g, w, rtol, atol) for g, w in zip(got, want)))
    if type(want) is dict:
        return (type(got) is dict and got.keys() == want.keys()
                and all(_same(got[k], want[k], rtol, atol) for k in want))
    if want is None:
        return got is None
    return type(got) is type(want) and (got == want) is True


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _show(x: Any, limit: int = 120) -> str:
    """A short description of a value: small arrays in full, larger ones by dtype and shape."""
    if isinstance(x, np.ndarray):
        if x.size <= 8:
            return f"array({np.array2string(x, separator=', ', precision=6).replace(chr(10), '')}, dtype={x.dtype})"
        return f"{x.dtype} array of shape {x.shape}"
    return _clip(repr(x), limit)


def _inputs(args: tuple) -> str:
    return ", ".join(_show(a, 600) for a in args)


def first_difference(got: Any, want: Any, rtol: float = 1e-5, atol: float = 1e-6) -> str:
    """Say where ``got`` first differs from ``want``: an index with both values, or what kind differs.

    Never prints a whole array; a short answer (a number, a small tuple) is
    shown whole.

    Examples
    --------
    >>> print(first_difference(np.array([[1, 2], [3, 5]]), np.array([[1, 2], [3, 4]])))
    first wrong element at index (1, 1): expected 4, got 5 (1 of 4 elements differ).
    >>> print(first_difference((3, 1), (4, 1)))
    expected (4, 1), got (3, 1).
    """
    if isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
        if not _arraylike(got):
            return f"expected an array of shape {np.shape(want)}, got {_show(got)}."
        got_a, want_a = np.asarray(got), np.asarray(want)
        if got_a.shape != want_a.shape:
            return f"expected an array of shape {want_a.shape}, got one of shape {got_a.shape}."
        if want_a.dtype.kind in "fc" or got_a.dtype.kind in "fc":
            wrong = ~np.isclose(got_a, want_a, rtol=rtol, atol=atol, equal_nan=True)
        else:
            wrong = got_a != want_a
        bad = np.argwhere(wrong)
        if not len(bad):
            return "the values agree but the answer is of another kind."
        i = tuple(int(v) for v in bad[0])
        where = f"index {i}" if len(i) != 1 else f"index {i[0]}"
        return (f"first wrong element at {where}: expected {want_a[i]}, got {got_a[i]} "
                f"({len(bad)} of {want_a.size} elements differ).")
    short = len(repr(want)) <= 80 and len(repr(got)) <= 80
    if type(want) in (tuple, list) and type(got) in (tuple, list) and len(got) == len(want) and not short:
        for k, (g, w) in enumerate(zip(got, want)):
            if not _same(g, w, rtol, atol):
                return f"first wrong element at position {k}: expected {_show(w)}, got {_show(g)}."
    return f"expected {_show(want)}, got {_show(got)}."


def check(
    name: str,
    learner: Callable[..., Any],
    cases: Iterable[tuple],
    reference: Callable[..., Any],
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    compare: Callable[[Any, Any], bool] | None = None,
    forbid: Iterable[Any] = (),
    hint: Callable[..., str | None] | None = None,
) -> int:
    """Check ``learner(*case)`` against ``reference(*case)`` for every case.

    Parameters
    ----------
    name : str
        The exercise's name, used in messages.
    learner : callable
        The learner's function (or a checker's wrapper around it).
    cases : iterable of tuple
        Argument tuples. Each call gets its own deep copy, so a learner that
        writes into its input cannot change the reference's input; a learner
        that changes the checker's own copy fails.
    reference : callable
        An independent way to get the right answer (NumPy, a brute-force
        loop). It is called after the learner's function, so the expected
        answer is not on the stack while the learner's code runs.
    rtol, atol : float
        Tolerances for floating-point answers.
    compare : callable, optional
        ``compare(got, want) -> bool`` replacing the default comparison
        (which requires the same kind of value: a number for a number, an
        array or nested sequence of numbers for an array, True/False for a
        bool).
    forbid : iterable
        What the learner's function may not call (see :func:`learner_call`).
    hint : callable, optional
        ``hint(got, want, *case) -> str or None``, called on a wrong answer:
        a sentence added to the message. Return one only when the diagnosis
        is certain (the answer is exactly what a known mistake gives).

    Returns
    -------
    int
        The number of cases checked.

    Raises
    ------
    TypeError, ValueError
        If ``name`` is not a non-empty string, ``learner``, ``reference`` or
        ``compare`` is not callable, ``cases`` is not an iterable of argument
        tuples, ``forbid`` not an iterable, or a tolerance is not a finite
        number >= 0.
    NotAttempted
        If the learner's function raises ``NotImplementedError``.
    CheckFailed
        On the first case where the answers differ, naming the input and the
        first wrong element; when the learner's function calls something
        forbidden; when npukit or NumPy was patched.

    Examples
    --------
    >>> check("square", lambda x: x * x, [(2,), (3,)], lambda x: x ** 2)
    ✓ square: 2 fresh cases agree with the reference.
    2
    >>> check("square", lambda x: x + x, [(2,), (3,)], lambda x: x ** 2)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: square: wrong answer for input (3).
      expected 9, got 6.
    """
    _check_arguments(name, learner, cases, reference, rtol, atol, compare)
    if hint is not None and not callable(hint):
        raise TypeError(f"hint must be callable or None, got {type(hint).__name__}")
    forbidden = guard.forbidden_of(_check_iterable(forbid, "forbid"))
    _refuse_tampering(name)
    n = 0
    for i, case in enumerate(cases):
        if isinstance(case, (str, bytes)) or not isinstance(case, (tuple, list)):
            raise TypeError(f"cases[{i}] must be a tuple of arguments, got {type(case).__name__}")
        before = _digest(case)
        got = _call(name, _plain_result(learner), copy.deepcopy(tuple(case)), forbidden)
        if _digest(case) != before:
            raise CheckFailed(f"{name}: your function changed the checker's own copy of the input "
                              f"({_inputs(tuple(case))}).")
        want = reference(*copy.deepcopy(case))
        ok = compare(got, want) if compare is not None else _same(got, want, rtol, atol)
        if not ok:
            why = hint(got, want, *copy.deepcopy(case)) if hint is not None else None
            raise CheckFailed(f"{name}: wrong answer for input ({_inputs(tuple(case))}).\n  "
                              f"{first_difference(got, want, rtol, atol)}" + (f"\n  Hint: {why}" if why else ""))
        n += 1
    _refuse_tampering(name)
    print(f"✓ {name}: {n} fresh cases agree with the reference.")
    return n


def _plain_result(fn: Callable[..., Any]) -> Callable[..., Any]:
    def learner(*args: Any) -> Any:   # under the watch: a subclass's conversion methods are the learner's code
        return _plain(fn(*args))

    return learner


def _digest(case: Any) -> bytes | None:
    try:
        return hashlib.sha1(pickle.dumps(case, protocol=4)).digest()
    except Exception:
        return None


# ---- the seal and the ledger ---------------------------------------------------------------


def _refuse_tampering(name: str, _scan: Callable[[], list[str]] = guard.tampering) -> None:
    problems = _scan()   # bound at import: replacing guard.tampering later changes nothing here
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise CheckFailed(f"{name}: {problems[0]}{more} after npukit.teach was imported, so no check can be "
                          "trusted. Remove the change, restart the kernel and run the notebook again.")


def _recorded(check_fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap an exported ``check_*``: refuse to run when patched, one-line outcomes, a ledger entry."""
    if getattr(check_fn, "__npukit_check__", None) is not None:
        return check_fn

    @functools.wraps(check_fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        entry = {"check": check_fn.__name__, "status": "failed", "message": ""}
        _LEDGER.append(entry)
        short = check_fn.__name__.removeprefix("check_").replace("_", " ")
        try:
            _refuse_tampering(short)
            result = check_fn(*args, **kwargs)
            _refuse_tampering(short)
        except NotAttempted as exc:
            entry.update(status="not attempted", message=_first_line(exc))
            raise
        except CheckFailed as exc:
            entry["message"] = _first_line(exc)
            raise
        except AssertionError as exc:   # a checker's plain assertion: shown as one line too
            entry["message"] = _first_line(exc)
            raise CheckFailed(str(exc)) from None
        except Exception as exc:
            entry["message"] = _first_line(exc, f"{type(exc).__name__}: ")
            raise
        except KeyboardInterrupt:   # the learner stopped it: no outcome, and not a wrong attempt
            entry.update(status="interrupted", message="interrupted")
            raise
        else:
            entry["status"] = "passed"
            return result
        finally:
            timelog.record_check(check_fn.__name__, entry["status"])

    run.__npukit_check__ = check_fn
    return run


def _first_line(exc: BaseException, prefix: str = "") -> str:
    text = (str(exc).strip().splitlines() or [""])[0]
    return _clip(prefix + text, 300)


def _seal(namespace: dict) -> None:
    """Called at the end of ``npukit/teach/__init__.py``: wrap its ``check_*`` and record everything."""
    for key, value in list(namespace.items()):
        if key.startswith("check_") and isinstance(value, types.FunctionType):
            namespace[key] = _recorded(value)
    guard.seal()


def _ledger_since(start: int) -> list[dict[str, str]]:
    return [dict(e) for e in _LEDGER[start:]]


# ---- argument checks -----------------------------------------------------------------------


def _check_name(name: Any) -> None:
    if not _check.text(name, "name").strip():
        raise ValueError("name must not be empty")


def _check_iterable(x: Any, name: str) -> tuple:
    if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        raise TypeError(f"{name} must be an iterable, got {type(x).__name__}")
    return tuple(x)


def _check_arguments(name: Any, learner: Any, cases: Any, reference: Any, rtol: Any, atol: Any,
                     compare: Any) -> None:
    _check_name(name)
    if not callable(learner):
        raise TypeError(f"learner must be callable, got {type(learner).__name__}")
    if isinstance(cases, (str, bytes)) or not hasattr(cases, "__iter__"):
        raise TypeError(f"cases must be an iterable of argument tuples, got {type(cases).__name__}")
    if not callable(reference):
        raise TypeError(f"reference must be callable, got {type(reference).__name__}")
    for tol, value in (("rtol", rtol), ("atol", atol)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{tol} must be a real number, got {type(value).__name__} {value!r}")
        if not 0 <= value < math.inf:
            raise ValueError(f"{tol} must be a finite number >= 0, got {value}")
    if compare is not None and not callable(compare):
        raise TypeError(f"compare must be callable or None, got {type(compare).__name__}")
