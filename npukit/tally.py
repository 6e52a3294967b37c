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
from typing import TYPE_CHECKING, Any, Sequence

from . import _check

if TYPE_CHECKING:  # the real imports happen on first use, to keep `import npukit` fast
    import numpy as np
    import onnx

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
    """

    chapter: int
    quantity: str
    value: str
    how: str


class Context:
    """The inputs of every chapter's rows, each computed once, on first use.

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
                 npu_buffer: int = 32 * 1024) -> None:
        if net is not None:
            from .models import CameraNet

            if not isinstance(net, CameraNet):
                raise TypeError(f"net must be a CameraNet, got {type(net).__name__}")
            self.net = net
        if images is not None:
            self.images = _check.as_array(images, "images")
        if machine is not None:
            from .graphs import MachineSpec

            if not isinstance(machine, MachineSpec):
                raise TypeError(f"machine must be a MachineSpec, got {type(machine).__name__}")
            self.machine = machine
        if conversions is not None:
            self.conversions = _check.sequence(conversions, "conversions")
        self.npu_buffer = _check.integer(npu_buffer, "npu_buffer", minimum=1)

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
        """This machine's roofline, measured by :func:`npukit.graphs.measure_machine`."""
        from .graphs import measure_machine

        return measure_machine()

    @cached_property
    def conversions(self) -> tuple[Conversion, ...]:
        """NCHW → NHWC of CameraNet's input batch and of its ``block1`` activation, measured."""
        from .layouts import measure_conversion

        batch = tuple(self.images.shape)
        act = (batch[0], self.net.config["blocks"][0][0], self.net.size // 2, self.net.size // 2)
        return tuple(measure_conversion(s) for s in (batch, act))


def rows(upto: int, ctx: Context | None = None) -> list[Row]:
    """Every registered chapter's rows, for chapters 0 … ``upto``.

    Raises
    ------
    TypeError, ValueError
        If ``upto`` is not a non-negative integer, or a module breaks the contract.

    Examples
    --------
    >>> [r.chapter for r in rows(1)][-1]
    1
    """
    import npukit

    upto = _check.integer(upto, "upto", minimum=0)
    ctx = Context() if ctx is None else ctx
    if not isinstance(ctx, Context):
        raise TypeError(f"ctx must be a tally.Context, got {type(ctx).__name__}")
    out: list[Row] = []
    for chapter, name in sorted(npukit.CHAPTERS.items()):
        if chapter > upto:
            break
        module = importlib.import_module(f"npukit.{name}")
        got = module.numbers(ctx)
        for r in got:
            if not isinstance(r, Row) or r.chapter != chapter:
                raise ValueError(f"npukit.{name}.numbers must return Rows of chapter {chapter}, got {r!r}")
        out.extend(got)
    return out


def table(upto: int, ctx: Context | None = None) -> Any:
    """The "numbers so far" table for chapters 0 … ``upto``, as HTML.

    Examples
    --------
    >>> "input batch bytes" in table(1).data
    True
    """
    from .viz import table as html_table

    return html_table([(r.chapter, r.quantity, r.value, r.how) for r in rows(upto, ctx)],
                      ["ch.", "quantity", "value", "how it was obtained"])
