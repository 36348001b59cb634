"""Regrade requests, the student's side: the request file's format, and filing one (``attnlab regrade-request``).

A student asks, per graded item, with a reason, from their own JupyterLab terminal::

    attnlab regrade-request ASSIGNMENT ITEM --reason TEXT

which writes one small JSON file into the course's regrade inbox in nbgrader's exchange,
``EXCHANGE/<course>/regrade/`` (``<course>``: the class's ``CourseDirectory.course_id``) -- a folder
students may write into but not list or read (the instructor makes it: ``attnlab-grade regrade-queue
--open-inbox``).  The file is ``{"student", "assignment", "item", "reason", "filed_at"}``
(:func:`request_body`), named ``<student>+<assignment>+<UTC stamp>+<random>.json``; the student is
the requester's login (``JUPYTERHUB_USER`` or the Unix user).  The command says "received" only
once the file is flushed and renamed into place.

The instructor's side (``attnlab_grader.classroom.regrade``: the queue in the gradebook, the
regrade itself) reads the files back with :func:`parse_request`.
"""
from __future__ import annotations

import datetime as dt
import getpass
import json
import os
import re
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

#: an assignment, item, course or student id
ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
MAX_REASON = 2000
#: the inbox folder's name in ``EXCHANGE/<course>/``
INBOX = "regrade"


class RegradeError(ValueError):
    """A regrade request or change that cannot be made; the message says why and what to do."""


@dataclass(frozen=True)
class Request:
    """A request as filed by a student (the inbox file's content)."""
    student: str
    assignment: str
    item: str
    reason: str
    filed_at: dt.datetime


def check_request(assignment: str, item: str, text: str) -> None:
    """Raise :class:`RegradeError` unless the ids look like ids and the reason is 1..2000 chars."""
    if not ID_RE.match(assignment or ""):
        raise RegradeError(f"assignment {assignment!r} is not an assignment name (e.g. 03_masks)")
    if not ID_RE.match(item or ""):
        raise RegradeError(f"item {item!r} is not an item id: use the id shown in your feedback, "
                           "e.g. test_softmax")
    if not (text or "").strip():
        raise RegradeError("say why you ask for a regrade: --reason 'my answer ... because ...'")
    if len(text) > MAX_REASON:
        raise RegradeError(f"the reason is {len(text)} characters; keep it under {MAX_REASON}")


def inbox(exchange_root: str | os.PathLike, course_id: str) -> Path:
    """``EXCHANGE/<course>/regrade``."""
    return Path(exchange_root) / course_id / INBOX


def requester() -> str:
    """Who files: ``JUPYTERHUB_USER`` when set (a server on a hub), else the Unix user."""
    return os.environ.get("JUPYTERHUB_USER") or getpass.getuser()


def _utc_now() -> dt.datetime:
    """UTC now, naive (nbgrader's convention for times in the gradebook)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def request_body(request: Request) -> bytes:
    """The inbox file's bytes for ``request`` (UTF-8 JSON; the reason stripped)."""
    return json.dumps({"student": request.student, "assignment": request.assignment, "item": request.item,
                       "reason": request.reason.strip(), "filed_at": request.filed_at.isoformat()}).encode("utf-8")


def parse_request(text: str) -> Request:
    """The request an inbox file's ``text`` holds, checked as :func:`check_request` checks a new one.

    Raises:
        RegradeError: ``text`` is not a request's JSON (the message says what is wrong).
    """
    try:
        data = json.loads(text)
        req = Request(str(data["student"]), str(data["assignment"]), str(data["item"]), str(data["reason"]),
                      dt.datetime.fromisoformat(data["filed_at"]))
    except json.JSONDecodeError as err:
        raise RegradeError(f"not JSON ({err})") from None
    except KeyError as err:
        raise RegradeError(f"no field {err} in the request") from None
    except (TypeError, ValueError) as err:
        raise RegradeError(f"not a request's fields ({type(err).__name__}: {err})") from None
    check_request(req.assignment, req.item, req.reason)
    return req


def file_request(exchange_root: str | os.PathLike, course_id: str, assignment: str, item: str,
                 text: str, student: str | None = None) -> Path:
    """Put a request into the inbox; returns the file, once it is in place.

    The request is written to a temporary name, flushed to disk (fsync), renamed into place, and
    checked there (size and owner) before this returns, so "received" is only said of a request the
    grader will find.  The file is 0640 whatever the student's umask: the inbox's group (the
    graders') reads it.

    Raises:
        RegradeError: a malformed request, no inbox (the course takes no requests yet), or the
            file is not in place afterwards.
        OSError: the inbox cannot be written (the message says which path).
    """
    check_request(assignment, item, text)
    student = student or requester()
    if not ID_RE.match(course_id or ""):
        raise RegradeError(f"course id {course_id!r} is not a course id; pass --course COURSE_ID as your "
                           "instructor announced it")
    box = inbox(exchange_root, course_id)
    if not box.is_dir():
        raise RegradeError(f"this course takes no regrade requests yet ({box} does not exist); "
                           "ask your instructor")
    stamp = _utc_now()
    name = f"{student}+{assignment}+{stamp:%Y%m%dT%H%M%S}+{secrets.token_hex(4)}.json"
    body = request_body(Request(student, assignment, item, text, stamp))
    tmp, final = box / f".{name}.tmp", box / name
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o640)  # the umask does not apply: the graders' group must read it
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.rename(tmp, final)
    try:  # make the rename durable where the inbox can be opened (students usually cannot list it)
        dfd = os.open(box, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        pass
    else:
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    st = final.lstat()
    if st.st_size != len(body) or st.st_uid != os.geteuid():
        raise RegradeError(f"your request could not be put in place ({final}); nothing was received, try again")
    return final


def nbgrader_setting(name: str) -> str:
    """``Exchange.root`` or ``CourseDirectory.course_id`` as this user's nbgrader config says
    (nbgrader's own default when no config file sets it)."""
    # jsonschema's optional rfc3987_syntax import costs seconds per process; nbgrader never needs it
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
    from nbgrader.apps import NbGrader
    app = NbGrader()
    app.load_config_file()
    section, key = name.split(".")
    value = app.config[section].get(key)
    if value:
        return str(value)
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default.exchange import Exchange
    return str(getattr(Exchange() if section == "Exchange" else CourseDirectory(), key))
