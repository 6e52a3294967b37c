"""The prerequisite diagnostic: what the course assumes before chapter 1.

Each question names its topic and a pointer: what to read when the answer is
wrong. Most readings are free online: NumPy's user guide, the Python
tutorial and its documentation, NIST's page on binary prefixes, and
Drepper's *What Every Programmer Should Know About Memory* (sections 2–3).
Bryant and O'Hallaron's *Computer Systems: A Programmer's Perspective*
(chapters 2 and 6), named beside them, is a textbook a library lends.
"""

from __future__ import annotations

import math

from .core import choice, fmt, numeric

U = "pre"

INDEXING = ("NumPy user guide, \"Indexing on ndarrays\" (basic slicing and integer-array indexing): "
            "https://numpy.org/doc/stable/user/basics.indexing.html")
BROADCAST = "NumPy user guide, \"Broadcasting\": https://numpy.org/doc/stable/user/basics.broadcasting.html"
TWOS = ("R. E. Bryant, D. R. O'Hallaron, *Computer Systems: A Programmer's Perspective*, 3rd ed., section 2.2 "
        "(integer representations, two's complement); or, free online, the Python documentation of "
        "`int.from_bytes(..., signed=True)`: https://docs.python.org/3/library/stdtypes.html#int.from_bytes")
HEX = ("Bryant and O'Hallaron, section 2.1.1 (hexadecimal notation); or, free online, Python's built-ins `hex()` "
       "and `int(text, 16)`, to check your conversions: https://docs.python.org/3/library/functions.html#hex")
POWERS = ("Bryant and O'Hallaron, section 2.1 (information storage: powers of two in hexadecimal, words, addresses); for KiB and MiB (binary prefixes) "
          "against kB and MB (decimal), NIST's \"Prefixes for binary multiples\": "
          "https://physics.nist.gov/cuu/Units/binary.html")
CACHES = ("U. Drepper, *What Every Programmer Should Know About Memory*, sections 2–3 (DRAM, CPU caches, cache "
          "lines): https://people.freebsd.org/~lstewart/articles/cpumemory.pdf; or Bryant and O'Hallaron, chapter 6.")
PYTHON = ("The Python tutorial, section 3.1.1 (numbers: `//` is floor division) and section 9.1–9.2 (names and "
          "objects): https://docs.python.org/3/tutorial/")


def _signed8(bits):
    return bits - 256 if bits >= 128 else bits


QUESTIONS = [
    numeric(
        "pre-slice-size", U, 1,
        "`a = np.zeros({shape})`. How many elements does `a[1:3, :, ::2]` have?",
        dict(shape=(4, 3, 5)),
        lambda shape: len(range(1, min(3, shape[0]))) * shape[1] * len(range(0, shape[2], 2)),
        lambda shape, answer: (f"`1:3` keeps {len(range(1, min(3, shape[0])))} of {shape[0]}, `:` all {shape[1]}, "
                               f"`::2` every other of {shape[2]}, that is {len(range(0, shape[2], 2))}: {fmt(answer)}."),
        lambda rng: dict(shape=(int(rng.integers(3, 9)), int(rng.integers(1, 9)), int(rng.integers(2, 12)))),
        mistakes=[(lambda shape: 3 * shape[1] * (shape[2] // 2), "A slice's stop is exclusive (1:3 is two "
                   "indices), and `::2` of an odd length keeps the extra element.")],
        pointer=INDEXING),
    choice(
        "pre-column-shape", U, 1,
        "`a = np.arange(12).reshape(3, 4)`. What is the shape of `a[:, 1]`?",
        ("`(3,)`", "Right: an integer index removes its axis."),
        [("`(3, 1)`", "That is `a[:, 1:2]`: a slice keeps the axis, an integer drops it."),
         ("`(1, 3)`", "NumPy does not turn a column into a row."),
         ("`(4,)`", "That would be a row, `a[1, :]`.")],
        pointer=INDEXING),
    choice(
        "pre-broadcast", U, 1,
        "What is the shape of `np.ones((3, 1)) + np.ones(4)`?",
        ("`(3, 4)`", "Right: (3, 1) and (4,) align from the right, and axes of length 1 stretch."),
        [("An error: the shapes differ.", "Shapes are compatible when each pair of trailing axes is equal or 1."),
         ("`(3, 1)`", "The result takes the larger length on every axis."),
         ("`(4, 3)`", "Axes are aligned from the right, not swapped.")],
        pointer=BROADCAST),
    numeric(
        "pre-twos-complement", U, 2,
        "The 8 bits {bits:08b} are read as a signed 8-bit integer (two's complement). What is its value?",
        dict(bits=0b11111101),
        lambda bits: _signed8(bits),
        lambda bits, answer: (f"As unsigned the bits are {bits}; the top bit weighs −128 instead of +128: "
                              f"{bits} − 256 = {fmt(answer)}." if bits >= 128 else
                              f"The top bit is 0, so the value is the unsigned one: {fmt(answer)}."),
        lambda rng: dict(bits=int(rng.integers(128, 256))),      # the top bit set: the case that tests the idea
        mistakes=[(lambda bits: bits, "That reads the bits as unsigned; in two's complement the top bit counts −128."),
                  (lambda bits: -(bits & 0x7F) if bits >= 128 else None,
                   "That is sign-magnitude, not two's complement.")],
        pointer=TWOS),
    numeric(
        "pre-int8-min", U, 2,
        "What is the most negative value of a signed {n}-bit integer in two's complement?",
        dict(n=8),
        lambda n: -(2 ** (n - 1)),
        lambda n, answer: f"−2^({n} − 1) = {fmt(answer)}; the largest is 2^({n} − 1) − 1.",
        lambda rng: dict(n=int(rng.choice([4, 8, 16, 32]))),
        mistakes=[(lambda n: -(2 ** (n - 1)) + 1, "That is the negative of the largest value; two's complement has "
                   "one more negative value than positive ones.")],
        pointer=TWOS),
    numeric(
        "pre-hex", U, 2,
        "What is the unsigned value of the byte {byte:#04x}?",
        dict(byte=0xB6),
        lambda byte: byte,
        lambda byte, answer: f"{byte >> 4}·16 + {byte & 15} = {fmt(answer)}.",
        lambda rng: dict(byte=int(rng.integers(16, 256))),
        pointer=HEX),
    numeric(
        "pre-mib", U, 3,
        "How many bytes are {n} MiB?",
        dict(n=1),
        lambda n: n * 2**20,
        lambda n, answer: "1 MiB = 2²⁰ = 1,048,576 bytes" + (f"; {n} MiB = {fmt(answer)} bytes." if n != 1 else "."),
        lambda rng: dict(n=int(rng.integers(1, 65))),
        mistakes=[(lambda n: n * 10**6, "That is MB (10⁶ bytes); MiB is 2²⁰.")],
        pointer=POWERS),
    numeric(
        "pre-address-bits", U, 3,
        "How many address bits are needed to give each byte of a {kib:,} KiB memory its own address?",
        dict(kib=4),
        lambda kib: math.log2(kib * 1024),
        lambda kib, answer: f"{kib:,} KiB = 2^{int(math.log2(kib * 1024))} bytes: {fmt(answer)} bits.",
        lambda rng: dict(kib=int(2 ** rng.integers(0, 21))),
        pointer=POWERS),
    numeric(
        "pre-largest-power", U, 3,
        "What is the largest power of two that divides {n}?",
        dict(n=96),
        lambda n: n & -n,
        lambda n, answer: f"{n} = {n // (n & -n)} · {n & -n}, with {n // (n & -n)} odd: {fmt(answer)}.",
        lambda rng: dict(n=int(rng.integers(1, 5000))),
        pointer=POWERS),
    numeric(
        "pre-array-bytes", U, 4,
        "How many bytes does a C-contiguous float32 array of shape `{shape}` take?",
        dict(shape=(1, 3, 224, 224)),
        lambda shape: 4 * math.prod(shape),
        lambda shape, answer: f"{' · '.join(map(str, shape))} elements × 4 bytes = {fmt(answer)} bytes.",
        lambda rng: dict(shape=tuple(int(x) for x in rng.integers(1, 65, size=4))),
        mistakes=[(lambda shape: math.prod(shape), "That counts elements; a float32 is 4 bytes.")],
        pointer=CACHES),
    choice(
        "pre-cache-line", U, 4,
        "In what unit does a current x86 core (and most Arm cores) move data between memory and its caches?",
        ("Cache lines of 64 bytes.", "Right: a single float read brings its whole line."),
        [("Single bytes.", "Memory moves whole lines; reading one byte costs a line."),
         ("Pages of 4 KiB.", "Pages are the unit of virtual memory, not of the caches."),
         ("Whole arrays.", "Caches know nothing of arrays.")],
        pointer=CACHES),
    choice(
        "pre-traversal", U, 4,
        "Summing a large C-order 2-D float32 array row by row is much faster than column by column. Why?",
        ("Row by row reads consecutive addresses, so every cache line fetched is used in full; column by column "
         "uses one float of each line fetched.", "Right: spatial locality."),
        [("Column sums need more additions.", "Both do the same additions."),
         ("Python loops over rows faster.", "The same holds in C; the memory access pattern decides."),
         ("Rows are stored in the cache, columns in DRAM.", "Both live in DRAM; the order of access decides which "
          "lines are reused.")],
        pointer=CACHES),
    choice(
        "pre-aliasing", U, 5,
        "`a = [1, 2]`, then `b = a` and `b.append(3)`. What is `a`?",
        ("`[1, 2, 3]`", "Right: `b = a` binds a second name to the same list."),
        [("`[1, 2]`", "Assignment copies no object; use `a.copy()` for a copy."),
         ("An error: `a` is immutable.", "Lists are mutable."),
         ("`[3]`", "`append` adds to the list, it does not replace it.")],
        pointer=PYTHON),
    numeric(
        "pre-floor-division", U, 5,
        "What does Python evaluate `{a} // {b}` to?",
        dict(a=-7, b=2),
        lambda a, b: a // b,
        lambda a, b, answer: f"`//` rounds down, toward −∞: {a}/{b} = {a / b:g}, so {fmt(answer)}.",
        lambda rng: dict(a=int(rng.integers(-50, 51)), b=int(rng.choice([2, 3, 4, 5, 7]))),
        mistakes=[(lambda a, b: int(a / b), "That truncates toward zero, as C does; Python's `//` floors.")],
        pointer=PYTHON),
]
