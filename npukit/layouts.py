"""Layouts: the same tensor, its elements in a different order in memory.

The invariant this module teaches: **a layout is a stride order**. NCHW, NHWC
and CHW are the same numbers with their axes listed in a different order from
slowest to fastest in memory. Permuting axes only changes the strides, so it
is free (a view); making the permuted tensor contiguous — what a kernel or a
DMA engine that wants NHWC needs — reads and writes every byte once, unless
only axes of length 1 moved.
Blocked layouts such as ``nChw16c`` (oneDNN's ``aBcd16b``) split the channel
axis into blocks of 16 and put each block innermost, padding the last block
with zeros. ``im2col`` turns a convolution into a matrix product; its patch
tensor is itself a strided view of the input, and only the GEMM's copy costs
memory.

See chapter 2, "Layouts" (chapters/02_layouts.md).
"""

from __future__ import annotations

import dataclasses
import math
import numbers as _numbers
import statistics
from typing import Any, Callable, Sequence

import numpy as np

from . import _arith, _check, _tally

__all__ = [
    "LETTERS", "permutation", "convert", "conversion_is_free", "onednn_tag",  # layout strings
    "round_up", "to_blocked", "from_blocked", "PaddingCost", "padding_cost",  # blocked layouts, padding
    "im2col", "im2col_blowup",  # convolution patches
    "Conversion", "ROUNDS", "MIN_TIME", "measure_conversions", "measure_conversion",  # what a conversion costs
    "numbers",  # the "numbers so far" rows
]

#: The axis letters a layout string may use, in the logical order oneDNN and
#: OpenVINO call ``a, b, c, ...``: batch, channels, depth, height, width.
LETTERS = "NCDHW"


# ---- layout strings -------------------------------------------------------------


#: The largest channel block :func:`to_blocked` and friends take: oneDNN's blocks are 4, 8 or 16 channels, an
#: NPU's a few tens; a block of 10**12 would be a typo that allocates terabytes.
MAX_BLOCK = 1024


def _layout(s: Any, name: str) -> str:
    if not isinstance(s, str):
        raise TypeError(f"{name} must be a layout string such as 'NCHW', got {type(s).__name__}")
    if not s or set(s) - set(LETTERS):
        raise ValueError(f"{name} must be a layout string of the letters {', '.join(LETTERS)} (e.g. 'NCHW'); got {s!r}")
    if len(set(s)) != len(s):
        raise ValueError(f"{name} must not repeat a letter, got {s!r}")
    return s


def _shape_in(shape: Any, src: Any) -> tuple[tuple[int, ...], str]:
    """``shape`` and ``src`` checked, and checked against each other."""
    shape, src = _check.shape(shape, "shape"), _layout(src, "src")
    if len(shape) != len(src):
        raise ValueError(f"src {src!r} names {len(src)} axes but shape has {len(shape)}: {shape}")
    return shape, src


def permutation(src: str, dst: str) -> tuple[int, ...]:
    """The axes order that turns a ``src``-layout tensor into ``dst`` layout.

    ``np.transpose(x, permutation(src, dst))`` is ``x`` seen in layout
    ``dst``: axis *i* of the result is axis ``perm[i]`` of ``x``.
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    src, dst : str
        Layout strings with the same letters, e.g. ``"NCHW"`` and ``"NHWC"``.

    Returns
    -------
    tuple of int

    Raises
    ------
    TypeError, ValueError
        If a layout is not a string, uses letters outside ``N, C, D, H, W``,
        repeats one, or ``dst`` does not have the same letters as ``src``.

    Examples
    --------
    >>> permutation("NCHW", "NHWC"), permutation("NHWC", "NCHW"), permutation("HWC", "CHW")
    ((0, 2, 3, 1), (0, 3, 1, 2), (2, 0, 1))
    """
    src, dst = _layout(src, "src"), _layout(dst, "dst")
    if sorted(src) != sorted(dst):
        raise ValueError(f"dst must have the same letters as src; got src={src!r}, dst={dst!r}")
    return tuple(src.index(a) for a in dst)


def convert(x: np.ndarray, src: str, dst: str, *, copy: bool = True) -> np.ndarray:
    """Convert ``x`` from layout ``src`` to layout ``dst``.

    With ``copy=False`` the result is a view: the same bytes, new strides,
    no data moved. With ``copy=True`` (the default) it is a C-contiguous array
    in the new layout — the bytes really rearranged, one full read and one full
    write of the tensor, which is what a kernel or a DMA engine needs.
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    x : numpy.ndarray
        The tensor, its axes in the order ``src`` names them.
    src, dst : str
        Layout strings, e.g. ``"NCHW"``, ``"NHWC"``, ``"CHW"``, ``"HWC"``.
    copy : bool
        ``True`` for a contiguous result, ``False`` for a view.

    Returns
    -------
    numpy.ndarray
        ``x`` in layout ``dst``.

    Raises
    ------
    TypeError, ValueError
        If ``x`` is not an array, ``copy`` not a bool, a layout invalid, the
        letters differ, or ``len(src) != x.ndim``.

    Examples
    --------
    >>> x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)   # NCHW
    >>> y = convert(x, "NCHW", "NHWC")
    >>> y.shape, y.strides, y.flags.c_contiguous
    ((1, 3, 4, 2), (96, 32, 8, 4), True)
    >>> v = convert(x, "NCHW", "NHWC", copy=False)
    >>> v.strides, np.shares_memory(v, x)
    ((96, 16, 4, 48), True)
    >>> bool((convert(y, "NHWC", "NCHW") == x).all())
    True
    """
    _check.as_array(x, "x")
    copy = _check.boolean(copy, "copy")
    perm = permutation(src, dst)
    if len(src) != x.ndim:
        raise ValueError(f"src {src!r} names {len(src)} axes but x has {x.ndim} (shape {x.shape})")
    view = x.transpose(perm)
    return np.ascontiguousarray(view) if copy else view


def conversion_is_free(shape: Sequence[int], src: str, dst: str) -> bool:
    """Whether converting a C-contiguous ``shape`` tensor moves no bytes.

    The contiguous ``dst`` tensor has exactly the bytes of the ``src`` tensor
    when the axes longer than 1 keep their relative order: only axes of
    length 1 (a batch of one, a single channel as in the second example, a
    1×1 feature map as in the third) move. Then ``np.ascontiguousarray`` of
    the permuted view returns the view.
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    shape : tuple of int
        The shape in layout ``src``.
    src, dst : str
        Layout strings with the same letters.

    Returns
    -------
    bool

    Raises
    ------
    TypeError, ValueError
        For a bad shape or layout, or ``len(shape) != len(src)``.

    Examples
    --------
    >>> [conversion_is_free(s, "NCHW", "NHWC") for s in [(1, 3, 224, 224), (8, 1, 28, 28), (1, 256, 1, 1)]]
    [False, True, True]
    """
    shape, src = _shape_in(shape, src)
    perm = permutation(src, dst)
    if 0 in shape:
        return True
    order = [p for p in perm if shape[p] != 1]
    return order == sorted(order)


def onednn_tag(layout: str, block: int | None = None) -> str:
    """oneDNN's format tag (also shown by OpenVINO's executed graph) for a layout.

    oneDNN names the logical axes ``a, b, c, d, …`` in the order
    N, C, (D,) H, W and writes them from the outermost to the innermost in
    memory; a blocked axis appears as a capital letter plus its inner block,
    e.g. nChw16c is ``aBcd16b``. See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    layout : str
        A layout string such as ``"NCHW"`` or ``"NHWC"``.
    block : int, optional
        The channel block size of a blocked layout (channels must be in it).

    Returns
    -------
    str

    Raises
    ------
    TypeError, ValueError
        For a bad layout, or a bad ``block``, or a block without a ``C`` axis.

    Examples
    --------
    >>> onednn_tag("NCHW"), onednn_tag("NHWC"), onednn_tag("NCHW", block=16)
    ('abcd', 'acdb', 'aBcd16b')
    """
    layout = _layout(layout, "layout")
    name = {a: "abcde"[i] for i, a in enumerate(a for a in LETTERS if a in layout)}  # logical order
    tag = "".join(name[a] for a in layout)
    if block is None:
        return tag
    block = _check.integer(block, "block", minimum=1, maximum=MAX_BLOCK)
    if "C" not in layout:
        raise ValueError(f"block needs a channel axis, but layout {layout!r} has no 'C'")
    return tag.replace(name["C"], name["C"].upper()) + f"{block}{name['C']}"


# ---- blocked layouts and padding ------------------------------------------------


def round_up(n: int, multiple: int) -> int:
    """The smallest multiple of ``multiple`` that is ≥ ``n``: an axis's padded length.

    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    n, multiple : int
        A length (≥ 0) and the multiple to pad it to (≥ 1).

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        If ``n`` is not an integer >= 0 or ``multiple`` not an integer >= 1.

    Examples
    --------
    >>> round_up(3, 16), round_up(32, 16), round_up(0, 8)
    (16, 32, 0)
    """
    n = _check.integer(n, "n", minimum=0)
    return _arith.round_up(n, _check.integer(multiple, "multiple", minimum=1))


def _fill_blocked(out: np.ndarray, x: np.ndarray, block: int) -> None:
    """Write ``x`` (N, C, ...) into the zero-initialised blocked buffer ``out``."""
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    full = c // block
    dst = np.moveaxis(out, -1, 2)  # (N, Cb, block, *spatial): a view of out
    if full:
        np.copyto(dst[:, :full], x[:, : full * block].reshape(n, full, block, *spatial))
    if c % block:
        np.copyto(dst[:, full, : c % block], x[:, full * block :])


def to_blocked(x: np.ndarray, block: int) -> np.ndarray:
    """NCHW → nChw{block}c: split channels into blocks and put each block innermost.

    Element ``x[n, c, h, w]`` lands at ``[n, c // block, h, w, c % block]``;
    channels beyond ``C`` in the last block are zeros (the padding a blocked
    kernel computes on and discards). Axis 1 is the channel axis; any number
    of spatial axes works (``NCW``, ``NCDHW``).
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    x : numpy.ndarray
        A tensor with at least 2 axes, channels on axis 1.
    block : int
        Channels per block (≥ 1), e.g. 8 for AVX2, 16 for AVX-512 float32.

    Returns
    -------
    numpy.ndarray
        New, C-contiguous, of ``x``'s dtype and shape ``(N, ceil(C/block), *spatial, block)``.

    Raises
    ------
    TypeError, ValueError
        If ``x`` is not an array of ≥ 2 axes, or ``block`` not an integer ≥ 1.

    Examples
    --------
    >>> b = to_blocked(np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2), 4)   # C = 3
    >>> b.shape, b[0, 0, 0, 0]          # pixel (0, 0): channels 0, 1, 2 and one pad
    ((1, 1, 2, 2, 4), array([0., 4., 8., 0.], dtype=float32))
    """
    _check.as_array(x, "x")
    block = _check.integer(block, "block", minimum=1, maximum=MAX_BLOCK)
    if x.ndim < 2:
        raise ValueError(f"x must have at least 2 axes (N, C, ...), got shape {x.shape}")
    out = np.zeros((x.shape[0], -(-x.shape[1] // block), *x.shape[2:], block), dtype=x.dtype)
    _fill_blocked(out, x, block)
    return out


def from_blocked(x: np.ndarray, block: int, channels: int) -> np.ndarray:
    """nChw{block}c → NCHW: the inverse of :func:`to_blocked`, dropping the padding.

    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    x : numpy.ndarray
        A blocked tensor of shape ``(N, Cb, *spatial, block)``, ``Cb`` ≥ 1.
    block : int
        The block size; must equal ``x.shape[-1]``.
    channels : int
        The true channel count C, with ``(Cb - 1) * block < C <= Cb * block``.

    Returns
    -------
    numpy.ndarray
        New, C-contiguous, of ``x``'s dtype and shape ``(N, channels, *spatial)``.

    Raises
    ------
    TypeError, ValueError
        If ``x`` is not such an array, ``block`` differs from its last axis, or
        ``channels`` does not need exactly ``Cb`` blocks.

    Examples
    --------
    >>> x = np.random.default_rng(0).random((2, 5, 3, 3), dtype=np.float32)
    >>> b = to_blocked(x, 4)
    >>> b.shape, bool((from_blocked(b, 4, 5) == x).all())
    ((2, 2, 3, 3, 4), True)
    """
    _check.as_array(x, "x")
    block = _check.integer(block, "block", minimum=1, maximum=MAX_BLOCK)
    channels = _check.integer(channels, "channels", minimum=1)
    if x.ndim < 3 or x.shape[1] < 1:
        raise ValueError(f"x must have at least 3 axes (N, Cb, ..., block) and Cb >= 1, got shape {x.shape}")
    if x.shape[-1] != block:
        raise ValueError(f"block must equal the last axis of x ({x.shape[-1]}), got {block}")
    n, cb, spatial = x.shape[0], x.shape[1], x.shape[2:-1]
    if not (cb - 1) * block < channels <= cb * block:
        raise ValueError(f"channels must be in {(cb - 1) * block + 1}..{cb * block} for {cb} blocks of {block}, "
                         f"got {channels}")
    out = np.empty((n, channels, *spatial), dtype=x.dtype)
    src = np.moveaxis(x, -1, 2)  # (N, Cb, block, *spatial): a view of x
    full = channels // block
    if full:
        np.copyto(out[:, : full * block].reshape(n, full, block, *spatial), src[:, :full])
    if channels % block:
        np.copyto(out[:, full * block :], src[:, full, : channels % block])
    return out


@dataclasses.dataclass(frozen=True)
class PaddingCost:
    """What padding one axis to a multiple costs (see :func:`padding_cost`).

    A record built by hand is checked: ``padded_shape`` has ``shape``'s axes,
    none shorter, and both byte counts use one itemsize.
    See chapter 2, "Layouts" (chapters/02_layouts.md).
    """

    shape: tuple[int, ...]
    padded_shape: tuple[int, ...]
    nbytes: int
    padded_nbytes: int

    def __post_init__(self) -> None:
        shape, padded = _check.shape(self.shape, "shape"), _check.shape(self.padded_shape, "padded_shape")
        if len(padded) != len(shape) or any(p < s for p, s in zip(padded, shape)):
            raise ValueError(f"padded_shape must have the axes of shape {shape}, none shorter; got {padded}")
        nbytes, padded_nbytes = _check.integer(self.nbytes, "nbytes", minimum=0), self.padded_nbytes
        if nbytes * math.prod(padded) != _check.integer(padded_nbytes, "padded_nbytes", minimum=0) * math.prod(shape):
            raise ValueError(f"nbytes and padded_nbytes must count one itemsize, got {nbytes} and {padded_nbytes}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "padded_shape", padded)

    @property
    def wasted_bytes(self) -> int:
        """Bytes of zeros stored (and moved, and computed on) for nothing."""
        return self.padded_nbytes - self.nbytes

    @property
    def wasted_fraction(self) -> float:
        """Wasted bytes as a fraction of the padded tensor."""
        return self.wasted_bytes / self.padded_nbytes if self.padded_nbytes else 0.0


def padding_cost(shape: Sequence[int], multiple: int, axis: int = 1, itemsize: int = 4) -> PaddingCost:
    """Bytes before and after padding ``shape[axis]`` to a multiple of ``multiple``.

    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    shape : tuple of int
        The tensor's shape.
    multiple, axis, itemsize : int
        The multiple to pad to (≥ 1), the padded axis (channels of NCHW by
        default), and bytes per element (4 for float32, 1 for int8).

    Returns
    -------
    PaddingCost
        ``shape``, ``padded_shape``, ``nbytes``, ``padded_nbytes`` and the
        derived ``wasted_bytes`` and ``wasted_fraction``.

    Raises
    ------
    TypeError, ValueError
        For a bad shape, ``multiple`` or ``itemsize`` < 1, or ``axis`` out of range.

    Examples
    --------
    >>> p = padding_cost((1, 3, 32, 32), 16)      # an RGB image padded to 16 channels
    >>> p.padded_shape, p.wasted_bytes, round(p.wasted_fraction, 4)
    ((1, 16, 32, 32), 53248, 0.8125)
    """
    shape = _check.shape(shape, "shape")
    multiple = _check.integer(multiple, "multiple", minimum=1)
    itemsize = _check.integer(itemsize, "itemsize", minimum=1)
    axis = _check.integer(axis, "axis")
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"axis must be in [{-len(shape)}, {len(shape)}) for shape {shape}, got {axis}")
    padded = list(shape)
    padded[axis] = round_up(shape[axis], multiple)
    return PaddingCost(shape, tuple(padded), math.prod(shape) * itemsize, math.prod(padded) * itemsize)


# ---- im2col ------------------------------------------------------------------------


def _pair(v: Any, name: str, minimum: int) -> tuple[int, int]:
    """``v`` as two integers >= ``minimum``; one integer stands for both."""
    if isinstance(v, _numbers.Integral) and not isinstance(v, bool):
        return (_check.integer(v, name, minimum=minimum),) * 2  # type: ignore[return-value]
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"{name} must be an integer or a pair of integers, got {type(v).__name__} {v!r}")
    if len(v) != 2:
        raise ValueError(f"{name} must be an integer or a pair of integers, got {v!r}")
    return _check.integer(v[0], f"{name}[0]", minimum=minimum), _check.integer(v[1], f"{name}[1]", minimum=minimum)


def _pads(pad: Any) -> tuple[int, int, int, int]:
    """``pad`` as ONNX orders it: (top, left, bottom, right)."""
    if isinstance(pad, (tuple, list)) and len(pad) == 4:
        return tuple(_check.integer(p, f"pad[{i}]", minimum=0) for i, p in enumerate(pad))  # type: ignore[return-value]
    if isinstance(pad, (tuple, list)) and len(pad) != 2:
        raise ValueError(f"pad must be an integer, (ph, pw) or ONNX's (top, left, bottom, right); got {pad!r}")
    ph, pw = _pair(pad, "pad", 0)
    return ph, pw, ph, pw


def _conv_geometry(shape, kernel, stride, pad, dilation):
    (kh, kw), (sh, sw) = _pair(kernel, "kernel", 1), _pair(stride, "stride", 1)
    (dh, dw), (pt, pl, pb, pr) = _pair(dilation, "dilation", 1), _pads(pad)
    n, c, h, w = shape
    ho, wo = _arith.conv_out_size(h, kh, sh, pt, pb, dh), _arith.conv_out_size(w, kw, sw, pl, pr, dw)
    if ho < 1 or wo < 1:
        raise ValueError(f"kernel {(kh, kw)} with dilation {(dh, dw)} does not fit the padded input "
                         f"{(h + pt + pb, w + pl + pr)}: the output would be {(ho, wo)}")
    return (kh, kw), (sh, sw), (dh, dw), (pt, pl, pb, pr), (ho, wo)


def im2col(x: np.ndarray, kernel: Any, stride: Any = 1, pad: Any = 0, dilation: Any = 1) -> np.ndarray:
    """The patches a 2-D convolution reads, as a strided view of ``x``.

    For an NCHW input, returns ``cols`` of shape ``(N, Ho, Wo, C, kh, kw)``
    with ``cols[n, i, j, c, p, q] == xp[n, c, i*sh + p*dh, j*sw + q*dw]``,
    where ``xp`` is ``x`` zero-padded. No data is copied when ``pad`` is 0:
    the result is ``x`` seen through six strides (and read-only, because
    patches overlap). ``cols.reshape(N*Ho*Wo, C*kh*kw)`` is the copy a GEMM
    needs; then ``@ W.reshape(Co, -1).T`` is the convolution in NHWC order.
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    x : numpy.ndarray
        The input, shape (N, C, H, W); any strides.
    kernel, stride, dilation : int or (int, int)
        Kernel height and width, step between patches, spacing between
        kernel taps (each ≥ 1).
    pad : int, (int, int) or (int, int, int, int)
        Zero padding (≥ 0): all sides, (rows, columns), or ONNX's
        (top, left, bottom, right).

    Returns
    -------
    numpy.ndarray
        The read-only patch tensor; a view of ``x`` when there is no padding,
        else a view of a padded copy.

    Raises
    ------
    TypeError, ValueError
        If ``x`` is not a 4-D array, a parameter is not an integer (pair) in
        range, or the kernel does not fit the padded input.

    Examples
    --------
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> cols = im2col(x, 3)
    >>> cols.shape, np.shares_memory(cols, x)
    ((1, 2, 2, 1, 3, 3), True)
    >>> cols[0, 1, 1, 0]                      # the bottom-right 3×3 patch
    array([[ 5.,  6.,  7.],
           [ 9., 10., 11.],
           [13., 14., 15.]], dtype=float32)
    >>> im2col(x, 2, stride=2).strides        # bytes: n, i, j, c, p, q
    (64, 32, 8, 64, 16, 4)
    """
    _check.as_array(x, "x")
    if x.ndim != 4:
        raise ValueError(f"x must be 4-D NCHW, got shape {x.shape}")
    (kh, kw), (sh, sw), (dh, dw), (pt, pl, pb, pr), (ho, wo) = _conv_geometry(x.shape, kernel, stride, pad, dilation)
    if pt or pl or pb or pr:
        _check.allocation(x.itemsize * x.shape[0] * x.shape[1] * (x.shape[2] + pt + pb) * (x.shape[3] + pl + pr), "pad")
        x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    s_n, s_c, s_h, s_w = x.strides
    return np.lib.stride_tricks.as_strided(x, shape=(x.shape[0], ho, wo, x.shape[1], kh, kw),
                                           strides=(s_n, s_h * sh, s_w * sw, s_c, s_h * dh, s_w * dw),
                                           writeable=False)


def im2col_blowup(shape: Sequence[int], kernel: Any, stride: Any = 1, pad: Any = 0, dilation: Any = 1) -> float:
    """How many times larger the im2col matrix is than the input it was made from.

    ``N·Ho·Wo·C·kh·kw / (N·C·H·W)``: about ``kh·kw`` for stride 1 and "same"
    padding, about ``kh·kw / (sh·sw)`` with strides.
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    shape : tuple of int
        The NCHW input shape, no axis of length 0.
    kernel, stride, pad, dilation
        As in :func:`im2col`.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        For a bad shape, or as :func:`im2col`.

    Examples
    --------
    >>> im2col_blowup((1, 64, 56, 56), 3, pad=1), im2col_blowup((1, 3, 32, 32), 3, stride=2, pad=1)
    (9.0, 2.25)
    """
    shape = _check.shape(shape, "shape")
    if len(shape) != 4 or 0 in shape:
        raise ValueError(f"shape must be a non-empty 4-D NCHW shape, got {shape}")
    (kh, kw), _, _, _, (ho, wo) = _conv_geometry(shape, kernel, stride, pad, dilation)
    return (ho * wo * kh * kw) / (shape[2] * shape[3])


# ---- measuring a conversion ---------------------------------------------------------


def _measurable(shape: Any, src: Any, dst: Any) -> tuple[tuple[int, ...], str, int | None]:
    """``shape``, ``src`` and the block size of a blocked ``dst`` like ``"NCHW16c"`` (else None), checked."""
    shape, src = _shape_in(shape, src)
    if 0 in shape:
        raise ValueError(f"shape must have no axis of length 0 (an empty tensor moves no bytes), got {shape}")
    digits = dst[len(src):-1] if isinstance(dst, str) and dst.startswith(src) and dst.endswith("c") else ""
    if not (digits.isascii() and digits.isdigit()):
        permutation(src, dst)
        return shape, src, None
    if not src.startswith("NC") or len(src) < 3:
        raise ValueError(f"a blocked dst needs src to start with 'NC' and have spatial axes, got src={src!r}")
    return shape, src, _check.integer(int(digits), "the block size in dst", minimum=1, maximum=MAX_BLOCK)


@dataclasses.dataclass(frozen=True)
class Conversion:
    """A measured layout conversion next to a plain copy of the same bytes, timed in interleaved rounds.

    Times are seconds per call: ``convert_s`` for the conversion into a
    preallocated buffer, ``copy_s`` for ``np.copyto`` of the same tensor,
    each the median over the rounds; ``view_s`` for making the permuted view
    (NaN when no view exists, as for a blocked layout that needs padding).
    ``copy_times`` and ``convert_times`` hold the time of each interleaved
    round (:func:`npukit.measure.compare`; empty for a record built from two
    numbers), so :attr:`verdict` can pair them round by round, and so can a
    page comparing two conversions measured in the same
    :func:`measure_conversions` call. Bandwidths count the tensor's
    ``nbytes`` twice — read once, written once — in GB/s (10⁹ bytes/s);
    the zeros of a blocked layout's padding are not counted. A record built
    by hand is checked like :func:`measure_conversion`'s arguments,
    ``nbytes`` must be the tensor's size times the dtype's itemsize, and
    per-round times must have as many rounds on both sides, with
    ``convert_s`` and ``copy_s`` their medians.
    See chapter 2, "Layouts" (chapters/02_layouts.md).
    """

    shape: tuple[int, ...]
    src: str
    dst: str
    dtype: str
    nbytes: int
    convert_s: float
    copy_s: float
    view_s: float
    copy_times: tuple = ()  #: seconds per copy, one per interleaved round
    convert_times: tuple = ()  #: seconds per conversion, the same rounds

    def __post_init__(self) -> None:
        shape = _measurable(self.shape, self.src, self.dst)[0]
        want = math.prod(shape) * _check.dtype(_check.text(self.dtype, "dtype")).itemsize
        if _check.integer(self.nbytes, "nbytes", minimum=1) != want:
            raise ValueError(f"nbytes must be the size of shape {shape} in {self.dtype}, {want}; got {self.nbytes}")
        _check.positive(self.convert_s, "convert_s"), _check.positive(self.copy_s, "copy_s")
        v = self.view_s
        if isinstance(v, bool) or not isinstance(v, _numbers.Real) or not (math.isnan(v) or 0 <= v < math.inf):
            raise ValueError(f"view_s must be a time >= 0 in seconds, or NaN when no view exists; got {v!r}")
        copies, converts = _check.round_times(self.copy_times, "copy_times"), \
            _check.round_times(self.convert_times, "convert_times")
        _check.paired_rounds(("copy_s", copies, self.copy_s), ("convert_s", converts, self.convert_s),
                             "copy_times and convert_times")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "copy_times", copies)
        object.__setattr__(self, "convert_times", converts)

    @property
    def convert_gbps(self) -> float:
        """Conversion bandwidth (read + write) in GB/s."""
        return 2 * self.nbytes / self.convert_s / 1e9

    @property
    def copy_gbps(self) -> float:
        """Plain-copy bandwidth (read + write) in GB/s: the memory-bound baseline."""
        return 2 * self.nbytes / self.copy_s / 1e9

    @property
    def rounds(self) -> int:
        """Interleaved rounds behind the times (0 for a record built from two numbers)."""
        return len(self.copy_times)

    @property
    def ratios(self) -> tuple[float, ...]:
        """Per-round conversion time over copy time, paired by round."""
        return tuple(t / c for t, c in zip(self.convert_times, self.copy_times))

    @property
    def verdict(self) -> Any:
        """The conversion against the copy (:class:`npukit.measure.Verdict`), or None without rounds.

        Its ``ratio`` is the median per-round ratio and ``low``/``high`` its
        95 % bootstrap interval; its ``word`` is ``"slower"`` when the whole
        interval lies more than the noise threshold above 1.
        """
        if not self.rounds:
            return None
        from .timing import Comparison

        return Comparison.from_times({"a plain copy": self.copy_times, self.label: self.convert_times}
                                     ).verdict(self.label)

    @property
    def slowdown(self) -> float:
        """Conversion time divided by copy time (1.0 = as fast as a copy): the verdict's median per-round ratio.

        Without rounds, ``convert_s / copy_s``.
        """
        return float(np.median(self.ratios)) if self.rounds else self.convert_s / self.copy_s

    @property
    def label(self) -> str:
        """A short label such as ``"1×64×112×112 NCHW→NHWC"``."""
        return "×".join(map(str, self.shape)) + f" {self.src}→{self.dst}"


def _conversion_calls(x: np.ndarray, src: str, dst: str, block: int | None) -> tuple[Callable, Callable | None]:
    """The conversion into a preallocated buffer, and the permuted view (None if no view exists)."""
    if block is None:
        perm = permutation(src, dst)
        out = np.empty(tuple(x.shape[p] for p in perm), dtype=x.dtype)
        return (lambda: np.copyto(out, x.transpose(perm))), (lambda: x.transpose(perm))
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    blocked = np.zeros((n, -(-c // block), *spatial, block), dtype=x.dtype)
    view = None if c % block else (lambda: np.moveaxis(x.reshape(n, c // block, block, *spatial), 2, -1))
    return (lambda: _fill_blocked(blocked, x, block)), view  # a view exists only when no padding is needed


#: Interleaved rounds :func:`measure_conversions` and :func:`measure_conversion` make by default.
ROUNDS = 15


#: Seconds a calibrated round of each function lasts at least: long enough that a time slice taken by another
#: program (a few milliseconds) falls on both sides of a round's ratio rather than on one.
MIN_TIME = 0.01


def measure_conversions(cases: Sequence[Sequence[Any]], *, dtype: Any = "float32", rounds: int = ROUNDS,
                        warmup: int = 2, number: int | None = None, min_time: float = MIN_TIME,
                        seed: int = 0, max_rounds: int | None = None) -> list[Conversion]:
    """Time several layout conversions, each beside a plain copy of the same bytes, all in the same rounds.

    Every case gets its own input and conversion destination, allocated (and
    touched) beforehand, so no call pays for allocation or first-touch page
    faults. Cases of the same byte size share one copy (its own input and
    destination, of that size): one copy time per size, so two conversions
    of the same size are held against the same baseline (two copies of the
    same bytes, calibrated apart, can differ by a factor of two on a busy
    machine). Then :func:`npukit.measure.compare`
    times every copy and every conversion of every case in ``rounds``
    interleaved rounds, in an order shuffled each round, so a burst of load
    from other programs hits all of them alike and two conversions of this
    call can be compared round by round (``Comparison.from_times`` of their
    ``convert_times``, or of their per-round :attr:`Conversion.ratios`). The
    permuted view, which moves nothing, is timed apart (the median of a few
    repeats of 20 calls). See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    cases : list or tuple of (shape, src, dst)
        At least one; each as for :func:`measure_conversion`.
    dtype : numpy dtype
        A numeric element type (bool, integer, float or complex).
    rounds : int
        Interleaved rounds (>= 3).
    warmup : int
        Untimed calls of each function before the rounds (>= 0).
    number : int, optional
        Calls of each function per round (>= 1); default: calibrated so
        that a round of each lasts at least ``min_time``.
    min_time : float
        Seconds (> 0) a calibrated round of each lasts at least
        (:data:`MIN_TIME`).
    seed : int
        Seed of the shuffled order and of the verdicts' bootstrap (>= 0).
    max_rounds : int, optional
        As for :func:`npukit.measure.compare`: rounds are added, ``rounds``
        at a time up to ``max_rounds``, while some conversion's verdict
        against its copy is unclear.

    Returns
    -------
    list of Conversion
        In the order of ``cases``, with their per-round times.

    Raises
    ------
    TypeError, ValueError
        For a bad case, dtype or timing parameter, or inputs that would not
        fit in memory.

    Examples
    --------
    >>> a, b = measure_conversions([((1, 3, 8, 8), "NCHW", "NHWC"), ((1, 16, 4, 4), "NCHW", "NCHW8c")],
    ...                            rounds=3, warmup=0, number=2)
    >>> a.label, b.label, a.rounds, len(b.ratios), a.verdict.rounds
    ('1×3×8×8 NCHW→NHWC', '1×16×4×4 NCHW→NCHW8c', 3, 3, 3)
    """
    from . import measure

    cases = _check.sequence(cases, "cases", min_length=1)
    dtype = _check.dtype(dtype)
    if dtype.kind not in "biufc":
        raise ValueError(f"dtype must be a numeric dtype (bool, integer, float or complex), got {dtype}")
    rounds = _check.integer(rounds, "rounds", minimum=3, maximum=1_000)
    warmup = _check.integer(warmup, "warmup", minimum=0, maximum=10_000)
    if number is not None:
        number = _check.integer(number, "number", minimum=1, maximum=10_000)
    checked = []
    for i, case in enumerate(cases):
        shape, src, dst = _check.sequence(case, f"cases[{i}]", length=3)
        checked.append((*_measurable(shape, src, dst), dst))
    # the data, its copy and its conversion, every case at once
    _check.allocation(sum(3 * math.prod(s) * max(dtype.itemsize, 8) for s, _, _, _ in checked), "cases")
    rng = np.random.default_rng(0)
    fns, inputs, views, copy_of = {}, [], [], []
    for i, (shape, src, block, dst) in enumerate(checked):
        x = rng.standard_normal(shape).astype(dtype)  # any values will do
        convert_fn, view_fn = _conversion_calls(x, src, dst, block)
        convert_fn()  # touch the output before timing
        copy = f"copy {x.nbytes}"                      # one copy per byte size, shared by its conversions
        if copy not in fns:
            src_bytes, copy_out = rng.standard_normal(shape).astype(dtype), np.empty_like(x)
            np.copyto(copy_out, src_bytes)
            fns[copy] = lambda x=src_bytes, out=copy_out: np.copyto(out, x)
        fns[f"{i} conversion"] = convert_fn
        inputs.append(x)
        views.append(view_fn)
        copy_of.append(copy)
    if max_rounds is not None:
        max_rounds = _check.integer(max_rounds, "max_rounds", minimum=rounds)
    c = measure.compare(fns, rounds=rounds, warmup=warmup, number=number, min_time=min_time, seed=seed,
                        max_rounds=max_rounds, settle=[(f"{i} conversion", k) for i, k in enumerate(copy_of)])
    out = []
    for i, ((shape, src, block, dst), x, view_fn) in enumerate(zip(checked, inputs, views)):
        view_s = measure.timeit(view_fn, repeat=5, warmup=1, number=20) if view_fn is not None else float("nan")
        copies, converts = c.times[copy_of[i]], c.times[f"{i} conversion"]
        out.append(Conversion(shape, src, dst, dtype.name, int(x.nbytes), statistics.median(converts),
                              statistics.median(copies), view_s, copies, converts))
    return out


def measure_conversion(shape: Sequence[int], src: str = "NCHW", dst: str = "NHWC", *, dtype: Any = "float32",
                       repeat: int | None = None, warmup: int = 2, rounds: int = ROUNDS) -> Conversion:
    """Time one layout conversion and a plain copy of the same bytes, in interleaved rounds.

    :func:`measure_conversions` with one case: the copy and the conversion
    are timed by :func:`npukit.measure.compare` in ``rounds`` rounds whose
    order is shuffled, so a burst of load from other programs hits both
    alike; :attr:`Conversion.verdict` compares them round by round.
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    shape : tuple of int
        The tensor's shape in layout ``src``; no axis of length 0.
    src, dst : str
        Layout strings; ``dst`` may also be ``src + "<b>c"`` (e.g.
        ``"NCHW16c"``) for the blocked layout of :func:`to_blocked`, in which
        case ``src`` must start with ``"NC"``.
    dtype : numpy dtype
        A numeric element type (bool, integer, float or complex).
    repeat : int, optional
        Calls of each per round (>= 1); default: calibrated so that a round
        lasts at least :data:`MIN_TIME`.
    warmup : int
        Untimed calls of each before the rounds (>= 0).
    rounds : int
        Interleaved rounds (>= 1). At least 3 are made, the fewest from
        which the verdict's interval is formed: 1 or 2 measure 3.

    Returns
    -------
    Conversion
        Median times in seconds per call, the per-round times, and
        ``convert_gbps``, ``copy_gbps``, ``slowdown`` and ``verdict`` derived
        from them.

    Raises
    ------
    TypeError, ValueError
        For a bad shape, layout, dtype or timing parameter.

    Examples
    --------
    >>> r = measure_conversion((1, 3, 8, 8), repeat=1, warmup=0, rounds=3)
    >>> r.label, r.nbytes, r.convert_s > 0 and r.copy_s > 0, r.rounds
    ('1×3×8×8 NCHW→NHWC', 768, True, 3)
    """
    rounds = _check.integer(rounds, "rounds", minimum=1, maximum=1_000)
    if repeat is not None:
        repeat = _check.integer(repeat, "repeat", minimum=1, maximum=10_000)
    warmup = _check.integer(warmup, "warmup", minimum=0, maximum=10_000)
    shape = _measurable(shape, src, dst)[0]  # its messages name shape, src and dst, not cases[0]
    itemsize = _check.dtype(dtype).itemsize
    _check.allocation(3 * math.prod(shape) * max(itemsize, 8), "shape")  # the data, its copy and its conversion
    return measure_conversions([(shape, src, dst)], dtype=dtype, rounds=max(rounds, 3), warmup=warmup,
                               number=repeat)[0]


def numbers(ctx: _tally.Inputs) -> list[_tally.Row]:
    """Chapter 2's rows of the "numbers so far" table: measured NCHW → NHWC conversions.

    Follows the contract of :mod:`npukit.tally`; reads ``ctx.conversions``
    (measured on first use: CameraNet's input batch and its ``block1``
    activation, see :meth:`npukit.tally.Context.conversions`).
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Raises
    ------
    TypeError
        If ``ctx`` is not a :class:`npukit.tally.Context` or holds a non-Conversion.

    Examples
    --------
    >>> from npukit import tally
    >>> c = Conversion((1, 3, 32, 32), "NCHW", "NHWC", "float32", 12288, 4e-6, 1e-6, 1e-7)
    >>> numbers(tally.Context(conversions=[c]))[0].value
    '4.0 µs (4.0× a copy)'
    """
    _tally.inputs(ctx)
    rows = []
    for i, c in enumerate(_check.sequence(ctx.conversions, "ctx.conversions", min_length=1)):
        _check.instance(c, f"ctx.conversions[{i}]", Conversion)
        rows.append(_tally.Row(2, f"{c.src}→{c.dst} of a {'×'.join(map(str, c.shape))} {c.dtype} tensor",
                              f"{c.convert_s * 1e6:.1f} µs ({c.slowdown:.1f}× a copy"
                              + (f", 95% interval {c.verdict.low:.1f}–{c.verdict.high:.1f})" if c.rounds else ")"),
                              "measured: NumPy's conversion and a copy of the same bytes into preallocated "
                              + (f"buffers, medians of {c.rounds} interleaved rounds" if c.rounds else "buffers")))
    return rows
