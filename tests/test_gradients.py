"""Exact gradients for the worst-case search: each statement's differentiable torch version agrees
with its numpy float64 computation (values and finite-difference gradients), and the search runs
without torch (finite differences)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from dataclasses import replace
from functools import partial

import numpy as np
import pytest

from sltcheck.assumptions import violations
from sltcheck.harness import gradients, power
from sltcheck.harness.budget import BUDGETS, Budget, autograd_scaled
from sltcheck.harness.climbing import flatten, unflatten
from sltcheck.harness.instances import module as instance_module
from sltcheck.harness.pytest_plugin import every_statement
from sltcheck.harness.search import float_ratio, search_worst_case
from sltcheck.registry import STATEMENT_MODULES, load
from sltcheck.statements.shared.chains import FLOAT64_FLOOR

SMALL = Budget(shapes=4, starts=4, climbs=1, climb_evaluations=60, polish_evaluations=20,
               gradient_climbs=2, gradient_climb_evaluations=60)


def _has_differentiable(statement: str) -> bool:
    return importlib.util.find_spec(f"sltcheck.statements.{statement}.differentiable") is not None


DIFFERENTIABLE = [s for s in STATEMENT_MODULES if _has_differentiable(s)]
CASES = [(s, v) for s in DIFFERENTIABLE for v in load(s).VARIANTS]


def _backend(statement: str, variant: str):
    pytest.importorskip("torch")
    backend = gradients.differentiable(statement, variant)
    assert backend is not None, f"{statement}/differentiable.py has no bound for {variant}"
    return backend


def _inside_lipschitz(instance: dict, rng: np.random.Generator) -> None:
    instance["alpha"] = float(instance["alpha"]) * 1.3
    instance["eps_max"] = 0.1
    instance["X"] = 0.8 * np.asarray(instance["X"])
    instance["X_perturbed"] = instance["X"] + 0.04 * rng.normal(size=np.shape(instance["X"]))
    for key in ("W_Q", "W_K", "W_V", "W_O"):
        instance[key] = 0.8 * np.asarray(instance[key])
    if "fc_layers" in instance:
        instance["fc_layers"] = tuple(0.8 * np.asarray(w) for w in instance["fc_layers"])


def _eps_at_least(eps_max: float):
    # with tinier perturbations the measured side is a difference of two outputs about
    # alpha / eps_max times larger, and both computations lose that many digits
    return lambda instance: float(instance["eps_max"]) >= eps_max


# Per statement: how an instance is moved strictly inside every limit (where measured / bound is
# smooth and a finite-difference gradient is meaningful), and where float64 values are comparable
# to ~1e-12 (no cancellation beyond that).
INTERIOR = {"lemma12": _inside_lipschitz, "lemma13": _inside_lipschitz}
COMPARABLE = {"lemma12": _eps_at_least(0.01), "lemma13": _eps_at_least(0.01)}


# Lemmas 5, 8 (softmax shift) and Theorem 9 (the a-posteriori chain of an MHA).
def _inside_softmax(instance: dict, rng: np.random.Generator) -> None:
    instance["alpha"] = float(instance["alpha"]) * 1.3
    instance["eps_max"] = 0.1
    instance["X"] = 0.8 * np.asarray(instance["X"])
    instance["perturbation"] = 0.08 * rng.uniform(-1.0, 1.0, np.shape(instance["perturbation"]))


def _inside_chain(instance: dict, rng: np.random.Generator) -> None:
    instance["alpha"] = float(instance["alpha"]) * 1.3
    X = np.asarray(instance["X"])  # distinct token norms: tight / sharp use the largest
    instance["X"] = X * rng.uniform(0.5, 0.9, (X.shape[0], 1))
    for target, source in zip(("W_Q", "W_K", "W_V", "W_O"), ("S_Q", "S_K", "S_V", "S_O"), strict=True):
        instance[target] = 0.8 * np.asarray(instance[target])
        instance[source] = instance[target] + 0.05 * rng.normal(size=np.shape(instance[target]))


def _chain_gap_visible(instance: dict) -> bool:
    """The outputs differ by more than 1e-4 of their size (a float64 difference keeps 12 digits)."""
    from sltcheck.statements import theorem9

    gap = float(theorem9.measured(instance, None))
    return gap > 1e-4 * theorem9.noise_floor(instance, None) / FLOAT64_FLOOR


INTERIOR |= {"lemma5": _inside_softmax, "lemma8": _inside_softmax, "theorem9": _inside_chain}
COMPARABLE |= {"lemma5": _eps_at_least(1e-9), "lemma8": _eps_at_least(1e-9), "theorem9": _chain_gap_visible}


# Theorems 11 and 14 (a block, B blocks: the chains of Theorem 9, Lemma 13 and Theorem 10 terms).
def _inside_blocks(instance: dict, rng: np.random.Generator, error: float = 0.02) -> None:
    """Tokens and target weights scaled inside their limits and moved off the starts' patterns (no
    ties between token norms or top singular values), every source (the FC pairs rebuilt in
    Pensia's single-input form) its target plus errors of about ``error``."""

    def moved(value: object, scale: float, size: float = 0.02) -> np.ndarray:
        value = np.asarray(value)
        return scale * value + size * rng.normal(size=value.shape)

    instance["alpha"] = float(instance["alpha"]) * 1.3
    instance["X"] = moved(instance["X"], 0.8)
    for target, source in zip(("W_Q", "W_K", "W_V", "W_O"), ("S_Q", "S_K", "S_V", "S_O"), strict=True):
        instance[target] = moved(instance[target], 0.7)
        instance[source] = moved(instance[target], 1.0, error)
    instance["fc_layers"] = tuple(moved(w, 0.7) for w in instance["fc_layers"])
    pairs = []
    for W in instance["fc_layers"]:
        d = W.shape[1]
        pairs += [np.vstack([np.eye(d), -np.eye(d)]), np.hstack([moved(W, 1.0, error), -moved(W, 1.0, error)])]
    instance["S_fc_layers"] = tuple(pairs)


def _gap_visible(statement: str):
    """The outputs differ by more than 1e-3 of their size (a float64 difference through a block's
    few hundred operations keeps 12 digits)."""

    def visible(instance: dict) -> bool:
        module = load(statement)
        gap = float(module.measured(instance, None))
        with np.errstate(all="ignore"):  # far-off sources overflow the bound (the ratio is 0): not comparable
            finite = np.isfinite(float(module.VARIANTS[module.DEFAULT_VARIANT](instance, None)))
        return finite and np.isfinite(gap) and gap > 1e-3 * module.noise_floor(instance, None) / FLOAT64_FLOOR

    return visible


# Theorem 14's as-proven bound grows like exp(4 beta_B Delta_B), beta_B up to 128 alpha: small errors.
INTERIOR |= {"theorem11": _inside_blocks, "theorem14": partial(_inside_blocks, error=2e-3)}
COMPARABLE |= {"theorem11": _gap_visible("theorem11"), "theorem14": _gap_visible("theorem14")}


def _instances(statement: str, count: int, *, interior: bool) -> list[dict]:
    """Seeded starts over the first shapes, boundary and random; ``interior``: moved strictly
    inside every limit (the statement's ``INTERIOR`` row)."""
    module = instance_module(statement)
    rng = np.random.default_rng(11)
    shapes = module.shapes()
    out = []
    for k in range(count):
        shape = shapes[(5 * k + 3) % min(len(shapes), 40)]
        instance = module.project(module.start(shape, rng, on_boundary=k % 2 == 0))
        if interior:
            INTERIOR[statement](instance, rng)
        out.append(instance)
    return out


@every_statement  # discovers which folders have the part
def test_every_differentiable_module_is_found() -> None:
    assert {"lemma12", "lemma13", "lemma5", "lemma8", "theorem9", "theorem11", "theorem14"} <= set(DIFFERENTIABLE)
    assert set(DIFFERENTIABLE) <= set(INTERIOR) & set(COMPARABLE)


@pytest.mark.parametrize(("statement", "variant"), CASES)
def test_torch_value_equals_the_numpy_value(statement: str, variant: str) -> None:
    """Two independent float64 computations (torch from the paper's equations, numpy from the
    statement's code) of measured / bound at the same admissible point agree to ~1e-12 (where
    the statement's ``COMPARABLE`` row says float64 keeps those digits)."""
    backend = _backend(statement, variant)
    module = instance_module(statement)
    compared = 0
    for instance in _instances(statement, 24, interior=False) + _instances(statement, 6, interior=True):
        instance = module.project(instance)
        if not COMPARABLE[statement](instance):
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
        vector = flatten(instance, free) * rng.uniform(0.5, 2.0)  # points outside the limits too
        expected = flatten(module.project(unflatten(instance, free, vector)), free)
        got = flatten(gradients.projected(backend, instance, free, vector), free)
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
        vector = flatten(instance, free)

        def ratio(z: np.ndarray) -> float:
            return float_ratio(statement, variant, module.project(unflatten(instance, free, z)))  # noqa: B023

        if ratio(vector) <= 1e-9:  # the measured side vanishes (up to rounding): a kink of the norm
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
    assert first.ratio == second.ratio
    assert first.float_ratio == second.float_ratio


@pytest.mark.lemma12
def test_finite_differences_can_be_chosen() -> None:
    found = search_worst_case("lemma12", "as-stated", profile=SMALL, seed=2, gradients="finite-differences")
    assert found.gradients == gradients.FINITE_DIFFERENCES
    assert not violations("lemma12", found.instance)


@pytest.mark.lemma12
def test_unknown_gradient_backend_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="gradients must be one of"):
        search_worst_case("lemma12", "as-stated", profile=SMALL, gradients="magic")


# The edge mutants and the closed-form power cases climb by autograd through their named torch twins.
EDGE_MUTANTS = ["lemma5", "lemma8", "theorem9", "theorem11"]


@pytest.mark.parametrize("statement", EDGE_MUTANTS)
def test_the_edge_mutant_climbs_by_autograd(statement: str) -> None:
    pytest.importorskip("torch")
    mutant = next(m for m in load(statement).MUTANTS if m.name == "supremum-0.97")
    found = search_worst_case(statement, "mutant:supremum-0.97", bound=mutant.bound, profile=SMALL, seed=2)
    assert found.gradients == gradients.AUTOGRAD
    assert not violations(statement, found.instance)


@pytest.mark.parametrize("statement", EDGE_MUTANTS)
def test_the_supremum_twin_equals_the_numpy_supremum(statement: str) -> None:
    """The power cases' torch ``supremum`` is the closed form their numpy bound computes."""
    backend = _backend(statement, "supremum")
    module = instance_module(statement)
    case = power.cases(statement)[0]
    for instance in _instances(statement, 12, interior=False):
        instance = module.project(instance)
        if not COMPARABLE[statement](instance):
            continue
        free = tuple(key for key in module.FREE if key in instance)
        expected = float_ratio(statement, "supremum", instance, case["supremum"])
        assert gradients.value(backend, "supremum", instance, free) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("statement", EDGE_MUTANTS)
def test_a_power_case_with_a_twin_climbs_by_autograd(statement: str) -> None:
    pytest.importorskip("torch")
    case = next(c for c in power.cases(statement) if c.get("differentiable"))
    assert power.measure(statement, case, profile=SMALL, seed=1)["gradients"] == gradients.AUTOGRAD
    without = {k: v for k, v in case.items() if k != "differentiable"}
    assert power.measure(statement, without, profile=SMALL, seed=1)["gradients"] == gradients.FINITE_DIFFERENCES


def test_autograd_cost_divides_only_the_gradient_climbs() -> None:
    scaled = autograd_scaled(BUDGETS["ci"], 2)
    assert scaled.gradient_climbs == BUDGETS["ci"].gradient_climbs // 2
    assert replace(scaled, gradient_climbs=BUDGETS["ci"].gradient_climbs) == BUDGETS["ci"]
    with pytest.raises(ValueError, match="AUTOGRAD_COST must be > 0"):
        autograd_scaled(BUDGETS["ci"], 0)


@pytest.mark.lemma12
def test_a_mutant_bound_climbs_by_finite_differences() -> None:
    """A bound the statement has no torch version of never borrows a variant's gradients."""
    mutant = next(m for m in load("lemma12").MUTANTS if m.name == "value-term-only")
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
from sltcheck.harness.budget import Budget
from sltcheck.harness.search import search_worst_case
budget = Budget(shapes=2, starts=4, climbs=1, climb_evaluations=60, polish_evaluations=20)
found = search_worst_case("lemma12", "as-stated", profile=budget, seed=1)
assert not violations("lemma12", found.instance)
print(found.gradients, "torch" in sys.modules)
"""


def test_the_search_runs_without_torch() -> None:
    result = subprocess.run([sys.executable, "-c", WITHOUT_TORCH], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [gradients.FINITE_DIFFERENCES, "False"]


# Theorem 14: its edge mutant sits at 0.97 x the proved supremum 1 of the as-proven chain's ratio.
def test_the_edge_mutant_of_theorem14_is_the_numpy_one_and_climbs_by_autograd() -> None:
    backend = _backend("theorem14", "mutant:supremum-0.97")
    mutant = next(m for m in load("theorem14").MUTANTS if m.name == "supremum-0.97")
    module = instance_module("theorem14")
    compared = 0
    for instance in _instances("theorem14", 24, interior=False) + _instances("theorem14", 6, interior=True):
        if not COMPARABLE["theorem14"](instance):
            continue
        free = tuple(key for key in module.FREE if key in instance)
        expected = float_ratio("theorem14", "mutant:supremum-0.97", instance, mutant.bound)
        assert gradients.value(backend, "mutant:supremum-0.97", instance, free) == pytest.approx(expected, rel=1e-12)
        compared += 1
    assert compared >= 4
    found = search_worst_case("theorem14", "mutant:supremum-0.97", bound=mutant.bound, profile=SMALL, seed=2)
    assert found.gradients == gradients.AUTOGRAD
    assert not violations("theorem14", found.instance)


@pytest.mark.theorem14
def test_far_sources_give_finite_ratios_or_nan_where_numpy_gives_zero() -> None:
    """Theorem 14's far_source starts (source errors up to 1e40, outputs up to ~1e121): torch's
    value and gradient are finite, or the value is nan (an overflow; the climb takes it as 0)
    exactly where the numpy ratio is 0."""
    from sltcheck.statements.theorem14 import instances as chain_instances

    backend = _backend("theorem14", "as-proven")
    rng = np.random.default_rng(0)
    shapes = chain_instances.shapes()
    finite = 0
    for k in range(24):
        shape = {**shapes[k % 12], "d2": shapes[k % 12]["d1"]}
        instance = chain_instances.project(chain_instances.far_source(
            chain_instances.start(shape, rng, on_boundary=True), shape, rng))
        free = tuple(key for key in chain_instances.FREE if key in instance)
        value, grad = gradients.value_and_gradient(backend, "as-proven", instance, free, flatten(instance, free))
        expected = float_ratio("theorem14", "as-proven", instance)
        if not np.isfinite(value):
            assert expected == 0
            continue
        finite += 1
        assert np.all(np.isfinite(grad))
        assert value == pytest.approx(expected, rel=1e-4)  # outputs ~1e121 apart by far less: cancellation
    assert finite >= 12
