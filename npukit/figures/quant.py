"""Figures of chapter 6, "Quantization" (chapters/06_quant.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; what they draw is computed by :mod:`npukit.quant`.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import _check, viz
from ..quant import QParams, _from_range, choose_range, qrange

__all__ = [
    "clipping_figure",
    "weight_ranges_figure",
    "calibration_figure",
    "layer_error_figure",
]


def _hist(x: np.ndarray, bins: int, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    counts, edges = np.histogram(x, bins=bins, range=(lo, hi))
    return (edges[:-1] + edges[1:]) / 2, counts


def clipping_figure(x: np.ndarray, *, bits: Sequence[int] = (8, 6, 4), methods: Sequence[str] = ("minmax", "percentile", "mse"),
                    percentile: float = 99.9, title: str = "") -> Any:
    """Interactive figure: a tensor's histogram, the clip range and the error of each quantizer choice.

    One slider position per (bits, method): unsigned asymmetric quantization
    to ``2^bits`` levels with the range from ``method``, chosen for that
    number of levels (:func:`npukit.quant.choose_range`: the MSE-optimal
    clip moves in as the levels get coarser). Dashed lines mark the clip
    points; the title gives the mean squared error and the share of values
    clipped.

    See chapter 6, "Choosing activation ranges: calibration" (chapters/06_quant.md).

    Parameters
    ----------
    x : numpy.ndarray
        float values (e.g. a ReLU output), finite.
    bits : sequence of int
        Bit widths from 2 to 8.
    methods : sequence of str
        Range methods.
    percentile : float
        For ``"percentile"``.
    title : str
        Prefix of every title.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        For a bad ``x``, bit width or method.

    Examples
    --------
    >>> fig = clipping_figure(np.random.default_rng(0).exponential(size=1000).astype(np.float32), bits=(8, 4))
    >>> len(fig.layout.sliders[0].steps)
    6
    """
    import plotly.graph_objects as go

    x = _check.finite(_check.real_array(x, "x"), "x").astype(np.float32).ravel()  # complex would drop its imaginary part
    if x.size == 0:
        raise ValueError("x must not be empty")
    methods, title = _check.sequence(methods, "methods", min_length=1), _check.text(title, "title")
    bits = [_check.integer(b, "bits[i]", minimum=2) for b in _check.sequence(bits, "bits", min_length=1)]
    if max(bits) > 8:
        raise ValueError(f"bits must be at most 8, got {max(bits)}")
    centres, counts = _hist(x, 120, float(x.min()), float(x.max()))
    figs, labels = [], []
    for b in bits:
        for m in _check.sequence(list(methods), "methods", min_length=1):
            levels = 2**b
            lo, hi = choose_range(x, b, False, method=m, percentile=percentile)    # searched for b bits
            s, z = _from_range(lo, hi, (0, levels - 1), False)
            scale, zp = float(s), int(z)
            q = np.clip(np.rint(x / np.float32(scale)) + zp, 0, levels - 1)
            err = float(np.mean(((q - zp) * scale - x) ** 2))
            lo, hi = -zp * scale, (levels - 1 - zp) * scale
            clipped = float(np.mean((x > hi + scale / 2) | (x < lo - scale / 2)))
            fig = go.Figure(go.Bar(x=centres, y=counts, marker_color=viz.PALETTE[0], name="values"))
            for edge in (lo, hi):
                fig.add_vline(x=edge, line_dash="dash", line_color=viz.PALETTE[5])
            fig.update_layout(title=f"{title}{b} bits, {m}: MSE {err:.2e}, {clipped:.2%} clipped",
                              xaxis_title="value", yaxis_title="count", yaxis_type="log", showlegend=False)
            figs.append(fig)
            labels.append(f"{b}-bit {m}")
    return viz.slider_figure(figs, labels, prefix="quantizer: ")


def weight_ranges_figure(w: np.ndarray, name: str = "") -> Any:
    """Per-output-channel range of a weight tensor against the one range a per-tensor scale must cover.

    Bars: ``max|w|`` of each output channel (axis 0); dashed line: the
    tensor's ``max|w|``. A channel whose bar is far below the line gets only
    a few of the 255 int8 levels from a per-tensor scale.

    See chapter 6, "Per tensor, per channel, per block" (chapters/06_quant.md).

    Raises
    ------
    TypeError, ValueError
        For a non-float or empty ``w``.

    Examples
    --------
    >>> fig = weight_ranges_figure(np.float32([[1, -2], [0.1, 0.05]]), "toy")
    >>> [round(float(v), 2) for v in fig.data[0].y]
    [2.0, 0.1]
    """
    import plotly.graph_objects as go

    w, name = _check.finite(_check.as_array(w, "w"), "w"), _check.text(name, "name")
    if w.size == 0 or w.dtype.kind != "f" or w.ndim < 2:  # (output channels, ...): one bar per channel
        raise ValueError(f"w must be a non-empty float weight array (output channels, ...), got {w.dtype} {w.shape}")
    amax = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
    fig = go.Figure(go.Bar(x=np.arange(len(amax)), y=amax.astype(float), marker_color=viz.PALETTE[0],
                           name="per channel"))
    fig.add_hline(y=float(amax.max()), line_dash="dash", line_color=viz.PALETTE[5],
                  annotation_text="per-tensor range", annotation_position="top right")
    fig.update_layout(xaxis_title=f"output channel of {name}", yaxis_title="max |w|", showlegend=False)
    return viz.style(fig, height=360)


def calibration_figure(samples: dict[str, np.ndarray], qparams: dict[str, QParams], *, xlabel: str = "value") -> Any:
    """Histograms of one tensor under several data sets, with each calibration's clip point.

    See chapter 6, "The calibration pitfall, reproduced" (chapters/06_quant.md).

    Parameters
    ----------
    samples : dict of str to numpy.ndarray
        Label → values of the tensor (e.g. the input pixels of each data set).
    qparams : dict of str to QParams
        Label → the quantizer calibrated on that data; its top end is drawn
        as a dashed line in the set's color.
    xlabel : str

    Raises
    ------
    TypeError, ValueError
        For empty or mismatched inputs.

    Examples
    --------
    >>> from npukit.quant import choose_qparams
    >>> a = np.linspace(0, 1, 100, dtype=np.float32)
    >>> fig = calibration_figure({"a": a}, {"a": choose_qparams(a, "uint8", False)})
    >>> len(fig.data)
    1
    """
    import plotly.graph_objects as go

    if not isinstance(samples, dict) or not samples:
        raise TypeError("samples must be a non-empty dict of label -> array")
    xlabel = _check.text(xlabel, "xlabel")
    if not isinstance(qparams, dict) or set(qparams) - set(samples):
        raise ValueError("qparams must map labels of samples to QParams")
    hi = max(float(np.max(v)) for v in samples.values())
    fig = go.Figure()
    for i, (label, v) in enumerate(samples.items()):
        centres, counts = _hist(np.asarray(v).ravel(), 100, 0.0, hi)
        color = viz.PALETTE[i % len(viz.PALETTE)]
        fig.add_trace(go.Scatter(x=centres, y=counts / max(counts.sum(), 1), mode="lines", name=label,
                                 line=dict(color=color)))
        if label in qparams:
            p = qparams[label]
            top = float(p.scale) * (qrange(p.dtype)[1] - int(p.zero_point))
            fig.add_vline(x=top, line_dash="dash", line_color=color)
    fig.update_layout(xaxis_title=xlabel, yaxis_title="share of values", yaxis_type="log")
    return viz.style(fig, height=380)


def layer_error_figure(layers: Sequence[str], series: dict[str, Sequence[float]], *, ylabel: str = "SQNR (dB)") -> Any:
    """Grouped bars: one error metric per layer for several quantizations.

    See chapter 6, "Choosing activation ranges: calibration" (chapters/06_quant.md).

    Examples
    --------
    >>> fig = layer_error_figure(["a", "b"], {"x": [30.0, 25.0], "y": [20.0, 18.0]})
    >>> len(fig.data)
    2
    """
    import plotly.graph_objects as go

    layers = [_check.text(v, f"layers[{i}]") for i, v in enumerate(_check.sequence(layers, "layers", min_length=1))]
    ylabel = _check.text(ylabel, "ylabel")
    if not isinstance(series, dict) or not series:
        raise TypeError("series must be a non-empty dict of label -> values")
    fig = go.Figure()
    for i, (label, values) in enumerate(series.items()):
        values = _check.sequence(list(values) if isinstance(values, np.ndarray) else values, f"series[{label!r}]")
        if len(values) != len(layers):
            raise ValueError(f"series[{label!r}] must have {len(layers)} values, got {len(values)}")
        fig.add_trace(go.Bar(x=layers, y=[float(v) for v in values], name=label,
                             marker_color=viz.PALETTE[i % len(viz.PALETTE)]))
    fig.update_layout(barmode="group", yaxis_title=ylabel)
    return viz.style(fig, height=380)
