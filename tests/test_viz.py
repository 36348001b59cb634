"""attnlab.viz.live_figure: the lessons' interactive figures are drawn once, then again on every change."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

widgets = pytest.importorskip("ipywidgets")

from attnlab.viz import live_figure  # noqa: E402


def test_live_figure_draws_once_then_on_every_change_of_any_control():
    slider, toggle = widgets.IntSlider(value=1, min=0, max=9), widgets.ToggleButton(value=False)
    seen = []

    def draw():
        seen.append((slider.value, toggle.value))
        fig, ax = plt.subplots()
        ax.plot([0, slider.value])
        return fig

    live_figure(draw, [slider, toggle])
    assert seen == [(1, False)]
    slider.value = 5
    toggle.value = True
    assert seen == [(1, False), (5, False), (5, True)]
    plt.close("all")
