"""The student edition of the labs: solutions out, outputs cleared.

``python -m npukit.teach student labs -o student/`` replaces everything between
``### BEGIN SOLUTION`` and ``### END SOLUTION`` in cells tagged ``solution`` by
``raise NotImplementedError()``, and clears outputs and widget state, so every
``check`` cell fails until the learner has done the exercise. See the
instructor guide (chapters/instructor.md).
"""

from __future__ import annotations

import copy
import json
import os
import pathlib
import re
from typing import Any

from .. import _check

__all__ = [
    "strip_solutions",
    "make_student_notebook",
    "make_student_edition",
]


BEGIN = "### BEGIN SOLUTION"


END = "### END SOLUTION"


_SOLUTION_RE = re.compile(
    r"^(?P<indent>[ \t]*)" + re.escape(BEGIN) + r"[^\n]*\n.*?^[ \t]*" + re.escape(END) + r"[^\n]*(\n|$)",
    re.S | re.M,
)


_ASSIGN = re.compile(r"^([A-Za-z_]\w*)\s*=(?!=)")


def _stub(m: re.Match) -> str:
    """``raise NotImplementedError()``; for a top-level block of plain assignments, ``name = ...`` each."""
    indent = m.group("indent")
    body = [line for line in m.group(0).splitlines()[1:-1] if line.strip() and not line.lstrip().startswith("#")]
    names = [a.group(1) for line in body if (a := _ASSIGN.match(line))]
    if indent == "" and body and len(names) == len(body):
        return "".join(f"{name} = ...  # your answer\n" for name in dict.fromkeys(names))
    return f"{indent}raise NotImplementedError()\n"


def strip_solutions(source: str) -> str:
    """Replace each ``### BEGIN SOLUTION`` … ``### END SOLUTION`` block.

    The block, markers included, becomes ``raise NotImplementedError()`` at
    the indentation of the ``BEGIN`` marker, so a function still to be
    written raises when called. A block at the top level of a cell made only
    of assignments (``predicted_drop = 0.15``) becomes ``name = ...`` for
    each name instead, so the cell runs and its check says "not attempted".
    See the instructor guide (chapters/instructor.md).

    Raises
    ------
    TypeError
        If ``source`` is not a string.
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
    _check.text(source, "source")
    if source.count(BEGIN) != source.count(END):
        raise ValueError("source has unbalanced '### BEGIN SOLUTION' / '### END SOLUTION' markers")
    out = _SOLUTION_RE.sub(_stub, source)
    if BEGIN in out or END in out:
        raise ValueError("source has a '### END SOLUTION' before its '### BEGIN SOLUTION'")
    return out


def make_student_notebook(nb: dict) -> dict:
    """Return a student copy of a notebook (nbformat JSON as a dict).

    Cells tagged ``solution`` lose their solutions (and the ``hide-input`` tag
    that collapses them in the book); every code cell loses its outputs and
    execution count; notebook-level widget state is removed. See the
    instructor guide (chapters/instructor.md).

    Raises
    ------
    TypeError
        If ``nb`` is not a dict with a list of cell dicts under ``"cells"``.
    ValueError
        If a ``solution`` cell has no markers, or a cell without the tag has
        markers (a solution that would leak into the student edition).

    Examples
    --------
    >>> cell = {"cell_type": "code", "metadata": {"tags": ["solution"]}, "outputs": [1],
    ...         "source": "def f():\\n    ### BEGIN SOLUTION\\n    return 1\\n    ### END SOLUTION\\n"}
    >>> make_student_notebook({"cells": [cell]})["cells"][0]["source"]
    'def f():\\n    raise NotImplementedError()\\n'
    """
    _check_notebook(nb)
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
            # the book collapses solutions ("hide-input"); the learner's cell stays open
            cell["metadata"]["tags"] = [t for t in tags if t != "hide-input"]
        elif BEGIN in src or END in src:
            raise ValueError(f"cell {i} has solution markers but is not tagged 'solution'")
        cell["source"] = src
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
            cell.get("metadata", {}).pop("execution", None)  # the instructor's run's timestamps
    return nb


def make_student_edition(src: str | pathlib.Path, out: str | pathlib.Path) -> list[pathlib.Path]:
    """Write the student edition of every lab notebook in ``src`` to ``out``.

    See the instructor guide (chapters/instructor.md).

    Parameters
    ----------
    src : path
        A notebook, or a folder whose ``*.ipynb`` files are labs.
    out : path
        The output folder (created if needed). When it lies inside the
        repository (``labs/student/``), relative links in the markdown cells
        (``../chapters/01_tensors.md``) are rewritten to work from there.

    Returns
    -------
    list of pathlib.Path
        The notebooks written.

    Raises
    ------
    TypeError
        If ``src`` or ``out`` is not a str or path.
    ValueError
        If ``out`` is an existing file.
    FileNotFoundError
        If ``src`` does not exist or holds no notebooks.

    Examples
    --------
    >>> make_student_edition("labs", "student/")  # doctest: +SKIP
    [PosixPath('student/01_tensors.ipynb'), ...]
    """
    src, out = _check.path(src, "src"), _check.path(out, "out")
    if out.exists() and not out.is_dir():
        raise ValueError(f"out must be a folder, got the file {str(out)!r}")
    if not src.exists():
        raise FileNotFoundError(f"src {str(src)!r} does not exist")
    paths = [src] if src.is_file() else sorted(src.glob("*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"src {str(src)!r} holds no .ipynb notebooks")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for p in paths:
        target = out / p.name
        target.write_text(student_text(p, out), encoding="utf-8")
        written.append(target)
    return written


def student_text(lab: pathlib.Path, out: pathlib.Path) -> str:
    """The text of ``lab``'s student edition as :func:`make_student_edition` writes it into ``out``."""
    nb = make_student_notebook(json.loads(lab.read_text(encoding="utf-8")))
    src, dst = lab.parent.resolve(), out.resolve()
    if dst != src and dst.is_relative_to(src.parent):
        for cell in nb["cells"]:
            if cell.get("cell_type") == "markdown":
                cell["source"] = _relink(cell["source"], src, dst)
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


_LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def _relink(markdown: Any, src: pathlib.Path, out: pathlib.Path) -> str:
    """Rewrite the relative links of a markdown cell written in ``src`` to work from ``out``."""
    text = "".join(markdown) if isinstance(markdown, list) else markdown

    def fix(m: re.Match) -> str:
        link = m.group(2)
        if re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", link, re.I):
            return m.group(0)
        return m.group(1) + pathlib.Path(os.path.relpath(src / link, out)).as_posix() + m.group(3)

    return _LINK.sub(fix, text)


def _check_notebook(nb: Any) -> None:
    _check.instance(nb, "nb", dict, "dict (a notebook's JSON)")
    cells = nb.get("cells", [])
    if not isinstance(cells, list):
        raise TypeError(f"nb['cells'] must be a list of cells, got {type(cells).__name__}")
    for i, cell in enumerate(cells):
        _check.instance(cell, f"nb['cells'][{i}]", dict, "dict (a notebook cell)")
