"""npukit's import graph has no cycle, lazy imports included.

Chapter modules import only earlier chapters' modules; the build's shared
quantities (npukit.shared) and the "numbers so far" collector (npukit.tally)
sit at the top and import them. A cycle through a lazy import (``from . import
x`` inside a function) does not fail at import time, but it ties every module
on it into one unit that cannot be read, tested or changed alone, which is
what issue 19 found (13 modules in one circle through tally). The graph is
built from the source (``ast``): every ``import`` and ``from … import`` at
any depth, relative ones resolved, plus the imports ``npukit.tally`` makes by
name (``importlib`` over ``npukit.CHAPTERS``). Two kinds of edge are left
out, with their reason: imports under ``if TYPE_CHECKING:`` (never executed:
they only name types for annotations), and a module importing one of its
own parent packages (the parent is initialised before any of its submodules).
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import npukit

ROOT = pathlib.Path(npukit.__file__).parent


def _modules(root: pathlib.Path) -> dict[str, pathlib.Path]:
    pkg = root.name
    out = {}
    for p in sorted(root.rglob("*.py")):
        parts = [pkg, *p.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            t = node.test
            name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def import_graph(root: pathlib.Path, dynamic: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """Module → the package's modules it imports (see the module docstring for what counts)."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                targets = [f"{stem}.{a.name}" if f"{stem}.{a.name}" in modules else stem for a in node.names]
            for t in targets:
                while t not in modules and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t in modules and t != mod and not mod.startswith(t + "."):
                    graph[mod].add(t)
    for mod, extra in (dynamic or {}).items():
        graph[mod] |= extra
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_npukit_has_no_import_cycle():
    dynamic = {"npukit.tally": {f"npukit.{name}" for name in npukit.CHAPTERS.values()}}
    graph = import_graph(ROOT, dynamic)
    assert len(graph) > 30 and "npukit.capstone" in graph["npukit.tally"]
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " → ".join(cycle)


def test_chapter_modules_do_not_import_the_top():
    graph = import_graph(ROOT)
    top = {"npukit.tally", "npukit.shared"}
    below = [m for m in graph if m not in top and not m.startswith(("npukit.teach", "npukit.figures"))
             and m not in ("npukit", "npukit.sphinxext")]
    offenders = {m: sorted(graph[m] & top) for m in below if graph[m] & top}
    assert not offenders, f"modules below the top import it: {offenders}"


def _write(root: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    pkg = root / "pkg"
    pkg.mkdir()
    for name, text in files.items():
        (pkg / name).write_text(text, encoding="utf-8")
    return pkg


def test_a_lazy_cycle_is_found(tmp_path):
    pkg = _write(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def f():\n    from . import a\n    return a\n",     # lazy: no error at import time
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n",
    })
    graph = import_graph(pkg)
    assert graph["pkg.b"] == {"pkg.a"} and graph["pkg.c"] == set()        # TYPE_CHECKING left out
    assert find_cycle(graph) in (["pkg.a", "pkg.b", "pkg.a"], ["pkg.b", "pkg.a", "pkg.b"])


def test_a_dynamic_edge_can_close_a_cycle(tmp_path):
    pkg = _write(tmp_path, {"__init__.py": "", "top.py": "", "low.py": "from . import top\n"})
    assert find_cycle(import_graph(pkg)) is None
    assert find_cycle(import_graph(pkg, {"pkg.top": {"pkg.low"}})) is not None


@pytest.mark.parametrize("text", ["from .. import pkg\n", "import pkg\n", "from pkg import sub\n"])
def test_importing_a_parent_package_is_not_a_cycle(tmp_path, text):
    pkg = _write(tmp_path, {"__init__.py": "from . import sub\n", "sub.py": text})
    assert find_cycle(import_graph(pkg)) is None
