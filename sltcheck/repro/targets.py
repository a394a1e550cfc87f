"""Target networks of Appendix B.1: trained single-head MHAs and untrained transformers.

Targets are initialised "according to the assumptions of our theoretical
results": W_Q, W_K ~ U[-n_K^(1/4), n_K^(1/4)] with n_K the target's own query/key
dimension (B.1: "The query and key dimensions of the target models are set to 8",
so the range is 8^(1/4) ~ 1.68; the argument is ``d_key``), W_V, W_O and FC ~ U[-1, 1].
Such weights (and trained ones: measured 1.2 to 3.7) generally have spectral norm
above 1, which Theorems 9/11/14 assume away. ``norm_policy`` decides what happens:

- ``"keep"`` (paper mode's default): the target is used as trained or drawn, as the
  paper uses it; its sources are checked against the chain with the actual norms
  (:mod:`sltcheck.repro.bounds`), valid for any norms.
- ``"rescale"`` (theory mode's default): each of W_Q^(j), W_K^(j), W_V^(j), W_O^(j) and
  each FC layer is divided by max(1, ||W||), projecting the target onto the
  theorems' assumptions (then ``as-proven`` applies); the original norms are reported.

The regression token (B.1: the target "is trained to predict angular velocity by the
regression token initialized to zero") is learned with the target by default; see
:func:`train_mha`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sltcheck.extras import require

require("torch", "repro", "sltcheck repro fig4|fig5|fig6 (the synthetic reproductions' targets)")
import torch  # noqa: E402

from sltcheck.model.torch_model import MultiHeadAttention  # noqa: E402
from sltcheck.model.weights import BlockWeights, FCWeights, MHAWeights, TransformerWeights  # noqa: E402
from sltcheck.numerics.validation import check_choice  # noqa: E402
from sltcheck.repro.dataset import AngularVelocity, full_attention  # noqa: E402

NORM_POLICIES = ("rescale", "keep")
REGRESSION_TOKENS = ("learned", "fixed-zero")


@dataclass(frozen=True)
class TrainingConfig:
    """Appendix B.1: AdamW, batch 1024, lr 0.1, 25 epochs, weight decay 0.01,
    training lengths drawn from 4..256 (one length per batch)."""

    epochs: int = 25
    batch_size: int = 1024
    lr: float = 0.1
    weight_decay: float = 0.01
    min_length: int = 4
    max_length: int = 256


def theory_target_mha(rng: np.random.Generator, d_in: int, d_out: int, d_key: int, d_value: int,
                      heads: int = 1) -> MHAWeights:
    qk = d_key**0.25
    return MHAWeights(
        rng.uniform(-qk, qk, (heads, d_in, d_key)),
        rng.uniform(-qk, qk, (heads, d_in, d_key)),
        rng.uniform(-1, 1, (heads, d_in, d_value)),
        rng.uniform(-1, 1, (heads, d_value, d_out)),
    )


def theory_target_transformer(rng: np.random.Generator, blocks: int, d: int, d_key: int,
                              d_value: int, heads: int = 1) -> TransformerWeights:
    """Untrained target of Figure 6: a single-layer FC projection per block (Section 3.3)."""
    return TransformerWeights(
        tuple(
            BlockWeights(
                theory_target_mha(rng, d, d, d_key, d_value, heads),
                FCWeights((rng.uniform(-1, 1, (d, d)),)),
            )
            for _ in range(blocks)
        )
    )


def _unit_spectral(matrix: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(matrix, 2))
    return matrix if norm <= 1.0 else matrix / (norm * (1 + 1e-13))  # lands at or just under 1


def spectral_norms(weights: MHAWeights | TransformerWeights) -> dict[str, float]:
    """Largest spectral norm of each weight family (what the theorems bound by 1)."""
    if isinstance(weights, MHAWeights):
        return {name: max(float(np.linalg.norm(w, 2)) for w in stack)
                for name, stack in zip(("W_Q", "W_K", "W_V", "W_O"), weights.tensors(), strict=True)}
    norms: dict[str, float] = {}
    for b, block in enumerate(weights.blocks):
        for name, value in spectral_norms(block.attention).items():
            norms[f"block{b + 1}.{name}"] = value
        norms[f"block{b + 1}.fc"] = max(float(np.linalg.norm(w, 2)) for w in block.fc.layers)
    return norms


def apply_norm_policy(weights: MHAWeights | TransformerWeights, policy: str):
    """Rescale every matrix to spectral norm <= 1, or keep the target as it is."""
    check_choice("norm_policy", policy, NORM_POLICIES)
    if policy == "keep":
        return weights
    if isinstance(weights, MHAWeights):
        return MHAWeights(*(np.stack([_unit_spectral(w) for w in stack]) for stack in weights.tensors()))
    return TransformerWeights(
        tuple(
            BlockWeights(apply_norm_policy(b.attention, policy),
                         FCWeights(tuple(_unit_spectral(w) for w in b.fc.layers)))
            for b in weights.blocks
        )
    )


@dataclass(frozen=True)
class TrainedTarget:
    """A trained target MHA and the regression token it was trained with (shared with the sources)."""

    weights: MHAWeights
    token: np.ndarray  # (d1,)
    train_loss: float  # mean squared error over the last epoch


def train_mha(initial: MHAWeights, data: AngularVelocity, config: TrainingConfig, seed: int,
              progress: bool = False, regression_token: str = "learned") -> TrainedTarget:
    """Train a target MHA to predict omega from the regression token's output (d2 = 1).

    ``regression_token``: "learned" (B.1: a token "initialized to zero", trained with
    the target by the same optimiser) or "fixed-zero" (kept at 0: the read-out's query
    is 0, so its attention is uniform and W_Q, W_K receive no gradient; only W_V, W_O
    learn a linear function of the mean token).
    """
    check_choice("regression_token", regression_token, REGRESSION_TOKENS)
    if initial.d_out != 1:
        raise ValueError(f"initial must have output dimension 1 to regress omega, got {initial.d_out}")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = MultiHeadAttention.from_weights(initial, dtype=torch.float32)
    token = torch.zeros(initial.d_in, dtype=torch.float32, requires_grad=regression_token == "learned")
    parameters = [*model.parameters(), token] if regression_token == "learned" else list(model.parameters())
    optimiser = torch.optim.AdamW(parameters, lr=config.lr, weight_decay=config.weight_decay)
    batches = max(1, len(data) // config.batch_size)
    from tqdm import tqdm

    epoch_loss = float("nan")
    for _ in tqdm(range(config.epochs), desc="train target", disable=not progress, unit="epoch"):
        order = rng.permutation(len(data))
        total = 0.0
        for batch in range(batches):
            rows = order[batch * config.batch_size:(batch + 1) * config.batch_size]
            length = int(rng.integers(config.min_length, config.max_length + 1))
            X = torch.as_tensor(data.tokens(length, rows), dtype=torch.float32)
            X = torch.cat([token.expand(X.shape[0], 1, -1), X[:, 1:]], dim=1)  # the token, trained
            mask = torch.as_tensor(full_attention(length))
            prediction = model(X, mask, rows=slice(0, 1))[:, 0, 0]  # only the regression token is read
            loss = torch.mean((prediction - torch.as_tensor(data.omega[rows], dtype=torch.float32)) ** 2)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += float(loss.detach())
        epoch_loss = total / batches
    return TrainedTarget(model.to_weights(), token.detach().numpy().astype(np.float64), epoch_loss)


def regression_loss(weights: MHAWeights, data: AngularVelocity, length: int,
                    token: np.ndarray | None = None) -> float:
    """Mean squared error of omega read off the regression token ``token`` (default 0), at one length."""
    model = MultiHeadAttention.from_weights(weights)
    with torch.no_grad():
        X = torch.as_tensor(data.tokens(length, token=token))
        out = model(X, torch.as_tensor(full_attention(length)), rows=slice(0, 1))
    return float(np.mean((out[:, 0, 0].numpy() - data.omega) ** 2))
