"""Lab 5's checkers, attacked the way a student would.

* right answers pass, on several seeds; the cycle count is checked against
  SCALE-Sim 3.0.0's own runs and the register-level simulator, not against
  the formula typed again;
* typical wrong answers fail with the first failing input, the expected and
  returned value, and a hint that names the mistake (the last cycle's index,
  a - 1 per fold, the dataflow's mapping transposed, rows and columns
  swapped, weight- and input-stationary mixed up, the preload forgotten, a
  partial fold charged as a fraction, floor for ceil);
* a shape search that leaves out the extreme shapes fails;
* shortcuts fail: calling npukit's own answers under any name
  (``npukit.systolic``, ``npukit.accelerator``, the figures that run them)
  or the checker's references, a lookup table filled from failure messages,
  a "prediction" copied from the measured simulation, a measurement edited
  after the run;
* the lab's check cells are locked nbgrader cells that call the checkers,
  and the student edition runs top to bottom with only the check cells of
  unfinished exercises failing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from npukit import accelerator, systolic, teach
from npukit.teach import systolic as checks
from npukit.teach.core import CheckFailed, NotAttempted

LAB = Path(__file__).resolve().parent.parent / "labs" / "05_systolic.ipynb"
MAP = {"os": ("M", "N", "K"), "ws": ("K", "N", "M"), "is": ("K", "M", "N")}


# ---- answers written here, from the convention (not from npukit) -------------------------


def _split(M, N, K, df):
    size = {"M": M, "N": N, "K": K}
    return tuple(size[x] for x in MAP[df])


def fold_cycles(M, N, K, rows, cols, df):
    s_r, s_c, t = _split(M, N, K, df)
    per_fold = (0 if df == "os" else rows) + rows + cols + t - 2
    return -(-s_r // rows) * -(-s_c // cols) * per_fold


def ws_busy(M, K, N):
    busy = np.zeros(2 * K + N + M - 2, dtype=int)
    for m in range(M):
        for r in range(K):
            for c in range(N):
                busy[K + m + r + c] += 1
    return busy


def best_shape(M, N, K, pes, df):
    shapes = [(2**e, pes // 2**e) for e in range(pes.bit_length())]
    return min(shapes, key=lambda s: fold_cycles(M, N, K, *s, df))


def predict(M, N, K, rows, cols, df):
    return M * N * K / (rows * cols * fold_cycles(M, N, K, rows, cols, df))


@pytest.fixture(scope="module")
def sim_pw():
    rng = np.random.default_rng(5)
    return systolic.simulate(rng.integers(-128, 128, (16, 64)), rng.integers(-128, 128, (64, 128)), 128, 128, "ws")


def _fails(checker, fn, *args, match, **kwargs) -> str:
    with pytest.raises(CheckFailed, match=match) as info:
        checker(fn, *args, **kwargs)
    return str(info.value)


# ---- right answers pass ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, None])
def test_right_answers_pass(seed, sim_pw, capsys):
    teach.check_fold_cycles(fold_cycles, seed=seed)
    teach.check_ws_busy(ws_busy, seed=seed)
    teach.check_best_shape(best_shape, seed=seed)
    teach.check_utilization_prediction(predict, sim_pw, seed=seed)
    out = capsys.readouterr().out
    assert out.count("✓") == 4 and "fresh layers agree too" in out


def test_the_labs_own_solutions_pass(sim_pw, capsys):
    nb = json.loads(LAB.read_text(encoding="utf-8"))
    from npukit.teach import variants

    env: dict = {"np": np, "mine": variants.variant("05_systolic", "")}   # exercise 5's layer, the public one
    for cell in nb["cells"]:
        if "solution" in cell["metadata"].get("tags", []):
            exec("".join(cell["source"]), env)
    teach.check_fold_cycles(env["fold_cycles"], seed=11)
    teach.check_ws_busy(env["ws_busy"], seed=11)
    teach.check_best_shape(env["best_shape"], seed=11)
    teach.check_utilization_prediction(env["predict_utilization"], sim_pw, seed=11)
    assert capsys.readouterr().out.count("✓") == 4


def test_the_measured_layer_is_judged_within_rtol_and_fresh_layers_exactly(sim_pw, capsys):
    def rough(M, N, K, rows, cols, df):       # ignores the fill and the drain: about 8 % off here
        s_r, s_c, t = _split(M, N, K, df)
        folds = -(-s_r // rows) * -(-s_c // cols)
        return M * N * K / (rows * cols * folds * ((0 if df == "os" else rows) + t + rows))

    with pytest.raises(CheckFailed, match="Where the cycles went"):
        teach.check_utilization_prediction(rough, sim_pw, seed=3)
    # within rtol on the measured layer, but a different formula: the fresh layers are compared exactly
    msg = _fails(teach.check_utilization_prediction, rough, sim_pw, seed=3, rtol=0.75,
                 match="right for the measured layer")
    assert "must be exact" in msg

    def scalesim_form(M, N, K, rows, cols, df):   # SCALE-Sim divides by the last cycle's index
        return M * N * K / (rows * cols * (fold_cycles(M, N, K, rows, cols, df) - 1))

    def switching(M, N, K, rows, cols, df):       # one form here, the other there
        return (scalesim_form if df == "ws" else predict)(M, N, K, rows, cols, df)

    for seed in range(5):
        teach.check_utilization_prediction(scalesim_form, sim_pw, seed=seed)
        _fails(teach.check_utilization_prediction, switching, sim_pw, seed=seed, match="the same way every time")
    assert capsys.readouterr().out.count("✓") == 5


def test_wrong_utilization_formulas_fail_on_every_seed(sim_pw):
    # the review's attack: with 25 % on the fresh layers too, these passed 22 to 33 of 60 seeds
    def util(M, N, K, R, C, df, preload, extra=0):
        s_r, s_c, t = _split(M, N, K, df)
        folds = -(-s_r // R) * -(-s_c // C)
        return M * N * K / (R * C * folds * (preload(R, C, df) + R + C + t - 2 + extra))

    wrong = {"a preload in OS": lambda *a: util(*a, lambda R, C, df: R),
             "a preload of C": lambda *a: util(*a, lambda R, C, df: 0 if df == "os" else C),
             "an extra R per fold": lambda *a: util(*a, lambda R, C, df: 0 if df == "os" else R, extra=a[3])}
    for name, fn in wrong.items():
        for seed in range(60):
            _fails(teach.check_utilization_prediction, fn, sim_pw, seed=seed, match="utilization prediction")


def test_the_learner_runs_before_the_reference_is_computed():
    # core's rule: the expected answer is not on the stack while the learner's code runs (a function
    # under check may not read frames, so the order is checked in the source)
    import inspect

    src = inspect.getsource(checks.check_utilization_prediction)
    loop = src[src.index("for i in range(n):"):]
    assert loop.index("got = predicted(*case)") < loop.index("_utilization(*case)")


# ---- typical wrong answers, each with its hint ----------------------------------------------


def test_cycles_wrong_answers_get_a_hint():
    def last_cycle(*a):                            # SCALE-Sim's number, the last cycle's index
        return fold_cycles(*a) - 1

    def minus_one_per_fold(M, N, K, R, C, df):
        s_r, s_c, t = _split(M, N, K, df)
        folds = -(-s_r // R) * -(-s_c // C)
        return folds * ((0 if df == "os" else R) + R + C + t - 3)

    def transposed_mapping(M, N, K, R, C, df):     # e.g. input-stationary with M on the rows
        s_r, s_c, t = _split(M, N, K, df)
        return -(-s_c // R) * -(-s_r // C) * ((0 if df == "os" else R) + R + C + t - 2)

    def swapped(M, N, K, R, C, df):
        return fold_cycles(M, N, K, C, R, df)

    def ws_for_is(M, N, K, R, C, df):
        return fold_cycles(M, N, K, R, C, {"is": "ws", "ws": "is"}.get(df, df))

    def no_preload(M, N, K, R, C, df):
        return fold_cycles(M, N, K, R, C, df) - (0 if df == "os" else R * fold_cycles_folds(M, N, K, R, C, df))

    def preload_everywhere(M, N, K, R, C, df):
        return fold_cycles(M, N, K, R, C, df) + (R * fold_cycles_folds(M, N, K, R, C, df) if df == "os" else 0)

    def floor_folds(M, N, K, R, C, df):
        s_r, s_c, t = _split(M, N, K, df)
        return max(s_r // R, 1) * max(s_c // C, 1) * ((0 if df == "os" else R) + R + C + t - 2)

    def fractional_folds(M, N, K, R, C, df):       # "a partial fold costs part of a fold"
        s_r, s_c, t = _split(M, N, K, df)
        return round(s_r / R * s_c / C * ((0 if df == "os" else R) + R + C + t - 2))

    def one_fold(M, N, K, R, C, df):
        s_r, s_c, t = _split(M, N, K, df)
        return (0 if df == "os" else R) + R + C + t - 2

    def as_float(*a):
        return float(fold_cycles(*a))

    def wrong_ceil(M, N, K, R, C, df):             # a // b + 1 is one too many when b divides a
        s_r, s_c, t = _split(M, N, K, df)
        return (s_r // R + 1) * (s_c // C + 1) * ((0 if df == "os" else R) + R + C + t - 2)

    for fn, hint in [(last_cycle, "index of the last cycle"), (minus_one_per_fold, "no - 1 per fold"),
                     (transposed_mapping, "the other way round"),
                     (swapped, "rows and cols are swapped"), (ws_for_is, "answer for dataflow"),
                     (no_preload, "preloads the stationary block"), (preload_everywhere, "no preload"),
                     (floor_folds, "not floor"), (fractional_folds, "partial fold costs"),
                     (one_fold, "folds, not one"), (as_float, "return an int")]:
        msg = _fails(teach.check_fold_cycles, fn, seed=7, match="fold cycles")
        assert hint in msg, (fn.__name__, msg)
        assert re.search(r"expected \d+ \((SCALE-Sim's run|folds × the simulator's full fold)\), got", msg) \
            or "float" in msg
    _fails(teach.check_fold_cycles, wrong_ceil, seed=7, match="expected")


def test_the_transposed_mapping_hint_names_input_stationary():
    # the case: input-stationary with M on the rows and K on the columns
    def is_m_on_rows(M, N, K, R, C, df):
        if df != "is":
            return fold_cycles(M, N, K, R, C, df)
        return -(-M // R) * -(-K // C) * (2 * R + C + N - 2)

    msgs = [_fails(teach.check_fold_cycles, is_m_on_rows, seed=s, match="dataflow 'is'") for s in range(6)]
    assert all("'is' puts K" in m and "other way round" in m for m in msgs if "K=" in m)
    assert any("'is' puts K" in m for m in msgs)


def test_cycles_are_checked_against_scalesim_and_the_simulator():
    # the expected values are SCALE-Sim's own numbers (+1: it reports the last cycle's index)
    # and the register-level simulator's cycle count: a formula that differs from both by one
    # cycle on a single kind of case is caught
    import json

    doc = json.loads(systolic.SCALESIM_REFERENCE.read_text())
    gemms = {(c["M"], c["N"], c["K"], c["rows"], c["cols"], c["dataflow"]): c["cycles"]
             for c in doc["cases"] if c["kind"] == "gemm"}
    seen = []

    def spy(*case):
        seen.append(case)
        return fold_cycles(*case)

    for seed in range(5):
        teach.check_fold_cycles(spy, seed=seed)
    from_scalesim = [c for c in seen if c in checks._scalesim_runs()]
    assert len(from_scalesim) >= 5 * 12 and any(c in gemms for c in from_scalesim)
    for case, got in gemms.items():
        assert fold_cycles(*case) == got + 1
    for case in seen:
        if case not in from_scalesim:   # folds × a full fold's length, read from when its last MAC happens
            M, N, K, R, C, df = case
            s_r, s_c, t = _split(M, N, K, df)
            full = {"os": (R, C, t), "ws": (t, C, R), "is": (C, t, R)}[df]
            sim = systolic.simulate(np.ones(full[0:3:2], int), np.ones((full[2], full[1]), int), R, C, df)
            assert -(-s_r // R) * -(-s_c // C) * (sim.last_mac + 1) == fold_cycles(*case)
    ragged = [c for c in from_scalesim if _split(*c[:3], c[5])[0] % c[3] or _split(*c[:3], c[5])[1] % c[4]]
    assert len(ragged) >= 10          # the convention for ragged folds rests on SCALE-Sim's own runs

    def off_when_ragged(M, N, K, R, C, df):        # right except where a fold is partial
        s_r, s_c, _ = _split(M, N, K, df)
        return fold_cycles(M, N, K, R, C, df) + (1 if s_r % R or s_c % C else 0)

    for seed in range(3):
        _fails(teach.check_fold_cycles, off_when_ragged, seed=seed, match="expected")


def test_a_hint_names_a_mistake_only_when_that_mistake_gives_every_answer():
    def preload_cols(M, N, K, R, C, df):          # the review's case: 71 for 72 on one fold looked like "last cycle"
        s_r, s_c, t = _split(M, N, K, df)
        return fold_cycles_folds(M, N, K, R, C, df) * ((0 if df == "os" else C) + R + C + t - 2)

    def ragged_short_pre(M, N, K, R, C, df):      # a ragged fold preloads only its mapped rows
        s_r, s_c, t = _split(M, N, K, df)
        total = 0
        for i in range(-(-s_r // R)):
            for _ in range(-(-s_c // C)):
                total += (0 if df == "os" else min(R, s_r - i * R)) + R + C + t - 2
        return total

    def unknown(M, N, K, R, C, df):               # a mistake the checker does not know
        return fold_cycles(M, N, K, R, C, df) + (7 if df == "ws" and M % 2 else 0)

    for seed in range(12):
        for fn, right in ((preload_cols, "not cols"), (ragged_short_pre, "ragged edge costs as much")):
            msg = _fails(teach.check_fold_cycles, fn, seed=seed, match="Hint")
            assert right in msg, (fn.__name__, seed, msg)
        msg = _fails(teach.check_fold_cycles, unknown, seed=seed, match="Hint")
        assert re.search(r"Hint: one fold here costs \d+ cycles and there are \d+ folds", msg), msg


def fold_cycles_folds(M, N, K, R, C, df):
    s_r, s_c, _ = _split(M, N, K, df)
    return -(-s_r // R) * -(-s_c // C)


def test_busy_wrong_answers_get_a_hint():
    def no_preload(M, K, N):
        return ws_busy(M, K, N)[K:]

    def late_by_one(M, K, N):
        return np.roll(ws_busy(M, K, N), 1)

    def n_by_k(M, K, N):
        return ws_busy(M, N, K)

    assert "preload are missing" in _fails(teach.check_ws_busy, no_preload, seed=4, match="shape")
    assert "one cycle off" in _fails(teach.check_ws_busy, late_by_one, seed=4, match="in cycle")
    _fails(teach.check_ws_busy, n_by_k, seed=4, match="expected")


def test_shape_wrong_answers_get_a_hint():
    def square(M, N, K, pes, df):
        r = 2 ** (pes.bit_length() // 2)
        return r, pes // r

    def transposed(*a):
        r, c = best_shape(*a)
        return c, r

    def not_a_split(M, N, K, pes, df):
        return 3, pes // 3

    _fails(teach.check_best_shape, square, seed=5, match="takes")
    assert "swapped" in _fails(teach.check_best_shape, transposed, seed=5, match="takes")
    _fails(teach.check_best_shape, not_a_split, seed=5, match="not a power-of-two shape")


def test_a_search_that_skips_the_extreme_shapes_fails_on_every_seed():
    # issue 20: without fixed cases, a search over 2×(P/2) … (P/2)×2 passed 166 of 200 seeds
    def inner_only(M, N, K, pes, df):
        shapes = [(2**e, pes // 2**e) for e in range(1, pes.bit_length() - 1)]
        return min(shapes, key=lambda s: fold_cycles(M, N, K, *s, df))

    for seed in range(40):
        _fails(teach.check_best_shape, inner_only, seed=seed, match="takes")
    for seed in range(20):                  # each fixed case has one winner, at an end of the range
        ends = set()
        for M, N, K, pes, df in checks._extreme_shape_cases(np.random.default_rng(seed)):
            table = {(2**e, pes // 2**e): fold_cycles(M, N, K, 2**e, pes // 2**e, df)
                     for e in range(pes.bit_length())}
            winners = [s for s, v in table.items() if v == min(table.values())]
            assert winners in ([(1, pes)], [(pes, 1)]), ((M, N, K, pes, df), winners)
            ends.add((df, winners[0][0] == 1))
        assert len(ends) == 6                 # both ends, every dataflow


def test_a_search_with_the_preload_wrong_fails_on_every_seed():
    # the review's attack: OS with a preload passed 11 of 60 seeds, WS/IS without one 4 of 60
    def search(preload):
        def best(M, N, K, pes, df):
            def cycles(R, C):
                s_r, s_c, t = _split(M, N, K, df)
                return -(-s_r // R) * -(-s_c // C) * (preload(R, C, df) + R + C + t - 2)
            return min([(2**e, pes // 2**e) for e in range(pes.bit_length())], key=lambda s: cycles(*s))
        return best

    wrong = [lambda R, C, df: R, lambda R, C, df: 0, lambda R, C, df: 0 if df == "os" else C,
             lambda R, C, df: C]
    for preload in wrong:
        for seed in range(20):
            _fails(teach.check_best_shape, search(preload), seed=seed, match="takes")
    for seed in range(10):              # each of those cases separates the right preload from a wrong one
        cases = checks._preload_cases(np.random.default_rng(seed))
        assert sorted(c[4] for c in cases) == ["is", "is", "os", "os", "ws", "ws"]


def test_prediction_wrong_answers_get_a_hint(sim_pw):
    def percent(*a):
        return 100 * predict(*a)

    def mapping_efficiency(M, N, K, R, C, df):     # PEs that hold data, not PEs that work
        s_r, s_c, _ = _split(M, N, K, df)
        return min(s_r, R) * min(s_c, C) / (R * C)

    def no_preload(M, N, K, R, C, df):
        return predict(M, N, K, R, C, "os" if df != "os" else df) if df == "os" else \
            M * N * K / (R * C * (fold_cycles(M, N, K, R, C, df) - R * fold_cycles_folds(M, N, K, R, C, df)))

    _fails(teach.check_utilization_prediction, percent, sim_pw, match="not a percentage")
    for fn in (mapping_efficiency, no_preload):
        msg = _fails(teach.check_utilization_prediction, fn, sim_pw, match="Where the cycles went")
        assert "the simulator measured 2.01%" in msg and "preload 128 + fill 127 + stream 16 + drain 127" in msg


# ---- shortcuts ----------------------------------------------------------------------------------


def test_npukits_answers_are_refused_under_any_name(sim_pw):
    from npukit.accelerator import model_table as mt
    from npukit.figures import systolic as figs
    from npukit.systolic import estimate as est
    from npukit.systolic import simulate as sim

    def by_estimate(M, N, K, R, C, df):
        return est(M, N, K, R, C, df).cycles

    def by_import_inside(M, N, K, R, C, df):
        import npukit.systolic as s

        return s.estimate(M, N, K, R, C, df).cycles

    def by_model_table(M, N, K, R, C, df):
        return mt([accelerator.Layer("x", M, N, K)], R, C, df).layers[0].estimate.cycles

    def by_simulate(M, K, N):
        return sim(np.ones((M, K), int), np.ones((K, N), int), K, N, "ws").busy

    def by_figure(M, K, N):
        fig = figs.busy_figure({"x": systolic.simulate(np.ones((M, K), int), np.ones((K, N), int), K, N, "ws")})
        return np.asarray(fig.data[0].y)

    def by_sweep(M, N, K, pes, df):
        best = min(accelerator.aspect_sweep([accelerator.Layer("x", M, N, K)], pes, df), key=lambda x: x[2])
        return best[:2]

    def by_estimate_prediction(M, N, K, R, C, df):
        return systolic.estimate(M, N, K, R, C, df).utilization

    _fails(teach.check_fold_cycles, by_estimate, match="npukit.systolic.estimate")
    _fails(teach.check_fold_cycles, by_import_inside, match="npukit.systolic.estimate")
    _fails(teach.check_fold_cycles, by_model_table, match="npukit.accelerator")
    _fails(teach.check_ws_busy, by_simulate, match="npukit.systolic")
    _fails(teach.check_ws_busy, by_figure, match="npukit.systolic")
    _fails(teach.check_best_shape, by_sweep, match="npukit.accelerator")
    _fails(teach.check_utilization_prediction, by_estimate_prediction, sim_pw, match="npukit.systolic")


def test_the_checkers_references_are_refused(sim_pw):
    from npukit.teach.systolic import _cycles as reference

    def by_reference(*a):
        return reference(*a)

    def by_simulator_reference(*a):
        return checks._fresh_cycles(*a)

    def by_scalesim_table(*a):
        return checks._scalesim_runs().get(a, 0) + 1

    def by_busy_reference(M, K, N):
        return checks._ws_busy(M, K, N)

    def by_utilization_reference(*a):
        return checks._utilization(*a)

    _fails(teach.check_fold_cycles, by_reference, match="npukit.teach.systolic._cycles")
    _fails(teach.check_fold_cycles, by_simulator_reference, match="npukit.teach.systolic")
    _fails(teach.check_fold_cycles, by_scalesim_table, match="npukit.teach.systolic")
    _fails(teach.check_ws_busy, by_busy_reference, match="npukit.teach.systolic")
    _fails(teach.check_utilization_prediction, by_utilization_reference, sim_pw, match="npukit.teach.systolic")


def test_a_lookup_table_from_failure_messages_does_not_pass():
    table: dict = {}

    def lookup(*case):
        return table.get(case, 0)

    pattern = re.compile(r"M=(\d+), N=(\d+), K=(\d+) on a (\d+)×(\d+) array \(rows × cols\), dataflow '(\w+)'"
                         r".*?expected (\d+)")

    def harvest(**kwargs) -> bool:
        try:
            teach.check_fold_cycles(lookup, **kwargs)
            return True
        except CheckFailed as e:
            M, N, K, R, C, df, want = pattern.search(str(e)).groups()
            table[(int(M), int(N), int(K), int(R), int(C), df)] = int(want)
            return False

    # with the seed held fixed, 24 failures fill the table and the 25th run passes ...
    assert not any(harvest(seed=99) for _ in range(24)) and harvest(seed=99)
    # ... but a run draws new cases: the same table, grown over 60 more runs, still fails the next one
    table.clear()
    for _ in range(60):
        harvest()
    assert len(table) >= 55
    with pytest.raises(CheckFailed):
        teach.check_fold_cycles(lookup)


def test_each_call_draws_new_cases_and_a_seed_repeats_them():
    seen = []

    def spy(*case):
        seen.append(case)
        return fold_cycles(*case)

    for seed in (None, None, 123, 123):
        teach.check_fold_cycles(spy, seed=seed)
    runs = [tuple(seen[i * 24:(i + 1) * 24]) for i in range(4)]
    assert runs[0] != runs[1] and runs[2] == runs[3]
    assert len({c[5] for c in runs[0]}) == 3                       # every dataflow
    msg = _fails(teach.check_fold_cycles, lambda *a: 0, match="seed")
    seed = int(re.search(r"seed=(\d+)", msg).group(1))
    assert _fails(teach.check_fold_cycles, lambda *a: 0, seed=seed, match="seed").split("\n")[0] == msg.split("\n")[0]


def test_the_space_of_cases_is_large():
    cases: list = []

    def spy(*case):
        cases.append(case)
        return fold_cycles(*case)

    for seed in range(10):
        teach.check_fold_cycles(spy, seed=seed)
    runs = checks._scalesim_runs()
    fresh = [c for c in cases if c not in runs]
    assert len(set(fresh)) >= 115 and len(fresh) >= 115             # the simulator's cases hardly repeat
    assert len({c for c in cases if c in runs}) >= 80                # SCALE-Sim's 252 runs, 12 a draw
    busy = set()

    def spy_busy(*case):
        busy.add(case)
        return ws_busy(*case)

    for seed in range(10):
        teach.check_ws_busy(spy_busy, seed=seed)
    assert len(busy) >= 190 and max(m for m, _, _ in busy) > 40


def test_a_prediction_copied_from_the_measurement_fails(sim_pw):
    def copied(M, N, K, rows, cols, df):            # the plain fields of the measured run
        return sim_pw.macs / (sim_pw.rows * sim_pw.cols * (sum(sim_pw.fold_cycles) - 1))

    def copied_number(*a):
        return 0.0202

    for fn in (copied, copied_number):
        msg = _fails(teach.check_utilization_prediction, fn, sim_pw, match="right for the measured layer")
        assert "must follow from the sizes" in msg and "Where the cycles went" in msg


def test_an_edited_measurement_is_refused(sim_pw):
    import copy

    fake = copy.deepcopy(sim_pw)
    fake.macs = fake.macs * 3                          # "measure" a different layer by hand
    _fails(teach.check_utilization_prediction, predict, fake, match="not an unchanged result")
    fake = copy.deepcopy(sim_pw)
    fake.fold_cycles = [100]
    _fails(teach.check_utilization_prediction, predict, fake, match="not an unchanged result")
    with pytest.raises(TypeError, match="measured"):
        teach.check_utilization_prediction(predict, {"utilization": 0.02})


def test_messages_show_one_case_not_the_answer_table(sim_pw):
    msg = _fails(teach.check_fold_cycles, lambda *a: -5, match="expected")
    assert msg.count("expected") == 1 and len(msg) < 600
    msg = _fails(teach.check_ws_busy, lambda M, K, N: np.zeros(2 * K + N + M - 2, int), match="in cycle")
    assert msg.count("expected") == 1 and "[" not in msg and len(msg) < 600
    msg = _fails(teach.check_best_shape, lambda *a: (2, a[3] // 2), match="takes")
    assert msg.count("cycles") <= 2 and len(msg) < 600


def test_unfinished_exercises_are_one_line(sim_pw):
    def todo(*a):
        raise NotImplementedError()

    for checker, extra in ((teach.check_fold_cycles, ()), (teach.check_best_shape, ()), (teach.check_ws_busy, ()),
                           (teach.check_utilization_prediction, (sim_pw,))):
        with pytest.raises(NotAttempted, match="not attempted yet"):
            checker(todo, *extra)


@pytest.mark.xfail(reason="teach.core.learner_call watches only the calling thread (sys.setprofile): npukit's "
                          "answer run in another thread is not seen. A teach.core matter, reported.", strict=False)
def test_a_thread_does_not_hide_npukits_answer():
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(1)

    def in_a_thread(M, N, K, R, C, df):
        return pool.submit(lambda: systolic.estimate(M, N, K, R, C, df).cycles).result()

    _fails(teach.check_fold_cycles, in_a_thread, match="npukit.systolic")
