"""Bad inputs for npukit.figures.tensors: one bad argument at a time, the others valid."""

import numpy as np
from badinput import bad

from npukit.figures import tensors as F

X = np.arange(12, dtype=np.float32).reshape(3, 4)

CASES = [
    # default_views
    bad(F.default_views, [[1, 2, 3], [4, 5, 6]], exc=TypeError, names="x"),
    bad(F.default_views, np.zeros(6), names="x"),
    bad(F.default_views, np.zeros((1, 6)), names="x"),
    bad(F.default_views, np.zeros((3, 2)), names="x"),
    # memory_map_figure
    bad(F.memory_map_figure, [X], exc=TypeError, names="views"),
    bad(F.memory_map_figure, "x", exc=TypeError, names="views"),
    bad(F.memory_map_figure, {}, names="views"),
    bad(F.memory_map_figure, {"x": [1, 2]}, exc=TypeError, names="views['x']"),
    bad(F.memory_map_figure, {0: X}, exc=TypeError, names="label in views"),
    bad(F.memory_map_figure, {"big": np.zeros(65)}, names="views['big']"),
    bad(F.memory_map_figure, {"x": X}, base=3, exc=TypeError, names="base"),
    bad(F.memory_map_figure, {"x": X}, base=np.zeros(12, np.float32), names="base"),  # unrelated to every view
    bad(F.memory_map_figure, {"tail": X.ravel()[6:], "all": X.ravel()}, base=X.ravel()[6:], names="base"),
    bad(F.memory_map_figure, {"ends": np.zeros(200, np.uint8)[::199]}, names="views['ends']"),
    bad(F.memory_map_figure, height=480.5, exc=TypeError, names="height"),
    bad(F.memory_map_figure, height="480", exc=TypeError, names="height"),
    bad(F.memory_map_figure, height=0, names="height"),
    # alignment_figure
    bad(F.alignment_figure, [{16: 1}], exc=TypeError, names="censuses"),
    bad(F.alignment_figure, {"a": [16, 32]}, exc=TypeError, names="censuses"),
    bad(F.alignment_figure, {}, names="censuses"),
    bad(F.alignment_figure, {"a": {16: 0}}, names="censuses['a']"),
    bad(F.alignment_figure, {"a": {16: -1, 32: 3}}, names="censuses['a'][16]"),
    bad(F.alignment_figure, {"a": {16: 2.5}}, exc=TypeError, names="censuses['a'][16]"),
    bad(F.alignment_figure, {"a": {16: "3"}}, exc=TypeError, names="censuses['a'][16]"),
    bad(F.alignment_figure, {"a": {24: 3}}, names="alignment in censuses['a']"),
    bad(F.alignment_figure, {"a": {"16": 3}}, exc=TypeError, names="alignment in censuses['a']"),
    bad(F.alignment_figure, {3: {16: 3}}, exc=TypeError, names="label in censuses"),
    bad(F.alignment_figure, {"a": {16: 3}}, height=380.5, exc=TypeError, names="height"),
    bad(F.alignment_figure, {"a": {16: 3}}, height=-1, names="height"),
    # views_slider_figure
    bad(F.views_slider_figure, {}, exc=TypeError, names="cases"),
    bad(F.views_slider_figure, [("x", (X, X))], exc=TypeError, names="cases"),
    bad(F.views_slider_figure, {"x": X}, exc=TypeError, names="cases['x']"),
    bad(F.views_slider_figure, {"x": (X, X, X)}, exc=TypeError, names="cases['x']"),
    bad(F.views_slider_figure, {3: (X, X)}, exc=TypeError, names="label"),
    bad(F.views_slider_figure, {"x": (np.zeros(100), np.zeros(100))}, names="has 100 elements"),
    bad(F.views_slider_figure, {"x": (X, X)}, prefix=3, exc=TypeError, names="prefix"),
    bad(F.views_slider_figure, {"x": (X, X)}, height=10, names="height"),
]
