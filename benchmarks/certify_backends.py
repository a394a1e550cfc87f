"""Side by side: the two enclosure backends of ``sltcheck certify`` (arb via python-flint, mpmath.iv).

    python benchmarks/certify_backends.py [--boxes N] [--width W]

For each family: N random boxes (each side W times the family's width, same boxes for both
backends), the boxes per second each backend encloses, and how much wider arb's balls are than
mpmath's intervals (median ratio of the two upper bounds on measured / bound; both are rigorous).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from sltcheck.certify import families
from sltcheck.certify.bnb import evaluate_box
from sltcheck.numerics.balls import arb_available, backend

KEYS = ("lemma8/d1-T2/as-stated", "lemma8/d1-T3/as-stated", "lemma12/d1-T2/as-stated", "lemma13/d1-T4/as-proven")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boxes", type=int, default=300)
    parser.add_argument("--width", type=float, default=0.02)
    args = parser.parse_args()
    if not arb_available():
        raise SystemExit("needs python-flint (pip install 'sltcheck[certify]')")
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


if __name__ == "__main__":
    main()
