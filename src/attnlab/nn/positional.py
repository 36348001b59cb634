"""Positional information: sinusoidal (Vaswani et al. 2017, §3.5), learned (GPT-2), rotary.

Self-attention by itself is permutation-equivariant: shuffling the input rows shuffles the
output rows the same way. Adding a position-dependent vector to each token embedding breaks
this symmetry so that order can matter.

Sinusoidal encoding (§3.5)::

    PE[pos, 2i]   = sin(pos / 10000^(2i / d_model))
    PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))

Each (sin, cos) pair rotates at its own frequency, so ``PE[p + k]`` is a fixed rotation of
``PE[p]`` that depends only on the offset k (:func:`relative_shift_matrix`); the paper
chose it because it "would allow the model to easily learn to attend by relative positions".
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ._checks import check_last_dim, check_min_rank, check_rank


def _frequencies(d: int, base: float, device=None) -> Tensor:
    """Angular frequencies ``1 / base^(2i/d)`` for i = 0 .. d/2 - 1, shape ``(d/2,)``."""
    two_i = torch.arange(0, d, 2, dtype=torch.float32, device=device)  # (d/2,)
    return torch.exp(-math.log(base) * two_i / d)  # (d/2,)


def sinusoidal_encoding(L: int, d_model: int, base: float = 10000.0, device=None) -> Tensor:
    """The sinusoidal position table of Vaswani et al. 2017, §3.5.

    Args:
        L: number of positions (0 .. L-1).
        d_model: encoding width; must be even (sin and cos come in pairs).
        base: the 10000 of the formula.

    Returns:
        ``(L, d_model)`` float32 tensor; even columns are sines, odd columns cosines.

    Raises:
        ValueError: if ``d_model`` is odd or not positive, or ``L < 0``.
    """
    if not isinstance(d_model, int) or d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be a positive even int (sin/cos pairs), got {d_model!r}.")
    if not isinstance(L, int) or L < 0:
        raise ValueError(f"L must be a non-negative int, got {L!r}.")
    pos = torch.arange(L, dtype=torch.float32, device=device)[:, None]  # (L, 1)
    angles = pos * _frequencies(d_model, base, device)[None, :]  # (L, 1) * (1, d/2) -> (L, d/2)
    pe = torch.empty(L, d_model, device=device)  # (L, d_model)
    pe[:, 0::2] = torch.sin(angles)  # even columns
    pe[:, 1::2] = torch.cos(angles)  # odd columns
    return pe


def relative_shift_matrix(k: int, d_model: int, base: float = 10000.0) -> Tensor:
    """The ``(d_model, d_model)`` matrix M_k with ``PE[p + k] = M_k @ PE[p]`` for every p.

    Block-diagonal: for frequency w_i, the pair (sin, cos) at position p+k is
    ``[[cos kw, sin kw], [-sin kw, cos kw]] @ (sin pw, cos pw)`` (angle-addition formulas).
    It does not depend on p -- the relative-position property of §3.5.
    """
    w = _frequencies(d_model, base) * k  # (d/2,)
    c, s = torch.cos(w), torch.sin(w)
    m = torch.zeros(d_model, d_model)
    idx = torch.arange(0, d_model, 2)
    m[idx, idx], m[idx, idx + 1] = c, s  # new sin = sin·cos(kw) + cos·sin(kw)
    m[idx + 1, idx], m[idx + 1, idx + 1] = -s, c  # new cos = cos·cos(kw) - sin·sin(kw)
    return m


def _check_positions(x: Tensor, offset: int, d_model: int, max_len: int, fix: str) -> int:
    """Validate ``x: (B, L, d_model)`` against a table of ``max_len`` positions; return L."""
    check_rank(x, "x", 3, "(B, L, d_model)")
    check_last_dim(x, "x", d_model)
    L = x.shape[1]
    if offset + L > max_len:
        raise ValueError(f"positions {offset}..{offset + L - 1} exceed max_len={max_len}{fix}")
    return L


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table to ``x: (B, L, d_model)`` (Vaswani et al. 2017, §3.5).

    No parameters; the table ``(max_len, d_model)`` is a non-persistent buffer. Dropout on
    the sum (§5.4) is applied by the model, not here.

    Raises (forward):
        ValueError: if ``x`` is not ``(B, L, d_model)`` or ``offset + L > max_len``.
    """

    pe: Tensor  # buffer (max_len, d_model), registered in __init__

    def __init__(self, d_model: int, max_len: int = 5000) -> None:
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Return ``x + PE[offset : offset + L]``, shape ``(B, L, d_model)``."""
        L = _check_positions(x, offset, self.d_model, self.max_len,
                             "; build SinusoidalPositionalEncoding with a larger max_len.")
        return x + self.pe[offset : offset + L]  # (B, L, d_model) + (L, d_model)


class LearnedPositionalEmbedding(nn.Module):
    """A trainable vector per position, added to ``x: (B, L, d_model)`` (GPT-2, Radford et al. 2019).

    Vaswani et al. 2017 (§3.5, Table 3 row E) found learned embeddings "nearly identical" to
    sinusoids; they cannot extrapolate beyond ``max_len`` positions.

    Attributes:
        weight: ``(max_len, d_model)`` parameter (an ``nn.Embedding`` called ``emb``).

    Raises (forward):
        ValueError: if ``x`` is not ``(B, L, d_model)`` or ``offset + L > max_len``.
    """

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len, self.d_model = max_len, d_model
        self.emb = nn.Embedding(max_len, d_model)

    @property
    def weight(self) -> Tensor:
        """The ``(max_len, d_model)`` position table, row p for position p (the ``emb`` parameter itself, trainable)."""
        return self.emb.weight

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Return ``x + emb[offset : offset + L]``, shape ``(B, L, d_model)``."""
        L = _check_positions(x, offset, self.d_model, self.max_len,
                             f" learned positions; crop the input to the last {self.max_len} tokens.")
        return x + self.emb.weight[offset : offset + L]  # (B, L, d_model) + (L, d_model)


class RotaryEmbedding(nn.Module):
    """Rotary position embedding (RoPE) -- an EXTENSION, not in Vaswani et al. 2017.

    Su et al. 2021, "RoFormer", §3.2-3.4, Eq. 34: rotate each feature pair (2i, 2i+1) of a
    query or key at position m by angle ``m * theta_i`` with ``theta_i = base^(-2i/d)``.
    Then ``<R_m q, R_n k>`` depends on m and n only through ``m - n``: relative positions
    enter the attention logits directly. Apply it to q and k (not v) after split_heads.

    Args:
        dim: feature width to rotate (usually ``d_k``); must be even.
        base: the 10000 of the formula.

    Raises:
        ValueError: odd ``dim``; in ``forward``, a last dimension other than ``dim``.
    """

    inv_freq: Tensor  # buffer (dim/2,), registered in __init__

    def __init__(self, dim: int, base: float = 10000.0) -> None:
        super().__init__()
        if dim % 2:
            raise ValueError(f"RotaryEmbedding needs an even dim (feature pairs), got {dim}.")
        self.dim = dim
        self.register_buffer("inv_freq", _frequencies(dim, base), persistent=False)  # (dim/2,)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Rotate ``x: (..., L, dim)`` as if its rows sat at positions ``offset .. offset+L-1``."""
        check_min_rank(x, "x", 2, "(..., L, dim)")
        check_last_dim(x, "x", self.dim, "dim")
        L = x.shape[-2]
        pos = torch.arange(offset, offset + L, device=x.device, dtype=torch.float32)  # (L,)
        angles = pos[:, None] * self.inv_freq[None, :]  # (L, dim/2)
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        x1, x2 = x[..., 0::2], x[..., 1::2]  # (..., L, dim/2) each: the pairs
        rotated = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)  # (..., L, dim/2, 2)
        return rotated.flatten(-2)  # (..., L, dim): pairs interleaved back
