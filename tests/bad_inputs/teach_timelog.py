"""Bad inputs for npukit.teach.timelog."""

from badinput import bad

from npukit.teach import timelog as t

CASES = [
    bad(t.record_check, 3, "passed", exc=TypeError, names="check"),
    bad(t.record_check, "check_strides", None, exc=TypeError, names="status"),
    bad(t.read_log, 3, exc=TypeError, names="path"),
    bad(t.read_log, "", names="path"),
    bad(t.minutes, 5, exc=TypeError, names="events"),
    bad(t.minutes, "log.jsonl", exc=TypeError, names="events"),
    bad(t.minutes, [{"event": "cell"}], names="events"),
    bad(t.minutes, [], 0, names="idle"),
    bad(t.minutes, [], "15", exc=TypeError, names="idle"),
    bad(t.find_logs, "submitted/", exc=TypeError, names="paths"),
    bad(t.find_logs, [3], exc=TypeError, names="paths"),
    bad(t.find_logs, [], 5, exc=TypeError, names="name"),
    bad(t.summary, "a.jsonl", {}, exc=TypeError, names="logs"),
    bad(t.summary, [], ["01_tensors"], exc=TypeError, names="checks_by_lab"),
    bad(t.summary, [], {}, idle=-1, names="idle"),
    bad(t.report, {"rows": []}, exc=TypeError, names="result"),
]
