"""Lemma 13's families for the branch-and-bound (:mod:`sltcheck.certify`): Lemma 12's families
(:mod:`sltcheck.statements.lemma12.token_families`) with one FC layer (L = 1, its weight w = 1: the block
is (1 + w)(Attn + x)), at T = 2, 3 with the perturbation's directions as dimensions (``segments``: at T = 3 as
stated the supremum, 0.972, leaves no room for the superset of the segments that Lemma 12's families enclose;
at T = 4 the 16 vertices cost more than they gain: as proven its supremum, <= 0.674, has room, and as stated
it is a counterexample), under ``as-proven`` (expected to hold) and ``as-stated`` (known false at T = 4:
``COUNTEREXAMPLES["as-stated"]``), and the fraction families (:mod:`sltcheck.statements.lemma12.fraction`:
two token values at any fraction, any T). No seed is given by hand: ``sltcheck certify`` seeds each family
itself with the worst-case search restricted to the family's shape (``search_fixed``) and climbs from the best
points it finds."""

from __future__ import annotations

from sltcheck.statements.lemma12.fraction import fraction_families
from sltcheck.statements.lemma12.plane_family import plane_families
from sltcheck.statements.lemma12.token_families import families, limit_families

FAMILIES = families("lemma13", True, {"as-proven": (2.0, 2.0), "as-stated": (1.0, 2.0)},
                    expected={"as-stated": {4: "counterexample"}}, segments=(2, 3), capped=(2, 3))
# Their caps: the ratio at eps -> 0 over the whole cube (Lemma 13's proof, step 3: the mean-value theorem),
# whose certified upper end bounds d1-T2 and d1-T3 at every eps
FAMILIES += limit_families("lemma13", True, {"as-proven": (2.0, 2.0), "as-stated": (1.0, 2.0)},
                           expected={"as-stated": {}})
# Two token values at any fraction (any T): the closed form of worst_case.py (25/48 as proven) certified
# over the fraction; as stated the family holds the counterexamples up to 25/24.
FAMILIES += fraction_families("lemma13", True, {"as-proven": (2.0, 2.0), "as-stated": (1.0, 2.0)},
                              expected={"as-stated": "counterexample"}, known={"as-proven": 25 / 48})
# Two tokens in the plane (d1 = 2): Lemma 12's plane family with the block (W = I); both variants hold there
# (d1 >= 2 admits at most 0.849 of the stated bound: worst_case.py)
FAMILIES += plane_families("lemma13", True, {"as-proven": (2.0, 2.0), "as-stated": (1.0, 2.0)})
