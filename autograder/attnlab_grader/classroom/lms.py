"""The grades sheet in the import formats of Canvas and Moodle.

Both LMSs import grades as a CSV whose rows identify students the way the LMS knows them and
whose other columns are grade items.  The safest way to match is to start from the LMS's own
export (its roster, with its identifiers and column names), so this module reads that file and
writes it back with attnlab's scores filled in:

- **Canvas** (Grades → Export, then Grades → Import): identification columns ``Student``, ``ID``,
  ``SIS User ID``, ``SIS Login ID``, ``Section`` are copied; an assignment column is named as in
  Canvas (``Masks (1234)``: ``--column 03_masks='Masks (1234)'``; default the assignment's
  name, which Canvas creates as a new assignment on import).  Canvas's optional
  ``Points Possible`` row is written with each assignment's maximum.  The attnlab student id is
  matched against ``SIS Login ID``, then ``SIS User ID``, then ``ID``.
- **Moodle** (Grades → Export → Plain text file, then Import → CSV file): the columns
  ``First name``, ``Last name``, ``ID number``, ``Email address`` (and ``Username`` when the export
  has it) are copied; a grade column is named ``Assignment: NAME (Real)`` unless mapped.  On import,
  map ``Email address`` (or ``ID number``) to the user.  The student id is matched against
  ``Username``, then ``ID number``, then the part of ``Email address`` before ``@``.

Only rows whose status is ``graded`` are exported, with ``final_score`` (after any late
penalty).  Nothing is dropped silently: a submission still flagged, pending manual grading, in
error or missing, a graded student the roster does not know, and a roster student with no row for
an exported assignment are each returned with the reason (:class:`LeftOut`), never guessed; the
command then writes nothing and fails unless told ``--allow-partial``.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

CANVAS_ID = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_ID = ["First name", "Last name", "ID number", "Institution", "Department", "Email address", "Username"]
MATCH = {"canvas": ["SIS Login ID", "SIS User ID", "ID"], "moodle": ["Username", "ID number", "Email address"]}


class LmsError(ValueError):
    """The roster or the grades sheet cannot be used; nothing was written."""


class LeftOut(LmsError):
    """Some grades could not be exported (``lines``: one per grade, with the reason); nothing was
    written."""

    def __init__(self, lines: list[str]):
        self.lines = list(lines)
        super().__init__(f"{len(self.lines)} grade(s) could not be exported (listed above); nothing was "
                         "written: grade or fix them, or pass --allow-partial to write the others")


def _read(path, what: str) -> tuple[list[str], list[dict]]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            rows = list(reader)
            return list(reader.fieldnames or []), rows
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise LmsError(f"cannot read the {what} {path}: {err}") from None


def _key(fmt: str, column: str, value: str) -> str:
    value = (value or "").strip()
    if fmt == "moodle" and column == "Email address":
        return value.split("@", 1)[0]
    return value


def export(fmt: str, sheet: str | os.PathLike, roster: str | os.PathLike, out: str | os.PathLike,
           columns: dict[str, str] | None = None, assignments: list[str] | None = None,
           allow_partial: bool = False) -> tuple[Path, list[str]]:
    """Write ``out`` in ``fmt`` (``canvas`` or ``moodle``) from the grades ``sheet`` and the LMS's
    ``roster`` export; ``columns`` maps assignment → LMS column name; ``assignments`` limits the
    export to those (default: every assignment in the sheet).  Returns the path and one line per
    grade not exported (with why).

    Raises:
        LmsError: the roster is not an export of ``fmt``, a file cannot be read, or an assignment
            asked for has no row in the sheet (nothing written).
        LeftOut: some grades could not be exported and ``allow_partial`` is False (nothing written;
            ``.lines`` lists them with the reason).
    """
    if fmt not in MATCH:
        raise LmsError(f"unknown LMS format {fmt!r}; use canvas or moodle")
    columns = dict(columns or {})
    r_fields, r_rows = _read(roster, "LMS roster")
    ident = [c for c in (CANVAS_ID if fmt == "canvas" else MOODLE_ID) if c in r_fields]
    match = [c for c in MATCH[fmt] if c in r_fields]
    if not match:
        raise LmsError(f"{roster} is not a {fmt} grades export: it has none of the columns "
                       f"{', '.join(MATCH[fmt])}; export the grades from the LMS and pass that file")
    _, g_rows = _read(sheet, "grades sheet")
    present = list(dict.fromkeys(g.get("assignment", "") for g in g_rows))
    wanted = list(assignments) if assignments else present
    for a in wanted:
        if a not in present:
            raise LmsError(f"the grades sheet {sheet} has no rows for {a!r} (it has: "
                           f"{', '.join(present) or 'none'}); grade or export it first")
    index: dict[str, int] = {}
    for i, row in enumerate(r_rows):
        if fmt == "canvas" and (row.get("Student") or "").strip() == "Points Possible":
            continue
        for c in match:
            k = _key(fmt, c, row.get(c, ""))
            if k:
                index.setdefault(k, i)
    skipped, grades, maxima, has_row = [], {}, {}, set()
    for g in g_rows:
        a, s = g.get("assignment", ""), g.get("student_id", "")
        if a not in wanted:
            continue
        col = columns.get(a) or (a if fmt == "canvas" else f"Assignment: {a} (Real)")
        if g.get("max_score"):
            maxima[col] = g["max_score"]
        if s in index:
            has_row.add((index[s], a))
        if g.get("status") != "graded":
            why = g.get("reason") or ""
            skipped.append(f"{s}/{a}: status {g.get('status') or 'unknown'}, not a final grade"
                           + (f" ({why})" if why else ""))
            continue
        if s not in index:
            skipped.append(f"{s}/{a}: student {s!r} is not in the {fmt} roster (check the id or enrol them)")
            continue
        grades[(index[s], col)] = g.get("final_score") or g.get("score", "")
    for i, row in enumerate(r_rows):  # roster students the sheet has nothing for
        if fmt == "canvas" and (row.get("Student") or "").strip() == "Points Possible":
            continue
        who = next((_key(fmt, c, row.get(c, "")) for c in match if _key(fmt, c, row.get(c, ""))), f"row {i + 2}")
        for a in wanted:
            if (i, a) not in has_row:
                skipped.append(f"{who}/{a}: no row in the grades sheet (not submitted and not in the gradebook?)")
    if skipped and not allow_partial:
        raise LeftOut(skipped)
    grade_cols = [columns.get(a) or (a if fmt == "canvas" else f"Assignment: {a} (Real)") for a in wanted]
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    with tmp.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(ident + grade_cols)
        if fmt == "canvas" and grade_cols:
            writer.writerow(["Points Possible"] + [""] * (len(ident) - 1) + [maxima.get(c, "") for c in grade_cols])
        for i, row in enumerate(r_rows):
            if fmt == "canvas" and (row.get("Student") or "").strip() == "Points Possible":
                continue
            writer.writerow([row.get(c, "") for c in ident] + [grades.get((i, c), "") for c in grade_cols])
    os.replace(tmp, out)
    return out, skipped
