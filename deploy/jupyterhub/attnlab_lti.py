"""LTI 1.3 login for the class hub: jupyterhub-ltiauthenticator's ``LTI13Authenticator`` with the
platform's course roles mapped onto the hub's, least privilege first.

Loaded by the hub configuration fragment ``lti.py`` (beside this file) through :func:`configure`;
runs in the hub's own environment (``requirements-lti.txt``), so it imports nothing from attnlab.

The launch itself (OIDC login initiation, the ``id_token`` signed by the platform and checked
against its JWKS, issuer, audience, expiry, nonce and state) is the upstream authenticator's
(IMS Security Framework 1.0 §5.1; LTI 1.3 §5.3).  This module adds, after that verification:

* **roles** (:func:`hub_role`): the context (course membership) roles of the
  ``https://purl.imsglobal.org/spec/lti/claim/roles`` claim (LTI 1.3 §5.3.7, role vocabularies of
  LIS v2, Appendix A.2) decide; institution and system roles never grant anything.  Each known
  role maps to one hub role — ``instructor``, ``grader`` or ``student`` (:data:`ROLE_MAP`) — and
  a user with several gets the *least* privileged (a teaching assistant is sent as
  ``Instructor`` and ``Instructor#TeachingAssistant``: grader).  No known course role → the
  login is refused with a 403 saying so.
* **hub rights** (:func:`hub_groups`): graders and instructors join ``formgrade-<course>``
  (formgrader for this course and nothing else); instructors also ``instructors-<course>`` (which
  grants nothing more: it tells instructors from graders); students ``nbgrader-<course>``
  (nbgrader's name for a course's students, granting nothing at the hub); nobody is a hub admin
  (``admin: False`` on every login).  Groups are managed by the authenticator, so a role changed
  in the LMS takes effect at the next launch.
* **username** from one stable claim (``username_key``: ``sub`` by default, or e.g.
  ``custom_login`` for a custom parameter): a launch without it is refused rather than falling back
  to another claim, and it must be a usable nbgrader student id; with ``require_unix_account``
  (the default: the local spawners run each server as that Unix user) the account must exist.
* **one use per launch**: a launch's ``nonce`` is remembered for 15 minutes (the hub's
  process), so the same form posted again — even with the first browser's cookies — is refused
  (OpenID Connect Core 1.0 §15.5.2).
* **launch record** (``launches_path``): one JSON line per successful launch (username, hub role,
  ``sub``, given/family name, email, context, the AGS endpoint claim), root's and readable by the
  grader account's group only (:func:`write_launch`), from which ``attnlab-grade lti-roster``
  fills nbgrader's gradebook (names, LMS user id) and ``attnlab-grade lti-passback`` finds the
  course's line items.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import stat
import time

from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.constants import LTI13_CUSTOM_CLAIM
from tornado import web
from traitlets import Bool, Dict, Unicode

#: The hub roles, least privileged first.
STUDENT, GRADER, INSTRUCTOR = "student", "grader", "instructor"
RANK = {STUDENT: 0, GRADER: 1, INSTRUCTOR: 2}

_M = "http://purl.imsglobal.org/vocab/lis/v2/membership"
#: Context (course membership) roles of LIS v2 (LTI 1.3 Appendix A.2.2, with the deprecated simple
#: names) → hub role.  Anything else — Mentor, ContentDeveloper, Administrator, Member, Manager,
#: Officer, institution and system roles — grants nothing.
ROLE_MAP = {
    f"{_M}#Learner": STUDENT, f"{_M}/Learner#Learner": STUDENT, "Learner": STUDENT,
    f"{_M}/Instructor#TeachingAssistant": GRADER, f"{_M}#TeachingAssistant": GRADER,
    "TeachingAssistant": GRADER, f"{_M}/Instructor#Grader": GRADER,
    f"{_M}#Instructor": INSTRUCTOR, f"{_M}/Instructor#Instructor": INSTRUCTOR, "Instructor": INSTRUCTOR,
}

ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
CONTEXT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/context"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
#: usable as an nbgrader student id and in the exchange's file names (no ``+``, no ``/``)
USERNAME_RE = re.compile(r"^[a-z0-9][a-z0-9._@-]{0,63}$")


def hub_groups(course_id: str) -> dict[str, list[str]]:
    """The hub groups of each hub role for ``course_id`` (see the module docstring)."""
    return {STUDENT: [f"nbgrader-{course_id}"], GRADER: [f"formgrade-{course_id}"],
            INSTRUCTOR: [f"formgrade-{course_id}", f"instructors-{course_id}"]}


def hub_role(roles, role_map: dict[str, str] | None = None) -> str | None:
    """The hub role for an LTI ``roles`` claim (a list of role URIs): the least privileged of
    the known course roles, or None when there is none (the login is then refused)."""
    role_map = ROLE_MAP if role_map is None else role_map
    if not isinstance(roles, (list, tuple)):
        return None
    known = [role_map[r] for r in roles if isinstance(r, str) and r in role_map]
    return min(known, key=RANK.__getitem__) if known else None


class AttnlabLTI13Authenticator(LTI13Authenticator):
    """LTI 1.3 launches with course roles → hub groups (see the module docstring)."""

    course_id = Unicode("attnlab", config=True, help="nbgrader course id (names the formgrader group).")
    role_map = Dict(ROLE_MAP, config=True, help="LTI role URI → instructor, grader or student.")
    require_unix_account = Bool(True, config=True,
                                help="Refuse a user without a Unix account (the local spawners need one).")
    launches_path = Unicode("", config=True, help="JSON-lines record of launches ('' = none).")
    launches_owner = Unicode("", config=True, help="Unix user whose group may read the launch record (the grader account).")

    def get_username(self, token):
        """The username from ``username_key`` only (``custom_X``: the custom claim's ``X``); a
        launch without it, or with a value that cannot be a student id, is refused (403)."""
        key = self.username_key or "sub"
        data = token
        if key.startswith("custom_"):
            data, key = token.get(LTI13_CUSTOM_CLAIM) or {}, key[len("custom_"):]
        value = data.get(key) if isinstance(data, dict) else None
        if not isinstance(value, str) or not value.strip():
            raise web.HTTPError(403, f"This launch carries no '{self.username_key}' claim to name you by; "
                                "ask the course administrator to check the LTI tool's privacy settings.")
        name = value.strip().lower()
        if not USERNAME_RE.match(name):
            raise web.HTTPError(403, f"The LMS user name {value!r} cannot be a course login (letters, digits, "
                                "'.', '_', '-', '@', at most 64); ask the course administrator to name "
                                "users by another claim.")
        return name

    #: seconds a used launch stays remembered: longer than the validator's ``max_age`` (600 s), after
    #: which an ``id_token`` is refused as too old anyway
    REPLAY_WINDOW_S = 900

    def _first_use(self, token: dict) -> bool:
        """Remember this launch (its ``nonce``); False when it was seen within the replay window."""
        seen = self.__dict__.setdefault("_seen_launches", {})
        now = time.monotonic()
        for k in [k for k, t in seen.items() if now - t > self.REPLAY_WINDOW_S]:
            del seen[k]
        key = (token.get("iss"), token.get("nonce"))
        if not key[1] or key in seen:
            return False
        seen[key] = now
        return True

    async def authenticate(self, handler, data=None):
        """Map the verified ``id_token`` (``data``) to ``{name, admin: False, groups, auth_state}``;
        raises ``HTTPError(403)`` for an unknown or missing course role, an unusable username, or a
        launch already used (a replayed form with its cookies)."""
        token = data or {}
        if not self._first_use(token):
            raise web.HTTPError(403, "This launch was already used; open the course again from the LMS.")
        role = hub_role(token.get(ROLES_CLAIM), self.role_map)
        if role is None:
            raise web.HTTPError(403, "Your role in this LMS course (%s) gives no access to the course hub: "
                                "only learners, teaching assistants and instructors may launch it."
                                % (", ".join(r.rsplit("#", 1)[-1] for r in token.get(ROLES_CLAIM) or [] if isinstance(r, str))
                                   or "none sent"))
        name = self.get_username(token)
        if self.require_unix_account:
            try:
                pwd.getpwnam(name)
            except KeyError:
                raise web.HTTPError(403, f"There is no account '{name}' on this course hub yet; ask the course "
                                    "administrator to create it (or to name users by the claim that matches "
                                    "the machine's accounts).") from None
        groups = hub_groups(self.course_id)[role]
        self._record(name, role, token)
        return {"name": name, "admin": False, "groups": groups, "auth_state": {"lti_role": role, **token}}

    def check_allowed(self, username, authentication=None):
        """Allowed exactly when :meth:`authenticate` mapped a course role."""
        state = (authentication or {}).get("auth_state") or {}
        return state.get("lti_role") in RANK

    def _record(self, name: str, role: str, token: dict) -> None:
        """Append this launch to ``launches_path`` (see :func:`write_launch`); a failure is logged,
        never a refused login."""
        if not self.launches_path:
            return
        ctx = token.get(CONTEXT_CLAIM) or {}
        line = {"time": time.time(), "username": name, "role": role, "sub": token.get("sub"),
                "iss": token.get("iss"), "deployment_id": token.get(DEPLOYMENT_CLAIM),
                "given_name": token.get("given_name"), "family_name": token.get("family_name"),
                "name": token.get("name"), "email": token.get("email"),
                "context_id": ctx.get("id"), "context_title": ctx.get("title"),
                "ags": token.get(AGS_CLAIM)}
        try:
            write_launch(self.launches_path, line, self.launches_owner)
        except (OSError, KeyError, ValueError) as err:
            self.log.error("LTI launch of %s not recorded in %s: %s", name, self.launches_path, err)


def write_launch(path: str, line: dict, reader: str = "") -> None:
    """Append ``line`` as JSON to ``path``.  Run as root (the hub), the folder and file are root's
    (0750/0640) with the group of the Unix user ``reader`` (the grader account), who can read but not
    replace them; a folder that is a link or not root's is refused (``ValueError``), so nobody can
    steer the hub's writes elsewhere.  Students never read it (it holds everyone's email)."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o750, exist_ok=True)
    st = os.lstat(folder)
    root = os.geteuid() == 0
    if not stat.S_ISDIR(st.st_mode) or (root and st.st_uid != 0):
        raise ValueError(f"{folder} is not a directory owned by root")
    gid = pwd.getpwnam(reader).pw_gid if (root and reader) else -1
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o640 if root else 0o600)
    try:
        if root:
            os.chown(folder, 0, gid, follow_symlinks=False)
            os.chmod(folder, 0o750)
            os.fchown(fd, 0, gid)
            os.fchmod(fd, 0o640)
        os.write(fd, (json.dumps(line, sort_keys=True) + "\n").encode())
    finally:
        os.close(fd)


#: Where the hub records launches by default (``{course}``: the course id); attnlab_grader.classroom.lti
#: reads the same default (checked by the lms tests).
LAUNCHES_DEFAULT = "/var/lib/attnlab-lti/{course}/launches.jsonl"


def configure(c, env=os.environ) -> None:
    """Set the hub's LTI 1.3 login on config ``c`` from ``env`` (``ATTNLAB_LTI_*``; see
    deploy/jupyterhub/README.md).  Raises ``SystemExit`` naming a missing required setting."""
    need = ["ATTNLAB_LTI_ISSUER", "ATTNLAB_LTI_CLIENT_ID", "ATTNLAB_LTI_AUTHORIZE_URL", "ATTNLAB_LTI_JWKS_URL"]
    missing = [k for k in need if not env.get(k)]
    if missing:
        raise SystemExit(f"LTI login needs {', '.join(missing)} (the platform's values from the tool "
                         "registration); set them in the hub's environment.")
    course = env.get("ATTNLAB_COURSE_ID", "attnlab")
    grader = env.get("ATTNLAB_GRADER_USER", f"grader-{course}")
    c.JupyterHub.authenticator_class = AttnlabLTI13Authenticator
    a = c.AttnlabLTI13Authenticator
    a.issuer = env["ATTNLAB_LTI_ISSUER"]
    a.client_id = {x for x in env["ATTNLAB_LTI_CLIENT_ID"].split(",") if x}
    a.authorize_url = env["ATTNLAB_LTI_AUTHORIZE_URL"]
    a.jwks_endpoint = env["ATTNLAB_LTI_JWKS_URL"]
    a.username_key = env.get("ATTNLAB_LTI_USERNAME_CLAIM", "sub")
    a.course_id = course
    a.require_unix_account = env.get("ATTNLAB_LTI_REQUIRE_UNIX_ACCOUNT", "1") != "0"
    a.launches_path = env.get("ATTNLAB_LTI_LAUNCHES", LAUNCHES_DEFAULT.format(course=course))
    a.launches_owner = grader
    a.manage_groups = True  # the launch decides the groups: a changed LMS role applies at the next launch
    a.admin_users = set()
    a.enable_auth_state = bool(env.get("JUPYTERHUB_CRYPT_KEY"))  # keep the launch claims only encrypted
    if env.get("ATTNLAB_LTI_URI_SCHEME"):
        a.uri_scheme = env["ATTNLAB_LTI_URI_SCHEME"]
