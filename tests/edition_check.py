"""Compare the two built editions of the book page by page.

Usage: ``python tests/edition_check.py _build/html`` (``make book`` runs it)

The English edition is the site root, the Chinese edition its ``zh/``
folder. For every page it checks that

* the page exists in both editions;
* every glued value (myst-nb's ``<span class="pasted-text">``) is the same in
  both: the same values, as many times each (a translation may reorder a
  sentence, so order is not compared). A translator who drops a glue role,
  changes its format or types the number by hand makes this fail, and so does
  a role that lost its value in a translated message. A glued sentence
  (``npukit.i18n.message``, class ``npukit-message``) is translated, so there
  the numbers in it are compared: the same numbers, as many times each, in as
  many sentences;
* the page's language switch (``npukit/i18n.py``) links to its counterpart.

Exit status 1 on any difference. The functions are tested on small pages in
``tests/test_edition_check.py``.
"""

from __future__ import annotations

import posixpath
import re
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

PREFIX = "zh/"
#: Folders of the site that hold no pages.
NOT_PAGES = ("_static/", "_sources/", "_images/", "_downloads/", "jupyter_execute/")


class _Page(HTMLParser):
    """Glued values and the language switch's link of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.glued: list[str] = []
        self.messages: list[str] = []  # glued sentences (translated in the other edition)
        self.switch: list[str] = []
        self._depth = 0        # > 0 inside a glued span (counting nested spans)
        self._message = False
        self._text: list[str] = []
        self._in_switch = 0
        self.redirect = False  # a page that only forwards to another (the site's index.html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "span" and self._depth:
            self._depth += 1
        elif tag == "span" and any(c.startswith("pasted-") for c in classes):
            self._depth, self._text = 1, []
            self._message = "npukit-message" in classes
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "refresh":
            self.redirect = True
        if tag == "nav" and "npukit-language" in classes:
            self._in_switch = 1
        elif tag == "a" and self._in_switch and a.get("href"):
            self.switch.append(a["href"])

    def handle_endtag(self, tag):
        if tag == "span" and self._depth:
            self._depth -= 1
            if not self._depth:
                (self.messages if self._message else self.glued).append("".join(self._text).strip())
        if tag == "nav" and self._in_switch:
            self._in_switch = 0

    def handle_data(self, data):
        if self._depth:
            self._text.append(data)


def read_page(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


#: A number as a glued value shows it: 1,024 · 3.14 · −2 · 1e-05 (a sign, digits, separators, exponent).
#: "128, so": the comma is not the number's; "stride-2", "INT8", "x86": a hyphen or digits after a letter are
#: part of a word (a sign only stands after a space, a bracket or the start), and the word's digits still count.
NUMBER = re.compile(r"(?:(?<![\w.])[-−])?\d(?:\d|,(?=\d))*(?:\.\d+)?(?:[eE][-+]?\d+)?")


def numbers(texts: list[str]) -> Counter:
    """The numbers in ``texts``, as written, with how often each appears."""
    return Counter(n.replace("−", "-") for t in texts for n in NUMBER.findall(t))


def page_names(root: Path) -> list[str]:
    """The HTML pages of the English edition at ``root`` (relative paths), without the Chinese ones."""
    names = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html"))
    return [n for n in names if not n.startswith(PREFIX) and not n.startswith(NOT_PAGES)]


def compare(name: str, english: str, chinese: str) -> tuple[list[str], int]:
    """Problems found comparing one page's two editions, and how many glued values it has."""
    en, zh = read_page(english), read_page(chinese)
    problems = []
    a, b = Counter(en.glued), Counter(zh.glued)
    if a != b:
        only_en = sorted((a - b).elements())
        only_zh = sorted((b - a).elements())
        problems.append(f"glued values differ: English only {only_en[:8]}, Chinese only {only_zh[:8]}")
    if len(en.messages) != len(zh.messages):
        problems.append(f"{len(en.messages)} glued sentences in English, {len(zh.messages)} in Chinese")
    a, b = numbers(en.messages), numbers(zh.messages)
    if a != b:
        problems.append(f"numbers in glued sentences differ: English only {sorted((a - b).elements())[:8]}, "
                        f"Chinese only {sorted((b - a).elements())[:8]}")
    for edition, page, target in (("English", en, PREFIX + name), ("Chinese", zh, name)):
        here = name if edition == "English" else PREFIX + name
        if page.redirect:
            continue
        if not page.switch:
            problems.append(f"{edition} page has no language switch")
            continue
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(here), page.switch[0]))
        if resolved != target:
            problems.append(f"{edition} page's language switch points to {resolved}, not {target}")
    return problems, len(en.glued) + len(en.messages)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = Path(argv[1])
    names = page_names(root)
    if not names or not (root / PREFIX).is_dir():
        print(f"edition check: no English pages or no {PREFIX} edition under {root}; run make book")
        return 1
    zh_names = {n.removeprefix(PREFIX) for n in (p.relative_to(root).as_posix() for p in (root / PREFIX).rglob("*.html"))
                if not n.removeprefix(PREFIX).startswith(NOT_PAGES)}
    failures, values = [], 0
    for name in sorted(set(names) ^ zh_names):
        failures.append(f"{name}: only in the {'English' if name in names else 'Chinese'} edition")
    for name in names:
        if name not in zh_names:
            continue
        english = (root / name).read_text(encoding="utf-8")
        chinese = (root / PREFIX / name).read_text(encoding="utf-8")
        problems, n = compare(name, english, chinese)
        values += n
        failures += [f"{name}: {p}" for p in problems]
    for f in failures:
        print("  FAIL", f)
    print(f"edition check: {len(names)} English and {len(zh_names)} Chinese pages, {values} glued values "
          f"compared; {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
