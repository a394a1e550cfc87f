"""Hypothesis profiles for the property suite: ``--hypothesis-profile ci|dev|deep`` (default ci).

ci: derandomised, 50 examples per property; dev: 300; deep: 10,000
(see :mod:`sltcheck.harness.profiles`, which also stops Hypothesis from drawing
constants from the project's modules, so the examples do not depend on test order,
serial or under pytest-xdist).
"""

from hypothesis import settings

from sltcheck.harness.profiles import register_profiles

register_profiles()
settings.load_profile("ci")
