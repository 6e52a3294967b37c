"""Bad inputs for npukit.figures.deploy."""

from badinput import bad

from npukit.figures import deploy as fig

CASES = [
    bad(fig.executed_graph_figure, [], names="ops"),
    bad(fig.executed_graph_figure, [1], exc=TypeError, names="ops[0]"),
    bad(fig.partition_figure, {}, exc=TypeError, names="part"),
    bad(fig.profile_figure, [1], exc=TypeError, names="rows[0]"),
    bad(fig.timeline_figure, [], names="jobs"),
    bad(fig.timeline_figure, [(0, 0, 0.0, 0.1, 0.2)], exc=TypeError, names="jobs[0]"),
    bad(fig.throughput_figure, {}, exc=TypeError, names="results"),
    bad(fig.throughput_figure, {"a": [1, 2]}, exc=TypeError, names="results['a']"),
    bad(fig.latency_figure, {"a": 1.0}, exc=TypeError, names="benchmarks['a']"),
    bad(fig.throughput_figure, {"a": {1: 1.0}}, spread=[(0.1, 0.1)], exc=TypeError, names="spread"),
]
