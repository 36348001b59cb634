"""Beam search (attnlab.nn.sampling.beam_search) against an exhaustive search on tiny models."""
import itertools

import pytest
import torch

from attnlab.nn import GPT, GPTConfig
from attnlab.nn.sampling import beam_search


def tiny_gpt(seed=0, vocab=3):
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=vocab, block_size=8, d_model=8, n_heads=2, n_layers=1)).eval()


def logits_fn(model):
    return lambda ids: model(ids)[0][:, -1]


@torch.no_grad()
def sequence_log_prob(model, prompt, continuation):
    ids = torch.cat([prompt, torch.tensor(continuation)])[None]
    logp = model(ids[:, :-1])[0].log_softmax(-1)[0]  # (T+n-1, V)
    T = prompt.numel()
    return sum(float(logp[T - 1 + i, tok]) for i, tok in enumerate(continuation))


@torch.no_grad()
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wide_beam_equals_exhaustive_search(seed):
    model, prompt, n, V = tiny_gpt(seed), torch.tensor([1]), 3, 3
    exhaustive = {c: sequence_log_prob(model, prompt, c) for c in itertools.product(range(V), repeat=n)}
    best = max(exhaustive, key=exhaustive.get)
    top = beam_search(logits_fn(model), prompt, n, beam_width=V ** (n - 1))[0]
    assert tuple(top.tokens[1:].tolist()) == best
    assert top.log_prob == pytest.approx(exhaustive[best], abs=1e-5)


@torch.no_grad()
def test_wide_beam_with_eos_equals_exhaustive_search():
    model, prompt, n, V, eos = tiny_gpt(3), torch.tensor([0]), 3, 3, 2
    candidates = {}  # every sequence that ends at its first eos, or runs n tokens without one
    for length in range(1, n + 1):
        for c in itertools.product(range(V), repeat=length):
            if (eos in c and c.index(eos) == length - 1) or (eos not in c and length == n):
                candidates[c] = sequence_log_prob(model, prompt, c)
    for alpha in (0.0, 1.0):
        score = {c: lp / len(c) ** alpha for c, lp in candidates.items()}
        best = max(score, key=score.get)
        top = beam_search(logits_fn(model), prompt, n, beam_width=V ** n, eos_id=eos, length_alpha=alpha)[0]
        assert tuple(top.tokens[1:].tolist()) == best, alpha
        assert top.score == pytest.approx(score[best], abs=1e-5)


@torch.no_grad()
def test_width_one_is_greedy_decoding():
    model = tiny_gpt(4, vocab=5)
    prompt = torch.tensor([1, 3])
    greedy = model.generate(prompt[None], 5, greedy=True, use_cache=False)[0]
    assert torch.equal(beam_search(logits_fn(model), prompt, 5, beam_width=1)[0].tokens, greedy)


def table_model(table):
    """next_logits from a dict: last token -> log-probabilities of the next token."""
    return lambda ids: torch.stack([torch.tensor(table[int(seq[-1])]).log() for seq in ids])


def test_a_wider_beam_finds_what_greedy_misses():
    # token 0 = start. Greedy takes 1 (p 0.6) then can only reach 0.4; 2 (p 0.4) leads to a sure 0.9
    table = {0: [0.0, 0.6, 0.4], 1: [0.3, 0.4, 0.3], 2: [0.05, 0.9, 0.05]}
    greedy = beam_search(table_model(table), torch.tensor([0]), 2, beam_width=1)[0]
    wide = beam_search(table_model(table), torch.tensor([0]), 2, beam_width=2)[0]
    assert greedy.tokens.tolist() == [0, 1, 1] and wide.tokens.tolist() == [0, 2, 1]
    assert wide.log_prob > greedy.log_prob


def test_length_normalisation_removes_the_short_bias():
    # eos = 0. Stopping at once has p 0.4; the 4-token answer 0.6 · 0.8³ ≈ 0.31 is less likely in total,
    # but each of its tokens is likelier (geometric mean 0.74 > 0.4)
    table = {3: [0.4, 0.6, 0.0], 1: [0.2, 0.8, 0.0], 2: [0.0, 0.0, 1.0]}
    raw = beam_search(table_model(table), torch.tensor([3]), 4, beam_width=3, eos_id=0)
    normalised = beam_search(table_model(table), torch.tensor([3]), 4, beam_width=3, eos_id=0, length_alpha=1.0)
    assert raw[0].tokens.tolist() == [3, 0]  # the empty answer wins on summed log-probability
    assert len(normalised[0].tokens) > 2  # normalised by length, a longer answer wins
    assert all(a.score >= b.score for a, b in zip(raw, raw[1:], strict=False))  # best first


def test_bad_arguments_say_what_is_wrong():
    fn = table_model({0: [0.5, 0.5]})
    with pytest.raises(ValueError, match="prompt"):
        beam_search(fn, torch.tensor([[0]]), 2, 2)
    with pytest.raises(ValueError, match="beam_width"):
        beam_search(fn, torch.tensor([0]), 2, 0)
    with pytest.raises(ValueError, match="length_alpha"):
        beam_search(fn, torch.tensor([0]), 2, 2, length_alpha=-1)
    with pytest.raises(ValueError, match=r"\(n, V\)"):
        beam_search(lambda ids: torch.zeros(5), torch.tensor([0]), 2, 2)
