"""Lemma 13's families for the branch-and-bound (:mod:`sltcheck.certify`): Lemma 12's families
(:mod:`sltcheck.statements.lemma12.family`) with one FC layer (L = 1, its weight w = 1: the block
is (1 + w)(Attn + x)), under ``as-proven`` (expected to hold) and ``as-stated`` (known false:
``COUNTEREXAMPLES["as-stated"]``, at T = 4, seeds the T = 4 family; the others must find their own)."""

from __future__ import annotations

from typing import Any

from sltcheck.harness.serialise import decode_instance
from sltcheck.statements.lemma12.family import families


def seeds() -> list[dict[str, Any]]:
    """The pinned counterexample (the worst-case search's finding)."""
    from sltcheck.statements.lemma13 import COUNTEREXAMPLES

    return [decode_instance(data) for data in COUNTEREXAMPLES.values()]


FAMILIES = families("lemma13", True, {"as-proven": (2.0, 2.0), "as-stated": (1.0, 2.0)}, seeds=seeds,
                    expected={"as-stated": {4: "counterexample"}})
