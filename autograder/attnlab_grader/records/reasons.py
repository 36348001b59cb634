"""The ``reason`` column of the grades sheet in words for people.

A grade report keeps the grader's own fields (``reason``, ``kept_previous``, ``notes``), each written in words
where it was made (no exception class names, no internal field names); this module is the one place that joins
them into sentences for an instructor or a spreadsheet.  It reads fields, never parses their text.
"""
from __future__ import annotations


def kept_previous(kept: dict) -> str:
    """The sentence for a submission whose re-grading failed and whose earlier result was kept; ``kept``: the
    report's ``kept_previous`` (``{"why": words}``, :class:`attnlab_grader.records.grade_report.KeptPrevious`)."""
    why = kept.get("why") if isinstance(kept, dict) else ""
    why = why.strip() if isinstance(why, str) else ""
    return ("not re-graded: the grader could not run" + (f" ({why})" if why else "")
            + "; the score shown is from the previous grading")


def reason_text(report: dict | None, extra: list[str] = ()) -> str:
    """Every remark about one submission, joined with `` | ``: the error reason, a kept earlier
    result, intake notes, then ``extra`` (already in words)."""
    parts: list[str] = []
    if report:
        if report.get("reason"):
            parts.append(str(report["reason"]).strip())
        if report.get("kept_previous"):
            parts.append(kept_previous(report["kept_previous"]))
        parts += [str(n).strip() for n in report.get("notes", []) or []]
    parts += list(extra)
    return " | ".join(p for p in parts if p)
