"""Small argument checks shared by every module.

Each raises ``TypeError`` or ``ValueError`` whose message names the argument
and says what was expected, the course's convention for bad input.
"""

from __future__ import annotations

import numbers
import os
import pathlib
from typing import Any, Sequence

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


#: The most bytes one call may allocate for an array: 2 GiB. Binder gives a kernel
#: 1-2 GB, so a size mistyped by a few digits (10**12) must be an error before
#: NumPy or a runtime tries to allocate it, not a MemoryError or a frozen kernel.
MAX_BYTES = 2**31


def integer(x: Any, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``x`` as ``int`` if it is an integer (not bool) in [``minimum``, ``maximum``].

    ``maximum`` bounds a size or a count whose mistyped value (10**12) would
    hang a notebook or exhaust memory; the message states the bound.
    """
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__} {x!r}")
    x = int(x)
    if minimum is not None and x < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {x}")
    if maximum is not None and x > maximum:
        raise ValueError(f"{name} must be <= {maximum:,}, got {x:,}")
    return x


def allocation(nbytes: int, name: str) -> int:
    """Return ``nbytes`` if an array of that many bytes may be allocated (at most :data:`MAX_BYTES`).

    ``name`` is the argument (or arguments) whose values set the size.
    """
    nbytes = int(nbytes)
    if nbytes > MAX_BYTES:
        raise ValueError(f"{name} would need {nbytes / 2**30:,.1f} GiB; at most {MAX_BYTES / 2**30:.0f} GiB "
                         "may be allocated (check for a mistyped size)")
    return nbytes


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
    """Return ``np.dtype(x)`` or raise ``TypeError`` naming ``name``.

    ``None`` is refused: ``np.dtype(None)`` is float64, so a forgotten
    argument would silently change the type.
    """
    if x is None:
        raise TypeError(f"{name} must be a NumPy dtype (e.g. 'float32'), got None")
    try:
        return np.dtype(x)
    except TypeError as exc:
        raise TypeError(f"{name} must be a NumPy dtype (e.g. 'float32'), got {x!r}") from exc


def one_of(x: Any, name: str, choices: tuple) -> Any:
    """Return ``x`` if it is one of ``choices`` (of the same type: ``True`` is not ``1``, ``1.0`` not ``1``)."""
    if not any(isinstance(x, type(c)) and isinstance(x, bool) == isinstance(c, bool) and x == c for c in choices):
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


def real(x: Any, name: str, *, minimum: float | None = None, maximum: float | None = None) -> float:
    """Return ``x`` as ``float`` if it is a finite real number (not bool, not complex) in [``minimum``, ``maximum``]."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x}")
    if (minimum is not None and x < minimum) or (maximum is not None and x > maximum):
        bounds = f"in [{minimum}, {maximum}]" if minimum is not None and maximum is not None else (
            f">= {minimum}" if minimum is not None else f"<= {maximum}")
        raise ValueError(f"{name} must be {bounds}, got {x}")
    return x


def real_array(x: Any, name: str) -> np.ndarray:
    """Return ``x`` if it is an array of real numbers: integer or float, not bool, not complex.

    A complex array would lose its imaginary part in real arithmetic, and a
    bool array is a mask, not numbers.
    """
    x = as_array(x, name)
    if x.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of real numbers (integer or float), got dtype {x.dtype}")
    return x


def zero_point(z: Any, name: str, lo: int, hi: int, of: str) -> np.ndarray:
    """Return ``z`` as an int64 array if it holds integers in [``lo``, ``hi``], the range of ``of``.

    A zero point is a value of the quantized type: outside that type's
    range it stands for no stored value, and arithmetic with it is wrong
    without any overflow to show it. ``of`` names the type (e.g.
    ``"a's dtype uint8"``) for the message.
    """
    if isinstance(z, (bool, np.bool_)) or z is None:
        raise TypeError(f"{name} must be an integer (or an integer array), got {type(z).__name__} {z!r}")
    a = np.asarray(z) if isinstance(z, (numbers.Integral, np.ndarray, list, tuple)) else None
    if a is None or a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer (or an integer array), got {type(z).__name__} {z!r:.40}")
    if a.size and (int(a.min()) < lo or int(a.max()) > hi):
        bad = a.ravel()[(a.ravel() < lo) | (a.ravel() > hi)][0]
        raise ValueError(f"{name} must be in [{lo}, {hi}] (the range of {of}), got {int(bad)}")
    return a.astype(np.int64)


def positive(x: Any, name: str) -> float:
    """Return ``x`` as ``float`` if it is a finite real number > 0."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    x = float(x)
    if not (x > 0 and x < float("inf")):
        raise ValueError(f"{name} must be a finite number > 0, got {x}")
    return x


def round_times(x: Any, name: str) -> tuple[float, ...]:
    """Return ``x`` as a tuple of finite times > 0 in seconds, one per interleaved round (empty allowed).

    The per-round times a measured record keeps beside its medians
    (:func:`npukit.measure.compare`'s rounds), so a page can pair two of
    them round by round.
    """
    return tuple(positive(t, f"{name}[{i}]") for i, t in enumerate(sequence(x, name)))


def paired_rounds(a: tuple[str, Any, float], b: tuple[str, Any, float], what: str) -> None:
    """Check two ``(name, per-round times, median)`` fields of a record measured in the same rounds.

    The times are :func:`round_times`; both hold the same number of rounds
    (none, or at least 2), and each median is the median of its times.
    ``what`` names the times in the message (``"copy_times and convert_times"``).
    """
    import math
    import statistics

    (fa, ta, ma), (fb, tb, mb) = a, b
    if len(ta) != len(tb) or len(ta) == 1:
        raise ValueError(f"{what} must hold the same number of rounds (none, or at least 2), "
                         f"got {len(ta)} and {len(tb)}")
    for field, times, median in ((fa, ta, ma), (fb, tb, mb)):
        if times and not math.isclose(median, statistics.median(times), rel_tol=1e-9):
            raise ValueError(f"{field} must be the median of its per-round times, "
                             f"{statistics.median(times)!r}; got {median!r}")


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


def record(rec: Any, *, text: Sequence[str] = (), counts: Sequence[str] = (), names: Sequence[str] = (),
           flags: Sequence[str] = (), seconds: Sequence[str] = ()) -> None:
    """Check a frozen record's fields where it is made (its ``__post_init__``).

    ``text`` fields are str, ``counts`` integers >= 0, ``names`` lists or
    tuples of str (stored as tuples), ``flags`` ``True``/``False``,
    ``seconds`` finite real numbers >= 0 (stored as float). Each message names
    the field.
    """
    for f in text:
        if not isinstance(getattr(rec, f), str):
            raise TypeError(f"{f} must be a str, got {type(getattr(rec, f)).__name__}")
    for f in counts:
        integer(getattr(rec, f), f, minimum=0)
    for f in names:
        value = sequence(getattr(rec, f), f)
        for k, item in enumerate(value):
            if not isinstance(item, str):
                raise TypeError(f"{f}[{k}] must be a str, got {type(item).__name__}")
        object.__setattr__(rec, f, value)
    for f in flags:
        boolean(getattr(rec, f), f)
    for f in seconds:
        object.__setattr__(rec, f, real(getattr(rec, f), f, minimum=0.0))


def image_batch(x: Any, name: str) -> np.ndarray:
    """Return ``x`` if it is a non-empty 4-D NCHW batch (at least one image; a 3-D array is one image, not a batch)."""
    x = as_array(x, name)
    if x.ndim != 4 or len(x) == 0:
        raise ValueError(f"{name} must be a non-empty 4-D NCHW batch (n >= 1, C, H, W), got shape {x.shape}")
    return x


def function(x: Any, name: str = "fn") -> Any:
    """Return ``x`` if it can be called (a checker's learner function), else ``TypeError`` naming ``name``."""
    if not callable(x):
        raise TypeError(f"{name} must be your function (a callable), got {type(x).__name__} {x!r:.40}")
    return x
