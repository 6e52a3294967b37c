"""Bad inputs for npukit.accelerator."""

import numpy as np
from badinput import bad

from npukit import accelerator as a
from npukit.models import CameraNet
from npukit.systolic import estimate

E = estimate(8, 8, 8, 4, 4, "ws")
_L = a.Layer("x", 8, 8, 8)
_LE = a.LayerEstimate(_L, E, E.cycles, E.utilization)
_NET = CameraNet.pretrained()

CASES = [
    bad(a.Layer, "x", 1, 1, 1, count=0, names="count"),
    bad(a.Layer, "x", 0, 1, 1, names="M"),
    bad(a.resnet18_layers, 1, exc=TypeError, names="positional"),
    bad(a.cameranet_layers, batch=0, names="batch"),
    bad(a.cameranet_layers, depthwise="grouped", names="depthwise"),
    bad(a.cameranet_layers, depthwise=1, exc=TypeError, names="depthwise"),
    bad(a.model_table, [], 4, 4, names="layers"),
    bad(a.model_table, [(1, 2, 3)], 4, 4, exc=TypeError, names="layers[0]"),
    bad(a.model_table, a.resnet18_layers(), 4, 4, "x", names="dataflow"),
    bad(a.aspect_sweep, a.resnet18_layers(), 1000, names="pes"),
    bad(a.peak_tops, 128, 128, 0, names="clock_hz"),
    bad(a.peak_tops, 128, 128, 1e9, ops_per_mac=0, names="ops_per_mac"),
    bad(a.array_machine, 32, 32, 1e9, -1.0, names="dram_bandwidth"),
    bad(a.dram_bytes, a.Layer("x", 4, 4, 4), itemsize=0, names="itemsize"),
    bad(a.dram_bytes, a.Layer("x", 4, 4, 4), out_itemsize=0, names="out_itemsize"),
    bad(a.dram_bytes, 4, exc=TypeError, names="layer"),
    bad(a.resident_bytes, "x", 8, 8, exc=TypeError, names="layer"),
    bad(a.resident_bytes, a.Layer("x", 4, 4, 4), 0, 8, names="rows"),
    bad(a.resident_bytes, a.Layer("x", 4, 4, 4), 8, 8.5, exc=TypeError, names="cols"),
    bad(a.resident_bytes, a.Layer("x", 4, 4, 4), 8, 8, itemsize=True, exc=TypeError, names="itemsize"),
    bad(a.resident_bytes, a.Layer("x", 4, 4, 4), 8, 8, acc_itemsize=0, names="acc_itemsize"),
    bad(a.Layer, "x", 1, 1, 1, inputs=-1, names="inputs"),
    bad(a.feed_addresses, 4, 8, 2, ld=4, names="ld"),
    bad(a.feed_addresses, 4, 8, 0, names="rows"),
    bad(a.bank_conflicts, np.ones(4, int), 4, names="addresses"),
    bad(a.bank_conflicts, np.ones((4, 2), int), 0, names="banks"),
    bad(a.fold_timeline, "e", 4.0, exc=TypeError, names="est"),
    bad(a.fold_timeline, E, 0.0, names="dram_bytes_per_cycle"),
    bad(a.LayerEstimate, exc=TypeError, names="missing"),
    bad(a.ModelTable, 4, 4, exc=TypeError, names="missing"),
    bad(a.numbers, None, exc=TypeError, names="ctx"),
    # records validate when made; flags; names; sizes (issue 24)
    bad(a.Layer, "x", 1, 1, 1, kind=None, exc=TypeError, names="kind"),
    bad(a.Layer, "x", 1, 1, 1, kind=3, exc=TypeError, names="kind"),
    bad(a.Layer, "x", 2, 2, 2, macs=9, names="macs"),
    bad(a.LayerEstimate, "x", E, E.cycles, 0.5, exc=TypeError, names="layer"),
    bad(a.LayerEstimate, _L, None, E.cycles, 0.5, exc=TypeError, names="estimate"),
    bad(a.LayerEstimate, _L, E, E.cycles + 1, E.utilization, names="cycles"),
    bad(a.LayerEstimate, _L, E, E.cycles, 0.99, names="utilization"),
    bad(a.LayerEstimate, _L, E, True, E.utilization, exc=TypeError, names="cycles"),
    bad(a.LayerEstimate, a.Layer("y", 9, 8, 8), E, E.cycles, E.utilization, names="estimate"),
    bad(a.ModelTable, 4.0, 4, "ws", (_LE,), exc=TypeError, names="rows"),
    bad(a.ModelTable, 4, 4, "xs", (_LE,), names="dataflow"),
    bad(a.ModelTable, 8, 4, "ws", (_LE,), names="layers[0]"),
    bad(a.ModelTable, 4, 4, "os", (_LE,), names="layers[0]"),
    bad(a.ModelTable, 4, 4, "ws", (), names="layers"),
    bad(a.ModelTable, 4, 4, "ws", ("row",), exc=TypeError, names="layers[0]"),
    bad(a.cameranet_layers, _NET.to_onnx(), exc=TypeError, names="net"),
    bad(a.cameranet_layers, "CameraNet", exc=TypeError, names="net"),
    bad(a.fold_timeline, E, 64.0, double_buffer=1, exc=TypeError, names="double_buffer"),
    bad(a.fold_timeline, E, 64.0, double_buffer="False", exc=TypeError, names="double_buffer"),
    bad(a.bank_conflicts, np.array([[-1, -5]]), 4, names="addresses"),
    bad(a.bank_conflicts, np.array([[0, 1]]), 10**12, names="banks"),
    bad(a.feed_addresses, 10**12, 8, 4, names="M and rows"),
    bad(a.feed_addresses, 8, 8, 10**12, names="M and rows"),
]
