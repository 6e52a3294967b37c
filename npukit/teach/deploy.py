"""Checkers for lab 7, "Deploying to an NPU" (labs/07_deploy.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and compares
it with an independent reference written here; see :mod:`npukit.teach.core`.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

from .core import CheckFailed, _rng, check, learner_call

__all__ = ["check_crossing_bytes", "check_reorder", "check_double_buffered", "check_prediction"]

_POOL = ("Conv", "Relu", "Sigmoid", "Add", "Mul", "MaxPool", "HardSwish", "Softmax", "Tanh", "Neg")


def _forbidden() -> tuple:
    from .. import contract

    return (contract, sys.modules[__name__])


def _chain(rng: np.random.Generator) -> tuple[Any, dict]:
    """A random single-path ONNX model: shape-preserving ops on (1, C, H, W), some with a 2×2 pool."""
    from onnx import TensorProto, helper, numpy_helper

    c, h = int(rng.integers(1, 9)), int(2 ** rng.integers(2, 5))
    shape = [1, c, h, h]
    nodes, inits, sizes = [], [], {}
    prev = "x"
    for i in range(int(rng.integers(3, 11))):
        op = str(rng.choice(_POOL))
        out = f"t{i}"
        if op in ("Add", "Mul"):
            inits.append(numpy_helper.from_array(rng.standard_normal(shape[1:]).astype(np.float32), f"k{i}"))
            nodes.append(helper.make_node(op, [prev, f"k{i}"], [out], name=f"{op.lower()}{i}"))
        elif op == "MaxPool":
            if shape[2] < 2:
                op = "Relu"
                nodes.append(helper.make_node(op, [prev], [out], name=f"relu{i}"))
            else:
                nodes.append(helper.make_node(op, [prev], [out], name=f"maxpool{i}", kernel_shape=[2, 2], strides=[2, 2]))
                shape = [1, shape[1], shape[2] // 2, shape[3] // 2]
        elif op == "Conv":
            cout = int(rng.integers(1, 9))
            inits.append(numpy_helper.from_array(rng.standard_normal((cout, shape[1], 1, 1)).astype(np.float32), f"w{i}"))
            nodes.append(helper.make_node(op, [prev, f"w{i}"], [out], name=f"conv{i}"))
            shape = [1, cout, shape[2], shape[3]]
        else:
            nodes.append(helper.make_node(op, [prev], [out], name=f"{op.lower()}{i}"))
        sizes[out] = int(np.prod(shape)) * 4
        prev = out
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, shape)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sizes


def _crossing_reference(model: Any, ops: frozenset, sizes: dict) -> int:
    """Walk the chain: every edge whose two ends are on different devices copies its tensor once."""
    nodes = list(model.graph.node)
    total = 0
    for a, b in zip(nodes, nodes[1:]):
        if (a.op_type in ops) != (b.op_type in ops):
            total += sizes[a.output[0]]
    return total


def check_crossing_bytes(fn: Callable[[Any, frozenset], int]) -> None:
    """Check ``fn(model, npu_ops) -> bytes`` copied between NPU and CPU per inference.

    ``model`` is a chain (each node feeds the next) of float32 operators;
    nodes whose ``op_type`` is in ``npu_ops`` run on the NPU, the others on
    the CPU. Each tensor passed from a node on one device to a node on the
    other is copied once. The model's input and output (host I/O) do not
    count. Fresh cases: 12 random chains of 3–10 nodes (Conv, pooling and
    elementwise operators, so tensor sizes change along the chain) and random
    operator sets. Reference: a walk over the chain's edges with sizes
    recorded while the chain was built. ``deploy.partition`` and
    ``deploy.check_contract`` are refused.

    Examples
    --------
    >>> from npukit import contract
    >>> def by_library(model, npu_ops):
    ...     profile = contract.NPUProfile("p", frozenset(npu_ops), dtypes=frozenset({"float32"}))
    ...     return contract.partition(model, profile).crossing_bytes
    >>> check_crossing_bytes(by_library)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: crossing bytes: your function called npukit.contract...
    """
    rng = _rng(7101)
    cases, sizes = [], []
    for _ in range(12):
        model, sz = _chain(rng)
        ops = frozenset(str(o) for o in _POOL if rng.random() < 0.6)
        cases.append((model, ops))
        sizes.append(sz)
    by_id = {id(m): s for (m, _), s in zip(cases, sizes)}

    def learner(model: Any, ops: frozenset) -> Any:
        got = learner_call("crossing bytes", fn, model, ops, forbid=_forbidden())
        want = _crossing_reference(model, ops, by_id[id(model)])
        if not isinstance(got, (int, np.integer)) or int(got) != want:
            nodes = list(model.graph.node)
            first = next(((a.name, b.name) for a, b in zip(nodes, nodes[1:]) if (a.op_type in ops) != (b.op_type in ops)),
                         None)
            where = (f"the first crossing is {first[0]} → {first[1]} ({by_id[id(model)][nodes[[n.name for n in nodes].index(first[0])].output[0]]} bytes)"
                     if first else "no edge crosses devices here")
            raise CheckFailed(f"crossing bytes: for the chain {' → '.join(n.op_type for n in nodes)} with NPU ops "
                              f"{sorted(ops)}: expected {want} bytes, got {got!r}; {where}.")
        return int(got)

    n = 0
    for model, ops in cases:
        learner(model, ops)
        n += 1
    print(f"✓ crossing bytes: {n} fresh chains agree with the reference.")


def check_reorder(fn: Callable[[np.ndarray, str, str], np.ndarray]) -> None:
    """Check ``fn(x, src, dst)``: the data of ``x`` (axes named by ``src``) rewritten in ``dst`` order.

    What an OpenVINO ``Reorder`` from ``abcd`` to ``acdb`` does: NCHW data
    comes out NHWC, as a new C-contiguous array (a real copy, not a view).
    Fresh cases: 14 tensors of rank 2–5 with random axis orders. Reference:
    ``numpy.einsum`` with the layout letters as subscripts.

    Examples
    --------
    >>> check_reorder(lambda x, src, dst: np.ascontiguousarray(np.transpose(x, [src.index(c) for c in dst])))
    ✓ reorder: 14 fresh cases agree with the reference.
    """
    rng = _rng(7102)
    cases = []
    for _ in range(14):
        rank = int(rng.integers(2, 6))
        letters = "abcde"[:rank]
        src = "".join(rng.permutation(list(letters)))
        dst = "".join(rng.permutation(list(letters)))
        shape = tuple(int(d) for d in rng.integers(1, 6, size=rank))
        cases.append((rng.standard_normal(shape).astype(np.float32), src, dst))

    def reference(x: np.ndarray, src: str, dst: str) -> np.ndarray:
        return np.einsum(f"{src}->{dst}", x).copy()

    def compare(got: Any, want: np.ndarray) -> bool:
        if not isinstance(got, np.ndarray):
            raise CheckFailed(f"reorder: expected a numpy array, got {type(got).__name__}")
        if got.shape != want.shape:
            raise CheckFailed(f"reorder: expected shape {want.shape}, got {got.shape}")
        if not got.flags.c_contiguous:
            raise CheckFailed("reorder: the result must be C-contiguous (a Reorder writes a new buffer); "
                              "np.transpose alone returns a strided view")
        bad = np.argwhere(got != want)
        if len(bad):
            i = tuple(int(v) for v in bad[0])
            raise CheckFailed(f"reorder: element {i} is {got[i]:.4g}, expected {want[i]:.4g}")
        return True

    check("reorder", fn, cases, reference, compare=compare)


class _Request:
    """An infer request that records when it is started, waited on, and whether that was safe."""

    def __init__(self, real: Any, log: list, rid: int) -> None:
        self._real, self._log, self.rid, self.busy = real, log, rid, False

    def start_async(self, inputs: Any = None, userdata: Any = None) -> None:
        if self.busy:
            raise CheckFailed(f"double buffered: request {self.rid} was started again while its previous "
                              "inference was still running; wait() for it first (its buffers are still in use)")
        self.busy = True
        self._log.append(("start", self.rid))
        self._real.start_async(inputs, userdata) if inputs is not None else self._real.start_async()

    def wait(self) -> None:
        self._real.wait()
        if self.busy:
            self._log.append(("wait", self.rid))
        self.busy = False

    def wait_for(self, timeout: int) -> bool:
        done = self._real.wait_for(timeout)
        if done and self.busy:
            self._log.append(("wait", self.rid))
            self.busy = False
        return done

    def infer(self, *args: Any, **kwargs: Any) -> Any:
        raise CheckFailed("double buffered: use start_async() and wait(), not the blocking infer()")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _Compiled:
    def __init__(self, real: Any) -> None:
        self._real, self.log, self.made = real, [], []

    def create_infer_request(self) -> _Request:
        r = _Request(self._real.create_infer_request(), self.log, len(self.made))
        self.made.append(r)
        return r

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise CheckFailed("double buffered: use infer requests (create_infer_request), not compiled(...)")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def check_double_buffered(fn: Callable[[Any, list], list]) -> None:
    """Check ``fn(compiled, images) -> list of outputs`` runs two infer requests in alternation.

    The learner's function gets a compiled model whose requests record every
    ``start_async`` and ``wait``. It must use exactly two requests, never start
    a request that is still running, have both in flight at once at least once
    (the overlap double buffering is for), and return each image's output, in
    order, as its own copy (an output tensor is overwritten by the request's
    next inference). Fresh cases: 3 runs of 3–9 images on a small random
    CameraNet. Reference: each image run alone with ``compiled(x)``.

    Examples
    --------
    >>> def serial(compiled, images):
    ...     r = compiled.create_infer_request()
    ...     return [r.infer({0: x})[0].copy() for x in images]
    >>> check_double_buffered(serial)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: double buffered: use start_async() and wait(), not the blocking infer()
    """
    from ..data import shapes_dataset
    from ..deploy import compile as ov_compile
    from ..models import CameraNet

    rng = _rng(7103)
    n = 0
    for k in range(3):
        net = CameraNet(stem=8, blocks=((16, 2),), seed=int(rng.integers(1000)))
        compiled = ov_compile(net.to_onnx(), "CPU", precision="f32", hint="THROUGHPUT")
        images = [im[None] for im in shapes_dataset(int(rng.integers(3, 10)), seed=int(rng.integers(1000)))[0]]
        want = [compiled(x)[0] for x in images]
        proxy = _Compiled(compiled)
        got = learner_call("double buffered", fn, proxy, list(images))
        if len(proxy.made) != 2:
            raise CheckFailed(f"double buffered: use exactly two infer requests, you created {len(proxy.made)}")
        if any(r.busy for r in proxy.made):
            raise CheckFailed("double buffered: wait() for every request before returning; one was still running")
        in_flight, peak = set(), 0
        for event, rid in proxy.log:
            (in_flight.add if event == "start" else in_flight.discard)(rid)
            peak = max(peak, len(in_flight))
        if peak < 2 and len(images) > 1:
            raise CheckFailed("double buffered: the two requests never ran at the same time: start the next "
                              "image on the other request before waiting for this one")
        if not isinstance(got, (list, tuple)) or len(got) != len(images):
            raise CheckFailed(f"double buffered: expected a list of {len(images)} outputs, got {type(got).__name__}"
                              + (f" of {len(got)}" if isinstance(got, (list, tuple)) else ""))
        for i, (g, w) in enumerate(zip(got, want)):
            g = np.asarray(g)
            if g.shape != w.shape or not np.allclose(g, w, atol=1e-4):
                same = [j for j in range(len(want)) if g.shape == want[j].shape and np.allclose(g, want[j], atol=1e-4)]
                hint = (f" (it equals image {same[0]}'s output: copy an output before its request runs again)"
                        if same else "")
                raise CheckFailed(f"double buffered: the output for image {i} of {len(images)} is wrong{hint}")
        n += 1
    print(f"✓ double buffered: {n} fresh runs agree with the reference, with two requests overlapping.")


def check_prediction(name: str, predicted: Any, measured: float, *, rel_tol: float = 0.5, explain: str = "") -> None:
    """Compare a learner's prediction with this run's measurement, within a relative tolerance.

    Examples
    --------
    >>> check_prediction("speed-up", 1.8, 2.0)
    ✓ speed-up: you predicted 1.8, this run measured 2; within 50%.
    """
    if predicted is None or predicted is Ellipsis:
        from .core import NotAttempted

        raise NotAttempted(f"{name}: not attempted yet (set your prediction first).")
    try:
        p = float(predicted)
    except (TypeError, ValueError):
        raise CheckFailed(f"{name}: your prediction must be a number, got {predicted!r}") from None
    if not np.isfinite(p) or abs(p - measured) > rel_tol * abs(measured):
        raise CheckFailed(f"{name}: you predicted {p:.3g}, this run measured {measured:.3g} "
                          f"(more than {rel_tol:.0%} apart). {explain}")
    print(f"✓ {name}: you predicted {p:.3g}, this run measured {measured:.3g}; within {rel_tol:.0%}.")
