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
"inputs", "forbid_ops"}], "timeout", "mem_mb", "env"}``; the reply is ``{"results":
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

CONFIG = json.loads(sys.argv[1])
UID = int(CONFIG["uid"])


def _read_exact(fd, n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def read_frame(fd):
    (n,) = struct.unpack(">Q", _read_exact(fd, 8))
    return json.loads(_read_exact(fd, n).decode("utf-8"))


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


#: Top-level entries of ``/`` that stay visible (the operating system: programs, shared
#: libraries, configuration).  Everything else at the top level (``/work``, ``/root``,
#: ``/home``, ``/tmp``, ``/opt``, ``/srv``, ``/var``, ``/mnt``, a checkout at ``/check``,
#: an ``/old_root`` left by a container runtime, ...) is replaced by an empty tmpfs: an
#: allowlist, so a repository or course in an unexpected place is hidden too.
VISIBLE_TOP = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc"}


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

    with _Warm():
        x = torch.ones(2, 3, 4)
        lin = torch.nn.Linear(4, 4)
        y = lin(x).softmax(-1).masked_fill(x > 2, 0.0) @ x.transpose(-2, -1)
        F.scaled_dot_product_attention(x, x, x)
        x.view(2, 3, 2, 2).transpose(1, 2).reshape(2, 3, 4).sum().item()
        y.sum().item()
        torch.tensor([[1.0]], dtype=torch.float32).to(torch.float64).tolist()


# ------------------------------------------------------------------------ item child
def _plain(obj, depth=0):
    """Turn a student's return value into JSON-safe plain Python values.

    Only exact ``torch.Tensor``/``numpy.ndarray``/scalar/list/tuple/dict types are accepted;
    subclasses (e.g. an ndarray whose ``==`` is always true) are reported, not converted.
    """
    import numpy as np
    import torch
    if depth > 8:
        raise TypeError("value nested too deeply")
    t = type(obj)
    if obj is None or t is bool or t is str:
        return obj
    if t is int or t is float:
        return {"__scalar__": float(obj), "int": t is int}
    if t is torch.Tensor:
        a = torch.Tensor.detach(obj).to("cpu")
        return {"__array__": torch.Tensor.tolist(a.to(torch.float64)), "shape": list(a.shape),
                "dtype": str(a.dtype)}
    if t is np.ndarray:
        return {"__array__": np.asarray(obj, dtype=np.float64).tolist(),
                "shape": list(obj.shape), "dtype": str(obj.dtype)}
    if isinstance(obj, (np.floating, np.integer, np.bool_)) and t.__module__ == "numpy":
        return {"__scalar__": float(obj), "int": isinstance(obj, np.integer)}
    if t is list or t is tuple:
        return {"__seq__": [_plain(x, depth + 1) for x in obj], "tuple": t is tuple}
    if t is dict:
        return {"__dict__": {str(k): _plain(v, depth + 1) for k, v in obj.items()}}
    return {"__unsupported__": f"{t.__module__}.{t.__qualname__}",
            "subclass_of": [b.__module__ + "." + b.__qualname__ for b in t.__mro__[1:3]]}


def run_item(job, check, wfd):
    """Item child body (already unprivileged).  Never returns."""
    import traceback
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    out = {"cell_errors": [], "status": "ok"}
    forbid = tuple(check.get("forbid_ops", ()))
    seen = []

    class _Watch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func)
            if forbid and any(f in name for f in forbid) and name not in seen:
                seen.append(name)
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
        if name and any(f in name for f in forbid) and name not in seen:
            seen.append(name)

    ns = {"__name__": "__main__"}
    preamble = ("import math\nimport numpy as np\nimport torch\nimport torch.nn as nn\n"
                "import torch.nn.functional as F\nfrom torch import Tensor\n"
                "from typing import Any, Callable, Optional, Sequence\n")
    exec(compile(preamble, "<preamble>", "exec"), ns)
    for cell_id, source in job["cells"]:
        try:
            exec(compile(source, f"<cell {cell_id}>", "exec"), ns)
        except BaseException as e:  # noqa: BLE001 - student code may raise anything
            tb = traceback.format_exception(type(e), e, e.__traceback__)
            out["cell_errors"].append({"cell": cell_id, "error": f"{type(e).__name__}: {e}"[:500],
                                       "traceback": "".join(tb[-3:])[-1500:]})
    out["trials"] = []
    for inputs in check.get("trials", [{}]):
        trial = {"status": "ok"}
        seen.clear()
        try:
            ns["__inputs__"] = inputs
            ns.pop("__result__", None)
            exec(compile(check.get("setup", ""), "<grader setup>", "exec"), ns)
            with _Watch():
                sys.setprofile(_profile)
                try:
                    exec(compile(check["extract"], "<grader extract>", "exec"), ns)
                finally:
                    sys.setprofile(None)
            trial["value"] = _plain(ns.get("__result__"))
        except BaseException as e:  # noqa: BLE001
            tb = traceback.extract_tb(e.__traceback__)
            # keep only frames from the student's own cells
            frames = [f for f in tb if f.filename.startswith("<cell ")]
            where = f" (in {frames[-1].filename[1:-1]}, line {frames[-1].lineno})" if frames else ""
            trial["status"] = "error"
            trial["error"] = (f"{type(e).__name__}: {e}"[:600] + where)
            trial["memory"] = isinstance(e, MemoryError) or "can't allocate memory" in str(e)
        trial["forbidden_ops"] = list(seen)
        out["trials"].append(trial)
    data = json.dumps(out).encode()
    try:
        os.write(wfd, data[:8_000_000])
    finally:
        os._exit(0)


def kill_uid(uid):
    """Kill every process owned by ``uid`` (a helper running as that uid calls kill(-1))."""
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


def clean_up_uid(uid, deadline_s=5.0):
    """Kill and reap every process of ``uid`` (we are their subreaper), until none is left."""
    end = time.monotonic() + deadline_s
    while True:
        kill_uid(uid)
        while True:
            try:
                p, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if p == 0:
                break
        if not _uid_processes(uid) or time.monotonic() > end:
            return
        time.sleep(0.01)


def _become_subreaper():
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:  # noqa: BLE001 - PID 1 of the namespace reaps them anyway
        pass


def spawn_item(job, check, workdir):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setsid()
            devnull = os.open("/dev/null", os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            mem = int(job.get("mem_mb", 1024)) * 2**20
            vm = _vmsize()
            resource.setrlimit(resource.RLIMIT_AS, (vm + mem, vm + mem))
            cpu = int(job.get("timeout", 10)) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_NPROC, (32, 32))
            resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 2**20, 16 * 2**20))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            os.closerange(3, w)
            os.closerange(w + 1, 1024)
            os.chdir(workdir)
            os.setgroups([])
            os.setgid(UID)
            os.setuid(UID)
            os.environ.clear()
            os.environ.update({"HOME": workdir, "TMPDIR": workdir, "OMP_NUM_THREADS": "1",
                               "PATH": "/usr/bin:/bin", **job.get("env", {})})
            run_item(job, check, w)
        except BaseException:  # noqa: BLE001
            os._exit(3)
    os.close(w)
    return pid, r


def _vmsize():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 2**31


def wait_item(pid, r, timeout):
    deadline = time.monotonic() + timeout
    chunks, total = [], 0
    status = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            status = "timeout"
            break
        ready, _, _ = select.select([r], [], [], min(left, 0.5))
        if ready:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            total += len(chunk)
            if total > 8_000_000:
                status = "too_much_output"
                break
            chunks.append(chunk)
    os.close(r)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, wstatus = os.waitpid(pid, 0)
    clean_up_uid(UID)
    if status:
        return {"status": status, "error": f"did not finish within {timeout} s"
                if status == "timeout" else "produced too much output"}
    try:
        out = json.loads(b"".join(chunks).decode())
        if not isinstance(out, dict):
            raise ValueError
        return out
    except ValueError:
        if os.WIFSIGNALED(wstatus):
            sig = os.WTERMSIG(wstatus)
            kind = "timeout" if sig == signal.SIGXCPU else "crashed"
            return {"status": kind, "error": f"the process was killed by signal {sig}"
                    + (" (CPU time limit)" if kind == "timeout" else "")}
        code = os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else None
        return {"status": "crashed",
                "error": f"the process exited (code {code}) before producing a result"
                         " (sys.exit/os._exit or a crash in the interpreter)"}


def run_job(job):
    workdir = "/tmp/w"
    results = {}
    for check in job["checks"]:
        os.makedirs(workdir, exist_ok=True)
        os.chown(workdir, UID, UID)
        os.chmod(workdir, 0o700)
        pid, r = spawn_item(job, check, workdir)
        results[check["id"]] = wait_item(pid, r, float(job.get("timeout", 10)))
        shutil.rmtree(workdir, ignore_errors=True)
    return {"results": results}


def main():
    if CONFIG.get("isolate", True):
        isolate_filesystem(CONFIG["hide"], CONFIG["keep"])
    preload()
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
        kill_uid(UID)
        while True:  # reap orphans re-parented to us (we are PID 1 here)
            try:
                p, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if p == 0:
                break


if __name__ == "__main__":
    main()
