"""Test support: run a command as an ordinary (non-root) user, as an instructor on a shared hub would.

The suite may run as root on a clean clone inside root's home (mode 0700), with the venv's
interpreter installed there too: an ordinary user cannot even reach them.  A real class
installs the course environment somewhere every user can read; :func:`run_as` reproduces that
without changing the machine: in a private mount namespace (root only, gone when the command
ends) every directory that blocks the user's path to ``expose`` is covered with an empty
tmpfs and only the exposed folders are mounted back, then ``runuser`` drops to the user.
"""
from __future__ import annotations

import os
import secrets
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

#: prefix of the ordinary users this module makes; each run adds a random suffix (see make_user)
USER_PREFIX = "attnlab-rl-"


def why_not() -> str | None:
    """``None`` when the rootless tests can run here, else why not."""
    if os.geteuid() != 0:
        return None  # already an ordinary user: the sandbox tests themselves run rootless
    for tool in ("useradd", "runuser", "unshare", "mount"):
        if not shutil.which(tool):
            return f"'{tool}' is missing"
    return None


def make_user() -> str:
    """Create a system user whose name is unique to this run (no home, no login shell); return it.

    Remove it with :func:`remove_user` (the tests do so in a fixture finaliser, pass or fail), so
    the suite leaves no account behind and two runs on one machine never share one."""
    user = USER_PREFIX + secrets.token_hex(4)
    res = subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                          "--shell", "/usr/sbin/nologin", user], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"useradd {user} failed: {res.stderr.strip()}")
    return user


def remove_user(user: str) -> None:
    """Stop whatever ``user`` still runs and delete the account (and its group); idempotent."""
    subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
    subprocess.run(["userdel", user], capture_output=True)


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
