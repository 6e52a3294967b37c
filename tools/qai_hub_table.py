"""Extract chapter 9's table of published NPU measurements from the qai-hub-models wheel.

Qualcomm AI Hub Models (``qai-hub-models`` on PyPI, BSD-3-Clause) ships, for
every model, a ``perf.yaml`` of measured inference times on real devices and a
``numerics.yaml`` of on-device accuracy. The course reads a small extract of
them, ``npukit/data/qai_hub_models.json``, and keeps the package's licence
beside it (``npukit/data/qai_hub_models_LICENSE.txt``), as the BSD-3 licence
asks of a redistribution. This script writes both from the wheel, and
``--check`` says whether the committed files are exactly what it would write.

The package itself is never installed (it pins old torch, onnx and numpy and
needs an account to run); its wheel is a zip file read here with ``zipfile``
and PyYAML. Fetch it once with::

    pip download --no-deps qai-hub-models==0.65.0 -d .cache/qai-hub-models

Usage::

    python tools/qai_hub_table.py [--wheel WHEEL] [--out DIR] [--check]

The output is deterministic: the same wheel gives the same bytes, so
``tests/test_npus.py`` regenerates the table and compares it byte for byte
(it skips when the wheel is absent). See chapter 9, "Real NPUs, measured"
(chapters/09_npus.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import zipfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
VERSION = "0.65.0"
WHEEL_NAME = f"qai_hub_models-{VERSION}-py3-none-any.whl"
DEFAULT_WHEEL = ROOT / ".cache" / "qai-hub-models" / WHEEL_NAME   # git-ignored; `make clean` keeps it
DEFAULT_OUT = ROOT / "npukit" / "data"
TABLE = "qai_hub_models.json"
LICENCE = "qai_hub_models_LICENSE.txt"

#: The models chapter 9 counts with its own graphs (npukit.archs), by AI Hub's folder name.
MODELS = ("mobilenet_v2", "squeezenet1_1", "efficientnet_b0", "resnet18", "resnet50", "resnet101",
          "convnext_tiny", "stable_diffusion_v1_5")

#: Columns of a measurement row, in order.
COLUMNS = ("model", "component", "precision", "device", "runtime", "inference_ms", "memory_min_mb",
           "memory_max_mb", "npu_layers", "gpu_layers", "cpu_layers", "total_layers", "primary_unit",
           "qairt", "onnxruntime", "job_id")
#: Columns of an accuracy row.
ACCURACY_COLUMNS = ("model", "device", "precision", "runtime", "top1")
#: Device fields copied from devices_and_chipsets.yaml (device entry, then its chipset entry).
DEVICE_FIELDS = ("chipset", "form_factor", "npu_count", "reference_chipset")
CHIPSET_FIELDS = ("marketing_name", "htp_version", "soc_model", "supports_fp16", "world")


def _yaml(z: zipfile.ZipFile, name: str) -> dict:
    return yaml.safe_load(z.read(name).decode("utf-8"))


def _rows(model: str, perf: dict) -> list[list]:
    rows = []
    for precision, pv in perf["precisions"].items():
        for component, cv in pv["components"].items():
            for device, dv in cv.get("performance_metrics", {}).items():
                for runtime, r in dv.items():
                    if r.get("job_status") != "Passed" or "inference_time_milliseconds" not in r:
                        continue
                    lc, mem, tv = r["layer_counts"], r["estimated_peak_memory_range_mb"], r.get("tool_versions", {})
                    rows.append([model, component, precision, device, runtime, float(r["inference_time_milliseconds"]),
                                 int(mem["min"]), int(mem["max"]), int(lc.get("npu", 0)), int(lc.get("gpu", 0)),
                                 int(lc.get("cpu", 0)), int(lc["total"]), r["primary_compute_unit"],
                                 tv.get("qairt"), tv.get("onnx_runtime"), r["job_id"]])
    return rows


def _accuracy(model: str, numerics: dict) -> list[list]:
    rows = []
    for metric in numerics.get("metrics", []):
        if metric.get("metric_name") != "Top-1 Accuracy":
            continue
        for device, by_precision in metric.get("device_metric", {}).items():
            for precision, by_runtime in by_precision.items():
                for runtime, v in by_runtime.items():
                    rows.append([model, device, precision, runtime, float(v["partial_metric"])])
    return rows


def extract(wheel: Path) -> tuple[dict, str]:
    """The table (a dict) and the licence text, read from ``wheel``."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    base = "qai_hub_models/models"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        licence = z.read(f"qai_hub_models-{VERSION}.dist-info/licenses/LICENSE").decode("utf-8")
        catalogue = _yaml(z, "qai_hub_models/devices_and_chipsets.yaml")
        models, rows, accuracy, files = {}, [], [], []
        for m in MODELS:
            manifest = _yaml(z, f"{base}/{m}/manifest.yaml")
            rows += _rows(m, _yaml(z, f"{base}/{m}/perf.yaml"))
            files += [f"{base}/{m}/manifest.yaml", f"{base}/{m}/perf.yaml"]
            numerics = None
            if f"{base}/{m}/numerics.yaml" in names:
                files.append(f"{base}/{m}/numerics.yaml")
                numerics = _yaml(z, f"{base}/{m}/numerics.yaml")
                accuracy += _accuracy(m, numerics)
            top1 = next((x for x in (numerics or {}).get("metrics", []) if x.get("metric_name") == "Top-1 Accuracy"),
                        {})
            models[m] = {"name": manifest["name"], "technical_details": manifest.get("technical_details", {}),
                         "research_paper": manifest.get("research_paper"), "source_repo": manifest.get("source_repo"),
                         "licence_of_the_model": manifest.get("license_type"),
                         "top1_reference": top1.get("benchmark_value"),
                         "top1_torch_on_samples": top1.get("partial_torch_metric"),
                         "top1_samples": top1.get("num_partial_samples")}
    rows.sort(key=lambda r: tuple("" if v is None else str(v) for v in r[:5]))
    accuracy.sort(key=lambda r: tuple(str(v) for v in r[:4]))
    devices = {}
    for d in sorted({r[3] for r in rows} | {a[1] for a in accuracy}):
        entry = catalogue["devices"][d]
        chip = catalogue["chipsets"][entry["chipset"]]
        devices[d] = {**{k: entry.get(k) for k in DEVICE_FIELDS}, **{k: chip.get(k) for k in CHIPSET_FIELDS}}
    table = {
        "provenance": {
            "package": "qai-hub-models", "version": VERSION, "wheel": WHEEL_NAME, "wheel_sha256": digest,
            "fetched_with": f"pip download --no-deps qai-hub-models=={VERSION}",
            "publisher": "Qualcomm Technologies, Inc.", "licence": "BSD-3-Clause", "licence_file": LICENCE,
            "files": ["qai_hub_models/devices_and_chipsets.yaml"] + files,
            "generated_by": "tools/qai_hub_table.py",
            "notes": "inference_ms, memory, layer counts, primary unit, tool versions and job ids are copied "
                     "unchanged from perf.yaml (job_status Passed only); top1 from numerics.yaml (Top-1 Accuracy, "
                     "partial_metric); devices from devices_and_chipsets.yaml.",
        },
        "models": models,
        "devices": devices,
        "columns": list(COLUMNS),
        "rows": rows,
        "accuracy_columns": list(ACCURACY_COLUMNS),
        "accuracy": accuracy,
    }
    return table, licence


def dumps(table: dict) -> str:
    """JSON text with one measurement per line, so that a diff of two versions reads row by row."""
    head = {k: v for k, v in table.items() if k not in ("rows", "accuracy")}
    text = json.dumps(head, indent=1, sort_keys=True, ensure_ascii=False)[:-2]
    for key in ("rows", "accuracy"):
        lines = ",\n".join(json.dumps(r, ensure_ascii=False) for r in table[key])
        text += f',\n "{key}": [\n{lines}\n ]'
    return text + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--wheel", type=Path, default=DEFAULT_WHEEL, help=f"the wheel (default {DEFAULT_WHEEL})")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"folder to write to (default {DEFAULT_OUT})")
    p.add_argument("--check", action="store_true", help="compare with the files in --out instead of writing")
    args = p.parse_args(argv)
    if not args.wheel.is_file():
        print(f"no wheel at {args.wheel}; fetch it with: pip download --no-deps qai-hub-models=={VERSION} "
              f"-d {args.wheel.parent}", file=sys.stderr)
        return 2
    table, licence = extract(args.wheel)
    outputs = {TABLE: dumps(table), LICENCE: licence}
    if args.check:
        stale = [n for n, text in outputs.items()
                 if not (args.out / n).is_file() or (args.out / n).read_bytes() != text.encode("utf-8")]
        print("up to date" if not stale else f"differs from the wheel: {', '.join(stale)}")
        return 1 if stale else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for n, text in outputs.items():
        (args.out / n).write_bytes(text.encode("utf-8"))
    print(f"wrote {len(table['rows'])} measurements, {len(table['accuracy'])} accuracies and "
          f"{len(table['devices'])} devices to {args.out / TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
