"""Tests of npukit.accelerator: networks as GEMM tables, peak TOPS, banks and double buffering.

References are written here: He et al.'s MAC count for ResNet-18, CameraNet's
own layer summary, the definition of peak TOPS, a hand count of bank
conflicts and the identities a fold timeline must satisfy.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npukit import accelerator
from npukit.systolic import DATAFLOWS, estimate


# ---- networks, peaks, appetite -----------------------------------------------------------


def test_resnet18_layer_table():
    layers = accelerator.resnet18_layers()
    assert sum(x.count for x in layers) == 21                    # 1 + 16 + 3 projections + fc
    # He et al. 2016, Table 1: 1.8·10^9 multiply-adds for the 18-layer net
    assert round(sum(x.macs for x in layers) / 1e9, 1) == 1.8
    assert max(x.K for x in layers) == 9 * 512 and min(x.M for x in layers if x.kind == "3×3") == 49


def test_cameranet_layers_match_summary():
    from npukit.models import CameraNet, summary

    net = CameraNet()
    conv_macs = sum(r["macs"] for r in summary(net) if r["op"] in ("Conv", "Gemm"))
    for mode in ("per-channel", "dense"):
        layers = accelerator.cameranet_layers(net, depthwise=mode)
        assert sum(x.macs for x in layers) == conv_macs
    dense = {x.name: x for x in accelerator.cameranet_layers(net, depthwise="dense")}
    assert dense["block1.dw"].M * dense["block1.dw"].N * dense["block1.dw"].K == 16 * dense["block1.dw"].macs
    assert accelerator.cameranet_layers(net, batch=4)[0].M == 4 * 256


def test_model_table_totals():
    layers = accelerator.resnet18_layers()
    t = accelerator.model_table(layers, 16, 8, "os")
    assert t.cycles == sum(x.count * estimate(x.M, x.N, x.K, 16, 8, "os").cycles for x in layers)
    assert t.utilization == pytest.approx(t.macs / (128 * t.cycles))
    sweep = accelerator.aspect_sweep(layers, 64, "ws")
    assert [(r, c) for r, c, _ in sweep] == [(1, 64), (2, 32), (4, 16), (8, 8), (16, 4), (32, 2), (64, 1)]


def test_tops_and_machine():
    assert accelerator.peak_tops(128, 128, 1e9) == pytest.approx(32.768)
    assert accelerator.peak_tops(128, 128, 1e9, ops_per_mac=1) == pytest.approx(16.384)
    m = accelerator.array_machine(128, 128, 1e9, 50e9)
    assert m.peak_flops == pytest.approx(32.768e12) and m.ridge == pytest.approx(32.768e12 / 50e9)
    # a GEMM layer's operands as stored: A 4×6, B 6×5, C 4×5
    gemm = accelerator.Layer("g", 4, 5, 6)
    assert accelerator.dram_bytes(gemm, itemsize=1, out_itemsize=4) == 24 + 30 + 80
    assert accelerator.dram_bytes(gemm) == 24 + 30 + 20                     # INT8 output by default
    with pytest.raises(TypeError, match="layer"):
        accelerator.dram_bytes(4, 5, 6)


def test_dram_bytes_count_each_tensor_once_as_op_counts_does():
    # chapter 3's op_counts (itemsize 1) on CameraNet's ONNX graph is the reference:
    # a convolution reads its input tensor once, not its im2col matrix
    from npukit import graphs
    from npukit.models import CameraNet

    net = CameraNet()
    want = {c.name: c.bytes for c in graphs.op_counts(net.to_onnx(), itemsize=1) if c.op_type in ("Conv", "Gemm")}
    for mode in ("per-channel", "dense"):
        got = {x.name: accelerator.dram_bytes(x) for x in accelerator.cameranet_layers(net, depthwise=mode)}
        assert got == want
    stem = accelerator.cameranet_layers(net)[0]
    assert stem.M * stem.K > stem.inputs == 3 * 32 * 32          # im2col repeats the input pixels


def test_resnet18_tensors_by_hand():
    t = {x.name.split(",")[0]: x for x in accelerator.resnet18_layers()}
    assert t["conv1 7×7/2"].inputs == 3 * 224 * 224
    assert t["conv2 3×3"].inputs == 4 * 64 * 56 * 56 and t["conv2 3×3"].weights == 4 * 9 * 64 * 64
    assert t["conv3 proj 1×1/2"].inputs == 64 * 56 * 56 and t["conv3 proj 1×1/2"].outputs == 128 * 28 * 28
    assert t["conv5 3×3"].inputs == 3 * 512 * 7 * 7
    assert t["fc 512→1000"].inputs == 512 and t["fc 512→1000"].weights == 512 * 1000
    # 2·MACs / bytes for the projection of stage 3 (the hand count: 42 op/byte)
    proj = t["conv3 proj 1×1/2"]
    assert round(2 * proj.macs / accelerator.dram_bytes(proj)) == 42


def _conflicts_by_hand(addresses, banks):
    extra = 0
    for row in addresses.tolist():
        used = [a % banks for a in row if a >= 0]
        if used:
            extra += max(used.count(b) for b in set(used)) - 1
    return extra


def _live_across_folds(c_in, h, w, k, stride, filters, R, C):
    """(input elements, partial sums) live across a fold boundary, walking SCALE-Sim's WS schedule.

    The im2col matrix is built as SCALE-Sim's operand_matrix.py orders it (K = filter row, filter
    column, channel; channels fastest); folds run with the folds of N outside the folds of K, each
    streaming all M rows. An element is live across a boundary if a fold before it and a fold after
    it read it.
    """
    ho, wo = (h - k) // stride + 1, (w - k) // stride + 1
    y, x = np.divmod(np.arange(ho * wo), wo)
    fh, rest = np.divmod(np.arange(k * k * c_in), k * c_in)
    fw, ch = np.divmod(rest, c_in)
    A = ((y[:, None] * stride + fh) * w + x[:, None] * stride + fw) * c_in + ch     # NHWC element index
    folds = [(j, i) for j in range(-(-filters // C)) for i in range(-(-A.shape[1] // R))]
    reads = [set(A[:, i * R:(i + 1) * R].ravel().tolist()) for _, i in folds]
    sums = [{(m, n) for m in range(A.shape[0]) for n in range(j * C, min((j + 1) * C, filters))} for j, _ in folds]
    best_in = best_sum = 0
    for b in range(1, len(folds)):
        best_in = max(best_in, len(set().union(*reads[:b]) & set().union(*reads[b:])))
        best_sum = max(best_sum, len(set().union(*sums[:b]) & set().union(*sums[b:])))
    return best_in, best_sum


@pytest.mark.parametrize("c_in, h, k, stride, filters, R, C", [
    (4, 10, 3, 1, 6, 16, 8),     # K = 36 over 16 rows: the K folds reuse pixels, their sums add up
    (4, 10, 3, 1, 20, 64, 8),    # one fold of K, three of N: each N fold streams the input again
    (4, 11, 3, 2, 6, 16, 8),     # a strided 3×3 window still reuses pixels across K folds
    (32, 6, 1, 1, 6, 8, 8),      # 1×1, four K folds: each reads its own channels, only the sums stay
    (32, 6, 1, 2, 6, 8, 8),      # 1×1/2 likewise
    (4, 8, 3, 1, 6, 64, 8),      # one fold: nothing stays beyond the streaming window
])
def test_resident_bytes_against_a_walk_of_the_schedule(c_in, h, k, stride, filters, R, C):
    ho = (h - k) // stride + 1
    layer = accelerator.Layer("conv", ho * ho, filters, k * k * c_in, inputs=c_in * h * h)
    kept_in, kept_sums = accelerator.resident_bytes(layer, R, C, itemsize=1, acc_itemsize=1)
    live_in, live_sums = _live_across_folds(c_in, h, h, k, stride, filters, R, C)
    assert kept_sums == live_sums                                  # exact
    assert (kept_in == 0) == (live_in == 0)                        # the input stays exactly when the walk needs it
    assert live_in <= kept_in and (kept_in == 0 or live_in >= 0.5 * kept_in)   # kept whole: an upper bound


def test_resident_bytes_in_resnet18():
    res = {x.name.split(",")[0]: x for x in accelerator.resnet18_layers()}
    stem = accelerator.resident_bytes(res["conv1 7×7/2"], 128, 128)
    assert stem == (3 * 224 * 224, 112 * 112 * 64 * 4)               # K = 147: two K folds, 64 filters
    assert accelerator.resident_bytes(res["conv4 3×3"], 128, 128, acc_itemsize=2)[1] == 14 * 14 * 128 * 2
    fc = accelerator.resident_bytes(res["fc 512→1000"], 128, 128)    # 8 folds of N re-read the 512 inputs
    assert fc == (512, 128 * 4)
    with pytest.raises(TypeError, match="layer"):
        accelerator.resident_bytes("conv", 128, 128)
    with pytest.raises(ValueError, match="acc_itemsize"):
        accelerator.resident_bytes(res["fc 512→1000"], 128, 128, acc_itemsize=0)


@settings(max_examples=100)
@given(st.integers(1, 20), st.integers(1, 20), st.integers(1, 8), st.integers(0, 5), st.integers(1, 16))
def test_bank_conflicts(M, K, R, pad, banks):
    addr = accelerator.feed_addresses(M, K, R, ld=K + pad)
    for t in range(addr.shape[0]):                   # row r reads A[t - r, r]
        for r in range(R):
            m = t - r
            want = m * (K + pad) + r if 0 <= m < M and r < K else -1
            assert addr[t, r] == want
    assert accelerator.bank_conflicts(addr, banks) == _conflicts_by_hand(addr, banks)


def test_padding_removes_bank_conflicts():
    bad = accelerator.bank_conflicts(accelerator.feed_addresses(64, 17, 8), banks=8)        # 17 ≡ 1 (mod 8)
    good = accelerator.bank_conflicts(accelerator.feed_addresses(64, 17, 8, ld=24), banks=8)  # 24 ≡ 0
    assert bad > 0 and good == 0


@settings(max_examples=100)
@given(st.integers(1, 300), st.integers(1, 300), st.integers(1, 300), st.sampled_from(DATAFLOWS),
       st.floats(0.5, 1000))
def test_fold_timeline(M, N, K, df, bw):
    e = estimate(M, N, K, 16, 16, df)
    single, s_stall = accelerator.fold_timeline(e, bw, double_buffer=False)
    double, d_stall = accelerator.fold_timeline(e, bw)
    assert double <= single and 0 <= d_stall <= s_stall
    assert single - s_stall == double - d_stall == e.folds * e.per_fold


def test_numbers_rows():
    from npukit import tally

    rows = accelerator.numbers(tally.Context())
    assert [r.chapter for r in rows] == [5, 5, 5] and "32.8 TOPS" in rows[-1].value


def test_fold_timeline_loads_both_streamed_operands_for_output_stationary():
    """OS keeps outputs in the PEs and streams both inputs: T·rows + T·cols elements per fold, no stationary tile."""
    e = estimate(64, 64, 256, 8, 8, "os")
    assert e.dataflow == "os" and e.folds > 1
    bw, isz = 16.0, 1
    load = -(-e.stream * (e.rows + e.cols) * isz // int(bw))  # ceil, written out
    total, stall = accelerator.fold_timeline(e, bw, itemsize=isz, double_buffer=False)
    assert total == e.folds * (load + e.per_fold) and stall == e.folds * load


def test_double_buffered_timeline_pays_the_first_load():
    """With two buffers the first fold still waits for its loads; every later fold costs max(compute, load)."""
    e = estimate(1024, 64, 64, 32, 32, "ws")
    load = -(-(e.rows * e.cols + e.stream * e.rows) // 64)   # WS: stationary tile + streamed rows, 1 byte each
    total, _ = accelerator.fold_timeline(e, 64.0, double_buffer=True)
    assert total == load + (e.folds - 1) * max(e.per_fold, load) + e.per_fold


def test_bank_conflicts_refuses_negative_addresses_other_than_idle():
    assert accelerator.bank_conflicts(np.array([[-1, -1, 3, 7]]), 4) == 1     # 3 and 7 share bank 3
    with pytest.raises(ValueError, match="addresses"):
        accelerator.bank_conflicts(np.array([[-1, -5]]), 4)
