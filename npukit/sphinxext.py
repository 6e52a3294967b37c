"""Book build glue: plotly figures in the static HTML, offline.

plotly ≥ 6 in a kernel outputs only the ``application/vnd.plotly.v1+json``
mime bundle, which myst-nb does not know how to render. Two small pieces fix
that without any CDN:

* :class:`PlotlyMimeRenderer`, a myst-nb mime-renderer plugin (registered in
  ``pyproject.toml`` under the ``myst_nb.mime_renderers`` entry point), turns
  the bundle into a ``<div>`` and a ``Plotly.newPlot`` call;
* :func:`setup`, a Sphinx extension, copies the ``plotly.min.js`` shipped
  inside the plotly wheel to ``_static/`` once and adds it only to the pages
  that have a figure.

It also removes two console errors a default Jupyter Book 1 site shows:
inline scripts declared twice (Sphinx 7 adds them once per registration) and
the theme-mode warning (fixed in ``_config.yml`` with ``default_mode``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

PLOTLY_MIME = "application/vnd.plotly.v1+json"
MARKER_CLASS = "npukit-plotly"


def figure_html(fig: Any) -> str:
    """HTML for one plotly figure, without plotly.js itself.

    The div id is a hash of the figure's JSON, so rebuilding an unchanged page
    produces identical HTML.

    Examples
    --------
    >>> html = figure_html({"data": [{"type": "bar", "y": [1, 2]}], "layout": {}})
    >>> html.count("Plotly.newPlot")
    1
    """
    import plotly.io as pio

    if isinstance(fig, str):
        fig = json.loads(fig)
    fig = dict(fig)
    digest = hashlib.sha1(json.dumps(fig, sort_keys=True, default=str).encode()).hexdigest()[:12]
    body = pio.to_html(
        fig,
        include_plotlyjs=False,
        full_html=False,
        div_id=f"plotly-{digest}",
        validate=False,
        auto_play=False,  # an animation waits for its play button
        config={"displaylogo": False, "responsive": True},
    )
    return f'<div class="{MARKER_CLASS}">{body}</div>'


class PlotlyMimeRenderer:
    """myst-nb plugin: render plotly's JSON mime bundle as a live figure."""

    mime_priority_overrides = [("html", PLOTLY_MIME, 5), ("dirhtml", PLOTLY_MIME, 5)]

    @staticmethod
    def handle_mime(renderer: Any, data: Any, inline: bool) -> Any:
        if data.mime_type != PLOTLY_MIME or inline:
            return None
        from docutils import nodes

        return [nodes.raw(text=figure_html(data.content), format="html", classes=["output", "plotly"])]


def _copy_plotly_js(app: Any, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    import plotly

    src = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    dst = Path(app.outdir) / "_static" / "plotly.min.js"
    dst.parent.mkdir(parents=True, exist_ok=True)
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        shutil.copyfile(src, dst)


def _page_context(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if doctree is not None and MARKER_CLASS in context.get("body", ""):
        app.add_js_file("plotly.min.js", priority=400)


def _dedupe_scripts(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Keep the first of identical script entries (Sphinx 7 repeats inline ones)."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for s in scripts:
        # Sphinx registers the same inline script once with filename None and
        # once with "" (builder init vs. a later add_js_file): treat them alike.
        key = (getattr(s, "filename", s) or "", repr(sorted(getattr(s, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(s)
    scripts[:] = unique


#: Pages outside the numbered chapters whose exercises are numbered by a letter (Exercise P.1).
_LETTERED = {"chapters/project": "P"}


def _number_exercises_per_chapter(app: Any, env: Any) -> list[str]:
    """Number exercises per chapter: the second exercise of ``chapters/03_*.md`` is Exercise 3.2.

    Sphinx numbers enumerable nodes across the whole book when the table of
    contents is not numbered (this book numbers its chapters in their titles,
    from 0). Runs after Sphinx assigned its numbers and renumbers each chapter's
    exercises in document order as ``(chapter, k)``. A chapter may span pages
    named with a letter after its number (``chapters/03_graphs.md``,
    ``chapters/03b_rewrites.md``): their exercises continue one numbering, in
    the order of the pages' names. The term project's page numbers its own
    with a letter (:data:`_LETTERED`).
    """
    import re

    changed = []
    pages: dict[int, list[str]] = {}
    for docname, numbers in env.toc_fignumbers.items():
        m = re.match(r"chapters/(\d+)[a-z]?_", docname)
        key = int(m.group(1)) if m else _LETTERED.get(docname)
        if key is not None and numbers.get("exercise"):
            pages.setdefault(key, []).append(docname)
    for chapter, docnames in pages.items():
        k = 0
        for docname in sorted(docnames):
            ex = env.toc_fignumbers[docname]["exercise"]
            order = sorted(ex, key=lambda ident: ex[ident])
            renumbered = {ident: (chapter, k + j) for j, ident in enumerate(order, start=1)}
            k += len(order)
            if renumbered != ex:
                env.toc_fignumbers[docname]["exercise"] = renumbered
                changed.append(docname)
    return changed


def given_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{given}`32 KiB```: an assumed value (a spec, a budget, an exercise's data), not a measurement.

    It renders as plain text; the mark tells the number scan
    (``tests/number_scan.py``) and the reader's source view that the number
    is an input, so it needs neither ``glue`` nor a citation.
    """
    from docutils import nodes

    return [nodes.inline(rawtext, text, classes=["npukit-given"])], []


def setup(app: Any) -> dict:
    import os
    import pathlib

    from ._jupyter import patch_zmq_polling
    from ._store import ENV

    patch_zmq_polling()  # labs with live widgets otherwise stall at random (nbclient issue 312)
    # Every page's kernel inherits this: the build's shared quantities are measured once, in _build/npukit-store
    # (make book sets it and starts the store afresh; a direct `jupyter-book build` keeps it with its cache).
    os.environ.setdefault(ENV, str(pathlib.Path(app.outdir).parent / "npukit-store"))
    app.add_role("given", given_role)
    app.connect("env-get-updated", _number_exercises_per_chapter, priority=900)
    app.connect("html-page-context", _page_context)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.connect("build-finished", _copy_plotly_js)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "0.1"}
