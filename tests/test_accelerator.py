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
