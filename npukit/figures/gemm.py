"""Figures of chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; the ideas they draw live in :mod:`npukit.gemm`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

from .. import _check, viz
from ..gemm import Rung, _dims, _itemsizes, _order, compulsory, footprint, traffic

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "traffic_figure",
    "ladder_figure",
    "sweep_figure",
]

_FAMILY = {"mnk": "C stays", "nmk": "C stays", "mkn": "A stays", "kmn": "A stays", "nkm": "B stays", "knm": "B stays"}


def _positives(values: Any, name: str, *, default: list[int] | None = None) -> list[int]:
    """``values`` (or ``default`` when None) as a non-empty list of integers ≥ 1."""
    values = default if values is None else _check.sequence(values, name, min_length=1)
    return [_check.integer(v, f"{name}[{i}]", minimum=1) for i, v in enumerate(values)]


def _rungs(rungs: Any) -> list[Rung]:
    rungs = list(_check.sequence(rungs, "rungs"))
    if not rungs:
        raise ValueError("rungs must hold at least one Rung")
    for i, r in enumerate(rungs):
        _check.instance(r, f"rungs[{i}]", Rung)
    return rungs


def _traffic_traces(dims: tuple, isz: int, csz: int, buf: int, orders: list[str], sizes: list[int],
                    depths: list[int], scale: float, unit: str) -> list[go.Scatter]:
    """One line per (depth, order): total traffic against the output-tile side, None where the tile does not fit."""
    import plotly.graph_objects as go

    traces = []
    for di, bk in enumerate(depths):
        for oi, order in enumerate(orders):
            ys = [traffic(*dims, (b, b, bk), order, isz, c_itemsize=csz).total / scale
                  if footprint(*dims, (b, b, bk), isz, c_itemsize=csz) <= buf else None for b in sizes]
            traces.append(go.Scatter(
                x=sizes, y=ys, mode="lines+markers", name=f"{order} ({_FAMILY[order]})",
                line=dict(color=viz.PALETTE[oi % len(viz.PALETTE)]), visible=di == 0,
                hovertemplate="bm = bn = %{x}<br>%{y:.3g} " + unit + "<extra>" + order + "</extra>",
            ))
    return traces


def traffic_figure(M: int, N: int, K: int, buffer_bytes: int, itemsize: int = 4, *, c_itemsize: int | None = None,
                   orders: Sequence[str] = ("mnk", "mkn", "nkm"), sizes: Sequence[int] | None = None,
                   depths: Sequence[int] | None = None) -> go.Figure:
    """Interactive figure: DRAM traffic against tile size for a fixed buffer.

    The x axis is the side ``b`` of a square output tile (``bm = bn = b``);
    a slider picks the reduction depth ``bk``. One line per loop order shows
    the total traffic; points whose tiles do not fit ``buffer_bytes`` are
    left out, so each line stops where the buffer is full. Dotted lines mark
    the compulsory minimum and the untiled schedule (1×1×1 tiles, ``mnk``).
    The slider is plotly's, so the figure works in a static page.

    Parameters
    ----------
    M, N, K : int
        GEMM dimensions.
    buffer_bytes : int
        The buffer size.
    itemsize, c_itemsize : int
        Element sizes of the inputs and of the accumulator (default: ``itemsize``).
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
        For bad dimensions or item sizes (as :func:`npukit.gemm.traffic`), an
        unknown order, or ``orders``, ``sizes`` or ``depths`` that is not a
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
    orders = [_order(o, f"orders[{i}]") for i, o in enumerate(_check.sequence(orders, "orders", min_length=1))]
    sizes = _positives(sizes, "sizes", default=[2**e for e in range(max(M, N).bit_length())])
    depths = _positives(depths, "depths", default=[2**e for e in range(K.bit_length())])
    low = compulsory(M, N, K, isz, c_itemsize=csz).total
    high = traffic(M, N, K, (1, 1, 1), "mnk", isz, c_itemsize=csz).total
    unit, scale = next((u, 2.0**e) for u, e in (("GiB", 30), ("MiB", 20), ("KiB", 10), ("B", 0)) if low >= 2.0**e / 10)
    fig = go.Figure(_traffic_traces((M, N, K), isz, csz, buf, orders, sizes, depths, scale, unit))
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
    return viz.style(fig, height=480, title=f"{M}×{N}×{K} GEMM, {buf / 1024:g} KiB buffer")


def ladder_figure(rungs: Sequence[Rung], peak_gflops: float | None = None) -> go.Figure:
    """Bar chart of a :func:`npukit.gemm.ladder`: GFLOP/s per rung, log scale.

    Parameters
    ----------
    rungs : sequence of Rung
        As returned by :func:`npukit.gemm.ladder`.
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

    rungs = _rungs(rungs)
    if peak_gflops is not None:
        peak_gflops = _check.positive(peak_gflops, "peak_gflops")

    def label(r: Rung) -> str:
        s = f"{r.gflops:.3g} GFLOP/s"
        if peak_gflops is not None:
            frac = r.gflops / peak_gflops
            s += f"<br>{frac:.0%} of peak" if frac >= 0.01 else f"<br>{frac:.1e} of peak"
        return s

    fig = go.Figure(go.Bar(
        x=[f"{r.name}<br>(n = {r.n})" for r in rungs], y=[r.gflops for r in rungs], text=[label(r) for r in rungs],
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
    top = max([r.gflops for r in rungs] + [peak_gflops or 0])
    low = min(r.gflops for r in rungs)
    fig.update_layout(
        yaxis=dict(title="GFLOP/s (log)", type="log", range=[math.log10(low) - 0.5, math.log10(top) + 0.8]),
        showlegend=False,
    )
    return viz.style(fig, height=460, title="From Python loops to BLAS: the GEMM ladder")


def sweep_figure(rungs: Sequence[Rung], sides: Sequence[int], *, numpy_gflops: float | None = None,
                 model: Sequence[float] | None = None) -> go.Figure:
    """Line chart of a :func:`npukit.gemm.sweep_tiles`: GFLOP/s against tile side (log-log).

    Parameters
    ----------
    rungs : sequence of Rung
        As returned by :func:`npukit.gemm.sweep_tiles`.
    sides : sequence of int
        The tile sides they were measured with (the x axis).
    numpy_gflops : float, optional
        ``numpy.matmul``'s rate at the same size, drawn as a dashed line.
    model : sequence of float, optional
        A modelled GFLOP/s for each side, drawn as a dotted line.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If an argument is not a list or tuple of the right type, or ``numpy_gflops`` not a number.
    ValueError
        If ``rungs`` is empty, ``rungs`` and ``sides`` (or ``model``) differ in
        length, or a side, a model value or ``numpy_gflops`` is not positive
        (a log axis cannot show it).

    Examples
    --------
    >>> fig = sweep_figure([Rung("tile 8³", 64, 1e-3, 0.5, 0.0, True)], [8], numpy_gflops=2.0)
    >>> list(fig.data[0].x), list(fig.data[0].y), fig.data[1].name
    ([8], [0.5], 'numpy.matmul')
    """
    import plotly.graph_objects as go

    rungs = _rungs(rungs)
    sides = _positives(sides, "sides")
    if len(rungs) != len(sides):
        raise ValueError(f"rungs and sides must be non-empty and of equal length, got {len(rungs)} and {len(sides)}")
    if model is not None:
        model = [_check.positive(v, f"model[{i}]") for i, v in enumerate(_check.sequence(model, "model"))]
        if len(model) != len(sides):
            raise ValueError(f"model must have one value per side, got {len(model)} for {len(sides)} sides")
    if numpy_gflops is not None:
        numpy_gflops = _check.positive(numpy_gflops, "numpy_gflops")
    fig = go.Figure(go.Scatter(x=sides, y=[r.gflops for r in rungs], mode="lines+markers",
                               name="tiled_matmul, measured", line=dict(color=viz.PALETTE[0]),
                               hovertemplate="tile %{x}³<br>%{y:.3g} GFLOP/s<extra></extra>"))
    if model is not None:
        fig.add_trace(go.Scatter(x=sides, y=model, mode="lines", name="model: overhead per tile + BLAS rate",
                                 line=dict(color=viz.PALETTE[1], dash="dot")))
    if numpy_gflops is not None:
        fig.add_trace(go.Scatter(x=[sides[0], sides[-1]], y=[numpy_gflops] * 2, mode="lines", name="numpy.matmul",
                                 line=dict(color=viz.PALETTE[3], dash="dash")))
    fig.update_layout(xaxis=dict(title="tile side b (tile b×b×b)", type="log", tickvals=sides),
                      yaxis=dict(title="GFLOP/s (log)", type="log"))
    return viz.style(fig, height=420, title=f"Tile size against Python overhead, n = {rungs[0].n}")
