"""Small argument checks shared by every module.

Each raises ``TypeError`` or ``ValueError`` whose message names the argument
and says what was expected, the course's convention for bad input.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def as_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` if it is a NumPy array, else raise ``TypeError`` naming ``name``."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, got {type(x).__name__}")
    return x


def integer(x: Any, name: str, *, minimum: int | None = None) -> int:
    """Return ``x`` as ``int`` if it is an integer (not bool) >= ``minimum``."""
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__} {x!r}")
    x = int(x)
    if minimum is not None and x < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {x}")
    return x


def shape(x: Any, name: str = "shape") -> tuple[int, ...]:
    """Return ``x`` as a tuple of non-negative ints (an int is a 1-D shape)."""
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        x = (x,)
    if not isinstance(x, (tuple, list)):
        raise TypeError(f"{name} must be a tuple of non-negative integers, got {type(x).__name__}")
    out = []
    for i, d in enumerate(x):
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise TypeError(f"{name}[{i}] must be an integer, got {type(d).__name__} {d!r}")
        if d < 0:
            raise ValueError(f"{name}[{i}] must be non-negative, got {d}")
        out.append(int(d))
    return tuple(out)


def power_of_two(x: Any, name: str) -> int:
    """Return ``x`` if it is a positive power of two."""
    x = integer(x, name)
    if x <= 0 or x & (x - 1):
        raise ValueError(f"{name} must be a positive power of two, got {x}")
    return x


def dtype(x: Any, name: str = "dtype") -> np.dtype:
    """Return ``np.dtype(x)`` or raise ``TypeError`` naming ``name``."""
    try:
        return np.dtype(x)
    except TypeError as exc:
        raise TypeError(f"{name} must be a NumPy dtype (e.g. 'float32'), got {x!r}") from exc


def one_of(x: Any, name: str, choices: tuple) -> Any:
    """Return ``x`` if it is one of ``choices``."""
    if x not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {x!r}")
    return x


def finite(x: np.ndarray, name: str) -> np.ndarray:
    """Raise ``ValueError`` if ``x`` has NaN or infinite values."""
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be finite; it contains NaN or infinity")
    return x
