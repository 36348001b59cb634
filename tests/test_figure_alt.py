"""attnlab.figure_alt: every matplotlib figure shown in an IPython kernel carries an <img> with alt
text describing it, and the inline backend's reconfiguration does not remove it."""
from __future__ import annotations

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from attnlab.figure_alt import describe, install  # noqa: E402


def test_describe_names_titles_labels_marks_and_legend():
    fig, (left, right) = plt.subplots(1, 2)
    left.plot([1, 2], label="train")
    left.plot([2, 1], label="validation")
    left.legend()
    left.set_title("loss")
    left.set_xlabel("step")
    right.imshow([[0.1, 0.9, 0.0], [0.5, 0.5, 0.0]])
    fig.suptitle("training")
    text = describe(fig)
    plt.close(fig)
    for part in ("training", "2 panels", "loss", "2 lines", "step", "legend: train, validation", "2x3 heatmap"):
        assert part in text, (part, text)


def test_describe_quotes_a_diagrams_labels_and_calls_its_patches_shapes():
    from matplotlib.patches import FancyBboxPatch

    fig, ax = plt.subplots()
    for x, label in ((0.2, "Lesson"), (0.6, "Exercise")):
        ax.add_patch(FancyBboxPatch((x, 0.4), 0.2, 0.2))
        ax.text(x, 0.5, label)
    ax.text(0.5, 0.9, "one topic = lesson\n-> exercise")
    ax.axis("off")
    text = describe(fig)
    plt.close(fig)
    assert "2 shapes" in text and "bars" not in text, text
    assert "labelled: Lesson; Exercise; one topic = lesson -> exercise" in text, text
    fig, ax = plt.subplots()  # a bar chart keeps its bars, and its tick texts are not quoted
    ax.bar([0, 1], [1, 2])
    ax.set_ylabel("weight")
    ax.text(0, 1, "note")
    text = describe(fig)
    plt.close(fig)
    assert "2 bars" in text and "labelled" not in text, text


def test_describe_prefers_the_authors_own_text():
    fig = plt.figure()
    fig.attnlab_alt = "Attention of 'cat' on every earlier word."
    assert describe(fig) == "Attention of 'cat' on every earlier word."
    plt.close(fig)


def test_html_output_has_alt_and_survives_the_inline_backend_reset():
    formatters = pytest.importorskip("IPython.core.formatters")
    from IPython.core.pylabtools import select_figure_formats

    # a shell's display machinery without a global IPython (no get_ipython() for other tests)
    shell = SimpleNamespace(display_formatter=formatters.DisplayFormatter())
    assert install(shell)
    select_figure_formats(shell, {"png"})  # what the inline backend does when it (re)configures
    fig = plt.figure()
    plt.plot([0, 1])
    plt.ylabel("weight")
    data, _ = shell.display_formatter.format(fig)
    plt.close(fig)
    assert "image/png" in data  # the PNG stays for other front ends and the lesson tests
    assert data["text/html"].startswith('<img src="data:image/png;base64,')
    assert 'alt="Figure. 1 line; weight"' in data["text/html"]
