"""Per-student variants: the numbers of a lab's numeric question, drawn from the student's id.

A chapter's numeric exercise has its solution in a public dropdown, so an
assigned copy of it has an answer anyone can look up. A *variant* gives each
student their own numbers (a layer's sizes, an array's shape) for one
question of a lab, from a seed derived from their student id; the grader
computes each student's expected answer from the same id, so a right
answer passes for its own id only. Without an id the lab shows its public
numbers, the ones the book's worked solution uses.

Which id is used, first match wins:

1. **nbgrader's student id**, when nbgrader autogrades (it sets
   ``NBGRADER_EXECUTION=autograde`` and runs the notebook in
   ``autograded/<student_id>/<assignment>/``, its default directory
   structure): the name of that folder's parent;
2. **the course grader's student**: the folder the submission was collected
   in, or the instructor's explicit mapping (``python -m npukit.teach grade``
   sets ``NPUKIT_STUDENT`` for both of its processes; see
   :func:`submission_student`), or an id an instructor sets in that variable.
   Never the file's name, which the student chooses;
3. **the name the student enters** in the lab's first code cell
   (``STUDENT_ID = "…"``), passed to :func:`variant`;
4. none: the public numbers.

Ids are compared with surrounding spaces removed and case folded
(``" Alice "`` is ``"alice"``). While working, a student who enters the id
their instructor grades under sees the numbers they will be graded on.

See the instructor guide, "Per-student variants" (chapters/instructor.md).
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .. import _check

__all__ = ["STUDENT_ENV", "Variant", "LABS", "student", "seed", "variant", "of", "submission_student", "name_disagrees",
           "describe"]

#: The environment variable the course grader sets to the submission's student.
STUDENT_ENV = "NPUKIT_STUDENT"


@dataclass(frozen=True)
class Variant:
    """One student's numbers for one lab's numeric question.

    ``student`` is the normalized id (None for the public numbers),
    ``source`` says where it came from (``"nbgrader"``, ``"grader"``,
    ``"entered"``, ``"public"``), ``numbers`` the question's values and
    ``tag`` a short name of the variant (``"public"`` or six hex digits of
    the seed).
    """

    lab: str
    student: str | None
    source: str
    numbers: dict = field(hash=False)
    tag: str
    entered: str = ""

    def __post_init__(self) -> None:
        _check.text(self.lab, "lab")
        _check.text(self.student, "student", optional=True)
        _check.one_of(self.source, "source", ("nbgrader", "grader", "entered", "public"))
        _check.instance(self.numbers, "numbers", dict)
        _check.text(self.tag, "tag")
        _check.text(self.entered, "entered")
        if (self.student is None) != (self.source == "public") or (self.student is None) != (self.tag == "public"):
            raise ValueError(f"student, source and tag disagree: a public variant has no student and tag 'public', "
                             f"got student={self.student!r}, source={self.source!r}, tag={self.tag!r}")

    def __getattr__(self, name: str) -> Any:
        numbers = object.__getattribute__(self, "numbers")
        if name in numbers:
            return numbers[name]
        raise AttributeError(name)

    def describe(self) -> str:
        """The variant in one line: its tag and its numbers (the grader's CSV column)."""
        return describe(self)


def _normal(student_id: Any, name: str = "student_id") -> str | None:
    if student_id is None:
        return None
    text = _check.text(student_id, name).strip().casefold()
    return text or None


def _nbgrader_student() -> str | None:
    if os.environ.get("NBGRADER_EXECUTION") != "autograde":
        return None
    here = pathlib.Path.cwd()
    return here.parent.name if here.parent.parent.name == "autograded" else None


def student(entered: Any = "") -> tuple[str | None, str]:
    """The student id in force and where it came from, in the order of the module docstring.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("NPUKIT_STUDENT", None) and None
    >>> student("  Alice ")
    ('alice', 'entered')
    >>> student("")
    (None, 'public')
    """
    found = _nbgrader_student()
    if found:
        return _normal(found), "nbgrader"
    env = _normal(os.environ.get(STUDENT_ENV) or None)
    if env:
        return env, "grader"
    mine = _normal(entered if entered is not None else "", "entered")
    return (mine, "entered") if mine else (None, "public")


def seed(student_id: str) -> int:
    """The variant seed of a (normalized) student id: 64 bits of its SHA-256.

    Examples
    --------
    >>> seed("alice") == seed(" ALICE ")
    True
    """
    norm = _normal(student_id)
    if norm is None:
        raise ValueError("student_id must not be empty")
    return int.from_bytes(hashlib.sha256(f"npukit-variant:{norm}".encode()).digest()[:8], "big")


# ---- the labs' varied questions ---------------------------------------------------------------
# Each entry: (public numbers, a function drawing a student's numbers from a generator).

def _systolic_public() -> dict:
    # CameraNet's block3.pw (M = 16 pixels, N = 128 filters, K = 64 channels) on a 32×32 weight-stationary
    # array: the public worked example of lab 5's exercise 5 (its solution shows the arithmetic).
    return {"name": "block3.pw", "M": 16, "N": 128, "K": 64, "rows": 32, "cols": 32, "dataflow": "ws"}


def _systolic_draw(rng: np.random.Generator) -> dict:
    side = int(rng.choice([4, 5, 6, 7, 8, 10, 12, 14]))            # a feature map side: M = side²
    N = int(rng.choice([24, 32, 40, 48, 64, 80, 96, 112, 128, 160]))
    K = int(rng.choice([16, 24, 32, 40, 48, 64, 80, 96, 128]))
    rows = int(rng.choice([8, 16, 32, 64]))
    cols = int(rng.choice([8, 16, 32, 64]))
    return {"name": f"a pointwise layer on a {side}×{side} map", "M": side * side, "N": N, "K": K,
            "rows": rows, "cols": cols, "dataflow": "ws"}


def _tensors_public() -> dict:
    """Chapter 1's exercise "Strides by hand" (ex-ch1-strides), whose worked solution is in the chapter: a batch
    of 8 CameraNet images, channels-last, float16, and its element [2, 5, 7, 1] (lab 1, exercise 6)."""
    return {"name": "8 CameraNet images, NHWC", "shape": (8, 32, 32, 3), "dtype": "float16", "index": (2, 5, 7, 1)}


def _tensors_draw(rng: np.random.Generator) -> dict:
    """A student's channels-last batch and element for lab 1's exercise 6.

    Ranges, each keeping the question's teaching point: a batch of 2–16 images of H×W pixels, H and W two
    different sides from 8 to 48 (so the two spatial axes, and C and F order, give different strides); 3 or 4
    channels, a camera's RGB or RGBA (the channel axis of a channels-last batch is the short, innermost one);
    float16, int16, float32, int32 or float64 (an itemsize of 2, 4 or 8, never 1, so strides in elements and
    in bytes differ); every index at least 1, so each stride counts in the offset.
    """
    n = int(rng.choice([2, 3, 4, 6, 8, 12, 16]))
    h, w = (int(v) for v in rng.choice([8, 12, 16, 20, 24, 28, 32, 40, 48], size=2, replace=False))
    c = int(rng.choice([3, 4]))
    dtype = str(rng.choice(["float16", "int16", "float32", "int32", "float64"]))
    index = tuple(int(rng.integers(1, side)) for side in (n, h, w, c))
    return {"name": f"{n} images of {h}×{w}, NHWC", "shape": (n, h, w, c), "dtype": dtype, "index": index}


#: Scales whose quotients x / s are exact in float32 for the values drawn (multiples of 1/8 with few bits),
#: so that a half-way value printed in decimal is a half-way value in float32 too.
_QUANT_SCALES = (0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 1.25, 1.5)


def _quant_public() -> dict:
    """Chapter 6's exercise "Quantize by hand" (ex-ch6-hand), whose worked solution is in the chapter: five
    values to uint8 with scale 0.5 and zero point 3 (lab 6, exercise 5)."""
    return {"name": "chapter 6's five values", "x": (-0.3, 0.0, 0.25, 0.75, 3.0), "scale": 0.5, "zero_point": 3,
            "dtype": "uint8"}


def _quant_draw(rng: np.random.Generator) -> dict:
    """A student's five values, scale, zero point and type for lab 6's exercise 5.

    Every draw holds each teaching point of QuantizeLinear: two half-way values x/s = k + 0.5, one with k even
    (half to even rounds it down) and one with k odd (rounds it up), k within ±8, both inside the range; an
    odd zero point (uint8: 11–39, int8: −15–15), so that adding it before the rounding sends those ties to the
    other neighbour; one value 3–39 steps outside the range (below it or above it), which saturates; one value
    a whole number of steps (−6 to 9) from zero; one value off the half-way points (x/s = k + 0.2, 0.3, 0.7 or
    0.8); in a shuffled order. uint8 or int8; a scale from ``_QUANT_SCALES`` (multiples of 1/8, so every
    half-way value is exact in float32 and prints in a few decimals); no value but the far one saturates.
    """
    dtype = str(rng.choice(["uint8", "int8"]))
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    s = float(rng.choice(_QUANT_SCALES))
    z = int(rng.choice(np.arange(11, 40, 2) if dtype == "uint8" else np.arange(-15, 16, 2)))   # ties stay inside
    k_even = int(rng.choice(np.arange(-8, 9, 2)))
    k_odd = int(rng.choice(np.arange(-7, 8, 2)))
    whole = int(rng.integers(-6, 10))
    off = int(rng.integers(-9, 10)) + float(rng.choice([0.2, 0.3, 0.7, 0.8]))
    if rng.random() < 0.5:                                         # below the range: q = lo
        far = -(z - lo) - int(rng.integers(3, 40))
    else:                                                          # above it: q = hi
        far = (hi - z) + int(rng.integers(3, 40))
    values = [(k_even + 0.5) * s, (k_odd + 0.5) * s, whole * s, round(off * s, 4), float(far * s)]
    order = rng.permutation(len(values))
    x = tuple(float(values[i]) for i in order)
    return {"name": f"five values for {dtype}", "x": x, "scale": s, "zero_point": z, "dtype": dtype}


LABS: dict[str, tuple[Callable[[], dict], Callable[[np.random.Generator], dict]]] = {
    "01_tensors": (_tensors_public, _tensors_draw),
    "05_systolic": (_systolic_public, _systolic_draw),
    "06_quant": (_quant_public, _quant_draw),
}


def variant(lab: str, entered: Any = "") -> Variant:
    """The numbers of ``lab``'s varied question for the student in force (see :func:`student`).

    Parameters
    ----------
    lab : str
        A lab with a varied question (a key of :data:`LABS`, e.g. ``"05_systolic"``).
    entered : str
        The id the student typed in the lab's first cell (``""``: none).

    Returns
    -------
    Variant

    Raises
    ------
    TypeError
        If ``lab`` or ``entered`` is not a string.
    ValueError
        If ``lab`` has no varied question.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("NPUKIT_STUDENT", None) and None
    >>> variant("05_systolic").tag
    'public'
    >>> variant("05_systolic", "alice").numbers == variant("05_systolic", "bob").numbers
    False
    """
    _check.text(lab, "lab")
    if lab not in LABS:
        raise ValueError(f"lab must be one of {sorted(LABS)}, got {lab!r}")
    if entered is None:
        entered = ""
    _check.text(entered, "entered")
    who, source = student(entered)
    return _make(lab, who, source, entered)


def of(lab: str, student_id: Any) -> Variant:
    """The variant of ``lab`` for ``student_id`` (None or ``""``: the public numbers), whatever is in force.

    What the grader writes in its CSV. Raises like :func:`variant`.

    Examples
    --------
    >>> of("05_systolic", "alice") == of("05_systolic", " Alice")
    True
    """
    _check.text(lab, "lab")
    if lab not in LABS:
        raise ValueError(f"lab must be one of {sorted(LABS)}, got {lab!r}")
    who = _normal(student_id)
    return _make(lab, who, "grader" if who else "public", "")


def _make(lab: str, who: str | None, source: str, entered: str) -> Variant:
    public, draw = LABS[lab]
    if who is None:
        return Variant(lab, None, "public", public(), "public", entered)
    s = seed(who)
    rng = np.random.default_rng([s, int.from_bytes(lab.encode(), "big") % 2**63])
    return Variant(lab, who, source, draw(rng), f"{s:016x}"[:6], entered)


def describe(v: Variant) -> str:
    """``"public"`` or ``"<tag>: M=36 N=96 …"``: the variant and its numbers in one line.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("NPUKIT_STUDENT", None) and None
    >>> describe(variant("05_systolic"))
    'public'
    """
    _check.instance(v, "v", Variant)
    if v.student is None:
        return "public"
    numbers = " ".join(f"{k}={_compact(val)}" for k, val in v.numbers.items() if k != "name")
    return f"{v.tag}: {numbers}"


def _compact(value: Any) -> str:
    """A number, a name or a tuple of numbers without spaces (``(8,32,32,3)``), so each reads as one word."""
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_compact(v) for v in value) + ")"
    return str(value)


def submission_student(path: str | os.PathLike, root: str | os.PathLike | None = None) -> str:
    """The student a submission belongs to: the name of the folder it was collected in, never its file name.

    The instructor controls the collection folders (``subs/<student>/…``); a student controls only the file's
    name, so a file name is not evidence of whose work it is (see :func:`name_disagrees`). With ``root``
    (the folder the grader was given) and the file two or more levels below it, the id is the first folder
    below ``root`` (``subs/alice/lab05/05_systolic.ipynb`` → ``alice``); otherwise the file's own folder.
    Returns ``""`` for a file with no folder name.

    Examples
    --------
    >>> submission_student("subs/alice/05_systolic.ipynb")
    'alice'
    >>> submission_student("subs/Carol/alice_05_systolic.ipynb")
    'carol'
    >>> submission_student("subs/bob/lab05/05_systolic.ipynb", root="subs")
    'bob'
    """
    p = _check.path(path, "path")
    folder = p.parent.name
    if root is not None:
        r = _check.path(root, "root")
        try:
            parts = p.relative_to(r).parts
        except ValueError:
            raise ValueError(f"path must be inside root {str(r)!r}, got {str(p)!r}") from None
        folder = parts[0] if len(parts) >= 2 else (r.name or folder)
    return _normal(folder) or ""


#: File-name remainders that are a copy's or a version's marker, not a name: "(1)", "copy", "v2", "final".
_NOT_A_NAME = re.compile(r"^(?:\(?\d+\)?|copy(?: \d+)?|v\d+|final|draft|submission|submit|graded|done)$")


def name_disagrees(path: str | os.PathLike, lab: str, student_id: str) -> str:
    """The id a submission's file name suggests, if it is not ``student_id`` (else ``""``): for the grader
    to flag, never to grade by.

    The name is the file's stem without the lab's name (``alice_05_systolic`` → ``alice``); a remainder that
    only marks a copy or a version (``(1)``, ``copy``, ``v2``, ``final``) or that contains ``student_id``
    (an LMS's ``alice_12345``) is no disagreement.

    Examples
    --------
    >>> name_disagrees("subs/carol/alice_05_systolic.ipynb", "05_systolic", "carol")
    'alice'
    >>> name_disagrees("subs/dave/05_systolic (1).ipynb", "05_systolic", "dave")
    ''
    """
    p = _check.path(path, "path")
    _check.text(lab, "lab")
    _check.text(student_id, "student_id")
    rest = p.stem.replace(lab, "") if lab else p.stem
    rest = re.sub(r"^[\s_.-]+|[\s_.-]+$", "", rest).casefold()
    who = student_id.strip().casefold()
    if not rest or _NOT_A_NAME.match(rest) or (who and who in rest):
        return ""
    return rest
