"""The states of a graded item are defined once (``autograder/attnlab_grader/records/lifecycle.py``) and
the documentation shows that definition, not another one; the decisions the re-grade step takes
from it are the ones the documentation promises."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from attnlab_grader.records.lifecycle import TRANSITIONS, Action, State, after, state_of, table_markdown

README = Path(__file__).resolve().parents[3] / "autograder" / "README.md"


def test_readme_shows_the_table_defined_in_code():
    """Every row of the code's table is in autograder/README.md, in order, and the README names
    every state: changing one without the other fails here."""
    text = README.read_text(encoding="utf-8")
    assert table_markdown() in text, "autograder/README.md's state table differs from lifecycle.table_markdown()"
    for state in State:
        assert f"**{state.value}**" in text, state


def test_regrade_keeps_unchanged_answers_and_sends_changed_written_answers_back():
    """A re-grade of an unchanged answer keeps every state (a manual grade stands, a pending item stays
    pending); a changed answer a person grades waits for them again; a changed code item stays
    autograded."""
    for state in State:
        assert after(state, Action.REGRADE_SAME, graded_by_person=True) is state
    assert after(State.MANUALLY_GRADED, Action.REGRADE_CHANGED, graded_by_person=True) is State.AWAITING_MANUAL
    assert after(State.AUTOGRADED, Action.REGRADE_CHANGED, graded_by_person=False) is State.AUTOGRADED
    assert after(State.AUTOGRADED, Action.GRADE, graded_by_person=True) is State.AWAITING_MANUAL
    # nothing pending is exported, released or open to a request; an extension changes no state
    for action in (Action.EXPORT, Action.RELEASE, Action.REQUEST):
        assert (State.AWAITING_MANUAL, action) not in TRANSITIONS
        assert after(State.AWAITING_MANUAL, action) is State.AWAITING_MANUAL
    assert after(State.REGRADED, Action.EXTENSION) is State.REGRADED


def test_state_read_from_nbgraders_grade_row():
    """The gradebook's own fields decide: needs_manual_grade first, then a person's score."""
    def grade(needs, manual):
        return SimpleNamespace(needs_manual_grade=needs, manual_score=manual)
    assert state_of(grade(True, 2.0)) is State.AWAITING_MANUAL
    assert state_of(grade(True, None)) is State.AWAITING_MANUAL
    assert state_of(grade(False, 2.0)) is State.MANUALLY_GRADED
    assert state_of(grade(False, None)) is State.AUTOGRADED
