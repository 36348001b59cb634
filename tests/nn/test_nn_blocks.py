"""FeedForward, EncoderBlock and DecoderBlock against torch's Transformer layers."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attnlab.nn import DecoderBlock, EncoderBlock, FeedForward, causal_mask, padding_mask
from nn_helpers import copy_torch_decoder_layer, copy_torch_encoder_layer

D, H, FF = 16, 4, 32


def test_feedforward_is_eq2_position_wise():
    ffn = FeedForward(D, FF)
    x = torch.randn(2, 5, D)
    expected = F.relu(x @ ffn.w_1.weight.T + ffn.w_1.bias) @ ffn.w_2.weight.T + ffn.w_2.bias
    torch.testing.assert_close(ffn(x), expected)
    torch.testing.assert_close(ffn(x)[:, 2], ffn(x[:, 2]))  # each position independently


def test_feedforward_errors():
    with pytest.raises(ValueError, match=r"activation must be one of \['gelu', 'relu'\], got 'tanh'"):
        FeedForward(D, FF, activation="tanh")
    with pytest.raises(ValueError, match="last dimension d_model=16"):
        FeedForward(D, FF)(torch.randn(2, 3, 8))


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_block_matches_torch(norm_first, activation):
    ours = EncoderBlock(D, H, FF, dropout=0.0, activation=activation, norm_first=norm_first).eval()
    theirs = nn.TransformerEncoderLayer(D, H, FF, dropout=0.0, activation=activation, batch_first=True,
                                        norm_first=norm_first).eval()
    copy_torch_encoder_layer(ours, theirs)
    x = torch.randn(2, 5, D)
    pad = padding_mask([5, 3], 5)
    torch.testing.assert_close(ours(x), theirs(x))
    out = ours(x, key_padding_mask=pad)
    ref = theirs(x, src_key_padding_mask=~pad)  # torch: True = padding (not allowed)
    torch.testing.assert_close(out[0], ref[0])
    torch.testing.assert_close(out[1, :3], ref[1, :3])  # torch's fast path may zero padded rows


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_block_matches_torch(norm_first):
    ours = DecoderBlock(D, H, FF, dropout=0.0, norm_first=norm_first).eval()
    theirs = nn.TransformerDecoderLayer(D, H, FF, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    copy_torch_decoder_layer(ours, theirs)
    x, memory = torch.randn(2, 4, D), torch.randn(2, 6, D)
    mem_pad = padding_mask([6, 4], 6)
    tgt_pad = padding_mask([4, 3], 4)
    out = ours(x, memory, key_padding_mask=tgt_pad, memory_key_padding_mask=mem_pad)  # causal by default
    ref = theirs(x, memory, tgt_mask=~causal_mask(4), tgt_key_padding_mask=~tgt_pad,
                 memory_key_padding_mask=~mem_pad)
    torch.testing.assert_close(out, ref)


def test_decoder_block_without_cross_attention_is_gpt_block():
    block = DecoderBlock(D, H, FF, norm_first=True, cross_attention=False).eval()
    assert block.cross_attn is None and block.norm2 is None
    x = torch.randn(2, 5, D)
    h = block.norm1(x)
    sa, _ = block.self_attn(h, is_causal=True)
    y = x + sa
    torch.testing.assert_close(block(x), y + block.ffn(block.norm3(y)))


def test_decoder_block_memory_errors():
    with pytest.raises(ValueError, match=r"memory .* is required .*cross_attention=True"):
        DecoderBlock(D, H, FF)(torch.randn(1, 3, D))
    with pytest.raises(ValueError, match="cross_attention=False"):
        DecoderBlock(D, H, FF, cross_attention=False)(torch.randn(1, 3, D), torch.randn(1, 2, D))


def test_blocks_reject_wrong_width():
    with pytest.raises(ValueError, match=r"x must have last dimension d_model=16, got shape \(1, 3, 12\)"):
        EncoderBlock(D, H, FF)(torch.randn(1, 3, 12))
    with pytest.raises(ValueError, match="x must have 3 dimensions"):
        DecoderBlock(D, H, FF, cross_attention=False)(torch.randn(3, D))


@pytest.mark.parametrize("norm_first", [False, True])
def test_residual_dropout_active_only_in_training(norm_first):
    block = EncoderBlock(D, H, FF, dropout=0.3, norm_first=norm_first)
    x = torch.randn(2, 5, D)
    block.eval()
    torch.testing.assert_close(block(x), block(x))
    block.train()
    assert not torch.allclose(block(x), block(x))
