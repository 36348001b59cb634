"""The skills for the rectangular causal mask, perplexity and beam search,
answered as a learner with a pen would: right answers in several forms, rounded working, natural mistakes, typos."""
import math

import pytest
import torch

from attnlab.nn import causal_mask
from attnlab.practice import get_skill, skills_for_lesson
from attnlab.practice.answers import plain
from attnlab.practice.core import Variant
from attnlab.practice.working import reach


def problem(name: str, data: dict) -> Variant:
    """A variant with these numbers (as the engine would serve it), independent of how build draws them."""
    skill = get_skill(name)
    tol = reach(skill.working, data, skill.decimals) if skill.working and skill.decimals else None
    return Variant(name, 0, "", data, plain(skill.solve(data)), skill.kind, skill.decimals, skill.tables, tol)


def named(v: Variant, answer, tier: int = 1):
    fb = v.check(answer, tier)
    assert not fb.correct and fb.readable, (answer, fb)
    return fb.misconceptions


def test_the_new_skills_are_practised_in_their_lessons():
    assert "rect_causal_mask" in [s.name for s in skills_for_lesson("03")]
    lesson_08 = [s.name for s in skills_for_lesson("08")]
    assert "perplexity" in lesson_08 and "beam_search_steps" in lesson_08


# ------------------------------------------------------------------ rectangular causal mask
def test_rect_mask_the_lessons_worked_example():
    """L = 2 new queries (positions 3 and 4) over S = 5 keys: lesson 03's example."""
    v = problem("rect_causal_mask", {"L": 2, "S": 5})
    for right in ([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], "1 1 1 1 0; 1 1 1 1 1", causal_mask(5)[-2:],
                  "[[0, 0, 0, 0, -inf], [0, 0, 0, 0, 0]]",
                  "[[True, True, True, True, False], [True, True, True, True, True]]"):
        assert v.check(right).correct, right
    assert named(v, torch.ones(2, 5).tril()) == ("causal_kv_misaligned",)  # the lesson's "classic mistake"
    assert named(v, torch.ones(2, 5).triu(3)) == ("causal_upper_triangle",)
    assert named(v, [[1, 1, 1, 0, 0], [1, 1, 1, 1, 0]]) == ("causal_excludes_diagonal",)
    assert named(v, ~causal_mask(2, 5)) == ("inverted_mask",)  # True = blocked
    assert named(v, causal_mask(5)) == ("rect_mask_square",)
    fb = v.check([[1, 1, 1, 1, 0], [1, 1, 1, 1]])  # a typo: one entry short
    assert not fb.readable and "same length" in fb.message
    fb = v.check([[1, 1, 1, 1, 1], [1, 1, 1, 1, 1]])  # an unnamed slip: points at the entry, gives nothing away
    assert fb.where == (0, 4) and "row 0, column 4" in fb.message


def test_rect_mask_one_new_token_sees_every_key():
    v = problem("rect_causal_mask", {"L": 1, "S": 4})
    assert v.check("[[1, 1, 1, 1]]").correct and v.problem_kind == "one new token (L = 1)"
    assert named(v, [[1, 0, 0, 0]]) == ("causal_kv_misaligned",)
    assert named(v, [[1, 1, 1, 0]]) == ("causal_excludes_diagonal",)
    fb = v.check([[1, 0, 0, 0]], tier=2)
    assert "i + (S − L)" in fb.message  # the second miss hears why


def test_rect_mask_prompts_state_l_and_s_and_both_kinds_occur():
    skill = get_skill("rect_causal_mask")
    kinds = {skill.kind_of(skill.variant(seed)) for seed in range(40)}
    assert kinds == set(skill.kinds)
    for seed in range(20):
        v = skill.variant(seed)
        assert v.data["S"] > v.data["L"] >= 1
        assert f"({v.data['L']} × {v.data['S']})" in v.prompt


# ------------------------------------------------------------------ perplexity
def test_perplexity_from_probabilities_by_hand():
    v = problem("perplexity", {"form": "probs", "probs": [0.25, 0.1, 0.5]})
    exact = (0.25 * 0.1 * 0.5) ** (-1 / 3)  # 80^(1/3) = 4.3089
    assert math.isclose(v.answer, exact)
    pen = math.exp(round((1.39 + 2.30 + 0.69) / 3, 2))  # −ln p to 2 decimals, their mean to 2 decimals
    for right in ("4.31", 4.309, "4.3", pen):
        assert v.check(right).correct, right
    assert named(v, "5.33") == ("ppl_arithmetic_mean",)  # mean of 1/p = (4 + 10 + 2) / 3
    assert named(v, "80") == ("loss_summed",)  # exp of the summed loss = 1 / (p1 p2 p3)
    assert named(v, "0.23") == ("ppl_reciprocal",)  # exp(mean ln p)
    assert named(v, "1.89") == ("ppl_log10_then_exp",)  # calculator 'log' then e^x
    assert named(v, "8.23") == ("ppl_log2_then_exp",)
    assert named(v, "2.75") == ("ppl_base2_of_nats",)
    assert named(v, "1.46") == ("ppl_is_loss",)
    assert v.check("4,31").correct  # a decimal comma, as much of Europe writes it
    assert named(v, "5,33") == ("ppl_arithmetic_mean",)
    fb = v.check("4.40")  # off by more than rounding can explain, and no known mistake
    assert fb.misconception is None and "4.31" not in fb.message


def test_perplexity_from_a_summed_loss_and_from_a_mean_loss():
    v = problem("perplexity", {"form": "sum", "loss": 3.0, "n": 6})
    assert v.check("1.65").correct and v.problem_kind == "from a loss"
    assert named(v, "20.09") == ("loss_summed",)
    assert named(v, "0.5") == ("ppl_is_loss",)
    v = problem("perplexity", {"form": "mean", "loss": 2.13})
    assert v.check("8.41").correct
    assert not v.check("8.42").correct  # the loss is given exactly: only the final rounding is allowed
    assert named(v, "4.38") == ("ppl_base2_of_nats",)
    why = v.check("4.38", tier=2).message
    assert "e^loss" in why and "Method:" in why


# ------------------------------------------------------------------ beam search
# p(y1) = [0.5, 0.4, 0.1]; greedy takes 0 then 1 (0.5 · 0.5 = 0.25), a beam of width 2 also keeps 1 and
# finds 1 then 1 (0.4 · 0.7 = 0.28), as in lesson 08's worked example.
TABLE = {"V": 3, "k": 2, "first": [0.5, 0.4, 0.1], "next": [[0.2, 0.5, 0.3], [0.1, 0.7, 0.2], [0.3, 0.6, 0.1]]}


def test_beam_sequences_and_greedy_by_hand():
    v = problem("beam_search_steps", {**TABLE, "ask": "sequences"})
    assert v.check([[1, 1], [0, 1]]).correct and v.check("1 1; 0 1").correct
    assert named(v, [[0, 1]]) == ("beam_as_greedy",)
    assert named(v, [[0, 1], [0, 2]]) == ("beam_greedy_first_step",)  # only token 0 survived step 1
    assert named(v, [[0, 1], [1, 1]]) == ("beam_not_best_first",)
    v = problem("beam_search_steps", {**TABLE, "ask": "greedy"})
    assert v.check([[0, 1], [1, 1]]).correct and v.problem_kind == "greedy vs beam"
    assert named(v, [[0, 1], [0, 1]]) == ("beam_as_greedy",)
    v = problem("beam_search_steps", {**TABLE, "ask": "probs"})
    assert v.check([0.28, 0.25]).correct and v.check("0.28 0.25").correct
    assert named(v, [0.25]) == ("beam_as_greedy",)
    assert named(v, [0.25, 0.28]) == ("beam_not_best_first",)


def test_beam_probabilities_ranked_by_the_last_step_or_summed():
    v = problem("beam_search_steps", {"V": 2, "k": 2, "ask": "probs", "first": [0.7, 0.3],
                                      "next": [[0.1, 0.9], [0.2, 0.8]]})
    assert v.check([0.63, 0.24]).correct
    assert named(v, [0.9, 0.8]) == ("beam_rank_last_step",)
    assert named(v, [1.6, 1.1]) == ("beam_sum_probs",)
    assert named(v, [0.63, 0.07]) == ("beam_greedy_first_step",)
    fb = v.check([0.63, 0.42])
    assert fb.misconception is None and fb.where == (1,)


def test_beam_sequences_ranked_by_the_last_step_or_summed():
    """0.7 · 0.6 = 0.42 and 0.7 · 0.4 = 0.28 beat 0.3 · 0.9 = 0.27, though 0.9 is the likeliest last step and
    0.3 + 0.9 = 1.2 the second-largest sum."""
    v = problem("beam_search_steps", {"V": 2, "k": 2, "ask": "sequences", "first": [0.7, 0.3],
                                      "next": [[0.6, 0.4], [0.1, 0.9]]})
    assert v.check([[0, 0], [0, 1]]).correct
    assert named(v, [[1, 1], [0, 0]]) == ("beam_rank_last_step",)
    assert named(v, [[0, 0], [1, 1]]) == ("beam_sum_probs",)
    assert "product" in v.check([[0, 0], [1, 1]], tier=2).message


def test_beam_reference_is_attnlab_nn_beam_search():
    skill = get_skill("beam_search_steps")
    for ask in ("sequences", "probs", "greedy"):
        data = {**TABLE, "ask": ask}
        ref, mine = skill.reference(data), skill.solve(data)
        assert (ref == pytest.approx(mine)) if ask == "probs" else (ref == mine), (ask, ref, mine)
