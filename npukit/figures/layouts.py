"""Figures of chapter 2, "Layouts" (chapters/02_layouts.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; the ideas they draw live in :mod:`npukit.layouts`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .. import _check, viz
from ..layouts import Conversion, onednn_tag, round_up
from ..simd import LayoutTiming

if TYPE_CHECKING:
    import plotly.graph_objects as go


__all__ = [
    "element_order_figure",
    "bandwidth_figure",
    "padding_figure",
    "layout_timing_figure",
    "memory_strip_figure",
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


@dataclasses.dataclass
class _Picture:
    """Where the element-order figure draws things: the tensor on top, memory below."""

    channels: int
    height: int
    width: int
    row: int  # memory slots per line

    def __post_init__(self) -> None:
        c, h, w = np.meshgrid(np.arange(self.channels), np.arange(self.height), np.arange(self.width), indexing="ij")
        self.c, self.h, self.w = c.ravel(), h.ravel(), w.ravel()
        self.lx, self.ly = self.c * (self.width + 1) + self.w, -self.h  # channel planes side by side
        self.lw = self.channels * (self.width + 1) - 1  # width of the tensor picture
        self.y0 = -(self.height + 1)  # the first memory line
        self.labels = [f"c{ci} h{hi} w{wi}" for ci, hi, wi in zip(self.c, self.h, self.w)]

    def mem_xy(self, k: int) -> tuple[int, int]:
        return k % self.row, self.y0 - k // self.row

    @staticmethod
    def box(x: float, y: float, start: float = 0.5) -> tuple[list, list]:
        """A closed square around cell (x, y), from its left corner at ``y + start``."""
        return [x - 0.5, x - 0.5, x + 0.5, x + 0.5, x - 0.5], [y + start, y - start, y - start, y + start, y + start]


def _layout_traces(pic: _Picture, name: str, offset: np.ndarray, nslots: int, visible: bool, cell: dict) -> list:
    """One layout's three traces: the tensor's cells (text: offset), memory (text: channel), the highlight."""
    import plotly.graph_objects as go

    off = offset.ravel()
    z = np.full((pic.height, pic.lw), np.nan)
    text = np.full((pic.height, pic.lw), "", dtype=object)
    hover = np.full((pic.height, pic.lw), "", dtype=object)
    z[-pic.ly, pic.lx], text[-pic.ly, pic.lx] = pic.c, [str(o) for o in off]
    hover[-pic.ly, pic.lx] = [f"{lab} → offset {o}" for lab, o in zip(pic.labels, off)]
    tensor = go.Heatmap(z=z, x=list(range(pic.lw)), y=[-i for i in range(pic.height)], text=text,
                        hovertext=hover, visible=visible, name=name, **cell)
    inv = np.full(nslots, -1)
    inv[off] = np.arange(off.size)
    lines = -(-nslots // pic.row)
    z = np.full((lines, pic.row), np.nan)
    text = np.full((lines, pic.row), "", dtype=object)
    hover = np.full((lines, pic.row), "", dtype=object)
    for k, e in enumerate(inv):
        z[k // pic.row, k % pic.row] = pic.c[e] if e >= 0 else -1
        text[k // pic.row, k % pic.row] = str(pic.c[e]) if e >= 0 else ""
        hover[k // pic.row, k % pic.row] = f"offset {k}: " + (pic.labels[e] if e >= 0 else "padding (zero)")
    memory = go.Heatmap(z=z, x=list(range(pic.row)), y=[pic.y0 - i for i in range(lines)], text=text,
                        hovertext=hover, visible=visible, name=name, **cell)
    highlight = go.Scatter(x=[None], y=[None], mode="lines", visible=visible, showlegend=False, hoverinfo="skip",
                           line=dict(color="black", width=2.5))  # moved by the slider
    return [tensor, memory, highlight]


def _slider_steps(pic: _Picture, orders: dict, highlights: list[int]) -> list[dict]:
    """Step k draws, in every layout, one line around the element at offset k and its memory slot."""
    steps = []
    for k in range(max(n for _, n in orders.values())):
        xs, ys = [], []
        for offset, nslots in orders.values():
            hit = np.flatnonzero(offset.ravel() == k)
            # Around the logical cell (from its bottom-left corner), down to the memory slot and
            # around it (from its top-left corner). Padding: the slot only.
            bx, by = pic.box(*pic.mem_xy(k)) if k < nslots else ([None], [None])
            if k < nslots and hit.size:
                ex, ey = pic.box(pic.lx[hit[0]], pic.ly[hit[0]], start=-0.5)
                bx, by = ex + bx, ey + by
            xs.append(bx), ys.append(by)
        steps.append(dict(method="restyle", label=str(k), args=[{"x": xs, "y": ys}, highlights]))
    return steps


def _layout_buttons(names: list[str], channels: int, height: int, width: int, block: int) -> list[dict]:
    """One button per layout: show its three traces, title it with its oneDNN tag and strides."""
    strides = {"NCHW": (height * width, width, 1), "NHWC": (1, width * channels, channels)}
    buttons = []
    for li, name in enumerate(names):
        vis = [tli == li for tli in range(len(names)) for _ in range(3)]
        if name in strides:
            s = strides[name]
            note = f"{name} ({onednn_tag(name)}): element strides c={s[0]}, h={s[1]}, w={s[2]}"
        else:
            note = f"{name} ({onednn_tag('NCHW', block)}): channels in blocks of {block}, grey = zero padding"
        buttons.append(dict(label=name, method="update", args=[{"visible": vis}, {"title.text": note}]))
    return buttons


def _at_most_256_slots(channels: int, height: int, width: int, block: int, row: int) -> None:
    """Refuse sizes whose drawing would not fit (or not fit in memory) before any array is made."""
    slots = -(-channels // block) * block * height * width
    if slots > 256 or row > 256:
        raise ValueError(f"channels, height and width give {slots:,} memory slots (channels padded to the block) "
                         f"and row is {row:,}; keep both at most 256")


def element_order_figure(channels: int = 6, height: int = 3, width: int = 3, block: int = 4,
                         row: int = 16) -> go.Figure:
    """Interactive figure: one tensor's elements and where each lands in memory.

    Top: the logical tensor, one ``height × width`` grid per channel, coloured
    by channel; each cell shows its memory offset. Bottom: memory, ``row``
    elements per line (16 float32 = one 64-byte cache line), each slot coloured
    by the channel stored there; grey slots are the blocked layout's padding.
    Buttons switch the layout (NCHW, NHWC, nChw{block}c); the slider walks
    through memory address by address and marks the element stored there in
    both views. Works in a static page (no kernel needed).
    See chapter 2, "Layouts" (chapters/02_layouts.md).

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

    channels, height, width, block, row = (_check.integer(v, k, minimum=1) for k, v in dict(
        channels=channels, height=height, width=width, block=block, row=row).items())
    _at_most_256_slots(channels, height, width, block, row)
    orders = _element_orders(channels, height, width, block)
    slots = max(n for _, n in orders.values())
    if slots > 256:
        raise ValueError(f"channels, height and width give {slots} memory slots (channels padded to the block); "
                         "keep them at most 256 so the figure stays readable")
    pic = _Picture(channels, height, width, row)
    # One colour per channel, grey (value -1) for padding: a stepwise colour scale.
    cats = [viz.PALETTE[7]] + [viz.PALETTE[i % 7] for i in range(channels)]
    scale = [[f, col] for i, col in enumerate(cats) for f in (i / len(cats), (i + 1) / len(cats))]
    cell = dict(colorscale=scale, zmin=-1, zmax=max(channels - 1, 0), showscale=False, xgap=3, ygap=3,
                texttemplate="%{text}", textfont=dict(size=11, color="white"), hoverinfo="text")
    fig = go.Figure([t for li, (name, (offset, nslots)) in enumerate(orders.items())
                     for t in _layout_traces(pic, name, offset, nslots, li == 0, cell)])
    highlights = [li * 3 + 2 for li in range(len(orders))]
    steps = _slider_steps(pic, orders, highlights)
    buttons = _layout_buttons(list(orders), channels, height, width, block)
    for trace, x, y in zip((fig.data[i] for i in highlights), steps[0]["args"][0]["x"], steps[0]["args"][0]["y"]):
        trace.x, trace.y = x, y
    fig.update_layout(
        updatemenus=[dict(type="buttons", direction="right", buttons=buttons, x=0.0, xanchor="left",
                          y=1.0, yanchor="bottom", pad=dict(t=0, b=10), showactive=True)],
        sliders=[dict(steps=steps, active=0, currentvalue=dict(prefix="memory offset (elements): "),
                      pad=dict(t=10), x=0.0, len=1.0)],
        xaxis=dict(visible=False, range=[-0.6, max(row, pic.lw) - 0.4]),
        yaxis=dict(visible=False, scaleanchor="x", scaleratio=1),
    )
    fig.add_annotation(x=-0.5, y=0.6, text="the tensor: one grid per channel; number = memory offset",
                       showarrow=False, xanchor="left", yanchor="bottom", font=dict(size=12))
    fig.add_annotation(x=-0.5, y=pic.y0 + 0.6, text=f"memory, {row} elements per line; number = channel stored there",
                       showarrow=False, xanchor="left", yanchor="bottom", font=dict(size=12))
    viz.style(fig, height=int(190 + 36 * (height + -(-slots // row) + 2)), title=buttons[0]["args"][1]["title.text"])
    fig.update_layout(margin=dict(t=110, b=10), title=dict(y=0.985, yref="container", yanchor="top",
                                                           font=dict(size=15)))
    return fig


def _iqr_error(times: Sequence[float], convert: Any) -> tuple[float, float] | None:
    """Distances from the median to the quartiles of ``convert(t)`` over per-round ``times`` (None without rounds).

    ``convert`` maps seconds to the plotted unit; it may reverse the order (seconds to a rate).
    """
    if not times:
        return None
    values = np.array([convert(t) for t in times])
    mid, q1, q3 = np.median(values), *np.percentile(values, [25, 75])
    return float(mid - q1), float(q3 - mid)


def _error_bars(errors: Sequence[tuple[float, float] | None]) -> dict | None:
    """plotly ``error_x``/``error_y`` from per-point (minus, plus) distances, or None if no point has rounds."""
    if all(e is None for e in errors):
        return None
    return dict(type="data", symmetric=False, array=[e[1] if e else 0.0 for e in errors],
                arrayminus=[e[0] if e else 0.0 for e in errors], thickness=1.2, width=4)


def bandwidth_figure(results: Sequence[Conversion], title: str | None = None) -> go.Figure:
    """Bar chart: copy vs conversion bandwidth for each measured tensor, with the rounds' spread.

    Each bar is the median over the interleaved rounds; its whisker spans
    the first to the third quartile of the rounds (none for a record
    without rounds); each conversion's label is its time over the copy's
    with the verdict's 95 % interval. See chapter 2, "Layouts"
    (chapters/02_layouts.md).

    Parameters
    ----------
    results : list or tuple of Conversion
        From :func:`npukit.layouts.measure_conversion`; at least one.
    title : str, optional
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``results`` is not a list or tuple of :class:`Conversion`, or
        ``title`` is neither a string nor None.
    ValueError
        If ``results`` is empty.

    Examples
    --------
    >>> c = Conversion((1, 3, 32, 32), "NCHW", "NHWC", "float32", 12288, 4e-6, 1e-6, 1e-7)
    >>> [t.name for t in bandwidth_figure([c]).data]
    ['plain copy', 'layout conversion']
    """
    import plotly.graph_objects as go

    results = _check.sequence(results, "results")
    if not results:
        raise ValueError("results must hold at least one Conversion")
    for i, r in enumerate(results):
        _check.instance(r, f"results[{i}]", Conversion)
    title = _check.text(title, "title", optional=True)
    labels = [r.label for r in results]

    def says(r: Conversion) -> str:
        v = r.verdict
        return (f"{r.slowdown:.1f}× the copy's time" if v is None else
                f"{r.slowdown:.1f}× the copy's time (95%: {v.low:.1f}–{v.high:.1f})")

    def gbps(r: Conversion) -> Any:
        return lambda t: 2 * r.nbytes / t / 1e9

    fig = go.Figure([
        go.Bar(name="plain copy", y=labels, x=[r.copy_gbps for r in results], orientation="h",
               marker_color=viz.PALETTE[0], hovertemplate="%{y}<br>copy: %{x:.1f} GB/s<extra></extra>",
               error_x=_error_bars([_iqr_error(r.copy_times, gbps(r)) for r in results])),
        go.Bar(name="layout conversion", y=labels, x=[r.convert_gbps for r in results], orientation="h",
               marker_color=viz.PALETTE[3], text=[says(r) for r in results],
               textposition="outside", textfont=dict(size=12),
               hovertemplate="%{y}<br>conversion: %{x:.1f} GB/s<extra></extra>",
               error_x=_error_bars([_iqr_error(r.convert_times, gbps(r)) for r in results])),
    ])
    top = max(max(2 * r.nbytes / min(r.copy_times or [r.copy_s]), 2 * r.nbytes / min(r.convert_times or [r.convert_s]))
              for r in results) / 1e9
    fig.update_layout(barmode="group", xaxis=dict(title="GB/s (bytes read + written; whiskers: the rounds' "
                                                        "quartiles)", range=[0, 1.15 * top]),
                      yaxis=dict(autorange="reversed"), bargap=0.25,
                      legend=dict(orientation="h", x=0.0, y=1.0, yanchor="bottom"))
    return viz.style(fig, height=120 + 62 * len(results), title=title)


def _positive_ints(x: Any, name: str) -> tuple[int, ...]:
    """``x`` (a list, tuple or range) as a non-empty tuple of integers >= 1."""
    x = _check.sequence(tuple(x) if isinstance(x, range) else x, name, min_length=1)
    return tuple(_check.integer(v, f"{name}[{i}]", minimum=1) for i, v in enumerate(x))


def padding_figure(channels: Sequence[int] = tuple(range(1, 65)), multiples: Sequence[int] = (8, 16, 32)) -> go.Figure:
    """Line chart: fraction of a tensor that is padding, by channel count.

    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    channels : list, tuple or range of int
        Channel counts on the x axis (each ≥ 1; at least one).
    multiples : list, tuple or range of int
        The multiples to pad to (each ≥ 1; at least one), one line each.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``channels`` or ``multiples`` is not a non-empty sequence of
        positive integers.

    Examples
    --------
    >>> len(padding_figure(range(1, 9), (4, 8)).data)
    2
    """
    import plotly.graph_objects as go

    chans, mults = _positive_ints(channels, "channels"), _positive_ints(multiples, "multiples")
    fig = go.Figure()
    for i, m in enumerate(mults):
        fig.add_trace(go.Scatter(x=chans, y=[1 - c / round_up(c, m) for c in chans], mode="markers",
                                 name=f"pad to {m}", hovertemplate="C=%{x}: %{y:.0%} padding<extra></extra>",
                                 marker=dict(symbol=("circle", "square", "diamond", "triangle-up")[i % 4], size=7)))
    fig.update_layout(xaxis_title="channels C", yaxis_title="padding / padded tensor", yaxis_tickformat=".0%")
    return viz.style(fig)


def _interval(t: LayoutTiming) -> tuple[float, float]:
    """The verdict's interval of NCHW time over NHWC time (the ratio itself without rounds)."""
    v = t.verdict
    return (t.ratio, t.ratio) if v is None else (v.low, v.high)


def layout_timing_figure(timings: Sequence[LayoutTiming], title: str | None = None) -> go.Figure:
    """Line chart: one operation's time per value in NCHW and in NHWC, tensor by tensor, with the rounds' spread.

    Each point is the median over the interleaved rounds, its whisker the
    first to third quartile (none for a record without rounds); hover
    gives NCHW's time over NHWC's with the verdict's 95 % interval.

    See chapter 2, "Layouts" (chapters/02_layouts.md), and
    :func:`npukit.simd.measure_layouts`.

    Parameters
    ----------
    timings : list or tuple of LayoutTiming
        At least one, in the order to draw them (e.g. channels growing).
    title : str, optional
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        Two traces, ``NCHW`` and ``NHWC``; nanoseconds per value on a log axis.

    Raises
    ------
    TypeError
        If ``timings`` is not a list or tuple of :class:`LayoutTiming`, or
        ``title`` is neither a string nor None.
    ValueError
        If ``timings`` is empty.

    Examples
    --------
    >>> t = [LayoutTiming("depthwise", (1, 4, 32, 32), 9e-5, 1e-4), LayoutTiming("depthwise", (1, 64, 8, 8), 1e-4, 5e-5)]
    >>> [tr.name for tr in layout_timing_figure(t).data]
    ['NCHW (vectorized along W)', 'NHWC (vectorized along C)']
    """
    import plotly.graph_objects as go

    timings = _check.sequence(timings, "timings", min_length=1)
    for i, t in enumerate(timings):
        _check.instance(t, f"timings[{i}]", LayoutTiming)
    title = _check.text(title, "title", optional=True)
    labels = [f"{t.label}" for t in timings]
    per = [int(np.prod(t.shape)) for t in timings]
    fig = go.Figure()
    for k, (name, attr, colour) in enumerate([("NCHW (vectorized along W)", "nchw_s", viz.PALETTE[0]),
                                              ("NHWC (vectorized along C)", "nhwc_s", viz.PALETTE[3])]):
        ns = [getattr(t, attr) / n * 1e9 for t, n in zip(timings, per)]
        errors = [_iqr_error(getattr(t, attr[:-1] + "times"), lambda x, n=n: x / n * 1e9)
                  for t, n in zip(timings, per)]
        fig.add_trace(go.Scatter(x=labels, y=ns, name=name, mode="lines+markers", line=dict(color=colour),
                                 marker=dict(symbol=("circle", "square")[k], size=8), error_y=_error_bars(errors),
                                 customdata=[[t.ratio, *(_interval(t))] for t in timings],
                                 hovertemplate="%{x}: %{y:.2f} ns per value<br>NCHW / NHWC time: "
                                               "%{customdata[0]:.2f} (95%: %{customdata[1]:.2f}–"
                                               "%{customdata[2]:.2f})<extra>" + name.split()[0] + "</extra>"))
    fig.update_layout(xaxis_title="tensor, C×H×W (channels grow, maps shrink)",
                      yaxis=dict(title="time per value (ns; whiskers: the rounds' quartiles)", type="log"),
                      legend=dict(orientation="h", x=0.0, y=1.0, yanchor="bottom"))
    return viz.style(fig, title=title)


def memory_strip_figure(layout: str = "NHWC", block: int = 4, channels: int = 6, height: int = 2, width: int = 3,
                        conversion: Conversion | None = None, row: int = 16) -> go.Figure:
    """Memory, slot by slot, for one small tensor in one layout, with a measured conversion cost in the title.

    Each slot is colored by the channel stored there and labeled with it;
    hover shows the element's (c, h, w); grey slots are a blocked layout's
    zero padding. It is the figure lab 2's live control redraws, and (one per
    layout, under :func:`npukit.viz.slider_figure`) its static equivalent.
    See chapter 2, "Layouts" (chapters/02_layouts.md).

    Parameters
    ----------
    layout : {"NCHW", "NHWC", "blocked"}
        ``"blocked"`` is nChw{block}c.
    block : int
        Channel block of the blocked layout (≥ 1).
    channels, height, width : int
        The small tensor drawn (batch 1); at most 256 slots.
    conversion : Conversion, optional
        A measured conversion to this layout, quoted in the title.
    row : int
        Slots per line (16 float32 = one 64-byte cache line).

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        For a bad layout, size or conversion, or more than 256 slots.

    Examples
    --------
    >>> fig = memory_strip_figure("blocked", block=4)
    >>> fig.data[0].text[0][:8].tolist()       # channel of each of the first 8 slots
    ['0', '1', '2', '3', '0', '1', '2', '3']
    """
    import plotly.graph_objects as go

    layout = _check.one_of(layout, "layout", ("NCHW", "NHWC", "blocked"))
    channels, height, width, block, row = (_check.integer(v, k, minimum=1) for k, v in dict(
        channels=channels, height=height, width=width, block=block, row=row).items())
    _at_most_256_slots(channels, height, width, block, row)
    if conversion is not None:
        _check.instance(conversion, "conversion", Conversion)
    orders = _element_orders(channels, height, width, block)
    name = layout if layout != "blocked" else f"nChw{block}c"
    offset, slots = orders[name]
    if slots > 256:
        raise ValueError(f"channels, height and width give {slots} memory slots; keep them at most 256")
    c, h, w = (a.ravel() for a in np.meshgrid(np.arange(channels), np.arange(height), np.arange(width), indexing="ij"))
    lines = -(-slots // row)
    z = np.full((lines, row), np.nan)
    text = np.full((lines, row), "", dtype=object)
    hover = np.full((lines, row), "", dtype=object)
    for k in range(slots):
        z[k // row, k % row], hover[k // row, k % row] = -1, f"slot {k}: padding (zero)"
    for o, ci, hi, wi in zip(offset.ravel(), c, h, w):
        z[o // row, o % row], text[o // row, o % row] = ci, str(ci)
        hover[o // row, o % row] = f"slot {o}: c={ci}, h={hi}, w={wi}"
    cats = [viz.PALETTE[7]] + [viz.PALETTE[i % 7] for i in range(channels)]
    scale = [[f, col] for i, col in enumerate(cats) for f in (i / len(cats), (i + 1) / len(cats))]
    fig = go.Figure(go.Heatmap(z=z, text=text, hovertext=hover, hoverinfo="text", texttemplate="%{text}",
                               colorscale=scale, zmin=-1, zmax=max(channels - 1, 0), showscale=False, xgap=3, ygap=3,
                               textfont=dict(size=12, color="white"), name=name))
    tag = onednn_tag("NCHW", block) if layout == "blocked" else onednn_tag(layout)
    note = f"{name} ({tag}): memory order of a {channels}×{height}×{width} tensor, number = channel"
    if conversion is not None:
        note += (f"<br>NCHW→{name} of {'×'.join(map(str, conversion.shape))} {conversion.dtype}: "
                 f"{conversion.convert_s * 1e6:,.0f} µs, {conversion.slowdown:.1f}× a plain copy")
    fig.update_layout(xaxis=dict(title=f"slot within a line of {row}", dtick=1),
                      yaxis=dict(title="line", autorange="reversed", dtick=1, scaleanchor="x"))
    return viz.style(fig, height=int(180 + 40 * lines), title=note)
