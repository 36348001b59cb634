"""The instructor commands of ``attnlab-grade`` (registered on the main group by
:func:`register`): deadlines, extensions, regrade requests and grade history, LMS exports and
the instructor page.  Every command takes the course folder and ``--db`` as ``grade`` does;
bad input is one sentence and changes nothing."""
from __future__ import annotations

import os
import sys

import click

_DB = dict(default=None, envvar="ATTNLAB_DB", show_envvar=True,
           help="Gradebook URL, as for grade (default sqlite:///COURSE/gradebook.db).")


def _db(course: str, db_url: str | None) -> str:
    from ..course import load_config
    return load_config(course, db_url).CourseDirectory.db_url


def _nbgrader_setting(name: str) -> str:
    """``Exchange.root`` or ``CourseDirectory.course_id`` as this user's nbgrader config says."""
    from ..course import _quiet_imports
    _quiet_imports()
    from nbgrader.apps import NbGrader
    app = NbGrader()
    app.load_config_file()
    section, key = name.split(".")
    value = app.config[section].get(key)
    if value:
        return str(value)
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default.exchange import Exchange
    return str(getattr(Exchange() if section == "Exchange" else CourseDirectory(), key))


def _reexport(course: str, db_url: str | None, assignments) -> None:
    """Merge the changed assignments' rows into COURSE/grades.csv (lateness, penalties, scores)."""
    from ..pipeline import export
    export(course, sorted(set(assignments)), db_url)


def _fail(err: Exception):
    raise click.ClickException(str(err)) from None


def register(cli: click.Group) -> None:
    """Add the instructor commands to ``cli``."""
    for command in (deadline, extension, regrade_request, regrade_queue, regrade, history_cmd, lms_export):
        cli.add_command(command)


@click.command()
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True)
@click.option("--due", required=True, help="'2026-12-01 23:59' (UTC) or '2026-12-01T23:59+01:00'.")
@click.option("--per-day", type=float, default=0.0, show_default=True, help="Percent of the score taken per started day late.")
@click.option("--cap", type=float, default=100.0, show_default=True, help="At most this percent in all.")
@click.option("--zero-after", type=float, default=None, help="Score 0 when more than this many days late (hard deadline).")
@click.option("--db", "db_url", **_DB)
def deadline(course, assignment, due, per_day, cap, zero_after, db_url):
    """Set ASSIGNMENT's due date and late policy (nbgrader's duedate; penalties re-applied)."""
    from .deadlines import DeadlineError, Policy, parse_due, set_deadline
    try:
        policy = Policy(per_day, cap, zero_after)
        when = parse_due(due)
        set_deadline(_db(course, db_url), assignment, when, policy)
    except DeadlineError as e:
        _fail(e)
    _reexport(course, db_url, [assignment])
    click.echo(f"{assignment}: due {when:%Y-%m-%d %H:%M} UTC; {policy.text()}")


@click.command()
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", default=None)
@click.option("--student", "-s", default=None)
@click.option("--days", type=float, default=0.0)
@click.option("--hours", type=float, default=0.0)
@click.option("--reason", default="", help="e.g. 'accommodation: 1.5x time' (instructors only see it).")
@click.option("--file", "path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="CSV 'student_id,assignment,days,hours,reason': every line checked, then all applied.")
@click.option("--db", "db_url", **_DB)
def extension(course, assignment, student, days, hours, reason, path, db_url):
    """Grant extensions: one (-a, -s, --days/--hours; 0 removes it) or a whole file (--file)."""
    from nbgrader.api import Gradebook

    from .deadlines import DeadlineError, grant, parse_extensions
    url = _db(course, db_url)
    with Gradebook(url, "attnlab") as gb:
        known_a = {a.name for a in gb.assignments}
        known_s = {s.id for s in gb.students}
    try:
        if path:
            if assignment or student:
                raise DeadlineError("give either --file or -a/-s, not both")
            with open(path, encoding="utf-8") as fh:
                exts = parse_extensions(fh.read(), known_a, known_s)
        else:
            if not (assignment and student):
                raise DeadlineError("name the student and the assignment (-a A -s S --days N), or give --file")
            import csv
            import io
            buf = io.StringIO()
            csv.writer(buf).writerows([["student_id", "assignment", "days", "hours", "reason"],
                                       [student, assignment, days, hours, reason]])
            exts = parse_extensions(buf.getvalue(), known_a, known_s)
        grant(url, exts)
    except (DeadlineError, UnicodeDecodeError) as e:
        _fail(e)
    _reexport(course, db_url, [e.assignment for e in exts])
    for e in exts:
        click.echo(f"{e.student}/{e.assignment}: " + (f"extension {e.minutes / 1440:g} day(s)" if e.minutes else "extension removed"))


@click.command("regrade-request")
@click.argument("assignment")
@click.argument("item")
@click.option("--reason", required=True, help="Why the item deserves another look (up to 2000 characters).")
@click.option("--exchange", default=None, help="The course exchange (default: nbgrader's Exchange.root).")
@click.option("--course", "course_id", default=None, help="Course id (default: nbgrader's course_id).")
def regrade_request(assignment, item, reason, exchange, course_id):
    """(Students) ask for a regrade of ITEM of ASSIGNMENT, with a reason."""
    from .regrade import RegradeError, file_request
    try:
        file_request(exchange or _nbgrader_setting("Exchange.root"),
                     course_id or _nbgrader_setting("CourseDirectory.course_id"), assignment, item, reason)
    except (RegradeError, OSError) as e:
        _fail(e)
    click.echo(f"regrade request for {item} of {assignment} sent; you get a notice with your updated feedback")


@click.command("regrade-queue")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--exchange", default=None, help="The course exchange (default: nbgrader's Exchange.root).")
@click.option("--course-id", default="attnlab", show_default=True)
@click.option("--all", "show_all", is_flag=True, help="Also refused and resolved requests.")
@click.option("--open-inbox", is_flag=True, help="Create the exchange's regrade inbox (students may write, not read).")
@click.option("--db", "db_url", **_DB)
def regrade_queue(course, exchange, course_id, show_all, open_inbox, db_url):
    """Collect students' regrade requests into the gradebook and list the queue."""
    from .regrade import ingest, make_inbox, queue
    exchange = exchange or _nbgrader_setting("Exchange.root")
    url = _db(course, db_url)
    if open_inbox:
        click.echo(f"inbox: {make_inbox(exchange, course_id)}")
    for row in ingest(exchange, course_id, url):
        if row["status"] == "refused":
            click.echo(f"refused {row['student']}/{row['assignment']} {row['item']}: {row['note']}")
    for r in queue(url, None if show_all else "open"):
        click.echo(f"#{r['id']} [{r['status']}] {r['student']}/{r['assignment']} {r['item']}: {r['reason']}"
                   + (f" -- {r['note']}" if r["note"] else ""))


@click.command()
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True)
@click.option("--student", "-s", required=True)
@click.option("--item", required=True, help="The graded item's id (grade_id).")
@click.option("--score", type=float, required=True, help="New points for the item.")
@click.option("--reason", required=True, help="Why (recorded and shown to the student).")
@click.option("--db", "db_url", **_DB)
def regrade(course, assignment, student, item, score, reason, db_url):
    """Change one item's grade, recorded in the grade history; resolves open requests for it."""
    from .regrade import RegradeError, change_grade
    try:
        old, new = change_grade(_db(course, db_url), assignment, student, item, score, reason)
    except RegradeError as e:
        _fail(e)
    _reexport(course, db_url, [assignment])
    click.echo(f"{student}/{assignment} {item}: {'—' if old is None else f'{old:g}'} → {new:g}. "
               "Release feedback to let the student see it (a notice lists the change).")


@click.command("history")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", default=None)
@click.option("--student", "-s", default=None)
@click.option("--db", "db_url", **_DB)
def history_cmd(course, assignment, student, db_url):
    """Every recorded grade change: when, who, item, old → new, why."""
    from .history import changes
    for c in changes(_db(course, db_url), assignment, student):
        click.echo(c.text())


@click.command("lms-export")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["canvas", "moodle"]), required=True)
@click.option("--roster", type=click.Path(exists=True, dir_okay=False), required=True,
              help="The LMS's roster/grade export (Canvas: its Grades CSV; Moodle: its grade export CSV).")
@click.option("--out", default=None, help="Default COURSE/lms-<format>.csv.")
@click.option("--csv", "csv_path", default=None, help="Grades sheet (default COURSE/grades.csv).")
@click.option("--column", "columns", multiple=True, metavar="ASSIGNMENT=LMS COLUMN",
              help="The LMS column of an assignment (default: its name).")
def lms_export(course, fmt, roster, out, csv_path, columns):
    """Write the grades sheet in the import format of Canvas or Moodle."""
    from .lms import LmsError, export
    try:
        mapping = dict(c.split("=", 1) for c in columns)
    except ValueError:
        _fail(ValueError("--column takes ASSIGNMENT=LMS COLUMN, e.g. 03_masks='Masks (123)'"))
    try:
        path, skipped = export(fmt, csv_path or os.path.join(course, "grades.csv"), roster,
                               out or os.path.join(course, f"lms-{fmt}.csv"), mapping)
    except LmsError as e:
        _fail(e)
    for line in skipped:
        click.echo(f"not exported: {line}", err=True)
    click.echo(f"wrote {path}")
    sys.stdout.flush()
