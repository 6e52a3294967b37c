"""CameraNet's "numbers so far": one contract for the rows every chapter adds.

Each chapter page ends with a table of what the course has measured or counted
about CameraNet so far, rebuilt from live computations at every build. The
contract is small:

* a chapter's module defines ``numbers(ctx: Context) -> list[Row]``;
* the module is registered in :data:`npukit.CHAPTERS` under the chapter's number;
* a page shows the table with ``tally.table(upto=N, ctx=ctx)``.

A :class:`Context` holds what the rows are computed from — the pretrained
network, the input batch, its ONNX graph, this machine's roofline, measured
layout conversions. Each is made on first use and then shared, and a page that
already measured something passes it in instead of measuring it twice.

See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Sequence

from . import _check

if TYPE_CHECKING:  # the real imports happen on first use, to keep `import npukit` fast
    import numpy as np
    import onnx
    from IPython.display import HTML

    from .capstone import Loop
    from .graphs import MachineSpec
    from .layouts import Conversion
    from .models import CameraNet

__all__ = [
    "Row",
    "Context",
    "rows",
    "table",
]


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


class Context:
    """The inputs of every chapter's rows, each computed once, on first use.

    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    net : CameraNet, optional
        Default: ``CameraNet.pretrained()``.
    images : numpy.ndarray, optional
        CameraNet's input batch (NCHW float32). Default: ``shapes_dataset(8, seed=0)``'s images.
    machine : MachineSpec, optional
        This machine's roofline (chapter 3). Default: measured on first use.
    conversions : sequence of Conversion, optional
        Measured layout conversions (chapter 2). Default: measured on first use.
    npu_buffer : int
        The on-chip buffer, in bytes, chapter 4 tiles for. Default 32 KiB.
    loop : capstone.Loop, optional
        Chapter 8's closed loop of ``net``. Default: run on first use.

    Raises
    ------
    TypeError, ValueError
        If an argument has the wrong type, or ``npu_buffer`` is not a
        positive integer. What is inside ``images`` and ``conversions`` is
        checked by the chapter that reads it (``tensors.numbers`` …).

    Examples
    --------
    >>> ctx = Context(npu_buffer=16 * 1024)
    >>> ctx.images.shape
    (8, 3, 32, 32)
    >>> ctx.npu_buffer
    16384
    """

    def __init__(self, *, net: CameraNet | None = None, images: np.ndarray | None = None,
                 machine: MachineSpec | None = None, conversions: Sequence[Conversion] | None = None,
                 npu_buffer: int = 32 * 1024, loop: Loop | None = None) -> None:
        if net is not None:
            from .models import CameraNet

            self.net = _check.instance(net, "net", CameraNet)
        if images is not None:  # its shape is checked where it is used (tensors.numbers)
            self.images = _check.as_array(images, "images")
        if machine is not None:
            from .graphs import MachineSpec

            self.machine = _check.instance(machine, "machine", MachineSpec)
        if conversions is not None:  # each item is checked where it is used (layouts.numbers)
            self.conversions = _check.sequence(conversions, "conversions")
        self.npu_buffer = _check.integer(npu_buffer, "npu_buffer", minimum=1)
        if loop is not None:
            from .capstone import Loop

            self.loop = _check.instance(loop, "loop", Loop, "capstone.Loop")

    @cached_property
    def net(self) -> CameraNet:
        from .models import CameraNet

        return CameraNet.pretrained()

    @cached_property
    def images(self) -> np.ndarray:
        from .data import shapes_dataset

        return shapes_dataset(8, seed=0)[0]

    @cached_property
    def model(self) -> onnx.ModelProto:
        """CameraNet's ONNX graph (batch 1)."""
        return self.net.to_onnx()

    @cached_property
    def machine(self) -> MachineSpec:
        """This machine's roofline, measured by :func:`npukit.roofline.measure_machine`."""
        from .roofline import measure_machine

        return measure_machine()

    @cached_property
    def conversions(self) -> tuple[Conversion, ...]:
        """NCHW → NHWC of CameraNet's input batch and of its ``block1`` activation, measured."""
        from .layouts import measure_conversion

        batch = tuple(self.images.shape)
        act = (batch[0], self.net.config["blocks"][0][0], self.net.size // 2, self.net.size // 2)
        return tuple(measure_conversion(s) for s in (batch, act))

    @cached_property
    def loop(self) -> Loop:
        """Chapter 8's closed loop of ``net`` on this machine's CPU, by :func:`npukit.capstone.closed_loop`."""
        from .capstone import closed_loop

        return closed_loop(self.net, machine=self.machine)


def rows(upto: int, ctx: Context | None = None) -> list[Row]:
    """Every registered chapter's rows, for chapters 0 … ``upto``, in chapter order.

    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    upto : int
        The last chapter to include (>= 0).
    ctx : Context, optional
        What the rows are computed from (default: a fresh :class:`Context`).

    Returns
    -------
    list of Row

    Raises
    ------
    TypeError, ValueError
        If ``upto`` is not a non-negative integer or ``ctx`` not a Context;
        if a registered module breaks the contract (no ``numbers``, a result
        that is not a list of :class:`Row`, or a row of another chapter).

    Examples
    --------
    >>> [r.chapter for r in rows(1)][-1]
    1
    """
    import npukit

    upto = _check.integer(upto, "upto", minimum=0)
    ctx = Context() if ctx is None else _check.instance(ctx, "ctx", Context, "tally.Context")
    out: list[Row] = []
    for chapter, name in sorted(npukit.CHAPTERS.items()):
        if chapter > upto:
            break
        out.extend(_chapter_rows(chapter, name, ctx))
    return out


def _chapter_rows(chapter: int, name: str, ctx: Context) -> list[Row]:
    """One registered module's rows, refused with a clear error if they break the contract."""
    module = importlib.import_module(f"npukit.{name}")
    numbers = getattr(module, "numbers", None)
    if not callable(numbers):
        raise TypeError(f"npukit.{name} is registered for chapter {chapter} but defines no numbers(ctx)")
    got = numbers(ctx)
    if not isinstance(got, list):
        raise TypeError(f"npukit.{name}.numbers must return a list of tally.Row, got {type(got).__name__}")
    for r in got:
        if not isinstance(r, Row):
            raise TypeError(f"npukit.{name}.numbers must return tally.Row items, got {type(r).__name__} {r!r}")
        if r.chapter != chapter:
            raise ValueError(f"npukit.{name}.numbers must return rows of chapter {chapter}, got a row of "
                             f"chapter {r.chapter}: {r.quantity!r}")
    return got


def table(upto: int, ctx: Context | None = None) -> HTML:
    """The "numbers so far" table for chapters 0 … ``upto``, as HTML.

    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    upto : int
        The last chapter to include (>= 0).
    ctx : Context, optional
        As for :func:`rows`.

    Returns
    -------
    IPython.display.HTML

    Raises
    ------
    TypeError, ValueError
        As for :func:`rows`.

    Examples
    --------
    >>> "input batch bytes" in table(1).data
    True
    """
    from .viz import table as html_table

    return html_table([(r.chapter, r.quantity, r.value, r.how) for r in rows(upto, ctx)],
                      ["ch.", "quantity", "value", "how it was obtained"])
