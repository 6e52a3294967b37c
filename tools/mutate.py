"""Mutation testing by hand-picked single-line mutants: does some test fail when the code is wrong?

Each mutant replaces one exact piece of one line of an ``npukit`` module
(``old`` must occur exactly once in the file) and runs the tests named for
it; a mutant is *killed* when they fail and *survives* when they pass. The
file is restored after every mutant, whatever happens (also on Ctrl-C).
Mutants live in ``tools/mutants.py`` as ``MUTANTS = [(file, old, new, tests), ...]``.

Usage (from the repository root, with the course's virtual environment)::

    .venv/bin/python tools/mutate.py                 # every mutant
    .venv/bin/python tools/mutate.py qarith ptq      # mutants whose file contains one of these words

Not part of ``make test``: each mutant runs a test file (seconds to a
minute), and the point is the report, read by a person.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))


def run(tests: list[str], timeout: float = 600) -> bool:
    """True if the tests pass."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow", *tests]
    try:
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=timeout).returncode == 0
    except subprocess.TimeoutExpired:
        return False  # a mutant that hangs the tests is caught by them (as a timeout)


def main(argv: list[str]) -> int:
    from mutants import MUTANTS

    chosen = [m for m in MUTANTS if not argv or any(w in m[0] for w in argv)]
    for file, old, new, _ in chosen:
        text = (ROOT / file).read_text()
        if text.count(old) != 1:
            print(f"!! {file}: the mutated text must occur once, found {text.count(old)}: {old!r}")
            return 2
    for tests in sorted({tuple(m[3]) for m in chosen}):
        if not run(list(tests)):
            print(f"!! the unmutated code fails {' '.join(tests)}: fix that first")
            return 2
    survived = []
    for k, (file, old, new, tests) in enumerate(chosen, 1):
        path = ROOT / file
        original = path.read_text()
        t0 = time.perf_counter()
        try:
            path.write_text(original.replace(old, new))
            killed = not run(list(tests))
        finally:
            path.write_text(original)
        verdict = "killed  " if killed else "SURVIVED"
        print(f"{k:3d} {verdict} {time.perf_counter() - t0:5.1f} s  {file}: {old.strip()!r} -> {new.strip()!r}",
              flush=True)
        if not killed:
            survived.append((file, old, new))
    print(f"\n{len(chosen) - len(survived)} of {len(chosen)} mutants killed")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
