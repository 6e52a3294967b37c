"""The grader's screen: what a solution cell may not contain, read from its source before it runs.

The exercises need arithmetic, NumPy, the standard containers and npukit's modules; they never need to
reach into the interpreter. A solution cell that does — reads frames, closures, globals or code objects,
runs code from a string, imports the machinery of hooks, threads, processes or files, or touches the
checkers — is refused before it runs, with a message that names the line and says why (the rest of the
notebook is graded as usual; the refused exercise scores 0). The learner's process enforces the same
rules at run time for what no reading of the source can see (:mod:`npukit.teach.learner`).

:func:`refusals` is the screen; :data:`ALLOWED_IMPORTS` the modules a solution may import.

Examples
--------
>>> refusals("import numpy as np\\ndef f(x):\\n    return np.sum(x)\\n")
[]
>>> print(refusals("import sys\\ndef f(x):\\n    return sys._getframe(1)\\n")[0])
line 1: `import sys` is not allowed in a graded solution: a solution may import only numpy, math, the standard containers and npukit's modules (sys reaches into the interpreter).

See the instructor guide, "Grading" (chapters/instructor.md).
"""

from __future__ import annotations

import ast

__all__ = ["refusals", "allowed_import", "ALLOWED_IMPORTS"]

#: Top-level modules a graded solution may import.
ALLOWED_IMPORTS = frozenset({
    "numpy", "math", "cmath", "statistics", "fractions", "decimal", "numbers", "random", "time",
    "collections", "itertools", "functools", "operator", "heapq", "bisect", "copy", "dataclasses", "typing",
    "enum", "abc", "re", "struct", "array", "textwrap", "contextlib", "warnings",
    "onnx", "openvino", "npukit", "ml_dtypes",
})
#: Parts of those a solution may not import: the checkers, and NumPy's doors to raw memory and compilers.
_DENIED_MODULES = ("npukit.teach", "numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing",
                   "numpy._core", "numpy.core._multiarray_umath", "onnx.backend")

_NAMES = {
    "eval": "it runs code from a string", "exec": "it runs code from a string",
    "compile": "it makes code from a string", "__import__": "it imports by name, around the import rules",
    "globals": "it reads the interpreter's namespaces", "locals": "it reads the interpreter's namespaces",
    "vars": "it reads objects' internals", "open": "a solution reads and writes no files",
    "breakpoint": "it starts a debugger", "input": "nobody is there to type", "get_ipython": "it reaches the notebook's shell",
    "teach": "the checkers are not part of a solution", "exit": "it stops the interpreter",
    "quit": "it stops the interpreter", "help": "it starts an interactive help",
}
_ATTRIBUTE_FUNCTIONS = ("getattr", "setattr", "delattr", "hasattr")
_DUNDERS_ALLOWED = {"__init__", "__name__", "__doc__", "__array_interface__", "__array__", "__len__", "__iter__",
                    "__next__", "__getitem__", "__setitem__", "__contains__", "__call__", "__enter__", "__exit__",
                    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__repr__", "__str__",
                    "__add__", "__sub__", "__mul__", "__truediv__", "__neg__", "__bool__", "__float__", "__int__",
                    "__index__"}
_ATTRIBUTES = {
    "sys", "os", "modules", "builtins", "inspect", "getprofile", "gettrace", "setprofile", "settrace",
    "currentframe", "getframeinfo", "f_back", "f_locals", "f_globals", "f_code", "f_builtins", "tb_frame",
    "tb_next", "gi_frame", "gi_code", "cr_frame", "ag_frame", "cell_contents", "attrgetter", "methodcaller",
    "get_referrers", "get_referents", "get_objects", "start_new_thread", "Thread", "AsyncInferQueue",
    "set_callback", "ctypeslib", "getsource", "getclosurevars", "getmembers", "Formatter", "get_field",
    "get_value", "events", "pre_run_cell",
}


def allowed_import(name: str) -> bool:
    """True if a graded solution may import module ``name`` (``"numpy.lib.stride_tricks"``).

    Examples
    --------
    >>> allowed_import("numpy.lib.stride_tricks"), allowed_import("npukit.teach.core"), allowed_import("inspect")
    (True, False, False)
    >>> allowed_import("openvino._pyopenvino")   # a private module: the C level under the wrappers' checks
    False
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a module name (a str), got {type(name).__name__}")
    if not name:
        raise ValueError("name must be a module name, got ''")
    if name.split(".")[0] not in ALLOWED_IMPORTS or any(part.startswith("_") for part in name.split(".")):
        return False
    return not any(name == d or name.startswith(d + ".") for d in _DENIED_MODULES)


def _attribute_why(attr: str) -> str | None:
    if attr.startswith("_") and attr not in _DUNDERS_ALLOWED:
        return ("names that start with an underscore are the interpreter's or a library's internals "
                "(frames, closures, globals, code objects); a solution never needs them")
    if attr in _ATTRIBUTES:
        return "it reaches into the interpreter (frames, hooks, modules, threads) or the checkers"
    return None


def refusals(source: str) -> list[str]:
    """Why the solution cell ``source`` may not run when graded: one sentence per finding (empty: it may).

    A cell that does not parse is not refused here (it fails when it runs, like any other error).

    Examples
    --------
    >>> refusals("def f(x):\\n    return x.__class__\\n")[0].startswith("line 2: `x.__class__`")
    True
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be a cell's source (a str), got {type(source).__name__}")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[int, str]] = []

    def say(node: ast.AST, what: str, why: str) -> None:
        found.append((getattr(node, "lineno", 0), f"line {getattr(node, 'lineno', '?')}: `{what}` is not allowed "
                                                  f"in a graded solution: {why}."))

    calls_ok: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _ATTRIBUTE_FUNCTIONS:
            name = node.args[1] if len(node.args) > 1 else None
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                why = _attribute_why(name.value)
                if why is None:
                    calls_ok.add(id(node.func))
                else:
                    say(node, f"{node.func.id}(…, {name.value!r})", why)
            else:
                say(node, f"{node.func.id}(…, <a computed name>)", "an attribute named at run time escapes "
                    "every rule a reader can check; write the attribute out")
                calls_ok.add(id(node.func))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not allowed_import(alias.name):
                    say(node, f"import {alias.name}", _import_why(alias.name))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                say(node, f"from {'.' * node.level}{module} import …", "relative imports name no module of a solution")
            elif not allowed_import(module):
                say(node, f"from {module} import …", _import_why(module))
            else:
                for alias in node.names:
                    if alias.name.startswith("_") or not allowed_import(f"{module}.{alias.name}"):
                        say(node, f"from {module} import {alias.name}", _import_why(f"{module}.{alias.name}"))
        elif isinstance(node, ast.Name):
            if node.id in _NAMES:
                say(node, node.id, _NAMES[node.id])
            elif node.id in _ATTRIBUTE_FUNCTIONS and id(node) not in calls_ok:
                say(node, node.id, "passed around, it reads attributes named at run time; call it with the name "
                    "written out")
            elif (node.id.startswith("__") and node.id.endswith("__") and node.id not in ("__name__", "__doc__")
                  and not isinstance(node.ctx, ast.Store)):   # defining __hash__ in a class body is fine
                say(node, node.id, "it is the interpreter's internals")
        elif isinstance(node, ast.Attribute):
            why = _attribute_why(node.attr)
            if why is not None:
                say(node, f"{_dotted(node.value)}.{node.attr}", why)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                if name in _NAMES or (name.startswith("__") and name.endswith("__")):
                    say(node, f"global {name}", _NAMES.get(name, "it is the interpreter's internals"))
    seen, out = set(), []
    for _, text in sorted(found, key=lambda t: t[0]):
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def _import_why(name: str) -> str:
    top = name.split(".")[0]
    if name.startswith("npukit.teach") or name == "npukit.teach":
        return "the checkers are not part of a solution"
    if top in ALLOWED_IMPORTS and any(part.startswith("_") for part in name.split(".")):
        return (f"{name} is a library's private module (a name part starts with an underscore); import the "
                "public module instead")
    reason = (f"{top} reaches into the interpreter" if top in ("sys", "inspect", "gc", "ctypes", "builtins",
                                                               "importlib", "types", "__main__", "traceback",
                                                               "marshal", "pickle", "code", "codeop", "runpy",
                                                               "dis", "tracemalloc", "faulthandler", "IPython")
              else f"{name} is not needed by any exercise")
    return ("a solution may import only numpy, math, the standard containers and npukit's modules "
            f"({reason})")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return f"{_dotted(node.func)}(…)"
    return "…"
