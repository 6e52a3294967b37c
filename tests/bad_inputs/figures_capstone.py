"""Bad inputs for npukit.figures.capstone."""

from badinput import bad

from npukit.figures import capstone as fig

CASES = [
    bad(fig.course_map_figure, [1, 2], exc=TypeError, names="facts"),
    bad(fig.course_map_figure, {9: "x"}, names="facts keys"),
    bad(fig.course_map_figure, {"1": "x"}, exc=TypeError, names="facts key"),
    bad(fig.course_map_figure, {1: 3}, exc=TypeError, names="facts[1]"),
    bad(fig.course_map_figure, base=3, exc=TypeError, names="base"),
    bad(fig.course_map_figure, suffix=".htm", names="suffix"),
    bad(fig.explain_figure, "loop", exc=TypeError, names="loop"),
    bad(fig.warmup_figure, {}, exc=TypeError, names="times"),
    bad(fig.warmup_figure, {"a": "xyz"}, exc=TypeError, names="times['a']"),
    bad(fig.warmup_figure, {"a": [1e-3, -1.0]}, names="times['a']"),
    bad(fig.variants_figure, {}, exc=TypeError, names="loops"),
    bad(fig.variants_figure, {"a": 1}, exc=TypeError, names="loops['a']"),
    bad(fig.variants_figure, {"a": 1}, comparison={"a": [1.0]}, exc=TypeError, names="comparison"),
]
