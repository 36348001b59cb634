"""Judging like a tutor: rounded working accepted, every named mistake rejected and named,
enough fresh problems, and every plain-formula oracle agreeing with attnlab.nn."""
import random

import pytest
from _helpers import mistake_cases

from attnlab.practice import MISCONCEPTIONS, all_skills, format_answer, get_skill
from attnlab.practice.answers import compare, parse, plain
from attnlab.practice.working import Rounded

SKILLS = all_skills()
WORKING = [s.name for s in SKILLS if s.working is not None and s.decimals is not None]
PAIRS = [(s.name, m) for s in SKILLS for m in s.mistakes]


def _round(value, decimals):
    if isinstance(value, (list, tuple)):
        return [_round(v, decimals) for v in value]
    return round(float(value), decimals)


@pytest.mark.parametrize("name", WORKING)
def test_rounded_working_is_accepted(name):
    """A learner who rounds every intermediate value to the asked decimals (or only some of them, chosen
    independently of the checker's own samples) is told "Correct" on 200 problems."""
    skill = get_skill(name)
    rng = random.Random(2024)
    for seed in range(200):
        v = skill.variant(seed)
        for p in (1.0, 0.5):
            pen = _round(skill.working(v.data, Rounded(skill.decimals, p, rng)), skill.decimals)
            fb = skill.check(v, pen)
            assert fb.correct, (seed, p, pen, v.answer, fb.message)


@pytest.mark.parametrize(("skill_name", "mistake"), PAIRS, ids=[f"{s}-{m}" for s, m in PAIRS])
def test_every_named_mistake_is_rejected_and_named(skill_name, mistake):
    """Over 60 problems: the mistake's answer (exact, and as typed to the asked decimals) is never
    accepted, and the diagnosis shown includes that mistake (with the others that give the same number)."""
    skill = get_skill(skill_name)
    applied = 0
    for v, wrong in mistake_cases(skill, mistake, range(60)):  # where it applies (and is wrong) only
        applied += 1
        for answer in (wrong, format_answer(wrong, v.kind, v.decimals)):
            fb = skill.check(v, answer)
            assert not fb.correct, (v.seed, answer)
            assert mistake in fb.misconceptions, (v.seed, answer, fb)
            title = MISCONCEPTIONS[mistake].title
            assert title in fb.message
    assert applied >= 3, f"{mistake} applied to only {applied} of 60 {skill_name} problems"


def test_two_mistakes_with_the_same_number_are_both_named():
    skill = get_skill("attention_flops")
    v = skill.variant(0)
    fb = skill.check(v, skill.mistakes["flops_one_matmul"](v.data))
    assert set(fb.misconceptions) == {"flops_forget_factor_two", "flops_one_matmul"}
    assert "Which one" in fb.message
    kv = get_skill("kv_cache_bytes")
    for seed in range(200):
        v = kv.variant(seed)
        if v.data["dtype"] != "float32":
            fb = kv.check(v, kv.mistakes["bytes_as_numbers"](v.data))
            assert {"bytes_as_numbers", "kv_forget_factor_two"} <= set(fb.misconceptions)
            break
    ffn = get_skill("ffn_param_count")
    v = next(ffn.variant(s) for s in range(200) if ffn.variant(s).data["d_ff"] == 2 * ffn.variant(s).data["d_model"])
    fb = ffn.check(v, ffn.mistakes["ffn_count_one_layer"](v.data))
    assert "ffn_count_one_layer" in fb.misconceptions


@pytest.mark.parametrize("name", [s.name for s in SKILLS])
def test_at_least_three_named_mistakes_per_skill(name):
    assert len(get_skill(name).mistakes) >= 3


def test_the_common_mistakes_of_the_issue_are_named():
    named = {m for s in SKILLS for m in s.mistakes}
    for mistake in ("permutation_invariant", "params_weights_times_heads", "causal_upper_triangle", "k_qt",
                    "missing_padding_mask", "mask_padded_queries", "mask_fill_zero", "needless_causal_mask",
                    "tied_head_counted_twice", "params_times_heads", "combine_with_or", "causal_excludes_diagonal",
                    "bytes_as_numbers", "flops_one_matmul", "ffn_count_one_layer"):
        assert mistake in named, mistake


@pytest.mark.parametrize("name", [s.name for s in SKILLS])
def test_enough_distinct_problems(name):
    """At least 50 different problems over 1000 seeds (counted on the problems as built)."""
    skill = get_skill(name)
    prompts = {skill.build(random.Random(seed))[0] for seed in range(1000)}
    assert len(prompts) >= 50, len(prompts)


@pytest.mark.parametrize("name", [s.name for s in SKILLS if s.reference is not None])
def test_plain_formula_agrees_with_attnlab_nn(name):
    """Each skill's answer is its plain formula; attnlab.nn computes the same on 30 problems."""
    skill = get_skill(name)
    for seed in range(30):
        v = skill.variant(seed)
        ref = parse(plain(skill.reference(v.data)), skill.kind)
        assert compare(parse(v.answer, skill.kind), ref, skill.kind, None, 1e-6) is None, (seed, v.answer, ref)


def test_every_skill_has_an_nn_reference():
    assert [s.name for s in SKILLS if s.reference is None and s.kind not in ("choice", "choices", "order")] == []


def test_every_lesson_has_a_conceptual_item_with_named_distractors():
    for lesson in range(1, 11):
        concepts = [s for s in SKILLS if s.lesson == f"{lesson:02d}" and s.kind in ("choice", "choices", "order")]
        assert concepts, f"lesson {lesson:02d} has no conceptual item"
        for skill in concepts:
            v = skill.variant(0)
            if skill.kind == "choice":  # every option but the right one is a named misconception
                assert all(tag in MISCONCEPTIONS for _, tag in v.data["options"] if tag is not None)
            assert skill.check(v, format_answer(v.answer, skill.kind)).correct
