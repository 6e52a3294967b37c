"""Checkers for lab 2, "Layouts" (labs/02_layouts.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and compares
it with an independent reference; see :mod:`npukit.teach.core`. While the
learner's function runs, :mod:`npukit.layouts` (which implements these
exercises) and this module are off limits, and so is ``np.shares_memory`` in
the "predict, do not measure" exercise.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _check
from .core import CheckFailed, _rng, _same, check


def _library() -> tuple:
    from .. import layouts

    return (layouts,)


_BLOCKS = (2, 3, 4, 8, 16)


def _tensor(rng: np.random.Generator, max_c: int = 40) -> np.ndarray:
    n, c = int(rng.integers(1, 4)), int(rng.integers(1, max_c))
    h, w = (int(v) for v in rng.integers(1, 7, size=2))
    return rng.standard_normal((n, c, h, w)).astype(np.float32)


def _blocked_by_loops(x: np.ndarray, block: int) -> np.ndarray:
    """NCHW → (N, ceil(C/block), H, W, block), one channel at a time."""
    n, c, h, w = x.shape
    out = np.zeros((n, -(-c // block), h, w, block), dtype=x.dtype)
    for ch in range(c):
        out[:, ch // block, :, :, ch % block] = x[:, ch]
    return out


def _contiguous(name: str, fn: Callable[..., Any], reference: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``fn``: right values whose bytes are not in C order fail, saying so."""

    def learner(*args):
        shape = args[0].shape
        got = fn(*args)
        if type(got) is np.ndarray and not got.flags.c_contiguous and _same(got, reference(*args), 0, 0):
            raise CheckFailed(
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
    >>> def no_copy(x, block):   # the values are right, the bytes still in NCHW order
    ...     n, c, h, w = x.shape
    ...     padded = np.pad(x, ((0, 0), (0, -c % block), (0, 0), (0, 0)))
    ...     return padded.reshape(n, -1, block, h, w).transpose(0, 1, 3, 4, 2)
    >>> check_to_blocked(no_copy)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: to_blocked: for an input of shape (3, 18, 1, 2) the values are right, but the answer has strides (144, 24, 8, 4, 8): it is not C-contiguous. ...
    """
    _check.function(fn, "fn")
    rng = _rng(1201)
    cases = [(_tensor(rng), int(rng.choice(_BLOCKS))) for _ in range(40)]
    reference = _blocked_by_loops
    check("to_blocked", _contiguous("to_blocked", fn, reference), cases, reference, rtol=0, atol=0,
          forbid=_library())


def check_from_blocked(fn: Callable[[np.ndarray, int, int], np.ndarray]) -> None:
    """Check ``fn(xb, block, channels)`` turns nChw{block}c back into NCHW.

    Fresh cases: 40 blocked tensors made by the reference loop of
    :func:`check_to_blocked` from fresh NCHW tensors, with the padding filled
    with NaN (so an answer that keeps padding channels is caught). Reference:
    a loop that copies channel ``c`` back from ``[:, c // block, :, :, c % block]``.
    The answer must be C-contiguous.

    Examples
    --------
    >>> def padding_kept(xb, block, channels):   # forgets to drop the padding channels
    ...     n, cb, h, w, _ = xb.shape
    ...     return np.ascontiguousarray(xb.transpose(0, 1, 4, 2, 3).reshape(n, cb * block, h, w))
    >>> check_from_blocked(padding_kept)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: from_blocked: wrong answer for input (float32 array of shape (2, 9, 5, 6, 4), 4, 35).
      expected an array of shape (2, 35, 5, 6), got one of shape (2, 36, 5, 6).
    """
    _check.function(fn, "fn")
    rng = _rng(1202)
    cases = []
    for _ in range(40):
        x, block = _tensor(rng), int(rng.choice(_BLOCKS))
        xb = _blocked_by_loops(x, block)
        c = x.shape[1]
        xb[:, -1, :, :, c - (xb.shape[1] - 1) * block:] = np.nan
        cases.append((xb, block, c))

    def reference(xb, block, channels):  # unblock channel by channel
        n, cb, h, w, _ = xb.shape
        out = np.empty((n, channels, h, w), dtype=xb.dtype)
        for ch in range(channels):
            out[:, ch] = xb[:, ch // block, :, :, ch % block]
        return out

    check("from_blocked", _contiguous("from_blocked", fn, reference), cases, reference, rtol=0, atol=0,
          forbid=_library())


def _patches_by_loops(x: np.ndarray, k: int, stride: int) -> np.ndarray:
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
    positions copying each patch. ``sliding_window_view``, which makes the
    windows in one call, is refused, and so is :mod:`npukit.layouts`.

    A hint about the strides is added only when the answer is exactly what
    strides computed from the shape give.

    Examples
    --------
    >>> from numpy.lib.stride_tricks import as_strided
    >>> def writeable(x, k, stride):   # leaves the overlapping patches writeable
    ...     n, c, h, w = x.shape
    ...     sn, sc, sh, sw = x.strides
    ...     return as_strided(x, shape=(n, (h - k) // stride + 1, (w - k) // stride + 1, c, k, k),
    ...                       strides=(sn, sh * stride, sw * stride, sc, sh, sw))
    >>> check_im2col_view(writeable)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: im2col as a view: the result is writeable; pass writeable=False to as_strided (the patches overlap, so one write would change several patches)
    """
    _check.function(fn, "fn")
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
        if type(got) is not np.ndarray:
            raise CheckFailed(f"im2col as a view: return a numpy.ndarray, got {type(got).__name__}")
        if not np.shares_memory(got, x):
            raise CheckFailed(
                f"im2col as a view: for x of shape {x.shape}, k={k}, stride={stride} the result "
                "does not share memory with x; build it with as_strided, without copying"
            )
        if got.flags.writeable:
            raise CheckFailed(
                "im2col as a view: the result is writeable; pass writeable=False to as_strided "
                "(the patches overlap, so one write would change several patches)"
            )
        return got

    def hint(got, want, x, k, stride):
        if x.flags.c_contiguous or got.shape != want.shape:
            return None
        n, c, h, w = x.shape
        item = x.itemsize
        from_shape = (c * h * w * item, stride * w * item, stride * item, h * w * item, w * item, item)
        if _same(got, np.lib.stride_tricks.as_strided(x, want.shape, from_shape), 0, 0):
            return (f"x is channels-last (strides {x.strides}: NHWC bytes) and your patches are what strides "
                    "computed from the shape give; take the strides from x.strides.")
        return None

    check("im2col as a view", learner, cases, _patches_by_loops, rtol=0, atol=0, hint=hint,
          forbid=_library() + (np.lib.stride_tricks.sliding_window_view,))   # the windows in one call


def _transpose_is_free(shape, perm) -> bool:
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
    permutations. Reference: NumPy itself, asked with ``np.shares_memory``;
    the learner's function predicts, so it may not ask ``np.shares_memory``
    nor call :mod:`npukit.layouts` (``conversion_is_free``).

    Examples
    --------
    >>> check_stays_view(lambda shape, perm: list(perm) == sorted(perm))   # forgets the length-1 axes
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: stays a view: wrong answer for input ((1, 2, 4, 1), (1, 3, 0, 2)).
      expected True, got False.
    """
    rng = _rng(1204)
    cases = []
    for _ in range(60):
        ndim = int(rng.integers(2, 6))
        shape = tuple(int(d) for d in rng.choice([1, 1, 2, 3, 4], size=ndim))
        cases.append((shape, tuple(int(p) for p in rng.permutation(ndim))))

    def compare(got, want):
        if not isinstance(got, (bool, np.bool_)):
            raise CheckFailed(f"stays a view: return True or False, got {got!r}")
        return bool(got) == want

    check("stays a view", fn, cases, _transpose_is_free, compare=compare,
          forbid=_library() + (np.shares_memory, np.may_share_memory, np.empty, np.zeros, np.ones, np.full,
                               np.ascontiguousarray, np.ndarray.transpose, np.transpose, np.ndarray))
