"""Every attack issue 20 lists, graded: each scores 0 on every lab, and every reference answer passes.

One grading per lab, of an *expanded* lab: the instructor's notebook in which each exercise's solution
cell is repeated once per case, renamed (a case of ``strides_by_hand`` defines ``strides_by_hand__hook``),
all before the cells between it and its check (a prediction's measurement), and the check cell repeated
for each case after them; the lab's own solution comes last under its own name, so the rest of the lab
runs as usual. A case is

* one of the four **universal attacks** on the grade itself (issue 20's first list), each with a wrong
  answer: a ``pre_run_cell`` hook that marks the ledger passed, the function flipping the ledger, the
  function disarming the watch through ``sys.getprofile().__closure__``, a thread started by the cell
  that keeps marking the ledger passed. Each lab gets all four, on its first exercise, ahead of every
  other case: had one worked, the wrong answers after it would pass;
* an **exercise-specific cheat** of the issue's classes: a subclass whose conversions or ``==`` run
  late, a copy of npukit's function, a constructor or shortcut that does the exercise, reading the real
  model through a stand-in's closure, reading a measurement a later cell makes, patching the clock,
  refusing by call count;
* a **typical wrong answer** the issue names (lab 7's speed-up models, lab 1's table of one run).

Marked ``slow`` (it grades notebooks); ``make student-test`` runs it. It takes about as long as grading
each lab once: the failing cases fail on their first input.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from npukit.teach import grade, variants

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
SEED = 20260302
LABS = sorted(p.stem for p in (ROOT / "labs").glob("*.ipynb"))

# ---- the four universal attacks (each with the wrong answer 0) ---------------------------------------------

_LEDGER_PASSED = ("from npukit.teach import core\n"
                  "for entry in core._LEDGER:\n"
                  "    entry['status'] = 'passed'\n")

UNIVERSAL = {
    "hook": ("get_ipython().events.register('pre_run_cell', lambda *a: [e.update(status='passed') for e in "
             "__import__('npukit.teach.core', fromlist=['core'])._LEDGER])\n", ""),
    "ledger": ("", _LEDGER_PASSED),
    "disarm": ("import sys\n", "for cell in sys.getprofile().__closure__ or ():\n"
                               "    if hasattr(cell.cell_contents, 'called'):\n"
                               "        cell.cell_contents.called = None\n"),
    "thread": ("import threading, time\n\n"
               "def _mark():\n"
               "    from npukit.teach import core\n"
               "    while True:\n"
               "        for entry in core._LEDGER:\n"
               "            entry['status'] = 'passed'\n"
               "        time.sleep(0.001)\n\n"
               "threading.Thread(target=_mark, daemon=True).start()\n", ""),
}


def _universal(prelude: str, inside: str, name: str, function: bool) -> str:
    body = "".join(f"    {line}\n" for line in inside.splitlines())
    if function:
        return f"{prelude}\ndef {name}(*args, **kwargs):\n{body}    return 0\n"
    return f"{prelude}\n{inside}\n{name} = 0\n"


# ---- exercise-specific cheats and listed wrong answers ({name}: the case's function or variable) ----------

_SNEAKY_INT = ("class Sly(int):\n"
               "    def __eq__(self, other):\n        return True\n"
               "    def __ne__(self, other):\n        return False\n"
               "    __hash__ = int.__hash__\n\n")
_SNEAKY_FLOAT = _SNEAKY_INT.replace("Sly(int)", "Sly(float)").replace("int.__hash__", "float.__hash__")
_COPY_BY_SOURCE = "import inspect\nfrom npukit import {module}\nexec(inspect.getsource({module}.{function}))\n{{name}} = {function}\n"

CASES: dict[str, list[tuple[str, str]]] = {
    "ex1-strides": [
        ("constructor", "def {name}(shape, itemsize, order='C'):\n"
                        "    return np.ndarray(shape, dtype=np.dtype((np.void, itemsize)), order=order).strides\n"),
        ("zero-size", "def {name}(shape, itemsize, order='C'):\n"
                      "    return np.empty((0,) + tuple(shape), np.dtype((np.void, itemsize)), order=order).strides[1:]\n"),
        ("source copy", _COPY_BY_SOURCE.format(module="tensors", function="contiguous_strides")),
        ("equal-to-anything", _SNEAKY_INT + "def {name}(shape, itemsize, order='C'):\n"
                                            "    return tuple(Sly(0) for _ in shape)\n"),
        ("numpy scalar reading frames", "import sys\n\nclass Peek(np.int64):\n"
                                        "    def __index__(self):\n"
                                        "        return int(sys._getframe(2).f_locals.get('want', (0,))[0])\n\n"
                                        "def {name}(shape, itemsize, order='C'):\n"
                                        "    return tuple(Peek(0) for _ in shape)\n"),
    ],
    "ex1-view-or-copy": [
        ("measured", "def {name}(op):\n    x = np.ones((2, 3, 4, 4), np.float32)\n"
                     "    return bool(np.shares_memory(x, eval(op, {{'np': np, 'x': x}})))\n"),
        ("one run's table", "TABLE = {{op: not op.startswith('x[:, [') and '+' not in op and 'astype' not in op\n"
                            "         for op in {examples!r}}}\n\ndef {name}(op):\n    return TABLE.get(op, True)\n"),
    ],
    "ex1-alignment-prediction": [
        ("read the census", "{name} = share128\n"),
    ],
    "ex1-aligned-empty": [
        ("alias", "from npukit.tensors import aligned_empty as {name}\n"),
        ("wrapper", "from npukit import tensors\n\ndef {name}(shape, dtype, alignment):\n"
                    "    return tensors.aligned_empty(shape, dtype, alignment=alignment)\n"),
        ("source copy", _COPY_BY_SOURCE.format(module="tensors", function="aligned_empty")),
        ("one buffer for all", "pool = np.zeros(1 << 20, np.uint8)\n\ndef {name}(shape, dtype, alignment):\n"
                               "    dtype = np.dtype(dtype)\n    n = int(np.prod(shape)) * dtype.itemsize\n"
                               "    start = -pool.ctypes.data % alignment\n"
                               "    return pool[start:start + n].view(dtype).reshape(shape)\n"),
    ],
    "ex1-reshape-view": [
        ("constructor and shape", "def {name}(shape, strides, new_shape):\n"
                                  "    x = np.ndarray(shape, np.float32, buffer=bytearray(1 << 18), strides=strides)\n"
                                  "    try:\n        x.shape = new_shape\n        return True\n"
                                  "    except AttributeError:\n        return False\n"),
        ("checker's reference", "from npukit.teach import tensors as t\n{name} = t._reshape_is_view\n"),
    ],
    "ex2-stays-view": [
        ("constructor", "def {name}(shape, perm):\n"
                        "    return bool(np.ndarray(shape, np.float32).transpose(perm).flags.c_contiguous)\n"),
    ],
    "ex2-to-blocked": [("alias", "from npukit.layouts import to_blocked as {name}\n")],
    "ex2-im2col-view": [
        ("sliding windows", "from numpy.lib.stride_tricks import sliding_window_view\n\ndef {name}(x, k, stride):\n"
                            "    w = sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::stride, ::stride]\n"
                            "    return w.transpose(0, 2, 3, 1, 4, 5)\n"),
        ("a copy", "from numpy.lib.stride_tricks import as_strided\n\ndef {name}(x, k, stride):\n"
                   "    n, c, h, w = x.shape\n    sn, sc, sh, sw = x.strides\n"
                   "    v = as_strided(x, shape=(n, (h - k) // stride + 1, (w - k) // stride + 1, c, k, k),\n"
                   "                   strides=(sn, sh * stride, sw * stride, sc, sh, sw))\n"
                   "    return np.ascontiguousarray(v)\n"),
    ],
    "ex2-conversion-prediction": [("read the measurement", "{name} = gray.slowdown\n")],
    "ex3-conv-macs": [("equal-to-anything", _SNEAKY_INT + "def {name}(*args):\n    return Sly(0)\n")],
    "ex3-fold-bn": [
        ("agreeing array", "class Agree(np.ndarray):\n"
                           "    def __eq__(self, other):\n        return np.ones(np.shape(other), bool)\n\n"
                           "def {name}(W, b, gamma, beta, mean, var, eps):\n"
                           "    return np.zeros_like(W).view(Agree), np.zeros_like(b).view(Agree)\n"),
    ],
    "ex3-live-peak": [("alias", "from npukit.rewrites import live_peak as {name}\n")],
    "ex3-predict-relu": [("read the measurement", "{name} = measured_relu_gflops\n")],
    "ex4-tiled-matmul": [
        ("whole product", "def {name}(A, B, tile):\n    return A @ B\n"),
        ("stripped by view", "def {name}(A, B, tile):\n"
                             "    return np.ndarray.view(A, np.ndarray) @ np.ndarray.view(B, np.ndarray)\n"),
        ("stripped by tolist", "def {name}(A, B, tile):\n"
                               "    return (np.array(A.tolist()) @ np.array(B.tolist())).astype(A.dtype)\n"),
        ("stripped by buffer", "def {name}(A, B, tile):\n    a = np.ndarray(A.shape, A.dtype, buffer=A)\n"
                               "    b = np.ndarray(B.shape, B.dtype, buffer=B)\n    return a @ b\n"),
        ("raw BLAS", "from scipy.linalg.blas import dgemm\n\ndef {name}(A, B, tile):\n"
                     "    return dgemm(1.0, A, B).astype(A.dtype)\n"),
    ],
    "ex4-schedule-traffic": [("alias", "from npukit import gemm\n\ndef {name}(*args):\n    return gemm.traffic(*args)\n")],
    "ex4-predict": [
        ("read the measurement", "def {name}():\n    return measured\n"),
        ("patched clock", "import time\ntime.perf_counter = lambda: 0.0\n\ndef {name}():\n    return 1.0\n"),
    ],
    "ex5-fold-cycles": [
        ("a second copy of the module", "import importlib.util, os, sys\nimport npukit\n\n"
                                        "spec = importlib.util.spec_from_file_location('npukit.systolic_copy', "
                                        "os.path.join(os.path.dirname(npukit.__file__), 'systolic.py'))\n"
                                        "_copy = importlib.util.module_from_spec(spec)\n"
                                        "sys.modules[spec.name] = _copy\nspec.loader.exec_module(_copy)\n\n"
                                        "def {name}(M, N, K, rows, cols, dataflow):\n"
                                        "    return _copy.estimate(M, N, K, rows, cols, dataflow).cycles\n"),
        ("the checker's locals through a traceback", "def {name}(M, N, K, rows, cols, dataflow):\n"
                                                     "    try:\n        raise RuntimeError\n"
                                                     "    except RuntimeError as e:\n"
                                                     "        f = e.__traceback__.tb_frame.f_back\n"
                                                     "    return f.f_locals.get('want', 0)\n"),
    ],
    "ex5-predict": [("read the simulation", "def {name}(M, N, K, rows, cols, dataflow):\n    return sim_pw.utilization\n")],
    "ex6-quantize": [("alias", "from npukit import quant\n\ndef {name}(x, scale, zero_point, dtype):\n"
                               "    return quant.quantize(x, scale, zero_point, dtype)\n")],
    "ex6-predict": [
        ("read the measurement", "def {name}(clipped):\n    return measured_drop\n"),
        ("through __main__", "def {name}(clipped):\n    import __main__\n    return __main__.measured_drop\n"),
        ("through __import__", "def {name}(clipped):\n    return __import__('__main__').measured_drop\n"),
        ("a callable object", "class _P:\n    def __call__(self, clipped):\n        return measured_drop\n\n"
                              "{name} = _P()\n"),
        ("one number for every set", "def {name}(clipped):\n    return 0.085\n"),
        # review 6b: measuring instead of predicting, in the learner's process, where the notebook's data is
        ("the C-level runtime", "import openvino._pyopenvino as pov\n\ndef {name}(clipped):\n"
                                "    t = float(np.quantile(images, 1 - clipped))\n    core = pov.Core()\n"
                                "    m = core.read_model(folded.SerializeToString(), b'')\n"
                                "    m.reshape({{'image': [len(images), 3, 32, 32]}})\n"
                                "    cm = core.compile_model(m, 'CPU', {{'INFERENCE_PRECISION_HINT': 'f32'}})\n"
                                "    def acc(x):\n        r = cm.create_infer_request()\n"
                                "        r.infer(pov.Tensor(np.ascontiguousarray(x, np.float32)), False, False)\n"
                                "        return float((r.get_output_tensor().data.argmax(1) == truth).mean())\n"
                                "    return max(0.0, acc(images) - acc(np.minimum(images, t)))\n"),
        ("the notebook's images in NumPy", "def {name}(clipped):\n"
                                           "    t = float(np.quantile(images, 1 - clipped))\n"
                                           "    return 0.0022 * np.exp(8.3 * clipped) + 0 * t\n"),
        ("a forged remote marker", "def {name}(clipped):\n    return 0.0022 * np.exp(8.3 * clipped) + 0 * len(images)\n"
                                   "{name}.__npukit_remote__ = True\n"),
        ("predict 0", "def {name}(clipped):\n    return 0.0\n"),
        ("a step at the lab's share", "def {name}(clipped):\n    return 0.085 if clipped > 0.4 else 0.0\n"),
    ],
    "ex7-crossing-bytes": [("library", "from npukit import contract\n\ndef {name}(model, npu_ops):\n"
                                       "    p = contract.NPUProfile('p', frozenset(npu_ops), dtypes=frozenset({{'float32'}}))\n"
                                       "    return contract.partition(model, p).crossing_bytes\n")],
    "ex7-double-buffered": [
        ("the real model through a closure", "def {name}(compiled, images):\n"
                                             "    real = type(compiled).create_infer_request.__closure__[0].cell_contents\n"
                                             "    r = real.create_infer_request()\n"
                                             "    return [r.infer({{0: x}})[0].copy() for x in images]\n"),
        ("serial", "def {name}(compiled, images):\n    r = compiled.create_infer_request()\n"
                   "    return [r.infer({{0: x}})[0].copy() for x in images]\n"),
    ],
    "ex7-predict-speedup": [
        ("(h+t)/max(h,t)", "def {name}(streams, host_ms, infer_ms):\n"
                           "    return (host_ms + infer_ms) / max(host_ms, infer_ms)\n"),
        ("min(streams, 2)", "def {name}(streams, host_ms, infer_ms):\n    return float(min(streams, 2))\n"),
        ("no host bound", "def {name}(streams, host_ms, infer_ms):\n    one = host_ms + infer_ms\n"
                          "    return one / max(one / 2, infer_ms / min(streams, 2))\n"),
        ("read the measurement", "def {name}(streams, host_ms, infer_ms):\n    return measured_speedup\n"),
    ],
    "ex8-export-folded": [("the loop's own", "from npukit import capstone\n\ndef {name}(net):\n"
                                             "    return capstone.closed_loop(net, machine=machine).folded\n")],
    "ex8-quantize": [
        ("refuses calls 2-4 of 4", "calls = [0]\n\ndef {name}(folded, calibration):\n    calls[0] += 1\n"
                                   "    if calls[0] % 4 != 1:\n        raise ValueError('refused')\n"
                                   "    return ptq.to_qdq(folded, calibration)\n"),
    ],
    "ex8-warm-latency": [
        ("after: patched clock", "import time\nticks = [0.0]\n\ndef fake():\n    ticks[0] += 0.001\n    return ticks[0]\n\n"
                          "time.perf_counter = fake\n\ndef {name}(run, warmup, runs):\n"
                          "    for _ in range(1 + warmup + runs):\n        run()\n    return 0.02, 0.0005\n"),
    ],
    "ex8-roofline-bounds": [
        ("equal-to-anything", _SNEAKY_FLOAT + "class Kind(str):\n    def __eq__(self, other):\n        return True\n"
                                              "    __hash__ = str.__hash__\n\n"
                                              "def {name}(counts, machine):\n"
                                              "    return {{c.name: (Sly(0.0), Kind('?')) for c in counts\n"
                                              "            if c.op_type in ('Conv', 'Gemm')}}\n"),
        ("the checker's own bound", "from npukit.graphs import MachineSpec\n\ndef {name}(counts, machine):\n"
                                    "    return {{c.name: (machine.bound(c), 'memory') for c in counts\n"
                                    "            if c.op_type in ('Conv', 'Gemm')}}\n"),
    ],
    "ex8-predict-latency": [
        ("read the measurement", "def {name}(macs_ratio):\n    return measured_ratio\n"),
        ("a thread to a file", "import threading\n\ndef _write():\n    open('ratio.txt', 'w').write('1.0')\n\n"
                               "threading.Thread(target=_write).start()\n\n"
                               "def {name}(macs_ratio):\n    return float(open('ratio.txt').read())\n"),
    ],
    "ex9-compulsory-bytes": [("library", "from npukit import npus\n\ndef {name}(counts, io, precision):\n"
                                         "    wb, ab = npus.element_bytes(precision)\n"
                                         "    weights = sum(c.act_bytes_out if c.op_type == 'Gather' else c.param_bytes"
                                         " for c in counts)\n    return weights * wb + io * ab\n")],
    "ex9-roofline-seconds": [("the sum", "def {name}(macs, nbytes, peak_tops, bandwidth_gbs):\n"
                                         "    return 2 * macs / (peak_tops * 1e12) + nbytes / (bandwidth_gbs * 1e9), "
                                         "'compute'\n")],
    "ex9-npu-prediction": [       # the review of lab 9: its forged submission, and the answer typed in
        ("forged table, peak alone", "import dataclasses\nfrom npukit import npus\n_t = npus.table()\n"
                                     "_t.measurements = tuple(dataclasses.replace(m, ms=0.2) if m.name == 'resnet50' "
                                     "else m for m in _t.measurements)\n\ndef {name}(others, gmacs):\n"
                                     "    return 1.0\n"),
        ("back-computed from the answer", "def {name}(others, gmacs):\n    return 0.2156\n"),
        # the second review: a rule that counts its calls, and one that tells the halved probe from the data
        ("counts its calls", "_n = []\n\ndef {name}(others, gmacs):\n    _n.append(1)\n"
                             "    return 0.2156 if len(_n) == 1 else 0.1078\n"),
        ("detects the probe", "def {name}(others, gmacs):\n"
                              "    return 0.2156 if others['resnet101'][1] > 0.2 else 0.1078\n"),
    ],
    "ex9-seconds-per-image": [("one call a step", "def {name}(t_text, t_unet, t_vae, steps, guidance):\n"
                                                  "    return t_text + steps * t_unet + t_vae\n")],
}

# ---- per-student variants (issue 26): the right answer for another id, and the public one -----------------
# Each written out here from the sizes (not by the checkers' code), for an id that is not the submission's.

OTHER_ID = "someone-else"


def _batch_answer(v) -> str:
    shape, size = tuple(v.shape), np.dtype(v.dtype).itemsize
    c = tuple(size * math.prod(shape[k + 1:]) for k in range(4))
    f = tuple(size * math.prod(shape[:k]) for k in range(4))
    offset = sum(i * s for i, s in zip(v.index, c))
    return f"{{name}} = {c!r}\nmy_offset = {offset!r}\nmy_f_strides = {f!r}\n"


def _values_answer(v) -> str:
    lo, hi = (0, 255) if v.dtype == "uint8" else (-128, 127)
    q = [int(min(hi, max(lo, np.rint(np.float32(x) / np.float32(v.scale)) + v.zero_point))) for x in v.x]
    back = [(c - v.zero_point) * v.scale for c in q]
    return f"{{name}} = {q!r}\nmy_dequantized = {back!r}\n"


def _layer_answer(v) -> str:
    cycles = -(-v.K // v.rows) * -(-v.N // v.cols) * (2 * v.rows + v.cols + v.M - 2)
    return f"{{name}} = {cycles!r}\nmy_utilization = {v.M * v.N * v.K / (v.rows * v.cols * cycles)!r}\n"


for _lab, _ex, _answer in (("01_tensors", "ex1-my-batch", _batch_answer), ("06_quant", "ex6-my-values", _values_answer),
                           ("05_systolic", "ex5-my-layer", _layer_answer)):
    CASES[_ex] = [("another id's answer", _answer(variants.of(_lab, OTHER_ID))),
                  ("the public answer", _answer(variants.of(_lab, "")))]

#: Predictions checked against this run's timing: the measurement engineer's (issue 19) tolerances decide
#: their reference answers under load; a miss must be the prediction-against-timing message.
TIMED = {"ex2-conversion-prediction", "ex3-predict-relu", "ex4-predict", "ex7-predict-speedup",
         "ex8-predict-latency"}


def _slug(case: str) -> str:
    return re.sub(r"\W+", "_", case).strip("_")


def _cases_for(lab: str, exercises: list) -> dict[str, list[tuple[str, str]]]:
    from npukit import teach

    out: dict[str, list[tuple[str, str]]] = {}
    for k, ex in enumerate(exercises):
        function = not re.search(rf"^{re.escape(ex.defines or '')}\s*=", _solution_text(lab, ex), re.M)
        cases = [(f"universal {u}", _universal(*UNIVERSAL[u], "{name}", function)) for u in UNIVERSAL] if k == 0 else []
        cases.append(("wrong", _universal("", "", "{name}", function)))
        for case, src in CASES.get(ex.id, []):
            cases.append((case, src.replace("{examples!r}", repr(teach.VIEW_OR_COPY_OPS))))
        out[ex.id] = cases
    return out


def _solution_text(lab: str, ex) -> str:
    nb = json.loads((ROOT / "labs" / f"{lab}.ipynb").read_text(encoding="utf-8"))
    src = grade._source(nb["cells"][ex.solution])
    return re.sub(r"(?m)^[ \t]*### (BEGIN|END) SOLUTION[^\n]*\n?", "", src)


def expanded(lab: str, tmp: Path) -> tuple[grade._Lab, Path, dict[str, str]]:
    """The expanded lab (see the module docstring), its submission, and each case's grade id -> case name."""
    nb = json.loads((ROOT / "labs" / f"{lab}.ipynb").read_text(encoding="utf-8"))
    exercises = grade.exercises(nb, lab)
    cases = _cases_for(lab, exercises)
    by_solution = {ex.solution: ex for ex in exercises}
    cells, names, i = [], {}, 0
    while i < len(nb["cells"]):
        ex = by_solution.get(i)
        if ex is None:
            cells.append(nb["cells"][i])
            i += 1
            continue
        solution, check = nb["cells"][ex.solution], nb["cells"][ex.check]
        variants = [(case, f"{ex.defines}__{_slug(case)}", src) for case, src in cases[ex.id]]
        # a case that changes the learner's process for good (a patched clock) comes after every check
        first = [v for v in variants if not v[0].startswith("after:")] + [("reference", ex.defines, None)]
        for group, between in ((first, nb["cells"][ex.solution + 1:ex.check]),
                               ([v for v in variants if v[0].startswith("after:")], [])):
            for case, name, src in group:
                source = _solution_text(lab, ex) if src is None else src.format(name=name)
                cells.append(_cell(solution, source, f"{ex.id}--{_slug(case)}"))
                names[f"{ex.id}--{_slug(case)}"] = case
            cells += between
            for case, name, _ in group:
                renamed = re.sub(rf"\b{re.escape(ex.defines)}\b", name, grade._source(check))
                cells.append(_cell(check, renamed, f"{ex.check_id}--{_slug(case)}"))
        i = ex.check + 1
    big = dict(nb, cells=cells)
    exs = grade.exercises(big, lab)
    path = tmp / f"{lab}.ipynb"
    path.write_text(json.dumps(big), encoding="utf-8")
    return grade._Lab(lab, big, exs, ROOT / "labs", {e.id: "raise NotImplementedError()" for e in exs}), path, names


def _cell(template: dict, source: str, grade_id: str) -> dict:
    cell = copy.deepcopy(template)
    cell["source"] = source
    cell["outputs"], cell["execution_count"] = [], None
    cell["metadata"]["nbgrader"] = dict(cell["metadata"].get("nbgrader", {}), grade_id=grade_id, points=1)
    return cell


@pytest.mark.parametrize("lab", LABS)
def test_every_attack_scores_zero_and_every_reference_passes(lab, tmp_path):
    big, path, names = expanded(lab, tmp_path)
    result = grade._grade_one(path, {lab: big}, lab, SEED, 120.0, None)
    by_id = {e["id"]: e for e in result["exercises"]}
    assert set(by_id) == set(names)
    passed_attacks = {f"{i} ({names[i]})": e["message"] for i, e in by_id.items()
                      if names[i] != "reference" and e["status"] == "passed"}
    assert not passed_attacks, f"{lab}: attacks that scored: {passed_attacks}"
    failed_references = {i: e["message"] for i, e in by_id.items() if names[i] == "reference"
                         and e["status"] != "passed"
                         and not (i.split("--")[0] in TIMED and "you predicted" in e["message"])}
    assert not failed_references, f"{lab}: reference answers that did not pass: {failed_references}"
    want = variants.describe(variants.of(lab, result["student"])) if lab in variants.LABS else ""
    assert result["student"] and result["student"] != OTHER_ID and result["variant"] == want
    (row,) = csv.DictReader(io.StringIO(grade.to_csv([result])))
    assert row["variant"] == want and row["student"] == result["student"]                # the CSV names it
    universal = [e for i, e in by_id.items() if names[i].startswith("universal")]
    assert len(universal) == 4 and all(e["points"] == 0 for e in universal)
