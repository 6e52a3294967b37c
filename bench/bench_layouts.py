"""Chapter 2: what a layout conversion costs next to a plain copy of the same bytes.

For each of the chapter's tensors, ``npukit.layouts.measure_conversion`` times
a contiguous copy and the conversion into preallocated buffers, alternating
them in rounds (warm-up, repeats, medians), so both numbers see the same
machine load. The ratio conversion time / copy time is the result; the copy is
the memory-bound baseline a perfect reorder would reach.

Run it alone with ``python bench/bench_layouts.py`` or through ``make bench``.
"""

from __future__ import annotations

import sys
from pathlib import Path


def cases() -> list[tuple[str, tuple[int, ...], str, str]]:
    """(what, shape, src, dst) for every tensor the chapter measures."""
    from npukit import models

    rows = models.summary(models.CameraNet())  # shapes only: the architecture, no weights needed
    largest = max((r["output"] for r in rows if len(r["output"]) == 4), key=lambda s: s[1] * s[2] * s[3])
    return [
        ("CameraNet input", (1, 3, 32, 32), "NCHW", "NHWC"),
        ("CameraNet largest activation", tuple(largest), "NCHW", "NHWC"),
        ("camera frame 224×224", (1, 3, 224, 224), "NCHW", "NHWC"),
        ("camera frame 224×224, back", (1, 224, 224, 3), "NHWC", "NCHW"),
        ("early conv activation", (1, 64, 112, 112), "NCHW", "NHWC"),
        ("early conv activation, blocked", (1, 64, 112, 112), "NCHW", "NCHW16c"),
        ("a batch of 8 of them", (8, 64, 112, 112), "NCHW", "NHWC"),
    ]


def main() -> int:
    """Measure and print the table; return 0 (this benchmark has no pass/fail goal)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from npukit import layouts, measure

    print(f"layout conversion vs copy on {measure.machine_summary()}")
    header = f"{'tensor':<32} {'shape':<16} {'conversion':<16} {'bytes':>10} {'copy GB/s':>10} {'conv GB/s':>10} {'conv/copy time':>15}"
    print(header)
    print("-" * len(header))
    for what, shape, src, dst in cases():
        r = layouts.measure_conversion(shape, src, dst, repeat=7, warmup=2, rounds=3)
        print(
            f"{what:<32} {'×'.join(map(str, shape)):<16} {src + '→' + dst:<16} {r.nbytes:>10,} "
            f"{r.copy_gbps:>10.1f} {r.convert_gbps:>10.1f} {r.slowdown:>14.1f}×"
        )
    print("GB/s count bytes read + bytes written; the copy is the memory-bound baseline.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
