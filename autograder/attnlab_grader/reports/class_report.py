"""``python -m attnlab_grader report COURSE --assignment A``: the instructor's view of the class.

Reads what ``grade`` wrote -- ``COURSE/reports/<A>/<student>.json`` (one per submission:
``status``, ``items``: each test cell's :class:`attnlab_grader.judging.verdict.Verdict`,
``flags``, ``reason``) and, when present, ``COURSE/grades.csv`` -- and renders one
self-contained HTML page, ``COURSE/reports/<A>/class.html``:

* the score distribution of the class and, per item, how many students earned it, made a
  **named mistake** (a mistake the grader recognised), were wrong otherwise, or were not graded;
* per item, the named mistakes ranked by how many students made them, and the other kinds of
  failure (timed out, wrong shape, stub left, ...), with the students concerned;
* the submissions flagged for review and those that could not be graded, with the reasons;
* where the class stands on the course's skills (the ``attnlab.practice`` skill of every by-hand
  item, the function each code item asks for) for this assignment and for every assignment
  graded in ``COURSE`` so far.

Figures are matplotlib PNGs embedded as ``data:`` URIs (the file can be mailed or opened from
JupyterLab's file browser).  Every string a student controls -- ids, messages that quote their
code's exceptions, flags -- is HTML-escaped; figures only carry item ids and mistake names,
which come from the course's ``grading.py`` and the misconception catalogue.
"""
from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from attnlab_grader.judging.verdict import NAMED_MISTAKE, PASSED, UNCLASSIFIED, Verdict
from attnlab_grader.records.grade_report import read_reports

#: Outcome of one (student, item): earned, named mistake, other wrong answer, not graded.
OUTCOMES = ("earned", "named mistake", "other failure", "not graded")
#: Okabe-Ito colours (readable with every common colour-vision deficiency), one per outcome.
COLOURS = {"earned": "#009E73", "named mistake": "#E69F00", "other failure": "#D55E00",
           "not graded": "#BBBBBB"}

class ReportError(RuntimeError):
    """Nothing to report on (no graded submissions for the assignment); the message says why."""


# ----------------------------------------------------------------------------- reading
def named_mistake(verdict: Verdict) -> str | None:
    """The name of the mistake the grader recognised in one report item, or ``None``.

    Reads the verdict's field ``mistake`` (:class:`attnlab_grader.judging.verdict.Verdict`, set where the
    judgement was made), shown by its catalogue title when it names a catalogued misconception.  The message
    text is never read: an item without the field names no mistake.
    """
    if verdict.ok or not verdict.mistake or not verdict.mistake.strip():
        return None
    return _misconception_label(verdict.mistake.strip())


def _misconception_label(name: str) -> str:
    try:
        from attnlab.practice import MISCONCEPTIONS
    except ImportError:  # pragma: no cover - the grader always has attnlab
        return name
    m = MISCONCEPTIONS.get(name)
    return _strip_you(m.title) if m else name


def _strip_you(title: str) -> str:
    return title[4:] if title.lower().startswith("you ") else title


def failure_kind(verdict: Verdict) -> str:
    """The fixed name of why a failed item that is not a named mistake earned nothing: the verdict's
    kind code (:attr:`attnlab_grader.judging.verdict.Verdict.code`), as the grader wrote it.  An item written by a
    grader whose verdicts carried no kind is :data:`attnlab_grader.judging.verdict.UNCLASSIFIED` (re-grade to
    classify it); its message text is never parsed for a guess."""
    return UNCLASSIFIED.value if verdict.kind in (PASSED, NAMED_MISTAKE) else verdict.code


def unclassified(reports: list[dict]) -> list[str]:
    """Students whose report holds a failed item without a verdict ``kind`` (written by an older
    grader), sorted; :func:`build` turns them into one line of the page's problems."""
    return sorted({str(rep["student"]) for rep in reports if rep.get("status") != "error"
                   for v in rep["items"].values() if not v.ok and v.kind is UNCLASSIFIED})


def _read_grades(course: Path, assignment: str, csv_path: Path | None) -> dict[str, dict]:
    """``{student: grades.csv row}`` for ``assignment`` (empty when there is no CSV)."""
    candidates = [csv_path] if csv_path else [course / "grades.csv", course / f"grades-{assignment}.csv"]
    rows: dict[str, dict] = {}
    for path in candidates:
        if path is None or not Path(path).is_file():
            continue
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                if row.get("assignment") in (assignment, None) and row.get("student_id"):
                    rows[row["student_id"]] = row
    return rows


@dataclass
class Skill:
    """What one item practises: an ``attnlab.practice`` skill, or writing one function."""

    key: str
    title: str
    lesson: str = ""


def _item_skills(course: Path, assignment: str, solutions=None) -> tuple[dict[str, Skill], list[str], str | None]:
    """``({grade_id: Skill}, [grade_ids in the spec's order], problem)`` from the set's grading.py.

    Looks in ``COURSE/source/<A>/grading.py`` (what ``grade`` staged), then the course repository's
    ``solutions/<A>/grading.py`` (:func:`attnlab_grader.records.course.solutions_dir` of ``solutions``).  A spec
    that cannot be loaded leaves the map empty and says why.
    """
    from attnlab_grader.records.course import solutions_dir
    folder = solutions_dir(solutions)
    from attnlab_grader.judging.spec import load_spec
    for path in (course / "source" / assignment / "grading.py", folder / assignment / "grading.py"):
        if not path.is_file():
            continue
        try:
            spec = load_spec(path)
        except Exception as err:  # noqa: BLE001 - the report still renders without skills
            return {}, [], f"{path} could not be loaded ({type(err).__name__}: {err})"
        skills, order = {}, []
        for check in spec.checks:
            order.append(check.grade_id)
            skills[check.grade_id] = _skill_of(check, assignment)
        return skills, order, None
    return {}, [], f"no grading.py for {assignment} (looked in {course / 'source'} and {folder})"


def _skill_of(check, assignment: str) -> Skill:
    name = getattr(check, "skill", None)
    if name:
        try:
            from attnlab.practice import get_skill
            s = get_skill(name)
            return Skill(name, s.title, s.lesson)
        except Exception:  # noqa: BLE001 - an unknown skill name is still a skill
            return Skill(name, name)
    target = getattr(check, "target", None) or check.grade_id
    return Skill(f"code:{target}", f"writes {target}()", assignment[:2])


# ----------------------------------------------------------------------------- the model
@dataclass
class ItemStats:
    """One item across the class: who earned it, made a named mistake, failed otherwise or was not
    graded (``outcomes``), the named mistakes and the other failures (by verdict kind) with who."""
    grade_id: str
    max_points: float = 0.0
    skill: Skill | None = None
    outcomes: dict[str, list[str]] = field(default_factory=lambda: {o: [] for o in OUTCOMES})
    mistakes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    failures: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))

    def ranked_mistakes(self) -> list[tuple[str, list[str]]]:
        """``[(mistake, students)]``, most frequent first (then by name)."""
        return sorted(self.mistakes.items(), key=lambda kv: (-len(kv[1]), kv[0]))

    def ranked_failures(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """``[(kind, [(student, message)])]``, most frequent first (then by kind)."""
        return sorted(self.failures.items(), key=lambda kv: (-len(kv[1]), kv[0]))


@dataclass
class ClassReport:
    """Everything the page shows, computed from the reports (see :func:`build`)."""

    course: Path
    assignment: str
    reports: list[dict]
    grades: dict[str, dict]
    items: list[ItemStats]
    problems: list[str]
    skills_note: str | None
    course_skills: dict[str, dict]
    generated: str

    @property
    def graded(self) -> list[dict]:
        """Reports of submissions that were graded (status not ``error``)."""
        return [r for r in self.reports if r["status"] != "error"]

    @property
    def flagged(self) -> list[dict]:
        """Graded reports held for review (status ``flagged`` or with flags)."""
        return [r for r in self.reports if r["status"] == "flagged" or (r["flags"] and r["status"] != "error")]

    @property
    def back_to_manual(self) -> list[dict]:
        """Reports of submissions whose answer changed after a person graded it: those items wait
        for manual grading again (``back_to_manual``; :mod:`attnlab_grader.steps.answers`)."""
        return [r for r in self.reports if r.get("back_to_manual")]

    @property
    def errored(self) -> list[dict]:
        """Reports of submissions that could not be graded."""
        return [r for r in self.reports if r["status"] == "error"]

    @property
    def max_score(self) -> float:
        """Points of the assignment's items (the largest ``max_points`` seen per item, summed)."""
        return sum(i.max_points for i in self.items)

    def ranked_mistakes(self) -> list[tuple[str, str, list[str]]]:
        """``(grade_id, mistake, students)`` over all items, most frequent first."""
        rows = [(i.grade_id, name, who) for i in self.items for name, who in i.mistakes.items()]
        return sorted(rows, key=lambda r: (-len(r[2]), r[0], r[1]))


def build(course, assignment: str, csv_path=None, solutions=None) -> ClassReport:
    """Read ``COURSE/reports/<assignment>/*.json`` (and grades.csv) into a :class:`ClassReport`.

    Raises :class:`ReportError` when the assignment has no report files (not graded yet).
    """
    course = Path(course)
    folder = course / "reports" / assignment
    reports, problems = read_reports(course, assignment)
    if not reports:
        raise ReportError(f"no grading reports in {folder}: grade the assignment first "
                          f"(python -m attnlab_grader grade {course} --assignment {assignment})")
    skills, order, skills_note = _item_skills(course, assignment, solutions)
    items = _items(reports, order, skills)
    old = unclassified(reports)
    if old:
        problems = [*problems, f"{len(old)} report(s) ({', '.join(old[:10])}{', ...' if len(old) > 10 else ''}) were "
                    "written by an older grader whose verdicts carry no kind: their failures are listed as "
                    f"'{UNCLASSIFIED}'; grade the assignment again to classify them"]
    return ClassReport(course=course, assignment=assignment, reports=reports,
                       grades=_read_grades(course, assignment, Path(csv_path) if csv_path else None),
                       items=items, problems=problems, skills_note=skills_note,
                       course_skills=_course_skills(course, solutions),
                       generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


def _items(reports: list[dict], order: list[str], skills: dict[str, Skill]) -> list[ItemStats]:
    """Items that some report has, in the spec's order (then first seen); the spec's items when
    no report has any (every submission errored)."""
    present: list[str] = []
    for rep in reports:
        present += [g for g in rep["items"] if g not in present]
    seen = [g for g in order if g in present] + [g for g in present if g not in order] if present else list(order)
    stats = {g: ItemStats(g, skill=skills.get(g)) for g in seen}
    for rep in reports:
        for gid, v in rep["items"].items():
            stats[gid].max_points = max(stats[gid].max_points, v.max_points)
    for rep in reports:
        student = rep["student"]
        for gid, st in stats.items():
            it = rep["items"].get(gid)
            if rep["status"] == "error" or it is None:
                st.outcomes["not graded"].append(student)
            elif it.ok:
                st.outcomes["earned"].append(student)
            elif (name := named_mistake(it)) is not None:
                st.outcomes["named mistake"].append(student)
                st.mistakes[name].append(student)
            else:
                st.outcomes["other failure"].append(student)
                st.failures[failure_kind(it)].append((student, it.message))
    return list(stats.values())


def _course_skills(course: Path, solutions=None) -> dict[str, dict]:
    """``{skill key: {"title", "right", "total", "assignments"}}`` over every graded assignment."""
    out: dict[str, dict] = {}
    root = course / "reports"
    if not root.is_dir():
        return out
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        reports, _ = read_reports(course, folder.name)
        if not reports:
            continue
        skills, order, _ = _item_skills(course, folder.name, solutions)
        for st in _items(reports, order, skills):
            skill = st.skill or Skill(f"item:{st.grade_id}", st.grade_id)
            rec = out.setdefault(skill.key, {"title": skill.title, "right": 0, "total": 0, "assignments": set()})
            rec["right"] += len(st.outcomes["earned"])
            rec["total"] += sum(len(st.outcomes[o]) for o in OUTCOMES[:3])
            rec["assignments"].add(folder.name)
    return out
