"""GEMM and tiling: the same multiply-adds, in an order that moves fewer transfers.

Every convolution and fully connected layer lowers to one matrix product
``C[M×N] = A[M×K] · B[K×N]``: ``M·N·K`` multiply-accumulates (MACs). The
invariant this module teaches: *tiling never changes which MACs are done, only
their order* (here bit for bit: every order visits the k-tiles of an output
tile in ascending order); the tile ``(bm, bn, bk)`` and the loop order change
how much data crosses between DRAM and an on-chip buffer, and memory moves it
in whole lines (a cache line, a DMA burst), so a tile one element wide costs a
full line per row. :func:`tiled_matmul` computes the product tile by tile,
:func:`traffic` and :func:`compulsory` count the bytes a schedule transfers,
:func:`best_tile` picks the tile that transfers the fewest. ``itemsize`` is the
element size of ``A`` and ``B``; ``c_itemsize`` that of ``C``, **equal to**
``itemsize`` **unless given** (4 for INT8 inputs with INT32 accumulators). The
chapter's speed measurements are in :mod:`npukit.figures.gemm`, beside the
figures that draw them.

See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import _check, _tally

if TYPE_CHECKING:
    from .models import CameraNet

__all__ = ["ORDERS", "Traffic", "conv_as_gemm", "largest_pointwise", "tiled_matmul", "footprint", "traffic",
           "compulsory", "best_tile", "numbers"]

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
    no im2col: ``X`` is the activation itself; a fully connected layer has
    ``h_out = w_out = kh = kw = 1``. Each of ``groups`` groups is its own GEMM,
    and *one* group's is returned. See chapter 4, "GEMM and tiling"
    (chapters/04_gemm.md).

    Parameters
    ----------
    c_out, c_in, h_out, w_out, kh, kw, batch, groups : int
        Channels, output height and width, kernel height and width, images per call, groups.

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
    >>> largest_pointwise(CameraNet(), batch=8)           # the architecture is enough
    ('block3.pw', (128, 128, 64))
    """
    from . import models

    rows = [r for r in models.summary(net, batch) if r["kind"] == "pointwise"]
    if not rows:
        raise ValueError("net must have a pointwise (1×1) convolution")
    row = max(rows, key=lambda r: (r["macs"], r["params"]))
    _, c_out, h, w = row["output"]
    return row["layer"], conv_as_gemm(c_out, row["input"][1], h, w, batch=row["output"][0])


# ---- the tiled product ------------------------------------------------------------


#: Most tile steps :func:`tiled_matmul` runs (each a Python iteration, about a microsecond at best):
#: 4 million is seconds; a 1×1×1 tile on a 1024³ GEMM would be a billion.
MAX_TILE_STEPS = 4_000_000


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

    Each step is one ``numpy.matmul`` on views of the A- and B-tiles (no
    copies). The first k-step of an output tile writes into ``C``
    (``out=``); later ones go to one scratch tile and are added in place
    (NumPy's matmul cannot add into its output). Edge tiles are ragged. See
    chapter 4, "GEMM and tiling" (chapters/04_gemm.md), which measures where
    the time of each step goes.

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
    steps = -(-M // bm) * -(-N // bn) * -(-K // bk)
    if steps > MAX_TILE_STEPS:  # each step is a Python-level iteration: a tile of 1 on a large GEMM never ends
        raise ValueError(f"tile {(bm, bn, bk)} gives {steps:,} tile steps on a {M}×{N}×{K} GEMM, more than "
                         f"{MAX_TILE_STEPS:,}; use larger tiles")
    _check.allocation(8 * (M * N + min(bm, M) * min(bn, N)), "A and B")  # C and the scratch tile, in float64 at most
    integer = A.dtype == np.int8
    if integer:
        # an int8·int8 product is at most 2**14 in size and C sums K of them: every partial
        # sum is an integer far below 2**53, exact in float64, so C accumulates in float64.
        A, B = A.astype(np.float64), B.astype(np.float64)
    C = (np.zeros if K == 0 else np.empty)((M, N), dtype=A.dtype)
    scratch = np.empty((min(bm, M), min(bn, N)), dtype=A.dtype)
    cuts = {"m": [slice(s, s + bm) for s in range(0, M, bm)], "n": [slice(s, s + bn) for s in range(0, N, bn)],
            "k": [slice(s, s + bk) for s in range(0, K, bk)]}
    where = [order.index(d) for d in "mnk"]
    for idx in itertools.product(cuts[order[0]], cuts[order[1]], cuts[order[2]]):
        i, j, p = idx[where[0]], idx[where[1]], idx[where[2]]
        c = C[i, j]
        if p.start == 0:  # the first k-step of this output tile: write, no add
            np.matmul(A[i, p], B[p, j], out=c)
        else:
            np.add(c, np.matmul(A[i, p], B[p, j], out=scratch[: c.shape[0], : c.shape[1]]), out=c)
    return C.astype(np.int64).astype(np.int32) if integer else C  # int32 wrap-around, as int32 MACs would


# ---- the traffic model ----------------------------------------------------------


@dataclass(frozen=True)
class Traffic:
    """DRAM bytes moved by one tile schedule (see :func:`traffic`).

    ``a_read``/``b_read``: bytes of ``A``/``B`` loaded; ``c_read``: partial
    sums of ``C`` loaded back; ``c_write``: bytes of ``C`` written; each a
    whole number of lines. ``footprint``: buffer bytes of the three resident
    tiles. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
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

    The buffer holds a tile's elements only: the DMA engine drops the bytes
    of a line that lie outside the tile. See chapter 4, "GEMM and tiling"
    (chapters/04_gemm.md).

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
        ``(bm·bk + bk·bn)·itemsize + bm·bn·c_itemsize``; ``TypeError`` or
        ``ValueError`` for non-integer or non-positive arguments.

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


def _row_lines(n: int, b: int, s: int, line: int) -> int:
    """Lines a row of ``n`` elements of ``s`` bytes (starting on a line) costs, read in segments of ``b``.

    The segment at column ``p`` covers lines ``⌊p·s/line⌋ … ⌈(p+b)·s/line⌉ − 1``;
    the offsets repeat every ``line / gcd(b·s, line)`` segments, so one period is summed.
    """
    b = min(b, n)
    full, rest = divmod(n, b)
    period = line // math.gcd(b * s, line)
    starts = np.arange(min(full, period), dtype=np.int64) * (b * s)
    per = -(-(starts + b * s) // line) - starts // line  # lines of each segment in one period
    total = int(per.sum()) * (full // period) + int(per[: full % period].sum())
    if rest:
        p = full * b * s
        total += -(-(p + rest * s) // line) - p // line
    return total


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


def traffic(M: int, N: int, K: int, tile: Sequence[int], order: str = "mnk", itemsize: int = 4,
            buffer_bytes: int | None = None, *, c_itemsize: int | None = None, line: int = 64) -> Traffic:
    """DRAM bytes transferred by a tiled GEMM ``C = A·B``, counted in whole lines.

    The model (a schedule's *compulsory plus capacity* traffic, no caches):

    * One buffer slot per operand. At each step of the loop nest (outermost
      first as in ``order``) the A-tile ``(m, k)``, B-tile ``(k, n)`` and
      C-tile ``(m, n)`` must be resident; a tile the previous step had stays,
      any other is loaded. So ``k`` innermost keeps C for a whole reduction,
      ``n`` innermost keeps A, ``m`` innermost keeps B.
    * ``C`` starts at zero on chip; a C-tile is written every time it leaves
      (evicted, or at the end) and read back when it returns.
    * **Transfers are whole lines.** The matrices are row-major, every row
      starting on a ``line``-byte boundary, and a tile moves row by row: a
      segment of ``w`` elements from column ``p`` costs ``⌈(p+w)·s/line⌉ −
      ⌊p·s/line⌋`` lines. ``line=1`` counts bytes (tiles stored pre-packed).

    Each tile of an operand is loaded ``r`` times: the trip count of the loop
    the operand does not depend on if a loop inside it changes the operand's
    tile, else 1. ``A`` costs ``r_A`` passes over its tiles, ``B`` ``r_B``,
    ``C`` ``r_C`` written and ``r_C − 1`` read back. With rows of whole lines
    one pass costs the padded matrix, and all ``r = 1`` is :func:`compulsory`.
    See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    tile : tuple of int
        ``(bm, bn, bk)``, each >= 1.
    order : str
        One of :data:`ORDERS`, outermost loop first.
    itemsize, c_itemsize, line : int
        Bytes per element of ``A`` and ``B``, of ``C`` (default: ``itemsize``), and per transfer.
    buffer_bytes : int, optional
        If given, the buffer the tile must fit (see :func:`footprint`).

    Returns
    -------
    Traffic
        ``a_read``, ``b_read``, ``c_read``, ``c_write`` and ``footprint``, in bytes.

    Raises
    ------
    TypeError, ValueError
        If a dimension, tile size, item size or ``line`` is not an integer
        ≥ 1, ``order`` is unknown, or the tile does not fit ``buffer_bytes``.

    Examples
    --------
    ``k`` innermost writes ``C`` once, ``k`` outermost once per k-step:

    >>> traffic(256, 256, 256, (64, 64, 64), "mnk", itemsize=4).c_write // (256 * 256 * 4)
    1
    >>> traffic(256, 256, 256, (64, 64, 64), "kmn", itemsize=4).c_write // (256 * 256 * 4)
    4

    A tile one float wide reads a 64-byte line for every 4 useful bytes:

    >>> traffic(256, 256, 256, (64, 64, 1), "mnk", 4).a_read // traffic(256, 256, 256, (64, 64, 1), "mnk", 4, line=1).a_read
    16
    """
    M, N, K = _dims(M, N, K)
    bm, bn, bk = _tile(tile)
    order = _order(order)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    line = _check.integer(line, "line", minimum=1)
    need = footprint(M, N, K, (bm, bn, bk), isz, c_itemsize=csz)
    if buffer_bytes is not None and need > _check.integer(buffer_bytes, "buffer_bytes", minimum=1):
        raise ValueError(f"tile {(bm, bn, bk)} needs {need} bytes of buffer for one A-, B- and C-tile, "
                         f"more than buffer_bytes={buffer_bytes}")
    counts = {"m": -(-M // bm), "n": -(-N // bn), "k": -(-K // bk)}
    r_a, r_b, r_c = (int(_refetch(counts, order, x)) for x in "ABC")
    a = M * _row_lines(K, bk, isz, line) * line
    b = K * _row_lines(N, bn, isz, line) * line
    c = M * _row_lines(N, bn, csz, line) * line
    return Traffic(a_read=r_a * a, b_read=r_b * b, c_read=(r_c - 1) * c, c_write=r_c * c, footprint=need)


def _padded(M: int, N: int, K: int, isz: int, csz: int, line: int) -> tuple[int, int, int]:
    """Bytes of ``A``, ``B`` and ``C`` with every row rounded up to whole lines."""
    rounded = lambda n, s: -(-n * s // line) * line  # noqa: E731
    return M * rounded(K, isz), K * rounded(N, isz), M * rounded(N, csz)


def compulsory(M: int, N: int, K: int, itemsize: int = 4, *, c_itemsize: int | None = None, line: int = 64) -> Traffic:
    """The compulsory minimum: read ``A`` and ``B`` once, write ``C`` once, in whole lines.

    No schedule moves less; a buffer holding all three matrices reaches it.
    With rows padded to whole lines (see :func:`traffic`), each matrix costs
    its rows times its row length rounded up to ``line`` bytes. See chapter
    4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1.
    itemsize, c_itemsize, line : int
        Bytes per element of ``A`` and ``B``, of ``C`` (default: ``itemsize``), and per transfer.

    Returns
    -------
    Traffic
        With ``c_read = 0``; its ``footprint`` is the whole problem's bytes.
        ``TypeError`` or ``ValueError`` for non-integer or non-positive arguments.

    Examples
    --------
    >>> compulsory(64, 64, 64, itemsize=1, c_itemsize=4).total
    24576
    >>> compulsory(3, 3, 3, itemsize=4).total, compulsory(3, 3, 3, itemsize=4, line=1).total
    (576, 108)
    """
    M, N, K = _dims(M, N, K)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    a, b, c = _padded(M, N, K, isz, csz, _check.integer(line, "line", minimum=1))
    return Traffic(a, b, 0, c, (M * K + K * N) * isz + M * N * csz)


# ---- the best tile ------------------------------------------------------------------


def _tile_sizes(n: int, upto: int) -> np.ndarray:
    """The tile sizes ≤ ``upto`` that are the smallest for their count ``⌈n/t⌉``.

    They are every ``t ≤ √n`` and ``⌈n/c⌉`` for ``c ≤ √n + 1``: about ``2·√n`` sizes, not ``n``.
    """
    s = math.isqrt(n)
    big = -(-n // np.arange(1, s + 2, dtype=np.int64))
    return np.unique(np.concatenate([np.arange(1, min(s, upto) + 1, dtype=np.int64), big[big <= upto]]))


class _Grid:
    """Tile sizes along each loop that are whole lines wide (or the whole dimension).

    Along ``d`` the allowed sizes are multiples of ``unit[d]`` below the
    dimension, and the dimension itself. Counted in units, ``⌈D/(t·u)⌉ =
    ⌈⌈D/u⌉/t⌉``, so every count has a smallest allowed size, as with ``u = 1``.
    """

    def __init__(self, dims: dict, unit: dict, isz: int, csz: int, buf: int) -> None:
        self.dims, self.unit, self.isz, self.csz, self.buf = dims, unit, isz, csz, buf
        self.units = {d: -(-dims[d] // unit[d]) for d in "mnk"}  # the dimension, in units

    def small(self, d: str) -> int:  # the narrowest allowed tile
        return min(self.unit[d], self.dims[d])

    def count(self, d: str, b: Any) -> Any:
        return -(-self.dims[d] // b)

    def size(self, d: str, c: Any) -> Any:
        """The smallest allowed tile along ``d`` with at most ``c`` tiles."""
        return np.minimum(self.unit[d] * -(-self.units[d] // c), self.dims[d])

    def fit(self, d: str, **tiles: Any) -> Any:
        """The widest allowed tile along ``d`` that fits beside the two ``tiles`` given (0: none fits)."""
        bm, bn, bk = (tiles.get(x) for x in "mnk")
        isz, csz = self.isz, self.csz
        if d == "m":  # the footprint (bm·bk + bk·bn)·isz + bm·bn·csz is linear in each tile size
            base, per = bk * bn * isz, bk * isz + bn * csz
        elif d == "n":
            base, per = bm * bk * isz, bk * isz + bm * csz
        else:
            base, per = bm * bn * csz, (bm + bn) * isz
        raw = np.maximum((self.buf - base) // per, 0)
        return np.where(raw >= self.dims[d], self.dims[d], raw // self.unit[d] * self.unit[d])

    def sizes(self, d: str, upto: Any) -> np.ndarray:
        """Every allowed size along ``d`` up to ``upto`` that is the smallest for its count."""
        cap = self.units[d] if upto >= self.dims[d] else int(upto) // self.unit[d]
        return np.minimum(self.unit[d] * _tile_sizes(self.units[d], cap), self.dims[d])


def _best_counts(g: _Grid, order: str) -> list[tuple[Any, Any, Any]]:
    """Tile counts, in loop order ``(x, y, z)`` (outermost first), among which is the best tile.

    A count that grows never lowers the traffic and always adds steps, so for
    fixed counts elsewhere the best count of a loop is the smallest that
    fits. The traffic is compulsory when ``c_y = c_z = 1``, ``W_x·c_x + const``
    when only ``c_z = 1``, and ``W_x·c_x + W_y·c_y + const`` when ``c_z > 1``:
    one point for each of the first two cases; for the third, every count of
    ``x`` (or ``y``, the one with fewer sizes) with the smallest fitting others.
    """
    x, y, z = order
    out = []
    if (bx := g.fit(x, **{y: g.dims[y], z: g.dims[z]})) >= 1:  # c_y = c_z = 1
        out.append((g.count(x, bx), 1, 1))
    if g.units[y] >= 2 and (bx := g.fit(x, **{y: g.small(y), z: g.dims[z]})) >= 1:  # c_z = 1 < c_y
        cx = g.count(x, bx)
        out.append((cx, max(2, g.count(y, g.fit(y, **{x: g.size(x, cx), z: g.dims[z]}))), 1))
    if g.units[z] >= 2:  # c_z > 1
        u, v = (x, y) if g.units[x] <= g.units[y] else (y, x)
        if (top := g.fit(u, **{v: g.small(v), z: g.small(z)})) >= 1:
            bu = g.sizes(u, top)
            cv = g.count(v, g.fit(v, **{u: bu, z: g.small(z)}))
            cz = np.maximum(2, g.count(z, g.fit(z, **{u: bu, v: g.size(v, cv)})))
            cu = g.count(u, bu)
            out.append((cu, cv, cz) if u == x else (cv, cu, cz))
    return out


def best_tile(M: int, N: int, K: int, buffer_bytes: int, itemsize: int = 4, order: str = "mnk", *,
              c_itemsize: int | None = None, line: int = 64) -> tuple[int, int, int]:
    """The line-aligned tile that fits ``buffer_bytes`` and transfers the fewest DRAM bytes.

    Candidates are the tiles whose rows are whole lines: ``bk·itemsize`` and
    ``bn·itemsize`` and ``bn·c_itemsize`` multiples of ``line``, unless the
    tile spans its whole dimension (``bm`` is free). For those, one pass over
    an operand's tiles costs exactly the padded matrix (see :func:`traffic`),
    so the bytes depend on a tile only through the tile *counts*
    ``⌈M/bm⌉``, ``⌈N/bn⌉``, ``⌈K/bk⌉``, and for each count the smallest tile
    reaching it needs the least buffer. Ties go to fewer tile steps (fewer
    DMA transfers), then a smaller footprint, then the smaller ``(bm, bn,
    bk)``. The search is exact without trying every count: with two counts
    fixed the best third is the smallest that fits, so about ``2·√n``
    candidates are scored whatever the sizes. ``line=1`` searches every tile.
    See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions, each >= 1, with ``M·N·K·(itemsize + c_itemsize) < 2⁶¹``.
    buffer_bytes : int
        On-chip buffer available for one A-, one B- and one C-tile.
    itemsize, c_itemsize, line : int
        Bytes per element of ``A`` and ``B``, of ``C`` (default: ``itemsize``), and per transfer.
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
        the narrowest line-aligned tile fits, or the traffic would overflow
        64-bit integers.

    Examples
    --------
    >>> best_tile(256, 256, 256, buffer_bytes=48 * 1024, itemsize=4)
    (64, 128, 16)
    >>> round(traffic(256, 256, 256, (64, 128, 16), "mnk", 4).total / compulsory(256, 256, 256, 4).total, 2)
    2.33

    Counting bytes instead of lines, the best tile is one float deep, which
    costs a whole line per row in a real transfer:

    >>> best_tile(4096, 4096, 4096, 32 * 1024, 4, line=1)
    (79, 100, 1)
    """
    M, N, K = _dims(M, N, K)
    order = _order(order)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    buf = _check.integer(buffer_bytes, "buffer_bytes", minimum=1)
    line = _check.integer(line, "line", minimum=1)
    if M * N * K * (isz + csz) + line * (M * N + N * K + K * M) >= 2**61:
        raise ValueError(f"M·N·K = {M * N * K:,} is too large: its traffic overflows 64-bit integers "
                         "(keep M·N·K·(itemsize + c_itemsize) below 2**61)")
    if footprint(M, N, K, (M, N, K), isz, c_itemsize=csz) <= buf:
        return M, N, K
    per_line = {s: line // math.gcd(line, s) for s in (isz, csz)}  # elements in a whole number of lines
    unit = {"m": 1, "k": per_line[isz], "n": math.lcm(per_line[isz], per_line[csz])}
    g = _Grid({"m": M, "n": N, "k": K}, unit, isz, csz, buf)
    if (need := footprint(M, N, K, (1, g.small("n"), g.small("k")), isz, c_itemsize=csz)) > buf:
        raise ValueError(f"buffer_bytes must hold at least the narrowest line-aligned tile "
                         f"{(1, g.small('n'), g.small('k'))} ({need} bytes), got {buf}")
    points = [np.broadcast_arrays(*(np.asarray(c, dtype=np.int64) for c in p)) for p in _best_counts(g, order)]
    counts = dict(zip(order, (np.concatenate([p[i].ravel() for p in points]) for i in range(3))))
    bm, bn, bk = (g.size(d, counts[d]) for d in "mnk")
    a, b, c = _padded(M, N, K, isz, csz, line)
    r_a, r_b, r_c = (_refetch(counts, order, x) for x in "ABC")
    keys = (r_a * a + r_b * b + (2 * r_c - 1) * c, counts["m"] * counts["n"] * counts["k"],
            (bm * bk + bk * bn) * isz + bm * bn * csz, bm, bn, bk)
    best = np.lexsort(keys[::-1])[0]  # lexsort's last key is the primary one
    return int(bm[best]), int(bn[best]), int(bk[best])


# ---- numbers so far -----------------------------------------------------------------


def numbers(ctx: _tally.Inputs) -> list[_tally.Row]:
    """Chapter 4's rows of the "numbers so far" table: CameraNet's largest pointwise conv, tiled.

    Follows the contract of :mod:`npukit.tally`. For the layer
    :func:`largest_pointwise` finds in ``ctx.net``, at the batch of
    ``ctx.images``: its GEMM dimensions and MACs, and the DRAM traffic (64-byte
    lines, INT8 operands, INT32 accumulators) of the best tile for
    ``ctx.npu_buffer`` bytes against the compulsory minimum. See chapter 4.

    Examples
    --------
    >>> from npukit import tally
    >>> numbers(tally.Context(npu_buffer=8 * 1024))[0].value
    'M=128, N=128, K=64 (1,048,576 MACs)'
    """
    _tally.inputs(ctx)
    _check.image_batch(ctx.images, "ctx.images")  # len() of one 3-D image would be its channels
    layer, (M, N, K) = largest_pointwise(ctx.net, batch=len(ctx.images))
    buffer_bytes, itemsize, c_itemsize = ctx.npu_buffer, 1, 4
    tile = best_tile(M, N, K, buffer_bytes, itemsize, c_itemsize=c_itemsize)
    t = traffic(M, N, K, tile, "mnk", itemsize, buffer_bytes, c_itemsize=c_itemsize)
    low = compulsory(M, N, K, itemsize, c_itemsize=c_itemsize)
    return [
        _tally.Row(4, f"{layer} (largest pointwise conv) as a GEMM, batch {len(ctx.images)}",
                  f"M={M}, N={N}, K={K} ({M * N * K:,} MACs)", "npukit.gemm.largest_pointwise and conv_as_gemm"),
        _tally.Row(4, f"best tile for a {buffer_bytes / 1024:g} KiB buffer "
                     f"({itemsize}-byte operands, {c_itemsize}-byte accumulators, 64-byte lines, order mnk)",
                  f"{tile} → {t.total:,} B of DRAM traffic", "npukit.gemm.best_tile and traffic"),
        _tally.Row(4, "traffic / compulsory minimum (C written as INT32 sums, before requantization)",
                   f"{t.total / low.total:.2f}×", "npukit.gemm.traffic vs compulsory"),
    ]
