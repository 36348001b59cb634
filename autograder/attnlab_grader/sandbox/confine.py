"""Confinement of the sandbox's processes: the filesystem view, namespaces, capabilities,
Landlock and resource limits.

Loaded into the zygote as source text (:mod:`attnlab_grader.sandbox.zygote`); the grader imports
:func:`landlock_abi` from here to probe the kernel.  Imports nothing from the course.
"""
from __future__ import annotations

import os
import resource
import subprocess

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
#: Top-level entries of ``/`` that stay visible when the grader sends none
#: (``attnlab_grader.sandbox.VISIBLE_TOP`` is sent in the configuration).
DEFAULT_VISIBLE = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc")


class Config:
    """The zygote's configuration, from the JSON object the grader sends (``attnlab_grader.sandbox``).

    ``uid``: the uid student code runs as; ``nested``: ``userns``/``bwrap`` mechanisms (one uid is
    mapped, each child gets a nested user + mount + PID namespace); ``landlock``: a pod that is
    itself the sandbox (each child confines itself with Landlock); ``visible``: top-level entries of
    ``/`` that stay visible; ``hide``/``keep``: paths hidden / mounted back read-only; ``isolate``:
    build the filesystem view here (not when bubblewrap built it); ``workdir``: the checks' folder.
    Raises ``KeyError``/``ValueError`` for a configuration without a valid ``uid``."""

    def __init__(self, raw: dict):
        self.uid = int(raw["uid"])
        self.nested = bool(raw.get("nested"))
        self.landlock = bool(raw.get("landlock"))
        self.visible = set(raw.get("visible") or DEFAULT_VISIBLE)
        self.hide = list(raw.get("hide", []))
        self.keep = list(raw.get("keep", []))
        self.isolate = bool(raw.get("isolate", True))
        self.workdir = raw.get("workdir") or "/tmp/w"

    @property
    def own_uid(self) -> bool:
        """True when student code runs under this process's own uid (nested, landlock): then the
        sandbox never kills "every process of the uid" (that would be the grader)."""
        return self.nested or self.landlock


def _mount(*args):
    subprocess.run(["mount", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def isolate_filesystem(hide, keep, visible=DEFAULT_VISIBLE):
    """Hide everything but the OS (the top-level entries ``visible``) and ``hide`` paths, then mount
    ``keep`` back.  Raises ``subprocess.CalledProcessError`` when a mount fails.

    ``keep`` (the Python installation and the virtual environment) is mounted back read-only
    at its own path; ``hide`` adds paths inside the visible part (and ``/dev/shm``).
    """
    keep = [k for k in keep if os.path.isdir(k)]
    stage = "/mnt"
    os.makedirs(stage, exist_ok=True)
    _mount("-t", "tmpfs", "-o", "mode=755", "tmpfs", stage)
    staged = []
    for i, path in enumerate(keep):
        dst = os.path.join(stage, str(i))
        os.mkdir(dst)
        _mount("--bind", path, dst)
        staged.append((dst, path))
    top = [os.path.join("/", name) for name in sorted(os.listdir("/")) if name not in visible]
    for path in top + list(hide) + ["/dev/shm"]:
        if path == stage or os.path.islink(path):
            continue  # a top-level symlink (/bin -> usr/bin) points into what stays visible
        if os.path.isdir(path):
            _mount("-t", "tmpfs", "-o", "mode=755,size=64m", "tmpfs", path)
        elif os.path.exists(path):
            _mount("--bind", "/dev/null", path)
    for dst, path in staged:
        os.makedirs(path, exist_ok=True)
        _mount("--move", dst, path)
        _mount("-o", "remount,bind,ro", path)
    _mount("-t", "tmpfs", "-o", "mode=755", "tmpfs", stage)  # drop the staging view


def libc_():
    """The C library of this process (``ctypes.CDLL``, ``errno`` kept for :func:`_check`)."""
    import ctypes
    return ctypes.CDLL(None, use_errno=True)


def _check(ret, what):
    import ctypes
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def become_subreaper():
    """Make this process the reaper of its orphaned descendants (``PR_SET_CHILD_SUBREAPER``);
    where the kernel refuses, PID 1 of the namespace reaps them anyway.  Never raises."""
    try:
        libc_().prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:  # noqa: BLE001 - PID 1 of the namespace reaps them anyway
        pass


def not_dumpable():
    """Mark this process not dumpable.  Trusted processes that share their uid with student code (nested mechanisms) refuse
    ptrace and /proc/<pid>/mem to it: it has no capability in our user namespace."""
    libc_().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def drop_capabilities():
    """Drop every capability (bounding set, effective, permitted, inheritable) and set
    ``no_new_privs``.  Raises ``OSError`` when the kernel refuses."""
    import ctypes

    class _Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class _Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]
    libc = libc_()
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _check(libc.capset(ctypes.byref(_Header(0x20080522, 0)), (_Data * 2)()), "capset")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


#: Landlock (``linux/landlock.h``): syscall numbers (the same on every architecture) and rights.
_LL_CREATE = 444
_LL_ADD_RULE = 445
_LL_RESTRICT = 446
_LL_READ = 1 | 4 | 8                    # EXECUTE, READ_FILE, READ_DIR
_LL_FILE = 1 | 2 | 4 | 1 << 14 | 1 << 15  # the rights that apply to a file (not a directory)
#: handled filesystem rights per Landlock ABI version (1: 13 rights, 2: REFER, 3: TRUNCATE, 5: IOCTL_DEV)
_LL_FS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: unavailable or refused by a seccomp filter)."""
    ret = libc_().syscall(_LL_CREATE, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    return max(ret, 0)


def _landlock_paths(allowed, hidden):
    """Paths whose subtrees together cover ``allowed`` minus everything under ``hidden``
    (Landlock only adds access, so a hidden folder inside an allowed one is left out by
    allowing its siblings instead)."""
    def inside(path, parent):
        return path == parent or path.startswith(parent.rstrip("/") + "/")
    out = []
    for top in allowed:  # a top inside a hidden folder (a venv inside the repository) stays allowed
        stack = [top]
        while stack:
            path = stack.pop()
            if (path != top and any(inside(path, h) for h in hidden)) or not os.path.lexists(path):
                continue
            if any(inside(h, path) and h != path for h in hidden) and os.path.isdir(path) \
                    and not os.path.islink(path):
                # children one by one, never through a link (it could point into a hidden folder)
                stack += [os.path.join(path, n) for n in os.listdir(path)
                          if not os.path.islink(os.path.join(path, n))]
            else:
                out.append(path)
    return out


def landlock(workdir, cfg: Config):
    """Confine this process (and all it may start) with Landlock: read and execute only the
    operating system's top-level folders and the Python installation (``keep``) minus the
    ``hide`` paths (course, repository, ``attnlab``'s source); read and write only ``workdir``;
    with ABI >= 4 no TCP bind or connect; with ABI >= 6 no signals to and no abstract Unix
    sockets of processes outside this check.  Raises ``OSError`` when the kernel refuses."""
    import ctypes
    abi = landlock_abi()
    if abi < 1:
        raise OSError("Landlock is unavailable in this kernel or refused by its seccomp filter")
    fs = _LL_FS.get(abi, _LL_FS[5])
    net = 3 if abi >= 4 else 0       # BIND_TCP | CONNECT_TCP
    scoped = 3 if abi >= 6 else 0    # ABSTRACT_UNIX_SOCKET | SIGNAL
    attr = (ctypes.c_uint64 * 3)(fs, net, scoped)
    size = 24 if abi >= 6 else (16 if abi >= 4 else 8)
    libc = libc_()
    ruleset = libc.syscall(_LL_CREATE, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        _check(-1, "landlock_create_ruleset")

    class _Beneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]
    # /dev/shm: shared memory of the whole pod, hidden as in the other mechanisms
    hidden = [os.path.realpath(h) for h in cfg.hide] + ["/dev/shm"]
    visible = ["/" + n for n in sorted(cfg.visible) if os.path.isdir("/" + n)]
    rules = [(p, _LL_READ) for p in _landlock_paths([*visible, *cfg.keep], hidden)]
    rules.append((workdir, fs))
    try:
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:  # a dangling link (/dev/core -> /proc/kcore in a container): nothing to allow
                continue
            try:
                if not os.path.isdir(path):
                    access &= _LL_FILE
                rule = _Beneath(access & fs, fd)
                _check(libc.syscall(_LL_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0),
                       f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(_LL_RESTRICT, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def nested_namespaces(uid: int):
    """Enter a fresh user + mount + PID namespace (nested mechanisms; called in the item
    process).  ``uid`` is mapped to our own uid: the only one this sandbox has."""
    euid, egid = os.geteuid(), os.getegid()
    _check(libc_().unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {euid} 1"), ("gid_map", f"{uid} {egid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def set_limits(mem_mb: int, cpu_s: int, vm: int | None = None) -> None:
    """Resource limits of a submission's child: address space = ``vm`` (the process's size now) +
    ``mem_mb`` MiB, ``cpu_s`` seconds of CPU, no other process or thread (``RLIMIT_NPROC`` 1: no
    fork bomb, no thread running a library call the watch of this thread cannot see), files up to
    16 MiB, no core dump.  Raises ``OSError``/``ValueError`` when the kernel refuses one."""
    mem = int(mem_mb) * 2**20
    vm = vm or vmsize()
    resource.setrlimit(resource.RLIMIT_AS, (vm + mem, vm + mem))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 2**20, 16 * 2**20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def vmsize() -> int:
    """This process's virtual memory size in bytes (``VmSize``; 2 GiB when unreadable)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 2**31


