"""Unit tests of the a-posteriori chains of Theorems 9, 11 and 14 (sltcheck.statements.theorem*)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from sltcheck.model.weights import BlockWeights, FCWeights, MHAWeights, TransformerWeights
from sltcheck.pruning import construction, sources
from sltcheck.registry import STATEMENT_MODULES, load
from sltcheck.statements import theorem9 as t9
from sltcheck.statements import theorem11 as t11
from sltcheck.statements import theorem14 as t14

DPS = 40
INSIDE = 1.0 - 2.0**-48


def unit(rng: np.random.Generator, *shape: int) -> np.ndarray:
    m = rng.normal(size=shape)
    return m * (INSIDE / np.linalg.norm(m, 2))


def target_mha(
    rng: np.random.Generator, H: int = 2, d1: int = 3, d2: int = 3, dk: int = 2
) -> MHAWeights:
    return MHAWeights(
        *(
            np.stack([unit(rng, *s) for _ in range(H)])
            for s in ((d1, dk), (d1, dk), (d1, dk), (dk, d2))
        )
    )


def structured_source(
    W: np.ndarray, E1: np.ndarray, E2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A_2 ReLU(A_1 x) = (W + E1) ReLU(x) - (W + E2) ReLU(-x)."""
    d = W.shape[1]
    A1 = np.concatenate([np.eye(d), -np.eye(d)])
    A2 = np.concatenate([W + E1, -(W + E2)], axis=1)
    return A1, A2


def block_pair(
    rng: np.random.Generator, delta: float, H: int = 2, d: int = 3, L: int = 2, only: str = "all"
) -> tuple[BlockWeights, BlockWeights]:
    attention = target_mha(rng, H, d, d)
    fc = FCWeights(tuple(unit(rng, d, d) for _ in range(L)))
    att = attention.tensors()
    src_att = MHAWeights(
        *(
            w + (delta if only in ("all", "attention") else 0.0) * rng.uniform(-1, 1, w.shape)
            for w in att
        )
    )
    layers: list[np.ndarray] = []
    scale = delta if only in ("all", "fc") else 0.0
    for W in fc.layers:
        layers += structured_source(
            W, scale * rng.uniform(-1, 1, W.shape), scale * rng.uniform(-1, 1, W.shape)
        )
    return BlockWeights(attention, fc), BlockWeights(src_att, FCWeights(tuple(layers)))


def tokens(rng: np.random.Generator, T: int, d: int, alpha: float) -> np.ndarray:
    X = rng.normal(size=(T, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True) * alpha * INSIDE


@pytest.mark.theorem9
@pytest.mark.theorem11
@pytest.mark.theorem14
def test_registered() -> None:
    for name in ("theorem9", "theorem11", "theorem14"):
        assert name in STATEMENT_MODULES
        module = load(name)
        assert module.DEFAULT_VARIANT in module.VARIANTS
        assert module.MUTANTS


# --- zero error -> zero bound and zero measured --------------------------------------------------


def test_zero_error_theorem9() -> None:
    rng = np.random.default_rng(0)
    target = target_mha(rng)
    inst = t9.make_instance(target, target, tokens(rng, 3, 3, 2.0), np.tril(np.ones((3, 3))), 2.0)
    assert t9.measured(inst, DPS) == 0
    for variant, bound in t9.VARIANTS.items():
        assert bound(inst, DPS) == 0, variant


def test_zero_error_theorem11_and_14() -> None:
    rng = np.random.default_rng(1)
    X, mask = tokens(rng, 2, 3, 2.0), np.ones((2, 2))
    target, source = block_pair(rng, 0.0)
    inst = t11.make_instance(target, source, X, mask, 2.0)
    assert t11.measured(inst, DPS) == 0
    for variant, bound in t11.VARIANTS.items():
        assert bound(inst, DPS) == 0, variant
    target2, source2 = block_pair(rng, 0.0)
    inst = t14.make_instance(
        TransformerWeights((target, target2)), TransformerWeights((source, source2)), X, mask, 2.0
    )
    assert t14.measured(inst, DPS) == 0
    for variant, bound in t14.VARIANTS.items():
        assert bound(inst, DPS) == 0, variant


# --- single head, single token closed forms ------------------------------------------------------


@pytest.mark.theorem9
def test_single_head_single_token_closed_form() -> None:
    alpha, delta_o, delta_q = 1.5, 1e-3, 2e-3
    target = MHAWeights(
        np.array([[[0.5]]]), np.array([[[0.8]]]), np.array([[[1.0]]]), np.array([[[0.5]]])
    )
    source = MHAWeights(
        np.array([[[0.5 + delta_q]]]),
        np.array([[[0.8]]]),
        np.array([[[1.0]]]),
        np.array([[[0.5 + delta_o]]]),
    )
    X = np.array([[alpha]])
    inst = t9.make_instance(target, source, X, np.ones((1, 1)), alpha)
    with mpmath.workdps(DPS):
        e_qk = (mpmath.mpf(0.5 + delta_q) - mpmath.mpf(0.5)) * mpmath.mpf(
            0.8
        )  # exact float64 inputs
        e_vo = mpmath.mpf(0.5 + delta_o) - mpmath.mpf(0.5)
        a = mpmath.mpf(alpha)
        # one token: p = p' = 1, Attn(x) = x W_VO, so the gap is |x| |dW_VO|
        assert abs(t9.measured(inst, DPS) - a * e_vo) < mpmath.mpf(10) ** -35
        proven = a * mpmath.expm1(2 * a * a * e_qk) + a * e_vo  # d1 = d2 = 1
        assert abs(t9.VARIANTS["as-proven"](inst, DPS) - proven) < mpmath.mpf(10) ** -35
        star = max(8 * a**3 * e_qk, 2 * a * e_vo)
        assert abs(t9.VARIANTS["as-stated"](inst, DPS) - star) < mpmath.mpf(10) ** -35
    errors = t9.achieved_errors(target, source, DPS)
    assert float(errors["e_VO"][0]) == pytest.approx(delta_o, rel=1e-12)


@pytest.mark.theorem9
def test_value_term_is_attained() -> None:
    """d1 = d2 = 1, one token on the sphere, only W_VO perturbed: measured == sharp == as-proven."""
    target = MHAWeights(
        np.array([[[1.0]]]), np.array([[[1.0]]]), np.array([[[1.0]]]), np.array([[[1.0]]])
    )
    source = MHAWeights(
        np.array([[[1.0]]]), np.array([[[1.0]]]), np.array([[[1.0]]]), np.array([[[1.25]]])
    )
    inst = t9.make_instance(target, source, np.array([[2.0]]), np.ones((1, 1)), 2.0)
    m = t9.measured(inst, DPS)
    assert m == 0.5
    for variant in ("as-proven", "tight", "sharp"):
        assert t9.VARIANTS[variant](inst, DPS) == m


# --- monotone in each achieved error -------------------------------------------------------------


@pytest.mark.parametrize("which", ["Q", "K", "V", "O"])
def test_theorem9_bound_monotone(which: str) -> None:
    rng = np.random.default_rng(3)
    target = target_mha(rng)
    direction = rng.uniform(-1, 1, getattr(target, f"W_{which}").shape)
    previous = None
    for size in (0.0, 1e-6, 1e-3, 1e-1):
        tensors = {k: getattr(target, f"W_{k}") for k in "QKVO"}
        tensors[which] = tensors[which] + size * direction
        source = MHAWeights(*(tensors[k] for k in "QKVO"))
        values = [
            t9.a_posteriori_bound(target, source, 2.0, DPS, v)
            for v in ("as-proven", "tight", "sharp")
        ]
        if previous is not None:
            assert all(v >= p for v, p in zip(values, previous, strict=True))
        previous = values


def test_theorem11_bound_monotone_in_fc_error() -> None:
    rng = np.random.default_rng(4)
    target, _ = block_pair(rng, 0.0)
    E1, E2 = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, (3, 3))
    previous = None
    for size in (0.0, 1e-6, 1e-3, 1e-1):
        layers: list[np.ndarray] = []
        for W in target.fc.layers:
            layers += structured_source(W, size * E1, size * E2)
        source = BlockWeights(target.attention, FCWeights(tuple(layers)))
        values = [t11.a_posteriori_bound(target, source, 2.0, DPS, v) for v in t11.VARIANT_NAMES]
        if previous is not None:
            assert all(v >= p for v, p in zip(values, previous, strict=True))
        previous = values


# --- the chains hold, and the variants are ordered as derived ------------------------------------


def test_theorem11_readings_and_as_stated_order() -> None:
    rng = np.random.default_rng(5)
    target, source = block_pair(rng, 1e-7)
    bounds = {v: t11.a_posteriori_bound(target, source, 2.0, DPS, v) for v in t11.VARIANT_NAMES}
    # r >= 1: r(prod(1 + delta) - 1) <= r(exp(eps10/2) - 1) <= exp(r eps10/2) - 1
    assert bounds["as-proven"] <= bounds["theorem10-scaled"] <= bounds["theorem10-literal"]
    assert t11.eps_star(target, source, 2.0, DPS) < 1
    assert bounds["as-proven"] <= bounds["as-stated"]
    assert bounds["sharp"] <= bounds["tight"]
    inst = t11.make_instance(target, source, tokens(rng, 3, 3, 2.0), np.tril(np.ones((3, 3))), 2.0)
    m = t11.measured(inst, DPS)
    assert 0 < m <= bounds["sharp"]


def test_theorem9_as_stated_dominates_as_proven_below_one() -> None:
    rng = np.random.default_rng(6)
    target = target_mha(rng)
    source = MHAWeights(*(w + 1e-8 * rng.uniform(-1, 1, w.shape) for w in target.tensors()))
    star = t9.eps_star(target, source, 2.0, DPS)
    assert 0 < star < 1
    assert t9.a_posteriori_bound(target, source, 2.0, DPS) <= t9.a_posteriori_bound(
        target, source, 2.0, DPS, "as-stated"
    )


@pytest.mark.theorem11
def test_fc_parts_match_construction() -> None:
    rng = np.random.default_rng(7)
    target = FCWeights((unit(rng, 3, 3),))
    source = sources.source_fc("theory", 3, widths=[3, 3], hidden=12)
    pruned = construction.prune_fc(target, source, "mitm")
    errors = t11.fc_layer_errors(target, pruned.weights, DPS)
    assert errors[0]["structured"]
    assert abs(errors[0]["e"] - pruned.errors[0].error_mp) < mpmath.mpf(10) ** -30


@pytest.mark.theorem9
def test_construction_source_within_bound() -> None:
    rng = np.random.default_rng(8)
    target = sources.target_mha(8, heads=2, d_in=2, d_out=2, d_key=2, d_value=2)
    source = sources.source_mha("theory", 9, heads=2, d_in=2, d_out=2, n_key=16, n_value=16)
    pruned = construction.prune_mha(target, source, "mitm").weights
    alpha = 2.0
    inst = t9.make_instance(
        target, pruned, tokens(rng, 4, 2, alpha), np.tril(np.ones((4, 4))), alpha
    )
    m = t9.measured(inst, DPS)
    for variant, bound in t9.VARIANTS.items():
        assert m <= bound(inst, DPS), variant


def test_theorem14_chain_records_blocks() -> None:
    rng = np.random.default_rng(9)
    pairs = [block_pair(rng, 1e-9, H=1, d=2, L=1) for _ in range(3)]
    target = TransformerWeights(tuple(p[0] for p in pairs))
    source = TransformerWeights(tuple(p[1] for p in pairs))
    result = t14.chain(target, source, 2.0, DPS)
    assert len(result["blocks"]) == 3
    assert all(row["condition_2beta"] for row in result["blocks"])
    assert result["blocks"][0]["lemma13"] == 0
    stated = t14.a_posteriori_bound(target, source, 2.0, DPS, "lemma13-as-stated")
    assert stated <= result["total"]  # Lemma 13 without its factor 2
    inst = t14.make_instance(target, source, tokens(rng, 2, 2, 2.0), np.ones((2, 2)), 2.0)
    assert (
        t14.measured(inst, DPS)
        <= t14.VARIANTS["sharp"](inst, DPS)
        <= t14.VARIANTS["tight"](inst, DPS)
    )


# --- required widths reproduce the paper's formulas ----------------------------------------------


def test_required_widths_theorem9() -> None:
    eps, H, d1, d2, alpha, C = 0.01, 3, 4, 2, 2.5, 1.7
    widths = t9.required_widths(eps, H, d1, d2, alpha, C)
    assert widths["n_K"] == pytest.approx(
        d1 * C * math.log(8 * H * alpha**3 * d1**1.5 / eps), rel=1e-12
    )
    assert widths["n_V"] == pytest.approx(
        d1 * C * math.log(2 * H * alpha * d1 * math.sqrt(d2) / eps), rel=1e-12
    )
    assert widths["e_QK"] == pytest.approx(eps / (8 * H * alpha**3 * d1**1.5), rel=1e-12)


def test_required_widths_theorem11() -> None:
    eps, H, d1, alpha, L, C = 0.05, 2, 3, 2.0, 3, 0.9
    widths = t11.required_widths(eps, H, d1, alpha, L, C)
    assert widths["n_MHA"] == pytest.approx(
        d1 * C * math.log(32 * alpha**3 * H * d1**1.5 / eps), rel=1e-12
    )
    assert widths["n_FC"] == pytest.approx(
        d1 * C * math.log(24 * alpha * L * H * d1**2.5 / eps), rel=1e-12
    )


@pytest.mark.parametrize("B", [2, 3, 5])
def test_required_widths_theorem14(B: int) -> None:
    eps, H, d1, alpha, L, C = 0.02, 2, 3, 2.0, 2, 1.0
    widths = t14.required_widths(eps, H, d1, alpha, L, B, C)
    beta = [alpha * (4 * H * math.sqrt(d1)) ** (b - 1) for b in range(1, B + 1)]
    assert widths["beta"] == pytest.approx(beta, rel=1e-12)
    # the last block is Theorem 11 at alpha = 2 beta_B and eps / 2
    last = t11.required_widths(eps / 2, H, d1, 2 * beta[-1], L, C)
    assert widths["n_MHA"][-1] == pytest.approx(last["n_MHA"], rel=1e-12)
    assert widths["n_FC"][-1] == pytest.approx(last["n_FC"], rel=1e-12)
    # block 1: 32 beta_1^3 H d1^{3/2} 2^{B-1} prod_{j=2}^B 16 H sqrt(d1) beta_j^2
    product = math.prod(16 * H * math.sqrt(d1) * beta[j - 1] ** 2 for j in range(2, B + 1))
    first = d1 * C * math.log(32 * alpha**3 * H * d1**1.5 * 2 ** (B - 1) * product / eps)
    assert widths["n_MHA"][0] == pytest.approx(first, rel=1e-12)
    # the exponents reproduce every log argument
    for b in range(1, B + 1):
        ex = t14.exponents(b, B)
        for kind, key, const in (("mha", "n_MHA", 1.0), ("fc", "n_FC", 1.0)):
            e = ex[kind]
            log_arg = (
                float(e["2"]) * math.log(2)
                + float(e["3"]) * math.log(3)
                + float(e["alpha"]) * math.log(alpha)
                + float(e["L"]) * math.log(L)
                + float(e["H"]) * math.log(H)
                + float(e["d1"]) * math.log(d1)
            )
            assert widths[key][b - 1] == pytest.approx(
                d1 * C * (log_arg + math.log(const / eps)), rel=1e-10
            )


@pytest.mark.theorem14
def test_exponents_are_quadratic() -> None:
    for name in ("f1", "f2", "f3", "g1", "g2", "g3"):
        values = {(b, B): t14.exponents(b, B)[name] for B in range(2, 8) for b in range(2, B + 1)}
        # second differences in B at fixed b (and in b at fixed B) are constant: a quadratic form
        for b in range(2, 5):
            diffs = [
                values[(b, B + 2)] - 2 * values[(b, B + 1)] + values[(b, B)] for B in range(b, 6)
            ]
            assert len(set(diffs)) == 1, name


@pytest.mark.theorem9
def test_bad_variant() -> None:
    rng = np.random.default_rng(10)
    target = target_mha(rng)
    with pytest.raises(ValueError, match="variant must be one of"):
        t9.a_posteriori_bound(target, target, 2.0, DPS, "nonsense")
