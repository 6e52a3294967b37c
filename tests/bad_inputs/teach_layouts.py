"""Bad inputs for npukit.teach.layouts: a checker given something that is not a function."""

from badinput import bad

from npukit.teach import layouts as t

CASES = [
    bad(t.check_to_blocked, 3, exc=TypeError, names="fn"),
    bad(t.check_from_blocked, None, exc=TypeError, names="fn"),
    bad(t.check_im2col_view, "fn", exc=TypeError, names="fn"),
]
