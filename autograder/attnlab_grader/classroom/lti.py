"""LTI Advantage for the course: students' names and LMS ids from the hub's launches, and score
passback through Assignment and Grade Services (AGS 2.0) with ``pylti1p3``.

- :func:`import_roster` reads the launch record the hub writes (one JSON line per LTI launch,
  ``deploy/jupyterhub/attnlab_lti.py``) and puts each student's given and family name, email and LTI
  user id (``sub``) into nbgrader's gradebook (``Student.first_name/last_name/email/lms_user_id``), so
  formgrader shows names and passback knows whom a score is for.
- :func:`passback` posts each student's ``final_score`` (after any late penalty) of one assignment
  from ``COURSE/grades.csv`` to the platform's line item for it (found by ``resourceId`` = the
  assignment, created with ``scoreMaximum`` = its maximum when missing, or the one given).  Only rows
  whose status is ``graded`` are sent; flagged, waiting for manual grading, in error or missing rows,
  and students without an LTI user id, are returned as not sent.  The service token comes from the
  platform's token endpoint by the OAuth 2 client-credentials grant with a JWT assertion signed by
  the tool's private key (IMS Security Framework 1.0 §4.1); scores are POSTed to
  ``<lineitem>/scores`` as ``application/vnd.ims.lis.v1.score+json`` (AGS 2.0 §3.4).

The tool's registration is pylti1p3's JSON tool configuration (``ToolConfJsonFile``): per issuer
``client_id``, ``auth_login_url``, ``auth_token_url``, ``key_set_url``, ``private_key_file``,
``deployment_ids``.
"""
from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

SCOPES = ["https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
          "https://purl.imsglobal.org/spec/lti-ags/scope/score"]


class LtiError(ValueError):
    """The launch record, tool configuration or line item cannot be used; nothing was sent."""


def read_launches(path: str | os.PathLike) -> list[dict]:
    """The launches recorded by the hub, oldest first (malformed lines skipped).  Raises
    :class:`LtiError` when the file cannot be read."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.readlines()
    except OSError as err:
        raise LtiError(f"cannot read the hub's launch record {path}: {err.strerror}; students appear there "
                       "once they launch the course from the LMS (the hub must use lti.py)") from None
    out = []
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("username"), str):
            out.append(rec)
    return out


def latest(launches: list[dict]) -> dict[str, dict]:
    """username → that user's most recent launch."""
    return {r["username"]: r for r in sorted(launches, key=lambda r: r.get("time") or 0)}


def _names(rec: dict) -> tuple[str | None, str | None]:
    first, last = rec.get("given_name"), rec.get("family_name")
    if not (first or last) and rec.get("name"):
        parts = str(rec["name"]).rsplit(" ", 1)
        first, last = (parts[0], parts[1]) if len(parts) == 2 else (parts[0], None)
    return first or None, last or None


def import_roster(db_url: str, launches: list[dict]) -> list[str]:
    """Create or update the gradebook's student for each student launch (name, email, LTI user id);
    returns the ids updated.  Instructors and graders are not students and are left out."""
    from attnlab_grader.records.course import _quiet_imports
    _quiet_imports()  # a new gradebook reads its schema revision in-process
    from nbgrader.api import Gradebook
    done = []
    with Gradebook(db_url, "attnlab") as gb:
        for name, rec in sorted(latest(launches).items()):
            if rec.get("role") != "student":
                continue
            first, last = _names(rec)
            gb.update_or_create_student(name, first_name=first, last_name=last,
                                        email=rec.get("email") or None, lms_user_id=rec.get("sub") or None)
            done.append(name)
    return done


def lineitems_url(launches: list[dict]) -> str | None:
    """The course's AGS line items URL from the most recent launch that carried one."""
    for rec in sorted(launches, key=lambda r: r.get("time") or 0, reverse=True):
        ags = rec.get("ags") or {}
        if isinstance(ags, dict) and ags.get("lineitems"):
            return ags["lineitems"]
    return None


@dataclass
class Passback:
    """What :func:`passback` did: ``sent`` (student, score given, maximum) and ``not_sent``
    (one line each, with why)."""
    lineitem: str
    sent: list[tuple[str, float, float]] = field(default_factory=list)
    not_sent: list[str] = field(default_factory=list)


def _registration(tool_config: str | os.PathLike, issuer: str | None, client_id: str | None):
    from pylti1p3.tool_config import ToolConfJsonFile
    try:
        conf = ToolConfJsonFile(str(tool_config))
    except Exception as err:  # noqa: BLE001 - pylti1p3 raises bare Exception for a bad file
        raise LtiError(f"cannot use the LTI tool configuration {tool_config}: {err}") from None
    with open(tool_config, encoding="utf-8") as fh:
        issuers = list(json.load(fh))
    if not issuers:
        raise LtiError(f"{tool_config} registers no platform; add the LMS's issuer with its client_id, "
                       "auth_token_url and private_key_file")
    if issuer is None:
        if len(issuers) != 1:
            raise LtiError(f"{tool_config} registers {len(issuers)} platforms; name one with --issuer")
        issuer = issuers[0]
    try:
        reg = (conf.find_registration_by_params(issuer, client_id) if client_id
               else conf.find_registration_by_issuer(issuer))
    except Exception:  # noqa: BLE001 - pylti1p3 raises bare Exception for an unknown issuer/client
        reg = None
    if reg is None or not reg.get_auth_token_url():
        raise LtiError(f"{tool_config} has no registration with a token URL (auth_token_url) for {issuer}"
                       + (f" and client id {client_id}" if client_id else "") + f"; it has {', '.join(issuers)}")
    return reg


def passback(sheet: str | os.PathLike, assignment: str, tool_config: str | os.PathLike, db_url: str, *,
             lineitems: str | None = None, lineitem: str | None = None, issuer: str | None = None,
             client_id: str | None = None, label: str | None = None, dry_run: bool = False) -> Passback:
    """Post ``assignment``'s final scores from the grades ``sheet`` to the platform (see the module
    docstring).  ``lineitems``: the course's line items URL (to find or create the assignment's);
    ``lineitem``: post to this line item instead.  Raises :class:`LtiError` (nothing sent) for an
    unusable configuration; an error from the platform part-way is raised as :class:`LtiError`
    naming what was already sent."""
    from attnlab_grader.records.course import _quiet_imports
    _quiet_imports()  # a new gradebook reads its schema revision in-process
    from nbgrader.api import Gradebook
    from pylti1p3.exception import LtiException, LtiServiceException
    from pylti1p3.grade import Grade
    from pylti1p3.lineitem import LineItem
    from pylti1p3.service_connector import ServiceConnector
    from pylti1p3.assignments_grades import AssignmentsGradesService

    if not (lineitems or lineitem):
        raise LtiError("no line items URL: give --lineitems (the AGS endpoint of the course) or --lineitem, "
                       "or import the hub's launch record (an instructor's launch carries it)")
    try:
        with open(sheet, newline="", encoding="utf-8") as fh:
            rows = [r for r in csv.DictReader(fh) if r.get("assignment") == assignment]
    except OSError as err:
        raise LtiError(f"cannot read the grades sheet {sheet}: {err.strerror}; run grade first") from None
    if not rows:
        raise LtiError(f"{sheet} has no rows for {assignment!r}; grade it (or check the name) first")
    with Gradebook(db_url, "attnlab") as gb:
        lms_ids = {s.id: s.lms_user_id for s in gb.students}
    reg = _registration(tool_config, issuer, client_id)
    out = Passback(lineitem or "")
    to_send = []
    for r in sorted(rows, key=lambda r: r["student_id"]):
        s = r["student_id"]
        if r.get("status") != "graded":
            out.not_sent.append(f"{s}: status {r.get('status') or 'unknown'} (only final grades are sent)")
            continue
        if not lms_ids.get(s):
            out.not_sent.append(f"{s}: no LTI user id in the gradebook (the student has not launched the course "
                                "from the LMS, or run lti-roster)")
            continue
        try:
            given, maximum = float(r["final_score"]), float(r["max_score"])
        except (KeyError, TypeError, ValueError):
            out.not_sent.append(f"{s}: no numeric final_score/max_score in {sheet}")
            continue
        to_send.append((s, lms_ids[s], given, maximum))
    if dry_run:
        out.sent = [(s, g, m) for s, _, g, m in to_send]
        return out
    service = AssignmentsGradesService(ServiceConnector(reg), {
        "scope": SCOPES, "lineitems": lineitems or "", **({"lineitem": lineitem} if lineitem else {})})
    try:
        item = None
        if not lineitem:
            maximum = max((m for *_, m in to_send), default=float(rows[0].get("max_score") or 0) or 1.0)
            item = service.find_or_create_lineitem(
                LineItem().set_resource_id(assignment).set_label(label or assignment)
                .set_score_maximum(maximum), find_by="resource_id")
            out.lineitem = item.get_id() or ""
        stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        for s, uid, given, maximum in to_send:
            grade = (Grade().set_user_id(uid).set_score_given(given).set_score_maximum(maximum)
                     .set_timestamp(stamp).set_activity_progress("Completed").set_grading_progress("FullyGraded"))
            service.put_grade(grade, item)
            out.sent.append((s, given, maximum))
    except (LtiException, LtiServiceException, OSError) as err:
        done = ", ".join(s for s, *_ in out.sent) or "none"
        raise LtiError(f"the platform refused or failed ({_why(err)}); scores already sent: {done}") from None
    return out


def _why(err: Exception) -> str:
    resp = getattr(err, "response", None)
    if resp is not None and getattr(resp, "status_code", None):
        return f"HTTP {resp.status_code} from {resp.url}"
    return str(err).splitlines()[0] if str(err) else type(err).__name__


#: The hub's default launch record (deploy/jupyterhub/attnlab_lti.py, LAUNCHES_DEFAULT: the same).
LAUNCHES_DEFAULT = "/var/lib/attnlab-lti/{course}/launches.jsonl"


def default_launches() -> Path:
    """The launch record the hub writes: ``ATTNLAB_LTI_LAUNCHES``, else :data:`LAUNCHES_DEFAULT`
    for ``ATTNLAB_COURSE_ID`` (default ``attnlab``)."""
    from attnlab_grader.records.settings import grader_settings
    s = grader_settings()
    return Path(s.lti_launches or LAUNCHES_DEFAULT.format(course=s.course_id))
