"""Bad inputs for npukit.measure."""

from badinput import bad

from npukit import measure

CASES = [
    bad(measure.timeit, 3, exc=TypeError, names="fn"),
    bad(measure.timeit, lambda: None, repeat=0, names="repeat"),
    bad(measure.timeit, lambda: None, number=0, names="number"),
    bad(measure.device_report, "NPU", exc=TypeError, names="preferred"),
]
