"""Chapter 7's measurements: CameraNet's steady-state latency in FP32, BF16 and INT8, side by side.

The three precisions of CameraNet (batch 1, 32×32) and of a larger variant
(64×64, wider blocks, random weights: latency does not depend on them) are
compiled with OpenVINO's CPU plugin, LATENCY hint. Each round times every
model once, in turn, so whatever else the machine is doing slows them alike;
the table shows the median over rounds and the ratios to FP32 from the same
rounds, plus each model's first inference against its steady state. The INT8
model is CameraNet with BatchNorm folded, written as a QDQ model by chapter 6's
``npukit.ptq.to_qdq`` (the course's own builder; ONNX Runtime's quantizer,
``npukit.contract.ort_quantize_qdq``, gives the same kernels).

On CPUs without native BF16 the "bf16" rows run whatever the plugin falls
back to; the table says which kernels ran.

Run alone with ``.venv/bin/python bench/bench_deploy.py``; ``make bench`` runs
it with the others.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from npukit import deploy, measure, ptq, rewrites  # noqa: E402
from npukit.data import shapes_dataset  # noqa: E402
from npukit.models import CameraNet  # noqa: E402


def _variants(net: CameraNet, x: np.ndarray, calibration: np.ndarray) -> dict:
    model = net.to_onnx()
    qdq = ptq.to_qdq(rewrites.fold_batchnorm(model), calibration)
    return {"FP32": deploy.compile(model, precision="f32"), "BF16": deploy.compile(model, precision="bf16"),
            "INT8": deploy.compile(qdq, precision="f32")}


def main(rounds: int = 15, per_round: int = 40) -> int:
    print(f"CameraNet deployed with OpenVINO's CPU plugin on {measure.machine_summary()}")
    rng = np.random.default_rng(0)
    small = CameraNet.pretrained()
    big = CameraNet(stem=32, blocks=((64, 1), (128, 2), (256, 2), (512, 2)), size=64)
    cases = {
        "CameraNet 32×32": (small, shapes_dataset(1, seed=0)[0], shapes_dataset(16, seed=1)[0]),
        "larger 64×64": (big, rng.random((1, 3, 64, 64), dtype=np.float32), rng.random((16, 3, 64, 64), dtype=np.float32)),
    }
    failed = 0
    for label, (net, x, calib) in cases.items():
        compiled = _variants(net, x, calib)
        first = {}
        requests = {}
        for k, c in compiled.items():
            r = c.create_infer_request()
            t0 = time.perf_counter()
            r.infer(x)
            first[k] = time.perf_counter() - t0
            for _ in range(20):
                r.infer(x)
            requests[k] = r
        times = {k: [] for k in compiled}
        for i in range(rounds):
            order = list(compiled) if i % 2 == 0 else list(compiled)[::-1]
            for k in order:
                r = requests[k]
                t0 = time.perf_counter()
                for _ in range(per_round):
                    r.infer(x)
                times[k].append((time.perf_counter() - t0) / per_round)
        ratios = {k: statistics.median(f / t for f, t in zip(times["FP32"], times[k])) for k in compiled}
        print(f"\n{label}: steady state over {rounds} rounds of {per_round}, first inference of a fresh request")
        print(f"{'precision':<10}{'median µs':>12}{'× FP32 speed':>14}{'first µs':>12}{'first / steady':>16}  kernels")
        for k, c in compiled.items():
            med = statistics.median(times[k])
            kernels = sorted({op.primitive for op in deploy.executed_graph(c) if op.layer_type == "Convolution"})
            print(f"{k:<10}{med * 1e6:>12.1f}{ratios[k]:>14.2f}{first[k] * 1e6:>12.1f}{first[k] / med:>16.1f}  "
                  f"{', '.join(kernels)}")
        out = {k: compiled[k](x)[0] for k in compiled}
        err = float(np.abs(out["INT8"] - out["FP32"]).max() / np.abs(out["FP32"]).max())
        print(f"INT8 vs FP32 logits: max relative difference {err:.3f}")
        failed |= not np.isfinite(err)
    print("\n(ratios > 1: faster than FP32. A tiny model is dominated by fixed per-inference costs that precision "
          "does not shrink; the larger variant shows what the precision buys.)")
    return int(failed)


if __name__ == "__main__":
    sys.exit(main())
