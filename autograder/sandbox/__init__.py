"""Host side of the sandbox: starts ``zygote.py`` in fresh namespaces and sends it jobs.

See ``autograder/SECURITY.md`` for the threat model.  One :class:`Sandbox` serves many
submissions (one grading worker = one sandbox = one unprivileged uid).
"""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

ZYGOTE = Path(__file__).with_name("zygote.py")
#: Inside the sandbox only the operating system's top-level directories stay visible
#: (``zygote.VISIBLE_TOP``: ``/usr``, ``/etc``, ``/lib``, ...); everything else is an empty
#: tmpfs, and the Python installation and the venv are mounted back read-only.  ``hide``
#: paths (the course root, the gradebook) are hidden as well, wherever they are.
#: Sandbox uids are ``BASE_UID + 16 * pid + slot``: unique per grading process, so two grading runs
#: on one machine never share a uid (cleanup kills *every* process of the uid).
BASE_UID = 1_000_000


class SandboxUnavailable(RuntimeError):
    """The machine cannot build the sandbox (needs root and ``unshare`` from util-linux)."""


def sandbox_support() -> str | None:
    """Return ``None`` when the sandbox can run here, else the reason it cannot."""
    if os.geteuid() != 0:
        return "the grader must run as root to create namespaces and drop to an unprivileged uid"
    if not shutil.which("unshare") or not shutil.which("mount"):
        return "util-linux 'unshare' and 'mount' are required"
    return None


def _course_code() -> list[str]:
    """The repository and ``attnlab``'s source tree: hidden even if they live under ``/usr``."""
    import importlib.util
    paths = [str(Path(__file__).resolve().parents[2])]
    spec = importlib.util.find_spec("attnlab")
    if spec is not None and spec.submodule_search_locations:
        paths += list(spec.submodule_search_locations)
    return paths


def _frame(obj) -> bytes:
    data = json.dumps(obj).encode()
    return struct.pack(">Q", len(data)) + data


class Sandbox:
    """A long-lived sandbox server.  ``run(job)`` returns the zygote's reply dict."""

    def __init__(self, slot: int = 0, hide: list[str] | None = None, start_timeout: float = 60):
        reason = sandbox_support()
        if reason:
            raise SandboxUnavailable(reason)
        self.uid = BASE_UID + 16 * os.getpid() + (slot % 16)
        hide_paths = sorted({os.path.realpath(p) for p in [*(hide or []), *_course_code()]})
        keep = sorted({os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)})
        config = {"uid": self.uid, "hide": hide_paths, "keep": keep}
        cmd = ["unshare", "--mount", "--net", "--pid", "--fork", "--mount-proc", "--kill-child",
               "--propagation", "private", sys.executable, "-I", str(ZYGOTE), json.dumps(config)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd="/", start_new_session=True,
                                     env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                                          "OMP_NUM_THREADS": "1"})
        hello = self._read()
        if not hello or not hello.get("ready"):
            err = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.poll() is not None else ""
            self.close()
            raise SandboxUnavailable(f"sandbox failed to start: {err or hello}")

    def _read(self):
        head = self.proc.stdout.read(8)
        if len(head) < 8:
            return None
        (n,) = struct.unpack(">Q", head)
        return json.loads(self.proc.stdout.read(n).decode())

    def run(self, job: dict, deadline: float | None = None) -> dict:
        """Run one job (all checks of one submission); raises if the sandbox died or hung.

        ``deadline`` (seconds) defaults to every check's timeout plus a margin; past it the
        sandbox is killed (a fresh one is started for the next submission).
        """
        import select
        if self.proc.poll() is not None:
            raise RuntimeError("sandbox process is not running")
        if deadline is None:
            deadline = (float(job.get("timeout", 10)) + 5) * max(1, len(job.get("checks", []))) + 30
        self.proc.stdin.write(_frame(job))
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], deadline)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError(f"sandbox did not answer within {deadline:.0f} s and was restarted")
        reply = self._read()
        if reply is None:
            raise RuntimeError("sandbox process died while grading")
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except Exception:  # noqa: BLE001
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
