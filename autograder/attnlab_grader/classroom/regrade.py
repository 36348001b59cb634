"""Regrade requests: a student asks, per graded item, with a reason; graders see a queue; every
change is recorded (:mod:`attnlab_grader.records.history`) and announced on re-release.

Student side (in their JupyterLab terminal, the learner's library): ``attnlab regrade-request
ASSIGNMENT ITEM --reason TEXT`` (:mod:`attnlab.regrade`, the request file's one home) writes one small
JSON file into the course's regrade inbox in the exchange, ``EXCHANGE/<course>/regrade/``
(``<course>``: the class's ``CourseDirectory.course_id``) -- a folder students may write into but not
list or read (mode 0733 with the sticky bit, like nbgrader's ``inbound``, and setgid: each file gets
the graders' group and is written 0640, so the graders can read it and other students cannot).  The
student id is the requester's login (``JUPYTERHUB_USER`` or the Unix user); when the inbox is read
(:func:`ingest`, with :func:`attnlab.regrade.parse_request`), the file's owner must be that user (or
the course owner), so nobody can file a request in another student's name.

Grader side: ``attnlab-grade regrade-queue COURSE`` moves the inbox into the gradebook table
``attnlab_regrade_request`` (checked: the item must have a grade; otherwise the request is
kept as ``refused`` with the reason; a file it cannot read is left in the inbox and listed, never
deleted) and prints the queue; ``attnlab-grade regrade COURSE
-a A -s S --item ITEM --score N --reason TEXT`` changes the grade (the history records who,
when, old → new, why) and resolves the open requests for that item.
"""
from __future__ import annotations

import os
import pwd
from pathlib import Path

from sqlalchemy import Column, DateTime, Integer, String, Text, select

from attnlab.regrade import ID_RE, RegradeError, Request, inbox, parse_request
from attnlab_grader.records.history import Base, actor, ensure_tables, now, reason


class RegradeRequest(Base):
    """One student's request for one item (table ``attnlab_regrade_request``)."""
    __tablename__ = "attnlab_regrade_request"
    id = Column(Integer, primary_key=True, autoincrement=True)
    assignment = Column(String(128), nullable=False, index=True)
    student = Column(String(128), nullable=False, index=True)
    item = Column(String(128), nullable=False)
    reason = Column(Text, nullable=False)
    filed_at = Column(DateTime, nullable=False)
    status = Column(String(16), nullable=False, default="open")  #: open, refused, resolved
    note = Column(Text, nullable=False, default="")             #: why refused / how resolved
    closed_by = Column(String(128), nullable=True)
    closed_at = Column(DateTime, nullable=True)




def make_inbox(exchange_root: str | os.PathLike, course_id: str, group: str | int | None = None) -> Path:
    """Create the inbox ``EXCHANGE/<course_id>/regrade`` (and ``EXCHANGE/<course_id>``, 0755, when
    missing): students may drop files but not list or read them (0733 with the sticky bit), and every
    file dropped gets the inbox's group (the setgid bit), which students' requests are readable by
    (they are written 0640).

    Args:
        exchange_root: nbgrader's ``Exchange.root``.
        course_id: the class's own course id (nbgrader's ``CourseDirectory.course_id``).
        group: the graders' group (name or gid) that must read the requests; default the group
            the folder gets from its parent or the creating account.

    Raises:
        RegradeError: ``course_id`` is empty or not an id, or ``group`` is not a group.
    """
    if not ID_RE.match(course_id or ""):
        raise RegradeError(f"course id {course_id!r} is not a course id; set c.CourseDirectory.course_id in the "
                           "class's nbgrader_config.py or pass --course-id")
    gid = None
    if group is not None:
        import grp
        try:
            gid = int(group) if str(group).isdigit() else grp.getgrnam(str(group)).gr_gid
        except KeyError:
            raise RegradeError(f"there is no group {group!r}; name the graders' group (e.g. formgrade-{course_id})") from None
    path = inbox(exchange_root, course_id)
    if not path.parent.exists():  # EXCHANGE/<course>: 0755 as nbgrader makes it, whatever the umask
        path.parent.mkdir(parents=True)
        os.chmod(path.parent, 0o755)
    path.mkdir(exist_ok=True)
    if gid is not None:
        os.chown(path, -1, gid)
    os.chmod(path, 0o3733)
    return path




MAX_FILE = 16 * 1024


def _read_small(path: Path) -> str:
    """The text of an inbox file: a regular file (never a link, pipe or device: students write
    into the inbox), at most 16 KiB.  Raises ``ValueError`` saying what it is instead."""
    import stat
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > MAX_FILE:
            raise ValueError(f"larger than {MAX_FILE // 1024} KiB")
        return os.read(fd, MAX_FILE).decode("utf-8")
    finally:
        os.close(fd)


def _owner_ok(path: Path, student: str) -> bool:
    st = path.lstat()
    if st.st_uid == os.geteuid():  # filed by the course owner (on a student's behalf)
        return True
    try:
        return pwd.getpwuid(st.st_uid).pw_name == student
    except KeyError:
        return False


def _gradebook(db_url):
    from nbgrader.api import Gradebook

    from attnlab_grader.records.course import _quiet_imports, normalize_db_url
    _quiet_imports()  # nbgrader runs `alembic` from this environment when it creates a gradebook
    return Gradebook(normalize_db_url(db_url) or db_url, "attnlab")


def _has_grade(gb, req: Request) -> bool:
    """The item has a grade a student can ask about (:mod:`.lifecycle`: not awaiting manual grading)."""
    from nbgrader.api import MissingEntry

    from attnlab_grader.records.lifecycle import State, state_of
    try:
        grade = gb.find_grade(req.item, req.assignment, req.assignment, req.student)
    except MissingEntry:
        return False
    has_score = grade.auto_score is not None or grade.manual_score is not None
    return has_score and state_of(grade) is not State.AWAITING_MANUAL


def ingest(exchange_root, course_id: str, db_url: str) -> list[dict]:
    """Move every request from the inbox into the gradebook; a file is removed only once its
    request is stored (committed).

    A request for an item without a grade is stored as ``refused`` with the reason; so is one filed
    in another student's name.  A file that cannot be read as a request (permissions, not a regular
    file, not a request's JSON) is **kept** in the inbox and returned with status ``kept`` and the
    reason (nothing is stored for it), so no request is ever lost.  Returns what was added or kept."""
    box = inbox(exchange_root, course_id)
    files = sorted(box.glob("*.json")) if box.is_dir() else []
    added: list[dict] = []
    if not files:
        return added
    with _gradebook(db_url) as gb:
        ensure_tables(gb.db.connection())
        for path in files:
            try:
                req = parse_request(_read_small(path))
            except (OSError, ValueError) as err:
                why = ("the grader account may not read it (ask the administrator to check the inbox's group "
                       "and mode, see autograder/README.md)" if isinstance(err, PermissionError)
                       else f"{type(err).__name__}: {err}")
                added.append({"status": "kept", "student": path.name.split("+")[0][:128], "assignment": "?",
                              "item": "?", "path": str(path),
                              "note": f"not readable as a regrade request ({why}); kept in the inbox"})
                continue
            if not _owner_ok(path, req.student):
                status, note = "refused", "filed by another user in this student's name"
            elif not _has_grade(gb, req):
                status, note = "refused", (f"item {req.item} of {req.assignment} has no grade yet for "
                                           f"{req.student}: ask again once your feedback shows a score for it")
            else:
                status, note = "open", ""
            row = RegradeRequest(assignment=req.assignment, student=req.student, item=req.item,
                                 reason=req.reason, filed_at=req.filed_at, status=status, note=note,
                                 closed_by=None if status == "open" else "attnlab",
                                 closed_at=None if status == "open" else now())
            gb.db.add(row)
            gb.db.flush()
            added.append({c.name: getattr(row, c.name) for c in RegradeRequest.__table__.columns})
            gb.db.commit()
            path.unlink()
    return added


def queue(db_url: str, status: str | None = "open", assignment: str | None = None) -> list[dict]:
    """Requests in the gradebook as dicts (``status`` None: all), oldest first."""
    with _gradebook(db_url) as gb:
        ensure_tables(gb.db.connection())
        q = select(RegradeRequest.__table__).order_by(RegradeRequest.id)
        if status:
            q = q.where(RegradeRequest.status == status)
        if assignment:
            q = q.where(RegradeRequest.assignment == assignment)
        return [dict(r._mapping) for r in gb.db.execute(q)]


def change_grade(db_url: str, assignment: str, student: str, item: str, score: float, why: str,
                 who: str | None = None) -> tuple[float | None, float]:
    """Set ``item``'s manual score (points) for ``student``, recorded in the history with ``why``;
    open requests for that item are resolved and the submission's late penalty is recomputed from
    the new score.  Returns (old score, new score).  Raises
    :class:`RegradeError` for an unknown item or student, a score outside 0..max points, or no
    reason."""
    from nbgrader.api import MissingEntry
    if not (why or "").strip():
        raise RegradeError("say why the grade changes: --reason TEXT (the student sees it)")
    with _gradebook(db_url) as gb:
        ensure_tables(gb.db.connection())
        try:
            grade = gb.find_grade(item, assignment, assignment, student)
        except MissingEntry:
            raise RegradeError(f"{student} has no graded item {item!r} in {assignment}; check the ids "
                               "with 'attnlab-grade regrade-queue' or the feedback") from None
        if not 0 <= score <= grade.max_score:
            raise RegradeError(f"{item} is worth 0..{grade.max_score:g} points; {score:g} is outside that")
        old = grade.score if (grade.auto_score is not None or grade.manual_score is not None) else None
        with reason(why.strip(), who):
            grade.manual_score = float(score)
            grade.needs_manual_grade = False  # as formgrader does when a score is entered
            rows = gb.db.execute(select(RegradeRequest).where(
                RegradeRequest.assignment == assignment, RegradeRequest.student == student,
                RegradeRequest.item == item, RegradeRequest.status == "open")).scalars().all()
            for row in rows:
                was = "—" if old is None else f"{old:g}"
                row.status, row.note = "resolved", f"{was} → {score:g}: {why.strip()}"
                row.closed_by, row.closed_at = who or actor(), now()
            from attnlab_grader.records.deadlines import reapply_in
            gb.db.flush()
            reapply_in(gb, assignment, [student])  # the late penalty of the new score
            gb.db.commit()
    return old, float(score)


def write_page(root: str | os.PathLike, db_url: str, kept: list[dict] | None = None) -> Path:
    """The graders' page ``COURSE/reports/regrade-queue.html``: the inbox files that could not be
    read (``kept``, as :func:`ingest` returns them), open requests (oldest first), then the
    requests closed and every grade change recorded, newest first."""
    import html

    from attnlab_grader.records.history import changes
    esc = html.escape
    every = queue(db_url, None)
    open_rows = "".join(f"<tr><td>#{r['id']}</td><td>{r['filed_at']:%Y-%m-%d %H:%M}</td><td>{esc(r['student'])}</td>"
                        f"<td>{esc(r['assignment'])}</td><td><code>{esc(r['item'])}</code></td><td>{esc(r['reason'])}</td></tr>"
                        for r in every if r["status"] == "open")
    closed = "".join(f"<li>#{r['id']} {esc(r['student'])}/{esc(r['assignment'])} <code>{esc(r['item'])}</code>: "
                     f"<strong>{r['status']}</strong> — {esc(r['note'])} (asked: {esc(r['reason'])})</li>"
                     for r in reversed(every) if r["status"] != "open")
    hist = "".join(f"<li>{esc(c.text())}</li>" for c in reversed(changes(db_url)))
    kept_rows = "".join(f"<li><code>{esc(k['path'])}</code>: {esc(k['note'])}</li>" for k in kept or [])
    page = ("<!doctype html><meta charset='utf-8'><title>Regrade queue</title><h1>Regrade queue</h1>"
            f"<p>Generated {now():%Y-%m-%d %H:%M} UTC by <code>attnlab-grade regrade-queue</code>. Resolve a request with "
            "<code>attnlab-grade regrade COURSE -a A -s S --item ITEM --score N --reason TEXT</code>.</p>"
            + (f"<h2>Kept in the inbox (not readable as requests)</h2><ul>{kept_rows}</ul>" if kept_rows else "")
            + "<h2>Open</h2>" + (f"<table border=1 cellpadding=4><tr><th>#</th><th>filed (UTC)</th><th>student</th>"
                               f"<th>assignment</th><th>item</th><th>reason</th></tr>{open_rows}</table>"
                               if open_rows else "<p>No open request.</p>")
            + f"<h2>Closed</h2><ul>{closed or '<li>none</li>'}</ul>"
            + f"<h2>Grade history (newest first)</h2><ul>{hist or '<li>no change recorded</li>'}</ul>")
    path = Path(root) / "reports" / "regrade-queue.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
