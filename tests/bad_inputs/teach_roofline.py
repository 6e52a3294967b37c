"""Bad inputs for npukit.teach.roofline: the arguments the lab passes, not the learner's prediction."""

from badinput import bad

from npukit.teach import roofline as R

KW = dict(peak_gflops=300.0, bandwidth_gbs=48.0)

CASES = [
    bad(R.check_relu_prediction, 2.0, 0.0, names="measured_gflops", **KW),
    bad(R.check_relu_prediction, 2.0, float("nan"), names="measured_gflops", **KW),
    bad(R.check_relu_prediction, 2.0, "2", exc=TypeError, names="measured_gflops", **KW),
    bad(R.check_relu_prediction, 2.0, 2.0, peak_gflops=-1.0, bandwidth_gbs=48.0, names="peak_gflops"),
    bad(R.check_relu_prediction, 2.0, 2.0, peak_gflops=None, bandwidth_gbs=48.0, exc=TypeError, names="peak_gflops"),
    bad(R.check_relu_prediction, 2.0, 2.0, peak_gflops=300.0, bandwidth_gbs=float("inf"), names="bandwidth_gbs"),
    bad(R.check_relu_prediction, 2.0, 2.0, peak_gflops=300.0, bandwidth_gbs=True, exc=TypeError,
        names="bandwidth_gbs"),
    bad(R.check_relu_prediction, 2.0, 2.0, nbytes=2**20, exc=TypeError, names="nbytes", **KW),
    bad(R.check_relu_prediction, 2.0, 2.0, threads=2, exc=TypeError, names="nbytes", **KW),
    bad(R.check_relu_prediction, 2.0, 2.0, nbytes=1024, threads=2, names="nbytes", **KW),
    bad(R.check_relu_prediction, 2.0, 2.0, nbytes=2.5e6, threads=2, exc=TypeError, names="nbytes", **KW),
    bad(R.check_relu_prediction, 2.0, 2.0, nbytes=2**20, threads=0, names="threads", **KW),
    bad(R.check_relu_prediction, None, 2.0, nbytes=-1, threads=2, names="nbytes", **KW),
]
