"""Bad inputs for npukit.npus."""

import dataclasses

from badinput import bad

from npukit import npus

T = npus.table()
M = T.fastest("resnet50", "Snapdragon X Elite CRD", "w8a8")
C = npus.compare(M)
W, B = C.work, C.bound


def _fields(obj, **kw):
    return {**{f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}, **kw}


CASES = [
    bad(npus.Table, [], exc=TypeError, names="data"),
    bad(npus.Table, {"rows": []}, names="data"),
    bad(T.select, name=3, exc=TypeError, names="name"),
    bad(T.select, name="resnet34", names="name"),
    bad(T.select, device="Pixel 9", names="device"),
    bad(T.select, precision="int4", names="precision"),
    bad(T.select, runtime="coreml", names="runtime"),
    bad(T.select, npu_only="yes", exc=TypeError, names="npu_only"),
    bad(T.select, distinct=1, exc=TypeError, names="distinct"),
    bad(T.fastest, "resnet50", "Pixel 9", "w8a8", names="device"),
    bad(T.copy_of, "Pixel 9", names="device"),
    bad(T.copy_of, None, exc=TypeError, names="device"),
    bad(npus.table, 1, exc=TypeError, names="positional"),
    bad(npus.Device, "d", "chip", -1.0, "INT8", 10.0, (), names="peak_tops"),
    bad(npus.Device, "d", "chip", 10.0, None, 10.0, (), names="tops_precision"),
    bad(npus.Device, "d", "chip", None, None, 0.0, (), names="bandwidth_gbs"),
    bad(npus.Device, "d", "chip", None, None, 1.0, "a", exc=TypeError, names="sources"),
    bad(npus.Device, 3, "chip", None, None, 1.0, (), exc=TypeError, names="name"),
    bad(npus.Device("d", "chip", 10.0, "INT8", None, ("x",)).machine, names="bandwidth"),
    bad(npus.Measurement, **_fields(M, ms=0.0), names="ms"),
    bad(npus.Measurement, **_fields(M, ms=float("nan")), names="ms"),
    bad(npus.Measurement, **_fields(M, model=3), exc=TypeError, names="model"),
    bad(npus.Measurement, **_fields(M, npu_layers=-1), names="npu_layers"),
    bad(npus.Measurement, **_fields(M, npu_layers=True), exc=TypeError, names="npu_layers"),
    bad(npus.Measurement, **_fields(M, cpu_layers=5), names="total_layers"),
    bad(npus.Measurement, **_fields(M, memory_mb=(5, 1)), names="memory_mb"),
    bad(npus.Measurement, **_fields(M, memory_mb="0-5"), exc=TypeError, names="memory_mb"),
    bad(npus.Measurement, **_fields(M, qairt=2.5), exc=TypeError, names="qairt"),
    bad(npus.Work, **_fields(W, macs=-1), names="macs"),
    bad(npus.Work, **_fields(W, macs=1.5), exc=TypeError, names="macs"),
    bad(npus.Work, **_fields(W, io=0), names="io"),
    bad(npus.Work, **_fields(W, name=None), exc=TypeError, names="name"),
    bad(npus.Bound, **_fields(B, compute_s=None, memory_s=None, spill_s=None), names="compute_s and memory_s"),
    bad(npus.Bound, **_fields(B, limit="disk"), names="limit"),
    bad(npus.Bound, **_fields(B, limit="compute"), names="seconds and limit"),
    bad(npus.Bound, **_fields(B, seconds=-1.0), names="seconds"),
    bad(npus.Bound, **_fields(B, spill_s=B.memory_s / 2), names="spill_s"),
    bad(npus.Bound, **_fields(B, memory_s=float("inf")), names="memory_s"),
    bad(npus.Comparison, **_fields(C, ratio=C.ratio * 2), names="ratio"),
    bad(npus.Comparison, **_fields(C, delivered_tops=0.0), names="delivered_tops"),
    bad(npus.Comparison, **_fields(C, fraction=-0.1), names="fraction"),
    bad(npus.Comparison, **_fields(C, work=npus.work("resnet18")), names="one model"),
    bad(npus.Comparison, **_fields(C, bound="fast"), exc=TypeError, names="bound"),
    bad(npus.Comparison, **_fields(C, measurement=None), exc=TypeError, names="measurement"),
    bad(npus.element_bytes, "int4", names="precision"),
    bad(npus.element_bytes, 8, exc=TypeError, names="precision"),
    bad(npus.work, "resnet34", names="name"),
    bad(npus.work, 50, exc=TypeError, names="name"),
    bad(npus.bound, "resnet50", "Pixel 9", "w8a8", names="device"),
    bad(npus.bound, "resnet50", "Snapdragon X Elite CRD", "fp8", names="precision"),
    bad(npus.bound, "resnet5", "Snapdragon X Elite CRD", "w8a8", names="name"),
    bad(npus.compare, "resnet50", exc=TypeError, names="m"),
    bad(npus.compare, T.select(device="SA8295P ADP")[0], names="device"),
    bad(npus.pipeline_seconds, "Snapdragon X Elite CRD", 0, names="steps"),
    bad(npus.pipeline_seconds, "Snapdragon X Elite CRD", 2.5, exc=TypeError, names="steps"),
    bad(npus.pipeline_seconds, "Snapdragon X Elite CRD", 20, guidance=1, exc=TypeError, names="guidance"),
    bad(npus.pipeline_seconds, "SA8295P ADP", 20, names="device"),
    bad(npus.pipeline_seconds, "Snapdragon X Elite CRD", 20, runtime="tflite", names="runtime"),
    bad(npus.numbers, None, exc=TypeError, names="ctx"),
]
