"""Lab 3's checkers under attack: typical wrong answers get a hint naming the slip, shortcuts fail.

``npukit.teach.graphs`` (conv MACs, attainable, fold BN, live peak) and
``npukit.teach.roofline`` (the ReLU prediction). Each test is a wrong or
cheating answer a student could hand in; see lab 3 (labs/03_graphs.ipynb).
"""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path

import numpy as np
import pytest
from support import FakeRounds, swapped

from npukit import teach
from npukit.teach.core import CheckFailed, NotAttempted

LAB = Path(__file__).parent.parent / "labs"


def _macs(x_shape, w_shape, stride, pad, dilation, group):
    (n, _, h, w), (c_out, c_in_g, kh, kw) = x_shape, w_shape
    ho = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    wo = (w + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    return n * c_out * ho * wo * c_in_g * kh * kw


@pytest.mark.parametrize("wrong, says", [
    (lambda *a: 2 * _macs(*a), "that is FLOPs"),
    (lambda x, w, s, p, d, g: _macs(x, w, 1, p, d, g), "stride 1"),
    (lambda x, w, s, p, d, g: _macs((1,) + tuple(x[1:]), w, s, p, d, g), "for one image"),
    (lambda x, w, s, p, d, g: _macs(x, w, s, 0, d, g), "without padding"),
    (lambda x, w, s, p, d, g: _macs(x, w, s, p, 1, g), "without dilation"),
])
def test_conv_macs_names_the_slip(wrong, says):
    with pytest.raises(CheckFailed, match=says):
        teach.check_conv_macs(wrong)


def test_conv_macs_hint_only_when_one_slip_fits():
    # with group = 2, ignoring the groups gives twice the count, exactly what counting FLOPs gives: no hint
    def twice_when_two_groups(x, w, s, p, d, g):
        return 2 * _macs(x, w, s, p, d, g) if g == 2 else _macs(x, w, s, p, d, g)

    with pytest.raises(CheckFailed, match=r", 2\)\.") as err:
        teach.check_conv_macs(twice_when_two_groups)
    assert "Hint" not in str(err.value)


def _fold(W, b, gamma, beta, mean, var, eps):
    s = gamma / np.sqrt(var + eps)
    return W * s[:, None, None, None], (b - mean) * s + beta


def _scale(gamma, var, eps):
    return gamma / np.sqrt(var + eps)


@pytest.mark.parametrize("wrong, says", [
    (lambda W, b, g, B, m, v, e: (_fold(W, b, g, B, m, v, e)[0], (-m) * _scale(g, v, e) + B), "leaves out the convolution's own bias"),
    (lambda W, b, g, B, m, v, e: (_fold(W, b, g, B, m, v, e)[0], b - m * _scale(g, v, e) + B), "bias b is not scaled"),
    (lambda W, b, g, B, m, v, e: _fold(W, b, g, B, m, v, 0.0), "leaves eps"),
    (lambda W, b, g, B, m, v, e: (W * (g / (v + e))[:, None, None, None], (b - m) * g / (v + e) + B), "divides by the variance"),
    (lambda W, b, g, B, m, v, e: (W * _scale(g, v, e)[None, :, None, None], (b - m) * _scale(g, v, e) + B), "along axis 1"),
    (lambda W, b, g, B, m, v, e: (W * g[:, None, None, None], (b - m) * _scale(g, v, e) + B), "W_folded is wrong"),
])
def test_fold_bn_names_the_slip(wrong, says):
    with pytest.raises(CheckFailed, match=says) as err:
        teach.check_fold_bn(wrong)
    assert "sqrt(var + eps)" not in str(err.value)   # the hint does not hand over the formula


def test_fold_bn_accepts_float64_and_a_list():
    teach.check_fold_bn(lambda *a: [x.astype(np.float64) for x in _fold(*a)])


def _peak(tensors):
    steps = {s for _, first, last in tensors for s in (first, last)}
    return max((sum(z for z, f, l in tensors if f <= s <= l) for s in steps), default=0)


@pytest.mark.parametrize("wrong, says", [
    (lambda ts: sum(z for z, _, _ in ts), "added up"),
    (lambda ts: max((sum(z for z, f, l in ts if f <= s < l) for s in range(50)), default=0), "both ends are included"),
])
def test_live_peak_names_the_slip(wrong, says):
    with pytest.raises(CheckFailed, match=says):
        teach.check_live_peak(wrong)


def test_live_peak_no_hint_when_two_slips_fit():
    # on the lab's own example the largest tensor (100) is also the peak with `last` excluded: no hint
    with pytest.raises(CheckFailed) as err:
        teach.check_live_peak(lambda ts: max((z for z, _, _ in ts), default=0))
    assert "Hint" not in str(err.value)


# ---- the ReLU prediction ----------------------------------------------------------------------------

KW = {"peak_gflops": 150.0, "bandwidth_gbs": 24.0}   # the slanted roof: 3 GFLOP/s; with write-allocate, 2


def _kernels(ratio, bursts=None):
    """The check's copy and ReLU, faked: the ReLU takes ``ratio`` times the copy's time (one call a round)."""
    def make(nbytes, threads, pool):
        fake = FakeRounds({"copy": 0.01, "ReLU": ratio * 0.01}, bursts={"ReLU": bursts} if bursts else None)
        return fake.fns, fake.clock
    return make


@pytest.fixture
def relu_rounds():
    """The check's rounds as this machine's CPU time measures them: the ReLU takes 1.5 times the copy's time."""
    with swapped(teach.roofline, "_kernels", _kernels(1.5)):
        yield


def test_relu_prediction_is_read_by_value_not_through_its_methods(relu_rounds):
    import __main__

    class Lazy(float):   # a "prediction" that looks up the measurement when the check reads it
        def __float__(self):
            return float(getattr(__main__, "measured_relu_gflops", 2.1))

    with pytest.raises(CheckFailed, match="you predicted 1e\\+03"):
        teach.check_relu_prediction(Lazy(1000.0), 2.1, **KW)


def test_relu_prediction_accepts_numpy_scalars(capsys, relu_rounds):
    teach.check_relu_prediction(np.float32(2.0), 2.1, **KW)
    teach.check_relu_prediction(np.int64(2), 2.1, **KW)
    assert capsys.readouterr().out.count("✓") == 2
    with pytest.raises(CheckFailed, match="must be a number"):
        teach.check_relu_prediction(np.array([2.5]), 2.1, **KW)


def test_relu_prediction_in_flop_per_second_gets_a_units_hint(relu_rounds):
    with pytest.raises(CheckFailed, match="looks like FLOP/s"):
        teach.check_relu_prediction(2.0e9, 2.1, **KW)


def test_relu_check_times_the_relu_itself_so_a_faked_measurement_does_not_count(capsys, relu_rounds):
    # an earlier cell rebinds `roofline` so the lab's measurement cell reports the prediction back
    with pytest.raises(CheckFailed, match="timed again by this check") as err:
        teach.check_relu_prediction(1000.0, 1000.0, **KW)
    assert "the cell above measured 1e+03 GFLOP/s" in str(err.value)
    teach.check_relu_prediction(2.0, 0.9, **KW)   # a right prediction passes, whatever the lab's cell said
    assert "✓" in capsys.readouterr().out


def test_relu_check_times_with_clocks_taken_at_import(monkeypatch):
    """A notebook that stops the clocks after npukit.teach was imported changes nothing the check times with."""
    from npukit.teach import retime

    real = retime.THREAD_TIME, retime.PROCESS_TIME
    monkeypatch.setattr(time, "thread_time", lambda: 0.0)
    monkeypatch.setattr(time, "process_time", lambda: 0.0)
    assert teach.roofline._kernels(2**16, 1, None)[1] is real[0]
    assert teach.roofline._kernels(2**16, 2, None)[1] is real[1]
    assert real[0]() > 0 and real[1]() > 0


def test_relu_check_kernels_are_the_lab_s():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        fns, _ = teach.roofline._kernels(2**16, 2, pool)
        assert list(fns) == ["copy", "ReLU"]
        for f in fns.values():
            f()


def test_relu_check_arguments(relu_rounds):
    with pytest.raises(TypeError, match="both nbytes and threads"):
        teach.check_relu_prediction(2.0, 2.0, **KW, nbytes=2**22)
    with pytest.raises(NotAttempted):   # not attempted: answered at once, before any timing
        teach.check_relu_prediction(..., 2.0, **KW, nbytes=2**40, threads=1)
    with pytest.raises(ValueError, match="nbytes"):
        teach.check_relu_prediction(2.0, 2.0, **KW, nbytes=16, threads=1)


def test_relu_rounds_too_noisy_ask_for_a_rerun():
    from npukit.teach.retime import TooNoisy

    with swapped(teach.roofline, "_kernels", _kernels(1.5, (0.5, 2))):
        with pytest.raises(TooNoisy, match="too noisy to judge"):
            teach.check_relu_prediction(2.0, 2.0, **KW)
        with pytest.raises(CheckFailed, match="flat roof"):        # beyond every ratio the rounds allow
            teach.check_relu_prediction(150.0, 2.0, **KW)


# ---- the notebook -------------------------------------------------------------------------------------


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def test_student_solution_cells_only_define():
    """A solution cell holds definitions only, so an unfinished exercise fails in its check cell, not before."""
    for cell in _cells(LAB / "student" / "03_graphs.ipynb"):
        if "solution" not in cell["metadata"].get("tags", []):
            continue
        for node in ast.parse("".join(cell["source"])).body:
            assert isinstance(node, (ast.FunctionDef, ast.Import, ast.ImportFrom, ast.Assign)), ast.dump(node)[:80]


def test_relu_check_cell_has_the_check_time_the_relu():
    (src,) = ["".join(c["source"]) for c in _cells(LAB / "03_graphs.ipynb")
              if c["metadata"].get("nbgrader", {}).get("grade_id") == "check3-predict-relu"]
    assert "nbytes=machine.copy_bytes" in src and "threads=machine.threads" in src
