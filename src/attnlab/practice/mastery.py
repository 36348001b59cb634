"""The mastery rule, spaced review and lesson prerequisites.

* **Mastery**: a skill is mastered after ``N`` consecutive correct answers, each the first
  answer to a fresh variant with no hint shown (default ``N = 3``; set env
  ``ATTNLAB_MASTERY_N`` or pass ``n_required``), **and** the run has met every kind of problem
  the skill contains (e.g. a causal mask with S = L *and* one with cached keys, S > L). A wrong
  answer, a hint or the worked answer resets the run to 0 (a hint or the worked answer looked at after
  the problem was answered right keeps it); a correct retry of the same variant is acknowledged but
  does not count. An answer that cannot be read changes nothing.
* **Spaced review**: when a skill is mastered it is scheduled for review after
  ``interval_lessons`` lessons (2) **or** when the FSRS scheduler (the ``fsrs`` library, Free
  Spaced Repetition Scheduler, Ye et al., KDD 2022) says the learner's memory of it needs it,
  whichever comes first (past the last lesson only FSRS counts). The practice answers before mastery are
  replayed into FSRS (:func:`learned`: a miss *Again*, after a hint *Hard*, clean *Good*), so the first
  review reflects how the skill was learned; mastery itself is rated *Good*; a clean
  review is *Good* and doubles the lesson interval; a miss (or a hint) on review is *Again* and puts
  the skill back into practice (not mastered, run reset). The record keeps FSRS's card (stability,
  difficulty, state), so the days follow the learner's measured memory.
* **Prerequisites**: each lesson lists skills from earlier lessons that :func:`attnlab.practice.gate`
  checks; they live in the course registry, :mod:`attnlab.course`.

Every change of a learner's state is :func:`transition` ``(record, event) -> (record, Result)``, a
pure function tested as a table; the functions below only pick the problem, check the answer
and hand the event to the store (:meth:`~attnlab.practice.store.ProgressStore.update`).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, Mapping, Union

from .. import course
from ..settings import course_settings
from .catalogue import get_skill
from .core import Feedback, Variant, lesson_id
from .record import HISTORY, SkillRecord
from .seeding import seed_for
from .store import ProgressStore

DEFAULT_N = 3
DAY = 86400.0

# Derived from the course registry (attnlab.course, the one home of lessons and prerequisites);
# kept here under their old names for compatibility.
LESSONS: tuple[str, ...] = tuple(entry.id for entry in course.lessons())
LAST_LESSON = LESSONS[-1]
PREREQUISITES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {entry.id: entry.prerequisites for entry in course.lessons()})


def mastery_threshold(n_required: int | None = None) -> int:
    """``n_required`` if given, else ``ATTNLAB_MASTERY_N`` (:class:`attnlab.settings.CourseSettings`,
    default 3); always >= 1.

    Raises:
        attnlab.settings.SettingsError: ``ATTNLAB_MASTERY_N`` (or another variable) is malformed."""
    if n_required is None:
        n_required = course_settings().mastery_n
    return max(1, int(n_required))


def is_lesson(lesson: str | int) -> bool:
    """True if ``lesson`` names one of the course's lessons (:func:`attnlab.course.lessons`)."""
    try:
        course.lesson(lesson)
    except course.UnknownLesson:
        return False
    return True


def prerequisites(lesson: str | int) -> tuple[str, ...]:
    """Prerequisite skills of ``lesson`` (:attr:`attnlab.course.Lesson.prerequisites`; unknown lessons have
    none). Raises ValueError when ``lesson`` is not a lesson number at all (``"banana"``)."""
    lid = lesson_id(lesson)
    return course.lesson(lid).prerequisites if is_lesson(lid) else ()


# ============================================================================ events
@dataclass(frozen=True)
class Serve:
    """Open problem number ``attempt`` (of kind ``kind``, answer digest ``key``); ``review``: a review item."""

    attempt: int
    kind: str = ""
    key: str = ""
    review: bool = False


@dataclass(frozen=True)
class Hint:
    """The learner asked for the next hint tier."""


@dataclass(frozen=True)
class Reveal:
    """The learner asked for the worked answer of the open problem."""


@dataclass(frozen=True)
class Answer:
    """A readable answer to the open problem was checked.

    ``correct``, ``misconception`` (named mistake or None), ``now`` (epoch seconds), ``lesson``
    (highest lesson opened, or None), ``skill_lesson`` (the skill's lesson), ``n_required``,
    ``kinds`` (every kind of problem the skill contains).
    """

    correct: bool
    misconception: str | None = None
    now: float = 0.0
    lesson: str | None = None
    skill_lesson: str = "00"
    n_required: int = DEFAULT_N
    kinds: tuple[str, ...] = ()


Event = Union[Serve, Hint, Reveal, Answer]


@dataclass(frozen=True)
class Result:
    """What an event did: ``counted`` towards mastery (or a passed review), ``note`` for the learner,
    ``tier`` of feedback the learner should see (1: what is wrong, 2: also the method)."""

    counted: bool = False
    note: str = ""
    tier: int = 1


@functools.lru_cache(maxsize=1)
def scheduler():
    """The FSRS scheduler (default parameters, 90 % desired retention). A mastered skill is past learning,
    so no same-day learning steps, and no random fuzz (the schedule is a pure function of the answers)."""
    from fsrs import Scheduler

    return Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)


def _when(now: float) -> datetime:
    return datetime.fromtimestamp(now, timezone.utc)


def _card(rec: SkillRecord, now: float):
    """The record's FSRS card; a record from before FSRS gets one from its state (mastered: in review, its
    last interval as the stability), a fresh one otherwise."""
    from fsrs import Card, State

    if rec.card is not None:
        return Card.from_dict(rec.card)
    if rec.mastered:
        last = rec.mastered_at if rec.mastered_at is not None else now - rec.interval_days * DAY
        return Card(card_id=1, state=State.Review, stability=rec.interval_days, difficulty=5.0,  # mid of 1..10
                    due=_when(rec.due_at if rec.due_at is not None else now), last_review=_when(min(last, now)))
    return Card(card_id=1, due=_when(now))


def rate(rec: SkillRecord, rating: str, now: float) -> SkillRecord:
    """``rec`` after FSRS reviews its card with ``rating`` ("again" or "good") at ``now``: the new card and
    ``due_at``, ``interval_days`` from it."""
    from fsrs import Rating

    card, _ = scheduler().review_card(_card(rec, now), Rating.Good if rating == "good" else Rating.Again,
                                      review_datetime=_when(now))
    due = card.due.timestamp()
    return rec.but(card=card.to_dict(), due_at=due, interval_days=round((due - now) / DAY, 6))


def practice_rating(correct: bool, hinted: int) -> str:
    """The FSRS rating of one practice answer: a miss is "again", a right answer after a hint "hard", a right
    answer on its own "good"."""
    return "good" if correct and not hinted else "hard" if correct else "again"


def learned(rec: SkillRecord, now: float) -> SkillRecord:
    """``rec`` with an FSRS card that has seen how the skill was learned: every practice answer in its history but
    the last (the one being scheduled, ``now``), replayed into the scheduler in time order with
    :func:`practice_rating`. A record that already has a card, or is already mastered, is returned unchanged.

    So a learner who missed on the way to mastery starts with a lower stability, hence an earlier first review,
    than one who never missed (FSRS: Ye et al., KDD 2022; same-day answers use its short-term stability)."""
    from fsrs import Card, Rating

    if rec.card is not None or rec.mastered or len(rec.history) < 2:
        return rec
    ratings = {"good": Rating.Good, "hard": Rating.Hard, "again": Rating.Again}
    card, last = None, None
    for when, correct, hinted, _ in rec.history[:-1]:
        when = min(max(float(when), last if last is not None else float(when)), now)
        card = card or Card(card_id=1, due=_when(when))
        card, _ = scheduler().review_card(card, ratings[practice_rating(bool(correct), int(hinted))],
                                          review_datetime=_when(when))
        last = when
    return rec.but(card=card.to_dict()) if card is not None else rec


def _schedule(rec: SkillRecord, now: float, lesson: str | None, skill_lesson: str) -> SkillRecord:
    """Next review: when FSRS says (rated Good now, on a card that has seen the practice before mastery:
    :func:`learned`), or ``interval_lessons`` after the current lesson (or after the skill's own lesson, if the
    learner has not opened a later one); no lesson past the last one."""
    rec = learned(rec, now)
    base = max(lesson or "00", skill_lesson)
    due = int(base) + rec.interval_lessons
    return rate(rec, "good", now).but(due_lesson=f"{due:02d}" if due <= int(LAST_LESSON) else None)


def transition(rec: SkillRecord, event: Event) -> tuple[SkillRecord, Result]:
    """The mastery engine: the record after ``event``, and what it did. Pure (no I/O, no clock)."""
    if isinstance(event, Serve):
        return rec.but(current=event.attempt, served=max(rec.served, event.attempt + 1), kind=event.kind,
                       last_key=event.key, misses=0, hinted=0, shown=False, solved=False,
                       review=event.review), Result()
    if isinstance(event, Hint):
        tier = min(rec.hinted + 1, 2)
        if rec.solved:  # help on a problem already answered cannot have helped that answer: the run stays
            return rec.but(hinted=tier, hints=rec.hints + (tier > rec.hinted)), Result(tier=tier)
        return rec.but(hinted=tier, hints=rec.hints + (tier > rec.hinted), streak=0, run_kinds=()), Result(tier=tier)
    if isinstance(event, Reveal):
        if rec.solved:
            return rec.but(shown=True, hinted=2), Result(note="Already answered: looking at the worked answer "
                                                              "keeps your run.", tier=2)
        return rec.but(shown=True, hinted=2, streak=0, run_kinds=()), Result(tier=2)
    if not isinstance(event, Answer):
        raise TypeError(f"unknown event {event!r}")

    first, clean, fresh = rec.misses == 0 and not rec.solved, rec.clean, not rec.solved
    history = (rec.history + ((round(event.now, 3), event.correct, rec.hinted, event.misconception),))[-HISTORY:]
    rec = rec.but(attempts=rec.attempts + 1, correct=rec.correct + event.correct, history=history,
                  misses=rec.misses + (not event.correct and fresh),
                  solved=rec.solved or event.correct)
    tier = 1 if first and clean else 2
    n = event.n_required
    if not fresh:  # the problem was already solved: nothing more to earn or lose on it
        return rec, Result(note="You already solved this problem; take a fresh one (Next problem / n).", tier=tier)
    if rec.review:
        rec = rec.but(review=False)
        if event.correct and clean:
            rec = _schedule(rec.but(interval_lessons=rec.interval_lessons * 2), event.now, event.lesson,
                            event.skill_lesson)
            return rec, Result(True, "Review passed: this skill comes back later.", tier)
        if first:
            rec = rate(rec, "again", event.now).but(mastered=False, streak=0, run_kinds=(), due_at=None,
                                                    due_lesson=None, interval_lessons=2)
            return rec, Result(False, "Missed on review, so this skill is back in practice.", tier)
        return rec, Result(tier=tier)
    if event.correct and clean:
        kinds = rec.run_kinds + ((rec.kind,) if rec.kind and rec.kind not in rec.run_kinds else ())
        rec = rec.but(streak=rec.streak + 1, run_kinds=kinds)
        missing = [k for k in event.kinds if k not in kinds]
        if rec.mastered:
            return rec, Result(True, "Correct again (already mastered).", tier)
        if rec.streak >= n and not missing:
            rec = _schedule(rec, event.now, event.lesson, event.skill_lesson)  # before: not yet in review
            rec = rec.but(mastered=True, mastered_at=event.now, mastered_lesson=event.lesson)
            return rec, Result(True, f"Mastered: {n} correct in a row on fresh problems.", tier)
        note = f"{min(rec.streak, n)}/{n} in a row."
        if rec.streak >= n:
            note += " Mastery also needs this kind of problem: " + ", ".join(missing) + " (coming next)."
        return rec, Result(True, note, tier)
    if event.correct:
        why = "the worked answer was shown" if rec.shown else "a hint was shown" if rec.hinted else "a retry"
        return rec, Result(False, f"It does not count towards mastery ({why}); try a fresh problem.", tier)
    return rec.but(streak=0, run_kinds=()), Result(False, "", tier)


# ============================================================================ serving problems
def _answer_key(variant: Variant) -> str:
    return json.dumps(variant.answer, sort_keys=True, default=str)


def _pick(skill: str, learner: str, rec: SkillRecord, n: int, review: bool) -> tuple[int, Variant]:
    """The next problem: the first attempt index from ``rec.served`` whose answer differs from the last
    problem's (no immediate repeat) and, when the run needs every remaining slot for a kind of problem it
    has not met, whose kind is one of those."""
    sk = get_skill(skill)
    missing = [k for k in sk.kinds if k not in rec.run_kinds]
    need_kind = bool(missing) and not review and (n - rec.streak) <= len(missing)
    first = None
    for attempt in range(rec.served, rec.served + 200):
        v = sk.variant(seed_for(learner, skill, attempt))
        if _answer_key(v) == rec.last_key:
            continue
        first = first or (attempt, v)
        if not need_kind or sk.kind_of(v) in missing:
            return attempt, v
    return first if first is not None else (rec.served, sk.variant(seed_for(learner, skill, rec.served)))


def _serve(store: ProgressStore, skill: str, *, review: bool, n_required: int | None = None) -> SkillRecord:
    n = mastery_threshold(n_required)
    sk = get_skill(skill)

    def change(rec: SkillRecord) -> SkillRecord:
        attempt, v = _pick(skill, store.learner, rec, n, review)
        return transition(rec, Serve(attempt, sk.kind_of(v), _answer_key(v), review))[0]

    return store.update(skill, change)


def _open_variant(store: ProgressStore, skill: str, rec: SkillRecord) -> Variant:
    # Every caller passes a record that has been served (``_serve`` sets ``current``).
    assert rec.current is not None, f"no problem of {skill!r} has been served"
    return get_skill(skill).variant(seed_for(store.learner, skill, rec.current))


def current_variant(store: ProgressStore, skill: str, *, review: bool = False,
                    n_required: int | None = None) -> Variant:
    """The open variant of ``skill`` for this learner, or a fresh one if none is open (or if a
    review is asked for and the open problem is not one: a review is always a fresh problem)."""
    rec = store.get(skill)
    if rec.current is None or rec.solved or (review and not rec.review):
        rec = _serve(store, skill, review=review, n_required=n_required)
    return _open_variant(store, skill, rec)


def fresh_variant(store: ProgressStore, skill: str, *, n_required: int | None = None) -> Variant:
    """Close the open variant (skip it) and serve a new one. Skipping does not reset the run; an
    unanswered review item is replaced by another review item."""
    rec = store.get(skill)
    review = rec.review and rec.misses == 0 and not rec.solved
    return _open_variant(store, skill, _serve(store, skill, review=review, n_required=n_required))


def shown_variant(store: ProgressStore, skill: str) -> Variant:
    """The problem on screen: the last one served, even if it was already answered right (the learner moves
    on with :func:`fresh_variant`); a fresh one if none was ever served."""
    rec = store.get(skill)
    if rec.current is None:
        rec = _serve(store, skill, review=False)
    return _open_variant(store, skill, rec)


def reveal_hint(store: ProgressStore, skill: str) -> tuple[int, str]:
    """Reveal the next hint tier (1 = nudge, 2 = method) for the problem on screen (:func:`shown_variant`).
    Before it is answered right this resets the run; after, the run is kept (the answer was already given)."""
    shown_variant(store, skill)
    rec = store.update(skill, lambda r: transition(r, Hint())[0])
    return rec.hinted, get_skill(skill).hints[rec.hinted - 1]


def reveal_answer(store: ProgressStore, skill: str) -> str:
    """The worked answer (method and result) of the problem on screen (:func:`shown_variant`). Before it is
    answered right the problem no longer counts and the run resets; after a right answer the run is kept."""
    variant = shown_variant(store, skill)
    store.update(skill, lambda r: transition(r, Reveal())[0])
    return get_skill(skill).worked(variant)


@dataclass(frozen=True)
class Outcome:
    """What one checked answer did: the :class:`Feedback`, whether it ``counted`` towards
    mastery, the new ``streak``, ``mastered`` now, and a ``note`` for the learner."""

    feedback: Feedback
    counted: bool
    streak: int
    mastered: bool
    note: str


def submit(store: ProgressStore, skill: str, answer: Any, *, n_required: int | None = None) -> Outcome:
    """Check ``answer`` for the open variant of ``skill`` and update progress.

    An answer that cannot be read (a typo, ``1/0``) changes nothing: the feedback says what could
    not be read (``feedback.readable`` is False) and the run, attempts and problem stay as they were.
    """
    n = mastery_threshold(n_required)
    sk = get_skill(skill)
    variant = current_variant(store, skill, n_required=n)
    probe = sk.check(variant, answer)
    if not probe.readable:
        rec = store.get(skill)
        return Outcome(probe, False, rec.streak, rec.mastered, "Nothing was recorded: fix the answer and check again.")
    results: list[Result] = []

    def change(rec: SkillRecord) -> SkillRecord:
        results.clear()
        new, result = transition(rec, Answer(probe.correct, probe.misconception, store.now(), store.lesson,
                                             sk.lesson, n, sk.kinds))
        results.append(result)
        return new

    rec = store.update(skill, change)
    result = results[0]
    feedback = probe if result.tier == 1 or probe.correct else sk.check(variant, answer, tier=2)
    return Outcome(feedback, result.counted, rec.streak, rec.mastered, result.note)


def is_mastered(store: ProgressStore, skill: str) -> bool:
    return store.get(skill).mastered


def is_due(store: ProgressStore, skill: str, lesson: str | None = None) -> bool:
    """True if ``skill`` is mastered and its review is due (by lesson reached or by time)."""
    rec = store.get(skill)
    if not rec.mastered:
        return False
    lesson = lesson or store.lesson
    by_lesson = rec.due_lesson is not None and lesson is not None and lesson >= rec.due_lesson
    by_time = rec.due_at is not None and store.now() >= rec.due_at
    return by_lesson or by_time


def due_reviews(store: ProgressStore, lesson: str | int | None = None) -> list[str]:
    """Mastered skills from other lessons whose review is due at ``lesson`` (or now)."""
    from .catalogue import all_skills

    lid = lesson_id(lesson) if lesson is not None else store.lesson
    return [s.name for s in all_skills() if s.lesson != lid and is_due(store, s.name, lid)]


def status(store: ProgressStore, skill: str) -> str:
    """``"mastered"``, ``"due for review"``, ``"in progress"`` (answered at least once) or ``"not started"`` (no
    answer yet, even if a problem was shown)."""
    rec = store.get(skill)
    if rec.mastered:
        return "due for review" if is_due(store, skill) else "mastered"
    return "in progress" if rec.attempts else "not started"
