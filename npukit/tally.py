"""CameraNet's "numbers so far": one contract for the rows every chapter adds.

Each chapter page ends with a table of what the course has measured or counted
about CameraNet so far, rebuilt from live computations at every build. The
contract is small:

* a chapter's module defines ``numbers(ctx) -> list[Row]``, with :class:`Row`
  and the type of ``ctx`` taken from :mod:`npukit._tally`, a module that
  imports no chapter;
* the module is registered in :data:`npukit.CHAPTERS` under the chapter's number;
* a page shows the table with ``tally.table(upto=N, ctx=ctx)``.

A :class:`Context` holds what the rows are computed from — the pretrained
network, the input batch, its ONNX graph, this machine's roofline, measured
layout conversions, chapter 8's closed loop … Each is made on first use and
then shared. For the shipped CameraNet every quantity that more than one page
quotes comes from the build's store (:mod:`npukit.shared`), so the table on
page 3b and the table on page 8 show the same roofline, accuracy and
latencies as the pages' prose. This module is at the top of npukit's import
graph: it imports every chapter's module (to collect their rows) and none of
them imports it.

See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).
"""

from __future__ import annotations

import importlib
from functools import cached_property
from typing import TYPE_CHECKING, Sequence

from . import _check, shared
from ._tally import Inputs, Row

if TYPE_CHECKING:  # the real imports happen on first use, to keep `import npukit` fast
    import numpy as np
    import onnx
    from IPython.display import HTML

    from .capstone import Loop
    from .deploy import Benchmark
    from .graphs import MachineSpec
    from .layouts import Conversion
    from .models import CameraNet

__all__ = [
    "Row",
    "Context",
    "rows",
    "table",
]


class Context(Inputs):
    """The inputs of every chapter's rows, each computed once, on first use.

    For the shipped CameraNet (the default, or a ``net`` equal to it) the
    shared quantities — ``machine``, ``conversions``, ``heldout``,
    ``float_accuracy``, ``weight_bytes``, ``qdq``, ``latency`` and ``loop``
    — are the build's values from :mod:`npukit.shared`; for another network
    they are computed for it. An argument passed in replaces the default.
    See chapter 0, "Meet CameraNet" (chapters/00_cameranet.md).

    Parameters
    ----------
    net : CameraNet, optional
        Default: ``CameraNet.pretrained()``.
    images : numpy.ndarray, optional
        CameraNet's input batch (NCHW float32). Default: ``shapes_dataset(8, seed=0)``'s images.
    machine : MachineSpec, optional
        This machine's roofline (chapter 3). Default: the build's profile, :func:`npukit.shared.machine`.
    conversions : sequence of Conversion, optional
        Measured layout conversions (chapter 2). Default: :func:`npukit.shared.conversions`.
    npu_buffer : int
        The on-chip buffer, in bytes, chapter 4 tiles for. Default 32 KiB.
    loop : capstone.Loop, optional
        Chapter 8's closed loop of ``net``. Default: :func:`npukit.shared.loop` (the shipped model),
        else run on first use.

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
    >>> ctx.machine is shared.machine()
    True
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
    def shipped(self) -> bool:
        """True if ``net`` is the shipped CameraNet, whose shared quantities come from the store."""
        return "net" not in self.__dict__ or shared.is_shipped(self.net)

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
        """This build's roofline, :func:`npukit.shared.machine`."""
        return shared.machine()

    @cached_property
    def conversions(self) -> tuple[Conversion, ...]:
        """NCHW → NHWC of CameraNet's input image and of its largest activation (batch 1), measured once."""
        if self.shipped:
            return shared.conversions()
        import math

        from .layouts import measure_conversions
        from .models import summary

        largest = max((r["output"] for r in summary(self.net) if len(r["output"]) == 4), key=math.prod)
        return tuple(measure_conversions([((1, 3, self.net.size, self.net.size), "NCHW", "NHWC"),
                                          (tuple(largest), "NCHW", "NHWC")]))

    @cached_property
    def heldout(self) -> tuple[np.ndarray, np.ndarray]:
        """The one held-out draw at ``net``'s image size (:func:`npukit.data.heldout`)."""
        from .data import heldout

        return heldout(size=self.net.size)

    @cached_property
    def float_accuracy(self) -> float:
        """``net``'s float32 accuracy on :attr:`heldout`."""
        if self.shipped:
            return shared.float_accuracy()
        from .train import accuracy

        return float(accuracy(self.net, *self.heldout))

    @cached_property
    def qdq(self) -> onnx.ModelProto:
        """``net``'s INT8 QDQ model, calibrated as chapter 8 does (:func:`npukit.shared.qdq`)."""
        if self.shipped:
            return shared.qdq()
        from .capstone import CALIBRATION_SEED
        from .data import shapes_dataset
        from .ptq import to_qdq
        from .rewrites import fold_batchnorm

        return to_qdq(fold_batchnorm(self.model), shapes_dataset(128, seed=CALIBRATION_SEED, size=self.net.size)[0])

    @cached_property
    def weight_bytes(self) -> dict[str, int]:
        """Bytes of the deployed weights per precision, :func:`npukit.shared.weight_bytes`'s convention."""
        if self.shipped:
            return shared.weight_bytes()
        from onnx import numpy_helper

        from .rewrites import fold_batchnorm

        return {label: int(sum(numpy_helper.to_array(t).nbytes for t in m.graph.initializer))
                for label, m in (("FP32", fold_batchnorm(self.model)), ("INT8", self.qdq))}

    @cached_property
    def latency(self) -> dict[str, Benchmark]:
        """Batch-1 latency per precision on the CPU: :func:`npukit.shared.latency`, or ``loop``'s for another net."""
        return shared.latency() if self.shipped else self.loop.latency

    @cached_property
    def loop(self) -> Loop:
        """Chapter 8's closed loop of ``net`` on this machine's CPU (:func:`npukit.shared.loop` for the shipped net)."""
        if self.shipped and self.machine is shared.machine():
            return shared.loop()
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
