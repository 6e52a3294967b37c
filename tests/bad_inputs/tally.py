"""Bad inputs for npukit.tally: one bad argument at a time, the others valid."""

from badinput import bad

from npukit import tally

CASES = [
    # Row
    bad(tally.Row, -1, "q", "v", "h", names="chapter"),
    bad(tally.Row, 1.0, "q", "v", "h", exc=TypeError, names="chapter"),
    bad(tally.Row, True, "q", "v", "h", exc=TypeError, names="chapter"),
    bad(tally.Row, 0, 3, "v", "h", exc=TypeError, names="quantity"),
    bad(tally.Row, 0, "", "v", "h", names="quantity"),
    bad(tally.Row, 0, "q", 1.5, "h", exc=TypeError, names="value"),
    bad(tally.Row, 0, "q", "v", None, exc=TypeError, names="how"),
    # Context
    bad(tally.Context, net="CameraNet", exc=TypeError, names="net"),
    bad(tally.Context, images=[[0.0]], exc=TypeError, names="images"),
    bad(tally.Context, images="images", exc=TypeError, names="images"),
    bad(tally.Context, machine=1e9, exc=TypeError, names="machine"),
    bad(tally.Context, conversions="NCHW", exc=TypeError, names="conversions"),
    bad(tally.Context, npu_buffer=0, names="npu_buffer"),
    bad(tally.Context, npu_buffer=32.0, exc=TypeError, names="npu_buffer"),
    # rows, table
    bad(tally.rows, -1, names="upto"),
    bad(tally.rows, 1.5, exc=TypeError, names="upto"),
    bad(tally.rows, 0, "ctx", exc=TypeError, names="ctx"),
    bad(tally.table, "3", exc=TypeError, names="upto"),
    bad(tally.table, 0, ctx=object(), exc=TypeError, names="ctx"),
]
