"""Bad inputs for npukit.rewrites: one bad argument at a time, the others valid."""

import numpy as np
from badinput import bad, cyclic, dangling
from onnx import TensorProto, helper

from npukit import graphs, rewrites

MODEL = graphs.example_chain(blocks=1, channels=2, size=4)
X = np.zeros((1, 3, 4, 4), np.float32)
BUF = rewrites.Buffer("t", 64, 0, 0, 2)
PLAN = rewrites.plan_memory(MODEL)
FUSION = rewrites.Fusion(("conv", "relu"), ("Conv", "Relu"), ("c",), 8)
nan = float("nan")


def _fields(cls, **kw):
    """Valid constructor arguments of ``cls``, with ``kw`` replacing some."""
    defaults = {
        rewrites.Buffer: dict(tensor="t", size=64, offset=0, first=0, last=2),
        rewrites.MemoryPlan: dict(order=("n0",), buffers=(BUF,), peak_bytes=64, naive_bytes=64, lower_bound_bytes=64,
                                  alignment=64),
        rewrites.Fusion: dict(nodes=("conv", "relu"), op_types=("Conv", "Relu"), removed=("c",), bytes_saved=8),
        rewrites.FusionResult: dict(model=MODEL, fusions=(FUSION,)),
    }[cls] | kw
    return defaults


VECTOR_MODEL = helper.make_model(helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]))

CASES = [
    # models
    *[bad(f, m, exc=TypeError, names="model") for f in (rewrites.fold_batchnorm, rewrites.fuse_conv_add_relu,
                                                        rewrites.plan_memory) for m in ("model.onnx", None, MODEL.graph)],
    bad(rewrites.run_reference, "model.onnx", {"x": X}, exc=TypeError, names="model"),
    bad(rewrites.run_reference, MODEL.graph, {"x": X}, exc=TypeError, names="model"),
    # run_reference's inputs
    bad(rewrites.run_reference, MODEL, [X], exc=TypeError, names="inputs"),
    bad(rewrites.run_reference, MODEL, X, exc=TypeError, names="inputs"),
    bad(rewrites.run_reference, MODEL, {}, names="'x'"),
    bad(rewrites.run_reference, MODEL, {"x": X, "extra": X}, names="'extra'"),
    bad(rewrites.run_reference, MODEL, {"image": X}, names="'image'"),
    bad(rewrites.run_reference, MODEL, {"x": X[0]}, names="inputs['x']"),
    bad(rewrites.run_reference, MODEL, {"x": np.zeros((1, 3, 4, 5), np.float32)}, names="inputs['x']"),
    bad(rewrites.run_reference, MODEL, {"x": np.zeros((2, 3, 4, 4), np.float32)}, names="inputs['x']"),
    bad(rewrites.run_reference, MODEL, {"x": X.astype(np.float64)}, exc=TypeError, names="inputs['x']"),
    bad(rewrites.run_reference, MODEL, {"x": X.astype(np.int8)}, exc=TypeError, names="inputs['x']"),
    bad(rewrites.run_reference, MODEL, {"x": X.tolist()}, exc=TypeError, names="inputs['x']"),
    bad(rewrites.run_reference, MODEL, {"x": 0.0}, exc=TypeError, names="inputs['x']"),
    bad(rewrites.run_reference, VECTOR_MODEL, {"x": np.zeros(3, np.float32)}, names="inputs['x']"),
    # plan_memory
    bad(rewrites.plan_memory, MODEL, alignment=48, names="alignment"),
    bad(rewrites.plan_memory, MODEL, alignment=0, names="alignment"),
    bad(rewrites.plan_memory, MODEL, alignment=-64, names="alignment"),
    bad(rewrites.plan_memory, MODEL, alignment=64.0, exc=TypeError, names="alignment"),
    bad(rewrites.plan_memory, MODEL, alignment=True, exc=TypeError, names="alignment"),
    # live_peak
    bad(rewrites.live_peak, 5, exc=TypeError, names="intervals"),
    bad(rewrites.live_peak, None, exc=TypeError, names="intervals"),
    bad(rewrites.live_peak, "abc", exc=TypeError, names="intervals"),
    bad(rewrites.live_peak, {(1, 0, 0): 1}, exc=TypeError, names="intervals"),
    bad(rewrites.live_peak, [(10, 3, 1)], names="intervals[0]"),
    bad(rewrites.live_peak, [(1, 0, 0), (-10, 0, 1)], names="intervals[1]"),
    bad(rewrites.live_peak, [(10, 0)], names="intervals[0]"),
    bad(rewrites.live_peak, [10], exc=TypeError, names="intervals[0]"),
    bad(rewrites.live_peak, ["abc"], exc=TypeError, names="intervals[0]"),
    bad(rewrites.live_peak, [(10.5, 0, 1)], exc=TypeError, names="intervals[0]"),
    bad(rewrites.live_peak, [(10, True, 1)], exc=TypeError, names="intervals[0]"),
    bad(rewrites.live_peak, [(nan, 0, 1)], exc=TypeError, names="intervals[0]"),
    # the records
    bad(rewrites.Buffer, **_fields(rewrites.Buffer, tensor=3), exc=TypeError, names="tensor"),
    bad(rewrites.Buffer, **_fields(rewrites.Buffer, size=-1), names="size"),
    bad(rewrites.Buffer, **_fields(rewrites.Buffer, size=1.5), exc=TypeError, names="size"),
    bad(rewrites.Buffer, **_fields(rewrites.Buffer, offset=-64), names="offset"),
    bad(rewrites.Buffer, **_fields(rewrites.Buffer, first=True), exc=TypeError, names="first"),
    bad(rewrites.Buffer, **_fields(rewrites.Buffer, last=-1), names="last"),
    bad(rewrites.Buffer, **_fields(rewrites.Buffer, first=3, last=1), names="last"),
    bad(BUF.overlaps_in_time, (0, 1), exc=TypeError, names="other"),
    bad(BUF.overlaps_in_time, None, exc=TypeError, names="other"),
    bad(BUF.overlaps_in_memory, "t", exc=TypeError, names="other"),
    bad(rewrites.MemoryPlan, **_fields(rewrites.MemoryPlan, order="n0"), exc=TypeError, names="order"),
    bad(rewrites.MemoryPlan, **_fields(rewrites.MemoryPlan, order=(0,)), exc=TypeError, names="order[0]"),
    bad(rewrites.MemoryPlan, **_fields(rewrites.MemoryPlan, buffers=BUF), exc=TypeError, names="buffers"),
    bad(rewrites.MemoryPlan, **_fields(rewrites.MemoryPlan, buffers=((64, 0, 0, 2),)), exc=TypeError, names="buffers[0]"),
    bad(rewrites.MemoryPlan, **_fields(rewrites.MemoryPlan, peak_bytes=-1), names="peak_bytes"),
    bad(rewrites.MemoryPlan, **_fields(rewrites.MemoryPlan, naive_bytes=1.0), exc=TypeError, names="naive_bytes"),
    bad(rewrites.MemoryPlan, **_fields(rewrites.MemoryPlan, lower_bound_bytes=None), exc=TypeError, names="lower_bound_bytes"),
    bad(rewrites.MemoryPlan, **_fields(rewrites.MemoryPlan, alignment=48), names="alignment"),
    bad(PLAN.buffer, 3, exc=TypeError, names="tensor"),
    bad(PLAN.buffer, None, exc=TypeError, names="tensor"),
    bad(rewrites.Fusion, **_fields(rewrites.Fusion, nodes="conv"), exc=TypeError, names="nodes"),
    bad(rewrites.Fusion, **_fields(rewrites.Fusion, op_types=("Conv",)), names="op_types"),
    bad(rewrites.Fusion, **_fields(rewrites.Fusion, op_types=("Conv", 3)), exc=TypeError, names="op_types[1]"),
    bad(rewrites.Fusion, **_fields(rewrites.Fusion, removed=None), exc=TypeError, names="removed"),
    bad(rewrites.Fusion, **_fields(rewrites.Fusion, bytes_saved=-8), names="bytes_saved"),
    bad(rewrites.Fusion, **_fields(rewrites.Fusion, bytes_saved=8.0), exc=TypeError, names="bytes_saved"),
    bad(rewrites.FusionResult, **_fields(rewrites.FusionResult, model="m.onnx"), exc=TypeError, names="model"),
    bad(rewrites.FusionResult, **_fields(rewrites.FusionResult, fusions=FUSION), exc=TypeError, names="fusions"),
    bad(rewrites.FusionResult, **_fields(rewrites.FusionResult, fusions=("conv",)), exc=TypeError, names="fusions[0]"),
    # numbers
    bad(rewrites.numbers, "ctx", exc=TypeError, names="ctx"),
    bad(rewrites.numbers, None, exc=TypeError, names="ctx"),
    # records consistent across fields; graphs that cannot be walked (issue 24)
    bad(rewrites.Fusion, ("conv",), ("Conv",), (), 0, names="nodes"),
    bad(rewrites.Fusion, ("conv", "conv"), ("Conv", "Conv"), (), 0, names="nodes"),
    bad(rewrites.Fusion, ("conv", "relu"), ("Conv", "Relu"), ("c", "c"), 0, names="removed"),
    bad(rewrites.FusionResult, cyclic(MODEL), (), names="cycle"),
    bad(rewrites.MemoryPlan, ("a",), (rewrites.Buffer("t", 64, 0, 0, 2),), 64, 64, 64, 64, names="buffers[0]"),
    bad(rewrites.MemoryPlan, ("a", "a", "b"), (BUF,), 64, 64, 64, 64, names="order"),
    bad(rewrites.MemoryPlan, ("a", "b", "c"), (BUF, BUF), 128, 128, 128, 64, names="buffers"),
    bad(rewrites.MemoryPlan, ("a", "b", "c"), (rewrites.Buffer("t", 64, 32, 0, 2),), 96, 64, 64, 64,
        names="alignment"),
    bad(rewrites.MemoryPlan, ("a", "b", "c"), (BUF, rewrites.Buffer("u", 8, 0, 1, 2)), 64, 128, 72, 64,
        names="share bytes"),
    bad(rewrites.MemoryPlan, ("a", "b", "c"), (BUF,), 128, 64, 64, 64, names="peak_bytes"),
    bad(rewrites.MemoryPlan, ("a", "b", "c"), (BUF,), 64, 32, 64, 64, names="naive_bytes"),
    bad(rewrites.MemoryPlan, ("a", "b", "c"), (BUF,), 64, 64, 0, 64, names="lower_bound_bytes"),
    bad(rewrites.run_reference, cyclic(MODEL), {"x": X}, names="cycle"),
    bad(rewrites.run_reference, dangling(MODEL), {"x": X}, names="nowhere"),
    bad(rewrites.fold_batchnorm, cyclic(MODEL), names="cycle"),
    bad(rewrites.fuse_conv_add_relu, dangling(MODEL), names="nowhere"),
    bad(rewrites.plan_memory, cyclic(MODEL), names="cycle"),
]
