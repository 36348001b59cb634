"""One contract for grading a class on many tasks at once: ``prepare``, ``grade --shard i/N``, ``collect``.

Every engine calls the same three steps, with the course folder on a filesystem every task sees
and one gradebook every task reaches (PostgreSQL; SQLite only on one machine):

1. ``python -m attnlab_grader.classroom.shard prepare COURSE -a A [-a B ...]`` (trusted, once): generates
   the assignments into the gradebook, creates every row the tasks would otherwise race to create
   (nbgrader's schema and course row, attnlab's tables, every listed student), and writes the
   listing ``COURSE/shards/<A+B...>.txt``: one ``assignment<TAB>student`` a line, sorted.
2. ``python -m attnlab_grader.classroom.shard grade COURSE -a A ... --shard i/N`` (task ``i`` of ``N``):
   grades lines ``i, i+N, i+2N, ...`` of the listing (:func:`shard_items`) into the gradebook, in
   the sandbox as on one machine, and writes each submission's report and feedback.  The shard is
   taken from ``--shard``, else from the engine's environment (:func:`shard_from_env`): a Slurm
   array (``SLURM_ARRAY_TASK_ID`` of ``SLURM_ARRAY_TASK_COUNT``), a Kubernetes Indexed Job
   (``JOB_COMPLETION_INDEX``; one submission per completion unless ``--shards``
   says how many completions there are).  A task only writes the rows and
   files of its own submissions, so a failed or killed task is rerun alone (same ``i/N``) and
   changes nothing else.
3. ``python -m attnlab_grader.classroom.shard collect COURSE -a A ...`` (trusted, after every task): reads
   every listed submission's report, counts a submission whose report is missing or older than
   the listing as failed ("not graded in this run"), writes the grades CSV and each assignment's
   class report, and exits with the number of failed submissions (at most 100; 0 = all graded).

``python -m attnlab_grader.classroom.shard run COURSE -a A ... --tasks N`` does all three on this machine
with ``N`` processes.  deploy/slurm/ (an sbatch array) and deploy/kubernetes/grading-job.yaml
(through :mod:`attnlab_grader.classroom.podjob`) run step 2 on a cluster.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click

from attnlab_grader.records.settings import grader_default

#: Listings live in ``COURSE/shards/``.
LISTING_DIR = "shards"
#: ``collect`` exits with the number of failed submissions, capped here (exit codes stop at 255).
MAX_EXIT = 100


@dataclass(frozen=True)
class Shard:
    """Task ``index`` of ``count`` (0 <= index < count)."""

    index: int
    count: int

    def __post_init__(self):
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard {self.index}/{self.count} does not exist: the index must be at least 0 "
                             "and below the count, and the count at least 1")

    @classmethod
    def parse(cls, text: str) -> "Shard":
        """``"i/N"`` -> ``Shard(i, N)``; ``ValueError`` with one sentence for anything else."""
        i, sep, n = text.strip().partition("/")
        if not sep or not i.strip().isdigit() or not n.strip().isdigit():
            raise ValueError(f"--shard {text!r} is not INDEX/COUNT (for example 0/8: task 0 of 8)")
        return cls(int(i), int(n))

    def __str__(self):
        return f"{self.index}/{self.count}"


def _int(name: str, value: str) -> int:
    if not value.strip().isdigit():
        raise ValueError(f"{name}={value!r} is not a whole number; the engine or the submitting script set it wrong")
    return int(value)


def shard_from_env(env=None, listed: int | None = None, shards: int | None = None) -> Shard:
    """The shard of this task from its engine's environment.

    Slurm array: ``SLURM_ARRAY_TASK_ID`` of ``shards`` (``--shards``: give it
    when rerunning one index as an array of its own) or else ``SLURM_ARRAY_TASK_COUNT``.
    Kubernetes Indexed Job: ``JOB_COMPLETION_INDEX`` of ``shards``, or else of ``listed`` (one
    submission per completion).  Raises ``ValueError`` (one sentence) when neither engine's
    variables are set or one is not a whole number."""
    env = os.environ if env is None else env
    if env.get("SLURM_ARRAY_TASK_ID"):
        index = _int("SLURM_ARRAY_TASK_ID", env["SLURM_ARRAY_TASK_ID"])
        if shards:
            return Shard(index, shards)
        if not env.get("SLURM_ARRAY_TASK_COUNT"):
            raise ValueError("SLURM_ARRAY_TASK_COUNT is not set: submit with sbatch --array, or give --shards")
        return Shard(index, _int("SLURM_ARRAY_TASK_COUNT", env["SLURM_ARRAY_TASK_COUNT"]))
    if env.get("JOB_COMPLETION_INDEX"):
        index = _int("JOB_COMPLETION_INDEX", env["JOB_COMPLETION_INDEX"])
        if shards:
            return Shard(index, shards)
        if listed is None:
            raise ValueError("JOB_COMPLETION_INDEX is set but not how many completions there are: give --shards")
        return Shard(index, listed)
    raise ValueError("no shard given: pass --shard INDEX/COUNT, or run as a Slurm array task "
                     "(SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job completion (JOB_COMPLETION_INDEX)")


#: Longest listing name spelled out in full; a longer one is shortened with a hash (file names stop at 255 bytes).
MAX_NAME = 120


def listing_path(course, assignments) -> Path:
    """``COURSE/shards/<assignments joined by '+'>.txt`` (in the order given); past :data:`MAX_NAME`
    characters, ``<first>+<k>-more-<12 hex digits of the joined names' SHA-256>.txt``."""
    import hashlib
    name = "+".join(assignments)
    if len(name) > MAX_NAME:
        digest = hashlib.sha256(name.encode()).hexdigest()[:12]
        name = f"{assignments[0]}+{len(assignments) - 1}-more-{digest}"
    return Path(course, LISTING_DIR, name + ".txt")


def read_listing(course, assignments) -> list[tuple[str, str]]:
    """``[(assignment, student), ...]`` in listing order; ``FileNotFoundError`` saying to run
    ``prepare`` when the listing is missing."""
    path = listing_path(course, assignments)
    if not path.is_file():
        raise FileNotFoundError(f"{', '.join(assignments)} not prepared in {os.path.abspath(course)} "
                                f"({path} is missing): run `python -m attnlab_grader.classroom.shard prepare` first")
    out = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line:
            a, _, s = line.partition("\t")
            out.append((a, s))
    return out


def shard_items(items: list, shard: Shard) -> list:
    """Lines ``i, i+N, i+2N, ...`` of ``items``: every set spread over every task, each item in
    exactly one shard."""
    return items[shard.index::shard.count]


def prepare(course, assignments, db_url: str | None = None, solutions=None) -> list[tuple[str, str]]:
    """Generate ``assignments`` into the gradebook, create the rows the tasks share, write the
    listing; returns it.  Trusted: once, before any task starts.

    Raises ``GradebookUnavailable`` (bad URL, server down), ``RuntimeError`` (an assignment
    cannot be generated), ``ValueError`` (a student folder whose name cannot be one line)."""
    from attnlab_grader.records.course import check_gradebook, generate_many, load_config
    from attnlab_grader.classroom import gradebook_init
    from attnlab_grader.records.intake import submission_folders
    check_gradebook(db_url)
    root = os.path.abspath(course)
    assignments = list(assignments)
    items = sorted((a, s) for a in assignments for s in submission_folders(root, a))
    bad = [s for _, s in items if any(c in s for c in "\n\r\t")]
    if bad:
        raise ValueError(f"student folder {bad[0]!r} has a tab or line break in its name; rename it and prepare again")
    gradebook_init.prepare(load_config(root, db_url).CourseDirectory.db_url, sorted({s for _, s in items}))
    errors = generate_many(root, assignments, db_url, solutions)
    if errors:
        a = next(iter(errors))
        raise RuntimeError(f"{a} cannot be generated: {errors[a]}")
    path = listing_path(root, assignments)
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(f"{a}\t{s}\n" for a, s in items), encoding="utf-8")
    tmp.replace(path)
    return items


def grade_shard(course, assignments, shard: Shard, db_url: str | None = None, item_timeout: float | None = None,
                mechanism: str | None = None, feedback: bool = True) -> list[dict]:
    """Grade the submissions of ``shard`` one after another into the gradebook (one grading
    worker: one core), each in the sandbox ``mechanism`` (default the strongest that works here);
    write reports and, for graded ones, feedback.  Returns the reports in listing order.
    Raises ``FileNotFoundError`` (not prepared), ``GradebookUnavailable``, ``SandboxUnavailable``,
    ``RuntimeError`` (feedback could not be generated)."""
    from queue import SimpleQueue

    from attnlab_grader.classroom import pipeline
    from attnlab_grader.records.course import check_gradebook
    from attnlab_grader.records.intake import feedback_exact
    from attnlab_grader.sandbox import choose_mechanism
    root = os.path.abspath(course)
    items = shard_items(read_listing(root, assignments), shard)
    for a in dict.fromkeys(a for a, _ in items):
        if not Path(root, "source", a, "grading.py").is_file():
            raise FileNotFoundError(f"{a} is not prepared in {root}: run `python -m attnlab_grader.classroom.shard prepare` first")
    check_gradebook(db_url)
    mechanism = choose_mechanism(mechanism)
    slots: SimpleQueue[int] = SimpleQueue()
    slots.put(0)
    pipeline._init_worker(root, db_url, slots, item_timeout, None, mechanism)
    reports = []
    for item in items:
        rep, lost = pipeline._grade_attempt(item)
        for attempt in range(2):  # a SQLite gradebook busy past its lock timeout: the same grading again
            if rep["status"] != "error" or not lost:
                break
            time.sleep(0.5 + attempt)
            rep, lost = pipeline._grade_attempt(item)
        reports.append(rep)
    if feedback:
        for a in dict.fromkeys(a for a, _ in items):
            graded = [r["student"] for r in reports if r["assignment"] == a and r["status"] in ("graded", "flagged")]
            if graded:
                res = feedback_exact(pipeline._API, a, graded)
                if not res["success"]:
                    raise RuntimeError(f"generate_feedback failed for {a}: {res.get('error')}")
    return reports


def collect(course, assignments, db_url: str | None = None, csv_paths: dict | None = None,
            class_report: bool = True) -> dict:
    """After every task: ``{assignment: pipeline.Summary}`` from the reports, the grades CSV of
    each assignment (``csv_paths[a]``, else ``COURSE/grades.csv`` for one assignment and
    ``COURSE/grades-<a>.csv`` for several) and, with ``class_report``, its class report
    (``COURSE/reports/<a>/class.html``).  A listed submission without a report written since the
    listing counts as failed.  Raises ``FileNotFoundError`` (not prepared)."""
    from attnlab_grader.records.grade_report import error_report, read_report, report_path
    from attnlab_grader.classroom.pipeline import Summary, export
    root = os.path.abspath(course)
    items = read_listing(root, assignments)
    since = listing_path(root, assignments).stat().st_mtime_ns
    summaries = {a: Summary() for a in assignments}
    for a, s in items:
        rp = report_path(root, a, s)
        rep = read_report(root, a, s) if rp.exists() and rp.stat().st_mtime_ns >= since else None
        if rep is None:
            rep = error_report(s, a, "not graded in this run: the task whose shard holds it did not finish; "
                               "rerun that task (same --shard i/N), then collect again")
            rep["assignment"] = a
        summaries[a].reports.append(rep)
    csv_paths = csv_paths or {}
    for a, summary in summaries.items():
        summary.sandbox = next((r["sandbox"] for r in summary.reports if r.get("sandbox")), "")
        default = Path(root) / ("grades.csv" if len(assignments) == 1 else f"grades-{a}.csv")
        summary.csv = export(root, a, db_url, csv_paths.get(a) or default)
        if class_report and summary.graded:
            from attnlab_grader.reports.class_report import ReportError
            from attnlab_grader.reports.render import write
            try:
                write(root, a, csv_path=summary.csv)
            except ReportError as err:
                summary.error = f"class report not written: {err}"
    return summaries


def run_local(course, assignments, tasks: int, db_url: str | None = None, mechanism: str | None = None,
              item_timeout: float | None = None, feedback: bool = True, class_report: bool = True,
              solutions=None) -> dict:
    """``prepare``, then ``tasks`` processes of ``grade --shard i/tasks`` at once on this machine,
    then ``collect``; returns ``collect``'s summaries, each with the run's wall time (s)."""
    t0 = time.perf_counter()
    prepare(course, assignments, db_url, solutions)
    argv = [sys.executable, "-m", "attnlab_grader.classroom.shard", "grade", os.path.abspath(course)]
    for a in assignments:
        argv += ["-a", a]
    if db_url:
        argv += ["--db", db_url]
    if mechanism:
        argv += ["--sandbox", mechanism]
    if item_timeout:
        argv += ["--item-timeout", str(item_timeout)]
    if not feedback:
        argv += ["--no-feedback"]
    procs = [subprocess.Popen(argv + ["--shard", f"{i}/{tasks}"], env={**os.environ, "OMP_NUM_THREADS": "1"})
             for i in range(tasks)]
    for p in procs:
        p.wait()
    summaries = collect(course, assignments, db_url, class_report=class_report)
    for s in summaries.values():
        s.wall_s = time.perf_counter() - t0
    return summaries


def exit_code(summaries: dict) -> int:
    """The number of failed submissions over every assignment, capped at :data:`MAX_EXIT`."""
    return min(MAX_EXIT, sum(len(s.failed) for s in summaries.values()))


# -- command line --------------------------------------------------------------------------------
@click.group()
def cli():
    """Grade a class as N tasks: prepare once, grade --shard i/N in each task, collect once."""


_course = click.argument("course", type=click.Path(exists=True, file_okay=False))
_assignments = click.option("--assignment", "-a", "assignments", required=True, multiple=True,
                            help="An assignment to grade (repeat for several), e.g. 02_scaled_dot_product_attention")
_db = click.option("--db", "db_url", default=grader_default("db"), show_default="$ATTNLAB_DB",
                   help="Gradebook URL (PostgreSQL when tasks run on several machines; "
                        "default sqlite:///COURSE/gradebook.db).")
_sandbox = click.option("--sandbox", "mechanism", default=None,
                        help="Pin the sandbox mechanism (default: the strongest that works here).")


def _fail(err) -> None:
    raise click.ClickException(str(err))


@cli.command("prepare")
@_course
@_assignments
@_db
def prepare_cmd(course, assignments, db_url):
    """Generate the assignments, create the shared gradebook rows, write the listing."""
    from attnlab_grader.records.course import GradebookUnavailable
    try:
        items = prepare(course, assignments, db_url)
    except (GradebookUnavailable, RuntimeError, ValueError) as err:
        _fail(err)
    click.echo(f"{len(items)} submissions listed in {listing_path(course, assignments)}; "
               f"grade them with any number of tasks N (`grade --shard i/N`, i = 0 .. N-1)")


@cli.command("grade")
@_course
@_assignments
@click.option("--shard", "shard_text", default=None, metavar="INDEX/COUNT",
              help="This task's shard; default from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX.")
@click.option("--shards", type=click.IntRange(1), default=None,
              help="The shard count when the shard comes from the engine (a rerun of one array index).")
@_db
@_sandbox
@click.option("--item-timeout", type=float, default=None, help="Per-check limit in seconds (default: grading.py's).")
@click.option("--no-feedback", is_flag=True, help="Do not write feedback HTML.")
def grade_cmd(course, assignments, shard_text, shards, db_url, mechanism, item_timeout, no_feedback):
    """Grade this task's shard of the listing; exits 1 when it could not grade at all."""
    from attnlab_grader.records.course import GradebookUnavailable
    from attnlab_grader.records.intake import safe_text
    from attnlab_grader.sandbox import SandboxUnavailable
    try:
        if shard_text:
            shard = Shard.parse(shard_text)
        else:
            shard = shard_from_env(listed=len(read_listing(course, assignments)), shards=shards)
        reports = grade_shard(course, assignments, shard, db_url, item_timeout, mechanism, not no_feedback)
    except (ValueError, FileNotFoundError, GradebookUnavailable, SandboxUnavailable, RuntimeError) as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    for r in reports:
        line = f"{safe_text(r['student'])} {r['assignment']}: {r['status']}"
        if r.get("score") is not None:
            line += f" {r['score']:g}/{r.get('max_score', 0):g}"
        click.echo(line)
    click.echo(f"shard {shard}: {len(reports)} submissions, "
               f"{sum(r['status'] == 'error' for r in reports)} failed")


@cli.command("collect")
@_course
@_assignments
@_db
@click.option("--no-class-report", is_flag=True, help="Do not render the class reports.")
def collect_cmd(course, assignments, db_url, no_class_report):
    """Reports, grades CSV and class report; exits with the number of failed submissions."""
    try:
        summaries = collect(course, assignments, db_url, class_report=not no_class_report)
    except FileNotFoundError as err:
        _fail(err)
    for a, s in summaries.items():
        click.echo(f"{a}: {s.text()}")
        if s.error:
            click.echo(f"  {s.error}")
    sys.exit(exit_code(summaries))


@cli.command("run")
@_course
@_assignments
@click.option("--tasks", type=click.IntRange(1, 256), default=2, show_default=True, help="Processes at once.")
@_db
@_sandbox
@click.option("--no-feedback", is_flag=True, help="Do not write feedback HTML.")
def run_cmd(course, assignments, tasks, db_url, mechanism, no_feedback):
    """prepare, TASKS local processes of grade, collect; exits as collect does."""
    from attnlab_grader.records.course import GradebookUnavailable
    try:
        summaries = run_local(course, assignments, tasks, db_url, mechanism, feedback=not no_feedback)
    except (GradebookUnavailable, RuntimeError, ValueError) as err:
        _fail(err)
    for a, s in summaries.items():
        click.echo(f"{a}: {s.text()}")
    sys.exit(exit_code(summaries))


if __name__ == "__main__":
    cli()
