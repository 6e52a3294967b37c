"""Figures of chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; the traffic model they draw lives in
:mod:`npukit.gemm` and the speed measurements in :mod:`npukit.blas`.

See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .. import _check, viz
from ..blas import Breakdown, Rung, Transposes, _positives
from ..gemm import Traffic, _dims, _itemsizes, _order, compulsory, footprint, traffic

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["traffic_figure", "ladder_figure", "breakdown_figure", "transpose_figure", "schedule_figure"]

_FAMILY = {"mnk": "C stays", "nmk": "C stays", "mkn": "A stays", "kmn": "A stays", "nkm": "B stays", "knm": "B stays"}


# ---- the measured ladder -----------------------------------------------------------


# ---- where the time of a tiled product goes ------------------------------------------


# ---- locality, measured: a transpose --------------------------------------------------




# ---- figures ------------------------------------------------------------------------


def _traffic_traces(dims: tuple, isz: int, csz: int, line: int, buf: int, orders: list[str], sizes: list[int],
                    depths: list[int], scale: float, unit: str) -> list[go.Scatter]:
    """One line per (depth, order): total traffic against the output-tile side, None where the tile does not fit."""
    import plotly.graph_objects as go

    traces = []
    for di, bk in enumerate(depths):
        for oi, order in enumerate(orders):
            ys = [traffic(*dims, (b, b, bk), order, isz, c_itemsize=csz, line=line).total / scale
                  if footprint(*dims, (b, b, bk), isz, c_itemsize=csz) <= buf else None for b in sizes]
            traces.append(go.Scatter(
                x=sizes, y=ys, mode="lines+markers", name=f"{order} ({_FAMILY[order]})",
                line=dict(color=viz.PALETTE[oi % len(viz.PALETTE)]), visible=di == 0,
                hovertemplate="bm = bn = %{x}<br>%{y:.3g} " + unit + "<extra>" + order + "</extra>",
            ))
    return traces


def traffic_figure(M: int, N: int, K: int, buffer_bytes: int, itemsize: int = 4, *, c_itemsize: int | None = None,
                   line: int = 64, orders: Sequence[str] = ("mnk", "mkn", "nkm"), sizes: Sequence[int] | None = None,
                   depths: Sequence[int] | None = None) -> go.Figure:
    """Interactive figure: DRAM traffic (whole lines) against tile size for a fixed buffer.

    The x axis is the side ``b`` of a square output tile (``bm = bn = b``);
    a slider picks the reduction depth ``bk``. One line per loop order shows
    :func:`npukit.gemm.traffic`'s total; points whose tiles do not fit
    ``buffer_bytes`` are left out, so each line stops where the buffer is
    full. Dotted lines mark the compulsory minimum and the untiled schedule
    (1×1×1 tiles, ``mnk``). The slider is plotly's, so the figure works in a
    static page. See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions.
    buffer_bytes : int
        The buffer size.
    itemsize, c_itemsize : int
        Element sizes of the inputs and of the accumulator (default: ``itemsize``).
    line : int
        Bytes per transfer (see :func:`npukit.gemm.traffic`).
    orders : sequence of str
        Loop orders to draw, at least one.
    sizes : sequence of int, optional
        Output-tile sides to evaluate (default: powers of two up to ``max(M, N)``).
    depths : sequence of int, optional
        ``bk`` values for the slider (default: powers of two up to ``K``).

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        For bad dimensions, item sizes or ``line`` (as :func:`npukit.gemm.traffic`),
        an unknown order, or ``orders``, ``sizes`` or ``depths`` that is not a
        non-empty list or tuple of valid values.

    Examples
    --------
    >>> fig = traffic_figure(256, 256, 256, buffer_bytes=64 * 1024)
    >>> len(fig.layout.sliders[0].steps) > 1
    True
    """
    import plotly.graph_objects as go

    M, N, K = _dims(M, N, K)
    isz, csz = _itemsizes(itemsize, c_itemsize)
    buf = _check.integer(buffer_bytes, "buffer_bytes", minimum=1)
    line = _check.integer(line, "line", minimum=1)
    orders = [_order(o, f"orders[{i}]") for i, o in enumerate(_check.sequence(orders, "orders", min_length=1))]
    sizes = _positives(sizes, "sizes", default=[2**e for e in range(max(M, N).bit_length())])
    depths = _positives(depths, "depths", default=[2**e for e in range(K.bit_length())])
    low = compulsory(M, N, K, isz, c_itemsize=csz, line=line).total
    high = traffic(M, N, K, (1, 1, 1), "mnk", isz, c_itemsize=csz, line=line).total
    unit, scale = next((u, 2.0**e) for u, e in (("GiB", 30), ("MiB", 20), ("KiB", 10), ("B", 0)) if low >= 2.0**e / 10)
    fig = go.Figure(_traffic_traces((M, N, K), isz, csz, line, buf, orders, sizes, depths, scale, unit))
    for y, label, dash in ((low, "compulsory minimum", "dot"), (high, "untiled (1×1×1 tiles)", "dash")):
        fig.add_trace(go.Scatter(x=[sizes[0], sizes[-1]], y=[y / scale] * 2, mode="lines", name=label,
                                 line=dict(color=viz.PALETTE[7], dash=dash),
                                 hovertemplate=f"{label}: %{{y:.3g}} {unit}<extra></extra>"))
    drawn = [y for tr in fig.data for y in tr.y if y is not None]
    lo, hi = min(drawn), max(drawn)  # one y range for every slider position
    per = len(orders)
    steps = []
    for di, bk in enumerate(depths):
        vis = [False] * (per * len(depths)) + [True, True]
        vis[di * per : (di + 1) * per] = [True] * per
        steps.append(dict(method="update", args=[{"visible": vis}], label=str(bk)))
    ticks = [x for x in sizes if x & (x - 1) == 0] + ([sizes[-1]] if sizes[-1] & (sizes[-1] - 1) else [])
    fig.update_layout(
        sliders=[dict(active=0, steps=steps, currentvalue=dict(prefix="bk = "), pad=dict(t=50))],
        xaxis=dict(title="output tile side bm = bn", type="log", tickvals=ticks),
        yaxis=dict(title=f"DRAM traffic ({unit}, log)", type="log", range=[math.log10(lo) - 0.2, math.log10(hi) + 0.2]),
    )
    return viz.style(fig, height=480, title=f"{M}×{N}×{K} GEMM, {buf / 1024:g} KiB buffer, {line}-byte lines")


def ladder_figure(rungs: Sequence[Rung], peak_gflops: float | None = None) -> go.Figure:
    """Bar chart of a :func:`ladder`: GFLOP/s per rung, log scale, with the rounds' spread.

    Each bar is the rung's median over its interleaved rounds and its
    whisker the rounds' middle half (first to third quartile), none for a
    rung without rounds.

    Parameters
    ----------
    rungs : sequence of Rung
        As returned by :func:`ladder`.
    peak_gflops : float, optional
        The machine's measured peak; drawn as a dashed line, and each bar is
        labelled with its fraction of it.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``rungs`` is not a list or tuple of :class:`Rung`, or ``peak_gflops`` not a number.
    ValueError
        If ``rungs`` is empty or ``peak_gflops`` is not finite and positive.

    Examples
    --------
    >>> fig = ladder_figure([Rung("numpy.matmul", 64, 1e-4, 5.2, 0.0, True)], peak_gflops=10.0)
    >>> fig.data[0].text[0]
    '5.2 GFLOP/s<br>52% of peak'
    """
    import plotly.graph_objects as go

    rungs = list(_check.sequence(rungs, "rungs", min_length=1))
    for i, r in enumerate(rungs):
        _check.instance(r, f"rungs[{i}]", Rung)
    if peak_gflops is not None:
        peak_gflops = _check.positive(peak_gflops, "peak_gflops")

    def label(r: Rung) -> str:
        s = f"{r.gflops:.3g} GFLOP/s"
        if peak_gflops is not None:
            frac = r.gflops / peak_gflops
            s += f"<br>{frac:.0%} of peak" if frac >= 0.01 else f"<br>{frac:.1e} of peak"
        return s

    spreads = [r.spread() for r in rungs]
    whiskers = None if all(q is None for q in spreads) else dict(
        type="data", symmetric=False, array=[q[1] - r.gflops if q else 0.0 for q, r in zip(spreads, rungs)],
        arrayminus=[r.gflops - q[0] if q else 0.0 for q, r in zip(spreads, rungs)], thickness=1.2, width=5,
        color="#222")
    fig = go.Figure(go.Bar(
        x=[f"{r.name}<br>(n = {r.n})" for r in rungs], y=[r.gflops for r in rungs], text=[label(r) for r in rungs],
        error_y=whiskers,
        textposition="auto",  # inside tall bars (clear of the peak line), above short ones
        textangle=0, textfont=dict(size=12), hovertemplate="%{x}<br>%{text}<extra></extra>",
        marker_color=[viz.PALETTE[i % len(viz.PALETTE)] for i in range(len(rungs))],
    ))
    if peak_gflops is not None:
        fig.add_hline(y=peak_gflops, line=dict(color="#444", dash="dash"))
        fig.add_annotation(  # on a log axis an annotation's y is log10 of the value
            x=0, xref="paper", y=math.log10(peak_gflops), yref="y", yshift=12, xanchor="left",
            text=f"measured peak {peak_gflops:.3g} GFLOP/s", showarrow=False,
        )
    top = max([q[1] if q else r.gflops for q, r in zip(spreads, rungs)] + [peak_gflops or 0])
    low = min(r.gflops for r in rungs)
    fig.update_layout(
        yaxis=dict(title="GFLOP/s (log)", type="log", range=[math.log10(low) - 0.5, math.log10(top) + 0.8]),
        showlegend=False,
    )
    return viz.style(fig, height=460, title="From Python loops to BLAS: the GEMM ladder")


_PARTS = ("arithmetic", "small calls", "threading", "tile traffic", "accumulation", "Python loop", "rest")


def breakdown_figure(bd: Breakdown) -> go.Figure:
    """Stacked bars of a :func:`breakdown`: each tile side's time, split, in units of ``numpy.matmul``'s time.

    One bar per tile side, its parts from :meth:`Breakdown.components`
    (a negative part is left out: the others then overshoot the
    measurement). Diamonds mark the measured time, crosses the model's
    (:meth:`Breakdown.model`); with interleaved rounds a diamond is the
    median per-round ratio of the tiled product's time to numpy's and its
    whisker the rounds' middle half (:meth:`Breakdown.measured`). Two buttons switch between BLAS's threads as
    they are and BLAS held to one thread; heights are divided by
    ``numpy.matmul``'s time with the same threads, so 1 is "as fast as one
    BLAS call". The axis stops a little above every side but the smallest;
    a bar that goes beyond it is labelled with its height. See chapter 4,
    "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    bd : Breakdown

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``bd`` is not a :class:`Breakdown`.

    Examples
    --------
    >>> t = dict(numpy=1e-3, step=1e-6, bandwidth=1e10, tiled=[3e-3], python=[1e-4], accumulate=[1e-4],
    ...          calls=[2e-3], kernel=[1e-6])
    >>> from npukit.blas import Timings
    >>> fig = breakdown_figure(Breakdown(64, (16,), Timings("all", **t), Timings("one", **t)))
    >>> len(fig.layout.updatemenus[0].buttons), fig.data[0].name
    (2, 'arithmetic')
    """
    import plotly.graph_objects as go

    bd = _check.instance(bd, "bd", Breakdown)
    x = [f"{b}×{b}×{b}" for b in bd.sides]
    fig, notes, tops = go.Figure(), {}, {}
    for threads in ("all", "one"):
        scale = bd._pick(threads).numpy
        parts = bd.components(threads)
        for i, name in enumerate(_PARTS):
            y = np.maximum(parts[name], 0) / scale
            fig.add_trace(go.Bar(x=x, y=y, name=name, marker_color=viz.PALETTE[i], visible=threads == "all",
                                 legendgroup=name, hovertemplate=f"{name}: %{{y:.2f}}×<extra></extra>"))
        measured, quartiles = bd.measured(threads)
        marks = {"measured": measured, "model": bd.model(threads) / scale}
        whiskers = None if quartiles is None else dict(
            type="data", symmetric=False, array=quartiles[:, 1] - measured, arrayminus=measured - quartiles[:, 0],
            thickness=1.2, width=5, color="#222")
        for name, symbol in (("measured", "diamond"), ("model", "x")):
            fig.add_trace(go.Scatter(x=x, y=marks[name], mode="markers", name=name, visible=threads == "all",
                                     marker=dict(symbol=symbol, size=12, color="#222"),
                                     error_y=whiskers if name == "measured" else None,
                                     hovertemplate=f"{name}: %{{y:.2f}}×<extra></extra>"))
        high = marks["measured"] if quartiles is None else quartiles[:, 1]
        tops[threads] = np.maximum(sum(np.maximum(v, 0) for v in parts.values()) / scale,
                                   np.maximum(high, marks["model"]))
    # the smallest tiles take many times longer than the rest: cut the axis above the others and label them
    rest = np.concatenate([t[1:] for t in tops.values()]) if len(bd.sides) > 1 else np.array([])
    cap = 1.15 * max(2.0, float(rest.max())) if rest.size else None
    for threads, top in tops.items():
        notes[threads] = [dict(x=xi, y=cap, text=f"↑ {v:.0f}×", showarrow=False, yanchor="bottom", bgcolor="white")
                          for xi, v in zip(x, top) if cap is not None and v > cap]
    per = len(_PARTS) + 2
    buttons = [dict(label=label, method="update", args=[{"visible": [k // per == i for k in range(2 * per)]},
                                                        {"annotations": notes[threads]}])
               for i, (label, threads) in enumerate((("BLAS: all threads", "all"), ("BLAS: one thread", "one")))]
    fig.update_layout(barmode="stack", updatemenus=[dict(type="buttons", direction="right", buttons=buttons,
                                                        x=1, xanchor="right", y=1.02, yanchor="bottom")],
                      annotations=notes["all"], xaxis=dict(title="tile"),
                      yaxis=dict(title="time ÷ numpy.matmul's time", range=None if cap is None else [0, cap * 1.1]))
    viz.style(fig, height=500, title=f"tiled_matmul, n = {bd.n}")
    return fig.update_layout(margin=dict(t=90))


def transpose_figure(t: Transposes) -> go.Figure:
    """Line chart of :func:`transposes`: bytes moved per second against block side.

    Dashed lines mark the plain copy (the best any transpose can do) and the
    naive transpose; the solid line is the blocked transpose for each block
    side. Each point is a median over the interleaved rounds; with rounds
    (:attr:`Transposes.times`) its whiskers span the rounds' middle half
    (first to third quartile). See chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

    Parameters
    ----------
    t : Transposes

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``t`` is not a :class:`Transposes`.

    Examples
    --------
    >>> fig = transpose_figure(Transposes(64, 4, 1e-5, 1e-4, (8, 16), (3e-5, 2e-5)))
    >>> [tr.name for tr in fig.data]
    ['blocked transpose', 'plain copy', 'naive transpose (copyto(out, a.T))']
    """
    import plotly.graph_objects as go

    t = _check.instance(t, "t", Transposes)
    gbs = lambda s: t.rate(s) / 1e9  # noqa: E731
    c = t.comparison if t.times else None

    def band(key: str, s: float) -> tuple[float, float]:   # the rate's distance to its quartiles (slow q3, fast q1)
        if c is None:
            return 0.0, 0.0
        q1, q3 = c.spread(key)
        return gbs(s) - gbs(q3), gbs(q1) - gbs(s)

    keys = [f"blocked {b}" for b in t.sides]
    bars = [band(k, s) for k, s in zip(keys, t.blocked)]
    fig = go.Figure(go.Scatter(x=list(t.sides), y=[gbs(s) for s in t.blocked], mode="lines+markers",
                               name="blocked transpose", line=dict(color=viz.PALETTE[0]),
                               error_y=dict(type="data", symmetric=False, array=[h for _, h in bars],
                                            arrayminus=[lo for lo, _ in bars], visible=c is not None),
                               hovertemplate="b = %{x}: %{y:.3g} GB/s<extra></extra>"))
    for i, (key, name, s) in enumerate((("copy", "plain copy", t.copy),
                                        ("naive", "naive transpose (copyto(out, a.T))", t.naive))):
        lo, hi = band(key, s)
        fig.add_trace(go.Scatter(x=[t.sides[0], t.sides[-1]], y=[gbs(s)] * 2, mode="lines", name=name,
                                 line=dict(color=viz.PALETTE[3 + 4 * i], dash="dash"),
                                 error_y=dict(type="data", symmetric=False, array=[hi] * 2, arrayminus=[lo] * 2,
                                              visible=c is not None),
                                 hovertemplate=f"{name}: %{{y:.3g}} GB/s<extra></extra>"))
    fig.update_layout(xaxis=dict(title="block side b (blocks b×b)", type="log", tickvals=list(t.sides)),
                      yaxis=dict(title="GB/s (bytes read + written, log)", type="log"))
    return viz.style(fig, height=420, title=f"Transposing a {t.n}×{t.n} float32 array")


def schedule_figure(t: Traffic, low: Traffic, *, title: str = "") -> go.Figure:
    """Bars of one schedule's DRAM traffic by operand, beside the compulsory minimum.

    The lab's live control draws this for the tile its sliders choose (see
    lab 4, labs/04_gemm.ipynb, and chapter 4, chapters/04_gemm.md).

    Parameters
    ----------
    t, low : npukit.gemm.Traffic
        The schedule's traffic and the compulsory traffic.
    title : str
        The figure's title.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``t`` or ``low`` is not a :class:`npukit.gemm.Traffic`, or ``title`` not a string.

    Examples
    --------
    >>> from npukit.gemm import traffic, compulsory
    >>> fig = schedule_figure(traffic(64, 64, 64, (16, 16, 16)), compulsory(64, 64, 64))
    >>> list(fig.data[0].x)
    ['A read', 'B read', 'C read back', 'C written']
    """
    import plotly.graph_objects as go

    t, low = _check.instance(t, "t", Traffic), _check.instance(low, "low", Traffic)
    title = _check.text(title, "title")
    names = ["A read", "B read", "C read back", "C written"]
    fig = go.Figure()
    for i, (label, x) in enumerate((("this tile", t), ("compulsory", low))):
        fig.add_trace(go.Bar(x=names, y=[x.a_read, x.b_read, x.c_read, x.c_write], name=label,
                             marker_color=viz.PALETTE[[0, 7][i]], hovertemplate="%{x}: %{y:,} B<extra></extra>"))
    fig.update_layout(barmode="group", yaxis=dict(title="bytes (log)", type="log"))
    return viz.style(fig, height=380, title=title or None)
