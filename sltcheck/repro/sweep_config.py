"""What a synthetic sweep (Figures 4-6, Appendix B.1) runs: its options, presets and their checks.

:class:`SweepConfig` is one sweep; :func:`preset_config` gives the ``quick`` and ``paper`` presets of a
figure in a mode (``paper`` or ``theory``: see :mod:`sltcheck.repro.synthetic`); :func:`validate_config`
checks every option before anything is trained or written. ``ERRORS`` names the readings of "the
approximation error" a sweep records.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from sltcheck.numerics.validation import check_choice
from sltcheck.pruning.subset_sum import MIPOptions

FIGURES = ("fig4", "fig5", "fig6")
PRESETS = ("quick", "paper")
MODES = {
    "paper": {"solver": "exact", "init": "xavier", "norm_policy": "keep"},  # B.1's Gurobi: --solver gurobi
    "theory": {"solver": "exact", "init": "theory", "norm_policy": "rescale"},
}
VERDICT_DPS = 30
WORST_SEQUENCES = 2  # re-evaluated in mpmath per source and length

# What "the approximation error" of one source is (Section 4.2 does not define it; each is a reading).
# Name -> (record field, description). Per width, the figures show the mean and standard deviation
# over sources of the chosen one.
ERRORS: dict[str, tuple[str, str]] = {
    "max": ("error", "max over every token of every test input of ||S(x_i) - T(x_i)|| (the theorems' error)"),
    "mean": ("error_mean", "mean over test inputs of the max over tokens of ||S(x_i) - T(x_i)||"),
    "read-out": ("error_read_out", "mean over test inputs of ||S(x_0) - T(x_0)||, the regression token's "
                                   "output: what the model predicts"),
    "weight": ("error_weight", "the largest max-norm error of a merged weight matrix (W_QK, W_VO, FC)"),
}


@dataclass(frozen=True)
class SweepConfig:
    figure: str
    preset: str
    mode: str
    solver: str
    init: str
    widths: tuple[int, ...]  # n_K = n_V (Figures 4, 5) or n_MHA = n_FC (Figure 6)
    lengths: tuple[int, ...]  # T
    blocks: tuple[int, ...] = (1,)  # B (Figure 6)
    sources: int = 100  # random sources per point
    test_samples: int = 10_000
    seed: int = 0
    heads: int = 1
    d_key: int = 8  # the target's d_K = d_V
    train_target: bool = True
    target_epochs: int = 25
    norm_policy: str = "rescale"
    regression_token: str = "learned"  # targets.REGRESSION_TOKENS
    bound: str = "auto"  # bounds.BOUNDS
    extra: dict[str, Any] = field(default_factory=dict)
    # The MIP solvers' settings (sltcheck.pruning.subset_sum.MIPOptions: time_limit, mip_gap,
    # threads); empty: the solver's defaults. Licence-free solvers ignore them.
    solver_options: dict[str, Any] = field(default_factory=dict)
    # Certified brackets of each source's worst error over the task's inputs and the alpha-ball
    # (sltcheck.repro.input_space): the records' "input_space", the summary's.
    input_space: bool = False

    def mip_options(self) -> MIPOptions:
        return MIPOptions(**self.solver_options)

    def as_record(self) -> dict[str, Any]:
        """The options as stored and fingerprinted; ``input_space`` only where set, so that a run
        directory written before the option existed keeps its fingerprint, and then with the version of the
        enclosures that bracket it (``input_space_engine``): another engine's brackets differ, so a run
        directory holds one engine's."""
        record = omit_unset(asdict(self), ("input_space",))
        if self.input_space:
            from sltcheck.repro.input_space import ENGINE

            record["input_space_engine"] = ENGINE
        return record


def omit_unset(options: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """``options`` without the ``names`` whose value is False (options added later, off by default)."""
    return {key: value for key, value in options.items() if not (key in names and value is False)}


def preset_config(figure: str, preset: str, mode: str, **overrides: Any) -> SweepConfig:
    check_choice("figure", figure, FIGURES)
    check_choice("preset", preset, PRESETS)
    check_choice("mode", mode, tuple(MODES))
    quick = preset == "quick"
    common: dict[str, Any] = dict(figure=figure, preset=preset, mode=mode, **MODES[mode])
    if figure == "fig4":
        config = SweepConfig(
            **common,
            widths=(4, 8, 12, 16, 20, 24) if quick else tuple(range(4, 65, 4)),
            lengths=(4,), sources=5 if quick else 100, test_samples=500 if quick else 10_000,
            target_epochs=3 if quick else 25,
        )
    elif figure == "fig5":
        config = SweepConfig(
            **common,
            widths=(8, 16) if quick else (8, 16, 32, 64),
            lengths=(4, 16, 64) if quick else (4, 8, 16, 32, 64, 128, 256),
            sources=3 if quick else 100, test_samples=200 if quick else 10_000,
            target_epochs=3 if quick else 25,
        )
    else:
        config = SweepConfig(
            **common,
            widths=(8, 16, 24) if quick else tuple(range(8, 65, 8)),
            lengths=(4,), blocks=(1, 2, 3) if quick else (1, 2, 3, 4),
            sources=3 if quick else 100, test_samples=200 if quick else 10_000, train_target=False,
            d_key=8,
        )
    unknown = sorted(set(overrides) - set(SweepConfig.__dataclass_fields__) - {"figure", "preset", "mode"})
    if unknown:
        raise ValueError(f"{unknown[0]}: not an option of a synthetic sweep; allowed: "
                         f"{', '.join(f for f in SweepConfig.__dataclass_fields__ if f not in ('figure', 'preset'))}")
    config = replace(config, **overrides)
    validate_config(config)
    return config


def validate_config(config: SweepConfig) -> SweepConfig:
    """Every option checked before anything is trained or written (``UsageError``, a ``ValueError``)."""
    from sltcheck.errors import UsageError
    from sltcheck.pruning.sources import INITS
    from sltcheck.pruning.subset_sum import SOLVERS, available_solvers
    from sltcheck.repro.bounds import BOUNDS
    from sltcheck.repro.targets import NORM_POLICIES, REGRESSION_TOKENS

    def choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
        if value not in allowed:
            raise UsageError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")

    choice("--solver", config.solver, SOLVERS)
    choice("--init", config.init, INITS)
    choice("--norm-policy", config.norm_policy, NORM_POLICIES)
    choice("--regression-token", config.regression_token, REGRESSION_TOKENS)
    choice("--bound", config.bound, BOUNDS)
    licence_free = ("mitm", "exact", "fast", "brute", "greedy")
    reason = None if config.solver in licence_free else available_solvers()[config.solver]
    if reason is not None:
        raise UsageError(f"--solver {config.solver} is not usable here: {reason}")
    for name, value, limit in (("--sources", config.sources, MAX_SOURCES),
                               ("--test-samples", config.test_samples, MAX_TEST_SAMPLES),
                               ("--target-epochs", config.target_epochs, MAX_EPOCHS)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
            raise UsageError(f"{name} must be an integer from 1 to {limit}, got {value!r}")
    if not isinstance(config.input_space, bool):
        raise UsageError(f"input_space must be true or false, got {config.input_space!r}")
    if isinstance(config.seed, bool) or not isinstance(config.seed, int) or config.seed < 0:
        raise UsageError(f"--seed must be a non-negative integer, got {config.seed!r}")
    for name, values in (("widths", config.widths), ("lengths", config.lengths), ("blocks", config.blocks)):
        if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
            raise UsageError(f"{name} must be a non-empty list of positive integers, got {values!r}")
    return config


MAX_SOURCES = 100_000
MAX_TEST_SAMPLES = 1_000_000
MAX_EPOCHS = 10_000


def units(config: SweepConfig) -> Iterator[tuple[str, int, int, int]]:
    """The sweep's sources in order: (key, blocks, width, index), the key a row of results.sqlite."""
    for blocks in config.blocks:
        for width in config.widths:
            for index in range(config.sources):
                yield f"{config.figure}/B{blocks:02d}/n{width:04d}/s{index:04d}", blocks, width, index
