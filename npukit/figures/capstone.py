"""Figures of chapter 8, "The minimal closed loop" (chapters/08_capstone.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; what they draw is computed by :mod:`npukit.capstone`
(and, for the course map, passed in by the page).
"""

from __future__ import annotations

import numbers
from typing import Any, Mapping, Sequence

import numpy as np

from .. import _check, viz
from ..capstone import Loop

__all__ = ["STATIONS", "course_map_figure", "explain_figure", "warmup_figure", "variants_figure"]

#: CameraNet's path from a trained model to an answer on an NPU, one station per
#: chapter: (chapter, page, title, the idea at that point of the path). The
#: order is the path's, not the book's.
STATIONS: tuple[tuple[int, str, str, str], ...] = (
    (0, "00_cameranet", "Meet CameraNet", "a trained model: weights, data, accuracy"),
    (1, "01_tensors", "Tensors are memory", "the input is bytes: shape, dtype, strides, alignment"),
    (3, "03_graphs", "Graphs and the roofline", "a static graph: MACs, bytes, roofline; fold, fuse, plan"),
    (6, "06_quant", "Quantization", "INT8 weights and activations in a QDQ graph"),
    (7, "07_deploy", "Deploying to an NPU", "compile for a device: contract, partition, profile"),
    (2, "02_layouts", "Layouts", "the runtime reorders NCHW into the layout its kernels want"),
    (4, "04_gemm", "GEMM and tiling", "every layer a GEMM, tiled to fit the on-chip buffer"),
    (5, "05_systolic", "Systolic arrays", "the tiles stream through a grid of MACs: cycles, utilization"),
    (8, "08_capstone", "The minimal closed loop", "verify against float, benchmark, profile, explain: back to the start"),
)

# Where each station sits: a snake of two rows, left to right, then right to left.
_POS = [(0, 1), (1, 1), (2, 1), (3, 1), (4, 1), (4, 0), (3, 0), (2, 0), (1, 0)]


def course_map_figure(facts: Mapping[int, str] | None = None, *, base: str = "", suffix: str = ".html",
                      title: str | None = None) -> Any:
    """The course on one page: every chapter's idea as a station on CameraNet's path, linked to its chapter.

    Each box names a chapter (a link to its page: ``base + page + suffix``)
    and its idea at that point of the path; ``facts`` adds a line per chapter,
    e.g. a number measured on this build. Hovering a box shows the idea.

    Parameters
    ----------
    facts : mapping of int to str, optional
        Chapter number → one short line shown in its box.
    base : str
        Prefix of the links: ``""`` from a chapter page, ``"../chapters/"`` from a lab in the book,
        ``"../../chapters/"`` from the student edition in ``labs/student/``.
    suffix : str
        ``".html"`` for the built book's pages, ``".md"`` for the chapters' sources (what a notebook
        outside the book can open).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``facts`` is not a mapping of chapter numbers 0–8 to strings,
        ``base`` is not a string or ``suffix`` not one of the two.

    Examples
    --------
    >>> fig = course_map_figure({1: "12,288 B per image"})
    >>> sum("href" in (a.text or "") for a in fig.layout.annotations)
    9
    """
    import plotly.graph_objects as go

    facts = _facts(facts)
    base = _check.text(base, "base")
    suffix = _check.one_of(suffix, "suffix", (".html", ".md"))
    fig = go.Figure()
    w, h = 0.46, 0.36
    for (chapter, page, name, idea), (x, y) in zip(STATIONS, _POS):
        colour = viz.PALETTE[chapter % len(viz.PALETTE)] if chapter != 8 else "#222222"
        fig.add_shape(type="rect", x0=x - w, x1=x + w, y0=y - h, y1=y + h, line=dict(color=colour, width=2),
                      fillcolor=colour, opacity=0.16, layer="below")
        extra = f"<br><i>{_wrap(facts[chapter])}</i>" if chapter in facts else ""
        fig.add_annotation(x=x, y=y, showarrow=False, align="center", font=dict(size=10.5),
                           text=(f"<b><a href='{base}{page}{suffix}' target='_self'>{chapter} · {name}</a></b><br>"
                                 f"{_wrap(idea)}{extra}"))
    for (x0, y0), (x1, y1) in zip(_POS, _POS[1:]):
        if y0 == y1:
            sx = 1 if x1 > x0 else -1
            tail, head = (x0 + sx * w, y0), (x1 - sx * w, y1)
        else:
            tail, head = (x0, y0 - h), (x1, y1 + h)
        fig.add_annotation(x=head[0], y=head[1], ax=tail[0], ay=tail[1], xref="x", yref="y", axref="x", ayref="y",
                           showarrow=True, arrowhead=2, arrowwidth=1.5, arrowcolor="#555", text="")
    (xa, ya), (xb, yb) = _POS[-1], _POS[0]
    fig.add_annotation(x=xb - w * 0.4, y=yb - h, ax=xa - w * 0.4, ay=ya + h, xref="x", yref="y", axref="x",
                       ayref="y", showarrow=True, arrowhead=2, arrowwidth=1.5, arrowcolor="#222", text="")
    fig.add_annotation(x=0.05, y=0, showarrow=False, font=dict(size=10.5, color="#555"), align="left",
                       text="Follow the arrows:<br>CameraNet's path from<br>a trained model to an<br>"
                            "answer on an NPU,<br>and back. Each box<br>links to its chapter.")
    fig.add_trace(go.Scatter(x=[p[0] for p in _POS], y=[p[1] for p in _POS], mode="markers", opacity=0,
                             marker=dict(size=60), showlegend=False, hoverinfo="text",
                             hovertext=[f"chapter {c}: {name}<br>{idea}" for c, _, name, idea in STATIONS]))
    fig.update_xaxes(visible=False, range=[-0.5, 4.5], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-0.4, 1.4], fixedrange=True)
    return viz.style(fig, height=460, title=title)


def _facts(facts: Any) -> dict[int, str]:
    if facts is None:
        return {}
    if not isinstance(facts, Mapping):
        raise TypeError(f"facts must be a mapping of chapter numbers to strings, got {type(facts).__name__}")
    out = {}
    for k, v in facts.items():
        _check.integer(k, "facts key", minimum=0)
        if k > 8:
            raise ValueError(f"facts keys must be chapter numbers 0–8, got {k}")
        out[int(k)] = _check.text(v, f"facts[{k}]")
    return out


def _wrap(text: str, width: int = 26) -> str:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "<br>".join(lines + [line])


def explain_figure(loop: Loop, precision: str = "INT8", *, title: str | None = None) -> Any:
    """Each layer's measured time beside what the earlier chapters predict for it.

    Three bars per Conv/Gemm layer (µs, log scale): the time measured by the
    per-layer profile in ``precision``; this machine's roofline lower bound
    (chapter 3, float32); and the estimate for the assumed NPU array
    (chapter 5, INT8). A measured time of zero (below the profiler's
    resolution) draws no bar.

    Raises
    ------
    TypeError, ValueError
        For a ``loop`` that is not a :class:`npukit.capstone.Loop` or a
        ``precision`` it did not measure.

    Examples
    --------
    >>> from npukit import capstone
    >>> from npukit.graphs import MachineSpec
    >>> from npukit.models import CameraNet
    >>> loop = capstone.closed_loop(CameraNet.pretrained(), heldout=20, runs=5,
    ...                             machine=MachineSpec(1e11, 1e10, "example", "given", "given"))
    >>> [t.name for t in explain_figure(loop, "FP32").data]
    ['measured here, FP32', "this machine's roofline bound", 'assumed NPU array (INT8)']
    """
    import plotly.graph_objects as go

    _check.instance(loop, "loop", Loop, "capstone.Loop")
    _check.one_of(precision, "precision", tuple(loop.latency))
    names = [r.name for r in loop.layers]
    bars = [(f"measured here, {precision}", [r.measured_us.get(precision, 0.0) or None for r in loop.layers],
             viz.PALETTE[0]),
            ("this machine's roofline bound", [r.roofline_us for r in loop.layers], viz.PALETTE[7]),
            ("assumed NPU array (INT8)", [r.array_us for r in loop.layers], viz.PALETTE[2])]
    fig = go.Figure([go.Bar(x=names, y=y, name=n, marker_color=c,
                            customdata=[[r.kind, r.macs, r.bound] for r in loop.layers],
                            hovertemplate="%{x} (%{customdata[0]}): %{y:.2f} µs<br>%{customdata[1]:,} MACs, "
                                          "%{customdata[2]}-bound here<extra>" + n + "</extra>")
                     for n, y, c in bars])
    fig.update_layout(barmode="group", yaxis=dict(type="log", title="µs per image (log)"),
                      legend=dict(orientation="h", y=1.0, yanchor="bottom", x=0))
    viz.style(fig, height=440, title=title)
    fig.update_layout(margin=dict(t=95), title=dict(y=0.97, yanchor="top"))
    return fig


def warmup_figure(times: Mapping[str, Sequence[float]], *, title: str | None = None) -> Any:
    """The first inferences of fresh requests, one line per model: how fast the steady state arrives.

    Parameters
    ----------
    times : mapping of str to sequence of float
        Label → seconds of inference 1, 2, 3 … of a freshly compiled model.

    Raises
    ------
    TypeError, ValueError
        If ``times`` is not a non-empty mapping of labels to non-empty
        sequences of positive numbers.

    Examples
    --------
    >>> fig = warmup_figure({"FP32": [1e-3, 2e-4, 1e-4]})
    >>> list(fig.data[0].x)
    [1, 2, 3]
    """
    import plotly.graph_objects as go

    if not isinstance(times, Mapping) or not times:
        raise TypeError(f"times must be a non-empty mapping of labels to sequences of seconds, got {times!r:.60}")
    fig = go.Figure()
    for i, (label, ts) in enumerate(times.items()):
        ts = _check.sequence(ts, f"times[{label!r}]", min_length=1)
        for t in ts:
            if isinstance(t, bool) or not isinstance(t, numbers.Real) or not t > 0:
                raise ValueError(f"times[{label!r}] must hold positive numbers of seconds, got {t!r}")
        fig.add_trace(go.Scatter(x=list(range(1, len(ts) + 1)), y=[t * 1e6 for t in ts], mode="lines+markers",
                                 name=str(label), line=dict(color=viz.PALETTE[i % len(viz.PALETTE)])))
    fig.update_layout(xaxis_title="inference number of a fresh request",
                      yaxis=dict(type="log", title="µs (log)"))
    return viz.style(fig, height=380, title=title)


def variants_figure(loops: Mapping[str, Loop], comparison: Any = None, *, title: str | None = None) -> Any:
    """Median latency against MACs for each variant and precision: does time follow the work?

    With ``comparison`` (a :class:`npukit.measure.Comparison` whose names
    are ``"<variant> <precision>"``, every variant timed in the same
    interleaved rounds) each point is that comparison's median and its
    whiskers the interquartile range of its rounds; otherwise each point is
    the variant's own :attr:`Loop.latency` median, without whiskers.

    Parameters
    ----------
    loops : mapping of str to Loop
        Variant label → its :func:`npukit.capstone.closed_loop`.
    comparison : npukit.measure.Comparison, optional

    Raises
    ------
    TypeError, ValueError
        If ``loops`` is not a non-empty mapping of labels to Loops, or
        ``comparison`` not a Comparison.

    Examples
    --------
    >>> from npukit import capstone
    >>> from npukit.graphs import MachineSpec
    >>> from npukit.models import CameraNet
    >>> loop = capstone.closed_loop(CameraNet.pretrained(), heldout=20, runs=5,
    ...                             machine=MachineSpec(1e11, 1e10, "example", "given", "given"))
    >>> [t.name for t in variants_figure({"shipped": loop}).data]
    ['FP32', 'BF16', 'INT8']
    """
    import plotly.graph_objects as go

    from ..timing import Comparison

    if comparison is not None:
        _check.instance(comparison, "comparison", Comparison, "measure.Comparison")
    if not isinstance(loops, Mapping) or not loops:
        raise TypeError(f"loops must be a non-empty mapping of labels to capstone.Loop, got {type(loops).__name__}")
    for k, v in loops.items():
        _check.instance(v, f"loops[{k!r}]", Loop, "capstone.Loop")
    labels = list(loops)
    order = sorted(labels, key=lambda k: loops[k].macs)
    fig = go.Figure()
    precisions = [p for p in ("FP32", "BF16", "INT8") if any(p in lp.latency for lp in loops.values())]
    for i, p in enumerate(precisions):
        if comparison is not None:
            ks = [k for k in order if f"{k} {p}" in comparison.names]
            w = [comparison.whiskers(f"{k} {p}", scale=1e6) for k in ks]
            y, error = [m for m, _, _ in w], dict(type="data", array=[h for _, _, h in w],
                                                   arrayminus=[lo for _, lo, _ in w], thickness=1.2)
        else:
            ks = [k for k in order if p in loops[k].latency]
            y, error = [loops[k].latency[p].median * 1e6 for k in ks], None
        if not ks:
            continue
        fig.add_trace(go.Scatter(x=[loops[k].macs for k in ks], y=y, error_y=error,
                                 mode="lines+markers+text", name=p, text=ks if i == 0 else None,
                                 textposition="top center", line=dict(color=viz.PALETTE[i])))
    macs = [lp.macs for lp in loops.values()]
    fig.update_layout(xaxis=dict(type="log", title="MACs per image (log)",
                                 range=[np.log10(min(macs)) - 0.12, np.log10(max(macs)) + 0.12]),
                      yaxis=dict(type="log", title="median latency, µs (log)"))
    return viz.style(fig, height=420, title=title)
