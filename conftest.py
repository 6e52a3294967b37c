"""Run the MyST Markdown chapters under pytest, cell by cell.

nbval collects only ``.ipynb`` files. With ``--myst``, this hook converts each
``chapters/*.md`` page that has jupytext front matter into a notebook in memory
(jupytext) and hands it to nbval's collector. Chapters store no outputs, so
outputs are not compared: a cell fails when it raises, and ``assert``
statements in cells are the chapter's tests.
"""

from __future__ import annotations

from collections import defaultdict

import pytest


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


try:
    from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags
except ImportError:  # nbval not installed: nothing to collect
    IPyNbFile = None

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
