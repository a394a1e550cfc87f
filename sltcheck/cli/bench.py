"""``sltcheck bench solvers``: every subset-sum solver on the same random instances.

Instances are those of Lemma 7 (Appendix A.1): a target w ~ U[-1, 1] and n'
candidates v u with v, u ~ U[-1, 1] independent. Each solver gets every instance
of every size; per size we report the median and max wall time per problem,
the achieved error (recomputed exactly from the returned mask), how often the
solver proved optimality, and how often its error exceeds the exact optimum
found by ``mitm``. MIP solvers run with their default parameters except a time
limit per problem (``--time-limit``), without which Gurobi and HiGHS may not
return at n' >= 40; the table marks sizes where that limit was reached.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

import numpy as np

from sltcheck.pruning.subset_sum import (
    BRUTE_MAX_CANDIDATES,
    MITM_MAX_CANDIDATES,
    SOLVERS,
    MIPOptions,
    available_solvers,
    solve_subset_sum,
)

MIP_SOLVERS = ("gurobi", "highs", "cvxpy")
MAX_SIZE = 10_000  # candidates n' per problem (Lemma 7 needs tens; the MIP solvers slow down far earlier)


def instances(size: int, problems: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Targets (P,) and candidates (P, size), the same for every solver; seeded per size."""
    rng = np.random.default_rng([seed, size])
    targets = rng.uniform(-1.0, 1.0, problems)
    candidates = rng.uniform(-1.0, 1.0, (problems, size)) * rng.uniform(-1.0, 1.0, (problems, size))
    return targets, candidates


def benchmark_solvers(
    sizes: list[int], problems: int, seed: int, solvers: list[str], time_limit: float
) -> dict[str, Any]:
    reasons = available_solvers()
    skipped = {name: reasons[name] for name in solvers if reasons[name] is not None}
    for name, reason in skipped.items():
        print(f"note: skipping solver {name!r}: {reason}")
    runnable = [name for name in solvers if name not in skipped]
    rows: list[dict[str, Any]] = []
    for size in sizes:
        targets, candidates = instances(size, problems, seed)
        exact = solve_subset_sum(targets, candidates, "mitm") if size <= MITM_MAX_CANDIDATES else None
        optimum = None if exact is None else exact.exact_errors
        for name in runnable:
            if (name == "brute" and size > BRUTE_MAX_CANDIDATES) or (name == "mitm" and exact is None):
                continue
            options = MIPOptions(time_limit=time_limit) if name in MIP_SOLVERS else None
            # mitm's timed run is the one that gave the optimum
            result = exact if name == "mitm" and exact is not None else solve_subset_sum(
                targets, candidates, name, options=options
            )
            times = result.problem_times.tolist()
            worse = None if optimum is None else sum(e > o for e, o in zip(result.exact_errors, optimum, strict=True))
            rows.append({
                "size": size,
                "solver": name,
                "problems": problems,
                "median_time_s": statistics.median(times),
                "max_time_s": max(times),
                "median_error": float(np.median(result.errors)),
                "max_error": float(result.errors.max()),
                "proven_optimal": int(result.proven_optimal.sum()),
                "optimality_exact": result.optimality_exact,
                "worse_than_optimum": worse,
                "time_limit_s": time_limit if name in MIP_SOLVERS else None,
                "hit_time_limit": int(sum(t >= 0.95 * time_limit for t in times)) if name in MIP_SOLVERS else 0,
                "times_s": times,
                "errors": result.errors.tolist(),
                "solver_objective": [None if np.isnan(v) else float(v) for v in result.solver_objective],
            })
            print(f"  n'={size:>2} {name:<7} done: median {statistics.median(times):.2e} s", flush=True)
    return {
        "instances": "w ~ U[-1,1], candidates v*u with v, u ~ U[-1,1] (Lemma 7)",
        "sizes": sizes,
        "problems": problems,
        "seed": seed,
        "mip_time_limit_s": time_limit,
        "skipped": skipped,
        "results": rows,
        "gurobi_over_mitm": _ratios(rows, "gurobi"),
    }


def _ratios(rows: list[dict[str, Any]], solver: str) -> dict[str, dict[str, float]]:
    """Per size: median of the per-problem time ratios, and the ratio of the median times."""
    ratios: dict[str, dict[str, float]] = {}
    by_key = {(row["size"], row["solver"]): row for row in rows}
    for size in sorted({row["size"] for row in rows}):
        if (size, solver) in by_key and (size, "mitm") in by_key:
            other, mitm = by_key[(size, solver)], by_key[(size, "mitm")]
            per_problem = [a / b for a, b in zip(other["times_s"], mitm["times_s"], strict=True)]
            ratios[str(size)] = {
                "median_of_ratios": statistics.median(per_problem),
                "min_ratio": min(per_problem),
                "ratio_of_medians": other["median_time_s"] / mitm["median_time_s"],
            }
    return ratios


def format_table(report: dict[str, Any]) -> str:
    header = (
        f"{'n_prime':>7} {'solver':<7} {'median s':>10} {'max s':>10} {'median err':>11} {'max err':>10} "
        f"{'proved':>7} {'worse':>6} {'timeouts':>8}"
    )
    lines = [header, "-" * len(header)]
    for row in report["results"]:
        proved = f"{row['proven_optimal']}/{row['problems']}" + ("" if row["optimality_exact"] else "*")
        worse = "-" if row["worse_than_optimum"] is None else str(row["worse_than_optimum"])
        lines.append(
            f"{row['size']:>7} {row['solver']:<7} {row['median_time_s']:>10.2e} {row['max_time_s']:>10.2e} "
            f"{row['median_error']:>11.2e} {row['max_error']:>10.2e} {proved:>7} {worse:>6} {row['hit_time_limit']:>8}"
        )
    lines.append("proved: exact certificate; '*' = the solver's OPTIMAL status, which holds only up to its "
                 "MIPGap/FeasibilityTol/IntFeasTol")
    lines.append("worse: problems whose exactly recomputed error exceeds the exact optimum (mitm)")
    if report["gurobi_over_mitm"]:
        lines.append("")
        lines.append(f"{'n_prime':>7} {'gurobi/mitm (median of per-problem ratios)':>44} {'min ratio':>10}")
        for size, ratio in report["gurobi_over_mitm"].items():
            lines.append(f"{size:>7} {ratio['median_of_ratios']:>44.1f} {ratio['min_ratio']:>10.1f}")
    return "\n".join(lines)


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values or any(not 1 <= v <= MAX_SIZE for v in values):
        raise argparse.ArgumentTypeError(f"expected integers from 1 to {MAX_SIZE}, got {text!r}")
    return values


def _solver_list(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in SOLVERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"solvers must be among {', '.join(SOLVERS)}, got {text!r}")
    return names


def planned_runs(sizes: list[int], solvers: list[str]) -> list[tuple[int, str]]:
    """The (size, solver) pairs within each solver's cap (brute and mitm are exponential)."""
    caps = {"brute": BRUTE_MAX_CANDIDATES, "mitm": MITM_MAX_CANDIDATES}
    return [(size, name) for size in sizes for name in solvers if size <= caps.get(name, size)]


MAX_PROBLEMS = 100_000


def run(args: argparse.Namespace) -> int:
    from sltcheck.errors import UsageError
    from sltcheck.jsonfiles import write_json_atomic
    from sltcheck.rundir import ensure_writable_file
    from sltcheck.schema import json_safe

    if not 1 <= args.problems <= MAX_PROBLEMS:
        raise UsageError(f"--problems must be an integer from 1 to {MAX_PROBLEMS}, got {args.problems}")
    if not args.time_limit > 0:
        raise UsageError(f"--time-limit must be a positive number of seconds, got {args.time_limit}")
    if not planned_runs(args.sizes, args.solvers):
        raise UsageError(f"nothing to run: every --sizes value ({', '.join(map(str, args.sizes))}) is over the cap of "
                         f"each --solvers ({', '.join(args.solvers)}): brute takes n' <= {BRUTE_MAX_CANDIDATES}, "
                         f"mitm n' <= {MITM_MAX_CANDIDATES}")
    if args.out is not None:
        ensure_writable_file(args.out)
    report = benchmark_solvers(args.sizes, args.problems, args.seed, args.solvers, args.time_limit)
    print(format_table(report))
    if args.out is not None:
        write_json_atomic(args.out, json_safe(report))
        print(f"wrote {args.out}")
    if not report["results"]:
        print("nothing was run: every solver asked for was skipped (see the notes above)", file=sys.stderr)
        return 1
    return 0


def register(cli: Any) -> None:
    parser = cli.command(
        "solvers", help="time every subset-sum solver on the same random instances", handler=run, group="bench"
    )
    parser.add_argument("--out", default=None, help="write the full results as JSON to this file")
    parser.add_argument("--sizes", type=_int_list, default=[8, 16, 24, 32, 40, 48],
                        help="comma-separated numbers of candidates n' (default 8,16,24,32,40,48)")
    parser.add_argument("--problems", type=int, default=5, help="random instances per size (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the instances (default 0)")
    parser.add_argument("--solvers", type=_solver_list, default=list(SOLVERS),
                        help=f"comma-separated subset of {','.join(SOLVERS)} (default all)")
    parser.add_argument("--time-limit", type=float, default=10.0,
                        help="time limit per problem for the MIP solvers, seconds (default 10)")
