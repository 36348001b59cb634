"""Graded by-hand problems: show the problem, never hold its answer in the student's kernel.

A graded exercise notebook must not construct a :class:`~attnlab.practice.core.Variant` (whose
``.answer`` is the expected answer). It calls :func:`show_problem` to display the statement of the
learner's own variant and :func:`check_form` to tell the learner whether an answer can be read;
the grader computes the expected answer on its side (``attnlab_grader.judging.spec.ByHandCheck``).

Which numbers a learner gets depends on the learner id (:func:`attnlab.practice.learner_id`):
:func:`learner_note` says which id is used, where it comes from and how to change it.
"""
from __future__ import annotations

import os
from typing import Any

from .answers import AnswerFormatError, parse
from .catalogue import get_skill
from .core import draw
from ..identity import publish_learner_id
from ..settings import course_settings
from .seeding import attnlab_home, learner_id, seed_for


def problem_prompt(skill: str, key: str, learner: str | None = None) -> str:
    """The markdown statement of ``learner``'s variant of ``skill`` for ``key`` (default learner:
    :func:`learner_id`).  Draws the problem only (:func:`attnlab.practice.core.draw`); no variant with its
    answer is built or kept.

    Raises:
        KeyError: unknown ``skill`` (from :func:`attnlab.practice.get_skill`).
    """
    s = get_skill(skill)
    prompt, _, _ = draw(s, seed_for(learner or learner_id(), key))  # as Skill.variant does, keeping only the prompt
    return prompt


def show_problem(skill: str, key: str, learner: str | None = None) -> None:
    """Display :func:`problem_prompt` (rendered markdown in Jupyter, plain text elsewhere).
    Returns ``None``: nothing that could hold the answer stays in the notebook."""
    text = problem_prompt(skill, key, learner)
    try:
        from IPython.display import Markdown, display
        display(Markdown(text))
    except ImportError:  # pragma: no cover - IPython ships with the course
        print(text)


def check_form(skill: str, answer: Any) -> str:
    """Check that ``answer`` can be read as an answer of ``skill``'s kind (a number, a matrix, a
    shape...); does NOT say whether it is right: the grader checks it against your own variant.

    Returns:
        A sentence describing what was read.
    Raises:
        AssertionError: ``answer`` is still ``None`` or cannot be read (message says how to write it).
    """
    s = get_skill(skill)
    assert answer is not None, "enter your answer (replace the None / the raise line)"
    try:
        value = parse(answer, s.kind)
    except AnswerFormatError as err:
        raise AssertionError(str(err)) from None
    shape = getattr(value, "shape", None)
    what = f"an array of shape {tuple(shape)}" if shape is not None and len(shape) else f"{value!r}"
    return (f"Read as {what}. Whether it is right is judged against the numbers of learner id "
            f"{learner_id()!r}: save the notebook and run `attnlab check` on it to find out now "
            f"(the grader judges it the same way).")


def learner_note() -> str:
    """One paragraph: which learner id seeds the by-hand numbers, where it came from, how to set it.

    In a Jupyter kernel it also publishes the id as data for the grader
    (:func:`attnlab.identity.publish_learner_id`: an output of MIME type
    ``application/vnd.attnlab.learner+json``), so the grader never reads it from this text."""
    lid = learner_id()
    publish_learner_id(lid)
    if (course_settings().learner or "").strip():
        source = "the environment variable ATTNLAB_LEARNER"
    elif (os.environ.get("JUPYTERHUB_USER") or "").strip():
        source = "your JupyterHub user name"
    else:
        source = "your attnlab profile or, without one, your computer's user name"
    return (f"By-hand numbers in this notebook are drawn for learner id {lid!r} (from {source}). "
            "It must be the student id your course grades you under (your nbgrader/JupyterHub user "
            "name); otherwise your by-hand answers are checked against other numbers. To change it, "
            "run `%env ATTNLAB_LEARNER=<your id>` in a cell (or set it before starting Jupyter, or "
            f"write {{\"learner\": \"<your id>\"}} to {attnlab_home() / 'profile.json'}) and run the "
            "notebook again from the top.")


__all__ = ["problem_prompt", "show_problem", "check_form", "learner_note"]
