"""Run the bad-input table (``tests/bad_inputs/*.py``) and check that it covers every public callable.

See ``tests/badinput.py`` for the contract each row checks.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re

import pytest

TABLES = sorted(p.stem for p in (pathlib.Path(__file__).parent / "bad_inputs").glob("*.py") if p.stem != "__init__")

#: Public modules whose callables must each have a row (or an EXEMPT reason).
MODULES = ["data", "models", "train", "tensors", "layouts", "graphs", "rewrites", "gemm", "blas", "deploy", "tally", "viz",
           "measure", "figures.cameranet", "figures.tensors", "figures.layouts", "figures.graphs", "figures.gemm",
           "figures.deploy", "teach.student", "teach.core", "systolic", "figures.systolic", "quant", "figures.quant",
           "accelerator", "teach.systolic", "qarith", "ptq", "simd", "teach.predict", "roofline",
           "teach.roofline", "contract", "teach.deploy", "capstone", "figures.capstone", "teach.capstone",
           "teach.gemm", "teach.quant", "teach.bank", "timing", "machine", "shared", "i18n", "teach.screen",
           "npus", "archs", "figures.npus", "teach.npus", "teach.variants", "teach.timelog", "project", "zoo"]

#: Public callables that take no argument that can be wrong, with the reason.
EXEMPT: dict[str, str] = {
    "measure.cpu_name": "takes no arguments",
    "measure.cores": "takes no arguments",
    "measure.machine_summary": "takes no arguments",
    "tensors.cache_line_size": "takes no arguments",
    "measure.cache_sizes": "takes no arguments",
    "measure.last_level_cache": "takes no arguments",
    "roofline.streaming_store_threshold": "takes no arguments",
    "teach.bank.counts": "takes no arguments",
    "teach.timelog.start": "takes no arguments (reads NPUKIT_TIME_LOG)",
    **{f"teach.bank.{k}": "a plain record of a question's parts, checked by Question" for k in
       ("Option", "Mistake", "Instance")},
    **{f"{m}.Judgement": "a plain record returned by measure.judge" for m in ("measure", "timing")},
    **{f"machine.{k}": "a plain record returned by machine's functions" for k in ("Ceiling", "Profile", "RoofCheck")},
    **{f"shared.{k}": "takes no arguments" for k in
       ("profile", "machine", "float_accuracy", "folded", "calibration", "qdq", "weight_bytes", "latency",
        "latency_comparison", "conversions", "loop")},
    "shared.is_shipped": "a predicate: any object is an answer (False unless it is the shipped CameraNet)",
    "i18n.Message": "a str made by i18n.message, which checks its arguments",
    "i18n.setup": "the Sphinx extension's entry point, called by Sphinx with its application",
}


def _cases():
    for name in TABLES:
        table = importlib.import_module(f"bad_inputs.{name}")
        for case in table.CASES:
            yield pytest.param(case, id=f"{name}: {case.id}")


@pytest.mark.parametrize("case", list(_cases()))
def test_bad_input_raises_a_clear_error(case):
    with pytest.raises(case.exc) as info:
        case.func(*case.args, **case.kwargs)
    message = str(info.value)
    assert case.names in message, f"the message {message!r} does not name {case.names!r}"


def _public_callables(modname: str):
    module = importlib.import_module(f"npukit.{modname}")
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            if inspect.isclass(obj) and issubclass(obj, Exception):
                continue
            yield f"{modname}.{name}", obj


def test_every_public_callable_has_a_row():
    covered = set()
    for name in TABLES:
        for case in importlib.import_module(f"bad_inputs.{name}").CASES:
            f = case.func
            covered.add(f)
            covered.add(getattr(f, "__func__", f))
            owner = getattr(f, "__self__", None)
            if inspect.isclass(owner):
                covered.add(owner)
    missing = [q for m in MODULES for q, obj in _public_callables(m) if obj not in covered and q not in EXEMPT]
    assert not missing, f"public callables with no bad-input row: {missing}"


def test_table_size_is_reported(capsys):
    n = sum(len(importlib.import_module(f"bad_inputs.{name}").CASES) for name in TABLES)
    print(f"bad-input table: {n} rows over {len(TABLES)} modules")
    assert n > 0
