"""Code a reader sees fits the page: no displayed line longer than 80 characters.

The book's column shows about 80 characters of code; a longer line is cut at
the right edge and must be scrolled sideways. A code cell tagged
``hide-input`` (or ``hide-cell``, ``remove-input``, ``remove-cell``) is not
shown open, so it may keep longer lines; every other code cell of a chapter
page, every fenced code block in its prose, and every code cell of a lab that
the book renders open is checked.

Labs are checked too: the book renders them as pages, with the same column,
and JupyterLab does not wrap code either. Their solution cells are tagged
``hide-input`` and are exempt like a chapter's set-up cells.

Pages and labs other engineers are rewriting now are marked ``xfail`` (not
strict) with the reason, so the lead can switch them on after merging.
Costs well under a second: it only reads text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 80
HIDDEN = {"hide-input", "hide-cell", "remove-input", "remove-cell"}

#: Labs 1-4 belong to no one in this round and need re-running with their timing outputs.
PAGES_ELSEWHERE = {"instructor.md": "issue 20 (its long lines are the grading section's commands and CSV)"}
LABS_ELSEWHERE = {"01_tensors.ipynb": "labs 1-4 are outside issue 21", "02_layouts.ipynb": "labs 1-4 are outside issue 21",
                  "03_graphs.ipynb": "labs 1-4 are outside issue 21", "04_gemm.ipynb": "labs 1-4 are outside issue 21"}

_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")


def displayed_code(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of every code line a MyST page shows open.

    Code cells (```` ```{code-cell} ````) unless tagged hidden, and fenced
    code blocks (```` ```python ````, ```` ```{code-block} ````, or a bare
    fence). Directive fences such as ``{exercise}``, ``{admonition}`` or
    ``{solution-start}`` hold prose and are walked into, not checked.
    """
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    prose: list[str] = []                              # fences of the prose directives we are inside
    i = 0
    if lines and lines[0].strip() == "---":          # front matter
        i = lines.index("---", 1) + 1
    while i < len(lines):
        m = _FENCE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        if not info and prose and fence[0] == prose[-1][0] and len(fence) >= len(prose[-1]):
            prose.pop()                                # the end of a prose directive
            i += 1
            continue
        directive = re.match(r"\{([\w:-]+)\}", info)
        name = directive.group(1) if directive else ""
        if directive and name not in ("code-cell", "code-block", "code"):
            prose.append(fence)                        # prose directive: its body is walked line by line
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not (lines[end].strip().startswith(fence[0] * len(fence))
                                         and lines[end].strip().strip(fence[0]) == ""
                                         and len(lines[end].strip()) >= len(fence)):
            end += 1
        body = list(range(i + 1, end))
        tags: set[str] = set()
        if name == "code-cell":
            j = 0
            if body and lines[body[0]].strip() == "---":           # YAML options block
                close = next(k for k in range(1, len(body)) if lines[body[k]].strip() == "---")
                options = " ".join(lines[body[k]] for k in range(1, close))
                j = close + 1
            else:
                options = ""
                while j < len(body) and lines[body[j]].lstrip().startswith(":"):
                    options += " " + lines[body[j]]
                    j += 1
            tags = set(re.findall(r"[\w-]+", options.split("tags:", 1)[1])) if "tags:" in options else set()
            body = body[j:]
        if not (tags & HIDDEN):
            out += [(k + 1, lines[k]) for k in body]
        i = end + 1
    return out


def long_lines(pairs: list[tuple[int, str]]) -> list[str]:
    return [f"line {n} ({len(line)} characters): {line.strip()[:70]}" for n, line in pairs if len(line) > WIDTH]


def _lab_code(path: Path) -> list[tuple[int, str]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for c, cell in enumerate(nb["cells"]):
        tags = set(cell["metadata"].get("tags", []))
        if cell["cell_type"] == "code" and not (tags & HIDDEN):
            out += [(c, line) for line in "".join(cell["source"]).split("\n")]
    return out


def _param(path: Path, elsewhere: dict[str, str]):
    if path.name in elsewhere:
        return pytest.param(path, marks=pytest.mark.xfail(
            reason=f"{path.name}: {elsewhere[path.name]} is editing it; switch on after merging", strict=False))
    return path


PAGES = [_param(p, PAGES_ELSEWHERE)
         for p in sorted([*ROOT.glob("chapters/*.md"), ROOT / "intro.md"])]
LABS = [_param(p, LABS_ELSEWHERE) for p in sorted(ROOT.glob("labs/*.ipynb"))]


def test_the_reader_finds_what_a_page_shows():
    page = """---
jupytext: {}
---
# A page

```{code-cell} ipython3
:tags: [hide-input]

hidden = "%s"
```

```{code-cell} ipython3
---
tags: [remove-input]
---
removed = "%s"
```

```{exercise} A prose directive
:label: ex-x

Prose inside, with `code`.
```

````{solution-start} ex-x
:class: dropdown
````

```{code-cell} ipython3
shown = "%s"
```

```python
block = "%s"
```
""" % (("x" * 90,) * 4)
    shown = [line for _, line in displayed_code(page)]
    assert [line.split(" =")[0] for line in shown] == ["shown", "block"]
    assert len(long_lines(displayed_code(page))) == 2


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_displayed_code_fits_the_column(page):
    bad = long_lines(displayed_code(page.read_text(encoding="utf-8")))
    assert not bad, f"{page.name}: {len(bad)} displayed code lines over {WIDTH} characters:\n" + "\n".join(bad)


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.name)
def test_lab_code_fits_the_column(lab):
    bad = [f"cell {c}: {line.strip()[:70]} ({len(line)})" for c, line in _lab_code(lab) if len(line) > WIDTH]
    assert not bad, f"{lab.name}: {len(bad)} code lines over {WIDTH} characters:\n" + "\n".join(bad)
