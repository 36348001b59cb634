"""Lesson 10: costs and limits: KV-cache bytes, attention score memory and FLOPs."""
from __future__ import annotations

import torch

from ._common import BYTES, Skill, register

_DT = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def _kv_build(rng):
    n_layers = rng.choice([4, 6, 12, 24])  # 2 would make "forget layers" look like "forget K and V"
    d_model = rng.choice([256, 512, 768, 1024])
    n_heads = rng.choice([h for h in (4, 8, 12, 16) if d_model % h == 0])
    L = 32 * rng.randint(2, 64)  # 64 .. 2048 cached positions
    B = rng.randint(1, 8)
    dtype = rng.choice(list(_DT))
    prompt = (f"A decoder with n_layers = {n_layers}, d_model = {d_model}, n_heads = {n_heads} generates with a "
              f"**KV cache** in {dtype} ({BYTES[dtype]} bytes per number). Batch B = {B}, {L} cached positions. How "
              "many **bytes** does the cache hold? (Exact integer.)")
    return prompt, {"n_layers": n_layers, "d_model": d_model, "n_heads": n_heads, "L": L, "B": B, "dtype": dtype}


def _kv(d, *, two=2, layers=True, size=True, heads=1, batch=True, nbytes=None):
    """2 (K and V) · n_layers · B · L · d_model · bytes per number (``nbytes``: another size per number)."""
    return (two * (d["n_layers"] if layers else 1) * (d["B"] if batch else 1) * d["L"] * d["d_model"] * heads
            * ((BYTES[d["dtype"]] if nbytes is None else nbytes) if size else 1))


def _kv_reference(d):
    from attnlab.nn import KVCache, split_heads

    total = 0
    for _ in range(d["n_layers"]):
        cache = KVCache()
        x = torch.empty(d["B"], d["L"], d["d_model"], device="meta", dtype=_DT[d["dtype"]])  # (B, L, d_model)
        k = v = split_heads(x, d["n_heads"])  # (B, H, L, d_k)
        cache.update(k, v)
        total += sum(t.numel() * t.element_size() for t in (cache.k, cache.v))
    return total


register(Skill(
    name="kv_cache_bytes", lesson="10", title="KV-cache size in bytes", kind="int",
    build=_kv_build, solve=_kv, reference=_kv_reference,
    mistakes={
        "kv_forget_factor_two": lambda d: _kv(d, two=1),
        "forget_layers": lambda d: _kv(d, layers=False),
        "bytes_as_numbers": lambda d: _kv(d, size=False),
        "kv_times_heads": lambda d: _kv(d, heads=d["n_heads"]),
        "forget_batch": lambda d: _kv(d, batch=False) if d["B"] > 1 else None,
        "bytes_fixed_float32": lambda d: _kv(d, nbytes=4) if BYTES[d["dtype"]] != 4 else None,
    },
    hints=("For every layer the cache keeps a key and a value vector of width d_model per position and sequence.",
           "bytes = 2 (K and V) · n_layers · B · L · d_model · bytes per number (n_heads cancels: H · d_k = d_model)."),
))


def _mem_build(rng):
    B = rng.randint(1, 8)
    H = rng.choice([4, 6, 8, 12, 16, 20, 32])
    L = 64 * rng.randint(2, 64)  # 128 .. 4096 tokens
    dtype = rng.choice(["float32", "float16"])
    prompt = (f"Self-attention over L = {L} tokens with B = {B}, n_heads = {H}, materialising the attention weights "
              f"in {dtype} ({BYTES[dtype]} bytes each). How many **bytes** do the weights of one layer take?")
    return prompt, {"B": B, "H": H, "L": L, "dtype": dtype}


def _weights_bytes(d, *, heads=True, batch=True, size=True, square=True, nbytes=None):
    """B · H · L · L · bytes per number (``nbytes``: another size per number)."""
    return ((d["B"] if batch else 1) * (d["H"] if heads else 1) * d["L"] * (d["L"] if square else 1)
            * ((BYTES[d["dtype"]] if nbytes is None else nbytes) if size else 1))


def _weights_reference(d):
    from attnlab.nn import scaled_dot_product_attention

    q = torch.empty(d["B"], d["H"], d["L"], 8, device="meta", dtype=_DT[d["dtype"]])  # (B, H, L, d_k)
    _, weights = scaled_dot_product_attention(q, q, q)  # (B, H, L, L)
    return weights.numel() * weights.element_size()


register(Skill(
    name="attention_memory", lesson="10", title="Memory of the L × L attention weights", kind="int",
    build=_mem_build, solve=_weights_bytes, reference=_weights_reference,
    mistakes={
        "scores_forget_heads": lambda d: _weights_bytes(d, heads=False),
        "forget_batch": lambda d: _weights_bytes(d, batch=False) if d["B"] > 1 else None,
        "bytes_as_numbers": lambda d: _weights_bytes(d, size=False),
        "scores_linear_in_length": lambda d: _weights_bytes(d, square=False),
        "bytes_fixed_float32": lambda d: _weights_bytes(d, nbytes=4) if BYTES[d["dtype"]] != 4 else None,
    },
    hints=("The weights hold one number for every (batch, head, query, key) combination.",
           "bytes = B · H · L · L · bytes per number."),
))


def _flops_build(rng):
    B = rng.randint(1, 8)
    H = rng.choice([4, 6, 8, 12, 16])
    L = 64 * rng.randint(2, 32)  # 128 .. 2048 tokens
    d_k = rng.choice([32, 48, 64, 96, 128])
    prompt = (f"Attention with B = {B}, n_heads = {H}, L = S = {L}, d_k = d_v = {d_k}. Count the **FLOPs** of the two "
              "matrix products Q Kᵀ and A V (one multiply-add = 2 FLOPs; ignore scaling and softmax).")
    return prompt, {"B": B, "H": H, "L": L, "d_k": d_k}


def _flops(d, *, per_madd=2, matmuls=2, heads=True, batch=True):
    """matmuls · per_madd · B · H · L · L · d_k."""
    return matmuls * per_madd * (d["B"] if batch else 1) * (d["H"] if heads else 1) * d["L"] * d["L"] * d["d_k"]


def _flops_reference(d):
    from torch.utils.flop_counter import FlopCounterMode

    from attnlab.nn import scaled_dot_product_attention

    q = torch.empty(d["B"], d["H"], d["L"], d["d_k"], device="meta")  # (B, H, L, d_k)
    with FlopCounterMode(display=False) as counter:
        scaled_dot_product_attention(q, q, q)
    return counter.get_total_flops()


register(Skill(
    name="attention_flops", lesson="10", title="FLOPs of attention", kind="int",
    build=_flops_build, solve=_flops, reference=_flops_reference,
    mistakes={
        "flops_forget_factor_two": lambda d: _flops(d, per_madd=1),
        "flops_one_matmul": lambda d: _flops(d, matmuls=1),
        "scores_forget_heads": lambda d: _flops(d, heads=False),
        "forget_batch": lambda d: _flops(d, batch=False) if d["B"] > 1 else None,
        "scores_linear_in_length": lambda d: _flops(d) // d["L"],
    },
    hints=("Each product is (L × d_k)(d_k × L) or (L × L)(L × d_k) per batch element and head.",
           "Each matmul: 2 · B · H · L · L · d_k FLOPs; there are two of them."),
))
