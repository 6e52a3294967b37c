"""Figures of chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; what they draw comes from :mod:`npukit.data`,
:mod:`npukit.models` and :mod:`npukit.train`. Images are drawn by plotly
itself (a ``go.Image`` trace of RGB pixels), so a figure needs nothing but
plotly.js to show, offline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import _check, viz
from ..data import CLASSES
from ..models import CameraNet, summary

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = [
    "confusion_figure",
    "cost_figure",
    "samples_figure",
]


def confusion_figure(matrix: np.ndarray, *, title: str | None = None) -> go.Figure:
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
        If ``matrix`` is not a ``(K, K)`` array of counts >= 0 with
        ``K = len(CLASSES)``, or ``title`` is not a string.

    Examples
    --------
    >>> fig = confusion_figure(np.eye(8, dtype=int) * 5)
    >>> fig.data[0].type
    'heatmap'
    """
    import plotly.graph_objects as go

    k = len(CLASSES)
    matrix = _check.as_array(matrix, "matrix")
    if matrix.dtype.kind not in "iu":
        raise TypeError(f"matrix must hold integer counts, got dtype {matrix.dtype}")
    if matrix.shape != (k, k):
        raise ValueError(f"matrix must have shape ({k}, {k}), got {matrix.shape}")
    if matrix.size and matrix.min() < 0:
        raise ValueError(f"matrix must hold counts >= 0, got {int(matrix.min())}")
    title = _check.text(title, "title", optional=True)
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


def cost_figure(net: CameraNet, *, title: str | None = None) -> go.Figure:
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
        If ``net`` is not a CameraNet or ``title`` not a string.

    Examples
    --------
    >>> fig = cost_figure(CameraNet.pretrained())
    >>> [t.name for t in fig.data]
    ['share of MACs', 'share of parameters']
    """
    import plotly.graph_objects as go

    title = _check.text(title, "title", optional=True)
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


def samples_figure(images: np.ndarray, labels: np.ndarray, *, predictions: np.ndarray | None = None,
                   cols: int = 8, title: str | None = None) -> go.Figure:
    """A grid of images with their class names (and predictions, if given).

    The grid is one ``go.Image`` trace of RGB pixels (white gaps between the
    tiles, room for a name under each), the names are annotations.

    Parameters
    ----------
    images : numpy.ndarray
        Finite floats ``(n, 3, H, W)`` with 1 <= n <= 64; values are clipped
        to [0, 1].
    labels : numpy.ndarray
        Integer class indices into :data:`~npukit.data.CLASSES`, shape ``(n,)``.
    predictions : numpy.ndarray, optional
        Predicted class indices, shape ``(n,)``; a wrong one is shown in red
        as "→ predicted".
    cols : int
        Images per row (>= 1).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If an array has the wrong type, dtype or shape, a label is not a class
        index, ``cols`` is not a positive integer or ``title`` not a string.

    Examples
    --------
    >>> from npukit.data import shapes_dataset
    >>> fig = samples_figure(*shapes_dataset(8, seed=0), cols=4)
    >>> fig.data[0].type, fig.data[0].z.shape, len(fig.layout.annotations)
    ('image', (84, 134, 3), 8)
    """
    import plotly.graph_objects as go

    images = _check.as_array(images, "images")
    if images.ndim != 4 or images.shape[1] != 3 or not 1 <= len(images) <= 64:
        raise ValueError(f"images must have shape (n, 3, H, W) with 1 <= n <= 64, got {images.shape}")
    if images.dtype.kind != "f":
        raise TypeError(f"images must hold floats in [0, 1], got dtype {images.dtype}")
    _check.finite(images, "images")
    labels = _check.labels(labels, "labels", classes=len(CLASSES), n=len(images))
    if predictions is not None:
        predictions = _check.labels(predictions, "predictions", classes=len(CLASSES), n=len(images))
    cols = min(_check.integer(cols, "cols", minimum=1), len(images))
    title = _check.text(title, "title", optional=True)
    mosaic, annotations = _mosaic(images, labels, predictions, cols)
    fig = go.Figure(go.Image(z=mosaic, hoverinfo="skip"))
    fig.update_layout(annotations=annotations)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return viz.style(fig, height=int(110 + 95 * (-(-len(images) // cols))), title=title)


def _mosaic(images: np.ndarray, labels: np.ndarray, predictions: np.ndarray | None,
            cols: int) -> tuple[np.ndarray, list[dict]]:
    """The tiles as one uint8 (rows·(H+10), cols·(W+2)−2, 3) picture, and a name annotation per tile."""
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
    return mosaic, annotations
