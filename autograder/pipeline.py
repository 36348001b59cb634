"""``python -m autograder grade``: autograde a class folder, write feedback and a grades CSV.

Input layout (nbgrader's): ``SUBMISSIONS_DIR/submitted/<student>/<assignment>/*.ipynb``.
``SUBMISSIONS_DIR`` becomes the nbgrader course root for this run: ``source/`` is staged
from ``solutions/``, ``release/`` and the gradebook are (re)generated there, and the
results land in ``autograded/``, ``feedback/``, ``reports/`` and ``grades.csv``.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from .course import api_for, generate, load_config

_API = None
_ROOT = None


def _init_worker(root, db_url, slots, item_timeout=None):
    global _API, _ROOT
    os.environ["ATTNLAB_GRADER_SLOT"] = str(slots.get())
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _ROOT = root
    _API = api_for(root, db_url, item_timeout)


def _grade_one(args):
    assignment, student = args
    from .steps import report_path
    rp = report_path(_ROOT, assignment, student)
    if rp.exists():
        rp.unlink()
    t0 = time.perf_counter()
    try:
        res = _API.autograde(assignment, student, force=True, create=True)
        ok, err = res["success"], (res.get("error") or "") + "\n" + (res.get("log") or "")
    except Exception as e:  # noqa: BLE001 - one bad submission must not stop the class
        ok, err = False, f"{type(e).__name__}: {e}"
    rep = json.loads(rp.read_text()) if rp.exists() else None
    if rep is None or (not ok and rep.get("status") != "error"):
        rep = {"student": student, "assignment": assignment, "status": "error",
               "reason": _reason(err), "items": {}, "flags": []}
        rp.parent.mkdir(parents=True, exist_ok=True)
        rp.write_text(json.dumps(rep, indent=1))
    rep["seconds"] = time.perf_counter() - t0
    return rep


def _reason(log: str) -> str:
    """The most useful line of an nbgrader failure log."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if "SubmissionError" in ln:
            return ln.split("SubmissionError:", 1)[-1].strip()
    for ln in reversed(lines):
        if "NotJSONError" in ln or "JSONDecodeError" in ln or "Notebook does not appear" in ln:
            return "the notebook file is not valid notebook JSON (it was corrupted); re-download and resubmit"
    for ln in reversed(lines):
        if ("Error" in ln or "error" in ln) and "Traceback" not in ln and "see the error log" not in ln:
            return ln[:300]
    return lines[-1][:300] if lines else "unknown error"


@dataclass
class Summary:
    reports: list[dict] = field(default_factory=list)
    wall_s: float = 0.0
    csv: Path | None = None

    @property
    def graded(self):
        return [r for r in self.reports if r["status"] in ("graded", "flagged")]

    @property
    def failed(self):
        return [r for r in self.reports if r["status"] == "error"]

    @property
    def flagged(self):
        return [r for r in self.reports if r["status"] == "flagged"]

    def text(self) -> str:
        out = [f"graded {len(self.graded)}, failed {len(self.failed)}, flagged for review "
               f"{len(self.flagged)} (of {len(self.reports)} submissions, {self.wall_s:.1f} s)"]
        for r in self.failed:
            out.append(f"  FAILED  {r['student']}: {r.get('reason')}")
        for r in self.flagged:
            for f in r["flags"][:3]:
                out.append(f"  FLAGGED {r['student']}: {f}")
        if self.csv:
            out.append(f"grades: {self.csv}")
        return "\n".join(out)


def grade(submissions_dir, assignment: str, db_url: str | None = None, jobs: int = 2,
          feedback: bool = True, csv_path=None, progress: bool = True,
          item_timeout: float | None = None) -> Summary:
    """Autograde every ``submitted/*/<assignment>`` under ``submissions_dir``."""
    from .sandbox import SandboxUnavailable, sandbox_support
    reason = sandbox_support()
    if reason:
        raise SandboxUnavailable(f"cannot grade untrusted notebooks here: {reason}")
    t0 = time.perf_counter()
    root = os.path.abspath(submissions_dir)
    generate(root, assignment, db_url)
    students = sorted(p.parent.name for p in Path(root, "submitted").glob(f"*/{assignment}") if p.is_dir())
    summary = Summary()
    ctx = mp.get_context("fork")
    slots = ctx.Queue()
    for i in range(jobs):
        slots.put(i)
    tasks = [(assignment, s) for s in students]
    with ctx.Pool(max(1, min(jobs, len(tasks) or 1)), initializer=_init_worker,
                  initargs=(root, db_url, slots, item_timeout), maxtasksperchild=None) as pool:
        it = pool.imap_unordered(_grade_one, tasks)
        if progress:
            from tqdm import tqdm
            it = tqdm(it, total=len(tasks), desc=f"grading {assignment}", unit="sub")
        for rep in it:
            summary.reports.append(rep)
    summary.reports.sort(key=lambda r: r["student"])
    api = api_for(root, db_url)
    if feedback and summary.graded:
        res = api.generate_feedback(assignment, force=True)
        if not res["success"]:
            raise RuntimeError(f"generate_feedback failed: {res.get('error')}")
    summary.csv = export(root, assignment, db_url, csv_path)
    summary.wall_s = time.perf_counter() - t0
    return summary


def export(root, assignment, db_url=None, csv_path=None) -> Path:
    from nbgrader.api import Gradebook
    from .export import AttnlabCsvExport
    cfg = load_config(root, db_url)
    dest = Path(csv_path or Path(root) / "grades.csv")
    plugin = AttnlabCsvExport(config=cfg, course_root=root, to=str(dest), assignment=[assignment])
    with Gradebook(cfg.CourseDirectory.db_url, "attnlab") as gb:
        plugin.export(gb)
    return dest
