"""Bad inputs for npukit.teach.gemm: the checkers' own arguments (a learner's answer is graded, not refused)."""

from badinput import bad

from npukit.teach import gemm as g


def _predict():
    return 1e-3


CASES = [
    bad(g.check_tiled_matmul, 3, exc=TypeError, names="fn"),
    bad(g.check_schedule_traffic, None, exc=TypeError, names="callable"),
    bad(g.check_best_tile, "fn", exc=TypeError, names="callable"),
    bad(g.check_time_prediction, _predict, 1e-3, n=10**6, tile=(8, 8, 8), t_step=1e-6, step_n=32, names="n"),
    bad(g.check_time_prediction, _predict, 1e-3, n=64, tile=(8, 8), t_step=1e-6, step_n=32, names="tile"),
    bad(g.check_time_prediction, _predict, 1e-3, n=64, tile=(8, 0, 8), t_step=1e-6, step_n=32, names="tile[1]"),
    bad(g.check_time_prediction, _predict, 1e-3, n=64, tile=(8, 8, 8), t_step=0.0, step_n=32, names="t_step"),
    bad(g.check_time_prediction, _predict, 1e-3, n=64, tile=(8, 8, 8), t_step=1e-6, step_n=10**6, names="step_n"),
    bad(g.check_time_prediction, _predict, 1e-3, n=64, tile=(8, 8, 8), t_step=1e-6, exc=TypeError, names="step_n"),
    bad(g.check_time_prediction, _predict, -1.0, n=64, tile=(8, 8, 8), t_step=1e-6, step_n=32, exc=TypeError,
        names="measured"),
]
