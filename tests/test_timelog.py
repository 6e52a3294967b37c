"""The time-on-task log (npukit.teach.timelog): what a kernel writes with NPUKIT_TIME_LOG set, that a right
answer still passes with it on, that the grader writes none, and a class's minutes from nbgrader's folders.

The expected minutes are worked out here by hand from the events' times; the expected log is what the test
made the kernel do (which cells it ran, which checks passed), not what the module computes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from npukit.teach import __main__ as cli
from npukit.teach import grade, timelog

ROOT = Path(__file__).parent.parent

RIGHT = '''def strides_by_hand(shape, itemsize, order="C"):
    dims = list(shape) if order == "C" else list(shape)[::-1]
    out, step = [], itemsize
    for d in reversed(dims):
        out.append(step)
        step *= d
    out = out[::-1]
    return tuple(out if order == "C" else out[::-1])
'''


def test_minutes_adds_gaps_and_leaves_out_breaks():
    t0 = 1_800_000_000.0
    events = [{"event": "start", "t": t0},
              {"event": "cell", "t": t0 + 120},                                      # +2 min
              {"event": "check", "check": "check_a", "status": "failed", "t": t0 + 300},   # +3
              {"event": "check", "check": "check_a", "status": "not attempted", "t": t0 + 360},  # +1
              {"event": "check", "check": "check_a", "status": "passed", "t": t0 + 600},   # +4: 10 in all
              {"event": "check", "check": "check_a", "status": "failed", "t": t0 + 660},   # after the pass
              {"event": "cell", "t": t0 + 660 + 20 * 60},                            # a 20-minute break
              {"event": "check", "check": "check_b", "status": "passed", "t": t0 + 660 + 21 * 60}]  # +1
    m = timelog.minutes(list(reversed(events)), idle=15)       # any order: sorted by time
    assert m["active"] == 12.0                                 # 2 + 3 + 1 + 4 + 1 + 1
    assert m["span"] == 32.0 and m["breaks"] == 1 and m["cells"] == 2
    assert m["passed"] == {"check_a": 10.0, "check_b": 12.0}
    assert m["failed_before"] == {"check_a": 1}                # "not attempted" and after the pass: not counted
    assert timelog.minutes(events, idle=30)["active"] == 32.0  # the same gap, now under the idle limit
    assert timelog.minutes([])["active"] == 0.0


@pytest.mark.parametrize("idle", [0, -1.0, float("nan"), "15", None])
def test_minutes_refuses_a_bad_idle(idle):
    with pytest.raises((ValueError, TypeError), match="idle"):
        timelog.minutes([], idle=idle)


@pytest.mark.parametrize("event", [{"event": "cell"}, {"t": "noon"}, {"t": float("inf")}, {"t": True}, 3])
def test_minutes_refuses_an_event_without_a_time(event):
    with pytest.raises(ValueError, match="events"):
        timelog.minutes([{"t": 0.0}, event])


def test_read_log_skips_lines_that_are_not_events(tmp_path):
    p = tmp_path / timelog.LOG_NAME
    p.write_text('{"event": "cell", "t": 5}\nnot json\n[1, 2]\n{"event": "start", "t": 1}\n{"t": null}\n')
    assert [e["event"] for e in timelog.read_log(p)] == ["start", "cell"]


def _kernel_run(cwd: Path, env: dict, cells: list[str]) -> list[str]:
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name="python3")
    km.kernel_cmd = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    km.start_kernel(cwd=str(cwd), env=env)
    outputs = []
    try:
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=120)
        for src in cells:
            text = []
            kc.execute_interactive(src, timeout=120,
                                   output_hook=lambda m: text.append(m["content"].get("text", "")))
            outputs.append("".join(text))
    finally:
        km.shutdown_kernel(now=True)
    return outputs


def test_a_kernel_logs_cells_and_checks_and_a_right_answer_passes(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NPUKIT_")}
    env[timelog.TIME_LOG_ENV] = timelog.LOG_NAME             # relative: the kernel's folder
    cells = ["from npukit import teach",
             "def strides_by_hand(shape, itemsize, order='C'):\n    return (0,) * len(shape)\n"
             "try:\n    teach.check_strides(strides_by_hand)\nexcept AssertionError:\n    print('refused')",
             RIGHT + "teach.check_strides(strides_by_hand)"]
    out = _kernel_run(tmp_path, env, cells)
    assert "refused" in out[1] and "✓ strides" in out[2], out   # the log on does not trip the seal
    events = timelog.read_log(tmp_path / timelog.LOG_NAME)
    assert [e["event"] for e in events] == ["start", "cell", "check", "cell", "check", "cell"]
    assert [(e["check"], e["status"]) for e in events if e["event"] == "check"] == [
        ("check_strides", "failed"), ("check_strides", "passed")]
    assert all(set(e) <= {"t", "event", "ok", "check", "status"} for e in events)   # times and outcomes only


def test_no_log_without_the_variable(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NPUKIT_")}
    _kernel_run(tmp_path, env, ["from npukit import teach\n" + RIGHT + "teach.check_strides(strides_by_hand)"])
    assert list(tmp_path.iterdir()) == []


def test_the_grader_writes_no_log(tmp_path, monkeypatch):
    log = tmp_path / "grader-log.jsonl"
    monkeypatch.setenv(timelog.TIME_LOG_ENV, str(log))         # set on the instructor's machine, say
    sub = tmp_path / "alice" / "01_tensors.ipynb"
    sub.parent.mkdir()
    sub.write_text((ROOT / "labs" / "01_tensors.ipynb").read_text(encoding="utf-8"), encoding="utf-8")
    (result,) = grade.grade([sub], seed=7)
    assert result["score"] == result["max_score"]
    assert not log.exists()


def _log(path: Path, events: list[tuple[float, str, str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"t": t, "event": e, **({"check": c, "status": s} if c else {})}) + "\n"
                            for t, e, c, s in events))


def test_a_class_in_nbgrader_folders(tmp_path, capsys):
    root = tmp_path / "submitted"
    for i, student in enumerate(["alice", "bob", "carol"]):
        # alice takes 30 min, bob 40, carol 50; each passes check_strides 10 min in, and check_my_batch at the end
        end = 60.0 * (30 + 10 * i)
        cells = [(t, "cell", "", "") for t in range(900, int(end), 300)]      # a cell every 5 minutes
        _log(root / student / "lab01" / timelog.LOG_NAME,
             [(0, "start", "", ""), (300, "cell", "", ""), (600, "check", "check_strides", "passed"), *cells,
              (end, "check", "check_my_batch", "passed" if i < 2 else "failed")])
    _log(root / "dave" / "lab02" / timelog.LOG_NAME, [(0, "start", "", ""), (300, "cell", "", "")])
    (root / "dave" / "lab02" / "02_layouts.ipynb").write_text("{}")   # no check run: the notebook beside it
    result = timelog.summary(timelog.find_logs([root]), grade.checks_by_lab())
    assert {r["lab"] for r in result["rows"]} == {"01_tensors", "02_layouts"}   # by checks; dave by his notebook
    lab1 = result["labs"]["01_tensors"]
    assert lab1["logs"] == 3 and lab1["active"]["median"] == 40.0
    assert (lab1["active"]["q1"], lab1["active"]["q3"], lab1["active"]["max"]) == (35.0, 45.0, 50.0)
    assert lab1["exercises"]["check_strides"] == {"passed": 3, "median": 10.0}
    assert lab1["exercises"]["check_my_batch"] == {"passed": 2, "median": 35.0}
    assert lab1["finished"]["logs"] == 0          # nobody passed every check of lab 1 here
    assert result["labs"]["02_layouts"]["active"]["median"] == 5.0
    assert cli.main(["minutes", str(root)]) == 0
    text = capsys.readouterr().out
    assert "01_tensors        3    40.0" in text and "check_my_batch: passed by 2 of 3" in text
    assert "02_layouts        1     5.0            —" in text     # no middle half from one log
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["minutes", str(empty)]) == 1


def test_find_logs_refuses_a_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="paths"):
        timelog.find_logs([tmp_path / "nowhere"])
    assert timelog.find_logs([tmp_path]) == []


def test_one_folder_for_every_lab_gives_a_row_per_lab(tmp_path):
    """make lab opens every lab in labs/: one log, cut into kernels at their start lines."""
    log = tmp_path / timelog.LOG_NAME
    _log(log, [(0, "start", "", ""), (600, "check", "check_strides", "passed"),          # lab 1: 10 min
               (700, "start", "", ""), (1000, "check", "check_stays_view", "passed"),    # lab 2: 5 min
               (1060, "start", "", ""), (1180, "check", "check_aligned_empty", "failed")])  # lab 1 again: 2
    result = timelog.summary([log], grade.checks_by_lab())
    rows = {r["lab"]: r for r in result["rows"]}
    assert set(rows) == {"01_tensors", "02_layouts"}
    assert rows["01_tensors"]["active"] == 12.0 and rows["02_layouts"]["active"] == 5.0
    assert rows["01_tensors"]["failed_before"] == {"check_aligned_empty": 1}


def test_importing_alone_writes_nothing_and_a_bad_path_never_breaks_a_check(tmp_path):
    """The grader and the minutes command import npukit.teach; a log that cannot be written only warns."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("NPUKIT_")}
    env[timelog.TIME_LOG_ENV] = timelog.LOG_NAME
    code = "import npukit.teach"
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, check=True, timeout=120)
    assert not (tmp_path / timelog.LOG_NAME).exists()
    env[timelog.TIME_LOG_ENV] = str(tmp_path / "no-such-folder" / "log.jsonl")
    code = ("from npukit import teach\n" + RIGHT + "teach.check_strides(strides_by_hand)\n"
            "teach.check_strides(strides_by_hand)\n")
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.count("✓ strides") == 2, done.stdout + done.stderr


def test_an_interrupted_check_is_not_a_failure(tmp_path, monkeypatch):
    from npukit.teach import core

    log = tmp_path / timelog.LOG_NAME
    monkeypatch.setitem(timelog._state, "path", log)     # the log's state is a dict: the seal allows it
    monkeypatch.setitem(timelog._state, "since", None)

    def check_slowly(fn):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        core._recorded(check_slowly)(None)
    assert [(e["check"], e["status"]) for e in timelog.read_log(log)] == [("check_slowly", "interrupted")]
