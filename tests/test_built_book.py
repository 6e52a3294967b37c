"""The built book quotes every shared quantity with one value (issue 19), read from the build's output.

Two sources, both written by the book build under ``_build``:

* every page's "numbers so far" table, in ``_build/html`` (what a reader sees): a row (chapter, quantity)
  appears on every later page and must show the same value on all of them — this is where page 3b and
  page 4 once showed the roofline 2× apart, and pages 2, 3b and 4 three values of chapter 2's conversion;
* every quote a page made with ``npukit.shared.glue``, whose glue output carries the quantity's name and
  value (``_build/jupyter_execute/**/*.glue.json``, the files myst-nb pastes the prose from): one
  quantity, one value, whichever page quotes it; and the prose's values are the tables' values
  (the roofline row shows the quoted peak and bandwidth, the accuracy row the quoted accuracy …).

``make test`` runs the tests marked ``book`` right after ``make book`` (``make book-check``; they read
files only, in well under a second). The unmarked tests build two small fake books whose pages disagree
and show that each check fails on them.
"""

from __future__ import annotations

import json
import pathlib
from collections import defaultdict
from html.parser import HTMLParser

import pytest

BUILD = pathlib.Path(__file__).resolve().parents[1] / "_build"
TALLY_HEADER = ["ch.", "quantity", "value", "how it was obtained"]


class _Tables(HTMLParser):
    """Every <table>'s rows as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def tally_rows(html_dir: pathlib.Path) -> dict[tuple[int, str], dict[str, str]]:
    """(chapter, quantity) → {page: value} over every "numbers so far" table of the built HTML."""
    out: dict[tuple[int, str], dict[str, str]] = defaultdict(dict)
    for page in sorted(html_dir.rglob("*.html")):
        parser = _Tables()
        parser.feed(page.read_text(encoding="utf-8"))
        for table in parser.tables:
            if table and table[0] == TALLY_HEADER:
                for row in table[1:]:
                    out[(int(row[0]), row[1])][page.relative_to(html_dir).as_posix()] = row[2]
    return dict(out)


def shared_quotes(exec_dir: pathlib.Path) -> dict[str, dict[str, float]]:
    """quantity → {"page::key": value} over every npukit.shared.glue output of the build."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for glue_file in sorted(exec_dir.rglob("*.glue.json")):
        page = glue_file.relative_to(exec_dir).as_posix().removesuffix(".glue.json")
        for key, output in json.loads(glue_file.read_text(encoding="utf-8")).items():
            mark = output.get("metadata", {}).get("npukit")
            if mark:
                out[mark["quantity"]][f"{page}::{key}"] = mark["value"]
    return dict(out)


def disagreements(rows: dict, quotes: dict) -> list[str]:
    """Every quantity with two values: in the tables, among the quotes, or between the quotes and the tables."""
    problems = [f"table row {row}: {values}" for row, values in rows.items() if len(set(values.values())) > 1]
    problems += [f"quoted {q}: {values}" for q, values in quotes.items() if len(set(values.values())) > 1]
    one = {q: next(iter(v.values())) for q, v in quotes.items()}

    def row_value(chapter: int, start: str) -> str | None:
        found = [next(iter(v.values())) for (c, name), v in rows.items() if c == chapter and name.startswith(start)]
        return found[0] if found else None

    expect = []   # (a quoted quantity, the table row that shows it, the text that row must contain)
    if "float_accuracy" in one:
        expect.append(("float_accuracy", (0, "held-out accuracy"), f"{one['float_accuracy']:.1%}"))
    if "peak_flops" in one and "bandwidth" in one:
        expect.append(("peak_flops", (3, "this machine's roofline"),
                       f"{one['peak_flops'] / 1e9:.0f} GFLOP/s, {one['bandwidth'] / 1e9:.1f} GB/s"))
    if "weight_bytes_fp32" in one:
        expect.append(("weight_bytes_fp32", (0, "weight bytes, float32"), f"{one['weight_bytes_fp32']:,} B"))
    if "weight_bytes_int8" in one:
        expect.append(("weight_bytes_int8", (6, "weight bytes, INT8"), f"{one['weight_bytes_int8']:,} B"))
    if "latency_fp32" in one:
        expect.append(("latency_fp32", (7, "latency, batch 1, CPU f32"), f"{one['latency_fp32'] * 1e3:.3f} ms"))
    if "conversion_input" in one:
        expect.append(("conversion_input", (2, "NCHW→NHWC of a 1×3×32×32"), f"{one['conversion_input'] * 1e6:.1f} µs"))
    for quantity, (chapter, start), text in expect:
        shown = row_value(chapter, start)
        if shown is not None and text not in shown:
            problems.append(f"{quantity} is quoted as {text!r} but chapter {chapter}'s row {start!r} shows {shown!r}")
    return problems


# ---- the real build --------------------------------------------------------------------------------


@pytest.mark.book
def test_the_built_book_has_one_value_per_quantity():
    html, executed = BUILD / "html", BUILD / "jupyter_execute"
    assert (html / "index.html").exists() and executed.is_dir(), "build the book first (make book)"
    rows, quotes = tally_rows(html), shared_quotes(executed)
    assert len(rows) >= 20, "the numbers-so-far tables were not found in the HTML"
    assert {"float_accuracy", "peak_flops", "bandwidth", "weight_bytes_fp32", "latency_fp32"} <= set(quotes)
    assert any(len(v) > 1 for v in quotes.values()), "no quantity is quoted on two pages: nothing was checked"
    problems = disagreements(rows, quotes)
    assert not problems, "one quantity, two values:\n" + "\n".join(problems)


# ---- the check fails on books that disagree ----------------------------------------------------


def _table(rows: list[tuple[int, str, str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in TALLY_HEADER)
    body = "".join(f"<tr><td>{c}</td><td>{q}</td><td>{v}</td><td>how</td></tr>" for c, q, v in rows)
    return f'<html><body><p>text</p><table class="npukit-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></body></html>'


def _fake_book(tmp_path: pathlib.Path, pages: dict[str, list], quotes: dict[str, dict[str, tuple[str, float]]]):
    html, executed = tmp_path / "html" / "chapters", tmp_path / "jupyter_execute" / "chapters"
    html.mkdir(parents=True), executed.mkdir(parents=True)
    for page, rows in pages.items():
        (html / f"{page}.html").write_text(_table(rows), encoding="utf-8")
    for page, marks in quotes.items():
        glued = {key: {"output_type": "display_data", "data": {"text/plain": repr(v)},
                       "metadata": {"scrapbook": {"name": key}, "npukit": {"quantity": q, "value": v}}}
                 for key, (q, v) in marks.items()}
        glued["other"] = {"output_type": "display_data", "data": {"text/plain": "1"}, "metadata": {"scrapbook": {}}}
        (executed / f"{page}.glue.json").write_text(json.dumps(glued), encoding="utf-8")
    return tally_rows(tmp_path / "html"), shared_quotes(tmp_path / "jupyter_execute")


def test_two_tables_that_disagree_fail(tmp_path):
    roof = (3, "this machine's roofline")
    rows, quotes = _fake_book(tmp_path, {"03b_rewrites": [(*roof, "277 GFLOP/s, 31.2 GB/s")],
                                         "04_gemm": [(*roof, "146 GFLOP/s, 37.9 GB/s")]}, {})
    assert rows[roof] == {"chapters/03b_rewrites.html": "277 GFLOP/s, 31.2 GB/s",
                          "chapters/04_gemm.html": "146 GFLOP/s, 37.9 GB/s"}
    assert disagreements(rows, quotes) == [f"table row {roof}: {rows[roof]}"]


def test_two_quotes_that_disagree_fail(tmp_path):
    rows, quotes = _fake_book(tmp_path, {}, {"00_cameranet": {"ch0_accuracy": ("float_accuracy", 0.979)},
                                             "08_capstone": {"ch8_float_acc": ("float_accuracy", 0.988)}})
    assert quotes == {"float_accuracy": {"chapters/00_cameranet::ch0_accuracy": 0.979,
                                         "chapters/08_capstone::ch8_float_acc": 0.988}}
    assert len(disagreements(rows, quotes)) == 1


def test_prose_that_disagrees_with_the_table_fails(tmp_path):
    acc = (0, "held-out accuracy")
    rows, quotes = _fake_book(tmp_path, {"00_cameranet": [(*acc, "98.8%")], "06_quant": [(*acc, "98.8%")]},
                              {"00_cameranet": {"ch0_accuracy": ("float_accuracy", 0.984)},
                               "06_quant": {"ch6_float_acc": ("float_accuracy", 0.984)}})
    problems = disagreements(rows, quotes)
    assert len(problems) == 1 and "'98.4%'" in problems[0] and "'98.8%'" in problems[0]


def test_a_book_that_agrees_passes(tmp_path):
    roof = (3, "this machine's roofline")
    rows, quotes = _fake_book(tmp_path, {"03_graphs": [(*roof, "150 GFLOP/s, 30.0 GB/s")],
                                         "04_gemm": [(*roof, "150 GFLOP/s, 30.0 GB/s")]},
                              {"03_graphs": {"ch3_peak": ("peak_flops", 150e9), "ch3_bw": ("bandwidth", 30e9)},
                               "08_capstone": {"ch8_peak": ("peak_flops", 150e9), "ch8_bw": ("bandwidth", 30e9)}})
    assert disagreements(rows, quotes) == []
