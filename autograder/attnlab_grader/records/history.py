"""Grade history in the gradebook: who changed which grade, when, old → new, and why.

nbgrader keeps only the latest score of each graded cell (last write wins).  attnlab adds a
table, ``attnlab_grade_change``, to the same database (SQLite file or PostgreSQL), so the
history lives and is backed up with the grades it explains.  Changes are recorded by a
SQLAlchemy ``before_flush`` hook on nbgrader's :class:`nbgrader.api.Grade`, so they are caught
whoever makes them and in the same transaction as the change:

- a person in formgrader, or ``clear-flag`` restoring withheld credit (``manual_score``/``extra_credit``;
  *why*: "edited in formgrader or another nbgrader tool");
- ``attnlab-grade regrade`` / ``rubric-apply`` (*why*: the reason given, or the rubric keys);
- a re-grade that changes an autograded score (``auto_score``; *why*: "autograded again").

*who* is :func:`actor` (the hub user, else the Unix user running the process).  A second
table, ``attnlab_feedback_release``, remembers the last change each student's released feedback
included, so a re-release carries a notice listing what changed since (:func:`stamp_release`).
"""
from __future__ import annotations

import contextlib
import datetime as dt
import getpass
import html
import os
import threading
from dataclasses import dataclass

from sqlalchemy import Column, DateTime, Float, Integer, String, Text, create_engine, event, inspect, select
from sqlalchemy.orm import Session, declarative_base

Base = declarative_base()
_local = threading.local()


class GradeChange(Base):
    """One change of one graded cell's score (points)."""
    __tablename__ = "attnlab_grade_change"
    id = Column(Integer, primary_key=True, autoincrement=True)
    assignment = Column(String(128), nullable=False, index=True)
    student = Column(String(128), nullable=False, index=True)
    item = Column(String(128), nullable=False)         #: the graded cell's grade_id
    field = Column(String(32), nullable=False)         #: what changed: manual_score, auto_score, extra_credit
    old = Column(Float, nullable=True)                 #: points counted before (None: not graded)
    new = Column(Float, nullable=True)                 #: points counted after
    who = Column(String(128), nullable=False)
    at = Column(DateTime, nullable=False)              #: UTC, naive (as nbgrader stores times)
    why = Column(Text, nullable=False)


class FeedbackRelease(Base):
    """The last grade change included in a student's released feedback for an assignment."""
    __tablename__ = "attnlab_feedback_release"
    assignment = Column(String(128), primary_key=True)
    student = Column(String(128), primary_key=True)
    last_change = Column(Integer, nullable=False, default=0)
    released_at = Column(DateTime, nullable=False)


@dataclass(frozen=True)
class Change:
    """A recorded change, read back (:func:`changes`)."""
    id: int
    assignment: str
    student: str
    item: str
    field: str
    old: float | None
    new: float | None
    who: str
    at: dt.datetime
    why: str

    def text(self) -> str:
        """``2026-11-25 21:03 UTC  alice/03_masks  why_sqrt_dk: 0 → 2 by ta1 (rubric: ...)``."""
        def pts(v):
            return "—" if v is None else f"{v:g}"
        return (f"{self.at:%Y-%m-%d %H:%M} UTC  {self.student}/{self.assignment}  {self.item}"
                f"{'' if self.field == 'manual_score' else ' (' + self.field + ')'}: "
                f"{pts(self.old)} → {pts(self.new)} by {self.who} ({self.why})")


def actor() -> str:
    """Who is acting: ``JUPYTERHUB_USER`` when set (formgrader on a hub), else the Unix user."""
    return os.environ.get("JUPYTERHUB_USER") or getpass.getuser()


def now() -> dt.datetime:
    """UTC now, naive (nbgrader's convention for times in the gradebook)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def ensure_tables(bind) -> None:
    """Create attnlab's tables in the gradebook if missing (``bind``: an engine or connection)."""
    Base.metadata.create_all(bind=bind, checkfirst=True)


@contextlib.contextmanager
def reason(why: str, who: str | None = None):
    """Within this block, grade changes in this thread are recorded with ``why`` (and ``who``)."""
    prev = getattr(_local, "ctx", None)
    _local.ctx = (why, who)
    try:
        yield
    finally:
        _local.ctx = prev


_FIELDS = ("manual_score", "extra_credit", "auto_score")
#: *why* of a change made without a reason (formgrader, ``clear-flag``, nbgrader's own API).
OUTSIDE = "edited in formgrader or another nbgrader tool"


def _before(state, name):
    hist = state.attrs[name].history
    if hist.has_changes():
        return hist.deleted[0] if hist.deleted else None
    return getattr(state.obj(), name)


def _counted(manual, auto):
    """The points nbgrader counts for a cell: the manual score when set, else the autograded one."""
    return manual if manual is not None else auto


def _record(session: Session, flush_context, instances) -> None:
    from nbgrader.api import Grade
    rows = []
    for obj in list(session.dirty):
        if not isinstance(obj, Grade):
            continue
        state = inspect(obj)
        changed = [n for n in _FIELDS if state.attrs[n].history.has_changes()]
        if not changed:
            continue
        if changed == ["extra_credit"]:
            field, old, new = "extra_credit", _before(state, "extra_credit"), obj.extra_credit
        else:
            field = "manual_score" if "manual_score" in changed else "auto_score"
            old = _counted(_before(state, "manual_score"), _before(state, "auto_score"))
            new = _counted(obj.manual_score, obj.auto_score)
            if field == "auto_score" and _before(state, "auto_score") is None:
                continue  # the first autograding is not a change of a grade
        if old == new:
            continue
        ctx = getattr(_local, "ctx", None)
        why = ctx[0] if ctx else ("autograded again" if field == "auto_score" else OUTSIDE)
        who = (ctx[1] if ctx and ctx[1] else None) or actor()
        nb = obj.notebook
        rows.append(GradeChange(assignment=nb.assignment.assignment.name, student=nb.assignment.student.id,
                                item=obj.name, field=field, old=old, new=new, who=who, at=now(), why=why))
    if rows:
        ensure_tables(session.connection())
        session.add_all(rows)


def install() -> None:
    """Record grade changes made through any SQLAlchemy session of this process (idempotent;
    called when ``autograder/attnlab_grader/steps/nbgrader_config.py`` is loaded, so formgrader and the CLI record)."""
    if not event.contains(Session, "before_flush", _record):
        event.listen(Session, "before_flush", _record)


def _engine(db_url: str):
    from attnlab_grader.records.course import normalize_db_url
    return create_engine(normalize_db_url(db_url) or db_url)


def changes(db_url: str, assignment: str | None = None, student: str | None = None,
            after: int = 0) -> list[Change]:
    """Recorded changes, oldest first, optionally for one assignment/student and with id > ``after``."""
    engine = _engine(db_url)
    try:
        with engine.begin() as conn:
            ensure_tables(conn)
            q = select(GradeChange.__table__).where(GradeChange.id > after).order_by(GradeChange.id)
            if assignment:
                q = q.where(GradeChange.assignment == assignment)
            if student:
                q = q.where(GradeChange.student == student)
            return [Change(**dict(r._mapping)) for r in conn.execute(q)]
    finally:
        engine.dispose()


def stamp_release(root: str, db_url: str, assignment: str, student: str) -> list[Change]:
    """Before ``student``'s feedback for ``assignment`` is released: add a notice listing the grade
    changes since their previous release to the top of the feedback HTML (none on a first
    release), and remember the latest change included.  Returns the changes announced."""
    engine = _engine(db_url)
    try:
        with engine.begin() as conn:
            ensure_tables(conn)
            t = FeedbackRelease.__table__
            row = conn.execute(select(t).where(t.c.assignment == assignment, t.c.student == student)).first()
            q = select(GradeChange.__table__).where(GradeChange.assignment == assignment,
                                                     GradeChange.student == student).order_by(GradeChange.id)
            every = [Change(**dict(r._mapping)) for r in conn.execute(q)]
            new = [c for c in every if row and c.id > row.last_change]
            last = every[-1].id if every else 0
            if row:
                conn.execute(t.update().where(t.c.assignment == assignment, t.c.student == student)
                             .values(last_change=last, released_at=now()))
            else:
                conn.execute(t.insert().values(assignment=assignment, student=student, last_change=last,
                                               released_at=now()))
    finally:
        engine.dispose()
    if new:
        _add_notice(root, assignment, student, new)
    return new


NOTICE_ID = "attnlab-regrade-notice"


def _add_notice(root: str, assignment: str, student: str, new: list[Change]) -> None:
    items = "".join(f"<li><code>{html.escape(c.item)}</code>: {'—' if c.old is None else f'{c.old:g}'} → "
                    f"{'—' if c.new is None else f'{c.new:g}'} points ({html.escape(c.why)})</li>" for c in new)
    insert_at_top(root, assignment, student,
                  f'<div id="{NOTICE_ID}" style="border:2px solid #b58900;padding:.6em;margin:1em">'
                  f"<strong>Your feedback was updated</strong> ({now():%Y-%m-%d %H:%M} UTC). "
                  f"Changes since your previous feedback:<ul>{items}</ul></div>")


def insert_at_top(root: str, assignment: str, student: str, fragment: str) -> None:
    """Insert the HTML ``fragment`` right after ``<body>`` of each of ``student``'s feedback pages."""
    folder = os.path.join(root, "feedback", student, assignment)
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        if name.endswith(".html"):
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as fh:
                page = fh.read()
            i = page.find("<body")
            j = page.find(">", i) + 1 if i >= 0 else 0
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(page[:j] + fragment + page[j:])
