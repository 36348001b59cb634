"""The KV cache: keys and values of earlier positions, kept for incremental decoding.

In a causal decoder, position t's key and value depend only on tokens 0..t, so they never
change once computed. Generating token by token, a model therefore only needs to project
the newest token and append its key/value to a cache; the new query attends to everything
cached. This turns each decoding step from O(t) projections into O(1) (the attention itself
still reads all t cached keys). Memory: 2 (k and v) x n_layers x B x t x d_model numbers.

Storage is pre-allocated: the cache owns one ``(B, H, capacity, d_k)`` buffer for keys and
one for values and writes each new position into the next free slot, so a step costs a copy
of the *new* keys only. When the buffer is full it doubles (amortised O(1) per position, as a
Python list grows). Appending with ``torch.cat`` instead would copy all t cached keys at every
step: O(t) per token, O(t²) for a whole generation.

A cache built with ``window=W`` keeps at most the last W positions: older ones are dropped
("sliding"). That is only meaningful for models whose positions are *relative* -- rotary
positions (RoFormer) rotate each key by its absolute position once, and the attention score
depends only on the distance between query and key, so cached keys stay valid after the
window moves. Models with learned absolute positions cannot slide: the first kept key would
have to move to position 0, which changes every later layer's input, so they recompute the
window instead (see :meth:`attnlab.nn.GPT.generate`).

Used by :class:`attnlab.nn.MultiHeadAttention` (``cache=``) and :meth:`attnlab.nn.GPT.generate`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import check_rank, shape_str

_MIN_CAPACITY = 16


class KVCache:
    """Keys and values of one self-attention layer, kept across decoding steps.

    When generating one token at a time, the keys and values of earlier positions never
    change (the decoder is causal), so they are stored here instead of being recomputed:
    each step then projects only the new token. ``update`` appends along the sequence axis
    into pre-allocated storage (doubling when full), never copying the whole cache per step.

    Args:
        capacity: positions to allocate on the first ``update`` (a hint; the storage grows
            by doubling if more arrive). ``None``: the first update's length, at least 16.
        window: keep only the last ``window`` positions (a sliding cache, for relative
            positions such as rotary ones); ``None`` keeps everything.

    Attributes:
        k, v: ``(B, H, S, d_k)`` views of everything cached so far (the kept window), or
            ``None`` if empty. They are views into the cache's storage, valid until the next
            ``update``; ``.clone()`` them to keep a copy.
        position: positions appended since creation or ``reset`` (dropped ones included):
            the absolute position of the next token.
        window: as given.

    Raises:
        ValueError: ``capacity`` or ``window`` not a positive int.
    """

    def __init__(self, capacity: int | None = None, window: int | None = None) -> None:
        for name, value in (("capacity", capacity), ("window", window)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"KVCache {name} must be a positive int or None, got {value!r}.")
        self.capacity_hint, self.window = capacity, window
        self.reset()

    def reset(self) -> None:
        """Forget everything cached (the storage is released)."""
        self._k: Tensor | None = None  # (B, H, capacity, d_k) storage
        self._v: Tensor | None = None  # (B, H, capacity, d_v)
        self._start = 0  # first kept slot
        self._len = 0  # kept positions S
        self.position = 0

    def __len__(self) -> int:
        """Number of cached (kept) positions S (0 when empty)."""
        return self._len

    @property
    def k(self) -> Tensor | None:
        """Cached keys ``(B, H, S, d_k)``, oldest kept position first, or ``None`` before the first ``update``.

        A view into the cache's storage (same dtype and device as the keys given to ``update``),
        valid until the next ``update`` or ``reset``; ``.clone()`` it to keep a copy.
        """
        return None if self._k is None else self._k.narrow(2, self._start, self._len)

    @property
    def v(self) -> Tensor | None:
        """Cached values ``(B, H, S, d_v)``, aligned with :attr:`k`, or ``None`` when empty (a view, as for ``k``)."""
        return None if self._v is None else self._v.narrow(2, self._start, self._len)

    @property
    def capacity(self) -> int:
        """Positions the current storage can hold (0 before the first update)."""
        return 0 if self._k is None else self._k.shape[2]

    def update(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append ``k, v: (B, H, L_new, d_k)`` and return all kept keys/values ``(B, H, S, d_k)``.

        With a ``window``, the oldest positions beyond the window are dropped first, so
        ``S = min(S_old + L_new, window)``; more than one new position is accepted only while
        nothing has to be dropped (feed tokens one at a time past the window).

        Raises:
            ValueError: if the new tensors are not 4-D, disagree with each other in
                (B, H, L_new) or with the cached batch/heads/width/dtype, or ``L_new > 1``
                would push a windowed cache past its window.
        """
        check_rank(k, "k", 4, "(B, H, L_new, d_k)")
        check_rank(v, "v", 4, "(B, H, L_new, d_v)")
        if v.shape[:3] != k.shape[:3]:
            raise ValueError(f"k {shape_str(k)} and v {shape_str(v)} must agree in (B, H, L_new).")
        L = k.shape[2]
        if self._k is not None and self._v is not None and (
                k.shape[:2] != self._k.shape[:2] or k.shape[3] != self._k.shape[3]
                or v.shape[3] != self._v.shape[3] or k.dtype != self._k.dtype):
            raise ValueError(
                f"new keys {shape_str(k)} ({k.dtype}) do not match the cache {shape_str(self._kept()[0])} "
                f"({self._k.dtype}) in batch, heads, d_k or dtype. Use a fresh KVCache (or .reset()) for a new batch."
            )
        if self.window is not None and self._len + L > self.window and L > 1:
            raise ValueError(
                f"{L} new positions would push this sliding cache ({self._len} kept) past its window of "
                f"{self.window}; past the window feed one token at a time."
            )
        if torch.is_grad_enabled() and (k.requires_grad or v.requires_grad):
            return self._append_differentiable(k, v)
        return self._append(k, v)

    def _append(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """:meth:`update` without its checks (the caller guarantees matching shapes, at most one
        new position past the window, and no gradients): the one-token decoding path
        (:class:`attnlab.fast.FastGPT`'s one-token decoding step)."""
        L = k.shape[2]
        self._slide(L)
        if self._k is None or self._v is None:  # no storage yet (the two are always set together)
            cap = max(L, self.capacity_hint or _MIN_CAPACITY)
            if self.window is not None:
                cap = max(cap, 2 * self.window)  # room to slide: compaction every ~window steps
            self._k = k.new_empty(*k.shape[:2], cap, k.shape[3])
            self._v = v.new_empty(*v.shape[:2], cap, v.shape[3])
        elif self._start + self._len + L > self._k.shape[2]:
            self._make_room(L)
        end = self._start + self._len
        self._k.narrow(2, end, L).copy_(k)  # copy only the new positions
        self._v.narrow(2, end, L).copy_(v)
        self._len += L
        self.position += L
        return self._k.narrow(2, self._start, self._len), self._v.narrow(2, self._start, self._len)

    def _append_differentiable(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append with ``torch.cat`` when gradients must flow into the cached keys (training
        through a cache): in-place writes into shared storage would break autograd."""
        self._slide(k.shape[2])
        kept_k, kept_v = self.k, self.v
        self._k = k if kept_k is None else torch.cat([kept_k, k], dim=2)  # (B, H, S + L_new, d_k)
        self._v = v if kept_v is None else torch.cat([kept_v, v], dim=2)
        self._start, self._len = 0, self._k.shape[2]
        self.position += k.shape[2]
        return self._kept()

    def _kept(self) -> tuple[Tensor, Tensor]:
        """The kept keys and values ``(B, H, S, d_k)``, ``(B, H, S, d_v)``; only once storage exists."""
        assert self._k is not None and self._v is not None, "the cache has no storage yet"
        return self._k.narrow(2, self._start, self._len), self._v.narrow(2, self._start, self._len)

    def _slide(self, L: int) -> None:
        """Drop the oldest kept position if ``L`` new ones would overflow the window (``L == 1``
        then: :meth:`update` refuses more)."""
        if self.window is not None and self._len + L > self.window:
            self._start += 1
            self._len -= 1

    def _make_room(self, L: int) -> None:
        """Move the kept positions to the front, or double the storage: amortised O(1) per position."""
        needed = self._len + L
        cap = self.capacity
        if needed > cap // 2 or self._start == 0:  # grow (a sliding cache never gets here: cap >= 2 * window)
            cap = max(2 * cap, needed)
        kept_k, kept_v = self._kept()
        new_k = kept_k.new_empty(*kept_k.shape[:2], cap, kept_k.shape[3])
        new_v = kept_v.new_empty(*kept_v.shape[:2], cap, kept_v.shape[3])
        new_k[:, :, :self._len] = kept_k
        new_v[:, :, :self._len] = kept_v
        self._k, self._v, self._start = new_k, new_v, 0
