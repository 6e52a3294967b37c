"""Chapter 5's goals: ``estimate`` is instant, ``simulate`` is fast enough to watch a real GEMM.

* ``systolic.estimate`` over the whole ResNet-18 layer table (run by
  ``accelerator.model_table``), for each of the three dataflows: well under
  a second (the course's budget is 1 ms a layer);
* ``systolic.simulate`` of a 32×32 array on a 256³ integer GEMM, for each
  dataflow: within 2 s, with the product checked against ``numpy.matmul``.

Printed as measured times (best of several runs) and as ratios to the budgets.
Run alone with ``.venv/bin/python bench/bench_systolic.py``; ``make bench``
runs it with the others.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from npukit import accelerator, measure, systolic  # noqa: E402

LAYER_BUDGET = 1e-3      # seconds per layer
SIM_BUDGET = 2.0         # seconds for 32×32 on 256³


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    print(f"systolic arrays on {measure.machine_summary()}")
    layers = accelerator.resnet18_layers()
    gemms = sum(x.count for x in layers)
    failed = False
    print(f"\n{'estimate: ResNet-18 table':<34}{'dataflow':>9}{'table (ms)':>12}{'per layer (µs)':>16}{'x budget':>10}")
    for df in systolic.DATAFLOWS:
        t = _best(lambda: accelerator.model_table(layers, 32, 32, df), 20)
        per = t / len(layers)
        failed |= per > LAYER_BUDGET
        print(f"{f'{len(layers)} rows, {gemms} GEMMs':<34}{df:>9}{t * 1e3:>12.2f}{per * 1e6:>16.1f}"
              f"{per / LAYER_BUDGET:>10.3f}")
    rng = np.random.default_rng(0)
    A = rng.integers(-128, 128, size=(256, 256))
    B = rng.integers(-128, 128, size=(256, 256))
    want = A @ B
    print(f"\n{'simulate: 32×32 array, 256³ int GEMM':<38}{'dataflow':>9}{'cycles':>9}{'time (s)':>10}{'x budget':>10}")
    for df in systolic.DATAFLOWS:
        sim = systolic.simulate(A, B, 32, 32, df)
        if not np.array_equal(sim.product, want):
            raise AssertionError(f"simulate({df}) differs from numpy.matmul")
        t = _best(lambda: systolic.simulate(A, B, 32, 32, df), 3)
        failed |= t > SIM_BUDGET
        print(f"{'':<38}{df:>9}{sim.cycles:>9,}{t:>10.3f}{t / SIM_BUDGET:>10.3f}")
    print(f"\ngoals: estimate <= {LAYER_BUDGET * 1e3:g} ms a layer, simulate <= {SIM_BUDGET:g} s "
          f"-> {'OK' if not failed else 'OVER BUDGET'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
