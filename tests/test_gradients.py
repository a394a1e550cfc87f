"""Exact gradients for the worst-case search: each statement's differentiable torch version agrees
with its numpy float64 computation (values and finite-difference gradients), and the search runs
without torch (finite differences)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

from sltcheck.assumptions import violations
from sltcheck.harness import gradients
from sltcheck.harness.instances import module as instance_module
from sltcheck.harness.search import Budget, _flatten, _unflatten, float_ratio, search_worst_case
from sltcheck.statements import STATEMENT_MODULES, load

SMALL = Budget(shapes=4, starts=4, climbs=1, climb_evaluations=60, polish_evaluations=20,
               gradient_climbs=2, gradient_climb_evaluations=60)


def _has_differentiable(statement: str) -> bool:
    return importlib.util.find_spec(f"sltcheck.statements.{statement}.differentiable") is not None


DIFFERENTIABLE = [s for s in STATEMENT_MODULES if _has_differentiable(s)]
CASES = [(s, v) for s in DIFFERENTIABLE for v in load(s).VARIANTS]


def _backend(statement: str, variant: str):  # noqa: ANN202
    pytest.importorskip("torch")
    backend = gradients.differentiable(statement, variant)
    assert backend is not None, f"{statement}/differentiable.py has no bound for {variant}"
    return backend


def _instances(statement: str, count: int, *, interior: bool) -> list[dict]:
    """Seeded starts over the first shapes, boundary and random; ``interior``: scaled strictly
    inside every limit (tokens, steps, weights, alpha above its least value), where measured /
    bound is smooth and a finite-difference gradient is meaningful."""
    module = instance_module(statement)
    rng = np.random.default_rng(11)
    shapes = module.shapes()
    out = []
    for k in range(count):
        shape = shapes[(5 * k + 3) % min(len(shapes), 40)]
        instance = module.project(module.start(shape, rng, on_boundary=k % 2 == 0))
        if interior:
            instance["alpha"] = float(instance["alpha"]) * 1.3
            instance["eps_max"] = 0.1
            instance["X"] = 0.8 * np.asarray(instance["X"])
            instance["X_perturbed"] = instance["X"] + 0.04 * rng.normal(size=np.shape(instance["X"]))
            for key in ("W_Q", "W_K", "W_V", "W_O"):
                instance[key] = 0.8 * np.asarray(instance[key])
            if "fc_layers" in instance:
                instance["fc_layers"] = tuple(0.8 * np.asarray(w) for w in instance["fc_layers"])
        out.append(instance)
    return out


def test_every_differentiable_module_is_found() -> None:
    assert {"lemma12", "lemma13"} <= set(DIFFERENTIABLE)


@pytest.mark.parametrize(("statement", "variant"), CASES)
def test_torch_value_equals_the_numpy_value(statement: str, variant: str) -> None:
    """Two independent float64 computations (torch from the paper's equations, numpy from the
    statement's code) of measured / bound at the same admissible point agree to ~1e-12 (at
    eps_max >= 0.01: with tinier perturbations the measured side is a difference of two outputs
    about alpha / eps_max times larger, and both computations lose that many digits)."""
    backend = _backend(statement, variant)
    module = instance_module(statement)
    compared = 0
    for instance in _instances(statement, 24, interior=False) + _instances(statement, 6, interior=True):
        instance = module.project(instance)
        if float(instance["eps_max"]) < 0.01:
            continue
        compared += 1
        free = tuple(key for key in module.FREE if key in instance)
        expected = float_ratio(statement, variant, instance)
        assert gradients.value(backend, variant, instance, free) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert compared >= 10


@pytest.mark.parametrize("statement", DIFFERENTIABLE)
def test_torch_projection_equals_the_numpy_projection(statement: str) -> None:
    """The climb's torch projection is the module's ``project`` (up to which side of a limit
    rounding puts a point: 2^-20 relative at most), so its gradients steer the same map."""
    backend = _backend(statement, load(statement).DEFAULT_VARIANT)
    module = instance_module(statement)
    rng = np.random.default_rng(5)
    for instance in _instances(statement, 10, interior=False):
        free = tuple(key for key in module.FREE if key in instance)
        vector = _flatten(instance, free) * rng.uniform(0.5, 2.0)  # points outside the limits too
        expected = _flatten(module.project(_unflatten(instance, free, vector)), free)
        got = _flatten(gradients.projected(backend, instance, free, vector), free)
        assert np.allclose(got, expected, rtol=2e-6, atol=1e-12)


@pytest.mark.parametrize(("statement", "variant"), CASES)
def test_autograd_gradient_equals_finite_differences(statement: str, variant: str) -> None:
    """At interior points (smooth there) the autograd gradient matches central differences of
    the numpy float64 ratio."""
    backend = _backend(statement, variant)
    module = instance_module(statement)
    checked = 0
    for instance in _instances(statement, 8, interior=True):
        free = tuple(key for key in module.FREE if key in instance)
        vector = _flatten(instance, free)

        def ratio(z: np.ndarray) -> float:
            return float_ratio(statement, variant, module.project(_unflatten(instance, free, z)))  # noqa: B023

        if ratio(vector) <= 0:
            continue
        step = 1e-6
        central = np.array([(ratio(vector + e) - ratio(vector - e)) / (2 * step) for e in np.eye(vector.size) * step])
        _, grad = gradients.value_and_gradient(backend, variant, instance, free, vector)
        assert np.linalg.norm(grad - central) <= 1e-5 * np.linalg.norm(central) + 1e-9
        checked += 1
    assert checked >= 4


@pytest.mark.parametrize("statement", DIFFERENTIABLE)
def test_search_with_autograd_is_admissible_and_reproducible(statement: str) -> None:
    pytest.importorskip("torch")
    variant = load(statement).DEFAULT_VARIANT
    first = search_worst_case(statement, variant, profile=SMALL, seed=2)
    second = search_worst_case(statement, variant, profile=SMALL, seed=2)
    assert first.gradients == gradients.AUTOGRAD
    assert not violations(statement, first.instance)
    assert first.ratio == second.ratio and first.float_ratio == second.float_ratio


def test_finite_differences_can_be_chosen() -> None:
    found = search_worst_case("lemma12", "as-stated", profile=SMALL, seed=2, gradients="finite-differences")
    assert found.gradients == gradients.FINITE_DIFFERENCES
    assert not violations("lemma12", found.instance)


def test_unknown_gradient_backend_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="gradients must be one of"):
        search_worst_case("lemma12", "as-stated", profile=SMALL, gradients="magic")


def test_a_mutant_bound_climbs_by_finite_differences() -> None:
    """A bound the statement has no torch version of never borrows a variant's gradients."""
    mutant = load("lemma12").MUTANTS[0]
    found = search_worst_case("lemma12", f"mutant:{mutant.name}", bound=mutant.bound, profile=SMALL, seed=2)
    assert found.gradients == gradients.FINITE_DIFFERENCES


# The search in a process where torch cannot be imported (as without the `search` extra).
WITHOUT_TORCH = """
import sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoTorch())
from sltcheck.assumptions import violations
from sltcheck.harness.search import Budget, search_worst_case
budget = Budget(shapes=2, starts=4, climbs=1, climb_evaluations=60, polish_evaluations=20)
found = search_worst_case("lemma12", "as-stated", profile=budget, seed=1)
assert not violations("lemma12", found.instance)
print(found.gradients, "torch" in sys.modules)
"""


def test_the_search_runs_without_torch() -> None:
    result = subprocess.run([sys.executable, "-c", WITHOUT_TORCH], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [gradients.FINITE_DIFFERENCES, "False"]
