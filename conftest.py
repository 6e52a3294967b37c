"""Run the MyST Markdown chapters under pytest, cell by cell; tune nbval for the labs.

nbval collects only ``.ipynb`` files. With ``--myst``, this hook converts each
``chapters/*.md`` page that has jupytext front matter into a notebook in memory
(jupytext) and hands it to nbval's collector. Chapters store no outputs, so
outputs are not compared: a cell fails when it raises, and ``assert``
statements in cells are the chapter's tests.

For the labs, nbval compares every stored output except plotly's JSON
figures: that JSON embeds plotly's theme, which changes between plotly
releases, so comparing it would fail on a new plotly with no change to the
course. Figures are still executed (a cell that fails to draw one fails), are
tested in ``tests/``, and are checked drawn in a browser by
``tests/browser_check.py``.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from npukit._jupyter import patch_zmq_polling

# Executing a lab whose cells move a widget can stall until nbclient's timeout
# (nbclient issue 312); npukit/_jupyter.py explains the workaround.
patch_zmq_polling()


def pytest_addoption(parser):
    parser.addoption("--myst", action="store_true", help="execute MyST Markdown notebooks (chapters/*.md)")


def _is_myst_notebook(path) -> bool:
    if path.suffix != ".md":
        return False
    head = path.read_text(encoding="utf-8")[:600]
    return head.startswith("---") and "format_name: myst" in head


def pytest_collect_file(file_path, parent):
    if parent.config.getoption("--myst") and _is_myst_notebook(file_path):
        return MystNotebook.from_parent(parent, path=file_path)
    return None


PLOTLY_MIME = "application/vnd.plotly.v1+json"

try:
    from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags
except ImportError:  # nbval not installed: nothing to collect
    IPyNbFile = None


def pytest_collection_modifyitems(session, config, items):
    if IPyNbFile is None:
        return
    for item in items:
        nb = item.parent
        if isinstance(nb, IPyNbFile) and PLOTLY_MIME not in nb.skip_compare:
            nb.skip_compare = nb.skip_compare + (PLOTLY_MIME,)

if IPyNbFile is not None:

    class MystNotebook(IPyNbFile):
        """An nbval notebook read from MyST Markdown; outputs are never compared."""

        def collect(self):
            import jupytext

            self.nb = jupytext.read(str(self.fspath))
            self.nb.metadata.setdefault("kernelspec", {"name": "python3"})
            cell_num = 0
            for cell in self.nb.cells:
                if cell.cell_type != "code":
                    continue
                options = defaultdict(bool, find_metadata_tags(cell.metadata))
                options.update(dict(find_comment_markers(cell.source)))
                options["check"] = False
                yield IPyNbCell.from_parent(self, name=f"Cell {cell_num}", cell_num=cell_num, cell=cell, options=options)
                cell_num += 1
