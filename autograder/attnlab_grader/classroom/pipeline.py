"""``python -m attnlab_grader grade``: autograde a class folder, write feedback and a grades CSV.

Input layout (nbgrader's): ``SUBMISSIONS_DIR/submitted/<student>/<assignment>/*.ipynb``.
``SUBMISSIONS_DIR`` becomes the nbgrader course root for this run: ``source/`` is staged
from ``solutions/``, ``release/`` and the gradebook are (re)generated there, and the
results land in ``autograded/``, ``feedback/``, ``reports/`` and ``grades.csv``.
nbgrader never reads ``submitted/`` itself: each submission's notebook (and timestamp) is
checked and copied to ``.intake/`` first (:mod:`attnlab_grader.records.intake`), and each student folder
is graded as exactly itself (:func:`attnlab_grader.records.intake.autograde_exact`).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.exc import DBAPIError, OperationalError

from attnlab_grader.records.course import GradebookLost, api_for, is_connection_loss, load_config
from attnlab_grader.records.grade_report import GradeReport, error_report, read_report, report_path, write_report
from attnlab_grader.records.reasons import kept_previous
from attnlab_grader.records.intake import (SubmissionIntake, SubmissionRefused, autograde_exact, feedback_exact, safe_text, stage,
                     submission_folders)

_API = None
_ROOT = None
_LIMITS = None


def _init_worker(root, db_url, slots, item_timeout=None, limits=None, mechanism=None):
    """One grading worker: its slot (from ``slots``) and the sandbox ``mechanism`` reach
    ``SandboxGrade`` through the nbgrader config of its ``NbGraderAPI``."""
    global _API, _ROOT, _LIMITS
    slot = slots.get()
    # The pool forks from a parent that may have run a multi-threaded torch op already; an
    # OpenMP pool inherited across fork() deadlocks on its next parallel region, so each
    # worker runs torch on one thread (parallelism comes from the worker processes). The
    # sandboxes this worker starts get OMP_NUM_THREADS=1 in their own environment
    # (attnlab_grader.sandbox), so this process's environment is left as it is.
    import torch
    torch.set_num_threads(1)
    _ROOT = root
    _API = api_for(root, db_url, item_timeout, slot=slot, mechanism=mechanism)
    _LIMITS = limits or SubmissionIntake(config=_API.config)


def _grade_one(args):
    """Grade one ``(assignment, student)`` in this worker; returns the report written (:func:`_grade_attempt`)."""
    return _grade_attempt(args)[0]


def _grade_attempt(args) -> tuple[GradeReport | None, bool]:
    """Grade one ``(assignment, student)`` in this worker: ``(the report written, whether the failure was the
    gradebook's database)`` -- the second is True when nbgrader's log said the database failed or was busy, or
    this process lost its connection (SQLAlchemy's ``OperationalError``), so the same grading may be tried
    again."""
    assignment, student = args
    rp = report_path(_ROOT, assignment, student)
    before = rp.stat().st_mtime_ns if rp.exists() else None  # kept: SandboxGrade may fall back on it
    t0 = time.perf_counter()
    notes = []
    lost = False
    try:
        notes = stage(_ROOT, assignment, student, _LIMITS).notes
        res = autograde_exact(_API, assignment, student)
        ok, why = res["success"], ""
        if not ok:
            why, lost = _reason(res.get("failure"))
    except SubmissionRefused as e:  # refused at intake: its message is the reason, in words
        ok, why = False, str(e).strip()
    except Exception as e:  # noqa: BLE001 - one bad submission must not stop the class
        ok, why, lost = False, _exception_reason(e), isinstance(e, OperationalError)
    fresh = rp.exists() and rp.stat().st_mtime_ns != before
    rep = read_report(_ROOT, assignment, student) if fresh else None
    if rep is None or (not ok and rep.get("status") != "error"):
        rep = error_report(student, assignment, why)
    if notes:
        rep["notes"] = list(rep.get("notes", [])) + notes
    rep["seconds"] = time.perf_counter() - t0
    rep["assignment"] = assignment
    write_report(_ROOT, assignment, student, rep)
    return read_report(_ROOT, assignment, student), lost


def _exception_reason(err: Exception) -> str:
    """A sentence saying why grading one submission raised ``err`` in this process (not in nbgrader): a lost
    gradebook connection (SQLAlchemy's ``OperationalError``, by class) in :data:`GRADEBOOK_LOST`'s words, else the
    exception's own message (its first line; the class name when it has none)."""
    from attnlab_grader.records.course import GRADEBOOK_LOST
    text = str(getattr(err, "orig", None) or err).strip()
    first = text.splitlines()[0] if text else ""
    if isinstance(err, OperationalError):
        return GRADEBOOK_LOST.format(safe_text(first)[:200])
    return first[:300] or f"the grader stopped with {type(err).__name__}"


def _in_chain(err: BaseException | None, kinds) -> BaseException | None:
    """The first exception of ``kinds`` in ``err``'s chain of causes (bounded), else None."""
    seen = 0
    while err is not None and seen < 20:
        if isinstance(err, kinds):
            return err
        err, seen = err.__cause__ or err.__context__, seen + 1
    return None


def _reason(failure: BaseException | None) -> tuple[str, bool]:
    """``(a sentence saying why nbgrader could not grade a submission, whether its database failed)``, judged from
    the exception that stopped the conversion (``autograde_exact``'s ``"failure"``, kept by
    :func:`attnlab_grader.records.intake._exact` before nbgrader catches it) by its class, never from log text."""
    import json

    from nbformat.reader import NotJSONError
    from nbgrader.nbgraderformat.common import SchemaMismatchError

    from attnlab_grader.records.course import GRADEBOOK_LOST, is_connection_loss
    from attnlab_grader.steps.verify import SubmissionError
    if failure is None:
        return ("nbgrader could not process this submission and gave no reason; grade it alone with "
                "`nbgrader autograde` to see its log"), False
    refused = _in_chain(failure, SubmissionError)
    if refused is not None:  # our own steps' refusal: its message is in words
        return str(refused).strip(), False
    if is_connection_loss(failure):
        return GRADEBOOK_LOST.format(safe_text(_first_line(failure))[:200]), True
    if _in_chain(failure, (NotJSONError, json.JSONDecodeError)) is not None:
        return "the notebook file is not valid notebook JSON (it was corrupted); re-download and resubmit", False
    schema = _in_chain(failure, SchemaMismatchError)
    if schema is not None:
        return ("the nbgrader metadata of a cell is damaged or from another version of nbgrader "
                f"({safe_text(_first_line(schema))[:120]}); copy the cell again from exercises/ and resubmit"), False
    if _in_chain(failure, RecursionError) is not None:
        return "the notebook is nested too deeply to be read; start again from exercises/ and resubmit", False
    return safe_text(_first_line(failure))[:300] or f"nbgrader stopped with {type(failure).__name__}", False


def _first_line(err: BaseException) -> str:
    """The first line of ``err``'s message (a database driver's own message when SQLAlchemy wraps one)."""
    text = str(getattr(err, "orig", None) or err).strip()
    return text.splitlines()[0] if text else ""


@dataclass
class Summary:
    """What one grading run did: every submission's report, the wall time (s), the grades CSV written,
    an error that stopped the run before grading, and the sandbox in force."""
    reports: list[GradeReport] = field(default_factory=list)
    wall_s: float = 0.0
    csv: Path | None = None
    error: str | None = None  # the assignment could not be generated (nothing graded)
    sandbox: str = ""  # the isolation mechanism and limits in force (autograder/SECURITY.md)

    @property
    def graded(self):
        """Reports of submissions that were graded (flagged ones included)."""
        return [r for r in self.reports if r["status"] in ("graded", "flagged")]

    @property
    def kept(self):
        """Reports where re-grading failed and the previous result was kept."""
        return [r for r in self.reports if r.get("kept_previous")]

    @property
    def failed(self):
        """Reports of submissions that could not be graded (status "error")."""
        return [r for r in self.reports if r["status"] == "error"]

    @property
    def back_to_manual(self):
        """Reports of submissions where an answer a person had graded changed, so the item waits
        for manual grading again (``back_to_manual``: its ``grade_id``s); every other manual grade
        was kept (:mod:`attnlab_grader.steps.answers`)."""
        return [r for r in self.reports if r.get("back_to_manual")]

    @property
    def flagged(self):
        """Reports of submissions graded but flagged for an instructor's review."""
        return [r for r in self.reports if r["status"] == "flagged"]

    def text(self) -> str:
        """The run in lines for the terminal: the counts, then each failed, kept and flagged submission."""
        out = [f"graded {len(self.graded)}, failed {len(self.failed)}, flagged for review "
               f"{len(self.flagged)} (of {len(self.reports)} submissions, {self.wall_s:.1f} s)"]
        for r in self.failed:
            out.append(f"  FAILED  {safe_text(r['student'])}: {safe_text(r.get('reason'))}")
        for r in self.kept:
            out.append(f"  KEPT    {safe_text(r['student'])}: {safe_text(kept_previous(r['kept_previous']))}")
        for r in self.back_to_manual:
            out.append(f"  MANUAL  {safe_text(r['student'])}: answer changed since it was graded by hand, "
                       f"grade again in formgrader: {safe_text(', '.join(r['back_to_manual']))}")
        for r in self.flagged:
            for f in r["flags"][:3]:
                out.append(f"  FLAGGED {safe_text(r['student'])}: {safe_text(f)}")
        for r in self.reports:
            for n in r.get("notes", [])[:3]:
                out.append(f"  NOTE    {safe_text(r['student'])}: {safe_text(n)}")
        if self.sandbox:
            out.append(f"sandbox: {safe_text(self.sandbox)}")
        if self.csv:
            out.append(f"grades: {self.csv}")
        return "\n".join(out)


def grade(submissions_dir, assignment: str, db_url: str | None = None, jobs: int = 2,
          feedback: bool = True, csv_path=None, progress: bool = True,
          item_timeout: float | None = None, max_notebook_bytes: int | None = None,
          mechanism: str | None = None, solutions=None) -> Summary:
    """Autograde every ``submitted/*/<assignment>`` under ``submissions_dir`` (arguments:
    :func:`grade_many`)."""
    summary = grade_many(submissions_dir, [assignment], db_url=db_url, jobs=jobs, feedback=feedback,
                         csv_paths={assignment: csv_path}, progress=progress,
                         item_timeout=item_timeout, max_notebook_bytes=max_notebook_bytes,
                         mechanism=mechanism, solutions=solutions)[assignment]
    if summary.error:
        raise RuntimeError(summary.error)
    return summary


def grade_many(submissions_dir, assignments: list[str], db_url: str | None = None, jobs: int = 2,
               feedback: bool = True, csv_paths: dict | None = None, progress: bool = True,
               item_timeout: float | None = None, generate: bool = True,
               max_notebook_bytes: int | None = None, mechanism: str | None = None,
               solutions=None) -> dict[str, "Summary"]:
    """Autograde several assignments of one course in ONE session: one gradebook, one pool of
    ``jobs`` workers, each keeping its sandbox for every submission of every assignment.

    Returns ``{assignment: Summary}``; a set whose ``generate_assignment`` fails gets a Summary
    with ``error`` set and no reports (the others are graded).  The slowest sets (largest
    ``TIMEOUT``) are started first so that the workers finish together.  CSV: ``csv_paths[a]``,
    else ``grades.csv`` for a single assignment and ``grades-<a>.csv`` for several.
    ``max_notebook_bytes``: overrides ``c.SubmissionIntake.max_notebook_bytes`` (a larger
    notebook is refused with its size as the reason).  ``mechanism``: the sandbox to use
    (``root``/``userns``/``bwrap``; default the strongest that works here); every worker uses
    the one chosen here.  ``solutions``: the folder the sets are generated from (default
    :func:`attnlab_grader.records.course.solutions_dir`).
    """
    from attnlab_grader.sandbox import SandboxUnavailable, choose_mechanism
    try:
        mechanism = choose_mechanism(mechanism)
    except SandboxUnavailable as err:
        raise SandboxUnavailable(f"cannot grade untrusted notebooks here: {err}") from None
    try:
        return _grade_many(submissions_dir, assignments, db_url, jobs, feedback, csv_paths, progress,
                           item_timeout, generate, mechanism, max_notebook_bytes, solutions)
    finally:
        give_back_to_owner(submissions_dir, [p for p in (csv_paths or {}).values() if p])


def give_back_to_owner(root, extra=()) -> None:
    """Root grading an instructor's course: hand every root-owned file under ``root`` (and the
    ``extra`` files) back to the owner of ``root``, so formgrader, run later as that user, can
    rewrite them.  Walks with directory descriptors and never follows a link."""
    if os.geteuid() != 0 or not os.path.isdir(root):
        return
    st = os.stat(root)
    if st.st_uid == 0:
        return
    for _, dirs, files, dfd in os.fwalk(root, follow_symlinks=False):
        for name in dirs + files:
            try:
                if os.stat(name, dir_fd=dfd, follow_symlinks=False).st_uid == 0:
                    os.chown(name, st.st_uid, st.st_gid, dir_fd=dfd, follow_symlinks=False)
            except OSError:
                continue
    for path in extra:
        try:
            if os.lstat(path).st_uid == 0:
                os.lchown(path, st.st_uid, st.st_gid)
        except OSError:
            continue


def _grade_many(submissions_dir, assignments, db_url, jobs, feedback, csv_paths, progress,
                item_timeout, generate, mechanism, max_notebook_bytes=None, solutions=None):
    from attnlab_grader.records.course import generate_many
    from attnlab_grader.judging.spec import load_spec
    from attnlab_grader.records.course import check_gradebook
    check_gradebook(db_url)  # a bad --db URL or a stopped server: one clear error, nothing graded
    t0 = time.perf_counter()
    root = os.path.abspath(submissions_dir)
    # several graders may share the gradebook: create its schema and these students one at a time
    from attnlab_grader.classroom.gradebook_init import prepare
    prepare(load_config(root, db_url).CourseDirectory.db_url,
            sorted({s for a in assignments for s in submission_folders(root, a)}))
    # generate=False: the caller already ran generate_many(root, ...) (e.g. the QA tests, which
    # also compare that release with exercises/)
    errors = generate_many(root, list(assignments), db_url, solutions) if generate else {}
    summaries = {a: Summary(error=errors.get(a)) for a in assignments}
    ready = [a for a in assignments if a not in errors]
    cost = {}
    for a in ready:
        try:
            cost[a] = load_spec(Path(root, "source", a, "grading.py")).timeout
        except Exception:  # noqa: BLE001 - the workers report the broken spec per submission
            cost[a] = 0.0
    limits = SubmissionIntake(config=load_config(root, db_url))
    if max_notebook_bytes:
        limits.max_notebook_bytes = int(max_notebook_bytes)
    tasks = [(a, s) for a in sorted(ready, key=lambda a: -cost[a]) for s in submission_folders(root, a)]
    ctx = mp.get_context("fork")
    slots = ctx.Queue()
    for i in range(jobs):
        slots.put(i)
    if tasks:
        with ctx.Pool(max(1, min(jobs, len(tasks))), initializer=_init_worker,
                      initargs=(root, db_url, slots, item_timeout, limits, mechanism), maxtasksperchild=None) as pool:
            it = pool.imap_unordered(_grade_one, tasks)
            if progress:
                from tqdm import tqdm
                it = tqdm(it, total=len(tasks), desc=f"grading {', '.join(ready)}", unit="sub")
            for rep in it:
                summaries[rep["assignment"]].reports.append(rep)
    for summary in summaries.values():
        summary.reports.sort(key=lambda r: r["student"])
        summary.sandbox = next((r["sandbox"] for r in summary.reports if r.get("sandbox")), mechanism)
    csv_paths = csv_paths or {}
    try:
        api = api_for(root, db_url) if ready else None
        for a in ready:
            summary = summaries[a]
            if feedback and summary.graded:
                res = feedback_exact(api, a, [r["student"] for r in summary.graded])
                if not res["success"]:
                    if db_url and is_connection_loss(res.get("failure")):
                        raise ConnectionError(_first_line(res["failure"]))
                    raise RuntimeError(f"generate_feedback failed: {res.get('error')}")
            default = Path(root) / ("grades.csv" if len(assignments) == 1 else f"grades-{a}.csv")
            summary.csv = export(root, a, db_url, csv_paths.get(a) or default)
    except (ConnectionError, DBAPIError) as err:  # the server went away after grading
        why = str(getattr(err, "orig", None) or err).strip().splitlines()[0][:200]
        for summary in summaries.values():
            summary.wall_s = time.perf_counter() - t0
        raise GradebookLost(f"the gradebook's database stopped answering after grading ({why}); feedback and "
                            "the grades sheet were not written, and the submissions listed as FAILED were not "
                            "recorded. Nothing recorded before is lost: run the same grade command again once the "
                            "database is back.", summaries) from None
    wall = time.perf_counter() - t0
    for summary in summaries.values():
        summary.wall_s = wall
    return summaries


def export(root, assignment, db_url=None, csv_path=None) -> Path:
    """Write the grades CSV (:class:`attnlab_grader.steps.export.AttnlabCsvExport`) for ``assignment``
    (a name or a list of names) to ``csv_path`` (default ``root/grades.csv``)."""
    from nbgrader.api import Gradebook
    from attnlab_grader.steps.export import AttnlabCsvExport
    cfg = load_config(root, db_url)
    dest = Path(csv_path or Path(root) / "grades.csv")
    names = [assignment] if isinstance(assignment, str) else list(assignment)
    plugin = AttnlabCsvExport(config=cfg, course_root=str(root), to=str(dest), assignment=names)
    with Gradebook(cfg.CourseDirectory.db_url, "attnlab") as gb:
        plugin.export(gb)
    return dest
