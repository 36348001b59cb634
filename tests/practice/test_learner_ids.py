"""Learner ids: safe as file names, and distinct names stay distinct (so their by-hand numbers differ)."""
import pytest

from attnlab.practice.seeding import as_learner_id, seed_for


@pytest.mark.parametrize("a, b", [
    ("zoë", "zoé"),            # differ only in a non-ASCII letter
    ("李雷", "王芳"),            # no ASCII at all
    ("a b", "a/b"),            # clean to the same text
    ("a b", "a-b"),            # one needed cleaning, one did not
    ("x" * 70, "x" * 71),      # cut at 64 characters
])
def test_distinct_names_get_distinct_ids_and_seeds(a, b):
    assert as_learner_id(a) != as_learner_id(b)
    assert seed_for(as_learner_id(a), "k") != seed_for(as_learner_id(b), "k")


@pytest.mark.parametrize("name", ["zoë", "李雷", "a b", "../etc/passwd", "x" * 200, "", "  ", "alice"])
def test_ids_are_file_name_safe_and_short(name):
    lid = as_learner_id(name)
    assert lid and len(lid) <= 64 and "/" not in lid and lid not in {".", ".."} and not lid.startswith("-")


def test_plain_ids_and_one_spelling_typed_two_ways_are_unchanged():
    assert as_learner_id("alice") == "alice" and as_learner_id(" s123.x-y_z ") == "s123.x-y_z"
    assert as_learner_id("zo\u0065\u0308") == as_learner_id("zo\u00eb") == "zo\u00eb"  # NFD and NFC: one learner
