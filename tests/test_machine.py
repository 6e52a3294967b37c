"""Tests of npukit.machine and the build's store (npukit._store): one profile per build, a true ceiling.

* theoretical_peak on made-up /proc/cpuinfo texts: lanes from the flags, the FMA bound, which clock is
  trusted as a ceiling (a boost-aware cpufreq driver) and which is not (acpi-cpufreq, a VM's cpu MHz);
* measure_profile on scripted estimates (roofline.measure_machine replaced): it stops when two consecutive
  estimates agree, reports the spread when none do, keeps the highest estimate, and refuses a peak
  above the ceiling; the real one on this machine stays below this CPU's ceiling;
* profile and the store: measured once per process, and once per build through the store directory
  (a second "process", with the in-process memo dropped, reads the file instead of measuring);
* check_roof: kernels above the flat roof are named as a failed measurement, never explained.
"""

from __future__ import annotations

import pytest

from npukit import _store, machine, roofline
from npukit.graphs import MachineSpec

X86 = "processor : 0\ncpu MHz : 2596.098\nflags : fpu sse sse2 avx fma avx2 avx512f avx512bw\n" * 2


def test_ceiling_from_x86_flags_with_an_untrusted_clock():
    c = machine.theoretical_peak(2, cpuinfo=X86, max_khz=None, driver=None)
    assert (c.cores, c.lanes, c.fma_units, c.clock_hz) == (2, 16, 2, machine.CLOCK_CEILING_HZ)
    assert c.flops == 2 * 16 * 2 * 2 * 6.2e9 and c.nominal_flops == pytest.approx(2 * 16 * 2 * 2 * 2.596098e9)
    assert "avx512f" in c.how and "upper bound" in c.how and "2.60 GHz" in c.how


@pytest.mark.parametrize("flags, lanes", [("sse sse2", 4), ("sse avx avx2 fma", 8), ("avx512f", 16),
                                          ("fp asimd", 4), ("fp asimd sve", 64), ("weird", None)])
def test_lanes_come_from_the_widest_vector_flag(flags, lanes):
    c = machine.theoretical_peak(1, cpuinfo=f"flags : {flags}\nFeatures : {flags}\n", max_khz=None, driver=None)
    assert c.lanes == lanes and (c.flops is None) == (lanes is None)


def test_a_boost_aware_driver_sets_the_clock_and_acpi_cpufreq_does_not():
    trusted = machine.theoretical_peak(1, cpuinfo=X86, max_khz=3_700_000, driver="amd-pstate-epp")
    assert trusted.clock_hz == 3.7e9 and "amd-pstate-epp" in trusted.how
    nominal_only = machine.theoretical_peak(1, cpuinfo=X86, max_khz=2_700_000, driver="acpi-cpufreq")
    assert nominal_only.clock_hz == machine.CLOCK_CEILING_HZ                 # it may omit the boost states


def test_threads_beyond_this_process_are_not_counted():
    from npukit import measure

    c = machine.theoretical_peak(10_000, cpuinfo=X86, max_khz=None, driver=None)
    assert c.cores == measure.cores()


def _scripted(monkeypatch, estimates):
    """roofline.measure_machine returns these (peak GFLOP/s, bandwidth GB/s), in order; counts calls."""
    calls = []

    def fake(**kw):
        peak, bw = estimates[len(calls)]
        calls.append(kw)
        return MachineSpec(peak * 1e9, bw * 1e9, "fake CPU", "fake peak", "fake copy", threads=1, copy_bytes=2**20)

    monkeypatch.setattr(roofline, "measure_machine", fake)
    monkeypatch.setattr(machine, "theoretical_peak", lambda threads=None: machine.Ceiling(
        1, 16, 2, 6.2e9, 2.6e9, "fake ceiling"))
    return calls


def test_estimates_stop_when_two_consecutive_agree(monkeypatch):
    calls = _scripted(monkeypatch, [(60, 20), (100, 30), (102, 29.5), (500, 500)])
    p = machine.measure_profile(threads=1)
    assert len(calls) == 3 and p.settled and p.estimates == ((60e9, 20e9), (100e9, 30e9), (102e9, 29.5e9))
    assert p.machine.peak_flops == 102e9 and p.machine.bandwidth == 30e9        # the highest of all
    assert p.peak_range == (60e9, 102e9) and "the last two agreed within 5%" in p.how


def test_a_profile_that_never_settles_says_so(monkeypatch):
    calls = _scripted(monkeypatch, [(60, 20), (90, 20), (60, 20), (90, 20)])
    p = machine.measure_profile(threads=1, max_estimates=4)
    assert len(calls) == 4 and not p.settled and "no two consecutive ones agreed" in p.how
    assert p.machine.peak_flops == 90e9
    assert "peak 60.0 to 90.0 GFLOP/s" in p.how


def test_a_peak_above_the_ceiling_fails_loudly(monkeypatch):
    _scripted(monkeypatch, [(400, 20), (401, 20)])                  # the fake ceiling: 1 × 16 × 2 × 2 × 6.2 GHz
    with pytest.raises(machine.MeasurementError, match="above this CPU's theoretical ceiling of 396.8 GFLOP/s"):
        machine.measure_profile(threads=1)


def test_this_machines_measured_peak_is_below_its_ceiling():
    p = machine.measure_profile(threads=1, max_estimates=2, repeat=2, n=256, nbytes=2**21)
    ceiling = machine.theoretical_peak(1)
    assert ceiling.flops is None or p.machine.peak_flops < ceiling.flops


def test_the_store_measures_once_per_build(monkeypatch, tmp_path):
    made = []

    def compute():
        made.append(1)
        return {"value": len(made)}

    first = _store.cached("test-quantity", compute, path=tmp_path)
    assert first == {"value": 1} and _store.cached("test-quantity", compute, path=tmp_path) is first
    _store.forget("test-quantity")                                  # as if a later page's kernel started
    assert _store.cached("test-quantity", compute, path=tmp_path) == {"value": 1} and len(made) == 1
    assert len(list(tmp_path.glob("test-quantity-*.pickle"))) == 1
    _store.forget("test-quantity")
    assert _store.cached("test-quantity", compute, path=tmp_path, threads=999) == {"value": 2}   # another key
    with pytest.raises(ValueError, match="name must be"):
        _store.cached("bad/name", compute)


def test_profile_is_cached_in_the_process_and_through_the_store(monkeypatch, tmp_path):
    calls = _scripted(monkeypatch, [(100, 30), (100, 30), (100, 30), (100, 30)])
    a = machine.profile(1, path=tmp_path)
    assert machine.profile(1, path=tmp_path) is a and len(calls) == 2
    _store.forget()
    monkeypatch.setenv(_store.ENV, str(tmp_path))
    b = machine.profile(1)                                          # a new process of the same build reads the file
    assert len(calls) == 2 and b.machine.peak_flops == a.machine.peak_flops
    _store.forget()


def test_check_roof_names_kernels_above_the_flat_roof_as_a_failed_measurement():
    m = MachineSpec(100e9, 10e9, "toy", "assumed", "assumed")
    ceiling = machine.Ceiling(1, 16, 2, 6.2e9, None, "toy")          # 396.8 GFLOP/s
    r = machine.check_roof(m, [{"name": "conv", "achieved": 80e9, "intensity": 5.0},
                               {"name": "pw", "achieved": 120e9}, {"name": "fc", "achieved": 500e9}], ceiling=ceiling)
    assert r.failed and [n for n, _, _ in r.over] == ["pw", "fc"] and r.over_ceiling == ("fc",)
    assert "2 of the 3 measured kernels (pw and fc)" in r.sentence and "failed measurement" in r.sentence
    assert "re-measure" in r.sentence and "cache" in r.sentence and "certainly wrong" in r.sentence
    assert "cache reuse" not in r.sentence
    ok = machine.check_roof(m, [{"name": "conv", "achieved": 80e9}])
    assert not ok.failed and ok.sentence.startswith("None of the 1 measured kernels")


def test_a_roof_a_kernel_beats_is_measured_again_once_and_replaced_in_the_store(monkeypatch, tmp_path):
    from npukit import measure, shared

    _store.forget()
    monkeypatch.setenv(_store.ENV, str(tmp_path))
    monkeypatch.setattr(measure, "cores", lambda: 1)
    calls = _scripted(monkeypatch, [(100, 30), (101, 30), (150, 40), (152, 40), (500, 500)])
    first = shared.profile()
    assert first.settled and first.machine.peak_flops == 101e9 and len(calls) == 2
    check = shared.roof_check([{"name": "conv", "achieved": 120e9}])   # above the first roof
    assert len(calls) == 4 and not check.failed and check.peak == 152e9
    _store.forget()                                                   # a later page's kernel reads the new roof
    again = shared.profile()
    assert again.remeasured == 2 and again.machine.peak_flops == 152e9 and again.machine.bandwidth == 40e9
    assert "2 of them measured again" in again.how and len(again.estimates) == 4
    still = shared.roof_check([{"name": "conv", "achieved": 200e9}])  # measured again only once per build
    assert still.failed and len(calls) == 4 and shared.reliable(check) and again.moved
    assert not shared.reliable(still)      # the roof rose when measured again and a kernel still beats it
    _store.forget()


def test_an_unsettled_profile_is_measured_again_even_when_no_kernel_beats_it(monkeypatch, tmp_path):
    from npukit import measure, shared

    _store.forget()
    monkeypatch.setenv(_store.ENV, str(tmp_path))
    monkeypatch.setattr(measure, "cores", lambda: 1)
    calls = _scripted(monkeypatch, [(60, 20), (90, 20), (60, 20), (90, 20), (95, 21), (96, 21)])
    assert not shared.profile().settled and len(calls) == 4
    assert not shared.roof_check([{"name": "conv", "achieved": 1e9}]).failed and len(calls) == 6
    assert shared.profile().settled and shared.profile().machine.peak_flops == 96e9
    _store.forget()


def test_a_roof_that_held_when_measured_again_is_trusted_over_a_kernel_above_it(monkeypatch, tmp_path):
    from npukit import measure, shared

    _store.forget()
    monkeypatch.setenv(_store.ENV, str(tmp_path))
    monkeypatch.setattr(measure, "cores", lambda: 1)
    calls = _scripted(monkeypatch, [(100, 30), (101, 30), (100, 30), (102, 30)])
    check = shared.roof_check([{"name": "conv", "achieved": 130e9}])
    p = shared.profile()
    assert check.failed and len(calls) == 4 and p.settled and not p.moved and shared.reliable(check)
    _store.forget()


def test_a_roof_that_never_settles_is_not_reliable(monkeypatch, tmp_path):
    from npukit import measure, shared

    _store.forget()
    monkeypatch.setenv(_store.ENV, str(tmp_path))
    monkeypatch.setattr(measure, "cores", lambda: 1)
    _scripted(monkeypatch, [(60, 20), (90, 20)] * 4)
    check = shared.roof_check([{"name": "conv", "achieved": 95e9}])
    assert check.failed and shared.profile().remeasured == 4 and not shared.reliable(check)
    assert not shared.reliable()
    _store.forget()
