"""Bad inputs for npukit.teach.deploy (the lab's checkers, not the learner's functions)."""

from badinput import bad

from npukit.teach import deploy as t


def _todo(*args):
    raise NotImplementedError()


class _Compiled:
    def get_property(self, name):
        return 2


CASES = [
    bad(t.check_crossing_bytes, 3, exc=TypeError, names="fn must be callable"),
    bad(t.check_crossing_bytes, _todo, seed=-1, names="seed"),
    bad(t.check_reorder, _todo, seed="x", exc=TypeError, names="seed"),
    bad(t.check_double_buffered, _todo, seed=1.5, exc=TypeError, names="seed"),
    bad(t.check_speedup_prediction, _todo, None, {1: [], 2: []}, exc=TypeError, names="compiled"),
    bad(t.check_speedup_prediction, _todo, _Compiled(), {1: []}, exc=TypeError, names="runs must be a dict"),
    bad(t.check_speedup_prediction, _todo, _Compiled(), {1: [], 2: []}, exc=TypeError, names="runs[1]"),
]
