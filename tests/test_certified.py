"""Interval verdicts: agree with point verdicts far from the bound, undecided on it (where exact arithmetic
does not prove it attained)."""

from __future__ import annotations

import importlib
import sys

import mpmath
import numpy as np
import pytest
from mpmath import iv

from sltcheck.harness import interval_verdict as certified
from sltcheck.harness.pytest_plugin import every_statement
from sltcheck.model import reference
from sltcheck.model.weights import BlockWeights, FCWeights, MHAWeights, TransformerWeights
from sltcheck.numerics import arithmetic, intervals, precision
from sltcheck.numerics.balls import arb_available
from sltcheck.numerics.verdict import decide
from sltcheck.registry import load
from sltcheck.statements import theorem9 as t9
from sltcheck.statements import theorem11 as t11
from sltcheck.statements import theorem14 as t14

DPS = 30


def test_decide_interval():
    assert intervals.decide_interval((1, 2), (2, 3)) == "holds"
    assert intervals.decide_interval((2.5, 3), (1, 2)) == "violated"
    assert intervals.decide_interval((1, 2.5), (2, 3)) == "undecided"
    assert intervals.decide_interval(iv.mpf(1), iv.mpf(1)) == "holds"  # equal points: <= is proved
    assert intervals.decide_interval(iv.mpf([1, 1]), iv.mpf([0.5, 1])) == "undecided"
    with pytest.raises(ValueError, match="finite"):
        intervals.decide_interval((1, float("inf")), (0, 1))


def test_interval_mode_encloses_and_leaves_point_mode_alone():
    logits = np.array([[0.3, -1.2, 2.0]])
    mask = np.ones((1, 3))
    with precision.interval_arithmetic(30):
        p = reference.masked_softmax(logits, mask, 30)
        assert precision.is_interval(p)
        assert precision.in_interval_mode()
    assert not precision.in_interval_mode()
    exact = reference.masked_softmax(logits, mask, 60)
    with mpmath.workdps(60):
        for a, b in zip(p.flat, exact.flat, strict=True):
            lo, hi = intervals.ends(a)
            assert lo <= b <= hi
            assert hi - lo < mpmath.mpf(10) ** -25
    assert reference.masked_softmax(logits, mask, 30)[0, 0].__class__ is mpmath.mpf


def test_relu_and_expm1_enclosures():
    with precision.interval_arithmetic(DPS):
        assert intervals.ends(intervals.relu(iv.mpf([-1, 2]))) == (0, 2)
        assert intervals.ends(intervals.relu(iv.mpf([-2, -1]))) == (0, 0)
        assert intervals.ends(intervals.relu(iv.mpf([0.5, 1]))) == (0.5, 1)
        tiny = intervals.expm1(iv.mpf(1e-20))  # no cancellation: full precision
        assert intervals.width_digits(tiny) > DPS - 2
        for x in (1e-20, 0.3, -2.0, 50.0):
            lo, hi = intervals.ends(intervals.expm1(iv.mpf(x)))
            with mpmath.workdps(60):
                assert lo <= mpmath.expm1(x) <= hi
        # above arithmetic.HUGE_EXPONENT the chains use a power of two; the enclosure holds it
        huge = 2.5e4
        lo, hi = intervals.ends(intervals.chain_expm1(iv.mpf(huge)))
    assert lo <= arithmetic.expm1(mpmath.mpf(huge), DPS) <= hi
    assert lo > 0


def test_fc_and_block_enclose_the_reference():
    rng = np.random.default_rng(3)
    layers = FCWeights(tuple(rng.normal(size=(2, 2)) for _ in range(3)))
    x = rng.normal(size=(3, 2))
    weights = BlockWeights(_mha_weights(rng, 2, 2), layers)
    mask = np.tril(np.ones((3, 3)))
    with precision.interval_arithmetic(DPS):
        enclosures = [intervals.fc(x, layers.layers), intervals.block(x, mask, weights)]
    references = [reference.fc(x, layers, 60), reference.block(x, mask, weights, 60)]
    for enclosure, exact in zip(enclosures, references, strict=True):
        for a, b in zip(enclosure.flat, exact.flat, strict=True):
            lo, hi = intervals.ends(a)
            with mpmath.workdps(60):
                assert lo <= b <= hi


# --- instances ------------------------------------------------------------------------------------


def _spec(rng: np.random.Generator, rows: int, cols: int, norm: float = 0.9) -> np.ndarray:
    m = rng.uniform(-1, 1, (rows, cols))
    return m / np.linalg.norm(m, 2) * norm


def _tokens(rng: np.random.Generator, T: int, d: int, alpha: float, inside: float = 0.95) -> np.ndarray:
    X = rng.normal(size=(T, d))
    return X * (alpha * rng.uniform(0.5, inside, (T, 1)) / np.linalg.norm(X, axis=1, keepdims=True))


def _mha_weights(rng: np.random.Generator, H: int, d: int, dk: int = 2) -> MHAWeights:
    shapes = ((d, dk), (d, dk), (d, dk), (dk, d))
    return MHAWeights(*(np.stack([_spec(rng, *shape) for _ in range(H)]) for shape in shapes))


def _alpha(rng: np.random.Generator, d: int) -> float:
    return float(rng.uniform(np.sqrt(d), 2 * np.sqrt(d)))


def _random_lemma8(rng: np.random.Generator, T: int = 3, d1: int = 2) -> dict:
    alpha = float(rng.uniform(0.5, 2))
    X = rng.normal(size=(T, d1))
    X *= alpha * rng.uniform(0.2, 0.99, (T, 1)) / np.linalg.norm(X, axis=1, keepdims=True)
    e = float(rng.uniform(0.001, 0.5))
    return {"alpha": alpha, "d1": d1, "X": X, "logits": rng.normal(size=(T, T)), "mask": np.ones((T, T), np.int8),
            "perturbation": rng.uniform(-e, e, (T, T)), "eps_max": e}


def _lemma8_extremal(d1: int, alpha: float, eps_max: float) -> dict:
    """Lemma 8's extremal instance: tokens +-alpha u, logits (0, eps), perturbations (+eps, -eps)."""
    u = np.full(d1, 1 / np.sqrt(d1)) * (1 - 2.0**-50)  # norm <= 1 despite rounding
    return {"alpha": alpha, "d1": d1, "X": np.array([alpha * u, -alpha * u]),
            "logits": np.array([[0.0, eps_max]] * 2), "mask": np.ones((2, 2), np.int8),
            "perturbation": np.array([[eps_max, -eps_max]] * 2), "eps_max": eps_max}


def _random_lipschitz(rng: np.random.Generator, T: int = 3, d: int = 2, H: int = 2, L: int = 0) -> dict:
    """Lemma 12 (L = 0) or Lemma 13 (L FC layers): tokens and perturbed tokens inside the alpha-ball."""
    alpha = _alpha(rng, d)
    X = _tokens(rng, T, d, alpha, inside=0.8)
    e = float(rng.uniform(0.001, 0.1)) * alpha
    step = rng.normal(size=(T, d))
    Xp = X + step * (e * rng.uniform(0.5, 0.99, (T, 1)) / np.linalg.norm(step, axis=1, keepdims=True))
    w = _mha_weights(rng, H, d)
    inst = {"alpha": alpha, "d1": d, "d2": d, "X": X, "X_perturbed": Xp, "mask": np.tril(np.ones((T, T), np.int8)),
            "W_Q": w.W_Q, "W_K": w.W_K, "W_V": w.W_V, "W_O": w.W_O, "eps_max": e}
    if L:
        inst["fc_layers"] = tuple(_spec(rng, d, d) for _ in range(L))
    return inst


def _lipschitz_edge(alpha: float, eps_max: float, L: int = 0) -> dict:
    """d = H = 1, every weight 1, tokens +-alpha (both attended), the first moved by eps_max towards 0."""
    one = np.ones((1, 1, 1))
    X = np.array([[alpha], [-alpha]])
    inst = {"alpha": alpha, "d1": 1, "d2": 1, "X": X, "X_perturbed": X + np.array([[-eps_max], [0.0]]),
            "mask": np.ones((2, 2), np.int8), "W_Q": one, "W_K": one, "W_V": one, "W_O": one, "eps_max": eps_max}
    if L:
        inst["fc_layers"] = tuple(np.ones((1, 1)) for _ in range(L))
    return inst


def _fc_source(rng: np.random.Generator, layers: tuple, noise: float, structured: bool = True) -> tuple:
    """2L source layers: single-input pairs computing (W + E+) ReLU(x) - (W + E-) ReLU(-x), or dense ones."""
    out: list[np.ndarray] = []
    for W in layers:
        d_out, d_in = W.shape
        if not structured:
            out += [rng.normal(size=(2 * d_in, d_in)), 0.1 * rng.normal(size=(d_out, 2 * d_in))]
            continue
        c1, c2 = rng.uniform(0.5, 2, d_in), rng.uniform(0.5, 2, d_in)
        E1, E2 = (rng.uniform(-noise, noise, W.shape) for _ in range(2))
        out += [np.concatenate([np.diag(c1), -np.diag(c2)]), np.concatenate([(W + E1) / c1, -(W + E2) / c2], axis=1)]
    return tuple(out)


def _block_pair(rng: np.random.Generator, H: int, d: int, L: int, noise: float,
                structured: bool = True) -> tuple[BlockWeights, BlockWeights]:
    attention = _mha_weights(rng, H, d)
    layers = tuple(_spec(rng, d, d) for _ in range(L))
    source = MHAWeights(*(w + rng.uniform(-noise, noise, w.shape) for w in attention.tensors()))
    return (BlockWeights(attention, FCWeights(layers)),
            BlockWeights(source, FCWeights(_fc_source(rng, layers, noise, structured))))


def _random_t11(rng: np.random.Generator, T: int = 3, d: int = 2, H: int = 2, L: int = 2, noise: float = 1e-3,
                structured: bool = True) -> dict:
    alpha = _alpha(rng, d)
    target, source = _block_pair(rng, H, d, L, noise, structured)
    return t11.make_instance(target, source, _tokens(rng, T, d, alpha), np.tril(np.ones((T, T), np.int8)), alpha)


def _random_t14(rng: np.random.Generator, B: int = 2, T: int = 2, d: int = 2, H: int = 1, L: int = 1,
                noise: float = 1e-3, structured: bool = True) -> dict:
    alpha = _alpha(rng, d)
    pairs = [_block_pair(rng, H, d, L, noise, structured) for _ in range(B)]
    target, source = (TransformerWeights(tuple(p[k] for p in pairs)) for k in (0, 1))
    return t14.make_instance(target, source, _tokens(rng, T, d, alpha), np.tril(np.ones((T, T), np.int8)), alpha)


def _scalar_block(W_O: float, S_O: float, fc_exact: bool = True) -> tuple[BlockWeights, BlockWeights]:
    """d = H = L = 1: every target weight 1; the source reproduces W_Q, W_K, W_V, has W_O -> S_O, and
    an FC pair A_2 ReLU(A_1 z) = ReLU(z) - ReLU(-z) = z reproducing W = 1 exactly (zero error)."""
    one = np.ones((1, 1, 1))
    target = BlockWeights(MHAWeights(one, one, one, one * W_O), FCWeights((np.ones((1, 1)),)))
    fc = (np.array([[1.0], [-1.0]]), np.array([[1.0, -1.0 if fc_exact else -1.5]]))
    return target, BlockWeights(MHAWeights(one, one, one, one * S_O), FCWeights(fc))


# --- agreement with the point verdicts ------------------------------------------------------------


def _point_bound(statement: str, variant: str):
    module = load(statement)
    if variant in module.VARIANTS:
        return module.VARIANTS[variant]
    return next(m.bound for m in module.MUTANTS if m.name == variant)


def _agrees(statement: str, inst: dict, variant: str) -> str:
    """Point measured and bound lie in their enclosures; far from the bound the verdicts agree."""
    module = load(statement)
    # The ambient precision matters to a few module steps taken outside their working_precision
    # (lemma8's sqrt(d1), theorem14.eps_star's final products): they run at mpmath's default 53 bits
    # unless the caller sets it. At DPS digits they are what the modules mean.
    with mpmath.workdps(DPS):
        point = decide(module.measured(inst, DPS), _point_bound(statement, variant)(inst, DPS), DPS)
    result = certified.evaluate(statement, inst, variant, dps=DPS)
    assert result["reason"] is None
    with mpmath.workdps(60):
        for value, enclosure in ((point.measured, result["measured"]), (point.bound, result["bound"])):
            lo, hi = intervals.ends(enclosure)
            slack = mpmath.mpf(10) ** -25 * abs(value)
            assert lo - slack <= value <= hi + slack, (variant, value, lo, hi)
    if abs(point.ratio - 1) > 0.01:
        assert result["outcome"] == ("holds" if point.holds else "violated"), (variant, point.ratio)
        assert result["certified"]
    return result["outcome"]


@pytest.mark.parametrize("seed", range(6))
def test_lemma8_agrees_with_point_verdicts(seed):
    inst = _random_lemma8(np.random.default_rng(seed))
    for variant in ("as-stated", "exponent-quartered"):
        _agrees("lemma8", inst, variant)


def test_lemma8_extremal_instance_certified():
    inst = _lemma8_extremal(2, 1.5, 0.2)
    assert certified.evaluate("lemma8", inst)["outcome"] == "holds"
    # the quartered exponent is refuted with a certificate at the extremal point
    assert certified.evaluate("lemma8", inst, "exponent-quartered")["outcome"] == "violated"


@pytest.mark.lemma8
def test_blurred_enclosures_are_refined():
    """eps_max = 1e-30: the softmax difference cancels 30 digits, so at dps 30 the measured
    enclosure is blurred; evaluated again at 60 digits both verdicts are certified."""
    inst = _lemma8_extremal(2, 1.5, 1e-30)
    blurred = certified.evaluate("lemma8", inst, "exponent-quartered", max_dps=30)
    assert blurred["outcome"] == "undecided"
    assert blurred["work_dps"] == 30
    refined = certified.evaluate("lemma8", inst, "exponent-quartered")  # ratio ~2: refuted
    assert refined["outcome"] == "violated"
    assert refined["dps"] == 30 < refined["work_dps"] <= certified.MAX_DPS
    assert certified.evaluate("lemma8", inst)["outcome"] == "holds"
    for variant in ("exponent-quartered", "as-stated"):
        _agrees("lemma8", inst, variant)


@pytest.mark.parametrize("seed", range(4))
def test_lemma5_agrees_with_point_verdicts(seed):
    inst = _random_lemma8(np.random.default_rng(seed))  # eps_max <= 1/2: a Lemma 5 instance too
    for variant in ("as-stated", "via-lemma8", "quadratic"):
        _agrees("lemma5", inst, variant)


def test_lemma5_quadratic_mutant_refuted_with_a_certificate():
    inst = _lemma8_extremal(2, 1.5, 0.1)  # measured = 2 alpha tanh(0.05) > 4 sqrt(2) alpha 0.01
    assert _agrees("lemma5", inst, "quadratic") == "violated"
    assert certified.evaluate("lemma5", inst)["outcome"] == "holds"  # default: as-stated


@pytest.mark.parametrize("seed", range(3))
def test_lemma12_agrees_with_point_verdicts(seed):
    inst = _random_lipschitz(np.random.default_rng(seed))
    for variant in ("as-stated", "key-scaled", "value-term-only"):
        _agrees("lemma12", inst, variant)


@pytest.mark.parametrize("seed", range(3))
def test_lemma13_agrees_with_point_verdicts(seed):
    inst = _random_lipschitz(np.random.default_rng(seed), L=2)
    for variant in ("as-proven", "as-stated", "as-stated-eighth"):
        _agrees("lemma13", inst, variant)


@pytest.mark.lemma12
@pytest.mark.lemma13
def test_lipschitz_mutants_refuted_with_a_certificate():
    assert _agrees("lemma12", _lipschitz_edge(3.0, 0.01), "value-term-only") == "violated"  # ratio ~3
    assert _agrees("lemma12", _lipschitz_edge(3.0, 0.01), "as-stated") == "holds"
    assert _agrees("lemma13", _lipschitz_edge(1.0, 0.01, L=1), "as-stated-eighth") == "violated"  # ratio ~6
    assert _agrees("lemma13", _lipschitz_edge(1.0, 0.01, L=1), "as-proven") == "holds"


@pytest.mark.parametrize("statement", ["lemma12", "lemma13"])
def test_lipschitz_undecided_on_the_bound(statement):
    """For eps_max > 0 no instance attains these bounds: per head the softmax part is at most
    2 alpha tanh(alpha eps_max) (Lemma 8's supremum at logit perturbation 2 alpha eps_max), strictly
    below alpha (exp(4 alpha eps_max) - 1), and the value part at most eps_max <= sqrt(d1) eps_max
    (Lemma 13 as proven: twice that plus 2 eps_max). The only instances on the bound are those with
    X' = X: measured = bound = 0, which intervals cannot prove (the two evaluations of the same rows
    leave a difference enclosure [0, width])."""
    inst = _random_lipschitz(np.random.default_rng(7), L=0 if statement == "lemma12" else 2)
    inst["X_perturbed"], inst["eps_max"] = inst["X"].copy(), 0.0
    result = certified.evaluate(statement, inst)
    assert intervals.ends(result["bound"]) == (0, 0)
    assert result["outcome"] == "undecided"
    assert not result["certified"]
    # and a bound enclosure around the measured value itself decides nothing
    inst = _random_lipschitz(np.random.default_rng(8), L=0 if statement == "lemma12" else 2)
    m = certified.evaluate(statement, inst)["measured"]
    point = load(statement).measured(inst, DPS)
    with mpmath.workdps(60):
        around = (point * (1 - mpmath.mpf(10) ** -40), point * (1 + mpmath.mpf(10) ** -40))
    assert intervals.decide_interval(m, around) == "undecided"


@pytest.mark.parametrize("seed", range(3))
def test_theorem9_agrees_with_point_verdicts(seed):
    rng = np.random.default_rng(seed)
    target = _mha_weights(rng, 1, 2)
    source = MHAWeights(*(w + rng.uniform(-1e-3, 1e-3, w.shape) for w in target.tensors()))
    inst = t9.make_instance(target, source, _tokens(rng, 3, 2, 2.0), np.tril(np.ones((3, 3), np.int8)), 2.0)
    for variant in ("as-proven", "as-stated"):
        _agrees("theorem9", inst, variant)


@pytest.mark.parametrize("seed", range(3))
def test_theorem9_spectral_chains_agree_with_point_verdicts(seed):
    pytest.importorskip("flint")
    rng = np.random.default_rng(seed)
    target = _mha_weights(rng, 2, 2)
    source = MHAWeights(*(w + rng.uniform(-1e-3, 1e-3, w.shape) for w in target.tensors()))
    inst = t9.make_instance(target, source, _tokens(rng, 3, 2, 2.0), np.tril(np.ones((3, 3), np.int8)), 2.0)
    for variant in ("tight", "sharp"):
        _agrees("theorem9", inst, variant)


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 2), (2, 3), (4, 4)])
def test_spectral_norm_encloses_the_largest_singular_value(shape):
    pytest.importorskip("flint")
    matrix = np.random.default_rng(sum(shape)).normal(size=shape)
    low, high = intervals.ends(intervals.spectral_norm(matrix))
    with mpmath.workdps(40):
        exact = precision.spectral_norm(matrix, 40)
        assert low <= exact <= high
        assert high - low <= mpmath.mpf(10) ** -14 * exact
    repeated = np.eye(3)  # repeated eigenvalues: arb's multiple=True isolates them anyway
    low, high = intervals.ends(intervals.spectral_norm(repeated))
    assert low <= 1 <= high


# Gram matrices whose eigenvalues arb cannot isolate (a cluster split by subnormal entries: the deep
# profile's Theorem 9 instance had W_VO with repeated entries and subnormals at d1 = 6), and ones it can.
CLUSTERED = [
    ("subnormal-split", lambda: _with(np.full((6, 6), 0.1),
                                      [((0, 1), 5e-320), ((2, 3), 1e-310), ((4, 4), 0.1 + 2**-60)])),
    ("repeated-rows", lambda: _with(np.full((6, 4), 0.25), [((5, 3), 4e-324)])),
    ("near-identity", lambda: np.eye(5) + np.diag([0, 1e-300, 0, 5e-324, 0])),
    ("rank-one-tiny", lambda: _with(np.zeros((4, 4)), [((0, 0), 1e-200), ((3, 1), 2.2e-308)])),
]


def _with(matrix: np.ndarray, entries: list[tuple[tuple[int, int], float]]) -> np.ndarray:
    for index, value in entries:
        matrix[index] = value
    return matrix


@pytest.mark.parametrize(("name", "make"), CLUSTERED, ids=[name for name, _ in CLUSTERED])
def test_spectral_norm_encloses_where_arb_cannot_isolate_eigenvalues(name, make):
    """arb's eig raises "failed to isolate eigenvalues" on such Gram matrices; the enclosure must
    still exist, contain the singular value (decided at 60 digits) and be tight."""
    pytest.importorskip("flint")
    matrix = make()
    low, high = intervals.ends(intervals.spectral_norm(matrix))
    with mpmath.workdps(60):
        exact = precision.spectral_norm(matrix, 60)
        assert low <= exact <= high
        assert high - low <= mpmath.mpf(10) ** -12 * max(exact, mpmath.mpf(10) ** -300)


def test_the_fallback_bracket_is_rigorous_on_its_own():
    """largest_eigenvalue's second way (Rayleigh below, Gershgorin of V^-1 M V above), forced by a
    matrix arb cannot isolate, encloses the true largest eigenvalue (at 60 digits)."""
    flint = pytest.importorskip("flint")
    from sltcheck.numerics.singular_values import largest_eigenvalue

    matrix = CLUSTERED[0][1]()
    A = flint.arb_mat([[flint.arb(float(x)) for x in row] for row in matrix])
    saved, flint.ctx.prec = flint.ctx.prec, 200
    try:
        gram = A.transpose() * A  # exact at 200 bits
        with pytest.raises(ValueError, match="isolate"):
            gram.eig(multiple=True)
        top = largest_eigenvalue(gram)
    finally:
        flint.ctx.prec = saved
    with mpmath.workdps(60):
        exact = precision.spectral_norm(matrix, 60) ** 2
        assert mpmath.mpf(top.lower().mid().str(40, radius=False)) <= exact * (1 + mpmath.mpf(10) ** -30)
        assert exact <= mpmath.mpf(top.upper().mid().str(40, radius=False)) * (1 + mpmath.mpf(10) ** -30)

@pytest.mark.theorem9
def test_an_instance_sitting_on_the_bound_is_attained_not_undecided():
    """d1 = d2 = H = 1, one token of norm alpha, W_QK reproduced exactly (all zero), only W_VO
    perturbed (0 -> e): measured = alpha e = the as-proven bound, as real numbers. No enclosure
    decides it; exact arithmetic proves measured = bound ("attained")."""
    # alpha and e with full mantissas, so that the products round and the enclosures have width
    # (with alpha = 1, e = 0.01 both sides are computed exactly and equality is proved: "holds")
    alpha, e = 1.2345678901234567, np.full((1, 1, 1), 0.0123456789)
    zero = np.zeros((1, 1, 1))
    target, source = MHAWeights(zero, zero, zero, zero), MHAWeights(zero, zero, e, np.ones((1, 1, 1)))
    inst = t9.make_instance(target, source, np.array([[alpha]]), np.ones((1, 1), np.int8), alpha)
    assert certified._evaluate_at("theorem9", inst, "as-proven", 40, "mpmath")["outcome"] == "undecided"
    result = certified.evaluate("theorem9", inst, "as-proven", dps=40)
    assert result["outcome"] == ("attained" if arb_available() else "undecided")
    point = decide(t9.measured(inst, 40), t9.VARIANTS["as-proven"](inst, 40), 40)
    assert point.undecided or abs(point.ratio - 1) < 1e-30


T11_VARIANTS = ("as-proven", "theorem10-literal", "theorem10-scaled", "as-stated",
                "half", "single-attention-term", "no-fc-term", "fc-input-alpha")


@pytest.mark.parametrize(("seed", "noise"), [(0, 1e-3), (1, 1e-3), (2, 1e-8)])
def test_theorem11_agrees_with_point_verdicts(seed, noise):
    """noise 1e-8: eps* < 1, so ``as-stated`` is eps* itself rather than the as-proven fallback."""
    inst = _random_t11(np.random.default_rng(seed), noise=noise)
    for variant in T11_VARIANTS:
        _agrees("theorem11", inst, variant)
    star = t11.eps_star(t11.target_of(inst), t11.source_of(inst), inst["alpha"], DPS)
    assert (star < 1) == (noise < 1e-6)


def test_theorem11_attained_on_an_instance_sitting_on_the_bound():
    """d1 = H = L = 1, one token x = alpha, W_QK reproduced exactly, W_VO: 1 -> 1 + e, the FC pair
    reproducing W = 1 exactly. Then z' - z = alpha dW_VO, F_S = F_T = identity, so measured =
    |(1 + W)(z' - z)| = 2 alpha e; the chain: A = alpha e (e_QK = 0, so the softmax term is 0),
    the FC term is delta (r + 0) = 0 (e_l = 0), total = 0 + A + A = 2 alpha e: equal as real numbers."""
    alpha, e = 1.2345678901234567, 0.0123456789
    target, source = _scalar_block(1.0, 1.0 + e)
    inst = t11.make_instance(target, source, np.array([[alpha]]), np.ones((1, 1), np.int8), alpha)
    assert certified._evaluate_at("theorem11", inst, "as-proven", 40, "mpmath")["outcome"] == "undecided"
    result = certified.evaluate("theorem11", inst, dps=40)  # default: as-proven
    assert result["variant"] == "as-proven"
    assert result["outcome"] == ("attained" if arb_available() else "undecided")
    point = decide(t11.measured(inst, 40), t11.VARIANTS["as-proven"](inst, 40), 40)
    assert point.undecided or abs(point.ratio - 1) < 1e-30
    # the halved bound is refuted with a certificate; eps* = 8 alpha e < 1 holds with one
    assert _agrees("theorem11", inst, "half") == "violated"
    assert _agrees("theorem11", inst, "as-stated") == "holds"


@pytest.mark.parametrize("statement", ["theorem11", "theorem14"])
def test_generic_fc_pairs_are_enclosed_through_spectral_norms(statement):
    """A source FC pair that is not single-input: Theorem 10's generic delta ||A_2|| ||A_1|| + ||W_l||."""
    pytest.importorskip("flint")
    rng = np.random.default_rng(5)
    if statement == "theorem11":
        inst, variants = _random_t11(rng, structured=False), T11_VARIANTS
    else:
        inst, variants = _random_t14(rng, structured=False), T14_VARIANTS
    for variant in variants:
        _agrees(statement, inst, variant)


T14_VARIANTS = ("as-proven", "lemma13-as-stated", "as-stated", "last-block-only", "lipschitz-one", "constant-betas")


@pytest.mark.parametrize(("seed", "noise"), [(0, 1e-3), (1, 1e-3), (2, 1e-11)])
def test_theorem14_agrees_with_point_verdicts(seed, noise):
    """noise 1e-11: eps* < 1, so ``as-stated`` is eps* itself rather than the as-proven fallback."""
    inst = _random_t14(np.random.default_rng(seed), noise=noise, H=2 if seed == 1 else 1)
    for variant in T14_VARIANTS:
        _agrees("theorem14", inst, variant)
    star = t14.eps_star(t14.target_of(inst), t14.source_of(inst), inst["alpha"], DPS)
    assert (star < 1) == (noise < 1e-6)


@pytest.mark.parametrize(("B", "bits"), [(2, 10**6), (3, arithmetic.VACUOUS_BITS)], ids=["power-of-two", "capped"])
def test_theorem14_astronomical_bounds_enclosed(B, bits):
    """Large source errors: Lemma 13's exp(4 beta Delta) overflows arithmetic.HUGE_EXPONENT and the chain
    uses arithmetic.expm1's power of two (at B = 3 capped at 2^VACUOUS_BITS); the enclosure holds it."""
    inst = _random_t14(np.random.default_rng(0), B=B, H=2, noise=0.3)
    result = certified.evaluate("theorem14", inst)
    point = t14.VARIANTS["as-proven"](inst, DPS)
    lo, hi = intervals.ends(result["bound"])
    with mpmath.workdps(DPS):
        assert lo <= point <= hi
        assert mpmath.log(point, 2) > 0.99 * bits
    assert result["outcome"] == "holds"


def _t14_scalar(first_S_O: float, second_S_O: float) -> dict:
    """B = 2 scalar blocks (``_scalar_block``), two tokens (so the softmax rounds) of norm <= 1.5."""
    blocks = [_scalar_block(1.0, first_S_O), _scalar_block(1.0, second_S_O)]
    target, source = (TransformerWeights(tuple(b[k] for b in blocks)) for k in (0, 1))
    return t14.make_instance(target, source, np.array([[1.5], [-0.7]]), np.ones((2, 2), np.int8), 1.5)


def test_theorem14_mutant_refuted_and_undecided_on_the_bound():
    """No instance with a source error attains the as-proven bound: Lemma 13's term is strict once
    Delta_b > 0, and block b >= 2's Theorem 11 term is taken at alpha_b >= 2 beta_b while its tokens
    have norm <= beta_b + Delta_b (the chain grows with its token bound when the block errs). The
    exact source sits on it: measured = bound = 0, which intervals cannot prove (the source FC pair
    computes the same real numbers through different operations)."""
    # block 1 errs, block 2 is exact: the last block's Theorem 11 term alone (0) is refuted
    assert _agrees("theorem14", _t14_scalar(1.01, 1.0), "last-block-only") == "violated"
    assert _agrees("theorem14", _t14_scalar(1.01, 1.0), "as-proven") == "holds"
    exact = _t14_scalar(1.0, 1.0)
    result = certified.evaluate("theorem14", exact)
    assert intervals.ends(result["bound"]) == (0, 0)
    assert result["outcome"] == "undecided"
    assert not result["certified"]
    # a bound enclosure around the measured value itself decides nothing
    inst = _random_t14(np.random.default_rng(4))
    m = certified.evaluate("theorem14", inst)["measured"]
    point = t14.measured(inst, DPS)
    with mpmath.workdps(60):
        around = (point * (1 - mpmath.mpf(10) ** -40), point * (1 + mpmath.mpf(10) ** -40))
    assert intervals.decide_interval(m, around) == "undecided"


@pytest.mark.lemma8
@pytest.mark.theorem11
def test_unsupported():
    with pytest.raises(ValueError, match="statement"):
        certified.evaluate("lemma99", {}, None)
    with pytest.raises(ValueError, match="variant"):
        certified.evaluate("lemma8", {}, "tight")
    with pytest.raises(ValueError, match="variant"):
        certified.evaluate("theorem11", {}, "no-such-variant")
    with pytest.raises(ValueError, match="backend"):
        certified.evaluate("lemma8", _lemma8_extremal(2, 1.5, 0.2), backend="interval")


@every_statement
def test_every_variant_is_enclosed():
    """Every statement has an enclosure, of every variant (so ``check`` certifies each worst instance)."""
    from sltcheck.registry import STATEMENT_MODULES

    covered = certified.supported()
    assert set(covered) == set(STATEMENT_MODULES)
    for statement in covered:
        module = load(statement)
        assert module.DEFAULT_VARIANT in covered[statement]
        assert set(module.VARIANTS) <= set(covered[statement]), statement
        assert all(name in module.VARIANTS or name in {m.name for m in module.MUTANTS} for name in covered[statement])


# --- the enclosures on both backends; the tight/sharp chains and Lemmas 2, 4, 7 ------------------

BACKENDS = [pytest.param("arb", marks=pytest.mark.skipif(not arb_available(), reason="needs python-flint")),
            "mpmath"]


def _start(statement: str, shape: dict, seed: int = 0, on_boundary: bool = True) -> dict:
    instances = importlib.import_module(f"sltcheck.statements.{statement}.instances")
    return instances.start(shape, np.random.default_rng(seed), on_boundary=on_boundary)


def _t11_scalar(S_O: float = 1.01) -> dict:
    """d1 = H = L = 1, one token: measured = 2 a |dW_VO| = the sharp and the tight bound (F_T = id)."""
    target, source = _scalar_block(1.0, S_O)
    return t11.make_instance(target, source, np.array([[1.3]]), np.ones((1, 1), np.int8), 1.5)


# (statement, variant, instance): each enclosure holds the module's 60-digit values of both sides
ENCLOSED_AT_60_DIGITS = [
    ("theorem11", "tight", lambda: _random_t11(np.random.default_rng(3))),
    ("theorem11", "sharp", lambda: _random_t11(np.random.default_rng(4))),
    ("theorem11", "tight", lambda: _random_t11(np.random.default_rng(5), structured=False)),  # generic FC pair
    ("theorem11", "as-proven", lambda: _random_t11(np.random.default_rng(5), structured=False)),
    ("theorem14", "tight", lambda: _random_t14(np.random.default_rng(3))),
    ("theorem14", "sharp", lambda: _random_t14(np.random.default_rng(4), structured=False)),
    ("lemma2", "as-proven", lambda: _start("lemma2", {"d1": 2, "d2": 2, "n_prime": 4}, on_boundary=False)),
    ("lemma2", "bound-quartered", lambda: _start("lemma2", {"d1": 1, "d2": 2, "n_prime": 3})),
    ("lemma4", "construction", lambda: _start("lemma4", {"d1": 2, "d2": 2, "n_prime": 2})),
    ("lemma7", "construction", lambda: _start("lemma7", {"d1": 2, "d2": 2, "n_prime": 2}, seed=1)),
    ("lemma7", "no-structured-mask", lambda: _start("lemma7", {"d1": 2, "d2": 1, "n_prime": 2})),
    ("lemma7", "supremum-0.97", lambda: _start("lemma7", {"d1": 3, "d2": 1, "n_prime": 1})),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("statement", "variant", "make"), ENCLOSED_AT_60_DIGITS,
                         ids=[f"{s}-{v}-{i}" for i, (s, v, _) in enumerate(ENCLOSED_AT_60_DIGITS)])
def test_enclosure_contains_the_60_digit_value(statement, variant, make, backend):
    if statement.startswith("theorem"):
        pytest.importorskip("flint")  # spectral norms (tight, sharp, a generic FC pair)
    inst = make()
    with mpmath.workdps(60):
        values = (load(statement).measured(inst, 60), _point_bound(statement, variant)(inst, 60))
    result = certified.evaluate(statement, inst, variant, dps=60, backend=backend)
    assert result["backend"] in (backend, "exact")  # exact: decided exactly
    assert result["reason"] is None
    with mpmath.workdps(80):
        for side, value in zip(("measured", "bound"), values, strict=True):
            lo, hi = intervals.ends(result[side])
            slack = mpmath.mpf(10) ** -57 * abs(value)  # the module rounds its result to 60 digits
            assert lo - slack <= value <= hi + slack, (value, lo, hi)
            if side == "bound" or statement not in ("lemma4", "lemma7"):  # their measured: [float optimum
                # - its rounding bound, the best masks' exact error]
                assert hi - lo <= mpmath.mpf(10) ** -40 * max(abs(value), 1), (side, lo, hi)


def _last_block_sharp(result: dict, inst: dict) -> object:
    """Theorem 14 sharp with the last block's Theorem 11 term only (block 2 exact: 0)."""
    from sltcheck.statements.theorem11.enclosure import chain

    target, source = t14.target_of(inst), t14.source_of(inst)
    token_bound = intervals.num(float(np.linalg.norm(inst["X"], axis=1).max())) * 1000  # any bound: the term is 0
    return chain(target.blocks[-1], source.blocks[-1], token_bound, mode="sharp")["total"]


# (statement, variant whose bound the mutant changes, mutant, instance): certified violated
MUTANT_REFUTED = [
    ("theorem11", "sharp", "half the sharp bound (attained: one token, W_VO perturbed, F_T = id)",
     lambda r, inst: intervals.as_interval(r["bound"]) / 2, _t11_scalar),
    ("theorem11", "tight", "half the tight bound", lambda r, inst: intervals.as_interval(r["bound"]) / 2, _t11_scalar),
    ("theorem14", "sharp", "the last block's sharp Theorem 11 term only", _last_block_sharp,
     lambda: _t14_scalar(1.01, 1.0)),
    ("lemma2", "bound-quartered", "sqrt(d1 d2) e / 4 at d1 = d2 = 1, x = +-e_1", None,
     lambda: _start("lemma2", {"d1": 1, "d2": 1, "n_prime": 4})),
    ("lemma7", "bound-halved", "half the construction's error at d1 = 1", None,
     lambda: _start("lemma7", {"d1": 1, "d2": 2, "n_prime": 4})),
    ("lemma7", "supremum-0.97", "0.97 x the construction's error", None,
     lambda: _start("lemma7", {"d1": 2, "d2": 2, "n_prime": 3})),
    ("lemma4", "bound-halved", "half the construction's error", None,
     lambda: _start("lemma4", {"d1": 2, "d2": 2, "n_prime": 2})),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("statement", "variant", "mutant", "mutate", "make"), MUTANT_REFUTED,
                         ids=[f"{s}-{v}-{i}" for i, (s, v, *_) in enumerate(MUTANT_REFUTED)])
def test_mutant_instance_is_certified_violated(statement, variant, mutant, mutate, make, backend):
    if statement.startswith("theorem"):
        pytest.importorskip("flint")
    inst = make()
    result = certified.evaluate(statement, inst, variant, backend=backend)
    if mutate is None:  # a mutant of the statement module, enclosed as such
        assert result["outcome"] == "violated", mutant
        return
    assert result["outcome"] in ("holds", "attained", "undecided")  # the variant itself is not refuted
    with intervals.using(backend, certified.DEFAULT_DPS):
        assert intervals.decide_interval(result["measured"], mutate(result, inst)) == "violated", mutant


@pytest.mark.theorem11
def test_spectral_bounds_need_python_flint(monkeypatch):
    """Without python-flint the spectral chains are undecided with a reason, on the mpmath backend."""
    monkeypatch.setitem(sys.modules, "flint", None)  # import flint now fails
    result = certified.evaluate("theorem11", _t11_scalar(), "sharp", backend="mpmath")
    assert result["outcome"] == "undecided"
    assert result["bound"] is None
    assert "python-flint" in result["reason"]


@pytest.mark.parametrize("statement", ["lemma8", "theorem9", "lemma12"])
def test_backends_agree(statement):
    """The two backends' enclosures of the same instance overlap and give the same outcome."""
    if not arb_available():
        pytest.skip("needs python-flint")
    inst = {"lemma8": lambda: _lemma8_extremal(2, 1.5, 0.2),
            "theorem9": lambda: _start("theorem9", {"d1": 2, "d2": 2, "H": 2, "dK": 1, "dV": 2, "T": 3}),
            "lemma12": lambda: _random_lipschitz(np.random.default_rng(3), L=0)}[statement]()
    arb, mp = (certified.evaluate(statement, inst, backend=b) for b in ("arb", "mpmath"))
    assert (arb["backend"], mp["backend"]) == ("arb", "mpmath")
    assert arb["outcome"] == mp["outcome"]
    for side in ("measured", "bound"):
        (a_lo, a_hi), (m_lo, m_hi) = intervals.ends(arb[side]), intervals.ends(mp[side])
        assert max(a_lo, m_lo) <= min(a_hi, m_hi)


@pytest.mark.parametrize("backend", BACKENDS)
def test_backend_exact_ends(backend):
    """number / from_ends / ends: exact where the value fits, outward otherwise, never false."""
    from sltcheck.numerics.balls import backend as pick

    arith = pick(backend)
    with arith.working_precision(30):
        third = mpmath.mpf(1) / 3  # 53 bits: a point on both backends
        assert arith.ends(arith.number(third)) == (third, third)
        assert arith.ends(arith.number(0.1)) == (mpmath.mpf(0.1), mpmath.mpf(0.1))
        lo, hi = arith.ends(arith.from_ends(third, 2.0))
        assert lo <= third
        assert hi >= 2
        lo, hi = arith.ends(arith.number(1) / 3)
        with mpmath.workprec(1000):  # exact products of the ends
            assert 3 * lo < 1 < 3 * hi  # 1/3, rounded outward
            assert hi - lo < mpmath.mpf(10) ** -29
        lo, hi = arith.ends(arith.from_ends(mpmath.mpf("-inf"), 2.0))
        assert lo == -mpmath.inf
        assert hi >= 2
    with intervals.using(backend, 30):  # x * x of [-1, 2] would reach -2; square, sqrt, relu stay at 0
        straddling = intervals.interval_of(-1, 2)
        for value, low, high in ((intervals.square(straddling), 0, 4),
                                 (intervals.sqrt(intervals.interval_of(0, 4)), 0, 2),
                                 (intervals.relu(straddling), 0, 2)):
            lo, hi = intervals.ends(value)
            # an arb ball [0, 4] is 2 +/- 2 with the radius rounded up (30 bits): ~1e-8 beyond each end
            assert -1e-7 < lo <= low
            assert high <= hi < high + 1e-7
