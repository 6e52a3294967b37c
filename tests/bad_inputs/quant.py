"""Bad inputs for npukit.quant."""

import numpy as np
from badinput import bad

from npukit import quant

X = np.float32([0.5, 1.0])

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
    bad(quant.QParams(np.float32(1), np.int64(0), "uint8").quantize, np.float32([np.nan]), names="NaN"),
    bad(quant.to_float, np.array([1.0]), "bfloat16", exc=TypeError, names="x"),
    bad(quant.to_float, X, "float4", names="fmt"),
    bad(quant.to_bfloat16, np.array([1.0]), exc=TypeError, names="x"),
    bad(quant.sqnr, np.ones(2), np.ones(3), names="shape"),
    bad(quant.sqnr, np.ones(0), np.ones(0), names="empty"),
    bad(quant.cosine, np.zeros(2), np.ones(2), names="zeros"),
    bad(quant.sqnr, [1.0], [1.0], exc=TypeError, names="x"),
    bad(quant.QParams, np.float32(0), np.int64(0), "uint8", names="scale"),
    bad(quant.QParams, np.float32(1), np.int64(0), "int3", names="dtype"),
]
