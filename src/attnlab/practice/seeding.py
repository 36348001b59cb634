"""Stable seeds and learner identity for practice variants.

A variant is a pure function of its seed, and the seed is a stable hash of
(learner, skill or lesson key, attempt). So two learners see different numbers, a
retry is a new problem, and the same triple always gives the same problem on any
machine and Python version (``hashlib.sha256``, never the salted built-in ``hash``).
"""
from __future__ import annotations

import getpass
import hashlib
import json
import os
import re
import unicodedata
from pathlib import Path

from ..settings import course_settings

#: what a learner id may hold as it is: letters and digits of any script (``\w``), ``_``, ``.``, ``-``
_SAFE = re.compile(r"[^\w.-]+")


def attnlab_home() -> Path:
    """Folder holding progress files: ``ATTNLAB_HOME``, default ``~/.attnlab``
    (:class:`attnlab.settings.CourseSettings`).

    Raises:
        attnlab.settings.SettingsError: an ``ATTNLAB_*`` variable holds a malformed value."""
    return course_settings().home_dir


def _clean(name: str) -> str:
    """Make a learner name safe to use as a file name, keeping distinct names distinct.

    The name is normalised (Unicode NFC, so one spelling typed two ways is one learner); letters and
    digits of any script, ``_``, ``.`` and ``-`` are kept. When anything had to be replaced or cut
    (a space, a slash, a name over 64 characters), 8 hex digits of the name's SHA-256 are appended,
    so two names that clean to the same text (``"a b"`` and ``"a/b"``) still get different ids, and
    so different by-hand numbers. At most 64 characters; ``"learner"`` for an empty name."""
    raw = unicodedata.normalize("NFC", name.strip())
    cleaned = _SAFE.sub("-", raw).strip("-.")
    if cleaned == raw and len(raw) <= 64:
        return raw or "learner"
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned[:55].rstrip('-.')}-{digest}" if cleaned else f"learner-{digest}"


def as_learner_id(name: str) -> str:
    """``name`` as :func:`learner_id` would return it (file-name safe): the grader seeds a
    student's by-hand variants with ``seed_for(as_learner_id(student_id), key)``."""
    return _clean(str(name))


def learner_id() -> str:
    """The current learner's id, safe to use as a file name.

    Order: env ``ATTNLAB_LEARNER``; else env ``JUPYTERHUB_USER`` (on a JupyterHub, the hub's
    user name, which is the nbgrader student id); else ``"learner"`` in
    ``$ATTNLAB_HOME/profile.json``; else the operating-system user name. Never raises.
    """
    for env in (course_settings().learner, os.environ.get("JUPYTERHUB_USER")):
        if env and env.strip():
            return _clean(env)
    try:
        profile = json.loads((attnlab_home() / "profile.json").read_text(encoding="utf-8"))
        if isinstance(profile, dict) and str(profile.get("learner", "")).strip():
            return _clean(str(profile["learner"]))
    except (OSError, ValueError):
        pass
    try:
        return _clean(getpass.getuser())
    except Exception:  # noqa: BLE001 - getuser raises various errors without a user database
        return "learner"


def seed_for(learner: str, key: str, attempt: int = 0) -> int:
    """A stable 63-bit seed for (learner, key, attempt).

    Args:
        learner: learner id (see :func:`learner_id`).
        key: what the seed is for, usually a skill name.
        attempt: 0, 1, 2, ... one per fresh variant.
    Returns:
        int in ``[0, 2**63)``; identical on every machine and Python version.
    Raises:
        TypeError: if ``attempt`` is not an int.
    """
    if not isinstance(attempt, int) or isinstance(attempt, bool):
        raise TypeError(f"attempt must be an int, got {type(attempt).__name__}")
    digest = hashlib.sha256(f"attnlab|{learner}|{key}|{attempt}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1
