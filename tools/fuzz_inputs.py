"""Hostile-input fuzz of every public npukit callable: what does bad input get back?

The bad-input table (``tests/bad_inputs/``) holds the cases someone thought
of; this tool looks for the ones nobody did. It takes one *valid* call of each
public function, method and record (recorded while the package's own doctests
run), then replaces one argument at a time with a hostile value chosen from
the valid one's type: a bool for an int, a float for an int, NaN and ±inf,
negative, zero and 10**12, None, a string for a flag or a sequence, complex,
0-d and empty arrays, other dtypes, a cyclic or dangling ONNX graph. It also
passes a non-contiguous and a read-only copy of each array, whose result must
equal the original call's. Each call is classified:

* ``clear``: ``TypeError``/``ValueError`` whose message names the argument;
* ``UNNAMED``: such an error whose message does not name it;
* ``OBSCURE``: any other exception (``AttributeError``, ``MemoryError`` …);
* ``HANG``: still running after the time limit;
* ``SILENT``: it returned — a valid input, or a silent wrong result: read them;
* ``EQUIV-DIFF``: a non-contiguous or read-only copy gave another result.

Usage (from the repository root; writes nothing in the repository)::

    .venv/bin/python tools/fuzz_inputs.py record OUT_DIR        # doctests → OUT_DIR/calls.pkl
    .venv/bin/python tools/fuzz_inputs.py run OUT_DIR [PREFIX …] # e.g. quant deploy.compile
    .venv/bin/python tools/fuzz_inputs.py report OUT_DIR [PREFIX] [KIND,KIND]

``run`` starts one process per top-level module, in a scratch directory (a
fuzzed path argument creates files), with a 12 GiB address-space limit so a
mistyped size fails fast instead of filling the machine. A full run takes
about half an hour on two cores. Not part of ``make test``.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import doctest
import functools
import importlib
import inspect
import io
import json
import math
import pathlib
import pickle
import signal
import subprocess
import sys
import tempfile
import time
import warnings

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: Modules fuzzed beyond the bad-input table's list (checkers without a table of their own).
EXTRA = ["teach.quant", "teach.tensors", "teach.layouts", "teach.graphs", "teach.gemm"]
#: Too slow to call hundreds of times (training, the whole closed loop).
SKIP = {"train.train", "train.reproduce", "train.main", "capstone.closed_loop"}


def _modules() -> list[str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_bad_inputs import MODULES

    return list(MODULES) + [m for m in EXTRA if m not in MODULES]


# ---- record: one valid call of each public callable ------------------------------------------------


def record(out: pathlib.Path) -> None:
    names = _modules()
    mods = [importlib.import_module(f"npukit.{m}") for m in names]
    calls: dict[str, bytes] = {}

    def wrap(qual: str, f, kind: str):
        @functools.wraps(f)
        def w(*a, **k):
            if qual not in calls:
                with contextlib.suppress(Exception):
                    calls[qual] = pickle.dumps((kind, a[1:] if kind == "init" else a, k))
            return f(*a, **k)
        return w

    for m, mod in zip(names, mods):
        for name in getattr(mod, "__all__", []):
            obj, q = getattr(mod, name), f"{m}.{name}"
            if inspect.isfunction(obj):
                setattr(mod, name, wrap(q, obj, "f"))
            elif inspect.isclass(obj) and not issubclass(obj, Exception):
                if "__init__" in vars(obj):
                    obj.__init__ = wrap(q, obj.__init__, "init")
                for k, v in list(vars(obj).items()):
                    if k.startswith("_"):
                        continue
                    if isinstance(v, classmethod):
                        setattr(obj, k, classmethod(wrap(f"{q}.{k}", v.__func__, "cm")))
                    elif isinstance(v, staticmethod):
                        setattr(obj, k, staticmethod(wrap(f"{q}.{k}", v.__func__, "sm")))
                    elif inspect.isfunction(v):
                        setattr(obj, k, wrap(f"{q}.{k}", v, "m"))
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for mod in mods:
        for t in doctest.DocTestFinder().find(mod, mod.__name__):
            with contextlib.redirect_stdout(io.StringIO()):
                runner.run(t, out=lambda s: None)
    out.mkdir(parents=True, exist_ok=True)
    (out / "calls.pkl").write_bytes(pickle.dumps(calls))
    print(f"recorded {len(calls)} callables in {out / 'calls.pkl'}")


# ---- run: hostile values, one argument at a time ------------------------------------------------------


class _Timeout(BaseException):
    pass


def _onnx_variants(m):
    """A two-node cycle, a cycle through the whole graph, a dangling input, and wrong types."""
    import onnx

    out = []
    inits = {i.name for i in m.graph.initializer}
    if len(m.graph.node) >= 2:
        for label, src in (("cyclic(first<-last)", -1), ("cyclic(n0<-n1)", 1)):
            c = onnx.ModelProto()
            c.CopyFrom(m)
            first, later = c.graph.node[0], c.graph.node[src if src > 0 else len(c.graph.node) - 1]
            k = next((i for i, t in enumerate(first.input) if t not in inits), None)
            if k is not None:
                first.input[k] = later.output[0]
                out.append((label, c))
    d = onnx.ModelProto()
    d.CopyFrom(m)
    d.graph.node[len(d.graph.node) // 2].input[0] = "dangling_tensor"
    return out + [("dangling input", d), ("'model.onnx'", "model.onnx"), ("None", None), ("b'x'", b"x")]


def _hostile(v):
    """(label, value) pairs to try instead of the valid value ``v``."""
    import numpy as np

    def labelled(values):
        return [(f"array{x.shape}{x.dtype}" if isinstance(x, np.ndarray) else repr(x)[:60], x) for x in values]

    if isinstance(v, (bool, np.bool_)):
        return labelled([1, 0, None, "False", "True", 1.0])
    if isinstance(v, (int, np.integer)):
        return labelled([True, False, 2.5, float(v) + 0.5, math.nan, -1, 0, 10**12, -10**12, None, "3", 1 + 1j,
                         float(v)])
    if isinstance(v, (float, np.floating)):
        return labelled([True, math.nan, math.inf, -math.inf, -1.0, 0.0, None, "1.0", 1 + 1j, 1e300, -1e300])
    if isinstance(v, str):
        return labelled([None, 3, b"x", "", "bogus", v.upper() if v.upper() != v else v.lower(), v + " ", True])
    if v is None:
        return labelled([0, -1, "x", False, True, 1.5, math.nan, [], b"x", 10**12])
    if isinstance(v, (tuple, list)):
        out = ["abc", None, type(v)(), 3]
        if v:
            t = type(v)
            out += [t([None] * len(v)), t([True] * len(v)), t([-1] * len(v)), t([2.5] * len(v)),
                    t([math.nan] * len(v)), t([10**12] * len(v)), t(list(v) * 2), t(list(v)[:1]), t([v[0]] * len(v)),
                    t(reversed(v)), set(map(repr, v)), {"a": v}]
        return labelled(out)
    if isinstance(v, np.ndarray):
        out = [v.tolist() if v.size < 10000 else "a list", None, "abc", np.array(1.0),
               np.zeros((0,) + v.shape[1:], v.dtype), v[None], v.reshape(-1) if v.ndim > 1 else v.reshape(1, -1),
               v.astype(np.complex64) + 1j]
        out += [v.astype(dt) for dt in (np.float64, np.float16, np.int64, np.int8, np.uint8, np.bool_, np.float32,
                                        np.int32) if v.dtype != dt]
        if v.dtype.kind == "f" and v.size:
            for bad in (np.nan, np.inf):
                a = v.copy()
                a.flat[0] = bad
                out.append(a)
            out.append((v * 1e30).astype(v.dtype))
        if v.dtype.kind in "iu" and v.size:
            for bad in (np.iinfo(v.dtype).max, np.iinfo(v.dtype).min):
                a = v.copy()
                a.flat[0] = bad
                out.append(a)
        big = np.repeat(v[..., None], 2, axis=-1)[..., 0] if v.ndim else v
        ro = v.copy()
        ro.flags.writeable = False
        return labelled(out) + [("EQUIV:noncontig", big), ("EQUIV:readonly", ro)]
    if isinstance(v, dict):
        return labelled([None, [], "abc", {"bogus": 1}, {}, {1: 2}])
    if type(v).__name__ == "ModelProto":
        from npukit.models import CameraNet

        return [("ONNX:" + n, m) for n, m in _onnx_variants(v)] + [("CameraNet", CameraNet.pretrained())]
    if callable(v) and not inspect.isclass(v):
        return labelled([None, 3, "fn"])
    return labelled([None, "x", 3])


def _same(a, b) -> bool | None:
    import numpy as np

    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "__dataclass_fields__") and type(a) is type(b):
        return all(_same(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return bool(np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True))
        r = a == b
        return bool(r) or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    except Exception:
        return None


def _call(f, args, kwargs, limit: float):
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return "ok", f(*args, **kwargs)
    except _Timeout:
        return "hang", None
    except BaseException as exc:  # noqa: BLE001 (every outcome is a result here)
        return "exc", exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _resolve(q: str):
    parts = q.split(".")
    for i in range(len(parts), 0, -1):
        with contextlib.suppress(ImportError):
            obj = importlib.import_module("npukit." + ".".join(parts[:i]))
            break
    for p in parts[i:]:
        obj = getattr(obj, p)
    return obj


def _fuzz_one(q: str, blob: bytes, out) -> None:
    kind, args, kwargs = pickle.loads(blob)
    f = _resolve(q)
    if kind == "m":
        self, args = args[0], args[1:]
        f = getattr(self, f.__name__)
    sig = inspect.signature(f)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return
    t0 = time.perf_counter()
    status, base = _call(f, *copy.deepcopy((bound.args, bound.kwargs)), 60)
    if status != "ok":
        return
    limit = max(4.0, 6 * (time.perf_counter() - t0))
    params = [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    var = next((p for p in sig.parameters.values() if p.kind == p.VAR_POSITIONAL), None)
    for p in params:
        valid = bound.arguments.get(p.name, p.default)
        if valid is inspect.Parameter.empty:
            continue
        for label, value in _hostile(valid):
            given = copy.deepcopy({k: v for k, v in bound.arguments.items() if k != p.name})
            given[p.name] = value
            positional = [given[x.name] for x in params if x.kind in (x.POSITIONAL_ONLY, x.POSITIONAL_OR_KEYWORD)
                          and x.name in given] if var is not None else [given[x.name] for x in params
                                                                        if x.kind == x.POSITIONAL_ONLY and x.name in given]
            keyword = {x.name: given[x.name] for x in params if x.name in given
                       and (x.kind == x.KEYWORD_ONLY or (var is None and x.kind == x.POSITIONAL_OR_KEYWORD))}
            if var is not None and var.name in bound.arguments:
                positional += list(bound.arguments[var.name])
            status, r = _call(f, positional, keyword, limit)
            rec = {"q": q, "p": p.name, "v": label}
            if status == "ok":
                if label.startswith("EQUIV:"):
                    s = _same(r, base)
                    rec["o"] = "equiv-same" if s else ("EQUIV-DIFF" if s is False else "equiv-?")
                else:
                    rec["o"], rec["r"] = "SILENT", repr(r)[:160]
            elif status == "hang":
                rec["o"] = "HANG"
            else:
                msg = str(r)[:300]
                if isinstance(r, (TypeError, ValueError)):
                    rec["o"] = "clear" if p.name in msg else "UNNAMED"
                else:
                    rec["o"] = f"OBSCURE:{type(r).__name__}"
                rec["m"] = msg
            out.write(json.dumps(rec) + "\n")
            out.flush()


def run_module(out_dir: pathlib.Path, prefixes: list[str]) -> None:
    import resource

    warnings.filterwarnings("ignore")
    resource.setrlimit(resource.RLIMIT_AS, (12 * 2**30, 12 * 2**30))

    def alarm(*_):
        raise _Timeout()

    signal.signal(signal.SIGALRM, alarm)
    calls = pickle.loads((out_dir / "calls.pkl").read_bytes())
    with open(out_dir / f"out_{'_'.join(prefixes)}.jsonl", "w") as out:
        for q, blob in calls.items():
            if q not in SKIP and any(q == p or q.startswith(p + ".") for p in prefixes):
                _fuzz_one(q, blob, out)


def run(out_dir: pathlib.Path, prefixes: list[str]) -> None:
    tops = prefixes or sorted({q.split(".")[0] for q in pickle.loads((out_dir / "calls.pkl").read_bytes())})
    with tempfile.TemporaryDirectory() as scratch:
        for top in tops:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, __file__, "_module", str(out_dir.resolve()), top], cwd=scratch,
                           timeout=3000, check=False)
            print(f"{top}: {time.perf_counter() - t0:.0f} s", flush=True)


def report(out_dir: pathlib.Path, prefix: str = "", kinds: str = "") -> None:
    rows = [json.loads(line) for f in sorted(out_dir.glob("out_*.jsonl")) for line in f.open()]
    rows = [r for r in rows if r["q"].startswith(prefix)]
    print(collections.Counter(r["o"].split(":")[0] for r in rows))
    wanted = set(kinds.split(",")) if kinds else None
    for r in rows:
        o = r["o"].split(":")[0]
        if r["o"] in ("clear", "equiv-same") or (wanted and o not in wanted):
            continue
        print(r["q"], "|", r["p"], "|", r["v"][:50], "|", r["o"], "|", " ".join(r.get("r", r.get("m", "")).split())[:110])


if __name__ == "__main__":
    cmd, rest = sys.argv[1], sys.argv[2:]
    if cmd == "record":
        record(pathlib.Path(rest[0]))
    elif cmd == "run":
        run(pathlib.Path(rest[0]), rest[1:])
    elif cmd == "_module":
        run_module(pathlib.Path(rest[0]), rest[1:])
    elif cmd == "report":
        report(pathlib.Path(rest[0]), *rest[1:3])
    else:
        sys.exit(__doc__)
