"""Learner probes on every skill (see learner_probes.py): natural right answers accepted, typos and slips
refused, common mistakes named, each judged against oracles written apart from the engine."""
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
