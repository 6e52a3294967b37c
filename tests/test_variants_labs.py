"""Per-student variants of labs 1 and 6 (npukit.teach.variants): two ids get different numbers; each right
answer passes for its own id only (not for another's, nor the public one's); the graders' id wins over the one
typed in; every draw keeps the question's teaching point; the grader's CSV names the variant.

The expected answers here come from references independent of the checkers: for lab 1 the strides written
out as products of the sides and NumPy's ``ravel_multi_index`` for the offset (the checker reads a NumPy
array's strides and addresses); for lab 6 ONNX Runtime's QuantizeLinear and DequantizeLinear (the checker
uses ``onnx.reference``). Lab 5's are in tests/test_variants.py; the nbgrader round trip with lab 1's
variant is in tests/test_nbgrader.py (``make nbgrader-check``).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from npukit.teach import core, grade, variants
from npukit.teach.quant import check_my_values
from npukit.teach.tensors import check_my_batch

ROOT = Path(__file__).parent.parent
LAB1 = ROOT / "labs" / "01_tensors.ipynb"


@pytest.fixture(autouse=True)
def _no_student(monkeypatch):
    monkeypatch.delenv(variants.STUDENT_ENV, raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


# ---- independent references ----------------------------------------------------------------------------


def batch_answer(v: variants.Variant) -> tuple[tuple, int, tuple]:
    """(C strides, byte offset of the element, F strides): products of the sides, times the itemsize."""
    shape, size = tuple(v.shape), np.dtype(v.dtype).itemsize
    c = tuple(size * math.prod(shape[k + 1:]) for k in range(len(shape)))
    f = tuple(size * math.prod(shape[:k]) for k in range(len(shape)))
    return c, int(np.ravel_multi_index(v.index, shape)) * size, f


def _ort(op: str, dtype: str, value: np.ndarray, scale: float, zp: int) -> np.ndarray:
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    t = {"uint8": TensorProto.UINT8, "int8": TensorProto.INT8}[dtype]
    src, dst = (TensorProto.FLOAT, t) if op == "QuantizeLinear" else (t, TensorProto.FLOAT)
    graph = helper.make_graph([helper.make_node(op, ["a", "s", "z"], ["b"])], "g",
                              [helper.make_tensor_value_info("a", src, [len(value)])],
                              [helper.make_tensor_value_info("b", dst, [len(value)])],
                              [numpy_helper.from_array(np.float32(scale), "s"),
                               helper.make_tensor("z", t, [], [zp])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"a": value})[0]


def values_answer(v: variants.Variant) -> tuple[list[int], list[float]]:
    """(codes, dequantized values) from ONNX Runtime."""
    q = _ort("QuantizeLinear", v.dtype, np.float32(v.x), v.scale, v.zero_point)
    back = _ort("DequantizeLinear", v.dtype, q, v.scale, v.zero_point)
    return [int(c) for c in q], [float(b) for b in back]


LABS = {"01_tensors": (batch_answer, check_my_batch), "06_quant": (values_answer, check_my_values)}


def answer(lab: str, who: str) -> tuple:
    return LABS[lab][0](variants.variant(lab, who))


# ---- the public numbers are the chapters' worked examples ------------------------------------------------


def test_public_numbers_are_the_chapters_examples(capsys):
    v = variants.variant("01_tensors")
    assert v.student is None and v.describe() == "public"
    assert (v.shape, v.dtype, v.index) == ((8, 32, 32, 3), "float16", (2, 5, 7, 1))
    assert batch_answer(v) == ((6144, 192, 6, 2), 13292, (2, 16, 512, 16384))    # ex-ch1-strides' solution
    check_my_batch((6144, 192, 6, 2), 13292, (2, 16, 512, 16384), v)
    w = variants.variant("06_quant")
    assert (w.x, w.scale, w.zero_point, w.dtype) == ((-0.3, 0.0, 0.25, 0.75, 3.0), 0.5, 3, "uint8")
    assert values_answer(w) == ([2, 3, 3, 5, 9], [-0.5, 0.0, 0.0, 1.0, 3.0])       # ex-ch6-hand's solution
    check_my_values([2, 3, 3, 5, 9], [-0.5, 0.0, 0.0, 1.0, 3.0], w)
    assert "the public example" in capsys.readouterr().out


@pytest.mark.parametrize("lab", sorted(LABS))
def test_two_students_get_different_numbers(lab):
    a, b = variants.variant(lab, "alice"), variants.variant(lab, "bob")
    assert a.numbers != b.numbers and a.tag != b.tag
    assert answer(lab, "alice") != answer(lab, "bob")
    assert variants.variant(lab, " Alice ").numbers == a.numbers
    assert a.numbers != variants.variant(lab).numbers


def _leaks(lab: str, right: tuple, message: str) -> bool:
    """Whether a failure message shows the right answer (or a part of it that is not in the question)."""
    if lab == "01_tensors":
        strides, offset, f_strides = right
        return str(strides) in message or str(f_strides) in message or f" {offset} " in message \
            or f"{offset:,}" in message
    codes, back = right
    return str(codes) in message or str(back) in message


@pytest.mark.parametrize("lab", sorted(LABS))
def test_each_answer_passes_for_its_own_id_only(lab, capsys):
    check = LABS[lab][1]
    answers = {who: answer(lab, who) for who in ("alice", "bob", "")}
    for who in ("alice", "bob"):
        mine = variants.variant(lab, who)
        check(*answers[who], mine)
        assert f"variant {mine.tag} of {who}" in capsys.readouterr().out
        for other in ("bob" if who == "alice" else "alice", ""):          # another student's, the public one
            with pytest.raises(core.CheckFailed) as failed:
                check(*answers[other], mine)
            assert not _leaks(lab, answers[who], str(failed.value))          # a failure never gives the answer


@pytest.mark.parametrize("lab", sorted(LABS))
def test_the_graders_id_wins_over_the_entered_one(lab, monkeypatch):
    check = LABS[lab][1]
    alice = answer(lab, "alice")
    monkeypatch.setenv(variants.STUDENT_ENV, "bob")
    entered = variants.variant(lab, "alice")                                # the student typed "alice"
    assert entered.student == "bob" and entered.source == "grader"
    with pytest.raises(core.CheckFailed):
        check(*alice, entered)
    check(*LABS[lab][0](entered), entered)


def test_lab1_draws_keep_the_teaching_point():
    """Strides in bytes (itemsize > 1), a short channel axis, every axis and index counts, H != W."""
    seen = set()
    for k in range(300):
        v = variants.of("01_tensors", f"s{k}")
        n, h, w, c = v.shape
        assert np.dtype(v.dtype).itemsize in (2, 4, 8) and c in (3, 4) and h != w and min(v.shape) >= 2
        assert all(1 <= i < side for i, side in zip(v.index, v.shape))
        seen.add(batch_answer(v))
    assert len(seen) == 300                                                  # 300 ids, 300 different answers


def test_lab6_draws_keep_the_teaching_point():
    """Two ties inside the range (one rounds down to even, one up), an odd zero point, one value saturating."""
    seen = set()
    for k in range(300):
        v = variants.of("06_quant", f"s{k}")
        lo, hi = (0, 255) if v.dtype == "uint8" else (-128, 127)
        r = np.float32(v.x) / np.float32(v.scale)
        raw = np.rint(r) + v.zero_point
        ties = [t for t in r if t % 1 == 0.5]
        assert v.zero_point % 2 == 1 and len(ties) == 2
        assert sorted(int(np.rint(t)) - math.floor(t) for t in ties) == [0, 1]   # one down, one up
        assert all(lo <= np.rint(t) + v.zero_point <= hi for t in ties)
        assert sum(not lo <= q <= hi for q in raw) == 1                     # exactly one saturates
        q, _ = values_answer(v)
        assert q == [int(c) for c in np.clip(raw, lo, hi)]                  # ORT agrees with the formula
        seen.add(tuple(q) + (v.scale, v.zero_point))
    assert len(seen) >= 295


def test_wrong_kinds_and_not_attempted():
    pub1, pub6 = variants.variant("01_tensors"), variants.variant("06_quant")
    with pytest.raises(core.NotAttempted):
        check_my_batch(None, None, None, pub1)
    with pytest.raises(core.CheckFailed, match="tuple of 4 whole numbers"):
        check_my_batch((6144.0, 192, 6, 2), 13292, (2, 16, 512, 16384), pub1)
    with pytest.raises(core.CheckFailed, match="in elements"):
        check_my_batch((3072, 96, 3, 1), 6646, (1, 8, 256, 8192), pub1)
    with pytest.raises(core.CheckFailed, match="other order"):
        check_my_batch((2, 16, 512, 16384), 13292, (6144, 192, 6, 2), pub1)
    with pytest.raises(core.CheckFailed, match="strides are right.*in elements"):
        check_my_batch((6144, 192, 6, 2), 6646, (2, 16, 512, 16384), pub1)
    with pytest.raises(core.NotAttempted):
        check_my_values(..., None, pub6)
    with pytest.raises(core.CheckFailed, match="5 whole numbers"):
        check_my_values([2, 3, 3, 5], [0.0] * 4, pub6)
    with pytest.raises(core.CheckFailed, match="half to even"):
        check_my_values([2, 3, 4, 5, 9], [-0.5, 0.0, 0.5, 1.0, 3.0], pub6)
    with pytest.raises(core.CheckFailed, match="Subtract the zero point"):
        check_my_values([2, 3, 3, 5, 9], [1.0, 1.5, 1.5, 2.5, 4.5], pub6)
    v = variants.variant("06_quant", "alice")
    q, back = values_answer(v)
    lo, hi = (0, 255) if v.dtype == "uint8" else (-128, 127)
    far = next(i for i, c in enumerate(q) if c in (lo, hi) and not lo < np.rint(v.x[i] / v.scale) + v.zero_point < hi)
    unclipped = list(q)
    unclipped[far] = int(np.rint(np.float32(v.x[far]) / np.float32(v.scale)) + v.zero_point)
    with pytest.raises(core.CheckFailed, match="saturate"):
        check_my_values(unclipped, back, v)
    with pytest.raises(TypeError, match="mine"):
        check_my_batch((6144, 192, 6, 2), 13292, (2, 16, 512, 16384), pub6)
    with pytest.raises(TypeError, match="mine"):
        check_my_values([2, 3, 3, 5, 9], [0.0] * 5, {"x": [0.0]})


# ---- the grader: each student graded on their own numbers, the CSV names the variant ----------------------


def _submission(tmp: Path, student: str, v_answer: tuple) -> Path:
    """Lab 1's student edition with only exercise 6 answered, collected in the folder ``tmp/student``."""
    from npukit.teach import student as edition

    nb = edition.make_student_notebook(json.loads(LAB1.read_text(encoding="utf-8")))
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "ex1-my-batch")
    strides, offset, f_strides = v_answer
    cell["source"] = f"my_strides = {strides!r}\nmy_offset = {offset!r}\nmy_f_strides = {f_strides!r}\n"
    path = tmp / student / LAB1.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(copy.deepcopy(nb)), encoding="utf-8")
    return path


@pytest.mark.slow
def test_grader_grades_lab1_on_each_students_variant(tmp_path):
    right = {who: batch_answer(variants.of("01_tensors", who)) for who in ("alice", "bob")}
    subs = tmp_path / "subs"
    _submission(subs, "alice", right["alice"])
    _submission(subs, "bob", right["alice"])                 # bob hands in alice's answer
    results = grade.grade([subs], ROOT / "labs", seed=11, lab="01_tensors")
    status = {r["student"]: next(e for e in r["exercises"] if e["id"] == "ex1-my-batch") for r in results}
    assert status["alice"]["status"] == "passed" and status["alice"]["points"] == 2
    assert status["bob"]["status"] == "failed" and "are not the C-order strides" in status["bob"]["message"]
    rows = list(csv.DictReader(io.StringIO(grade.to_csv(results))))
    assert [r["student"] for r in rows] == ["alice", "bob"]
    assert [r["variant"] for r in rows] == [variants.of("01_tensors", w).describe() for w in ("alice", "bob")]
    assert rows[0]["variant"].startswith(variants.of("01_tensors", "alice").tag + ": shape=(")
    assert [r["ex1-my-batch"] for r in rows] == ["2", "0"]
