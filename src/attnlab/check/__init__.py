"""``attnlab check NOTEBOOK``: grade your own copy of an exercise notebook with the grader's judgement.

In a clone of the course (self-paced), the check runs the autograder itself on a private,
temporary nbgrader course (:func:`attnlab_grader.classroom.pipeline.grade`, in a folder only you can read,
removed afterwards): the same grading spec (``solutions/<set>/grading.py``), the same sandbox, the
same fresh random trial inputs compared with the ``attnlab.nn`` reference, your own by-hand numbers
(from your learner id) and the same named mistakes.  It reads your notebook as last saved, never
writes to it or to the clone, and needs no course folder of an instructor.

It prints one line per autograded item (the points, the grader's message and the named mistake;
where the grader failed an item without naming a mistake, also what the notebook's own check cell
says about the same code: :mod:`attnlab.check.check_cells`), then the written answers apart (graded by a person: after you have attempted one, its model answer
and rubric are shown), and closes with one line ``X / Y points`` counting the points it could judge.

Three modes (:class:`SelfCheckMode`), chosen per exercise set by :class:`SelfCheck`:

* ``full`` (the default, a self-paced clone): as above.
* ``visible``: only the notebook's visible test cells run (in a Jupyter kernel, as *Run all*
  would); nothing hidden is used or shown, no points are judged.  Used when the instructor says
  so, and whenever the grading specs are not there (a graded class keeps them with the
  instructor) or no sandbox can be built on this machine -- the output says which.
* ``off``: the instructor switched self-checking off for that set.

An instructor sets the mode in the deployment's nbgrader configuration (the file every user of a
class reads, e.g. ``<course environment>/etc/jupyter/nbgrader_config.py``)::

    c.SelfCheck.default = "visible"                       # every set
    c.SelfCheck.assignments = {"09_capstone": "off"}      # per set, wins over the default

Only the system-wide Jupyter configuration folders are read (not ``~/.jupyter``), so a student
cannot change the mode a class set.  The mode is a courtesy, not a lock: what keeps hidden inputs
and model answers from students is that a graded class's environment does not contain the
``solutions/`` folder (see autograder/README.md, *Installing the grader*).

From a notebook: ``from attnlab.check import check; check()`` checks the running notebook (as last
saved: save first) or ``check("path/to/notebook.ipynb")``.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .cells import (_attempted, _defining, _gid, _items_of, _model_answer, _nbg, _read_json, _source,  # noqa: F401
                    _stubs, _unattempted, _written_cells, find_assignment)
from .policy import CheckError, SelfCheck, SelfCheckMode, load_policy
from .results import CheckReport, ItemVerdict, WrittenAnswer

__all__ = ["SelfCheckMode", "SelfCheck", "ItemVerdict", "WrittenAnswer", "CheckReport", "CheckError",
           "load_policy", "find_assignment", "run_check", "check"]



def run_check(notebook: str | os.PathLike, assignment: str | None = None, learner: str | None = None,
              policy: SelfCheck | None = None, mode: SelfCheckMode | None = None) -> CheckReport:
    """Check the notebook file ``notebook`` (any copy, anywhere) and return the report.

    ``assignment``: the exercise set (default: :func:`find_assignment`); ``learner``: the learner id
    the by-hand numbers are drawn for (default ``attnlab.practice.learner_id()``, as in the
    notebook); ``policy``: the instructor's setting (default :func:`load_policy`); ``mode``: ask for
    a weaker mode than the policy allows (``visible``), never a stronger one.
    Raises :class:`CheckError` (one sentence) when the file is missing or its set unknown; a broken
    or half-done notebook is reported item by item instead.
    """
    from attnlab.practice.seeding import as_learner_id, learner_id
    path = Path(notebook).expanduser().absolute()
    if not path.exists():
        raise CheckError(f"there is no file {str(path)!r}; give the path of your exercise notebook (.ipynb).")
    if path.is_dir():
        raise CheckError(f"{str(path)!r} is a folder; give the path of your exercise notebook (.ipynb) inside it.")
    name = find_assignment(path, assignment)
    who = as_learner_id(learner) if learner else learner_id()
    allowed = (policy or load_policy()).mode_for(name)
    chosen = allowed if mode is None or allowed is not SelfCheckMode.FULL else SelfCheckMode(mode)
    report = CheckReport(notebook=path.name, assignment=name, learner=who, mode=chosen)
    if chosen is SelfCheckMode.OFF:
        report.why = (f"Self-checking is switched off for {name} by your course's settings: your work is "
                      "checked when it is graded.")
        return report
    if chosen is SelfCheckMode.VISIBLE:
        why = "Your instructor limited self-checking to the visible checks." if allowed is SelfCheckMode.VISIBLE \
            else "Only the visible checks were asked for (--visible)."
        return _visible(path, report, why)
    from attnlab_grader.records.course import solutions_dir
    folder = solutions_dir()
    spec = folder / name / "grading.py"
    if not os.access(spec, os.R_OK) or not os.access(folder / name / f"{name}.ipynb", os.R_OK):
        return _visible(path, report, f"This environment has no grading spec for {name} (a graded class keeps "
                                      "them with the instructor).")
    from attnlab_grader.sandbox import SandboxUnavailable, sandbox_support
    why_not = sandbox_support()
    if why_not:
        return _visible(path, report, f"The grader's checks need a sandbox this machine cannot build ({why_not})")
    try:
        return _full(path, report, folder)
    except SandboxUnavailable as err:
        return _visible(path, report, f"The grader's sandbox could not start here ({err})")
    except CheckError:
        raise
    except Exception as err:  # noqa: BLE001 - the grader itself failed: one sentence per item, no traceback
        why = f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[0][:300]}"
        nb = _read_json(path)
        for test, _ in _items_of(nb if isinstance(nb, dict) and isinstance(nb.get("cells"), list) else {}):
            report.items.append(ItemVerdict(_gid(test, "?"), "failed",
                                            "not checked: the grader could not run (the reason is below)", 0.0,
                                            float(_nbg(test).get("points", 0) or 0)))
        report.notes.append(f"the grader could not run here ({why}); try again, or ask for help with this message")
        return report


def _full(path: Path, report: CheckReport, solutions: Path) -> CheckReport:
    """Grade a copy of ``path`` in a private temporary nbgrader course with the autograder's pipeline."""
    from attnlab_grader.classroom.pipeline import grade
    name, who = report.assignment, report.learner
    code_stub, text_stub = _stubs()
    here = os.getcwd()
    root = Path(tempfile.mkdtemp(prefix="attnlab-check-"))  # 0700: only this user reads it
    try:
        folder = root / "submitted" / who / name
        folder.mkdir(parents=True)
        try:
            shutil.copyfile(path, folder / f"{name}.ipynb")
        except OSError as err:
            raise CheckError(f"cannot read {str(path)!r} ({err.strerror}); check the path and its permissions.") \
                from None
        os.chdir(root)  # nothing nbgrader might write lands next to the learner's files
        summary = grade(root, name, jobs=1, feedback=False, progress=False, csv_path=root / "grades.csv")
        rep: dict = dict(summary.reports[0]) if summary.reports else {"status": "error", "reason": "nothing was graded"}
        released = _read_json(root / "release" / name / f"{name}.ipynb") or {}
        learner_nb = _read_json(path)
        learner_nb = learner_nb if isinstance(learner_nb, dict) and isinstance(learner_nb.get("cells"), list) else None
        items_by_id = {g: v.to_json() for g, v in (rep.get("items") or {}).items()}  # the report's Verdicts
        if rep.get("status") == "error":  # the whole notebook was refused: say why once
            report.notes.append(f"the grader would not grade this notebook: {rep.get('reason') or 'no reason was given'}")
        answers_of = {_gid(t): a for t, a in _items_of(learner_nb or {"cells": []})}
        from attnlab_grader.judging.spec import load_spec
        targets = {c.grade_id: getattr(c, "target", None) for c in load_spec(solutions / name / "grading.py").checks}
        for gid, target in targets.items():  # a test cell with no answer cells of its own: the cells it runs
            if not answers_of.get(gid):
                answers_of[gid] = _defining(learner_nb or {"cells": []}, target)
        raised = _cell_errors(root / "autograded" / who / name / f"{name}.ipynb")
        for test, _ in _items_of(released):
            gid = _gid(test)
            max_points = float(_nbg(test).get("points", 0) or 0)
            item = items_by_id.get(gid)
            if item is None:
                why = "the grader would not grade the notebook (the reason is below)" if rep.get("reason") \
                    else "the grader returned no result for this item"
                report.items.append(ItemVerdict(gid, "failed", f"not checked: {why}", 0.0, max_points))
                continue
            stub = _unattempted(answers_of.get(gid, []), code_stub) if not item["ok"] else None
            if stub:
                report.items.append(ItemVerdict(gid, "not attempted", f"not attempted: answer cell '{stub}' "
                                                f"still holds the stub ({code_stub.splitlines()[-1]})",
                                                0.0, float(item["max_points"])))
                continue
            message = item["message"]
            if not item["ok"]:
                message += "".join(f"; when graded, answer cell '{_gid(c)}' raised {raised[_gid(c)]}"
                                   for c in answers_of.get(gid, []) if _gid(c) in raised)
            named: list = list(item.get("mistakes") or []) or [item.get("mistake")]
            report.items.append(ItemVerdict(gid, "passed" if item["ok"] else "failed", message,
                                            float(item["points"]), float(item["max_points"]),
                                            [str(m) for m in named if m]))
        _add_check_cell_messages(report, items_by_id, learner_nb, released)
        report.notes += [f"when graded: {f}" for f in rep.get("flags", [])] + list(rep.get("notes", []))
        report.written = _written(learner_nb, released, solutions / name / f"{name}.ipynb", set(items_by_id)
                                  | {_gid(t) for t, _ in _items_of(released)}, text_stub, True)
        return report
    finally:
        os.chdir(here)
        shutil.rmtree(root, ignore_errors=True)


#: Kinds of failure where the check cell has nothing to add: the grader's message already says what
#: happened (the code did not run to a value, or a person must look).
_NOTHING_TO_ADD = frozenset({"not attempted (stub left)", "timed out (an infinite loop?)", "ran out of memory",
                             "crashed (sys.exit or the process died)", "held for review (suspicious code)",
                             "test cell tampered with", "used the library version"})


def _add_check_cell_messages(report: CheckReport, items_by_id: dict, learner_nb: dict | None,
                             released: dict) -> None:
    """Where the grader failed an item without naming a mistake, add what the notebook's own check
    cell says about the learner's code (:func:`attnlab.check.check_cells.check_cell_messages`), so
    the check never says less than the visible check cell did."""
    from .check_cells import check_cell_messages
    wanted = {v.grade_id for v in report.items if v.status == "failed" and not v.mistakes
              and str((items_by_id.get(v.grade_id) or {}).get("kind", "")) not in _NOTHING_TO_ADD
              and not str((items_by_id.get(v.grade_id) or {}).get("kind", "")).startswith("raised ")}
    if not wanted or learner_nb is None:
        return
    said = check_cell_messages(learner_nb, released, wanted, report.learner)
    for v in report.items:
        if v.grade_id in said:
            v.message += f"; your notebook's check cell says: {said[v.grade_id]}"


def _cell_errors(graded: Path) -> dict[str, str]:
    """``{answer cell: error}`` for the answer cells that raised when the grader ran them (the grader
    writes "When graded, this cell raised ..." into their outputs in the autograded notebook)."""
    nb = _read_json(graded)
    out = {}
    for cell in (nb or {}).get("cells", []) if isinstance(nb, dict) else []:
        for o in cell.get("outputs", []) or []:
            text = _source_text(o)
            if text.startswith("When graded, this cell raised "):
                out[_gid(cell)] = text.removeprefix("When graded, this cell raised ").strip()
    return out


def _written(learner_nb: dict | None, released: dict, source: Path | None, auto: set[str], text_stub: str,
             reveal: bool) -> list[WrittenAnswer]:
    """The written answers of the set, with the model answer and rubric where ``reveal`` and attempted."""
    mine = {_gid(c): _source(c) for c in (learner_nb or {}).get("cells", [])}
    rel = {_gid(c): _source(c) for c in released.get("cells", [])}
    src = _read_json(source) if source is not None else None
    model = {_gid(c): _source(c) for c in (src or {}).get("cells", [])}
    out = []
    for cell in _written_cells(released if released.get("cells") else (learner_nb or {}), auto):
        gid = _gid(cell)
        attempted = gid in mine and _attempted(mine[gid], rel.get(gid), text_stub, _stubs()[0])
        answer = rubric = None
        if reveal and attempted and gid in model:
            answer, rubric = _model_answer(model[gid])
        out.append(WrittenAnswer(gid, float(_nbg(cell).get("points", 0) or 0), attempted, answer, rubric))
    return out


#: Longest time one cell may run in the visible mode (the capstone's training cells need minutes).
VISIBLE_CELL_TIMEOUT = 600


def _visible(path: Path, report: CheckReport, why: str) -> CheckReport:
    """Run the notebook's cells in a fresh kernel (a copy, in a temporary folder) and report what
    each visible test cell said; no points are judged."""
    report.mode = SelfCheckMode.VISIBLE
    report.why = (why.rstrip(".") + ". So only the visible checks ran: the notebook's own test cells, run top to "
                  "bottom in a fresh kernel. They do not judge by-hand numbers or hidden inputs and award no "
                  "points here; your points come when your work is graded.")
    nb_json = _read_json(path)
    if not isinstance(nb_json, dict) or not isinstance(nb_json.get("cells"), list):
        report.notes.append(f"{path.name} is not a readable notebook (not notebook JSON); nothing could run. Open "
                            "it in Jupyter to see whether it is damaged, or start again from a fresh copy of the "
                            "exercise.")
        return report
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    code_stub, text_stub = _stubs()
    try:
        nb = nbformat.reads(json.dumps(nb_json), as_version=4)
        nbformat.validate(nb)
    except Exception as err:  # noqa: BLE001 - nbformat raises many kinds
        report.notes.append(f"{path.name} is not a valid notebook ({type(err).__name__}); nothing could run.")
        return report
    here = os.getcwd()
    tmp = tempfile.mkdtemp(prefix="attnlab-check-")
    try:
        os.chdir(tmp)
        client = NotebookClient(nb, timeout=VISIBLE_CELL_TIMEOUT, kernel_name="python3", allow_errors=True,
                                resources={"metadata": {"path": tmp}})
        try:
            # the kernel draws the by-hand variants and prints the learner id as the notebook would for
            # this learner: the id goes into the kernel's environment only, never into this process's
            client.execute(env={**os.environ, "ATTNLAB_LEARNER": report.learner})
        except (CellTimeoutError, DeadKernelError, RuntimeError) as err:
            report.notes.append(f"the run stopped early: {str(err).strip().splitlines()[0][:200]}")
        except Exception as err:  # noqa: BLE001 - a kernel that cannot start: one sentence, no traceback
            report.notes.append(f"the notebook could not be run here ({type(err).__name__}: "
                                f"{str(err).strip()[:200]}); run its cells in Jupyter instead.")
    finally:
        os.chdir(here)
        shutil.rmtree(tmp, ignore_errors=True)
    for test, answers in _items_of(nb):
        gid = _gid(test, "?")
        stub = _unattempted(answers, code_stub)
        outputs = test.get("outputs", [])
        error_out = next((o for o in outputs if o.get("output_type") == "error"), None)
        if stub and (error_out is not None or not outputs):
            report.items.append(ItemVerdict(gid, "not attempted",
                                            f"not attempted: answer cell '{stub}' still holds the stub"))
        elif error_out is not None:
            report.items.append(ItemVerdict(gid, "failed",
                                            f"{error_out.get('ename')}: {error_out.get('evalue')}"[:400]))
        elif test.get("execution_count") is None:
            report.items.append(ItemVerdict(gid, "failed", "did not run (the run stopped before this cell)"))
        else:
            text = " ".join(_source_text(o) for o in outputs if o.get("output_type") == "stream").strip()
            report.items.append(ItemVerdict(gid, "passed", "visible check passed" + (f": {text[:300]}" if text
                                                                                  else "")))
    report.written = _written(nb_json, {}, None, set(), text_stub, False)
    return report


def _source_text(output) -> str:
    text = output.get("text", "")
    return ("".join(text) if isinstance(text, list) else str(text)).strip().replace("\n", " ")


# ------------------------------------------------------------------ from a notebook


def _running_notebook() -> str | None:
    """The path of the notebook this kernel runs, where the front end says it: Jupyter Server sets
    ``JPY_SESSION_NAME`` in the kernel's environment; VS Code sets ``__vsc_ipynb_file__``."""
    try:
        from IPython import get_ipython
        shell = get_ipython()
        vsc = shell.user_ns.get("__vsc_ipynb_file__") if shell is not None else None
    except ImportError:
        vsc = None
    for candidate in (vsc, os.environ.get("JPY_SESSION_NAME")):
        if not candidate or not candidate.endswith(".ipynb"):
            continue
        # an absolute path, else the server-relative path: the kernel starts in the notebook's folder
        for path in (candidate, os.path.basename(candidate)):
            if os.path.isfile(path):
                return os.path.abspath(path)
    return None


def check(notebook: str | os.PathLike | None = None, assignment: str | None = None) -> None:
    """Check ``notebook`` (default: the notebook this kernel runs, as last saved) and print the
    report, as ``attnlab check`` does.  Save the notebook first: the file on disk is what is checked.

    The check runs in a separate process (``python -m attnlab.cli check``), so the notebook's
    kernel and its variables are left alone.  Raises nothing: a problem is printed as one sentence.
    """
    path = notebook or _running_notebook()
    if path is None:
        print("attnlab check: cannot tell which notebook this is; pass its path, e.g. "
              "check('03_masks.ipynb') (the path is relative to the folder the kernel started in).")
        return
    argv = [sys.executable, "-m", "attnlab.cli", "check", os.path.abspath(path)]
    if assignment:
        argv += ["--assignment", assignment]
    res = subprocess.run(argv, capture_output=True, text=True)
    print((res.stdout + (res.stderr if res.returncode else "")).rstrip())
