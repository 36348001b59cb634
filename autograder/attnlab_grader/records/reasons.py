"""The ``reason`` column of the grades sheet in words for people.

A grade report keeps the grader's own fields (``reason``, ``kept_previous``, ``notes``); this
module is the one place that turns them into sentences for an instructor or a spreadsheet:
no exception class names, no internal field names.
"""
from __future__ import annotations

import re

_EXC = re.compile(r"^\s*[A-Z][A-Za-z]*(Error|Exception|Unavailable|Refused|Timeout)\s*:\s*")


def plain(text: str) -> str:
    """``text`` without a leading Python exception class name (``SandboxUnavailable: no userns`` →
    ``no userns``); a class name inside the sentence is left as written."""
    return _EXC.sub("", text or "", count=1).strip()


def kept_previous(text: str) -> str:
    """The sentence for a submission whose re-grading failed and whose earlier result was kept."""
    m = re.search(r"\((.*)\)", text or "")
    why = plain(m.group(1)) if m else ""
    return ("not re-graded: the grader could not run" + (f" ({why})" if why else "")
            + "; the score shown is from the previous grading")


def reason_text(report: dict | None, extra: list[str] = ()) -> str:
    """Every remark about one submission, joined with `` | ``: the error reason, a kept earlier
    result, intake notes, then ``extra`` (already in words)."""
    parts: list[str] = []
    if report:
        if report.get("reason"):
            parts.append(plain(str(report["reason"])))
        if report.get("kept_previous"):
            parts.append(kept_previous(str(report["kept_previous"])))
        parts += [plain(str(n)) for n in report.get("notes", []) or []]
    parts += list(extra)
    return " | ".join(p for p in parts if p)
