"""The job process's handling of a submission's child: start it confined, time each check, read
what it sends, end it and everything it left behind.

One job (one submission) gets one child that runs the cells once and then every check
(:mod:`attnlab_grader.sandbox.runner`); the job process gives each check its own wall-clock bound,
counted from the frame before it.  When the child overruns a check, crashes, or sends too much, that
check gets the verdict (timed out, crashed, too much output) and the checks after it get a fresh
child; when the cells themselves never finish, every check gets it.  Loaded into the zygote as
source text (:mod:`attnlab_grader.sandbox.zygote`).  Imports nothing from the course.
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import struct
import time

from .confine import (MS_NODEV, MS_NOEXEC, MS_NOSUID, PR_SET_DUMPABLE, PR_SET_PDEATHSIG, Config, _check,
                      drop_capabilities, landlock, libc_, nested_namespaces, set_limits, vmsize)
from .runner import run_checks
from .wire import MAX_RESULT_BYTES, check_result, ended, split_frames, watch_records

#: Most bytes of watch records kept per child (the newest).
MAX_EVENT_BYTES = 1_000_000


# ---------------------------------------------------------------------------- clean-up
def uid_processes(uid: int) -> list[int]:
    """Pids of every process whose real uid is ``uid`` (this PID namespace's ``/proc``)."""
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


def kill_uid(uid: int, cfg: Config) -> None:
    """Kill every process owned by ``uid`` (a helper running as that uid calls ``kill(-1)``).
    Never for this process's own uid (``cfg.own_uid``): that would kill the grader."""
    if cfg.own_uid or uid == os.getuid():
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


def reap() -> bool:
    """Reap every exited child without waiting; ``False`` when no child is left at all."""
    while True:
        try:
            p, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if p == 0:
            return True


def clean_up_uid(uid: int, cfg: Config, deadline_s: float = 5.0) -> None:
    """Kill and reap every process of ``uid`` (we are their subreaper) until none is left, or
    ``deadline_s`` seconds.  Looks first: with no process of ``uid`` left (the usual case: a child
    may start none) nothing is forked."""
    if cfg.own_uid:
        return
    end = time.monotonic() + deadline_s
    while uid_processes(uid) and time.monotonic() < end:
        kill_uid(uid, cfg)
        reap()
        time.sleep(0.005)


def kill_children() -> None:
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


def _exit_like(status: int) -> None:
    """End this process the way the waited-for child ended (signal or exit code)."""
    import resource
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 3)


# ------------------------------------------------------------------------------- start
def _limit_and_run(job: dict, indices: list[int], workdir: str, w: int, e: int, snapshot, vm=None) -> None:
    """Resource limits, a clean environment, then the student's cells and the checks.  Never returns."""
    timeout = int(job.get("timeout", 10))
    set_limits(int(job.get("mem_mb", 1024)), (len(indices) + 1) * (timeout + 1), vm)
    os.chdir(workdir)
    os.environ.clear()
    os.environ.update({"HOME": workdir, "TMPDIR": workdir, "OMP_NUM_THREADS": "1",
                       "PATH": "/usr/bin:/bin", **job.get("env", {})})
    run_checks(job, indices, w, e, snapshot)


def spawn_child(job: dict, indices: list[int], workdir: str, cfg: Config, snapshot=None) -> tuple[int, int, int]:
    """Fork the submission's child for the checks ``indices``; returns ``(pid, result fd, watch fd)``.

    ``root``: the child drops to the sandbox uid ``cfg.uid``.  Nested mechanisms: the child enters
    a fresh user + mount + PID namespace and forks the student's process as PID 1 there, with a
    fresh ``/proc`` and no capabilities: it can neither see nor signal nor trace the job process,
    the zygote or any other submission; when it ends, its whole PID namespace ends.  ``landlock``:
    the child confines itself with Landlock.  When the set-up fails, the child writes why (a
    ``crashed`` result) and exits: nothing of the student's runs."""
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
        libc_().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # the job process stays non-dumpable
        os.setsid()
        devnull = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        keep = sorted((w, e))
        os.closerange(3, keep[0])
        os.closerange(keep[0] + 1, keep[1])
        os.closerange(keep[1] + 1, 1024)
        if cfg.landlock:
            landlock(workdir, cfg)
            _limit_and_run(job, indices, workdir, w, e, snapshot)
        if not cfg.nested:
            os.setgroups([])
            os.setgid(cfg.uid)
            os.setuid(cfg.uid)
            _limit_and_run(job, indices, workdir, w, e, snapshot)
        nested_namespaces(cfg.uid)
        vm = vmsize()
        init = os.fork()
        if init == 0:  # PID 1 of the child's own PID namespace (trusted; when it ends, all end)
            libc = libc_()
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
            if libc.mount(b"proc", b"/proc", b"proc", flags, None) != 0:
                # a fresh proc is refused where the outer one has read-only overmounts (bwrap
                # started by root): then hide the outer /proc under an empty tmpfs instead
                _check(libc.mount(b"tmpfs", b"/proc", b"tmpfs", flags | 1, b"size=4k,mode=555"),
                       "mount /proc")
            student = os.fork()  # PID 2: signals behave as usual (PID 1 ignores its own)
            if student == 0:
                drop_capabilities()
                _limit_and_run(job, indices, workdir, w, e, snapshot, vm)
            os.close(w)
            os.close(e)
            _exit_like(os.waitpid(student, 0)[1])
        os.close(w)
        os.close(e)
        _exit_like(os.waitpid(init, 0)[1])
    except BaseException as err:  # noqa: BLE001 - our own set-up failed: say so, never run the checks
        try:
            os.write(w, struct.pack(">Q", 0))  # an empty "cells" frame, then why
            import json
            for _ in indices:
                data = json.dumps({"status": "crashed", "error": f"sandbox set-up failed: {err!r}"[:500]}).encode()
                os.write(w, struct.pack(">Q", len(data)) + data)
        finally:
            os._exit(3)
    return -1, -1, -1  # not reached: every branch above ends the child


# ------------------------------------------------------------------------------- watch
class _Child:
    """What the job process reads from one child: frames on the result pipe (timed per check) and
    the watch records."""

    def __init__(self, pid: int, r: int, er: int):
        self.pid, self.r, self.er = pid, r, er
        self.buf, self.events = b"", b""
        self.frames: list[bytes] = []  # payloads after the cells frame, one per check
        self.cells_done = False
        self.status: str | None = None  # "timeout" / "oversized" for the check in progress
        self.wstatus = 0

    def read(self, fd: int) -> bool:
        """Read what ``fd`` has; ``False`` at end of file."""
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return False
        if fd == self.er:
            self.events = (self.events + chunk)[-MAX_EVENT_BYTES:]
            return True
        frames, self.buf = split_frames(self.buf + chunk)
        for payload in frames:
            if self.cells_done:
                self.frames.append(payload)
            self.cells_done = True
        if len(self.buf) >= 8 and struct.unpack(">Q", self.buf[:8])[0] > MAX_RESULT_BYTES:
            self.status = "oversized"
        return True


def watch_child(pid: int, r: int, er: int, n: int, timeout: float) -> _Child:
    """Read the child ``pid`` until it sent its ``n`` check frames, overran a bound, sent too much
    or ended; then kill it and reap it (``child.wstatus``).  Each phase (the cells, then each check)
    gets ``timeout`` seconds from the end of the one before."""
    child = _Child(pid, r, er)
    open_fds = [r, er]
    done_before = (False, 0)
    deadline = time.monotonic() + timeout
    while r in open_fds and len(child.frames) < n and child.status is None:
        now = time.monotonic()
        if (child.cells_done, len(child.frames)) != done_before:  # a phase ended: the next one's bound
            done_before = (child.cells_done, len(child.frames))
            deadline = now + timeout
        left = deadline - now
        if left <= 0:
            child.status = "timeout"
            break
        ready, _, _ = select.select(open_fds, [], [], min(left, 0.5))
        for fd in ready:
            if not child.read(fd):
                open_fds.remove(fd)
    reaped = None
    if r not in open_fds and len(child.frames) < n and child.status is None:
        # the child closed its pipe before it finished: let it end the way it is ending (an exit
        # code, a signal of its own) before ours, so the verdict says how (nested: through its init)
        end = time.monotonic() + 1.0
        while reaped is None and time.monotonic() < end:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                reaped = status
            else:
                time.sleep(0.005)
    if reaped is None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        reaped = os.waitpid(pid, 0)[1]
    child.wstatus = reaped
    if er in open_fds:  # what the child wrote to the watch channel before it ended
        os.set_blocking(er, False)
        try:
            while child.read(er):
                pass
        except BlockingIOError:
            pass
    os.close(r)
    os.close(er)
    return child


def _failure(child: _Child, timeout: float) -> dict:
    """The result of the check (or, before the cells finished, every check) ``child`` did not finish."""
    if child.status == "timeout":
        return {"status": "timeout", "error": f"did not finish within {timeout:g} s"}
    if child.status == "oversized":
        return {"status": "crashed", "error": f"the check sent back more than {MAX_RESULT_BYTES // 10**6} MB or "
                                              "something that is not a result the grader can read; nothing was compared"}
    return ended(child.wstatus)


def run_job(job: dict, cfg: Config, snapshot=None) -> dict:
    """Run every check of ``job`` (one submission); returns ``{"results": {check id: result}}``.

    One child runs the cells and the checks in turn; a check the child does not finish gets its own
    verdict and the rest go to a fresh child (at most one child per check, as many as a submission
    that crashes every check needs).  Checks marked ``isolated`` run apart from the others, in a child
    of their own.
    Each result is read by :func:`attnlab_grader.sandbox.wire.check_result` (never raises); a failure of
    the sandbox itself is one ``crashed`` result for the check concerned."""
    checks = job["checks"]
    timeout = float(job.get("timeout", 10))
    results: dict = {}
    # ``isolated`` checks (those that bring reference code into the sandbox) run apart from the others
    for batch in ([i for i, c in enumerate(checks) if not c.get("isolated")],
                  [i for i, c in enumerate(checks) if c.get("isolated")]):
        if batch and _run_batch(job, batch, cfg, snapshot, timeout, results) is not None:
            for c in checks:  # the cells never finished: no check can run, none is tried again
                results.setdefault(c["id"], dict(results[checks[batch[0]]["id"]]))
            break
    return {"results": results}


def _run_batch(job: dict, todo: list[int], cfg: Config, snapshot, timeout: float, results: dict) -> dict | None:
    """Run the checks ``todo`` of ``job`` in one child (and fresh ones after a check it did not
    finish); write each check's result into ``results`` by check id.  Returns the failure when the
    answer cells themselves never finished (then every check of ``todo`` has it), else ``None``."""
    checks = job["checks"]
    while todo:
        os.makedirs(cfg.workdir, exist_ok=True)
        if not cfg.own_uid:  # nested: the zygote's own uid is the check's uid (mapped to cfg.uid)
            os.chown(cfg.workdir, cfg.uid, cfg.uid)
        os.chmod(cfg.workdir, 0o700)
        try:
            pid, r, er = spawn_child(job, todo, cfg.workdir, cfg, snapshot)
            child = watch_child(pid, r, er, len(todo), timeout)
        except Exception as err:  # noqa: BLE001 - the sandbox could not run this check: say so, go on
            results[checks[todo[0]]["id"]] = {"status": "crashed", "error": f"the sandbox could not run this "
                                                                            f"check ({type(err).__name__}: {str(err)[:200]})"}
            todo = todo[1:]
            continue
        finally:
            clean_up_uid(cfg.uid, cfg)
            kill_children()
            shutil.rmtree(cfg.workdir, ignore_errors=True)
        records = watch_records(child.events)
        for i, payload in zip(todo, child.frames):
            results[checks[i]["id"]] = check_result(payload, records, i, checks[i], records.get("c", ()))
        rest = todo[len(child.frames):]
        if not rest:
            return None
        failure = _failure(child, timeout)
        if not child.cells_done:  # the cells themselves did not finish: no check can run
            for i in rest:
                results[checks[i]["id"]] = dict(failure)
            return failure
        results[checks[rest[0]]["id"]] = failure
        todo = rest[1:]
    return None
