"""The Chinese edition's message catalogues: extract, update, report.

The English pages are the source; ``locale/zh_CN/LC_MESSAGES/<page>.po``
holds each page's translation (one catalogue per page: ``gettext_compact:
false`` in ``_config.yml``). Usage::

    python tools/i18n.py extract [ROOT]           # make gettext
    python tools/i18n.py status [ROOT] [--strict] # make translation-status

``extract`` writes the book's Sphinx configuration (``jupyter-book config
sphinx``: ``conf.py``, generated, not committed), extracts every message with
``sphinx-build -b gettext`` (notebooks are not executed: code and outputs are
not messages), drops the pages that stay English (``npukit_english_only``),
and updates the catalogues with ``sphinx-intl update``: a new message is
added untranslated, a changed one keeps its old translation marked *fuzzy*,
a removed one becomes obsolete (``#~``). A message with nothing to translate
(numbers, symbols, inline code, math, glue roles only) gets itself as its
translation, so a translator sees only real text. The templates of the
sentences a page's code glues (``npukit.i18n.message("{n:,d} images", n=n)``)
are added to the page's catalogue too, every branch's, marked with a comment
that says to keep each ``{field}``.

``status`` counts, per catalogue, translated, untranslated, fuzzy and
obsolete messages (polib). The pages named in ``npukit_translation_required``
must be complete; ``--strict`` requires every catalogue to be. The same
check is ``tests/test_translation.py``. See CONTRIBUTING.md, "The Chinese
edition".
"""

from __future__ import annotations

import fnmatch
import functools
import re
import runpy
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

LANGUAGE = "zh_CN"
ROOT = Path(__file__).resolve().parent.parent
#: Warnings of a gettext build that say nothing about the text: notebooks are not
#: executed there, so glue keys and figure outputs are missing by design.
QUIET = "mystnb.glue,mystnb.glue_ref,mystnb.mime_priority,myst.domains"


# ---- the book's settings --------------------------------------------------------

def settings(root: Path = ROOT) -> dict:
    """The Sphinx configuration of the book at ``root``: ``_config.yml``'s ``sphinx.config``, or ``conf.py``."""
    root = Path(root)
    if (root / "_config.yml").exists():
        import yaml

        config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
        return dict((config.get("sphinx") or {}).get("config") or {})
    return {k: v for k, v in runpy.run_path(str(root / "conf.py")).items() if not k.startswith("_")}


def _required(config: dict) -> list[str]:
    return list(config.get("npukit_translation_required", []))


def _english_only(config: dict) -> list[str]:
    return list(config.get("npukit_english_only", ["labs/*"]))


def locale_dir(root: Path = ROOT) -> Path:
    dirs = settings(root).get("locale_dirs", ["locales"])
    return Path(root) / dirs[0] / LANGUAGE / "LC_MESSAGES"


def _matches(page: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(page, p) for p in patterns)


# ---- messages with nothing to translate --------------------------------------------

_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)      # `code`, ``code``
_ROLE = re.compile(r"\{[\w:.-]+\}")                      # {glue:text} before its `content`
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+\$", re.S)
_TITLED = re.compile(r"\{(?:ref|doc|term|numref|download)\}`([^`<]*?)\s*<[^`>]*>`")  # its text is English


def nothing_to_translate(msgid: str) -> bool:
    """True when ``msgid`` has no letters outside code, math and roles: it reads the same in Chinese.

    >>> nothing_to_translate("`npukit.layouts`, `npukit.simd`"), nothing_to_translate("—")
    (True, True)
    >>> nothing_to_translate("{glue:text}`06_quant.md::ch6_sqnr:.1f` dB")
    False
    >>> nothing_to_translate("{ref}`Count a block by hand <ex-ch0-block2>`"), nothing_to_translate("{ref}`ex-ch0-block2`")
    (False, True)
    """
    text = _MATH.sub("", _CODE.sub("", _ROLE.sub("", _TITLED.sub(r" \1 ", msgid))))
    return not re.search(r"[A-Za-z]", text)


# ---- extract and update --------------------------------------------------------------

def _conf(root: Path) -> None:
    """Write ``conf.py`` from ``_config.yml`` (the Sphinx configuration jupyter-book would use)."""
    if (root / "_config.yml").exists():
        jb = Path(sys.executable).with_name("jupyter-book")
        subprocess.run([str(jb), "config", "sphinx", str(root)], check=True, stdout=subprocess.DEVNULL)


# ---- glued sentences: templates in the pages' code ----------------------------------

#: The comment that marks a catalogue entry as a template glued by a page's code.
#: The catalogues' header: the project and its translators (sphinx-intl writes placeholders).
PROJECT, TEAM = "Tensors on Silicon", "The Tensors on Silicon authors"
CODE_COMMENT = "glued by this page's code (npukit.i18n.message): keep every {field}"


def _is_message_call(func) -> bool:
    import ast

    if isinstance(func, ast.Name):
        return func.id == "message"
    if isinstance(func, ast.Attribute) and func.attr == "message":
        value = func.value
        return isinstance(value, ast.Name) and value.id == "i18n" or \
            isinstance(value, ast.Attribute) and value.attr == "i18n"
    return False


def code_messages(path: Path) -> tuple[list[str], list[str]]:
    """The templates of every ``message(...)`` call in a MyST notebook's code cells, and the calls
    whose template is not a literal string (``make gettext`` cannot see those: an error)."""
    import ast

    text = Path(path).read_text(encoding="utf-8")
    if not (text.startswith("---") and "jupytext:" in text.split("---", 2)[1]):
        return [], []  # not a notebook: no code runs
    import jupytext

    found, errors = [], []
    for index, cell in enumerate(jupytext.reads(text, fmt="md:myst").cells):
        if cell.cell_type != "code":
            continue
        source = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                            for line in cell.source.splitlines())
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _is_message_call(node.func):
                arg = node.args[0] if node.args else None
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append(arg.value)
                else:
                    errors.append(f"{path.name}, code cell {index + 1}, line {node.lineno}: message() needs its "
                                  "template as a literal string (one call per branch), or make gettext cannot "
                                  "find it")
    return found, errors


def _add_code_messages(root: Path, pot: Path) -> list[str]:
    """Add each page's glued templates to its ``.pot``; return the errors."""
    import polib

    errors = []
    for p in sorted(pot.rglob("*.pot")):
        page = root / p.relative_to(pot).with_suffix(".md")
        if not page.exists():
            continue
        templates, bad = code_messages(page)
        errors += bad
        if not templates:
            continue
        catalogue = polib.pofile(str(p))
        for template in dict.fromkeys(templates):
            if catalogue.find(template) is None:
                catalogue.append(polib.POEntry(msgid=template, msgstr="", comment=CODE_COMMENT))
        catalogue.save()
    return errors


def _fields(template: str) -> list[str]:
    import string

    try:
        return sorted(f"{name}:{spec}" for _, name, spec, _ in string.Formatter().parse(template) if name is not None)
    except ValueError:
        return ["(not a str.format template)"]


def extract(root: Path = ROOT, out: Path | None = None) -> dict:
    """Extract the messages of the book at ``root`` and update its catalogues; return sphinx-intl's counts."""
    from sphinx_intl import basic

    root = Path(root).resolve()
    out = Path(out) if out else root / "_build" / "gettext"
    _conf(root)
    shutil.rmtree(out, ignore_errors=True)
    pot = out / "pot"  # below out/, so myst-nb's jupyter_execute/ is out/'s, not the HTML build's
    cmd = [sys.executable, "-m", "sphinx", "-b", "gettext", "-q", "-D", "nb_execution_mode=off",
           "-D", f"suppress_warnings={QUIET}", "-d", str(out / "doctrees"), str(root), str(pot)]
    subprocess.run(cmd, check=True, cwd=root)
    config = settings(root)
    for p in sorted(pot.rglob("*.pot")):
        if _matches(p.relative_to(pot).with_suffix("").as_posix(), _english_only(config)):
            p.unlink()
    errors = _add_code_messages(root, pot)
    if errors:
        raise SystemExit("make gettext: " + "\n  ".join(["glued templates it cannot extract:", *errors]))
    target = locale_dir(root)
    counts = basic.update(str(target.parent.parent), str(pot), (LANGUAGE,), line_width=76)
    filled = fill_nothing_to_translate(target)
    if filled:
        print(f"{filled} messages with nothing to translate (numbers, symbols, code only) filled in, "
              "or untranslated obsolete ones dropped")
    return counts


def fill_nothing_to_translate(directory: Path) -> int:
    """Give every untranslated message with nothing to translate itself as translation; return how many.

    Also drops obsolete entries that were never translated (they carry nothing a
    translator could reuse); obsolete translations stay, as ``#~`` entries. And it
    drops the ``python-format`` flag Babel gives a message with "%" in it: these are
    prose, and ``msgfmt -c`` would refuse a translation whose "95.0%。" reads as a
    bad format.
    """
    import polib

    n = 0
    for path in sorted(Path(directory).rglob("*.po")):
        po = polib.pofile(str(path), wrapwidth=76)
        changed = 0
        for entry in po.untranslated_entries():
            if nothing_to_translate(entry.msgid):
                entry.msgstr = entry.msgid
                changed += 1
        for entry in po.translated_entries():  # filled in by an older rule, but it has English to translate
            if entry.msgstr == entry.msgid and not nothing_to_translate(entry.msgid) and _TITLED.search(entry.msgid):
                entry.msgstr = ""
                changed += 1
        for entry in [e for e in po if e.obsolete and not e.msgstr]:
            po.remove(entry)
            changed += 1
        if po.metadata_is_fuzzy or po.metadata.get("Project-Id-Version") == "Project name not set":
            # sphinx-intl's header template: name the project and drop its fuzzy mark (a fuzzy header
            # makes msgfmt and editors treat the whole catalogue as unreviewed)
            po.metadata.update({"Project-Id-Version": PROJECT, "Last-Translator": TEAM, "Language-Team": TEAM})
            po.metadata_is_fuzzy = []
            changed += 1
        if po.header.startswith("SOME DESCRIPTIVE TITLE"):
            po.header = ("Tensors on Silicon, the Chinese edition: the messages of one page.\n"
                         "See CONTRIBUTING.md, \"The Chinese edition\".")
            changed += 1
        for entry in po:  # prose with "95% of" is not a printf format: msgfmt -c would hold the translation to it
            if "python-format" in entry.flags:
                entry.flags.remove("python-format")
                changed += 1
        if changed:
            po.save()
            n += changed
    return n


# ---- markup a translation must keep ------------------------------------------------

_ROLE = re.compile(r"\{([a-z][a-z:-]*)\}`([^`]*)`")
_CODE = re.compile(r"(?<![}`])``?([^`]+?)``?(?!`)")
_MATH = re.compile(r"(?<![\\$])\$([^$]+)\$")
_LINK = re.compile(r"\]\(([^)]+)\)")


def _markup(text: str) -> dict[str, list[str]]:
    """What a translation keeps of a message: glue roles whole, other roles' targets, code, math, link targets.

    A ``{term}`` role may name the Chinese term, and a role's title (``{doc}`title <target>```) is
    translated, so only the target counts.

    >>> _markup("{glue:text}`06_quant.md::x:.1f` dB in {doc}`the chapter <03_graphs>`, `np.int8`, $2^8$")
    {'roles': ['doc 03_graphs', 'glue:text 06_quant.md::x:.1f'], 'code': ['np.int8'], 'math': ['2^8'], 'links': []}
    """
    roles = []
    for m in _ROLE.finditer(text):
        role, body = m.groups()
        if role == "term":
            continue
        target = re.search(r"<([^>]+)>\s*$", body)
        roles.append(f"{role} {body if role.startswith('glue') or not target else target.group(1)}")
    rest = _ROLE.sub(" ", text)
    return {"roles": sorted(roles), "code": sorted(_CODE.findall(rest)), "math": sorted(_MATH.findall(rest)),
            "links": sorted(_LINK.findall(rest))}


def _literal_numbers(template: str):
    """The numbers a glued template writes itself, outside its ``{fields}``, as the edition check reads them.

    >>> sorted(_literal_numbers("the {n} stride-2 layers, 4× the {x:.1f}").elements())
    ['2', '4']
    """
    return _edition_check().numbers([re.sub(r"\{[^{}]*\}", " ", template)])


@functools.cache
def _edition_check():
    """tests/edition_check.py, whose reading of numbers the catalogue check must share."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_edition_check", ROOT / "tests" / "edition_check.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    return check


def markup_problems(msgid: str, msgstr: str) -> list[str]:
    """How a translation changed the markup of its message ([] when it kept all of it).

    >>> markup_problems("see {glue:text}`p.md::k:.1f` and `x`", "见 {glue:text}`p.md::k:.2f` 与 `x`")
    ["roles: lost ['glue:text p.md::k:.1f'], added ['glue:text p.md::k:.2f']"]
    >>> markup_problems("**bold** text", "**粗体**文字")
    []
    """
    a, b = _markup(msgid), _markup(msgstr)
    found = []
    for kind in a:
        lost = [x for x in a[kind] if a[kind].count(x) > b[kind].count(x)]
        added = [x for x in b[kind] if b[kind].count(x) > a[kind].count(x)]
        if lost or added:
            found.append(f"{kind}: lost {sorted(set(lost))}, added {sorted(set(added))}")
    if _emphasis(msgid) != _emphasis(msgstr):
        found.append(f"emphasis: the English parses as {_emphasis(msgid)}, the translation as {_emphasis(msgstr)} "
                     "(next to a role, code or a Chinese character, a ** or * needs a space or full-width "
                     "punctuation outside it, or Markdown prints it as an asterisk)")
    if re.match(r"\d+\. ", msgid) and not re.match(r"\d+\\\.", msgstr):
        found.append("a leading number and full stop must stay escaped ('7\\.'): Sphinx reads '7.' as a list and "
                     "drops the translation")
    return found


def _emphasis(text: str) -> list[str]:
    """The bold and italic spans CommonMark finds in ``text`` (as MyST reads a message), in order.

    >>> _emphasis("**粗体**文字"), _emphasis("按**{term}`交错轮次`**运行")
    (['strong'], [])
    """
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parseInline(text)[0].children or []
    return [t.type[:-len("_open")] for t in tokens if t.type in ("strong_open", "em_open")]


# ---- status -----------------------------------------------------------------------

@dataclass
class Catalogue:
    page: str          # docname: "intro", "chapters/01_tensors"
    total: int
    translated: int
    untranslated: list[str]
    fuzzy: list[str]
    obsolete: int
    required: bool

    @property
    def complete(self) -> bool:
        return not self.untranslated and not self.fuzzy


def status(root: Path = ROOT) -> list[Catalogue]:
    """Every catalogue's counts (polib), with whether its page must be complete."""
    import polib

    config = settings(root)
    directory = locale_dir(root)
    out = []
    for path in sorted(directory.rglob("*.po")):
        page = path.relative_to(directory).with_suffix("").as_posix()
        po = polib.pofile(str(path))
        live = [e for e in po if not e.obsolete]
        out.append(Catalogue(page=page, total=len(live), translated=len(po.translated_entries()),
                             untranslated=[e.msgid for e in po.untranslated_entries()],
                             fuzzy=[e.msgid for e in po.fuzzy_entries()],
                             obsolete=len(po.obsolete_entries()),
                             required=_matches(page, _required(config))))
    return out


def pages(root: Path = ROOT) -> set[str]:
    """The book's pages (docnames) that have a catalogue: every page of the table of contents but the English-only ones."""
    root = Path(root)
    config = settings(root)
    if (root / "_toc.yml").exists():
        import yaml

        toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
        names = [toc["root"]]

        def walk(node):
            if isinstance(node, dict):
                if "file" in node:
                    names.append(str(node["file"]))
                for v in node.values():
                    walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)

        walk(toc.get("parts", toc.get("chapters", [])))
    else:
        names = [p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.md")
                 if "_build" not in p.parts and "locale" not in p.parts]
    return {n.removesuffix(".md").removesuffix(".ipynb") for n in names if not _matches(n, _english_only(config))}


def problems(root: Path = ROOT, strict: bool = False) -> list[str]:
    """What stops the edition from being complete where it must be: [] when all is well."""
    import polib

    found = []
    cats = status(root)
    for c in cats:
        if c.required or strict:
            found += [f"{c.page}: untranslated: {m[:100]!r}" for m in c.untranslated]
            found += [f"{c.page}: fuzzy (the English changed; check the translation, then drop the "
                      f"fuzzy flag): {m[:100]!r}" for m in c.fuzzy]
        for e in polib.pofile(str(locale_dir(root) / f"{c.page}.po")).translated_entries():
            found += [f"{c.page}:{e.linenum}: the translation changed the markup ({p}): {e.msgid[:80]!r}"
                      for p in markup_problems(e.msgid, e.msgstr)]
            if CODE_COMMENT in (e.comment or "") and _fields(e.msgstr) != _fields(e.msgid):
                found.append(f"{c.page}: the translation of the glued template {e.msgid[:60]!r} must keep its "
                             f"fields {_fields(e.msgid)}, has {_fields(e.msgstr)}")
            elif CODE_COMMENT in (e.comment or "") and _literal_numbers(e.msgstr) != _literal_numbers(e.msgid):
                english, chinese = _literal_numbers(e.msgid), _literal_numbers(e.msgstr)
                found.append(f"{c.page}:{e.linenum}: the translation of the glued template {e.msgid[:60]!r} must "
                             f"write the numbers its English writes (the edition check compares them; write a "
                             f"number the English spells out in words, 一, 两, 四, in words too): English only "
                             f"{sorted((english - chinese).elements())}, translation only "
                             f"{sorted((chinese - english).elements())}")
    have = {c.page for c in cats}
    expected = pages(root)
    found += [f"{p}: a catalogue for a page that is not in the book (renamed? git mv the .po)"
              for p in sorted(have - expected)]
    required = _required(settings(root))
    found += [f"{p}: must be translated (npukit_translation_required) but has no catalogue: run make gettext"
              for p in sorted(expected - have) if _matches(p, required) or strict]
    return found


def report(cats: list[Catalogue]) -> str:
    lines = [f"{'page':28} {'messages':>8} {'translated':>10} {'untransl.':>9} {'fuzzy':>5} {'obsolete':>8}"]
    for c in cats:
        mark = " (required)" if c.required else ""
        lines.append(f"{c.page:28} {c.total:8d} {c.translated:10d} {len(c.untranslated):9d} {len(c.fuzzy):5d} "
                     f"{c.obsolete:8d}{mark}")
    total = sum(c.total for c in cats)
    done = sum(c.translated for c in cats)
    lines.append(f"{'all':28} {total:8d} {done:10d}   ({100 * done / max(total, 1):.1f}% translated; "
                 f"{sum(c.complete for c in cats)} of {len(cats)} pages complete)")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = [a for a in argv[1:] if not a.startswith("--")]
    if not args or args[0] not in ("extract", "status"):
        print(__doc__)
        return 2
    root = Path(args[1]) if len(args) > 1 else ROOT
    if args[0] == "extract":
        extract(root)
    print(report(status(root)))
    found = problems(root, strict="--strict" in argv)
    for p in found:
        print("  -", p)
    return 1 if found and args[0] == "status" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
