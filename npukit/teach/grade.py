"""Grade lab submissions with the instructor's own checks; keep the labs' nbgrader metadata.

``python -m npukit.teach grade SUBMISSION.ipynb … [--csv FILE] [--json]``
grades each submission like this:

1. it tells which lab the submission is (from the cells' nbgrader ``grade_id``,
   else the check calls it contains, else its file name);
2. it takes **only the learner's solution cells** (matched by ``grade_id``,
   else by position among the cells tagged ``solution``, else by the function
   they define) and screens each (:mod:`npukit.teach.screen`): a cell that
   reaches into the interpreter is refused, and its exercise fails with the
   screen's message. Every other cell is the instructor's, from the course's
   ``labs/`` folder, whatever the submission did to its own;
3. it runs the lab in two processes (:mod:`npukit.teach.checking`): the
   instructor's cells and checks in a checking process, the lab's cells with
   the learner's solutions in a learner's process of its own
   (:mod:`npukit.teach.learner`), each in a fresh folder, with a time limit
   per cell and the secret grading seed (``--seed`` or ``NPUKIT_GRADE_SEED``;
   a random one, printed, if neither is given), known to the checking process
   only. Only data crosses between them (:mod:`npukit.teach.isolation`), so
   nothing the learner's code makes can reach what decides the grade;
4. it reads, from the checking process, which check each check cell ran and
   how it ended (the ledger of :mod:`npukit.teach.core`);
5. it reports each exercise as ``passed`` (its points), ``failed`` (0, with
   the check's or the screen's one-line message) or ``not attempted`` (0: the
   solution cell is still the handout's), and a total. A submission that is
   the handout itself is reported without running anything.

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
from typing import Any, Iterable, Mapping, Sequence

from .. import _check
from . import core, screen, student, timelog, variants

__all__ = ["DEFAULT_POINTS", "Exercise", "exercises", "set_metadata", "grade", "to_csv", "default_labs"]

#: Points of each exercise, by lab and checker (``check_<name>``), for labs whose
#: notebooks carry no points yet. The notebooks' metadata is the reference once written.
DEFAULT_POINTS: dict[str, dict[str, int]] = {
    "01_tensors": {"strides": 2, "view_or_copy": 2, "aligned_empty": 3, "reshape_view": 3, "my_batch": 2},
    "02_layouts": {"stays_view": 2, "to_blocked": 3, "from_blocked": 2, "im2col_view": 3},
    "03_graphs": {"conv_macs": 2, "attainable": 1, "fold_bn": 3, "live_peak": 3},
    "04_gemm": {"tiled_matmul": 3, "schedule_traffic": 4, "best_tile": 3},
}

_CHECK_CALL = re.compile(r"\bteach\.(check_\w+)\s*\(")
_DEF = re.compile(r"^(?:def\s+(\w+)\s*\(|(\w+)\s*=)", re.M)


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


def checks_by_lab(labs_dir: str | pathlib.Path | None = None) -> dict[str, list[str]]:
    """Each lab's ``teach.check_*`` calls, in notebook order (graded exercises and predictions alike).

    Examples
    --------
    >>> checks_by_lab()["01_tensors"][0]
    'check_strides'
    """
    folder = _check.path(labs_dir, "labs_dir") if labs_dir is not None else default_labs()
    if not folder.is_dir():
        raise FileNotFoundError(f"labs_dir: {str(folder)!r} is not a folder")
    out = {}
    for p in sorted(folder.glob("*.ipynb")):
        cells = json.loads(p.read_text(encoding="utf-8")).get("cells", [])
        calls = [m for c in cells if c.get("cell_type") == "code" for m in _CHECK_CALL.findall(_source(c))]
        out[p.stem] = list(dict.fromkeys(calls))
    return out


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


def _plan(lab: _Lab, sources: dict[str, str], seed: int, timeout: float, learner_dir: str) -> dict:
    """What the checking process runs: every code cell of the instructor's notebook, solutions replaced."""
    solution_at = {ex.solution: ex for ex in lab.exercises}
    checks = {ex.check for ex in lab.exercises}
    cells = []
    for i, cell in enumerate(lab.nb["cells"][:max(checks) + 1]):   # what comes after the last check grades nothing
        if cell.get("cell_type") != "code":
            continue
        if i in solution_at:
            names, imports = _defined(_source(cell))
            cells.append({"index": i, "kind": "solution", "source": sources[solution_at[i].id], "names": names,
                          "imports": imports})
        else:
            cells.append({"index": i, "kind": "check" if i in checks else "lab", "source": _source(cell)})
    return {"lab": lab.name, "seed": int(seed), "timeout": float(timeout), "learner_dir": learner_dir, "cells": cells}


def _defined(source: str) -> tuple[list[str], str]:
    """What the instructor's solution cell gives the rest of the lab: the names it defines or assigns at
    its top level, and its import statements (the checking process imports those itself).

    Only these names of the learner's cell are bound in the checking process: a learner's cell that also
    assigns a lab variable (``machine = …``) changes the learner's process, not the checks' context.

    Examples
    --------
    >>> _defined("from numpy.lib.stride_tricks import as_strided\\n\\ndef im2col_view(x, k, s):\\n    pass\\n")
    (['im2col_view'], 'from numpy.lib.stride_tricks import as_strided')
    """
    import ast

    tree = ast.parse(source)
    names: list[str] = []
    imports = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(ast.unparse(node))
    return list(dict.fromkeys(names)), "\n".join(imports)


def _run_checking(plan: dict, work: pathlib.Path, timeout: float, student_id: str = "") -> dict:
    """Run the checking process (npukit.teach.checking) on ``plan`` in ``work``; its result, or what went wrong."""
    (work / "checking").mkdir(parents=True)
    plan_path, result_path = work / "checking" / "plan.json", work / "checking" / "result.json"
    fd = os.open(plan_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(plan, f)
    limit = timeout * (len(plan["cells"]) + 4)
    env = {k: v for k, v in os.environ.items()
           if k not in (core.GRADE_SEED_ENV, timelog.TIME_LOG_ENV) and not k.startswith("PLOTLY_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env[variants.STUDENT_ENV] = student_id      # the variant's student (npukit.teach.variants), "" for none
    with open(work / "checking" / "checking.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "npukit.teach.checking", str(plan_path), str(result_path)],
                                cwd=work / "checking", env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
    result = {"cells": []}
    if result_path.exists():
        result = json.loads(result_path.read_text(encoding="utf-8"))
    if proc.returncode not in (0, None) and not result.get("fatal"):
        result["fatal"] = (f"the grading run stopped (exit status {proc.returncode}) after "
                           f"{len(result['cells'])} of {len(plan['cells'])} cells")
    return result


def _kill_group(proc: subprocess.Popen) -> None:
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _judge(ex: Exercise, cells: dict[int, dict], fatal: str | None, learner: str | None, stub: str,
           refused: list[str]) -> dict[str, Any]:
    result = {"id": ex.id, "status": "failed", "points": 0, "max_points": ex.points, "message": ""}
    check, solution = cells.get(ex.check), cells.get(ex.solution) or {}
    ran = [e for e in (check or {}).get("ledger", []) if e.get("check") == ex.checker]
    if refused:
        result["message"] = f"refused before it ran: {refused[0]}" + (f" (and {len(refused) - 1} more)"
                                                                       if len(refused) > 1 else "")
    elif check is None:
        result["message"] = fatal or "the grading run ended before this check"
    elif ran:
        result["status"], result["message"] = ran[-1]["status"], ran[-1]["message"]
    elif check.get("error"):
        error = check["error"]
        result["message"] = (error["message"] if error["type"] in ("CheckFailed", "NotAttempted")
                             else f"{error['type']}: {error['message']}")
    else:
        result["message"] = "the check cell ran no check"
    if result["status"] == "failed" and solution.get("refused") and not refused:
        first = solution["refused"][0]
        result["message"] += f" (the solution cell tried {first.get('detail')}: {first.get('why')})"
    if not refused and result["status"] != "passed" and (learner is None or _normal(learner) == _normal(stub)):
        result.update(status="not attempted", message="not attempted yet")
    if result["status"] == "passed":
        result["points"] = ex.points
    return result


def grade(submissions: Sequence[str | pathlib.Path], labs_dir: str | pathlib.Path | None = None, *,
          seed: int | None = None, timeout: float = 120.0, keep: str | pathlib.Path | None = None,
          lab: str | None = None, students: Mapping[str, str] | str | pathlib.Path | None = None
          ) -> list[dict[str, Any]]:
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
        A folder to write, per submission, the executed grading notebook (what each cell printed and
        raised, in the process it ran in) and the two processes' logs, for inspection.
    lab : str, optional
        The lab's name (``01_tensors``) for every submission, instead of telling it from the notebook.
    students : mapping or path, optional
        Whose each submission is: ``{submission: student_id}``, a submission named by its path or its file
        name, or a CSV file with columns ``submission`` and ``student``. Without it (or for a submission
        it does not name), the student is the folder the submission was collected in
        (:func:`npukit.teach.variants.submission_student`), never the file's name, which the student
        chooses. A file name that names someone else is flagged in ``note``.

    Returns
    -------
    list of dict
        ``{"submission", "lab", "student", "variant", "note", "score", "max_score", "exercises": [{"id",
        "status", "points", "max_points", "message"}]}`` per submission, in the order given; ``student``
        ``variant`` and ``note`` as in :func:`to_csv`.

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
    mapping = _students(students)
    found = _expand(submissions)
    names: dict[str, int] = {}
    for path, _ in found:
        names[path.name] = names.get(path.name, 0) + 1
    for key in mapping:
        if names.get(key, 0) > 1:
            raise ValueError(f"students names {key!r}, the file name of {names[key]} submissions: name each of "
                             "them by its path")
    flat: dict[pathlib.Path, int] = {}                 # notebooks directly in a folder passed: no folder each
    for path, root in found:
        if root is not None and path.parent == root:
            flat[root] = flat.get(root, 0) + 1
    results = []
    for path, root in found:
        who = mapping.get(str(path), mapping.get(path.name))
        named = who is not None                      # the instructor named the student: the file name says nothing
        shared = ""
        if who is None:
            who = variants.submission_student(path, root)
            if mapping:
                print(f"{path}: not in students; graded as its folder's {who!r}", file=sys.stderr)
            if root is not None and flat.get(root, 0) > 1 and path.parent == root:
                shared = (f"{flat[root]} notebooks directly in {str(root)!r} are all graded as {who!r}: collect "
                          "each student's in a folder of their own, or pass students")
                print(f"{path}: {shared}", file=sys.stderr)
        results.append(_grade_one(path, labs, lab, seed, timeout, keep_dir, who=who, by_name=named, shared=shared))
    return results


def _students(students: Any) -> dict[str, str]:
    """The instructor's ``{submission: student}`` mapping, from a mapping or a CSV file."""
    if students is None:
        return {}
    if isinstance(students, (str, os.PathLike)):
        p = _check.path(students, "students")
        rows = list(csv.DictReader(io.StringIO(p.read_text(encoding="utf-8"))))
        if rows and not {"submission", "student"} <= set(rows[0]):
            raise ValueError(f"students must be a CSV file with columns 'submission' and 'student', got "
                             f"columns {sorted(rows[0])}")
        students = {r["submission"]: r["student"] for r in rows}
    if not isinstance(students, Mapping):
        raise TypeError(f"students must be a mapping {{submission: student_id}} or a CSV file, got "
                        f"{type(students).__name__}")
    out = {}
    for k, v in students.items():
        _check.text(k, "students' keys")
        out[k] = _check.text(v, f"students[{k!r}]").strip().casefold()
    return out


def _resolve_seed(seed: int | None) -> int:
    if seed is None:
        text = os.environ.get(core.GRADE_SEED_ENV, "").strip()
        if text:
            return int(text)
        seed = secrets.randbelow(2**31)
        print(f"grading seed: {seed} (pass --seed {seed} to grade the same way again)", file=sys.stderr)
    return _check.integer(seed, "seed")


def _expand(submissions: Iterable[Any]) -> list[tuple[pathlib.Path, pathlib.Path | None]]:
    """Each notebook with the folder it was found below (None for a notebook named by itself)."""
    if isinstance(submissions, (str, os.PathLike)):
        submissions = [submissions]
    out: list[tuple[pathlib.Path, pathlib.Path | None]] = []
    for i, s in enumerate(submissions):
        p = _check.path(s, f"submissions[{i}]")
        if p.is_dir():
            out += [(q, p) for q in sorted(p.rglob("*.ipynb")) if ".ipynb_checkpoints" not in q.parts]
        elif p.is_file():
            out.append((p, None))
        else:
            raise FileNotFoundError(f"submission {str(p)!r} does not exist")
    return out


def _grade_one(path: pathlib.Path, labs: dict[str, _Lab], lab_name: str | None, seed: int, timeout: float,
               keep: pathlib.Path | None, *, screening: bool = True, who: str | None = None,
               by_name: bool = False, shared: str = "") -> dict[str, Any]:
    import tempfile

    try:
        sub = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        print(f"{path}: not a notebook ({exc}); scored 0", file=sys.stderr)
        return {"submission": str(path), "lab": None, "student": "", "variant": "", "note": "", "score": 0,
                "max_score": 0, "exercises": []}
    lab = labs[lab_name] if lab_name else _identify(sub, path, labs)
    if lab is None:
        print(f"{path}: could not tell which lab this is (pass --lab); scored 0", file=sys.stderr)
        return {"submission": str(path), "lab": None, "student": "", "variant": "", "note": "", "score": 0,
                "max_score": 0, "exercises": []}
    if who is None:
        who = variants.submission_student(path)
    named = "" if by_name else variants.name_disagrees(path, lab.name, who)
    note = "; ".join(x for x in (f"the file's name says {named!r}, graded as {who!r}" if named else "", shared)
                     if x)
    if note:
        print(f"{path}: {note}; check whose work it is", file=sys.stderr)
    learner = _learner_sources(sub, lab)
    refused = {ex.id: (screen.refusals(learner[ex.id]) if screening and learner[ex.id] is not None else [])
               for ex in lab.exercises}
    sources = {ex.id: lab.stubs[ex.id] if learner[ex.id] is None or refused[ex.id] else learner[ex.id]
               for ex in lab.exercises}
    run: dict[str, Any] = {"cells": []}
    if any(_normal(sources[ex.id]) != _normal(lab.stubs[ex.id]) for ex in lab.exercises):   # else nothing to run
        with tempfile.TemporaryDirectory(prefix="npukit-grade-") as tmp:
            work = pathlib.Path(tmp)
            (work / "learner").mkdir()
            plan = _plan(lab, sources, seed, timeout, str(work / "learner"))
            run = _run_checking(plan, work, timeout, who)
            if keep is not None:
                _keep(keep, path, lab, plan, run, work)
    cells = {int(c["index"]): c for c in run.get("cells", [])}
    exs = [_judge(ex, cells, run.get("fatal"), learner[ex.id], lab.stubs[ex.id], refused[ex.id])
           for ex in lab.exercises]
    varied = variants.describe(variants.of(lab.name, who)) if lab.name in variants.LABS else ""
    return {"submission": str(path), "lab": lab.name, "student": who, "variant": varied, "note": note,
            "score": sum(e["points"] for e in exs), "max_score": sum(e.points for e in lab.exercises),
            "exercises": exs}


def _keep(keep: pathlib.Path, path: pathlib.Path, lab: _Lab, plan: dict, run: dict, work: pathlib.Path) -> None:
    """Write the grading notebook as it ran (each cell's output, in the process it ran in) and the logs."""
    keep.mkdir(parents=True, exist_ok=True)
    nb = copy.deepcopy(lab.nb)
    nb.get("metadata", {}).pop("widgets", None)
    ran = {int(c["index"]): c for c in run.get("cells", [])}
    planned = {c["index"]: c for c in plan["cells"]}
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code" or i not in planned:
            continue
        cell["source"] = planned[i]["source"]
        cell["execution_count"], cell["outputs"] = None, []
        record = ran.get(i)
        if record is None:
            continue
        where = "learner's process" if planned[i]["kind"] == "solution" else "checking process"
        text = f"[{where}]\n" + (record.get("stdout") or "")
        cell["outputs"].append({"output_type": "stream", "name": "stdout", "text": text})
        if record.get("error"):
            e = record["error"]
            cell["outputs"].append({"output_type": "error", "ename": e.get("type", ""), "evalue": e.get("message", ""),
                                    "traceback": list(e.get("where", []))})
    stem = "_".join(p for p in (path.parent.name, path.stem) if p)   # alice/01_tensors -> alice_01_tensors
    _write_notebook(keep / f"{stem}.graded.ipynb", nb)
    for name in ("checking/checking.log", "checking/learner.log"):
        if (work / name).exists():
            (keep / f"{stem}.{pathlib.Path(name).stem}.log").write_bytes((work / name).read_bytes())


def to_csv(results: Sequence[dict[str, Any]]) -> str:
    """One CSV row per submission: the student and variant, total, then points and status of each exercise.

    ``student`` is the id the grader graded under (the instructor's mapping, else the folder the
    submission was collected in: :func:`npukit.teach.variants.submission_student`); ``variant`` names the
    numbers that student's varied question was graded on (``public`` without an id; empty for a lab with
    no varied question); ``note`` flags a file whose name names someone else.

    Examples
    --------
    >>> print(to_csv([{"submission": "a.ipynb", "lab": "01_tensors", "score": 2, "max_score": 4, "exercises": [
    ...     {"id": "ex1-a", "status": "passed", "points": 2, "max_points": 2, "message": ""},
    ...     {"id": "ex1-b", "status": "not attempted", "points": 0, "max_points": 2, "message": "not attempted yet"}]}]))
    submission,lab,student,variant,note,score,max_score,ex1-a,ex1-a status,ex1-b,ex1-b status
    a.ipynb,01_tensors,,,,2,4,2,passed,0,not attempted
    <BLANKLINE>
    """
    ids: list[str] = []
    for r in results:
        ids += [e["id"] for e in r["exercises"] if e["id"] not in ids]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["submission", "lab", "student", "variant", "note", "score", "max_score"]
               + [c for i in ids for c in (i, f"{i} status")])
    for r in results:
        by = {e["id"]: e for e in r["exercises"]}
        w.writerow([r["submission"], r["lab"] or "", r.get("student", ""), r.get("variant", ""),
                    r.get("note", ""), r["score"], r["max_score"]]
                   + [v for i in ids for v in ((by[i]["points"], by[i]["status"]) if i in by else ("", ""))])
    return out.getvalue()


def report(results: Sequence[dict[str, Any]]) -> str:
    """A plain-text report: a header per submission, a line per exercise."""
    lines = []
    for r in results:
        varied = f" (variant {r['variant']})" if r.get("variant") else ""
        lines.append(f"{r['submission']}: {r['lab'] or '?'} {r['score']}/{r['max_score']} points{varied}")
        if r.get("note"):
            lines.append(f"  NOTE: {r['note']}")
        for e in r["exercises"]:
            msg = f"  {e['message']}" if e["status"] == "failed" else ""
            lines.append(f"  {e['id']:<24} {e['status']:<14} {e['points']}/{e['max_points']}{msg}")
    return "\n".join(lines)
