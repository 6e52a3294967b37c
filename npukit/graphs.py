"""Graphs and the roofline: what a model costs, read off its graph before it runs.

The invariant this module teaches: **a static graph with known shapes fixes a
model's costs before the first inference.** From the ONNX graph alone we know
every node's multiply-accumulates (MACs), the bytes it must read and write, and
their ratio, the arithmetic intensity. Only two numbers come from the machine:
its peak arithmetic rate and its memory bandwidth (:class:`MachineSpec`), and
the roofline ``attainable = min(peak, bandwidth × intensity)`` combines them
with the graph's counts. How those two numbers are measured (and measured
kernels placed under them) is :mod:`npukit.roofline`; what a compiler then
does to the graph (folding, fusion, memory planning) is :mod:`npukit.rewrites`.

Counting conventions (used by :func:`op_counts`):

* a MAC is one multiply and one add, **2 FLOPs**; a dense kernel computes the
  taps that fall on zero padding too, so they are counted;
* MACs are those of the dot-product ops (Conv, Gemm, MatMul), the work a
  MAC array does; a bias add, an elementwise op or a comparison is **1 FLOP
  per output element**; BatchNormalization at inference is a per-channel
  ``a·x + c``, 2 FLOPs per element (and 0 MACs, so folding it away leaves
  the MAC count unchanged);
* bytes are DRAM bytes for a node run on its own: every input read once, every
  output written once (no cache reuse between nodes). Parameters are inputs
  that are initializers or ``Constant`` outputs; views (Reshape, Flatten,
  Squeeze, Unsqueeze, Identity, Dropout) move no bytes.

See chapter 3, "Graphs and the roofline" (chapters/03_graphs.md).

onnx is imported inside the functions that need it.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from . import _check

if TYPE_CHECKING:
    import onnx

__all__ = ["OpCount", "MachineSpec", "topological_order", "tensor_shapes", "op_counts", "totals", "example_chain"]

#: Ops that only relabel a buffer's shape: no arithmetic, no bytes moved.
VIEW_OPS = frozenset({"Flatten", "Reshape", "Squeeze", "Unsqueeze", "Identity", "Dropout"})
#: Ops that copy data without arithmetic: 0 FLOPs, but every byte moves.
MOVE_OPS = frozenset({"Transpose", "Concat", "Pad", "Slice", "Cast", "Split", "Expand", "Tile", "Gather"})
#: Elementwise ops: 1 FLOP per output element.
ELEMENTWISE_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Sum", "Mean", "PRelu",
    "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu", "Selu",
    "Softplus", "Abs", "Neg", "Sqrt", "Exp", "Log", "Erf", "Reciprocal", "Floor", "Ceil", "Sin", "Cos",
})
#: Reductions over whole axes: 1 FLOP per *input* element.
REDUCE_OPS = frozenset({"GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"})
#: Windowed pooling: one FLOP per window tap per output element.
POOL_OPS = frozenset({"MaxPool", "AveragePool"})
#: Nodes that only produce constants (their outputs count as parameters).
CONST_OPS = frozenset({"Constant", "Shape"})
#: op type → the rule :func:`op_counts` counts it by. ``FusedConv`` (domain ``npukit``) is
#: ``act(Conv(X, W, B) + Z)``, written by :func:`npukit.rewrites.fuse_conv_add_relu`.
_KIND = {"Conv": "conv", "FusedConv": "conv", "Gemm": "gemm", "MatMul": "gemm", "BatchNormalization": "norm",
         **dict.fromkeys(VIEW_OPS, "view"), **dict.fromkeys(MOVE_OPS, "move"), **dict.fromkeys(CONST_OPS, "const"),
         **dict.fromkeys(ELEMENTWISE_OPS, "elementwise"), **dict.fromkeys(REDUCE_OPS, "reduce"),
         **dict.fromkeys(POOL_OPS, "pool")}


# ---- reading a graph ------------------------------------------------------------------


def _model(model: Any, name: str = "model") -> onnx.ModelProto:
    """Return ``model`` if it is an ``onnx.ModelProto``, else raise ``TypeError``."""
    import onnx

    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"{name} must be an onnx.ModelProto, got {type(model).__name__}")
    return model


def _node_name(node: Any, index: int) -> str:
    return node.name or f"{node.op_type}_{index}"


def _producers(graph: Any, name: str = "model") -> dict[str, int]:
    """Tensor name → index of the node writing it; two writers are an error."""
    producer: dict[str, int] = {}
    for i, node in enumerate(graph.node):
        for out in node.output:
            if out in producer:
                first = _node_name(graph.node[producer[out]], producer[out])
                raise ValueError(f"{name}: tensor {out!r} is written by two nodes "
                                 f"({first!r} and {_node_name(node, i)!r})")
            if out:
                producer[out] = i
    return producer


def topological_order(model: onnx.ModelProto) -> list[int]:
    """The nodes of ``model``'s graph in an order where producers come first.

    Kahn's algorithm: repeatedly take a node whose inputs are all available
    (graph inputs, initializers, or outputs of nodes already taken). Among the
    ready nodes the one listed first is taken first, so a graph already in
    order (as ``onnx.checker`` requires) keeps its order. See chapter 3,
    "Graphs and the roofline" (chapters/03_graphs.md).

    Parameters
    ----------
    model : onnx.ModelProto
        The model.

    Returns
    -------
    list of int
        Indices into ``model.graph.node``.

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not an ``onnx.ModelProto``, a node reads a tensor nothing provides, two
        nodes write the same tensor, or the graph has a cycle (the message names its nodes).

    Examples
    --------
    >>> from onnx import helper, TensorProto
    >>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    >>> nodes = [helper.make_node("Relu", ["a"], ["b"], name="second"),
    ...          helper.make_node("Neg", ["x"], ["a"], name="first")]
    >>> topological_order(helper.make_model(helper.make_graph(nodes, "g", [x], [])))
    [1, 0]
    """
    return _topological_order(model, "model")


def _topological_order(model: Any, name: str) -> list[int]:
    """:func:`topological_order`, with ``name`` (the argument's) in the messages; :func:`_walkable` calls it."""
    graph = _model(model, name).graph
    available = {v.name for v in graph.input} | {t.name for t in graph.initializer} | {""}
    producer = _producers(graph, name)
    waiting = [0] * len(graph.node)
    consumers: dict[int, list[int]] = {i: [] for i in range(len(graph.node))}
    for i, node in enumerate(graph.node):
        for inp in set(node.input):
            if inp in producer:
                waiting[i] += 1
                consumers[producer[inp]].append(i)
            elif inp not in available:
                raise ValueError(f"{name}: node {_node_name(node, i)!r} reads tensor {inp!r}, which no node, "
                                 "graph input or initializer provides")
    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in consumers[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    if len(order) < len(graph.node):
        stuck = [_node_name(graph.node[i], i) for i in range(len(graph.node)) if waiting[i] > 0]
        raise ValueError(f"{name}: the graph has a cycle; these nodes wait on each other: {', '.join(stuck[:8])}"
                         + (" …" if len(stuck) > 8 else ""))
    return order


def _walkable(model: Any, name: str = "model") -> Any:
    """Return ``model`` if it is an ``onnx.ModelProto`` whose graph can be walked.

    Every node must read only graph inputs, initializers and other nodes'
    outputs, no tensor may have two writers, and the graph must be acyclic:
    a walk over a cyclic graph never ends (OpenVINO's reader hangs on one)
    and a dangling input fails deep inside a runtime. The check is
    :func:`topological_order`'s, with ``name`` in the message; the later
    chapters' modules call it before they walk a graph.
    """
    _topological_order(model, name)
    return model


def _static(type_proto: Any) -> tuple[tuple[int, ...], np.dtype] | None:
    """``(shape, dtype)`` of a tensor type, or None if either is unknown or symbolic."""
    from onnx import helper

    tt = type_proto.tensor_type if type_proto is not None and type_proto.HasField("tensor_type") else None
    if tt is None or tt.elem_type == 0 or not tt.HasField("shape"):
        return None
    if any(not d.HasField("dim_value") for d in tt.shape.dim):
        return None
    return tuple(int(d.dim_value) for d in tt.shape.dim), np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type))


def tensor_shapes(model: onnx.ModelProto) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Static shape and dtype of every tensor in ``model``, by ONNX shape inference.

    See chapter 3, "Graphs and the roofline" (chapters/03_graphs.md).

    Parameters
    ----------
    model : onnx.ModelProto
        A model whose graph inputs have static shapes.

    Returns
    -------
    dict
        ``{tensor name: (shape, dtype)}`` for graph inputs, initializers and
        every node output.

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not an ``onnx.ModelProto``, shape inference fails, or a tensor a node
        reads or writes has an unknown or symbolic shape (the message names it and its node).

    Examples
    --------
    >>> shape, dtype = tensor_shapes(example_chain(blocks=1, channels=4, size=8))["stem.conv"]
    >>> shape, str(dtype)
    ((1, 4, 8, 8), 'float32')
    """
    import onnx
    from onnx import helper, shape_inference

    graph = _model(model).graph
    order = topological_order(model)  # clear errors for cycles and dangling inputs first
    if order != sorted(order):  # shape inference walks the nodes as listed: sort a copy
        ordered = onnx.ModelProto()
        ordered.CopyFrom(model)
        del ordered.graph.node[:]
        ordered.graph.node.extend(graph.node[i] for i in order)  # extend copies each node
        model = ordered
    try:
        inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as exc:
        raise ValueError(f"model: ONNX shape inference failed: {exc}") from exc
    g = inferred.graph
    infos = {vi.name: vi.type for vi in list(g.input) + list(g.value_info) + list(g.output)}
    out = {t.name: (tuple(int(d) for d in t.dims), np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)))
           for t in graph.initializer}
    for i, node in enumerate(graph.node):
        for name in list(node.input) + list(node.output):
            if not name or name in out:
                continue
            known = _static(infos.get(name))
            if known is None:
                role = "output" if name in node.output else "input"
                raise ValueError(
                    f"model: tensor {name!r} ({role} of node {_node_name(node, i)!r}) has an unknown shape "
                    "after ONNX shape inference; give the graph inputs static shapes, e.g. [1, 3, 32, 32]")
            out[name] = known
    return out


# ---- counting -------------------------------------------------------------------------


_record = _check.record  # the record-field checks, shared with every module's records


def _nonnegative(x: Any, name: str) -> Any:
    """``x`` (a real number or an array of them) as float(s), each finite and >= 0."""
    a = np.asarray(x) if not isinstance(x, (str, bytes)) else None
    if a is None or a.dtype.kind not in "iuf" or isinstance(x, bool):
        raise TypeError(f"{name} must be a real number or an array of real numbers, got {type(x).__name__} {x!r:.40}")
    a = a.astype(float)
    if not np.all(np.isfinite(a) & (a >= 0)):
        raise ValueError(f"{name} must be finite and >= 0, got {x!r:.60}")
    return float(a) if a.ndim == 0 else a


@dataclasses.dataclass(frozen=True)
class OpCount:
    """What one node costs: arithmetic and the DRAM bytes it must move.

    ``intensity`` is FLOPs per byte moved (``flops / bytes``), 0 for a node
    that moves no bytes. Made by :func:`op_counts`; see chapter 3, "Graphs and
    the roofline" (chapters/03_graphs.md).
    """

    name: str
    op_type: str
    macs: int
    flops: int
    param_bytes: int
    act_bytes_in: int
    act_bytes_out: int
    intensity: float
    output_shape: tuple[int, ...]

    def __post_init__(self) -> None:
        _record(self, text=("name", "op_type"), counts=("macs", "flops", "param_bytes", "act_bytes_in", "act_bytes_out"))
        object.__setattr__(self, "intensity", _nonnegative(self.intensity, "intensity"))
        object.__setattr__(self, "output_shape", _check.shape(self.output_shape, "output_shape"))
        if self.flops < 2 * self.macs:
            raise ValueError(f"flops must be at least 2 × macs = {2 * self.macs} (a MAC is 2 FLOPs), got {self.flops}")
        want = self.flops / self.bytes if self.bytes else 0.0
        if not math.isclose(self.intensity, want, rel_tol=1e-9, abs_tol=1e-12):
            raise ValueError(f"intensity must be flops / bytes = {want:g} (0 when no bytes move), got {self.intensity:g}")

    @property
    def bytes(self) -> int:
        """All bytes the node moves: parameters + activations in + out."""
        return self.param_bytes + self.act_bytes_in + self.act_bytes_out


def _attr(node: Any, name: str, default: Any) -> Any:
    from onnx import helper

    for att in node.attribute:
        if att.name == name:
            return helper.get_attribute_value(att)
    return default


def _work(node: Any, shapes: dict, y_shape: tuple) -> tuple[int, int]:
    """``(MACs, FLOPs)`` of one node, by the rules of the module docstring."""
    op, kind, y = node.op_type, _KIND[node.op_type], math.prod(y_shape)
    has = lambda k: len(node.input) > k and bool(node.input[k])  # noqa: E731 (optional input k given)
    if kind == "conv":  # each output is a dot product over C_in/group × taps: W has that many weights per row
        macs = y * math.prod(shapes[node.input[1]][0][1:])
        extra = has(2) + (op == "FusedConv" and has(3)) + (_attr(node, "activation", b"") in (b"Relu", "Relu"))
        return macs, 2 * macs + y * int(extra)
    if op == "Gemm":
        a_shape = shapes[node.input[0]][0]
        macs = y * (a_shape[0] if _attr(node, "transA", 0) else a_shape[1])
        return macs, 2 * macs + (y if has(2) else 0)
    if op == "MatMul":
        macs = y * shapes[node.input[0]][0][-1]
        return macs, 2 * macs
    if kind == "norm":
        return 0, 2 * y
    if kind == "elementwise":
        return 0, y
    if kind == "pool":
        return 0, y * math.prod(_attr(node, "kernel_shape", [1]))
    if kind == "reduce":
        return 0, math.prod(shapes[node.input[0]][0])
    return 0, 0  # views, moves and constants: no arithmetic


def _unsupported(op: str, name: str) -> ValueError:
    supported = ", ".join(sorted(set(_KIND) - {"FusedConv"}))
    return ValueError(f"model: op_counts has no counting rule for op_type {op!r} (node {name!r}); supported: {supported}")


def op_counts(model: onnx.ModelProto, *, itemsize: int | None = None) -> list[OpCount]:
    """MACs, FLOPs, bytes and arithmetic intensity of every node of ``model``.

    Shapes come from ONNX shape inference, so the graph inputs must have static
    shapes. The counting conventions are in the module docstring; in short,
    Conv (grouped and depthwise too) has ``N·C_out·H_out·W_out·(C_in/group)·k_h·k_w``
    MACs, Gemm ``M·N·K``, MatMul ``(output elements)·K``, and a MAC is 2 FLOPs.
    See chapter 3, "Graphs and the roofline" (chapters/03_graphs.md).

    Parameters
    ----------
    model : onnx.ModelProto
        The model.
    itemsize : int, optional
        Count every tensor as if each element had this many bytes (e.g. ``1``
        for the same graph in INT8). By default each tensor's own dtype.

    Returns
    -------
    list of OpCount
        One record per node, in topological order.

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not an ``onnx.ModelProto``, a shape is unknown, the graph has a cycle,
        ``itemsize`` is not an integer ≥ 1, or an op has no counting rule (the message lists them).

    Examples
    --------
    >>> m = example_chain(blocks=1, channels=4, size=8, batchnorm=False, residual=False)
    >>> for c in op_counts(m):
    ...     print(c.name, c.op_type, c.macs, c.flops, c.param_bytes, c.act_bytes_in, round(c.intensity, 2))
    stem.conv Conv 6912 14080 448 768 6.29
    stem.relu Relu 0 256 0 1024 0.12
    block1.conv Conv 9216 18688 592 1024 7.08
    block1.relu Relu 0 256 0 1024 0.12
    """
    model = _model(model)
    if itemsize is not None:
        itemsize = _check.integer(itemsize, "itemsize", minimum=1, maximum=16)
    graph = model.graph
    order = topological_order(model)
    shapes = tensor_shapes(model)
    consts = {t.name for t in graph.initializer} | {n.output[0] for n in graph.node if n.op_type in CONST_OPS and n.output}

    def nbytes(names: list[str]) -> int:
        return sum(math.prod(shapes[n][0]) * (itemsize or shapes[n][1].itemsize) for n in names)

    records = []
    for i in order:
        node = graph.node[i]
        name, kind = _node_name(node, i), _KIND.get(node.op_type)
        if kind is None:
            raise _unsupported(node.op_type, name)
        ins = [n for n in node.input if n]
        outs = [n for n in node.output if n]
        y_shape = shapes[outs[0]][0] if outs else ()
        macs, flops = _work(node, shapes, y_shape)
        moves = kind not in ("view", "const")
        p_bytes = nbytes([n for n in ins if n in consts]) if moves else 0
        a_in = nbytes([n for n in ins if n not in consts]) if moves else 0
        a_out = nbytes(outs) if moves else 0
        total = p_bytes + a_in + a_out
        records.append(OpCount(name, node.op_type, int(macs), int(flops), int(p_bytes), int(a_in), int(a_out),
                               float(flops / total) if total else 0.0, tuple(y_shape)))
    return records


def totals(counts: Sequence[OpCount]) -> dict[str, float]:
    """Sum a model's node counts: MACs, FLOPs, bytes and the overall intensity.

    See chapter 3, "Graphs and the roofline" (chapters/03_graphs.md).

    Parameters
    ----------
    counts : sequence of OpCount
        The result of :func:`op_counts`.

    Returns
    -------
    dict
        ``macs``, ``flops``, ``param_bytes``, ``act_bytes`` (in + out) and
        ``intensity`` (total FLOPs / total bytes, each node run on its own).

    Raises
    ------
    TypeError
        If ``counts`` is not a list or tuple, or an item is not an :class:`OpCount`.

    Examples
    --------
    >>> t = totals(op_counts(example_chain(blocks=1, channels=4, size=8, residual=False)))
    >>> t["macs"], t["param_bytes"]
    (16128, 1168)
    """
    out = {"macs": 0, "flops": 0, "param_bytes": 0, "act_bytes": 0}
    for i, c in enumerate(_check.sequence(counts, "counts", min_length=1)):  # no nodes: 0/0, not intensity 0
        if not isinstance(c, OpCount):
            raise TypeError(f"counts[{i}] must be an OpCount, got {type(c).__name__}")
        out["macs"] += c.macs
        out["flops"] += c.flops
        out["param_bytes"] += c.param_bytes
        out["act_bytes"] += c.act_bytes_in + c.act_bytes_out
    moved = out["param_bytes"] + out["act_bytes"]
    out["intensity"] = out["flops"] / moved if moved else 0.0
    return out


# ---- the machine ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MachineSpec:
    """The two numbers of a roofline: peak arithmetic rate and memory bandwidth.

    Measured by :func:`npukit.roofline.measure_machine` (which also records
    the ``threads`` and the ``copy_bytes`` it used), or copied from a spec
    sheet (then say so in the ``*_how`` fields and cite it). ``peak_flops`` and ``bandwidth``
    must be finite and > 0. See chapter 3, "Graphs and the roofline"
    (chapters/03_graphs.md).

    Examples
    --------
    >>> m = MachineSpec(100e9, 10e9, "toy", "assumed", "assumed")
    >>> m.ridge, m.attainable(2.0) / 1e9, m.attainable(50.0) / 1e9, m.bound(2.0)
    (10.0, 20.0, 100.0, 'memory')
    >>> MachineSpec(0, 10e9, "toy", "assumed", "assumed")
    Traceback (most recent call last):
    ValueError: peak_flops must be a finite number > 0, got 0.0
    """

    peak_flops: float  #: FLOP/s (or op/s for integer arithmetic)
    bandwidth: float  #: bytes/s to and from DRAM
    cpu: str  #: the processor (or accelerator) name
    peak_how: str  #: how ``peak_flops`` was obtained
    bandwidth_how: str  #: how ``bandwidth`` was obtained
    threads: int | None = None  #: threads both numbers were measured with (None: a spec sheet)
    copy_bytes: int | None = None  #: bytes of the array copied to measure ``bandwidth`` (None: a spec sheet)

    def __post_init__(self) -> None:
        object.__setattr__(self, "peak_flops", _check.positive(self.peak_flops, "peak_flops"))
        object.__setattr__(self, "bandwidth", _check.positive(self.bandwidth, "bandwidth"))
        _record(self, text=("cpu", "peak_how", "bandwidth_how"))
        for f, top in (("threads", 4096), ("copy_bytes", None)):
            if getattr(self, f) is not None:
                object.__setattr__(self, f, _check.integer(getattr(self, f), f, minimum=1, maximum=top))

    @property
    def ridge(self) -> float:
        """The intensity (FLOP/byte) where the two roofs meet: ``peak / bandwidth``."""
        return self.peak_flops / self.bandwidth

    def attainable(self, intensity: Any) -> Any:
        """``min(peak, bandwidth × intensity)``: the roofline at ``intensity`` FLOP/byte (float or array)."""
        out = np.minimum(self.peak_flops, self.bandwidth * _nonnegative(intensity, "intensity"))
        return float(out) if np.ndim(out) == 0 else out

    def bound(self, intensity: float) -> str:
        """``"memory"`` if ``intensity`` is left of the ridge, else ``"compute"``."""
        if np.ndim(intensity) != 0:
            raise TypeError(f"intensity must be one number, got {type(intensity).__name__}")
        return "memory" if _nonnegative(intensity, "intensity") < self.ridge else "compute"


# ---- an example model -----------------------------------------------------------------------


def _conv_bn(prefix: str, x: str, c_in: int, channels: int, batchnorm: bool, rng: np.random.Generator,
             nodes: list, inits: list) -> str:
    """Append ``prefix.conv`` (3×3, pad 1) and, if asked, ``prefix.bn``; return the output's name."""
    from onnx import helper, numpy_helper

    w = (rng.standard_normal((channels, c_in, 3, 3)) * np.sqrt(2.0 / (9 * c_in))).astype(np.float32)
    bias = (0.1 * rng.standard_normal(channels)).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"{prefix}.conv.weight"), numpy_helper.from_array(bias, f"{prefix}.conv.bias")]
    nodes.append(helper.make_node("Conv", [x, f"{prefix}.conv.weight", f"{prefix}.conv.bias"], [f"{prefix}.conv"],
                                  name=f"{prefix}.conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    if not batchnorm:
        return f"{prefix}.conv"
    stats = {"scale": 1 + 0.3 * rng.standard_normal(channels), "B": 0.2 * rng.standard_normal(channels),
             "mean": 0.3 * rng.standard_normal(channels), "var": 0.5 + rng.random(channels)}
    inits += [numpy_helper.from_array(v.astype(np.float32), f"{prefix}.bn.{k}") for k, v in stats.items()]
    nodes.append(helper.make_node("BatchNormalization", [f"{prefix}.conv"] + [f"{prefix}.bn.{k}" for k in stats],
                                  [f"{prefix}.bn"], name=f"{prefix}.bn", epsilon=1e-5))
    return f"{prefix}.bn"


def example_chain(blocks: int = 4, channels: int = 16, size: int = 32, *, batchnorm: bool = True,
                  residual: bool = True, seed: int = 0) -> onnx.ModelProto:
    """A small deterministic ResNet-like ONNX model for examples and experiments.

    A stem ``Conv 3×3 (3 → channels) → [BN] → Relu`` followed by ``blocks``
    blocks ``Conv 3×3 → [BN] → [Add the block's input] → Relu``, all at
    ``size×size``, input ``x`` of shape ``1×3×size×size``, output ``y``. Node
    and tensor names follow the layers: ``stem.conv``, ``block1.bn``,
    ``block1.add``, ``block1.relu`` … Weights are random (seeded) and BN
    statistics are non-trivial, so folding is a real test. See chapter 3,
    "Graphs and the roofline" (chapters/03_graphs.md).

    Parameters
    ----------
    blocks : int
        Number of blocks after the stem (≥ 0).
    channels, size : int
        Channels of every block, height and width (each ≥ 1).
    batchnorm, residual : bool
        Put a BatchNormalization after every Conv; add each block's input before its Relu.
    seed : int
        Seed of the weights (≥ 0).

    Returns
    -------
    onnx.ModelProto
        An opset-17 model that passes ``onnx.checker``.

    Raises
    ------
    TypeError, ValueError
        If a count is not an integer in range, or a flag not a bool.

    Examples
    --------
    >>> m = example_chain(blocks=1, channels=4, size=8)
    >>> [n.name for n in m.graph.node]
    ['stem.conv', 'stem.bn', 'stem.relu', 'block1.conv', 'block1.bn', 'block1.add', 'block1.relu']
    >>> m.graph.node[-1].output[0]
    'y'
    """
    from onnx import TensorProto, helper

    blocks = _check.integer(blocks, "blocks", minimum=0, maximum=1000)
    channels = _check.integer(channels, "channels", minimum=1, maximum=4096)
    size = _check.integer(size, "size", minimum=1, maximum=4096)
    rng = np.random.default_rng(_check.integer(seed, "seed", minimum=0))
    batchnorm, residual = _check.boolean(batchnorm, "batchnorm"), _check.boolean(residual, "residual")
    nodes: list = []
    inits: list = []  # both filled by _conv_bn
    t = _conv_bn("stem", "x", 3, channels, batchnorm, rng, nodes, inits)
    nodes.append(helper.make_node("Relu", [t], ["stem.relu"], name="stem.relu"))
    t = "stem.relu"
    for k in range(1, blocks + 1):
        h = _conv_bn(f"block{k}", t, channels, channels, batchnorm, rng, nodes, inits)
        if residual:
            nodes.append(helper.make_node("Add", [h, t], [f"block{k}.add"], name=f"block{k}.add"))
            h = f"block{k}.add"
        nodes.append(helper.make_node("Relu", [h], [f"block{k}.relu"], name=f"block{k}.relu"))
        t = f"block{k}.relu"
    nodes[-1].output[0] = "y"  # the last Relu writes the graph output
    graph = helper.make_graph(nodes, "example_chain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, size, size])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="npukit.graphs")

