"""Headless practice: items as plain objects and text, for scripts, tests and the CLI.

    item = practice_item("sdpa_softmax_row")
    print(item.prompt)
    item.check([[0.24, 0.67, 0.09], [0.47, 0.47, 0.06]])   # -> Feedback, progress recorded
    print(item.hint())                                     # nudge, then the method
    print(item.worked_answer())                            # only when asked: method and answer
    item.next()                                            # a fresh variant
"""
from __future__ import annotations

import re
from typing import Any

from . import mastery
from .catalogue import get_skill
from .core import Feedback, Variant
from .store import ProgressStore


def markdown_to_text(markdown: str) -> str:
    """Strip the light markdown used in prompts (bold, inline code) for terminals."""
    return re.sub(r"\*\*(.+?)\*\*|`(.+?)`", lambda m: m.group(1) or m.group(2), markdown)


class PracticeItem:
    """One skill's practice for the current learner, bound to the progress store.

    Attributes:
        skill: the :class:`~attnlab.practice.core.Skill`; ``variant``: the open problem;
        ``last``: the last :class:`~attnlab.practice.mastery.Outcome` (or None).
    """

    def __init__(self, skill: str, store: ProgressStore | None = None, *, review: bool = False,
                 n_required: int | None = None) -> None:
        self.skill = get_skill(skill)
        self.store = store if store is not None else ProgressStore()
        self.n_required = mastery.mastery_threshold(n_required)
        self.review = review
        self.variant: Variant = mastery.current_variant(self.store, self.skill.name, review=review,
                                                        n_required=self.n_required)
        self.last: mastery.Outcome | None = None

    @property
    def prompt(self) -> str:
        """The problem as plain text."""
        return markdown_to_text(self.variant.prompt)

    def check(self, answer: Any) -> Feedback:
        """Check ``answer`` (number, list, tensor or text) and record the attempt.

        Feedback is tiered: the first wrong answer hears what is wrong; a second miss (or after a
        hint) also hears why and the method. An unreadable answer is not recorded (``readable`` False).
        """
        self.last = mastery.submit(self.store, self.skill.name, answer, n_required=self.n_required)
        return self.last.feedback

    def hint(self) -> str:
        """The next hint (1: nudge, 2: method) for the problem on screen. Before it is answered right, showing
        a hint resets the run towards mastery; after a right answer the run is kept."""
        tier, text = mastery.reveal_hint(self.store, self.skill.name)
        return f"Hint {tier}/2: {text}"

    def worked_answer(self) -> str:
        """The worked answer (method and result) of the problem on screen. Before it is answered right, the
        problem then no longer counts and the run resets; after a right answer the run is kept."""
        return "Worked answer: " + mastery.reveal_answer(self.store, self.skill.name)

    def next(self) -> Variant:
        """Move on to a fresh variant."""
        self.variant = mastery.fresh_variant(self.store, self.skill.name, n_required=self.n_required)
        return self.variant

    @property
    def streak(self) -> int:
        return self.store.get(self.skill.name).streak

    @property
    def mastered(self) -> bool:
        return mastery.is_mastered(self.store, self.skill.name)

    def progress(self) -> str:
        """E.g. ``"2/3 in a row"`` or ``"mastered"``."""
        if self.mastered:
            return "mastered"
        return f"{min(self.streak, self.n_required)}/{self.n_required} in a row"

    def feedback_text(self) -> str:
        """Feedback and progress note for the last check, as one text block."""
        if self.last is None:
            return ""
        mark = "✔" if self.last.feedback.correct else "✘"
        note = f" {self.last.note}" if self.last.note else ""
        return f"{mark} {self.last.feedback.message}{note}"

    def __str__(self) -> str:
        head = f"[{self.skill.lesson}] {self.skill.title} ({self.skill.name}){' - review' if self.review else ''}"
        return f"{head}\n{self.prompt}\nProgress: {self.progress()}"

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        return f"**{self.skill.title}** (`{self.skill.name}`)\n\n{self.variant.prompt}\n\n*Progress: {self.progress()}*"


def practice_item(skill: str, store: ProgressStore | None = None, **kwargs) -> PracticeItem:
    """A headless :class:`PracticeItem` for ``skill`` (see the module docstring)."""
    return PracticeItem(skill, store, **kwargs)
