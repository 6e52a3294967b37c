"""Grade lab submissions with the instructor's own checks; keep the labs' nbgrader metadata.

``python -m npukit.teach grade SUBMISSION.ipynb … [--csv FILE] [--json]``
grades each submission like this:

1. it tells which lab the submission is (from the cells' nbgrader ``grade_id``,
   else the check calls it contains, else its file name);
2. it takes **only the learner's solution cells** (matched by ``grade_id``,
   else by position among the cells tagged ``solution``, else by the function
   they define) and puts them into a fresh copy of the instructor's notebook
   from the course's ``labs/`` folder, so every check cell, and every step
   between, is the instructor's, whatever the submission did to them;
3. it runs that notebook top to bottom in a fresh kernel, with a time limit
   per cell, continuing past errors, and with the secret grading seed
   (``--seed`` or ``NPUKIT_GRADE_SEED``; a random one, printed, if neither is
   given) so the checks draw cases the student has never seen;
4. after every check cell it asks npukit, from inside the kernel, which check
   actually ran and how it ended (a ledger kept by :mod:`npukit.teach.core`)
   and whether anything was patched; a check cell that ended without error but
   ran no genuine check (a replaced ``teach``) fails;
5. it reports each exercise as ``passed`` (its points), ``failed`` (0, with
   the check's one-line message) or ``not attempted`` (0: the solution cell is
   still the handout's), and a total.

``python -m npukit.teach metadata labs/`` writes nbgrader's cell metadata
(``solution``, ``grade``, ``locked``, ``points``, ``grade_id``,
``schema_version``) on every solution and check cell; existing ids and points
are kept, new exercises get their points from :data:`DEFAULT_POINTS`. It is
idempotent: run it again after adding a lab.

See the instructor guide, "Grading" (chapters/instructor.md).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import pathlib
import re
import secrets
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .. import _check
from . import core, student

__all__ = ["DEFAULT_POINTS", "Exercise", "exercises", "set_metadata", "grade", "to_csv", "default_labs"]

#: Points of each exercise, by lab and checker (``check_<name>``), for labs whose
#: notebooks carry no points yet. The notebooks' metadata is the reference once written.
DEFAULT_POINTS: dict[str, dict[str, int]] = {
    "01_tensors": {"strides": 2, "view_or_copy": 2, "aligned_empty": 3, "reshape_view": 3},
    "02_layouts": {"stays_view": 2, "to_blocked": 3, "from_blocked": 2, "im2col_view": 3},
    "03_graphs": {"conv_macs": 2, "attainable": 1, "fold_bn": 3, "live_peak": 3},
    "04_gemm": {"tiled_matmul": 3, "schedule_traffic": 4, "best_tile": 3},
}

_CHECK_CALL = re.compile(r"\bteach\.(check_\w+)\s*\(")
_DEF = re.compile(r"^(?:def\s+(\w+)\s*\(|(\w+)\s*=)", re.M)
_VERDICT = "NPUKIT-VERDICT "
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Exercise:
    """One graded exercise of a lab: its solution cell and its check cell."""

    solution: int          # cell index of the solution cell
    check: int             # cell index of the check cell
    checker: str           # "check_strides"
    id: str                # the solution cell's grade_id ("ex1-strides")
    check_id: str          # the check cell's grade_id ("check1-strides")
    points: int
    defines: str | None = None   # the name the solution cell defines ("strides_by_hand")


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _tags(cell: dict) -> list:
    return cell.get("metadata", {}).get("tags", [])


def _lab_number(name: str) -> int:
    m = re.match(r"(\d+)", name)
    return int(m.group(1)) if m else 0


def exercises(nb: dict, lab: str = "") -> list[Exercise]:
    """The exercises of a lab notebook: the k-th ``solution`` cell with the k-th ``check`` cell.

    Ids and points come from the cells' nbgrader metadata when present, else
    from the checker's name and :data:`DEFAULT_POINTS` (1 point if unlisted).

    Raises
    ------
    ValueError
        If the numbers of solution and check cells differ, a check cell comes
        before its solution cell, or a check cell calls no ``teach.check_*``.

    Examples
    --------
    >>> cells = [{"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": "def f(x):\\n    return x\\n"},
    ...          {"cell_type": "code", "metadata": {"tags": ["check"]}, "source": "teach.check_strides(f)"}]
    >>> exercises({"cells": cells}, "01_tensors")[0]
    Exercise(solution=0, check=1, checker='check_strides', id='ex1-strides', check_id='check1-strides', points=2, defines='f')
    """
    cells = nb.get("cells", [])
    sols = [i for i, c in enumerate(cells) if c.get("cell_type") == "code" and "solution" in _tags(c)]
    checks = [i for i, c in enumerate(cells) if c.get("cell_type") == "code" and "check" in _tags(c)]
    if len(sols) != len(checks):
        raise ValueError(f"{lab or 'notebook'}: {len(sols)} solution cells but {len(checks)} check cells")
    out, n = [], _lab_number(lab)
    for s, c in zip(sols, checks):
        if c < s:
            raise ValueError(f"{lab or 'notebook'}: check cell {c} comes before its solution cell {s}")
        calls = _CHECK_CALL.findall(_source(cells[c]))
        if not calls:
            raise ValueError(f"{lab or 'notebook'}: check cell {c} calls no teach.check_*")
        checker = calls[0]
        slug = checker.removeprefix("check_")
        meta_s = cells[s].get("metadata", {}).get("nbgrader", {})
        meta_c = cells[c].get("metadata", {}).get("nbgrader", {})
        points = meta_c.get("points", DEFAULT_POINTS.get(lab, {}).get(slug, 1))
        m = _DEF.search(_source(cells[s]).replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", ""))
        out.append(Exercise(s, c, checker, meta_s.get("grade_id", f"ex{n}-{slug.replace('_', '-')}"),
                            meta_c.get("grade_id", f"check{n}-{slug.replace('_', '-')}"), int(points),
                            (m.group(1) or m.group(2)) if m else None))
    ids = [e.id for e in out] + [e.check_id for e in out]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{lab or 'notebook'}: grade ids are not unique: {ids}")
    return out


def _write_notebook(path: pathlib.Path, nb: dict) -> None:
    path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def set_metadata(path: str | pathlib.Path, *, write: bool = True) -> list[str]:
    """Give every solution and check cell of a lab notebook nbgrader's cell metadata.

    Existing ``grade_id`` and ``points`` are kept; the other fields are set to
    what nbgrader expects of an "autograded answer" cell (solution) and an
    "autograder tests" cell (check). See the instructor guide (chapters/instructor.md).

    Parameters
    ----------
    path : path
        A lab notebook.
    write : bool
        Write the notebook back if anything changed (False: only report).

    Returns
    -------
    list of str
        What changed (empty if the metadata was already complete).

    Raises
    ------
    TypeError
        If ``path`` is not a str or path.
    FileNotFoundError
        If it does not exist.
    ValueError
        If the notebook's exercises are malformed (see :func:`exercises`).

    Examples
    --------
    >>> set_metadata("labs/01_tensors.ipynb", write=False)  # doctest: +SKIP
    []
    """
    path = _check.path(path, "path")
    if not path.is_file():
        raise FileNotFoundError(f"path {str(path)!r} does not exist")
    nb = json.loads(path.read_text(encoding="utf-8"))
    changes = []
    for ex in exercises(nb, path.stem):
        for index, meta in ((ex.solution, {"solution": True, "grade": False, "locked": False, "grade_id": ex.id,
                                           "schema_version": 3}),
                            (ex.check, {"solution": False, "grade": True, "locked": True, "points": ex.points,
                                        "grade_id": ex.check_id, "schema_version": 3})):
            cell_meta = nb["cells"][index].setdefault("metadata", {})
            if cell_meta.get("nbgrader") != meta:
                changes.append(f"{path.name} cell {index}: nbgrader {meta}")
                cell_meta["nbgrader"] = meta
    if changes and write:
        _write_notebook(path, nb)
    return changes


def default_labs() -> pathlib.Path:
    """The course's ``labs/`` folder next to the npukit package (a checkout), else ``./labs``."""
    here = pathlib.Path(__file__).resolve().parent.parent.parent / "labs"
    return here if here.is_dir() else pathlib.Path("labs")


# ---- grading -------------------------------------------------------------------------------


@dataclass
class _Lab:
    name: str
    nb: dict
    exercises: list[Exercise]
    folder: pathlib.Path
    stubs: dict[str, str] = field(default_factory=dict)


def _load_labs(labs_dir: pathlib.Path) -> dict[str, _Lab]:
    labs = {}
    for p in sorted(labs_dir.glob("*.ipynb")):
        nb = json.loads(p.read_text(encoding="utf-8"))
        exs = exercises(nb, p.stem)
        if not exs:
            continue
        handout = student.make_student_notebook(nb)
        labs[p.stem] = _Lab(p.stem, nb, exs, labs_dir, {e.id: _source(handout["cells"][e.solution]) for e in exs})
    if not labs:
        raise FileNotFoundError(f"no lab notebooks with exercises in {str(labs_dir)!r}")
    return labs


def _identify(sub: dict, path: pathlib.Path, labs: dict[str, _Lab]) -> _Lab | None:
    ids = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in sub.get("cells", [])} - {None}
    calls = {m for c in sub.get("cells", []) if c.get("cell_type") == "code" for m in _CHECK_CALL.findall(_source(c))}

    def score(lab: _Lab) -> tuple[int, int, int]:
        mine = {e.id for e in lab.exercises} | {e.check_id for e in lab.exercises}
        return len(ids & mine), len(calls & {e.checker for e in lab.exercises}), int(lab.name in path.name)

    best = max(labs.values(), key=score)
    return best if any(score(best)) else None


def _learner_sources(sub: dict, lab: _Lab) -> dict[str, str | None]:
    cells = [c for c in sub.get("cells", []) if c.get("cell_type") == "code"]
    by_id = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id"): c for c in cells}
    tagged = [c for c in cells if "solution" in _tags(c)]
    out: dict[str, str | None] = {}
    for k, ex in enumerate(lab.exercises):
        cell = by_id.get(ex.id)
        if cell is None and len(tagged) == len(lab.exercises):
            cell = tagged[k]
        if cell is None and ex.defines:
            pattern = re.compile(rf"^(def\s+{re.escape(ex.defines)}\s*\(|{re.escape(ex.defines)}\s*=)", re.M)
            cell = next((c for c in cells if pattern.search(_source(c)) and not _CHECK_CALL.search(_source(c))), None)
        out[ex.id] = None if cell is None else _source(cell)
    return out


def _normal(src: str | None) -> str:
    return "\n".join(line.rstrip() for line in (src or "").strip().splitlines() if line.strip())


def _grading_notebook(lab: _Lab, sources: dict[str, str | None]) -> tuple[dict, dict[str, int]]:
    """The instructor's notebook with the learner's solutions in and a verdict cell after each check."""
    nb = copy.deepcopy(lab.nb)
    nb.get("metadata", {}).pop("widgets", None)
    for ex in lab.exercises:
        src = sources.get(ex.id)
        nb["cells"][ex.solution]["source"] = lab.stubs[ex.id] if src is None else src
    cells, verdicts = [], {}
    prelude = "import npukit.teach.grade as _npukit_grade\n_npukit_grade._verdict('')"
    cells.append({"cell_type": "code", "id": "npukit-grade-prelude", "metadata": {}, "source": prelude,
                  "outputs": [], "execution_count": None})
    checks = {ex.check: ex for ex in lab.exercises}
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
        cells.append(cell)
        if i in checks:
            verdicts[checks[i].id] = len(cells)
            cells.append({"cell_type": "code", "id": f"npukit-verdict-{i}", "metadata": {}, "outputs": [],
                          "execution_count": None,
                          "source": f"__import__('npukit.teach.grade').teach.grade._verdict({checks[i].checker!r})"})
    nb["cells"] = cells
    return nb, verdicts


_last = [0]


def _verdict(checker: str) -> None:
    """Run in the grading kernel after a check cell: print what ran, how it ended, what was patched."""
    import npukit.teach

    entries = core._ledger_since(_last[0])
    _last[0] = len(core._LEDGER)
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    user = shell.user_ns.get("teach") if shell is not None else None
    report = {"checker": checker, "entries": entries, "tampering": npukit.teach.guard.tampering()[:3],
              "teach": user is None or user is sys.modules.get("npukit.teach"), "seed": core._grade_seed_digest()}
    print(_VERDICT + json.dumps(report))


def _outputs_text(cell: dict) -> str:
    return "".join(_source({"source": o.get("text", "")}) for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream")


def _error(cell: dict) -> tuple[str, str] | None:
    for o in cell.get("outputs", []):
        if o.get("output_type") == "error":
            value = _ANSI.sub("", str(o.get("evalue", ""))).strip().splitlines()
            return str(o.get("ename", "")), value[0] if value else ""
    return None


def _judge(ex: Exercise, run: dict, check_cell: dict, verdict_cell: dict | None, learner: str | None,
           stub: str, seed_digest: str) -> dict[str, Any]:
    result = {"id": ex.id, "status": "failed", "points": 0, "max_points": ex.points, "message": ""}
    lines = [line for line in _outputs_text(verdict_cell or {}).splitlines() if line.startswith(_VERDICT)]
    verdict = json.loads(lines[0][len(_VERDICT):]) if len(lines) == 1 else None   # two: someone else printed one
    ran = [e for e in (verdict or {}).get("entries", []) if e.get("check") == ex.checker]
    error = _error(check_cell)
    if verdict is None:
        result["message"] = run.get("fatal") or "the grader could not read this check's outcome"
    elif ran:
        result["status"], result["message"] = ran[-1]["status"], ran[-1]["message"]
    elif error:
        result["message"] = f"{error[0]}: {error[1]}" if error[0] not in ("CheckFailed", "NotAttempted") else error[1]
    else:
        result["message"] = f"the check cell ran no check (teach.{ex.checker} or teach was replaced)"
    if result["status"] == "passed" and verdict is not None:
        if verdict.get("tampering"):
            result.update(status="failed", message=f"{verdict['tampering'][0]} after npukit.teach was imported")
        elif not verdict.get("teach", True):
            result.update(status="failed", message="the name teach was rebound to something else than npukit.teach")
        elif verdict.get("seed") != seed_digest:
            result.update(status="failed", message="the grading seed was changed by the notebook")
    if result["status"] != "passed" and (learner is None or _normal(learner) == _normal(stub)):
        result.update(status="not attempted", message="not attempted yet")
    if result["status"] == "passed":
        result["points"] = ex.points
    return result


def _execute(nb: dict, labs_dir: pathlib.Path, seed: int, timeout: float) -> dict:
    """Execute ``nb`` in a fresh kernel with the grading seed; return run information."""
    import nbclient
    import nbformat

    from .._jupyter import patch_zmq_polling

    patch_zmq_polling()   # notebooks with live widgets would otherwise stall to the cell timeout now and then
    node = nbformat.reads(json.dumps(nb), as_version=4)   # sources as strings, as nbclient wants them
    client = nbclient.NotebookClient(node, timeout=timeout, kernel_name="python3", allow_errors=True,
                                     interrupt_on_timeout=True, resources={"metadata": {"path": str(labs_dir)}})
    env = dict(os.environ)
    env[core.GRADE_SEED_ENV] = str(seed)
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    info: dict[str, Any] = {}
    try:
        client.execute(env=env, stderr=subprocess.DEVNULL)   # the kernel's own warnings are not the grade
    except nbclient.exceptions.DeadKernelError:
        info["fatal"] = "the kernel died while running the notebook"
    except Exception as exc:   # e.g. a cell that could not be interrupted after its timeout
        info["fatal"] = f"the notebook could not be run to the end ({type(exc).__name__}: {exc})"
    info["nb"] = json.loads(nbformat.writes(node))
    return info


def grade(submissions: Sequence[str | pathlib.Path], labs_dir: str | pathlib.Path | None = None, *,
          seed: int | None = None, timeout: float = 120.0, keep: str | pathlib.Path | None = None,
          lab: str | None = None) -> list[dict[str, Any]]:
    """Grade submissions (see the module docstring); one result per submission.

    Parameters
    ----------
    submissions : sequence of paths
        Notebooks; a folder stands for every ``*.ipynb`` below it.
    labs_dir : path, optional
        The instructor's labs (default: :func:`default_labs`).
    seed : int, optional
        The grading seed; default ``NPUKIT_GRADE_SEED``, else a random one.
    timeout : float
        Seconds allowed to each cell.
    keep : path, optional
        A folder to write the executed grading notebooks to, for inspection.
    lab : str, optional
        The lab's name (``01_tensors``) for every submission, instead of telling it from the notebook.

    Returns
    -------
    list of dict
        ``{"submission", "lab", "score", "max_score", "exercises": [{"id", "status", "points",
        "max_points", "message"}]}`` per submission, in the order given.

    Raises
    ------
    TypeError, ValueError
        If an argument has the wrong type or value.
    FileNotFoundError
        If a submission or the labs folder does not exist.

    Examples
    --------
    >>> grade(["alice/01_tensors.ipynb"], seed=7)[0]["score"]  # doctest: +SKIP
    10
    """
    labs = _load_labs(_check.path(labs_dir, "labs_dir") if labs_dir is not None else default_labs())
    if lab is not None and lab not in labs:
        raise ValueError(f"lab must be one of {sorted(labs)}, got {lab!r}")
    seed = _resolve_seed(seed)
    timeout = float(_check.positive(timeout, "timeout"))
    keep_dir = _check.path(keep, "keep") if keep is not None else None
    results = []
    for path in _expand(submissions):
        results.append(_grade_one(path, labs, lab, seed, timeout, keep_dir))
    return results


def _resolve_seed(seed: int | None) -> int:
    if seed is None:
        text = os.environ.get(core.GRADE_SEED_ENV, "").strip()
        if text:
            return int(text)
        seed = secrets.randbelow(2**31)
        print(f"grading seed: {seed} (pass --seed {seed} to grade the same way again)", file=sys.stderr)
    return _check.integer(seed, "seed")


def _expand(submissions: Iterable[Any]) -> list[pathlib.Path]:
    if isinstance(submissions, (str, os.PathLike)):
        submissions = [submissions]
    out = []
    for i, s in enumerate(submissions):
        p = _check.path(s, f"submissions[{i}]")
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.ipynb") if ".ipynb_checkpoints" not in q.parts)
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"submission {str(p)!r} does not exist")
    return out


def _grade_one(path: pathlib.Path, labs: dict[str, _Lab], lab_name: str | None, seed: int, timeout: float,
               keep: pathlib.Path | None) -> dict[str, Any]:
    try:
        sub = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        print(f"{path}: not a notebook ({exc}); scored 0", file=sys.stderr)
        return {"submission": str(path), "lab": None, "score": 0, "max_score": 0, "exercises": []}
    lab = labs[lab_name] if lab_name else _identify(sub, path, labs)
    if lab is None:
        print(f"{path}: could not tell which lab this is (pass --lab); scored 0", file=sys.stderr)
        return {"submission": str(path), "lab": None, "score": 0, "max_score": 0, "exercises": []}
    sources = _learner_sources(sub, lab)
    nb, verdict_at = _grading_notebook(lab, sources)
    run = _execute(nb, lab.folder, seed, timeout)
    executed = run["nb"]
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        _write_notebook(keep / f"{path.stem}.graded.ipynb", executed)
    digest = _seed_digest(seed)
    exs = []
    for ex in lab.exercises:
        check_cell = executed["cells"][verdict_at[ex.id] - 1]
        exs.append(_judge(ex, run, check_cell, executed["cells"][verdict_at[ex.id]], sources[ex.id],
                          lab.stubs[ex.id], digest))
    return {"submission": str(path), "lab": lab.name, "score": sum(e["points"] for e in exs),
            "max_score": sum(e.points for e in lab.exercises), "exercises": exs}


def _seed_digest(seed: int) -> str:
    import hashlib

    return hashlib.sha256(repr(int(seed)).encode()).hexdigest()[:16]


def to_csv(results: Sequence[dict[str, Any]]) -> str:
    """One CSV row per submission: total, then points and status of each exercise.

    Examples
    --------
    >>> print(to_csv([{"submission": "a.ipynb", "lab": "01_tensors", "score": 2, "max_score": 4, "exercises": [
    ...     {"id": "ex1-a", "status": "passed", "points": 2, "max_points": 2, "message": ""},
    ...     {"id": "ex1-b", "status": "not attempted", "points": 0, "max_points": 2, "message": "not attempted yet"}]}]))
    submission,lab,score,max_score,ex1-a,ex1-a status,ex1-b,ex1-b status
    a.ipynb,01_tensors,2,4,2,passed,0,not attempted
    <BLANKLINE>
    """
    ids: list[str] = []
    for r in results:
        ids += [e["id"] for e in r["exercises"] if e["id"] not in ids]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["submission", "lab", "score", "max_score"] + [c for i in ids for c in (i, f"{i} status")])
    for r in results:
        by = {e["id"]: e for e in r["exercises"]}
        w.writerow([r["submission"], r["lab"] or "", r["score"], r["max_score"]]
                   + [v for i in ids for v in ((by[i]["points"], by[i]["status"]) if i in by else ("", ""))])
    return out.getvalue()


def report(results: Sequence[dict[str, Any]]) -> str:
    """A plain-text report: a header per submission, a line per exercise."""
    lines = []
    for r in results:
        lines.append(f"{r['submission']}: {r['lab'] or '?'} {r['score']}/{r['max_score']} points")
        for e in r["exercises"]:
            msg = f"  {e['message']}" if e["status"] == "failed" else ""
            lines.append(f"  {e['id']:<24} {e['status']:<14} {e['points']}/{e['max_points']}{msg}")
    return "\n".join(lines)
