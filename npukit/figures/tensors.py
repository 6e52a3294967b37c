"""Figures of chapter 1, "Tensors are memory" (chapters/01_tensors.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; the ideas they draw live in :mod:`npukit.tensors`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Mapping

import numpy as np

from .. import _check
from ..tensors import element_offsets
from ..viz import PALETTE, style

if TYPE_CHECKING:
    import plotly.graph_objects as go


__all__ = [
    "default_views",
    "memory_map_figure",
    "alignment_figure",
    "views_slider_figure",
]


def default_views(x: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The views the memory-map figure shows by default.

    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Parameters
    ----------
    x : numpy.ndarray, optional
        A 2-D array; by default ``np.arange(12, dtype=np.float32).reshape(3, 4)``.

    Returns
    -------
    dict
        ``{label: array}``: the original, its transpose, two slices, a reshape
        (all views) and a contiguous copy of the transpose.

    Raises
    ------
    TypeError
        If ``x`` is not a NumPy array.
    ValueError
        If ``x`` is not 2-D with at least 2 rows and 3 columns.

    Examples
    --------
    >>> v = default_views()
    >>> list(v)[:2]
    ['x', 'x.T']
    >>> [bool(np.shares_memory(a, v['x'])) for a in v.values()]
    [True, True, True, True, True, False]
    """
    if x is None:
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
    _check.as_array(x, "x")
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 3:
        raise ValueError(f"x must be 2-D with at least 2 rows and 3 columns, got shape {x.shape}")
    rows, cols = x.shape
    return {
        "x": x,
        "x.T": x.T,
        "x[:, ::2]": x[:, ::2],
        "x[1:, 1:3]": x[1:, 1:3],
        f"x.reshape({cols}, {rows})": x.reshape(cols, rows),
        "np.ascontiguousarray(x.T)": np.ascontiguousarray(x.T),
    }


def _as_grid(off: np.ndarray) -> np.ndarray:
    if off.ndim == 0:
        return off.reshape(1, 1)
    if off.ndim == 1:
        return off.reshape(1, -1)
    return off.reshape(-1, off.shape[-1])


@dataclasses.dataclass
class _Panel:
    """One view of the memory map: its element offsets and the buffer slots behind it."""

    label: str
    view: np.ndarray
    shared: bool  # a view of base's buffer (else a copy, drawn against its own buffer)
    offsets: np.ndarray
    slot: int  # bytes per slot: the view's itemsize
    n_slots: int

    @property
    def title(self) -> str:
        v = self.view
        layout = "C-contiguous" if v.flags.c_contiguous else ("F-contiguous" if v.flags.f_contiguous else "not contiguous")
        kind = "a view of x's buffer" if self.shared else "a copy in a new buffer"
        return f"<b>{self.label}</b>: shape {v.shape}, strides {v.strides} B, {layout}, {kind}"


def _panels(views: Mapping[str, np.ndarray] | None, base: np.ndarray | None) -> list[_Panel]:
    """Check the figure's arguments and compute what each view's two heatmaps show."""
    views = default_views() if views is None else views
    if not isinstance(views, Mapping):
        raise TypeError(f"views must be a mapping of label -> numpy.ndarray, got {type(views).__name__}")
    if not views:
        raise ValueError("views must hold at least one array")
    for label, v in views.items():
        _check.text(label, "each label in views")
        _check.as_array(v, f"views[{label!r}]")
        if v.size > 64:
            raise ValueError(f"views[{label!r}] has {v.size} elements; at most 64 can be drawn legibly")
    base = next(iter(views.values())) if base is None else _check.as_array(base, "base")
    panels = []
    for label, v in views.items():
        shared = bool(np.shares_memory(v, base)) or v is base
        ref = base if shared else v
        off = element_offsets(v, relative_to=ref)
        slot = v.itemsize
        if off.size and (off.min() < 0 or (shared and off.max() + slot > base.nbytes)):
            raise ValueError(f"views[{label!r}] reaches outside base's {base.nbytes} bytes")
        n_slots = -(-max(ref.nbytes, int(off.max()) + slot if off.size else 0) // slot)
        if n_slots > 128:
            raise ValueError(f"the buffer behind views[{label!r}] has {n_slots} slots; at most 128 can be drawn")
        panels.append(_Panel(label, v, shared, off, slot, n_slots))
    if not any(p.shared for p in panels):
        raise ValueError("base must share memory with at least one of views (else every view would be drawn as a copy)")
    return panels


def _grid_trace(p: _Panel) -> go.Heatmap:
    """The view's elements at their logical positions, labelled with their byte offsets."""
    import plotly.graph_objects as go

    grid = _as_grid(p.offsets)
    idx = [str(t) for t in np.ndindex(*p.view.shape)] if p.view.ndim else ["()"]
    idx_grid = np.array(idx, dtype=object).reshape(grid.shape)
    values = _as_grid(p.view).astype(object) if p.view.size else idx_grid
    return go.Heatmap(z=grid, text=grid.astype(str), texttemplate="%{text}",
                      customdata=np.stack([idx_grid, values], axis=-1),
                      hovertemplate="element %{customdata[0]} = %{customdata[1]}<br>byte offset %{z}<extra></extra>",
                      coloraxis="coloraxis", xgap=2, ygap=2, visible=False, name=p.label)


def _buffer_trace(p: _Panel) -> go.Heatmap:
    """The buffer, one cell per slot, labelled with the index of the element stored there."""
    import plotly.graph_objects as go

    z = np.full((1, p.n_slots), np.nan)
    text = np.full((1, p.n_slots), "", dtype=object)
    idx = [str(t) for t in np.ndindex(*p.view.shape)] if p.view.ndim else ["()"]
    for i, o in zip(idx, p.offsets.ravel()):
        z[0, o // p.slot] = o
        text[0, o // p.slot] = i.replace(" ", "")
    return go.Heatmap(z=z, x=np.arange(p.n_slots) * p.slot, y=["buffer"], text=text, texttemplate="%{text}",
                      textfont=dict(size=10), hovertemplate="byte offset %{x}<br>element %{text}<extra></extra>",
                      coloraxis="coloraxis", xgap=2, visible=False, name=p.label)


def memory_map_figure(views: Mapping[str, np.ndarray] | None = None, *, base: np.ndarray | None = None,
                      height: int = 480) -> go.Figure:
    """Draw where every element of a small tensor lives, for several views of it.

    Top panel: the view's elements in their logical positions (row, column),
    each labelled and coloured by its byte offset from the start of the
    buffer. Bottom panel: the buffer itself, one cell per element-sized slot,
    labelled with the index of the element that lives there (blank slots are
    bytes the view skips). Buttons switch between views; all views are
    precomputed, so the figure works in a static web page without a kernel.
    Views that do not share memory with ``base`` (copies) are drawn against
    their own new buffer. See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Parameters
    ----------
    views : mapping of str to numpy.ndarray, optional
        ``{label: array}``; arrays with more than 2 axes are drawn with their
        leading axes flattened into rows. Default: :func:`default_views`.
    base : numpy.ndarray, optional
        The buffer offsets are measured from; it must share memory with at
        least one view. Default: the first view.
    height : int
        Figure height in pixels (≥ 100).

    Returns
    -------
    plotly.graph_objects.Figure
        Two traces per view (grid and buffer heatmaps) and one button per view.

    Raises
    ------
    TypeError
        If ``views`` is not a mapping of str to arrays, ``base`` is not an
        array, or ``height`` not an integer.
    ValueError
        If ``views`` is empty, a view has more than 64 elements, the buffer
        has more than 128 slots, a view reaches outside ``base``, ``base``
        shares memory with no view, or ``height`` < 100.

    Examples
    --------
    >>> fig = memory_map_figure()
    >>> len(fig.data), len(fig.layout.updatemenus[0].buttons)
    (12, 6)
    >>> fig.layout.updatemenus[0].buttons[1].label
    'x.T'
    """
    from plotly.subplots import make_subplots

    height = _check.integer(height, "height", minimum=100)
    panels = _panels(views, base)
    fig = make_subplots(rows=2, cols=1, row_heights=[0.7, 0.3], vertical_spacing=0.14)
    buttons = []
    for k, p in enumerate(panels):
        fig.add_trace(_grid_trace(p), row=1, col=1)
        fig.add_trace(_buffer_trace(p), row=2, col=1)
        visible = [i // 2 == k for i in range(2 * len(panels))]
        buttons.append(dict(label=p.label, method="update", args=[{"visible": visible}, {"title.text": p.title}]))
    fig.data[0].visible = fig.data[1].visible = True
    fig.update_layout(
        coloraxis=dict(colorscale=[[0.0, "#FFFFFF"], [0.5, PALETTE[5]], [1.0, PALETTE[0]]], cmin=0,
                       cmax=max(p.slot * max(p.n_slots - 1, 1) for p in panels),
                       colorbar=dict(title=dict(text="byte<br>offset"), len=0.6, y=0.65)),
        updatemenus=[dict(type="buttons", direction="right", buttons=buttons, x=0.0, xanchor="left", y=-0.2,
                          yanchor="top", showactive=True, active=0, pad=dict(t=4, r=4))],
        plot_bgcolor="#EEEEEE",
    )
    slots = {p.slot for p in panels}
    fig.update_yaxes(autorange="reversed", title_text="row", dtick=1, row=1, col=1)
    fig.update_xaxes(title_text="column (cell text: the element's byte offset)", dtick=1, side="top", row=1, col=1)
    fig.update_xaxes(title_text="the buffer: byte offset of each slot (cell text: the element stored there)",
                     dtick=slots.pop() if len(slots) == 1 else None, row=2, col=1)
    fig.update_yaxes(showticklabels=False, row=2, col=1)
    style(fig, height=height, title=panels[0].title)
    fig.update_layout(margin=dict(b=120, t=110), title=dict(y=0.97, yanchor="top"))
    return fig


def _census_shares(censuses: Mapping[str, Mapping[int, int]]) -> dict[str, dict[int, float]]:
    """Each census as ``{alignment: share of allocations}``, after checking it."""
    if not isinstance(censuses, Mapping):
        raise TypeError(f"censuses must be a mapping of label -> {{alignment: count}}, got {type(censuses).__name__}")
    if not censuses:
        raise ValueError("censuses must hold at least one census")
    shares = {}
    for label, c in censuses.items():
        name = f"censuses[{label!r}]"
        _check.text(label, "each label in censuses")
        if not isinstance(c, Mapping):
            raise TypeError(f"censuses must be a mapping of label -> {{alignment: count}}; {name} is a {type(c).__name__}")
        counts = {_check.power_of_two(k, f"an alignment in {name}"): _check.integer(v, f"{name}[{k}]", minimum=0)
                  for k, v in c.items()}
        total = sum(counts.values())
        if total <= 0:
            raise ValueError(f"{name} counts no allocations")
        shares[label] = {k: v / total for k, v in counts.items()}
    return shares


def alignment_figure(censuses: Mapping[str, Mapping[int, int]], *, height: int = 380) -> go.Figure:
    """Bar chart: the share of allocations at each alignment, one colour per census.

    See chapter 1, "Tensors are memory" (chapters/01_tensors.md).

    Parameters
    ----------
    censuses : mapping of str to mapping of int to int
        ``{label: alignment_census(...)}``: counts (≥ 0) by alignment (a power of two).
    height : int
        Figure height in pixels (≥ 100).

    Returns
    -------
    plotly.graph_objects.Figure
        One bar trace per census.

    Raises
    ------
    TypeError
        If ``censuses`` is not a mapping of str to mappings of integers, or
        ``height`` not an integer.
    ValueError
        If ``censuses`` is empty, a census counts nothing, an alignment is not
        a power of two, a count is negative, or ``height`` < 100.

    Examples
    --------
    >>> fig = alignment_figure({"demo": {16: 3, 32: 1}})
    >>> len(fig.data), list(fig.data[0].y)
    (1, [0.75, 0.25])
    """
    import plotly.graph_objects as go

    height = _check.integer(height, "height", minimum=100)
    shares = _census_shares(censuses)
    keys = sorted({k for c in censuses.values() for k, v in c.items() if v})
    fig = go.Figure()
    for i, (label, share) in enumerate(shares.items()):
        fig.add_trace(go.Bar(x=[str(k) for k in keys], y=[share.get(k, 0) for k in keys], name=label,
                             marker_color=PALETTE[i % len(PALETTE)],
                             hovertemplate="aligned to exactly %{x} B: %{y:.1%}<extra>" + label + "</extra>"))
    fig.update_layout(barmode="group", bargap=0.2)
    fig.update_xaxes(title_text="largest power of two dividing the address (bytes)", type="category")
    fig.update_yaxes(title_text="share of allocations", tickformat=".0%")
    return style(fig, height=height)


def views_slider_figure(cases: Mapping[str, tuple[np.ndarray, np.ndarray]], *, prefix: str = "",
                        height: int = 480) -> go.Figure:
    """The memory map of several (view, base) pairs under one slider: a live control's static equivalent.

    Lab 1's live control redraws :func:`memory_map_figure` for the shape,
    dtype, order and operation a learner picks; a static page cannot run
    Python, so this figure precomputes one memory map per case and lets a
    plotly slider switch between them (with each case's own colour range).
    See chapter 1, "Tensors are memory" (chapters/01_tensors.md), and
    :func:`npukit.viz.slider_figure`.

    Parameters
    ----------
    cases : mapping of str to (numpy.ndarray, numpy.ndarray)
        ``{label: (array, base)}``, each drawable by :func:`memory_map_figure`
        with ``base``; an array that is a copy is drawn in a buffer of its own.
    prefix : str
        Shown before the slider's current label.
    height : int
        Figure height in pixels (≥ 100).

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``cases`` is not a non-empty mapping of labels to pairs of arrays,
        or a pair cannot be drawn (see :func:`memory_map_figure`).

    Examples
    --------
    >>> x = np.arange(12, dtype=np.int16).reshape(3, 4)
    >>> fig = views_slider_figure({"x": (x, x), "x.T": (x.T, x)}, prefix="view: ")
    >>> len(fig.data), [s.label for s in fig.layout.sliders[0].steps]
    (4, ['x', 'x.T'])
    """
    import plotly.graph_objects as go

    from .. import viz

    if not isinstance(cases, Mapping) or not cases:
        raise TypeError(f"cases must be a non-empty mapping of label -> (view, base), got {type(cases).__name__}")
    figs, labels = [], []
    for label, pair in cases.items():
        _check.text(label, "each label in cases")
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"cases[{label!r}] must be a pair (view, base), got {type(pair).__name__}")
        both = memory_map_figure({"base": pair[1], label: pair[0]}, base=pair[1], height=height)
        only = go.Figure(data=list(both.data[2:4]), layout=both.layout)   # the view's grid and buffer
        for trace in only.data:
            trace.visible = True
        only.update_layout(title_text=both.layout.updatemenus[0].buttons[1].args[1]["title.text"])
        only.layout.updatemenus = ()
        figs.append(only)
        labels.append(label)
    fig = viz.slider_figure(figs, labels, prefix=prefix, height=height)
    for step, f in zip(fig.layout.sliders[0].steps, figs):
        step.args[1]["coloraxis.cmax"] = f.layout.coloraxis.cmax
    fig.layout.updatemenus = ()
    fig.update_layout(margin=dict(b=90, t=110))
    return fig
