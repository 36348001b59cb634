"""``VerifySubmission``: the first sanitize step (``autograder/attnlab_grader/steps/nbgrader_config.py``).

It compares the submission with the released notebook *before* nbgrader silently repairs it,
so tampering is reported instead of hidden, and hands what it found to
:class:`attnlab_grader.steps.sandbox_grade.SandboxGrade` (same process) through :data:`_VERIFIED`.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from attnlab_grader.judging import structure
from attnlab_grader.judging.by_hand import submitted_learner_ids
from attnlab_grader.judging.structure import ACCEPTED_KERNELS, StructureError, compare_with_release
from attnlab_grader.records.grade_report import error_report, write_report
from attnlab_grader.records.intake import SECRET, STAGED_DIR, SubmissionIntake, SubmissionRefused, take

__all__ = ["ACCEPTED_KERNELS", "SubmissionError", "VerifySubmission", "check_kernel"]

#: Per-process hand-over from VerifySubmission to SandboxGrade (never stored in the
#: notebook, which the student controls): ``tampered`` cells, ``notes`` on what was ignored, and
#: ``learner_ids``, the ids the submission's outputs record as data (used only to flag by-hand
#: numbers that fit another id, see ``by_hand.submitted_learner_ids``).
_VERIFIED: dict[tuple[str, str, str], dict] = {}


class SubmissionError(Exception):
    """The submission cannot be graded (structure broken); message says what to fix."""


class VerifySubmission(NbGraderPreprocessor):
    """Compare a submission's cells with the released notebook before nbgrader repairs it.

    Per-submission errors (raised, the submission is not graded): a graded or answer
    cell missing or duplicated, a cell claiming to be graded that the release does not
    have (fake grade cell), a kernel whose language is not Python (:func:`check_kernel`; any
    Python kernel is accepted, with a note), and -- when
    nbgrader reads ``submitted/`` itself (formgrader's Autograde button) rather than the
    checked copy the pipeline stages -- a submission folder that
    :func:`attnlab_grader.records.intake.take` refuses (links, pipes, oversize...).  Files nbgrader copied
    from the submission next to the graded notebook are removed (only the notebook,
    ``timestamp.txt`` and the assignment's own files stay, so feedback holds nothing else).
    Per-item tampering (recorded; that item gets no credit and is flagged): a locked cell
    whose source or nbgrader flags changed (edited or unlocked test cells).
    """

    enabled = True

    def preprocess(self, nb, resources):
        """Check ``nb`` against the released notebook (see the class docstring); a per-submission error is
        written to the student's report and raised as ``SubmissionError``, so nbgrader grades nothing."""
        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        release = Path(coursedir.format_path(coursedir.release_directory, ".", info["assignment"])) \
            / f"{info['notebook']}.ipynb"
        key = (info["student"], info["assignment"], info["notebook"])
        try:
            if Path(coursedir.submitted_directory).name != STAGED_DIR:
                try:
                    take(coursedir.format_path(coursedir.submitted_directory, info["student"],
                                               info["assignment"]), info["assignment"],
                         SubmissionIntake(config=self.config))
                except SubmissionRefused as err:
                    raise SubmissionError(str(err)) from None
            _prune_copies(Path(coursedir.format_path(coursedir.autograded_directory, info["student"],
                                                     info["assignment"])),
                          Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"])))
            self._verify(nb, nbformat.read(str(release), as_version=4), key)
        except SubmissionError as err:
            write_report(coursedir.root, info["assignment"], info["student"],
                         error_report(info["student"], info["assignment"], str(err)))
            raise
        return nb, resources

    def _verify(self, nb, ref, key):
        notes = []
        kernel_note = check_kernel(nb)
        if kernel_note:
            notes.append(kernel_note)
        try:
            tampered = compare_with_release(nb, ref)
        except StructureError as err:
            raise SubmissionError(str(err)) from None
        # the learner ids are read before ClearOutput empties the outputs
        _VERIFIED[key] = {"tampered": tampered, "notes": notes, "learner_ids": submitted_learner_ids(nb)}


def check_kernel(nb) -> str | None:
    """:func:`attnlab_grader.judging.structure.check_kernel` (a note, or ``None``), raising
    :class:`SubmissionError` instead of ``StructureError`` for a kernel of another language."""
    try:
        return structure.check_kernel(nb)
    except StructureError as err:
        raise SubmissionError(str(err)) from None


def _prune_copies(dest: Path, source: Path) -> None:
    """Delete what nbgrader copied from a submission folder into ``dest`` (its autograded
    folder) besides notebooks, ``timestamp.txt`` and files the assignment's source provides."""
    if not dest.is_dir():
        return
    for path in sorted(dest.rglob("*"), reverse=True):
        rel = path.relative_to(dest)
        if path.is_symlink() or (path.is_file() and path.suffix != ".ipynb"
                                 and str(rel) not in ("timestamp.txt", SECRET) and not (source / rel).is_file()):
            path.unlink()
        elif path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()
