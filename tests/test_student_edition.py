"""The student edition of every lab: no solution code, and every check fails.

``make student-test`` runs this file (it executes notebooks, so it is marked
``slow``). The instructor edition is executed cell by cell by nbval in
``make labs``; here we also read its stored outputs to confirm every check
cell passed when the lab was last run.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from npukit import teach

LABS = sorted((Path(__file__).parent.parent / "labs").glob("*.ipynb"))
pytestmark = pytest.mark.slow


def _src(cell) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def _tagged(nb: dict, tag: str) -> list[int]:
    return [i for i, c in enumerate(nb["cells"]) if tag in c.get("metadata", {}).get("tags", [])]


def _solution_lines(src: str) -> set[str]:
    inside, lines = False, set()
    for line in src.splitlines():
        if teach.student.BEGIN in line:
            inside = True
        elif teach.student.END in line:
            inside = False
        elif inside and line.strip():
            lines.add(line.strip())
    return lines


def _outside_lines(src: str) -> set[str]:
    inside, lines = False, set()
    for line in src.splitlines():
        if teach.student.BEGIN in line:
            inside = True
        elif teach.student.END in line:
            inside = False
        elif not inside and line.strip():
            lines.add(line.strip())
    return lines


def test_there_are_labs():
    assert LABS, "no lab notebooks found in labs/"


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.name)
def test_instructor_edition_passed_its_checks(lab):
    nb = json.loads(lab.read_text(encoding="utf-8"))
    checks = _tagged(nb, "check")
    assert len(checks) >= 3, f"{lab.name}: a lab needs at least three graded exercises, found {len(checks)}"
    assert len(_tagged(nb, "solution")) == len(checks), f"{lab.name}: one solution cell per check cell"
    for i in checks:
        outs = nb["cells"][i].get("outputs", [])
        assert outs, f"{lab.name} cell {i}: check cell has no stored output; run `make labs-run`"
        assert not any(o["output_type"] == "error" for o in outs), f"{lab.name} cell {i}: check failed"
        text = "".join("".join(o.get("text", "")) for o in outs if o["output_type"] == "stream")
        assert "✓" in text, f"{lab.name} cell {i}: check cell did not report success"


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.name)
def test_student_edition_has_no_solutions_and_fails_each_check(lab, tmp_path):
    import nbclient
    import nbformat

    original = json.loads(lab.read_text(encoding="utf-8"))
    (out,) = teach.make_student_edition(lab, tmp_path)
    student = json.loads(out.read_text(encoding="utf-8"))

    # 1. no solution code, no outputs, no widget state
    assert "widgets" not in student.get("metadata", {})
    for i in _tagged(original, "solution"):
        orig, stud = _src(original["cells"][i]), _src(student["cells"][i])
        assert teach.student.BEGIN not in stud and teach.student.END not in stud
        assert "raise NotImplementedError()" in stud or "= ...  # your answer" in stud
        leaked = (_solution_lines(orig) - _outside_lines(orig)) & {l.strip() for l in stud.splitlines()}
        assert not leaked, f"{lab.name} cell {i}: solution lines leaked: {sorted(leaked)}"
    for c in student["cells"]:
        if c["cell_type"] == "code":
            assert c["outputs"] == [] and c["execution_count"] is None
    text = json.dumps(student)
    assert teach.student.BEGIN not in text and teach.student.END not in text

    # 2. executing it, only the check cells of the unfinished exercises fail, each with one line
    nb = nbformat.reads(out.read_text(encoding="utf-8"), as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=60, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(lab.parent)}}
    )
    client.execute(stderr=subprocess.DEVNULL)   # a kernel writing warnings to an inherited stderr can stall
    checks = set(_tagged(original, "check"))
    failed = {i: o for i, c in enumerate(nb.cells) if c.cell_type == "code" for o in c.outputs if o.output_type == "error"}
    for i in checks:
        assert i in failed, f"{lab.name} cell {i}: the check passed on the student edition"
        assert failed[i].ename == "NotAttempted", f"{lab.name} cell {i}: {failed[i].ename}: {failed[i].evalue}"
        assert "not attempted yet" in failed[i].evalue and "\n" not in failed[i].evalue.strip()
    unexpected = {i: f"{o.ename}: {o.evalue.splitlines()[0] if o.evalue else ''}" for i, o in failed.items()
                  if i not in checks}
    assert not unexpected, f"{lab.name}: cells that fail in the student edition but are not check cells: {unexpected}"


