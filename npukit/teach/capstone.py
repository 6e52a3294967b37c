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


def _latency_hint(median: float, took: list, warmup: int) -> str:
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
    close = [hint for hint, value in mistakes.items() if abs(value - median) < 0.1 * (_STEADY[1] - _STEADY[0])]
    if len(close) == 1:     # one known mistake gives this value, and no other one does
        return close[0]
    return ("time each of the `runs` calls by itself, after the untimed warm-up, and take their median: not a mean, "
            "not one call's time, and neither the first call nor the warm-up calls among them.")


_STEADY = (0.0005, 0.005)   # the two lengths of the stand-in's warm calls (s)


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
    a real runtime, of 8 to 35 ms, different from case to case), ``warmup``
    just enough to skip them, and an odd number of
    timed runs (5–9) whose calls take one of two lengths, shuffled, about
    half of each, so that the median differs from the mean, from the fastest
    call, and from a median that includes the first or the warm-up calls.
    The stand-in measures each of its calls itself; the answer must be
    within a quarter of the gap between the two lengths.
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
    npukit.teach.core.CheckFailed: warm latency: (warmup=3, runs=9; the first 4 calls of this run take ≥ 35 ms) your median, ... ms, is wrong; ...
    """
    from .. import deploy, measure

    name = "warm latency"
    _stdlib_unchanged(name)
    rng = _rng(8103)
    fast, slow = _STEADY
    colds = [float(c) for c in rng.permutation([0.008, 0.02, 0.035, 0.02])]   # a first call's length, per case
    for case, cold_s in enumerate(colds):
        warmup, runs = int(rng.integers(3, 9)), int(rng.choice([5, 7, 9]))
        cold, k = 1 + warmup, runs // 2        # every call before the timed ones is a cold one
        later = [fast] * (k + 1 - case % 2) + [slow] * (k + case % 2)   # a majority of fast, or of slow, calls
        schedule = [later[i] for i in rng.permutation(runs)]

        def timed(*args: Any) -> Any:   # the stand-in runs next to the learner's function (see _stand_in_timed)
            return around(_stand_in_timed, fn, *args)

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
        if not abs(median - float(np.median(took[1 + warmup:]))) < 0.25 * (slow - fast):
            raise CheckFailed(f"{name}: {what} your median, {median * 1e3:.3g} ms, is wrong; "
                              f"{_latency_hint(median, took, warmup)}")
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
code, name, ratio = marshal.loads(sys.stdin.buffer.read())
out = os.fdopen(os.dup(1), "w")
sys.stdout = sys.stderr = io.StringIO()
safe = {k: v for k, v in vars(builtins).items()
        if k not in ("__import__", "open", "exec", "eval", "compile", "breakpoint", "input", "globals", "vars")}
fn = types.FunctionType(code, {"__builtins__": safe, "np": np, "math": math, "__name__": "__main__"}, name)
try:
    p = fn(ratio)
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
out.write(json.dumps(answer))
out.flush()
"""


def _sealed(fn: Callable[[float], Any]) -> Callable[[float], Any]:
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
        raise CheckFailed(f"{name}: write predict_ratio as a plain function of macs_ratio alone (no default values, "
                          "nothing from around it) that returns your number.")

    def run(macs_ratio: float) -> Any:
        payload = marshal.dumps((fn.__code__, fn.__name__, float(macs_ratio)))
        done = subprocess.run([sys.executable, "-I", "-c", _SEALED_CHILD], input=payload, capture_output=True,
                              timeout=60, check=False)
        try:
            answer = json.loads(done.stdout.decode() or "{}")
        except ValueError:
            answer = {}
        if "value" in answer:
            return answer["value"]
        if "bad" in answer:
            raise CheckFailed(f"{name}: your prediction must be a number, got {answer['bad']}")
        if answer.get("todo"):
            raise NotAttempted(f"{name}: not attempted yet (the function still raises NotImplementedError).")
        if "name" in answer:
            raise CheckFailed(f"{name}: predict_ratio must work from its argument, not read the notebook's variables "
                              f"({answer['name']}); predict before you measure.")
        if answer.get("import"):
            raise CheckFailed(f"{name}: predict_ratio may not import anything (np and math are there); predict "
                              "from the MAC ratio before you measure.")
        if "error" in answer:
            raise CheckFailed(f"{name}: your function raised {answer['error']}: {answer['message']} "
                              f"(input: macs_ratio={macs_ratio:.4g}).")
        raise CheckFailed(f"{name}: your function did not return (the process running it ended with code "
                          f"{done.returncode}).")

    return run


def _fp32_ratio(variant: Any, shipped: Any, rounds: int = 5, runs: int = 50) -> float:
    """The two loops' FP32 median latency ratio, measured again here, the two models taking turns.

    The loops were benchmarked one after the other, minutes apart in a lab; a
    machine busy during one of them would move the ratio. Here each model is
    compiled again and timed by :func:`npukit.deploy.benchmark`, ``rounds``
    times in turn; the ratio is of the medians over all timed inferences, so
    a busy spell slows both models alike or is outvoted.
    """
    from .. import deploy
    from ..data import shapes_dataset

    models = [(deploy.compile(loop.folded, loop.device, precision="f32"),
               shapes_dataset(1, seed=0, size=loop.net.size)[0][:1], []) for loop in (variant, shipped)]
    for _ in range(rounds):
        for compiled, image, times in models:
            times.extend(deploy.benchmark(compiled, image, warmup=5, runs=runs).times)
    return float(np.median(models[0][2]) / np.median(models[1][2]))


def check_variant_prediction(fn: Callable[[float], Any], variant: Any, shipped: Any, *, rel_tol: float = 0.5) -> None:
    """Compare ``fn(macs_ratio)``, a predicted FP32 latency ratio (variant / shipped), with this run's.

    ``variant`` and ``shipped`` are the two :class:`npukit.capstone.Loop`
    runs; the MAC ratio is their MACs', and the measured ratio their FP32
    models' median latencies, timed again by the check, the two models taking
    turns (so a machine busy while one loop was benchmarked does not move it).
    ``fn`` runs cut off from the notebook (it gets the MAC ratio and nothing
    else), so it cannot read the measurement. The message explains a
    gap between the two ratios.

    Examples
    --------
    >>> from npukit import capstone
    >>> from npukit.graphs import MachineSpec
    >>> from npukit.models import CameraNet
    >>> m = MachineSpec(1e11, 1e10, "example", "given", "given")
    >>> a = capstone.closed_loop(CameraNet.pretrained(), machine=m, heldout=20, runs=30)
    >>> check_variant_prediction(lambda macs_ratio: 5.0, a, a)   # the same model twice: the ratio is ×1
    Traceback (most recent call last):
    ...
    npukit.teach.core.CheckFailed: variant latency: you predicted ×5, this run measured ×... (more than 50% apart). ...
    """
    from ..capstone import Loop

    for arg, value in (("variant", variant), ("shipped", shipped)):
        if not isinstance(value, Loop) or "FP32" not in value.latency:
            raise TypeError(f"{arg} must be a capstone.Loop with an FP32 measurement, got {type(value).__name__}")
    if isinstance(rel_tol, bool) or not isinstance(rel_tol, numbers.Real):
        raise TypeError(f"rel_tol must be a positive number, got {type(rel_tol).__name__} {rel_tol!r}")
    if not 0 < rel_tol < float("inf"):
        raise ValueError(f"rel_tol must be a positive number, got {rel_tol!r}")
    _stdlib_unchanged("variant latency")
    macs_ratio = variant.macs / shipped.macs
    p = learner_call("variant latency", _sealed(fn), macs_ratio, forbid=_forbid())
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not np.isfinite(p):
        raise CheckFailed(f"variant latency: your prediction must be a number, got {p!r}")
    p = float(p)
    measured = _fp32_ratio(variant, shipped)
    if abs(p - measured) > rel_tol * measured:
        why = ("You scaled the time with the MACs; a model this small spends much of its time on per-layer costs "
               "(kernel launches, the input Reorder, pooling) that do not grow with the width, so the time grew "
               "far less than the work." if p > measured and measured < 0.7 * macs_ratio else
               "The time grew more than you expected: look at the per-layer profile for the layers that grew most."
               if p < measured else "Compare the MAC ratio with the time ratio of the shipped model's layers.")
        raise CheckFailed(f"variant latency: you predicted ×{p:.3g}, this run measured ×{measured:.3g} (both models "
                          f"timed again, taking turns) while the MACs grew ×{macs_ratio:.3g} (more than {rel_tol:.0%} "
                          f"apart). {why}")
    print(f"✓ variant latency: you predicted ×{p:.3g}, this run measured ×{measured:.3g} (both models timed again, "
          f"taking turns; the MACs grew ×{macs_ratio:.3g}); within {rel_tol:.0%}.")
