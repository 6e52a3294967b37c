"""Bad inputs for npukit.figures.gemm: one bad argument at a time, the others valid."""

from badinput import bad

from npukit import gemm
from npukit import blas
from npukit.figures import gemm as fg

nan, inf = float("nan"), float("inf")
RUNGS = [blas.Rung("tile 8³", 64, 1e-3, 0.5, 0.0, True), blas.Rung("tile 16³", 64, 1e-3, 0.7, 0.0, True)]


def _rung(**kw):
    return dict(name="x", n=8, seconds=1e-3, gflops=1.0, error=0.0, ok=True) | kw


def _timings(**kw):
    return dict(threads="all", numpy=1e-3, step=1e-6, bandwidth=1e10, tiled=[3e-3], python=[1e-4],
                accumulate=[1e-4], calls=[2e-3], kernel=[1e-6]) | kw


T = blas.Timings(**_timings())
BD = blas.Breakdown(64, (16,), T, blas.Timings(**_timings(threads="one")))


def _transposes(**kw):
    return dict(n=64, itemsize=4, copy=1e-5, naive=1e-4, sides=(8, 16), blocked=(3e-5, 2e-5)) | kw


TR = blas.Transposes(**_transposes())

CASES = [
    # traffic_figure
    bad(fg.traffic_figure, 0, 64, 64, 8192, names="M"),
    bad(fg.traffic_figure, 64, 64.0, 64, 8192, exc=TypeError, names="N"),
    bad(fg.traffic_figure, 64, 64, True, 8192, exc=TypeError, names="K"),
    bad(fg.traffic_figure, 64, 64, 64, 0, names="buffer_bytes"),
    bad(fg.traffic_figure, 64, 64, 64, "8k", exc=TypeError, names="buffer_bytes"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, 0, names="itemsize"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, c_itemsize=2.0, exc=TypeError, names="c_itemsize"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, line=0, names="line"),
    bad(fg.traffic_figure, 64, 64, 64, 8192, line="64", exc=TypeError, names="line"),
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
    # ladder_figure
    bad(fg.ladder_figure, [], names="rungs"),
    bad(fg.ladder_figure, RUNGS[0], exc=TypeError, names="rungs"),
    bad(fg.ladder_figure, [(1, 2)], exc=TypeError, names="rungs[0]"),
    bad(fg.ladder_figure, RUNGS, peak_gflops=0, names="peak_gflops"),
    bad(fg.ladder_figure, RUNGS, peak_gflops=-1.0, names="peak_gflops"),
    bad(fg.ladder_figure, RUNGS, peak_gflops=nan, names="peak_gflops"),
    bad(fg.ladder_figure, RUNGS, peak_gflops=inf, names="peak_gflops"),
    bad(fg.ladder_figure, RUNGS, peak_gflops="10", exc=TypeError, names="peak_gflops"),
    # breakdown_figure, transpose_figure, schedule_figure
    bad(fg.breakdown_figure, T, exc=TypeError, names="bd"),
    bad(fg.breakdown_figure, None, exc=TypeError, names="bd"),
    bad(fg.transpose_figure, BD, exc=TypeError, names="t"),
    bad(fg.schedule_figure, "t", gemm.compulsory(8, 8, 8), exc=TypeError, names="t"),
    bad(fg.schedule_figure, gemm.compulsory(8, 8, 8), None, exc=TypeError, names="low"),
    bad(fg.schedule_figure, gemm.compulsory(8, 8, 8), gemm.compulsory(8, 8, 8), title=3, exc=TypeError, names="title"),
    # Rung
    bad(blas.Rung, **_rung(name=3), exc=TypeError, names="name"),
    bad(blas.Rung, **_rung(n=0), names="n"),
    bad(blas.Rung, **_rung(n=8.0), exc=TypeError, names="n"),
    *[bad(blas.Rung, **_rung(**{f: v}), exc=e, names=f) for f in ("seconds", "gflops")
      for v, e in ((0.0, ValueError), (-1.0, ValueError), (nan, ValueError), (inf, ValueError), ("1", TypeError))],
    bad(blas.Rung, **_rung(error=-1.0), names="error"),
    bad(blas.Rung, **_rung(error="0"), exc=TypeError, names="error"),
    bad(blas.Rung, **_rung(error=True), exc=TypeError, names="error"),
    bad(blas.Rung, **_rung(ok=1), exc=TypeError, names="ok"),
    bad(blas.Rung, **_rung(times="fast"), exc=TypeError, names="times"),
    bad(blas.Rung, **_rung(times=(1e-3, -1e-3)), names="times[1]"),
    bad(blas.Rung, **_rung(times=(1e-3,)), names="times"),
    bad(blas.Rung, **_rung(times=(2e-3, 3e-3)), names="seconds must be the median"),
    # ladder (refused before anything is timed)
    bad(blas.ladder, 0, names="n"),
    bad(blas.ladder, 8.0, exc=TypeError, names="n"),
    bad(blas.ladder, 8, python_n=0, names="python_n"),
    bad(blas.ladder, 8, row_n=True, exc=TypeError, names="row_n"),
    bad(blas.ladder, 8, small_tile=(8, 0, 8), names="small_tile[1]"),
    bad(blas.ladder, 8, good_tile=(8, 8), exc=TypeError, names="good_tile"),
    bad(blas.ladder, 8, dtype="int8", names="dtype"),
    bad(blas.ladder, 8, dtype="no-such-type", exc=TypeError, names="dtype"),
    bad(blas.ladder, 8, rounds=0, names="rounds"),
    bad(blas.ladder, 8, rounds="5", exc=TypeError, names="rounds"),
    bad(blas.ladder, 8, warmup=-1, names="warmup"),
    bad(blas.ladder, 8, seed=-1, names="seed"),
    bad(blas.ladder, 8, seed=1.5, exc=TypeError, names="seed"),
    # Timings and Breakdown
    bad(blas.Timings, **_timings(threads="two"), names="threads"),
    *[bad(blas.Timings, **_timings(**{f: v}), exc=e, names=f) for f in ("numpy", "step", "bandwidth")
      for v, e in ((0.0, ValueError), (nan, ValueError), (-1.0, ValueError), ("1", TypeError))],
    *[bad(blas.Timings, **_timings(**{f: v}), exc=e, names=n) for f in ("tiled", "python", "calls", "kernel")
      for v, e, n in ((1e-3, TypeError, f), ([0.0], ValueError, f"{f}[0]"), ([inf], ValueError, f"{f}[0]"))],
    bad(blas.Timings, **_timings(accumulate=[-1.0]), names="accumulate[0]"),
    bad(blas.Timings, **_timings(tiled=[1e-3, 2e-3]), names="one time per tile side"),
    bad(blas.Timings, **_timings(tiled=[], python=[], accumulate=[], calls=[], kernel=[]), names="at least one"),
    bad(blas.Breakdown, 0, (16,), T, T, names="n"),
    bad(blas.Breakdown, 64, (0,), T, T, names="sides[0]"),
    bad(blas.Breakdown, 64, (16, 32), T, T, names="all must have one time per side"),
    bad(blas.Breakdown, 64, (16,), "T", T, exc=TypeError, names="all"),
    bad(blas.Breakdown, 64, (16,), T, T, comparison={"all numpy": [1.0, 2.0]}, exc=TypeError, names="comparison"),
    bad(BD.measured, "two", names="threads"),
    bad(blas.Breakdown, 64, (16,), T, T, None, ("rung",), exc=TypeError, names="rungs[0]"),
    bad(blas.Breakdown, 64, (16,), T, T, None, (RUNGS[0],), names="rungs[0] must have one time per round"),
    bad(BD.verdict, 16, names="comparison is None"),
    bad(BD.components, "two", names="threads"),
    bad(BD.model, 1, names="threads"),
    # breakdown (refused before anything is timed)
    bad(blas.breakdown, 0, names="n"),
    bad(blas.breakdown, 64, (), names="sides"),
    bad(blas.breakdown, 64, (16, 0), names="sides[1]"),
    bad(blas.breakdown, 64, (32, 16), names="sides must be increasing"),
    bad(blas.breakdown, 64, "16", exc=TypeError, names="sides"),
    bad(blas.breakdown, 64, (16,), rounds=0, names="rounds"),
    bad(blas.breakdown, 64, (16,), seed=-1, names="seed"),
    # Transposes and transposes
    bad(blas.Transposes, **_transposes(n=0), names="n"),
    bad(blas.Transposes, **_transposes(itemsize=2.0), exc=TypeError, names="itemsize"),
    bad(blas.Transposes, **_transposes(copy=0.0), names="copy"),
    bad(blas.Transposes, **_transposes(naive=nan), names="naive"),
    bad(blas.Transposes, **_transposes(sides=()), names="sides"),
    bad(blas.Transposes, **_transposes(blocked=(1e-5,)), names="blocked must have one time per side"),
    bad(blas.Transposes, **_transposes(blocked=(1e-5, -1.0)), names="blocked[1]"),
    bad(TR.rate, 0.0, names="seconds"),
    bad(blas.transposes, 0, names="n"),
    bad(blas.transposes, 64, (), names="sides"),
    bad(blas.transposes, 64, (8, 2.5), exc=TypeError, names="sides[1]"),
    bad(blas.transposes, 64, (8,), rounds=0, names="rounds"),
    bad(blas.transposes, 64, (8,), seed="0", exc=TypeError, names="seed"),
]
