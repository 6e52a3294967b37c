"""``python -m npukit.teach.bank gift [-o FILE] [--seed N] [--units 1,2,pre]`` and ``… counts``."""

from __future__ import annotations

import argparse
import pathlib
import sys

from . import KINDS, UNITS, counts, questions, to_gift


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m npukit.teach.bank", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gift", help="write the bank in Moodle's GIFT format")
    g.add_argument("-o", "--output", help="file to write (default: standard output)")
    g.add_argument("--seed", type=int, help="draw the numeric questions' numbers from this seed")
    g.add_argument("--units", help="comma-separated units to include, e.g. 1,2,3b,pre (default: all)")
    sub.add_parser("counts", help="print the number of questions per unit and kind")
    args = parser.parse_args(argv)
    if args.command == "counts":
        print("unit  " + "  ".join(f"{k:>7}" for k in KINDS) + "    total")
        for unit, by_kind in counts().items():
            print(f"{unit:<5} " + "  ".join(f"{by_kind[k]:>7}" for k in KINDS) + f"  {sum(by_kind.values()):>7}")
        return 0
    units = None
    if args.units is not None:
        units = list(dict.fromkeys(u.strip() for u in args.units.split(",")))     # each unit once, in order
        unknown = [u for u in units if u not in UNITS]
        if unknown or not units:
            g.error(f"--units must be a comma-separated list of {', '.join(UNITS)}; got {args.units!r}")
    if args.seed is not None and args.seed < 0:
        g.error(f"--seed must be a non-negative integer, got {args.seed}")
    chosen = [q for u in (units or [None]) for q in questions(u)]
    text = to_gift(chosen, seed=args.seed)
    if args.output:
        pathlib.Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {len(chosen)} questions to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
