"""Small helpers several test files share (imported as ``support``; tests/ is on the path).

* :func:`onnx_model`, :func:`value_info` — hand-built ONNX graphs (opset 17)
  for the counting and rewriting tests;
* :func:`assert_gradients_match` — central finite differences against an
  analytic gradient, for the network's backward pass and the trainer's loss.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from onnx import TensorProto, helper

OPSET = [helper.make_opsetid("", 17)]


def onnx_model(nodes, inputs, outputs, inits=()):
    """A model of one graph named ``t`` at opset 17."""
    return helper.make_model(helper.make_graph(nodes, "t", inputs, outputs, list(inits)), opset_imports=OPSET)


def value_info(name, shape, dtype=TensorProto.FLOAT):
    """A graph input or output of ``shape`` (float32 unless told)."""
    return helper.make_tensor_value_info(name, dtype, shape)


def assert_gradients_match(loss: Callable[[], float], arrays: dict[str, np.ndarray], grads: dict[str, np.ndarray],
                           rng: np.random.Generator, *, probes: int = 4, h: float = 1e-6) -> None:
    """For ``probes`` random entries of each array, ``(loss(+h) − loss(−h)) / 2h`` equals ``grads`` there.

    ``loss`` reads the arrays in place; each probed entry is restored.
    """
    for key, array in arrays.items():
        for _ in range(probes):
            idx = tuple(int(rng.integers(0, s)) for s in array.shape)
            old = array[idx]
            array[idx] = old + h
            up = loss()
            array[idx] = old - h
            down = loss()
            array[idx] = old
            numeric = (up - down) / (2 * h)
            assert abs(numeric - grads[key][idx]) <= 1e-7 + 1e-4 * abs(numeric), (key, idx, numeric, grads[key][idx])
