"""Interval enclosure (see :mod:`sltcheck.harness.interval_verdict`) of Lemma 13:

``lemma13``: measured (the same for the block Blk_T(x) = F(Attn(x) + x) + Attn(x) + x), the
  bounds ``as-proven`` and ``as-stated`` and the mutant ``as-stated-eighth``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sltcheck.statements.lemma12.enclosure import input_shift, lipschitz_bound


def measured(instance: dict[str, Any]) -> Any:
    return input_shift(instance, with_block=True)


BOUNDS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "as-proven": lipschitz_bound(2.0, 2.0),
    "as-stated": lipschitz_bound(1.0, 2.0),
    "as-stated-eighth": lipschitz_bound(0.125, 2.0),
}
