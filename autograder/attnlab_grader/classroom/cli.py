"""The instructor commands of ``attnlab-grade`` (registered on the main group by
:func:`register`): deadlines, extensions, regrade requests and grade history, LMS exports and
the instructor page, LTI names and score passback.  The students' ``regrade-request`` and
``practice-attach`` are the learner's ``attnlab`` commands (:mod:`attnlab.cli`); their old
``attnlab-grade`` spellings still run them, after one line naming the new one.  Every command takes the course folder and ``--db`` as ``grade`` does;
bad input is one sentence and changes nothing."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from attnlab_grader.records.settings import grader_default

_DB = dict(default=grader_default("db"), show_default="$ATTNLAB_DB",
           help="Gradebook URL, as for grade (default sqlite:///COURSE/gradebook.db).")


def _db(course: str, db_url: str | None) -> str:
    from attnlab_grader.records.course import load_config
    return load_config(course, db_url).CourseDirectory.db_url


def _nbgrader_setting(name: str) -> str:
    """``Exchange.root`` or ``CourseDirectory.course_id`` as this user's nbgrader config says."""
    from attnlab.regrade import nbgrader_setting
    from attnlab_grader.records.course import _quiet_imports
    _quiet_imports()
    return nbgrader_setting(name)


def _reexport(course: str, db_url: str | None, assignments) -> None:
    """Merge the changed assignments' rows into COURSE/grades.csv (lateness, penalties, scores)."""
    from attnlab_grader.classroom.pipeline import export
    export(course, sorted(set(assignments)), db_url)


def _reexport_all(course: str, db_url: str | None) -> None:
    """Merge every assignment the gradebook has into COURSE/grades.csv (nothing when there is no
    gradebook yet, e.g. a sheet made by hand)."""
    from nbgrader.api import Gradebook
    from attnlab_grader.records.course import normalize_db_url
    url = _db(course, db_url)
    if url.startswith("sqlite:///") and not os.path.exists(url[len("sqlite:///"):]):
        return
    with Gradebook(normalize_db_url(url) or url, "attnlab") as gb:
        names = [a.name for a in gb.assignments]
    if names:
        _reexport(course, db_url, names)


def _fail(err: Exception):
    raise click.ClickException(str(err)) from None


def register(cli: click.Group) -> None:
    """Add the instructor commands to ``cli``."""
    for command in (deadline, extension, regrade_queue, regrade, history_cmd, lms_export,
                    rubric_define, rubric_apply, grading_queue, similarity, class_mastery,
                    lti_roster, lti_passback, *_learner_commands()):
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
    from attnlab_grader.records.deadlines import DeadlineError, Policy, parse_due, set_deadline
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
    """Grant extensions: one (-a, -s, --days/--hours; 0 removes it) or a whole file (--file).

    Raises:
        DeadlineError: both a file and -a/-s are given, or neither a file nor both -a and -s.
    """
    from nbgrader.api import Gradebook

    from attnlab_grader.records.deadlines import DeadlineError, grant, parse_extensions
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


def _moved(command: click.Command, run) -> click.Command:
    """The students' ``attnlab`` ``command`` under its old ``attnlab-grade`` name: the same arguments and
    options, one line on stderr naming the command it is now, then ``run(**params)``."""
    def callback(**params):
        click.echo(f"attnlab-grade {command.name} is now `attnlab {command.name}` (the learner's command, "
                   "same arguments); running that", err=True)
        run(**params)
    return click.Command(command.name, params=list(command.params), callback=callback,
                         help=f"(Students; now `attnlab {command.name}`) {command.help}",
                         short_help=f"(Students) now `attnlab {command.name}`")


def _learner_commands() -> tuple[click.Command, click.Command]:
    from attnlab import cli as learner
    return (_moved(learner.regrade_request, learner.run_regrade_request),
            _moved(learner.practice_attach, lambda notebook, home: learner.run_practice_attach(notebook, home)))


@click.command("regrade-queue")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--exchange", default=None, help="The course exchange (default: nbgrader's Exchange.root).")
@click.option("--course-id", default=None,
              help="The class's course id (default: CourseDirectory.course_id of the class's nbgrader config).")
@click.option("--all", "show_all", is_flag=True, help="Also refused and resolved requests.")
@click.option("--open-inbox", is_flag=True, help="Create the exchange's regrade inbox (students may write, not read).")
@click.option("--group", default=None,
              help="With --open-inbox: the graders' group that reads the requests (default: the folder's group).")
@click.option("--db", "db_url", **_DB)
def regrade_queue(course, exchange, course_id, show_all, open_inbox, group, db_url):
    """Collect students' regrade requests into the gradebook and list the queue.

    A file in the inbox that cannot be read as a request is left there and listed (KEPT), never deleted.
    """
    from attnlab_grader.classroom.regrade import RegradeError, ingest, make_inbox, queue, write_page
    exchange = exchange or _nbgrader_setting("Exchange.root")
    course_id = course_id or _nbgrader_setting("CourseDirectory.course_id")
    url = _db(course, db_url)
    if open_inbox:
        try:
            click.echo(f"inbox: {make_inbox(exchange, course_id, group)}")
        except (RegradeError, OSError) as e:
            _fail(e)
    kept = []
    for row in ingest(exchange, course_id, url):
        if row["status"] == "refused":
            click.echo(f"refused {row['student']}/{row['assignment']} {row['item']}: {row['note']}")
        elif row["status"] == "kept":
            kept.append(row)
            click.echo(f"KEPT {row['path']}: {row['note']}", err=True)
    for r in queue(url, None if show_all else "open"):
        click.echo(f"#{r['id']} [{r['status']}] {r['student']}/{r['assignment']} {r['item']}: {r['reason']}"
                   + (f" -- {r['note']}" if r["note"] else ""))
    click.echo(f"graders' page: {write_page(course, url, kept)}")


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
    from attnlab_grader.classroom.regrade import RegradeError, change_grade, write_page
    try:
        old, new = change_grade(_db(course, db_url), assignment, student, item, score, reason)
    except RegradeError as e:
        _fail(e)
    write_page(course, _db(course, db_url))
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
    from attnlab_grader.records.history import changes
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
@click.option("--assignment", "-a", "assignments", multiple=True,
              help="Export only this assignment (repeatable; default: every assignment in the sheet).")
@click.option("--allow-partial", is_flag=True,
              help="Write the file even when some grades cannot be exported (they are listed; exit 0).")
@click.option("--db", "db_url", **_DB)
def lms_export(course, fmt, roster, out, csv_path, columns, assignments, allow_partial, db_url):
    """Write the grades sheet in the import format of Canvas or Moodle.

    The course's sheet is exported from the gradebook first (late penalties and statuses as they
    are now).  Every grade that cannot be exported is listed with the reason; then nothing is
    written and the command fails, unless --allow-partial.
    """
    from attnlab_grader.classroom.lms import LeftOut, LmsError, export
    try:
        mapping = dict(c.split("=", 1) for c in columns)
    except ValueError:
        _fail(ValueError("--column takes ASSIGNMENT=LMS COLUMN, e.g. 03_masks='Masks (123)'"))
    if not csv_path:  # the course's own sheet: bring it up to date with the gradebook first
        _reexport_all(course, db_url)
    try:
        path, skipped = export(fmt, csv_path or os.path.join(course, "grades.csv"), roster,
                               out or os.path.join(course, f"lms-{fmt}.csv"), mapping,
                               list(assignments) or None, allow_partial)
    except LeftOut as e:
        for line in e.lines:
            click.echo(f"not exported: {line}", err=True)
        _fail(e)
    except LmsError as e:
        _fail(e)
    for line in skipped:
        click.echo(f"not exported: {line}", err=True)
    click.echo(f"wrote {path}")
    sys.stdout.flush()


@click.command("rubric-define")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True)
@click.option("--file", "path", type=click.Path(exists=True, dir_okay=False), required=True,
              help="CSV 'item,key,points,comment' (replaces the assignment's rubrics).")
@click.option("--db", "db_url", **_DB)
def rubric_define(course, assignment, path, db_url):
    """Store ASSIGNMENT's rubrics (entries with points and reusable comments) in the gradebook."""
    from attnlab_grader.classroom.rubric import RubricError, define
    try:
        with open(path, encoding="utf-8") as fh:
            out = define(_db(course, db_url), assignment, fh.read())
    except (RubricError, UnicodeDecodeError) as e:
        _fail(e)
    for item, entries in out.items():
        click.echo(f"{item}: " + ", ".join(f"{k} ({p:+g})" for k, p, _ in entries))


@click.command("rubric-apply")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True)
@click.option("--student", "-s", required=True)
@click.option("--item", required=True)
@click.option("--keys", required=True, help="Rubric entries that apply, e.g. scale,variance.")
@click.option("--note", default="", help="An extra comment for this student.")
@click.option("--db", "db_url", **_DB)
def rubric_apply(course, assignment, student, item, keys, note, db_url):
    """Grade one written answer with rubric entries (score and comment, in the grade history)."""
    from attnlab_grader.classroom.rubric import RubricError, apply
    try:
        score, _ = apply(_db(course, db_url), assignment, student, item,
                         [k.strip() for k in keys.split(",") if k.strip()], note)
    except RubricError as e:
        _fail(e)
    _reexport(course, db_url, [assignment])
    click.echo(f"{student}/{assignment} {item}: {score:g} points ({keys})")


@click.command("grading-queue")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True)
@click.option("--graders", required=True, help="Comma-separated, e.g. ta1,ta2,prof.")
@click.option("--me", default=None, help="Show only this grader's share.")
@click.option("--db", "db_url", **_DB)
def grading_queue(course, assignment, graders, me, db_url):
    """Split the submissions still needing manual grading between graders (deterministic)."""
    from attnlab_grader.classroom.rubric import RubricError, split_queue
    try:
        split = split_queue(_db(course, db_url), assignment, graders.split(","))
    except RubricError as e:
        _fail(e)
    if me and me not in split:
        _fail(ValueError(f"{me} is not one of --graders {graders}"))
    for grader, students in split.items():
        if me in (None, grader):
            click.echo(f"{grader}: {', '.join(students) or '(nothing to grade)'}")


@click.command()
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True)
@click.option("--threshold", type=float, default=0.6, show_default=True,
              help="List pairs sharing at least this fraction of each one's answer code.")
def similarity(course, assignment, threshold):
    """List pairs of graded submissions whose code is suspiciously alike (for a person to judge)."""
    from attnlab_grader.classroom.similarity import SimilarityError, write
    try:
        path, pairs = write(course, assignment, threshold)
    except SimilarityError as e:
        _fail(e)
    for p in pairs:
        click.echo(f"{p.a} ~ {p.b}: {p.similarity_a:.0%} / {p.similarity_b:.0%} of their code shared")
    click.echo(f"{len(pairs)} pair(s) at or above {threshold:.0%}; wrote {path} (no grade was changed)")


@click.command("class-mastery")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--stale-days", type=float, default=7.0, show_default=True,
              help="List students whose last practice answer is older than this.")
@click.option("--times-out", type=click.Path(dir_okay=False), default=None,
              help="Also write the median minutes on task per lesson and exercise set to this JSON file "
                   "(the course table reads it as src/attnlab/measured_times.json).")
def class_mastery(course, stale_days, times_out):
    """Render the class's practice mastery from the summaries submitted with the notebooks."""
    from attnlab_grader.classroom.mastery import MasteryError, medians_document, write
    try:
        path, cm = write(course, stale_days)
    except MasteryError as e:
        _fail(e)
    if times_out:
        Path(times_out).write_text(json.dumps(medians_document(cm), indent=1, sort_keys=True) + "\n",
                                   encoding="utf-8")
        click.echo(f"wrote the median time on task of {len(cm.times)} lessons and exercise sets to {times_out}")
    click.echo(f"{cm.students} students, {len(cm.skills)} skills practised, {len(cm.stale)} without progress "
               f"for {stale_days:g} days; wrote {path}")


_LAUNCHES = dict(default=None, type=click.Path(dir_okay=False),
                 help="The hub's LTI launch record (default: ATTNLAB_LTI_LAUNCHES or /var/lib/attnlab-lti/<course id>/launches.jsonl).")


@click.command("lti-roster")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--launches", **_LAUNCHES)
@click.option("--db", "db_url", **_DB)
def lti_roster(course, launches, db_url):
    """Put students' names, emails and LTI user ids from their LMS launches into the gradebook."""
    from attnlab_grader.classroom.lti import LtiError, default_launches, import_roster, read_launches
    try:
        done = import_roster(_db(course, db_url), read_launches(launches or default_launches()))
    except LtiError as e:
        _fail(e)
    click.echo(f"{len(done)} student(s) updated from their LMS launches: {', '.join(done) or '(none yet)'}")


@click.command("lti-passback")
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True)
@click.option("--tool-config", required=True, type=click.Path(exists=True, dir_okay=False),
              help="pylti1p3 JSON tool configuration (issuer, client_id, auth_token_url, private_key_file, ...).")
@click.option("--issuer", default=None, help="The platform (when the tool configuration has several).")
@click.option("--client-id", default=None)
@click.option("--lineitems", default=None, help="The course's AGS line items URL (default: from the launch record).")
@click.option("--lineitem", default=None, help="Post to this existing line item (an LMS column) instead.")
@click.option("--label", default=None, help="Name of a line item created for ASSIGNMENT (default: its name).")
@click.option("--launches", **_LAUNCHES)
@click.option("--csv", "csv_path", default=None, help="Grades sheet (default COURSE/grades.csv).")
@click.option("--dry-run", is_flag=True, help="List what would be sent; send nothing.")
@click.option("--allow-partial", is_flag=True,
              help="Exit 0 even when some scores were not sent (they are listed either way).")
@click.option("--db", "db_url", **_DB)
def lti_passback(course, assignment, tool_config, issuer, client_id, lineitems, lineitem, label, launches,
                 csv_path, dry_run, allow_partial, db_url):
    """Send ASSIGNMENT's final scores (after late penalties) to the LMS through LTI Advantage AGS.

    The final scores are sent; every score that is not is listed with the reason, and then the
    command exits 1 unless --allow-partial.
    """
    from attnlab_grader.classroom.lti import LtiError, default_launches, import_roster, lineitems_url, passback, read_launches
    url = _db(course, db_url)
    if not csv_path:  # the course's own sheet, brought up to date with the gradebook first
        _reexport_all(course, db_url)
    try:
        path = launches or default_launches()
        if launches or os.path.exists(path):
            recs = read_launches(path)
            import_roster(url, recs)  # names and LTI user ids of students who launched since
            lineitems = lineitems or lineitems_url(recs)
        out = passback(csv_path or os.path.join(course, "grades.csv"), assignment, tool_config, url,
                       lineitems=lineitems, lineitem=lineitem, issuer=issuer, client_id=client_id,
                       label=label, dry_run=dry_run)
    except LtiError as e:
        _fail(e)
    for s, given, maximum in out.sent:
        click.echo(f"{'would send' if dry_run else 'sent'} {s}: {given:g}/{maximum:g}")
    for line in out.not_sent:
        click.echo(f"not sent: {line}", err=True)
    click.echo(f"{len(out.sent)} score(s) {'to send' if dry_run else 'sent'} to {out.lineitem or 'the line item'}; "
               f"{len(out.not_sent)} not sent")
    if out.not_sent and not allow_partial:
        _fail(ValueError(f"{len(out.not_sent)} score(s) of {assignment} were not sent (listed above); "
                         "grade or fix them and send again, or pass --allow-partial"))
