"""Small helpers several test files share (imported as ``support``; tests/ is on the path).

* :func:`onnx_model`, :func:`value_info` — hand-built ONNX graphs (opset 17)
  for the counting and rewriting tests;
* :func:`assert_gradients_match` — central finite differences against an
  analytic gradient, for the network's backward pass and the trainer's loss;
* :class:`FakeRounds` and :func:`swapped` — a timing check's rounds on a fake
  clock, put in place of the check's own timed functions for one test, so the
  checks' verdicts are tested without timing anything (the real timing is
  tested under load by tests/test_timing_checks.py).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

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


class FakeRounds:
    """Functions whose calls advance a fake clock by set durations: a timing check's rounds, without timing.

    ``FakeRounds({"copy": 1e-3, "ReLU": 1.5e-3})`` has ``.fns`` (each name → a function whose call adds its
    duration × a seeded lognormal noise of ``sigma`` to the clock) and ``.clock``; a check that times them
    measures those ratios. ``bursts[name]``, if given, multiplies that function's successive calls by its
    factors in turn (``(0.5, 2)``: rounds split into two camps a factor 4 apart, which no number of rounds
    settles, so a check that measures more rounds still cannot tell; ``(0.5, 1, 2)`` settles on its middle
    value once enough rounds are judged together; give durations of 10 ms or more, so that a check makes
    one call a round). ``on_call[name]``, if given, is called with the fake start and end of each call (a stand-in that
    records what a real one would, such as a pipeline's jobs).
    """

    def __init__(self, seconds: dict[str, float], *, sigma: float = 0.01, seed: int = 0,
                 bursts: dict[str, tuple] | None = None,
                 on_call: dict[str, Callable[[float, float], Any]] | None = None):
        self.now = 0.0
        self.rng = np.random.default_rng(seed)
        self.seconds = dict(seconds)
        self.sigma = sigma
        self.bursts = {k: tuple(v) for k, v in (bursts or {}).items()}
        self.calls = dict.fromkeys(self.seconds, 0)
        self.on_call = on_call or {}
        self.fns = {k: self._fn(k) for k in self.seconds}

    def clock(self) -> float:
        return self.now

    def _fn(self, name: str) -> Callable[[], None]:
        def call() -> None:
            start = self.now
            burst = self.bursts.get(name, (1.0,))
            self.now += (self.seconds[name] * burst[self.calls[name] % len(burst)]
                         * float(self.rng.lognormal(0.0, self.sigma)))
            self.calls[name] += 1
            if name in self.on_call:
                self.on_call[name](start, self.now)
        return call


@contextlib.contextmanager
def swapped(module: Any, name: str, value: Any) -> Iterator[None]:
    """``module.name = value`` for one test, with the checkers' seal told (npukit.teach.guard), then restored.

    A checker module's attributes are sealed when npukit.teach is imported, and a check refuses to run while
    one is replaced; a test that puts a fake in place accepts the change, and the original back afterwards.
    """
    from npukit.teach import guard

    old = getattr(module, name)
    setattr(module, name, value)
    guard._reseal(module.__name__)
    try:
        yield
    finally:
        setattr(module, name, old)
        guard._reseal(module.__name__)
