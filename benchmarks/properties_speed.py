"""Examples per second of every registered property (statement x variant) and mutant refutation.

    .venv/bin/python benchmarks/properties_speed.py [--profile ci] [--only NAME ...] [--no-mutants]

Runs each property once under the profile (derandomised ci by default) and
reports examples, seconds and examples/second, plus the seconds each mutant
refutation takes; the sum estimates the cost of ``pytest properties/``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time

from sltcheck.harness.mutants import refute
from sltcheck.harness.profiles import PROFILES, profile_settings
from sltcheck.harness.runner import RECORDER, property_test
from sltcheck.registry import STATEMENT_MODULES, load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=list(PROFILES), default="ci")
    parser.add_argument("--only", nargs="+")
    parser.add_argument("--no-mutants", action="store_true")
    args = parser.parse_args()
    settings = profile_settings(args.profile)
    total = 0.0
    print(f"{'property':<34} {'examples':>8} {'seconds':>8} {'ex/s':>8}")
    for name in args.only or STATEMENT_MODULES:
        module = load(name)
        for variant in module.VARIANTS:
            RECORDER.clear()
            start = time.perf_counter()
            with contextlib.suppress(AssertionError):  # a finding; the speed is still measured
                property_test(name, variant, settings=settings)()
            seconds = time.perf_counter() - start
            total += seconds
            examples = RECORDER.record(name, variant).examples
            print(
                f"{name + ':' + variant:<34} {examples:>8} {seconds:>8.2f} "
                f"{examples / seconds:>8.1f}"
            )
        if not args.no_mutants:
            for mutant in module.MUTANTS:
                start = time.perf_counter()
                result = refute(name, mutant, settings=settings)
                seconds = time.perf_counter() - start
                total += seconds
                print(
                    f"  mutant {name + ':' + mutant.name:<32} "
                    f"{'refuted' if result.refuted else 'SURVIVED':>8} "
                    f"{seconds:>7.2f}s"
                )
    print(f"total {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
