"""Reproductions of the paper's experiments.

Synthetic (Appendix B.1, Figures 4-6): :mod:`sltcheck.repro.synthetic`, run by :func:`figure` (and
``sltcheck repro fig4|fig5|fig6``, a thin layer over it). Language modelling (Appendix B.2,
Figures 7-8): :mod:`sltcheck.repro.lm`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from sltcheck.api import Table

# Options that change a run's results: each set one goes into the default folder name.
RESULT_OPTIONS = ("solver", "init", "sources", "seed", "norm_policy", "regression_token", "bound", "widths",
                  "mip_gap", "time_limit", "threads", "input_space")


def default_out(prefix: str, args: Any, names: tuple[str, ...]) -> str:
    """``runs/PREFIX`` plus ``-NAME-VALUE`` for every result-changing option given (an attribute of
    ``args`` that is not None)."""
    parts = [prefix]
    for name in names:
        value = getattr(args, name, None)
        if value is None:
            continue
        text = "+".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)
        parts.append(f"{name.replace('_', '-')}-{text}")
    return str(Path("runs") / "-".join(parts).replace("/", "_").replace(":", "_"))


@dataclass(frozen=True)
class FigureResult:
    """A synthetic reproduction's run directory (``path``) and its ``summary.json`` (``summary``)."""

    path: Path
    summary: dict[str, Any]

    @property
    def violations(self) -> int:
        """Pruned sources whose error exceeds the bound their proof derives (0 expected): the number of
        entries of the summary's ``violations`` (each a source, its seed and its error)."""
        return len(self.summary["violations"])

    def points(self) -> Table:
        """The summary's points (one per width and setting: mean error, its spread, the checks)."""
        from sltcheck.api import Table

        return Table(dict(point) for point in self.summary.get("points", []))


def figure(name: str, preset: str = "quick", mode: str = "theory", *, out: str | Path | None = None,
           workers: int | None = None, scheduler: str | None = None, cluster: str | None = None,
           progress: bool = False, report: Callable[[str], None] | None = None, **overrides: Any) -> FigureResult:
    """Run (or resume) Figure 4, 5 or 6 (``name``: ``fig4``, ``fig5``, ``fig6``) at ``preset`` and
    ``mode``, as ``sltcheck repro NAME`` does; ``overrides`` are ``SweepConfig`` (``sltcheck.repro.synthetic``)
    fields (``solver``, ``init``, ``sources``, ``seed``, ``widths``, ...). ``out`` defaults to the
    command's folder name. Needs the ``repro`` extra (torch)."""
    from sltcheck.executors import InProcessExecutor, make_executor
    from sltcheck.repro import synthetic

    config = synthetic.preset_config(name, preset, mode, **overrides)
    solver_options = overrides.get("solver_options") or {}
    named = {**overrides, **solver_options}
    where = str(out) if out is not None else default_out(f"{name}-{preset}-{mode}", _Given(named), RESULT_OPTIONS)
    with make_executor(workers, scheduler, cluster) as executor:
        executor.connect()  # an unreachable scheduler is refused before anything is written
        if report and not isinstance(executor, InProcessExecutor):
            report(f"sources run on {executor.description}")
        summary = synthetic.run(config, where, progress=progress, executor=executor)
    return FigureResult(Path(where), summary)


class _Given:
    """Keyword options read as attributes (what :func:`default_out` reads); absent ones are None."""

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def __getattr__(self, name: str) -> Any:
        return self._values.get(name)
