"""The measured models, rebuilt as ONNX graphs: architecture only, weights optional.

Chapter 9 holds published measurements of real NPUs against the course's own
predictions, and a prediction starts from the model's work: its MACs, its
parameters and the bytes it must move. This module writes each measured model
down layer by layer with ``onnx.helper``, at the input shape AI Hub measured it
at, so that chapter 3's :func:`npukit.graphs.op_counts` can count it. The
invariant it teaches: **a model's cost is fixed by its architecture and its
input shape, not by its weights.** So by default no weight is stored: every
initializer carries its shape and dtype but no bytes (ONNX *external data*
that points nowhere), which is all shape inference and counting need; a
ResNet-50 graph is a few kilobytes instead of 100 MB and the Stable Diffusion
UNet (860 M parameters) is counted without allocating 3.4 GB.
``weights="random"`` stores seeded random float32 values instead, for the
small models only, so that a graph can be run (tests run them with ONNX
Runtime).

The architectures follow the published definitions (torchvision's for the
classifiers; Hugging Face diffusers' ``UNet2DConditionModel`` and
``AutoencoderKL`` and transformers' ``CLIPTextModel`` for Stable Diffusion
v1.5). Operators op_counts has no rule for are written as the primitives ONNX
defines them by: GroupNorm and LayerNorm as ReduceMean, Sub, Mul, Sqrt and
Div; Softmax as ReduceMax, Sub, Exp, ReduceSum and Div; nearest-neighbour
upsampling as Reshape, Expand and Reshape. Each initializer's ``doc_string``
says what it is: ``"parameter"`` (learned, what torchvision counts),
``"buffer"`` (BatchNorm running statistics) or ``"constant"`` (shapes, masks,
scalars); :func:`parameter_count` counts the first kind.

See chapter 9, "Real NPUs, measured" (chapters/09_npus.md).

onnx is imported inside the functions that need it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from . import _check

if TYPE_CHECKING:
    import onnx

__all__ = ["MODELS", "RANDOM_LIMIT", "build", "parameter_count", "input_shapes"]

#: Largest parameter count ``weights="random"`` stores (60 MB of float32).
RANDOM_LIMIT = 15_000_000
_OPSET = 17
_KINDS = ("parameter", "buffer", "constant")


class _Net:
    """A graph under construction: nodes, initializers and unique names."""

    def __init__(self, weights: str, seed: int) -> None:
        self.weights, self.rng = weights, np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: list = []
        self.names: dict[str, int] = {}
        self.params = 0

    def _name(self, base: str) -> str:
        k = self.names.get(base, 0)
        self.names[base] = k + 1
        return base if k == 0 else f"{base}_{k}"

    def tensor(self, name: str, shape: tuple, kind: str = "parameter", *, fan_in: int = 1, fill: float | None = None
               ) -> str:
        """A float32 initializer: a placeholder without bytes, or seeded random / constant values."""
        from onnx import TensorProto, numpy_helper

        name = self._name(name)
        if kind == "parameter":
            self.params += math.prod(shape)
        if self.weights == "none":
            t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(shape), doc_string=kind,
                            data_location=TensorProto.EXTERNAL)
            t.external_data.add(key="location", value="not-stored.bin")
        else:
            if fill is not None:
                a = np.full(shape, fill, np.float32)
            else:
                a = (self.rng.standard_normal(shape) * math.sqrt(1.0 / fan_in)).astype(np.float32)
            t = numpy_helper.from_array(a, name)
            t.doc_string = kind
        self.inits.append(t)
        return name

    def const(self, name: str, value: Any, dtype: Any = np.int64) -> str:
        """A small constant that is always stored (a shape, an axis list, a scalar, a mask)."""
        from onnx import numpy_helper

        t = numpy_helper.from_array(np.asarray(value, dtype=dtype), self._name(name))
        t.doc_string = "constant"
        self.inits.append(t)
        return t.name

    def op(self, op_type: str, inputs: list, name: str, **attrs: Any) -> str:
        from onnx import helper

        name = self._name(name)
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attrs))
        return name

    # ---- layers ------------------------------------------------------------------------------

    def conv(self, x: str, c_in: int, c_out: int, k: int, name: str, *, stride: int = 1, pad: int | None = None,
             groups: int = 1, bias: bool = False) -> str:
        pad = k // 2 if pad is None else pad
        w = self.tensor(f"{name}.weight", (c_out, c_in // groups, k, k), fan_in=c_in // groups * k * k)
        ins = [x, w] + ([self.tensor(f"{name}.bias", (c_out,), fill=0.0)] if bias else [])
        return self.op("Conv", ins, name, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4,
                       group=groups)

    def bn(self, x: str, c: int, name: str) -> str:
        ins = [x, self.tensor(f"{name}.weight", (c,), fill=1.0), self.tensor(f"{name}.bias", (c,), fill=0.0),
               self.tensor(f"{name}.running_mean", (c,), "buffer", fill=0.0),
               self.tensor(f"{name}.running_var", (c,), "buffer", fill=1.0)]
        return self.op("BatchNormalization", ins, name, epsilon=1e-5)

    def conv_bn(self, x: str, c_in: int, c_out: int, k: int, name: str, act: str | None = "relu", **kw: Any) -> str:
        y = self.bn(self.conv(x, c_in, c_out, k, f"{name}.conv", **kw), c_out, f"{name}.bn")
        return self.act(y, act, name)

    def act(self, x: str, act: str | None, name: str) -> str:
        if act is None:
            return x
        if act == "relu":
            return self.op("Relu", [x], f"{name}.relu")
        if act == "relu6":
            lo, hi = self.const(f"{name}.min", 0.0, np.float32), self.const(f"{name}.max", 6.0, np.float32)
            return self.op("Clip", [x, lo, hi], f"{name}.relu6")
        if act == "silu":
            return self.op("Mul", [x, self.op("Sigmoid", [x], f"{name}.sigmoid")], f"{name}.silu")
        if act == "gelu":           # 0.5 · x · (1 + erf(x / √2))
            e = self.op("Erf", [self.op("Div", [x, self.const(f"{name}.sqrt2", math.sqrt(2), np.float32)],
                                        f"{name}.div")], f"{name}.erf")
            one = self.op("Add", [e, self.const(f"{name}.one", 1.0, np.float32)], f"{name}.add")
            half = self.op("Mul", [x, self.const(f"{name}.half", 0.5, np.float32)], f"{name}.half")
            return self.op("Mul", [half, one], f"{name}.gelu")
        if act == "quick_gelu":      # x · sigmoid(1.702 x), CLIP's activation
            s = self.op("Sigmoid", [self.op("Mul", [x, self.const(f"{name}.k", 1.702, np.float32)], f"{name}.scale")],
                        f"{name}.sigmoid")
            return self.op("Mul", [x, s], f"{name}.quick_gelu")
        raise ValueError(f"unknown activation {act!r}")

    def linear(self, x: str, c_in: int, c_out: int, name: str, bias: bool = True) -> str:
        """``x @ W + b`` over the last axis (a Linear layer; MatMul, then Add)."""
        y = self.op("MatMul", [x, self.tensor(f"{name}.weight", (c_in, c_out), fan_in=c_in)], f"{name}.matmul")
        return self.op("Add", [y, self.tensor(f"{name}.bias", (c_out,), fill=0.0)], name) if bias else y

    def gemm(self, x: str, c_in: int, c_out: int, name: str) -> str:
        w = self.tensor(f"{name}.weight", (c_out, c_in), fan_in=c_in)
        return self.op("Gemm", [x, w, self.tensor(f"{name}.bias", (c_out,), fill=0.0)], name, transB=1)

    def norm(self, x: str, axes: list, name: str, eps: float) -> str:
        """(x − mean) / √(var + ε) over ``axes``, as ONNX's LayerNormalization function body does it."""
        mean = self.op("ReduceMean", [x], f"{name}.mean", axes=axes, keepdims=1)
        d = self.op("Sub", [x, mean], f"{name}.sub")
        var = self.op("ReduceMean", [self.op("Mul", [d, d], f"{name}.sq")], f"{name}.var", axes=axes, keepdims=1)
        std = self.op("Sqrt", [self.op("Add", [var, self.const(f"{name}.eps", eps, np.float32)], f"{name}.addeps")],
                      f"{name}.std")
        return self.op("Div", [d, std], f"{name}.div")

    def affine(self, x: str, shape: tuple, name: str) -> str:
        g = self.op("Mul", [x, self.tensor(f"{name}.weight", shape, fill=1.0)], f"{name}.scale")
        return self.op("Add", [g, self.tensor(f"{name}.bias", shape, fill=0.0)], f"{name}.shift")

    def layernorm(self, x: str, c: int, name: str, eps: float = 1e-5) -> str:
        return self.affine(self.norm(x, [-1], name, eps), (c,), name)

    def groupnorm(self, x: str, c: int, hw: tuple, name: str, groups: int = 32, eps: float = 1e-5) -> str:
        g = self.op("Reshape", [x, self.const(f"{name}.grouped", [1, groups, -1])], f"{name}.group")
        n = self.op("Reshape", [self.norm(g, [2], name, eps), self.const(f"{name}.shape", [1, c, *hw])],
                    f"{name}.ungroup")
        return self.affine(n, (c, 1, 1), name)

    def softmax(self, x: str, name: str) -> str:
        m = self.op("ReduceMax", [x], f"{name}.max", axes=[-1], keepdims=1)
        e = self.op("Exp", [self.op("Sub", [x, m], f"{name}.sub")], f"{name}.exp")
        total = self.op("ReduceSum", [e, self.const(f"{name}.axes", [-1])], f"{name}.sum", keepdims=1)  # axes: an input
        return self.op("Div", [e, total], f"{name}")

    def upsample2(self, x: str, c: int, hw: tuple, name: str) -> str:
        """Nearest-neighbour ×2: each pixel copied to a 2×2 block (Reshape → Expand → Reshape)."""
        h, w = hw
        a = self.op("Reshape", [x, self.const(f"{name}.split", [1, c, h, 1, w, 1])], f"{name}.split")
        b = self.op("Expand", [a, self.const(f"{name}.expand", [1, c, h, 2, w, 2])], f"{name}.expand")
        return self.op("Reshape", [b, self.const(f"{name}.merge", [1, c, 2 * h, 2 * w])], f"{name}.merge")

    def heads(self, x: str, tokens: int, heads: int, dim: int, name: str) -> str:
        """(1, T, H·D) → (1, H, T, D)."""
        r = self.op("Reshape", [x, self.const(f"{name}.shape", [1, tokens, heads, dim])], f"{name}.reshape")
        return self.op("Transpose", [r], f"{name}.transpose", perm=[0, 2, 1, 3])

    def attention(self, q_in: str, kv_in: str, tq: int, tk: int, c: int, c_kv: int, heads: int, name: str, *,
                  qkv_bias: bool = False, mask: str | None = None) -> str:
        """Multi-head attention: softmax(Q Kᵀ / √d [+ mask]) V, then the output projection."""
        d = c // heads
        q = self.heads(self.linear(q_in, c, c, f"{name}.to_q", qkv_bias), tq, heads, d, f"{name}.q")
        k = self.heads(self.linear(kv_in, c_kv, c, f"{name}.to_k", qkv_bias), tk, heads, d, f"{name}.k")
        v = self.heads(self.linear(kv_in, c_kv, c, f"{name}.to_v", qkv_bias), tk, heads, d, f"{name}.v")
        kt = self.op("Transpose", [k], f"{name}.kT", perm=[0, 1, 3, 2])
        s = self.op("Mul", [self.op("MatMul", [q, kt], f"{name}.qk"),
                            self.const(f"{name}.scale", 1 / math.sqrt(d), np.float32)], f"{name}.scaled")
        if mask is not None:
            s = self.op("Add", [s, mask], f"{name}.masked")
        o = self.op("MatMul", [self.softmax(s, f"{name}.softmax"), v], f"{name}.av")
        o = self.op("Reshape", [self.op("Transpose", [o], f"{name}.merge", perm=[0, 2, 1, 3]),
                                self.const(f"{name}.tokens", [1, tq, c])], f"{name}.concat")
        return self.linear(o, c, c, f"{name}.to_out")

    def finish(self, name: str, inputs: list, output: str, out_shape: list) -> onnx.ModelProto:
        from onnx import TensorProto, helper

        vi = [helper.make_tensor_value_info(n, dt, s) for n, dt, s in inputs]
        graph = helper.make_graph(self.nodes, name, vi, [helper.make_tensor_value_info(output, TensorProto.FLOAT,
                                                                                        out_shape)], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)], producer_name="npukit.archs")
        model.doc_string = f"{name}: architecture of the published model, {self.params:,} parameters, weights " + \
            ("not stored" if self.weights == "none" else "random (seeded)")
        return model


# ---- image classifiers (torchvision's definitions) ---------------------------------------------


def _classifier(net: _Net, x: str, c: int, name: str = "fc") -> str:
    p = net.op("Flatten", [net.op("GlobalAveragePool", [x], "avgpool")], "flatten")
    return net.gemm(p, c, 1000, name)


def _mobilenet_v2(net: _Net) -> str:
    x = net.conv_bn("image_tensor", 3, 32, 3, "features.0", "relu6", stride=2)
    c = 32
    for i, (t, c_out, n, s) in enumerate([(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                                          (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]):
        for j in range(n):
            name, stride, hidden = f"block{i + 1}.{j}", s if j == 0 else 1, c * t
            y = net.conv_bn(x, c, hidden, 1, f"{name}.expand", "relu6") if t != 1 else x
            y = net.conv_bn(y, hidden, hidden, 3, f"{name}.dw", "relu6", stride=stride, groups=hidden)
            y = net.conv_bn(y, hidden, c_out, 1, f"{name}.project", None)
            x = net.op("Add", [x, y], f"{name}.add") if stride == 1 and c == c_out else y
            c = c_out
    x = net.conv_bn(x, 320, 1280, 1, "features.18", "relu6")
    return _classifier(net, x, 1280, "classifier")


def _resnet(blocks: tuple, bottleneck: bool) -> Callable[[_Net], str]:
    def build(net: _Net) -> str:
        x = net.conv_bn("image_tensor", 3, 64, 7, "conv1", stride=2, pad=3)
        x = net.op("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        c, exp = 64, 4 if bottleneck else 1
        for stage, (width, n) in enumerate(zip((64, 128, 256, 512), blocks), start=1):
            for j in range(n):
                name, stride = f"layer{stage}.{j}", 2 if stage > 1 and j == 0 else 1
                if bottleneck:
                    y = net.conv_bn(x, c, width, 1, f"{name}.1")
                    y = net.conv_bn(y, width, width, 3, f"{name}.2", stride=stride)
                    y = net.conv_bn(y, width, width * 4, 1, f"{name}.3", None)
                else:
                    y = net.conv_bn(x, c, width, 3, f"{name}.1", stride=stride)
                    y = net.conv_bn(y, width, width, 3, f"{name}.2", None)
                if stride != 1 or c != width * exp:
                    x = net.conv_bn(x, c, width * exp, 1, f"{name}.downsample", None, stride=stride)
                x = net.op("Relu", [net.op("Add", [y, x], f"{name}.add")], f"{name}.relu")
                c = width * exp
        return _classifier(net, x, c)
    return build


def _squeezenet1_1(net: _Net) -> str:
    def relu_conv(x: str, c_in: int, c_out: int, k: int, name: str, **kw: Any) -> str:
        return net.op("Relu", [net.conv(x, c_in, c_out, k, name, bias=True, **kw)], f"{name}.relu")

    def pool(x: str, name: str) -> str:
        return net.op("MaxPool", [x], name, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)

    x = pool(relu_conv("image_tensor", 3, 64, 3, "features.0", stride=2, pad=0), "features.2")
    c = 64
    fires = [(16, 64), (16, 64), "pool", (32, 128), (32, 128), "pool", (48, 192), (48, 192), (64, 256), (64, 256)]
    for i, f in enumerate(fires):
        if f == "pool":
            x = pool(x, f"pool{i}")
            continue
        sq, e = f
        s = relu_conv(x, c, sq, 1, f"fire{i}.squeeze")
        x = net.op("Concat", [relu_conv(s, sq, e, 1, f"fire{i}.expand1x1"),
                              relu_conv(s, sq, e, 3, f"fire{i}.expand3x3")], f"fire{i}.concat", axis=1)
        c = 2 * e
    x = relu_conv(x, 512, 1000, 1, "classifier.1")
    return net.op("Flatten", [net.op("GlobalAveragePool", [x], "avgpool")], "flatten")


def _efficientnet_b0(net: _Net) -> str:
    x = net.conv_bn("image_tensor", 3, 32, 3, "features.0", "silu", stride=2)
    c = 32
    for i, (t, k, s, c_out, n) in enumerate([(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                                             (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]):
        for j in range(n):
            name, stride, hidden = f"block{i + 1}.{j}", s if j == 0 else 1, c * t
            y = net.conv_bn(x, c, hidden, 1, f"{name}.expand", "silu") if t != 1 else x
            y = net.conv_bn(y, hidden, hidden, k, f"{name}.dw", "silu", stride=stride, groups=hidden)
            sq = max(1, c // 4)                  # squeeze-and-excitation, on the block's input channels
            z = net.op("GlobalAveragePool", [y], f"{name}.se.pool")
            z = net.act(net.conv(z, hidden, sq, 1, f"{name}.se.fc1", bias=True), "silu", f"{name}.se.fc1")
            z = net.op("Sigmoid", [net.conv(z, sq, hidden, 1, f"{name}.se.fc2", bias=True)], f"{name}.se.gate")
            y = net.op("Mul", [y, z], f"{name}.se.scale")
            y = net.conv_bn(y, hidden, c_out, 1, f"{name}.project", None)
            x = net.op("Add", [x, y], f"{name}.add") if stride == 1 and c == c_out else y
            c = c_out
    x = net.conv_bn(x, 320, 1280, 1, "features.8", "silu")
    return _classifier(net, x, 1280, "classifier")


def _convnext_tiny(net: _Net) -> str:
    def ln2d(x: str, c: int, name: str) -> str:   # LayerNorm over the channels of an NCHW tensor
        return net.affine(net.norm(x, [1], name, 1e-6), (c, 1, 1), name)

    x = ln2d(net.conv("image_tensor", 3, 96, 4, "stem.conv", stride=4, pad=0, bias=True), 96, "stem.norm")
    c, size = 96, 56
    for stage, (dim, n) in enumerate(zip((96, 192, 384, 768), (3, 3, 9, 3))):
        if stage:
            x = net.conv(ln2d(x, c, f"down{stage}.norm"), c, dim, 2, f"down{stage}.conv", stride=2, pad=0, bias=True)
            size //= 2
        c = dim
        for j in range(n):
            name = f"stage{stage + 1}.{j}"
            y = net.conv(x, dim, dim, 7, f"{name}.dwconv", groups=dim, bias=True)
            y = net.op("Transpose", [y], f"{name}.to_nhwc", perm=[0, 2, 3, 1])
            y = net.linear(net.layernorm(y, dim, f"{name}.norm", 1e-6), dim, 4 * dim, f"{name}.pwconv1")
            y = net.linear(net.act(y, "gelu", f"{name}.act"), 4 * dim, dim, f"{name}.pwconv2")
            y = net.op("Transpose", [y], f"{name}.to_nchw", perm=[0, 3, 1, 2])
            y = net.op("Mul", [y, net.tensor(f"{name}.layer_scale", (dim, 1, 1), fill=1e-6)], f"{name}.scale")
            x = net.op("Add", [x, y], f"{name}.add")
    x = ln2d(net.op("GlobalAveragePool", [x], "avgpool"), 768, "classifier.norm")
    return net.gemm(net.op("Flatten", [x], "flatten"), 768, 1000, "classifier.fc")


# ---- Stable Diffusion v1.5 (diffusers / transformers definitions) -------------------------------------


def _resblock(net: _Net, x: str, c_in: int, c_out: int, hw: tuple, name: str, temb: str | None = None,
              eps: float = 1e-5) -> str:
    """ResnetBlock2D: GroupNorm, SiLU, 3×3 conv (+ time embedding), GroupNorm, SiLU, 3×3 conv; + shortcut."""
    h = net.act(net.groupnorm(x, c_in, hw, f"{name}.norm1", eps=eps), "silu", f"{name}.act1")
    h = net.conv(h, c_in, c_out, 3, f"{name}.conv1", bias=True)
    if temb is not None:
        t = net.linear(temb, 1280, c_out, f"{name}.time_emb_proj")
        h = net.op("Add", [h, net.op("Reshape", [t, net.const(f"{name}.t4d", [1, c_out, 1, 1])], f"{name}.t4d")],
                   f"{name}.add_time")
    h = net.act(net.groupnorm(h, c_out, hw, f"{name}.norm2", eps=eps), "silu", f"{name}.act2")
    h = net.conv(h, c_out, c_out, 3, f"{name}.conv2", bias=True)
    short = net.conv(x, c_in, c_out, 1, f"{name}.conv_shortcut", bias=True) if c_in != c_out else x
    return net.op("Add", [short, h], f"{name}.out")


def _transformer(net: _Net, x: str, c: int, hw: tuple, text: str, name: str) -> str:
    """Transformer2DModel of SD v1.5: GroupNorm, 1×1 proj_in, one BasicTransformerBlock, 1×1 proj_out, residual."""
    tokens = hw[0] * hw[1]
    h = net.conv(net.groupnorm(x, c, hw, f"{name}.norm", eps=1e-6), c, c, 1, f"{name}.proj_in", bias=True)
    h = net.op("Transpose", [net.op("Reshape", [h, net.const(f"{name}.flat", [1, c, tokens])], f"{name}.flat")],
               f"{name}.tokens", perm=[0, 2, 1])
    b = f"{name}.block"
    n1 = net.layernorm(h, c, f"{b}.norm1")
    h = net.op("Add", [h, net.attention(n1, n1, tokens, tokens, c, c, 8, f"{b}.attn1")], f"{b}.res1")
    n2 = net.layernorm(h, c, f"{b}.norm2")
    h = net.op("Add", [h, net.attention(n2, text, tokens, 77, c, 768, 8, f"{b}.attn2")], f"{b}.res2")
    n3 = net.layernorm(h, c, f"{b}.norm3")
    proj = net.linear(n3, c, 8 * c, f"{b}.ff.proj")              # GEGLU: half is the value, half the gate
    val, gate = f"{b}.ff.value", f"{b}.ff.gate"
    net.nodes.append(_split(proj, [val, gate], f"{b}.ff.split"))
    ff = net.linear(net.op("Mul", [val, net.act(gate, "gelu", f"{b}.ff.gelu")], f"{b}.ff.geglu"), 4 * c, c,
                    f"{b}.ff.out")
    h = net.op("Add", [h, ff], f"{b}.res3")
    h = net.op("Reshape", [net.op("Transpose", [h], f"{name}.untokens", perm=[0, 2, 1]),
                           net.const(f"{name}.unflat", [1, c, *hw])], f"{name}.unflat")
    return net.op("Add", [net.conv(h, c, c, 1, f"{name}.proj_out", bias=True), x], f"{name}.out")


def _split(x: str, outs: list, name: str) -> Any:
    """Split the last axis into equal parts (opset 17: without a ``split`` input the parts are equal)."""
    from onnx import helper

    return helper.make_node("Split", [x], outs, name=name, axis=-1)


def _timestep_embedding(net: _Net) -> str:
    """sin/cos of the timestep at 160 frequencies (320 values), then Linear → SiLU → Linear to 1280."""
    freqs = np.exp(-math.log(10000) * np.arange(160) / 160).astype(np.float32)
    arg = net.op("Mul", ["timestep", net.const("time.freqs", freqs[None, :], np.float32)], "time.arg")
    emb = net.op("Concat", [net.op("Cos", [arg], "time.cos"), net.op("Sin", [arg], "time.sin")], "time.sincos",
                 axis=-1)
    h = net.act(net.linear(emb, 320, 1280, "time_embedding.linear_1"), "silu", "time_embedding.act")
    return net.act(net.linear(h, 1280, 1280, "time_embedding.linear_2"), "silu", "time_embedding.silu_for_resnets")


def _unet(net: _Net) -> str:
    """UNet2DConditionModel of SD v1.5 at a 64×64 latent (a 512×512 image), one denoising step."""
    temb = _timestep_embedding(net)
    x = net.conv("latent", 4, 320, 3, "conv_in", bias=True)
    chans, size, skips, c = (320, 640, 1280, 1280), 64, [], 320
    skips.append((x, 320))
    for i, width in enumerate(chans):
        for j in range(2):
            x = _resblock(net, x, c, width, (size, size), f"down{i}.resnet{j}", temb)
            c = width
            if i < 3:
                x = _transformer(net, x, c, (size, size), "text_emb", f"down{i}.attn{j}")
            skips.append((x, c))
        if i < 3:
            x = net.conv(x, c, c, 3, f"down{i}.downsample", stride=2, pad=1, bias=True)
            size //= 2
            skips.append((x, c))
    x = _resblock(net, x, 1280, 1280, (size, size), "mid.resnet0", temb)
    x = _transformer(net, x, 1280, (size, size), "text_emb", "mid.attn0")
    x = _resblock(net, x, 1280, 1280, (size, size), "mid.resnet1", temb)
    for i, width in enumerate(reversed(chans)):
        for j in range(3):
            skip, c_skip = skips.pop()
            x = net.op("Concat", [x, skip], f"up{i}.cat{j}", axis=1)
            x = _resblock(net, x, c + c_skip, width, (size, size), f"up{i}.resnet{j}", temb)
            c = width
            if i > 0:
                x = _transformer(net, x, c, (size, size), "text_emb", f"up{i}.attn{j}")
        if i < 3:
            x = net.conv(net.upsample2(x, c, (size, size), f"up{i}.upsample"), c, c, 3, f"up{i}.upsample.conv",
                         bias=True)
            size *= 2
    x = net.act(net.groupnorm(x, 320, (64, 64), "conv_norm_out"), "silu", "conv_act")
    return net.conv(x, 320, 4, 3, "conv_out", bias=True)


def _vae_decoder(net: _Net) -> str:
    """AutoencoderKL decoder of SD v1.5: 64×64×4 latent → 512×512×3 image (post_quant_conv included)."""
    x = net.conv("latent", 4, 4, 1, "post_quant_conv", bias=True)
    x = net.conv(x, 4, 512, 3, "decoder.conv_in", bias=True)
    size, c = 64, 512
    x = _resblock(net, x, 512, 512, (size, size), "mid.resnet0", eps=1e-6)
    tokens = size * size                           # one-head self-attention over the 4,096 latent pixels
    h = net.groupnorm(x, 512, (size, size), "mid.attn.group_norm", eps=1e-6)
    h = net.op("Transpose", [net.op("Reshape", [h, net.const("mid.attn.flat", [1, 512, tokens])], "mid.attn.flat")],
               "mid.attn.tokens", perm=[0, 2, 1])
    h = net.attention(h, h, tokens, tokens, 512, 512, 1, "mid.attn", qkv_bias=True)
    h = net.op("Reshape", [net.op("Transpose", [h], "mid.attn.untokens", perm=[0, 2, 1]),
                           net.const("mid.attn.unflat", [1, 512, size, size])], "mid.attn.unflat")
    x = net.op("Add", [x, h], "mid.attn.out")
    x = _resblock(net, x, 512, 512, (size, size), "mid.resnet1", eps=1e-6)
    for i, width in enumerate((512, 512, 256, 128)):
        for j in range(3):
            x = _resblock(net, x, c, width, (size, size), f"up{i}.resnet{j}", eps=1e-6)
            c = width
        if i < 3:
            x = net.conv(net.upsample2(x, c, (size, size), f"up{i}.upsample"), c, c, 3, f"up{i}.upsample.conv",
                         bias=True)
            size *= 2
    x = net.act(net.groupnorm(x, 128, (512, 512), "conv_norm_out", eps=1e-6), "silu", "conv_act")
    return net.conv(x, 128, 3, 3, "conv_out", bias=True)


def _text_encoder(net: _Net) -> str:
    """CLIPTextModel (ViT-L/14's text tower): 77 tokens → 77 × 768 hidden states, causal self-attention."""
    ids = net.op("Cast", ["tokens"], "token_ids", to=7)
    x = net.op("Gather", [net.tensor("token_embedding", (49408, 768)), ids], "embed", axis=0)
    x = net.op("Add", [x, net.tensor("position_embedding", (1, 77, 768))], "embed.position")
    mask = net.const("causal_mask", np.triu(np.full((77, 77), -1e9, np.float32), 1)[None, None], np.float32)
    for i in range(12):
        name = f"layers.{i}"
        n1 = net.layernorm(x, 768, f"{name}.layer_norm1")
        x = net.op("Add", [x, net.attention(n1, n1, 77, 77, 768, 768, 12, f"{name}.self_attn", qkv_bias=True,
                                            mask=mask)], f"{name}.res1")
        n2 = net.layernorm(x, 768, f"{name}.layer_norm2")
        h = net.act(net.linear(n2, 768, 3072, f"{name}.mlp.fc1"), "quick_gelu", f"{name}.mlp.act")
        x = net.op("Add", [x, net.linear(h, 3072, 768, f"{name}.mlp.fc2")], f"{name}.res2")
    return net.layernorm(x, 768, "final_layer_norm")


# ---- the catalogue ---------------------------------------------------------------------------


_IMAGE = [("image_tensor", "float32", [1, 3, 224, 224])]
#: AI Hub model folder (and component) → (builder, graph inputs (name, dtype, shape), output shape).
_CATALOGUE: dict[str, tuple[Callable[[_Net], str], list, list]] = {
    "mobilenet_v2": (_mobilenet_v2, _IMAGE, [1, 1000]),
    "squeezenet1_1": (_squeezenet1_1, _IMAGE, [1, 1000]),
    "efficientnet_b0": (_efficientnet_b0, _IMAGE, [1, 1000]),
    "resnet18": (_resnet((2, 2, 2, 2), False), _IMAGE, [1, 1000]),
    "resnet50": (_resnet((3, 4, 6, 3), True), _IMAGE, [1, 1000]),
    "resnet101": (_resnet((3, 4, 23, 3), True), _IMAGE, [1, 1000]),
    "convnext_tiny": (_convnext_tiny, _IMAGE, [1, 1000]),
    "stable_diffusion_v1_5/text_encoder": (_text_encoder, [("tokens", "int32", [1, 77])], [1, 77, 768]),
    "stable_diffusion_v1_5/unet": (_unet, [("latent", "float32", [1, 4, 64, 64]), ("timestep", "float32", [1, 1]),
                                           ("text_emb", "float32", [1, 77, 768])], [1, 4, 64, 64]),
    "stable_diffusion_v1_5/vae": (_vae_decoder, [("latent", "float32", [1, 4, 64, 64])], [1, 3, 512, 512]),
}
#: The models :func:`build` knows, by AI Hub's name (``model`` or ``model/component``).
MODELS: tuple[str, ...] = tuple(_CATALOGUE)


def input_shapes(name: str) -> dict[str, tuple[tuple[int, ...], str]]:
    """The graph inputs of a model, ``{name: (shape, dtype)}``, as AI Hub measured it.

    The classifiers take one 224×224 RGB image; Stable Diffusion v1.5's text
    encoder 77 tokens, its UNet a 64×64×4 latent, a timestep and the 77 × 768
    text embedding, its VAE decoder a 64×64×4 latent (AI Hub's
    ``get_input_spec``, batch 1). See chapter 9, "Real NPUs, measured"
    (chapters/09_npus.md).

    Parameters
    ----------
    name : str
        One of :data:`MODELS`.

    Returns
    -------
    dict

    Raises
    ------
    TypeError, ValueError
        If ``name`` is not a string naming a model of :data:`MODELS`.

    Examples
    --------
    >>> input_shapes("stable_diffusion_v1_5/unet")["latent"]
    ((1, 4, 64, 64), 'float32')
    """
    entry = _entry(name)
    return {n: (tuple(s), dt) for n, dt, s in entry[1]}


def _entry(name: Any) -> tuple:
    _check.text(name, "name")
    if name not in _CATALOGUE:
        raise ValueError(f"name must be one of {', '.join(MODELS)}; got {name!r}")
    return _CATALOGUE[name]


def build(name: str, *, weights: str = "none", seed: int = 0) -> onnx.ModelProto:
    """The ONNX graph of a measured model, at the input shape AI Hub measured it at.

    See the module docstring for the architectures and for what ``weights``
    means, and chapter 9, "Real NPUs, measured" (chapters/09_npus.md).

    Parameters
    ----------
    name : str
        One of :data:`MODELS` (``"resnet50"``, ``"stable_diffusion_v1_5/unet"`` …).
    weights : str
        ``"none"`` (default): initializers with a shape and no bytes, enough
        for shape inference and :func:`npukit.graphs.op_counts`;
        ``"random"``: seeded random float32 values, so the graph runs (only
        for models of at most :data:`RANDOM_LIMIT` parameters).
    seed : int
        Seed of the random weights (>= 0).

    Returns
    -------
    onnx.ModelProto
        An opset-17 model whose initializers say in ``doc_string`` whether they
        are a parameter, a buffer or a constant.

    Raises
    ------
    TypeError, ValueError
        If ``name`` is not a known model, ``weights`` not ``"none"`` or
        ``"random"``, ``seed`` not an integer >= 0, or random weights are asked
        for a model larger than :data:`RANDOM_LIMIT`.

    Examples
    --------
    >>> m = build("resnet18")
    >>> parameter_count(m), m.ByteSize() < 200_000
    (11689512, True)
    >>> [d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim]
    [1, 1000]
    """
    builder, inputs, out_shape = _entry(name)
    _check.text(weights, "weights")
    _check.one_of(weights, "weights", ("none", "random"))
    seed = _check.integer(seed, "seed", minimum=0)
    if weights == "random":
        size = parameter_count(build(name))
        if size > RANDOM_LIMIT:
            raise ValueError(f"weights='random' stores at most {RANDOM_LIMIT:,} parameters; {name} has {size:,} "
                             "(use weights='none' to count it)")
    from onnx import helper

    net = _Net(weights, seed)
    out = builder(net)
    vi = [(n, helper.np_dtype_to_tensor_dtype(np.dtype(dt)), s) for n, dt, s in inputs]
    model = net.finish(name.replace("/", "_"), vi, out, out_shape)
    return model


def parameter_count(model: onnx.ModelProto) -> int:
    """The learned parameters of a graph made by :func:`build`: initializers whose ``doc_string`` is ``"parameter"``.

    BatchNorm's running mean and variance are buffers and the shapes, masks
    and scalars the graph needs are constants: torchvision and diffusers count
    neither, and neither does this function. See chapter 9, "Real NPUs,
    measured" (chapters/09_npus.md).

    Parameters
    ----------
    model : onnx.ModelProto

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``model`` is not an ``onnx.ModelProto``.

    Examples
    --------
    >>> parameter_count(build("mobilenet_v2"))
    3504872
    """
    import onnx

    _check.instance(model, "model", onnx.ModelProto, "onnx.ModelProto")
    return sum(math.prod(t.dims) for t in model.graph.initializer if t.doc_string == "parameter")
