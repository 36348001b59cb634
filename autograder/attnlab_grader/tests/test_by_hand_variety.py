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
from attnlab_grader.judging.spec import ByHandCheck
from attnlab_grader.tests import qa

from attnlab_grader.tests.conftest import GRADED

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
    """1,000 pairs of random ids (the same pairs on every run; consecutive ids of a random chain, so 1,001
    variants are drawn, not 2,000): a's right answer is accepted for b in at most 10 of them.  A skill with a
    few dozen problems (a 6-entry list of mask sizes, 13 widths) fails here."""
    skill = get_skill(check.skill)
    rng = random.Random(f"pairs/{assignment}/{check.grade_id}")
    ids = [f"s{rng.getrandbits(48):012x}" for _ in range(PAIRS + 1)]
    shared = sum(_accepted(skill, check.variant(b), check.variant(a).answer) for a, b in zip(ids, ids[1:]))
    assert shared <= AT_MOST * PAIRS, f"{check.grade_id} ({check.skill}): {shared} of {PAIRS} pairs share an answer"
    # the measure can fail: the same id twice always shares
    assert _accepted(skill, check.variant("alice"), check.variant("alice").answer)


def _check():
    return ByHandCheck("test_scores_by_hand", variable="scores", skill="sdpa_scores",
                       key="02_scaled_dot_product_attention/test_scores_by_hand")


def _wrong_for(check, student):
    right = check.variant(student).answer
    return [[v + 7 for v in row] for row in right]


def test_no_learner_id_recorded_is_said_with_what_to_do():
    """A notebook whose setup cell published no id, with wrong by-hand numbers: the verdict says no id was
    recorded and how to set it (not a bare zero); the right numbers still pass, with no advice."""
    check = _check()
    out = check.judge(_wrong_for(check, "stu7"), {"other_learners": []}, "stu7")
    assert not out.ok and "records no learner id" in out.message, out.message
    assert "%env ATTNLAB_LEARNER=stu7" in out.message and "from the top" in out.message, out.message
    ok = check.judge(check.variant("stu7").answer, {"other_learners": []}, "stu7")
    assert ok.ok and "learner id" not in ok.message, ok.message


def test_another_learner_id_is_named_and_the_own_id_gets_no_advice():
    """Ran under the computer's user name ('jovyan'), graded as 'stu7', wrong numbers: the verdict names both
    ids and says what to do.  Ran under 'stu7' itself: a wrong answer is just wrong (no id advice)."""
    check = _check()
    out = check.judge(_wrong_for(check, "stu7"), {"other_learners": ["jovyan"]}, "stu7")
    assert not out.ok and "ran under learner id 'jovyan', not 'stu7'" in out.message, out.message
    assert "ATTNLAB_LEARNER=stu7" in out.message and out.flag is None, out
    own = check.judge(_wrong_for(check, "stu7"), {"other_learners": ["stu7"]}, "stu7")
    assert not own.ok and "learner id" not in own.message, own.message


def test_an_unreadable_answer_gets_no_learner_id_advice():
    """The advice is about which problem was shown; an answer that cannot be read is told how to write it."""
    out = _check().judge("1, 2, x", {"other_learners": []}, "stu7")
    assert not out.ok and "learner id" not in out.message, out.message
