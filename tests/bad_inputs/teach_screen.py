"""Bad inputs for npukit.teach.screen: one bad argument at a time."""

from badinput import bad

from npukit.teach import screen as S

CASES = [
    bad(S.refusals, 3, exc=TypeError, names="source"),
    bad(S.refusals, b"import sys", exc=TypeError, names="source"),
    bad(S.allowed_import, None, exc=TypeError, names="name"),
    bad(S.allowed_import, "", names="name"),
]
