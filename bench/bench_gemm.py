"""Chapter 4's goal: tiled_matmul with a good tile reaches >= 0.7x numpy.matmul.

The GEMM ladder (pure Python, row-vectorised, tiled with a small and with a
good tile) is printed as throughput ratios to ``numpy.matmul`` at the same
size, each pair timed alternately in the same run, so that whatever else the
machine is doing slows both sides of a ratio alike. The goal is judged at
1024³ float32.

Run alone with ``.venv/bin/python bench/bench_gemm.py``; ``make bench`` runs
it with the others.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from npukit import gemm, measure  # noqa: E402

GOAL = 0.7
GOOD_TILE = (256, 1024, 1024)


def _once(f: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def paired(fn: Callable[[], Any], ref: Callable[[], Any], repeat: int, warmup: int = 1) -> tuple[float, float, float]:
    """Time ``fn`` and ``ref`` in alternation; return both best-of times and the median per-round ratio.

    Each round runs each side three times back to back and keeps its fastest
    (so a BLAS call whose threads woke up slowly after a long pure-Python run
    does not count), the two sides in ABBA order so that neither always goes
    first. Both sides get the same treatment. Best-of is the least-disturbed
    run of each on a shared machine; the median of the per-round ratios
    ``t_ref / t_fn`` shows what a typical run gives.
    """
    for _ in range(warmup):
        fn()
        ref()
    t_fn: list[float] = []
    t_ref: list[float] = []
    for i in range(repeat):
        pair = [(t_fn, fn), (t_ref, ref)]
        for times, f in pair if i % 2 == 0 else pair[::-1]:
            times.append(min(_once(f) for _ in range(3)))
    ratios = [r / f for f, r in zip(t_fn, t_ref)]
    return min(t_fn), min(t_ref), statistics.median(ratios)


def main(n: int = 1024, repeat: int = 9) -> int:
    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    env = {k: os.environ.get(k, "unset") for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS")}
    print(f"GEMM ladder on {measure.machine_summary()}")
    print(f"BLAS: {blas.get('name')} {blas.get('version')}; " + ", ".join(f"{k}={v}" for k, v in env.items()))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    cores = measure.cores()
    if load > cores:
        print(f"warning: load average {load:.1f} on {cores} cores; other work competes with BLAS's threads "
              "and the ratios below are unreliable. Re-run on a quiet machine.")
    rng = np.random.default_rng(0)

    def operands(size: int) -> tuple[np.ndarray, np.ndarray]:
        return rng.standard_normal((size, size), dtype=np.float32), rng.standard_normal((size, size), dtype=np.float32)

    rows = []

    def rung(name: str, size: int, fn: Callable[[], Any], A: np.ndarray, B: np.ndarray, reps: int) -> float:
        got = np.asarray(fn(), dtype=np.float32)
        want = A @ B
        err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        if err > 1e-4:
            raise AssertionError(f"{name} at n={size} differs from numpy.matmul: relative error {err:.2e}")
        t_fn, t_ref, med = paired(fn, lambda: A @ B, reps)
        best = t_ref / t_fn
        rows.append((name, size, 2 * size**3 / t_fn / 1e9, best, med))
        return best

    A, B = operands(48)
    a, b = A.tolist(), B.tolist()
    rung("python loops", 48, lambda: gemm._python_matmul(a, b), A, B, 3)
    A, B = operands(256)
    rung("row-vectorised", 256, lambda: gemm._row_matmul(A, B), A, B, 3)
    A, B = operands(n)
    rung("tiled (32, 32, 32)", n, lambda: gemm.tiled_matmul(A, B, (32, 32, 32)), A, B, 3)
    best = rung(f"tiled {GOOD_TILE}", n, lambda: gemm.tiled_matmul(A, B, GOOD_TILE), A, B, repeat)
    rung("numpy.matmul", n, lambda: A @ B, A, B, repeat)

    print(f"\n{'rung':<24}{'n':>6}{'GFLOP/s':>10}{'x numpy (best-of)':>20}{'x numpy (median round)':>24}")
    for name, size, gf, r_best, r_med in rows:
        print(f"{name:<24}{size:>6}{gf:>10.3g}{r_best:>20.3g}{r_med:>24.3g}")
    print("(the numpy.matmul row times numpy against itself: a control whose distance from 1 shows the noise)")
    ok = best >= GOAL
    print(
        f"\ngoal: tiled_matmul with tile {GOOD_TILE} at {n}³ float32 >= {GOAL}x numpy.matmul "
        f"(best-of times): {best:.2f}x -> {'OK' if ok else 'BELOW GOAL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
