"""LTI 1.3 end to end against a local platform (:mod:`attnlab_grader.tests.lti_platform`): launches into a
real JupyterHub running the production authenticator (``deploy/jupyterhub/attnlab_lti.py``, set by
its ``configure``), then names into the gradebook and scores back through AGS with pylti1p3.

The hub runs as a subprocess on loopback with a stand-in proxy (the hub's own port serves ``/hub/``)
and a probe service whose token reads the users' groups and roles; everything lives in a private
(0700) temporary folder, and the hub is stopped even when a test fails.
"""
from __future__ import annotations

import csv
import html.parser
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import requests

from attnlab_grader.tests.lti_platform import INSTRUCTOR, LEARNER, TA, Platform, new_key, pem

pytestmark = pytest.mark.xdist_group("lms")  # one hub per run: the module's tests stay on one worker

REPO = Path(__file__).resolve().parents[3]
DEPLOY = REPO / "deploy" / "jupyterhub"
CLIENT_ID = "attnlab-tool"
COURSE = "attnlab"
RUN = uuid.uuid4().hex[:6]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Form(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.action, self.fields = None, {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.action = a.get("action")
        elif tag == "input":
            self.fields[a["name"]] = a.get("value", "")


HUB_CONFIG = """
import sys
sys.path.insert(0, {deploy!r})
import attnlab_lti
from jupyterhub.proxy import Proxy

class NoProxy(Proxy):
    '''The test talks to the hub's own port; nothing needs routing.'''
    should_start = False
    async def add_route(self, routespec, target, data): pass
    async def delete_route(self, routespec): pass
    async def get_all_routes(self): return {{}}

c = get_config()
attnlab_lti.configure(c, {env!r})
c.AttnlabLTI13Authenticator.require_unix_account = {require_unix!r}
c.AttnlabLTI13Authenticator.launches_owner = ''
c.JupyterHub.proxy_class = NoProxy
c.JupyterHub.hub_bind_url = 'http://127.0.0.1:{port}'
c.JupyterHub.bind_url = 'http://127.0.0.1:{port}'
c.JupyterHub.db_url = 'sqlite:///{state}/hub.sqlite'
c.JupyterHub.cookie_secret_file = '{state}/cookie_secret'
c.JupyterHub.services = [{{'name': 'probe', 'api_token': {token!r}}}]
c.JupyterHub.load_roles = [{{'name': 'probe', 'services': ['probe'],
                            'scopes': ['list:users', 'read:users', 'read:groups', 'read:roles:users']}}]
"""


@pytest.fixture(scope="module")
def lms(tmp_path_factory):
    """A running platform and hub: ``(platform, hub_url, probe_token, launches_path, tool_key)``."""
    base = tmp_path_factory.mktemp("lms")
    os.chmod(base, 0o700)
    port = _free_port()
    hub = f"http://127.0.0.1:{port}"
    tool_key = new_key()
    platform = Platform(CLIENT_ID, f"{hub}/hub/lti13/oauth_callback", tool_key.public_key()).start()
    token = secrets.token_hex(16)
    launches = base / "grader-home" / "lti" / "launches.jsonl"
    env = {"ATTNLAB_LTI_ISSUER": platform.issuer, "ATTNLAB_LTI_CLIENT_ID": CLIENT_ID,
           "ATTNLAB_LTI_AUTHORIZE_URL": f"{platform.url}/auth", "ATTNLAB_LTI_JWKS_URL": f"{platform.url}/jwks",
           "ATTNLAB_COURSE_ID": COURSE, "ATTNLAB_LTI_LAUNCHES": str(launches)}
    (base / "state").mkdir()
    cfg = base / "hub_config.py"
    cfg.write_text(HUB_CONFIG.format(deploy=str(DEPLOY), env=env, require_unix=False, port=port,
                                     state=base / "state", token=token))
    log = open(base / "hub.log", "w")
    hub_bin = Path(sys.executable).parent / "jupyterhub"
    proc = subprocess.Popen([str(hub_bin), "-f", str(cfg)], cwd=base, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{hub}/hub/health", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the test hub did not start:\n" + (base / "hub.log").read_text()[-3000:])
            time.sleep(0.2)
        yield platform, hub, token, launches, tool_key, base
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        platform.stop()


def launch(lms, claims: dict, forge: str | None = None) -> tuple[requests.Session, requests.Response]:
    """One LTI launch as a browser makes it: the platform's login initiation POST to the hub, the
    hub's redirect to the platform's /auth, the platform's auto-posted form back to the hub."""
    platform, hub, *_ = lms
    hint = uuid.uuid4().hex
    platform.users[hint] = claims
    platform.forge = forge
    s = requests.Session()
    try:
        r = s.post(f"{hub}/hub/lti13/oauth_login", data={
            "iss": platform.issuer, "login_hint": hint, "target_link_uri": f"{hub}/hub/home",
            "client_id": CLIENT_ID, "lti_message_hint": "rl-1"}, timeout=30)
        assert r.status_code == 200 and "<form" in r.text, (r.status_code, r.text[:300], platform.refused)
        form = _Form()
        form.feed(r.text)
        assert form.action == f"{hub}/hub/lti13/oauth_callback"
        return s, s.post(form.action, data=form.fields, allow_redirects=False, timeout=30)
    finally:
        platform.forge = None


def person(role_uris, **extra) -> dict:
    sub = f"lms-{RUN}-{uuid.uuid4().hex[:8]}"
    return {"sub": sub, "https://purl.imsglobal.org/spec/lti/claim/roles": role_uris,
            "given_name": "Ada", "family_name": "Lovelace", "name": "Ada Lovelace",
            "email": f"{sub}@example.edu", **extra}


def hub_user(lms, name: str) -> dict:
    _, hub, token, *_ = lms
    r = requests.get(f"{hub}/hub/api/users/{name}", headers={"Authorization": f"token {token}"}, timeout=10)
    assert r.ok, r.text
    return r.json()


def logged_in(s: requests.Session, resp) -> bool:
    return resp.status_code == 302 and "jupyterhub-hub-login" in s.cookies


def test_lms_learner_launch_logs_in_as_student(lms):
    """A Learner's launch logs into the hub as a student: the sub is the username, the only group is
    the course's students group, no admin rights, and the hub's admin page answers 403."""
    who = person([LEARNER, "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"])
    s, r = launch(lms, who)
    assert logged_in(s, r), (r.status_code, r.text[:500])
    assert r.headers["Location"].endswith("/hub/home")
    user = hub_user(lms, who["sub"])
    assert user["groups"] == [f"nbgrader-{COURSE}"] and user["admin"] is False
    assert user["roles"] == ["user"]
    assert s.get(f"{lms[1]}/hub/admin", allow_redirects=False, timeout=10).status_code == 403
    # the session is the student's, for the hub too
    me = s.get(f"{lms[1]}/hub/api/user", timeout=10)
    assert me.ok and me.json()["name"] == who["sub"]


def test_lms_instructor_launch_becomes_instructor(lms):
    """An Instructor launch: formgrader's group and the instructors' group, still no hub admin."""
    who = person([INSTRUCTOR])
    s, r = launch(lms, who)
    assert logged_in(s, r), r.text[:500]
    user = hub_user(lms, who["sub"])
    assert sorted(user["groups"]) == [f"formgrade-{COURSE}", f"instructors-{COURSE}"]
    assert user["admin"] is False


def test_lms_teaching_assistant_gets_grader_role_only(lms):
    """A TA (sent as Instructor + Instructor#TeachingAssistant, as platforms do) is a grader only:
    formgrader's group, not an instructor, not admin; the admin page and the user list are denied."""
    who = person([INSTRUCTOR, TA])
    s, r = launch(lms, who)
    assert logged_in(s, r), r.text[:500]
    user = hub_user(lms, who["sub"])
    assert user["groups"] == [f"formgrade-{COURSE}"] and user["admin"] is False
    assert s.get(f"{lms[1]}/hub/admin", allow_redirects=False, timeout=10).status_code == 403
    assert s.get(f"{lms[1]}/hub/api/users", timeout=10).status_code == 403


def test_lms_role_change_in_the_lms_applies_at_the_next_launch(lms):
    """An instructor demoted to learner in the LMS loses formgrader at the next launch (the launch
    manages the groups; nothing is left from the earlier role)."""
    who = person([INSTRUCTOR])
    s, r = launch(lms, who)
    assert logged_in(s, r) and f"formgrade-{COURSE}" in hub_user(lms, who["sub"])["groups"]
    s, r = launch(lms, {**who, "https://purl.imsglobal.org/spec/lti/claim/roles": [LEARNER]})
    assert logged_in(s, r)
    assert hub_user(lms, who["sub"])["groups"] == [f"nbgrader-{COURSE}"]


def test_lms_captured_launch_replayed_elsewhere_is_refused(lms):
    """A launch form (id_token + state) captured and posted from another browser, or posted twice
    from the same one, is refused: the OIDC state and nonce live in the first browser's cookies and are
    used up by the first post; stolen together with those cookies, the used nonce refuses it."""
    platform, hub, *_ = lms
    hint = uuid.uuid4().hex
    platform.users[hint] = person([INSTRUCTOR])
    s = requests.Session()
    r = s.post(f"{hub}/hub/lti13/oauth_login", data={"iss": platform.issuer, "login_hint": hint,
               "target_link_uri": f"{hub}/hub/home", "client_id": CLIENT_ID}, timeout=30)
    form = _Form()
    form.feed(r.text)
    thief = requests.Session()
    stolen = thief.post(form.action, data=form.fields, allow_redirects=False, timeout=30)
    assert stolen.status_code == 400 and not logged_in(thief, stolen)
    captured = dict(s.cookies.items())  # what a thief who also stole the cookies would hold
    first = s.post(form.action, data=form.fields, allow_redirects=False, timeout=30)
    assert logged_in(s, first)
    replay = s.post(form.action, data=form.fields, allow_redirects=False, timeout=30)
    assert replay.status_code == 400  # the state cookie was used up
    # with the first browser's cookies as they were before the launch: the nonce was used
    both = requests.Session()
    both.cookies.update(captured)
    replay = both.post(form.action, data=form.fields, allow_redirects=False, timeout=30)
    assert replay.status_code == 403 and "already used" in replay.text and not logged_in(both, replay)


@pytest.mark.parametrize("roles", [["http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"],
                                   ["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"],
                                   []])
def test_lms_unknown_or_missing_role_is_refused(lms, roles):
    """A launch whose course role is unknown (Mentor), only institutional, or absent is refused with
    a message saying so; no hub user is made."""
    who = person(roles)
    s, r = launch(lms, who)
    assert r.status_code == 403 and not logged_in(s, r)
    assert "gives no access to the course hub" in r.text
    _, hub, token, *_ = lms
    assert requests.get(f"{hub}/hub/api/users/{who['sub']}", headers={"Authorization": f"token {token}"},
                        timeout=10).status_code == 404


@pytest.mark.parametrize("forge,code", [("tampered", 400), ("other_key", 400), ("expired", 400),
                                        ("wrong_audience", 401)])
def test_lms_forged_token_is_refused(lms, forge, code):
    """An id_token whose payload was edited (Learner → Instructor), signed by a key the platform's
    JWKS does not hold, expired, or for another tool is refused by the authenticator's verification."""
    who = person([LEARNER])
    s, r = launch(lms, who, forge=forge)
    assert r.status_code == code and not logged_in(s, r), (r.status_code, r.text[:300])
    _, hub, token, *_ = lms
    assert requests.get(f"{hub}/hub/api/users/{who['sub']}", headers={"Authorization": f"token {token}"},
                        timeout=10).status_code == 404


def _verified(claims: dict) -> dict:
    """Claims as the upstream validator hands them on (with a fresh nonce)."""
    return {**claims, "iss": "https://lms.example.edu", "nonce": uuid.uuid4().hex}


def test_lms_launch_without_the_username_claim_is_refused():
    """The username comes from the configured claim only: a launch without it is refused (the
    upstream fallback to another claim would silently give the person a second account)."""
    import asyncio
    sys.path.insert(0, str(DEPLOY))
    import attnlab_lti
    auth = attnlab_lti.AttnlabLTI13Authenticator(username_key="custom_login", require_unix_account=False)
    from tornado.web import HTTPError
    with pytest.raises(HTTPError) as err:
        asyncio.run(auth.authenticate(None, _verified(person([LEARNER]))))
    assert err.value.status_code == 403 and "custom_login" in err.value.log_message
    ok = asyncio.run(auth.authenticate(None, _verified(person(
        [LEARNER], **{"https://purl.imsglobal.org/spec/lti/claim/custom": {"login": "Alice.B"}}))))
    assert ok["name"] == "alice.b" and ok["groups"] == ["nbgrader-attnlab"] and ok["admin"] is False
    with pytest.raises(HTTPError) as err:  # a name that cannot be a student id
        asyncio.run(auth.authenticate(None, _verified(person(
            [LEARNER], **{"https://purl.imsglobal.org/spec/lti/claim/custom": {"login": "a+b/c"}}))))
    assert err.value.status_code == 403 and "cannot be a course login" in err.value.log_message
    launch_ = _verified(person([LEARNER], **{"https://purl.imsglobal.org/spec/lti/claim/custom": {"login": "bo"}}))
    assert asyncio.run(auth.authenticate(None, launch_))["name"] == "bo"
    with pytest.raises(HTTPError, match="already used"):  # the same verified launch twice
        asyncio.run(auth.authenticate(None, launch_))
    unix = attnlab_lti.AttnlabLTI13Authenticator(username_key="sub")  # require_unix_account: the default
    with pytest.raises(HTTPError) as err:
        asyncio.run(unix.authenticate(None, _verified(person([LEARNER], sub=f"nosuchuser{RUN}"))))
    assert err.value.status_code == 403 and "no account" in err.value.log_message


def test_lms_role_mapping_is_least_privilege():
    """Several course roles → the least privileged; institution/system roles never count."""
    sys.path.insert(0, str(DEPLOY))
    import attnlab_lti as a
    assert a.hub_role([LEARNER, INSTRUCTOR]) == a.STUDENT
    assert a.hub_role([INSTRUCTOR, TA]) == a.GRADER
    assert a.hub_role(["Instructor"]) == a.INSTRUCTOR
    assert a.hub_role(["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Faculty",
                       "http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator"]) is None
    assert a.hub_role("Instructor") is None and a.hub_role(None) is None


def test_lms_fragment_loads_the_production_config(tmp_path, monkeypatch):
    """lti.py loads jupyterhub_config.py and switches only the login: the LTI authenticator,
    groups managed by it (no static group membership, which JupyterHub refuses then), no PAM group
    allow list; a missing platform setting stops the hub with a sentence naming it."""
    from traitlets.config.loader import PyFileConfigLoader
    for k, v in {"ATTNLAB_LTI_ISSUER": "https://lms.example.edu", "ATTNLAB_LTI_CLIENT_ID": "c1",
                 "ATTNLAB_LTI_AUTHORIZE_URL": "https://lms.example.edu/auth",
                 "ATTNLAB_LTI_JWKS_URL": "https://lms.example.edu/jwks",
                 "ATTNLAB_HUB_STATE": str(tmp_path)}.items():
        monkeypatch.setenv(k, v)
    for k in ("ATTNLAB_LTI_LAUNCHES", "ATTNLAB_COURSE_ID", "ATTNLAB_LTI_USERNAME_CLAIM"):
        monkeypatch.delenv(k, raising=False)
    cfg = PyFileConfigLoader("lti.py", path=str(DEPLOY)).load_config()
    assert cfg.JupyterHub.authenticator_class.__name__ == "AttnlabLTI13Authenticator"
    assert cfg.AttnlabLTI13Authenticator.manage_groups is True
    assert cfg.AttnlabLTI13Authenticator.client_id == {"c1"}
    assert not cfg.JupyterHub.load_groups and not cfg.Authenticator.allowed_groups
    settings = cfg.JupyterHub.tornado_settings
    settings = settings.get_value({}) if hasattr(settings, "get_value") else settings
    assert settings["cookie_options"] == {"SameSite": "None", "Secure": True}
    assert cfg.AttnlabLTI13Authenticator.launches_path == "/var/lib/attnlab-lti/attnlab/launches.jsonl"
    from attnlab_grader.classroom import lti
    assert str(lti.default_launches()) == cfg.AttnlabLTI13Authenticator.launches_path
    monkeypatch.delenv("ATTNLAB_LTI_JWKS_URL")
    with pytest.raises(SystemExit, match="ATTNLAB_LTI_JWKS_URL"):
        PyFileConfigLoader("lti.py", path=str(DEPLOY)).load_config()


@pytest.mark.skipif(os.geteuid() != 0, reason="the hub writes the launch record as root")
def test_lms_launch_record_cannot_be_redirected_by_the_grader(tmp_path):
    """As the grader account would try: the record's folder replaced by a link to another folder,
    or a folder the grader owns — the hub (root) refuses to write there; the record it writes is
    root's, 0640, readable by the grader's group only."""
    sys.path.insert(0, str(DEPLOY))
    import attnlab_lti
    target = tmp_path / "etc"
    target.mkdir()
    (tmp_path / "lti").symlink_to(target)
    with pytest.raises(ValueError, match="not a directory owned by root"):
        attnlab_lti.write_launch(str(tmp_path / "lti" / "launches.jsonl"), {"username": "x"})
    assert list(target.iterdir()) == []
    owned = tmp_path / "owned"
    owned.mkdir()
    os.chown(owned, 65534, 65534)  # nobody: a folder some user could swap files in
    with pytest.raises(ValueError):
        attnlab_lti.write_launch(str(owned / "launches.jsonl"), {"username": "x"})
    ok = tmp_path / "ok" / "launches.jsonl"
    attnlab_lti.write_launch(str(ok), {"username": "x"}, "nobody")
    st, dst = ok.stat(), ok.parent.stat()
    assert (st.st_uid, st.st_mode & 0o777, dst.st_mode & 0o777) == (0, 0o640, 0o750)
    import pwd
    assert st.st_gid == pwd.getpwnam("nobody").pw_gid


# ---------------------------------------------------------------------------- names and passback
def _course(base: Path, students: dict[str, str]) -> tuple[Path, str]:
    """A course folder with a SQLite gradebook holding assignment 03_masks (max 10)."""
    from attnlab_grader.records.course import _quiet_imports
    _quiet_imports()  # as the grader does before it opens a gradebook
    from nbgrader.api import Gradebook
    course = base / "course"
    course.mkdir(exist_ok=True)
    url = f"sqlite:///{course / 'gradebook.db'}"
    with Gradebook(url, "attnlab") as gb:
        gb.update_or_create_assignment("03_masks")
        for sid in students:
            gb.update_or_create_student(sid)
    return course, url


def _sheet(course: Path, rows: list[dict]) -> None:
    from attnlab_grader.steps.export import FIELDS
    with open(course / "grades.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({"assignment": "03_masks", "max_score": 10, **r})


def _tool_config(base: Path, platform: Platform, tool_key) -> Path:
    (base / "tool.key").write_bytes(pem(tool_key))
    os.chmod(base / "tool.key", 0o600)
    cfg = base / "lti-tool.json"
    cfg.write_text(json.dumps({platform.issuer: [{
        "default": True, "client_id": CLIENT_ID, "auth_login_url": f"{platform.url}/auth",
        "auth_token_url": f"{platform.url}/token", "key_set_url": f"{platform.url}/jwks",
        "private_key_file": "tool.key", "deployment_ids": [platform.deployment_id]}]}))
    return cfg


def _grade_cli(*args):
    """``attnlab-grade ARGS`` in this process (click's runner): ``returncode``, ``stdout``, ``stderr``."""
    from click.testing import CliRunner

    from attnlab_grader.classroom.main import cli
    res = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    res.returncode = res.exit_code
    return res


def test_lms_roster_and_passback_send_final_scores_to_the_platform(lms):
    """Students launch through the hub (their names and LTI ids land in the launch record);
    ``lti-roster`` puts the names into nbgrader's gradebook (formgrader no longer shows "None,
    None"); ``lti-passback`` gets a token by the client-credentials JWT grant, creates the line item
    and posts each graded student's final score (after the late penalty) — and nothing for the
    flagged, pending, missing rows or a student who never launched, which it lists."""
    platform, hub, _, launches, tool_key, base = lms
    people = {k: person([LEARNER], given_name=k.capitalize(), family_name=f"Of{k.capitalize()}")
              for k in ("ana", "ben", "cy", "dee", "eve")}
    for who in people.values():
        s, r = launch(lms, who)
        assert logged_in(s, r)
    teacher = person([INSTRUCTOR])
    s, r = launch(lms, teacher)  # instructors are not put in the gradebook
    assert logged_in(s, r)
    ids = {k: who["sub"] for k, who in people.items()}
    course, url = _course(base, {**{v: k for k, v in ids.items()}, "nolaunch": ""})
    out = _grade_cli("lti-roster", course, "--launches", launches, "--db", url)
    assert out.returncode == 0, out.stderr
    from nbgrader.api import Gradebook
    with Gradebook(url, "attnlab") as gb:
        ana = gb.find_student(ids["ana"])
        assert (ana.first_name, ana.last_name, ana.lms_user_id) == ("Ana", "OfAna", ids["ana"])
        assert ana.email == people["ana"]["email"]
        assert {st.id for st in gb.students} >= set(ids.values())
        assert not {st.id for st in gb.students} & {teacher["sub"]}  # instructors are not students

    _sheet(course, [
        {"student_id": ids["ana"], "score": 9, "status": "graded", "late_penalty": 0, "final_score": 9},
        {"student_id": ids["ben"], "score": 8, "status": "graded", "late_penalty": 2, "final_score": 6},
        {"student_id": ids["cy"], "score": 7, "status": "flagged", "final_score": 7},
        {"student_id": ids["dee"], "score": 4, "status": "manual_pending", "final_score": 4},
        {"student_id": ids["eve"], "score": 0, "status": "missing", "final_score": 0},
        {"student_id": "nolaunch", "score": 10, "status": "graded", "final_score": 10},
    ])
    tool = _tool_config(base, platform, tool_key)
    out = _grade_cli("lti-passback", course, "-a", "03_masks", "--tool-config", tool, "--csv", course / "grades.csv",
                     "--launches", launches,
                     "--db", url)
    assert out.returncode == 1, out.stdout + out.stderr  # some were not sent: listed, and the command fails
    assert "4 score(s) of 03_masks were not sent" in out.stderr
    [item] = platform.lineitems
    assert item["resourceId"] == "03_masks" and item["scoreMaximum"] == 10
    got = {s["userId"]: (s["scoreGiven"], s["scoreMaximum"], s["gradingProgress"])
           for s in platform.scores[item["id"]]}
    assert got == {ids["ana"]: (9, 10, "FullyGraded"), ids["ben"]: (6, 10, "FullyGraded")}
    for k in ("cy", "dee", "eve"):
        assert f"not sent: {ids[k]}" in out.stderr
    assert "not sent: nolaunch: no LTI user id" in out.stderr
    assert "2 score(s) sent" in out.stdout

    # again: the line item is found, not created twice; a new score for ben replaces nothing else
    out = _grade_cli("lti-passback", course, "-a", "03_masks", "--tool-config", tool, "--csv", course / "grades.csv",
                     "--launches", launches,
                     "--db", url, "--allow-partial")
    assert out.returncode == 0 and len(platform.lineitems) == 1
    assert len(platform.scores[item["id"]]) == 4


def test_lms_passback_refused_token_sends_nothing(lms, tmp_path):
    """A tool key the platform does not know: the token request is refused (401), the command
    fails in one sentence naming it and no score reaches the platform."""
    platform, hub, _, launches, _, base = lms
    who = person([LEARNER])
    s, r = launch(lms, who)
    assert logged_in(s, r)
    course, url = _course(tmp_path, {who["sub"]: ""})
    with __import__("nbgrader.api").api.Gradebook(url, "attnlab") as gb:
        gb.update_or_create_student(who["sub"], lms_user_id=who["sub"])
    _sheet(course, [{"student_id": who["sub"], "score": 5, "status": "graded", "final_score": 5}])
    before = sum(len(v) for v in platform.scores.values())
    tool = _tool_config(tmp_path, platform, new_key())
    out = _grade_cli("lti-passback", course, "-a", "03_masks", "--tool-config", tool, "--csv", course / "grades.csv",
                     "--lineitems", f"{platform.url}/lineitems", "--db", url)
    assert out.returncode != 0 and "HTTP 401" in out.stderr and "scores already sent: none" in out.stderr
    assert sum(len(v) for v in platform.scores.values()) == before
    assert any("client assertion refused" in why for why in platform.refused)


def test_lms_passback_bad_input_is_one_sentence(tmp_path):
    """No line items URL, or an assignment the sheet does not have: a clear error, nothing sent."""
    course, url = _course(tmp_path, {"s1": ""})
    _sheet(course, [{"student_id": "s1", "score": 5, "status": "graded", "final_score": 5}])
    tool = tmp_path / "lti-tool.json"
    tool.write_text("{}")
    out = _grade_cli("lti-passback", course, "-a", "03_masks", "--tool-config", tool, "--csv", course / "grades.csv",
                     "--db", url)
    assert out.returncode != 0 and "no line items URL" in out.stderr
    out = _grade_cli("lti-passback", course, "-a", "99_nope", "--tool-config", tool, "--csv", course / "grades.csv",
                     "--lineitems", "http://127.0.0.1:9/lineitems", "--db", url)
    assert out.returncode != 0 and "no rows for '99_nope'" in out.stderr
    out = _grade_cli("lti-passback", course, "-a", "03_masks", "--tool-config", tool, "--csv", course / "grades.csv",
                     "--lineitems", "http://127.0.0.1:9/lineitems", "--db", url)
    assert out.returncode != 0 and "registers no platform" in out.stderr
    key = tmp_path / "k.pem"
    key.write_bytes(pem(new_key()))
    tool.write_text(json.dumps({"https://lms.example.edu": {
        "client_id": "c", "auth_login_url": "x", "auth_token_url": "http://127.0.0.1:9/token",
        "key_set_url": "x", "private_key_file": str(key), "deployment_ids": ["d"]}}))
    out = _grade_cli("lti-passback", course, "-a", "03_masks", "--tool-config", tool, "--csv", course / "grades.csv",
                     "--issuer", "https://other",
                     "--lineitems", "http://127.0.0.1:9/lineitems", "--db", url)
    assert out.returncode != 0 and "it has https://lms.example.edu" in out.stderr


def test_lms_hub_pins_agree_with_the_tested_versions():
    """The hub's LTI packages (requirements-lti.txt) and its JupyterHub (requirements-hub.txt) are the
    versions these tests ran (constraints/py3.11.txt)."""
    def pins(path):
        out = {}
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if "==" in line:
                name, version = line.split("==")
                out[name.strip().lower().replace("_", "-")] = version.strip()
        return out
    lock = pins(REPO / "constraints" / "py3.11.txt")
    lti = pins(DEPLOY / "requirements-lti.txt")
    assert lti["jupyterhub-ltiauthenticator"] == "1.6.3"
    assert {k: lock.get(k) for k in lti} == lti
    assert pins(DEPLOY / "requirements-hub.txt")["jupyterhub"] == lock["jupyterhub"]
