"""Bad inputs for npukit.figures.gemm: one bad argument at a time, the others valid."""

from badinput import bad

from npukit import gemm
from npukit.figures import gemm as fg

RUNGS = [gemm.Rung("tile 8³", 64, 1e-3, 0.5, 0.0, True), gemm.Rung("tile 16³", 64, 1e-3, 0.7, 0.0, True)]

CASES = [
    bad(fg.traffic_figure, 0, 64, 64, 8192, names="M"),
    bad(fg.traffic_figure, 64, 64.0, 64, 8192, exc=TypeError, names="N"),
    bad(fg.traffic_figure, 64, 64, True, 8192, exc=TypeError, names="K"),
    bad(fg.traffic_figure, 64, 64, 64, 0, names="buffer_bytes"),
    bad(fg.traffic_figure, 64, 64, 64, "8k", exc=TypeError, names="buffer_bytes"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, 0, names="itemsize"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, c_itemsize=2.0, exc=TypeError, names="c_itemsize"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, orders=(), names="orders"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, orders="mnk", exc=TypeError, names="orders"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, orders=("xyz",), names="orders[0]"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, orders=("mnk", 3), exc=TypeError, names="orders[1]"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, sizes=(), names="sizes"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, sizes=8, exc=TypeError, names="sizes"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, sizes=(8, 0), names="sizes[1]"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, sizes=(8, 16.5), exc=TypeError, names="sizes[1]"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, depths=(), names="depths"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, depths="16", exc=TypeError, names="depths"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, depths=(-4,), names="depths[0]"),
    bad(fg.ladder_figure, [], names="rungs"),
    bad(fg.ladder_figure, RUNGS[0], exc=TypeError, names="rungs"),
    bad(fg.ladder_figure, [(1, 2)], exc=TypeError, names="rungs[0]"),
    bad(fg.ladder_figure, RUNGS, peak_gflops=0, names="peak_gflops"),
    bad(fg.ladder_figure, RUNGS, peak_gflops=-1.0, names="peak_gflops"),
    bad(fg.ladder_figure, RUNGS, peak_gflops=float("nan"), names="peak_gflops"),
    bad(fg.ladder_figure, RUNGS, peak_gflops=float("inf"), names="peak_gflops"),
    bad(fg.ladder_figure, RUNGS, peak_gflops="10", exc=TypeError, names="peak_gflops"),
    bad(fg.sweep_figure, [], [], names="rungs"),
    bad(fg.sweep_figure, RUNGS, [8], names="rungs and sides"),
    bad(fg.sweep_figure, RUNGS, "8,16", exc=TypeError, names="sides"),
    bad(fg.sweep_figure, RUNGS, [8, 0], names="sides[1]"),
    bad(fg.sweep_figure, RUNGS, [8, 16.0], exc=TypeError, names="sides[1]"),
    bad(fg.sweep_figure, [RUNGS[0], "r"], [8, 16], exc=TypeError, names="rungs[1]"),
    bad(fg.sweep_figure, RUNGS, [8, 16], numpy_gflops=0.0, names="numpy_gflops"),
    bad(fg.sweep_figure, RUNGS, [8, 16], numpy_gflops=-2.0, names="numpy_gflops"),
    bad(fg.sweep_figure, RUNGS, [8, 16], numpy_gflops="2", exc=TypeError, names="numpy_gflops"),
    bad(fg.sweep_figure, RUNGS, [8, 16], model=[1.0], names="model"),
    bad(fg.sweep_figure, RUNGS, [8, 16], model=[1.0, 0.0], names="model[1]"),
    bad(fg.sweep_figure, RUNGS, [8, 16], model=[1.0, float("nan")], names="model[1]"),
    bad(fg.sweep_figure, RUNGS, [8, 16], model="12", exc=TypeError, names="model"),
]
