"""The installed class serves the course website to logged-in users at ``/services/course/``, without a server.

One install by ``deploy/jupyterhub/install.sh`` (the ``klass`` fixture of ``test_hub_e2e.py``: the production
configuration, PAM logins with real passwords, names unique to the run, everything removed afterwards), with
the site built first (``scripts/build_site.py``, as ``make site``; an unchanged site is not rebuilt):

* without a login, ``/services/course/`` and a lesson page answer with a redirect to the hub's login, and no
  page content;
* a student logs in with their password and reads the site's index and an executed lesson (its figures
  are in the page) through the hub;
* afterwards the student has no server: reading the site started nothing.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from test_hub_e2e import STUDENTS, klass, login, login_and_token  # noqa: F401 - klass is the shared fixture

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("hub")]

ROOT = Path(__file__).resolve().parents[2]
LESSON = "lessons/02_scaled_dot_product_attention.html"


@pytest.fixture(scope="module")
def built_site() -> Path:
    """The built site in the clone (install.sh copies it); built now when missing or out of date."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_site.py")], cwd=ROOT,
                         capture_output=True, text=True, timeout=3600)
    assert out.returncode == 0, f"make site failed:\n{out.stdout[-2000:]}\n{out.stderr[-4000:]}"
    return ROOT / "site" / "_build" / "html"


def test_logged_in_student_reads_the_site_without_a_server(built_site, klass):  # noqa: F811 - the fixture
    import requests

    assert "/services/course/" in klass.install_out, f"install.sh did not install the website:\n{klass.install_out}"
    for path in ("/services/course/", f"/services/course/{LESSON}"):
        r = requests.get(klass.url + path, allow_redirects=False, timeout=60)
        assert r.status_code in (302, 303), f"anonymous {path}: HTTP {r.status_code}, expected a redirect to log in"
        assert "login" in r.headers.get("Location", "") or "oauth" in r.headers.get("Location", ""), \
            f"anonymous {path} redirected to {r.headers.get('Location')!r}, not to the hub's login"
        assert "<img" not in r.text, f"anonymous {path} got page content"

    student = STUDENTS[0]
    session = login(klass, student, klass.passwords[student])
    assert session is not None, f"{student} could not log in:\n{klass.log_tail()}"
    index = session.get(klass.url + "/services/course/", timeout=60)
    assert index.status_code == 200, f"{student}: /services/course/: HTTP {index.status_code}\n{klass.log_tail()}"
    assert "attnlab" in index.text and "Lesson 02" in index.text, "the index is not the course website's"
    lesson = session.get(klass.url + f"/services/course/{LESSON}", timeout=60)
    assert lesson.status_code == 200, f"{student}: {LESSON}: HTTP {lesson.status_code}"
    assert lesson.text.count("<img") >= 1, "the executed lesson has no figure in the page"

    login_and_token(klass, student)
    model = klass.check(klass.request("GET", f"/hub/api/users/{student}", student), "user model").json()
    assert not model.get("servers"), f"reading the site started a server for {student}: {model.get('servers')}"


def test_static_hub_config_adds_the_course_service_only_with_a_built_site(monkeypatch, tmp_path):
    """jupyterhub_config.py, loaded as the hub loads it: with a built site, a service "course" run as nobody
    from the hub's Python, readable by every user (the "user" role); without one, no such service."""
    from traitlets.config.loader import PyFileConfigLoader

    hub = ROOT / "deploy" / "jupyterhub"
    base = {"ATTNLAB_HUB_HOME": "/opt/attnlab-hub", "ATTNLAB_HUB_STATE": "/srv/attnlab-x/hub",
            "ATTNLAB_SITE_PORT": "12345"}
    for k, v in base.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("ATTNLAB_SITE_DIR", str(tmp_path / "site"))
    c = PyFileConfigLoader("jupyterhub_config.py", path=str(hub)).load_config()
    assert "course" not in [s["name"] for s in c.JupyterHub.services], "a service for a site that is not built"
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<title>attnlab</title>")
    c = PyFileConfigLoader("jupyterhub_config.py", path=str(hub)).load_config()
    service = next(s for s in c.JupyterHub.services if s["name"] == "course")
    assert service["user"] == "nobody" and service["url"] == "http://127.0.0.1:12345"
    # the program sits beside the site, readable by nobody's service (never in the hub's private state folder)
    assert service["command"] == ["/opt/attnlab-hub/hub/bin/python", str(tmp_path / "site-service" / "course_site.py")]
    assert service["environment"]["ATTNLAB_SITE_DIR"] == str(tmp_path / "site")
    role = next(r for r in c.JupyterHub.load_roles if r["name"] == "user")
    assert "access:services!service=course" in role["scopes"] and "self" in role["scopes"]
