"""ipywidgets practice cards.

A :class:`Card` shows one problem (markdown/LaTeX via ``HTMLMath``, matrices as HTML
tables), an answer box, **Check**, **Hint** and **Next problem** buttons, a feedback
area and a mastery progress bar. Stable CSS classes for browser tests:

``attnlab-card``, ``attnlab-skill-<name>``, ``attnlab-seed-<seed>`` (on the card; the title
also holds ``<span class="attnlab-id" data-attnlab="<name>:<seed>">``),
``attnlab-prompt``, ``attnlab-answer``, ``attnlab-check``, ``attnlab-hint``,
``attnlab-next``, ``attnlab-show``, ``attnlab-feedback``, ``attnlab-hints``, ``attnlab-progress``,
``attnlab-status``.

The progress bar shows the current run of counted answers (first answers to fresh
variants, no hint). After a wrong answer the bar drops to 0; a correct retry of the same
variant does not move it, so press **Next problem** for a fresh variant.
"""
from __future__ import annotations

import html
from typing import Any

import ipywidgets as w
import numpy as np

from .answers import format_answer
from .store import ProgressStore
from .text import PracticeItem

_PLACEHOLDER = {
    "number": "a number, e.g. 0.25", "int": "a whole number, e.g. 4096", "shape": "a shape, e.g. (2, 4, 8)",
    "matrix": "e.g. [[1, 2], [3, 4]]", "vector": "e.g. [0.1, 0.9]", "mask": "e.g. [[1, 0], [1, 1]]",
    "int_list": "e.g. [3, 1, 2]", "int_set": "e.g. [0, 2]",
    "choice": "one letter, e.g. B", "choices": "letters, e.g. A, C", "order": "letters in order, e.g. C A B D",
}


def _markdown(text: str) -> str:
    try:
        from markdown_it import MarkdownIt

        return MarkdownIt().render(text)
    except ImportError:  # pragma: no cover - markdown-it ships with rich/jupyter
        return "<p>" + html.escape(text) + "</p>"


PRIMARY_BLUE = "#1565c0"  # the Check button's background (white text on it: 5.8:1 contrast)

# Feedback and hints wrap at the card's width, long numbers and words included (WCAG 1.4.10 Reflow).
_WRAP = "white-space:normal;overflow-wrap:anywhere;max-width:100%"


def matrix_html(name: str, value: Any) -> str:
    """An HTML table for a vector/matrix (rows = first axis)."""
    arr = np.asarray(value)
    if arr.ndim == 1:
        arr = arr[None, :]
    cells = "".join(
        "<tr>" + "".join(f"<td style='border:1px solid #999;padding:2px 8px;text-align:right'>{v}</td>"
                         for v in row) + "</tr>" for row in arr.tolist())
    return (f"<div style='display:inline-block;margin:4px 16px 4px 0'><b>{html.escape(name)}</b> "
            f"<table class='attnlab-matrix' style='border-collapse:collapse'>{cells}</table></div>")


class Card:
    """A practice card for ``skill``. Display it in Jupyter (it is the cell's value), or drive it
    programmatically: ``card.answer.value = "..."; card.check_button.click()``."""

    def __init__(self, skill: str, store: ProgressStore | None = None, *, review: bool = False,
                 n_required: int | None = None) -> None:
        self.item = PracticeItem(skill, store, review=review, n_required=n_required)
        n = self.item.n_required
        kind = self.item.skill.kind
        self.title = w.HTML(self._title_html())
        self.prompt = w.HTMLMath()
        self.tables = w.HTML()
        self.answer = w.Text(placeholder=_PLACEHOLDER.get(kind, ""), description="Answer:",
                             layout=w.Layout(width="460px", max_width="100%"))
        # a primary button in a blue dark enough for its white text (5.8:1; WCAG 1.4.3 asks 4.5:1): the widget
        # manager's own primary blue (#2196f3) gives 3.1:1
        self.check_button = w.Button(description="Check", button_style="primary", tooltip="Check my answer",
                                     style={"button_color": PRIMARY_BLUE})
        self.hint_button = w.Button(description="Hint", tooltip="Show a hint (the item then does not count)")
        self.next_button = w.Button(description="Next problem", disabled=True, tooltip="A fresh variant")
        self.show_button = w.Button(description="Show answer",
                                    tooltip="The worked answer (the problem then does not count)")
        self.feedback = w.HTML()
        self.hints = w.HTML()
        self.progress = w.IntProgress(min=0, max=n, description="Mastery:")
        self.status = w.Label()
        for widget, cls in [(self.prompt, "attnlab-prompt"), (self.answer, "attnlab-answer"),
                            (self.check_button, "attnlab-check"), (self.hint_button, "attnlab-hint"),
                            (self.next_button, "attnlab-next"), (self.show_button, "attnlab-show"), (self.feedback, "attnlab-feedback"),
                            (self.hints, "attnlab-hints"), (self.progress, "attnlab-progress"),
                            (self.status, "attnlab-status"), (self.tables, "attnlab-tables")]:
            widget.add_class(cls)
        self.check_button.on_click(self._on_check)
        self.hint_button.on_click(self._on_hint)
        self.next_button.on_click(self._on_next)
        self.show_button.on_click(self._on_show)
        self.widget = w.VBox([
            self.title, self.prompt, self.tables,
            # rows wrap on a narrow screen, so no button is pushed out of sight (WCAG 1.4.10 Reflow)
            w.HBox([self.answer, self.check_button, self.hint_button, self.show_button, self.next_button],
                   layout=w.Layout(flex_flow="row wrap")),
            self.feedback, self.hints, w.HBox([self.progress, self.status], layout=w.Layout(flex_flow="row wrap")),
        ], layout=w.Layout(border="1px solid #ccc", padding="8px", margin="8px 0"))
        self.widget.add_class("attnlab-card")
        self.widget.add_class(f"attnlab-skill-{skill}")
        self._show_variant()

    # ------------------------------------------------------------------ rendering
    def _title_html(self) -> str:
        s = self.item.skill
        tag = " · review" if self.item.review else ""
        ident = f"{s.name}:{self.item.variant.seed}"  # for browser tests: get_skill(name).variant(seed)
        return (f"<b>Lesson {s.lesson} · {html.escape(s.title)}</b> <code>{s.name}</code>{tag}"
                f"<span class='attnlab-id' data-attnlab='{ident}' hidden></span>")

    def _show_variant(self) -> None:
        v = self.item.variant
        self.prompt.value = _markdown(v.prompt)
        self.tables.value = "".join(matrix_html(k, v.data[k]) for k in v.tables)
        self.title.value = self._title_html()
        for cls in [c for c in self.widget._dom_classes if c.startswith("attnlab-seed-")]:
            self.widget.remove_class(cls)
        self.widget.add_class(f"attnlab-seed-{v.seed}")
        self.answer.value = ""
        self.feedback.value = ""
        self.hints.value = ""
        self.next_button.disabled = True
        self._show_progress()

    def _show_progress(self) -> None:
        n = self.item.n_required
        self.progress.value = n if self.item.mastered else min(self.item.streak, n)
        self.progress.bar_style = "success" if self.item.mastered else "info"
        self.status.value = self.item.progress()

    # ------------------------------------------------------------------ callbacks
    def _on_check(self, _button=None) -> None:
        feedback = self.item.check(self.answer.value)
        if not feedback.readable:  # nothing recorded: say what could not be read, keep the problem open
            self.feedback.value = (f"<div role='status' style='{_WRAP};color:#8a5a00'>? "
                                   f"{html.escape(feedback.message)}</div>")
            return
        colour = "#1a7f37" if feedback.correct else "#b42318"
        note = self.item.last.note if self.item.last else ""
        mark = "✔" if feedback.correct else "✘"
        self.feedback.value = (f"<div role='status' style='{_WRAP};color:{colour}'>{mark} "
                               f"{html.escape(feedback.message)}</div>"
                               + (f"<div style='{_WRAP}'>{html.escape(note)}</div>" if note else ""))
        self.next_button.disabled = False
        self._show_progress()

    def _on_hint(self, _button=None) -> None:
        text = self.item.hint()
        self.hints.value += f"<div style='{_WRAP}'><i>{html.escape(text)}</i></div>"
        self._show_progress()

    def _on_show(self, _button=None) -> None:
        text = self.item.worked_answer()
        self.hints.value += f"<div style='{_WRAP}'><b>{html.escape(text)}</b></div>"
        self.next_button.disabled = False
        self._show_progress()

    def _on_next(self, _button=None) -> None:
        self.item.next()
        self._show_variant()

    # ------------------------------------------------------------------ helpers
    def expected_text(self) -> str:
        """The right answer as text (for tests and instructors; the card never shows it)."""
        v = self.item.variant
        return format_answer(v.answer, v.kind, v.decimals)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def __repr__(self) -> str:
        return str(self.item)
