"""attnlab.practice.problem: graded by-hand problems shown without their answer; the learner id."""
import pytest

from attnlab.practice import get_skill, learner_id, seed_for
from attnlab.practice.problem import check_form, learner_note, problem_prompt, show_problem


def test_problem_prompt_is_the_variants_prompt_without_building_the_variant(monkeypatch):
    calls = []
    skill = get_skill("sdpa_scores")
    monkeypatch.setattr(type(skill), "variant", lambda self, seed: calls.append(seed))
    text = problem_prompt("sdpa_scores", "02/test_scores_by_hand", "alice")
    assert not calls, "problem_prompt must not build a Variant (it carries the answer)"
    monkeypatch.undo()
    assert text == skill.variant(seed_for("alice", "02/test_scores_by_hand")).prompt
    assert show_problem("sdpa_scores", "02/test_scores_by_hand", "alice") is None
    for name in ("pe_value", "choose_mask", "cross_attention_shapes", "combine_masks_build", "sdpa_full"):
        for learner in ("alice", "bob", "stu6"):  # the prompt shown is the one the grader checks against
            assert problem_prompt(name, "key", learner) == get_skill(name).variant(seed_for(learner, "key")).prompt


def test_check_form_reads_but_never_judges():
    assert "shape (2, 2)" in check_form("sdpa_scores", [[1, 2], [3, 4]])
    assert "shape (2, 2)" in check_form("sdpa_scores", "[[1, 2], [3, 4]]")
    with pytest.raises(AssertionError, match="enter your answer"):
        check_form("sdpa_scores", None)
    with pytest.raises(AssertionError):
        check_form("sdpa_scores", [[1, 2], [3]])


def test_learner_id_on_a_hub_is_the_hub_user_and_the_note_says_so(monkeypatch):
    monkeypatch.delenv("ATTNLAB_LEARNER", raising=False)
    monkeypatch.setenv("JUPYTERHUB_USER", "stu6")
    assert learner_id() == "stu6"
    assert "'stu6'" in learner_note() and "JupyterHub" in learner_note()
    monkeypatch.setenv("ATTNLAB_LEARNER", "alice")  # an explicit setting wins
    assert learner_id() == "alice" and "ATTNLAB_LEARNER" in learner_note()
