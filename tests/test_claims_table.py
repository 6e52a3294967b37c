"""The claims appendix: every row's verdict is glued or its evidence cited.

``chapters/claims.md`` tabulates the source articles' claims. A verdict is
either computed when the book is built (a ``{glue:text}`` role in the
verdict cell) or rests on evidence a reader can follow: a citation
(``{cite:p}``/``{cite:t}``), a section of the appendix that checks it
(``[§N](claim-…)``, whose label must exist and head section N), or a
chapter that measures it (``{doc}`NN_name```, whose page must exist). Every
glue role in the table must name a key its page glues. Reads text only; well
under a second.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "chapters" / "claims.md"

_ROW = re.compile(r"^\|\s*(\d+)\s*\|")
_GLUE = re.compile(r"\{glue:text\}`(?P<page>[\w.]+\.md)::(?P<key>\w+)(?::[^`]*)?`")
_SECTION = re.compile(r"\[§(?P<n>\d+)\]\((?P<label>claim-[\w-]+)\)")
_DOC = re.compile(r"\{doc\}`(?P<doc>[\w]+)`")
_CITE = re.compile(r"\{cite:[pt]\}`[\w,]+`")


def split_cells(line: str) -> list[str]:
    """The cells of a Markdown table row, ignoring ``|`` inside backticks."""
    cells, cur, code = [], [], False
    for ch in line.strip().strip("|"):
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            cells.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    cells.append("".join(cur).strip())
    return cells


def table_rows(text: str) -> list[list[str]]:
    return [split_cells(line) for line in text.split("\n") if _ROW.match(line)]


def section_labels(text: str) -> dict[str, int]:
    """``{label: section number}`` for every ``(claim-x)=`` followed by ``## N.``."""
    out = {}
    for m in re.finditer(r"^\((claim-[\w-]+)\)=\n## (\d+)\.", text, re.M):
        out[m.group(1)] = int(m.group(2))
    return out


def glued_keys(page: str) -> set[str]:
    """The keys a page glues: ``glue("key", ...)``, and through a one-line helper such as chapter 9's
    ``def g(key, value): glue(f"ch9_{key}", ...)``, ``g("key", ...)``."""
    path = ROOT / "chapters" / page
    if not path.exists():
        return set()
    text = path.read_text(encoding="utf-8")
    keys = set(re.findall(r'glue\(\s*"(\w+)"', text))
    for name, arg, prefix in re.findall(r'def (\w+)\((\w+)[^)]*\):\s*\n\s+glue\(f"(\w*)\{(?:\2)\}"', text):
        keys |= {prefix + k for k in re.findall(rf'(?<![\w.]){name}\(\s*"(\w+)"', text)}
        # a key made in a loop, g(f"mb_{rt}_in", ...): kept as a pattern, matched by _Keys
        keys |= {re.compile(prefix + re.sub(r"\\\{\w+\\\}", r"\\w+", re.escape(k)))
                 for k in re.findall(rf'(?<![\w.]){name}\(\s*f"([\w{{}}]+)"', text)}
    return _Keys(keys)


class _Keys(set):
    """Glued keys, some of them patterns: ``"k" in keys`` is true for a key or a key a pattern matches."""

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or any(isinstance(k, re.Pattern) and k.fullmatch(str(key)) for k in self)


def backed(verdict: str, evidence: str, labels: dict[str, int]) -> str | None:
    """Why a row's verdict stands, or ``None`` if nothing backs it."""
    if _GLUE.search(verdict):
        return "glued"
    if _CITE.search(verdict + evidence):
        return "cited"
    if any(m.group("label") in labels for m in _SECTION.finditer(evidence)):
        return "checked on this page"
    if any((ROOT / "chapters" / f"{m.group('doc')}.md").exists() for m in _DOC.finditer(evidence)):
        return "measured in a chapter"
    return None


TEXT = PAGE.read_text(encoding="utf-8")
ROWS = table_rows(TEXT)
LABELS = section_labels(TEXT)


def test_rows_are_numbered_in_order_with_five_cells():
    assert [int(r[0]) for r in ROWS] == list(range(1, len(ROWS) + 1))
    assert all(len(r) == 5 for r in ROWS), [r[0] for r in ROWS if len(r) != 5]
    assert all(r[2] in {"A", "B"} for r in ROWS), [r[0] for r in ROWS if r[2] not in {"A", "B"}]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_every_verdict_is_glued_or_cited(row):
    number, claim, _, verdict, evidence = row
    assert verdict.startswith("**"), f"row {number}: the verdict is not bold: {verdict!r}"
    assert backed(verdict, evidence, LABELS), (
        f"row {number} ({claim[:60]}…): its verdict {verdict!r} is typed and its evidence "
        f"{evidence!r} cites nothing, links no section of this page and no chapter")


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_links_and_glue_keys_resolve(row):
    number, _, _, verdict, evidence = row
    for m in _SECTION.finditer(evidence):
        assert LABELS.get(m.group("label")) == int(m.group("n")), (
            f"row {number}: [§{m.group('n')}]({m.group('label')}) does not head section {m.group('n')}")
    for m in _GLUE.finditer(verdict + evidence):
        assert m.group("key") in glued_keys(m.group("page")), (
            f"row {number}: {m.group('page')} glues no {m.group('key')!r}")


def test_the_rule_can_fail():
    """A typed verdict with prose evidence is refused; each kind of backing is accepted."""
    assert backed("**true**", "the article says so", LABELS) is None
    assert backed("**true**", "see [§99](claim-nowhere)", LABELS) is None
    assert backed("**true**", "{doc}`99_missing`", LABELS) is None
    assert backed("**{glue:text}`claims.md::claims_tops:.1f`**", "", LABELS) == "glued"
    assert backed("**true**", "{cite:p}`horowitz2014energy`", LABELS) == "cited"
    assert backed("**true**", "[§1](claim-strides)", LABELS) == "checked on this page"
    assert backed("**true**", "{doc}`07_deploy`", LABELS) == "measured in a chapter"
    assert split_cells("| 1 | a `x | y` b | B | **t** | e |") == ["1", "a `x | y` b", "B", "**t**", "e"]
