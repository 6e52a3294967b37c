"""Questions on chapter 5, "Systolic arrays" (chapters/05_systolic.md).

Chapter 5's GEMM convention is SCALE-Sim's: A (M×K) is the im2col'd input, so
M = output pixels, K = filter height × width × channels, and B (K×N) holds the
N filters. A cycle count is chapter 5's: the cycles the array runs, folds × cycles per fold.
SCALE-Sim 3 reports one less, the number of the last cycle counted from 0; that
answer is a typical mistake here, with feedback that says so.
"""

from __future__ import annotations

from ..._arith import ceil_div
from .core import choice, fmt, numeric, plural, short

U = "5"



def _ws(m, n, k, r, c):
    return ceil_div(k, r) * ceil_div(n, c) * (2 * r + c + m - 2)


def _os(m, n, k, r, c):
    return ceil_div(m, r) * ceil_div(n, c) * (r + c + k - 2)


_SCALESIM = ("That is SCALE-Sim's \"total cycles\", the number of the last cycle counted from 0; the array runs "
             "one cycle more, folds × cycles per fold, the count chapter 5 uses.")


def _draw_gemm(rng):
    side = int(rng.choice([4, 8, 16, 32]))
    return dict(m=int(rng.integers(1, 300)), n=int(rng.integers(1, 80)), k=int(rng.integers(1, 80)), r=side,
                c=side)


def _banks(k, rows, nb):
    # the words row r reads in stream cycle t: (t - r)·K + r; count the distinct banks of one cycle
    t = rows  # a cycle in which every row reads
    return len({((t - r) * k + r) % nb for r in range(rows)})


QUESTIONS = [
    numeric(
        "ch5-ws-cycles", U, 2,
        "A GEMM with M = {m}, N = {n}, K = {k} runs weight-stationary on a {r}×{c} array (rows ← K, columns ← N, "
        "the M rows of A streamed). How many cycles does the array run?",
        dict(m=256, n=16, k=27, r=16, c=16),
        _ws,
        lambda m, n, k, r, c, answer: (f"⌈{k}/{r}⌉·⌈{n}/{c}⌉ = {plural(ceil_div(k, r) * ceil_div(n, c), 'fold')} "
                                       f"of 2R + C + T − 2 = {2 * r + c + m - 2} cycles (T = M = {m}): {fmt(answer)}."),
        _draw_gemm,
        mistakes=[(lambda m, n, k, r, c: ceil_div(k, r) * ceil_div(n, c) * m, "That counts only the stream: each fold also "
                   "pays the weight preload (R), the fill (R − 1) and the drain (C − 1)."),
                  (lambda m, n, k, r, c: _ws(m, n, k, r, c) - 1, _SCALESIM)],
        source="ex-ch5-cycles"),
    numeric(
        "ch5-os-cycles", U, 2,
        "A GEMM with M = {m}, N = {n}, K = {k} runs output-stationary on a {r}×{c} array (rows ← M, columns ← N, "
        "K streamed). How many cycles does the array run?",
        dict(m=256, n=16, k=27, r=16, c=16),
        _os,
        lambda m, n, k, r, c, answer: (f"⌈{m}/{r}⌉·⌈{n}/{c}⌉ = {plural(ceil_div(m, r) * ceil_div(n, c), 'fold')} of "
                                       f"R + C + T − 2 = {r + c + k - 2} cycles (no preload, T = K = {k}): {fmt(answer)}."),
        _draw_gemm,
        mistakes=[(lambda m, n, k, r, c: ceil_div(m, r) * ceil_div(n, c) * (2 * r + c + k - 2),
                   "Output-stationary has no weight preload: a fold is R + C + T − 2."),
                  (lambda m, n, k, r, c: _os(m, n, k, r, c) - 1, _SCALESIM)],
        source="ex-ch5-cycles"),
    numeric(
        "ch5-ws-utilization", U, 2,
        "A GEMM with M = {m}, N = {n}, K = {k} runs weight-stationary on a {r}×{c} array (rows ← K, columns ← N, "
        "the M rows of A streamed). What is its utilization, useful MACs over PEs × the cycles the array runs? "
        "(Three decimals.)",
        dict(m=256, n=16, k=27, r=16, c=16),
        lambda m, n, k, r, c: m * n * k / (_ws(m, n, k, r, c) * r * c),
        lambda m, n, k, r, c, answer: (f"The array runs {plural(ceil_div(k, r) * ceil_div(n, c), 'fold')} of "
                                       f"2R + C + T − 2 = {2 * r + c + m - 2} cycles, {fmt(_ws(m, n, k, r, c))} in all; "
                                       f"MNK = {fmt(m * n * k)} over {fmt(_ws(m, n, k, r, c))} cycles × {r * c} PEs: "
                                       f"{answer:.3f}."),
        _draw_gemm, abs_tol=0.0006,
        mistakes=[(lambda m, n, k, r, c: min(k, r) * min(n, c) / (r * c) if k <= r and n <= c else None,
                   "That is the mapping efficiency, the share of PEs holding weights; utilization also counts the "
                   "preload, fill and drain cycles."),
                  (lambda m, n, k, r, c: m * n * k / ((_ws(m, n, k, r, c) - 1) * r * c) if _ws(m, n, k, r, c) > 1
                   else None,
                   "That divides by SCALE-Sim's \"total cycles\", the number of the last cycle, one less than the "
                   "cycles the array runs (SCALE-Sim's own utilization); chapter 5 divides by the cycles, so that a "
                   "utilization never exceeds 1.")],
        source="ex-ch5-cycles"),
    numeric(
        "ch5-peak-tops", U, 4,
        "A datasheet lists a {r}×{c} INT8 MAC array at {ghz} GHz. What is its peak, in TOPS? (Three decimals.)",
        dict(r=64, c=64, ghz=1.2),
        lambda r, c, ghz: 2 * r * c * ghz * 1e9 / 1e12,
        lambda r, c, ghz, answer: (f"2 operations per MAC × {r}·{c} MACs per cycle × {ghz}·10⁹ cycles per second = "
                                   f"{answer:.3f} TOPS."),
        lambda rng: dict(r=int(rng.choice([16, 32, 64, 128, 256])), c=int(rng.choice([16, 32, 64, 128, 256])),
                         ghz=float(rng.choice([0.8, 1.0, 1.2, 1.4, 1.8]))),
        abs_tol=0.0006,
        mistakes=[(lambda r, c, ghz: r * c * ghz * 1e9 / 1e12, "That counts MACs (tera-MACs per second); TOPS counts "
                   "a MAC as two operations, the second source article's mistake.")],
        source="ex-ch5-tops"),
    numeric(
        "ch5-depthwise-per-channel", U, 3,
        "A depthwise 3×3 layer with {ch} channels, whose output is {o}×{o} pixels per channel, runs per channel (one GEMM of "
        "M = {o}², N = 1, K = 9 per channel, back to back) on a {r}×{r} weight-stationary array. How many cycles does "
        "the array run for the layer?",
        dict(ch=64, o=4, r=32),
        lambda ch, o, r: ch * _ws(o * o, 1, 9, r, r),
        lambda ch, o, r, answer: (f"Each channel's GEMM needs ⌈9/{r}⌉·⌈1/{r}⌉ = {plural(ceil_div(9, r), 'fold')} "
                                  f"of 2·{r} + {r} + {o * o} − 2 = {3 * r + o * o - 2} cycles (T = M = {o * o}), so "
                                  f"{fmt(_ws(o * o, 1, 9, r, r))} cycles per channel; {ch} channels: {fmt(answer)}."),
        lambda rng: dict(ch=int(rng.choice([16, 32, 64, 128])), o=int(rng.choice([4, 7, 8, 14])),
                         r=int(rng.choice([8, 16, 32, 64]))),
        mistakes=[(lambda ch, o, r: ch * (3 * r + o * o - 2) if ceil_div(9, r) > 1 else None,
                   "That counts one fold per channel; with fewer than 9 rows, K = 9 needs ⌈9/R⌉ folds."),
                  (lambda ch, o, r: ch * (_ws(o * o, 1, 9, r, r) - 1),
                   "That adds up SCALE-Sim's \"total cycles\" of the channels' layers, each the number of its last "
                   "cycle; each channel runs one cycle more.")],
        source="ex-ch5-depthwise"),
    numeric(
        "ch5-bank-conflicts", U, 5,
        "The {rows} rows of a weight-stationary array read a skewed diagonal of A each cycle: row r reads word "
        "(t − r)·K + r of a row-major A with K = {k}. The SRAM has {nb} banks, word a in bank a mod {nb}. How many "
        "different banks do the {rows} reads of one cycle hit?",
        dict(k=17, rows=8, nb=8),
        _banks,
        lambda k, rows, nb, answer: (f"(t − r)·{k} + r = t·{k} − r·{k - 1}: the {rows} words differ by multiples "
                                     f"of {k - 1}, which take {nb}/gcd({k - 1}, {nb}) = {fmt(answer)} distinct values "
                                     f"modulo {nb}."),
        lambda rng: dict(k=int(rng.integers(9, 65)), rows=8, nb=8),
        mistakes=[(lambda k, rows, nb: rows, "That assumes each row reads a bank of its own; the words differ by "
                   "multiples of K − 1, and here K − 1 shares a factor with the number of banks.")],
        source="chapter 5, banks"),
    choice(
        "ch5-ws-moves", U, 1,
        "In a weight-stationary array, what moves to the right, what moves down, and what stays?",
        ("Inputs (A) move right, partial sums move down, weights (B) stay.", "Right."),
        [("Weights move right, inputs move down, outputs stay.", "That is closer to output-stationary, where each "
          "PE keeps its sum."),
         ("Partial sums move right, inputs move down, weights stay.", "In this chapter's array, partial sums "
          "flow down each column."),
         ("Nothing moves: each PE reads its operands from SRAM.", "Then it would not be systolic: operands pass "
          "from neighbour to neighbour.")],
        source="self-check 1"),
    choice(
        "ch5-fc-dataflow", U, 2,
        "A fully connected layer on one image (M = 1, N = 1000, K = 512) runs on a 128×128 array. Which dataflow "
        "wastes the array most?",
        ("Weight-stationary: it streams T = M = 1 row per fold and pays the whole preload, fill and drain in each "
         "of its 32 folds.", "Right, although its weights fill almost every PE."),
        [("Output-stationary: only 1 of 128 rows holds an output.", "It maps poorly but streams T = K = 512 per "
          "fold, which amortizes the fixed cost."),
         ("Input-stationary: only 1 of 128 columns holds an input.", "It streams T = N = 1000 per fold."),
         ("All three take the same cycles.", "The dataflow decides which dimension streams, and that decides the "
          "overhead.")],
        source="self-check 3"),
    choice(
        "ch5-mapping-vs-utilization", U, 2,
        "Why can a layer's mapping efficiency be 1 (every PE holds data) while its utilization is low?",
        ("Mapping efficiency counts PEs that hold data; utilization also counts the preload, fill and drain "
         "cycles in which those PEs wait.", "Right: a short stream pays the fixed cycles for little work."),
        [("Utilization counts only multiplications, not additions.", "Both count MACs."),
         ("Mapping efficiency is measured in bytes, utilization in cycles.", "Both are fractions of PEs; "
          "utilization weighs them by cycles."),
         ("It cannot: the two are always equal.", "The 7×7 layers of ResNet-18 on a 128×128 array show the gap.")],
        source="self-check 4"),
    choice(
        "ch5-16-tops", U, 4,
        "An article says a 128×128 MAC array at 1 GHz gives \"16.4 TOPS\". What is its peak in the datasheets' "
        "convention?",
        ("32.8 TOPS: 16,384 MACs per cycle × 10⁹ cycles × 2 operations per MAC.", "Right: 16.4 is tera-MACs per "
         "second."),
        [("16.4 TOPS, as the article says.", "That counts a MAC as one operation."),
         ("8.2 TOPS: only half the PEs are busy on average.", "A peak assumes every PE busy every cycle; "
          "utilization is a separate number."),
         ("65.5 TOPS: a MAC reads two operands and writes one.", "Operands are bytes, not operations.")],
        source="chapter 5, peak TOPS"),
    short(
        "ch5-fold-cost", U, 2,
        "Why does one weight-stationary fold cost 2R + C + T − 2 cycles on an R×C array, and not just T, the "
        "number of streamed rows?",
        "Before the stream, the weights are shifted in one row per cycle: R cycles of preload. The skew delays row "
        "r by r cycles, so the diagonal band of operands needs R − 1 cycles to reach the last row (the fill), and "
        "the last column keeps working C − 1 cycles after the first has finished (the drain). With the T cycles "
        "of the stream: R + (R − 1) + T + (C − 1) = 2R + C + T − 2.",
        [(1, "Preload: R cycles to shift the weights in."),
         (1, "Fill: R − 1 cycles for the skewed band to reach the last row."),
         (1, "Drain: C − 1 cycles for the last column to finish."),
         (1, "Adds them to the stream's T correctly.")],
        source="self-check 2"),
    short(
        "ch5-40-tops", U, 4,
        "An NPU is rated at 40 TOPS. What else do you need to know before predicting how fast a given layer runs "
        "on it?",
        "Its array shape and dataflow (they set the layer's utilization), its clock, its memory bandwidth and "
        "on-chip SRAM (the roofline: is the layer memory-bound?), and whether the layer runs on the array at all "
        "(depthwise layers or unsupported operators often do not).",
        [(1, "Array shape and dataflow, for utilization."),
         (1, "Memory bandwidth and SRAM, for the roofline."),
         (1, "Whether the layer runs on the array at all (or falls back).")],
        source="self-check 5"),
    short(
        "ch5-double-buffering", U, 5,
        "With two buffers (double buffering), the next fold's tiles load from DRAM while the current fold "
        "computes. When does this hide the loads completely, and what helps when it does not?",
        "It hides every load but the first when a fold computes at least as long as its tiles take to load. When "
        "a fold loads longer than it computes, buffering only overlaps the two: the array still waits for the "
        "difference, the layer is memory-bound at that bandwidth, and only more bandwidth or more reuse of what "
        "is loaded (a larger SRAM, better tiling) helps.",
        [(1, "Hides loads when compute per fold ≥ load per fold (all but the first)."),
         (1, "Otherwise the array still stalls: buffering cannot shorten loads."),
         (1, "Remedies: more bandwidth or more reuse (larger SRAM, tiling).")],
        source="chapter 5, double buffering"),
]
