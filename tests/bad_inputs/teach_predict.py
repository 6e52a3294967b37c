"""Bad inputs for npukit.teach.predict: the arguments the lab passes, not the learner's prediction."""

from badinput import bad

from npukit.layouts import Conversion
from npukit.teach import predict as P

CENSUS = {16: 3, 128: 1}
C = Conversion((16, 1, 28, 28), "NCHW", "NHWC", "float32", 50176, 1.1e-6, 1e-6, 1e-7)

CASES = [
    bad(P.check_alignment_prediction, 0.1, [16, 128], exc=TypeError, names="census"),
    bad(P.check_alignment_prediction, 0.1, {}, exc=TypeError, names="census"),
    bad(P.check_alignment_prediction, 0.1, {24: 3}, names="alignment in census"),
    bad(P.check_alignment_prediction, 0.1, {16: -1}, names="census[16]"),
    bad(P.check_alignment_prediction, 0.1, {16: 0}, names="census"),
    bad(P.check_alignment_prediction, 0.1, CENSUS, alignment=96, names="alignment"),
    bad(P.check_alignment_prediction, 0.1, CENSUS, step=0, names="step"),
    bad(P.check_alignment_prediction, 0.1, CENSUS, step=1.5, exc=TypeError, names="step"),
    bad(P.check_alignment_prediction, 0.1, CENSUS, tolerance=2, names="tolerance"),
    bad(P.check_conversion_prediction, 1.0, {"slowdown": 1.0}, exc=TypeError, names="conversion"),
    bad(P.check_conversion_prediction, 1.0, "16×1×28×28 NCHW→NHWC", exc=TypeError, names="conversion"),
    bad(P.check_conversion_prediction, 1.0, None, exc=TypeError, names="conversion"),
]
