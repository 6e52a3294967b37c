"""Time each lab's headless execution and write npukit/data/lab_times.json (read by the instructor guide).

    .venv/bin/python tools/time_labs.py [--rounds 3] [--grade] [LAB.ipynb ...]

Each lab is copied to a temporary folder and executed top to bottom in a fresh kernel
(npukit._jupyter.run_notebook, outputs not saved), ``--rounds`` times, labs interleaved
round by round. The file records, per lab, every round's wall-clock seconds (kernel start
included; a cell that raises is recorded and the run goes on), the machine (npukit.measure.machine_summary), the 1-minute load average before
each round and the date. This is the *machine's* time to run the cells, not a student's
time to do the lab: the guide says so and says how to measure the students'.

Naming labs times only those again: the others' rounds are kept if the file was written on the same
machine (``machine_summary``, which includes the date). ``--grade`` times instead the grader (``npukit.teach.grade.grade``) on each lab's instructor edition,
``--rounds`` times, and stores the seconds per submission under ``grade_seconds`` (the other entries of the
file are kept).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "npukit" / "data" / "lab_times.json"


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT))
    from npukit import _jupyter, measure

    parser = argparse.ArgumentParser()
    parser.add_argument("labs", nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--grade", action="store_true")
    args = parser.parse_args(argv)
    if args.grade:
        return _grading(args)
    labs = [pathlib.Path(p) for p in args.labs] or sorted((ROOT / "labs").glob("[0-9]*.ipynb"))
    record = {"machine": measure.machine_summary(), "cpus": os.cpu_count(),
              "date": datetime.date.today().isoformat(), "rounds": args.rounds, "labs": {}}
    old = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    if args.labs and old.get("machine") == record["machine"]:
        # timing some labs again keeps the others' rounds, taken on the same machine; the grading times stay
        record["labs"] = {k: v for k, v in old.get("labs", {}).items() if k not in {p.stem for p in labs}}
    if "grade_seconds" in old:
        record["grade_seconds"] = old["grade_seconds"]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for lab in labs:
                copy = pathlib.Path(tmp) / lab.name
                shutil.copy(lab, copy)
                load = os.getloadavg()[0]
                t0 = time.monotonic()
                cells = _jupyter.run_notebook(copy, timeout=300, save=False, allow_errors=True)
                wall = time.monotonic() - t0
                errors = [f"cell {i}: {e[:120]}" for i, _, e in cells if e]
                entry = record["labs"].setdefault(lab.stem, {"seconds": [], "load1": [], "errors": []})
                entry["seconds"].append(round(wall, 2))
                entry["load1"].append(round(load, 2))
                entry["errors"] += errors
                print(f"round {r + 1}: {lab.stem} {wall:.1f} s (load {load:.1f}){' ' + str(errors) if errors else ''}",
                      flush=True)
            OUT.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


def _grading(args: argparse.Namespace) -> int:
    from npukit.teach import grade

    record = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    labs = [pathlib.Path(p) for p in args.labs] or sorted((ROOT / "labs").glob("[0-9]*.ipynb"))
    times: dict = {"date": datetime.date.today().isoformat(), "labs": {}}
    if args.labs:  # grading some labs again keeps the others' times
        times["labs"] = {k: v for k, v in record.get("grade_seconds", {}).get("labs", {}).items()
                         if k not in {p.stem for p in labs}}
    for r in range(args.rounds):
        for lab in labs:
            load = os.getloadavg()[0]
            t0 = time.monotonic()
            result = grade.grade([lab], ROOT / "labs", seed=1000 + r, lab=lab.stem)[0]
            wall = time.monotonic() - t0
            entry = times["labs"].setdefault(lab.stem, {"seconds": [], "load1": [], "score": []})
            entry["seconds"].append(round(wall, 2))
            entry["load1"].append(round(load, 2))
            entry["score"].append(f"{result['score']}/{result['max_score']}")
            print(f"grading round {r + 1}: {lab.stem} {wall:.1f} s, {result['score']}/{result['max_score']} "
                  f"(load {load:.1f})", flush=True)
            record["grade_seconds"] = times
            OUT.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
