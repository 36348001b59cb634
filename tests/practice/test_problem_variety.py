"""Every skill has enough different problems, every kind of problem in it too, and no problem is one where a
named mistake gives the right answer (the mistake could then not be told apart from a right answer)."""
import pytest

from attnlab.practice import all_skills, get_skill
from attnlab.practice.answers import AnswerFormatError, compare, parse

SKILLS = [s.name for s in all_skills()]
MOST_SEEDS = 400


@pytest.mark.parametrize("name", SKILLS)
def test_at_least_50_distinct_problems_and_10_per_kind(name):
    """Served problems (after the engine's rebuilds), counted by their statement: 50 different ones within
    400 seeds, and at least 10 (or every one there is, for a question with few orders of options) per kind."""
    skill = get_skill(name)
    prompts, per_kind = set(), {}
    for seed in range(MOST_SEEDS):
        v = skill.variant(seed)
        prompts.add(v.prompt)
        per_kind.setdefault(skill.kind_of(v), set()).add(v.prompt)
        if len(prompts) >= 50 and all(len(p) >= 10 for p in per_kind.values()) and (
                not skill.kinds or len(per_kind) == len(skill.kinds)):
            break
    assert len(prompts) >= 50, len(prompts)
    assert set(per_kind) == set(skill.kinds or [""]), sorted(per_kind)
    assert all(len(p) >= 10 for p in per_kind.values()), {k: len(p) for k, p in per_kind.items()}


@pytest.mark.parametrize("name", SKILLS)
def test_no_problem_where_a_named_mistake_gives_the_right_answer(name):
    """On 60 problems: every named mistake that applies gives an answer the checker refuses."""
    skill = get_skill(name)
    for seed in range(60):
        v = skill.variant(seed)
        expected = parse(v.answer, skill.kind)
        for mistake, wrong in skill.mistakes.items():
            try:
                value = wrong(v.data)
            except Exception:  # noqa: BLE001 - a mistake that cannot be computed here does not apply
                continue
            if value is None:
                continue
            try:
                same = compare(expected, parse(value, skill.kind), skill.kind, skill.decimals, v.tol) is None
            except AnswerFormatError:
                continue
            assert not same, (seed, mistake, v.prompt)
