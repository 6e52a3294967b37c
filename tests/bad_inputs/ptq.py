"""Bad inputs for npukit.ptq."""

import numpy as np
from badinput import bad, cyclic, dangling

from npukit import ptq, quant, rewrites
from npukit.models import CameraNet

FOLDED = rewrites.fold_batchnorm(CameraNet.pretrained().to_onnx())
CAL = np.zeros((2, 3, 32, 32), np.float32)

CASES = [
    bad(ptq.Observer, "entropy", names="method"),
    bad(ptq.Observer, bins=65, names="bins"),
    bad(ptq.Observer, percentile=101, names="percentile"),
    bad(ptq.Observer().update, np.float32([np.inf]), names="finite"),
    bad(ptq.Observer().update, np.zeros(0, np.float32), names="empty"),
    bad(ptq.Observer().qparams, names="no data"),
    bad(ptq.calibrate, "model.onnx", CAL, exc=TypeError, names="model"),
    bad(ptq.calibrate, FOLDED, np.zeros((0, 3, 32, 32), np.float32), names="at least one"),
    bad(ptq.calibrate, FOLDED, np.zeros((2, 3, 32, 32)), exc=TypeError, names="calibration_data"),
    bad(ptq.to_qdq, FOLDED, CAL, keep_float=["nope"], names="keep_float"),
    bad(ptq.to_qdq, FOLDED, CAL, per_channel="yes", exc=TypeError, names="per_channel"),
    bad(ptq.to_qdq, FOLDED, CAL, method="entropy", names="method"),
    bad(ptq.numbers, None, exc=TypeError, names="ctx"),
    bad(ptq.Observer().qparams, "int3", names="dtype"),
    bad(ptq.Observer().update(np.float32([1.0])).qparams, symmetric="no", exc=TypeError, names="symmetric"),
    bad(ptq.Observer().update, np.int8([1]), exc=TypeError, names="x"),
    bad(ptq.calibrate, FOLDED, CAL, batch=0, names="batch"),
    bad(ptq.calibrate, FOLDED, np.full((2, 3, 32, 32), np.nan, np.float32), names="finite"),
    bad(ptq.calibrate, CameraNet.pretrained().to_onnx(), CAL, names="fold"),
    bad(ptq.to_qdq, FOLDED, CAL, fixed={"nope": quant.QParams(np.float32(1), np.int64(0), "uint8")}, names="fixed"),
    # a fixed quantizer is written as a uint8 per-tensor pair: another type is refused (QParams refuses a zero point that would wrap)
    bad(ptq.to_qdq, FOLDED, CAL, fixed={"image": quant.QParams(np.float32(0.05), np.int64(-100), "int8")},
        names="fixed['image']"),
    bad(ptq.to_qdq, FOLDED, CAL, fixed={"image": quant.QParams(np.float32(0.05), np.int64(3), "uint4")},
        names="fixed['image']"),
    bad(ptq.to_qdq, FOLDED, CAL, keep_float="stem.conv", exc=TypeError, names="keep_float"),
    bad(ptq.to_qdq, FOLDED, CAL, fixed=[("image", None)], exc=TypeError, names="fixed"),
    bad(ptq.float_forward, "model.onnx", CAL, exc=TypeError, names="model"),
    bad(ptq.float_forward, FOLDED, np.zeros((2, 3, 32, 32)), exc=TypeError, names="images"),
    bad(ptq.float_forward, CameraNet.pretrained().to_onnx(), CAL, names="BatchNormalization"),
    # issue 24: flags, sizes, graphs, shapes
    bad(ptq.Observer, bins=2**40, names="bins"),
    bad(ptq.Observer, bins=True, exc=TypeError, names="bins"),
    bad(ptq.Observer, percentile=float("nan"), names="percentile"),
    bad(ptq.Observer().update(np.float32([1.0])).qparams, symmetric=0, exc=TypeError, names="symmetric"),
    bad(ptq.to_qdq, FOLDED, CAL, per_channel=1, exc=TypeError, names="per_channel"),
    bad(ptq.to_qdq, FOLDED, CAL, per_channel="False", exc=TypeError, names="per_channel"),
    bad(ptq.to_qdq, FOLDED, CAL, fixed={"image": quant.QParams(np.float32(1), np.int64(-5), "int8")},
        names="fixed['image']"),
    bad(ptq.to_qdq, cyclic(FOLDED), CAL, names="cycle"),
    bad(ptq.calibrate, dangling(FOLDED), CAL, names="nowhere"),
    bad(ptq.float_forward, cyclic(FOLDED), CAL, names="cycle"),
    bad(ptq.float_forward, FOLDED, np.zeros((0, 3, 32, 32), np.float32), names="images"),
    bad(ptq.float_forward, FOLDED, np.zeros((1, 16, 3, 32, 32), np.float32), names="images"),
    bad(ptq.float_forward, FOLDED, np.zeros((2, 4, 32, 32), np.float32), names="images"),
    bad(ptq.float_forward, FOLDED, np.zeros(3 * 32 * 32, np.float32), names="images"),
    bad(ptq.calibrate, FOLDED, np.zeros((2, 3, 16, 16), np.float32), names="calibration_data"),
]
