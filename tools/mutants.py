"""Single-line mutants of the chapter modules' core logic, for ``tools/mutate.py``.

Each entry: (file, exact text to replace (once in the file), replacement, tests to run).
The first eight survived issue 24's mutation test; a test now kills each.
"""

QARITH = ["tests/test_qarith.py"]
GRAPHS = ["tests/test_graphs.py", "tests/test_roofline.py"]
PTQ = ["tests/test_ptq.py"]
CONTRACT = ["tests/test_deploy.py"]
ACCEL = ["tests/test_accelerator.py"]

MUTANTS = [
    # ---- the eight survivors of issue 24 ----
    ("npukit/qarith.py", "carry = m0 == 2**31", "carry = m0 > 2**31", QARITH),
    ("npukit/qarith.py", "(b.astype(np.float64) - zb.astype(np.float64))", "(b.astype(np.float64))", QARITH),
    ("npukit/graphs.py", '"intensity") < self.ridge else', '"intensity") <= self.ridge else', GRAPHS),
    ("npukit/ptq.py", "min(self.lo, x.min()), max(self.hi, x.max())", "x.min(), max(self.hi, x.max())", PTQ),
    ("npukit/ptq.py", "lo = edges[:-1][np.searchsorted(", "lo = edges[1:][np.searchsorted(", PTQ),
    ("npukit/ptq.py", "while need >= self.radius:", "while need > self.radius:", PTQ),
    ("npukit/contract.py", "len(tensors_in_group | mine) > profile.max_tensors", "len(tensors_in_group | mine) >= profile.max_tensors",
     CONTRACT),
    ("npukit/accelerator.py", "elements = est.stream * (est.rows + est.cols)", "elements = est.stream * est.rows", ACCEL),
]
