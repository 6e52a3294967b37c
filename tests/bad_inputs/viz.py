"""Bad inputs for npukit.viz: one bad argument at a time, the others valid."""

import plotly.graph_objects as go
from badinput import bad

from npukit import viz

FIGS = [go.Figure(go.Bar(y=[k])) for k in (1, 2)]

CASES = [
    # style
    bad(viz.style, {"data": []}, exc=TypeError, names="fig"),
    bad(viz.style, go.Figure(), height=0, names="height"),
    bad(viz.style, go.Figure(), height=300.5, exc=TypeError, names="height"),
    bad(viz.style, go.Figure(), title=3, exc=TypeError, names="title"),
    # table
    bad(viz.table, [(1, 2), (3,)], ["a", "b"], names="rows[1]"),
    bad(viz.table, ["ab"], ["a", "b"], exc=TypeError, names="rows[0]"),
    bad(viz.table, 3, ["a"], exc=TypeError, names="rows"),
    bad(viz.table, "ab", ["a"], exc=TypeError, names="rows"),
    bad(viz.table, [("a", "b")], "ab", exc=TypeError, names="header"),
    bad(viz.table, [], [], names="header"),
    # slider_figure
    bad(viz.slider_figure, [], [], names="figures"),
    bad(viz.slider_figure, FIGS[0], ["a"], exc=TypeError, names="figures"),
    bad(viz.slider_figure, [FIGS[0], "fig"], ["a", "b"], exc=TypeError, names="figures[1]"),
    bad(viz.slider_figure, FIGS, ["a"], names="labels"),
    bad(viz.slider_figure, FIGS, "ab", exc=TypeError, names="labels"),
    bad(viz.slider_figure, FIGS, ["a", "b"], prefix=1, exc=TypeError, names="prefix"),
    bad(viz.slider_figure, FIGS, ["a", "b"], height=-1, names="height"),
]
