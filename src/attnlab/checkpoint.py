"""Checkpoints of a trained model: config, weights, optimizer state, step and extras in one file.

A checkpoint is a ``torch.save`` dict tagged ``format = CHECKPOINT_FORMAT``, written atomically
(to a temporary file, then renamed) and read with ``torch.load(weights_only=True)`` (no pickled
code runs on loading). A :class:`attnlab.fast.FastGPT` is stored as the ``attnlab.nn.GPT`` it
equals, so there is one format whichever twin was trained. :mod:`attnlab.training` re-exports
both functions.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import torch

__all__ = ["CHECKPOINT_FORMAT", "save_checkpoint", "load_checkpoint"]

CHECKPOINT_FORMAT = "attnlab-checkpoint-v1"


def save_checkpoint(path: str | os.PathLike, model: torch.nn.Module,
                    optimizer: torch.optim.Optimizer | None = None, step: int = 0,
                    extra: dict | None = None) -> Path:
    """Write model config + weights (+ optimizer state, step, extra) to ``path``; returns the path.

    The model must have a dataclass ``config`` (e.g. ``GPTConfig``) so :func:`load_checkpoint`
    can rebuild it. Parent folders are created. A :class:`attnlab.fast.FastGPT` is stored as the
    ``attnlab.nn.GPT`` it equals (reference ``state_dict`` keys); ``optimizer`` state is stored as
    it is (it fits an optimizer over ``model``'s parameters).
    """
    config = getattr(model, "config", None)
    if not dataclasses.is_dataclass(config) or isinstance(config, type):  # asdict needs an instance
        raise TypeError(f"save_checkpoint needs a model with a dataclass .config, got {type(model).__name__}.")
    from attnlab.fast import FastGPT, reference_state_dict

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    fast = isinstance(model, FastGPT)  # stored in the reference layout: one checkpoint format
    payload = {
        "format": CHECKPOINT_FORMAT,
        "model_class": "GPT" if fast else type(model).__name__,
        "model_config": dataclasses.asdict(config),
        "state_dict": reference_state_dict(state) if fast else state,
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "step": int(step),
        "extra": extra or {},
    }
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(payload, tmp)
    tmp.replace(path)  # atomic: a crash mid-write never leaves a half checkpoint at `path`
    return path


def load_checkpoint(path: str | os.PathLike, model: torch.nn.Module | None = None,
                    optimizer: torch.optim.Optimizer | None = None, map_location: str = "cpu"):
    """Load a checkpoint written by :func:`save_checkpoint`.

    Args:
        path: checkpoint file.
        model: load the weights into this model (an ``attnlab.nn.GPT`` or its
            ``attnlab.fast.FastGPT`` twin); if None, build ``attnlab.nn.GPT`` from the stored config.
        optimizer: if given (and the file has optimizer state), restore its state too.
    Returns:
        ``(model, step, extra)``.
    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: the file is not a readable attnlab checkpoint (truncated, corrupt, other
            format) or its weights do not fit ``model``.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"No checkpoint at {path}. Train and call save_checkpoint(path, model) first, or check the path."
        )
    try:
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # pickle/zip errors differ between torch versions
        raise ValueError(
            f"{path} is not a readable checkpoint (truncated or corrupt: {type(err).__name__}). "
            f"Delete it and save the checkpoint again."
        ) from err
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not an attnlab checkpoint (expected format {CHECKPOINT_FORMAT!r}).")
    if model is None:
        if payload["model_class"] != "GPT":
            raise ValueError(f"Cannot rebuild a {payload['model_class']}; pass model= to load_checkpoint.")
        from attnlab.nn import GPT, GPTConfig

        model = GPT(GPTConfig(**payload["model_config"]))
    from attnlab.fast import FastGPT, fast_state_dict

    state = payload["state_dict"]
    try:
        model.load_state_dict(fast_state_dict(state) if isinstance(model, FastGPT) else state)
    except RuntimeError as err:
        raise ValueError(f"The weights in {path} do not fit this model: {err}") from err
    if optimizer is not None and payload["optimizer"] is not None:
        optimizer.load_state_dict(payload["optimizer"])
    return model, payload["step"], payload["extra"]
