"""Bad inputs for npukit.blas (issue 24: sizes that would hang, sequences given as None; refused before measuring)."""

from badinput import bad

from npukit import blas

CASES = [
    bad(blas.breakdown, sides=None, exc=TypeError, names="sides"),
    bad(blas.breakdown, 64, (32, 16), names="sides"),
    bad(blas.breakdown, 64, (16, 32), rounds=10**12, names="rounds"),
    bad(blas.breakdown, 64, (16, 32), rounds=2, names="rounds"),
    bad(blas.breakdown, 10**6, (16, 32), names="n"),
    bad(blas.breakdown, 64, (16, 32), ladder=(6, 8, 16, 32), exc=TypeError, names="ladder"),
    bad(blas.breakdown, 64, (16, 32), ladder=dict(python_n=10**6, row_n=8, small=16, good=32),
        names="ladder['python_n']"),
    bad(blas.breakdown, 64, (16, 32), ladder=dict(python_n=6, row_n=8, small=8, good=32), names="ladder['small']"),
    bad(blas.transposes, sides=None, exc=TypeError, names="sides"),
    bad(blas.transposes, 64, (16, 8), names="sides"),
    bad(blas.transposes, 64, (8, 16), rounds=10**12, names="rounds"),
    bad(blas.transposes, 64, (8, 16), odd=-1, names="odd"),
    bad(blas.transposes, 10**6, (8, 16), names="n"),
    bad(blas.ladder, 64, python_n=10**12, names="python_n"),
    bad(blas.ladder, 64, row_n=10**12, names="row_n"),
    bad(blas.ladder, 10**6, names="n"),
    bad(blas.ladder, 64, rounds=10**12, names="rounds"),
    bad(blas.ladder, 64, rounds=1, names="rounds"),
    bad(blas.ladder, 64, warmup=10**12, names="warmup"),
    bad(blas.ladder, 64, dtype=None, exc=TypeError, names="dtype"),
    bad(blas.Breakdown, 64, None, None, None, exc=TypeError, names="sides"),
    bad(blas.rates, [], names="rungs"),
    bad(blas.rates, "rungs", exc=TypeError, names="rungs"),
    bad(blas.rates, [1, 2], exc=TypeError, names="rungs[0]"),
    bad(blas.rates, [blas.Rung("a", 8, 1e-3, 1.0, 0.0, True), blas.Rung("b", 8, 1e-3, 1.0, 0.0, True)],
        names="rungs"),
    bad(blas.Transposes, 64, 4, 1e-3, 1e-3, None, (1e-3,), exc=TypeError, names="sides"),
    bad(blas.Transposes, 64, 4, 1e-3, 1e-3, (16, 8), (1e-3, 1e-3), names="sides"),
]
