"""One reusable harness for the paper's statements as Hypothesis properties.

API (everything a property file or the CLI needs)::

    from sltcheck.harness import check_property, property_test, RECORDER, strategies

    check_property(statement: str, variant: str, instance: Instance, *,
                   dps: int = PROPERTY_DPS, bound: Bound | None = None,
                   skip: Iterable[str] = (), recorder: Recorder | None = RECORDER) -> Verdict
        assume(assumptions hold, except ``skip``) -> measured and bound at ``dps``
        digits (mpmath) -> verdict.decide -> hypothesis.target(measured/bound),
        note(instance, exactly, on the reported example) -> record -> raises
        AssertionError when the bound is violated (undecided: recorded, not failed).

    check_variants(statement: str, variants: Iterable[str], instance: Instance, *,
                   dps=PROPERTY_DPS, recorder=RECORDER) -> dict[str, Verdict]
        check_property for each variant on one instance, the measured side evaluated
        once; each variant targeted and recorded on its own; the first violated raises.

    property_test(statement, variant, *, bound=None, drop=(), settings=None,
                  examples=(), dps=PROPERTY_DPS, recorder=RECORDER,
                  on_failure=None) -> Callable[[], None]
        a @given test over ``instances(statement, drop)``, with ``examples``
        pinned by @example; call it (inside pytest or not) to run it.

    instances(statement: str, drop: tuple[str, ...] = ()) -> SearchStrategy[Instance]
        from the module ``sltcheck.statements.<statement>.instances`` (which also
        defines FREE, project(instance), shapes() and start(shape, rng, on_boundary=...)
        for the worst-case search; see there).

    strategies.*: unit_spectral_matrices(rows, cols), stacked_unit_spectral(H, rows, cols),
        tokens_on_alpha_sphere(T, d, alpha), perturbed_tokens(X, alpha, eps_max),
        attention_masks(T), logits(T), perturbations(shape, eps_max), eps_maxima(),
        sequence_lengths(), dimensions(), alphas(d1, d2), float_arrays(shape, low, high)

    refute(statement, mutant, *, settings=None, profile="ci") -> Refutation      (mutants.py)
        the mutant's property run to failure (then the worst-case search for a mutant
        that keeps every assumption); ``.instance`` is the counterexample, simplified
        (fewer digits, more zeros: simplify.py), ``.raw_instance`` the one found.

    search_worst_case(statement, variant, *, profile="ci", bound=None, fixed=None, seed=0)
        -> WorstCase: the worst-case search (boundaries first, every continuous field
        moved, gradient climbs, decided in mpmath)                       (search.py)
    local_search(statement, variant, start, *, max_evaluations=400) -> SearchResult | None
        the previous search: scipy Powell from one start (kept for the benchmark)

    power.table(profile) -> the search's best beside every known supremum      (power.py)

    register_profiles(); profile_settings(name, seeded=False)       (profiles.py)
        ci (50 examples, derandomised), dev (300), deep (10,000); no database, no
        constants drawn from the project's modules.

    encode_instance / decode_instance / dumps                        (serialise.py)
        exact JSON (floats as float.hex).

Statement modules (sltcheck.statements.<name>) must let ``measured`` and every
bound accept ``dps=None`` (float64) as well as an int: the worst-case search and the
row preselection run in float64, verdicts only in mpmath.

mpmath cost: a statement whose left-hand side is a max over rows evaluates all
rows in float64 first and only the rows that can decide the max in mpmath (see
:func:`deciding_rows`): the top few, and the rows within a relative margin of
the float64 maximum (at most MAX_ROWS in all). A float64 error is far below that
margin, so the mpmath
maximum is the true one.
"""

from __future__ import annotations

import numpy as np

from sltcheck.harness import strategies
from sltcheck.harness.instances import instances
from sltcheck.harness.mutants import refute
from sltcheck.harness.profiles import profile_settings, register_profiles
from sltcheck.harness.runner import (
    PROPERTY_DPS,
    RECORDER,
    Record,
    Recorder,
    check_property,
    check_variants,
    evaluate,
    property_test,
)
from sltcheck.harness.search import local_search
from sltcheck.harness.serialise import decode_instance, dumps, encode_instance

# Rows kept for mpmath by deciding_rows: the TOP_ROWS largest and all within MARGIN of the largest.
TOP_ROWS = 2
MARGIN = 1e-6
# At most this many rows go to mpmath: ties beyond it (e.g. identical rows) are
# represented by the top ones, which the float64 estimates place within ~1e-13
# of the true maximum (so a verdict can only be affected at a ratio that close to 1).
MAX_ROWS = 4


def deciding_rows(scores: np.ndarray, top: int = TOP_ROWS, margin: float = MARGIN) -> np.ndarray:
    """Indices of the rows that can hold the maximum of ``scores`` (float64 estimates).

    Needs float64 estimates accurate to far better than ``margin`` relative
    (or absolute, near 0): compute them with a formula that stays accurate for
    tiny perturbations (e.g. expm1/log1p), not by differencing two rounded values.
    """
    scores = np.nan_to_num(np.asarray(scores, dtype=np.float64), nan=np.inf)  # NaN: look at it
    order = np.argsort(-scores, kind="stable")
    best = scores[order[0]]
    threshold = best - margin * abs(best) if np.isfinite(best) else best
    close = set(np.flatnonzero(scores >= threshold).tolist())
    chosen = [int(i) for i in order if int(i) in close or len(close) == 0][:MAX_ROWS]
    return np.union1d(order[:top], np.asarray(chosen, dtype=int))


__all__ = [
    "PROPERTY_DPS",
    "RECORDER",
    "Record",
    "Recorder",
    "check_property",
    "check_variants",
    "deciding_rows",
    "decode_instance",
    "dumps",
    "encode_instance",
    "evaluate",
    "instances",
    "local_search",
    "profile_settings",
    "property_test",
    "refute",
    "register_profiles",
    "strategies",
]
