"""Command line: ``python -m npukit.teach student labs -o student/``."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .student import make_student_edition


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m npukit.teach student labs -o student/``."""
    parser = argparse.ArgumentParser(prog="python -m npukit.teach", description="Lab tools of Tensors on Silicon.")
    sub = parser.add_subparsers(dest="command", required=True)
    st = sub.add_parser("student", help="write the student edition of the labs")
    st.add_argument("src", help="a lab notebook or a folder of them")
    st.add_argument("-o", "--out", default="student", help="output folder (default: student/)")
    args = parser.parse_args(argv)
    written = make_student_edition(args.src, args.out)
    for p in written:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
