"""The learner's progress store: one JSON file per learner under ``$ATTNLAB_HOME/progress/``.

The store only does I/O: it reads and writes :class:`~attnlab.practice.record.SkillRecord`
objects; every rule about what changes lives in :mod:`attnlab.practice.mastery`.

Safety rules:

* every change is a read-modify-write under a lock file (``<learner>.json.lock``, the
  ``filelock`` library), re-reading the file inside the lock: two notebooks, or a notebook and
  the ``attnlab`` command, writing the same learner's progress at the same time lose nothing;
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

import contextlib
import hashlib
import json
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

from filelock import FileLock, Timeout

from .record import SkillRecord
from .seeding import attnlab_home, learner_id

SCHEMA = 3
_READABLE_SCHEMAS = (1, 2, 3)  # 1: the same fields as dicts, before SkillRecord; 2: before the FSRS card
LOCK_TIMEOUT = 30.0  # seconds to wait for another process's write


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
        self._memory_only = False
        self.data = self._load()

    # ------------------------------------------------------------------ reading
    def now(self) -> float:
        return float(self.clock())

    def get(self, name: str) -> SkillRecord:
        """Skill ``name``'s record as saved now (a fresh one if never practised)."""
        self.refresh()
        return self.data["skills"].get(name) or SkillRecord()

    peek = get

    def records(self) -> dict[str, SkillRecord]:
        """Every saved skill record, by skill name."""
        self.refresh()
        return dict(self.data["skills"])

    @property
    def lesson(self) -> str | None:
        """Highest lesson id the learner has opened (via gate or mastery_check)."""
        self.refresh()
        return self.data.get("lesson")

    def refresh(self) -> None:
        """Re-read the file if another store object or process wrote it since we last did."""
        if not self._memory_only and self._file_stamp() != self._stamp:
            self.data = self._load()

    def reload(self) -> None:
        """Re-read the file."""
        self.data = self._load()

    # ------------------------------------------------------------------ writing
    def update(self, name: str, change: Callable[[SkillRecord], SkillRecord]) -> SkillRecord:
        """Replace skill ``name``'s record by ``change(record)``, atomically with respect to other
        processes (read, change and write happen under the lock). Returns the new record."""
        with self._transaction() as data:
            new = change(data["skills"].get(name) or SkillRecord())
            if not isinstance(new, SkillRecord):
                raise TypeError(f"change must return a SkillRecord, got {type(new).__name__}")
            data["skills"][name] = new
        return new

    def put(self, name: str, record: SkillRecord) -> SkillRecord:
        """Store ``record`` as skill ``name``'s record."""
        return self.update(name, lambda _old: record)

    def visit(self, lesson: str) -> None:
        """Record that ``lesson`` was opened (the current lesson only moves forward)."""
        if self.lesson is not None and lesson <= self.lesson:
            return
        with self._transaction() as data:
            if data.get("lesson") is None or lesson > data["lesson"]:
                data["lesson"] = lesson

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[dict[str, Any]]:
        """Lock, re-read, let the caller change ``data`` in place, write, unlock."""
        if self._memory_only:
            yield self.data
            return
        lock = FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock.acquire()
        except (OSError, Timeout) as err:
            self._notice(f"Could not lock your progress file {self.path} ({err}). Progress is kept in memory "
                         "for now; check that ATTNLAB_HOME points to a writable folder.")
            self._memory_only = True
            yield self.data
            return
        try:
            self.data = self._load()
            yield self.data
            self._save()
        finally:
            lock.release()

    def save(self) -> bool:
        """Write the in-memory state (under the lock). Returns False (with a notice) on failure."""
        if self._memory_only:
            return False
        with FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT):
            return self._save()

    def _save(self) -> bool:
        payload = {"schema": SCHEMA, "learner": self.learner, "lesson": self.data.get("lesson"),
                   "skills": {n: r.to_json() for n, r in sorted(self.data["skills"].items())}}
        text = json.dumps(dict(payload, checksum=_checksum(payload)), indent=1, sort_keys=True)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            for target in (self.path, self.path.with_name(self.path.name + ".prev")):
                _atomic_write(target, text)
        except OSError as err:
            self._notice(f"Could not save your progress to {self.path} ({err}). It is kept in memory for now; "
                         "check that ATTNLAB_HOME points to a writable folder.")
            self._memory_only = True
            return False
        self._stamp = self._file_stamp()
        return True

    # ------------------------------------------------------------------ loading
    def _file_stamp(self) -> tuple | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _empty(self) -> dict[str, Any]:
        return {"learner": self.learner, "lesson": None, "skills": {}}

    def _notice(self, text: str) -> None:
        self.notices.append(text)
        warnings.warn(text, UserWarning, stacklevel=3)

    @staticmethod
    def _parse(document: Any) -> dict[str, Any] | None:
        """The in-memory state of a valid document (checksum, schema and every record checked), else None."""
        if not isinstance(document, dict) or document.get("schema") not in _READABLE_SCHEMAS:
            return None
        payload = {k: v for k, v in document.items() if k != "checksum"}
        if document.get("checksum") != _checksum(payload) or not isinstance(document.get("skills"), dict):
            return None
        records = {n: SkillRecord.from_json(r) for n, r in document["skills"].items()}
        if any(r is None for r in records.values()):
            return None
        lesson = document.get("lesson")
        return {"learner": document.get("learner"), "lesson": lesson if isinstance(lesson, str) else None,
                "skills": records}

    def _load(self) -> dict[str, Any]:
        self._stamp = self._file_stamp()
        try:
            raw = self.path.read_bytes().decode("utf-8", errors="replace")
        except FileNotFoundError:
            return self._empty()
        except OSError as err:
            self._notice(f"Could not read your progress file {self.path} ({err}); starting from an empty record "
                         "in memory. The file was left untouched.")
            self._memory_only = True
            return self._empty()
        try:
            document = json.loads(raw)
        except ValueError:
            document = None
        state = self._parse(document)
        return state if state is not None else self._recover(document)

    def _recover(self, document: Any) -> dict[str, Any]:
        backup = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
        n = 0
        while backup.exists():
            n += 1
            backup = backup.with_name(f"{backup.name.split('~')[0]}~{n}")
        try:
            os.replace(self.path, backup)
            where = f"It was moved to {backup} (kept, not deleted)."
            moved = True
        except OSError as err:
            where = f"It could not be backed up ({err}) and was left in place."
            moved = False
        data = self._empty()
        salvaged, source = {}, ""
        if isinstance(document, dict) and isinstance(document.get("skills"), dict):
            for name, rec in document["skills"].items():
                valid = SkillRecord.from_json(rec)
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
        if moved:
            self.data = data
            self._save()
        return data

    def _read_prev(self) -> dict[str, Any] | None:
        prev = self.path.with_name(self.path.name + ".prev")
        try:
            document = json.loads(prev.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return self._parse(document)


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
