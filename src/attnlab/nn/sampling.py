"""Turning next-token logits into a token: temperature, top-k, top-p (nucleus), greedy.

All filters take logits ``(..., V)`` and return logits of the same shape with the excluded
tokens set to -inf, so a softmax afterwards renormalises over the kept tokens.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._checks import check_min_rank


def apply_temperature(logits: Tensor, temperature: float) -> Tensor:
    """``logits / temperature``: < 1 sharpens the distribution, > 1 flattens it.

    Raises:
        ValueError: if ``temperature <= 0`` (use greedy decoding for the T -> 0 limit).
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}; for argmax decoding use greedy=True.")
    return logits / temperature


def top_k_filter(logits: Tensor, k: int) -> Tensor:
    """Keep the ``k`` largest logits along the last axis, set the rest to -inf.

    Fan et al. 2018 ("Hierarchical Neural Story Generation"); used by GPT-2 (Radford et al.
    2019). ``k >= V`` keeps everything. Ties with the k-th value are all kept.

    Args:
        logits: ``(..., V)`` float. k: int >= 1.

    Returns:
        ``(..., V)`` float, same dtype.

    Raises:
        ValueError: if ``k < 1`` or ``logits`` is a scalar.
    """
    check_min_rank(logits, "logits", 1, "(..., V)")
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"top_k must be an int >= 1, got {k!r}.")
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest
    return logits.masked_fill(logits < kth, float("-inf"))


def top_p_filter(logits: Tensor, p: float) -> Tensor:
    """Nucleus filtering (Holtzman et al. 2019, "The Curious Case of Neural Text Degeneration", §3.1).

    Keep the smallest set of most-probable tokens whose total probability is >= ``p``; the
    most probable token is always kept. ``p = 1`` keeps everything.

    Args:
        logits: ``(..., V)`` float. p: float in (0, 1].

    Returns:
        ``(..., V)`` float, excluded tokens at -inf.

    Raises:
        ValueError: if ``p`` is not in (0, 1].
    """
    check_min_rank(logits, "logits", 1, "(..., V)")
    if not 0.0 < p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {p}.")
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)  # (..., V)
    probs = sorted_logits.softmax(dim=-1)  # (..., V)
    mass_before = probs.cumsum(dim=-1) - probs  # (..., V): probability of strictly better tokens
    drop_sorted = mass_before >= p  # the nucleus already reached p without this token
    drop = drop_sorted.scatter(-1, order, drop_sorted)  # back to vocabulary order
    return logits.masked_fill(drop, float("-inf"))


def sample_next_token(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, greedy: bool = False,
                      generator: torch.Generator | None = None) -> Tensor:
    """Pick one token per row from ``logits: (B, V)``; returns ``(B,)`` long.

    ``greedy=True`` takes the argmax (temperature and filters do not change it). Otherwise
    logits are divided by ``temperature``, filtered by top-k then top-p, and one token is
    drawn from the softmax with ``torch.multinomial`` (reproducible with ``generator``).
    """
    if greedy:
        return logits.argmax(dim=-1)  # (B,)
    logits = apply_temperature(logits, temperature)
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    probs = logits.softmax(dim=-1)  # (B, V)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)  # (B,)
