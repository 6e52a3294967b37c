"""Every chapter is a complete unit, and the instructor guide lists every exercise.

A chapter page (``chapters/NN_*.md``) has learning objectives at the top, at
least three exercises each with a solution, a self-check and a summary
(COURSE.md §9; issue 15). Chapter 3 spans two pages (``03_graphs``,
``03b_rewrites``); each page is held to the same rule. The labs' side (≥ 3
graded exercises that fail in the student edition and pass in the
instructor's) is tests/test_student_edition.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]*_*.md"))
INSTRUCTOR = ROOT / "chapters" / "instructor.md"

_EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise\}.*\n:label: (\S+)", re.M)
_SOLUTION = re.compile(r"^(`{3,}|:{3,})\{solution(?:-start)?\} (\S+)", re.M)


def exercises(text: str) -> list[str]:
    """The labels of a page's ``{exercise}`` directives, in order."""
    return [m.group(2) for m in _EXERCISE.finditer(text)]


def solutions(text: str) -> set[str]:
    """The exercise labels a page's ``{solution}`` / ``{solution-start}`` directives answer."""
    return {m.group(2) for m in _SOLUTION.finditer(text)}


def test_the_parsers_see_what_they_should():
    page = ("```{exercise} A\n:label: ex-a\n\nQ\n```\n\n````{solution} ex-a\n:class: dropdown\nA\n````\n"
            "```{exercise} B\n:label: ex-b\n```\n```{solution-start} ex-b\n```\n```{exercise} C\n:label: ex-c\n```\n")
    assert exercises(page) == ["ex-a", "ex-b", "ex-c"]
    assert solutions(page) == {"ex-a", "ex-b"}


def test_there_are_ten_chapters():
    assert [p.name[:2] for p in CHAPTERS] == ["00", "01", "02", "03", "03", "04", "05", "06", "07", "08", "09"]


@pytest.mark.parametrize("page", CHAPTERS, ids=lambda p: p.name)
def test_chapter_is_a_complete_unit(page):
    text = page.read_text(encoding="utf-8")
    head = text[: len(text) // 5]
    assert re.search(r"\{admonition\} Learning objectives", head), f"{page.name}: learning objectives at the top"
    labels = exercises(text)
    assert len(labels) >= 3, f"{page.name}: at least three exercises, found {labels}"
    unanswered = [x for x in labels if x not in solutions(text)]
    assert not unanswered, f"{page.name}: exercises without a solution: {unanswered}"
    for section in ("Self-check", "Summary"):
        assert re.search(rf"^## {section}\s*$", text, re.M), f"{page.name}: a '## {section}' section"
    assert text.index("## Self-check") < text.index("## Summary"), f"{page.name}: the self-check before the summary"


def test_instructor_guide_lists_every_chapter_exercise():
    want = {x for page in CHAPTERS for x in exercises(page.read_text(encoding="utf-8"))}
    guide = INSTRUCTOR.read_text(encoding="utf-8")
    table = guide[guide.index("### Chapter exercises"):guide.index("### Lab exercises")]
    got = set(re.findall(r"^\| `(ex-ch[^`]+)` \|", table, re.M))
    assert not want - got, f"instructor.md's chapter exercise table misses {sorted(want - got)}"
    assert not got - want, f"instructor.md lists exercises no chapter has: {sorted(got - want)}"


def test_instructor_guide_has_objectives_for_every_unit():
    guide = INSTRUCTOR.read_text(encoding="utf-8")
    table = guide[guide.index("## Objectives and timing"):guide.index("## Exercise list")]
    units = sorted({int(m) for m in re.findall(r"^\| (\d) ", table, re.M)})
    assert units == list(range(10)), f"objectives rows for units {units}; every unit 0–9 needs one"
