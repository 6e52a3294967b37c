"""The build's store: each shared measurement made once, kept in a file under ``_build/``.

A quantity several pages quote (the machine's roofline, CameraNet's accuracy,
its latency per precision …) must have one value per build, but each page runs
in a kernel of its own. :func:`cached` computes a value once per process and,
when a store directory is set, once per build: the first page that needs it
computes it and writes ``<directory>/<name>-<key>.pickle``; every later page,
lab or test in the same build reads that file. The directory is the
environment variable :data:`ENV` (``NPUKIT_STORE``), which the book build
(``npukit.sphinxext``) and the chapter tests (``conftest.py``) set to
``_build/npukit-store``; ``make book`` and ``make chapters`` delete it first, so
each build measures afresh. Without it (a lab in Jupyter, a unit test) the
cache lives in the process only: a kernel session measures once.

The key names the machine (host name, CPU model, logical CPUs this process
may use), npukit's version with a digest of its source files (so an edited
module never reads a value its old code made) and the thread count, so a
file made elsewhere is never read as this machine's. Files are written
atomically and, on POSIX, under a lock: two processes asking at once compute
the value once. See CONTRIBUTING.md, "How to quote a shared quantity".
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import pickle
import platform
import tempfile
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")

#: The environment variable that names the build's store directory.
ENV = "NPUKIT_STORE"

_memo: dict[str, Any] = {}
_digest: list[str] = []


def directory(path: str | os.PathLike | None = None) -> pathlib.Path | None:
    """The store directory: ``path`` if given, else ``$NPUKIT_STORE``, else None (in-process only)."""
    if path is None:
        path = os.environ.get(ENV) or None
    return None if path is None else pathlib.Path(path)


def _source_digest() -> str:
    if not _digest:
        h = hashlib.sha256()
        root = pathlib.Path(__file__).parent
        for p in sorted(root.rglob("*.py")):
            h.update(p.relative_to(root).as_posix().encode())
            h.update(p.read_bytes())
        _digest.append(h.hexdigest()[:12])
    return _digest[0]


def key(threads: int | None = None) -> str:
    """A short digest of this machine, npukit's version and source, and ``threads``."""
    from . import __version__, measure

    parts = (platform.node(), measure.cpu_name(), str(measure.cores()), __version__, _source_digest(),
             str(threads if threads is not None else measure.cores()))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@contextlib.contextmanager
def _locked(lock: pathlib.Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock (two processes may then compute the same value)
        yield
        return
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached(name: str, compute: Callable[[], T], *, threads: int | None = None,
           path: str | os.PathLike | None = None) -> T:
    """``compute()`` once per process, and once per build when a store directory is set.

    ``name`` names the quantity (a file name part: letters, digits, ``_``
    and ``-``). The value must be picklable.
    """
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise ValueError(f"name must be letters, digits, '_' or '-', got {name!r}")
    where = directory(path)
    memo_key = f"{name}-{key(threads)}@{where}"
    if memo_key in _memo:
        return _memo[memo_key]
    if where is None:
        value = compute()
    else:
        where.mkdir(parents=True, exist_ok=True)
        file = where / f"{name}-{key(threads)}.pickle"
        with _locked(where / f"{name}.lock"):
            if file.exists():
                with open(file, "rb") as f:
                    value = pickle.load(f)
            else:
                value = compute()
                fd, tmp = tempfile.mkstemp(dir=where, prefix=f".{name}-", suffix=".tmp")
                with os.fdopen(fd, "wb") as f:
                    pickle.dump(value, f)
                os.replace(tmp, file)
    _memo[memo_key] = value
    return value


def replace(name: str, value: T, *, threads: int | None = None, path: str | os.PathLike | None = None) -> T:
    """Put ``value`` in place of :func:`cached`'s value of ``name``, in the process and in the store file.

    For a measurement that a check found wrong (chapter 3 re-measures a roof
    that a kernel came out above): every later reader gets ``value``. Only
    safe before any page of the build has quoted the old value.
    """
    if not name or not all(c.isalnum() or c in "_-" for c in name):
        raise ValueError(f"name must be letters, digits, '_' or '-', got {name!r}")
    where = directory(path)
    if where is not None:
        where.mkdir(parents=True, exist_ok=True)
        file = where / f"{name}-{key(threads)}.pickle"
        with _locked(where / f"{name}.lock"):
            fd, tmp = tempfile.mkstemp(dir=where, prefix=f".{name}-", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                pickle.dump(value, f)
            os.replace(tmp, file)
    _memo[f"{name}-{key(threads)}@{where}"] = value
    return value


def forget(name: str | None = None) -> None:
    """Drop in-process values (of ``name``, or all); files are left alone."""
    for k in [k for k in _memo if name is None or k.startswith(f"{name}-")]:
        del _memo[k]
