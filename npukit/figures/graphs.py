"""Figures of chapter 3, "Graphs and the roofline" (chapters/03_graphs.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; the ideas they draw live in :mod:`npukit.graphs`
and :mod:`npukit.rewrites`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from .. import _check, viz
from .._arith import round_up
from ..graphs import CONST_OPS, MachineSpec, OpCount, _model, _node_name, op_counts, tensor_shapes, topological_order
from ..rewrites import MemoryPlan
from ..viz import PALETTE

if TYPE_CHECKING:
    import onnx
    import plotly.graph_objects as go

__all__ = [
    "graph_figure",
    "roofline_figure",
    "bandwidth_figure",
    "lifetime_figure",
]


def _shape_text(shape: Sequence[int]) -> str:
    return "×".join(map(str, shape))


def _op_colours(op_types: Iterable[str]) -> dict[str, str]:
    colours: dict[str, str] = {}
    for op in op_types:
        if op not in colours:
            colours[op] = PALETTE[len(colours) % len(PALETTE)]
    return colours


# ---- the graph ----------------------------------------------------------------------------


def _vertices(model: onnx.ModelProto) -> tuple[dict[str, str], dict[str, int], list[tuple[str, str, str]]]:
    """``(op of each vertex, depth of each vertex, edges (from, to, tensor))``.

    Vertices are the graph inputs, the nodes (constants left out) and the graph
    outputs; a vertex's depth is one more than its deepest activation input's.
    """
    graph = model.graph
    consts = {t.name for t in graph.initializer} | {n.output[0] for n in graph.node if n.op_type in CONST_OPS}
    where: dict[str, str] = {}  # tensor -> vertex that produces it
    op_of: dict[str, str] = {}  # vertex -> op type ("input" and "output" for the graph's own)
    depth: dict[str, int] = {}
    edges: list[tuple[str, str, str]] = []
    for v in graph.input:
        if v.name not in consts:
            where[v.name], op_of["in:" + v.name], depth["in:" + v.name] = "in:" + v.name, "input", 0
    for i in topological_order(model):
        node = graph.node[i]
        if node.op_type in CONST_OPS:
            continue
        vid = _node_name(node, i)
        acts = [t for t in node.input if t in where]  # activations: weights have no vertex
        op_of[vid], depth[vid] = node.op_type, 1 + max((depth[where[t]] for t in acts), default=0)
        edges.extend((where[t], vid, t) for t in acts)
        where.update((t, vid) for t in node.output)
    for v in graph.output:
        if v.name in where:
            op_of["out:" + v.name], depth["out:" + v.name] = "output", depth[where[v.name]] + 1
            edges.append((where[v.name], "out:" + v.name, v.name))
    return op_of, depth, edges


def _edge_traces(edges: list, pos: dict, shapes: dict) -> list[go.Scatter]:
    """The edges as grey lines (a residual routed beside the column) and their shape labels."""
    import plotly.graph_objects as go

    ex, ey, lx, ly, ltext, lhover = [], [], [], [], [], []
    for a, b, t in edges:
        (x0, y0), (x1, y1) = pos[a], pos[b]
        if y0 - y1 > 1:  # an edge that skips rows (a residual): route it beside the column
            side = max(x0, x1) + 0.6
            ex += [x0, side, side, x1, None]
            ey += [y0, y0 - 0.4, y1 + 0.4, y1, None]
            lx.append(side)
        else:
            ex += [x0, x1, None]
            ey += [y0, y1, None]
            lx.append((x0 + x1) / 2)
        ly.append((y0 + y1) / 2)
        shape, dtype = shapes.get(t, ((), np.dtype("float32")))
        ltext.append(_shape_text(shape))
        lhover.append(f"{t}<br>{_shape_text(shape)} {dtype}<br>{math.prod(shape) * dtype.itemsize:,} bytes")
    return [go.Scatter(x=ex, y=ey, mode="lines", line=dict(color="#bbbbbb", width=1.5), hoverinfo="skip",
                       showlegend=False),
            go.Scatter(x=lx, y=ly, mode="text", text=ltext, textposition="middle right",
                       textfont=dict(size=10, color="#555"), hovertext=lhover, hoverinfo="text", showlegend=False)]


def _vertex_traces(op_of: dict, pos: dict, counts: dict) -> list[go.Scatter]:
    """One trace of markers per op type (its legend entry), hover text with MACs and parameters."""
    import plotly.graph_objects as go

    colours = _op_colours(op for op in op_of.values() if op not in ("input", "output"))
    by_op: dict[str, list[str]] = {}
    for vid, op in op_of.items():
        by_op.setdefault(op, []).append(vid)
    traces = []
    for op, vids in by_op.items():
        hover = [f"<b>{v}</b> ({op})<br>MACs {counts[v].macs:,}<br>params {counts[v].param_bytes:,} B<br>"
                 f"out {_shape_text(counts[v].output_shape)}" if v in counts
                 else f"<b>{v.split(':', 1)[1]}</b> (graph {op})" for v in vids]
        traces.append(go.Scatter(
            x=[pos[v][0] for v in vids], y=[pos[v][1] for v in vids], mode="markers+text", name=op,
            text=[v.split(":", 1)[1] if ":" in v else v for v in vids], textposition="middle left",
            textfont=dict(size=11), hovertext=hover, hoverinfo="text",
            marker=dict(size=16, symbol="square" if op in ("input", "output") else "circle",
                        color=colours.get(op, "#222222"), line=dict(width=1, color="white")),
        ))
    return traces


def graph_figure(model: onnx.ModelProto, *, title: str | None = None) -> go.Figure:
    """Draw ``model``'s graph: nodes in layers by depth, coloured by op type.

    A node's depth is one more than the deepest node producing one of its
    activation inputs; each depth is one row, drawn top to bottom. Edges are
    labelled with their tensor's shape; hovering a node shows its MACs and
    parameter bytes, hovering a label the tensor's name, dtype and bytes.

    Parameters
    ----------
    model : onnx.ModelProto
        The model, with static shapes.
    title : str, optional
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``model`` is not an ``onnx.ModelProto`` or ``title`` not a str.
    ValueError
        If shapes are unknown or the graph has a cycle.

    Examples
    --------
    >>> from npukit.graphs import example_chain
    >>> fig = graph_figure(example_chain(blocks=1, channels=4, size=8))
    >>> sorted({t.name for t in fig.data if t.name})[:3]
    ['Add', 'BatchNormalization', 'Conv']
    """
    import plotly.graph_objects as go

    model, title = _model(model), _check.text(title, "title", optional=True)
    counts = {c.name: c for c in op_counts(model)}
    op_of, depth, edges = _vertices(model)
    rows: dict[int, list[str]] = {}
    for vid, d in depth.items():
        rows.setdefault(d, []).append(vid)
    pos = {vid: (k - (len(r) - 1) / 2, -d) for d, r in rows.items() for k, vid in enumerate(r)}
    fig = go.Figure(_edge_traces(edges, pos, tensor_shapes(model)) + _vertex_traces(op_of, pos, counts))
    width = max(len(r) for r in rows.values())
    fig.update_xaxes(visible=False, range=[-(width - 1) / 2 - 2.2, (width - 1) / 2 + 2.2])
    fig.update_yaxes(visible=False, range=[-max(rows) - 0.6, 0.6])
    return viz.style(fig, height=max(300, 60 + 34 * (max(rows) + 1)), title=title)


# ---- the roofline -------------------------------------------------------------------------


def _extra_points(extra: Any, name: str = "extra", need_achieved: bool = False) -> list[dict]:
    """Check points: dicts with a str ``name``, a positive ``intensity`` and a positive ``achieved``
    (required if ``need_achieved``, else optional)."""
    out = []
    for i, e in enumerate(_check.sequence(extra, name)):
        what = (f"{name}[{i}] must be a dict with 'name', a positive 'intensity' and "
                + ("a positive 'achieved'" if need_achieved else "optionally 'achieved'"))
        if not isinstance(e, dict):
            raise TypeError(f"{what}, got {type(e).__name__}")
        unknown = set(e) - {"name", "intensity", "achieved", "low", "high"}
        if unknown or not isinstance(e.get("name"), str) or "intensity" not in e or (need_achieved and "achieved" not in e):
            raise ValueError(f"{what}, got {e!r}" + (f" (unknown keys {sorted(map(str, unknown))})" if unknown else ""))
        try:
            point = {k: _check.positive(e[k], k) for k in ("intensity", "achieved", "low", "high") if k in e}
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{what}; {exc}") from None
        out.append({"name": e["name"], **point})
    return out


def _roofline_axes(fig: go.Figure, machine: MachineSpec, lo: float, hi: float, y_lo: float, y_hi: float, g: float,
                   unit: str, rate: str) -> None:
    """Log axes over [lo, hi] × [y_lo, y_hi], the ridge line, and the machine's label."""
    fig.add_vline(x=machine.ridge, line=dict(color="#999", dash="dot"))
    fig.add_annotation(x=math.log10(machine.ridge), y=math.log10(machine.peak_flops / g), yshift=16,
                       text=f"ridge {machine.ridge:.3g} {unit}/byte", showarrow=False, font=dict(size=12))
    fig.add_annotation(x=math.log10(hi), y=math.log10(y_lo), xanchor="right", yanchor="bottom",
                       text=f"{machine.cpu}<br>peak {machine.peak_flops / g:.3g} {rate}, "
                            f"bandwidth {machine.bandwidth / 1e9:.3g} GB/s",
                       showarrow=False, align="right", font=dict(size=12, color="#444"))
    fig.update_xaxes(type="log", title=f"arithmetic intensity ({unit}/byte)", range=[math.log10(lo), math.log10(hi)],
                     dtick=1)
    fig.update_yaxes(type="log", title=f"attainable performance ({rate})",
                     range=[math.log10(y_lo), math.log10(y_hi)], dtick=1)


def _node_points(fig: go.Figure, machine: MachineSpec, pts: list[OpCount], g: float, unit: str, rate: str) -> None:
    """Each node on the roof at its intensity, one trace per op type."""
    import plotly.graph_objects as go

    colours = _op_colours(c.op_type for c in pts)
    by_op: dict[str, list[OpCount]] = {}
    for c in pts:
        by_op.setdefault(c.op_type, []).append(c)
    for op, cs in by_op.items():
        att = machine.attainable([c.intensity for c in cs])
        fig.add_trace(go.Scatter(
            x=[c.intensity for c in cs], y=att / g, mode="markers", name=op,
            marker=dict(size=11, color=colours[op], line=dict(width=1, color="white")),
            hovertext=[f"<b>{c.name}</b> ({op})<br>{c.flops:,} {unit}s, {c.bytes:,} bytes<br>"
                       f"intensity {c.intensity:.3g} {unit}/byte<br>attainable {a / g:.3g} {rate}<br>"
                       f"{machine.bound(c.intensity)}-bound" for c, a in zip(cs, att)],
            hoverinfo="text",
        ))


def _extra_traces(fig: go.Figure, machine: MachineSpec, extra: list[dict], g: float, unit: str, rate: str) -> None:
    """Each ``extra`` point where it was measured (``achieved``), or on the roof."""
    import plotly.graph_objects as go

    symbols = ("diamond", "star", "triangle-up", "square", "cross")
    for k, e in enumerate(extra):
        y = e.get("achieved", float(machine.attainable(e["intensity"])))
        fig.add_trace(go.Scatter(
            x=[e["intensity"]], y=[y / g], mode="markers+text", name=e["name"], text=[e["name"]],
            textposition="bottom right" if e["intensity"] < machine.ridge else "bottom center",
            marker=dict(size=14, symbol=symbols[k % len(symbols)], color="#222", line=dict(width=1, color="white")),
            hovertext=[f"<b>{e['name']}</b><br>intensity {e['intensity']:.3g} {unit}/byte<br>"
                       f"{'measured' if 'achieved' in e else 'attainable'} {y / g:.3g} {rate}<br>"
                       f"{machine.bound(e['intensity'])}-bound"],
            hoverinfo="text",
        ))


def _measured_traces(fig: go.Figure, machine: MachineSpec, measured: list[dict], g: float, unit: str,
                     rate: str) -> None:
    """Measured kernels as open circles, each joined by a dotted line to the roof above (or below) it."""
    import plotly.graph_objects as go

    if not measured:
        return
    xs, ys = [], []
    for m in measured:
        xs += [m["intensity"], m["intensity"], None]
        ys += [machine.attainable(m["intensity"]) / g, m["achieved"] / g, None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#555", width=1, dash="dot"),
                             hoverinfo="skip", showlegend=False))
    whiskers = all("low" in m and "high" in m for m in measured)   # the achieved rate at the runs' quartiles
    fig.add_trace(go.Scatter(
        x=[m["intensity"] for m in measured], y=[m["achieved"] / g for m in measured], mode="markers",
        name="measured (achieved)",
        error_y=dict(type="data", symmetric=False, visible=whiskers,
                     array=[max(m["high"] - m["achieved"], 0) / g for m in measured] if whiskers else None,
                     arrayminus=[max(m["achieved"] - m["low"], 0) / g for m in measured] if whiskers else None),
        marker=dict(size=11, symbol="circle-open", color="#222", line=dict(width=2)),
        hovertext=[f"<b>{m['name']}</b> (measured)<br>intensity {m['intensity']:.3g} {unit}/byte<br>"
                   f"achieved {m['achieved'] / g:.3g} {rate}<br>attainable {machine.attainable(m['intensity']) / g:.3g} "
                   f"{rate} ({m['achieved'] / machine.attainable(m['intensity']):.0%})" for m in measured],
        hoverinfo="text",
    ))


def _highlight(fig: go.Figure, machine: MachineSpec, c: OpCount, g: float, unit: str, rate: str) -> None:
    """A ring around node ``c`` on the roof and a one-line verdict beside it."""
    import plotly.graph_objects as go

    a = machine.attainable(c.intensity)
    fig.add_trace(go.Scatter(x=[c.intensity], y=[a / g], mode="markers", name=f"{c.name} (picked)",
                             marker=dict(size=26, symbol="circle-open", color=PALETTE[5 % len(PALETTE)],
                                         line=dict(width=3)), hoverinfo="skip"))
    fig.add_annotation(x=math.log10(c.intensity), y=math.log10(a / g), ax=40, ay=-50, showarrow=True, arrowhead=0,
                       text=f"<b>{c.name}</b>: {machine.bound(c.intensity)}-bound, {a / g:.3g} {rate} "
                            f"({a / machine.peak_flops:.0%} of peak)", font=dict(size=12), bgcolor="white")


def roofline_figure(machine: MachineSpec, counts: Sequence[OpCount] = (), *, extra: Sequence[dict] = (),
                    measured: Sequence[dict] = (), cache_bandwidth: float | None = None, highlight: str | None = None,
                    title: str | None = None, unit: str = "FLOP") -> go.Figure:
    """The roofline of ``machine`` with a model's nodes placed on it (log-log), and what was measured under it.

    The roof is ``min(peak, bandwidth × intensity)``. Each node of ``counts``
    with FLOPs is drawn at its intensity, *on the roof*: the best it can do
    run alone on this machine (attainable); its colour is its op type, its
    hover text says whether it is memory- or compute-bound. ``measured``
    kernels are drawn where their measured rate puts them (achieved), as open
    circles joined to the roof above them by a dotted line: the gap is what
    the kernel left on the table. ``extra`` points (for example a big GEMM and
    a ReLU that were timed) are drawn where they were measured. The y axis
    reaches down to the lowest point drawn.

    Parameters
    ----------
    machine : MachineSpec
        The roof (measured, or a spec sheet).
    counts : sequence of OpCount
        Nodes to place (from :func:`npukit.graphs.op_counts`); those with 0 FLOPs are skipped.
    extra : sequence of dict
        Points ``{"name": str, "intensity": float}`` with optional
        ``"achieved"`` (FLOP/s measured; default: on the roof).
    measured : sequence of dict
        Measured kernels ``{"name": str, "intensity": float, "achieved": float}``
        (e.g. per-layer profiles placed by :func:`npukit.roofline.kernel_counts`),
        optionally with ``"low"`` and ``"high"``, the rates at the runs' slower
        and faster quartiles, drawn as whiskers when every kernel has them.
    cache_bandwidth : float, optional
        Bytes/s from a cache rather than DRAM: drawn as a second, dashed roof.
    highlight : str, optional
        The name of one node of ``counts`` to ring, with its verdict.
    title : str, optional
        Figure title.
    unit : str
        ``"FLOP"`` or ``"op"`` (for integer spec sheets) in the axis titles.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``machine`` is not a MachineSpec, ``counts``, ``extra`` or
        ``measured`` not a list or tuple, or an item of one of the wrong type.
    ValueError
        If a point lacks ``name`` (or a measured one ``achieved``), has an
        unknown key or a non-positive number, ``cache_bandwidth`` is not > 0,
        ``highlight`` names no node of ``counts`` with FLOPs, or ``unit`` is unknown.

    Examples
    --------
    >>> from npukit.graphs import MachineSpec, example_chain, op_counts
    >>> m = MachineSpec(200e9, 25e9, "toy CPU", "assumed", "assumed")
    >>> fig = roofline_figure(m, op_counts(example_chain(blocks=1, channels=4, size=8)),
    ...                       extra=[{"name": "ReLU (timed)", "intensity": 0.125, "achieved": 2e9}],
    ...                       measured=[{"name": "conv kernel", "intensity": 7.0, "achieved": 0.5e9}])
    >>> fig.layout.xaxis.type, [t.name for t in fig.data][:2]
    ('log', ['roof', 'Conv'])
    >>> 10 ** fig.layout.yaxis.range[0] < 0.5        # the axis reaches the measured 0.5 GFLOP/s
    True
    """
    import plotly.graph_objects as go

    if not isinstance(machine, MachineSpec):
        raise TypeError(f"machine must be a MachineSpec, got {type(machine).__name__}")
    unit, title = _check.one_of(unit, "unit", ("FLOP", "op")), _check.text(title, "title", optional=True)
    highlight = _check.text(highlight, "highlight", optional=True)
    if cache_bandwidth is not None:
        cache_bandwidth = _check.positive(cache_bandwidth, "cache_bandwidth")
    pts = []
    for i, c in enumerate(_check.sequence(counts, "counts")):
        if not isinstance(c, OpCount):
            raise TypeError(f"counts[{i}] must be an OpCount, got {type(c).__name__}")
        if c.flops > 0 and c.intensity > 0:
            pts.append(c)
    picked = [c for c in pts if c.name == highlight]
    if highlight is not None and not picked:
        raise ValueError(f"highlight must name a node of counts with FLOPs, got {highlight!r}")
    extra = _extra_points(extra)
    measured = _extra_points(measured, "measured", need_achieved=True)
    xs = [c.intensity for c in pts] + [e["intensity"] for e in extra + measured] + [machine.ridge]
    lo, hi = min(xs) / 2.5, max(xs) * 8
    grid = np.logspace(math.log10(lo), math.log10(hi), 200)
    g = 1e9 if machine.peak_flops < 1e13 else 1e12
    rate = ("G" if g == 1e9 else "T") + ("FLOP/s" if unit == "FLOP" else "OPS")
    fig = go.Figure(go.Scatter(
        x=grid, y=machine.attainable(grid) / g, mode="lines", name="roof", line=dict(color="#222", width=2.5),
        hovertemplate=f"intensity %{{x:.3g}} {unit}/byte<br>attainable %{{y:.3g}} {rate}<extra>roof</extra>",
    ))
    ys = [machine.attainable(lo)] + [e["achieved"] for e in extra + measured if "achieved" in e]
    if cache_bandwidth is not None:
        cache_roof = np.minimum(machine.peak_flops, cache_bandwidth * grid)
        fig.add_trace(go.Scatter(
            x=grid, y=cache_roof / g, mode="lines", name=f"cache roof ({cache_bandwidth / 1e9:.3g} GB/s)",
            line=dict(color="#777", width=1.5, dash="dash"),
            hovertemplate=f"intensity %{{x:.3g}} {unit}/byte<br>from cache %{{y:.3g}} {rate}<extra>cache roof</extra>"))
    _node_points(fig, machine, pts, g, unit, rate)
    _measured_traces(fig, machine, measured, g, unit, rate)
    _extra_traces(fig, machine, extra, g, unit, rate)
    if picked:
        _highlight(fig, machine, picked[0], g, unit, rate)
    y_hi = max([machine.peak_flops] + [e["achieved"] for e in extra + measured if "achieved" in e]) / g * 4
    _roofline_axes(fig, machine, lo, hi, min(ys) / g / 2, y_hi, g, unit, rate)
    return viz.style(fig, height=480, title=title)


def bandwidth_figure(sizes: Sequence[int], rates: Sequence[float], *, caches: Mapping[str, int] | None = None,
                     marks: Mapping[str, int] | None = None, spread: Sequence[Sequence[float]] | None = None,
                     title: str | None = None) -> go.Figure:
    """Measured bandwidth against array size (log-log), with the caches' sizes marked and the rounds' spread.

    Where the array stops fitting in a cache the rate drops to the next
    level's; past the last level it is DRAM's. Draw
    :func:`npukit.roofline.stream_comparison` over a sweep of sizes (or
    :func:`npukit.roofline.stream_bandwidth`) to see where this machine's
    caches really end; ``spread`` draws each point's whiskers. See chapter 3,
    "Graphs and the roofline" (chapters/03_graphs.md).

    Parameters
    ----------
    sizes : sequence of int
        Bytes of the copied array, each > 0.
    rates : sequence of float
        Bytes/s measured at each size, each > 0 (a median over rounds).
    spread : sequence of (float, float), optional
        For each size, the low and high end of its whisker in bytes/s (the
        rounds' quartiles), with ``low <= rate <= high``.
    caches : mapping of str to int, optional
        Cache sizes to mark as vertical lines labelled at the top, e.g. :func:`npukit.measure.cache_sizes`.
    marks : mapping of str to int, optional
        Other sizes to mark as dotted lines named in the legend, e.g. the array size the roofline used.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``sizes`` and ``rates`` are not sequences of the same non-zero
        length of positive numbers, or a cache or mark is not a positive integer.

    Examples
    --------
    >>> fig = bandwidth_figure([2**20, 2**26], [80e9, 15e9], caches={"L2": 2**21}, marks={"roofline's array": 2**26},
    ...                        spread=[(75e9, 82e9), (14e9, 16e9)])
    >>> fig.layout.xaxis.type, len(fig.layout.shapes), [t.name for t in fig.data], fig.data[0].error_y.array
    ('log', 1, ['copy', "roofline's array 64 MiB"], (2.0, 1.0))
    """
    import plotly.graph_objects as go

    sizes = _check.sequence(sizes, "sizes", min_length=1)
    rates = _check.sequence(rates, "rates", length=len(sizes))
    sizes = tuple(_check.integer(x, f"sizes[{i}]", minimum=1) for i, x in enumerate(sizes))
    rates = tuple(_check.positive(x, f"rates[{i}]") for i, x in enumerate(rates))
    title = _check.text(title, "title", optional=True)
    error = None
    if spread is not None:
        spread = _check.sequence(spread, "spread", length=len(sizes))
        ends = []
        for i, (pair, r) in enumerate(zip(spread, rates)):
            pair = _check.sequence(pair, f"spread[{i}]", length=2)
            a, b = (_check.positive(x, f"spread[{i}][{j}]") for j, x in enumerate(pair))
            if not a <= r <= b:
                raise ValueError(f"spread[{i}] must bracket rates[{i}] ({r:g}): low <= rate <= high, "
                                 f"got ({a:g}, {b:g})")
            ends.append((a, b))
        error = dict(type="data", symmetric=False, array=[(b - r) / 1e9 for (_, b), r in zip(ends, rates)],
                     arrayminus=[(r - a) / 1e9 for (a, _), r in zip(ends, rates)], thickness=1.2, width=4)
    fig = go.Figure(go.Scatter(
        x=[s / 2**20 for s in sizes], y=[r / 1e9 for r in rates], mode="lines+markers", name="copy",
        line=dict(color=PALETTE[0], width=2.5), marker=dict(size=8), error_y=error,
        hovertemplate="%{x:.3g} MiB array<br>%{y:.3g} GB/s<extra></extra>"))
    lows = [a for a, _ in ends] if error else rates
    highs = [b for _, b in ends] if error else rates
    lo, hi = min(lows) / 1e9 / 1.3, max(highs) / 1e9 * 1.3
    for dash, marked in (("solid", caches), ("dot", marks)):
        if marked is None:
            continue
        what = "caches" if dash == "solid" else "marks"
        if not isinstance(marked, Mapping):
            raise TypeError(f"{what} must be a mapping of names to bytes, got {type(marked).__name__}")
        for k, (name, size) in enumerate(marked.items()):
            size = _check.integer(size, f"{what}[{name!r}]", minimum=1)
            label = (f"{name} {size / 2**20:,.0f} MiB" if size % 2**20 == 0 else
                     f"{name} {size / 2**20:,.3g} MiB" if size >= 2**20 else f"{name} {size / 1024:,.0f} KiB")
            if dash == "solid":  # a cache: a grey line labelled at the top
                fig.add_vline(x=size / 2**20, line=dict(color="#888", dash=dash))
                fig.add_annotation(x=math.log10(size / 2**20), y=1, yref="paper", yanchor="bottom", text=label,
                                   showarrow=False, font=dict(size=11))
            else:  # another size: a dotted line in the legend
                fig.add_trace(go.Scatter(x=[size / 2**20] * 2, y=[lo, hi], mode="lines", name=label,
                                         line=dict(color=PALETTE[(k + 1) % len(PALETTE)], dash="dot", width=2),
                                         hoverinfo="name"))
    fig.update_xaxes(type="log", title="array size (MiB), copied into a second array as large")
    fig.update_yaxes(type="log", title="bytes read + written per second (GB/s)",
                     range=[math.log10(lo), math.log10(hi)], dtick="D2")
    fig.update_layout(legend=dict(orientation="h", y=-0.25))
    return viz.style(fig, height=460, title=title)


# ---- the memory plan ----------------------------------------------------------------------


def lifetime_figure(plan: MemoryPlan, *, title: str | None = None) -> go.Figure:
    """A memory plan as rectangles in time × address: one per intermediate tensor.

    The x axis is the node step, the y axis the byte offset in the arena;
    a tensor is a box from its producer to its last reader, as tall as its
    size. Boxes that share a horizontal band hold the same bytes at different
    times: that is the reuse. Two buttons switch between the greedy plan and
    one buffer per tensor; dashed lines mark each arena's size.

    Parameters
    ----------
    plan : MemoryPlan
        From :func:`npukit.rewrites.plan_memory`.
    title : str, optional
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``plan`` is not a MemoryPlan or ``title`` not a str.

    Examples
    --------
    >>> from npukit.graphs import example_chain
    >>> from npukit.rewrites import plan_memory
    >>> fig = lifetime_figure(plan_memory(example_chain(blocks=2, channels=4, size=8)))
    >>> len(fig.layout.updatemenus[0].buttons)
    2
    """
    import plotly.graph_objects as go

    if not isinstance(plan, MemoryPlan):
        raise TypeError(f"plan must be a MemoryPlan, got {type(plan).__name__}")
    title = _check.text(title, "title", optional=True)
    naive_offsets, acc = {}, 0
    for b in plan.buffers:
        naive_offsets[b.tensor] = acc
        acc += round_up(b.size, plan.alignment)
    scale, unit = (1024, "KiB") if plan.naive_bytes >= 4096 else (1, "bytes")
    fig = go.Figure()
    n = len(plan.buffers)
    for layout, offsets in (("greedy", {b.tensor: b.offset for b in plan.buffers}), ("naive", naive_offsets)):
        for k, b in enumerate(plan.buffers):
            o = offsets[b.tensor] / scale
            top = o + b.size / scale
            x0, x1 = b.first - 0.4, b.last + 0.4
            fig.add_trace(go.Scatter(
                x=[x0, x1, x1, x0, x0], y=[o, o, top, top, o], fill="toself", mode="lines",
                line=dict(width=1, color="white"), fillcolor=viz.PALETTE[k % len(viz.PALETTE)],
                opacity=0.85, name=b.tensor, showlegend=False, visible=layout == "greedy",
                hoveron="fills", hoverinfo="text",
                text=f"<b>{b.tensor}</b><br>{b.size:,} bytes at offset {offsets[b.tensor]:,}<br>"
                     f"live from node {b.first} ({plan.order[b.first]}) to {b.last} ({plan.order[b.last]})",
            ))
    peak, naive = plan.peak_bytes / scale, plan.naive_bytes / scale
    for layout, level, label in (("greedy", peak, "greedy plan"), ("naive", naive, "one buffer per tensor")):
        fig.add_trace(go.Scatter(x=[-0.5, len(plan.order) - 0.5], y=[level, level], mode="lines",
                                 line=dict(color="#222", dash="dash"), name=f"{label}: {level:,.1f} {unit}",
                                 visible=layout == "greedy", hoverinfo="name"))
    vis_greedy = [True] * n + [False] * n + [True, False]
    vis_naive = [False] * n + [True] * n + [False, True]
    fig.update_layout(updatemenus=[dict(
        type="buttons", direction="right", x=0.0, xanchor="left", y=1.0, yanchor="bottom", pad=dict(b=8),
        buttons=[dict(label="greedy reuse", method="update", args=[{"visible": vis_greedy}]),
                 dict(label="one buffer per tensor", method="update", args=[{"visible": vis_naive}])],
    )])
    fig.update_xaxes(title="node (execution order)", range=[-0.6, len(plan.order) - 0.4])
    fig.update_yaxes(title=f"arena offset ({unit})", rangemode="tozero")
    fig.update_layout(legend=dict(orientation="h", y=-0.2))
    viz.style(fig, height=500, title=title)
    # the title sits above the buttons, the buttons above the plot
    return fig.update_layout(margin=dict(t=110), title=dict(y=0.97, yref="container", yanchor="top"))
