"""Background load for the load test: local processes that compete for the cores in random bursts.

``with busy(2):`` starts two Python processes beside the test and stops them when the block ends.
Each alternates bursts of work with pauses, both of random length (a seeded generator per process):
a burst either spins the CPU (pure Python arithmetic) or streams memory (``numpy.copyto`` of a 32 MiB
array, larger than most last-level cache slices, so it competes for DRAM bandwidth too). That is what a
shared JupyterHub or a CI machine running other jobs does to a timing: some rounds slowed, some not,
the cores and the memory bus both contended.

The processes are bounded in time three ways: each one exits by itself after ``seconds``, exits when
the process that started it is gone, and is terminated (then killed) when the block ends. Nothing
leaves the machine.

As a command, ``python tests/busy.py [--processes N] [--seconds S] -- COMMAND ...`` runs ``COMMAND``
under the same load and exits with its status (``make labs`` runs nbval on the labs this way).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
from typing import Iterator

# The busy process: arguments are its seed, the time (time.time()) at which it must stop, and the
# parent's process id. Bursts last 20-400 ms, pauses 10-300 ms: about 57 % of the time busy.
_CHILD = r"""
import os, random, sys, time
import numpy as np
seed, until, parent = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
src = np.ones(8 * 2**20, np.float32)
dst = np.empty_like(src)
while time.time() < until and os.getppid() == parent:
    end = time.time() + rng.uniform(0.02, 0.4)
    if rng.random() < 0.5:
        x = 0
        while time.time() < end:
            for i in range(2000):
                x += i * i
    else:
        while time.time() < end:
            np.copyto(dst, src)
    time.sleep(rng.uniform(0.01, 0.3))
"""


@contextlib.contextmanager
def busy(processes: int = 2, *, seconds: float = 600.0, seed: int = 0) -> Iterator[list[subprocess.Popen]]:
    """Run ``processes`` bursty busy processes while the block runs (each stops by itself after ``seconds``)."""
    import time

    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 0:
        raise ValueError(f"processes must be an integer >= 0, got {processes!r}")
    if not 0 < seconds <= 3600:
        raise ValueError(f"seconds must be in (0, 3600], got {seconds!r}")
    until = time.time() + seconds
    children = [subprocess.Popen([sys.executable, "-c", _CHILD, str(seed * 1000 + k), repr(until), str(os.getpid())],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
                for k in range(processes)]
    try:
        yield children
    finally:
        for child in children:
            child.terminate()
        for child in children:
            try:
                child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(timeout=5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a command while busy processes compete for the cores.")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=1800.0, help="each busy process stops after this long")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give a command after --")
    print(f"busy.py: {args.processes} busy processes (random bursts of CPU and memory work) beside: "
          f"{' '.join(command)}", flush=True)
    with busy(args.processes, seconds=args.seconds, seed=args.seed):
        return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
