"""Bad inputs for npukit.roofline: one bad argument at a time, the others valid (refused before measuring)."""

from badinput import bad, cyclic

from npukit import graphs, roofline

MODEL = graphs.example_chain(blocks=1, channels=2, size=4)

CASES = [
    # copy_bytes
    bad(roofline.copy_bytes, 0, available=2**30, names="llc"),
    bad(roofline.copy_bytes, 2.5e7, available=2**30, exc=TypeError, names="llc"),
    bad(roofline.copy_bytes, True, available=2**30, exc=TypeError, names="llc"),
    bad(roofline.copy_bytes, "32M", available=2**30, exc=TypeError, names="llc"),
    bad(roofline.copy_bytes, 2**25, available=0, names="available"),
    bad(roofline.copy_bytes, 2**25, available=1.0e9, exc=TypeError, names="available"),
    # stream_bandwidth
    bad(roofline.stream_bandwidth, 1024, names="nbytes"),
    bad(roofline.stream_bandwidth, 2.0**20, exc=TypeError, names="nbytes"),
    bad(roofline.stream_bandwidth, None, exc=TypeError, names="nbytes"),
    bad(roofline.stream_bandwidth, 2**20, kernel="triad", names="kernel"),
    bad(roofline.stream_bandwidth, 2**20, threads=0, names="threads"),
    bad(roofline.stream_bandwidth, 2**20, threads=1.5, exc=TypeError, names="threads"),
    bad(roofline.stream_bandwidth, 2**20, repeat=0, names="repeat"),
    bad(roofline.stream_bandwidth, 2**20, warmup=-1, names="warmup"),
    bad(roofline.stream_bandwidth, 2**20, warmup=True, exc=TypeError, names="warmup"),
    # stream_comparison
    bad(roofline.stream_comparison, [(2**20, "copy"), (2**20, "relu")], exc=TypeError, names="cases"),
    bad(roofline.stream_comparison, {"copy": (2**20, "copy")}, names="cases"),
    bad(roofline.stream_comparison, {"a": (1024, "copy"), "b": (2**20, "copy")}, names="cases['a'] nbytes"),
    bad(roofline.stream_comparison, {"a": (2**20, "triad"), "b": (2**20, "copy")}, names="cases['a'] kernel"),
    bad(roofline.stream_comparison, {"a": 2**20, "b": (2**20, "copy")}, exc=TypeError, names="cases['a']"),
    bad(roofline.stream_comparison, {"a": (2**20, "copy"), "b": (2**20, "relu")}, rounds=2, names="rounds"),
    bad(roofline.stream_comparison, {"a": (2**20, "copy"), "b": (2**20, "relu")}, threads=0, names="threads"),
    bad(roofline.stream_comparison, {"a": (2**20, "copy"), "b": (2**20, "relu")}, warmup=-1, names="warmup"),
    bad(roofline.stream_comparison, {"a": (2**40, "copy"), "b": (2**20, "relu")}, names="cases"),
    # measure_machine
    bad(roofline.measure_machine, repeat=0, names="repeat"),
    bad(roofline.measure_machine, repeat=2.5, exc=TypeError, names="repeat"),
    bad(roofline.measure_machine, repeat="5", exc=TypeError, names="repeat"),
    bad(roofline.measure_machine, n=63, names="n"),
    bad(roofline.measure_machine, n=True, exc=TypeError, names="n"),
    bad(roofline.measure_machine, n=128.0, exc=TypeError, names="n"),
    bad(roofline.measure_machine, nbytes=1024, names="nbytes"),
    bad(roofline.measure_machine, nbytes=-1, names="nbytes"),
    bad(roofline.measure_machine, nbytes=2.0**21, exc=TypeError, names="nbytes"),
    bad(roofline.measure_machine, threads=0, names="threads"),
    bad(roofline.measure_machine, threads="all", exc=TypeError, names="threads"),
    # kernel_counts
    bad(roofline.kernel_counts, "model.onnx", {}, exc=TypeError, names="model"),
    bad(roofline.kernel_counts, MODEL, [("k", ["stem.conv"])], exc=TypeError, names="kernels"),
    bad(roofline.kernel_counts, MODEL, {"k": "stem.conv"}, exc=TypeError, names="kernels['k']"),
    bad(roofline.kernel_counts, MODEL, {"k": [3]}, exc=TypeError, names="kernels['k'][0]"),
    bad(roofline.kernel_counts, MODEL, {1: ["stem.conv"]}, exc=TypeError, names="kernels"),
    bad(roofline.kernel_counts, MODEL, {"a": ["stem.conv"], "b": ["stem.conv"]}, names="kernels"),
    bad(roofline.kernel_counts, MODEL, {"k": ["stem.conv"]}, itemsize=0, names="itemsize"),
    # a float or a bool is not the "measure it" default; names and sizes (issue 24)
    bad(roofline.copy_bytes, -1.0, available=2**30, exc=TypeError, names="llc"),
    bad(roofline.copy_bytes, 2**25, available=-1.0, exc=TypeError, names="available"),
    bad(roofline.kernel_counts, MODEL, {"k": ["stem.conv", "stem.rleu"]}, names="stem.relu"),
    bad(roofline.kernel_counts, MODEL, {"k": ["block1.cnov"]}, names="kernels['k'][0]"),
    bad(roofline.kernel_counts, cyclic(MODEL), {"k": ["stem.conv"]}, names="cycle"),
    bad(roofline.stream_bandwidth, 2**40, names="nbytes"),
    bad(roofline.stream_bandwidth, 2**20, threads=10**12, names="threads"),
    bad(roofline.stream_bandwidth, 2**20, repeat=10**12, names="repeat"),
    bad(roofline.stream_bandwidth, 2**20, warmup=10**12, names="warmup"),
    bad(roofline.measure_machine, threads=10**12, names="threads"),
    bad(roofline.measure_machine, repeat=10**12, names="repeat"),
    bad(roofline.measure_machine, n=10**6, names="n"),
]
