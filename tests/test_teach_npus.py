"""Lab 9's checkers, attacked the way a student would.

* right answers pass;
* each typical wrong answer fails, with a hint that names it: float counted as
  FP32, activations counted as compulsory bytes, a whole embedding table read,
  w8a16's activations as 8-bit; a MAC read as one operation, the bandwidth
  left out, the two roofline times added, milliseconds for seconds; for the
  prediction against the published measurement, peak TOPS alone, a MAC read
  as one operation and the bandwidth left out; classifier-free guidance
  forgotten, the VAE run at every step (with the empty prompt's encoding
  cached or not: both are accepted);
* npukit.npus's own functions are refused;
* the prediction's efficiency is a rule applied to the other models (never a
  number, which could be read off the target's row), and every reasonable
  rule passes within the tolerance;
* what decides the prediction cannot be changed from the notebook: a forged
  table object or DEVICES entry changes nothing, an edited table file is
  refused;
* NumPy's numbers are answers.
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from npukit import npus, teach
from npukit.teach.core import CheckFailed, NotAttempted

BYTES = {"float": (2, 2), "w8a8": (1, 1), "w8a16": (1, 2)}


# ---- answers written here -------------------------------------------------------------------


def compulsory(counts, io, precision):
    wb, ab = BYTES[precision]
    return sum(c.act_bytes_out if c.op_type == "Gather" else c.param_bytes for c in counts) * wb + io * ab


def roofline(macs, nbytes, peak, bw):
    c, m = 2 * macs / (peak * 1e12), nbytes / (bw * 1e9)
    return (c, "compute") if c >= m else (m, "memory")


def predict(macs, nbytes, peak, bw, eff):
    return max(2 * macs / (eff * peak * 1e12), nbytes / (bw * 1e9))


def per_image(te, u, v, n, g):
    return te + (2 if g else 1) * n * u + v


def _fails(check, *args, match, **kwargs):
    with pytest.raises(CheckFailed, match=match):
        check(*args, **kwargs)


# ---- exercise 1 ------------------------------------------------------------------------------


def test_compulsory_bytes_reference_passes(capsys):
    teach.check_compulsory_bytes(compulsory)
    assert "✓ compulsory bytes: 30 fresh cases" in capsys.readouterr().out


@pytest.mark.parametrize("wrong,hint", [
    (lambda c, io, p: compulsory(c, io, p) * (2 if p == "float" else 1), "FP16"),
    (lambda c, io, p: compulsory(c, 0, p) + sum(x.act_bytes_in + x.act_bytes_out for x in c) * BYTES[p][1],
     "activations between layers"),
    (lambda c, io, p: sum(x.param_bytes for x in c) * BYTES[p][0] + io * BYTES[p][1], "Gather"),
    (lambda c, io, p: compulsory(c, io, "w8a8") if p == "w8a16" else compulsory(c, io, p), "16-bit activations"),
    (lambda c, io, p: compulsory(c, 0, p), "input and output"),
])
def test_compulsory_bytes_mistakes_fail(wrong, hint):
    _fails(teach.check_compulsory_bytes, wrong, match=hint)


def test_the_library_is_refused():
    def via_npus(counts, io, precision):
        npus.element_bytes(precision)
        return compulsory(counts, io, precision)

    _fails(teach.check_compulsory_bytes, via_npus, match="npukit")


# ---- exercise 2 ------------------------------------------------------------------------------


def test_roofline_reference_passes(capsys):
    teach.check_roofline_seconds(roofline)
    assert "42 fresh cases" in capsys.readouterr().out


@pytest.mark.parametrize("wrong,hint", [
    (lambda m, b, p, w: roofline(m / 2, b, p, w), "two operations"),
    (lambda m, b, p, w: (2 * m / (p * 1e12), "compute"), "larger of the two"),
    (lambda m, b, p, w: (2 * m / (p * 1e12) + b / (w * 1e9), "compute"), "not their sum"),
    (lambda m, b, p, w: (roofline(m, b, p, w)[0] * 1e3, roofline(m, b, p, w)[1]), "milliseconds"),
    (lambda m, b, p, w: (roofline(m, b, p, w)[0], "compute"), "bound"),
])
def test_roofline_mistakes_fail(wrong, hint):
    _fails(teach.check_roofline_seconds, wrong, match=hint)


# ---- exercise 3: the prediction against the published measurement -----------------------------------

XE = "Snapdragon X Elite CRD"
READ_BACK = 2 * npus.work("resnet50").macs / (45e12 * 0.843e-3)   # the efficiency the target's own row gives


def near(others, gmacs):
    """The reference rule: the geometric mean of the models within 3× of the target's work."""
    logs = [math.log(f) for g, f in others.values() if 1 / 3 <= g / gmacs <= 3]
    return math.exp(sum(logs) / len(logs))


RULES = {
    "geometric mean within 3x": near,
    "median of the large models": lambda o, g: statistics.median(f for m, f in o.values() if m > 1),
    "mean of the large models": lambda o, g: statistics.mean(f for m, f in o.values() if m > 1),
    "the nearest in MACs": lambda o, g: min(o.values(), key=lambda v: abs(math.log(v[0] / g)))[1],
}


@pytest.mark.parametrize("rule", list(RULES))
def test_every_reasonable_rule_passes(rule, capsys):
    teach.check_npu_prediction(predict, RULES[rule])
    out = capsys.readouterr().out
    assert "AI Hub published 0.843 ms" in out and "follows the other models" in out


def test_the_rule_never_sees_the_target():
    seen = []

    def spy(others, gmacs):
        seen.append(dict(others))
        return near(others, gmacs)

    teach.check_npu_prediction(predict, spy)
    assert {"mobilenet_v2", "squeezenet1_1", "resnet18", "resnet101", "convnext_tiny"} in [set(o) for o in seen]
    # the target's own fraction (or a scaled copy of it) is passed in no call, the leave-one-out ones included
    fractions = [f for o in seen for _, f in o.values()]
    assert not any(math.isclose(f, READ_BACK * s, rel_tol=1e-9) for f in fractions for s in (1, 0.5, 0.7, 1.4))
    assert len(seen) > 8 + 10   # the probes of the target, then the held-out targets




@pytest.mark.parametrize("rule", [lambda o, g: 0.2, lambda o, g: 1.0, lambda o, g: READ_BACK])
def test_a_number_instead_of_a_rule_fails(rule):
    _fails(teach.check_npu_prediction, predict, rule, match="does not follow the other models")


@pytest.mark.parametrize("wrong,hint", [
    (lambda m, b, p, w, e: 2 * m / (p * 1e12), "peak TOPS alone"),          # no efficiency, no bandwidth
    (lambda m, b, p, w, e: predict(m / 2, b, p, w, e), "two operations"),   # a MAC read as one operation
    (lambda m, b, p, w, e: 2 * m / (e * p * 1e12), "bandwidth is left out"),
])
def test_prediction_mistakes_fail(wrong, hint):
    _fails(teach.check_npu_prediction, wrong, near, match=hint)


def test_a_rule_that_picks_the_small_models_misses():
    """Taking every other model's fraction, small ones included, predicts too slow a ResNet-50 on some devices."""
    lowest = lambda o, g: min(f for _, f in o.values())  # noqa: E731
    _fails(teach.check_npu_prediction, predict, lowest, match="beyond the 2× allowed")


def test_peak_alone_is_beyond_the_tolerance_on_every_published_run():
    """Against the measurement itself, peak TOPS alone is off by more than the factor the check allows."""
    t = npus.table()
    for d in ("Snapdragon X Elite CRD", "Snapdragon X2 Elite CRD"):
        for m in t.select(device=d, precision="w8a8", npu_only=True):
            ideal = 2 * npus.work(m.name).macs / (npus.DEVICES[d].peak_tops * 1e12)
            assert m.ms / 1e3 / ideal > 2.0, m


def test_a_special_case_for_the_target_fails():
    """A function right on every fresh case that returns the published time for ResNet-50 alone."""
    published = npus.table().fastest("resnet50", XE, "w8a8").ms / 1e3
    target_macs = npus.work("resnet50").macs

    def sneaky(macs, nbytes, peak, bw, eff):
        return published if macs == target_macs else predict(macs, nbytes, peak, bw, eff)

    _fails(teach.check_npu_prediction, sneaky, lambda o, g: near(o, g) / 4, match="the same way for every model")


def test_bad_efficiencies_and_copies_are_refused():
    for value in (0, 1.5, "0.2", True, float("nan")):
        _fails(teach.check_npu_prediction, predict, lambda o, g, v=value: v, match="efficiency_from must return")
    published = npus.table().fastest("resnet50", XE, "w8a8").ms / 1e3
    _fails(teach.check_npu_prediction, lambda *a: published, near, match="fresh|formula")


def test_not_attempted():
    def todo(*args):
        raise NotImplementedError()

    with pytest.raises(NotAttempted):
        teach.check_roofline_seconds(todo)
    for unset in (None, ..., todo):
        with pytest.raises(NotAttempted):
            teach.check_npu_prediction(predict, unset)
    with pytest.raises(NotAttempted):
        teach.check_npu_prediction(todo, near)


def test_the_checkers_copies_are_the_librarys():
    from npukit.teach import npus as tn

    assert tn._DEVICES == tuple((d.name, d.peak_tops, d.bandwidth_gbs) for d in npus.DEVICES.values())
    for name, macs, weights, io in tn._WORK:
        w = npus.work(name)
        assert (w.macs, w.weights, w.io) == (macs, weights, io)
    import hashlib

    assert hashlib.sha256(tn._TABLE.read_bytes()).hexdigest() == tn._TABLE_SHA256
    t = npus.table()
    for (name, device, precision), ms in tn._published().items():
        assert t.fastest(name, device, precision).ms == ms


def test_a_forged_table_and_forged_devices_change_nothing(capsys):
    """The review's forged submission: the table's cached object and npus.DEVICES edited from the notebook."""
    import dataclasses

    t = npus.table()
    saved, device = t.measurements, npus.DEVICES[XE]
    try:
        t.measurements = tuple(dataclasses.replace(m, ms=0.2) if (m.name, m.device) == ("resnet50", XE) else m
                               for m in t.measurements)
        npus.DEVICES[XE] = dataclasses.replace(device, peak_tops=1000.0)
        _fails(teach.check_npu_prediction, predict, lambda o, g: 1.0, match="does not follow")
        _fails(teach.check_npu_prediction, lambda m, b, p, w, e: 2 * m / (p * 1e12), near, match="peak TOPS alone")
        teach.check_npu_prediction(predict, near)
        assert "AI Hub published 0.843 ms" in capsys.readouterr().out
    finally:
        t.measurements, npus.DEVICES[XE] = saved, device


def test_an_edited_table_file_is_refused(tmp_path, monkeypatch):
    from npukit.teach import npus as tn

    forged = tmp_path / "qai_hub_models.json"
    forged.write_bytes(tn._TABLE.read_bytes().replace(b'0.843', b'0.200'))
    monkeypatch.setattr(tn, "_TABLE", forged)
    with pytest.raises(CheckFailed, match="SHA-256 differs|was replaced"):
        teach.check_npu_prediction(predict, near)
    with pytest.raises(CheckFailed, match="SHA-256 differs"):
        tn.check_npu_prediction(predict, near)


# ---- exercise 4 ------------------------------------------------------------------------------------


def test_seconds_per_image_passes_with_or_without_the_cache(capsys):
    teach.check_seconds_per_image(per_image)                                              # cached: one encoding
    teach.check_seconds_per_image(lambda te, u, v, n, g: (2 if g else 1) * (te + n * u) + v)   # two with guidance
    assert capsys.readouterr().out.count("30 fresh cases") == 2


@pytest.mark.parametrize("wrong,hint", [
    (lambda te, u, v, n, g: te + n * u + v, "twice"),
    (lambda te, u, v, n, g: 2 * te + n * u + v, "twice|no empty prompt"),
    (lambda te, u, v, n, g: per_image(te, u, v, n, g) + (n - 1) * v, "once per image"),
    (lambda te, u, v, n, g: n * te + (2 if g else 1) * n * u + v, "not at every step"),
])
def test_seconds_per_image_mistakes_fail(wrong, hint):
    _fails(teach.check_seconds_per_image, wrong, match=hint)


def test_numpy_numbers_are_answers():
    teach.check_compulsory_bytes(lambda c, io, p: np.int64(compulsory(c, io, p)))
    teach.check_roofline_seconds(lambda m, b, p, w: (np.float64(roofline(m, b, p, w)[0]), roofline(m, b, p, w)[1]))
    teach.check_npu_prediction(lambda *a: np.float64(predict(*a)), lambda o, g: np.float64(near(o, g)))
    teach.check_seconds_per_image(lambda *a: np.float64(per_image(*a)))


def _counting():
    calls = []

    def rule(others, gmacs):   # the second review's forgery: the answer on the first call, half of it after
        calls.append(1)
        return 0.2156 if len(calls) == 1 else 0.1078
    return rule


@pytest.mark.parametrize("rule", [
    _counting(),
    lambda o, g: 0.2156 if o["resnet101"][1] > 0.2 else 0.1078,      # tells the halved call from the data
    lambda o, g: READ_BACK * min(f for _, f in o.values()) / 0.0294,   # scales; fitted to the target
], ids=["counts its calls", "detects the probe", "tuned to the target"])
def test_the_second_reviews_forgeries_fail(rule):
    _fails(teach.check_npu_prediction, predict, rule, match="does not follow the other models|leave-one-out")


def test_a_tie_is_compute():
    """The second review: the tie rule was never exercised ('>' passed where '>=' is the rule)."""
    def strict(m, b, p, w):
        c, mem = 2 * m / (p * 1e12), b / (w * 1e9)
        return (c, "compute") if c > mem else (mem, "memory")
    _fails(teach.check_roofline_seconds, strict, match="compute")
