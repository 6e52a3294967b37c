"""npukit — the helper package of the course *Tensors on Silicon*.

One small module per chapter (see the chapter map in the introduction):

========== ==========================================================
module     chapter
========== ==========================================================
models     0. Meet CameraNet, the running example
tensors    1. Tensors are memory
layouts    2. Layouts
graphs     3. Graphs and the roofline
gemm       4. GEMM and tiling
viz        the book's single plotly look, timing and machine reports
teach      lab exercise checkers and the student-edition generator
========== ==========================================================

Submodules are imported on first use, so ``import npukit`` stays fast and
works without OpenVINO, ONNX or plotly being imported.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_SUBMODULES = ("models", "tensors", "layouts", "graphs", "gemm", "viz", "teach")

__all__ = list(_SUBMODULES) + ["__version__"]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'npukit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
