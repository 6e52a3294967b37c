"""Bad inputs for npukit.figures.layouts: one bad argument at a time, the others valid."""

from badinput import bad

from npukit.figures import layouts as F
from npukit.layouts import Conversion
from npukit.simd import LayoutTiming

C = Conversion((1, 3, 32, 32), "NCHW", "NHWC", "float32", 12288, 4e-6, 1e-6, 1e-7)
T = LayoutTiming("depthwise", (1, 64, 8, 8), 1e-4, 5e-5)

CASES = [
    # element_order_figure
    bad(F.element_order_figure, 0, names="channels"),
    bad(F.element_order_figure, 6.5, exc=TypeError, names="channels"),
    bad(F.element_order_figure, True, exc=TypeError, names="channels"),
    bad(F.element_order_figure, 6, 0, names="height"),
    bad(F.element_order_figure, 6, "3", exc=TypeError, names="height"),
    bad(F.element_order_figure, 6, 3, -1, names="width"),
    bad(F.element_order_figure, 6, 3, 3.0, exc=TypeError, names="width"),
    bad(F.element_order_figure, 6, 3, 3, 0, names="block"),
    bad(F.element_order_figure, 6, 3, 3, 16.7, exc=TypeError, names="block"),
    bad(F.element_order_figure, 6, 3, 3, 4, 0, names="row"),
    bad(F.element_order_figure, 6, 3, 3, 4, 16.0, exc=TypeError, names="row"),
    bad(F.element_order_figure, 16, 8, 8, names="channels, height and width"),
    # bandwidth_figure
    bad(F.bandwidth_figure, [], names="results"),
    bad(F.bandwidth_figure, C, exc=TypeError, names="results"),
    bad(F.bandwidth_figure, "abc", exc=TypeError, names="results"),
    bad(F.bandwidth_figure, [1], exc=TypeError, names="results[0]"),
    bad(F.bandwidth_figure, [C, {"copy_s": 1}], exc=TypeError, names="results[1]"),
    bad(F.bandwidth_figure, [C], title=3, exc=TypeError, names="title"),
    # padding_figure
    bad(F.padding_figure, (), names="channels"),
    bad(F.padding_figure, "1234", exc=TypeError, names="channels"),
    bad(F.padding_figure, 64, exc=TypeError, names="channels"),
    bad(F.padding_figure, (1, 2, 0), names="channels[2]"),
    bad(F.padding_figure, (1, 2, 16.7), exc=TypeError, names="channels[2]"),
    bad(F.padding_figure, range(1, 4), (0,), names="multiples[0]"),
    bad(F.padding_figure, range(1, 4), (8, 16.7), exc=TypeError, names="multiples[1]"),
    bad(F.padding_figure, range(1, 4), (), names="multiples"),
    bad(F.padding_figure, range(1, 4), "16", exc=TypeError, names="multiples"),
    # layout_timing_figure
    bad(F.layout_timing_figure, [], names="timings"),
    bad(F.layout_timing_figure, T, exc=TypeError, names="timings"),
    bad(F.layout_timing_figure, [T, C], exc=TypeError, names="timings[1]"),
    bad(F.layout_timing_figure, [T], title=1, exc=TypeError, names="title"),
    # memory_strip_figure
    bad(F.memory_strip_figure, "CHWN", names="layout"),
    bad(F.memory_strip_figure, "blocked", 0, names="block"),
    bad(F.memory_strip_figure, "blocked", 4.5, exc=TypeError, names="block"),
    bad(F.memory_strip_figure, "NHWC", 4, 0, names="channels"),
    bad(F.memory_strip_figure, "NHWC", 4, 6, True, exc=TypeError, names="height"),
    bad(F.memory_strip_figure, "NHWC", 4, 6, 2, -3, names="width"),
    bad(F.memory_strip_figure, "NHWC", 4, 6, 2, 3, conversion=T, exc=TypeError, names="conversion"),
    bad(F.memory_strip_figure, "NHWC", 4, 6, 2, 3, row=0, names="row"),
    bad(F.memory_strip_figure, "NHWC", 4, 64, 4, 4, names="channels, height and width"),
    # sizes refused before any array is made (issue 24, class 7)
    bad(F.element_order_figure, 10**12, names="memory slots"),
    bad(F.element_order_figure, 6, 10**12, names="memory slots"),
    bad(F.element_order_figure, row=10**12, names="row"),
    bad(F.memory_strip_figure, "NHWC", 4, 10**12, names="memory slots"),
    bad(F.memory_strip_figure, "NHWC", 4, 6, 2, 10**12, names="memory slots"),
]
