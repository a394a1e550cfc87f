"""Search power and cost: the worst-case search against the search it replaced, side by side.

    .venv/bin/python benchmarks/search_power.py [--profile ci] [--only NAME ...] [--seed 0]

For every statement and variant (and every known supremum, see
:mod:`sltcheck.harness.power`) two searches run on the same machine in one process:

- ``previous``: what ``sltcheck check`` did before: the Hypothesis examples of the profile,
  then scipy Powell (400 evaluations) from the worst of them over the FREE fields
  (:func:`sltcheck.harness.search.local_search`);
- ``engine``: :func:`sltcheck.harness.search.search_worst_case` at the profile's budget.

Printed: best ratio measured / bound (for a supremum: best / supremum, the search's power),
float64 evaluations and seconds of each.

    .venv/bin/python benchmarks/search_power.py --gradients [--profile ci] [--only lemma12 lemma13 theorem14]

instead prints the power table (:func:`sltcheck.harness.power.table`) twice side by side: the
engine climbing by finite differences and by torch autograd where the statement has a
differentiable version (``gradients`` column: the backend that ran).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

from hypothesis import seed as hypothesis_seed

from sltcheck.harness import power
from sltcheck.harness.profiles import PROFILES, profile_settings
from sltcheck.harness.runner import Recorder, property_test
from sltcheck.harness.search import local_search, search_worst_case
from sltcheck.registry import STATEMENT_MODULES, load


def previous(statement: str, variant: str, bound, profile: str, seed: int) -> tuple[float, int, float]:
    began = time.perf_counter()
    recorder = Recorder()
    test = property_test(statement, variant, bound=bound, settings=profile_settings(profile, seeded=True),
                         recorder=recorder)
    with contextlib.suppress(AssertionError):
        hypothesis_seed(seed)(test)()
    record = recorder.record(statement, variant)
    best, evaluations = record.worst_ratio, record.examples
    if record.worst_instance is not None and not record.violations:
        result = local_search(statement, variant, record.worst_instance, bound=bound)
        if result is not None:
            best, evaluations = max(best, result.ratio), evaluations + result.evaluations
    return best, evaluations, time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=list(PROFILES), default="ci")
    parser.add_argument("--only", nargs="+")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gradients", action="store_true",
                        help="the power table by finite differences beside the one by autograd")
    args = parser.parse_args()
    if args.gradients:
        return gradients_side_by_side(args)
    print(f"{'statement':<10} {'variant / case':<34} {'previous':>10} {'evals':>7} {'s':>6}   "
          f"{'engine':>10} {'evals':>7} {'s':>6}")
    for name in args.only or STATEMENT_MODULES:
        module = load(name)
        jobs = [(variant, None, {}) for variant in module.VARIANTS]
        jobs += [(f"supremum {case['fixed']}", case["supremum"], case["fixed"])
                 for case in power.cases(name) if "supremum" in case]
        for label, bound, fixed in jobs:
            variant = "supremum" if bound is not None else label
            old = previous(name, variant, bound, args.profile, args.seed) if not fixed else (float("nan"), 0, 0.0)
            began = time.perf_counter()
            new = search_worst_case(name, variant, bound=bound, fixed=fixed, profile=args.profile, seed=args.seed)
            print(f"{name:<10} {label[:34]:<34} {old[0]:>10.5g} {old[1]:>7} {old[2]:>6.1f}   "
                  f"{new.ratio:>10.5g} {new.evaluations:>7} {time.perf_counter() - began:>6.1f}", flush=True)
    return 0


def gradients_side_by_side(args: argparse.Namespace) -> int:
    try:  # torch's import (seconds) outside the autograd rows' timings
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed (pip install 'sltcheck[search]'): both tables climb by finite differences")
    print(f"profile {args.profile}, seed {args.seed}: power = best found / known (bracket: best measured / lower end)")
    print(f"{'statement':<10} {'kind':<11} {'known':>9}   {'fd best':>9} {'power':>7} {'evals':>6} {'s':>6}   "
          f"{'best':>9} {'power':>7} {'evals':>6} {'s':>6}  gradients")
    for name in args.only or STATEMENT_MODULES:
        for case in power.cases(name):
            old = power.measure(name, case, profile=args.profile, seed=args.seed, gradients="finite-differences")
            new = power.measure(name, case, profile=args.profile, seed=args.seed, gradients="auto")
            cells = [f"{r['best']:>9.5g} {r['power'] or 0:>7.4f} {r['evaluations']:>6} {r['seconds']:>6.1f}"
                     for r in (old, new)]
            print(f"{name:<10} {old['kind']:<11} {old['known']:>9.5g}   {cells[0]}   {cells[1]}  {new['gradients']}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
