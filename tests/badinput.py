"""The bad-input table: every public npukit callable, one bad argument at a time.

The course's promise (COURSE.md §5): bad input to a public function raises
``TypeError`` or ``ValueError`` whose message names the argument and says what
was expected — never a silent wrong result, never an obscure error from deep
inside NumPy or ONNX.

Each module's table lives in ``tests/bad_inputs/<module>.py`` as a list
``CASES`` of :func:`bad` records; ``tests/test_bad_inputs.py`` runs them all
and checks that every public callable of every module has at least one row
(or an entry in ``EXEMPT`` there saying why it takes no argument that can be
wrong).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Bad:
    func: Callable[..., Any]
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    exc: type = ValueError
    names: str = ""  #: text the message must contain: the argument's name

    @property
    def id(self) -> str:
        shown = [repr(a)[:20] for a in self.args] + [f"{k}={v!r}"[:24] for k, v in self.kwargs.items()]
        return f"{getattr(self.func, '__qualname__', self.func)}({', '.join(shown)})"


def bad(func: Callable[..., Any], *args: Any, exc: type = ValueError, names: str, **kwargs: Any) -> Bad:
    """One row: ``func(*args, **kwargs)`` must raise ``exc`` with ``names`` in its message."""
    if exc not in (TypeError, ValueError) and not issubclass(exc, (TypeError, ValueError, OSError)):
        raise ValueError(f"exc must be TypeError, ValueError or an OSError, got {exc}")
    return Bad(func, args, kwargs, exc, names)


def cyclic(model: Any) -> Any:
    """A copy of an ONNX model whose first node reads the second node's output: a two-node cycle."""
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(model)
    inits = {t.name for t in out.graph.initializer}
    first, second = out.graph.node[0], out.graph.node[1]
    k = next(i for i, t in enumerate(first.input) if t not in inits)
    first.input[k] = second.output[0]
    return out


def dangling(model: Any) -> Any:
    """A copy of an ONNX model where a middle node reads a tensor nothing provides."""
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(model)
    out.graph.node[len(out.graph.node) // 2].input[0] = "nowhere"
    return out
