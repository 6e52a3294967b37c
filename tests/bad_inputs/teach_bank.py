"""Bad inputs for npukit.teach.bank (the question bank and its GIFT export)."""

from badinput import bad

from npukit.teach import bank

Q = bank.get("ch1-c-stride")
C = bank.get("ch1-fancy-index")
F = bank.get("ch6-quantize")
_OPTS = C.options
_P = dict(Q.params)

CASES = [
    bad(bank.questions, "9", names="unit"),
    bad(bank.questions, 1, names="unit"),
    bad(bank.get, "no-such-question", names="id"),
    bad(bank.get, 3, exc=TypeError, names="id"),
    bad(bank.to_gift, [], names="questions"),
    bad(bank.to_gift, "ch1-c-stride", exc=TypeError, names="questions"),
    bad(bank.to_gift, [Q, "x"], exc=TypeError, names="questions[1]"),
    bad(bank.to_gift, 3, exc=TypeError, names="questions"),
    bad(bank.to_gift, [Q], seed=-1, names="seed"),
    bad(bank.to_gift, [Q], seed=1.5, exc=TypeError, names="seed"),
    bad(bank.to_gift, [Q], seed=True, exc=TypeError, names="seed"),
    bad(bank.to_gift, [Q], title="a/b", names="title"),
    bad(bank.to_gift, [Q], title=3, exc=TypeError, names="title"),
    bad(bank.Question, "x", "9", 1, "choice", "t", names="unit"),
    bad(bank.Question, "x", "1", 9, "choice", "t", names="objective"),
    bad(bank.Question, "x", "1", 0, "choice", "t", names="objective"),
    bad(bank.Question, "x", "1", 1.0, "choice", "t", exc=TypeError, names="objective"),
    bad(bank.Question, "x", "1", 1, "essay", "t", names="kind"),
    bad(bank.Question, 7, "1", 1, "choice", "t", exc=TypeError, names="id"),
    bad(bank.Question, "x", "1", 1, "choice", "t", options=_OPTS[1:], names="one right option"),
    bad(bank.Question, "x", "1", 1, "numeric", "t", names="numeric question needs"),
    bad(bank.Question, "x", "1", 1, "short", "t", names="model answer and a rubric"),
    bad(Q.instance, {"shape": (2, 3)}, names="params"),
    bad(Q.instance, [("shape", (8, 32, 32, 3))], exc=TypeError, names="params"),
    bad(Q.instance, {**_P, "order": "C"}, names="params"),
    bad(Q.instance, {**_P, "axis": 1.5}, exc=TypeError, names="params['axis']"),
    bad(Q.instance, {**_P, "axis": True}, exc=TypeError, names="params['axis']"),
    bad(Q.instance, {**_P, "shape": (8, 32)}, names="params['shape']"),
    bad(Q.instance, {**_P, "shape": "8, 32, 32, 3"}, exc=TypeError, names="params['shape']"),
    bad(Q.instance, {**_P, "shape": (8, 32, 32, 3.0)}, exc=TypeError, names="params['shape'][3]"),
    bad(Q.instance, {**_P, "dtype": "complex64"}, names="params"),
    bad(Q.instance, {**_P, "axis": 7}, names="params"),
    bad(F.instance, {**F.params, "x": float("nan")}, names="params['x']"),
    bad(F.instance, {**F.params, "s": "0.5"}, exc=TypeError, names="params['s']"),
    bad(F.instance, {**F.params, "s": 0.0}, names="params"),
    bad(C.instance, names="instance"),
    bad(Q.variant, 3, exc=TypeError, names="rng"),
]
