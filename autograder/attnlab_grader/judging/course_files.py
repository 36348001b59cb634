"""Where the course's files are, as judging and the learner's self-check need them: the clone
(:data:`REPO`), the released notebooks (:data:`EXERCISES`), the grading specs and source notebooks
(:func:`solutions_dir`), the exercise sets (:func:`assignments`), the stubs a release writes into answer
cells (:data:`CODE_STUB`, :data:`TEXT_STUB`) and the notebook a learner received (:func:`released_notebook`).

Nothing here imports nbgrader or the grader's upper layers: ``attnlab check`` reads these in a learner's
install, and :mod:`attnlab_grader.records.course` re-exports them for the instructor's tools.
"""
from __future__ import annotations

import os
from pathlib import Path

#: The course's repository (the clone the grader is installed from in editable mode).
REPO = Path(__file__).resolve().parents[3]
#: The released notebooks students start from: ``exercises/<set>/<set>.ipynb``.
EXERCISES = REPO / "exercises"
#: What a release writes into a code answer cell (``ClearSolutions.code_stub`` in
#: ``autograder/attnlab_grader/steps/nbgrader_config.py`` is set from this).
CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
#: What a release writes into a written-answer cell (``ClearSolutions.text_stub``).
TEXT_STUB = "YOUR ANSWER HERE"
#: nbgrader's delimiters of a hidden-test region in a test cell (``ClearHiddenTests``' defaults).
BEGIN_HIDDEN_TESTS = "BEGIN HIDDEN TESTS"
END_HIDDEN_TESTS = "END HIDDEN TESTS"


def solutions_dir(solutions: str | os.PathLike | None = None) -> Path:
    """The course's grading specs and source notebooks (absolute): ``solutions`` if given (what
    ``attnlab-grade --solutions DIR`` passes), else ``ATTNLAB_SOLUTIONS``
    (:class:`attnlab.settings.CourseSettings`: ``attnlab check`` reads it too), else the clone's ``solutions/``.

    Read when called, never at import. An installed grader (pip install .) has no clone around it, so
    it needs the flag or the variable: the solutions are not shipped as package data, so that a course
    environment shared with students does not hold them."""
    if solutions:
        return Path(solutions).resolve()
    from attnlab.settings import course_settings
    return course_settings().solutions_dir(REPO)


def assignments(solutions: str | os.PathLike | None = None) -> list[str]:
    """The assignment names: the course's exercise sets in lesson order, then any other set an
    instructor added to the solutions folder (:func:`solutions_dir` of ``solutions``; a folder holding
    ``<name>/<name>.ipynb``), sorted.

    The course's sets come from the course registry, :func:`attnlab.course.exercise_sets` (one home;
    a test checks that the shipped ``solutions/`` and ``exercises/`` hold exactly these folders).
    A course set missing from the solutions folder (a trimmed ``--solutions`` folder) is left out.
    """
    from attnlab.course import exercise_sets
    folder = solutions_dir(solutions)

    def present(name):
        return (folder / name / f"{name}.ipynb").is_file()

    course = [name for name in exercise_sets() if present(name)]
    extra = sorted(p.name for p in folder.iterdir()
                   if p.is_dir() and p.name not in course and present(p.name)) if folder.is_dir() else []
    return course + extra


def clear_hidden_tests(source: str) -> str:
    """``source`` (a test cell's text) without its hidden-test regions, as a release writes it: every line
    from one containing ``BEGIN HIDDEN TESTS`` to one containing ``END HIDDEN TESTS`` (both included) is
    removed, the rest joined with newlines (nbgrader's ``ClearHiddenTests``).  Raises ``ValueError`` for a
    nested or unclosed region."""
    kept, inside = [], False
    for line in source.split("\n"):
        if BEGIN_HIDDEN_TESTS in line:
            if inside:
                raise ValueError("a hidden-test region opens inside another one")
            inside = True
        elif END_HIDDEN_TESTS in line:
            inside = False
        elif not inside:
            kept.append(line)
    if inside:
        raise ValueError("a hidden-test region is not closed (no END HIDDEN TESTS line)")
    return "\n".join(kept)


def released_notebook(assignment: str, solutions: str | os.PathLike | None = None):
    """The notebook students received for ``assignment`` (an ``nbformat`` v4 notebook): the clone's
    ``exercises/<set>/<set>.ipynb`` where it is readable, else the source notebook in :func:`solutions_dir`
    with its hidden tests cleared (:func:`clear_hidden_tests`; an install without the clone).
    Only the graded cells' types, nbgrader flags and locked sources are meant to be read from the fallback:
    its answer cells still hold the solutions.  Raises ``OSError`` when neither is readable."""
    import nbformat
    released = EXERCISES / assignment / f"{assignment}.ipynb"
    if os.access(released, os.R_OK):
        return nbformat.read(str(released), as_version=4)
    nb = nbformat.read(str(solutions_dir(solutions) / assignment / f"{assignment}.ipynb"), as_version=4)
    for cell in nb.cells:  # every cell, as the release does
        cell.source = clear_hidden_tests(cell.source)
    return nb
