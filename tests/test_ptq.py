"""Tests of npukit.ptq: observers against NumPy, calibration and the QDQ model against onnx.checker."""

from __future__ import annotations

import numpy as np
import pytest

from npukit import ptq, quant

def test_observer_accumulates_like_one_batch():
    rng = np.random.default_rng(1)
    batches = [(rng.standard_normal(1000) * (k + 1)).astype(np.float32) for k in range(4)]
    whole = np.concatenate(batches)
    one, many = ptq.Observer("minmax"), ptq.Observer("minmax")
    one.update(whole)
    for b in batches:
        many.update(b)
    assert one.qparams("int8").scale == many.qparams("int8").scale
    assert many.qparams("uint8").scale == quant.choose_qparams(whole, "uint8", False).scale
    h1, h2 = ptq.Observer("percentile"), ptq.Observer("percentile")
    h1.update(whole)
    for b in batches:                     # growing range: bins merge as the radius doubles
        h2.update(b)
    assert h1.radius == h2.radius and np.array_equal(h1.hist, h2.hist)
    p = h2.qparams("uint8", symmetric=False)
    top = float(p.scale) * (255 - int(p.zero_point))
    assert np.percentile(whole, 99.99) <= top + 2 * h2.radius / h2.bins


@pytest.mark.parametrize("dtype", ["uint8", "uint4"])
def test_mse_observer_finds_the_clip_of_the_data_on_its_grid(dtype):
    """The histogram observer's MSE clip is the data's MSE clip (quant.choose_qparams), to within a bin or two."""
    rng = np.random.default_rng(4)
    x = np.maximum(rng.standard_normal(40000) * rng.exponential(1.0, 40000), 0).astype(np.float32)
    obs = ptq.Observer("mse").update(x[:20000]).update(x[20000:])
    got, want = obs.qparams(dtype, symmetric=False), quant.choose_qparams(x, dtype, False, method="mse")
    top = {k: float(p.scale) * quant.qrange(dtype)[1] for k, p in (("got", got), ("want", want))}
    assert abs(top["got"] - top["want"]) < 3 * 2 * obs.radius / obs.bins + 0.01 * top["want"]
    assert top["got"] < float(x.max())                       # it clips


def test_observer_refuses_empty_and_nan():
    with pytest.raises(ValueError, match="no data"):
        ptq.Observer().qparams()
    with pytest.raises(ValueError, match="finite"):
        ptq.Observer().update(np.float32([np.nan]))
    with pytest.raises(ValueError, match="empty"):
        quant.choose_qparams(np.zeros(0, np.float32))


# ---- calibration and the QDQ model ---------------------------------------------------------------


@pytest.fixture(scope="module")
def cameranet():
    from npukit import rewrites
    from npukit.models import CameraNet

    net = CameraNet.pretrained()
    return net, rewrites.fold_batchnorm(net.to_onnx())


def test_float_forward_matches_cameranet(cameranet):
    from npukit.data import shapes_dataset

    net, folded = cameranet
    images, _ = shapes_dataset(4, seed=2)
    logits = ptq.float_forward(folded, images)["logits"]
    assert np.allclose(logits, net(images), atol=1e-4)


def test_a_fixed_quantizer_is_written_as_given_or_refused(cameranet):
    """fixed= is stored as a uint8 per-tensor pair: what is accepted is what the file holds; the rest is refused."""
    from onnx import numpy_helper

    from npukit import quant
    from npukit.data import shapes_dataset

    _, folded = cameranet
    cal = shapes_dataset(8, seed=0)[0]
    given = quant.QParams(np.float32(0.05), np.int64(7), "uint8")
    stored = {t.name: numpy_helper.to_array(t) for t in ptq.to_qdq(folded, cal, fixed={"stem.relu": given})
              .graph.initializer}
    assert stored["stem.relu.scale"] == np.float32(0.05) and stored["stem.relu.zero_point"] == 7
    assert stored["stem.relu.zero_point"].dtype == np.uint8
    for bad in (quant.QParams(np.float32(0.05), np.int64(-100), "int8"),       # stored as uint8: 156
                quant.QParams(np.float32(0.05), np.int64(3), "uint4"),
                quant.QParams(np.float32([0.05, 0.1]), np.int64([0, 0]), "uint8", axis=1)):
        with pytest.raises(ValueError, match=r"fixed\['stem\.relu'\]"):
            ptq.to_qdq(folded, cal, fixed={"stem.relu": bad})
    with pytest.raises(ValueError, match="zero_point"):    # a uint8 zero point that would wrap (300 -> 44) is no QParams
        quant.QParams(np.float32(0.05), np.int64(300), "uint8")


def test_to_qdq_refuses_unfolded_models_and_empty_data(cameranet):
    from npukit.data import shapes_dataset
    from npukit.models import CameraNet

    _, folded = cameranet
    with pytest.raises(ValueError, match="fold"):
        ptq.to_qdq(CameraNet.pretrained().to_onnx(), shapes_dataset(2, seed=0)[0])
    with pytest.raises(ValueError, match="at least one"):
        ptq.to_qdq(folded, np.zeros((0, 3, 32, 32), np.float32))
    with pytest.raises(ValueError, match="keep_float"):
        ptq.to_qdq(folded, shapes_dataset(2, seed=0)[0], keep_float=["nope"])


# ---- cases the mutation test of issue 24 showed untested ------------------------------------------


def test_minmax_observer_keeps_the_extremes_of_earlier_batches():
    obs = ptq.Observer("minmax")
    obs.update(np.float32([-5.0, 1.0])).update(np.float32([0.0, 2.0]))   # the minimum came first
    assert (obs.lo, obs.hi) == (-5.0, 2.0)
    p = obs.qparams("uint8", symmetric=False)
    assert np.isclose(float(p.scale), 7.0 / 255) and int(p.zero_point) == round(5 / (7 / 255))


def test_histogram_holds_every_value_in_its_range():
    """The histogram covers [-R, R): a batch whose largest |x| is a power of two (here 4) needs R = 8."""
    x = np.float32([-4.0, -1.0, 0.5, 4.0])
    obs = ptq.Observer("percentile").update(x)
    assert obs.radius > 4.0
    edges = -obs.radius + 2 * obs.radius / obs.bins * np.arange(obs.bins + 1)
    brute = [int(np.sum((x >= lo) & (x < hi))) for lo, hi in zip(edges[:-1], edges[1:])]  # half-open bins
    assert brute == obs.hist.tolist() and sum(brute) == x.size


def test_percentile_range_keeps_the_lower_quantile_sample():
    """The range's lower end is the lower edge of the bin holding the (100 − p)-th percentile sample."""
    x = -np.arange(1000, 2000, dtype=np.float32)           # -1999 … -1000; the range widens to 0 at the top
    p = ptq.Observer("percentile", percentile=90).update(x).qparams("uint8", symmetric=False)
    lo = -255 * float(p.scale)                              # zero point 255: [lo, 0] onto [0, 255]
    quantile_sample = np.sort(x)[100 - 1]                   # 10 % of 1,000 values lie at or below it: -1900
    assert lo <= quantile_sample + 1e-3
    assert lo > quantile_sample - 2 * 2048 / 2048           # within one bin (width 2) of it
