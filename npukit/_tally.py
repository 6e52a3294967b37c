"""The contract of the "numbers so far" table, at the bottom of the import graph.

A chapter's module adds rows to the table with ``numbers(ctx) -> list[Row]``.
It needs two names to do so, and both live here, in a module that imports
no chapter: :class:`Row`, one line of the table, and :class:`Inputs`, the
type of ``ctx``. The collector that imports every chapter's module and the
concrete context that computes the inputs (:class:`npukit.tally.Context`)
sit at the top of the graph, in :mod:`npukit.tally`, so no chapter module
imports a module that imports it (``tests/test_import_graph.py`` checks).
See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _check


@dataclass(frozen=True)
class Row:
    """One line of the table: which chapter, what was measured, its value, and how.

    ``value`` is already formatted for reading (units included); ``how`` names
    the function or measurement that produced it, so a reader can redo it.
    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md), whose table
    every later chapter extends.

    Raises
    ------
    TypeError, ValueError
        If ``chapter`` is not an integer >= 0 or a text field is not a
        non-empty string.

    Examples
    --------
    >>> Row(0, "MACs per image", "569,344", "models.summary").chapter
    0
    """

    chapter: int
    quantity: str
    value: str
    how: str

    def __post_init__(self) -> None:
        _check.integer(self.chapter, "chapter", minimum=0)
        for field in ("quantity", "value", "how"):
            if not _check.text(getattr(self, field), field).strip():
                raise ValueError(f"{field} must not be empty")


class Inputs:
    """What a chapter's ``numbers(ctx)`` reads; the concrete class is :class:`npukit.tally.Context`.

    Attributes a row may read: ``net`` (CameraNet), ``images`` (its input
    batch), ``model`` (its ONNX graph), ``machine`` (this build's roofline),
    ``conversions`` (chapter 2's measured conversions), ``npu_buffer``
    (bytes), ``loop`` (chapter 8's closed loop), ``heldout`` (the held-out
    draw), ``float_accuracy``, ``weight_bytes`` (per precision), ``qdq``
    (the INT8 model) and ``latency`` (per precision). Each is computed on
    first use, from the build's store of shared quantities
    (:mod:`npukit.shared`) unless the page passed its own.
    """

    __slots__ = ()


def inputs(ctx: Any, name: str = "ctx") -> Inputs:
    """Return ``ctx`` if it is the table's context, else raise ``TypeError`` naming ``name``."""
    return _check.instance(ctx, name, Inputs, "tally.Context")
