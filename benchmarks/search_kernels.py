"""Search power under several float64 kernel sets and torch builds, side by side in one run.

    python benchmarks/search_kernels.py [--profile ci] [--python PY ...] [--kernels native haswell second]
                                        [--out power-kernels.json]

A float64 climb is chaotic: the same seed can end in another basin when a reduction rounds its
last bit differently. The search is built so that its power does not depend on that (scalar fields
kept where float64 resolves the measured side, ratios compared at ``RANK_DIGITS``, the fractions of
structured shapes scanned on a fixed grid before they climb); this script measures whether it holds.
For every interpreter given (each with its own torch build) and every kernel set it runs, in a fresh
subprocess, the power table (:func:`sltcheck.harness.power.table`: every known supremum or bracket)
and Lemma 13's two searches (as stated and as proven, against their proved suprema 25/24 and 25/48),
then prints one row per case with the power in each environment and the least of each column.

Kernel sets:

- ``native``: this CPU's own kernels (numpy's dispatch, OpenBLAS's core, torch's ATen capability);
- ``haswell``: OpenBLAS's AVX2 kernels only (``OPENBLAS_CORETYPE=Haswell``): what OpenBLAS runs on an
  AMD EPYC or any AVX2 machine, the environment in which Lemma 13's ci search once reached 1.0313;
- ``second``: ``.ci/second_kernels.py``'s narrowed set (numpy at its baseline, OpenBLAS one step down,
  torch's ATen at ``default``, MKL at SSE4.2, numba generic), what ``tox -e kernels`` runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ("native", "haswell", "second")
# Lemma 13's proved suprema (sltcheck.statements.lemma13.worst_case): measured / bound as stated and as proven.
LEMMA13 = {"as-stated": Fraction(25, 24), "as-proven": Fraction(25, 48)}


def environment(kernels: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if kernels == "haswell":
        env["OPENBLAS_CORETYPE"] = "Haswell"
    elif kernels == "second":
        spec = importlib.util.spec_from_file_location("second_kernels", ROOT / ".ci" / "second_kernels.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        env = {**module.narrowed_environment(), "PYTHONHASHSEED": "0"}
    elif kernels != "native":
        raise ValueError(f"kernels must be one of {', '.join(KERNELS)}, got {kernels!r}")
    return env


def worker(profile: str, seed: int, only: list[str] | None) -> None:
    """In the child: every power case and Lemma 13's two searches, one JSON line each, then the build."""
    import numpy
    import threadpoolctl

    from sltcheck.harness import power
    from sltcheck.harness.search import search_worst_case
    from sltcheck.registry import STATEMENT_MODULES

    for statement in only or STATEMENT_MODULES:
        for index, case in enumerate(power.cases(statement)):
            row = power.measure(statement, case, profile=profile, seed=seed)
            print(json.dumps({"case": f"{statement} power case {index + 1} ({row['kind']})", "power": row["power"],
                              "seconds": row["seconds"], "fixed": repr(row["fixed"])}), flush=True)
    for variant, supremum in LEMMA13.items() if not only or "lemma13" in only else ():
        began = time.perf_counter()
        found = search_worst_case("lemma13", variant, profile=profile, seed=seed)
        print(json.dumps({"case": f"lemma13 {variant} (sup {supremum})", "power": found.ratio / float(supremum),
                          "seconds": round(time.perf_counter() - began, 2), "verdict": found.verdict.violated}),
              flush=True)
    try:
        import torch

        build = torch.__version__
    except ImportError:
        build = "none"
    cores = sorted({i.get("architecture") or "?" for i in threadpoolctl.threadpool_info()
                    if i.get("internal_api") == "openblas"})
    print(json.dumps({"build": {"torch": build, "numpy": numpy.__version__, "openblas": cores,
                                "aten": os.environ.get("ATEN_CPU_CAPABILITY", "native")}}), flush=True)


def run(python: str, kernels: str, profile: str, seed: int, only: list[str] | None) -> dict:
    """One column: the worker in a fresh process, each row echoed to stderr as it comes."""
    began = time.perf_counter()
    command = [python, __file__, "--worker", "--profile", profile, "--seed", str(seed)]
    command += ["--only", *only] if only else []
    child = subprocess.Popen(command, env=environment(kernels), stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    rows = []
    for line in child.stdout:
        if line.startswith("{"):
            rows.append(json.loads(line))
            print(f"search_kernels: [{kernels}] {line.strip()}", file=sys.stderr, flush=True)
    if child.wait():
        raise SystemExit(f"search_kernels: {python} with {kernels} kernels failed (exit {child.returncode})")
    build = next(row["build"] for row in rows if "build" in row)
    return {"python": python, "kernels": kernels, "build": build, "seconds": round(time.perf_counter() - began),
            "rows": [row for row in rows if "case" in row]}


def table(columns: list[dict]) -> str:
    heads = [f"{c['kernels']}, torch {c['build']['torch']}" for c in columns]
    lines = ["| case | " + " | ".join(heads) + " |", "|---|" + "---:|" * len(heads)]
    cases = [row["case"] for row in columns[0]["rows"]]
    for case in cases:
        cells = []
        for column in columns:
            power = next(row["power"] for row in column["rows"] if row["case"] == case)
            cells.append("-" if power is None else f"{power:.6f}")
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    least = [min(row["power"] for row in c["rows"] if row["power"] is not None) for c in columns]
    lines.append("| **least** | " + " | ".join(f"**{v:.6f}**" for v in least) + " |")
    lines.append("| seconds | " + " | ".join(str(c["seconds"]) for c in columns) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--python", nargs="+", default=[sys.executable], help="interpreters, one per torch build")
    parser.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=KERNELS)
    parser.add_argument("--only", nargs="+", help="these statements' power cases (and Lemma 13's searches where named)")
    parser.add_argument("--out", type=Path, help="also write every column as JSON here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.profile, args.seed, args.only)
        return 0
    columns = []
    for python in args.python:
        for kernels in args.kernels:
            columns.append(run(python, kernels, args.profile, args.seed, args.only))
            print(f"search_kernels: {kernels} kernels, torch {columns[-1]['build']['torch']}: least power "
                  f"{min(r['power'] for r in columns[-1]['rows'] if r['power'] is not None):.6f} "
                  f"({columns[-1]['seconds']} s)", file=sys.stderr, flush=True)
    print(f"profile {args.profile}, seed {args.seed}; power = best found / known (a bracket: best measured / "
          f"its lower end)")
    print(table(columns))
    if args.out:
        args.out.write_text(json.dumps({"profile": args.profile, "seed": args.seed, "columns": columns}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
