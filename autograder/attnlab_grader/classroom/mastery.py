"""The class's practice and mastery, from what students submit -- never from their homes.

A student's practice records (:class:`attnlab.practice.record.SkillRecord`, kept by
:class:`attnlab.practice.store.ProgressStore` in their own home) reach the instructor only inside
a submission: before submitting, the student runs ``attnlab practice-attach NOTEBOOK`` (the learner's
library, :mod:`attnlab.practice.submission`, the summary's one home), which reads *their own* progress
file and writes a summary into the notebook's metadata (``metadata.attnlab_practice``; the answer cells
are untouched).  nbgrader keeps notebook metadata, so the summary arrives in
``COURSE/autograded/<student>/<assignment>/``, the checked copy that was graded; the instructor's side
reads nothing else.

The summary is what the student's own engine recorded (self-reported, like any practice log:
it never counts towards a grade).  Per skill: mastered or not, attempts, correct answers, the
time of the last answer, and how often each named mistake (the misconception catalogue,
:mod:`attnlab.practice.misconceptions`) was made.  Per lesson and exercise set: the minutes on task
the student's kernel measured (:mod:`attnlab.practice.time_on_task`; optional in the summary).

``attnlab-grade class-mastery COURSE [--stale-days N]`` renders ``COURSE/reports/class-mastery.html``
(and ``.json``): per skill, how many students practised it and mastered it; the most frequent
named mistakes in practice; the distribution of time on task per lesson and exercise set (learners,
quartiles and median, in minutes); and the students with no practice progress for N days (or none
submitted at all).  ``--times-out FILE`` also writes the medians in the form the course table reads
(:func:`attnlab.course.measured_minutes`): copy that file into ``src/attnlab/`` to publish them.
"""
from __future__ import annotations

import datetime as dt
import html
import json
import os
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from attnlab.practice.submission import KEY, valid_summary


class MasteryError(ValueError):
    """A course whose practice cannot be shown; nothing was changed."""


def submitted_summaries(root: str | os.PathLike) -> tuple[dict[str, dict], set[str]]:
    """``({student: newest valid summary}, {every student who submitted})`` from the graded copies
    ``COURSE/autograded/*/*/*.ipynb`` (students: those with a folder in ``submitted/`` or there)."""
    base = Path(root) / "autograded"
    found: dict[str, dict] = {}
    sub = Path(root) / "submitted"
    students: set[str] = ({p.name for p in sub.iterdir() if p.is_dir() and p.name.isprintable()}
                          if sub.is_dir() else set())
    for path in sorted(base.glob("*/*/*.ipynb")) if base.is_dir() else []:
        student = path.parent.parent.name
        students.add(student)
        try:
            meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get(KEY)
        except (OSError, ValueError, AttributeError):
            continue
        if valid_summary(meta) and (student not in found or meta.get("exported_at", 0) > found[student].get("exported_at", 0)):
            found[student] = meta
    return found, students


@dataclass
class ClassMastery:
    """What the page shows: ``skills`` {skill: {practised, mastered, attempts, correct}};
    ``mistakes`` [(name, title, count, students)] most frequent first; ``stale`` [(student,
    days since the last answer or None: no practice submitted)]; ``times`` {unit: {learners, p25,
    median, p75}} minutes on task of the learners who recorded any for that lesson or exercise set."""
    students: int
    skills: dict[str, dict] = field(default_factory=dict)
    times: dict[str, dict] = field(default_factory=dict)
    mistakes: list[tuple] = field(default_factory=list)
    stale: list[tuple] = field(default_factory=list)


def class_mastery(root: str | os.PathLike, stale_days: float = 7.0, now: float | None = None) -> ClassMastery:
    """Aggregate the submitted summaries of the course at ``root``."""
    from attnlab.practice.misconceptions import get_misconception
    now = time.time() if now is None else now
    summaries, students = submitted_summaries(root)
    out = ClassMastery(students=len(students))
    counts: Counter = Counter()
    who: dict[str, set] = {}
    for student, summary in summaries.items():
        for name, s in summary["skills"].items():
            agg = out.skills.setdefault(name, {"practised": 0, "mastered": 0, "attempts": 0, "correct": 0})
            agg["practised"] += s["attempts"] > 0
            agg["mastered"] += bool(s.get("mastered"))
            agg["attempts"] += s["attempts"]
            agg["correct"] += s["correct"]
            for m, n in s["mistakes"].items():
                counts[m] += n
                who.setdefault(m, set()).add(student)
    spent: dict[str, list[float]] = {}
    for summary in summaries.values():
        for unit, minutes in (summary.get("time_on_task") or {}).items():
            if minutes > 0:
                spent.setdefault(unit, []).append(float(minutes))
    out.times = {unit: _distribution(values) for unit, values in sorted(spent.items())}
    for m, n in counts.most_common():
        try:
            title = get_misconception(m).title
        except KeyError:
            title = m
        out.mistakes.append((m, title, n, len(who[m])))
    for student in sorted(students):
        summary = summaries.get(student)
        last = max((s["last_answer_at"] for s in summary["skills"].values() if s.get("last_answer_at")),
                   default=None) if summary else None
        if last is None:
            out.stale.append((student, None))
        elif now - last > stale_days * 86400:
            out.stale.append((student, round((now - last) / 86400, 1)))
    return out


def _distribution(values: list[float]) -> dict[str, float | int]:
    """``{learners, p25, median, p75}`` of ``values`` (minutes; quartiles by ``statistics.quantiles``,
    inclusive method; with one learner all three are that learner's minutes)."""
    import statistics
    v = sorted(values)
    q = statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else [v[0]] * 3
    return {"learners": len(v), "p25": round(q[0], 1), "median": round(statistics.median(v), 1),
            "p75": round(q[2], 1)}


def medians_document(cm: ClassMastery, now: float | None = None) -> dict[str, Any]:
    """The measured medians in the form :func:`attnlab.course.measured_minutes` reads:
    ``{"measured_at": "YYYY-MM-DD", "units": {unit: {"median": minutes, "learners": n}}}``."""
    stamp = dt.datetime.fromtimestamp(now if now is not None else time.time(), dt.timezone.utc)
    return {"measured_at": f"{stamp:%Y-%m-%d}",
            "units": {u: {"median": d["median"], "learners": d["learners"]} for u, d in cm.times.items()}}


def write(root: str | os.PathLike, stale_days: float = 7.0, now: float | None = None) -> tuple[Path, ClassMastery]:
    """Render ``reports/class-mastery.html`` and ``.json``; returns the HTML path and the :class:`ClassMastery`.

    ``stale_days``: a learner's progress older than this many days is marked stale; ``now``: the
    time to compare with, in seconds since the epoch (default: the current time).

    Raises:
        MasteryError: if the course at ``root`` has no graded submissions yet.
    """
    from attnlab.practice import get_skill
    cm = class_mastery(root, stale_days, now)
    if not cm.students:
        raise MasteryError(f"no graded submissions under {Path(root) / 'autograded'}; grade an assignment first")
    out = Path(root) / "reports"
    out.mkdir(parents=True, exist_ok=True)
    (out / "class-mastery.json").write_text(json.dumps(asdict(cm), indent=1))

    def title(name):
        try:
            return get_skill(name).title
        except KeyError:
            return name
    esc = html.escape
    skill_rows = "".join(
        f"<tr><td>{esc(title(n))} <small>({esc(n)})</small></td><td>{a['practised']}</td>"
        f"<td>{a['mastered']} of {cm.students} ({a['mastered'] / cm.students:.0%})</td>"
        f"<td>{(a['correct'] / a['attempts']) if a['attempts'] else 0:.0%}</td></tr>"
        for n, a in sorted(cm.skills.items()))
    mistake_rows = "".join(f"<tr><td>{esc(t)} <small>({esc(m)})</small></td><td>{n}</td><td>{s}</td></tr>"
                           for m, t, n, s in cm.mistakes[:15])
    time_rows = "".join(f"<tr><td>{esc(u)}</td><td>{d['learners']}</td><td>{d['p25']:g}</td><td>{d['median']:g}</td>"
                        f"<td>{d['p75']:g}</td></tr>" for u, d in cm.times.items())
    stale_rows = "".join(f"<li>{esc(s)}: " + ("no practice records submitted" if d is None
                                               else f"no practice for {d:g} days") + "</li>" for s, d in cm.stale)
    stamp = dt.datetime.fromtimestamp(now if now is not None else time.time(), dt.timezone.utc)
    page = (f"<!doctype html><meta charset='utf-8'><title>Class mastery</title><h1>Class mastery</h1>"
            f"<p>{cm.students} students with graded submissions; practice summaries as submitted with their "
            f"notebooks (self-reported; never part of a grade). {stamp:%Y-%m-%d %H:%M} UTC.</p>"
            f"<h2>Skills</h2><table border=1 cellpadding=4><tr><th>skill</th><th>practised by</th><th>mastered</th>"
            f"<th>answers right</th></tr>{skill_rows}</table>"
            f"<h2>Most frequent named mistakes in practice</h2><table border=1 cellpadding=4><tr><th>mistake</th>"
            f"<th>times</th><th>students</th></tr>{mistake_rows}</table>"
            f"<h2>Time on task (minutes)</h2><p>Measured in each student's own kernel (cells run, pauses over "
            f"10 minutes not counted) and submitted with the practice summary.</p>"
            + (f"<table border=1 cellpadding=4><tr><th>lesson or exercise set</th><th>learners</th><th>25 %</th>"
               f"<th>median</th><th>75 %</th></tr>{time_rows}</table>" if time_rows else
               "<p>No submitted summary holds any time on task yet.</p>") +
            f"<h2>No practice progress for {stale_days:g} days</h2><ul>{stale_rows or '<li>none</li>'}</ul>")
    (out / "class-mastery.html").write_text(page, encoding="utf-8")
    return out / "class-mastery.html", cm
