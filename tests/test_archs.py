"""Tests of npukit.archs: the measured models' graphs have the published sizes, and they run.

References, written here and not taken from npukit: the parameter counts and
multiply-accumulate counts torchvision's documentation publishes for each
classifier (its "GFLOPS" column counts one per multiply-add: convolutions and
matrix products only, the convention of op_counts' MACs); the parameter counts
of Stable Diffusion v1.5's three components (diffusers and transformers);
closed-form MAC counts of those components written from their published
configurations; ONNX Runtime running the small graphs with random weights.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest

from npukit import archs
from npukit.graphs import op_counts, tensor_shapes

#: torchvision's model documentation (docs.pytorch.org/vision/main/models): num_params and "GFLOPS" (GMACs).
TORCHVISION = {
    "mobilenet_v2": (3_504_872, 0.30),
    "squeezenet1_1": (1_235_496, 0.35),
    "efficientnet_b0": (5_288_548, 0.39),
    "resnet18": (11_689_512, 1.81),
    "resnet50": (25_557_032, 4.09),
    "resnet101": (44_549_160, 7.80),
    "convnext_tiny": (28_589_128, 4.46),
}
#: Parameters of SD v1.5's components: CLIPTextModel (ViT-L/14 text tower), UNet2DConditionModel, and the
#: AutoencoderKL decoder with post_quant_conv (diffusers' model summaries).
SD_PARAMETERS = {"stable_diffusion_v1_5/text_encoder": 123_060_480, "stable_diffusion_v1_5/unet": 859_520_964,
                 "stable_diffusion_v1_5/vae": 49_490_199}


def _macs(name: str) -> int:
    return sum(c.macs for c in op_counts(archs.build(name)))


@pytest.mark.parametrize("name", list(TORCHVISION))
def test_classifier_matches_torchvision(name):
    params, gmacs = TORCHVISION[name]
    model = archs.build(name)
    assert archs.parameter_count(model) == params                  # exactly: every layer is there, once
    assert abs(_macs(name) / 1e9 / gmacs - 1) < 0.02                # within 2 % of the published (rounded) count


@pytest.mark.parametrize("name", list(SD_PARAMETERS))
def test_stable_diffusion_parameters_match_the_published_counts(name):
    assert archs.parameter_count(archs.build(name)) == SD_PARAMETERS[name]


def _conv(h, w, c_in, c_out, k):         # MACs of a k×k convolution with an h×w output
    return h * w * c_out * c_in * k * k


def _resnet_block(h, c_in, c_out):        # diffusers' ResnetBlock2D: two 3×3 convs, a 1×1 shortcut if needed
    return _conv(h, h, c_in, c_out, 3) + _conv(h, h, c_out, c_out, 3) + (_conv(h, h, c_in, c_out, 1) if c_in != c_out
                                                                        else 0)


def _transformer(h, c, text=77, ctx=768):  # Transformer2DModel: proj in/out, self-, cross-attention, GEGLU MLP
    t = h * h
    proj = 2 * t * c * c
    self_attn = 4 * t * c * c + 2 * t * t * c
    cross = 2 * t * c * c + 2 * text * ctx * c + 2 * t * text * c
    ff = t * c * 8 * c + t * 4 * c * c
    return proj + self_attn + cross + ff


def test_unet_macs_match_a_closed_form_count():
    """UNet2DConditionModel (SD v1.5 config: block_out_channels 320, 640, 1280, 1280; 2 layers per block)."""
    temb = 320 * 1280 + 1280 * 1280
    total = temb + _conv(64, 64, 4, 320, 3) + _conv(64, 64, 320, 4, 3)
    down = [(64, 320, 320), (32, 320, 640), (16, 640, 1280), (8, 1280, 1280)]
    for i, (h, c_in, c) in enumerate(down):
        total += _resnet_block(h, c_in, c) + _resnet_block(h, c, c) + 2 * 1280 * c       # + time projections
        if i < 3:
            total += 2 * _transformer(h, c) + _conv(h // 2, h // 2, c, c, 3)             # stride-2 downsample
    total += 2 * (_resnet_block(8, 1280, 1280) + 1280 * 1280) + _transformer(8, 1280)
    skips = [320, 320, 320, 320, 640, 640, 640, 1280, 1280, 1280, 1280, 1280]
    c_prev = 1280
    for i, (h, c) in enumerate([(8, 1280), (16, 1280), (32, 640), (64, 320)]):
        for _ in range(3):
            total += _resnet_block(h, c_prev + skips.pop(), c) + 1280 * c
            c_prev = c
            if i > 0:
                total += _transformer(h, c)
        if i < 3:
            total += _conv(2 * h, 2 * h, c, c, 3)                                        # upsample conv
    assert _macs("stable_diffusion_v1_5/unet") == total


def test_vae_decoder_and_text_encoder_macs_match_closed_forms():
    vae = _conv(64, 64, 4, 4, 1) + _conv(64, 64, 4, 512, 3) + 2 * _resnet_block(64, 512, 512)
    t = 64 * 64
    vae += 4 * t * 512 * 512 + 2 * t * t * 512                                           # one-head attention
    c, h = 512, 64
    for i, width in enumerate((512, 512, 256, 128)):
        for _ in range(3):
            vae += _resnet_block(h, c, width)
            c = width
        if i < 3:
            h *= 2
            vae += _conv(h, h, c, c, 3)
    vae += _conv(512, 512, 128, 3, 3)
    assert _macs("stable_diffusion_v1_5/vae") == vae
    per_layer = 4 * 77 * 768 * 768 + 2 * 77 * 77 * 768 + 2 * 77 * 768 * 3072
    assert _macs("stable_diffusion_v1_5/text_encoder") == 12 * per_layer


@pytest.mark.parametrize("name", archs.MODELS)
def test_graph_has_the_published_input_and_output_shapes(name):
    model = archs.build(name)
    shapes = tensor_shapes(model)
    for n, (shape, dtype) in archs.input_shapes(name).items():
        assert shapes[n] == (shape, np.dtype(dtype))
    out = model.graph.output[0]
    assert shapes[out.name][0] == tuple(d.dim_value for d in out.type.tensor_type.shape.dim)
    assert model.ByteSize() < 1_000_000                       # no weights stored: kilobytes, not gigabytes
    kinds = {t.doc_string for t in model.graph.initializer}
    assert kinds <= {"parameter", "buffer", "constant"}


@pytest.mark.parametrize("name", archs.MODELS)
def test_every_node_is_valid_opset_17(name):
    """onnx.checker needs the weights' bytes, so each node is checked against its operator schema instead."""
    from onnx import defs

    model = archs.build(name)
    assert [o.version for o in model.opset_import] == [17]
    for node in model.graph.node:
        schema = defs.get_schema(node.op_type, 17, "")
        assert {a.name for a in node.attribute} <= set(schema.attributes), (node.name, node.op_type)
        assert schema.min_input <= len(node.input) <= schema.max_input, node.name
        assert schema.min_output <= len(node.output) <= schema.max_output, node.name
        for a in node.attribute:
            assert a.type == schema.attributes[a.name].type, (node.name, a.name)


@pytest.mark.parametrize("name", ["mobilenet_v2", "squeezenet1_1", "efficientnet_b0", "resnet18"])
def test_small_graphs_run_with_random_weights(name):
    ort = pytest.importorskip("onnxruntime")
    model = archs.build(name, weights="random", seed=1)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    y = session.run(None, {"image_tensor": np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32)})[0]
    assert y.shape == (1, 1000) and np.isfinite(y).all() and np.ptp(y) > 0
    again = archs.build(name, weights="random", seed=1)
    assert again.graph.initializer[0].raw_data == model.graph.initializer[0].raw_data    # seeded


def test_random_weights_are_refused_for_large_models():
    with pytest.raises(ValueError, match="weights='random' stores at most"):
        archs.build("resnet50", weights="random")


def test_bad_names_and_options():
    with pytest.raises(ValueError, match="name must be one of"):
        archs.build("resnet34")
    with pytest.raises(ValueError, match="weights"):
        archs.build("resnet18", weights="zeros")
    with pytest.raises(TypeError, match="model"):
        archs.parameter_count("resnet18")
    with pytest.raises(ValueError, match="name must be one of"):
        archs.input_shapes("unet")


def test_parameter_count_skips_buffers_and_constants():
    model = archs.build("resnet18")
    everything = sum(math.prod(t.dims) for t in model.graph.initializer)
    bn_stats = sum(math.prod(t.dims) for t in model.graph.initializer if t.doc_string == "buffer")
    assert bn_stats == 2 * sum(math.prod(t.dims) for t in model.graph.initializer if t.name.endswith(".bn.weight"))
    assert archs.parameter_count(model) == everything - bn_stats - sum(
        math.prod(t.dims) for t in model.graph.initializer if t.doc_string == "constant")
