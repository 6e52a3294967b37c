"""Tests for npukit.gemm (chapter 4, "GEMM and tiling").

References are independent of the module: ``numpy.matmul`` for the product,
and for the traffic model a simulation of the loop nest, written here, that
walks every tile step and counts the bytes each load and store moves.
"""

from __future__ import annotations

import itertools
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npukit import blas, gemm, measure
from npukit.figures import gemm as fg
from npukit.models import CameraNet

ORDERS = ["".join(p) for p in itertools.permutations("mnk")]


# ---- an independent reference: simulate the loop nest --------------------------


def simulate(M, N, K, tile, order, isz, csz, line=1):
    """Walk the tiled loop nest with one buffer slot per operand; count DRAM bytes in whole lines.

    Every matrix row starts on a line; a tile moves row by row, and each row costs every
    ``line``-byte line it touches. Returns (a_read, b_read, c_read, c_write).
    """
    bm, bn, bk = tile
    starts = {"m": range(0, M, bm), "n": range(0, N, bn), "k": range(0, K, bk)}
    step = {"m": bm, "n": bn, "k": bk}
    size = {"m": M, "n": N, "k": K}

    def extent(dim, start):
        return min(step[dim], size[dim] - start)

    def moved(rows_dim, cols_dim, r0, c0, s):  # a tile's rows, each costing the lines it touches
        first, end = c0 * s, (c0 + extent(cols_dim, c0)) * s
        return extent(rows_dim, r0) * ((end + line - 1) // line - first // line) * line

    slot = {"A": None, "B": None, "C": None}
    spilled = set()  # C-tiles whose partial sums sit in DRAM
    a_read = b_read = c_read = c_write = 0
    for outer in starts[order[0]]:
        for middle in starts[order[1]]:
            for inner in starts[order[2]]:
                at = dict(zip(order, (outer, middle, inner)))
                i, j, p = at["m"], at["n"], at["k"]
                if slot["A"] != (i, p):
                    slot["A"] = (i, p)
                    a_read += moved("m", "k", i, p, isz)
                if slot["B"] != (p, j):
                    slot["B"] = (p, j)
                    b_read += moved("k", "n", p, j, isz)
                if slot["C"] != (i, j):
                    if slot["C"] is not None:  # evict: write the partial sums out
                        oi, oj = slot["C"]
                        c_write += moved("m", "n", oi, oj, csz)
                        spilled.add(slot["C"])
                    if (i, j) in spilled:  # coming back: read the partial sums in
                        c_read += moved("m", "n", i, j, csz)
                    slot["C"] = (i, j)
    oi, oj = slot["C"]
    c_write += moved("m", "n", oi, oj, csz)
    return a_read, b_read, c_read, c_write


def fits(M, N, K, tile, isz, csz, buffer_bytes):
    bm, bn, bk = min(tile[0], M), min(tile[1], N), min(tile[2], K)
    return bm * bk * isz + bk * bn * isz + bm * bn * csz <= buffer_bytes


# ---- tiled_matmul ------------------------------------------------------------------


def _operands(rng, M, N, K, dtype):
    if dtype == "int8":
        return (rng.integers(-128, 128, (M, K), dtype=np.int8), rng.integers(-128, 128, (K, N), dtype=np.int8))
    return rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype)


dims = st.integers(1, 40)
tiles = st.tuples(st.integers(1, 48), st.integers(1, 48), st.integers(1, 48))


@settings(max_examples=120, deadline=None)
@given(M=dims, N=dims, K=dims, tile=tiles, order=st.sampled_from(ORDERS),
       dtype=st.sampled_from(["float32", "float64", "int8"]), seed=st.integers(0, 2**16))
def test_tiled_matmul_equals_numpy(M, N, K, tile, order, dtype, seed):
    A, B = _operands(np.random.default_rng(seed), M, N, K, dtype)
    C = gemm.tiled_matmul(A, B, tile, order)
    if dtype == "int8":
        want = np.matmul(A.astype(np.int32), B.astype(np.int32))
        assert C.dtype == np.int32
        np.testing.assert_array_equal(C, want)
    else:
        want = np.matmul(A, B)
        assert C.dtype == want.dtype
        rtol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(C, want, rtol=rtol, atol=rtol * np.sqrt(K))


@settings(max_examples=30, deadline=None)
@given(M=dims, N=dims, K=dims, tile=tiles, seed=st.integers(0, 2**16))
def test_every_loop_order_gives_the_same_bits(M, N, K, tile, seed):
    A, B = _operands(np.random.default_rng(seed), M, N, K, "float32")
    results = [gemm.tiled_matmul(A, B, tile, order) for order in ORDERS]
    for C in results[1:]:
        np.testing.assert_array_equal(C, results[0])


@pytest.mark.parametrize("tile", [(1000, 1000, 1000), (7, 1000, 3), (1, 1, 1)])
def test_tiles_larger_than_the_matrix_and_tiny_tiles(tile):
    A, B = _operands(np.random.default_rng(1), 5, 6, 7, "float64")
    np.testing.assert_allclose(gemm.tiled_matmul(A, B, tile, "nkm"), A @ B, rtol=1e-12)


def test_int8_extremes_accumulate_in_int32():
    A = np.full((3, 1000), -128, np.int8)
    B = np.full((1000, 2), -128, np.int8)
    C = gemm.tiled_matmul(A, B, (2, 2, 100), "kmn")
    assert C.dtype == np.int32
    assert (C == 1000 * 128 * 128).all()  # 16,384,000: far beyond int16, inside int32


def test_zero_sized_dimensions():
    A, B = np.ones((3, 0), np.float32), np.ones((0, 4), np.float32)
    np.testing.assert_array_equal(gemm.tiled_matmul(A, B, (2, 2, 2)), np.zeros((3, 4), np.float32))
    assert gemm.tiled_matmul(np.ones((0, 3)), np.ones((3, 2)), (2, 2, 2)).shape == (0, 2)


def test_non_contiguous_inputs():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((30, 20))[::2].T  # (20, 15), strided
    B = rng.standard_normal((15, 9), dtype=np.float64)
    np.testing.assert_allclose(gemm.tiled_matmul(A, B, (4, 4, 4)), A @ B, rtol=1e-12)


def test_tiled_matmul_does_not_change_inputs():
    A, B = _operands(np.random.default_rng(3), 9, 8, 7, "int8")
    a0, b0 = A.copy(), B.copy()
    gemm.tiled_matmul(A, B, (4, 4, 4))
    np.testing.assert_array_equal(A, a0)
    np.testing.assert_array_equal(B, b0)


def test_int8_sums_beyond_int32_wrap_like_numpy_int32():
    A = np.full((1, 140_000), 127, np.int8)
    B = np.full((140_000, 1), 127, np.int8)
    want = A.astype(np.int32) @ B.astype(np.int32)  # 2,258,060,000 wraps past 2**31 - 1
    np.testing.assert_array_equal(gemm.tiled_matmul(A, B, (1, 1, 50_000)), want)


def test_tiled_matmul_makes_no_temporaries_per_tile():
    """Memory stays flat however many tiles: one scratch tile, operands read in place."""
    import tracemalloc

    rng = np.random.default_rng(6)
    A, B = rng.standard_normal((256, 256), dtype=np.float32), rng.standard_normal((256, 256), dtype=np.float32)
    gemm.tiled_matmul(A, B, (16, 16, 16))
    tracemalloc.start()
    gemm.tiled_matmul(A, B, (16, 16, 16))  # 4,096 steps
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 256 * 256 * 4 + 64 * 1024  # C itself and small change, not a tile per step


# ---- traffic -------------------------------------------------------------------------


small = st.integers(1, 12)
lines = st.sampled_from([1, 2, 4, 8, 16, 64])


@settings(max_examples=250, deadline=None)
@given(M=small, N=small, K=small, tile=st.tuples(st.integers(1, 14), st.integers(1, 14), st.integers(1, 14)),
       order=st.sampled_from(ORDERS), isz=st.sampled_from([1, 2, 4]), csz=st.sampled_from([1, 4]), line=lines)
def test_traffic_equals_a_simulated_loop_nest(M, N, K, tile, order, isz, csz, line):
    t = gemm.traffic(M, N, K, tile, order, isz, c_itemsize=csz, line=line)
    assert (t.a_read, t.b_read, t.c_read, t.c_write) == simulate(M, N, K, tile, order, isz, csz, line)
    assert t.reads == t.a_read + t.b_read + t.c_read
    assert t.writes == t.c_write
    assert t.total == t.reads + t.writes


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3000), b=st.integers(1, 400), s=st.sampled_from([1, 2, 4, 8]), line=st.integers(1, 300))
def test_row_lines_equals_a_sum_over_every_segment(n, b, s, line):
    want = sum(-(-min(p + b, n) * s // line) - p * s // line for p in range(0, n, b))
    assert gemm._row_lines(n, b, s, line) == want


@settings(max_examples=60, deadline=None)
@given(M=small, N=small, K=small, tile=st.tuples(small, small, small), order=st.sampled_from(ORDERS), line=lines)
def test_traffic_is_never_below_the_compulsory_minimum(M, N, K, tile, order, line):
    t = gemm.traffic(M, N, K, tile, order, 4, line=line)
    low = gemm.compulsory(M, N, K, 4, line=line)
    assert t.a_read >= low.a_read and t.b_read >= low.b_read and t.c_write >= low.c_write
    rounded = lambda n: -(-n * 4 // line) * line  # noqa: E731
    assert low.total == M * rounded(K) + K * rounded(N) + M * rounded(N)


def test_line_aligned_tiles_move_the_padded_matrix_per_pass():
    """A tile whose rows are whole lines wastes nothing: one pass over an operand costs the operand."""
    t = gemm.traffic(1000, 1000, 1000, (100, 64, 32), "mnk", 4, line=64)  # bk·4 = 128 B, bn·4 = 256 B
    low = gemm.compulsory(1000, 1000, 1000, 4, line=64)
    assert t.a_read == 16 * low.a_read and t.b_read == 10 * low.b_read and t.c_write == low.c_write


def test_a_one_element_wide_tile_reads_a_line_per_element():
    t = gemm.traffic(256, 256, 256, (64, 64, 1), "mnk", 4, line=64)
    exact = gemm.traffic(256, 256, 256, (64, 64, 1), "mnk", 4, line=1)
    assert t.a_read == 16 * exact.a_read
    assert t.b_read == exact.b_read  # B's tile rows are 64 floats: whole lines


def test_k_innermost_writes_c_once_k_outermost_once_per_k_step():
    M = N = K = 64
    for order in ("mnk", "nmk"):
        assert gemm.traffic(M, N, K, (16, 16, 16), order, 4).c_write == M * N * 4
        assert gemm.traffic(M, N, K, (16, 16, 16), order, 4).c_read == 0
    for order in ("kmn", "knm", "mkn", "nkm"):
        t = gemm.traffic(M, N, K, (16, 16, 16), order, 4)
        assert t.c_write == 4 * M * N * 4 and t.c_read == 3 * M * N * 4


def test_footprint_and_buffer_check():
    assert gemm.footprint(100, 100, 100, (10, 20, 30), 1, c_itemsize=4) == 10 * 30 + 30 * 20 + 10 * 20 * 4
    assert gemm.footprint(5, 5, 5, (64, 64, 64), 4) == 3 * 25 * 4  # clipped to the matrix
    t = gemm.traffic(64, 64, 64, (16, 16, 16), "mnk", 4, buffer_bytes=3 * 16 * 16 * 4)
    assert t.footprint == 3 * 16 * 16 * 4


# ---- best_tile -------------------------------------------------------------------------


def aligned_tiles(M, N, K, isz, csz, line):
    """Every tile whose rows are whole lines (or which spans its dimension): what best_tile searches."""
    uk = line // np.gcd(line, isz)
    un = np.lcm(line // np.gcd(line, isz), line // np.gcd(line, csz))
    return itertools.product(range(1, M + 1), [b for b in range(1, N + 1) if b % un == 0 or b == N],
                             [b for b in range(1, K + 1) if b % uk == 0 or b == K])


def exhaustive_best(M, N, K, buffer_bytes, isz, order, csz, line):
    """The lowest (traffic, steps, footprint, bm, bn, bk) of every aligned tile that fits, by simulation."""
    keys = []
    for t in aligned_tiles(M, N, K, isz, csz, line):
        if fits(M, N, K, t, isz, csz, buffer_bytes):
            steps = -(-M // t[0]) * -(-N // t[1]) * -(-K // t[2])
            need = gemm.footprint(M, N, K, t, isz, c_itemsize=csz)
            keys.append((sum(simulate(M, N, K, t, order, isz, csz, line)), steps, need, *t))
    return min(keys) if keys else None


@settings(max_examples=40, deadline=None)
@given(M=st.integers(1, 7), N=st.integers(1, 9), K=st.integers(1, 9), order=st.sampled_from(ORDERS),
       isz=st.sampled_from([1, 2, 4]), csz=st.sampled_from([1, 4]), line=st.sampled_from([1, 4, 8, 16]),
       buffer_bytes=st.integers(3, 600))
def test_best_tile_matches_an_exhaustive_search_over_aligned_tiles(M, N, K, order, isz, csz, line, buffer_bytes):
    best = exhaustive_best(M, N, K, buffer_bytes, isz, order, csz, line)
    if best is None:
        with pytest.raises(ValueError, match="buffer_bytes must hold at least the narrowest line-aligned tile"):
            gemm.best_tile(M, N, K, buffer_bytes, isz, order, c_itemsize=csz, line=line)
        return
    tile = gemm.best_tile(M, N, K, buffer_bytes, isz, order, c_itemsize=csz, line=line)
    assert fits(M, N, K, tile, isz, csz, buffer_bytes)
    assert tile == best[3:]


def brute_force_best_tile(M, N, K, buffer_bytes, isz, order, csz, line=1):
    """The smallest aligned tile for each tile count, in all three dimensions, scored by re-fetch factors.

    With aligned tiles one pass over an operand costs its padded bytes, so the traffic is
    the re-fetch factors (written here from the rules of the model) times those bytes.
    """
    unit = {"m": 1, "k": line // np.gcd(line, isz), "n": np.lcm(line // np.gcd(line, isz), line // np.gcd(line, csz))}

    def candidates(n, u):
        sizes = sorted({b for b in range(u, n, u)} | {n})
        return np.unique([min(b for b in sizes if -(-n // b) <= c) for c in {-(-n // b) for b in sizes}])

    bm, bn, bk = np.meshgrid(candidates(M, unit["m"]), candidates(N, unit["n"]), candidates(K, unit["k"]),
                             indexing="ij")
    need = (bm * bk + bk * bn) * isz + bm * bn * csz
    count = {"m": -(-M // bm), "n": -(-N // bn), "k": -(-K // bk)}
    rounded = lambda n, s: -(-n * s // line) * line  # noqa: E731
    total = 0
    for deps, weight in (("mk", M * rounded(K, isz)), ("kn", K * rounded(N, isz)), ("mn", 2 * M * rounded(N, csz))):
        (free,) = set("mnk") - set(deps)
        inside = order[order.index(free) + 1:]
        moves = np.zeros(bm.shape, bool)
        for d in inside:
            moves |= count[d] > 1
        total = total + np.where(moves, count[free], 1) * weight
    steps = count["m"] * count["n"] * count["k"]
    ok = need <= buffer_bytes
    keys = [x[ok] for x in (total, steps, need, bm, bn, bk)]
    best = np.lexsort(keys[::-1])[0]
    return int(keys[3][best]), int(keys[4][best]), int(keys[5][best])


def test_best_tile_equals_the_brute_force_search_on_random_sizes():
    rng = np.random.default_rng(2024)
    for case in range(300):
        hi = (6, 40, 300, 1200)[case % 4]
        M, N, K = (int(v) for v in rng.integers(1, hi + 1, size=3))
        isz, csz = int(rng.choice([1, 2, 4])), int(rng.choice([1, 4]))
        line = int(rng.choice([1, 8, 64]))
        order = str(rng.choice(ORDERS))
        whole = (M * K + K * N) * isz + M * N * csz
        buf = max(4 * line + 2 * isz + csz, int(np.exp(rng.uniform(np.log(2 * isz + csz), np.log(1.2 * whole + 1)))))
        try:
            want = brute_force_best_tile(M, N, K, buf, isz, order, csz, line)
        except IndexError:  # nothing fits
            continue
        got = gemm.best_tile(M, N, K, buf, isz, order, c_itemsize=csz, line=line)
        assert got == want, (M, N, K, buf, isz, csz, order, line)


def test_best_tile_uses_the_whole_matrix_when_it_fits():
    assert gemm.best_tile(8, 8, 8, 10**6, 4) == (8, 8, 8)
    t = gemm.traffic(8, 8, 8, (8, 8, 8), "mnk", 4)
    assert t == gemm.compulsory(8, 8, 8, 4)


def test_best_tile_rows_are_whole_lines_and_beat_the_byte_optimum_in_lines():
    bm, bn, bk = gemm.best_tile(4096, 4096, 4096, 32 * 1024, 4)
    assert (bk * 4) % 64 == 0 and (bn * 4) % 64 == 0
    by_bytes = gemm.best_tile(4096, 4096, 4096, 32 * 1024, 4, line=1)
    assert by_bytes == (79, 100, 1)
    in_lines = gemm.traffic(4096, 4096, 4096, by_bytes, "mnk", 4).total
    assert gemm.traffic(4096, 4096, 4096, (bm, bn, bk), "mnk", 4).total < in_lines / 5


def test_best_tile_is_fast_for_huge_sizes_and_refuses_absurd_ones():
    tile = gemm.best_tile(10**8, 64, 64, 32 * 1024, 1, c_itemsize=4)  # a loop over every count took ~28 s
    assert fits(10**8, 64, 64, tile, 1, 4, 32 * 1024)
    assert gemm.traffic(10**8, 64, 64, tile, "mnk", 1, c_itemsize=4).total == \
        gemm.traffic(10**8, 64, 64, brute_force_best_tile(10**4, 64, 64, 32 * 1024, 1, "mnk", 4, 64), "mnk", 1,
                     c_itemsize=4).total  # M only repeats the same row tiles: the same best tile as at 10**4
    for order in ORDERS:
        bm, bn, bk = gemm.best_tile(700_000, 700_000, 100_000, 2**30, 1, order, c_itemsize=4)
        assert fits(700_000, 700_000, 100_000, (bm, bn, bk), 1, 4, 2**30)
    with pytest.raises(ValueError, match="too large: its traffic overflows 64-bit integers"):
        gemm.best_tile(10**7, 10**7, 10**7, 2**20, 4)


@pytest.mark.parametrize("isz", [1, 2, 4])
def test_c_itemsize_defaults_to_itemsize(isz):
    M, N, K, tile = 7, 9, 5, (3, 4, 2)
    for order in ORDERS:
        t = gemm.traffic(M, N, K, tile, order, isz)
        assert (t.a_read, t.b_read, t.c_read, t.c_write) == simulate(M, N, K, tile, order, isz, isz, 64)
    assert gemm.footprint(M, N, K, tile, isz) == (3 * 2 + 2 * 4) * isz + 3 * 4 * isz
    assert gemm.compulsory(M, N, K, isz, line=1).c_write == M * N * isz
    buf = 3 * 16 * isz + 8 * 8 * isz
    tile = gemm.best_tile(64, 64, 64, buf, isz, line=1)
    assert fits(64, 64, 64, tile, isz, isz, buf) and tile == brute_force_best_tile(64, 64, 64, buf, isz, "mnk", isz)


# ---- lowering and numbers ------------------------------------------------------------------


def test_pointwise_conv_is_the_gemm_conv_as_gemm_describes():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 6, 5, 3))  # N, C_in, H, W
    w = rng.standard_normal((4, 6, 1, 1))  # C_out, C_in, 1, 1
    M, N, K = gemm.conv_as_gemm(4, 6, 5, 3, batch=2)
    assert (M, N, K) == (4, 30, 6)
    direct = np.zeros((2, 4, 5, 3))
    for b, o, c, h, v in itertools.product(range(2), range(4), range(6), range(5), range(3)):
        direct[b, o, h, v] += w[o, c, 0, 0] * x[b, c, h, v]
    X = x.transpose(1, 0, 2, 3).reshape(K, N)  # channels become the rows of B
    C = gemm.tiled_matmul(w.reshape(M, K), X, (3, 7, 4))
    np.testing.assert_allclose(C.reshape(4, 2, 5, 3).transpose(1, 0, 2, 3), direct, rtol=1e-12)
    assert gemm.conv_as_gemm(8, 8, 4, 4, kh=3, kw=3, groups=8) == (1, 16, 9)


def test_largest_pointwise_of_cameranet():
    net = CameraNet()  # the architecture is enough; no trained weights needed
    name, (M, N, K) = gemm.largest_pointwise(net, batch=3)
    layer = next(layer for layer in net.layers if layer.name == name)
    assert layer.kernel == 1 and layer.groups == 1
    assert (M, K) == (layer.cout, layer.cin)
    images = np.random.default_rng(5).random((3, 3, net.size, net.size), dtype=np.float32)
    acts = net.activations(images)
    x = acts[name.replace(".pw", ".dw_relu")]
    assert N == x.shape[0] * x.shape[2] * x.shape[3]
    C = gemm.tiled_matmul(net.params[f"{name}.weight"].reshape(M, K), x.transpose(1, 0, 2, 3).reshape(K, N), (40, 7, 9))
    np.testing.assert_allclose(C.reshape(M, 3, *x.shape[2:]).transpose(1, 0, 2, 3), acts[name], rtol=1e-4, atol=1e-5)
    with pytest.raises(TypeError, match="net must be a CameraNet"):
        gemm.largest_pointwise("net")


def test_numbers_rows():
    from npukit import tally

    ctx = tally.Context(npu_buffer=8 * 1024)
    rows = gemm.numbers(ctx)
    assert all(isinstance(r, tally.Row) and r.chapter == 4 for r in rows)
    layer, (M, N, K) = gemm.largest_pointwise(ctx.net, batch=len(ctx.images))
    assert rows[0].value == f"M={M}, N={N}, K={K} ({M * N * K:,} MACs)" and layer in rows[0].quantity
    whole = (M * K + K * N) + M * N * 4
    assert whole > 32 * 1024  # the tally's layer needs tiling on the chapter's 32 KiB buffer


# ---- the measurements and figures (npukit.figures.gemm) ----------------------------------------


def test_ladder_small_is_correct_and_ordered():
    rungs = blas.ladder(32, python_n=6, row_n=8, small_tile=(8, 8, 8), good_tile=(32, 32, 32),
                      dtype="float64", rounds=3, warmup=0)
    assert [r.name for r in rungs] == ["python", "row-vectorised", "tiled, small tile", "tiled, good tile", "numpy.matmul"]
    assert all(r.ok and r.error < 1e-12 and r.gflops > 0 and r.seconds > 0 for r in rungs)
    assert [r.n for r in rungs] == [6, 8, 32, 32, 32]
    assert all(r.rounds == 3 and r.seconds == statistics.median(r.times) for r in rungs)
    assert all(r.gflops == pytest.approx(2 * r.n**3 / r.seconds / 1e9) for r in rungs)
    lo, hi = rungs[0].spread()
    assert lo <= rungs[0].gflops <= hi


def test_rates_compare_rungs_per_flop_round_by_round():
    """Sizes differ, so rungs are compared per FLOP; a round that slows both cancels (hand-made times)."""
    a = blas.Rung("small", 4, 2e-3, 2 * 4**3 / 2e-3 / 1e9, 0.0, True, (1e-3, 2e-3, 4e-3, 2e-3))
    b = blas.Rung("big", 8, 2e-3, 2 * 8**3 / 2e-3 / 1e9, 0.0, True, (1e-3, 2e-3, 4e-3, 2e-3))
    v = blas.rates([a, b]).verdict("big", "small")
    assert (v.ratio, v.low, v.high, v.word) == (1 / 8, 1 / 8, 1 / 8, "faster")     # 8× the FLOPs in the same time
    with pytest.raises(ValueError, match="same ladder"):
        blas.rates([a, blas.Rung("c", 8, 1e-3, 1.0, 0.0, True)])
    with pytest.raises(ValueError, match="seconds must be the median"):
        blas.Rung("x", 8, 5e-3, 1.0, 0.0, True, (1e-3, 2e-3, 4e-3))
    with pytest.raises(ValueError, match="times"):
        blas.Rung("x", 8, 1e-3, 1.0, 0.0, True, (1e-3,))


def _timings(threads, **kw):
    base = dict(numpy=1e-3, step=1e-6, bandwidth=1e10, tiled=[9e-3, 3e-3], python=[1e-3, 1e-4],
                accumulate=[2e-3, 5e-4], calls=[5e-3, 2e-3], kernel=[2e-7, 1.5e-6])
    return blas.Timings(threads, **(base | kw))


def test_breakdown_components_add_up_to_the_measurement():
    one = _timings("one", numpy=2e-3, tiled=[12e-3, 4e-3], calls=[8e-3, 3e-3], kernel=[3e-7, 2.5e-6])
    bd = blas.Breakdown(64, (16, 32), _timings("all"), one)
    for threads in ("all", "one"):
        parts = bd.components(threads)
        np.testing.assert_allclose(sum(parts.values()), bd._pick(threads).tiled)
        assert (parts["threading"] == 0).all() if threads == "one" else True
    assert list(bd.steps()) == [64, 8]
    # the model: steps·step + bytes/bandwidth + numpy, with bytes from the traffic model
    ab = [2 * 64**3 / b * 4 for b in (16, 32)]
    moved = np.array(ab) + np.array([(2 * 4 - 1), (2 * 2 - 1)]) * 64 * 64 * 4
    np.testing.assert_allclose(bd.moved(), moved)
    np.testing.assert_allclose(bd.model("all"), [64e-6, 8e-6] + moved / 1e10 + 1e-3)


def test_breakdown_measures_and_draws():
    bd = blas.breakdown(64, sides=(16, 64), rounds=3)
    assert bd.sides == (16, 64) and bd.one.threads == "one" and bd.all.accumulate[1] == 0.0
    c = bd.comparison
    assert c.rounds == 3 and bd.all.tiled[0] == c.median("all tiled 16") and bd.one.numpy == c.median("one numpy")
    assert bd.all.python == bd.one.python                       # no BLAS in the loop: timed once for both
    v = bd.verdict(16)
    assert v.name == "all tiled 16" and v.baseline == "all numpy" and v.rounds == 3
    assert v.ratio == pytest.approx(statistics.median(c.ratios("all tiled 16", "all numpy")))
    assert bd.thread_verdict().baseline == "one numpy" and bd.thread_verdict("kernel 64").name == "all kernel 64"
    measured, quartiles = bd.measured("one")
    assert measured[0] == pytest.approx(bd.verdict(16, "one").ratio) and quartiles.shape == (2, 2)
    fig = fg.breakdown_figure(bd)
    assert len(fig.data) == 2 * (len(fg._PARTS) + 2)
    assert sum(bool(tr.visible) for tr in fig.data) == len(fg._PARTS) + 2
    assert fig.data[len(fg._PARTS)].error_y.array is not None            # the measured diamonds have whiskers
    with pytest.raises(ValueError, match="sides must be increasing"):
        blas.breakdown(64, sides=(32, 16))
    with pytest.raises(ValueError, match="side"):
        bd.verdict(32)
    with pytest.raises(ValueError, match="no interleaved rounds"):
        blas.Breakdown(64, (16, 64), bd.all, bd.one).verdict(16)
    with pytest.raises(ValueError, match="missing"):
        blas.Breakdown(64, (16, 64), bd.all, bd.one, measure.Comparison.from_times({"a": [1, 2], "b": [1, 2]}))


def test_breakdown_times_a_ladder_in_its_own_rounds():
    """With ladder=, the fast rungs are the breakdown's own measurements: one value per quantity."""
    bd = blas.breakdown(64, sides=(16, 32), rounds=3, ladder=dict(python_n=6, row_n=8, small=16, good=32))
    names = [r.name for r in bd.rungs]
    assert names == ["python", "row-vectorised", "tiled, small tile", "tiled, good tile", "numpy.matmul"]
    assert [r.n for r in bd.rungs] == [6, 8, 64, 64, 64] and all(r.ok for r in bd.rungs)
    by = {r.name: r for r in bd.rungs}
    assert by["tiled, good tile"].times == bd.comparison.times["all tiled 32"]
    assert by["numpy.matmul"].seconds == bd.all.numpy
    v = blas.rates(bd.rungs).verdict("tiled, good tile", "numpy.matmul")
    assert v.ratio == pytest.approx(bd.verdict(32).ratio)             # the same rounds, the same ratio
    assert blas.breakdown(64, sides=(16,), rounds=3).rungs == ()
    with pytest.raises(ValueError, match="ladder\\['good'\\]"):
        blas.breakdown(64, sides=(16, 32), rounds=3, ladder=dict(python_n=6, row_n=8, small=16, good=64))
    with pytest.raises(TypeError, match="ladder must be a mapping"):
        blas.breakdown(64, sides=(16,), rounds=3, ladder=dict(python_n=6))


def test_transposes_measure_and_draw():
    t = blas.transposes(96, sides=(8, 32, 200), rounds=3, odd=8)
    assert t.sides == (8, 32, 200) and len(t.blocked) == 3 and t.itemsize == 4 and t.odd_n == 104
    assert all(len(v) == 3 for v in t.times.values()) and t.comparison.baseline == "naive"
    v = t.odd_verdict()          # per-round (odd naive / odd copy) over (naive / copy)
    pow2 = [a / b for a, b in zip(t.times["naive"], t.times["copy"])]
    odd = [a / b for a, b in zip(t.times["odd naive"], t.times["odd copy"])]
    assert v.ratio == pytest.approx(float(np.median([o / q for o, q in zip(odd, pow2)])))
    with pytest.raises(ValueError, match="no odd-sided"):
        blas.Transposes(64, 4, 1e-5, 1e-4, (8,), (3e-5,)).odd_verdict()
    assert t.rate(1.0) == 2 * 96 * 96 * 4
    fig = fg.transpose_figure(t)
    assert list(fig.data[0].x) == [8, 32, 200]


def test_figures():
    fig = fg.traffic_figure(64, 64, 64, buffer_bytes=8 * 1024, orders=("mnk", "kmn"), depths=(4, 16, 64))
    assert len(fig.data) == 3 * 2 + 2
    assert len(fig.layout.sliders[0].steps) == 3
    assert [tr.visible for tr in fig.data[:2]] == [True, True]
    tr = fig.data[0]  # a point whose tile does not fit the buffer is left out
    for b, y in zip(tr.x, tr.y):
        assert (y is None) == (not fits(64, 64, 64, (b, b, 4), 4, 4, 8 * 1024))
    rungs = [blas.Rung("a", 8, 1.0, 0.5, 0.0, True), blas.Rung("b", 8, 0.1, 5.0, 0.0, True)]
    bar = fg.ladder_figure(rungs, peak_gflops=50.0)
    assert list(bar.data[0].y) == [0.5, 5.0]
    assert "10% of peak" in bar.data[0].text[1]
    sched = fg.schedule_figure(gemm.traffic(64, 64, 64, (16, 16, 16), "kmn"), gemm.compulsory(64, 64, 64), title="x")
    assert list(sched.data[0].y) == [16384, 65536, 49152, 65536]


# ---- every error path --------------------------------------------------------------------


A32 = np.ones((4, 3), np.float32)
B32 = np.ones((3, 5), np.float32)


@pytest.mark.parametrize(
    "args, exc, match",
    [
        (([[1.0]], B32), TypeError, "A must be a numpy.ndarray"),
        ((A32, "B"), TypeError, "B must be a numpy.ndarray"),
        ((np.ones(3, np.float32), B32), ValueError, "A must be 2-D"),
        ((A32, np.ones((3, 5, 1), np.float32)), ValueError, "B must be 2-D"),
        ((A32, B32.astype(np.float64)), TypeError, "same dtype"),
        ((A32.astype(np.int16), B32.astype(np.int16)), TypeError, "A.dtype must be float32, float64 or int8"),
        ((A32, np.ones((4, 5), np.float32)), ValueError, "A's columns must equal B's rows"),
    ],
)
def test_tiled_matmul_bad_operands(args, exc, match):
    with pytest.raises(exc, match=match):
        gemm.tiled_matmul(*args)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(M=0), ValueError, "M must be >= 1"),
        (dict(tile=(0, 1, 1)), ValueError, r"tile\[0\] must be >= 1"),
        (dict(order="nm"), ValueError, "order must be one of"),
        (dict(line=0), ValueError, "line must be >= 1"),
        (dict(line=64.0), TypeError, "line must be an integer"),
        (dict(buffer_bytes=1000), ValueError, r"tile \(16, 16, 16\) needs 3072 bytes .* more than buffer_bytes=1000"),
    ],
)
def test_traffic_errors(kwargs, exc, match):
    args = dict(M=64, N=64, K=64, tile=(16, 16, 16), order="mnk", itemsize=4) | kwargs
    with pytest.raises(exc, match=match):
        gemm.traffic(**args)


def test_best_tile_errors():
    with pytest.raises(ValueError, match=r"narrowest line-aligned tile \(1, 4, 4\) \(96 bytes\)"):
        gemm.best_tile(4, 4, 4, buffer_bytes=40, itemsize=4)
    with pytest.raises(ValueError, match=r"narrowest line-aligned tile \(1, 1, 1\) \(12 bytes\)"):
        gemm.best_tile(4, 4, 4, buffer_bytes=11, itemsize=4, line=1)
    with pytest.raises(ValueError, match="line must be >= 1"):
        gemm.best_tile(4, 4, 4, 1024, 4, line=0)
