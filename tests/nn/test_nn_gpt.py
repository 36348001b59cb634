"""GPT: config validation, loss, causality, generation with and without the KV cache."""

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F

from attnlab.nn import GPT, GPTConfig, KVCache

CFG = GPTConfig(vocab_size=11, block_size=12, d_model=16, n_heads=2, n_layers=2)


def model(**kw):
    return GPT(GPTConfig(**{**CFG.__dict__, **kw})).eval()


def test_config_defaults_frozen_and_validated():
    assert CFG.ff_width == 64 and CFG.norm_first and CFG.fused_attention
    with pytest.raises(dataclasses.FrozenInstanceError):
        CFG.d_model = 32  # frozen dataclass
    with pytest.raises(ValueError, match="d_model=10 is not divisible by n_heads=4"):
        GPTConfig(11, 8, d_model=10, n_heads=4)
    with pytest.raises(ValueError, match=r"GPTConfig\.block_size must be a positive int, got 0"):
        GPTConfig(11, 0)
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
        GPTConfig(11, 8, dropout=1.0)


def test_forward_shapes_and_loss_is_shifted_cross_entropy():
    m = model()
    idx = torch.randint(0, 11, (3, 7))
    targets = torch.randint(0, 11, (3, 7))
    logits, loss = m(idx, targets)
    assert logits.shape == (3, 7, 11) and m(idx)[1] is None
    torch.testing.assert_close(loss, F.cross_entropy(logits.reshape(-1, 11), targets.reshape(-1)))
    assert abs(loss.item() - math.log(11)) < 0.5  # small init: near-uniform predictions


def test_weight_tying():
    m = model()
    assert m.lm_head.weight is m.tok_emb.weight


def test_causal_no_future_leak_through_whole_model():
    for norm_first in (True, False):
        m = model(norm_first=norm_first)
        idx = torch.randint(0, 11, (2, 10))
        changed = idx.clone()
        changed[:, 6:] = (changed[:, 6:] + 1) % 11
        a, _ = m(idx)
        b, _ = m(changed)
        torch.testing.assert_close(a[:, :6], b[:, :6])
        assert not torch.allclose(a[:, 6:], b[:, 6:])


def test_fused_and_explicit_attention_agree():
    torch.manual_seed(1)
    fused = model()
    torch.manual_seed(1)
    explicit = model(fused_attention=False)
    assert not explicit.blocks[0].self_attn.fused
    idx = torch.randint(0, 11, (2, 9))
    torch.testing.assert_close(fused(idx)[0], explicit(idx)[0])


@pytest.mark.parametrize("mode", [dict(greedy=True), dict(temperature=0.8, top_k=5), dict(top_p=0.9)])
def test_generation_with_and_without_cache_identical(mode):
    m = model()
    prompt = torch.randint(0, 11, (2, 3))
    # 15 new tokens: the context passes block_size=12, exercising the sliding window too
    a, la = m.generate(prompt, 15, use_cache=True, generator=torch.Generator().manual_seed(0),
                       return_logits=True, **mode)
    b, lb = m.generate(prompt, 15, use_cache=False, generator=torch.Generator().manual_seed(0),
                       return_logits=True, **mode)
    assert a.shape == (2, 18) and la.shape == (2, 15, 11)
    assert torch.equal(a, b)
    torch.testing.assert_close(la, lb, atol=1e-5, rtol=1e-5)
    assert torch.equal(a[:, :3], prompt)


@pytest.mark.parametrize("norm_first", [True, False])
def test_incremental_forward_with_caches_matches_full_forward(norm_first):
    m = model(norm_first=norm_first)
    idx = torch.randint(0, 11, (2, 8))
    full, _ = m(idx)
    caches = [KVCache() for _ in m.blocks]
    parts = [m(idx[:, :5], caches=caches)[0]] + [m(idx[:, t:t + 1], caches=caches)[0] for t in range(5, 8)]
    torch.testing.assert_close(torch.cat(parts, dim=1), full, atol=1e-5, rtol=1e-5)


def test_greedy_generate_follows_argmax():
    m = model()
    prompt = torch.randint(0, 11, (1, 4))
    out = m.generate(prompt, 1, greedy=True)
    assert out[0, -1] == m(prompt)[0][0, -1].argmax()


def test_generate_restores_training_mode():
    m = model().train()
    m.generate(torch.zeros(1, 1, dtype=torch.long), 2, greedy=True)
    assert m.training


def test_bad_inputs():
    m = model()
    with pytest.raises(ValueError, match=r"context of 13 tokens.*exceeds block_size=12.*idx\[:, -block_size:\]"):
        m(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match=r"idx must have 2 dimensions \(B, L\) of token ids, got shape \(5,\).*unsqueeze"):
        m(torch.zeros(5, dtype=torch.long))
    with pytest.raises(TypeError, match=r"integer token ids, got dtype torch.float32.*idx.long\(\)"):
        m(torch.zeros(1, 5))
    with pytest.raises(ValueError, match=r"targets must have the shape of idx \(1, 5\).*got \(1, 4\)"):
        m(torch.zeros(1, 5, dtype=torch.long), torch.zeros(1, 4, dtype=torch.long))
    with pytest.raises(ValueError, match="temperature must be > 0"):
        m.generate(torch.zeros(1, 2, dtype=torch.long), 3, temperature=0.0)
    with pytest.raises(ValueError, match="top_k must be an int >= 1 or None, got 0"):
        m.generate(torch.zeros(1, 2, dtype=torch.long), 3, top_k=0)
    with pytest.raises(ValueError, match=r"top_p must be in \(0, 1\] or None, got 0"):
        m.generate(torch.zeros(1, 2, dtype=torch.long), 3, top_p=0)
    with pytest.raises(ValueError, match="one KVCache per layer"):
        m(torch.zeros(1, 2, dtype=torch.long), caches=[KVCache()])


def test_training_step_reduces_loss():
    m = GPT(CFG).train()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    idx = torch.randint(0, 11, (4, 12))
    first = None
    for _ in range(20):
        _, loss = m(idx[:, :-1], idx[:, 1:])
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < first - 0.5


def test_dropout_active_only_in_training():
    m = model(dropout=0.2)
    idx = torch.randint(0, 11, (2, 6))
    torch.testing.assert_close(m(idx)[0], m(idx)[0])  # eval: deterministic
    m.train()
    assert not torch.allclose(m(idx)[0], m(idx)[0])


def _sliding_window_reference(m, idx):
    """Logits of every position of idx (any length) when each token attends to the last
    block_size tokens (itself included) with rotary positions 0.. : what a sliding cache computes."""
    T, bs = idx.shape[1], m.config.block_size
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    band = (j <= i) & (j > i - bs)  # (T, T), True = may attend
    x = m.tok_emb(idx)
    for block in m.blocks:
        x = block(x, attn_mask=band, is_causal=False)
    return m.lm_head(m.norm_f(x))  # (B, T, V)


def _record_forward_lengths(monkeypatch) -> list[int]:
    """Make GPT.forward record the length L of every idx it is called with; returns the list."""
    lengths = []
    original = GPT.forward

    def spy(self, idx, targets=None, *, caches=None):
        lengths.append(idx.shape[1])
        return original(self, idx, targets, caches=caches)

    monkeypatch.setattr(GPT, "forward", spy)
    return lengths


def test_rotary_gpt_cached_generation_matches_uncached_within_block_size():
    torch.manual_seed(0)
    m = model(positional="rotary")
    assert m.pos_emb is None and m.blocks[1].self_attn.rotary is not None
    prompt = torch.randint(0, 11, (2, 3))
    a, la = m.generate(prompt, 9, use_cache=True, greedy=True, return_logits=True)  # 12 = block_size
    b, lb = m.generate(prompt, 9, use_cache=False, greedy=True, return_logits=True)
    assert torch.equal(a, b)
    torch.testing.assert_close(la, lb, atol=1e-5, rtol=1e-5)


def test_rotary_gpt_slides_its_cache_past_block_size(monkeypatch):
    torch.manual_seed(0)
    m = model(positional="rotary")
    prompt = torch.randint(0, 11, (1, 3))
    lengths = _record_forward_lengths(monkeypatch)
    out, logits = m.generate(prompt, 20, greedy=True, return_logits=True)  # 23 tokens > block_size 12
    assert lengths == [3] + [1] * 19  # the prompt once, then one token per step: never recomputed
    expected = _sliding_window_reference(m, out[:, :-1])[:, 2:]  # positions 2..21 predict tokens 3..22
    torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-5)
    assert torch.equal(out[:, 3:], expected.argmax(-1))


def test_learned_positions_recompute_the_window_past_block_size(monkeypatch):
    m = model()
    lengths = _record_forward_lengths(monkeypatch)
    m.generate(torch.zeros(1, 3, dtype=torch.long), 14, greedy=True)
    assert lengths[:10] == [3] + [1] * 9 and lengths[10:] == [12] * 4  # full window once the cache is full
    with pytest.raises(ValueError, match="learned absolute positions cannot slide"):
        m(torch.zeros(1, 1, dtype=torch.long), caches=[KVCache(window=4) for _ in m.blocks])


def test_rotary_config_validation():
    with pytest.raises(ValueError, match="positional must be 'learned' or 'rotary'"):
        GPTConfig(11, 8, positional="alibi")
    with pytest.raises(ValueError, match=r"d_k = d_model / n_heads = 3 must be even"):
        GPTConfig(11, 8, d_model=6, n_heads=2, positional="rotary")


def test_decoding_path_rejects_caches_of_another_batch():
    m = model()
    caches = [KVCache() for _ in m.blocks]
    with torch.no_grad():
        m(torch.zeros(1, 2, dtype=torch.long), caches=caches)
        with pytest.raises(ValueError, match=r"batch size 2 but the caches hold batch size 1.*fresh KVCaches"):
            m(torch.zeros(2, 1, dtype=torch.long), caches=caches)


def test_generate_calls_the_model_once_per_token_so_forward_hooks_see_every_step():
    # lesson 08 times each token with a forward hook on the GPT
    m = model()
    seen = []
    handle = m.register_forward_hook(lambda mod, args, out: seen.append(args[0].shape[1]))
    m.generate(torch.zeros(1, 2, dtype=torch.long), 6, greedy=True)
    handle.remove()
    assert seen == [2] + [1] * 5


def test_generate_returns_ordinary_tensors_and_uses_the_current_weights():
    torch.manual_seed(0)
    m = model()
    out, logits = m.generate(torch.zeros(1, 2, dtype=torch.long), 5, return_logits=True,
                             generator=torch.Generator().manual_seed(0))
    assert not out.is_inference() and not logits.is_inference()  # made under inference_mode, returned as copies
    out[:, 0] = 1  # in-place edits and training on the output are allowed
    m.train()
    m(out[:, :-1], out[:, 1:])[1].backward()
    assert m.blocks[0].self_attn.w_q.weight.grad is not None
    m.eval()
    with torch.no_grad():  # weights changed after a generation: the next one must use the new ones
        for block in m.blocks:
            block.self_attn.w_k.weight.mul_(3.0)
    prompt = torch.randint(0, 11, (1, 4))
    _, step = m.generate(prompt, 1, greedy=True, return_logits=True)
    torch.testing.assert_close(step[:, 0], m(prompt)[0][:, -1].detach())
