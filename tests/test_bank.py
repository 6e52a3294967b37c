"""The question bank (npukit.teach.bank): counts, objectives, every numeric answer recomputed, the GIFT export.

Every numeric question's answer is recomputed here by an independent route
(NumPy, ONNX's reference evaluator, or an npukit function that is tested on
its own, never the bank's formula), for its worked instance and for drawn
variants. The GIFT export is checked against the rules of Moodle's importer
here and parsed by gift-pegjs (an independent GIFT parser, npm) in
``make bank-check``, which sets ``GIFT_PEGJS`` to its installation.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from npukit import accelerator, capstone, contract, gemm, graphs, layouts, models, qarith, quant, rewrites, simd
from npukit import systolic, tensors
from npukit.teach import bank
from npukit.teach.bank import gift

ROOT = Path(__file__).parent.parent
CHAPTER_UNITS = [u for u in bank.UNITS if u != "pre"]
VARIANTS = 12                                   # drawn variants checked per numeric question


# ---------------------------------------------------------------- counts and objectives

def test_counts_per_unit_and_kind():
    counts = bank.counts()
    assert set(counts) == set(bank.UNITS)
    for unit in CHAPTER_UNITS:
        assert sum(counts[unit].values()) >= 10, f"unit {unit}: at least ten questions, {counts[unit]}"
        assert all(counts[unit][k] >= 2 for k in bank.KINDS), f"unit {unit}: at least two of each kind, {counts[unit]}"
    assert 10 <= sum(counts["pre"].values()) <= 15
    assert counts["pre"]["short"] == 0, "the diagnostic is auto-graded: numeric and choice only"


def test_ids_are_unique_and_name_their_unit():
    ids = [q.id for q in bank.questions()]
    assert len(ids) == len(set(ids))
    for q in bank.questions():
        assert q.id.startswith("pre-" if q.unit == "pre" else f"ch{q.unit}-"), q.id


def _objectives(page: Path) -> list[str]:
    """The numbered items of a page's "Learning objectives" admonition, whitespace collapsed."""
    text = page.read_text(encoding="utf-8")
    block = re.search(r"\{admonition\} Learning objectives.*?\n(.*?)\n```", text, re.S).group(1)
    return [" ".join(m.group(1).split()) for m in re.finditer(r"^\d+\. (.*?)(?=^\d+\. |\Z)", block, re.M | re.S)]


@pytest.mark.parametrize("unit", CHAPTER_UNITS)
def test_every_objective_named_is_on_the_chapter_page(unit):
    page, _, phrases = bank.UNITS[unit]
    found = _objectives(ROOT / "chapters" / page)
    assert len(found) == len(phrases), f"{page} lists {len(found)} objectives, the bank {len(phrases)}"
    for i, phrase in enumerate(phrases):
        assert phrase in found[i], f"{page}: objective {i + 1} is {found[i]!r}, the bank says {phrase!r}"
    used = {q.objective for q in bank.questions(unit)}
    assert used == set(range(1, len(phrases) + 1)), f"unit {unit}: objectives without a question: " \
                                                     f"{set(range(1, len(phrases) + 1)) - used}"


def test_diagnostic_questions_have_pointers_and_cover_every_topic():
    qs = bank.questions("pre")
    assert all(q.pointer for q in qs)
    assert {q.objective for q in qs} == set(range(1, len(bank.UNITS["pre"][2]) + 1))


def test_choice_questions_are_well_formed():
    for q in bank.questions():
        if q.kind == "choice":
            texts = [o.text for o in q.options]
            assert len(texts) == len(set(texts)) and sum(o.correct for o in q.options) == 1, q.id
        if q.kind == "short":
            assert q.points >= 2 and all(p >= 1 for p, _ in q.rubric), q.id


# ---------------------------------------------------------------- every numeric answer, recomputed

def _model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "q", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def _conv_counts(cin, cout, h, k, s, p, groups=1, itemsize=None):
    w = numpy_helper.from_array(np.zeros((cout, cin // groups, k, k), np.float32), "W")
    node = helper.make_node("Conv", ["x", "W"], ["y"], group=groups, strides=[s, s], pads=[p] * 4,
                            kernel_shape=[k, k])
    o = len(range(0, h + 2 * p - k + 1, s))
    return graphs.op_counts(_model([node], [_vi("x", (1, cin, h, h))], [_vi("y", (1, cout, o, o))], [w]),
                            itemsize=itemsize)[0]


def _gemm_counts(m, k, n, itemsize=None):
    w = numpy_helper.from_array(np.zeros((n, k), np.float32), "W")
    b = numpy_helper.from_array(np.zeros(n, np.float32), "b")
    node = helper.make_node("Gemm", ["x", "W", "b"], ["y"], transB=1)
    return graphs.op_counts(_model([node], [_vi("x", (m, k))], [_vi("y", (m, n))], [w, b]), itemsize=itemsize)[0]


def _onnx_q(x, s, z, op="QuantizeLinear"):
    node = helper.make_node(op, ["x", "s", "z"], ["y"])
    xtype = TensorProto.FLOAT if op == "QuantizeLinear" else TensorProto.UINT8
    g = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", xtype, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8 if op == "QuantizeLinear"
                                                         else TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(np.float32(s), "s"), helper.make_tensor("z", TensorProto.UINT8,
                                                                                             [], [z])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    x = np.array([x], np.float32 if op == "QuantizeLinear" else np.uint8)
    return float(ReferenceEvaluator(m).run(None, {"x": x})[0][0])


def _bn(x, gamma, beta, mean, var):
    node = helper.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"], epsilon=1e-5)
    inits = [numpy_helper.from_array(np.array([v], np.float32), n)
             for n, v in (("g", gamma), ("b", beta), ("m", mean), ("v", var))]
    m = _model([node], [_vi("x", (1, 1, 1, 1))], [_vi("y", (1, 1, 1, 1))], inits)
    return float(ReferenceEvaluator(m).run(None, {"x": np.full((1, 1, 1, 1), x, np.float32)})[0].ravel()[0])


def _pipeline_fps(decode, infer, requests, frames=200):
    """A discrete-event run of a camera loop: ``requests`` buffers, one host, one device doing one job at a time."""
    host_free, dev_free, done = 0.0, 0.0, []
    slots = [0.0] * requests                       # when each request's buffer is free again
    for i in range(frames):
        slot = i % requests
        start = max(host_free, slots[slot])        # decode into a free buffer
        host_free = start + decode
        run = max(host_free, dev_free)
        dev_free = run + infer
        slots[slot] = dev_free
        done.append(dev_free)
    return 1000 * (frames // 2) / (done[-1] - done[frames // 2 - 1])


def _agreement(n, d):
    a = np.arange(n) % 8
    b = a.copy()
    b[:d] = (b[:d] + 1) % 8
    return 100 * float(np.mean(a == b))


def _qdq_ratio(cin, cout):
    w = np.random.default_rng(0).standard_normal((cout, cin)).astype(np.float32)
    bias = np.zeros(cout, np.float32)                          # the folded BatchNorm's
    p = quant.choose_qparams(w, "int8", axis=0)
    stored = (p.quantize(w).nbytes + np.asarray(p.scale, np.float32).nbytes
              + np.asarray(p.zero_point).astype(np.int8).nbytes + bias.astype(np.int32).nbytes)
    return (w.nbytes + bias.nbytes) / stored


def _gap_model(c, h):
    w = numpy_helper.from_array(np.zeros((c, 3, 3, 3), np.float32), "W")
    fw = numpy_helper.from_array(np.zeros((8, c), np.float32), "fw")
    fb = numpy_helper.from_array(np.zeros(8, np.float32), "fb")
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], pads=[1] * 4, name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
             helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1, name="fc")]
    return _model(nodes, [_vi("x", (1, 3, h, h))], [_vi("y", (1, 8))], [w, fw, fb])


def _groupnorm_intermediates(c, h):
    import onnx
    lowered = onnx.shape_inference.infer_shapes(contract.decompose_groupnorm(
        contract.groupnorm_model(channels=c, groups=8, size=h)))
    size = {v.name: math.prod(d.dim_value for d in v.type.tensor_type.shape.dim) for v in lowered.graph.value_info}
    full = [t for n in lowered.graph.node if n.name.startswith("gn/") and n.op_type != "Reshape"
            for t in n.output if t != "g" and size.get(t) == c * h * h]     # "g": the normalization's output
    return len(full) * c * h * h * 4


def _banks_ref(k, rows, nb):
    row = accelerator.feed_addresses(4 * rows, k, rows)[rows]     # a cycle in which every row reads
    assert (row >= 0).all()
    return len({int(a) % nb for a in row})


def _lines_ref(bk):
    return gemm.traffic(64, 8, 64, (8, 8, bk), "kmn", 4, line=64).a_read


def _machine(p, w):
    return graphs.MachineSpec(p, w, "q", "given", "given")


def _element_offset(shape, dtype, index):
    a = np.empty(shape, dtype)
    return a[tuple(slice(i, None) for i in index)].ctypes.data - a.ctypes.data


def _live(a, b, c, d):
    return rewrites.live_peak([(a, 0, 3), (b, 1, 2), (c, 2, 3), (d, 3, 4)])


def _fusion_saved(c, h):
    w = numpy_helper.from_array(np.zeros((c, c, 1, 1), np.float32), "W")
    nodes = [helper.make_node("Conv", ["x", "W"], ["c"], name="conv"), helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return rewrites.fuse_conv_add_relu(_model(nodes, [_vi("x", (1, c, h, h))], [_vi("y", (1, c, h, h))], [w])).bytes_saved


def _matmul_ms(n, tops):
    m = _model([helper.make_node("MatMul", ["a", "b"], ["y"])], [_vi("a", (n, n)), _vi("b", (n, n))], [_vi("y", (n, n))])
    return graphs.op_counts(m)[0].flops / (tops * 1e12) * 1e3


def _widen(f):
    rows = {r["layer"]: r["macs"] for r in models.summary(capstone.variant(width=float(f)))}
    base = {r["layer"]: r["macs"] for r in models.summary(models.CameraNet.pretrained())}
    return rows["block2.pw"] / base["block2.pw"]


#: question id → an independent computation of its answer from the same parameters.
REFERENCES = {
    "ch0-conv-out-side": lambda h, k, s, p: len(range(0, h + 2 * p - k + 1, s)),
    "ch0-pointwise-macs": lambda cin, cout, h, w: _conv_counts(cin, cout, h, 1, 1, 0).macs * (w / h),
    "ch0-depthwise-macs": lambda c, h, s: _conv_counts(c, c, h, 3, s, 1, groups=c).macs,
    "ch0-pointwise-weights": lambda cin, cout: _conv_counts(cin, cout, 4, 1, 1, 0).param_bytes // 4,
    "ch0-separable-ratio": lambda cin, cout: _conv_counts(cin, cout, 16, 3, 1, 1).macs / (
        _conv_counts(cin, cin, 16, 3, 1, 1, groups=cin).macs + _conv_counts(cin, cout, 16, 1, 1, 0).macs),
    "ch1-c-stride": lambda shape, dtype, axis: np.empty(shape, dtype).strides[axis],
    "ch1-offset": _element_offset,
    "ch1-f-stride": lambda shape, dtype: np.empty(shape, dtype, order="F").strides[-1],
    "ch1-lines": lambda n, start, line: len({a // line for a in range(start, start + n)}),
    "ch1-alignment-of": lambda address: max(2**i for i in range(64) if address % 2**i == 0),
    "ch2-nhwc-row-stride": lambda c, h, w: layouts.convert(np.zeros((1, c, h, w), np.float32), "NCHW", "NHWC").strides[1],
    "ch2-blocked-padding": lambda c, h, w, b: (layouts.to_blocked(np.zeros((1, c, h, w), np.float32), b).nbytes
                                               - 4 * c * h * w),
    "ch2-im2col-bytes": lambda c, h, k, s, p: np.ascontiguousarray(
        layouts.im2col(np.zeros((1, c, h, h), np.float32), k, stride=s, pad=p)).nbytes,
    "ch2-blocked-neighbours": lambda c, h, w, nb: int(np.diff(tensors.element_offsets(
        layouts.to_blocked(np.zeros((1, c, h, w), np.float32), 16))[0, [0, 1], 0, 0, [15, 0]])[0]),
    "ch2-lane-fill": lambda n: simd.lane_fill(n),
    "ch3-pointwise-macs": lambda cin, cout, h: _conv_counts(cin, cout, h, 1, 1, 0).macs,
    "ch3-gemm-flops": lambda m, k, n: _gemm_counts(m, k, n).flops,
    "ch3-dw-intensity": lambda c, h, s: _conv_counts(c, c, h, 3, s, 1, groups=c).intensity,
    "ch3-ridge": lambda p, w: _machine(p * 1e9, w * 1e9).ridge,
    "ch3-attainable": lambda p, w, i: _machine(p * 1e9, w * 1e9).attainable(i) / 1e9,
    "ch3-copy-bandwidth": lambda gib, t: (gib * 1024**3 + gib * 1024**3) / t / 10**9,
    "ch3b-fold-bias": lambda gamma, beta, mean, var: _bn(0.0, gamma, beta, mean, var),
    "ch3b-fold-weight": lambda gamma, var, w: _bn(w, gamma, 0.0, 0.0, var),
    "ch3b-fusion-saves": _fusion_saved,
    "ch3b-live-peak": _live,
    "ch3b-gemm-time": _matmul_ms,
    "ch3b-fc-intensity": lambda k, n, m: _gemm_counts(m, k, n, itemsize=1).intensity,
    "ch4-conv-k": lambda cin, cout, k, h: gemm.conv_as_gemm(cout, cin, h, h, kh=k, kw=k)[2],
    "ch4-conv-macs": lambda cin, cout, k, h: math.prod(gemm.conv_as_gemm(cout, cin, h, h, kh=k, kw=k)),
    "ch4-traffic-mnk": lambda n, b: gemm.traffic(n, n, n, (b, b, b), "mnk", 4, line=64).total,
    "ch4-traffic-kmn-writes": lambda n, b: gemm.traffic(n, n, n, (b, b, b), "kmn", 4, line=64).c_write,
    "ch4-lines": _lines_ref,
    "ch4-compulsory": lambda m, n, k: gemm.compulsory(m, n, k, 1, c_itemsize=4, line=1).total,
    "ch4-tile-steps": lambda m, n, k, bm, bn, bk: sum(1 for _ in range(0, m, bm) for _ in range(0, n, bn)
                                                      for _ in range(0, k, bk)),
    "ch5-ws-cycles": lambda m, n, k, r, c: systolic.estimate(m, n, k, r, c, "ws").cycles,
    "ch5-os-cycles": lambda m, n, k, r, c: systolic.estimate(m, n, k, r, c, "os").cycles,
    "ch5-ws-utilization": lambda m, n, k, r, c: systolic.estimate(m, n, k, r, c, "ws").utilization,
    "ch5-peak-tops": lambda r, c, ghz: accelerator.peak_tops(r, c, ghz * 1e9),
    "ch5-depthwise-per-channel": lambda ch, o, r: ch * systolic.estimate(o * o, 1, 9, r, r, "ws").cycles,
    "ch5-bank-conflicts": _banks_ref,
    "ch6-quantize": lambda x, s, z: _onnx_q(x, s, z),
    "ch6-dequantize": lambda q, s, z: _onnx_q(q, s, z, "DequantizeLinear"),
    "ch6-zero-point": lambda lo, hi: int(quant.choose_qparams(np.float32([lo, hi]), "uint8", symmetric=False).zero_point),
    "ch6-shift": lambda sx, sw, sy: qarith.quantize_multiplier(sx * sw / sy)[1],
    "ch6-m0": lambda sx, sw, sy: qarith.quantize_multiplier(sx * sw / sy)[0],      # M from the decimal scales
    "ch6-requantize": lambda a, sx, sw, sy: int(qarith.requantize(
        np.int32([a]), *qarith.quantize_multiplier(sx * sw / sy), 0, "int16")[0]),
    "ch6-sqnr": lambda a, e: quant.sqnr(np.float64([a, -a, a, -a]), np.float64([a + e, -a + e, a - e, -a - e])),
    "ch6-channel-levels": lambda r: len(np.unique(quant.choose_qparams(
        w := np.stack([np.linspace(-1, 1, 1001), np.linspace(-r, r, 1001)]).astype(np.float32), "int8").quantize(w)[1])),
    "ch7-crossing-pool": lambda c, h: contract.partition(
        _gap_model(c, h), contract.ILLUSTRATIVE_NPU.without("GlobalAveragePool")).crossing_bytes,
    "ch7-reorder-bytes": lambda c, h, dtype: 2 * np.ascontiguousarray(np.zeros((1, c, h, h), dtype).transpose(0, 2, 3, 1)).nbytes,
    "ch7-one-request": lambda decode, infer: _pipeline_fps(decode, infer, 1),
    "ch7-two-requests": lambda decode, infer: _pipeline_fps(decode, infer, 2),
    "ch7-groupnorm-bytes": _groupnorm_intermediates,
    "ch8-agreement": _agreement,
    "ch8-roofline-layer": lambda f, b, p, w: 1e6 * f * 1e6 / _machine(p * 1e9, w * 1e9).attainable(f / b),
    "ch8-array-layer": lambda m, n, k, r, ghz, gbs: 1e6 * max(systolic.estimate(m, n, k, r, r, "ws").cycles / (ghz * 1e9),
                                                            accelerator.dram_bytes(accelerator.Layer("q", M=m, N=n, K=k)) / (gbs * 1e9)),
    "ch8-qdq-ratio": _qdq_ratio,
    "ch8-widen-macs": _widen,
    "pre-slice-size": lambda shape: np.zeros(shape)[1:3, :, ::2].size,
    "pre-twos-complement": lambda bits: int(np.array([bits], np.uint8).view(np.int8)[0]),
    "pre-int8-min": lambda n: int(np.iinfo(f"int{n}").min) if n >= 8 else -(1 << (n - 1)),
    "pre-hex": lambda byte: int(f"{byte:02x}", 16),
    "pre-mib": lambda n: n * 1024 * 1024,
    "pre-address-bits": lambda kib: (kib * 1024 - 1).bit_length(),
    "pre-largest-power": lambda n: max(2**i for i in range(20) if n % 2**i == 0),
    "pre-array-bytes": lambda shape: np.empty(shape, np.float32).nbytes,
    "pre-floor-division": lambda a, b: math.floor(a / b),
}

#: question id → independent computations of its other right answers (``also``), in order.
ALSO = {
    "ch6-m0": [lambda sx, sw, sy: qarith.quantize_multiplier(np.float32(sx) * np.float32(sw) / np.float32(sy))[0]],
}

NUMERIC = [q for q in bank.questions() if q.kind == "numeric"]
DIGITS = ["One", "Two", "Three", "Four"]


def test_every_numeric_question_has_a_reference():
    assert sorted(REFERENCES) == sorted(q.id for q in NUMERIC)
    assert sorted(ALSO) == sorted(q.id for q in NUMERIC if q.also)
    assert all(len(ALSO[q.id]) == len(q.also) for q in NUMERIC if q.also)


@pytest.mark.parametrize("q", NUMERIC, ids=lambda q: q.id)
def test_numeric_answer_recomputed(q):
    rng = np.random.default_rng(20260301)
    instances = [q.instance()] + [q.variant(rng) for _ in range(VARIANTS)]
    assert len({json.dumps(i.params, sort_keys=True) for i in instances}) > 1, f"{q.id}: draw gives other numbers"
    for inst in instances:
        want = float(REFERENCES[q.id](**inst.params))
        slack = max(inst.tolerance, 1e-9 * abs(want))
        assert abs(inst.answer - want) <= slack, f"{q.id} {inst.params}: bank {inst.answer}, reference {want}"
        others = [float(f(**inst.params)) for f in ALSO.get(q.id, [])]
        for value, _ in inst.also:              # every other right answer the bank gives is one the reference gives
            assert any(abs(value - o) <= slack for o in others), f"{q.id} {inst.params}: {value} not in {others}"
        for o in others:                        # and every one the reference gives is accepted
            assert abs(o - inst.answer) <= slack or any(abs(o - v) <= slack for v, _ in inst.also), \
                f"{q.id} {inst.params}: {o} is right but not accepted"
        assert "{" not in inst.text and "{" not in inst.solution, f"{q.id}: an unfilled placeholder"
        right = [inst.answer] + [v for v, _ in inst.also]
        for value, _ in inst.mistakes:
            assert all(abs(value - r) > inst.tolerance for r in right), f"{q.id}: a mistake inside the tolerance"
        if inst.tolerance:
            assert inst.tolerance < 0.01 * max(abs(inst.answer), 1), f"{q.id}: tolerance too loose"
        asked = re.search(r"\((One|Two|Three|Four) decimals?\.\)", inst.text)
        if asked:   # the answer rounded as asked is accepted, and the tolerance is just above half a unit of it
            unit = 10.0 ** -(DIGITS.index(asked.group(1)) + 1)
            assert abs(round(inst.answer, DIGITS.index(asked.group(1)) + 1) - inst.answer) < inst.tolerance - 1e-9, \
                f"{q.id} {inst.params}"
            assert inst.tolerance <= 0.6 * unit + 1e-12, f"{q.id}: tolerance {inst.tolerance} for a rounding to {unit}"
        else:       # no rounding asked: the answer is exact in a few decimals, and the tolerance no more than a float's
            assert abs(inst.answer * 1e4 - round(inst.answer * 1e4)) < 1e-6, f"{q.id} {inst.params}: {inst.answer}"
            assert inst.tolerance <= 1e-6 * max(abs(inst.answer), 1), f"{q.id}: tolerance {inst.tolerance}"


def test_the_chapter_examples_agree_with_the_bank():
    """Worked instances that restate a chapter's example, exercise or self-check give the chapter's numbers, computed
    here by the npukit function the chapter's own code calls on the chapter's data (no number is typed here)."""
    net = models.CameraNet.pretrained()
    rows = {r["layer"]: r for r in models.summary(net)}
    layers = {x.name: x for x in accelerator.cameranet_layers(net)}
    counts = {c.name: c for c in graphs.op_counts(net.to_onnx())}
    stem, b3 = layers["stem.conv"], layers["block3.pw"]
    ws = {df: systolic.estimate(stem.M, stem.N, stem.K, 16, 16, df) for df in ("ws", "os")}      # ex-ch5-cycles
    m0, n = qarith.quantize_multiplier(0.02 * 0.004 / 0.05)                                       # ex-ch6-multiplier
    m0_32, _ = qarith.quantize_multiplier(np.float32(0.02) * np.float32(0.004) / np.float32(0.05))
    b2 = rows["block2.dw"], rows["block2.pw"]                                                     # ex-ch0-block2
    dense = 9 * b2[0]["input"][1] * b2[1]["output"][1] * b2[1]["output"][2] * b2[1]["output"][3]
    array = capstone.NPU_ARRAY                                                                    # chapter 8's array
    e8 = systolic.estimate(b3.M, b3.N, b3.K, int(array["rows"]), int(array["cols"]), "ws")
    kib = 1024
    chapter = {
        "ch0-pointwise-macs": rows["block1.pw"]["macs"],
        "ch0-depthwise-macs": b2[0]["macs"],
        "ch0-pointwise-weights": b2[1]["params"],
        "ch0-separable-ratio": dense / (b2[0]["macs"] + b2[1]["macs"]),
        "ch1-offset": tensors.element_offsets(np.empty((8, 32, 32, 3), np.float16))[2, 5, 7, 1],   # ex-ch1-strides
        "ch2-im2col-bytes": np.ascontiguousarray(                                                  # ex-ch2-im2col
            layouts.im2col(np.zeros((1, 64, 56, 56), np.float32), 3, pad=1)).nbytes,
        "ch3-pointwise-macs": _conv_counts(64, 64, 56, 1, 1, 0).macs,                              # self-check 1
        "ch3-dw-intensity": counts["block2.dw"].intensity,                                         # ex-ch3-depthwise
        "ch3-ridge": _machine(140e9, 18e9).ridge,                                                  # ex-ch3-threads
        "ch3b-live-peak": rewrites.live_peak([(4 * kib, 0, 3), (8 * kib, 1, 2), (2 * kib, 2, 3),
                                              (8 * kib, 3, 4)]) / kib,                             # ex-ch3-peak
        "ch3b-fc-intensity": _gemm_counts(64, 128, 8, itemsize=1).intensity,                       # ex-ch3-fc-batch
        "ch4-conv-k": gemm.conv_as_gemm(128, 64, 28, 28, kh=3, kw=3)[2],                           # self-check 1
        "ch4-traffic-mnk": gemm.traffic(256, 256, 256, (64, 64, 64), "mnk", 4, line=64).total,     # ex-ch4-traffic
        "ch4-traffic-kmn-writes": gemm.traffic(256, 256, 256, (64, 64, 64), "kmn", 4, line=64).c_write,
        "ch5-ws-cycles": ws["ws"].cycles,
        "ch5-os-cycles": ws["os"].cycles,
        "ch5-ws-utilization": ws["ws"].utilization,
        "ch5-peak-tops": accelerator.peak_tops(64, 64, 1.2e9),                                     # ex-ch5-tops
        "ch5-depthwise-per-channel": 64 * systolic.estimate(16, 1, 9, 32, 32, "ws").cycles,       # ex-ch5-depthwise
        "ch6-quantize": quant.quantize(np.float32([0.75]), 0.5, 3)[0],                             # ex-ch6-hand
        "ch6-dequantize": quant.dequantize(np.uint8([9]), 0.5, 3)[0],
        "ch6-shift": n,
        "ch6-m0": m0,
        "ch6-requantize": qarith.requantize(np.int32([1000]), m0, n, 0, "uint8")[0],
        "ch7-crossing-pool": contract.partition(net.to_onnx(),
                                                contract.ILLUSTRATIVE_NPU.without("GlobalAveragePool")).crossing_bytes,
        "ch8-array-layer": 1e6 * max(e8.cycles / array["clock_hz"],
                                     accelerator.dram_bytes(b3) / array["dram_bandwidth"]),
    }
    for qid, value in chapter.items():
        assert bank.get(qid).instance().answer == pytest.approx(float(value), rel=1e-12), qid
    # the worked instances are the chapter's layers, and the float32 multiplier is the bank's other right answer
    assert bank.get("ch5-ws-cycles").params == dict(m=stem.M, n=stem.N, k=stem.K, r=16, c=16)
    assert bank.get("ch8-array-layer").params == dict(m=b3.M, n=b3.N, k=b3.K, r=int(array["rows"]),
                                                      ghz=array["clock_hz"] / 1e9, gbs=array["dram_bandwidth"] / 1e9)
    assert b3.inputs == b3.M * b3.K and array["rows"] == array["cols"]    # a 1×1 layer: A is its input tensor
    assert [v for v, _ in bank.get("ch6-m0").instance().also] == [m0_32]
    # SCALE-Sim's count (the last cycle's number) is a typical mistake, not the answer
    for qid, df in (("ch5-ws-cycles", "ws"), ("ch5-os-cycles", "os")):
        assert any(v == ws[df].last_cycle and "SCALE-Sim" in why for v, why in bank.get(qid).instance().mistakes)
    # the weight-stationary cycles of the worked instance, cycle by cycle in the simulator
    sim = systolic.simulate(np.ones((256, 27), int), np.ones((27, 16), int), 16, 16, "ws")
    assert sim.cycles == bank.get("ch5-ws-cycles").instance().answer


# ---------------------------------------------------------------- the GIFT export

def _blocks(text):
    return [b for b in text.split("\n\n") if b.strip() and not b.lstrip().startswith("$CATEGORY")
            and not all(line.startswith("//") for line in b.strip().splitlines())]


def _unescaped(block, char):
    return len(re.findall(r"(?<!\\)(?:\\\\)*" + re.escape(char), block.replace("\\\\", "")))


@pytest.mark.parametrize("seed", [None, 7])
def test_gift_follows_moodles_importer(seed):
    """The rules Moodle's qformat_gift applies: a blank line ends a question, the first unescaped { and } bound
    its answers, a numeric answer is a number, and categories come first."""
    text = bank.to_gift(bank.questions(), seed=seed)
    blocks = _blocks(text)
    assert len(blocks) == len(bank.questions())
    cats = re.findall(r"^\$CATEGORY: (.+)$", text, re.M)
    assert len(cats) == len(bank.UNITS) and all("/" in c and ":" not in c for c in cats)
    for block, q in zip(blocks, bank.questions()):
        body = "\n".join(line for line in block.splitlines() if not line.startswith("//"))
        assert body.startswith(f"::{q.id}::[markdown]"), q.id
        assert _unescaped(body, "{") == 1 and _unescaped(body, "}") == 1 and body.rstrip().endswith("}"), q.id
        answers = body[body.index("{", body.index("]")):]
        assert _unescaped(answers, "####") == 1, q.id
        if q.kind == "numeric":
            for m in re.finditer(r"^\t=(?:%0%)?([^:#]+):([^#]+)#", answers, re.M):
                float(m.group(1)), float(m.group(2))
                assert "e" not in m.group(1).lower(), f"{q.id}: a numeral Moodle's is_numeric reads plainly"
        if q.kind == "choice":
            assert len(re.findall(r"^\t=", answers, re.M)) == 1 and len(re.findall(r"^\t~", answers, re.M)) >= 2


def test_seeded_export_changes_the_numbers_only():
    plain, drawn = bank.to_gift(bank.questions("1")), bank.to_gift(bank.questions("1"), seed=3)
    assert plain != drawn and bank.to_gift(bank.questions("1"), seed=3) == drawn
    strip = lambda t: [b.split("[markdown]")[0] for b in _blocks(t)]  # noqa: E731
    assert strip(plain) == strip(drawn)


def test_escape_round_trip_of_reserved_characters():
    assert gift.escape("a = b: {c} ~d #e \\ f\ng") == "a \\= b\\: \\{c\\} \\~d \\#e \\\\ f\\ng"
    assert gift.number(8.0) == "8" and gift.number(0.1) == "0.1" and gift.number(1e-7) == "0.0000001"


def test_cli_writes_the_export(tmp_path, capsys):
    from npukit.teach.bank.__main__ import main
    out = tmp_path / "bank.gift.txt"
    assert main(["gift", "-o", str(out), "--units", "pre,1"]) == 0
    assert out.read_text(encoding="utf-8") == bank.to_gift(bank.questions("pre") + bank.questions("1"))
    assert main(["gift", "-o", str(out), "--units", "1, 1,1"]) == 0      # a unit named twice is written once
    assert out.read_text(encoding="utf-8") == bank.to_gift(bank.questions("1"))
    assert main(["counts"]) == 0 and "pre" in capsys.readouterr().out


@pytest.mark.parametrize("argv, option", [(["--units", "1,9"], "--units"), (["--units", ""], "--units"),
                                          (["--seed", "-2"], "--seed"), (["--seed", "1.5"], "--seed")])
def test_cli_names_a_bad_option(tmp_path, capsys, argv, option):
    """A bad --units or --seed is a usage error naming the option (exit status 2), not a traceback."""
    from npukit.teach.bank.__main__ import main
    with pytest.raises(SystemExit) as done:
        main(["gift", "-o", str(tmp_path / "x.txt"), *argv])
    err = capsys.readouterr().err
    assert done.value.code == 2 and option in err and "Traceback" not in err
    assert not (tmp_path / "x.txt").exists()


def test_essays_say_which_mark_to_set():
    """GIFT cannot carry a mark and Moodle imports every question with a mark of 1: each essay's comment says which
    mark to set (its rubric's total), and only essays say so."""
    for q in bank.questions():
        block = gift.question(q)
        says = f"set its default mark to {q.points}," in block
        assert says == (q.kind == "short"), q.id
        assert all(line.startswith("//") for line in block.splitlines()[:1 + (q.kind == "short")]), q.id
    assert gift.category("pre") == "Tensors on Silicon/Prerequisite diagnostic"


GIFT_PEGJS = os.environ.get("GIFT_PEGJS")


@pytest.mark.skipif(not GIFT_PEGJS, reason="make bank-check installs gift-pegjs and sets GIFT_PEGJS")
@pytest.mark.parametrize("seed", [None, 11])
def test_gift_parses_with_gift_pegjs(tmp_path, seed):
    """An independent GIFT parser (gift-pegjs, npm) reads every question back as what the bank holds."""
    path = tmp_path / "bank.gift.txt"
    path.write_text(bank.to_gift(bank.questions(), seed=seed), encoding="utf-8")
    script = ("const p = require(process.argv[1]); const fs = require('fs');"
              "process.stdout.write(JSON.stringify(p.parse(fs.readFileSync(process.argv[2], 'utf8'))));")
    done = subprocess.run(["node", "-e", script, str(Path(GIFT_PEGJS) / "gift-pegjs"), str(path)],
                          capture_output=True, text=True, check=True)
    parsed = json.loads(done.stdout)
    cats = [p["title"] for p in parsed if p["type"] == "Category"]
    assert cats == [gift.category(u) for u in bank.UNITS]
    got = {p["title"]: p for p in parsed if p["type"] != "Category"}
    assert list(got) == [q.id for q in bank.questions()]
    kinds = {"numeric": "Numerical", "choice": "MC", "short": "Essay"}
    import zlib
    for q in bank.questions():
        p = got[q.id]
        assert p["type"] == kinds[q.kind] and p["stem"]["format"] == "markdown", q.id
        assert p["globalFeedback"]["text"].strip(), q.id
        if q.kind == "numeric":
            rng = None if seed is None else np.random.default_rng([seed, zlib.crc32(q.id.encode())])
            inst = q.instance() if rng is None else q.variant(rng)
            assert p["stem"]["text"] == inst.text, q.id
            right = [c for c in p["choices"] if c["weight"] is None]      # full marks: the answer, then the others
            assert [c["text"]["number"] for c in right] == pytest.approx(
                [inst.answer] + [v for v, _ in inst.also], rel=1e-9, abs=1e-12), q.id
            assert all(c["text"]["range"] == pytest.approx(inst.tolerance, rel=1e-9, abs=1e-12) for c in right)
            assert [c["feedback"]["text"] for c in right[1:]] == [why for _, why in inst.also], q.id
            wrong = [c for c in p["choices"] if c["weight"] == 0]
            assert [c["text"]["number"] for c in wrong] == pytest.approx([v for v, _ in inst.mistakes])
            assert len(right) + len(wrong) == len(p["choices"]), q.id
        elif q.kind == "choice":
            assert p["stem"]["text"] == q.text
            assert [(c["text"]["text"], c["isCorrect"], c["feedback"]["text"]) for c in p["choices"]] == \
                   [(o.text, o.correct, o.feedback) for o in q.options], q.id
        else:
            assert p["stem"]["text"] == q.text and q.solution in p["globalFeedback"]["text"], q.id
            assert all(c in p["globalFeedback"]["text"] for _, c in q.rubric), q.id
