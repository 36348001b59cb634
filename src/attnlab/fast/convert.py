"""Weights between ``attnlab.nn`` (the reference) and ``attnlab.fast`` (the same model, faster).

The two layouts differ in one place: the reference's self-attention holds ``w_q``, ``w_k``,
``w_v`` as three ``Linear(d_model, d_model)``; the fast one holds them stacked row-wise in one
``qkv = Linear(d_model, 3 d_model)`` (weight ``[W_Q; W_K; W_V]``: ``(3 d_model, d_model)``, bias
``(3 d_model,)``; the layout of nanoGPT's ``c_attn``; the projections are Vaswani et al. 2017,
§3.2.2). Every other key is the same. So:

=====================================  ==========================================
reference key                          fast key
=====================================  ==========================================
``<p>self_attn.w_q.weight`` (d, d)     ``<p>self_attn.qkv.weight[0:d]``
``<p>self_attn.w_k.weight`` (d, d)     ``<p>self_attn.qkv.weight[d:2d]``
``<p>self_attn.w_v.weight`` (d, d)     ``<p>self_attn.qkv.weight[2d:3d]``
(biases likewise)                      ``<p>self_attn.qkv.bias``
anything else                          the same key
=====================================  ==========================================

For a bare attention module the prefix ``<p>self_attn.`` is empty (``w_q.weight`` <->
``qkv.weight``). :func:`to_fast` and :func:`to_reference` build the twin of a module with the
same weights, on the same device and dtype.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlab.nn.blocks import DecoderBlock
from attnlab.nn.gpt import GPT
from attnlab.nn.mha import MultiHeadAttention

from .state_dict import _PARTS, fast_state_dict, reference_state_dict

__all__ = ["fast_state_dict", "reference_state_dict", "has_fast_twin", "to_fast", "to_reference",
           "share_weights", "reference_optimizer_state"]

def _like(source: nn.Module, target: nn.Module) -> nn.Module:
    p = next(source.parameters())
    return target.to(device=p.device, dtype=p.dtype).train(source.training)


def _build(make):
    with torch.random.fork_rng(devices=[]):  # building draws initial weights: leave the caller's RNG alone
        return make()


def _plain(module: nn.Module) -> bool:
    """No hooks on ``module`` or any submodule: a twin would not call them."""
    hooks = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks", "_state_dict_hooks",
             "_load_state_dict_pre_hooks")
    return all(not getattr(m, h, None) for m in module.modules() for h in hooks)


def _reference_block(block: nn.Module) -> bool:
    from attnlab.nn.ffn import FeedForward

    return (type(block) is DecoderBlock and block.cross_attn is None and type(block.self_attn) is MultiHeadAttention
            and type(block.ffn) is FeedForward and type(block.norm1) is nn.LayerNorm and type(block.norm3) is nn.LayerNorm)


def has_fast_twin(module: nn.Module) -> bool:
    """Whether :func:`to_fast` gives a twin that computes exactly what ``module`` computes: an
    ``attnlab.nn`` ``GPT``, GPT block or ``MultiHeadAttention`` of exactly those classes, built of
    the reference's own submodules (none swapped for another class, e.g. a learner's), with no
    hooks registered on it or its submodules. (Shapes: any; this looks at classes and hooks only.)"""
    if type(module) is GPT:
        return all(_reference_block(b) for b in module.blocks) and _plain(module)
    if type(module) is DecoderBlock:
        return _reference_block(module) and _plain(module)
    return type(module) is MultiHeadAttention and _plain(module)


def to_fast(module: nn.Module) -> nn.Module:
    """The fast twin of a reference module, holding the same weights (copies).

    ``GPT`` -> :class:`attnlab.fast.FastGPT`; ``DecoderBlock`` without cross-attention ->
    :class:`attnlab.fast.FastBlock`; ``MultiHeadAttention`` -> :class:`attnlab.fast.FastSelfAttention`
    (for self-attention). The twin has the reference's device, dtype and train/eval mode.

    Raises:
        TypeError: any other module, including a ``DecoderBlock`` with cross-attention and a
            module for which :func:`has_fast_twin` is False (a swapped submodule, a hook).
    """
    from .attention import FastSelfAttention
    from .model import FastBlock, FastGPT

    if isinstance(module, FastGPT | FastBlock | FastSelfAttention):
        raise TypeError(f"{type(module).__name__} is already an attnlab.fast module.")
    if isinstance(module, GPT | DecoderBlock | MultiHeadAttention) and not (
            isinstance(module, DecoderBlock) and module.cross_attn is not None) and not has_fast_twin(module):
        raise TypeError(f"this {type(module).__name__} has a submodule of another class or a hook; its fast twin "
                        f"would compute something else. Train or run it as it is.")
    if isinstance(module, GPT):
        twin = _build(lambda: FastGPT(module.config))
    elif isinstance(module, DecoderBlock) and module.cross_attn is None:
        a, f = module.self_attn, module.ffn
        twin = _build(lambda: FastBlock(module.d_model, a.n_heads, f.w_1.out_features, a.dropout, f.activation,
                                        module.norm_first, a.w_o.bias is not None, module.norm1.eps))
        twin.self_attn.rotary = a.rotary
    elif isinstance(module, MultiHeadAttention):
        twin = _build(lambda: FastSelfAttention(module.d_model, module.n_heads, module.w_o.bias is not None,
                                                module.dropout))
        twin.rotary = module.rotary
    else:
        raise TypeError(f"no fast twin for {type(module).__name__}: attnlab.fast has GPT, DecoderBlock "
                        f"(without cross-attention) and MultiHeadAttention (self-attention).")
    twin.load_state_dict(fast_state_dict(module.state_dict()))
    return _like(module, twin)


def to_reference(module: nn.Module) -> nn.Module:
    """The reference (``attnlab.nn``) twin of a fast module, holding the same weights (copies):
    ``qkv (3 d_model, d_model)`` split into ``w_q``, ``w_k``, ``w_v (d_model, d_model)``.

    Raises:
        TypeError: a module that is not an ``attnlab.fast`` module.
    """
    from attnlab.nn import GPT as RefGPT

    from .attention import FastSelfAttention
    from .model import FastBlock, FastGPT

    if isinstance(module, FastGPT):
        twin = _build(lambda: RefGPT(module.config))
    elif isinstance(module, FastBlock):
        a, f = module.self_attn, module.ffn
        twin = _build(lambda: DecoderBlock(module.d_model, a.n_heads, f.w_1.out_features, a.dropout, f.activation,
                                           module.norm_first, cross_attention=False,
                                           bias=a.w_o.bias is not None, layer_norm_eps=module.norm1.eps))
        twin.self_attn.rotary = a.rotary
    elif isinstance(module, FastSelfAttention):
        twin = _build(lambda: MultiHeadAttention(module.d_model, module.n_heads, module.w_o.bias is not None,
                                                 module.dropout))
        twin.rotary = module.rotary
    else:
        raise TypeError(f"{type(module).__name__} is not an attnlab.fast module (FastGPT, FastBlock, FastSelfAttention).")
    twin.load_state_dict(reference_state_dict(module.state_dict()))
    return _like(module, twin)


def share_weights(reference: nn.Module, fast: nn.Module) -> None:
    """Make every parameter of ``reference`` a view of its twin's storage in ``fast``.

    After ``share_weights(ref, to_fast(ref))`` the two hold one copy of the weights: ``w_q``,
    ``w_k``, ``w_v`` (``(d_model, d_model)`` each) are the three row blocks of the packed
    ``qkv (3 d_model, d_model)``, every other parameter is the twin's tensor. Training the twin in
    place (an optimizer's step) therefore updates the reference too, with no copy back and no
    second copy in memory. The reference's ``Parameter`` objects stay the same (their ``.data``
    changes), so anything holding them (an optimizer, a hook) keeps working.

    Raises:
        KeyError: ``fast`` is not the twin of ``reference`` (a parameter without its counterpart).
    """
    twin = dict(fast.named_parameters())
    with torch.no_grad():
        for name, p in reference.named_parameters():
            prefix, _, leaf = name.rpartition(".")
            base, _, part = prefix.rpartition(".") if "." in prefix else ("", "", prefix)
            if part in _PARTS:
                packed = twin[f"{base}.qkv.{leaf}" if base else f"qkv.{leaf}"]
                rows = packed.shape[0] // 3
                i = _PARTS.index(part)
                p.data = packed.data[i * rows:(i + 1) * rows]  # (d_model, ...): a view, no copy
            else:
                p.data = twin[name].data


def reference_optimizer_state(optimizer: torch.optim.Optimizer, module: nn.Module) -> dict:
    """``optimizer.state_dict()`` of an optimizer over a fast ``module``, in the reference layout.

    Each packed ``qkv`` parameter becomes three parameters (``w_q``, ``w_k``, ``w_v``) in its
    place, and every per-parameter tensor of its state (AdamW's ``exp_avg``, ``exp_avg_sq``) is
    split into the same three row blocks (``(3 d_model, d_model)`` -> ``(d_model, d_model)`` x 3);
    scalars (``step``) are copied. The result loads into
    the same kind of optimizer, with the same groups, over the reference twin's parameters in
    ``parameters()`` order (what :func:`attnlab.training.make_optimizer` builds).

    Raises:
        ValueError: the optimizer holds a parameter that is not ``module``'s.
    """
    names = {id(p): n for n, p in module.named_parameters()}
    saved = optimizer.state_dict()
    state: dict[int, dict] = {}
    groups = []
    index = 0
    for group, saved_group in zip(optimizer.param_groups, saved["param_groups"], strict=True):
        ids = []
        for p, old in zip(group["params"], saved_group["params"], strict=True):
            if id(p) not in names:
                raise ValueError("the optimizer updates a parameter that is not the given module's.")
            entry = saved["state"].get(old)
            packed = names[id(p)].rpartition(".")[0].endswith("qkv")
            for part in range(3 if packed else 1):
                if entry is not None:
                    state[index] = {k: (v.chunk(3)[part].clone() if packed and torch.is_tensor(v) and v.dim() else v)
                                    for k, v in entry.items()}
                ids.append(index)
                index += 1
        groups.append({**saved_group, "params": ids})
    return {"state": state, "param_groups": groups}
