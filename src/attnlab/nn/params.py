"""Counting parameters.

Shared (tied) tensors are counted once: ``module.parameters()`` yields each distinct
``Parameter`` object once, so a tied embedding/output matrix appears a single time.
To count a model too big to allocate, build it on the ``meta`` device (shapes only, no
memory)::

    with torch.device("meta"):
        model = GPT(GPTConfig(50257, 1024, 768, 12, 12))
    count_parameters(model)   # 124_439_808
"""

from __future__ import annotations

from torch import nn


def count_parameters(module: nn.Module, trainable_only: bool = False) -> int:
    """Number of scalar parameters in ``module`` (tied parameters counted once).

    Args:
        module: any ``nn.Module`` (may live on the ``meta`` device).
        trainable_only: count only parameters with ``requires_grad=True``.

    Returns:
        int.

    Raises:
        TypeError: if ``module`` is not an ``nn.Module``.
    """
    if not isinstance(module, nn.Module):
        raise TypeError(f"count_parameters expects an nn.Module, got {type(module).__name__}.")
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)
