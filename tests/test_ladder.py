"""attnlab.ladder: the capstone's rungs, their training, and learner pieces plugged in (tiny, CPU, seeded)."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnlab.ladder import (RUNGS, Components, LadderConfig, attention_module, build_rung, check_components,
                            leaks_future, train_ladder)
from attnlab.nn import GPT, FeedForward, MultiHeadAttention, scaled_dot_product_attention

V = 11
CFG = LadderConfig(V, block_size=8, d_model=16, n_heads=2, n_layers=2, steps=6, batch_size=4,
                   warmup_iters=2, eval_interval=3, eval_iters=2, seed=3)


@pytest.fixture(scope="module")
def data():
    gen = torch.Generator().manual_seed(0)
    stream = torch.randint(V, (400,), generator=gen)
    stream[1::2] = (stream[::2] + 1) % V  # every second token follows from the one before: learnable
    return stream[:300], stream[300:]


def no_mask_attention(q, k, v, mask=None):
    """Attention that ignores the mask (the causal mask forgotten)."""
    w = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(-1)
    return w @ v, w


def unscaled_attention(q, k, v, mask=None):
    """Attention without the 1/sqrt(d_k) scale."""
    s = q @ k.transpose(-2, -1)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = s.softmax(-1)
    return w @ v, w


def einsum_attention(q, k, v, mask=None):
    """Correct attention written differently (einsum, finite fill)."""
    s = torch.einsum("...ld,...sd->...ls", q, k) / q.shape[-1] ** 0.5
    if mask is not None:
        s = torch.where(mask, s, torch.finfo(s.dtype).min)
    w = torch.softmax(s, dim=-1)
    return torch.einsum("...ls,...sd->...ld", w, v), w


def pre_ln_block(x, self_attn, ffn, norm1, norm2, norm_first):
    h = x + self_attn(norm1(x))[0]
    return h + ffn(norm2(h))


def post_ln_block(x, self_attn, ffn, norm1, norm2, norm_first):
    h = norm1(x + self_attn(x)[0])
    return norm2(h + ffn(h))


class ReluFFN(FeedForward):
    def forward(self, x):
        return self.w_2(F.relu(self.w_1(x)))


def test_uniform_rung_scores_ln_vocab(data):
    result = train_ladder(*data, CFG, rungs=("uniform",))["uniform"]
    assert result.n_params == 0
    assert abs(result.val_loss - math.log(V)) < 1e-6 and abs(result.train_loss - math.log(V)) < 1e-6


@pytest.mark.parametrize("name", RUNGS)
def test_every_rung_gives_causal_next_token_logits(name):
    model = build_rung(name, CFG)
    idx = torch.randint(V, (3, CFG.block_size))
    logits, loss = model(idx, idx)
    assert tuple(logits.shape) == (3, CFG.block_size, V) and loss.dim() == 0
    assert not leaks_future(model, V, CFG.block_size)
    assert model.config.block_size == CFG.block_size


def test_the_stack_is_attnlab_gpt_and_the_rungs_grow():
    torch.manual_seed(CFG.seed)
    ref = GPT(CFG.gpt_config())
    stack = build_rung("stack", CFG)
    assert type(stack) is GPT
    idx = torch.randint(V, (2, CFG.block_size))
    assert torch.equal(stack(idx)[0], ref(idx)[0])
    sizes = [sum(p.numel() for p in build_rung(n, CFG).parameters()) for n in RUNGS]
    assert sizes[0] == 0 and sizes[2] == sizes[3] < sizes[4] < sizes[5] < sizes[6]


def test_same_seed_same_batches_same_losses(data):
    a = train_ladder(*data, CFG, rungs=("bigram", "multi_head"))
    b = train_ladder(*data, CFG, rungs=("bigram", "multi_head"))
    assert [r.val_loss for r in a.values()] == [r.val_loss for r in b.values()]
    assert a["bigram"].val_loss != a["multi_head"].val_loss
    assert all(len(r.history["val"]) == 3 for r in a.values())  # steps 0, 3 and the final evaluation


def test_a_rung_trains_on_a_fixed_thread_count_whatever_the_caller_set(data):
    """The ladder fixes torch's thread count for the whole run (no load-driven switching), so the
    lesson's comparisons come out the same on a busy and a quiet machine: the rung's losses are equal
    with 1 or 2 threads set by the caller, and the caller's count is restored."""
    assert CFG.train_config().threads == 1
    before = torch.get_num_threads()
    runs = []
    try:
        for outer in (1, 2):
            torch.set_num_threads(outer)
            runs.append(train_ladder(*data, CFG, rungs=("residual_ln",))["residual_ln"].history["val"])
            assert torch.get_num_threads() == outer
        torch.set_num_threads(2)
        assert LadderConfig(V, num_threads=None).train_config().threads == 2
    finally:
        torch.set_num_threads(before)
    assert runs[0] == runs[1]


def test_training_lowers_the_loss(data):
    cfg = LadderConfig(V, block_size=8, d_model=16, n_heads=2, n_layers=1, steps=40, batch_size=8,
                       learning_rate=1e-2, eval_interval=40, eval_iters=2, seed=0)
    res = train_ladder(*data, cfg, rungs=("uniform", "residual_ln"))
    assert res["residual_ln"].val_loss < res["uniform"].val_loss - 0.3


def test_correct_learner_pieces_give_the_reference_losses(data):
    correct = Components(attention=einsum_attention, ffn=FeedForward, block_forward=pre_ln_block)
    assert check_components(correct) == []
    assert check_components(Components(mha=attention_module(scaled_dot_product_attention))) == []
    rungs = ("multi_head", "ffn", "stack")
    ref = train_ladder(*data, CFG, rungs=rungs)
    mine = train_ladder(*data, CFG, correct, rungs=rungs)
    for name in rungs:
        assert abs(mine[name].val_loss - ref[name].val_loss) < 1e-4, name
        assert not mine[name].leaks_future


def test_attention_module_matches_multi_head_attention():
    torch.manual_seed(0)
    ref = MultiHeadAttention(12, 3)
    mine = attention_module(scaled_dot_product_attention)(12, 3)
    mine.load_state_dict(ref.state_dict())
    x = torch.randn(2, 5, 12)
    for causal in (True, False):
        assert torch.allclose(mine(x, is_causal=causal)[0], ref(x, is_causal=causal)[0], atol=1e-6)
    with pytest.raises(ValueError, match="self-attention only"):
        mine(x, x)


def test_attention_without_the_causal_mask_is_detected(data):
    bad = Components(attention=no_mask_attention)
    problems = check_components(bad)
    assert any("with the causal mask" in p for p in problems)
    assert not any("without a mask" in p for p in problems)  # without a mask it is right
    assert leaks_future(build_rung("multi_head", CFG, bad), V, CFG.block_size)
    result = train_ladder(*data, CFG, bad, rungs=("multi_head",))["multi_head"]
    assert result.leaks_future


def test_attention_without_the_scale_is_detected_and_changes_the_losses(data):
    bad = Components(attention=unscaled_attention)
    problems = check_components(bad)
    assert any("without a mask" in p for p in problems) and any("with the causal mask" in p for p in problems)
    cfg = LadderConfig(V, block_size=8, d_model=16, n_heads=2, n_layers=1, steps=30, batch_size=8,
                       learning_rate=1e-2, eval_interval=30, eval_iters=2, seed=0)
    ref = train_ladder(*data, cfg, rungs=("multi_head",))["multi_head"]
    mine = train_ladder(*data, cfg, bad, rungs=("multi_head",))["multi_head"]
    assert not mine.leaks_future
    # a small model starts with tiny scores, where the scale matters little: the losses move, a bit
    assert mine.val_loss != ref.val_loss


def test_wrong_ffn_and_block_are_detected():
    assert any(p.startswith("ffn") for p in check_components(Components(ffn=ReluFFN)))
    assert any(p.startswith("block_forward") for p in check_components(Components(block_forward=post_ln_block)))

    def broken(x, *args):
        raise RuntimeError("not written yet")
    assert any("raised RuntimeError" in p for p in check_components(Components(block_forward=broken)))


def test_a_piece_with_other_parameters_is_refused():
    class OneMatrix(nn.Module):
        def __init__(self, d_model, n_heads, bias=True):
            super().__init__()
            self.qkv = nn.Linear(d_model, 3 * d_model)

    with pytest.raises(ValueError, match="parameters of the reference"):
        build_rung("multi_head", CFG, Components(mha=OneMatrix))
    with pytest.raises(ValueError, match="unknown rung"):
        build_rung("transformer", CFG)
