"""Tests of the exercise harness and the student-edition generator."""

from __future__ import annotations

import json

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
    assert out == "raise NotImplementedError()\nb = 2\ndef g():\n  raise NotImplementedError()\n"


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
    assert out["cells"][0]["source"] == "raise NotImplementedError()\n"
    assert "wrote" in capsys.readouterr().out


def test_student_edition_missing_source(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        teach.make_student_edition(tmp_path / "nope", tmp_path / "out")
    with pytest.raises(FileNotFoundError, match="holds no"):
        teach.make_student_edition(tmp_path, tmp_path / "out")
