"""By-hand problems that cannot be shared: for every by-hand item of every set, two random learner ids get
problems whose right answers tell them apart, except with probability at most 1 %, measured over 1,000 random
id pairs (a copied by-hand answer then earns nothing for all but about 1 pair in 100).  A submission whose
notebook recorded no learner id, or another id than the one it is graded under, is told so in its by-hand
verdicts, with what to do."""
from __future__ import annotations

import random

import pytest

from attnlab.practice import get_skill
from attnlab.practice.answers import AnswerFormatError, compare, parse
from attnlab_grader.spec import ByHandCheck
from attnlab_grader.tests import qa

from .conftest import GRADED

PAIRS = 1000
AT_MOST = 0.01


def _by_hand_checks():
    return [(a, c) for a in GRADED for c in qa.spec(a).checks if isinstance(c, ByHandCheck)]


def _accepted(skill, variant, answer) -> bool:
    """``answer`` is accepted for ``variant`` (the checker's comparison, with the variant's own tolerance)."""
    try:
        given = parse(answer, skill.kind)
        return compare(parse(variant.answer, skill.kind), given, skill.kind, skill.decimals, variant.tol) is None
    except (AnswerFormatError, ValueError, TypeError):
        return False


@pytest.mark.parametrize("assignment, check", _by_hand_checks(), ids=lambda x: getattr(x, "grade_id", x))
def test_two_random_learners_share_a_by_hand_answer_at_most_1_percent(assignment, check):
    """1,000 pairs of random ids (the same pairs on every run): a's right answer is accepted for b in at most
    10 of them.  A skill with a few dozen problems (a 6-entry list of mask sizes, 13 widths) fails here."""
    skill = get_skill(check.skill)
    rng = random.Random(f"pairs/{assignment}/{check.grade_id}")
    shared = 0
    for _ in range(PAIRS):
        a, b = (f"s{rng.getrandbits(48):012x}" for _ in range(2))
        shared += _accepted(skill, check.variant(b), check.variant(a).answer)
    assert shared <= AT_MOST * PAIRS, f"{check.grade_id} ({check.skill}): {shared} of {PAIRS} pairs share an answer"
    # the measure can fail: the same id twice always shares
    assert _accepted(skill, check.variant("alice"), check.variant("alice").answer)
