"""Checkers for lab 9, "Real NPUs, measured" (labs/09_npus.ipynb).

Each ``check_*`` calls the learner's function on fresh seeded cases and
compares it with a reference written here (the arithmetic of the chapter's
conventions, spelled out), never with :mod:`npukit.npus`, whose functions —
and this module — are off limits while the learner's function runs; see
:mod:`npukit.teach.core`. The prediction check also compares the learner's
prediction with the published measurement itself, read from the shipped
table by the checker.

A wrong answer that is exactly what a typical mistake gives is named: a
MAC read as one operation, the bandwidth left out, peak TOPS alone, float
weights counted as FP32, the roofline's two times added instead of the
larger taken, classifier-free guidance forgotten.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .core import CheckFailed, NotAttempted, _plain, _rng, check, learner_call

__all__ = ["check_compulsory_bytes", "check_roofline_seconds", "check_npu_prediction", "check_seconds_per_image"]

#: precision → (bytes per weight, bytes per activation) on the NPU, as the chapter states them.
_BYTES = {"float": (2, 2), "w8a8": (1, 1), "w8a16": (1, 2)}


def _library() -> tuple:
    from .. import npus

    return (npus,)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


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
    wb, ab = _BYTES[precision]
    weights = sum(c.act_bytes_out if c.op_type == "Gather" else c.param_bytes for c in counts)
    return weights * wb + io * ab


def _bytes_hint(got: Any, want: int, counts: list, io: int, precision: str) -> str | None:
    if not _is_number(got):
        return "return the number of bytes as an int."
    wb, ab = _BYTES[precision]
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
    activation size. Fresh cases: 30 random graphs of 3–8 nodes (Conv,
    MatMul, Gemm, Relu, Add and Gather lookups), every precision. Reference:
    that sum, written here. :mod:`npukit.npus` is refused.

    Examples
    --------
    >>> def mine(counts, io, precision):
    ...     wb, ab = {"float": (2, 2), "w8a8": (1, 1), "w8a16": (1, 2)}[precision]
    ...     weights = sum(c.act_bytes_out if c.op_type == "Gather" else c.param_bytes for c in counts)
    ...     return weights * wb + io * ab
    >>> check_compulsory_bytes(mine)
    ✓ compulsory bytes: 30 fresh cases agree with the reference.
    """
    rng = _rng(9101)
    cases = [(_counts(rng), int(rng.integers(1000, 700_000)), ("float", "w8a8", "w8a16")[i % 3]) for i in range(30)]

    def compare(got: Any, want: int) -> bool:
        g = _plain(got)
        return _is_number(g) and float(g) == want

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
    30–250 GB/s, both sides of the ridge. Reference: that arithmetic, written
    here. :mod:`npukit.npus` is refused.

    Examples
    --------
    >>> def mine(macs, nbytes, peak_tops, bandwidth_gbs):
    ...     c, m = 2 * macs / (peak_tops * 1e12), nbytes / (bandwidth_gbs * 1e9)
    ...     return (c, "compute") if c >= m else (m, "memory")
    >>> check_roofline_seconds(mine)
    ✓ roofline seconds: 40 fresh cases agree with the reference.
    """
    rng = _rng(9102)
    cases = []
    for _ in range(40):
        macs = float(10 ** rng.uniform(6.5, 12))
        cases.append((macs, float(macs * 10 ** rng.uniform(-3.5, -0.5)), float(rng.uniform(5, 100)),
                      float(rng.uniform(30, 250))))

    def compare(got: Any, want: tuple) -> bool:
        g = _plain(got)
        return (isinstance(g, (tuple, list)) and len(g) == 2 and _is_number(_plain(g[0]))
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
        return ("your formula gives this; the efficiency you stated is what is off. Take it from models like this "
                "one on the same device.")
    if close(got, 2 * macs / (peak * 1e12)):
        return "that is peak TOPS alone: the efficiency you state scales the peak the model gets."
    if close(got, max(compute / 2, memory)):
        return "a MAC is two operations: the compute time is 2·MACs / (efficiency · peak)."
    if close(got, compute) and memory > compute:
        return "the bandwidth is left out: this case moves its bytes more slowly than it computes."
    if close(got, max(compute, memory) / eff) or close(got, max(2 * macs / (peak * 1e12), memory) / eff):
        return ("the efficiency is a fraction of the peak arithmetic rate: it scales the compute time only; "
                "the bytes still take nbytes / bandwidth.")
    return (f"expected max(2·MACs / (efficiency·peak), nbytes / bandwidth) = max({compute:.4g}, {memory:.4g}) s, "
            f"got {got!r}.")


def _target(target: Any) -> tuple[tuple, float, Any]:
    """The target's inputs (counted by the course) and its published time, read by the checker itself."""
    from .. import npus

    if not isinstance(target, tuple) or len(target) != 3 or not all(isinstance(x, str) for x in target):
        raise TypeError(f"target must be a tuple (model, device, precision) of strings, got {target!r}")
    name, device, precision = target
    if device not in npus.DEVICES or precision not in _BYTES:
        raise ValueError(f"target must name a device with cited figures ({', '.join(npus.DEVICES)}) and a precision "
                         f"in {', '.join(_BYTES)}; got {target!r}")
    m = npus.table().fastest(name, device, precision)
    if m is None:
        raise ValueError(f"target {target!r} has no published run wholly on the NPU")
    w, d = npus.work(name), npus.DEVICES[device]
    wb, ab = _BYTES[precision]
    return (float(w.macs), float(w.weights * wb + w.io * ab), d.peak_tops, d.bandwidth_gbs), m.ms / 1e3, m


def check_npu_prediction(fn: Callable[[float, float, float, float, float], float], efficiency: float, *,
                         target: tuple[str, str, str] = ("resnet50", "Snapdragon X Elite CRD", "w8a8"),
                         tolerance: float = 2.0) -> None:
    """Check a latency prediction from the roofline with a stated efficiency, against a real NPU's measurement.

    ``fn(macs, nbytes, peak_tops, bandwidth_gbs, efficiency) -> seconds``
    predicts ``max(2·macs / (efficiency·peak), nbytes / bandwidth)``: the
    compute roof scaled by the fraction of peak the learner states. First the
    prediction for ``target`` (model, device, precision), with the learner's
    ``efficiency`` and the work and device figures the chapter uses, must lie
    within a factor ``tolerance`` of AI Hub's published latency (a factor
    of two by default: the fraction one device delivers varies about that much
    between models, chapter 9 shows). Then the function must agree with the
    formula on 30 fresh cases (both roofs, efficiencies 5–60 %), which
    separates the typical mistakes: peak TOPS alone, a MAC read as one
    operation, the bandwidth left out. :mod:`npukit.npus` is refused.

    Examples
    --------
    >>> def mine(macs, nbytes, peak_tops, bandwidth_gbs, efficiency):
    ...     return max(2 * macs / (efficiency * peak_tops * 1e12), nbytes / (bandwidth_gbs * 1e9))
    >>> check_npu_prediction(mine, 0.25)
    ✓ NPU prediction: you predicted 0.727 ms for resnet50 (w8a8) on Snapdragon X Elite CRD; published 0.843 ms (within 2×); 30 fresh cases agree too.
    """
    name = "NPU prediction"
    if efficiency is None or efficiency is Ellipsis:
        raise NotAttempted(f"{name}: not attempted yet (set my_efficiency to a number first).")
    eff = _plain(efficiency)
    if not _is_number(eff) or not 0 < eff <= 1:
        raise CheckFailed(f"{name}: efficiency must be the fraction of peak you assume, a number in (0, 1] "
                          f"(0.2 for 20 %), got {efficiency!r}")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)):
        raise TypeError(f"tolerance must be a number (a factor > 1), got {type(tolerance).__name__}")
    if not 1 < tolerance < math.inf:
        raise ValueError(f"tolerance must be a factor > 1, got {tolerance!r}")
    args, published, m = _target(target)

    def predicted(*case: Any) -> float:
        got = _plain(learner_call(name, fn, *case, forbid=_library()))
        if not _is_number(got) or got <= 0:
            raise CheckFailed(f"{name}: return a time in seconds (a positive number), got {got!r}")
        return float(got)

    guess = predicted(*args, float(eff))
    model_name, device, precision = target
    if not 1 / tolerance <= guess / published <= tolerance:
        why = _prediction_hint(guess, *args, float(eff))
        raise CheckFailed(
            f"{name}: you predicted {guess * 1e3:.3g} ms for {model_name} ({precision}) on {device}; AI Hub "
            f"published {published * 1e3:.3g} ms ({m.runtime}), {max(guess, published) / min(guess, published):.1f}× "
            f"off, beyond the {tolerance:g}× allowed.\n  Hint: {why}")
    rng = _rng(9103)
    for _ in range(30):
        macs = float(10 ** rng.uniform(7, 12))
        case = (macs, float(macs * 10 ** rng.uniform(-3, -0.3)), float(rng.uniform(10, 90)),
                float(rng.uniform(40, 230)), float(rng.uniform(0.05, 0.6)))
        got, want = predicted(*case), _predict(*case)
        if not math.isclose(got, want, rel_tol=1e-6):
            raise CheckFailed(f"{name}: right within {tolerance:g}× for {model_name}, but for macs={case[0]:.4g}, "
                              f"nbytes={case[1]:.4g}, peak_tops={case[2]:.4g}, bandwidth_gbs={case[3]:.4g}, "
                              f"efficiency={case[4]:.3g} you return {got:.4g} s where the formula gives {want:.4g} s."
                              f"\n  Hint: {_prediction_hint(got, *case)}")
    if not math.isclose(guess, _predict(*args, float(eff)), rel_tol=1e-6):
        raise CheckFailed(f"{name}: for {model_name} your function returns {guess * 1e3:.4g} ms, but the formula with "
                          f"your efficiency gives {_predict(*args, float(eff)) * 1e3:.4g} ms: a prediction must come "
                          "from the stated efficiency, the same way for every model.")
    print(f"✓ {name}: you predicted {guess * 1e3:.3g} ms for {model_name} ({precision}) on {device}; published "
          f"{published * 1e3:.3g} ms (within {tolerance:g}×); 30 fresh cases agree too.")


# ---- exercise 4: Stable Diffusion's time per image ---------------------------------------------------------


def _per_image(t_text: float, t_unet: float, t_vae: float, steps: int, guidance: bool) -> float:
    g = 2 if guidance else 1
    return g * t_text + g * steps * t_unet + t_vae


def _image_hint(got: Any, want: float, t_text: float, t_unet: float, t_vae: float, steps: int, guidance: bool
                ) -> str | None:
    if not _is_number(_plain(got)):
        return "return the seconds as a number."
    got = float(_plain(got))
    close = lambda a: math.isclose(got, a, rel_tol=1e-9)  # noqa: E731
    if guidance and (close(_per_image(t_text, t_unet, t_vae, steps, False)) or close(
            t_text + 2 * steps * t_unet + t_vae) or close(2 * t_text + steps * t_unet + t_vae)):
        return ("with classifier-free guidance every step runs the UNet twice (with the prompt and with the empty "
                "prompt), and the text encoder encodes both prompts once.")
    if close(want - t_vae + steps * t_vae) or close(want + (steps - 1) * t_vae):
        return "the VAE decoder runs once per image, after the last step, not once per step."
    g = 2 if guidance else 1
    if close(g * steps * (t_text + t_unet) + t_vae):
        return "the text encoder runs once per prompt, before the steps, not at every step."
    return None


def check_seconds_per_image(fn: Callable[[float, float, float, int, bool], float]) -> None:
    """Check ``fn(t_text, t_unet, t_vae, steps, guidance) -> seconds`` for one Stable Diffusion image.

    The text encoder runs once per prompt, the UNet once per step per prompt,
    the VAE decoder once; with classifier-free guidance there are two prompts
    (the user's and the empty one). Fresh cases: 30 with component times from
    1 ms to 5 s, 1–50 steps, with and without guidance. Reference: that sum,
    written here. :mod:`npukit.npus` (its ``pipeline_seconds``) is refused.

    Examples
    --------
    >>> check_seconds_per_image(lambda te, u, v, n, g: (2 if g else 1) * (te + n * u) + v)
    ✓ seconds per image: 30 fresh cases agree with the reference.
    """
    rng = _rng(9104)
    cases = [(float(10 ** rng.uniform(-3, -1)), float(10 ** rng.uniform(-2.5, 0.7)), float(10 ** rng.uniform(-2, 0.5)),
              int(rng.integers(1, 51)), bool(i % 2)) for i in range(30)]
    check("seconds per image", fn, cases, _per_image, rtol=1e-9, atol=0.0, hint=_image_hint, forbid=_library())
