"""The checking core shared by every lab's checkers.

A checker calls the learner's function on *fresh* cases — inputs the lab never
showed — drawn from a seeded RNG, and compares each answer with an independent
reference (NumPy, ONNX's reference evaluator, a brute-force loop), never with
the lab's own solution. It prints one line on success and raises
``AssertionError`` naming the failing input otherwise.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Iterable

import numpy as np

__all__ = [
    "check",
]


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

    Returns
    -------
    int
        The number of cases checked.

    Raises
    ------
    TypeError
        If ``learner`` or ``reference`` is not callable.
    AssertionError
        On the first case where the answers differ, naming the input.

    Examples
    --------
    >>> check("square", lambda x: x * x, [(2,), (3,)], lambda x: x ** 2)
    ✓ square: 2 fresh cases agree with the reference.
    2
    """
    if not callable(learner):
        raise TypeError(f"learner must be callable, got {type(learner).__name__}")
    if not callable(reference):
        raise TypeError(f"reference must be callable, got {type(reference).__name__}")
    n = 0
    for case in cases:
        want = reference(*copy.deepcopy(case))
        got = learner(*copy.deepcopy(case))
        ok = compare(got, want) if compare is not None else _same(got, want, rtol, atol)
        if not ok:
            args = ", ".join(_show(a) for a in case)
            raise AssertionError(
                f"{name}: wrong answer for input ({args}).\n  expected: {_show(want)}\n  got:      {_show(got)}"
            )
        n += 1
    print(f"✓ {name}: {n} fresh cases agree with the reference.")
    return n


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)
