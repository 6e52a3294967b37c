"""What a question of the bank is: its kind, its answer, its objective.

Three kinds of question (see the bank's page, ``chapters/question_bank.md``):

* ``numeric``: a text with parameters, a default worked instance, an answer
  computed from the parameters by a formula, a tolerance, the answers the
  typical mistakes give (so that an LMS can say which mistake was made) and,
  where a chapter teaches two right ways to compute it, the other right
  answer (``also``), accepted with its own feedback. A ``draw`` function
  picks other parameters from a random generator: the same question with
  other numbers, for a class or a student. Every numeric question states all
  its premises, so that it stands alone when its numbers are drawn on their
  own or when a quiz draws it at random.
* ``choice``: one right option and distractors, each distractor the answer a
  typical mistake gives, with the feedback that names the mistake.
* ``short``: an answer in a few sentences, with a model answer and a rubric
  (criteria and points) for whoever grades it.

Every question names the learning objective of its chapter it tests
(``OBJECTIVES``): the number of the objective in the chapter page's list,
and a phrase of that objective, which a test finds on the page.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Mapping

import numpy as np

from ... import _check

KINDS = ("numeric", "choice", "short")

#: The units of the bank: chapter key → (page, title, objectives). An objective is
#: a phrase that occurs in that item of the page's "Learning objectives" list, in order.
#: ``pre`` is the prerequisite diagnostic; its "objectives" are the topics it checks.
UNITS: dict[str, tuple[str | None, str, tuple[str, ...]]] = {
    "0": ("00_cameranet.md", "Meet CameraNet", (
        "draw labeled images from `shapes_dataset`",
        "recompute a row's output shape, parameters and MACs",
        "say why a precision hint is needed",
        "held-out accuracy")),
    "1": ("01_tensors.md", "Tensors are memory", (
        "compute the byte strides of a contiguous tensor",
        "predict whether a transpose, slice, reshape or type conversion returns a view or a copy",
        "explain when a reshape is forced to copy",
        "measure the alignment of a buffer")),
    "2": ("02_layouts.md", "Layouts", (
        "write the strides of a tensor in NCHW, NHWC and blocked (nChw16c) layouts",
        "predict whether a layout change is a free view or a full read and write",
        "build the patches of a convolution (im2col)",
        "lets a vectorized kernel fill its vectors",
        "trace the layout conversions between a camera and an accelerator")),
    "3": ("03_graphs.md", "Graphs and the roofline", (
        "count the MACs, FLOPs, parameter bytes and activation bytes",
        "measure a machine's roofline so that its two numbers are comparable",
        "place a model's layers on the roofline",
        "place measured kernels under the roof")),
    "3b": ("03b_rewrites.md", "Rewriting the graph", (
        "derive Conv + BatchNorm folding",
        "compute the DRAM bytes a Conv → Add → Relu fusion saves",
        "compute tensor lifetimes from a topological order",
        "bound what a spec sheet's TOPS delivers")),
    "4": ("04_gemm.md", "GEMM and tiling", (
        "lower a convolution or fully connected layer to a GEMM",
        "write a tiled matrix product",
        "predict the DRAM traffic of a tile schedule",
        "choose a tile for a given on-chip buffer size",
        "measure where the time of a tiled product goes")),
    "5": ("05_systolic.md", "Systolic arrays", (
        "trace operands through a systolic array cycle by cycle",
        "predict a layer's cycles, folds and utilization",
        "map convolution layers, depthwise ones included",
        "compute an array's peak TOPS",
        "estimate how many bytes per cycle the array needs")),
    "6": ("06_quant.md", "Quantization", (
        "quantize and dequantize a tensor exactly as ONNX QuantizeLinear",
        "choose scales from data",
        "compute an INT8 layer with int32 accumulators",
        "build a QDQ model",
        "design a calibration set")),
    "7": ("07_deploy.md", "Deploying to an NPU", (
        "compile an ONNX model with OpenVINO",
        "check a model against an NPU's operator and shape contract",
        "read the executed graph and a per-layer profile",
        "measure latency correctly",
        "run the same model in ONNX Runtime beside OpenVINO")),
    "8": ("08_capstone.md", "The minimal closed loop", (
        "take a trained model to a compiled INT8 model through explicit stages",
        "verify a deployed model against its float reference",
        "benchmark FP32, BF16 and INT8 with warm-up",
        "explain a measured latency",
        "run the same loop for a variant of the model")),
    "pre": (None, "Prerequisite diagnostic", (
        "NumPy indexing and shapes",
        "binary numbers and two's complement",
        "powers of two",
        "caches and memory",
        "Python")),
}


class _Record:
    """A plain record: its fields are set once, by ``__init__``, and shown by ``repr``.

    (Written out rather than made with ``dataclasses``: the methods a dataclass
    generates have no source file, and npukit.teach's tamper guard takes such
    code, in a module under npukit.teach imported after it, for a notebook's.)
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self.__slots__)})"


class Option(_Record):
    """One option of a multiple-choice question; a distractor's ``feedback`` names the mistake behind it."""

    __slots__ = ("text", "correct", "feedback")

    def __init__(self, text: str, correct: bool, feedback: str) -> None:
        self.text = _check.text(text, "text")
        self.correct = _check.boolean(correct, "correct")
        self.feedback = _check.text(feedback, "feedback")


class Mistake(_Record):
    """A typical mistake in a numeric question: the answer it gives (from the same parameters) and why."""

    __slots__ = ("value", "feedback")

    def __init__(self, value: Callable[..., float | None], feedback: str) -> None:
        if not callable(value):
            raise TypeError(f"value must be a function of the question's parameters, got {type(value).__name__}")
        self.value = value
        self.feedback = _check.text(feedback, "feedback")


class Instance(_Record):
    """One numeric question with its numbers filled in.

    ``also`` holds the other right answers (value, feedback) that differ from
    ``answer`` by more than the tolerance; ``mistakes`` the typical mistakes'
    answers that differ from every right one.
    """

    __slots__ = ("text", "answer", "tolerance", "solution", "mistakes", "params", "also")

    def __init__(self, text: str, answer: float, tolerance: float, solution: str,
                 mistakes: tuple[tuple[float, str], ...], params: Mapping[str, Any],
                 also: tuple[tuple[float, str], ...] = ()) -> None:
        self.text, self.answer, self.tolerance = text, answer, tolerance
        self.solution, self.mistakes, self.params, self.also = solution, mistakes, params, also


class Question(_Record):
    """One question of the bank. See the module docstring for the three kinds.

    ``text`` is a ``str.format`` template over ``params`` for a numeric
    question and plain Markdown otherwise; ``solution`` is the worked answer
    (for a numeric question, a function of the parameters returning it).
    """

    __slots__ = ("id", "unit", "objective", "kind", "text", "solution", "params", "answer", "rel_tol", "abs_tol",
                 "draw", "mistakes", "options", "rubric", "pointer", "source", "also")

    def __init__(self, id: str, unit: str, objective: int, kind: str, text: str, solution: Any = "",
                 params: Mapping[str, Any] | None = None, answer: Callable[..., float] | None = None,
                 rel_tol: float = 0.0, abs_tol: float = 0.0,
                 draw: Callable[[np.random.Generator], dict] | None = None, mistakes: tuple[Mistake, ...] = (),
                 options: tuple[Option, ...] = (), rubric: tuple[tuple[int, str], ...] = (), pointer: str = "",
                 source: str = "", also: tuple[Mistake, ...] = ()) -> None:
        self.id, self.unit, self.objective, self.kind, self.text = id, unit, objective, kind, text
        self.solution, self.params, self.answer, self.rel_tol, self.abs_tol = solution, params, answer, rel_tol, abs_tol
        self.draw, self.mistakes, self.options, self.rubric = draw, tuple(mistakes), tuple(options), tuple(rubric)
        self.pointer, self.source, self.also = pointer, source, tuple(also)
        self._validate()

    def _validate(self) -> None:
        _check.text(self.id, "id")
        _check.one_of(self.unit, "unit", tuple(UNITS))
        _check.one_of(self.kind, "kind", KINDS)
        objectives = UNITS[self.unit][2]
        _check.integer(self.objective, "objective", minimum=1)
        if self.objective > len(objectives):
            raise ValueError(f"objective must be 1 … {len(objectives)} for unit {self.unit}, got {self.objective}")
        if self.kind == "numeric":
            if self.answer is None or self.params is None or self.draw is None or not callable(self.solution):
                raise ValueError(f"{self.id}: a numeric question needs params, answer, draw and a solution function")
        elif self.kind == "choice":
            if sum(o.correct for o in self.options) != 1 or len(self.options) < 3:
                raise ValueError(f"{self.id}: a choice question needs one right option and at least two distractors")
            if not all(o.feedback for o in self.options):
                raise ValueError(f"{self.id}: every option needs feedback (a distractor names its mistake)")
        elif not self.rubric or not self.solution:
            raise ValueError(f"{self.id}: a short-answer question needs a model answer and a rubric")
        if self.unit == "pre" and not self.pointer:
            raise ValueError(f"{self.id}: a diagnostic question needs a pointer (what to read when it is missed)")

    @property
    def points(self) -> int:
        """The marks a question is meant to carry: 1 for numeric and choice questions, the rubric's total for a
        short answer. (Moodle imports every GIFT question with a default mark of 1: see the bank's page.)"""
        return sum(p for p, _ in self.rubric) if self.kind == "short" else 1

    def _params(self, params: Any) -> dict:
        """``params`` checked against the worked instance's: the same names, each value of the same kind."""
        if params is None:
            return dict(self.params)
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a mapping of parameter names to values, got {type(params).__name__}")
        p = dict(params)
        missing, unknown = set(self.params) - set(p), set(p) - set(self.params)
        if missing or unknown:
            raise ValueError(f"params must give exactly {sorted(self.params)} for {self.id}"
                             + (f", missing {sorted(missing)}" if missing else "")
                             + (f", unknown {sorted(unknown)}" if unknown else ""))
        return {key: _same_kind(p[key], default, f"params[{key!r}]") for key, default in self.params.items()}

    def instance(self, params: Mapping[str, Any] | None = None) -> Instance:
        """This numeric question with ``params`` (default: the worked instance) filled in."""
        if self.kind != "numeric":
            raise ValueError(f"instance: {self.id} is a {self.kind} question, not a numeric one")
        p = self._params(params)
        try:
            with np.errstate(divide="raise", over="raise", invalid="raise"):     # an error, not an inf
                return self._fill(p)
        except (ArithmeticError, IndexError, KeyError, TypeError, ValueError) as e:
            raise ValueError(f"params {p} cannot be asked in {self.id}: {type(e).__name__}: {e}") from None

    def _fill(self, p: dict) -> Instance:
        answer = float(self.answer(**p))
        if not math.isfinite(answer):
            raise ValueError(f"the answer is not finite ({answer})")
        tolerance = max(self.abs_tol, self.rel_tol * abs(answer))
        right, also, mistakes = [answer], [], []
        for a in self.also:                                          # other right answers
            v = a.value(**p)
            if v is not None and all(abs(float(v) - r) > tolerance for r in right):
                right.append(float(v))
                also.append((float(v), a.feedback))
        for m in self.mistakes:                                      # None: the mistake changes nothing here
            v = m.value(**p)
            if v is not None and all(abs(float(v) - r) > tolerance for r in right):
                mistakes.append((float(v), m.feedback))
        return Instance(self.text.format(**p), answer, tolerance, self.solution(answer=answer, **p),
                        tuple(mistakes), p, tuple(also))

    def variant(self, rng: np.random.Generator) -> Instance:
        """The same numeric question with parameters drawn from ``rng``."""
        _check.instance(rng, "rng", np.random.Generator, "numpy.random.Generator")
        return self.instance(self.draw(rng))


def numeric(id: str, unit: str, objective: int, text: str, params: dict, answer: Callable[..., float],
            solution: Callable[..., str], draw: Callable[[np.random.Generator], dict], *,
            rel_tol: float = 0.0, abs_tol: float = 0.0, mistakes: tuple = (), also: tuple = (), pointer: str = "",
            source: str = "") -> Question:
    """A numeric question; ``mistakes`` (answers worth nothing) and ``also`` (other right answers) are
    ``(function of the params, feedback)`` pairs."""
    return Question(id, unit, objective, "numeric", text, solution, params, answer, rel_tol, abs_tol, draw,
                    tuple(Mistake(f, why) for f, why in mistakes), pointer=pointer, source=source,
                    also=tuple(Mistake(f, why) for f, why in also))


def choice(id: str, unit: str, objective: int, text: str, right: tuple[str, str],
           wrong: list[tuple[str, str]], *, solution: str = "", pointer: str = "", source: str = "") -> Question:
    """A multiple-choice question: ``right`` and each of ``wrong`` are ``(option, feedback)``."""
    options = (Option(right[0], True, right[1]),) + tuple(Option(t, False, f) for t, f in wrong)
    return Question(id, unit, objective, "choice", text, solution or right[1], options=options,
                    pointer=pointer, source=source)


def short(id: str, unit: str, objective: int, text: str, model: str, rubric: list[tuple[int, str]], *,
          pointer: str = "", source: str = "") -> Question:
    """A short-answer question: a model answer and a rubric of ``(points, criterion)``."""
    return Question(id, unit, objective, "short", text, model, rubric=tuple(rubric), pointer=pointer,
                    source=source)


def _same_kind(value: Any, default: Any, name: str) -> Any:
    """``value`` if it is of the kind of the worked instance's ``default`` (a list for a tuple becomes a tuple);
    ``TypeError`` or ``ValueError`` naming ``name`` otherwise."""
    if isinstance(value, bool) and not isinstance(default, bool):
        raise TypeError(f"{name} must be a number, not a bool, got {value!r}")
    if isinstance(default, numbers.Integral):
        return _check.integer(value, name)
    if isinstance(default, numbers.Real):
        if not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value!r}")
        return value
    if isinstance(default, str):
        return _check.text(value, name)
    if isinstance(default, tuple):
        items = _check.sequence(value, name, length=len(default))
        return tuple(_same_kind(v, d, f"{name}[{i}]") for i, (v, d) in enumerate(zip(items, default)))
    return value


def plural(n: int, word: str) -> str:
    """``n`` and ``word``, with an ``s`` unless ``n`` is 1: ``plural(1, "fold")`` is ``"1 fold"``."""
    return f"{fmt(n)} {word}{'' if n == 1 else 's'}"


def fmt(x: Any) -> str:
    """A number for a question's text: integers with thousands separators, others to 6 significant digits."""
    if isinstance(x, numbers.Integral) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return f"{int(x):,}"
    return f"{float(x):.6g}"
