"""Bad inputs for npukit.teach.core: one bad argument at a time, the others valid."""

from badinput import bad

from npukit.teach import core as C


def square(x):
    return x * x


CASES = [
    # check
    bad(C.check, 3, square, [(2,)], square, exc=TypeError, names="name"),
    bad(C.check, "", square, [(2,)], square, names="name"),
    bad(C.check, "sq", "square", [(2,)], square, exc=TypeError, names="learner"),
    bad(C.check, "sq", square, 3, square, exc=TypeError, names="cases"),
    bad(C.check, "sq", square, "abc", square, exc=TypeError, names="cases"),
    bad(C.check, "sq", square, [2], square, exc=TypeError, names="cases[0]"),
    bad(C.check, "sq", square, [(2,)], None, exc=TypeError, names="reference"),
    bad(C.check, "sq", square, [(2,)], square, rtol=-1.0, names="rtol"),
    bad(C.check, "sq", square, [(2,)], square, rtol=float("nan"), names="rtol"),
    bad(C.check, "sq", square, [(2,)], square, atol="0", exc=TypeError, names="atol"),
    bad(C.check, "sq", square, [(2,)], square, compare=True, exc=TypeError, names="compare"),
    bad(C.check, "sq", square, [(2,)], square, forbid=3, exc=TypeError, names="forbid"),
    # learner_call
    bad(C.learner_call, None, square, 2, exc=TypeError, names="name"),
    bad(C.learner_call, "sq", "square", 2, exc=TypeError, names="fn"),
    bad(C.learner_call, "sq", square, 2, forbid="math", exc=TypeError, names="forbid"),
    # around
    bad(C.around, "helper", square, 2, exc=TypeError, names="helper"),
    bad(C.around, square, 3, 2, exc=TypeError, names="fn"),
]
