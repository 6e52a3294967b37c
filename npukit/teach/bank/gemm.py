"""Questions on chapter 4, "GEMM and tiling" (chapters/04_gemm.md).

Chapter 4's GEMM convention: A (M×K) holds the weights, B (K×N) the activations,
so for a convolution M = output channels, N = output pixels, K = input channels × kernel area.
"""

from __future__ import annotations

from .core import choice, fmt, numeric, short

U = "4"



def _conv_draw(rng):
    return dict(cin=int(rng.choice([16, 32, 64, 128])), cout=int(rng.choice([32, 64, 128, 256])),
                k=int(rng.choice([1, 3, 5])), h=int(rng.choice([7, 14, 28, 56])))


def _lines_per_row(width, bk, itemsize=4, line=64):
    total = 0
    for p in range(0, width, bk):
        w = min(bk, width - p)
        total += -(-(p + w) * itemsize // line) - (p * itemsize) // line
    return total


def _square_draw(rng):
    n = int(rng.choice([128, 256, 512, 1024]))
    return dict(n=n, b=int(rng.choice([b for b in (16, 32, 64, 128) if b < n])))


QUESTIONS = [
    numeric(
        "ch4-conv-k", U, 1,
        "A {k}×{k} convolution with {cin} input and {cout} output channels produces a {h}×{h} map. Lowered to a "
        "GEMM in chapter 4's convention (M = output channels, N = output pixels), what is K?",
        dict(cin=64, cout=128, k=3, h=28),
        lambda cin, cout, k, h: cin * k * k,
        lambda cin, cout, k, h, answer: f"K = input channels × kernel area = {cin}·{k}·{k} = {fmt(answer)}.",
        _conv_draw,
        mistakes=[(lambda cin, cout, k, h: h * h, "That is N, the output pixels."),
                  (lambda cin, cout, k, h: cin, "After im2col each column holds a whole k×k window of every "
                   "input channel.")],
        source="self-check 1"),
    numeric(
        "ch4-conv-macs", U, 1,
        "A {k}×{k} convolution with {cin} input and {cout} output channels produces a {h}×{h} map (batch 1). "
        "Lowered to a GEMM, how many MACs does it do?",
        dict(cin=64, cout=128, k=3, h=28),
        lambda cin, cout, k, h: cout * h * h * cin * k * k,
        lambda cin, cout, k, h, answer: (f"M·N·K = {cout}·{h * h}·{cin * k * k} = {fmt(answer)} MACs."),
        _conv_draw,
        mistakes=[(lambda cin, cout, k, h: 2 * cout * h * h * cin * k * k, "That is 2MNK FLOPs, not MACs.")],
        source="chapter 4, every layer is a GEMM"),
    numeric(
        "ch4-traffic-mnk", U, 3,
        "A {n}×{n}×{n} float32 GEMM runs with {b}×{b}×{b} tiles in loop order `mnk`, in chapter 4's buffer model "
        "(one slot per operand, 64-byte lines, rows starting on lines). How many bytes does it move between DRAM "
        "and the buffer, reads and writes together?",
        dict(n=256, b=64),
        lambda n, b: (2 * n // b + 1) * n * n * 4,
        lambda n, b, answer: (f"Tile rows are whole lines, so one pass over a matrix costs {fmt(n * n * 4)} B. "
                              f"In `mnk`, r_A = N/b_n = {n // b}, r_B = M/b_m = {n // b} and C stays (r_C = 1, written "
                              f"once): ({n // b} + {n // b} + 1) matrices = {fmt(answer)} bytes."),
        _square_draw,
        mistakes=[(lambda n, b: 3 * n * n * 4, "That is the compulsory minimum: with several k-steps each A- and "
                   "B-tile is loaded again for every pass of the loop that does not index it.")],
        source="ex-ch4-traffic"),
    numeric(
        "ch4-traffic-kmn-writes", U, 3,
        "A {n}×{n}×{n} float32 GEMM runs with {b}×{b}×{b} tiles in loop order `kmn` (k outermost), in chapter 4's "
        "buffer model (one slot per operand, 64-byte lines, rows starting on lines). How many bytes of C does it "
        "write to DRAM?",
        dict(n=256, b=64),
        lambda n, b: (n // b) * n * n * 4,
        lambda n, b, answer: (f"C's third loop, k, is outermost with m and n inside it, so every partial sum leaves "
                              f"the buffer once per k-step: r_C = K/b_k = {n // b}, and C is written {n // b} times, "
                              f"{fmt(answer)} bytes."),
        _square_draw,
        mistakes=[(lambda n, b: n * n * 4, "That is `mnk`'s single write; with k outermost the C-tile cannot stay.")],
        source="ex-ch4-traffic"),
    numeric(
        "ch4-lines", U, 3,
        "A 64×64 float32 matrix is read in tiles of 8 rows by {bk} columns (the last tile of a row may be "
        "narrower), every row starting on a 64-byte line, each tile row costing every line it touches. How many "
        "bytes does one pass over all its tiles move?",
        dict(bk=24),
        lambda bk: 64 * _lines_per_row(64, bk) * 64,
        lambda bk, answer: (f"A row is 256 bytes, 4 lines; its segments of {bk} floats touch "
                            f"{_lines_per_row(64, bk)} lines in all (a line shared by two segments is moved by "
                            f"both): 64 rows × {_lines_per_row(64, bk)} × 64 B = {fmt(answer)} bytes."),
        lambda rng: dict(bk=int(rng.integers(1, 65))),
        mistakes=[(lambda bk: 64 * 64 * 4, "That is the matrix's size, true only when every segment is whole lines.")],
        source="ex-ch4-lines"),
    numeric(
        "ch4-compulsory", U, 3,
        "A layer's GEMM has M = {m}, N = {n}, K = {k}, with INT8 operands (1 byte) and 32-bit accumulators (4 bytes). "
        "What is its compulsory DRAM traffic (every input read once, the output written once), in bytes?",
        dict(m=128, n=65536, k=64),
        lambda m, n, k: m * k + k * n + 4 * m * n,
        lambda m, n, k, answer: f"(M·K + K·N)·1 + M·N·4 = {fmt(m * k)} + {fmt(k * n)} + {fmt(4 * m * n)} = {fmt(answer)} bytes.",
        lambda rng: dict(m=int(rng.choice([16, 32, 64, 128])), n=int(rng.choice([1024, 4096, 16384, 65536])),
                         k=int(rng.choice([27, 64, 128, 576]))),
        mistakes=[(lambda m, n, k: m * k + k * n + m * n, "C is 32-bit: 4 bytes per output.")],
        source="ex-ch4-order"),
    numeric(
        "ch4-tile-steps", U, 2,
        "A tiled matrix product C = A·B with M = {m}, N = {n}, K = {k} uses tiles b_m × b_n × b_k = {bm} × {bn} × {bk}; "
        "the last tile along a dimension may be ragged (shorter). How many tile products (an A-tile times a "
        "B-tile, added into a C-tile) does it compute?",
        dict(m=100, n=90, k=70, bm=48, bn=40, bk=24),
        lambda m, n, k, bm, bn, bk: -(-m // bm) * -(-n // bn) * -(-k // bk),
        lambda m, n, k, bm, bn, bk, answer: (f"⌈{m}/{bm}⌉·⌈{n}/{bn}⌉·⌈{k}/{bk}⌉ = {-(-m // bm)}·{-(-n // bn)}·"
                                             f"{-(-k // bk)} = {fmt(answer)}, in every loop order."),
        lambda rng: dict(m=int(rng.integers(1, 300)), n=int(rng.integers(1, 300)), k=int(rng.integers(1, 300)),
                         bm=int(rng.integers(1, 65)), bn=int(rng.integers(1, 65)), bk=int(rng.integers(1, 65))),
        mistakes=[(lambda m, n, k, bm, bn, bk: (m // bm) * (n // bn) * (k // bk),
                   "Rounding down drops the ragged edge tiles; their products must be computed too.")],
        source="lab 4, tiled matmul with ragged edges"),
    choice(
        "ch4-orders-agree", U, 2,
        "`tiled_matmul` gives bit-for-bit the same float32 result in all six loop orders, but only agrees with "
        "`numpy.matmul` to rounding. Why?",
        ("Every order visits the k-tiles of a given C-tile in the same ascending order, so each output is summed "
         "in the same sequence; BLAS sums in an order of its own.", "Right: float addition is not associative."),
        [("The loop order changes which MACs are done.", "Every order does exactly the same MACs."),
         ("Tiling converts the operands to float64.", "The tiles are float32 views of the operands."),
         ("numpy.matmul is less accurate than a tiled product.", "Neither is more accurate in general; they round "
          "in different orders.")],
        source="chapter 4, tiles and loop orders"),
    choice(
        "ch4-mnk-stays", U, 3,
        "In loop order `mnk`, which tile stays in the buffer across the innermost loop, and how often is C written?",
        ("The C-tile stays for its whole reduction; C is written once.", "Right: k innermost keeps the output."),
        [("The A-tile stays; C is written once per k-step.", "That is `mkn`/`kmn` (n innermost)."),
         ("The B-tile stays; C is written once.", "B stays when m is innermost (`nkm`, `knm`)."),
         ("Nothing stays; every step loads three tiles.", "A tile the previous step had stays, at no cost.")],
        source="self-check 3"),
    choice(
        "ch4-double-buffer-size", U, 4,
        "You double the on-chip buffer for a large square GEMM and retile. Roughly how much does the best tile's "
        "DRAM traffic fall?",
        ("By about √2: traffic scales as 1/√S.", "Right; the Hong–Kung bound has the same order."),
        [("By half: traffic is proportional to 1/S.", "The output tile's side grows as √S, not S."),
         ("Not at all: the compulsory traffic is fixed.", "A large GEMM with a small buffer is far above the "
          "compulsory minimum."),
         ("By four: both tile sides double.", "Doubling the area grows each side by √2.")],
        source="self-check 5"),
    choice(
        "ch4-narrow-segments", U, 3,
        "A tile reads A in row segments of 3 float32 values with 64-byte lines. Roughly how many times its bytes "
        "does it move?",
        ("More than five times: each 12-byte segment costs at least one whole line.", "Right (twice that when a "
         "segment straddles a line)."),
        [("About once: the lines are shared with the next tile.", "Only if the next tile's segment is read while "
          "the line is still in the buffer; in this model each tile row pays its lines."),
         ("Exactly three times.", "A line is 64 bytes, not 36."),
         ("Exactly 16 times.", "That is a one-float segment: 64/4.")],
        source="self-check 4"),
    choice(
        "ch4-same-macs", U, 3,
        "Two schedules of the same GEMM do the same MACs. Can one be much slower on an accelerator?",
        ("Yes: their DRAM traffic can differ by orders of magnitude, and a memory-bound layer waits on bytes.",
         "Right."),
        [("No: time is MACs divided by the peak.", "That ignores the bytes; the roofline has two roofs."),
         ("Only if they give different results.", "Every order does the same MACs; they agree bit for bit here."),
         ("Only on a CPU, never on an accelerator.", "An accelerator's small buffer makes the order matter more.")],
        source="self-check 2"),
    short(
        "ch4-small-tiles", U, 5,
        "Why can `tiled_matmul` with 32×32×32 tiles not come close to `numpy.matmul` on a CPU, while an "
        "accelerator with 32×32 tiles might?",
        "On the CPU each tile step costs microseconds of Python, NumPy and BLAS entry (and packing), more than "
        "its 32³ = 32,768 MACs need, and BLAS may not spread calls that small over several cores. An "
        "accelerator issues tiles from a hardware or firmware sequencer: its cost per tile is a DMA descriptor, "
        "often overlapped with computation, and its accumulators add in place.",
        [(1, "A fixed per-step cost on the CPU (interpreter, BLAS call, packing, the extra addition)."),
         (1, "Compares it with the tile's small work (32³ MACs), or notes lost threading."),
         (1, "Accelerator: tiles sequenced in hardware, DMA overlapped, in-place accumulation.")],
        source="self-check 6"),
    short(
        "ch4-tiny-weights", U, 4,
        "A layer's weight matrix A (M × K) fits in the buffer together with one B-tile and one C-tile, and N "
        "(pixels) is huge. Which tile shape and loop order reach the compulsory minimum, and why?",
        "Make the A-tile the whole of A (b_m = M, b_k = K): the m and k loops then run once and never evict "
        "anything, so only n runs, streaming B through once and writing each C-tile once, in any loop order. "
        "The column tile b_n must make B's and C's tile rows whole lines (for INT8 B and int32 C with 64-byte "
        "lines, b_n = 64), or every row pays whole lines for a fraction of them.",
        [(1, "A-tile = all of A (b_m = M, b_k = K)."),
         (1, "Then every loop order streams B once and writes C once: the compulsory minimum."),
         (1, "b_n chosen so tile rows are whole lines.")],
        source="ex-ch4-order"),
]
