"""Test support: run a command as an ordinary (non-root) user, as an instructor on a shared hub would.

The suite runs as root on a clean clone, often under ``/root`` (mode 0700), with the venv's
interpreter under ``/root/.pyenv``: an ordinary user cannot even reach them.  A real class
installs the course environment somewhere every user can read; :func:`run_as` reproduces that
without changing the machine: in a private mount namespace (root only, gone when the command
ends) every directory that blocks the user's path to ``expose`` is covered with an empty
tmpfs and only the exposed folders are mounted back, then ``runuser`` drops to the user.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

USER = "attnlab-rootless"


def why_not() -> str | None:
    """``None`` when the rootless tests can run here, else why not."""
    if os.geteuid() != 0:
        return None  # already an ordinary user: the sandbox tests themselves run rootless
    for tool in ("useradd", "runuser", "unshare", "mount"):
        if not shutil.which(tool):
            return f"'{tool}' is missing"
    return None


def ensure_user() -> str:
    """Create the system user ``USER`` (idempotent; kept for later runs, owns nothing else)."""
    if subprocess.run(["id", "-u", USER], capture_output=True).returncode != 0:
        res = subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                              "--shell", "/usr/sbin/nologin", USER], capture_output=True, text=True)
        if res.returncode not in (0, 9):  # 9: created meanwhile by a parallel run
            raise RuntimeError(f"useradd {USER} failed: {res.stderr.strip()}")
    return USER


def _blocker(path: Path) -> Path | None:
    """The highest ancestor of ``path`` that others cannot traverse (e.g. ``/root``, 0700)."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not os.stat(parent).st_mode & 0o001:
            return parent
    return None


def run_as(user: str, argv: list[str], expose: list[str], timeout: float = 600,
           env: dict | None = None, cwd: str = "/") -> subprocess.CompletedProcess:
    """Run ``argv`` as ``user`` in ``cwd`` with the ``expose`` folders readable (read-only where the
    user has no write permission, as on a shared hub); returns the completed process."""
    paths = sorted({os.path.realpath(p) for p in expose})
    blockers = sorted({str(b) for p in paths if (b := _blocker(Path(p)))})
    lines = ["set -e", "stage=$(mktemp -d)", 'mount -t tmpfs tmpfs "$stage"']
    for i, p in enumerate(paths):
        make = "mkdir" if os.path.isdir(p) else "touch"
        lines += [f'{make} "$stage/{i}"', f'mount --bind {shlex.quote(p)} "$stage/{i}"']
    for b in blockers:
        lines.append(f"mount -t tmpfs -o mode=755 tmpfs {shlex.quote(b)}")
    for i, p in enumerate(paths):
        q = shlex.quote(p)
        make = f"mkdir -p {q}" if os.path.isdir(p) else f"mkdir -p {shlex.quote(os.path.dirname(p))} && touch {q}"
        lines += [f"[ -e {q} ] || {{ {make}; }}", f'mount --bind "$stage/{i}" {q}']
    envs = " ".join(shlex.quote(f"{k}={v}") for k, v in (env or {}).items())
    lines.append(f"cd {shlex.quote(cwd)}")
    lines.append(f"exec runuser -u {shlex.quote(user)} -- env -i PATH=/usr/local/bin:/usr/bin:/bin "
                 f"HOME=/tmp {envs} " + " ".join(map(shlex.quote, argv)))
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(lines)],
                          capture_output=True, text=True, timeout=timeout, cwd="/")


def python_paths() -> list[str]:
    """The interpreter, its standard library and the venv: what the user must be able to read."""
    return [sys.base_prefix, sys.prefix]
