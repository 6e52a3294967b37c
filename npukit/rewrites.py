"""What a compiler does to a graph: fold, fuse, and plan memory, without changing the answer.

The invariant this module teaches: **a rewrite keeps the model's outputs and
changes what moves.** Folding a BatchNormalization into the Conv before it
is exact algebra (the outputs agree to float rounding) and removes a node;
fusing Conv → Add → Relu into one node computes the same values while the
intermediate tensors never reach DRAM; planning memory reuses a dead tensor's
bytes, so the arena needs only the most bytes live at one time, never more
than one buffer per tensor. Each claim is checked by running the rewritten
model (:func:`run_reference`) against the original. What the graph costs
before and after is counted by :mod:`npukit.graphs`.

See chapter 3b, "Rewriting the graph" (chapters/03b_rewrites.md).

onnx is imported inside the functions that need it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

from . import _check, _tally
from ._arith import round_up
from .graphs import CONST_OPS, _attr, _walkable, _model, _node_name, _record, op_counts, tensor_shapes, topological_order, totals

if TYPE_CHECKING:
    import onnx

__all__ = ["Fusion", "FusionResult", "Buffer", "MemoryPlan", "fold_batchnorm", "fuse_conv_add_relu",
           "run_reference", "live_peak", "plan_memory", "numbers"]

#: The domain of the ``FusedConv`` nodes :func:`fuse_conv_add_relu` writes:
#: ``act(Conv(X, W, B) + Z)``, counted by :func:`npukit.graphs.op_counts`.
FUSED_DOMAIN = "npukit"


# ---- helpers for editing a graph ----------------------------------------------------------


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    out = type(model)()
    out.CopyFrom(model)
    return out


def _constants(graph: Any) -> dict[str, np.ndarray]:
    """Arrays of every initializer and every ``Constant`` node's output."""
    from onnx import numpy_helper

    out = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for node in graph.node:
        for att in node.attribute if node.op_type == "Constant" else ():
            if att.name == "value":
                out[node.output[0]] = numpy_helper.to_array(att.t)
    return out


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
    dropped = {t.name for t in graph.initializer if t.name not in used}
    for field in (graph.initializer, graph.input):
        keep = [v for v in field if v.name not in dropped]
        del field[:]
        field.extend(keep)


# ---- BatchNorm folding ---------------------------------------------------------------------


def _bn_affine(node: Any, name: str, consts: dict, read: set[str]) -> tuple[np.ndarray, ...]:
    """``(s, β, mean)`` of an inference BatchNormalization, ``s = γ / √(var + ε)``, in float64."""
    if _attr(node, "training_mode", 0):
        raise ValueError(f"model: BatchNormalization {name!r} is in training mode; only inference BN folds")
    if any(o and o in read for o in node.output[1:]):
        raise ValueError(f"model: BatchNormalization {name!r} has running-statistics outputs that are read")
    if not all(p in consts for p in node.input[1:5]):
        raise ValueError(f"model: BatchNormalization {name!r} has non-constant parameters; scale, B, mean and var "
                         "must be initializers or Constant outputs to fold")
    gamma, beta, mean, var = (consts[p].astype(np.float64) for p in node.input[1:5])
    return gamma / np.sqrt(var + float(_attr(node, "epsilon", 1e-5))), beta, mean


def _fold_into_conv(graph: Any, conv: Any, bn_name: str, y: str, affine: tuple, consts: dict, used: set) -> None:
    """``W' = s·W``, ``b' = s·(b − mean) + β`` as new initializers; the Conv now writes ``y``."""
    from onnx import numpy_helper

    s, beta, mean = affine
    w = consts[conv.input[1]]
    has_bias = len(conv.input) > 2 and bool(conv.input[2])
    b = consts[conv.input[2]].astype(np.float64) if has_bias else 0.0
    w_new = (w.astype(np.float64) * s.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
    b_new = (s * (b - mean) + beta).astype(w.dtype)
    w_name = _fresh(conv.input[1] + "_bnfold", used)
    b_name = _fresh((conv.input[2] if has_bias else conv.name or "conv") + "_bnfold_bias", used)
    graph.initializer.extend([numpy_helper.from_array(w_new, w_name), numpy_helper.from_array(b_new, b_name)])
    new_inputs = [conv.input[0], w_name, b_name]
    del conv.input[:]
    conv.input.extend(new_inputs)
    conv.output[0] = y
    conv.doc_string = (conv.doc_string + "; " if conv.doc_string else "") + f"folded: {bn_name}"


def _as_mul_add(graph: Any, node: Any, name: str, affine: tuple, rank: int, dtype: np.dtype, used: set) -> list:
    """The BatchNormalization as ``Mul(x, s)`` then ``Add(·, β − mean·s)``, per channel (axis 1)."""
    from onnx import helper, numpy_helper

    s, beta, mean = affine
    x, y = node.input[0], node.output[0]
    shape = (-1,) + (1,) * (rank - 2)
    a_name, c_name, m_name = _fresh(name + "_scale", used), _fresh(name + "_shift", used), _fresh(x + "_scaled", used)
    graph.initializer.extend([numpy_helper.from_array(s.reshape(shape).astype(dtype), a_name),
                              numpy_helper.from_array((beta - mean * s).reshape(shape).astype(dtype), c_name)])
    return [helper.make_node("Mul", [x, a_name], [m_name], name=_fresh(name + "_mul", used)),
            helper.make_node("Add", [m_name, c_name], [y], name=_fresh(name + "_add", used))]


def _ranks(model: onnx.ModelProto) -> dict[str, int]:
    import onnx.shape_inference

    g = onnx.shape_inference.infer_shapes(model).graph
    return {v.name: len(v.type.tensor_type.shape.dim) for v in list(g.input) + list(g.value_info)
            if v.type.tensor_type.HasField("shape")}


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    """Return a copy of ``model`` with no BatchNormalization nodes.

    At inference a BatchNormalization is a fixed per-channel affine map,
    ``y = s·(x − mean) + β`` with ``s = γ / √(var + ε)``. When ``x`` is the
    output of a Conv ``x = W ⊛ u + b`` that nothing else reads, the two
    collapse into one Conv with ``W'[k] = s[k]·W[k]`` and
    ``b'[k] = s[k]·(b[k] − mean[k]) + β[k]`` (computed in float64, stored in
    the weights' dtype). A BatchNormalization that cannot be folded (its input
    is a graph input, or a tensor other nodes also read) becomes a per-channel
    ``Mul`` and ``Add``. The Conv keeps its name; its ``doc_string`` records
    which BatchNormalization it absorbed. See chapter 3b, "Rewriting the
    graph" (chapters/03b_rewrites.md).

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
    TypeError, ValueError
        If ``model`` is not an ``onnx.ModelProto``, the graph has a cycle, or a BatchNormalization
        is in training mode, has non-constant parameters, or has extra outputs that something reads.

    Examples
    --------
    >>> from npukit.graphs import example_chain
    >>> f = fold_batchnorm(example_chain(blocks=2, channels=4, size=8))
    >>> [n.op_type for n in f.graph.node]
    ['Conv', 'Relu', 'Conv', 'Add', 'Relu', 'Conv', 'Add', 'Relu']
    >>> f.graph.node[0].doc_string
    'folded: stem.bn'
    """
    topological_order(_model(model))
    out = _copy(model)
    graph = out.graph
    consts, inits, used = _constants(graph), {t.name for t in graph.initializer}, _all_names(graph)
    consumers, outputs = _consumers(graph), {v.name for v in graph.output}
    producer = {o: i for i, n in enumerate(graph.node) for o in n.output if o}
    ranks: dict[str, int] | None = None
    drop: set[int] = set()
    replace: dict[int, list] = {}
    for i, node in enumerate(graph.node):
        if node.op_type != "BatchNormalization":
            continue
        name, x = _node_name(node, i), node.input[0]
        affine = _bn_affine(node, name, consts, set(consumers) | outputs)
        conv = graph.node[producer[x]] if x in producer else None
        if (conv is not None and conv.op_type == "Conv" and consumers.get(x) == [i] and x not in outputs
                and conv.input[1] in inits and (len(conv.input) < 3 or not conv.input[2] or conv.input[2] in inits)):
            _fold_into_conv(graph, conv, name, node.output[0], affine, consts, used)
            drop.add(i)
            continue
        ranks = _ranks(model) if ranks is None else ranks
        if x not in ranks:
            raise ValueError(f"model: the rank of {x!r}, input of BatchNormalization {name!r}, is unknown")
        replace[i] = _as_mul_add(graph, node, name, affine, ranks[x], consts[node.input[1]].dtype, used)
    nodes = [m for i, node in enumerate(graph.node) for m in replace.get(i, [] if i in drop else [node])]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.value_info[:]  # stale shapes of removed tensors; shape inference recreates them
    _drop_unused_initializers(graph)
    return out


# ---- fusion --------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Fusion:
    """One fused chain: its nodes, the tensors that no longer reach DRAM, the bytes saved.

    See chapter 3b, "Rewriting the graph" (chapters/03b_rewrites.md).
    """

    nodes: tuple[str, ...]
    op_types: tuple[str, ...]
    removed: tuple[str, ...]
    bytes_saved: int

    def __post_init__(self) -> None:
        _record(self, names=("nodes", "op_types", "removed"), counts=("bytes_saved",))
        if len(self.nodes) < 2 or len(set(self.nodes)) != len(self.nodes):
            raise ValueError(f"nodes must name at least two different nodes (a fused chain), got {self.nodes}")
        if len(self.nodes) != len(self.op_types):
            raise ValueError(f"op_types must have one entry per node ({len(self.nodes)}), got {len(self.op_types)}")
        if len(set(self.removed)) != len(self.removed):
            raise ValueError(f"removed must name each tensor once, got {self.removed}")


@dataclasses.dataclass(frozen=True)
class FusionResult:
    """The fused model and what fusion saved (see :func:`fuse_conv_add_relu`)."""

    model: onnx.ModelProto
    fusions: tuple[Fusion, ...]

    def __post_init__(self) -> None:
        _walkable(_model(self.model))
        fusions = _check.sequence(self.fusions, "fusions")
        object.__setattr__(self, "fusions", tuple(_check.instance(f, f"fusions[{k}]", Fusion) for k, f in enumerate(fusions)))

    @property
    def bytes_saved(self) -> int:
        """DRAM bytes saved per inference by all fusions together."""
        return sum(f.bytes_saved for f in self.fusions)


def _chain(graph: Any, i: int, sole_reader: Any) -> tuple[list[int], str, str]:
    """``(node indices, residual input, activation)`` of the chain that starts at Conv ``i``.

    The Conv's output may go to an Add that reads it **once** (``Add(c, c)``
    cannot lose ``c``: its other operand is ``c`` itself), and then to a Relu;
    each link must be the sole reader of the tensor before it.
    """
    c = graph.node[i].output[0]
    chain, residual, act = [i], "", ""
    j = sole_reader(c)
    if j is not None and graph.node[j].op_type == "Add" and list(graph.node[j].input).count(c) == 1:
        add = graph.node[j]
        residual = add.input[1] if add.input[0] == c else add.input[0]
        chain.append(j)
        j = sole_reader(add.output[0])
    if j is not None and graph.node[j].op_type == "Relu":
        chain.append(j)
        act = "Relu"
    return chain, residual, act


def _fused_node(graph: Any, chain: list[int], residual: str, act: str, used: set) -> Any:
    from onnx import helper

    conv, names = graph.node[chain[0]], [_node_name(graph.node[k], k) for k in chain]
    attrs = {a.name: helper.get_attribute_value(a) for a in conv.attribute}
    bias = conv.input[2] if len(conv.input) > 2 else ""
    node = helper.make_node("FusedConv", [conv.input[0], conv.input[1], bias, residual],
                            [graph.node[chain[-1]].output[0]], name=_fresh("+".join(names), used),
                            domain=FUSED_DOMAIN, activation=act, **attrs)
    node.doc_string = "fused: " + ", ".join(names)
    return node


def fuse_conv_add_relu(model: onnx.ModelProto) -> FusionResult:
    """Fuse every Conv → [Add] → [Relu] chain into one ``npukit.FusedConv`` node.

    A chain is fused when each intermediate tensor has exactly one reader and
    is not a graph output. Unfused, each intermediate is written to DRAM by its
    producer and read back by its consumer; fused, it stays in registers or
    on-chip memory, so the chain saves **2 × its size** in DRAM traffic. The
    fused node (domain ``npukit``) computes ``act(conv(X, W, B) + Z)``; it
    passes ``onnx.checker``, and :func:`run_reference` runs it. Run
    :func:`fold_batchnorm` first: a BatchNormalization between the Conv and
    the Add hides the pattern. See chapter 3b, "Rewriting the graph"
    (chapters/03b_rewrites.md).

    Parameters
    ----------
    model : onnx.ModelProto
        The model (left unchanged). Its shapes must be static.

    Returns
    -------
    FusionResult
        ``model`` (the fused copy, with value_info for every tensor so
        :func:`npukit.graphs.op_counts` works on it), ``fusions`` (one
        :class:`Fusion` per chain) and ``bytes_saved``.

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not an ``onnx.ModelProto``, shapes are unknown or the graph has a cycle.

    Examples
    --------
    >>> from npukit.graphs import example_chain
    >>> r = fuse_conv_add_relu(fold_batchnorm(example_chain(blocks=2, channels=4, size=8)))
    >>> [n.op_type for n in r.model.graph.node]
    ['FusedConv', 'FusedConv', 'FusedConv']
    >>> r.fusions[1].op_types, r.fusions[1].bytes_saved
    (('Conv', 'Add', 'Relu'), 4096)
    """
    from onnx import helper

    shapes = tensor_shapes(_model(model))
    order = topological_order(model)
    out = _copy(model)
    graph = out.graph
    consumers, outputs, used = _consumers(graph), {v.name for v in graph.output}, _all_names(graph)

    def sole_reader(t: str) -> int | None:
        readers = consumers.get(t, [])
        return readers[0] if len(readers) == 1 and t not in outputs else None

    taken: set[int] = set()
    place: dict[int, Any] = {}  # index of the chain's last node -> fused node
    fusions = []
    for i in order:
        if graph.node[i].op_type != "Conv" or i in taken:
            continue
        chain, residual, act = _chain(graph, i, sole_reader)
        if len(chain) < 2:
            continue
        taken.update(chain)
        place[chain[-1]] = _fused_node(graph, chain, residual, act, used)
        removed = tuple(graph.node[k].output[0] for k in chain[:-1])
        saved = sum(2 * math.prod(shapes[t][0]) * shapes[t][1].itemsize for t in removed)
        fusions.append(Fusion(tuple(_node_name(graph.node[k], k) for k in chain),
                              tuple(graph.node[k].op_type for k in chain), removed, int(saved)))
    new_nodes = [place.get(k, node) for k, node in enumerate(graph.node) if k in place or k not in taken]
    del graph.node[:]
    graph.node.extend(new_nodes)
    if fusions and not any(o.domain == FUSED_DOMAIN for o in out.opset_import):
        out.opset_import.append(helper.make_opsetid(FUSED_DOMAIN, 1))
    del graph.value_info[:]  # record every tensor's shape: shape inference cannot see inside FusedConv
    for t in sorted({o for n in graph.node for o in n.output} - outputs):
        shape, dtype = shapes[t]
        graph.value_info.append(helper.make_tensor_value_info(t, helper.np_dtype_to_tensor_dtype(dtype), shape))
    return FusionResult(out, tuple(fusions))


# ---- running a rewritten graph -------------------------------------------------------------


def _fused_conv_op() -> type:
    """The onnx.reference implementation of ``npukit.FusedConv``: ``act(Conv(X, W, B) + Z)``."""
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


def _feeds(graph: Any, inputs: Any) -> dict[str, np.ndarray]:
    """Check ``inputs`` against the graph inputs: the same names, dtypes and static dimensions."""
    from onnx import helper

    if not isinstance(inputs, dict):
        raise TypeError(f"inputs must be a dict of input name to numpy array, got {type(inputs).__name__}")
    inits = {t.name for t in graph.initializer}
    declared = {v.name: v.type.tensor_type for v in graph.input}
    for name in inputs:
        if name not in declared:
            raise ValueError(f"inputs has {name!r}, which is not a graph input; the inputs are "
                             f"{sorted(set(declared) - inits)}")
    for name, tt in declared.items():
        if name not in inputs and name not in inits:
            raise ValueError(f"inputs has no array for the graph input {name!r}")
        if name not in inputs:
            continue
        a = _check.as_array(inputs[name], f"inputs[{name!r}]")
        if tt.elem_type and a.dtype != helper.tensor_dtype_to_np_dtype(tt.elem_type):
            raise TypeError(f"inputs[{name!r}] must have dtype {helper.tensor_dtype_to_np_dtype(tt.elem_type)}, "
                            f"got {a.dtype}")
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        if tt.HasField("shape") and (a.ndim != len(dims) or any(d not in (None, s) for d, s in zip(dims, a.shape))):
            shown = ", ".join("?" if d is None else str(d) for d in dims)
            raise ValueError(f"inputs[{name!r}] must have shape ({shown}), got {a.shape}")
    return dict(inputs)


def run_reference(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Run ``model`` with ``onnx.reference.ReferenceEvaluator``, ``npukit.FusedConv`` nodes included.

    The check every rewrite here must pass: run the rewritten model and the
    original on the same inputs and compare. See chapter 3b, "Rewriting the
    graph" (chapters/03b_rewrites.md).

    Parameters
    ----------
    model : onnx.ModelProto
        A model, possibly with ``npukit.FusedConv`` nodes.
    inputs : dict of str to numpy.ndarray
        One array per graph input (initializers may be left out), of the
        declared dtype and static dimensions.

    Returns
    -------
    list of numpy.ndarray
        The graph outputs, in order.

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not an ``onnx.ModelProto``, ``inputs`` not a dict, or an input is missing,
        unknown, not an array, or of the wrong dtype or shape (the message names it).

    Examples
    --------
    >>> from npukit.graphs import example_chain
    >>> m = example_chain(blocks=1, channels=4, size=8)
    >>> x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    >>> a = run_reference(m, {"x": x})[0]
    >>> b = run_reference(fuse_conv_add_relu(fold_batchnorm(m)).model, {"x": x})[0]
    >>> bool(np.allclose(a, b, atol=1e-5))
    True
    >>> run_reference(m, {"x": x[0]})
    Traceback (most recent call last):
    ValueError: inputs['x'] must have shape (1, 3, 8, 8), got (3, 8, 8)
    """
    from onnx.reference import ReferenceEvaluator

    feeds = _feeds(_walkable(_model(model)).graph, inputs)
    return list(ReferenceEvaluator(model, new_ops=[_fused_conv_op()]).run(None, feeds))


# ---- memory planning ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Buffer:
    """Where one intermediate tensor lives: bytes ``[offset, offset + size)`` of the arena.

    From node ``first`` (its producer) to node ``last`` (its last reader),
    both inclusive, as indices into the plan's ``order``. See chapter 3b,
    "Rewriting the graph" (chapters/03b_rewrites.md).
    """

    tensor: str
    size: int
    offset: int
    first: int
    last: int

    def __post_init__(self) -> None:
        _record(self, text=("tensor",), counts=("size", "offset", "first", "last"))
        if self.last < self.first:
            raise ValueError(f"last must be >= first ({self.first}), got {self.last}")

    def overlaps_in_time(self, other: Buffer) -> bool:
        """True if both tensors are live at some node."""
        other = _check.instance(other, "other", Buffer)
        return self.first <= other.last and other.first <= self.last

    def overlaps_in_memory(self, other: Buffer) -> bool:
        """True if the two byte ranges share a byte."""
        other = _check.instance(other, "other", Buffer)
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

    def __post_init__(self) -> None:
        _record(self, names=("order",), counts=("peak_bytes", "naive_bytes", "lower_bound_bytes"))
        buffers = _check.sequence(self.buffers, "buffers")
        object.__setattr__(self, "buffers", tuple(_check.instance(b, f"buffers[{k}]", Buffer) for k, b in enumerate(buffers)))
        alignment = _check.power_of_two(self.alignment, "alignment")
        self._check_layout(alignment)

    def _check_layout(self, alignment: int) -> None:
        """The plan's promises: distinct names, lifetimes in ``order``, aligned offsets, no byte shared by two live tensors."""
        if len(set(self.order)) != len(self.order):
            raise ValueError("order must name each node once")
        if len({b.tensor for b in self.buffers}) != len(self.buffers):
            raise ValueError("buffers must hold each tensor once")
        for k, b in enumerate(self.buffers):
            if b.last >= len(self.order):
                raise ValueError(f"buffers[{k}] ({b.tensor!r}) lives until node {b.last}, past the {len(self.order)} nodes of order")
            if b.offset % alignment:
                raise ValueError(f"buffers[{k}] ({b.tensor!r}) has offset {b.offset}, not a multiple of alignment {alignment}")
            for j in range(k):
                o = self.buffers[j]
                if b.size and o.size and b.overlaps_in_time(o) and b.overlaps_in_memory(o):
                    raise ValueError(f"buffers[{k}] ({b.tensor!r}) and buffers[{j}] ({o.tensor!r}) are live together "
                                     "and share bytes")
        sums = {"peak_bytes": max((b.offset + b.size for b in self.buffers), default=0),
                "naive_bytes": sum(round_up(b.size, alignment) for b in self.buffers),
                "lower_bound_bytes": live_peak((b.size, b.first, b.last) for b in self.buffers)}
        for f, want in sums.items():
            if getattr(self, f) != want:
                raise ValueError(f"{f} must be {want:,} for these buffers, got {getattr(self, f):,}")

    def buffer(self, tensor: str) -> Buffer:
        """The :class:`Buffer` of ``tensor`` (``KeyError`` if it is not planned)."""
        _check.text(tensor, "tensor")
        for b in self.buffers:
            if b.tensor == tensor:
                return b
        raise KeyError(f"tensor {tensor!r} is not an intermediate tensor of this plan")


def live_peak(intervals: Iterable[tuple[int, int, int]]) -> int:
    """Most bytes live at any one step, for ``(size, first, last)`` intervals.

    A sweep over interval ends: at each step add the tensors born there, take
    the maximum, then remove those whose last use it was. This is a lower
    bound for any memory plan of these tensors (without in-place reuse). See
    chapter 3b, "Rewriting the graph" (chapters/03b_rewrites.md).

    Parameters
    ----------
    intervals : iterable of (int, int, int)
        ``(size in bytes, first step, last step)``, ``size >= 0``, ``first <= last``.

    Returns
    -------
    int
        The peak of the live bytes (0 for no intervals).

    Raises
    ------
    TypeError, ValueError
        If ``intervals`` is not an iterable of integer triples, or one has ``first > last`` or ``size < 0``.

    Examples
    --------
    >>> live_peak([(100, 0, 1), (50, 1, 2), (80, 2, 3)])
    150
    """
    if isinstance(intervals, (str, bytes, dict)) or not isinstance(intervals, Iterable):
        raise TypeError(f"intervals must be an iterable of (size, first, last) triples, got {type(intervals).__name__}")
    events: dict[int, list[int]] = {}
    for k, item in enumerate(intervals):
        size, first, last = (_check.integer(v, f"intervals[{k}]") for v in _check.sequence(item, f"intervals[{k}]", length=3))
        if size < 0 or first > last:
            raise ValueError(f"intervals[{k}] must be (size >= 0, first <= last), got {(size, first, last)}")
        events.setdefault(first, [0, 0])[0] += size
        events.setdefault(last + 1, [0, 0])[1] += size
    live = peak = 0
    for step in sorted(events):
        live += events[step][0] - events[step][1]
        peak = max(peak, live)
    return peak


def _lifetimes(model: onnx.ModelProto, order: list[int]) -> tuple[dict[str, int], dict[str, int]]:
    """``first`` (producer's step) and ``last`` (last reader's step) of every intermediate tensor."""
    graph = model.graph
    outside = {v.name for v in graph.input} | {v.name for v in graph.output} | {t.name for t in graph.initializer}
    outside |= {n.output[0] for n in graph.node if n.op_type in CONST_OPS and n.output}
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for step, node_index in enumerate(order):
        node = graph.node[node_index]
        for t in node.output:
            if t and t not in outside:
                first[t] = last[t] = step
        for t in node.input:
            if t in first:
                last[t] = max(last[t], step)
    return first, last


def _place(sizes: dict[str, int], first: dict[str, int], last: dict[str, int], alignment: int) -> list[Buffer]:
    """Greedy by size: each tensor at the lowest aligned offset clear of every placed tensor live with it."""
    placed: list[Buffer] = []
    for t in sorted(first, key=lambda t: (-sizes[t], first[t], t)):
        me = Buffer(t, sizes[t], 0, first[t], last[t])
        offset = 0
        for b in sorted((b for b in placed if b.overlaps_in_time(me)), key=lambda b: b.offset):
            if offset + sizes[t] <= b.offset:
                break
            offset = max(offset, round_up(b.offset + b.size, alignment))
        placed.append(dataclasses.replace(me, offset=offset))
    return placed


def plan_memory(model: onnx.ModelProto, *, alignment: int = 64) -> MemoryPlan:
    """Place every intermediate tensor in one arena, reusing dead tensors' bytes.

    1. Order the nodes topologically; a tensor is live from the node that
       writes it (``first``) to the last node that reads it (``last``).
       Graph inputs and outputs live in the caller's buffers and are not
       planned; neither are parameters.
    2. Greedy by size (as TensorFlow Lite's arena planner does): largest
       tensor first, each at the lowest ``alignment``-aligned offset where it
       does not overlap any already placed tensor whose lifetime overlaps its own.

    Two tensors live at the same node never share a byte, and the arena is
    never larger than one aligned buffer per tensor (``naive_bytes``). A
    node's output never reuses its own input's bytes (no in-place ops). See
    chapter 3b, "Rewriting the graph" (chapters/03b_rewrites.md).

    Parameters
    ----------
    model : onnx.ModelProto
        The model, with static shapes.
    alignment : int
        Every offset is a multiple of this (a positive power of two; 64 is a cache line).

    Returns
    -------
    MemoryPlan
        ``order``, ``buffers`` (tensor, size, offset, first, last),
        ``peak_bytes``, ``naive_bytes``, ``lower_bound_bytes``, ``alignment``.

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not an ``onnx.ModelProto`` with static shapes and no cycle, or
        ``alignment`` is not a positive power of two.

    Examples
    --------
    >>> from npukit.graphs import example_chain
    >>> plan = plan_memory(example_chain(blocks=3, channels=4, size=8, residual=False))
    >>> len(plan.buffers), plan.naive_bytes, plan.peak_bytes, plan.lower_bound_bytes
    (11, 11264, 2048, 2048)
    >>> b = plan.buffers[0]
    >>> b.tensor, b.size, b.offset, b.first, b.last
    ('stem.conv', 1024, 0, 0, 1)
    """
    alignment = _check.power_of_two(alignment, "alignment")
    order = topological_order(_model(model))
    shapes = tensor_shapes(model)
    first, last = _lifetimes(model, order)
    sizes = {t: math.prod(shapes[t][0]) * shapes[t][1].itemsize for t in first}
    buffers = tuple(sorted(_place(sizes, first, last, alignment), key=lambda b: (b.first, b.tensor)))
    return MemoryPlan(
        order=tuple(_node_name(model.graph.node[i], i) for i in order),
        buffers=buffers,
        peak_bytes=max((b.offset + b.size for b in buffers), default=0),
        naive_bytes=sum(round_up(b.size, alignment) for b in buffers),
        lower_bound_bytes=live_peak((b.size, b.first, b.last) for b in buffers),
        alignment=alignment,
    )


# ---- numbers so far -------------------------------------------------------------------------


def numbers(ctx: _tally.Inputs) -> list[_tally.Row]:
    """Chapter 3's rows of the "numbers so far" table: CameraNet's graph, folding, memory and roofline.

    Follows the contract of :mod:`npukit.tally`; reads ``ctx.model``,
    ``ctx.weight_bytes`` and ``ctx.machine`` (the build's profile, measured
    once and read by every page). See chapter 3b, "Rewriting the
    graph" (chapters/03b_rewrites.md).

    Examples
    --------
    >>> from npukit import tally
    >>> from npukit.graphs import MachineSpec
    >>> rows = numbers(tally.Context(machine=MachineSpec(1e11, 1e10, "example", "given", "given")))
    >>> rows[0].quantity, rows[0].value
    ('MACs per image (ONNX graph)', '569,344')
    """
    _tally.inputs(ctx)
    model, machine = _model(ctx.model), ctx.machine
    t = totals(op_counts(model))
    folded = fold_batchnorm(model)
    plan = plan_memory(folded)
    n_bn = sum(n.op_type == "BatchNormalization" for n in model.graph.node)
    return [
        _tally.Row(3, "MACs per image (ONNX graph)", f"{t['macs']:,}", "op_counts: summed over the ONNX graph's nodes"),
        _tally.Row(3, "weight bytes, float32: as exported / BatchNorm folded (as deployed)",
                   f"{t['param_bytes']:,} B / {ctx.weight_bytes['FP32']:,} B",
                   "op_counts: bytes of every initializer read by a node; fold_batchnorm drops BN's four vectors "
                   "per channel for one bias"),
        _tally.Row(3, "nodes before / after folding BatchNorm",
                  f"{len(model.graph.node)} / {len(folded.graph.node)} ({n_bn} BN folded)",
                  "fold_batchnorm; chapter 3 checks the folded outputs with onnx.reference"),
        _tally.Row(3, "activation memory: one buffer per tensor / greedy reuse",
                  f"{plan.naive_bytes:,} B / {plan.peak_bytes:,} B",
                  f"plan_memory on the folded graph ({plan.alignment}-byte aligned offsets)"),
        _tally.Row(3, "this machine's roofline",
                   f"{machine.peak_flops / 1e9:.0f} GFLOP/s, {machine.bandwidth / 1e9:.1f} GB/s",
                   f"roofline.measure_machine on {machine.cpu}: float32 matmul and a large copy"
                   + (f", both on {machine.threads} threads" if machine.threads else "")
                   + "; measured once for the build (npukit.shared.machine)"),
    ]
