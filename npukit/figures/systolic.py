"""Figures of chapter 5, "Systolic arrays" (chapters/05_systolic.md).

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`; what they draw is computed by :mod:`npukit.systolic`
(one GEMM on one array) and :mod:`npukit.accelerator` (whole networks).
The animation is made of plotly frames with a slider and play buttons, so it
runs in the static page without a kernel.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .. import _check, viz
from ..accelerator import ModelTable
from ..systolic import DATAFLOWS, Estimate, Simulation, _dataflow, estimate, mapping, simulate

__all__ = [
    "dataflow_figure",
    "animation_figure",
    "busy_figure",
    "cycle_terms_figure",
    "aspect_figure",
    "layers_figure",
    "layers_slider_figure",
]

_NAMES = {"os": "output-stationary", "ws": "weight-stationary", "is": "input-stationary"}
_IDLE, _HELD, _BUSY = 0, 1, 2


def _cell_text(trace: dict, t: int, r: int, c: int) -> str:
    """What PE (r, c) holds in cycle t, for the animation's labels."""
    a, b, out = trace["a"][t, r, c], trace["b"][t, r, c], trace["c"][t, r, c]
    lines = []
    if a[0] >= 0:
        lines.append(f"A{a[0]},{a[1]}")
    if b[0] >= 0:
        lines.append(f"B{b[0]},{b[1]}")
    if out[0] >= 0:
        lines.append(f"→C{out[0]},{out[1]}")
    return "<br>".join(lines)


def _frames(sim: Simulation, df: str, fold_cycles: int) -> list[tuple[str, np.ndarray, list[str], str]]:
    """(name, state grid, cell labels, caption) for every cycle of one simulation."""
    tr = sim.trace
    assert tr is not None
    R, C = sim.rows, sim.cols
    held = (tr["b"][..., 0] >= 0) if df == "ws" else (tr["a"][..., 0] >= 0) if df == "is" else (tr["c"][..., 0] >= 0)
    out = []
    for t in range(sim.cycles):
        state = np.where(tr["busy"][t], _BUSY, np.where(held[t], _HELD, _IDLE))
        labels = [_cell_text(tr, t, r, c) for r in range(R) for c in range(C)]
        phase = "weight preload" if df == "ws" and tr["phase"][t] == 0 else \
            "input preload" if tr["phase"][t] == 0 else "compute"
        caption = (f"{_NAMES[df]}: cycle {t} of 0–{sim.last_cycle}, fold {int(tr['fold'][t]) + 1} of "
                   f"{len(sim.fold_cycles)} ({fold_cycles} cycles each), {phase}; "
                   f"{int(tr['busy'][t].sum())} of {R * C} PEs busy")
        out.append((f"{df}-{t}", state, labels, caption))
    return out


def _animation_controls(names: list[str], dfs: list[str], R: int, C: int) -> dict:
    """Layout of the animation: one slider step per frame, a play button per dataflow, a pause button."""
    steps = [dict(method="animate", label=n.replace("-", " ").upper(), args=[[n], dict(mode="immediate", frame=dict(
        duration=0, redraw=True), transition=dict(duration=0))]) for n in names]
    buttons = [dict(label=f"▶ {df.upper()}", method="animate",
                    args=[[n for n in names if n.startswith(df + "-")],
                          dict(mode="immediate", fromcurrent=False, frame=dict(duration=450, redraw=True),
                               transition=dict(duration=0))]) for df in dfs]
    buttons.append(dict(label="❚❚", method="animate",
                        args=[[None], dict(mode="immediate", frame=dict(duration=0, redraw=False))]))
    return dict(
        updatemenus=[dict(type="buttons", direction="right", buttons=buttons, x=0, y=-0.02, xanchor="left",
                          yanchor="top", showactive=False)],
        sliders=[dict(active=0, steps=steps, pad=dict(t=60), currentvalue=dict(prefix="dataflow, cycle: ",
                                                                               font=dict(size=13)),
                      ticklen=0, font=dict(size=8))],
        xaxis=dict(title="array column", side="top", tickvals=list(range(C)), range=[-0.5, C - 0.5], showgrid=False,
                   zeroline=False),
        yaxis=dict(title="array row", tickvals=list(range(R)), range=[R - 0.5, -0.5], showgrid=False,
                   zeroline=False),
        showlegend=False,
    )


def _arrow(x: float, y: float, ax: float, ay: float, text: str, color: str, dash: bool = False) -> dict:
    """An annotation arrow from (ax, ay) to (x, y), labelled at its tail."""
    return dict(x=x, y=y, ax=ax, ay=ay, xref="x", yref="y", axref="x", ayref="y", text=text, showarrow=True,
                arrowhead=2, arrowsize=1.2, arrowwidth=2.5 if not dash else 1.5, arrowcolor=color,
                font=dict(size=12, color=color), opacity=0.6 if dash else 1.0)


def dataflow_figure(M: int = 6, N: int = 5, K: int = 4) -> Any:
    """What stays and what moves in each dataflow: three 3×3 arrays with their operands' paths.

    For each of output-, weight- and input-stationary (left to right) it
    draws the PEs, labelled with what each holds, the streamed operands
    entering from the left and the top, the preload (dashed) and where the
    results leave; the axis labels give the GEMM dimension each array
    dimension holds for ``C[M×N] = A[M×K]·B[K×N]``, from
    :func:`npukit.systolic.mapping`.

    Parameters
    ----------
    M, N, K : int
        The GEMM whose dimensions label the arrays.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        For a non-integer or non-positive dimension.

    Examples
    --------
    >>> fig = dataflow_figure()
    >>> len(fig.layout.shapes), [a.text for a in fig.layout.annotations][:2]
    (27, ['<b>output-stationary</b>', 'rows ← M = 6, columns ← N = 5<br>streamed in time: K = 4'])
    """
    import plotly.graph_objects as go

    blue, dark, orange, green = "#9ecae1", "#3182bd", viz.PALETTE[1], viz.PALETTE[2]
    held = {"os": "C", "ws": "B", "is": "A"}
    streamed = {"os": "A", "ws": "A", "is": "Bᵀ"}
    shapes, notes = [], []
    for p, df in enumerate(DATAFLOWS):
        m, x0 = mapping(M, N, K, df), p * 5.2
        notes += [dict(x=x0 + 1.5, y=1.6, text=f"<b>{_NAMES[df]}</b>", showarrow=False, font=dict(size=14)),
                  dict(x=x0 + 1.5, y=-4.45, text=f"rows ← {m.names[0]} = {m.row_dim}, columns ← {m.names[1]} = "
                       f"{m.col_dim}<br>streamed in time: {m.names[2]} = {m.stream}", showarrow=False,
                       font=dict(size=12))]
        for r in range(3):
            for c in range(3):
                shapes.append(dict(type="rect", x0=x0 + c + 0.1, x1=x0 + c + 0.9, y0=-r - 0.9, y1=-r - 0.1,
                                   fillcolor=blue, line=dict(color="#555")))
                notes.append(dict(x=x0 + c + 0.5, y=-r - 0.5, text=held[df], showarrow=False, font=dict(size=13)))
            notes.append(_arrow(x0 + 0.1, -0.5 - r, x0 - 0.9, -0.5 - r, f"{streamed[df]} →" if r == 1 else "", orange))
        for c in range(3):
            if df == "os":
                notes.append(_arrow(x0 + 0.5 + c, -0.1, x0 + 0.5 + c, 0.9, "B ↓" if c == 1 else "", orange))
            else:
                notes.append(_arrow(x0 + 0.5 + c, -0.1, x0 + 0.5 + c, 0.9, "preload ↓" if c == 1 else "", dark,
                                    dash=True))
                notes.append(_arrow(x0 + 0.5 + c, -3.5, x0 + 0.5 + c, -2.9, "", green))
        notes.append(dict(x=x0 + 1.5, y=-3.7, showarrow=False, font=dict(size=11, color=green if df != "os" else "#555"),
                          text="each PE sums one C[m, n]" if df == "os" else
                          "partial sums ↓, C leaves" if df == "ws" else "partial sums ↓, Cᵀ leaves"))
    fig = go.Figure()
    fig.update_layout(shapes=shapes, annotations=notes, xaxis=dict(visible=False, range=[-1.4, 15.2]),
                      yaxis=dict(visible=False, range=[-4.9, 1.9], scaleanchor="x"), showlegend=False)
    viz.style(fig, height=360)
    fig.update_layout(margin=dict(l=10, r=10, t=20, b=10))
    return fig


def animation_figure(A: np.ndarray, B: np.ndarray, rows: int = 4, cols: int = 4,
                     dataflows: Sequence[str] = ("ws", "os", "is")) -> Any:
    """An animation of ``A @ B`` on a small array, cycle by cycle, from :func:`npukit.systolic.simulate`.

    Each cell is a PE: grey when idle, blue while it holds a stationary
    value (a weight, an input, or in output-stationary the sum of its
    ``C[m, n]`` from its first MAC to the end of the fold), orange in a cycle
    where it does a MAC; its label names the elements of ``A``, ``B`` and
    ``C`` it holds. One slider runs over every cycle of every dataflow, in
    the order of ``dataflows`` (weight-stationary first, as the chapter
    describes it); the buttons play one dataflow from its first cycle.
    Plotly frames, so it works in a static page.

    Parameters
    ----------
    A, B : numpy.ndarray
        Small integer or float matrices (``M × K`` and ``K × N``).
    rows, cols : int
        Array size.
    dataflows : sequence of str
        Which of ``"ws"``, ``"os"``, ``"is"`` to include, in order.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        As :func:`npukit.systolic.simulate` (its trace must fit), or for an
        empty or unknown ``dataflows``.

    Examples
    --------
    >>> fig = animation_figure(np.ones((2, 2), int), np.ones((2, 2), int), 2, 2, dataflows=["os"])
    >>> len(fig.frames), len(fig.layout.sliders[0].steps)
    (4, 4)
    """
    import plotly.graph_objects as go

    dfs = [_dataflow(d) for d in _check.sequence(dataflows, "dataflows", min_length=1)]
    frames = []
    starts = {}
    for df in dfs:
        sim = simulate(A, B, rows, cols, df, trace=True)
        starts[df] = len(frames)
        frames.extend(_frames(sim, df, sim.fold_cycles[0]))
    R, C = sim.rows, sim.cols
    xs, ys = np.meshgrid(np.arange(C), np.arange(R))
    scale = [[0, "#eeeeee"], [0.33, "#eeeeee"], [0.33, "#9ecae1"], [0.67, "#9ecae1"], [0.67, viz.PALETTE[1]],
             [1, viz.PALETTE[1]]]

    def traces(state: np.ndarray, labels: list[str]) -> list:
        return [
            go.Heatmap(z=state, zmin=0, zmax=2, colorscale=scale, showscale=False, xgap=3, ygap=3,
                       hoverinfo="skip"),
            go.Scatter(x=xs.ravel(), y=ys.ravel(), mode="text", text=labels, textfont=dict(size=11),
                       hoverinfo="skip"),
        ]

    name0, state0, labels0, cap0 = frames[0]
    fig = go.Figure(data=traces(state0, labels0),
                    frames=[go.Frame(name=n, data=traces(s, lab), layout=dict(title_text=cap))
                            for n, s, lab, cap in frames])
    fig.update_layout(**_animation_controls([n for n, *_ in frames], dfs, R, C))
    viz.style(fig, height=560, title=cap0)
    fig.update_layout(margin=dict(t=110, b=150), title=dict(font_size=13, y=0.98))
    return fig


def busy_figure(sims: Mapping[str, Simulation]) -> Any:
    """Busy PEs per cycle for one or more simulations (fill, steady state, drain).

    Parameters
    ----------
    sims : mapping of str to Simulation
        Label → a :func:`npukit.systolic.simulate` result.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        If ``sims`` is empty or holds something other than a Simulation.

    Examples
    --------
    >>> s = simulate(np.ones((6, 3), int), np.ones((3, 4), int), 3, 4, "ws")
    >>> int(busy_figure({"WS": s}).data[0].y.max())
    12
    """
    import plotly.graph_objects as go

    if not isinstance(sims, Mapping) or not sims:
        raise TypeError(f"sims must be a non-empty mapping of label to Simulation, got {type(sims).__name__}")
    fig = go.Figure()
    for i, (label, s) in enumerate(sims.items()):
        if not isinstance(s, Simulation):
            raise TypeError(f"sims[{label!r}] must be a Simulation, got {type(s).__name__}")
        fig.add_trace(go.Scatter(x=np.arange(s.cycles), y=s.busy, mode="lines", name=label,
                                 line=dict(color=viz.PALETTE[i % len(viz.PALETTE)], shape="hv")))
    s0 = next(iter(sims.values()))
    fig.add_hline(y=s0.rows * s0.cols, line=dict(color="#444", dash="dash"))
    fig.update_layout(xaxis_title="cycle", yaxis_title="PEs doing a MAC")
    return viz.style(fig, height=380, title=f"Busy PEs per cycle on a {s0.rows}×{s0.cols} array")


def cycle_terms_figure(estimates: Mapping[str, Estimate]) -> Any:
    """Stacked bars: where one fold's cycles go (preload, fill, stream, drain), times the folds.

    Parameters
    ----------
    estimates : mapping of str to Estimate
        Label → an :func:`npukit.systolic.estimate` result.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``estimates`` is empty or holds something other than an Estimate.

    Examples
    --------
    >>> fig = cycle_terms_figure({"WS": estimate(10, 7, 9, 4, 6, "ws")})
    >>> [t.name for t in fig.data], list(fig.data[2].y)
    (['weight/input preload', 'skew fill', 'stream', 'drain'], [60])
    """
    import plotly.graph_objects as go

    if not isinstance(estimates, Mapping) or not estimates:
        raise TypeError("estimates must be a non-empty mapping of label to Estimate")
    for k, e in estimates.items():
        if not isinstance(e, Estimate):
            raise TypeError(f"estimates[{k!r}] must be an Estimate, got {type(e).__name__}")
    labels = list(estimates)
    fig = go.Figure()
    for i, (term, name) in enumerate((("preload", "weight/input preload"), ("fill", "skew fill"),
                                      ("stream", "stream"), ("drain", "drain"))):
        ys = [getattr(e, term) * e.folds for e in estimates.values()]
        fig.add_trace(go.Bar(x=labels, y=ys, name=name, marker_color=viz.PALETTE[i],
                             hovertemplate="%{x}: %{y:,} cycles<extra>" + name + "</extra>"))
    fig.update_layout(barmode="stack", yaxis_title="cycles (all folds)")
    return viz.style(fig, height=400, title="Where the cycles go")


def aspect_figure(sweeps: Mapping[str, Sequence[tuple[int, int, int]]], *, title: str | None = None) -> Any:
    """Cycles against array shape at a fixed PE count, one line per dataflow or network.

    Parameters
    ----------
    sweeps : mapping of str to sequence of (rows, cols, cycles)
        From :func:`npukit.accelerator.aspect_sweep`.
    title : str, optional
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``sweeps`` is not a non-empty mapping.

    Examples
    --------
    >>> fig = aspect_figure({"ws": [(1, 4, 90), (2, 2, 50), (4, 1, 70)]})
    >>> list(fig.data[0].x)
    ['1×4', '2×2', '4×1']
    """
    import plotly.graph_objects as go

    if not isinstance(sweeps, Mapping) or not sweeps:
        raise TypeError("sweeps must be a non-empty mapping of label to (rows, cols, cycles) rows")
    title = _check.text(title, "title", optional=True)
    for label, rows in sweeps.items():
        for k, row in enumerate(_check.sequence(rows, f"sweeps[{label!r}]", min_length=1)):
            for v, what in zip(_check.sequence(row, f"sweeps[{label!r}][{k}]", length=3), ("rows", "cols", "cycles")):
                _check.integer(v, f"sweeps[{label!r}][{k}] {what}", minimum=1)
    fig = go.Figure()
    for i, (label, rows) in enumerate(sweeps.items()):
        rows = list(rows)
        best = min(rows, key=lambda x: x[2])
        fig.add_trace(go.Scatter(x=[f"{r}×{c}" for r, c, _ in rows], y=[n for *_, n in rows], mode="lines+markers",
                                 name=f"{label} (best {best[0]}×{best[1]})",
                                 line=dict(color=viz.PALETTE[i % len(viz.PALETTE)])))
    fig.update_layout(xaxis_title="array rows × columns", yaxis=dict(title="cycles (log)", type="log"))
    return viz.style(fig, height=420, title=title or "Same PEs, different shapes")


def layers_figure(table: ModelTable) -> Any:
    """Utilization of each layer of a network on one array (bars), with its share of the cycles.

    Parameters
    ----------
    table : ModelTable
        From :func:`npukit.accelerator.model_table`.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError
        If ``table`` is not a ModelTable.

    Examples
    --------
    >>> from npukit.accelerator import model_table, resnet18_layers
    >>> fig = layers_figure(model_table(resnet18_layers(), 32, 32, "ws"))
    >>> len(fig.data[0].x)
    12
    """
    import plotly.graph_objects as go

    if not isinstance(table, ModelTable):
        raise TypeError(f"table must be an accelerator.ModelTable, got {type(table).__name__}")
    names = [x.layer.name + (f" (×{x.layer.count})" if x.layer.count > 1 else "") for x in table.layers]
    share = [x.cycles / table.cycles for x in table.layers]
    fig = go.Figure(go.Bar(
        x=names, y=[x.utilization for x in table.layers], marker_color=viz.PALETTE[0],
        text=[f"{s:.0%}" if s >= 0.01 else f"{s:.1%}" for s in share], textposition="outside",
        textfont=dict(size=11),
        hovertemplate="%{x}<br>utilization %{y:.1%}<br>%{text} of the cycles<extra></extra>",
    ))
    fig.add_hline(y=table.utilization, line=dict(color=viz.PALETTE[3], dash="dash"),
                  annotation_text=f"whole network {table.utilization:.1%}", annotation_position="top right")
    fig.update_layout(yaxis=dict(title="utilization (label: share of cycles)", tickformat=".0%", range=[0, 1.12]),
                      xaxis_tickangle=-35)
    fig = viz.style(fig, height=520, title=f"{table.rows}×{table.cols} array, {_NAMES[table.dataflow]}")
    fig.update_layout(margin=dict(b=170))
    return fig


def layers_slider_figure(tables: Sequence[ModelTable], labels: Sequence[str]) -> Any:
    """:func:`layers_figure` for several arrays under one slider (the static form of a live control).

    Parameters
    ----------
    tables : sequence of ModelTable
        One per slider position.
    labels : sequence of str
        The slider's labels.

    Returns
    -------
    plotly.graph_objects.Figure

    Raises
    ------
    TypeError, ValueError
        As :func:`layers_figure` and :func:`npukit.viz.slider_figure`.

    Examples
    --------
    >>> from npukit.accelerator import model_table, resnet18_layers
    >>> ts = [model_table(resnet18_layers(), n, n, "ws") for n in (16, 32)]
    >>> len(layers_slider_figure(ts, ["16×16", "32×32"]).layout.sliders[0].steps)
    2
    """
    if isinstance(tables, (str, bytes, Mapping)) or not hasattr(tables, "__iter__"):
        raise TypeError(f"tables must be a sequence of accelerator.ModelTable, got {type(tables).__name__}")
    fig = viz.slider_figure([layers_figure(t) for t in _check.sequence(list(tables), "tables")], labels,
                            prefix="array: ", height=600)
    fig.update_layout(margin=dict(b=260))
    fig.layout.sliders[0].pad = dict(t=190)
    return fig
