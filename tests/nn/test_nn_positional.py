"""Sinusoidal, learned and rotary positions; permutation equivariance of attention."""

import math

import pytest
import torch

from attnlab.nn import (
    LearnedPositionalEmbedding,
    MultiHeadAttention,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    relative_shift_matrix,
    sinusoidal_encoding,
)


def test_sinusoidal_formula_values():
    pe = sinusoidal_encoding(50, 8)
    assert pe.shape == (50, 8) and pe.dtype == torch.float32
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0] * 4))  # sin 0, cos 0
    pos, i = 7, 2  # columns 4 (sin) and 5 (cos), frequency 1 / 10000^(4/8) = 0.01
    assert pe[pos, 2 * i].item() == pytest.approx(math.sin(pos / 10000 ** (2 * i / 8)), abs=1e-6)
    assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(pos * 0.01), abs=1e-6)
    assert pe[1, 0].item() == pytest.approx(math.sin(1.0), abs=1e-6)  # first pair: wavelength 2π


def test_sinusoidal_relative_shift_is_a_fixed_rotation():
    d, k = 16, 5
    pe = sinusoidal_encoding(40, d)
    m = relative_shift_matrix(k, d)
    torch.testing.assert_close(pe[k:] , pe[:-k] @ m.T, atol=1e-4, rtol=1e-4)  # every p: PE[p+k] = M_k PE[p]
    torch.testing.assert_close(m @ m.T, torch.eye(d), atol=1e-5, rtol=0)  # orthogonal: a rotation
    # the dot product of two positions depends only on their distance
    torch.testing.assert_close(pe[3] @ pe[3 + k], pe[20] @ pe[20 + k], atol=1e-4, rtol=0)


def test_sinusoidal_bad_args():
    with pytest.raises(ValueError, match="positive even int"):
        sinusoidal_encoding(4, 7)


def test_positional_modules_add_and_check_length():
    x = torch.zeros(2, 5, 8)
    sin = SinusoidalPositionalEncoding(8, max_len=10)
    torch.testing.assert_close(sin(x, offset=3)[0], sinusoidal_encoding(10, 8)[3:8])
    assert len(list(sin.parameters())) == 0
    learned = LearnedPositionalEmbedding(6, 8)
    torch.testing.assert_close(learned(x)[1], learned.weight[:5])
    with pytest.raises(ValueError, match=r"positions 2\.\.6 exceed max_len=6.*crop"):
        learned(x, offset=2)
    with pytest.raises(ValueError, match="exceed max_len=10"):
        sin(torch.zeros(1, 11, 8))
    with pytest.raises(ValueError, match="last dimension d_model=8"):
        learned(torch.zeros(1, 3, 4))


def test_self_attention_without_positions_is_permutation_equivariant():
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 6, 8)
    perm = torch.randperm(6)
    out, _ = mha(x)
    out_perm, _ = mha(x[:, perm])
    torch.testing.assert_close(out_perm, out[:, perm])


def test_positions_make_attention_order_sensitive():
    mha = MultiHeadAttention(8, 2).eval()
    pe = SinusoidalPositionalEncoding(8, max_len=16)
    x = torch.randn(1, 6, 8)
    perm = torch.tensor([1, 0, 2, 3, 4, 5])  # swap the first two tokens
    out, _ = mha(pe(x))
    out_perm, _ = mha(pe(x[:, perm]))
    assert not torch.allclose(out_perm, out[:, perm], atol=1e-4)


def test_rotary_scores_depend_only_on_relative_position():
    rope = RotaryEmbedding(8)
    q, k = torch.randn(8), torch.randn(8)

    def score(m, n):
        qm = rope(q.expand(1, 8), offset=m)[0]
        kn = rope(k.expand(1, 8), offset=n)[0]
        return qm @ kn

    torch.testing.assert_close(score(3, 1), score(10, 8), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(rope(q[None], offset=0)[0], q)  # position 0: no rotation
    assert not torch.allclose(score(3, 1), score(3, 2))
    x = torch.randn(2, 2, 5, 8)
    torch.testing.assert_close(rope(x).norm(dim=-1), x.norm(dim=-1))  # rotations keep norms


def test_rotary_errors():
    with pytest.raises(ValueError, match="even dim"):
        RotaryEmbedding(5)
    with pytest.raises(ValueError, match="last dimension dim=8"):
        RotaryEmbedding(8)(torch.randn(3, 6))
