"""Bad inputs for npukit.systolic."""

import numpy as np
from badinput import bad

from npukit import systolic as s

A, B = np.ones((3, 4), int), np.ones((4, 2), int)

CASES = [
    bad(s.mapping, 0, 1, 1, "ws", names="M"),
    bad(s.mapping, 1, 1, 1, "xs", names="dataflow"),
    bad(s.mapping, 1, 1, 1, 3, exc=TypeError, names="dataflow"),
    bad(s.estimate, 4, 4, 4, 0, 4, "ws", names="rows"),
    bad(s.estimate, 4, 4, 4, 4, 4.0, "ws", exc=TypeError, names="cols"),
    bad(s.estimate, 4, -1, 4, 4, 4, "os", names="N"),
    bad(s.estimate, 4, 4, 4, 4, 4, "WS", names="dataflow"),
    bad(s.conv_dims, 3, 3, 5, 1, 1, 1, 1, names="filt_h"),
    bad(s.conv_dims, 3, 3, 1, 1, 1, 1, 0, names="stride"),
    bad(s.estimate_conv, 9, 9, 3, 3, 4, 6, 1, 4, 4, "ss", names="dataflow"),
    bad(s.simulate, A, np.ones((3, 2), int), 2, 2, names="A's columns"),
    bad(s.simulate, A.tolist(), B, 2, 2, exc=TypeError, names="A"),
    bad(s.simulate, A, B.astype(float), 2, 2, exc=TypeError, names="integer or both floating point"),
    bad(s.simulate, A, B.astype(bool), 2, 2, exc=TypeError, names="B must hold"),
    bad(s.simulate, np.ones((2, 3, 4)), np.ones((4, 2)), 2, 2, names="2-D"),
    bad(s.simulate, np.ones((0, 4)), np.ones((4, 2)), 2, 2, names="empty"),
    bad(s.simulate, A, B, 0, 2, names="rows"),
    bad(s.simulate, A, B, 2, 2, "os2", names="dataflow"),
    bad(s.simulate, np.ones((300, 300)), np.ones((300, 300)), 16, 16, trace=True, names="trace"),
    bad(s.Mapping, "ws", 1, 1, exc=TypeError, names="missing"),
    bad(s.Estimate, 1, 2, 3, exc=TypeError, names="missing"),
    bad(s.Simulation, np.ones(2), exc=TypeError, names="missing"),
]
