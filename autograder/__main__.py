"""Command line: ``python -m autograder {release,grade,report,check-release}`` (see README.md)."""
from __future__ import annotations

import sys

import click


@click.group()
def cli():
    """attnlab autograder: regenerate exercises/ and grade submissions safely."""


@cli.command()
@click.argument("names", nargs=-1)
def release(names):
    """Regenerate exercises/NAME (default: all) from solutions/ with nbgrader."""
    from .course import release as do_release
    for path in do_release(list(names) or None):
        click.echo(f"wrote {path}")


@cli.command("check-release")
@click.argument("names", nargs=-1)
def check_release(names):
    """Exit 1 if exercises/ differs from what solutions/ generates (stale or hand-edited)."""
    from .release_check import stale
    problems = stale(list(names) or None)
    for p in problems:
        click.echo(p, err=True)
    sys.exit(1 if problems else 0)


@cli.command()
@click.argument("submissions_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True, help="e.g. 02_scaled_dot_product_attention")
@click.option("--db", "db_url", default=None, envvar="ATTNLAB_DB", show_envvar=True, help="Gradebook URL (default sqlite:///SUBMISSIONS_DIR/gradebook.db; "
              "e.g. postgresql://user@host/course for a large course; psycopg 3 is the driver).")
@click.option("--jobs", "-j", default=2, show_default=True, help="Submissions graded in parallel.")
@click.option("--csv", "csv_path", default=None, help="Grades CSV (default SUBMISSIONS_DIR/grades.csv).")
@click.option("--no-feedback", is_flag=True, help="Skip the per-student feedback HTML.")
def grade(submissions_dir, assignment, db_url, jobs, csv_path, no_feedback):
    """Autograde SUBMISSIONS_DIR/submitted/*/ASSIGNMENT, write feedback and grades CSV."""
    from .course import GradebookUnavailable
    from .pipeline import grade as do_grade
    from .sandbox import SandboxUnavailable
    try:
        summary = do_grade(submissions_dir, assignment, db_url=db_url, jobs=jobs,
                           feedback=not no_feedback, csv_path=csv_path)
    except (GradebookUnavailable, SandboxUnavailable) as e:
        raise click.ClickException(str(e)) from None
    click.echo(summary.text())


@cli.command()
@click.argument("course", type=click.Path(exists=True, file_okay=False))
@click.option("--assignment", "-a", required=True, help="A graded assignment of COURSE.")
@click.option("--out", default=None, help="HTML file (default COURSE/reports/ASSIGNMENT/class.html).")
@click.option("--csv", "csv_path", default=None, help="Grades CSV (default COURSE/grades.csv).")
def report(course, assignment, out, csv_path):
    """Render the class report (scores, named mistakes, flags, skills) of a graded assignment."""
    from .report import ReportError, write
    try:
        path = write(course, assignment, out=out, csv_path=csv_path)
    except ReportError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"wrote {path}\nopen it from JupyterLab's file browser (HTML viewer) or in any browser")


if __name__ == "__main__":
    cli()
