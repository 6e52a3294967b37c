"""nbgrader round trip: generate_assignment on a lab, autograde two submissions, exact scores.

``make nbgrader-check`` runs this file with ``NBGRADER_VENV`` pointing to a
virtual environment holding nbgrader 0.9 (installed once by the Makefile:
nbgrader pins Jupyter server packages, so it does not go into ``.venv``).
The notebooks run in a kernel of this interpreter (``.venv``, with npukit):
a ``python3`` kernelspec in a ``JUPYTER_PATH`` folder of the test points to it.

The course directory is the one the instructor guide describes
(chapters/instructor.md, "Grading with nbgrader"): ``source/lab01/``, then
``release/``, ``submitted/<student>/lab01/``, ``autograded/`` and the
gradebook ``gradebook.db``.
"""

from __future__ import annotations

import copy
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
LAB = ROOT / "labs" / "01_tensors.ipynb"
VENV = os.environ.get("NBGRADER_VENV")


def _by_id(nb: dict) -> dict[str, dict]:
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"] if "nbgrader" in c["metadata"]}


def _course(tmp_path_factory, lab: Path, assignment: str):
    """A course directory with ``lab`` as ``source/<assignment>/``, and a function running nbgrader in it."""
    if not VENV or not (Path(VENV) / "bin" / "nbgrader").exists():
        pytest.skip("nbgrader is not installed: run `make nbgrader-check` (it installs nbgrader in .venv-nbgrader)")
    tmp = tmp_path_factory.mktemp("nbgrader")
    kernels = tmp / "jupyter" / "kernels" / "python3"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (npukit)", "language": "python"}))
    root = tmp / "course"
    (root / "source" / assignment).mkdir(parents=True)
    shutil.copy(lab, root / "source" / assignment / lab.name)
    # Kernels talk over IPC sockets, not TCP ports: a port picked as free can be
    # taken by another process before the kernel binds it ("Address already in use").
    # The sockets need an absolute path: jupyter_client's default ("kernel-ipc") is
    # relative, and the kernel runs in the notebook's folder, not in nbgrader's.
    sockets = tmp / "ipc"
    sockets.mkdir()
    (root / "nbgrader_config.py").write_text('c = get_config()\nc.CourseDirectory.course_id = "tensors-on-silicon"\n'
                                             'c.KernelManager.transport = "ipc"\n'
                                             f'c.KernelManager.ip = {str(sockets / "kernel")!r}\n'
                                             'c.ExecutePreprocessor.startup_timeout = 180\n')
    env = dict(os.environ, JUPYTER_PATH=str(tmp / "jupyter"), PATH=f"{VENV}/bin{os.pathsep}{os.environ['PATH']}",
               NPUKIT_GRADE_SEED="4242")

    def nbgrader(*args: str) -> str:
        done = subprocess.run([f"{VENV}/bin/nbgrader", *args], cwd=root, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    return root, nbgrader


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return _course(tmp_path_factory, LAB, "lab01")


def test_generate_assignment_strips_the_solutions(course):
    root, nbgrader = course
    nbgrader("generate_assignment", "lab01", "--force")
    released = json.loads((root / "release" / "lab01" / LAB.name).read_text(encoding="utf-8"))
    text = json.dumps(released)
    assert "### BEGIN SOLUTION" not in text and "answers = {" not in text
    cells = _by_id(released)
    assert "raise NotImplementedError()" in "".join(cells["ex1-strides"]["source"])
    assert "".join(cells["check1-strides"]["source"]) == "teach.check_strides(strides_by_hand)"


def test_autograde_scores_exactly(course):
    root, nbgrader = course
    if not (root / "release").exists():
        nbgrader("generate_assignment", "lab01", "--force")
    released = json.loads((root / "release" / "lab01" / LAB.name).read_text(encoding="utf-8"))
    solutions = {gid: re.sub(r"(?m)^[ \t]*### (BEGIN|END) SOLUTION[^\n]*\n?", "", "".join(c["source"]))
                 for gid, c in _by_id(json.loads(LAB.read_text(encoding="utf-8"))).items()}

    def submit(student: str, edits: dict[str, str]) -> None:
        nb = copy.deepcopy(released)
        cells = _by_id(nb)
        for gid, src in edits.items():
            cells[gid]["source"] = src
        folder = root / "submitted" / student / "lab01"
        folder.mkdir(parents=True)
        (folder / LAB.name).write_text(json.dumps(nb), encoding="utf-8")
        nbgrader("db", "student", "add", student)

    # alice: exercises 1 and 3 solved (2 + 3 points); exercise 2 wrong, its check cell replaced by a fake ✓
    submit("alice", {"ex1-strides": solutions["ex1-strides"], "ex1-aligned-empty": solutions["ex1-aligned-empty"],
                     "ex1-view-or-copy": "def is_view(op):\n    return True\n",
                     "check1-view-or-copy": 'print("✓ view or copy: 15 fresh cases agree with the reference.")'})
    # bob: everything solved but exercise 2, whose cell patches the checker: only exercise 1 (before it) counts
    submit("bob", {"ex1-strides": solutions["ex1-strides"],
                   "ex1-view-or-copy": "teach.core._same = lambda *a, **k: True\ndef is_view(op):\n    return True\n",
                   "ex1-aligned-empty": solutions["ex1-aligned-empty"],
                   "ex1-reshape-view": solutions["ex1-reshape-view"]})
    log = nbgrader("autograde", "lab01", "--force")
    assert "Attribute 'checksum' for cell check1-view-or-copy has changed" in log   # nbgrader saw the fake
    nbgrader("export", "--to", str(root / "grades.csv"))
    rows = {r["student_id"]: r for r in csv.DictReader((root / "grades.csv").open(encoding="utf-8"))}
    assert float(rows["alice"]["score"]) == 5.0 and float(rows["alice"]["max_score"]) == 13.0   # lab 1: 2 + 2 + 1 + 3 + 3 + 2
    assert float(rows["bob"]["score"]) == 2.0
    graded = json.loads((root / "autograded" / "bob" / "lab01" / LAB.name).read_text(encoding="utf-8"))
    outputs = json.dumps(_by_id(graded)["check1-aligned-empty"]["outputs"])
    assert "npukit.teach.core._same was replaced" in outputs


# ---- lab 9 (issue 25): released, autograded full for its solutions and zero as handed out ----------------

LAB9 = ROOT / "labs" / "09_npus.ipynb"


@pytest.fixture(scope="module")
def course9(tmp_path_factory):
    return _course(tmp_path_factory, LAB9, "lab09")


def test_lab9_round_trip_scores_full_and_zero(course9):
    root, nbgrader = course9
    nbgrader("generate_assignment", "lab09", "--force")
    released = json.loads((root / "release" / "lab09" / LAB9.name).read_text(encoding="utf-8"))
    assert "### BEGIN SOLUTION" not in json.dumps(released)
    solutions = {gid: re.sub(r"(?m)^[ \t]*### (BEGIN|END) SOLUTION[^\n]*\n?", "", "".join(c["source"]))
                 for gid, c in _by_id(json.loads(LAB9.read_text(encoding="utf-8"))).items()}
    points = {gid: c["metadata"]["nbgrader"]["points"] for gid, c in _by_id(released).items()
              if c["metadata"]["nbgrader"].get("grade")}
    for student, solved in (("carol", True), ("dave", False)):
        nb = copy.deepcopy(released)
        if solved:
            for gid, cell in _by_id(nb).items():
                if cell["metadata"]["nbgrader"].get("solution"):
                    cell["source"] = solutions[gid]
        folder = root / "submitted" / student / "lab09"
        folder.mkdir(parents=True)
        (folder / LAB9.name).write_text(json.dumps(nb), encoding="utf-8")
        nbgrader("db", "student", "add", student)
    nbgrader("autograde", "lab09", "--force")
    nbgrader("export", "--to", str(root / "grades.csv"))
    rows = {r["student_id"]: r for r in csv.DictReader((root / "grades.csv").open(encoding="utf-8"))}
    assert float(rows["carol"]["max_score"]) == sum(points.values()) == 7.0
    assert float(rows["carol"]["score"]) == 7.0 and float(rows["dave"]["score"]) == 0.0
def test_autograde_grades_each_student_on_their_variant(course):
    """Lab 5's exercise 5 has per-student numbers: nbgrader's student id decides them when autograding."""
    from npukit import systolic
    from npukit.teach import variants

    root, nbgrader = course
    lab5 = ROOT / "labs" / "05_systolic.ipynb"
    (root / "source" / "lab05").mkdir(parents=True, exist_ok=True)
    shutil.copy(lab5, root / "source" / "lab05" / lab5.name)
    nbgrader("generate_assignment", "lab05", "--force")
    released = json.loads((root / "release" / "lab05" / lab5.name).read_text(encoding="utf-8"))

    def right(who: str) -> tuple[int, float]:      # from the cycle-level simulator, not the checker's walk
        v = variants.of("05_systolic", who)
        sim = systolic.simulate(np.ones((v.M, v.K), int), np.ones((v.K, v.N), int), v.rows, v.cols, "ws")
        return sim.cycles, sim.macs / (v.rows * v.cols * sim.cycles)

    def submit(student: str, answer: tuple[int, float], entered: str = "") -> None:
        nb = copy.deepcopy(released)
        cells = _by_id(nb)
        cells["ex5-my-layer"]["source"] = f"my_cycles = {answer[0]}\nmy_utilization = {answer[1]!r}\n"
        if entered:   # the name typed in the first cell: nbgrader's id comes first (about 2 min for two students)
            setup = next(c for c in nb["cells"] if "STUDENT_ID" in "".join(c["source"]))
            setup["source"] = "".join(setup["source"]).replace('STUDENT_ID = ""', f'STUDENT_ID = "{entered}"')
        folder = root / "submitted" / student / "lab05"
        folder.mkdir(parents=True)
        (folder / lab5.name).write_text(json.dumps(nb), encoding="utf-8")
        nbgrader("db", "student", "add", student)

    submit("vic", right("vic"))
    submit("xia", right("vic"), entered="vic")        # xia typed vic's id and hands in vic's answer
    nbgrader("autograde", "lab05", "--force")
    nbgrader("export", "--to", str(root / "grades05.csv"))
    rows = {(r["assignment"], r["student_id"]): r
            for r in csv.DictReader((root / "grades05.csv").open(encoding="utf-8"))}
    assert float(rows[("lab05", "vic")]["score"]) == 2.0
    assert float(rows[("lab05", "xia")]["score"]) == 0.0
    for who, mark in (("vic", "✓ your layer"), ("xia", "is not the number of cycles")):
        graded = json.loads((root / "autograded" / who / "lab05" / lab5.name).read_text(encoding="utf-8"))
        assert mark in json.dumps(_by_id(graded)["check5-my-layer"]["outputs"], ensure_ascii=False)


def test_autograde_grades_lab1_on_each_students_variant(course):
    """Lab 1's exercise 6 has per-student numbers too: nbgrader's id decides them, whatever the student typed."""
    from npukit.teach import variants

    root, nbgrader = course
    (root / "source" / "lab01v").mkdir(parents=True, exist_ok=True)
    shutil.copy(LAB, root / "source" / "lab01v" / LAB.name)
    nbgrader("generate_assignment", "lab01v", "--force")
    released = json.loads((root / "release" / "lab01v" / LAB.name).read_text(encoding="utf-8"))

    def right(who: str) -> tuple:      # NumPy's own arrays, not the checker
        v = variants.of("01_tensors", who)
        a, f = np.empty(v.shape, v.dtype), np.empty(v.shape, v.dtype, order="F")
        return a.strides, int(np.ravel_multi_index(v.index, v.shape)) * a.itemsize, f.strides

    def submit(student: str, answer: tuple, entered: str = "") -> None:
        nb = copy.deepcopy(released)
        cells = _by_id(nb)
        cells["ex1-my-batch"]["source"] = (f"my_strides = {answer[0]!r}\nmy_offset = {answer[1]!r}\n"
                                           f"my_f_strides = {answer[2]!r}\n")
        if entered:
            setup = next(c for c in nb["cells"] if "STUDENT_ID" in "".join(c["source"]))
            setup["source"] = "".join(setup["source"]).replace('STUDENT_ID = ""', f'STUDENT_ID = "{entered}"')
        folder = root / "submitted" / student / "lab01v"
        folder.mkdir(parents=True)
        (folder / LAB.name).write_text(json.dumps(nb), encoding="utf-8")
        nbgrader("db", "student", "add", student)

    assert right("uma") != right("wen")
    submit("uma", right("uma"))
    submit("wen", right("uma"), entered="uma")        # wen typed uma's id and hands in uma's answer
    nbgrader("autograde", "lab01v", "--force")
    nbgrader("export", "--to", str(root / "grades01v.csv"))
    rows = {(r["assignment"], r["student_id"]): r
            for r in csv.DictReader((root / "grades01v.csv").open(encoding="utf-8"))}
    assert float(rows[("lab01v", "uma")]["score"]) == 2.0
    assert float(rows[("lab01v", "wen")]["score"]) == 0.0
    for who, mark in (("uma", "✓ your batch"), ("wen", "are not the C-order strides")):
        graded = json.loads((root / "autograded" / who / "lab01v" / LAB.name).read_text(encoding="utf-8"))
        assert mark in json.dumps(_by_id(graded)["check1-my-batch"]["outputs"], ensure_ascii=False)


def test_submit_and_collect_carry_the_time_log(course):
    """The time log (npukit.teach.timelog) sits beside the notebook; nbgrader's exchange carries it to
    ``submitted/<student>/<lab>/``, where ``python -m npukit.teach minutes`` reads it."""
    from npukit.teach import timelog

    root, nbgrader = course
    exchange, home = root.parent / "exchange", root.parent / "home"
    exchange.mkdir(mode=0o777)
    exchange.chmod(0o777)
    home.mkdir()
    flags = [f"--Exchange.root={exchange}", "--CourseDirectory.course_id=tensors-on-silicon"]
    (root / "source" / "lab01t").mkdir(parents=True, exist_ok=True)
    shutil.copy(LAB, root / "source" / "lab01t" / LAB.name)
    nbgrader("generate_assignment", "lab01t", "--force")
    nbgrader("release_assignment", "lab01t", "--force", *flags)

    def student(*args: str) -> None:              # the student's side runs in their own folder
        env = dict(os.environ, PATH=f"{VENV}/bin{os.pathsep}{os.environ['PATH']}")
        done = subprocess.run([f"{VENV}/bin/nbgrader", *args, *flags], cwd=home, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"

    student("fetch_assignment", "lab01t")
    log = home / "lab01t" / timelog.LOG_NAME             # what a kernel with NPUKIT_TIME_LOG set writes there
    log.write_text("".join(json.dumps(e) + "\n" for e in [
        {"t": 0.0, "event": "start"}, {"t": 120.0, "event": "cell", "ok": True},
        {"t": 300.0, "event": "check", "check": "check_strides", "status": "passed"}]))
    student("submit", "lab01t")
    nbgrader("collect", "lab01t", "--update", *flags)
    collected = list((root / "submitted").glob(f"*/lab01t/{timelog.LOG_NAME}"))
    assert len(collected) == 1 and collected[0].read_text() == log.read_text()
    done = subprocess.run([sys.executable, "-m", "npukit.teach", "minutes", str(root / "submitted")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "01_tensors        1     5.0" in done.stdout, done.stdout + done.stderr
