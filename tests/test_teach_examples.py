"""The passing examples of the checkers (issue 20: help() shows only failing ones, so it gives no answer away).

Each was once the Examples section of a checker's docstring: a right answer and the one line its check
prints. They run here as doctests, in the checker module's namespace, so they still prove that a right
answer passes; the docstrings now show a typical mistake failing.

The timing checks' examples (:data:`TIMED`) time for real, as the checks do (each under two seconds), so
they are marked ``load``: ``make load-test`` runs them, not the unit stage, which times nothing. A "too
noisy, re-run" (:class:`npukit.teach.retime.TooNoisy`) is what a learner meets on a busy machine: the
example is run again, as the learner would, at most twice (the load test's rule,
tests/test_timing_checks.py); a right answer refused, or still too noisy after that, fails. Lab 8's variant check,
which compiles and times four networks, has no entry here: its reference answer passes on fake rounds in
tests/test_capstone.py and on real ones, under load, in tests/test_timing_checks.py.
"""

from __future__ import annotations

import doctest
import importlib

import pytest
from test_timing_checks import RERUNS

from npukit.teach.retime import TooNoisy

PASSING = {
    'capstone.check_export_folded': ">>> from npukit import rewrites\n>>> check_export_folded(lambda net: rewrites.fold_batchnorm(net.to_onnx()))\n✓ export and fold: 4 fresh CameraNets, folded, with fixed shapes, and their logits equal the NumPy network's.\n",
    'capstone.check_qdq': '>>> from npukit import ptq\n>>> def quantize(folded, calibration):\n...     dims = [d.dim_value for d in folded.graph.input[0].type.tensor_type.shape.dim]\n...     if calibration.dtype != np.float32 or calibration.shape[1:] != tuple(dims[1:]):\n...         raise ValueError("calibration must be float32 images of the model\'s input shape")\n...     if calibration.min() < 0 or calibration.max() > 1:\n...         raise ValueError("calibration pixels must be in [0, 1]")\n...     return ptq.to_qdq(folded, calibration)\n>>> check_qdq(quantize)\n✓ quantize: 3 fresh variants: valid scales and zero points, input range from the calibration images, weights bit-exact with onnx.reference, agreement ≥ 85%, bad calibration refused.\n',
    'capstone.check_roofline_bounds': '>>> def bounds(counts, machine):\n...     out = {}\n...     for c in counts:\n...         if c.op_type in ("Conv", "Gemm"):\n...             b = c.param_bytes + c.act_bytes_in + c.act_bytes_out\n...             kind = "memory" if c.flops / b < machine.peak_flops / machine.bandwidth else "compute"\n...             out[c.name] = (max(c.flops / machine.peak_flops, b / machine.bandwidth), kind)\n...     return out\n>>> check_roofline_bounds(bounds)\n✓ roofline bounds: 20 fresh graphs agree with the reference.\n',
    'capstone.check_warm_latency': '>>> import statistics\n>>> def warm(run, warmup, runs):\n...     t0 = time.perf_counter(); run(); first = time.perf_counter() - t0\n...     for _ in range(warmup):\n...         run()\n...     ts = []\n...     for _ in range(runs):\n...         t0 = time.perf_counter(); run(); ts.append(time.perf_counter() - t0)\n...     return first, statistics.median(ts)\n>>> check_warm_latency(warm)\n✓ warm latency: 4 fresh cold starts; first call timed alone, warm-up untimed, median of the steady state.\n',
    'deploy.check_reorder': '>>> check_reorder(lambda x, src, dst: np.ascontiguousarray(np.transpose(x, [src.index(c) for c in dst])))\n✓ reorder: 14 fresh cases agree with the reference.\n',
    'gemm.check_best_tile': '>>> def mine(M, N, K, buffer_bytes, itemsize, line):   # try every tile: the matrices are small\n...     def moved(bm, bn, bk):                         # order mnk, lines per tile row\n...         def lines(cols, b):\n...             return sum((min(p + b, cols) * itemsize - 1) // line - p * itemsize // line + 1\n...                        for p in range(0, cols, b)) * line\n...         cm, cn, ck = -(-M // bm), -(-N // bn), -(-K // bk)\n...         r_a, r_b = (cn if ck > 1 else 1), (cm if cn > 1 or ck > 1 else 1)\n...         return r_a * M * lines(K, bk) + r_b * K * lines(N, bn) + M * lines(N, bn)\n...     tiles = [(a, b, c) for a in range(1, M + 1) for b in range(1, N + 1) for c in range(1, K + 1)\n...              if (a * c + c * b + a * b) * itemsize <= buffer_bytes]\n...     return min(tiles, key=lambda t: moved(*t))\n>>> check_best_tile(mine)\n✓ best tile: 10 fresh cases agree with the reference.\n',
    'gemm.check_schedule_traffic': '>>> import math\n>>> def mine(M, N, K, tile, order, itemsize, line):\n...     size, step = {"m": M, "n": N, "k": K}, dict(zip("mnk", tile))\n...     trips = {d: math.ceil(size[d] / step[d]) for d in "mnk"}\n...     def r(deps):                   # how often each tile of an operand is loaded\n...         free = next(d for d in "mnk" if d not in deps)\n...         return trips[free] if any(trips[d] > 1 for d in order[order.index(free) + 1:]) else 1\n...     def lines(rows, cols, b):      # the lines of every tile row of one pass over a matrix\n...         per_row = sum((min(p + b, cols) * itemsize - 1) // line - p * itemsize // line + 1\n...                       for p in range(0, cols, b))\n...         return rows * per_row * line\n...     a, b, c = lines(M, K, step["k"]), lines(K, N, step["n"]), lines(M, N, step["n"])\n...     return r("mk") * a + r("kn") * b + (r("mn") - 1) * c, r("mn") * c\n>>> check_schedule_traffic(mine)\n✓ schedule traffic: 40 fresh cases agree with the reference.\n',
    'gemm.check_tiled_matmul': '>>> def mine(A, B, tile):\n...     bm, bn, bk = tile\n...     C = np.zeros((A.shape[0], B.shape[1]), A.dtype)\n...     for i in range(0, A.shape[0], bm):\n...         for j in range(0, B.shape[1], bn):\n...             for p in range(0, A.shape[1], bk):\n...                 C[i:i + bm, j:j + bn] += A[i:i + bm, p:p + bk] @ B[p:p + bk, j:j + bn]\n...     return C\n>>> check_tiled_matmul(mine)\n✓ tiled matmul: 13 fresh cases agree with the reference.\n',
    'gemm.check_time_prediction': '>>> check_time_prediction(lambda: 5**3 * 2e-6, 3e-4, n=72, tile=(16, 16, 16), t_step=2e-6, step_n=96)   # ⌈72/16⌉³ steps\n✓ time prediction: you predicted 0.25 ms, 125 steps; timed again beside the 96³ product ...\n',
    'graphs.check_attainable': '>>> check_attainable(lambda f, b, p, bw: min(p, bw * f / b))\n✓ attainable: 40 fresh cases agree with the reference.\n',
    'graphs.check_conv_macs': '>>> def mine(x_shape, w_shape, stride, pad, dilation, group):\n...     (n, _, h, w), (c_out, c_in_g, kh, kw) = x_shape, w_shape\n...     ho = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1\n...     wo = (w + 2 * pad - dilation * (kw - 1) - 1) // stride + 1\n...     return n * c_out * ho * wo * c_in_g * kh * kw\n>>> check_conv_macs(mine)\n✓ conv MACs: 40 fresh cases agree with the reference.\n',
    'graphs.check_fold_bn': '>>> def fold(W, b, gamma, beta, mean, var, eps):\n...     s = gamma / np.sqrt(var + eps)\n...     return W * s[:, None, None, None], (b - mean) * s + beta\n>>> check_fold_bn(fold)\n✓ fold BN: 12 fresh cases agree with the reference.\n',
    'graphs.check_live_peak': '>>> def mine(tensors):\n...     steps = {s for _, first, last in tensors for s in (first, last)}\n...     return max((sum(size for size, f, l in tensors if f <= s <= l) for s in steps), default=0)\n>>> check_live_peak(mine)\n✓ live peak: 30 fresh cases agree with the reference.\n',
    'layouts.check_from_blocked': '>>> def mine(xb, block, channels):\n...     n, cb, h, w, _ = xb.shape\n...     return np.ascontiguousarray(xb.transpose(0, 1, 4, 2, 3).reshape(n, cb * block, h, w)[:, :channels])\n>>> check_from_blocked(mine)\n✓ from_blocked: 40 fresh cases agree with the reference.\n',
    'layouts.check_im2col_view': '>>> from numpy.lib.stride_tricks import as_strided\n>>> def mine(x, k, stride):\n...     n, c, h, w = x.shape\n...     sn, sc, sh, sw = x.strides\n...     return as_strided(x, shape=(n, (h - k) // stride + 1, (w - k) // stride + 1, c, k, k),\n...                       strides=(sn, sh * stride, sw * stride, sc, sh, sw), writeable=False)\n>>> check_im2col_view(mine)\n✓ im2col as a view: 30 fresh cases agree with the reference.\n',
    'layouts.check_stays_view': '>>> def mine(shape, perm):\n...     moved = [p for p in perm if shape[p] != 1]\n...     return moved == sorted(moved)\n>>> check_stays_view(mine)\n✓ stays a view: 60 fresh cases agree with the reference.\n',
    'layouts.check_to_blocked': '>>> def mine(x, block):\n...     n, c, h, w = x.shape\n...     padded = np.pad(x, ((0, 0), (0, -c % block), (0, 0), (0, 0)))\n...     return np.ascontiguousarray(padded.reshape(n, -1, block, h, w).transpose(0, 1, 3, 4, 2))\n>>> check_to_blocked(mine)\n✓ to_blocked: 40 fresh cases agree with the reference.\n',
    'predict.check_alignment_prediction': '>>> check_alignment_prediction(1 / 8, {16: 200, 32: 100, 64: 50, 128: 25, 256: 25})\n✓ alignment: you predicted 12.5% of the arrays 128-byte aligned; this run measured 12.5%.\n',
    'predict.check_conversion_prediction': '>>> from npukit.layouts import measure_conversion\n>>> check_conversion_prediction(1.0, measure_conversion((64, 1, 56, 56), "NCHW", "NHWC"))   # only a length-1 axis moves\n✓ conversion: you predicted 1.00× a copy\'s time; timed again by this check beside a copy ...\n',
    'roofline.check_relu_prediction': '>>> from npukit import measure, roofline\n>>> check_relu_prediction(20 / 12, 1.0, peak_gflops=60.0, bandwidth_gbs=20.0, nbytes=roofline.copy_bytes(), threads=measure.cores())   # 12 bytes per FLOP\n✓ ReLU rate: you predicted 1.67 GFLOP/s, which at your roofline\'s 20 GB/s is 1.50 times the copy\'s time over the same array; timed again ...\n',
    'systolic.check_best_shape': '>>> def mine(M, N, K, pes, dataflow):\n...     shapes = [(2**e, pes // 2**e) for e in range(pes.bit_length())]\n...     sr, sc, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]\n...     def cycles(r, c):\n...         return -(-sr // r) * -(-sc // c) * ((0 if dataflow == "os" else r) + r + c + t - 2)\n...     return min(shapes, key=lambda s: cycles(*s))\n>>> check_best_shape(mine)\n✓ best shape: ...\n',
    'systolic.check_fold_cycles': '>>> def mine(M, N, K, rows, cols, dataflow):\n...     sr, sc, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]\n...     per_fold = (0 if dataflow == "os" else rows) + rows + cols + t - 2\n...     return -(-sr // rows) * -(-sc // cols) * per_fold\n>>> check_fold_cycles(mine)\n✓ fold cycles: ... cases agree...\n',
    'systolic.check_utilization_prediction': '>>> from npukit.systolic import simulate\n>>> sim = simulate(np.ones((16, 64), int), np.ones((64, 128), int), 128, 128, "ws")\n>>> def mine(M, N, K, rows, cols, dataflow):\n...     sr, sc, t = {"os": (M, N, K), "ws": (K, N, M), "is": (K, M, N)}[dataflow]\n...     per_fold = (0 if dataflow == "os" else rows) + rows + cols + t - 2\n...     return M * N * K / (rows * cols * -(-sr // rows) * -(-sc // cols) * per_fold)\n>>> check_utilization_prediction(mine, sim)\n✓ utilization prediction: you predicted ...%, the simulator measured ...%; 8 fresh layers agree too.\n',
    'systolic.check_ws_busy': '>>> def mine(M, K, N):\n...     t = np.arange(2 * K + N + M - 2)[:, None, None, None]\n...     m, r, c = np.ogrid[:M, :K, :N]\n...     return (t == K + m + r + c).sum(axis=(1, 2, 3))\n>>> check_ws_busy(mine)\n✓ weight-stationary busy PEs: 20 fresh cases agree with the reference.\n',
    'tensors.check_aligned_empty': '>>> import math\n>>> def mine(shape, dtype, alignment):\n...     dtype = np.dtype(dtype)\n...     raw = np.empty(math.prod(shape) * dtype.itemsize + alignment, np.uint8)\n...     start = -raw.ctypes.data % alignment\n...     return raw[start:start + math.prod(shape) * dtype.itemsize].view(dtype).reshape(shape)\n>>> check_aligned_empty(mine)\n✓ aligned_empty: 30 fresh cases agree with the reference.\n',
    'tensors.check_strides': '>>> def mine(shape, itemsize, order="C"):\n...     strides, step = [0] * len(shape), itemsize\n...     for k in (reversed(range(len(shape))) if order == "C" else range(len(shape))):\n...         strides[k], step = step, step * shape[k]\n...     return tuple(strides)\n>>> check_strides(mine)\n✓ strides: 40 fresh cases agree with the reference.\n',
}


class _Runner(doctest.DocTestRunner):
    """A doctest runner that records the type of each exception an example raised unexpectedly."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.raised: list[type] = []

    def report_unexpected_exception(self, out, test, example, exc_info):
        self.raised.append(exc_info[0])
        super().report_unexpected_exception(out, test, example, exc_info)


#: The examples that time real code (the checks' own rounds, or the learner's function timing a run).
TIMED = {"capstone.check_warm_latency", "gemm.check_time_prediction", "predict.check_conversion_prediction",
         "roofline.check_relu_prediction"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.load) if n in TIMED else n
                                  for n in sorted(PASSING)])
def test_a_right_answer_passes(name):
    module, function = name.split(".")
    namespace = dict(vars(importlib.import_module(f"npukit.teach.{module}")))
    for attempt in range(1 + RERUNS):
        test = doctest.DocTestParser().get_doctest(PASSING[name], dict(namespace), name, f"{module}.py", 0)
        runner = _Runner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        report: list[str] = []
        runner.run(test, out=report.append)
        if runner.failures == 0 or runner.raised != [TooNoisy]:   # only "too noisy, re-run" is run again
            break
    print("".join(report))
    assert runner.failures == 0 and "✓" in PASSING[name], f"{name}: its right answer did not pass"


def test_every_example_that_times_is_marked():
    """A checker that times (its own rounds, or a clock around the learner's function) is in TIMED."""
    import inspect

    for name in PASSING:
        module, function = name.split(".")
        source = inspect.getsource(getattr(importlib.import_module(f"npukit.teach.{module}"), function))
        times = any(word in source for word in ("retimed(", "measure.compare(", "in_blocks(", "_clock",
                                                 "perf_counter", "process_time", "thread_time", "sleep(", "_timed",
                                                 "_kernels(", "_products(", "_pipelines(", "_conversion_rounds("))
        assert times == (name in TIMED), f"{name}: {'times' if times else 'does not time'}; TIMED says otherwise"


def test_no_checker_docstring_shows_a_passing_check():
    """A passing example is a complete answer: Shift-Tab on a check cell would hand it over."""
    import npukit.teach as teach

    for key in dir(teach):
        if key.startswith("check_"):
            doc = getattr(teach, key).__doc__ or ""
            examples = doc.split("Examples", 1)[-1] if "Examples" in doc else ""
            assert "✓" not in examples, f"{key}'s docstring shows a passing example"

