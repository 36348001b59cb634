"""Text a submission controls, made safe to show: :func:`safe_text` (used by judging's messages, and by the
grader's reports, printed summaries and ``grades.csv`` through :mod:`attnlab_grader.records.text_safety`)."""
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
