"""Every misconception is recognised on the wrong answer it produces, and never on a right answer."""
import pytest

from attnlab.practice import MISCONCEPTIONS, all_skills, format_answer, get_skill

PAIRS = [(s.name, m) for s in all_skills() for m in s.mistakes]
SEEDS = range(40)


def _used_by_grading() -> set[str]:
    """Names the autograder's QA mistakes use (``# mistake: <name>`` in solutions/*/wrong/*.py)."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "solutions"
    return {m for p in root.glob("*/wrong/*.py") for m in re.findall(r"^# mistake: *(\w+)", p.read_text(), re.M)}


def test_catalogue_is_large_and_every_entry_is_used():
    used = {m for _, m in PAIRS} | _used_by_grading()
    assert len(MISCONCEPTIONS) >= 12
    assert set(MISCONCEPTIONS) == used, f"unused: {set(MISCONCEPTIONS) - used}; unknown: {used - set(MISCONCEPTIONS)}"


@pytest.mark.parametrize(("skill_name", "mistake"), PAIRS, ids=[f"{s}-{m}" for s, m in PAIRS])
def test_misconception_detected_on_its_wrong_answer(skill_name, mistake):
    skill = get_skill(skill_name)
    unique_hits = 0
    for seed in SEEDS:
        v = skill.variant(seed)
        wrong = skill.wrong_answers(v)
        if mistake not in wrong:
            continue  # does not apply to these numbers (or coincides with the right answer)
        fb = skill.check(v, wrong[mistake])
        assert not fb.correct
        same = {name for name, value in wrong.items()
                if skill.check(v, value).misconception is not None and _same(skill, v, value, wrong[mistake])}
        assert fb.misconception in same | {mistake}, (seed, fb)
        if same == {mistake}:
            assert fb.misconception == mistake
            title = MISCONCEPTIONS[mistake].title
            assert title in fb.message
            unique_hits += 1
        if unique_hits >= 3:
            break
    assert unique_hits >= 1, f"{mistake} was never identified for {skill_name} in {len(SEEDS)} seeds"


def _same(skill, v, a, b):
    return format_answer(a, skill.kind, skill.decimals) == format_answer(b, skill.kind, skill.decimals)


@pytest.mark.parametrize("skill_name", sorted({s for s, _ in PAIRS}))
def test_no_misconception_reported_for_a_right_answer(skill_name):
    skill = get_skill(skill_name)
    for seed in range(10):
        v = skill.variant(seed)
        typed = format_answer(v.answer, v.kind, v.decimals)
        for answer in (v.answer, typed):
            fb = skill.check(v, answer)
            assert fb.correct and fb.misconception is None
