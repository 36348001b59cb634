"""The deployment's exchange and course folder win over the clone's defaults, and the documented
release route is nbgrader's own: generate_assignment -> release_assignment into a
shared exchange -> a student fetch_assignment -> submit -> the instructor's collect, with the course
folder outside the clone and formgrader served from a root folder given to start.sh."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# nbgrader's own CLI entry point; jsonschema's optional rfc3987_syntax import (~3 s per process, never
# used by nbgrader 0.9.6) is skipped as attnlab_grader.records.course does.
NBGRADER = [sys.executable, "-c", "import sys; sys.modules['rfc3987_syntax'] = None; sys.argv[0] = 'nbgrader'; "
            "from nbgrader.apps.nbgraderapp import main; main()"]
ASSIGNMENT = "01_routing_and_soft_lookup"
DEFAULT_EXCHANGE = ROOT / "autograder" / "course" / ".exchange"


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "ATTNLAB_COURSE", "ATTNLAB_EXCHANGE", "ATTNLAB_DB", "JUPYTER"))}
    # nbgrader runs `alembic` from PATH: the environment's bin/ first, as in an activated venv
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(JUPYTER_CONFIG_DIR=str(tmp / "deploy"), JUPYTER_CONFIG_PATH=str(tmp / "deploy"),
               JUPYTER_DATA_DIR=str(tmp / "jdata"), OMP_NUM_THREADS="1", **extra)
    return env


def _deploy(tmp: Path, **settings: str) -> None:
    """The deployment's nbgrader config (as in /etc/jupyter or ~/.jupyter)."""
    (tmp / "deploy").mkdir(exist_ok=True)
    lines = ["c = get_config()"] + [f"c.{k.replace('__', '.')} = {v!r}" for k, v in settings.items()]
    (tmp / "deploy" / "nbgrader_config.py").write_text("\n".join(lines) + "\n")


def _effective(monkeypatch, env: dict[str, str]) -> dict:
    """The course root, sources, course id and exchange nbgrader ends up with when started in the
    clone (nbgrader's own config loading: Jupyter's config path, then ./nbgrader_config.py)."""
    from nbgrader.apps import NbGrader
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default.exchange import Exchange
    for k in [k for k in os.environ if k not in env]:
        monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(ROOT)
    app = NbGrader()
    app.load_config_file()
    cd = CourseDirectory(config=app.config)
    return {"root": cd.root, "source": cd.source_directory, "course_id": cd.course_id,
            "exchange": Exchange(config=app.config, coursedir=cd).root}


def test_the_deployment_config_and_environment_win_over_the_clone_defaults(tmp_path, monkeypatch):
    _deploy(tmp_path, Exchange__root="/srv/x/exchange", CourseDirectory__root="/srv/x/course")
    got = _effective(monkeypatch, _env(tmp_path))
    assert got["exchange"] == "/srv/x/exchange" and got["root"] == "/srv/x/course"
    assert got["source"] == str(ROOT / "solutions") and got["course_id"] == "attnlab"
    assert not Path("/srv/x").exists(), "a deployment's folders are not created by the clone's config"
    # the environment (one instructor's session) wins over the deployment's files
    env = _env(tmp_path, ATTNLAB_COURSE=str(tmp_path / "mine"), ATTNLAB_EXCHANGE=str(tmp_path / "ex"))
    got = _effective(monkeypatch, env)
    assert got["root"] == str(tmp_path / "mine") and got["exchange"] == str(tmp_path / "ex")
    # a deployment that sets the course id and sources keeps them
    _deploy(tmp_path, CourseDirectory__course_id="attn-fall", CourseDirectory__source_directory="src")
    got = _effective(monkeypatch, _env(tmp_path, ATTNLAB_COURSE=str(tmp_path / "c")))
    assert (got["course_id"], got["source"]) == ("attn-fall", "src")
    assert got["exchange"] in (str(tmp_path / "c" / ".exchange"), "/usr/local/share/nbgrader/exchange")
    assert not (tmp_path / "c").exists(), "loading the clone's nbgrader config created a folder"


def test_without_a_deployment_the_clone_supplies_its_defaults(tmp_path, monkeypatch):
    got = _effective(monkeypatch, _env(tmp_path))
    assert got["root"] == str(ROOT / "autograder" / "course")
    assert got["source"] == str(ROOT / "solutions") and got["course_id"] == "attnlab"
    shared = Path("/usr/local/share/nbgrader/exchange")
    assert got["exchange"] == str(shared if shared.is_dir() else DEFAULT_EXCHANGE)


def _nbgrader(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    r = subprocess.run(NBGRADER + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{out[-3000:]}"
    return out


@pytest.mark.slow
def test_release_fetch_submit_collect_through_a_shared_exchange(tmp_path):
    """README/autograder README's route, word for word, with the course folder outside the clone."""
    course, exchange, student = tmp_path / "teach" / "course", tmp_path / "exchange", tmp_path / "alice"
    exchange.mkdir(mode=0o777)
    course.mkdir(parents=True)  # the instructor's course folder, outside the clone
    student.mkdir()
    _deploy(tmp_path, Exchange__root=str(exchange), CourseDirectory__root=str(course))
    env = _env(tmp_path)
    before = set(DEFAULT_EXCHANGE.rglob("*")) if DEFAULT_EXCHANGE.exists() else set()

    _nbgrader(["generate_assignment", ASSIGNMENT], ROOT, env)  # sources: the clone's solutions/
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert released.is_file() and "BEGIN SOLUTION" not in released.read_text()
    _nbgrader(["release_assignment", ASSIGNMENT], ROOT, env)
    assert (exchange / "attnlab" / "outbound" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()

    _nbgrader(["fetch_assignment", ASSIGNMENT, "--course", "attnlab"], student, env)  # a student's home, no repo config
    mine = student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = json.loads(mine.read_text())
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "alice was here"})
    mine.write_text(json.dumps(nb))
    _nbgrader(["submit", ASSIGNMENT, "--course", "attnlab", "--student", "alice"], student, env)
    assert list((exchange / "attnlab" / "inbound").glob(f"alice+{ASSIGNMENT}+*"))

    _nbgrader(["collect", ASSIGNMENT], ROOT, env)
    collected = course / "submitted" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert "alice was here" in collected.read_text()
    after = set(DEFAULT_EXCHANGE.rglob("*")) if DEFAULT_EXCHANGE.exists() else set()
    assert after == before, "something went to the clone's private exchange"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_formgrader_opens_a_course_folder_outside_the_clone(tmp_path):
    """./start.sh --root-dir DIR serves DIR; formgrader finds the course in it (it used to log
    "course directory root is not a subdirectory of the notebook server root")."""
    teach = tmp_path / "teach"
    course = teach / "course"
    (course / "source").mkdir(parents=True)
    port, token = _free_port(), "attnlab-test"
    env = _env(tmp_path, ATTNLAB_COURSE=str(course), ATTNLAB_EXCHANGE=str(tmp_path / "exchange"))
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        ["bash", str(ROOT / "start.sh"), "--root-dir", str(teach), "--no-browser", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}"],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline, body = time.time() + 120, None
        while time.time() < deadline and server.poll() is None:
            try:
                req = urllib.request.Request(f"{url}/formgrader/api/assignments",
                                             headers={"Authorization": f"token {token}"})
                body = urllib.request.urlopen(req, timeout=10).read().decode()
                break
            except OSError:
                time.sleep(1)
        text = (tmp_path / "server.log").read_text()
        assert body is not None, f"server did not answer:\n{text[-3000:]}"
        assert "not a subdirectory" not in text, text[-3000:]
        names = {a["name"] for a in json.loads(body)}
        assert ASSIGNMENT in names, names  # the clone's solutions/, listed for the outside course
        assert re.search(rf"Serving notebooks from local directory: {re.escape(str(teach))}", text) or \
            str(teach) in text
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
        log.close()
