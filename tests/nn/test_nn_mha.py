"""split_heads/merge_heads, MultiHeadAttention vs torch.nn.MultiheadAttention, KVCache."""

import pytest
import torch
from torch import nn

from attnlab.nn import KVCache, MultiHeadAttention, causal_mask, merge_heads, padding_mask, split_heads
from nn_helpers import copy_torch_mha

D, H = 16, 4


def pair(dropout=0.0):
    ours, theirs = MultiHeadAttention(D, H, dropout=dropout), nn.MultiheadAttention(D, H, batch_first=True)
    copy_torch_mha(ours, theirs)
    return ours.eval(), theirs.eval()


def test_split_merge_shapes_and_roundtrip():
    x = torch.randn(2, 5, 12)
    h = split_heads(x, 3)
    assert h.shape == (2, 3, 5, 4)
    torch.testing.assert_close(h[:, 1], x[:, :, 4:8])  # head 1 = features 4..7
    torch.testing.assert_close(merge_heads(h), x)


def test_split_heads_errors():
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by n_heads=3.*\[1, 2, 5, 10\]"):
        split_heads(torch.randn(1, 2, 10), 3)
    with pytest.raises(ValueError, match=r"x must have 3 dimensions \(B, L, d_model\), got shape \(2, 10\).*unsqueeze\(0\)"):
        split_heads(torch.randn(2, 10), 2)
    with pytest.raises(ValueError, match=r"x must have 4 dimensions \(B, H, L, d_k\)"):
        merge_heads(torch.randn(2, 3, 4))


def test_self_attention_matches_torch_with_weights():
    ours, theirs = pair()
    x = torch.randn(2, 5, D)
    out, w = ours(x, need_weights=True)
    ref, ref_w = theirs(x, x, x, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(w, ref_w)


def test_causal_and_key_padding_match_torch():
    ours, theirs = pair()
    x = torch.randn(2, 5, D)
    pad = padding_mask([5, 3], 5)  # True = real token
    causal = causal_mask(5)
    out, _ = ours(x, attn_mask=causal, key_padding_mask=pad)
    # torch's bool masks mean True = NOT allowed: convert explicitly.
    ref, _ = theirs(x, x, x, attn_mask=~causal, key_padding_mask=~pad)
    torch.testing.assert_close(out, ref)
    out2, _ = ours(x, is_causal=True, key_padding_mask=pad)
    torch.testing.assert_close(out2, ref)


def test_cross_attention_with_key_padding_matches_torch():
    ours, theirs = pair()
    q, mem = torch.randn(2, 3, D), torch.randn(2, 6, D)
    pad = padding_mask([6, 2], 6)
    out, w = ours(q, mem, mem, key_padding_mask=pad, need_weights=True)
    ref, ref_w = theirs(q, mem, mem, key_padding_mask=~pad, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(w, ref_w)
    assert w.shape == (2, H, 3, 6) and torch.all(w[1, :, :, 2:] == 0)


@pytest.mark.parametrize("mask_kind", ["none", "causal_flag", "causal_tensor", "padding", "per_head"])
def test_fused_equals_explicit(mask_kind):
    mha = MultiHeadAttention(D, H).eval()
    x = torch.randn(2, 5, D)
    kw = {
        "none": {},
        "causal_flag": {"is_causal": True},
        "causal_tensor": {"attn_mask": causal_mask(5)},
        "padding": {"key_padding_mask": padding_mask([4, 2], 5)},
        "per_head": {"attn_mask": (torch.rand(2, H, 5, 5) > 0.3) | torch.eye(5, dtype=torch.bool)},
    }[mask_kind]
    fused, none_w = mha(x, **kw)
    explicit, w = mha(x, need_weights=True, **kw)
    assert none_w is None and w.shape == (2, H, 5, 5)
    torch.testing.assert_close(fused, explicit)
    mha.fused = False
    explicit2, w2 = mha(x, **kw)
    assert w2 is None
    torch.testing.assert_close(explicit2, explicit)


def test_kv_cache_incremental_equals_full():
    mha = MultiHeadAttention(D, H).eval()
    x = torch.randn(2, 6, D)
    full, _ = mha(x, is_causal=True)
    cache = KVCache()
    first, _ = mha(x[:, :4], is_causal=True, cache=cache)  # prefill 4 positions
    steps = [mha(x[:, t:t + 1], is_causal=True, cache=cache)[0] for t in (4, 5)]
    torch.testing.assert_close(torch.cat([first, *steps], dim=1), full)
    assert len(cache) == 6 and cache.k.shape == (2, H, 6, D // H)
    # two new queries at once against a cache: rectangular causal alignment
    cache2 = KVCache()
    mha(x[:, :4], is_causal=True, cache=cache2)
    last2, w = mha(x[:, 4:], is_causal=True, cache=cache2, need_weights=True)
    torch.testing.assert_close(last2, full[:, 4:])
    assert torch.all(w[:, :, 0, 5] == 0)  # query 4 must not see key 5


def test_kv_cache_errors():
    mha = MultiHeadAttention(D, H)
    x = torch.randn(2, 3, D)
    with pytest.raises(ValueError, match="cache is only for self-attention"):
        mha(x, x, x, cache=KVCache())
    cache = KVCache()
    mha(x, cache=cache)
    with pytest.raises(ValueError, match=r"do not match the cache.*fresh KVCache"):
        mha(torch.randn(1, 1, D), cache=cache)
    cache.reset()
    assert len(cache) == 0


def test_constructor_rejects_indivisible_heads():
    with pytest.raises(ValueError, match="d_model=10 is not divisible by n_heads=4"):
        MultiHeadAttention(10, 4)


def test_bad_inputs_have_useful_messages():
    mha = MultiHeadAttention(D, H)
    x = torch.randn(2, 5, D)
    with pytest.raises(ValueError, match=r"query must have 3 dimensions \(B, L, d_model\), got shape \(5, 16\).*unsqueeze\(0\)"):
        mha(torch.randn(5, D))
    with pytest.raises(ValueError, match=r"query must have last dimension d_model=16, got shape \(2, 5, 8\)"):
        mha(torch.randn(2, 5, 8))
    with pytest.raises(ValueError, match=r"key must have last dimension d_model=16"):
        mha(x, torch.randn(2, 4, 7))
    with pytest.raises(ValueError, match="must share the batch size"):
        mha(x, torch.randn(3, 4, D))
    with pytest.raises(TypeError, match=r"attn_mask must be a bool tensor.*torch.float32"):
        mha(x, attn_mask=torch.zeros(5, 5))
    with pytest.raises(ValueError, match=r"attn_mask of shape \(5, 4\) does not broadcast.*\(2, 4, 5, 5\)"):
        mha(x, attn_mask=torch.ones(5, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(B, S\) = \(2, 5\).*got \(2, 4\)"):
        mha(x, key_padding_mask=torch.ones(2, 4, dtype=torch.bool))
    with pytest.raises(TypeError, match="key_padding_mask must be a bool tensor"):
        mha(x, key_padding_mask=torch.ones(2, 5))
    empty = torch.ones(2, 5, dtype=torch.bool)
    empty[1] = False
    with pytest.raises(ValueError, match="no key they may attend to"):
        mha(x, key_padding_mask=empty)


def test_attention_dropout_only_in_training():
    mha = MultiHeadAttention(D, H, dropout=0.5)
    x = torch.randn(2, 5, D)
    mha.eval()
    a, _ = mha(x)
    b, _ = mha(x)
    torch.testing.assert_close(a, b)
    mha.train()
    c, _ = mha(x)
    assert not torch.allclose(a, c)


def test_kv_cache_rejects_mismatched_k_v():
    cache = KVCache()
    with pytest.raises(ValueError, match=r"must agree in \(B, H, L_new\)"):
        cache.update(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 2, 4))


def test_value_without_key_raises():
    mha = MultiHeadAttention(D, H)
    x = torch.randn(1, 3, D)
    with pytest.raises(ValueError, match="value was given without key"):
        mha(x, value=x)


def test_kv_cache_writes_into_preallocated_storage_without_copying_old_entries():
    cache = KVCache(capacity=8)
    k0, v0 = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4)
    cache.update(k0, v0)
    storage = cache.k.untyped_storage().data_ptr()
    for _ in range(5):  # 3 + 5 = 8 = capacity: every append lands in the same storage
        k, v = cache.update(torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4))
        assert k.untyped_storage().data_ptr() == storage
    assert len(cache) == 8 and cache.capacity == 8 and cache.position == 8
    torch.testing.assert_close(cache.k[:, :, :3], k0)
    torch.testing.assert_close(cache.v[:, :, :3], v0)


def test_kv_cache_grows_by_doubling_and_keeps_its_contents():
    cache = KVCache(capacity=2)
    keys = [torch.randn(2, 3, 1, 4) for _ in range(40)]
    capacities = set()
    for k in keys:
        cache.update(k, -k)
        capacities.add(cache.capacity)
    assert sorted(capacities) == [2, 4, 8, 16, 32, 64]  # amortised: 5 reallocations for 40 positions
    torch.testing.assert_close(cache.k, torch.cat(keys, dim=2))
    torch.testing.assert_close(cache.v, -torch.cat(keys, dim=2))


def test_sliding_kv_cache_keeps_the_last_window_positions():
    cache = KVCache(window=4)
    keys = [torch.full((1, 1, 1, 2), float(i)) for i in range(11)]
    cache.update(torch.cat(keys[:3], dim=2), torch.cat(keys[:3], dim=2))  # a 3-token prompt fits
    for k in keys[3:]:
        cache.update(k, k)
        assert len(cache) == min(4, cache.position)
    assert cache.position == 11
    assert cache.k[0, 0, :, 0].tolist() == [7.0, 8.0, 9.0, 10.0]
    with pytest.raises(ValueError, match="past its window of 4; past the window feed one token at a time"):
        cache.update(torch.randn(1, 1, 2, 2), torch.randn(1, 1, 2, 2))
    with pytest.raises(ValueError, match="window must be a positive int"):
        KVCache(window=0)


def test_kv_cache_keeps_gradients_flowing_when_keys_require_grad():
    cache = KVCache()
    a = torch.randn(1, 1, 2, 2, requires_grad=True)
    b = torch.randn(1, 1, 1, 2, requires_grad=True)
    cache.update(a, a)
    k, v = cache.update(b, b)
    (k.sum() + 2 * v.sum()).backward()
    torch.testing.assert_close(a.grad, torch.full_like(a, 3.0))
    torch.testing.assert_close(b.grad, torch.full_like(b, 3.0))


def test_kv_cache_rejects_another_dtype():
    cache = KVCache()
    cache.update(torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4))
    with pytest.raises(ValueError, match=r"do not match the cache.*dtype.*fresh KVCache"):
        cache.update(torch.randn(1, 2, 1, 4, dtype=torch.float64), torch.randn(1, 2, 1, 4, dtype=torch.float64))
