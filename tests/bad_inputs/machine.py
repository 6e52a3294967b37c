"""Bad inputs for npukit.machine."""

from badinput import bad

from npukit import machine
from npukit.graphs import MachineSpec

_m = MachineSpec(100e9, 10e9, "toy", "assumed", "assumed")
_text = "cpu MHz : 2600.0\nflags : fpu avx avx512f\n"

CASES = [
    bad(machine.theoretical_peak, 0, names="threads"),
    bad(machine.theoretical_peak, 1.5, exc=TypeError, names="threads"),
    bad(machine.theoretical_peak, True, exc=TypeError, names="threads"),
    bad(machine.theoretical_peak, 1, cpuinfo=3, exc=TypeError, names="cpuinfo"),
    bad(machine.theoretical_peak, 1, cpuinfo=_text, max_khz=0, driver=None, names="max_khz"),
    bad(machine.theoretical_peak, 1, cpuinfo=_text, max_khz="4 GHz", driver=None, exc=TypeError, names="max_khz"),
    bad(machine.theoretical_peak, 1, cpuinfo=_text, max_khz=None, driver=3, exc=TypeError, names="driver"),
    bad(machine.measure_profile, tolerance=0.0, names="tolerance"),
    bad(machine.measure_profile, tolerance=1.5, names="tolerance"),
    bad(machine.measure_profile, max_estimates=1, names="max_estimates"),
    bad(machine.measure_profile, threads=0, max_estimates=2, names="threads"),
    bad(machine.measure_profile, repeat=0, max_estimates=2, names="repeat"),
    bad(machine.profile, 0, names="threads"),
    bad(machine.profile, "2", exc=TypeError, names="threads"),
    bad(machine.profile, 1, path=3, exc=TypeError, names="path"),
    bad(machine.check_roof, "m", [], exc=TypeError, names="machine"),
    bad(machine.check_roof, _m, {"name": "a", "achieved": 1.0}, exc=TypeError, names="points"),
    bad(machine.check_roof, _m, [{"name": "a"}], exc=TypeError, names="points[0]"),
    bad(machine.check_roof, _m, [{"name": 3, "achieved": 1.0}], exc=TypeError, names="points[0]['name']"),
    bad(machine.check_roof, _m, [{"name": "a", "achieved": -1.0}], names="points[0]['achieved']"),
    bad(machine.check_roof, _m, [{"name": "a", "achieved": float("nan")}], names="points[0]['achieved']"),
    bad(machine.check_roof, _m, [], ceiling=1e12, exc=TypeError, names="ceiling"),
    bad(machine.check_roof, _m, [], unit=3, exc=TypeError, names="unit"),
    bad(machine.remeasure_profile, "profile", exc=TypeError, names="previous"),
]
