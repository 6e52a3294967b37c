"""Bad inputs for npukit.teach.variants."""

from badinput import bad

from npukit.teach import variants as v

CASES = [
    bad(v.student, 3, exc=TypeError, names="entered"),
    bad(v.seed, "  ", names="student_id"),
    bad(v.seed, None, names="student_id"),
    bad(v.seed, 7, exc=TypeError, names="student_id"),
    bad(v.variant, "02_layouts", names="lab"),
    bad(v.variant, 5, exc=TypeError, names="lab"),
    bad(v.variant, "05_systolic", 42, exc=TypeError, names="entered"),
    bad(v.of, "99_nothing", "alice", names="lab"),
    bad(v.of, "05_systolic", ["alice"], exc=TypeError, names="student_id"),
    bad(v.describe, {"tag": "public"}, exc=TypeError, names="v"),
    bad(v.submission_student, 3, exc=TypeError, names="path"),
    bad(v.submission_student, "a/b.ipynb", 5, exc=TypeError, names="root"),
    bad(v.submission_student, "a/b/c.ipynb", "elsewhere", names="root"),
    bad(v.name_disagrees, 3, "05_systolic", "alice", exc=TypeError, names="path"),
    bad(v.name_disagrees, "a/b.ipynb", None, "alice", exc=TypeError, names="lab"),
    bad(v.name_disagrees, "a/b.ipynb", "05_systolic", None, exc=TypeError, names="student_id"),
    bad(v.Variant, "05_systolic", "alice", "public", {}, "abc", exc=ValueError, names="disagree"),
    bad(v.Variant, "05_systolic", None, "somewhere", {}, "public", exc=ValueError, names="source"),
    bad(v.Variant, "05_systolic", None, "public", [], "public", exc=TypeError, names="numbers"),
]
