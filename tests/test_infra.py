"""Tests of the book glue: lazy imports, the viz look, the plotly renderer."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def test_import_npukit_is_light():
    """`import npukit` must not pull in the heavy libraries (budget: 0.5 s; see make bench)."""
    code = (
        "import sys, npukit, npukit.tensors, npukit.models, npukit.viz, npukit.teach; "
        "heavy = [m for m in ('openvino', 'onnx', 'plotly', 'IPython') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"import npukit imported: {out}"


def test_unknown_attribute():
    import npukit

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        npukit.nope  # noqa: B018


def test_style_rejects_non_figures_and_sets_palette():
    import plotly.graph_objects as go

    from npukit import viz

    with pytest.raises(TypeError, match="fig must be a plotly"):
        viz.style({"data": []})
    fig = viz.style(go.Figure(), height=300)
    assert fig.layout.height == 300 and tuple(fig.layout.colorway) == viz.PALETTE


def test_timeit_validates():
    from npukit import measure

    with pytest.raises(TypeError, match="fn must be callable"):
        measure.timeit(3)
    with pytest.raises(ValueError, match="repeat and number"):
        measure.timeit(lambda: None, repeat=0)


def test_table_rejects_ragged_rows():
    from npukit import viz

    with pytest.raises(ValueError, match=r"rows\[1\] has 1 cells"):
        viz.table([(1, 2), (3,)], ["a", "b"])


def test_table_escapes_html():
    from npukit import viz

    assert "&lt;b&gt;" in viz.table([("<b>",)], ["x"]).data


def test_plotly_renderer_makes_one_deterministic_figure():
    import plotly.graph_objects as go

    from npukit import sphinxext

    fig = json.loads(go.Figure(go.Bar(y=[1, 2])).to_json())

    class Data:
        mime_type = sphinxext.PLOTLY_MIME
        content = fig

    (node,) = sphinxext.PlotlyMimeRenderer.handle_mime(None, Data, False)
    html = node.astext()
    assert html.count("Plotly.newPlot") == 1 and sphinxext.MARKER_CLASS in html
    assert html == sphinxext.figure_html(json.dumps(fig)), "same figure, same HTML"
    assert sphinxext.PlotlyMimeRenderer.handle_mime(None, Data, True) is None

    class Other:
        mime_type = "text/plain"
        content = "x"

    assert sphinxext.PlotlyMimeRenderer.handle_mime(None, Other, False) is None


def test_dedupe_scripts_treats_none_and_empty_filename_alike():
    from sphinx.builders.html._assets import _JavaScript

    from npukit import sphinxext

    ctx = {
        "script_files": [
            _JavaScript(None, body="const A = 1"),
            _JavaScript("", body="const A = 1"),
            _JavaScript("_static/x.js"),
        ]
    }
    sphinxext._dedupe_scripts(None, "p", "t", ctx, None)
    assert len(ctx["script_files"]) == 2
