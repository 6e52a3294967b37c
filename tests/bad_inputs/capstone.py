"""Bad inputs for npukit.capstone."""

import numpy as np
from badinput import bad

from npukit import capstone
from npukit.graphs import MachineSpec
from npukit.models import CameraNet

_net = CameraNet.pretrained()
_m = MachineSpec(1e11, 1e10, "example", "given", "given")


def _row(**changes):
    """LayerRow's fields, valid, with some replaced."""
    good = dict(name="stem.conv", kind="dense", macs=10, flops=20, bytes_fp32=400, bytes_int8=100, bound="memory",
                roofline_us=1.0, cycles=50, array_us=0.5)
    return {**good, **changes}


CASES = [
    bad(capstone.variant, 0.5, names="width"),
    bad(capstone.variant, "2", exc=TypeError, names="width"),
    bad(capstone.variant, True, exc=TypeError, names="width"),
    bad(capstone.variant, float("nan"), names="width"),
    bad(capstone.variant, 1.0, 8, names="size"),
    bad(capstone.variant, 1.0, 32.5, exc=TypeError, names="size"),
    bad(capstone.closed_loop, "net", exc=TypeError, names="net"),
    bad(capstone.closed_loop, _net, machine=3, exc=TypeError, names="machine"),
    bad(capstone.closed_loop, _net, machine=_m, device=3, exc=TypeError, names="device"),
    bad(capstone.closed_loop, _net, machine=_m, method="max", names="method"),
    bad(capstone.closed_loop, _net, machine=_m, heldout=0, names="heldout"),
    bad(capstone.closed_loop, _net, machine=_m, min_agreement=1.5, names="min_agreement"),
    bad(capstone.closed_loop, _net, machine=_m, runs=0, names="runs"),
    bad(capstone.closed_loop, _net, machine=_m, warmup=-1, names="warmup"),
    bad(capstone.closed_loop, _net, machine=_m, calibration=[[0.5]], exc=TypeError, names="calibration"),
    bad(capstone.closed_loop, _net, machine=_m, calibration=np.zeros((4, 3, 40, 40), np.float32), names="calibration"),
    bad(capstone.closed_loop, _net, machine=_m, calibration=np.zeros((4, 3, 32, 32), np.float64), names="calibration"),
    bad(capstone.closed_loop, _net, machine=_m, calibration=np.full((4, 3, 32, 32), 255, np.float32),
        names="calibration"),
    bad(capstone.numbers, "ctx", exc=TypeError, names="ctx"),
    # sizes; records validate when made (issue 24)
    bad(capstone.variant, 1e6, names="width"),
    bad(capstone.variant, 1.0, 10**6, names="size"),
    bad(capstone.closed_loop, _net, machine=_m, heldout=10**12, names="heldout"),
    bad(capstone.closed_loop, _net, machine=_m, runs=10**12, names="runs"),
    bad(capstone.closed_loop, _net, machine=_m, warmup=10**12, names="warmup"),
    bad(capstone.Check, "", "q", 0.0, 1.0, names="stage"),
    bad(capstone.Check, "export", None, 0.0, 1.0, exc=TypeError, names="quantity"),
    bad(capstone.Check, "export", "q", "0", 1.0, exc=TypeError, names="value"),
    bad(capstone.Check, "export", "q", True, 1.0, exc=TypeError, names="value"),
    bad(capstone.Check, "export", "q", 0.0, float("nan"), names="limit"),
    bad(capstone.Check, "export", "q", 0.0, 1.0, "<", names="rule"),
    bad(capstone.LayerRow, **_row(bound="fast"), names="bound"),
    bad(capstone.LayerRow, **_row(flops=1), names="flops"),
    bad(capstone.LayerRow, **_row(bytes_int8=10**9), names="bytes_int8"),
    bad(capstone.LayerRow, **_row(roofline_us=-1.0), names="roofline_us"),
    bad(capstone.LayerRow, **_row(cycles=2.5), exc=TypeError, names="cycles"),
    bad(capstone.LayerRow, **_row(measured_us={"INT8": float("nan")}), names="measured_us['INT8']"),
    bad(capstone.LayerRow, **_row(measured_us=[1.0]), exc=TypeError, names="measured_us"),
    bad(capstone.Loop, *([None] * 14), exc=TypeError, names="net"),
    bad(capstone.closed_loop, _net, machine=_m, heldout=2001, names="heldout"),
    bad(capstone.closed_loop, _net, machine=_m, latency=[1.0], exc=TypeError, names="latency"),
    bad(capstone.closed_loop, _net, machine=_m, heldout=8, runs=3, latency={"FP32": 1.0}, names="latency"),
]
