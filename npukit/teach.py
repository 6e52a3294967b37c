"""Exercise checkers for the labs, and the student-edition generator.

A checker calls the learner's function on *fresh* cases — inputs the lab never
showed — drawn from a seeded RNG, and compares each answer with an independent
reference (NumPy, ONNX's reference evaluator, a brute-force loop), never with
the lab's own solution. It prints one line on success and raises
``AssertionError`` naming the failing input otherwise.

The student edition (``python -m npukit.teach student labs -o student/``)
replaces everything between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in
cells tagged ``solution`` by ``raise NotImplementedError()``, and clears
outputs and widget state, so every ``check`` cell fails until the learner has
done the exercise. See the instructor guide (chapters/instructor.md).
"""

from __future__ import annotations

import argparse
import copy
import json
import pathlib
import re
import sys
from typing import Any, Callable, Iterable, Sequence

import numpy as np

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"



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


# ---- Chapter 1: Tensors are memory ------------------------------------------

_CH1_DTYPES = ("int8", "uint8", "float16", "int16", "float32", "int32", "float64", "int64", "complex128")

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


def _ch1_batch(rng: np.random.Generator) -> np.ndarray:
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
        itemsize = np.dtype(str(rng.choice(_CH1_DTYPES))).itemsize
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


def _ch1_actually_a_view(op: str) -> bool:
    """Perform ``op`` on three fresh batches; True if the result shares x's memory."""
    rng = _rng(1102)
    answers = set()
    for _ in range(3):
        x = _ch1_batch(rng)
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
    >>> check_view_or_copy(_ch1_actually_a_view)
    ✓ view or copy: 15 fresh cases agree with the reference.
    """

    def learner(op):
        got = fn(op)
        if not isinstance(got, (bool, np.bool_)):
            raise AssertionError(f"view or copy: for {op!r} return True (view) or False (copy), got {got!r}")
        if bool(got) != _ch1_actually_a_view(op):
            said, truth = ("a view", "a copy") if got else ("a copy", "a view")
            raise AssertionError(f"view or copy: you predicted {op!r} gives {said}, but NumPy returns {truth}. "
                                 "Which rule of chapter 1 decides it?")
        return bool(got)

    check("view or copy", learner, [(op,) for op in VIEW_OR_COPY_OPS], _ch1_actually_a_view)


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
        cases.append((shape, np.dtype(str(rng.choice(_CH1_DTYPES))), 1 << int(rng.integers(3, 13))))
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


def _ch1_reshape_cases(rng: np.random.Generator, n: int) -> list[tuple]:
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


def _ch1_reshape_is_view(shape, strides, new_shape) -> bool:
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
    >>> check_reshape_view(_ch1_reshape_is_view)
    ✓ reshape without a copy: 60 fresh cases agree with the reference.
    """
    cases = _ch1_reshape_cases(_rng(1104), 60)

    def learner(shape, strides, new_shape):
        return bool(fn(shape, strides, new_shape))

    check("reshape without a copy", learner, cases, _ch1_reshape_is_view)



# ---- Chapter 2: Layouts ------------------------------------------------------

_CH2_BLOCKS = (2, 3, 4, 8, 16)


def _ch2_tensor(rng: np.random.Generator, max_c: int = 40) -> np.ndarray:
    n, c = int(rng.integers(1, 4)), int(rng.integers(1, max_c))
    h, w = (int(v) for v in rng.integers(1, 7, size=2))
    return rng.standard_normal((n, c, h, w)).astype(np.float32)


def _ch2_blocked_by_loops(x: np.ndarray, block: int) -> np.ndarray:
    """NCHW → (N, ceil(C/block), H, W, block), one channel at a time."""
    n, c, h, w = x.shape
    out = np.zeros((n, -(-c // block), h, w, block), dtype=x.dtype)
    for ch in range(c):
        out[:, ch // block, :, :, ch % block] = x[:, ch]
    return out


def _ch2_contiguous(name: str, fn: Callable[..., Any], reference: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``fn``: right values whose bytes are not in C order fail with a hint."""

    def learner(*args):
        want = reference(*copy.deepcopy(args))
        got = fn(*args)
        if isinstance(got, np.ndarray) and not got.flags.c_contiguous and _same(got, want, 0, 0):
            shape = args[0].shape
            raise AssertionError(
                f"{name}: for an input of shape {shape} the values are right, but the answer has strides "
                f"{got.strides}: it is not C-contiguous. A transposed view has the right values with the "
                "bytes still in the old layout; return np.ascontiguousarray(...) of it"
            )
        return got

    return learner


def check_to_blocked(fn: Callable[[np.ndarray, int], np.ndarray]) -> None:
    """Check ``fn(x, block)`` turns an NCHW tensor into nChw{block}c.

    Fresh cases: 40 float32 tensors with N 1–3, C 1–39 (most of them not a
    multiple of the block), H and W 1–6, and blocks 2, 3, 4, 8 or 16.
    Reference: a loop over channels that copies channel ``c`` to
    ``out[:, c // block, :, :, c % block]`` of a zero-filled array, so the
    answer must have shape ``(N, ceil(C / block), H, W, block)`` and zeros in
    the padding. The answer must be C-contiguous: a layout is bytes in memory,
    and a transposed view leaves them in NCHW order.

    Examples
    --------
    >>> from npukit.layouts import to_blocked
    >>> check_to_blocked(to_blocked)
    ✓ to_blocked: 40 fresh cases agree with the reference.
    """
    rng = _rng(1201)
    cases = [(_ch2_tensor(rng), int(rng.choice(_CH2_BLOCKS))) for _ in range(40)]
    reference = _ch2_blocked_by_loops
    check("to_blocked", _ch2_contiguous("to_blocked", fn, reference), cases, reference, rtol=0, atol=0)


def check_from_blocked(fn: Callable[[np.ndarray, int, int], np.ndarray]) -> None:
    """Check ``fn(xb, block, channels)`` turns nChw{block}c back into NCHW.

    Fresh cases: 40 blocked tensors made by the reference loop of
    :func:`check_to_blocked` from fresh NCHW tensors, with the padding filled
    with NaN (so an answer that keeps padding channels is caught). Reference:
    a loop that copies channel ``c`` back from ``[:, c // block, :, :, c % block]``.
    The answer must be C-contiguous.

    Examples
    --------
    >>> from npukit.layouts import from_blocked
    >>> check_from_blocked(from_blocked)
    ✓ from_blocked: 40 fresh cases agree with the reference.
    """
    rng = _rng(1202)
    cases = []
    for _ in range(40):
        x, block = _ch2_tensor(rng), int(rng.choice(_CH2_BLOCKS))
        xb = _ch2_blocked_by_loops(x, block)
        c = x.shape[1]
        xb[:, -1, :, :, c - (xb.shape[1] - 1) * block:] = np.nan
        cases.append((xb, block, c))

    def reference(xb, block, channels):  # unblock channel by channel
        n, cb, h, w, _ = xb.shape
        out = np.empty((n, channels, h, w), dtype=xb.dtype)
        for ch in range(channels):
            out[:, ch] = xb[:, ch // block, :, :, ch % block]
        return out

    check("from_blocked", _ch2_contiguous("from_blocked", fn, reference), cases, reference, rtol=0, atol=0)


def _ch2_patches_by_loops(x: np.ndarray, k: int, stride: int) -> np.ndarray:
    n, c, h, w = x.shape
    ho, wo = (h - k) // stride + 1, (w - k) // stride + 1
    out = np.empty((n, ho, wo, c, k, k), dtype=x.dtype)
    for i in range(ho):
        for j in range(wo):
            out[:, i, j] = x[:, :, i * stride:i * stride + k, j * stride:j * stride + k]
    return out


def check_im2col_view(fn: Callable[[np.ndarray, int, int], np.ndarray]) -> None:
    """Check ``fn(x, k, stride)`` returns the k×k patches of NCHW ``x`` as a view.

    The answer must have shape ``(N, Ho, Wo, C, k, k)`` with
    ``Ho = (H - k) // stride + 1`` (no padding), hold
    ``x[n, c, i*stride + p, j*stride + q]`` at ``[n, i, j, c, p, q]``, share
    memory with ``x`` (``np.shares_memory``: no copy allowed) and be
    read-only (its patches overlap).

    Fresh cases: 30 float32 tensors with N 1–2, C 1–4, H and W 3–9, k 1–3,
    stride 1–3; half of them are "channels last" (NCHW shape, NHWC bytes, as
    ``x.transpose(0, 3, 1, 2)`` of an NHWC array), so the strides must come
    from ``x.strides``, not from its shape. Reference: two loops over output
    positions copying each patch.

    Examples
    --------
    >>> from npukit.layouts import im2col
    >>> check_im2col_view(lambda x, k, s: im2col(x, k, stride=s))
    ✓ im2col as a view: 30 fresh cases agree with the reference.
    """
    rng = _rng(1203)
    cases = []
    for i in range(30):
        n, c = int(rng.integers(1, 3)), int(rng.integers(1, 5))
        h, w = (int(v) for v in rng.integers(3, 10, size=2))
        if i % 2:  # channels last: NCHW shape, NHWC strides (they survive check()'s copy of the case)
            x = rng.standard_normal((n, h, w, c)).astype(np.float32).transpose(0, 3, 1, 2)
        else:
            x = rng.standard_normal((n, c, h, w)).astype(np.float32)
        cases.append((x, int(rng.integers(1, 4)), int(rng.integers(1, 4))))

    def learner(x, k, stride):
        got = fn(x, k, stride)
        if not isinstance(got, np.ndarray):
            raise AssertionError(f"im2col as a view: return a numpy.ndarray, got {type(got).__name__}")
        if not np.shares_memory(got, x):
            raise AssertionError(
                f"im2col as a view: for x of shape {x.shape}, k={k}, stride={stride} the result "
                "does not share memory with x; build it with as_strided, without copying"
            )
        if got.flags.writeable:
            raise AssertionError(
                "im2col as a view: the result is writeable; pass writeable=False to as_strided "
                "(the patches overlap, so one write would change several patches)"
            )
        want = _ch2_patches_by_loops(x, k, stride)
        if not x.flags.c_contiguous and got.shape == want.shape and not _same(got, want, 0, 0):
            raise AssertionError(
                f"im2col as a view: wrong patches for a channels-last x of shape {x.shape} with strides "
                f"{x.strides} (NHWC bytes), k={k}, stride={stride}; take the strides from x.strides, "
                "not from the shape"
            )
        return got

    def reference(x, k, stride):
        return _ch2_patches_by_loops(x, k, stride)

    check("im2col as a view", learner, cases, reference, rtol=0, atol=0)


def _ch2_transpose_is_free(shape, perm) -> bool:
    """Make the permuted tensor contiguous and ask NumPy whether it copied."""
    x = np.zeros(shape, dtype=np.float32)
    return bool(np.shares_memory(x, np.ascontiguousarray(x.transpose(perm))))


def check_stays_view(fn: Callable[[tuple, tuple], bool]) -> None:
    """Check ``fn(shape, perm) -> bool`` predicts when a layout change moves no bytes.

    For a C-contiguous tensor ``x`` of ``shape``, the answer is ``True`` when
    ``np.ascontiguousarray(x.transpose(perm))`` can return the transposed
    view itself (no copy), ``False`` when it must rearrange the bytes.

    Fresh cases: 60 shapes of 2–5 axes of length 1–4 (length-1 axes are
    frequent: a batch of one, one channel, a 1×1 map) with random
    permutations. Reference: NumPy itself, asked with ``np.shares_memory``.

    Examples
    --------
    >>> from npukit.layouts import conversion_is_free
    >>> check_stays_view(lambda s, p: conversion_is_free(s, "NCDHW"[:len(s)],
    ...                                                  "".join("NCDHW"[i] for i in p)))
    ✓ stays a view: 60 fresh cases agree with the reference.
    """
    rng = _rng(1204)
    cases = []
    for _ in range(60):
        ndim = int(rng.integers(2, 6))
        shape = tuple(int(d) for d in rng.choice([1, 1, 2, 3, 4], size=ndim))
        cases.append((shape, tuple(int(p) for p in rng.permutation(ndim))))

    def learner(shape, perm):
        got = fn(shape, perm)
        if not isinstance(got, (bool, np.bool_)):
            raise AssertionError(f"stays a view: for {shape}, {perm} return True or False, got {got!r}")
        return bool(got)

    check("stays a view", learner, cases, _ch2_transpose_is_free)


# ---- Chapter 3: Graphs and the roofline --------------------------------------


def _ch3_positions_by_sliding(size: int, k: int, stride: int, pad: int, dilation: int) -> int:
    """Slide a dilated window along one padded axis and count where it fits."""
    count, start = 0, -pad
    while start + dilation * (k - 1) <= size - 1 + pad:
        count += 1
        start += stride
    return count


def _ch3_macs_by_loops(x_shape: tuple, w_shape: tuple, stride: int, pad: int, dilation: int, group: int) -> int:
    """Count a 2-D convolution's MACs: windows found by sliding, taps by looping."""
    n, _, h, w = x_shape
    c_out, c_in_per_group, kh, kw = w_shape
    rows = _ch3_positions_by_sliding(h, kh, stride, pad, dilation)
    cols = _ch3_positions_by_sliding(w, kw, stride, pad, dilation)
    taps = 0
    for _ in range(c_in_per_group):
        for _ in range(kh):
            for _ in range(kw):
                taps += 1
    macs = 0
    for _ in range(n * c_out):
        for _ in range(rows):
            macs += cols * taps
    return macs


def check_conv_macs(fn: Callable[[tuple, tuple, int, int, int, int], int]) -> None:
    """Check ``fn(x_shape, w_shape, stride, pad, dilation, group) -> MACs`` of a 2-D Conv.

    ONNX Conv semantics: ``x_shape = (N, C_in, H, W)``, ``w_shape = (C_out,
    C_in / group, kH, kW)``, the same stride, padding (both sides) and
    dilation on both axes; taps that land on padding count (a dense kernel
    computes them). Fresh cases: 40 layers, a third depthwise (``group =
    C_in``, ``w_shape[1] = 1``), a third grouped, the rest dense; kernels 1–7,
    strides 1–3, pads 0–3, dilations 1–2. Reference: the output positions are
    found by sliding the window one step at a time, and MACs are counted by
    loops over output rows and taps.

    Examples
    --------
    >>> check_conv_macs(_ch3_macs_by_loops)
    ✓ conv MACs: 40 fresh cases agree with the reference.
    """
    rng = _rng(3101)
    cases = []
    for k in range(40):
        kind = k % 3
        kernel = int(rng.choice([1, 3, 3, 5, 7]))
        stride, pad, dilation = int(rng.integers(1, 4)), int(rng.integers(0, 4)), int(rng.integers(1, 3))
        reach = dilation * (kernel - 1) + 1
        h, w = (int(v) for v in rng.integers(max(1, reach - 2 * pad), 41, size=2))
        if kind == 0:  # depthwise
            c_in = int(rng.integers(1, 65))
            group, c_out = c_in, c_in * int(rng.choice([1, 1, 2]))
        elif kind == 1:  # grouped
            group = int(rng.choice([2, 4, 8]))
            c_in, c_out = group * int(rng.integers(1, 9)), group * int(rng.integers(1, 9))
        else:  # dense
            group, c_in, c_out = 1, int(rng.integers(1, 65)), int(rng.integers(1, 65))
        cases.append(((int(rng.integers(1, 3)), c_in, h, w), (c_out, c_in // group, kernel, kernel),
                      stride, pad, dilation, group))

    def learner(*case):
        got = fn(*case)
        if isinstance(got, (float, np.floating)) and float(got).is_integer():
            got = int(got)
        return got

    check("conv MACs", learner, cases, _ch3_macs_by_loops)


def check_attainable(fn: Callable[[float, float, float, float], float]) -> None:
    """Check ``fn(flops, nbytes, peak, bandwidth) -> attainable FLOP/s`` (the roofline).

    A kernel of ``flops`` FLOPs that moves ``nbytes`` bytes, on a machine of
    ``peak`` FLOP/s and ``bandwidth`` bytes/s. Fresh cases: 40 kernels from
    elementwise (intensity 0.1) to large GEMMs (intensity 1000), on machines
    from a laptop CPU to an NPU. Reference: the time bound — the kernel cannot
    finish before ``flops / peak`` nor before ``nbytes / bandwidth`` — so its
    rate is at most ``flops / max(flops / peak, nbytes / bandwidth)``.

    Examples
    --------
    >>> check_attainable(lambda f, b, p, bw: min(p, bw * f / b))
    ✓ attainable: 40 fresh cases agree with the reference.
    """
    rng = _rng(3102)
    cases = []
    for _ in range(40):
        flops = float(10 ** rng.uniform(5, 12))
        intensity = float(10 ** rng.uniform(-1, 3))
        cases.append((flops, flops / intensity, float(10 ** rng.uniform(10, 14)), float(10 ** rng.uniform(10, 11.5))))

    def reference(flops, nbytes, peak, bandwidth):
        return flops / max(flops / peak, nbytes / bandwidth)

    try:
        check("attainable", fn, cases, reference, rtol=1e-6, atol=0.0)
    except AssertionError as exc:  # say which side of the ridge the failing kernel is on
        for flops, nbytes, peak, bandwidth in cases:
            if f"({flops!r}, {nbytes!r}, {peak!r}, {bandwidth!r})" in str(exc):
                side = "memory" if flops / nbytes < peak / bandwidth else "compute"
                raise AssertionError(f"{exc}\n  (intensity {flops / nbytes:.3g} FLOP/byte, ridge "
                                     f"{peak / bandwidth:.3g} FLOP/byte: a {side}-bound kernel)") from None
        raise


def _ch3_conv_bn_reference(W, b, gamma, beta, mean, var, eps, x, group):
    """The unfolded Conv → BatchNormalization, run by onnx.reference."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    pads = [W.shape[2] // 2] * 4
    conv = ReferenceEvaluator(helper.make_node("Conv", ["x", "W", "b"], ["c"], group=group, pads=pads))
    c = conv.run(None, {"x": x, "W": W, "b": b})[0]
    bn = ReferenceEvaluator(helper.make_node("BatchNormalization", ["c", "g", "B", "m", "v"], ["y"], epsilon=eps))
    return bn.run(None, {"c": c, "g": gamma, "B": beta, "m": mean, "v": var})[0]


def check_fold_bn(fn: Callable[..., tuple[np.ndarray, np.ndarray]]) -> None:
    """Check ``fn(W, b, gamma, beta, mean, var, eps) -> (W_folded, b_folded)``.

    ``W`` is a float32 Conv weight ``(C_out, C_in / group, k, k)`` and ``b``
    its bias ``(C_out,)``; the other arrays are a BatchNormalization's
    parameters ``(C_out,)``. Fresh cases: 12 layers (dense, grouped and
    depthwise; 1×1 and 3×3; zero and non-zero biases; eps 1e-5 or 1e-3).
    Reference: onnx.reference runs the *unfolded* Conv → BatchNormalization
    on a fresh input; the learner's folded weights must give the same output
    from a single Conv (run by onnx.reference too), within 1e-4 relative and
    1e-5 absolute. On a mismatch the message describes the layer and says
    whether only the bias is off (the error is a constant per channel).

    Examples
    --------
    >>> def fold(W, b, gamma, beta, mean, var, eps):
    ...     s = gamma / np.sqrt(var + eps)
    ...     return W * s[:, None, None, None], (b - mean) * s + beta
    >>> check_fold_bn(fold)
    ✓ fold BN: 12 fresh cases agree with the reference.
    """
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    rng = _rng(3103)
    f32 = lambda a: np.asarray(a, dtype=np.float32)  # noqa: E731
    n = 0
    for k in range(12):
        group = (1, 2, 0)[k % 3]
        c_in = int(rng.integers(1, 5)) * (group or 1)
        if group == 0:  # depthwise
            group, c_out = c_in, c_in
        else:
            c_out = group * int(rng.integers(1, 5))
        ksize = (1, 3)[k % 2]
        W = f32(rng.standard_normal((c_out, c_in // group, ksize, ksize)))
        b = f32(np.zeros(c_out) if k % 4 == 0 else rng.standard_normal(c_out))
        gamma, beta = f32(rng.uniform(0.3, 2.0, c_out)), f32(rng.standard_normal(c_out))
        mean, var = f32(rng.standard_normal(c_out)), f32(rng.uniform(0.05, 3.0, c_out))
        eps = (1e-5, 1e-3)[k % 2]
        x = f32(rng.standard_normal((1, c_in, int(rng.integers(3, 8)), int(rng.integers(3, 8)))))
        layer = (f"{'depthwise' if group == c_in and group > 1 else 'grouped' if group > 1 else 'dense'} "
                 f"{ksize}×{ksize} layer, W {W.shape}, group {group}, eps {eps:g}, "
                 f"{'zero' if k % 4 == 0 else 'non-zero'} conv bias")
        want = _ch3_conv_bn_reference(W, b, gamma, beta, mean, var, eps, x, group)
        got = fn(*(copy.deepcopy(a) for a in (W, b, gamma, beta, mean, var, eps)))
        if not (isinstance(got, (tuple, list)) and len(got) == 2):
            what = f"a {type(got).__name__} of length {len(got)}" if isinstance(got, (tuple, list)) else repr(got)
            raise AssertionError(f"fold BN: return a pair (W_folded, b_folded), got {what[:80]}")
        w2, b2 = (f32(a) for a in got)
        if w2.shape != W.shape or b2.shape != b.shape:
            raise AssertionError(f"fold BN: for a {layer}: expected shapes {W.shape} and {b.shape}, "
                                 f"got {w2.shape} and {b2.shape}")
        conv = ReferenceEvaluator(helper.make_node("Conv", ["x", "W", "b"], ["y"], group=group,
                                                   pads=[ksize // 2] * 4))
        y = conv.run(None, {"x": x, "W": w2, "b": b2})[0]
        if not np.allclose(y, want, rtol=1e-4, atol=1e-5):
            diff = (y - want).astype(np.float64)
            per_channel = diff.reshape(c_out, -1)
            only_bias = bool(np.all(per_channel.std(axis=1) <= 1e-4 * (1 + np.abs(want).max())))
            hint = ("the error is a constant per output channel: W_folded looks right, b_folded is wrong"
                    if only_bias else "W_folded is wrong (the error varies across each output channel)")
            raise AssertionError(
                f"fold BN: wrong answer for a {layer}: your single Conv's output differs from "
                f"Conv → BatchNormalization by up to {np.abs(diff).max():.3g}; {hint}."
            )
        n += 1
    print(f"✓ fold BN: {n} fresh cases agree with the reference.")


def _ch3_peak_by_sweep(tensors) -> int:
    """At every step, add up the sizes of the tensors live then; keep the largest sum."""
    if not tensors:
        return 0
    peak = 0
    for step in range(min(f for _, f, _ in tensors), max(last for _, _, last in tensors) + 1):
        peak = max(peak, sum(size for size, first, last in tensors if first <= step <= last))
    return peak


def check_live_peak(fn: Callable[[list], int]) -> None:
    """Check ``fn(tensors) -> peak bytes`` for a list of ``(size, first, last)`` lifetimes.

    A tensor is live at every step from ``first`` (the node that writes it)
    to ``last`` (the last node that reads it), both included. The answer is
    the largest total size live at any one step: the memory no plan can go
    below. Fresh cases: 30 lists of 0–25 tensors over 0–30 steps, with
    one-step lifetimes, nested lifetimes and tensors that end exactly where
    another begins. Reference: a sweep that adds up the live sizes at every
    step.

    Examples
    --------
    >>> check_live_peak(_ch3_peak_by_sweep)
    ✓ live peak: 30 fresh cases agree with the reference.
    """
    rng = _rng(3104)
    cases = [([],), ([(64, 3, 3)],), ([(100, 0, 1), (50, 1, 2), (80, 2, 3)],)]
    for _ in range(27):
        tensors = []
        for _ in range(int(rng.integers(1, 26))):
            first = int(rng.integers(0, 30))
            tensors.append((int(rng.integers(1, 5000)), first, first + int(rng.integers(0, 8))))
        cases.append((tensors,))
    check("live peak", fn, cases, _ch3_peak_by_sweep)


# ---- Chapter 4: GEMM and tiling ----------------------------------------------


def _ch4_without(name: str, run: Callable[[], Any]) -> Any:
    """Run ``run()`` while ``npukit.gemm.<name>`` refuses to be called.

    The exercise is to write that function; a learner's answer that merely
    calls the library's version would teach nothing, so during the check the
    module attribute is swapped for a stub that fails with a clear message.
    """
    from . import gemm

    real = getattr(gemm, name)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"this exercise asks you to write {name} yourself; do not call npukit.gemm.{name}")

    setattr(gemm, name, refuse)
    try:
        return run()
    finally:
        setattr(gemm, name, real)


class _Ch4Watched(np.ndarray):
    """An array that logs the shapes of every matrix product it takes part in.

    Covers ``@``, ``np.matmul``, ``np.dot`` and ``.dot``; the checker uses the
    log to make sure that no product is larger than one tile.
    """

    log: list = []

    @staticmethod
    def _plain(xs: Any) -> list:
        return [np.asarray(x) if isinstance(x, _Ch4Watched) else x for x in xs]

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        inputs = tuple(self._plain(inputs))
        if ufunc is np.matmul and method == "__call__":
            _Ch4Watched.log.append((np.shape(inputs[0]), np.shape(inputs[1])))
        if "out" in kwargs:
            kwargs["out"] = tuple(self._plain(kwargs["out"]))
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is np.dot:
            _Ch4Watched.log.append((np.shape(args[0]), np.shape(args[1])))
        return super().__array_function__(func, types, args, kwargs)

    def dot(self, other: Any, out: Any = None) -> Any:  # type: ignore[override]
        return np.dot(self, other, out=out)


def check_tiled_matmul(fn: Callable[[np.ndarray, np.ndarray, tuple], np.ndarray]) -> None:
    """Check ``fn(A, B, tile)`` computes ``A @ B`` tile by tile, for any shapes and tiles.

    Fresh cases: 12 float64 and float32 products with every dimension 1–37,
    tiles 1–40 (so edge tiles are ragged, and some tiles are larger than the
    whole matrix), plus one 1×1×1 tile. Reference: ``numpy.matmul``. The
    result must keep the inputs' dtype, and every matrix product the function
    makes (``@``, ``np.matmul``, ``np.dot``) must be of an A-tile of at most
    ``bm×bk`` by a B-tile of at most ``bk×bn``: one call ``A @ B`` on the
    whole matrices is not a tiled product, and calling
    ``npukit.gemm.tiled_matmul`` is refused while the check runs.
    Prints one line on success; raises ``AssertionError`` naming the input
    otherwise (this holds for every chapter-4 checker).

    Examples
    --------
    >>> from npukit.gemm import tiled_matmul
    >>> check_tiled_matmul(tiled_matmul)
    ✓ tiled matmul: 13 fresh cases agree with the reference.
    """
    rng = _rng(4101)
    cases = []
    for k in range(12):
        M, N, K = (int(v) for v in rng.integers(1, 38, size=3))
        tile = tuple(int(v) for v in rng.integers(1, 41, size=3))
        dtype = np.float64 if k % 2 == 0 else np.float32
        cases.append((rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype), tile))
    cases.append((rng.standard_normal((3, 5)), rng.standard_normal((5, 4)), (1, 1, 1)))

    def learner(A: np.ndarray, B: np.ndarray, tile: tuple) -> Any:
        bm, bn, bk = tile
        _Ch4Watched.log = []
        got = fn(A.view(_Ch4Watched), B.view(_Ch4Watched), tile)
        for sa, sb in _Ch4Watched.log:
            if len(sa) == 2 and len(sb) == 2 and (sa[0] > bm or sa[1] > bk or sb[1] > bn):
                raise AssertionError(
                    f"tiled matmul: with tile (bm, bn, bk) = {tile} every product must be of an A-tile of at "
                    f"most {bm}×{bk} by a B-tile of at most {bk}×{bn}, but your function multiplied a {sa} by "
                    f"a {sb} array (A is {A.shape}, B is {B.shape}). Multiply one tile at a time."
                )
        if isinstance(got, np.ndarray):
            got = np.asarray(got)
            if got.dtype != A.dtype:
                raise AssertionError(f"tiled matmul: the result should keep the inputs' dtype {A.dtype}, got {got.dtype}")
            if got.shape == (A.shape[0], B.shape[1]):
                want = A @ B
                bad = np.argwhere(~np.isclose(got, want, rtol=1e-4, atol=1e-5))
                if len(bad):
                    i, j = (int(v) for v in bad[0])
                    (M, K), N = A.shape, B.shape[1]
                    hints = []
                    if i >= M // bm * bm:
                        hints.append(f"row {i} is in the last, ragged row-tile (rows {M // bm * bm}–{M - 1}; bm = {bm})")
                    if j >= N // bn * bn:
                        hints.append(f"column {j} is in the last, ragged column-tile (columns {N // bn * bn}–{N - 1}; bn = {bn})")
                    hint = "; ".join(hints) or f"check the sum over k (K = {K}, bk = {bk})"
                    raise AssertionError(
                        f"tiled matmul: wrong answer for A of shape {A.shape}, B of shape {B.shape}, tile {tile}: "
                        f"C[{i}, {j}] is {got[i, j]:.4g}, expected {want[i, j]:.4g}. Hint: {hint}."
                    )
        return got

    def reference(A: np.ndarray, B: np.ndarray, tile: tuple) -> np.ndarray:
        return np.matmul(A, B)

    _ch4_without("tiled_matmul", lambda: check("tiled matmul", learner, cases, reference, rtol=1e-4, atol=1e-5))


def _ch4_walk(M: int, N: int, K: int, tile: tuple, order: str, itemsize: int) -> dict[str, int]:
    """Bytes each operand moves in a tiled GEMM, by walking its loop nest step by step.

    The model of chapter 4: one buffer slot per operand; a tile needed by two
    consecutive steps stays, any other is loaded; a C-tile is written out when
    it leaves the buffer (and at the end) and read back only if it was written
    before. Edge tiles move only their real bytes. Returns the bytes of A and
    B read, of C read back and of C written.
    """
    size = {"m": M, "n": N, "k": K}
    step = dict(zip("mnk", tile))

    def nbytes(r: str, c: str, at: dict) -> int:  # the real bytes of the tile at (at[r], at[c])
        return min(step[r], size[r] - at[r]) * min(step[c], size[c] - at[c]) * itemsize

    held: dict[str, Any] = {"A": None, "B": None, "C": None}
    moved = {"A": 0, "B": 0, "C read back": 0, "C written": 0}
    in_dram: set = set()
    loops = [range(0, size[d], step[d]) for d in order]
    for x, y, z in ((x, y, z) for x in loops[0] for y in loops[1] for z in loops[2]):
        at = dict(zip(order, (x, y, z)))
        for name, (r, c) in (("A", "mk"), ("B", "kn")):
            if held[name] != (at[r], at[c]):
                held[name] = (at[r], at[c])
                moved[name] += nbytes(r, c, at)
        if held["C"] != (at["m"], at["n"]):
            if held["C"] is not None:  # evict: write the partial sums out
                old = dict(zip("mn", held["C"]))
                moved["C written"] += nbytes("m", "n", old)
                in_dram.add(held["C"])
            if (at["m"], at["n"]) in in_dram:  # coming back: read them in
                moved["C read back"] += nbytes("m", "n", at)
            held["C"] = (at["m"], at["n"])
    moved["C written"] += nbytes("m", "n", dict(zip("mn", held["C"])))
    return moved


def _ch4_schedule_bytes(M: int, N: int, K: int, tile: tuple, order: str, itemsize: int) -> tuple[int, int]:
    """(reads, writes) of a tiled GEMM, from :func:`_ch4_walk`."""
    moved = _ch4_walk(M, N, K, tile, order, itemsize)
    return moved["A"] + moved["B"] + moved["C read back"], moved["C written"]


def check_schedule_traffic(fn: Callable[[int, int, int, tuple, str, int], tuple[int, int]]) -> None:
    """Check ``fn(M, N, K, tile, order, itemsize) -> (reads, writes)`` in bytes.

    Fresh cases: 40 schedules with dimensions 1–24, tiles 1–26 (ragged edges
    and tiles that cover a whole dimension included), every loop order and
    itemsizes 1, 2 and 4. Reference: a step-by-step walk of the loop nest
    that loads a tile whenever the previous step did not hold it (the model
    of chapter 4; the same itemsize for A, B and C). A wrong answer is
    reported with the expected bytes of each operand. Calling
    ``npukit.gemm.traffic`` is refused while the check runs.

    Examples
    --------
    >>> from npukit.gemm import traffic
    >>> def by_model(M, N, K, tile, order, itemsize):
    ...     t = traffic(M, N, K, tile, order, itemsize)
    ...     return t.reads, t.writes
    >>> check_schedule_traffic(by_model)
    ✓ schedule traffic: 40 fresh cases agree with the reference.
    """
    rng = _rng(4102)
    orders = ("mnk", "mkn", "nmk", "nkm", "kmn", "knm")
    cases = []
    for k in range(40):
        M, N, K = (int(v) for v in rng.integers(1, 25, size=3))
        tile = tuple(int(v) for v in rng.integers(1, 27, size=3))
        cases.append((M, N, K, tile, orders[k % 6], int(rng.choice([1, 2, 4]))))

    def learner(*case: Any) -> Any:
        got = fn(*case)
        got = tuple(int(v) for v in got) if isinstance(got, (tuple, list)) else got
        want = _ch4_schedule_bytes(*case)
        if got != want:
            moved = _ch4_walk(*case)
            M, N, K, tile, order, itemsize = case
            raise AssertionError(
                f"schedule traffic: wrong answer for M={M}, N={N}, K={K}, tile={tile}, order={order!r}, "
                f"itemsize={itemsize}.\n  expected: {want} = (A {moved['A']} + B {moved['B']} + C read back "
                f"{moved['C read back']}, C written {moved['C written']})\n  got:      {got}\n"
                "  Things to check: edge tiles move only their real elements; a loop that runs once (tile >= size) "
                "evicts nothing; C is written every time it leaves the buffer, including at the end, and read "
                "back every time it returns."
            )
        return got

    _ch4_without("traffic", lambda: check("schedule traffic", learner, cases, _ch4_schedule_bytes))


def _ch4_needs(M: int, N: int, K: int, tile: tuple, itemsize: int) -> int:
    """Buffer bytes for one A-, B- and C-tile, each clipped to the matrix."""
    bm, bn, bk = min(tile[0], M), min(tile[1], N), min(tile[2], K)
    return (bm * bk + bk * bn + bm * bn) * itemsize


class _Ch4Optimal:
    """The answer to "best tile": every tile that fits and moves the fewest bytes."""

    def __init__(self, M: int, N: int, K: int, buffer_bytes: int, itemsize: int) -> None:
        self.case = (M, N, K, buffer_bytes, itemsize)
        self.scored = {}
        for tile in ((a, b, c) for a in range(1, M + 1) for b in range(1, N + 1) for c in range(1, K + 1)):
            if _ch4_needs(M, N, K, tile, itemsize) <= buffer_bytes:
                self.scored[tile] = sum(_ch4_schedule_bytes(M, N, K, tile, "mnk", itemsize))
        self.best = min(self.scored.values())

    def judge(self, got: Any) -> bool:
        """True if ``got`` is a best tile; otherwise raise saying what is wrong with it."""
        M, N, K, buffer_bytes, itemsize = self.case
        where = f"best tile: wrong answer for M={M}, N={N}, K={K}, buffer_bytes={buffer_bytes}, itemsize={itemsize}"
        example = min(t for t, v in self.scored.items() if v == self.best)
        try:
            tile = tuple(int(v) for v in got)
        except (TypeError, ValueError):
            raise AssertionError(f"{where}: expected a tile (bm, bn, bk) of three integers, got {got!r}") from None
        if len(tile) != 3 or min(tile) < 1:
            raise AssertionError(f"{where}: expected a tile (bm, bn, bk) of three positive integers, got {got!r}")
        clipped = tuple(min(t, d) for t, d in zip(tile, (M, N, K)))  # a tile larger than the matrix is the matrix
        need = _ch4_needs(M, N, K, tile, itemsize)
        if need > buffer_bytes:
            raise AssertionError(
                f"{where}: your tile {tile} needs {need} bytes for one A-, B- and C-tile, more than the buffer "
                f"(a best tile is {example}, moving {self.best} bytes)"
            )
        if self.scored[clipped] != self.best:
            raise AssertionError(
                f"{where}: your tile {tile} fits but moves {self.scored[clipped]} bytes; the fewest possible is "
                f"{self.best} bytes, e.g. with tile {example}"
            )
        return True


def check_best_tile(fn: Callable[[int, int, int, int, int], tuple[int, int, int]]) -> None:
    """Check ``fn(M, N, K, buffer_bytes, itemsize) -> (bm, bn, bk)`` for loop order mnk.

    Fresh cases: 8 GEMMs with dimensions 2–9 and buffers from just above a
    1×1×1 tile to about the whole problem. The answer must fit the buffer
    (one A-, B- and C-tile of ``itemsize``-byte elements, each tile clipped
    to the matrix) and move as few bytes as the best of an exhaustive search
    over every tile, with the traffic counted by walking the loop nest. Any
    of several equally good tiles is accepted. Calling
    ``npukit.gemm.best_tile`` is refused while the check runs.

    Examples
    --------
    >>> from npukit.gemm import best_tile
    >>> check_best_tile(best_tile)
    ✓ best tile: 8 fresh cases agree with the reference.
    """
    rng = _rng(4103)
    cases = []
    for _ in range(8):
        M, N, K = (int(v) for v in rng.integers(2, 10, size=3))
        itemsize = int(rng.choice([1, 4]))
        whole = (M * K + K * N + M * N) * itemsize
        cases.append((M, N, K, int(rng.integers(3 * itemsize, whole + 1)), itemsize))
    _ch4_without("best_tile", lambda: check("best tile", fn, cases, _Ch4Optimal, compare=lambda got, want: want.judge(got)))


# ---- Student edition ---------------------------------------------------------

_SOLUTION_RE = re.compile(
    r"^(?P<indent>[ \t]*)" + re.escape(BEGIN) + r"[^\n]*\n.*?^[ \t]*" + re.escape(END) + r"[^\n]*(\n|$)",
    re.S | re.M,
)


def strip_solutions(source: str) -> str:
    """Replace each ``### BEGIN SOLUTION`` … ``### END SOLUTION`` block.

    The block, markers included, becomes ``raise NotImplementedError()`` at
    the indentation of the ``BEGIN`` marker.

    Raises
    ------
    ValueError
        If the markers are unbalanced.

    Examples
    --------
    >>> src = "def f(x):\\n    ### BEGIN SOLUTION\\n    return 2 * x\\n    ### END SOLUTION\\n"
    >>> print(strip_solutions(src))
    def f(x):
        raise NotImplementedError()
    <BLANKLINE>
    """
    if source.count(BEGIN) != source.count(END):
        raise ValueError("source has unbalanced '### BEGIN SOLUTION' / '### END SOLUTION' markers")
    out = _SOLUTION_RE.sub(lambda m: f"{m.group('indent')}raise NotImplementedError()\n", source)
    if BEGIN in out or END in out:
        raise ValueError("source has a '### END SOLUTION' before its '### BEGIN SOLUTION'")
    return out


def make_student_notebook(nb: dict) -> dict:
    """Return a student copy of a notebook (nbformat JSON as a dict).

    Cells tagged ``solution`` lose their solutions (and the ``hide-input`` tag
    that collapses them in the book); every code cell loses its outputs and
    execution count; notebook-level widget state is removed.

    Raises
    ------
    ValueError
        If a ``solution`` cell has no markers, or a cell without the tag has
        markers (a solution that would leak into the student edition).
    """
    nb = copy.deepcopy(nb)
    nb.get("metadata", {}).pop("widgets", None)
    for i, cell in enumerate(nb.get("cells", [])):
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        tags = cell.get("metadata", {}).get("tags", [])
        if "solution" in tags:
            if BEGIN not in src:
                raise ValueError(f"cell {i} is tagged 'solution' but has no '{BEGIN}' marker")
            src = strip_solutions(src)
            # the book collapses solutions ("hide-input"); the learner's cell stays open
            cell["metadata"]["tags"] = [t for t in tags if t != "hide-input"]
        elif BEGIN in src or END in src:
            raise ValueError(f"cell {i} has solution markers but is not tagged 'solution'")
        cell["source"] = src
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return nb


def make_student_edition(src: str | pathlib.Path, out: str | pathlib.Path) -> list[pathlib.Path]:
    """Write the student edition of every lab notebook in ``src`` to ``out``.

    Parameters
    ----------
    src : path
        A notebook, or a folder whose ``*.ipynb`` files are labs.
    out : path
        The output folder (created if needed).

    Returns
    -------
    list of pathlib.Path
        The notebooks written.

    Raises
    ------
    FileNotFoundError
        If ``src`` does not exist or holds no notebooks.
    """
    src, out = pathlib.Path(src), pathlib.Path(out)
    if not src.exists():
        raise FileNotFoundError(f"src {str(src)!r} does not exist")
    paths = [src] if src.is_file() else sorted(src.glob("*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"src {str(src)!r} holds no .ipynb notebooks")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for p in paths:
        nb = json.loads(p.read_text(encoding="utf-8"))
        target = out / p.name
        target.write_text(json.dumps(make_student_notebook(nb), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(target)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m npukit.teach student labs -o student/``."""
    parser = argparse.ArgumentParser(prog="python -m npukit.teach", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    st = sub.add_parser("student", help="write the student edition of the labs")
    st.add_argument("src", help="a lab notebook or a folder of them")
    st.add_argument("-o", "--out", default="student", help="output folder (default: student/)")
    args = parser.parse_args(argv)
    written = make_student_edition(args.src, args.out)
    for p in written:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
