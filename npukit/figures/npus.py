"""Figures of chapter 9, "Real NPUs, measured" (chapters/09_npus.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; what they draw is computed by :mod:`npukit.npus`
(published measurements, bounds, comparisons). Choices between precisions,
devices and step counts are plotly buttons, dropdowns and sliders, so they
work in the static book without a kernel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import _check, viz
from ..npus import Comparison

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["PRECISION_LABELS", "measured_vs_bound_figure", "fraction_figure", "int8_figure", "pipeline_figure",
           "device_figure"]

#: How the figures name AI Hub's precisions.
PRECISION_LABELS = {"w8a8": "INT8 (w8a8)", "float": "float (FP16 on the NPU)", "w8a16": "w8a16",
                    "w8a16_mixed_int16": "w8a16, mixed INT16"}
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "star", "hexagon", "pentagon", "triangle-down")


def _comparisons(x: Any, name: str = "comparisons") -> tuple[Comparison, ...]:
    items = _check.sequence(x, name, min_length=1)
    for i, c in enumerate(items):
        _check.instance(c, f"{name}[{i}]", Comparison, "npus.Comparison")
    return items


def _title(title: Any) -> str | None:
    return _check.text(title, "title", optional=True)


def measured_vs_bound_figure(comparisons: Sequence[Comparison], *, title: str | None = None) -> go.Figure:
    """Measured latency against the roofline bound, log-log, one point per (model, device, precision).

    Colours are devices, symbols models; the solid line is y = x (a run on
    its bound), the dotted ones 3× and 10× above it. Buttons show one
    precision at a time or all of them. No point can sit below y = x.

    Parameters
    ----------
    comparisons : sequence of npus.Comparison
        From :func:`npukit.npus.compare`.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``comparisons`` is empty or holds something else.

    Examples
    --------
    >>> from npukit import npus
    >>> t = npus.table()
    >>> cs = [npus.compare(t.fastest(n, "Snapdragon X Elite CRD", "w8a8")) for n in ("resnet18", "resnet50")]
    >>> fig = measured_vs_bound_figure(cs)
    >>> len(fig.data), [b.label for b in fig.layout.updatemenus[0].buttons][:2]
    (6, ['all', 'INT8 (w8a8)'])
    """
    import plotly.graph_objects as go

    cs = _comparisons(comparisons)
    devices = sorted({c.measurement.device for c in cs})
    models = sorted({c.work.name for c in cs})
    precisions = [p for p in PRECISION_LABELS if any(c.measurement.precision == p for c in cs)]
    fig = go.Figure()
    lo = min(c.bound.seconds for c in cs) * 1e3 / 2
    hi = max(c.measurement.ms for c in cs) * 2
    for k, dash in ((1, "solid"), (3, "dot"), (10, "dot")):
        mid = math.sqrt(lo * hi / k) * 3            # a point well inside the plot, for the line's label
        fig.add_trace(go.Scatter(x=[lo, mid, hi / k], y=[lo * k, mid * k, hi], mode="lines+text",
                                 name="y = x (the bound)" if k == 1 else f"{k}× the bound",
                                 text=["", "y = x: the bound" if k == 1 else f"{k}× the bound", ""],
                                 textposition="top left",
                                 line=dict(color="#555", dash=dash, width=1.5 if k == 1 else 1), hoverinfo="skip",
                                 showlegend=False))
    owner = []
    for p in precisions:
        for i, d in enumerate(devices):
            pts = [c for c in cs if c.measurement.device == d and c.measurement.precision == p]
            if not pts:
                continue
            fig.add_trace(go.Scatter(
                x=[c.bound.seconds * 1e3 for c in pts], y=[c.measurement.ms for c in pts], mode="markers",
                name=f"{d}", legendgroup=d, showlegend=p == precisions[0] or len(precisions) == 1,
                marker=dict(size=10, color=viz.PALETTE[i % len(viz.PALETTE)],
                            symbol=[_SYMBOLS[models.index(c.work.name) % len(_SYMBOLS)] for c in pts],
                            line=dict(width=0.5, color="#222")),
                text=[f"{c.work.name} · {PRECISION_LABELS[p]} · {c.measurement.runtime}<br>measured "
                      f"{c.measurement.ms:.3g} ms, bound {c.bound.seconds * 1e3:.3g} ms ({c.bound.limit}); "
                      f"{c.ratio:.1f}× the bound" for c in pts],
                hovertemplate="%{text}<extra>%{fullData.name}</extra>"))
            owner.append(p)
    for j, mname in enumerate(models):           # a legend entry per model, for the symbols
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=mname, legendgroup="models",
                                 legendgrouptitle_text="models" if j == 0 else None,
                                 marker=dict(size=9, color="#999", symbol=_SYMBOLS[j % len(_SYMBOLS)])))
        owner.append("legend")
    n_lines = 3
    buttons = [dict(label="all", method="update", args=[{"visible": [True] * (n_lines + len(owner))}])]
    for p in precisions:
        buttons.append(dict(label=PRECISION_LABELS[p], method="update",
                            args=[{"visible": [True] * n_lines + [o in (p, "legend") for o in owner]}]))
    viz.style(fig, height=520, title=title)
    fig.update_layout(xaxis=dict(type="log", title="roofline lower bound (ms)", range=[math.log10(lo), math.log10(hi)]),
                      yaxis=dict(type="log", title="published latency (ms)", range=[math.log10(lo), math.log10(hi)]),
                      updatemenus=[dict(type="buttons", direction="right", x=0, y=1.12, xanchor="left",
                                        buttons=buttons)])
    return fig


def fraction_figure(comparisons: Sequence[Comparison], *, title: str | None = None) -> go.Figure:
    """Delivered rate as a fraction of each device's peak: bars per model, one colour per device.

    Delivered = 2·MACs ÷ measured time. Buttons choose the precision.
    Comparisons without a peak (``fraction`` None) are left out.

    Parameters
    ----------
    comparisons : sequence of npus.Comparison
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``comparisons`` is empty, holds something else, or none has a peak.

    Examples
    --------
    >>> from npukit import npus
    >>> c = npus.compare(npus.table().fastest("resnet50", "Snapdragon X Elite CRD", "w8a8"))
    >>> fraction_figure([c]).data[0].y[0] == c.fraction
    True
    """
    import plotly.graph_objects as go

    cs = [c for c in _comparisons(comparisons) if c.fraction is not None]
    if not cs:
        raise ValueError("comparisons must include at least one run on a device with a published peak")
    devices = sorted({c.measurement.device for c in cs})
    models = [m for m in dict.fromkeys(c.work.name for c in sorted(cs, key=lambda c: c.work.macs))]
    precisions = [p for p in PRECISION_LABELS if any(c.measurement.precision == p for c in cs)]
    fig, owner = go.Figure(), []
    for p in precisions:
        for i, d in enumerate(devices):
            pts = {c.work.name: c for c in cs if c.measurement.device == d and c.measurement.precision == p}
            if not pts:
                continue
            fig.add_trace(go.Bar(x=[m for m in models if m in pts], y=[pts[m].fraction for m in models if m in pts],
                                 name=d, marker_color=viz.PALETTE[i % len(viz.PALETTE)], visible=p == precisions[0],
                                 text=[f"{pts[m].delivered_tops:.1f} TOPS" for m in models if m in pts],
                                 textposition="none",
                                 hovertemplate="%{x}: %{y:.1%} of peak (%{text})<extra>%{fullData.name}</extra>"))
            owner.append(p)
    buttons = [dict(label=PRECISION_LABELS[p], method="update", args=[{"visible": [o == p for o in owner]}])
               for p in precisions]
    viz.style(fig, height=460, title=title)
    fig.update_layout(barmode="group", yaxis=dict(title="delivered ÷ peak", tickformat=".0%"),
                      xaxis=dict(title="model (ordered by MACs)", tickangle=-25),
                      updatemenus=[dict(type="buttons", direction="right", x=0, y=1.15, xanchor="left",
                                        buttons=buttons)])
    return fig


def int8_figure(ratios: Mapping[str, Mapping[str, Mapping[str, float]]], *, band: tuple[float, float] = (0.6, 0.8),
                labels: Mapping[str, str] | None = None, title: str | None = None) -> go.Figure:
    """INT8 latency ÷ float latency per model within one runtime, one dot per device, a claimed range as a band.

    One colour per runtime, its dots set side by side at each model; hovering
    names the device. A ratio compares two runs of one runtime, so a change
    of runtime is never counted as a change of precision.

    Parameters
    ----------
    ratios : mapping
        ``{runtime: {model: {device: w8a8 ms / float ms}}}``.
    band : tuple of float
        The range of ratios a claim promises (default 0.6–0.8: "20–40 % lower").
    labels : mapping, optional
        ``{runtime: name shown}`` (default: the runtimes' keys).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``ratios`` is empty or not a mapping of mappings of mappings of positive numbers, ``labels`` not a
        mapping of strings, or ``band`` not two increasing positive numbers.

    Examples
    --------
    >>> fig = int8_figure({"onnx": {"resnet50": {"A": 0.4}}, "tflite": {"resnet50": {"A": 0.3, "B": 0.5}}})
    >>> [(t.name, list(t.y)) for t in fig.data]
    [('onnx', [0.4]), ('tflite', [0.3, 0.5])]
    """
    import plotly.graph_objects as go

    if not isinstance(ratios, Mapping) or not ratios:
        raise TypeError("ratios must be a non-empty mapping {runtime: {model: {device: ratio}}}, got "
                        f"{type(ratios).__name__}")
    band = _check.sequence(band, "band", length=2)
    lo, hi = (_check.positive(v, f"band[{i}]") for i, v in enumerate(band))
    if lo >= hi:
        raise ValueError(f"band must be (low, high) with low < high, got {band}")
    labels = {} if labels is None else _check.instance(labels, "labels", Mapping, "mapping {runtime: name}")
    models: list[str] = []
    for rt, per in ratios.items():
        for m, by_device in _check.instance(per, f"ratios[{rt!r}]", Mapping, "mapping {model: {device: ratio}}"
                                            ).items():
            _check.instance(by_device, f"ratios[{rt!r}][{m!r}]", Mapping, "mapping {device: ratio}")
            if m not in models:
                models.append(m)
    fig = go.Figure()
    width = 0.6 / len(ratios)
    for i, (rt, per) in enumerate(ratios.items()):
        xs, ys, devices = [], [], []
        for m, by_device in per.items():
            for d, r in by_device.items():
                xs.append(models.index(m) + (i - (len(ratios) - 1) / 2) * width)
                ys.append(_check.positive(r, f"ratios[{rt!r}][{m!r}][{d!r}]"))
                devices.append(d)
        name = _check.text(labels.get(rt, rt), f"labels[{rt!r}]")
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", name=name, customdata=devices,
                                 marker=dict(size=9, color=viz.PALETTE[i % len(viz.PALETTE)],
                                             symbol=_SYMBOLS[i % len(_SYMBOLS)]),
                                 hovertemplate="%{customdata}: INT8 takes %{y:.2f} of float's time"
                                               "<extra>%{fullData.name}</extra>"))
    viz.style(fig, height=460, title=title)
    fig.add_hrect(y0=lo, y1=hi, fillcolor=viz.PALETTE[1], opacity=0.15, line_width=0,
                  annotation_text="the claim's range", annotation_position="top left")
    fig.add_hline(y=1, line=dict(color="#555", dash="dot"))
    fig.update_layout(yaxis=dict(title="INT8 latency ÷ float latency, same runtime", range=[0, 1.3]),
                      xaxis=dict(title="model", tickangle=-20, tickmode="array",
                                 tickvals=list(range(len(models))), ticktext=models),
                      legend=dict(title="runtime"))
    return fig


def pipeline_figure(seconds: Mapping[int, Mapping[str, Mapping[str, float]]], *, claim_s: float | None = None,
                    title: str | None = None) -> go.Figure:
    """Stable Diffusion's seconds per image, stacked by component, one bar per device; a slider picks the steps.

    Parameters
    ----------
    seconds : mapping
        ``{steps: {device: {"text encoder": s, "UNet": s, "VAE decoder": s}}}``.
    claim_s : float, optional
        A claimed time per image, drawn as a dashed line.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``seconds`` is empty or malformed, or ``claim_s`` is not a positive number.

    Examples
    --------
    >>> s = {n: {"X": {"text encoder": 0.01, "UNet": 0.1 * n, "VAE decoder": 0.2}} for n in (10, 20)}
    >>> fig = pipeline_figure(s, claim_s=3.2)
    >>> len(fig.data), len(fig.layout.sliders[0].steps)
    (6, 2)
    """
    import plotly.graph_objects as go

    if not isinstance(seconds, Mapping) or not seconds:
        raise TypeError(f"seconds must be a non-empty mapping {{steps: {{device: {{part: s}}}}}}, got "
                        f"{type(seconds).__name__}")
    claim = None if claim_s is None else _check.positive(claim_s, "claim_s")
    figs, labels = [], []
    for steps, per_device in seconds.items():
        _check.integer(steps, "steps", minimum=1)
        fig = go.Figure()
        devices = list(_check.instance(per_device, f"seconds[{steps}]", Mapping, "mapping {device: {part: s}}"))
        parts = list(dict.fromkeys(p for d in devices for p in per_device[d]))
        for i, part in enumerate(parts):
            fig.add_trace(go.Bar(y=devices, x=[per_device[d].get(part, 0.0) for d in devices], name=part,
                                 orientation="h", marker_color=viz.PALETTE[i % len(viz.PALETTE)],
                                 hovertemplate=f"{part}: %{{x:.2f}} s<extra>%{{y}}</extra>"))
        shapes = [dict(type="line", yref="paper", y0=0, y1=1, x0=claim, x1=claim,
                       line=dict(color=viz.PALETTE[3], dash="dash"))] if claim else []
        fig.update_layout(title=dict(text=f"{steps} steps, classifier-free guidance"), shapes=shapes)
        figs.append(fig)
        labels.append(str(steps))
    out = viz.slider_figure(figs, labels, prefix="denoising steps: ", height=480)
    out.update_layout(barmode="stack", xaxis=dict(title="seconds per 512×512 image"), margin=dict(l=200))
    if title:
        viz.style(out, height=480, title=title)
    return out


def device_figure(comparisons: Sequence[Comparison], *, title: str | None = None) -> go.Figure:
    """Per device (a dropdown): each model's published latency beside its roofline bound, log scale.

    The static equivalent of lab 9's live control.

    Parameters
    ----------
    comparisons : sequence of npus.Comparison
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``comparisons`` is empty or holds something else.

    Examples
    --------
    >>> from npukit import npus
    >>> t = npus.table()
    >>> cs = [npus.compare(t.fastest("resnet50", d, "w8a8")) for d in ("Snapdragon X Elite CRD", "Samsung Galaxy S25")]
    >>> fig = device_figure(cs)
    >>> len(fig.data), len(fig.layout.updatemenus[0].buttons)
    (4, 2)
    """
    import plotly.graph_objects as go

    cs = _comparisons(comparisons)
    devices = sorted({c.measurement.device for c in cs})
    fig, owner = go.Figure(), []
    for d in devices:
        pts = sorted((c for c in cs if c.measurement.device == d), key=lambda c: (c.work.macs, c.measurement.precision))
        x = [f"{c.work.name.split('/')[-1]} · {c.measurement.precision}" for c in pts]
        fig.add_trace(go.Bar(x=x, y=[c.bound.seconds * 1e3 for c in pts], name="roofline bound",
                             marker_color=viz.PALETTE[0], visible=d == devices[0],
                             text=[c.bound.limit for c in pts], textposition="none",
                             hovertemplate="%{x}: bound %{y:.3g} ms (%{text})<extra></extra>"))
        fig.add_trace(go.Bar(x=x, y=[c.measurement.ms for c in pts], name="published", marker_color=viz.PALETTE[1],
                             visible=d == devices[0], text=[f"{c.ratio:.1f}× the bound" for c in pts],
                             textposition="none",
                             hovertemplate="%{x}: %{y:.3g} ms, %{text}<extra></extra>"))
        owner += [d, d]
    buttons = [dict(label=d, method="update", args=[{"visible": [o == d for o in owner]}]) for d in devices]
    viz.style(fig, height=480, title=title)
    fig.update_layout(barmode="group", yaxis=dict(type="log", title="ms per inference"), xaxis=dict(tickangle=-30),
                      updatemenus=[dict(type="dropdown", x=0, y=1.15, xanchor="left", buttons=buttons)])
    return fig
