"""How text a submission controls may reach people: a terminal, a report, a spreadsheet.

Everything a submission controls (ids, cell metadata, error messages built from them) goes through
:func:`safe_text` before it reaches a report, the printed summary or ``grades.csv``, and CSV
cells through :func:`csv_cell` (spreadsheet formula injection)."""
from __future__ import annotations

import unicodedata

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\x1b"}


def safe_text(value, limit: int = 2000) -> str:
    """``value`` as text that cannot drive a terminal or hide characters: control characters
    (C0, C1, DEL, including ESC) and Unicode format characters (bidi overrides, zero-width) are
    written as visible escapes (``\\x1b``, ``\\u202e``); longer text is cut at ``limit``."""
    out = []
    for ch in str(value):
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                       else f"\\U{code:08x}")
        else:
            out.append(ch)
    text = "".join(out)
    return text if len(text) <= limit else text[:limit] + "…"


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
