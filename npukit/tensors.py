"""Tensors are memory: shape, dtype, strides, views, addresses and alignment.

A NumPy array is a flat buffer of bytes plus four pieces of metadata: where
its first element is (an address), how big one element is (the dtype's
itemsize), how many elements each axis has (the shape), and how many bytes to
step to reach the next element along each axis (the strides). Element
``(i0, i1, …)`` lives at ``address + i0 * strides[0] + i1 * strides[1] + …``.

The invariant this module teaches:

    **A view does not copy memory; it only changes shape, strides and offset.**

Transposing, slicing with steps and most reshapes make views. A copy happens
only when the requested element order cannot be expressed with strides over
the existing buffer (for example flattening a transposed array), or when you
ask for one (``np.ascontiguousarray``, ``astype``, fancy indexing).

Hardware cares about one more number: the alignment of the first byte. CPUs
move memory in cache lines (64 bytes on current x86 and most Arm cores) and DMA
engines in bursts; :func:`aligned_empty` makes a buffer whose start is a
multiple of the alignment you ask for, and :func:`alignment_of` tells you what
you got.

See chapter 1, "Tensors are memory" (chapters/01_tensors.md).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from . import _check, _tally

__all__ = [
    "TensorInfo", "describe", "root_buffer",  # describing an array
    "contiguous_strides", "element_offsets",  # strides and offsets
    "alignment_of", "aligned_empty", "alignment_census", "cache_line_size",  # addresses and alignment
    "cache_geometry",
    "numbers",  # the "numbers so far" rows
]


# ---- describing an array ------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TensorInfo:
    """What an array is, as memory. Returned by :func:`describe`.

    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Attributes
    ----------
    shape, strides : tuple of int
        Elements per axis, and bytes to step per axis.
    dtype : str
        The element type's name, e.g. ``"float32"``.
    itemsize, nbytes : int
        Bytes per element, and bytes of all elements (``size * itemsize``).
    c_contiguous, f_contiguous : bool
        Whether the elements fill one gap-free block in row-major (C) or
        column-major (Fortran) order.
    owns_data, writeable : bool
        Whether this array allocated its buffer (``a.flags.owndata``), and
        whether it may be written through.
    base : str or None
        What owns the memory when the array does not, e.g.
        ``"ndarray (3, 4) float32"``; ``None`` when it owns its data.
    offset : int
        Bytes from the start of the owner's buffer to the first element.
    address, alignment : int
        The first element's address (``a.ctypes.data``), and the largest
        power of two dividing it, capped at 4096.

    A record built by hand is checked like an argument: ``nbytes`` must be
    ``size * itemsize``, ``strides`` one per axis, ``alignment`` a power of two.
    """

    shape: tuple[int, ...]
    dtype: str
    itemsize: int
    strides: tuple[int, ...]
    nbytes: int
    c_contiguous: bool
    f_contiguous: bool
    owns_data: bool
    base: str | None
    offset: int
    address: int
    alignment: int
    writeable: bool

    def __post_init__(self) -> None:  # a hand-built record must be as consistent as describe's
        shape = _check.shape(self.shape, "shape")
        strides = _check.sequence(self.strides, "strides", length=len(shape))
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "strides", tuple(_check.integer(s, f"strides[{i}]") for i, s in enumerate(strides)))
        _check.text(self.dtype, "dtype"), _check.text(self.base, "base", optional=True)
        for name in ("c_contiguous", "f_contiguous", "owns_data", "writeable"):
            _check.boolean(getattr(self, name), name)
        itemsize = _check.integer(self.itemsize, "itemsize", minimum=0)
        if _check.integer(self.nbytes, "nbytes", minimum=0) != math.prod(shape) * itemsize:
            raise ValueError(f"nbytes must be size * itemsize = {math.prod(shape) * itemsize}, got {self.nbytes}")
        _check.integer(self.offset, "offset", minimum=0), _check.integer(self.address, "address", minimum=0)
        _check.power_of_two(self.alignment, "alignment")
        try:
            dt = np.dtype(self.dtype)
        except TypeError:
            dt = None
            if not self.dtype.startswith(("[", "{", "(")):  # a structured dtype's str() does not parse back
                raise ValueError(f"dtype must be a NumPy dtype name such as 'float32', got {self.dtype!r}") from None
        if dt is not None and dt.itemsize != itemsize:
            raise ValueError(f"itemsize must be {self.dtype}'s itemsize {dt.itemsize}, got {itemsize}")
        for name, order in (("c_contiguous", "C"), ("f_contiguous", "F")):
            if getattr(self, name) != _contiguous(shape, self.strides, itemsize, order):
                raise ValueError(f"{name}={getattr(self, name)} contradicts shape {shape} and strides {self.strides}"
                                 f" (itemsize {itemsize})")
        if self.owns_data and (self.base is not None or self.offset != 0):
            raise ValueError(f"owns_data=True needs base=None and offset=0, got base={self.base!r}, offset={self.offset}")
        if self.alignment != alignment_of(self.address):
            raise ValueError(f"alignment must be the address's alignment {alignment_of(self.address)}, "
                             f"got {self.alignment}")

    def _rows(self) -> list[tuple[str, str]]:
        yes = {True: "yes", False: "no"}
        return [
            ("shape", str(self.shape)),
            ("dtype", f"{self.dtype} (itemsize {self.itemsize} B)"),
            ("strides", f"{self.strides} B"),
            ("nbytes", f"{self.nbytes:,} B"),
            ("contiguous", f"C: {yes[self.c_contiguous]}, F: {yes[self.f_contiguous]}"),
            ("owns data", "yes" if self.owns_data else f"no: a view into {self.base}, {self.offset:,} B in"),
            ("address", f"{self.address:#x} (aligned to {self.alignment} B)"),
            ("writeable", yes[self.writeable]),
        ]

    def __str__(self) -> str:
        return "\n".join(f"{k:<11} {v}" for k, v in self._rows())

    def __repr__(self) -> str:
        return (f"TensorInfo(shape={self.shape}, dtype={self.dtype}, strides={self.strides}, "
                f"C={self.c_contiguous}, F={self.f_contiguous}, owns_data={self.owns_data}, "
                f"address={self.address:#x}, alignment={self.alignment})")

    def _repr_html_(self) -> str:
        from . import viz

        return viz.table(self._rows(), ["field", "value"]).data


def _contiguous(shape: tuple, strides: tuple, itemsize: int, order: str) -> bool:
    """NumPy's contiguity flag: every axis longer than 1 steps over all the axes inside it (none if empty)."""
    if 0 in shape:
        return True
    step = itemsize
    axes = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for k in axes:
        if shape[k] != 1 and strides[k] != step:
            return False
        step *= shape[k]
    return True


def root_buffer(a: np.ndarray) -> Any:
    """The object that owns ``a``'s memory: follow ``.base`` to its end.

    NumPy keeps ``.base`` pointing at the array (or other object, such as
    ``bytes`` or an OpenVINO tensor) whose memory a view uses. An array that
    owns its data is its own root.
    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Parameters
    ----------
    a : numpy.ndarray
        Any array.

    Returns
    -------
    object
        The owner of the memory: ``a`` itself, an ndarray, or another object.

    Raises
    ------
    TypeError
        If ``a`` is not a NumPy array.

    Examples
    --------
    >>> x = np.zeros((3, 4))
    >>> root_buffer(x.T[1:]) is x
    True
    >>> root_buffer(x) is x
    True
    """
    _check.as_array(a, "a")
    node: Any = a
    while isinstance(node, np.ndarray) and node.base is not None:
        node = node.base
    return node


def _root_array(a: np.ndarray) -> np.ndarray:
    """The last ndarray in ``a``'s ``.base`` chain (its memory's outermost array)."""
    node = a
    while isinstance(node.base, np.ndarray):
        node = node.base
    return node


def _same_buffer(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` look into one buffer (not necessarily the same bytes of it)."""
    if root_buffer(a) is root_buffer(b):
        return True
    return bool(np.may_share_memory(_root_array(a), _root_array(b)))  # two arrays over one foreign buffer


def describe(a: np.ndarray) -> TensorInfo:
    """Describe an array as memory: shape, dtype, strides, ownership, address.

    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Parameters
    ----------
    a : numpy.ndarray
        The array to describe.

    Returns
    -------
    TensorInfo
        A frozen record; ``print`` it for a table, or display it in Jupyter.

    Raises
    ------
    TypeError
        If ``a`` is not a NumPy array.

    Examples
    --------
    >>> x = np.zeros((2, 3, 4), dtype=np.float32)
    >>> d = describe(x)
    >>> d.shape, d.strides, d.nbytes, d.c_contiguous, d.owns_data
    ((2, 3, 4), (48, 16, 4), 96, True, True)
    >>> t = describe(x.transpose(2, 0, 1))
    >>> t.strides, t.c_contiguous, t.owns_data, t.base
    ((4, 48, 16), False, False, 'ndarray (2, 3, 4) float32')
    >>> describe(x[1]).offset          # x[1] starts 48 bytes into x's buffer
    48
    """
    _check.as_array(a, "a")
    address = int(a.__array_interface__["data"][0])
    owner = root_buffer(a)
    if a.flags.owndata or owner is a:
        base, offset = None, 0
    else:
        root = _root_array(a)
        if root is a:  # wraps a non-NumPy buffer (bytes, an OpenVINO tensor …)
            base, offset = type(owner).__name__, 0
        else:
            base = f"ndarray {root.shape} {root.dtype}"
            if not root.flags.owndata:
                base += f" over {type(owner).__name__}"
            offset = address - int(root.__array_interface__["data"][0])
    return TensorInfo(
        shape=tuple(int(n) for n in a.shape), dtype=str(a.dtype), itemsize=int(a.itemsize),
        strides=tuple(int(s) for s in a.strides), nbytes=int(a.nbytes),
        c_contiguous=bool(a.flags.c_contiguous), f_contiguous=bool(a.flags.f_contiguous),
        owns_data=bool(a.flags.owndata), base=base, offset=offset, address=address,
        alignment=alignment_of(address), writeable=bool(a.flags.writeable),
    )


# ---- strides and offsets --------------------------------------------------------


def contiguous_strides(shape: tuple[int, ...] | list[int] | int, itemsize: int, order: str = "C") -> tuple[int, ...]:
    """The byte strides of a gap-free array of ``shape``, as NumPy makes them.

    In C (row-major) order the last axis steps by one element and each earlier
    axis steps over everything after it:
    ``strides[k] = itemsize * shape[k+1] * … * shape[-1]``. Fortran
    (column-major) order is the mirror image. Two NumPy conventions are
    reproduced: an axis of size 1 gets the stride it would have if it were
    larger, and an array with any axis of size 0 holds no bytes, so NumPy
    gives every axis a stride of 0.
    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Parameters
    ----------
    shape : tuple of int (or an int for 1-D)
        Non-negative sizes.
    itemsize : int
        Bytes per element (``np.dtype(...).itemsize``), >= 1.
    order : {"C", "F"}
        Row-major or column-major.

    Returns
    -------
    tuple of int
        Strides in bytes, equal to ``np.empty(shape, dtype, order=order).strides``.

    Raises
    ------
    TypeError, ValueError
        If ``shape`` is not a tuple of non-negative integers, ``itemsize`` not
        an integer >= 1, or ``order`` not "C"/"F".

    Examples
    --------
    >>> contiguous_strides((1, 3, 224, 224), 4)
    (602112, 200704, 896, 4)
    >>> contiguous_strides((2, 3), 8, order="F")
    (8, 16)
    >>> contiguous_strides((), 4), contiguous_strides((3, 0, 2), 4)
    ((), (0, 0, 0))
    """
    shape = _check.shape(shape, "shape")
    itemsize = _check.integer(itemsize, "itemsize", minimum=1)
    _check.one_of(order, "order", ("C", "F"))
    if 0 in shape:
        return (0,) * len(shape)
    axes = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    strides = [0] * len(shape)
    step = itemsize
    for k in axes:
        strides[k] = step
        step *= shape[k]
    return tuple(strides)


def element_offsets(a: np.ndarray, relative_to: np.ndarray | None = None) -> np.ndarray:
    """The byte offset of every element of ``a``, as an int64 array of ``a.shape``.

    Offsets are measured from the first byte of ``relative_to`` (by default
    the outermost array in ``a``'s ``.base`` chain, i.e. the buffer a view
    looks into). Element ``i`` of ``a`` sits at
    ``start + sum(i[k] * a.strides[k])``.
    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Parameters
    ----------
    a : numpy.ndarray
        The array (often a view).
    relative_to : numpy.ndarray, optional
        The array whose first byte is offset 0; it must look into the same
        buffer as ``a`` (an offset into another allocation means nothing).

    Returns
    -------
    numpy.ndarray
        int64 offsets, same shape as ``a``.

    Raises
    ------
    TypeError, ValueError
        If ``a`` or ``relative_to`` is not a NumPy array, or ``relative_to``
        does not share a buffer with ``a``.

    Examples
    --------
    >>> x = np.arange(6, dtype=np.int32).reshape(2, 3)
    >>> element_offsets(x)
    array([[ 0,  4,  8],
           [12, 16, 20]])
    >>> element_offsets(x.T)           # same bytes, visited in another order
    array([[ 0, 12],
           [ 4, 16],
           [ 8, 20]])
    >>> element_offsets(x[:, 1:])      # a slice starts 4 bytes in
    array([[ 4,  8],
           [16, 20]])
    """
    _check.as_array(a, "a")
    ref = _root_array(a) if relative_to is None else _check.as_array(relative_to, "relative_to")
    if ref is not a and not _same_buffer(a, ref):
        raise ValueError("relative_to must share a buffer with a (a view of the same memory); "
                         f"got an unrelated array of shape {ref.shape}")
    start = int(a.__array_interface__["data"][0]) - int(ref.__array_interface__["data"][0])
    out = np.full(a.shape, start, dtype=np.int64)
    for k, (n, s) in enumerate(zip(a.shape, a.strides)):
        step = np.arange(n, dtype=np.int64) * s
        out += step.reshape([n if j == k else 1 for j in range(a.ndim)])
    return out


# ---- addresses and alignment -----------------------------------------------------


def alignment_of(a: np.ndarray | int, cap: int = 4096) -> int:
    """The largest power of two that divides the address of ``a``'s first byte.

    An address that is a multiple of 64 is "64-byte aligned". Since every
    multiple of 128 is also a multiple of 64, the answer is capped (a page,
    4096 bytes, by default): address 0 and very round addresses report ``cap``.
    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Parameters
    ----------
    a : numpy.ndarray or int
        An array (its data address is used) or an address.
    cap : int
        A power of two; the largest alignment reported.

    Returns
    -------
    int
        A power of two between 1 and ``cap``.

    Raises
    ------
    TypeError, ValueError
        If ``a`` is neither an array nor an integer address >= 0, or ``cap``
        is not a positive power of two.

    Examples
    --------
    >>> alignment_of(0x1040), alignment_of(0x1048), alignment_of(0x10000)
    (64, 8, 4096)
    >>> x = np.empty(100, dtype=np.uint8)
    >>> alignment_of(x[1:]) == 1 and alignment_of(x) >= 16
    True
    """
    cap = _check.power_of_two(cap, "cap")
    if isinstance(a, np.ndarray):
        address = int(a.__array_interface__["data"][0])
    else:
        try:
            address = _check.integer(a, "a", minimum=0)
        except TypeError:
            raise TypeError(f"a must be a numpy.ndarray or an integer address, got {type(a).__name__}") from None
    if address == 0:
        return cap
    return min(address & -address, cap)


def aligned_empty(shape: tuple[int, ...] | list[int] | int, dtype: Any = np.float32, alignment: int = 128,
                  order: str = "C") -> np.ndarray:
    """An uninitialised array whose first byte sits at a multiple of ``alignment``.

    NumPy's allocator promises only what ``malloc`` promises (16 bytes on
    64-bit Linux). To do better, over-allocate a byte buffer by ``alignment``
    bytes, find the first address in it that is a multiple of ``alignment``,
    and build the array as a view starting there. The view keeps the buffer
    alive through ``.base``; the cost is ``alignment`` extra bytes.
    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Parameters
    ----------
    shape : tuple of int (or an int for 1-D)
        Non-negative sizes.
    dtype : dtype-like
        Element type with a fixed, non-zero itemsize and no Python objects.
    alignment : int
        A positive power of two, in bytes. If the dtype needs more (e.g. 16
        for complex128 on some systems), the dtype's alignment is used.
    order : {"C", "F"}
        Memory order of the result (always one contiguous block).

    Returns
    -------
    numpy.ndarray
        Writable, ``shape`` and ``dtype`` as asked, contiguous in ``order``,
        ``alignment_of(result) >= alignment``.

    Raises
    ------
    TypeError, ValueError
        For a bad shape, a dtype that is not one (or holds objects, or has no
        itemsize), an alignment that is not a positive power of two, or an
        order other than "C"/"F".

    Examples
    --------
    >>> x = aligned_empty((8, 3, 32, 32), np.float32, alignment=128)
    >>> x.shape, x.dtype, x.flags.c_contiguous, x.flags.writeable
    ((8, 3, 32, 32), dtype('float32'), True, True)
    >>> x.ctypes.data % 128
    0
    >>> alignment_of(aligned_empty(5, np.uint8, alignment=4096))
    4096
    """
    shape = _check.shape(shape, "shape")
    dt = _check.dtype(dtype, "dtype")
    alignment = _check.power_of_two(alignment, "alignment")
    _check.integer(alignment, "alignment", maximum=2**30)
    _check.one_of(order, "order", ("C", "F"))
    _check.allocation(math.prod(shape) * dt.itemsize + alignment, "shape")
    if dt.hasobject:
        raise ValueError(f"dtype must not hold Python objects (uninitialised memory is not a valid object), got {dt}")
    if dt.itemsize == 0:
        raise ValueError(f"dtype must have a fixed, non-zero itemsize (e.g. 'S8', not 'S'), got {dt}")
    align = max(alignment, dt.alignment)
    nbytes = math.prod(shape) * dt.itemsize
    raw = np.empty(nbytes + align, dtype=np.uint8)
    start = (-int(raw.__array_interface__["data"][0])) % align
    # np.ndarray(buffer=…, offset=…) places the first element exactly there,
    # even for a zero-size array (slicing would move an empty view's pointer).
    return np.ndarray(shape, dtype=dt, buffer=raw, offset=start, order=order)


def alignment_census(allocate: Callable[[], np.ndarray] | int, n: int = 500, cap: int = 4096) -> dict[int, int]:
    """Allocate ``n`` arrays, keep them all alive, and count their alignments.

    Keeping every array alive matters: an allocator hands a just-freed block
    straight back, so a loop that frees each array would measure one address
    ``n`` times. The ``n`` arrays are therefore distinct live buffers, and an
    ``allocate`` that hands back an address already counted is refused.
    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Parameters
    ----------
    allocate : callable or int
        A function returning a fresh array, or a byte count (then
        ``np.empty(allocate, np.uint8)`` is used).
    n : int
        How many allocations (>= 1).
    cap : int
        A power of two; the largest alignment told apart.

    Returns
    -------
    dict
        ``{alignment: count}`` for every power of two from 1 to ``cap``
        (zeros included), in increasing order; the counts add up to ``n``.

    Raises
    ------
    TypeError, ValueError
        If ``allocate`` is neither callable nor a byte count >= 0, returns a
        non-array or an address twice; ``n`` < 1; ``cap`` not a power of two.

    Examples
    --------
    >>> c = alignment_census(lambda: aligned_empty(10, "u1", alignment=256), n=50)
    >>> sum(c.values()), sum(v for k, v in c.items() if k < 256)
    (50, 0)
    >>> min(k for k, v in alignment_census(1000, n=50).items() if v) >= 16   # malloc's promise
    True
    """
    n = _check.integer(n, "n", minimum=1, maximum=100_000)
    cap = _check.power_of_two(cap, "cap")
    if not callable(allocate):
        try:
            size = _check.integer(allocate, "allocate", minimum=0)
        except TypeError:
            raise TypeError(f"allocate must be a callable or a byte count, got {type(allocate).__name__}") from None
        _check.allocation(n * size, "n × allocate")  # every array stays alive until the end
        allocate = functools.partial(np.empty, size, dtype=np.uint8)
    counts = {1 << k: 0 for k in range(cap.bit_length())}
    keep: dict[int, np.ndarray] = {}  # address -> array: every array stays alive until the end
    for i in range(n):
        arr = allocate()
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"allocate must return a numpy.ndarray, got {type(arr).__name__}")
        address = int(arr.__array_interface__["data"][0])
        if address in keep:
            raise ValueError(f"allocate must return a new buffer at each call; call {i + 1} "
                             f"returned address {address:#x} again")
        keep[address] = arr
        counts[alignment_of(address, cap)] += 1
    return counts


def cache_line_size() -> int | None:
    """The L1 data-cache line size this machine reports, in bytes (or None).

    Read from ``sysconf(_SC_LEVEL1_DCACHE_LINESIZE)`` or, failing that, from
    Linux's ``/sys/devices/system/cpu/cpu0/cache``.
    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Returns
    -------
    int or None
        Bytes per cache line, or ``None`` where the system does not say (it
        never raises: an unreadable answer is ``None``).

    Examples
    --------
    >>> n = cache_line_size()
    >>> n is None or (n > 0 and n & (n - 1) == 0)
    True
    """
    try:
        n = os.sysconf("SC_LEVEL1_DCACHE_LINESIZE")
        if n and n > 0:
            return int(n)
    except (ValueError, OSError, AttributeError):
        pass
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size") as f:
            n = int(f.read().strip())
            return n if n > 0 else None
    except (OSError, ValueError):
        return None


def cache_geometry(level: int = 1) -> tuple[int, int, int] | None:
    """``(line bytes, sets, ways)`` of this machine's data cache at ``level``, as Linux reports it (or None).

    A line at address ``a`` can live only in set ``(a // line) % sets``,
    which holds ``ways`` lines: addresses ``line · sets`` bytes apart (the
    *set span*) compete for one set, whatever the cache's total size. Read
    from ``/sys/devices/system/cpu/cpu0/cache`` (the level's data or unified
    cache). See chapter 2, "Layouts" (chapters/02_layouts.md), and chapter 4.

    Parameters
    ----------
    level : int
        Cache level, >= 1 (1 for L1, 2 for L2 …).

    Returns
    -------
    tuple of int, or None
        ``None`` where the system does not say (macOS, Windows, some
        containers); it never raises for an unreadable answer.

    Raises
    ------
    TypeError, ValueError
        If ``level`` is not an integer >= 1.

    Examples
    --------
    >>> g = cache_geometry(1)
    >>> g is None or all(isinstance(v, int) and v > 0 for v in g)
    True
    """
    level = _check.integer(level, "level", minimum=1)
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        indices = sorted(root.glob("index*"))
    except OSError:
        return None
    for index in indices:
        try:
            read = lambda name: (index / name).read_text().strip()  # noqa: E731
            if read("level") == str(level) and read("type") in ("Data", "Unified"):
                geometry = (int(read("coherency_line_size")), int(read("number_of_sets")),
                            int(read("ways_of_associativity")))
                return geometry if min(geometry) > 0 else None
        except (OSError, ValueError):
            return None
    return None


# ---- numbers so far ----------------------------------------------------------------


def numbers(ctx: _tally.Inputs) -> list[_tally.Row]:
    """Chapter 1's rows of the "numbers so far" table: CameraNet's input batch as memory.

    Follows the contract of :mod:`npukit.tally`; reads ``ctx.images``.
    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Raises
    ------
    TypeError, ValueError
        If ``ctx`` is not a :class:`npukit.tally.Context` or its images are not 4-D.

    Examples
    --------
    >>> from npukit import tally
    >>> [r.value for r in numbers(tally.Context(images=np.zeros((8, 3, 32, 32), np.float32)))]
    ['(8, 3, 32, 32) float32', '98,304 B', '12,288 B', '(12288, 4096, 128, 4) B']
    """
    _tally.inputs(ctx)
    images = _check.image_batch(ctx.images, "ctx.images")
    return [
        _tally.Row(1, "input batch", f"{images.shape} {images.dtype}", "images.shape, images.dtype"),
        _tally.Row(1, "input batch bytes", f"{images.nbytes:,} B", "images.nbytes"),
        _tally.Row(1, "one image", f"{images[0].nbytes:,} B", "images[0].nbytes = strides[0] when contiguous"),
        _tally.Row(1, "input batch strides", f"{images.strides} B", "images.strides"),
    ]
