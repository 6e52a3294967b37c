"""`make bench`: the course's performance goals, measured side by side in one run.

Each ``bench/bench_*.py`` module has a ``main()`` that measures its chapter's
goal as a ratio of two things timed in the same run on the same machine, and
prints a small table. Ratios, not absolute times, are what carry over from
one machine to another.
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def import_time(repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import npukit"], check=True)
        t1 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((t1 - t0) - (time.perf_counter() - t1))
    return statistics.median(times)


def main() -> int:
    sys.path.insert(0, str(HERE.parent))
    from npukit import measure

    print(f"make bench on {measure.machine_summary()}\n")
    t = import_time()
    print(f"import npukit: {t * 1000:.0f} ms above a bare interpreter (budget 500 ms) -> {'OK' if t <= 0.5 else 'OVER BUDGET'}\n")
    failed = t > 0.5
    for path in sorted(HERE.glob("bench_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        print(f"== {path.stem} ==")
        failed |= bool(module.main())
        print()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
