"""Bad inputs for npukit.systolic."""

import numpy as np
from badinput import bad

from npukit import systolic as s

A, B = np.ones((3, 4), int), np.ones((4, 2), int)
E = s.estimate(8, 8, 8, 4, 4, "ws")

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
    bad(s.Layer, "x", 1, 1, 1, count=0, names="count"),
    bad(s.Layer, "x", 0, 1, 1, names="M"),
    bad(s.resnet18_layers, 1, exc=TypeError, names="positional"),
    bad(s.cameranet_layers, batch=0, names="batch"),
    bad(s.cameranet_layers, depthwise="grouped", names="depthwise"),
    bad(s.cameranet_layers, depthwise=1, exc=TypeError, names="depthwise"),
    bad(s.model_table, [], 4, 4, names="layers"),
    bad(s.model_table, [(1, 2, 3)], 4, 4, exc=TypeError, names="layers[0]"),
    bad(s.model_table, s.resnet18_layers(), 4, 4, "x", names="dataflow"),
    bad(s.aspect_sweep, s.resnet18_layers(), 1000, names="pes"),
    bad(s.peak_tops, 128, 128, 0, names="clock_hz"),
    bad(s.peak_tops, 128, 128, 1e9, ops_per_mac=0, names="ops_per_mac"),
    bad(s.array_machine, 32, 32, 1e9, -1.0, names="dram_bandwidth"),
    bad(s.dram_bytes, 4, 4, 4, itemsize=0, names="itemsize"),
    bad(s.feed_addresses, 4, 8, 2, ld=4, names="ld"),
    bad(s.feed_addresses, 4, 8, 0, names="rows"),
    bad(s.bank_conflicts, np.ones(4, int), 4, names="addresses"),
    bad(s.bank_conflicts, np.ones((4, 2), int), 0, names="banks"),
    bad(s.fold_timeline, "e", 4.0, exc=TypeError, names="est"),
    bad(s.fold_timeline, E, 0.0, names="dram_bytes_per_cycle"),
    bad(s.Mapping, "ws", 1, 1, exc=TypeError, names="missing"),
    bad(s.Estimate, 1, 2, 3, exc=TypeError, names="missing"),
    bad(s.Simulation, np.ones(2), exc=TypeError, names="missing"),
    bad(s.LayerEstimate, exc=TypeError, names="missing"),
    bad(s.ModelTable, 4, 4, exc=TypeError, names="missing"),
    bad(s.numbers, None, exc=TypeError, names="ctx"),
]
