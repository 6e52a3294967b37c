"""Bad inputs for npukit.i18n: one bad argument at a time, the others valid."""

from badinput import bad

from npukit import i18n

CASES = [
    # message
    bad(i18n.message, 3, exc=TypeError, names="template"),
    bad(i18n.message, "{} runs", names="template"),
    bad(i18n.message, "{0} runs", names="template"),
    bad(i18n.message, "{n runs", names="template"),
    bad(i18n.message, "{n} runs", names="args"),
    bad(i18n.message, "{n} runs", n=1, m=2, names="args"),
    bad(i18n.message, "{n} runs", n=[1], exc=TypeError, names="n"),
    bad(i18n.message, "{n} runs", n=float("nan"), names="n"),
    bad(i18n.message, "{n:d} runs", n="many", names="args"),
]
