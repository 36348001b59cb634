"""Sandbox server: runs untrusted solution code, one forked child per graded item.

This file is started by :mod:`autograder.sandbox` as
``unshare --mount --net --pid --fork --mount-proc --kill-child <python> -I zygote.py CONFIG``
and never imports anything from the course.  It is PID 1 of a fresh PID namespace, has
no network (a fresh network namespace with no interface up) and, after start-up, a
private mount namespace in which every top-level directory except the operating system's
(``/usr``, ``/etc``, ``/lib``, ...; see ``VISIBLE_TOP``) is replaced by an empty tmpfs; only
the Python installation and the virtual environment (without ``attnlab``, whose source
tree is hidden) are mounted back, read-only.

Protocol on stdin/stdout: frames of ``8-byte big-endian length + UTF-8 JSON``.  A job is
``{"cells": [[cell_id, python_source], ...], "checks": [{"id", "setup", "extract",
"trials", "forbid_ops"}], "timeout", "mem_mb", "env"}``; the reply is ``{"results":
{check_id: {...}}}``.  Each job is handled by a forked *job process* (root, trusted
code only) so no student's data ever enters this long-lived process's memory; the job
process forks one *item child* per check, which drops to an unprivileged uid with
resource limits, executes the student's cells and the extraction code, and writes a
JSON result to a pipe.  The job process enforces the wall-clock timeout, then kills
every process of the sandbox uid (``kill(-1)`` from a helper running as that uid), so
fork bombs and daemons cannot outlive their item.

Trust: this file and the ``extract``/``setup`` snippets come from the course; the cell
sources are untrusted.  The grader never trusts a verdict from here: it only takes
*values* (plain floats/ints/strings) and compares them with the reference itself.
"""
import json
import os
import resource
import select
import shutil
import signal
import struct
import subprocess
import sys
import time

#: What the student's cells find already imported (as in the notebook's setup cell).  Read by the
#: grader's in-process runs too (``autograder.sandbox.zygote_definitions``).
PREAMBLE = ("import math\nimport numpy as np\nimport torch\nimport torch.nn as nn\n"
            "import torch.nn.functional as F\nfrom torch import Tensor\n"
            "from typing import Any, Callable, Optional, Sequence\n")

CONFIG = json.loads(sys.argv[1])
UID = int(CONFIG["uid"])
#: ``userns``/``bwrap`` mechanisms: only one uid is mapped, so each check gets a nested user +
#: mount + PID namespace instead of a uid of its own (see ``spawn_item``).
NESTED = bool(CONFIG.get("nested"))
#: ``landlock`` mechanism (a Kubernetes pod that is itself the sandbox: no namespaces, no
#: capabilities, one uid): each check confines itself with Landlock (:func:`_landlock`).
LANDLOCK = bool(CONFIG.get("landlock"))
#: The library snapshot (:func:`library_snapshot`) taken once by the zygote after ``preload``.
SNAPSHOT = None
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8


def _read_exact(fd, n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def write_frame(fd, obj):
    data = json.dumps(obj).encode("utf-8")
    data = struct.pack(">Q", len(data)) + data
    while data:
        n = os.write(fd, data)
        data = data[n:]


# ----------------------------------------------------------------------------- setup
def _mount(*args):
    subprocess.run(["mount", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


#: Top-level entries of ``/`` that stay visible (``autograder.sandbox.VISIBLE_TOP``, sent in
#: the config); every other top-level directory is replaced by an empty tmpfs.
VISIBLE_TOP = set(CONFIG.get("visible") or
                  ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc"))


def isolate_filesystem(hide, keep):
    """Hide everything but the OS (``VISIBLE_TOP``) and ``hide`` paths, then mount ``keep`` back.

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
    top = [os.path.join("/", name) for name in sorted(os.listdir("/")) if name not in VISIBLE_TOP]
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


def preload():
    os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    import math  # noqa: F401
    import numpy  # noqa: F401
    import torch
    torch.set_num_threads(1)
    torch.ones(2, 2) @ torch.ones(2, 2)
    from torch.utils._python_dispatch import TorchDispatchMode
    import torch.nn.functional as F
    import traceback  # noqa: F401

    class _Warm(TorchDispatchMode):  # first use of a dispatch mode imports a lot: do it once here
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    # torch wraps each optimizer class's step() the first time one is built (a profiling hook): do
    # it here, so that the library snapshot each check takes already holds the wrapped methods
    for cls in vars(torch.optim).values():
        if isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer) and cls is not torch.optim.Optimizer:
            try:
                cls([torch.zeros(2, 2, requires_grad=True)], lr=1e-3)
            except Exception:  # noqa: BLE001 - an optimizer that needs other arguments is wrapped when used
                pass
    with _Warm():
        x = torch.ones(2, 3, 4)
        lin = torch.nn.Linear(4, 4)
        y = lin(x).softmax(-1).masked_fill(x > 2, 0.0) @ x.transpose(-2, -1)
        F.scaled_dot_product_attention(x, x, x)
        x.view(2, 3, 2, 2).transpose(1, 2).reshape(2, 3, 4).sum().item()
        y.sum().item()
        torch.tensor([[1.0]], dtype=torch.float32).to(torch.float64).tolist()


# ------------------------------------------------------------------------ item child
def make_plain():
    """``_plain`` bound to references taken *now* (before any student code runs): replacing
    ``torch.Tensor.detach``/``tolist``/``to`` or ``numpy.asarray`` later changes nothing here."""
    import numpy as np
    import torch
    refs = {"detach": torch.Tensor.detach, "to": torch.Tensor.to, "tolist": torch.Tensor.tolist,
            "f64": torch.float64, "asarray": np.asarray, "ndtolist": np.ndarray.tolist, "Tensor": torch.Tensor,
            "ndarray": np.ndarray, "np_scalars": (np.floating, np.integer, np.bool_), "np_int": np.integer,
            "type": type, "isinstance": isinstance, "float": float, "str": str, "list": list, "tuple": tuple,
            "dict": dict, "int": int, "bool": bool, "TypeError": TypeError}

    def _plain(obj, depth=0, r=refs):
        """Turn a student's return value into JSON-safe plain Python values.

        Only exact ``torch.Tensor``/``numpy.ndarray``/scalar/list/tuple/dict types are accepted;
        subclasses (e.g. an ndarray whose ``==`` is always true) are reported, not converted.
        """
        if depth > 8:
            raise r["TypeError"]("value nested too deeply")
        t = r["type"](obj)
        if obj is None or t is r["bool"] or t is r["str"]:
            return obj
        if t is r["int"] or t is r["float"]:
            return {"__scalar__": r["float"](obj), "int": t is r["int"]}
        if t is r["Tensor"]:
            a = r["to"](r["detach"](obj), "cpu")
            return {"__array__": r["tolist"](r["to"](a, r["f64"])), "shape": r["list"](a.shape),
                    "dtype": r["str"](a.dtype)}
        if t is r["ndarray"]:
            return {"__array__": r["ndtolist"](r["asarray"](obj, dtype="float64")),
                    "shape": r["list"](obj.shape), "dtype": r["str"](obj.dtype)}
        if r["isinstance"](obj, r["np_scalars"]) and t.__module__ == "numpy":
            return {"__scalar__": r["float"](obj), "int": r["isinstance"](obj, r["np_int"])}
        if t is r["list"] or t is r["tuple"]:
            return {"__seq__": [_plain(x, depth + 1) for x in obj], "tuple": t is r["tuple"]}
        if t is r["dict"]:
            return {"__dict__": {r["str"](k): _plain(v, depth + 1) for k, v in obj.items()}}
        return {"__unsupported__": f"{t.__module__}.{t.__qualname__}",
                "subclass_of": [b.__module__ + "." + b.__qualname__ for b in t.__mro__[1:3]]}

    return _plain


def library_snapshot():
    """``{name: value}`` of every attribute of the library objects the grader's steps and the
    student's code share (``torch``, ``torch.Tensor``, ``torch.nn.functional``, every class of
    ``torch.nn`` and ``torch.optim``, ``numpy``, ``math``, ``builtins``), taken before student code
    runs; :func:`library_changes` lists what was replaced or deleted since."""
    import builtins
    import math
    import numpy as np
    import torch
    import torch.nn.functional as F
    owners = [("torch", torch), ("torch.Tensor", torch.Tensor), ("torch.nn.functional", F), ("torch.nn", torch.nn),
              ("numpy", np), ("math", math), ("builtins", builtins), ("torch.optim", torch.optim),
              ("torch.linalg", torch.linalg), ("torch.autograd", torch.autograd)]
    for mod_name, mod in (("torch.nn", torch.nn), ("torch.optim", torch.optim)):
        owners += [(f"{mod_name}.{k}", v) for k, v in list(vars(mod).items()) if isinstance(v, type)]
    snap = {}
    for label, owner in owners:
        for key, value in list(vars(owner).items()):
            snap[(label, key)] = (owner, value)
    return snap


def library_changes(snap):
    """Names of library attributes replaced or deleted since :func:`library_snapshot` (at most 5)."""
    missing = object()
    out = []
    for (label, key), (owner, value) in snap.items():
        now = vars(owner).get(key, missing)
        if now is not value:
            out.append(f"{label}.{key}")
            if len(out) >= 5:
                break
    return out


def run_item(job, check, wfd, efd):
    """Item child body (already unprivileged).  Never returns.

    A forbidden library operation is written to ``efd`` *when it runs* (``<trial>\\t<op>``), so
    the job process holds the record: nothing the student's code does afterwards (clearing a
    list, forging the result pipe, exiting) can take it back.
    """
    import traceback
    from torch.utils._python_dispatch import TorchDispatchMode
    out = {"cell_errors": [], "status": "ok"}
    forbid = tuple(check.get("forbid_ops", ()))
    trial_no = [0]

    def _record(name):  # no in-process de-duplication: nothing here for student code to pre-fill
        os.write(efd, f"{trial_no[0]}\t{name[:200]}\n".encode())  # raises if the channel was closed

    class _Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func)
            if forbid and any(f in name for f in forbid):
                _record(name)
            return func(*args, **(kwargs or {}))

    def _profile(frame, event, arg):
        # Composite ops (e.g. aten._scaled_dot_product_attention_math) decompose before the
        # dispatch mode sees them, so also watch Python-level calls of builtins and torch.ops.
        if not forbid:
            return
        name = None
        if event == "c_call":
            name = getattr(arg, "__qualname__", None) or getattr(arg, "__name__", "")
        elif event == "call" and frame.f_code.co_name == "__call__" and frame.f_code.co_filename.endswith("_ops.py"):
            name = str(frame.f_locals.get("self", ""))
        if name and any(f in name for f in forbid):
            _record(name)

    # A check that forbids no library operation has nothing to watch: the dispatch mode and the
    # profiler would only slow every tensor operation and every call (a training run: about
    # twice as slow) without recording anything, so they are not installed for it.
    import contextlib
    watch, profile = (_Watch, _profile) if forbid else (contextlib.nullcontext, None)

    # Taken before any student code runs: the grader's own steps (setup, extraction, turning
    # the value into plain data) use these, never what the student's namespace holds later.
    import builtins
    plain = make_plain()
    grader_ns = {"__name__": "__grader__"}
    exec(compile(PREAMBLE, "<preamble>", "exec"), grader_ns)
    grader_builtins = dict(vars(builtins))
    snap = SNAPSHOT or library_snapshot()  # taken in the zygote, before any job: shared by fork
    reported = set()

    def _changed(index):  # the library replaced or deleted under us: recorded like a forbidden op
        for name in library_changes(snap):
            if name not in reported:
                reported.add(name)
                os.write(efd, f"{index}\tchanged library: {name[:200]}\n".encode())

    ns = {"__name__": "__main__"}
    exec(compile(PREAMBLE, "<preamble>", "exec"), ns)
    trial_no[0] = "c"  # every line of student code runs under the watch, the answer cells too
    for cell_id, source in job["cells"]:
        try:
            with watch():
                sys.setprofile(profile)
                try:
                    exec(compile(source, f"<cell {cell_id}>", "exec"), ns)
                finally:
                    sys.setprofile(None)
        except BaseException as e:  # noqa: BLE001 - student code may raise anything
            tb = traceback.format_exception(type(e), e, e.__traceback__)
            out["cell_errors"].append({"cell": cell_id, "error": f"{type(e).__name__}: {e}"[:500],
                                       "traceback": "".join(tb[-3:])[-1500:]})
    _changed("c")
    out["trials"] = []
    for index, inputs in enumerate(check.get("trials", [{}])):
        trial = {"status": "ok"}
        trial_no[0] = index
        try:
            # the grader's snippets see the student's definitions, but the preamble's names and
            # the builtins as they were before student code ran
            run_ns = {k: v for k, v in ns.items() if k not in grader_builtins}
            run_ns.update(grader_ns)
            run_ns["__builtins__"] = grader_builtins
            run_ns["__inputs__"] = inputs
            with watch():
                sys.setprofile(profile)
                try:
                    exec(compile(check.get("setup", ""), "<grader setup>", "exec"), run_ns)
                    exec(compile(check["extract"], "<grader extract>", "exec"), run_ns)
                    value = plain(run_ns.get("__result__"))
                finally:
                    sys.setprofile(None)
            trial["value"] = value
        except BaseException as e:  # noqa: BLE001
            tb = traceback.extract_tb(e.__traceback__)
            # keep only frames from the student's own cells
            frames = [f for f in tb if f.filename.startswith("<cell ")]
            where = f" (in {frames[-1].filename[1:-1]}, line {frames[-1].lineno})" if frames else ""
            trial["status"] = "error"
            trial["error"] = (f"{type(e).__name__}: {e}"[:600] + where)
            trial["memory"] = isinstance(e, MemoryError) or "can't allocate memory" in str(e)
        _changed(index)
        out["trials"].append(trial)  # forbidden ops travel on efd only (see wait_item)
    data = json.dumps(out).encode()
    try:
        os.write(wfd, data[:8_000_000])
    finally:
        os._exit(0)


def kill_uid(uid):
    """Kill every process owned by ``uid`` (a helper running as that uid calls kill(-1)).
    Never for this process's own uid (``landlock``, nested mechanisms): that would kill the grader."""
    if LANDLOCK or NESTED or uid == os.getuid():
        return
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
            os._exit(0)
        os.waitpid(pid, 0)


def _uid_processes(uid):
    pids = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/status") as f:
                    for line in f:
                        if line.startswith("Uid:"):
                            if int(line.split()[1]) == uid:
                                pids.append(int(p))
                            break
            except OSError:
                continue
    return pids


def reap() -> bool:
    """Reap every exited child without waiting; ``False`` when no child is left at all."""
    while True:
        try:
            p, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if p == 0:
            return True


def clean_up_uid(uid, deadline_s=5.0):
    """Kill and reap every process of ``uid`` (we are their subreaper), until none is left."""
    end = time.monotonic() + deadline_s
    while True:
        kill_uid(uid)
        reap()
        if not _uid_processes(uid) or time.monotonic() > end:
            return
        time.sleep(0.01)


def _libc():
    import ctypes
    return ctypes.CDLL(None, use_errno=True)


def _check(ret, what):
    import ctypes
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _become_subreaper():
    try:
        _libc().prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:  # noqa: BLE001 - PID 1 of the namespace reaps them anyway
        pass


def _not_dumpable():
    """Trusted processes that share their uid with student code (nested mechanisms) refuse
    ptrace and /proc/<pid>/mem to it: it has no capability in our user namespace."""
    _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def _drop_capabilities():
    import ctypes

    class _Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class _Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]
    libc = _libc()
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
    ret = _libc().syscall(_LL_CREATE, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
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


def _landlock(workdir):
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
    libc = _libc()
    ruleset = libc.syscall(_LL_CREATE, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        _check(-1, "landlock_create_ruleset")

    class _Beneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]
    # /dev/shm: shared memory of the whole pod, hidden as in the other mechanisms
    hidden = [os.path.realpath(h) for h in CONFIG.get("hide", [])] + ["/dev/shm"]
    visible = ["/" + n for n in CONFIG.get("visible", []) if os.path.isdir("/" + n)]
    rules = [(p, _LL_READ) for p in _landlock_paths([*visible, *CONFIG.get("keep", [])], hidden)]
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


def _nested_namespaces():
    """Enter a fresh user + mount + PID namespace (nested mechanisms; called in the item
    process).  ``UID`` is mapped to our own uid: the only one this sandbox has."""
    euid, egid = os.geteuid(), os.getegid()
    _check(_libc().unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{UID} {euid} 1"), ("gid_map", f"{UID} {egid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def _limit_and_run(job, check, workdir, w, e, vm=None):
    """Resource limits, then the student's cells (``run_item``).  Never returns."""
    mem = int(job.get("mem_mb", 1024)) * 2**20
    vm = vm or _vmsize()
    resource.setrlimit(resource.RLIMIT_AS, (vm + mem, vm + mem))
    cpu = int(job.get("timeout", 10)) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    # 1 = this process only: no thread and no process can be started by the student's code
    # (fork bombs, and threads that would run a library call the watch of this thread cannot see).
    resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 2**20, 16 * 2**20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.chdir(workdir)
    os.environ.clear()
    os.environ.update({"HOME": workdir, "TMPDIR": workdir, "OMP_NUM_THREADS": "1",
                       "PATH": "/usr/bin:/bin", **job.get("env", {})})
    run_item(job, check, w, e)


def _exit_like(status):
    """End this process the way the waited-for child ended (signal or exit code)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 3)


def spawn_item(job, check, workdir):
    """Fork the item process; returns ``(pid, result fd, watch-event fd)``.

    ``root``: the child drops to the sandbox uid ``UID``.  Nested mechanisms: the child enters
    a fresh user + mount + PID namespace and forks the student's process as PID 1 there, with
    a fresh ``/proc`` and no capabilities: it can neither see nor signal nor trace the job
    process, the zygote or any other check; when it ends, its whole PID namespace ends.
    """
    r, w = os.pipe()
    er, e = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        os.close(e)
        return pid, r, er
    try:
        os.close(r)
        os.close(er)
        _libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # the job process stays non-dumpable
        os.setsid()
        devnull = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        keep = sorted((w, e))
        os.closerange(3, keep[0])
        os.closerange(keep[0] + 1, keep[1])
        os.closerange(keep[1] + 1, 1024)
        if LANDLOCK:
            _landlock(workdir)
            _limit_and_run(job, check, workdir, w, e)
        if not NESTED:
            os.setgroups([])
            os.setgid(UID)
            os.setuid(UID)
            _limit_and_run(job, check, workdir, w, e)
        _nested_namespaces()
        vm = _vmsize()
        init = os.fork()
        if init == 0:  # PID 1 of the check's own PID namespace (trusted; when it ends, all end)
            libc = _libc()
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
            if libc.mount(b"proc", b"/proc", b"proc", flags, None) != 0:
                # a fresh proc is refused where the outer one has read-only overmounts (bwrap
                # started by root): then hide the outer /proc under an empty tmpfs instead
                _check(libc.mount(b"tmpfs", b"/proc", b"tmpfs", flags | 1, b"size=4k,mode=555"),
                       "mount /proc")
            student = os.fork()  # PID 2: signals behave as usual (PID 1 ignores its own)
            if student == 0:
                _drop_capabilities()
                _limit_and_run(job, check, workdir, w, e, vm)
            os.close(w)
            os.close(e)
            _exit_like(os.waitpid(student, 0)[1])
        os.close(w)
        os.close(e)
        _exit_like(os.waitpid(init, 0)[1])
    except BaseException as err:  # noqa: BLE001 - our own set-up failed: say so, never run the check
        try:
            os.write(w, json.dumps({"status": "crashed", "error": f"sandbox set-up failed: {err!r}"[:500]}).encode())
        finally:
            os._exit(3)


def _vmsize():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 2**31


def _kill_children():
    """Kill and reap every child of this (subreaper) job process: orphans of a check."""
    me = str(os.getpid())
    for _ in range(100):
        kids = []
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    with open(f"/proc/{p}/stat") as f:
                        if f.read().rsplit(")", 1)[1].split()[1] == me:
                            kids.append(int(p))
                except (OSError, IndexError):
                    continue
        for k in kids:
            try:
                os.kill(k, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not reap() or not kids:
            return
        time.sleep(0.01)


def wait_item(pid, r, er, timeout):
    deadline = time.monotonic() + timeout
    chunks, total, events = [], 0, b""
    status = None
    open_fds = [r, er]
    while r in open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            status = "timeout"
            break
        ready, _, _ = select.select(open_fds, [], [], min(left, 0.5))
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                open_fds.remove(fd)
            elif fd == er:
                events = (events + chunk)[-1_000_000:]
            else:
                total += len(chunk)
                chunks.append(chunk)
        if total > 8_000_000:
            status = "too_much_output"
            break
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, wstatus = os.waitpid(pid, 0)
    if er in open_fds:  # what the check wrote to the watch channel before it ended
        os.set_blocking(er, False)
        try:
            while chunk := os.read(er, 1 << 16):
                events = (events + chunk)[-1_000_000:]
        except BlockingIOError:
            pass
    os.close(r)
    os.close(er)
    if not NESTED and not LANDLOCK:
        clean_up_uid(UID)
    _kill_children()
    if status:
        return {"status": status, "error": f"did not finish within {timeout} s"
                if status == "timeout" else "produced too much output"}
    return item_result(b"".join(chunks), events, wstatus)


#: Deepest nesting of the JSON a check may send back (``_plain`` stops at depth 8 of the value:
#: about 20 levels of JSON); anything deeper is refused before it reaches the grader.
MAX_RESULT_DEPTH = 48


def _json_depth(value, limit):
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def _ended(wstatus):
    """How the item process ended, when it wrote no readable result."""
    if os.WIFSIGNALED(wstatus):
        sig = os.WTERMSIG(wstatus)
        kind = "timeout" if sig == signal.SIGXCPU else "crashed"
        return {"status": kind, "error": f"the process was killed by signal {sig}"
                + (" (CPU time limit)" if kind == "timeout" else "")}
    code = os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else None
    return {"status": "crashed",
            "error": f"the process exited (code {code}) before producing a result"
                     " (sys.exit/os._exit or a crash in the interpreter)"}


def item_result(data, events, wstatus):
    """The item's result from the bytes it wrote and the watch record kept here.  Never raises:
    whatever the bytes are (not JSON, not UTF-8, nested too deeply, the wrong shape), the answer
    is one result for this item, with the reason in words; the record of forbidden operations
    comes from the watch channel only."""
    if not data.strip():
        return _ended(wstatus)
    try:
        try:
            out = json.loads(data.decode("utf-8"))
        except ValueError:
            # cut off: the process died of a signal while writing (SIGKILL is ours: the job
            # process kills what is left of a check once its result pipe is closed) or exited
            # with an error
            if (os.WIFSIGNALED(wstatus) and os.WTERMSIG(wstatus) != signal.SIGKILL) or \
                    (os.WIFEXITED(wstatus) and os.WEXITSTATUS(wstatus)):
                return _ended(wstatus)
            raise
        if not isinstance(out, dict):
            raise ValueError("not a result object")
        if _json_depth(out, MAX_RESULT_DEPTH) > MAX_RESULT_DEPTH:
            return {"status": "crashed", "error": f"the check sent back a value nested more than "
                                                  f"{MAX_RESULT_DEPTH} levels deep (the grader reads plain "
                                                  "numbers and lists); nothing was compared"}
        trials = out.get("trials")
        if trials is not None and (not isinstance(trials, list) or not all(isinstance(t, dict) for t in trials)):
            raise ValueError("trials are not result objects")
        if not isinstance(out.get("cell_errors", []), list) or \
                not all(isinstance(c, dict) and isinstance(c.get("cell"), str) and isinstance(c.get("error"), str)
                        for c in out.get("cell_errors", [])):
            raise ValueError("cell errors are not result objects")
        watched = {}
        for line in events.decode(errors="replace").splitlines():
            index, _, name = line.partition("\t")
            if index.isdigit() and name:
                watched.setdefault(int(index), set()).add(name)
            elif index == "c" and name:  # while the answer cells ran (before any trial)
                watched.setdefault("cells", set()).add(name)
        for index, trial in enumerate(trials or []):  # the record kept here, never the item's own claim
            trial["forbidden_ops"] = sorted(set(watched.get(index, ())) | watched.get("cells", set()))
        return out
    except (ValueError, RecursionError, MemoryError) as err:
        what = "nested too deeply" if isinstance(err, RecursionError) else "not a result the grader can read"
        return {"status": "crashed", "error": f"the check sent back something {what} ({type(err).__name__}); "
                                              "nothing was compared"}
    except Exception as err:  # noqa: BLE001 - one item's failure stays in that item
        return {"status": "crashed", "error": f"the check's result could not be read ({type(err).__name__})"}


def run_job(job):
    workdir = CONFIG.get("workdir") or "/tmp/w"
    results = {}
    for check in job["checks"]:
        os.makedirs(workdir, exist_ok=True)
        if not NESTED and not LANDLOCK:  # nested: the zygote's own uid is the check's uid (mapped to UID)
            os.chown(workdir, UID, UID)
        os.chmod(workdir, 0o700)
        try:
            pid, r, er = spawn_item(job, check, workdir)
            results[check["id"]] = wait_item(pid, r, er, float(job.get("timeout", 10)))
        except Exception as err:  # noqa: BLE001 - one item's failure stays in that item
            results[check["id"]] = {"status": "crashed", "error": f"the sandbox could not run this check "
                                                                  f"({type(err).__name__}: {str(err)[:200]})"}
        shutil.rmtree(workdir, ignore_errors=True)
    return {"results": results}


def main():
    if CONFIG.get("isolate", True):
        isolate_filesystem(CONFIG["hide"], CONFIG["keep"])
    preload()
    global SNAPSHOT
    SNAPSHOT = library_snapshot()
    _not_dumpable()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    stdin, stdout = os.dup(0), os.dup(1)
    devnull = os.open("/dev/null", os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    write_frame(stdout, {"ready": True, "pid": os.getpid()})
    while True:
        try:
            (n,) = struct.unpack(">Q", _read_exact(stdin, 8))
        except EOFError:
            if LANDLOCK:  # the checks' private folder (made by the grader, which may not outlive us)
                shutil.rmtree(os.path.dirname(CONFIG["workdir"]), ignore_errors=True)
            return
        pid = os.fork()
        if pid == 0:  # job process: reads the job, so this long-lived process never holds it
            _become_subreaper()
            try:
                job = json.loads(_read_exact(stdin, n).decode())
                reply = run_job(job)
            except BaseException as e:  # noqa: BLE001
                reply = {"error": f"sandbox job failed: {type(e).__name__}: {e}"}
            write_frame(stdout, reply)
            os._exit(0)
        os.waitpid(pid, 0)
        if not NESTED and not LANDLOCK:  # landlock: UID is the grader's own (RLIMIT_NPROC holds)
            kill_uid(UID)
        reap()  # orphans re-parented to us (we are PID 1 here)


if __name__ == "__main__":
    main()
