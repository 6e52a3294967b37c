"""Tests for npukit.tensors, against NumPy's own answers and brute-force loops."""

from __future__ import annotations

import itertools
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npukit import figures
from npukit import tensors as T

DTYPES = ["i1", "u1", "i2", "f2", "i4", "f4", "u4", "i8", "f8", "c8", "c16", "?", "S3", "U2", "V5", "f4,i2"]

shapes = st.lists(st.integers(0, 6), min_size=0, max_size=5).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 6), min_size=0, max_size=4).map(tuple)
dtypes = st.sampled_from(DTYPES).map(np.dtype)
orders = st.sampled_from(["C", "F"])
alignments = st.integers(0, 12).map(lambda k: 1 << k)


def brute_alignment(address: int, cap: int) -> int:
    """Largest power of two dividing address, by trying them from the top."""
    for k in range(cap.bit_length() - 1, -1, -1):
        if address % (1 << k) == 0:
            return 1 << k
    return 1


# ---- contiguous_strides ---------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(shape=shapes, dtype=dtypes, order=orders)
def test_contiguous_strides_equal_numpy(shape, dtype, order):
    assert T.contiguous_strides(shape, dtype.itemsize, order) == np.empty(shape, dtype, order=order).strides


def test_contiguous_strides_seed_example_and_int_shape():
    assert T.contiguous_strides((1, 3, 224, 224), 4) == (602112, 200704, 896, 4)
    assert T.contiguous_strides(5, 8) == (8,)
    assert T.contiguous_strides([2, 3], 2, "F") == (2, 4)


@pytest.mark.parametrize(
    "args, exc, match",
    [
        (((2, -1), 4), ValueError, r"shape\[1\] must be non-negative"),
        (((2, 1.5), 4), TypeError, r"shape\[1\] must be an integer"),
        (("abc", 4), TypeError, "shape must be a tuple"),
        (((2, 3), 0), ValueError, "itemsize must be >= 1"),
        (((2, 3), 4.0), TypeError, "itemsize must be an integer"),
        (((2, 3), 4, "K"), ValueError, "order must be one of 'C', 'F'"),
    ],
)
def test_contiguous_strides_errors(args, exc, match):
    with pytest.raises(exc, match=match):
        T.contiguous_strides(*args)


# ---- element_offsets, root_buffer -------------------------------------------


def brute_offsets(view: np.ndarray, ref: np.ndarray) -> np.ndarray:
    out = np.empty(view.shape, dtype=np.int64)
    start = view.ctypes.data - ref.ctypes.data
    for idx in itertools.product(*(range(n) for n in view.shape)):
        out[idx] = start + sum(i * s for i, s in zip(idx, view.strides))
    return out


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple), data=st.data())
def test_element_offsets_match_brute_force_and_bytes(shape, data):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    perm = data.draw(st.permutations(range(x.ndim)))
    steps = [data.draw(st.sampled_from([1, 2, -1])) for _ in shape]
    v = x.transpose(perm)[tuple(slice(None, None, s) for s in steps)]
    off = T.element_offsets(v)
    np.testing.assert_array_equal(off, brute_offsets(v, x))
    # reading x's raw bytes at those offsets gives back the view's elements
    raw = x.view(np.uint8).reshape(-1)
    np.testing.assert_array_equal(raw.view(np.int32)[off // 4], v)


def test_element_offsets_zero_d_and_relative_to():
    x = np.arange(10, dtype=np.float64)
    assert T.element_offsets(x[3:4].reshape(())) == 24
    np.testing.assert_array_equal(T.element_offsets(x[4:7], relative_to=x[2:]), [16, 24, 32])


def test_element_offsets_relative_to_must_share_the_buffer():
    x = np.arange(10, dtype=np.float64)
    # a disjoint slice of the same buffer is a fine origin: offsets may be negative
    np.testing.assert_array_equal(T.element_offsets(x[1:3], relative_to=x[5:]), [-32, -24])
    # two arrays over one foreign buffer share it too
    raw = bytearray(range(16))
    a, b = np.frombuffer(raw, np.uint8), np.frombuffer(raw, np.uint8)[4:]
    np.testing.assert_array_equal(T.element_offsets(b[::4], relative_to=a), [4, 8, 12])
    # an unrelated array (even an equal copy) would give offsets into someone else's memory
    for other in (x.copy(), np.zeros(10), np.arange(10.0)[2:]):
        with pytest.raises(ValueError, match="relative_to must share a buffer with a"):
            T.element_offsets(x[2:], relative_to=other)


def test_root_buffer():
    x = np.zeros((4, 5))
    assert T.root_buffer(x.T[1:, ::2]) is x and T.root_buffer(x) is x
    assert T.root_buffer(x.copy()) is not x
    assert T.root_buffer(x[1:][::2]) is x
    b = bytearray(16)
    y = np.frombuffer(b, dtype=np.uint8)  # NumPy wraps the bytearray in a memoryview
    assert T.root_buffer(y[3:]) is y.base and y.base.obj is b


@pytest.mark.parametrize("fn", [T.describe, T.element_offsets, T.root_buffer])
def test_array_arguments_must_be_arrays(fn):
    with pytest.raises(TypeError, match="must be a numpy.ndarray"):
        fn([1, 2, 3])


def test_tensor_info_checks_a_record_built_by_hand():
    d = T.describe(np.zeros((2, 3), np.float32))
    fields = {f: getattr(d, f) for f in d.__dataclass_fields__}
    assert T.TensorInfo(**{**fields, "shape": [2, 3], "strides": [12, 4]}) == d  # lists become tuples
    with pytest.raises(ValueError, match=r"nbytes must be size \* itemsize = 24, got 96"):
        T.TensorInfo(**{**fields, "nbytes": 96})
    with pytest.raises(ValueError, match="strides must have 2 items"):
        T.TensorInfo(**{**fields, "strides": (4,)})


def test_relative_to_must_be_an_array():
    with pytest.raises(TypeError, match="relative_to must be a numpy.ndarray"):
        T.element_offsets(np.zeros(2), relative_to=0)


# ---- describe ----------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(shape=shapes, dtype=dtypes, order=orders, data=st.data())
def test_describe_agrees_with_numpy(shape, dtype, order, data):
    x = np.empty(shape, dtype, order=order)
    v = x
    if x.ndim and data.draw(st.booleans()):
        v = x.T
    if v.ndim and v.shape[0] > 1 and data.draw(st.booleans()):
        v = v[1::2]
    d = T.describe(v)
    assert d.shape == v.shape and d.strides == v.strides and d.dtype == str(v.dtype)
    assert d.itemsize == v.itemsize and d.nbytes == v.nbytes
    assert d.c_contiguous == v.flags.c_contiguous and d.f_contiguous == v.flags.f_contiguous
    assert d.owns_data == v.flags.owndata and d.writeable == v.flags.writeable
    assert d.address == v.ctypes.data
    assert d.alignment == brute_alignment(v.ctypes.data, 4096)
    if v is x:
        assert d.base is None and d.offset == 0
    else:
        assert d.base == f"ndarray {x.shape} {x.dtype}"
        assert d.offset == v.ctypes.data - x.ctypes.data


def test_describe_text_forms():
    x = np.zeros((2, 3), np.float32)
    d = T.describe(x[:, 1:])
    s = str(d)
    assert "strides     (12, 4) B" in s and "a view into ndarray (2, 3) float32, 4 B in" in s
    assert repr(d).startswith("TensorInfo(shape=(2, 2), dtype=float32")
    assert "<table" in d._repr_html_() and "owns data" in d._repr_html_()
    with pytest.raises(AttributeError):
        d.shape = (1,)  # frozen


def test_describe_foreign_buffer():
    y = np.frombuffer(b"abcdefgh", dtype=np.uint8)
    d = T.describe(y)
    assert d.base == "bytes" and d.offset == 0 and not d.owns_data and not d.writeable
    d = T.describe(y[2:])
    assert d.base == "ndarray (8,) uint8 over bytes" and d.offset == 2


# ---- alignment_of ------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(address=st.integers(0, 2**48), cap=alignments)
def test_alignment_of_addresses(address, cap):
    got = T.alignment_of(address, cap)
    assert got == (cap if address == 0 else brute_alignment(address, cap))
    assert address % got == 0 and got <= cap


@settings(max_examples=50, deadline=None)
@given(start=st.integers(0, 300))
def test_alignment_of_arrays(start):
    x = np.empty(400, np.uint8)[start:]
    assert T.alignment_of(x) == brute_alignment(x.ctypes.data, 4096)


@pytest.mark.parametrize(
    "args, exc, match",
    [
        (("0x40",), TypeError, "a must be a numpy.ndarray or an integer address"),
        ((-64,), ValueError, "a must be >= 0"),
        ((64, 96), ValueError, "cap must be a positive power of two, got 96"),
        ((64, 0), ValueError, "cap must be a positive power of two, got 0"),
        ((64, 4.0), TypeError, "cap must be an integer"),
    ],
)
def test_alignment_of_errors(args, exc, match):
    with pytest.raises(exc, match=match):
        T.alignment_of(*args)


# ---- aligned_empty ---------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(shape=shapes, dtype=dtypes, alignment=alignments, order=orders)
def test_aligned_empty_properties(shape, dtype, alignment, order):
    a = T.aligned_empty(shape, dtype, alignment=alignment, order=order)
    assert a.shape == shape and a.dtype == dtype
    assert a.ctypes.data % alignment == 0
    assert a.flags.writeable and a.flags.aligned
    assert a.flags.c_contiguous if order == "C" else a.flags.f_contiguous
    if a.size:
        assert a.strides == np.empty(shape, dtype, order=order).strides


@settings(max_examples=60, deadline=None)
@given(shape=nonempty_shapes, alignment=alignments, seed=st.integers(0, 2**32 - 1))
def test_aligned_empty_data_survives_writes(shape, alignment, seed):
    want = np.random.default_rng(seed).standard_normal(shape)
    a = T.aligned_empty(shape, np.float64, alignment=alignment)
    a[...] = want
    others = [T.aligned_empty(shape, np.float64, alignment=alignment) for _ in range(3)]
    for o in others:
        o.fill(-1.0)  # neighbouring allocations must not overlap a
    np.testing.assert_array_equal(a, want)
    assert not any(np.shares_memory(a, o) for o in others)


def test_aligned_empty_keeps_its_buffer_alive():
    a = T.aligned_empty((64,), np.int64, alignment=256)
    a[:] = np.arange(64)
    del_junk = [np.ones(1000) for _ in range(20)]  # churn the allocator
    assert isinstance(T.root_buffer(a), np.ndarray) and len(del_junk) == 20
    np.testing.assert_array_equal(a, np.arange(64))


def test_aligned_empty_respects_dtype_alignment():
    a = T.aligned_empty((3,), np.complex128, alignment=1)
    assert a.flags.aligned and a.ctypes.data % np.dtype(np.complex128).alignment == 0


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        (((2, -3), np.float32), {}, ValueError, r"shape\[1\] must be non-negative, got -3"),
        (((2, "3"), np.float32), {}, TypeError, r"shape\[1\] must be an integer"),
        (((2, 3), "float33"), {}, TypeError, "dtype must be a NumPy dtype"),
        (((2, 3), np.float32), {"alignment": 96}, ValueError, "alignment must be a positive power of two, got 96"),
        (((2, 3), np.float32), {"alignment": -64}, ValueError, "alignment must be a positive power of two"),
        (((2, 3), np.float32), {"alignment": 64.0}, TypeError, "alignment must be an integer"),
        (((2, 3), np.float32), {"order": "A"}, ValueError, "order must be one of 'C', 'F'"),
        (((2, 3), object), {}, ValueError, "dtype must not hold Python objects"),
        (((2, 3), "S"), {}, ValueError, "dtype must have a fixed, non-zero itemsize"),
    ],
)
def test_aligned_empty_errors(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        T.aligned_empty(*args, **kwargs)


# ---- alignment_census, cache_line_size --------------------------------------------------------


def test_alignment_census_counts_every_allocation():
    c = T.alignment_census(lambda: T.aligned_empty(3, np.uint8, alignment=64), n=40, cap=256)
    assert list(c) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert sum(c.values()) == 40 and all(c[k] == 0 for k in (1, 2, 4, 8, 16, 32))
    c = T.alignment_census(100, n=20)
    assert sum(c.values()) == 20


def test_alignment_census_keeps_every_array_alive_until_it_is_done():
    """Its docstring promises n distinct live buffers: while it counts, no earlier array may be freed."""
    refs, addresses = [], []

    def allocate():
        assert all(r() is not None for r in refs), "alignment_census let an earlier array be freed"
        a = np.empty(1000, np.uint8)  # small blocks: a freed one would be handed straight back
        refs.append(weakref.ref(a))
        addresses.append(a.ctypes.data)
        return a

    c = T.alignment_census(allocate, n=60)
    assert len(addresses) == 60 and len(set(addresses)) == 60
    spans = sorted((a, a + 1000) for a in addresses)
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(spans))  # the buffers never overlapped
    assert c == {k: sum(brute_alignment(a, 4096) == k for a in addresses) for k in c}
    assert all(r() is None for r in refs)  # and they are released once the census returns


def test_alignment_census_refuses_the_same_buffer_twice():
    x = np.empty(64, np.uint8)
    with pytest.raises(ValueError, match="allocate must return a new buffer at each call; call 2"):
        T.alignment_census(lambda: x, n=5)
    with pytest.raises(ValueError, match="call 3 returned address"):  # views of one pool, two at one address
        it = iter([x[:8], x[8:16], x[8:]])
        T.alignment_census(lambda: next(it), n=3)


@pytest.mark.parametrize(
    "args, exc, match",
    [
        (("big",), TypeError, "allocate must be a callable or a byte count"),
        ((-1,), ValueError, "allocate must be >= 0"),
        ((lambda: [1, 2],), TypeError, "allocate must return a numpy.ndarray, got list"),
        ((10, 0), ValueError, "n must be >= 1"),
        ((10, 5, 100), ValueError, "cap must be a positive power of two, got 100"),
    ],
)
def test_alignment_census_errors(args, exc, match):
    with pytest.raises(exc, match=match):
        T.alignment_census(*args)


def test_cache_line_size_is_a_power_of_two_or_unknown():
    n = T.cache_line_size()
    assert n is None or (n >= 16 and n & (n - 1) == 0)


def test_cache_geometry_agrees_with_the_reported_size():
    # sets × ways × line is the cache's size; /sys reports the size separately, so this is a real check
    from npukit import measure

    sizes = measure.cache_sizes()
    for level, key in ((1, "L1d"), (2, "L2")):
        g = T.cache_geometry(level)
        if g is not None and key in sizes:
            line, sets, ways = g
            assert line * sets * ways == sizes[key] and line == (T.cache_line_size() or line)
    assert T.cache_geometry(99) is None


# ---- figures and numbers ------------------------------------------------------------------


def test_memory_map_figure_traces_buttons_and_offsets():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    views = figures.tensors.default_views(x)
    fig = figures.tensors.memory_map_figure(views)
    buttons = fig.layout.updatemenus[0].buttons
    assert len(fig.data) == 2 * len(views) and len(buttons) == len(views)
    assert [b.label for b in buttons] == list(views)
    for k, b in enumerate(buttons):
        visible = b.args[0]["visible"]
        assert visible.count(True) == 2 and visible[2 * k] and visible[2 * k + 1]
    # the grid trace of x.T holds the byte offsets NumPy's strides imply
    np.testing.assert_array_equal(np.asarray(fig.data[2].z), brute_offsets(x.T, x))
    # the buffer strip of x[:, ::2] has exactly x[:, ::2].size filled slots
    strip = np.asarray(fig.data[5].z, dtype=float)
    assert np.count_nonzero(~np.isnan(strip)) == x[:, ::2].size
    assert [t.visible for t in fig.data[:2]] == [True, True]


def test_memory_map_figure_three_d_views_and_custom_base():
    x = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    fig = figures.tensors.memory_map_figure({"x": x, "swap": x.transpose(1, 0, 2), "cut": x[:, 1]}, base=x)
    assert len(fig.data) == 6
    assert np.asarray(fig.data[0].z).shape == (6, 4)


@pytest.mark.parametrize(
    "views, kwargs, exc, match",
    [
        ([np.zeros(3)], {}, TypeError, "views must be a mapping"),
        ({}, {}, ValueError, "views must hold at least one array"),
        ({"a": [1, 2]}, {}, TypeError, r"views\['a'\] must be a numpy.ndarray"),
        ({"a": np.zeros(65)}, {}, ValueError, "at most 64"),
        ({"a": np.zeros(4)}, {"base": 3}, TypeError, "base must be a numpy.ndarray"),
    ],
)
def test_memory_map_figure_errors(views, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        figures.tensors.memory_map_figure(views, **kwargs)


def test_memory_map_figure_view_outside_base():
    x = np.arange(12, dtype=np.float32)
    with pytest.raises(ValueError, match="reaches outside base"):
        figures.tensors.memory_map_figure({"tail": x[6:], "all": x}, base=x[6:])
    big = np.zeros(200, dtype=np.uint8)
    with pytest.raises(ValueError, match="at most 128 can be drawn"):
        figures.tensors.memory_map_figure({"ends": big[::199]}, base=big)


def test_memory_map_figure_refuses_a_base_unrelated_to_every_view():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(ValueError, match="base must share memory with at least one of views"):
        figures.tensors.memory_map_figure({"x": x, "x.T": x.T}, base=x.copy())
    fig = figures.tensors.memory_map_figure({"copy": x.copy(), "x.T": x.T}, base=x)  # one view of base is enough
    assert "a copy in a new buffer" in fig.layout.title.text


def test_figures_refuse_a_non_integer_height():
    with pytest.raises(TypeError, match="height must be an integer"):
        figures.tensors.memory_map_figure(height=480.7)
    with pytest.raises(TypeError, match="height must be an integer"):
        figures.tensors.alignment_figure({"a": {16: 1}}, height="380")


def test_alignment_figure_checks_every_count():
    with pytest.raises(ValueError, match=r"censuses\['a'\]\[16\] must be >= 0"):
        figures.tensors.alignment_figure({"a": {16: -1, 32: 5}})  # would draw a share of -25 %
    with pytest.raises(ValueError, match=r"an alignment in censuses\['a'\] must be a positive power of two"):
        figures.tensors.alignment_figure({"a": {24: 1}})


def test_default_views_errors():
    with pytest.raises(TypeError, match="x must be a numpy.ndarray"):
        figures.tensors.default_views([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ValueError, match="x must be 2-D"):
        figures.tensors.default_views(np.zeros(6))


def test_alignment_figure_and_errors():
    fig = figures.tensors.alignment_figure({"a": {16: 2, 32: 2, 64: 0}, "b": {16: 1, 4096: 1}})
    assert len(fig.data) == 2 and list(fig.data[0].x) == ["16", "32", "4096"]
    assert list(fig.data[1].y) == [0.5, 0.0, 0.5]
    with pytest.raises(TypeError, match="censuses must be a mapping"):
        figures.tensors.alignment_figure([{16: 1}])
    with pytest.raises(ValueError, match="at least one census"):
        figures.tensors.alignment_figure({})
    with pytest.raises(ValueError, match=r"censuses\['z'\] counts no allocations"):
        figures.tensors.alignment_figure({"z": {16: 0}})


def test_numbers_refuses_a_non_context():
    with pytest.raises(TypeError, match="ctx must be a tally.Context, got dict"):
        T.numbers({"images": np.zeros((4, 3, 8, 8), np.float32)})


def test_numbers_records_and_errors():
    x = np.zeros((4, 3, 8, 8), np.float32)
    from npukit import tally

    rows = T.numbers(tally.Context(images=x))
    assert all(r.chapter == 1 for r in rows)
    assert rows[1].value == f"{x.nbytes:,} B"
    with pytest.raises(TypeError, match="images must be a numpy.ndarray"):
        tally.Context(images=[[0]])
    with pytest.raises(ValueError, match="images must be a non-empty 4-D NCHW batch"):
        T.numbers(tally.Context(images=np.zeros((3, 8, 8))))
    with pytest.raises(ValueError, match="images must be a non-empty 4-D NCHW batch"):
        T.numbers(tally.Context(images=np.zeros((0, 3, 8, 8))))  # was an IndexError at images[0]


def test_views_slider_figure_one_memory_map_per_case():
    from npukit import figures

    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    y = np.arange(6, dtype=np.float64).reshape(2, 3)
    cases = {"x.T": (x.T, x), "y[:, ::2]": (y[:, ::2], y), "copy": (np.ascontiguousarray(x.T), x)}
    fig = figures.tensors.views_slider_figure(cases, prefix="case: ")
    steps = fig.layout.sliders[0].steps
    assert [s.label for s in steps] == list(cases) and len(fig.data) == 2 * len(cases)
    assert not fig.layout.updatemenus
    for k, step in enumerate(steps):
        assert step.args[0]["visible"] == [i // 2 == k for i in range(len(fig.data))]
    # each case keeps its own colour range: the last byte offset of its buffer (x: 11 × 2 B, y: 5 × 8 B)
    assert [s.args[1]["coloraxis.cmax"] for s in steps] == [22, 40, 22]
