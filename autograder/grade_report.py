"""A student's grade report: ``COURSE/reports/<assignment>/<student>.json``, written by the
grading steps (:mod:`autograder.verify`, :mod:`autograder.sandbox_grade`) and the pipeline, read
by the pipeline, ``review``, ``export`` and ``report``.  This module is its one home."""
from __future__ import annotations

import json
from pathlib import Path

from .intake import safe_json


def report_path(root: str, assignment: str, student: str) -> Path:
    return Path(root) / "reports" / assignment / f"{student}.json"


def write_report(root: str, assignment: str, student: str, report: dict) -> None:
    """Write ``report`` (every string passed through :func:`autograder.intake.safe_text`: a
    submission's text never reaches a terminal or a spreadsheet raw)."""
    path = report_path(root, assignment, student)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(safe_json(report), indent=1))


def read_report(root: str, assignment: str, student: str) -> dict | None:
    """The report written by the last grading of ``student`` (None if there is none or it is unreadable)."""
    try:
        return json.loads(report_path(root, assignment, student).read_text())
    except (OSError, ValueError):
        return None
