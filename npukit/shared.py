"""The build's shared quantities: every number quoted on more than one page, computed once per build.

The invariant: **a quantity the book quotes on several pages has one value
per build.** Each function below computes its quantity on first use and
keeps it (:mod:`npukit._store`): in the process, and, during a book build or
``make chapters``, in ``_build/npukit-store`` so that every later page reads
the value the first one made. Pages, labs and the "numbers so far" table
(:class:`npukit.tally.Context`) quote these functions instead of measuring
again; a page that needs fewer held-out images takes a stated prefix of
:func:`heldout`.

============================ ================================================================
quantity                     what it is
============================ ================================================================
:func:`profile`, machine     this machine's roofline (chapter 3), measured until it settles
                             (measured again once by :func:`roof_check` if a kernel beats it)
:func:`heldout`              the one held-out draw (:data:`npukit.data.HELDOUT_N` images)
:func:`float_accuracy`       the shipped CameraNet's float32 accuracy on the whole draw
:func:`weight_bytes`         bytes of the deployed models' weights, per precision (below)
:func:`qdq`                  the shipped INT8 (QDQ) model: chapter 8's calibration
:func:`latency`              batch-1 latency per precision on the CPU, interleaved rounds
:func:`conversions`          chapter 2's two NCHW → NHWC conversions, measured
:func:`loop`                 chapter 8's closed loop of the shipped model (its latency is :func:`latency`)
============================ ================================================================

**One convention for weight bytes.** The bytes of every initializer of the
model a runtime is given: for FP32 the ONNX graph with BatchNorm folded into
the convolutions (chapter 3: a runtime folds it anyway, and the running
statistics are not stored); for INT8 the QDQ graph of :func:`qdq` (int8
weights, int32 biases, float32 scales and the zero points). BF16 weights
are what OpenVINO converts at compile time, not a file, and have no entry.

This module sits at the top of npukit's import graph: it imports the
chapters' modules, and none of them imports it. See CONTRIBUTING.md, "How to
quote a shared quantity".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from . import _check, _store

if TYPE_CHECKING:
    import numpy as np
    import onnx

    from .capstone import Loop
    from .deploy import Benchmark
    from .graphs import MachineSpec
    from .layouts import Conversion
    from .machine import Profile, RoofCheck
    from .timing import Comparison

__all__ = ["LATENCY_WARMUP", "LATENCY_RUNS", "PRECISIONS", "QUANTITIES", "profile", "roof_check", "reliable",
           "machine", "heldout",
           "float_accuracy", "folded", "calibration", "qdq", "weight_bytes", "latency", "latency_comparison",
           "conversions", "loop", "is_shipped", "glue"]

#: Untimed inferences of each precision before :func:`latency` times any (chapter 8 measures how
#: many a fresh request needs; this is more than the measurement there has needed on this kind of machine).
LATENCY_WARMUP = 40
#: Interleaved rounds of :func:`latency`: each round times one batch-1 inference of every precision.
LATENCY_RUNS = 300
#: The precisions :func:`latency` times: which model, and OpenVINO's INFERENCE_PRECISION_HINT.
PRECISIONS = {"FP32": ("folded", "f32"), "BF16": ("folded", "bf16"), "INT8": ("qdq", "f32")}

_local: dict[str, Any] = {}


def _once(name: str, compute: Any) -> Any:
    """In-process only, for deterministic values that are cheap to recompute and costly to pickle."""
    if name not in _local:
        _local[name] = compute()
    return _local[name]


def profile() -> Profile:
    """This build's machine profile (:func:`npukit.machine.profile`, every core this process may use).

    Examples
    --------
    >>> profile() is profile()
    True
    """
    from .machine import profile as measured

    return measured()


def roof_check(points: Sequence[Mapping[str, Any]]) -> RoofCheck:
    """Check measured kernels against the build's roof; re-measure the roof once if they or it fail.

    :func:`npukit.machine.check_roof` of ``points`` against :func:`machine`.
    If a kernel came out above the flat roof, or the profile's estimates did
    not settle, and the profile has not been measured again yet, the profile
    is measured again (:func:`npukit.machine.remeasure_profile`: more
    estimates, the roof the highest of old and new) and put in the store in
    place of the first one, and the kernels are checked against the new
    roof. Call it before the page quotes the profile: every later
    :func:`profile` of the build then reads the re-measured one (chapter 3
    does, at its top; see CONTRIBUTING.md, "How to quote a shared
    quantity"). The returned check's ``failed``, with :func:`reliable`,
    tells a page whether to draw conclusions from the roof.

    Raises
    ------
    TypeError, ValueError
        As for :func:`npukit.machine.check_roof`.

    Examples
    --------
    >>> roof_check([{"name": "conv", "achieved": 1e9}]).failed  # doctest: +SKIP
    False

    (Skipped here: on an unsettled profile it measures the roof again;
    ``tests/test_machine.py`` runs it on scripted estimates.)
    """
    from . import machine as machines
    from . import measure

    from .graphs import MachineSpec

    machines.check_roof(MachineSpec(1.0, 1.0, "any", "", ""), points)   # bad points raise before measuring
    first = profile()
    check = machines.check_roof(first.machine, points, ceiling=first.ceiling)
    if (check.failed or not first.settled) and not first.remeasured:
        threads = measure.cores()
        again = machines.remeasure_profile(first)
        _store.replace(f"profile-t{threads}", again, threads=threads)
        check = machines.check_roof(again.machine, points, ceiling=again.ceiling)
    return check


def reliable(check: RoofCheck | None = None) -> bool:
    """Whether a page may read the build's roof: its profile settled, and ``check`` (if given) does not impeach it.

    A check with a kernel above the flat roof impeaches a roof measured once,
    and one that rose when measured again (:attr:`Profile.moved
    <npukit.machine.Profile.moved>`: it depends on the load it was measured
    under). A roof that was measured again (:func:`roof_check`), settled and
    did not move is trusted over such kernels: two measurements at different
    times agreed, so what failed is more likely the kernels' times (a page
    that says so adds that a steady load through both would have lowered the
    roof too).

    Examples
    --------
    >>> reliable() == profile().settled
    True
    """
    from .machine import RoofCheck

    if check is not None:
        _check.instance(check, "check", RoofCheck, "machine.RoofCheck")
    p = profile()
    return p.settled and (check is None or not check.failed or (p.remeasured > 0 and not p.moved))


def machine() -> MachineSpec:
    """This build's roofline: :attr:`profile().machine <npukit.machine.Profile.machine>`.

    Examples
    --------
    >>> machine().peak_flops > 0 and machine().bandwidth > 0
    True
    """
    return profile().machine


def heldout(n: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` images and labels of the one held-out draw (:func:`npukit.data.heldout`).

    Examples
    --------
    >>> heldout(10)[0].shape
    (10, 3, 32, 32)
    """
    from .data import heldout as draw

    return draw(n)


def float_accuracy() -> float:
    """The shipped CameraNet's float32 (NumPy) top-1 accuracy on the whole held-out draw.

    Examples
    --------
    >>> 0.9 < float_accuracy() <= 1
    True
    """
    def compute() -> float:
        from .models import CameraNet
        from .train import accuracy

        return float(accuracy(CameraNet.pretrained(), *heldout()))

    return _store.cached("float-accuracy", compute)


def folded() -> onnx.ModelProto:
    """The shipped CameraNet's ONNX graph (batch 1) with BatchNorm folded (:func:`npukit.rewrites.fold_batchnorm`).

    Examples
    --------
    >>> sum(n.op_type == "BatchNormalization" for n in folded().graph.node)
    0
    """
    def compute() -> Any:
        from .models import CameraNet
        from .rewrites import fold_batchnorm

        return fold_batchnorm(CameraNet.pretrained().to_onnx())

    return _once("folded", compute)


def calibration() -> np.ndarray:
    """The 128 calibration images of chapter 8 (``shapes_dataset(128, seed=capstone.CALIBRATION_SEED)``).

    Examples
    --------
    >>> calibration().shape
    (128, 3, 32, 32)
    """
    def compute() -> Any:
        from .capstone import CALIBRATION_SEED
        from .data import shapes_dataset

        images = shapes_dataset(128, seed=CALIBRATION_SEED)[0]
        images.flags.writeable = False
        return images

    return _once("calibration", compute)


def qdq() -> onnx.ModelProto:
    """The shipped INT8 model: :func:`folded` calibrated min–max on :func:`calibration` (:func:`npukit.ptq.to_qdq`).

    The model chapter 8's closed loop builds for the shipped network, so
    chapters 6, 7 and 8 quote one INT8 model.

    Examples
    --------
    >>> sum(n.op_type == "QuantizeLinear" for n in qdq().graph.node) > 0
    True
    """
    def compute() -> Any:
        from .ptq import to_qdq

        return to_qdq(folded(), calibration(), method="minmax")

    return _once("qdq", compute)


def weight_bytes() -> dict[str, int]:
    """Bytes of the deployed models' weights: ``{"FP32": …, "INT8": …}`` (the convention in the module docstring).

    Examples
    --------
    >>> w = weight_bytes()
    >>> w["FP32"] > w["INT8"] > w["FP32"] // 4
    True
    """
    def compute() -> dict[str, int]:
        from onnx import numpy_helper

        return {label: int(sum(numpy_helper.to_array(t).nbytes for t in m.graph.initializer))
                for label, m in (("FP32", folded()), ("INT8", qdq()))}

    return _once("weight-bytes", compute)


def latency() -> dict[str, Benchmark]:
    """Batch-1 latency of the shipped model per precision on the CPU, timed once per build, interleaved.

    FP32 and BF16 compile :func:`folded`, INT8 compiles :func:`qdq`, each
    with the LATENCY hint and an explicit ``INFERENCE_PRECISION_HINT``
    (:data:`PRECISIONS`); a precision the CPU refuses is left out.
    :func:`npukit.deploy.benchmark_many` times each fresh request's first
    inference, warms each up :data:`LATENCY_WARMUP` times, then times
    :data:`LATENCY_RUNS` rounds of one inference of each in a shuffled order.
    :func:`latency_comparison` turns the rounds into verdicts.

    Returns
    -------
    dict of str to npukit.deploy.Benchmark
        ``first`` (seconds) and ``times`` (one per round, rounds aligned).

    Examples
    --------
    >>> sorted(latency())[:2], latency()["FP32"].median > 0
    (['BF16', 'FP32'], True)
    """
    def compute() -> dict[str, Any]:
        from . import deploy

        models = {"folded": folded(), "qdq": qdq()}
        compiled = {}
        for label, (which, hint) in PRECISIONS.items():
            try:
                compiled[label] = deploy.compile(models[which], "CPU", precision=hint, hint="LATENCY")
            except RuntimeError:  # a precision this CPU does not offer
                continue
        x = heldout(1)[0].copy()
        return deploy.benchmark_many(compiled, x, warmup=LATENCY_WARMUP, runs=LATENCY_RUNS)

    return _store.cached("latency", compute)


def latency_comparison() -> Comparison:
    """:func:`latency`'s rounds as a :class:`npukit.measure.Comparison`, FP32 the baseline.

    ``latency_comparison().verdict("INT8")`` says whether INT8 was faster,
    indistinguishable or slower than FP32, with its interval.

    Examples
    --------
    >>> latency_comparison().baseline
    'FP32'
    """
    from .timing import Comparison

    return Comparison.from_times({k: b.times for k, b in latency().items()}, baseline="FP32")


def conversions() -> tuple[Conversion, Conversion]:
    """Chapter 2's two measured conversions: CameraNet's input image and its largest activation, NCHW → NHWC.

    Both at batch 1 (``1×3×32×32`` and the largest 4-D output of
    :func:`npukit.models.summary`), each beside a copy of the same bytes, in
    the same interleaved rounds (:func:`npukit.layouts.measure_conversions`
    with its defaults).

    Examples
    --------
    >>> [c.label for c in conversions()]
    ['1×3×32×32 NCHW→NHWC', '1×32×16×16 NCHW→NHWC']
    """
    def compute() -> tuple[Any, Any]:
        import math

        from .layouts import measure_conversions
        from .models import CameraNet, summary

        net = CameraNet.pretrained()
        largest = max((r["output"] for r in summary(net) if len(r["output"]) == 4), key=math.prod)
        return tuple(measure_conversions([((1, 3, net.size, net.size), "NCHW", "NHWC"),
                                          (tuple(largest), "NCHW", "NHWC")]))

    return _store.cached("conversions", compute)


def loop() -> Loop:
    """Chapter 8's closed loop of the shipped CameraNet on the CPU, on the whole held-out draw.

    Its ``machine`` is :func:`machine` and its ``latency`` is :func:`latency`
    (not measured a second time).

    Examples
    --------
    >>> loop().passed and loop().latency["FP32"].times == latency()["FP32"].times
    True
    """
    def compute() -> Any:
        from .capstone import closed_loop
        from .data import HELDOUT_N
        from .models import CameraNet

        return closed_loop(CameraNet.pretrained(), machine=machine(), device="CPU", heldout=HELDOUT_N,
                           latency=latency())

    return _store.cached("loop", compute)


def is_shipped(net: Any) -> bool:
    """True if ``net`` is the shipped CameraNet (same configuration and weights), whose quantities are shared.

    Examples
    --------
    >>> from npukit.models import CameraNet
    >>> is_shipped(CameraNet.pretrained()), is_shipped("CameraNet")
    (True, False)
    """
    import numpy as np

    from .models import CameraNet

    if not isinstance(net, CameraNet):
        return False
    ref = _once("shipped", CameraNet.pretrained)
    return (net.config == ref.config and net.params.keys() == ref.params.keys()
            and all(np.array_equal(net.params[k], ref.params[k]) for k in ref.params))


#: The quantities :func:`glue` can quote, by name: the value each stands for.
QUANTITIES = {
    "float_accuracy": lambda: float_accuracy(),
    "peak_flops": lambda: machine().peak_flops,
    "bandwidth": lambda: machine().bandwidth,
    "ridge": lambda: machine().ridge,
    "threads": lambda: machine().threads,
    "copy_bytes": lambda: machine().copy_bytes,
    "weight_bytes_fp32": lambda: weight_bytes()["FP32"],
    "weight_bytes_int8": lambda: weight_bytes()["INT8"],
    "latency_fp32": lambda: latency()["FP32"].median,
    "latency_bf16": lambda: latency()["BF16"].median,
    "latency_int8": lambda: latency()["INT8"].median,
    "int8_speedup": lambda: latency()["FP32"].median / latency()["INT8"].median,
    "conversion_input": lambda: conversions()[0].convert_s,
    "conversion_activation": lambda: conversions()[1].convert_s,
    "heldout_n": lambda: len(heldout()[1]),
}


def glue(key: str, quantity: str, *, scale: float = 1.0) -> None:
    """Glue a shared quantity under a page's key, marked so the built book can be checked for one value.

    Like ``myst_nb.glue(key, value, display=False)`` with ``value`` =
    ``scale ×`` :data:`QUANTITIES[quantity]`, and with the quantity's name
    and unscaled value in the output's metadata (``"npukit": {"quantity",
    "value"}``). ``tests/test_built_book.py`` reads those marks from every
    built page and fails if one quantity has two values. Use it for every
    quote of a quantity in :data:`QUANTITIES`; the page writes its role as
    usual, ``{glue:text}`page.md::key:.1f```. See CONTRIBUTING.md, "How to
    quote a shared quantity".

    Parameters
    ----------
    key : str
        The page's glue key (``ch0_accuracy`` …).
    quantity : str
        One of :data:`QUANTITIES`.
    scale : float
        Multiplies the glued value (100 for a percentage, 1e6 for µs …); the
        mark keeps the unscaled value.

    Raises
    ------
    TypeError, ValueError
        If ``key`` is not a non-empty string, ``quantity`` not one of
        :data:`QUANTITIES` or ``scale`` not a finite number > 0.

    Examples
    --------
    >>> glue("ch0_heldout_n", "heldout_n")     # in a plain interpreter IPython shows nothing
    """
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    if not _check.text(key, "key"):
        raise ValueError("key must not be empty")
    _check.one_of(quantity, "quantity", tuple(QUANTITIES))
    scale = _check.positive(scale, "scale")
    value = QUANTITIES[quantity]()
    value = int(value) if isinstance(value, int) or (hasattr(value, "dtype") and value.dtype.kind in "iu") \
        else float(value)
    shown = value * scale if scale != 1 else value
    bundle, metadata = format_display_data(shown)
    prefix = "application/papermill.record/"           # what myst_nb.glue(..., display=False) writes
    metadata.update(scrapbook={"name": key, "mime_prefix": prefix}, npukit={"quantity": quantity, "value": value})
    display({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
