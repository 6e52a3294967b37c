"""Single-line mutants of the chapter modules' core logic, for ``tools/mutate.py``.

Each entry: (file, exact text to replace (once in the file), replacement, tests to run).
The first eight survived issue 24's mutation test; a test now kills each.
"""

QARITH = ["tests/test_qarith.py"]
GRAPHS = ["tests/test_graphs.py", "tests/test_roofline.py"]
PTQ = ["tests/test_ptq.py"]
CONTRACT = ["tests/test_deploy.py"]
ACCEL = ["tests/test_accelerator.py"]
SYSTOLIC = ["tests/test_systolic.py"]
GEMM = ["tests/test_gemm.py"]
QUANT = ["tests/test_quant.py"]
REWRITES = ["tests/test_rewrites.py"]
ROOFLINE = ["tests/test_roofline.py"]
DEPLOY = ["tests/test_deploy.py"]
CAPSTONE = ["tests/test_capstone.py"]

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
    # ---- a further pass over chapters 3-8's core logic ----
    # chapter 3: counting, folding, memory planning, roofline
    ("npukit/graphs.py", "macs = y * (a_shape[0] if _attr(node, \"transA\", 0) else a_shape[1])",
     "macs = y * (a_shape[1] if _attr(node, \"transA\", 0) else a_shape[0])", GRAPHS),
    ("npukit/graphs.py", "return 0, y * math.prod(_attr(node, \"kernel_shape\", [1]))", "return 0, y", GRAPHS),
    ("npukit/graphs.py", "return 0, math.prod(shapes[node.input[0]][0])", "return 0, y", GRAPHS),
    ("npukit/graphs.py", "moves = kind not in (\"view\", \"const\")", "moves = kind not in (\"view\",)", GRAPHS),
    ("npukit/rewrites.py", "return gamma / np.sqrt(var + float(_attr(node, \"epsilon\", 1e-5))), beta, mean",
     "return gamma / np.sqrt(var), beta, mean", REWRITES),
    ("npukit/rewrites.py", "b_new = (s * (b - mean) + beta).astype(w.dtype)", "b_new = (s * b - mean + beta).astype(w.dtype)",
     REWRITES),
    ("npukit/rewrites.py", "return self.first <= other.last and other.first <= self.last",
     "return self.first < other.last and other.first < self.last", REWRITES),
    ("npukit/rewrites.py", "offset = max(offset, round_up(b.offset + b.size, alignment))",
     "offset = max(offset, b.offset + b.size)", REWRITES),
    ("npukit/roofline.py", "return 2 * n * 4 * sweeps / t", "return n * 4 * sweeps / t", ROOFLINE),
    ("npukit/roofline.py", "moved = p_bytes + a_in + a_out", "moved = a_in + a_out", ROOFLINE),
    # chapter 4: traffic, footprint, conv as GEMM
    ("npukit/gemm.py", "return c_out // groups, batch * h_out * w_out, (c_in // groups) * kh * kw",
     "return c_out // groups, batch * h_out * w_out, c_in * kh * kw", GEMM),
    ("npukit/gemm.py", "    return (bm * bk + bk * bn) * isz + bm * bn * csz\n",
     "    return (bm * bk + bk * bn + bm * bn) * isz\n", GEMM),
    ("npukit/gemm.py", "changes = sum(counts[d] > 1 for d in inside) > 0", "changes = len(inside) > 0", GEMM),
    ("npukit/gemm.py", "c_read=(r_c - 1) * c, c_write=r_c * c", "c_read=r_c * c, c_write=r_c * c", GEMM),
    ("npukit/gemm.py", "per = -(-(starts + b * s) // line) - starts // line", "per = -(-(b * s) // line) + 0 * starts", GEMM),
    # chapter 5: the array's cycle count, appetite, banks
    ("npukit/systolic.py", "per_fold = preload + (R - 1) + m.stream + (C - 1)", "per_fold = preload + m.stream + (C - 1)",
     SYSTOLIC),
    ("npukit/systolic.py", "cycles = folds * per_fold\n", "cycles = folds * per_fold - 1\n", SYSTOLIC),
    ("npukit/systolic.py", "preload = 0 if m.dataflow == \"os\" else R", "preload = R", SYSTOLIC),
    ("npukit/systolic.py", "reads = (M * K * cf, K * N, M * N * rf)", "reads = (M * K, K * N, M * N * rf)", SYSTOLIC),
    ("npukit/accelerator.py", "return ops * R * C * clock / 1e12", "return R * C * clock / 1e12", ACCEL),
    ("npukit/accelerator.py", "return (layer.inputs + layer.weights) * isz + layer.outputs * osz",
     "return (layer.inputs + layer.weights + layer.outputs) * isz", ACCEL),
    ("npukit/accelerator.py", "total = load + (est.folds - 1) * max(compute, load) + compute",
     "total = (est.folds - 1) * max(compute, load) + compute", ACCEL),
    ("npukit/accelerator.py", "extra += int(np.bincount(hit, minlength=banks).max()) - 1",
     "extra += int(np.bincount(hit, minlength=banks).max())", ACCEL),
    # chapter 6: the affine map, scales, rounding in integers
    ("npukit/quant.py", "return np.clip(r + z, lo, hi).astype(store)", "return np.clip(r, lo, hi).astype(store) + 0 * z",
     QUANT),
    ("npukit/quant.py", "r = np.rint(x / s).astype(np.float64)", "r = np.floor(x / s + 0.5).astype(np.float64)", QUANT),
    ("npukit/quant.py", "zp = np.full(amax.shape, 0 if qmin < 0 else half + 1, np.int64)",
     "zp = np.full(amax.shape, 0 if qmin < 0 else half, np.int64)", QUANT),
    ("npukit/quant.py", "scale = (hi - lo) / (qmax - qmin)", "scale = (hi - lo) / (qmax - qmin + 1)", QUANT),
    ("npukit/quant.py", "ulp = np.ldexp(1.0, np.maximum(exp - 1, emin) - mbits)", "ulp = np.ldexp(1.0, exp - 1 - mbits)", QUANT),
    ("npukit/qarith.py", "up = (rem > half) | ((rem == half) & (n > 0) & ((floor + zp) % 2 == 1))",
     "up = (rem >= half) & (n > 0)", QARITH),
    ("npukit/qarith.py", "nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))", "nudge = 1 << 30", QARITH),
    ("npukit/qarith.py", "threshold = (mask >> 1) + (x < 0)", "threshold = mask >> 1", QARITH),
    ("npukit/qarith.py", "out = _conv(x.astype(np.float64) - float(x_zero_point), wz, stride, pad, groups)",
     "out = _conv(x.astype(np.float64), wz, stride, pad, groups) - float(x_zero_point)", QARITH),
    ("npukit/ptq.py", "sb = (np.float32(x_scale) * sw).astype(np.float32)", "sb = sw.astype(np.float32)", PTQ + QARITH),
    # chapters 7-8: what ran, what crossed, what the loop checks
    ("npukit/deploy.py", "and any(x != self.output_layout for x in self.input_layouts))",
     "and any(x != self.output_precision for x in self.input_layouts))", DEPLOY),
    ("npukit/contract.py", "if t in made_in and made_in[t] != g and groups[made_in[t]][0] != groups[g][0]:",
     "if t in made_in and made_in[t] != g:", CONTRACT),
    ("npukit/capstone.py", "return bool(self.value <= self.limit if self.rule == \"<=\" else self.value >= self.limit)",
     "return bool(self.value < self.limit if self.rule == \"<=\" else self.value >= self.limit)", CAPSTONE),
]
