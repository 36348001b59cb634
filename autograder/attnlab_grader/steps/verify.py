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

from attnlab_grader.records.grade_report import error_report, write_report
from attnlab_grader.records.intake import SECRET, STAGED_DIR, SubmissionIntake, SubmissionRefused, safe_text, take
from attnlab_grader.judging.by_hand import submitted_learner_ids

#: Kernelspec names a submission may carry: Jupyter's default and the course's own kernel
#: ("Python 3 (attnlab)", installed by scripts/setup.sh); the one home of this list.
ACCEPTED_KERNELS = ("python3", "attnlab")
#: Per-process hand-over from VerifySubmission to SandboxGrade (never stored in the
#: notebook, which the student controls): ``tampered`` cells, ``notes`` on what was ignored, and
#: ``learner_ids``, the ids the submission's outputs record as data (used only to flag by-hand
#: numbers that fit another id, see ``by_hand.submitted_learner_ids``).
_VERIFIED: dict[tuple[str, str, str], dict] = {}


class SubmissionError(Exception):
    """The submission cannot be graded (structure broken); message says what to fix."""


def _nbg(cell) -> dict:
    return dict(cell.metadata.get("nbgrader", {}))


def _flags(meta: dict) -> tuple:
    return (bool(meta.get("grade")), bool(meta.get("solution")), bool(meta.get("locked")),
            meta.get("points"))


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
        ref_cells = {}
        for cell in ref.cells:
            m = _nbg(cell)
            if m.get("grade_id"):
                ref_cells[m["grade_id"]] = cell
        seen: dict[str, list] = {}
        for cell in nb.cells:
            m = _nbg(cell)
            gid = m.get("grade_id")
            if gid:
                seen.setdefault(gid, []).append(cell)
            elif m.get("grade") or m.get("solution") or m.get("locked"):
                raise SubmissionError("a cell claims to be an nbgrader cell but has no grade_id")
        for gid, cells in seen.items():
            if gid not in ref_cells:
                raise SubmissionError(f"cell '{safe_text(gid)}' is not part of the assignment (a fake or "
                                      "renamed graded cell); remove it and resubmit")
            if len(cells) > 1:
                raise SubmissionError(f"cell '{safe_text(gid)}' appears {len(cells)} times (duplicated cell); "
                                      "keep one copy and resubmit")
        missing = [gid for gid in ref_cells if gid not in seen]
        if missing:
            raise SubmissionError(f"cell(s) {', '.join(map(repr, missing))} were deleted; copy them "
                                  "back from exercises/ and resubmit")
        tampered = {}
        for gid, rcell in ref_cells.items():
            cell, rm = seen[gid][0], _nbg(rcell)
            if cell.cell_type != rcell.cell_type:
                raise SubmissionError(f"cell '{gid}' changed type from {rcell.cell_type} to {cell.cell_type}")
            if _flags(_nbg(cell)) != _flags(rm):
                tampered[gid] = "its nbgrader metadata was changed (e.g. unlocked)"
            elif rm.get("locked") and cell.source != rcell.source:
                tampered[gid] = "its locked source was edited"
        # the learner ids are read before ClearOutput empties the outputs
        _VERIFIED[key] = {"tampered": tampered, "notes": notes, "learner_ids": submitted_learner_ids(nb)}


def check_kernel(nb) -> str | None:
    """Accept the notebook's kernel when it runs Python; return a note saying what was ignored
    (``None`` for the course's own kernels).  The grader never uses the kernel: it runs the answer
    cells with its own Python in the sandbox, so any Python kernel (a conda environment's, an
    IDE's) is as good as the course's.  The language is the one the notebook states
    (``kernelspec.language``, else ``language_info.name``); where it states none, a kernel whose
    name or display name says Python (``"Python (myenv)"``) or no kernel at all (a notebook written
    by a tool) is accepted.  Raises :class:`SubmissionError` for a kernel of another language (R,
    Julia, ...), whose cells would not be Python."""
    meta = nb.metadata if isinstance(nb.metadata, dict) else {}
    spec = meta.get("kernelspec") if isinstance(meta.get("kernelspec"), dict) else {}
    info = meta.get("language_info") if isinstance(meta.get("language_info"), dict) else {}
    name = spec.get("name")
    if name in ACCEPTED_KERNELS:
        return None
    language = str(spec.get("language") or info.get("name") or "").strip().lower()
    shown = safe_text(name if name is not None else "(none)")[:80]
    if language in ("python", "python3"):
        return (f"the notebook's kernel {shown!r} (language Python) was ignored: the grader runs your answers "
                "with the course's Python")
    if not language and not spec:
        return ("the notebook names no kernel (it was written by a tool, not run in Jupyter); its cells were "
                "graded as Python")
    said = f"{spec.get('name', '')} {spec.get('display_name', '')}".lower()
    if not language and "python" in said:
        return (f"the notebook's kernel {shown!r} (its name says Python) was ignored: the grader runs your "
                "answers with the course's Python")
    raise SubmissionError(f"the notebook's kernel is {shown!r} (language {safe_text(language or 'unknown')[:40]!r}), "
                          "not Python; pick the kernel 'Python 3 (attnlab)' (Kernel > Change Kernel), save and "
                          "resubmit")


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
