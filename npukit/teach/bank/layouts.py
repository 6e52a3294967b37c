"""Questions on chapter 2, "Layouts" (chapters/02_layouts.md)."""

from __future__ import annotations

from ..._arith import ceil_div, conv_out_size
from .core import choice, fmt, numeric, plural, short

U = "2"



def _draw_chw(rng):
    return dict(c=int(rng.choice([3, 8, 16, 24, 32, 48, 64])), h=int(rng.choice([4, 7, 8, 14, 16, 28])),
                w=int(rng.choice([4, 7, 8, 14, 16, 28])))



QUESTIONS = [
    numeric(
        "ch2-nhwc-row-stride", U, 1,
        "One image's float32 activation of {c} channels × {h} × {w} pixels is stored NHWC, C-contiguous, shape "
        "`(1, {h}, {w}, {c})`. How many bytes apart are two vertically neighbouring pixels (the stride of H)?",
        dict(c=32, h=16, w=16),
        lambda c, h, w: w * c * 4,
        lambda c, h, w, answer: (f"Channels are innermost (4 B each), a pixel is {c}·4 = {4 * c} B, a row of "
                                 f"{w} pixels {fmt(answer)} B."),
        _draw_chw,
        mistakes=[(lambda c, h, w: w * 4, "That is NCHW's row stride; in NHWC a row holds every channel of its pixels."),
                  (lambda c, h, w: w * c, "That counts elements; the strides are in bytes.")],
        source="ex-ch2-strides"),
    numeric(
        "ch2-blocked-padding", U, 1,
        "A float32 tensor of shape `(1, {c}, {h}, {w})` is stored as nChw{b}c (channels in zero-padded blocks of "
        "{b}). How many bytes of the blocked tensor are padding?",
        dict(c=3, h=32, w=32, b=16),
        lambda c, h, w, b: (ceil_div(c, b) * b - c) * h * w * 4,
        lambda c, h, w, b, answer: (f"⌈{c}/{b}⌉ = {plural(ceil_div(c, b), 'block')} hold{'s' if ceil_div(c, b) == 1 else ''} "
                                    f"{ceil_div(c, b) * b} channels, "
                                    f"{ceil_div(c, b) * b - c} of them padding: {ceil_div(c, b) * b - c}·{h}·{w}·4 = "
                                    f"{fmt(answer)} bytes."),
        lambda rng: dict(**_draw_chw(rng), b=int(rng.choice([8, 16, 32]))),
        mistakes=[(lambda c, h, w, b: ceil_div(c, b) * b * h * w * 4,
                   "That is the whole blocked tensor; the question asks for the padding only.")],
        source="chapter 2, nChw16c"),
    numeric(
        "ch2-im2col-bytes", U, 3,
        "A {k}×{k} convolution with stride {s} and padding {p} runs on a 1×{c}×{h}×{h} float32 activation. How "
        "many bytes does its im2col matrix (one row per output pixel, C·k·k columns) take?",
        dict(c=64, h=56, k=3, s=1, p=1),
        lambda c, h, k, s, p: conv_out_size(h, k, s, p, p) ** 2 * c * k * k * 4,
        lambda c, h, k, s, p, answer: (f"The output is {conv_out_size(h, k, s, p, p)}×{conv_out_size(h, k, s, p, p)}, so "
                                       f"{conv_out_size(h, k, s, p, p) ** 2} rows of {c * k * k} float32 values: "
                                       f"{fmt(answer)} bytes."),
        lambda rng: dict(c=int(rng.choice([8, 16, 32, 64])), h=int(rng.choice([8, 14, 16, 28, 32])),
                         k=3, s=int(rng.integers(1, 3)), p=1),
        mistakes=[(lambda c, h, k, s, p: c * h * h * 4, "That is the input's size: each input value appears in up "
                   "to k·k rows of the matrix.")],
        source="ex-ch2-im2col"),
    numeric(
        "ch2-blocked-neighbours", U, 1,
        "A float32 tensor of {c} channels × {h} × {w} is stored as nChw16c, shape `(1, {nb}, {h}, {w}, 16)`. How "
        "many bytes apart are channels 15 and 16 of the same pixel?",
        dict(c=32, h=16, w=16, nb=2),
        lambda c, h, w, nb: h * w * 16 * 4 - 15 * 4,
        lambda c, h, w, nb, answer: (f"Channel 16 is the first of the second block, one block stride "
                                     f"({h}·{w}·16·4 = {h * w * 64} B) after channel 0, and channel 15 is 15·4 B "
                                     f"after channel 0: {fmt(answer)} bytes."),
        lambda rng: (lambda c, h, w: dict(c=c, h=h, w=w, nb=ceil_div(c, 16)))(
            int(rng.choice([32, 48, 64, 128])), int(rng.choice([4, 8, 14, 16])), int(rng.choice([4, 8, 14, 16]))),
        mistakes=[(lambda c, h, w, nb: 4, "That is NHWC: in nChw16c neighbours within a block are 4 B apart, but "
                   "15 and 16 are in different blocks."),
                  (lambda c, h, w, nb: h * w * 4, "That is NCHW's channel stride.")],
        source="ex-ch2-strides"),
    numeric(
        "ch2-lane-fill", U, 4,
        "A kernel vectorizes a loop of {n} float32 elements in AVX-512 registers of 16 lanes, using a partly empty "
        "register for the remainder. What fraction of the lanes it issues does useful work? (Two decimals.)",
        dict(n=4),
        lambda n: n / (16 * ceil_div(n, 16)),
        lambda n, answer: (f"{n} values need ⌈{n}/16⌉ = {plural(ceil_div(n, 16), 'register')} of 16 lanes: "
                           f"{n}/{16 * ceil_div(n, 16)} = {answer:.2f}."),
        lambda rng: dict(n=int(rng.integers(1, 200))),
        abs_tol=0.006, source="chapter 2, simd.lane_fill"),
    choice(
        "ch2-free-conversion", U, 2,
        "Which of these conversions of a C-contiguous float32 tensor moves no bytes?",
        ("`(16, 1, 28, 28)` NCHW → NHWC", "Right: drop the axes of length 1 (C) and N, H, W keep their order."),
        [("`(1, 3, 224, 224)` NCHW → NHWC", "C, H and W all have length > 1 and change order: a full copy."),
         ("`(4, 3, 32, 32)` NCHW → CNHW", "N and C swap and both are longer than 1: a copy."),
         ("`(1, 64, 56, 56)` NCHW → nChw16c", "Blocking interleaves 16 channel planes: the bytes must be "
          "rearranged, a full read and write.")],
        source="ex-ch2-free"),
    choice(
        "ch2-same-shape", U, 1,
        "Two tensors have the same shape `(1, 3, 224, 224)` and the same values. Can one be NCHW and the other NHWC "
        "in memory?",
        ("Yes: the shape names the logical axes, the strides say where each element is; PyTorch's channels-last "
         "tensors have an NCHW shape and NHWC strides.", "Right."),
        [("No: the shape fixes the layout.", "The shape fixes only the logical axes; strides fix the layout."),
         ("No: NumPy and PyTorch store every tensor in the order of its shape's axes.", "They store it in the "
          "order its strides give: a transposed view, or a PyTorch tensor in `channels_last` memory format, is not "
          "in the order of its shape."),
         ("Only for uint8 tensors.", "The dtype changes the strides' size, not the idea.")],
        source="self-check 1"),
    choice(
        "ch2-fast-transpose", U, 2,
        "`x.transpose(0, 2, 3, 1)` took a microsecond on a 12 MiB tensor. Has the layout been converted?",
        ("No: only the shape and strides changed; the bytes move when a consumer needs them contiguous in the new "
         "order.", "Right: a microsecond is far too short to move 12 MiB."),
        [("Yes: NumPy converts in place.", "A transpose never moves data in NumPy; it returns a view."),
         ("Yes, because the result is C-contiguous.", "The transposed view is not C-contiguous (unless only axes "
          "of length 1 moved)."),
         ("Only if the tensor fits in the cache.", "Caches change how fast a copy runs, not whether a view copies.")],
        source="self-check 2"),
    choice(
        "ch2-conversion-best", U, 2,
        "What is the least a layout conversion that must produce contiguous bytes in the new order can cost?",
        ("One read and one write of the tensor, what a plain copy of the same bytes costs.",
         "Right: a conversion moves the same bytes as a copy, in a less friendly order."),
        [("Nothing: a permutation is a view.", "The view is free; the contiguous bytes are not."),
         ("Two full passes, one to copy and one to rearrange.", "Two passes happen only when a program copies and "
          "then rearranges, or converts twice; one pass suffices."),
         ("It depends only on the number of channels.", "It depends on the bytes moved; channels change how "
          "far it falls short of a copy.")],
        source="chapter 2, conversion cost"),
    choice(
        "ch2-onednn-tag", U, 1,
        "oneDNN names layouts by letters for the logical axes N, C, H, W, written from outermost to innermost. "
        "What is NHWC's tag?",
        ("`acdb`", "Right: N (a), then H (c), W (d), then C (b) innermost."),
        [("`abcd`", "That is NCHW."), ("`aBcd16b`", "That is the blocked nChw16c."),
         ("`adcb`", "That would put W before H.")],
        source="chapter 2, format tags"),
    choice(
        "ch2-im2col-view", U, 3,
        "`im2col(x, 3)` without padding returns a zero-copy strided view of `x`. Why can a BLAS GEMM not use it "
        "directly?",
        ("A GEMM takes a 2-D matrix with one stride per axis; a row of patches is reached through three different "
         "strides and rows overlap, so reshaping to a matrix must copy.", "Right."),
        [("Views cannot be read by compiled code.", "BLAS reads strided matrices; the problem is that no pair of "
          "strides describes this one."),
         ("The view is read-only and a GEMM writes its inputs.", "A GEMM only reads its inputs; read-only is not "
          "the obstacle."),
         ("The view has the wrong dtype.", "It has the input's dtype.")],
        source="self-check 4"),
    choice(
        "ch2-nhwc-always", U, 4,
        "\"A convolution reads all channels of a pixel together, so NHWC is always faster.\" For which of "
        "CameraNet's layers is the argument wrong?",
        ("The pointwise (1×1) convolutions: in NCHW they are the GEMM W·X on the activation's own bytes, "
         "vectorized along pixels, with no copy.", "Right."),
        [("The depthwise convolutions on small late maps.", "There channels innermost does help: 4-pixel rows "
          "fill 4 of 16 lanes, 64 channels fill them all."),
         ("The classifier `fc`.", "Its input is a vector: there is no layout to choose."),
         ("None: NHWC is always at least as fast.", "The chapter measures 1×1 convolutions in both layouts.")],
        source="self-check 6"),
    short(
        "ch2-camera-passes", U, 5,
        "A camera delivers `(480, 640, 3)` `uint8` frames; the model takes float32 NHWC scaled to [0, 1]. The "
        "application does `x = np.expand_dims(frame.transpose(2, 0, 1), 0).astype(np.float32) / 255` and then "
        "`np.ascontiguousarray(x.transpose(0, 2, 3, 1))`. How many full passes over the data does this make, and "
        "what does the same work in one?",
        "Two. `astype` is one pass (it keeps the memory order it finds, so the bytes stay HWC), `/ 255` a second; "
        "`ascontiguousarray` then finds the data already in NHWC order (the two transposes cancel) and copies "
        "nothing. `np.divide(frame[None], np.float32(255), dtype=np.float32)` does it in one pass, with the same "
        "bits.",
        [(1, "Counts two passes (not three)."),
         (1, "Explains that astype keeps the input's memory order, so the last call copies nothing."),
         (2, "Gives a one-pass expression (the cast inside the division) and says the result is the same.")],
        source="ex-ch2-camera"),
    short(
        "ch2-blocked-cheaper", U, 2,
        "Converting a 1×64×112×112 float32 tensor to nChw16c or to NHWC moves the same bytes. Why can the blocked "
        "conversion be cheaper?",
        "Both interleave values from many channel planes, but nChw16c takes them from 16 planes at a time and "
        "NHWC from all 64. Capacity is not the reason: one cache line from each of 64 planes is 4 KiB, a small "
        "part of an L1 data cache. Where the lines go can be: a line may live only in the cache set its address "
        "selects, and the planes are 112·112·4 = 50,176 bytes apart, so the set steps by the same amount from "
        "plane to plane and the planes' lines fall into only a few sets (4 of 64 on a cache of 64 sets of "
        "64-byte lines). 64 lines crowded into those sets exceed their ways and evict each other before they are "
        "used again; 16 fit. Fewer streams are also easier for a hardware prefetcher to follow. Which of the "
        "two limits the conversion on a given machine is measured, not assumed (chapter 2's sweep of map widths).",
        [(1, "Both gather from several channel planes for each output pixel: 16 at a time for nChw16c, all 64 for "
             "NHWC."),
         (1, "Capacity is not the reason: a line per plane is a few KiB, far less than L1."),
         (1, "Cache sets: planes a multiple of the set span apart share few sets, and 64 lines overflow those "
             "sets' ways where 16 fit (conflict misses)."),
         (1, "Names another possible limit (prefetcher streams) or says that the machine's measurement decides.")],
        source="self-check 3"),
    short(
        "ch2-padding-zeros", U, 1,
        "A blocked tensor's padding channels hold zeros. Name an operation that breaks this, and say why it "
        "matters.",
        "Any element-wise function with f(0) ≠ 0 applied to the whole padded buffer (a sigmoid, adding a bias) "
        "writes non-zero values into the padding; a later reduction over channels (a sum, a mean, a softmax over "
        "C) then counts them and gives a wrong result. A convolution is safe only while its weights for padded "
        "channels are zero.",
        [(1, "An element-wise f with f(0) ≠ 0 (sigmoid, bias) applied to the padding."),
         (1, "A later reduction over channels counts the padding."),
         (1, "The consequence: a wrong result, not just wasted work.")],
        source="self-check 5"),
]
