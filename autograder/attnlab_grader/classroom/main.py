"""Command line: ``attnlab-grade`` (installed) or ``python -m attnlab_grader`` (in a clone):
``{release,grade,report,check-release,clear-flag,paths}`` and the instructor commands of
:mod:`attnlab_grader.classroom.cli` (deadline, extension, regrade-queue, regrade, history, rubric-define,
rubric-apply, grading-queue, similarity, class-mastery, lms-export, lti-roster, lti-passback; the
students' ``regrade-request`` and ``practice-attach`` are ``attnlab`` commands now) (see README.md).

The commands belong to the instructor's distribution, ``attnlab-grader``; ``attnlab_grader/__main__.py``
(shipped with the learner's distribution) only calls :func:`cli` here, or says in one sentence what to install
when this layer is missing."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from attnlab.settings import course_settings
from attnlab_grader.classroom.extras import GraderGroup
from attnlab_grader.records.settings import grader_default


@click.group(cls=GraderGroup)
@click.option("--solutions", type=click.Path(file_okay=False), default=lambda: course_settings().solutions,
              show_default="$ATTNLAB_SOLUTIONS",
              help="The course's solutions/ folder (grading specs and source notebooks). Default: the clone's; "
                   "an installed grader needs it (keep it readable by instructors only).")
@click.pass_context
def cli(ctx, solutions):
    """attnlab autograder: regenerate exercises/ and grade submissions safely."""
    # passed to each command that reads the solutions (``_solutions()``), never written to the environment
    ctx.obj = Path(os.path.abspath(solutions)) if solutions else None


def _solutions() -> Path | None:
    """This command line's ``--solutions`` (else ``ATTNLAB_SOLUTIONS``, through attnlab.settings.CourseSettings)."""
    return click.get_current_context().find_root().obj


@cli.command()
def paths():
    """Where this grader finds its nbgrader config, the solutions and the data; exit 1 if one is missing."""
    from attnlab.data import shakespeare_path

    from attnlab_grader.records.course import CONFIG_FILE, solutions_dir
    found = {"nbgrader config": CONFIG_FILE, "solutions": solutions_dir(_solutions()), "data": shakespeare_path()}
    missing = [name for name, path in found.items() if not path.exists()]
    for name, path in found.items():
        click.echo(f"{name:16} {path}{'' if path.exists() else '  (MISSING)'}")
    if "solutions" in missing:
        click.echo("solutions: pass --solutions DIR or set ATTNLAB_SOLUTIONS to the course's solutions/ "
                   "folder (from the course repository).", err=True)
    sys.exit(1 if missing else 0)


@cli.command()
@click.argument("names", nargs=-1)
def release(names):
    """Regenerate exercises/NAME (default: all) from solutions/ with nbgrader."""
    from attnlab_grader.records.course import release as do_release
    for path in do_release(list(names) or None, solutions=_solutions()):
        click.echo(f"wrote {path}")


@cli.command("check-release")
@click.argument("names", nargs=-1)
def check_release(names):
    """Exit 1 if exercises/ differs from what solutions/ generates (stale or hand-edited)."""
    from attnlab_grader.classroom.release_check import stale
    problems = stale(list(names) or None, solutions=_solutions())
    for p in problems:
        click.echo(p, err=True)
    sys.exit(1 if problems else 0)


@cli.command()
@click.argument("submissions_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True, help="e.g. 02_scaled_dot_product_attention")
@click.option("--db", "db_url", default=grader_default("db"), show_default="$ATTNLAB_DB", help="Gradebook URL (default sqlite:///SUBMISSIONS_DIR/gradebook.db; "
              "e.g. postgresql://user@host/course for a large course; psycopg 3 is the driver).")
@click.option("--jobs", "-j", default=2, show_default=True, help="Submissions graded in parallel.")
@click.option("--csv", "csv_path", default=None, help="Grades CSV (default SUBMISSIONS_DIR/grades.csv).")
@click.option("--no-feedback", is_flag=True, help="Skip the per-student feedback HTML.")
@click.option("--max-notebook-mb", type=float, default=None,
              help="Refuse larger notebooks (default 20, c.SubmissionIntake.max_notebook_bytes).")
@click.option("--sandbox", "mechanism", type=click.Choice(["root", "userns", "bwrap"]), default=None,
              help="Pin the sandbox mechanism (default: the strongest that works here; "
              "c.SandboxGrade.mechanism; see autograder/SECURITY.md).")
def grade(submissions_dir, assignment, db_url, jobs, csv_path, no_feedback, max_notebook_mb, mechanism):
    """Autograde SUBMISSIONS_DIR/submitted/*/ASSIGNMENT, write feedback and grades CSV."""
    from attnlab_grader.records.course import GradebookLost, GradebookUnavailable
    from attnlab_grader.classroom.pipeline import grade as do_grade
    from attnlab_grader.sandbox import SandboxUnavailable
    try:
        summary = do_grade(submissions_dir, assignment, db_url=db_url, jobs=jobs,
                           feedback=not no_feedback, csv_path=csv_path,
                           max_notebook_bytes=int(max_notebook_mb * 2**20) if max_notebook_mb else None,
                           mechanism=mechanism, solutions=_solutions())
    except GradebookLost as e:  # what each submission came to, then why the run could not finish
        for s in e.summaries.values():
            click.echo(s.text())
        raise click.ClickException(str(e)) from None
    except (GradebookUnavailable, SandboxUnavailable) as e:
        raise click.ClickException(str(e)) from None
    click.echo(summary.text())


@cli.command("clear-flag")
@click.argument("course_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True)
@click.option("--student", "-s", required=True, help="The student id (folder name), exactly.")
@click.option("--db", "db_url", default=grader_default("db"), show_default="$ATTNLAB_DB",
              help="Gradebook URL, as for grade.")
def clear_flag(course_dir, assignment, student, db_url):
    """After review: unflag STUDENT's ASSIGNMENT and restore the credit the grader withheld."""
    from attnlab_grader.classroom.review import ReviewError, clear_flag as do_clear
    try:
        done = do_clear(course_dir, assignment, student, db_url=db_url)
    except ReviewError as e:
        raise click.ClickException(str(e)) from None
    click.echo(done.text(student))


@cli.command()
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True, help="A graded assignment of COURSE.")
@click.option("--out", default=None, help="HTML file (default COURSE/reports/ASSIGNMENT/class.html).")
@click.option("--csv", "csv_path", default=None, help="Grades CSV (default COURSE/grades.csv).")
def report(course, assignment, out, csv_path):
    """Render the class report (scores, named mistakes, flags, skills) of a graded assignment."""
    from attnlab_grader.reports.class_report import ReportError
    from attnlab_grader.reports.render import write
    try:
        path = write(course, assignment, out=out, csv_path=csv_path, solutions=_solutions())
    except ReportError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"wrote {path}\nopen it from JupyterLab's file browser (HTML viewer) or in any browser")


from attnlab_grader.classroom.cli import register  # noqa: E402 - after the group it extends

register(cli)

if __name__ == "__main__":
    cli()
