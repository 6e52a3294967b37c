"""Command line of the lab tools: ``python -m npukit.teach student|grade|metadata …``.

* ``student labs -o labs/student`` writes the student edition;
* ``grade SUBMISSION.ipynb … [--csv FILE] [--json] [--seed N]`` grades
  submissions with the instructor's own checks (:mod:`npukit.teach.grade`);
* ``metadata labs/ [--check]`` writes (or checks) the labs' nbgrader metadata;
* ``minutes submitted/ [--idle M] [--json]`` adds up a class's minutes per lab
  from the time logs (:mod:`npukit.teach.timelog`).

See the instructor guide (chapters/instructor.md).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from typing import Sequence

from . import grade as grading
from . import timelog
from .student import make_student_edition


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m npukit.teach", description="Lab tools of Tensors on Silicon.")
    sub = parser.add_subparsers(dest="command", required=True)
    st = sub.add_parser("student", help="write the student edition of the labs")
    st.add_argument("src", help="a lab notebook or a folder of them")
    st.add_argument("-o", "--out", default="student", help="output folder (default: student/)")
    gr = sub.add_parser("grade", help="grade submissions with the instructor's own checks")
    gr.add_argument("submissions", nargs="+", help="submitted notebooks, or folders of them")
    gr.add_argument("--labs", default=None, help="the instructor's labs folder (default: the course's labs/)")
    gr.add_argument("--lab", default=None, help="grade every submission as this lab (e.g. 01_tensors)")
    gr.add_argument("--csv", default=None, metavar="FILE", help="write one row per submission to FILE")
    gr.add_argument("--json", action="store_true", help="print the results as JSON")
    gr.add_argument("--seed", type=int, default=None,
                    help="the secret grading seed (default: $NPUKIT_GRADE_SEED, else a random one, printed)")
    gr.add_argument("--timeout", type=float, default=120.0, help="seconds allowed to each cell (default: 120)")
    gr.add_argument("--keep", default=None, metavar="DIR", help="write the executed grading notebooks to DIR")
    gr.add_argument("--students", default=None, metavar="CSV",
                    help="whose each submission is: a CSV with columns submission,student (default: the folder "
                         "each submission was collected in; never the file's name)")
    md = sub.add_parser("metadata", help="write the nbgrader cell metadata of the labs' solution and check cells")
    md.add_argument("src", help="a lab notebook or a folder of them")
    md.add_argument("--check", action="store_true", help="change nothing; exit 1 if anything would change")
    mi = sub.add_parser("minutes", help="a class's minutes per lab, from the students' time logs")
    mi.add_argument("paths", nargs="+", help=f"log files, or folders searched for {timelog.LOG_NAME}")
    mi.add_argument("--labs", default=None, help="the instructor's labs folder (default: the course's labs/)")
    mi.add_argument("--idle", type=float, default=timelog.IDLE_MINUTES,
                    help=f"a gap longer than this many minutes is a break (default: {timelog.IDLE_MINUTES:g})")
    mi.add_argument("--json", action="store_true", help="print the result as JSON, one row per log included")
    args = parser.parse_args(argv)
    if args.command == "minutes":
        logs = timelog.find_logs(args.paths)
        if not logs:
            print(f"no {timelog.LOG_NAME} under {' '.join(args.paths)}", file=sys.stderr)
            return 1
        result = timelog.summary(logs, grading.checks_by_lab(args.labs), idle=args.idle)
        print(json.dumps(result, indent=1, ensure_ascii=False) if args.json else timelog.report(result))
        return 0
    if args.command == "student":
        for p in make_student_edition(args.src, args.out):
            print(f"wrote {p}")
        return 0
    if args.command == "metadata":
        src = pathlib.Path(args.src)
        paths = [src] if src.is_file() else sorted(src.glob("*.ipynb"))
        changes = [c for p in paths for c in grading.set_metadata(p, write=not args.check)]
        for c in changes:
            print(("would set " if args.check else "set ") + c)
        return 1 if (changes and args.check) else 0
    results = grading.grade(args.submissions, args.labs, seed=args.seed, timeout=args.timeout, keep=args.keep,
                            lab=args.lab, students=args.students)
    if args.csv:
        pathlib.Path(args.csv).write_text(grading.to_csv(results), encoding="utf-8")
    print(json.dumps(results, indent=1, ensure_ascii=False) if args.json else grading.report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
