"""Bad inputs for npukit.data: one bad argument at a time, the others valid."""

import numpy as np
from badinput import bad

from npukit import data

D = data.shapes_dataset

CASES = [
    bad(D, -1, names="n"),
    bad(D, 2.5, exc=TypeError, names="n"),
    bad(D, True, exc=TypeError, names="n"),
    bad(D, "4", exc=TypeError, names="n"),
    bad(D, 4, seed=-1, names="seed"),
    bad(D, 4, seed=1.0, exc=TypeError, names="seed"),
    bad(D, 4, size=8, names="size"),
    bad(D, 4, size=16.7, exc=TypeError, names="size"),
    bad(D, 4, background="blue", names="background"),
    bad(D, 4, brightness=(1.5, 1.0), names="brightness"),
    bad(D, 4, brightness=(0.0, 1.0), names="brightness"),
    bad(D, 4, brightness=(0.5, float("inf")), names="brightness"),
    bad(D, 4, brightness=(float("nan"), 1.0), names="brightness"),
    bad(D, 4, brightness="bright", exc=TypeError, names="brightness"),
    bad(D, 4, brightness=(1.0,), exc=TypeError, names="brightness"),
    bad(D, 4, brightness=(True, 1.0), exc=TypeError, names="brightness"),
    bad(D, 4, noise=-0.1, names="noise"),
    bad(D, 4, noise=1.0, names="noise"),
    bad(D, 4, noise=float("nan"), names="noise"),
    bad(D, 4, noise="low", names="noise"),
    bad(D, 4, classes=[], names="classes"),
    bad(D, 4, classes="ring", exc=TypeError, names="classes"),
    bad(D, 4, classes=3, exc=TypeError, names="classes"),
    bad(D, 4, classes=["hexagon"], names="classes"),
    bad(D, 4, classes=[8], names="classes"),
    bad(D, 4, classes=[-1], names="classes[0]"),
    bad(D, 4, classes=[0, 1.5], exc=TypeError, names="classes[1]"),
    bad(D, 4, classes=[True], exc=TypeError, names="classes[0]"),
    bad(D, 4, classes=np.array([[0, 1]]), exc=TypeError, names="classes"),
    # sizes that would exhaust memory (issue 24, class 7)
    bad(D, 10**12, names="n and size"),
    bad(D, 10, size=10**6, names="size"),
    bad(data.heldout, 0, names="n"),
    bad(data.heldout, data.HELDOUT_N + 1, names="n"),
    bad(data.heldout, 2.5, exc=TypeError, names="n"),
    bad(data.heldout, True, exc=TypeError, names="n"),
    bad(data.heldout, 10, size=8, names="size"),
    bad(data.heldout, 10, size="32", exc=TypeError, names="size"),
]
