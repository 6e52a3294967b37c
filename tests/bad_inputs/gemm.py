"""Bad inputs for npukit.gemm: one bad argument at a time, the others valid."""

import numpy as np
from badinput import bad

from npukit import gemm, tally

A = np.ones((4, 3), np.float32)
B = np.ones((3, 5), np.float32)
nan = float("nan")


def _dims_rows(f, *rest, **kw):
    """Rows for the M, N, K arguments of ``f(M, N, K, *rest)``."""
    rows = []
    for i, name in enumerate("MNK"):
        for v, e in ((0, ValueError), (-4, ValueError), (4.0, TypeError), (True, TypeError), ("4", TypeError),
                     (None, TypeError)):
            dims = [8, 8, 8]
            dims[i] = v
            rows.append(bad(f, *dims, *rest, exc=e, names=name, **kw))
    return rows


def _tile_rows(f, before, after=(), name="tile", **kw):
    """Rows for a tile argument between ``before`` and ``after``."""
    return [bad(f, *before, t, *after, exc=e, names=n, **kw) for t, e, n in (
        ((2, 2), TypeError, name), (4, TypeError, name), ("444", TypeError, name), (None, TypeError, name),
        ((2, 0, 2), ValueError, f"{name}[1]"), ((2, -3, 2), ValueError, f"{name}[1]"),
        ((2, 2, 2.5), TypeError, f"{name}[2]"), ((True, 2, 2), TypeError, f"{name}[0]"))]


def _itemsize_rows(f, *args, **kw):
    return [bad(f, *args, exc=e, names=n, **(kw | {n: v})) for n in ("itemsize", "c_itemsize")
            for v, e in ((0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError), ("4", TypeError))]


def _traffic(**kw):
    return dict(a_read=1, b_read=1, c_read=0, c_write=1, footprint=3) | kw


CASES = [
    # conv_as_gemm
    *[bad(gemm.conv_as_gemm, **(dict(c_out=8, c_in=8, h_out=4, w_out=4) | {n: v}), exc=e, names=n)
      for n in ("c_out", "c_in", "h_out", "w_out", "kh", "kw", "batch", "groups")
      for v, e in ((0, ValueError), (-1, ValueError), (2.0, TypeError), (True, TypeError))],
    bad(gemm.conv_as_gemm, 6, 4, 2, 2, groups=4, names="groups"),
    # largest_pointwise
    bad(gemm.largest_pointwise, "net", exc=TypeError, names="net"),
    bad(gemm.largest_pointwise, None, exc=TypeError, names="net"),
    # tiled_matmul
    bad(gemm.tiled_matmul, [[1.0]], B, exc=TypeError, names="A"),
    bad(gemm.tiled_matmul, A, "B", exc=TypeError, names="B"),
    bad(gemm.tiled_matmul, np.ones(3, np.float32), B, names="A"),
    bad(gemm.tiled_matmul, A, np.ones((3, 5, 1), np.float32), names="B"),
    bad(gemm.tiled_matmul, A, B.astype(np.float64), exc=TypeError, names="A and B"),
    bad(gemm.tiled_matmul, A.astype(np.int16), B.astype(np.int16), exc=TypeError, names="A.dtype"),
    bad(gemm.tiled_matmul, A.astype(bool), B.astype(bool), exc=TypeError, names="A.dtype"),
    bad(gemm.tiled_matmul, A, np.ones((4, 5), np.float32), names="A's columns"),
    *_tile_rows(gemm.tiled_matmul, (A, B)),
    bad(gemm.tiled_matmul, A, B, (2, 2, 2), "mnn", names="order"),
    bad(gemm.tiled_matmul, A, B, (2, 2, 2), "MNK", names="order"),
    bad(gemm.tiled_matmul, A, B, (2, 2, 2), 3, exc=TypeError, names="order"),
    bad(gemm.tiled_matmul, A, B, (2, 2, 2), ["m", "n", "k"], exc=TypeError, names="order"),
    # footprint, traffic, compulsory
    *_dims_rows(gemm.footprint, (2, 2, 2)),
    *_tile_rows(gemm.footprint, (8, 8, 8)),
    *_itemsize_rows(gemm.footprint, 8, 8, 8, (2, 2, 2)),
    *_dims_rows(gemm.traffic, (2, 2, 2)),
    *_tile_rows(gemm.traffic, (8, 8, 8)),
    *_itemsize_rows(gemm.traffic, 8, 8, 8, (2, 2, 2)),
    bad(gemm.traffic, 8, 8, 8, (2, 2, 2), "xyz", names="order"),
    bad(gemm.traffic, 8, 8, 8, (2, 2, 2), None, exc=TypeError, names="order"),
    bad(gemm.traffic, 8, 8, 8, (2, 2, 2), buffer_bytes=0, names="buffer_bytes"),
    bad(gemm.traffic, 8, 8, 8, (2, 2, 2), buffer_bytes=100.0, exc=TypeError, names="buffer_bytes"),
    bad(gemm.traffic, 8, 8, 8, (4, 4, 4), buffer_bytes=100, names="buffer_bytes"),
    *_dims_rows(gemm.compulsory),
    *_itemsize_rows(gemm.compulsory, 8, 8, 8),
    # best_tile
    *_dims_rows(gemm.best_tile, 1024),
    *_itemsize_rows(gemm.best_tile, 8, 8, 8, 1024),
    bad(gemm.best_tile, 8, 8, 8, 11, 4, names="buffer_bytes"),
    bad(gemm.best_tile, 8, 8, 8, 0, names="buffer_bytes"),
    bad(gemm.best_tile, 8, 8, 8, 1024.0, exc=TypeError, names="buffer_bytes"),
    bad(gemm.best_tile, 8, 8, 8, "1024", exc=TypeError, names="buffer_bytes"),
    bad(gemm.best_tile, 8, 8, 8, 1024, order="kkk", names="order"),
    bad(gemm.best_tile, 10**7, 10**7, 10**7, 2**20, names="M·N·K"),
    bad(gemm.best_tile, 64, 64, 64, 4000, 1, c_itemsize=4, names="narrowest line-aligned tile"),
    *[bad(f, *args, line=v, exc=e, names="line") for f, args in ((gemm.traffic, (8, 8, 8, (2, 2, 2))),
      (gemm.compulsory, (8, 8, 8)), (gemm.best_tile, (8, 8, 8, 1024)))
      for v, e in ((0, ValueError), (-64, ValueError), (64.0, TypeError), (True, TypeError), ("64", TypeError))],
    # the records
    *[bad(gemm.Traffic, **_traffic(**{f: v}), exc=e, names=f) for f in ("a_read", "b_read", "c_read", "c_write", "footprint")
      for v, e in ((-1, ValueError), (1.5, TypeError))],
    # numbers
    bad(gemm.numbers, "ctx", exc=TypeError, names="ctx"),
    # one 3-D image is not a batch of 3 (issue 24, class 6)
    bad(gemm.numbers, tally.Context(images=np.zeros((3, 32, 32), np.float32)), names="ctx.images"),
    bad(gemm.numbers, tally.Context(images=np.zeros((0, 3, 32, 32), np.float32)), names="ctx.images"),
    bad(gemm.tiled_matmul, np.ones((1024, 1024), np.float32), np.ones((1024, 1024), np.float32), (1, 1, 1),
        names="tile"),
]
