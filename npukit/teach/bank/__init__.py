"""The question bank and the prerequisite diagnostic.

Every chapter's questions live in a module named like the chapter
(``bank.tensors`` for chapter 1 …), the diagnostic in ``bank.prerequisites``;
:mod:`npukit.teach.bank.core` says what a question is and
:mod:`npukit.teach.bank.gift` writes the bank in Moodle's GIFT format::

    python -m npukit.teach.bank gift -o bank.gift.txt            # the worked instances
    python -m npukit.teach.bank gift -o quiz.gift.txt --seed 7   # numeric questions with other numbers

See the bank's page, chapters/question_bank.md.

Examples
--------
>>> from npukit.teach import bank
>>> q = bank.get("ch1-c-stride")
>>> q.kind, q.unit, q.objective
('numeric', '1', 1)
>>> q.instance().answer
192.0
"""

from __future__ import annotations

from . import (cameranet, capstone, core, deploy, gemm, graphs, layouts, npus, prerequisites, quant, rewrites,
               systolic, tensors)
from .core import KINDS, UNITS, Instance, Mistake, Option, Question
from .gift import to_gift

#: Unit → the module holding its questions. A new chapter adds its module here.
MODULES = {"0": cameranet, "1": tensors, "2": layouts, "3": graphs, "3b": rewrites, "4": gemm, "5": systolic,
           "6": quant, "7": deploy, "8": capstone, "9": npus, "pre": prerequisites}

__all__ = ["KINDS", "UNITS", "MODULES", "Question", "Option", "Mistake", "Instance", "questions", "get", "counts",
           "to_gift"]


def questions(unit: str | None = None) -> list[Question]:
    """Every question of the bank in order, or those of one ``unit`` (``"0"`` … ``"9"``, ``"3b"``, ``"pre"``)."""
    if unit is None:
        return [q for m in MODULES.values() for q in m.QUESTIONS]
    core._check.one_of(unit, "unit", tuple(MODULES))
    return list(MODULES[unit].QUESTIONS)


def get(id: str) -> Question:
    """The question with this ``id``."""
    core._check.text(id, "id")
    for q in questions():
        if q.id == id:
            return q
    raise ValueError(f"id must name a question of the bank, got {id!r}")


def counts() -> dict[str, dict[str, int]]:
    """Unit → kind → number of questions."""
    return {u: {k: sum(q.kind == k for q in questions(u)) for k in KINDS} for u in MODULES}
