"""Build submissions for course QA and attack tests: reference, untouched stub, wrong ones.

A submission starts from the committed student notebook (``exercises/<A>/<A>.ipynb``) and
fills answer cells the way a student would: with the source's solution code (markers
removed), with literal numbers for by-hand cells (the right ones for *that* student's
variant, or a named misconception's), or with a QA case file (``wrong/*.py``, ``honest/*.py``).
"""
from __future__ import annotations

import copy
import functools
import re
from pathlib import Path

import nbformat

from attnlab_grader.records.course import EXERCISES, solutions_dir
from attnlab_grader.judging.spec import ByHandCheck, Case, load_spec

SOLUTIONS = solutions_dir()

_MARK = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")
#: In a by-hand cell of a QA case: ``{answer}`` = the student's right numbers, ``{answer:<mistake>}``
#: = the numbers of that practice misconception for the student's variant.
_ANSWER = re.compile(r"\{answer(?::(\w+))?\}")


@functools.lru_cache(maxsize=None)
def spec(assignment: str):
    """The set's grading spec (loaded once per process)."""
    return load_spec(SOLUTIONS / assignment / "grading.py")


@functools.lru_cache(maxsize=None)
def _release(assignment: str):
    return nbformat.read(str(EXERCISES / assignment / f"{assignment}.ipynb"), as_version=4)


def release_notebook(assignment: str):
    """A fresh copy of the committed student notebook ``exercises/<A>/<A>.ipynb``."""
    return copy.deepcopy(_release(assignment))


@functools.lru_cache(maxsize=None)
def _source_solutions(assignment: str) -> dict[str, str]:
    nb = nbformat.read(str(SOLUTIONS / assignment / f"{assignment}.ipynb"), as_version=4)
    out = {}
    for c in nb.cells:
        m = c.metadata.get("nbgrader", {})
        if m.get("solution") and not m.get("grade") and c.cell_type == "code":
            out[m["grade_id"]] = "\n".join(ln for ln in c.source.splitlines() if not _MARK.match(ln))
    return out


def cell(nb, grade_id):
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id:
            return c
    raise KeyError(grade_id)


def reference_submission(assignment: str, student: str):
    """The release notebook answered with the reference solution (100% of autograded points)."""
    nb = release_notebook(assignment)
    sols = _source_solutions(assignment)
    sp = spec(assignment)
    by_hand = {c.cell: c for c in sp.checks if isinstance(c, ByHandCheck)}
    for gid, src in sols.items():
        cell(nb, gid).source = by_hand[gid].literal_for(student) if gid in by_hand else src
    return nb


def apply_case(nb, case: Case, assignment: str, student: str):
    """Apply a file-based QA case (``wrong/*.py`` or ``honest/*.py``) to ``student``'s reference
    submission ``nb``: replace (``cell``) or edit (``patch``) answer cells, and insert each ``added``
    section as a new plain code cell (no nbgrader metadata) before the next section's cell."""
    sols = _source_solutions(assignment)
    by_hand = {c.cell: c for c in spec(assignment).checks if isinstance(c, ByHandCheck)}
    pending = []
    for kind, gid, text in case.sections:
        if kind == "added":
            pending.append(nbformat.v4.new_code_cell(text))
            continue
        target = cell(nb, gid)
        if kind == "patch":
            edits, text = case.patches(text), sols[gid]
            for old, new in edits:
                if text.count(old) != 1:
                    raise ValueError(f"{case.path}: {old!r} occurs {text.count(old)} times in cell {gid}")
                at = text.index(old)
                line_start = text.rfind("\n", 0, at) + 1
                indent = text[line_start:at] if not text[line_start:at].strip() else ""
                text = text.replace(old, new.replace("\n", "\n" + indent))  # later lines: same indent
        elif gid in by_hand:
            text = _ANSWER.sub(lambda m, item=by_hand[gid]: repr(item.answer_literal(student, m.group(1))), text)
        target.source = text
        i = nb.cells.index(target)
        nb.cells[i:i] = pending
        pending = []
    nb.cells.extend(pending)
    return nb


def honest_submission(assignment: str, student: str, name: str):
    """The reference submission with one honest alternative (``honest/<name>.py``) applied."""
    return apply_case(reference_submission(assignment, student), spec(assignment).honest[name], assignment, student)


def wrong_submission(assignment: str, student: str, name: str):
    """The reference submission with one QA case ``wrong/<name>.py`` applied."""
    return apply_case(reference_submission(assignment, student), spec(assignment).wrong[name], assignment, student)


def mistake_differs(assignment: str, student: str, name: str) -> bool:
    """False when a by-hand mistake of case ``name`` gives the right numbers for this student's variant
    (the case could not fail for that student)."""
    sp = spec(assignment)
    by_hand = {c.cell: c for c in sp.checks if isinstance(c, ByHandCheck)}
    return all(by_hand[gid].literal_for(student, m) != by_hand[gid].literal_for(student)
               for kind, gid, text in sp.wrong[name].sections if kind == "cell" and gid in by_hand
               for m in _ANSWER.findall(text) if m)


def write(root, student: str, assignment: str, nb_or_text) -> Path:
    """Place a submission at ``root/submitted/<student>/<assignment>/<assignment>.ipynb``."""
    d = Path(root) / "submitted" / student / assignment
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{assignment}.ipynb"
    if isinstance(nb_or_text, str):
        path.write_text(nb_or_text)
    else:
        nbformat.write(copy.deepcopy(nb_or_text), str(path))
    return path


def laptop_id_submission(assignment: str, graded_as: str, ran_as: str):
    """A submission graded as ``graded_as`` whose notebook ran under learner id ``ran_as`` (e.g. the
    laptop's OS user): the setup cell's output says so, and the by-hand cells hold ``ran_as``'s right
    numbers.  The grader must flag it for review, not credit it."""
    import os
    from unittest import mock

    from attnlab.identity import LEARNER_MIME
    from attnlab.practice.problem import learner_note
    nb = reference_submission(assignment, graded_as)
    for check in spec(assignment).checks:
        if isinstance(check, ByHandCheck):
            cell(nb, check.cell).source = check.literal_for(ran_as)
    with mock.patch.dict(os.environ, {"ATTNLAB_LEARNER": ran_as}):
        note = learner_note()  # what the setup cell printed on the student's machine
    # what the setup cell wrote on the student's machine: the printed note and the id as data
    cell(nb, "setup").outputs = [nbformat.v4.new_output("stream", name="stdout", text=note + "\n"),
                                 nbformat.v4.new_output("display_data", data={LEARNER_MIME: {"learner_id": ran_as}})]
    return nb
