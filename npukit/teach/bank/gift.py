"""The bank in Moodle's GIFT format, the plain-text format Moodle imports natively.

The escaping follows Moodle's own GIFT importer and exporter
(``question/format/gift/format.php``): ``\\ ~ = # { } :`` are escaped with a
backslash and a newline inside a text is written ``\\n``, because a blank line
ends a question. Texts are Markdown (``[markdown]``). Numeric questions carry
the right answer with its tolerance, any other right answer (full marks,
with its own feedback) and, at 0 %, the answers the typical mistakes give
with feedback naming the mistake; short answers become essay questions
(graded by hand) whose general feedback holds the model answer and the
rubric. GIFT has no syntax for a question's mark, and Moodle gives every
imported question a default mark of 1; an essay's comment line says which
mark to set instead (its rubric's total). See the bank's page,
chapters/question_bank.md.
"""

from __future__ import annotations

import zlib
from typing import Iterable

import numpy as np

from ... import _check
from .core import UNITS, Question

_RESERVED = [("\\", "\\\\"), ("~", "\\~"), ("=", "\\="), ("#", "\\#"), ("{", "\\{"), ("}", "\\}"), (":", "\\:"),
             ("\r", ""), ("\n", "\\n")]


def escape(text: str) -> str:
    """``text`` with GIFT's reserved characters escaped, as Moodle's exporter does."""
    for char, repl in _RESERVED:
        text = text.replace(char, repl)
    return text


def number(x: float) -> str:
    """A plain decimal numeral (no exponent) that Moodle's ``is_numeric`` and GIFT parsers read."""
    if float(x).is_integer():
        return str(int(x))
    return np.format_float_positional(float(x), precision=12, unique=True, trim="-")


def category(unit: str, title: str = "Tensors on Silicon") -> str:
    """The Moodle question category of a unit, e.g. ``Tensors on Silicon/Chapter 01 Tensors are memory``
    (the diagnostic's is ``Tensors on Silicon/Prerequisite diagnostic``)."""
    name = UNITS[unit][1]
    if unit == "pre":
        return f"{title}/{name}"
    return f"{title}/Chapter {unit.zfill(2) if unit != '3b' else '03b'} {name}"


def _objective(q: Question) -> str:
    where = "prerequisite" if q.unit == "pre" else f"objective {q.unit}.{q.objective}"
    return f"Tests {where}: {UNITS[q.unit][2][q.objective - 1]}."


def _general(q: Question, solution: str) -> str:
    parts = [solution, _objective(q)]
    if q.pointer:
        parts.append(f"If you missed it, read: {q.pointer}")
    return "\n\n".join(parts)


def question(q: Question, rng: np.random.Generator | None = None) -> str:
    """One question as a GIFT block (no blank line inside); ``rng`` draws a numeric question's numbers."""
    head = f"// {q.id} | {_objective(q)} | {q.kind}" + (f" | from {q.source}" if q.source else "")
    if q.kind == "short":
        head += f"\n// Moodle imports this essay with a mark of 1: set its default mark to {q.points}, its rubric's total."
    name = f"::{escape(q.id)}::"
    if q.kind == "numeric":
        inst = q.instance() if rng is None else q.variant(rng)
        answers = [f"\t={number(inst.answer)}:{number(inst.tolerance)}#Right."]
        answers += [f"\t={number(v)}:{number(inst.tolerance)}#{escape(why)}" for v, why in inst.also]
        answers += [f"\t=%0%{number(v)}:{number(inst.tolerance)}#{escape(why)}" for v, why in inst.mistakes]
        body = "{#\n" + "\n".join(answers) + f"\n\t####{escape(_general(q, inst.solution))}\n}}"
        text = inst.text
    elif q.kind == "choice":
        options = [f"\t{'=' if o.correct else '~'}{escape(o.text)}#{escape(o.feedback)}" for o in q.options]
        body = "{\n" + "\n".join(options) + f"\n\t####{escape(_general(q, q.solution))}\n}}"
        text = q.text
    else:
        rubric = "\n".join(f"- {p} point{'s' if p > 1 else ''}: {c}" for p, c in q.rubric)
        general = f"Model answer: {q.solution}\n\nRubric ({q.points} points):\n\n{rubric}"
        body = "{####" + escape(_general(q, general)) + "}"
        text = q.text
    return f"{head}\n{name}[markdown]{escape(text)}{body}"


def to_gift(questions: Iterable[Question], seed: int | None = None, title: str = "Tensors on Silicon") -> str:
    """The questions as one GIFT file, a ``$CATEGORY`` per unit.

    With ``seed``, every numeric question gets numbers drawn from its own
    generator (seeded by ``seed`` and the question's id), so a class can be
    given other numbers than the worked instances printed in the repository.

    Examples
    --------
    >>> from npukit.teach import bank
    >>> text = bank.to_gift([bank.get("ch1-c-stride")])
    >>> print(text.splitlines()[3])
    $CATEGORY: Tensors on Silicon/Chapter 01 Tensors are memory
    >>> print(text.splitlines()[7])
    \t=192:0#Right.
    """
    if isinstance(questions, (str, bytes)) or not hasattr(questions, "__iter__"):
        raise TypeError(f"questions must be an iterable of Question, got {type(questions).__name__}")
    questions = list(_check.sequence(list(questions), "questions", min_length=1))
    for i, q in enumerate(questions):
        _check.instance(q, f"questions[{i}]", Question)
    if seed is not None:
        seed = _check.integer(seed, "seed", minimum=0)
    _check.text(title, "title")
    if not title or any(c in title for c in "\n/:"):
        raise ValueError(f"title must be a non-empty name without '/', ':' or a newline, got {title!r}")
    lines = ["// Tensors on Silicon: question bank in Moodle's GIFT format, written by npukit.teach.bank.",
             "// Numeric and multiple-choice questions are graded by Moodle; essays by hand, with the rubric in "
             "their general feedback." + (f" Numbers drawn with seed {seed}." if seed is not None else ""), ""]
    unit = None
    for q in questions:
        if q.unit != unit:
            unit = q.unit
            lines += [f"$CATEGORY: {category(unit, title)}", ""]
        rng = None if seed is None else np.random.default_rng([seed, zlib.crc32(q.id.encode())])
        lines += [question(q, rng), ""]
    return "\n".join(lines)
