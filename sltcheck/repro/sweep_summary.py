"""A synthetic sweep's summary: mean and standard deviation per point, the fits, every violation.

:func:`summarise` turns the records of every source (:mod:`sltcheck.repro.source_check`) into the
``summary.json`` of a run; :func:`fits_of` fits the error against the width (:mod:`sltcheck.repro.fits`)
per figure, for any reading of the error (``ERRORS``) and any fit.
"""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np

from sltcheck.repro.fits import PAPER_FIT, WORKSHOP_FIT, fit
from sltcheck.repro.sweep_config import ERRORS, VERDICT_DPS, SweepConfig
from sltcheck.schema import SCHEMA_VERSION

# The fields of a source's record that the summary reads (sltcheck.repro.source_check writes them).
RECORD_FIELDS = ("blocks", "length", "width", "ratio", "bound", "violated", "undecided", "holds", "seconds",
                 ERRORS["max"][0])


def stored_records(rows: list[tuple[str, dict[str, Any]]], store: str) -> list[dict[str, Any]]:
    """The records of a sweep's rows (key, row), each row checked: a list of records, each with the
    fields the summary reads; anything else is one error naming the store, the row and the field."""
    from sltcheck.errors import StoredResultError

    found = []
    for key, row in rows:
        records = row.get("records")
        where = f"results store {store!r}: the row {key!r}"
        if not isinstance(records, list) or not records or not all(isinstance(r, dict) for r in records):
            raise StoredResultError(f"{where} holds no records (a non-empty list of objects, one per checked "
                                    f"source), got {str(records)[:60]!r}; move the store away to start over")
        for record in records:
            missing = [name for name in RECORD_FIELDS if name not in record]
            if missing:
                raise StoredResultError(f"{where} has a record without {', '.join(map(repr, missing))}; move the "
                                        "store away to start over")
        found += records
    return found


def summarise(config: SweepConfig, records: list[dict[str, Any]],
              target_norms: dict[int, dict[str, float]]) -> dict[str, Any]:
    """Mean and standard deviation per point, fits, and every violation."""
    points = []
    groups: dict[tuple[int, int, int], list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault((record["blocks"], record["length"], record["width"]), []).append(record)
    for (blocks, length, width), group in sorted(groups.items()):
        ratios = np.array([r["ratio"] for r in group], dtype=float)
        by_definition = {name: _mean_std([r[field] for r in group]) for name, (field, _) in ERRORS.items()
                         if all(field in r for r in group)}
        points.append({
            "blocks": blocks, "length": length, "width": width, "sources": len(group),
            **by_definition["max"], "errors": by_definition,
            "max_ratio": float(ratios.max()),
            "mean_bound": json_number(mpmath.fsum(mpmath.mpf(r["bound"]) for r in group) / len(group)),
        })
    from sltcheck.repro.input_space_summary import summarise_input_space

    violations = [r for r in records if r["violated"]]
    vacuous = [r for r in records if r.get("vacuous")]
    brackets = summarise_input_space(records)
    return {
        "schema_version": SCHEMA_VERSION,
        "figure": config.figure, "config": config.as_record(), "points": points,
        "fits": fits_of(config, points), "paper_fit": PAPER_FIT, "workshop_fit": WORKSHOP_FIT,
        "checked": len(records), "violations": violations,
        "undecided": sum(bool(r["undecided"]) for r in records),
        # A bound at or above the trivial bound max_i ||S(x_i)|| + ||T(x_i)|| cannot be violated.
        "vacuous": len(vacuous),
        "held": sum(bool(r["holds"]) and not r.get("vacuous") for r in records),
        "least_bound_over_trivial": _least_over_trivial(vacuous),
        "worst_ratio": max((float(r["ratio"]) for r in records), default=None),
        "target_norms": {str(b): n for b, n in target_norms.items()},
        "norm_policy": config.norm_policy,
        "bound_variants": sorted({str(r.get("bound_variant", "as-proven")) for r in records}),
        **({"input_space": brackets} if brackets is not None else {}),
    }


def _mean_std(values: list[float]) -> dict[str, float]:
    array = np.asarray(values, dtype=float)
    return {"mean": float(array.mean()), "std": float(array.std(ddof=1)) if array.size > 1 else 0.0}


def _least_over_trivial(vacuous: list[dict[str, Any]]) -> float | str | None:
    """The smallest bound / trivial bound among vacuous checks: every vacuous bound exceeds the
    trivial one at least this many times."""
    if not vacuous:
        return None
    with mpmath.workdps(VERDICT_DPS):
        least = min(mpmath.mpf(r["bound_over_trivial"]) for r in vacuous)
        return json_number(least) if mpmath.isfinite(least) else "inf"


def json_number(value: Any) -> float | str:
    """A float where float64 holds it, else the decimal string (strict JSON has no Infinity;
    Theorem 14's bounds reach 1e400 and beyond). ``float()`` reads either."""
    as_float = float(value)
    return as_float if np.isfinite(as_float) else mpmath.nstr(value, 6)


def fits_of(config: SweepConfig, points: list[dict[str, Any]], records: list[dict[str, Any]] | None = None,
            error: str = "max", kind: str = "linear", widths: tuple[int, int] | None = None) -> dict[str, Any]:
    """The figure's fits (Figure 4: one; Figure 5: one per length; Figure 6: one per block count,
    delta fitted on the first and shared) of the error ``error`` (``ERRORS``) with the fit
    ``kind`` (``sltcheck.repro.fits.FITS``; ``per-source`` needs ``records``), over the
    widths from ``widths[0]`` to ``widths[1]`` (default: every width)."""
    field = ERRORS[error][0]

    def fit_of(selected: list[dict[str, Any]], delta: float | None = None) -> dict[str, Any] | None:
        if widths is not None:
            selected = [p for p in selected if widths[0] <= p["width"] <= widths[1]]
        if len(selected) < 2:
            return None
        n = np.array([p["width"] for p in selected], dtype=float)
        eps = np.array([p["errors"][error]["mean"] if "errors" in p else p["mean"] for p in selected], dtype=float)
        per_source = None
        if kind == "per-source":
            per_source = [np.array([r[field] for r in records or () if (r["blocks"], r["length"], r["width"])
                                    == (p["blocks"], p["length"], p["width"])], dtype=float) for p in selected]
        try:
            return fit(kind, n, eps, per_source, delta).as_dict()
        except (RuntimeError, ValueError) as failure:  # a degenerate curve has no fit
            return {"error": str(failure)}

    if config.figure == "fig4":
        return {"all": fit_of(points)}
    if config.figure == "fig5":
        return {f"T={length}": fit_of([p for p in points if p["length"] == length]) for length in config.lengths}
    first = fit_of([p for p in points if p["blocks"] == config.blocks[0]])
    shared = first.get("delta") if first else None
    fits = {f"B={config.blocks[0]}": first}
    for blocks in config.blocks[1:]:
        fits[f"B={blocks}"] = fit_of([p for p in points if p["blocks"] == blocks],
                                     delta=shared if isinstance(shared, float) and kind != "log-linear" else None)
    return fits
