"""Bad inputs for npukit.capstone."""

import numpy as np
from badinput import bad

from npukit import capstone
from npukit.graphs import MachineSpec
from npukit.models import CameraNet

_net = CameraNet.pretrained()
_m = MachineSpec(1e11, 1e10, "example", "given", "given")

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
    bad(capstone.closed_loop, _net, machine=_m, heldout=2001, names="heldout"),
    bad(capstone.closed_loop, _net, machine=_m, latency=[1.0], exc=TypeError, names="latency"),
    bad(capstone.closed_loop, _net, machine=_m, heldout=8, runs=3, latency={"FP32": 1.0}, names="latency"),
]
