"""Time on task per lesson and exercise set, measured in the learner's own kernel and kept locally.

What is measured: from the setup cell of a lesson or exercise notebook on (``gate(...)`` calls
:func:`track`), every cell the learner runs marks activity for that notebook's *unit*
(``"lesson 03"`` or ``"exercise 03_masks"``, see :func:`unit_of`).  A cell's run time always counts
(a long training cell is work); the time between the end of one cell and the start of the next
counts when it is at most :data:`IDLE_GAP` seconds (reading, thinking, typing), and not at all when
it is longer (the learner was away).  Closing a notebook and opening it again continues the same
unit.  So the time is a lower bound of the time spent: reading without running anything for more
than ten minutes is not counted.

Where it is kept: ``$ATTNLAB_HOME/progress/<learner>.time.json`` (the progress folder; a lock file
and atomic writes as in :mod:`attnlab.practice.store`).  Nothing is sent anywhere: it reaches an
instructor only if the learner attaches their practice summary to a submission
(``attnlab practice-attach``, :mod:`attnlab.practice.submission`), which then includes :func:`minutes_by_unit`.

Nothing here raises into a lesson: an unwritable folder or a damaged file leaves the time
unrecorded (a damaged file is kept as ``.corrupt-<time>`` and counting starts afresh).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from filelock import FileLock, Timeout

from .seeding import attnlab_home, learner_id

#: Longest pause (seconds) between two cells that still counts as time on task.
IDLE_GAP = 600.0
SCHEMA = 1
_LOCK_TIMEOUT = 5.0


def unit_of(lesson: str, assignment: Any = None) -> str:
    """The unit a notebook's time is counted under: ``"exercise <set>"`` when ``assignment`` (the
    notebook's ``ASSIGNMENT``) is lesson ``lesson``'s exercise set, else ``"lesson <id>"``.

    ``lesson``: a lesson id (``"03"``); ``assignment``: the value of ``ASSIGNMENT`` in the
    notebook's namespace, or None (lesson notebooks do not set it)."""
    from attnlab import course
    try:
        exercise = course.lesson(lesson).exercise
    except Exception:  # noqa: BLE001 - an unknown lesson id: counted as a lesson
        exercise = None
    if isinstance(assignment, str) and exercise and assignment == exercise:
        return f"exercise {assignment}"
    return f"lesson {lesson}"


class TimeLog:
    """One learner's time on task.

    Args:
        learner: learner id (default :func:`attnlab.practice.seeding.learner_id`).
        home: folder (default ``$ATTNLAB_HOME`` or ``~/.attnlab``).
        clock: ``() -> float`` seconds since the epoch (injectable for tests).
    Attributes:
        path: the JSON file, ``{"schema": 1, "learner": ..., "units": {unit: {"seconds": float,
        "last": float, "busy": bool}}}``: ``seconds`` counted so far; ``last`` the time of the last
        mark; ``busy`` whether that mark was the start of a cell.
    """

    def __init__(self, learner: str | None = None, home: str | os.PathLike | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.learner = learner or learner_id()
        self.home = Path(home) if home is not None else attnlab_home()
        self.path = self.home / "progress" / f"{self.learner}.time.json"
        self.clock = clock

    def _read(self) -> dict[str, Any]:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            doc = None
        units = doc.get("units") if isinstance(doc, dict) and doc.get("schema") == SCHEMA else None
        if isinstance(units, dict) and all(isinstance(u, dict) and isinstance(u.get("seconds"), (int, float))
                                           and isinstance(u.get("last"), (int, float)) for u in units.values()):
            return units
        try:  # damaged: kept for the learner to look at, never deleted
            os.replace(self.path, self.path.with_name(f"{self.path.name}.corrupt-{int(self.clock())}"))
        except OSError:
            pass
        return {}

    def units(self) -> dict[str, dict[str, Any]]:
        """Every unit's record as saved now (``{}`` when nothing was recorded or the file is unreadable)."""
        return self._read()

    def mark(self, unit: str, starting: bool) -> bool:
        """Record activity in ``unit`` now: the start of a cell (``starting``) or its end.  Returns
        whether it was saved (False when the folder is not writable; never raises)."""
        from .store import _atomic_write
        now = float(self.clock())
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.path) + ".lock", timeout=_LOCK_TIMEOUT):
                units = self._read()
                rec = units.get(unit) or {"seconds": 0.0, "last": now, "busy": False}
                gap = max(0.0, now - float(rec["last"]))
                if rec.get("busy") or gap <= IDLE_GAP:  # a cell's own run time always counts
                    rec["seconds"] = float(rec["seconds"]) + gap
                rec["last"], rec["busy"] = now, bool(starting)
                units[unit] = rec
                _atomic_write(self.path, json.dumps({"schema": SCHEMA, "learner": self.learner, "units": units},
                                                    indent=1, sort_keys=True))
            return True
        except (OSError, Timeout):
            return False


def minutes_by_unit(log: TimeLog | None = None) -> dict[str, float]:
    """``{unit: minutes on task}`` (rounded to 0.1 min) of ``log`` (default: the current learner's)."""
    log = log if log is not None else TimeLog()
    return {u: round(float(r["seconds"]) / 60.0, 1) for u, r in sorted(log.units().items())}


_HOOKS: dict[str, Any] = {}


def track(lesson: str, shell: Any = None, log: TimeLog | None = None) -> str | None:
    """Count the time on task of the notebook this kernel runs under lesson ``lesson``'s unit
    (:func:`unit_of`, from ``ASSIGNMENT`` in the notebook's namespace); called by ``gate()``.

    Registers one pair of IPython ``pre_run_cell``/``post_run_cell`` callbacks (replacing the ones
    an earlier call registered), so each later cell marks activity.  ``shell``: the IPython shell
    (default: the running one).  Returns the unit, or None outside IPython.  Never raises."""
    try:
        if shell is None:
            from IPython import get_ipython
            shell = get_ipython()
        if shell is None or not hasattr(shell, "events"):
            return None
        unit = unit_of(lesson, shell.user_ns.get("ASSIGNMENT"))
        log = log if log is not None else TimeLog()
        for event, callback in list(_HOOKS.items()):
            try:
                shell.events.unregister(event, callback)
            except ValueError:
                pass
        _HOOKS.clear()

        def started(*_args):
            log.mark(unit, starting=True)

        def ended(*_args):
            log.mark(unit, starting=False)

        shell.events.register("pre_run_cell", started)
        shell.events.register("post_run_cell", ended)
        _HOOKS.update(pre_run_cell=started, post_run_cell=ended)
        log.mark(unit, starting=True)  # the setup cell itself is running now
        return unit
    except Exception:  # noqa: BLE001 - time keeping must never break a lesson
        return None
