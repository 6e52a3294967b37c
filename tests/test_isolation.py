"""The grader's process boundary (issue 20): the screen, what crosses and how, the learner's process.

npukit/teach/isolation.py states the invariant: only data crosses between the checking process and the
learner's process. These tests check it piece by piece: the screen refuses what reaches into the
interpreter and passes every lab's own solutions; values and arrays cross as plain copies and replicas
(address, strides, views and writes kept); the learner's process refuses, in its audit hook, what the
screen cannot see; a call runs against the notebook as its cell left it, with the check's refusals.
A few tests start a learner's process (about a second each).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from npukit.teach import core, grade, guard, isolation, screen
from npukit.teach.checking import Learner, _syncable
from npukit.teach.isolation import Codec, Remote

ROOT = Path(__file__).parent.parent


# ---- the screen ---------------------------------------------------------------------------------------------


def _solutions():
    for p in sorted((ROOT / "labs").glob("*.ipynb")):
        nb = json.loads(p.read_text(encoding="utf-8"))
        for ex in grade.exercises(nb, p.stem):
            yield f"{p.stem}:{ex.id}", grade._source(nb["cells"][ex.solution])


@pytest.mark.parametrize("name, source", list(_solutions()), ids=lambda v: v if ":" in str(v) else "")
def test_every_labs_own_solution_passes_the_screen(name, source):
    assert screen.refusals(source) == []


@pytest.mark.parametrize("source, says", [
    ("import sys\n", "`import sys`"),
    ("import inspect as i\n", "`import inspect`"),
    ("from npukit import teach\n", "`from npukit import teach`"),
    ("from npukit.teach.core import _LEDGER\n", "the checkers"),
    ("from numpy.ctypeslib import as_array\n", "numpy.ctypeslib"),
    ("from . import x\n", "relative imports"),
    ("x = eval('1')\n", "`eval`"),
    ("exec('x = 1')\n", "`exec`"),
    ("f = open('a.txt', 'w')\n", "`open`"),
    ("get_ipython()\n", "`get_ipython`"),
    ("teach.check_strides = print\n", "`teach"),
    ("def f(g):\n    return g.__closure__\n", "`g.__closure__`"),
    ("def f(g):\n    return g.__globals__['x']\n", "`g.__globals__`"),
    ("def f(e):\n    return e.__traceback__.tb_frame\n", "tb_frame"),
    ("import numpy as np\nnp.sys.modules\n", "`np.sys`"),
    ("def f(x, name):\n    return getattr(x, name)\n", "a computed name"),
    ("def f(x):\n    return getattr(x, '__dict__')\n", "getattr(…, '__dict__')"),
    ("from functools import reduce\nreduce(getattr, ['a'], 1)\n", "`getattr` is not allowed"),
    ("import operator\noperator.attrgetter('x')\n", "attrgetter"),
    ("__builtins__['eval']\n", "`__builtins__`"),
    ("global __builtins__\n", "global __builtins__"),
])
def test_the_screen_refuses_and_names_the_line(source, says):
    found = screen.refusals(source)
    assert found and any(says in f for f in found) and found[0].startswith("line "), found


@pytest.mark.parametrize("source", [
    "import numpy as np\nfrom numpy.lib.stride_tricks import as_strided\n",
    "import math, statistics, collections, itertools, functools, time, onnx\nfrom npukit import rewrites, ptq\n",
    "class Pair:\n    def __init__(self, a):\n        self.a = a\n    def __eq__(self, o):\n        return self.a == o.a\n"
    "    __hash__ = object.__hash__\n",
    "def f(x):\n    return getattr(x, 'shape'), hasattr(x, 'dtype'), x.__array_interface__['data'][0]\n",
    "def f(x):\n    return x.ctypes.data % 64\n",
    "_cache = {}\ndef f(k):\n    return _cache.setdefault(k, k * 2)\n",
    "def f(:\n",   # a syntax error is not the screen's business: it fails when it runs
])
def test_the_screen_passes_what_answers_need(source):
    assert screen.refusals(source) == []


# ---- what crosses ----------------------------------------------------------------------------------------


def _across(value, *, lend=None):
    """``value`` sent by the checking side and rebuilt by the learner side (both codecs returned too)."""
    out, back = Codec("checking", lendable=lend), Codec("learner", stand_in=lambda ref, kind: ("stand-in", ref, kind))
    blobs: list[bytes] = []
    data = json.loads(json.dumps(out.encode(value, blobs)))
    return back.decode(data, blobs), out, back


def _returned(value, learner: Codec, checking: Codec):
    blobs: list[bytes] = []
    data = json.loads(json.dumps(learner.encode(value, blobs)))
    return checking.decode(data, blobs)


@pytest.mark.parametrize("value", [
    None, True, 3, -2**70, 2.5, float("inf"), float("nan"), "é", b"\x00\x01", (1, (2, 3)), [1, [2]],
    {"a": 1, 2: (3,)}, {1, 2}, frozenset({3}), 1 + 2j, Ellipsis, slice(1, None, 2), np.dtype("float16"), np.int8,
])
def test_plain_values_cross_as_themselves(value):
    got, _, _ = _across(value)
    if isinstance(value, float) and value != value:
        assert got != got
    else:
        assert got == value and type(got) is type(value)


def test_numpy_scalars_and_subclasses_cross_as_plain_python_values():
    class Sly(int):
        def __eq__(self, other):
            return True
        __hash__ = int.__hash__

    learner, checking = Codec("learner"), Codec("checking")
    got = _returned((np.float32(0.5), np.int64(7), np.bool_(True), Sly(3), [Sly(4)]), learner, checking)
    assert got == (0.5, 7, True, 3, [4]) and [type(v) for v in got[:4]] == [float, int, bool, int]
    assert type(got[4][0]) is int and got[3] != 4   # the subclass's == is gone


def test_an_array_crosses_as_a_replica_with_its_address_strides_and_write_flag():
    base = np.zeros(4096 + 64, np.uint8)
    a = base[37:37 + 48].view(np.float32).reshape(3, 4)[:, ::2]   # strided, unaligned, a view
    a.flags.writeable = False
    got, _, _ = _across(a)
    assert type(got) is np.ndarray and got.dtype == a.dtype and got.shape == a.shape
    assert got.strides == a.strides and np.array_equal(got, a) and not got.flags.writeable
    assert got.__array_interface__["data"][0] % isolation.PAGE == a.__array_interface__["data"][0] % isolation.PAGE


def test_a_view_of_an_argument_comes_back_as_a_view_and_writes_come_back_too():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    checking = Codec("checking")
    learner = Codec("learner")
    blobs: list[bytes] = []
    arg = learner.decode(json.loads(json.dumps(checking.encode(x, blobs))), blobs)
    view = arg[:, 1:, ::2]                 # the learner's function returns a view of its argument ...
    arg[0, 0, 0] = 99.0                    # ... and writes into it
    out: list[bytes] = []
    data = json.loads(json.dumps(learner.encode(view, out)))
    checking.apply_writes(learner.writes(out), out)
    got = checking.decode(data, out)
    assert np.shares_memory(got, x) and np.array_equal(got, x[:, 1:, ::2]) and x[0, 0, 0] == 99.0


def test_an_answer_overlapping_part_of_an_earlier_one_is_refused():
    learner, checking = Codec("learner"), Codec("checking")
    pool = np.zeros(64, np.uint8)
    _returned(pool[:32], learner, checking)
    with pytest.raises(isolation.CannotCross, match="overlaps part of an array"):
        _returned(pool[16:48], learner, checking)
    again = _returned(pool[4:8], learner, checking)          # inside an earlier answer: a view of its replica
    assert again.base is not None and not again.flags.owndata


def test_records_cross_to_the_learner_by_value_and_nothing_but_data_comes_back():
    from npukit.graphs import MachineSpec

    m = MachineSpec(1e11, 1e10, "a machine", "given", "given")
    got, _, _ = _across(m)
    assert type(got) is MachineSpec and got == m and got.ridge == m.ridge
    with pytest.raises(isolation.CannotCross, match="MachineSpec"):
        Codec("learner").encode(m, [])
    with pytest.raises(isolation.Stopped, match="record"):
        Codec("checking").decode({"$": "record", "type": "os:system", "v": {"$": "dict", "v": []}}, [])


def test_an_ndarray_subclass_does_not_cross_silently():
    class Watched(np.ndarray):
        pass

    with pytest.raises(isolation.CannotCross, match="core.around"):
        Codec("checking").encode(np.zeros(3).view(Watched), [])


def test_an_object_that_is_not_data_is_lent_not_copied():
    class Recorder:   # a checker's stand-in
        pass

    got, checking, _ = _across([Recorder()], lend=lambda obj: isinstance(obj, Recorder))
    assert got[0][0] == "stand-in" and isinstance(checking.lent[got[0][1]], Recorder)


def test_the_checking_side_refuses_malformed_messages():
    c = Codec("checking")
    bad = [{"$": "array", "dtype": "O", "shape": [1], "strides": [8], "offset": 0, "write": True, "id": -1,
            "b": 0, "mod": 0},
           {"$": "array", "dtype": "<f8", "shape": [10], "strides": [8], "offset": 0, "write": True, "id": -1,
            "b": 0, "mod": 0},
           {"$": "lent", "ref": 1, "type": "x"}, {"$": "ref", "ref": 5}, {"$": "pickle"}]
    for data in bad:
        with pytest.raises(isolation.Stopped):
            c.decode(data, [b"\0" * 8])


def test_only_small_plain_values_are_handed_to_the_learner():
    from npukit.graphs import MachineSpec

    assert _syncable({"t_step": 1e-6, "steps": [1, 2]}, [100])
    assert _syncable(MachineSpec(1e11, 1e10, "m", "g", "g"), [100])
    assert not _syncable(np.zeros(3), [100]) and not _syncable(print, [100])


# ---- the learner's process --------------------------------------------------------------------------------


@pytest.fixture
def learner(tmp_path):
    (tmp_path / "learner").mkdir()
    lp = Learner(str(tmp_path / "learner"), str(tmp_path / "learner.log"), 30.0)
    lp.deadline = time.monotonic() + 60
    yield lp
    lp.close()


def _run(lp: Learner, source: str, kind: str = "solution", index: int = 1) -> dict:
    lp.deadline = time.monotonic() + 60
    reply, _ = lp.run(index, source, kind)
    return reply


@pytest.mark.parametrize("source, event", [
    ("exec('x = 1')\n", "compile"),
    ("import importlib\nimportlib.import_module('colorsys')\n", "import"),
    ("import sys\nsys._getframe(0)\n", "sys._getframe"),
    ("def f():\n    pass\nf.__code__\n", "object.__getattr__"),
    ("import sys\nsys.setprofile(None)\n", "sys.setprofile"),
    ("import gc\ngc.get_objects()\n", "import"),
    ("import ctypes\nctypes.CDLL(None)\n", "ctypes.dlopen"),
    ("open('/tmp/npukit-escape-' + str(id(0)), 'w')\n", "open"),
    ("import os\nos.listdir('/proc/1')\n", "open"),
    ("import threading\nthreading.Thread(target=print).start()\n", "thread"),
    ("import subprocess\nsubprocess.run(['true'])\n", "subprocess.Popen"),
    ("import socket\nsocket.socket()\n", "import"),
    ("import numpy as np\nnp.ctypeslib.ctypes.CDLL(None)\n", "ctypes.dlopen"),
    ("import numpy as np\nnp._core._methods.pickle.loads(b'cos\\nsystem\\n.')\n", "pickle.find_class"),
    ("try:\n    1 / 0\nexcept Exception as e:\n    e.__traceback__.tb_frame\n", "object.__getattr__"),
])
def test_the_audit_hook_refuses_what_the_screen_cannot_see(learner, source, event):
    """Each line here would be refused by the screen too; the learner's process refuses it again at run
    time (a solution cell is screened before it is sent, so these only happen when the screen is off)."""
    reply = _run(learner, source)
    assert reply["error"] and reply["error"]["type"] == "PermissionError", reply
    assert reply["refused"] and reply["refused"][0]["event"] == event, reply["refused"]


def test_a_lab_cell_may_do_what_a_solution_may_not(learner):
    reply = _run(learner, "import sys, threading\nframe = sys._getframe(0)\nt = threading.Thread(target=print)\n"
                          "t.start(); t.join()\n", kind="lab")
    assert reply["error"] is None and not reply["refused"]


def test_a_call_sees_the_notebook_as_its_cell_left_it_and_the_checks_refusals(learner):
    bound = _run(learner, "def predict():\n    return measured\n\ndef twice(x):\n    return 2 * x\n")["bound"]
    _run(learner, "measured = 0.123\n", kind="lab", index=2)
    predict = Remote(learner, bound["predict"]["handle"], "predict")
    twice = Remote(learner, bound["twice"]["handle"], "twice")
    with pytest.raises(core.LearnerError, match="NameError: name 'measured' is not defined"):
        core.learner_call("prediction", predict)
    assert core.learner_call("twice", twice, 21) == 42
    shares = _run(learner, "import numpy as np\n\ndef f(a):\n    return bool(np.shares_memory(a, a))\n",
                  index=3)["bound"]["f"]["handle"]
    with pytest.raises(core.CheckFailed, match="numpy.shares_memory"):
        core.learner_call("measure", Remote(learner, shares, "f"), np.zeros(3), forbid=[np.shares_memory])


def test_a_learner_error_keeps_its_type_and_not_implemented_means_not_attempted(learner):
    bound = _run(learner, "def bad(x):\n    raise ValueError('calibration must be float32')\n\n"
                          "def todo(x):\n    raise NotImplementedError()\n")["bound"]
    with pytest.raises(core.LearnerError) as info:
        core.learner_call("quantize", Remote(learner, bound["bad"]["handle"], "bad"), 1)
    assert isinstance(info.value.error, ValueError) and "line 2" in info.value.where[0]
    with pytest.raises(core.NotAttempted):
        core.learner_call("x", Remote(learner, bound["todo"]["handle"], "todo"), 1)


def test_the_learners_function_that_is_npukits_own_is_refused(learner):
    handle = _run(learner, "from npukit.tensors import contiguous_strides as mine\n")["bound"]["mine"]["handle"]
    from npukit import tensors

    with pytest.raises(core.CheckFailed, match="is npukit.tensors.contiguous_strides itself"):
        core.learner_call("strides", Remote(learner, handle, "mine"), (2, 3), 4, forbid=[tensors])


def test_a_constructor_the_check_forbids_is_refused_and_isinstance_still_works(learner):
    handle = _run(learner, "import numpy as np\n\ndef f(shape):\n    assert isinstance(np.zeros(1), np.ndarray)\n"
                           "    return np.ndarray(shape, np.float32).strides\n")["bound"]["f"]["handle"]
    with pytest.raises(core.CheckFailed, match="constructing numpy.ndarray"):
        core.learner_call("strides", Remote(learner, handle, "f"), (2, 3), forbid=[np.ndarray])


def test_a_function_that_does_not_return_is_stopped_and_the_notebook_survives(tmp_path):
    (tmp_path / "learner").mkdir()
    lp = Learner(str(tmp_path / "learner"), str(tmp_path / "learner.log"), 30.0)
    try:
        bound = _run(lp, "def spin():\n    while True:\n        pass\n\ndef ok():\n    return 1\n")["bound"]
        lp.deadline = time.monotonic() + 1.0
        with pytest.raises(isolation.Stopped, match="did not answer within the time allowed"):
            Remote(lp, bound["spin"]["handle"], "spin")()
        lp.deadline = time.monotonic() + 30
        assert Remote(lp, bound["ok"]["handle"], "ok")() == 1 and lp.restarts == 1   # run again, cells replayed
    finally:
        lp.close()


def test_a_lent_stand_in_is_served_where_it_was_made(learner):
    from npukit.teach import checking

    handle = _run(learner, "def f(run):\n    return [run(k) for k in range(3)]\n")["bound"]["f"]["handle"]
    calls = []
    ns: dict = {"calls": calls}
    exec(compile("def run(k):\n    calls.append(k)\n    return k * k\n", "<lab cell 0>", "exec"), ns)
    assert checking._lendable(ns["run"])
    assert Remote(learner, handle, "f")(ns["run"]) == [0, 1, 4] and calls == [0, 1, 2]


# ---- the checking process's run of a plan -----------------------------------------------------------------


def _plan_run(tmp_path, cells: list[dict]) -> dict[int, dict]:
    from npukit.teach import checking

    (tmp_path / "learner").mkdir()
    plan = {"seed": 5, "timeout": 60.0, "learner_dir": str(tmp_path / "learner"),
            "cells": [dict(c, index=i) for i, c in enumerate(cells)]}
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = checking.run_plan(plan, str(tmp_path / "result.json"))
    finally:
        os.chdir(cwd)
        core._set_grade_seed(None)
    return {c["index"]: c for c in result["cells"]}


def test_a_measurement_is_made_once_and_a_solution_cell_cannot_change_the_checks_context(tmp_path):
    """The checking process's value of a lab cell's measurement is the one the learner's code sees; a
    learner's cell that reassigns a lab variable changes only the learner's process."""
    cells = _plan_run(tmp_path, [
        {"kind": "lab", "source": "import time\nfrom npukit import teach\nstamp = time.perf_counter()\n"
                                  "census = {16: 300, 128: 100}\n"},
        {"kind": "solution", "source": "copied = stamp\npredicted = 1.0\ncensus = {128: 400}\n",
         "names": ["copied", "predicted"], "imports": ""},
        {"kind": "check", "source": "assert copied == stamp, (copied, stamp)\n"},
        {"kind": "check", "source": "teach.check_alignment_prediction(predicted, census)\n"},
    ])
    assert cells[2]["error"] is None, cells[2]
    assert cells[3]["ledger"][0]["status"] == "failed" and "measured 25.0%" in cells[3]["ledger"][0]["message"]



def test_a_cell_that_prints_without_end_keeps_only_its_last_output(learner):
    reply = _run(learner, "for k in range(200000):\n    print('line', k)\n")
    assert reply["error"] is None and len(reply["stdout"]) <= 20000 and reply["stdout"].endswith("line 199999\n")
