"""The worked examples of the course notes (seed 000) reproduce with attnlab.nn."""

import math

import torch

from attnlab.nn import causal_mask, scaled_dot_product_attention


def test_two_token_worked_example():
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    k = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    v = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    out, w = scaled_dot_product_attention(q, k, v)
    # scores QKᵀ = [[1, 1], [0, 1]], scaled by 1/√2; row 2: softmax([0, 0.7071]) ≈ [0.330, 0.670]
    torch.testing.assert_close(w, torch.tensor([[0.5, 0.5], [0.330, 0.670]]), atol=1e-3, rtol=0)
    torch.testing.assert_close(out, torch.tensor([[2.00, 3.00], [2.34, 3.34]]), atol=5e-3, rtol=0)


def test_three_by_one_practice_problem():
    q = torch.tensor([[2.0], [0.0], [1.0]])
    k = torch.tensor([[1.0], [3.0], [-1.0]])
    v = torch.tensor([[10.0], [20.0], [30.0]])
    out, w = scaled_dot_product_attention(q, k, v)  # d_k = 1: √d_k = 1, no scaling
    e = math.exp
    row1 = torch.tensor([e(2), e(6), e(-2)]) / (e(2) + e(6) + e(-2))
    row3 = torch.tensor([e(1), e(3), e(-1)]) / (e(1) + e(3) + e(-1))
    torch.testing.assert_close(w, torch.stack([row1, torch.full((3,), 1 / 3), row3]))
    assert abs(out[1].item() - 20.0) < 1e-5  # q = 0: uniform weights, the mean of V
    torch.testing.assert_close(out[:, 0], torch.stack([row1 @ v[:, 0], torch.tensor(20.0), row3 @ v[:, 0]]))


def test_four_by_four_causal_mask():
    expected_additive = torch.tensor([
        [0.0, -math.inf, -math.inf, -math.inf],
        [0.0, 0.0, -math.inf, -math.inf],
        [0.0, 0.0, 0.0, -math.inf],
        [0.0, 0.0, 0.0, 0.0],
    ])
    m = causal_mask(4)
    additive = torch.zeros(4, 4).masked_fill(~m, -math.inf)
    assert torch.equal(additive, expected_additive)
    _, w = scaled_dot_product_attention(torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 3), m)
    assert torch.all(w.triu(diagonal=1) == 0)  # future positions get exactly zero probability
