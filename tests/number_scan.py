"""Find hand-typed measurements in the book's prose.

The course's rule (COURSE.md §6): a number in prose is computed at build time
(myst-nb ``glue``) or cited. This scanner reads a MyST page, drops what may
hold numbers legitimately — code cells and fences, inline code, math, glue
roles, ``{given}`` roles (an assumed value such as a spec-sheet clock, marked
as such for the reader), the front matter and the References section — and
reports every remaining number followed by a unit of time, rate, size or
ratio whose sentence carries no citation (``[3]``, ``{cite}``, or a link).
Text in quotation marks is a source quoted verbatim (a claim the book then
checks) and is skipped too.

Usage: ``python tests/number_scan.py PAGE.md …`` prints the findings.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

UNITS = (r"ms|µs|μs|us|ns|s|sec|seconds?|minutes?|GB/s|MB/s|GiB/s|TB/s|GFLOP/s|TFLOP/s|FLOP/s|"
         r"GOPS|TOPS|TMAC/s|GMAC/s|FPS|fps|GHz|MHz|KiB|MiB|GiB|kB|KB|MB|GB|TB|%|×")
NUMBER = r"(?<![\w.^/])\d[\d,]*(?:\.\d+)?"
# "3×3", "32×32": a shape, not a ratio; "4×" and "4 ×" alone are ratios.
FINDING = re.compile(rf"{NUMBER}\s?(?:{UNITS})(?![\w/]|\s?\d)")
CITATION = re.compile(r"\[\d+(?:[,–-]\s?\d+)*\]|\{cite(?::\w+)?\}|\]\(https?://|<https?://|\{doc\}|\{ref\}")

_DROP = [
    re.compile(r"^---\n.*?\n---\n", re.S),                       # front matter
    re.compile(r"^\$\$.*?^\$\$\s*$", re.S | re.M),               # display math
    re.compile(r"^(`{3,})\{math\}.*?^\1\s*$", re.S | re.M),
    re.compile(r"\{(?:glue|glue:text|glue:any|glue:md|given|math)\}`[^`]*`"),  # roles
    re.compile(r"``[^`]+``|`[^`\n]+`"),                           # inline code
    re.compile(r"(?<!\\)\$[^$\n]+\$"),                            # inline math
    re.compile(r"<!--.*?-->", re.S),                             # comments
    re.compile(r'"[^"\n]{1,200}"|“[^”\n]{1,200}”'),                # a source quoted verbatim
]
_REFERENCES = re.compile(r"^#+\s+(References|Bibliography)\b.*", re.S | re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(*_`{\[])|\n\s*\n")


_FENCE = re.compile(r"^(`{3,}|~{3,}|:{3,})\s*(\{[\w:-]+\})?([^\n]*)$")
_CODE_DIRECTIVES = {"{code-cell}", "{code-block}", "{code}", "{math}", "{raw}"}


def _drop_code(text: str) -> str:
    """Blank out code cells and code blocks, keeping directives' prose (exercises, admonitions …).

    A line-based walk over fences: a fence opens with ``` / ~~~ / :::, optionally
    followed by ``{directive}``, and closes at the next bare fence of the same
    character and at least the same length. Only code-like fences are dropped;
    the body of ``{exercise}`` or ``{admonition}`` is prose and is scanned.
    """
    out, stack = [], []  # stack of (fence, is_code)
    for line in text.split("\n"):
        m = _FENCE.match(line.strip()) if line.strip()[:3] in ("```", "~~~", ":::") else None
        in_code = any(code for _, code in stack)
        if m and stack and not m.group(2) and not m.group(3).strip() and m.group(1)[0] == stack[-1][0][0] \
                and len(m.group(1)) >= len(stack[-1][0]):
            stack.pop()
            out.append("")
            continue
        if m and not in_code:
            directive = m.group(2)
            is_code = directive in _CODE_DIRECTIVES if directive else m.group(1)[0] != ":"
            stack.append((m.group(1), is_code))
            out.append("")
            continue
        out.append("" if in_code or (line.lstrip().startswith(":") and stack and line.lstrip()[1:2].isalpha()) else line)
    return "\n".join(out)


def prose(text: str) -> str:
    """The page's prose: what remains once code, math, glue and references are dropped."""
    text = _REFERENCES.sub("", text)
    text = _drop_code(text)
    for pattern in _DROP:
        text = pattern.sub(lambda m: " " * 0 + ("\n" * m.group(0).count("\n")), text)
    return text


def findings(text: str) -> list[tuple[int, str, str]]:
    """``(line, number with unit, sentence)`` for each uncited measurement-like number."""
    body = prose(text)
    out = []
    pos = 0
    for sentence in _SENTENCE_END.split(body):
        start = body.find(sentence, pos)
        pos = max(pos, start)
        if CITATION.search(sentence):
            continue
        for m in FINDING.finditer(sentence):
            line = body.count("\n", 0, start + m.start()) + 1
            out.append((line, m.group(0), " ".join(sentence.split())[:160]))
    return out


def main(argv: list[str]) -> int:
    bad = 0
    for path in argv[1:]:
        for line, hit, sentence in findings(Path(path).read_text(encoding="utf-8")):
            print(f"{path}:{line}: {hit!r} in: {sentence}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
