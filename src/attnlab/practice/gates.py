"""Entry points used in notebooks: ``gate`` (first cell), ``mastery_check`` (last cell), ``practice``.

In Jupyter they display widget cards; elsewhere (scripts, headless execution, tests)
they print text. ``gate`` and ``mastery_check`` never raise and never wait for input, so
they cannot block ``nbclient``/``nbconvert`` runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import course
from ..settings import course_settings
from . import mastery
from .catalogue import get_skill, skills_for_lesson
from .core import lesson_id
from .store import ProgressStore
from .text import PracticeItem

OVERRIDE_ENV = "ATTNLAB_GATE_OVERRIDE"


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (where widgets can render)."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _show(text: str, markdown: str, cards: list[str], store: ProgressStore, review: set[str]) -> None:
    if _in_kernel():
        from IPython.display import Markdown, display

        from .widgets import Card

        display(Markdown(markdown))
        for name in cards:
            display(Card(name, store, review=name in review))
    else:
        print(text)


@dataclass(frozen=True)
class GateResult:
    """Outcome of :func:`gate`: ``open`` is True when nothing is missing or the gate was overridden."""

    lesson: str
    missing: tuple[str, ...] = ()
    overridden: bool = False
    reviews: tuple[str, ...] = ()
    message: str = ""
    known: bool = True  # False: no such lesson in the course

    @property
    def open(self) -> bool:
        return self.overridden or not self.missing

    def __bool__(self) -> bool:
        return self.open

    def __str__(self) -> str:
        return self.message

    def _ipython_display_(self) -> None:  # already displayed by gate(); avoid showing it twice
        return None


def _no_such_lesson(lesson) -> str:
    text = str(course.UnknownLesson(lesson))  # "there is no lesson 11 in this course: the lessons are 00 to 10"
    return f"{text[0].upper()}{text[1:]}. Check the number (nothing was recorded)."


def _override_env() -> bool:
    return course_settings().gate_override


def gate(lesson: str | int, override: bool = False, *, store: ProgressStore | None = None) -> GateResult:
    """Check the prerequisite skills of ``lesson`` (from the course registry,
    :attr:`attnlab.course.Lesson.prerequisites`) and offer practice for the missing ones.

    Args:
        lesson: lesson id, e.g. ``"03"`` or ``3``.
        override: open the lesson regardless (review, instructors); env ``ATTNLAB_GATE_OVERRIDE=1`` does the same.
        store: progress store (default: the current learner's).
    Returns:
        :class:`GateResult`. Never raises; never blocks. In a Jupyter kernel it also starts counting
        this notebook's time on task, kept locally (:func:`attnlab.practice.time_on_task.track`). In Jupyter, shows practice cards for the
        missing skills; elsewhere prints a text summary.
    """
    try:
        lid = lesson_id(lesson)
        if not mastery.is_lesson(lid):
            text = _no_such_lesson(lesson)
            print(text)
            return GateResult(lid, (), False, (), text, known=False)
        needed = course.lesson(lid).prerequisites
        store = store if store is not None else ProgressStore()
        store.visit(lid)
        if _in_kernel():  # time on task of this notebook, kept locally (attnlab.practice.time_on_task)
            from .time_on_task import TimeLog, track
            track(lid, log=TimeLog(learner=store.learner, home=store.home))
        missing = tuple(s for s in needed if not mastery.is_mastered(store, s))
        overridden = bool(override) or _override_env()
        reviews = tuple(mastery.due_reviews(store, lid))
        lines = [f"Lesson {lid} gate:"]
        if not missing:
            lines.append("all prerequisite skills are mastered. Go ahead!" if needed
                         else "no prerequisites. Go ahead!")
        else:
            lines.append("these prerequisite skills are not mastered yet:")
            for name in missing:
                item = store.get(name)
                lines.append(f"  - {name}: {get_skill(name).title} (lesson {get_skill(name).lesson}, "
                             f"{item.streak}/{mastery.mastery_threshold()} in a row)")
                if not overridden and not _in_kernel():
                    lines.append(f"    Problem: {PracticeItem(name, store).prompt}")
            if overridden:
                lines.append("Gate overridden (override=True or ATTNLAB_GATE_OVERRIDE=1): the lesson is open.")
            else:
                lines.append("Practise them here (cards below in Jupyter), in Python with "
                             "attnlab.practice.practice_item(NAME), or in a terminal with `attnlab practice NAME`. "
                             "To open the lesson anyway: gate(..., override=True) or ATTNLAB_GATE_OVERRIDE=1.")
        if reviews:
            lines.append("Due for review (answer them in the mastery check): " + ", ".join(reviews))
        lines += [f"Note: {n}" for n in store.notices]
        text = "\n".join(lines)
        markdown = "\n\n".join(line.replace("  - ", "* ") for line in lines)
        _show(text, markdown, [] if overridden else list(missing), store, set())
        return GateResult(lid, missing, overridden, reviews, text)
    except Exception as err:  # noqa: BLE001 - a gate must never break a lesson
        message = f"attnlab gate could not check your progress ({type(err).__name__}: {err}). The lesson stays open."
        print(message)
        return GateResult(str(lesson), (), True, (), message)


@dataclass
class MasteryCheck:
    """Items of an end-of-lesson check: the lesson's skills plus due reviews (``items``: PracticeItem)."""

    lesson: str
    skills: list[str] = field(default_factory=list)
    reviews: list[str] = field(default_factory=list)
    items: list[PracticeItem] = field(default_factory=list)
    message: str = ""

    def __str__(self) -> str:
        return self.message

    def _ipython_display_(self) -> None:  # already displayed by mastery_check()
        return None


def mastery_check(lesson: str | int, *, store: ProgressStore | None = None) -> MasteryCheck:
    """End-of-lesson practice: a card per skill of ``lesson`` plus one per due review item.

    Headless it prints each problem and how to answer it. Never raises.
    """
    try:
        lid = lesson_id(lesson)
        if not mastery.is_lesson(lid):
            text = _no_such_lesson(lesson)
            print(text)
            return MasteryCheck(lid, message=text)
        store = store if store is not None else ProgressStore()
        store.visit(lid)
        skills = [s.name for s in skills_for_lesson(lid)]
        reviews = mastery.due_reviews(store, lid)
        items = [PracticeItem(n, store, review=n in reviews) for n in skills + reviews]
        lines = [f"Mastery check for lesson {lid}: {len(skills)} skill(s)"
                 + (f" and {len(reviews)} review item(s)" if reviews else "") + "."]
        for it in items:
            lines.append(f"\n[{it.skill.name}]{' (review)' if it.review else ''} {it.skill.title}: {it.progress()}")
            lines.append(it.prompt)
        lines.append("\nAnswer with attnlab.practice.practice_item(NAME).check(ANSWER) or `attnlab practice NAME`.")
        lines += [f"Note: {n}" for n in store.notices]
        text = "\n".join(lines)
        markdown = f"### Mastery check: lesson {lid}\n\nAnswer each card until it says *mastered*."
        _show(text, markdown, skills + reviews, store, set(reviews))
        return MasteryCheck(lid, skills, reviews, items, text)
    except Exception as err:  # noqa: BLE001 - never break a lesson
        message = f"attnlab mastery check is unavailable ({type(err).__name__}: {err})."
        print(message)
        return MasteryCheck(str(lesson), message=message)


def practice(skill_name: str, *, store: ProgressStore | None = None, n_required: int | None = None):
    """One widget card for ``skill_name`` (the cell's value displays it); ``repr`` is text headless."""
    from .widgets import Card

    return Card(skill_name, store, n_required=n_required)
