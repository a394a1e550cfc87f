"""The pruning construction of Lemma 7, applied to attention, FC layers and whole models.

Lemma 7 (proof, Eqs. (6)-(8)). A target W (d2 x d1) is approximated by
(W2 ⊙ M2)(W1 ⊙ M1) with W1 (n x d1), W2 (d2 x n). The n hidden units are split
into d1 groups of n' = n // d1 consecutive units; M1 keeps, in group j, only
column j (Eq. (6): W1 ⊙ M1 is block diagonal with blocks u_j = W1[group j, j]).
Entry (i, j) of the product is then the subset sum sum_k m_{i,j,k} v_{i,j,k} u_{j,k}
with v_{i,j} = W2[i, group j] (Eq. (8)), and M2 picks, entry by entry, the subset
closest to W[i, j] (:mod:`sltcheck.pruning.subset_sum`). If n is not a multiple of d1,
``remainder="error"`` (default) refuses and ``remainder="drop"`` prunes the last
n - d1 n' units entirely.

Applied to an MHA (Section 3.2, proof of Theorem 9, Eqs. (10), (11), (14), (15)):

* W_QK^(j) (d1 x d1) ≈ (W_Q'⊙M_Q)(W_K'⊙M_K)^T with W' = W / n_K^(1/4), i.e. the
  pruned source's own W_Q W_K^T / sqrt(n_K) (Eq. (4)): "W2" = W_Q (d1 x n_K),
  "W1" = W_K^T (n_K x d1), so the structured mask is M_K. The scale 1/sqrt(n_K)
  is applied to the candidates in float64 and exactly in the mpmath error.
  (The proof of Theorem 9 writes d_K^(1/4) for this scale; Eq. (4) and Section 3.2
  make clear that n_K, the source's key width, is meant.)
* W_VO^(j) (d1 x d2) ≈ (W_V⊙M_V)(W_O⊙M_O): "W2" = W_V (d1 x n_V), "W1" = W_O
  (n_V x d2), so the groups run over the d2 output columns and n_V must be a
  multiple of d2. Theorem 9 states n_V >= d1 C log(...), which is Lemma 7's
  "n >= d1 C log" only when d1 = d2.

Fully-connected layers follow Pensia et al. (2020), Lemma 2/Theorem 1 (our
Theorem 10): each target layer W (d_out x d_in) is approximated by
(W2⊙M2) ReLU((W1⊙M1) x), W1 (n x d_in), W2 (d_out x n). M1 is the same block
structure (group j of n' = n // d_in units reads only x_j, weights u_k). Because
ReLU(u_k x_j) = u_k ReLU(x_j) for u_k > 0 and |u_k| ReLU(-x_j) for u_k < 0, and
w x = w ReLU(x) - w ReLU(-x), the units of group j split by the sign of u_k:

    positive units:  sum_{k: u_k > 0} m_{i,k} W2[i,k] u_k  ≈ W[i, j]   (coefficient of ReLU(x_j))
    negative units:  sum_{k: u_k < 0} m_{i,k} W2[i,k] u_k  ≈ W[i, j]   (minus that of ReLU(-x_j))

two independent subset-sum problems per entry, over the products v u^+ and v u^-
of Pensia et al.'s proof. The pruned layer computes A ReLU(x) - B ReLU(-x) with A,
B the two subset-sum matrices, so |F_S(x) - W x|_i <= sum_j max(|A - W|, |B - W|)_ij |x_j|;
the recorded layer error is max(||W - A||_max, ||W - B||_max). An L-layer target
becomes a 2L-layer source; the source's ReLU after layer 2l is the target's after l.

Every error here is recomputed in mpmath (``dps`` digits, float64 weights
converted exactly) from the masks and the source weights, never taken from a solver.

The parts: :mod:`~sltcheck.pruning.product_approximation` (Lemma 7 on one product),
:mod:`~sltcheck.pruning.relu_layers` (Pensia et al.'s layer); this module applies them to attention,
FC networks, blocks and transformers and keeps the results' types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from sltcheck.model.weights import (
    BlockWeights,
    FCWeights,
    MergedMHA,
    MHAMasks,
    MHAWeights,
    TransformerWeights,
)
from sltcheck.numerics import precision
from sltcheck.numerics.validation import check_dps
from sltcheck.pruning.product_approximation import (  # noqa: F401 (re-exported: public here)
    REMAINDERS,
    ProductApproximation,
    Solve,
    approximate_product,
    exact_dot_mp,
    group_size,
    product_masks,
)
from sltcheck.pruning.relu_layers import (  # noqa: F401 (re-exported: public here)
    ReLULayerApproximation,
    approximate_relu_layer,
    relu_layer_masks,
    relu_layer_parts,
)
from sltcheck.pruning.subset_sum import MIPOptions


@dataclass(frozen=True)
class MatrixError:
    """Max-norm error of one approximated matrix, recomputed from the pruned weights."""

    name: str  # e.g. "blocks[0].attention.W_QK[head 1]"
    error: float
    error_mp: Any
    group_size: int
    proven_optimal: bool  # every subset-sum problem of this matrix solved provably optimally
    solver: str
    certified: bool = False  # every problem proven optimal or proven at the float64 floor


@dataclass(frozen=True)
class PrunedMHA:
    masks: MHAMasks
    weights: MHAWeights  # the pruned source, source ⊙ masks
    errors: tuple[MatrixError, ...]

    @property
    def density(self) -> float:
        """Fraction of source weights kept."""
        return self.masks.density()

    def _mask_arrays(self) -> tuple[np.ndarray, ...]:
        return self.masks.tensors()


@dataclass(frozen=True)
class PrunedFC:
    masks: tuple[np.ndarray, ...]  # one bool mask per source layer (2L of them)
    weights: FCWeights
    errors: tuple[MatrixError, ...]

    @property
    def density(self) -> float:
        return _density(self.masks)

    def _mask_arrays(self) -> tuple[np.ndarray, ...]:
        return self.masks


@dataclass(frozen=True)
class PrunedBlock:
    attention: PrunedMHA
    fc: PrunedFC
    weights: BlockWeights

    @property
    def errors(self) -> tuple[MatrixError, ...]:
        return self.attention.errors + self.fc.errors

    @property
    def density(self) -> float:
        return _density(self._mask_arrays())

    def _mask_arrays(self) -> tuple[np.ndarray, ...]:
        return self.attention._mask_arrays() + self.fc._mask_arrays()


@dataclass(frozen=True)
class PrunedTransformer:
    blocks: tuple[PrunedBlock, ...]
    weights: TransformerWeights

    @property
    def errors(self) -> tuple[MatrixError, ...]:
        return tuple(error for block in self.blocks for error in block.errors)

    @property
    def density(self) -> float:
        return _density(tuple(m for block in self.blocks for m in block._mask_arrays()))


def _density(masks: Sequence[np.ndarray]) -> float:
    return sum(int(m.sum()) for m in masks) / sum(m.size for m in masks)


# --- multi-head attention (Theorem 9) -----------------------------------------------------------


def prune_mha(
    target: MHAWeights,
    source: MHAWeights,
    solver: str = "mitm",
    *,
    remainder: str = "error",
    options: MIPOptions | None = None,
    fallback: str | None = None,
    dps: int = 40,
    workers: int = 1,
) -> PrunedMHA:
    """Masks for every head's W_QK and W_VO (Eqs. (14), (15)); errors of the pruned source's
    merged matrices against the target's, both merged in mpmath."""
    how = Solve(solver, options, fallback, remainder, check_dps(dps), workers)
    return _prune_mha(target, source, how, prefix="")


def _prune_mha(target: MHAWeights, source: MHAWeights, how: Solve, prefix: str) -> PrunedMHA:
    _check_mha_pair(target, source)
    merged_target = target.merged(how.dps)
    masks: dict[str, list[np.ndarray]] = {"M_Q": [], "M_K": [], "M_V": [], "M_O": []}
    proven: dict[str, list[bool]] = {"W_QK": [], "W_VO": []}
    certified: dict[str, list[bool]] = {"W_QK": [], "W_VO": []}
    sizes: dict[str, int] = {}
    for head in range(target.heads):
        qk = product_masks(
            merged_target.W_QK[head],
            source.W_K[head].T,
            source.W_Q[head],
            how,
            scale_inverse_sqrt=source.d_key,
            width_name="n_K (source key width; groups over d1)",
        )
        vo = product_masks(
            merged_target.W_VO[head],
            source.W_O[head],
            source.W_V[head],
            how,
            width_name="n_V (source value width; groups over d2)",
        )
        masks["M_Q"].append(qk.M2)
        masks["M_K"].append(qk.M1.T)
        masks["M_V"].append(vo.M2)
        masks["M_O"].append(vo.M1)
        for name, approximation in (("W_QK", qk), ("W_VO", vo)):
            proven[name].append(all(bool(s.proven_optimal.all()) for s in approximation.solves))
            certified[name].append(all(bool(s.certified.all()) for s in approximation.solves))
            sizes[name] = approximation.group_size
    mha_masks = MHAMasks(*(np.stack(masks[name]) for name in ("M_Q", "M_K", "M_V", "M_O")))
    pruned = source.pruned(mha_masks)
    merged_pruned = merged_sparse(pruned, how.dps)
    errors = []
    for name in ("W_QK", "W_VO"):
        with mpmath.workdps(how.dps):  # mpf arithmetic, abs() included, rounds at the context's precision
            difference = getattr(merged_target, name) - getattr(merged_pruned, name)
            head_errors = [precision.max_norm(difference[head]) for head in range(target.heads)]
        for head, error_mp in enumerate(head_errors):
            errors.append(
                MatrixError(
                    name=f"{prefix}{name}[head {head}]",
                    error=float(error_mp),  # type: ignore[arg-type]
                    error_mp=error_mp,
                    group_size=sizes[name],
                    proven_optimal=proven[name][head],
                    solver=how.solver,
                    certified=certified[name][head],
                )
            )
    return PrunedMHA(masks=mha_masks, weights=pruned, errors=tuple(errors))


def merged_sparse(weights: MHAWeights, dps: int) -> MergedMHA:
    """``weights.merged(dps)``, bit for bit, summing only the nonzero products.

    numpy's object matmul accumulates sum = p_0, then sum + p_k in order; adding an
    exact mpf zero changes nothing, so skipping the zero products gives the same
    roundings. A pruned source keeps about n' / 2 of its n_K products per entry, so
    this is ~2 d1 times faster than the dense product (seconds at n_K = 8192).
    """
    def dot(x: np.ndarray, y: np.ndarray) -> Any:
        total = mpmath.mpf(0)
        for position, k in enumerate(np.flatnonzero((x != 0) & (y != 0)).tolist()):
            product = mpmath.mpf(x[k]) * mpmath.mpf(y[k])
            total = product if position == 0 else total + product
        return total

    with precision.working_precision(dps):
        heads = weights.heads
        qk = np.empty((heads, weights.W_Q.shape[1], weights.W_K.shape[1]), dtype=object)
        vo = np.empty((heads, weights.W_V.shape[1], weights.W_O.shape[2]), dtype=object)
        for h in range(heads):
            for i, j in np.ndindex(qk.shape[1:]):
                qk[h, i, j] = dot(weights.W_Q[h, i], weights.W_K[h, j])
            for i, j in np.ndindex(vo.shape[1:]):
                vo[h, i, j] = dot(weights.W_V[h, i], weights.W_O[h, :, j])
        scale = precision.sqrt(precision.as_precision(np.array(weights.d_key), dps))
        return MergedMHA(W_QK=qk / scale, W_VO=vo)


def _check_mha_pair(target: MHAWeights, source: MHAWeights) -> None:
    for what in ("heads", "d_in", "d_out"):
        if getattr(target, what) != getattr(source, what):
            raise ValueError(
                f"source.{what} must equal target.{what} = {getattr(target, what)}, "
                f"got {getattr(source, what)}"
            )


# --- fully-connected layers (Pensia et al. 2020; Theorem 10) -------------------------------------

def prune_fc(
    target: FCWeights,
    source: FCWeights,
    solver: str = "mitm",
    *,
    remainder: str = "error",
    options: MIPOptions | None = None,
    fallback: str | None = None,
    dps: int = 40,
    workers: int = 1,
) -> PrunedFC:
    """Masks for a 2L-layer source approximating an L-layer target, layer pair by layer pair."""
    how = Solve(solver, options, fallback, remainder, check_dps(dps), workers)
    return _prune_fc(target, source, how, prefix="")


def _prune_fc(target: FCWeights, source: FCWeights, how: Solve, prefix: str) -> PrunedFC:
    if len(source.layers) != 2 * len(target.layers):
        raise ValueError(
            f"source must have 2L = {2 * len(target.layers)} layers for a target of L = "
            f"{len(target.layers)}, got {len(source.layers)}"
        )
    masks: list[np.ndarray] = []
    errors = []
    for index, W in enumerate(target.layers):
        W1, W2 = source.layers[2 * index], source.layers[2 * index + 1]
        if W1.shape[1] != W.shape[1] or W2.shape[0] != W.shape[0]:
            raise ValueError(
                f"source.layers[{2 * index}] and [{2 * index + 1}] must map {W.shape[1]} to "
                f"{W.shape[0]} like target.layers[{index}], got shapes {W1.shape} and {W2.shape}"
            )
        width = f"{prefix}source.layers[{2 * index}] width (groups over d_in = {W.shape[1]})"
        layer = relu_layer_masks(W, W1, W2, how, width_name=width)
        masks += [layer.M1, layer.M2]
        errors.append(
            MatrixError(
                name=f"{prefix}layers[{index}]",
                error=layer.error,
                error_mp=layer.error_mp,
                group_size=layer.group_size,
                proven_optimal=all(bool(s.proven_optimal.all()) for s in layer.solves),
                solver=how.solver,
                certified=all(bool(s.certified.all()) for s in layer.solves),
            )
        )
    return PrunedFC(masks=tuple(masks), weights=source.pruned(tuple(masks)), errors=tuple(errors))


# --- blocks and transformers (Theorems 11 and 14) ------------------------------------------------


def prune(
    target: MHAWeights | FCWeights | BlockWeights | TransformerWeights,
    source: MHAWeights | FCWeights | BlockWeights | TransformerWeights,
    solver: str = "mitm",
    *,
    remainder: str = "error",
    options: MIPOptions | None = None,
    fallback: str | None = None,
    dps: int = 40,
    workers: int = 1,
) -> PrunedMHA | PrunedFC | PrunedBlock | PrunedTransformer:
    """All masks for a target and a random source of the same kind; see the module docstring."""
    how = Solve(solver, options, fallback, remainder, check_dps(dps), workers)
    if isinstance(target, MHAWeights) and isinstance(source, MHAWeights):
        return _prune_mha(target, source, how, prefix="")
    if isinstance(target, FCWeights) and isinstance(source, FCWeights):
        return _prune_fc(target, source, how, prefix="")
    if isinstance(target, BlockWeights) and isinstance(source, BlockWeights):
        return _prune_block(target, source, how, prefix="")
    if isinstance(target, TransformerWeights) and isinstance(source, TransformerWeights):
        return _prune_transformer(target, source, how)
    raise ValueError(
        "target and source must be of the same kind (MHAWeights, FCWeights, BlockWeights or "
        f"TransformerWeights), got {type(target).__name__} and {type(source).__name__}"
    )


def prune_transformer(
    target: TransformerWeights,
    source: TransformerWeights,
    solver: str = "mitm",
    *,
    remainder: str = "error",
    options: MIPOptions | None = None,
    fallback: str | None = None,
    dps: int = 40,
    workers: int = 1,
) -> PrunedTransformer:
    how = Solve(solver, options, fallback, remainder, check_dps(dps), workers)
    return _prune_transformer(target, source, how)


def _prune_block(target: BlockWeights, source: BlockWeights, how: Solve, prefix: str) -> PrunedBlock:
    attention = _prune_mha(target.attention, source.attention, how, prefix=f"{prefix}attention.")
    fc = _prune_fc(target.fc, source.fc, how, prefix=f"{prefix}fc.")
    return PrunedBlock(attention=attention, fc=fc, weights=BlockWeights(attention.weights, fc.weights))


def _prune_transformer(
    target: TransformerWeights, source: TransformerWeights, how: Solve
) -> PrunedTransformer:
    if len(source.blocks) != len(target.blocks):
        raise ValueError(
            f"source must have as many blocks as target ({len(target.blocks)}), got {len(source.blocks)}"
        )
    blocks = tuple(
        _prune_block(t, s, how, prefix=f"blocks[{b}].")
        for b, (t, s) in enumerate(zip(target.blocks, source.blocks, strict=True))
    )
    return PrunedTransformer(blocks=blocks, weights=TransformerWeights(tuple(b.weights for b in blocks)))
