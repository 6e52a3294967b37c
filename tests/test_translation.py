"""The Chinese edition cannot drift from the English: catalogues, glue roles, the pipeline.

* Every glue role in the pages names its page (``tools/qualify_glue.py``):
  an unqualified role in a translated message renders nothing.
* The catalogues (``locale/zh_CN/``) have no untranslated or fuzzy message
  on the pages ``npukit_translation_required`` in ``_config.yml`` names, and
  report the others' coverage. When the translation is complete that setting
  becomes ``["*"]`` and this test is strict for every page (the one line to
  change; see CONTRIBUTING.md, "The Chinese edition").
* On a one-page fixture book, one changed English sentence fails the Chinese
  build until ``make gettext``, and then fails the catalogue check (fuzzy)
  until it is translated again: the pipeline of the real book in miniature.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import i18n  # noqa: E402  (tools/i18n.py)
import qualify_glue  # noqa: E402  (tools/qualify_glue.py)

FIXTURE = Path(__file__).parent / "fixtures" / "i18n_book"


# ---- glue roles ------------------------------------------------------------------

@pytest.mark.parametrize("page", qualify_glue.pages(ROOT), ids=lambda p: p.name)
def test_every_glue_role_names_its_page(page):
    text = page.read_text(encoding="utf-8")
    bad = [f"{page.name}:{r.line}: {r.text}" for r in qualify_glue.roles(text) if not r.qualified]
    assert not bad, "unqualified glue roles (run: python tools/qualify_glue.py):\n" + "\n".join(bad)
    for r in qualify_glue.roles(text):
        target = r.text.split("`")[1].split("::")[0]
        assert (page.parent / target).exists(), f"{page.name}:{r.line}: {r.text} names a page that does not exist"


def test_qualify_rewrites_every_role_form_once():
    text = ("{glue:text}`k:.1f` and {glue:text}`n` and {glue}`a` {glue:}`b` {glue:any}`c` "
            "and {glue:text}`other.md::x:d`")
    out = qualify_glue.rewrite(text, "06_quant.md")
    assert out == ("{glue:text}`06_quant.md::k:.1f` and {glue:text}`06_quant.md::n:s` and "
                   "{glue}`06_quant.md::a` {glue:}`06_quant.md::b` {glue:any}`06_quant.md::c` "
                   "and {glue:text}`other.md::x:d`")
    assert qualify_glue.rewrite(out, "06_quant.md") == out  # idempotent


def test_qualify_leaves_code_and_front_matter_alone():
    text = "\n".join([
        "---", "title: {glue:text}`fm`", "---",
        "Prose {glue:text}`a:.2f`, code ``{glue:text}`b` `` stays.",
        "```{code-cell} python", "print('{glue:text}`c`')", "```",
        "````{exercise} Title", "In a directive: {glue:text}`d`.",
        "```python", "{glue:text}`e`", "```", "````",
        ":::{note}", "In a colon fence: {glue:text}`f`", ":::",
    ])
    out = qualify_glue.rewrite(text, "p.md")
    for untouched in ("{glue:text}`fm`", "``{glue:text}`b` ``", "'{glue:text}`c`'", "\n{glue:text}`e`\n"):
        assert untouched in out
    for key in ("a:.2f", "d:s", "f:s"):
        assert f"{{glue:text}}`p.md::{key}`" in out
    assert [r.qualified for r in qualify_glue.roles(out)] == [True, True, True]


def test_qualify_refuses_glue_md():
    with pytest.raises(qualify_glue.GlueError, match="glue:md"):
        qualify_glue.rewrite("{glue:md}`table`", "p.md")


# ---- the catalogues ----------------------------------------------------------------

def test_nothing_to_translate():
    assert i18n.nothing_to_translate("`npukit.layouts`, `npukit.simd`")
    assert i18n.nothing_to_translate("—") and i18n.nothing_to_translate("$2^{31}$")
    assert i18n.nothing_to_translate("{glue:text}`06_quant.md::x:.1f`")
    assert not i18n.nothing_to_translate("{glue:text}`06_quant.md::x:.1f` dB")
    assert not i18n.nothing_to_translate("[lab 1](labs/01_tensors.ipynb)")


def test_catalogues_are_complete_where_required():
    found = i18n.problems(ROOT)
    cats = i18n.status(ROOT)
    assert cats, "no catalogue in locale/zh_CN: run make gettext"
    assert any(c.required for c in cats), "npukit_translation_required names no page"
    total, done = sum(c.total for c in cats), sum(c.translated for c in cats)
    warnings.warn(f"Chinese edition: {done} of {total} messages translated ({100 * done / total:.1f}%), "
                  f"{sum(c.complete for c in cats)} of {len(cats)} pages complete (make translation-status)")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("msgid, msgstr, lost", [
    ("{glue:text}`06_quant.md::ch6_sqnr:.1f` dB", "{glue:text}`06_quant.md::ch6_sqnr:.2f` 分贝", "roles"),
    ("{glue:text}`06_quant.md::ch6_sqnr:.1f` dB", "约 40 分贝", "roles"),            # a value typed by hand
    ("see {doc}`chapter 3 <03_graphs>`", "见{doc}`第 3 章 <03_roofline>`", "roles"),
    ("call `np.clip` here", "在这里调用 `clip`", "code"),
    ("$2^{31}-1$ is the largest", "$2^{32}$ 是最大的", "math"),
    ("[lab 1](../labs/01_tensors.ipynb)", "[实验 1](../labs/01.ipynb)", "links"),
    # next to a role and a Chinese character, ** is no longer bold: Markdown prints the asterisks
    ("run in **{term}`interleaved rounds`**", "按**{term}`交错轮次`**运行", "emphasis"),
    ("**The same threads.** The peak is", "**相同的线程。**峰值是", "emphasis"),
    ("7. Deploying to an NPU", "7. 部署到 NPU", "a leading number"),    # read as a list, translation dropped
])
def test_a_translation_that_changes_markup_is_refused(msgid, msgstr, lost):
    found = i18n.markup_problems(msgid, msgstr)
    assert found and found[0].startswith(lost), found


def test_a_translation_may_translate_titles_and_terms():
    assert i18n.markup_problems("see {doc}`chapter 3 <03_graphs>` and {term}`stride`",
                                "见 {doc}`第 3 章 <03_graphs>` 与 {term}`步长 <stride>`") == []
    assert i18n.markup_problems("run in **{term}`interleaved rounds`**", "按 **{term}`交错轮次`** 运行") == []
    assert i18n.markup_problems("**The same threads.** The peak is", "**相同的线程**。峰值是") == []
    assert i18n.markup_problems("7. Deploying to an NPU", "7\\. 部署到 NPU") == []


def test_problems_names_a_catalogue_entry_whose_markup_changed(tmp_path):
    import polib

    book = tmp_path / "book"
    shutil.copytree(FIXTURE, book)
    po_path = book / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po"
    po = polib.pofile(str(po_path))
    entry = next(e for e in po.translated_entries() if "`" in e.msgid or "{" in e.msgid or e.msgstr)
    entry.msgid, entry.msgstr = "Run `make book` now.", "现在运行 make book。"
    po.save()
    found = i18n.problems(book)
    assert any("changed the markup" in f and "make book" in f for f in found), found


def test_a_glued_template_must_write_the_numbers_its_english_writes(tmp_path):
    """The edition check compares a glued sentence's numbers: "a point" must not become "1 个百分点"."""
    import polib

    book = tmp_path / "book"
    shutil.copytree(FIXTURE, book)
    po_path = book / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po"
    po = polib.pofile(str(po_path))
    for msgid, msgstr in (("costs less than a point", "代价不到 1 个百分点"),
                          ("the {n} stride-2 layers", "那 {n} 个步幅为 2 的层")):
        po.append(polib.POEntry(msgid=msgid, msgstr=msgstr, comment=i18n.CODE_COMMENT))
    po.save()
    found = [f for f in i18n.problems(book) if "numbers its English writes" in f]
    assert len(found) == 1 and "costs less than a point" in found[0], found


def test_a_solution_names_its_exercise_in_the_translation(tmp_path):
    """sphinx-exercise builds a solution's title from its own copy of the exercise: it must be the translated one."""
    book = tmp_path / "book"
    (book / "locale" / "zh_CN" / "LC_MESSAGES").mkdir(parents=True)
    (book / "conf.py").write_text((FIXTURE / "conf.py").read_text(encoding="utf-8").replace(
        '"myst_parser", "npukit.i18n"', '"myst_parser", "sphinx_exercise", "npukit.i18n"'), encoding="utf-8")
    (book / "index.md").write_text("# Exercises\n\n```{exercise} Strides by hand\n:label: ex-one\n\n"
                                   "Count them.\n```\n\n```{solution} ex-one\n\nThey are 4.\n```\n",
                                   encoding="utf-8")
    i18n.extract(book)
    import polib

    po_path = book / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po"
    po = polib.pofile(str(po_path))
    zh = {"Exercises": "练习", "Strides by hand": "手算步长", "Count them.": "数一数。", "They are 4.": "是 4。"}
    for e in po:
        e.msgstr = zh.get(e.msgid, e.msgstr or e.msgid)
    po.save()
    built = _build_zh(book)
    assert built.returncode == 0, built.stderr
    page = (book / "_build" / "html" / "index.html").read_text(encoding="utf-8")
    solution = page[page.index('class="solution'):]
    assert "手算步长" in solution[:2000] and "Strides by hand" not in page, solution[:2000]


# ---- the pipeline, on a one-page book -----------------------------------------------

def _build_zh(book: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "-q", "-D", "language=zh_CN",
                           "-d", str(book / "_build" / "doctrees"), str(book), str(book / "_build" / "html")],
                          capture_output=True, text=True)


def test_a_changed_english_sentence_fails_until_translated(tmp_path):
    book = tmp_path / "book"
    shutil.copytree(FIXTURE, book)
    assert i18n.problems(book) == []
    built = _build_zh(book)
    assert built.returncode == 0, built.stderr
    assert "第二句是测试要改动的那一句。" in (book / "_build" / "html" / "index.html").read_text(encoding="utf-8")

    # A contributor changes one English sentence and forgets the translation.
    page = book / "index.md"
    page.write_text(page.read_text(encoding="utf-8").replace("the one the test changes", "the one this test changes"),
                    encoding="utf-8")
    built = _build_zh(book)
    assert built.returncode != 0
    assert "untranslated or fuzzy message" in built.stderr and "the one this test changes" in built.stderr

    # make gettext: the catalogue keeps the old translation, marked fuzzy, and the check names it.
    i18n.extract(book)
    found = i18n.problems(book)
    assert len(found) == 1 and "fuzzy" in found[0] and "the one this test changes" in found[0], found
    assert _build_zh(book).returncode != 0  # Sphinx leaves fuzzy translations out of the build

    # The translator updates the translation and drops the fuzzy flag: all is well again.
    import polib

    po = polib.pofile(str(book / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po"))
    entry = po.find("The second sentence is the one this test changes.")
    entry.msgstr, entry.flags = "第二句是本测试要改动的那一句。", [f for f in entry.flags if f != "fuzzy"]
    po.save()
    assert i18n.problems(book) == []
    built = _build_zh(book)
    assert built.returncode == 0, built.stderr
    assert "第二句是本测试要改动的那一句。" in (book / "_build" / "html" / "index.html").read_text(encoding="utf-8")


def test_a_translated_build_that_executes_a_notebook_warns(monkeypatch):
    """The Chinese build must read every notebook from the English build's cache (npukit/i18n.py)."""
    from types import SimpleNamespace

    import sphinx.util.logging

    from npukit import i18n as extension

    warned: list[str] = []
    monkeypatch.setattr(sphinx.util.logging, "getLogger",
                        lambda name: SimpleNamespace(warning=lambda msg, **kw: warned.append(msg)))
    started = 1_000.0
    app = SimpleNamespace(config=SimpleNamespace(language="zh_CN"), npukit_i18n_started=started)
    env = SimpleNamespace(nb_metadata={"chapters/cached": {"exec_data": {"mtime": started - 60}},
                                       "chapters/run": {"exec_data": {"mtime": started + 2}},
                                       "intro": {}})
    extension._check_no_execution(app, env)
    assert len(warned) == 1 and warned[0].startswith("chapters/run was executed by the zh_CN build")
    warned.clear()
    app.config.language = "en"  # the English build fills the cache: executing is its job
    extension._check_no_execution(app, env)
    assert warned == []


# ---- glued sentences (npukit.i18n.message) ---------------------------------------------

def test_message_is_the_formatted_english_and_keeps_its_template():
    from npukit.i18n import MESSAGE_MIME, message

    m = message("{n:,d} images, {share:.1f}% right, {ok}", n=2000, share=98.75, ok=True)
    assert m == "2,000 images, 98.8% right, True" and isinstance(m, str)
    bundle = m._repr_mimebundle_()
    assert bundle["text/plain"] == repr("2,000 images, 98.8% right, True")
    assert bundle[MESSAGE_MIME] == {"template": "{n:,d} images, {share:.1f}% right, {ok}",
                                    "args": {"n": 2000, "share": 98.75, "ok": True}}
    import numpy as np

    assert message("{x:.2f}", x=np.float32(0.5)).args == {"x": 0.5}  # NumPy scalars become plain numbers


def test_a_nested_message_is_stored_and_translated_as_its_own_message():
    from npukit.i18n import MESSAGE_MIME, _translate, message

    inner = message("{r:.2f} of its time", r=0.5)
    m = message("INT8 took {how}, and {n} rounds", how=inner, n=3)
    assert m == "INT8 took 0.50 of its time, and 3 rounds"
    spec = m._repr_mimebundle_()[MESSAGE_MIME]
    assert spec == {"template": "INT8 took {how}, and {n} rounds",
                    "args": {"how": {"template": "{r:.2f} of its time", "args": {"r": 0.5}}, "n": 3}}
    zh = {"INT8 took {how}, and {n} rounds": "INT8 用时{how}，共 {n} 轮", "{r:.2f} of its time": "是它的 {r:.2f} 倍"}
    assert _translate(spec, zh, []) == "INT8 用时是它的 0.50 倍，共 3 轮"
    problems = []  # an untranslated inner clause is a missing message, not English inside Chinese
    assert _translate(spec, {"INT8 took {how}, and {n} rounds": "INT8 用时{how}，共 {n} 轮"}, problems) is None
    assert problems == [("missing", "{r:.2f} of its time", "")]


def test_code_messages_finds_every_branch_and_refuses_a_computed_template(tmp_path):
    page = tmp_path / "p.md"
    page.write_text((FIXTURE.parent / "i18n_nb_book" / "index.md").read_text(encoding="utf-8"), encoding="utf-8")
    found, errors = i18n.code_messages(page)
    assert found == ["the new kernel ran {ratio:.2f} times as fast", "the new kernel was not faster ({ratio:.2f})"]
    assert errors == []
    page.write_text(page.read_text(encoding="utf-8").replace(
        'verdict = message("the new kernel was not faster ({ratio:.2f})", ratio=ratio)',
        'verdict = message(f"not faster ({ratio})")'), encoding="utf-8")
    found, errors = i18n.code_messages(page)
    assert len(found) == 1 and len(errors) == 1 and "literal string" in errors[0]


def test_edition_check_compares_the_numbers_of_glued_sentences():
    from edition_check import compare

    def page(sentence, switch):
        return (f'<nav class="npukit-language"><a href="{switch}">x</a></nav>'
                f'<p><span class="pasted-text npukit-message">{sentence}</span></p>')

    english = page("ran 1.50 times as fast over 1,024 runs", "zh/p.html")
    assert compare("p.html", english, page("快了 1.50 倍，共 1,024 次", "../p.html"))[0] == []
    problems, _ = compare("p.html", english, page("快了 1.5 倍，共 1,024 次", "../p.html"))
    assert problems and "numbers in glued sentences differ" in problems[0]


@pytest.mark.slow
def test_a_glued_sentence_is_translated_with_the_same_numbers(tmp_path):
    """English build (executes), make gettext, translate, Chinese build (from the cache), edition check."""
    import polib

    from edition_check import main as edition_check

    book = tmp_path / "book"
    shutil.copytree(FIXTURE.parent / "i18n_nb_book", book)
    cache = ["-D", f"nb_execution_cache_path={tmp_path / 'cache'}"]

    def build(*options):
        out = book / "_build" / ("zh" if "language=zh_CN" in options else "en")
        return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q",
                               *cache, *options, "-d", str(out / "doctrees"), str(book), str(out / "html")],
                              capture_output=True, text=True)

    built = build()
    assert built.returncode == 0, built.stderr
    i18n.extract(book)
    po = polib.pofile(str(book / "locale" / "zh_CN" / "LC_MESSAGES" / "index.po"))
    assert {e.msgid for e in po if i18n.CODE_COMMENT in (e.comment or "")} == {
        "the new kernel ran {ratio:.2f} times as fast", "the new kernel was not faster ({ratio:.2f})"}
    built = build("-D", "language=zh_CN")  # untranslated on a required page: fails
    assert built.returncode != 0 and "the new kernel ran {ratio:.2f} times as fast" in built.stderr
    chinese = {"A measured page": "一个测量过的页面",
               "the new kernel ran {ratio:.2f} times as fast": "新内核的速度是原来的 {ratio:.2f} 倍",
               "the new kernel was not faster ({ratio:.2f})": "新内核没有更快（{ratio:.2f}）",
               "On this machine {glue:text}`index.md::verdict:s`, over {glue:text}`index.md::n:,d` runs.":
                   "在这台机器上，{glue:text}`index.md::verdict:s`，共运行 {glue:text}`index.md::n:,d` 次。"}
    for entry in po:
        entry.msgstr = chinese.get(entry.msgid, entry.msgstr)
    po.save()
    assert i18n.problems(book) == []
    built = build("-D", "language=zh_CN")
    assert built.returncode == 0, built.stderr
    html = (book / "_build" / "zh" / "html" / "index.html").read_text(encoding="utf-8")
    assert "新内核的速度是原来的 1.50 倍" in html and "1,024" in html
    site = book / "_build" / "en" / "html"
    shutil.move(str(book / "_build" / "zh" / "html"), str(site / "zh"))
    assert edition_check(["edition_check.py", str(site)]) == 0

    # A translation that drops a field is caught before the build.
    entry = po.find("the new kernel ran {ratio:.2f} times as fast")
    entry.msgstr = "新内核更快"
    po.save()
    assert any("must keep its fields" in p for p in i18n.problems(book))
