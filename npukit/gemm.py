"""GEMM and tiling: the same multiply-adds, in an order that moves fewer bytes.

Every convolution and fully connected layer can be lowered to one matrix
product ``C[M×N] = A[M×K] · B[K×N]``: ``M·N·K`` multiply-accumulates (MACs),
``2·M·N·K`` floating-point operations. The invariant this module teaches:

    *Tiling never changes which MACs are done, only their order.* A tiled
    product equals the untiled one (bit for bit here, since every order visits
    the k-tiles of an output tile in the same ascending order); what the tile
    shape ``(bm, bn, bk)`` and the loop order change is how many bytes must
    cross between DRAM and an on-chip buffer.

:func:`tiled_matmul` computes the product tile by tile, :func:`traffic` counts
the DRAM bytes a tile schedule moves, :func:`best_tile` picks the tile that
moves the fewest bytes for a buffer size, and :func:`ladder` measures how fast
each way of writing the product runs on this machine.

See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import _check
from . import measure

if TYPE_CHECKING:
    from . import tally

__all__ = [
    "ORDERS",
    "Traffic",
    "Rung",
    "conv_as_gemm",
    "largest_pointwise",
    "tiled_matmul",
    "footprint",
    "traffic",
    "compulsory",
    "best_tile",
    "ladder",
    "sweep_tiles",
    "numbers",
]

#: The six loop orders of a tiled GEMM, outermost loop first.
ORDERS: tuple[str, ...] = ("mnk", "mkn", "nmk", "nkm", "kmn", "knm")

#: Which loop indices each operand's tile depends on.
_DEPS = {"A": "mk", "B": "kn", "C": "mn"}

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int8))


# ---- argument checks ----------------------------------------------------------


def _tile(tile: Any, name: str = "tile") -> tuple[int, int, int]:
    if not isinstance(tile, (tuple, list)) or len(tile) != 3:
        raise TypeError(f"{name} must be a tuple (bm, bn, bk) of three positive integers, got {tile!r}")
    return tuple(_check.integer(t, f"{name}[{i}]", minimum=1) for i, t in enumerate(tile))  # type: ignore[return-value]


def _order(order: Any) -> str:
    if not isinstance(order, str):
        raise TypeError(f"order must be a string such as 'mnk', got {type(order).__name__}")
    return _check.one_of(order, "order", ORDERS)


def _dims(M: Any, N: Any, K: Any) -> tuple[int, int, int]:
    return (
        _check.integer(M, "M", minimum=1),
        _check.integer(N, "N", minimum=1),
        _check.integer(K, "K", minimum=1),
    )


def _itemsizes(itemsize: Any, c_itemsize: Any) -> tuple[int, int]:
    isz = _check.integer(itemsize, "itemsize", minimum=1)
    csz = isz if c_itemsize is None else _check.integer(c_itemsize, "c_itemsize", minimum=1)
    return isz, csz


# ---- lowering -----------------------------------------------------------------


def conv_as_gemm(
    c_out: int, c_in: int, h_out: int, w_out: int, kh: int = 1, kw: int = 1, batch: int = 1, groups: int = 1
) -> tuple[int, int, int]:
    """The GEMM dimensions ``(M, N, K)`` of a convolution lowered with im2col.

    For an NCHW convolution the weights ``W[c_out, c_in·kh·kw]`` multiply the
    im2col matrix ``X[c_in·kh·kw, batch·h_out·w_out]``:
    ``M = c_out``, ``N = batch·h_out·w_out``, ``K = c_in·kh·kw``. A 1×1
    (pointwise) convolution needs no im2col at all: ``X`` is the activation
    tensor itself, viewed as ``c_in`` rows of ``h·w`` pixels. A fully
    connected layer is the case ``h_out = w_out = kh = kw = 1``.

    Parameters
    ----------
    c_out, c_in : int
        Output and input channels.
    h_out, w_out : int
        Output height and width.
    kh, kw : int
        Kernel height and width.
    batch : int
        Images per call.
    groups : int
        Convolution groups; each group is its own GEMM with
        ``c_out/groups`` rows and ``K = (c_in/groups)·kh·kw``, so the
        dimensions of *one* group's GEMM are returned.

    Returns
    -------
    tuple of int
        ``(M, N, K)``; the layer does ``groups·M·N·K`` MACs.

    Raises
    ------
    TypeError
        If an argument is not an integer.
    ValueError
        If an argument is < 1 or ``groups`` does not divide both channel counts.

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


def largest_pointwise(net: Any, batch: int = 1) -> tuple[str, tuple[int, int, int]]:
    """CameraNet's largest pointwise (1×1) convolution and its GEMM dimensions.

    "Largest" means the most MACs; ties (CameraNet's pointwise layers all do
    the same number of MACs) go to the layer with the most weights.

    Parameters
    ----------
    net : npukit.models.CameraNet
        The network.
    batch : int
        Images per call; ``N`` grows with it.

    Returns
    -------
    tuple
        ``(layer name, (M, N, K))`` with ``M = c_out``, ``N = batch·h·w``,
        ``K = c_in`` (see :func:`conv_as_gemm`).

    Raises
    ------
    TypeError
        If ``net`` is not a CameraNet or ``batch`` is not an integer.
    ValueError
        If ``batch`` < 1 or the network has no pointwise convolution.

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
    c_in = row["input"][1]
    return row["layer"], conv_as_gemm(c_out, c_in, h, w, batch=row["output"][0])


# ---- the tiled product ------------------------------------------------------------


def tiled_matmul(A: np.ndarray, B: np.ndarray, tile: Sequence[int] = (256, 256, 256), order: str = "mnk") -> np.ndarray:
    """Compute ``A @ B`` tile by tile, in a given loop order.

    The loop nest runs over tile indices, outermost loop first as spelled by
    ``order``; for ``"mnk"``::

        for i in range(0, M, bm):            # m: rows of C
            for j in range(0, N, bn):        # n: columns of C
                for p in range(0, K, bk):    # k: the reduction
                    C[i:i+bm, j:j+bn] += A[i:i+bm, p:p+bk] @ B[p:p+bk, j:j+bn]

    Each tile product is one ``numpy.matmul`` on views of ``A`` and ``B``,
    written straight into the output (the first k-step) or into a scratch
    tile that is then added in place. Edge tiles are ragged: they are cut to
    what is left of the matrix, and a tile larger than the matrix is simply
    the whole matrix. Big tiles amortise Python's per-call overhead; with
    ``bk >= K`` every output tile is written once and never re-added.

    Parameters
    ----------
    A : numpy.ndarray
        Left operand, shape ``(M, K)``.
    B : numpy.ndarray
        Right operand, shape ``(K, N)``, same dtype as ``A``.
    tile : tuple of int
        ``(bm, bn, bk)``, each >= 1.
    order : str
        One of :data:`ORDERS`, outermost loop first.

    Returns
    -------
    numpy.ndarray
        ``C``, shape ``(M, N)``; float32 for float32 inputs, float64 for
        float64, and **int32** for int8 inputs (integer MACs accumulated
        exactly, as an INT8 MAC array with 32-bit accumulators does; like
        ``numpy.matmul`` on int32, a sum beyond the int32 range wraps, which
        needs ``K`` > 131 072).

    Raises
    ------
    TypeError
        If ``A`` or ``B`` is not an array, their dtypes differ, or the dtype
        is not float32, float64 or int8; if ``tile`` is not three integers
        or ``order`` is not a string.
    ValueError
        If ``A`` or ``B`` is not 2-D, the inner dimensions differ, a tile
        size is < 1 or ``order`` is not one of :data:`ORDERS`.

    Examples
    --------
    >>> A = np.arange(12, dtype=np.float64).reshape(3, 4)
    >>> B = np.ones((4, 5))
    >>> C = tiled_matmul(A, B, tile=(2, 2, 3), order="kmn")   # ragged in every dimension
    >>> np.array_equal(C, A @ B)
    True
    >>> a8 = np.full((2, 300), 127, dtype=np.int8)
    >>> tiled_matmul(a8, a8.T.copy(), tile=(1, 1, 64)).tolist()   # 300·127² overflows int16, not int32
    [[4838700, 4838700], [4838700, 4838700]]
    """
    A = _check.as_array(A, "A")
    B = _check.as_array(B, "B")
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
    bm, bn, bk = _tile(tile)
    order = _order(order)
    M, K = A.shape
    N = B.shape[1]

    integer = A.dtype == np.int8
    if integer:
        # int8·int8 products are < 2**15 and a tile sums at most bk of them: in
        # float64 (53-bit mantissa) every partial sum is an exact integer.
        A, B = A.astype(np.float64), B.astype(np.float64)
        C = np.zeros((M, N), dtype=np.int32)
    elif K == 0:
        C = np.zeros((M, N), dtype=A.dtype)
    else:
        C = np.empty((M, N), dtype=A.dtype)
    scratch = np.empty((min(bm, M), min(bn, N)), dtype=A.dtype)

    ranges = {"m": range(0, M, bm), "n": range(0, N, bn), "k": range(0, K, bk)}
    pm, pn, pk = order.index("m"), order.index("n"), order.index("k")
    for idx in itertools.product(ranges[order[0]], ranges[order[1]], ranges[order[2]]):
        i, j, p = idx[pm], idx[pn], idx[pk]
        a = A[i : i + bm, p : p + bk]
        b = B[p : p + bk, j : j + bn]
        c = C[i : i + bm, j : j + bn]
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

    Attributes
    ----------
    a_read, b_read : int
        Bytes of ``A`` and ``B`` loaded into the buffer.
    c_read : int
        Bytes of partial sums of ``C`` loaded back (a tile written out
        before its reduction finished).
    c_write : int
        Bytes of ``C`` written to DRAM.
    footprint : int
        Bytes of buffer the three resident tiles need.
    """

    a_read: int
    b_read: int
    c_read: int
    c_write: int
    footprint: int

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
    """Bytes of on-chip buffer needed to hold one A-, one B- and one C-tile.

    A tile larger than the matrix only needs the matrix: each tile size is
    clipped to its dimension first.

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    tile : tuple of int
        ``(bm, bn, bk)``.
    itemsize : int
        Bytes per element of ``A`` and ``B``.
    c_itemsize : int, optional
        Bytes per element of the ``C`` accumulator (default ``itemsize``;
        4 for INT8 inputs with INT32 accumulators).

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

    An operand is indexed by two of the three loops. Only the third, the one
    it does *not* depend on, can bring a tile back: if a loop inside that one
    changes the operand's tile (it indexes the operand and runs more than
    once), every pass of the third loop loads all the tiles again, so ``r`` is
    its trip count. Otherwise the tile just stays while it runs: ``r = 1``.
    """
    (free,) = set("mnk") - set(_DEPS[operand])
    inside = order[order.index(free) + 1 :]  # every loop inside `free` indexes the operand
    changes = sum(counts[d] > 1 for d in inside) > 0
    return np.where(changes, counts[free], 1)


def traffic(
    M: int,
    N: int,
    K: int,
    tile: Sequence[int],
    order: str = "mnk",
    itemsize: int = 4,
    buffer_bytes: int | None = None,
    *,
    c_itemsize: int | None = None,
) -> Traffic:
    """DRAM bytes read and written by a tiled GEMM ``C = A·B``.

    The model (a schedule's *compulsory plus capacity* traffic, no caches):

    * The on-chip buffer has one slot per operand: one A-tile, one B-tile and
      one C-tile (no double buffering). Edge tiles are ragged and move only
      their real bytes; a tile bigger than the matrix is the whole matrix.
    * The loop nest runs over tile indices in ``order`` (outermost first). At
      each step the A-tile ``(m, k)``, B-tile ``(k, n)`` and C-tile ``(m, n)``
      must be resident. A tile that the previous step already had stays
      resident at no cost; otherwise it is loaded, replacing the old one.
      **Which tile stays resident** therefore depends on the innermost loop:
      with ``k`` innermost (``mnk``, ``nmk``) the C-tile stays for a whole
      reduction; with ``n`` innermost (``mkn``, ``kmn``) the A-tile stays;
      with ``m`` innermost (``nkm``, ``knm``) the B-tile stays. A loop that
      runs only once (its tile covers the dimension) never evicts anything.
    * ``C`` starts at zero on chip: a C-tile is read from DRAM only when it
      comes back after having been written out with a partial sum. Every time
      a C-tile leaves the buffer (evicted, or at the end) it is written.

    Under these rules each tile of an operand is loaded the same number of
    times ``r`` (its re-fetch factor): the trip count of the one loop the
    operand does not depend on, if a loop inside that one changes the
    operand's tile, and 1 otherwise. So ``A`` costs ``r_A·M·K·itemsize``,
    ``B`` costs ``r_B·K·N·itemsize``, and ``C`` costs ``r_C·M·N·c_itemsize``
    written plus ``(r_C − 1)·M·N·c_itemsize`` read back. The minimum,
    reached when every ``r`` is 1, is :func:`compulsory`.

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    tile : tuple of int
        ``(bm, bn, bk)``, each >= 1.
    order : str
        One of :data:`ORDERS`, outermost loop first.
    itemsize : int
        Bytes per element of ``A`` and ``B``.
    buffer_bytes : int, optional
        If given, the buffer size the tile must fit (see :func:`footprint`).
    c_itemsize : int, optional
        Bytes per element of ``C`` (default ``itemsize``).

    Returns
    -------
    Traffic
        ``a_read``, ``b_read``, ``c_read``, ``c_write`` and ``footprint`` in
        bytes, with ``.reads``, ``.writes`` and ``.total``.

    Raises
    ------
    TypeError
        If a dimension, tile size or itemsize is not an integer, or
        ``order`` is not a string.
    ValueError
        If one is < 1, ``order`` is unknown, or the tile does not fit
        ``buffer_bytes``.

    Examples
    --------
    Keeping the C-tile resident (k innermost) writes ``C`` once; putting
    ``k`` outermost writes it once per k-step:

    >>> t = traffic(256, 256, 256, (64, 64, 64), "mnk", itemsize=4)
    >>> t.a_read // (256 * 256 * 4), t.b_read // (256 * 256 * 4), t.c_write // (256 * 256 * 4)
    (4, 4, 1)
    >>> traffic(256, 256, 256, (64, 64, 64), "kmn", itemsize=4).c_write // (256 * 256 * 4)
    4
    >>> traffic(256, 256, 256, (256, 256, 256), "mnk", itemsize=4) == compulsory(256, 256, 256, 4)
    True
    """
    M, N, K = _dims(M, N, K)
    bm, bn, bk = _tile(tile)
    order = _order(order)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    need = footprint(M, N, K, (bm, bn, bk), isz, c_itemsize=csz)
    if buffer_bytes is not None:
        buf = _check.integer(buffer_bytes, "buffer_bytes", minimum=1)
        if need > buf:
            raise ValueError(
                f"tile {(bm, bn, bk)} needs {need} bytes of buffer for one A-, B- and C-tile, "
                f"more than buffer_bytes={buf}"
            )
    counts = {"m": -(-M // bm), "n": -(-N // bn), "k": -(-K // bk)}
    r_a, r_b, r_c = (int(_refetch(counts, order, x)) for x in "ABC")
    return Traffic(
        a_read=r_a * M * K * isz,
        b_read=r_b * K * N * isz,
        c_read=(r_c - 1) * M * N * csz,
        c_write=r_c * M * N * csz,
        footprint=need,
    )


def compulsory(M: int, N: int, K: int, itemsize: int = 4, *, c_itemsize: int | None = None) -> Traffic:
    """The compulsory minimum: read ``A`` and ``B`` once, write ``C`` once.

    No schedule moves less; a buffer that holds all three matrices reaches it.

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    itemsize : int
        Bytes per element of ``A`` and ``B``.
    c_itemsize : int, optional
        Bytes per element of ``C`` (default ``itemsize``).

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


def _candidates(n: int) -> np.ndarray:
    """The smallest tile size for each possible tile count along a dimension."""
    return np.unique([-(-n // t) for t in range(1, n + 1)])


def best_tile(
    M: int, N: int, K: int, buffer_bytes: int, itemsize: int = 4, order: str = "mnk", *, c_itemsize: int | None = None
) -> tuple[int, int, int]:
    """The tile that fits ``buffer_bytes`` and moves the fewest DRAM bytes.

    Exhaustive over the tile shapes that matter: under the :func:`traffic`
    model the bytes depend on a tile only through the tile *counts*
    ``ceil(M/bm)``, ``ceil(N/bn)``, ``ceil(K/bk)``, and for each count the
    smallest tile that achieves it needs the least buffer. Ties are broken by
    fewer tile steps (fewer DMA transfers to issue), then by a smaller
    footprint, then by the smaller ``(bm, bn, bk)``.

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    buffer_bytes : int
        On-chip buffer available for one A-, one B- and one C-tile.
    itemsize : int
        Bytes per element of ``A`` and ``B``.
    order : str
        Loop order the schedule will use (one of :data:`ORDERS`).
    c_itemsize : int, optional
        Bytes per element of ``C`` (default ``itemsize``).

    Returns
    -------
    tuple of int
        ``(bm, bn, bk)``.

    Raises
    ------
    TypeError
        If an argument has the wrong type.
    ValueError
        If an argument is < 1, ``order`` is unknown, or even a 1×1×1 tile
        does not fit ``buffer_bytes``.

    Examples
    --------
    The best tile need not be a power of two:

    >>> best_tile(256, 256, 256, buffer_bytes=48 * 1024, itemsize=4)
    (86, 128, 5)
    >>> t = traffic(256, 256, 256, (86, 128, 5), "mnk", 4, buffer_bytes=48 * 1024)
    >>> t.total / compulsory(256, 256, 256, 4).total
    2.0
    """
    M, N, K = _dims(M, N, K)
    order = _order(order)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    buf = _check.integer(buffer_bytes, "buffer_bytes", minimum=1)
    smallest = 2 * isz + csz
    if smallest > buf:
        raise ValueError(f"buffer_bytes must hold at least a 1×1×1 tile ({smallest} bytes), got {buf}")
    bm = _candidates(M)[:, None, None].astype(np.int64)
    bn = _candidates(N)[None, :, None].astype(np.int64)
    bk = _candidates(K)[None, None, :].astype(np.int64)
    need = (bm * bk + bk * bn) * isz + bm * bn * csz
    counts = {"m": -(-M // bm), "n": -(-N // bn), "k": -(-K // bk)}
    r_a, r_b, r_c = (_refetch(counts, order, x) for x in "ABC")
    total = r_a * (M * K * isz) + r_b * (K * N * isz) + (2 * r_c - 1) * (M * N * csz)
    steps = counts["m"] * counts["n"] * counts["k"]
    shape = np.broadcast_shapes(bm.shape, bn.shape, bk.shape)
    full = [np.broadcast_to(x, shape).ravel() for x in (total, steps, need, bm, bn, bk)]
    fits = np.broadcast_to(need <= buf, shape).ravel()
    keys = [x[fits] for x in full]
    best = np.lexsort(keys[::-1])[0]  # lexsort's last key is the primary one
    return int(keys[3][best]), int(keys[4][best]), int(keys[5][best])


# ---- the measured ladder -----------------------------------------------------------


@dataclass(frozen=True)
class Rung:
    """One measured way of computing ``A @ B`` (see :func:`ladder`).

    Attributes
    ----------
    name : str
        What was run.
    n : int
        The square size ``n×n×n`` it was run at.
    seconds : float
        Median wall time of one product.
    gflops : float
        ``2·n³ / seconds / 1e9``.
    error : float
        Largest absolute difference from ``numpy.matmul``, relative to the
        largest absolute value of the product.
    ok : bool
        Whether ``error`` is within the dtype's tolerance.
    """

    name: str
    n: int
    seconds: float
    gflops: float
    error: float
    ok: bool


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


def _measure(name: str, n: int, fn: Any, want: np.ndarray, repeat: int, warmup: int) -> Rung:
    """Check ``fn()`` against ``want`` (relative to the largest entry), then time it."""
    got = np.asarray(fn(), dtype=want.dtype)
    err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
    tol = 1e-4 if want.dtype == np.float32 else 1e-10
    secs = measure.timeit(fn, repeat=repeat, warmup=warmup)
    return Rung(name, n, secs, 2.0 * n**3 / secs / 1e9, err, bool(err <= tol))


def ladder(
    n: int = 512,
    *,
    python_n: int = 48,
    row_n: int = 128,
    small_tile: Sequence[int] = (16, 16, 16),
    good_tile: Sequence[int] = (256, 256, 1024),
    dtype: Any = "float32",
    repeat: int = 5,
    warmup: int = 1,
    seed: int = 0,
) -> list[Rung]:
    """Measure five ways of computing a square GEMM, slowest first.

    1. ``python``: three Python loops over lists (at ``python_n``);
    2. ``row-vectorised``: one NumPy vector update per ``(i, k)``
       (at ``row_n``);
    3. ``tiled, small tile``: :func:`tiled_matmul` with ``small_tile`` (at ``n``);
    4. ``tiled, good tile``: :func:`tiled_matmul` with ``good_tile`` (at ``n``);
    5. ``numpy.matmul``: one call into the BLAS library (at ``n``).

    Each rung's result is compared with ``numpy.matmul`` on the same inputs
    and timed with :func:`npukit.measure.timeit` (warm-up, repeats, median).
    The slow rungs run at smaller sizes so the ladder fits a page's time
    budget; GFLOP/s (``2·n³/t``) makes sizes comparable.

    Parameters
    ----------
    n : int
        Size of the three fast rungs.
    python_n, row_n : int
        Sizes of the pure-Python and row-vectorised rungs.
    small_tile, good_tile : tuple of int
        Tiles for the two tiled rungs.
    dtype : dtype-like
        ``"float32"`` or ``"float64"``.
    repeat, warmup : int
        Timed repetitions (median reported) and untimed warm-up calls;
        the two slow rungs use at most 3 repetitions and 1 warm-up.
    seed : int
        Seed of the random inputs.

    Returns
    -------
    list of Rung
        In ladder order.

    Raises
    ------
    TypeError
        If a size or tile is not an integer, or ``dtype`` is not a dtype.
    ValueError
        If a size is < 1 or ``dtype`` is not float32 or float64.

    Examples
    --------
    >>> rungs = ladder(32, python_n=8, row_n=8, good_tile=(16, 16, 32), repeat=1, warmup=0)
    >>> [r.name for r in rungs]
    ['python', 'row-vectorised', 'tiled, small tile', 'tiled, good tile', 'numpy.matmul']
    >>> all(r.ok for r in rungs)
    True
    """
    n = _check.integer(n, "n", minimum=1)
    python_n = _check.integer(python_n, "python_n", minimum=1)
    row_n = _check.integer(row_n, "row_n", minimum=1)
    small_tile, good_tile = _tile(small_tile, "small_tile"), _tile(good_tile, "good_tile")
    dt = _float_dtype(dtype)
    repeat = _check.integer(repeat, "repeat", minimum=1)
    warmup = _check.integer(warmup, "warmup", minimum=0)
    rng = np.random.default_rng(seed)

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


def sweep_tiles(
    n: int = 512,
    sides: Sequence[int] = (16, 32, 64, 128, 256, 512),
    *,
    dtype: Any = "float32",
    repeat: int = 3,
    warmup: int = 1,
    seed: int = 0,
) -> list[Rung]:
    """Measure :func:`tiled_matmul` on an ``n×n×n`` product with cubic tiles of each side.

    Every tile is one call into NumPy, so ``(n/b)³`` calls pay Python's
    per-call overhead while the arithmetic stays ``2·n³`` FLOPs: the sweep
    shows how large a tile must be before the overhead stops mattering.

    Parameters
    ----------
    n : int
        Matrix size.
    sides : sequence of int
        Tile sides ``b`` (tile ``(b, b, b)``).
    dtype : dtype-like
        ``"float32"`` or ``"float64"``.
    repeat, warmup : int
        As for :func:`npukit.measure.timeit`.
    seed : int
        Seed of the random inputs.

    Returns
    -------
    list of Rung
        One per side, named ``"tile b³"``, each checked against ``numpy.matmul``.

    Raises
    ------
    TypeError, ValueError
        For a non-integer or non-positive size or side, or a dtype other than
        float32 or float64.

    Examples
    --------
    >>> rungs = sweep_tiles(64, sides=(16, 64), repeat=1, warmup=0)
    >>> [(r.name, r.ok) for r in rungs]
    [('tile 16³', True), ('tile 64³', True)]
    """
    n = _check.integer(n, "n", minimum=1)
    sides = [_check.integer(b, f"sides[{i}]", minimum=1) for i, b in enumerate(sides)]
    dt = _float_dtype(dtype)
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)).astype(dt)
    B = rng.standard_normal((n, n)).astype(dt)
    want = A @ B
    return [
        _measure(f"tile {b}³", n, lambda b=b: tiled_matmul(A, B, (b, b, b)), want, repeat, warmup) for b in sides
    ]


# ---- figures ---------------------------------------------------------------------


# ---- numbers so far -----------------------------------------------------------------


def numbers(ctx: tally.Context) -> list[tally.Row]:
    """Chapter 4's rows of the "numbers so far" table: CameraNet's largest pointwise conv, tiled.

    Follows the contract of :mod:`npukit.tally`. For the layer
    :func:`largest_pointwise` finds in ``ctx.net``: its GEMM dimensions and
    MACs, and the DRAM traffic of the best tile for ``ctx.npu_buffer`` bytes
    (INT8 operands with INT32 accumulators, as on an NPU) against the
    compulsory minimum.

    Examples
    --------
    >>> from npukit import tally
    >>> rows = numbers(tally.Context(npu_buffer=8 * 1024))
    >>> rows[0].value
    'M=128, N=16, K=64 (131,072 MACs)'
    """
    from . import tally

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
