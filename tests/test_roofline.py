"""Tests of npukit.roofline, the roofline figures' measured points, lab 3's prediction check and the
per-chapter exercise numbering across a chapter's pages.

* copy_bytes: the sizing rule (4 × the cache, capped at 1 GiB and a quarter of the free memory) as
  inequalities over random caches and memories (hypothesis).
* kernel_counts: a group of nodes counted as one kernel, against an independent count written here from the
  ONNX graph (sizes from the initializers and NumPy shapes, not from npukit), and against the FusedConv node
  that npukit.rewrites writes for the same group; FLOPs are conserved across any partition of the nodes.
* measure_machine and stream_bandwidth: the same threads recorded for both numbers; what is counted.
"""

from __future__ import annotations

import math
import types

import numpy as np
import pytest

from npukit.teach.retime import TooNoisy
from hypothesis import given, settings
from hypothesis import strategies as st

from npukit import figures, graphs, rewrites, roofline, teach
from npukit.models import CameraNet
from npukit.teach.core import CheckFailed, NotAttempted

MiB, GiB = 2**20, 2**30


# ---- sizing the copy ----------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(llc=st.one_of(st.none(), st.integers(2**16, 2**34)), free=st.one_of(st.none(), st.integers(2**20, 2**40)))
def test_copy_bytes_follows_the_rule(llc, free):
    n = roofline.copy_bytes(llc, available=free)
    assert n % MiB == 0 and MiB <= n <= roofline.COPY_CAP
    want = 4 * (llc if llc is not None else 256 * MiB)
    limit = roofline.COPY_CAP if free is None else min(roofline.COPY_CAP, free // 4)
    if limit >= MiB:
        assert n <= limit
        assert n >= min(want, limit) - MiB        # rounded down to whole MiB, never more than one MiB short
    if MiB <= want <= limit:
        assert want - MiB < n <= want


def test_copy_bytes_on_this_vm_kind_of_report():
    assert roofline.copy_bytes(480 * MiB, available=24 * GiB) == GiB          # 4 × 480 MiB capped
    assert roofline.copy_bytes(35 * MiB + 512 * 1024, available=24 * GiB) == 142 * MiB
    assert roofline.copy_bytes(480 * MiB, available=GiB) == 256 * MiB          # a Binder-size machine
    assert roofline.copy_bytes(None, available=None) == GiB


# ---- measuring ---------------------------------------------------------------------------------


def test_measure_machine_uses_one_thread_count_for_both():
    m = roofline.measure_machine(repeat=1, n=128, nbytes=2 * MiB, threads=2)
    assert isinstance(m, graphs.MachineSpec) and (m.threads, m.copy_bytes) == (2, 2 * MiB)
    assert "2 BLAS threads" in m.peak_how or "not controllable" in m.peak_how
    assert "split over 2 threads" in m.bandwidth_how and "read + written" in m.bandwidth_how


def test_stream_bandwidth_counts_read_plus_written(monkeypatch):
    calls = []
    monkeypatch.setattr(roofline, "_best", lambda fn, repeat, warmup: (fn(), calls.append(1), 0.5)[2])
    # 1 MiB is swept 64 times so a call moves >= 64 MiB; each sweep reads 1 MiB and writes 1 MiB
    assert roofline.stream_bandwidth(MiB, threads=1) == pytest.approx(2 * MiB * 64 / 0.5)
    assert roofline.stream_bandwidth(128 * MiB, kernel="relu", threads=2) == pytest.approx(2 * 128 * MiB / 0.5)


def test_stream_bandwidth_really_computes_the_kernel(monkeypatch):
    seen = {}
    real_maximum = np.maximum

    def spy(x, y, out=None):
        seen["out"] = out
        return real_maximum(x, y, out=out)

    monkeypatch.setattr(roofline.np, "maximum", spy)
    roofline.stream_bandwidth(4096 * 4, kernel="relu", threads=1, repeat=1, warmup=0)
    assert seen["out"].dtype == np.float32 and np.all(seen["out"] == 1.0)


def test_streaming_store_threshold_is_a_size_or_none():
    t = roofline.streaming_store_threshold()
    assert t is None or (isinstance(t, int) and t > 0)


# ---- kernels under the roof ------------------------------------------------------------------------


def _independent_group_bytes(model, members):
    """Bytes a group of nodes moves run as one kernel, counted here from the graph and NumPy shapes."""
    from onnx import numpy_helper, shape_inference

    inferred = shape_inference.infer_shapes(model)
    shape = {t.name: numpy_helper.to_array(t).shape for t in model.graph.initializer}
    for vi in list(inferred.graph.input) + list(inferred.graph.value_info) + list(inferred.graph.output):
        shape[vi.name] = tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
    inits = {t.name for t in model.graph.initializer}
    nodes = [n for n in model.graph.node if n.name in members]
    inside_out = {t for n in nodes for t in n.output}
    outside_in = {t for n in model.graph.node if n.name not in members for t in n.input}
    outputs = {o.name for o in model.graph.output}
    read = {t for n in nodes for t in n.input if t and t not in inside_out}
    leaving = {t for t in inside_out if t in outside_in or t in outputs}
    size = lambda t: int(np.prod(shape[t])) * 4  # noqa: E731 (all float32)
    return sum(size(t) for t in read if t in inits), sum(size(t) for t in read if t not in inits), \
        sum(size(t) for t in leaving)


def test_kernel_counts_matches_an_independent_count_and_the_fused_node():
    chain = rewrites.fold_batchnorm(graphs.example_chain(blocks=2, channels=4, size=6))
    groups = {"k0": ["stem.conv", "stem.relu"], "k1": ["block1.conv", "block1.add", "block1.relu"],
              "k2": ["block2.conv", "block2.add", "block2.relu"]}
    kc = roofline.kernel_counts(chain, groups)
    single = {c.name: c for c in graphs.op_counts(chain)}
    for k, members in groups.items():
        p, a_in, a_out = _independent_group_bytes(chain, set(members))
        assert (kc[k].param_bytes, kc[k].act_bytes_in, kc[k].act_bytes_out) == (p, a_in, a_out)
        assert kc[k].flops == sum(single[m].flops for m in members)
        assert kc[k].intensity == pytest.approx(kc[k].flops / (p + a_in + a_out))
    fused = rewrites.fuse_conv_add_relu(chain)     # the same groups, as FusedConv nodes named "a+b+c"
    by_fused = {c.name: c for c in graphs.op_counts(fused.model)}
    assert sorted(f.nodes for f in fused.fusions) == sorted(tuple(m) for m in groups.values())
    for k, members in groups.items():
        node = by_fused["+".join(members)]
        assert node.op_type == "FusedConv" and node.flops == kc[k].flops
        # the FusedConv node lists a block's input twice (convolution input and residual); as one kernel it is read once
        twice = 4 * 6 * 6 * 4 if "add" in members[1] else 0
        assert node.bytes - kc[k].bytes == twice


@settings(max_examples=30, deadline=None)
@given(cuts=st.lists(st.booleans(), min_size=23, max_size=23))
def test_flops_are_conserved_over_any_partition_of_cameranet(cuts):
    model = CameraNet.pretrained().to_onnx()
    names = [n.name for n in model.graph.node]
    groups, current = {}, [names[0]]
    for name, cut in zip(names[1:], cuts):
        if cut:
            groups[f"k{len(groups)}"] = current
            current = []
        current.append(name)
    groups[f"k{len(groups)}"] = current
    kc = roofline.kernel_counts(model, groups)
    assert sum(c.flops for c in kc.values()) == graphs.totals(graphs.op_counts(model))["flops"]
    fused_all = roofline.kernel_counts(model, {"all": names})["all"]
    assert fused_all.act_bytes_in == 3 * 32 * 32 * 4 and fused_all.act_bytes_out == 8 * 4   # image in, logits out
    assert sum(c.bytes for c in kc.values()) >= fused_all.bytes


def test_kernel_counts_reads_openvino_style_names():
    model = CameraNet.pretrained().to_onnx()
    # OpenVINO names the folded stem convolution after a Multiply, and the classifier after its output
    kc = roofline.kernel_counts(model, {"Multiply_1": ("Multiply_1", "stem.bn", "stem.relu"), "fc": ["logits"],
                                        "Reorder_x": ()})
    counts = {c.name: c for c in graphs.op_counts(model)}
    assert set(kc) == {"Multiply_1", "fc"}                                  # a kernel with no node is left out
    assert kc["Multiply_1"].op_type == "Conv+BatchNormalization+Relu"        # stem.conv joined its reader's kernel
    assert kc["Multiply_1"].flops == sum(counts[n].flops for n in ("stem.conv", "stem.bn", "stem.relu"))
    assert kc["fc"].op_type == "Flatten+Gemm" and kc["fc"].macs == counts["fc"].macs
    assert kc["fc"].act_bytes_in == 128 * 4                                  # pool's output enters: no kernel owns pool
    with pytest.raises(ValueError, match="named by two kernels"):
        roofline.kernel_counts(model, {"a": ["stem.bn"], "b": ["stem.bn"]})


# ---- figures -------------------------------------------------------------------------------------


def test_roofline_axis_reaches_measured_points_and_draws_their_gap():
    spec = graphs.MachineSpec(200e9, 20e9, "toy", "assumed", "assumed")
    counts = graphs.op_counts(graphs.example_chain(blocks=1, channels=4, size=8))
    measured = [{"name": "k", "intensity": 5.0, "achieved": 0.01e9}]
    fig = figures.graphs.roofline_figure(spec, counts, measured=measured, cache_bandwidth=80e9, highlight="stem.conv")
    lo = 10 ** fig.layout.yaxis.range[0]
    assert lo < 0.01                                         # in GFLOP/s: the measured point is inside the axes
    names = [t.name for t in fig.data]
    assert "measured (achieved)" in names and any(n and n.startswith("cache roof") for n in names)
    drop = next(t for t in fig.data if t.mode == "lines" and t.showlegend is False)
    assert list(drop.y[:2]) == pytest.approx([100.0, 0.01])   # from the roof (20 GB/s × 5) down to the point
    plain = figures.graphs.roofline_figure(spec, counts)
    assert 10 ** plain.layout.yaxis.range[0] > 0.01


def test_bandwidth_figure_marks():
    fig = figures.graphs.bandwidth_figure([MiB, 64 * MiB], [100e9, 20e9], caches={"L2": 2 * MiB},
                                          marks={"roofline's array": 64 * MiB})
    assert fig.data[0].y == pytest.approx((100.0, 20.0)) and len(fig.data) == 2


# ---- lab 3's prediction ------------------------------------------------------------------------------


def test_relu_prediction_check(capsys):
    """Against rounds in which the ReLU took 1.5 times the copy's time (write-allocate: 12 bytes for 8)."""
    from support import FakeRounds, swapped

    fake = FakeRounds({"copy": 0.01, "ReLU": 0.015})
    kw = dict(peak_gflops=300.0, bandwidth_gbs=48.0)   # the slanted roof: 6 GFLOP/s; two thirds of it, 4
    with swapped(teach.roofline, "_kernels", lambda nbytes, threads, pool: (fake.fns, fake.clock)), \
            swapped(roofline, "streaming_store_threshold", lambda: 4096):   # every slice streams: 1.5 only
        teach.check_relu_prediction(4.0, 3.0, **kw)
        assert "✓" in capsys.readouterr().out
        with pytest.raises(NotAttempted):
            teach.check_relu_prediction(None, 3.0, **kw)
        for wrong, says in ((300.0, "flat roof"), (48.0, "bandwidth in GB/s"), (12.0, "only read"),
                            (6.0, "write-allocate"), (0.5, "Start from")):
            with pytest.raises(CheckFailed, match=says):
                teach.check_relu_prediction(wrong, 3.0, **kw)
        with pytest.raises(CheckFailed, match="must be a number"):
            teach.check_relu_prediction("6", 3.0, **kw)
        with pytest.raises(ValueError, match="measured_gflops"):
            teach.check_relu_prediction(6.0, float("nan"), **kw)
    same = FakeRounds({"copy": 0.01, "ReLU": 0.0102})      # a machine whose copy pays the extra read too
    with swapped(teach.roofline, "_kernels", lambda nbytes, threads, pool: (same.fns, same.clock)), \
            swapped(roofline, "streaming_store_threshold", lambda: 4096):
        teach.check_relu_prediction(6.0, 3.0, **kw)
        # the lesson's answer (write-allocate, 1.5 times the copy) where the machine shows none: it counts
        teach.check_relu_prediction(4.0, 3.0, **kw)
        assert "the machine, not your reasoning, differed" in capsys.readouterr().out
        with pytest.raises(CheckFailed, match="Start from"):     # a wrong answer still fails there
            teach.check_relu_prediction(0.5, 3.0, **kw)
    # below glibc's threshold (or with none known) the copy writes through the cache too: chapter 3's model is
    # the copy's own time, so B/8 counts where the rounds measured 1.5 (some cores skip the copy's extra read)
    for below in (lambda: 2**40, lambda: None):
        with swapped(teach.roofline, "_kernels", lambda nbytes, threads, pool: (fake.fns, fake.clock)), \
                swapped(roofline, "streaming_store_threshold", below):
            teach.check_relu_prediction(6.0, 3.0, **kw)
            assert "chapter 3's model for your copy" in capsys.readouterr().out
            teach.check_relu_prediction(4.0, 3.0, **kw)         # write-allocate, measured: graded as usual
            assert "within the tolerance" in capsys.readouterr().out
            for wrong in (300.0, 48.0, 12.0, 0.5):             # the other slips still fail
                with pytest.raises(CheckFailed):
                    teach.check_relu_prediction(wrong, 3.0, **kw)
    with swapped(roofline, "streaming_store_threshold", lambda: 2**20):
        assert teach.roofline._models(128 * 2**20, 2)[0] == (1.5,)        # 64 MiB slices stream
        assert "above glibc's streaming threshold of 1 MiB" in teach.roofline._models(128 * 2**20, 2)[1]
        assert teach.roofline._models(2**20, 2)[0] == (1.0, 1.5)          # 0.5 MiB slices do not


# ---- exercise numbering across a chapter's pages -----------------------------------------------------


def test_exercises_number_on_across_a_chapters_pages():
    from npukit import sphinxext

    env = types.SimpleNamespace(toc_fignumbers={
        "chapters/03_graphs": {"exercise": {"a": (17,), "b": (18,), "c": (19,)}},
        "chapters/03b_rewrites": {"exercise": {"d": (20,), "e": (21,)}},
        "chapters/04_gemm": {"exercise": {"f": (22,)}},
        "chapters/claims": {"exercise": {"g": (23,)}},
    })
    changed = sphinxext._number_exercises_per_chapter(None, env)
    nums = {k: v for page in env.toc_fignumbers.values() for k, v in page["exercise"].items()}
    assert [nums[k] for k in "abcdef"] == [(3, 1), (3, 2), (3, 3), (3, 4), (3, 5), (4, 1)]
    assert nums["g"] == (23,) and "chapters/claims" not in changed
    assert sphinxext._number_exercises_per_chapter(None, env) == []       # stable on a second pass
    assert math.isfinite(len(changed))


def test_stream_comparison_counts_read_plus_written_per_round(monkeypatch):
    """Times come back as seconds per byte counted: a call's seconds over 2 × nbytes × sweeps (a fake compare)."""
    from npukit import measure

    seconds = {"small": [0.5, 1.0, 0.5], "big": [0.5, 1.0, 2.0], "relu": [1.0, 1.5, 3.0]}
    ran = []

    def fake(fns, **kw):
        for k, f in fns.items():
            f(), ran.append(k)
        assert kw["number"] == 1                      # a call already moves at least 64 MiB
        return measure.Comparison.from_times({k: seconds[k] for k in fns})

    monkeypatch.setattr(measure, "compare", fake)
    c = roofline.stream_comparison({"small": (MiB, "copy"), "big": (128 * MiB, "copy"), "relu": (128 * MiB, "relu")},
                                   threads=2, rounds=3)
    assert sorted(ran) == ["big", "relu", "small"] and c.baseline == "small"
    assert c.times["small"] == pytest.approx(tuple(t / (2 * MiB * 64) for t in seconds["small"]))  # swept 64 times
    assert c.times["big"] == pytest.approx(tuple(t / (2 * 128 * MiB) for t in seconds["big"]))
    assert 1 / c["big"] == pytest.approx(2 * 128 * MiB / 1.0)                   # the median rate
    assert c.verdict("relu", "big").ratio == pytest.approx(1.5)                 # paired: 2, 1.5, 1.5


def test_stream_comparison_runs_the_kernels(monkeypatch):
    seen = {}
    real_maximum = np.maximum

    def spy(x, y, out=None):
        seen["out"] = out
        return real_maximum(x, y, out=out)

    monkeypatch.setattr(roofline.np, "maximum", spy)
    c = roofline.stream_comparison({"copy": (2 * MiB, "copy"), "relu": (2 * MiB, "relu")}, threads=2, rounds=3,
                                   warmup=0)
    assert c.names == ("copy", "relu") and c.rounds == 3
    assert seen["out"].dtype == np.float32 and np.all(seen["out"] == 1.0)
