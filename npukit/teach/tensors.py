"""Checkers for lab 1, "Tensors are memory" (labs/01_tensors.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and compares
it with an independent reference; see :mod:`npukit.teach.core`. While the
learner's function runs, :mod:`npukit.tensors` (which implements these
exercises), this module and the NumPy calls that would answer the question for
the learner (allocating an array to read its strides, ``np.shares_memory`` in
a "predict, do not run" exercise) are off limits.
"""

from __future__ import annotations

import builtins
from typing import Any, Callable, Sequence

import numpy as np

from .core import CheckFailed, _fresh_rng, _rng, _same, check, learner_call


_DTYPES = ("int8", "uint8", "float16", "int16", "float32", "int32", "float64", "int64", "complex128")


#: Lab 1's "view or copy?" exercise, one operation of each of its fifteen forms,
#: applied to an NCHW float32 batch ``x`` (C-contiguous, every axis of length
#: >= 2). The check asks about operations of these forms with other indices,
#: steps, axes, dtypes and numbers, drawn afresh each run (:func:`_view_or_copy_ops`),
#: so an answer must follow the rules, not a table of these strings.
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

#: What a learner's function may not run in a "predict, do not measure" exercise: running the
#: expression, building the array and asking NumPy whether memory is shared.
_MEASURING = (np.shares_memory, np.may_share_memory, np.lib.stride_tricks.as_strided, builtins.eval, builtins.exec,
              builtins.compile, np.empty, np.zeros, np.ones, np.full, np.ndarray.reshape, np.reshape,
              np.ascontiguousarray, np.ndarray)   # np.ndarray: constructing one (np.ndarray(shape, buffer=, strides=))


def _library() -> tuple:
    from .. import tensors

    return (tensors,)


def _batch(rng: np.random.Generator) -> np.ndarray:
    n, c = int(rng.integers(2, 5)), int(rng.integers(3, 5))
    h, w = (int(v) for v in rng.integers(4, 9, size=2))
    return rng.random((n, c, h, w), dtype=np.float32)


def _strides_reference(shape: tuple, itemsize: int, order: str) -> tuple:
    """NumPy's strides of a fresh array of that shape whose elements have that itemsize."""
    return np.empty(shape, dtype=np.dtype((np.void, itemsize)), order=order).strides


def _strides_hint(got: Any, want: tuple, shape: tuple, itemsize: int, order: str) -> str | None:
    if itemsize > 1 and _same(got, tuple(s // itemsize for s in want), 0, 0):
        return "these are strides in elements; strides count bytes (multiply by itemsize)."
    other = "FC"[order == "F"]
    if _same(got, _strides_reference(shape, itemsize, other), 0, 0):
        return f"that is the answer for order {other!r}."
    return None


def check_strides(fn: Callable[[tuple, int, str], Sequence[int]]) -> None:
    """Check ``fn(shape, itemsize, order)`` against NumPy's strides of a fresh array.

    Fresh cases: 40 shapes with 0–4 axes of length 1–9 (length-1 axes
    included, zero-length axes left out), the itemsizes of common dtypes
    (1–16 bytes), orders "C" and "F" alternately. Reference:
    ``np.empty(shape, dtype, order=order).strides`` for a dtype of that
    itemsize. The learner's function may not allocate an array to read its
    strides (``np.empty``, ``np.zeros``, ``np.ones``, ``np.full``,
    ``np.arange``, ``as_strided``) nor call :mod:`npukit.tensors`.
    Prints one line on success; raises :class:`~npukit.teach.core.CheckFailed`
    naming the input otherwise (this holds for every chapter-1 checker). A
    hint is added only for an answer that is exactly strides in elements, or
    the other order's strides.

    Examples
    --------
    >>> def in_elements(shape, itemsize, order="C"):   # a common slip: strides counted in elements
    ...     strides, step = [0] * len(shape), 1
    ...     for k in (reversed(range(len(shape))) if order == "C" else range(len(shape))):
    ...         strides[k], step = step, step * shape[k]
    ...     return tuple(strides)
    >>> check_strides(in_elements)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: strides: wrong answer for input ((8,), 4, 'C').
      expected (4,), got (1,).
      Hint: these are strides in elements; strides count bytes (multiply by itemsize).
    """
    rng = _rng(1101)
    cases = []
    for k in range(40):
        shape = tuple(int(d) for d in rng.integers(1, 10, size=int(rng.integers(0, 5))))
        itemsize = np.dtype(str(rng.choice(_DTYPES))).itemsize
        cases.append((shape, itemsize, "CF"[k % 2]))
    allocate = (np.empty, np.zeros, np.ones, np.full, np.arange, np.empty_like, np.zeros_like, np.ones_like,
                np.ndarray.reshape, np.lib.stride_tricks.as_strided, np.ndarray)
    check("strides", fn, cases, _strides_reference, hint=_strides_hint, forbid=_library() + allocate)


def _permutation(rng: np.random.Generator, axes: tuple[int, ...], identity: bool) -> str:
    order = list(axes)
    while not identity and order == list(axes):
        order = [int(a) for a in rng.permutation(axes)]
    return ", ".join(map(str, order))


def _view_or_copy_ops(rng: np.random.Generator) -> list[str]:
    """One operation of each form of :data:`VIEW_OR_COPY_OPS`, with fresh numbers, in a random order.

    For four forms the answer depends on the numbers drawn (the identity transpose, a step of 1, astype
    to x's own dtype), so knowing each form's answer once is not enough either. Two draws are limited, as
    the lab says, so that the string always decides: a transpose before a reshape keeps axis 0 first, and a
    crop before a reshape has the same step on both axes. Outside these, the answer depends on x's shape
    (``x[..., ::1, ::2].reshape(len(x), -1)`` is a view for an even width,
    ``x.transpose(3, 0, 1, 2).reshape(len(x), -1)`` when the width is the batch size).
    """
    pick = lambda *options: options[int(rng.integers(len(options)))]  # noqa: E731
    ops = [
        f"x[{pick(0, 1)}]",
        f"x[:, {pick(0, 1, 2)}]",
        f"x[:, ::-{pick(1, 2)}]",
        "x[:, [" + ", ".join(str(int(i)) for i in rng.choice(3, size=int(rng.integers(2, 4)))) + "]]",
        f"x.transpose({_permutation(rng, (0, 1, 2, 3), identity=False)})",
        f"np.ascontiguousarray(x.transpose({_permutation(rng, (0, 1, 2, 3), identity=rng.random() < 0.35)}))",
        pick("x.reshape(len(x), -1)", "x.reshape(-1)", "x.reshape(len(x), x.shape[1], -1)"),
        f"x.transpose(0, {_permutation(rng, (1, 2, 3), identity=rng.random() < 0.35)}).reshape(len(x), -1)",
        f"x[..., ::{pick(1, 2, 3)}, ::{pick(2, 3)}]",
        "x[..., ::{s}, ::{s}].reshape(len(x), -1)".format(s=pick(1, 2, 2, 3)),
        f"x.astype(np.{pick('float32', 'float64', 'float16', 'int32')})",
        f"x.astype(np.{pick('float32', 'float32', 'float64', 'int32', 'float16')}, copy=False)",
        f"x[x > {pick(0.25, 0.5, 0.75)}]",
        f"x.view(np.{pick('uint32', 'int32', 'float32', 'uint8', 'int16')})",
        f"x {pick('+', '*', '-')} {pick(0, 1, 2)}",
    ]
    rng.shuffle(ops)
    return ops


def _actually_a_view(op: str, seed: int = 1102) -> bool:
    """Perform ``op`` on three fresh batches; True if the result shares x's memory."""
    rng = _rng(seed)
    answers = set()
    for _ in range(3):
        x = _batch(rng)
        y = eval(op, {"np": np, "x": x})  # the check's own strings (_view_or_copy_ops)
        answers.add(bool(np.shares_memory(x, y)))
    if len(answers) != 1:  # a sanity check on the exercise itself
        raise RuntimeError(f"{op!r} is a view for some shapes and a copy for others")
    return answers.pop()


_VIEW_RULES = (
    "Go through them again with chapter 1's rules: an integer index, a slice (any step) and a transpose make "
    "a view (a new start, shape and strides over the same bytes); a list of indices or a boolean mask is "
    "fancy indexing and copies; reshape is a view only when the new shape can be walked with strides over the "
    "same bytes; astype copies unless copy=False and the dtype is unchanged; view(dtype) reads the same bytes "
    "as another type; arithmetic makes a new array; np.ascontiguousarray copies unless the array already is "
    "C-contiguous."
)


def check_view_or_copy(fn: Callable[[str], bool]) -> None:
    """Check ``fn(op) -> bool`` predicts whether each operation returns a view.

    The operations are one of each form of :data:`VIEW_OR_COPY_OPS`, with
    indices, steps, axes, dtypes and numbers drawn afresh on every run (from
    the grading seed when grading), in a random order. For each, the
    reference performs it on three fresh NCHW float32 batches of random sizes
    and asks ``np.shares_memory(x, result)``. A prediction of ``True`` means
    "a view of ``x``'s memory", ``False`` "a copy". Predicting is the
    exercise: the learner's function may not run the expressions (``eval``,
    ``exec``), build an array to try them on, nor ask ``np.shares_memory``.

    The answers are yes/no, so a message naming the wrong one would give its
    answer away (flipping the named answers would pass in a few runs without
    any reasoning). A failure therefore says only that not every prediction is
    right, and repeats the rules to apply; a prediction that is not ``True``
    or ``False`` is named.

    Examples
    --------
    >>> check_view_or_copy(lambda op: "[" not in op and "+" not in op)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: view or copy: your predictions are not all right. ...
    """
    ops = _view_or_copy_ops(_fresh_rng(1103))   # other operations, in another order, every run
    said = {}
    for op in ops:
        got = learner_call("view or copy", fn, op, forbid=_library() + _MEASURING)
        if not isinstance(got, (bool, np.bool_)):
            raise CheckFailed(f"view or copy: for {op!r} return True (a view) or False (a copy), got {got!r}")
        said[op] = bool(got)
    truth = {op: _actually_a_view(op) for op in ops}
    if said != truth:
        raise CheckFailed(f"view or copy: your predictions are not all right. The check does not say which: each "
                          f"is a yes/no question, so naming it would give its answer away. {_VIEW_RULES}")
    print(f"✓ view or copy: {len(ops)} fresh cases agree with the reference.")


def check_aligned_empty(fn: Callable[[tuple, Any, int], np.ndarray]) -> None:
    """Check ``fn(shape, dtype, alignment)`` returns a usable, aligned, empty array.

    Fresh cases: 30 shapes with 0–3 axes of length 1–6, common dtypes, and
    alignments 8–4096 bytes. For each, every array returned so far is kept
    alive (so a lucky allocator cannot hand back one address over and over),
    and the result must be a C-contiguous, writable ``numpy.ndarray`` with
    the asked shape and dtype whose data address is a multiple of
    ``alignment``, that keeps a pattern written into all its elements, and
    that overlaps none of the earlier results. :mod:`npukit.tensors` (whose
    ``aligned_empty`` is this exercise) may not be called.

    Examples
    --------
    >>> check_aligned_empty(lambda shape, dtype, alignment: np.empty(shape, dtype))   # malloc's 16 bytes only
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: aligned_empty(...): address % ... = ..., not 0
    """
    rng = _rng(1104)
    cases = []
    for _ in range(30):
        shape = tuple(int(d) for d in rng.integers(1, 7, size=int(rng.integers(0, 4))))
        cases.append((shape, np.dtype(str(rng.choice(_DTYPES))), 1 << int(rng.integers(3, 13))))
    kept: list[np.ndarray] = []

    def reference(shape, dtype, alignment):
        return {"shape": shape, "dtype": dtype, "alignment": alignment}

    def compare(got, want):
        case = f"aligned_empty({want['shape']}, {want['dtype']}, {want['alignment']})"
        if type(got) is not np.ndarray:
            raise CheckFailed(f"{case} returned {type(got).__name__}, not a numpy.ndarray")
        if got.shape != want["shape"] or got.dtype != want["dtype"]:
            raise CheckFailed(f"{case} returned shape {got.shape} dtype {got.dtype}, "
                              f"expected shape {want['shape']} dtype {want['dtype']}")
        address = got.__array_interface__["data"][0]
        if address % want["alignment"]:
            raise CheckFailed(f"{case}: address % {want['alignment']} = {address % want['alignment']}, not 0")
        if not (got.flags.c_contiguous and got.flags.writeable):
            raise CheckFailed(f"{case}: the result must be C-contiguous and writable")
        pattern = np.arange(got.size).reshape(got.shape).astype(got.dtype)
        got[...] = pattern
        if any(np.shares_memory(got, k) for k in kept):
            raise CheckFailed(f"{case}: the result overlaps an array returned earlier")
        kept.append(got)
        if not np.array_equal(got, pattern):
            raise CheckFailed(f"{case}: values written into the result did not read back")
        return True

    check("aligned_empty", fn, cases, reference, compare=compare, forbid=_library())


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
    strides, reshape it, and ask ``np.shares_memory``. The learner's function
    reasons from the three tuples: building the array (``as_strided``) or
    asking ``np.shares_memory`` is refused.

    Examples
    --------
    >>> check_reshape_view(lambda shape, strides, new_shape: True)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: reshape without a copy: wrong answer for input (...).
      expected False, got True.
    """
    cases = _reshape_cases(_rng(1105), 60)

    def compare(got, want):
        if not isinstance(got, (bool, np.bool_)):
            raise CheckFailed(f"reshape without a copy: return True or False, got {got!r}")
        return bool(got) == want

    check("reshape without a copy", fn, cases, _reshape_is_view, compare=compare, forbid=_library() + _MEASURING)


# ---- exercise 6: your own batch, by hand (a per-student variant) ----------------------------------------


def _whole_numbers(name: str, what: str, got: Any, n: int) -> tuple[int, ...]:
    """``got`` as a tuple of ``n`` Python ints, or CheckFailed saying what was expected (never the answer)."""
    if (not isinstance(got, (tuple, list)) or len(got) != n
            or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in got)):
        raise CheckFailed(f"{name}: {what} must be a tuple of {n} whole numbers of bytes, got {got!r}")
    return tuple(int(v) for v in got)


def check_my_batch(strides: Any, offset: Any, f_strides: Any, mine: Any) -> None:
    """Check the strides and the element offset the learner worked out for their own batch (lab 1, exercise 6).

    ``mine`` is the lab's :class:`npukit.teach.variants.Variant` for ``"01_tensors"``: a channels-last batch
    (``shape``, ``dtype``) and an element ``index`` drawn from the student's id, or chapter 1's exercise
    "Strides by hand" without one. The checker draws the variant again itself
    (:func:`npukit.teach.variants.variant`, so under a grader the grader's id decides, whatever ``mine``
    holds) and compares, exactly, ``strides`` with NumPy's strides of a fresh C-contiguous array of that
    shape and dtype, ``offset`` with the distance in bytes between the element's address and the first
    element's in that array, and ``f_strides`` with NumPy's strides of the F-ordered array. A failure says
    what is wrong, not the answer. See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Raises
    ------
    NotAttempted
        If an answer is still ``None`` or ``...``.
    CheckFailed
        If an answer is not of the right kind, or wrong.
    TypeError
        If ``mine`` is not a Variant of lab 1.

    Examples
    --------
    >>> import os
    >>> from npukit.teach import variants
    >>> os.environ.pop("NPUKIT_STUDENT", None) and None
    >>> check_my_batch((3072, 96, 3, 1), 6646, (1, 8, 256, 8192), variants.variant("01_tensors"))  # in elements
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: your batch: (3072, 96, 3, 1) are not the C-order strides of a (8, 32, 32, 3) float16 array. These are strides in elements; strides count bytes (multiply by the itemsize).
    """
    from . import variants
    from .core import NotAttempted

    name = "your batch"
    _check_variant(mine, "01_tensors", "lab 1")
    v = variants.variant("01_tensors", mine.entered)
    if any(a is None or a is Ellipsis for a in (strides, offset, f_strides)):
        raise NotAttempted(f"{name}: not attempted yet (set my_strides, my_offset and my_f_strides).")
    shape, dtype, index = tuple(v.numbers["shape"]), np.dtype(v.numbers["dtype"]), tuple(v.numbers["index"])
    got = _whole_numbers(name, "my_strides", strides, len(shape))
    got_f = _whole_numbers(name, "my_f_strides", f_strides, len(shape))
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise CheckFailed(f"{name}: my_offset must be a whole number of bytes, got {offset!r}")
    a, f = np.empty(shape, dtype), np.empty(shape, dtype, order="F")      # the reference: NumPy's own arrays
    want, want_f = tuple(a.strides), tuple(f.strides)
    element = a[tuple(slice(i, i + 1) for i in index)]
    want_offset = element.ctypes.data - a.ctypes.data
    what = f"a {shape} {dtype.name} array"

    def why(answer: tuple, other: tuple) -> str:
        if answer == tuple(s // dtype.itemsize for s in (want if other is want_f else want_f)):
            return " These are strides in elements; strides count bytes (multiply by the itemsize)."
        if answer == other:
            return " That is the other order's answer."
        if answer == tuple(reversed(other)) or sorted(answer) == sorted(other):
            return " In C order the last axis steps by one element; in F order the first."
        return " Step over everything to the right of an axis (C order) or to its left (F order), in bytes."

    if got != want:
        raise CheckFailed(f"{name}: {got} are not the C-order strides of {what}.{why(got, want_f)}")
    if int(offset) != want_offset:
        hint = (" That is in elements; give it in bytes." if int(offset) * dtype.itemsize == want_offset else
                " That uses the F-order strides; the array is C-contiguous." if int(offset) == sum(
                    i * s for i, s in zip(index, want_f)) else
                " Add index × stride over the four axes.")
        raise CheckFailed(f"{name}: your strides are right, but {int(offset)} is not the byte offset of "
                          f"element {list(index)}.{hint}")
    if got_f != want_f:
        raise CheckFailed(f"{name}: your C-order strides and offset are right, but {got_f} are not the F-order "
                          f"strides of {what}.{why(got_f, want)}")
    who = "the public example" if v.student is None else f"variant {v.tag} of {v.student}"
    print(f"✓ {name}: {what}, strides {want}, element {list(index)} at {want_offset:,} B, F-order strides "
          f"{want_f} ({who}).")


def _check_variant(mine: Any, lab: str, label: str) -> None:
    """TypeError unless ``mine`` is a Variant of ``lab``."""
    from . import variants

    if not isinstance(mine, variants.Variant):
        raise TypeError(f"mine must be {label}'s variant (teach.variants.variant({lab!r}, STUDENT_ID)), "
                        f"got {type(mine).__name__}")
    if mine.lab != lab:
        raise TypeError(f"mine must be {label}'s variant (teach.variants.variant({lab!r}, …)), got lab {mine.lab!r}")
