"""Headless smoke run of the course, used by ``./start.sh --check``.

Checks, in order, and stops at the first failure with a message that says what to do:
  1. attnlab, torch and the plotting/widget stack import;
  2. nbgrader's JupyterLab extension and server extensions are enabled;
  3. lesson 00 executes top to bottom with nbclient;
  4. a real JupyterLab server starts headless on a free localhost port with a token and
     serves the first lesson and nbgrader's formgrader page; then it is shut down.
"""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
FIRST_LESSON = "lessons/00_orientation.ipynb"


def stop_process(proc: subprocess.Popen, grace: float = 15.0) -> None:
    """Stop a server started by this script or the browser test: SIGTERM, then SIGKILL after
    ``grace`` seconds. (tests/e2e/conftest.py imports it: one home for stopping JupyterLab.)"""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def step(msg: str) -> None:
    print(f"smoke: {msg}", flush=True)


def fail(msg: str) -> None:
    print(f"smoke: FAILED: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def check_imports() -> None:
    import ipywidgets  # noqa: F401
    import matplotlib
    import nbgrader
    import torch

    import attnlab

    step(f"imports ok (attnlab {attnlab.__version__}, torch {torch.__version__}, "
         f"nbgrader {nbgrader.__version__}, matplotlib {matplotlib.__version__})")


def check_extensions() -> None:
    out = subprocess.run([str(BIN / "jupyter"), "labextension", "list"],
                         capture_output=True, text=True, check=False)
    text = out.stdout + out.stderr
    if "@jupyter/nbgrader" not in text or "enabled" not in text:
        fail("nbgrader's JupyterLab extension is not enabled; re-run ./start.sh "
             "(or: .venv/bin/jupyter labextension list)")
    out = subprocess.run([str(BIN / "jupyter"), "server", "extension", "list"],
                         capture_output=True, text=True, check=False)
    if "nbgrader" not in out.stdout + out.stderr:
        fail("nbgrader's server extensions are not enabled (formgrader); re-run ./start.sh")
    step("nbgrader lab + server extensions enabled")


def smoke_env(home: str) -> dict[str, str]:
    """The environment of what the smoke test starts (the kernel, JupyterLab): progress in ``home``,
    the lessons' small runs; this process's own environment is left as it is."""
    return {**os.environ, "ATTNLAB_HOME": home, "ATTNLAB_CI": "1", "MPLBACKEND": "Agg"}


def run_first_lesson(home: str) -> None:
    import nbformat
    from nbclient import NotebookClient

    path = ROOT / FIRST_LESSON
    if not path.exists():
        fail(f"{FIRST_LESSON} is missing from the checkout")
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute(env=smoke_env(home))
    step(f"{FIRST_LESSON} executed headless in {time.perf_counter() - start:.1f} s")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:  # noqa: S310 (localhost only)
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code


def check_server(home: str) -> None:
    port, token = free_port(), secrets.token_hex(16)
    log = open(Path(home) / "jupyter.log", "w")
    proc = subprocess.Popen(
        [str(BIN / "jupyter"), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT}",
         f"--LabApp.default_url=/lab/tree/{FIRST_LESSON}"]
        + (["--allow-root"] if os.geteuid() == 0 else []),
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=smoke_env(home),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if get(f"{base}/api/status?token={token}") == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                fail("JupyterLab did not start within 60 s; its log:\n"
                     + (Path(home) / "jupyter.log").read_text()[-2000:])
            time.sleep(0.5)
        # /formgrader/api/assignments makes nbgrader open (or create) the gradebook
        for path in (f"/lab/tree/{FIRST_LESSON}", "/formgrader", "/formgrader/api/assignments"):
            status = get(f"{base}{path}?token={token}")
            if status != 200:
                fail(f"GET {path} answered {status}")
        step(f"JupyterLab served the first lesson and /formgrader on localhost:{port}")
    finally:
        stop_process(proc)
        log.close()


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="attnlab-smoke-") as home:
        check_imports()
        check_extensions()
        run_first_lesson(home)
        check_server(home)
    step("OK: the course is set up. Run ./start.sh to open it in JupyterLab.")


if __name__ == "__main__":
    main()
