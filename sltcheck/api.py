"""The Python API: what the commands do, callable from a script or a notebook.

Each function takes plain arguments (or the config dataclass the command builds from its options),
writes the same run directory the command writes, and returns a typed result whose rows are the
records of :mod:`sltcheck.records`: :func:`check` (``sltcheck check``), :func:`replay`
(``sltcheck check --replay``), :func:`certify` (``sltcheck certify``); the reproductions are
:func:`sltcheck.repro.figure`. Worked examples, each a doctest the documentation build runs: the
how-to "Use sltcheck from Python" (``docs/howto/python-api.md``).

The command line is a thin layer over the same functions: ``sltcheck check`` over
:func:`sltcheck.checking.run`, ``sltcheck certify`` over :func:`sltcheck.certify.session.run`,
``sltcheck repro fig4|fig5|fig6`` over :func:`sltcheck.repro.figure`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sltcheck.certify.session import CertifyConfig
from sltcheck.checking import CheckConfig

if TYPE_CHECKING:
    import pandas

    from sltcheck.records import FindingRecord, FindingsFile, MutantRecord
    from sltcheck.statement_types import Instance

__all__ = ["CertifyConfig", "CertifyResult", "CheckConfig", "CheckResult", "ReplayResult", "Table", "certify",
           "check", "replay"]


class Table(list[dict[str, Any]]):
    """A list of plain records (dicts) that turns into a table: :meth:`to_pandas` where pandas is
    installed (sltcheck does not depend on it), :meth:`columns` otherwise.

    >>> from sltcheck.api import Table
    >>> rows = Table([{"statement": "lemma8", "ratio": 0.5}, {"statement": "lemma5", "ratio": 0.25}])
    >>> rows.columns()
    ['statement', 'ratio']
    >>> [row["ratio"] for row in rows]
    [0.5, 0.25]
    """

    def columns(self) -> list[str]:
        """Every key of every row, in the order first seen."""
        return list(dict.fromkeys(key for row in self for key in row))

    def to_pandas(self) -> pandas.DataFrame:
        """The rows as a :class:`pandas.DataFrame` (nested values, an instance or a verdict, stay objects)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("Table.to_pandas needs pandas, which sltcheck does not install: pip install pandas "
                              "(or use the rows as they are: a list of dicts)") from None
        return pandas.DataFrame(list(self), columns=self.columns())


@dataclass(frozen=True)
class CheckResult:
    """What a check found: the findings file it wrote (``path``) and its content (``data``, a
    :class:`~sltcheck.records.FindingsFile`)."""

    path: Path
    data: FindingsFile

    @property
    def findings(self) -> Table:
        """One :class:`~sltcheck.records.FindingRecord` per statement and variant."""
        return Table(dict(entry) for entry in self.data["findings"])

    @property
    def mutants(self) -> Table:
        """One :class:`~sltcheck.records.MutantRecord` per mutant refuted (or not)."""
        return Table(dict(row) for row in self.data["mutants"])

    @property
    def violated(self) -> list[FindingRecord]:
        """The variants a counterexample violates."""
        return [entry for entry in self.data["findings"] if entry["violated"]]

    @property
    def survived(self) -> list[MutantRecord]:
        """The mutants nothing refuted (a check that cannot fail: a defect)."""
        return [row for row in self.data["mutants"] if not row["refuted"]]

    @property
    def status(self) -> int:
        """The command's exit status: 1 where a variant is violated or a mutant survived, else 0."""
        return int(bool(self.violated or self.survived))

    def table(self) -> Table:
        """One flat row per variant: statement, variant, default, worst ratio, violated, examples,
        undecided, search evaluations, the worst instance's certified outcome."""
        return Table({
            "statement": entry["statement"], "variant": entry["variant"], "default": entry["default"],
            "worst_ratio": entry["worst_ratio"], "violated": entry["violated"], "examples": entry["examples"],
            "undecided": entry["undecided"], "attained": entry.get("attained", 0),
            "search_evaluations": entry["search"]["evaluations"] if entry["search"] else 0,
            "certified": entry.get("certified_outcome"),
        } for entry in self.data["findings"])

    def finding(self, statement: str, variant: str | None = None) -> FindingRecord:
        """The record of ``statement``'s ``variant`` (default: the variant the proofs use)."""
        for entry in self.data["findings"]:
            if entry["statement"] == statement and (entry["variant"] == variant if variant else entry["default"]):
                return entry
        held = sorted({f"{e['statement']} [{e['variant']}]" for e in self.data["findings"]})
        raise ValueError(f"statement, variant: {statement!r} [{variant or 'default'}] is not in {self.path}; "
                         f"it holds {', '.join(held) or 'no finding'}")

    def worst_instance(self, statement: str, variant: str | None = None) -> Instance:
        """The instance behind the worst ratio of ``statement`` [``variant``], decoded exactly
        (floats from their ``float.hex``, arrays as numpy arrays)."""
        from sltcheck.harness.replay import decode

        entry = self.finding(statement, variant)
        if entry["instance"] is None:
            raise ValueError(f"statement: {statement!r} [{entry['variant']}] recorded no instance (nothing measured)")
        return decode(entry["instance"], self.path, f"{statement} [{entry['variant']}].instance")


@dataclass(frozen=True)
class ReplayResult:
    """What :func:`replay` re-decided. ``ok``: every recorded instance and number replays as recorded
    (the file is sealed and whole, and a recorded violation that replays as a violation is as
    recorded); ``status``: the exit status of ``sltcheck check --replay`` (1 also where a variant is
    violated or a mutant survives, as recorded: a result that needs attention); ``differences``: one
    line per field, record or digest that does not replay as recorded; ``rows``: one per replayed
    instance (its ratio and outcome at ``dps`` digits and the recorded fields that differ)."""

    path: Path
    status: int
    rows: Table = field(default_factory=Table)
    differences: list[str] = field(default_factory=list)
    replayed: int = 0

    @property
    def ok(self) -> bool:
        return not self.differences and self.replayed > 0


@dataclass(frozen=True)
class CertifyResult:
    """What a certify run holds (``OUT/certified.json``): one row per family, this run's and earlier ones'."""

    path: Path
    data: dict[str, Any]

    @property
    def families(self) -> Table:
        return Table(dict(entry) for entry in self.data["families"])

    def table(self) -> Table:
        """One flat row per family: statement, family, variant, verdict, the bracket of the supremum,
        the share of the volume proved, boxes."""
        return Table({
            "statement": e["statement"], "family": e["family"], "variant": e["variant"], "verdict": e["verdict"],
            "sup_lower": e["sup_lower"], "sup_upper": e["sup_upper"], "proven_fraction": e["proven_fraction"],
            "boxes": e["boxes"],
        } for e in self.data["families"])


def check(config: CheckConfig | None = None, /, *, verbosity: int = -1, **options: Any) -> CheckResult:
    """Check the paper's statements, as ``sltcheck check`` does, and return the findings.

    Give a :class:`~sltcheck.checking.CheckConfig` or its fields as keywords (``profile``, ``only``,
    ``seed``, ``search``, ``mutants``, ``power``, ``probability``, ``workers``, ``out``). The run
    directory ``out`` resumes and is never overwritten, as the command's. ``verbosity`` 0 shows the
    progress bars and tables, -1 (the default here) warnings only.
    """
    from sltcheck.checking import run

    if config is not None and not isinstance(config, CheckConfig):
        raise ValueError(f"config: give a CheckConfig (or keywords: check(profile={config!r}, ...)), got {config!r}")
    if isinstance(verbosity, bool) or verbosity not in (-1, 0, 1):
        raise ValueError(f"verbosity: must be -1 (warnings), 0 or 1, got {verbosity!r}")
    if config is None:
        unknown = sorted(set(options) - set(CheckConfig.__dataclass_fields__))
        if unknown:
            raise ValueError(f"options: {unknown[0]!r} is not an option of check; allowed: "
                             f"{', '.join(CheckConfig.__dataclass_fields__)}")
        config = CheckConfig(**options)
    elif options:
        raise ValueError(f"options: give a CheckConfig or keywords, not both (got {', '.join(sorted(options))})")
    data = run(config, verbosity=verbosity)
    return CheckResult(Path(config.out) / "findings.json", data)


def replay(path: str | Path, *, dps: int = 100, only: tuple[str, ...] | list[str] = (),
           allow_unsealed: bool = False) -> ReplayResult:
    """Re-decide every instance and number recorded in a findings file at ``dps`` digits, and check
    the whole file (its units, counts and derived numbers), as ``sltcheck check --replay`` does
    (:func:`sltcheck.rederive.replay_file`); ``allow_unsealed`` as ``--allow-unsealed``."""
    from sltcheck.numerics.defaults import REPLAY_DPS
    from sltcheck.rederive import replay_file
    from sltcheck.registry import STATEMENT_MODULES

    if isinstance(path, bool) or not isinstance(path, str | Path) or not str(path):
        raise ValueError(f"path: give the path of a findings.json (a str or pathlib.Path), got {path!r}")
    if isinstance(dps, bool) or not isinstance(dps, int) or not 15 <= dps <= 10_000:
        raise ValueError(f"dps: must be an integer from 15 to 10000, got {dps!r} (default {REPLAY_DPS})")
    if isinstance(only, str) or not isinstance(only, list | tuple):
        raise ValueError(f"only: give a list or tuple of statement names, got {only!r}")
    unknown = [name for name in only if name not in STATEMENT_MODULES]
    if unknown:
        raise ValueError(f"only: {unknown[0]!r} is not a statement; allowed: {', '.join(STATEMENT_MODULES)}")
    if not isinstance(allow_unsealed, bool):
        raise ValueError(f"allow_unsealed: must be true or false, got {allow_unsealed!r}")
    names = tuple(name for name in STATEMENT_MODULES if name in only)
    rows = Table()
    found = replay_file(Path(path), dps, names, rows=rows, allow_unsealed=allow_unsealed)
    return ReplayResult(Path(path), found.status, rows, list(found.differences), found.replayed)


def certify(config: CertifyConfig | None = None, /, **options: Any) -> CertifyResult:
    """Prove held (or a counterexample) over whole families of instances, as ``sltcheck certify`` does.

    Give a :class:`~sltcheck.certify.session.CertifyConfig` or its fields as keywords (``only``,
    ``family``, ``budget``, ``rounds``, ``out``, ``backend``, ``tolerance``, ...). Also callable as
    ``sltcheck.certify(...)``.
    """
    from sltcheck.certify.session import run

    if config is None:
        config = CertifyConfig(**options)
    elif options:
        raise ValueError(f"options: give a CertifyConfig or keywords, not both (got {', '.join(sorted(options))})")
    data = run(config)
    return CertifyResult(Path(config.out) / "certified.json", data)
