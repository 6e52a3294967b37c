"""Run SCALE-Sim on small GEMM and conv layers and write its numbers to a JSON file.

This script is run by ``make scalesim-check`` with the Python of a virtual
environment of its own (``.venv-scalesim``), because SCALE-Sim 3.0.0 needs
``numpy<2.4`` and brings numba, pandas and matplotlib with it. It imports
nothing from npukit and needs only the standard library plus SCALE-Sim, which
it runs as a command (``python -m scalesim.scale``) once per array shape,
dataflow and topology. The JSON it writes (the SCALE-Sim version, every case
and SCALE-Sim's cycles, utilization, mapping efficiency and SRAM accesses) is
what ``tests/test_systolic.py`` compares ``npukit.systolic.estimate`` with.

Usage::

    .venv-scalesim/bin/python tools/scalesim_reference.py OUT.json

See chapter 5, "Systolic arrays" (chapters/05_systolic.md).
"""

from __future__ import annotations

import csv
import importlib.metadata
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Array shapes (rows, cols): square and rectangular, both ways round.
ARRAYS = [(4, 4), (8, 8), (4, 8), (8, 4), (3, 5), (16, 16)]
DATAFLOWS = ["os", "ws", "is"]

#: GEMM layers (name, M, N, K): ragged in every dimension, degenerate ones included.
GEMMS = [
    ("g_one", 1, 1, 1),
    ("g_small", 5, 3, 2),
    ("g_ragged", 10, 7, 9),
    ("g_wide", 6, 20, 4),
    ("g_tall", 33, 5, 17),
    ("g_deep", 7, 9, 40),
    ("g_fc", 1, 8, 128),
    ("g_pw", 16, 128, 64),
]

#: Conv layers (name, ifmap_h, ifmap_w, filt_h, filt_w, channels, filters, stride), as
#: SCALE-Sim's topologies write them (no padding). A name containing "DP" is a
#: depthwise layer, which SCALE-Sim runs as one single-channel layer per channel.
CONVS = [
    ("c_3x3", 9, 9, 3, 3, 4, 6, 1),
    ("c_rect", 11, 7, 3, 2, 3, 5, 2),
    ("c_stride3", 10, 10, 3, 3, 2, 8, 3),
    ("c_1x1", 6, 6, 1, 1, 16, 12, 1),
    ("c_7x7s2", 15, 15, 7, 7, 3, 8, 2),
    ("c_DPwise", 8, 8, 3, 3, 3, 1, 1),
]

CONFIG = """\
[general]
run_name = {name}

[run_presets]
InterfaceBandwidth = CALC
UseRamulatorTrace = False

[architecture_presets]
ArrayHeight = {rows}
ArrayWidth = {cols}
IfmapSramSzkB = 1024
FilterSramSzkB = 1024
OfmapSramSzkB = 1024
IfmapOffset = 0
FilterOffset = 10000000
OfmapOffset = 20000000
Dataflow = {dataflow}
ReadRequestBuffer = 32
WriteRequestBuffer = 32
Bandwidth = 10

[layout]
IfmapCustomLayout = False
IfmapSRAMBankBandwidth = 10
IfmapSRAMBankNum = 10
IfmapSRAMBankPort = 2
FilterCustomLayout = False
FilterSRAMBankBandwidth = 10
FilterSRAMBankNum = 10
FilterSRAMBankPort = 2

[sparsity]
SparsitySupport = false
"""


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return [{k.strip(): v.strip() for k, v in row.items() if k and k.strip()} for row in csv.DictReader(f)]


def _run(work: Path, name: str, rows: int, cols: int, dataflow: str, topology: str, gemm: bool) -> list[dict]:
    """Run SCALE-Sim once; return one dict per layer it reports."""
    run = work / name
    run.mkdir()
    (run / "scale.cfg").write_text(CONFIG.format(name=name, rows=rows, cols=cols, dataflow=dataflow))
    (run / "topology.csv").write_text(topology)
    (run / "layout.csv").write_text("Layer name,\n")  # read but unused without a custom layout
    cmd = [sys.executable, "-m", "scalesim.scale", "-c", "scale.cfg", "-t", "topology.csv", "-l", "layout.csv",
           "-p", "out", "-s", "N"] + (["-i", "gemm"] if gemm else [])
    done = subprocess.run(cmd, cwd=run, capture_output=True, text=True)
    report = run / "out" / name
    if done.returncode != 0 or not (report / "COMPUTE_REPORT.csv").exists():
        raise RuntimeError(f"SCALE-Sim failed for {name}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    compute = _read(report / "COMPUTE_REPORT.csv")
    access = _read(report / "DETAILED_ACCESS_REPORT.csv")
    out = []
    for c, a in zip(compute, access):
        out.append({
            "cycles": int(c["Total Cycles"]),
            "stall_cycles": int(c["Stall Cycles"]),
            "utilization": float(c["Overall Util %"]) / 100,
            "mapping_efficiency": float(c["Mapping Efficiency %"]) / 100,
            "ifmap_sram_reads": int(float(a["SRAM IFMAP Reads"])),
            "filter_sram_reads": int(float(a["SRAM Filter Reads"])),
            "ofmap_sram_writes": int(float(a["SRAM OFMAP Writes"])),
        })
    return out


def main(out_path: str) -> int:
    version = importlib.metadata.version("scalesim")
    cases = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for rows, cols in ARRAYS:
            for df in DATAFLOWS:
                tag = f"{rows}x{cols}_{df}"
                topo = "Layer,M,N,K,\n" + "".join(f"{n},{m},{nn},{k},\n" for n, m, nn, k in GEMMS)
                for (name, m, n, k), got in zip(GEMMS, _run(work, f"gemm_{tag}", rows, cols, df, topo, True)):
                    cases.append({"kind": "gemm", "name": name, "M": m, "N": n, "K": k,
                                  "rows": rows, "cols": cols, "dataflow": df, **got})
                topo = "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,\n"
                topo += "".join(",".join(map(str, c)) + ",\n" for c in CONVS)
                results = iter(_run(work, f"conv_{tag}", rows, cols, df, topo, False))
                for name, h, w, fh, fw, ch, nf, s in CONVS:
                    layers = [next(results) for _ in range(ch if "DP" in name else 1)]
                    cases.append({"kind": "conv", "name": name, "ifmap_h": h, "ifmap_w": w, "filt_h": fh,
                                  "filt_w": fw, "channels": ch, "filters": nf, "stride": s, "rows": rows,
                                  "cols": cols, "dataflow": df, "depthwise": "DP" in name,
                                  "layers": layers})
    doc = {
        "generator": "tools/scalesim_reference.py (make scalesim-check)",
        "scalesim_version": version,
        "command": "python -m scalesim.scale -c CFG -t TOPO.csv -l LAYOUT.csv -p OUT [-i gemm]",
        "config": "InterfaceBandwidth = CALC, 1024 kB SRAM per operand, no sparsity, no custom layout",
        "cases": cases,
    }
    Path(out_path).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"SCALE-Sim {version}: {len(cases)} cases in {time.perf_counter() - t0:.1f} s -> {out_path}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
