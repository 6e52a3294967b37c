"""The edition check (``tests/edition_check.py``, run by ``make book``) on small pages."""

from __future__ import annotations

from edition_check import compare, main, read_page


def _page(values: list[str], switch: str | None = "../zh/chapters/p.html", prose: str = "text") -> str:
    spans = " ".join(f'<span class="pasted-text">{v}</span>' for v in values)
    nav = f'<nav class="npukit-language"><a href="{switch}">switch</a></nav>' if switch else ""
    return f"<html><body>{nav}<p>{prose} {spans}</p></body></html>"


def test_reads_glued_values_and_the_switch():
    page = read_page(_page(["3.14", "1,024"]))
    assert page.glued == ["3.14", "1,024"] and page.switch == ["../zh/chapters/p.html"]


def test_same_values_in_another_order_pass():
    problems, n = compare("chapters/p.html", _page(["1", "2", "2"]),
                          _page(["2", "1", "2"], switch="../../chapters/p.html", prose="中文"))
    assert problems == [] and n == 3


def test_a_lost_or_retyped_value_fails():
    english = _page(["3.14", "42"])
    lost, _ = compare("chapters/p.html", english, _page(["42"], switch="../../chapters/p.html"))
    assert lost and "English only ['3.14']" in lost[0]
    retyped, _ = compare("chapters/p.html", english, _page(["3.1", "42"], switch="../../chapters/p.html"))
    assert retyped and "Chinese only ['3.1']" in retyped[0]


def test_a_wrong_or_missing_switch_fails():
    problems, _ = compare("chapters/p.html", _page([]), _page([], switch="../chapters/p.html"))
    assert problems == ["Chinese page's language switch points to zh/chapters/p.html, not chapters/p.html"]
    problems, _ = compare("chapters/p.html", _page([], switch=None), _page([], switch="../../chapters/p.html"))
    assert problems == ["English page has no language switch"]


def test_a_page_missing_from_one_edition_fails(tmp_path, capsys):
    (tmp_path / "zh").mkdir()
    (tmp_path / "a.html").write_text(_page(["1"], switch="zh/a.html"), encoding="utf-8")
    (tmp_path / "b.html").write_text(_page([], switch="zh/b.html"), encoding="utf-8")
    (tmp_path / "zh" / "a.html").write_text(_page(["1"], switch="../a.html"), encoding="utf-8")
    assert main(["edition_check.py", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "b.html: only in the English edition" in out and "1 problems" in out


def test_a_comma_after_a_number_is_punctuation():
    """English 'a multiple of 128, so' against Chinese '128 的整数倍': the same number (a build failed on it)."""
    import edition_check

    assert edition_check.NUMBER.findall("a multiple of 128, so 12,288 bytes") == ["128", "12,288"]
