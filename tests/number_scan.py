"""Find hand-typed measurements in the book's prose.

The course's rule (COURSE.md §6): a number in prose is computed at build time
(myst-nb ``glue``) or cited. This scanner reads a MyST page, drops what may
hold numbers legitimately — code cells and fences, inline code, math, glue
roles, ``{given}`` roles (an assumed value such as a spec-sheet clock, marked
as such for the reader), the front matter and the References section — and
reports every remaining number followed by a unit of time, rate, size or
ratio whose sentence carries no citation (``[3]``, ``{cite}``, or a link).
Units include words: "3.1 times as long", "4,096 bytes", "4.2 GFLOP per
second", "9 operations per byte", "398 cycles", "12 percent", "5
milliseconds", "64 kilobytes", "98-fold"; a unit may follow its number after
a hyphen ("a 32-KiB buffer"). A number in quotation marks is scanned
too, unless the quotation is a source quoted verbatim: its text is Chinese
(the seed articles), or its sentence names the article it quotes.

Usage: ``python tests/number_scan.py PAGE.md …`` prints the findings.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

#: Work per time, byte or cycle written out in words: "4.2 GFLOP per second", "9 operations per byte".
_PER = (r"(?:[kMGT]?FLOPs?|[kMGT]?OPs?|ops?|operations?|[kMGT]?MACs?|instructions?|elements?|images?|frames?)"
        r"\s+(?:per|a|each)\s+(?:second|s|byte|cycle|clock)")
UNITS = (r"ms|µs|μs|us|ns|s|sec|seconds?|minutes?|milliseconds?|microseconds?|nanoseconds?|"
         r"GB/s|MB/s|GiB/s|TB/s|GFLOP/s|TFLOP/s|FLOP/s|"
         r"GOPS|TOPS|TMAC/s|GMAC/s|FPS|fps|GHz|MHz|KiB|MiB|GiB|kB|KB|MB|GB|TB|%|×|"
         r"kilobytes?|megabytes?|gigabytes?|kibibytes?|mebibytes?|percent|per\s+cent|cycles?|"
         rf"FLOP/byte|FLOP/B|FLOPs?/byte|op/byte|op/B|times|bytes?|B|{_PER}")
#: Units also written after a hyphen, as an adjective: "a 32-KiB buffer", "98-fold", "a 45-TOPS chip".
#: ("a 64-byte line", "16-byte aligned" name a size class, not a measurement, and are left alone.)
HYPHEN_UNITS = (r"ms|µs|μs|ns|GB/s|MB/s|GHz|MHz|GOPS|TOPS|KiB|MiB|GiB|kB|KB|MB|GB|TB|"
                r"kilobytes?|megabytes?|cycles?|fold")
NUMBER = r"(?<![\w.^/])\d(?:[\d,]*\d)?(?:\.\d+)?"
# "3×3", "32×32": a shape, not a ratio; "4×" and "4 ×" alone are ratios; "3.1x" (no space) too.
FINDING = re.compile(rf"{NUMBER}(?:\s?(?:{UNITS})(?![\w/]|\s?\d)|-(?:{HYPHEN_UNITS})(?![\w/])|x(?![\w/]))")
_QUOTE = re.compile(r'"[^"\n]{1,200}"|“[^”\n]{1,200}”')
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")
_NAMES_ITS_SOURCE = re.compile(r"\barticles?\b|\bseeds?\b", re.I)
CITATION = re.compile(r"\[\d+(?:[,–-]\s?\d+)*\]|\{cite(?::\w+)?\}|\]\(https?://|<https?://|\{doc\}|\{ref\}")

_DROP = [
    re.compile(r"^---\n.*?\n---\n", re.S),                       # front matter
    re.compile(r"^\$\$.*?^\$\$\s*$", re.S | re.M),               # display math
    re.compile(r"^(`{3,})\{math\}.*?^\1\s*$", re.S | re.M),
    re.compile(r"\{(?:glue|glue:text|glue:any|glue:md|given|math)\}`[^`]*`"),  # roles
    re.compile(r"``[^`]+``|`[^`\n]+`"),                           # inline code
    re.compile(r"(?<!\\)\$[^$\n]+\$"),                            # inline math
    re.compile(r"<!--.*?-->", re.S),                             # comments
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


def _quoted_source(sentence: str, at: int) -> bool:
    """Whether position ``at`` lies in a quotation of a source: Chinese text, or a sentence naming the article."""
    for q in _QUOTE.finditer(sentence):
        if q.start() <= at < q.end():
            return bool(_CJK.search(q.group(0)) or _NAMES_ITS_SOURCE.search(sentence))
    return False


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
            if _quoted_source(sentence, m.start()):
                continue
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
