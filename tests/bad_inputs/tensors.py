"""Bad inputs for npukit.tensors: one bad argument at a time, the others valid."""

import numpy as np
from badinput import bad

from npukit import tally
from npukit import tensors as T

X = np.arange(12, dtype=np.float32).reshape(3, 4)
GOOD_INFO = dict(shape=(3, 4), dtype="float32", itemsize=4, strides=(16, 4), nbytes=48, c_contiguous=True,
                 f_contiguous=False, owns_data=True, base=None, offset=0, address=4096, alignment=4096,
                 writeable=True)


def info(**bad_fields):
    """TensorInfo's arguments: GOOD_INFO with some fields replaced."""
    return {**GOOD_INFO, **bad_fields}


CASES = [
    bad(T.cache_geometry, 0, names="level"),
    bad(T.cache_geometry, True, exc=TypeError, names="level"),
    bad(T.cache_geometry, 1.5, exc=TypeError, names="level"),
    bad(T.cache_geometry, "L1", exc=TypeError, names="level"),
    # TensorInfo: a record built by hand is checked like describe's
    bad(T.TensorInfo, **info(shape="3x4"), exc=TypeError, names="shape"),
    bad(T.TensorInfo, **info(shape=(3, 4.0)), exc=TypeError, names="shape[1]"),
    bad(T.TensorInfo, **info(strides=(16,)), names="strides"),
    bad(T.TensorInfo, **info(strides=(16, 4.5)), exc=TypeError, names="strides[1]"),
    bad(T.TensorInfo, **info(dtype=np.float32), exc=TypeError, names="dtype"),
    bad(T.TensorInfo, **info(itemsize=-4), names="itemsize"),
    bad(T.TensorInfo, **info(nbytes=47), names="nbytes"),
    bad(T.TensorInfo, **info(c_contiguous=1), exc=TypeError, names="c_contiguous"),
    bad(T.TensorInfo, **info(writeable="yes"), exc=TypeError, names="writeable"),
    bad(T.TensorInfo, **info(base=X), exc=TypeError, names="base"),
    bad(T.TensorInfo, **info(offset=1.5), exc=TypeError, names="offset"),
    bad(T.TensorInfo, **info(address=-1), names="address"),
    bad(T.TensorInfo, **info(alignment=96), names="alignment"),
    # describe, root_buffer
    bad(T.describe, [[1, 2], [3, 4]], exc=TypeError, names="a"),
    bad(T.describe, "abc", exc=TypeError, names="a"),
    bad(T.root_buffer, b"abc", exc=TypeError, names="a"),
    bad(T.root_buffer, None, exc=TypeError, names="a"),
    # contiguous_strides
    bad(T.contiguous_strides, "224", 4, exc=TypeError, names="shape"),
    bad(T.contiguous_strides, (3, 16.7), 4, exc=TypeError, names="shape[1]"),
    bad(T.contiguous_strides, (3, True), 4, exc=TypeError, names="shape[1]"),
    bad(T.contiguous_strides, (3, -1), 4, names="shape[1]"),
    bad(T.contiguous_strides, np.array([3, 4]), 4, exc=TypeError, names="shape"),
    bad(T.contiguous_strides, (3, 4), 0, names="itemsize"),
    bad(T.contiguous_strides, (3, 4), 4.0, exc=TypeError, names="itemsize"),
    bad(T.contiguous_strides, (3, 4), True, exc=TypeError, names="itemsize"),
    bad(T.contiguous_strides, (3, 4), 4, "K", names="order"),
    bad(T.contiguous_strides, (3, 4), 4, "c", names="order"),
    # element_offsets
    bad(T.element_offsets, [1, 2, 3], exc=TypeError, names="a"),
    bad(T.element_offsets, X, relative_to=[0], exc=TypeError, names="relative_to"),
    bad(T.element_offsets, X, relative_to=X.copy(), names="relative_to"),  # an unrelated array
    bad(T.element_offsets, X[1:], relative_to=np.zeros(12, np.float32), names="relative_to"),
    # alignment_of
    bad(T.alignment_of, "0x40", exc=TypeError, names="a"),
    bad(T.alignment_of, 64.0, exc=TypeError, names="a"),
    bad(T.alignment_of, True, exc=TypeError, names="a"),
    bad(T.alignment_of, -64, names="a"),
    bad(T.alignment_of, 64, 96, names="cap"),
    bad(T.alignment_of, 64, 0, names="cap"),
    bad(T.alignment_of, 64, -4096, names="cap"),
    bad(T.alignment_of, 64, 4096.0, exc=TypeError, names="cap"),
    # aligned_empty
    bad(T.aligned_empty, "8", exc=TypeError, names="shape"),
    bad(T.aligned_empty, (8, 16.7), exc=TypeError, names="shape[1]"),
    bad(T.aligned_empty, (8, -1), names="shape[1]"),
    bad(T.aligned_empty, (8, 3), "float33", exc=TypeError, names="dtype"),
    bad(T.aligned_empty, (8, 3), object, names="dtype"),
    bad(T.aligned_empty, (8, 3), "S", names="dtype"),
    bad(T.aligned_empty, (8, 3), np.float32, 96, names="alignment"),
    bad(T.aligned_empty, (8, 3), np.float32, 0, names="alignment"),
    bad(T.aligned_empty, (8, 3), np.float32, 128.0, exc=TypeError, names="alignment"),
    bad(T.aligned_empty, (8, 3), np.float32, float("nan"), exc=TypeError, names="alignment"),
    bad(T.aligned_empty, (8, 3), np.float32, 128, "A", names="order"),
    # alignment_census
    bad(T.alignment_census, "big", exc=TypeError, names="allocate"),
    bad(T.alignment_census, 100.5, exc=TypeError, names="allocate"),
    bad(T.alignment_census, -1, names="allocate"),
    bad(T.alignment_census, lambda: [1, 2], exc=TypeError, names="allocate"),
    bad(T.alignment_census, lambda: X, n=3, names="allocate"),  # the same buffer again and again
    bad(T.alignment_census, 100, 0, names="n"),
    bad(T.alignment_census, 100, 2.5, exc=TypeError, names="n"),
    bad(T.alignment_census, 100, True, exc=TypeError, names="n"),
    bad(T.alignment_census, 100, 5, 100, names="cap"),
    bad(T.alignment_census, 100, 5, 0, names="cap"),
    # numbers
    bad(T.numbers, None, exc=TypeError, names="ctx"),
    bad(T.numbers, {"images": X}, exc=TypeError, names="ctx"),
    bad(T.numbers, tally.Context(images=np.zeros((3, 8, 8), np.float32)), names="ctx.images"),
    # a record must be consistent across its fields (issue 24, class 1)
    bad(T.TensorInfo, **info(c_contiguous=True, f_contiguous=False, strides=(4, 12)), names="c_contiguous"),
    bad(T.TensorInfo, **info(strides=(16, 8)), names="c_contiguous"),
    bad(T.TensorInfo, **info(f_contiguous=True), names="f_contiguous"),
    bad(T.TensorInfo, **info(offset=-1), names="offset"),
    bad(T.TensorInfo, **info(dtype="int7"), names="dtype"),
    bad(T.TensorInfo, **info(dtype="FLOAT32"), names="dtype"),
    bad(T.TensorInfo, **info(dtype="float64"), names="itemsize"),
    bad(T.TensorInfo, **info(base="ndarray (12,) float32"), names="owns_data"),
    bad(T.TensorInfo, **info(alignment=64), names="alignment"),
    bad(T.TensorInfo, **info(writeable=1), exc=TypeError, names="writeable"),
    # types silently converted, sizes that exhaust memory (classes 3, 7)
    bad(T.aligned_empty, (2, 3), None, exc=TypeError, names="dtype"),
    bad(T.aligned_empty, (10**6, 10**6), names="shape"),
    bad(T.aligned_empty, (2, 3), alignment=2**40, names="alignment"),
    bad(T.alignment_census, 1000, n=10**12, names="n"),
    bad(T.alignment_census, 10**9, n=100, names="n × allocate"),
    bad(T.alignment_census, 1000, n=True, exc=TypeError, names="n"),
    # an empty batch (an IndexError before)
    bad(T.numbers, tally.Context(images=np.zeros((0, 3, 8, 8), np.float32)), names="ctx.images"),
]
