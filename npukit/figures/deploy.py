"""Figures of chapter 7, "Deploying to an NPU" (chapters/07_deploy.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; what they draw is computed by :mod:`npukit.deploy`
and :mod:`npukit.contract`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .. import _check, viz
from ..contract import Partition
from ..deploy import ExecutedOp, Job, LayerTime

__all__ = [
    "executed_graph_figure",
    "partition_figure",
    "profile_figure",
    "timeline_figure",
    "throughput_figure",
    "latency_figure",
]


def _kind(op: ExecutedOp) -> str:
    if op.converts_precision:
        return "inserted conversion (precision, and layout if it changes)"
    if op.converts_layout:
        return "inserted Reorder (layout only)"
    if op.layer_type in ("Input", "Output"):
        return "input / output"
    if op.fused:
        return "fused layers"
    return "single layer"


_COLOURS = {"inserted Reorder (layout only)": viz.PALETTE[3],
            "inserted conversion (precision, and layout if it changes)": viz.PALETTE[1],
            "fused layers": viz.PALETTE[0], "single layer": viz.PALETTE[5], "input / output": viz.PALETTE[7]}


def executed_graph_figure(ops: Sequence[ExecutedOp], *, title: str | None = None) -> Any:
    """The executed graph as a chain of coloured boxes: fused layers, inserted Reorders, single layers.

    Each box is one executed operation in execution order; hovering shows its
    kernel, precision, layout and the original layers fused into it.
    Operations on constants only (weight conversions OpenVINO does once, at
    compile time) and Reshapes (no data moves) are left out. An operation
    that converts the precision is drawn as a precision conversion, whether
    or not it changes the layout too; a Reorder that changes only the
    layout is drawn as a layout Reorder.

    Examples
    --------
    >>> from npukit import deploy
    >>> from npukit.models import CameraNet
    >>> fig = executed_graph_figure(deploy.executed_graph(deploy.compile(CameraNet.pretrained().to_onnx())))
    >>> len(fig.data) >= 3
    True
    """
    import plotly.graph_objects as go

    ops = _check.sequence(ops, "ops", min_length=1)
    for i, op in enumerate(ops):
        if not isinstance(op, ExecutedOp):
            raise TypeError(f"ops[{i}] must be a deploy.ExecutedOp, got {type(op).__name__}")
    ops = [op for op in ops if not op.on_constants and op.layer_type != "Reshape"] or list(ops)
    fig = go.Figure()
    cols = 8
    xs = [i % cols for i in range(len(ops))]
    ys = [-(i // cols) for i in range(len(ops))]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#bbb", width=1), hoverinfo="skip",
                             showlegend=False))
    for kind, colour in _COLOURS.items():
        idx = [i for i, op in enumerate(ops) if _kind(op) == kind]
        if not idx:
            continue
        fig.add_trace(go.Scatter(
            x=[xs[i] for i in idx], y=[ys[i] for i in idx], mode="markers+text", name=kind,
            marker=dict(symbol="square", size=34, color=colour, line=dict(color="#333", width=1)),
            text=[ops[i].layer_type[:5] for i in idx], textfont=dict(size=9, color="white"),
            hovertext=[f"<b>{ops[i].name}</b><br>{ops[i].layer_type} · {ops[i].primitive}<br>"
                       f"{'/'.join(ops[i].input_precisions) or '-'} → {ops[i].output_precision} · "
                       f"{'/'.join(ops[i].input_layouts) or '-'} → {ops[i].output_layout}<br>"
                       f"fused: {', '.join(ops[i].original) or '(inserted by the runtime)'}" for i in idx],
            hoverinfo="text"))
    fig.update_xaxes(visible=False, range=[-0.7, cols - 0.3])
    fig.update_yaxes(visible=False, range=[min(ys) - 0.7, 0.7])
    return viz.style(fig, height=140 + 70 * (1 - min(ys)), title=title)


def partition_figure(part: Partition, *, title: str | None = None) -> Any:
    """Subgraphs as coloured spans of nodes (NPU / CPU), with the bytes each crossing copies.

    Examples
    --------
    >>> from npukit import contract
    >>> from npukit.models import CameraNet
    >>> p = contract.partition(CameraNet.pretrained().to_onnx(), contract.ILLUSTRATIVE_NPU.without("Relu"))
    >>> fig = partition_figure(p)
    >>> len(fig.layout.annotations) == len(p.crossings)
    True
    """
    import plotly.graph_objects as go

    if not isinstance(part, Partition):
        raise TypeError(f"part must be a contract.Partition, got {type(part).__name__}")
    fig = go.Figure()
    x = 0
    starts = []
    shown = set()
    for g, (device, names) in enumerate(part.subgraphs):
        starts.append(x)
        colour = viz.PALETTE[2] if device == "NPU" else viz.PALETTE[3]
        fig.add_trace(go.Bar(x=[len(names)], y=["graph"], base=[x], orientation="h", name=device,
                             marker=dict(color=colour, line=dict(color="white", width=2)),
                             legendgroup=device, showlegend=device not in shown,
                             hovertext=f"subgraph {g} on {device}: {len(names)} nodes<br>" + "<br>".join(names[:12])
                             + ("<br>…" if len(names) > 12 else ""), hoverinfo="text"))
        shown.add(device)
        x += len(names)
    for t, a, b, nbytes in part.crossings:
        fig.add_annotation(x=starts[b], y=0.45, text=f"{t}<br>{nbytes:,} B", showarrow=True, arrowhead=2, ax=0, ay=-40,
                           font=dict(size=10))
    fig.update_layout(barmode="stack", xaxis_title="nodes in execution order", yaxis=dict(visible=False))
    return viz.style(fig, height=260, title=title or f"{len(part.subgraphs)} subgraphs, "
                     f"{part.crossing_bytes:,} bytes cross per inference")


def profile_figure(rows: Sequence[LayerTime], *, top: int = 15, title: str | None = None) -> Any:
    """Horizontal bars of per-layer time, slowest first, coloured by the first tag.

    The tags are :func:`npukit.deploy.profile_layers`'s: a conversion the
    runtime inserted, a reference kernel, a fallback, then the roofline's
    verdict (``above roof`` faster than its bound, ``overhead-bound`` below
    :data:`npukit.deploy.OVERHEAD_FRACTION` of the layer's roof, else which
    side of the ridge it sits on).

    Examples
    --------
    >>> from npukit.deploy import LayerTime
    >>> fig = profile_figure([LayerTime("a", "Reorder", "jit", 3.0, 0.6, ("layout conversion",)),
    ...                       LayerTime("b", "Convolution", "brgconv", 2.0, 0.4, ())])
    >>> list(fig.data[0].y)
    ['a']
    """
    import plotly.graph_objects as go

    rows = _check.sequence(rows, "rows", min_length=1)
    for i, r in enumerate(rows):
        if not isinstance(r, LayerTime):
            raise TypeError(f"rows[{i}] must be a deploy.LayerTime, got {type(r).__name__}")
    top = _check.integer(top, "top", minimum=1)
    rows = sorted(rows, key=lambda r: -r.microseconds)[:top]
    tags = ["layout conversion", "precision conversion", "reference kernel", "fallback", "above roof",
            "overhead-bound", "memory-bound", "compute-bound", "untagged"]
    fig = go.Figure()
    for k, tag in enumerate(tags):
        mine = [r for r in rows if (r.tags[0] if r.tags else "untagged") == tag]
        if mine:
            fig.add_trace(go.Bar(x=[r.microseconds for r in mine], y=[r.name for r in mine], orientation="h",
                                 name=tag, marker_color=viz.PALETTE[k % len(viz.PALETTE)],
                                 hovertext=[f"{r.layer_type} · {r.kernel}<br>{r.share:.0%} of layer time<br>"
                                            f"{', '.join(r.tags) or '-'}"
                                            + ("" if r.roof_fraction is None else
                                               f"<br>{r.roof_fraction:.0%} of its roof") for r in mine],
                                 hoverinfo="text+x"))
    fig.update_layout(xaxis_title="median time per inference (µs)", barmode="stack",
                      yaxis=dict(categoryorder="array", categoryarray=[r.name for r in rows][::-1]))
    return viz.style(fig, height=120 + 24 * len(rows), title=title)


def timeline_figure(jobs: Sequence[Job], *, title: str | None = None) -> Any:
    """A Gantt chart of asynchronous jobs from their recorded timestamps, one row per request.

    Light bars: the host filling the request's input buffer; dark bars: from
    ``start_async`` to the completion callback. Gaps in a row are idle bubbles.

    Examples
    --------
    >>> from npukit.deploy import Job
    >>> fig = timeline_figure([Job(0, 0, 0.0, 0.001, 0.003), Job(1, 1, 0.001, 0.0015, 0.004)])
    >>> len(fig.data)
    2
    """
    import plotly.graph_objects as go

    jobs = _check.sequence(jobs, "jobs", min_length=1)
    for i, j in enumerate(jobs):
        if not isinstance(j, Job):
            raise TypeError(f"jobs[{i}] must be a deploy.Job, got {type(j).__name__}")
    ms = 1e3
    rows = [f"request {j.request}" for j in jobs]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=[(j.start - j.fill_start) * ms for j in jobs], base=[j.fill_start * ms for j in jobs],
                         y=rows, orientation="h", name="host fills the input", marker_color=viz.PALETTE[5],
                         hovertext=[f"job {j.job}: fill {(j.start - j.fill_start) * ms:.3f} ms" for j in jobs],
                         hoverinfo="text"))
    fig.add_trace(go.Bar(x=[(j.end - j.start) * ms for j in jobs], base=[j.start * ms for j in jobs], y=rows,
                         orientation="h", name="inference (start_async → callback)", marker_color=viz.PALETTE[0],
                         text=[str(j.job) for j in jobs], textposition="inside",
                         hovertext=[f"job {j.job}: {(j.end - j.start) * ms:.3f} ms" for j in jobs], hoverinfo="text"))
    fig.update_layout(barmode="overlay", xaxis_title="time since the first job (ms)",
                      yaxis=dict(autorange="reversed"))  # request 0 on top (a category order breaks in sliders)
    n = len({j.request for j in jobs})
    return viz.style(fig, height=160 + 40 * n, title=title)


def throughput_figure(results: Mapping[str, Mapping[int, float]], *,
                      spread: Mapping[str, Mapping[int, tuple]] | None = None, title: str | None = None) -> Any:
    """Throughput against the number of requests in flight, one line per configuration.

    ``results[label][n] = inferences per second``; ``spread[label][n] =
    (below, above)``, the distances from that point to the ends of its
    interquartile range over the rounds, drawn as whiskers.

    Examples
    --------
    >>> fig = throughput_figure({"LATENCY": {1: 900.0, 2: 950.0}, "THROUGHPUT": {1: 800.0, 2: 1500.0}})
    >>> [t.name for t in fig.data]
    ['LATENCY', 'THROUGHPUT']
    """
    import plotly.graph_objects as go

    if not isinstance(results, Mapping) or not results:
        raise TypeError(f"results must be a non-empty mapping label -> {{requests: inferences/s}}, got {type(results).__name__}")
    if spread is not None and not isinstance(spread, Mapping):
        raise TypeError(f"spread must map each label to {{requests: (below, above)}}, got {type(spread).__name__}")
    fig = go.Figure()
    for k, (label, pts) in enumerate(results.items()):
        if not isinstance(pts, Mapping):
            raise TypeError(f"results[{label!r}] must map a number of requests to inferences/s")
        ns = sorted(pts)
        error = None
        if spread is not None and label in spread:
            ends = [spread[label][n] for n in ns]
            error = dict(type="data", array=[b for _, b in ends], arrayminus=[a for a, _ in ends], thickness=1.2)
        fig.add_trace(go.Scatter(x=ns, y=[pts[n] for n in ns], mode="lines+markers", name=str(label), error_y=error,
                                 line=dict(color=viz.PALETTE[k % len(viz.PALETTE)])))
    fig.update_layout(xaxis_title="requests in flight", yaxis_title="inferences per second", xaxis=dict(dtick=1))
    return viz.style(fig, title=title)


def latency_figure(benchmarks: Mapping[str, Any], *, title: str | None = None) -> Any:
    """First inference against steady-state latency (median with its quartiles, p90, slowest) of several models.

    The median bar's whiskers reach the first and third quartiles of the
    steady-state runs; the 90th percentile is drawn only where the runs can
    tell it (:meth:`npukit.deploy.Benchmark.percentile`), and the slowest
    run stands in for the tail a short benchmark cannot resolve.

    Examples
    --------
    >>> from npukit.deploy import Benchmark
    >>> fig = latency_figure({"f32": Benchmark(0.004, (0.001, 0.0012, 0.0011))})
    >>> [t.name for t in fig.data]
    ['first inference', 'steady median', 'steady p90', 'slowest steady run']
    """
    import plotly.graph_objects as go

    from ..deploy import Benchmark

    if not isinstance(benchmarks, Mapping) or not benchmarks:
        raise TypeError(f"benchmarks must be a non-empty mapping label -> deploy.Benchmark, got {type(benchmarks).__name__}")
    labels = list(benchmarks)
    for k in labels:
        if not isinstance(benchmarks[k], Benchmark):
            raise TypeError(f"benchmarks[{k!r}] must be a deploy.Benchmark")

    def p90(b: Benchmark) -> float | None:
        try:
            return b.percentile(90)
        except ValueError:  # too few runs to tell it
            return None

    quart = {k: np.percentile(benchmarks[k].times, [25, 75]) for k in labels}
    fig = go.Figure()
    series = [("first inference", lambda b: b.first), ("steady median", lambda b: b.median),
              ("steady p90", p90), ("slowest steady run", lambda b: b.maximum)]
    for k, (name, f) in enumerate(series):
        values = [f(benchmarks[lab]) for lab in labels]
        error = None
        if name == "steady median":
            error = dict(type="data", array=[(quart[lab][1] - v) * 1e3 for lab, v in zip(labels, values)],
                         arrayminus=[(v - quart[lab][0]) * 1e3 for lab, v in zip(labels, values)], thickness=1.2)
        fig.add_trace(go.Bar(x=labels, y=[None if v is None else v * 1e3 for v in values], name=name, error_y=error,
                             marker_color=viz.PALETTE[[3, 0, 5, 4][k]]))
    fig.update_layout(barmode="group", yaxis_title="milliseconds", yaxis_type="log")
    return viz.style(fig, title=title)
