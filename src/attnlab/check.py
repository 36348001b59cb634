"""``attnlab check NOTEBOOK``: grade your own copy of an exercise notebook with the grader's judgement.

In a clone of the course (self-paced), the check runs the autograder itself on a private,
temporary nbgrader course (:func:`autograder.pipeline.grade`, in a folder only you can read,
removed afterwards): the same grading spec (``solutions/<set>/grading.py``), the same sandbox, the
same fresh random trial inputs compared with the ``attnlab.nn`` reference, your own by-hand numbers
(from your learner id) and the same named mistakes.  It reads your notebook as last saved, never
writes to it or to the clone, and needs no course folder of an instructor.

It prints one line per autograded item (the points, the grader's message and the named mistake),
then the written answers apart (graded by a person: after you have attempted one, its model answer
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

import enum
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from traitlets import CaselessStrEnum, Dict
from traitlets.config import Configurable

__all__ = ["SelfCheckMode", "SelfCheck", "ItemVerdict", "WrittenAnswer", "CheckReport", "CheckError",
           "load_policy", "find_assignment", "run_check", "check"]


class CheckError(ValueError):
    """The notebook cannot be checked at all (missing file, unknown exercise set); the message is
    one sentence saying what was wrong and what to do."""


class SelfCheckMode(str, enum.Enum):
    """What ``attnlab check`` may do for an exercise set."""

    FULL = "full"        #: the grader's own checks, hidden trial inputs, by-hand numbers, model answers
    VISIBLE = "visible"  #: only the notebook's visible test cells; nothing hidden is used or shown
    OFF = "off"          #: self-checking switched off by the instructor


class SelfCheck(Configurable):
    """The instructor's setting for ``attnlab check`` (``c.SelfCheck.*`` in the deployment's
    nbgrader configuration; see the module docstring)."""

    default = CaselessStrEnum([m.value for m in SelfCheckMode], default_value=SelfCheckMode.FULL.value,
                              help="Mode for every exercise set not named in `assignments`: 'full', 'visible' "
                           "or 'off'.").tag(config=True)
    assignments = Dict(value_trait=CaselessStrEnum([m.value for m in SelfCheckMode]), default_value={},
                       help="Per exercise set, e.g. {'09_capstone': 'off'}; wins over `default`.").tag(config=True)

    def mode_for(self, assignment: str) -> SelfCheckMode:
        """The mode for ``assignment`` (e.g. ``"03_masks"``)."""
        return SelfCheckMode(str(self.assignments.get(assignment, self.default)).lower())


def _system_config_dirs() -> list[str]:
    """The Jupyter configuration folders only an administrator writes, lowest priority first:
    ``/etc/jupyter``-like system folders, then ``{sys.prefix}/etc/jupyter`` (the environment's)."""
    from jupyter_core.paths import ENV_CONFIG_PATH, SYSTEM_CONFIG_PATH
    return list(reversed(SYSTEM_CONFIG_PATH)) + list(reversed(ENV_CONFIG_PATH))


def load_policy(config_dirs: list[str] | None = None) -> SelfCheck:
    """The :class:`SelfCheck` setting from the ``nbgrader_config.py``/``.json`` files in
    ``config_dirs`` (default: the system-wide Jupyter configuration folders), later folders winning.

    A file that cannot be read is skipped with a note on stderr (nbgrader warns about it too); a
    mode that is not ``full``/``visible``/``off`` raises :class:`CheckError`.
    """
    from traitlets.config import Config
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader
    merged = Config()
    for folder in _system_config_dirs() if config_dirs is None else config_dirs:
        for loader, name in ((JSONFileConfigLoader, "nbgrader_config.json"),
                             (PyFileConfigLoader, "nbgrader_config.py")):
            if os.path.isfile(os.path.join(folder, name)):
                try:
                    merged.merge(loader(name, path=folder).load_config())
                except Exception as err:  # noqa: BLE001 - a broken deployment file must not stop the check
                    print(f"attnlab check: ignoring {os.path.join(folder, name)}: {err}", file=sys.stderr)
    from traitlets import TraitError
    try:
        policy = SelfCheck(config=merged)
        policy.mode_for("")
    except (TraitError, ValueError) as err:
        raise CheckError(f"the course's self-check setting (c.SelfCheck in nbgrader_config) is not valid ({err}); "
                         "ask your instructor: each mode must be 'full', 'visible' or 'off'.") from None
    return policy


# ------------------------------------------------------------------ results


@dataclass
class ItemVerdict:
    """One autograded item (a test cell) as the check judged it.

    ``status``: ``"passed"``, ``"failed"`` or ``"not attempted"`` (its answer cells still hold the
    released stub); ``points``/``max_points``: ``None`` in the ``visible`` mode (not judged);
    ``mistakes``: names from ``attnlab.practice.misconceptions.MISCONCEPTIONS``."""

    grade_id: str
    status: str
    message: str
    points: float | None = None
    max_points: float | None = None
    mistakes: list[str] = field(default_factory=list)


@dataclass
class WrittenAnswer:
    """A written answer, graded by a person.  ``model_answer``/``rubric`` are filled only in the
    ``full`` mode and only once ``attempted`` (a non-empty answer that differs from the stub)."""

    grade_id: str
    max_points: float
    attempted: bool
    model_answer: str | None = None
    rubric: str | None = None


@dataclass
class CheckReport:
    """What one ``attnlab check`` found; :meth:`text` is what it prints."""

    notebook: str
    assignment: str
    learner: str
    mode: SelfCheckMode
    why: str = ""  #: why this mode (visible: what was not run and why; off: who switched it off)
    items: list[ItemVerdict] = field(default_factory=list)
    written: list[WrittenAnswer] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  #: the grader's flags and notes, refusals

    @property
    def score(self) -> float:
        """Points earned on the items the check could judge."""
        return sum(i.points or 0.0 for i in self.items)

    @property
    def max_score(self) -> float:
        """Points of the items the check could judge (0 in the ``visible`` and ``off`` modes)."""
        return sum(i.max_points or 0.0 for i in self.items)

    def to_json(self) -> str:
        data = asdict(self)
        data["mode"] = self.mode.value
        data["score"], data["max_score"] = self.score, self.max_score
        return json.dumps(data, indent=1)

    def text(self) -> str:
        """The printed report; its last line is ``X / Y points`` (except in the ``off`` mode)."""
        out = [f"{self.notebook}: exercise set {self.assignment}, learner id {self.learner!r}"]
        if self.mode is SelfCheckMode.OFF:
            out.append(self.why)
            return "\n".join(out)
        if self.mode is SelfCheckMode.FULL:
            out.append("Checked with the grader's own checks: your functions ran in its sandbox on fresh random "
                       "inputs and were compared with the reference; by-hand numbers are your own.")
        else:
            out.append(self.why)
        out.append("")
        width = max([len(i.grade_id) for i in self.items] + [4])
        for item in self.items:
            mark = {"passed": "✔", "failed": "✘", "not attempted": "–"}.get(item.status, "?")
            pts = f"{_num(item.points)} / {_num(item.max_points)}" if item.max_points is not None else item.status
            line = f"{mark} {item.grade_id:<{width}}  {pts:>9}  {item.message}"
            if item.mistakes:
                line += f"  [mistake: {', '.join(item.mistakes)}]"
            out.append(line)
        for note in self.notes:
            out.append(f"! {note}")
        if self.written:
            out += ["", "Written answers (graded by your instructor, not counted in the points below):"]
            for w in self.written:
                head = f"  {w.grade_id} ({_num(w.max_points)} points): "
                if not w.attempted:
                    out.append(head + "not attempted yet: write your answer in its cell, save, and check "
                               "again" + (" to see the model answer and the rubric." if self.mode is
                                          SelfCheckMode.FULL else "."))
                elif w.model_answer is None:
                    out.append(head + "answered; your instructor grades it (no model answer is shown here).")
                else:
                    out.append(head + "answered. Compare it with the model answer and the rubric:")
                    out += ["    Model answer: " + _indent(w.model_answer, 4)]
                    out += ["    Rubric: " + _indent(w.rubric or "(none given for this answer)", 4)]
        out += ["", f"{_num(self.score)} / {_num(self.max_score)} points"]
        return "\n".join(out)


def _num(x: float | None) -> str:
    x = x or 0.0
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _indent(text: str, n: int) -> str:
    return text.strip().replace("\n", "\n" + " " * n)


# ------------------------------------------------------------------ finding the notebook's set


def _known_sets() -> list[str]:
    from attnlab.course import exercise_sets
    names = list(exercise_sets())
    try:
        from autograder.course import assignments
        names += [a for a in assignments() if a not in names]
    except Exception:  # noqa: BLE001 - no grader around: the course's own sets
        pass
    return names


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def find_assignment(path: str | os.PathLike, given: str | None = None) -> str:
    """The exercise set ``path`` belongs to: ``given`` if set (must be a known set), else the set
    its file name starts with (``03_masks.ipynb``, ``03_masks (1).ipynb``), else the
    ``ASSIGNMENT = "..."`` its setup cell assigns.  Raises :class:`CheckError` when none fits."""
    known = _known_sets()
    if given:
        if given not in known:
            raise CheckError(f"{given!r} is not an exercise set of this course; use one of {', '.join(known)}.")
        return given
    stem = Path(path).name
    for name in sorted(known, key=len, reverse=True):
        if stem.startswith(name):
            return name
    nb = _read_json(Path(path))
    cells = nb.get("cells", []) if isinstance(nb, dict) else []
    for cell in cells if isinstance(cells, list) else []:
        src = cell.get("source", "") if isinstance(cell, dict) else ""
        src = "".join(src) if isinstance(src, list) else str(src)
        m = re.search(r'^ASSIGNMENT\s*=\s*["\'](\w+)["\']', src, flags=re.M)
        if m and m.group(1) in known:
            return m.group(1)
    raise CheckError(f"cannot tell which exercise set {Path(path).name} is (its name does not start with one "
                     f"and its setup cell names none); pass --assignment, one of {', '.join(known)}.")


# ------------------------------------------------------------------ reading notebook cells


def _nbg(cell) -> dict:
    meta = cell.get("metadata", {}) if isinstance(cell, dict) else {}
    nbg = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    return nbg if isinstance(nbg, dict) else {}


def _gid(cell, missing: str = "") -> str:
    """The cell's nbgrader ``grade_id`` as text (``missing`` when it has none)."""
    gid = _nbg(cell).get("grade_id")
    return str(gid) if gid is not None else missing


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _stubs() -> tuple[str, str]:
    """The code and text stubs nbgrader writes into released answer cells (the grader's config)."""
    try:
        from traitlets.config.loader import PyFileConfigLoader

        from autograder.course import CONFIG_FILE
        cfg = PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config()
        return cfg.ClearSolutions.code_stub["python"], cfg.ClearSolutions.text_stub
    except Exception:  # noqa: BLE001 - nbgrader's own defaults
        return "# YOUR CODE HERE\nraise NotImplementedError()", "YOUR ANSWER HERE"


def _items_of(nb: dict) -> list[tuple[dict, list[dict]]]:
    """``[(test cell, [its answer cells])]``: each autograded test cell with the answer cells
    between the previous test cell and it."""
    out, pending = [], []
    for cell in nb.get("cells", []):
        meta = _nbg(cell)
        if meta.get("solution") and not meta.get("grade"):
            pending.append(cell)
        elif meta.get("grade") and not meta.get("solution") and cell.get("cell_type") == "code":
            out.append((cell, pending))
            pending = []
    return out


def _unattempted(answers: list[dict], code_stub: str) -> str | None:
    """The name of the first answer cell that still holds the released code stub, else None."""
    stub_line = code_stub.strip().splitlines()[-1].strip()
    for cell in answers:
        lines = [ln.strip() for ln in _source(cell).splitlines()]
        if stub_line in lines and code_stub.strip().splitlines()[0].strip() in lines:
            return _nbg(cell).get("grade_id", "?")
    return None


def _written_cells(nb: dict, auto: set[str]) -> list[dict]:
    return [c for c in nb.get("cells", []) if _nbg(c).get("grade") and _nbg(c).get("solution")
            and _gid(c) not in auto]


def _attempted(text: str, released: str | None, text_stub: str, code_stub: str = "") -> bool:
    """A written answer is attempted when it no longer holds a stub (text, or code for an answer
    written in a code cell) and differs from the released cell (the question alone is not an attempt)."""
    def norm(s):
        return " ".join(s.split())
    if text_stub in text or not norm(text) or (code_stub and norm(code_stub) in norm(text)):
        return False
    if released is not None and norm(text) in (norm(released), norm(released.replace(text_stub, ""))):
        return False
    return True


def _model_answer(source_cell_text: str) -> tuple[str, str | None]:
    """``(model answer, rubric)`` from a source notebook's written-answer cell: the text between
    ``### BEGIN SOLUTION`` and ``### END SOLUTION``; a paragraph starting ``**Rubric`` in it is the
    rubric."""
    m = re.search(r"#+ *BEGIN SOLUTION\s*\n(.*?)\n\s*#+ *END SOLUTION", source_cell_text, flags=re.S)
    body = (m.group(1) if m else source_cell_text).strip()
    parts = re.split(r"\n\s*\n(?=\*\*Rubric)", body, maxsplit=1)
    if len(parts) == 2:
        return parts[0].strip(), re.sub(r"^\*\*Rubric[^*]*\*\*\s*", "", parts[1].strip())
    return body, None


# ------------------------------------------------------------------ the two ways of checking


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
    from autograder.course import solutions_dir
    folder = solutions_dir()
    spec = folder / name / "grading.py"
    if not os.access(spec, os.R_OK) or not os.access(folder / name / f"{name}.ipynb", os.R_OK):
        return _visible(path, report, f"This environment has no grading spec for {name} (a graded class keeps "
                                      "them with the instructor).")
    from autograder.sandbox import SandboxUnavailable, sandbox_support
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
    from autograder.pipeline import grade
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
        rep = summary.reports[0] if summary.reports else {"status": "error", "reason": "nothing was graded"}
        released = _read_json(root / "release" / name / f"{name}.ipynb") or {}
        learner_nb = _read_json(path)
        learner_nb = learner_nb if isinstance(learner_nb, dict) and isinstance(learner_nb.get("cells"), list) else None
        items_by_id = rep.get("items") or {}
        if rep.get("status") == "error":  # the whole notebook was refused: say why once
            report.notes.append(f"the grader would not grade this notebook: {rep.get('reason') or 'no reason was given'}")
        answers_of = {_gid(t): a for t, a in _items_of(learner_nb or {"cells": []})}
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
        report.notes += [f"when graded: {f}" for f in rep.get("flags", [])] + list(rep.get("notes", []))
        report.written = _written(learner_nb, released, solutions / name / f"{name}.ipynb", set(items_by_id)
                                  | {_gid(t) for t, _ in _items_of(released)}, text_stub, True)
        return report
    finally:
        os.chdir(here)
        shutil.rmtree(root, ignore_errors=True)


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
            client.execute()
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
