"""Graphs and the roofline: what a model costs, read off its graph before it runs.

The invariant this module teaches: **a static graph with known shapes fixes a
model's costs before the first inference.** From the ONNX graph alone we know
every node's multiply-accumulates (MACs), the bytes it must read and write,
their ratio (arithmetic intensity), which rewrites are exact (folding a
BatchNormalization into the Conv before it) and which save DRAM traffic
(fusing Conv → Add → Relu), and how little memory the intermediate tensors need
when buffers are reused once a tensor is dead. Only two numbers come from the
machine: its peak arithmetic rate and its memory bandwidth, and the roofline
``attainable = min(peak, bandwidth × intensity)`` combines them with the
graph's counts.

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

onnx and plotly are imported inside the functions that need them.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np

from . import _check
from ._arith import round_up

if TYPE_CHECKING:
    from . import tally

__all__ = [
    "OpCount",
    "MachineSpec",
    "Fusion",
    "FusionResult",
    "Buffer",
    "MemoryPlan",
    "topological_order",
    "tensor_shapes",
    "op_counts",
    "totals",
    "measure_machine",
    "fold_batchnorm",
    "fuse_conv_add_relu",
    "run_reference",
    "plan_memory",
    "live_peak",
    "example_chain",
    "numbers",
]

#: Ops that only relabel a buffer's shape: no arithmetic, no bytes moved.
VIEW_OPS = frozenset({"Flatten", "Reshape", "Squeeze", "Unsqueeze", "Identity", "Dropout"})
#: Ops that copy data without arithmetic: 0 FLOPs, but every byte moves.
MOVE_OPS = frozenset({"Transpose", "Concat", "Pad", "Slice", "Cast", "Split", "Expand", "Tile", "Gather"})
#: Elementwise ops: 1 FLOP per output element.
ELEMENTWISE_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Sum", "Mean", "PRelu",
    "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Elu", "Selu",
    "Softplus", "Abs", "Neg", "Sqrt", "Exp", "Log", "Erf", "Reciprocal", "Floor", "Ceil",
})
#: Reductions over whole axes: 1 FLOP per *input* element.
REDUCE_OPS = frozenset({"GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"})
#: Windowed pooling: one FLOP per window tap per output element.
POOL_OPS = frozenset({"MaxPool", "AveragePool"})
#: Nodes that only produce constants (their outputs count as parameters).
CONST_OPS = frozenset({"Constant", "Shape"})

#: The domain of the fused nodes :func:`fuse_conv_add_relu` writes.
FUSED_DOMAIN = "npukit"


def _kind(op_type: str) -> str:
    if op_type in ("Conv", "FusedConv"):
        return "conv"
    if op_type in ("Gemm", "MatMul"):
        return "gemm"
    if op_type == "BatchNormalization":
        return "norm"
    for kind, ops in (("view", VIEW_OPS), ("move", MOVE_OPS), ("elementwise", ELEMENTWISE_OPS),
                      ("reduce", REDUCE_OPS), ("pool", POOL_OPS), ("const", CONST_OPS)):
        if op_type in ops:
            return kind
    return "unknown"


# ---- reading a graph ------------------------------------------------------------------


def _model(model: Any, name: str = "model") -> Any:
    """Return ``model`` if it is an ``onnx.ModelProto``, else raise ``TypeError``."""
    import onnx

    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"{name} must be an onnx.ModelProto, got {type(model).__name__}")
    return model


def _node_name(node: Any, index: int) -> str:
    return node.name or f"{node.op_type}_{index}"


def topological_order(model: Any) -> list[int]:
    """The nodes of ``model``'s graph in an order where producers come first.

    Kahn's algorithm: repeatedly take a node whose inputs are all available
    (graph inputs, initializers, or outputs of nodes already taken). Among the
    ready nodes the one listed first in the file is taken first, so a graph
    already in order (as ``onnx.checker`` requires) keeps its order.

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
    TypeError
        If ``model`` is not an ``onnx.ModelProto``.
    ValueError
        If a node reads a tensor that nothing provides, if two nodes write the
        same tensor, or if the graph has a cycle (the message names the nodes
        on it).

    Examples
    --------
    >>> from onnx import helper, TensorProto
    >>> x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    >>> nodes = [helper.make_node("Relu", ["a"], ["b"], name="second"),
    ...          helper.make_node("Neg", ["x"], ["a"], name="first")]
    >>> m = helper.make_model(helper.make_graph(nodes, "g", [x], []))
    >>> topological_order(m)
    [1, 0]
    """
    graph = _model(model).graph
    available = {v.name for v in graph.input} | {t.name for t in graph.initializer} | {""}
    producer: dict[str, int] = {}
    for i, node in enumerate(graph.node):
        for out in node.output:
            if out in producer:
                raise ValueError(
                    f"model: tensor {out!r} is written by two nodes "
                    f"({_node_name(graph.node[producer[out]], producer[out])!r} and {_node_name(node, i)!r})"
                )
            if out:
                producer[out] = i
    waiting = [0] * len(graph.node)
    consumers: dict[int, list[int]] = {i: [] for i in range(len(graph.node))}
    for i, node in enumerate(graph.node):
        for inp in set(node.input):
            if inp in producer:
                waiting[i] += 1
                consumers[producer[inp]].append(i)
            elif inp not in available:
                raise ValueError(
                    f"model: node {_node_name(node, i)!r} reads tensor {inp!r}, which no node, graph "
                    "input or initializer provides"
                )
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
        raise ValueError(
            f"model: the graph has a cycle; these nodes wait on each other: {', '.join(stuck[:8])}"
            + (" …" if len(stuck) > 8 else "")
        )
    return order


def _constants(graph: Any) -> dict[str, np.ndarray]:
    """Arrays of every initializer and every ``Constant`` node's output."""
    from onnx import numpy_helper

    out = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            for att in node.attribute:
                if att.name == "value":
                    out[node.output[0]] = numpy_helper.to_array(att.t)
    return out


def _reordered(model: Any, order: Sequence[int]) -> Any:
    """A copy of ``model`` with its nodes listed in ``order``."""
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(model.graph.node[i] for i in order)  # extend copies each node
    return out


def tensor_shapes(model: Any) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """Static shape and dtype of every tensor in ``model``, by ONNX shape inference.

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
    TypeError
        If ``model`` is not an ``onnx.ModelProto``.
    ValueError
        If shape inference fails, or a tensor a node reads or writes has an
        unknown or symbolic shape (the message names the tensor and its node).

    Examples
    --------
    >>> m = example_chain(blocks=1, channels=4, size=8)
    >>> shape, dtype = tensor_shapes(m)["stem.conv"]
    >>> shape, str(dtype)
    ((1, 4, 8, 8), 'float32')
    """
    import onnx
    from onnx import helper, shape_inference

    graph = _model(model).graph
    order = topological_order(model)  # clear errors for cycles and dangling inputs first
    if order != sorted(order):  # shape inference walks the nodes as listed: sort a copy
        model = _reordered(model, order)
    try:
        inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as exc:
        raise ValueError(f"model: ONNX shape inference failed: {exc}") from exc
    infos = {}
    g = inferred.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        infos[vi.name] = vi.type
    out: dict[str, tuple[tuple[int, ...], np.dtype]] = {}
    for t in graph.initializer:
        out[t.name] = (tuple(int(d) for d in t.dims), np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)))
    for i, node in enumerate(graph.node):
        for name in list(node.input) + list(node.output):
            if not name or name in out:
                continue
            tp = infos.get(name)
            tt = tp.tensor_type if tp is not None and tp.HasField("tensor_type") else None
            dims = list(tt.shape.dim) if tt is not None and tt.HasField("shape") else None
            if tt is None or tt.elem_type == 0 or dims is None or any(not d.HasField("dim_value") for d in dims):
                role = "output" if name in node.output else "input"
                raise ValueError(
                    f"model: tensor {name!r} ({role} of node {_node_name(node, i)!r}) has an unknown shape "
                    "after ONNX shape inference; give the graph inputs static shapes, e.g. [1, 3, 32, 32]"
                )
            out[name] = (tuple(int(d.dim_value) for d in dims), np.dtype(helper.tensor_dtype_to_np_dtype(tt.elem_type)))
    return out


# ---- counting -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class OpCount:
    """What one node costs: arithmetic and the DRAM bytes it must move.

    ``intensity`` is FLOPs per byte moved (``flops / bytes``), 0 for a node
    that moves no bytes.
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

    @property
    def bytes(self) -> int:
        """All bytes the node moves: parameters + activations in + out."""
        return self.param_bytes + self.act_bytes_in + self.act_bytes_out


def _conv_like_macs(x_shape: tuple, w_shape: tuple, y_shape: tuple) -> int:
    # Each output element is a dot product over (C_in / group) × kernel taps,
    # and W has exactly that many weights per output channel.
    return math.prod(y_shape) * math.prod(w_shape[1:])


def _attr(node: Any, name: str, default: Any) -> Any:
    from onnx import helper

    for att in node.attribute:
        if att.name == name:
            return helper.get_attribute_value(att)
    return default


def op_counts(model: Any, *, itemsize: int | None = None) -> list[OpCount]:
    """MACs, FLOPs, bytes and arithmetic intensity of every node of ``model``.

    Shapes come from ONNX shape inference, so the graph inputs must have static
    shapes. The counting conventions are in the module docstring; in short,
    Conv (grouped and depthwise too) has ``N·C_out·H_out·W_out·(C_in/group)·k_h·k_w``
    MACs, Gemm ``M·N·K``, MatMul ``(output elements)·K``, and a MAC is 2 FLOPs.

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
        One record per node, in topological order, with ``name``, ``op_type``,
        ``macs``, ``flops``, ``param_bytes``, ``act_bytes_in``,
        ``act_bytes_out``, ``intensity`` (FLOP/byte), ``output_shape`` and
        the derived ``bytes``.

    Raises
    ------
    TypeError
        If ``model`` is not an ``onnx.ModelProto``.
    ValueError
        If a shape is unknown, the graph has a cycle, ``itemsize`` < 1, or an
        op has no counting rule here (the message lists the supported ones).

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
        itemsize = _check.integer(itemsize, "itemsize", minimum=1)
    graph = model.graph
    order = topological_order(model)
    shapes = tensor_shapes(model)
    consts = {t.name for t in graph.initializer} | {
        n.output[0] for n in graph.node if n.op_type in CONST_OPS and n.output
    }

    def nbytes(name: str) -> int:
        shape, dtype = shapes[name]
        return math.prod(shape) * (itemsize or dtype.itemsize)

    records = []
    for i in order:
        node = graph.node[i]
        op, name = node.op_type, _node_name(node, i)
        kind = _kind(op)
        if kind == "unknown":
            supported = sorted({"Conv", "Gemm", "MatMul", "BatchNormalization"} | VIEW_OPS | MOVE_OPS
                               | ELEMENTWISE_OPS | REDUCE_OPS | POOL_OPS | CONST_OPS)
            raise ValueError(
                f"model: op_counts has no counting rule for op_type {op!r} (node {name!r}); "
                f"supported: {', '.join(supported)}"
            )
        ins = [n for n in node.input if n]
        outs = [n for n in node.output if n]
        y_shape = shapes[outs[0]][0] if outs else ()
        y_elems = math.prod(y_shape)
        macs = flops = 0
        if op in ("Conv", "FusedConv"):
            macs = _conv_like_macs(shapes[ins[0]][0], shapes[node.input[1]][0], y_shape)
            flops = 2 * macs
            if len(node.input) > 2 and node.input[2]:
                flops += y_elems  # bias
            if op == "FusedConv":
                if len(node.input) > 3 and node.input[3]:
                    flops += y_elems  # residual add
                if _attr(node, "activation", b"") in (b"Relu", "Relu"):
                    flops += y_elems
        elif op == "Gemm":
            a_shape = shapes[node.input[0]][0]
            k = a_shape[0] if _attr(node, "transA", 0) else a_shape[1]
            macs = y_elems * k
            flops = 2 * macs + (y_elems if len(node.input) > 2 and node.input[2] else 0)
        elif op == "MatMul":
            macs = y_elems * shapes[node.input[0]][0][-1]
            flops = 2 * macs
        elif op == "BatchNormalization":
            flops = 2 * y_elems
        elif kind == "elementwise":
            flops = y_elems
        elif kind == "reduce":
            flops = math.prod(shapes[ins[0]][0])
        elif kind == "pool":
            flops = y_elems * math.prod(_attr(node, "kernel_shape", [1]))
        if kind in ("view", "const"):
            p_bytes = a_in = a_out = 0
        else:
            p_bytes = sum(nbytes(n) for n in ins if n in consts)
            a_in = sum(nbytes(n) for n in ins if n not in consts)
            a_out = sum(nbytes(n) for n in outs)
        total = p_bytes + a_in + a_out
        records.append(
            OpCount(
                name=name, op_type=op, macs=int(macs), flops=int(flops), param_bytes=int(p_bytes),
                act_bytes_in=int(a_in), act_bytes_out=int(a_out),
                intensity=float(flops / total) if total else 0.0, output_shape=tuple(y_shape),
            )
        )
    return records


def totals(counts: Sequence[OpCount]) -> dict[str, float]:
    """Sum a model's node counts: MACs, FLOPs, bytes and the overall intensity.

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
        If an item is not an :class:`OpCount`.

    Examples
    --------
    >>> t = totals(op_counts(example_chain(blocks=1, channels=4, size=8, residual=False)))
    >>> t["macs"], t["param_bytes"]
    (16128, 1168)
    """
    out = {"macs": 0, "flops": 0, "param_bytes": 0, "act_bytes": 0}
    for i, c in enumerate(counts):
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

    Measured by :func:`measure_machine`, or copied from a spec sheet (then say
    so in the ``*_how`` fields and cite it).
    """

    peak_flops: float  #: FLOP/s (or op/s for integer arithmetic)
    bandwidth: float  #: bytes/s to and from DRAM
    cpu: str  #: the processor (or accelerator) name
    peak_how: str  #: how ``peak_flops`` was obtained
    bandwidth_how: str  #: how ``bandwidth`` was obtained

    @property
    def ridge(self) -> float:
        """The intensity (FLOP/byte) where the two roofs meet: ``peak / bandwidth``."""
        return self.peak_flops / self.bandwidth

    def attainable(self, intensity: Any) -> Any:
        """``min(peak, bandwidth × intensity)``: the roofline at ``intensity`` FLOP/byte.

        Examples
        --------
        >>> m = MachineSpec(100e9, 10e9, "toy", "assumed", "assumed")
        >>> m.ridge, m.attainable(2.0) / 1e9, m.attainable(50.0) / 1e9
        (10.0, 20.0, 100.0)
        """
        out = np.minimum(self.peak_flops, self.bandwidth * np.asarray(intensity, dtype=float))
        return float(out) if out.ndim == 0 else out

    def bound(self, intensity: float) -> str:
        """``"memory"`` if ``intensity`` is left of the ridge, else ``"compute"``."""
        return "memory" if intensity < self.ridge else "compute"


def _blas_name() -> str:
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        return f"{deps['blas']['name']} {deps['blas'].get('version', '')}".strip()
    except Exception:  # pragma: no cover - depends on the NumPy build
        return "the BLAS NumPy was built with"


def measure_machine(*, repeat: int = 5, n: int = 1024, nbytes: int = 128 * 2**20) -> MachineSpec:
    """Measure this machine's roofline: float32 matmul rate and copy bandwidth.

    * Peak: an ``n×n`` by ``n×n`` float32 ``numpy.matmul`` into a preallocated
      output, ``2·n³`` FLOPs per call, with all the threads NumPy's BLAS uses.
      That is the best a well-tuned kernel reaches here, a practical peak
      (below the vendor's theoretical one).
    * Bandwidth: ``numpy.copyto`` of an ``nbytes`` float32 array, much larger
      than the caches, counting bytes read plus bytes written (as STREAM's
      Copy does).

    Each is warmed up twice, timed ``repeat`` times, and the median is kept
    (:func:`npukit.measure.timeit`). Other programs running at the same time lower
    both numbers.

    Parameters
    ----------
    repeat : int
        Timed repetitions of each measurement (≥ 1).
    n : int
        Matrix size for the peak (≥ 64).
    nbytes : int
        Bytes of the copied array (≥ 1 MiB); keep it ≥ 4× the last-level cache.

    Returns
    -------
    MachineSpec
        ``peak_flops`` (FLOP/s), ``bandwidth`` (bytes/s), ``cpu`` (the CPU
        name) and ``peak_how`` / ``bandwidth_how`` saying how each was measured.

    Raises
    ------
    TypeError, ValueError
        If an argument is not an integer in range.

    Examples
    --------
    >>> m = measure_machine(repeat=1, n=128, nbytes=2**20)
    >>> m.peak_flops > 0 and m.bandwidth > 0 and m.ridge > 0
    True
    """
    from . import measure

    repeat = _check.integer(repeat, "repeat", minimum=1)
    n = _check.integer(n, "n", minimum=64)
    nbytes = _check.integer(nbytes, "nbytes", minimum=2**20)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), dtype=np.float32)
    t_mm = measure.timeit(lambda: np.matmul(a, b, out=c), repeat=repeat, warmup=2)
    del a, b, c
    src = np.ones(nbytes // 4, dtype=np.float32)
    dst = np.empty_like(src)
    t_cp = measure.timeit(lambda: np.copyto(dst, src), repeat=repeat, warmup=2)
    moved = 2 * src.nbytes
    del src, dst
    return MachineSpec(
        peak_flops=2 * n**3 / t_mm,
        bandwidth=moved / t_cp,
        cpu=measure.cpu_name(),
        peak_how=(f"median of {repeat} float32 {n}×{n}×{n} numpy.matmul calls ({_blas_name()}), "
                  "2·n³ FLOP each, after 2 warm-up calls"),
        bandwidth_how=(f"median of {repeat} numpy.copyto calls on a {nbytes / 2**20:.0f} MiB float32 array, "
                       "bytes read + written, after 2 warm-up calls"),
    )


# ---- rewriting: BatchNorm folding and fusion ----------------------------------------------------


def _fresh(base: str, used: set[str]) -> str:
    name, k = base, 1
    while name in used:
        name, k = f"{base}_{k}", k + 1
    used.add(name)
    return name


def _all_names(graph: Any) -> set[str]:
    names = {v.name for v in list(graph.input) + list(graph.output) + list(graph.value_info)}
    names |= {t.name for t in graph.initializer}
    for node in graph.node:
        names |= set(node.input) | set(node.output) | {node.name}
    return names


def _consumers(graph: Any) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, node in enumerate(graph.node):
        for inp in set(node.input):
            out.setdefault(inp, []).append(i)
    return out


def _drop_unused_initializers(graph: Any) -> None:
    used = {name for node in graph.node for name in node.input} | {v.name for v in graph.output}
    keep = [t for t in graph.initializer if t.name in used]
    dropped = {t.name for t in graph.initializer} - {t.name for t in keep}
    del graph.initializer[:]
    graph.initializer.extend(keep)
    inputs = [v for v in graph.input if v.name not in dropped]
    del graph.input[:]
    graph.input.extend(inputs)


def fold_batchnorm(model: Any) -> Any:
    """Return a copy of ``model`` with no BatchNormalization nodes.

    At inference a BatchNormalization is a fixed per-channel affine map,
    ``y = s·(x − mean) + β`` with ``s = γ / √(var + ε)``. When ``x`` is the
    output of a Conv ``x = W ⊛ u + b`` that nothing else reads, the two
    collapse into one Conv with

    ``W'[k] = s[k] · W[k]`` and ``b'[k] = s[k] · (b[k] − mean[k]) + β[k]``

    (computed in float64, stored in the weights' dtype). A BatchNormalization
    that cannot be folded (its input is a graph input, or a tensor other nodes
    also read) becomes a per-channel ``Mul`` and ``Add``. The Conv keeps its
    name; its ``doc_string`` records which BatchNormalization it absorbed.

    Parameters
    ----------
    model : onnx.ModelProto
        The model (left unchanged).

    Returns
    -------
    onnx.ModelProto
        A new model that passes ``onnx.checker`` whenever ``model`` does.

    Raises
    ------
    TypeError
        If ``model`` is not an ``onnx.ModelProto``.
    ValueError
        If a BatchNormalization is in training mode, has non-constant
        parameters, or has extra outputs that something reads.

    Examples
    --------
    >>> m = example_chain(blocks=2, channels=4, size=8)
    >>> [n.op_type for n in m.graph.node].count("BatchNormalization")
    3
    >>> f = fold_batchnorm(m)
    >>> [n.op_type for n in f.graph.node]
    ['Conv', 'Relu', 'Conv', 'Add', 'Relu', 'Conv', 'Add', 'Relu']
    >>> f.graph.node[0].doc_string
    'folded: stem.bn'
    """
    import onnx
    from onnx import helper, numpy_helper

    model = _model(model)
    topological_order(model)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    consts = _constants(graph)
    inits = {t.name for t in graph.initializer}
    used = _all_names(graph)
    consumers = _consumers(graph)
    graph_outputs = {v.name for v in graph.output}
    producer = {o: i for i, n in enumerate(graph.node) for o in n.output if o}
    ranks: dict[str, int] | None = None
    drop: set[int] = set()
    replace: dict[int, list[Any]] = {}
    for i, node in enumerate(graph.node):
        if node.op_type != "BatchNormalization":
            continue
        name = _node_name(node, i)
        if _attr(node, "training_mode", 0):
            raise ValueError(f"model: BatchNormalization {name!r} is in training mode; only inference BN folds")
        if any(o and consumers.get(o) or o in graph_outputs for o in node.output[1:]):
            raise ValueError(f"model: BatchNormalization {name!r} has running-statistics outputs that are read")
        x, *params = node.input[:5]
        if not all(p in consts for p in params):
            raise ValueError(
                f"model: BatchNormalization {name!r} has non-constant parameters; scale, B, mean and var "
                "must be initializers or Constant outputs to fold"
            )
        gamma, beta, mean, var = (consts[p].astype(np.float64) for p in params)
        eps = float(_attr(node, "epsilon", 1e-5))
        s = gamma / np.sqrt(var + eps)
        y = node.output[0]
        j = producer.get(x)
        conv = graph.node[j] if j is not None else None
        foldable = (
            conv is not None and conv.op_type == "Conv" and consumers.get(x) == [i] and x not in graph_outputs
            and conv.input[1] in inits and (len(conv.input) < 3 or not conv.input[2] or conv.input[2] in inits)
        )
        if foldable:
            w = consts[conv.input[1]]
            b = consts[conv.input[2]].astype(np.float64) if len(conv.input) > 2 and conv.input[2] else 0.0
            w_new = (w.astype(np.float64) * s.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
            b_new = (s * (b - mean) + beta).astype(w.dtype)
            w_name = _fresh(conv.input[1] + "_bnfold", used)
            b_name = _fresh((conv.input[2] if len(conv.input) > 2 and conv.input[2] else conv.name or "conv")
                            + "_bnfold_bias", used)
            graph.initializer.extend([numpy_helper.from_array(w_new, w_name), numpy_helper.from_array(b_new, b_name)])
            new_inputs = [conv.input[0], w_name, b_name]
            del conv.input[:]
            conv.input.extend(new_inputs)
            conv.output[0] = y
            conv.doc_string = (conv.doc_string + "; " if conv.doc_string else "") + f"folded: {name}"
            drop.add(i)
        else:
            if ranks is None:
                import onnx.shape_inference

                inferred = onnx.shape_inference.infer_shapes(model)
                ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in
                         list(inferred.graph.input) + list(inferred.graph.value_info)
                         if v.type.tensor_type.HasField("shape")}
            if x not in ranks:
                raise ValueError(f"model: the rank of {x!r}, input of BatchNormalization {name!r}, is unknown")
            dtype = consts[params[0]].dtype
            shape = (-1,) + (1,) * (ranks[x] - 2)
            a_name, c_name, m_name = _fresh(name + "_scale", used), _fresh(name + "_shift", used), _fresh(x + "_scaled", used)
            graph.initializer.extend([numpy_helper.from_array(s.reshape(shape).astype(dtype), a_name),
                                      numpy_helper.from_array((beta - mean * s).reshape(shape).astype(dtype), c_name)])
            replace[i] = [helper.make_node("Mul", [x, a_name], [m_name], name=_fresh(name + "_mul", used)),
                          helper.make_node("Add", [m_name, c_name], [y], name=_fresh(name + "_add", used))]
    nodes = []
    for i, node in enumerate(graph.node):
        if i in replace:
            nodes.extend(replace[i])
        elif i not in drop:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.value_info[:]  # stale shapes of removed tensors; shape inference recreates them
    _drop_unused_initializers(graph)
    return out


@dataclasses.dataclass(frozen=True)
class Fusion:
    """One fused chain: its nodes, the tensors that no longer reach DRAM, the bytes saved."""

    nodes: tuple[str, ...]
    op_types: tuple[str, ...]
    removed: tuple[str, ...]
    bytes_saved: int


@dataclasses.dataclass(frozen=True)
class FusionResult:
    """The fused model and what fusion saved (see :func:`fuse_conv_add_relu`)."""

    model: Any
    fusions: tuple[Fusion, ...]

    @property
    def bytes_saved(self) -> int:
        """DRAM bytes saved per inference by all fusions together."""
        return sum(f.bytes_saved for f in self.fusions)


def fuse_conv_add_relu(model: Any) -> FusionResult:
    """Fuse every Conv → [Add] → [Relu] chain into one ``npukit.FusedConv`` node.

    A chain is fused when each intermediate tensor has exactly one reader and
    is not a graph output. Unfused, each intermediate is written to DRAM by its
    producer and read back by its consumer; fused, it stays in registers or
    on-chip memory, so the chain saves **2 × its size** in DRAM traffic. The
    fused node (domain ``npukit``) computes ``act(conv(X, W, B) + Z)``; it
    passes ``onnx.checker``, and :func:`run_reference` runs it.

    Run :func:`fold_batchnorm` first: a BatchNormalization between the Conv and
    the Add hides the pattern.

    Parameters
    ----------
    model : onnx.ModelProto
        The model (left unchanged). Its shapes must be static.

    Returns
    -------
    FusionResult
        ``model`` (the fused copy, with value_info for every tensor so
        :func:`op_counts` works on it), ``fusions`` (one :class:`Fusion` per
        chain) and ``bytes_saved``.

    Raises
    ------
    TypeError
        If ``model`` is not an ``onnx.ModelProto``.
    ValueError
        If shapes are unknown or the graph has a cycle.

    Examples
    --------
    >>> r = fuse_conv_add_relu(fold_batchnorm(example_chain(blocks=2, channels=4, size=8)))
    >>> [n.op_type for n in r.model.graph.node]
    ['FusedConv', 'FusedConv', 'FusedConv']
    >>> r.fusions[1].op_types, r.fusions[1].bytes_saved
    (('Conv', 'Add', 'Relu'), 4096)
    """
    import onnx
    from onnx import helper

    model = _model(model)
    shapes = tensor_shapes(model)
    order = topological_order(model)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    consumers = _consumers(graph)
    graph_outputs = {v.name for v in graph.output}
    used = _all_names(graph)

    def sole_reader(t: str) -> int | None:
        readers = consumers.get(t, [])
        return readers[0] if len(readers) == 1 and t not in graph_outputs else None

    taken: set[int] = set()
    place: dict[int, Any] = {}  # index of the chain's last node -> fused node
    fusions = []
    for i in order:
        conv = graph.node[i]
        if conv.op_type != "Conv" or i in taken:
            continue
        chain, residual, act = [i], "", ""
        j = sole_reader(conv.output[0])
        if j is not None and graph.node[j].op_type == "Add" and list(graph.node[j].input).count(conv.output[0]) == 1:
            add = graph.node[j]
            residual = add.input[1] if add.input[0] == conv.output[0] else add.input[0]
            chain.append(j)
            j = sole_reader(add.output[0])
        if j is not None and graph.node[j].op_type == "Relu":
            chain.append(j)
            act = "Relu"
        if len(chain) < 2:
            continue
        taken.update(chain)
        nodes = [graph.node[k] for k in chain]
        removed = tuple(n.output[0] for n in nodes[:-1])
        saved = sum(2 * math.prod(shapes[t][0]) * shapes[t][1].itemsize for t in removed)
        attrs = {a.name: helper.get_attribute_value(a) for a in conv.attribute}
        bias = conv.input[2] if len(conv.input) > 2 else ""
        name = _fresh("+".join(_node_name(graph.node[k], k) for k in chain), used)
        fused = helper.make_node("FusedConv", [conv.input[0], conv.input[1], bias, residual], [nodes[-1].output[0]],
                                 name=name, domain=FUSED_DOMAIN, activation=act, **attrs)
        fused.doc_string = "fused: " + ", ".join(_node_name(graph.node[k], k) for k in chain)
        place[chain[-1]] = fused
        fusions.append(Fusion(tuple(_node_name(graph.node[k], k) for k in chain),
                              tuple(n.op_type for n in nodes), removed, int(saved)))
    new_nodes = [place[k] if k in place else graph.node[k] for k in range(len(graph.node)) if k in place or k not in taken]
    del graph.node[:]
    graph.node.extend(new_nodes)
    if fusions and not any(o.domain == FUSED_DOMAIN for o in out.opset_import):
        out.opset_import.append(helper.make_opsetid(FUSED_DOMAIN, 1))
    # Record every tensor's shape: shape inference cannot see inside FusedConv.
    produced = {o for n in graph.node for o in n.output} - graph_outputs
    del graph.value_info[:]
    for t in sorted(produced):
        shape, dtype = shapes[t]
        graph.value_info.append(helper.make_tensor_value_info(t, helper.np_dtype_to_tensor_dtype(dtype), shape))
    return FusionResult(out, tuple(fusions))


def _fused_conv_op() -> type:
    """The onnx.reference implementation of ``npukit.FusedConv``."""
    from onnx import helper
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.op_run import OpRun

    class FusedConv(OpRun):
        op_domain = FUSED_DOMAIN

        def _run(self, X, W, B=None, Z=None, activation="", **conv_attrs):  # noqa: N803 (ONNX names)
            names = ["X", "W"] + (["B"] if B is not None else [])
            conv = ReferenceEvaluator(helper.make_node("Conv", names, ["Y"], **conv_attrs))
            y = conv.run(None, dict(zip(names, (X, W, B))))[0]
            if Z is not None:
                y = y + Z
            if activation in ("Relu", b"Relu"):
                y = np.maximum(y, 0)
            return (y.astype(X.dtype),)

    return FusedConv


def run_reference(model: Any, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run ``model`` with ``onnx.reference.ReferenceEvaluator``, fused nodes included.

    Parameters
    ----------
    model : onnx.ModelProto
        A model, possibly with ``npukit.FusedConv`` nodes.
    inputs : dict of str to numpy.ndarray
        One array per graph input.

    Returns
    -------
    list of numpy.ndarray
        The graph outputs, in order.

    Raises
    ------
    TypeError
        If ``model`` is not an ``onnx.ModelProto`` or ``inputs`` not a dict.

    Examples
    --------
    >>> m = example_chain(blocks=1, channels=4, size=8)
    >>> x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    >>> a = run_reference(m, {"x": x})[0]
    >>> b = run_reference(fuse_conv_add_relu(fold_batchnorm(m)).model, {"x": x})[0]
    >>> bool(np.allclose(a, b, atol=1e-5))
    True
    """
    from onnx.reference import ReferenceEvaluator

    model = _model(model)
    if not isinstance(inputs, dict):
        raise TypeError(f"inputs must be a dict of input name to numpy array, got {type(inputs).__name__}")
    return list(ReferenceEvaluator(model, new_ops=[_fused_conv_op()]).run(None, inputs))


# ---- memory planning ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Buffer:
    """Where one intermediate tensor lives: bytes ``[offset, offset + size)``
    of the arena, from node ``first`` (its producer) to node ``last`` (its
    last reader), both inclusive, as indices into the plan's ``order``."""

    tensor: str
    size: int
    offset: int
    first: int
    last: int

    def overlaps_in_time(self, other: "Buffer") -> bool:
        """True if both tensors are live at some node."""
        return self.first <= other.last and other.first <= self.last

    def overlaps_in_memory(self, other: "Buffer") -> bool:
        """True if the two byte ranges share a byte."""
        return self.offset < other.offset + other.size and other.offset < self.offset + self.size


@dataclasses.dataclass(frozen=True)
class MemoryPlan:
    """An arena layout for a model's intermediate tensors (see :func:`plan_memory`)."""

    order: tuple[str, ...]  #: node names in execution order
    buffers: tuple[Buffer, ...]  #: one per intermediate tensor, in order of production
    peak_bytes: int  #: arena size of the greedy reuse plan
    naive_bytes: int  #: arena size with one buffer per tensor
    lower_bound_bytes: int  #: most bytes live at once: no plan can be smaller
    alignment: int  #: every offset is a multiple of this

    def buffer(self, tensor: str) -> Buffer:
        """The :class:`Buffer` of ``tensor`` (``KeyError`` if it is not planned)."""
        for b in self.buffers:
            if b.tensor == tensor:
                return b
        raise KeyError(f"tensor {tensor!r} is not an intermediate tensor of this plan")


def live_peak(intervals: Iterable[tuple[int, int, int]]) -> int:
    """Most bytes live at any one step, for ``(size, first, last)`` intervals.

    A sweep over interval ends: at each step add the tensors born there, take
    the maximum, then remove those whose last use it was. This is a lower
    bound for any memory plan of these tensors (without in-place reuse).

    Parameters
    ----------
    intervals : iterable of (int, int, int)
        ``(size in bytes, first step, last step)``, ``first <= last``.

    Returns
    -------
    int
        The peak of the live bytes (0 for no intervals).

    Raises
    ------
    ValueError
        If an interval has ``first > last`` or a negative size.

    Examples
    --------
    >>> live_peak([(100, 0, 1), (50, 1, 2), (80, 2, 3)])
    150
    """
    events: dict[int, list[int]] = {}
    for k, (size, first, last) in enumerate(intervals):
        if size < 0 or first > last:
            raise ValueError(f"intervals[{k}] must be (size >= 0, first <= last), got {(size, first, last)}")
        events.setdefault(first, [0, 0])[0] += size
        events.setdefault(last + 1, [0, 0])[1] += size
    live = peak = 0
    for step in sorted(events):
        live -= events[step][1]
        live += events[step][0]
        peak = max(peak, live)
    return peak


def plan_memory(model: Any, *, alignment: int = 64) -> MemoryPlan:
    """Place every intermediate tensor in one arena, reusing dead tensors' bytes.

    1. Order the nodes topologically; a tensor is live from the node that
       writes it (``first``) to the last node that reads it (``last``).
       Graph inputs and outputs live in the caller's buffers and are not
       planned; neither are parameters.
    2. Greedy by size (as TensorFlow Lite's arena planner does): largest
       tensor first, each at the lowest ``alignment``-aligned offset where it
       does not overlap any already placed tensor whose lifetime overlaps its
       own.

    Two tensors live at the same node never share a byte, and the arena is
    never larger than one aligned buffer per tensor (``naive_bytes``). A
    node's output never reuses its own input's bytes (no in-place ops).

    Parameters
    ----------
    model : onnx.ModelProto
        The model, with static shapes.
    alignment : int
        Every offset is a multiple of this (a positive power of two; 64 is a
        cache line).

    Returns
    -------
    MemoryPlan
        ``order``, ``buffers`` (tensor, size, offset, first, last),
        ``peak_bytes``, ``naive_bytes``, ``lower_bound_bytes``, ``alignment``.

    Raises
    ------
    TypeError
        If ``model`` is not an ``onnx.ModelProto``.
    ValueError
        If shapes are unknown, the graph has a cycle, or ``alignment`` is not
        a positive power of two.

    Examples
    --------
    >>> plan = plan_memory(example_chain(blocks=3, channels=4, size=8, residual=False))
    >>> len(plan.buffers), plan.naive_bytes, plan.peak_bytes, plan.lower_bound_bytes
    (11, 11264, 2048, 2048)
    >>> b = plan.buffers[0]
    >>> b.tensor, b.size, b.offset, b.first, b.last
    ('stem.conv', 1024, 0, 0, 1)
    """
    alignment = _check.power_of_two(alignment, "alignment")
    model = _model(model)
    graph = model.graph
    order = topological_order(model)
    shapes = tensor_shapes(model)
    position = {node_index: step for step, node_index in enumerate(order)}
    outside = {v.name for v in graph.input} | {v.name for v in graph.output} | {t.name for t in graph.initializer}
    outside |= {n.output[0] for n in graph.node if n.op_type in CONST_OPS and n.output}
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for node_index in order:
        step, node = position[node_index], graph.node[node_index]
        for t in node.output:
            if t and t not in outside:
                first[t] = last[t] = step
        for t in node.input:
            if t in first:
                last[t] = max(last[t], step)
    sizes = {t: math.prod(shapes[t][0]) * shapes[t][1].itemsize for t in first}
    placed: list[Buffer] = []
    for t in sorted(first, key=lambda t: (-sizes[t], first[t], t)):
        me = Buffer(t, sizes[t], 0, first[t], last[t])
        offset = 0
        for b in sorted((b for b in placed if b.overlaps_in_time(me)), key=lambda b: b.offset):
            if offset + sizes[t] <= b.offset:
                break
            offset = max(offset, round_up(b.offset + b.size, alignment))
        placed.append(dataclasses.replace(me, offset=offset))
    buffers = tuple(sorted(placed, key=lambda b: (b.first, b.tensor)))
    return MemoryPlan(
        order=tuple(_node_name(graph.node[i], i) for i in order),
        buffers=buffers,
        peak_bytes=max((b.offset + b.size for b in buffers), default=0),
        naive_bytes=sum(round_up(b.size, alignment) for b in buffers),
        lower_bound_bytes=live_peak((b.size, b.first, b.last) for b in buffers),
        alignment=alignment,
    )


# ---- an example model -----------------------------------------------------------------------


def example_chain(blocks: int = 4, channels: int = 16, size: int = 32, *, batchnorm: bool = True,
                  residual: bool = True, seed: int = 0) -> Any:
    """A small deterministic ResNet-like ONNX model for examples and experiments.

    A stem ``Conv 3×3 (3 → channels) → [BN] → Relu`` followed by ``blocks``
    blocks ``Conv 3×3 → [BN] → [Add the block's input] → Relu``, all at
    ``size×size``, input ``x`` of shape ``1×3×size×size``, output ``y``. Node
    and tensor names follow the layers: ``stem.conv``, ``block1.bn``,
    ``block1.add``, ``block1.relu`` … Weights are random (seeded) and BN
    statistics are non-trivial, so folding is a real test.

    Parameters
    ----------
    blocks : int
        Number of blocks after the stem (≥ 0).
    channels : int
        Channels of every block (≥ 1).
    size : int
        Height and width (≥ 1).
    batchnorm : bool
        Put a BatchNormalization after every Conv.
    residual : bool
        Add each block's input before its Relu.
    seed : int
        Seed of the weights.

    Returns
    -------
    onnx.ModelProto
        An opset-17 model that passes ``onnx.checker``.

    Raises
    ------
    TypeError, ValueError
        If an argument is not an integer in range.

    Examples
    --------
    >>> m = example_chain(blocks=1, channels=4, size=8)
    >>> [n.name for n in m.graph.node]
    ['stem.conv', 'stem.bn', 'stem.relu', 'block1.conv', 'block1.bn', 'block1.add', 'block1.relu']
    >>> m.graph.node[-1].output[0]
    'y'
    """
    from onnx import TensorProto, helper, numpy_helper

    blocks = _check.integer(blocks, "blocks", minimum=0)
    channels = _check.integer(channels, "channels", minimum=1)
    size = _check.integer(size, "size", minimum=1)
    rng = np.random.default_rng(_check.integer(seed, "seed", minimum=0))
    nodes, inits = [], []

    def conv_bn(prefix: str, x: str, c_in: int) -> str:
        w = (rng.standard_normal((channels, c_in, 3, 3)) * np.sqrt(2.0 / (9 * c_in))).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, f"{prefix}.conv.weight"),
                      numpy_helper.from_array((0.1 * rng.standard_normal(channels)).astype(np.float32),
                                              f"{prefix}.conv.bias")])
        nodes.append(helper.make_node("Conv", [x, f"{prefix}.conv.weight", f"{prefix}.conv.bias"], [f"{prefix}.conv"],
                                      name=f"{prefix}.conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        if not batchnorm:
            return f"{prefix}.conv"
        stats = {"scale": 1 + 0.3 * rng.standard_normal(channels), "B": 0.2 * rng.standard_normal(channels),
                 "mean": 0.3 * rng.standard_normal(channels), "var": 0.5 + rng.random(channels)}
        inits.extend(numpy_helper.from_array(v.astype(np.float32), f"{prefix}.bn.{k}") for k, v in stats.items())
        nodes.append(helper.make_node("BatchNormalization", [f"{prefix}.conv"] + [f"{prefix}.bn.{k}" for k in stats],
                                      [f"{prefix}.bn"], name=f"{prefix}.bn", epsilon=1e-5))
        return f"{prefix}.bn"

    t = conv_bn("stem", "x", 3)
    nodes.append(helper.make_node("Relu", [t], ["stem.relu"], name="stem.relu"))
    t = "stem.relu"
    for k in range(1, blocks + 1):
        prefix = f"block{k}"
        h = conv_bn(prefix, t, channels)
        if residual:
            nodes.append(helper.make_node("Add", [h, t], [f"{prefix}.add"], name=f"{prefix}.add"))
            h = f"{prefix}.add"
        nodes.append(helper.make_node("Relu", [h], [f"{prefix}.relu"], name=f"{prefix}.relu"))
        t = f"{prefix}.relu"
    nodes[-1].output[0] = "y"  # the last Relu writes the graph output
    graph = helper.make_graph(
        nodes, "example_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, size, size])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="npukit.graphs")


# ---- numbers so far -------------------------------------------------------------------------


def numbers(ctx: tally.Context) -> list[tally.Row]:
    """Chapter 3's rows of the "numbers so far" table: CameraNet's graph, folding, memory and roofline.

    Follows the contract of :mod:`npukit.tally`; reads ``ctx.model`` and
    ``ctx.machine`` (measured on first use).

    Examples
    --------
    >>> from npukit import tally
    >>> spec = MachineSpec(1e11, 1e10, "example", "given", "given")
    >>> rows = numbers(tally.Context(machine=spec))
    >>> rows[0].quantity, rows[0].value
    ('MACs per image (ONNX graph)', '569,344')
    """
    from . import tally

    model, machine = _model(ctx.model), ctx.machine
    t = totals(op_counts(model))
    folded = fold_batchnorm(model)
    plan = plan_memory(folded)
    n_bn = sum(n.op_type == "BatchNormalization" for n in model.graph.node)
    return [
        tally.Row(3, "MACs per image (ONNX graph)", f"{t['macs']:,}", "op_counts: summed over the ONNX graph's nodes"),
        tally.Row(3, "parameter bytes (float32)", f"{t['param_bytes']:,}", "op_counts: bytes of every initializer read by a node"),
        tally.Row(3, "nodes before / after folding BatchNorm",
                  f"{len(model.graph.node)} / {len(folded.graph.node)} ({n_bn} BN folded)",
                  "fold_batchnorm; chapter 3 checks the folded outputs with onnx.reference"),
        tally.Row(3, "activation memory: one buffer per tensor / greedy reuse",
                  f"{plan.naive_bytes:,} B / {plan.peak_bytes:,} B",
                  f"plan_memory on the folded graph ({plan.alignment}-byte aligned offsets)"),
        tally.Row(3, "this machine's roofline",
                  f"{machine.peak_flops / 1e9:.0f} GFLOP/s, {machine.bandwidth / 1e9:.1f} GB/s",
                  f"measure_machine on {machine.cpu}: float32 matmul and a large copy"),
    ]


# ---- figures --------------------------------------------------------------------------------


