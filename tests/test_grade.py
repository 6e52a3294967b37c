"""The grader (``python -m npukit.teach grade``) on real submissions, with exact scores.

Each submission is a copy of lab 1's committed student edition (labs/student/)
edited the way a student would: nothing done, everything done, some exercises
done, a check cell replaced, ``teach`` monkeypatched or replaced, the library
called, a lookup table pasted in. They are graded in one call (a checking
process and a learner's process each) and the scores are exact. A patch made
in a solution cell lives in the learner's process, where no check runs: it
costs that exercise its points (the screen refuses the cell) and leaves the
others alone. ``make student-test`` runs this file (it executes notebooks, so
it is marked ``slow``).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import re
from pathlib import Path

import pytest

from npukit.teach import grade as grading
from npukit.teach import variants
from npukit.teach.__main__ import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
LAB = ROOT / "labs" / "01_tensors.ipynb"
HANDOUT = ROOT / "labs" / "student" / "01_tensors.ipynb"
SEED = 20260214
POINTS = {"ex1-strides": 2, "ex1-view-or-copy": 2, "ex1-alignment-prediction": 1, "ex1-aligned-empty": 3,
          "ex1-reshape-view": 3}
#: Exercise 6's numbers are the student's own (npukit.teach.variants): the submissions below, bar the instructor's
#: notebook, leave it undone, as they leave the prediction.
ALL_POINTS = {**POINTS, "ex1-my-batch": 2}
NOT_PREDICTED = {"ex1-alignment-prediction": ("not attempted", 0),   # no submission below makes the prediction
                 "ex1-my-batch": ("not attempted", 0)}


def _nb(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _cells_by_id(nb: dict) -> dict[str, dict]:
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in nb["cells"] if "nbgrader" in c["metadata"]}


def _submission(tmp: Path, name: str, solutions: dict[str, str] = (), checks: dict[str, str] = ()) -> Path:
    """The handout with some solution cells (by grade id) and check cells replaced."""
    nb = copy.deepcopy(_nb(HANDOUT))
    cells = _cells_by_id(nb)
    for gid, src in dict(solutions).items():
        cells[gid]["source"] = src
    for gid, src in dict(checks).items():
        cells[gid]["source"] = src
    path = tmp / name / "01_tensors.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def _instructor(gid: str) -> str:
    return re.sub(r"(?m)^[ \t]*### (BEGIN|END) SOLUTION[^\n]*\n?", "", "".join(_cells_by_id(_nb(LAB))[gid]["source"]))


WRONG_VIEW = "def is_view(op):\n    return '[' not in op          # every indexing a copy: not right\n"
IN_ELEMENTS = ("def strides_by_hand(shape, itemsize, order='C'):\n"
               "    out, step = [0] * len(shape), 1\n"
               "    for k in (reversed(range(len(shape))) if order == 'C' else range(len(shape))):\n"
               "        out[k], step = step, step * shape[k]\n"
               "    return tuple(out)                # in elements: wrong\n")


def _table_solution() -> str:
    """reshape_is_view as a lookup table of the lab's own cases (what failure messages would reveal)."""
    from npukit.teach import core, tensors

    cases = tensors._reshape_cases(core._rng(1105), 60)
    table = {case: tensors._reshape_is_view(*case) for case in cases}
    return f"TABLE = {table!r}\n\ndef reshape_is_view(shape, strides, new_shape):\n    return TABLE[(shape, strides, new_shape)]\n"


def make_submissions(tmp: Path) -> dict[str, Path]:
    """The submissions graded below, written into ``tmp``."""
    everything = {gid: _instructor(gid) for gid in POINTS}
    subs = {
        "untouched": HANDOUT,
        "instructor": LAB,
        "partial": _submission(tmp, "partial", {"ex1-strides": everything["ex1-strides"], "ex1-view-or-copy": WRONG_VIEW,
                                                "ex1-aligned-empty": everything["ex1-aligned-empty"]}),
        "fake check cell": _submission(
            tmp, "fakecheck", {"ex1-strides": everything["ex1-strides"], "ex1-view-or-copy": WRONG_VIEW},
            {"check1-view-or-copy": 'print("✓ view or copy: 15 fresh cases agree with the reference.")'}),
        "patched teach": _submission(tmp, "patched", {
            "ex1-strides": everything["ex1-strides"],
            "ex1-view-or-copy": "teach.core._same = lambda *a, **k: True   # every comparison passes\n" + WRONG_VIEW,
            "ex1-aligned-empty": everything["ex1-aligned-empty"], "ex1-reshape-view": everything["ex1-reshape-view"]}),
        "patched numpy": _submission(tmp, "patchednumpy", {
            "ex1-strides": "np.array_equal = lambda *a, **k: True\nnp.allclose = lambda *a, **k: True\n" + IN_ELEMENTS,
            "ex1-view-or-copy": everything["ex1-view-or-copy"]}),
        "replaced teach": _submission(tmp, "replaced", {
            "ex1-strides": everything["ex1-strides"],
            "ex1-view-or-copy": WRONG_VIEW + "class _Teach:\n    def __getattr__(self, name):\n"
                                "        return lambda *a: print('✓ fresh cases agree with the reference.')\n"
                                "teach = _Teach()\n"}),
        "replaced checker": _submission(tmp, "replacedchecker", {
            "ex1-strides": everything["ex1-strides"],
            "ex1-aligned-empty": "teach.check_aligned_empty = lambda fn: print('✓ aligned_empty: 30 fresh cases')\n"
                                 "def my_aligned_empty(shape, dtype, alignment):\n    return np.empty(shape, dtype)\n",
            "ex1-reshape-view": everything["ex1-reshape-view"]}),
        "library": _submission(tmp, "library", {
            "ex1-strides": "from npukit.tensors import contiguous_strides as strides_by_hand\n",
            "ex1-view-or-copy": "def is_view(op):\n    x = np.ones((2, 3, 4, 4), np.float32)\n"
                                "    return bool(np.shares_memory(x, eval(op)))\n",
            "ex1-aligned-empty": "my_aligned_empty = tensors.aligned_empty\n",
            "ex1-reshape-view": "reshape_is_view = teach.tensors._reshape_is_view\n"}),
        "lookup table": _submission(tmp, "table", {"ex1-reshape-view": _table_solution()}),
        # the rest of the twelve ways of tampering with a notebook (the first five are above)
        "deleted check cell": _tampered(tmp, "deleted", {"ex1-view-or-copy": WRONG_VIEW},
                                        lambda nb, by: nb["cells"].remove(by["check1-view-or-copy"])),
        "hand-edited output": _tampered(tmp, "output", {"ex1-view-or-copy": WRONG_VIEW}, lambda nb, by: by[
            "check1-view-or-copy"].update(outputs=[{"output_type": "stream", "name": "stdout",
                                                    "text": "✓ view or copy: 15 fresh cases agree with the reference.\n"}])),
        "metadata edited": _tampered(tmp, "metadata", {"ex1-view-or-copy": WRONG_VIEW}, lambda nb, by: (
            by["check1-view-or-copy"]["metadata"]["nbgrader"].update(points=100),
            by["check1-view-or-copy"]["metadata"].update(tags=["solution"]))),
        "measurement cell edited": _tampered(
            tmp, "measurement", {"ex1-alignment-prediction": "predicted_share128 = 0.5\n"},
            lambda nb, by: _replace_cell(nb, "census = tensors.alignment_census", "census = {128: 200, 16: 200}\nstep = 64\n")),
        "seed reset": _submission(tmp, "seed", {"ex1-view-or-copy": WRONG_VIEW + "import os\nos.environ['NPUKIT_GRADE_SEED'] = '0'\n"
                                                "teach.core._set_grade_seed(None)\n",
                                                "ex1-reshape-view": _table_solution()}),
        "seal disarmed": _submission(tmp, "seal", {"ex1-view-or-copy": "teach.guard.tampering = lambda: []\n"
                                                   "teach.core._refuse_tampering = lambda *a: None\n" + WRONG_VIEW}),
        "check call changed": _submission(tmp, "callchanged", {"ex1-view-or-copy": WRONG_VIEW},
                                          {"check1-view-or-copy": "teach.check_view_or_copy(lambda op: '[' in op)"}),
        "every answer wrong, hooked": _submission(tmp, "hooked", _hooked_wrong()),
    }
    return subs


def _tampered(tmp: Path, name: str, solutions: dict[str, str], edit) -> Path:
    """The handout with some solution cells replaced and then ``edit(nb, cells_by_grade_id)`` applied."""
    path = _submission(tmp, name, solutions)
    nb = _nb(path)
    edit(nb, _cells_by_id(nb))
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def _replace_cell(nb: dict, starting: str, source: str) -> None:
    cell = next(c for c in nb["cells"] if "".join(c["source"]).lstrip("# NBVAL_IGNORE_OUTPUT\n").startswith(starting)
                or starting in "".join(c["source"]))
    cell["source"] = source


def _hooked_wrong() -> dict[str, str]:
    """Every answer wrong, with the issue's universal attacks: a pre_run_cell hook marking the ledger passed,
    a thread doing the same, the function flipping its own entry, the watch disarmed."""
    hook = ("get_ipython().events.register('pre_run_cell', lambda *a: [e.update(status='passed') for e in "
            "__import__('npukit.teach.core', fromlist=['core'])._LEDGER])\n")
    thread = ("import threading\nfrom npukit.teach import core\n"
              "threading.Thread(target=lambda: [e.update(status='passed') for _ in iter(int, 1) for e in core._LEDGER],"
              " daemon=True).start()\n")
    flip = "    from npukit.teach import core\n    core._LEDGER[-1]['status'] = 'passed'\n"
    disarm = ("    import sys\n    for c in sys.getprofile().__closure__ or ():\n"
              "        if hasattr(c.cell_contents, 'called'):\n            c.cell_contents.called = None\n")
    return {"ex1-strides": hook + IN_ELEMENTS,
            "ex1-view-or-copy": thread + WRONG_VIEW,
            "ex1-alignment-prediction": "predicted_share128 = 0.9\n",
            "ex1-aligned-empty": "def my_aligned_empty(shape, dtype, alignment):\n" + flip + "    return np.empty(shape, dtype)\n",
            "ex1-reshape-view": "def reshape_is_view(shape, strides, new_shape):\n" + disarm + "    return True\n",
            # chapter 1's public answer, wrong for this student's own batch
            "ex1-my-batch": "my_strides = (6144, 192, 6, 2)\nmy_offset = 13292\nmy_f_strides = (2, 16, 512, 16384)\n"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("submissions")
    subs = make_submissions(tmp)
    csv_path = tmp / "grades.csv"
    argv = ["grade"] + [str(p) for p in subs.values()] + ["--seed", str(SEED), "--json", "--csv", str(csv_path),
                                               "--labs", str(ROOT / "labs")]
    return subs, argv, csv_path


@pytest.fixture(scope="module")
def results(graded):
    import contextlib

    subs, argv, csv_path = graded
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return dict(zip(subs, json.loads(out.getvalue()))), csv_path


def _statuses(result):
    return {e["id"]: (e["status"], e["points"]) for e in result["exercises"]}


def _messages(result):
    return {e["id"]: e["message"] for e in result["exercises"]}


def test_json_schema(results):
    for r in results[0].values():
        assert set(r) == {"submission", "lab", "student", "variant", "note", "score", "max_score",
                          "exercises"}
        assert r["lab"] == "01_tensors" and r["max_score"] == sum(ALL_POINTS.values()) == 13
        assert r["student"] and r["variant"] == variants.of("01_tensors", r["student"]).describe()   # exercise 6
        for e in r["exercises"]:
            assert set(e) == {"id", "status", "points", "max_points", "message"}
            assert e["status"] in {"passed", "failed", "not attempted"} and e["max_points"] == ALL_POINTS[e["id"]]


def test_unmodified_student_edition_scores_zero_and_is_not_attempted(results):
    r = results[0]["untouched"]
    assert r["score"] == 0
    assert {e["status"] for e in r["exercises"]} == {"not attempted"}
    assert {e["message"] for e in r["exercises"]} == {"not attempted yet"}


def test_instructor_edition_scores_full_points(results):
    assert results[0]["instructor"]["score"] == 13
    assert {e["status"] for e in results[0]["instructor"]["exercises"]} == {"passed"}


def test_partly_solved(results):
    r = results[0]["partial"]
    assert _statuses(r) == {"ex1-strides": ("passed", 2), "ex1-view-or-copy": ("failed", 0),
                            "ex1-aligned-empty": ("passed", 3), "ex1-reshape-view": ("not attempted", 0), **NOT_PREDICTED}
    assert r["score"] == 5
    message = next(e["message"] for e in r["exercises"] if e["id"] == "ex1-view-or-copy")
    assert message.startswith("view or copy: your predictions are not all right") and "\n" not in message


def test_a_faked_check_cell_is_ignored(results):
    r = results[0]["fake check cell"]
    assert _statuses(r)["ex1-view-or-copy"] == ("failed", 0)
    assert r["score"] == 2


def test_a_patched_teach_costs_its_own_exercise_only(results):
    r = results[0]["patched teach"]
    assert _statuses(r) == {"ex1-strides": ("passed", 2), "ex1-view-or-copy": ("failed", 0),
                            "ex1-aligned-empty": ("passed", 3), "ex1-reshape-view": ("passed", 3), **NOT_PREDICTED}
    assert _messages(r)["ex1-view-or-copy"].startswith("refused before it ran: line 1: `teach")


def test_a_patched_numpy_changes_nothing_in_the_checking_process(results):
    r = results[0]["patched numpy"]
    assert _statuses(r) == {"ex1-strides": ("failed", 0), "ex1-view-or-copy": ("passed", 2),
                            "ex1-aligned-empty": ("not attempted", 0), "ex1-reshape-view": ("not attempted", 0),
                            **NOT_PREDICTED}
    assert _messages(r)["ex1-strides"].startswith("strides: wrong answer")   # numpy's own array_equal judged it


def test_replaced_teach_and_replaced_checker_are_refused(results):
    r = results[0]["replaced teach"]
    assert _statuses(r) == {"ex1-strides": ("passed", 2), "ex1-view-or-copy": ("failed", 0),
                            "ex1-aligned-empty": ("not attempted", 0), "ex1-reshape-view": ("not attempted", 0), **NOT_PREDICTED}
    assert re.match(r"refused before it ran: line \d+: `teach` is not allowed", _messages(r)["ex1-view-or-copy"])
    r = results[0]["replaced checker"]
    assert _statuses(r) == {"ex1-strides": ("passed", 2), "ex1-view-or-copy": ("not attempted", 0),
                            "ex1-aligned-empty": ("failed", 0), "ex1-reshape-view": ("passed", 3), **NOT_PREDICTED}
    assert _messages(r)["ex1-aligned-empty"].startswith("refused before it ran: line 1: `teach")


def test_library_answers_fail(results):
    r = results[0]["library"]
    assert r["score"] == 0
    messages = _messages(r)
    assert "is npukit.tensors.contiguous_strides itself" in messages["ex1-strides"]
    assert "`eval` is not allowed" in messages["ex1-view-or-copy"]
    assert "is npukit.tensors.aligned_empty itself" in messages["ex1-aligned-empty"]
    assert messages["ex1-reshape-view"].startswith("refused before it ran: line 1: `teach")


def test_the_other_seven_tamperings_are_detected(results):
    """With the five above (a ✓ printed by the check cell, teach.core patched, numpy patched, teach rebound,
    a checker replaced): the twelve ways issue 20 counts of tampering with a notebook, each detected."""
    r = results[0]
    for name in ("deleted check cell", "hand-edited output", "metadata edited", "check call changed"):
        assert _statuses(r[name])["ex1-view-or-copy"] == ("failed", 0), name   # the instructor's check ran
        assert _messages(r[name])["ex1-view-or-copy"].startswith("view or copy: your predictions are not all right")
        assert r[name]["max_score"] == 13, name                                # the instructor's points
    assert _statuses(r["measurement cell edited"])["ex1-alignment-prediction"] == ("failed", 0)
    assert "measured 12" in _messages(r["measurement cell edited"])["ex1-alignment-prediction"]
    for name in ("seed reset", "seal disarmed"):
        assert _statuses(r[name])["ex1-view-or-copy"] == ("failed", 0)
        assert _messages(r[name])["ex1-view-or-copy"].startswith("refused before it ran")
    assert _statuses(r["seed reset"])["ex1-reshape-view"] == ("failed", 0)   # the table still meets the secret seed


def test_every_answer_wrong_with_the_universal_attacks_scores_zero(results, graded):
    """The issue's first finding: an all-wrong lab 1 with these attacks scored 11/11. Now 0, and 0 again with
    the screen off (the attacks then run, in the learner's process, where nothing decides the grade)."""
    from npukit.teach.grade import _grade_one, _load_labs

    assert results[0]["every answer wrong, hooked"]["score"] == 0
    r = _grade_one(graded[0]["every answer wrong, hooked"], _load_labs(ROOT / "labs"), None, SEED, 120.0, None,
                   screening=False)
    assert r["score"] == 0 and {e["status"] for e in r["exercises"]} == {"failed"}, _messages(r)


def test_without_the_screen_the_process_boundary_still_holds(graded, tmp_path):
    """The patches of the tampering submissions, let through: they change the learner's process only."""
    from npukit.teach.grade import _grade_one, _load_labs

    subs = graded[0]
    labs = _load_labs(ROOT / "labs")
    r = _grade_one(subs["patched teach"], labs, None, SEED, 120.0, None, screening=False)
    assert _statuses(r) == {"ex1-strides": ("passed", 2), "ex1-view-or-copy": ("failed", 0),
                            "ex1-aligned-empty": ("passed", 3), "ex1-reshape-view": ("passed", 3), **NOT_PREDICTED}
    assert _messages(r)["ex1-view-or-copy"].startswith("view or copy: your predictions are not all right")
    r = _grade_one(subs["replaced checker"], labs, None, SEED, 120.0, None, screening=False)
    assert _statuses(r)["ex1-aligned-empty"] == ("failed", 0)
    assert "aligned_empty(" in _messages(r)["ex1-aligned-empty"]   # the real check ran, in the checking process


def test_lookup_table_fails_with_the_grading_seed(results):
    r = results[0]["lookup table"]
    assert _statuses(r)["ex1-reshape-view"] == ("failed", 0)
    assert "KeyError" in _messages(r)["ex1-reshape-view"]


def test_csv_has_one_row_per_submission(results):
    by_name, csv_path = results
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text(encoding="utf-8"))))
    assert len(rows) == len(by_name)
    assert [int(r["score"]) for r in rows] == [r["score"] for r in by_name.values()]
    assert rows[2]["ex1-aligned-empty"] == "3" and rows[2]["ex1-reshape-view status"] == "not attempted"


def test_every_handout_scores_zero_and_runs_nothing(monkeypatch):
    """A handout is the instructor's lab with every answer still to write: nothing of the learner's to run.

    Every lab's instructor edition scoring full points is in tests/test_attacks.py (each lab's reference
    answers, graded beside the attacks)."""
    def never(*args, **kwargs):
        raise AssertionError("a handout started a grading run")

    monkeypatch.setattr(grading, "_run_checking", never)
    results = grading.grade(sorted((ROOT / "labs" / "student").glob("*.ipynb")), ROOT / "labs", seed=SEED)
    for r in results:
        assert r["max_score"] > 0 and r["score"] == 0, r["submission"]
        assert {e["status"] for e in r["exercises"]} == {"not attempted"}
