"""Checkers for lab 1, "Tensors are memory" (labs/01_tensors.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and compares
it with an independent reference; see :mod:`npukit.teach.core`.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .core import _rng, _same, _show, check


_DTYPES = ("int8", "uint8", "float16", "int16", "float32", "int32", "float64", "int64", "complex128")


#: The operations of lab 1's "view or copy?" exercise, applied to an NCHW
#: float32 batch ``x`` (C-contiguous, every axis of length >= 2).
VIEW_OR_COPY_OPS: tuple[str, ...] = (
    "x[0]",
    "x[:, 1]",
    "x[:, ::-1]",
    "x[:, [2, 1, 0]]",
    "x.transpose(0, 2, 3, 1)",
    "np.ascontiguousarray(x.transpose(0, 2, 3, 1))",
    "x.reshape(len(x), -1)",
    "x.transpose(0, 2, 3, 1).reshape(len(x), -1)",
    "x[..., ::2, ::2]",
    "x[..., ::2, ::2].reshape(len(x), -1)",
    "x.astype(np.float32)",
    "x.astype(np.float32, copy=False)",
    "x[x > 0.5]",
    "x.view(np.uint32)",
    "x + 0",
)


def _batch(rng: np.random.Generator) -> np.ndarray:
    n, c = int(rng.integers(2, 5)), int(rng.integers(3, 5))
    h, w = (int(v) for v in rng.integers(4, 9, size=2))
    return rng.random((n, c, h, w), dtype=np.float32)


def check_strides(fn: Callable[[tuple, int, str], Sequence[int]]) -> None:
    """Check ``fn(shape, itemsize, order)`` against NumPy's strides of a fresh array.

    Fresh cases: 40 shapes with 0–4 axes of length 1–9 (length-1 axes
    included, zero-length axes left out), the itemsizes of common dtypes
    (1–16 bytes), orders "C" and "F" alternately. Reference:
    ``np.empty(shape, dtype, order=order).strides`` for a dtype of that itemsize.
    Prints one line on success; raises ``AssertionError`` naming the input
    otherwise (this holds for every chapter-1 checker).

    Examples
    --------
    >>> from npukit.tensors import contiguous_strides
    >>> check_strides(contiguous_strides)
    ✓ strides: 40 fresh cases agree with the reference.
    """
    rng = _rng(1101)
    cases = []
    for k in range(40):
        shape = tuple(int(d) for d in rng.integers(1, 10, size=int(rng.integers(0, 5))))
        itemsize = np.dtype(str(rng.choice(_DTYPES))).itemsize
        cases.append((shape, itemsize, "CF"[k % 2]))

    def reference(shape, itemsize, order):
        return np.empty(shape, dtype=np.dtype((np.void, itemsize)), order=order).strides

    def learner(shape, itemsize, order):
        got = fn(shape, itemsize, order)
        want = reference(shape, itemsize, order)
        if _same(got, want, 0, 0):
            return want
        hint = ""
        if _same(got, tuple(s // itemsize for s in want), 0, 0) and itemsize > 1:
            hint = " These are strides in elements; strides count bytes (multiply by itemsize)."
        elif _same(got, reference(shape, itemsize, "FC"[order == "F"]), 0, 0):
            hint = f" That is the answer for order {'FC'[order == 'F']!r}."
        raise AssertionError(f"strides: wrong answer for ({shape}, {itemsize}, {order!r}).\n"
                             f"  expected: {want}\n  got:      {_show(got)}{hint}")

    check("strides", learner, cases, reference)


def _actually_a_view(op: str) -> bool:
    """Perform ``op`` on three fresh batches; True if the result shares x's memory."""
    rng = _rng(1102)
    answers = set()
    for _ in range(3):
        x = _batch(rng)
        y = eval(op, {"np": np, "x": x})  # the fixed strings of VIEW_OR_COPY_OPS
        answers.add(bool(np.shares_memory(x, y)))
    if len(answers) != 1:  # a sanity check on the exercise itself
        raise RuntimeError(f"{op!r} is a view for some shapes and a copy for others")
    return answers.pop()


def check_view_or_copy(fn: Callable[[str], bool]) -> None:
    """Check ``fn(op) -> bool`` predicts whether each operation returns a view.

    For every expression in :data:`VIEW_OR_COPY_OPS` the reference performs it
    on three fresh NCHW float32 batches of random sizes and asks
    ``np.shares_memory(x, result)``. A prediction of ``True`` means "a view of
    ``x``'s memory", ``False`` "a copy".

    Examples
    --------
    >>> check_view_or_copy(_actually_a_view)
    ✓ view or copy: 15 fresh cases agree with the reference.
    """

    def learner(op):
        got = fn(op)
        if not isinstance(got, (bool, np.bool_)):
            raise AssertionError(f"view or copy: for {op!r} return True (view) or False (copy), got {got!r}")
        if bool(got) != _actually_a_view(op):
            said, truth = ("a view", "a copy") if got else ("a copy", "a view")
            raise AssertionError(f"view or copy: you predicted {op!r} gives {said}, but NumPy returns {truth}. "
                                 "Which rule of chapter 1 decides it?")
        return bool(got)

    check("view or copy", learner, [(op,) for op in VIEW_OR_COPY_OPS], _actually_a_view)


def check_aligned_empty(fn: Callable[[tuple, Any, int], np.ndarray]) -> None:
    """Check ``fn(shape, dtype, alignment)`` returns a usable, aligned, empty array.

    Fresh cases: 30 shapes with 0–3 axes of length 1–6, common dtypes, and
    alignments 8–4096 bytes. For each, every array returned so far is kept
    alive (so a lucky allocator cannot hand back one address over and over),
    and the result must be a C-contiguous, writable ``numpy.ndarray`` with
    the asked shape and dtype whose data address is a multiple of
    ``alignment``, that keeps a pattern written into all its elements, and
    that overlaps none of the earlier results.

    Examples
    --------
    >>> from npukit.tensors import aligned_empty
    >>> check_aligned_empty(aligned_empty)
    ✓ aligned_empty: 30 fresh cases agree with the reference.
    """
    rng = _rng(1103)
    cases = []
    for _ in range(30):
        shape = tuple(int(d) for d in rng.integers(1, 7, size=int(rng.integers(0, 4))))
        cases.append((shape, np.dtype(str(rng.choice(_DTYPES))), 1 << int(rng.integers(3, 13))))
    kept: list[np.ndarray] = []

    def reference(shape, dtype, alignment):
        return {"shape": shape, "dtype": dtype, "alignment": alignment}

    def compare(got, want):
        case = f"aligned_empty({want['shape']}, {want['dtype']}, {want['alignment']})"
        if not isinstance(got, np.ndarray):
            raise AssertionError(f"{case} returned {type(got).__name__}, not a numpy.ndarray")
        if got.shape != want["shape"] or got.dtype != want["dtype"]:
            raise AssertionError(f"{case} returned shape {got.shape} dtype {got.dtype}, "
                                 f"expected shape {want['shape']} dtype {want['dtype']}")
        address = got.__array_interface__["data"][0]
        if address % want["alignment"]:
            raise AssertionError(f"{case}: address % {want['alignment']} = {address % want['alignment']}, not 0")
        if not (got.flags.c_contiguous and got.flags.writeable):
            raise AssertionError(f"{case}: the result must be C-contiguous and writable")
        pattern = np.arange(got.size).reshape(got.shape).astype(got.dtype)
        got[...] = pattern
        if any(np.shares_memory(got, k) for k in kept):
            raise AssertionError(f"{case}: the result overlaps an array returned earlier")
        kept.append(got)
        if not np.array_equal(got, pattern):
            raise AssertionError(f"{case}: values written into the result did not read back")
        return True

    check("aligned_empty", fn, cases, reference, compare=compare)


def _reshape_cases(rng: np.random.Generator, n: int) -> list[tuple]:
    cases = []
    while len(cases) < n:
        ndim = int(rng.integers(2, 5))
        base_shape = tuple(int(d) for d in rng.choice(6, size=ndim, p=[0, 0.1, 0.3, 0.3, 0.15, 0.15]))
        x = np.empty(base_shape, dtype=np.float32)
        x = x.transpose(rng.permutation(x.ndim)) if rng.random() < 0.5 else x
        x = x[tuple(slice(None, None, int(rng.choice([1, 1, 2]))) for _ in range(x.ndim))]
        shape, size = x.shape, x.size
        if size < 2:
            continue
        how = rng.integers(0, 4)
        if how == 0 and x.ndim >= 2:  # merge two neighbouring axes
            k = int(rng.integers(0, x.ndim - 1))
            new = shape[:k] + (shape[k] * shape[k + 1],) + shape[k + 2 :]
        elif how == 1:  # split one axis, or append a length-1 axis
            k = int(rng.integers(0, x.ndim))
            divisors = [d for d in range(2, shape[k]) if shape[k] % d == 0]
            new = shape[:k] + ((divisors[0], shape[k] // divisors[0]) if divisors else (shape[k], 1)) + shape[k + 1 :]
        elif how == 2:  # flatten
            new = (size,)
        else:  # any factorisation of the size
            primes, m, p = [], size, 2
            while m > 1:
                while m % p == 0:
                    primes.append(p)
                    m //= p
                p += 1
            rng.shuffle(primes)
            cuts = sorted(rng.choice(len(primes) + 1, size=int(rng.integers(0, 3)), replace=True))
            new = tuple(int(np.prod(primes[a:b])) for a, b in zip([0, *cuts], [*cuts, len(primes)]))
        cases.append((tuple(shape), tuple(x.strides), tuple(int(d) for d in new)))
    return cases


def _reshape_is_view(shape, strides, new_shape) -> bool:
    """Build an array with these strides and ask NumPy whether reshape copied."""
    span = sum((n - 1) * s for n, s in zip(shape, strides)) // 4 + 1  # float32 elements reached
    x = np.lib.stride_tricks.as_strided(np.zeros(span, dtype=np.float32), shape, strides)
    return bool(np.shares_memory(x, x.reshape(new_shape)))


def check_reshape_view(fn: Callable[[tuple, tuple, tuple], bool]) -> None:
    """Check ``fn(shape, strides, new_shape) -> bool`` predicts whether reshape can avoid a copy.

    Fresh cases: 60 float32 arrays made from fresh random shapes by random
    transposes and step-2 slices, each with a new shape of the same size (two
    neighbouring axes merged, one axis split, flattened, or any factorisation).
    Reference: NumPy itself: build an array with exactly that shape and those
    strides, reshape it, and ask ``np.shares_memory``.

    Examples
    --------
    >>> check_reshape_view(_reshape_is_view)
    ✓ reshape without a copy: 60 fresh cases agree with the reference.
    """
    cases = _reshape_cases(_rng(1104), 60)

    def learner(shape, strides, new_shape):
        return bool(fn(shape, strides, new_shape))

    check("reshape without a copy", learner, cases, _reshape_is_view)
