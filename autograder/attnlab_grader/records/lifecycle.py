"""A graded item's life: the states it goes through and what each action does to it.

This module is the one home of that table; ``autograder/README.md`` ("A grade's life") shows the
same table and ``autograder/attnlab_grader/tests/test_lifecycle.py`` checks that the two agree.  An *item* is
one graded cell of one student's submission (nbgrader's ``Grade``, keyed by its ``grade_id``).

The steps that change grades read their decision from here: the re-grade step
(:class:`attnlab_grader.steps.answers.KeepManualGrades`) asks :func:`after` whether an item
goes back to manual grading.  What every action that changes a grade also does (:data:`RECOMPUTED`)
is carried out where the derived values are read: the late penalty is recomputed from the
gradebook whenever ``grades.csv`` or feedback is written
(:func:`attnlab_grader.records.deadlines.reapply_in`), so nothing derived is ever kept stale.
"""
from __future__ import annotations

from enum import Enum


class State(str, Enum):
    """Where one graded item stands."""
    AUTOGRADED = "autograded"                    #: scored by the grader; no person needed
    AWAITING_MANUAL = "awaiting manual grading"  #: a written answer (or a changed one) waits for a person
    MANUALLY_GRADED = "manually graded"          #: a person's score stands (formgrader, rubric-apply)
    RELEASED = "released"                        #: the student's feedback shows the current score
    REGRADE_REQUESTED = "regrade requested"      #: the student asked for another look (regrade-queue)
    REGRADED = "regraded"                        #: changed by ``attnlab-grade regrade``, with a reason
    EXPORTED = "exported"                        #: written to grades.csv and the LMS files


class Action(str, Enum):
    """What can happen to an item."""
    GRADE = "grade"                              #: first autograde of the submission
    REGRADE_SAME = "re-grade, answer unchanged"  #: autograded again; nbgrader's cell checksum is the same
    REGRADE_CHANGED = "re-grade, answer changed"  #: autograded again after a resubmission that changed it
    MANUAL_GRADE = "manual grade"                #: a score entered in formgrader or by rubric-apply
    RELEASE = "release feedback"                 #: nbgrader release_feedback (feedback regenerated first)
    REQUEST = "regrade request"                  #: a student's request, collected by regrade-queue
    REGRADE = "regrade"                          #: attnlab-grade regrade (resolves open requests)
    EXTENSION = "deadline or extension"          #: due date, late policy or a student's extension
    EXPORT = "export"                            #: grades.csv, lms-export, lti-passback


#: ``(state, action) -> state``; a pair not listed leaves the state as it is.  ``GRADE`` and
#: ``REGRADE_CHANGED`` depend on whether a person grades the item (see :func:`after`).
TRANSITIONS: dict[tuple[State, Action], State] = {
    **{(s, Action.REGRADE_CHANGED): State.AUTOGRADED for s in State},  # a person's item: AWAITING_MANUAL
    **{(s, Action.MANUAL_GRADE): State.MANUALLY_GRADED for s in State},
    **{(s, Action.REGRADE): State.REGRADED for s in State},
    **{(s, Action.RELEASE): State.RELEASED for s in State if s is not State.AWAITING_MANUAL},
    **{(s, Action.REQUEST): State.REGRADE_REQUESTED for s in State if s is not State.AWAITING_MANUAL},
    **{(s, Action.EXPORT): State.EXPORTED for s in State if s is not State.AWAITING_MANUAL},
}

#: Actions after which the late penalty, ``final_score``, ``grades.csv``, the feedback and every
#: export are recomputed from the gradebook (a request changes no grade; an export only reads).
RECOMPUTED: frozenset[Action] = frozenset({Action.GRADE, Action.REGRADE_SAME, Action.REGRADE_CHANGED,
                                           Action.MANUAL_GRADE, Action.REGRADE, Action.EXTENSION,
                                           Action.RELEASE})

#: What the table does not say: refusals and what the person sees.
NOTES: dict[Action, str] = {
    Action.GRADE: "a written answer starts awaiting manual grading; a code item is autograded",
    Action.REGRADE_SAME: "every state is kept: a manual grade stands, a pending item stays pending",
    Action.REGRADE_CHANGED: ("an item a person grades goes back to awaiting manual grading and is named in "
                             "the grade summary, the class report and grades.csv"),
    Action.MANUAL_GRADE: "the grade history records who, when, old -> new",
    Action.RELEASE: "an item still awaiting manual grading stays so",
    Action.REQUEST: "refused (kept with the reason) while the item awaits manual grading",
    Action.REGRADE: "resolves the open requests for the item; the score counts as its manual grade",
    Action.EXTENSION: "the state is kept; the penalty is recomputed",
    Action.EXPORT: "an item awaiting manual grading is not exported: the row is listed and the command fails",
}


def after(state: State, action: Action, graded_by_person: bool = False) -> State:
    """The state of an item in ``state`` after ``action``.

    Args:
        state: where the item stands now.
        action: what happens to it.
        graded_by_person: the item is a written answer or carries a person's score (only
            ``GRADE`` and ``REGRADE_CHANGED`` read it).

    Returns:
        The new :class:`State` (``state`` itself when the action leaves it as it is).
    """
    if action in (Action.GRADE, Action.REGRADE_CHANGED):
        return State.AWAITING_MANUAL if graded_by_person else State.AUTOGRADED
    return TRANSITIONS.get((state, action), state)


def state_of(grade) -> State:
    """The grading state stored in nbgrader's ``Grade`` row ``grade`` (``needs_manual_grade``,
    ``manual_score``): one of AUTOGRADED, AWAITING_MANUAL, MANUALLY_GRADED (release, requests and
    exports are recorded elsewhere and do not change what the gradebook holds)."""
    if grade.needs_manual_grade:
        return State.AWAITING_MANUAL
    if grade.manual_score is not None:
        return State.MANUALLY_GRADED
    return State.AUTOGRADED


def table_markdown() -> str:
    """The table for ``autograder/README.md``: one row per action, the state it leads to and notes."""
    rows = ["| action | the item's state after it | penalty, final_score, sheet, feedback recomputed | notes |",
            "|---|---|---|---|"]
    for action in Action:
        if action is Action.GRADE:
            to = f"{State.AWAITING_MANUAL.value} (written answers) or {State.AUTOGRADED.value}"
        elif action is Action.REGRADE_CHANGED:
            to = f"{State.AWAITING_MANUAL.value} (items a person grades) or {State.AUTOGRADED.value}"
        elif action is Action.REGRADE_SAME:
            to = "unchanged"
        else:
            to = TRANSITIONS.get((State.AUTOGRADED, action), State.AUTOGRADED).value
            if action is Action.EXTENSION:
                to = "unchanged"
        again = "yes" if action in RECOMPUTED else "no"
        rows.append(f"| {action.value} | {to} | {again} | {NOTES[action]} |")
    return "\n".join(rows)
