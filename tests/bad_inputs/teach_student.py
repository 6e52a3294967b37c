"""Bad inputs for npukit.teach.student: one bad argument at a time, the others valid."""

import pathlib
import tempfile

from badinput import bad

from npukit.teach import student as S

TMP = pathlib.Path(tempfile.mkdtemp(prefix="npukit-bad-student-"))
(TMP / "file.txt").write_text("x")
SOLUTION = {"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": "x = 1\n", "outputs": []}
LEAK = {"cell_type": "code", "metadata": {}, "source": "### BEGIN SOLUTION\nx\n### END SOLUTION\n"}

CASES = [
    # strip_solutions
    bad(S.strip_solutions, b"### BEGIN SOLUTION", exc=TypeError, names="source"),
    bad(S.strip_solutions, ["x = 1"], exc=TypeError, names="source"),
    bad(S.strip_solutions, "### BEGIN SOLUTION\nx = 1\n", names="source"),
    bad(S.strip_solutions, "### END SOLUTION\nx\n### BEGIN SOLUTION\n", names="source"),
    # make_student_notebook
    bad(S.make_student_notebook, "notebook.ipynb", exc=TypeError, names="nb"),
    bad(S.make_student_notebook, {"cells": "abc"}, exc=TypeError, names="nb['cells']"),
    bad(S.make_student_notebook, {"cells": ["x = 1"]}, exc=TypeError, names="nb['cells'][0]"),
    bad(S.make_student_notebook, {"cells": [SOLUTION]}, names="cell 0"),
    bad(S.make_student_notebook, {"cells": [LEAK]}, names="cell 0"),
    # make_student_edition
    bad(S.make_student_edition, 3, TMP / "out", exc=TypeError, names="src"),
    bad(S.make_student_edition, TMP, None, exc=TypeError, names="out"),
    bad(S.make_student_edition, TMP / "missing", TMP / "out", exc=FileNotFoundError, names="src"),
    bad(S.make_student_edition, TMP, TMP / "out", exc=FileNotFoundError, names="src"),
    bad(S.make_student_edition, TMP, TMP / "file.txt", names="out"),
]
