"""``SandboxGrade``: the autograde step that replaces nbgrader's ``Execute``
(``attnlab_grader/nbgrader_config.py``).

It never executes the notebook in a Jupyter kernel: it runs the student's solution cells in
:mod:`attnlab_grader.sandbox`, extracts plain values, compares them with the reference here, and
writes the verdict into each test cell's outputs (an ``error`` output for a failed item) so
nbgrader's ``SaveAutoGrades`` records the score and ``generate_feedback`` shows our message --
never a hidden test's source or assert line.  Its settings (timeout, memory, worker slot, hidden
paths, sandbox mechanism) are traitlets; none is read from environment variables.  It grades only
notebooks :class:`attnlab_grader.verify.VerifySubmission` checked in the same process (fail closed).
"""
from __future__ import annotations

import threading
from pathlib import Path

from nbformat.v4 import new_output
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade, is_locked, is_solution
from traitlets import CaselessStrEnum, Float, Integer, List, Unicode

from . import scan
from .grade_report import GradeReport, ItemResult, error_report, read_report, write_report
from .intake import nested_too_deeply
from .sandbox_gpt import builds_reference
from . import verdict as V
from .spec import decode, load_spec, mistake_outcome, rng_from_urandom
from .verdict import Verdict
from .verify import _VERIFIED, SubmissionError, _nbg

_SANDBOX = None
_LOCK = threading.Lock()


def _sandbox(slot: int, hide: list[str], mechanism: str | None):
    """This process's sandbox (one per grading worker, kept across submissions); a new one when
    it died or when the settings changed."""
    global _SANDBOX
    from .sandbox import Sandbox
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
            report = grade_notebook(nb, spec, student, verified["tampered"], sandbox,
                                    timeout=self.timeout or spec.timeout, mem_mb=self.mem_mb or spec.mem_mb,
                                    other_learners=verified.get("learner_ids", []))
        except SubmissionError as err:
            self._error(coursedir.root, assignment, student, str(err))
            raise
        except Exception as err:  # noqa: BLE001 - the grader could not run: keep what we had
            why = f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}"
            if not previous or previous.get("status") not in ("graded", "flagged") or not previous.get("items"):
                reason = f"the grader could not run ({why}); nothing was recorded, grade again when it works"
                self._error(coursedir.root, assignment, student, reason)
                raise SubmissionError(reason) from err
            self.log.error("could not re-grade %s/%s (%s): the previous result was kept",
                           assignment, student, why)
            report = dict(previous, kept_previous=f"re-grading failed ({why}); the previous result "
                          "was kept")
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


def annotate(nb, items: dict[str, ItemResult]) -> None:
    """Write each item's verdict into its test cell's outputs (an ``error`` output for no credit),
    which is what nbgrader's ``SaveAutoGrades`` scores and ``generate_feedback`` shows."""
    for c in nb.cells:
        gid = _nbg(c).get("grade_id")
        if gid in items and c.cell_type == "code" and is_grade(c) and not is_solution(c):
            item = items[gid]
            c.outputs = [new_output("stream", name="stdout", text=f"✔ {item['message']}\n")] \
                if item["ok"] else [_error_output(item["message"])]


#: Characters of added cells (cells without nbgrader metadata) read for their definitions, in all;
#: an added cell over :data:`attnlab_grader.scan.MAX_CELL_CHARS`, and the added cells past this
#: total, are not read (:class:`attnlab_grader.scan.NotRead`: reported as not run, with the reason).
#: Measured: reading definitions (IPython's transformation, then parsing) costs about 3 s per MB.
ADDED_CHARS = 300_000


def solution_cells(nb) -> list[tuple[str, str]]:
    """``[(cell id, source)]`` run by the sandbox, in notebook order: every answer cell, and the
    top-level ``def``/``class`` statements of code cells the student added (no nbgrader metadata;
    id ``added-<n>``), so a helper written in its own cell works as in the notebook.  Other
    statements of an added cell (prints, plots, experiments) are not run.  Bounded: see
    :data:`ADDED_CHARS`."""
    out, added = [], 0  # characters of added cells read so far
    for n, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        if not _nbg(c):
            size = len(c.source)
            if size > scan.MAX_CELL_CHARS or added + size > ADDED_CHARS:
                # not read for definitions (bounded time); scan.runnable reports it as not run, with the reason
                why = (f"it has {size:,} characters, over the {scan.MAX_CELL_CHARS:,} limit for one added cell"
                       if size > scan.MAX_CELL_CHARS else
                       f"the added cells before it already hold {added:,} characters (limit {ADDED_CHARS:,} in all)")
                out.append((f"added-{n}", scan.NotRead(f"this added cell was not read for definitions: {why}; "
                                                       "move your helper functions into the answer cells")))
                continue
            added += size
            defs = _definitions(c.source)
            if defs:
                out.append((f"added-{n}", defs))
        elif is_solution(c) and not is_grade(c):
            out.append((_nbg(c)["grade_id"], c.source))
    return out


def _definitions(source: str) -> str:
    """The top-level function and class definitions of ``source`` (decorators included), or ''."""
    import ast
    try:
        text = scan.to_python(source)
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    lines = text.splitlines()
    keep = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            keep.append("\n".join(lines[first - 1:node.end_lineno]))
    return "\n\n".join(keep) + "\n" if keep else ""


def grade_notebook(nb, spec, student, tampered, sandbox, timeout=10.0, mem_mb=1024, other_learners=()) -> GradeReport:
    """Run every check of ``spec`` against ``nb``'s solution cells; annotate the test cells.

    ``other_learners``: ids whose by-hand numbers are recognised (and flagged for review) when a
    by-hand answer is wrong for ``student``: the learner ids the submitted notebook recorded as data
    (:func:`attnlab_grader.by_hand.submitted_learner_ids`).

    Returns the :class:`attnlab_grader.grade_report.GradeReport` (``items`` keyed by grade_id).
    """
    cells = solution_cells(nb)
    # the sandbox runs exactly what the scan reads: IPython's transformation of each cell
    run_cells, not_run = scan.runnable(cells)
    flags: list[str] = []
    suspicious = scan.suspicious(cells, spec.allowed_imports)
    if suspicious:
        flags += [f"suspicious code, all autograded credit withheld for review: {f}" for f in suspicious]
    rng = rng_from_urandom()
    grade_cells = {_nbg(c)["grade_id"]: c for c in nb.cells
                   if c.cell_type == "code" and is_grade(c) and not is_solution(c)}
    missing = [g for g in grade_cells if spec.check_for(g) is None]
    if missing:
        raise SubmissionError(f"grading.py has no check for test cell(s) {missing} (course bug)")
    plan, sandbox_checks = [], []
    for check in spec.checks:
        job = check.jobs(rng)
        plan.append((check, job))
        if job is not None:
            # reference code brought into the sandbox stays apart from the checks that do not use it
            sandbox_checks.append(dict(job[0], isolated=builds_reference(job[0])))
    # the learner's identity never enters the sandbox: by-hand items are judged here, with
    # seed_for(student, key) (spec.ByHandCheck.variant), and attnlab is not importable there
    job = {"cells": run_cells, "checks": sandbox_checks, "timeout": timeout, "mem_mb": mem_mb}
    reply = sandbox.run(job) if sandbox_checks else {"results": {}}
    if "error" in reply:
        raise SubmissionError(reply["error"])
    results = reply["results"]
    items: dict[str, ItemResult] = {}
    cell_errors = dict(not_run)
    for check, trials in plan:
        gid = check.grade_id
        outcome, flag = _judge(check, trials, results, student, cells, tampered, suspicious, spec,
                               other_learners)
        for ce in results.get(gid, {}).get("cell_errors", []):
            cell_errors.setdefault(ce["cell"], ce)
        if flag:
            flags.append(f"{gid}: {flag}")
        outcome.flag = flag
        if not outcome.ok and not_run:
            skipped = "; ".join(f"cell '{c}': {e['error']}" for c, e in list(not_run.items())[:3])
            outcome.reason = f"{outcome.reason} (not run: {skipped})"[:1500]
            outcome.evidence.append(f"cells not run: {', '.join(list(not_run)[:5])}")
        cell = grade_cells.get(gid)
        if cell is not None:
            items[gid] = outcome.item(float(_nbg(cell).get("points", 0)))
    annotate(nb, items)
    for c in nb.cells:
        gid = _nbg(c).get("grade_id")
        if gid in cell_errors and c.cell_type == "code" and not is_locked(c):
            ce = cell_errors[gid]
            c.outputs = [new_output("stream", name="stdout",
                                    text=f"When graded, this cell raised {ce['error']}\n")]
    return {"student": student, "assignment": spec.name, "status": "flagged" if flags else "graded",
            "items": items, "flags": flags, "sandbox": getattr(sandbox, "describe", lambda: "")(),
            "score": sum(i["points"] for i in items.values()),
            "max_score": sum(i["max_points"] for i in items.values())}


def _judge(check, trials, results, student, cells, tampered, suspicious, spec, other_learners=()):
    """Return ``(verdict, flag)`` for one check (:class:`attnlab_grader.verdict.Verdict`)."""
    gid = check.grade_id
    try:
        base, flag = _runtime(check, trials, results, student, cells, other_learners)
    except Exception as err:  # noqa: BLE001 - one item's failure stays in that item
        if nested_too_deeply(err):
            base, flag = Verdict(False, "no credit: returned a value nested too deeply to compare", V.NESTED), None
        else:
            base, flag = Verdict(False, f"could not be checked: {type(err).__name__}: {err}"[:500], V.OTHER), None
    if gid in tampered:
        return Verdict(False, f"no credit: this test cell was tampered with ({tampered[gid]})", V.TAMPERED,
                       withheld=base.ok), f"test cell tampered: {tampered[gid]}"
    if suspicious:
        return Verdict(False, f"{base.reason if not base.ok else 'passes'}; no credit pending instructor "
                              f"review: the submission contains code the exercises never need ({suspicious[0]})",
                       V.HELD, withheld=base.ok, evidence=[str(f) for f in suspicious[:5]]), flag
    return base, flag


def _from_outcome(out) -> Verdict:
    """The verdict of a check's own judgement (``spec.Outcome``)."""
    return Verdict(out.ok, out.message, out.kind or (V.NAMED_MISTAKE if out.mistake else V.WRONG_VALUES),
                   mistake=out.mistake, mistakes=tuple(out.matches or ()))


#: Exceptions that end the student's program rather than report a mistake: the item crashed.
_EXITS = ("SystemExit", "KeyboardInterrupt")


def _error_kind(res: dict) -> str:
    """The kind of a check whose code raised: from the result's ``exception`` field (the class name
    the sandbox recorded), never from the message text; ``V.OTHER`` without one."""
    name = res.get("exception")
    return V.raised(name) if isinstance(name, str) and name.isidentifier() else V.OTHER


def _narrow(check, out, rest, student):
    """Several known mistakes can give the same values on one draw of inputs (e.g. "forgot the
    layers" and "forgot K and V" when n_layers = 2). The first failing trial names every mistake its
    value matches; later trials that fail too keep only the mistakes that explain them as well, so
    the report names the mistake that was made (all of them when the draws cannot tell)."""
    names = list(getattr(out, "matches", ()) or ())
    if len(names) < 2:
        return out
    for res, raw in rest:
        if res.get("status") != "ok" or res.get("forbidden_ops"):
            continue
        try:
            later = check.judge(decode(res.get("value")), raw, student)
        except Exception:  # noqa: BLE001 - narrowing is best effort; the first verdict stands
            continue
        keep = [n for n in names if n in (later.matches or ())]
        if not later.ok and keep:
            names = keep
    return out if tuple(names) == tuple(out.matches) else mistake_outcome(check.target, tuple(names))


def _runtime(check, trials, results, student, cells, other_learners=()):
    gid = check.grade_id
    if check.kind == "by_hand":
        try:
            value = check.read(cells)
        except ValueError as err:
            return Verdict(False, str(err), getattr(err, "kind", V.UNREADABLE)), None
        out = check.judge(value, {"other_learners": list(other_learners)}, student)
        return _from_outcome(out), out.flag
    if check.target and check.forbid_attrs:
        ref = scan.reference_use(cells, check.target, check.forbid_attrs)
        if ref:
            return Verdict(False, f"no credit: {ref[0]}", V.LIBRARY, evidence=[str(f) for f in ref[:5]]), \
                f"reference used: {ref[0]}"
    sandbox_check, raws = trials
    res = results.get(gid, {"status": "crashed", "error": "no result"})
    status = res.get("status")
    if status == "timeout":
        return Verdict(False, f"timed out: {res.get('error')} (an infinite loop?)", V.TIMED_OUT), None
    if status == "crashed":
        return Verdict(False, f"crashed: {res.get('error')}", V.CRASHED), None
    if status != "ok":
        return Verdict(False, f"error: {res.get('error')}", _error_kind(res)), None
    exits = [e for e in res.get("cell_errors") or () if e.get("exception") in _EXITS]
    if exits:
        e = exits[0]
        return Verdict(False, f"crashed: cell '{e['cell']}' called sys.exit/raised {e['error']}", V.CRASHED), None
    if len(res.get("trials", [])) != len(raws):
        return Verdict(False, "crashed: the sandbox returned an incomplete result", V.CRASHED), \
            "incomplete sandbox result"
    pairs = list(zip(res["trials"], raws, strict=True))
    for i, (res, raw) in enumerate(pairs):
        status = res.get("status")
        if status != "ok":
            if res.get("memory"):
                return Verdict(False, f"out of memory: {res.get('error')}", V.OUT_OF_MEMORY), None
            if res.get("exception") in _EXITS:
                return Verdict(False, f"crashed: the code called sys.exit/raised {res.get('error')}", V.CRASHED), None
            return Verdict(False, f"error: {res.get('error')}", _error_kind(res)), None
        ops = list(res.get("forbidden_ops") or ())
        changed = [op.split(": ", 1)[1] for op in ops if op.startswith("changed library: ")]
        if changed:
            what = ", ".join(changed)
            return Verdict(False, f"no credit: the code replaced part of a library while it was graded ({what}); "
                                  "write your own functions instead of changing torch/numpy", V.LIBRARY,
                           evidence=ops), f"library changed at run time: {what}"
        if ops:
            shown = ", ".join(op[len("call: "):] if op.startswith("call: ") else op for op in ops[:5])
            return Verdict(False, f"no credit: {check.target} ran the library operation {shown} "
                                  "instead of computing it", V.LIBRARY, evidence=ops), \
                f"reference op at run time: {', '.join(ops)}"
        try:
            value = decode(res.get("value"))
        except TypeError as err:
            return Verdict(False, f"no credit: {check.target or check.variable} {err}", V.UNSUPPORTED), \
                f"unsupported return type: {err}"
        out = check.judge(value, raw, student)
        if not out.ok:
            return _from_outcome(_narrow(check, out, pairs[i + 1:], student)), None
        last = out
    return Verdict(True, last.message), None
