"""Position-wise feed-forward network (Vaswani et al. 2017, §3.3, Eq. 2).

``FFN(x) = max(0, x W_1 + b_1) W_2 + b_2``: the same two-layer MLP applied to every
position independently (equivalently, two convolutions with kernel size 1). The inner width
is ``d_ff`` (2048 for d_model = 512 in the paper). GPT-2 uses GELU instead of ReLU.
"""

from __future__ import annotations

from typing import Callable

import torch.nn.functional as F
from torch import Tensor, nn

from ._checks import check_last_dim, check_min_rank

_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": F.relu, "gelu": F.gelu}


class FeedForward(nn.Module):
    """Position-wise FFN, ``(..., d_model) -> (..., d_model)`` (Vaswani et al. 2017, Eq. 2).

    Args:
        d_model: input/output width.
        d_ff: hidden width.
        activation: ``"relu"`` (paper) or ``"gelu"`` (GPT-2; exact erf form).
        dropout: dropout on the hidden activations. NOT in the paper (the paper's residual
            dropout is applied by the blocks); PyTorch's Transformer layers and tensor2tensor
            do it. Default 0.
        bias: whether the linear layers have biases.

    Attributes:
        w_1: ``nn.Linear(d_model, d_ff)``; w_2: ``nn.Linear(d_ff, d_model)``.
        act: the activation function (``F.relu`` or ``F.gelu``); activation: its name.

    Raises:
        ValueError: unknown activation; in ``forward``, last dimension not ``d_model``.
    """

    def __init__(
        self, d_model: int, d_ff: int, activation: str = "relu", dropout: float = 0.0, bias: bool = True
    ) -> None:
        super().__init__()
        if activation not in _ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(_ACTIVATIONS)}, got {activation!r}.")
        self.d_model, self.activation = d_model, activation
        self.w_1 = nn.Linear(d_model, d_ff, bias=bias)
        self.w_2 = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.act = _ACTIVATIONS[activation]

    def forward(self, x: Tensor) -> Tensor:
        """``x: (..., d_model) -> (..., d_model)``, each position independently."""
        check_min_rank(x, "x", 1, "(..., d_model)")
        check_last_dim(x, "x", self.d_model)
        h = self.dropout(self.act(self.w_1(x)))  # (..., d_ff)
        return self.w_2(h)  # (..., d_model)
