"""Bad inputs for npukit.figures.systolic."""

import numpy as np
from badinput import bad

from npukit.figures import systolic as f

A = np.ones((2, 2), int)

CASES = [
    bad(f.dataflow_figure, 0, names="M"),
    bad(f.dataflow_figure, 2, 2, 2.5, exc=TypeError, names="K"),
    bad(f.animation_figure, A, A, 2, 2, dataflows=[], names="dataflows"),
    bad(f.animation_figure, A, A, 2, 2, dataflows=["xx"], names="dataflow"),
    bad(f.animation_figure, A, np.ones((3, 2), int), 2, 2, names="A's columns"),
    bad(f.busy_figure, {}, exc=TypeError, names="sims"),
    bad(f.busy_figure, {"x": 1}, exc=TypeError, names="sims['x']"),
    bad(f.cycle_terms_figure, {"x": 1}, exc=TypeError, names="estimates['x']"),
    bad(f.aspect_figure, [], exc=TypeError, names="sweeps"),
    bad(f.layers_figure, [], exc=TypeError, names="table"),
    bad(f.layers_slider_figure, [], [], names="figures"),
    bad(f.layers_slider_figure, [1], ["a"], exc=TypeError, names="table"),
    # obscure errors and text fields (issue 24)
    bad(f.aspect_figure, {"ws": 1}, exc=TypeError, names="sweeps['ws']"),
    bad(f.aspect_figure, {"ws": [(1, 2)]}, names="sweeps['ws'][0]"),
    bad(f.aspect_figure, {"ws": [(1, 2, 3)]}, title=0, exc=TypeError, names="title"),
    bad(f.layers_slider_figure, None, ["a"], exc=TypeError, names="tables"),
    bad(f.layers_slider_figure, 3, ["a"], exc=TypeError, names="tables"),
]
