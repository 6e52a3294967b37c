"""Lab 7's checkers, attacked the way a student would.

* right answers pass, on several seeds, and so do the lab's own solutions;
* typical wrong answers fail with the failing case, the expected and returned
  value, and a hint that names the mistake (elements for bytes, host I/O
  counted, the inverse permutation, a view for a copy, an output not copied,
  no overlap, a prediction that ignores the streams);
* shortcuts fail: calling npukit's own answers under any name
  (``npukit.contract.partition``, ``npukit.layouts.convert``,
  ``npukit.deploy.AsyncPipeline``) or the checker's references, a lookup
  table filled from failure messages, a "prediction" that is the measured
  number, a measurement edited after the run, reaching past the recorded
  compiled model;
* the lab's check cells are locked nbgrader cells that call the checkers,
  and the student edition runs top to bottom with only the check cells of
  unfinished exercises failing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from support import FakeRounds, swapped

from npukit import contract, deploy, layouts, teach
from npukit.models import CameraNet
from npukit.teach import deploy as checks
from npukit.teach import retime
from npukit.teach.core import CheckFailed, NotAttempted

LAB = Path(__file__).resolve().parent.parent / "labs" / "07_deploy.ipynb"


# ---- answers written here, from the exercise statements (not from npukit) ------------------------


def crossing_bytes(model, npu_ops):
    inferred = onnx.shape_inference.infer_shapes(model)
    size = {vi.name: 4 * int(np.prod([d.dim_value for d in vi.type.tensor_type.shape.dim]))
            for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    nodes = list(model.graph.node)
    return sum(size[a.output[0]] for a, b in zip(nodes, nodes[1:]) if (a.op_type in npu_ops) != (b.op_type in npu_ops))


def reorder(x, src, dst):
    return np.ascontiguousarray(np.transpose(x, [src.index(c) for c in dst]))


def double_buffered(compiled, images):
    requests = [compiled.create_infer_request(), compiled.create_infer_request()]
    out, owner = [None] * len(images), [None, None]
    for i, image in enumerate(images):
        r = i % 2
        if owner[r] is not None:
            requests[r].wait()
            out[owner[r]] = requests[r].get_output_tensor(0).data.copy()
        requests[r].start_async({0: image})
        owner[r] = i
    for r in (0, 1):
        if owner[r] is not None:
            requests[r].wait()
            out[owner[r]] = requests[r].get_output_tensor(0).data.copy()
    return out


def predict_speedup(streams, host_ms, infer_ms):
    one = host_ms + infer_ms
    return one / max(host_ms, one / 2, infer_ms / min(streams, 2))


@pytest.fixture(scope="module")
def measured():
    """A THROUGHPUT-compiled small CameraNet and AsyncPipeline runs with one and two requests."""
    compiled = deploy.compile(CameraNet(stem=16, blocks=((32, 1), (64, 2)), size=32).to_onnx(), hint="THROUGHPUT")
    frames = [np.random.default_rng(i).random((1, 3, 32, 32), dtype=np.float32) for i in range(16)]

    def work(frame):
        import time

        time.sleep(0.0005)

    runs = {}
    for n in (1, 2):
        pipe = deploy.AsyncPipeline(compiled, n)
        pipe.run(frames[:4])
        runs[n] = [pipe.run(frames, work=work) for _ in range(3)]
    return compiled, runs


def _pipelines(host_ms, infer_ms, speedup, frames=16, bursts=None, made=None):
    """The check's two pipelines, faked: one request fills for ``host_ms`` then infers for ``infer_ms`` per job,
    two requests run the same jobs ``speedup`` times as fast (the jobs their runs record, on a fake clock).
    ``bursts`` go to :class:`FakeRounds`; ``made``, a dict, receives the jobs recorded."""
    one = frames * (host_ms + infer_ms) / 1e3

    def make(compiled, host_s):
        jobs = {1: [], 2: []}

        def record(n):
            def on_call(start, end):
                step = (end - start) / frames
                jobs[n].append([deploy.Job(i, 0 if n == 1 else i % 2, i * step, i * step + host_ms / 1e3 * (n == 1),
                                           (i + 1) * step) for i in range(frames)])
            return on_call

        fake = FakeRounds({"1 request": one, "2 requests": one / speedup}, bursts=bursts,
                          on_call={"1 request": record(1), "2 requests": record(2)})
        if made is not None:
            made["jobs"] = jobs
        return fake.fns, jobs, fake.clock
    return make


def _like(measured, speedup=None):
    """The check's rounds faked with the lab's facts, and the model's speed-up for them × 0.9 unless given."""
    compiled, runs = measured
    streams, host, infer, _ = checks._facts(compiled, runs)
    return swapped(checks, "_pipelines", _pipelines(host, infer, speedup or 0.9 * predict_speedup(streams, host, infer)))


def _fails(checker, fn, *args, match, **kwargs) -> str:
    with pytest.raises(CheckFailed, match=match) as info:
        checker(fn, *args, **kwargs)
    return str(info.value)


# ---- right answers pass ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, None])
def test_right_answers_pass(seed, capsys):
    teach.check_crossing_bytes(crossing_bytes, seed=seed)
    teach.check_reorder(reorder, seed=seed)
    teach.check_double_buffered(double_buffered, seed=seed)
    assert capsys.readouterr().out.count("✓") == 3


def test_the_labs_own_solutions_pass(measured, capsys):
    nb = json.loads(LAB.read_text(encoding="utf-8"))
    env: dict = {"np": np, "onnx": onnx}
    for cell in nb["cells"]:
        if "solution" in cell["metadata"].get("tags", []):
            exec("".join(cell["source"]), env)
    teach.check_crossing_bytes(env["crossing_bytes"], seed=11)
    teach.check_reorder(env["reorder"], seed=11)
    teach.check_double_buffered(env["double_buffered"], seed=11)
    compiled, runs = measured
    with _like(measured):
        teach.check_speedup_prediction(env["predict_speedup"], compiled, runs, seed=11)
    assert capsys.readouterr().out.count("✓") == 4


def test_a_second_block_of_rounds_reads_the_facts_of_every_timed_run(measured, capsys):
    """Rounds too noisy to judge get a second block (npukit.measure.in_blocks): the facts come from the runs
    of all 30 timed rounds, the one warm-up run before them left out (the check reads the last c.rounds)."""
    compiled, runs = measured
    streams, host, infer, _ = checks._facts(compiled, runs)
    made: dict = {}
    noisy_first = (1.0,) + (0.5, 2.0) * 7 + (0.5,) + (1.0,) * 30     # the warm-up, 15 noisy rounds, 15 quiet ones
    fake = _pipelines(host, infer, 0.9 * predict_speedup(streams, host, infer), bursts={"2 requests": noisy_first},
                      made=made)
    with swapped(checks, "_pipelines", fake):
        teach.check_speedup_prediction(predict_speedup, compiled, runs)
    out = capsys.readouterr().out
    assert "✓" in out and "30 interleaved rounds" in out, out
    assert [len(made["jobs"][n]) for n in (1, 2)] == [1 + 30, 1 + 30]   # one warm-up run each, no calibration


def test_a_good_prediction_passes_and_a_wild_one_is_explained(measured, capsys):
    compiled, runs = measured
    with _like(measured):
        teach.check_speedup_prediction(predict_speedup, compiled, runs)
        assert "✓" in capsys.readouterr().out
        streams, host, infer, _ = checks._facts(compiled, runs)

        def wild(s, h, t):   # ten times the model for this run's facts (the rounds' are within 5 %), right elsewhere
            near = s == streams and np.allclose((h, t), (host, infer), rtol=0.05)
            return predict_speedup(s, h, t) * (10 if near else 1)

        msg = _fails(teach.check_speedup_prediction, wild, compiled, runs, match="more than 40% apart")
    assert "stream(s)" in msg and "host-and-streams model gives" in msg and "fill" in msg


def test_the_speed_up_is_graded_against_the_check_s_rounds_not_the_lab_s(measured, capsys):
    """The lab's runs say one speed-up; the check's own rounds another: the prediction meets the rounds'."""
    compiled, runs = measured
    streams, host, infer, lab = checks._facts(compiled, runs)
    with _like(measured, speedup=2 * lab):
        _fails(teach.check_speedup_prediction, lambda s, h, t: lab if (s, h, t) == (streams, host, infer) else
               predict_speedup(s, h, t), compiled, runs, match="more than 40% apart")


def test_the_check_times_the_two_pipelines_itself(measured):
    compiled, _ = measured
    fns, jobs, clock = checks._pipelines(compiled, 1e-4, frames=6)
    assert list(fns) == ["1 request", "2 requests"] and clock is retime.WALL_TIME
    for f in fns.values():
        f()
    assert [len(jobs[1]), len(jobs[2])] == [1, 1] and {j.request for j in jobs[2][0]} == {0, 1}


# ---- typical wrong answers, each with its hint --------------------------------------------------


def test_crossing_bytes_wrong_answers_get_a_hint():
    def elements(model, ops):
        return crossing_bytes(model, ops) // 4

    def float64(model, ops):
        return 2 * crossing_bytes(model, ops)

    def with_host_io(model, ops):
        nodes = list(model.graph.node)
        inferred = onnx.shape_inference.infer_shapes(model)
        dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        out = [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim]
        return (crossing_bytes(model, ops) + 4 * int(np.prod(dims)) * (nodes[0].op_type in ops)
                + 4 * int(np.prod(out)) * (nodes[-1].op_type in ops))

    def every_edge(model, ops):
        return crossing_bytes(model, frozenset()) + sum(
            4 * int(np.prod([d.dim_value for d in vi.type.tensor_type.shape.dim]))
            for vi in onnx.shape_inference.infer_shapes(model).graph.value_info)

    def as_float(model, ops):
        return float(crossing_bytes(model, ops))

    for fn, hint in [(elements, "number of elements"), (float64, "not 8"), (with_host_io, "host I/O"),
                     (every_edge, "not every edge"), (as_float, "as an int")]:
        msg = _fails(teach.check_crossing_bytes, fn, seed=3, match="crossing bytes")
        assert hint in msg, (fn.__name__, msg)
        assert "expected" in msg and "seed=3" in msg


def test_reorder_wrong_answers_get_a_hint():
    def inverse(x, src, dst):
        return np.ascontiguousarray(np.transpose(x, [dst.index(c) for c in src]))

    def view(x, src, dst):
        return np.transpose(x, [src.index(c) for c in dst])

    def relabel(x, src, dst):
        return x.reshape([x.shape[src.index(c)] for c in dst])

    assert "inverse permutation" in _fails(teach.check_reorder, inverse, seed=5, match="reorder")
    assert "C-contiguous" in _fails(teach.check_reorder, view, seed=5, match="not C-contiguous")
    assert "reshape only relabels" in _fails(teach.check_reorder, relabel, seed=5, match="element")


def test_double_buffered_wrong_answers_get_a_hint():
    def no_copy(compiled, images):               # the lab's loop without .copy()
        requests = [compiled.create_infer_request(), compiled.create_infer_request()]
        out, owner = [None] * len(images), [None, None]
        for i, image in enumerate(images):
            r = i % 2
            if owner[r] is not None:
                requests[r].wait()
                out[owner[r]] = requests[r].get_output_tensor(0).data
            requests[r].start_async({0: image})
            owner[r] = i
        for r in (0, 1):
            requests[r].wait()
            out[owner[r]] = requests[r].get_output_tensor(0).data
        return out

    def read_while_running(compiled, images):
        r, _ = compiled.create_infer_request(), compiled.create_infer_request()
        r.start_async({0: images[0]})
        return [r.get_output_tensor(0).data.copy()]

    def serial(compiled, images):
        requests = [compiled.create_infer_request(), compiled.create_infer_request()]
        out = []
        for i, image in enumerate(images):
            r = requests[i % 2]
            r.start_async({0: image})
            r.wait()
            out.append(r.get_output_tensor(0).data.copy())
        return out

    def one_request(compiled, images):
        r = compiled.create_infer_request()
        out = []
        for image in images:
            r.start_async({0: image})
            r.wait()
            out.append(r.get_output_tensor(0).data.copy())
        return out

    def restart_running(compiled, images):
        r, _ = compiled.create_infer_request(), compiled.create_infer_request()
        r.start_async({0: images[0]})
        r.start_async({0: images[1]})
        return []

    def whole_model(compiled, images):
        return [compiled(x)[0] for x in images]

    for fn, hint in [(no_copy, "copy an output before its request runs again"), (serial, "never ran at the same time"),
                     (one_request, "exactly two infer requests"), (restart_running, "started again while"),
                     (whole_model, "not compiled(...)"), (read_while_running, "still running: wait()")]:
        assert hint in _fails(teach.check_double_buffered, fn, seed=2, match="double buffered"), fn.__name__


def test_prediction_wrong_answers_get_a_hint(measured):
    compiled, runs = measured
    *facts, speedup = checks._facts(compiled, runs)

    def number(s, h, t):                       # the measured number, whatever the facts
        return speedup

    def ignores_streams(s, h, t):
        return (h + t) / max(h, (h + t) / 2)

    def as_text(s, h, t):
        return "1.5"

    streams, host, infer = facts
    for fn in (number, ignores_streams):     # each right for this run's facts: the fresh situations tell
        with _like(measured, speedup=fn(streams, host, infer)):
            msg = _fails(teach.check_speedup_prediction, fn, compiled, runs, seed=4, match="not from")
        assert "must follow from the facts, not from the measurement" in msg and "seed=" in msg
    _fails(teach.check_speedup_prediction, as_text, compiled, runs, match="positive number")


# ---- shortcuts ------------------------------------------------------------------------------------


def test_npukits_answers_are_refused_under_any_name(measured):
    from npukit.contract import partition as cut
    from npukit.layouts import convert as conv

    def by_partition(model, ops):
        return cut(model, contract.NPUProfile("p", frozenset(ops), dtypes=frozenset({"float32"}))).crossing_bytes

    def by_import_inside(model, ops):
        import npukit.contract as c

        return c.partition(model, c.NPUProfile("p", frozenset(ops), dtypes=frozenset({"float32"}))).crossing_bytes

    def by_shapes(model, ops):                 # chapter 7's private shape helper
        shapes = contract._shapes(model)
        nodes = list(model.graph.node)
        return sum(4 * int(np.prod(shapes[a.output[0]][0])) for a, b in zip(nodes, nodes[1:])
                   if (a.op_type in ops) != (b.op_type in ops))

    def by_convert(x, src, dst):                # chapter 2's layout letters for the checker's a…e
        to_ncdhw = str.maketrans("abcde", "NCDHW")
        return conv(x, src.translate(to_ncdhw), dst.translate(to_ncdhw))

    def by_permutation(x, src, dst):
        to_ncdhw = str.maketrans("abcde", "NCDHW")
        return np.ascontiguousarray(np.transpose(x, layouts.permutation(src.translate(to_ncdhw),
                                                                        dst.translate(to_ncdhw))))

    def by_pipeline(compiled, images):
        pipe = deploy.AsyncPipeline(compiled, 2)
        pipe.run(images)
        return [pipe.outputs[i] for i in range(len(images))]

    _fails(teach.check_crossing_bytes, by_partition, match="npukit.contract")
    _fails(teach.check_crossing_bytes, by_import_inside, match="npukit.contract")
    _fails(teach.check_crossing_bytes, by_shapes, match="npukit.contract._shapes")
    _fails(teach.check_reorder, by_convert, match="npukit.layouts")
    _fails(teach.check_reorder, by_permutation, match="npukit.layouts.permutation")
    _fails(teach.check_double_buffered, by_pipeline, match="npukit.deploy")


def test_the_checkers_references_are_refused(measured):
    compiled, runs = measured

    def by_reference(model, ops):
        nodes = list(model.graph.node)
        sizes = [4] * len(nodes)
        return sum(b for _, b in checks._crossings([n.op_type for n in nodes], ops, sizes))

    def by_model(s, h, t):
        return checks._ideal_speedup(s, h, t)

    _fails(teach.check_crossing_bytes, by_reference, match="npukit.teach.deploy._crossings")
    with _like(measured):
        _fails(teach.check_speedup_prediction, by_model, compiled, runs, match="npukit.teach.deploy._ideal_speedup")


def test_the_recorded_model_hides_the_real_one():
    seen = {}

    def peek(compiled, images):
        seen["attrs"] = {a for a in dir(compiled) if not a.startswith("__")}
        r = compiled.create_infer_request()
        seen["request"] = {a for a in dir(r) if not a.startswith("__")}
        raise NotImplementedError()

    with pytest.raises(NotAttempted):
        teach.check_double_buffered(peek, seed=1)
    assert seen["attrs"] == {"create_infer_request", "input", "output", "inputs", "outputs"}
    assert not any(a.startswith("_") for a in seen["request"])


def test_a_lookup_table_from_failure_messages_does_not_pass():
    table: dict = {}

    def lookup(model, ops):
        return table.get((tuple(n.op_type for n in model.graph.node), ops), 0)

    pattern = re.compile(r"for the chain (.*?) with NPU operators (\[.*?\]): expected (\d+) bytes")

    def harvest(**kwargs) -> bool:
        try:
            teach.check_crossing_bytes(lookup, **kwargs)
            return True
        except CheckFailed as e:
            chain, ops, want = pattern.search(str(e)).groups()
            table[(tuple(chain.split(" → ")), frozenset(eval(ops)))] = int(want)
            return False

    # with the seed held fixed, the table fills and a later run passes ...
    assert not harvest(seed=99) and any(harvest(seed=99) for _ in range(12))
    # ... but a run draws new chains: a table grown over 30 more runs still fails the next one
    table.clear()
    for _ in range(30):
        harvest()
    with pytest.raises(CheckFailed):
        teach.check_crossing_bytes(lookup)


def test_each_call_draws_new_cases_and_a_seed_repeats_them():
    seen = []

    def spy(x, src, dst):
        seen.append((x.shape, src, dst))
        return reorder(x, src, dst)

    for seed in (None, None, 123, 123):
        teach.check_reorder(spy, seed=seed)
    runs = [tuple(seen[i * 14:(i + 1) * 14]) for i in range(4)]
    assert runs[0] != runs[1] and runs[2] == runs[3]
    assert len({len(shape) for shape, _, _ in seen}) >= 3          # ranks 2–5


def test_an_edited_measurement_is_refused(measured):
    import dataclasses

    compiled, runs = measured
    faked = {1: runs[1], 2: [[dataclasses.replace(j, end=j.start + 1e-6) for j in jobs] for jobs in runs[2]]}
    checks._facts(compiled, faked)             # consistent fabricated timestamps still parse ...
    broken = {1: runs[1], 2: [[dataclasses.replace(j, request=5) for j in jobs] for jobs in runs[2]]}
    _fails(teach.check_speedup_prediction, predict_speedup, compiled, broken, match="not an unchanged record")
    with pytest.raises(TypeError, match="runs must be a dict"):
        teach.check_speedup_prediction(predict_speedup, compiled, {"one": 1.0, "two": 1.7})


def test_messages_show_one_case_not_the_answer_table():
    msg = _fails(teach.check_crossing_bytes, lambda m, o: -1, match="expected")
    assert msg.count("expected") == 1 and len(msg) < 700
    msg = _fails(teach.check_reorder, lambda x, s, d: np.zeros_like(np.einsum(f"{s}->{d}", x)), match="element")
    assert msg.count("expected") == 1 and len(msg) < 600


def test_unfinished_exercises_are_one_line(measured):
    compiled, runs = measured

    def todo(*a):
        raise NotImplementedError()

    for checker, extra in ((teach.check_crossing_bytes, ()), (teach.check_reorder, ()),
                           (teach.check_double_buffered, ()), (teach.check_speedup_prediction, (compiled, runs))):
        with pytest.raises(NotAttempted, match="not attempted yet"):
            checker(todo, *extra)


# ---- the speed-up check separates every typical wrong model (issue 20) -------------------------------------

WRONG_SPEEDUPS = {   # name: (model, the separating region that must catch it)
    "(h + t) / max(h, t)": (lambda s, h, t: (h + t) / max(h, t), 1),
    "×2": (lambda s, h, t: 2.0, 0),
    "no speed-up": (lambda s, h, t: 1.0, 1),
    "the streams do not matter": (lambda s, h, t: (h + t) / max(h, (h + t) / 2), 0),
    "min(streams, 2)": (lambda s, h, t: float(min(s, 2)), 2),
    "×streams": (lambda s, h, t: float(s), 2),
    "the host step is hidden": (lambda s, h, t: (h + t) / t, 1),
    "the fills do not take turns": (lambda s, h, t: (h + t) / max((h + t) / 2, t / min(s, 2)), 2),
    "each request needs only its inference": (lambda s, h, t: (h + t) / max(h, t / min(s, 2)), 3),
}


@pytest.mark.parametrize("name", sorted(WRONG_SPEEDUPS))
def test_each_wrong_speedup_model_misses_in_its_region_everywhere(name):
    import itertools

    model, region = WRONG_SPEEDUPS[name]
    streams, (h0, h1), (t0, t1) = checks._SEPARATING[region]
    grid = np.linspace(0, 1, 11)
    for s, a, b in itertools.product(streams, grid, grid):
        h, t = h0 + a * (h1 - h0), t0 + b * (t1 - t0)
        want = checks._ideal_speedup(s, h, t)
        assert abs(model(s, h, t) - want) > 0.25 * want, (name, s, h, t)


@pytest.mark.parametrize("name", sorted(WRONG_SPEEDUPS))
def test_each_wrong_speedup_model_fails_the_check_on_any_seed(name, measured):
    compiled, runs = measured
    model, _ = WRONG_SPEEDUPS[name]
    *facts, speedup = checks._facts(compiled, runs)
    on_this_run = checks._ideal_speedup(*facts)

    def cheat(s, h, t):   # right for this run's facts (as if read from the measurement), the wrong model elsewhere
        # (the check's rounds report the faked facts within a few percent of the lab's)
        near = s == facts[0] and np.allclose((h, t), facts[1:], rtol=0.05)
        return predict_speedup(s, h, t) if near else model(s, h, t)

    with _like(measured, speedup=on_this_run):   # the check's rounds: the lab's facts, the model's speed-up
        for seed in range(5):
            _fails(teach.check_speedup_prediction, cheat, compiled, runs, seed=seed, match="not from")


def test_reorder_accepts_an_uncopied_view_that_already_is_contiguous(capsys):
    """Lab 7, Exercise 2 says so: when only axes of length 1 move, np.ascontiguousarray returns the view uncopied.

    The check must accept that answer, and a case that exercises it must occur (else this test proves nothing).
    """
    shared = []

    def by_ascontiguousarray(x, src, dst):
        got = np.ascontiguousarray(np.transpose(x, [src.index(a) for a in dst]))
        shared.append(np.shares_memory(got, x))
        return got

    for seed in range(40):
        shared.clear()
        teach.check_reorder(by_ascontiguousarray, seed=seed)
        if any(shared):
            break
    assert any(shared), "no seed in 0-39 drew a case where only axes of length 1 move"
    assert capsys.readouterr().out.count("✓") == seed + 1
