"""Lemmas 12 and 13: the worst-case search's best per (d1, H), beside the proved suprema.

    .venv/bin/python benchmarks/lipschitz_shapes.py [--profile ci] [--seed 0] [--only lemma12 lemma13]

At d1 = H = 1 the supremum of measured / bound is proved (sltcheck/statements/lemma12/worst_case.py,
lemma13/worst_case.py); d1 = 2 or H = 2 admit no more (proved there too: identical heads add, and for
d1 >= 2 the dimension-free bound U_12 caps the ratio). This prints, for every variant and every
(d1, H) in {1, 2}^2, the search restricted to those shapes (``fixed={"d1": d1, "H": H}``, every other
size, the structured shapes and alpha, eps_max free) beside the proved value where there is one, so a
shape that admitted more would show.
"""

from __future__ import annotations

import argparse
import sys
import time

from sltcheck.harness.profiles import PROFILES
from sltcheck.harness.search import search_worst_case
from sltcheck.registry import load
from sltcheck.statements.lemma12 import worst_case as w12
from sltcheck.statements.lemma13 import worst_case as w13

# The proved suprema of measured / bound over every instance at d1 = H = 1 (and an upper end elsewhere).
PROVED = {("lemma12", "as-stated"): w12.SUPREMUM, ("lemma12", "key-scaled"): 1.0,
          ("lemma13", "as-stated"): w13.SUPREMUM_AS_STATED, ("lemma13", "as-proven"): w13.SUPREMUM_AS_PROVEN}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=list(PROFILES), default="ci")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="+", default=["lemma12", "lemma13"], choices=["lemma12", "lemma13"])
    args = parser.parse_args(argv)
    print(f"profile {args.profile}, seed {args.seed}: the search's best ratio measured / bound per (d1, H)")
    print(f"{'statement':<9} {'variant':<11} {'d1':>2} {'H':>2} {'best':>10} {'proved sup (d1 = H = 1)':>24}  "
          f"{'shape of the best':<44} {'s':>6}")
    for statement in args.only:
        for variant in load(statement).VARIANTS:
            for d1 in (1, 2):
                for H in (1, 2):
                    began = time.perf_counter()
                    found = search_worst_case(statement, variant, profile=args.profile, seed=args.seed,
                                              fixed={"d1": d1, "H": H})
                    shape = ", ".join(f"{k}={v}" for k, v in found.shape.items() if k not in ("d1", "H"))
                    print(f"{statement:<9} {variant:<11} {d1:>2} {H:>2} {found.ratio:>10.6g} "
                          f"{PROVED[(statement, variant)]:>24.7g}  {shape:<44} "
                          f"{time.perf_counter() - began:>6.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
