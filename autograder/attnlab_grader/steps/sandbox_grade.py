"""``SandboxGrade``: the autograde step that replaces nbgrader's ``Execute``
(``autograder/attnlab_grader/steps/nbgrader_config.py``).

It never executes the notebook in a Jupyter kernel: it runs the student's solution cells in
:mod:`attnlab_grader.sandbox`, extracts plain values, compares them with the reference here, and
writes the verdict into each test cell's outputs (an ``error`` output for a failed item) so
nbgrader's ``SaveAutoGrades`` records the score and ``generate_feedback`` shows our message --
never a hidden test's source or assert line.  Its settings (timeout, memory, worker slot, hidden
paths, sandbox mechanism) are traitlets; none is read from environment variables.  It grades only
notebooks :class:`attnlab_grader.steps.verify.VerifySubmission` checked in the same process (fail closed).
"""
from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

from nbformat.v4 import new_output
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_locked, is_solution
from traitlets import CaselessStrEnum, Float, Integer, List, Unicode

from attnlab_grader.judging.verdict import Verdict
from attnlab_grader.records.grade_report import GradeReport, error_report, read_report, write_report
from attnlab_grader.judging.engine import GradingError, Judgement, judge_notebook
from attnlab_grader.judging.spec import load_spec
from attnlab_grader.judging.structure import nbgrader_meta as _nbg
from attnlab_grader.steps.verify import _VERIFIED, SubmissionError

_SANDBOX = None
_LOCK = threading.Lock()


def _sandbox(slot: int, hide: list[str], mechanism: str | None):
    """This process's sandbox (one per grading worker, kept across submissions); a new one when
    it died or when the settings changed."""
    global _SANDBOX
    from attnlab_grader.sandbox import Sandbox
    key = (slot, tuple(hide), mechanism or None)
    with _LOCK:
        if _SANDBOX is not None and (_SANDBOX.proc.poll() is not None or _SANDBOX.settings != key):
            _SANDBOX.close()
            _SANDBOX = None
        if _SANDBOX is None:
            _SANDBOX = Sandbox(slot=slot, hide=list(hide), mechanism=mechanism or None)
            _SANDBOX.settings = key
        return _SANDBOX


def _error_output(message: str):
    return new_output("error", ename="GradingFailure", evalue=message, traceback=[message])


class SandboxGrade(NbGraderPreprocessor):
    """Grade the solution cells in the sandbox; the comparison happens here, not there."""

    timeout = Float(0, help="Per-item wall-clock limit in seconds (0 = the assignment's "
                    "TIMEOUT in grading.py, default 10).").tag(config=True)
    mem_mb = Integer(0, help="Per-item memory headroom in MiB (0 = the assignment's MEM_MB, "
                     "default 1024).").tag(config=True)
    spec_name = Unicode("grading.py", help="File in source/<assignment>/ declaring the "
                        "checks (see autograder/AUTHORING.md).").tag(config=True)
    slot = Integer(0, min=0, help="This grading worker's number: keeps the sandbox uids and "
                   "cgroups of parallel workers apart (``python -m attnlab_grader grade`` sets "
                   "one per worker).").tag(config=True)
    hidden_paths = List(Unicode(), help="Directories the sandbox hides besides the course root "
                        "(which it always hides), e.g. other courses on the same "
                        "machine.").tag(config=True)
    mechanism = CaselessStrEnum(["", "root", "userns", "bwrap", "landlock"], default_value="",
                                help="Sandbox mechanism to use ('' = the strongest that works here; "
                                "see autograder/SECURITY.md).").tag(config=True)

    def preprocess(self, nb, resources):
        """Grade ``nb``; write the report; mirror its flag onto nbgrader's ``flagged``.

        Fails closed: a notebook that :class:`VerifySubmission` did not check in this process is
        refused (``SubmissionError``).  When the grader itself cannot run (sandbox unavailable or
        crashed, broken ``grading.py``) and an earlier grading of this student exists, that result
        is kept -- the test cells are re-annotated from it, so nbgrader records the same scores --
        and the report says why (``kept_previous``); without an earlier result it is an error."""
        info = resources["nbgrader"]
        student, assignment = info["student"], info["assignment"]
        coursedir = CourseDirectory(config=self.config)
        verified = _VERIFIED.pop((student, assignment, info["notebook"]), None)
        if verified is None:
            raise SubmissionError("internal: this notebook was not checked by VerifySubmission before "
                                  "grading (is it first in Autograde.sanitize_preprocessors?); refusing "
                                  "to grade it")
        previous = read_report(coursedir.root, assignment, student)
        try:
            src = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
            spec = load_spec(src / self.spec_name)
            sandbox = _sandbox(self.slot, [coursedir.root, *self.hidden_paths], self.mechanism)
            judgement = judge_notebook(nb, spec, student, sandbox, tampered=verified["tampered"],
                                       timeout=self.timeout or spec.timeout, mem_mb=self.mem_mb or spec.mem_mb,
                                       other_learners=verified.get("learner_ids", []))
            report = to_report(judgement, student, assignment)
            annotate(nb, report["items"])
            annotate_errors(nb, judgement)
        except GradingError as err:
            self._error(coursedir.root, assignment, student, str(err))
            raise SubmissionError(str(err)) from None
        except SubmissionError as err:
            self._error(coursedir.root, assignment, student, str(err))
            raise
        except Exception as err:  # noqa: BLE001 - the grader could not run: keep what we had
            words = str(err).strip().splitlines()[0] if str(err).strip() else ""
            why = f"{type(err).__name__}: {words}"
            if not previous or previous.get("status") not in ("graded", "flagged") or not previous.get("items"):
                reason = f"the grader could not run ({why}); nothing was recorded, grade again when it works"
                self._error(coursedir.root, assignment, student, reason)
                raise SubmissionError(reason) from err
            self.log.error("could not re-grade %s/%s (%s): the previous result was kept",
                           assignment, student, why)
            report = dict(previous, kept_previous={"why": words})
            annotate(nb, report["items"])
        if verified.get("notes"):
            report["notes"] = list(report.get("notes", [])) + list(verified["notes"])
        write_report(coursedir.root, assignment, student, report)
        record_flag(info.get("db_url") or coursedir.db_url, coursedir.course_id, assignment, student,
                    info["notebook"], report.get("status") == "flagged",
                    was_flagged=bool(previous and previous.get("status") == "flagged"))
        return nb, resources

    @staticmethod
    def _error(root, assignment, student, reason):
        write_report(root, assignment, student, error_report(student, assignment, reason))


def record_flag(db_url, course_id, assignment, student, notebook, flagged, was_flagged=False) -> None:
    """Set nbgrader's own ``flagged`` (formgrader shows it) on the student's submitted notebook:
    raised when the grader flags, cleared when a re-grade is clean after a grader flag (a flag a
    person set in formgrader on a clean submission is left alone)."""
    if not flagged and not was_flagged:
        return
    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(db_url, course_id) as gb:
        try:
            sub = gb.find_submission_notebook(notebook, assignment, student)
        except MissingEntry:
            return
        sub.flagged = bool(flagged)
        gb.db.commit()


def annotate(nb, items: dict[str, Verdict]) -> None:
    """Write each item's verdict into its test cell's outputs (an ``error`` output for no credit),
    which is what nbgrader's ``SaveAutoGrades`` scores and ``generate_feedback`` shows."""
    for c in nb.cells:
        gid = _nbg(c).get("grade_id")
        if gid in items and c.cell_type == "code" and is_grade(c) and not is_solution(c):
            verdict = items[gid]
            c.outputs = [new_output("stream", name="stdout", text=f"✔ {verdict.message}\n")] \
                if verdict.ok else [_error_output(verdict.message)]


def to_report(judgement: Judgement, student: str, assignment: str) -> GradeReport:
    """The student's report of one judgement: each test cell's verdict as its report item, with its points."""
    items = {g: replace(v, max_points=judgement.points[g]) for g, v in judgement.verdicts.items()}
    return {"student": student, "assignment": assignment, "status": "flagged" if judgement.flags else "graded",
            "items": items, "flags": list(judgement.flags), "sandbox": judgement.sandbox,
            "score": sum(v.points for v in items.values()),
            "max_score": sum(v.max_points for v in items.values())}


def annotate_errors(nb, judgement: Judgement) -> None:
    """Write into each answer cell that raised (or was not run) what happened, for the feedback."""
    for c in nb.cells:
        gid = _nbg(c).get("grade_id")
        if gid in judgement.cell_errors and c.cell_type == "code" and not is_locked(c):
            c.outputs = [new_output("stream", name="stdout",
                                    text=f"When graded, this cell raised {judgement.cell_errors[gid]}\n")]
