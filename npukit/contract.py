"""What an NPU accepts: its contract, the split when a graph breaks it, and the other runtimes.

The invariant this module teaches: **a graph runs on an NPU only as far as it
keeps the NPU's contract, and every tensor that crosses the cut to another
device is a copy and a synchronisation.** An NPU compiler accepts a fixed set
of operators, static shapes and a few data types; what breaks the contract
runs elsewhere (or fails to compile), and the bytes that cross between the
pieces are the price:

* :func:`supported_ops` — which operators a real device takes (OpenVINO's
  ``query_model``); :class:`NPUProfile`, :data:`ILLUSTRATIVE_NPU`,
  :func:`check_contract` — an illustrative NPU's rules and every node that
  breaks one; :func:`partition` — NPU and CPU subgraphs, and the bytes that
  cross between them; :func:`host_alignment` — what a host buffer's address
  really is, against the alignment a DMA engine may demand;
* :func:`groupnorm_model`, :func:`decompose_groupnorm` — an operator a device
  lacks, lowered to the primitives it has;
* :func:`split_model` — one model cut into a pipeline of models;
* :func:`ort_quantize_qdq`, :func:`ort_session` — the practitioners' INT8 tool
  (ONNX Runtime's quantizer, beside chapter 6's :func:`npukit.ptq.to_qdq`) and ONNX Runtime, the front end of several
  vendors' NPU stacks, beside OpenVINO.

The runtime side (devices, compiling, the executed graph, profiles, timing)
is :mod:`npukit.deploy`. ``onnx``, ``openvino`` and ``onnxruntime`` are
imported inside the functions.

See chapter 7, "Deploying to an NPU" (chapters/07_deploy.md).
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Mapping, Sequence

import numpy as np

from . import _check
from .graphs import _walkable

__all__ = [
    "supported_ops", "NPUProfile", "ILLUSTRATIVE_NPU", "Violation", "check_contract", "Partition", "partition",
    "host_alignment",
    "groupnorm_model", "decompose_groupnorm", "split_model", "ort_quantize_qdq", "ort_session",
]


def supported_ops(model: Any, device: str = "CPU", *, core: Any = None) -> dict[str, str]:
    """``Core.query_model``: each operation of the model the device can run, mapped to that device.

    An operation absent from the result is one the device cannot run:
    compiled for ``"NPU"`` alone the model then fails to compile (the plugin
    does not hand the operation to another device), while under
    ``HETERO:NPU,CPU`` it would run on the next device, which OpenVINO's NPU
    page documents as "partially supported, for certain models" (its
    feature table says "No"). The names are OpenVINO's, after it read the model: a node it
    decomposed on reading (an ONNX ``Gemm`` becomes MatMul and Add) appears
    under new names.

    Parameters
    ----------
    model : onnx.ModelProto, str, pathlib.Path, bytes or openvino.Model
    device : str
        A device this machine has (``"CPU"``, ``"NPU"``, ``"GPU.0"`` …).
    core : openvino.Core, optional

    Returns
    -------
    dict
        Operation friendly name → device name. A missing physical device is a
        ``ValueError`` listing the devices present.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> ops = supported_ops(CameraNet.pretrained().to_onnx(), "CPU")
    >>> ops["stem.conv"]
    'CPU'
    """
    from .deploy import DEVICES, _check_graph, _core, _device, _present, _read

    if not isinstance(device, str) or not device:
        raise TypeError(f"device must be a device name such as 'CPU', got {device!r}")
    _check_graph(model)  # OpenVINO's reader never returns on a cyclic graph
    core = _core(core)
    available = tuple(core.available_devices)
    if device.split(".")[0] in DEVICES and _present(device, available) is None:
        raise ValueError(f"device {device!r} is not on this machine (OpenVINO sees {', '.join(available)})")
    _device(device, core)
    return dict(core.query_model(_read(model, core), device))


# ---- an NPU contract ----------------------------------------------------------------------------

#: The rules :func:`check_contract` checks, the values of :attr:`Violation.rule`.
_RULES = ("op", "rank", "conv_stride", "static_shape", "dtype")


def _op_types(ops: Any, name: str) -> frozenset:
    """``ops`` as a frozenset of ONNX operator type names (a set, list or tuple of them; a string is refused)."""
    if isinstance(ops, str):  # "ConvRelu" would be tested by substring, list("Conv") is letters
        raise TypeError(f"{name} must be a set, list or tuple of operator types such as {{'Conv', 'Relu'}}, got str")
    if isinstance(ops, (set, frozenset)):
        ops = sorted(ops, key=repr)
    ops = _check.sequence(ops, name, min_length=1)
    for i, op in enumerate(ops):
        if not isinstance(op, str) or not op.isidentifier() or not op[0].isupper():
            raise (TypeError if not isinstance(op, str) else ValueError)(
                f"{name}[{i}] must be an ONNX operator type such as 'Conv', got {op!r}")
    return frozenset(ops)


def _dtype_names(dtypes: Any, name: str) -> frozenset:
    """``dtypes`` as a frozenset of NumPy dtype names ("float32", "int8" …), each checked."""
    if isinstance(dtypes, str):
        raise TypeError(f"{name} must be a set, list or tuple of dtype names such as {{'int8', 'float16'}}, got str")
    if isinstance(dtypes, (set, frozenset)):
        dtypes = sorted(dtypes, key=repr)
    dtypes = _check.sequence(dtypes, name, min_length=1)
    for i, t in enumerate(dtypes):
        _check.text(t, f"{name}[{i}]")
        try:
            ok = np.dtype(t).name == t
        except TypeError:
            ok = False
        if not ok:
            raise ValueError(f"{name}[{i}] must be a NumPy dtype name such as 'float32' or 'int8', got {t!r}")
    return frozenset(dtypes)



@dataclasses.dataclass(frozen=True)
class NPUProfile:
    """What one (hypothetical) NPU compiler accepts: a contract a model's graph must meet.

    Each field is one rule; ``sources`` says, per rule, which published NPU
    constraint inspired it. The profile is illustrative, not any vendor's
    real list (see chapter 7).
    """

    name: str
    ops: frozenset  #: ONNX operator types the NPU runs
    max_rank: int = 4  #: no tensor of higher rank
    conv_strides: tuple = (1, 2)  #: allowed Conv strides
    static_shapes: bool = True  #: every dimension known at compile time
    dtypes: frozenset = frozenset({"float32", "float16", "int8", "uint8", "int32"})  #: tensor element types
    max_tensors: int = 64  #: at most this many tensors (activations + weights) in one NPU subgraph
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not _check.text(self.name, "name"):
            raise ValueError("name must not be empty")
        object.__setattr__(self, "ops", _op_types(self.ops, "ops"))
        object.__setattr__(self, "max_rank", _check.integer(self.max_rank, "max_rank", minimum=1, maximum=64))
        strides = _check.sequence(self.conv_strides, "conv_strides", min_length=1)
        object.__setattr__(self, "conv_strides", tuple(
            _check.integer(v, f"conv_strides[{i}]", minimum=1) for i, v in enumerate(strides)))
        _check.boolean(self.static_shapes, "static_shapes")
        object.__setattr__(self, "dtypes", _dtype_names(self.dtypes, "dtypes"))
        object.__setattr__(self, "max_tensors", _check.integer(self.max_tensors, "max_tensors", minimum=2))
        if not isinstance(self.sources, Mapping):
            raise TypeError(f"sources must be a mapping of rule names to citations, got {type(self.sources).__name__}")
        for k, v in self.sources.items():
            _check.one_of(k, "sources key", _RULES + ("max_tensors",))
            _check.text(v, f"sources[{k!r}]")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "NPUProfile":
        """Build a profile from a dict (as read from JSON).

        Examples
        --------
        >>> NPUProfile.from_dict({"name": "toy", "ops": ["Conv", "Relu"]}).ops == {"Conv", "Relu"}
        True
        """
        if not isinstance(d, Mapping):
            raise TypeError(f"d must be a mapping (e.g. parsed JSON), got {type(d).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        extra = set(d) - known
        if extra or "name" not in d or "ops" not in d:
            raise ValueError(f"d must have 'name' and 'ops' and only keys from {sorted(known)}; got {sorted(d)}")
        kw = dict(d)
        kw["ops"] = _op_types(kw["ops"], "d['ops']")
        if "dtypes" in kw:
            kw["dtypes"] = _dtype_names(kw["dtypes"], "d['dtypes']")
        if "conv_strides" in kw:
            kw["conv_strides"] = _check.sequence(kw["conv_strides"], "d['conv_strides']")
        kw["max_rank"] = _check.integer(kw.get("max_rank", 4), "d['max_rank']", minimum=1)
        kw["max_tensors"] = _check.integer(kw.get("max_tensors", 64), "d['max_tensors']", minimum=2)
        return cls(**kw)

    def to_dict(self) -> dict:
        """The profile as JSON-ready data."""
        d = dataclasses.asdict(self)
        d["ops"], d["dtypes"], d["conv_strides"] = sorted(self.ops), sorted(self.dtypes), list(self.conv_strides)
        d["sources"] = dict(self.sources)
        return d

    def without(self, *ops: str) -> "NPUProfile":
        """The same profile lacking some operator types.

        Examples
        --------
        >>> "Relu" in ILLUSTRATIVE_NPU.without("Relu").ops
        False
        """
        for i, op in enumerate(ops):
            if not isinstance(op, str):
                raise TypeError(f"ops[{i}] must be an operator type name, got {type(op).__name__}")
            if op not in self.ops:
                raise ValueError(f"ops[{i}] must be an operator of the profile (to remove), got {op!r}; "
                                 f"it has {', '.join(sorted(self.ops))}")
        return dataclasses.replace(self, name=f"{self.name} without {', '.join(ops)}", ops=self.ops - set(ops))


#: The course's illustrative NPU: each rule's inspiration is cited in chapter 7's references.
ILLUSTRATIVE_NPU = NPUProfile(
    name="illustrative NPU",
    ops=frozenset({"Conv", "Relu", "Clip", "Add", "Mul", "MaxPool", "AveragePool", "GlobalAveragePool",
                   "Gemm", "MatMul", "Flatten", "Reshape", "Concat", "Sigmoid", "Softmax",
                   "BatchNormalization", "QuantizeLinear", "DequantizeLinear"}),
    sources={
        "op": "supported-operator lists: Intel NPU plugin, AMD Ryzen AI (Vitis AI EP), Qualcomm QNN EP",
        "static_shape": "Intel NPU plugin and OpenVINO's feature table: no dynamic shapes on the NPU",
        "dtype": "Ryzen AI: INT8 QDQ models; Intel NPU: FP16/INT8 execution; no 64-bit tensors",
        "rank": "the source article's hardware constraints (a maximum tensor rank, commonly 4-D)",
        "conv_stride": "the source article's contract table (strides 1 or 2)",
        "max_tensors": "the source article's contract table (≤ 64 tensors per NPU task)",
    },
)


@dataclasses.dataclass(frozen=True)
class Violation:
    """One broken rule: which node, which rule, and what exactly."""

    node: str
    op_type: str
    rule: str  #: "op", "rank", "conv_stride", "static_shape" or "dtype"
    detail: str

    def __post_init__(self) -> None:
        _check.record(self, text=("node", "op_type", "rule", "detail"))
        _check.one_of(self.rule, "rule", _RULES)


def _shapes(model: Any) -> dict[str, tuple[tuple, str]]:
    """Every tensor's (shape with None for unknown dims, dtype name) after ONNX shape inference."""
    import onnx
    from onnx import helper

    inferred = onnx.shape_inference.infer_shapes(model)
    out = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        t = vi.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)
        out[vi.name] = (dims, np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type)).name)
    for init in inferred.graph.initializer:
        out[init.name] = (tuple(init.dims), np.dtype(helper.tensor_dtype_to_np_dtype(init.data_type)).name)
    return out


def _model_proto(model: Any, name: str = "model") -> Any:
    """``model`` if it is an ``onnx.ModelProto`` with a walkable graph (no cycle, no dangling input)."""
    if type(model).__name__ != "ModelProto":
        raise TypeError(f"{name} must be an onnx.ModelProto, got {type(model).__name__}")
    return _walkable(model, name)


def check_contract(model: Any, profile: NPUProfile = ILLUSTRATIVE_NPU) -> list[Violation]:
    """Every node of an ONNX model that breaks a rule of ``profile``, one :class:`Violation` per rule.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> check_contract(CameraNet.pretrained().to_onnx())
    []
    >>> [v.node for v in check_contract(CameraNet.pretrained().to_onnx(), ILLUSTRATIVE_NPU.without("Relu"))][:2]
    ['stem.relu', 'block1.dw_relu']
    """
    model = _model_proto(model)
    if not isinstance(profile, NPUProfile):
        raise TypeError(f"profile must be an NPUProfile, got {type(profile).__name__}")
    shapes = _shapes(model)
    out = []
    for i, node in enumerate(model.graph.node):
        name = node.name or f"{node.op_type}_{i}"
        if node.op_type not in profile.ops:
            out.append(Violation(name, node.op_type, "op", f"{node.op_type} is not in the NPU's operator list"))
        if node.op_type == "Conv":
            strides = next((list(a.ints) for a in node.attribute if a.name == "strides"), [1])
            if any(s not in profile.conv_strides for s in strides):
                out.append(Violation(name, node.op_type, "conv_stride", f"strides {strides} not in {profile.conv_strides}"))
        for t in [*node.input, *node.output]:
            if not t or t not in shapes:
                continue
            dims, dtype = shapes[t]
            if len(dims) > profile.max_rank:
                out.append(Violation(name, node.op_type, "rank", f"{t} has rank {len(dims)} > {profile.max_rank}"))
            if profile.static_shapes and any(d is None or d == 0 for d in dims) and t not in {i.name for i in model.graph.initializer}:
                out.append(Violation(name, node.op_type, "static_shape", f"{t} has shape {dims} with unknown dimensions"))
            if dtype not in profile.dtypes:
                out.append(Violation(name, node.op_type, "dtype", f"{t} is {dtype}"))
    unique = {(v.node, v.rule, v.detail): v for v in out}
    return list(unique.values())


@dataclasses.dataclass(frozen=True)
class Partition:
    """A model split into device subgraphs, and the tensors that cross between them."""

    subgraphs: tuple  #: (device, tuple of node names) in execution order
    crossings: tuple  #: (tensor, from subgraph index, to subgraph index, bytes)

    def __post_init__(self) -> None:
        subgraphs = _check.sequence(self.subgraphs, "subgraphs")
        for i, g in enumerate(subgraphs):
            device, nodes = _check.sequence(g, f"subgraphs[{i}]", length=2)
            _check.one_of(device, f"subgraphs[{i}][0]", ("NPU", "CPU"))
            for k, n in enumerate(_check.sequence(nodes, f"subgraphs[{i}][1]", min_length=1)):
                _check.text(n, f"subgraphs[{i}][1][{k}]")
        if self.crossings and len(subgraphs) < 2:
            raise ValueError(f"crossings must be empty with fewer than two subgraphs, got {len(self.crossings)}")
        for i, c in enumerate(_check.sequence(self.crossings, "crossings")):
            tensor, src, dst, nbytes = _check.sequence(c, f"crossings[{i}]", length=4)
            _check.text(tensor, f"crossings[{i}][0]")
            src = _check.integer(src, f"crossings[{i}][1]", minimum=0, maximum=len(subgraphs) - 1)
            dst = _check.integer(dst, f"crossings[{i}][2]", minimum=0, maximum=len(subgraphs) - 1)
            if src == dst or subgraphs[src][0] == subgraphs[dst][0]:
                raise ValueError(f"crossings[{i}] must join subgraphs on two devices, got {src} and {dst}")
            _check.integer(nbytes, f"crossings[{i}][3]", minimum=0)

    @property
    def crossing_bytes(self) -> int:
        """Bytes copied between devices per inference (each crossing tensor once per consumer subgraph)."""
        return sum(c[3] for c in self.crossings)


def partition(model: Any, profile: NPUProfile = ILLUSTRATIVE_NPU) -> Partition:
    """Split a model into NPU and CPU subgraphs by ``profile`` and count the bytes that cross.

    Nodes are taken in topological order; a node with any contract violation
    runs on the CPU, every other on the NPU, and consecutive nodes on one
    device form one subgraph, which is cut again whenever it would hold more
    than ``profile.max_tensors`` tensors (activations and weights). A tensor
    made in one subgraph and read in another is copied once per reading
    subgraph; graph inputs and outputs (host I/O) are not counted.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> p = partition(CameraNet.pretrained().to_onnx(), ILLUSTRATIVE_NPU.without("GlobalAveragePool"))
    >>> [d for d, _ in p.subgraphs], p.crossing_bytes
    (['NPU', 'CPU', 'NPU'], 8704)
    """
    from .graphs import topological_order

    model = _model_proto(model)
    bad = {v.node for v in check_contract(model, profile)}
    shapes = _shapes(model)
    inits = {i.name for i in model.graph.initializer}
    nodes = model.graph.node
    groups: list[tuple[str, list]] = []
    tensors_in_group: set = set()
    for idx in topological_order(model):
        node = nodes[idx]
        name = node.name or f"{node.op_type}_{idx}"
        device = "CPU" if name in bad else "NPU"
        mine = {t for t in [*node.input, *node.output] if t}
        if (not groups or groups[-1][0] != device
                or (device == "NPU" and len(tensors_in_group | mine) > profile.max_tensors)):
            groups.append((device, []))
            tensors_in_group = set()
        groups[-1][1].append(idx)
        tensors_in_group |= mine
    made_in = {t: g for g, (_, idxs) in enumerate(groups) for i in idxs for t in nodes[i].output}
    crossings = []
    for g, (_, idxs) in enumerate(groups):
        read = {t for i in idxs for t in nodes[i].input if t and t not in inits}
        for t in sorted(read):
            if t in made_in and made_in[t] != g and groups[made_in[t]][0] != groups[g][0]:
                dims, dtype = shapes[t]
                crossings.append((t, made_in[t], g, int(np.prod(dims)) * np.dtype(dtype).itemsize))
    subgraphs = tuple((d, tuple(nodes[i].name or f"{nodes[i].op_type}_{i}" for i in idxs)) for d, idxs in groups)
    return Partition(subgraphs, tuple(crossings))


def host_alignment(samples: int = 2000, nbytes: int = 1000) -> dict[int, float]:
    """The fraction of fresh ``openvino.Tensor`` host buffers whose address is a multiple of 16, 64, 128.

    The first source article's "tensor contract" demands 128-byte-aligned
    host buffers and claims an ``ov.Tensor`` has them. Measured, not promised:
    OpenVINO's default allocator guarantees 16 bytes (``alignof(max_align_t)``
    on x86-64); anything more is luck. Every tensor is kept alive until
    counted, so the allocator cannot hand one address back twice.

    Parameters
    ----------
    samples : int
        How many tensors to allocate.
    nbytes : int
        The size of each.

    Returns
    -------
    dict
        Alignment in bytes → fraction of the addresses that are a multiple of it.

    Examples
    --------
    >>> host_alignment(50)[16]
    1.0
    """
    import openvino as ov

    samples = _check.integer(samples, "samples", minimum=1, maximum=1_000_000)
    nbytes = _check.integer(nbytes, "nbytes", minimum=1)
    _check.allocation(samples * nbytes, "samples × nbytes")  # every tensor is alive at once
    tensors = [ov.Tensor(ov.Type.u8, [nbytes]) for _ in range(samples)]
    addresses = [t.data.ctypes.data for t in tensors]
    return {a: sum(x % a == 0 for x in addresses) / samples for a in (16, 64, 128)}


# ---- an operator the device lacks: GroupNormalization ---------------------------------------------


def groupnorm_model(channels: int = 16, groups: int = 4, size: int = 8, *, seed: int = 0) -> Any:
    """A small ONNX model (opset 21): Conv 3×3 → GroupNormalization → Relu, on a (1, 3, size, size) input.

    Examples
    --------
    >>> [n.op_type for n in groupnorm_model().graph.node]
    ['Conv', 'GroupNormalization', 'Relu']
    """
    from onnx import TensorProto, checker, helper, numpy_helper

    channels = _check.integer(channels, "channels", minimum=1, maximum=4096)
    groups = _check.integer(groups, "groups", minimum=1)
    size = _check.integer(size, "size", minimum=1, maximum=4096)
    if channels % groups:
        raise ValueError(f"groups must divide channels ({channels}), got {groups}")
    rng = np.random.default_rng(_check.integer(seed, "seed", minimum=0))
    inits = [numpy_helper.from_array(rng.standard_normal((channels, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array((1 + 0.1 * rng.standard_normal(channels)).astype(np.float32), "gamma"),
             numpy_helper.from_array((0.1 * rng.standard_normal(channels)).astype(np.float32), "beta")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("GroupNormalization", ["c", "gamma", "beta"], ["g"], name="gn",
                              num_groups=groups, epsilon=1e-5),
             helper.make_node("Relu", ["g"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "gn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, size, size])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    checker.check_model(model, full_check=True)
    return model


def decompose_groupnorm(model: Any) -> Any:
    """Replace every GroupNormalization by the primitives an NPU compiler would lower it to.

    ``(N, C, H, W)`` → Reshape to ``(N, G, C/G·H·W)`` → ReduceMean → Sub →
    Mul (square) → ReduceMean → Add ε → Sqrt → Div → Reshape back → Mul by
    the per-channel scale → Add the bias: thirteen nodes of common types. Two
    of them (reshaping the scale and the bias) fold to constants, and the
    four Reshapes move no data; the difference from the mean, its square, the
    normalised and the scaled values are full-size tensors, each written and
    read back unless a compiler fuses them. The variance is the mean of the
    squared differences (two passes), the numerically safer form; ONNX's own
    function body computes E[x²] − E[x]². Shapes must be static. The result
    passes ``onnx.checker``.

    Parameters
    ----------
    model : onnx.ModelProto
        Its GroupNormalization inputs must have static shapes of rank ≥ 3
        (else a ``ValueError``).

    Examples
    --------
    >>> from collections import Counter
    >>> ops = Counter(n.op_type for n in decompose_groupnorm(groupnorm_model()).graph.node)
    >>> ops["GroupNormalization"], ops["ReduceMean"], ops["Reshape"]
    (0, 2, 4)
    """
    import onnx
    from onnx import helper, numpy_helper

    model = _model_proto(model)
    shapes = _shapes(model)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    del out.graph.node[:]
    extra = []
    for node in model.graph.node:
        if node.op_type != "GroupNormalization":
            out.graph.node.append(node)
            continue
        x, scale, bias = node.input
        dims, _ = shapes[x]
        if any(d is None for d in dims) or len(dims) < 3:
            raise ValueError(f"model: {node.name} needs a static input shape of rank >= 3, got {dims}")
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        g, eps = int(attrs["num_groups"]), float(attrs.get("epsilon", 1e-5))
        n, c = dims[0], dims[1]
        p = f"{node.name or 'gn'}/"
        bshape = [c] + [1] * (len(dims) - 2)
        extra += [numpy_helper.from_array(np.array([n, g, -1], np.int64), p + "grouped"),
                  numpy_helper.from_array(np.array(dims, np.int64), p + "shape"),
                  numpy_helper.from_array(np.array([2], np.int64), p + "axes"),
                  numpy_helper.from_array(np.array(eps, np.float32), p + "eps"),
                  numpy_helper.from_array(np.array(bshape, np.int64), p + "cshape")]
        mk = helper.make_node
        out.graph.node.extend([
            mk("Reshape", [x, p + "grouped"], [p + "xg"], name=p + "reshape"),
            mk("ReduceMean", [p + "xg", p + "axes"], [p + "mean"], name=p + "mean", keepdims=1),
            mk("Sub", [p + "xg", p + "mean"], [p + "d"], name=p + "sub"),
            mk("Mul", [p + "d", p + "d"], [p + "d2"], name=p + "square"),
            mk("ReduceMean", [p + "d2", p + "axes"], [p + "var"], name=p + "var", keepdims=1),
            mk("Add", [p + "var", p + "eps"], [p + "ve"], name=p + "add_eps"),
            mk("Sqrt", [p + "ve"], [p + "std"], name=p + "sqrt"),
            mk("Div", [p + "d", p + "std"], [p + "ng"], name=p + "div"),
            mk("Reshape", [p + "ng", p + "shape"], [p + "n"], name=p + "unreshape"),
            mk("Reshape", [scale, p + "cshape"], [p + "s"], name=p + "scale_shape"),
            mk("Reshape", [bias, p + "cshape"], [p + "b"], name=p + "bias_shape"),
            mk("Mul", [p + "n", p + "s"], [p + "ns"], name=p + "scale"),
            mk("Add", [p + "ns", p + "b"], [node.output[0]], name=p + "bias"),
        ])
    out.graph.initializer.extend(extra)
    onnx.checker.check_model(out)
    return out


# ---- pipelines, INT8, ONNX Runtime -----------------------------------------------------------------


def split_model(model: Any, cuts: Sequence[str]) -> list[Any]:
    """Cut a single-input, single-output ONNX model at the named tensors into a chain of models.

    Each piece reads the previous piece's output; running them in turn gives
    the whole model's output. This is how a pipeline of models (encoder →
    denoiser → decoder) hands tensors from one compiled model to the next.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> parts = split_model(CameraNet.pretrained().to_onnx(), ["block1.pw_relu"])
    >>> [p.graph.input[0].name for p in parts], [p.graph.output[0].name for p in parts]
    (['image', 'block1.pw_relu'], ['block1.pw_relu', 'logits'])
    """
    import onnx.utils

    model = _model_proto(model)
    cuts = _check.sequence(cuts, "cuts", min_length=1)
    made = {t for n in model.graph.node for t in n.output}
    for i, t in enumerate(cuts):
        if t not in made:
            raise ValueError(f"cuts[{i}] must be a tensor the model computes, got {t!r}")
    _check_cuts(model, cuts)
    inferred = onnx.shape_inference.infer_shapes(model)
    ex = onnx.utils.Extractor(inferred)
    ends = [model.graph.input[0].name, *cuts, model.graph.output[0].name]
    return [ex.extract_model([a], [b]) for a, b in zip(ends, ends[1:])]


def _check_cuts(model: Any, cuts: tuple) -> None:
    """Refuse cuts that do not split ``model`` into a chain: each piece must have nodes and read only its input.

    A single-input, single-output model is cut at tensors in execution order;
    a repeated cut would give a piece with no nodes, a cut out of order one
    that runs backwards, and a cut inside a branch (a residual block) a piece
    that also needs a tensor from before the cut.
    """
    graph = model.graph
    inits = {i.name for i in graph.initializer}
    inputs = [v.name for v in graph.input if v.name not in inits]
    if len(inputs) != 1 or len(graph.output) != 1:
        raise ValueError(f"model must have one input and one output to be cut into a chain, "
                         f"got {len(inputs)} and {len(graph.output)}")
    producer = {t: i for i, n in enumerate(graph.node) for t in n.output if t}

    def needed(t: str) -> set:  # the nodes that compute t
        seen: set = set()
        todo = [producer[t]] if t in producer else []
        while todo:
            i = todo.pop()
            if i not in seen:
                seen.add(i)
                todo += [producer[x] for x in graph.node[i].input if x in producer]
        return seen

    ends = [inputs[0], *cuts, graph.output[0].name]
    for k, (a, b) in enumerate(zip(ends, ends[1:])):
        piece = needed(b) - needed(a)
        which = f"cuts[{k}]" if k < len(cuts) else f"cuts[{k - 1}]"
        if not piece:
            raise ValueError(f"{which} must come after the previous cut in execution order, with nodes between; "
                             f"got {b!r} after {a!r}")
        reads = {x for i in piece for x in graph.node[i].input if x and x not in inits} - {
            t for i in piece for t in graph.node[i].output}
        if reads != {a}:
            raise ValueError(f"{which}: the piece from {a!r} to {b!r} also reads {sorted(reads - {a})}; "
                             "cut where every later node depends only on the cut tensor")


def ort_quantize_qdq(model: Any, calibration: np.ndarray, *, per_channel: bool = True, method: str = "minmax",
                     exclude: Sequence[str] = ()) -> Any:
    """An INT8 QDQ model made by ONNX Runtime's quantizer, ``quantize_static`` (u8 activations, s8 weights).

    The course's own QDQ builder is chapter 6's :func:`npukit.ptq.to_qdq`:
    every scale and rounding is written out there and bit-exact with ONNX.
    This function is the practitioners' tool, for comparison: ONNX Runtime
    records min-max ranges from ``calibration`` (fed one image at a time) and
    inserts QuantizeLinear/DequantizeLinear pairs by its own rules (it also
    drops a Relu whose uint8 output range already starts at zero). Fold
    BatchNorm first (``rewrites.fold_batchnorm``) so the quantized
    convolutions are the ones that will run.

    Parameters
    ----------
    model : onnx.ModelProto
        A float model with one static-shaped image input.
    calibration : numpy.ndarray
        float32 images, shape ``(n, *input_shape[1:])``; a wrong dtype or
        shape is a ``ValueError``.
    per_channel : bool
        Weight scales per output channel.
    method : {"minmax", "percentile", "entropy"}
        ONNX Runtime's calibration (``CalibrationMethod.MinMax``, ``Percentile``
        at its default, the 0.001th to the 99.999th percentile for uint8
        activations, ``Entropy``).
    exclude : sequence of str
        Node names left in float (``nodes_to_exclude``).

    Examples
    --------
    >>> from npukit.data import shapes_dataset
    >>> from npukit.rewrites import fold_batchnorm
    >>> from npukit.models import CameraNet
    >>> q = ort_quantize_qdq(fold_batchnorm(CameraNet.pretrained().to_onnx()), shapes_dataset(8, seed=3)[0])
    >>> sorted({n.op_type for n in q.graph.node} & {"QuantizeLinear", "DequantizeLinear"})
    ['DequantizeLinear', 'QuantizeLinear']
    """
    import contextlib
    import io
    import tempfile

    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    model = _model_proto(model)
    calibration = _check.float_data(calibration, "calibration")  # NaN would poison the min-max ranges
    per_channel = _check.boolean(per_channel, "per_channel")
    method = _check.one_of(_check.text(method, "method"), "method", ("minmax", "percentile", "entropy"))
    exclude = [_check.text(x, f"exclude[{i}]") for i, x in enumerate(_check.sequence(exclude, "exclude"))]
    unknown = sorted(set(exclude) - {n.name for n in model.graph.node})
    if unknown:
        raise ValueError(f"exclude must name nodes of the model, got {unknown}")
    name = model.graph.input[0].name
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    if calibration.ndim != len(dims) or tuple(calibration.shape[1:]) != tuple(dims[1:]) or calibration.dtype != np.float32:
        raise ValueError(f"calibration must be float32 images of shape (n, {', '.join(map(str, dims[1:]))}), "
                         f"got {calibration.dtype} {calibration.shape}")

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter([{name: calibration[i:i + 1]} for i in range(len(calibration))])

        def get_next(self) -> Any:
            return next(self.it, None)

    import logging

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer's advice to pre-process goes to the root logger
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = pathlib.Path(tmp) / "float.onnx", pathlib.Path(tmp) / "qdq.onnx"
        onnx.save(model, src)
        calibrate = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
                     "percentile": CalibrationMethod.Percentile}[method]
        try:
            with contextlib.redirect_stdout(io.StringIO()):   # the histogram calibrators print their settings
                quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ, per_channel=per_channel,
                                activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                                nodes_to_exclude=exclude or None, calibrate_method=calibrate)
        finally:
            root.setLevel(level)
        return onnx.load(str(dst))


def ort_session(model: Any, level: str = "all", *, threads: int | None = None,
                save_optimized: str | pathlib.Path | None = None) -> Any:
    """An ONNX Runtime session on the CPU execution provider with a named graph-optimisation level.

    ``level``: ``"disabled"``, ``"basic"`` (constant folding, redundant
    nodes, Conv+BatchNorm and similar fusions), ``"extended"`` (fusions such
    as Conv+Relu into ``FusedConv``), ``"all"`` (plus layout optimisations:
    NCHWc convolutions on x86). ``save_optimized`` writes the optimised graph
    to that path, to see what the level did.

    Parameters
    ----------
    model : onnx.ModelProto
    level : {"disabled", "basic", "extended", "all"}
    threads : int, optional
        ``intra_op_num_threads``; None lets ONNX Runtime choose.
    save_optimized : path, optional

    The session's idle threads do not spin (``session.intra_op.allow_spinning``
    is 0), so that in interleaved rounds beside OpenVINO they do not take the
    cores from OpenVINO's calls.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> s = ort_session(CameraNet.pretrained().to_onnx())
    >>> s.get_providers()
    ['CPUExecutionProvider']
    """
    import onnxruntime as ort

    model = _model_proto(model)
    levels = {"disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
              "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}
    _check.one_of(level, "level", tuple(levels))
    opts = ort.SessionOptions()
    opts.graph_optimization_level = levels[level]
    opts.log_severity_level = 3  # no warning that "all" writes hardware-specific layouts
    # idle worker threads do not spin waiting for the next call: beside another runtime in interleaved rounds,
    # spinning threads would take the cores from the other side's calls
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads is not None:
        opts.intra_op_num_threads = _check.integer(threads, "threads", minimum=1, maximum=1024)
    if save_optimized is not None:
        folder = _check.path(save_optimized, "save_optimized").parent
        if not folder.is_dir():
            raise ValueError(f"save_optimized must be a path in an existing folder; {str(folder)!r} does not exist")
        opts.optimized_model_filepath = str(_check.path(save_optimized, "save_optimized"))
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
