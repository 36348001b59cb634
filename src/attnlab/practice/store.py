"""The learner's progress store: one JSON file per learner under ``$ATTNLAB_HOME/progress/``.

Safety rules:

* writes are atomic: a temporary file in the same folder, ``fsync``, then ``os.replace``;
  a copy of the last good state is kept next to it (``<learner>.json.prev``);
* the file carries ``schema`` and a SHA-256 ``checksum`` of its content, so a corrupt or
  hand-edited file is detected on load. It is then **backed up** (kept, never deleted)
  as ``<learner>.json.corrupt-<time>``, whatever can be salvaged is recovered (valid
  skill records from the damaged file, else the last good copy), and the learner is told
  (``store.notices``, also emitted as a ``UserWarning``);
* nothing here raises on a bad file or an unwritable folder: progress then lives in memory
  and a notice says why it could not be saved.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable

from .seeding import attnlab_home, learner_id

SCHEMA = 1
_HISTORY = 30  # attempts kept per skill


def new_record() -> dict[str, Any]:
    """A fresh per-skill record (see docs/mastery.md for the meaning of every field)."""
    return {
        "served": 0,  # attempt index of the next fresh variant
        "current": None,  # attempt index of the open variant (None: serve a fresh one)
        "checked": False, "hinted": 0, "solved": False,  # state of the open variant
        "review": False,  # the open variant is a spaced-review item
        "streak": 0, "mastered": False, "mastered_at": None, "mastered_lesson": None,
        "due_at": None, "due_lesson": None, "interval_days": 3.0, "interval_lessons": 2,
        "attempts": 0, "correct": 0, "hints": 0, "history": [],
    }


_TYPES = {
    "served": int, "current": (int, type(None)), "checked": bool, "hinted": int, "solved": bool, "review": bool,
    "streak": int, "mastered": bool, "mastered_at": (int, float, type(None)), "mastered_lesson": (str, type(None)),
    "due_at": (int, float, type(None)), "due_lesson": (str, type(None)), "interval_days": (int, float),
    "interval_lessons": int, "attempts": int, "correct": int, "hints": int, "history": list,
}


def _valid_record(rec: Any) -> dict[str, Any] | None:
    """The record with missing fields defaulted, or None if a field has the wrong type."""
    if not isinstance(rec, dict):
        return None
    out = new_record()
    for key, typ in _TYPES.items():
        if key in rec:
            value = rec[key]
            if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
                return None
            out[key] = value
    if out["served"] < 0 or out["streak"] < 0:
        return None
    return out


def _checksum(payload: dict[str, Any]) -> str:
    body = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


class ProgressStore:
    """Progress of one learner.

    Args:
        learner: learner id (default :func:`learner_id`).
        home: folder (default ``$ATTNLAB_HOME`` or ``~/.attnlab``).
        clock: ``() -> float`` seconds since the epoch; injectable for tests of spaced review.
    Attributes:
        path: the JSON file; ``notices``: messages for the learner (recovery, save errors).
    """

    def __init__(self, learner: str | None = None, home: str | os.PathLike | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.learner = learner or learner_id()
        self.home = Path(home) if home is not None else attnlab_home()
        self.path = self.home / "progress" / f"{self.learner}.json"
        self.clock = clock
        self.notices: list[str] = []
        self._stamp: tuple | None = None
        self.data = self._load()

    # ------------------------------------------------------------------ public API
    def now(self) -> float:
        return float(self.clock())

    def skill(self, name: str) -> dict[str, Any]:
        """The (mutable) record of skill ``name``, created if absent. Call :meth:`save` after changing it."""
        return self.data["skills"].setdefault(name, new_record())

    def peek(self, name: str) -> dict[str, Any]:
        """A copy of skill ``name``'s record (a fresh one if never practised); never creates it."""
        self.refresh()
        return copy.deepcopy(self.data["skills"].get(name) or new_record())

    @property
    def lesson(self) -> str | None:
        """Highest lesson id the learner has opened (via gate or mastery_check)."""
        return self.data.get("lesson")

    def visit(self, lesson: str) -> None:
        """Record that ``lesson`` was opened (the current lesson only moves forward)."""
        self.refresh()
        if self.data.get("lesson") is None or lesson > self.data["lesson"]:
            self.data["lesson"] = lesson
            self.save()

    def log(self, name: str, correct: bool, hinted: int, misconception: str | None) -> None:
        rec = self.skill(name)
        rec["history"].append([round(self.now(), 3), bool(correct), int(hinted), misconception])
        del rec["history"][:-_HISTORY]

    def reload(self) -> None:
        """Re-read the file."""
        self.data = self._load()

    def refresh(self) -> None:
        """Re-read the file if another store object or process wrote it since we last did.

        Called before every change, so several cards in one notebook, or a notebook and the
        ``attnlab`` command, never overwrite each other's progress with a stale copy.
        """
        if self._file_stamp() != self._stamp:
            self.data = self._load()

    def _file_stamp(self) -> tuple | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def save(self) -> bool:
        """Write atomically (and refresh the last-good copy). Returns False (with a notice) on failure."""
        payload = {k: v for k, v in self.data.items() if k != "checksum"}
        payload["schema"], payload["learner"] = SCHEMA, self.learner
        document = dict(payload, checksum=_checksum(payload))
        text = json.dumps(document, indent=1, sort_keys=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            for target in (self.path, self.path.with_name(self.path.name + ".prev")):
                _atomic_write(target, text)
        except OSError as err:
            self._notice(f"Could not save your progress to {self.path} ({err}). It is kept in memory for now; "
                         "check that ATTNLAB_HOME points to a writable folder.")
            return False
        self.data = document
        self._stamp = self._file_stamp()
        return True

    # ------------------------------------------------------------------ loading
    def _empty(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "learner": self.learner, "lesson": None, "skills": {}}

    def _notice(self, text: str) -> None:
        self.notices.append(text)
        warnings.warn(text, UserWarning, stacklevel=3)

    def _load(self) -> dict[str, Any]:
        self._stamp = self._file_stamp()
        try:
            raw = self.path.read_bytes().decode("utf-8", errors="replace")
        except FileNotFoundError:
            return self._empty()
        except OSError as err:
            self._notice(f"Could not read your progress file {self.path} ({err}); starting from an empty record "
                         "in memory. The file was left untouched.")
            return self._empty()
        try:
            document = json.loads(raw)
        except ValueError:
            document = None
        if isinstance(document, dict) and document.get("schema") == SCHEMA and isinstance(document.get("skills"), dict):
            payload = {k: v for k, v in document.items() if k != "checksum"}
            if document.get("checksum") == _checksum(payload):
                records = {n: _valid_record(r) for n, r in document["skills"].items()}
                if all(r is not None for r in records.values()):
                    document["skills"] = records
                    return document
        return self._recover(document)

    def _recover(self, document: Any) -> dict[str, Any]:
        backup = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
        n = 0
        while backup.exists():
            n += 1
            backup = backup.with_name(f"{backup.name.split('~')[0]}~{n}")
        try:
            os.replace(self.path, backup)
            where = f"It was moved to {backup} (kept, not deleted)."
        except OSError as err:
            where = f"It could not be backed up ({err}) and was left in place."
            backup = None
        data = self._empty()
        salvaged, source = {}, ""
        if isinstance(document, dict) and isinstance(document.get("skills"), dict):
            for name, rec in document["skills"].items():
                valid = _valid_record(rec)
                if isinstance(name, str) and valid is not None:
                    salvaged[name] = valid
            if isinstance(document.get("lesson"), str):
                data["lesson"] = document["lesson"]
            source = "the damaged file"
        if not salvaged:
            prev = self._read_prev()
            if prev is not None:
                data, salvaged, source = prev, prev["skills"], "the last good copy"
        data["skills"] = salvaged
        what = (f"recovered {len(salvaged)} skill record(s) from {source}" if salvaged
                else "nothing could be recovered, so practice starts afresh")
        problem = ("was changed outside attnlab or is damaged (checksum/schema check failed)"
                   if isinstance(document, dict) else "is not valid JSON")
        self._notice(f"Your progress file {self.path} {problem}. {where} attnlab {what}.")
        if backup is not None:
            self.data = data
            self.save()
        return data

    def _read_prev(self) -> dict[str, Any] | None:
        prev = self.path.with_name(self.path.name + ".prev")
        try:
            document = json.loads(prev.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(document, dict) or document.get("schema") != SCHEMA:
            return None
        payload = {k: v for k, v in document.items() if k != "checksum"}
        if document.get("checksum") != _checksum(payload) or not isinstance(document.get("skills"), dict):
            return None
        records = {n: _valid_record(r) for n, r in document["skills"].items()}
        if any(r is None for r in records.values()):
            return None
        document["skills"] = records
        return document


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
