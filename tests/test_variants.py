"""Per-student variants (npukit.teach.variants): two ids, different numbers; each right answer passes for
its own id only, in a notebook and through the grader; the grader's CSV names the variant.

The expected answers here come from the cycle-level simulator (npukit.systolic.simulate moves the operands
through the array's registers), not from the checker's fold walk. The nbgrader round trip with variants
is in tests/test_nbgrader.py (``make nbgrader-check``).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest

from npukit import systolic
from npukit.teach import core, grade, variants
from npukit.teach.systolic import check_my_layer

ROOT = Path(__file__).parent.parent
LAB5 = ROOT / "labs" / "05_systolic.ipynb"


@pytest.fixture(autouse=True)
def _no_student(monkeypatch):
    monkeypatch.delenv(variants.STUDENT_ENV, raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


def simulated(v: variants.Variant) -> tuple[int, float]:
    """(cycles, utilization) of the variant's layer, by running it through the simulator."""
    rng = np.random.default_rng(0)
    A = rng.integers(-3, 4, size=(v.M, v.K))
    B = rng.integers(-3, 4, size=(v.K, v.N))
    sim = systolic.simulate(A, B, v.rows, v.cols, "ws")
    assert np.array_equal(sim.product, A @ B)
    return sim.cycles, sim.macs / (v.rows * v.cols * sim.cycles)


def test_public_numbers_are_the_worked_example():
    v = variants.variant("05_systolic")
    assert v.student is None and v.tag == "public" and v.describe() == "public"
    assert (v.M, v.N, v.K, v.rows, v.cols) == (16, 128, 64, 32, 32)
    assert simulated(v)[0] == 8 * (32 + 31 + 16 + 31)        # the solution's hand count: 8 folds of 110


def test_two_students_get_different_numbers():
    a, b = variants.variant("05_systolic", "alice"), variants.variant("05_systolic", "bob")
    assert a.numbers != b.numbers and a.tag != b.tag
    assert simulated(a)[0] != simulated(b)[0]
    assert variants.variant("05_systolic", " Alice ").numbers == a.numbers   # spaces and case do not matter
    assert a.numbers != variants.variant("05_systolic").numbers


def test_each_answer_passes_for_its_own_id_only(capsys, monkeypatch):
    answers = {who: simulated(variants.variant("05_systolic", who)) for who in ("alice", "bob")}
    for who, (cycles, share) in answers.items():
        mine = variants.variant("05_systolic", who)
        check_my_layer(cycles, share, mine)
        assert f"variant {mine.tag} of {who}" in capsys.readouterr().out
        other = "bob" if who == "alice" else "alice"
        with pytest.raises(core.CheckFailed, match="is not the number of cycles"):
            check_my_layer(*answers[other], mine)
        with pytest.raises(core.CheckFailed):                     # the public example's answer
            check_my_layer(880, 131072 / (1024 * 880), mine)


def test_the_graders_id_wins_over_the_entered_one(monkeypatch):
    alice = simulated(variants.variant("05_systolic", "alice"))
    monkeypatch.setenv(variants.STUDENT_ENV, "bob")
    entered = variants.variant("05_systolic", "alice")              # the student typed "alice"
    assert entered.student == "bob" and entered.source == "grader"
    with pytest.raises(core.CheckFailed):
        check_my_layer(*alice, entered)
    check_my_layer(*simulated(variants.variant("05_systolic", "bob")), entered)


def test_nbgrader_id_comes_first(monkeypatch, tmp_path):
    folder = tmp_path / "autograded" / "carol" / "lab05"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    monkeypatch.setenv(variants.STUDENT_ENV, "bob")
    assert variants.student("alice") == ("carol", "nbgrader")


def test_wrong_kinds_and_not_attempted():
    mine = variants.variant("05_systolic")
    with pytest.raises(core.NotAttempted):
        check_my_layer(..., None, mine)
    with pytest.raises(core.CheckFailed, match="whole number"):
        check_my_layer(880.0, 0.145, mine)
    with pytest.raises(core.CheckFailed, match="fraction"):
        check_my_layer(880, 14.5, mine)
    with pytest.raises(core.CheckFailed, match="last cycle"):
        check_my_layer(879, 0.145, mine)
    with pytest.raises(core.CheckFailed, match="cycles are right"):
        check_my_layer(880, 0.2, mine)
    with pytest.raises(TypeError, match="mine"):
        check_my_layer(880, 0.145, {"M": 16})


@pytest.mark.parametrize("path, want", [("s/alice/05_systolic.ipynb", "alice"), ("s/Bob/05_systolic.ipynb", "bob"),
                                        ("s/carol/alice_05_systolic.ipynb", "carol"),
                                        ("s/dave/05_systolic (1).ipynb", "dave"),
                                        ("s/dave/05_systolic_v2.ipynb", "dave"),
                                        ("s/dave/05_systolic-final.ipynb", "dave")])
def test_the_student_is_the_collection_folder_never_the_file_name(path, want):
    assert variants.submission_student(path) == want


def test_the_student_below_a_root_is_the_first_folder():
    assert variants.submission_student("s/erin/lab05/05_systolic.ipynb", root="s") == "erin"
    assert variants.submission_student("s/erin/05_systolic.ipynb", root="s/erin") == "erin"


@pytest.mark.parametrize("path, who, flag", [("s/carol/alice_05_systolic.ipynb", "carol", "alice"),
                                             ("s/carol/carol_05_systolic.ipynb", "carol", ""),
                                             ("s/dave/05_systolic (1).ipynb", "dave", ""),
                                             ("s/dave/05_systolic_v2.ipynb", "dave", ""),
                                             ("s/dave/05_systolic - Copy.ipynb", "dave", ""),
                                             ("s/x/smithjohn_12345_67890_05_systolic.ipynb", "smithjohn", "")])
def test_a_file_name_that_names_someone_else_is_flagged(path, who, flag):
    assert variants.name_disagrees(path, "05_systolic", who) == flag


def test_students_mapping_is_checked(tmp_path):
    bad = tmp_path / "who.csv"
    bad.write_text("file,id\na.ipynb,alice\n", encoding="utf-8")
    with pytest.raises(ValueError, match="students must be a CSV file with columns"):
        grade.grade([LAB5], ROOT / "labs", seed=1, students=bad)
    with pytest.raises(TypeError, match="students must be a mapping"):
        grade.grade([LAB5], ROOT / "labs", seed=1, students=["alice"])
    with pytest.raises(TypeError, match="students"):
        grade.grade([LAB5], ROOT / "labs", seed=1, students={"a.ipynb": 3})
    for who in ("alice", "bob"):
        (tmp_path / who).mkdir()
        (tmp_path / who / LAB5.name).write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="the file name of 2 submissions"):
        grade.grade([tmp_path], ROOT / "labs", seed=1, students={LAB5.name: "alice"})


def test_notebooks_directly_in_the_folder_passed_are_flagged(tmp_path, capsys):
    for name in ("a_05_systolic.ipynb", "b_05_systolic.ipynb"):
        (tmp_path / "flat" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "flat" / name).write_text("not json", encoding="utf-8")
    grade.grade([tmp_path / "flat"], ROOT / "labs", seed=1)
    assert "2 notebooks directly in" in capsys.readouterr().err


def _submission(tmp: Path, student: str, cycles: int, share: float, name: str = LAB5.name) -> Path:
    """Lab 5's student edition with only exercise 5 answered, collected in the folder ``tmp/student``."""
    from npukit.teach import student as edition

    nb = edition.make_student_notebook(json.loads(LAB5.read_text(encoding="utf-8")))
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "ex5-my-layer")
    cell["source"] = f"my_cycles = {cycles}\nmy_utilization = {share!r}\n"
    path = tmp / student / name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(copy.deepcopy(nb)), encoding="utf-8")
    return path


@pytest.mark.slow
def test_grader_grades_each_student_on_their_variant(tmp_path):
    right = {who: simulated(variants.of("05_systolic", who)) for who in ("alice", "bob", "dave")}
    subs = tmp_path / "subs"
    _submission(subs, "alice", *right["alice"])
    _submission(subs, "bob", *right["bob"], name="05_systolic (1).ipynb")     # a copy's name: still bob's
    _submission(subs, "carol", *right["alice"], name="alice_05_systolic.ipynb")   # alice's answer and name
    flat = _submission(tmp_path, "flat", *right["dave"], name="x_12345_05_systolic.ipynb")  # an LMS's name
    results = grade.grade([subs, flat], ROOT / "labs", seed=11, lab="05_systolic",
                          students={flat.name: "Dave"})
    status = {r["student"]: next(e for e in r["exercises"] if e["id"] == "ex5-my-layer") for r in results}
    assert status["alice"]["status"] == "passed" and status["alice"]["points"] == 2
    assert status["bob"]["status"] == "passed"
    assert status["carol"]["status"] == "failed" and "is not the number of cycles" in status["carol"]["message"]
    assert status["dave"]["status"] == "passed"
    rows = list(csv.DictReader(io.StringIO(grade.to_csv(results))))
    assert [r["student"] for r in rows] == ["alice", "bob", "carol", "dave"]
    assert [r["variant"] for r in rows] == [variants.of("05_systolic", w).describe()
                                            for w in ("alice", "bob", "carol", "dave")]
    assert rows[0]["variant"].startswith(variants.of("05_systolic", "alice").tag + ": M=")
    assert [r["ex5-my-layer"] for r in rows] == ["2", "2", "0", "2"]
    assert [bool(r["note"]) for r in rows] == [False, False, True, False]
    assert "'alice'" in rows[2]["note"] and "'carol'" in rows[2]["note"]
