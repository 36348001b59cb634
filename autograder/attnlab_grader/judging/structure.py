"""A notebook's graded cells compared with the release it came from, before anything is judged.

:func:`compare_with_release` finds what stops a notebook from being graded at all (a graded cell deleted,
duplicated, invented or changed in type: :class:`StructureError`) and the test cells whose locked source or
nbgrader flags were changed (tampered: no credit for that item, a flag for the instructor).
:func:`check_kernel` accepts any Python kernel and refuses another language.  :func:`as_released` is the
notebook as it is then judged: its graded cells carry the release's types and nbgrader metadata, as nbgrader's
``OverwriteCells`` restores them.

Used by nbgrader's first sanitize step (:class:`attnlab_grader.steps.verify.VerifySubmission`) and by the
learner's ``attnlab check``; nothing here imports nbgrader.
"""
from __future__ import annotations

import copy

from attnlab_grader.judging.text_safety import safe_text

#: Kernelspec names a submission may carry: Jupyter's default and the course's own kernel
#: ("Python 3 (attnlab)", installed by scripts/setup.sh); the one home of this list.
ACCEPTED_KERNELS = ("python3", "attnlab")


class StructureError(Exception):
    """The notebook's graded cells do not match the release (or its kernel is not Python): it cannot be
    graded; the message says what to fix."""


def nbgrader_meta(cell) -> dict:
    """A copy of the cell's ``metadata.nbgrader`` (``{}`` when absent)."""
    return dict(cell.metadata.get("nbgrader", {}))


def nbgrader_flags(meta: dict) -> tuple:
    """What of a cell's nbgrader metadata a learner may not change: ``(grade, solution, locked, points)``."""
    return (bool(meta.get("grade")), bool(meta.get("solution")), bool(meta.get("locked")),
            meta.get("points"))


def compare_with_release(nb, released) -> dict[str, str]:
    """``{grade_id: what changed}`` for the graded cells of ``nb`` whose nbgrader flags
    (:func:`nbgrader_flags`) or, for a locked cell, source differ from ``released``'s.

    ``nb``/``released``: ``nbformat`` v4 notebooks (read, never changed).  Raises :class:`StructureError`
    (one sentence) for a cell with nbgrader flags but no grade id, a grade id the release does not have (a
    fake or renamed graded cell), one that appears twice, a graded cell deleted, or one whose type changed.
    """
    ref_cells = {}
    for cell in released.cells:
        m = nbgrader_meta(cell)
        if m.get("grade_id"):
            ref_cells[m["grade_id"]] = cell
    seen: dict[str, list] = {}
    for cell in nb.cells:
        m = nbgrader_meta(cell)
        gid = m.get("grade_id")
        if gid:
            seen.setdefault(gid, []).append(cell)
        elif m.get("grade") or m.get("solution") or m.get("locked"):
            raise StructureError("a cell claims to be an nbgrader cell but has no grade_id")
    for gid, cells in seen.items():
        if gid not in ref_cells:
            raise StructureError(f"cell '{safe_text(gid)}' is not part of the assignment (a fake or "
                                 "renamed graded cell); remove it and resubmit")
        if len(cells) > 1:
            raise StructureError(f"cell '{safe_text(gid)}' appears {len(cells)} times (duplicated cell); "
                                 "keep one copy and resubmit")
    missing = [gid for gid in ref_cells if gid not in seen]
    if missing:
        raise StructureError(f"cell(s) {', '.join(map(repr, missing))} were deleted; copy them "
                             "back from exercises/ and resubmit")
    tampered = {}
    for gid, rcell in ref_cells.items():
        cell, rm = seen[gid][0], nbgrader_meta(rcell)
        if cell.cell_type != rcell.cell_type:
            raise StructureError(f"cell '{gid}' changed type from {rcell.cell_type} to {cell.cell_type}")
        if nbgrader_flags(nbgrader_meta(cell)) != nbgrader_flags(rm):
            tampered[gid] = "its nbgrader metadata was changed (e.g. unlocked)"
        elif rm.get("locked") and cell.source != rcell.source:
            tampered[gid] = "its locked source was edited"
    return tampered


def as_released(nb, released):
    """A copy of ``nb`` whose graded cells (those with a grade id ``released`` has) carry the release's cell
    type and nbgrader metadata, and a locked one the release's source: the notebook to judge after
    :func:`compare_with_release` (in a class's grading nbgrader's ``OverwriteCells`` restores the type, the
    lock, the points and a locked source the same way).  ``nb``/``released``: ``nbformat`` v4 notebooks;
    neither is changed."""
    ref = {nbgrader_meta(c)["grade_id"]: c for c in released.cells if nbgrader_meta(c).get("grade_id")}
    out = copy.deepcopy(nb)
    for cell in out.cells:
        rcell = ref.get(nbgrader_meta(cell).get("grade_id"))
        if rcell is None:
            continue
        cell.metadata["nbgrader"] = copy.deepcopy(dict(rcell.metadata["nbgrader"]))
        if rcell.cell_type != cell.cell_type or nbgrader_meta(rcell).get("locked"):
            cell.source = rcell.source
    return out


def check_kernel(nb) -> str | None:
    """Accept the notebook's kernel when it runs Python; return a note saying what was ignored
    (``None`` for the course's own kernels).  The grader never uses the kernel: it runs the answer
    cells with its own Python in the sandbox, so any Python kernel (a conda environment's, an
    IDE's) is as good as the course's.  The language is the one the notebook states
    (``kernelspec.language``, else ``language_info.name``); where it states none, a kernel whose
    name or display name says Python (``"Python (myenv)"``) or no kernel at all (a notebook written
    by a tool) is accepted.  Raises :class:`StructureError` for a kernel of another language (R,
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
    raise StructureError(f"the notebook's kernel is {shown!r} (language {safe_text(language or 'unknown')[:40]!r}), "
                         "not Python; pick the kernel 'Python 3 (attnlab)' (Kernel > Change Kernel), save and "
                         "resubmit")
