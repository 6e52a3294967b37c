"""Bad inputs for npukit.teach.capstone (the lab's checkers, not the learner's functions)."""

from badinput import bad

from npukit.teach import capstone as t

CASES = [
    bad(t.check_export_folded, 3, exc=TypeError, names="fn must be callable"),
    bad(t.check_qdq, "quantize", exc=TypeError, names="fn must be callable"),
    bad(t.check_warm_latency, None, exc=TypeError, names="fn must be callable"),
    bad(t.check_roofline_bounds, [], exc=TypeError, names="fn must be callable"),
    bad(t.check_variant_prediction, 1.0, "fast", 2.0, exc=TypeError, names="measured"),
    bad(t.check_variant_prediction, 1.0, 1.0, 0, names="macs_ratio"),
    bad(t.check_variant_prediction, 1.0, float("nan"), 2.0, names="measured"),
    bad(t.check_variant_prediction, 1.0, 1.0, 2.0, rel_tol=-1, names="rel_tol"),
]
