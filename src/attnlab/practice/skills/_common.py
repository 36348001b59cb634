"""Small helpers shared by the skill modules (number generation, formatting, nn glue)."""
from __future__ import annotations

import math
import random
from typing import Sequence

import torch

from ..core import Either, Skill, register

__all__ = ["Either", "Skill", "register", "ints", "distinct_ints", "show", "f64", "softmax_rows", "meta_count",
           "bias_count", "BYTES"]

BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def ints(rng: random.Random, rows: int, cols: int, lo: int, hi: int) -> list[list[int]]:
    """A rows × cols list of random ints in [lo, hi]."""
    return [[rng.randint(lo, hi) for _ in range(cols)] for _ in range(rows)]


def distinct_ints(rng: random.Random, n: int, lo: int, hi: int) -> list[int]:
    """n different ints in [lo, hi], in random order."""
    return rng.sample(range(lo, hi + 1), n)


def show(value: Sequence) -> str:
    """Inline-code text for a list or matrix, readable both as markdown and as plain text."""
    return f"`{value!r}`".replace("'", "")


def f64(value) -> torch.Tensor:
    """A float64 tensor (exact for the small integers and fractions used in problems)."""
    return torch.tensor(value, dtype=torch.float64)


def softmax_rows(scores, mask=None) -> torch.Tensor:
    """Row-wise softmax of a given (L, S) score matrix, computed by attnlab.nn's attention.

    Q = scores · √S and K = I_S give Q Kᵀ / √d_k = scores exactly (d_k = S), so the
    attention weights returned by ``scaled_dot_product_attention`` are softmax(scores).
    """
    from attnlab.nn import scaled_dot_product_attention

    s = f64(scores)  # (L, S)
    n = s.shape[-1]
    eye = torch.eye(n, dtype=torch.float64)  # (S, S)
    _, weights = scaled_dot_product_attention(s * math.sqrt(n), eye, eye, mask)  # (L, S)
    return weights


def meta_count(factory, key=None) -> tuple[int, torch.nn.Module]:
    """Build ``factory()`` on the meta device (no memory) and count its parameters.

    With a hashable ``key`` the (count, module) pair is memoised, because a check
    recomputes several mistakes from the same module.
    """
    from attnlab.nn import count_parameters

    if key is not None and key in _BUILT:
        return _BUILT[key]
    with torch.device("meta"):
        module = factory()
    result = (count_parameters(module), module)
    if key is not None:
        if len(_BUILT) > 64:
            _BUILT.clear()
        _BUILT[key] = result
    return result


_BUILT: dict = {}


def bias_count(module: torch.nn.Module) -> int:
    """Number of parameters that are biases (names ending in 'bias')."""
    return sum(p.numel() for name, p in module.named_parameters() if name.endswith("bias"))
