"""Bad inputs for npukit.measure."""

from badinput import bad

from npukit import measure

_f = lambda: None  # noqa: E731
_two = {"a": _f, "b": _f}
_times = {"a": [1.0, 2.0], "b": [2.0, 4.0]}
_verdict = measure.Verdict("b", "a", 2.0, 1.9, 2.1, 0.95, 0.05, 9)

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
    # comparing timings (npukit.timing, re-exported here)
    bad(measure.compare, {"a": _f, "b": _f}, rounds=5, max_rounds=4, names="max_rounds"),
    bad(measure.compare, {"a": _f, "b": _f}, max_rounds=20.0, exc=TypeError, names="max_rounds"),
    bad(measure.compare, {"a": _f, "b": _f}, settle=[("a", "c")], names="settle[0][1]"),
    bad(measure.compare, {"a": _f, "b": _f}, settle=[("a",)], names="settle[0]"),
    bad(measure.compare, {"a": _f}, names="fns"),
    bad(measure.compare, [_f, _f], exc=TypeError, names="fns"),
    bad(measure.compare, {"a": _f, "b": 3}, exc=TypeError, names="fns['b']"),
    bad(measure.compare, {"a": _f, 2: _f}, exc=TypeError, names="fns"),
    bad(measure.compare, _two, baseline="c", names="baseline"),
    bad(measure.compare, _two, rounds=2, names="rounds"),
    bad(measure.compare, _two, rounds=4.5, exc=TypeError, names="rounds"),
    bad(measure.compare, _two, warmup=-1, names="warmup"),
    bad(measure.compare, _two, number=0, names="number"),
    bad(measure.compare, _two, number={"a": 1}, exc=TypeError, names="number['b']"),
    bad(measure.compare, _two, min_time=0, names="min_time"),
    bad(measure.compare, _two, order="random", names="order"),
    bad(measure.compare, _two, threshold=1.0, names="threshold"),
    bad(measure.compare, _two, confidence=0.0, names="confidence"),
    bad(measure.compare, _two, seed=-1, names="seed"),
    bad(measure.compare, _two, clock=3, exc=TypeError, names="clock"),
    bad(measure.Comparison.from_times, {"a": [1.0, 2.0]}, names="times"),
    bad(measure.Comparison.from_times, [[1.0], [2.0]], exc=TypeError, names="times"),
    bad(measure.Comparison.from_times, {"a": [1.0, 2.0], "b": [1.0]}, names="times"),
    bad(measure.Comparison.from_times, {"a": [1.0, 0.0], "b": [1.0, 1.0]}, names="times['a'][1]"),
    bad(measure.Comparison.from_times, {"a": [1.0, 2.0], "b": "12"}, exc=TypeError, names="times['b']"),
    bad(measure.Comparison.from_times, _times, baseline="c", names="baseline"),
    bad(measure.Comparison.from_times, _times, number={"a": 1, "b": 0}, names="number['b']"),
    bad(measure.Comparison.from_times, _times, threshold=-0.1, names="threshold"),
    bad(measure.Comparison, _times, "a", 3, exc=TypeError, names="number"),
    bad(measure.Verdict, "", "a", 1.0, 0.9, 1.1, 0.95, 0.05, 9, names="name"),
    bad(measure.Verdict, "b", "a", 1.0, 1.1, 1.2, 0.95, 0.05, 9, names="low <= ratio <= high"),
    bad(measure.Verdict, "b", "a", float("nan"), 0.9, 1.1, 0.95, 0.05, 9, names="ratio"),
    bad(measure.Verdict, "b", "a", 1.0, 0.9, 1.1, 1.5, 0.05, 9, names="confidence"),
    bad(measure.Verdict, "b", "a", 1.0, 0.9, 1.1, 0.95, 0.05, 1, names="rounds"),
    bad(measure.judge, 0.0, _verdict, names="predicted"),
    bad(measure.judge, "2", _verdict, exc=TypeError, names="predicted"),
    bad(measure.judge, 2.0, 2.0, exc=TypeError, names="verdict"),
    bad(measure.judge, 2.0, _verdict, floor=0.5, ceiling=0.2, names="floor"),
    bad(measure.judge, 2.0, _verdict, ceiling=1.0, names="ceiling"),
    bad(measure.recheck, 2.0, {"a": _f}, names="fns"),
    bad(measure.recheck, -1.0, _two, names="predicted"),
    bad(measure.recheck, 2.0, _two, attempts=0, names="attempts"),
    bad(measure.recheck, 2.0, _two, baseline="a", exc=TypeError, names="baseline"),
    bad(measure.in_blocks, _two, blocks=0, names="blocks"),
    bad(measure.in_blocks, _two, blocks=1.5, exc=TypeError, names="blocks"),
    bad(measure.in_blocks, {"a": _f}, names="fns"),
]
