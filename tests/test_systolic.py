"""Tests of npukit.systolic against independent references.

* ``estimate`` against numbers worked out by hand, against a brute-force
  event model written here, and against SCALE-Sim 3.0.0's own output
  (npukit/data/scalesim_reference.json, written by ``make scalesim-reference``;
  ``make scalesim-check`` runs SCALE-Sim afresh and points
  ``SCALESIM_REFERENCE`` at the new file);
* ``simulate`` against ``numpy.matmul`` (exact for integers) on random shapes
  larger and smaller than the array, and its per-fold cycles against the
  convention.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npukit import systolic
from npukit.systolic import DATAFLOWS, estimate, simulate

REFERENCE = Path(os.environ.get("SCALESIM_REFERENCE", systolic.SCALESIM_REFERENCE))


# ---- an independent model: when does each MAC happen? ------------------------------


def _events(M: int, N: int, K: int, R: int, C: int, df: str) -> tuple[int, int]:
    """(cycles, last busy cycle) by listing every fold and the cycle of each MAC in it.

    A fold's PEs at (r, c) see stream element s at ``pre + s + r + c``; the
    schedule gives every fold the slot of a full R × C fold (its last MAC
    position), then the next fold starts.
    """
    rows_dim, cols_dim, T = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[df]
    pre = 0 if df == "os" else R
    start = last = 0
    for _ in range(math.ceil(rows_dim / R)):
        for _ in range(math.ceil(cols_dim / C)):
            slot = pre + (T - 1) + (R - 1) + (C - 1) + 1      # cycles until the full fold's last MAC, inclusive
            last = start + slot - 1
            start += slot
    return start, last


# ---- estimate ----------------------------------------------------------------------


def test_estimate_by_hand():
    # WS, 4×6 array, M,N,K = 10,7,9: K over rows -> 3 folds, N over cols -> 2 folds;
    # per fold 4 (preload) + 3 (fill) + 10 (stream) + 5 (drain) = 22; 6·22 = 132 cycles,
    # the last one cycle 131 (SCALE-Sim's number).
    e = estimate(10, 7, 9, 4, 6, "ws")
    assert (e.row_folds, e.col_folds, e.per_fold, e.cycles, e.last_cycle) == (3, 2, 22, 132, 131)
    # OS, same: M over rows (3 folds), N over cols (2); per fold 4+6+9-2 = 17; 6·17 = 102.
    e = estimate(10, 7, 9, 4, 6, "os")
    assert (e.folds, e.per_fold, e.cycles, e.last_cycle, e.preload) == (6, 17, 102, 101, 0)
    # IS: K over rows (3), M over cols (2); per fold 8+6+7-2 = 19; 6·19 = 114.
    e = estimate(10, 7, 9, 4, 6, "is")
    assert (e.folds, e.per_fold, e.cycles) == (6, 19, 114)
    # A problem that fits: 1 fold of a 1×1 array, WS: 1 + 0 + M + 0 = M + 1 cycles.
    assert estimate(5, 1, 1, 1, 1, "ws").cycles == 6
    # utilization = MNK / (cycles·R·C), SCALE-Sim's divides by the last cycle's index;
    # mapping efficiency = used PEs over folds
    e = estimate(10, 7, 9, 4, 6, "ws")
    assert e.utilization == pytest.approx(630 / (132 * 24))
    assert e.scalesim_utilization == pytest.approx(630 / (131 * 24))
    assert e.mapping_efficiency == pytest.approx((9 * 7) / (6 * 24))


@settings(max_examples=300)
@given(st.integers(1, 70), st.integers(1, 70), st.integers(1, 70), st.integers(1, 20), st.integers(1, 20),
       st.sampled_from(DATAFLOWS))
def test_estimate_matches_event_model(M, N, K, R, C, df):
    e = estimate(M, N, K, R, C, df)
    cycles, last = _events(M, N, K, R, C, df)
    assert e.cycles == cycles and e.last_cycle == last
    assert e.preload + e.fill + e.stream + e.drain == e.per_fold
    assert 0 < e.mapping_efficiency <= 1
    assert 0 < e.utilization <= 1
    assert e.utilization <= e.mapping_efficiency + 1e-12      # idle fill/drain can only lose
    assert e.scalesim_utilization == pytest.approx(e.utilization * e.cycles / max(e.last_cycle, 1))


def test_is_is_ws_of_the_transpose():
    # Cᵀ = Bᵀ·Aᵀ: input-stationary on (M, N, K) is weight-stationary on (N, M, K)
    for M, N, K in [(10, 7, 9), (1, 30, 3), (64, 5, 17)]:
        a, b = estimate(M, N, K, 8, 4, "is"), estimate(N, M, K, 8, 4, "ws")
        assert (a.cycles, a.folds, a.mapping_efficiency) == (b.cycles, b.folds, b.mapping_efficiency)


def test_conv_dims_and_estimate_conv():
    assert systolic.conv_dims(9, 9, 3, 3, 4, 6, 1) == (49, 6, 36)
    # stride 3 on 10: SCALE-Sim's ceil counts 4 rows, a framework's floor((10-3)/3)+1 = 3
    assert systolic.conv_dims(10, 10, 3, 3, 2, 8, 3) == (16, 8, 18)
    # input (Ho-1)·S + Fh gives Ho under both conventions
    for ho, s, f in [(7, 2, 3), (56, 1, 3), (112, 2, 7), (28, 2, 1)]:
        h = (ho - 1) * s + f
        assert systolic.conv_dims(h, h, f, f, 1, 1, s)[0] == ho * ho == ((h - f) // s + 1) ** 2
    assert systolic.estimate_conv(9, 9, 3, 3, 4, 6, 1, 4, 4, "os") == estimate(49, 6, 36, 4, 4, "os")


# ---- estimate against SCALE-Sim itself ------------------------------------------------


def _scalesim_cases():
    doc = json.loads(REFERENCE.read_text())
    for case in doc["cases"]:
        if case["kind"] == "gemm":
            yield case, [(case["M"], case["N"], case["K"], case)]
        else:
            ch = 1 if case["depthwise"] else case["channels"]
            dims = systolic.conv_dims(case["ifmap_h"], case["ifmap_w"], case["filt_h"], case["filt_w"], ch,
                                      case["filters"], case["stride"])
            yield case, [(*dims, layer) for layer in case["layers"]]


def test_scalesim_reference_is_version_3():
    doc = json.loads(REFERENCE.read_text())
    assert doc["scalesim_version"] == "3.0.0"
    shapes = {(c["rows"], c["cols"]) for c in doc["cases"]}
    assert any(r == c for r, c in shapes) and any(r < c for r, c in shapes) and any(r > c for r, c in shapes)
    assert {c["dataflow"] for c in doc["cases"]} == set(DATAFLOWS)
    assert {c["kind"] for c in doc["cases"]} == {"gemm", "conv"}


def test_estimate_equals_scalesim():
    n = 0
    for case, layers in _scalesim_cases():
        R, C, df = case["rows"], case["cols"], case["dataflow"]
        for M, N, K, got in layers:
            e = estimate(M, N, K, R, C, df)
            where = f"{case['kind']} {case['name']} (M,N,K)=({M},{N},{K}) on {R}×{C} {df}"
            assert got["stall_cycles"] == 0, where
            assert e.last_cycle == got["cycles"], where            # SCALE-Sim's "Total Cycles" is an index
            assert e.scalesim_utilization == pytest.approx(got["utilization"], rel=1e-9), where
            assert e.mapping_efficiency == pytest.approx(got["mapping_efficiency"], rel=1e-9), where
            assert e.ifmap_sram_reads == got["ifmap_sram_reads"], where
            assert e.filter_sram_reads == got["filter_sram_reads"], where
            # SCALE-Sim 3.0.0 adds rows + cols to OS output writes per fold (bookkeeping, not data)
            extra = e.folds * (R + C) if df == "os" else 0
            assert e.ofmap_sram_writes + extra == got["ofmap_sram_writes"], where
            n += 1
    assert n >= 200


def test_scalesim_runs_depthwise_per_channel():
    # SCALE-Sim runs a "DP" layer as one single-channel layer per channel: the per-channel mapping
    for case, layers in _scalesim_cases():
        if case["kind"] == "conv" and case["depthwise"]:
            assert len(layers) == case["channels"]
            assert all(N == 1 and K == case["filt_h"] * case["filt_w"] for _, N, K, _ in layers)


# ---- simulate ----------------------------------------------------------------------


@settings(max_examples=60)
@given(st.integers(1, 13), st.integers(1, 13), st.integers(1, 13), st.integers(1, 6), st.integers(1, 6),
       st.sampled_from(DATAFLOWS), st.integers(0, 2**32 - 1))
def test_simulate_is_exact(M, N, K, R, C, df, seed):
    rng = np.random.default_rng(seed)
    A = rng.integers(-1000, 1000, size=(M, K))
    B = rng.integers(-1000, 1000, size=(K, N))
    s = simulate(A, B, R, C, df)
    e = estimate(M, N, K, R, C, df)
    assert s.product.dtype == np.int64 and np.array_equal(s.product, A @ B)
    assert s.fold_cycles == [e.per_fold] * e.folds
    assert s.cycles == e.cycles and s.last_cycle == e.last_cycle and s.macs == M * N * K
    assert s.utilization == pytest.approx(e.utilization)
    assert s.scalesim_utilization == pytest.approx(e.scalesim_utilization)


@pytest.mark.parametrize("df", DATAFLOWS)
def test_simulate_many_folds_and_int8(df):
    rng = np.random.default_rng(7)
    A = rng.integers(-128, 128, size=(37, 29), dtype=np.int8)      # ragged against 8×5
    B = rng.integers(-128, 128, size=(29, 23), dtype=np.int8)
    s = simulate(A, B, 8, 5, df)
    assert np.array_equal(s.product, A.astype(np.int64) @ B.astype(np.int64))
    assert len(s.fold_cycles) == estimate(37, 23, 29, 8, 5, df).folds > 10


@pytest.mark.parametrize("df", DATAFLOWS)
def test_simulate_floats(df):
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((9, 6)), rng.standard_normal((6, 11)).astype(np.float32)
    with pytest.raises(TypeError):
        simulate(A, rng.integers(0, 3, (6, 11)), 4, 4, df)
    assert np.allclose(simulate(A, B, 4, 4, df).product, A @ B)


@pytest.mark.parametrize("df", DATAFLOWS)
def test_trace_is_consistent(df):
    rng = np.random.default_rng(5)
    M, N, K = 6, 5, 7
    A, B = rng.integers(-5, 5, (M, K)), rng.integers(-5, 5, (K, N))
    s = simulate(A, B, 3, 4, df, trace=True)
    tr = s.trace
    assert tr["busy"].shape == (s.cycles, 3, 4) and tr["a"].shape == (s.cycles, 3, 4, 2)
    assert (tr["busy"].sum(axis=(1, 2)) == s.busy).all()
    b = tr["busy"]
    a, w, c = tr["a"][b], tr["b"][b], tr["c"][b]
    # a busy PE multiplies A[m, k] by B[k, n] into C[m, n], and each (m, n, k) happens once
    assert (a[:, 1] == w[:, 0]).all() and (a[:, 0] == c[:, 0]).all() and (w[:, 1] == c[:, 1]).all()
    assert len({(x[0], y[1], x[1]) for x, y in zip(a, w)}) == M * N * K
    # the preload phase (WS, IS) lasts `rows` cycles per fold and does no MACs
    pre = tr["phase"] == 0
    assert pre.sum() == (0 if df == "os" else 3 * len(s.fold_cycles))
    assert not tr["busy"][pre].any()


def test_busy_per_cycle_matches_event_count():
    # one WS fold on a K×N array: PE (r, c) works on stream element m at cycle R + m + r + c
    M, N, K = 9, 4, 3
    s = simulate(np.ones((M, K), int), np.ones((K, N), int), K, N, "ws")
    want = np.zeros(s.cycles, int)
    for m in range(M):
        for r in range(K):
            for c in range(N):
                want[K + m + r + c] += 1
    assert (s.busy == want).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 12), st.integers(1, 8), st.integers(1, 8),
       st.sampled_from(DATAFLOWS))
def test_last_mac_is_when_the_data_say_and_the_schedule_runs_on(M, N, K, R, C, df):
    # one fold that fits: the last MAC is the last mapped PE's on the last streamed element, listed here;
    # the fold still runs the full schedule (SCALE-Sim's convention), so the two agree only when it is full
    s_r, s_c, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[df]
    R, C = max(R, s_r), max(C, s_c)
    s = simulate(np.ones((M, K), int), np.ones((K, N), int), R, C, df)
    pre = 0 if df == "os" else R
    last = max(pre + e + r + c for e in range(t) for r in range(s_r) for c in range(s_c))
    assert s.last_mac == last and s.last_cycle == pre + t + R + C - 3
    assert (s.last_mac == s.last_cycle) == (s_r == R and s_c == C)


def test_simulate_bad_inputs():
    A = np.ones((3, 4), int)
    with pytest.raises(ValueError, match="A's columns"):
        simulate(A, np.ones((3, 4), int), 2, 2)
    with pytest.raises(ValueError, match="dataflow"):
        simulate(A, np.ones((4, 2), int), 2, 2, "xs")
    with pytest.raises(ValueError, match="trace"):
        simulate(np.ones((300, 300), int), np.ones((300, 300), int), 16, 16, trace=True)
    with pytest.raises(TypeError, match="A must hold"):
        simulate(A.astype(bool), np.ones((4, 2), bool), 2, 2)


# ---- figures -------------------------------------------------------------------------------


def test_animation_has_one_frame_per_cycle_of_every_dataflow():
    from npukit import figures

    A, B = np.arange(12).reshape(4, 3), np.arange(6).reshape(3, 2)
    fig = figures.systolic.animation_figure(A, B, 2, 2)
    want = sum(simulate(A, B, 2, 2, df).cycles for df in DATAFLOWS)
    assert len(fig.frames) == len(fig.layout.sliders[0].steps) == want
    # weight-stationary first, as the chapter tells the reader to start with it
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["▶ WS", "▶ OS", "▶ IS", "❚❚"]
    assert fig.frames[0].name == "ws-0"


def test_animation_shows_outputs_staying_in_output_stationary():
    # OS keeps C[m, n] in PE (r, c) from its first MAC (cycle r + c) to the end of the fold:
    # the frames must show held (blue) PEs that are not busy, and no held PE in WS's compute holds C
    from npukit import figures

    rng = np.random.default_rng(5)
    A, B = rng.integers(-9, 10, (6, 4)), rng.integers(-9, 10, (4, 5))
    s = simulate(A, B, 4, 4, "os", trace=True)
    c = s.trace["c"]
    holds = c[..., 0] >= 0
    assert (holds & ~s.trace["busy"]).any()
    t0 = 0
    for fold_len in s.fold_cycles:
        for t in range(fold_len):
            for r in range(4):
                for col in range(4):
                    mapped = c[t0 + fold_len - 1, r, col, 0] >= 0
                    assert holds[t0 + t, r, col] == (mapped and t >= r + col)
        t0 += fold_len
    fig = figures.systolic.animation_figure(A, B, 4, 4, dataflows=["os"])
    held_frames = [f for f in fig.frames if (np.asarray(f.data[0].z) == 1).any()]
    assert len(held_frames) > len(fig.frames) // 2


def test_dataflow_figure_labels_come_from_the_mapping():
    from npukit import figures

    texts = [a.text for a in figures.systolic.dataflow_figure(10, 7, 9).layout.annotations]
    for df in DATAFLOWS:
        m = systolic.mapping(10, 7, 9, df)
        assert any(f"rows ← {m.names[0]} = {m.row_dim}" in t and f"{m.names[2]} = {m.stream}" in t for t in texts)
