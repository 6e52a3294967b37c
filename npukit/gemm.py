"""GEMM and tiling: the same multiply-adds, in an order that moves fewer bytes.

Every convolution and fully connected layer can be lowered to one matrix
product ``C[M×N] = A[M×K] · B[K×N]``: ``M·N·K`` multiply-accumulates (MACs),
``2·M·N·K`` floating-point operations. The invariant this module teaches:
*tiling never changes which MACs are done, only their order.* A tiled product
equals the untiled one (bit for bit here: every order visits the k-tiles of an
output tile in ascending order); the tile ``(bm, bn, bk)`` and the loop order
change how many bytes cross between DRAM and an on-chip buffer.

:func:`tiled_matmul` computes the product tile by tile, :func:`traffic` counts
the DRAM bytes a schedule moves, :func:`best_tile` picks the tile that moves
the fewest for a buffer, :func:`ladder` measures each way of writing the
product. ``itemsize`` is the element size of ``A`` and ``B``; ``c_itemsize``
that of ``C``, **equal to** ``itemsize`` **unless given** (4 for INT8 inputs
with INT32 accumulators).

See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from . import _check
from . import measure

if TYPE_CHECKING:
    from . import tally
    from .models import CameraNet

__all__ = ["ORDERS", "Traffic", "Rung", "conv_as_gemm", "largest_pointwise", "tiled_matmul", "footprint", "traffic",
           "compulsory", "best_tile", "ladder", "sweep_tiles", "numbers"]

#: The six loop orders of a tiled GEMM, outermost loop first.
ORDERS: tuple[str, ...] = ("mnk", "mkn", "nmk", "nkm", "kmn", "knm")

#: Which loop indices each operand's tile depends on.
_DEPS = {"A": "mk", "B": "kn", "C": "mn"}

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int8))


# ---- argument checks ----------------------------------------------------------


def _tile(tile: Any, name: str = "tile") -> tuple[int, int, int]:
    if isinstance(tile, (str, bytes)) or not isinstance(tile, (tuple, list)) or len(tile) != 3:
        raise TypeError(f"{name} must be a tuple (bm, bn, bk) of three positive integers, got {tile!r}")
    return tuple(_check.integer(t, f"{name}[{i}]", minimum=1) for i, t in enumerate(tile))  # type: ignore[return-value]


def _order(order: Any, name: str = "order") -> str:
    if not isinstance(order, str):
        raise TypeError(f"{name} must be a string such as 'mnk', got {type(order).__name__}")
    return _check.one_of(order, name, ORDERS)


def _dims(M: Any, N: Any, K: Any) -> tuple[int, int, int]:
    return _check.integer(M, "M", minimum=1), _check.integer(N, "N", minimum=1), _check.integer(K, "K", minimum=1)


def _itemsizes(itemsize: Any, c_itemsize: Any) -> tuple[int, int]:
    """``(itemsize, c_itemsize)``, checked; ``c_itemsize`` defaults to ``itemsize``."""
    isz = _check.integer(itemsize, "itemsize", minimum=1)
    return isz, isz if c_itemsize is None else _check.integer(c_itemsize, "c_itemsize", minimum=1)


# ---- lowering -----------------------------------------------------------------


def conv_as_gemm(c_out: int, c_in: int, h_out: int, w_out: int, kh: int = 1, kw: int = 1, batch: int = 1,
                 groups: int = 1) -> tuple[int, int, int]:
    """The GEMM dimensions ``(M, N, K)`` of a convolution lowered with im2col.

    The weights ``W[c_out, c_in·kh·kw]`` multiply the im2col matrix
    ``X[c_in·kh·kw, batch·h_out·w_out]``. A 1×1 (pointwise) convolution needs
    no im2col: ``X`` is the activation itself, ``c_in`` rows of ``h·w``
    pixels; a fully connected layer has ``h_out = w_out = kh = kw = 1``. See
    chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    c_out, c_in, h_out, w_out, kh, kw, batch : int
        Channels, output height and width, kernel height and width, images per call.
    groups : int
        Convolution groups; each is its own GEMM, and *one* group's is returned.

    Returns
    -------
    tuple of int
        ``M = c_out/groups``, ``N = batch·h_out·w_out``, ``K = (c_in/groups)·kh·kw``.

    Raises
    ------
    TypeError, ValueError
        If an argument is not an integer ≥ 1, or ``groups`` does not divide both channel counts.

    Examples
    --------
    >>> conv_as_gemm(c_out=64, c_in=32, h_out=8, w_out=8)        # pointwise
    (64, 64, 32)
    >>> conv_as_gemm(16, 3, 16, 16, kh=3, kw=3)                  # 3×3 stem
    (16, 256, 27)
    """
    names = ("c_out", "c_in", "h_out", "w_out", "kh", "kw", "batch", "groups")
    vals = [_check.integer(v, n, minimum=1) for v, n in zip((c_out, c_in, h_out, w_out, kh, kw, batch, groups), names)]
    c_out, c_in, h_out, w_out, kh, kw, batch, groups = vals
    if c_out % groups or c_in % groups:
        raise ValueError(f"groups must divide c_out={c_out} and c_in={c_in}, got {groups}")
    return c_out // groups, batch * h_out * w_out, (c_in // groups) * kh * kw


def largest_pointwise(net: CameraNet, batch: int = 1) -> tuple[str, tuple[int, int, int]]:
    """CameraNet's largest pointwise (1×1) convolution and its GEMM dimensions.

    "Largest" means the most MACs, then the most weights. See chapter 4,
    "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    net : npukit.models.CameraNet
        The network.
    batch : int
        Images per call; ``N`` grows with it.

    Returns
    -------
    tuple
        ``(layer name, (M, N, K))`` as :func:`conv_as_gemm` gives them.

    Raises
    ------
    TypeError, ValueError
        If ``net`` is not a CameraNet or ``batch`` not an integer ≥ 1.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> largest_pointwise(CameraNet())           # the architecture is enough
    ('block3.pw', (128, 16, 64))
    """
    from . import models

    rows = [r for r in models.summary(net, batch) if r["kind"] == "pointwise"]
    if not rows:
        raise ValueError("net must have a pointwise (1×1) convolution")
    row = max(rows, key=lambda r: (r["macs"], r["params"]))
    _, c_out, h, w = row["output"]
    return row["layer"], conv_as_gemm(c_out, row["input"][1], h, w, batch=row["output"][0])


# ---- the tiled product ------------------------------------------------------------


def _operands(A: Any, B: Any) -> tuple[np.ndarray, np.ndarray]:
    A, B = _check.as_array(A, "A"), _check.as_array(B, "B")
    if A.ndim != 2:
        raise ValueError(f"A must be 2-D with shape (M, K), got shape {A.shape}")
    if B.ndim != 2:
        raise ValueError(f"B must be 2-D with shape (K, N), got shape {B.shape}")
    if A.dtype != B.dtype:
        raise TypeError(f"A and B must have the same dtype, got A {A.dtype} and B {B.dtype}")
    if A.dtype not in _DTYPES:
        raise TypeError(f"A.dtype must be float32, float64 or int8, got {A.dtype}")
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"A's columns must equal B's rows: A has shape {A.shape}, B has shape {B.shape}")
    return A, B


def tiled_matmul(A: np.ndarray, B: np.ndarray, tile: Sequence[int] = (256, 256, 256), order: str = "mnk") -> np.ndarray:
    """Compute ``A @ B`` tile by tile, in a given loop order.

    The loops run over tile indices, outermost first as spelled by ``order``;
    for ``"mnk"``::

        for i in range(0, M, bm):            # m: rows of C
            for j in range(0, N, bn):        # n: columns of C
                for p in range(0, K, bk):    # k: the reduction
                    C[i:i+bm, j:j+bn] += A[i:i+bm, p:p+bk] @ B[p:p+bk, j:j+bn]

    Each tile product is one ``numpy.matmul`` on views. Edge tiles are ragged
    (cut to what is left). Big tiles amortise Python's per-call overhead. See
    chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    A, B : numpy.ndarray
        ``(M, K)`` and ``(K, N)``, both float32, float64 or int8.
    tile : tuple of int
        ``(bm, bn, bk)``, each >= 1.
    order : str
        One of :data:`ORDERS`.

    Returns
    -------
    numpy.ndarray
        ``C``, ``(M, N)``, of the inputs' dtype, but **int32** for int8 (exact
        integer MACs, as an INT8 array with 32-bit accumulators; a sum beyond
        int32 wraps like ``numpy.matmul`` on int32, which needs ``K`` > 131 072).

    Raises
    ------
    TypeError, ValueError
        If an operand is not a 2-D array of a supported dtype, the two differ
        in dtype or inner dimension, ``tile`` is not three integers ≥ 1, or
        ``order`` is not one of :data:`ORDERS`.

    Examples
    --------
    >>> A = np.arange(12, dtype=np.float64).reshape(3, 4)
    >>> np.array_equal(tiled_matmul(A, np.ones((4, 5)), tile=(2, 2, 3), order="kmn"), A @ np.ones((4, 5)))
    True
    >>> a8 = np.full((2, 300), 127, dtype=np.int8)
    >>> tiled_matmul(a8, a8.T.copy(), tile=(1, 1, 64)).tolist()   # 300·127² overflows int16, not int32
    [[4838700, 4838700], [4838700, 4838700]]
    """
    A, B = _operands(A, B)
    bm, bn, bk = _tile(tile)
    order = _order(order)
    (M, K), N = A.shape, B.shape[1]
    integer = A.dtype == np.int8
    if integer:
        # int8·int8 products are < 2**15 and a tile sums at most bk of them: in
        # float64 (53-bit mantissa) every partial sum is an exact integer.
        A, B = A.astype(np.float64), B.astype(np.float64)
    C = np.zeros((M, N), dtype=np.int32 if integer else A.dtype) if integer or K == 0 else np.empty((M, N), A.dtype)
    scratch = np.empty((min(bm, M), min(bn, N)), dtype=A.dtype)
    ranges = {"m": range(0, M, bm), "n": range(0, N, bn), "k": range(0, K, bk)}
    pm, pn, pk = order.index("m"), order.index("n"), order.index("k")
    for idx in itertools.product(ranges[order[0]], ranges[order[1]], ranges[order[2]]):
        i, j, p = idx[pm], idx[pn], idx[pk]
        a, b, c = A[i : i + bm, p : p + bk], B[p : p + bk, j : j + bn], C[i : i + bm, j : j + bn]
        if integer:
            part = np.matmul(a, b, out=scratch[: c.shape[0], : c.shape[1]])
            c += part.astype(np.int64).astype(np.int32)  # exact, then int32 wrap-around
        elif p == 0:  # first k-step of this output tile: overwrite, no add
            np.matmul(a, b, out=c)
        else:
            c += np.matmul(a, b, out=scratch[: c.shape[0], : c.shape[1]])
    return C


# ---- the traffic model ----------------------------------------------------------


@dataclass(frozen=True)
class Traffic:
    """DRAM bytes moved by one tile schedule (see :func:`traffic`).

    ``a_read``/``b_read``: bytes of ``A``/``B`` loaded; ``c_read``: partial
    sums of ``C`` loaded back; ``c_write``: bytes of ``C`` written;
    ``footprint``: buffer bytes of the three resident tiles. See chapter 4,
    "GEMM and tiling" (chapters/04_gemm.md).
    """

    a_read: int
    b_read: int
    c_read: int
    c_write: int
    footprint: int

    def __post_init__(self) -> None:
        for field in ("a_read", "b_read", "c_read", "c_write", "footprint"):
            _check.integer(getattr(self, field), field, minimum=0)

    @property
    def reads(self) -> int:
        """All bytes read from DRAM."""
        return self.a_read + self.b_read + self.c_read

    @property
    def writes(self) -> int:
        """All bytes written to DRAM."""
        return self.c_write

    @property
    def total(self) -> int:
        """Reads plus writes."""
        return self.reads + self.writes


def footprint(M: int, N: int, K: int, tile: Sequence[int], itemsize: int = 4, *, c_itemsize: int | None = None) -> int:
    """Bytes of on-chip buffer that hold one A-, one B- and one C-tile, each clipped to its matrix.

    See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    tile : tuple of int
        ``(bm, bn, bk)``.
    itemsize, c_itemsize : int
        Bytes per element of ``A`` and ``B``, and of ``C`` (default: ``itemsize``).

    Returns
    -------
    int
        ``(bm·bk + bk·bn)·itemsize + bm·bn·c_itemsize``.

    Raises
    ------
    TypeError, ValueError
        For non-integer or non-positive arguments.

    Examples
    --------
    >>> footprint(512, 512, 512, (64, 64, 32), itemsize=4)   # 8 KiB + 8 KiB + 16 KiB
    32768
    >>> footprint(10, 10, 10, (64, 64, 64), itemsize=1, c_itemsize=4)
    600
    """
    M, N, K = _dims(M, N, K)
    bm, bn, bk = _tile(tile)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    bm, bn, bk = min(bm, M), min(bn, N), min(bk, K)
    return (bm * bk + bk * bn) * isz + bm * bn * csz


def _refetch(counts: dict, order: str, operand: str) -> Any:
    """How many times each tile of ``operand`` is loaded (``counts`` may hold arrays).

    Only the loop the operand does *not* depend on can bring a tile back: if
    a loop inside it changes the operand's tile, every pass reloads all the
    tiles (``r`` = its trip count); otherwise ``r = 1``.
    """
    (free,) = set("mnk") - set(_DEPS[operand])
    inside = order[order.index(free) + 1 :]  # every loop inside `free` indexes the operand
    changes = sum(counts[d] > 1 for d in inside) > 0
    return np.where(changes, counts[free], 1)


def _bytes(M: int, N: int, K: int, counts: dict, order: str, isz: int, csz: int) -> tuple[Any, Any, Any]:
    """``(A bytes, B bytes, C bytes written)`` loaded or stored; C is read back ``C written − M·N·csz``."""
    r_a, r_b, r_c = (_refetch(counts, order, x) for x in "ABC")
    return r_a * (M * K * isz), r_b * (K * N * isz), r_c * (M * N * csz)


def traffic(M: int, N: int, K: int, tile: Sequence[int], order: str = "mnk", itemsize: int = 4,
            buffer_bytes: int | None = None, *, c_itemsize: int | None = None) -> Traffic:
    """DRAM bytes read and written by a tiled GEMM ``C = A·B``.

    The model (a schedule's *compulsory plus capacity* traffic, no caches):

    * The buffer has one slot per operand (no double buffering). Edge tiles
      are ragged and move only their real bytes.
    * The loops run over tile indices in ``order``, outermost first. At each
      step the A-tile ``(m, k)``, B-tile ``(k, n)`` and C-tile ``(m, n)`` must
      be resident; a tile the previous step had stays free, otherwise it is
      loaded. **Which tile stays** depends on the innermost loop: ``k``
      innermost (``mnk``, ``nmk``) keeps C for a whole reduction, ``n`` (``mkn``,
      ``kmn``) keeps A, ``m`` (``nkm``, ``knm``) keeps B. A loop that runs once
      evicts nothing.
    * ``C`` starts at zero on chip; a C-tile is written every time it leaves
      (evicted, or at the end) and read back when it returns.

    So each tile of an operand is loaded ``r`` times: the trip count of the
    loop the operand does not depend on if a loop inside it changes the
    operand's tile, else 1. ``A`` costs ``r_A·M·K·itemsize``, ``B``
    ``r_B·K·N·itemsize``, ``C`` ``r_C·M·N·c_itemsize`` written and
    ``(r_C − 1)·M·N·c_itemsize`` read. All ``r = 1`` is :func:`compulsory`.
    See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    tile : tuple of int
        ``(bm, bn, bk)``, each >= 1.
    order : str
        One of :data:`ORDERS`, outermost loop first.
    itemsize, c_itemsize : int
        Bytes per element of ``A`` and ``B``, and of ``C`` (default: ``itemsize``).
    buffer_bytes : int, optional
        If given, the buffer the tile must fit (see :func:`footprint`).

    Returns
    -------
    Traffic
        ``a_read``, ``b_read``, ``c_read``, ``c_write`` and ``footprint``, in bytes.

    Raises
    ------
    TypeError, ValueError
        If a dimension, tile size or item size is not an integer ≥ 1,
        ``order`` is unknown, or the tile does not fit ``buffer_bytes``.

    Examples
    --------
    ``k`` innermost writes ``C`` once, ``k`` outermost once per k-step:

    >>> traffic(256, 256, 256, (64, 64, 64), "mnk", itemsize=4).c_write // (256 * 256 * 4)
    1
    >>> traffic(256, 256, 256, (64, 64, 64), "kmn", itemsize=4).c_write // (256 * 256 * 4)
    4
    """
    M, N, K = _dims(M, N, K)
    bm, bn, bk = _tile(tile)
    order = _order(order)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    need = footprint(M, N, K, (bm, bn, bk), isz, c_itemsize=csz)
    if buffer_bytes is not None and need > _check.integer(buffer_bytes, "buffer_bytes", minimum=1):
        raise ValueError(f"tile {(bm, bn, bk)} needs {need} bytes of buffer for one A-, B- and C-tile, "
                         f"more than buffer_bytes={buffer_bytes}")
    counts = {"m": -(-M // bm), "n": -(-N // bn), "k": -(-K // bk)}
    a, b, c = (int(x) for x in _bytes(M, N, K, counts, order, isz, csz))
    return Traffic(a_read=a, b_read=b, c_read=c - M * N * csz, c_write=c, footprint=need)


def compulsory(M: int, N: int, K: int, itemsize: int = 4, *, c_itemsize: int | None = None) -> Traffic:
    """The compulsory minimum: read ``A`` and ``B`` once, write ``C`` once.

    No schedule moves less; a buffer holding all three matrices reaches it.
    See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    itemsize, c_itemsize : int
        Bytes per element of ``A`` and ``B``, and of ``C`` (default: ``itemsize``).

    Returns
    -------
    Traffic
        With ``c_read = 0``; its ``footprint`` is the whole problem's bytes.

    Raises
    ------
    TypeError, ValueError
        For non-integer or non-positive arguments.

    Examples
    --------
    >>> compulsory(64, 64, 64, itemsize=1, c_itemsize=4).total
    24576
    """
    M, N, K = _dims(M, N, K)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    return Traffic(M * K * isz, K * N * isz, 0, M * N * csz, (M * K + K * N) * isz + M * N * csz)


# ---- the best tile ------------------------------------------------------------------


def _tile_sizes(n: int, upto: int) -> np.ndarray:
    """The tile sizes ≤ ``upto`` that are the smallest for their count ``⌈n/t⌉``.

    They are every ``t ≤ √n`` and ``⌈n/c⌉`` for ``c ≤ √n + 1``: about ``2·√n`` sizes, not ``n``.
    """
    s = math.isqrt(n)
    big = -(-n // np.arange(1, s + 2, dtype=np.int64))
    return np.unique(np.concatenate([np.arange(1, min(s, upto) + 1, dtype=np.int64), big[big <= upto]]))


def _widest(d: str, tiles: dict, dims: dict, isz: int, csz: int, buf: int) -> Any:
    """The largest tile along ``d`` that fits ``buf`` beside the two ``tiles`` given (0: none fits)."""
    bm, bn, bk = (tiles.get(x) for x in "mnk")
    if d == "m":  # the footprint (bm·bk + bk·bn)·isz + bm·bn·csz is linear in each tile size
        base, per = bk * bn * isz, bk * isz + bn * csz
    elif d == "n":
        base, per = bm * bk * isz, bk * isz + bm * csz
    else:
        base, per = bm * bn * csz, (bm + bn) * isz
    return np.minimum(np.maximum((buf - base) // per, 0), dims[d])


def _best_counts(dims: dict, order: str, isz: int, csz: int, buf: int) -> list[tuple[Any, Any, Any]]:
    """Tile counts, in loop order ``(x, y, z)`` (outermost first), among which is the best tile.

    A count that grows never lowers the traffic and always adds steps, so for
    fixed counts elsewhere the best count of a loop is the smallest that
    fits. The traffic is compulsory when ``c_y = c_z = 1``, ``W_x·c_x + const``
    when only ``c_z = 1``, and ``W_x·c_x + W_y·c_y + const`` when ``c_z > 1``:
    one point for each of the first two cases; for the third, every count of
    ``x`` (or ``y``, the smaller dimension) with the smallest fitting others.
    """
    x, y, z = order
    fit = lambda d, **t: _widest(d, t, dims, isz, csz, buf)  # noqa: E731
    count = lambda d, b: -(-dims[d] // b)  # noqa: E731
    size = lambda d, c: -(-dims[d] // c)  # noqa: E731 (the smallest tile of count c)
    out = []
    if (bx := fit(x, **{y: dims[y], z: dims[z]})) >= 1:  # c_y = c_z = 1
        out.append((count(x, bx), 1, 1))
    if dims[y] >= 2 and (bx := fit(x, **{y: 1, z: dims[z]})) >= 1:  # c_z = 1 < c_y
        cx = count(x, bx)
        out.append((cx, max(2, count(y, fit(y, **{x: size(x, cx), z: dims[z]}))), 1))
    if dims[z] >= 2:  # c_z > 1
        u, v = (x, y) if dims[x] <= dims[y] else (y, x)
        bu = _tile_sizes(dims[u], int(fit(u, **{v: 1, z: 1})))
        cv = count(v, fit(v, **{u: bu, z: 1}))
        cz = np.maximum(2, count(z, fit(z, **{u: bu, v: size(v, cv)})))
        cu = count(u, bu)
        out.append((cu, cv, cz) if u == x else (cv, cu, cz))
    return out


def best_tile(M: int, N: int, K: int, buffer_bytes: int, itemsize: int = 4, order: str = "mnk", *,
              c_itemsize: int | None = None) -> tuple[int, int, int]:
    """The tile that fits ``buffer_bytes`` and moves the fewest DRAM bytes.

    Under :func:`traffic` the bytes depend on a tile only through the tile
    *counts* ``⌈M/bm⌉``, ``⌈N/bn⌉``, ``⌈K/bk⌉``, and for each count the
    smallest tile reaching it needs the least buffer. Ties go to fewer tile
    steps (fewer DMA transfers), then a smaller footprint, then the smaller
    ``(bm, bn, bk)``. The search is exact without trying every count: with
    two counts fixed the best third is the smallest that fits, so about
    ``2·√n`` candidates are scored whatever the sizes. See chapter 4, "GEMM
    and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1, with ``M·N·K·(itemsize + c_itemsize) < 2⁶¹``.
    buffer_bytes : int
        On-chip buffer available for one A-, one B- and one C-tile.
    itemsize, c_itemsize : int
        Bytes per element of ``A`` and ``B``, and of ``C`` (default: ``itemsize``).
    order : str
        Loop order of the schedule (one of :data:`ORDERS`).

    Returns
    -------
    tuple of int
        ``(bm, bn, bk)``.

    Raises
    ------
    TypeError, ValueError
        If an argument is not an integer ≥ 1, ``order`` is unknown, not even
        a 1×1×1 tile fits, or the traffic would overflow 64-bit integers.

    Examples
    --------
    The best tile need not be a power of two:

    >>> best_tile(256, 256, 256, buffer_bytes=48 * 1024, itemsize=4)
    (86, 128, 5)
    >>> traffic(256, 256, 256, (86, 128, 5), "mnk", 4).total / compulsory(256, 256, 256, 4).total
    2.0
    """
    M, N, K = _dims(M, N, K)
    order = _order(order)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    buf = _check.integer(buffer_bytes, "buffer_bytes", minimum=1)
    if 2 * isz + csz > buf:
        raise ValueError(f"buffer_bytes must hold at least a 1×1×1 tile ({2 * isz + csz} bytes), got {buf}")
    if M * N * K * (isz + csz) >= 2**61:
        raise ValueError(f"M·N·K = {M * N * K:,} is too large: its traffic overflows 64-bit integers "
                         "(keep M·N·K·(itemsize + c_itemsize) below 2**61)")
    if footprint(M, N, K, (M, N, K), isz, c_itemsize=csz) <= buf:
        return M, N, K
    dims = {"m": M, "n": N, "k": K}
    points = [np.broadcast_arrays(*(np.asarray(c, dtype=np.int64) for c in p))
              for p in _best_counts(dims, order, isz, csz, buf)]
    counts = dict(zip(order, (np.concatenate([p[i].ravel() for p in points]) for i in range(3))))
    bm, bn, bk = (-(-dims[d] // counts[d]) for d in "mnk")
    a, b, c = _bytes(M, N, K, counts, order, isz, csz)
    keys = (a + b + 2 * c, counts["m"] * counts["n"] * counts["k"], (bm * bk + bk * bn) * isz + bm * bn * csz, bm, bn, bk)
    best = np.lexsort(keys[::-1])[0]  # lexsort's last key is the primary one
    return int(bm[best]), int(bn[best]), int(bk[best])


# ---- the measured ladder -----------------------------------------------------------


@dataclass(frozen=True)
class Rung:
    """One measured way of computing ``A @ B`` at ``n×n×n`` (see :func:`ladder`).

    ``seconds``: median time of one product; ``gflops = 2·n³/seconds/1e9``;
    ``error``: largest difference from ``numpy.matmul``, relative to the
    product's largest entry; ``ok``: within the dtype's tolerance. See
    chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
    """

    name: str
    n: int
    seconds: float
    gflops: float
    error: float
    ok: bool

    def __post_init__(self) -> None:
        _check.text(self.name, "name")
        _check.integer(self.n, "n", minimum=1)
        for field in ("seconds", "gflops"):
            object.__setattr__(self, field, _check.positive(getattr(self, field), field))
        if isinstance(self.error, bool) or not isinstance(self.error, Real):
            raise TypeError(f"error must be a real number, got {type(self.error).__name__}")
        if self.error < 0:  # NaN passes: a product with NaN in it has no finite error
            raise ValueError(f"error must be >= 0 (or NaN), got {self.error!r}")
        _check.boolean(self.ok, "ok")


def _python_matmul(a: list, b: list) -> list:
    """C = A·B with three Python loops over lists (the bottom rung)."""
    n, k, m = len(a), len(b), len(b[0])
    c = [[0.0] * m for _ in range(n)]
    for i in range(n):
        ai, ci = a[i], c[i]
        for j in range(m):
            s = 0.0
            for p in range(k):
                s += ai[p] * b[p][j]
            ci[j] = s
    return c


def _row_matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """C = A·B with one vector operation per (i, k): C[i, :] += A[i, k]·B[k, :]."""
    C = np.zeros((A.shape[0], B.shape[1]), dtype=A.dtype)
    for i in range(A.shape[0]):
        ci, ai = C[i], A[i]
        for p in range(A.shape[1]):
            ci += ai[p] * B[p]
    return C


def _float_dtype(dtype: Any) -> np.dtype:
    dt = _check.dtype(dtype)
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    return dt


def _timing(repeat: Any, warmup: Any, seed: Any) -> tuple[int, int, np.random.Generator]:
    repeat, warmup = _check.integer(repeat, "repeat", minimum=1), _check.integer(warmup, "warmup", minimum=0)
    return repeat, warmup, np.random.default_rng(_check.integer(seed, "seed", minimum=0))


def _measure(name: str, n: int, fn: Callable[[], Any], want: np.ndarray, repeat: int, warmup: int) -> Rung:
    """Check ``fn()`` against ``want`` (relative to the largest entry), then time it."""
    got = np.asarray(fn(), dtype=want.dtype)
    err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
    tol = 1e-4 if want.dtype == np.float32 else 1e-10
    secs = measure.timeit(fn, repeat=repeat, warmup=warmup)
    return Rung(name, n, secs, 2.0 * n**3 / secs / 1e9, err, bool(err <= tol))


def ladder(n: int = 512, *, python_n: int = 48, row_n: int = 128, small_tile: Sequence[int] = (16, 16, 16),
           good_tile: Sequence[int] = (256, 256, 1024), dtype: Any = "float32", repeat: int = 5, warmup: int = 1,
           seed: int = 0) -> list[Rung]:
    """Measure five ways of computing a square GEMM, slowest first.

    ``python`` (three Python loops over lists, at ``python_n``),
    ``row-vectorised`` (one NumPy vector update per ``(i, k)``, at
    ``row_n``), ``tiled, small tile`` and ``tiled, good tile``
    (:func:`tiled_matmul`, at ``n``) and ``numpy.matmul`` (BLAS, at ``n``).
    Each result is checked against ``numpy.matmul`` and timed with
    :func:`npukit.measure.timeit`; GFLOP/s (``2·n³/t``) makes sizes
    comparable. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    n, python_n, row_n : int
        Sizes of the fast rungs, the pure-Python rung and the row-vectorised rung.
    small_tile, good_tile : tuple of int
        Tiles of the two tiled rungs.
    dtype : dtype-like
        ``"float32"`` or ``"float64"``.
    repeat, warmup, seed : int
        Timed repetitions (≥ 1; at most 3 for the slow rungs), warm-up calls
        (≥ 0; at most 1 for the slow rungs), seed of the inputs (≥ 0).

    Returns
    -------
    list of Rung
        In ladder order.

    Raises
    ------
    TypeError, ValueError
        If a size, tile, count or seed is not an integer in range, or
        ``dtype`` is not float32 or float64.

    Examples
    --------
    >>> rungs = ladder(32, python_n=8, row_n=8, good_tile=(16, 16, 32), repeat=1, warmup=0)
    >>> [r.name for r in rungs], all(r.ok for r in rungs)
    (['python', 'row-vectorised', 'tiled, small tile', 'tiled, good tile', 'numpy.matmul'], True)
    """
    n, python_n, row_n = (_check.integer(v, k, minimum=1) for v, k in ((n, "n"), (python_n, "python_n"), (row_n, "row_n")))
    small_tile, good_tile = _tile(small_tile, "small_tile"), _tile(good_tile, "good_tile")
    dt = _float_dtype(dtype)
    repeat, warmup, rng = _timing(repeat, warmup, seed)

    def inputs(size: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.standard_normal((size, size)).astype(dt), rng.standard_normal((size, size)).astype(dt)

    slow = dict(repeat=min(repeat, 3), warmup=min(warmup, 1))  # the two slow rungs
    A, B = inputs(python_n)
    a, b = A.tolist(), B.tolist()
    rungs = [_measure("python", python_n, lambda: _python_matmul(a, b), A @ B, **slow)]
    A1, B1 = inputs(row_n)
    rungs.append(_measure("row-vectorised", row_n, lambda: _row_matmul(A1, B1), A1 @ B1, **slow))
    A2, B2 = inputs(n)
    want = A2 @ B2
    rungs.append(_measure("tiled, small tile", n, lambda: tiled_matmul(A2, B2, small_tile), want, repeat, warmup))
    rungs.append(_measure("tiled, good tile", n, lambda: tiled_matmul(A2, B2, good_tile), want, repeat, warmup))
    rungs.append(_measure("numpy.matmul", n, lambda: np.matmul(A2, B2), want, repeat, warmup))
    return rungs


def sweep_tiles(n: int = 512, sides: Sequence[int] = (16, 32, 64, 128, 256, 512), *, dtype: Any = "float32",
                repeat: int = 3, warmup: int = 1, seed: int = 0) -> list[Rung]:
    """Measure :func:`tiled_matmul` on an ``n×n×n`` product with cubic tiles of each side.

    Each tile is one call into NumPy, so ``(n/b)³`` calls pay Python's
    per-call overhead while the arithmetic stays ``2·n³``: the sweep shows
    how large a tile must be for the overhead to stop mattering. See
    chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    n : int
        Matrix size.
    sides : sequence of int
        Tile sides ``b`` (tile ``(b, b, b)``), at least one.
    dtype : dtype-like
        ``"float32"`` or ``"float64"``.
    repeat, warmup, seed : int
        As for :func:`npukit.measure.timeit` (≥ 1 and ≥ 0); seed of the inputs (≥ 0).

    Returns
    -------
    list of Rung
        One per side, named ``"tile b³"``, each checked against ``numpy.matmul``.

    Raises
    ------
    TypeError, ValueError
        If ``sides`` is not a non-empty list or tuple, a size, side, count or
        seed not an integer in range, or ``dtype`` not float32 or float64.

    Examples
    --------
    >>> [(r.name, r.ok) for r in sweep_tiles(64, sides=(16, 64), repeat=1, warmup=0)]
    [('tile 16³', True), ('tile 64³', True)]
    """
    n = _check.integer(n, "n", minimum=1)
    sides = [_check.integer(b, f"sides[{i}]", minimum=1) for i, b in enumerate(_check.sequence(sides, "sides", min_length=1))]
    dt = _float_dtype(dtype)
    repeat, warmup, rng = _timing(repeat, warmup, seed)
    A = rng.standard_normal((n, n)).astype(dt)
    B = rng.standard_normal((n, n)).astype(dt)
    want = A @ B
    return [_measure(f"tile {b}³", n, lambda b=b: tiled_matmul(A, B, (b, b, b)), want, repeat, warmup) for b in sides]


# ---- numbers so far -----------------------------------------------------------------


def numbers(ctx: tally.Context) -> list[tally.Row]:
    """Chapter 4's rows of the "numbers so far" table: CameraNet's largest pointwise conv, tiled.

    Follows the contract of :mod:`npukit.tally`. For the layer
    :func:`largest_pointwise` finds in ``ctx.net``: its GEMM dimensions and
    MACs, and the DRAM traffic of the best tile for ``ctx.npu_buffer`` bytes
    (INT8 operands with INT32 accumulators, as on an NPU) against the
    compulsory minimum. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Examples
    --------
    >>> from npukit import tally
    >>> numbers(tally.Context(npu_buffer=8 * 1024))[0].value
    'M=128, N=16, K=64 (131,072 MACs)'
    """
    from . import tally

    _check.instance(ctx, "ctx", tally.Context, "tally.Context")
    layer, (M, N, K) = largest_pointwise(ctx.net)
    buffer_bytes, itemsize, c_itemsize = ctx.npu_buffer, 1, 4
    tile = best_tile(M, N, K, buffer_bytes, itemsize, c_itemsize=c_itemsize)
    t = traffic(M, N, K, tile, "mnk", itemsize, buffer_bytes, c_itemsize=c_itemsize)
    low = compulsory(M, N, K, itemsize, c_itemsize=c_itemsize)
    return [
        tally.Row(4, f"{layer} (largest pointwise conv) as a GEMM", f"M={M}, N={N}, K={K} ({M * N * K:,} MACs)",
                  "npukit.gemm.largest_pointwise and conv_as_gemm"),
        tally.Row(4, f"best tile for a {buffer_bytes / 1024:g} KiB buffer "
                     f"({itemsize}-byte operands, {c_itemsize}-byte accumulators, order mnk)",
                  f"{tile} → {t.total:,} B of DRAM traffic", "npukit.gemm.best_tile and traffic"),
        tally.Row(4, "traffic / compulsory minimum", f"{t.total / low.total:.2f}×", "npukit.gemm.traffic vs compulsory"),
    ]
