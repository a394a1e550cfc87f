"""Benchmark of ``sltcheck certify`` on the families with known answers (issue: proved, not sampled).

    python benchmarks/certify_families.py [--budget SECONDS] [--backends arb,arrays] [--out FILE] [KEY ...]

Each family runs once per backend of ``--backends`` that can enclose it (``arrays``, the batch engine,
only the vectorised families; default: the scalar default backend, arb where python-flint is
installed, and arrays), side by side in one run, in one fresh store per backend: the proven volume at
10, 30 and 60 s and at the end, boxes per second, verdict and bracket. A capped family (``Family.capped_by``)
runs after its cap in the same store: its wall time includes the cap's where this run starts the cap (not where
the cap was benchmarked before it), its proven volume over time is its own.

For each family: the verdict against the known answer, the certified bracket of the supremum of
measured / bound (beside the closed form where there is one, or the bracket of
``sltcheck.suprema``), the proven volume over time, boxes per second, and the load average of
the machine while it ran (the CPU may be shared: boxes/s is only comparable at equal load).
Lemma 8 and Lemma 5 (d1 = 1, T = 2, 3): the upper end must be within 1% of the closed form;
Lemma 13 as stated (T = 4): a certified counterexample, with no seed given (the run seeds itself with
the worst-case search restricted to the family); Lemma 13 as proven and Lemma 12: held; Lemma 7's
mutant ``bound-halved``: a counterexample; Lemmas 7 and 2, Theorems 9 and 11 (their attained
families): held on 100% with sup 1, through the families' arguments (:mod:`sltcheck.certify.arguments`).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from sltcheck.certify import families
from sltcheck.certify.run import certify_family
from sltcheck.certify.store import Store
from sltcheck.numerics.balls import BOX_BACKENDS, backend

DEFAULT = ("lemma12/d1-T4/as-stated", "lemma13/d1-T3/as-stated", "theorem14/B2-d1-T2/as-proven",
           "lemma8/d1-T2/as-stated", "lemma8/d1-T3/as-stated", "lemma5/d1-T2/as-stated", "lemma5/d1-T2/via-lemma8",
           "lemma5/d1-T3/as-stated", "lemma13/d1-T4/as-stated", "lemma7/targets-2x1-n4-source0/bound-halved",
           "lemma12/d1-T2/as-stated", "lemma13/d1-T2/as-proven",
           "lemma12/d1-T3/as-stated", "lemma13/d1-T3/as-proven", "lemma13/d1-T4/as-proven",
           "lemma7/targets-2x1-n4-source0/construction", "lemma2/targets-2x1-n4-source0/as-proven",
           "theorem9/d1-T2/as-proven", "theorem11/d1-T2-L1/as-proven")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("keys", nargs="*", default=list(DEFAULT))
    parser.add_argument("--budget", type=float, default=600.0, help="seconds per family (default 600)")
    parser.add_argument("--backends", default=f"{backend(None).name},arrays",
                        help="comma-separated backends, each family on each that can enclose it (default: the "
                             "scalar default and arrays)")
    parser.add_argument("--tolerance", type=float, default=0.01)
    parser.add_argument("--out", default=None, help="write the rows as JSON here")
    args = parser.parse_args()
    names = args.backends.split(",")
    for name in names:
        if name not in BOX_BACKENDS:
            raise SystemExit(f"--backends: each must be one of {', '.join(BOX_BACKENDS)}, got {name!r}")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        runs = [(key, name) for key in args.keys for name in names if name != "arrays" or families()[key].vectorised]
        for key, name in runs:
            family = families()[key]
            store = Store(Path(scratch) / f"{name}.sqlite")
            load_before = os.getloadavg()[0]
            start = time.perf_counter()
            if family.capped_by and store.recorded(family.capped_by) is None:  # its cap first (in its wall time)
                certify_family(families()[family.capped_by], store, backend_name=name, budget=args.budget,
                               tolerance=args.tolerance, search=True)
            entry = certify_family(family, store, backend_name=name, budget=args.budget,
                                   tolerance=args.tolerance, search=True)
            store.close()
            wall = time.perf_counter() - start
            known = family.known_supremum
            within = None if known is None or entry["sup_upper"] is None else entry["sup_upper"] / known - 1
            row = {"key": key, "expected": family.expected, "verdict": entry["verdict"],
                   "finished": entry["finished"], "sup_lower": entry["sup_lower"], "sup_upper": entry["sup_upper"],
                   "known_supremum": known, "upper_over_known_minus_1": within,
                   "proven_fraction": entry["proven_fraction"], "boxes": entry["boxes"],
                   "boxes_per_second": entry["boxes_per_second"], "wall_seconds": round(wall, 1),
                   "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
                   "backend": name, "found_by": (entry["counterexample"] or {}).get("found_by"),
                   "proven_at": {f"{at} s": proven_at(entry["progress"], at) for at in CHECKPOINTS},
                   "progress": entry["progress"]}
            rows.append(row)
            at = " ".join(f"{k} {v}" for k, v in row["proven_at"].items())
            print(f"{key:<28} {name:<7} expected {family.expected!s:<14} got {entry['verdict']:<14} proven at {at} "
                  f"sup in [{entry['sup_lower']}, {entry['sup_upper']}] known {known} "
                  f"(upper/known - 1 = {within}) proven {entry['proven_fraction']} "
                  f"{entry['boxes']} boxes {entry['boxes_per_second']} boxes/s {wall:.0f} s "
                  f"load {row['load_average']}", flush=True)
            if args.out:
                Path(args.out).write_text(json.dumps(rows, indent=1))


CHECKPOINTS = (10, 30, 60)


def proven_at(progress: list[list[float]], seconds: float) -> float | None:
    """The proven fraction of the last progress row at or before ``seconds`` (None: no row yet)."""
    before = [row[1] for row in progress if row[0] <= seconds]
    return round(before[-1], 4) if before else None


if __name__ == "__main__":
    main()
