"""Lab 9's checkers, attacked the way a student would.

* right answers pass;
* each typical wrong answer fails, with a hint that names it: float counted as
  FP32, activations counted as compulsory bytes, a whole embedding table read,
  w8a16's activations as 8-bit; a MAC read as one operation, the bandwidth
  left out, the two roofline times added, milliseconds for seconds; for the
  prediction against the published measurement, peak TOPS alone, a MAC read
  as one operation and the bandwidth left out; classifier-free guidance
  forgotten, the VAE run at every step;
* npukit.npus's own functions are refused;
* the prediction's tolerance is what the published data allow: the reference
  reasoning with any efficiency the chapter's other models suggest passes.
"""

from __future__ import annotations

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
    k = 2 if g else 1
    return k * te + k * n * u + v


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


def test_not_attempted():
    def todo(*args):
        raise NotImplementedError()

    with pytest.raises(NotAttempted):
        teach.check_roofline_seconds(todo)
    for unset in (None, ...):                      # the student edition's my_efficiency = ...
        with pytest.raises(NotAttempted):
            teach.check_npu_prediction(predict, unset)
    with pytest.raises(NotAttempted):
        teach.check_npu_prediction(todo, 0.2)


# ---- exercise 2 ------------------------------------------------------------------------------


def test_roofline_reference_passes(capsys):
    teach.check_roofline_seconds(roofline)
    assert "40 fresh cases" in capsys.readouterr().out


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


def _fractions(device, precision):
    t = npus.table()
    return {n: npus.compare(t.fastest(n, device, precision)).fraction
            for n in ("resnet18", "resnet101")}


def test_reference_passes_with_every_efficiency_the_other_models_suggest(capsys):
    """The learner states an efficiency from the ResNets on either side of the target: either one passes."""
    for eff in _fractions("Snapdragon X Elite CRD", "w8a8").values():
        teach.check_npu_prediction(predict, eff)
    assert "published 0.843 ms" in capsys.readouterr().out


@pytest.mark.parametrize("wrong,hint", [
    (lambda m, b, p, w, e: 2 * m / (p * 1e12), "peak TOPS alone"),          # no efficiency, no bandwidth
    (lambda m, b, p, w, e: predict(m / 2, b, p, w, e), "two operations"),   # a MAC read as one operation
    (lambda m, b, p, w, e: 2 * m / (e * p * 1e12), "bandwidth is left out"),
])
def test_prediction_mistakes_fail(wrong, hint):
    for eff in _fractions("Snapdragon X Elite CRD", "w8a8").values():
        _fails(teach.check_npu_prediction, wrong, eff, match=hint)


def test_peak_alone_is_beyond_the_tolerance_on_every_published_run():
    """Against the measurement itself, peak TOPS alone is off by more than the factor the check allows."""
    t = npus.table()
    for d in npus.DEVICES:
        if npus.DEVICES[d].peak_tops is None:
            continue
        for m in t.select(device=d, precision="w8a8", npu_only=True):
            ideal = 2 * npus.work(m.name).macs / (npus.DEVICES[d].peak_tops * 1e12)
            assert m.ms / 1e3 / ideal > 2.0, m


def test_a_special_case_for_the_target_fails():
    """A function right on every fresh case that returns the published time for ResNet-50 alone."""
    published = npus.table().fastest("resnet50", "Snapdragon X Elite CRD", "w8a8").ms / 1e3
    target_macs = npus.work("resnet50").macs

    def sneaky(macs, nbytes, peak, bw, eff):
        return published if macs == target_macs else predict(macs, nbytes, peak, bw, eff)

    _fails(teach.check_npu_prediction, sneaky, 0.05, match="the same way for every model")


def test_prediction_refuses_bad_efficiencies_and_copies():
    for eff in (0, 1.5, "0.2", True):
        _fails(teach.check_npu_prediction, predict, eff, match="efficiency must be")
    published = npus.table().fastest("resnet50", "Snapdragon X Elite CRD", "w8a8").ms / 1e3
    _fails(teach.check_npu_prediction, lambda *a: published, 0.25, match="fresh|formula")


# ---- exercise 4 ------------------------------------------------------------------------------------


def test_seconds_per_image_reference_passes(capsys):
    teach.check_seconds_per_image(per_image)
    assert "30 fresh cases" in capsys.readouterr().out


@pytest.mark.parametrize("wrong,hint", [
    (lambda te, u, v, n, g: te + n * u + v, "twice"),
    (lambda te, u, v, n, g: per_image(te, u, v, n, g) + (n - 1) * v, "once per image"),
    (lambda te, u, v, n, g: (2 if g else 1) * n * (te + u) + v, "once per prompt"),
])
def test_seconds_per_image_mistakes_fail(wrong, hint):
    _fails(teach.check_seconds_per_image, wrong, match=hint)
