"""The shapes of the result files sltcheck writes, as typed records.

Writers build these (so mypy checks them) and readers validate files against
them with :func:`sltcheck.schema.load`. Ratios are numbers, or the strings
"inf"/"nan" where a bound is zero (strict JSON has no infinity).
"""

# No ``from __future__ import annotations`` here: with postponed annotations Python 3.11's TypedDict
# cannot see ``NotRequired`` and makes every key required (files without 'certified' were refused).
from typing import Any, NotRequired, TypedDict

Ratio = float | str | None  # a number; "inf"/"nan" only where the bound is 0


class VerdictRecord(TypedDict):
    measured: str
    bound: str
    ratio: Ratio
    dps: int
    holds: bool
    undecided: bool
    attained: NotRequired[bool]  # measured = bound, proved exactly (absent from files written before it)


class SearchRecord(TypedDict):
    ratio: Ratio
    violated: bool
    shape: dict[str, Any]
    starts: int
    evaluations: int
    seconds: float
    replay: dict[str, Any] | None
    certified: str | None
    gradients: str  # "autograd" (torch) or "finite-differences": the climbs' gradient backend


class FindingRecord(TypedDict):
    """One statement variant of ``sltcheck check``."""

    statement: str
    variant: str
    default: bool
    examples: int
    worst_ratio: Ratio
    violated: bool
    violations: int
    undecided: int
    attained: NotRequired[int]  # examples with measured = bound proved exactly (absent from files before it)
    filtered: NotRequired[int]  # draws an assumption rejected (absent from files written before it)
    verdict: VerdictRecord | None
    instance: dict[str, Any] | None
    seed: int | None
    examples_per_second: float | None
    seconds: float
    failure: str
    search: SearchRecord | None
    ratios: list[float | str]
    certified: NotRequired[bool]
    certified_outcome: NotRequired[str]
    certified_backend: NotRequired[str]  # "arb" or "mpmath" (absent from files written before it)
    interval: NotRequired[dict[str, Any]]


class _MutantOptional(TypedDict, total=False):
    # the counterexample as found, before sltcheck.harness.simplify (absent from runs before it)
    raw_counterexample: dict[str, Any] | None
    raw_ratio: Ratio
    simplification: dict[str, Any] | None  # kept simplifications, evaluations, digits and zeros (raw, simplified)
    interval: dict[str, Any]  # a certified enclosure of the ratio ("certified_ratio": sltcheck certify's rows)


class MutantRecord(_MutantOptional):
    statement: str
    mutant: str
    why: str
    refuted: bool
    ratio: Ratio
    counterexample: dict[str, Any] | None  # simplified (sltcheck.harness.simplify)
    message: str
    seconds: float
    certified_outcome: NotRequired[str]  # the counterexample in interval arithmetic ("violated": proved)
    certified_backend: NotRequired[str]


class _CheckRunOptional(TypedDict, total=False):
    probability: bool  # the probability halves ran (absent from runs before them)


class CheckRun(_CheckRunOptional):
    """The options that make a ``sltcheck check`` run (its run directory holds one)."""

    profile: str
    seed: int
    only: list[str]
    no_search: bool
    no_mutants: bool
    power: bool


class _FindingsOptional(TypedDict, total=False):
    # sltcheck/pruning/allocation.py and probability.py: "allocation", "frequencies", "width_slack", "C_trend"
    probability: dict[str, Any]
    digest: str  # sltcheck.jsonfiles.seal (absent from files written before it)
    # sltcheck/repaired.py: per false or loose variant, the smallest constant c of measured <= c x bound
    # (statement, variant, constant, exact, attained, lower: the run's certified instance, upper: its kind)
    repaired_constants: list[dict[str, Any]]
    # sltcheck.versions.kernels() of every process that wrote the file (one unless resumed elsewhere):
    # the torch build, numpy's dispatch, OpenBLAS's core, the CPU (absent from files written before it)
    environments: list[dict[str, Any]]
    # sltcheck/regime.py: per theorem, its worst instance with T >= 2 and eps* < 1 (absent from files before it)
    regime: list[dict[str, Any]]


class FindingsFile(_FindingsOptional):
    """``findings.json``. ``done`` lists the finished units (``statement/variant``,
    ``statement/mutants``, ``power``); ``complete`` is true once every planned one is."""

    schema_version: int
    profile: str
    seed: int
    run: CheckRun
    fingerprint: str
    complete: bool
    planned: list[str]
    done: list[str]
    findings: list[FindingRecord]
    mutants: list[MutantRecord]
    slack: list[dict[str, Any]]
    power: list[dict[str, Any]]


class PointRecord(TypedDict):
    blocks: int
    length: int
    width: int
    sources: int
    mean: float
    std: float
    max_ratio: float | str
    mean_bound: float | str  # a decimal string where float64 cannot hold it (Theorem 14 reaches 1e400+)


class _SummaryOptional(TypedDict, total=False):
    # Written since the vacuity check (a summary from an older sltcheck lacks them: "not recorded").
    vacuous: int  # checks whose bound is at or above the trivial bound max_i ||S(x_i)|| + ||T(x_i)||
    held: int  # checks that held with a bound below the trivial one
    least_bound_over_trivial: float | str | None
    source_seconds: float
    wall_seconds: float
    # Written by a run with --input-space (sltcheck.repro.input_space_summary): rows, points, underestimate,
    # looseness, certified, undecided, proved, violations, checked.
    input_space: dict[str, Any]


class SummaryFile(_SummaryOptional):
    """``summary.json`` of ``sltcheck repro fig4|fig5|fig6``."""

    schema_version: int
    figure: str
    config: dict[str, Any]
    points: list[PointRecord]
    fits: dict[str, Any]
    paper_fit: dict[str, Any]
    workshop_fit: dict[str, Any]
    checked: int
    violations: list[dict[str, Any]]
    undecided: int
    worst_ratio: Ratio
    target_norms: dict[str, Any]
    norm_policy: str
    fingerprint: str
    complete: bool


class ReadingFacts(TypedDict):
    name: str
    run: str
    options: dict[str, Any]
    fits: dict[str, Any]
    checked: int
    violations: int
    vacuous: int
    complete: bool
    seconds: float
    curve: list[dict[str, float]]


class ReadingsFile(TypedDict):
    """``readings.json`` of ``sltcheck repro readings fig4|fig5|fig6``."""

    schema_version: int
    figure: str
    preset: str
    config: dict[str, Any]
    complete: bool
    readings: list[ReadingFacts]
    target: list[dict[str, Any]]
    conclusion: str


class LMResultsFile(TypedDict):
    """``results.json`` of ``sltcheck repro fig7|fig8``."""

    schema_version: int
    figure: str
    preset: str
    config: dict[str, Any]
    runs: list[dict[str, Any]]
    summary: list[dict[str, Any]]


class ReportFile(TypedDict):
    """The report's JSON (beside its HTML), validated before it is written."""

    schema_version: int
    label: str
    created: str
    sltcheck: str
    environment: dict[str, str]
    settings: list[dict[str, Any]]
    notes: list[str]
    glance: dict[str, Any]
    statements: list[dict[str, Any]]
    synthetic: list[dict[str, Any]]
    readings: list[dict[str, Any]]
    lm: list[dict[str, Any]]
