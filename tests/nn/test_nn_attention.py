"""scaled_dot_product_attention: agreement with torch, weight properties, bad input."""

import pytest
import torch
import torch.nn.functional as F

from attnlab.nn import causal_mask, padding_mask, scaled_dot_product_attention


def qkv(B=2, H=3, L=5, S=5, d_k=4, d_v=6):
    return torch.randn(B, H, L, d_k), torch.randn(B, H, S, d_k), torch.randn(B, H, S, d_v)


def test_matches_torch_without_mask():
    q, k, v = qkv(S=7)
    out, _ = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))


def test_matches_torch_causal():
    q, k, v = qkv()
    out, _ = scaled_dot_product_attention(q, k, v, causal_mask(5))
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))


def test_matches_torch_padding_and_causal():
    q, k, v = qkv(L=5, S=5)
    pad = padding_mask([5, 3], 5)  # (B, S)
    mask = causal_mask(5) & pad[:, None, None, :]  # (B, 1, L, S)
    out, w = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    assert torch.all(w[1, :, :, 3:] == 0)  # padded keys get exactly zero weight


def test_weights_rows_sum_to_one_and_masked_exactly_zero():
    q, k, v = qkv(L=4, S=6)
    mask = causal_mask(4, 6)
    _, w = scaled_dot_product_attention(q, k, v, mask)
    assert w.shape == (2, 3, 4, 6)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 4))
    assert torch.all(w[..., ~mask] == 0.0)
    assert torch.all(w[..., mask] > 0.0)


def test_unbatched_and_different_d_v():
    q, k, v = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5, 2)
    out, w = scaled_dot_product_attention(q, k, v)
    assert out.shape == (3, 2) and w.shape == (3, 5)
    torch.testing.assert_close(out, torch.softmax(q @ k.T / 2.0, -1) @ v)


def test_dropout_zero_is_identity_and_positive_changes_output():
    q, k, v = qkv()
    a, _ = scaled_dot_product_attention(q, k, v, dropout_p=0.0)
    b, w = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert not torch.allclose(a, b)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 3, 5))  # returned weights are pre-dropout


def test_fully_masked_row_raises():
    q, k, v = qkv(B=1, H=1, L=3, S=3)
    mask = torch.ones(3, 3, dtype=torch.bool)
    mask[1] = False
    with pytest.raises(ValueError, match=r"1 query row\(s\) with no key.*\(1,\)"):
        scaled_dot_product_attention(q, k, v, mask)


def test_non_bool_mask_raises_type_error():
    q, k, v = qkv()
    with pytest.raises(TypeError, match=r"bool tensor.*got dtype torch.float32.*mask == 0"):
        scaled_dot_product_attention(q, k, v, causal_mask(5).float())


def test_mask_wrong_shape_raises():
    q, k, v = qkv()
    with pytest.raises(ValueError, match=r"mask of shape \(2, 5\) does not broadcast.*pad\[:, None, None, :\]"):
        scaled_dot_product_attention(q, k, v, padding_mask([5, 3], 5))


def test_mismatched_d_k_raises():
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 6), torch.randn(2, 5, 6)
    with pytest.raises(ValueError, match=r"q \(2, 3, 4\) has d_k=4, k \(2, 5, 6\) has d_k=6"):
        scaled_dot_product_attention(q, k, v)


def test_mismatched_k_v_length_raises():
    q, k, v = torch.randn(3, 4), torch.randn(5, 4), torch.randn(6, 4)
    with pytest.raises(ValueError, match=r"same length S.*S=5.*S=6"):
        scaled_dot_product_attention(q, k, v)


def test_rank_one_raises():
    with pytest.raises(ValueError, match=r"q must have at least 2 dimensions.*got shape \(4,\)"):
        scaled_dot_product_attention(torch.randn(4), torch.randn(3, 4), torch.randn(3, 4))


def test_non_tensor_raises_type_error():
    with pytest.raises(TypeError, match="q must be a torch.Tensor, got list"):
        scaled_dot_product_attention([[1.0]], torch.randn(1, 1), torch.randn(1, 1))


def test_dtype_mismatch_raises_type_error():
    q = torch.randn(3, 4)
    with pytest.raises(TypeError, match=r"one floating dtype, got torch.float32, torch.float64, torch.float32"):
        scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(TypeError, match="floating dtype"):
        scaled_dot_product_attention(q.long(), q.long(), q.long())
