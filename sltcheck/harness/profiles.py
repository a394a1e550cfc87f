"""Hypothesis profiles shared by ``pytest properties/`` and ``sltcheck check``.

- ``ci``: derandomised, 50 examples per property, no deadline, blobs printed;
- ``dev``: 300 examples;
- ``deep``: 10,000 examples (the worst-case hunt; under an hour in all).

No example database is used and no constants are drawn from the project's modules
(:func:`pin_local_constants`), so a run depends only on its seed.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, settings

PROFILES: dict[str, int] = {"ci": 50, "dev": 300, "deep": 10_000}
_SUPPRESS = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.differing_executors,
]


def pin_local_constants() -> None:
    """Draw no constants from the project's own modules.

    Hypothesis mixes constants found in every imported *local* module (this project's,
    its tests' and scripts') into what it generates, so the examples of one seed would
    depend on what else happened to be imported (pytest's collection, the CLI, a
    benchmark). sltcheck turns that off: the examples depend on the seed, the profile and
    the strategies alone. (Private Hypothesis API, checked by tests/test_profiles.py.)
    """
    from hypothesis.internal.conjecture import providers

    empty = providers.Constants()
    providers._get_local_constants = lambda: empty


def register_profiles() -> None:
    pin_local_constants()
    common: dict[str, Any] = dict(deadline=None, database=None, suppress_health_check=_SUPPRESS, print_blob=True)
    settings.register_profile("ci", max_examples=PROFILES["ci"], derandomize=True, **common)
    settings.register_profile("dev", max_examples=PROFILES["dev"], **common)
    settings.register_profile("deep", max_examples=PROFILES["deep"], **common)


def profile_settings(profile: str, *, seeded: bool = False) -> settings:
    """The settings of ``profile``; ``seeded`` turns derandomisation off so an
    explicit ``hypothesis.seed`` decides the run (the CLI's --seed)."""
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    register_profiles()
    base = settings.get_profile(profile)
    if seeded:
        return settings(base, derandomize=False, phases=tuple(Phase))
    return base
