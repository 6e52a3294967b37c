"""Bad inputs for npukit.teach.capstone (the lab's checkers, not the learner's functions)."""

from badinput import bad

from npukit import capstone
from npukit.graphs import MachineSpec
from npukit.models import CameraNet
from npukit.teach import capstone as t

_LOOP = capstone.closed_loop(CameraNet.pretrained(), machine=MachineSpec(1e11, 1e10, "x", "given", "given"),
                             heldout=10, runs=3)

CASES = [
    bad(t.check_export_folded, 3, exc=TypeError, names="fn must be callable"),
    bad(t.check_qdq, "quantize", exc=TypeError, names="fn must be callable"),
    bad(t.check_warm_latency, None, exc=TypeError, names="fn must be callable"),
    bad(t.check_roofline_bounds, [], exc=TypeError, names="fn must be callable"),
    bad(t.check_variant_prediction, lambda r: 1.0, "loop", None, exc=TypeError, names="variant"),
    bad(t.check_variant_prediction, 1.0, _LOOP, _LOOP, exc=TypeError, names="fn"),
    bad(t.check_variant_prediction, lambda m, am, ar: 1.0, _LOOP, _LOOP, anchor=(2.5,), names="anchor"),
    bad(t.check_variant_prediction, lambda m, am, ar: 1.0, _LOOP, _LOOP, anchor=(2.5, 8), names="anchor[1]"),
    bad(t.check_variant_prediction, lambda m, am, ar: 1.0, _LOOP, _LOOP, anchor=(-1, 48), names="anchor[0]"),
]
