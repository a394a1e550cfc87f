"""Random source models and norm-bounded random targets.

Source initialisations, by name (``INITS``):

* ``"theory"``: Section 3.1 and Theorem 9: every entry of W_Q, W_K i.i.d. from
  U[-n_K^(1/4), n_K^(1/4)], so that W' = W / n_K^(1/4) is U[-1, 1] (Section 3.2);
  W_V, W_O from U[-1, 1]; FC layers from U[-1, 1] (Theorem 10).
* ``"xavier"``: Xavier/Glorot uniform, U[-b, b] with b = sqrt(6 / (fan_in + fan_out))
  per matrix, which Appendix B.1 says the experiments' sources used. Fans are
  those of each head's matrix (W_Q^(j): d1 and n_K; W_O^(j): n_V and d2; an FC
  layer (d_out x d_in): d_in and d_out), i.e. torch's nn.Linear per projection; a
  fused all-heads projection would have larger fans when H > 1.
* ``"theory-inverse"``: W_Q, W_K from U[-n_K^(-1/4), n_K^(-1/4)], the rest as
  "theory". Section 4.1's text states this range, contradicting Section 3.1
  (and Appendix B.1, which gives n_K^(1/4) for the *targets*); it is kept as a
  named variant so both readings can be run.

Every draw takes ``seed``, an int or a numpy Generator; the same int gives
byte-identical weights. Arrays are drawn in a fixed order (W_Q, W_K, W_V, W_O,
then FC layers first to last, block after block).

Targets (:func:`target_mha` and friends) satisfy the theorems' assumptions:
||W_Q^(j)||, ||W_K^(j)||, ||W_V^(j)||, ||W_O^(j)|| <= 1 (Section 3.1) and
||W_l|| <= 1 for FC layers (Theorem 10): a Gaussian matrix scaled to spectral norm
``spectral_bound`` (1 - 2^-40), the margin covering LAPACK's rounding so that the
bound also holds in mpmath.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from sltcheck.model.weights import BlockWeights, FCWeights, MHAWeights, TransformerWeights
from sltcheck.numerics.validation import check_choice, check_positive

INITS: tuple[str, ...] = ("theory", "xavier", "theory-inverse")
SPECTRAL_MARGIN = 1.0 - 2.0**-40

Seed = int | np.random.Generator


def generator(seed: Seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative integer or a numpy Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def _check_width(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _uniform(rng: np.random.Generator, bound: float, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(-bound, bound, size=shape)


def _xavier_bound(fan_in: int, fan_out: int) -> float:
    return float(np.sqrt(6.0 / (fan_in + fan_out)))


# --- sources ------------------------------------------------------------------------------------


def source_mha(
    init: str = "theory",
    seed: Seed = 0,
    *,
    heads: int,
    d_in: int,
    d_out: int,
    n_key: int,
    n_value: int,
) -> MHAWeights:
    """A random source MHA: W_Q, W_K (H, d1, n_K), W_V (H, d1, n_V), W_O (H, n_V, d2)."""
    init = check_choice("init", init, INITS)
    h, d1, d2 = (_check_width(n, v) for n, v in (("heads", heads), ("d_in", d_in), ("d_out", d_out)))
    nk, nv = _check_width("n_key", n_key), _check_width("n_value", n_value)
    rng = generator(seed)
    if init == "xavier":
        qk_bound, v_bound, o_bound = _xavier_bound(d1, nk), _xavier_bound(d1, nv), _xavier_bound(nv, d2)
    else:
        qk_bound = nk**0.25 if init == "theory" else nk**-0.25
        v_bound = o_bound = 1.0
    W_Q = _uniform(rng, qk_bound, (h, d1, nk))
    W_K = _uniform(rng, qk_bound, (h, d1, nk))
    W_V = _uniform(rng, v_bound, (h, d1, nv))
    W_O = _uniform(rng, o_bound, (h, nv, d2))
    return MHAWeights(W_Q, W_K, W_V, W_O)


def source_fc(
    init: str = "theory", seed: Seed = 0, *, widths: Sequence[int], hidden: int | Sequence[int]
) -> FCWeights:
    """A 2L-layer source for an L-layer target of widths d_1, ..., d_{L+1} (Theorem 10).

    ``hidden`` is n_l, the width between source layers 2l-1 and 2l (one value for all l,
    or one per target layer); Lemma 7's grouping wants n_l divisible by d_l.
    """
    init = check_choice("init", init, INITS)
    dims = [_check_width(f"widths[{i}]", w) for i, w in enumerate(widths)]
    if len(dims) < 2:
        raise ValueError(f"widths must list d_1, ..., d_(L+1) (at least 2 numbers), got {list(widths)}")
    layers_count = len(dims) - 1
    hiddens = [hidden] * layers_count if isinstance(hidden, int | np.integer) else list(hidden)
    if len(hiddens) != layers_count:
        raise ValueError(f"hidden must be one width or {layers_count} widths, got {hidden!r}")
    hiddens = [_check_width(f"hidden[{i}]", n) for i, n in enumerate(hiddens)]
    rng = generator(seed)
    layers = []
    for d_in, n, d_out in zip(dims[:-1], hiddens, dims[1:], strict=True):
        for shape in ((n, d_in), (d_out, n)):
            bound = _xavier_bound(shape[1], shape[0]) if init == "xavier" else 1.0
            layers.append(_uniform(rng, bound, shape))
    return FCWeights(tuple(layers))


def source_block(
    init: str = "theory",
    seed: Seed = 0,
    *,
    d: int,
    heads: int,
    n_mha: int,
    n_fc: int | Sequence[int],
    fc_widths: Sequence[int] | None = None,
) -> BlockWeights:
    """A source block of width d with n_K = n_V = n_mha (Theorem 11) and FC hidden width n_fc;
    ``fc_widths`` are the *target* FC widths d_1..d_{L+1} (default (d, d): one layer)."""
    rng = generator(seed)
    attention = source_mha(init, rng, heads=heads, d_in=d, d_out=d, n_key=n_mha, n_value=n_mha)
    return BlockWeights(attention, source_fc(init, rng, widths=fc_widths or (d, d), hidden=n_fc))


def source_transformer(
    init: str = "theory",
    seed: Seed = 0,
    *,
    blocks: int,
    d: int,
    heads: int,
    n_mha: int,
    n_fc: int | Sequence[int],
    fc_widths: Sequence[int] | None = None,
) -> TransformerWeights:
    """B source blocks as :func:`source_block`, drawn one after the other from one generator."""
    count = _check_width("blocks", blocks)
    rng = generator(seed)
    return TransformerWeights(
        tuple(
            source_block(init, rng, d=d, heads=heads, n_mha=n_mha, n_fc=n_fc, fc_widths=fc_widths)
            for _ in range(count)
        )
    )


def source_like(
    target: MHAWeights | BlockWeights | TransformerWeights | FCWeights,
    init: str = "theory",
    seed: Seed = 0,
    *,
    n_key: int | None = None,
    n_value: int | None = None,
    fc_hidden: int | Sequence[int] | None = None,
) -> MHAWeights | BlockWeights | TransformerWeights | FCWeights:
    """A random source with the target's heads and widths and the given hidden widths
    (n_K, n_V for attention, n_FC for FC layers; all blocks share them)."""
    rng = generator(seed)

    def need(name: str, value: object) -> int:
        if value is None:
            raise ValueError(f"{name} must be given for a target of type {type(target).__name__}")
        return _check_width(name, value)

    def fc_like(fc: FCWeights) -> FCWeights:
        if fc_hidden is None:
            raise ValueError(f"fc_hidden must be given for a target of type {type(target).__name__}")
        widths = [fc.d_in] + [layer.shape[0] for layer in fc.layers]
        return source_fc(init, rng, widths=widths, hidden=fc_hidden)

    def mha_like(mha: MHAWeights) -> MHAWeights:
        n_k, n_v = need("n_key", n_key), need("n_value", n_value)
        return source_mha(init, rng, heads=mha.heads, d_in=mha.d_in, d_out=mha.d_out, n_key=n_k, n_value=n_v)

    if isinstance(target, MHAWeights):
        return mha_like(target)
    if isinstance(target, FCWeights):
        return fc_like(target)
    if isinstance(target, BlockWeights):
        return BlockWeights(mha_like(target.attention), fc_like(target.fc))
    if isinstance(target, TransformerWeights):
        return TransformerWeights(
            tuple(BlockWeights(mha_like(b.attention), fc_like(b.fc)) for b in target.blocks)
        )
    raise ValueError(
        "target must be MHAWeights, FCWeights, BlockWeights or TransformerWeights, "
        f"got {type(target).__name__}"
    )


# --- targets ------------------------------------------------------------------------------------


def spectrally_bounded(
    rng: np.random.Generator, shape: tuple[int, ...], spectral_bound: float = 1.0
) -> np.ndarray:
    """Gaussian matrices (the last two axes) scaled to spectral norm spectral_bound (1 - 2^-40)."""
    bound = check_positive("spectral_bound", spectral_bound)
    matrices = rng.standard_normal(shape)
    norms = np.linalg.norm(matrices.reshape(-1, *shape[-2:]), ord=2, axis=(1, 2))
    scale = bound * SPECTRAL_MARGIN / norms
    return (matrices.reshape(-1, *shape[-2:]) * scale[:, None, None]).reshape(shape)


def target_mha(
    seed: Seed = 0,
    *,
    heads: int,
    d_in: int,
    d_key: int,
    d_value: int,
    d_out: int,
    spectral_bound: float = 1.0,
) -> MHAWeights:
    """A random target MHA with every ||W_Q^(j)||, ||W_K^(j)||, ||W_V^(j)||, ||W_O^(j)|| <= bound."""
    h, d1, dk, dv, d2 = (
        _check_width(n, v)
        for n, v in (("heads", heads), ("d_in", d_in), ("d_key", d_key), ("d_value", d_value), ("d_out", d_out))
    )
    rng = generator(seed)
    shapes = ((h, d1, dk), (h, d1, dk), (h, d1, dv), (h, dv, d2))
    return MHAWeights(*(spectrally_bounded(rng, s, spectral_bound) for s in shapes))


def target_fc(seed: Seed = 0, *, widths: Sequence[int], spectral_bound: float = 1.0) -> FCWeights:
    """A random L-layer target of widths d_1, ..., d_{L+1} with every ||W_l|| <= bound."""
    dims = [_check_width(f"widths[{i}]", w) for i, w in enumerate(widths)]
    if len(dims) < 2:
        raise ValueError(f"widths must list d_1, ..., d_(L+1) (at least 2 numbers), got {list(widths)}")
    rng = generator(seed)
    shapes = [(d_out, d_in) for d_in, d_out in itertools.pairwise(dims)]
    return FCWeights(tuple(spectrally_bounded(rng, shape, spectral_bound) for shape in shapes))


def target_block(
    seed: Seed = 0,
    *,
    d: int,
    heads: int,
    d_key: int,
    d_value: int,
    fc_widths: Sequence[int] | None = None,
    spectral_bound: float = 1.0,
) -> BlockWeights:
    """A random target block of width d; the FC widths default to (d, d) (one layer)."""
    rng = generator(seed)
    attention = target_mha(
        rng, heads=heads, d_in=d, d_key=d_key, d_value=d_value, d_out=d, spectral_bound=spectral_bound
    )
    fc = target_fc(rng, widths=fc_widths or (d, d), spectral_bound=spectral_bound)
    return BlockWeights(attention, fc)


def target_transformer(
    seed: Seed = 0,
    *,
    blocks: int,
    d: int,
    heads: int,
    d_key: int,
    d_value: int,
    fc_widths: Sequence[int] | None = None,
    spectral_bound: float = 1.0,
) -> TransformerWeights:
    count = _check_width("blocks", blocks)
    rng = generator(seed)
    shape = {"d": d, "heads": heads, "d_key": d_key, "d_value": d_value, "fc_widths": fc_widths}
    return TransformerWeights(
        tuple(target_block(rng, **shape, spectral_bound=spectral_bound) for _ in range(count))  # type: ignore[arg-type]
    )
