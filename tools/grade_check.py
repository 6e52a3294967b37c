"""Grade every lab of a fresh clone three ways, and time a class of submissions (issue 20).

    python tools/grade_check.py [--class 30] [--class-lab 01_tensors] [--seed N]

1. Clones this repository's committed state (``git clone``) into a temporary folder and grades, with the
   clone's ``labs/`` as the instructor's labs, for every lab: its student edition (must score 0), its
   instructor edition (must score full points; a timing prediction that misses under load says so and is
   reported), and a notebook with every answer wrong whose solution cells also carry the issue's universal
   attacks: a ``pre_run_cell`` hook that marks the ledger passed, a thread doing the same, the function
   flipping the ledger, the watch disarmed (must score 0).
   The last is graded a second time with the screen off, so that the attacks run in the learner's
   process (with the screen, their cells are refused before they run): 0 again.
2. With ``--class N``: grades N submissions of one lab in one call, as an instructor would a class (a
   third the instructor's answers, a third half of them, a third all wrong), every one run, and reports
   the time.

Prints one line per grading and exits 1 if a score is not what it must be. The npukit that grades is this
checkout's (the labs and student editions are the clone's). ``make grade-check`` runs it.
"""

from __future__ import annotations

import argparse
import copy
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time

from npukit.teach import grade

ROOT = pathlib.Path(__file__).resolve().parent.parent
HOOK = ("get_ipython().events.register('pre_run_cell', lambda *a: [e.update(status='passed') for e in "
        "__import__('npukit.teach.core', fromlist=['core'])._LEDGER])\n")
THREAD = ("import threading\nfrom npukit.teach import core\n"
          "threading.Thread(target=lambda: [e.update(status='passed') for _ in iter(int, 1) for e in core._LEDGER],"
          " daemon=True).start()\n")
FLIP = "from npukit.teach import core\nfor e in core._LEDGER:\n    e['status'] = 'passed'\n"
DISARM = ("import sys\nfor c in sys.getprofile().__closure__ or ():\n    if hasattr(c.cell_contents, 'called'):\n"
          "        c.cell_contents.called = None\n")


def _wrong(name: str, function: bool, attack: str, inside: bool) -> str:
    """A wrong answer (0) defining ``name``, with ``attack`` before it or inside the function."""
    if not function:
        return f"{attack}\n{name} = 0\n"
    if inside:
        body = "".join(f"    {line}\n" for line in attack.splitlines())
        return f"def {name}(*args, **kwargs):\n{body}    return 0\n"
    return f"{attack}\ndef {name}(*args, **kwargs):\n    return 0\n"


def hooked_wrong(handout: dict, lab: str, attacks: list | None = None) -> dict:
    """The handout with every solution cell a wrong answer and the universal attacks spread over them."""
    nb = copy.deepcopy(handout)
    attacks = attacks or [(HOOK, False), (THREAD, False), (FLIP, True), (DISARM, True)]
    for k, ex in enumerate(grade.exercises(nb, lab)):
        cell = nb["cells"][ex.solution]
        text = grade._source(cell)
        function = not re.search(rf"^{re.escape(ex.defines or '')}\s*=", text, re.M)
        attack, inside = attacks[k % len(attacks)]
        cell["source"] = _wrong(ex.defines, function, attack, inside)
    return nb


def half_done(instructor: dict, handout: dict, lab: str) -> dict:
    nb = copy.deepcopy(handout)
    for k, ex in enumerate(grade.exercises(nb, lab)):
        if k % 2 == 0:
            src = grade._source(instructor["cells"][ex.solution])
            nb["cells"][ex.solution]["source"] = re.sub(r"(?m)^[ \t]*### (BEGIN|END) SOLUTION[^\n]*\n?", "", src)
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class", dest="size", type=int, default=0, help="also grade a class of this many")
    parser.add_argument("--class-lab", default="01_tensors")
    parser.add_argument("--seed", type=int, default=20260303)
    args = parser.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="npukit-clone-") as tmp:
        clone = pathlib.Path(tmp) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        head = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        print(f"fresh clone of {head} in {clone}", flush=True)
        labs, subs = clone / "labs", pathlib.Path(tmp) / "submissions"
        for path in sorted(labs.glob("*.ipynb")):
            lab = path.stem
            handout = json.loads((labs / "student" / path.name).read_text(encoding="utf-8"))
            (subs / lab / "wrong").mkdir(parents=True)
            wrong = subs / lab / "wrong" / path.name
            wrong.write_text(json.dumps(hooked_wrong(handout, lab)), encoding="utf-8")
            start = time.monotonic()
            student, instructor, attacked = grade.grade([labs / "student" / path.name, path, wrong], labs,
                                                        seed=args.seed)
            # the screen refuses every attack's cell before it runs; graded without it, the attacks run in
            # the learner's process, where nothing decides the grade
            unscreened = grade._grade_one(wrong, grade._load_labs(labs), lab, args.seed, 120.0, None,
                                          screening=False)
            seconds = time.monotonic() - start
            missed = [e for e in instructor["exercises"] if e["status"] != "passed"]
            timing = all("measured" in e["message"] for e in missed)
            ok = (student["score"] == 0 and attacked["score"] == 0 and unscreened["score"] == 0
                  and (instructor["score"] == instructor["max_score"] or timing))
            bad += not ok
            note = "" if not missed else "; missed: " + "; ".join(f"{e['id']}: {e['message'][:90]}" for e in missed)
            print(f"{lab}: student edition {student['score']}/{student['max_score']}, instructor edition "
                  f"{instructor['score']}/{instructor['max_score']}, all wrong with the universal attacks "
                  f"{attacked['score']}/{attacked['max_score']}, the same without the screen "
                  f"{unscreened['score']}/{unscreened['max_score']} ({seconds:.0f} s){note}{'' if ok else '  WRONG'}",
                  flush=True)
        if args.size:
            lab = args.class_lab
            instructor = json.loads((labs / f"{lab}.ipynb").read_text(encoding="utf-8"))
            handout = json.loads((labs / "student" / f"{lab}.ipynb").read_text(encoding="utf-8"))
            plain_wrong = hooked_wrong(handout, lab, attacks=[("", False)])   # wrong answers the screen lets run
            kinds = [instructor, half_done(instructor, handout, lab), plain_wrong]
            paths = []
            for k in range(args.size):
                p = subs / "class" / f"student{k:02d}" / f"{lab}.ipynb"
                p.parent.mkdir(parents=True)
                p.write_text(json.dumps(kinds[k % 3]), encoding="utf-8")
                paths.append(p)
            start = time.monotonic()
            results = grade.grade(paths, labs, seed=args.seed)
            seconds = time.monotonic() - start
            scores = [r["score"] for r in results]
            print(f"a class of {args.size} submissions of {lab}: graded in {seconds:.0f} s "
                  f"({seconds / args.size:.1f} s each); scores {sorted(set(scores))}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
