"""Bad inputs for npukit.deploy."""

import numpy as np
from badinput import bad

from npukit import deploy
from npukit.models import CameraNet

_model = CameraNet.pretrained().to_onnx()
_compiled = deploy.compile(_model)
_x = np.zeros((1, 3, 32, 32), np.float32)

CASES = [
    bad(deploy.choose_device, "NPU", exc=TypeError, names="preferred"),
    bad(deploy.choose_device, (), names="preferred"),
    bad(deploy.choose_device, ("NPU", 3), exc=TypeError, names="preferred[1]"),
    bad(deploy.choose_device, ("",), names="preferred[0]"),
    bad(deploy.choose_device, ("AUTO:NPU,CPU",), names="preferred[0]"),
    bad(deploy.choose_device, require="FPGA", names="require"),
    bad(deploy.compile, _model, "TPU", names="device"),
    bad(deploy.compile, _model, 3, exc=TypeError, names="device"),
    bad(deploy.compile, "/no/such/model.onnx", exc=FileNotFoundError, names="model"),
    bad(deploy.compile, [1, 2], exc=TypeError, names="model"),
    bad(deploy.compile, _model, precision="fp32", names="precision"),
    bad(deploy.compile, _model, hint="FAST", names="hint"),
    bad(deploy.compile, _model, profile="yes", exc=TypeError, names="profile"),
    bad(deploy.compile, _model, config=[("PERF_COUNT", True)], exc=TypeError, names="config"),
    bad(deploy.executed_graph, _model, exc=TypeError, names="compiled"),
    bad(deploy.profile_layers, _compiled, _x, names="PERF_COUNT"),
    bad(deploy.profile_layers, _compiled, _x, runs=0, names="runs"),
    bad(deploy.profile_layers, deploy.compile(_model, profile=True), _x, model=_model, names="machine"),
    bad(deploy.benchmark, _compiled, np.zeros((2, 3, 32, 32), np.float32), names="shape (1, 3, 32, 32)"),
    bad(deploy.benchmark, _compiled, _x.astype(np.float64), names="float32"),
    bad(deploy.benchmark, _compiled, [1.0], exc=TypeError, names="inputs"),
    bad(deploy.benchmark, _compiled, _x, warmup=-1, names="warmup"),
    bad(deploy.benchmark, _model, _x, exc=TypeError, names="compiled"),
    bad(deploy.Benchmark(0.1, (0.1,)).percentile, 101, names="q"),
    bad(deploy.AsyncPipeline, _compiled, 0, names="requests"),
    bad(deploy.AsyncPipeline, _model, exc=TypeError, names="compiled"),
    bad(deploy.AsyncPipeline(_compiled).run, [np.zeros((1, 3, 8, 8), np.float32)], names="shape"),
    bad(deploy.AsyncPipeline(_compiled).run, [_x], work=3, exc=TypeError, names="work"),
    bad(deploy.AsyncPipeline.throughput, [], names="jobs"),
    bad(deploy.AsyncPipeline.throughput, [(0, 0, 0.0, 0.1, 0.2)], exc=TypeError, names="jobs[0]"),
    bad(deploy.numbers, None, exc=TypeError, names="ctx"),
    bad(deploy.benchmark_many, {"a": _compiled}, _x, exc=TypeError, names="compiled"),
    bad(deploy.benchmark_many, [_compiled, _compiled], _x, exc=TypeError, names="compiled"),
    bad(deploy.benchmark_many, {"a": _compiled, "b": _model}, _x, exc=TypeError, names="compiled['b']"),
    bad(deploy.benchmark_many, {"a": _compiled, "b": _compiled}, _x.astype(np.float64), names="float32"),
    bad(deploy.benchmark_many, {"a": _compiled, "b": _compiled}, _x, warmup=-1, names="warmup"),
    bad(deploy.benchmark_many, {"a": _compiled, "b": _compiled}, _x, runs=2, names="runs"),
    bad(deploy.benchmark_many, {"a": _compiled, "b": _compiled}, _x, seed=-1, names="seed"),
]
