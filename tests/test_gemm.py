"""Tests for npukit.gemm (chapter 4, "GEMM and tiling").

References are independent of the module: ``numpy.matmul`` for the product,
and for the traffic model a simulation of the loop nest, written here, that
walks every tile step and counts the bytes each load and store moves.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npukit import figures, gemm
from npukit.models import CameraNet

ORDERS = ["".join(p) for p in itertools.permutations("mnk")]


# ---- an independent reference: simulate the loop nest --------------------------


def simulate(M, N, K, tile, order, isz, csz):
    """Walk the tiled loop nest with one buffer slot per operand; count DRAM bytes.

    Returns (a_read, b_read, c_read, c_write).
    """
    bm, bn, bk = tile
    starts = {"m": range(0, M, bm), "n": range(0, N, bn), "k": range(0, K, bk)}
    step = {"m": bm, "n": bn, "k": bk}
    size = {"m": M, "n": N, "k": K}

    def extent(dim, start):
        return min(step[dim], size[dim] - start)

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
                    a_read += extent("m", i) * extent("k", p) * isz
                if slot["B"] != (p, j):
                    slot["B"] = (p, j)
                    b_read += extent("k", p) * extent("n", j) * isz
                if slot["C"] != (i, j):
                    if slot["C"] is not None:  # evict: write the partial sums out
                        oi, oj = slot["C"]
                        c_write += extent("m", oi) * extent("n", oj) * csz
                        spilled.add(slot["C"])
                    if (i, j) in spilled:  # coming back: read the partial sums in
                        c_read += extent("m", i) * extent("n", j) * csz
                    slot["C"] = (i, j)
    oi, oj = slot["C"]
    c_write += extent("m", oi) * extent("n", oj) * csz
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


# ---- traffic -------------------------------------------------------------------------


small = st.integers(1, 12)


@settings(max_examples=200, deadline=None)
@given(M=small, N=small, K=small, tile=st.tuples(st.integers(1, 14), st.integers(1, 14), st.integers(1, 14)),
       order=st.sampled_from(ORDERS), isz=st.sampled_from([1, 2, 4]), csz=st.sampled_from([1, 4]))
def test_traffic_equals_a_simulated_loop_nest(M, N, K, tile, order, isz, csz):
    t = gemm.traffic(M, N, K, tile, order, isz, c_itemsize=csz)
    assert (t.a_read, t.b_read, t.c_read, t.c_write) == simulate(M, N, K, tile, order, isz, csz)
    assert t.reads == t.a_read + t.b_read + t.c_read
    assert t.writes == t.c_write
    assert t.total == t.reads + t.writes


@settings(max_examples=60, deadline=None)
@given(M=small, N=small, K=small, tile=st.tuples(small, small, small), order=st.sampled_from(ORDERS))
def test_traffic_is_never_below_the_compulsory_minimum(M, N, K, tile, order):
    t = gemm.traffic(M, N, K, tile, order, 4)
    low = gemm.compulsory(M, N, K, 4)
    assert t.a_read >= low.a_read and t.b_read >= low.b_read and t.c_write >= low.c_write
    assert low.total == (M * K + K * N + M * N) * 4


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


@settings(max_examples=25, deadline=None)
@given(M=st.integers(1, 6), N=st.integers(1, 6), K=st.integers(1, 6), order=st.sampled_from(ORDERS),
       isz=st.sampled_from([1, 4]), csz=st.sampled_from([1, 4]), buffer_bytes=st.integers(12, 400))
def test_best_tile_fits_and_matches_exhaustive_search(M, N, K, order, isz, csz, buffer_bytes):
    tile = gemm.best_tile(M, N, K, buffer_bytes, isz, order, c_itemsize=csz)
    assert fits(M, N, K, tile, isz, csz, buffer_bytes)
    best = min(
        sum(simulate(M, N, K, t, order, isz, csz))
        for t in itertools.product(range(1, M + 1), range(1, N + 1), range(1, K + 1))
        if fits(M, N, K, t, isz, csz, buffer_bytes)
    )
    assert sum(simulate(M, N, K, tile, order, isz, csz)) == best


def test_best_tile_uses_the_whole_matrix_when_it_fits():
    assert gemm.best_tile(8, 8, 8, 10**6, 4) == (8, 8, 8)
    t = gemm.traffic(8, 8, 8, (8, 8, 8), "mnk", 4)
    assert t == gemm.compulsory(8, 8, 8, 4)


def test_best_tile_large_problem_fits():
    tile = gemm.best_tile(1024, 1024, 1024, 256 * 1024, 4)
    assert fits(1024, 1024, 1024, tile, 4, 4, 256 * 1024)


def brute_force_best_tile(M, N, K, buffer_bytes, isz, order, csz):
    """The search best_tile used to do: every smallest tile for each tile count, in all three dimensions.

    Scores each tile by the loop-nest traffic formula (re-fetch factors written here from the
    rules of the model), then picks the lowest (traffic, steps, footprint, bm, bn, bk).
    """
    def candidates(n):
        return np.unique([-(-n // t) for t in range(1, n + 1)]).astype(np.int64)

    bm, bn, bk = np.meshgrid(candidates(M), candidates(N), candidates(K), indexing="ij")
    need = (bm * bk + bk * bn) * isz + bm * bn * csz
    count = {"m": -(-M // bm), "n": -(-N // bn), "k": -(-K // bk)}
    total = 0
    for operand, deps, weight in (("A", "mk", M * K * isz), ("B", "kn", K * N * isz), ("C", "mn", 2 * M * N * csz)):
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
    for case in range(400):
        hi = (6, 40, 300, 1200)[case % 4]
        M, N, K = (int(v) for v in rng.integers(1, hi + 1, size=3))
        isz, csz = int(rng.choice([1, 2, 4])), int(rng.choice([1, 4]))
        order = str(rng.choice(ORDERS))
        whole = (M * K + K * N) * isz + M * N * csz
        buf = max(2 * isz + csz, int(np.exp(rng.uniform(np.log(2 * isz + csz), np.log(1.2 * whole + 1)))))
        want = brute_force_best_tile(M, N, K, buf, isz, order, csz)
        assert gemm.best_tile(M, N, K, buf, isz, order, c_itemsize=csz) == want, (M, N, K, buf, isz, csz, order)


def test_best_tile_is_fast_for_huge_sizes_and_refuses_absurd_ones():
    tile = gemm.best_tile(10**8, 64, 64, 32 * 1024, 1, c_itemsize=4)  # a loop over every count took ~28 s
    assert fits(10**8, 64, 64, tile, 1, 4, 32 * 1024)
    assert gemm.traffic(10**8, 64, 64, tile, "mnk", 1, c_itemsize=4).total == \
        gemm.traffic(10**8, 64, 64, brute_force_best_tile(10**4, 64, 64, 32 * 1024, 1, "mnk", 4), "mnk", 1,
                     c_itemsize=4).total  # M only repeats the same row tiles: the same best tile as at 10**4
    for order in ORDERS:
        bm, bn, bk = gemm.best_tile(700_000, 700_000, 100_000, 2**30, 1, order, c_itemsize=4)
        assert fits(700_000, 700_000, 100_000, (bm, bn, bk), 1, 4, 2**30)
    with pytest.raises(ValueError, match="too large: its traffic overflows 64-bit integers"):
        gemm.best_tile(10**7, 10**7, 10**7, 2**20, 4)


# ---- the default c_itemsize is itemsize ------------------------------------------------


@pytest.mark.parametrize("isz", [1, 2, 4])
def test_c_itemsize_defaults_to_itemsize(isz):
    M, N, K, tile = 7, 9, 5, (3, 4, 2)
    for order in ORDERS:
        t = gemm.traffic(M, N, K, tile, order, isz)
        assert (t.a_read, t.b_read, t.c_read, t.c_write) == simulate(M, N, K, tile, order, isz, isz)
    assert gemm.footprint(M, N, K, tile, isz) == (3 * 2 + 2 * 4) * isz + 3 * 4 * isz
    assert gemm.compulsory(M, N, K, isz).c_write == M * N * isz
    buf = 3 * 16 * isz + 8 * 8 * isz
    tile = gemm.best_tile(64, 64, 64, buf, isz)
    assert fits(64, 64, 64, tile, isz, isz, buf) and tile == brute_force_best_tile(64, 64, 64, buf, isz, "mnk", isz)


# ---- lowering, ladder, figures, numbers ------------------------------------------------


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


def test_ladder_small_is_correct_and_ordered():
    rungs = gemm.ladder(32, python_n=6, row_n=8, small_tile=(8, 8, 8), good_tile=(32, 32, 32),
                        dtype="float64", repeat=1, warmup=0)
    assert [r.name for r in rungs] == ["python", "row-vectorised", "tiled, small tile", "tiled, good tile", "numpy.matmul"]
    assert all(r.ok and r.error < 1e-12 and r.gflops > 0 and r.seconds > 0 for r in rungs)
    assert [r.n for r in rungs] == [6, 8, 32, 32, 32]


def test_figures():
    fig = figures.gemm.traffic_figure(64, 64, 64, buffer_bytes=8 * 1024, orders=("mnk", "kmn"), depths=(4, 16, 64))
    assert len(fig.data) == 3 * 2 + 2
    assert len(fig.layout.sliders[0].steps) == 3
    assert [tr.visible for tr in fig.data[:2]] == [True, True]
    # a point whose tile does not fit the buffer is left out
    tr = fig.data[0]
    for b, y in zip(tr.x, tr.y):
        assert (y is None) == (not fits(64, 64, 64, (b, b, 4), 4, 4, 8 * 1024))
    rungs = [gemm.Rung("a", 8, 1.0, 0.5, 0.0, True), gemm.Rung("b", 8, 0.1, 5.0, 0.0, True)]
    bar = figures.gemm.ladder_figure(rungs, peak_gflops=50.0)
    assert list(bar.data[0].y) == [0.5, 5.0]
    assert "10% of peak" in bar.data[0].text[1]


def test_measurements_and_figures_refuse_what_they_cannot_show():
    with pytest.raises(TypeError, match="repeat must be an integer"):
        gemm.sweep_tiles(8, sides=(4,), repeat="abc")
    with pytest.raises(ValueError, match="sides must have at least 1 item"):
        gemm.sweep_tiles(8, sides=())
    with pytest.raises(TypeError, match="seed must be an integer"):
        gemm.ladder(8, seed=1.5)
    rungs = [gemm.Rung("tile 8³", 64, 1e-3, 0.5, 0.0, True)]
    with pytest.raises(ValueError, match="numpy_gflops must be a finite number > 0"):  # a dropped line, before
        figures.gemm.sweep_figure(rungs, [8], numpy_gflops=0.0)
    with pytest.raises(ValueError, match=r"model\[0\] must be a finite number > 0"):
        figures.gemm.sweep_figure(rungs, [8], model=[0.0])
    with pytest.raises(ValueError, match="sizes must have at least 1 item"):  # an IndexError, before
        figures.gemm.traffic_figure(64, 64, 64, 8 * 1024, sizes=())
    with pytest.raises(TypeError, match="depths must be a list or tuple"):
        figures.gemm.traffic_figure(64, 64, 64, 8 * 1024, depths="16")
    with pytest.raises(ValueError, match="gflops must be a finite number > 0"):
        gemm.Rung("x", 8, 1.0, 0.0, 0.0, True)
    with pytest.raises(ValueError, match="c_read must be >= 0"):
        gemm.Traffic(1, 1, -1, 1, 1)


def test_sweep_tiles_and_figure():
    rungs = gemm.sweep_tiles(48, sides=(5, 16, 100), dtype="float64", repeat=1, warmup=0)
    assert [r.name for r in rungs] == ["tile 5³", "tile 16³", "tile 100³"]
    assert all(r.ok and r.n == 48 for r in rungs)
    fig = figures.gemm.sweep_figure(rungs, [5, 16, 100], numpy_gflops=1.0, model=[0.1, 0.2, 0.3])
    assert len(fig.data) == 3
    with pytest.raises(ValueError, match="rungs and sides must be non-empty and of equal length"):
        figures.gemm.sweep_figure(rungs, [5, 16])
    with pytest.raises(ValueError, match="model must have one value per side"):
        figures.gemm.sweep_figure(rungs, [5, 16, 100], model=[1.0])
    with pytest.raises(ValueError, match=r"sides\[1\] must be >= 1"):
        gemm.sweep_tiles(8, sides=(4, 0))
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        gemm.sweep_tiles(8, dtype="int8")


def test_largest_pointwise_of_cameranet():
    from npukit.models import CameraNet

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

    rows = gemm.numbers(tally.Context(npu_buffer=4 * 1024))
    assert all(isinstance(r, tally.Row) and r.chapter == 4 for r in rows)
    layer, (M, N, K) = gemm.largest_pointwise(CameraNet.pretrained())
    assert rows[0].value == f"M={M}, N={N}, K={K} ({M * N * K:,} MACs)" and layer in rows[0].quantity


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
    "tile, order, exc, match",
    [
        ((2, 2), "mnk", TypeError, r"tile must be a tuple \(bm, bn, bk\)"),
        (4, "mnk", TypeError, "tile must be a tuple"),
        ((2, 0, 2), "mnk", ValueError, r"tile\[1\] must be >= 1"),
        ((2, -3, 2), "mnk", ValueError, r"tile\[1\] must be >= 1"),
        ((2, 2, 2.5), "mnk", TypeError, r"tile\[2\] must be an integer"),
        ((2, 2, 2), "mnn", ValueError, "order must be one of"),
        ((2, 2, 2), "MNK", ValueError, "order must be one of"),
        ((2, 2, 2), 3, TypeError, "order must be a string"),
    ],
)
def test_tiled_matmul_bad_tile_or_order(tile, order, exc, match):
    with pytest.raises(exc, match=match):
        gemm.tiled_matmul(A32, B32, tile, order)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(M=0), ValueError, "M must be >= 1"),
        (dict(N=2.0), TypeError, "N must be an integer"),
        (dict(K=-1), ValueError, "K must be >= 1"),
        (dict(tile=(0, 1, 1)), ValueError, r"tile\[0\] must be >= 1"),
        (dict(order="nm"), ValueError, "order must be one of"),
        (dict(itemsize=0), ValueError, "itemsize must be >= 1"),
        (dict(c_itemsize=0), ValueError, "c_itemsize must be >= 1"),
        (dict(buffer_bytes=0), ValueError, "buffer_bytes must be >= 1"),
        (dict(buffer_bytes=1000), ValueError, r"tile \(16, 16, 16\) needs 3072 bytes .* more than buffer_bytes=1000"),
    ],
)
def test_traffic_errors(kwargs, exc, match):
    args = dict(M=64, N=64, K=64, tile=(16, 16, 16), order="mnk", itemsize=4) | kwargs
    with pytest.raises(exc, match=match):
        gemm.traffic(**args)


def test_other_errors():
    with pytest.raises(ValueError, match="buffer_bytes must hold at least a 1×1×1 tile"):
        gemm.best_tile(4, 4, 4, buffer_bytes=11, itemsize=4)
    with pytest.raises(ValueError, match="order must be one of"):
        gemm.best_tile(4, 4, 4, 1024, 4, order="kkk")
    with pytest.raises(TypeError, match="buffer_bytes must be an integer"):
        gemm.best_tile(4, 4, 4, 1024.0, 4)
    with pytest.raises(ValueError, match="M must be >= 1"):
        gemm.compulsory(0, 1, 1)
    with pytest.raises(ValueError, match="groups must divide"):
        gemm.conv_as_gemm(6, 4, 2, 2, groups=4)
    with pytest.raises(ValueError, match="c_out must be >= 1"):
        gemm.conv_as_gemm(0, 4, 2, 2)
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        gemm.ladder(8, dtype="int8")
    with pytest.raises(TypeError, match="dtype must be a NumPy dtype"):
        gemm.ladder(8, dtype="no-such-type")
    with pytest.raises(ValueError, match="n must be >= 1"):
        gemm.ladder(0)
    with pytest.raises(TypeError, match="good_tile must be a tuple"):
        gemm.ladder(8, good_tile=(8, 8))
    with pytest.raises(ValueError, match="rungs must hold at least one Rung"):
        figures.gemm.ladder_figure([])
    with pytest.raises(TypeError, match=r"rungs\[0\] must be a Rung"):
        figures.gemm.ladder_figure([(1, 2)])
    with pytest.raises(ValueError, match="peak_gflops must be a finite number > 0"):
        figures.gemm.ladder_figure([gemm.Rung("a", 8, 1.0, 1.0, 0.0, True)], peak_gflops=0)
    with pytest.raises(ValueError, match=r"orders\[0\] must be one of"):
        figures.gemm.traffic_figure(8, 8, 8, 1024, orders=("xyz",))


# ---- the lab's checkers (npukit.teach, chapter 4) accept right and reject wrong answers ----


def test_teach_checkers_accept_the_module(capsys):
    from npukit import teach

    traffic = gemm.traffic  # bound here: while a check runs, gemm.traffic itself refuses to be called
    teach.check_tiled_matmul(gemm.tiled_matmul)
    teach.check_schedule_traffic(lambda *a: (traffic(*a).reads, traffic(*a).writes))
    teach.check_best_tile(gemm.best_tile)
    out = capsys.readouterr().out
    assert "✓ tiled matmul: 13 fresh cases" in out and "✓ schedule traffic: 40 fresh cases" in out
    assert "✓ best tile: 8 fresh cases" in out


def test_teach_checkers_reject_wrong_answers():
    from npukit import teach

    def no_ragged_edges(A, B, tile):  # drops the last partial tile in every dimension
        bm, bn, bk = tile
        M, K = A.shape
        N = B.shape[1]
        C = np.zeros((M, N), A.dtype)
        for i in range(0, M - M % bm, bm):
            for j in range(0, N - N % bn, bn):
                for p in range(0, K - K % bk, bk):
                    C[i:i + bm, j:j + bn] += A[i:i + bm, p:p + bk] @ B[p:p + bk, j:j + bn]
        return C

    with pytest.raises(AssertionError, match="tiled matmul: wrong answer .* ragged"):
        teach.check_tiled_matmul(no_ragged_edges)
    with pytest.raises(AssertionError, match="every product must be of an A-tile of at most"):
        teach.check_tiled_matmul(lambda A, B, tile: A @ B)  # correct, but not tiled
    with pytest.raises(AssertionError, match="every product must be"):
        teach.check_tiled_matmul(lambda A, B, tile: np.dot(A, B))
    with pytest.raises(AssertionError, match="do not call npukit.gemm.tiled_matmul"):
        teach.check_tiled_matmul(lambda A, B, tile: gemm.tiled_matmul(A, B, tile))
    assert gemm.tiled_matmul(A32, B32).shape == (4, 5)  # restored after the check

    traffic = gemm.traffic

    def forgets_partial_sums(M, N, K, tile, order, itemsize):  # never reads C back
        t = traffic(M, N, K, tile, order, itemsize)
        return t.a_read + t.b_read, t.writes

    with pytest.raises(AssertionError, match=r"schedule traffic: wrong answer(.|\n)*C read back"):
        teach.check_schedule_traffic(forgets_partial_sums)
    with pytest.raises(AssertionError, match="do not call npukit.gemm.traffic"):
        teach.check_schedule_traffic(lambda *a: (gemm.traffic(*a).reads, gemm.traffic(*a).writes))

    with pytest.raises(AssertionError, match="best tile: wrong answer.*more than the buffer"):
        teach.check_best_tile(lambda M, N, K, buffer_bytes, itemsize: (M, N, K))  # rarely fits
    with pytest.raises(AssertionError, match="best tile: wrong answer.*fits but moves"):
        teach.check_best_tile(lambda M, N, K, buffer_bytes, itemsize: (1, 1, 1))  # fits, moves too much
    with pytest.raises(AssertionError, match="do not call npukit.gemm.best_tile"):
        teach.check_best_tile(lambda *a: gemm.best_tile(*a))


def test_teach_tiled_matmul_check_accepts_a_padded_solution_with_dot():
    from npukit import teach

    def padded(A, B, tile):  # pad to tile multiples, then .dot on whole tiles: tiled, and right
        bm, bn, bk = tile
        (M, K), N = A.shape, B.shape[1]
        Mp, Np, Kp = -(-M // bm) * bm, -(-N // bn) * bn, -(-K // bk) * bk
        Ap, Bp = np.pad(A, ((0, Mp - M), (0, Kp - K))), np.pad(B, ((0, Kp - K), (0, Np - N)))
        C = np.zeros((Mp, Np), A.dtype)
        for i, j, p in itertools.product(range(0, Mp, bm), range(0, Np, bn), range(0, Kp, bk)):
            C[i:i + bm, j:j + bn] += Ap[i:i + bm, p:p + bk].dot(Bp[p:p + bk, j:j + bn])
        return C[:M, :N]

    teach.check_tiled_matmul(padded)
