"""Grades CSV that also says *why*: an nbgrader ``ExportPlugin`` adding status and flags.

Plain ``nbgrader export`` shows a crashed or rejected submission as ``0.0``, exactly like
a wrong one.  This plugin adds ``status`` (graded / flagged / error / missing), the
autograded score, and the reasons, from the reports the grading steps write under
``<course>/reports/<assignment>/<student>.json``.  Usable from the nbgrader CLI too:
``nbgrader export --exporter=autograder.export.AttnlabCsvExport``.
"""
from __future__ import annotations

import csv
import json
import os

from nbgrader.plugins import ExportPlugin
from traitlets import Unicode


class AttnlabCsvExport(ExportPlugin):
    """Export one row per (assignment, student) with score, status and reasons."""

    course_root = Unicode("", help="Course root holding reports/ (default: the cwd).").tag(config=True)

    def export(self, gradebook):
        dest = self.to or "grades.csv"
        root = self.course_root or os.getcwd()
        fields = ["assignment", "student_id", "score", "max_score", "autograded_score", "status",
                  "flags", "reason"]
        with open(dest, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=fields)
            writer.writeheader()
            for assignment in gradebook.assignments:
                if self.assignment and assignment.name not in self.assignment:
                    continue
                for student in gradebook.students:
                    if self.student and student.id not in self.student:
                        continue
                    rep_path = os.path.join(root, "reports", assignment.name, f"{student.id}.json")
                    rep = json.load(open(rep_path)) if os.path.exists(rep_path) else None
                    try:
                        sub = gradebook.find_submission(assignment.name, student.id)
                        score, auto = sub.score, sub.code_score
                    except Exception:  # noqa: BLE001 - nbgrader raises MissingEntry
                        sub, score, auto = None, 0.0, 0.0
                    if sub is None and rep is None:
                        continue
                    status = rep["status"] if rep else ("missing" if sub is None else "graded")
                    writer.writerow({
                        "assignment": assignment.name, "student_id": student.id,
                        "score": score if status != "error" else "",
                        "max_score": assignment.max_score, "autograded_score": auto if status != "error" else "",
                        "status": status, "flags": " | ".join(rep.get("flags", [])) if rep else "",
                        "reason": rep.get("reason", "") if rep else ""})
        return dest
