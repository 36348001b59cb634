"""Fixtures for the browser end-to-end test: a real JupyterLab server and headless Chromium.

The server is started the way ``./start.sh`` starts it (``jupyter lab`` with the course
folder as ``root_dir`` and lesson 00 as the default page), but on a temporary copy of the
course files, a free localhost port, a random token, and a throwaway learner store, so a
run never edits the committed notebooks or anyone's real progress.

Chromium is Debian's ``/usr/bin/chromium`` (``scripts/ensure_chromium.sh`` installs it),
driven by Playwright from PyPI. Nothing is downloaded at test time; without Chromium or
Playwright the tests skip and say why.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from suite_settings import suite_settings
from e2e_lab import ARTIFACTS, LEARNER, ROOT, Lab

sys.path.insert(0, str(ROOT / "scripts"))
from smoke import stop_process  # noqa: E402 - the one way this repo stops a JupyterLab server

BIN = Path(sys.executable).parent
CHROMIUM = suite_settings().chromium
VIEWPORT = {"width": 1280, "height": 800}
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]
# Paths of the working tree that a fresh clone would not have, or that a run must not copy.
SKIP_PARTS = {".git", ".venv", "artifacts", ".pytest_cache", "__pycache__", ".ipynb_checkpoints"}
# JupyterLab user settings for the run: no "fetch news?" toast covering the screenshots.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _course_files() -> list[str]:
    """Files a fresh clone would hold: tracked plus not-yet-committed, never ignored ones."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    if out.returncode != 0:  # not a git checkout (e.g. an unpacked tarball): copy what is there
        return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
                if p.is_file() and not SKIP_PARTS & set(p.relative_to(ROOT).parts)]
    return [f for f in out.stdout.split("\0") if f and not SKIP_PARTS & set(Path(f).parts)]


def copy_course(dest: Path) -> Path:
    """Copy the course files to ``dest`` (a fresh-clone-like tree) and return it."""
    for rel in _course_files():
        src = ROOT / rel
        if src.is_file():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


def start_command(root: Path) -> list[str]:
    """The README's first command, ``./start.sh``, run in the course copy ``root``.

    The copy gets a link to this checkout's ``.venv`` and a no-op ``scripts/setup.sh``
    (``./test.sh`` already ran the real setup; a pip install from the copy would re-point
    the shared environment's editable attnlab at a temporary folder). Everything else --
    root_dir, default_url, the environment start.sh sets -- is start.sh's own. Without a
    .venv-based start.sh (e.g. another install), start.sh's jupyter command is mirrored.
    """
    venv = ROOT / ".venv"
    if (root / "start.sh").is_file() and (root / "scripts" / "setup.sh").is_file() \
            and venv.is_dir() and BIN.resolve().parent == venv.resolve():
        (root / ".venv").symlink_to(venv, target_is_directory=True)
        (root / "scripts" / "setup.sh").write_text(
            "#!/usr/bin/env bash\n# e2e test copy: the environment is already set up\nexit 0\n")
        return ["bash", str(root / "start.sh")]
    cmd = [str(BIN / "jupyter"), "lab", f"--ServerApp.root_dir={root}",
           "--LabApp.default_url=/lab/tree/lessons/00_orientation.ipynb"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # as start.sh does in containers/CI
        cmd.append("--allow-root")
    return cmd


class LabServer:
    """A running ``jupyter lab`` process; ``url(path)`` gives an address with the token."""

    def __init__(self, root: Path, home: Path, port: int, token: str, log: Path,
                 proc: subprocess.Popen, env: dict[str, str]):
        self.root, self.home, self.port, self.token, self.log, self.proc, self.env = (
            root, home, port, token, log, proc, env)
        self.base = f"http://127.0.0.1:{port}"

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{sep}token={self.token}"

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no server log)"


def _wait_ready(server: LabServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {server.proc.returncode}:\n"
                               f"{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url("/api/status"), timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"jupyter lab did not answer within {timeout:.0f} s:\n{server.log_tail()}")


@pytest.fixture(scope="module")
def chromium_path() -> Path:
    if not CHROMIUM.exists():
        pytest.skip(f"e2e: {CHROMIUM} not found; install Debian's chromium "
                    "(bash scripts/ensure_chromium.sh, needs root + apt-get) to run the browser test")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("e2e: the playwright Python package is missing (pip install -e '.[dev]')")
    return CHROMIUM


@pytest.fixture(scope="module")
def lab_server(chromium_path, tmp_path_factory) -> LabServer:
    """Start ``jupyter lab`` on a temporary copy of the course; stop it afterwards."""
    base = tmp_path_factory.mktemp("e2e")
    root = copy_course(base / "course")
    home = base / "attnlab-home"
    home.mkdir()
    jupyter = base / "jupyter"
    settings = jupyter / "lab-settings"
    for rel, value in LAB_SETTINGS.items():
        (settings / rel).parent.mkdir(parents=True, exist_ok=True)
        (settings / rel).write_text(json.dumps(value))
    env = {k: v for k, v in os.environ.items()
           # a student's kernel uses the inline plot backend; the test run's Agg would hide plots
           if k not in {"MPLBACKEND", "ATTNLAB_CI", "ATTNLAB_HEADLESS", "JUPYTER_CONFIG_DIR",
                        "JUPYTER_PATH", "VIRTUAL_ENV"}}
    # a fresh shell after `git clone`: the course's .venv is not activated
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                  if d and Path(d).resolve() != BIN.resolve())
    env.update({
        "ATTNLAB_HOME": str(home),
        "ATTNLAB_LEARNER": LEARNER,
        "JUPYTER_CONFIG_DIR": str(jupyter / "config"),      # no ~/.jupyter leaking in
        "JUPYTER_RUNTIME_DIR": str(jupyter / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(jupyter / "workspaces"),
        "OMP_NUM_THREADS": "1",
        "PYTHONUNBUFFERED": "1",
    })
    port, token = _free_port(), secrets.token_hex(16)
    log = base / "jupyter-lab.log"
    cmd = start_command(root) + [
        "--no-browser", f"--port={port}", "--ip=127.0.0.1",
        f"--IdentityProvider.token={token}", "--ServerApp.port_retries=0",
    ]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    server = LabServer(root, home, port, token, log, proc, env)
    try:
        _wait_ready(server, timeout=90)
        yield server
    finally:
        stop_process(proc)
        shutil.copy2(log, ARTIFACTS / "jupyter-lab.log") if ARTIFACTS.is_dir() else None


@pytest.fixture(scope="module")
def browser(chromium_path, tmp_path_factory):
    """A headless Chromium (fresh profile) driven by Playwright; one page, 1280x800."""
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=str(chromium_path), headless=True,
            args=CHROMIUM_ARGS, viewport=VIEWPORT, device_scale_factor=1,
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="module")
def page(browser):
    """The browser's one page (shared by a test module's tests, in order)."""
    return browser.pages[0] if browser.pages else browser.new_page()


@pytest.fixture(scope="module")
def lab(page, lab_server) -> Lab:
    """JupyterLab driven through ``page`` against the module's ``lab_server``."""
    return Lab(page, lab_server)


@pytest.fixture(scope="module")
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob("*.png"):
        old.unlink(missing_ok=True)  # another run may be cleaning up too
    return ARTIFACTS
