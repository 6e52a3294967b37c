"""Running notebooks headless without the lost wake-up that froze the labs' widget cells.

**What froze.** Executed headless by nbclient (what ``jupyter nbconvert --execute``, nbgrader and this
project's tests use), a cell that moves a live control (labs 5, 6 and 8: ``slider.value = …`` on an
``ipywidgets.interactive``) sometimes stopped until the runner's time limit, and with no limit for ever.
Traced (issue 20): the kernel had answered; its ``execute_reply`` was waiting on the client's shell
socket, but the client's ``await socket.poll(timeout)`` (``jupyter_client``'s
``AsyncZMQSocketChannel.get_msg`` on pyzmq's asyncio integration) was never woken: no readiness callback
ran for that ZeroMQ socket until the poll's own timer fired, after which the reply was read at once. A
ZeroMQ socket's file descriptor signals edges, not levels, and a missed edge is recovered only by reading
the socket's ``EVENTS`` again, which the poll does only when its timeout ends. It happened when the reply
came in the same instant as a burst of widget messages on the IOPub socket: on a three-cell widget
notebook, 2 runs in 40 stalled for the whole limit; a blocking client (nbval's) and lab 7's cells, which
end with a short sleep that separates the burst from the reply, never stalled.

**The fix.** :func:`patch_zmq_polling` makes that one long poll a series of short ones (0.25 s), each
reading the socket afresh, so a missed edge costs at most a quarter of a second (0 stalls in 40 runs of
the same notebook; ``make headless-check``: 0 frozen cells in 10 runs of each lab, where without it one
run of lab 5 in 6 stalled a cell for the whole limit). Every headless run of this project applies it: the book
build (``npukit.sphinxext``), the tests (``conftest.py``), ``make labs-run`` and the headless check
(:func:`run_notebook`; ``python -m npukit._jupyter run LAB.ipynb``; ``tools/headless_runs.py``). The
grader runs no Jupyter kernel at all (:mod:`npukit.teach.grade`). It changes no message and no output.
"""

from __future__ import annotations

import pathlib
import sys
import time
from typing import Any

_STEP = 0.25  # seconds: the longest a missed wake-up can delay a message


def patch_zmq_polling() -> bool:
    """Make jupyter_client's async channels poll in short steps. Idempotent.

    Returns ``True`` if the patch is (now) in place, ``False`` if
    jupyter_client is not installed.
    """
    try:
        from jupyter_client.channels import AsyncZMQSocketChannel
    except ImportError:  # pragma: no cover - the book and tests always have it
        return False
    original = AsyncZMQSocketChannel.get_msg
    if getattr(original, "_npukit_stepped", False):
        return True

    async def get_msg(self, timeout=None):
        from queue import Empty

        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await original(self, _STEP if left is None else min(_STEP, left))
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    get_msg._npukit_stepped = True
    AsyncZMQSocketChannel.get_msg = get_msg
    return True


def run_notebook(path: str | pathlib.Path, *, timeout: float = 120.0, save: bool = True,
                 patch: bool = True, allow_errors: bool = False) -> list[tuple[int, float, str | None]]:
    """Execute a notebook headless in its own folder, as ``jupyter nbconvert --execute --inplace`` does.

    With :func:`patch_zmq_polling` applied (``patch=False`` runs without it, to see the stall). Each
    cell may take ``timeout`` seconds; an error stops the run, as nbconvert's does, unless
    ``allow_errors`` (then the error is recorded and the next cell runs).

    Returns
    -------
    list of (int, float, str or None)
        Each executed code cell's index, seconds, and the error it raised (None if it raised none).
    """
    import nbclient
    import nbformat

    if patch:
        patch_zmq_polling()
    path = pathlib.Path(path)
    nb = nbformat.read(path, as_version=4)
    times: list[tuple[int, float, str | None]] = []

    class Timed(nbclient.NotebookClient):
        async def async_execute_cell(self, cell: Any, cell_index: int, execution_count: Any = None,
                                     store_history: bool = True) -> Any:
            start = time.monotonic()
            try:
                out = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
            except Exception as exc:
                times.append((cell_index, time.monotonic() - start, f"{type(exc).__name__}: {exc}".splitlines()[0]))
                raise
            if cell.cell_type == "code":
                error = next((f"{o.get('ename')}: {o.get('evalue', '')}".splitlines()[0] for o in cell.outputs
                              if o.get("output_type") == "error"), None)
                times.append((cell_index, time.monotonic() - start, error))
            return out

    Timed(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
          resources={"metadata": {"path": str(path.parent)}}).execute()
    if save:
        nbformat.write(nb, path)
    return times


def main(argv: list[str] | None = None) -> int:
    """``python -m npukit._jupyter run NOTEBOOK… [--timeout S]``: execute and save each in place."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m npukit._jupyter")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="execute notebooks in place (nbconvert --execute --inplace, without the stall)")
    run.add_argument("notebooks", nargs="+")
    run.add_argument("--timeout", type=float, default=120.0, help="seconds allowed to each cell")
    args = parser.parse_args(argv)
    for nb in args.notebooks:
        print(f"executing {nb}", flush=True)
        run_notebook(nb, timeout=args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
