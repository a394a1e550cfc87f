"""Torch modules of the paper's models, for training targets and running sources.

They compute exactly what :mod:`sltcheck.model.reference` computes (tests hold them
equal in float64), batched over leading dimensions of X. Pruning masks are
buffers: the forward pass uses W ⊙ M, gradients reach W only where M = 1.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from sltcheck.extras import require

require("torch", "repro", "sltcheck.model.torch_model (the reproductions' torch models)")
import torch  # noqa: E402
from torch import nn  # noqa: E402

from sltcheck.model.weights import BlockWeights, FCWeights, MHAWeights, TransformerWeights  # noqa: E402


@dataclass(frozen=True)
class AttentionConfig:
    d_in: int  # d1
    d_out: int  # d2
    heads: int = 1  # H
    d_key: int = 8  # d_K (n_K for a source)
    d_value: int = 8  # d_V (n_V for a source)


class MultiHeadAttention(nn.Module):
    """Attn(x_i) = sum_j sigma(q_i^(j) K^(j)T / sqrt(d_K); a_i) V^(j) W_O^(j) (Section 2.2)."""

    M_Q: torch.Tensor
    M_K: torch.Tensor
    M_V: torch.Tensor
    M_O: torch.Tensor

    def __init__(self, config: AttentionConfig, dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        c = config
        self.config = c
        self.W_Q = nn.Parameter(torch.zeros(c.heads, c.d_in, c.d_key, dtype=dtype))
        self.W_K = nn.Parameter(torch.zeros(c.heads, c.d_in, c.d_key, dtype=dtype))
        self.W_V = nn.Parameter(torch.zeros(c.heads, c.d_in, c.d_value, dtype=dtype))
        self.W_O = nn.Parameter(torch.zeros(c.heads, c.d_value, c.d_out, dtype=dtype))
        for name in ("M_Q", "M_K", "M_V", "M_O"):
            self.register_buffer(name, torch.ones_like(getattr(self, "W" + name[1:])))

    def forward(self, X: torch.Tensor, mask: torch.Tensor, rows: slice = slice(None)) -> torch.Tensor:
        """X: (..., T, d1); mask: (T, T) boolean, True where token i attends to token j.
        ``rows`` selects the query tokens i whose output is computed (all by default)."""
        X = X.unsqueeze(-3)  # (..., 1, T, d1): broadcast over heads
        queries = X[..., rows, :] @ (self.W_Q * self.M_Q)
        keys = X @ (self.W_K * self.M_K)
        values = X @ (self.W_V * self.M_V)
        scores = queries @ keys.transpose(-1, -2) / math.sqrt(self.config.d_key)
        scores = scores.masked_fill(~mask[rows].bool(), float("-inf"))
        heads = torch.softmax(scores, dim=-1) @ values
        return (heads @ (self.W_O * self.M_O)).sum(dim=-3)

    @classmethod
    def from_weights(cls, weights: MHAWeights, dtype: torch.dtype = torch.float64) -> MultiHeadAttention:
        config = AttentionConfig(weights.d_in, weights.d_out, weights.heads, weights.d_key, weights.d_value)
        module = cls(config, dtype)
        with torch.no_grad():
            for name, value in zip(("W_Q", "W_K", "W_V", "W_O"), weights.tensors(), strict=True):
                getattr(module, name).copy_(torch.as_tensor(np.asarray(value, dtype=np.float64)))
        return module

    def to_weights(self) -> MHAWeights:
        """The effective (masked) weights as float64 arrays."""
        with torch.no_grad():
            return MHAWeights(
                *(
                    (getattr(self, "W" + m[1:]) * getattr(self, m)).double().numpy().copy()
                    for m in ("M_Q", "M_K", "M_V", "M_O")
                )
            )


class FullyConnected(nn.Module):
    """F(x) = W_L ReLU(W_{L-1} ... ReLU(W_1 x)), weights (d_{l+1}, d_l) (Theorem 10)."""

    def __init__(self, widths: tuple[int, ...], dtype: torch.dtype = torch.float64) -> None:
        super().__init__()
        if len(widths) < 2:
            raise ValueError(f"widths must list at least an input and an output width, got {widths}")
        self.layers = nn.ParameterList(
            nn.Parameter(torch.zeros(d_next, d, dtype=dtype)) for d, d_next in itertools.pairwise(widths)
        )
        for index, layer in enumerate(self.layers):
            self.register_buffer(f"mask{index}", torch.ones_like(layer))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = len(self.layers) - 1
        for index, layer in enumerate(self.layers):
            x = x @ (layer * getattr(self, f"mask{index}")).T
            if index < last:
                x = torch.relu(x)
        return x

    @classmethod
    def from_weights(cls, weights: FCWeights, dtype: torch.dtype = torch.float64) -> FullyConnected:
        widths = (weights.d_in, *(layer.shape[0] for layer in weights.layers))
        module = cls(widths, dtype)
        with torch.no_grad():
            for param, value in zip(module.layers, weights.layers, strict=True):
                param.copy_(torch.as_tensor(np.asarray(value, dtype=np.float64)))
        return module

    def to_weights(self) -> FCWeights:
        with torch.no_grad():
            return FCWeights(
                tuple(
                    (layer * getattr(self, f"mask{i}")).double().numpy().copy()
                    for i, layer in enumerate(self.layers)
                )
            )


class Block(nn.Module):
    """Blk(x) = F(Attn(x)^T + x) + Attn(x)^T + x, no normalisation (Section 3.3)."""

    def __init__(self, attention: MultiHeadAttention, fc: FullyConnected) -> None:
        super().__init__()
        self.attention = attention
        self.fc = fc

    def forward(self, X: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        residual = self.attention(X, mask) + X
        return self.fc(residual) + residual

    @classmethod
    def from_weights(cls, weights: BlockWeights, dtype: torch.dtype = torch.float64) -> Block:
        return cls(
            MultiHeadAttention.from_weights(weights.attention, dtype),
            FullyConnected.from_weights(weights.fc, dtype),
        )

    def to_weights(self) -> BlockWeights:
        return BlockWeights(self.attention.to_weights(), self.fc.to_weights())


class Transformer(nn.Module):
    """Tf(x) = Blk^(B)(... Blk^(1)(x)) (Section 3.3)."""

    def __init__(self, blocks: list[Block]) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(blocks)

    def forward(self, X: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        for layer in self.blocks:
            X = layer(X, mask)
        return X

    @classmethod
    def from_weights(cls, weights: TransformerWeights, dtype: torch.dtype = torch.float64) -> Transformer:
        return cls([Block.from_weights(b, dtype) for b in weights.blocks])

    def to_weights(self) -> TransformerWeights:
        return TransformerWeights(tuple(b.to_weights() for b in self.blocks if isinstance(b, Block)))
