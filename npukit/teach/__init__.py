"""Checkers for the labs, and the student edition.

One module of checkers per lab, named like its chapter (``teach.tensors`` for
lab 1, ``teach.layouts`` for lab 2 …), on a shared core (:mod:`npukit.teach.core`);
:mod:`npukit.teach.student` writes the student edition
(``python -m npukit.teach student labs -o student/``). A lab calls its checkers
as ``teach.check_strides(fn)``: every ``check_*`` of every lab is available
here by name.

See the instructor guide (chapters/instructor.md).
"""

from __future__ import annotations

from . import (capstone, core, deploy, gemm, graphs, layouts, npus, predict, quant, retime, roofline, student,
               systolic, tensors, variants)
from .capstone import (check_export_folded, check_qdq, check_roofline_bounds, check_variant_prediction,
                       check_warm_latency)
from .core import check
from .deploy import check_crossing_bytes, check_double_buffered, check_reorder, check_speedup_prediction
from .gemm import check_best_tile, check_schedule_traffic, check_tiled_matmul, check_time_prediction
from .graphs import check_attainable, check_conv_macs, check_fold_bn, check_live_peak
from .layouts import check_from_blocked, check_im2col_view, check_stays_view, check_to_blocked
from .npus import check_compulsory_bytes, check_npu_prediction, check_roofline_seconds, check_seconds_per_image
from .predict import check_alignment_prediction, check_conversion_prediction
from .quant import (check_calibration_prediction, check_channel_scales, check_my_values, check_quantize,
                    check_requantize)
from .roofline import check_relu_prediction
from .systolic import (check_best_shape, check_fold_cycles, check_my_layer, check_utilization_prediction,
                       check_ws_busy)
from .student import make_student_edition, make_student_notebook, strip_solutions
from .tensors import (VIEW_OR_COPY_OPS, check_aligned_empty, check_my_batch, check_reshape_view, check_strides,
                      check_view_or_copy)

__all__ = [
    "core", "student", "tensors", "layouts", "graphs", "gemm", "systolic", "deploy", "check",
    "check_strides", "check_view_or_copy", "check_aligned_empty", "check_reshape_view", "VIEW_OR_COPY_OPS",
    "check_my_batch",
    "check_to_blocked", "check_from_blocked", "check_im2col_view", "check_stays_view",
    "check_conv_macs", "check_attainable", "check_fold_bn", "check_live_peak",
    "check_tiled_matmul", "check_schedule_traffic", "check_best_tile", "check_time_prediction",
    "check_fold_cycles", "check_best_shape", "check_ws_busy", "check_utilization_prediction", "check_my_layer",
    "variants",
    "quant", "check_quantize", "check_requantize", "check_channel_scales", "check_calibration_prediction",
    "check_my_values",
    "check_crossing_bytes", "check_reorder", "check_double_buffered", "check_speedup_prediction",
    "capstone", "check_export_folded", "check_qdq", "check_warm_latency", "check_roofline_bounds",
    "check_variant_prediction",
    "make_student_edition", "make_student_notebook", "strip_solutions",
    "predict", "check_alignment_prediction", "check_conversion_prediction",
    "roofline", "check_relu_prediction", "retime",
    "npus", "check_compulsory_bytes", "check_roofline_seconds", "check_npu_prediction", "check_seconds_per_image",
]

from . import grade, guard, timelog  # noqa: E402  (the grader; the watch and the seal, used by core; the time log)

core._seal(globals())  # every check_* above: refuses to run when patched, records its outcome
timelog.start()       # with NPUKIT_TIME_LOG set, log when cells and checks ran (instructor guide)
