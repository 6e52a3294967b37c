"""Bad inputs for npukit.qarith."""

import numpy as np
from badinput import bad, cyclic, dangling

from npukit import ptq, qarith, rewrites
from npukit.models import CameraNet

ACC = np.int32([10, 20])
FOLDED = rewrites.fold_batchnorm(CameraNet.pretrained().to_onnx())
CAL = np.zeros((2, 3, 32, 32), np.float32)
_QDQ = ptq.to_qdq(FOLDED, np.random.default_rng(0).random((4, 3, 32, 32), dtype=np.float32))

CASES = [
    bad(qarith.quantize_multiplier, 0.0, names="real"),
    bad(qarith.quantize_multiplier, 2.0**32, names="real"),
    bad(qarith.quantize_multiplier, "0.5", exc=TypeError, names="real"),
    bad(qarith.requantize, np.float32([1]), 2**30, 0, exc=TypeError, names="acc"),
    bad(qarith.requantize, np.int64([2**40]), 2**30, 0, names="acc"),
    bad(qarith.requantize, ACC, 5, 0, names="multiplier"),
    bad(qarith.requantize, ACC, 2**30, -40, names="shift"),
    bad(qarith.requantize, ACC, 2**30, 0, 300, names="zero_point"),
    bad(qarith.requantize, ACC, 2**30, 0, rounding="up", names="rounding"),
    bad(qarith.requantize, ACC, 2**30, 0, rounding="zp_after", names="rounding"),
    bad(qarith.qmatmul, np.float32([[1]]), 0, np.int8([[1]]), exc=TypeError, names="a"),
    bad(qarith.qmatmul, np.uint8([[1, 2]]), 0, np.int8([[1, 2]]), names="a.shape"),
    bad(qarith.qconv, np.zeros((1, 2, 4, 4), np.uint8), 0, np.zeros((1, 3, 1, 1), np.int8), names="groups"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.uint8), 0, np.zeros((1, 1, 1, 1), np.int8), stride=0, names="stride"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.uint8), 0, np.zeros((2, 1, 1, 1), np.int8),
        bias=np.zeros(3, np.int32), names="bias"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.uint8), 0, np.zeros((2, 1, 1, 1), np.int8), np.zeros(3, np.int8),
        names="w_zero_point"),
    bad(qarith.integer_forward, "model.onnx", CAL, exc=TypeError, names="model"),
    bad(qarith.integer_forward, FOLDED, CAL, names="fully quantized"),
    bad(qarith.requantize, np.int32([2**30]), 2**30, -4, rounding="double", names="int32"),
    bad(qarith.quantize_multiplier, np.float32([0.5, -0.5]), names="real"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.uint8), 0, np.zeros((1, 1, 1, 1), np.int8), pad=-1, names="pad"),
    bad(qarith.integer_forward, FOLDED, np.zeros((2, 3, 32, 32)), exc=TypeError, names="images"),
    bad(qarith.integer_forward, FOLDED, np.zeros((2, 3, 32, 32), np.float32), record="yes", exc=TypeError,
        names="record"),
    bad(qarith.integer_forward, FOLDED, np.zeros((0, 3, 32, 32), np.float32), names="images"),
    bad(qarith.qmatmul, np.uint8([[1]]), 0.5, np.int8([[1]]), exc=TypeError, names="a_zero_point"),
    bad(qarith.qmatmul, np.uint8([[1]]), 0, np.int8([[1]]), np.float32([0.5]), exc=TypeError, names="b_zero_point"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.uint8), "0", np.zeros((1, 1, 1, 1), np.int8), exc=TypeError,
        names="x_zero_point"),
    # zero points checked against the operand's type (issue 24, class 4)
    bad(qarith.qmatmul, np.uint8([[1]]), 300, np.int8([[1]]), names="a_zero_point"),
    bad(qarith.qmatmul, np.uint8([[1]]), -3, np.int8([[1]]), names="a_zero_point"),
    bad(qarith.qmatmul, np.int8([[1]]), 128, np.int8([[1]]), names="a_zero_point"),
    bad(qarith.qmatmul, np.uint8([[1]]), 10**12, np.int8([[1]]), names="a_zero_point"),
    bad(qarith.qmatmul, np.uint8([[1]]), 0, np.int8([[1]]), 128, names="b_zero_point"),
    bad(qarith.qmatmul, np.uint8([[1]]), 0, np.int8([[1]]), np.int64([-129]), names="b_zero_point"),
    bad(qarith.qmatmul, np.uint8([[1]]), True, np.int8([[1]]), exc=TypeError, names="a_zero_point"),
    bad(qarith.qmatmul, np.uint8([[1]]), 0, np.int8([[1]]), None, exc=TypeError, names="b_zero_point"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.uint8), 256, np.zeros((1, 1, 1, 1), np.int8), names="x_zero_point"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.uint8), -1, np.zeros((1, 1, 1, 1), np.int8), names="x_zero_point"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.int8), 128, np.zeros((1, 1, 1, 1), np.int8), names="x_zero_point"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.uint8), 0, np.zeros((1, 1, 1, 1), np.int8), 200,
        names="w_zero_point"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.uint8), 0, np.zeros((2, 1, 1, 1), np.int8), np.int64([0, -200]),
        names="w_zero_point"),
    bad(qarith.qconv, np.zeros((1, 1, 4, 4), np.uint8), 0, np.zeros((1, 1, 1, 1), np.int8), pad=10**12,
        names="pad"),
    bad(qarith.requantize, ACC, np.int64([]), 0, names="multiplier"),
    bad(qarith.requantize, ACC, np.int64([2**30] * 3), 0, names="multiplier"),
    bad(qarith.requantize, ACC, 2**30, np.int64([0, 0, 0]), names="shift"),
    bad(qarith.requantize, ACC, 2**30, 0, np.int64([]), names="zero_point"),
    bad(qarith.integer_forward, cyclic(_QDQ), CAL, names="cycle"),
    bad(qarith.integer_forward, dangling(_QDQ), CAL, names="nowhere"),
    bad(qarith.integer_forward, 3, CAL, exc=TypeError, names="qdq_model"),
    bad(qarith.integer_forward, _QDQ, CAL, record=1, exc=TypeError, names="record"),
    # complex or bool multipliers; per-channel parameters that would broadcast along the wrong axis
    bad(qarith.quantize_multiplier, np.complex64([0.5]), exc=TypeError, names="real"),
    bad(qarith.quantize_multiplier, np.array([True]), exc=TypeError, names="real"),
    bad(qarith.requantize, np.zeros((1, 2, 3, 3), np.int32), np.int64([2**30, 2**30]), np.int64([0, 0]),
        names="multiplier"),
    bad(qarith.requantize, np.zeros((1, 2, 3, 3), np.int32), 2**30, np.int64([0, 0, 0]), names="shift"),
]
