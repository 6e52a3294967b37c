"""Hypothesis defaults for the course's property tests.

No deadlines and no "too slow" health check: the tests run on shared 2-core
machines where timing says nothing about correctness. Under CI (``CI`` set)
the examples are derandomized, so a CI run is reproducible; locally each run
explores new examples. No example database (``database=None``): a failure
found once is not replayed on later runs (which made a fixed test fail on and
off), and nothing is written into the repository; a failing example is
printed with its ``@reproduce_failure`` blob (``print_blob``), and a case
worth keeping becomes an ``@example`` in the test.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "course",
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=bool(os.environ.get("CI")),
    print_blob=True,
)
settings.load_profile("course")
