"""Bad inputs for npukit.teach.quant: the checkers' own arguments (a learner's answer is graded, not refused)."""

from badinput import bad

from npukit.teach import quant as q
from npukit.teach import variants


def _predict(clipped):
    return 0.1


CASES = [
    bad(q.check_my_values, [2, 3, 3, 5, 9], [0.0] * 5, {"x": [0.5]}, exc=TypeError, names="mine"),
    bad(q.check_my_values, [2, 3, 3, 5, 9], [0.0] * 5, variants.of("05_systolic", ""), exc=TypeError, names="mine"),
    bad(q.check_quantize, 3, exc=TypeError, names="fn"),
    bad(q.check_requantize, None, exc=TypeError, names="fn"),
    bad(q.check_channel_scales, "fn", exc=TypeError, names="fn"),
    bad(q.check_calibration_prediction, 3, 0.1, exc=TypeError, names="fn"),
    bad(q.check_calibration_prediction, _predict, "0.1", exc=TypeError, names="measured_drop"),
    bad(q.check_calibration_prediction, _predict, float("nan"), names="measured_drop"),
    bad(q.check_calibration_prediction, _predict, 0.1, n_images=10**12, names="n_images"),
    bad(q.check_calibration_prediction, _predict, 0.1, n_images=2001, names="n_images"),   # the held-out draw's 2,000
    bad(q.check_calibration_prediction, _predict, 0.1, atol=1.5, names="atol"),
    bad(q.check_calibration_prediction, _predict, 0.1, rtol=0.0, names="rtol"),
]
