"""Bad inputs for npukit.measure."""

from badinput import bad

from npukit import measure

CASES = [
    bad(measure.timeit, 3, exc=TypeError, names="fn"),
    bad(measure.timeit, lambda: None, repeat=0, names="repeat"),
    bad(measure.timeit, lambda: None, repeat="abc", exc=TypeError, names="repeat"),
    bad(measure.timeit, lambda: None, repeat=2.5, exc=TypeError, names="repeat"),
    bad(measure.timeit, lambda: None, warmup=-1, names="warmup"),
    bad(measure.timeit, lambda: None, warmup=True, exc=TypeError, names="warmup"),
    bad(measure.timeit, lambda: None, number=0, names="number"),
    bad(measure.timeit, lambda: None, number=None, exc=TypeError, names="number"),
    bad(measure.device_report, "NPU", exc=TypeError, names="preferred"),
    bad(measure.device_report, (), names="preferred"),
    bad(measure.device_report, ("NPU", 1), exc=TypeError, names="preferred[1]"),
    bad(measure.device_report, ("",), names="preferred[0]"),
]
