"""Exercise checkers for the labs, and the student-edition generator.

A checker calls the learner's function on *fresh* cases — inputs the lab never
showed — drawn from a seeded RNG, and compares each answer with an independent
reference (NumPy, ONNX's reference evaluator, a brute-force loop), never with
the lab's own solution. It prints one line on success and raises
``AssertionError`` naming the failing input otherwise.

The student edition (``python -m npukit.teach student labs -o student/``)
replaces everything between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in
cells tagged ``solution`` by ``raise NotImplementedError()``, and clears
outputs and widget state, so every ``check`` cell fails until the learner has
done the exercise. See the instructor guide (chapters/instructor.md).
"""

from __future__ import annotations

import argparse
import copy
import json
import pathlib
import re
import sys
from typing import Any, Callable, Iterable, Sequence

import numpy as np

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"

__all__ = ["check", "make_student_notebook", "make_student_edition", "main"]


def _show(x: Any) -> str:
    if isinstance(x, np.ndarray):
        s = np.array2string(x, threshold=20, precision=4)
        return f"array(shape={x.shape}, dtype={x.dtype}) {s}"
    return repr(x)


def _same(got: Any, want: Any, rtol: float, atol: float) -> bool:
    if isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
        got_a, want_a = np.asarray(got), np.asarray(want)
        if got_a.shape != want_a.shape:
            return False
        if want_a.dtype.kind in "fc":
            return bool(np.allclose(got_a, want_a, rtol=rtol, atol=atol, equal_nan=True))
        return bool(np.array_equal(got_a, want_a))
    if isinstance(want, float):
        return isinstance(got, (int, float, np.number)) and bool(np.isclose(got, want, rtol=rtol, atol=atol))
    if isinstance(want, (tuple, list)) and isinstance(got, (tuple, list)):
        return len(got) == len(want) and all(_same(g, w, rtol, atol) for g, w in zip(got, want))
    return got == want


def check(
    name: str,
    learner: Callable[..., Any],
    cases: Iterable[tuple],
    reference: Callable[..., Any],
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    compare: Callable[[Any, Any], bool] | None = None,
) -> int:
    """Check ``learner(*case)`` against ``reference(*case)`` for every case.

    Parameters
    ----------
    name : str
        The exercise's name, used in messages.
    learner : callable
        The learner's function.
    cases : iterable of tuple
        Argument tuples. Arrays in them are copied before each call, so a
        learner that writes into its input cannot change the reference's input.
    reference : callable
        An independent way to get the right answer (NumPy, a brute-force loop).
    rtol, atol : float
        Tolerances for floating-point answers.
    compare : callable, optional
        ``compare(got, want) -> bool`` replacing the default comparison.

    Returns
    -------
    int
        The number of cases checked.

    Raises
    ------
    TypeError
        If ``learner`` or ``reference`` is not callable.
    AssertionError
        On the first case where the answers differ, naming the input.

    Examples
    --------
    >>> check("square", lambda x: x * x, [(2,), (3,)], lambda x: x ** 2)
    ✓ square: 2 fresh cases agree with the reference.
    2
    """
    if not callable(learner):
        raise TypeError(f"learner must be callable, got {type(learner).__name__}")
    if not callable(reference):
        raise TypeError(f"reference must be callable, got {type(reference).__name__}")
    n = 0
    for case in cases:
        want = reference(*copy.deepcopy(case))
        got = learner(*copy.deepcopy(case))
        ok = compare(got, want) if compare is not None else _same(got, want, rtol, atol)
        if not ok:
            args = ", ".join(_show(a) for a in case)
            raise AssertionError(
                f"{name}: wrong answer for input ({args}).\n  expected: {_show(want)}\n  got:      {_show(got)}"
            )
        n += 1
    print(f"✓ {name}: {n} fresh cases agree with the reference.")
    return n


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---- Chapter 1: Tensors are memory ------------------------------------------


# ---- Chapter 2: Layouts ------------------------------------------------------


# ---- Chapter 3: Graphs and the roofline --------------------------------------


# ---- Chapter 4: GEMM and tiling ----------------------------------------------


# ---- Student edition ---------------------------------------------------------

_SOLUTION_RE = re.compile(
    r"^(?P<indent>[ \t]*)" + re.escape(BEGIN) + r"[^\n]*\n.*?^[ \t]*" + re.escape(END) + r"[^\n]*(\n|$)",
    re.S | re.M,
)


def strip_solutions(source: str) -> str:
    """Replace each ``### BEGIN SOLUTION`` … ``### END SOLUTION`` block.

    The block, markers included, becomes ``raise NotImplementedError()`` at
    the indentation of the ``BEGIN`` marker.

    Raises
    ------
    ValueError
        If the markers are unbalanced.

    Examples
    --------
    >>> src = "def f(x):\\n    ### BEGIN SOLUTION\\n    return 2 * x\\n    ### END SOLUTION\\n"
    >>> print(strip_solutions(src))
    def f(x):
        raise NotImplementedError()
    <BLANKLINE>
    """
    if source.count(BEGIN) != source.count(END):
        raise ValueError("source has unbalanced '### BEGIN SOLUTION' / '### END SOLUTION' markers")
    out = _SOLUTION_RE.sub(lambda m: f"{m.group('indent')}raise NotImplementedError()\n", source)
    if BEGIN in out or END in out:
        raise ValueError("source has a '### END SOLUTION' before its '### BEGIN SOLUTION'")
    return out


def make_student_notebook(nb: dict) -> dict:
    """Return a student copy of a notebook (nbformat JSON as a dict).

    Cells tagged ``solution`` lose their solutions; every code cell loses its
    outputs and execution count; notebook-level widget state is removed.

    Raises
    ------
    ValueError
        If a ``solution`` cell has no markers, or a cell without the tag has
        markers (a solution that would leak into the student edition).
    """
    nb = copy.deepcopy(nb)
    nb.get("metadata", {}).pop("widgets", None)
    for i, cell in enumerate(nb.get("cells", [])):
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        tags = cell.get("metadata", {}).get("tags", [])
        if "solution" in tags:
            if BEGIN not in src:
                raise ValueError(f"cell {i} is tagged 'solution' but has no '{BEGIN}' marker")
            src = strip_solutions(src)
        elif BEGIN in src or END in src:
            raise ValueError(f"cell {i} has solution markers but is not tagged 'solution'")
        cell["source"] = src
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return nb


def make_student_edition(src: str | pathlib.Path, out: str | pathlib.Path) -> list[pathlib.Path]:
    """Write the student edition of every lab notebook in ``src`` to ``out``.

    Parameters
    ----------
    src : path
        A notebook, or a folder whose ``*.ipynb`` files are labs.
    out : path
        The output folder (created if needed).

    Returns
    -------
    list of pathlib.Path
        The notebooks written.

    Raises
    ------
    FileNotFoundError
        If ``src`` does not exist or holds no notebooks.
    """
    src, out = pathlib.Path(src), pathlib.Path(out)
    if not src.exists():
        raise FileNotFoundError(f"src {str(src)!r} does not exist")
    paths = [src] if src.is_file() else sorted(src.glob("*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"src {str(src)!r} holds no .ipynb notebooks")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for p in paths:
        nb = json.loads(p.read_text(encoding="utf-8"))
        target = out / p.name
        target.write_text(json.dumps(make_student_notebook(nb), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(target)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: ``python -m npukit.teach student labs -o student/``."""
    parser = argparse.ArgumentParser(prog="python -m npukit.teach", description=__doc__.split("\n\n")[0])
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
