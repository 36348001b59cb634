"""How text a submission controls may reach people: a terminal, a report, a spreadsheet.

Everything a submission controls (ids, cell metadata, error messages built from them) goes through
:func:`safe_text` before it reaches a report, the printed summary or ``grades.csv``, and CSV
cells through :func:`csv_cell` (spreadsheet formula injection)."""
from __future__ import annotations

from attnlab_grader.judging.text_safety import safe_text  # its home: judging (a judgement's messages use it)


def safe_json(value):
    """:func:`safe_text` applied to every string (keys too) in a JSON-like value (a report)."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_text(k) if isinstance(k, str) else k: safe_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [safe_json(v) for v in value]
    return value


def csv_cell(value) -> str:
    """A text cell for a CSV opened in a spreadsheet: :func:`safe_text`, and a leading ``'`` when
    it starts with ``= + - @`` (OWASP's advice against formula injection; ``-bob`` shows as
    ``'-bob``).  Numbers are not passed through here."""
    text = safe_text(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
