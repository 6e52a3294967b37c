"""Checkers for lab 9, "Real NPUs, measured" (labs/09_npus.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and
compares it with a reference written here (the arithmetic of the chapter's
conventions, spelled out), never with :mod:`npukit.npus`, whose functions —
and this module — are off limits while the learner's function runs; see
:mod:`npukit.teach.core`.

The prediction check compares the learner's prediction with a published
measurement. Nothing it decides on can be changed from the notebook: it
reads the shipped table's file itself and refuses it unless its SHA-256 is
the one written here, and it keeps its own copies of the devices' cited
figures and of the models' counts (:data:`_DEVICES`, :data:`_WORK`; a test
holds them equal to :mod:`npukit.npus`). The module's attributes are sealed
(:mod:`npukit.teach.guard`) and these copies are tuples, so neither
replacing nor editing them goes unnoticed.

A wrong answer that is exactly what a typical mistake gives is named: a
MAC read as one operation, the bandwidth left out, peak TOPS alone, float
weights counted as FP32, the roofline's two times added instead of the
larger taken, classifier-free guidance forgotten.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Callable

from .core import CheckFailed, NotAttempted, _is_number, _plain, _rng, check, learner_call

__all__ = ["check_compulsory_bytes", "check_roofline_seconds", "check_npu_prediction", "check_seconds_per_image"]

#: precision → (bytes per weight, bytes per activation) on the NPU, as the chapter states them.
_BYTES = (("float", (2, 2)), ("w8a8", (1, 1)), ("w8a16", (1, 2)))

#: The shipped table (npukit/data/), and the SHA-256 of the file the chapter was written from.
_TABLE = Path(__file__).resolve().parent.parent / "data" / "qai_hub_models.json"
_TABLE_SHA256 = "3493392119d2acc53432ff08c068b3596e81416c5b0bd0ae5b59bcd324767c0d"

#: The devices' cited peak (TOPS) and DRAM bandwidth (GB/s): chapter 9's Table 9.5.
_DEVICES = (("Snapdragon X Elite CRD", 45.0, 136.0), ("Snapdragon X2 Elite CRD", 80.0, 228.0),
            ("Samsung Galaxy S25", 77.0, 84.8), ("Snapdragon 7 Gen 4 QRD", 24.0, 67.2))

#: The classifiers' MACs, weight elements read and input + output elements (npukit.npus.work's counts).
_WORK = (("mobilenet_v2", 300774272, 3539054, 151528), ("squeezenet1_1", 349151936, 1235496, 151528),
         ("efficientnet_b0", 385814752, 5330564, 151528), ("resnet18", 1814073344, 11699112, 151528),
         ("resnet50", 4089184256, 25610152, 151528), ("resnet101", 7801405440, 44654504, 151528),
         ("convnext_tiny", 4455531264, 28589205, 151528))


def _library() -> tuple:
    from .. import npus

    return (npus,)


def _number(x: Any) -> bool:
    """A real number of any kind a NumPy computation returns (np.int64 from np.sum too), and finite."""
    return _is_number(x) and math.isfinite(x)


def _sizes(precision: str) -> tuple[int, int]:
    return dict(_BYTES)[precision]


# ---- exercise 1: the bytes a run must move --------------------------------------------------------


def _counts(rng: Any) -> list:
    """A random graph's op_counts (itemsize 1: sizes are element counts), a Gather lookup in some."""
    from ..graphs import OpCount

    out = []
    for i in range(int(rng.integers(3, 9))):
        op = str(rng.choice(["Conv", "Conv", "MatMul", "Gemm", "Relu", "Add", "Gather"]))
        y = int(rng.integers(100, 200_000))
        params = int(rng.integers(10, 3_000_000)) if op in ("Conv", "MatMul", "Gemm", "Gather") else 0
        a_in = 0 if op == "Gather" else int(rng.integers(100, 400_000))
        macs = y * int(rng.integers(8, 600)) if op in ("Conv", "MatMul", "Gemm") else 0
        out.append(OpCount(f"{op.lower()}{i}", op, macs, 2 * macs + y, params, a_in, y,
                           (2 * macs + y) / (params + a_in + y), (1, y)))
    return out


def _compulsory(counts: list, io: int, precision: str) -> int:
    wb, ab = _sizes(precision)
    weights = sum(c.act_bytes_out if c.op_type == "Gather" else c.param_bytes for c in counts)
    return weights * wb + io * ab


def _bytes_hint(got: Any, want: int, counts: list, io: int, precision: str) -> str | None:
    if not _number(got):
        return "return the number of bytes as an int."
    wb, ab = _sizes(precision)
    params = sum(c.param_bytes for c in counts)
    rows = sum(c.act_bytes_out if c.op_type == "Gather" else c.param_bytes for c in counts)
    acts = sum(c.act_bytes_in + c.act_bytes_out for c in counts)
    if precision == "float" and got in (rows * 4 + io * 4, rows * 4 + io * 2):
        return "a float run executes in FP16 on the NPU: 2 bytes per weight and per activation, not 4."
    if got == rows * wb + acts * ab or got == rows * wb + (acts + io) * ab:
        return ("the compulsory bytes are the weights and the model's own input and output; the activations "
                "between layers can stay on chip, so they are not part of the lower bound.")
    if got == params * wb + io * ab and params != rows:
        return ("a Gather (an embedding lookup) reads only the rows it outputs, not its whole table: count its "
                "output elements.")
    if precision == "w8a16" and got == rows + io:
        return "w8a16 means 8-bit weights and 16-bit activations: the input and output are 2 bytes per element."
    if got == rows * wb:
        return "add the model's input and output (the io elements) at the activation size."
    return None


def check_compulsory_bytes(fn: Callable[[list, int, str], int]) -> None:
    """Check ``fn(counts, io, precision) -> bytes`` that one inference must move at the least.

    ``counts`` are :func:`npukit.graphs.op_counts` records made with
    ``itemsize=1`` (so their byte fields count elements), ``io`` the graph's
    input plus output elements, ``precision`` ``"float"`` (FP16 on the NPU),
    ``"w8a8"`` or ``"w8a16"``. The answer: every weight read once (a Gather
    reads only the rows it outputs) at the weight size, plus ``io`` at the
    activation size; an integer of any kind (``np.int64`` from ``np.sum`` too).
    Fresh cases: 30 random graphs of 3–8 nodes (Conv, MatMul, Gemm, Relu, Add
    and Gather lookups), every precision. Reference: that sum, written here.
    :mod:`npukit.npus` is refused.

    Examples
    --------
    A function that forgets the model's input and output fails, and the hint says so:

    >>> check_compulsory_bytes(lambda counts, io, precision: sum(c.param_bytes for c in counts))
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: compulsory bytes: wrong answer for input (...
    """
    rng = _rng(9101)
    cases = [(_counts(rng), int(rng.integers(1000, 700_000)), ("float", "w8a8", "w8a16")[i % 3]) for i in range(30)]

    def compare(got: Any, want: int) -> bool:
        g = _plain(got)
        return _number(g) and float(g) == want

    check("compulsory bytes", fn, cases, _compulsory, compare=compare, hint=_bytes_hint, forbid=_library())


# ---- exercise 2: the roofline bound -------------------------------------------------------------------


def _roofline(macs: float, nbytes: float, peak_tops: float, bandwidth_gbs: float) -> tuple[float, str]:
    compute, memory = 2 * macs / (peak_tops * 1e12), nbytes / (bandwidth_gbs * 1e9)
    return (compute, "compute") if compute >= memory else (memory, "memory")


def _roofline_hint(got: Any, want: tuple, macs: float, nbytes: float, peak: float, bw: float) -> str | None:
    try:
        t, limit = got
        t = float(_plain(t))
    except (TypeError, ValueError):
        return 'return a tuple (seconds, "compute" or "memory").'
    compute, memory = 2 * macs / (peak * 1e12), nbytes / (bw * 1e9)
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-6)  # noqa: E731
    if close(t, max(compute / 2, memory)) and not close(t, want[0]):
        return "a MAC is two operations (a multiply and an add), and TOPS count operations: 2·MACs / peak."
    if close(t, compute) and memory > compute:
        return (f"this layer moves more than its arithmetic: {nbytes:.3g} bytes at {bw:g} GB/s take "
                f"{memory:.3g} s, longer than the compute; the bound is the larger of the two.")
    if close(t, compute + memory):
        return "the roofline bound is the larger of the two times, not their sum (the two can overlap)."
    if close(t, want[0]) and limit != want[1]:
        return f"the time is right; the larger term is the {want[1]} one, so it is {want[1]}-bound."
    for scale, unit in ((1e3, "milliseconds"), (1e6, "microseconds")):
        if close(t, want[0] * scale):
            return f"that is the answer in {unit}: return seconds (TOPS are 10¹² op/s, GB/s 10⁹ bytes/s)."
    return None


def check_roofline_seconds(fn: Callable[[float, float, float, float], tuple[float, str]]) -> None:
    """Check ``fn(macs, nbytes, peak_tops, bandwidth_gbs) -> (seconds, "compute" | "memory")``.

    The roofline's lower bound on one inference: the larger of ``2·macs /
    (peak_tops·10¹²)`` and ``nbytes / (bandwidth_gbs·10⁹)``, and which one it
    is (a tie is ``"compute"``). Fresh cases: 40 models from a few MMACs to a
    TMAC with 1 MB–2 GB of compulsory bytes on NPUs of 5–100 TOPS and
    30–250 GB/s, both sides of the ridge, and two exact ties. Reference: that arithmetic, written
    here. :mod:`npukit.npus` is refused.

    Examples
    --------
    Adding the two times instead of taking the larger fails, with a hint:

    >>> check_roofline_seconds(lambda m, b, p, w: (2 * m / (p * 1e12) + b / (w * 1e9), "compute"))
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: roofline seconds: wrong answer for input (...
    """
    rng = _rng(9102)
    cases = []
    for _ in range(40):
        macs = float(10 ** rng.uniform(6.5, 12))
        cases.append((macs, float(macs * 10 ** rng.uniform(-3.5, -0.5)), float(rng.uniform(5, 100)),
                      float(rng.uniform(30, 250))))
    # two exact ties (every usual order of the arithmetic gives equal terms): a tie is "compute"
    cases += [(2.5e9, 1e7, 50.0, 100.0), (1e9, 5e6, 20.0, 50.0)]

    def compare(got: Any, want: tuple) -> bool:
        g = _plain(got)
        return (isinstance(g, (tuple, list)) and len(g) == 2 and _number(_plain(g[0]))
                and math.isclose(float(g[0]), want[0], rel_tol=1e-6) and isinstance(g[1], str)
                and str.__eq__(str(g[1]), want[1]) is True)

    check("roofline seconds", fn, cases, _roofline, compare=compare, hint=_roofline_hint, forbid=_library())


# ---- exercise 3: predict, then compare with the published measurement -----------------------------------


def _predict(macs: float, nbytes: float, peak_tops: float, bandwidth_gbs: float, efficiency: float) -> float:
    return max(2 * macs / (efficiency * peak_tops * 1e12), nbytes / (bandwidth_gbs * 1e9))


def _prediction_hint(got: float, macs: float, nbytes: float, peak: float, bw: float, eff: float) -> str:
    close = lambda a, b: math.isclose(a, b, rel_tol=1e-6)  # noqa: E731
    compute, memory = 2 * macs / (eff * peak * 1e12), nbytes / (bw * 1e9)
    if close(got, max(compute, memory)):
        return ("your formula gives this; the efficiency your rule chose is what is off. Take it from the models "
                "most like this one on the same device.")
    if close(got, 2 * macs / (peak * 1e12)):
        return "that is peak TOPS alone: the efficiency scales the peak the model gets."
    if close(got, max(compute / 2, memory)):
        return "a MAC is two operations: the compute time is 2·MACs / (efficiency · peak)."
    if close(got, compute) and memory > compute:
        return "the bandwidth is left out: this case moves its bytes more slowly than it computes."
    if close(got, max(compute, memory) / eff) or close(got, max(2 * macs / (peak * 1e12), memory) / eff):
        return ("the efficiency is a fraction of the peak arithmetic rate: it scales the compute time only; "
                "the bytes still take nbytes / bandwidth.")
    return (f"expected max(2·MACs / (efficiency·peak), nbytes / bandwidth) = max({compute:.4g}, {memory:.4g}) s, "
            f"got {got!r}.")


def _published() -> dict[tuple[str, str, str], float]:
    """(model, device, precision) → the fastest published ms of a run wholly on the NPU, read from the file."""
    raw = _TABLE.read_bytes()
    if hashlib.sha256(raw).hexdigest() != _TABLE_SHA256:
        raise CheckFailed(f"NPU prediction: the shipped table {_TABLE} is not the file the chapter was written "
                          "from (its SHA-256 differs). Restore it (git checkout npukit/data) and run again.")
    data = json.loads(raw)
    col = {c: i for i, c in enumerate(data["columns"])}
    names = {"MobileNet-v2": "mobilenet_v2", "SqueezeNet-1.1": "squeezenet1_1", "EfficientNet-B0": "efficientnet_b0",
             "ResNet18": "resnet18", "ResNet50": "resnet50", "ResNet101": "resnet101", "ConvNext-Tiny": "convnext_tiny"}
    best: dict[tuple[str, str, str], float] = {}
    for r in data["rows"]:
        name = names.get(r[col["component"]])
        if name is None or r[col["npu_layers"]] != r[col["total_layers"]]:
            continue
        key = (name, r[col["device"]], r[col["precision"]])
        best[key] = min(best.get(key, math.inf), float(r[col["inference_ms"]]))
    return best


def _others(published: dict, target: tuple[str, str, str]) -> dict[str, tuple[float, float]]:
    """The other classifiers on the target's device and precision: {model: (GMACs, fraction of peak delivered)}."""
    name, device, precision = target
    peak = dict((d, p) for d, p, _ in _DEVICES)[device]
    out = {}
    for model, macs, _, _ in _WORK:
        ms = published.get((model, device, precision))
        if model != name and ms is not None:
            out[model] = (macs / 1e9, 2 * macs / (ms / 1e3) / (peak * 1e12))
    return out


def _target(target: Any) -> tuple[str, str, str]:
    if not isinstance(target, tuple) or len(target) != 3 or not all(isinstance(x, str) for x in target):
        raise TypeError(f"target must be a tuple (model, device, precision) of strings, got {target!r}")
    models, devices = [m for m, *_ in _WORK], [d for d, *_ in _DEVICES]
    if target[0] not in models or target[1] not in devices or target[2] not in dict(_BYTES):
        raise ValueError(f"target must name a classifier ({', '.join(models)}), a device with cited figures "
                         f"({', '.join(devices)}) and a precision ({', '.join(dict(_BYTES))}); got {target!r}")
    return target


def _efficiency(name: str, rule: Callable, others: dict, gmacs: float) -> float:
    eff = _plain(learner_call(name, rule, {k: tuple(v) for k, v in others.items()}, gmacs, forbid=_library()))
    if not _number(eff) or not 0 < eff <= 1:
        raise CheckFailed(f"{name}: efficiency_from must return the fraction of peak you expect, a number in "
                          f"(0, 1] (0.2 for 20 %), got {eff!r}")
    return float(eff)


#: Global scales of the others' fractions the rule is probed with (its answer must scale with them).
_SCALES = (0.5, 0.7, 1.4)
#: The targets the same rule is graded on leave-one-out, and how many of them it must predict within tolerance.
_HELD_OUT = tuple((m, d, "w8a8") for d, _, _ in _DEVICES for m in ("resnet18", "resnet50", "resnet101",
                                                                     "convnext_tiny"))
_HELD_OUT_NEEDED = 12


def _follows(name: str, rule: Callable, others: dict, gmacs: float) -> float:
    """The rule's efficiency for ``others``, refused unless it follows them.

    The rule is called, in a seeded random order, on the others as given, on
    copies with every fraction scaled by each of :data:`_SCALES`, on copies with
    each model's fraction changed on its own (×0.6–1.5), and on the others in
    another order. Its answer must scale with a global scale, stay within the
    range of the fractions it was given, and not depend on the order.
    """
    rng = _rng(9107)
    items = list(others.items())
    probes: list[tuple[str, float, dict]] = [("given", 1.0, dict(items))]
    probes += [("scaled", s, {k: (g, f * s) for k, (g, f) in items}) for s in _SCALES]
    for _ in range(3):
        probes.append(("changed", math.nan, {k: (g, f * float(rng.uniform(0.6, 1.5))) for k, (g, f) in items}))
    order = [int(i) for i in rng.permutation(len(items))]
    probes.append(("reordered", 1.0, dict(items[i] for i in order)))
    got: dict[int, float] = {}
    for i in (int(j) for j in rng.permutation(len(probes))):
        got[i] = _efficiency(name, rule, probes[i][2], gmacs)
    eff = got[0]
    listed = ", ".join(f"{k} {f:.1%}" for k, (_, f) in items)
    hint = ("\n  Hint: state the efficiency as a rule applied to the others (the models most like this one: their "
            "median, their mean, the nearest in MACs …), not as a number; a number chosen after reading the target's "
            "row is the answer, not a prediction.")
    for i, (kind, s, given) in enumerate(probes):
        fractions = [f for _, f in given.values()]
        lo, hi = min(fractions), max(fractions)
        if not lo * (1 - 1e-9) <= got[i] <= hi * (1 + 1e-9):
            raise CheckFailed(f"{name}: your efficiency does not follow the other models: given fractions "
                              f"{', '.join(f'{f:.1%}' for f in fractions)} your rule gives {got[i]:.3g}, outside "
                              f"their range [{lo:.3g}, {hi:.3g}]." + hint)
        if kind in ("scaled", "reordered") and not math.isclose(got[i], eff * s, rel_tol=1e-6):
            what = (f"had each delivered {s:g}× as much it gives {got[i]:.3g}, not {eff * s:.3g}" if kind == "scaled"
                    else f"given the same models in another order it gives {got[i]:.3g}")
            raise CheckFailed(f"{name}: your efficiency does not follow the other models: from their fractions "
                              f"({listed}) your rule gives {eff:.3g}; {what}." + hint)
    return eff


def _held_out(name: str, rule: Callable, predicted: Callable, published: dict, target: tuple, tolerance: float) -> str:
    """Grade the same rule leave-one-out on :data:`_HELD_OUT`: a rule tuned to one target misses the others."""
    hits, misses = 0, []
    published = {k: v for k, v in published.items() if k != target}   # the target's row stays unseen here too
    targets = [t for t in _HELD_OUT if t in published]
    for t in targets:
        model, device, precision = t
        macs, weights, io = next((m, w, i) for n, m, w, i in _WORK if n == model)
        peak, bandwidth = next((p, b) for d, p, b in _DEVICES if d == device)
        wb, ab = _sizes(precision)
        eff = _efficiency(name, rule, _others(published, t), macs / 1e9)
        ratio = predicted(float(macs), float(weights * wb + io * ab), peak, bandwidth, eff) / (published[t] / 1e3)
        if 1 / tolerance <= ratio <= tolerance:
            hits += 1
        else:
            misses.append(f"{model} on {device} {ratio:.2g}×")
    needed = min(_HELD_OUT_NEEDED, len(targets))
    if hits < needed:
        raise CheckFailed(f"{name}: right for the target, but the same rule, applied leave-one-out to the other "
                          f"large classifiers (INT8, four devices), predicts only {hits} of {len(targets)} within "
                          f"{tolerance:g}× ({needed} needed); it misses {'; '.join(misses)}.\n  Hint: a rule tuned "
                          "to one model's published row is not a rule; take the efficiency from the models most "
                          "like the one predicted, the same way for every target.")
    return f"predicts {hits} of {len(targets)} other large classifiers within {tolerance:g}× leave-one-out"


def check_npu_prediction(fn: Callable[[float, float, float, float, float], float],
                         efficiency_from: Callable[[dict, float], float], *,
                         target: tuple[str, str, str] = ("resnet50", "Snapdragon X Elite CRD", "w8a8"),
                         tolerance: float = 2.0) -> None:
    """Check a latency prediction from the roofline with an efficiency taken from other models, against a real NPU.

    ``fn(macs, nbytes, peak_tops, bandwidth_gbs, efficiency) -> seconds``
    predicts ``max(2·macs / (efficiency·peak), nbytes / bandwidth)``: the
    compute roof scaled by the fraction of peak the learner expects.
    ``efficiency_from(others, gmacs) -> fraction`` states that fraction as a
    rule applied to the *other* models: ``others`` maps each other classifier
    published wholly on the NPU on the target's device and precision to
    ``(GMACs, fraction of peak it delivered)``, the target left out, and
    ``gmacs`` is the target's work. The check

    1. calls the rule on the others (the target's published time is never
       passed) and on copies of them, in a seeded random order: every
       fraction scaled by 0.5, 0.7 and 1.4 (the answer must scale with them),
       each fraction changed on its own (the answer must stay within the
       range of the fractions given), another order (the answer must not
       change). A constant fails, and so does a rule that counts its calls or
       treats one copy apart; code written to recognise the target's inputs
       (up to the probes' changes) and return a number read from its row is
       not refused by any check;
    2. predicts the target (model, device, precision) with the learner's
       ``fn``, the chapter's counts and the device's cited figures, and
       requires it within a factor ``tolerance`` of AI Hub's published
       latency (two by default: the fraction one device delivers varies about
       that much between large models, chapter 9 shows);
    3. checks ``fn`` against the formula on 30 fresh cases (both roofs,
       efficiencies 5–60 %), which separates the typical mistakes: peak TOPS
       alone, a MAC read as one operation, the bandwidth left out.
    4. applies the same rule leave-one-out to the other large classifiers in
       INT8 on the four devices (:data:`_HELD_OUT`, the target's row removed
       from every ``others``) and requires :data:`_HELD_OUT_NEEDED` of them
       within ``tolerance``: a rule tuned to the one target's row misses them.
       A rule fitted to the target that also predicts the held-out models is
       not refused; it is then a rule.

    The published time comes from the shipped table's file, read here and
    refused unless its SHA-256 matches; the devices' figures and the models'
    counts are this module's own copies. :mod:`npukit.npus` is refused.

    Examples
    --------
    A rule that returns a number instead of using the other models fails:

    >>> def mine(macs, nbytes, peak_tops, bandwidth_gbs, efficiency):
    ...     return max(2 * macs / (efficiency * peak_tops * 1e12), nbytes / (bandwidth_gbs * 1e9))
    >>> check_npu_prediction(mine, lambda others, gmacs: 0.2)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: NPU prediction: your efficiency does not follow the other models...
    """
    name = "NPU prediction"
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)):
        raise TypeError(f"tolerance must be a number (a factor > 1), got {type(tolerance).__name__}")
    if not 1 < tolerance < math.inf:
        raise ValueError(f"tolerance must be a factor > 1, got {tolerance!r}")
    model, device, precision = _target(target)
    if efficiency_from is None or efficiency_from is Ellipsis:
        raise NotAttempted(f"{name}: not attempted yet (write efficiency_from first).")
    if not callable(efficiency_from):
        raise TypeError(f"efficiency_from must be your function (a callable), got {type(efficiency_from).__name__}")
    macs, weights, io = next((m, w, i) for n, m, w, i in _WORK if n == model)
    peak, bandwidth = next((p, b) for d, p, b in _DEVICES if d == device)
    wb, ab = _sizes(precision)
    args = (float(macs), float(weights * wb + io * ab), peak, bandwidth)

    published = _published()
    others = _others(published, target)
    eff = _follows(name, efficiency_from, others, macs / 1e9)

    def predicted(*case: Any) -> float:
        got = _plain(learner_call(name, fn, *case, forbid=_library()))
        if not _number(got) or got <= 0:
            raise CheckFailed(f"{name}: return a time in seconds (a positive number), got {got!r}")
        return float(got)

    guess, measured = predicted(*args, eff), published[target] / 1e3
    if not 1 / tolerance <= guess / measured <= tolerance:
        raise CheckFailed(
            f"{name}: your rule gave an efficiency of {eff:.1%} and you predicted {guess * 1e3:.3g} ms for {model} "
            f"({precision}) on {device}; AI Hub published {measured * 1e3:.3g} ms, "
            f"{max(guess, measured) / min(guess, measured):.1f}× off, beyond the {tolerance:g}× allowed.\n  Hint: "
            f"{_prediction_hint(guess, *args, eff)}")
    rng = _rng(9103)
    for _ in range(30):
        m = float(10 ** rng.uniform(7, 12))
        case = (m, float(m * 10 ** rng.uniform(-3, -0.3)), float(rng.uniform(10, 90)), float(rng.uniform(40, 230)),
                float(rng.uniform(0.05, 0.6)))
        got, want = predicted(*case), _predict(*case)
        if not math.isclose(got, want, rel_tol=1e-6):
            raise CheckFailed(f"{name}: right within {tolerance:g}× for {model}, but for macs={case[0]:.4g}, "
                              f"nbytes={case[1]:.4g}, peak_tops={case[2]:.4g}, bandwidth_gbs={case[3]:.4g}, "
                              f"efficiency={case[4]:.3g} you return {got:.4g} s where the formula gives {want:.4g} s."
                              f"\n  Hint: {_prediction_hint(got, *case)}")
    if not math.isclose(guess, _predict(*args, eff), rel_tol=1e-6):
        raise CheckFailed(f"{name}: for {model} your function returns {guess * 1e3:.4g} ms, but the formula with "
                          f"your efficiency gives {_predict(*args, eff) * 1e3:.4g} ms: a prediction must come from "
                          "the stated efficiency, the same way for every model.")
    held = _held_out(name, efficiency_from, predicted, published, target, tolerance)
    print(f"✓ {name}: from {', '.join(others)} your rule expects {eff:.1%} of the peak; you predicted "
          f"{guess * 1e3:.3g} ms for {model} ({precision}) on {device}, AI Hub published {measured * 1e3:.3g} ms "
          f"(within {tolerance:g}×); the rule follows the other models, and {held}; 30 fresh cases agree.")


# ---- exercise 4: Stable Diffusion's time per image ---------------------------------------------------------


class _PerImage(float):
    """Seconds per image with the empty prompt's encoding cached; ``uncached`` adds it to every image."""

    uncached: float

    def __repr__(self) -> str:
        if self.uncached == float(self):
            return f"{float(self)!r}"
        return f"{float(self)!r} (or {self.uncached!r} if the empty prompt is encoded for every image)"


def _per_image(t_text: float, t_unet: float, t_vae: float, steps: int, guidance: bool) -> _PerImage:
    g = 2 if guidance else 1
    out = _PerImage(t_text + g * steps * t_unet + t_vae)
    out.uncached = float(out) + (t_text if guidance else 0.0)
    return out


def _same_image(got: Any, want: _PerImage) -> bool:
    g = _plain(got)
    return _number(g) and any(math.isclose(float(g), w, rel_tol=1e-9) for w in (float(want), want.uncached))


def _image_hint(got: Any, want: _PerImage, t_text: float, t_unet: float, t_vae: float, steps: int,
                guidance: bool) -> str | None:
    if not _number(_plain(got)):
        return "return the seconds as a number."
    got = float(_plain(got))
    close = lambda a: math.isclose(got, a, rel_tol=1e-9)  # noqa: E731
    if guidance and any(close(k * t_text + steps * t_unet + t_vae) for k in (1, 2)):
        return ("with classifier-free guidance every step runs the UNet twice (with the prompt and with the empty "
                "prompt).")
    if not guidance and close(2 * t_text + steps * t_unet + t_vae):
        return "without guidance there is no empty prompt: the text encoder runs once."
    if any(close(w + (steps - 1) * t_vae) for w in (float(want), want.uncached)):
        return "the VAE decoder runs once per image, after the last step, not once per step."
    g = 2 if guidance else 1
    if any(close(k * steps * t_text + g * steps * t_unet + t_vae) for k in (1, g)):
        return "the text encoder runs before the steps, not at every step."
    return None


def check_seconds_per_image(fn: Callable[[float, float, float, int, bool], float]) -> None:
    """Check ``fn(t_text, t_unet, t_vae, steps, guidance) -> seconds`` for one Stable Diffusion image.

    The text encoder encodes the prompt once, the UNet runs once per step —
    twice with classifier-free guidance (with the prompt and with the empty
    prompt) — and the VAE decoder once. The empty prompt's encoding is the
    same for every image, so an application computes it once and caches it
    (AI Hub's does); a function that encodes it for every image (one more
    ``t_text`` with guidance) is accepted too. Fresh cases: 30 with component
    times from 1 ms to 5 s, 1–50 steps, with and without guidance. Reference:
    that sum, written here. :mod:`npukit.npus` (its ``pipeline_seconds``) is
    refused.

    Examples
    --------
    Running the UNet once per step whatever the guidance fails, and the hint says why:

    >>> check_seconds_per_image(lambda te, u, v, n, g: te + n * u + v)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: seconds per image: wrong answer for input (...
    """
    rng = _rng(9104)
    cases = [(float(10 ** rng.uniform(-3, -1)), float(10 ** rng.uniform(-2.5, 0.7)), float(10 ** rng.uniform(-2, 0.5)),
              int(rng.integers(1, 51)), bool(i % 2)) for i in range(30)]
    check("seconds per image", fn, cases, _per_image, compare=_same_image, hint=_image_hint, forbid=_library())
