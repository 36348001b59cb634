"""Host side of the sandbox: starts the zygote (``zygote.py``) in fresh namespaces and sends it jobs.

See ``autograder/SECURITY.md`` for the threat model.  One :class:`Sandbox` serves many
submissions (one grading worker = one sandbox).

Three mechanisms, strongest first; :func:`choose_mechanism` takes the first that works here
(``choose_mechanism("userns")`` pins one: ``c.SandboxGrade.mechanism`` in nbgrader's config,
``python -m attnlab_grader grade --sandbox userns`` on the command line):

* ``root`` -- the grader is root (``CAP_SYS_ADMIN``): ``unshare`` namespaces, every check
  runs under its own unprivileged uid.
* ``userns`` -- an ordinary user with unprivileged user namespaces
  (``unshare --user --map-root-user``): one uid (the grader's) is mapped; each check runs in
  a *nested* user + PID + mount namespace with no capabilities outside it.
* ``bwrap`` -- Debian's ``bubblewrap`` builds the filesystem view and namespaces; checks are
  nested as for ``userns``.
* ``landlock`` -- only when pinned: a Kubernetes pod that is itself the sandbox (one submission,
  no egress, no capabilities; ``autograder/attnlab_grader/classroom/podjob.py`` checks that first).  No namespaces; each
  check confines itself with Landlock (files, TCP, signals; ``confine.landlock``).
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

from attnlab_grader.sandbox.confine import landlock_abi as _landlock_abi
from attnlab_grader.sandbox.wire import encode_frame
from attnlab_grader.sandbox.zygote import BOOTSTRAP, MODULES

HERE = Path(__file__).parent


def sandbox_sources() -> list[list[str]]:
    """``[[name, source], ...]`` of the sandbox's modules (:data:`attnlab_grader.sandbox.zygote.MODULES`),
    the first frame the zygote reads: inside the sandbox the repository is hidden, so its code
    travels as text (and is the same code the grader imports from this package)."""
    return [[name, (HERE / f"{name}.py").read_text(encoding="utf-8")] for name in MODULES]


#: Inside the sandbox only the operating system's top-level directories stay visible
#: (``confine.DEFAULT_VISIBLE``: ``/usr``, ``/etc``, ``/lib``, ...); everything else is an empty
#: tmpfs, and the Python installation and the venv are mounted back read-only.  ``hide``
#: paths (the course root, the gradebook) are hidden as well, wherever they are.
#: Sandbox uids (``root`` mechanism) are ``BASE_UID + 16 * pid + slot``: unique per grading
#: process, so two grading runs on one machine never share a uid (cleanup kills *every*
#: process of the uid).
BASE_UID = 1_000_000
#: The uid student code sees inside a nested namespace (``userns``/``bwrap``); it maps to the
#: grader's own uid outside.
NESTED_UID = 1000
MECHANISMS = ("root", "userns", "bwrap")
#: Mechanisms used only when pinned: ``landlock`` is safe only inside a pod that
#: ``attnlab_grader.classroom.podjob`` has checked (deploy/kubernetes/README.md), never a default.
PINNED_ONLY = ("landlock",)
#: Top-level entries of ``/`` that stay visible in the sandbox (the operating system: programs,
#: shared libraries, configuration).  Everything else at the top level (``/data``, ``/root``,
#: ``/home``, ``/tmp``, ``/opt``, ``/srv``, ``/var``, ``/mnt``, a checkout at ``/check``, ...)
#: is an empty tmpfs: an allowlist, so a repository or course in an unexpected place is hidden too.
VISIBLE_TOP = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc")
#: What to enable when no mechanism works (one sentence, shown by ``grade``).
ENABLE_HINT = ("enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 "
               "and user.max_user_namespaces>0; on Ubuntu also "
               "kernel.apparmor_restrict_unprivileged_userns=0), install bubblewrap "
               "(apt-get install bubblewrap), or run the grader as root")
_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "OMP_NUM_THREADS": "1"}
# A probe that must succeed inside the sandbox: a nested user + mount + PID namespace, as each
# check gets in the userns/bwrap mechanisms.
_NEST_PROBE = ("import ctypes,os,sys;l=ctypes.CDLL(None,use_errno=True);"
               "sys.exit(0 if l.unshare(0x10000000|0x20000|0x20000000)==0 else 3)")


class SandboxUnavailable(RuntimeError):
    """No sandbox mechanism works on this machine; the message says what to enable."""


def _command(mechanism: str, config: dict) -> list[str]:
    """The command line that starts the zygote under ``mechanism``: ``python -I -c BOOTSTRAP CONFIG``
    (the sandbox's modules follow on stdin, :func:`sandbox_sources`)."""
    py = [sys.executable, "-I", "-c", BOOTSTRAP, json.dumps(config)]
    return _wrap(mechanism, py, config.get("hide", []), config.get("keep", []))


def _wrap(mechanism: str, argv: list[str], hide=(), keep=()) -> list[str]:
    if mechanism == "root":
        return ["unshare", "--mount", "--net", "--pid", "--fork", "--mount-proc", "--kill-child",
                "--propagation", "private", *argv]
    if mechanism == "userns":
        return ["unshare", "--user", "--map-root-user", "--mount", "--net", "--pid", "--fork",
                "--mount-proc", "--kill-child", "--propagation", "private", *argv]
    if mechanism == "landlock":  # no wrapper: each child confines itself (confine.landlock)
        return list(argv)
    if mechanism == "bwrap":
        cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session"]
        for name in sorted(os.listdir("/")):
            path = "/" + name
            if name not in VISIBLE_TOP or name in ("dev", "proc"):
                continue
            if os.path.islink(path):
                cmd += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                cmd += ["--ro-bind", path, path]
        cmd += ["--dev", "/dev", "--proc", "/proc", "--size", str(64 * 2**20), "--tmpfs", "/tmp",
                "--size", str(2**20), "--tmpfs", "/dev/shm"]  # as confine.isolate_filesystem's tmpfs

        def inside(path, parent):
            return path == parent or path.startswith(parent.rstrip("/") + "/")

        def visible(path):
            return (path.split("/")[1] in VISIBLE_TOP and path.split("/")[1] not in ("dev", "proc")) \
                or any(inside(path, k) for k in keep)

        def hide_ops(paths):
            ops = []
            for path in paths:
                if os.path.isdir(path):
                    ops += ["--tmpfs", path]
                elif os.path.exists(path):
                    ops += ["--ro-bind", "/dev/null", path]
            return ops
        hide = [h for h in hide if visible(h)]
        # a hidden folder holding a kept one (a venv inside the course's repository): hide, then keep
        cmd += hide_ops([h for h in hide if any(inside(k, h) for k in keep)])
        for path in keep:
            if os.path.isdir(path):
                cmd += ["--ro-bind", path, path]
        cmd += hide_ops([h for h in hide if not any(inside(k, h) for k in keep)])
        return cmd + ["--", *argv]
    raise ValueError(f"unknown sandbox mechanism {mechanism!r} (one of {', '.join(MECHANISMS)})")


def landlock_abi() -> int:
    """The kernel's Landlock ABI version for this process (0: none, or refused by seccomp);
    :func:`attnlab_grader.sandbox.confine.landlock_abi`, the one the checks use."""
    return _landlock_abi()


def _probe(mechanism: str) -> str | None:
    """``None`` when ``mechanism`` can start here (namespaces + a nested namespace), else why not."""
    if mechanism == "landlock":
        abi = landlock_abi()
        return None if abi >= 4 else (f"Landlock ABI {abi} < 4 (needs Linux >= 6.7 with Landlock "
                                      "enabled and landlock_* allowed by the seccomp profile)")
    if mechanism == "root":
        if os.geteuid() != 0:
            return "not running as root"
        if not shutil.which("unshare") or not shutil.which("mount"):
            return "util-linux 'unshare' and 'mount' are missing"
        argv = ["true"]
    elif mechanism == "userns":
        if not shutil.which("unshare"):
            return "util-linux 'unshare' is missing"
        argv = [sys.executable, "-I", "-c", _NEST_PROBE]
    else:
        if not shutil.which("bwrap"):
            return "bubblewrap is not installed"
        argv = [sys.executable, "-I", "-c", _NEST_PROBE]
    keep = sorted({os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)})
    try:
        res = subprocess.run(_wrap(mechanism, argv, keep=keep), capture_output=True, timeout=30,
                             env=_ENV, cwd="/")
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{type(err).__name__}: {err}"
    if res.returncode == 3:
        return "nested user namespaces are not allowed inside it"
    if res.returncode:
        return (res.stderr.decode(errors="replace").strip().splitlines() or [f"exit {res.returncode}"])[-1]
    return None


@functools.lru_cache(maxsize=None)
def mechanism_support() -> dict[str, str | None]:
    """``{mechanism: None if usable else reason}`` for this process's user (probed once),
    :data:`PINNED_ONLY` ones included."""
    return {m: _probe(m) for m in MECHANISMS + PINNED_ONLY}


def choose_mechanism(pinned: str | None = None) -> str:
    """The strongest usable mechanism, or ``pinned`` (one of :data:`MECHANISMS`) if it works here.

    Raises :class:`SandboxUnavailable` (none works, or the pinned one does not, with why) and
    ``ValueError`` for a ``pinned`` name that is not a mechanism."""
    pinned = (pinned or "").strip()
    if pinned and pinned not in MECHANISMS + PINNED_ONLY:
        raise ValueError(f"unknown sandbox mechanism {pinned!r} (one of "
                         f"{', '.join(MECHANISMS + PINNED_ONLY)})")
    support = {m: mechanism_support()[m] for m in MECHANISMS} if not pinned else {pinned: _probe(pinned)}
    for m, reason in support.items():
        if reason is None:
            return m
    tried = "; ".join(f"{m}: {r}" for m, r in support.items())
    raise SandboxUnavailable(f"no sandbox can be built here ({tried}); {ENABLE_HINT}.")


def sandbox_support() -> str | None:
    """Return ``None`` when some sandbox mechanism can run here, else the reason none can."""
    try:
        choose_mechanism()
    except SandboxUnavailable as err:
        return str(err)
    return None


#: ``pids.max`` of a grading worker's cgroup (zygote, job process, item, helpers; each check
#: itself may not create a thread or process, see ``procs.spawn_child``).
CGROUP_PIDS = 64


def _cgroup2() -> tuple[str | None, str]:
    """``(directory of this process's cgroup v2, "")`` or ``(None, why it cannot be used)``."""
    mount = None
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                parts = line.split()
                sep = parts.index("-")
                if parts[sep + 1] == "cgroup2":
                    mount = parts[4]
                    break
        with open("/proc/self/cgroup") as f:
            rel = next((ln.strip()[3:] for ln in f if ln.startswith("0::")), None)
    except (OSError, ValueError):
        return None, "cannot read /proc/self/mountinfo or /proc/self/cgroup"
    if mount is None or rel is None:
        return None, "no cgroup v2 hierarchy is mounted"
    here = os.path.join(mount, rel.lstrip("/"))
    try:
        controllers = open(os.path.join(mount, "cgroup.controllers")).read().split()
        enabled = open(os.path.join(here, "cgroup.subtree_control")).read().split()
    except OSError as err:
        return None, f"cannot read the cgroup v2 hierarchy ({err.strerror})"
    if "memory" not in controllers or "pids" not in controllers:
        return None, ("the kernel's cgroup v2 hierarchy has no memory/pids controller here "
                      "(memory is on cgroup v1 or not delegated)")
    if "memory" not in enabled or "pids" not in enabled:
        return None, (f"memory/pids are not enabled for sub-cgroups of {here} (no delegation; with "
                      "systemd run the grader under `systemd-run --user --scope -p Delegate=yes`)")
    if not os.access(here, os.W_OK):
        return None, f"{here} is not writable by this user (no delegation)"
    return here, ""


def worker_cgroup(slot: int, mem_mb: int) -> tuple[str | None, str]:
    """Create ``attnlab-<pid>-<slot>`` under this process's cgroup v2 with ``memory.max`` =
    ``mem_mb`` MiB and ``pids.max`` = :data:`CGROUP_PIDS`.  Returns ``(path, "")``, or
    ``(None, reason)`` where the kernel or the delegation does not allow it (then only the
    per-check rlimits apply; see SECURITY.md)."""
    here, why = _cgroup2()
    if here is None:
        return None, why
    path = os.path.join(here, f"attnlab-{os.getpid()}-{slot}")
    try:
        os.makedirs(path, exist_ok=True)
        for name, value in (("memory.max", str(mem_mb * 2**20)), ("memory.swap.max", "0"),
                            ("pids.max", str(CGROUP_PIDS))):
            if name == "memory.swap.max" and not os.path.exists(os.path.join(path, name)):
                continue
            with open(os.path.join(path, name), "w") as f:
                f.write(value)
    except OSError as err:
        return None, f"cannot create a cgroup under {here}: {err.strerror}"
    return path, ""


def _course_code() -> list[str]:
    """The repository and ``attnlab``'s source tree: hidden even if they live under ``/usr``."""
    import importlib.util
    paths = [str(Path(__file__).resolve().parents[3])]
    spec = importlib.util.find_spec("attnlab")
    if spec is not None and spec.submodule_search_locations:
        paths += list(spec.submodule_search_locations)
    return paths


class Sandbox:
    """A long-lived sandbox server.  ``run(job)`` returns the zygote's reply dict.

    ``mechanism``: ``root``/``userns``/``bwrap`` (default: :func:`choose_mechanism`).
    ``uid``: the uid student code runs as (as it sees it).  ``limits``: the limits the zygote
    could apply (``{"rlimits": ..., "cgroup": ...}``, see :meth:`describe`).
    """

    def __init__(self, slot: int = 0, hide: list[str] | None = None, start_timeout: float = 60,
                 mechanism: str | None = None, cgroup_mem_mb: int = 4096):
        self.mechanism = mechanism or choose_mechanism()
        why = mechanism_support().get(mechanism or "")
        if mechanism and why:
            raise SandboxUnavailable(f"sandbox mechanism {mechanism!r} unavailable: {why}")
        landlock = self.mechanism == "landlock"
        nested = self.mechanism not in ("root", "landlock")
        self.uid = os.geteuid() if landlock else NESTED_UID if nested else BASE_UID + 16 * os.getpid() + (slot % 16)
        hide_paths = sorted({os.path.realpath(p) for p in [*(hide or []), *_course_code()]})
        keep = sorted({os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)})
        config = {"uid": self.uid, "hide": hide_paths, "keep": keep, "nested": nested,
                  "isolate": self.mechanism not in ("bwrap", "landlock"), "visible": list(VISIBLE_TOP),
                  }
        self._workdir = None
        if landlock:  # the checks' only writable folder (a private one: no mount namespace here)
            import tempfile
            self._workdir = tempfile.mkdtemp(prefix="attnlab-check-")
            config.update(landlock=True, workdir=os.path.join(self._workdir, "w"))
        self.cgroup, why = worker_cgroup(slot, cgroup_mem_mb)
        self.limits = {"cgroup": f"memory.max={cgroup_mem_mb} MiB, pids.max={CGROUP_PIDS} ({self.cgroup})"
                       if self.cgroup else f"off ({why})"}
        join = None
        if self.cgroup:
            procs = os.path.join(self.cgroup, "cgroup.procs")

            def join():  # runs in the child before exec: the zygote and all it forks are inside
                with open(procs, "w") as f:
                    f.write("0")
        self.proc = subprocess.Popen(_command(self.mechanism, config), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/",
                                     start_new_session=True, env=_ENV, preexec_fn=join)
        try:
            self.proc.stdin.write(encode_frame(sandbox_sources()))
            self.proc.stdin.flush()
        except OSError:  # it died at once: its stderr says why (below)
            pass
        hello = self._read()
        if not hello or not hello.get("ready"):
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            err = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.poll() is not None else ""
            self.close()
            raise SandboxUnavailable(f"sandbox ({self.mechanism}) failed to start: {err or hello}")

    def describe(self) -> str:
        """One line for summaries and reports, e.g. ``userns (nested namespace per check; cgroup: off ...)``."""
        how = {"root": "root namespaces, a separate uid per check",
               "userns": "unprivileged user namespace, a nested user+PID namespace per check",
               "bwrap": "bubblewrap, a nested user+PID namespace per check",
               "landlock": f"the pod is the sandbox, Landlock ABI {landlock_abi()} per check"}[self.mechanism]
        return f"{self.mechanism} ({how}; rlimits per check; cgroup v2 limit per worker: {self.limits['cgroup']})"

    def _read(self):
        head = self.proc.stdout.read(8)
        if len(head) < 8:
            return None
        (n,) = struct.unpack(">Q", head)
        return json.loads(self.proc.stdout.read(n).decode())

    def run(self, job: dict, deadline: float | None = None) -> dict:
        """Run one job (all checks of one submission); raises if the sandbox died or hung.

        ``deadline`` (seconds) defaults to the cells' and every check's timeout plus a margin; past
        it the sandbox is killed (a fresh one is started for the next submission).
        """
        import select
        if self.proc.poll() is not None:
            raise RuntimeError("sandbox process is not running")
        if deadline is None:
            deadline = (float(job.get("timeout", 10)) + 5) * (len(job.get("checks", [])) + 1) + 30
        self.proc.stdin.write(encode_frame(job))
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
        """Stop the zygote (closing its stdin; killed after 5 s), remove the worker's cgroup and the
        checks' private folder.  Safe to call twice; never raises."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except Exception:  # noqa: BLE001
                self.proc.kill()
                self.proc.wait()
        if getattr(self, "cgroup", None):
            try:
                os.rmdir(self.cgroup)
            except OSError:
                pass
        if getattr(self, "_workdir", None):
            shutil.rmtree(self._workdir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
