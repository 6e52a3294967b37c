"""Bad inputs for npukit.teach.systolic (the lab's checkers, not the learner's functions)."""

import numpy as np
from badinput import bad

from npukit.systolic import simulate
from npukit.teach import systolic as t

SIM = simulate(np.ones((2, 3), int), np.ones((3, 2), int), 2, 2, "ws")


def _todo(*args):
    raise NotImplementedError()


CASES = [
    bad(t.check_fold_cycles, 3, exc=TypeError, names="learner must be callable"),
    bad(t.check_fold_cycles, _todo, seed=-1, names="seed"),
    bad(t.check_best_shape, _todo, seed="x", exc=TypeError, names="seed"),
    bad(t.check_ws_busy, _todo, seed=1.5, exc=TypeError, names="seed"),
    bad(t.check_utilization_prediction, _todo, None, exc=TypeError, names="measured"),
    bad(t.check_utilization_prediction, _todo, SIM, rtol=0, names="rtol"),
    bad(t.check_my_layer, 880, 0.14, {"M": 16}, exc=TypeError, names="mine"),
    bad(t.check_my_layer, 880, 0.14, "05_systolic", exc=TypeError, names="mine"),
]
