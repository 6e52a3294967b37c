"""Bad inputs for npukit.figures.npus."""

from badinput import bad

from npukit import npus
from npukit.figures import npus as fig

C = npus.compare(npus.table().fastest("resnet18", "Snapdragon 7 Gen 4 QRD", "w8a8"))

CASES = [
    bad(fig.measured_vs_bound_figure, [], names="comparisons"),
    bad(fig.measured_vs_bound_figure, [1], exc=TypeError, names="comparisons[0]"),
    bad(fig.measured_vs_bound_figure, [C], title=3, exc=TypeError, names="title"),
    bad(fig.fraction_figure, "abc", exc=TypeError, names="comparisons"),
    bad(fig.fraction_figure, [C], title=1, exc=TypeError, names="title"),
    bad(fig.int8_figure, {}, exc=TypeError, names="ratios"),
    bad(fig.int8_figure, {"r": {"m": {"d": -1.0}}}, names="ratios['r']['m']['d']"),
    bad(fig.int8_figure, {"r": {"m": {"d": 0.5}}}, band=(0.8, 0.6), names="band"),
    bad(fig.int8_figure, {"r": {"m": [0.5]}}, exc=TypeError, names="ratios['r']['m']"),
    bad(fig.int8_figure, {"r": [0.5]}, exc=TypeError, names="ratios['r']"),
    bad(fig.int8_figure, {"r": {"m": {"d": 0.5}}}, labels=["x"], exc=TypeError, names="labels"),
    bad(fig.int8_figure, {"r": {"m": {"d": 0.5}}}, labels={"r": 3}, exc=TypeError, names="labels['r']"),
    bad(fig.pipeline_figure, {}, exc=TypeError, names="seconds"),
    bad(fig.pipeline_figure, {0: {"d": {"UNet": 1.0}}}, names="steps"),
    bad(fig.pipeline_figure, {20: {"d": {"UNet": 1.0}}}, claim_s=-3.2, names="claim_s"),
    bad(fig.device_figure, [], names="comparisons"),
    bad(fig.device_figure, [None], exc=TypeError, names="comparisons[0]"),
]
