"""The mastery rule, spaced review and lesson prerequisites.

* **Mastery**: a skill is mastered after ``N`` consecutive correct answers, each the first
  answer to a fresh variant with no hint shown (default ``N = 3``; set env
  ``ATTNLAB_MASTERY_N`` or pass ``n_required``). A wrong answer or a revealed hint resets
  the run to 0; a correct retry of the same variant is acknowledged but does not count.
* **Spaced review**: when a skill is mastered it is scheduled for review after
  ``interval_lessons`` lessons (2) **or** ``interval_days`` days (3), whichever comes first.
  A clean review doubles both intervals; a miss (or a hint) puts the skill back into
  practice (not mastered, run reset).
* **Prerequisites**: each lesson lists skills from earlier lessons that :func:`attnlab.practice.gate`
  checks.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .core import Feedback, Variant, get_skill, lesson_id
from .seeding import seed_for
from .store import ProgressStore

DEFAULT_N = 3
DAY = 86400.0

LESSONS = ("00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10")

PREREQUISITES: dict[str, tuple[str, ...]] = {
    "00": (),
    "01": ("warmup_softmax",),
    "02": ("soft_lookup_weights", "soft_lookup_output"),
    "03": ("sdpa_softmax_row", "sdpa_full"),
    "04": ("causal_mask_build", "masked_softmax"),
    "05": ("sdpa_scale", "sdpa_full"),
    "06": ("mha_shape_trace", "mha_param_count"),
    "07": ("combine_masks_build", "block_param_count"),
    "08": ("choose_mask", "causal_mask_build"),
    "09": ("next_token_targets", "top_k_probs"),
    "10": ("mha_param_count", "gpt_param_count"),
}


def mastery_threshold(n_required: int | None = None) -> int:
    """``n_required`` if given, else env ``ATTNLAB_MASTERY_N``, else 3 (always >= 1)."""
    if n_required is None:
        try:
            n_required = int(os.environ.get("ATTNLAB_MASTERY_N", DEFAULT_N))
        except ValueError:
            n_required = DEFAULT_N
    return max(1, int(n_required))


def prerequisites(lesson: str | int) -> tuple[str, ...]:
    """Prerequisite skills of ``lesson`` (unknown lessons have none)."""
    return PREREQUISITES.get(lesson_id(lesson), ())


@dataclass(frozen=True)
class Outcome:
    """What one checked answer did: the :class:`Feedback`, whether it ``counted`` towards
    mastery, the new ``streak``, ``mastered`` now, and a ``note`` for the learner."""

    feedback: Feedback
    counted: bool
    streak: int
    mastered: bool
    note: str


def current_variant(store: ProgressStore, skill: str, *, review: bool = False) -> Variant:
    """The open variant of ``skill`` for this learner, or a fresh one if none is open."""
    store.refresh()
    rec = store.skill(skill)
    if review and not rec["review"]:
        rec["solved"] = True  # a review is always a fresh problem
    if rec["current"] is None or rec["solved"]:
        rec.update(current=rec["served"], served=rec["served"] + 1, checked=False, hinted=0, solved=False,
                   review=review)
        store.save()
    return get_skill(skill).variant(seed_for(store.learner, skill, rec["current"]))


def fresh_variant(store: ProgressStore, skill: str) -> Variant:
    """Close the open variant (skip it) and serve a new one. Skipping does not reset the run."""
    store.refresh()
    rec = store.skill(skill)
    rec["solved"] = True
    return current_variant(store, skill, review=rec["review"] and not rec["checked"])


def reveal_hint(store: ProgressStore, skill: str) -> tuple[int, str]:
    """Reveal the next hint tier (1 = nudge, 2 = method) for the open variant; resets the run."""
    current_variant(store, skill)
    rec = store.skill(skill)
    tier = min(rec["hinted"] + 1, 2)
    if tier > rec["hinted"]:
        rec["hints"] += 1
    rec["hinted"] = tier
    rec["streak"] = 0
    store.save()
    return tier, get_skill(skill).hints[tier - 1]


def submit(store: ProgressStore, skill: str, answer, *, n_required: int | None = None) -> Outcome:
    """Check ``answer`` for the open variant of ``skill`` and update progress."""
    n = mastery_threshold(n_required)
    variant = current_variant(store, skill)
    rec = store.skill(skill)
    feedback = get_skill(skill).check(variant, answer)
    first, clean = not rec["checked"], rec["hinted"] == 0
    rec["attempts"] += 1
    rec["checked"] = True
    store.log(skill, feedback.correct, rec["hinted"], feedback.misconception)
    counted, note = False, ""
    if rec["review"]:
        if feedback.correct and first and clean:
            rec["interval_days"] *= 2
            rec["interval_lessons"] *= 2
            _schedule(store, rec, skill)
            counted, note = True, "Review passed: this skill comes back later."
        elif first:
            rec.update(mastered=False, streak=0, due_at=None, due_lesson=None, interval_days=3.0, interval_lessons=2)
            note = "Missed on review, so this skill is back in practice."
        rec["review"] = False
    elif feedback.correct and first and clean:
        rec["streak"] += 1
        counted = True
        if rec["streak"] >= n and not rec["mastered"]:
            rec.update(mastered=True, mastered_at=store.now(), mastered_lesson=store.lesson)
            _schedule(store, rec, skill)
            note = f"Mastered: {n} correct in a row on fresh problems."
        else:
            note = f"{min(rec['streak'], n)}/{n} in a row."
    elif feedback.correct:
        note = ("It does not count towards mastery (" + ("a hint was shown" if not clean else "a retry")
                + "); try a fresh problem.")
    else:
        rec["streak"] = 0
    if feedback.correct:
        rec["correct"] += 1
        rec["solved"] = True
    store.save()
    return Outcome(feedback, counted, rec["streak"], rec["mastered"], note)


def _schedule(store: ProgressStore, rec: dict, skill: str) -> None:
    """Next review: ``interval_days`` from now, or ``interval_lessons`` after the current lesson
    (or after the skill's own lesson, if the learner has not opened a later one)."""
    rec["due_at"] = store.now() + rec["interval_days"] * DAY
    base = max(store.lesson or "00", get_skill(skill).lesson)
    rec["due_lesson"] = f"{int(base) + rec['interval_lessons']:02d}"


def is_mastered(store: ProgressStore, skill: str) -> bool:
    return bool(store.peek(skill)["mastered"])


def is_due(store: ProgressStore, skill: str, lesson: str | None = None) -> bool:
    """True if ``skill`` is mastered and its review is due (by lesson reached or by time)."""
    rec = store.peek(skill)
    if not rec["mastered"]:
        return False
    lesson = lesson or store.lesson
    by_lesson = rec["due_lesson"] is not None and lesson is not None and lesson >= rec["due_lesson"]
    by_time = rec["due_at"] is not None and store.now() >= rec["due_at"]
    return by_lesson or by_time


def due_reviews(store: ProgressStore, lesson: str | int | None = None) -> list[str]:
    """Mastered skills from other lessons whose review is due at ``lesson`` (or now)."""
    from .core import all_skills

    lid = lesson_id(lesson) if lesson is not None else store.lesson
    return [s.name for s in all_skills() if s.lesson != lid and is_due(store, s.name, lid)]


def status(store: ProgressStore, skill: str) -> str:
    """``"mastered"``, ``"due for review"``, ``"in progress"`` or ``"not started"``."""
    rec = store.peek(skill)
    if rec["mastered"]:
        return "due for review" if is_due(store, skill) else "mastered"
    return "in progress" if rec["attempts"] or rec["served"] else "not started"
