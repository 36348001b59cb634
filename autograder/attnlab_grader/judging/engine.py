"""The judgement of one notebook: run a set's checks against the learner's cells, return a Verdict per item.

This is the grader's one entry to judging (:func:`judge_notebook`), used alike by nbgrader's autograde step
(:class:`attnlab_grader.steps.sandbox_grade.SandboxGrade`) and by the learner's ``attnlab check``.  It reads the
notebook (an ``nbformat`` notebook, never changed), runs the answer cells and the spec's extraction code in the
:mod:`attnlab_grader.sandbox`, compares what comes back with the reference here, and returns a
:class:`Judgement`: one :class:`attnlab_grader.judging.verdict.Verdict` per test cell, the flags for an
instructor, and the answer cells that raised.  It writes nothing: storing the verdicts (a report file, nbgrader's
gradebook, a printed check) is the caller's.

Nothing here imports nbgrader: a cell's nbgrader role is read from its metadata as nbgrader's own
``nbgrader.utils.is_grade``/``is_solution``/``is_locked`` read it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from attnlab_grader.judging import verdict as V
from attnlab_grader.judging.reference_gpt import builds_reference
from attnlab_grader.judging.spec import decode, mistake_verdict, rng_from_urandom
from attnlab_grader.judging.values import nested_too_deeply
from attnlab_grader.judging.verdict import Verdict
from attnlab_grader.sandbox import scan
from attnlab_grader.sandbox.wire import record_text


class GradingError(Exception):
    """The notebook could not be judged at all (the sandbox refused the job, or the spec lacks a check for a
    test cell); the message says why in words.  One item's failure is never this: it is that item's Verdict."""


def nbgrader_meta(cell) -> dict:
    """The cell's ``metadata.nbgrader`` (an empty dict when absent)."""
    return dict((cell.get("metadata") or {}).get("nbgrader", {}) or {})


def is_grade(cell) -> bool:
    """A test cell or a written answer with points (nbgrader's ``is_grade``)."""
    return bool(nbgrader_meta(cell).get("grade", False))


def is_solution(cell) -> bool:
    """An answer cell (nbgrader's ``is_solution``)."""
    return bool(nbgrader_meta(cell).get("solution", False))


def is_locked(cell) -> bool:
    """A cell the learner may not change (nbgrader's ``is_locked``: test cells and locked cells)."""
    if is_solution(cell):
        return False
    return is_grade(cell) or bool(nbgrader_meta(cell).get("locked", False))


def test_cells(nb) -> dict:
    """``{grade_id: cell}`` of the autograded test cells (code, graded, not an answer), in notebook order."""
    return {nbgrader_meta(c)["grade_id"]: c for c in nb.cells
            if c.cell_type == "code" and is_grade(c) and not is_solution(c)}


@dataclass
class Judgement:
    """What :func:`judge_notebook` found.

    ``verdicts``: ``{grade_id: Verdict}`` for every test cell of the notebook, in notebook order; ``points``:
    each test cell's points (its nbgrader metadata); ``flags``: why an instructor should look (held credit,
    tampering, a by-hand number that fits another learner); ``cell_errors``: ``{answer cell: message}`` for
    answer cells that raised when run (or were not run, and why); ``sandbox``: the isolation in force."""

    verdicts: dict[str, Verdict] = field(default_factory=dict)
    points: dict[str, float] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    cell_errors: dict[str, str] = field(default_factory=dict)
    sandbox: str = ""

    @property
    def score(self) -> float:
        """Points earned."""
        return sum(self.points[g] for g, v in self.verdicts.items() if v.ok)

    @property
    def max_score(self) -> float:
        """Points of every judged item."""
        return sum(self.points[g] for g in self.verdicts)


#: Characters of added cells (cells without nbgrader metadata) read for their definitions, in all;
#: an added cell over :data:`attnlab_grader.sandbox.scan.MAX_CELL_CHARS`, and the added cells past this
#: total, are not read (:class:`attnlab_grader.sandbox.scan.NotRead`: reported as not run, with the reason).
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
        if not nbgrader_meta(c):
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
            out.append((nbgrader_meta(c)["grade_id"], c.source))
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


def judge_notebook(nb, spec, student, sandbox, tampered=None, timeout=10.0, mem_mb=1024,
                   other_learners=()) -> Judgement:
    """Run every check of ``spec`` against ``nb``'s answer cells and judge each test cell.

    ``nb``: an ``nbformat`` v4 notebook (read, never changed); ``spec``: the set's
    :class:`attnlab_grader.judging.spec.Spec`; ``student``: the learner id the by-hand numbers are drawn for;
    ``sandbox``: a running :class:`attnlab_grader.sandbox.Sandbox`; ``tampered``: ``{grade_id: what changed}``
    for test cells found edited (no credit, flagged); ``timeout`` (seconds) and ``mem_mb`` (MiB): each check's
    bounds in the sandbox; ``other_learners``: ids whose by-hand numbers are recognised (and flagged for
    review) when a by-hand answer is wrong for ``student`` (the ids the notebook recorded as data,
    :func:`attnlab_grader.judging.by_hand.submitted_learner_ids`).

    Raises :class:`GradingError` when the notebook cannot be judged at all (a test cell without a check: a
    course bug; the sandbox refused the job); any other failure of one check is that item's Verdict.
    """
    tampered = tampered or {}
    cells = solution_cells(nb)
    # the sandbox runs exactly what the scan reads: IPython's transformation of each cell
    run_cells, not_run = scan.runnable(cells)
    flags: list[str] = []
    suspicious = scan.suspicious(cells, spec.allowed_imports)
    if suspicious:
        flags += [f"suspicious code, all autograded credit withheld for review: {f}" for f in suspicious]
    rng = rng_from_urandom()
    grade_cells = test_cells(nb)
    missing = [g for g in grade_cells if spec.check_for(g) is None]
    if missing:
        raise GradingError(f"grading.py has no check for test cell(s) {missing} (course bug)")
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
        raise GradingError(reply["error"])
    results = reply["results"]
    verdicts: dict[str, Verdict] = {}
    cell_errors = dict(not_run)
    for check, trials in plan:
        gid = check.grade_id
        verdict, flag = _judge(check, trials, results, student, cells, tampered, suspicious, spec,
                               other_learners)
        for ce in results.get(gid, {}).get("cell_errors", []):
            cell_errors.setdefault(ce["cell"], ce)
        if flag:
            flags.append(f"{gid}: {flag}")
        verdict = replace(verdict, flag=flag)
        if not verdict.ok and not_run:
            skipped = "; ".join(f"cell '{c}': {e['error']}" for c, e in list(not_run.items())[:3])
            verdict = replace(verdict, reason=f"{verdict.reason} (not run: {skipped})"[:1500],
                              evidence=(*verdict.evidence, f"cells not run: {', '.join(list(not_run)[:5])}"))
        if gid in grade_cells:
            verdicts[gid] = verdict
    order = list(grade_cells)
    points = {g: float(nbgrader_meta(grade_cells[g]).get("points", 0) or 0) for g in order}
    return Judgement(verdicts={g: replace(verdicts[g], max_points=points[g]) for g in order if g in verdicts},
                     points=points,
                     flags=flags, cell_errors={c: str(e["error"]) for c, e in cell_errors.items()},
                     sandbox=getattr(sandbox, "describe", lambda: "")())


def _judge(check, trials, results, student, cells, tampered, suspicious, spec, other_learners=()):
    """Return ``(verdict, flag)`` for one check (:class:`attnlab_grader.judging.verdict.Verdict`)."""
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
                       V.HELD, withheld=base.ok, evidence=tuple(str(f) for f in suspicious[:5])), flag
    return base, flag


#: Exceptions that end the student's program rather than report a mistake: the item crashed.
_EXITS = ("SystemExit", "KeyboardInterrupt")


def _raised(res: dict, reason: str) -> Verdict:
    """The verdict of a check whose code raised: its kind from the result's ``exception`` field (the class name
    the sandbox recorded), never from the message text; ``V.OTHER`` without one."""
    name = res.get("exception")
    kind, exception = V.raised(name) if isinstance(name, str) and name.isidentifier() else (V.OTHER, None)
    return Verdict(False, reason, kind, exception=exception)


def _narrow(check, out, rest, student):
    """Several known mistakes can give the same values on one draw of inputs (e.g. "forgot the
    layers" and "forgot K and V" when n_layers = 2). The first failing trial names every mistake its
    value matches; later trials that fail too keep only the mistakes that explain them as well, so
    the report names the mistake that was made (all of them when the draws cannot tell)."""
    names = list(out.mistakes)
    if len(names) < 2:
        return out
    for res, raw in rest:
        if res.get("status") != "ok" or res.get("forbidden_ops"):
            continue
        try:
            later = check.judge(decode(res.get("value")), raw, student)
        except Exception:  # noqa: BLE001 - narrowing is best effort; the first verdict stands
            continue
        keep = [n for n in names if n in later.mistakes]
        if not later.ok and keep:
            names = keep
    return out if tuple(names) == out.mistakes else mistake_verdict(check.target, tuple(names))


def _runtime(check, trials, results, student, cells, other_learners=()):
    gid = check.grade_id
    if check.kind == "by_hand":
        try:
            value = check.read(cells)
        except ValueError as err:
            return Verdict(False, str(err), getattr(err, "kind", V.UNREADABLE)), None
        out = check.judge(value, {"other_learners": list(other_learners)}, student)
        return out, out.flag
    if check.target and check.forbid_attrs:
        ref = scan.reference_use(cells, check.target, check.forbid_attrs)
        if ref:
            return Verdict(False, f"no credit: {ref[0]}", V.LIBRARY, evidence=tuple(str(f) for f in ref[:5])), \
                f"reference used: {ref[0]}"
    sandbox_check, raws = trials
    res = results.get(gid, {"status": "crashed", "error": "no result"})
    status = res.get("status")
    if status == "timeout":
        return Verdict(False, f"timed out: {res.get('error')} (an infinite loop?)", V.TIMED_OUT), None
    if status == "crashed":
        return Verdict(False, f"crashed: {res.get('error')}", V.CRASHED), None
    if status != "ok":
        return _raised(res, f"error: {res.get('error')}"), None
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
            return _raised(res, f"error: {res.get('error')}"), None
        records = list(res.get("forbidden_ops") or ())  # wire.py's typed watch records: {"kind", "op"}
        ops = [record_text(r) for r in records]
        changed = [r["op"] for r in records if r["kind"] == "changed"]
        if changed:
            what = ", ".join(changed)
            return Verdict(False, f"no credit: the code replaced part of a library while it was graded ({what}); "
                                  "write your own functions instead of changing torch/numpy", V.LIBRARY,
                           evidence=tuple(ops)), f"library changed at run time: {what}"
        if ops:
            shown = ", ".join(r["op"] for r in records[:5])
            return Verdict(False, f"no credit: {check.target} ran the library operation {shown} "
                                  "instead of computing it", V.LIBRARY, evidence=tuple(ops)), \
                f"reference op at run time: {', '.join(ops)}"
        try:
            value = decode(res.get("value"))
        except TypeError as err:
            return Verdict(False, f"no credit: {check.target or check.variable} {err}", V.UNSUPPORTED), \
                f"unsupported return type: {err}"
        out = check.judge(value, raw, student)
        if not out.ok:
            return _narrow(check, out, pairs[i + 1:], student), None
        last = out
    return Verdict(True, last.message), None
