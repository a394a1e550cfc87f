"""``sltcheck bench solvers``: every subset-sum solver on the same random instances.

Instances (``--distribution``, :mod:`sltcheck.pruning.subset_sum_instances`): ``uniform``, Lemma 7's
(Appendix A.1: w ~ U[-1, 1], n' candidates v u with v, u ~ U[-1, 1]); ``xavier``, paper mode's
(Appendix B.1: Xavier-uniform factors, targets inside, near and beyond the reach in equal
thirds); ``theory``, Section 3.1's (v ~ U[-n'^(1/4), n'^(1/4)], u ~ U[-1, 1]). Each solver
gets every instance of every size; per size we report the median and max wall time per
problem, the achieved error (recomputed exactly from the returned mask), the certificates
counted per kind (proven optimal, proven at the float64 floor, a proven gap where the time
limit ran out, a MIP solver's own OPTIMAL status, none), the peak Python-heap memory of a
problem (tracemalloc, in a separate untimed run over every problem of the size: numpy's
buffers are counted, a MIP solver's native memory is not; for a MIP solver the first problem
only), and how often its error exceeds the reference: the ``exact`` solver's certified
answer. MIP solvers run with their default parameters except a time limit per problem
(``--time-limit``), without which Gurobi and HiGHS may not return at n' >= 40; ``exact`` and
``fast`` get the same limit (a problem that reaches it gets the certificate "gap" with a
proven lower bound); the table marks problems that reached it.

The ratio table compares every solver with Gurobi-default on the same instances:
the median over problems of Gurobi's time / the solver's time (also per region of the
target against its reach), and on how many problems the solver's exact error is <=
Gurobi's. A compiled kernel (numba) is compiled before any timing. The date and the command go
with the numbers, in the JSON and in the section of ``docs/results/solvers.md`` that ``--readme``
rewrites (one section per distribution); the JSON also keeps the machine's load average at the start
and end of the run (other processes slow every solver).
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import shlex
import statistics
import sys
import time
import tracemalloc
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from sltcheck.pruning.solver_names import (
    BRUTE_MAX_CANDIDATES,
    CERTIFICATES,
    MIP_SOLVERS,
    MITM_MAX_CANDIDATES,
    SOLVERS,
)

# The parser needs only the solvers' names; the solvers (numba, mpmath, scipy) are imported when run.
from sltcheck.pruning.subset_sum_instances import DISTRIBUTIONS, REGIONS, draw, region

if TYPE_CHECKING:
    from sltcheck.pruning.subset_sum import MIPOptions
MAX_SIZE = 10_000  # candidates n' per problem (Lemma 7 needs tens; the MIP solvers slow down far earlier)


def _limit(name: str, size: int) -> str | None:
    if name == "brute" and size > BRUTE_MAX_CANDIDATES:
        return f"brute allows n' <= {BRUTE_MAX_CANDIDATES}"
    if name == "mitm" and size > MITM_MAX_CANDIDATES:
        return f"mitm allows n' <= {MITM_MAX_CANDIDATES}"
    return None


def _peak_memory_mb(targets: np.ndarray, candidates: np.ndarray, name: str, options: MIPOptions | None) -> float:
    """The largest tracemalloc peak of one problem (every problem of the size; a MIP solver's first only)."""
    from sltcheck.pruning.subset_sum import solve_subset_sum

    peak = 0.0
    for p in range(1 if name in MIP_SOLVERS else targets.size):
        tracemalloc.start()
        try:
            solve_subset_sum(targets[p:p + 1], candidates[p:p + 1], name, options=options)
            peak = max(peak, tracemalloc.get_traced_memory()[1] / 2**20)
        finally:
            tracemalloc.stop()
    return peak


def _warm_up() -> None:
    """Compile the kernels (numba) before anything is timed."""
    from sltcheck.pruning.subset_sum import solve_subset_sum

    rng = np.random.default_rng(0)
    for size in (8, 30, 70, 200):  # 200: the window search of fast mode (n' >= 128)
        solve_subset_sum(rng.uniform(-1, 1, 1), rng.uniform(-1, 1, (1, size)), "fast")


def _max_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def benchmark_solvers(
    sizes: list[int], problems: int, seed: int, solvers: list[str], time_limit: float,
    memory: bool = True, distribution: str = "uniform",
) -> dict[str, Any]:
    from sltcheck.pruning.subset_sum import MIPOptions, available_solvers, solve_subset_sum

    started = datetime.datetime.now(datetime.UTC)
    load_start = os.getloadavg()[0]
    reasons = available_solvers()
    skipped = {name: reasons[name] for name in solvers if reasons[name] is not None}
    for name, reason in skipped.items():
        print(f"note: skipping solver {name!r}: {reason}")
    runnable = [name for name in solvers if name not in skipped]
    _warm_up()
    rows: list[dict[str, Any]] = []
    limits: dict[str, str] = {}
    options = MIPOptions(time_limit=time_limit)  # exact and fast take it too: "gap" where it runs out
    for size in sizes:
        targets, candidates = draw(distribution, size, problems, seed)
        regions = [region(float(targets[p]), candidates[p]) for p in range(problems)]
        results = {}
        for name in runnable:
            reason = _limit(name, size)
            if reason is not None:
                limits[f"{name}@{size}"] = reason
                continue
            tick = time.perf_counter()
            results[name] = solve_subset_sum(targets, candidates, name, options=options)
            print(f"  n'={size:>4} {name:<7} done in {time.perf_counter() - tick:.1f} s", flush=True)
        reference = results.get("exact")
        for name, result in results.items():
            times = result.problem_times.tolist()
            limited = name in MIP_SOLVERS or name in ("exact", "fast")
            worse = None if reference is None else sum(
                e > o for e, o in zip(result.exact_errors, reference.exact_errors, strict=True)
            )
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
                "certificates": {c: result.certificates.count(c) for c in CERTIFICATES},
                "memory_peak_mb": _peak_memory_mb(targets, candidates, name, options) if memory else None,
                "worse_than_exact": worse,
                "time_limit_s": time_limit if limited else None,
                "hit_time_limit": int(sum(t >= 0.95 * time_limit for t in times)) if limited else 0,
                "regions": regions,
                "certificate_of_each": list(result.certificates),
                "lower_bounds": [None if b is None else str(b) for b in result.lower_bounds],
                "times_s": times,
                "errors": result.errors.tolist(),
                "exact_errors": [str(e) for e in result.exact_errors],
                "floors": list(result.floors),
                "solver_objective": [None if np.isnan(v) else float(v) for v in result.solver_objective],
            })
    from sltcheck.schema import SCHEMA_VERSION

    return {
        "schema_version": SCHEMA_VERSION,
        "date": f"{started:%Y-%m-%d %H:%M} UTC",
        "load_average": {"start": load_start, "end": os.getloadavg()[0]},
        "cpus": os.cpu_count(),
        "distribution": distribution,
        "instances": INSTANCES[distribution],
        "max_rss_mb": _max_rss_mb(),
        "sizes": sizes,
        "problems": problems,
        "seed": seed,
        "mip_time_limit_s": time_limit,
        "skipped": skipped,
        "not_run": limits,
        "results": rows,
        "over_gurobi": {name: _ratios(rows, name) for name in runnable if name != "gurobi"},
    }


INSTANCES = {
    "uniform": "w ~ U[-1,1], candidates v*u with v, u ~ U[-1,1] (Lemma 7)",
    "xavier": "candidates v*u with v, u ~ U[-b,b], b = sqrt(6/(n'+2)) (Xavier, Appendix B.1); |w| = f * reach "
              "on a random side, f ~ U[0,0.9) / U[0.9,1.1) / U[1.1,1.5) for problems p = 0 / 1 / 2 mod 3",
    "theory": "w ~ U[-1,1], candidates v*u with v ~ U[-n'^(1/4), n'^(1/4)], u ~ U[-1,1] (Section 3.1)",
}


def _ratios(rows: list[dict[str, Any]], solver: str) -> dict[str, dict[str, Any]]:
    """Per size: Gurobi's time over the solver's (median and min of the per-problem ratios, ratio
    of the medians, the median per region of the targets) and the number of problems where the
    solver's exact error is <= Gurobi's."""
    ratios: dict[str, dict[str, Any]] = {}
    by_key = {(row["size"], row["solver"]): row for row in rows}
    for size in sorted({row["size"] for row in rows}):
        if (size, "gurobi") in by_key and (size, solver) in by_key:
            gurobi, other = by_key[(size, "gurobi")], by_key[(size, solver)]
            per_problem = [g / max(o, 1e-9) for g, o in zip(gurobi["times_s"], other["times_s"], strict=True)]
            not_worse = sum(
                Fraction(o) <= Fraction(g) for o, g in zip(other["exact_errors"], gurobi["exact_errors"], strict=True)
            )
            by_region = {
                name: statistics.median([r for r, where in zip(per_problem, other["regions"], strict=True)
                                         if where == name])
                for name in REGIONS if name in other["regions"]
            }
            ratios[str(size)] = {
                "median_of_ratios": statistics.median(per_problem),
                "min_ratio": min(per_problem),
                "ratio_of_medians": gurobi["median_time_s"] / max(other["median_time_s"], 1e-9),
                "error_not_worse": not_worse,
                "problems": len(per_problem),
                "median_of_ratios_by_region": by_region,
                "problems_by_region": {name: other["regions"].count(name) for name in by_region},
            }
    return ratios


def format_table(report: dict[str, Any]) -> str:
    header = (
        f"{'n_prime':>7} {'solver':<7} {'median s':>10} {'max s':>10} {'median err':>11} {'max err':>10} "
        f"{'optimal':>8} {'floor':>6} {'gap':>4} {'none':>5} {'MB':>7} {'worse':>6} {'timeouts':>8}"
    )
    lines = [header, "-" * len(header)]
    for row in report["results"]:
        certificates = row["certificates"]
        proved = f"{certificates['optimal']}" if row["optimality_exact"] else f"{certificates['mip-optimal']}*"
        worse = "-" if row["worse_than_exact"] is None else str(row["worse_than_exact"])
        memory = "-" if row["memory_peak_mb"] is None else f"{row['memory_peak_mb']:.1f}"
        lines.append(
            f"{row['size']:>7} {row['solver']:<7} {row['median_time_s']:>10.2e} {row['max_time_s']:>10.2e} "
            f"{row['median_error']:>11.2e} {row['max_error']:>10.2e} {proved:>8} {certificates['float64-floor']:>6} "
            f"{certificates['gap']:>4} {certificates['none']:>5} {memory:>7} {worse:>6} {row['hit_time_limit']:>8}"
        )
    lines.append("optimal: proven optimal exactly; '*' = the MIP solver's OPTIMAL status, which holds only up to "
                 "its MIPGap/FeasibilityTol/IntFeasTol")
    lines.append("floor: exact error <= the float64 floor (n'+4) u (|w| + sum|a|); gap: the time limit (exact, "
                 "fast) or fast's tolerance ran out, with a proven lower bound; none: no certificate")
    lines.append("MB: peak Python-heap memory of a problem, the largest over the size's problems (MIP solvers: the "
                 "first only, their native memory not counted)")
    lines.append("worse: problems whose exactly recomputed error exceeds the exact solver's certified one")
    for name, ratios in report["over_gurobi"].items():
        if not ratios:
            continue
        lines.append("")
        lines.append(f"{'n_prime':>7} {'gurobi/' + name + ' time (median of per-problem ratios)':>48} "
                     f"{'min ratio':>10} {'error <= gurobi':>16}   by region: median ratio (problems)")
        for size, ratio in ratios.items():
            regions = "  ".join(f"{where} {value:.1f} ({ratio['problems_by_region'][where]})"
                                for where, value in ratio["median_of_ratios_by_region"].items())
            lines.append(f"{size:>7} {ratio['median_of_ratios']:>48.1f} {ratio['min_ratio']:>10.1f} "
                         f"{ratio['error_not_worse']:>10}/{ratio['problems']}   {regions}")
    return "\n".join(lines)


README_START = "<!-- sltcheck bench solvers: start -->"
README_END = "<!-- sltcheck bench solvers: end -->"


def readme_markers(distribution: str) -> tuple[str, str]:
    """The README lines around one distribution's tables (``uniform`` keeps the original ones)."""
    if distribution == "uniform":
        return README_START, README_END
    return (f"<!-- sltcheck bench solvers --distribution {distribution}: start -->",
            f"<!-- sltcheck bench solvers --distribution {distribution}: end -->")


def _has_a_section(path: Any) -> None:
    """--readme's check before any work: the file holds the markers of at least one distribution's section."""
    from sltcheck.readme_section import section_problem

    text = path.read_text(encoding="utf-8", errors="replace")
    problems = [section_problem(text, start, end) for start, end in map(readme_markers, DISTRIBUTIONS)]
    if None not in problems:
        raise ValueError(f"holds no section it could rewrite (e.g. between {README_START!r} and {README_END!r}: "
                         f"it {problems[0]})")


def readme_text(report: dict[str, Any], command: str) -> str:
    """The README's performance numbers: by which command, when, on how many CPUs, then the tables (the
    machine's load stays in the JSON: times vary with it, the ratios compare solvers in one process)."""
    return (
        f"Generated by `{command}` on {report['date']}, {report['cpus']} CPUs (times vary with the machine "
        "and what else runs on it; the ratios compare solvers on the same instances in one process); "
        f"peak resident memory of the whole run {report['max_rss_mb']:.0f} MB.\n\n"
        f"```text\n{format_table(report)}\n```\n"
    )


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

    if not planned_runs(args.sizes, args.solvers):
        raise UsageError(f"nothing to run: every --sizes value ({', '.join(map(str, args.sizes))}) is over the cap of "
                         f"each --solvers ({', '.join(args.solvers)}): brute takes n' <= {BRUTE_MAX_CANDIDATES}, "
                         f"mitm n' <= {MITM_MAX_CANDIDATES}")
    if args.out is not None:
        ensure_writable_file(args.out)
    start, end = readme_markers(args.distribution)
    if args.readme is not None:  # the option's validator saw some section; this run needs its own
        from sltcheck.readme_section import section_problem

        with open(args.readme, encoding="utf-8", errors="replace") as readme:
            problem = section_problem(readme.read(), start, end)
        if problem is not None:
            raise UsageError(f"--readme {args.readme!r} {problem} (the section of --distribution {args.distribution})")
    command = " ".join(shlex.quote(part) for part in (
        "sltcheck", "bench", "solvers",
        *(("--distribution", args.distribution) if args.distribution != "uniform" else ()),
        "--sizes", ",".join(map(str, args.sizes)), "--problems", str(args.problems),
        "--seed", str(args.seed), "--solvers", ",".join(args.solvers), "--time-limit", f"{args.time_limit:g}",
        *(("--no-memory",) if args.no_memory else ()),
    ))  # what was measured; where its outputs went (--out, --readme) is not part of the numbers
    recorded = " ".join([command, *(shlex.quote(part) for part in (
        *(("--out", args.out) if args.out else ()), *(("--readme", args.readme) if args.readme else ())))])
    report = benchmark_solvers(args.sizes, args.problems, args.seed, args.solvers, args.time_limit,
                               memory=not args.no_memory, distribution=args.distribution)
    report["command"] = recorded
    print(format_table(report))
    if args.out is not None:
        write_json_atomic(args.out, json_safe(report))
        print(f"wrote {args.out}")
    if args.readme is not None:
        from pathlib import Path

        from sltcheck.readme_section import rewrite_section

        rewrite_section(Path(args.readme), start, end, readme_text(report, command))
        print(f"rewrote the performance section of {args.readme}")
    if not report["results"]:
        print("nothing was run: every solver asked for was skipped (see the notes above)", file=sys.stderr)
        return 1
    return 0


MAX_TIME_LIMIT = 86_400.0  # seconds per problem


def register(cli: Any) -> None:
    from sltcheck.cli.options import JSON_OUT, SEED, InputPath, Integer, Names, Number, Numbers

    parser = cli.command(
        "solvers", help="time every subset-sum solver on the same random instances", handler=run, group="bench"
    )
    parser.add_argument("--out", type=JSON_OUT, default=None, help="write the full results as JSON to this file")
    parser.add_argument("--distribution", choices=DISTRIBUTIONS, default="uniform",
                        help="the instances: uniform (Lemma 7's, the default), xavier (paper mode's Xavier sources, "
                             "targets inside, near and beyond the reach in thirds) or theory (Section 3.1's)")
    parser.add_argument("--sizes", type=Numbers(Integer(1, MAX_SIZE)), default=[8, 16, 24, 32, 40, 48],
                        help="comma-separated numbers of candidates n' (default 8,16,24,32,40,48)")
    parser.add_argument("--problems", type=Integer(1, MAX_PROBLEMS), default=5,
                        help="random instances per size (default 5)")
    parser.add_argument("--seed", type=SEED, default=0, help="seed of the instances (default 0)")
    parser.add_argument("--solvers", type=Names(SOLVERS), default=list(SOLVERS),
                        help=f"comma-separated subset of {','.join(SOLVERS)} (default all)")
    parser.add_argument("--readme", type=InputPath("file", _has_a_section, "a page with the marker lines of a "
                                                  "bench section", f"{README_START}\n{README_END}\n"), default=None,
                        help=f"rewrite the section between {README_START!r} and {README_END!r} (for --distribution "
                             "NAME other than uniform: '<!-- sltcheck bench solvers --distribution NAME: start -->' "
                             "and its end) of this file (docs/results/solvers.md) with the tables, the command and the "
                             "date")
    parser.add_argument("--no-memory", action="store_true",
                        help="skip the (untimed) tracemalloc run that measures each solver's peak memory")
    parser.add_argument("--time-limit", type=Number(0, MAX_TIME_LIMIT, low_open=True), default=10.0,
                        help="time limit per problem for the MIP solvers and for exact and fast (which then "
                             "report a proven gap), seconds (default 10)")
