"""Bad inputs for npukit.layouts: one bad argument at a time, the others valid."""

import numpy as np
from badinput import bad

from npukit import layouts as L
from npukit import tally

X = np.zeros((1, 3, 4, 4), np.float32)
B = np.zeros((1, 2, 3, 3, 8), np.float32)  # 2 blocks of 8 channels
GOOD = ((1, 3, 32, 32), "NCHW", "NHWC", "float32", 12288, 4e-6, 1e-6, 1e-7)


def conversion(**changes):
    """Conversion's arguments: GOOD with some fields replaced."""
    fields = dict(zip(("shape", "src", "dst", "dtype", "nbytes", "convert_s", "copy_s", "view_s"), GOOD))
    return {**fields, **changes}


CASES = [
    # permutation
    bad(L.permutation, 4, "NHWC", exc=TypeError, names="src"),
    bad(L.permutation, ["N", "C"], "CN", exc=TypeError, names="src"),
    bad(L.permutation, "NCHW", None, exc=TypeError, names="dst"),
    bad(L.permutation, "NCXW", "NHWC", names="src"),
    bad(L.permutation, "", "", names="src"),
    bad(L.permutation, "nchw", "nhwc", names="src"),
    bad(L.permutation, "NCHH", "NHCH", names="src"),
    bad(L.permutation, "NCHW", "NHW", names="dst"),
    # convert
    bad(L.convert, [[1.0]], "NC", "CN", exc=TypeError, names="x"),
    bad(L.convert, X, 4, "NHWC", exc=TypeError, names="src"),
    bad(L.convert, X, "NCHW", "NHWQ", names="dst"),
    bad(L.convert, X, "NCH", "NHC", names="src"),
    bad(L.convert, X, "NCHW", "NHWC", copy="no", exc=TypeError, names="copy"),
    bad(L.convert, X, "NCHW", "NHWC", copy=0, exc=TypeError, names="copy"),
    bad(L.convert, X, "NCHW", "NHWC", copy=None, exc=TypeError, names="copy"),
    # conversion_is_free
    bad(L.conversion_is_free, "1324", "NCHW", "NHWC", exc=TypeError, names="shape"),
    bad(L.conversion_is_free, (1, 3, 4.5, 4), "NCHW", "NHWC", exc=TypeError, names="shape[2]"),
    bad(L.conversion_is_free, (1, -3, 4, 4), "NCHW", "NHWC", names="shape[1]"),
    bad(L.conversion_is_free, (1, 3, 4), "NCHW", "NHWC", names="src"),
    bad(L.conversion_is_free, (1, 3, 4, 4), 0, "NHWC", exc=TypeError, names="src"),
    bad(L.conversion_is_free, (1, 3, 4, 4), "NCHW", "NHWD", names="dst"),
    # onednn_tag
    bad(L.onednn_tag, None, exc=TypeError, names="layout"),
    bad(L.onednn_tag, "NCHQ", names="layout"),
    bad(L.onednn_tag, "NCHW", 0, names="block"),
    bad(L.onednn_tag, "NCHW", 16.7, exc=TypeError, names="block"),
    bad(L.onednn_tag, "NCHW", "16", exc=TypeError, names="block"),
    bad(L.onednn_tag, "NCHW", True, exc=TypeError, names="block"),
    bad(L.onednn_tag, "NHW", 16, names="block"),
    # round_up
    bad(L.round_up, -1, 4, names="n"),
    bad(L.round_up, 3.5, 4, exc=TypeError, names="n"),
    bad(L.round_up, 3, 0, names="multiple"),
    bad(L.round_up, 3, 16.7, exc=TypeError, names="multiple"),
    bad(L.round_up, 3, True, exc=TypeError, names="multiple"),
    # to_blocked, from_blocked
    bad(L.to_blocked, [[1.0]], 4, exc=TypeError, names="x"),
    bad(L.to_blocked, np.zeros(3), 4, names="x"),
    bad(L.to_blocked, X, 0, names="block"),
    bad(L.to_blocked, X, 16.7, exc=TypeError, names="block"),
    bad(L.to_blocked, X, "4", exc=TypeError, names="block"),
    bad(L.to_blocked, X, True, exc=TypeError, names="block"),
    bad(L.from_blocked, B.tolist(), 8, 16, exc=TypeError, names="x"),
    bad(L.from_blocked, np.zeros((1, 4)), 4, 3, names="x"),
    bad(L.from_blocked, np.zeros((1, 0, 3, 3, 8)), 8, 3, names="x"),
    bad(L.from_blocked, B, 16, 20, names="block"),
    bad(L.from_blocked, B, 8.0, 16, exc=TypeError, names="block"),
    bad(L.from_blocked, B, 8, 20, names="channels"),
    bad(L.from_blocked, B, 8, 8, names="channels"),
    bad(L.from_blocked, B, 8, 0, names="channels"),
    bad(L.from_blocked, B, 8, 12.5, exc=TypeError, names="channels"),
    # PaddingCost
    bad(L.PaddingCost, "13", (1, 16), 12, 64, exc=TypeError, names="shape"),
    bad(L.PaddingCost, (1, 3), (1, 16.0), 12, 64, exc=TypeError, names="padded_shape[1]"),
    bad(L.PaddingCost, (1, 3), (1, 2), 12, 8, names="padded_shape"),
    bad(L.PaddingCost, (1, 3), (16,), 12, 64, names="padded_shape"),
    bad(L.PaddingCost, (1, 3), (1, 16), -12, 64, names="nbytes"),
    bad(L.PaddingCost, (1, 3), (1, 16), 12, 60, names="padded_nbytes"),
    bad(L.PaddingCost, (1, 3), (1, 16), 12, 64.0, exc=TypeError, names="padded_nbytes"),
    # padding_cost
    bad(L.padding_cost, "13", 16, exc=TypeError, names="shape"),
    bad(L.padding_cost, (1, 3.0), 16, exc=TypeError, names="shape[1]"),
    bad(L.padding_cost, (1, 3), 0, names="multiple"),
    bad(L.padding_cost, (1, 3), 16.7, exc=TypeError, names="multiple"),
    bad(L.padding_cost, (1, 3), 16, 5, names="axis"),
    bad(L.padding_cost, (1, 3), 16, 1.0, exc=TypeError, names="axis"),
    bad(L.padding_cost, (1, 3), 16, 1, 0, names="itemsize"),
    bad(L.padding_cost, (1, 3), 16, 1, 4.0, exc=TypeError, names="itemsize"),
    # im2col
    bad(L.im2col, "x", 3, exc=TypeError, names="x"),
    bad(L.im2col, np.zeros((1, 3, 4)), 3, names="x"),
    bad(L.im2col, X, 0, names="kernel"),
    bad(L.im2col, X, 2.5, exc=TypeError, names="kernel"),
    bad(L.im2col, X, "3", exc=TypeError, names="kernel"),
    bad(L.im2col, X, (3, 3, 3), names="kernel"),
    bad(L.im2col, X, (3, 2.0), exc=TypeError, names="kernel[1]"),
    bad(L.im2col, X, 5, names="kernel"),
    bad(L.im2col, X, 3, stride=0, names="stride"),
    bad(L.im2col, X, 3, stride=(1, -2), names="stride[1]"),
    bad(L.im2col, X, 3, stride=1.5, exc=TypeError, names="stride"),
    bad(L.im2col, X, 3, pad=-1, names="pad"),
    bad(L.im2col, X, 3, pad=(0, 0, -1, 0), names="pad[2]"),
    bad(L.im2col, X, 3, pad=(1, 1, 1), names="pad"),
    bad(L.im2col, X, 3, pad=0.5, exc=TypeError, names="pad"),
    bad(L.im2col, X, 3, pad=True, exc=TypeError, names="pad"),
    bad(L.im2col, X, 3, dilation=0, names="dilation"),
    bad(L.im2col, X, 3, dilation=2, names="dilation"),
    bad(L.im2col, X, 3, dilation=np.array([1, 1]), exc=TypeError, names="dilation"),
    # im2col_blowup
    bad(L.im2col_blowup, "1344", 3, exc=TypeError, names="shape"),
    bad(L.im2col_blowup, (1, 3, 4), 3, names="shape"),
    bad(L.im2col_blowup, (1, 0, 4, 4), 3, names="shape"),
    bad(L.im2col_blowup, (1, 3, 4, 4.0), 3, exc=TypeError, names="shape[3]"),
    bad(L.im2col_blowup, (1, 3, 4, 4), 16.7, exc=TypeError, names="kernel"),
    bad(L.im2col_blowup, (1, 3, 4, 4), 3, 1, -2, names="pad"),
    # Conversion: a record built by hand is checked
    bad(L.Conversion, **conversion(shape="1x3"), exc=TypeError, names="shape"),
    bad(L.Conversion, **conversion(shape=(1, 3, 32)), names="src"),
    bad(L.Conversion, **conversion(shape=(1, 0, 32, 32), nbytes=1), names="shape"),
    bad(L.Conversion, **conversion(src="NCHQ"), names="src"),
    bad(L.Conversion, **conversion(dst="NHWQ"), names="dst"),
    bad(L.Conversion, **conversion(dst=None), exc=TypeError, names="dst"),
    bad(L.Conversion, **conversion(dtype=np.float32), exc=TypeError, names="dtype"),
    bad(L.Conversion, **conversion(dtype="float99"), exc=TypeError, names="dtype"),
    bad(L.Conversion, **conversion(nbytes=12287), names="nbytes"),
    bad(L.Conversion, **conversion(nbytes=0), names="nbytes"),
    bad(L.Conversion, **conversion(convert_s=0.0), names="convert_s"),
    bad(L.Conversion, **conversion(convert_s="4us"), exc=TypeError, names="convert_s"),
    bad(L.Conversion, **conversion(copy_s=float("nan")), names="copy_s"),
    bad(L.Conversion, **conversion(copy_s=-1e-6), names="copy_s"),
    bad(L.Conversion, **conversion(view_s=-1e-7), names="view_s"),
    bad(L.Conversion, **conversion(view_s=None), names="view_s"),
    bad(L.Conversion, **conversion(view_s=float("inf")), names="view_s"),
    # measure_conversion
    bad(L.measure_conversion, "1344", exc=TypeError, names="shape"),
    bad(L.measure_conversion, (1, 3, 4), names="src"),
    bad(L.measure_conversion, (1, 3, 4.5, 4), exc=TypeError, names="shape[2]"),
    bad(L.measure_conversion, (1, 0, 4, 4), names="shape"),
    bad(L.measure_conversion, (1, 3, 4, 4), 4, exc=TypeError, names="src"),
    bad(L.measure_conversion, (1, 3, 4, 4), "NCHW", "NHWQ", names="dst"),
    bad(L.measure_conversion, (1, 3, 4, 4), "NCHW", None, exc=TypeError, names="dst"),
    bad(L.measure_conversion, (1, 3, 4, 4), "NHWC", "NHWC16c", names="src"),
    bad(L.measure_conversion, (1, 3, 4, 4), "NCHW", "NCHW0c", names="the block size in dst"),
    bad(L.measure_conversion, (1, 3, 4, 4), "NCHW", "NCHW²c", names="dst"),
    bad(L.measure_conversion, (1, 3, 4, 4), dtype="float99", exc=TypeError, names="dtype"),
    bad(L.measure_conversion, (1, 3, 4, 4), dtype=object, names="dtype"),
    bad(L.measure_conversion, (1, 3, 4, 4), dtype="U3", names="dtype"),
    bad(L.measure_conversion, (1, 3, 4, 4), repeat=0, names="repeat"),
    bad(L.measure_conversion, (1, 3, 4, 4), repeat="abc", exc=TypeError, names="repeat"),
    bad(L.measure_conversion, (1, 3, 4, 4), repeat=2.5, exc=TypeError, names="repeat"),
    bad(L.measure_conversion, (1, 3, 4, 4), warmup=-1, names="warmup"),
    bad(L.measure_conversion, (1, 3, 4, 4), warmup=1.0, exc=TypeError, names="warmup"),
    bad(L.measure_conversion, (1, 3, 4, 4), rounds=0, names="rounds"),
    bad(L.measure_conversion, (1, 3, 4, 4), rounds=True, exc=TypeError, names="rounds"),
    # numbers
    bad(L.numbers, None, exc=TypeError, names="ctx"),
    bad(L.numbers, [L.Conversion(*GOOD)], exc=TypeError, names="ctx"),
    bad(L.numbers, tally.Context(conversions=[{"chapter": 2}]), exc=TypeError, names="ctx.conversions[0]"),
    # sizes, types, an empty measurement list (issue 24)
    bad(L.to_blocked, X, 10**12, names="block"),
    bad(L.from_blocked, B, 10**12, 16, names="block"),
    bad(L.onednn_tag, "NCHW", 10**12, names="block"),
    bad(L.im2col, X, 3, pad=10**12, names="pad"),
    bad(L.measure_conversion, (1, 3, 8, 8), dtype=None, exc=TypeError, names="dtype"),
    bad(L.measure_conversion, (10**4, 3, 10**4, 10**4), names="shape"),
    bad(L.measure_conversion, (1, 3, 8, 8), repeat=10**12, names="repeat"),
    bad(L.measure_conversion, (1, 3, 8, 8), warmup=10**12, names="warmup"),
    bad(L.measure_conversion, (1, 3, 8, 8), rounds=10**12, names="rounds"),
    bad(L.measure_conversion, (1, 3, 8, 8), "NCHW", "NCHW4096c", names="block size"),
    bad(L.numbers, tally.Context(conversions=[]), names="ctx.conversions"),
]
