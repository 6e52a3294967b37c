"""The book's figures, one module per chapter, each function a ``*_figure``.

============== ==========================================
module         chapter
============== ==========================================
cameranet      0. Meet CameraNet
tensors        1. Tensors are memory
layouts        2. Layouts
graphs         3. Graphs and the roofline
gemm           4. GEMM and tiling
systolic       5. Systolic arrays
quant          6. Quantization
deploy         7. Deploying to an NPU
capstone       8. The minimal closed loop
npus           9. Real NPUs, measured
============== ==========================================

Every function returns a ``plotly.graph_objects.Figure`` styled by
:func:`npukit.viz.style`. What a figure draws is computed by the chapter's own
module (``npukit.tensors`` …); these modules only draw it, except
``figures.gemm``, which also holds the speed measurements its figures draw. Submodules load on
first use (``npukit.figures.tensors``), so plotly is imported only when a
figure is made.
"""

from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = ("cameranet", "tensors", "layouts", "graphs", "gemm", "systolic", "quant", "deploy", "capstone", "npus")

__all__ = list(_SUBMODULES)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'npukit.figures' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
