"""Every skill: coverage of the lessons, right answers accepted (in every form), perturbed ones rejected."""
import re

import numpy as np
import pytest
import torch

from attnlab.practice import all_skills, format_answer, get_skill, skills_for_lesson
from attnlab.practice.answers import AnswerFormatError, equivalent, parse

from _helpers import perturb

SKILLS = [s.name for s in all_skills()]
SEEDS = [0, 1, 2, 3]


def test_every_lesson_has_skills():
    assert len(skills_for_lesson("00")) >= 1
    for lesson in range(1, 11):
        assert len(skills_for_lesson(lesson)) >= 2, f"lesson {lesson:02d} needs at least two skills"


def test_unknown_skill_suggests_close_names():
    with pytest.raises(KeyError, match="sdpa_full"):
        get_skill("sdpa_ful")


@pytest.mark.parametrize("name", SKILLS)
def test_expected_answer_checks_correct_and_perturbed_wrong(name):
    skill = get_skill(name)
    for seed in SEEDS:
        v = skill.variant(seed)
        assert v.prompt and v.kind == skill.kind
        assert skill.check(v, v.answer).correct
        typed = format_answer(v.answer, v.kind, v.decimals)
        fb = skill.check(v, typed)
        assert fb.correct and fb.misconception is None, (typed, fb)
        wrong = skill.check(v, perturb(v.answer, v.kind, v.decimals))
        assert not wrong.correct
        if v.kind in ("number", "int") and wrong.misconception is None:
            assert not re.search(rf"(?<![\d.]){re.escape(typed)}(?![\d.])", wrong.message), (
                "feedback must not reveal the expected answer")


@pytest.mark.parametrize("name", SKILLS)
def test_prompt_states_the_precision_it_judges_with(name):
    """A skill that accepts rounding says to how many decimals; one that judges exactly never mentions
    decimals, and its expected answer is exact (a typed answer off by a rounding step is refused)."""
    skill = get_skill(name)
    v = skill.variant(7)
    if skill.decimals is not None:
        assert f"{skill.decimals} decimals" in v.prompt
        assert v.decimals == skill.decimals
    else:
        assert "decimals" not in v.prompt, v.prompt
        assert v.decimals is None
        if v.kind in ("number", "int"):
            off = float(np.asarray(parse(v.answer, v.kind), dtype=float).flat[0]) + 0.01
            typed = off if np.ndim(v.answer) == 0 else None
            if typed is not None:
                assert not skill.check(v, typed).correct, f"{name}: {typed} accepted for {v.answer}"


def test_unreadable_answer_gets_a_clear_message_not_an_exception():
    skill = get_skill("sdpa_full")
    fb = skill.check(skill.variant(0), "banana")
    assert not fb.correct and "could not read" in fb.message.lower()


def test_first_wrong_entry_is_pointed_at_without_the_expected_value():
    skill = get_skill("sdpa_output")
    v = skill.variant(3)
    given = np.array(v.answer, dtype=float)
    given[1, 0] += 5.0
    fb = skill.check(v, given)
    assert not fb.correct and fb.where == (1, 0) and "row 1, column 0" in fb.message
    assert f"{v.answer[1][0]:.2f}" not in fb.message


# --------------------------------------------------------------------------- equivalent forms
def test_shape_forms():
    for form in [(2, 4, 8), [2, 4, 8], "(2, 4, 8)", "[2,4,8]", "2x4x8", "2, 4, 8", torch.Size([2, 4, 8]),
                 "torch.Size([2, 4, 8])"]:
        assert equivalent((2, 4, 8), form, "shape"), form
    assert not equivalent((2, 4, 8), (2, 8, 4), "shape")


def test_mask_forms():
    causal = torch.ones(3, 3, dtype=torch.bool).tril()
    expected = parse(causal, "mask")
    additive = torch.zeros(3, 3).masked_fill(~causal, float("-inf"))
    for form in [causal, causal.int(), causal.tolist(), causal.int().tolist(), additive, additive.tolist(),
                 "[[1,0,0],[1,1,0],[1,1,1]]", "1 0 0; 1 1 0; 1 1 1", "[[0,-inf,-inf],[0,0,-inf],[0,0,0]]",
                 "[[True, False, False], [True, True, False], [True, True, True]]", causal.numpy()]:
        assert equivalent(expected, form, "mask"), form
    assert not equivalent(expected, ~causal, "mask")
    with pytest.raises(AnswerFormatError):
        parse([[1, float("-inf")]], "mask")  # mixing 1 and -inf is ambiguous


def test_number_tolerance_matches_stated_precision():
    assert equivalent(0.7311, "0.73", "number", 2)
    assert equivalent(0.7311, 0.735, "number", 2)
    assert not equivalent(0.7311, 0.737, "number", 2)
    assert equivalent(0.75, "3/4", "number", 2)
    assert equivalent(12288, "12,288", "int") and equivalent(12288, "12_288", "int")
    assert equivalent(12288, "1.2288e4", "int") and not equivalent(12288, "12289", "int")


def test_matrix_forms():
    m = [[1.0, 2.0], [3.0, 4.0]]
    for form in [m, np.array(m), torch.tensor(m), "[[1, 2], [3, 4]]", "1 2; 3 4", ((1, 2), (3, 4)),
                 str(np.array(m)), repr(torch.tensor(m)), repr(np.array(m)), "[[1. 2.]\n [3. 4.]]",
                 "tensor([[1., 2.],\n        [3., 4.]], dtype=torch.float64)"]:
        assert equivalent(m, form, "matrix"), form
    assert not equivalent(m, [[1, 2, 0], [3, 4, 0]], "matrix")
    assert equivalent([0, 2], {2, 0}, "int_set") and equivalent([0, 2], "2, 0", "int_set")


def test_a_shape_with_the_wrong_number_of_axes_is_reported_as_such():
    from attnlab.practice import get_skill

    v = get_skill("mha_scores_shape").variant(0)
    B, H, L, S = v.answer
    msg = v.check((B, L, S)).message  # a named misconception wins over the generic message
    assert "head axis" in msg
    msg = v.check((B + 1, H)).message
    assert "2 axes" in msg and "has 4" in msg and str(S) not in msg  # no answer given away
    assert "entry 0" in v.check((B + 1, H, L, S)).message
