"""Helpers shared by the tests in tests/nn."""

import torch


def copy_torch_mha(ours, theirs):
    """Copy ``torch.nn.MultiheadAttention`` weights into our ``MultiHeadAttention``.

    torch stacks the three input projections in ``in_proj_weight`` (3·d_model, d_model) as
    [W_q; W_k; W_v]; ours keeps them as separate ``nn.Linear`` layers.
    """
    d = ours.d_model
    with torch.no_grad():
        for i, lin in enumerate((ours.w_q, ours.w_k, ours.w_v)):
            lin.weight.copy_(theirs.in_proj_weight[i * d:(i + 1) * d])
            lin.bias.copy_(theirs.in_proj_bias[i * d:(i + 1) * d])
        ours.w_o.weight.copy_(theirs.out_proj.weight)
        ours.w_o.bias.copy_(theirs.out_proj.bias)


def copy_linear(ours, theirs):
    with torch.no_grad():
        ours.weight.copy_(theirs.weight)
        if ours.bias is not None:
            ours.bias.copy_(theirs.bias)


def copy_torch_encoder_layer(ours, theirs):
    """torch.nn.TransformerEncoderLayer -> attnlab EncoderBlock (same sublayer order)."""
    copy_torch_mha(ours.self_attn, theirs.self_attn)
    copy_linear(ours.ffn.w_1, theirs.linear1)
    copy_linear(ours.ffn.w_2, theirs.linear2)
    copy_linear(ours.norm1, theirs.norm1)
    copy_linear(ours.norm2, theirs.norm2)


def copy_torch_decoder_layer(ours, theirs):
    """torch.nn.TransformerDecoderLayer -> attnlab DecoderBlock (multihead_attn = cross_attn)."""
    copy_torch_mha(ours.self_attn, theirs.self_attn)
    copy_torch_mha(ours.cross_attn, theirs.multihead_attn)
    copy_linear(ours.ffn.w_1, theirs.linear1)
    copy_linear(ours.ffn.w_2, theirs.linear2)
    for name in ("norm1", "norm2", "norm3"):
        copy_linear(getattr(ours, name), getattr(theirs, name))
