"""A learner's practice summary, attached to a submission (``attnlab practice-attach NOTEBOOK``).

A student's practice records (:class:`attnlab.practice.record.SkillRecord`, kept by
:class:`attnlab.practice.store.ProgressStore` in their own home) reach the instructor only inside a
submission: before submitting, the student runs ``attnlab practice-attach NOTEBOOK``, which reads
*their own* progress file and writes a summary into the notebook's metadata (``metadata.attnlab_practice``,
:data:`KEY`; the answer cells are untouched).  nbgrader keeps notebook metadata, so the summary arrives
with the graded copy, where the instructor's class view (``attnlab-grade class-mastery``,
``attnlab_grader.classroom.mastery``) reads it with :func:`valid_summary`.

The summary is what the student's own engine recorded (self-reported, like any practice log: it never
counts towards a grade).  Per skill: mastered or not, attempts, correct answers, the time of the last
answer, and how often each named mistake (:mod:`attnlab.practice.misconceptions`) was made.  Per lesson
and exercise set: the minutes on task the student's kernel measured (:mod:`attnlab.practice.time_on_task`;
optional in the summary).
"""
from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

#: the notebook metadata key of the summary
KEY = "attnlab_practice"
#: the summary's format version
SCHEMA = 1


class SummaryError(ValueError):
    """A notebook the summary cannot be attached to; nothing was changed."""


def summarise(records: dict, learner: str, now: float | None = None,
              minutes: dict[str, float] | None = None) -> dict[str, Any]:
    """The submitted summary of ``records`` (``{skill: SkillRecord}``) for ``learner``; ``minutes``:
    ``{unit: minutes on task}`` (:func:`attnlab.practice.time_on_task.minutes_by_unit`), left out when None."""
    skills = {}
    for name, r in sorted(records.items()):
        mistakes = Counter(h[3] for h in r.history if len(h) == 4 and h[3])
        last = max((float(h[0]) for h in r.history if h and isinstance(h[0], (int, float))), default=None)
        skills[name] = {"mastered": bool(r.mastered), "attempts": int(r.attempts), "correct": int(r.correct),
                        "last_answer_at": last, "mistakes": dict(sorted(mistakes.items()))}
    out: dict[str, Any] = {"schema": SCHEMA, "learner": learner,
                           "exported_at": now if now is not None else time.time(), "skills": skills}
    if minutes is not None:
        out["time_on_task"] = {str(u): float(m) for u, m in sorted(minutes.items())}
    return out


def valid_summary(summary: Any) -> bool:
    """Whether ``summary`` (a notebook's ``metadata.attnlab_practice``) has this format: the schema, every
    skill's counts as integers, and minutes on task as plausible numbers."""
    if not isinstance(summary, dict) or summary.get("schema") != SCHEMA or not isinstance(summary.get("skills"), dict):
        return False
    for s in summary["skills"].values():
        if not (isinstance(s, dict) and isinstance(s.get("attempts"), int) and isinstance(s.get("correct"), int)
                and isinstance(s.get("mistakes"), dict)
                and all(isinstance(k, str) and isinstance(v, int) for k, v in s["mistakes"].items())
                and (s.get("last_answer_at") is None or isinstance(s["last_answer_at"], (int, float)))):
            return False
    times = summary.get("time_on_task", {})
    return isinstance(times, dict) and all(isinstance(u, str) and isinstance(m, (int, float)) and not
                                           isinstance(m, bool) and 0 <= m < 100_000 for u, m in times.items())


def attach(notebook: str | os.PathLike, home: str | os.PathLike | None = None,
           learner: str | None = None) -> dict[str, Any]:
    """Write the summary of this learner's own progress into ``notebook``'s metadata (atomically; cells
    untouched).  Returns the summary.

    Raises:
        SummaryError: if the notebook cannot be read as a notebook (save it in JupyterLab first).
    """
    import nbformat

    from .store import ProgressStore
    from .time_on_task import TimeLog, minutes_by_unit
    path = Path(notebook)
    try:
        nb = nbformat.read(str(path), as_version=4)
    except (OSError, ValueError) as err:
        raise SummaryError(f"cannot read the notebook {path} ({err}); save it in JupyterLab and try again") from None
    store = ProgressStore(learner=learner, home=home)
    summary = summarise(store.records(), store.learner,
                        minutes=minutes_by_unit(TimeLog(learner=store.learner, home=home)))
    nb.metadata[KEY] = summary
    tmp = path.with_name(f".{path.name}.attnlab-tmp")
    nbformat.write(nb, str(tmp))
    os.replace(tmp, path)
    return summary
