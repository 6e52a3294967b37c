"""Figures of chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; what they draw comes from :mod:`npukit.data`,
:mod:`npukit.models` and :mod:`npukit.train`.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from .. import _check, viz
from ..data import CLASSES
from ..models import CameraNet, summary


__all__ = [
    "confusion_figure",
    "cost_figure",
    "samples_figure",
]


def confusion_figure(matrix: np.ndarray, *, title: str | None = None) -> Any:
    """A heatmap of a confusion matrix, each cell labelled with its count.

    Parameters
    ----------
    matrix : numpy.ndarray
        Square integer counts from :func:`confusion_matrix`.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``matrix`` is not a ``(K, K)`` array with ``K = len(CLASSES)``.

    Examples
    --------
    >>> fig = confusion_figure(np.eye(8, dtype=int) * 5)
    >>> fig.data[0].type
    'heatmap'
    """
    import plotly.graph_objects as go


    k = len(CLASSES)
    matrix = _check.as_array(matrix, "matrix")
    if matrix.shape != (k, k):
        raise ValueError(f"matrix must have shape ({k}, {k}), got {matrix.shape}")
    rows = matrix.sum(axis=1, keepdims=True)
    share = matrix / np.maximum(rows, 1)  # colour by the share of each true class
    fig = go.Figure(go.Heatmap(
        z=share, x=list(CLASSES), y=list(CLASSES), text=matrix, texttemplate="%{text}",
        colorscale=[[0, "#ffffff"], [0.05, "#cfe3f2"], [1, viz.PALETTE[0]]], zmin=0, zmax=1,
        colorbar=dict(title="share of row", tickformat=".0%"),
        hovertemplate="true %{y}<br>predicted %{x}<br>%{text} images<extra></extra>"))
    fig.update_xaxes(title="predicted class", tickangle=-30)
    fig.update_yaxes(title="true class", autorange="reversed")
    return viz.style(fig, height=520, title=title)


def cost_figure(net: CameraNet, *, title: str | None = None) -> Any:
    """Where CameraNet's work and weights are: each layer's share of MACs and of parameters.

    Parameters
    ----------
    net : CameraNet
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        Two bar series over the layers that do multiply–accumulates
        (convolutions and ``fc``).

    Raises
    ------
    TypeError
        If ``net`` is not a CameraNet.

    Examples
    --------
    >>> fig = cost_figure(CameraNet.pretrained())
    >>> [t.name for t in fig.data]
    ['share of MACs', 'share of parameters']
    """
    import plotly.graph_objects as go


    rows = [r for r in summary(net) if r["macs"] > 0]
    macs = np.array([r["macs"] for r in rows], dtype=float)
    params = np.array([r["params"] for r in rows], dtype=float)
    names = [r["layer"] for r in rows]
    fig = go.Figure([
        go.Bar(x=names, y=macs / macs.sum(), name="share of MACs", marker_color=viz.PALETTE[0],
               customdata=macs, hovertemplate="%{x}: %{customdata:,.0f} MACs (%{y:.1%})<extra></extra>"),
        go.Bar(x=names, y=params / params.sum(), name="share of parameters", marker_color=viz.PALETTE[1],
               customdata=params, hovertemplate="%{x}: %{customdata:,.0f} weights (%{y:.1%})<extra></extra>"),
    ])
    fig.update_layout(barmode="group", legend=dict(x=0.01, y=0.99))
    fig.update_yaxes(title="share of the network", tickformat=".0%")
    fig.update_xaxes(title="layer")
    return viz.style(fig, height=400, title=title)


def _png_data_uri(rgb: np.ndarray) -> str:
    """Encode an (H, W, 3) uint8 image as a PNG ``data:`` URI (stdlib only)."""
    import base64

    h, w, _ = rgb.shape
    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))  # filter type 0 per row

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def samples_figure(images: np.ndarray, labels: np.ndarray, *, predictions: np.ndarray | None = None,
                   cols: int = 8, title: str | None = None) -> Any:
    """A grid of images with their class names (and predictions, if given).

    Parameters
    ----------
    images : numpy.ndarray
        float32 ``(n, 3, H, W)`` with values in [0, 1] (1 <= n <= 64).
    labels : numpy.ndarray
        Integer labels, shape ``(n,)``.
    predictions : numpy.ndarray, optional
        Predicted labels; a wrong one is shown in red as "→ predicted".
    cols : int
        Images per row.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If the arrays have the wrong type or shape.

    Examples
    --------
    >>> from npukit.data import shapes_dataset
    >>> fig = samples_figure(*shapes_dataset(8, seed=0), cols=4)
    >>> len(fig.data), len(fig.layout.annotations)
    (1, 8)
    """
    import plotly.graph_objects as go


    images = _check.as_array(images, "images")
    if images.ndim != 4 or images.shape[1] != 3 or not 1 <= len(images) <= 64:
        raise ValueError(f"images must have shape (n, 3, H, W) with 1 <= n <= 64, got {images.shape}")
    labels = _check.as_array(labels, "labels")
    if labels.shape != (len(images),):
        raise ValueError(f"labels must have shape ({len(images)},), got {labels.shape}")
    if predictions is not None and _check.as_array(predictions, "predictions").shape != labels.shape:
        raise ValueError(f"predictions must have shape {labels.shape}, got {predictions.shape}")
    cols = min(_check.integer(cols, "cols", minimum=1), len(images))
    n, _, h, w = images.shape
    rows = -(-n // cols)
    gap, label_space = 2, 10  # pixels between tiles, and under each tile for its name
    cell_w, cell_h = w + gap, h + label_space
    mosaic = np.full((rows * cell_h, cols * cell_w - gap, 3), 255, np.uint8)
    annotations = []
    for i in range(n):
        r, c = divmod(i, cols)
        tile = np.clip(images[i].transpose(1, 2, 0), 0, 1)
        mosaic[r * cell_h:r * cell_h + h, c * cell_w:c * cell_w + w] = np.round(tile * 255).astype(np.uint8)
        text, color = CLASSES[labels[i]], "#222"
        if predictions is not None and predictions[i] != labels[i]:
            text, color = f"{CLASSES[labels[i]]} → {CLASSES[predictions[i]]}", viz.PALETTE[3]
        annotations.append(dict(x=c * cell_w + w / 2, y=r * cell_h + h + 0.5, text=text, showarrow=False,
                                yanchor="top", font=dict(size=10, color=color), xref="x", yref="y"))
    fig = go.Figure(go.Image(source=_png_data_uri(mosaic), hoverinfo="skip"))
    fig.update_layout(annotations=annotations)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return viz.style(fig, height=int(110 + 95 * rows), title=title)
