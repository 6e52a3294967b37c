"""Book build glue for the translated edition: one source, two editions.

The English pages are the source. The Chinese edition (中文版) is the same
Sphinx project built with ``language = zh_CN``: Sphinx replaces every
translatable message (a title, a paragraph, a list item, a table cell, a
caption, an exercise's text) by its translation from
``locale/zh_CN/LC_MESSAGES/<page>.po``. Code cells and their outputs are not
messages; they come from the execution cache that the English build filled.
See ``CONTRIBUTING.md``, "The Chinese edition", and ``COURSE.md`` §11.

This Sphinx extension (listed in ``_config.yml``) adds what that needs:

* **a language switch**: every page links to its counterpart in the other
  edition (English at the site root, Chinese under ``zh/``), in the sidebar
  and as ``<link rel="alternate" hreflang=…>``;
* **a translation check** in a translated build: every message of a page is
  looked up in the page's catalogue exactly as Sphinx's ``Locale`` transform
  looks it up. A message with no translation (new or changed English, or a
  fuzzy entry, which Sphinx leaves out of the compiled catalogue) is a warning
  on the pages listed in ``npukit_translation_required`` (so ``-W`` fails the
  build) and is counted on the others, whose Chinese pages say how much is
  still in English;
* **no second execution**: a translated build that had to execute a notebook
  (its code was not in the cache) warns, so ``make book`` always builds the
  English edition first and the Chinese one from its cache;
* **glossary terms kept**: a term is not a message (the glossary already
  pairs each English term with its Chinese one, and ``{term}`` references on
  every page name them);
* **exercise titles as messages** (sphinx-exercise does not mark them
  translatable), the toggle buttons' strings from sphinx-togglebutton's own
  Chinese catalogue (it ships it as ``zh-cn``, a name gettext does not match
  with ``zh_CN``) and myst-nb's "Show code cell source" prompts (myst-nb has
  no catalogue);
* **glued sentences translated**: a page's code glues a sentence it chose
  from a measurement as :func:`message` (a template and its values); the
  gettext step extracts every template from the page's code, whichever branch
  a build takes, and the translated build formats the page's translation of
  the template with the same values;
* a note on the pages that stay English (``npukit_english_only``: the labs);
* a Chinese search index built in linear time (Sphinx 7's is quadratic in the
  book's Latin words); Chinese words are segmented by ``jieba`` (a book extra).
"""

from __future__ import annotations

import fnmatch
import gettext
import html
import os
import time
from pathlib import Path
from typing import Any

__all__ = ["Message", "message", "setup"]

#: The mime type a :class:`Message` adds to its glue data: its template and values.
MESSAGE_MIME = "application/vnd.npukit.message+json"


class Message(str):
    """A sentence for a glue role: its English text, and the template and values that made it.

    It is a ``str`` (the formatted English), so code that uses it as text
    works unchanged. Glued (``myst_nb.glue``), it also stores its template and
    values, from which the Chinese edition formats the page's translation of
    the template. Make one with :func:`message`. See CONTRIBUTING.md, "The
    Chinese edition".
    """

    template: str
    args: dict

    def __new__(cls, template: str, args: dict) -> "Message":
        obj = super().__new__(cls, template.format(**args))
        obj.template, obj.args = template, dict(args)
        return obj

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return {"text/plain": repr(str(self)), MESSAGE_MIME: _spec(self)}


def _spec(m: "Message") -> dict:
    """``m``'s template and values; a value that is itself a :class:`Message` is stored as its own spec,
    so the Chinese edition translates it too (a clause chosen inside a sentence)."""
    return {"template": m.template,
            "args": {k: _spec(v) if isinstance(v, Message) else v for k, v in m.args.items()}}


def _fields(template: str) -> list[tuple[str, str]]:
    """The ``(name, format spec)`` of each replacement field of ``template``, in order."""
    import string

    return [(name, spec or "") for _, name, spec, _ in string.Formatter().parse(template) if name is not None]


def message(template: str, /, **args: Any) -> Message:
    """A glued sentence the Chinese edition can translate: ``template`` formatted with ``args``.

    ``template`` is a literal string with named fields (``str.format``
    syntax); each value is a number, a string, a bool or a message (which
    the translated edition translates with its own template). Write the literal in
    the call, so that ``make gettext`` finds it in the page's code (for a
    sentence chosen by a condition, write one call per branch: every template
    is extracted, whichever a build takes).

    Parameters
    ----------
    template : str
        The English sentence with named fields, e.g. ``"{ratio:.1f}× faster"``.
    **args
        The value of every field, and no other.

    Returns
    -------
    Message
        A ``str``: the formatted English.

    Raises
    ------
    TypeError
        If ``template`` is not a string, or a value is not a number, string or bool.
    ValueError
        If a field has no name, or ``args`` and the fields do not match, or a value does not fit its format.

    Examples
    --------
    >>> m = message("{n:,d} images, {share:.0f}% right", n=2000, share=98.75)
    >>> m, m.template
    ('2,000 images, 99% right', '{n:,d} images, {share:.0f}% right')

    A value made with :func:`message` (a list, a clause) is translated too:

    >>> both = message("{a} and {b}", a="NCHW", b="NHWC")
    >>> m = message("{layouts} tie", layouts=both)
    >>> m, _translate(_spec(m), {"{a} and {b}": "{a} 和 {b}", "{layouts} tie": "{layouts} 打成平手"}, [])
    ('NCHW and NHWC tie', 'NCHW 和 NHWC 打成平手')
    """
    import math
    import numbers

    if not isinstance(template, str):
        raise TypeError(f"template must be a string, got {type(template).__name__}")
    try:
        names = _fields(template)
    except ValueError as exc:
        raise ValueError(f"template must be a str.format template, got {template!r}: {exc}") from None
    if any(not name or name.isdigit() or not name.isidentifier() for name, _ in names):
        raise ValueError(f"template must name each of its fields ({{ratio:.1f}}, not {{}} or {{0}} or {{a.b}}), "
                         f"got {template!r}")
    wanted = {name for name, _ in names}
    if wanted - set(args):
        raise ValueError(f"args must give every field of the template, missing {sorted(wanted - set(args))}")
    if set(args) - wanted:
        raise ValueError(f"args must be fields of the template, got unused {sorted(set(args) - wanted)}")
    clean = {}
    for name, value in args.items():
        if isinstance(value, bool) or isinstance(value, str):
            clean[name] = value
        elif isinstance(value, numbers.Integral):
            clean[name] = int(value)
        elif isinstance(value, numbers.Real):
            if not math.isfinite(float(value)):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
            clean[name] = float(value)
        else:
            raise TypeError(f"{name} must be a number, a string or a bool, got {type(value).__name__}")
    try:
        return Message(template, clean)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"args must fit the template's formats: {template!r} with {clean!r}: {exc}") from None

#: Where each edition lives in the published site, and how its switch link reads.
EDITIONS = {"en": ("", "English", "en"), "zh_CN": ("zh/", "中文版", "zh-CN")}
SOURCE_LANGUAGE = "en"
TEMPLATES = Path(__file__).parent / "templates"
SWITCH_TEMPLATE = "npukit-language.html"

#: myst-nb's default prompts for hidden code cells, and their Chinese.
PROMPTS_ZH = {
    "Show code cell source": "显示代码", "Hide code cell source": "隐藏代码",
    "Show code cell output": "显示输出", "Hide code cell output": "隐藏输出",
    "Show code cell outputs": "显示输出", "Hide code cell outputs": "隐藏输出",
    "Show code cell content": "显示代码单元", "Hide code cell content": "隐藏代码单元",
}

#: Notes shown at the top of translated pages (the text is the edition's own language).
NOTES = {
    "zh_CN": {
        "english_only": "本实验在中文版中仍为英文：实验笔记本（说明、代码与输出）暂不翻译；"
                        "中文版翻译的是各章与附录的正文。",
        "incomplete": "本页的翻译尚未完成：{missing} 处文字（共 {total} 处）仍以英文原文显示。",
    },
}


def _translated(config: Any) -> bool:
    return bool(config.language) and config.language != SOURCE_LANGUAGE


def _matches(docname: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(docname, p) for p in patterns)


# ---- the translation check ----------------------------------------------------

def _catalogue(env: Any, docname: str) -> dict[str, str] | None:
    """The compiled messages of ``docname``'s catalogue (None when it has none), as Locale reads them.

    Read from the ``.mo`` files directly (not through ``gettext.translation``,
    whose cache would keep an older catalogue in a long-lived process).
    """
    from sphinx.util.i18n import docname_to_domain

    domain = docname_to_domain(docname, env.config.gettext_compact)
    merged: dict[str, str] = {}
    found = False
    for directory in reversed(env.config.locale_dirs):  # the first directory wins, as in Sphinx
        mo = gettext.find(domain, os.path.join(env.srcdir, directory), [env.config.language])
        if mo:
            with open(mo, "rb") as f:
                merged |= gettext.GNUTranslations(f)._catalog  # noqa: SLF001 (the table Locale reads)
            found = True
    return merged if found else None


def _check_messages(app: Any, doctree: Any) -> None:
    """Before Sphinx's Locale transform: find the messages it will leave in English.

    They are only candidates: a node that a later transform removes (a front
    matter field, say) is not on the page, and the gettext build, which reads
    the finished page, never extracts it. :func:`_record_messages` keeps the
    candidates still in the finished page.
    """
    from sphinx import addnodes
    from sphinx.transforms.i18n import parse_noqa
    from sphinx.util.nodes import extract_messages

    env = app.env
    if _matches(env.docname, app.config.npukit_english_only):
        env.temp_data["npukit_i18n"] = None
        return
    merged = _catalogue(env, env.docname) or {}
    for toctree in doctree.findall(addnodes.toctree):  # Locale translates these; see _translate_inserted_toctrees
        toctree["npukit_checked"] = True
    try:  # an exercise's or solution's title is sphinx-exercise's translated word ("练习", "解答") and
        from sphinx_exercise.nodes import exercise_title, solution_title  # the subtitle, its own message
        built = (exercise_title, solution_title)
    except ImportError:
        built = ()
    candidates = []
    for node, msg in extract_messages(doctree):
        if built and isinstance(node, built):
            continue
        msgstr, _ = parse_noqa(merged.get(msg, ""))
        changes = bool(msgstr.strip()) and msgstr.strip() != msg.strip()
        candidates.append((node, msg, not msgstr.strip(), node.astext() if changes else None))
    env.temp_data["npukit_i18n"] = candidates


def _record_messages(app: Any, doctree: Any) -> None:
    """On ``doctree-read`` (the page is finished): count its messages, keep the untranslated, warn."""
    if not _translated(app.config):
        return
    env = app.env
    candidates = env.temp_data.pop("npukit_i18n", [])
    if candidates is None:
        env.npukit_i18n[env.docname] = {"total": 0, "missing": [], "english_only": True}
        return
    alive = {id(node) for node in doctree.findall()}
    kept = [(node, msg, missing, before) for node, msg, missing, before in candidates if id(node) in alive]
    missing = [(node, msg) for node, msg, miss, _ in kept if miss]
    env.npukit_i18n[env.docname] = {"total": len(kept), "missing": [m for _, m in missing], "english_only": False}
    _warn_missing(app, env.docname, missing)
    _warn_dropped(app, env.docname, [(node, msg) for node, msg, _, before in kept
                                     if before is not None and node.astext() == before])


def _warn_dropped(app: Any, docname: str, dropped: list[tuple[Any, str]]) -> None:
    """One warning per translation Sphinx silently left out: the node reads as it did in English.

    Locale re-parses each translation and keeps it only if it parses as the same kind of
    element; ``5. 脉动阵列`` parses as an ordered list, so a title stays English without a
    word. Escaping the full stop (``5\\. 脉动阵列``) keeps it a title.
    """
    from sphinx.util import logging
    from sphinx.util.i18n import docname_to_domain

    logger = logging.getLogger(__name__)
    po = f"locale/{app.config.language}/LC_MESSAGES/{docname_to_domain(docname, app.config.gettext_compact)}.po"
    for node, msg in dropped:
        short = msg if len(msg) <= 90 else msg[:87] + "..."
        line = next((n.line for n in _parents(node) if n.line), None)
        logger.warning(f"translation in {po} not applied: Sphinx read it as another kind of element "
                       f"(a leading '5.' is a list: write '5\\.'): {short!r}", location=(docname, line),
                       type="npukit", subtype="dropped")


def _warn_missing(app: Any, docname: str, missing: list[tuple[Any, str]], catalogue: str | None = None) -> None:
    """On a page that must be complete, one warning per untranslated message, naming its catalogue
    (the page's own, or ``catalogue``'s: a glued sentence is translated where its code is)."""
    from sphinx.util import logging
    from sphinx.util.i18n import docname_to_domain

    config = app.config
    if not missing or not _matches(docname, config.npukit_translation_required):
        return
    logger = logging.getLogger(__name__)
    domain = docname_to_domain(catalogue or docname, config.gettext_compact)
    po = f"locale/{config.language}/LC_MESSAGES/{domain}.po"
    for node, msg in missing:
        short = msg if len(msg) <= 90 else msg[:87] + "..."
        line = next((n.line for n in _parents(node) if n.line), None)
        logger.warning(f"untranslated or fuzzy message (run `make gettext`, translate it in {po}): "
                       f"{short!r}", location=(docname, line), type="npukit",
                       subtype="untranslated")


def _translate_inserted_toctrees(app: Any, doctree: Any) -> None:
    """Translate the toctrees sphinx-external-toc inserts from ``_toc.yml`` (after Locale has run).

    Their captions ("Chapters", "Labs" …) are messages of the root page (the
    gettext build extracts them from the finished page), but the toctrees are
    added at priority 100, after Sphinx's Locale transform (20), so Sphinx never
    translates them. Same lookup, same check.
    """
    from sphinx import addnodes

    env = app.env
    candidates = env.temp_data.get("npukit_i18n")
    if candidates is None:
        return
    merged = _catalogue(env, env.docname) or {}
    for node in doctree.findall(addnodes.toctree):
        if node.get("npukit_checked"):
            continue
        node.preserve_original_messages()
        for msg in node.extract_original_messages():
            translated = merged.get(msg, "").strip()
            if translated:
                node.apply_translated_message(msg, merged[msg])
            candidates.append((node, msg, not translated, None))  # applied here: never dropped


def _parents(node: Any):
    while node is not None:
        yield node
        node = node.parent


def _make_check_transform():
    from sphinx.transforms import SphinxTransform

    class CheckTranslations(SphinxTransform):
        """Runs just before Sphinx's ``Locale`` (priority 20), in translated builds only."""

        default_priority = 19

        def apply(self, **kwargs: Any) -> None:
            from sphinx.builders.gettext import MessageCatalogBuilder

            if not _translated(self.config) or isinstance(self.app.builder, MessageCatalogBuilder):
                return
            _check_messages(self.app, self.document)

    class TranslateToctrees(SphinxTransform):
        """Runs just after sphinx-external-toc inserts the book's toctrees (priority 100)."""

        default_priority = 101

        def apply(self, **kwargs: Any) -> None:
            from sphinx.builders.gettext import MessageCatalogBuilder

            if not _translated(self.config) or isinstance(self.app.builder, MessageCatalogBuilder):
                return
            _translate_inserted_toctrees(self.app, self.document)

    return CheckTranslations, TranslateToctrees


def _make_terms_transform():
    from sphinx.transforms import SphinxTransform

    class KeepGlossaryTerms(SphinxTransform):
        """Glossary terms are not messages: the glossary pairs each English term with its Chinese
        one in both editions, and ``{term}`` references on every page name them (before Locale)."""

        default_priority = 10

        def apply(self, **kwargs: Any) -> None:
            from docutils import nodes
            from sphinx import addnodes

            for glossary in self.document.findall(addnodes.glossary):
                for term in glossary.findall(nodes.term):
                    term["translatable"] = False

    return KeepGlossaryTerms


def _env_init(app: Any, env: Any, docnames: Any) -> None:
    if not hasattr(env, "npukit_i18n"):
        env.npukit_i18n = {}


def _env_purge(app: Any, env: Any, docname: str) -> None:
    getattr(env, "npukit_i18n", {}).pop(docname, None)


def _env_merge(app: Any, env: Any, docnames: Any, other: Any) -> None:
    env.npukit_i18n.update({d: other.npukit_i18n[d] for d in docnames if d in getattr(other, "npukit_i18n", {})})


def _report(app: Any, exception: Exception | None) -> None:
    """Print the edition's translation coverage at the end of a translated build."""
    if exception is not None or not _translated(app.config) or app.builder.format != "html":
        return
    from sphinx.util import logging

    status = getattr(app.env, "npukit_i18n", {})
    pages = {d: s for d, s in status.items() if not s["english_only"]}
    total = sum(s["total"] for s in pages.values())
    missing = sum(len(s["missing"]) for s in pages.values())
    done = sorted(d for d, s in pages.items() if not s["missing"])
    glued = sum(s.get("english_glue", 0) for s in pages.values())
    logger = logging.getLogger(__name__)
    logger.info(f"translation ({app.config.language}): {total - missing} of {total} messages translated "
                f"({100 * (total - missing) / max(total, 1):.1f}%); {len(done)} of {len(pages)} pages complete"
                f" ({', '.join(done) or 'none'}); {glued} glued values are English text not made with "
                f"npukit.i18n.message (they stay English); English-only pages: "
                f"{', '.join(sorted(d for d, s in status.items() if s['english_only'])) or 'none'}")


# ---- glued sentences ---------------------------------------------------------------

def _render_messages(app: Any, doctree: Any, docname: str) -> None:
    """Replace each page-qualified glue role whose value is a :class:`Message`, before myst-nb does.

    In the English edition the text is myst-nb's own (the formatted English);
    in a translated one it is the translation of the template, from the
    catalogue of the page whose code glued it, formatted with the same values.
    Either way the node is myst-nb's ``pasted-text`` plus the class
    ``npukit-message``, so the edition check compares its numbers, not its words.
    """
    try:
        from myst_nb.core.variables import format_plain_text
        from myst_nb.ext.glue.crossref import read_glue_cache
        from myst_nb.ext.glue.utils import PendingGlueReference
    except ImportError:
        return
    from docutils import nodes

    if not hasattr(app.env, "mystnb_config"):  # a book without myst-nb glues nothing
        return
    folder = app.env.mystnb_config.output_folder
    translated = _translated(app.config)
    missing: dict[str, list] = {}
    english: list = []  # glued English text that is not a Message: it stays English
    count = 0
    for node in list(doctree.findall(PendingGlueReference)):
        if node.gtype != "text":
            continue
        data = (read_glue_cache(folder, node.refdoc).get(node.key) or {}).get("data", {})
        if MESSAGE_MIME not in data:
            if translated and _is_prose(data.get("text/plain", "")):
                english.append((node, f"{node.refdoc}.md::{node.key} (glued English text: make it with "
                                      "npukit.i18n.message so it can be translated)"))
            continue
        count += 1
        text = format_plain_text(data.get("text/plain", "''"), node.get("fmt_spec", "s"))
        if translated:
            catalogue = _catalogue(app.env, node.refdoc) or {}
            problems: list[tuple[str, str, str]] = []
            translation = _translate(data[MESSAGE_MIME], catalogue, problems)
            for kind, source, template in problems:
                if kind == "missing":
                    missing.setdefault(node.refdoc, []).append((node, source))
                else:
                    from sphinx.util import logging

                    logging.getLogger(__name__).warning(
                        f"the translation of {source!r} must keep its fields "
                        f"{[f'{{{n}:{f}}}' if f else f'{{{n}}}' for n, f in _fields(source)]}, "
                        f"got {template!r}", location=node, type="npukit", subtype="message")
            if translation is not None:
                text = format(translation, node.get("fmt_spec", "s") or "s")
        node.replace_self(nodes.inline(text, text, classes=["pasted-text", "npukit-message"]))
    status = getattr(app.env, "npukit_i18n", {}).get(docname)
    if translated and status is not None and not status["english_only"]:
        status["total"] += count
        for refdoc, found in missing.items():
            status["missing"] += [m for _, m in found]
            _warn_missing(app, docname, found, catalogue=refdoc)
        status["total"] += len(english)
        status["missing"] += [m for _, m in english]
        status["english_glue"] = len(english)
        _warn_missing(app, docname, english)


def _translate(spec: dict, catalogue: dict[str, str], problems: list) -> str | None:
    """``spec`` (a :class:`Message`'s template and values) formatted from its translation in ``catalogue``,
    each nested message translated the same way; None, with ``problems`` extended by ``("missing",
    template, "")`` or ``("fields", template, translation)``, when a template (its own or a nested one's)
    has no usable translation.

    >>> inner = {"template": "{n} faster", "args": {"n": 2}}
    >>> _translate({"template": "it was {how}", "args": {"how": inner}},
    ...            {"it was {how}": "它{how}", "{n} faster": "快 {n} 倍"}, [])
    '它快 2 倍'
    >>> problems = []
    >>> _translate({"template": "it was {how}", "args": {"how": inner}}, {"it was {how}": "它{how}"}, problems)
    >>> problems
    [('missing', '{n} faster', '')]
    """
    args = {}
    for name, value in spec["args"].items():
        if isinstance(value, dict):
            value = _translate(value, catalogue, problems)
        args[name] = value
    template = catalogue.get(spec["template"], "")
    if not template.strip():
        problems.append(("missing", spec["template"], ""))
        return None
    if sorted(_fields(template)) != sorted(_fields(spec["template"])):
        problems.append(("fields", spec["template"], template))
        return None
    if any(value is None for value in args.values()):
        return None
    return template.format(**args)


def _is_prose(plain: str) -> bool:
    """Does a glued text/plain value read as English words (three or more)?

    >>> _is_prose(repr("all of them agree")), _is_prose(repr("background='light', brightness=(1.15, 1.4)"))
    (True, False)
    """
    import re

    if len(plain) >= 2 and plain[0] == plain[-1] and plain[0] in "'\"":  # a str's repr
        plain = plain[1:-1]
    # a word, but not a keyword argument (brightness=) or a quoted value ('light'): code, not prose
    return len(re.findall(r"(?<![\w.'\"])[A-Za-z][a-z]+(?![\w.('\"=])", plain)) >= 3


def _make_message_transform():
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class RenderMessages(SphinxPostTransform):
        """Glued :class:`Message` values, before myst-nb resolves the other glue references (5)."""

        default_priority = 4

        def run(self, **kwargs: Any) -> None:
            _render_messages(self.app, self.document, self.env.docname)

    return RenderMessages


# ---- no second execution ------------------------------------------------------

def _builder_inited(app: Any) -> None:
    app.npukit_i18n_started = time.time()
    _subtitles_translatable(app)  # in every build: the gettext build extracts them
    if str(app.config.language).startswith("zh"):
        _fast_chinese_search()


class _TermList(list):
    """A list whose ``in`` is a set lookup (the only two operations the Chinese search uses)."""

    def __init__(self, items: Any = ()) -> None:
        super().__init__(items)
        self._set = set(self)

    def extend(self, items: Any) -> None:
        items = list(items)
        super().extend(items)
        self._set.update(items)

    def __contains__(self, item: object) -> bool:
        return item in self._set


def _fast_chinese_search() -> None:
    """Sphinx 7's Chinese search index keeps every Latin word of the book in a list and looks each
    word up in it: quadratic, half of this book's Chinese build. Sphinx 8.1 made it a set (sphinx-doc
    PR 12995); Jupyter Book 1 pins Sphinx 7, so the same change is made here."""
    try:
        from sphinx.search import zh
    except ImportError:
        return
    if isinstance(getattr(zh.SearchChinese, "latin_terms", None), list) and \
            not isinstance(zh.SearchChinese.latin_terms, _TermList):
        zh.SearchChinese.latin_terms = _TermList(zh.SearchChinese.latin_terms)


def _check_no_execution(app: Any, env: Any) -> list[str]:
    """A translated build reads every notebook from the cache the English build filled."""
    if not _translated(app.config):
        return []
    try:
        from myst_nb.sphinx_ import NbMetadataCollector
    except ImportError:  # a build without myst-nb executes nothing
        return []
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    started = getattr(app, "npukit_i18n_started", time.time())
    for docname, data in sorted(NbMetadataCollector.get_doc_data(env).items()):
        exec_data = data.get("exec_data") or {}
        if exec_data.get("mtime", 0) >= started:
            logger.warning(f"{docname} was executed by the {app.config.language} build: its code was not in "
                           "the execution cache. Build the English edition first (`make book` does), so the "
                           "translated edition shows the same run's outputs and numbers",
                           type="npukit", subtype="executed")
    return []


# ---- exercise titles, toggle strings, code prompts --------------------------------

def _subtitles_translatable(app: Any) -> None:
    """Register sphinx-exercise's directives again with their subtitles marked as messages."""
    try:
        from sphinx_exercise import directive as exdir
        from sphinx_exercise.nodes import exercise_subtitle
    except ImportError:
        return

    def translatable(cls: type) -> type:
        class Directive(cls):  # type: ignore[misc, valid-type]
            def run(self):  # noqa: ANN202
                result = super().run()
                if self.arguments:
                    source, line = self.state_machine.get_source_and_line(self.lineno)
                    for node in result:
                        for sub in node.findall(exercise_subtitle):
                            sub.rawsource, sub.source, sub.line = self.arguments[0], source, line
                return result

        Directive.__name__ = cls.__name__
        return Directive

    for name, cls in (("exercise", exdir.ExerciseDirective), ("exercise-start", exdir.ExerciseStartDirective)):
        app.add_directive(name, translatable(cls), override=True)


def _extract_subtitles(app: Any, doctree: Any) -> None:
    """On ``doctree-read`` of a gettext build: put each exercise's subtitle into the page's catalogue.

    The gettext builder collects messages from the resolved doctree, after sphinx-exercise's
    post-transforms have rebuilt the title without the subtitle's source, so ``make gettext``
    never saw the titles that :func:`_subtitles_translatable` makes translatable in the HTML build.
    """
    if getattr(app.builder, "name", "") != "gettext":
        return
    try:
        from sphinx.builders.gettext import MsgOrigin
        from sphinx.util.i18n import docname_to_domain
        from sphinx_exercise.nodes import exercise_subtitle
    except ImportError:
        return
    catalogue = app.builder.catalogs[docname_to_domain(app.env.docname, app.config.gettext_compact)]
    for sub in doctree.findall(exercise_subtitle):
        if sub.source and sub.rawsource:
            catalogue.add(" ".join(sub.rawsource.split()), MsgOrigin(sub.source, sub.line or -1))


def _registry_translated(app: Any, doctree: Any) -> None:
    """On ``doctree-read`` of a translated build: sphinx-exercise's registry keeps the translated exercise.

    The registry holds a copy of each exercise node made when the directive ran, before the
    translation replaced its subtitle; a solution's title ("解答 练习 5.2 (…)") is built from that
    copy, so without this every solution named its exercise in English.
    """
    if not _translated(app.config) or not hasattr(app.env, "sphinx_exercise_registry"):
        return
    try:
        from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node
    except ImportError:
        return
    registry = app.env.sphinx_exercise_registry
    for node in doctree.findall(lambda n: isinstance(n, (exercise_enumerable_node, exercise_node))):
        label = node.get("label")
        if label in registry and registry[label].get("docname") == app.env.docname:
            registry[label]["node"] = node.deepcopy()


def _toggle_strings(app: Any, config: Any) -> None:
    """sphinx-togglebutton's hints from its own Chinese catalogue (shipped as ``zh-cn``)."""
    if not str(config.language).startswith("zh") or not hasattr(config, "togglebutton_hint"):
        return
    try:
        import sphinx_togglebutton
    except ImportError:
        return
    mo = Path(sphinx_togglebutton.__file__).parent / "translations" / "locales" / "zh-cn" / "LC_MESSAGES" / "togglebutton.mo"
    if not mo.exists():
        return
    with mo.open("rb") as f:
        table = gettext.GNUTranslations(f)
    for key, english in (("togglebutton_hint", "Click to show"), ("togglebutton_hint_hide", "Click to hide")):
        if config[key] == english:
            config[key] = table.gettext(english)


def _make_prompt_transform():
    from sphinx.transforms.post_transforms import SphinxPostTransform

    class TranslatePrompts(SphinxPostTransform):
        """myst-nb's hidden-cell prompts in the edition's language (after myst-nb's own, 199)."""

        default_priority = 200
        formats = ("html",)

        def run(self, **kwargs: Any) -> None:
            if not str(self.config.language).startswith("zh"):
                return
            try:
                from myst_nb.sphinx_ import HideCodeCellNode
            except ImportError:
                return
            for node in self.document.findall(HideCodeCellNode):
                for key in ("prompt_show", "prompt_hide"):
                    node[key] = PROMPTS_ZH.get(node[key], node[key])

    return TranslatePrompts


# ---- the language switch and the notes ------------------------------------------

#: Theme strings jupyter-book writes into ``html_theme_options`` (so no catalogue sees them).
THEME_OPTIONS_ZH = {"search_bar_text": {"Search this book...": "搜索本书……"}}


def _config_inited(app: Any, config: Any) -> None:
    config.templates_path = list(config.templates_path) + [str(TEMPLATES)]
    if str(config.language).startswith("zh"):
        options = dict(config.html_theme_options or {})
        for key, table in THEME_OPTIONS_ZH.items():
            options[key] = table.get(options.get(key), options.get(key))
        config.html_theme_options = {k: v for k, v in options.items() if v is not None}


def _counterpart(app: Any, pagename: str) -> tuple[str, str, str]:
    """(relative URL, label, hreflang) of ``pagename`` in the other edition."""
    language = app.config.language or SOURCE_LANGUAGE
    here = EDITIONS.get(language, EDITIONS[SOURCE_LANGUAGE])[0]
    other = "zh_CN" if language == SOURCE_LANGUAGE else SOURCE_LANGUAGE
    prefix, label, hreflang = EDITIONS[other]
    up = "../" * (pagename.count("/") + here.count("/"))
    return f"{up}{prefix}{app.builder.get_target_uri(pagename)}", label, hreflang


def _page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if app.builder.format != "html":
        return
    url, label, hreflang = _counterpart(app, pagename)
    context["npukit_counterpart"] = {"url": url, "label": label, "hreflang": hreflang}
    context["metatags"] = context.get("metatags", "") + (
        f'\n<link rel="alternate" hreflang="{hreflang}" href="{html.escape(url)}" />')
    sidebars = context.get("sidebars")
    if isinstance(sidebars, list) and SWITCH_TEMPLATE not in sidebars:
        at = sidebars.index("search-button-field.html") + 1 if "search-button-field.html" in sidebars else 1
        context["sidebars"] = sidebars[:at] + [SWITCH_TEMPLATE] + sidebars[at:]  # a copy: the list is shared
    if not _translated(app.config) or doctree is None or "body" not in context:
        return
    status = getattr(app.env, "npukit_i18n", {}).get(pagename)
    notes = NOTES.get(app.config.language, {})
    if not status or not notes:
        return
    if status["english_only"]:
        text = notes["english_only"]
        # the page's text is English: say so to browsers and screen readers
        context["body"] = f'<div lang="{EDITIONS[SOURCE_LANGUAGE][2]}">{context["body"]}</div>'
    elif status["missing"]:
        text = notes["incomplete"].format(missing=len(status["missing"]), total=status["total"])
    else:
        return
    lang = EDITIONS.get(app.config.language, EDITIONS[SOURCE_LANGUAGE])[2]
    note = f'<div class="admonition note npukit-translation-note" lang="{lang}"><p>{html.escape(text)}</p></div>\n'
    body = context["body"]
    end = body.find("</h1>")
    context["body"] = body[: end + 5] + "\n" + note + body[end + 5:] if end >= 0 else note + body


def setup(app: Any) -> dict:
    """Register the language switch, the translation check and the edition's strings."""
    app.add_config_value("npukit_translation_required", [], "env", [list])
    app.add_config_value("npukit_english_only", ["labs/*"], "env", [list])
    app.connect("config-inited", _config_inited)
    # before sphinx-togglebutton's own config-inited handler writes its strings into the page
    app.connect("config-inited", _toggle_strings, priority=400)
    app.connect("builder-inited", _builder_inited)
    app.connect("env-before-read-docs", _env_init)
    app.connect("env-purge-doc", _env_purge)
    app.connect("env-merge-info", _env_merge)
    app.connect("env-updated", _check_no_execution)
    app.connect("doctree-read", _record_messages)
    app.connect("doctree-read", _extract_subtitles)
    app.connect("doctree-read", _registry_translated)
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _report)
    app.add_transform(_make_terms_transform())
    for transform in _make_check_transform():
        app.add_transform(transform)
    app.add_post_transform(_make_prompt_transform())
    app.add_post_transform(_make_message_transform())
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "0.1"}
