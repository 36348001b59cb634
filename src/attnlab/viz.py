"""Plot helpers shared by the lessons: heatmaps of matrices, attention weights and masks.

All functions draw with matplotlib onto an ``Axes`` (a new figure when ``ax`` is None)
and return that ``Axes``, so a lesson can place several plots side by side. They accept
``torch.Tensor``, ``numpy.ndarray`` or nested lists. Nothing here computes attention:
the numbers always come from ``attnlab.nn``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import numpy as np

__all__ = ["to_numpy", "heatmap", "attention_heatmap", "mask_heatmap", "live_figure"]


def to_numpy(matrix) -> np.ndarray:
    """Convert a tensor, array or nested list to a float64 ``numpy`` array (detached, on CPU)."""
    if hasattr(matrix, "detach"):  # torch.Tensor
        matrix = matrix.detach().cpu()
        if matrix.dtype.is_floating_point or matrix.dtype.is_complex:
            matrix = matrix.double()
        matrix = matrix.numpy()
    return np.asarray(matrix, dtype=np.float64)


def _as_2d(matrix, name: str) -> np.ndarray:
    arr = to_numpy(matrix)
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D matrix (rows, cols), got shape {tuple(arr.shape)}; "
            "select one batch element and head first, e.g. weights[0, 0]"
        )
    return arr


def _text_colour(image, value: float) -> str:
    """Black text on light cells, white text on dark ones (by the cell colour's luminance)."""
    if not np.isfinite(value):
        return "black"
    r, g, b, _ = image.cmap(image.norm(value))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


def heatmap(
    matrix,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    title: str | None = None,
    ax=None,
    cmap: str = "viridis",
    annotate: bool = True,
    vmin: float | None = None,
    vmax: float | None = None,
    fmt: str = "{:.2f}",
    xlabel: str | None = None,
    ylabel: str | None = None,
    colorbar: bool = True,
):
    """Draw a 2-D matrix as a labelled heatmap.

    Args:
        matrix: ``(R, C)`` tensor, array or nested list of numbers.
        row_labels, col_labels: tick labels, lengths ``R`` and ``C``.
        annotate: write each value in its cell (only when the matrix is at most 12x12).
        fmt: format of the annotations.

    Returns:
        The matplotlib ``Axes``.

    Raises:
        ValueError: if ``matrix`` is not 2-D or a label list has the wrong length.
    """
    arr = _as_2d(matrix, "matrix")
    rows, cols = arr.shape
    for labels, n, what in ((row_labels, rows, "row_labels"), (col_labels, cols, "col_labels")):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{what} has {len(labels)} entries but the matrix has {n}")
    if ax is None:
        size = (max(3.0, 0.55 * cols + 1.8), max(2.5, 0.5 * rows + 1.2))
        _, ax = plt.subplots(figsize=size)
    finite = arr[np.isfinite(arr)]
    lo = vmin if vmin is not None else (finite.min() if finite.size else 0.0)
    hi = vmax if vmax is not None else (finite.max() if finite.size else 1.0)
    image = ax.imshow(np.where(np.isfinite(arr), arr, np.nan), cmap=cmap, vmin=lo, vmax=hi)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    ax.set_xticks(range(cols), labels=list(col_labels) if col_labels is not None else range(cols))
    ax.set_yticks(range(rows), labels=list(row_labels) if row_labels is not None else range(rows))
    if col_labels is not None and max((len(str(c)) for c in col_labels), default=0) > 2:
        plt.setp(ax.get_xticklabels(), rotation=45, ha="right")
    if annotate and rows <= 12 and cols <= 12:
        for i in range(rows):
            for j in range(cols):
                value = arr[i, j]
                text = "-inf" if value == -np.inf else ("inf" if value == np.inf else fmt.format(value))
                colour = _text_colour(image, value)
                ax.text(j, i, text, ha="center", va="center", color=colour, fontsize=8)
    if title:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    return ax


def attention_heatmap(
    weights,
    tokens_q: Sequence[str] | None = None,
    tokens_k: Sequence[str] | None = None,
    title: str | None = "attention weights",
    ax=None,
    annotate: bool = True,
):
    """Heatmap of one attention-weight matrix: rows are queries, columns are keys.

    Args:
        weights: ``(L, S)`` attention weights (rows sum to 1), e.g. ``weights[b, h]`` of the
            ``(B, H, L, S)`` tensor returned by ``MultiHeadAttention(..., need_weights=True)``.
        tokens_q: ``L`` query labels; tokens_k: ``S`` key labels (default: tokens_q when square).

    Returns:
        The matplotlib ``Axes``; the colour scale is fixed to [0, 1].
    """
    arr = _as_2d(weights, "weights")
    if tokens_k is None and tokens_q is not None and arr.shape[0] == arr.shape[1]:
        tokens_k = tokens_q
    return heatmap(
        arr, tokens_q, tokens_k, title=title, ax=ax, cmap="Blues", annotate=annotate,
        vmin=0.0, vmax=1.0, xlabel="key (attended to)", ylabel="query (attending)",
    )


def mask_heatmap(mask, tokens_q=None, tokens_k=None, title: str | None = "mask", ax=None):
    """Draw a boolean attention mask: dark ✓ = may attend (True), light ✗ = blocked (False).

    Args:
        mask: ``(L, S)`` bool (True = may attend, attnlab's convention) or 0/1 numbers.

    Returns:
        The matplotlib ``Axes``.
    """
    arr = _as_2d(mask, "mask")
    if tokens_k is None and tokens_q is not None and arr.shape[0] == arr.shape[1]:
        tokens_k = tokens_q
    ax = heatmap(
        arr, tokens_q, tokens_k, title=title, ax=ax, cmap="Greens", annotate=False,
        vmin=0.0, vmax=1.0, xlabel="key", ylabel="query", colorbar=False,
    )
    rows, cols = arr.shape
    if rows <= 16 and cols <= 16:
        for i in range(rows):
            for j in range(cols):
                ax.text(j, i, "✓" if arr[i, j] else "✗", ha="center", va="center",
                        color="white" if arr[i, j] else "#b03a2e", fontsize=9)
    return ax


def live_figure(draw: Callable[[], plt.Figure], controls: Sequence) -> None:
    """Show ``controls`` (ipywidgets, side by side) above the figure ``draw()`` makes from their
    current values, and draw it again whenever one of their ``value`` changes.

    ``draw`` reads the controls itself and returns a new matplotlib ``Figure`` (laid out with
    ``tight_layout`` here); text it prints appears above the figure. Needs a Jupyter kernel with
    ipywidgets (the course environment has it); imported only when called.
    """
    import ipywidgets as widgets
    from IPython.display import display

    out = widgets.Output()

    def redraw(*_) -> None:
        with out:
            out.clear_output(wait=True)
            fig = draw()
            fig.tight_layout()
            plt.show()

    for control in controls:
        control.observe(redraw, "value")
    redraw()
    display(widgets.VBox([widgets.HBox(list(controls)), out]))
