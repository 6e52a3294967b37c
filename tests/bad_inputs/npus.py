"""Bad inputs for npukit.npus."""

from badinput import bad

from npukit import npus

T = npus.table()

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
    bad(npus.DEVICES["Snapdragon 7 Gen 4 QRD"].machine, names="bandwidth"),
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
