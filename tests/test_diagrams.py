"""The architecture diagrams (attnlab.diagrams) draw, and their labels are readable.

Readable, checked mechanically: no two labels overlap, every label lies inside the figure, and
no label is smaller than 7 pt. (A human still looks at the PNGs: artifacts/lessons/.)
"""
from __future__ import annotations

import itertools

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from attnlab.diagrams import ALL_DIAGRAMS, head_split_merge, kv_cache_steps, mask_in_context  # noqa: E402


def label_boxes(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    hidden = {id(t) for ax in fig.axes if not ax.axison for t in ax.get_xticklabels() + ax.get_yticklabels()}
    boxes = []
    for text in fig.findobj(Text):
        if text.get_visible() and text.get_text().strip() and id(text) not in hidden:
            boxes.append((text.get_text(), text.get_fontsize(), text.get_window_extent(renderer)))
    return boxes


@pytest.mark.parametrize("name", sorted(ALL_DIAGRAMS))
def test_diagram_labels_do_not_overlap(name):
    fig = ALL_DIAGRAMS[name]()
    try:
        boxes = label_boxes(fig)
        assert len(boxes) >= 5, f"{name} has almost no labels"
        width, height = fig.canvas.get_width_height()
        for text, size, box in boxes:
            assert size >= 7, f"{name}: label {text!r} is {size} pt"
            assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, \
                f"{name}: label {text!r} leaves the figure"
        for (t1, _, b1), (t2, _, b2) in itertools.combinations(boxes, 2):
            b1s, b2s = b1.expanded(0.97, 0.9), b2.expanded(0.97, 0.9)  # touching is fine
            assert not b1s.overlaps(b2s), f"{name}: labels {t1!r} and {t2!r} overlap"
    finally:
        plt.close(fig)


def test_overlap_check_catches_an_overlap():
    fig, ax = plt.subplots()
    ax.text(0.5, 0.5, "one label")
    ax.text(0.51, 0.5, "another label")
    boxes = label_boxes(fig)
    plt.close(fig)
    overlapping = [(a, b) for (a, _, b1), (b, _, b2) in itertools.combinations(boxes, 2)
                   if b1.expanded(0.97, 0.9).overlaps(b2.expanded(0.97, 0.9))]
    assert ("one label", "another label") in overlapping


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="query"):
        mask_in_context(("a", "b"), query=5)
    with pytest.raises(ValueError, match="heads"):
        head_split_merge(9)
    with pytest.raises(ValueError, match="n_steps"):
        kv_cache_steps(0)


def test_attention_grid_has_readable_labels_and_one_colour_bar():
    import torch

    from attnlab.viz_model import plot_attention_grid

    text = "To be, or not to be:\nthat"
    L = len(text)
    causal = torch.ones(L, L).tril().bool()
    maps = [torch.rand(1, 4, L, L).masked_fill(~causal, 0.0) for _ in range(2)]
    fig = plot_attention_grid(maps, list(text))
    try:
        ticks = [t for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
        assert ticks and min(t.get_fontsize() for t in ticks) >= 8
        colour_bars = [ax for ax in fig.axes if ax.get_ylabel() == "attention weight"]
        assert len(colour_bars) == 1
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        labels = [t.get_window_extent(renderer) for ax in fig.axes[:1] for t in ax.get_yticklabels() if t.get_text()]
        assert not any(a.expanded(0.97, 0.9).overlaps(b.expanded(0.97, 0.9)) for a, b in itertools.combinations(labels, 2))
    finally:
        plt.close(fig)
