"""Small argument checks shared by every module.

Each raises ``TypeError`` or ``ValueError`` whose message names the argument
and says what was expected, the course's convention for bad input.
"""

from __future__ import annotations

import numbers
import os
import pathlib
from typing import Any

import numpy as np


def as_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` if it is a NumPy array, else raise ``TypeError`` naming ``name``."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, got {type(x).__name__}")
    return x


def float_data(x: Any, name: str) -> np.ndarray:
    """Return ``x`` if it is a non-empty, finite float array (``TypeError`` / ``ValueError`` otherwise)."""
    x = as_array(x, name)
    if x.dtype.kind != "f":
        raise TypeError(f"{name} must be a float array, got {x.dtype}")
    if x.size == 0:
        raise ValueError(f"{name} must not be empty")
    return finite(x, name)


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


def sequence(x: Any, name: str, *, length: int | None = None, min_length: int = 0) -> tuple:
    """Return ``x`` as a tuple if it is a list or tuple of the expected length.

    Strings and arrays are refused: a string is a sequence of characters, and
    an array argument is checked by :func:`as_array`.
    """
    if isinstance(x, (str, bytes)) or not isinstance(x, (list, tuple)):
        raise TypeError(f"{name} must be a list or tuple, got {type(x).__name__}")
    if length is not None and len(x) != length:
        raise ValueError(f"{name} must have {length} items, got {len(x)}")
    if len(x) < min_length:
        raise ValueError(f"{name} must have at least {min_length} item{'s' * (min_length != 1)}, got {len(x)}")
    return tuple(x)


def positive(x: Any, name: str) -> float:
    """Return ``x`` as ``float`` if it is a finite real number > 0."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    x = float(x)
    if not (x > 0 and x < float("inf")):
        raise ValueError(f"{name} must be a finite number > 0, got {x}")
    return x


def labels(x: Any, name: str, *, classes: int, n: int | None = None) -> np.ndarray:
    """Return ``x`` if it is a 1-D integer array of class indices in [0, classes).

    A negative label would silently index from the end (class -1 is the last
    class) and a label past the end would silently count as wrong, so both are
    refused here, in the one place every label enters. ``n``, if given, is the
    number of images the labels belong to.
    """
    x = as_array(x, name)
    if x.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer class indices, got dtype {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one label per image), got shape {x.shape}")
    if n is not None and len(x) != n:
        raise ValueError(f"{name} must have {n} entries (one per image), got {len(x)}")
    if x.size and (x.min() < 0 or x.max() >= classes):
        bad = x[(x < 0) | (x >= classes)][0]
        raise ValueError(f"{name} must be class indices in [0, {classes}), got {int(bad)}")
    return x


def instance(x: Any, name: str, cls: type | tuple[type, ...], what: str | None = None) -> Any:
    """Return ``x`` if it is an instance of ``cls``; ``what`` names the expected type in the message."""
    if not isinstance(x, cls):
        if what is None:
            what = cls.__name__ if isinstance(cls, type) else " or ".join(c.__name__ for c in cls)
        raise TypeError(f"{name} must be a {what}, got {type(x).__name__}")
    return x


def boolean(x: Any, name: str) -> bool:
    """Return ``x`` if it is ``True`` or ``False`` (a NumPy bool too); 0 and 1 are refused."""
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(x).__name__} {x!r}")
    return bool(x)


def text(x: Any, name: str, *, optional: bool = False) -> str | None:
    """Return ``x`` if it is a string (or ``None`` when ``optional``)."""
    if x is None and optional:
        return None
    if not isinstance(x, str):
        raise TypeError(f"{name} must be a string{' or None' if optional else ''}, got {type(x).__name__}")
    return x


def fraction(x: Any, name: str) -> float:
    """Return ``x`` as ``float`` if it is a real number in [0, 1)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    x = float(x)
    if not 0 <= x < 1:
        raise ValueError(f"{name} must be a number in [0, 1), got {x}")
    return x


def path(x: Any, name: str) -> pathlib.Path:
    """Return ``x`` as a ``pathlib.Path`` if it is a non-empty ``str`` or path-like object."""
    if not isinstance(x, (str, os.PathLike)):
        raise TypeError(f"{name} must be a str or pathlib.Path, got {type(x).__name__}")
    if str(x) == "":
        raise ValueError(f"{name} must not be empty")
    return pathlib.Path(x)
