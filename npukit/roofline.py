"""Measuring a roofline honestly, and placing measured kernels under it.

The invariant this module teaches: **a roofline's two numbers must be measured
the same way as the kernels placed under it.** The peak and the bandwidth are
measured with the same number of threads (a peak on every core over a
one-core bandwidth moves the ridge); the bandwidth is measured on arrays
large enough that the last-level cache cannot hold them, and it says what it
counts (a copy reads ``S`` bytes and writes ``S``; with write-allocate caches
the write first reads the line, so DRAM may move ``3S``); and a measured
kernel is placed at the intensity of what it really ran (a runtime's fused
Conv → BatchNorm → Relu kernel, not the Conv alone).

* :func:`copy_bytes` — how large the copied array must be for this machine;
* :func:`stream_bandwidth` — a copy (or a ReLU) over a large array on ``threads`` threads;
* :func:`stream_comparison` — several copies and ReLUs, of several sizes, in the same interleaved rounds;
* :func:`streaming_store_threshold` — the size above which glibc's ``memcpy``
  stops write-allocating (non-temporal stores);
* :func:`measure_machine` — peak FLOP/s and bandwidth on the same threads, as a
  :class:`npukit.graphs.MachineSpec`;
* :func:`kernel_counts` — FLOPs and bytes of each kernel a runtime executed,
  from the ONNX nodes it fused, so its measured time becomes a point under the roof.

See chapter 3, "Graphs and the roofline" (chapters/03_graphs.md).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from . import _check
from .graphs import MachineSpec, OpCount, _model, _walkable, _node_name, op_counts, tensor_shapes

if TYPE_CHECKING:
    import onnx

__all__ = ["COPY_FACTOR", "COPY_CAP", "copy_bytes", "stream_bandwidth", "stream_comparison",
           "streaming_store_threshold", "measure_machine", "kernel_counts"]

#: The copied array is at least this many times the last-level cache (STREAM's rule).
COPY_FACTOR = 4
#: … but never larger than this (per array; the copy needs two), nor than a quarter of the free memory.
COPY_CAP = 2**30
#: Size used when the OS does not report the caches.
_UNKNOWN_CACHE_BYTES = 256 * 2**20
_MIB = 2**20


def _available_memory() -> int | None:
    """``MemAvailable`` from ``/proc/meminfo`` in bytes, or None where there is no such file."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def copy_bytes(llc: int | None = -1, *, available: int | None = -1) -> int:
    """Bytes of the array :func:`measure_machine` copies: ``4 × LLC``, capped.

    The copy must not fit in the last-level cache, or it measures the cache:
    STREAM asks for arrays of at least four times the cache (J. D. McCalpin,
    *STREAM*, https://www.cs.virginia.edu/stream/ref.html).
    A virtual machine may report its host's whole cache (hundreds of MiB), so
    the size is capped at :data:`COPY_CAP` (1 GiB per array, 2 GiB for source
    and destination) and at a quarter of the memory available, then rounded
    down to whole MiB (at least 1 MiB). Chapter 3 shows, with a sweep of
    sizes, that the measured rate has stopped changing well below the cap on
    the machine that builds the book. See chapter 3, "Graphs and the roofline"
    (chapters/03_graphs.md).

    Parameters
    ----------
    llc : int or None
        Last-level cache in bytes; None if unknown (then 256 MiB is assumed);
        by default :func:`npukit.measure.last_level_cache`.
    available : int or None
        Free memory in bytes; None if unknown (no limit but the cap); by
        default ``MemAvailable`` from ``/proc/meminfo``.

    Returns
    -------
    int
        A multiple of 1 MiB.

    Raises
    ------
    TypeError, ValueError
        If ``llc`` or ``available`` is not an integer ≥ 1 (or None).

    Examples
    --------
    >>> MiB, GiB = 2**20, 2**30
    >>> copy_bytes(32 * MiB, available=16 * GiB) // MiB        # 4 × a 32 MiB L3
    128
    >>> copy_bytes(480 * MiB, available=16 * GiB) // MiB       # a VM reporting its host's L3: capped
    1024
    >>> copy_bytes(480 * MiB, available=2 * GiB) // MiB        # a small machine: a quarter of its memory
    512
    """
    from . import measure

    if type(llc) is int and llc == -1:  # the default only: -1.0 or True is a wrong argument, not "measure it"
        llc = measure.last_level_cache()
    if type(available) is int and available == -1:
        available = _available_memory()
    llc = None if llc is None else _check.integer(llc, "llc", minimum=1)
    available = None if available is None else _check.integer(available, "available", minimum=1)
    want = COPY_FACTOR * (llc if llc is not None else _UNKNOWN_CACHE_BYTES)
    limit = COPY_CAP if available is None else min(COPY_CAP, available // 4)
    return max(_MIB, min(want, limit) // _MIB * _MIB)


def _threads(threads: Any) -> int:
    from . import measure

    return measure.cores() if threads is None else _check.integer(threads, "threads", minimum=1, maximum=1024)


def _best(fn: Any, repeat: int, warmup: int) -> float:
    """Fastest of ``repeat`` timed calls of ``fn`` after ``warmup`` untimed ones, in seconds.

    A roof is a ceiling: other programs on the machine can only slow a call
    down, so the fastest call is the best estimate of what the machine can do.
    (Kernels placed *under* the roof report their median, what they typically get.)
    """
    import time

    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best



def _sweeper(kernel: str, src: np.ndarray, dst: np.ndarray, nbytes: int) -> tuple[Any, int]:
    """``run(lo, hi)``, which copies (or ReLUs) ``src[lo:hi]`` into ``dst`` enough times to stream 64 MiB, and
    that number of sweeps (so a small array's call lasts long enough to time)."""
    sweeps = max(1, -(-64 * _MIB // nbytes))

    def run(lo: int, hi: int) -> None:
        s, d = src[lo:hi], dst[lo:hi]
        for _ in range(sweeps):
            if kernel == "copy":
                np.copyto(d, s)
            else:
                np.maximum(s, 0, out=d)

    return run, sweeps

def stream_bandwidth(nbytes: int, *, kernel: str = "copy", threads: int | None = None, repeat: int = 5,
                     warmup: int = 1) -> float:
    """Bytes per second a streaming kernel reaches on a float32 array of ``nbytes``, on ``threads`` threads.

    ``kernel="copy"`` is ``numpy.copyto(dst, src)``, STREAM's Copy;
    ``kernel="relu"`` is ``numpy.maximum(src, 0, out=dst)``, 1 FLOP per 8
    bytes. Each thread handles one contiguous slice (NumPy releases the GIL
    while it copies); a small array is swept several times per timed call so
    that each call moves at least 64 MiB and starting the threads costs
    little. The rate counts what the program asks for, **bytes read + bytes
    written** (``2 × nbytes`` a sweep). What DRAM moves may be more: a store
    to a line that is not in the cache first reads it (write-allocate), so a
    kernel writing through the cache moves ``3 × nbytes``; glibc's ``memcpy``
    avoids that above :func:`streaming_store_threshold` with non-temporal
    stores. The fastest of ``repeat`` timed calls is kept (a roof is a
    ceiling; others' programs only slow a call down). See chapter 3, "Graphs
    and the roofline" (chapters/03_graphs.md).

    Parameters
    ----------
    nbytes : int
        Bytes of the source array (≥ 4096); the destination is as large.
    kernel : {"copy", "relu"}
    threads : int, optional
        Threads (≥ 1); by default every core this process may use.
    repeat, warmup : int
        Timed calls (≥ 1) and untimed calls before them (≥ 0).

    Returns
    -------
    float
        ``2 × nbytes × sweeps / seconds`` of the fastest call.

    Raises
    ------
    TypeError, ValueError
        If an argument has the wrong type or is out of range.

    Examples
    --------
    >>> stream_bandwidth(2**20, threads=1, repeat=2) > 0
    True
    """
    from concurrent.futures import ThreadPoolExecutor

    nbytes = _check.integer(nbytes, "nbytes", minimum=4096)
    _check.allocation(2 * nbytes, "nbytes")  # the source and the destination
    _check.one_of(kernel, "kernel", ("copy", "relu"))
    threads = _threads(threads)
    repeat = _check.integer(repeat, "repeat", minimum=1, maximum=10_000)
    warmup = _check.integer(warmup, "warmup", minimum=0, maximum=10_000)
    n = nbytes // 4
    src = np.ones(n, dtype=np.float32)
    dst = np.zeros_like(src)  # touched now, so no call pays the page faults
    run, sweeps = _sweeper(kernel, src, dst, nbytes)
    bounds = [(k * n // threads, (k + 1) * n // threads) for k in range(threads)]
    if threads == 1:
        t = _best(lambda: run(0, n), repeat, warmup)
    else:
        with ThreadPoolExecutor(threads) as pool:
            t = _best(lambda: list(pool.map(lambda b: run(*b), bounds)), repeat, warmup)
    return 2 * n * 4 * sweeps / t


def stream_comparison(cases: Mapping[str, Sequence[Any]], *, threads: int | None = None, rounds: int = 15,
                      warmup: int = 1, seed: int = 0, max_rounds: int | None = None,
                      settle: Sequence[tuple[str, str]] | None = None) -> Any:
    """Time several streaming kernels in the same interleaved rounds, per byte they count.

    Each case is ``name: (nbytes, kernel)``, a kernel of
    :func:`stream_bandwidth` (``"copy"`` or ``"relu"``) over a float32
    array of ``nbytes``, split over ``threads`` threads, a small array swept
    several times per call so that each call moves at least 64 MiB. Every
    case has its own source and destination, except that cases of the same
    size share them (a copy and a ReLU over the same array). All are timed
    by :func:`npukit.measure.compare` in ``rounds`` rounds in a shuffled
    order, so a burst of load from other programs hits every size alike and
    two cases can be compared round by round. Unlike a roof (the fastest
    call), each case reports what it typically got. See chapter 3, "Graphs
    and the roofline" (chapters/03_graphs.md).

    Parameters
    ----------
    cases : mapping of str to (int, str)
        At least two; ``nbytes`` ≥ 4096 and a kernel, ``"copy"`` or ``"relu"``.
    threads : int, optional
        Threads (≥ 1); by default every core this process may use.
    rounds : int
        Interleaved rounds (≥ 3).
    warmup : int
        Untimed calls of each case before the rounds (≥ 0).
    seed : int
        Seed of the shuffled order and of the verdicts' bootstrap (≥ 0).
    max_rounds, settle
        As for :func:`npukit.measure.compare` (``settle`` names pairs of cases).

    Returns
    -------
    npukit.measure.Comparison
        Its times are **seconds per byte counted** (bytes read + written),
        one per round: ``1 / c[name]`` is the median rate in bytes/s, and
        ``c.verdict(a, b)`` is ``a``'s time per byte over ``b``'s, round by
        round (the inverse of their rates' ratio). The first case is the
        baseline.

    Raises
    ------
    TypeError, ValueError
        If ``cases`` is not such a mapping, or an argument is out of range,
        or the arrays would not fit in memory.

    Examples
    --------
    >>> c = stream_comparison({"copy": (2**20, "copy"), "relu": (2**20, "relu")}, threads=1, rounds=3, warmup=0)
    >>> c.names, c.rounds, 1 / c["copy"] > 0
    (('copy', 'relu'), 3, True)
    """
    from concurrent.futures import ThreadPoolExecutor

    from . import measure
    from .timing import Comparison

    if not isinstance(cases, Mapping):
        raise TypeError(f"cases must be a mapping of names to (nbytes, kernel), got {type(cases).__name__}")
    if len(cases) < 2:
        raise ValueError(f"cases must hold at least two kernels to compare, got {len(cases)}")
    checked = {}
    for name, case in cases.items():
        _check.text(name, "cases' names")
        nbytes, kernel = _check.sequence(case, f"cases[{name!r}]", length=2)
        nbytes = _check.integer(nbytes, f"cases[{name!r}] nbytes", minimum=4096) // 4 * 4
        checked[name] = (nbytes, _check.one_of(kernel, f"cases[{name!r}] kernel", ("copy", "relu")))
    threads = _threads(threads)
    rounds = _check.integer(rounds, "rounds", minimum=3, maximum=1_000)
    warmup = _check.integer(warmup, "warmup", minimum=0, maximum=10_000)
    seed = _check.integer(seed, "seed", minimum=0)
    sizes = sorted({nb for nb, _ in checked.values()})
    _check.allocation(2 * sum(sizes), "cases")  # a source and a destination per size
    arrays = {}
    for nb in sizes:
        src = np.ones(nb // 4, dtype=np.float32)
        arrays[nb] = (src, np.zeros_like(src))  # touched now, so no call pays the page faults
    pool = ThreadPoolExecutor(threads) if threads > 1 else None

    def make(nbytes: int, kernel: str) -> tuple[Any, int]:
        src, dst = arrays[nbytes]
        n = nbytes // 4
        run, sweeps = _sweeper(kernel, src, dst, nbytes)
        bounds = [(k * n // threads, (k + 1) * n // threads) for k in range(threads)]
        call = (lambda: run(0, n)) if pool is None else (lambda: list(pool.map(lambda b: run(*b), bounds)))
        return call, 2 * nbytes * sweeps

    try:
        made = {name: make(*case) for name, case in checked.items()}
        c = measure.compare({k: f for k, (f, _) in made.items()}, rounds=rounds, warmup=warmup, number=1, seed=seed,
                            max_rounds=max_rounds, settle=settle)
    finally:
        if pool is not None:
            pool.shutdown()
    return Comparison.from_times({k: [t / made[k][1] for t in c.times[k]] for k in c.names}, number=c.number,
                                 seed=seed)


def streaming_store_threshold() -> int | None:
    """Bytes above which glibc's ``memcpy`` writes with non-temporal (streaming) stores, or None.

    Below it a copy's stores go through the cache and each written line is
    first read (write-allocate): DRAM moves 3 bytes for every 2 the copy
    counts. Above it the stores bypass the cache: 2 for 2. glibc derives the
    threshold from the cache size it detects and reports it with
    ``ld.so --list-tunables`` (``glibc.cpu.x86_non_temporal_threshold``);
    None where that is not available (another C library, another OS, an
    older glibc). See chapter 3, "Graphs and the roofline" (chapters/03_graphs.md).

    Examples
    --------
    >>> t = streaming_store_threshold()
    >>> t is None or t > 0
    True
    """
    import glob
    import subprocess

    for loader in sorted(glob.glob("/lib64/ld-linux-*.so.*") + glob.glob("/lib/*/ld-linux-*.so.*")):
        try:
            out = subprocess.run([loader, "--list-tunables"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        for line in out.splitlines():
            if line.startswith("glibc.cpu.x86_non_temporal_threshold:"):
                try:
                    return int(line.split(":", 1)[1].split()[0], 0) or None
                except (ValueError, IndexError):
                    return None
    return None


def _blas_name() -> str:
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        return f"{deps['blas']['name']} {deps['blas'].get('version', '')}".strip()
    except Exception:  # pragma: no cover - depends on the NumPy build
        return "the BLAS NumPy was built with"


def _peak(n: int, threads: int, repeat: int) -> tuple[float, str]:
    """FLOP/s of ``n³`` float32 matmuls with BLAS limited to ``threads`` threads, and how many it used."""
    from threadpoolctl import threadpool_info, threadpool_limits

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    c = np.empty((n, n), dtype=np.float32)
    with threadpool_limits(limits=threads, user_api="blas"):
        used = sorted({int(i["num_threads"]) for i in threadpool_info() if i.get("user_api") == "blas"})
        t = _best(lambda: np.matmul(a, b, out=c), repeat, 2)
    said = f"{used[0]} BLAS thread{'s' * (used[0] != 1)}" if len(used) == 1 else "BLAS threads not controllable"
    return 2 * n**3 / t, said


def measure_machine(*, repeat: int = 7, n: int = 1024, nbytes: int | None = None,
                    threads: int | None = None) -> MachineSpec:
    """Measure this machine's roofline, peak and bandwidth on the same number of threads.

    * Peak: ``n×n×n`` float32 ``numpy.matmul`` into a preallocated output,
      ``2·n³`` FLOPs a call, with BLAS limited to ``threads`` threads
      (``threadpoolctl``): a practical peak, below the vendor's theoretical one.
    * Bandwidth: :func:`stream_bandwidth`, a copy of ``nbytes`` on ``threads``
      threads (one slice each), counting bytes read + written as STREAM's
      Copy does. ``nbytes`` defaults to :func:`copy_bytes` (4 × the
      last-level cache, capped at 1 GiB).

    Each is warmed up, timed ``repeat`` times, and the **fastest** call kept:
    a roof is a ceiling, and other programs running at the same time can only
    slow a call down (the kernels placed under the roof report medians). See chapter 3, "Graphs and the roofline"
    (chapters/03_graphs.md).

    Parameters
    ----------
    repeat : int
        Timed repetitions of each measurement (≥ 1).
    n : int
        Matrix size for the peak (≥ 64).
    nbytes : int, optional
        Bytes of the copied array (≥ 1 MiB).
    threads : int, optional
        Threads for both measurements (≥ 1); by default every core this
        process may use (:func:`npukit.measure.cores`).

    Returns
    -------
    MachineSpec
        With ``cpu``, ``peak_how`` / ``bandwidth_how`` (what was run and
        counted), ``threads`` and ``copy_bytes``.

    Raises
    ------
    TypeError, ValueError
        If an argument is not an integer in range.

    Examples
    --------
    >>> m = measure_machine(repeat=1, n=128, nbytes=2**20, threads=1)
    >>> m.peak_flops > 0 and m.bandwidth > 0, m.threads, m.copy_bytes
    (True, 1, 1048576)
    """
    from . import measure

    repeat = _check.integer(repeat, "repeat", minimum=1, maximum=1_000)
    n = _check.integer(n, "n", minimum=64, maximum=8192)  # 8192³: a TFLOP per call
    nbytes = copy_bytes() if nbytes is None else _check.integer(nbytes, "nbytes", minimum=_MIB)
    threads = _threads(threads)
    peak, blas_threads = _peak(n, threads, repeat)
    bandwidth = stream_bandwidth(nbytes, kernel="copy", threads=threads, repeat=repeat, warmup=1)
    how = f"fastest of {repeat} %s, after warm-up"
    return MachineSpec(
        peak, bandwidth, measure.cpu_name(),
        how % f"float32 {n}×{n}×{n} numpy.matmul calls ({_blas_name()}, {blas_threads}), 2·n³ FLOP each",
        how % (f"numpy.copyto calls on a {nbytes / _MIB:.0f} MiB float32 array split over {threads} "
               f"thread{'s' * (threads != 1)}, bytes read + written"),
        threads=threads, copy_bytes=nbytes)


# ---- measured kernels ---------------------------------------------------------------------------


def _not_a_typo(name: str, known: Mapping[str, Any], where: str) -> None:
    """Refuse a name that is not a node's but nearly is: a misspelling would silently drop the node."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.8)
    if close:
        raise ValueError(f"{where} must name a node of the model, got {name!r}; did you mean {close[0]!r}?")


def kernel_counts(model: onnx.ModelProto, kernels: Mapping[str, Sequence[str]], *,
                  itemsize: int | None = None) -> dict[str, OpCount]:
    """What each kernel a runtime executed costs, counted as one fused kernel over ``model``'s nodes.

    A runtime runs several ONNX nodes as one kernel (OpenVINO's CPU plugin
    runs Conv → BatchNormalization → Relu as one Convolution). Run that way,
    the kernel does the FLOPs of all its nodes but moves only its parameters,
    the activations that enter the group and those that leave it: the
    intermediate tensors never reach memory. That is the intensity a measured
    time must be placed at. See chapter 3, "Graphs and the roofline"
    (chapters/03_graphs.md).

    ``kernels`` maps each kernel's name to the names of the ONNX nodes it ran
    (OpenVINO's ``originalLayersNames``, :func:`npukit.deploy.executed_graph`).
    A name may be a node's name or the name of a tensor it writes (OpenVINO
    names layers after their outputs); names of neither are ignored (OpenVINO's
    own, such as ``Multiply_4300`` or the graph input), except one a typo away
    from a node's name (``"stem.rleu"``), which is an error. A node no kernel names
    is charged to the kernel that reads its output, when exactly one does (a
    runtime renames a node it rewrote: OpenVINO names a convolution whose
    weights absorbed a BatchNorm after the ``Multiply`` that scaled them).
    Kernels that ran none of ``model``'s nodes (a layout Reorder) are left out.

    Parameters
    ----------
    model : onnx.ModelProto
        The model the runtime compiled.
    kernels : mapping of str to sequence of str
        Kernel name → ONNX node names.
    itemsize : int, optional
        As in :func:`npukit.graphs.op_counts`.

    Returns
    -------
    dict of str to OpCount
        One record per kernel that ran at least one node; ``op_type`` joins
        the node types with ``+``; ``output_shape`` is the shape of the group's
        first output.

    Raises
    ------
    TypeError, ValueError
        If ``model`` is not an ``onnx.ModelProto``, ``kernels`` not a mapping
        of names to lists of names, two kernels name the same node, or a name
        is a misspelling of a node's.

    Examples
    --------
    >>> from npukit.graphs import example_chain
    >>> m = example_chain(blocks=0, channels=4, size=8, batchnorm=False)     # stem.conv → stem.relu
    >>> alone = kernel_counts(m, {"a": ["stem.conv"], "b": ["stem.relu"]})
    >>> fused = kernel_counts(m, {"conv+relu": ["stem.conv", "stem.relu"]})["conv+relu"]
    >>> fused.op_type, fused.flops == alone["a"].flops + alone["b"].flops
    ('Conv+Relu', True)
    >>> alone["a"].bytes + alone["b"].bytes - fused.bytes      # the 4×8×8 float32 tensor between them, written and read
    2048
    """
    model = _walkable(_model(model))
    if not isinstance(kernels, Mapping):
        raise TypeError(f"kernels must be a mapping of kernel names to lists of ONNX node names, "
                        f"got {type(kernels).__name__}")
    graph = model.graph
    names = {t: i for i, node in enumerate(graph.node) for t in node.output if t}  # runtimes name layers after outputs
    names.update({_node_name(node, i): i for i, node in enumerate(graph.node)})
    owner: dict[int, str] = {}
    for kernel, members in kernels.items():
        if not isinstance(kernel, str):
            raise TypeError(f"kernels: each key must be a kernel name (str), got {type(kernel).__name__}")
        for j, m in enumerate(_check.sequence(members, f"kernels[{kernel!r}]")):
            if not isinstance(m, str):
                raise TypeError(f"kernels[{kernel!r}][{j}] must be an ONNX node name (str), got {type(m).__name__}")
            if m not in names:
                _not_a_typo(m, names, f"kernels[{kernel!r}][{j}]")
            if m in names:
                if names[m] in owner and owner[names[m]] != kernel:
                    raise ValueError(f"kernels: node {m!r} is named by two kernels, {owner[names[m]]!r} and {kernel!r}")
                owner[names[m]] = kernel
    readers: dict[str, list[int]] = {}
    for i, node in enumerate(graph.node):
        for t in node.input:
            readers.setdefault(t, []).append(i)
    named = dict(owner)
    for i, node in enumerate(graph.node):  # a renamed node joins the kernel that names its reader
        if i not in named:
            ks = {named.get(j) for t in node.output for j in readers.get(t, [])}
            if len(ks) == 1 and None not in ks:
                owner[i] = ks.pop()
    counts = {c.name: c for c in op_counts(model, itemsize=itemsize)}
    shapes = tensor_shapes(model)
    consts = {t.name for t in graph.initializer} | {n.output[0] for n in graph.node if n.op_type == "Constant"}
    outputs = {v.name for v in graph.output}

    def size(t: str) -> int:
        return math.prod(shapes[t][0]) * (itemsize or shapes[t][1].itemsize)

    out = {}
    for kernel in kernels:
        members = sorted(i for i, k in owner.items() if k == kernel)
        if not members:
            continue
        written = {t for i in members for t in graph.node[i].output if t}
        read = {t for i in members for t in graph.node[i].input if t}
        leaving = [t for t in written if t in outputs or any(owner.get(j) != kernel for j in readers.get(t, []))]
        p_bytes = sum(size(t) for t in read if t in consts)
        a_in = sum(size(t) for t in read if t not in consts and t not in written)
        a_out = sum(size(t) for t in leaving)
        flops = sum(counts[_node_name(graph.node[i], i)].flops for i in members)
        macs = sum(counts[_node_name(graph.node[i], i)].macs for i in members)
        moved = p_bytes + a_in + a_out
        first_out = next(t for i in members for t in graph.node[i].output if t)
        out[kernel] = OpCount(kernel, "+".join(graph.node[i].op_type for i in members), macs, flops, p_bytes, a_in,
                              a_out, flops / moved if moved else 0.0, shapes[first_out][0])
    return out
