"""Figures of chapter 1, "Tensors are memory" (chapters/01_tensors.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; the ideas they draw live in :mod:`npukit.tensors`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import numpy as np

from .. import _check
from ..viz import PALETTE, style
from ..tensors import element_offsets

if TYPE_CHECKING:
    import plotly.graph_objects as go


__all__ = [
    "default_views",
    "memory_map_figure",
    "alignment_figure",
]


def default_views(x: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The views the memory-map figure shows by default.

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


def memory_map_figure(
    views: Mapping[str, np.ndarray] | None = None,
    *,
    base: np.ndarray | None = None,
    height: int = 480,
) -> "go.Figure":
    """Draw where every element of a small tensor lives, for several views of it.

    Top panel: the view's elements in their logical positions (row, column),
    each labelled and coloured by its byte offset from the start of the
    buffer. Bottom panel: the buffer itself, one cell per element-sized slot,
    labelled with the index of the element that lives there (blank slots are
    bytes the view skips). Buttons switch between views; all views are
    precomputed, so the figure works in a static web page without a kernel.
    Views that do not share memory with ``base`` (copies) are drawn against
    their own new buffer.

    Parameters
    ----------
    views : mapping of str to numpy.ndarray, optional
        ``{label: array}``; arrays with more than 2 axes are drawn with their
        leading axes flattened into rows. Default: :func:`default_views`.
    base : numpy.ndarray, optional
        The buffer offsets are measured from. Default: the first view.
    height : int
        Figure height in pixels.

    Returns
    -------
    plotly.graph_objects.Figure
        Two traces per view (grid and buffer heatmaps) and one button per view.

    Raises
    ------
    TypeError
        If ``views`` is not a mapping of arrays, or ``base`` is not an array.
    ValueError
        If ``views`` is empty, a view has more than 64 elements, the buffer
        has more than 128 slots, or a view reaches outside ``base``.

    Examples
    --------
    >>> fig = memory_map_figure()
    >>> len(fig.data), len(fig.layout.updatemenus[0].buttons)
    (12, 6)
    >>> fig.layout.updatemenus[0].buttons[1].label
    'x.T'
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots


    if views is None:
        views = default_views()
    if not isinstance(views, Mapping):
        raise TypeError(f"views must be a mapping of label -> numpy.ndarray, got {type(views).__name__}")
    if not views:
        raise ValueError("views must hold at least one array")
    for label, v in views.items():
        _check.as_array(v, f"views[{label!r}]")
        if v.size > 64:
            raise ValueError(f"views[{label!r}] has {v.size} elements; at most 64 can be drawn legibly")
    if base is None:
        base = next(iter(views.values()))
    _check.as_array(base, "base")

    panels = []
    for label, v in views.items():
        shared = bool(np.shares_memory(v, base)) or v is base
        ref = base if shared else v
        off = element_offsets(v, relative_to=ref)
        slot = v.itemsize
        buf_bytes = max(ref.nbytes, int(off.max()) + slot if off.size else 0)
        if off.size and (off.min() < 0 or (shared and off.max() + slot > base.nbytes)):
            raise ValueError(f"views[{label!r}] reaches outside base's {base.nbytes} bytes")
        n_slots = -(-buf_bytes // slot)
        if n_slots > 128:
            raise ValueError(f"the buffer behind views[{label!r}] has {n_slots} slots; at most 128 can be drawn")
        panels.append((label, v, shared, off, slot, n_slots))
    cmax = max(p[4] * max(p[5] - 1, 1) for p in panels)

    fig = make_subplots(rows=2, cols=1, row_heights=[0.7, 0.3], vertical_spacing=0.14)
    titles = []
    for label, v, shared, off, slot, n_slots in panels:
        grid = _as_grid(off)
        idx = [str(t) for t in np.ndindex(*v.shape)] if v.ndim else ["()"]
        idx_grid = np.array(idx, dtype=object).reshape(grid.shape)
        fig.add_trace(
            go.Heatmap(
                z=grid,
                text=grid.astype(str),
                texttemplate="%{text}",
                customdata=np.stack([idx_grid, _as_grid(v).astype(object) if v.size else idx_grid], axis=-1),
                hovertemplate="element %{customdata[0]} = %{customdata[1]}<br>byte offset %{z}<extra></extra>",
                coloraxis="coloraxis",
                xgap=2,
                ygap=2,
                visible=False,
                name=label,
            ),
            row=1,
            col=1,
        )
        z = np.full((1, n_slots), np.nan)
        text = np.full((1, n_slots), "", dtype=object)
        for i, o in zip(idx, off.ravel()):
            z[0, o // slot] = o
            text[0, o // slot] = i.replace(" ", "")
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=np.arange(n_slots) * slot,
                y=["buffer"],
                text=text,
                texttemplate="%{text}",
                textfont=dict(size=10),
                hovertemplate="byte offset %{x}<br>element %{text}<extra></extra>",
                coloraxis="coloraxis",
                xgap=2,
                visible=False,
                name=label,
            ),
            row=2,
            col=1,
        )
        kind = "a view of x's buffer" if shared else "a copy in a new buffer"
        layout = "C-contiguous" if v.flags.c_contiguous else ("F-contiguous" if v.flags.f_contiguous else "not contiguous")
        titles.append(f"<b>{label}</b>: shape {v.shape}, strides {v.strides} B, {layout}, {kind}")

    n = len(panels)
    buttons = []
    for k, (label, *_rest) in enumerate(panels):
        visible = [False] * (2 * n)
        visible[2 * k] = visible[2 * k + 1] = True
        buttons.append(dict(label=label, method="update", args=[{"visible": visible}, {"title.text": titles[k]}]))
    fig.data[0].visible = True
    fig.data[1].visible = True
    fig.update_layout(
        coloraxis=dict(
            colorscale=[[0.0, "#FFFFFF"], [0.5, PALETTE[5]], [1.0, PALETTE[0]]],
            cmin=0,
            cmax=cmax,
            colorbar=dict(title=dict(text="byte<br>offset"), len=0.6, y=0.65),
        ),
        updatemenus=[
            dict(
                type="buttons",
                direction="right",
                buttons=buttons,
                x=0.0,
                xanchor="left",
                y=-0.2,
                yanchor="top",
                showactive=True,
                active=0,
                pad=dict(t=4, r=4),
            )
        ],
        plot_bgcolor="#EEEEEE",
    )
    slots = {p[4] for p in panels}
    fig.update_yaxes(autorange="reversed", title_text="row", dtick=1, row=1, col=1)
    fig.update_xaxes(title_text="column (cell text: the element's byte offset)", dtick=1, side="top", row=1, col=1)
    fig.update_xaxes(
        title_text="the buffer: byte offset of each slot (cell text: the element stored there)",
        dtick=slots.pop() if len(slots) == 1 else None,
        row=2,
        col=1,
    )
    fig.update_yaxes(showticklabels=False, row=2, col=1)
    style(fig, height=height, title=titles[0])
    fig.update_layout(margin=dict(b=120, t=110), title=dict(y=0.97, yanchor="top"))
    return fig


def alignment_figure(censuses: Mapping[str, Mapping[int, int]], *, height: int = 380) -> "go.Figure":
    """Bar chart: the share of allocations at each alignment, one colour per census.

    Parameters
    ----------
    censuses : mapping of str to mapping of int to int
        ``{label: alignment_census(...)}``.
    height : int
        Figure height in pixels.

    Returns
    -------
    plotly.graph_objects.Figure
        One bar trace per census.

    Raises
    ------
    TypeError
        If ``censuses`` is not a mapping of mappings.
    ValueError
        If ``censuses`` is empty or a census counts nothing.

    Examples
    --------
    >>> fig = alignment_figure({"demo": {16: 3, 32: 1}})
    >>> len(fig.data), list(fig.data[0].y)
    (1, [0.75, 0.25])
    """
    import plotly.graph_objects as go


    if not isinstance(censuses, Mapping) or not all(isinstance(c, Mapping) for c in censuses.values()):
        raise TypeError("censuses must be a mapping of label -> {alignment: count}")
    if not censuses:
        raise ValueError("censuses must hold at least one census")
    keys = sorted({k for c in censuses.values() for k, v in c.items() if v})
    fig = go.Figure()
    for i, (label, c) in enumerate(censuses.items()):
        total = sum(c.values())
        if total <= 0:
            raise ValueError(f"censuses[{label!r}] counts no allocations")
        fig.add_trace(
            go.Bar(
                x=[str(k) for k in keys],
                y=[c.get(k, 0) / total for k in keys],
                name=label,
                marker_color=PALETTE[i % len(PALETTE)],
                hovertemplate="aligned to exactly %{x} B: %{y:.1%}<extra>" + label + "</extra>",
            )
        )
    fig.update_layout(barmode="group", bargap=0.2)
    fig.update_xaxes(title_text="largest power of two dividing the address (bytes)", type="category")
    fig.update_yaxes(title_text="share of allocations", tickformat=".0%")
    return style(fig, height=height)
