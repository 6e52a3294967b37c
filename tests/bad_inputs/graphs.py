"""Bad inputs for npukit.graphs: one bad argument at a time, the others valid."""

import numpy as np
from badinput import bad, cyclic, dangling

from npukit import graphs

MODEL = graphs.example_chain(blocks=1, channels=2, size=4)
SPEC = graphs.MachineSpec(1e11, 1e10, "toy", "assumed", "assumed")
COUNT = graphs.op_counts(MODEL)[0]
nan, inf = float("nan"), float("inf")


def _spec(**kw):
    return dict(peak_flops=1e11, bandwidth=1e10, cpu="toy", peak_how="assumed", bandwidth_how="assumed") | kw


def _count(**kw):
    args = dict(name="n", op_type="Relu", macs=0, flops=8, param_bytes=0, act_bytes_in=32, act_bytes_out=32,
                intensity=0.125, output_shape=(1, 8)) | kw
    return graphs.OpCount, (), args


CASES = [
    # models
    *[bad(f, m, exc=TypeError, names="model") for f in (graphs.topological_order, graphs.tensor_shapes, graphs.op_counts)
      for m in ("model.onnx", None, MODEL.graph, b"\x08\x07")],
    bad(graphs.op_counts, MODEL, itemsize=0, names="itemsize"),
    bad(graphs.op_counts, MODEL, itemsize=-1, names="itemsize"),
    bad(graphs.op_counts, MODEL, itemsize=1.5, exc=TypeError, names="itemsize"),
    bad(graphs.op_counts, MODEL, itemsize=True, exc=TypeError, names="itemsize"),
    bad(graphs.op_counts, MODEL, itemsize="1", exc=TypeError, names="itemsize"),
    # totals
    bad(graphs.totals, "counts", exc=TypeError, names="counts"),
    bad(graphs.totals, COUNT, exc=TypeError, names="counts"),
    bad(graphs.totals, 3, exc=TypeError, names="counts"),
    bad(graphs.totals, [COUNT, {"macs": 1}], exc=TypeError, names="counts[1]"),
    bad(graphs.totals, np.array([1, 2]), exc=TypeError, names="counts"),
    # OpCount
    *[bad(f, *a, exc=e, names=n, **k) for (f, a, k), e, n in (
        (_count(name=3), TypeError, "name"), (_count(op_type=None), TypeError, "op_type"),
        (_count(macs=-1), ValueError, "macs"), (_count(flops=1.5), TypeError, "flops"),
        (_count(param_bytes=True), TypeError, "param_bytes"), (_count(act_bytes_in=-8), ValueError, "act_bytes_in"),
        (_count(act_bytes_out="32"), TypeError, "act_bytes_out"), (_count(intensity=nan), ValueError, "intensity"),
        (_count(intensity=-0.5), ValueError, "intensity"), (_count(intensity=inf), ValueError, "intensity"),
        (_count(intensity="0.1"), TypeError, "intensity"), (_count(output_shape=(1, -8)), ValueError, "output_shape"),
        (_count(output_shape="1x8"), TypeError, "output_shape"), (_count(output_shape=(1, 8.0)), TypeError, "output_shape"),
    )],
    # MachineSpec and its methods
    *[bad(graphs.MachineSpec, exc=e, names=field, **_spec(**{field: v})) for field in ("peak_flops", "bandwidth")
      for v, e in ((0.0, ValueError), (-1.0, ValueError), (nan, ValueError), (inf, ValueError), (0, ValueError),
                   ("1e9", TypeError), (True, TypeError), (None, TypeError), ([1e9], TypeError))],
    *[bad(graphs.MachineSpec, exc=TypeError, names=field, **_spec(**{field: 3})) for field in ("cpu", "peak_how", "bandwidth_how")],
    bad(SPEC.attainable, -1.0, names="intensity"),
    bad(SPEC.attainable, nan, names="intensity"),
    bad(SPEC.attainable, inf, names="intensity"),
    bad(SPEC.attainable, [1.0, -2.0], names="intensity"),
    bad(SPEC.attainable, "2", exc=TypeError, names="intensity"),
    bad(SPEC.attainable, True, exc=TypeError, names="intensity"),
    bad(SPEC.attainable, None, exc=TypeError, names="intensity"),
    bad(SPEC.attainable, ["a"], exc=TypeError, names="intensity"),
    bad(SPEC.bound, -1.0, names="intensity"),
    bad(SPEC.bound, nan, names="intensity"),
    bad(SPEC.bound, "2", exc=TypeError, names="intensity"),
    bad(SPEC.bound, [1.0, 2.0], exc=TypeError, names="intensity"),
    *[bad(graphs.MachineSpec, exc=e, names=field, **_spec(**{field: v})) for field in ("threads", "copy_bytes")
      for v, e in ((0, ValueError), (-2, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError))],
    # example_chain
    bad(graphs.example_chain, -1, names="blocks"),
    bad(graphs.example_chain, 1.5, exc=TypeError, names="blocks"),
    bad(graphs.example_chain, True, exc=TypeError, names="blocks"),
    bad(graphs.example_chain, 1, 0, names="channels"),
    bad(graphs.example_chain, 1, 16.7, exc=TypeError, names="channels"),
    bad(graphs.example_chain, 1, 4, 0, names="size"),
    bad(graphs.example_chain, 1, 4, "8", exc=TypeError, names="size"),
    bad(graphs.example_chain, batchnorm="no", exc=TypeError, names="batchnorm"),
    bad(graphs.example_chain, batchnorm=1, exc=TypeError, names="batchnorm"),
    bad(graphs.example_chain, residual=None, exc=TypeError, names="residual"),
    bad(graphs.example_chain, seed=-1, names="seed"),
    bad(graphs.example_chain, seed=0.5, exc=TypeError, names="seed"),
    # records consistent across fields; degenerate inputs; sizes (issue 24)
    bad(graphs.OpCount, "n", "Conv", 1, 2, 0, 1, 1, 99.0, (1,), names="intensity"),
    bad(graphs.OpCount, "n", "Relu", 0, 4, 0, 0, 0, 1.0, (1,), names="intensity"),
    bad(graphs.OpCount, "n", "Conv", 10, 2, 0, 1, 1, 1.0, (1,), names="flops"),
    bad(graphs.totals, [], names="counts"),
    bad(graphs.example_chain, 10**12, names="blocks"),
    bad(graphs.example_chain, 1, 10**12, names="channels"),
    bad(graphs.example_chain, 1, 2, 10**6, names="size"),
    bad(graphs.op_counts, MODEL, itemsize=10**12, names="itemsize"),
    bad(graphs.MachineSpec, 1e11, 1e10, "toy", "a", "b", threads=10**12, names="threads"),
    bad(graphs.topological_order, dangling(MODEL), names="nowhere"),
]
