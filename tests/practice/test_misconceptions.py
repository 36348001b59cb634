"""The catalogue: every entry used by a skill, none reported on a right answer (recognition: test_judgement)."""
import pytest

from attnlab.practice import MISCONCEPTIONS, all_skills, format_answer, get_skill

PAIRS = [(s.name, m) for s in all_skills() for m in s.mistakes]


def _used_by_grading() -> set[str]:
    """Names the autograder uses: keys of ``FunctionCheck.mistakes`` in solutions/*/grading.py and
    ``# mistake: <name>`` headers of the QA cases in solutions/*/wrong/*.py."""
    from pathlib import Path

    from attnlab_grader.judging.spec import load_spec, named_mistakes
    root = Path(__file__).resolve().parents[2] / "solutions"
    return {m for p in sorted(root.glob("*/grading.py")) for m in named_mistakes(load_spec(p))}


def test_catalogue_is_large_and_every_entry_is_used():
    used = {m for _, m in PAIRS} | _used_by_grading()
    assert len(MISCONCEPTIONS) >= 12
    assert set(MISCONCEPTIONS) == used, f"unused: {set(MISCONCEPTIONS) - used}; unknown: {used - set(MISCONCEPTIONS)}"


@pytest.mark.parametrize("skill_name", sorted({s for s, _ in PAIRS}))
def test_no_misconception_reported_for_a_right_answer(skill_name):
    skill = get_skill(skill_name)
    for seed in range(10):
        v = skill.variant(seed)
        typed = format_answer(v.answer, v.kind, v.decimals)
        for answer in (v.answer, typed):
            fb = skill.check(v, answer)
            assert fb.correct and fb.misconception is None
