"""Looking inside a trained model, and measuring what attention costs.

* :func:`attention_maps` records every self-attention layer's weights for one input;
  :func:`plot_attention_grid` draws them as a layers × heads grid;
  :func:`head_pattern_scores` / :func:`name_heads` summarise what each head attends to.
* :func:`plot_loss_curves` and :class:`LiveLossPlot` draw the train/val loss history of
  ``attnlab.training.train``.
* :func:`attention_cost_curve` times the explicit attention path (which materialises the
  ``(L, L)`` score matrix) against PyTorch's fused kernel; :func:`plot_attention_cost` draws it.

Shapes: ``maps[layer]`` is ``(B, H, L, L)``; scores are ``(n_layers, n_heads)`` arrays.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

from attnlab.viz import attention_heatmap, to_numpy

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "attention_maps", "plot_attention_grid", "head_pattern_scores", "name_heads",
    "plot_loss_curves", "LiveLossPlot", "attention_cost_curve", "fit_loglog_slope",
    "plot_attention_cost", "score_matrix_bytes",
]


@torch.no_grad()
def attention_maps(model: torch.nn.Module, idx: torch.Tensor) -> list[torch.Tensor]:
    """Run ``model(idx)`` once and return each ``MultiHeadAttention``'s weights, in order.

    Every ``attnlab.nn.MultiHeadAttention`` inside ``model`` is asked for its weights
    (``need_weights=True``, which takes the explicit path) through forward hooks; the model
    itself is not changed and the hooks are removed afterwards.

    Args:
        idx: ``(B, L)`` int64 token ids.
    Returns:
        One ``(B, H, L, S)`` float tensor per attention layer (``S = L`` for self-attention).
    Raises:
        ValueError: if the model contains no ``MultiHeadAttention``.
    """
    from attnlab.nn import MultiHeadAttention

    captured: list[torch.Tensor] = []

    def ask_for_weights(module, args, kwargs):
        return args, {**kwargs, "need_weights": True}

    def keep_weights(module, args, output):
        captured.append(output[1].detach().cpu())  # output = (out, weights (B, H, L, S))

    handles = []
    for module in model.modules():
        if isinstance(module, MultiHeadAttention):
            handles.append(module.register_forward_pre_hook(ask_for_weights, with_kwargs=True))
            handles.append(module.register_forward_hook(keep_weights))
    if not handles:
        raise ValueError(f"{type(model).__name__} contains no attnlab.nn.MultiHeadAttention to inspect.")
    was_training = model.training
    model.eval()
    try:
        model(idx)
    finally:
        for handle in handles:
            handle.remove()
        model.train(was_training)
    return captured


def plot_attention_grid(maps: Sequence[torch.Tensor], tokens: Sequence[str], batch_index: int = 0,
                        names: np.ndarray | None = None, cell: float = 2.8):
    """Draw a ``n_layers × n_heads`` grid of attention heatmaps for one sequence.

    Tick labels are at least 8 pt (each panel grows with the number of tokens so that they do
    not overlap; beyond 40 tokens they are left out) and one colour bar, shared by every panel
    (all use the scale [0, 1]), says what the shades mean.

    Args:
        maps: output of :func:`attention_maps`, each ``(B, H, L, L)``.
        tokens: the L tokens (characters) labelling rows and columns.
        names: optional ``(n_layers, n_heads)`` array of head names put in the titles.
        cell: the smallest side of one panel in inches.
    Returns:
        The matplotlib ``Figure``.
    """
    n_layers, n_heads = len(maps), maps[0].shape[1]
    shown = ["␣" if t == " " else repr(t)[1:-1] if t in "\n\t" else t for t in tokens]  # visible whitespace
    small = len(tokens) <= 40
    size = 9 if len(tokens) <= 16 else 8  # points; readable at notebook width
    cell = max(cell, 0.14 * len(tokens)) if small else cell  # about 10 pt of axis per tick label
    fig, axes = plt.subplots(n_layers, n_heads, figsize=(cell * n_heads + 0.8, cell * n_layers), squeeze=False,
                             layout="constrained")  # room for the shared labels and colour bar
    for layer in range(n_layers):
        for head in range(n_heads):
            ax = axes[layer, head]
            title = f"layer {layer} head {head}"
            if names is not None:
                title += f"\n{names[layer, head]}"
            attention_heatmap(maps[layer][batch_index, head], annotate=False, ax=ax, title=title)
            ax.images[-1].colorbar.remove()
            ax.set_xlabel("")
            ax.set_ylabel("")
            label_x = small and layer == n_layers - 1  # tick labels on the outer edge only
            label_y = small and head == 0
            ax.set_xticks(range(len(tokens)) if label_x else [], labels=shown if label_x else [], fontsize=size, rotation=0)
            ax.set_yticks(range(len(tokens)) if label_y else [], labels=shown if label_y else [], fontsize=size)
            ax.title.set_fontsize(9)
    fig.supxlabel("key (attended to)")
    fig.supylabel("query (attending)")
    fig.colorbar(axes[0, 0].images[-1], ax=axes, shrink=0.6, label="attention weight")
    return fig


def head_pattern_scores(maps: Sequence[torch.Tensor], tokens) -> dict[str, np.ndarray]:
    """Average attention weight each head puts on simple targets, over query positions >= 1.

    Targets: ``previous`` (key i - 1), ``self`` (key i), ``first`` (key 0), ``space`` (keys
    that are ' '), ``newline`` ('\\n'), ``punctuation`` (.,;:!?'-). For the character classes
    a uniform causal head would put (visible such keys) / (i + 1) there; that baseline is
    returned as ``uniform_space`` etc.

    Args:
        maps: ``(B, H, L, L)`` per layer (causal self-attention), from :func:`attention_maps`.
        tokens: a str of L characters (the same text in every batch row), or a list of B such strs.
    Returns:
        name -> ``(n_layers, n_heads)`` array of mean weights (averaged over batch and queries).
    Raises:
        ValueError: if the tokens do not match the maps' batch size or length.
    """
    B, L = maps[0].shape[0], maps[0].shape[-1]
    seqs = [tokens] * B if isinstance(tokens, str) else list(tokens)
    if len(seqs) != B or any(len(t) != L for t in seqs):
        raise ValueError(f"need {B} token sequence(s) of length {L} to match the attention maps, "
                         f"got {len(seqs)} of lengths {[len(t) for t in seqs]}.")
    W = torch.stack([m.float() for m in maps])  # (n_layers, B, H, L, L)
    rows = torch.arange(1, L)  # queries 1..L-1 (query 0 can only see itself)
    scores = {
        "previous": W[..., rows, rows - 1].mean((1, 3)),  # (n_layers, H)
        "self": W[..., rows, rows].mean((1, 3)),
        "first": W[..., rows, 0].mean((1, 3)),
    }
    visible = torch.arange(2, L + 1, dtype=torch.float32)  # keys visible to query i: i + 1
    kinds = {"space": " ", "newline": "\n", "punctuation": ".,;:!?'-"}
    for name, chars in kinds.items():
        is_kind = torch.tensor([[t in chars for t in seq] for seq in seqs], dtype=torch.float32)  # (B, L)
        on_kind = (W[..., 1:, :] * is_kind[None, :, None, None, :]).sum(-1)  # (n_layers, B, H, L-1)
        scores[name] = on_kind.mean((1, 3))
        share = torch.cumsum(is_kind, 1)[:, 1:] / visible  # (B, L-1): uniform head's share
        scores[f"uniform_{name}"] = torch.full_like(scores[name], float(share.mean()))
    return {k: to_numpy(v) for k, v in scores.items()}


def name_heads(scores: dict[str, np.ndarray], threshold: float = 0.4) -> np.ndarray:
    """Give each head a short name from its strongest pattern in :func:`head_pattern_scores`.

    "previous-token", "self" or "first-token" when that key gets at least ``threshold`` of the
    weight on average; "space", "newline" or "punctuation" when that class gets more than twice
    the uniform share and at least ``threshold / 2`` (and more than any positional pattern);
    otherwise "local" when self + previous together get at least ``threshold + 0.1``, else "mixed".

    Args:
        scores: the dict of :func:`head_pattern_scores`, each entry an ``(n_layers, H)`` array of
            average attention weight (a share in [0, 1]).
        threshold: the share of weight a pattern needs, in (0, 1].

    Returns:
        An ``(n_layers, H)`` object array of names.

    Raises:
        KeyError: if ``scores`` lacks one of the patterns above.
    """
    shape = scores["previous"].shape
    names = np.full(shape, "mixed", dtype=object)
    for idx in np.ndindex(shape):
        best, best_value = "mixed", 0.0
        for key in ("previous", "self", "first"):
            if scores[key][idx] >= threshold and scores[key][idx] > best_value:
                best, best_value = key, float(scores[key][idx])
        for key in ("space", "newline", "punctuation"):
            ratio = scores[key][idx] / max(scores[f"uniform_{key}"][idx], 1e-9)
            if scores[key][idx] >= threshold / 2 and ratio > 2 and scores[key][idx] > best_value:
                best, best_value = key, float(scores[key][idx])
        if best == "mixed" and scores["previous"][idx] + scores["self"][idx] >= threshold + 0.1:
            best = "local"
        names[idx] = {"previous": "previous-token", "first": "first-token"}.get(best, best)
    return names


def plot_loss_curves(history: dict, ax=None, title: str | None = "loss", target: float | None = None):
    """Train and validation loss against the step (``history`` from ``attnlab.training.train``)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(history["iter"], history["train"], "o-", label="train")
    ax.plot(history["iter"], history["val"], "s-", label="validation")
    if target is not None:
        ax.axhline(target, color="grey", ls="--", lw=1, label=f"target {target}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats / char)")
    if title:
        ax.set_title(title)
    ax.legend()
    ax.grid(alpha=0.3)
    return ax


class LiveLossPlot:
    """A ``train(..., callback=LiveLossPlot())`` callback that redraws the loss curves in place.

    In Jupyter it updates one output area (``IPython.display`` handle); elsewhere it only
    keeps the last figure (``.figure``).
    """

    def __init__(self, target: float | None = None) -> None:
        self.target = target
        self.figure: Figure | None = None
        self._handle = None

    def __call__(self, history: dict) -> None:
        if self.figure is None:
            self.figure, self._ax = plt.subplots(figsize=(6, 3.5))
            plt.close(self.figure)  # drawn through the display handle only
        self._ax.clear()
        plot_loss_curves(history, ax=self._ax, title="loss (live)", target=self.target)
        try:
            from IPython.display import display

            if self._handle is None:
                self._handle = display(self.figure, display_id=True)
            elif self._handle is not None:
                self._handle.update(self.figure)
        except ImportError:  # pragma: no cover - IPython ships with Jupyter
            pass


def score_matrix_bytes(L: int, B: int = 1, H: int = 1, dtype: torch.dtype = torch.float32) -> int:
    """Bytes of one ``(B, H, L, L)`` attention score matrix: ``B·H·L²·itemsize``."""
    return B * H * L * L * torch.empty((), dtype=dtype).element_size()


def _median_ms(fn, repeats: int) -> float:
    fn()  # warm-up (allocator, kernel selection)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - t0))
    return statistics.median(times)


def _allocated_bytes(fn) -> int:
    """Sum of all CPU allocations made while ``fn`` runs (torch profiler), in bytes."""
    import os
    import sys

    from torch.profiler import ProfilerActivity, profile

    sys.stderr.flush()
    saved = os.dup(2)  # the profiler's C++ backend logs start/stop lines on fd 2: silence them
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
                fn()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return int(sum(max(0, e.self_cpu_memory_usage) for e in prof.key_averages()))


@torch.no_grad()
def attention_cost_curve(lengths: Sequence[int], B: int = 1, H: int = 4, d_k: int = 32,
                         repeats: int = 5, causal: bool = True, measure_memory: bool = True,
                         seed: int = 0) -> dict[str, list]:
    """Time (and allocated memory) of one attention call versus sequence length L.

    Compares ``attnlab.nn.scaled_dot_product_attention`` (explicit: forms the ``(B, H, L, L)``
    scores and weights) with ``torch.nn.functional.scaled_dot_product_attention`` (fused).

    Args:
        lengths: the L values; q, k, v are ``(B, H, L, d_k)`` float32 random tensors.
        repeats: timed calls per point (median reported).
        measure_memory: also record bytes allocated per call (torch profiler; a sum of
            allocations, not a peak).
    Returns:
        dict with ``L``, ``explicit_ms``, ``fused_ms``, ``explicit_bytes``, ``fused_bytes``,
        ``score_bytes`` (predicted size of one L×L score tensor) lists.
    """
    from attnlab.nn import causal_mask, scaled_dot_product_attention

    gen = torch.Generator().manual_seed(seed)
    out: dict[str, list] = {k: [] for k in ("L", "explicit_ms", "fused_ms", "explicit_bytes", "fused_bytes", "score_bytes")}
    for L in lengths:
        q, k, v = (torch.randn(B, H, L, d_k, generator=gen) for _ in range(3))  # (B, H, L, d_k)
        mask = causal_mask(L) if causal else None  # (L, L)
        explicit = lambda q=q, k=k, v=v, mask=mask: scaled_dot_product_attention(q, k, v, mask)  # noqa: E731
        fused = lambda q=q, k=k, v=v: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
        out["L"].append(L)
        out["explicit_ms"].append(_median_ms(explicit, repeats))
        out["fused_ms"].append(_median_ms(fused, repeats))
        out["explicit_bytes"].append(_allocated_bytes(explicit) if measure_memory else None)
        out["fused_bytes"].append(_allocated_bytes(fused) if measure_memory else None)
        out["score_bytes"].append(score_matrix_bytes(L, B, H))
    return out


def fit_loglog_slope(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Least-squares slope of log(y) against log(x): the exponent p in y ∝ x^p.

    Args:
        x, y: ``(n,)`` positive values, n >= 2 (e.g. sequence lengths L and milliseconds or bytes).

    Returns:
        p as a float (about 2 for the explicit attention's memory in L, the O(L²) of the score matrix).
    """
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(lx, ly, 1)[0])


def plot_attention_cost(curve: dict, fit_from: int = 0, axes=None):
    """Log-log plots of time and allocated memory against L, with fitted slopes in the legend.

    Args:
        curve: output of :func:`attention_cost_curve`.
        fit_from: fit the slopes on points ``fit_from:`` only (small L is dominated by overhead).
    Returns:
        The matplotlib ``Figure``.
    """
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    fig = axes[0].figure
    L = curve["L"]
    for key, label, marker in (("explicit_ms", "explicit (attnlab)", "o"), ("fused_ms", "fused (torch SDPA)", "s")):
        slope = fit_loglog_slope(L[fit_from:], curve[key][fit_from:])
        axes[0].loglog(L, curve[key], marker + "-", label=f"{label}: slope {slope:.2f}")
    axes[0].set_xlabel("sequence length L")
    axes[0].set_ylabel("time per call (ms, median)")
    axes[0].set_title("time")
    if curve["explicit_bytes"][0] is not None:
        for key, label, marker in (("explicit_bytes", "explicit, allocated", "o"), ("fused_bytes", "fused, allocated", "s"),
                                   ("score_bytes", "one L×L score tensor (B·H·L²·4)", "")):
            y = np.asarray(curve[key], float) / 2**20
            slope = fit_loglog_slope(L[fit_from:], y[fit_from:])
            axes[1].loglog(L, y, (marker + "-") if marker else "k--", label=f"{label}: slope {slope:.2f}")
        axes[1].set_xlabel("sequence length L")
        axes[1].set_ylabel("MiB")
        axes[1].set_title("memory allocated per call")
    for ax in axes:
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
