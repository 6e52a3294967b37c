"""Bad inputs for npukit.simd: one bad argument at a time, the others valid."""

import numpy as np
from badinput import bad

from npukit import simd as S

X = np.zeros((1, 2, 4, 4), np.float32)
W = np.zeros((2, 3, 3), np.float32)

CASES = [
    # lane_fill
    bad(S.lane_fill, 0, names="extent"),
    bad(S.lane_fill, 4.5, exc=TypeError, names="extent"),
    bad(S.lane_fill, True, exc=TypeError, names="extent"),
    bad(S.lane_fill, 4, 0, names="lanes"),
    bad(S.lane_fill, 4, "16", exc=TypeError, names="lanes"),
    # depthwise_conv
    bad(S.depthwise_conv, X.tolist(), W, exc=TypeError, names="x"),
    bad(S.depthwise_conv, np.zeros((2, 4, 4), np.float32), W, names="x"),
    bad(S.depthwise_conv, X.astype(np.int32), W, names="x"),
    bad(S.depthwise_conv, np.zeros((1, 2, 0, 4), np.float32), W, names="x"),
    bad(S.depthwise_conv, X, W.tolist(), exc=TypeError, names="w"),
    bad(S.depthwise_conv, X, np.zeros((3, 3, 3)), names="w"),
    bad(S.depthwise_conv, X, np.zeros((2, 1, 3, 3)), names="w"),
    bad(S.depthwise_conv, X, W, "CHWN", names="layout"),
    bad(S.depthwise_conv, X, W, "NHWC", names="w"),                  # NHWC: C is the last axis, 4 != 2
    bad(S.depthwise_conv, X, W, stride=0, names="stride"),
    bad(S.depthwise_conv, X, W, stride=1.5, exc=TypeError, names="stride"),
    bad(S.depthwise_conv, X, W, pad=-1, names="pad"),
    bad(S.depthwise_conv, X, W, pad=True, exc=TypeError, names="pad"),
    bad(S.depthwise_conv, X, np.zeros((2, 7, 7)), pad=0, names="w"),
    # LayoutTiming
    bad(S.LayoutTiming, "conv", (1, 2, 4, 4), 1e-6, 1e-6, names="op"),
    bad(S.LayoutTiming, "scale", "1244", 1e-6, 1e-6, exc=TypeError, names="shape"),
    bad(S.LayoutTiming, "scale", (1, 2, 4), 1e-6, 1e-6, names="shape"),
    bad(S.LayoutTiming, "scale", (1, 2, 4, 4), -1e-6, 1e-6, names="nchw_s"),
    bad(S.LayoutTiming, "scale", (1, 2, 4, 4), 1e-6, "fast", exc=TypeError, names="nhwc_s"),
    bad(S.LayoutTiming, "scale", (1, 2, 4, 4), 1e-6, 1e-6, "fast", (), exc=TypeError, names="nchw_times"),
    bad(S.LayoutTiming, "scale", (1, 2, 4, 4), 1e-6, 1e-6, (1e-6, 1e-6), (1e-6, -1.0), names="nhwc_times[1]"),
    bad(S.LayoutTiming, "scale", (1, 2, 4, 4), 1e-6, 1e-6, (1e-6, 1e-6), (), names="same number of rounds"),
    bad(S.LayoutTiming, "scale", (1, 2, 4, 4), 1e-6, 1e-6, (1e-6, 3e-6), (1e-6, 1e-6), names="nchw_s must be the median"),
    # channel_sweep
    bad(S.channel_sweep, 0, names="elements"),
    bad(S.channel_sweep, 4096.0, exc=TypeError, names="elements"),
    bad(S.channel_sweep, 4096, 16, exc=TypeError, names="channels"),
    bad(S.channel_sweep, 4096, (), names="channels"),
    bad(S.channel_sweep, 4096, (1, 3), names="channels[1]"),
    bad(S.channel_sweep, 4096, (1, 0), names="channels[1]"),
    bad(S.channel_sweep, 4096, (1, 2.0), exc=TypeError, names="channels[1]"),
    # measure_layouts
    bad(S.measure_layouts, [], names="shapes"),
    bad(S.measure_layouts, [(1, 4, 4, 4)], rounds=5, max_rounds=3, names="max_rounds"),
    bad(S.measure_layouts, "1,2,4,4", exc=TypeError, names="shapes"),
    bad(S.measure_layouts, [(1, 2, 4)], names="shapes[0]"),
    bad(S.measure_layouts, [(1, 2, 0, 4)], names="shapes[0]"),
    bad(S.measure_layouts, [(1, 2, 4.0, 4)], exc=TypeError, names="shapes[0][2]"),
    bad(S.measure_layouts, [(1, 2, 4, 4)], "conv", names="op"),
    bad(S.measure_layouts, [(1, 2, 4, 4)], kernel=2, names="kernel"),
    bad(S.measure_layouts, [(1, 2, 4, 4)], kernel=0, names="kernel"),
    bad(S.measure_layouts, [(1, 2, 4, 4)], repeat=0, names="repeat"),
    bad(S.measure_layouts, [(1, 2, 4, 4)], warmup=-1, names="warmup"),
    bad(S.measure_layouts, [(1, 2, 4, 4)], rounds=1.0, exc=TypeError, names="rounds"),
    bad(S.measure_layouts, [(1, 2, 4, 4)], seed=-1, names="seed"),
    bad(S.measure_layouts, [(1, 2, 4, 4)], min_time=-1.0, names="min_time"),
    # complex or bool weights, sizes (issue 24)
    bad(S.depthwise_conv, X, W.astype(np.complex64), exc=TypeError, names="w"),
    bad(S.depthwise_conv, X, W.astype(bool), exc=TypeError, names="w"),
    bad(S.depthwise_conv, X, W, pad=10**12, names="pad"),
    bad(S.measure_layouts, [(1, 16, 8, 8)], repeat=10**12, names="repeat"),
    bad(S.measure_layouts, [(1, 16, 8, 8)], warmup=10**12, names="warmup"),
    bad(S.measure_layouts, [(1, 16, 8, 8)], rounds=10**12, names="rounds"),
    bad(S.measure_layouts, [(1, 10**5, 10**4, 10**4)], names="shapes[0]"),
]
