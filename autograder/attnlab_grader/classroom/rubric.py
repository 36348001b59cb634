"""Rubrics for manually graded answers, stored in the gradebook, and the grading queue split
between graders.

A rubric belongs to one manually graded item (an nbgrader grade cell, e.g. the written answer
``why_sqrt_dk``) and is a list of entries, each with a short ``key``, ``points`` (negative for a
deduction) and a reusable ``comment`` the student sees.  It is defined from a CSV file
(``item,key,points,comment``) by ``attnlab-grade rubric-define`` and stored in the gradebook's
table ``attnlab_rubric_entry``, so every grader uses the same one.

``attnlab-grade rubric-apply COURSE -a A -s S --item ITEM --keys k1,k2`` sets the item's score to
the sum of the chosen entries' points (clamped to 0..max) and its comment to their comments, both
through nbgrader's gradebook (formgrader shows them; the change is in the grade history), and
records which entries were applied (``attnlab_rubric_applied``).

``attnlab-grade grading-queue COURSE -a A --graders ta1,ta2`` splits the submissions still needing
manual grading between graders by rendezvous hashing of (grader, assignment, student): the split
is deterministic, each grader's share stays the same when students are added, and only a leaving
grader's students move.
"""
from __future__ import annotations

import csv
import hashlib
import io
import math

from sqlalchemy import Column, DateTime, Float, Integer, String, Text, select

from attnlab_grader.records.history import Base, actor, ensure_tables, now, reason

KEY_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


class RubricError(ValueError):
    """A rubric file or application that cannot be used; nothing was changed."""


class RubricEntry(Base):
    """One rubric entry of an item: ``key``, ``points`` (negative: a deduction), ``comment``."""
    __tablename__ = "attnlab_rubric_entry"
    id = Column(Integer, primary_key=True, autoincrement=True)
    assignment = Column(String(128), nullable=False, index=True)
    item = Column(String(128), nullable=False)
    key = Column(String(64), nullable=False)
    points = Column(Float, nullable=False)
    comment = Column(Text, nullable=False)


class RubricApplied(Base):
    """Which rubric entries a grader applied to a student's item, and when."""
    __tablename__ = "attnlab_rubric_applied"
    assignment = Column(String(128), primary_key=True)
    student = Column(String(128), primary_key=True)
    item = Column(String(128), primary_key=True)
    keys = Column(Text, nullable=False)
    grader = Column(String(128), nullable=False)
    at = Column(DateTime, nullable=False)


def _gradebook(db_url):
    from nbgrader.api import Gradebook

    from attnlab_grader.records.course import _quiet_imports, normalize_db_url
    _quiet_imports()
    return Gradebook(normalize_db_url(db_url) or db_url, "attnlab")


def manual_items(gb, assignment: str) -> dict[str, float]:
    """The manually graded items of ``assignment`` (grade cells that are also answer cells, e.g.
    written answers) and their maximum points.

    Raises:
        RubricError: if the gradebook does not know ``assignment``.
    """
    from nbgrader.api import MissingEntry
    try:
        a = gb.find_assignment(assignment)
    except MissingEntry:
        raise RubricError(f"unknown assignment {assignment!r}: generate or grade it first") from None
    solution = {c.name for nb in a.notebooks for c in nb.solution_cells}
    return {c.name: c.max_score for nb in a.notebooks for c in nb.grade_cells if c.name in solution}


def define(db_url: str, assignment: str, text: str) -> dict[str, list[tuple[str, float, str]]]:
    """Replace ``assignment``'s rubrics by the CSV ``text`` (``item,key,points,comment``); every line
    is checked first (item must be a manually graded item; key unique per item; points a number
    within ±max).  Returns ``{item: [(key, points, comment)]}``.

    Raises:
        RubricError: naming the line, for a missing header, an item that is not manually graded,
            a malformed or repeated key, or points that are not a number or exceed the item's
            maximum; nothing is changed then.
    """
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or not {"item", "key", "points", "comment"} <= set(reader.fieldnames):
        raise RubricError("the rubric file needs the header 'item,key,points,comment'; nothing was changed")
    with _gradebook(db_url) as gb:
        items = manual_items(gb, assignment)
        out: dict[str, list[tuple[str, float, str]]] = {}
        for n, row in enumerate(reader, start=2):
            item, key = (row["item"] or "").strip(), (row["key"] or "").strip()
            if item not in items:
                raise RubricError(f"line {n}: {item!r} is not a manually graded item of {assignment} "
                                  f"(those are: {', '.join(sorted(items)) or 'none'}); nothing was changed")
            if not key or not set(key) <= KEY_CHARS or len(key) > 64:
                raise RubricError(f"line {n}: key {key!r} must be letters, digits, '_' or '-'; nothing was changed")
            try:
                points = float(row["points"])
            except (TypeError, ValueError):
                raise RubricError(f"line {n}: points must be a number (e.g. 1 or -0.5); nothing was changed") from None
            if not math.isfinite(points) or abs(points) > items[item]:
                raise RubricError(f"line {n}: {points:g} points is more than {item} is worth ({items[item]:g}); "
                                  "nothing was changed")
            if any(k == key for k, _, _ in out.get(item, [])):
                raise RubricError(f"line {n}: key {key!r} appears twice for {item}; nothing was changed")
            out.setdefault(item, []).append((key, points, (row["comment"] or "").strip()))
        ensure_tables(gb.db.connection())
        gb.db.query(RubricEntry).filter(RubricEntry.assignment == assignment).delete()
        for item, entries in out.items():
            for key, points, comment in entries:
                gb.db.add(RubricEntry(assignment=assignment, item=item, key=key, points=points, comment=comment))
        gb.db.commit()
    return out


def entries(db_url: str, assignment: str) -> dict[str, list[tuple[str, float, str]]]:
    """The stored rubrics of ``assignment``: ``{item: [(key, points, comment)]}``."""
    with _gradebook(db_url) as gb:
        ensure_tables(gb.db.connection())
        rows = gb.db.execute(select(RubricEntry).where(RubricEntry.assignment == assignment)
                             .order_by(RubricEntry.id)).scalars().all()
        out: dict[str, list[tuple[str, float, str]]] = {}
        for r in rows:
            out.setdefault(r.item, []).append((r.key, r.points, r.comment))
        return out


def apply(db_url: str, assignment: str, student: str, item: str, keys: list[str], note: str = "",
          who: str | None = None) -> tuple[float, str]:
    """Grade ``student``'s ``item`` with the rubric entries ``keys``: score = their points summed
    and clamped to 0..max, comment = their comments (then ``note``).  Returns (score, comment).

    Raises:
        RubricError: if ``item`` has no rubric, a key is not in it, or ``student`` has no
            submission with that item.
    """
    from nbgrader.api import MissingEntry
    rubric = dict((k, (p, c)) for k, p, c in entries(db_url, assignment).get(item, []))
    if not rubric:
        raise RubricError(f"{item} of {assignment} has no rubric; define one with rubric-define")
    unknown = [k for k in keys if k not in rubric]
    if unknown or not keys:
        raise RubricError(f"unknown rubric key(s) {', '.join(unknown) or '(none given)'} for {item}; "
                          f"its keys: {', '.join(rubric)}")
    with _gradebook(db_url) as gb:
        ensure_tables(gb.db.connection())
        try:
            grade = gb.find_grade(item, assignment, assignment, student)
            comment = gb.find_comment(item, assignment, assignment, student)
        except MissingEntry:
            raise RubricError(f"{student} has no submission with item {item} in {assignment}") from None
        score = min(max(sum(rubric[k][0] for k in keys), 0.0), grade.max_score)
        text = "\n".join([f"- {rubric[k][1]} ({rubric[k][0]:+g})" for k in keys] + ([note] if note else []))
        with reason(f"rubric: {', '.join(keys)}", who):
            grade.manual_score = score
            grade.needs_manual_grade = False  # as formgrader does when a score is entered
            comment.manual_comment = text
            row = gb.db.get(RubricApplied, (assignment, student, item)) or RubricApplied(
                assignment=assignment, student=student, item=item)
            row.keys, row.grader, row.at = ",".join(keys), who or actor(), now()
            gb.db.add(row)
            gb.db.commit()
    return score, text


def owner(graders: list[str], assignment: str, student: str) -> str:
    """The grader who grades ``student``'s ``assignment`` (rendezvous hashing; deterministic)."""
    def weight(g):
        return hashlib.sha256(f"{g}\0{assignment}\0{student}".encode()).digest()
    return max(graders, key=weight)


def split_queue(db_url: str, assignment: str, graders: list[str]) -> dict[str, list[str]]:
    """``{grader: [students]}``: the submissions of ``assignment`` that still need manual grading,
    split between ``graders`` (see the module docstring).

    Raises:
        RubricError: if ``graders`` is empty or repeats a name, or ``assignment`` is unknown.
    """
    from nbgrader.api import MissingEntry
    graders = [g.strip() for g in graders if g.strip()]
    if not graders or len(set(graders)) != len(graders):
        raise RubricError("--graders takes distinct names separated by commas, e.g. ta1,ta2")
    out: dict[str, list[str]] = {g: [] for g in graders}
    with _gradebook(db_url) as gb:
        try:
            subs = gb.assignment_submissions(assignment)
        except MissingEntry:
            raise RubricError(f"unknown assignment {assignment!r}") from None
        for sub in sorted(subs, key=lambda s: s.student.id):
            if sub.needs_manual_grade:
                out[owner(graders, assignment, sub.student.id)].append(sub.student.id)
    return out
