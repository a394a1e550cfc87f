"""Side by side: the two enclosure backends (arb via python-flint, mpmath.iv), in one run.

    python benchmarks/certify_backends.py [--boxes N] [--width W] [--instances-only | --boxes-only]
                                          [--repeats R] [--dps D]

Families (``sltcheck certify``): N random boxes (each side W times the family's width, same boxes
for both backends), the boxes per second each backend encloses, and how much wider arb's balls are
than mpmath's intervals (median ratio of the two upper bounds on measured / bound; both rigorous).

Single instances (``sltcheck.harness.interval_verdict``, what ``sltcheck check`` runs on each worst instance):
for every statement and enclosed variant, one instance (the statement's ``instances.start`` on a
middle shape, seed 0, the same for both backends), the best of R evaluations at D digits per
backend, and the width of each side's enclosure in correct digits (``width_digits``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import statistics
import time

import numpy as np

from sltcheck.certify import families
from sltcheck.certify.bnb import evaluate_box
from sltcheck.numerics.balls import arb_available, backend

KEYS = ("lemma8/d1-T2/as-stated", "lemma8/d1-T3/as-stated", "lemma12/d1-T2/as-stated", "lemma13/d1-T4/as-proven")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boxes", type=int, default=300)
    parser.add_argument("--width", type=float, default=0.02)
    parser.add_argument("--repeats", type=int, default=3, help="evaluations per instance and backend (best kept)")
    parser.add_argument("--dps", type=int, default=30, help="digits of the single-instance enclosures")
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--instances-only", action="store_true", help="skip the families")
    only.add_argument("--boxes-only", action="store_true", help="skip the single instances")
    args = parser.parse_args()
    if not arb_available():
        raise SystemExit("needs python-flint (pip install 'sltcheck[certify]')")
    if not args.instances_only:
        boxes(args)
    if not args.boxes_only:
        instances(args)


def instance_of(statement: str) -> dict:
    """The statement's ``instances.start`` on its middle shape (seed 0, not on the boundary)."""
    module = importlib.import_module(f"sltcheck.statements.{statement}.instances")
    shapes = module.shapes()
    return module.start(shapes[len(shapes) // 2], np.random.default_rng(0), on_boundary=False)


def instances(args: argparse.Namespace) -> None:
    from sltcheck.harness import interval_verdict as certified

    print(f"load average {os.getloadavg()[0]:.2f}; single instances at {args.dps} digits, best of {args.repeats}")
    print(f"{'statement/variant':<34} {'arb ms':>8} {'mpmath ms':>10} {'speed-up':>9} "
          f"{'measured digits arb/mp':>23} {'bound digits arb/mp':>20} {'outcome':>10}")
    for statement, variants in certified.supported().items():
        instance = instance_of(statement)
        for variant in variants:
            times, results = {}, {}
            for name in ("arb", "mpmath"):
                best = float("inf")
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    results[name] = certified.evaluate(statement, instance, variant, dps=args.dps, max_dps=args.dps,
                                                       backend=name)
                    best = min(best, time.perf_counter() - start)
                times[name] = best

            def digits(side: str, results: dict = results) -> str:
                return "/".join("-" if results[n][side] is None else f"{results[n][side]:.1f}"
                                for n in ("arb", "mpmath"))

            outcome = results["arb"]["outcome"] + ("" if results["arb"]["outcome"] == results["mpmath"]["outcome"]
                                                   else "/" + results["mpmath"]["outcome"])
            print(f"{statement + '/' + variant:<34} {1000 * times['arb']:>8.1f} {1000 * times['mpmath']:>10.1f} "
                  f"{times['mpmath'] / times['arb']:>8.1f}x {digits('measured_digits'):>23} "
                  f"{digits('bound_digits'):>20} {outcome:>10}")


def boxes(args: argparse.Namespace) -> None:
    print(f"load average {os.getloadavg()[0]:.2f}; {args.boxes} boxes of relative width {args.width}")
    print(f"{'family':<26} {'arb boxes/s':>12} {'mpmath boxes/s':>15} {'speed-up':>9} {'arb/mpmath upper':>17}")
    for key in KEYS:
        family = families()[key]
        rng = random.Random(0)
        boxes = []
        for _ in range(args.boxes):
            lows = [rng.uniform(d.low, d.high - args.width * (d.high - d.low)) for d in family.dimensions]
            boxes.append((tuple(lows), tuple(lo + args.width * (d.high - d.low)
                                             for lo, d in zip(lows, family.dimensions, strict=True))))
        rates, uppers = {}, {}
        for name in ("arb", "mpmath"):
            arith = backend(name)
            start = time.perf_counter()
            uppers[name] = [evaluate_box(arith, family, box).upper for box in boxes]
            rates[name] = len(boxes) / (time.perf_counter() - start)
        widths = [a / m for a, m in zip(uppers["arb"], uppers["mpmath"], strict=True) if m > 0 and a < float("inf")]
        print(f"{key:<26} {rates['arb']:>12.0f} {rates['mpmath']:>15.0f} {rates['arb'] / rates['mpmath']:>8.1f}x "
              f"{statistics.median(widths):>17.6f}")
    print()


if __name__ == "__main__":
    main()
