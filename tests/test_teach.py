"""Tests of the exercise harness and the student-edition generator."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from npukit import teach


def test_check_passes_and_counts(capsys):
    n = teach.check("double", lambda x: 2 * x, [(1,), (np.arange(3),)], lambda x: x + x)
    assert n == 2
    assert "✓ double: 2 fresh cases" in capsys.readouterr().out


def test_check_names_the_failing_input():
    with pytest.raises(AssertionError, match=r"double: wrong answer for input \(3\)"):
        teach.check("double", lambda x: 2 * x + (x == 3), [(1,), (3,)], lambda x: 2 * x)


def test_check_copies_inputs_so_learner_cannot_corrupt_reference():
    def sneaky(a):
        a[:] = 0
        return a.sum()

    with pytest.raises(AssertionError):
        teach.check("sum", sneaky, [(np.ones(3),)], lambda a: a.sum())


def test_check_float_tolerance_and_shape():
    teach.check("f", lambda: np.float32(1.0) + 1e-9, [()], lambda: 1.0)
    with pytest.raises(AssertionError):
        teach.check("shape", lambda: np.zeros((2, 1)), [()], lambda: np.zeros(2))


def test_check_rejects_non_callables():
    with pytest.raises(TypeError, match="learner must be callable"):
        teach.check("x", 3, [], lambda: 0)
    with pytest.raises(TypeError, match="reference must be callable"):
        teach.check("x", lambda: 0, [], None)


def test_strip_solutions_keeps_indentation_and_surroundings():
    src = "import numpy as np\n\ndef f(x):\n    ### BEGIN SOLUTION\n    y = x + 1\n    return y\n    ### END SOLUTION\n\nprint('hi')\n"
    out = teach.strip_solutions(src)
    assert out == "import numpy as np\n\ndef f(x):\n    raise NotImplementedError()\n\nprint('hi')\n"


def test_strip_solutions_several_blocks_and_top_level():
    src = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nb = 2\ndef g():\n  ### BEGIN SOLUTION\n  return 3\n  ### END SOLUTION"
    out = teach.strip_solutions(src)
    assert out == "a = ...  # your answer\nb = 2\ndef g():\n  raise NotImplementedError()\n"
    src = "### BEGIN SOLUTION\nfor i in range(3):\n    print(i)\n### END SOLUTION\n"
    assert teach.strip_solutions(src) == "raise NotImplementedError()\n"   # not only assignments: raise


def test_strip_solutions_unbalanced():
    with pytest.raises(ValueError, match="unbalanced"):
        teach.strip_solutions("### BEGIN SOLUTION\nx = 1\n")
    with pytest.raises(ValueError, match="before its"):
        teach.strip_solutions("### END SOLUTION\nx\n### BEGIN SOLUTION\n")


def _nb(cells):
    return {"cells": cells, "metadata": {"widgets": {"state": {}}}, "nbformat": 4, "nbformat_minor": 5}


def _code(src, tags=(), outputs=()):
    return {"cell_type": "code", "source": src, "metadata": {"tags": list(tags)}, "outputs": list(outputs), "execution_count": 3}


def test_make_student_notebook_clears_and_strips():
    nb = _nb([
        _code("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n", ["solution", "hide-input"], [{"output_type": "stream", "name": "stdout", "text": "x"}]),
        _code("check(f)", ["check"], [{"output_type": "stream", "name": "stdout", "text": "ok"}]),
    ])
    st = teach.make_student_notebook(nb)
    assert "widgets" not in st["metadata"]
    assert st["cells"][0]["source"] == "def f():\n    raise NotImplementedError()\n"
    assert st["cells"][0]["metadata"]["tags"] == ["solution"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in st["cells"])
    assert nb["cells"][0]["outputs"], "the input notebook must not be modified"


def test_make_student_notebook_refuses_leaks_and_untagged_markers():
    with pytest.raises(ValueError, match="tagged 'solution' but has no"):
        teach.make_student_notebook(_nb([_code("x = 1", ["solution"])]))
    with pytest.raises(ValueError, match="not tagged 'solution'"):
        teach.make_student_notebook(_nb([_code("### BEGIN SOLUTION\nx\n### END SOLUTION\n")]))


def test_cli_writes_student_edition(tmp_path, capsys):
    src = tmp_path / "labs"
    src.mkdir()
    (src / "01_x.ipynb").write_text(json.dumps(_nb([_code("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n", ["solution"])])))
    from npukit.teach.__main__ import main

    assert main(["student", str(src), "-o", str(tmp_path / "student")]) == 0
    out = json.loads((tmp_path / "student" / "01_x.ipynb").read_text())
    assert out["cells"][0]["source"] == "x = ...  # your answer\n"
    assert "wrote" in capsys.readouterr().out


def test_student_edition_missing_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        teach.make_student_edition(tmp_path / "nope", tmp_path / "out")
    with pytest.raises(FileNotFoundError, match="holds no"):
        teach.make_student_edition(tmp_path, tmp_path / "out")


# ---- the core: one-line outcomes, short messages ------------------------------------------------

from npukit import layouts, rewrites, tensors  # noqa: E402
from npukit.teach import core, guard  # noqa: E402


def _solution(lab: str, name: str):
    """The instructor's solution function ``name`` from labs/<lab>.ipynb (executed in a fresh namespace)."""
    import math
    import collections
    from pathlib import Path

    nb = json.loads((Path(__file__).parent.parent / "labs" / f"{lab}.ipynb").read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if "solution" in cell["metadata"].get("tags", []) and f"def {name}(" in src:
            ns = {"np": np, "math": math, "collections": collections, "rng": np.random.default_rng(0)}
            exec(compile(src, f"<{lab} solution>", "exec"), ns)
            return ns[name]
    raise LookupError(name)


def test_not_attempted_is_one_line():
    def todo(*args):
        raise NotImplementedError()

    for checker in (teach.check_strides, teach.check_view_or_copy, teach.check_aligned_empty, teach.check_to_blocked,
                    teach.check_conv_macs, teach.check_fold_bn):
        with pytest.raises(core.NotAttempted) as info:
            checker(todo)
        assert info.value._render_traceback_() == [f"\x1b[31m✗ {info.value}\x1b[0m"]
        assert str(info.value).endswith("not attempted yet (the function still raises NotImplementedError).")


def test_an_error_in_the_learners_code_shows_the_learners_lines_only():
    def broken(shape, itemsize, order="C"):
        return shape[7]

    with pytest.raises(core.CheckFailed, match=r"strides: your function raised IndexError: tuple index out of range") as info:
        teach.check_strides(broken)
    lines = info.value._render_traceback_()
    assert lines[1].strip().startswith("line") and "return shape[7]" in lines[1] and len(lines) == 2


def test_array_mismatch_names_the_first_wrong_element_not_the_array():
    def off_by_one_channel(x, block):
        n, c, h, w = x.shape
        out = np.zeros((n, -(-c // block), h, w, block), dtype=x.dtype)
        for ch in range(c):
            out[:, ch // block, :, :, (ch + 1) % block] = x[:, ch]
        return out

    with pytest.raises(core.CheckFailed) as info:
        teach.check_to_blocked(off_by_one_channel)
    text = str(info.value)
    assert re.search(r"first wrong element at index \(\d+, \d+, \d+, \d+, \d+\): expected -?[\d.e+-]+, got -?[\d.e+-]+ "
                     r"\(\d+ of \d+ elements differ\)", text), text
    assert len(text.splitlines()) <= 3 and "[[" not in text


def test_first_difference():
    assert core.first_difference(np.zeros((2, 3)), np.zeros((3, 2))) == "expected an array of shape (3, 2), got one of shape (2, 3)."
    assert core.first_difference([1, 2], np.array([1, 2, 3])).startswith("expected an array of shape (3,)")
    assert core.first_difference(5, 4) == "expected 4, got 5."


@pytest.mark.parametrize("cheat", [
    type("Always", (int,), {"__eq__": lambda s, o: True, "__hash__": int.__hash__})(0),
    type("AlwaysArray", (np.ndarray,), {"__eq__": lambda s, o: np.True_})((1,)),
    type("Whatever", (), {"__eq__": lambda s, o: True})(),
])
def test_an_answer_that_claims_equality_is_not_believed(cheat):
    with pytest.raises(core.CheckFailed, match="wrong answer"):
        teach.check_conv_macs(lambda *a: cheat)
    with pytest.raises(core.CheckFailed):
        core.check("x", lambda: cheat, [()], lambda: np.arange(4))


def test_the_ledger_records_each_exported_check():
    start = len(core._LEDGER)
    teach.check_attainable(lambda f, b, p, bw: min(p, bw * f / b))
    with pytest.raises(core.CheckFailed):
        teach.check_attainable(lambda f, b, p, bw: p)
    with pytest.raises(core.NotAttempted):
        teach.check_attainable(lambda *a: (_ for _ in ()).throw(NotImplementedError()))
    got = [(e["check"], e["status"]) for e in core._ledger_since(start)]
    assert got == [("check_attainable", "passed"), ("check_attainable", "failed"), ("check_attainable", "not attempted")]


# ---- lab 1's wrong answers (the other labs' are in tests/test_<chapter>.py) ------------------------


def _strides_elements(shape, itemsize, order="C"):
    return tuple(s // itemsize for s in _solution("01_tensors", "strides_by_hand")(shape, itemsize, order))


@pytest.mark.parametrize("checker, wrong, match", [
    ("check_strides", _strides_elements, r"(?s)strides: wrong answer.*Hint: these are strides in elements"),
    ("check_strides", lambda s, i, o="C": _solution("01_tensors", "strides_by_hand")(s, i, "FC"[o == "F"]),
     r"(?s)strides: wrong answer.*Hint: that is the answer for order"),
    ("check_strides", lambda s, i, o="C": list(_solution("01_tensors", "strides_by_hand")(s, i, o))[::-1],
     r"strides: wrong answer"),
    ("check_strides", lambda s, i, o="C": _solution("01_tensors", "strides_by_hand")(s, i, "C"),
     r"strides: wrong answer"),   # ignores the order
    ("check_view_or_copy", lambda op: True, "your predictions are not all right"),
    ("check_view_or_copy", lambda op: "[" not in op, "your predictions are not all right"),
    ("check_view_or_copy", lambda op: "view", r"return True \(a view\) or False \(a copy\), got 'view'"),
    ("check_aligned_empty", lambda shape, dtype, a: np.empty(shape, dtype), r"address % \d+ = \d+, not 0"),
    ("check_aligned_empty", lambda shape, dtype, a: np.empty(shape, dtype).tolist(), "not a numpy.ndarray"),
    ("check_aligned_empty", lambda shape, dtype, a: np.empty(shape[::-1] + (1,), dtype), "returned shape"),
    ("check_aligned_empty", lambda shape, dtype, a: np.empty(shape, np.float64), "returned shape"),
    ("check_aligned_empty", lambda shape, dtype, a: _solution("01_tensors", "my_aligned_empty")(shape + (2,), dtype, a)[..., 0],
     "C-contiguous"),
    ("check_aligned_empty", lambda shape, dtype, a, _buf=np.zeros(1 << 20, np.uint8):
        _buf[-_buf.ctypes.data % 4096:][: int(np.prod(shape)) * np.dtype(dtype).itemsize].view(dtype).reshape(shape),
     "overlaps an array returned earlier"),
    ("check_reshape_view", lambda s, st, n: True, r"(?s)reshape without a copy: wrong answer.*expected False, got True"),
    ("check_reshape_view", lambda s, st, n: all(a == b * c for a, b, c in zip(st, s[1:], st[1:])),
     "reshape without a copy: wrong answer"),   # "a view only when x is contiguous"
    ("check_reshape_view", lambda s, st, n: 1, "return True or False"),
])
def test_lab1_checkers_reject_wrong_answers(checker, wrong, match):
    with pytest.raises(AssertionError, match=match):
        getattr(teach, checker)(wrong)


def test_lab1_checkers_accept_the_instructors_solutions(capsys):
    teach.check_strides(_solution("01_tensors", "strides_by_hand"))
    teach.check_view_or_copy(_solution("01_tensors", "is_view"))
    teach.check_aligned_empty(_solution("01_tensors", "my_aligned_empty"))
    teach.check_reshape_view(_solution("01_tensors", "reshape_is_view"))
    assert capsys.readouterr().out.count("✓") == 4


def test_view_or_copy_message_gives_no_answer_away():
    """Every wrong set of predictions gets the same message, which names none of the operations."""
    right = _solution("01_tensors", "is_view")
    messages = set()
    for form in ("x[", ".astype(", "np.ascontiguousarray("):   # every run asks about each form at least once
        with pytest.raises(core.CheckFailed) as info:
            teach.check_view_or_copy(lambda op, f=form: right(op) != op.startswith(f) if f != ".astype(" else
                                     right(op) != (f in op))
        messages.add(str(info.value))
    with pytest.raises(core.CheckFailed) as info:
        teach.check_view_or_copy(lambda op: not right(op))
    messages.add(str(info.value))
    assert len(messages) == 1
    message = messages.pop()
    assert "x[" not in message and "astype(" not in message and "transpose(" not in message


def test_view_or_copy_draws_other_operations_every_run():
    """In a notebook each run asks about other operations (a table copied from one run fails the next);
    graded, the grading seed decides them; the rules of the lab's solution hold for every draw."""
    import numpy as np

    runs = {tuple(sorted(teach.tensors._view_or_copy_ops(core._fresh_rng(1103)))) for _ in range(5)}
    assert len(runs) == 5
    right = _solution("01_tensors", "is_view")
    for seed in range(100):
        for op in teach.tensors._view_or_copy_ops(np.random.default_rng(seed)):
            assert right(op) == teach.tensors._actually_a_view(op), op
    table = {op: right(op) for op in teach.VIEW_OR_COPY_OPS}        # one run's answers, as a lookup table
    failed = 0
    try:
        for seed in range(20):
            core._set_grade_seed(seed)
            try:
                teach.check_view_or_copy(lambda op: table.get(op, True))
            except core.CheckFailed:
                failed += 1
    finally:
        core._set_grade_seed(None)
    assert failed == 20


# ---- cheats (issue 14): each fails its check ---------------------------------------------------

import npukit.tensors  # noqa: E402  (imported early, as a learner's notebook would)
from npukit.layouts import to_blocked as my_alias  # noqa: E402
from npukit.rewrites import live_peak as peak_alias  # noqa: E402
from npukit.tensors import aligned_empty as allocate  # noqa: E402

LIBRARY_ANSWERS = [
    ("check_strides", tensors.contiguous_strides, "npukit.tensors.contiguous_strides"),
    ("check_strides", lambda s, i, o="C": tensors.describe(np.empty(s, np.dtype((np.void, i)), order=o)).strides,
     "numpy.empty"),
    ("check_strides", lambda s, i, o="C": np.empty(s, np.dtype((np.void, i)), order=o).strides, "numpy.empty"),
    ("check_view_or_copy", lambda op: bool(np.shares_memory(x := np.ones((2, 3, 4, 4), np.float32),
                                                            eval(op, {"np": np, "x": x}))), "numpy.ones"),
    ("check_aligned_empty", allocate, "npukit.tensors.aligned_empty itself"),
    ("check_aligned_empty", lambda s, d, a: allocate(s, d, a), "npukit.tensors.aligned_empty"),
    ("check_aligned_empty", lambda s, d, a: npukit.tensors.aligned_empty(s, d, alignment=a), "npukit.tensors.aligned_empty"),
    ("check_reshape_view", lambda s, st, n: bool(np.shares_memory(
        y := np.lib.stride_tricks.as_strided(np.arange(4096.0), s, st), y.reshape(n))), "as_strided"),
    ("check_stays_view", lambda s, p: layouts.conversion_is_free(s, "NCDHW"[: len(s)], "".join("NCDHW"[i] for i in p)),
     "npukit.layouts.conversion_is_free"),
    ("check_stays_view", lambda s, p: bool(np.shares_memory(x := np.arange(np.prod(s)).reshape(s), x.T)),
     "numpy.shares_memory"),
    ("check_view_or_copy", lambda op: eval(op, {"np": np, "x": np.arange(96.0)}) is not None,
     "builtins.eval"),
    ("check_to_blocked", my_alias, "npukit.layouts.to_blocked itself"),
    ("check_to_blocked", lambda x, b: my_alias(x, b), "npukit.layouts.to_blocked"),
    ("check_from_blocked", lambda xb, b, c: layouts.from_blocked(xb, b, c), "npukit.layouts.from_blocked"),
    ("check_im2col_view", lambda x, k, s: layouts.im2col(x, k, stride=s), "npukit.layouts.im2col"),
    ("check_live_peak", peak_alias, "npukit.rewrites.live_peak itself"),
    ("check_live_peak", lambda ts: rewrites.plan_memory.__globals__["live_peak"](ts), "npukit.rewrites.live_peak"),
]


@pytest.mark.parametrize("checker, cheat, called", LIBRARY_ANSWERS, ids=lambda v: v if isinstance(v, str) else "")
def test_cheat_library_answer_is_refused(checker, cheat, called):
    with pytest.raises(core.CheckFailed, match=re.escape(called)):
        getattr(teach, checker)(cheat)


REFERENCE_HELPERS = [
    ("check_reshape_view", lambda s, st, n: teach.tensors._reshape_is_view(s, st, n), "_reshape_is_view"),
    ("check_view_or_copy", lambda op: teach.tensors._actually_a_view(op), "_actually_a_view"),
    ("check_strides", lambda s, i, o="C": teach.tensors._strides_reference(s, i, o), "_strides_reference"),
    ("check_stays_view", teach.layouts._transpose_is_free, "_transpose_is_free itself"),
    ("check_to_blocked", lambda x, b: teach.layouts._blocked_by_loops(x, b), "_blocked_by_loops"),
    ("check_im2col_view", lambda x, k, s: teach.layouts._patches_by_loops(x, k, s), "_patches_by_loops"),
    ("check_conv_macs", teach.graphs._macs_by_loops, "_macs_by_loops itself"),
    ("check_conv_macs", lambda *a: teach.graphs._macs_by_loops(*a), "_macs_by_loops"),
    ("check_live_peak", lambda ts: teach.graphs._peak_by_sweep(ts), "_peak_by_sweep"),
    ("check_attainable", lambda f, b, p, bw: core.check("x", lambda: 1, [()], lambda: 1), "npukit.teach.core.check"),
]


@pytest.mark.parametrize("checker, cheat, called", REFERENCE_HELPERS, ids=lambda v: v if isinstance(v, str) else "")
def test_cheat_checker_reference_is_refused(checker, cheat, called):
    with pytest.raises(core.CheckFailed, match=re.escape(called)):
        getattr(teach, checker)(cheat)


def test_cheat_fold_bn_through_the_library_is_refused():
    def fold(W, b, gamma, beta, mean, var, eps):
        rewrites.fold_batchnorm(None)

    with pytest.raises(core.CheckFailed, match="npukit.rewrites.fold_batchnorm"):
        teach.check_fold_bn(fold)


def test_cheat_reading_the_checkers_frames_is_refused():
    import inspect
    import sys

    def peek(shape, itemsize, order="C"):
        return sys._getframe(3).f_locals.get("want")

    def stack(shape, itemsize, order="C"):
        return inspect.stack()[3].frame.f_locals.get("want")

    for cheat, called in ((peek, "sys._getframe"), (stack, "inspect.stack")):
        with pytest.raises(core.CheckFailed, match=re.escape(called)):
            teach.check_strides(cheat)


def test_cheat_turning_off_the_watch_is_refused():
    import sys

    def quiet(shape, itemsize, order="C"):
        sys.setprofile(None)
        return tensors.contiguous_strides(shape, itemsize, order)

    with pytest.raises(core.CheckFailed, match="sys.setprofile"):
        teach.check_strides(quiet)


def test_cheat_changing_the_checkers_copy_of_the_input_is_refused():

    def rewrite(x, block):
        tb = None
        try:
            raise RuntimeError
        except RuntimeError as e:
            tb = e.__traceback__
        frame = tb.tb_frame
        while frame is not None and "case" not in frame.f_locals:
            frame = frame.f_back
        frame.f_locals["case"][0][...] = 0   # the checker's own input: its reference would then see zeros
        return np.zeros((x.shape[0], -(-x.shape[1] // block), *x.shape[2:], block), np.float32)

    with pytest.raises(core.CheckFailed, match="changed the checker's own copy of the input"):
        teach.check_to_blocked(rewrite)


PATCHES = [
    (lambda mp: mp.setattr(teach, "_same", lambda *a, **k: True, raising=False), "npukit.teach._same was added"),
    (lambda mp: mp.setattr(core, "_same", lambda *a, **k: True), "npukit.teach.core._same was replaced"),
    (lambda mp: mp.setattr(core, "check", lambda *a, **k: 1), "npukit.teach.core.check was replaced"),
    (lambda mp: mp.setattr(teach.tensors, "_same", lambda *a, **k: True), "npukit.teach.tensors._same was replaced"),
    (lambda mp: mp.setattr(teach.core.CheckFailed, "__init__", lambda *a, **k: None),
     "npukit.teach.core.CheckFailed.__init__ was added"),
    (lambda mp: mp.setattr(np, "allclose", lambda *a, **k: True), "numpy.allclose was replaced"),
    (lambda mp: mp.setattr(np, "array_equal", lambda *a, **k: True), "numpy.array_equal was replaced"),
    (lambda mp: mp.setattr(np.random, "default_rng", lambda *a: np.random.Generator(np.random.PCG64(0))),
     "numpy.random.default_rng was replaced"),
    (lambda mp: mp.setattr(guard, "tampering", lambda: []), "npukit.teach.guard.tampering was replaced"),
]


@pytest.mark.parametrize("patch, named", PATCHES, ids=[n for _, n in PATCHES])
def test_cheat_monkeypatching_fails_every_check(monkeypatch, patch, named):
    wrong = _strides_elements
    patch(monkeypatch)
    try:
        with pytest.raises(core.CheckFailed) as info:
            teach.check_strides(wrong)
        assert "after npukit.teach was imported" in str(info.value) or "was" in str(info.value)
        if "guard.tampering" not in named:
            assert named.rsplit(" was ", 1)[0] in str(info.value)
    finally:
        monkeypatch.undo()
    teach.check_strides(_solution("01_tensors", "strides_by_hand"))   # undone: the checks work again


def test_cheat_replacing_an_exported_checker_is_seen():
    before = teach.check_strides
    try:
        teach.check_strides = lambda fn: print("✓ strides: 40 fresh cases agree with the reference.")
        assert "npukit.teach.check_strides was replaced" in guard.tampering()
        with pytest.raises(core.CheckFailed, match="check_strides was replaced"):
            teach.check_attainable(lambda f, b, p, bw: min(p, bw * f / b))
    finally:
        teach.check_strides = before
    assert guard.tampering() == []


def test_cheat_lookup_table_from_messages_fails_with_the_grading_seed():
    """A table of the lab's own cases (as failure messages would reveal them) passes in the lab, not in grading."""
    cases = teach.tensors._reshape_cases(core._rng(1105), 60)
    table = {case: teach.tensors._reshape_is_view(*case) for case in cases}   # harvested, then pasted in

    def lookup(shape, strides, new_shape):
        return table[(shape, strides, new_shape)]

    teach.check_reshape_view(lookup)
    try:
        core._set_grade_seed(20260101)
        with pytest.raises(core.CheckFailed, match="your function raised KeyError"):
            teach.check_reshape_view(lookup)
    finally:
        core._set_grade_seed(None)
    assert guard.tampering() == []


def test_grade_seed_changes_the_cases_of_every_checker():
    def seen(checker, fn):
        got = []

        def spy(*args):
            got.append(repr(args))
            return fn(*args)

        checker(spy)
        return got

    macs = _solution("03_graphs", "conv_macs")
    lab = seen(teach.check_conv_macs, macs)
    try:
        core._set_grade_seed(7)
        graded = seen(teach.check_conv_macs, macs)
    finally:
        core._set_grade_seed(None)
    assert len(lab) == len(graded) and not set(lab) & set(graded)


# ---- the committed student edition and the labs' nbgrader metadata --------------------------------

from pathlib import Path  # noqa: E402

from npukit.teach import grade as grading, student  # noqa: E402

ROOT = Path(__file__).parent.parent
LAB_FILES = sorted((ROOT / "labs").glob("*.ipynb"))


def test_committed_student_edition_is_up_to_date():
    committed = sorted(p.name for p in (ROOT / "labs" / "student").glob("*.ipynb"))
    assert committed == [p.name for p in LAB_FILES], "run `make student` (labs/student/ lacks or has extra labs)"
    for lab in LAB_FILES:
        want = student.student_text(lab, ROOT / "labs" / "student")
        got = (ROOT / "labs" / "student" / lab.name).read_text(encoding="utf-8")
        assert got == want, f"labs/student/{lab.name} is out of date: run `make student`"


def test_student_edition_links_work_from_its_folder():
    for lab in LAB_FILES:
        nb = json.loads((ROOT / "labs" / "student" / lab.name).read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] == "markdown":
                for link in re.findall(r"\]\(([^)\s]+)\)", "".join(cell["source"])):
                    if not re.match(r"^([a-z]+:|#|/)", link):
                        assert (ROOT / "labs" / "student" / link.split("#")[0]).exists(), (lab.name, link)


def test_every_lab_has_complete_nbgrader_metadata():
    for lab in LAB_FILES:
        assert grading.set_metadata(lab, write=False) == [], f"run `make metadata` ({lab.name})"
        nb = json.loads(lab.read_text(encoding="utf-8"))
        for ex in grading.exercises(nb, lab.stem):
            assert nb["cells"][ex.check]["metadata"]["nbgrader"]["points"] >= 1


#: Labs whose check cells are pinned call by call (each a single call of its checker).
CHECK_CALLS = {
    "05_systolic": ["teach.check_fold_cycles(fold_cycles)", "teach.check_ws_busy(ws_busy)",
                    "teach.check_utilization_prediction(predict_utilization, sim_pw)",
                    "teach.check_best_shape(best_shape)",
                    "teach.check_my_layer(my_cycles, my_utilization, mine)"],
    "06_quant": ["teach.check_quantize(my_quantize)", "teach.check_channel_scales(channel_scales)",
                 "teach.check_requantize(my_requantize)",
                 "teach.check_calibration_prediction(my_prediction, measured_drop)",
                 "teach.check_my_values(my_q, my_dequantized, mine)"],
    "07_deploy": ["teach.check_crossing_bytes(crossing_bytes)", "teach.check_reorder(reorder)",
                  "teach.check_double_buffered(double_buffered)",
                  "teach.check_speedup_prediction(predict_speedup, tp, runs)"],
}


@pytest.mark.parametrize("lab", LAB_FILES, ids=lambda p: p.stem)
def test_check_cells_are_locked_calls_the_student_edition_keeps(lab, tmp_path):
    """nbgrader restores locked cells when it grades, so an edited check cell does not count; the student
    edition must hand them out unchanged, and each calls one of npukit's checkers."""
    nb = json.loads(lab.read_text(encoding="utf-8"))
    checks = [c for c in nb["cells"] if "check" in c["metadata"].get("tags", [])]
    code = [[line for line in "".join(c["source"]).splitlines() if line.strip() and not line.startswith("#")]
            for c in checks]
    assert all(lines and lines[0].startswith("teach.check_") for lines in code), code
    if lab.stem in CHECK_CALLS:
        assert ["\n".join(lines) for lines in code] == CHECK_CALLS[lab.stem]
    for c in checks:
        meta = c["metadata"]["nbgrader"]
        assert meta["locked"] and meta["grade"] and not meta["solution"] and meta["points"] >= 1
    (out,) = teach.make_student_edition(lab, tmp_path)
    handed_out = [c for c in json.loads(out.read_text(encoding="utf-8"))["cells"]
                  if "check" in c["metadata"].get("tags", [])]
    assert [("".join(c["source"]), c["metadata"]["nbgrader"]) for c in handed_out] == \
        [("".join(c["source"]), c["metadata"]["nbgrader"]) for c in checks]


def test_metadata_is_written_idempotently(tmp_path):
    lab = LAB_FILES[0]
    nb = json.loads(lab.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        cell["metadata"].pop("nbgrader", None)
    path = tmp_path / lab.name
    path.write_text(json.dumps(nb))
    assert len(grading.set_metadata(path)) == 2 * len(grading.exercises(nb, lab.stem))
    assert grading.set_metadata(path) == []
    assert path.read_text(encoding="utf-8") == lab.read_text(encoding="utf-8")


def _points_table() -> dict[tuple[str, str], int]:
    """The instructor guide's points table: {(lab, grade_id): points}."""
    text = (ROOT / "chapters" / "instructor.md").read_text(encoding="utf-8")
    section = text[text.index("### Points"):]
    rows = re.findall(r"^\| *(\d\d_\w+) *\| *`([\w-]+)` *\|.*?\| *(\d+) *\|\s*$", section, re.M)
    return {(lab, gid): int(points) for lab, gid, points in rows}


def test_instructor_guide_lists_every_exercise_with_its_points():
    want = {}
    for lab in LAB_FILES:
        nb = json.loads(lab.read_text(encoding="utf-8"))
        for ex in grading.exercises(nb, lab.stem):
            want[(lab.stem, ex.id)] = ex.points
    got = _points_table()
    missing = [f"| {lab} | `{gid}` | … | {p} |" for (lab, gid), p in want.items() if got.get((lab, gid)) != p]
    assert not missing, "chapters/instructor.md, ### Points, needs these rows (or these points):\n" + "\n".join(missing)
    assert set(got) <= set(want), f"rows for exercises that no lab has: {sorted(set(got) - set(want))}"


def test_cli_metadata_check_and_grade_help(capsys):
    from npukit.teach.__main__ import main

    assert main(["metadata", str(ROOT / "labs"), "--check"]) == 0
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    assert "--csv" in capsys.readouterr().out


# ---- the lab pages offer the student edition (npukit.teach.book) ------------------------------------


class _Config:
    html_theme_options = {"repository_url": "https://github.com/tensors-on-silicon/tensors-on-silicon",
                          "repository_branch": "main", "path_to_docs": "",
                          "launch_buttons": {"binderhub_url": "https://mybinder.org",
                                             "colab_url": "https://colab.research.google.com"}}


def test_lab_page_gets_a_student_edition_box_with_links():
    from npukit.teach import book

    class App:
        config = _Config()

    source = [(ROOT / "labs" / "01_tensors.ipynb").read_text(encoding="utf-8")]
    book._add_box(App(), "labs/01_tensors", source)
    nb = json.loads(source[0])
    box = nb["cells"][1]["source"]
    assert "{download}`Download it <student/01_tensors.ipynb>`" in box
    assert ("https://mybinder.org/v2/gh/tensors-on-silicon/tensors-on-silicon/main?urlpath=lab/tree/"
            "labs/student/01_tensors.ipynb") in box
    assert ("https://colab.research.google.com/github/tensors-on-silicon/tensors-on-silicon/blob/main/"
            "labs/student/01_tensors.ipynb") in box
    other = ["{}"]
    book._add_box(App(), "chapters/01_tensors", other)
    assert other == ["{}"]


def test_lab_page_launch_buttons_open_the_student_edition():
    from npukit.teach import book

    context = {"header_buttons": [{"type": "group", "buttons": [
        {"text": "Binder", "url": "https://mybinder.org/v2/gh/o/r/main?urlpath=lab/tree/labs/02_layouts.ipynb"},
        {"text": "Colab", "url": "https://colab.research.google.com/github/o/r/blob/main/labs/02_layouts.ipynb"}]},
        {"text": ".ipynb", "url": "../_sources/labs/02_layouts.ipynb"}]}
    book._launch_student(None, "labs/02_layouts", "page.html", context, None)
    urls = [b["url"] for b in context["header_buttons"][0]["buttons"]]
    assert all(u.endswith("labs/student/02_layouts.ipynb") for u in urls)
    assert context["header_buttons"][1]["url"] == "../_sources/labs/02_layouts.ipynb"   # the download stays


def test_cheat_measuring_instead_of_predicting_is_refused():
    def measure_reshape(shape, strides, new_shape):
        x = np.arange(4096, dtype=np.float32)
        y = np.ndarray(shape, np.float32, buffer=x, strides=strides)   # building it is not seen ...
        return y.reshape(new_shape).base is not None                    # ... reshaping it is

    def measure_transpose(shape, perm):
        x = np.zeros(shape)
        return np.ascontiguousarray(x.transpose(perm)).base is x

    with pytest.raises(core.CheckFailed, match="numpy.ndarray.reshape"):
        teach.check_reshape_view(measure_reshape)
    with pytest.raises(core.CheckFailed, match="numpy.zeros"):
        teach.check_stays_view(measure_transpose)


def test_view_or_copy_forms_decide_without_the_shape():
    """Lab 1's exercise 2 says the string decides every answer the check asks for, and names two forms it
    leaves out because their answer depends on x's shape: both claims, on every batch shape the check draws."""
    import itertools

    import numpy as np

    shapes = list(itertools.product(range(2, 5), range(3, 5), range(4, 9), range(4, 9)))   # tensors._batch's
    batches = [np.zeros(s, np.float32) for s in shapes]

    def answers(op):
        return {bool(np.shares_memory(x, eval(op, {"np": np, "x": x}))) for x in batches}

    for seed in range(12):
        for op in teach.tensors._view_or_copy_ops(np.random.default_rng(seed)):
            assert len(answers(op)) == 1, op
    for op in ("x[..., ::1, ::2].reshape(len(x), -1)", "x.transpose(3, 0, 1, 2).reshape(len(x), -1)"):
        assert answers(op) == {True, False}, op
    for x in batches:   # a view exactly when the width is even; exactly when the width is the batch size
        n, _, _, w = x.shape
        assert np.shares_memory(x, x[..., ::1, ::2].reshape(len(x), -1)) == (w % 2 == 0), x.shape
        assert np.shares_memory(x, x.transpose(3, 0, 1, 2).reshape(len(x), -1)) == (w == n), x.shape
