"""The checking core shared by every lab's checkers.

A checker calls the learner's function on *fresh* cases — inputs the lab never
showed — drawn from a seeded RNG, and compares each answer with an independent
reference (NumPy, ONNX's reference evaluator, a brute-force loop), never with
the lab's own solution. It prints one line on success and raises
:class:`CheckFailed` (an ``AssertionError``) naming the failing input otherwise.

Two outcomes read as one line in a notebook, with no traceback through this
package: :class:`NotAttempted` when the learner's function still raises
``NotImplementedError`` (the student edition), and :class:`CheckFailed`.

While the learner's function runs, :func:`learner_call` watches which Python
functions execute: calling npukit's own implementation of the exercise, or
the checker's own references, fails the check however it was imported.
"""

from __future__ import annotations

import copy
import inspect
import math
import numbers
import sys
import types
from typing import Any, Callable, Iterable

import numpy as np

from .. import _check

__all__ = [
    "CheckFailed",
    "NotAttempted",
    "check",
    "learner_call",
]


class CheckFailed(AssertionError):
    """A check that failed; a notebook shows only its message, not a traceback into npukit."""

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom error display
        return [f"\x1b[31m✗ {line}\x1b[0m" if i == 0 else line for i, line in enumerate(str(self).splitlines())]


class NotAttempted(CheckFailed):
    """The learner's function still raises ``NotImplementedError``: the exercise is not done yet."""


def _code_objects(items: Iterable[Any]) -> dict[types.CodeType, str]:
    """Code objects of functions, classes' methods and modules' functions, with a readable name each."""
    out: dict[types.CodeType, str] = {}

    def add(obj: Any, name: str) -> None:
        obj = inspect.unwrap(obj) if callable(obj) else obj
        if isinstance(obj, (types.FunctionType, types.MethodType)):
            out[obj.__code__ if isinstance(obj, types.FunctionType) else obj.__func__.__code__] = name
        elif isinstance(obj, type):
            for k, v in vars(obj).items():
                if isinstance(v, (staticmethod, classmethod)):
                    v = v.__func__
                if isinstance(v, (types.FunctionType, property)):
                    for f in (v.fget, v.fset) if isinstance(v, property) else (v,):
                        if f is not None:
                            add(f, f"{name}.{k}")

    for item in items:
        if isinstance(item, types.ModuleType):
            for k, v in vars(item).items():
                if getattr(v, "__module__", None) == item.__name__:
                    add(v, f"{item.__name__}.{k}")
        else:
            add(item, f"{getattr(item, '__module__', '?')}.{getattr(item, '__qualname__', item)}")
    return out


def learner_call(name: str, fn: Callable[..., Any], *args: Any, forbid: Iterable[Any] = ()) -> Any:
    """Call the learner's ``fn(*args)``, refusing shortcuts and turning "not done" into one line.

    Parameters
    ----------
    name : str
        The exercise, for messages.
    fn : callable
        The learner's function.
    *args
        Its arguments.
    forbid : iterable
        Functions, classes or whole modules whose code must not run inside
        ``fn``: npukit's own implementation of the exercise and the checker's
        references. They are recognised by their code objects, so an alias
        (``from npukit.gemm import tiled_matmul as mm``) is caught too.

    Raises
    ------
    TypeError, ValueError
        If ``name`` is not a non-empty string, ``fn`` not callable or
        ``forbid`` not an iterable.
    NotAttempted
        If ``fn`` raises ``NotImplementedError``.
    CheckFailed
        If ``fn`` ran forbidden code.

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
    forbidden = _code_objects(_check_iterable(forbid, "forbid"))
    seen: list[str] = []

    def profile(frame: types.FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in forbidden and not seen:
            seen.append(forbidden[frame.f_code])

    previous = sys.getprofile()
    sys.setprofile(profile if forbidden else previous)
    try:
        result = fn(*args)
    except NotImplementedError:
        raise NotAttempted(f"{name}: not attempted yet (the function still raises NotImplementedError).") from None
    finally:
        sys.setprofile(previous)
    if seen:
        raise CheckFailed(f"{name}: your function called {seen[0]}. This exercise asks you to write it yourself, "
                          "so npukit's implementation and the checker's references are off limits.")
    return result


def _show(x: Any) -> str:
    if isinstance(x, np.ndarray):
        s = np.array2string(x, threshold=20, precision=4)
        return f"array(shape={x.shape}, dtype={x.dtype}) {s}"
    return repr(x)


def _same(got: Any, want: Any, rtol: float, atol: float) -> bool:
    if isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
        got_a, want_a = np.asarray(got), np.asarray(want)
        if got_a.shape != want_a.shape:
            return False
        if want_a.dtype.kind in "fc":
            return bool(np.allclose(got_a, want_a, rtol=rtol, atol=atol, equal_nan=True))
        return bool(np.array_equal(got_a, want_a))
    if isinstance(want, float):
        return isinstance(got, (int, float, np.number)) and bool(np.isclose(got, want, rtol=rtol, atol=atol))
    if isinstance(want, (tuple, list)) and isinstance(got, (tuple, list)):
        return len(got) == len(want) and all(_same(g, w, rtol, atol) for g, w in zip(got, want))
    return got == want


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
) -> int:
    """Check ``learner(*case)`` against ``reference(*case)`` for every case.

    Parameters
    ----------
    name : str
        The exercise's name, used in messages.
    learner : callable
        The learner's function.
    cases : iterable of tuple
        Argument tuples. Arrays in them are copied before each call, so a
        learner that writes into its input cannot change the reference's input.
    reference : callable
        An independent way to get the right answer (NumPy, a brute-force loop).
    rtol, atol : float
        Tolerances for floating-point answers.
    compare : callable, optional
        ``compare(got, want) -> bool`` replacing the default comparison.
    forbid : iterable
        What the learner's function may not call (see :func:`learner_call`).

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
        On the first case where the answers differ, naming the input, or when
        the learner's function calls something in ``forbid``.

    Examples
    --------
    >>> check("square", lambda x: x * x, [(2,), (3,)], lambda x: x ** 2)
    ✓ square: 2 fresh cases agree with the reference.
    2
    """
    _check_arguments(name, learner, cases, reference, rtol, atol, compare)
    forbid = _check_iterable(forbid, "forbid")
    n = 0
    for i, case in enumerate(cases):
        if isinstance(case, (str, bytes)) or not isinstance(case, (tuple, list)):
            raise TypeError(f"cases[{i}] must be a tuple of arguments, got {type(case).__name__}")
        want = reference(*copy.deepcopy(case))
        got = learner_call(name, learner, *copy.deepcopy(case), forbid=forbid)
        ok = compare(got, want) if compare is not None else _same(got, want, rtol, atol)
        if not ok:
            args = ", ".join(_show(a) for a in case)
            raise CheckFailed(
                f"{name}: wrong answer for input ({args}).\n  expected: {_show(want)}\n  got:      {_show(got)}"
            )
        n += 1
    print(f"✓ {name}: {n} fresh cases agree with the reference.")
    return n


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


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)
