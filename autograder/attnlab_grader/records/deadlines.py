"""Due dates, a late policy and per-student extensions, with nbgrader's own mechanisms.

- **Due date**: nbgrader's ``Assignment.duedate`` in the gradebook (what formgrader shows as
  "Due Date").
- **Extension** (or accommodation): nbgrader's ``SubmittedAssignment.extension``; nbgrader's
  ``total_seconds_late`` then counts from the due date plus the extension.  Extensions are kept in
  attnlab's table ``attnlab_extension`` (an extension can be granted before the student submits,
  when nbgrader has no submission row to hold it) and copied onto the submission when it is
  autograded (:class:`attnlab_grader.steps.late_penalties.AttnlabLatePenalties`) or at once when it already is.
- **Late policy** per assignment (:class:`Policy`, table ``attnlab_late_policy``): a percentage
  of the score per started day late, capped, and/or zero after a hard deadline.  It is applied by
  nbgrader's ``AssignLatePenalties`` step through its plugin
  (:class:`attnlab_grader.steps.late_penalties.LatePolicy`, a
  ``LateSubmissionPlugin``), which stores the penalty in the gradebook
  (``SubmittedNotebook.late_submission_penalty``); the grades sheet shows it.

Changing a due date, policy or extension re-applies the penalties of submissions already graded
(:func:`reapply`), so a late grant is honoured without re-grading; and every writer of derived values
(the grades sheet, feedback) recomputes the penalty from the gradebook first (:func:`reapply_in`),
so a penalty always matches the current score after a regrade, a manual grade or a re-grade.
"""
from __future__ import annotations

import csv
import datetime as dt
import io
import math
from dataclasses import dataclass

from sqlalchemy import Column, DateTime, Float, Integer, String, Text, select

from attnlab_grader.records.history import Base, actor, now

DAY_S = 86400


class DeadlineError(ValueError):
    """A due date, policy or extension (file) is not valid; nothing was changed."""


class LatePolicyRow(Base):
    """An assignment's late policy (table ``attnlab_late_policy``; see :class:`Policy`)."""
    __tablename__ = "attnlab_late_policy"
    assignment = Column(String(128), primary_key=True)
    percent_per_day = Column(Float, nullable=False, default=0.0)
    max_percent = Column(Float, nullable=False, default=100.0)
    hard_days = Column(Float, nullable=True)  #: zero after this many days late (None: never)
    set_by = Column(String(128), nullable=False)
    set_at = Column(DateTime, nullable=False)


class ExtensionRow(Base):
    """A student's extension on an assignment, in minutes (table ``attnlab_extension``)."""
    __tablename__ = "attnlab_extension"
    assignment = Column(String(128), primary_key=True)
    student = Column(String(128), primary_key=True)
    minutes = Column(Integer, nullable=False)
    reason = Column(Text, nullable=False, default="")
    set_by = Column(String(128), nullable=False)
    set_at = Column(DateTime, nullable=False)


@dataclass(frozen=True)
class Policy:
    """A late policy: ``percent_per_day`` of the score per started day late, at most
    ``max_percent``; with ``hard_days`` set, a submission more than that many days late scores 0.
    The default (all zero, no hard deadline) is nbgrader's: no penalty."""
    percent_per_day: float = 0.0
    max_percent: float = 100.0
    hard_days: float | None = None

    def __post_init__(self):
        if not (0 <= self.percent_per_day <= 100 and 0 <= self.max_percent <= 100):
            raise DeadlineError("a late percentage must be between 0 and 100 (e.g. --per-day 10 --cap 50)")
        if self.hard_days is not None and self.hard_days < 0:
            raise DeadlineError("--zero-after must be a number of days ≥ 0 (e.g. 7)")

    def penalty(self, score: float, seconds_late: float) -> float:
        """Points to take from ``score`` for a submission ``seconds_late`` seconds after its due date
        (extension included).  Every started day counts as a day."""
        if seconds_late <= 0 or score <= 0:
            return 0.0
        days = math.ceil(seconds_late / DAY_S)
        if self.hard_days is not None and seconds_late > self.hard_days * DAY_S:
            return float(score)
        return round(score * min(self.max_percent, self.percent_per_day * days) / 100.0, 6)

    def text(self) -> str:
        """The policy in words."""
        parts = []
        if self.percent_per_day:
            parts.append(f"{self.percent_per_day:g}% per day late, at most {self.max_percent:g}%")
        if self.hard_days is not None:
            parts.append(f"0 points when more than {self.hard_days:g} day(s) late")
        return "; ".join(parts) or "no late penalty"


def parse_due(text: str) -> dt.datetime:
    """``2026-12-01 23:59`` (UTC) or with an offset (``2026-12-01T23:59+01:00``) → naive UTC.

    Raises:
        DeadlineError: if ``text`` is not an ISO 8601 date and time (the message shows both forms).
    """
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise DeadlineError(f"due date {text!r} is not a date and time; write e.g. '2026-12-01 23:59' "
                            "(UTC) or '2026-12-01T23:59+01:00'") from None
    if when.tzinfo is not None:
        when = when.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return when


def _gradebook(db_url):
    from nbgrader.api import Gradebook

    from attnlab_grader.records.course import _quiet_imports, normalize_db_url
    _quiet_imports()  # nbgrader runs `alembic` from this environment when it creates a gradebook
    return Gradebook(normalize_db_url(db_url) or db_url, "attnlab")


def policy_for(session, assignment: str) -> Policy:
    """The late policy of ``assignment`` (the default when none was set)."""
    row = session.execute(select(LatePolicyRow).where(LatePolicyRow.assignment == assignment)).scalar()
    return Policy(row.percent_per_day, row.max_percent, row.hard_days) if row else Policy()


def set_deadline(db_url: str, assignment: str, due: dt.datetime, policy: Policy) -> None:
    """Set ``assignment``'s due date (naive UTC) and late policy, then :func:`reapply`."""
    from attnlab_grader.records.history import ensure_tables
    with _gradebook(db_url) as gb:
        ensure_tables(gb.db.connection())
        gb.update_or_create_assignment(assignment, duedate=due)
        row = gb.db.get(LatePolicyRow, assignment) or LatePolicyRow(assignment=assignment)
        row.percent_per_day, row.max_percent, row.hard_days = policy.percent_per_day, policy.max_percent, policy.hard_days
        row.set_by, row.set_at = actor(), now()
        gb.db.add(row)
        gb.db.commit()
    reapply(db_url, assignment)


@dataclass(frozen=True)
class Extension:
    """``minutes`` more for ``student`` on ``assignment``, with the instructor's ``reason``."""
    assignment: str
    student: str
    minutes: int
    reason: str = ""


def parse_extensions(text: str, known_assignments: set[str], known_students: set[str] | None = None) -> list[Extension]:
    """Parse an extensions file: CSV with header ``student_id,assignment,days[,hours][,reason]``.

    Every line is checked before anything is applied; the first problem raises
    :class:`DeadlineError` naming the line.  ``known_students``: when given, an unknown student id
    is an error too (a typo would silently grant nobody)."""
    reader = csv.DictReader(io.StringIO(text))
    need = {"student_id", "assignment"}
    if not reader.fieldnames or not need <= set(reader.fieldnames) or not (
            {"days", "hours"} & set(reader.fieldnames)):
        raise DeadlineError("the extensions file needs a header line 'student_id,assignment,days,hours,reason' "
                            "(days or hours, reason optional); nothing was changed")
    out, seen = [], set()
    for n, row in enumerate(reader, start=2):
        where = f"line {n}"
        student, assignment = (row.get("student_id") or "").strip(), (row.get("assignment") or "").strip()
        if not student or not assignment:
            raise DeadlineError(f"{where}: student_id and assignment are required; nothing was changed")
        if assignment not in known_assignments:
            raise DeadlineError(f"{where}: unknown assignment {assignment!r} (known: "
                                f"{', '.join(sorted(known_assignments)) or 'none'}); nothing was changed")
        if known_students is not None and student not in known_students:
            raise DeadlineError(f"{where}: unknown student {student!r} (not in the gradebook); add them with "
                                "'nbgrader db student add' or fix the id; nothing was changed")
        try:
            days = float(row.get("days") or 0)
            hours = float(row.get("hours") or 0)
        except ValueError:
            raise DeadlineError(f"{where}: days and hours must be numbers (e.g. 2 or 1.5); nothing was changed") from None
        if days < 0 or hours < 0 or not math.isfinite(days + hours) or days * 24 + hours > 24 * 365:
            raise DeadlineError(f"{where}: an extension must be between 0 and 365 days; nothing was changed")
        if (student, assignment) in seen:
            raise DeadlineError(f"{where}: {student} has two extensions for {assignment}; keep one; nothing was changed")
        seen.add((student, assignment))
        out.append(Extension(assignment, student, round(days * 1440 + hours * 60), (row.get("reason") or "").strip()))
    return out


def grant(db_url: str, extensions: list[Extension]) -> None:
    """Store ``extensions`` (replacing earlier ones of the same student and assignment; 0 minutes
    removes one) in one transaction, then :func:`reapply` for each assignment touched."""
    from attnlab_grader.records.history import ensure_tables
    with _gradebook(db_url) as gb:
        ensure_tables(gb.db.connection())
        for e in extensions:
            row = gb.db.get(ExtensionRow, (e.assignment, e.student))
            if e.minutes == 0:
                if row:
                    gb.db.delete(row)
                continue
            row = row or ExtensionRow(assignment=e.assignment, student=e.student)
            row.minutes, row.reason, row.set_by, row.set_at = e.minutes, e.reason, actor(), now()
            gb.db.add(row)
        gb.db.commit()
    for assignment in sorted({e.assignment for e in extensions}):
        reapply(db_url, assignment)


def sync_extension(gb, assignment: str, student: str) -> None:
    """Copy the stored extension of ``student`` onto nbgrader's submission (None when there is none)."""
    from attnlab_grader.records.history import ensure_tables
    ensure_tables(gb.db.connection())
    row = gb.db.get(ExtensionRow, (assignment, student))
    sub = gb.find_submission(assignment, student)
    sub.extension = dt.timedelta(minutes=row.minutes) if row else None


def reapply(db_url: str, assignment: str) -> int:
    """Recompute the late penalty of every submission of ``assignment`` (extension and policy as
    stored now) and commit.  Returns the number of submissions updated (0 for an unknown assignment)."""
    with _gradebook(db_url) as gb:
        n = reapply_in(gb, assignment)
        gb.db.commit()
        return n


def reapply_in(gb, assignment: str, students: list[str] | None = None) -> int:
    """Recompute, in the open nbgrader ``Gradebook`` ``gb`` (not committed), the late penalty (points)
    of the submissions of ``assignment`` -- every one, or those of ``students`` -- from their score,
    timestamp, due date, extension and the assignment's policy as the gradebook holds them now.

    Every writer of derived values calls it first (the grades sheet, feedback), so a penalty is never
    one computed from an earlier score (a regrade, a manual grade, a re-grade).  Returns the number of
    submissions updated (0 for an unknown assignment)."""
    from nbgrader.api import MissingEntry
    from attnlab_grader.records.history import ensure_tables
    try:
        subs = gb.assignment_submissions(assignment)
    except MissingEntry:
        return 0
    ensure_tables(gb.db.connection())
    policy = policy_for(gb.db, assignment)
    minutes = {r.student: r.minutes for r in gb.db.execute(
        select(ExtensionRow).where(ExtensionRow.assignment == assignment)).scalars()}
    n = 0
    for sub in subs:
        if students is not None and sub.student.id not in students:
            continue
        ext = dt.timedelta(minutes=minutes[sub.student.id]) if sub.student.id in minutes else None
        if sub.extension != ext:  # the stored extension, as sync_extension copies it
            sub.extension = ext
        late = sub.total_seconds_late
        for nb in sub.notebooks:
            penalty = policy.penalty(nb.score, late) if late > 0 else None
            if nb.late_submission_penalty != penalty:
                nb.late_submission_penalty = penalty
        n += 1
    gb.db.flush()
    return n


def describe(sub) -> dict:
    """Lateness facts of one nbgrader submission for sheets and pages: ``due`` (effective, ISO UTC,
    or ''), ``extension`` (e.g. '2 d'), ``late_by`` ('' when on time), ``late_penalty`` (points)."""
    due = sub.duedate
    ext = sub.extension
    late = sub.total_seconds_late if due and sub.timestamp else 0
    return {"due": f"{due:%Y-%m-%d %H:%M} UTC" if due else "",
            "extension": duration(ext.total_seconds()) if ext else "",
            "late_by": duration(late) if late > 0 else "",
            "late_penalty": round(sub.late_submission_penalty or 0.0, 6)}


def duration(seconds: float) -> str:
    """``93784`` → ``'1 d 2 h 3 min'``."""
    seconds = int(round(seconds))
    d, rest = divmod(seconds, DAY_S)
    h, rest = divmod(rest, 3600)
    m = rest // 60
    return " ".join(f"{v} {u}" for v, u in ((d, "d"), (h, "h"), (m, "min")) if v) or "< 1 min"


DEADLINE_NOTE_ID = "attnlab-deadline"


def deadline_html(db_url: str, assignment: str, student: str) -> str:
    """A paragraph for ``student``'s feedback: due date (with their extension), when they submitted,
    how late and the penalty; '' when the assignment has no due date."""
    import html as _html

    from nbgrader.api import MissingEntry
    with _gradebook(db_url) as gb:
        try:
            sub = gb.find_submission(assignment, student)
        except MissingEntry:
            return ""
        if sub.duedate is None:
            return ""
        facts = describe(sub)
        policy = policy_for(gb.db, assignment)
        parts = [f"Due: {facts['due']}"
                 + (f" (includes your extension of {facts['extension']})" if facts["extension"] else "")]
        if sub.timestamp:
            parts.append(f"submitted {sub.timestamp:%Y-%m-%d %H:%M} UTC")
        if facts["late_by"]:
            parts.append(f"late by {facts['late_by']}: {facts['late_penalty']:g} point(s) taken ({policy.text()})")
        else:
            parts.append("on time")
    return (f'<p id="{DEADLINE_NOTE_ID}" style="border:1px solid #888;padding:.4em;margin:1em">'
            + _html.escape("; ".join(parts)) + "</p>")
