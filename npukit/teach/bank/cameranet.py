"""Questions on chapter 0, "Meet CameraNet" (chapters/00_cameranet.md)."""

from __future__ import annotations

from ..._arith import conv_out_size
from .core import choice, fmt, numeric, short

U = "0"



def _draw_conv(rng):
    k = int(rng.choice([1, 3, 5]))
    return dict(h=int(rng.integers(7, 65)), k=k, s=int(rng.integers(1, 3)), p=int(rng.integers(0, k // 2 + 1)))


QUESTIONS = [
    numeric(
        "ch0-conv-out-side", U, 2,
        "A convolution with a {k}×{k} kernel, stride {s} and padding {p} (that many pixels of zeros on each side) "
        "reads a feature map {h} pixels high. How many pixels high is its output?",
        dict(h=16, k=3, s=2, p=1),
        lambda h, k, s, p: conv_out_size(h, k, s, p, p),
        lambda h, k, s, p, answer: f"⌊({h} + 2·{p} − {k}) / {s}⌋ + 1 = {fmt(answer)}.",
        _draw_conv,
        mistakes=[(lambda h, k, s, p: (h + 2 * p - k) / s + 1 if (h + 2 * p - k) % s else None,
                   "The division is rounded down: a window that would hang over the edge is not computed.")],
        source="ex-ch0-block2"),
    numeric(
        "ch0-pointwise-macs", U, 2,
        "A pointwise (1×1) convolution maps {cin} channels to {cout} on a {h}×{w} feature map, for one image. "
        "How many multiply–accumulates (MACs) does it do?",
        dict(cin=16, cout=32, h=16, w=16),
        lambda cin, cout, h, w: cout * h * w * cin,
        lambda cin, cout, h, w, answer: (f"Each of the {cout}·{h}·{w} output values is a sum of {cin} products, "
                                         f"one per input channel: {fmt(answer)} MACs."),
        lambda rng: dict(cin=int(rng.choice([8, 16, 24, 32, 64])), cout=int(rng.choice([16, 32, 48, 64, 128])),
                         h=int(rng.choice([4, 7, 8, 14, 16])), w=int(rng.choice([4, 7, 8, 14, 16]))),
        mistakes=[(lambda cin, cout, h, w: 2 * cout * h * w * cin,
                   "That is the FLOP count: a MAC is one multiply and one add, two FLOPs. The question asks for MACs.")],
        source="chapter 0, block1.pw"),
    numeric(
        "ch0-depthwise-macs", U, 2,
        "A depthwise 3×3 convolution with stride {s} and padding 1 reads a {c}-channel map of {h}×{h} pixels. "
        "How many MACs does it do for one image?",
        dict(c=32, h=16, s=2),
        lambda c, h, s: c * conv_out_size(h, 3, s, 1, 1) ** 2 * 9,
        lambda c, h, s, answer: (f"The output is {conv_out_size(h, 3, s, 1, 1)}×{conv_out_size(h, 3, s, 1, 1)}; each of its "
                                 f"{c}·{conv_out_size(h, 3, s, 1, 1) ** 2} values reads 3·3 inputs of its own channel: "
                                 f"{fmt(answer)} MACs."),
        lambda rng: dict(c=int(rng.choice([16, 32, 64, 96])), h=int(rng.choice([8, 14, 16, 28, 32])),
                         s=int(rng.integers(1, 3))),
        mistakes=[(lambda c, h, s: c * c * conv_out_size(h, 3, s, 1, 1) ** 2 * 9,
                   "That is a dense convolution: a depthwise output reads one input channel, not all of them.")],
        source="ex-ch0-block2"),
    numeric(
        "ch0-pointwise-weights", U, 2,
        "A pointwise convolution without bias maps {cin} channels to {cout}. How many weights does it have?",
        dict(cin=32, cout=64),
        lambda cin, cout: cin * cout,
        lambda cin, cout, answer: f"One weight per (output channel, input channel) pair: {cout}·{cin} = {fmt(answer)}.",
        lambda rng: dict(cin=int(rng.choice([8, 16, 32, 64, 96])), cout=int(rng.choice([16, 32, 64, 128, 256]))),
        source="ex-ch0-block2"),
    numeric(
        "ch0-separable-ratio", U, 2,
        "A depthwise-separable block (a depthwise 3×3 convolution followed by a pointwise one) replaces a dense 3×3 "
        "convolution from {cin} to {cout} channels with the same input and output shapes. How many times fewer "
        "MACs does the block do? (Two decimals.)",
        dict(cin=32, cout=64),
        lambda cin, cout: 1 / (1 / cout + 1 / 9),
        lambda cin, cout, answer: (f"Per output pixel the dense layer does 9·{cin}·{cout} MACs, the block "
                                   f"9·{cin} + {cin}·{cout}: the ratio is 1 / (1/{cout} + 1/9) = {answer:.2f}, "
                                   "independent of the number of input channels."),
        lambda rng: dict(cin=int(rng.choice([16, 32, 64, 128])), cout=int(rng.choice([16, 24, 32, 64, 128, 256]))),
        abs_tol=0.006, source="chapter 0, the factorization"),
    choice(
        "ch0-no-bias", U, 2,
        "Every convolution in CameraNet is followed by a BatchNormalization and has no bias. Why?",
        ("In training, BatchNormalization subtracts each channel's batch mean, which removes any bias, and adds "
         "its own shift β.", "Right: the bias would be a parameter nothing trains."),
        [("ONNX's Conv operator has no bias input.", "It has one, the optional input B."),
         ("A bias would make the model impossible to quantize to INT8.",
          "INT8 layers keep their biases as int32 (chapter 6)."),
         ("The bias is stored inside the ReLU that follows.", "A ReLU has no parameters.")],
        source="ex-ch0-bias"),
    choice(
        "ch0-reuse", U, 2,
        "A convolution uses each weight once per output position. Which CameraNet layer does the fewest MACs "
        "per weight?",
        ("`fc`: each weight is used once per image.",
         "Right: a fully connected layer on one image has a single output position."),
        [("`block3.pw`, which holds the most weights.",
          "It holds the most weights, but uses each one at all 4×4 output positions."),
         ("The depthwise layers, which do few MACs.",
          "Few MACs, but also few weights: each weight is used at every output pixel of its channel."),
         ("`stem.conv`, whose input has only 3 channels.",
          "Its 16×16 output gives each weight 256 uses, as many as any layer.")],
        source="self-check 2"),
    choice(
        "ch0-precision-hint", U, 3,
        "The NumPy CameraNet and the same model compiled by OpenVINO for the CPU disagree by about 1e-2 in the "
        "logits. What do you check first?",
        ("The inference precision: the CPU plugin may compute in bf16 by default; set "
         "`INFERENCE_PRECISION_HINT` to `f32`.", "Right: on CPUs with bf16 support, bf16 is the default."),
        [("Whether the model needs more training.", "Training does not change how two runtimes compute the same "
          "weights."),
         ("The ONNX opset version of the export.", "An opset mismatch fails to load or changes an operator's "
          "semantics; it does not shift every logit by about 1e-2."),
         ("Whether float32 sums in another order can differ by 1e-2.",
          "Summing float32 values in another order changes the logits by less than 1e-5 here (chapter 0 measures it), not 1e-2.")],
        source="self-check 4"),
    choice(
        "ch0-onnx-io", U, 3,
        "`CameraNet.to_onnx()` exports the network. What are its input and output, and how do you export it for "
        "another batch size?",
        ("Input `image`, float32 of shape 1×3×32×32; output `logits`, 1×8. `to_onnx(batch=4)` fixes a batch of 4, "
         "`to_onnx(batch=\"N\")` makes a symbolic one.", "Right."),
        [("Input `x` of shape 3×32×32 without a batch axis; the batch is added by the runtime.",
          "The export has an explicit batch axis, NCHW."),
         ("Input `image` in NHWC, 1×32×32×3; the batch is always 1.", "The export is NCHW, and its batch can be "
          "set or made symbolic."),
         ("Output `probabilities`, already passed through a softmax.", "The output is the logits; no softmax is "
          "exported.")],
        source="self-check 3"),
    choice(
        "ch0-heldout", U, 4,
        "Why does chapter 0 measure CameraNet's accuracy on images drawn with `train.HELDOUT_SEED`?",
        ("No training step has seen those images, so the accuracy measures generalisation, not memorisation.",
         "Right: a held-out set."),
        [("That seed draws harder images than the training seed.",
          "Both seeds draw from the same distribution; only the images differ."),
         ("The training seed's images are no longer reproducible.",
          "Every seed reproduces its images exactly."),
         ("Accuracy on the training images cannot be computed in NumPy.",
          "It can; it would only say how well the weights fit those images.")],
        source="self-check 1"),
    short(
        "ch0-bright-white", U, 1,
        "`shapes_dataset(16, seed=0)` and `shapes_dataset(16, seed=0, **data.BRIGHT_WHITE)` draw 16 images each. "
        "What is the same in the two sets, what differs, and why does the chapter build such a pair?",
        "The same seed gives the same scenes: the same classes, shapes, positions and sizes, because the options "
        "do not change the order in which random numbers are drawn. What differs is the lighting and background: "
        "bright images on a near-white background, with light areas saturating at 1.0. The pair is a biased "
        "subset of the same scenes, used in chapter 6 to calibrate INT8 on images unlike those the camera sees.",
        [(1, "Same scenes: classes, positions and sizes agree, image by image."),
         (1, "Explains why: the options do not change the random draws."),
         (1, "Names what differs: brightness and a near-white background (saturated pixels)."),
         (1, "Says what it is for: a biased calibration subset (chapter 6).")],
        source="chapter 0, Figure 0.2"),
    short(
        "ch0-weights", U, 4,
        "What does `make weights` (`python -m npukit.train`) do, and when does it reproduce the shipped "
        "`cameranet.npz` bit for bit?",
        "It trains CameraNet from random weights with the stored call `train.TRAIN_CALL` (seeded data, AdamW, "
        "a cosine learning rate, label smoothing) and rewrites `npukit/data/cameranet.npz` with fixed "
        "timestamps. On the same machine and NumPy build the weights come out bit for bit the same, so `git diff` "
        "shows nothing; another CPU's BLAS may round sums differently, and the tests then only require the "
        "accuracy to agree within two percentage points.",
        [(1, "Retrains from scratch with the recorded call and seed."),
         (1, "Rewrites the weights file (with fixed timestamps)."),
         (1, "Bit-identical on the same machine and NumPy/BLAS build."),
         (1, "Another BLAS may round differently: close accuracy, not identical bits.")],
        source="self-check 5"),
]
