"""Interval enclosure (see :mod:`sltcheck.harness.interval_verdict`) of Theorem 14:

``theorem14``: measured (max_i ||Tf_S(x_i) - Tf_T(x_i)||), the bounds ``as-proven``,
  ``lemma13-as-stated`` and ``as-stated`` (the recursion over blocks with beta_b, Lemma 13
  and Theorem 11's as-proven chain at alpha_b = max(2 beta_b, beta_b + Delta_b)), and the
  mutants ``last-block-only``, ``lipschitz-one``, ``constant-betas``; ``tight`` and ``sharp``
  (actual spectral norms: the corrected Lemmas 12/13 per block and Theorem 11's chain in that
  mode, :func:`spectral_recursion`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sltcheck.numerics.intervals import (
    as_interval,
    chain_expm1,
    hull_max,
    instance_gap,
    merged,
    num,
    power,
    scalar,
    spectral_norm,
    sqrt,
    stated_or_proven,
    transformer,
)
from sltcheck.statements.theorem9.enclosure import largest_token_norm
from sltcheck.statements.theorem11.enclosure import chain as t11_chain
from sltcheck.statements.theorem11.enclosure import eps_star as t11_eps_star
from sltcheck.statements.theorem11.enclosure import fc_lipschitz


def lemma13_term(H: int, d1: int, beta: Any, delta: Any, factor: int = 2) -> Any:
    """``theorem14.lemma13``: factor H sqrt(d1) (beta (exp(4 beta delta) - 1) + 2 delta)."""
    return factor * H * sqrt(num(d1)) * (beta * chain_expm1(4 * beta * delta) + 2 * delta)


def chain(target: Any, source: Any, token_bound: Any, lemma13_factor: int = 2) -> dict[str, Any]:
    """``theorem14.chain`` in mode "as-proven": per block beta_b, alpha_b, the Lemma 13 and
    Theorem 11 terms; "total" is Delta_{B+1}."""
    if len(source.blocks) != len(target.blocks):
        raise ValueError(f"pruned_source must have {len(target.blocks)} blocks, got {len(source.blocks)}")
    d1 = target.blocks[0].attention.d_in
    beta, delta = as_interval(token_bound), num(0)
    rows = []
    for b, (tgt, src) in enumerate(zip(target.blocks, source.blocks, strict=True)):
        H = tgt.attention.heads
        alpha_b = beta if b == 0 else hull_max([2 * beta, beta + delta])
        block_error = t11_chain(tgt, src, alpha_b)["total"]
        propagated = lemma13_term(H, d1, beta, delta, lemma13_factor)
        rows.append({"beta": beta, "alpha": alpha_b, "delta_in": delta, "lemma13": propagated,
                     "theorem11": block_error})
        delta = propagated + block_error
        beta = beta * 4 * H * sqrt(num(d1))
    return {"blocks": rows, "total": delta}


def eps_star(target: Any, source: Any, alpha: Any) -> Any:
    """``theorem14.eps_star``: max_b K_b eps*_11,b(alpha_b), alpha_1 = alpha, alpha_b = 2 beta_b."""
    B, H, d1 = len(target.blocks), target.blocks[0].attention.heads, target.blocks[0].attention.d_in
    root = sqrt(num(d1))
    a = as_interval(alpha)
    beta = [a * power(4 * H * root, b) for b in range(B)]
    stars = []
    for b, (tgt, src) in enumerate(zip(target.blocks, source.blocks, strict=True)):
        product = num(1)
        for j in range(b + 2, B + 1):  # K_b (b 1-based): prod_{j=b+1}^B 16 H sqrt(d1) beta_j^2
            product *= 16 * H * root * beta[j - 1] * beta[j - 1]
        twos = B - 1 if b == 0 else B - b  # 2^{B-1} for the first block, 2^{B-b+1} (1-based) after
        alpha_b = beta[0] if b == 0 else 2 * beta[b]
        stars.append(num(2**twos) * product * t11_eps_star(tgt, src, alpha_b))
    return hull_max(stars)


def constant_betas(target: Any, source: Any, alpha: Any) -> Any:
    """The mutant ``constant-betas``: every block's inputs taken as bounded by alpha."""
    delta = num(0)
    for tgt, src in zip(target.blocks, source.blocks, strict=True):
        H, d1 = tgt.attention.heads, tgt.attention.d_in
        delta = lemma13_term(H, d1, alpha, delta) + t11_chain(tgt, src, alpha + delta)["total"]
    return delta


def block_lipschitz(block: Any, beta: Any, delta: Any, mode: str) -> Any:
    """``theorem14.block_lipschitz`` (corrected Lemmas 12/13, actual spectral norms): (1 + Lip F_T)
    (sum_j [sqrt(d1)] (beta (exp(2 ||W_QK|| (2 beta delta + delta^2)) - 1) + delta) ||W_VO|| + delta)."""
    qk, vo = merged(block.attention)
    root = sqrt(num(block.attention.d_in)) if mode == "tight" else num(1)
    attention = num(0)
    for qk_j, vo_j in zip(qk, vo, strict=True):
        eps = spectral_norm(qk_j) * (2 * beta * delta + delta * delta)
        attention += root * (beta * chain_expm1(2 * eps) + delta) * spectral_norm(vo_j)
    return (1 + fc_lipschitz(block.fc, mode)) * (attention + delta)


def target_growth(block: Any, mode: str) -> Any:
    """``theorem14.target_growth``: (1 + Lip F_T)(1 + [sqrt(d1)] sum_j ||W_VO^(j)||)."""
    _, vo = merged(block.attention)
    root = sqrt(num(block.attention.d_in)) if mode == "tight" else num(1)
    values = sum((spectral_norm(m) for m in vo), num(0))
    return (1 + fc_lipschitz(block.fc, mode)) * (1 + root * values)


def spectral_recursion(target: Any, source: Any, token_bound: Any, mode: str) -> Any:
    """``theorem14.chain`` in mode "tight" or "sharp": beta_1 = the largest token norm, alpha_b =
    beta_b + Delta_b, Theorem 11's chain in that mode, Delta_{b+1} = block Lipschitz + block error."""
    if len(source.blocks) != len(target.blocks):
        raise ValueError(f"pruned_source must have {len(target.blocks)} blocks, got {len(source.blocks)}")
    beta, delta = as_interval(token_bound), num(0)
    for b, (tgt, src) in enumerate(zip(target.blocks, source.blocks, strict=True)):
        alpha_b = beta if b == 0 else beta + delta
        block_error = t11_chain(tgt, src, alpha_b, mode=mode)["total"]
        delta = block_lipschitz(tgt, beta, delta, mode) + block_error
        beta = beta * target_growth(tgt, mode)
    return delta


def measured(instance: dict[str, Any]) -> Any:
    from sltcheck.statements import theorem14 as t14

    return instance_gap(transformer, instance, t14.target_of(instance), t14.source_of(instance))


def bound(variant: str) -> Callable[[dict[str, Any]], Any]:
    """A variant (or mutant) of ``theorem14``, combined as the module does."""

    def bound(instance: dict[str, Any]) -> Any:
        from sltcheck.statements import theorem14 as t14

        target, source, alpha = t14.target_of(instance), t14.source_of(instance), scalar(instance["alpha"])
        if variant in ("tight", "sharp"):
            return spectral_recursion(target, source, largest_token_norm(instance), variant)
        if variant == "constant-betas":
            return constant_betas(target, source, alpha)
        if variant == "lemma13-as-stated":
            return chain(target, source, alpha, lemma13_factor=1)["total"]
        if variant == "as-stated":
            return stated_or_proven(eps_star(target, source, alpha),
                                    lambda: chain(target, source, alpha)["total"])
        parts = chain(target, source, alpha)
        if variant == "last-block-only":
            return parts["blocks"][-1]["theorem11"]
        if variant == "lipschitz-one":
            return sum((row["theorem11"] for row in parts["blocks"]), num(0))
        return parts["total"]  # as-proven

    return bound


BOUNDS: dict[str, Callable[[dict[str, Any]], Any]] = {name: bound(name) for name in (
    "as-proven", "lemma13-as-stated", "as-stated", "tight", "sharp",
    "last-block-only", "lipschitz-one", "constant-betas")}
