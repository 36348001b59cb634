"""Learner probes on every skill (see learner_probes.py): natural right answers accepted, typos and slips
refused, common mistakes named, each judged against oracles written apart from the engine."""
import re
from dataclasses import replace

import pytest

from attnlab.practice import Feedback, all_skills, get_skill

from learner_probes import ORACLES, probe

SKILLS = [s.name for s in all_skills()]


def test_every_skill_has_an_oracle():
    assert sorted(ORACLES) == sorted(SKILLS)


@pytest.mark.parametrize("name", SKILLS)
def test_learners_answers_are_judged_as_a_tutor_would(name):
    """On the first 3 problems learners get: no right answer (any allowed form, any rounding of the working)
    refused, no typo, slip or common mistake accepted, every common mistake named (all of them where several
    give the same typed answer), wrong shapes told which way to change, no mistake that gives the right answer."""
    report = probe(3, skills=[name], samples=12)
    assert report.counts["right"] >= 3 * 4 and report.counts["mistake"] + report.counts["wrong"] >= 3 * 2
    assert not report.findings, "\n".join(map(str, report.findings[:20])) + "\n" + report.summary()


def test_the_probes_catch_an_engine_that_names_nothing_or_accepts_everything():
    """The harness is not vacuous: a skill stripped of its mistakes misnames them, and a checker that says
    "Correct" to everything is caught accepting wrong answers."""
    skill = get_skill("gpt_param_count")
    report = probe(2, skills=[replace(skill, mistakes={})])
    assert report.count("misnamed") >= 10 and report.count("wrong_accepted") == 0

    class AcceptsAll:
        name, kind, decimals = "soft_lookup_output", "vector", 2

        def check(self, variant, answer):
            return Feedback(True, "Correct.")

    report = probe(2, skills=[AcceptsAll()])
    assert report.count("wrong_accepted") >= 10 and report.count("right_refused") == 0


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("≈ 0.73", "number", 0.73), ("about 0.73.", "number", 0.73), ("12 288", "int", 12288),
    ("12288 bytes", "int", 12288), ("12,288 parameters", "int", 12288), ("4*96^2 + 4*96", "int", 37248),
    ("2 · 2 · 3 · 8", "int", 96), ("(1 + 1) / 8", "number", 0.25),
    ("[[0, float('-inf')], [0, 0]]", "mask", [[True, False], [True, True]]),
    ("[[ True False]\n [ True  True]]", "mask", [[True, False], [True, True]]),
    ("[[0, -np.inf], [0, 0]]", "mask", [[True, False], [True, True]]),
    ("1 0\n1 1", "mask", [[True, False], [True, True]]), ("0.2 0.8\n0.5 0.5", "matrix", [[0.2, 0.8], [0.5, 0.5]]),
    ("3 100 200", "int_list", [3, 100, 200]), ("sqrt(64)", "number", 8.0), ("√(512/8)", "number", 8.0),
    ("exp(-1)", "number", 0.36787944117144233), ("T F; T T", "mask", [[True, False], [True, True]]),
])
def test_answers_are_read_as_learners_write_them(text, kind, value):
    import numpy as np

    from attnlab.practice.answers import parse

    assert np.array_equal(np.asarray(parse(text, kind)), np.asarray(value)), text


@pytest.mark.parametrize(("text", "kind", "says"), [
    ("24 MiB", "int", "Could not read"), ("2^70", "int", "power above 64"), ("3/(2-2)", "number", "divides by zero"),
    ("__import__('os')", "int", "Could not read"), ("log(65)", "number", "'log' is ambiguous"),
    ("ln(0)", "number", "not defined there"),
])
def test_what_cannot_be_read_says_so(text, kind, says):
    from attnlab.practice.answers import AnswerFormatError, parse

    with pytest.raises(AnswerFormatError, match=re.escape(says)):
        parse(text, kind)


def test_a_matrix_typed_in_one_line_is_asked_for_its_rows():
    """The right numbers of a 2 × 2 answer in one line are neither right nor wrong: 'write it row by row',
    nothing recorded; a one-row mask typed flat is read as that row."""
    skill = get_skill("sdpa_output")
    v = skill.variant(3)
    fb = skill.check(v, " ".join(f"{x:.2f}" for row in v.answer for x in row))
    assert not fb.correct and not fb.readable and "row by row" in fb.message
    rect = get_skill("rect_causal_mask")
    v = next(rect.variant(s) for s in range(100) if rect.variant(s).data["L"] == 1)
    assert rect.check(v, " ".join("1" for _ in range(v.data["S"]))).correct
