"""Questions on chapter 1, "Tensors are memory" (chapters/01_tensors.md)."""

from __future__ import annotations

import math

from .core import choice, fmt, numeric, short

U = "1"
_ITEMSIZE = {"float16": 2, "float32": 4, "int8": 1, "float64": 8}


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _shape(rng):
    return tuple(int(x) for x in rng.integers(2, 40, size=4))


def _draw_stride(rng):
    return dict(shape=_shape(rng), dtype=str(rng.choice(list(_ITEMSIZE))), axis=int(rng.integers(0, 3)))


def _draw_offset(rng):
    shape = _shape(rng)
    return dict(shape=shape, dtype=str(rng.choice(list(_ITEMSIZE))),
                index=tuple(int(rng.integers(0, n)) for n in shape))


def _offset(shape, dtype, index):
    return sum(i * s for i, s in zip(index, _c_strides(shape, _ITEMSIZE[dtype])))


def _draw_lines(rng):
    line = int(rng.choice([32, 64, 128]))
    return dict(n=int(rng.integers(16, 4097)), start=int(rng.integers(0, line)), line=line)


QUESTIONS = [
    numeric(
        "ch1-c-stride", U, 1,
        "A C-contiguous `{dtype}` array has shape `{shape}`. What is its stride along axis {axis}, in bytes?",
        dict(shape=(8, 32, 32, 3), dtype="float16", axis=1),
        lambda shape, dtype, axis: _c_strides(shape, _ITEMSIZE[dtype])[axis],
        lambda shape, dtype, axis, answer: (f"The last axis steps by one itemsize ({_ITEMSIZE[dtype]} B); each axis "
                                            f"to its left steps over everything to its right: the strides are "
                                            f"{_c_strides(shape, _ITEMSIZE[dtype])} bytes, so {fmt(answer)}."),
        _draw_stride,
        mistakes=[(lambda shape, dtype, axis: _c_strides(shape, 1)[axis],
                   "That is the stride in elements. NumPy's strides, and a DMA engine's, count bytes.")],
        source="ex-ch1-strides"),
    numeric(
        "ch1-offset", U, 1,
        "A C-contiguous `{dtype}` array has shape `{shape}`. How many bytes after its first element is element "
        "`{index}`?",
        dict(shape=(8, 32, 32, 3), dtype="float16", index=(2, 5, 7, 1)),
        _offset,
        lambda shape, dtype, index, answer: (
            "Sum of index × stride over the axes, with strides "
            f"{_c_strides(shape, _ITEMSIZE[dtype])}: {fmt(answer)} bytes."),
        _draw_offset,
        mistakes=[(lambda shape, dtype, index: _offset(shape, "int8", index),
                   "That is the offset in elements; multiply by the itemsize.")],
        source="ex-ch1-strides"),
    numeric(
        "ch1-f-stride", U, 1,
        "An array of shape `{shape}` and dtype `{dtype}` is stored F-contiguous (F order, column-major). What is "
        "its stride along the last axis, in bytes?",
        dict(shape=(8, 32, 32, 3), dtype="float16"),
        lambda shape, dtype: _ITEMSIZE[dtype] * math.prod(shape[:-1]),
        lambda shape, dtype, answer: (f"In F order the first axis steps by one itemsize and each later axis steps "
                                      f"over everything to its left: {' · '.join(map(str, shape[:-1]))} · "
                                      f"{_ITEMSIZE[dtype]} = {fmt(answer)} bytes."),
        lambda rng: dict(shape=_shape(rng), dtype=str(rng.choice(list(_ITEMSIZE)))),
        mistakes=[(lambda shape, dtype: _ITEMSIZE[dtype],
                   "That is the last axis's stride in C order. In F order the first axis varies fastest.")],
        source="ex-ch1-strides"),
    numeric(
        "ch1-lines", U, 4,
        "A buffer of {n} bytes starts {start} bytes past the beginning of a {line}-byte cache line. How many cache "
        "lines does it touch?",
        dict(n=896, start=16, line=64),
        lambda n, start, line: (start % line + n + line - 1) // line,
        lambda n, start, line, answer: (f"It occupies bytes {start} … {start + n - 1} counted from a line boundary: "
                                        f"⌈({start % line} + {n}) / {line}⌉ = {fmt(answer)} lines."),
        _draw_lines,
        mistakes=[(lambda n, start, line: -(-n // line),
                   "That is the count for a buffer that starts on a line boundary; this one does not.")],
        source="ex-ch1-lines"),
    numeric(
        "ch1-alignment-of", U, 4,
        "A buffer starts at address {address:#x}. What is its alignment, the largest power of two (in bytes) that "
        "divides the address?",
        dict(address=0x7F3A2C41D6C0),
        lambda address: address & -address,
        lambda address, answer: (f"The lowest set bit of {address:#x} (binary …{address & 0xFFF:012b}) is worth "
                                 f"{fmt(answer)}."),
        lambda rng: dict(address=int(rng.integers(1 << 20, 1 << 44)) << int(rng.integers(2, 9))),
        mistakes=[(lambda address: 16 if address & -address != 16 else None,
                   "16 bytes is what malloc promises, not what this address has. Look at its low bits.")],
        source="chapter 1, alignment_of"),
    choice(
        "ch1-fancy-index", U, 2,
        "`images` is a C-contiguous NCHW batch of RGB images, 3 channels, so `images[:, [2, 1, 0]]` and "
        "`images[:, ::-1]` select the same channels in the same order. Is `images[:, [2, 1, 0]]` a view or a copy?",
        ("A copy: a list of indices is fancy indexing, which always copies.",
         "Right, even though `images[:, ::-1]` selects the same channels as a view."),
        [("A view: it selects the same channels as `images[:, ::-1]`.",
          "The slice is a view (a negative stride); the list of indices is not, whatever it selects."),
         ("A view, because the channel axis keeps its length.", "Length has nothing to do with it; how the "
          "selection is written decides."),
         ("A copy only if the batch is not C-contiguous.", "Fancy indexing copies whatever the input's layout.")],
        source="ex-ch1-view-copy"),
    choice(
        "ch1-transpose-view", U, 2,
        "`x` is a C-contiguous 2-D array. Which of `x.T` and `np.ascontiguousarray(x.T)` shares bytes with `x`, "
        "and how do their strides compare with `x`'s?",
        ("`x.T` shares `x`'s bytes with `x`'s strides reversed; the contiguous copy has its own buffer with the "
         "C-order strides of the transposed shape.", "Right."),
        [("Both share `x`'s bytes; only their strides differ.",
          "`ascontiguousarray` of a non-contiguous view must copy to lay the bytes out in C order."),
         ("Neither shares: a transpose always moves the data.", "A transpose only swaps shape and strides."),
         ("Only the contiguous one shares; `x.T` is a copy in F order.",
          "It is the other way round: `x.T` is the view.")],
        source="self-check 1"),
    choice(
        "ch1-base-write", U, 2,
        "`a.base is b` is true. Can writing to `a` change `b`?",
        ("Yes: `a` is a view into `b`'s memory, unless `a` is read-only, in which case NumPy refuses the write.",
         "Right."),
        [("No: `a` has its own copy of the data.", "Then `a.base` would be None: an array that owns its data has "
          "no base."),
         ("Only if `a` and `b` have the same shape.", "A view can have any shape and strides over the shared "
          "buffer."),
         ("Only if `b` is C-contiguous.", "Contiguity does not decide whether memory is shared.")],
        source="self-check 2"),
    choice(
        "ch1-4096-aligned", U, 4,
        "A buffer is 4096-byte aligned. Is it 128-byte aligned?",
        ("Yes: every multiple of 4096 is a multiple of 128.", "Right."),
        [("No: 4096-byte alignment only guarantees page boundaries.", "A page boundary is a multiple of 4096, "
          "hence of every smaller power of two."),
         ("Only if the dtype's itemsize divides 128.", "Alignment is a property of the address, not of the dtype."),
         ("Not necessarily: alignments do not nest.", "Powers of two do nest: 4096 = 32 × 128.")],
        source="self-check 4"),
    choice(
        "ch1-reshape-copy", U, 3,
        "`band = images[:, :, 4:8]` has shape `(8, 3, 4, 32)` and the batch's strides `(12288, 4096, 128, 4)`. "
        "Which reshape must copy?",
        ("`band.reshape(8, 384)`", "Right: a channel steps 4,096 bytes, but its 4 rows span only 512, so no single "
         "stride walks the merged axis."),
        [("`band.reshape(8, 3, 128)`", "Rows and columns merge: a row is 128 bytes and the row stride is 128, so "
          "they are contiguous with each other."),
         ("`band.reshape(24, 4, 32)`", "Images and channels merge: 12,288 = 3 × 4,096, evenly spaced."),
         ("`band.reshape(8, 3, 4, 32, 1)`", "Appending an axis of length 1 is always free.")],
        source="ex-ch1-reshape"),
    short(
        "ch1-aligned-alloc", U, 4,
        "You need a 64-byte aligned float32 array in NumPy. Why is `np.empty` not enough, and what works?",
        "`np.empty` gets its memory from `malloc`, which on 64-bit Linux promises only 16-byte alignment; a 64- "
        "or 128-byte aligned start is luck. Allocate a byte buffer `alignment` bytes larger than needed, find the "
        "offset of the first aligned address in it, and build the array as a view starting there "
        "(`npukit.tensors.aligned_empty`); the view keeps the buffer alive through `.base`.",
        [(1, "States malloc's guarantee (16 bytes on 64-bit glibc), so larger alignment is luck."),
         (1, "Over-allocate by the alignment."),
         (1, "Start a view at the first aligned offset inside the buffer."),
         (1, "Notes the cost (alignment extra bytes) or that the view keeps the buffer alive.")],
        source="self-check 5"),
    short(
        "ch1-transpose-dma", U, 2,
        "Why is `images.transpose(0, 2, 3, 1)` instantaneous, while handing its result to a DMA engine that needs "
        "NHWC bytes is not?",
        "The transpose only writes a new shape and new strides over the same buffer: no byte moves, so its cost "
        "does not depend on the tensor's size. A DMA engine copies runs of consecutive bytes and needs the bytes "
        "in NHWC order in memory, so someone must make a contiguous copy, reading and writing the whole tensor "
        "once.",
        [(1, "The transpose is a view: new shape and strides, no data moved."),
         (1, "The DMA engine needs contiguous bytes in the new order."),
         (1, "Making them is a full copy: every byte read once and written once.")],
        source="self-check 3"),
]
