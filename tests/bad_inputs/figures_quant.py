"""Bad inputs for npukit.figures.quant."""

import numpy as np
from badinput import bad

from npukit.figures import quant as fq
from npukit.quant import choose_qparams

A = np.float32([0.0, 1.0, 2.0])

CASES = [
    bad(fq.clipping_figure, [1.0, 2.0], exc=TypeError, names="x"),
    bad(fq.clipping_figure, np.float32([np.nan]), names="x"),
    bad(fq.clipping_figure, A, bits=(9,), names="bits"),
    bad(fq.clipping_figure, A, bits=(1,), names="bits"),
    bad(fq.clipping_figure, A, methods=("entropy",), names="method"),
    bad(fq.weight_ranges_figure, np.zeros(0, np.float32), names="w"),
    bad(fq.weight_ranges_figure, "w", exc=TypeError, names="w"),
    bad(fq.calibration_figure, [], {}, exc=TypeError, names="samples"),
    bad(fq.calibration_figure, {"a": A}, {"b": choose_qparams(A, "uint8", False)}, names="qparams"),
    bad(fq.layer_error_figure, ["a"], {"x": [1.0, 2.0]}, names="series"),
    bad(fq.layer_error_figure, "ab", {"x": [1.0]}, exc=TypeError, names="layers"),
    # complex or bool data; text fields (issue 24)
    bad(fq.clipping_figure, A.astype(np.complex64), exc=TypeError, names="x"),
    bad(fq.clipping_figure, A.astype(bool), exc=TypeError, names="x"),
    bad(fq.clipping_figure, A, methods=None, exc=TypeError, names="methods"),
    bad(fq.clipping_figure, A, methods="minmax", exc=TypeError, names="methods"),
    bad(fq.clipping_figure, A, title=None, exc=TypeError, names="title"),
    bad(fq.weight_ranges_figure, np.ones((2, 2), np.float32), 3, exc=TypeError, names="name"),
    bad(fq.calibration_figure, {"a": A}, {"a": choose_qparams(A, "uint8", False)}, xlabel=b"x", exc=TypeError,
        names="xlabel"),
    bad(fq.layer_error_figure, [None, "b"], {"x": [1.0, 2.0]}, exc=TypeError, names="layers[0]"),
    bad(fq.layer_error_figure, ["a", "b"], {"x": [1.0, 2.0]}, ylabel=3, exc=TypeError, names="ylabel"),
    bad(fq.layer_error_figure, ["a", "b"], {"x": 1}, exc=TypeError, names="series['x']"),
    bad(fq.weight_ranges_figure, np.ones(4, np.float32), names="w"),
    bad(fq.weight_ranges_figure, np.array(1.0), names="w"),
]
