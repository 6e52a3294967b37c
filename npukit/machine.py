"""This machine, measured once: its roofline profile, the CPU's theoretical ceiling, and roof checks.

The invariants this module keeps:

* **One profile per build.** :func:`profile` measures the roofline (BLAS
  peak and copy bandwidth on the same threads, the copy sized from the
  last-level cache, chapter 3's :func:`npukit.roofline.measure_machine`)
  until two consecutive estimates agree within :data:`TOLERANCE`, and keeps
  it: in the process (a lab's kernel session measures once) and, during a
  book build or ``make chapters``, in a file under ``_build/npukit-store``
  that every later page reads (see :mod:`npukit._store`). Every page and the
  "numbers so far" table quote that one profile.
* **A measured peak is below the theoretical one.** :func:`theoretical_peak`
  computes an upper bound from what the OS says about the CPU (cores ×
  float32 SIMD lanes × FMA units × 2 FLOP per FMA × clock); a measured peak
  above it is a broken measurement, and :func:`measure_profile` raises
  :class:`MeasurementError` rather than let a page print it.
* **Nothing runs above the flat roof.** :func:`check_roof` names the measured
  kernels that came out above the measured peak as a failed measurement to
  repeat — a cache can lift a kernel above the *slanted* (DRAM) roof, never
  above the flat one.

See chapter 3, "Graphs and the roofline" (chapters/03_graphs.md), and
CONTRIBUTING.md, "How to quote a shared quantity".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from . import _check, _store
from .graphs import MachineSpec

__all__ = ["TOLERANCE", "MAX_ESTIMATES", "FMA_UNITS", "CLOCK_CEILING_HZ", "MeasurementError", "Ceiling",
           "remeasure_profile", "theoretical_peak", "Profile", "measure_profile", "profile", "RoofCheck", "check_roof"]

#: Two consecutive estimates of the peak and of the bandwidth agree when they differ by at most this fraction.
TOLERANCE = 0.05
#: At most this many estimates; if no two consecutive ones agree by then, the profile reports their spread.
MAX_ESTIMATES = 4

#: Upper bound on vector FMA units per core, by architecture. No OS interface reports it. x86:
#: Intel cores with AVX-512 have one or two 512-bit FMA units (two on Xeon Gold 6xxx/Platinum,
#: Intel 64 and IA-32 Architectures Optimization Reference Manual, ch. "Skylake Server
#: Microarchitecture"); AMD Zen 1 to Zen 5 have two FMA pipes (Zen 5's are 512 bits wide: A. J.
#: Yee, "Zen5's AVX512 Teardown", numberworld.org, 2024). Arm: four 128-bit FP/SIMD pipes is the
#: widest core shipped (Apple M-series, Neoverse V2). Separate vector-add pipes are not counted:
#: a matrix product or convolution is made of multiply-adds, so it cannot use them.
FMA_UNITS = {"x86": 2, "arm": 4}

#: Clock used when the OS does not report a maximum that includes boost: above the highest boost
#: clock of any processor sold so far (Intel Core i9-14900KS, 6.2 GHz, 2024).
CLOCK_CEILING_HZ = 6.2e9

# cpufreq drivers whose cpuinfo_max_freq includes the boost (turbo) range; acpi-cpufreq may report
# only the nominal P0 state (Linux commit "cpufreq: acpi-cpufreq: use DMI max speed when CPPC is unavailable").
_BOOST_AWARE = ("intel_pstate", "intel_cpufreq", "amd-pstate", "amd-pstate-epp", "cppc_cpufreq")


class MeasurementError(RuntimeError):
    """A measurement that contradicts what the hardware can do (a peak above the theoretical ceiling)."""


@dataclass(frozen=True)
class Ceiling:
    """An upper bound on this CPU's float32 FLOP/s: cores × lanes × FMA units × 2 × clock.

    Every factor errs high, so a measurement above :attr:`flops` is wrong,
    not fast: ``cores`` counts logical CPUs (two hyperthreads share one
    core's units), ``fma_units`` is :data:`FMA_UNITS`' bound for the
    architecture, and ``clock_hz`` is the boost maximum the OS reports when
    its cpufreq driver includes boost, else :data:`CLOCK_CEILING_HZ`.
    ``nominal_flops`` uses the clock the OS reports (``cpu MHz`` of
    ``/proc/cpuinfo``, the frequency a virtual machine is told): a useful
    scale, not a bound, since a core may boost above it. ``flops`` is None
    where the vector width is unknown (an unfamiliar CPU or OS).
    See chapter 3, "Graphs and the roofline" (chapters/03_graphs.md).
    """

    cores: int
    lanes: int | None  #: float32 lanes of the widest vector unit, from the CPU flags
    fma_units: int  #: upper bound per core
    clock_hz: float  #: upper bound
    nominal_hz: float | None  #: the clock the OS reports, None if it reports none
    how: str  #: where each factor came from, one sentence

    @property
    def flops(self) -> float | None:
        """The ceiling in FLOP/s (None if the lanes are unknown)."""
        return None if self.lanes is None else self.cores * self.lanes * self.fma_units * 2 * self.clock_hz

    @property
    def nominal_flops(self) -> float | None:
        """The same product at the reported clock (None if either is unknown)."""
        if self.lanes is None or self.nominal_hz is None:
            return None
        return self.cores * self.lanes * self.fma_units * 2 * self.nominal_hz


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _lanes(flags: set[str]) -> tuple[int | None, str, str]:
    """(float32 lanes, architecture, which flag said so) from the CPU's flags."""
    for flag, lanes in (("avx512f", 16), ("avx", 8), ("sse", 4)):
        if flag in flags:
            return lanes, "x86", flag
    if "sve" in flags:   # the vector length is not in the flags: SVE's architectural maximum, 2048 bits
        return 64, "arm", "sve (2048-bit maximum assumed)"
    if "asimd" in flags or "neon" in flags:
        return 4, "arm", "asimd"
    return None, "", ""


def theoretical_peak(threads: int | None = None, *, cpuinfo: str | None = None,
                     max_khz: int | None = -1, driver: str | None = -1) -> Ceiling:  # type: ignore[assignment]
    """An upper bound on the float32 FLOP/s of ``threads`` cores of this CPU, from what the OS reports.

    Reads the flags and clocks of ``/proc/cpuinfo`` (``lscpu`` reads the
    same) and the cpufreq driver's ``cpuinfo_max_freq``; the FMA-unit count
    is not reported by any OS and is :data:`FMA_UNITS`' upper bound. See
    :class:`Ceiling` for why each factor errs high, and chapter 3, "Graphs and
    the roofline" (chapters/03_graphs.md).

    Parameters
    ----------
    threads : int, optional
        Cores to count (>= 1), at most the logical CPUs this process may use
        (:func:`npukit.measure.cores`, the default).
    cpuinfo : str, optional
        The text of ``/proc/cpuinfo`` (default: read it), for tests.
    max_khz, driver : optional
        cpufreq's ``cpuinfo_max_freq`` (kHz, or None) and ``scaling_driver``
        (or None); by default read from ``/sys/devices/system/cpu/cpu0/cpufreq``.

    Returns
    -------
    Ceiling

    Raises
    ------
    TypeError, ValueError
        If ``threads`` is not an integer >= 1, ``cpuinfo`` not a string, or
        ``max_khz`` not an integer >= 1 (or None).

    Examples
    --------
    >>> text = "processor: 0\\ncpu MHz : 2600.0\\nflags : fpu sse avx fma avx2 avx512f\\n"
    >>> c = theoretical_peak(2, cpuinfo=text, max_khz=None, driver=None)
    >>> c.lanes, c.fma_units, c.clock_hz == CLOCK_CEILING_HZ, round(c.nominal_flops / 1e9)
    (16, 2, True, 333)
    >>> c = theoretical_peak(2, cpuinfo=text, max_khz=4_000_000, driver="amd-pstate-epp")
    >>> round(c.flops / 1e9)
    512
    """
    from . import measure

    available = measure.cores()
    threads = available if threads is None else _check.integer(threads, "threads", minimum=1)
    cores = min(threads, available)
    if cpuinfo is None:
        cpuinfo = _read("/proc/cpuinfo") or ""
    _check.text(cpuinfo, "cpuinfo")
    if max_khz == -1:
        text = _read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
        max_khz = int(text) if text and text.strip().isdigit() else None
    if driver == -1:
        driver = (_read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver") or "").strip() or None
    if max_khz is not None:
        max_khz = _check.integer(max_khz, "max_khz", minimum=1)
    driver = _check.text(driver, "driver", optional=True)
    flags: set[str] = set()
    mhz: list[float] = []
    for line in cpuinfo.splitlines():
        k, _, v = line.partition(":")
        k = k.strip().lower()
        if k in ("flags", "features"):
            flags |= set(v.split())
        elif k == "cpu mhz":
            try:
                mhz.append(float(v))
            except ValueError:
                pass
    lanes, arch, flag = _lanes(flags)
    fma = FMA_UNITS.get(arch, max(FMA_UNITS.values()))
    nominal = max(mhz) * 1e6 if mhz else (max_khz * 1e3 if max_khz else None)
    if max_khz and driver in _BOOST_AWARE:
        clock, said = max_khz * 1e3, f"the {max_khz / 1e6:.2f} GHz boost maximum cpufreq ({driver}) reports"
    else:
        clock = CLOCK_CEILING_HZ
        said = (f"{CLOCK_CEILING_HZ / 1e9:.1f} GHz, above any processor's boost clock (the OS reports "
                + (f"{nominal / 1e9:.2f} GHz, which a core may exceed)" if nominal else "no clock)"))
    how = (f"{cores} logical CPU{'s' * (cores != 1)} × "
           + (f"{lanes} float32 lanes ({flag})" if lanes else "unknown vector width")
           + f" × {fma} FMA units per core (an upper bound for {arch or 'any'} cores) × 2 FLOP × {said}")
    return Ceiling(cores, lanes, fma, clock, nominal, how)


# ---- the profile ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """This machine's roofline as measured once for a build, with how much its estimates moved.

    ``machine`` is the roofline pages use (:class:`npukit.graphs.MachineSpec`);
    ``estimates`` holds ``(peak FLOP/s, bandwidth B/s)`` of each estimate,
    in order; ``settled`` says whether the last two agreed within
    ``tolerance``. ``caches`` are the OS's cache sizes, ``ceiling`` the
    CPU's theoretical peak. See chapter 3, "Graphs and the roofline"
    (chapters/03_graphs.md).
    """

    machine: MachineSpec
    estimates: tuple
    tolerance: float
    settled: bool
    ceiling: Ceiling
    caches: dict = field(default_factory=dict)
    summary: str = ""  #: :func:`npukit.measure.machine_summary` when measured
    remeasured: int = 0  #: estimates added by :func:`remeasure_profile` after a check found the roof unreliable

    @property
    def threads(self) -> int:
        return int(self.machine.threads or 1)

    @property
    def peak_range(self) -> tuple[float, float]:
        """Lowest and highest peak over the estimates, FLOP/s."""
        return min(p for p, _ in self.estimates), max(p for p, _ in self.estimates)

    @property
    def bandwidth_range(self) -> tuple[float, float]:
        """Lowest and highest bandwidth over the estimates, B/s."""
        return min(b for _, b in self.estimates), max(b for _, b in self.estimates)

    @property
    def moved(self) -> bool:
        """Whether measuring again (:attr:`remeasured`) raised the peak, the flat roof, beyond the tolerance.

        A roof that moved when measured again depends on when it was measured (other programs' load), so a
        kernel still above it says more about the roof than about the kernel.
        """
        if not self.remeasured:
            return False
        old, new = self.estimates[:-self.remeasured], self.estimates[-self.remeasured:]
        return max(p for p, _ in new) > max(p for p, _ in old) * (1 + self.tolerance)

    @property
    def how(self) -> str:
        """One sentence a page can print: how many estimates, whether they settled, their ranges."""
        (p0, p1), (b0, b1) = self.peak_range, self.bandwidth_range
        n = len(self.estimates)
        agreed = (f"the last two agreed within {self.tolerance:.0%}" if self.settled else
                  f"no two consecutive ones agreed within {self.tolerance:.0%}, so the spread below is the "
                  "uncertainty")
        again = (f", {self.remeasured} of them measured again after a check found the first roof unreliable"
                 if self.remeasured else "")
        return (f"{n} estimate{'s' * (n != 1)} on {self.threads} thread{'s' * (self.threads != 1)}{again}: {agreed} "
                f"(peak {p0 / 1e9:.1f} to {p1 / 1e9:.1f} GFLOP/s, bandwidth {b0 / 1e9:.1f} to {b1 / 1e9:.1f} GB/s)")


def measure_profile(*, threads: int | None = None, tolerance: float = TOLERANCE,
                    max_estimates: int = MAX_ESTIMATES, repeat: int = 3, n: int = 1024,
                    nbytes: int | None = None) -> Profile:
    """Measure the roofline until two consecutive estimates agree within ``tolerance``.

    Each estimate is :func:`npukit.roofline.measure_machine` (the fastest of
    ``repeat`` calls of each kernel, after warm-up). Estimates continue until
    the peak and the bandwidth of the last two both differ by at most
    ``tolerance``, or ``max_estimates`` were made; the profile's numbers are
    the highest of all the estimates (a roof is a ceiling: other programs only
    slow a kernel down), and every estimate is kept for the spread. A peak above
    :func:`theoretical_peak` raises. Use :func:`profile`, which caches; this
    function measures every time. See chapter 3, "Graphs and the roofline"
    (chapters/03_graphs.md).

    Parameters
    ----------
    threads : int, optional
        As for :func:`npukit.roofline.measure_machine`.
    tolerance : float
        In (0, 1).
    max_estimates : int
        At least 2.
    repeat, n, nbytes
        Passed to :func:`npukit.roofline.measure_machine`.

    Returns
    -------
    Profile

    Raises
    ------
    MeasurementError
        If the measured peak is above this CPU's theoretical ceiling.
    TypeError, ValueError
        If an argument has the wrong type or is out of range.

    Examples
    --------
    >>> p = measure_profile(threads=1, max_estimates=2, repeat=1, n=128, nbytes=2**20)
    >>> len(p.estimates), p.machine.threads, p.machine.peak_flops == max(e[0] for e in p.estimates)
    (2, 1, True)
    """
    from . import roofline

    tolerance = _check.fraction(tolerance, "tolerance")
    if tolerance == 0:
        raise ValueError("tolerance must be in (0, 1), got 0")
    max_estimates = _check.integer(max_estimates, "max_estimates", minimum=2)
    estimates: list[MachineSpec] = []
    while len(estimates) < max_estimates:
        estimates.append(roofline.measure_machine(repeat=repeat, n=n, nbytes=nbytes, threads=threads))
        if len(estimates) >= 2 and _combine(estimates, tolerance, max_estimates).settled:
            break
    return _combine(estimates, tolerance, max_estimates)


def _combine(estimates: Sequence[MachineSpec], tolerance: float, max_estimates: int,
             extra: Sequence[tuple[float, float]] = (), remeasured: int = 0) -> Profile:
    """The profile of ``extra`` (earlier ``(peak, bandwidth)`` pairs) and ``estimates``: the highest of each."""
    from . import measure

    settled = False
    if len(estimates) >= 2:
        a, b = estimates[-2:]
        settled = (abs(a.peak_flops - b.peak_flops) <= tolerance * max(a.peak_flops, b.peak_flops)
                   and abs(a.bandwidth - b.bandwidth) <= tolerance * max(a.bandwidth, b.bandwidth))
    best_peak = max(estimates, key=lambda m: m.peak_flops)
    best_bw = max(estimates, key=lambda m: m.bandwidth)
    pairs = (*extra, *((m.peak_flops, m.bandwidth) for m in estimates))
    peak = max(p for p, _ in pairs)
    bandwidth = max(b for _, b in pairs)
    said = f"; the highest of {len(pairs)} such estimates"
    spec = MachineSpec(peak, bandwidth, best_peak.cpu, best_peak.peak_how + said,
                       best_bw.bandwidth_how + said, threads=best_peak.threads, copy_bytes=best_bw.copy_bytes)
    ceiling = theoretical_peak(spec.threads)
    if ceiling.flops is not None and spec.peak_flops > ceiling.flops:
        raise MeasurementError(
            f"the measured peak, {spec.peak_flops / 1e9:.1f} GFLOP/s, is above this CPU's theoretical ceiling of "
            f"{ceiling.flops / 1e9:.1f} GFLOP/s ({ceiling.how}): the timer or the FLOP count is wrong, and no "
            "page may print this roofline")
    return Profile(spec, pairs, tolerance, settled, ceiling, measure.cache_sizes(), measure.machine_summary(),
                   remeasured)


def remeasure_profile(previous: Profile, *, estimates: int = MAX_ESTIMATES, repeat: int = 7,
                      n: int = 1024, nbytes: int | None = None) -> Profile:
    """Measure a profile again after a check found it unreliable, keeping the earlier estimates.

    ``estimates`` more estimates of :func:`npukit.roofline.measure_machine`
    (each one its BLAS products and its copies, one after the other, so a
    burst of load from other programs falls on both), stopping early once
    two consecutive new ones agree within the profile's tolerance. The
    roof is the highest of the old and the new estimates (a roof is a
    ceiling), and ``settled`` says whether the new ones settled. Chapter 3
    calls it through :func:`npukit.shared.roof_check` when a measured kernel
    came out above the flat roof or the first profile did not settle.

    Raises
    ------
    TypeError, ValueError
        If ``previous`` is not a Profile or a count is out of range.
    MeasurementError
        As for :func:`measure_profile`.

    Examples
    --------
    >>> p = measure_profile(threads=1, max_estimates=2, repeat=1, n=128, nbytes=2**20)
    >>> q = remeasure_profile(p, estimates=2, repeat=1, n=128, nbytes=2**20)
    >>> len(q.estimates), q.remeasured, q.machine.peak_flops >= p.machine.peak_flops
    (4, 2, True)
    """
    from . import roofline

    _check.instance(previous, "previous", Profile, "machine.Profile")
    estimates = _check.integer(estimates, "estimates", minimum=2)
    new: list[MachineSpec] = []
    while len(new) < estimates:
        new.append(roofline.measure_machine(repeat=repeat, n=n, nbytes=nbytes, threads=previous.threads))
        if len(new) >= 2 and _combine(new, previous.tolerance, estimates).settled:
            break
    return _combine(new, previous.tolerance, estimates, extra=previous.estimates,
                    remeasured=previous.remeasured + len(new))


def profile(threads: int | None = None, *, path: Any = None) -> Profile:
    """This build's (or this kernel session's) profile: measured on first use, then read.

    The first call measures with :func:`measure_profile`; later calls in the
    same process return the same object, and, where a store directory is set
    (``path``, or the ``NPUKIT_STORE`` environment variable that the book
    build sets to ``_build/npukit-store``), later processes of the same build
    read the file the first one wrote. The file is keyed by this machine,
    npukit's version and source, and ``threads``. See chapter 3, "Graphs and
    the roofline" (chapters/03_graphs.md), and CONTRIBUTING.md, "How to quote
    a shared quantity".

    Parameters
    ----------
    threads : int, optional
        As for :func:`measure_profile` (default: every core this process may use).
    path : str or pathlib.Path, optional
        A store directory (default: ``$NPUKIT_STORE``, else in-process only).

    Returns
    -------
    Profile

    Raises
    ------
    TypeError, ValueError
        If ``threads`` is not an integer >= 1 or ``path`` not a path.
    MeasurementError
        As for :func:`measure_profile`.

    Examples
    --------
    >>> profile(threads=1) is profile(threads=1)
    True
    """
    from . import measure

    threads = measure.cores() if threads is None else _check.integer(threads, "threads", minimum=1)
    if path is not None:
        path = _check.path(path, "path")
    return _store.cached(f"profile-t{threads}", lambda: measure_profile(threads=threads), threads=threads, path=path)


# ---- kernels against the flat roof -----------------------------------------------------------------


@dataclass(frozen=True)
class RoofCheck:
    """Measured kernels that came out above the flat roof, and the sentence a page prints about them.

    ``over`` holds ``(name, achieved FLOP/s, achieved / peak)`` of each
    kernel above the measured peak; ``over_ceiling`` the names of those above
    the CPU's theoretical ceiling too. :attr:`failed` is True if any kernel
    is above the peak. Made by :func:`check_roof`.
    """

    over: tuple
    over_ceiling: tuple
    kernels: int
    peak: float
    ceiling: float | None
    unit: str = "FLOP/s"

    @property
    def failed(self) -> bool:
        return bool(self.over)

    @property
    def sentence(self) -> str:
        """What a page says: that no kernel is above the flat roof, or which are and why that is a failure."""
        g = 1e9
        if not self.over:
            return (f"None of the {self.kernels} measured kernels came out above the flat roof "
                    f"({self.peak / g:.1f} G{self.unit}), as none can.")
        names = [n for n, _, _ in self.over]
        worst = max(r for _, _, r in self.over)
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        text = (f"{len(names)} of the {self.kernels} measured kernels ({listed}) came out above the flat roof, at "
                f"up to {worst:.2f} times the measured peak of {self.peak / g:.1f} G{self.unit}. That is a failed "
                "measurement, not a fast kernel: no cache lets a kernel compute faster than the machine's peak. "
                "Either the peak was measured too low (its matrix product ran while other programs held the "
                "cores, or NumPy's BLAS is slower than these kernels) or these kernels' times were measured too "
                "short (a profiler that counts whole microseconds); re-measure both before reading the figure.")
        if self.over_ceiling:
            text += (f" {len(self.over_ceiling)} of them are above even this CPU's theoretical ceiling of "
                     f"{self.ceiling / g:.0f} G{self.unit}, so their times are certainly wrong.")
        return text


def check_roof(machine: MachineSpec, points: Sequence[Mapping[str, Any]], *, ceiling: Ceiling | None = None,
               unit: str = "FLOP/s") -> RoofCheck:
    """Which measured kernels came out above ``machine``'s flat roof (its peak)?

    A kernel above the slanted part of a DRAM roofline may have taken its
    bytes from a cache (the cache-aware roofline); a kernel above the flat
    part would have computed faster than the machine can, which means the
    peak or the kernel's time was mis-measured. A page that places measured
    kernels glues :attr:`RoofCheck.sentence` and repeats the measurement
    when :attr:`RoofCheck.failed`. See chapter 3, "Graphs and the roofline"
    (chapters/03_graphs.md).

    Parameters
    ----------
    machine : MachineSpec
    points : sequence of mapping
        Each with ``"name"`` (str) and ``"achieved"`` (FLOP/s, a number >= 0),
        as :func:`npukit.figures.graphs.roofline_figure`'s ``measured``.
    ceiling : Ceiling, optional
        The CPU's theoretical peak, to say which kernels are above even that.
    unit : str
        The unit of ``achieved`` and the peak (``"FLOP/s"`` or ``"op/s"``).

    Returns
    -------
    RoofCheck

    Raises
    ------
    TypeError, ValueError
        If ``machine`` is not a MachineSpec, ``points`` not a list of such
        mappings, or ``ceiling`` not a Ceiling.

    Examples
    --------
    >>> m = MachineSpec(100e9, 10e9, "toy", "assumed", "assumed")
    >>> r = check_roof(m, [{"name": "conv", "achieved": 80e9}, {"name": "fc", "achieved": 130e9}])
    >>> r.failed, r.over
    (True, (('fc', 130000000000.0, 1.3),))
    >>> check_roof(m, [{"name": "conv", "achieved": 80e9}]).sentence[:40]
    'None of the 1 measured kernels came out '
    """
    _check.instance(machine, "machine", MachineSpec, "graphs.MachineSpec")
    points = _check.sequence(points, "points")
    if ceiling is not None:
        _check.instance(ceiling, "ceiling", Ceiling, "machine.Ceiling")
    _check.text(unit, "unit")
    limit = None if ceiling is None else ceiling.flops
    over, above = [], []
    for i, p in enumerate(points):
        if not isinstance(p, Mapping) or "name" not in p or "achieved" not in p:
            raise TypeError(f"points[{i}] must be a mapping with 'name' and 'achieved', got {p!r}")
        name = _check.text(p["name"], f"points[{i}]['name']")
        a = p["achieved"]
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a) or a < 0:
            raise ValueError(f"points[{i}]['achieved'] must be a finite number >= 0, got {a!r}")
        if a > machine.peak_flops:
            over.append((name, float(a), float(a) / machine.peak_flops))
            if limit is not None and a > limit:
                above.append(name)
    return RoofCheck(tuple(over), tuple(above), len(points), machine.peak_flops, limit, unit)
