"""One gradebook, several graders at once: create what they would race on, one at a time.

Two ``grade`` runs started together on an empty database both create nbgrader's tables, its
course rows (the course's own and ``default_course``, which nbgrader's preprocessors open the
gradebook with) and, when they grade the same students, the same student rows; the loser of each
race fails (a duplicate-key error) and its submissions are not graded.  :func:`prepare` does
that creation first, serialised across processes -- a PostgreSQL advisory lock (any grader on
any machine using the database) or, for a SQLite gradebook, a file lock beside the file -- and
also creates attnlab's own tables (:mod:`attnlab_grader.records.history`).  After it, the grading
runs only update rows of their own assignment.
"""
from __future__ import annotations

import contextlib
import zlib

#: The advisory lock key (a fixed 32-bit number derived from a name, shared by every grader).
LOCK_KEY = zlib.crc32(b"attnlab-gradebook-init")


@contextlib.contextmanager
def serialised(db_url: str):
    """Hold the gradebook's creation lock while the block runs (see the module docstring)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    url = make_url(db_url)
    if url.get_backend_name() == "postgresql":
        engine = create_engine(url)
        try:
            with engine.connect() as conn:
                conn.execute(text("select pg_advisory_lock(:k)"), {"k": LOCK_KEY})
                try:
                    yield
                finally:
                    conn.execute(text("select pg_advisory_unlock(:k)"), {"k": LOCK_KEY})
                    conn.commit()
        finally:
            engine.dispose()
    elif url.get_backend_name() == "sqlite" and url.database:
        from filelock import FileLock
        with FileLock(url.database + ".init.lock", timeout=300):
            yield
    else:
        yield


def prepare(db_url: str, students: list[str], course_id: str = "attnlab") -> None:
    """Create nbgrader's schema, the course's row and nbgrader's default one (its preprocessors
    open the gradebook without a course id), attnlab's tables, and a row for each of ``students``
    missing from the gradebook, under :func:`serialised`."""
    from nbgrader.api import Gradebook, Student

    from attnlab_grader.records.course import _quiet_imports, normalize_db_url
    from attnlab_grader.classroom import regrade, rubric  # noqa: F401 - their tables are created too
    from attnlab_grader.records import deadlines  # noqa: F401
    from attnlab_grader.steps import answers  # noqa: F401
    from attnlab_grader.records.history import ensure_tables
    _quiet_imports()
    db_url = normalize_db_url(db_url) or db_url
    with serialised(db_url):
        with Gradebook(db_url):  # nbgrader's default course id, as SaveCells and SaveAutoGrades use it
            pass
        with Gradebook(db_url, course_id) as gb:
            ensure_tables(gb.db.connection())
            known = {s.id for s in gb.students}
            # names intake refuses (control characters) are left to it; the rest are added in one
            # transaction (nbgrader's add_student commits each row: minutes for a class of 10,000)
            new = sorted({s for s in students if s not in known and s.isprintable()})
            gb.db.add_all([Student(id=s) for s in new])
            gb.db.commit()
