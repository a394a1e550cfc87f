"""Hypothesis profiles shared by ``pytest properties/`` and ``sltcheck check``.

- ``ci``: derandomised (the same examples on every run), 50 examples per property,
  no deadline, blobs printed;
- ``ci-random``: ``ci`` with a random seed: CI runs it once with a recorded
  ``--hypothesis-seed`` (``tox -e random``), so CI searches instead of only replaying;
- ``dev``: 300 examples;
- ``deep``: 10,000 examples (the worst-case hunt; under an hour in all).

Only the ``too_slow`` health check is suppressed (each example is evaluated in mpmath
at 40 digits, slow by design); filtering is not hidden: the pytest plugin (:mod:`sltcheck.harness.pytest_plugin`)
reports valid (of which undecided) / filtered examples per property and fails a property under
:func:`valid_floor`.

No example database is used and no constants are drawn from the project's modules
(:func:`pin_local_constants`), so a run depends only on its seed.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, settings

PROFILES: dict[str, int] = {"ci": 50, "ci-random": 50, "dev": 300, "deep": 10_000}
_SUPPRESS = [HealthCheck.too_slow]

# A property must evaluate at least this fraction of its profile's examples (valid: every
# assumption held; undecided verdicts count as valid and are reported apart).
VALID_FRACTION = 0.8


def valid_floor(max_examples: int) -> int:
    """The fewest valid examples a property may run at ``max_examples``.

    Hypothesis stops after ``max_examples`` valid draws, so a property far below them
    was starved: its assumptions rejected most draws, or its strategy has too few values.
    """
    return int(VALID_FRACTION * max_examples)


def pin_local_constants() -> None:
    """Draw no constants from the project's own modules.

    Hypothesis mixes constants found in every imported *local* module (this project's,
    its tests' and scripts') into what it generates, so the examples of one seed would
    depend on what else happened to be imported (pytest's collection, the CLI, a
    benchmark). sltcheck turns that off: the examples depend on the seed, the profile and
    the strategies alone.

    Hypothesis has no public setting for this, so this is the one private API sltcheck
    patches (hence the bounded Hypothesis version in pyproject.toml; tests/test_profiles.py
    fails if the patch stops working). Without it, the same seed gives different examples
    under ``pytest properties`` and ``sltcheck check``.
    """
    from hypothesis.internal.conjecture import providers

    if not hasattr(providers, "_get_local_constants") or not hasattr(providers, "Constants"):
        raise RuntimeError(
            "this Hypothesis version has no providers._get_local_constants: sltcheck cannot make the "
            "examples independent of the imported modules; install a Hypothesis in the range pyproject.toml allows"
        )
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty


def register_profiles() -> None:
    pin_local_constants()
    common: dict[str, Any] = dict(deadline=None, database=None, suppress_health_check=_SUPPRESS, print_blob=True)
    settings.register_profile("ci", max_examples=PROFILES["ci"], derandomize=True, **common)
    settings.register_profile("ci-random", max_examples=PROFILES["ci-random"], **common)
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
