"""Run each lab headless N times with a per-cell limit, and report any cell that froze (issue 20).

    python tools/headless_runs.py [--runs 10] [--limit 60] [--no-patch] [labs/05_systolic.ipynb ...]

Each run executes the lab in a fresh kernel with nbclient, as ``jupyter nbconvert --execute``, nbgrader
and the project's tests do, with npukit's fix for the lost wake-up applied (``--no-patch``: without it,
to see the stall; npukit/_jupyter.py explains it). A cell "froze" when it ran into the limit. Prints one
line per run and a summary per lab (the slowest time of each cell over the runs); exits 1 if any froze.
Nothing is saved. ``make headless-check`` runs it; the cheap version in ``make test`` is
tests/test_infra.py's widget test.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

from npukit._jupyter import run_notebook


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labs", nargs="*", help="lab notebooks (default: every labs/*.ipynb)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--limit", type=float, default=60.0, help="seconds allowed to each cell")
    parser.add_argument("--no-patch", action="store_true", help="run without the fix (to see the stall)")
    args = parser.parse_args(argv)
    labs = [pathlib.Path(p) for p in args.labs] or sorted(pathlib.Path("labs").glob("*.ipynb"))
    frozen_total = 0
    for lab in labs:
        slowest: dict[int, float] = {}
        frozen = 0
        for k in range(args.runs):
            start = time.monotonic()
            try:
                times = run_notebook(lab, timeout=args.limit, save=False, patch=not args.no_patch, allow_errors=True)
                error = next((f"cell {i}: {e}" for i, _, e in times if e), None)   # reported; the run went on
            except Exception as exc:  # a frozen cell ends the run with nbclient's CellTimeoutError
                times, error = [], f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            hit = [i for i, seconds, _ in times if seconds >= 0.95 * args.limit]
            for i, seconds, _ in times:
                slowest[i] = max(slowest.get(i, 0.0), seconds)
            froze = bool(hit) or (error is not None and "Timeout" in error)
            frozen += froze
            print(f"{lab.name} run {k + 1}/{args.runs}: {time.monotonic() - start:6.1f} s"
                  + (f"  FROZE (cells {hit or '?'}: {error or 'at the limit'})" if froze else "")
                  + (f"  error: {error}" if error and not froze else ""), flush=True)
        top = sorted(slowest.items(), key=lambda kv: -kv[1])[:3]
        print(f"{lab.name}: {frozen} of {args.runs} runs froze; slowest cells (max over runs): "
              + ", ".join(f"cell {i} {s:.1f} s" for i, s in top), flush=True)
        frozen_total += frozen
    print(f"headless runs: {frozen_total} frozen run(s) in {len(labs)} lab(s) × {args.runs}")
    return 1 if frozen_total else 0


if __name__ == "__main__":
    sys.exit(main())
