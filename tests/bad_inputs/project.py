"""Bad inputs for npukit.project."""

import numpy as np
from badinput import bad
from onnx import TensorProto, helper

from npukit import project, zoo
from npukit.graphs import MachineSpec

_m = MachineSpec(1e11, 1e10, "example", "given", "given")
_model = zoo.example("resnet").to_onnx()
_cal = np.zeros((2, 3, 32, 32), np.float32)


def _one(op: str, domain: str = "", opset: int = 17, dims=(1, 3, 8, 8)):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node(op, ["x"], ["y"], name="n0", domain=domain)
    ops = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(helper.make_graph([node], "g", [x], [y]), opset_imports=ops)


def _twice(name: str = "n"):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Relu", ["x"], ["h"], name=name), helper.make_node("Relu", ["h"], ["y"], name=name)]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])


CASES = [
    bad(project.load_model, _twice(), names="'n' (2 nodes)"),
    bad(project.load_model, _one("Reshape"), names="Flatten"),
    bad(project.load_model, _model, normalize=((0.5, 0.5, 0.5), (0.2, 0.0, 0.2)), names="normalize[1][1]"),
    bad(project.load_model, _model, normalize=((0.5, 0.5), (0.2, 0.2, 0.2)), names="normalize[0]"),
    bad(project.load_model, _model, normalize=(("a", 0.5, 0.5), (0.2, 0.2, 0.2)), exc=TypeError,
        names="normalize[0][0]"),
    bad(project.load_model, _model, normalize="imagenet", exc=TypeError, names="normalize"),
    bad(project.load_model, 3, exc=TypeError, names="model"),
    bad(project.load_model, "no/such/model.onnx", names="model"),
    bad(project.load_model, b"not onnx at all", names="model"),
    bad(project.load_model, _one("Sigmoid"), names="Sigmoid"),
    bad(project.load_model, _one("Relu", opset=13), names="opset"),
    bad(project.load_model, _one("MyOp", domain="com.vendor"), names="com.vendor::MyOp"),
    bad(project.load_model, _one("Relu", dims=("N", 3, 8, 8)), names="input_shape"),
    bad(project.load_model, _one("Relu", dims=("N", 3, 8, 8)), input_shape=(2, 3, 8, 8), names="input_shape"),
    bad(project.load_model, _one("Relu", dims=("N", 3, 8, 8)), input_shape=(1, 3, 9, 8), names="input_shape[2]"),
    bad(project.load_model, _one("Relu", dims=("N", 3, 8, 8)), input_shape="1,3,8,8", exc=TypeError,
        names="input_shape"),
    bad(zoo.ExampleNet, "vgg", names="name"),
    bad(zoo.ExampleNet, 3, exc=TypeError, names="name"),
    bad(zoo.ExampleNet, "resnet", seed=-1, names="seed"),
    bad(zoo.example, "vgg", names="name"),
    bad(zoo.train_example, "resnet", epochs=0, names="epochs"),
    bad(zoo.train_example, "resnet", epochs=10**9, names="epochs"),
    bad(zoo.train_example, "resnet", batch=1, names="batch"),
    bad(zoo.train_example, "resnet", lr=2.0, names="lr"),
    bad(zoo.train_example, "resnet", n_train=10**12, names="n_train"),
    bad(project.closed_loop, 3, _cal, _cal, exc=TypeError, names="model"),
    bad(project.closed_loop, _model, [[0.5]], _cal, exc=TypeError, names="calibration"),
    bad(project.closed_loop, _model, np.zeros((2, 3, 16, 16), np.float32), _cal, names="calibration"),
    bad(project.closed_loop, _model, _cal.astype(np.float64), _cal, names="calibration"),
    bad(project.closed_loop, _model, _cal + 255, _cal, names="calibration"),
    bad(project.closed_loop, _model, _cal, np.zeros((0, 3, 32, 32), np.float32), names="heldout"),
    bad(project.closed_loop, _model, _cal, _cal, labels=np.array([0]), names="labels"),
    bad(project.closed_loop, _model, _cal, _cal, labels=np.array([0, 9]), names="labels"),
    bad(project.closed_loop, _model, _cal, _cal, labels=[0, 1], exc=TypeError, names="labels"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, method="max", names="method"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, min_agreement=1.5, names="min_agreement"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, runs=2, names="runs"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, runs=10**12, names="runs"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, warmup=-1, names="warmup"),
    bad(project.closed_loop, _model, _cal, _cal, machine=3, exc=TypeError, names="machine"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, device=3, exc=TypeError, names="device"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, name=3, exc=TypeError, names="name"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, method="mse", names="method"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, keep_float=["no.such.conv"], names="keep_float"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, keep_float="stem.conv", exc=TypeError,
        names="keep_float"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, min_heldout=0, names="min_heldout"),
    bad(project.closed_loop, _model, _cal, _cal, machine=_m, min_agreement=-0.1, names="min_agreement"),
    bad(project.Project, 3, *[None] * 16, exc=TypeError, names="name"),
    bad(project.Project, "m", None, None, None, "tflite", *[None] * 12, names="quantizer"),
    bad(project.Project, "m", None, None, None, "onnxruntime", "CPU", "msg", (), *[None] * 9, names="checks"),
]
