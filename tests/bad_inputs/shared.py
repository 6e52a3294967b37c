"""Bad inputs for npukit.shared (its other functions take no arguments)."""

from badinput import bad

from npukit import shared

CASES = [
    bad(shared.heldout, 0, names="n"),
    bad(shared.heldout, 2.5, exc=TypeError, names="n"),
    bad(shared.glue, "", "float_accuracy", names="key"),
    bad(shared.glue, 3, "float_accuracy", exc=TypeError, names="key"),
    bad(shared.glue, "ch0_x", "accuracy", names="quantity"),
    bad(shared.glue, "ch0_x", "heldout_n", scale=0, names="scale"),
    bad(shared.glue, "ch0_x", "heldout_n", scale="100", exc=TypeError, names="scale"),
    bad(shared.roof_check, {"name": "a", "achieved": 1.0}, exc=TypeError, names="points"),
    bad(shared.roof_check, [{"name": "a", "achieved": -1.0}], names="points[0]['achieved']"),
    bad(shared.reliable, "check", exc=TypeError, names="check"),
]
