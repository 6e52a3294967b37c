"""Rewrite every glue role in the book's pages to the page-qualified form.

A ``{glue:text}`` role inside a translated message loses its value: Sphinx
parses the translation again, without the notebook's glue data, and the strict
build warns "No key … found in glue data". Written with the page it comes from,
`` {glue:text}`06_quant.md::ch6_sqnr:.1f` ``, the role becomes a reference that
myst-nb resolves after every page is read, so it renders the same number in
both editions (the English build too). This script rewrites

* `` {glue:text}`key:fmt` `` to `` {glue:text}`PAGE::key:fmt` ``, and
  `` {glue:text}`key` `` to `` {glue:text}`PAGE::key:s` `` (myst-nb splits a
  qualified key's format at its last colon, so the format is always written;
  ``s`` is the default an unqualified role uses);
* `` {glue}`key` ``, `` {glue:}`key` ``, `` {glue:any}`key` `` to the same role with
  `` PAGE::key ``,

where PAGE is the page's own file name (a page-qualified key is relative to
the page's folder). Roles that already name a page are left alone, so running
it twice changes nothing. ``{glue:md}`` has no page-qualified form in myst-nb
1.4: the script refuses it (glue the value as text instead). The ``glue``
*directives* (``{glue:figure}``, ``{glue:math}``, ``{glue:md}`` blocks) need no
rewrite: a directive is not part of a message, only its caption is.

Roles inside code (fenced code blocks, code cells, inline code spans) are
examples, not roles, and are left as written.

Usage::

    python tools/qualify_glue.py             # rewrite intro.md and chapters/*.md
    python tools/qualify_glue.py --check     # list unqualified roles; exit 1 if any
    python tools/qualify_glue.py FILE...     # only these files

``tests/test_translation.py`` fails on an unqualified role.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: ``{glue}``, ``{glue:}``, ``{glue:any}``, ``{glue:text}``, ``{glue:md}`` followed by their content.
ROLE = re.compile(r"\{glue(?P<kind>:(?:any|text|md)?)?\}`(?P<content>[^`]+)`")
#: A fence opening or closing: backticks, tildes, or (MyST's colon fence) colons.
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
#: Fenced blocks whose body is MyST markdown (directives); any other fence is code.
LITERAL_DIRECTIVES = {"code-cell", "code-block", "code", "sourcecode", "literalinclude", "math", "raw",
                      "mermaid", "csv-table", "glue:math"}


def pages(root: Path = ROOT) -> list[Path]:
    """The book's MyST pages: ``intro.md`` and ``chapters/*.md``."""
    return sorted([root / "intro.md", *(root / "chapters").glob("*.md")])


@dataclass
class Role:
    line: int      # 1-based
    text: str      # the role as written
    qualified: bool


class GlueError(ValueError):
    """A role that has no page-qualified form."""


def _markdown_lines(lines: list[str]) -> list[bool]:
    """For each line: is it markdown (True) or inside front matter or a code fence (False)?"""
    out: list[bool] = []
    stack: list[tuple[str, int, bool]] = []  # (fence char, length, literal)
    start = 0
    if lines and lines[0].strip() == "---":  # front matter
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            out = [False] * (end + 1)
            start = end + 1
    for line in lines[start:]:
        m = FENCE.match(line)
        literal_open = bool(stack) and stack[-1][2]
        if m:
            fence, info = m.group("fence"), m.group("info").strip()
            if stack and fence[0] == stack[-1][0] and len(fence) >= stack[-1][1] and not info:
                stack.pop()
                out.append(False)
                continue
            if not literal_open:
                name = re.match(r"\{([^}]*)\}", info)
                literal = fence[0] != ":" and (name is None or name.group(1) in LITERAL_DIRECTIVES)
                stack.append((fence[0], len(fence), literal))
                out.append(False)
                continue
        out.append(not (stack and stack[-1][2]))
    return out


def _code_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of inline code spans that are not a role's content."""
    spans = []
    i = 0
    while i < len(line):
        m = re.compile(r"`+").search(line, i)
        if not m:
            break
        ticks = m.group(0)
        if m.start() > 0 and line[m.start() - 1] == "}" and len(ticks) == 1:  # a role's `content`
            close = line.find("`", m.end())
            i = (close + 1) if close >= 0 else m.end()
            continue
        close = re.compile(r"(?<!`)" + re.escape(ticks) + r"(?!`)").search(line, m.end())
        if not close:
            i = m.end()
            continue
        spans.append((m.start(), close.end()))
        i = close.end()
    return spans


def _qualify(match: re.Match, page: str) -> str:
    kind, content = match.group("kind") or "", match.group("content")
    if "::" in content:
        return match.group(0)
    if kind == ":md":
        raise GlueError(f"{{glue:md}}`{content}` has no page-qualified form in myst-nb: glue the value as text")
    if kind == ":text":
        key, sep, fmt = content.rpartition(":")
        if not sep:
            key, fmt = content, "s"
        return f"{{glue:text}}`{page}::{key}:{fmt}`"
    return f"{{glue{kind}}}`{page}::{content}`"


def rewrite(text: str, page: str) -> str:
    """``text`` (a page named ``page``) with every glue role outside code page-qualified."""
    lines = text.split("\n")
    markdown = _markdown_lines(lines)
    for i, line in enumerate(lines):
        if not markdown[i] or "{glue" not in line:
            continue
        spans = _code_spans(line)
        lines[i] = ROLE.sub(lambda m: m.group(0) if any(a <= m.start() < b for a, b in spans)
                            else _qualify(m, page), line)
    return "\n".join(lines)


def roles(text: str) -> list[Role]:
    """Every glue role outside code, with whether it names a page."""
    lines = text.split("\n")
    markdown = _markdown_lines(lines)
    found = []
    for i, line in enumerate(lines):
        if not markdown[i]:
            continue
        spans = _code_spans(line)
        for m in ROLE.finditer(line):
            if not any(a <= m.start() < b for a, b in spans):
                found.append(Role(i + 1, m.group(0), "::" in m.group("content")))
    return found


def main(argv: list[str]) -> int:
    check = "--check" in argv
    files = [Path(a) for a in argv[1:] if not a.startswith("--")] or pages()
    bad = changed = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        if check:
            for r in roles(text):
                if not r.qualified:
                    print(f"{path}:{r.line}: unqualified glue role {r.text}")
                    bad += 1
            continue
        try:
            new = rewrite(text, path.name)
        except GlueError as exc:
            print(f"{path}: {exc}")
            return 1
        if new != text:
            path.write_text(new, encoding="utf-8")
            n = sum(not r.qualified for r in roles(text))
            print(f"{path}: {n} roles page-qualified")
            changed += 1
    if check:
        print(f"{bad} unqualified glue roles" + (" (run: python tools/qualify_glue.py)" if bad else ""))
        return 1 if bad else 0
    print(f"{changed} files rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
