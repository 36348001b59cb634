"""attnlab.fast == attnlab.nn: every fast module against its reference, from the same random weights.

Forward outputs, losses and the gradients of every weight (mapped through the state_dict key map),
with every kind of mask, with KV caches (prefill, one-token decoding, sliding rotary caches), and the
tokens that generation samples. A fast module that computed anything else -- a swapped Q/K block in
the packed matrix, a missing mask, a wrong head split, a stale decode plan -- fails here.
"""

import pytest
import torch
import torch.nn.functional as F

from attnlab.fast import (
    FastBlock,
    FastGPT,
    FastSelfAttention,
    fast_state_dict,
    fused_attention,
    reference_state_dict,
    to_fast,
    to_reference,
)
from attnlab.nn import GPT, DecoderBlock, GPTConfig, KVCache, MultiHeadAttention, RotaryEmbedding
from attnlab.nn.attention import scaled_dot_product_attention

TOL = dict(atol=2e-5, rtol=2e-5)


def _randomise(module):
    """Random weights everywhere (biases and LayerNorm gains too), so no entry is trivially 0 or 1."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn_like(p) * 0.3)
    return module


def _grads_in_reference_layout(module):
    grads = {k: p.grad for k, p in module.named_parameters()}
    return reference_state_dict(grads) if isinstance(module, (FastGPT, FastBlock, FastSelfAttention)) else grads


def _assert_same_grads(ref, fast):
    want, got = _grads_in_reference_layout(ref), _grads_in_reference_layout(fast)
    assert want.keys() == got.keys()
    for key in want:
        torch.testing.assert_close(got[key], want[key], **TOL, msg=f"gradient of {key}")


# --- the attention function -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["plain", "causal", "mask"])
def test_fused_attention_is_the_reference_attention(case):
    q, k, v = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 7, 4), torch.randn(2, 3, 7, 6)
    if case == "causal":
        k, v = k[:, :, :5], v[:, :, :5]
        mask = torch.ones(5, 5, dtype=torch.bool).tril()
        got = fused_attention(q, k, v, None, 0.0, True)
    else:
        mask = None if case == "plain" else torch.rand(2, 1, 5, 7) > 0.4
        if mask is not None:
            mask[..., 0] = True  # every query keeps a key
        got = fused_attention(q, k, v, mask)
    want, _ = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(got, want, **TOL)


def test_cpu_bf16_attention_runs_in_float32_and_matches_the_reference():
    """Under CPU bf16 autocast the attention itself runs in float32 (torch's CPU flash kernel is
    several times slower backward in bf16): the float32 attention of the bf16 projections, in bf16."""
    q, k, v = (torch.randn(2, 3, 5, 4).bfloat16() for _ in range(3))
    out = fused_attention(q, k, v, None, 0.0, True)
    want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    assert out.dtype == torch.bfloat16 and torch.equal(out, want.bfloat16())

    ref = _randomise(MultiHeadAttention(16, 4))
    fast = to_fast(ref)
    x = torch.randn(2, 6, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, _ = fast(x, is_causal=True)
        want, _ = ref(x, is_causal=True, need_weights=True)  # the explicit path
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got.float(), want.float(), atol=5e-2, rtol=5e-2)
    assert not torch.allclose(got.float(), ref(x)[0], atol=5e-2)  # the causal mask mattered
    got.float().sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in fast.parameters())


# --- self-attention -----------------------------------------------------------------------------------------


def _masks(kind, B=2, H=4, L=6):
    if kind == "none":
        return {}
    if kind == "causal":
        return {"is_causal": True}
    if kind == "attn_2d":
        m = torch.rand(L, L) > 0.5
    elif kind == "attn_3d":
        m = torch.rand(B, L, L) > 0.5
    elif kind == "attn_4d":
        m = torch.rand(B, H, L, L) > 0.5
    else:  # padding + causal
        pad = torch.ones(B, L, dtype=torch.bool)
        pad[1, 4:] = False
        return {"key_padding_mask": pad, "is_causal": True}
    m[..., 0] = True
    return {"attn_mask": m}


@pytest.mark.parametrize("kind", ["none", "causal", "attn_2d", "attn_3d", "attn_4d", "padding_causal"])
@pytest.mark.parametrize("bias", [True, False])
def test_self_attention_forward_and_backward(kind, bias):
    ref = _randomise(MultiHeadAttention(16, 4, bias=bias))
    fast = to_fast(ref)
    x = torch.randn(2, 6, 16)
    kw = _masks(kind)
    want, _ = ref(x, **kw)
    got, weights = fast(x, **kw)
    assert weights is None
    torch.testing.assert_close(got, want, **TOL)
    want.square().sum().backward()
    got.square().sum().backward()
    _assert_same_grads(ref, fast)


def test_self_attention_with_rotary_and_a_kv_cache():
    ref = _randomise(MultiHeadAttention(16, 4))
    ref.rotary = RotaryEmbedding(4)
    fast = to_fast(ref)
    assert fast.rotary is ref.rotary
    x = torch.randn(2, 7, 16)
    rc, fc = KVCache(), KVCache()
    with torch.no_grad():
        torch.testing.assert_close(fast(x[:, :4], cache=fc, is_causal=True)[0],
                                   ref(x[:, :4], cache=rc, is_causal=True)[0], **TOL)
        for t in range(4, 7):
            want, _ = ref(x[:, t:t + 1], cache=rc, is_causal=True)
            torch.testing.assert_close(fast(x[:, t:t + 1], cache=fc, is_causal=True)[0], want, **TOL)
    torch.testing.assert_close(fc.k, rc.k, **TOL)
    torch.testing.assert_close(fc.v, rc.v, **TOL)


def test_one_token_decode_step_is_the_cached_forward():
    ref = _randomise(MultiHeadAttention(16, 4))
    fast = to_fast(ref).eval()
    x = torch.randn(3, 5, 16)
    rc, fc = KVCache(), KVCache()
    with torch.no_grad():
        ref(x[:, :4], cache=rc, is_causal=True)
        fast(x[:, :4], cache=fc, is_causal=True)
        want, _ = ref(x[:, 4:], cache=rc, is_causal=True)
        got = FastSelfAttention.decode_step(x[:, 4:], fc, fast.plan())
    torch.testing.assert_close(got, want, **TOL)
    assert fc.position == rc.position == 5


# --- blocks ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("kind", ["causal", "attn_3d", "padding_causal"])
def test_block_forward_and_backward(norm_first, kind):
    ref = _randomise(DecoderBlock(16, 4, 40, activation="gelu", norm_first=norm_first, cross_attention=False))
    fast = to_fast(ref)
    x = torch.randn(2, 6, 16)
    kw = _masks(kind)
    kw.setdefault("is_causal", False)
    want, got = ref(x, **kw), fast(x, **kw)
    torch.testing.assert_close(got, want, **TOL)
    (want * torch.arange(16.0)).sum().backward()
    (got * torch.arange(16.0)).sum().backward()
    _assert_same_grads(ref, fast)


@pytest.mark.parametrize("norm_first", [True, False])
def test_block_decode_step_is_the_cached_forward(norm_first):
    ref = _randomise(DecoderBlock(16, 2, 32, activation="relu", norm_first=norm_first, cross_attention=False)).eval()
    fast = to_fast(ref)
    x = torch.randn(1, 4, 16)
    rc, fc = KVCache(), KVCache()
    with torch.no_grad():
        ref(x[:, :3], cache=rc)
        fast(x[:, :3], cache=fc)
        torch.testing.assert_close(FastBlock.decode_step(x[:, 3:], fc, fast.plan()), ref(x[:, 3:], cache=rc), **TOL)


def test_cross_attention_blocks_have_no_fast_twin():
    with pytest.raises(TypeError, match="no fast twin for DecoderBlock"):
        to_fast(DecoderBlock(16, 2, 32))
    with pytest.raises(TypeError, match="not an attnlab.fast module"):
        to_reference(DecoderBlock(16, 2, 32, cross_attention=False))


# --- the whole GPT --------------------------------------------------------------------------------------------

CONFIGS = {
    "gpt2": dict(),
    "post_ln_no_bias": dict(norm_first=False, bias=False),
    "rotary": dict(positional="rotary"),
    "explicit_reference": dict(fused_attention=False),
}


def _pair(**kw):
    cfg = GPTConfig(**{**dict(vocab_size=13, block_size=10, d_model=16, n_heads=2, n_layers=2), **kw})
    ref = _randomise(GPT(cfg))
    return ref, to_fast(ref)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_gpt_loss_logits_and_every_gradient(name):
    ref, fast = _pair(**CONFIGS[name])
    idx, tgt = torch.randint(0, 13, (3, 10)), torch.randint(0, 13, (3, 10))
    lr, loss_r = ref(idx, tgt)
    lf, loss_f = fast(idx, tgt)
    torch.testing.assert_close(lf, lr, **TOL)
    torch.testing.assert_close(loss_f, loss_r, **TOL)
    loss_r.backward()
    loss_f.backward()
    _assert_same_grads(ref, fast)


def test_gpt_with_dropout_draws_the_same_masks_in_training():
    ref, fast = _pair(dropout=0.2)
    ref.train(), fast.train()
    idx = torch.randint(0, 13, (2, 10))
    torch.manual_seed(5)
    want, _ = ref(idx)
    torch.manual_seed(5)
    got, _ = fast(idx)
    torch.testing.assert_close(got, want, **TOL)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_gpt_kv_cache_decoding_gives_the_reference_logits(name):
    ref, fast = _pair(**CONFIGS[name])
    ref.eval(), fast.eval()
    idx = torch.randint(0, 13, (2, 9))
    rc, fc = [KVCache() for _ in ref.blocks], [KVCache() for _ in fast.blocks]
    with torch.no_grad():
        torch.testing.assert_close(fast(idx[:, :4], caches=fc)[0], ref(idx[:, :4], caches=rc)[0], **TOL)
        for t in range(4, 9):  # one token at a time: FastBlock.decode_step
            torch.testing.assert_close(fast(idx[:, t:t + 1], caches=fc)[0], ref(idx[:, t:t + 1], caches=rc)[0],
                                       **TOL)


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("greedy", [True, False])
def test_gpt_generates_the_reference_tokens_past_block_size(name, greedy):
    ref, fast = _pair(**CONFIGS[name])
    prompt = torch.randint(0, 13, (2, 3))
    kw = dict(greedy=greedy, top_k=None if greedy else 5, temperature=0.8, return_logits=True)
    want, want_logits = ref.generate(prompt, 14, generator=torch.Generator().manual_seed(1), **kw)  # 17 > 10
    got, got_logits = fast.generate(prompt, 14, generator=torch.Generator().manual_seed(1), **kw)
    assert torch.equal(got, want)
    torch.testing.assert_close(got_logits, want_logits, **TOL)
    assert fast._plans is None  # the decode plan lives for one generation only


def test_decoding_takes_the_lean_path_only_without_gradients(monkeypatch):
    _, fast = _pair()
    fast.eval()
    calls = []
    original = FastBlock.decode_step
    monkeypatch.setattr(FastBlock, "decode_step", staticmethod(lambda x, c, p: calls.append(1) or original(x, c, p)))
    idx = torch.randint(0, 13, (1, 6))
    lean, general = [KVCache() for _ in fast.blocks], [KVCache() for _ in fast.blocks]
    with torch.no_grad():
        fast(idx[:, :3], caches=lean)
    fast(idx[:, :3], caches=general)
    for t in range(3, 6):
        with torch.no_grad():
            a, _ = fast(idx[:, t:t + 1], caches=lean)
        b, _ = fast(idx[:, t:t + 1], caches=general)  # gradients on: the general, differentiable path
        torch.testing.assert_close(a, b.detach(), **TOL)
    assert len(calls) == 3 * len(fast.blocks)


def test_decoding_writes_into_the_preallocated_cache_without_copying_it():
    _, fast = _pair()
    fast.eval()
    caches = [KVCache(capacity=10) for _ in fast.blocks]
    with torch.no_grad():
        fast(torch.randint(0, 13, (1, 3)), caches=caches)
        storage = [c.k.untyped_storage().data_ptr() for c in caches]
        for _ in range(3, 10):
            fast(torch.randint(0, 13, (1, 1)), caches=caches)
    assert [c.k.untyped_storage().data_ptr() for c in caches] == storage  # same buffers: no cat, no regrowth
    assert len(caches[0]) == 10


def test_fast_decoding_checks_its_inputs_like_the_reference():
    _, fast = _pair()
    caches = [KVCache() for _ in fast.blocks]
    with torch.no_grad():
        fast(torch.zeros(1, 2, dtype=torch.long), caches=caches)
        with pytest.raises(ValueError, match=r"batch size 2 but the caches hold batch size 1"):
            fast(torch.zeros(2, 1, dtype=torch.long), caches=caches)
        with pytest.raises(TypeError, match="integer token ids"):
            fast(torch.zeros(1, 1), caches=caches)


# --- conversion ------------------------------------------------------------------------------------------------


def test_state_dict_key_maps_are_inverse_and_stack_q_k_v_in_order():
    ref, fast = _pair()
    sd = ref.state_dict()
    packed = fast_state_dict(sd)
    w = packed["blocks.1.self_attn.qkv.weight"]
    assert w.shape == (48, 16)
    assert torch.equal(w[:16], sd["blocks.1.self_attn.w_q.weight"])
    assert torch.equal(w[16:32], sd["blocks.1.self_attn.w_k.weight"])
    assert torch.equal(w[32:], sd["blocks.1.self_attn.w_v.weight"])
    assert packed.keys() == fast.state_dict().keys()
    back = reference_state_dict(packed)
    assert back.keys() == sd.keys() and all(torch.equal(back[k], sd[k]) for k in sd)
    mha = MultiHeadAttention(8, 2).state_dict()  # a bare module: no prefix
    assert set(fast_state_dict(mha)) == {"qkv.weight", "qkv.bias", "w_o.weight", "w_o.bias"}


def test_key_maps_refuse_broken_state_dicts():
    sd = MultiHeadAttention(8, 2).state_dict()
    del sd["w_k.weight"]
    with pytest.raises(ValueError, match="no partner w_k.weight"):
        fast_state_dict(sd)
    with pytest.raises(ValueError, match="needs a multiple of 3"):
        reference_state_dict({"qkv.weight": torch.zeros(4, 8)})


def test_round_trip_keeps_weights_mode_and_dtype_and_leaves_the_rng_alone():
    ref, _ = _pair(positional="rotary")
    ref = ref.double().eval()
    state = torch.random.get_rng_state()
    fast = to_fast(ref)
    assert torch.equal(torch.random.get_rng_state(), state)  # building the twin drew no random numbers
    assert not fast.training and next(fast.parameters()).dtype == torch.float64
    back = to_reference(fast)
    assert isinstance(back, GPT) and not isinstance(back, FastGPT)
    assert all(torch.equal(back.state_dict()[k], v) for k, v in ref.state_dict().items())
    assert fast.lm_head.weight is fast.tok_emb.weight  # weight tying survives the conversion


def test_fast_gpt_draws_the_reference_initial_weights():
    cfg = GPTConfig(13, 10, 16, 2, 2)
    torch.manual_seed(3)
    ref = GPT(cfg)
    torch.manual_seed(3)
    fast = FastGPT(cfg)
    assert all(torch.equal(fast.state_dict()[k], v) for k, v in fast_state_dict(ref.state_dict()).items())


def test_optimizer_state_converts_to_the_state_of_the_reference_trained_alike():
    """Two AdamW steps on the fast twin and on the reference from the same weights and batches:
    the fast optimizer's state, converted, is the reference optimizer's state."""
    from attnlab.fast import reference_optimizer_state
    from attnlab.training import TrainConfig, make_optimizer

    ref, fast = _pair()
    cfg = TrainConfig(fused_optimizer=False)
    opts = [make_optimizer(m, cfg) for m in (ref, fast)]
    for _ in range(2):
        idx = torch.randint(0, 13, (2, 10))
        for model, opt in zip((ref, fast), opts, strict=True):
            model(idx, idx)[1].backward()
            opt.step()
            opt.zero_grad()
    converted = reference_optimizer_state(opts[1], fast)
    want = opts[0].state_dict()
    assert [g["params"] for g in converted["param_groups"]] == [g["params"] for g in want["param_groups"]]
    for i, entry in want["state"].items():
        for key, value in entry.items():
            torch.testing.assert_close(converted["state"][i][key], value, atol=1e-5, rtol=1e-4)
    fresh = make_optimizer(to_reference(fast), cfg)
    fresh.load_state_dict(converted)  # loads into an optimizer over the reference twin
    with pytest.raises(ValueError, match="not the given module's"):
        reference_optimizer_state(opts[0], fast)


def test_a_model_with_a_swapped_module_or_a_hook_has_no_fast_twin():
    """A learner's module swapped into a GPT (the capstone ladder does this) or a hook on any
    submodule would silently vanish in a twin built from the config: refused, not converted."""
    from attnlab.fast import has_fast_twin
    from attnlab.nn import FeedForward

    class MyFFN(FeedForward):  # a learner's subclass: same parameters, maybe another forward
        pass

    ref, _ = _pair()
    assert has_fast_twin(ref) and has_fast_twin(ref.blocks[0]) and has_fast_twin(ref.blocks[0].self_attn)
    ref.blocks[1].ffn = MyFFN(16, 64, activation="gelu")
    assert not has_fast_twin(ref)
    with pytest.raises(TypeError, match="submodule of another class or a hook"):
        to_fast(ref)
    hooked, _ = _pair()
    handle = hooked.blocks[0].self_attn.register_forward_hook(lambda *a: None)
    assert not has_fast_twin(hooked)
    handle.remove()
    assert has_fast_twin(hooked)
    assert not has_fast_twin(torch.nn.Linear(2, 2))


def test_shared_weights_are_one_copy_that_both_models_see():
    """After share_weights the reference's parameters are views of its twin's: an optimizer step
    on the twin changes the reference alike (no copy back), and no second copy is kept."""
    from attnlab.fast import share_weights

    ref, fast = _pair()
    params = list(ref.parameters())
    share_weights(ref, fast)
    assert [id(p) for p in ref.parameters()] == [id(p) for p in params]  # the same Parameter objects
    qkv = fast.blocks[0].self_attn.qkv.weight
    assert ref.blocks[0].self_attn.w_k.weight.data_ptr() == qkv.data_ptr() + 16 * 16 * qkv.element_size()
    assert ref.tok_emb.weight.data_ptr() == fast.tok_emb.weight.data_ptr()
    opt = torch.optim.AdamW(fast.parameters(), lr=0.1)
    idx = torch.randint(0, 13, (2, 10))
    fast(idx, idx)[1].backward()
    opt.step()
    torch.testing.assert_close(ref(idx)[0], fast(idx)[0], **TOL)
    assert torch.equal(ref.blocks[1].self_attn.w_v.weight, fast.blocks[1].self_attn.qkv.weight[32:])
