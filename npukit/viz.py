"""One look for the whole book, and honest measurements.

Every figure in the course is a plotly ``graph_objects`` figure passed through
:func:`style`, so colours, fonts and sizes agree from chapter to chapter. The
palette is Okabe–Ito, which stays distinguishable under the common forms of
colour blindness.

Every measured number goes through :func:`timeit` (warm-up, repeats, median)
and says which machine made it (:func:`machine_summary`).

plotly and OpenVINO are imported inside the functions that need them, so
``import npukit.viz`` is cheap.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

__all__ = [
    "PALETTE",
    "style",
    "table",
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


def style(fig: Any, *, height: int = 420, title: str | None = None) -> Any:
    """Apply the book's look to a plotly figure and return it.

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
    TypeError
        If ``fig`` is not a plotly figure.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> fig = style(go.Figure(go.Bar(x=[1, 2], y=[3, 4])), title="demo")
    >>> fig.layout.title.text
    'demo'
    """
    import plotly.graph_objects as go

    if not isinstance(fig, go.Figure):
        raise TypeError(f"fig must be a plotly.graph_objects.Figure, got {type(fig).__name__}")
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


def table(rows: Iterable[Sequence[Any]], header: Sequence[str]) -> Any:
    """Render rows as an HTML table (an ``IPython.display.HTML`` object).

    Numbers are shown as given; format them before passing them in.

    Parameters
    ----------
    rows : iterable of sequences
        One sequence of cells per row, each as long as ``header``.
    header : sequence of str
        Column titles.

    Raises
    ------
    ValueError
        If a row's length differs from the header's.

    Examples
    --------
    >>> html = table([("a", 1)], ["name", "value"])
    >>> "<td>a</td>" in html.data
    True
    """
    from html import escape

    from IPython.display import HTML

    header = list(header)
    body = []
    for i, row in enumerate(rows):
        row = list(row)
        if len(row) != len(header):
            raise ValueError(f"rows[{i}] has {len(row)} cells, header has {len(header)}")
        body.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>")
    head = "<tr>" + "".join(f"<th>{escape(str(h))}</th>" for h in header) + "</tr>"
    return HTML(
        '<table class="npukit-table"><thead>' + head + "</thead><tbody>" + "".join(body) + "</tbody></table>"
    )





def slider_figure(figures: Sequence[Any], labels: Sequence[str], *, prefix: str = "",
                  height: int = 420) -> Any:
    """Join several figures into one whose slider picks which is shown.

    This is how a lab's live control appears in the static book: the lab
    recomputes its figure whenever a widget moves; the book pre-computes the
    figure at each of a few control values and lets a plotly slider switch
    between them, in the browser, with no kernel and no network.

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
        If ``figures`` holds a non-figure, is empty, or ``labels`` has another length.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> figs = [go.Figure(go.Bar(x=["a"], y=[k]), layout_title_text=f"k = {k}") for k in (1, 2, 3)]
    >>> fig = slider_figure(figs, ["1", "2", "3"], prefix="k: ")
    >>> len(fig.data), [t.visible for t in fig.data], len(fig.layout.sliders[0].steps)
    (3, [True, False, False], 3)
    """
    import plotly.graph_objects as go

    figures = _check_sequence(figures, "figures")
    labels = [str(x) for x in _check_sequence(labels, "labels")]
    if not figures:
        raise ValueError("figures must hold at least one figure")
    if len(labels) != len(figures):
        raise ValueError(f"labels must have one label per figure ({len(figures)}), got {len(labels)}")
    for i, f in enumerate(figures):
        if not isinstance(f, go.Figure):
            raise TypeError(f"figures[{i}] must be a plotly.graph_objects.Figure, got {type(f).__name__}")
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


def _check_sequence(x: Any, name: str) -> list:
    if isinstance(x, (str, bytes)) or not isinstance(x, (list, tuple)):
        raise TypeError(f"{name} must be a list or tuple, got {type(x).__name__}")
    return list(x)
