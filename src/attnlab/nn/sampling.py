"""Turning next-token logits into a token: temperature, top-k, top-p (nucleus), greedy; and
beam search over whole continuations (:func:`beam_search`).

All filters take logits ``(..., V)`` and return logits of the same shape with the excluded
tokens set to -inf, so a softmax afterwards renormalises over the kept tokens; temperature maps
``(..., V)`` to ``(..., V)`` too.

Sources: the softmax temperature of Ackley, Hinton and Sejnowski 1985; top-k, Fan et al. 2018;
top-p (nucleus), Holtzman et al. 2020 (ICLR); beam search with length normalisation, Wu et al.
2016 (GNMT, §7).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import torch
from torch import Tensor

from ._checks import check_min_rank


def apply_temperature(logits: Tensor, temperature: float) -> Tensor:
    """``logits / temperature``: < 1 sharpens the distribution, > 1 flattens it.

    ``logits: (..., V)`` float -> ``(..., V)``, same dtype (the softmax temperature of Ackley,
    Hinton and Sejnowski 1985).

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


class Hypothesis(NamedTuple):
    """One finished beam of :func:`beam_search`.

    tokens: ``(T + n,)`` long, the prompt followed by the n generated tokens (ending with
    ``eos_id`` when the beam finished); log_prob: the sum of the n tokens' log-probabilities;
    score: ``log_prob / n ** length_alpha``, the value beams are ranked by at the end (a power
    of the length, as in the length normalisation of Wu et al. 2016, GNMT §7).
    """

    tokens: Tensor
    log_prob: float
    score: float


def beam_search(next_logits: Callable[[Tensor], Tensor], prompt: Tensor, max_new_tokens: int,
                beam_width: int, eos_id: int | None = None, length_alpha: float = 0.0) -> list[Hypothesis]:
    """Beam search: keep the ``beam_width`` most probable continuations at every step.

    At each step every live beam is extended by every token; of all extensions the
    ``beam_width`` with the highest total log-probability survive (so ``beam_width=1`` is
    greedy decoding). An extension ending in ``eos_id`` is finished and leaves the beam, which
    then continues with fewer live beams. When no beam is live or ``max_new_tokens`` tokens
    were added, the finished and live beams are ranked by
    ``score = log_prob / n ** length_alpha`` (n = generated tokens). Summed log-probabilities
    only decrease as a text grows, so ``length_alpha = 0`` favours short outputs; the length
    normalisation of Wu et al. 2016 (GNMT, §7) divides by a power of the length, ``alpha``
    about 0.6 to 1. With ``beam_width >= V ** (max_new_tokens - 1)`` nothing is ever pruned
    and the result is the exact most probable sequence (tested against an exhaustive search).

    Args:
        next_logits: maps token ids ``(n, t)`` long to next-token logits ``(n, V)`` float, e.g.
            ``lambda ids: gpt(ids[:, -block_size:])[0][:, -1]``.
        prompt: ``(T,)`` long, T >= 1.
        max_new_tokens: int >= 0. beam_width: int >= 1. eos_id: optional token id that ends a beam.
        length_alpha: float >= 0.

    Returns:
        Up to ``beam_width`` :class:`Hypothesis`, best score first.

    Raises:
        ValueError: a prompt that is not 1-D long with T >= 1, a bad width, length or alpha, or
            ``next_logits`` returning a shape other than ``(n, V)``.
    """
    if not isinstance(prompt, Tensor) or prompt.dim() != 1 or prompt.numel() < 1 or prompt.dtype != torch.long:
        raise ValueError(f"prompt must be a 1-D long tensor of T >= 1 token ids, got {prompt!r:.80}.")
    if not isinstance(beam_width, int) or beam_width < 1:
        raise ValueError(f"beam_width must be an int >= 1, got {beam_width!r}.")
    if not isinstance(max_new_tokens, int) or max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}.")
    if not length_alpha >= 0:
        raise ValueError(f"length_alpha must be >= 0, got {length_alpha}.")
    live: list[tuple[Tensor, float]] = [(prompt, 0.0)]
    finished: list[tuple[Tensor, float]] = []
    for _ in range(max_new_tokens):
        if not live:
            break
        ids = torch.stack([seq for seq, _ in live])  # (n, t)
        logits = next_logits(ids)
        if not isinstance(logits, Tensor) or logits.dim() != 2 or logits.shape[0] != len(live):
            raise ValueError(f"next_logits must return (n, V) = ({len(live)}, V) logits, "
                             f"got {tuple(getattr(logits, 'shape', ()))}.")
        V = logits.shape[1]
        totals = (torch.tensor([lp for _, lp in live], dtype=torch.float64)[:, None]  # (n,) -> (n, 1)
                  + logits.double().log_softmax(dim=-1))  # (n, V) log-probability of each extension
        best = totals.flatten().topk(min(beam_width, totals.numel()))  # (n, V) -> (n * V,): index = beam * V + token
        extended: list[tuple[Tensor, float]] = []
        for total, flat in zip(best.values.tolist(), best.indices.tolist(), strict=True):
            beam, token = divmod(flat, V)
            seq = torch.cat([live[beam][0], prompt.new_tensor([token])])
            (finished if eos_id is not None and token == eos_id else extended).append((seq, total))
        live = extended
    T = prompt.numel()
    ranked = [Hypothesis(seq, lp, lp / max(seq.numel() - T, 1) ** length_alpha) for seq, lp in finished + live]
    ranked.sort(key=lambda h: h.score, reverse=True)
    return ranked[:beam_width]
