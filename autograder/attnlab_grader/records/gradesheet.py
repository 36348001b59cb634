"""``COURSE/grades.csv`` as one sheet for the whole course: every export *merges* into it.

Rows are keyed by ``(assignment, student_id)``: an export replaces the rows it produces and
keeps every other row (other assignments, students no longer in this export), so grading
assignment 03 never drops the rows of 02.  The merge reads, combines and writes under a
:class:`filelock.FileLock` (``grades.csv.lock`` beside the sheet) and writes a temporary file
in the same folder that :func:`os.replace` swaps in atomically, so two graders exporting at the
same time (e.g. two assignments into one PostgreSQL gradebook) lose nothing and a reader never
sees half a file.
"""
from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

from filelock import FileLock

#: The key of a row of the grades sheet.
KEY = ("assignment", "student_id")
#: Seconds to wait for another grader's merge before giving up with a clear message.
LOCK_TIMEOUT_S = 120


class GradesheetError(RuntimeError):
    """The sheet could not be merged (lock not obtained, or the existing file is not a grades CSV)."""


def lock_for(path: str | os.PathLike) -> FileLock:
    """The lock guarding ``path`` (``<path>.lock``; also used by other writers beside the sheet)."""
    return FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S)


def read_rows(path: str | os.PathLike) -> list[dict]:
    """The rows of an existing sheet (``[]`` when there is none).  Raises :class:`GradesheetError`
    when the file exists but has no ``assignment``/``student_id`` header."""
    path = Path(path)
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames or not set(KEY) <= set(reader.fieldnames):
            raise GradesheetError(f"{path} exists but is not a grades sheet (no assignment/student_id "
                                  "columns); move it away and export again, nothing was written")
        return list(reader)


def merge(path: str | os.PathLike, rows: list[dict], fields: list[str]) -> Path:
    """Merge ``rows`` into the sheet at ``path`` (created if missing) and return its path.

    A row of ``rows`` replaces the existing row with the same :data:`KEY`; every other existing
    row is kept (columns it lacks are left empty; columns of the existing file that are not in
    ``fields`` are kept after them).  Sorted by assignment then student.  The file mode of an existing sheet is kept (new sheets: 0640 under the umask).

    Raises:
        GradesheetError: if another grader's export holds the sheet's lock for ``LOCK_TIMEOUT_S``
            seconds (nothing is written).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with lock_for(path):
            existing = read_rows(path)
            merged = {tuple(r.get(k, "") for k in KEY): r for r in existing}
            extra = [f for r in existing for f in r if f not in fields and f is not None]
            columns = list(fields) + list(dict.fromkeys(extra))
            for row in rows:
                merged[tuple(str(row.get(k, "")) for k in KEY)] = row
            mode = path.stat().st_mode & 0o777 if path.exists() else 0o640
            fd, tmp = tempfile.mkstemp(prefix=".grades-", suffix=".csv", dir=path.parent)
            try:
                with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
                    writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
                    writer.writeheader()
                    for key in sorted(merged):
                        writer.writerow({c: merged[key].get(c, "") for c in columns})
                os.chmod(tmp, mode)
                os.replace(tmp, path)
            except BaseException:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise
    except TimeoutError as err:  # filelock.Timeout subclasses TimeoutError
        raise GradesheetError(f"another grader has held {path}.lock for {LOCK_TIMEOUT_S} s; "
                              "nothing was written, export again when it finishes") from err
    return path
