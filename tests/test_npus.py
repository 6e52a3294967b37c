"""Tests of npukit.npus: the shipped table is the wheel's data, and the bounds are the roofline's arithmetic.

The table test regenerates ``npukit/data/qai_hub_models.json`` from the pinned
``qai-hub-models`` wheel with ``tools/qai_hub_table.py`` and compares bytes;
it skips when the wheel is absent (fetch it with
``pip download --no-deps qai-hub-models==0.65.0 -d .cache/qai-hub-models``, or
point ``QAI_HUB_MODELS_WHEEL`` at it). It also reads a few rows straight from
the wheel's YAML with PyYAML, independently of the script. The other tests
compare npukit's bounds with the formula written out here.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from npukit import npus

ROOT = Path(__file__).parent.parent
DATA = ROOT / "npukit" / "data"
WHEEL = Path(os.environ.get("QAI_HUB_MODELS_WHEEL",
                            ROOT / ".cache" / "qai-hub-models" / "qai_hub_models-0.65.0-py3-none-any.whl"))
needs_wheel = pytest.mark.skipif(not WHEEL.is_file(), reason=f"the qai-hub-models 0.65.0 wheel is not at {WHEEL}")


@needs_wheel
def test_the_shipped_table_is_regenerated_byte_for_byte(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "qai_hub_table.py"), "--wheel", str(WHEEL),
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for name in ("qai_hub_models.json", "qai_hub_models_LICENSE.txt"):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), f"{name} differs from the wheel's data"


@needs_wheel
def test_rows_agree_with_the_wheels_yaml():
    yaml = pytest.importorskip("yaml")
    with zipfile.ZipFile(WHEEL) as z:
        perf = yaml.safe_load(z.read("qai_hub_models/models/resnet50/perf.yaml"))
        sd = yaml.safe_load(z.read("qai_hub_models/models/stable_diffusion_v1_5/perf.yaml"))
    run = perf["precisions"]["w8a8"]["components"]["ResNet50"]["performance_metrics"]["Snapdragon X Elite CRD"]["onnx"]
    got = npus.table().select(name="resnet50", device="Snapdragon X Elite CRD", precision="w8a8", runtime="onnx")
    assert [m.ms for m in got] == [run["inference_time_milliseconds"]]
    assert got[0].npu_layers == run["layer_counts"]["npu"] and got[0].job_id == run["job_id"]
    unet = sd["precisions"]["w8a16"]["components"]["unet"]["performance_metrics"]["Snapdragon X Elite CRD"]
    shipped = {m.runtime: m.ms for m in npus.table().select(name="stable_diffusion_v1_5/unet",
                                                             device="Snapdragon X Elite CRD")}
    assert shipped == {rt: r["inference_time_milliseconds"] for rt, r in unet.items()}


def test_provenance_and_licence_are_shipped():
    t = npus.table()
    p = t.provenance
    assert (p["package"], p["version"], p["licence"]) == ("qai-hub-models", "0.65.0", "BSD-3-Clause")
    assert len(p["wheel_sha256"]) == 64 and p["generated_by"] == "tools/qai_hub_table.py"
    licence = (DATA / p["licence_file"]).read_text(encoding="utf-8")
    assert "Qualcomm Technologies" in licence and "Redistributions of source code must retain" in licence
    raw = json.loads((DATA / "qai_hub_models.json").read_text(encoding="utf-8"))
    assert len(raw["rows"]) == len(t.measurements) > 500


def test_table_invariants():
    t = npus.table()
    for m in t.measurements:
        assert m.ms > 0 and m.npu_layers + m.gpu_layers + m.cpu_layers == m.total_layers > 0
        assert m.device in t.devices and m.memory_mb[0] <= m.memory_mb[1]
    names = {m.name for m in t.measurements}
    from npukit import archs
    assert names == set(archs.MODELS)            # every measured model has a graph, and only those are shipped
    assert any(not m.on_npu for m in t.measurements)      # runs partly off the NPU are kept, with their layer counts


def test_copies_are_the_reference_devices_rows():
    t = npus.table()
    for device in t.devices:
        ref = t.copy_of(device)
        if ref is None:
            continue
        mine = {(m.name, m.precision, m.runtime): m.ms for m in t.select(device=device)}
        theirs = {(m.name, m.precision, m.runtime): m.ms for m in t.select(device=ref)}
        common = set(mine) & set(theirs)
        assert common and all(mine[k] == theirs[k] for k in common), device
    assert not any(t.copy_of(m.device) for m in t.select(distinct=True))


def test_select_filters_and_errors():
    t = npus.table()
    runs = t.select(name="mobilenet_v2", precision="w8a8", npu_only=True)
    assert runs and all(m.model == "mobilenet_v2" and m.precision == "w8a8" and m.on_npu for m in runs)
    best = t.fastest("mobilenet_v2", "Samsung Galaxy S25", "w8a8")
    assert best.ms == min(m.ms for m in runs if m.device == "Samsung Galaxy S25")
    assert t.fastest("efficientnet_b0", "Snapdragon X Elite CRD", "w8a8") is None
    with pytest.raises(ValueError, match="device must be one of"):
        t.select(device="Pixel 9")
    with pytest.raises(TypeError, match="npu_only"):
        t.select(npu_only=1)


def _bound_by_hand(name, device, precision):
    w, d = npus.work(name), npus.DEVICES[device]
    wb, ab = {"float": (2, 2), "w8a8": (1, 1), "w8a16": (1, 2)}[precision]
    terms = {}
    if d.peak_tops:
        terms["compute"] = 2 * w.macs / (d.peak_tops * 1e12)
    if d.bandwidth_gbs:
        terms["memory"] = (wb * w.weights + ab * w.io) / (d.bandwidth_gbs * 1e9)
    return terms


@pytest.mark.parametrize("device", list(npus.DEVICES))
@pytest.mark.parametrize("name,precision", [("resnet50", "w8a8"), ("mobilenet_v2", "float"),
                                            ("stable_diffusion_v1_5/unet", "w8a16")])
def test_bound_is_the_roofline(name, precision, device):
    b = npus.bound(name, device, precision)
    terms = _bound_by_hand(name, device, precision)
    assert b.seconds == pytest.approx(max(terms.values()), rel=1e-12)
    assert b.limit == max(terms, key=terms.get)
    assert (b.compute_s is None) == ("compute" not in terms) and (b.memory_s is None) == ("memory" not in terms)
    if b.memory_s is not None:
        assert b.spill_s >= b.memory_s               # per-node activations only add bytes


def test_work_counts_what_a_run_reads():
    te = npus.work("stable_diffusion_v1_5/text_encoder")
    assert te.parameters == 123_060_480
    embedding = 49408 * 768                     # the token lookup reads 77 of its 49,408 rows
    assert te.parameters - embedding < te.weights < te.parameters - embedding + 77 * 768 + 100_000
    r = npus.work("resnet18")
    assert r.io == 3 * 224 * 224 + 1000 and r.weights >= r.parameters


def test_compare_and_delivered_rate():
    m = npus.table().fastest("resnet101", "Snapdragon X Elite CRD", "w8a8")
    c = npus.compare(m)
    assert c.delivered_tops == pytest.approx(2 * npus.work("resnet101").macs / (m.ms / 1e3) / 1e12)
    assert c.fraction == pytest.approx(c.delivered_tops / 45.0)
    assert c.ratio == pytest.approx(m.ms / 1e3 / c.bound.seconds) and c.ratio > 1
    for m in npus.table().select(npu_only=True):
        if m.device in npus.DEVICES:
            assert npus.compare(m).ratio > 1, m      # no published run beats its roofline bound


def test_pipeline_seconds_by_hand():
    t = npus.table()
    d = "Snapdragon X Elite CRD"
    part = {p: min(m.ms for m in t.select(name=f"stable_diffusion_v1_5/{p}", device=d)) / 1e3
            for p in ("text_encoder", "unet", "vae")}
    # the empty prompt's encoding is cached: one text encoding per image, guided or not
    assert npus.pipeline_seconds(d, 20) == pytest.approx(part["text_encoder"] + 40 * part["unet"] + part["vae"])
    assert npus.pipeline_seconds(d, 4, guidance=False) == pytest.approx(part["text_encoder"] + 4 * part["unet"]
                                                                        + part["vae"])
    with pytest.raises(ValueError, match="device must be one of .*Snapdragon X Elite CRD"):
        npus.pipeline_seconds("SA8295P ADP", 20)
    with pytest.raises(ValueError, match="device must be one of"):
        npus.pipeline_seconds("nonexistent", 20)
    with pytest.raises(ValueError, match="steps"):
        npus.pipeline_seconds(d, 0)


def test_devices_cite_their_sources():
    bib = (ROOT / "references.bib").read_text(encoding="utf-8")
    t = npus.table()
    for d in npus.DEVICES.values():
        assert d.name in t.devices and t.copy_of(d.name) is None
        assert d.peak_tops or d.bandwidth_gbs
        for key in d.sources:
            assert "{" + key + "," in bib, f"{key} is not in references.bib"


def test_numbers_row():
    from npukit import tally

    rows = npus.numbers(tally.Context())
    assert [r.chapter for r in rows] == [9] and "ns" in rows[0].value


def test_fused_nodes_can_be_fused():
    """Work.activations leaves out BatchNormalization, Relu and Clip: each reads the sole output of its producer."""
    from npukit import archs

    for name in archs.MODELS:
        graph = archs.build(name).graph
        producers = {o: n for n in graph.node for o in n.output}
        readers = {}
        for n in graph.node:
            for i in n.input:
                readers[i] = readers.get(i, 0) + 1
        for n in graph.node:
            if n.op_type in npus.FUSED:
                x = n.input[0]
                assert x in producers and readers[x] == 1, f"{name}: {n.name} cannot be fused into its producer"
                if n.op_type == "BatchNormalization":
                    assert producers[x].op_type == "Conv", f"{name}: {n.name} follows a {producers[x].op_type}"


def test_spill_estimate_counts_the_fused_graph():
    from npukit import graphs, archs

    counts = graphs.op_counts(archs.build("mobilenet_v2"), itemsize=1)
    kept = [c for c in counts if c.op_type not in ("BatchNormalization", "Relu", "Clip")]
    assert npus.work("mobilenet_v2").activations == sum(c.act_bytes_in + c.act_bytes_out for c in kept)
    assert len(kept) < len(counts)


def test_records_refuse_contradictions():
    c = npus.compare(npus.table().fastest("resnet50", "Snapdragon X Elite CRD", "w8a8"))
    import dataclasses

    with pytest.raises(ValueError, match="ratio"):
        dataclasses.replace(c, ratio=c.ratio * 2)
    with pytest.raises(ValueError, match="seconds and limit"):
        dataclasses.replace(c.bound, limit="compute")
    with pytest.raises(ValueError, match="total_layers"):
        dataclasses.replace(c.measurement, npu_layers=c.measurement.npu_layers + 1)
    with pytest.raises(ValueError, match="one model"):
        dataclasses.replace(c, work=npus.work("resnet18"))


def test_copied_devices_are_compared_through_their_reference():
    t = npus.table()
    copy = t.select(device="Dragonwing Q-8750", name="resnet50", precision="w8a8")[0]
    assert t.copy_of(copy.device) == "Samsung Galaxy S25"
    with pytest.raises(ValueError, match="device must be a Device or one of"):
        npus.compare(copy)


def test_the_banks_small_layers_question_holds():
    """bank ch9-small-layers: on each bounded device MobileNet-v2's fastest INT8 run is several times its bound,
    more than twice as many times as ResNet-50's."""
    t = npus.table()
    for d in npus.DEVICES:
        mb, rn = (npus.compare(t.fastest(n, d, "w8a8")).ratio for n in ("mobilenet_v2", "resnet50"))
        assert mb > 3 and mb > 2 * rn, (d, mb, rn)


def test_a_run_published_only_on_copies_is_kept_once_under_its_reference():
    """The second review: 9 job ids appear only on the SA8255P and SA8650P ADP, copies of the SA8775P ADP."""
    t = npus.table()
    runs = [m for m in t.select(distinct=True) if m.job_id == "jglyq7me5"]   # MobileNet-v2, w8a8, QAIRT
    assert [(m.device, m.name, m.precision, m.runtime) for m in runs] == [
        ("SA8775P ADP", "mobilenet_v2", "w8a8", "qnn_dlc")]
    assert not t.select(device="SA8775P ADP", name="mobilenet_v2", precision="w8a8", runtime="qnn_dlc")
    assert not any(t.copy_of(m.device) for m in t.select(distinct=True))
    copied = [m for m in t.measurements if t.copy_of(m.device)]
    assert len({m.job_id for m in copied} - {m.job_id for m in t.select(distinct=True)}) == 0
    assert math.isclose(npus.pipeline_seconds("SA8775P ADP", 20), npus.pipeline_seconds("SA8255P ADP", 20))
