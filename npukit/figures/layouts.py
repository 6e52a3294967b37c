"""Figures of chapter 2, "Layouts" (chapters/02_layouts.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; the ideas they draw live in :mod:`npukit.layouts`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import _check, viz
from ..layouts import Conversion, onednn_tag, round_up


__all__ = [
    "element_order_figure",
    "bandwidth_figure",
    "padding_figure",
]


def _element_orders(channels: int, height: int, width: int, block: int):
    """For each layout, the memory offset of every (c, h, w) and the slot count."""
    c, h, w = np.meshgrid(np.arange(channels), np.arange(height), np.arange(width), indexing="ij")
    cp = round_up(channels, block)
    return {
        "NCHW": ((c * height + h) * width + w, channels * height * width),
        "NHWC": ((h * width + w) * channels + c, channels * height * width),
        f"nChw{block}c": ((((c // block) * height + h) * width + w) * block + c % block, cp * height * width),
    }


def element_order_figure(channels: int = 6, height: int = 3, width: int = 3, block: int = 4, row: int = 16) -> Any:
    """Interactive figure: one tensor's elements and where each lands in memory.

    Top: the logical tensor, one ``height × width`` grid per channel, coloured
    by channel; each cell shows its memory offset. Bottom: memory, ``row``
    elements per line (16 float32 = one 64-byte cache line), each slot coloured
    by the channel stored there; grey slots are the blocked layout's padding.
    Buttons switch the layout (NCHW, NHWC, nChw{block}c); the slider walks
    through memory address by address and marks the element stored there in
    both views. Works in a static page (no kernel needed).

    Parameters
    ----------
    channels, height, width : int
        The tensor (batch 1). Small values keep the picture readable.
    block : int
        Channel block of the blocked layout.
    row : int
        Memory slots drawn per line.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If a size is not a positive integer or the tensor has more than 256 slots.

    Examples
    --------
    >>> fig = element_order_figure()
    >>> [b.label for b in fig.layout.updatemenus[0].buttons]
    ['NCHW', 'NHWC', 'nChw4c']
    >>> len(fig.layout.sliders[0].steps)      # 6 channels padded to 8, 3×3 pixels
    72
    """
    import plotly.graph_objects as go


    channels = _check.integer(channels, "channels", minimum=1)
    height = _check.integer(height, "height", minimum=1)
    width = _check.integer(width, "width", minimum=1)
    block = _check.integer(block, "block", minimum=1)
    row = _check.integer(row, "row", minimum=1)
    orders = _element_orders(channels, height, width, block)
    slots = max(n for _, n in orders.values())
    if slots > 256:
        raise ValueError(f"the tensor needs {slots} memory slots; keep it at most 256 so the figure stays readable")
    gap = width + 1
    c, h, w = np.meshgrid(np.arange(channels), np.arange(height), np.arange(width), indexing="ij")
    lx, ly = (c * gap + w).ravel(), (-h).ravel()  # logical view: channel planes side by side
    y0 = -(height + 1)  # first memory line
    # One colour per channel, grey (value -1) for padding: a stepwise colour scale.
    cats = [viz.PALETTE[7]] + [viz.PALETTE[i % 7] for i in range(channels)]
    scale = [[f, col] for i, col in enumerate(cats) for f in (i / len(cats), (i + 1) / len(cats))]
    cell = dict(colorscale=scale, zmin=-1, zmax=max(channels - 1, 0), showscale=False, xgap=3, ygap=3,
                texttemplate="%{text}", textfont=dict(size=11, color="white"), hoverinfo="text")

    def mem_xy(k):
        return k % row, y0 - k // row

    def box(x, y, start=0.5):  # a closed square around cell (x, y), from its left corner at y + start
        return [x - 0.5, x - 0.5, x + 0.5, x + 0.5, x - 0.5], [y + start, y - start, y - start, y + start, y + start]

    lw = channels * gap - 1
    fig = go.Figure()
    names = list(orders)
    labels = [f"c{ci} h{hi} w{wi}" for ci, hi, wi in zip(c.ravel(), h.ravel(), w.ravel())]
    for li, (name, (offset, nslots)) in enumerate(orders.items()):
        off, visible = offset.ravel(), li == 0
        z = np.full((height, lw), np.nan)
        text = np.full((height, lw), "", dtype=object)
        hover = np.full((height, lw), "", dtype=object)
        z[-ly, lx], text[-ly, lx] = c.ravel(), [str(o) for o in off]
        hover[-ly, lx] = [f"{lab} → offset {o}" for lab, o in zip(labels, off)]
        fig.add_trace(go.Heatmap(z=z, x=list(range(lw)), y=[-i for i in range(height)], text=text,
                                 hovertext=hover, visible=visible, name=name, **cell))
        inv = np.full(nslots, -1)
        inv[off] = np.arange(off.size)
        lines = -(-nslots // row)
        z = np.full((lines, row), np.nan)
        text = np.full((lines, row), "", dtype=object)
        hover = np.full((lines, row), "", dtype=object)
        for k, e in enumerate(inv):
            z[k // row, k % row] = c.ravel()[e] if e >= 0 else -1
            text[k // row, k % row] = str(c.ravel()[e]) if e >= 0 else ""
            hover[k // row, k % row] = f"offset {k}: " + (labels[e] if e >= 0 else "padding (zero)")
        fig.add_trace(go.Heatmap(z=z, x=list(range(row)), y=[y0 - i for i in range(lines)], text=text,
                                 hovertext=hover, visible=visible, name=name, **cell))
        fig.add_trace(go.Scatter(  # the highlight, moved by the slider
            x=[None], y=[None], mode="lines", visible=visible, showlegend=False, hoverinfo="skip",
            line=dict(color="black", width=2.5),
        ))
    per = 3
    highlights = [li * per + 2 for li in range(len(names))]
    steps = []
    for k in range(slots):
        xs, ys = [], []
        for name in names:
            offset, nslots = orders[name]
            hit = np.flatnonzero(offset.ravel() == k)
            # One line: around the logical cell (from its bottom-left corner), down to the
            # memory slot and around it (from its top-left corner). Padding: the slot only.
            bx, by = box(*mem_xy(k)) if k < nslots else ([None], [None])
            if k < nslots and hit.size:
                ex, ey = box(lx[hit[0]], ly[hit[0]], start=-0.5)
                bx, by = ex + bx, ey + by
            xs.append(bx), ys.append(by)
        steps.append(dict(method="restyle", label=str(k), args=[{"x": xs, "y": ys}, highlights]))
    strides = {
        "NCHW": (height * width, width, 1),
        "NHWC": (1, width * channels, channels),
    }
    buttons = []
    for li, name in enumerate(names):
        vis = [tli == li for tli in range(len(names)) for _ in range(per)]
        if name in strides:
            s = strides[name]
            note = f"{name} ({onednn_tag(name)}): element strides c={s[0]}, h={s[1]}, w={s[2]}"
        else:
            note = f"{name} ({onednn_tag('NCHW', block)}): channels in blocks of {block}, grey = zero padding"
        buttons.append(dict(label=name, method="update", args=[{"visible": vis}, {"title.text": note}]))
    first = buttons[0]["args"][1]["title.text"]
    for trace, x, y in zip((fig.data[i] for i in highlights), steps[0]["args"][0]["x"], steps[0]["args"][0]["y"]):
        trace.x, trace.y = x, y
    fig.update_layout(
        updatemenus=[dict(type="buttons", direction="right", buttons=buttons, x=0.0, xanchor="left",
                          y=1.0, yanchor="bottom", pad=dict(t=0, b=10), showactive=True)],
        sliders=[dict(steps=steps, active=0, currentvalue=dict(prefix="memory offset (elements): "),
                      pad=dict(t=10), x=0.0, len=1.0)],
        xaxis=dict(visible=False, range=[-0.6, max(row, lw) - 0.4]),
        yaxis=dict(visible=False, scaleanchor="x", scaleratio=1),
    )
    fig.add_annotation(x=-0.5, y=0.6, text="the tensor: one grid per channel; number = memory offset",
                       showarrow=False, xanchor="left", yanchor="bottom", font=dict(size=12))
    fig.add_annotation(x=-0.5, y=y0 + 0.6, text=f"memory, {row} elements per line; number = channel stored there",
                       showarrow=False, xanchor="left", yanchor="bottom", font=dict(size=12))
    nlines = -(-slots // row)
    viz.style(fig, height=int(190 + 36 * (height + nlines + 2)), title=first)
    fig.update_layout(margin=dict(t=110, b=10), title=dict(y=0.985, yref="container", yanchor="top",
                                                           font=dict(size=15)))
    return fig


def bandwidth_figure(results: Sequence[Conversion], title: str | None = None) -> Any:
    """Bar chart: copy vs conversion bandwidth for each measured tensor.

    Parameters
    ----------
    results : sequence of Conversion
        From :func:`measure_conversion`.
    title : str, optional
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If an item is not a :class:`Conversion`.
    ValueError
        If ``results`` is empty.

    Examples
    --------
    >>> c = Conversion((1, 3, 32, 32), "NCHW", "NHWC", "float32", 12288, 4e-6, 1e-6, 1e-7)
    >>> [t.name for t in bandwidth_figure([c]).data]
    ['plain copy', 'layout conversion']
    """
    import plotly.graph_objects as go


    results = list(results)
    if not results:
        raise ValueError("results must hold at least one Conversion")
    for i, r in enumerate(results):
        if not isinstance(r, Conversion):
            raise TypeError(f"results[{i}] must be a Conversion, got {type(r).__name__}")
    labels = [r.label for r in results]
    fig = go.Figure([
        go.Bar(name="plain copy", y=labels, x=[r.copy_gbps for r in results], orientation="h",
               marker_color=viz.PALETTE[0], hovertemplate="%{y}<br>copy: %{x:.1f} GB/s<extra></extra>"),
        go.Bar(name="layout conversion", y=labels, x=[r.convert_gbps for r in results], orientation="h",
               marker_color=viz.PALETTE[3], text=[f"{r.slowdown:.1f}× the copy's time" for r in results],
               textposition="outside", textfont=dict(size=12),
               hovertemplate="%{y}<br>conversion: %{x:.1f} GB/s<extra></extra>"),
    ])
    top = max(max(r.copy_gbps, r.convert_gbps) for r in results)
    fig.update_layout(barmode="group", xaxis=dict(title="GB/s (bytes read + written)", range=[0, 1.1 * top]),
                      yaxis=dict(autorange="reversed"), bargap=0.25,
                      legend=dict(orientation="h", x=0.0, y=1.0, yanchor="bottom"))
    return viz.style(fig, height=120 + 62 * len(results), title=title)


def padding_figure(channels: Sequence[int] = tuple(range(1, 65)), multiples: Sequence[int] = (8, 16, 32)) -> Any:
    """Line chart: fraction of a tensor that is padding, by channel count.

    Parameters
    ----------
    channels : sequence of int
        Channel counts on the x axis (≥ 1).
    multiples : sequence of int
        The multiples to pad to, one line each.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If a channel count or multiple is not a positive integer.

    Examples
    --------
    >>> len(padding_figure(range(1, 9), (4, 8)).data)
    2
    """
    import plotly.graph_objects as go


    chans = [_check.integer(c, "channels[i]", minimum=1) for c in channels]
    fig = go.Figure()
    for m in multiples:
        m = _check.integer(m, "multiples[i]", minimum=1)
        frac = [1 - c / round_up(c, m) for c in chans]
        fig.add_trace(go.Scatter(x=chans, y=frac, mode="markers", name=f"pad to {m}",
                                 marker=dict(symbol=("circle", "square", "diamond", "triangle-up")[len(fig.data) % 4], size=7),
                                 hovertemplate="C=%{x}: %{y:.0%} padding<extra></extra>"))
    fig.update_layout(xaxis_title="channels C", yaxis_title="padding / padded tensor", yaxis_tickformat=".0%")
    return viz.style(fig)
