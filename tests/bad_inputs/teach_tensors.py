"""Bad inputs for npukit.teach.tensors: the per-student check's own argument (a learner's answer is graded)."""

from badinput import bad

from npukit.teach import tensors as t
from npukit.teach import variants

CASES = [
    bad(t.check_my_batch, (6144, 192, 6, 2), 13292, (2, 16, 512, 16384), {"shape": (8, 32, 32, 3)},
        exc=TypeError, names="mine"),
    bad(t.check_my_batch, (6144, 192, 6, 2), 13292, (2, 16, 512, 16384), variants.of("06_quant", ""),
        exc=TypeError, names="mine"),
]
