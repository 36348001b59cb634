"""The comparison in benchmarks/nanogpt_order.py rests on two facts, checked here at test size:
attnlab's GPT computes the same loss and gradients as an independent GPT in nanoGPT's layout
holding the same weights, and the nanoGPT-order loop is deterministic for a seed."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def nano():
    sys.path.insert(0, str(BENCH))
    try:
        import nanogpt_order
        yield nanogpt_order
    finally:
        sys.path.remove(str(BENCH))


def test_attnlab_gpt_equals_the_nanogpt_layout_model_on_the_same_weights(nano):
    torch.manual_seed(0)
    ref = nano.NanoLayoutGPT(65, 64, 4, 4, 128)
    ours = nano.to_attnlab(ref, 65)  # asserts equal loss and lm_head gradient itself
    x = torch.randint(0, 65, (2, 64), generator=torch.Generator().manual_seed(1))
    y = torch.roll(x, -1, dims=1)
    l_ref, l_ours = ref(x, y)[1], ours(x, y)[1]
    l_ref.backward()
    l_ours.backward()
    assert torch.allclose(l_ref, l_ours, atol=1e-6)
    d = 128
    g_qkv = ref.transformer["h"][2].attn["c_attn"].weight.grad
    attn = ours.blocks[2].self_attn
    torch.testing.assert_close(torch.cat([attn.w_q.weight.grad, attn.w_k.weight.grad, attn.w_v.weight.grad]),
                               g_qkv, atol=1e-6, rtol=1e-4)
    torch.testing.assert_close(ours.blocks[3].ffn.w_2.weight.grad, ref.transformer["h"][3].mlp["c_proj"].weight.grad,
                               atol=1e-6, rtol=1e-4)
    assert g_qkv.shape == (3 * d, d)


def test_a_wrong_weight_copy_is_caught(nano, monkeypatch):
    torch.manual_seed(0)
    ref = nano.NanoLayoutGPT(65, 64, 4, 4, 128)
    with torch.no_grad():  # swap W_Q and W_K of layer 0 in the reference: the copy must notice
        w = ref.transformer["h"][0].attn["c_attn"].weight
        ours_before = w.clone()
        w[:128], w[128:256] = ours_before[128:256], ours_before[:128]
    model = nano.to_attnlab(ref, 65)  # a faithful copy of the swapped weights still agrees
    with torch.no_grad():
        model.blocks[0].self_attn.w_q.weight.copy_(ours_before[:128])  # now it does not
    x = torch.randint(0, 65, (2, 64), generator=torch.Generator().manual_seed(1))
    assert not torch.allclose(ref(x, x)[1], model(x, x)[1], atol=1e-6)


def test_nanogpt_order_training_is_deterministic(nano):
    data = torch.randint(0, 65, (5000,), generator=torch.Generator().manual_seed(2))
    runs = []
    for _ in range(2):
        torch.manual_seed(3)
        ref = nano.NanoLayoutGPT(65, 64, 4, 4, 128)
        runs.append(nano.train_nanogpt_order(nano.to_attnlab(ref, 65), data[:4000], data[4000:], iters=3))
    assert runs[0]["val_20_batches"] == runs[1]["val_20_batches"]
    assert runs[0]["val_full_split"] == runs[1]["val_full_split"]
