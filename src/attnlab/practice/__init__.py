"""``attnlab.practice``: fresh practice variants, diagnosis, mastery gates and review.

Contract used by lessons, exercises and the autograder::

    from attnlab.practice import get_skill, seed_for, learner_id, gate, mastery_check, practice

    v = get_skill("sdpa_full").variant(seed_for(learner_id(), "sdpa_full", 0))
    v.prompt, v.data, v.answer            # markdown, numbers shown, expected answer (from attnlab.nn)
    fb = get_skill("sdpa_full").check(v, [[2.0, 3.0], [2.34, 3.34]])
    fb.correct, fb.message, fb.misconception

    gate("03")            # first cell of a lesson: prerequisites, practice offered, never blocks
    mastery_check("03")   # last cell: cards for the lesson's skills + due review items
    practice("sdpa_full") # one card; practice_item("sdpa_full") is the headless version

Modules: ``core`` (Skill/Variant/Feedback, registry), ``skills/`` (one module per topic),
``working`` (each by-hand skill's plain formula, exact or with rounded working: the tolerance),
``answers`` (parsing, tolerant comparison), ``misconceptions`` (the one catalogue of named
mistakes), ``seeding``, ``record`` (the frozen SkillRecord), ``store`` (I/O only, locked),
``mastery`` (the pure transition, review, prerequisites), ``gates``, ``text``, ``widgets``.
See docs/mastery.md.
"""
from .answers import AnswerFormatError, format_answer
from .catalogue import all_skills, get_skill, skills_for_lesson
from .core import Feedback, Skill, Variant, lesson_id
from .gates import GateResult, MasteryCheck, gate, mastery_check, practice
from .mastery import PREREQUISITES, due_reviews, mastery_threshold, prerequisites
from .misconceptions import MISCONCEPTIONS, Misconception
from .seeding import attnlab_home, learner_id, seed_for
from .store import ProgressStore
from .text import PracticeItem, practice_item

__all__ = [
    "learner_id", "seed_for", "attnlab_home",
    "get_skill", "all_skills", "skills_for_lesson", "lesson_id", "Skill", "Variant", "Feedback",
    "gate", "mastery_check", "practice", "practice_item", "PracticeItem", "GateResult", "MasteryCheck",
    "ProgressStore", "PREREQUISITES", "prerequisites", "due_reviews", "mastery_threshold",
    "MISCONCEPTIONS", "Misconception", "format_answer", "AnswerFormatError",
]
