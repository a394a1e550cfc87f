"""The proofs' allocation of eps (sltcheck/pruning/allocation.py), in exact rationals."""

from fractions import Fraction

import pytest

from sltcheck.pruning import allocation

F = Fraction


def by_variant(statement: str, **point: object) -> dict[str, allocation.Allocation]:
    p = allocation.parameters(**point)
    return {a.variant: a for a in allocation.STATEMENTS[statement](p)}


@pytest.mark.parametrize(
    ("statement", "variant", "point", "total_over_eps"),
    [
        ("lemma7", "as-written", {"eps": F(1, 10), "d1": 4, "d2": 9}, F(1)),
        ("lemma2", "as-written", {"eps": F(1, 10), "d1": 4, "d2": 1}, F(1)),
        # one W_QK and one W_VO failure: 1/(8 H alpha^3 sqrt(d1)) + sqrt(d2)/(2 H alpha), H = 2, d1 = d2 = 4, alpha = 2
        ("theorem9", "as-written", {"eps": F(1, 2), "H": 2, "d1": 4, "alpha": 2}, F(1, 256) + F(1, 4)),
        ("theorem9", "heads-summed", {"eps": F(1, 2), "H": 2, "d1": 4, "alpha": 2}, 2 * (F(1, 256) + F(1, 4))),
        # corrected: sqrt(d1)/(8 alpha^3) + sqrt(d2)/(2 alpha) = 2/64 + 2/4
        ("theorem9", "corrected", {"eps": F(1, 2), "H": 2, "d1": 4, "alpha": 2}, F(2, 64) + F(1, 2)),
        ("theorem11", "as-written", {"eps": F(1, 2), "H": 1, "d1": 1, "alpha": 1}, F(1, 4) + F(1, 6)),
        ("theorem11", "expanded", {"eps": F(1, 2), "H": 1, "d1": 1, "alpha": 1, "L": 3}, F(5, 32) + F(1, 12)),
        # B = 2, H = d1 = alpha = 1: beta_2 = 4, K_1 = 2 * 16 * 16 = 512, K_2 = 2
        ("theorem14", "as-written", {"eps": F(1, 2), "B": 2}, F(1, 512) + F(1, 2)),
        ("theorem14", "closed-form", {"eps": F(1, 2), "B": 2}, F(1055, 1984)),
    ],
)
def test_allocation_totals(statement: str, variant: str, point: dict, total_over_eps: Fraction) -> None:
    result = by_variant(statement, **point)[variant]
    assert result.total / result.eps == total_over_eps
    assert result.holds


def test_theorem9_widths_are_those_of_the_corrected_failure() -> None:
    """Lemma 7 at failure eps' needs log(d1^2 / eps'): n_K's log(8 H alpha^3 d1^(3/2)/eps) matches
    sqrt(d1) eps/(8 H alpha^3), not the printed eps/(8 H alpha^3 sqrt(d1)) (unless d1 = 1)."""
    result = by_variant("theorem9", eps=F(1, 10), H=3, d1=4, alpha=3)
    assert all(t.width_matches for t in result["corrected"].terms)
    assert not all(t.width_matches for t in result["as-written"].terms)
    assert all(t.width_matches for t in by_variant("theorem9", eps=F(1, 10), d1=1)["as-written"].terms)


def test_theorem14_block_failures_follow_the_proof() -> None:
    p = allocation.parameters(eps=F(1, 3), H=2, d1=4, alpha=3, B=3)
    beta = allocation.betas(p)
    assert beta == [3, 3 * 16, 3 * 256]
    unit = [16 * 2 * 2 * b**2 for b in beta]  # 16 H sqrt(d1) beta_j^2
    assert allocation.block_divisors(p) == [4 * unit[1] * unit[2], 4 * unit[2], 2]


def test_theorem14_chain_slips_only_at_the_printed_16_32() -> None:
    for point in allocation.DEFAULT_GRID:
        steps = {s.claim: s.holds for s in allocation.theorem14_steps(allocation.parameters(**point))}
        assert steps.pop("1/(2 (1 - 1/32)) = 16/32 (as printed)") is False
        assert steps.pop("1/64 + 16/32 = 1055/1984 (as printed)") is False
        assert all(steps.values()), steps


@pytest.mark.theorem11
def test_a_broken_allocation_is_caught() -> None:
    """Mutant: Theorem 11 with its FC share doubled past eps must not hold."""
    p = allocation.parameters(eps=F(1, 2))
    written = allocation.theorem11(p)[0]
    broken = allocation.Allocation(
        "theorem11", "mutant", p.eps, (*written.terms, allocation.Term("extra", F(1, 2), "-")), ""
    )
    assert not broken.holds


@pytest.mark.theorem9
@pytest.mark.theorem14
def test_check_all_every_variant_holds() -> None:
    result = allocation.check_all()
    assert {(r["statement"], r["variant"]) for r in result["allocations"]} >= {
        ("theorem9", "corrected"),
        ("theorem14", "as-written"),
    }
    assert all(r["holds"] for r in result["allocations"])


@pytest.mark.parametrize(
    ("point", "message"),
    [
        ({"eps": F(1, 2), "d1": 2}, "d1 must be a perfect square"),
        ({"eps": 1}, "eps must lie in the open interval"),
        ({"eps": F(1, 2), "d1": 4, "alpha": 1}, "alpha must be >= max"),
        ({"eps": F(1, 2), "B": 1}, "B must be an integer >= 2"),
        ({"eps": "x"}, "eps must be a rational number"),
    ],
)
def test_bad_parameters(point: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        allocation.parameters(**point)
