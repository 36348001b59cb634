"""The deployment files as far as this machine can check them without a hub or a cluster: they
parse, load, name files that exist, and agree with each other (pins, course id, paths)."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
HUB = DEPLOY / "jupyterhub"


def _pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s#]+)", line)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def _load(config: Path, env: dict, monkeypatch):
    from traitlets.config.loader import PyFileConfigLoader
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return PyFileConfigLoader(config.name, path=str(config.parent)).load_config()


PROD_ENV = {"ATTNLAB_HUB_HOME": "/opt/attnlab-hub", "ATTNLAB_INSTRUCTORS": "alice", "ATTNLAB_GRADERS": "bob",
            "ATTNLAB_EXCHANGE": "/srv/nbgrader/exchange", "ATTNLAB_DB": "postgresql:///gradebook",
            "ATTNLAB_CLONE": "/srv/attnlab-attnlab/course-repo", "ATTNLAB_GRADER_SITE": "/srv/attnlab-attnlab/grader-site"}


def test_hub_config_is_pam_course_env_limits_and_one_formgrader_service(monkeypatch):
    c = _load(HUB / "jupyterhub_config.py", PROD_ENV, monkeypatch)
    assert c.JupyterHub.authenticator_class == "pam"
    assert c.Authenticator.allowed_groups == {"attnlab-students", "formgrade-attnlab"}
    assert not c.Authenticator.admin_users, "nobody is a hub admin"
    assert c.Spawner.cmd == ["/opt/attnlab-hub/course-env/bin/jupyterhub-singleuser"]
    assert c.Spawner.environment["OMP_NUM_THREADS"] == "1" and c.Spawner.mem_limit
    learner = c.Spawner.environment["ATTNLAB_LEARNER"]
    assert learner(SimpleNamespace(user=SimpleNamespace(name="stu7"))) == "stu7"
    # students never get the gradebook URL or the path of the course repository
    assert "ATTNLAB_DB" not in c.Spawner.environment and "ATTNLAB_CLONE" not in c.Spawner.environment
    service, culler = c.JupyterHub.services
    assert service["name"] == "attnlab" and service["user"] == "grader-attnlab"
    assert service["environment"]["ATTNLAB_DB"] == "postgresql:///gradebook"
    # the grader-only packages: on the formgrader service's path, never on a student's
    assert service["environment"]["PYTHONPATH"] == "/srv/attnlab-attnlab/grader-site"
    assert "PYTHONPATH" not in c.Spawner.environment and "PYTHONPATH" not in c.Spawner.get("env_keep", [])
    assert culler["name"] == "idle-culler" and "--timeout=3600" in culler["command"]
    assert c.JupyterHub.load_groups["formgrade-attnlab"]["users"] == ["alice", "bob"]
    role = next(r for r in c.JupyterHub.load_roles if r["name"] == "formgrade-attnlab")
    assert "access:services!service=attnlab" in role["scopes"]
    assert not any("admin" in sc or sc.startswith(("access:servers", "list:users")) for sc in role["scopes"])
    proxy = Path(c.ConfigurableHTTPProxy.command[0])
    assert proxy.parts[-3:] == ("node_modules", ".bin", "configurable-http-proxy")


def test_hub_restarts_keep_servers_and_services_record_their_pids(monkeypatch, tmp_path):
    """A restart leaves users' servers running; the culler and formgrader write the PID files
    install.sh reads to stop what a dead hub left (each start line run here: the pid written is the
    pid of the program it execs); a server opens at nbgitpuller's page for the lessons."""
    import subprocess
    import sys
    from urllib.parse import parse_qs, urlsplit
    c = _load(HUB / "jupyterhub_config.py", {**PROD_ENV, "ATTNLAB_HUB_STATE": str(tmp_path / "state"),
                                              "ATTNLAB_LESSONS_REPO": "file:///srv/attnlab-x/lessons.git"},
              monkeypatch)
    assert c.JupyterHub.cleanup_servers is False
    assert c.Spawner.args == ["--ServerApp.terminado_settings=shell_command=/bin/bash"]  # PATH kept in terminals
    url = urlsplit(c.Spawner.default_url)
    assert url.path == "/git-pull" and parse_qs(url.query) == {
        "repo": ["file:///srv/attnlab-x/lessons.git"], "branch": ["main"], "targetpath": ["lessons"],
        "urlpath": ["lab/tree/lessons"]}
    service, culler = c.JupyterHub.services
    expected = {"culler": tmp_path / "state" / "idle-culler.pid",
                "formgrader": Path(service["cwd"]) / ".formgrader.pid"}
    for what, command in (("culler", culler["command"]), ("formgrader", service["command"])):
        program = next(i for i, arg in enumerate(command) if arg.endswith(("idle-culler", "jupyterhub-singleuser")))
        assert command[program - 1] == str(expected[what]), command
        pidfile = tmp_path / f"{what}.pid"
        line = [*command[:program - 1], str(pidfile), sys.executable, "-c", "import os; print(os.getpid())"]
        out = subprocess.run(line, capture_output=True, text=True, check=True).stdout.strip()
        assert pidfile.read_text().strip() == out, (what, pidfile.read_text(), out)


def test_pins_agree():
    hub, single = _pins(HUB / "requirements-hub.txt"), _pins(HUB / "requirements-singleuser.txt")
    assert hub["jupyterhub"] == single["jupyterhub"], "jupyterhub-singleuser must match the hub's version"
    assert set(single) == {"jupyterhub", "nbgitpuller"}
    pkg = json.loads((HUB / "proxy" / "package.json").read_text())
    lock = json.loads((HUB / "proxy" / "package-lock.json").read_text())
    want = pkg["dependencies"]["configurable-http-proxy"]
    assert lock["packages"]["node_modules/configurable-http-proxy"]["version"] == want
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", v) for v in pkg["dependencies"].values()), "pin exact versions"


@pytest.mark.parametrize("script", ["scripts/ensure_hub.sh", "deploy/jupyterhub/install.sh"])
def test_hub_scripts_parse(script):
    r = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_install_script_refuses_without_root_or_with_a_bad_option():
    r = subprocess.run(["bash", str(HUB / "install.sh"), "--frobnicate"], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--frobnicate" in r.stderr


@pytest.mark.parametrize("name", ["nbgrader_config_global.py", "grader_nbgrader_config.py"])
def test_nbgrader_configs_set_the_shared_exchange(name, monkeypatch, tmp_path):
    env = {"ATTNLAB_EXCHANGE": "/srv/nbgrader/exchange", "ATTNLAB_CLONE": str(ROOT),
           "ATTNLAB_COURSE": str(tmp_path / "course")}
    c = _load(HUB / name, env, monkeypatch)
    assert c.Exchange.root == "/srv/nbgrader/exchange" and c.CourseDirectory.course_id == "attnlab"
    if name == "grader_nbgrader_config.py":  # the course's own grading steps and ignore list
        assert "grading.py" in c.CourseDirectory.ignore
        assert c.CourseDirectory.root == str(tmp_path / "course")
