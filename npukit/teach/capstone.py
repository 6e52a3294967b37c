"""Checkers for lab 8, "The minimal closed loop" (labs/08_capstone.ipynb).

Each ``check_*`` runs the learner's stage of the loop on fresh seeded cases and
closes it the way chapter 8 closes its stages: against an independent
reference (the NumPy network, ``onnx.reference``, a stopwatch the checker
controls, plain arithmetic), never against ``npukit.capstone``, which the
checks refuse. See :mod:`npukit.teach.core`.
"""

from __future__ import annotations

import json
import numbers
import sys
import time
from collections import Counter
from typing import Any, Callable

import numpy as np

from . import retime
from .core import CheckFailed, LearnerError, NotAttempted, _fresh_rng, _plain, _rng, around, learner_call

__all__ = ["check_export_folded", "check_qdq", "check_warm_latency", "check_roofline_bounds",
           "check_variant_prediction"]


# What the timing and prediction checks rely on outside npukit and NumPy (which the seal watches): bound now,
# and compared before each of those checks, so a cell that replaced them (a stopped clock, a faked subprocess)
# cannot decide the check.
_clock, _sleep = time.perf_counter, time.sleep
_STDLIB = ("time", "statistics", "subprocess", "_posixsubprocess", "os", "posix", "json", "json.decoder",
           "json.scanner", "marshal", "selectors", "select", "io", "types")


def _stdlib_snapshot() -> tuple:
    """``(where, module or class, ((name, value), ...))`` for each, as tuples (nothing in it can be changed in place)."""
    import json.decoder  # noqa: F401  (loaded so it is recorded)
    import subprocess

    out = []
    for name in _STDLIB:
        mod = sys.modules.get(name)
        if mod is not None:
            out.append((name, mod, tuple((k, v) for k, v in list(vars(mod).items()) if callable(v))))
    for cls in (subprocess.Popen, subprocess.CompletedProcess):
        out.append((f"subprocess.{cls.__name__}", cls, tuple(vars(cls).items())))
    return tuple(out)


def _stdlib_unchanged(name: str) -> None:
    """Refuse to run when a cell replaced a standard-library function this module relies on."""
    for where, owner, attrs in _STDLIB_SEAL:
        if isinstance(owner, type(sys)) and sys.modules.get(where, owner) is not owner:
            raise CheckFailed(f"{name}: sys.modules[{where!r}] was replaced, so this check cannot be trusted. Remove "
                              "the change, restart the kernel and run the notebook again.")
        now = vars(owner)
        for key, value in attrs:
            if now.get(key) is not value:
                raise CheckFailed(f"{name}: {where}.{key} was replaced after npukit.teach was imported, so this check "
                                  "cannot be trusted. Remove the change, restart the kernel and run the notebook again.")


_STDLIB_SEAL = _stdlib_snapshot()


def _forbid(*extra: Any) -> tuple:
    """npukit.capstone (the loop itself) and this module's references; not the stand-ins handed to the learner."""
    from .. import capstone

    here = sys.modules[__name__]
    refs = [getattr(here, k) for k in ("_run", "_onnx_quantize", "_bounds_reference", "_check_layer", "_sealed",
                                       *__all__)]
    return (capstone, *refs, *extra)


def _first_wrong(got: np.ndarray, want: np.ndarray, close: bool = True) -> str:
    bad = ~np.isclose(got, want, rtol=1e-4, atol=1e-4) if close else got != want
    i = tuple(int(k) for k in np.argwhere(bad)[0])
    show = (lambda v: f"{float(v):.6g}") if close else (lambda v: f"{int(v)}")
    return f"first wrong element at index {i}: expected {show(want[i])}, got {show(got[i])}"


def _random_net(rng: np.random.Generator) -> Any:
    """A CameraNet of random widths and input size, with non-trivial BatchNorm statistics."""
    from ..models import CameraNet

    blocks = [(int(rng.integers(4, 33)), int(rng.integers(1, 3))) for _ in range(int(rng.integers(1, 4)))]
    net = CameraNet(stem=int(rng.integers(4, 17)), blocks=blocks, size=int(rng.choice([16, 24, 32, 40])),
                    seed=int(rng.integers(10_000)))
    for layer in net.layers:
        if layer.op == "BatchNormalization":
            c, p = layer.cout, net.params
            gamma, var = rng.uniform(0.5, 1.5, c), rng.uniform(0.5, 2.0, c)
            # a few near-dead channels: variance of ε's order (so a fold that drops or changes ε shows), and a
            # scale as small, so their outputs stay of the usual size
            dead = rng.choice(c, size=max(1, c // 8), replace=False)
            var[dead] = rng.uniform(1e-5, 4e-5, len(dead))
            gamma[dead] *= np.sqrt(var[dead])
            p[f"{layer.name}.scale"] = gamma.astype(np.float32)
            p[f"{layer.name}.bias"] = rng.normal(0, 0.2, c).astype(np.float32)
            p[f"{layer.name}.mean"] = rng.normal(0, 0.3, c).astype(np.float32)
            p[f"{layer.name}.var"] = var.astype(np.float32)
    return net


def _model(got: Any, name: str) -> Any:
    import onnx

    if not isinstance(got, onnx.ModelProto):
        raise CheckFailed(f"{name}: return the ONNX model (an onnx.ModelProto), got {type(got).__name__}")
    try:
        onnx.checker.check_model(got, full_check=True)
    except Exception as exc:  # onnx raises several error types
        raise CheckFailed(f"{name}: your model does not pass onnx.checker: {str(exc).splitlines()[0][:200]}") from None
    return got


def _run(model: Any, images: np.ndarray) -> np.ndarray:
    """Logits of ``model`` under onnx.reference (a QDQ model of an older opset is converted to opset 21 first)."""
    from onnx import version_converter
    from onnx.reference import ReferenceEvaluator

    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=21)
    if opset < 19 and any(n.op_type == "DequantizeLinear" for n in model.graph.node):
        model = version_converter.convert_version(model, 21)   # onnx.reference implements Q/DQ from opset 19
    ev, name = ReferenceEvaluator(model), model.graph.input[0].name
    return np.concatenate([ev.run(None, {name: im[None]})[0] for im in images])


def check_export_folded(fn: Callable[[Any], Any]) -> None:
    """Check ``fn(net) -> onnx.ModelProto``: ``net`` exported with a batch of 1 and its BatchNorms folded.

    Fresh cases: 4 CameraNets of random widths (1–3 blocks), input sizes
    16–40 and random BatchNorm statistics, so a fold that is skipped or wrong
    changes the answer. The model must pass ``onnx.checker``, have the fixed
    input shape (1, 3, size, size), no BatchNormalization and one Conv per
    convolution, and its logits under ``onnx.reference`` must equal the NumPy
    network's on two fresh images (1e-4). ``npukit.capstone`` is refused.

    Examples
    --------
    >>> check_export_folded(lambda net: net.to_onnx(batch=1))   # exported, not folded
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: export and fold: for CameraNet(stem=14, blocks=[(10, 1), (9, 2)], num_classes=8, size=16) your model still has 5 BatchNormalization nodes: fold them into the convolutions (chapter 3).
    """
    rng = _rng(8101)
    name = "export and fold"
    for _ in range(4):
        net = _random_net(rng)
        images = rng.random((2, 3, net.size, net.size), dtype=np.float32)
        what = f"{net!r}"
        model = _model(learner_call(name, fn, net, forbid=_forbid()), name)
        dims = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in
                model.graph.input[0].type.tensor_type.shape.dim]
        if dims != [1, 3, net.size, net.size]:
            raise CheckFailed(f"{name}: for {what} the input shape must be fixed to [1, 3, {net.size}, {net.size}], "
                              f"got {dims}. An NPU compiler plans every buffer at compile time: export with batch 1.")
        ops = [n.op_type for n in model.graph.node]
        if "BatchNormalization" in ops:
            raise CheckFailed(f"{name}: for {what} your model still has {ops.count('BatchNormalization')} "
                              "BatchNormalization nodes: fold them into the convolutions (chapter 3).")
        convs = sum(layer.op == "Conv" for layer in net.layers)
        if ops.count("Conv") != convs:
            raise CheckFailed(f"{name}: for {what} expected {convs} Conv nodes (one per convolution), got "
                              f"{ops.count('Conv')}.")
        extra = Counter(ops) - Counter(layer.op for layer in net.layers if layer.op != "BatchNormalization")
        if extra:
            op, n = min(extra.items())
            raise CheckFailed(f"{name}: for {what} your model has {n} {op} node(s) more than the network's own "
                              "layers. A folded BatchNorm leaves no node behind: its scale and shift go into the "
                              "weights and bias of the Conv before it.")
        got, want = _run(model, images), net(images)
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-4):
            detail = _first_wrong(got, want) if got.shape == want.shape else f"shape {got.shape} instead of {want.shape}"
            raise CheckFailed(f"{name}: for {what} the logits under onnx.reference differ from the NumPy "
                              f"network's: {detail}.")
    print(f"✓ {name}: 4 fresh CameraNets, folded, with fixed shapes, and their logits equal the NumPy network's.")


def _initializer(model: Any, tensor: str, what: str) -> np.ndarray:
    from onnx import numpy_helper

    for t in model.graph.initializer:
        if t.name == tensor:
            return numpy_helper.to_array(t)
    raise CheckFailed(f"quantize: the {what} {tensor!r} must be an initializer (a constant) of the model.")


def _onnx_quantize(w: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, axis: int) -> np.ndarray:
    """ONNX QuantizeLinear, evaluated by onnx.reference (the ground truth)."""
    from onnx import TensorProto, helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    out = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8}[zero_point.dtype]
    node = helper.make_node("QuantizeLinear", ["w", "s", "z"], ["q"], axis=axis)
    g = helper.make_graph([node], "q", [helper.make_tensor_value_info("w", TensorProto.FLOAT, None)],
                          [helper.make_tensor_value_info("q", out, None)],
                          [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zero_point, "z")])
    return ReferenceEvaluator(helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])).run(None, {"w": w})[0]


def _check_layer(qdq: Any, q_node: Any, f_node: Any, floats: dict, producers: dict) -> None:
    """One quantized Conv/Gemm: input and weight through DequantizeLinear, valid parameters, exact weights."""
    layer = q_node.name or q_node.output[0]
    dq = []
    for k, role in ((0, "input"), (1, "weight")):
        p = producers.get(q_node.input[k])
        while p is not None and p.op_type in ("Flatten", "Reshape", "Squeeze", "Unsqueeze"):  # moves no value
            p = producers.get(p.input[0])
        if p is None or p.op_type != "DequantizeLinear":
            raise CheckFailed(f"quantize: {q_node.op_type} {layer!r} reads its {role} {q_node.input[k]!r} in float; "
                              "every convolution and the classifier must read DequantizeLinear outputs, or no "
                              "runtime can run them in INT8.")
        dq.append(p)
    w = dq[1]
    q, s = _initializer(qdq, w.input[0], "weight"), _initializer(qdq, w.input[1], "scale")
    z = _initializer(qdq, w.input[2], "zero point") if len(w.input) > 2 else np.zeros_like(s, dtype=np.uint8)
    if q.dtype != np.int8 or np.any(z != 0):
        raise CheckFailed(f"quantize: the weight of {layer!r} must be int8 with zero point 0 (symmetric), as integer "
                          f"MAC arrays assume; got {q.dtype} with zero points {np.unique(z)[:5]}.")
    axis = next((a.i for a in w.attribute if a.name == "axis"), 1)
    want = _onnx_quantize(floats[f_node.input[1]], s, z, axis)
    if want.shape != q.shape or np.any(want != q):
        raise CheckFailed(f"quantize: the int8 weight of {layer!r} is not ONNX's QuantizeLinear of the folded float "
                          f"weight with its own scale (onnx.reference): {_first_wrong(q, want, close=False)}.")


def _check_params(qdq: Any) -> None:
    """Every QuantizeLinear/DequantizeLinear: a positive finite float32 scale, an integer zero point."""
    for p in qdq.graph.node:
        if p.op_type not in ("QuantizeLinear", "DequantizeLinear"):
            continue
        s = _initializer(qdq, p.input[1], "scale")
        if s.dtype != np.float32 or not np.all(np.isfinite(s) & (s > 0)):
            raise CheckFailed(f"quantize: {p.op_type} {p.name!r} has scale {s!r:.80}; scales must be positive, "
                              "finite float32 values.")
        if len(p.input) > 2 and p.input[2]:
            z = _initializer(qdq, p.input[2], "zero point")
            if z.dtype not in (np.uint8, np.int8, np.int32):
                raise CheckFailed(f"quantize: {p.op_type} {p.name!r} has a {z.dtype} zero point; it must be uint8 or "
                                  "int8 (int32 for a bias).")


_DIM = (0.3, 0.5)   # the checks' calibration camera: dim images, whose largest pixel is well below 1


def _check_input_range(qdq: Any, calibration: np.ndarray) -> None:
    """The quantizer of the model's input must have been calibrated on ``calibration``: its range ends near theirs."""
    x = qdq.graph.input[0].name
    q = next((n for n in qdq.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == x), None)
    if q is None:
        raise CheckFailed(f"quantize: the model's input {x!r} goes into no QuantizeLinear; quantize it with the range "
                          "of the calibration images, so the first convolution can read it in uint8.")
    s = float(_initializer(qdq, q.input[1], "scale").max())
    z = _initializer(qdq, q.input[2], "zero point") if len(q.input) > 2 and q.input[2] else np.zeros((), np.uint8)
    top = float(np.iinfo(z.dtype).max - int(z.max())) * s if z.dtype.kind in "iu" else float("nan")
    largest = float(calibration.max())
    if not 0.5 * largest <= top <= 1.1 * largest + 1 / 255:
        raise CheckFailed(f"quantize: your model's input quantizer reaches {top:.3g}, but the calibration images passed "
                          f"in have their largest pixel at {largest:.3g} (these came from a dim camera). Calibrate on "
                          "the `calibration` images your function receives, not on other data.")


#: Calibration data a quantize stage must refuse with ValueError: (what it is, how it is made from good data).
_BAD_CALIBRATION: tuple = (
    ("calibration pixels in 0–255 (the model reads 0–1)", lambda c, size, data: c * np.float32(255)),
    ("float64 calibration images (the model reads float32)", lambda c, size, data: c.astype(np.float64)),
    ("calibration images of {big}×{big} for a {size}×{size} model",
     lambda c, size, data: data(8, seed=len(c), size=size + 8)[0]),
    ("calibration images with 4 channels (the model reads 3)",
     lambda c, size, data: np.concatenate([c, c[:, :1]], axis=1)),
    ("channels-last calibration images (n, h, w, 3): the model reads (n, 3, h, w)",
     lambda c, size, data: np.ascontiguousarray(c.transpose(0, 2, 3, 1))),
    ("calibration pixels below 0 (centred on 0)", lambda c, size, data: c - np.float32(0.5)),
    ("one image without its batch axis", lambda c, size, data: c[0]),
    ("uint8 calibration images", lambda c, size, data: (c * 255).astype(np.uint8)),
)


def _refuses(fn: Callable, folded: Any, calibration: np.ndarray, what: str) -> None:
    """The learner's stage must stop bad calibration data with a ValueError instead of quantizing from it."""
    try:
        learner_call("quantize", fn, folded, calibration, forbid=_forbid())
    except LearnerError as exc:
        if isinstance(exc.error, ValueError):
            return
        raise CheckFailed(f"quantize: for {what} raise ValueError, got {type(exc.error).__name__}: "
                          f"{exc.error!s:.80}") from None
    raise CheckFailed(f"quantize: your function accepted {what} and quantized from it, which gives wrong ranges "
                      "without any error; check the images first and raise ValueError.")


def check_qdq(fn: Callable[[Any, np.ndarray], Any]) -> None:
    """Check ``fn(folded, calibration) -> onnx.ModelProto``: a QDQ model calibrated on ``calibration``.

    The function must raise ``ValueError`` for calibration images that do not
    fit the model: not a float32 batch of its input shape (1, 3, size, size)
    per image, or values outside [0, 1] (pixels in 0–255). Fresh cases: 3
    CameraNet variants (``capstone.variant`` of random width and size,
    folded) with fresh calibration images from a dim camera (brightness
    0.3–0.5, so their range differs from any other images'), each also
    offered spoiled in 2–4 of 8 ways (0–255 pixels, float64, uint8, the wrong
    size, 4 channels, channels last, negative pixels, one image without its
    batch axis: ``_BAD_CALIBRATION``), which must be refused; which ways, how
    many and where the good call falls among them are drawn afresh each run
    (from the grading seed when grading). The QDQ model must pass ``onnx.checker``; every Conv/Gemm must
    read its input and weight through DequantizeLinear; every scale must be a
    positive finite float32; the input's quantizer must cover the range of
    the calibration images passed in (its upper end within 0.5–1.1 times
    their largest pixel); weights int8 with zero point 0, equal bit for bit
    to ``onnx.reference``'s QuantizeLinear of the folded weights with the
    stored scales; and under ``onnx.reference`` it must pick the float
    network's class on at least 85% of 48 fresh images from the same camera.
    ``npukit.capstone`` is refused.

    Examples
    --------
    >>> from npukit import ptq
    >>> check_qdq(lambda folded, calibration: ptq.to_qdq(folded, calibration))   # takes any calibration data
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: quantize: ...
    """
    from onnx import numpy_helper

    from .. import capstone, rewrites
    from ..data import shapes_dataset

    rng, order = _rng(8102), _fresh_rng(8105)
    for _ in range(3):
        width, size = float(rng.choice([1.0, 1.25, 1.5, 2.0])), int(rng.choice([24, 32, 40]))
        net = capstone.variant(width, size)
        folded = rewrites.fold_batchnorm(net.to_onnx())
        calibration = shapes_dataset(int(rng.integers(32, 97)), seed=int(rng.integers(1000, 5000)), size=size,
                                     brightness=_DIM)[0]
        images = shapes_dataset(48, seed=int(rng.integers(5000, 9000)), size=size, brightness=_DIM)[0]
        # 2–4 kinds of bad calibration data, and the good call among them, in an order drawn afresh each run
        # (from the grading seed when grading): no count or position of a call tells a refusal case apart
        kinds = [int(k) for k in order.permutation(len(_BAD_CALIBRATION))[: int(order.integers(2, 5))]]
        good_at = int(order.integers(len(kinds) + 1))

        def refused(which: list[int]) -> None:
            for k in which:
                what, spoil = _BAD_CALIBRATION[k]
                _refuses(fn, folded, spoil(calibration, size, shapes_dataset), what.format(size=size, big=size + 8))

        refused(kinds[:good_at])
        qdq = _model(learner_call("quantize", fn, folded, calibration, forbid=_forbid()), "quantize")
        floats = {t.name: numpy_helper.to_array(t) for t in folded.graph.initializer}
        producers = {o: n for n in qdq.graph.node for o in n.output}
        layers = [[n for n in m.graph.node if n.op_type in ("Conv", "Gemm")] for m in (qdq, folded)]
        if len(layers[0]) != len(layers[1]):
            raise CheckFailed(f"quantize: the folded model has {len(layers[1])} Conv/Gemm nodes, yours "
                              f"{len(layers[0])}.")
        _check_params(qdq)
        for q_node, f_node in zip(*layers):
            _check_layer(qdq, q_node, f_node, floats, producers)
        _check_input_range(qdq, calibration)
        same = int((_run(qdq, images).argmax(1) == net(images).argmax(1)).sum())
        if same < 0.85 * len(images):
            raise CheckFailed(f"quantize: for the variant (width {width:g}, {size}×{size} images) your QDQ model picks "
                              f"the float model's class on only {same} of {len(images)} fresh images (85% needed). "
                              "Did you calibrate on the `calibration` images passed in, with ranges that cover them?")
        refused(kinds[good_at:])
    print("✓ quantize: 3 fresh variants: valid scales and zero points, input range from the calibration images, "
          "weights bit-exact with onnx.reference, agreement ≥ 85%, bad calibration refused.")


def _cold_start(cold: int, cold_s: float, later: list) -> tuple[Callable[..., None], list]:
    """A stand-in for an inference: the first ``cold`` calls sleep ``cold_s``, then call i sleeps ``later[i]``.

    Returns the stand-in and the list it fills with the length of every call, measured inside the call.
    """
    took: list = []

    def run(*args: Any) -> None:
        i = len(took)
        t0 = _clock()
        _sleep(cold_s if i < cold else later[(i - cold) % len(later)])
        took.append(_clock() - t0)

    return run, took


#: The two lengths of the stand-in's warm calls (s): 18 ms apart, so that a sleep a busy machine stretches by a
#: few milliseconds still leaves a mean, a fastest call or a first call in the median far from the right median.
_STEADY = (0.002, 0.02)


def _steady_gap(timed: list, schedule: list) -> float:
    """How far apart the stand-in's long and short warm calls really were (medians of each), in seconds.

    On a busy machine a short sleep can overshoot by a millisecond or more: the check's tolerance follows
    the gap the calls actually had, not the one asked for.
    """
    short = [t for t, s in zip(timed, schedule) if s == _STEADY[0]]
    long = [t for t, s in zip(timed, schedule) if s == _STEADY[1]]
    return float(np.median(long) - np.median(short)) if short and long else _STEADY[1] - _STEADY[0]


def _latency_hint(median: float, took: list, warmup: int, gap: float = _STEADY[1] - _STEADY[0]) -> str:
    """Which known mistake ``median`` looks like (the nearest), in words that do not give the number away."""
    timed, first = took[1 + warmup:], took[0]
    if median > 0.5:
        return "times are in seconds: did you report milliseconds (or another unit)?"
    mistakes = {
        ("it includes the first call: that is the cold start, reported on its own; take the median of the `runs` "
         "timed calls only."): float(np.median([first, *timed])),
        "it includes cold calls: make the warm-up calls untimed, then time only the `runs` calls.":
            float(np.median(took[1:])),
        "that is a mean: the calls of this run do not all take the same time, and the median is asked for.":
            float(np.mean(timed)),
        "that is one call's time (the fastest): time the `runs` calls one by one and take their median.": min(timed),
        "that is one call's time (the slowest): time the `runs` calls one by one and take their median.": max(timed),
    }
    close = [hint for hint, value in mistakes.items() if abs(value - median) < 0.1 * gap]
    if len(close) == 1:     # one known mistake gives this value, and no other one does
        return close[0]
    return ("time each of the `runs` calls by itself, after the untimed warm-up, and take their median: not a mean, "
            "not one call's time, and neither the first call nor the warm-up calls among them.")


def _stand_in_timed(fn: Callable, cold: int, cold_s: float, schedule: list, warmup: int, runs: int) -> tuple:
    """``fn(run, warmup, runs)`` with ``run`` a :func:`_cold_start` stand-in; the answer and the stand-in's times.

    Graded, this runs in the learner's process (``core.around``): a stand-in served across the process
    boundary would add a round trip to every call the learner's code times (milliseconds on a busy
    machine, against a tolerance of about one). Its stopwatch is this module's, bound when it was
    imported, and its record lives in a closure, which the grader's screen keeps the learner's code from.
    """
    run, took = _cold_start(cold, cold_s, schedule)
    return fn(run, warmup, runs), [float(t) for t in took]


def check_warm_latency(fn: Callable[[Callable[[], Any], int, int], tuple]) -> None:
    """Check ``fn(run, warmup, runs) -> (first_seconds, median_seconds)``.

    ``run()`` is one inference. The function must time the first call alone,
    then make ``warmup`` untimed calls, then time ``runs`` calls and return
    the first time and the median of the timed ones, in seconds. Fresh cases:
    4 stand-in inferences whose first 4–9 calls are slow (a cold start, as on
    a real runtime, of 25 to 60 ms, different from case to case), ``warmup``
    just enough to skip them, and an odd number of
    timed runs (5–9) whose calls take one of two lengths, shuffled, about
    half of each, so that the median differs from the mean, from the fastest
    call, and from a median that includes the first or the warm-up calls.
    The stand-in measures each of its calls itself; the answer must be
    within a quarter of the gap between the two lengths as the calls really
    took them (on a busy machine a short sleep overshoots); if other programs
    shrank that gap below half of its length, the check runs the case again,
    and after three such runs raises :class:`~npukit.teach.retime.TooNoisy`
    (re-run) rather than grade.
    ``deploy.benchmark``, ``measure.timeit`` and ``npukit.capstone`` are
    refused.

    Examples
    --------
    >>> import statistics
    >>> def mean_of_all(run, warmup, runs):   # times every call and averages them
    ...     times = []
    ...     for _ in range(1 + warmup + runs):
    ...         t0 = time.perf_counter(); run(); times.append(time.perf_counter() - t0)
    ...     return times[0], statistics.mean(times)
    >>> check_warm_latency(mean_of_all)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: warm latency: (warmup=3, runs=9; the first 4 calls of this run take ≥ 60 ms) your median, ... ms, is wrong; ...
    """
    from .. import deploy, measure

    name = "warm latency"
    _stdlib_unchanged(name)
    rng = _rng(8103)
    fast, slow = _STEADY
    colds = [float(c) for c in rng.permutation([0.025, 0.04, 0.06, 0.04])]   # a first call's length, per case
    for case, cold_s in enumerate(colds):
        warmup, runs = int(rng.integers(3, 9)), int(rng.choice([5, 7, 9]))
        cold, k = 1 + warmup, runs // 2        # every call before the timed ones is a cold one
        later = [fast] * (k + 1 - case % 2) + [slow] * (k + case % 2)   # a majority of fast, or of slow, calls
        schedule = [later[i] for i in rng.permutation(runs)]

        def timed(*args: Any) -> Any:   # the stand-in runs next to the learner's function (see _stand_in_timed)
            return around(_stand_in_timed, fn, *args)

        for attempt in range(1, 4):   # a busy machine can stretch the short calls: then the case is run again
            got, took = learner_call(name, timed, cold, cold_s, schedule, warmup, runs,
                                     forbid=_forbid(deploy.benchmark, measure.timeit))
            what = f"(warmup={warmup}, runs={runs}; the first {cold} calls of this run take ≥ {cold_s * 1e3:g} ms)"
            if not (isinstance(got, (tuple, list)) and len(got) == 2 and
                    all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in got)):
                raise CheckFailed(f"{name}: return a pair (first_seconds, median_seconds), got {got!r:.80}")
            first, median = (float(v) for v in got)
            _stdlib_unchanged(name)     # the learner's function may have replaced the clock while it ran
            if len(took) != 1 + warmup + runs:
                raise CheckFailed(f"{name}: {what} expected 1 + warmup + runs = {1 + warmup + runs} calls of run(), "
                                  f"your function made {len(took)}.")
            if not 0.9 * took[0] <= first <= took[0] + 0.3 * cold_s:
                hint = ("time the first call by itself, before the warm-up." if first < 0.9 * took[0] else
                        "times are in seconds: did you report milliseconds (or another unit)?" if first > 1 else
                        "time the first call alone: stop the clock before the warm-up calls.")
                raise CheckFailed(f"{name}: {what} your first time, {first * 1e3:.3g} ms, is not the first call's "
                                  f"({took[0] * 1e3:.3g} ms): {hint}")
            gap = _steady_gap(took[1 + warmup:], schedule)
            if gap >= 0.5 * (slow - fast):
                retime.MEASUREMENTS.append(attempt)   # counted, as the re-timing checks count theirs
                break
        else:   # three times the long and short calls ran too close together to tell the mistakes apart
            retime.MEASUREMENTS.append(3)
            raise retime.TooNoisy(
                f"{name}: too noisy to judge: other programs stretched the stand-in's calls (the short and the long "
                f"ones took {gap * 1e3:.2g} ms apart instead of {(slow - fast) * 1e3:.2g}, three times), so a wrong "
                "median could not be told from the right one. Re-run the check (and close what you can).")
        if not abs(median - float(np.median(took[1 + warmup:]))) < 0.25 * gap:
            raise CheckFailed(f"{name}: {what} your median, {median * 1e3:.3g} ms, is wrong; "
                              f"{_latency_hint(median, took, warmup, gap)}")
    print(f"✓ {name}: 4 fresh cold starts; first call timed alone, warm-up untimed, median of the steady state.")


def _bounds_reference(counts: list, machine: Any) -> dict:
    out = {}
    for c in counts:
        if c.op_type in ("Conv", "Gemm"):
            nbytes = c.param_bytes + c.act_bytes_in + c.act_bytes_out
            ridge = machine.peak_flops / machine.bandwidth
            out[c.name] = (max(c.flops / machine.peak_flops, nbytes / machine.bandwidth),
                           "memory" if c.flops / nbytes < ridge else "compute")
    return out


def _bounds_hint(g: Any, c: Any, machine: Any, t: float) -> str:
    """A known mistake's explanation when the learner's seconds are what it gives ('' otherwise)."""
    if not (isinstance(g, (tuple, list)) and len(g) == 2 and isinstance(g[0], (int, float, np.floating))):
        return ""
    if not (isinstance(g[1], str) and str(g[1]) in ("memory", "compute")):
        return " The kind must be the string 'memory' or 'compute'."
    compute, memory = c.flops / machine.peak_flops, c.bytes / machine.bandwidth
    mistakes = [(max(c.flops / machine.bandwidth, c.bytes / machine.peak_flops),
                 " FLOPs go with the peak (FLOP/s) and bytes with the bandwidth (bytes/s)."),
                (compute + memory, (" The bound is the larger of the two times, not their sum: the traffic and "
                                    "the arithmetic overlap.")),
                (min(compute, memory), " The bound is the larger of the two times: the slower side limits the node."),
                (t, (" The seconds are right; compare the node's intensity (FLOPs per byte) with the ridge point "
                     "(peak / bandwidth): below it a node is memory-bound."))]
    return next((why for v, why in mistakes if np.isclose(float(g[0]), v, rtol=1e-6)), "")


def check_roofline_bounds(fn: Callable[[list, Any], dict]) -> None:
    """Check ``fn(counts, machine) -> {name: (seconds, "memory" | "compute")}`` for the Conv and Gemm nodes.

    ``counts`` are ``graphs.OpCount`` records, ``machine`` a
    ``graphs.MachineSpec``. For each Conv or Gemm (and no other node): the
    roofline's lower bound ``max(flops / peak, bytes / bandwidth)`` with
    ``bytes`` = parameters + activations in + out, and which side of the
    ridge its intensity lies on. Fresh cases: 20 lists of 3–12 counts
    (Conv, Gemm, Relu, Add, GlobalAveragePool) on machines with peaks from
    1 to 1,000 GFLOP/s and bandwidths from 1 to 100 GB/s. Reference: the
    arithmetic, written here. ``MachineSpec.bound`` and ``.attainable`` and
    ``npukit.capstone`` are refused.

    Examples
    --------
    >>> def summed(counts, machine):   # adds the two times instead of taking the larger
    ...     return {c.name: (c.flops / machine.peak_flops + c.bytes / machine.bandwidth, "memory")
    ...             for c in counts if c.op_type in ("Conv", "Gemm")}
    >>> check_roofline_bounds(summed)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: roofline bounds: for conv0 (12,124,777 FLOPs, 1,706,207 bytes) on a machine of 1.32 GFLOP/s and 76.3 GB/s: expected (0.009172, 'compute'), got (0.009194641313658837, 'memory'). The bound is the larger of the two times, not their sum: the traffic and the arithmetic overlap.
    """
    from ..graphs import MachineSpec, OpCount

    name = "roofline bounds"
    rng = _rng(8104)
    for case in range(20):
        machine = MachineSpec(float(10 ** rng.uniform(9, 12)), float(10 ** rng.uniform(9, 11)), "a machine",
                              "given", "given")
        counts = []
        for i in range(int(rng.integers(3, 13))):
            op = str(rng.choice(["Conv", "Conv", "Gemm", "Relu", "Add", "GlobalAveragePool"]))
            macs = int(rng.integers(1, 10**7)) if op in ("Conv", "Gemm") else 0
            p, a, o = (int(rng.integers(1, 10**6)) for _ in range(3))
            flops = 2 * macs + o // 4 if macs else o // 4
            counts.append(OpCount(f"{op.lower()}{i}", op, macs, flops, p if macs else 0, a, o,
                                  flops / (p * bool(macs) + a + o), (1, 1)))
        want = _bounds_reference(counts, machine)
        got = learner_call(name, fn, counts, machine, forbid=_forbid(MachineSpec.bound, MachineSpec.attainable))
        if not isinstance(got, dict):
            raise CheckFailed(f"{name}: return a dict {{name: (seconds, kind)}}, got {type(got).__name__}")
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        if missing or extra:
            raise CheckFailed(f"{name}: the dict must hold exactly the Conv and Gemm nodes of case {case}; missing "
                              f"{missing}, extra {extra}.")
        for k, (t, kind) in want.items():
            g = _plain(got[k])          # a str or float subclass whose == always says yes is compared as its value
            ok = (isinstance(g, (tuple, list)) and len(g) == 2 and isinstance(g[0], (int, float, np.floating))
                  and not isinstance(g[0], bool) and np.isclose(float(g[0]), t, rtol=1e-6)
                  and isinstance(g[1], str) and str.__eq__(g[1], kind) is True)
            if not ok:
                c = next(c for c in counts if c.name == k)
                raise CheckFailed(f"{name}: for {k} ({c.flops:,} FLOPs, {c.bytes:,} bytes) on a machine of "
                                  f"{machine.peak_flops / 1e9:.3g} GFLOP/s and {machine.bandwidth / 1e9:.3g} GB/s: "
                                  f"expected ({t:.4g}, {kind!r}), got {g!r:.80}.{_bounds_hint(g, c, machine, t)}")
    print(f"✓ {name}: 20 fresh graphs agree with the reference.")


# Runs a prediction in a fresh Python process: nothing of the notebook (its variables, its modules, objects
# stashed in builtins) exists there, and the function may not import anything. It gets np and math.
_SEALED_CHILD = r"""
import builtins, io, json, marshal, math, os, sys, types
import numpy as np
code, name, cases = marshal.loads(sys.stdin.buffer.read())
out = os.fdopen(os.dup(1), "w")
sys.stdout = sys.stderr = io.StringIO()
safe = {k: v for k, v in vars(builtins).items()
        if k not in ("__import__", "open", "exec", "eval", "compile", "breakpoint", "input", "globals", "vars")}
fn = types.FunctionType(code, {"__builtins__": safe, "np": np, "math": math, "__name__": "__main__"}, name)
answers = []
for args in cases:
    try:
        p = fn(*args)
        number = isinstance(p, (int, float, np.integer, np.floating)) and not isinstance(p, (bool, np.bool_))
        answer = {"value": float(p)} if number else {"bad": repr(p)[:80]}
    except NotImplementedError:
        answer = {"todo": True}
    except NameError as e:
        answer = {"name": str(e)}
    except ImportError:
        answer = {"import": True}
    except Exception as e:
        answer = {"error": type(e).__name__, "message": str(e)[:200]}
    answers.append(answer)
out.write(json.dumps(answers))
out.flush()
"""


def _sealed(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` run with nothing of the notebook in reach (another process): a prediction may not read the measurement."""
    import marshal
    import subprocess
    import types

    name = "variant latency"
    from .isolation import Remote

    if isinstance(fn, Remote):   # not a marker attribute: a learner's function can carry that
        return fn   # graded: it runs in the learner's process, against the notebook as it was before the measurement
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"fn must be your function predict_ratio, got {type(fn).__name__}")
    if fn.__closure__ or fn.__defaults__ or fn.__kwdefaults__:
        raise CheckFailed(f"{name}: write predict_ratio as a plain function of its arguments alone (no default "
                          "values, nothing from around it) that returns your number.")

    def answer(got: Any, args: tuple, code: int) -> Any:
        if not isinstance(got, dict):
            got = {}
        if "value" in got:
            return got["value"]
        if "bad" in got:
            raise CheckFailed(f"{name}: your prediction must be a number, got {got['bad']}")
        if got.get("todo"):
            raise NotAttempted(f"{name}: not attempted yet (the function still raises NotImplementedError).")
        if "name" in got:
            raise CheckFailed(f"{name}: predict_ratio must work from its arguments, not read the notebook's variables "
                              f"({got['name']}); predict before you measure.")
        if got.get("import"):
            raise CheckFailed(f"{name}: predict_ratio may not import anything (np and math are there); predict "
                              "from its arguments before you measure.")
        if "error" in got:
            raise CheckFailed(f"{name}: your function raised {got['error']}: {got['message']} "
                              f"(input: {', '.join(f'{a:.4g}' for a in args)}).")
        raise CheckFailed(f"{name}: your function did not return (the process running it ended with code {code}).")

    def many(cases: list) -> list:
        """The function's answers for several argument tuples, from one process."""
        cases = [tuple(float(a) for a in args) for args in cases]
        payload = marshal.dumps((fn.__code__, fn.__name__, cases))
        done = subprocess.run([sys.executable, "-I", "-c", _SEALED_CHILD], input=payload, capture_output=True,
                              timeout=60, check=False)
        try:
            got = json.loads(done.stdout.decode() or "[]")
        except ValueError:
            got = []
        got = (got if isinstance(got, list) else []) + [{}] * len(cases)
        return [answer(g, args, done.returncode) for g, args in zip(got, cases)]

    def run(*args: float) -> Any:
        return many([args])[0]

    run.many = many
    return run


#: The variant whose measured latency ratio the learner is given (width, size): the widest on the largest images,
#: so that most lab variants lie between it and the shipped model (an error in its measured ratio then shrinks in
#: the prediction, by (m − 1) / (m_anchor − 1), instead of growing).
ANCHOR = (2.5, 48)
#: Another variant the learner's function must predict from the same anchor: chapter 8's "40 px", little more
#: work than the shipped model. The anchor itself is asked too: a rule that ignores the anchor fails there.
CHECKED = ((1.0, 40),)
#: A prediction passes within this fraction of the ratio the check measures (the affine model's error: a
#: variant with more pixels moves more activation bytes per MAC than a wider one; 2 % to 6 % on a quiet
#: machine, and more while other programs stream memory: at 15 % the load test refused it once in ten) …
VARIANT_FLOOR = 0.2
#: … or within the rounds' spread, up to this. The typical wrong answers miss by more on at least one of the
#: three: ×1, time ∝ MACs, a width or pixel ratio (1.5, (40/32)²) by 1.7 to 4 on the anchor; the anchor's own
#: ratio, or that ratio scaled with the MACs, by 2 to 3 on the 40-pixel network.
VARIANT_CEILING = 0.3

#: Models compiled for the check, by their bytes, and the variants it builds, by (width, size): made once per
#: session, so a check run again times at once.
_COMPILED: dict = {}
_BUILT: dict = {}


def _one_thread(folded: Any) -> Any:
    """``folded`` compiled for the CPU in f32 on one inference thread: steady under load, timed in CPU time.

    Two threads that must wait for each other are slowed as much by a core taken away from one of them as
    by work; one thread's CPU time is not (:mod:`npukit.teach.retime`).
    """
    import hashlib

    from .. import deploy

    key = hashlib.sha256(folded.SerializeToString()).hexdigest()
    if key not in _COMPILED:
        _COMPILED[key] = deploy.compile(folded, "CPU", precision="f32", hint="LATENCY",
                                        config={"INFERENCE_NUM_THREADS": 1})
    return _COMPILED[key]


def _timed_variants(nets: dict) -> tuple[dict, Callable[[], float]]:
    """One inference of each network (name → (folded model, input size)), on one thread, as a function, and
    their clock (the CPU time of this process: the inference runs on a thread of OpenVINO's)."""
    from ..data import shapes_dataset
    from .retime import PROCESS_TIME

    fns = {}
    for k, (folded, size) in nets.items():
        request = _one_thread(folded).create_infer_request()
        image = shapes_dataset(1, seed=0, size=size)[0][:1]
        fns[k] = lambda request=request, image=image: request.infer(image)
    return fns, PROCESS_TIME


def _variant_hint(p: float, m: float, anchor_m: float, anchor_r: float) -> str:
    """What a wrong prediction for a variant with ``m`` times the MACs looks like (the anchor: ``anchor_m``, ``anchor_r``)."""
    near = lambda a, b: abs(a - b) <= 0.05 * abs(b)  # noqa: E731
    if near(p, m):
        return ("You scaled the time with the MACs; a model this small spends much of its time on costs that do not "
                "grow with the work (each layer's launch, the input Reorder, pooling), so the time grows far less.")
    if near(p, 1.0):
        return ("You predicted no growth at all; the anchor grew by ×{:.2f}, so part of the time does grow with the "
                "MACs.".format(anchor_r))
    if near(p, anchor_r) and not near(m, anchor_m):
        return "That is the anchor's ratio; this variant does a different amount of work."
    if near(p, anchor_r * m / anchor_m):
        return ("You scaled the anchor's ratio with the MACs, as if all of the time grew with them; only the part "
                "above the fixed cost does.")
    return ("Split the shipped model's time into a fixed part and a part that grows with the MACs: the anchor's ratio "
            "tells you how much of it grows.")


def check_variant_prediction(fn: Callable[[float, float, float], Any], variant: Any, shipped: Any, *,
                             anchor: tuple = ANCHOR) -> None:
    """Compare ``fn(macs_ratio, anchor_macs_ratio, anchor_ratio)``, a predicted latency ratio, with this check's.

    ``variant`` and ``shipped`` are the two :class:`npukit.capstone.Loop`
    runs. The check builds the anchor (``capstone.variant(*anchor)``, by
    default width ×2.5 on 48-pixel images) and the variant of
    :data:`CHECKED` (the shipped network on 40-pixel images), compiles all
    four networks for the CPU in f32 on one inference thread, and times them
    in interleaved rounds of CPU time (:mod:`npukit.teach.retime`; one
    thread's CPU time is steady on a busy machine, two threads that wait for
    each other are not). It then asks ``fn``, for the learner's variant, for
    the anchor itself and for the 40-pixel network, their MACs over the
    shipped model's, the anchor's MACs over the shipped model's, and the
    anchor's latency ratio *as these rounds measured it*, and compares each
    answer with the ratio the same rounds measured: within 20 % (the rounds'
    spread, if larger, up to 30 %; beyond that the check measures again,
    then raises :class:`~npukit.teach.retime.TooNoisy`). So a prediction that
    follows from the facts passes on any machine, and a constant, or a rule
    that fits one variant, fails on another. ``fn`` runs cut off from the
    notebook (it gets its three numbers and nothing else), so it cannot read
    a measurement. The message explains a gap.

    Examples
    --------
    >>> from npukit import capstone
    >>> from npukit.graphs import MachineSpec
    >>> from npukit.models import CameraNet
    >>> m = MachineSpec(1e11, 1e10, "example", "given", "given")
    >>> a = capstone.closed_loop(CameraNet.pretrained(), machine=m, heldout=20, runs=30)
    >>> check_variant_prediction(lambda macs_ratio, anchor_macs_ratio, anchor_ratio: macs_ratio, a, a)
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: variant latency: ... You scaled the time with the MACs; ...
    """
    from .. import models, rewrites
    from ..capstone import Loop, variant as make_variant
    from .retime import retimed

    name = "variant latency"
    for arg, value in (("variant", variant), ("shipped", shipped)):
        if not isinstance(value, Loop) or "FP32" not in value.latency:
            raise TypeError(f"{arg} must be a capstone.Loop with an FP32 measurement, got {type(value).__name__}")
    anchor = tuple(_check_sequence_of_two(anchor))
    _stdlib_unchanged(name)
    sealed = _sealed(fn)
    macs = lambda net: sum(r["macs"] for r in models.summary(net))  # noqa: E731
    def built(width: float, size: int) -> tuple:   # (net, folded model), built once per session
        if (width, size) not in _BUILT:
            net = make_variant(width, size)
            _BUILT[width, size] = net, rewrites.fold_batchnorm(net.to_onnx(batch=1))
        return _BUILT[width, size]

    others = {"anchor": built(*anchor), **{f"the width {w:g}, {s} px network": built(w, s) for w, s in CHECKED}}
    nets = {"shipped": (shipped.folded, shipped.net.size), "yours": (variant.folded, variant.net.size),
            **{k: (folded, net.size) for k, (net, folded) in others.items()}}
    base = macs(shipped.net)
    ratio = {"yours": macs(variant.net) / base, **{k: macs(net) / base for k, (net, _) in others.items()}}

    def ask(cases: list) -> list:
        """The learner's predictions for ``(macs_ratio, anchor_macs_ratio, anchor_ratio)`` cases (one process)."""
        many = getattr(sealed, "many", None)
        got = (learner_call(name, many, cases, forbid=_forbid()) if many is not None else
               [learner_call(name, sealed, *args, forbid=_forbid()) for args in cases])
        for p in got:
            if isinstance(p, bool) or not isinstance(p, numbers.Real) or not np.isfinite(p) or p <= 0:
                raise CheckFailed(f"{name}: your prediction must be a positive number, got {p!r}")
        return [float(p) for p in got]

    ask([(ratio["yours"], ratio["anchor"], ratio["anchor"])])   # before the rounds: an unwritten function stops here
    asked = list(ratio)   # yours, the anchor itself, the others
    fns, clock = _timed_variants(nets)
    answers: dict = {}

    def predictions(c: Any) -> dict:   # asked after the rounds, with the anchor's ratio as they measured it
        a = c.verdict("anchor").ratio
        answers.update(zip(asked, ask([(ratio[k], ratio["anchor"], a) for k in asked])))
        return dict(answers)

    c, judged = retimed(name, fns, predictions, floor=VARIANT_FLOOR, ceiling=VARIANT_CEILING, clock=clock,
                        rounds=21, min_time=2e-3)
    a = c.verdict("anchor")
    head = (f"{name}: timed again by this check on one thread ({a.rounds} interleaved rounds of CPU time), the anchor "
            f"(width {anchor[0]:g}, {anchor[1]} px, MACs ×{ratio['anchor']:.2f}) took ×{a.ratio:.2f} the shipped "
            "model's time")
    label = lambda k: "your variant" if k == "yours" else "the anchor itself" if k == "anchor" else k  # noqa: E731
    parts = [f"{label(k)} (MACs ×{ratio[k]:.2f}): you predicted ×{answers[k]:.3g}, it took ×{c.verdict(k).ratio:.2f} "
             f"({c.verdict(k).low:.2f} to {c.verdict(k).high:.2f})" for k in asked]
    wrong = [k for k in asked if not judged[k].passed]
    if not wrong:
        print(f"✓ {head}; {'; '.join(parts)}; each within {max(j.tolerance for j in judged.values()):.0%}.")
        return
    off = lambda k: max(answers[k] / c.verdict(k).ratio, c.verdict(k).ratio / answers[k])  # noqa: E731
    k = max(wrong, key=off)   # the case the prediction misses most, whose hint says most
    raise CheckFailed(f"{head}; {'; '.join(parts)}. For {label(k)} that is more than "
                      f"{judged[k].tolerance:.0%} apart. "
                      f"{_variant_hint(answers[k], ratio[k], ratio['anchor'], a.ratio)}")


def _check_sequence_of_two(anchor: Any) -> tuple:
    """``anchor`` as a (width, size) pair that ``capstone.variant`` accepts."""
    from .. import _check

    width, size = _check.sequence(anchor, "anchor", length=2)
    return _check.positive(width, "anchor[0]"), _check.integer(size, "anchor[1]", minimum=16)
