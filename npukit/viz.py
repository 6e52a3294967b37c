"""The book's one look: figure style, colour palette, HTML tables, static sliders.

The invariant this module keeps: **every figure and table looks the same in
every chapter.** Every figure is a plotly ``graph_objects`` figure passed
through :func:`style` (fonts, margins, the Okabe–Ito :data:`PALETTE`, which
stays distinguishable under the common forms of colour blindness); every
table is :func:`table`; a lab's live control appears in the static book as
:func:`slider_figure`. This module only draws: timing, machine and device
reports are in :mod:`npukit.measure`.

Used by every chapter's figures (:mod:`npukit.figures`) and tables: chapter 0,
"Meet CameraNet" (chapters/00_cameranet.md), chapter 1, "Tensors are memory"
(chapters/01_tensors.md), chapter 2, "Layouts" (chapters/02_layouts.md),
chapter 3, "Graphs and the roofline" (chapters/03_graphs.md) and chapter 4,
"GEMM and tiling" (chapters/04_gemm.md).

plotly and IPython are imported inside the functions that need them, so
``import npukit.viz`` is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

from . import _check

if TYPE_CHECKING:
    import plotly.graph_objects as go
    from IPython.display import HTML

__all__ = [
    "PALETTE",
    "style",
    "table",
    "slider_figure",
]

#: Okabe & Ito (2008) colour-blind-safe palette, without black.
PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#999999",  # grey
)

FONT = "Inter, 'Helvetica Neue', Arial, sans-serif"


def style(fig: go.Figure, *, height: int = 420, title: str | None = None) -> go.Figure:
    """Apply the book's look to a plotly figure and return it.

    Every figure of every chapter goes through it, from chapter 0, "Meet
    CameraNet" (chapters/00_cameranet.md) on.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure to style (changed in place).
    height : int
        Height in pixels; the width follows the page.
    title : str, optional
        A title to set.

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig`` itself, so calls can be chained.

    Raises
    ------
    TypeError, ValueError
        If ``fig`` is not a plotly figure, ``height`` not a positive integer
        or ``title`` not a string.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> fig = style(go.Figure(go.Bar(x=[1, 2], y=[3, 4])), title="demo")
    >>> fig.layout.title.text
    'demo'
    """
    import plotly.graph_objects as go

    _check.instance(fig, "fig", go.Figure, "plotly.graph_objects.Figure")
    height = _check.integer(height, "height", minimum=1)
    title = _check.text(title, "title", optional=True)
    fig.update_layout(
        template="plotly_white",
        colorway=list(PALETTE),
        font=dict(family=FONT, size=14, color="#222"),
        height=height,
        margin=dict(l=60, r=20, t=60 if (title or fig.layout.title.text) else 30, b=50),
        hoverlabel=dict(font=dict(family=FONT)),
        legend=dict(bgcolor="rgba(255,255,255,0.7)"),
    )
    if title is not None:
        fig.update_layout(title=dict(text=title, x=0.0, xanchor="left"))
    return fig


def table(rows: Iterable[Sequence[Any]], header: Sequence[str]) -> HTML:
    """Render rows as an HTML table (an ``IPython.display.HTML`` object).

    Numbers are shown as given; format them before passing them in. Cells are
    HTML-escaped. Every chapter's tables use it, from chapter 0, "Meet
    CameraNet" (chapters/00_cameranet.md) on.

    Parameters
    ----------
    rows : iterable of sequences
        One list or tuple of cells per row, each as long as ``header``.
    header : sequence of str
        Column titles (a list or tuple, at least one).

    Returns
    -------
    IPython.display.HTML

    Raises
    ------
    TypeError, ValueError
        If ``header`` or a row is not a list or tuple (a string would be
        split into characters), ``rows`` is not iterable, or a row's length
        differs from the header's.

    Examples
    --------
    >>> html = table([("a", 1)], ["name", "value"])
    >>> "<td>a</td>" in html.data
    True
    """
    from html import escape

    from IPython.display import HTML

    header = _check.sequence(header, "header", min_length=1)
    if isinstance(rows, (str, bytes)) or not hasattr(rows, "__iter__"):
        raise TypeError(f"rows must be an iterable of rows, got {type(rows).__name__}")
    body = []
    for i, row in enumerate(rows):
        row = _check.sequence(row, f"rows[{i}]")
        if len(row) != len(header):
            raise ValueError(f"rows[{i}] has {len(row)} cells, header has {len(header)}")
        body.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>")
    head = "<tr>" + "".join(f"<th>{escape(str(h))}</th>" for h in header) + "</tr>"
    return HTML(
        '<table class="npukit-table"><thead>' + head + "</thead><tbody>" + "".join(body) + "</tbody></table>"
    )


def slider_figure(figures: Sequence[go.Figure], labels: Sequence[str], *, prefix: str = "",
                  height: int = 420) -> go.Figure:
    """Join several figures into one whose slider picks which is shown.

    This is how a lab's live control appears in the static book: the lab
    recomputes its figure whenever a widget moves; the book pre-computes the
    figure at each of a few control values and lets a plotly slider switch
    between them, in the browser, with no kernel and no network (the labs'
    live controls; see the instructor guide, chapters/instructor.md).

    All figures' traces are added to one figure and each slider step makes
    one figure's traces visible and applies its title, annotations and
    shapes. The first figure's layout (axes, subplots) is the base, so the
    figures should share their axes' structure.

    Parameters
    ----------
    figures : sequence of plotly.graph_objects.Figure
        One figure per control value.
    labels : sequence of str
        The slider's label for each figure.
    prefix : str
        Shown before the current label (e.g. ``"tile: "``).
    height : int
        Height in pixels.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``figures`` holds a non-figure, is empty, or ``labels`` has another
        length; if ``prefix`` is not a string or ``height`` not a positive integer.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> figs = [go.Figure(go.Bar(x=["a"], y=[k]), layout_title_text=f"k = {k}") for k in (1, 2, 3)]
    >>> fig = slider_figure(figs, ["1", "2", "3"], prefix="k: ")
    >>> len(fig.data), [t.visible for t in fig.data], len(fig.layout.sliders[0].steps)
    (3, [True, False, False], 3)
    """
    import plotly.graph_objects as go

    figures = _check.sequence(figures, "figures", min_length=1)
    labels = [str(x) for x in _check.sequence(labels, "labels")]
    if len(labels) != len(figures):
        raise ValueError(f"labels must have one label per figure ({len(figures)}), got {len(labels)}")
    for i, f in enumerate(figures):
        _check.instance(f, f"figures[{i}]", go.Figure, "plotly.graph_objects.Figure")
    prefix = _check.text(prefix, "prefix")
    height = _check.integer(height, "height", minimum=1)
    out = go.Figure(layout=figures[0].layout)
    owner = []
    for i, f in enumerate(figures):
        for trace in f.data:
            out.add_trace(trace)
            owner.append(i)
    steps = []
    for i, (f, label) in enumerate(zip(figures, labels)):
        visible = [o == i for o in owner]
        changes = {"title.text": f.layout.title.text, "annotations": list(f.layout.annotations or ()),
                   "shapes": list(f.layout.shapes or ())}
        steps.append({"method": "update", "label": label, "args": [{"visible": visible}, changes]})
    for trace, o in zip(out.data, owner):
        trace.visible = o == 0
    style(out, height=height)
    out.update_layout(sliders=[{"active": 0, "currentvalue": {"prefix": prefix}, "pad": {"t": 40},
                                "steps": steps}])
    return out
