"""Bad inputs for npukit.quant."""

import numpy as np
from badinput import bad

from npukit import quant

X = np.float32([0.5, 1.0])
ACC = np.int32([10, 20])


from npukit import rewrites  # noqa: E402
from npukit.models import CameraNet  # noqa: E402

FOLDED = rewrites.fold_batchnorm(CameraNet.pretrained().to_onnx())
CAL = np.zeros((2, 3, 32, 32), np.float32)

CASES = [
    bad(quant.qrange, "int3", names="dtype"),
    bad(quant.qrange, 8, exc=TypeError, names="dtype"),
    bad(quant.quantize, [0.5], 1.0, exc=TypeError, names="x"),
    bad(quant.quantize, np.array([0.5]), 1.0, exc=TypeError, names="float32"),
    bad(quant.quantize, np.float32([np.nan]), 1.0, names="NaN"),
    bad(quant.quantize, X, 0.0, names="scale"),
    bad(quant.quantize, X, -1.0, names="scale"),
    bad(quant.quantize, X, float("inf"), names="scale"),
    bad(quant.quantize, X, "1", exc=TypeError, names="scale"),
    bad(quant.quantize, X, 1.0, 256, names="zero_point"),
    bad(quant.quantize, X, 1.0, -1, names="zero_point"),
    bad(quant.quantize, X, 1.0, 0.5, exc=TypeError, names="zero_point"),
    bad(quant.quantize, X, 1.0, 0, "int3", names="dtype"),
    bad(quant.quantize, np.zeros((2, 3), np.float32), np.float32([1, 1]), axis=5, names="axis"),
    bad(quant.quantize, np.zeros((2, 3), np.float32), np.float32([1, 1]), axis=1, names="scale"),
    bad(quant.quantize, np.zeros((2, 3), np.float32), np.float32([[1]]), axis=1, block_size=2, names="scale"),
    bad(quant.quantize, X, 1.0, block_size=-1, names="block_size"),
    bad(quant.dequantize, np.float32([1]), 1.0, exc=TypeError, names="q"),
    bad(quant.dequantize, np.int32([1]), 1.0, exc=TypeError, names="q"),
    bad(quant.dequantize, np.int8([9]), 1.0, dtype="int4", names="q"),
    bad(quant.dequantize, np.uint8([1]), 0.0, names="scale"),
    bad(quant.fake_quantize, X, np.float32([1, 2]), names="scale"),
    bad(quant.fake_quantize, X, 0.0, names="scale"),
    bad(quant.choose_qparams, np.zeros(0, np.float32), names="empty"),
    bad(quant.choose_qparams, np.float32([np.nan]), names="finite"),
    bad(quant.choose_qparams, np.int8([1]), exc=TypeError, names="x"),
    bad(quant.choose_qparams, X, method="entropy", names="method"),
    bad(quant.choose_qparams, X, "int3", names="dtype"),
    bad(quant.choose_qparams, X, axis=3, names="axis"),
    bad(quant.choose_qparams, X, method="percentile", percentile=20, names="percentile"),
    bad(quant.choose_qparams, X, symmetric="yes", exc=TypeError, names="symmetric"),
    bad(quant.Observer, "entropy", names="method"),
    bad(quant.Observer, bins=65, names="bins"),
    bad(quant.Observer, percentile=101, names="percentile"),
    bad(quant.Observer().update, np.float32([np.inf]), names="finite"),
    bad(quant.Observer().update, np.zeros(0, np.float32), names="empty"),
    bad(quant.Observer().qparams, names="no data"),
    bad(quant.QParams(np.float32(1), np.int64(0), "uint8").quantize, np.float32([np.nan]), names="NaN"),
    bad(quant.quantize_multiplier, 0.0, names="real"),
    bad(quant.quantize_multiplier, 2.0**32, names="real"),
    bad(quant.quantize_multiplier, "0.5", exc=TypeError, names="real"),
    bad(quant.requantize, np.float32([1]), 2**30, 0, exc=TypeError, names="acc"),
    bad(quant.requantize, np.int64([2**40]), 2**30, 0, names="acc"),
    bad(quant.requantize, ACC, 5, 0, names="multiplier"),
    bad(quant.requantize, ACC, 2**30, -40, names="shift"),
    bad(quant.requantize, ACC, 2**30, 0, 300, names="zero_point"),
    bad(quant.requantize, ACC, 2**30, 0, rounding="up", names="rounding"),
    bad(quant.qmatmul, np.float32([[1]]), 0, np.int8([[1]]), exc=TypeError, names="a"),
    bad(quant.qmatmul, np.uint8([[1, 2]]), 0, np.int8([[1, 2]]), names="a.shape"),
    bad(quant.qconv, np.zeros((1, 2, 4, 4), np.uint8), 0, np.zeros((1, 3, 1, 1), np.int8), names="groups"),
    bad(quant.qconv, np.zeros((1, 1, 4, 4), np.uint8), 0, np.zeros((1, 1, 1, 1), np.int8), stride=0, names="stride"),
    bad(quant.qconv, np.zeros((1, 1, 4, 4), np.uint8), 0, np.zeros((2, 1, 1, 1), np.int8),
        bias=np.zeros(3, np.int32), names="bias"),
    bad(quant.qconv, np.zeros((1, 1, 4, 4), np.uint8), 0, np.zeros((2, 1, 1, 1), np.int8), np.zeros(3, np.int8),
        names="w_zero_point"),
    bad(quant.to_float, np.array([1.0]), "bfloat16", exc=TypeError, names="x"),
    bad(quant.to_float, X, "float4", names="fmt"),
    bad(quant.to_bfloat16, np.array([1.0]), exc=TypeError, names="x"),
    bad(quant.sqnr, np.ones(2), np.ones(3), names="shape"),
    bad(quant.sqnr, np.ones(0), np.ones(0), names="empty"),
    bad(quant.cosine, np.zeros(2), np.ones(2), names="zeros"),
    bad(quant.calibrate, "model.onnx", CAL, exc=TypeError, names="model"),
    bad(quant.calibrate, FOLDED, np.zeros((0, 3, 32, 32), np.float32), names="at least one"),
    bad(quant.calibrate, FOLDED, np.zeros((2, 3, 32, 32)), exc=TypeError, names="calibration_data"),
    bad(quant.to_qdq, FOLDED, CAL, keep_float=["nope"], names="keep_float"),
    bad(quant.to_qdq, FOLDED, CAL, per_channel="yes", exc=TypeError, names="per_channel"),
    bad(quant.to_qdq, FOLDED, CAL, method="entropy", names="method"),
    bad(quant.integer_forward, "model.onnx", CAL, exc=TypeError, names="model"),
    bad(quant.integer_forward, FOLDED, CAL, names="fully quantized"),
    bad(quant.sqnr, [1.0], [1.0], exc=TypeError, names="x"),
    bad(quant.QParams, np.float32(0), np.int64(0), "uint8", names="scale"),
    bad(quant.QParams, np.float32(1), np.int64(0), "int3", names="dtype"),
    bad(quant.numbers, None, exc=TypeError, names="ctx"),
]

