"""npukit — the helper package of the course *Tensors on Silicon*.

One small module per chapter holds what the chapter teaches and measures; its
figures live in :mod:`npukit.figures` and its lab's checkers in
:mod:`npukit.teach`, each in a file named like the chapter.

================ ==========================================================
module           holds
================ ==========================================================
data             0. CameraNet's procedurally drawn images
models           0. CameraNet, the running example, and its ONNX export
train            0. training and scoring CameraNet
tensors          1. Tensors are memory
layouts          2. Layouts: NCHW, NHWC, blocked, im2col, what a conversion costs
simd             2. … and which axis a kernel vectorizes along in each layout
graphs           3. Graphs and the roofline: what a graph costs
roofline         3. … measuring the roofline, and measured kernels under it
rewrites         3. … and what a compiler does to it (fold, fuse, plan memory)
gemm             4. GEMM and tiling: loop orders, tiles and the DRAM traffic they cause
blas             4. … measured: from Python loops to BLAS, where a tiled product's time goes
systolic         5. Systolic arrays: one GEMM on one array (dataflows, folds, cycles)
accelerator      5. … and the array in a system (networks, peak vs delivered TOPS, memory)
quant            6. Quantization: number formats, the ONNX affine map, choosing scales
qarith           6. … integer-only arithmetic: int32 sums and requantization
ptq              6. … post-training quantization: calibrate, write QDQ, run in integers
deploy           7. Deploying to an NPU: devices, compiling, the executed graph, profiles, timing
contract         7. … and what a device accepts (NPU contract, partitions, lowering, ONNX Runtime)
capstone         8. The minimal closed loop: the earlier tools in order, each stage checked
npus             9. Real NPUs, measured: published latencies against the roofline bound
archs            9. … the measured models' architectures as ONNX graphs, to count
project          the term project: the closed loop on any image classifier in ONNX, its report
zoo              … its worked examples: MobileNetV2- and ResNet-style networks in NumPy
figures          every chapter's figures (``figures.tensors`` …)
teach            the labs' checkers and the student edition (``teach.tensors`` …)
tally            the "numbers so far" table every chapter adds rows to
viz              the book's single plotly look and HTML tables
measure          timing, machine and OpenVINO device reports
timing           … comparing timings: interleaved rounds, a three-way verdict
machine          this machine's roofline profile, once per build; its ceiling
shared           every quantity quoted on several pages, once per build
================ ==========================================================

Submodules are imported on first use, so ``import npukit`` stays fast and
works without OpenVINO, ONNX or plotly being imported.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: Chapter number → the module whose ``numbers(ctx)`` gives that chapter's rows
#: of the "numbers so far" table (see :mod:`npukit.tally`). A new chapter
#: registers its module here.
CHAPTERS: dict[int, str] = {0: "train", 1: "tensors", 2: "layouts", 3: "rewrites", 4: "gemm", 5: "accelerator",
                             6: "ptq", 7: "deploy", 8: "capstone", 9: "npus"}

_SUBMODULES = ("data", "models", "train", "tensors", "layouts", "simd", "graphs", "roofline", "rewrites", "gemm",
               "blas", "systolic", "accelerator", "quant", "qarith", "ptq", "deploy", "contract", "capstone", "npus",
               "archs", "project", "zoo", "figures", "teach", "tally", "viz", "measure", "timing", "machine", "shared")

__all__ = list(_SUBMODULES) + ["CHAPTERS", "__version__"]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'npukit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
