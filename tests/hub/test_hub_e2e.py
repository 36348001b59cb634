"""A class installed by ``deploy/jupyterhub/install.sh`` and used over real HTTP as each role.

One install (the production configuration: PAM logins with real passwords, the formgrader
service, the idle culler, PostgreSQL where Debian's package is installed), many checks, then
``install.sh --uninstall``; everything is named after this run (course ``c<hex>``, users
``c<hex>s1`` ...), so two runs on one machine never meet, and the fixture removes what the run made
even when a check fails.

=============  =================================================================================
c<hex>s1, s2   students: log in with their passwords, get JupyterLab without instructor tools,
               pull the lessons (no solutions) with nbgitpuller, fetch, fill and submit the
               exercise, fetch their feedback; every protected file is then read *as them* and
               must be refused, and the grader-only packages cannot be imported or listed
c<hex>in       the instructor: releases, collects, generates and returns feedback in formgrader;
               checks that formgrader's terminal finds ``python`` and ``nbgrader``
c<hex>ta       a grader (TA): reaches formgrader, gets 403 on the hub's admin page and user list
               and cannot reach a student's server
grader-c<hex>  the account install.sh makes; formgrader runs as it and it grades with the
               documented command in a login shell (as in formgrader's terminal), with the
               grader-only packages (the PostgreSQL driver ...) the students' environment lacks
=============  =================================================================================

On the same class, faults as its people meet them: a student's exchange folder made before the
install; the hub killed (SIGKILL) while grading runs, recovered with ``install.sh ... --start``;
week two (manual grades, a resubmission, two regrade requests at the same moment, an extension, one
re-grade, a regrade, the LMS export); a move to another port; an uninstall under 30 s.

Timings go to ``artifacts/hub/measurements.json`` (figures for planning: ``deploy/SIZING.md``).
"""
from __future__ import annotations

import csv
import io
import json
import os
import pwd
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from suite_settings import suite_settings

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("hub")]

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "deploy" / "jupyterhub" / "install.sh"
HUB_HOME = suite_settings().hub_home
COURSE_ENV = HUB_HOME / "course-env"
ARTIFACTS = ROOT / "artifacts" / "hub"
A = "02_scaled_dot_product_attention"
#: names unique to this run: two runs on one machine never touch each other's users or class
RUN = secrets.token_hex(3)
COURSE = f"c{RUN}"
STUDENTS = (f"{COURSE}s1", f"{COURSE}s2")
INSTRUCTOR, TA = f"{COURSE}in", f"{COURSE}ta"
GRADER = f"grader-{COURSE}"
#: what each student submits: the reference answers, or the reference with one QA mistake
SUBMISSION = {STUDENTS[0]: None, STUDENTS[1]: "scores_no_scale"}
#: import names of the instructor's code and of the distributions the grader's distribution requires
#: (psycopg, copydetect, pylti1p3, pyjwt)
GRADER_IMPORTS = ("attnlab_grader.classroom", "psycopg", "copydetect", "pylti1p3", "jwt")


def grader_extra() -> set[str]:
    """The grader's distribution and the distributions it requires but attnlab (autograder/pyproject.toml;
    normalized names), read as pip reads them."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    project = tomllib.loads((ROOT / "autograder" / "pyproject.toml").read_text())["project"]
    return {canonicalize_name(project["name"])} | {
        canonicalize_name(Requirement(r).name) for r in project["dependencies"]} - {"attnlab"}


#: tries each import (and each distribution's metadata) and prints what it found: nothing, for a student
PROBE = ("import importlib, importlib.metadata as md, sys\n"
         "for name in sys.argv[1].split(','):\n"
         "    try:\n        importlib.import_module(name); print('IMPORTED', name)\n"
         "    except ImportError:\n        pass\n"
         "for dist in sys.argv[2].split(','):\n"
         "    try:\n        md.distribution(dist); print('INSTALLED', dist)\n"
         "    except md.PackageNotFoundError:\n        pass\n")


def _missing() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root: install.sh creates accounts and groups and the hub spawns servers as the users"
    for tool in ("useradd", "userdel", "chpasswd", "runuser", "git", "dpkg-query"):
        if not shutil.which(tool):
            return f"{tool} not found"
    for path, what in ((HUB_HOME / "hub" / "bin" / "jupyterhub-idle-culler", "JupyterHub"),
                       (HUB_HOME / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy",
                        "configurable-http-proxy"),
                       (COURSE_ENV / ".attnlab-stamp", "the shared course environment")):
        if not path.exists():
            return f"{what} is not installed in {HUB_HOME}: run scripts/ensure_hub.sh (as root)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _uids() -> dict[str, int]:
    out = {}
    for u in (*STUDENTS, INSTRUCTOR, TA, GRADER):
        try:
            out[u] = pwd.getpwnam(u).pw_uid
        except KeyError:
            pass
    return out


def _live_pids_of(uid: int) -> list[int]:
    """The processes of ``uid`` that still run (not zombies, which only wait for their parent to reap them)."""
    live = []
    for pid in _pids_of(uid):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # gone meanwhile
        if state != "Z":
            live.append(pid)
    return live


def _pids_of(uid: int) -> list[int]:
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                out.append(int(pid))
        except OSError:
            continue
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class Klass:
    """The installed class: paths, ports, and HTTP helpers."""

    def __init__(self, base: Path, port: int):
        self.base, self.port, self.url = base, port, f"http://127.0.0.1:{port}"
        self.srv = base / "srv"
        #: the administrator's checkout the class is installed from: a copy of this one, so that install.sh
        #: closing it to others (it holds solutions/) never touches the clone the rest of the suite reads
        self.checkout = base / "checkout"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "VIRTUAL_ENV", "ATTNLAB_"))}
        self.env.update({"ATTNLAB_COURSE_ID": COURSE, "ATTNLAB_SRV": str(self.srv),
                         "ATTNLAB_HUB_HOME": str(HUB_HOME)})
        self.passwords = {u: secrets.token_urlsafe(12) for u in (*STUDENTS, INSTRUCTOR, TA)}
        self.tokens: dict[str, str] = {}
        self.sessions: dict = {}  # the logged-in browser sessions (cookies)
        self.timings: dict[str, float] = {}

    def install(self, *extra: str, timeout: float = 600) -> subprocess.CompletedProcess:
        script = self.checkout / INSTALL.relative_to(ROOT)
        return subprocess.run(["bash", str(script), *extra], env=self.env, capture_output=True, text=True,
                              timeout=timeout, cwd="/")

    def settings(self) -> dict[str, str]:
        text = (self.srv / "hub" / "class.env").read_text()
        return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def log_tail(self, n: int = 40) -> str:
        log = self.srv / "hub" / "jupyterhub.log"
        return "\n".join(log.read_text(errors="replace").splitlines()[-n:]) if log.exists() else "(no hub log)"

    def request(self, method: str, path: str, user: str | None = None, **kw):
        import requests
        headers = kw.pop("headers", {})
        if user:
            headers["Authorization"] = f"token {self.tokens[user]}"
        return requests.request(method, self.url + path, headers=headers, timeout=kw.pop("timeout", 120), **kw)

    def check(self, r, what: str):
        assert r.status_code < 400, f"{what}: HTTP {r.status_code} {r.text[:800]}\nhub log:\n{self.log_tail()}"
        return r


def _uninstall_and_remove(k: Klass, created: list[str]) -> None:
    """Whatever happened: ``install.sh --uninstall``, then the run's own users and folders."""
    try:
        k.install("--uninstall", timeout=300)
    except Exception:  # noqa: BLE001 - cleanup goes on
        pass
    for uid in _uids().values():  # only this run's accounts
        for pid in _pids_of(uid):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
    for u in created:
        subprocess.run(["userdel", u], capture_output=True)
        subprocess.run(["groupdel", u], capture_output=True)
    for g in (f"{COURSE}-students", f"formgrade-{COURSE}", GRADER):
        subprocess.run(["groupdel", g], capture_output=True)
    subprocess.run(["userdel", GRADER], capture_output=True)
    shutil.rmtree(k.base, ignore_errors=True)


@pytest.fixture(scope="module")
def klass():
    reason = _missing()
    if reason:
        pytest.skip(f"hub e2e: {reason}")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix=f"attnlab-{COURSE}-"))
    base.chmod(0o755)
    k = Klass(base, _free_port())
    created: list[str] = []
    try:
        _copy_checkout(ROOT, k.checkout)
        homes = base / "home"
        homes.mkdir(mode=0o755)
        for u in k.passwords:  # ordinary accounts, as a university's user administration makes them
            r = subprocess.run(["useradd", "-m", "-d", str(homes / u), "-s", "/bin/bash", "-K", "UMASK=022", u],
                               capture_output=True, text=True)
            assert r.returncode == 0, f"useradd {u}: {r.stderr}"
            created.append(u)
        subprocess.run(["chpasswd"], input="".join(f"{u}:{p}\n" for u, p in k.passwords.items()),
                       text=True, check=True, capture_output=True)
        k.homes = homes
        # a student gets to the exchange first: a folder named after the course, theirs (nbgrader's
        # release would fail with "You don't own the directory"); install.sh must move it out
        (k.srv / "exchange").mkdir(parents=True)
        k.srv.chmod(0o755)
        (k.srv / "exchange").chmod(0o1777)
        r = as_user(STUDENTS[1], "mkdir", "-p", str(k.srv / "exchange" / COURSE / "inbound"))
        assert r.returncode == 0, r.stderr
        t0 = time.monotonic()
        r = k.install("--instructors", INSTRUCTOR, "--graders", TA, "--students", ",".join(STUDENTS),
                      "--port", str(k.port), "--start")
        k.timings["install_and_start_s"] = round(time.monotonic() - t0, 1)
        assert r.returncode == 0, f"install.sh failed:\n{r.stdout}\n{r.stderr}\n{k.log_tail()}"
        k.install_out = r.stdout
        yield k
    finally:
        if (k.srv / "hub" / "jupyterhub.log").exists():
            shutil.copy2(k.srv / "hub" / "jupyterhub.log", ARTIFACTS / "jupyterhub.log")
        _uninstall_and_remove(k, created)


def _copy_checkout(src: Path, dst: Path) -> None:
    """The files of checkout ``src`` that git tracks or would track (no .git, no ignored build outputs but the
    built website), with their modes, into ``dst`` (made 0755, as a fresh ``git clone`` is)."""
    listed = subprocess.run(["git", "-C", str(src), "ls-files", "-z", "-co", "--exclude-standard"],
                            capture_output=True, text=True, check=True).stdout.split("\0")
    built_site = src / "site" / "_build" / "html"  # make site's output (ignored by git), which install.sh serves
    if (built_site / "index.html").is_file():
        listed += [str(p.relative_to(src)) for p in built_site.rglob("*") if p.is_file()]
    dst.mkdir(mode=0o755)
    for rel in filter(None, listed):
        source = src / rel
        if source.is_file() and not source.is_symlink():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dst / rel)


def _open_to_others(path: Path) -> bool:
    """Whether every folder from ``/`` down to ``path`` lets other users through (o+x)."""
    return all(p.stat().st_mode & 0o001 for p in (path, *path.parents))


# ---------------------------------------------------------------------------------- steps
def login(k: Klass, user: str, password: str):
    """The hub's login form, as a browser posts it; returns the session (cookies) or None."""
    import requests
    s = requests.Session()
    s.get(k.url + "/hub/login", timeout=30)
    r = s.post(k.url + "/hub/login", data={"username": user, "password": password,
                                           "_xsrf": s.cookies.get("_xsrf", "")},
               allow_redirects=False, timeout=60)
    return s if r.status_code == 302 else None


def login_and_token(k: Klass, user: str) -> None:
    """Log in with the password (PAM) and make an API token from that browser session."""
    s = login(k, user, k.passwords[user])
    assert s is not None, f"{user} could not log in with their password:\n{k.log_tail()}"
    r = s.post(k.url + f"/hub/api/users/{user}/tokens", json={"note": "attnlab hub e2e", "expires_in": 3600},
               headers={"X-XSRFToken": next((c.value for c in s.cookies if c.name == "_xsrf"), "")},
               timeout=60)
    assert r.status_code < 400, f"{user}: token from the session: {r.status_code} {r.text[:300]}"
    k.tokens[user] = r.json()["token"]
    k.sessions[user] = s


def start_servers(k: Klass, users) -> dict[str, float]:
    t0, ready = time.monotonic(), {}
    for user in users:
        r = k.request("POST", f"/hub/api/users/{user}/server", user)
        assert r.status_code in (201, 202), f"start {user}'s server: {r.status_code} {r.text}\n{k.log_tail()}"
    deadline = time.monotonic() + 120
    while len(ready) < len(users):
        assert time.monotonic() < deadline, f"servers not ready after 120 s: {set(users) - set(ready)}\n{k.log_tail()}"
        for user in set(users) - set(ready):
            model = k.check(k.request("GET", f"/hub/api/users/{user}", user), "user model").json()
            if model.get("servers", {}).get("", {}).get("ready"):
                ready[user] = round(time.monotonic() - t0, 1)
        time.sleep(0.3)
    return ready


def server(k: Klass, user: str, method: str, path: str, what: str, **kw):
    return k.check(k.request(method, f"/user/{user}/{path.lstrip('/')}", user, **kw), f"{user}: {what}")


def formgrader(k: Klass, method: str, path: str, what: str, who: str = INSTRUCTOR, **kw):
    r = k.check(k.request(method, f"/services/{COURSE}/formgrader/api/{path.lstrip('/')}", who, **kw),
                f"formgrader: {what}")
    return r.json()


def page_config(html: str) -> dict:
    m = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', html, re.S)
    assert m, "no page config in the JupyterLab page"
    return json.loads(m.group(1))


def git_pull(k: Klass, user: str, repo: str) -> None:
    """nbgitpuller's own endpoint (what its /git-pull page streams) pulls the lessons."""
    r = server(k, user, "GET", "git-pull/api", "nbgitpuller", stream=True, timeout=120,
               params={"repo": repo, "branch": "main", "targetpath": "lessons"})
    events = []
    for line in r.iter_lines(decode_unicode=True):
        if line and line.startswith("data:"):
            ev = json.loads(line[5:])
            events.append(ev)
            if ev.get("phase") in ("finished", "error"):
                break
    assert events and events[-1].get("phase") == "finished", f"nbgitpuller: {events[-3:]}"


def terminal(k: Klass, user: str, prefix: str, command: str, timeout: float = 60) -> str:
    """Type ``command`` into a new terminal of the Jupyter server at ``prefix``; its output."""
    import websocket
    name = k.check(k.request("POST", f"{prefix}/api/terminals", user), "open a terminal").json()["name"]
    ws = websocket.create_connection(f"{k.url.replace('http', 'ws', 1)}{prefix}/terminals/websocket/{name}",
                                     header=[f"Authorization: token {k.tokens[user]}"], timeout=timeout)
    out = ""
    try:
        ws.send(json.dumps(["stdin", f"{command}; echo ATTNLAB-DONE-$((40+2))\r"]))  # the echo of the line: no 42
        deadline = time.monotonic() + timeout
        while "ATTNLAB-DONE-42" not in out:
            assert time.monotonic() < deadline, f"terminal gave no answer: {out[-500:]}"
            msg = json.loads(ws.recv())
            if msg[0] == "stdout":
                out += msg[1]
    finally:
        ws.close()
        k.request("DELETE", f"{prefix}/api/terminals/{name}", user)
    return out


def submission(user: str):
    from attnlab_grader.tests import qa
    return qa.reference_submission(A, user) if SUBMISSION[user] is None else \
        qa.wrong_submission(A, user, SUBMISSION[user])


def as_user(user: str, *cmd: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``cmd`` run as ``user`` with that user's groups (what their terminal could do)."""
    return subprocess.run(["runuser", "-u", user, "--", *cmd], capture_output=True, text=True, timeout=timeout,
                          cwd="/")


def grader_shell(command: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``command`` in the grader account's login shell: the environment of formgrader's terminal."""
    return subprocess.run(["runuser", "-l", GRADER, "-c", command], capture_output=True, text=True,
                          timeout=timeout, cwd="/")


def server_pid(k: Klass, user: str) -> int:
    """The pid of ``user``'s running JupyterLab server (their uid, jupyterhub-singleuser); fails if none."""
    pids = [p for p in _pids_of(pwd.getpwnam(user).pw_uid) if "jupyterhub-singleuser" in _cmdline(p)]
    assert len(pids) >= 1, f"{user} has no running server"
    return min(pids)


def _pid_in(path: Path) -> int:
    text = path.read_text().strip() if path.exists() else ""
    assert text.isdigit(), f"{path} holds no pid: {text!r}"
    return int(text)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill_hub_and_recover(k: Klass, still_grading) -> dict:
    """SIGKILL the hub while ``still_grading()``; run the documented ``install.sh ... --start``; check
    the class is back as its users see it. Returns what was measured."""
    s = k.settings()
    state = k.srv / "hub"
    recorded = {"hub": state / "jupyterhub.pid", "proxy": state / "jupyterhub-proxy.pid",
                "culler": state / "idle-culler.pid",
                "formgrader": Path(s["ATTNLAB_GRADER_HOME"]) / ".formgrader.pid"}
    old = {what: _pid_in(path) for what, path in recorded.items()}
    assert all(_alive(pid) for pid in old.values()), {w: (p, _alive(p)) for w, p in old.items()}
    servers = {u: server_pid(k, u) for u in STUDENTS}
    time.sleep(3)  # grading is under way (it takes tens of seconds)
    ran_through = still_grading()
    os.kill(old["hub"], 9)
    deadline = time.monotonic() + 30
    while _alive(old["hub"]):
        assert time.monotonic() < deadline, "the killed hub did not exit"
        time.sleep(0.1)
    assert k.request("GET", "/hub/health", timeout=10).status_code != 200, "the hub answers after it was killed"
    assert _alive(old["proxy"]) and _alive(old["formgrader"]), "nothing was left behind: the recovery proves less"
    t0 = time.monotonic()
    r = k.install("--instructors", INSTRUCTOR, "--graders", TA, "--students", ",".join(STUDENTS),
                  "--port", str(k.port), "--start")
    k.timings["recover_after_hub_kill_s"] = round(time.monotonic() - t0, 1)
    assert r.returncode == 0, f"recovery failed:\n{r.stdout}\n{r.stderr}\n{k.log_tail()}"
    assert "/proc/" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert k.request("GET", "/hub/health").status_code == 200
    formgrader(k, "GET", "assignments", "formgrader after the recovery")  # the new one, on its port
    new = {what: _pid_in(path) for what, path in recorded.items()}
    for what in old:  # each left-over process stopped, each new one running (so the culler runs once)
        assert not _alive(old[what]), f"the old {what} (pid {old[what]}) still runs"
        assert new[what] != old[what] and _alive(new[what]), f"no new {what}: {new[what]}"
    for u, pid in servers.items():  # students' servers ran on and are reached through the new hub
        assert server_pid(k, u) == pid, f"{u}'s server was restarted by the recovery"
        server(k, u, "GET", "api/contents", "the student's files after the recovery")
    return {"grading_ran_through_kill": ran_through}


#: the set's written answer (graded by hand in formgrader)
WRITTEN = "why_sqrt_dk"


def grader_cli(args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m attnlab_grader ARGS --db "$ATTNLAB_DB"`` in the grader's login shell (formgrader's terminal)."""
    return grader_shell(f'cd "$ATTNLAB_CLONE" && python -m attnlab_grader {args} --db "$ATTNLAB_DB"', timeout=timeout)


def grades_sheet(course: Path) -> dict[str, dict]:
    return {r["student_id"]: r for r in csv.DictReader(io.StringIO((course / "grades.csv").read_text()))
            if r["assignment"] == A}


def grade_by_hand(k: Klass, scores: dict[str, float]) -> None:
    """The TA enters scores for the written answer in formgrader (its grade API, as its page does)."""
    for sub in formgrader(k, "GET", f"submitted_notebooks/{A}/{A}", "submissions", who=TA):
        if sub["student"] in scores:
            grades = formgrader(k, "GET", "grades", "grades", who=TA, params={"submission_id": sub["id"]})
            grade = next(g for g in grades if g["name"] == WRITTEN)
            formgrader(k, "PUT", f"grade/{grade['id']}", "grade by hand", who=TA,
                       json={"manual_score": scores[sub["student"]]})


def week_two(k: Klass, course: Path) -> None:
    """The week after the first grading, on the installed class, as its people do it and see it: a
    deadline that has passed, the TA grades the written answers in formgrader; one student changes
    that answer and submits again while both students file regrade requests at the same moment from
    their own terminals; the other gets an extension; the class is collected and graded again once.
    Then: the changed answer alone waits for the TA (named by the grade command and in grades.csv),
    the other manual grade and the extension hold (no penalty), the queue has both requests, a
    regrade moves the score in grades.csv, and once the TA grades the new answer the LMS export has
    a grade for both students."""
    import datetime as dt
    from concurrent.futures import ThreadPoolExecutor
    u1, u2 = STUDENTS
    due = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=2)).strftime("%Y-%m-%d %H:%M")
    r = grader_cli(f'deadline ~/course -a {A} --due "{due}" --per-day 10 --cap 30')
    assert r.returncode == 0, r.stdout + r.stderr
    grade_by_hand(k, {u1: 2.0, u2: 1.0})
    # u1 changes the written answer and submits again
    nb = submission(u1)
    next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == WRITTEN).source = \
        "Changed in week two: the variance of q.k grows like d_k, so we divide by sqrt(d_k)."
    server(k, u1, "PUT", f"api/contents/{A}/{A}.ipynb", "save the new answer",
           json={"type": "notebook", "format": "json", "content": json.loads(json.dumps(nb))})
    server(k, u1, "POST", "assignments/submit", "submit again", data={"course_id": COURSE, "assignment_id": A})
    asked = {u1: "test_sdpa", u2: WRITTEN}  # (u1's written answer waits for the TA again: nothing to ask)
    with ThreadPoolExecutor(2) as pool:  # both students at the same moment, each in their own terminal
        said = dict(zip(STUDENTS, pool.map(lambda u: terminal(
            k, u, f"/user/{u}", f"attnlab regrade-request {A} {asked[u]} --reason 'look again, {u}'"),
            STUDENTS)))
    for u, out in said.items():
        assert "received" in out, f"{u}: {out[-800:]}"
    r = grader_cli(f'extension ~/course -a {A} -s {u2} --days 5 --reason "illness"')
    assert r.returncode == 0, r.stdout + r.stderr
    before = grades_sheet(course)  # rewritten from the gradebook by each change: the TA's grades are in it
    assert {before[u]["status"] for u in STUDENTS} == {"graded"}, before
    assert formgrader(k, "POST", f"assignment/{A}/collect", "collect again").get("success")
    r = grader_cli(f"grade ~/course --assignment {A} --jobs 2")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert f"MANUAL  {u1}: answer changed since it was graded by hand" in out and out.count("MANUAL ") == 1, out[-3000:]
    rows = grades_sheet(course)
    assert rows[u1]["status"] == "manual_pending" and WRITTEN in rows[u1]["reason"], rows[u1]
    assert rows[u2]["status"] == "graded", rows[u2]
    assert float(rows[u2]["score"]) == float(before[u2]["score"]), (before[u2], rows[u2])  # the TA's 1.0 kept
    assert float(rows[u2]["late_penalty"]) == 0 and float(rows[u2]["final_score"]) == float(rows[u2]["score"]), rows[u2]
    # the queue holds both requests; a regrade of u2's answer moves the score in grades.csv
    r = grader_cli("regrade-queue ~/course")
    assert r.returncode == 0, r.stdout + r.stderr
    for u in STUDENTS:
        assert f"[open] {u}/{A} {asked[u]}: look again, {u}" in r.stdout, r.stdout
    r = grader_cli(f'regrade ~/course -a {A} -s {u2} --item {WRITTEN} --score 2 --reason "the variance is named"')
    assert r.returncode == 0, r.stdout + r.stderr
    assert float(grades_sheet(course)[u2]["score"]) == float(rows[u2]["score"]) + 1
    # the TA grades the new answer; the LMS export has a grade for each student
    grade_by_hand(k, {u1: 2.0})
    r = grader_shell("printf 'Student,ID,SIS User ID,SIS Login ID,Section\\n" +
                     "".join(f"S{i},{100 + i},s{i},{u},A\\n" for i, u in enumerate(STUDENTS)) + "' > ~/roster.csv")
    assert r.returncode == 0, r.stderr
    r = grader_cli("lms-export ~/course --format canvas --roster ~/roster.csv --out ~/canvas.csv")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = grades_sheet(course)
    exported = {e["SIS Login ID"]: e[A] for e in csv.DictReader(io.StringIO(
        (Path(k.settings()["ATTNLAB_GRADER_HOME"]) / "canvas.csv").read_text())) if e["Student"] != "Points Possible"}
    assert exported == {u: rows[u]["final_score"] for u in STUDENTS} and all(exported.values()), (exported, rows)
    assert float(rows[u1]["late_penalty"]) > 0 and float(rows[u2]["late_penalty"]) == 0, rows  # late; extended
    for u in STUDENTS:
        assert float(rows[u]["final_score"]) == pytest.approx(float(rows[u]["score"]) - float(rows[u]["late_penalty"]))


# ---------------------------------------------------------------------------------- the test
def test_installed_class_each_role_over_http(klass: Klass):
    k = klass
    s = k.settings()
    clone, course, exchange = Path(s["ATTNLAB_CLONE"]), Path(s["ATTNLAB_GRADER_HOME"]) / "course", \
        Path(s["ATTNLAB_EXCHANGE"])
    postgres = s["ATTNLAB_DB"].startswith("postgresql")
    assert re.search(r"gradebook: (PostgreSQL|SQLite)", k.install_out), k.install_out
    assert k.request("GET", "/hub/health").status_code == 200
    # -- the student's exchange folder made before the install was moved out; the course's is the grader's
    assert re.search(rf"moved \S+/exchange/{COURSE} \(made by {STUDENTS[1]}", k.install_out), k.install_out
    for sub, mode in (("", 0o755), ("outbound", 0o755), ("inbound", 0o2733), ("feedback", 0o711)):
        info = (exchange / COURSE / sub).stat()
        assert (pwd.getpwuid(info.st_uid).pw_name, info.st_mode & 0o7777) == (GRADER, mode), (sub, oct(info.st_mode))
    for attempt in (["rm", "-rf", str(exchange / COURSE)], ["mkdir", str(exchange / COURSE / "outbound" / A)],
                    ["mv", str(exchange / COURSE), str(exchange / "taken")]):
        assert as_user(STUDENTS[1], *attempt).returncode != 0, f"a student could {attempt}"
        assert (exchange / COURSE / "outbound").is_dir()
    # -- the gradebook's PostgreSQL cluster is the class's own (the machine's other clusters untouched)
    if postgres:
        clusters = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True).stdout.splitlines()
        ours = [ln.split() for ln in clusters if ln.split()[1:2] == [f"attnlab-{COURSE}"]]
        assert ours and ours[0][3] == "online" and f"port={ours[0][2]}" in s["ATTNLAB_DB"], (clusters, s["ATTNLAB_DB"])
        k.clusters_before = [ln.split() for ln in clusters if f"attnlab-{COURSE}" not in ln]

    # -- everyone logs in with their own password through PAM; a wrong password is refused
    assert login(k, STUDENTS[0], "not-the-password") is None, "a wrong password logged in"
    for u in [*STUDENTS, INSTRUCTOR, TA]:
        login_and_token(k, u)

    # -- staff reach formgrader (the service runs as the grader account); students do not
    deadline = time.monotonic() + 90
    while k.request("GET", f"/services/{COURSE}/formgrader/api/assignments", INSTRUCTOR).status_code != 200:
        assert time.monotonic() < deadline, f"formgrader not reachable\n{k.log_tail()}"
        time.sleep(0.5)
    k.check(k.request("GET", f"/services/{COURSE}/formgrader/api/assignments", TA), "the TA opens formgrader")
    r = k.request("GET", f"/services/{COURSE}/formgrader/api/assignments", STUDENTS[0])
    assert r.status_code in (401, 403), f"a student reached formgrader: HTTP {r.status_code}"

    # -- the idle culler runs as a hub service and may list the users (its role's scopes)
    log = (k.srv / "hub" / "jupyterhub.log").read_text(errors="replace")
    assert re.search(r"200 GET /hub/api/users\S* \(idle-culler@", log), "the idle culler did not list the users"

    # -- the TA (and the instructor) have the formgrader role only
    for who in (TA, INSTRUCTOR):
        r = k.sessions[who].get(k.url + "/hub/admin", allow_redirects=False, timeout=60)  # the page: cookies
        assert r.status_code == 403, f"{who} on /hub/admin: HTTP {r.status_code}, expected 403"
        r = k.request("GET", "/hub/api/users", who)
        assert r.status_code == 403, f"{who} on /hub/api/users: HTTP {r.status_code}, expected 403"
    r = k.request("POST", f"/hub/api/users/{STUDENTS[0]}/server", TA)
    assert r.status_code in (403, 404), f"the TA started a student's server: HTTP {r.status_code}"

    # -- formgrader's terminal finds the course's python and nbgrader (a login shell)
    out = terminal(k, INSTRUCTOR, f"/services/{COURSE}", "command -v python nbgrader")
    assert f"{COURSE_ENV}/bin/python" in out and f"{COURSE_ENV}/bin/nbgrader" in out, out[-800:]
    # ... and the grader-only packages (the students' environment lacks them; checked below)
    out = terminal(k, INSTRUCTOR, f"/services/{COURSE}",
                   f"python -c 'import {', '.join(GRADER_IMPORTS)}' && echo GRADER-$((6*7))-PACKAGES")
    assert "GRADER-42-PACKAGES" in out, out[-800:]

    # -- release: stage the source as the grader, generate + release in formgrader
    r = grader_shell(f'cp -r "$ATTNLAB_CLONE/solutions/{A}" ~/course/source/')
    assert r.returncode == 0, r.stderr
    assert formgrader(k, "POST", f"assignment/{A}/assign", "generate").get("success")
    assert not (course / "release" / A / "grading.py").exists(), "the grading spec was released"
    assert formgrader(k, "POST", f"assignment/{A}/release", "release").get("success")

    # -- students: JupyterLab without instructor tools, lessons without solutions, fetch, submit
    k.timings.update({f"server_start_s_{u}": t for u, t in start_servers(k, STUDENTS).items()})
    st = STUDENTS[0]
    lab = page_config(server(k, st, "GET", "lab", "JupyterLab page").text)
    for ext in ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"):
        assert ext in lab["disabledExtensions"], f"a student's JupyterLab loads {ext}"
    assert k.request("GET", f"/user/{st}/formgrader", st).status_code == 404, "formgrader runs in a student's server"
    staff_lab = page_config(k.check(k.request("GET", f"/services/{COURSE}/lab", INSTRUCTOR), "formgrader's Lab").text)
    assert "@jupyter/nbgrader:formgrader" not in staff_lab["disabledExtensions"], "formgrader is off for staff"
    r = k.request("GET", f"/user/{st}/api/contents", TA)
    assert r.status_code in (403, 404), f"the TA reached a student's server: HTTP {r.status_code}"
    link = re.search(r"lessons link for students: (\S+)", k.install_out).group(1)
    assert "urlpath=lab/" in link, f"the lessons link does not open JupyterLab: {link}"
    repo = re.search(r"repo=([^&]+)", link).group(1)
    # a server opens at nbgitpuller's page for the lessons (its page then calls git-pull/api, as here)
    r = k.sessions[st].get(f"{k.url}/user/{st}/", allow_redirects=False, timeout=60)
    first = r.headers.get("Location", "")
    assert r.status_code in (301, 302) and "/git-pull?" in first and "lessons.git" in first \
        and "urlpath=lab%2Ftree%2Flessons" in first, f"{st}'s server opens at {first!r} (HTTP {r.status_code})"
    for u in STUDENTS:
        git_pull(k, u, repo)
        listing = server(k, u, "GET", "api/contents/lessons", "list lessons").json()
        names = {c["name"] for c in listing["content"]}
        assert f"{A}.ipynb" in names and "solutions" not in names, names
        listed = server(k, u, "GET", "assignments", "list assignments", params={"course_id": COURSE}).json()
        assert any(a["assignment_id"] == A and a["status"] == "released" for a in listed["value"]), listed
        server(k, u, "POST", "assignments/fetch", "fetch", data={"course_id": COURSE, "assignment_id": A})
        got = server(k, u, "GET", f"api/contents/{A}/{A}.ipynb", "open exercise").json()
        assert "NotImplementedError" in json.dumps(got["content"]), "the fetched exercise is not the stub"
        server(k, u, "PUT", f"api/contents/{A}/{A}.ipynb", "save", json={
            "type": "notebook", "format": "json", "content": json.loads(json.dumps(submission(u)))})
        res = server(k, u, "POST", "assignments/submit", "submit",
                     data={"course_id": COURSE, "assignment_id": A}).json()
        assert res.get("success", True), res
    lessons = Path(k.homes / st / "lessons")
    assert not any(p.name in ("solutions", "grading.py") for p in lessons.rglob("*")), "solutions reached a student"
    assert not (lessons / "src").exists(), "the lessons' text sources reached a student"
    # -- a new lesson commit arrives at the next pull; the student's own edit of a lesson stays
    mine = lessons / f"{A}.ipynb"
    edited = mine.read_text().replace('"cells": [', '"cells": [{"cell_type": "markdown", "metadata": {}, '
                                      '"source": ["my own note"]},', 1)
    server(k, st, "PUT", f"api/contents/lessons/{A}.ipynb", "edit a lesson",
           json={"type": "notebook", "format": "json", "content": json.loads(edited)})
    work = k.base / "lessons-work"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "-c", f"safe.directory={k.srv}/lessons.git"]
    subprocess.run([*git, "clone", "-q", str(k.srv / "lessons.git"), str(work)], check=True, capture_output=True)
    (work / "99_new_lesson.md").write_text("a lesson added in week two\n")
    subprocess.run([*git, "-C", str(work), "add", "-A"], check=True, capture_output=True)
    subprocess.run([*git, "-C", str(work), "commit", "-qm", "week two"], check=True, capture_output=True)
    subprocess.run([*git, "-C", str(work), "push", "-q", "origin", "HEAD:main"], check=True, capture_output=True)
    subprocess.run(["chmod", "-R", "a+rX", str(k.srv / "lessons.git")], check=True)
    git_pull(k, st, repo)
    assert (lessons / "99_new_lesson.md").is_file(), "the new lesson did not arrive"
    assert "my own note" in mine.read_text(), "the pull overwrote the student's edit of a lesson"

    # -- collect, grade (the documented command, the grader's login shell), feedback, report
    assert formgrader(k, "POST", f"assignment/{A}/collect", "collect").get("success")
    t0 = time.monotonic()
    grading = subprocess.Popen(["runuser", "-l", GRADER, "-c",
                                f'cd "$ATTNLAB_CLONE" && python -m attnlab_grader grade ~/course --assignment {A} '
                                f'--db "$ATTNLAB_DB" --jobs 2'],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd="/")
    # -- the hub dies (SIGKILL) while grading runs; the documented command brings the class back
    recovered = kill_hub_and_recover(k, lambda: grading.poll() is None)
    out, _ = grading.communicate(timeout=600)
    k.timings["grading_s_2_submissions_with_hub_kill"] = round(time.monotonic() - t0, 1)
    assert grading.returncode == 0, f"grade failed:\n{out[-3000:]}"
    assert recovered["grading_ran_through_kill"], "grading ended before the hub was killed: the kill proved nothing"
    assert "has changed!" not in out, f"autograde reported a changed cell for honest work:\n{out[-2000:]}"
    rows = list(csv.DictReader(io.StringIO((course / "grades.csv").read_text())))
    assert {r.get("student_id") or r.get("student") for r in rows} >= set(STUDENTS), rows[:3]
    assert formgrader(k, "POST", f"assignment/{A}/generate_feedback", "generate feedback").get("success")
    assert formgrader(k, "POST", f"assignment/{A}/release_feedback", "release feedback").get("success")
    for u in STUDENTS:
        server(k, u, "POST", "assignments/fetch_feedback", "fetch feedback",
               data={"course_id": COURSE, "assignment_id": A})
        assert server(k, u, "GET", f"api/contents/{A}/feedback", "list feedback").json()["content"], u
    r = grader_shell(f'cd "$ATTNLAB_CLONE" && python -m attnlab_grader report ~/course --assignment {A}', timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]

    # -- as a student, every protected file is unreadable (each exists: root reads it)
    other_home = k.homes / STUDENTS[1]
    feedback = next((other_home / A / "feedback").rglob("*.html"))
    protected = [clone / "solutions" / A / f"{A}.ipynb", clone / "solutions" / A / "grading.py",
                 course / "source" / A / f"{A}.ipynb", course / "submitted" / STUDENTS[1] / A / f"{A}.ipynb",
                 course / "autograded" / STUDENTS[1] / A / f"{A}.ipynb", course / "grades.csv",
                 course / "reports" / A / "class.html", feedback, other_home / A / f"{A}.ipynb",
                 Path(s["ATTNLAB_GRADER_HOME"]) / "nbgrader_config.py", k.srv / "hub" / "class.env"]
    protected += list(course.glob("grades*.csv"))
    if not postgres:
        protected.append(course / "gradebook.db")
    for path in protected:
        assert path.is_file(), f"{path} was not made, so its protection proves nothing"
        r = as_user(st, "cat", str(path))
        assert r.returncode != 0 and "Permission denied" in r.stderr, f"{st} read {path}"
    assert as_user(STUDENTS[1], "cat", str(feedback)).returncode == 0, "a student cannot read their own feedback"
    # the source checkout (solutions/, the grading specs) is private: install.sh made it so
    checkout = k.checkout
    assert _open_to_others(checkout.parent), "the copied checkout must start reachable, or its closing proves nothing"
    assert checkout.stat().st_mode & 0o007 == 0, f"the checkout {checkout} is open to others: {oct(checkout.stat().st_mode)}"
    assert as_user(st, "ls", str(checkout / "solutions")).returncode != 0, "a student lists the checkout's solutions"
    # the same through the student's own JupyterLab terminal (over the hub, as they would try it)
    tried = [clone / "solutions" / A / "grading.py", course / "grades.csv", feedback]
    out = terminal(k, st, f"/user/{st}", "; ".join(f"cat {p} >/dev/null && echo LEAK$((7*{i + 1}))"
                                                   for i, p in enumerate(tried)))  # the echoed line has no LEAK7
    assert out.count("Permission denied") >= len(tried), out[-800:]
    assert not [p for i, p in enumerate(tried) if f"LEAK{7 * (i + 1)}" in out], out[-800:]
    grader_site = Path(s["ATTNLAB_GRADER_SITE"])
    for listing in (clone, course, exchange / COURSE / "inbound", exchange / COURSE / "feedback", other_home,
                    grader_site, HUB_HOME / "grader-site"):
        r = as_user(st, "ls", str(listing))
        assert r.returncode != 0, f"{st} listed {listing}: {r.stdout[:200]}"

    # -- the instructor's code and the grader-only packages: in the class's grader-site (root-owned, the
    # grader's group, nothing for others), the grader's distribution and every distribution it requires;
    # a student's python has none of them, not even with the folder put on PYTHONPATH by hand, nor in
    # their own server's terminal
    from packaging.utils import canonicalize_name
    info = grader_site.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (0, pwd.getpwnam(GRADER).pw_gid, 0o750), \
        f"{grader_site}: uid {info.st_uid} gid {info.st_gid} mode {oct(info.st_mode)}"
    dists = {canonicalize_name(p.name.removesuffix(".dist-info").rsplit("-", 1)[0])
             for p in grader_site.glob("*.dist-info")}
    assert grader_extra() <= dists, f"grader-site lacks {grader_extra() - dists}"
    probe = [str(COURSE_ENV / "bin" / "python"), "-c", PROBE, ",".join(GRADER_IMPORTS), ",".join(sorted(dists))]
    for env in ([], ["env", f"PYTHONPATH={grader_site}"]):
        r = as_user(st, *env, *probe)
        assert r.returncode == 0 and not r.stdout.strip(), f"{st} ({' '.join(env) or 'plain'}): {r.stdout}{r.stderr}"
    out = terminal(k, st, f"/user/{st}", f"{COURSE_ENV}/bin/python -c 'import psycopg' 2>&1 | tail -n 1")
    assert "No module named 'psycopg'" in out, out[-800:]
    r = grader_shell(shlex.join(["python", "-c", PROBE, ",".join(GRADER_IMPORTS), ",".join(sorted(dists))]))
    assert r.returncode == 0 and r.stdout.count("IMPORTED") == len(GRADER_IMPORTS) and \
        r.stdout.count("INSTALLED") == len(dists), r.stdout + r.stderr
    # data, not code: the course's sources the environments were built from ($HUB_HOME/src, the public
    # repository's code) are readable by design; a gradebook file, a grades sheet or a solution is not
    r = as_user(st, "find", str(k.srv), str(HUB_HOME / "src"), "-readable", "(", "-name", "grading.py", "-o",
                "-name", "solutions", "-o", "-name", "gradebook*.db*", "-o", "-name", "grades*.csv", ")")
    assert not r.stdout.strip(), f"readable by a student: {r.stdout[:500]}"
    if postgres:
        db = s["ATTNLAB_DB"]  # postgresql:///<db>?port=<the class's cluster>: psql takes the same URL
        r = as_user(st, "psql", db, "-Atc", "SELECT count(*) FROM submitted_assignment")
        # refused by the class's server itself (no role, no CONNECT), not for want of a server to reach
        assert r.returncode != 0 and not r.stdout.strip() and "FATAL" in r.stderr and \
            ("denied" in r.stderr or "does not exist" in r.stderr), f"a student queried the gradebook: {r.stdout}{r.stderr}"
        r = subprocess.run(["runuser", "-l", GRADER, "-c", f"psql '{db}' -Atc 'SELECT count(*) FROM "
                            "submitted_assignment'"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and int(r.stdout) >= 2, f"the grader cannot read its gradebook: {r.stderr}"

    # -- week two: manual grades, a resubmission, two regrade requests at once, an extension, a re-grade
    t0 = time.monotonic()
    week_two(k, course)
    k.timings["week_two_s"] = round(time.monotonic() - t0, 1)

    # -- a second run changes nothing that matters: the hub answers again, the grades are kept
    before = (course / "grades.csv").read_text()
    t0 = time.monotonic()
    r = k.install("--instructors", INSTRUCTOR, "--graders", TA, "--students", ",".join(STUDENTS),
                  "--port", str(k.port), "--start")
    k.timings["second_install_s"] = round(time.monotonic() - t0, 1)
    assert r.returncode == 0, r.stdout + r.stderr
    assert k.request("GET", "/hub/health").status_code == 200
    assert (course / "grades.csv").read_text() == before, "a second install changed the grades"

    # -- the class moves to another port: the hub answers there only, students' servers and files stay
    pid_before = server_pid(k, st)
    new_port = _free_port()
    r = k.install("--instructors", INSTRUCTOR, "--graders", TA, "--students", ",".join(STUDENTS),
                  "--port", str(new_port), "--start")
    assert r.returncode == 0, r.stdout + r.stderr
    old_port, k.port, k.url = k.port, new_port, f"http://127.0.0.1:{new_port}"
    assert k.request("GET", "/hub/health").status_code == 200 and not _listening(old_port)
    assert server_pid(k, st) == pid_before, "moving the class stopped a student's server"
    server(k, st, "GET", f"api/contents/{A}/{A}.ipynb", "the student's work after the move")
    formgrader(k, "GET", "assignments", "formgrader after the move")
    assert (course / "grades.csv").read_text() == before, "moving the class changed the grades"
    s = k.settings()

    # -- uninstall: nothing of the class is left running or on disk; the users are kept
    ports = [k.port] + [int(s[key]) for key in ("ATTNLAB_HUB_PORT", "ATTNLAB_PROXY_API_PORT",
                                                "ATTNLAB_FORMGRADER_PORT")]
    t0 = time.monotonic()
    r = k.install("--uninstall", timeout=300)
    k.timings["uninstall_s"] = round(time.monotonic() - t0, 1)
    assert r.returncode == 0, r.stdout + r.stderr
    assert k.timings["uninstall_s"] < 30, f"uninstall took {k.timings['uninstall_s']} s:\n{r.stdout}{r.stderr}"
    said = (r.stdout + r.stderr).splitlines()
    assert said and all(line.startswith("install.sh: ") for line in said), f"uninstall printed noise:\n{r.stdout}{r.stderr}"
    time.sleep(0.5)
    assert not [p for p in ports if _listening(p)], f"still listening after uninstall: {ports}"
    for u, uid in _uids().items():  # a process still exiting (a zombie not yet reaped) is given 10 s
        deadline = time.monotonic() + 10
        while _live_pids_of(uid) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not _live_pids_of(uid), f"processes of {u} left: {[_cmdline(p) for p in _live_pids_of(uid)]}"
    for what in (["passwd", GRADER], ["group", f"{COURSE}-students"], ["group", f"formgrade-{COURSE}"]):
        assert subprocess.run(["getent", *what], capture_output=True).returncode != 0, f"{what} left"
    assert not k.srv.exists(), "the class folder is left"
    for u in STUDENTS:
        assert (k.homes / u).stat().st_mode & 0o777 == 0o755, "a student's home mode was not restored"
    if postgres:  # the class's own cluster is gone; the machine's other clusters are as they were
        clusters = subprocess.run(["pg_lsclusters", "-h"], capture_output=True, text=True).stdout.splitlines()
        assert not [ln for ln in clusters if f"attnlab-{COURSE}" in ln], clusters
        assert [ln.split() for ln in clusters] == k.clusters_before, (clusters, k.clusters_before)
    r = k.install("--uninstall")
    assert r.returncode == 0 and "nothing installed" in r.stdout, r.stdout + r.stderr
    (ARTIFACTS / "measurements.json").write_text(json.dumps(k.timings, indent=1))


def test_bad_input_is_refused_in_one_sentence_and_changes_nothing(tmp_path):
    """Each refusal: exit 2, one line naming the problem, and no trace on the machine."""
    if _missing():
        pytest.skip(f"hub e2e: {_missing()}")
    course = f"b{secrets.token_hex(3)}"
    srv = tmp_path / "srv"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ATTNLAB_")},
           "ATTNLAB_COURSE_ID": course, "ATTNLAB_SRV": str(srv), "ATTNLAB_HUB_HOME": str(HUB_HOME)}

    def run(*args):
        return subprocess.run(["bash", str(INSTALL), *args], env=env, capture_output=True, text=True, timeout=120)

    ghost = f"nobody{secrets.token_hex(3)}"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        cases = {
            "unknown user": (["--instructors", "daemon", "--graders", "", "--students", f"nobody,{ghost}",
                              "--port", "8000"], ghost),
            "two roles": (["--instructors", "daemon", "--graders", "nobody", "--students", "nobody",
                           "--port", "8000"], "both"),
            "port in use": (["--instructors", "daemon", "--graders", "", "--students", "nobody",
                             "--port", port, "--start"], "in use"),
            "bad port": (["--instructors", "daemon", "--graders", "", "--students", "nobody", "--port", "http"],
                         "not a TCP port"),
            "no instructor": (["--instructors", "", "--graders", "", "--students", "nobody", "--port", "8000"],
                              "--instructors is empty"),
        }
        for what, (args, says) in cases.items():
            r = run(*args)
            lines = r.stderr.strip().splitlines()
            assert r.returncode == 2 and len(lines) == 1 and says in lines[0], f"{what}: {r.returncode} {r.stderr}"
            assert not srv.exists(), f"{what}: install.sh made {srv} before refusing"
            for g in (f"{course}-students", f"formgrade-{course}"):
                assert subprocess.run(["getent", "group", g], capture_output=True).returncode != 0, what
    # a missing Debian package: the same machine with git and node hidden from PATH
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for d in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        for f in Path(d).glob("*") if Path(d).is_dir() else ():
            if f.name not in ("git", "node", "nodejs") and not (bin_ / f.name).exists():
                (bin_ / f.name).symlink_to(f)
    r = subprocess.run(["bash", str(INSTALL), "--instructors", "daemon", "--graders", "", "--students", "nobody",
                        "--port", "8000"], env={**env, "PATH": str(bin_)}, capture_output=True, text=True, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "git nodejs" in lines[0] and "apt-get install" in lines[0], r.stderr
    assert not srv.exists()
    # uninstall of nothing, and of a half-made install (a record of a group that was made, an
    # account that never was): it removes what exists, says nothing wrong, and exits 0
    r = run("--uninstall")
    assert r.returncode == 0 and "nothing installed" in r.stdout, r.stdout + r.stderr
    (srv / "hub").mkdir(parents=True)
    subprocess.run(["groupadd", f"{course}-students"], check=True)
    try:
        (srv / "hub" / "manifest").write_text(f"group {course}-students\nuser grader-{course}\n")
        r = run("--uninstall")
        assert r.returncode == 0, r.stdout + r.stderr
        assert subprocess.run(["getent", "group", f"{course}-students"], capture_output=True).returncode != 0
        assert not srv.exists()
    finally:
        subprocess.run(["groupdel", f"{course}-students"], capture_output=True)
