"""The KV cache: keys and values of earlier positions, kept for incremental decoding.

In a causal decoder, position t's key and value depend only on tokens 0..t, so they never
change once computed. Generating token by token, a model therefore only needs to project
the newest token and append its key/value to a cache; the new query attends to everything
cached. This turns each decoding step from O(t) projections into O(1) (the attention itself
still reads all t cached keys). Memory: 2 (k and v) x n_layers x B x t x d_model numbers.

Used by :class:`attnlab.nn.MultiHeadAttention` (``cache=``) and :meth:`attnlab.nn.GPT.generate`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import check_rank, shape_str


class KVCache:
    """Keys and values of one self-attention layer, kept across decoding steps.

    When generating one token at a time, the keys and values of earlier positions never
    change (the decoder is causal), so they are stored here instead of being recomputed:
    each step then projects only the new token. ``update`` appends along the sequence axis.

    Attributes:
        k, v: ``(B, H, S, d_k)`` tensors of everything cached so far, or ``None`` if empty.
    """

    def __init__(self) -> None:
        self.k: Tensor | None = None
        self.v: Tensor | None = None

    def __len__(self) -> int:
        """Number of cached positions S (0 when empty)."""
        return 0 if self.k is None else self.k.shape[2]

    def update(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append ``k, v: (B, H, L_new, d_k)`` and return all keys/values ``(B, H, S, d_k)``.

        Raises:
            ValueError: if the new tensors are not 4-D or disagree with the cached
                batch/heads/width.
        """
        check_rank(k, "k", 4, "(B, H, L_new, d_k)")
        check_rank(v, "v", 4, "(B, H, L_new, d_v)")
        if v.shape[:3] != k.shape[:3]:
            raise ValueError(f"k {shape_str(k)} and v {shape_str(v)} must agree in (B, H, L_new).")
        if self.k is None:
            self.k, self.v = k, v
        else:
            if k.shape[:2] != self.k.shape[:2] or k.shape[3] != self.k.shape[3]:
                raise ValueError(
                    f"new keys {shape_str(k)} do not match the cache {shape_str(self.k)} in "
                    f"batch, heads or d_k. Use a fresh KVCache (or .reset()) for a new batch."
                )
            self.k = torch.cat([self.k, k], dim=2)  # (B, H, S_old + L_new, d_k)
            self.v = torch.cat([self.v, v], dim=2)  # (B, H, S_old + L_new, d_v)
        return self.k, self.v

    def reset(self) -> None:
        """Forget everything cached."""
        self.k = self.v = None
