"""The weights of the paper's models, as small frozen dataclasses.

Orientation follows the paper. Tokens are rows: X is (T, d1) and
Attn(x_i) is a row vector in R^{1 x d2} (Section 2.2). Per head j,
W_Q^(j), W_K^(j) are (d1, d_K), W_V^(j) is (d1, d_V), W_O^(j) is (d_V, d2);
they are stored stacked over heads, W_Q of shape (H, d1, d_K), and so on.
Fully-connected layers act on column vectors, F(x) = W_L ReLU(... W_1 x) with
W_l of shape (d_{l+1}, d_l) (Lemma 2, Theorem 10); on row-stored tokens that
is x @ W_l.T. Entries are float64, or mpmath mpf in object arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sltcheck.numerics import precision
from sltcheck.numerics.validation import check_array, check_binary


@dataclass(frozen=True)
class MergedMHA:
    """W_QK^(j) = W_Q^(j) W_K^(j)T / sqrt(d_K) (Eq. 10) and W_VO^(j) = W_V^(j) W_O^(j)
    (Eq. 11), stacked over heads: W_QK (H, d1, d1), W_VO (H, d1, d2)."""

    W_QK: np.ndarray
    W_VO: np.ndarray

    def __post_init__(self) -> None:
        qk = check_array("W_QK", self.W_QK, ndim=3)
        vo = check_array("W_VO", self.W_VO, ndim=3)
        if qk.shape[1] != qk.shape[2]:
            raise ValueError(f"W_QK must be (H, d1, d1), got {qk.shape}")
        if vo.shape[:2] != qk.shape[:2]:
            raise ValueError(f"W_VO must be (H, d1, d2) with H, d1 of W_QK {qk.shape[:2]}, got {vo.shape}")
        object.__setattr__(self, "W_QK", qk)
        object.__setattr__(self, "W_VO", vo)

    @property
    def heads(self) -> int:
        return self.W_QK.shape[0]

    @property
    def d_in(self) -> int:
        return self.W_QK.shape[1]

    @property
    def d_out(self) -> int:
        return self.W_VO.shape[2]


@dataclass(frozen=True)
class MHAWeights:
    """Per-head weights {W_Q^(j), W_K^(j), W_V^(j), W_O^(j)}_{j=1..H} (Section 2.2)."""

    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray

    def __post_init__(self) -> None:
        q = check_array("W_Q", self.W_Q, ndim=3)
        h, d1, dk = q.shape
        k = check_array("W_K", self.W_K, shape=(h, d1, dk))
        v = check_array("W_V", self.W_V, shape=(h, d1, None))
        o = check_array("W_O", self.W_O, shape=(h, v.shape[2], None))
        for name, value in zip(["W_Q", "W_K", "W_V", "W_O"], (q, k, v, o), strict=True):
            object.__setattr__(self, name, value)

    @property
    def heads(self) -> int:
        return self.W_Q.shape[0]

    @property
    def d_in(self) -> int:
        return self.W_Q.shape[1]

    @property
    def d_key(self) -> int:
        return self.W_Q.shape[2]

    @property
    def d_value(self) -> int:
        return self.W_V.shape[2]

    @property
    def d_out(self) -> int:
        return self.W_O.shape[2]

    def merged(self, dps: int | None = None) -> MergedMHA:
        """The merged form of Eqs. (10) and (11), at float64 or ``dps`` digits."""
        with precision.working_precision(dps):
            q, k, v, o = (precision.as_precision(w, dps) for w in self.tensors())
            scale = precision.sqrt(precision.as_precision(np.array(self.d_key), dps))
            return MergedMHA(W_QK=q @ k.transpose(0, 2, 1) / scale, W_VO=v @ o)

    def tensors(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.W_Q, self.W_K, self.W_V, self.W_O

    def pruned(self, masks: MHAMasks) -> MHAWeights:
        """(W ⊙ M)_{Q:O}^{(1:H)} of Section 3.1, for binary masks of the same shapes."""
        for name, w, m in zip(("M_Q", "M_K", "M_V", "M_O"), self.tensors(), masks.tensors(), strict=True):
            if w.shape != m.shape:
                raise ValueError(f"masks.{name} must have the weight's shape {w.shape}, got {m.shape}")
        pairs = zip(self.tensors(), masks.tensors(), strict=True)
        return MHAWeights(*(w * m for w, m in pairs))

    @classmethod
    def from_output_matrix(
        cls, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray, W_O: np.ndarray
    ) -> MHAWeights:
        """Build from an unpartitioned W_O of shape (H d_V, d2), split into the
        blocks W_O^(j) of Section 2.2."""
        W_V = check_array("W_V", W_V, ndim=3)
        h, _, dv = W_V.shape
        W_O = check_array("W_O", W_O, shape=(h * dv, None))
        return cls(W_Q, W_K, W_V, W_O.reshape(h, dv, W_O.shape[1]))


@dataclass(frozen=True)
class MHAMasks:
    """Binary pruning masks M_Q, M_K, M_V, M_O, shaped as the source weights."""

    M_Q: np.ndarray
    M_K: np.ndarray
    M_V: np.ndarray
    M_O: np.ndarray

    def __post_init__(self) -> None:
        for name in ("M_Q", "M_K", "M_V", "M_O"):
            object.__setattr__(self, name, check_binary(name, getattr(self, name)))

    def tensors(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.M_Q, self.M_K, self.M_V, self.M_O

    def density(self) -> float:
        kept = sum(int(m.sum()) for m in self.tensors())
        return kept / sum(m.size for m in self.tensors())


@dataclass(frozen=True)
class FCWeights:
    """An L-layer ReLU network F(x) = W_L ReLU(W_{L-1} ... ReLU(W_1 x)),
    W_l of shape (d_{l+1}, d_l) (Theorem 10)."""

    layers: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        if len(self.layers) == 0:
            raise ValueError("layers must hold at least one weight matrix, got none")
        checked: list[np.ndarray] = []
        for index, layer in enumerate(self.layers):
            layer = check_array(f"layers[{index}]", layer, ndim=2)
            if checked and layer.shape[1] != checked[-1].shape[0]:
                raise ValueError(
                    f"layers[{index}] must have {checked[-1].shape[0]} columns to follow "
                    f"layers[{index - 1}] of shape {checked[-1].shape}, got {layer.shape}"
                )
            checked.append(layer)
        object.__setattr__(self, "layers", tuple(checked))

    @property
    def d_in(self) -> int:
        return self.layers[0].shape[1]

    @property
    def d_out(self) -> int:
        return self.layers[-1].shape[0]

    def pruned(self, masks: FCWeights | tuple[np.ndarray, ...]) -> FCWeights:
        mask_layers = masks.layers if isinstance(masks, FCWeights) else masks
        if len(mask_layers) != len(self.layers):
            raise ValueError(f"masks must hold {len(self.layers)} layers, got {len(mask_layers)}")
        return FCWeights(
            tuple(
                w * check_binary(f"masks[{i}]", m)
                for i, (w, m) in enumerate(zip(self.layers, mask_layers, strict=True))
            )
        )


@dataclass(frozen=True)
class BlockWeights:
    """Blk(x) = F(Attn(x)^T + x) + Attn(x)^T + x (Section 3.3): d1 = d2 = d."""

    attention: MHAWeights
    fc: FCWeights

    def __post_init__(self) -> None:
        d = self.attention.d_in
        if self.attention.d_out != d:
            raise ValueError(
                f"attention must map d to d for a residual block, got d1={d}, d2={self.attention.d_out}"
            )
        if self.fc.d_in != d or self.fc.d_out != d:
            raise ValueError(f"fc must map {d} to {d}, got {self.fc.d_in} to {self.fc.d_out}")


@dataclass(frozen=True)
class TransformerWeights:
    """Tf(x) = Blk^(B)(... Blk^(1)(x)), a normalisation-free transformer (Section 3.3)."""

    blocks: tuple[BlockWeights, ...]

    def __post_init__(self) -> None:
        if len(self.blocks) == 0:
            raise ValueError("blocks must hold at least one block, got none")
        d = self.blocks[0].attention.d_in
        for index, block in enumerate(self.blocks):
            if block.attention.d_in != d:
                raise ValueError(f"blocks[{index}] has width {block.attention.d_in}, expected {d}")
        object.__setattr__(self, "blocks", tuple(self.blocks))
