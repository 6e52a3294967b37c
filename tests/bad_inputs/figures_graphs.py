"""Bad inputs for npukit.figures.graphs: one bad argument at a time, the others valid."""

from badinput import bad

from npukit import graphs, rewrites
from npukit.figures import graphs as fg

MODEL = graphs.example_chain(blocks=1, channels=2, size=4)
SPEC = graphs.MachineSpec(1e11, 1e10, "toy", "assumed", "assumed")
COUNTS = graphs.op_counts(MODEL)
PLAN = rewrites.plan_memory(MODEL)

CASES = [
    bad(fg.graph_figure, "model.onnx", exc=TypeError, names="model"),
    bad(fg.graph_figure, None, exc=TypeError, names="model"),
    bad(fg.graph_figure, MODEL, title=3, exc=TypeError, names="title"),
    bad(fg.roofline_figure, "fast", exc=TypeError, names="machine"),
    bad(fg.roofline_figure, (1e11, 1e10), exc=TypeError, names="machine"),
    bad(fg.roofline_figure, SPEC, "counts", exc=TypeError, names="counts"),
    bad(fg.roofline_figure, SPEC, COUNTS[0], exc=TypeError, names="counts"),
    bad(fg.roofline_figure, SPEC, [{"flops": 1}], exc=TypeError, names="counts[0]"),
    bad(fg.roofline_figure, SPEC, extra={"name": "x", "intensity": 1.0}, exc=TypeError, names="extra"),
    bad(fg.roofline_figure, SPEC, extra=["GEMM"], exc=TypeError, names="extra[0]"),
    bad(fg.roofline_figure, SPEC, extra=[{"intensity": 1.0}], names="extra[0]"),
    bad(fg.roofline_figure, SPEC, extra=[{"name": 3, "intensity": 1.0}], names="extra[0]"),
    bad(fg.roofline_figure, SPEC, extra=[{"name": "x"}], names="extra[0]"),
    bad(fg.roofline_figure, SPEC, extra=[{"name": "x", "intensity": 0}], names="extra[0]"),
    bad(fg.roofline_figure, SPEC, extra=[{"name": "x", "intensity": float("nan")}], names="extra[0]"),
    bad(fg.roofline_figure, SPEC, extra=[{"name": "x", "intensity": "1"}], exc=TypeError, names="extra[0]"),
    bad(fg.roofline_figure, SPEC, extra=[{"name": "x", "intensity": 1.0, "achieved": -1.0}], names="extra[0]"),
    bad(fg.roofline_figure, SPEC, extra=[{"name": "x", "intensity": 1.0, "achived": 1e9}], names="extra[0]"),
    bad(fg.roofline_figure, SPEC, unit="TOPS", names="unit"),
    bad(fg.roofline_figure, SPEC, title=["t"], exc=TypeError, names="title"),
    bad(fg.roofline_figure, SPEC, measured={"name": "k"}, exc=TypeError, names="measured"),
    bad(fg.roofline_figure, SPEC, measured=[{"name": "k", "intensity": 1.0}], names="measured[0]"),
    bad(fg.roofline_figure, SPEC, measured=[{"name": "k", "intensity": 1.0, "achieved": 0.0}], names="measured[0]"),
    bad(fg.roofline_figure, SPEC, measured=[{"name": "k", "intensity": 1.0, "achieved": "1e9"}], exc=TypeError,
        names="measured[0]"),
    bad(fg.roofline_figure, SPEC, cache_bandwidth=0.0, names="cache_bandwidth"),
    bad(fg.roofline_figure, SPEC, cache_bandwidth=-1e9, names="cache_bandwidth"),
    bad(fg.roofline_figure, SPEC, cache_bandwidth="fast", exc=TypeError, names="cache_bandwidth"),
    bad(fg.roofline_figure, SPEC, COUNTS, highlight="no.such.node", names="highlight"),
    bad(fg.roofline_figure, SPEC, COUNTS, highlight=3, exc=TypeError, names="highlight"),
    bad(fg.roofline_figure, SPEC, highlight="stem.conv", names="highlight"),
    bad(fg.bandwidth_figure, 2**20, [1e9], exc=TypeError, names="sizes"),
    bad(fg.bandwidth_figure, [], [], names="sizes"),
    bad(fg.bandwidth_figure, [2**20], [1e9, 2e9], names="rates"),
    bad(fg.bandwidth_figure, [2**20], "fast", exc=TypeError, names="rates"),
    bad(fg.bandwidth_figure, [0], [1e9], names="sizes[0]"),
    bad(fg.bandwidth_figure, [2.0**20], [1e9], exc=TypeError, names="sizes[0]"),
    bad(fg.bandwidth_figure, [2**20], [0.0], names="rates[0]"),
    bad(fg.bandwidth_figure, [2**20], [float("nan")], names="rates[0]"),
    bad(fg.bandwidth_figure, [2**20], [None], exc=TypeError, names="rates[0]"),
    bad(fg.bandwidth_figure, [2**20], [1e9], caches=[("L2", 2**21)], exc=TypeError, names="caches"),
    bad(fg.bandwidth_figure, [2**20], [1e9], caches={"L2": 0}, names="caches['L2']"),
    bad(fg.bandwidth_figure, [2**20], [1e9], marks={"x": 1.5}, exc=TypeError, names="marks['x']"),
    bad(fg.bandwidth_figure, [2**20], [1e9], title=2, exc=TypeError, names="title"),
    bad(fg.bandwidth_figure, [2**20], [1e9], spread=[(1e9, 2e9), (1e9, 2e9)], names="spread"),
    bad(fg.bandwidth_figure, [2**20], [1e9], spread=[(2e9, 3e9)], names="spread[0] must bracket"),
    bad(fg.bandwidth_figure, [2**20], [1e9], spread=[(0.0, 3e9)], names="spread[0][0]"),
    bad(fg.bandwidth_figure, [2**20], [1e9], spread=[1e9], exc=TypeError, names="spread[0]"),
    bad(fg.lifetime_figure, MODEL, exc=TypeError, names="plan"),
    bad(fg.lifetime_figure, None, exc=TypeError, names="plan"),
    bad(fg.lifetime_figure, PLAN, title=1, exc=TypeError, names="title"),
]
