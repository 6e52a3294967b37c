"""Bad inputs for npukit.systolic."""

import dataclasses

import numpy as np
from badinput import bad

from npukit import systolic as s

A, B = np.ones((3, 4), int), np.ones((4, 2), int)
_E = s.estimate(10, 7, 9, 4, 6, "ws")
_S = s.simulate(A, B, 2, 2, "ws")


def _est(**changes):
    """Estimate's fields: a real estimate's, some replaced."""
    return {**dataclasses.asdict(_E), **changes}


def _sim(**changes):
    """Simulation's fields: a real simulation's, some replaced."""
    return {**{f.name: getattr(_S, f.name) for f in dataclasses.fields(_S)}, **changes}


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
    # records validate when made; the trace flag; sizes (issue 24)
    bad(s.simulate, A, B, 2, 2, trace=1, exc=TypeError, names="trace"),
    bad(s.simulate, A, B, 2, 2, trace="False", exc=TypeError, names="trace"),
    bad(s.simulate, A, B, 2, 2, trace=None, exc=TypeError, names="trace"),
    bad(s.simulate, A, B, 10**12, 2, names="rows, cols"),
    bad(s.simulate, A, B, 2, 10**6, names="rows, cols"),
    bad(s.simulate, np.full((3, 4), 2**40), np.full((4, 2), 2**40), 2, 2, names="overflow"),
    bad(s.Mapping, "ws", 9, 7, 10, ("M", "N", "K"), "B", names="names"),
    bad(s.Mapping, "ws", 9, 7, 10, ("K", "N", "M"), "C", names="stationary"),
    bad(s.Mapping, "xs", 9, 7, 10, ("K", "N", "M"), "B", names="dataflow"),
    bad(s.Mapping, "ws", 0, 7, 10, ("K", "N", "M"), "B", names="row_dim"),
    bad(s.Estimate, **_est(cycles=_E.cycles + 1), names="cycles"),
    bad(s.Estimate, **_est(folds=_E.folds + 1), names="folds"),
    bad(s.Estimate, **_est(macs=1), names="macs"),
    bad(s.Estimate, **_est(fill=0), names="fill"),
    bad(s.Estimate, **_est(preload=0), names="preload"),
    bad(s.Estimate, **_est(dataflow="xs"), names="dataflow"),
    bad(s.Estimate, **_est(utilization=0.5), names="utilization"),
    bad(s.Estimate, **_est(mapping_efficiency=1.5), names="mapping_efficiency"),
    bad(s.Estimate, **_est(M=2.5), exc=TypeError, names="M"),
    bad(s.Estimate, **_est(ifmap_sram_reads=-1), names="ifmap_sram_reads"),
    bad(s.Simulation, **_sim(macs=_S.macs + 1), names="macs"),
    bad(s.Simulation, **_sim(busy=_S.busy[:-1]), names="busy"),
    bad(s.Simulation, **_sim(fold_cycles=[]), names="fold_cycles"),
    bad(s.Simulation, **_sim(product=np.ones(3)), names="product"),
    bad(s.Simulation, **_sim(dataflow="xs"), names="dataflow"),
    bad(s.Simulation, **_sim(trace=[1]), exc=TypeError, names="trace"),
    bad(s.Simulation, **_sim(rows=0), names="rows"),
]
