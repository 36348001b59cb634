"""Sandbox server: runs untrusted solution code, one forked child per submission.

Started by :mod:`attnlab_grader.sandbox` as ``unshare --mount --net --pid --fork --mount-proc
--kill-child <python> -I -c BOOTSTRAP CONFIG`` (or under bubblewrap, or in a Landlock pod), it
never imports anything from the course: the sandbox's own modules (:data:`MODULES`) arrive as
source text in the first frame on stdin and are loaded by :data:`BOOTSTRAP` (the repository is
hidden inside).  It is PID 1 of a fresh PID namespace, has no network (a fresh network namespace
with no interface up) and, after start-up, a private mount namespace in which every top-level
directory except the operating system's (``/usr``, ``/etc``, ``/lib``, ...) is replaced by an empty
tmpfs; only the Python installation and the virtual environment (without ``attnlab``, whose source
tree is hidden) are mounted back, read-only (:func:`attnlab_grader.sandbox.confine.isolate_filesystem`).

Protocol on stdin/stdout (:mod:`attnlab_grader.sandbox.wire`): a job is ``{"cells": [[cell_id,
python_source], ...], "checks": [{"id", "setup", "extract", "trials", "forbid_ops",
"forbid_names"}], "timeout",
"mem_mb", "env"}``; the reply is ``{"results": {check_id: {...}}}``.  Each job is handled by a
forked *job process* (root, trusted code only) so no student's data ever enters this long-lived
process's memory; the job process forks the submission's child (:mod:`attnlab_grader.sandbox.procs`),
which drops to an unprivileged uid with resource limits, runs the student's cells once and then
each check (:mod:`attnlab_grader.sandbox.runner`).  The job process bounds each check's wall-clock
time, then kills every process of the sandbox uid, so fork bombs and daemons cannot outlive it.

Trust: this code and the ``extract``/``setup`` snippets come from the course; the cell sources are
untrusted.  The grader never trusts a verdict from here: it only takes *values* (plain
floats/ints/strings) and compares them with the reference itself.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import struct

from .confine import Config, become_subreaper, isolate_filesystem, not_dumpable
from .procs import clean_up_uid, reap, run_job
from .watch import library_snapshot
from .wire import read_exact, write_frame

#: The sandbox's modules, in the order :data:`BOOTSTRAP` loads them (each imports only earlier ones).
MODULES = ("wire", "watch", "runner", "confine", "procs", "zygote")
#: The program ``python -I -c`` runs: reads ``[[name, source], ...]`` of :data:`MODULES` as the first
#: frame on stdin, loads them as the package ``_sandbox`` (nothing is read from disk), then runs
#: :func:`main` with the configuration in ``sys.argv[1]``.
BOOTSTRAP = """
import json, os, struct, sys, types
def _read(n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(0, n - len(buf))
        if not chunk:
            sys.exit(2)
        buf += chunk
    return buf
_pkg = types.ModuleType("_sandbox")
_pkg.__path__ = []
sys.modules["_sandbox"] = _pkg
for _name, _source in json.loads(_read(struct.unpack(">Q", _read(8))[0])):
    _mod = types.ModuleType("_sandbox." + _name)
    _mod.__package__ = "_sandbox"
    sys.modules[_mod.__name__] = _mod
    setattr(_pkg, _name, _mod)
    exec(compile(_source, "<sandbox/" + _name + ".py>", "exec"), _mod.__dict__)
_pkg.zygote.main(json.loads(sys.argv[1]))
"""


def preload() -> None:
    """Import and warm up what every check uses (torch on one thread, a dispatch mode, the
    optimizers' profiling hooks), once, before any job: each child is forked from this state."""
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


def main(raw: dict) -> None:
    """Serve jobs on stdin/stdout until stdin closes (see the module docstring).  ``raw``: the
    configuration the grader sent (:class:`attnlab_grader.sandbox.confine.Config`).  Raises when the
    filesystem view cannot be built (the grader then reports that the sandbox failed to start)."""
    cfg = Config(raw)
    if cfg.isolate:
        isolate_filesystem(cfg.hide, cfg.keep, cfg.visible)
    preload()
    snapshot = library_snapshot()  # before any job: every child compares the library with it
    not_dumpable()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    stdin, stdout = os.dup(0), os.dup(1)
    devnull = os.open("/dev/null", os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    write_frame(stdout, {"ready": True, "pid": os.getpid()})
    while True:
        try:
            (n,) = struct.unpack(">Q", read_exact(stdin, 8))
        except EOFError:
            if cfg.landlock:  # the checks' private folder (made by the grader, which may not outlive us)
                shutil.rmtree(os.path.dirname(cfg.workdir), ignore_errors=True)
            return
        pid = os.fork()
        if pid == 0:  # job process: reads the job, so this long-lived process never holds it
            become_subreaper()
            try:
                job = json.loads(read_exact(stdin, n).decode())
                reply = run_job(job, cfg, snapshot)
            except BaseException as e:  # noqa: BLE001
                reply = {"error": f"sandbox job failed: {type(e).__name__}: {e}"}
            write_frame(stdout, reply)
            os._exit(0)
        os.waitpid(pid, 0)
        clean_up_uid(cfg.uid, cfg)  # landlock/nested: nothing to do (the uid is the grader's own)
        reap()  # orphans re-parented to us (we are PID 1 here)
