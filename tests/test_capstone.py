"""Chapter 8: the variants, the closed loop's checks, its table rows, its figures and lab 8's checkers.

References are independent of the code under test: the shipped network rebuilt
by hand at another size, ``onnx.reference``, hand-corrupted models, plain
arithmetic.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import statistics
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import FakeRounds, swapped

from npukit import capstone, contract, deploy, measure, ptq, rewrites, tally, teach
from npukit.data import shapes_dataset
from npukit.figures import capstone as fig
from npukit.graphs import MachineSpec
from npukit.models import CameraNet, summary
from npukit.teach import capstone as teach_capstone
from npukit.teach.core import CheckFailed, NotAttempted

ROOT = pathlib.Path(__file__).resolve().parent.parent
MACHINE = MachineSpec(1e11, 1e10, "example", "given", "given")


def _shipped_at(size: int) -> CameraNet:
    """The shipped weights in a CameraNet built for ``size``-pixel images (no widening)."""
    base = CameraNet.pretrained()
    net = CameraNet(stem=base.config["stem"], blocks=base.config["blocks"], size=size)
    net.params = {k: v.copy() for k, v in base.params.items()}
    return net


@pytest.fixture(scope="module")
def loop():
    return capstone.closed_loop(CameraNet.pretrained(), machine=MACHINE, heldout=100, runs=10)


# -- variants -------------------------------------------------------------------------------------------------


@settings(max_examples=6, deadline=None)
@given(width=st.floats(1.0, 2.5), size=st.sampled_from([16, 24, 32, 40, 48]))
def test_a_widened_variant_computes_the_shipped_function(width, size):
    net = capstone.variant(width, size)
    x = shapes_dataset(6, seed=3, size=size)[0]
    np.testing.assert_allclose(net(x), _shipped_at(size)(x), rtol=1e-4, atol=1e-4)
    assert net.config["stem"] == round(16 * width)
    assert [w for w, _ in net.config["blocks"]] == [round(c * width) for c in (32, 64, 128)]


def test_wider_means_more_work():
    macs = [sum(r["macs"] for r in summary(capstone.variant(w))) for w in (1.0, 1.5, 2.0)]
    assert macs[0] == sum(r["macs"] for r in summary(CameraNet.pretrained())) < macs[1] < macs[2]


def test_variant_refuses_narrowing():
    with pytest.raises(ValueError, match="width must be >= 1"):
        capstone.variant(0.75)


# -- the closed loop ------------------------------------------------------------------------------------------


def test_check_rules_and_nan():
    assert capstone.Check("s", "q", 0.5, 1.0).ok and not capstone.Check("s", "q", 1.5, 1.0).ok
    assert capstone.Check("s", "q", 0.99, 0.95, ">=").ok and not capstone.Check("s", "q", 0.9, 0.95, ">=").ok
    assert not capstone.Check("s", "q", float("nan"), 1.0).ok
    assert not capstone.Check("s", "q", float("nan"), 0.5, ">=").ok


def test_the_shipped_model_closes_every_stage(loop):
    assert loop.passed
    assert [c.stage for c in loop.checks] == ["export", "fold", "fold", "quantize", "quantize", "contract", "contract",
                                              "compile", "verify", "verify", "verify"]
    assert set(loop.latency) == {"FP32", "BF16", "INT8"}
    assert all(b.first > 0 and len(b.times) == 10 for b in loop.latency.values())
    assert not any(n.op_type == "BatchNormalization" for n in loop.folded.graph.node)
    assert loop.macs == sum(r["macs"] for r in summary(loop.net))
    assert [r.name for r in loop.layers] == [layer.name for layer in loop.net.layers if layer.op in ("Conv", "Gemm")]
    assert loop.array.cycles == sum(r.cycles for r in loop.layers)


def test_the_first_inference_benchmarked_is_a_cold_start(monkeypatch):
    """The loop benchmarks each compiled model before anything else runs it (issue 23: not after verifying)."""
    from npukit import deploy

    runs: dict = {}
    real_compile, real_bench = deploy.compile, deploy.benchmark_many

    class Counted:
        def __init__(self, c):
            self.c = c
            runs[id(self)] = 0

        def __call__(self, *a, **k):
            runs[id(self)] += 1
            return self.c(*a, **k)

        def __getattr__(self, name):
            return getattr(self.c, name)

    seen = []

    def bench(compiled, *a, **k):
        seen.append({k2: runs[id(c)] for k2, c in compiled.items()})
        return real_bench({k2: c.c for k2, c in compiled.items()}, *a, **k)

    monkeypatch.setattr(deploy, "compile", lambda *a, **k: Counted(real_compile(*a, **k)))
    monkeypatch.setattr(deploy, "benchmark_many", bench)
    capstone.closed_loop(CameraNet.pretrained(), machine=MACHINE, heldout=20, runs=3, warmup=0)
    assert seen == [{"FP32": 0, "BF16": 0, "INT8": 0}]


def test_layer_rows_follow_the_roofline_and_the_array(loop):
    for r in loop.layers:
        assert r.bytes_fp32 == 4 * r.bytes_int8
        bound = max(r.flops / MACHINE.peak_flops, r.bytes_fp32 / MACHINE.bandwidth) * 1e6
        assert r.roofline_us == pytest.approx(bound)
        assert r.bound == ("memory" if r.flops / r.bytes_fp32 < MACHINE.ridge else "compute")
        assert r.array_us >= r.cycles / capstone.NPU_ARRAY["clock_hz"] * 1e6 - 1e-12


def test_a_corrupted_weight_fails_the_bit_exact_check(monkeypatch):
    real = ptq.to_qdq

    def off_by_one(folded, calibration, **kw):
        from onnx import numpy_helper

        q = real(folded, calibration, **kw)
        t = next(t for t in q.graph.initializer if t.name.endswith(".int8"))
        a = numpy_helper.to_array(t).copy()
        a.flat[0] = a.flat[0] + 1 if a.flat[0] < 127 else a.flat[0] - 1
        t.CopyFrom(numpy_helper.from_array(a, t.name))
        return q

    monkeypatch.setattr(ptq, "to_qdq", off_by_one)
    bad = capstone.closed_loop(CameraNet.pretrained(), machine=MACHINE, heldout=20, runs=3)
    failed = [c for c in bad.checks if not c.ok]
    assert [(c.quantity, c.value) for c in failed] == [("int8 weights ≠ QuantizeLinear (onnx.reference)", 1.0)]


def test_a_wrong_fold_fails_the_fold_check(monkeypatch):
    real = rewrites.fold_batchnorm

    def sloppy(model):                      # a fold that gets one channel's weights wrong by 10%
        from onnx import numpy_helper

        out = real(model)
        t = next(t for t in out.graph.initializer if t.name.endswith("weight_bnfold"))
        a = numpy_helper.to_array(t).copy()
        a[0] *= 1.1
        t.CopyFrom(numpy_helper.from_array(a, t.name))
        return out

    monkeypatch.setattr(rewrites, "fold_batchnorm", sloppy)
    bad = capstone.closed_loop(CameraNet.pretrained(), machine=MACHINE, heldout=20, runs=3)
    assert "max |folded − unfolded| (onnx.reference)" in [c.quantity for c in bad.checks if not c.ok]


def test_night_calibration_fails_only_the_int8_agreement():
    night = shapes_dataset(256, seed=7, background="dark", brightness=(0.2, 0.4))[0]
    bad = capstone.closed_loop(CameraNet.pretrained(), machine=MACHINE, calibration=night, method="percentile",
                               heldout=300, runs=3)
    assert [c.quantity for c in bad.checks if not c.ok] == ["INT8 top-1 agreement with float"]


def test_numbers_rows(loop):
    rows = capstone.numbers(tally.Context(machine=MACHINE, loop=loop))
    assert {r.chapter for r in rows} == {8} and len(rows) == 7
    text = {r.quantity: r.value for r in rows}
    assert text["closed-loop checks passed"] == f"{len(loop.checks)} of {len(loop.checks)}"
    assert f"{loop.array.cycles:,}" in next(v for k, v in text.items() if k.startswith("cycles"))
    assert [r.chapter for r in tally.rows(8, tally.Context(machine=MACHINE, loop=loop))][-1] == 8


def test_context_refuses_a_non_loop():
    with pytest.raises(TypeError, match="loop"):
        tally.Context(loop="loop")


# -- figures --------------------------------------------------------------------------------------------------


def test_course_map_links_every_chapter_to_an_existing_page():
    f = fig.course_map_figure({c: f"fact {c}" for c in range(9)})
    links = [re.search(r"href='([^']+)'", a.text).group(1) for a in f.layout.annotations if a.text and "href" in a.text]
    assert sorted(int(p[:2]) for p in links) == list(range(9))
    for page in links:
        assert (ROOT / "chapters" / page.replace(".html", ".md")).exists(), page
    assert all(f"fact {c}" in "".join(a.text or "" for a in f.layout.annotations) for c in range(9))
    lab = fig.course_map_figure(base="../chapters/")
    assert all("href='../chapters/" in a.text for a in lab.layout.annotations if a.text and "href" in a.text)
    # from the student edition (labs/student/), outside the book: the sources, two levels up
    student = fig.course_map_figure(base="../../chapters/", suffix=".md")
    for a in student.layout.annotations:
        if a.text and "href" in a.text:
            target = re.search(r"href='([^']+)'", a.text).group(1)
            assert (ROOT / "labs" / "student" / target).resolve().exists(), target


def test_explain_and_variant_figures(loop):
    f = fig.explain_figure(loop, "INT8")
    assert [len(t.x) for t in f.data] == [len(loop.layers)] * 3
    with pytest.raises(ValueError, match="precision"):
        fig.explain_figure(loop, "FP16")
    v = fig.variants_figure({"a": loop})
    assert [t.name for t in v.data] == ["FP32", "BF16", "INT8"]
    w = fig.warmup_figure({"FP32": [2e-3, 1e-4, 1e-4]})
    assert list(w.data[0].y) == pytest.approx([2000, 100, 100])


# -- lab 8's checkers -----------------------------------------------------------------------------------------


def _todo(*args):
    raise NotImplementedError()


def _guarded(folded, calibration):
    dims = [d.dim_value for d in folded.graph.input[0].type.tensor_type.shape.dim]
    if calibration.dtype != np.float32 or calibration.shape[1:] != tuple(dims[1:]):
        raise ValueError("calibration shape")
    if calibration.min() < 0 or calibration.max() > 1:
        raise ValueError("calibration range")
    return ptq.to_qdq(folded, calibration)


#: The clock the learner-side functions below read: time.perf_counter, or the fake one of ``fake_time``.
now = time.perf_counter


def _warm(run, warmup, runs):
    t0 = now()
    run()
    first = now() - t0
    for _ in range(warmup):
        run()
    ts = []
    for _ in range(runs):
        t0 = now()
        run()
        ts.append(now() - t0)
    return first, statistics.median(ts)


def _bounds(counts, machine):
    out = {}
    for c in counts:
        if c.op_type in ("Conv", "Gemm"):
            b = c.param_bytes + c.act_bytes_in + c.act_bytes_out
            out[c.name] = (max(c.flops / machine.peak_flops, b / machine.bandwidth),
                           "memory" if c.flops / b < machine.peak_flops / machine.bandwidth else "compute")
    return out


def test_reference_solutions_pass(capsys, loop):
    teach.check_export_folded(lambda net: rewrites.fold_batchnorm(net.to_onnx(batch=1)))
    teach.check_qdq(_guarded)
    teach.check_qdq(lambda f, c: _guarded(f, c) and contract.ort_quantize_qdq(f, c))      # ONNX Runtime's quantizer too
    teach.check_warm_latency(_warm)
    teach.check_roofline_bounds(_bounds)
    with swapped(teach_capstone, "_timed_variants", _variants(_like_this_machine(1.0))):
        teach.check_variant_prediction(_affine, loop, loop)
    assert capsys.readouterr().out.count("✓") == 6


@pytest.mark.parametrize("check", [teach.check_export_folded, teach.check_qdq, teach.check_warm_latency,
                                   teach.check_roofline_bounds])
def test_unfinished_exercises_are_not_attempted(check, loop):
    with pytest.raises(NotAttempted):
        check(_todo)
    with pytest.raises(NotAttempted):
        teach.check_variant_prediction(_todo, loop, loop)


def _own_fold(model, eps=None):
    """A learner's BatchNorm fold written by hand; ``eps`` replaces the node's epsilon (a wrong fold)."""
    from onnx import helper, numpy_helper

    g = model.graph
    consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    inits, nodes = dict(consts), []
    for n in g.node:
        if n.op_type != "BatchNormalization":
            nodes.append(n)
            continue
        conv = producer[n.input[0]]
        e = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5) if eps is None else eps
        gamma, beta, mean, var = (consts[x].astype(np.float64) for x in n.input[1:5])
        s = gamma / np.sqrt(var + e)
        bias = consts[conv.input[2]] if len(conv.input) > 2 else 0.0
        inits[conv.input[1]] = (consts[conv.input[1]] * s[:, None, None, None]).astype(np.float32)
        inits[conv.name + "_folded_bias"] = (s * (bias - mean) + beta).astype(np.float32)
        del conv.input[2:]
        conv.input.append(conv.name + "_folded_bias")
        conv.output[0] = n.output[0]
    graph = helper.make_graph(nodes, g.name, g.input, g.output, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=model.opset_import)


def _bn_as_mul_add(model):
    """Each BatchNorm replaced by a Mul and an Add: no BatchNormalization left, but nothing folded either."""
    from onnx import helper, numpy_helper

    g = model.graph
    consts = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    nodes = []
    for n in g.node:
        if n.op_type != "BatchNormalization":
            nodes.append(n)
            continue
        gamma, beta, mean, var = (consts[x] for x in n.input[1:5])
        s = (gamma / np.sqrt(var + 1e-5)).astype(np.float32)
        g.initializer.extend([numpy_helper.from_array(s.reshape(-1, 1, 1), n.name + "_s"),
                              numpy_helper.from_array((beta - mean * s).astype(np.float32).reshape(-1, 1, 1),
                                                      n.name + "_t")])
        nodes += [helper.make_node("Mul", [n.input[0], n.name + "_s"], [n.name + "_m"]),
                  helper.make_node("Add", [n.name + "_m", n.name + "_t"], [n.output[0]])]
    del g.node[:]
    g.node.extend(nodes)
    return model


def test_a_fold_written_by_hand_passes(capsys):
    teach.check_export_folded(lambda net: _own_fold(net.to_onnx(batch=1)))
    assert "✓" in capsys.readouterr().out


@pytest.mark.parametrize("fn, says", [
    (lambda net: net.to_onnx(), "BatchNormalization"),
    (lambda net: _own_fold(net.to_onnx(batch=1), eps=0.0), "differ"),               # ε dropped: near-dead channels
    (lambda net: _own_fold(net.to_onnx(batch=1), eps=1e-3), "differ"),
    (lambda net: _bn_as_mul_add(net.to_onnx(batch=1)), "more than the network's own layers"),
    (lambda net: rewrites.fold_batchnorm(net.to_onnx(batch="N")), "must be fixed"),
    (lambda net: rewrites.fold_batchnorm(CameraNet(size=net.size).to_onnx()), "Conv nodes|differ"),
    (lambda net: capstone.closed_loop(net, machine=MACHINE).folded, "capstone.closed_loop"),
    (lambda net: "model.onnx", "onnx.ModelProto"),
])
def test_export_folded_mistakes(fn, says):
    with pytest.raises(CheckFailed, match=says):
        teach.check_export_folded(fn)


@pytest.fixture
def grading_seed():
    """The refusal cases of check_qdq are drawn afresh each run; a grading seed makes them these tests' own."""
    from npukit.teach import core

    core._set_grade_seed(20260301)
    yield
    core._set_grade_seed(None)


@pytest.mark.parametrize("fn, says", [
    (lambda f, c: ptq.to_qdq(f, c), "raise ValueError|accepted"),                    # no guard
    (lambda f, c: _guarded(f, c) and ptq.to_qdq(f, np.zeros_like(c)), "Calibrate on"),
    (lambda f, c: _guarded(f, c) and ptq.to_qdq(f, shapes_dataset(32, seed=1, size=c.shape[-1])[0]), "dim camera"),
    (lambda f, c: _guarded(f, c) and ptq.to_qdq(f, np.random.default_rng(0).random(c.shape, np.float32)),
     "dim camera"),
    (lambda f, c: (c.max() <= 1 and c.shape[-1] == _size(f) or _refuse()) and ptq.to_qdq(f, c.astype(np.float32)),
     "raise ValueError|accepted"),                                                   # float64 and more let through
    (lambda f, c: _guarded(f, c) and f, "in float"),
    (lambda f, c: _guarded(f, c) and capstone.closed_loop(capstone.variant(), machine=MACHINE).qdq, "npukit.capstone"),
])
def test_qdq_mistakes(fn, says, grading_seed):
    with pytest.raises(CheckFailed, match=says):
        teach.check_qdq(fn)


def _no_warmup(run, warmup, runs):
    first, *rest = [_timed(run) for _ in range(1 + warmup + runs)]
    return first, statistics.median(rest)


def _timed(run):
    t0 = now()
    run()
    return now() - t0


def _size(folded):
    return folded.graph.input[0].type.tensor_type.shape.dim[-1].dim_value


def _refuse():
    raise ValueError("bad calibration")


def _steady(run, warmup, runs):
    """The first call, then the timed calls (warm-up untimed): the pieces every mistake below recombines."""
    first = _timed(run)
    for _ in range(warmup):
        run()
    return first, [_timed(run) for _ in range(runs)]


def _summarised(run, warmup, runs, summary):
    """``(first, summary(first, timed))``: a median (or not) of the wrong calls, as the mistakes below make it."""
    first, timed = _steady(run, warmup, runs)
    return first, summary(first, timed)


def _first_and_warmup(run, warmup, runs):
    t0 = now()
    for _ in range(1 + warmup):
        run()
    return now() - t0, statistics.median(_timed(run) for _ in range(runs))


@pytest.mark.parametrize("fn, says", [
    (_no_warmup, "cold calls|warm-up calls"),
    (lambda run, w, r: _summarised(run, w, r, lambda f, ts: statistics.median([f, *ts])), "first call"),
    (lambda run, w, r: _summarised(run, w, r, lambda f, ts: statistics.fmean(ts)), "mean"),
    (lambda run, w, r: _summarised(run, w, r, lambda f, ts: min(ts)), "one call's time"),
    (_first_and_warmup, "first call alone"),
    (lambda run, w, r: ([run() for _ in range(1 + w + r)], (0.02, 0.0005))[1], "first time"),     # made-up numbers
    (lambda run, w, r: _summarised(run, w, r, lambda f, ts: max(ts)), "one call's time"),
    (lambda run, w, r: tuple(1e3 * v for v in _warm(run, w, r)), "milliseconds"),
    (lambda run, w, r: (_warm(run, w + 1, r)[1],) * 2, "calls|first"),
    (lambda run, w, r: (0.01, measure.timeit(run, repeat=r, warmup=w)), "measure.timeit"),
    (lambda run, w, r: [_warm(run, w, r)], "pair"),
])
def test_warm_latency_mistakes(fn, says, fake_time):
    with pytest.raises(CheckFailed, match=says):
        teach.check_warm_latency(fn)


@pytest.fixture
def fake_time(monkeypatch):
    """The stand-in inferences sleep on a fake clock, and the functions under check read it: no real timing.

    With real sleeps, a busy machine stretched calls by a millisecond now and then, which moved a mistake's
    answer off the value its hint looks for (test_warm_latency_mistakes[first call] failed under load).
    """
    import sys

    fake = [0.0]

    def sleep(seconds):
        fake[0] += seconds

    monkeypatch.setattr(sys.modules[__name__], "now", lambda: fake[0])
    with swapped(teach_capstone, "_clock", lambda: fake[0]), swapped(teach_capstone, "_sleep", sleep):
        yield


def test_the_reference_passes_on_the_fake_clock_too(fake_time, capsys):
    teach.check_warm_latency(_warm)
    assert "✓" in capsys.readouterr().out


@pytest.mark.parametrize("fn, says", [
    (lambda counts, m: {c.name: (c.flops / m.peak_flops, "compute") for c in counts if c.op_type in ("Conv", "Gemm")},
     "expected"),
    (lambda counts, m: {c.name: (1.0, m.bound(c.intensity)) for c in counts}, "MachineSpec.bound"),
    (lambda counts, m: {k: v for k, v in _bounds(counts, m).items() if k.startswith("conv")}, "missing"),
    (lambda counts, m: {k: (t, _AlwaysEqual("?")) for k, (t, _) in _bounds(counts, m).items()}, "'memory' or"),
    (lambda counts, m: {k: (t, {"memory": "compute", "compute": "memory"}[kind])
                        for k, (t, kind) in _bounds(counts, m).items()}, "ridge point"),
    (lambda counts, m: {c.name: (max(c.flops / m.bandwidth, c.bytes / m.peak_flops), "memory") for c in counts
                        if c.op_type in ("Conv", "Gemm")}, "FLOPs go with the peak"),
    (lambda counts, m: {c.name: (c.flops / m.peak_flops + c.bytes / m.bandwidth, "memory") for c in counts
                        if c.op_type in ("Conv", "Gemm")}, "not their sum"),
])
def test_roofline_bounds_mistakes(fn, says):
    with pytest.raises(CheckFailed, match=says):
        teach.check_roofline_bounds(fn)


class _AlwaysEqual(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


def _scaled(loop, macs, seconds):
    """``loop`` as if its MACs were ``macs`` times and its FP32 median ``seconds``."""
    bench = deploy.Benchmark(seconds, (seconds,))
    return dataclasses.replace(loop, layers=tuple(dataclasses.replace(r, macs=r.macs * macs, flops=r.flops * macs)
                                                  for r in loop.layers),
                               latency={**loop.latency, "FP32": bench})


measured_ratio = 1.2          # a notebook variable the prediction must not read


def _reads_the_notebook(macs_ratio, anchor_macs_ratio, anchor_ratio):
    return measured_ratio


def _imports_the_notebook(macs_ratio, anchor_macs_ratio, anchor_ratio):
    import __main__

    return __main__.measured_ratio


def _reads_builtins(macs_ratio, anchor_macs_ratio, anchor_ratio):
    return _stashed_measurement      # noqa: F821  (put into builtins by the test)


def _affine(macs_ratio, anchor_macs_ratio, anchor_ratio):
    """The reference reasoning: a fixed part of the time and a part that grows with the MACs, from the anchor."""
    return 1 + (anchor_ratio - 1) * (macs_ratio - 1) / (anchor_macs_ratio - 1)


@pytest.fixture(scope="module")
def wide_loop():
    """A variant with ×11 the MACs: its FP32 latency grows, but far less than its work."""
    return capstone.closed_loop(capstone.variant(2.0, 40), machine=MACHINE, heldout=20, runs=5)


def _variants(ratios, bursts=None):
    """The check's timed networks, faked: each takes ``ratios[name]`` times the shipped model's time (the
    affine model's ratio with its small error on this machine: more pixels cost a little more per MAC)."""
    def make(nets):
        fake = FakeRounds({k: 0.01 * ratios.get(k, 1.0) for k in nets},
                          bursts={"yours": bursts} if bursts else None)
        return fake.fns, fake.clock
    return make


def _like_this_machine(yours):
    """Ratios as one thread's CPU time measured them here: anchor (×11.45 MACs) 2.62, 40 px (×1.56) 1.11."""
    return {"shipped": 1.0, "anchor": 2.62, "the width 1, 40 px network": 1.11, "yours": yours}


def test_prediction_messages(loop, wide_loop):
    shipped, wide = loop, wide_loop          # width ×2 on 40 px: ×5.28 the MACs, ×1.66 the time here
    with swapped(teach_capstone, "_timed_variants", _variants(_like_this_machine(1.66))):
        teach.check_variant_prediction(_affine, wide, shipped)
        with pytest.raises(CheckFailed, match="costs that do not grow with the work"):
            teach.check_variant_prediction(lambda m, am, ar: m, wide, shipped)
        with pytest.raises(CheckFailed, match="must be a number"):
            teach.check_variant_prediction(lambda m, am, ar: "fast", wide, shipped)
        with pytest.raises(CheckFailed, match="not read the notebook"):
            teach.check_variant_prediction(_reads_the_notebook, wide, shipped)
        with pytest.raises(CheckFailed, match="not read the notebook"):       # npukit is out of reach too
            teach.check_variant_prediction(lambda m, am, ar: capstone.variant() and 1.2, wide, shipped)
        with pytest.raises(CheckFailed, match="may not import"):
            teach.check_variant_prediction(_imports_the_notebook, wide, shipped)
        with pytest.raises(CheckFailed, match="no default values"):
            teach.check_variant_prediction(lambda m, am, ar, w=wide: w.latency["FP32"].median / 1e-4, wide, shipped)


@pytest.mark.parametrize("wrong, says", [
    (lambda m, am, ar: 1.0, "no growth at all"),                       # only fixed costs
    (lambda m, am, ar: m, "scaled the time with the MACs"),            # time ∝ MACs
    (lambda m, am, ar: 1.5, "fixed part"),                             # the width ratio of lab 8's default
    (lambda m, am, ar: (40 / 32) ** 2, "fixed part"),                  # its pixel ratio
    (lambda m, am, ar: ar, "the anchor's ratio"),                      # the anchor copied
    (lambda m, am, ar: ar * m / am, "scaled the anchor's ratio"),      # the anchor scaled with the MACs
], ids=["one", "macs", "width", "pixels", "anchor", "proportional"])
def test_variant_wrong_answers_fail(loop, wrong, says):
    """Lab 8's default variant (width 1.5, 40 px: ×3.15 the MACs, ×1.39 the time here) and its wrong answers."""
    yours = _scaled(loop, 1, 1e-4)
    yours = dataclasses.replace(yours, net=capstone.variant(1.5, 40))
    with swapped(teach_capstone, "_timed_variants", _variants(_like_this_machine(1.39))):
        with pytest.raises(CheckFailed, match=says):
            teach.check_variant_prediction(wrong, yours, loop)


def test_the_ratio_is_timed_again_not_read_from_the_loops(loop, capsys):
    """A loop benchmarked on a busy machine (here: faked 3× slower) does not move the ratios the check measures."""
    busy = _scaled(loop, 1, 3 * loop.latency["FP32"].median)
    with swapped(teach_capstone, "_timed_variants", _variants(_like_this_machine(1.0))):
        teach.check_variant_prediction(_affine, busy, loop)     # the same model: ×1 when timed again
        with pytest.raises(CheckFailed, match=r"timed again by this check"):
            teach.check_variant_prediction(lambda m, am, ar: 3.0 if m == 1 else 1 + (ar - 1) * (m - 1) / (am - 1),
                                           busy, loop)   # the stored medians' ratio, 3, for this variant
    assert "✓" in capsys.readouterr().out


def test_variant_rounds_too_noisy_ask_for_a_rerun(loop, wide_loop):
    from npukit.teach.retime import TooNoisy

    with swapped(teach_capstone, "_timed_variants", _variants(_like_this_machine(1.66), (0.5, 2))):
        with pytest.raises(TooNoisy, match="too noisy to judge"):
            teach.check_variant_prediction(_affine, wide_loop, loop)


def test_variant_check_times_every_network_on_one_thread(loop):
    from npukit.teach import retime

    fns, clock = teach_capstone._timed_variants({"shipped": (loop.folded, loop.net.size)})
    assert list(fns) == ["shipped"] and clock is retime.PROCESS_TIME
    fns["shipped"]()
    compiled = teach_capstone._one_thread(loop.folded)
    assert compiled is teach_capstone._one_thread(loop.folded)             # compiled once a session
    assert int(compiled.get_property("INFERENCE_NUM_THREADS")) == 1


def test_a_prediction_cannot_read_what_an_earlier_cell_stashed_in_builtins(monkeypatch, loop):
    import builtins

    shipped, wide = _scaled(loop, 1, 1e-4), _scaled(loop, 3, 1.2e-4)
    monkeypatch.setattr(builtins, "_stashed_measurement", 1.2, raising=False)
    with pytest.raises(CheckFailed, match="not read the notebook"):
        teach.check_variant_prediction(_reads_builtins, wide, shipped)


def test_a_stopped_clock_or_a_replaced_sleep_is_refused(monkeypatch):
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)
    with pytest.raises(CheckFailed, match="time.perf_counter was replaced"):
        teach.check_warm_latency(lambda run, w, r: ([run() for _ in range(1 + w + r)], (0.0, 0.0))[1])
    monkeypatch.undo()

    def sleeps_nothing(run, warmup, runs):
        monkeypatch.setattr(time, "sleep", lambda s: None)   # replaced while the check runs it
        return ([run() for _ in range(1 + warmup + runs)], (0.0, 0.0))[1]

    with pytest.raises(CheckFailed, match="time.sleep was replaced"):
        teach.check_warm_latency(sleeps_nothing)


def test_a_faked_subprocess_cannot_hand_in_the_measurement(monkeypatch, loop):
    import json
    import subprocess
    import types

    shipped, wide = _scaled(loop, 1, 1e-4), _scaled(loop, 3, 1.2e-4)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: types.SimpleNamespace(
        stdout=json.dumps({"value": 1.2}).encode(), returncode=0))
    with pytest.raises(CheckFailed, match="subprocess.run was replaced"):
        teach.check_variant_prediction(lambda m, am, ar: 99.0, wide, shipped)
