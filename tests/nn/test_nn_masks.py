"""causal_mask, padding_mask, combine_masks."""

import pytest
import torch

from attnlab.nn import causal_mask, combine_masks, padding_mask


def test_causal_square_is_lower_triangular():
    m = causal_mask(4)
    assert m.dtype == torch.bool and m.shape == (4, 4)
    i, j = torch.meshgrid(torch.arange(4), torch.arange(4), indexing="ij")
    assert torch.equal(m, j <= i)


def test_causal_rectangular_aligns_last_query_with_last_key():
    m = causal_mask(2, 5)  # 3 cached keys + 2 new queries
    expected = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    assert torch.equal(m, expected)
    assert torch.equal(causal_mask(2, 5), causal_mask(5)[-2:])


def test_causal_bad_sizes_raise():
    with pytest.raises(ValueError, match=r"S >= L.*L=3, S=2"):
        causal_mask(3, 2)
    with pytest.raises(ValueError, match="L >= 1"):
        causal_mask(0)


def test_padding_mask():
    m = padding_mask(torch.tensor([3, 1]), 4)
    assert torch.equal(m, torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0]], dtype=torch.bool))


def test_padding_mask_bad_lengths():
    with pytest.raises(ValueError, match=r"1\.\.S=4.*\[5, 1\]"):
        padding_mask([5, 1], 4)
    with pytest.raises(ValueError, match=r"lengths must have 1 dimensions \(B,\)"):
        padding_mask(torch.tensor([[1, 2]]), 4)
    with pytest.raises(TypeError, match="integers"):
        padding_mask(torch.tensor([1.0, 2.0]), 4)


def test_combine_masks_broadcasts_and_ignores_none():
    pad = padding_mask([3, 2], 3)  # (B, S)
    m = combine_masks(None, causal_mask(3), pad[:, None, :])  # (B, L, S)
    assert m.shape == (2, 3, 3)
    assert torch.equal(m[1], torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 0]], dtype=torch.bool))
    assert combine_masks(None, None) is None


def test_combine_masks_errors():
    with pytest.raises(TypeError, match=r"masks\[1\] must be a bool tensor"):
        combine_masks(causal_mask(3), torch.ones(3, 3))
    with pytest.raises(ValueError, match=r"masks\[1\] of shape \(2, 4\) does not broadcast.*\(3, 3\)"):
        combine_masks(causal_mask(3), padding_mask([4, 2], 4))
