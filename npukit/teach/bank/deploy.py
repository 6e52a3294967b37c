"""Questions on chapter 7, "Deploying to an NPU" (chapters/07_deploy.md)."""

from __future__ import annotations

from .core import choice, fmt, numeric, short

U = "7"


def _draw_pipe(rng):
    return dict(decode=int(rng.integers(1, 30)), infer=int(rng.integers(2, 40)))


QUESTIONS = [
    numeric(
        "ch7-crossing-pool", U, 2,
        "A network ends Conv → Relu → GlobalAveragePool → Flatten → Gemm; the last Relu writes a float32 tensor of "
        "shape `(1, {c}, {h}, {h})`. An NPU runs every operator except GlobalAveragePool, which falls back to the "
        "CPU. How many bytes cross between the devices per image? (The model's own input and output are host I/O "
        "and do not count.)",
        dict(c=128, h=4),
        lambda c, h: c * h * h * 4 + c * 4,
        lambda c, h, answer: (f"The feature map goes out to the CPU ({c}·{h}·{h}·4 = {fmt(c * h * h * 4)} B) and the "
                              f"pooled vector comes back ({c}·4 = {4 * c} B): {fmt(answer)} bytes."),
        lambda rng: dict(c=int(rng.choice([32, 64, 128, 256])), h=int(rng.choice([2, 4, 7, 8]))),
        mistakes=[(lambda c, h: c * h * h * 4, "The pooled vector must also come back to the NPU for the Gemm: two "
                   "crossings.")],
        source="chapter 7, partitioning"),
    numeric(
        "ch7-reorder-bytes", U, 3,
        "The executed graph shows a Reorder from `abcd` to `acdb` on a `{dtype}` input of shape `(1, {c}, {h}, {h})`. "
        "How many bytes does it read and write together?",
        dict(c=3, h=32, dtype="float32"),
        lambda c, h, dtype: 2 * c * h * h * (4 if dtype == "float32" else 1),
        lambda c, h, dtype, answer: (f"It reads the whole tensor and writes it in NHWC order: "
                                     f"2·{c}·{h}·{h}·{4 if dtype == 'float32' else 1} = {fmt(answer)} bytes."),
        lambda rng: dict(c=int(rng.choice([3, 16, 32, 64])), h=int(rng.choice([8, 16, 32, 64, 224])),
                         dtype=str(rng.choice(["float32", "uint8"]))),
        mistakes=[(lambda c, h, dtype: c * h * h * (4 if dtype == "float32" else 1),
                   "That is one direction; a Reorder reads the tensor and writes it.")],
        source="ex-ch7-reorder"),
    numeric(
        "ch7-one-request", U, 4,
        "Decoding a camera frame takes the host {decode} ms and one inference takes {infer} ms on an NPU that runs "
        "one inference at a time. With a single infer request (decode, then infer, then the next frame), how many "
        "frames per second can the application sustain? (One decimal.)",
        dict(decode=5, infer=20),
        lambda decode, infer: 1000 / (decode + infer),
        lambda decode, infer, answer: f"One frame every {decode} + {infer} = {decode + infer} ms: {answer:.1f} frames per second.",
        _draw_pipe, abs_tol=0.06,
        mistakes=[(lambda decode, infer: 1000 / max(decode, infer), "That is two requests: with one, decoding and "
                   "inference cannot overlap.")],
        source="ex-ch7-requests"),
    numeric(
        "ch7-two-requests", U, 4,
        "Decoding a camera frame takes the host {decode} ms and one inference takes {infer} ms on an NPU that runs "
        "one inference at a time. With two infer requests, so that the next frame is decoded while the current one "
        "is inferred, how many frames per second can the application sustain? (One decimal.)",
        dict(decode=5, infer=20),
        lambda decode, infer: 1000 / max(decode, infer),
        lambda decode, infer, answer: (f"In the steady state the slower of the two stages sets the pace: one frame "
                                       f"every max({decode}, {infer}) ms, {answer:.1f} frames per second."),
        _draw_pipe, abs_tol=0.06,
        mistakes=[(lambda decode, infer: 1000 / (decode + infer), "That is one request: two let decoding overlap "
                   "inference.")],
        source="ex-ch7-requests"),
    numeric(
        "ch7-groupnorm-bytes", U, 2,
        "A GroupNormalization on a float32 tensor of shape `(1, {c}, {h}, {h})` is decomposed into primitives; "
        "four intermediates are written in full (the difference from the mean, its square, the normalised and "
        "the scaled values). How many bytes do they take together, if no compiler fuses them?",
        dict(c=64, h=56),
        lambda c, h: 4 * c * h * h * 4,
        lambda c, h, answer: f"Each is {c}·{h}·{h}·4 = {fmt(c * h * h * 4)} bytes; four of them: {fmt(answer)} bytes.",
        lambda rng: dict(c=int(rng.choice([16, 32, 64, 128])), h=int(rng.choice([7, 14, 28, 56]))),
        source="ex-ch7-groupnorm"),
    choice(
        "ch7-auto-fallback", U, 1,
        "A script compiles for `\"AUTO:NPU,CPU\"` on a machine without an NPU. What happens?",
        ("It compiles and runs on the CPU without an error or a warning; `EXECUTION_DEVICES` tells.",
         "Right: a silent fallback, which `deploy.choose_device` announces."),
        [("Compilation fails with a device-not-found error.", "That is what `\"NPU\"`, `\"AUTO:NPU\"` and "
          "`\"HETERO:NPU,CPU\"` do."),
         ("It runs on the GPU, which OpenVINO treats as the NPU.", "`GPU` is the Intel graphics plugin, never the "
          "NPU."),
         ("It waits until an NPU becomes available.", "AUTO picks among the devices present.")],
        source="self-check 1"),
    choice(
        "ch7-gpu-name", U, 1,
        "An article compiles with `device_name=\"GPU\"` and says \"here GPU actually means NPU\". In OpenVINO, "
        "what does `GPU` select?",
        ("The Intel graphics plugin; the NPU is `NPU`.", "Right."),
        [("The NPU on Core Ultra laptops.", "The NPU has its own plugin and name."),
         ("Whatever accelerator is present.", "That is closer to `AUTO`."),
         ("Any CUDA device.", "OpenVINO's GPU plugin is for Intel graphics (OpenCL).")],
        source="chapter 7, devices"),
    choice(
        "ch7-first-inference", U, 4,
        "Why is the first inference slower than the rest, and what should a benchmark do about it?",
        ("It pays one-time work (allocation, kernel preparation, cold caches, on an NPU waking the device): warm up "
         "first, report the steady state's median and percentiles, and the first inference separately.", "Right."),
        [("It compiles the model; include it in the average.", "Compilation happened before; averaging a one-time "
          "cost into a steady state describes neither."),
         ("It is noise; one run is enough if it is repeated once.", "The first run is systematically slower."),
         ("It is slower only on an NPU.", "The CPU plugin shows it too (chapter 7 measures it).")],
        source="self-check 4"),
    choice(
        "ch7-benchmark-app", U, 4,
        "What does OpenVINO's `benchmark_app` measure on CameraNet when run without `-hint`?",
        ("Throughput with several streams, with the image input switched to u8: not a single frame's latency on the "
         "float32 tensor an application passes.", "Right: pass `-hint latency -ip f32` for that."),
        [("The latency of one float32 inference.", "Without a hint it uses THROUGHPUT and a u8 image input."),
         ("The compile time only.", "It reports the compile time, and then runs inferences."),
         ("The NPU's speed, simulated on the CPU.", "It measures the device given with `-d`.")],
        source="chapter 7, benchmark_app"),
    choice(
        "ch7-profile-gap", U, 3,
        "The layers of a per-layer profile add up to much less than the measured latency of an inference. Where did "
        "the rest go?",
        ("Outside the layers: starting the request, handing inputs and outputs over, scheduling.",
         "Right: for a tiny model that is a large share, which no faster kernel removes."),
        [("Into the profiler's own overhead only.", "Profiling costs a little, but the gap is there without it."),
         ("Into layers the profiler hides.", "Every executed layer is listed."),
         ("Nowhere: the profile must be wrong.", "The profile counts layer time; the wall clock counts everything.")],
        source="self-check 6"),
    short(
        "ch7-crossing-costs", U, 2,
        "A model with an operator the NPU lacks, in the middle of the graph, runs partly on the CPU. Which two costs "
        "does each crossing between the devices add?",
        "A copy of the tensor between the devices (its bytes through memory, or into device-visible buffers) and a "
        "synchronisation: each side waits for the other's part to finish.",
        [(1, "A copy of the crossing tensor (bytes moved)."),
         (1, "A synchronisation between the devices (each waits).")],
        source="self-check 5"),
    short(
        "ch7-reorder-why", U, 3,
        "A profile shows a `Reorder` among the slowest layers. What did the runtime do, and what would have to "
        "change for it to go away?",
        "It converted a tensor between two layouts (or precisions) because its producer and its consumer want "
        "different ones, typically the model's NCHW input against NHWC convolution kernels. One side has to "
        "change: feed an input already in the kernels' layout (for example declare NHWC with the preprocessing "
        "API) or use kernels that take the model's layout; the executed graph then shows whether the Reorder is "
        "gone.",
        [(1, "A layout (or precision) conversion inserted between producer and consumer."),
         (1, "Cause: the model's layout differs from the kernels' (NCHW vs NHWC)."),
         (1, "Remedy: make one side match (declared input layout, or other kernels), and check the executed graph.")],
        source="self-check 3"),
    short(
        "ch7-precision-explicit", U, 5,
        "Why must the inference precision be set explicitly when comparing OpenVINO's output with NumPy's, or with "
        "ONNX Runtime's?",
        "On CPUs with bf16 support (AMX, AVX512-BF16) OpenVINO's CPU plugin computes in bf16 by default, so its "
        "results differ from float32 by bf16 rounding, around 1e-2; other CPUs default to f32. Setting "
        "`INFERENCE_PRECISION_HINT` to `f32` makes the comparison test the model, not the precision.",
        [(1, "The default is bf16 on CPUs that support it (and f32 elsewhere)."),
         (1, "bf16 rounding differs from float32 far beyond float32 rounding."),
         (1, "Set the hint to f32 so the comparison is like for like.")],
        source="self-check 2"),
]
