"""Run a command on this machine under the restrictions of the grading pod (grading-job.yaml).

As root, in a private mount and network namespace that ends with the command:

* the root filesystem is remounted read-only (``readOnlyRootFilesystem: true``); ``/tmp`` is a
  fresh tmpfs (the pod's ``emptyDir``); the course folder is bind-mounted read-write (the PVC);
  the repository and the Python installation are bind-mounted read-only where an ordinary user
  can reach them (a clone under a 0700 directory works);
* a new network namespace with no interface up: no egress (the NetworkPolicy);
* ``setpriv`` drops to a fixed non-root uid with no passwd entry, no groups, an empty bounding
  set and no ambient/inheritable capabilities (``runAsUser``, ``drop: [ALL]``), sets
  ``no_new_privs`` (``allowPrivilegeEscalation: false``);
* a seccomp filter in the spirit of the runtimes' default profile refuses ``unshare``, ``setns``,
  ``mount`` and namespace flags of ``clone`` (EPERM) and ``clone3`` (ENOSYS): no user namespaces,
  no new ``/proc`` (``seccompProfile: RuntimeDefault``).

Each restriction can be left out (``Pod(...)`` flags) to show the Job command refuses without it.
"""
from __future__ import annotations

import ctypes
import os
import platform
import shlex
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: seccomp filter: (syscall numbers per machine)
_NR = {"x86_64": {"unshare": 272, "setns": 308, "mount": 165, "clone": 56, "clone3": 435},
       "aarch64": {"unshare": 97, "setns": 268, "mount": 40, "clone": 220, "clone3": 435}}
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
#: CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME
_NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000


def _blocker(path: Path) -> Path | None:
    """The highest ancestor of ``path`` that others cannot traverse (e.g. a 0700 temp folder)."""
    for parent in reversed(path.parents):
        if parent != Path("/") and not os.stat(parent).st_mode & 0o001:
            return parent
    return None


def _filter() -> bytes:
    nr, arch = _NR[platform.machine()], _AUDIT_ARCH[platform.machine()]

    def ins(code, jt, jf, k):
        return struct.pack("HBBI", code, jt, jf, k)
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    prog = [ins(ld, 0, 0, 4), ins(jeq, 0, 9, arch),                 # 0-1 other arch: allow
            ins(ld, 0, 0, 0),                                        # 2   syscall number
            ins(jeq, 8, 0, nr["unshare"]), ins(jeq, 7, 0, nr["setns"]),   # 3-4 -> EPERM (12)
            ins(jeq, 6, 0, nr["mount"]), ins(jeq, 6, 0, nr["clone3"]),    # 5-6 -> EPERM / ENOSYS (13)
            ins(jeq, 0, 3, nr["clone"]),                             # 7   not clone: allow (11)
            ins(ld, 0, 0, 16), ins(jset, 2, 0, _NS_FLAGS),           # 8-9 clone flags -> EPERM
            ins(ret, 0, 0, _ALLOW),                                  # 10
            ins(ret, 0, 0, _ALLOW),                                  # 11
            ins(ret, 0, 0, _ERRNO | 1),                              # 12  EPERM
            ins(ret, 0, 0, _ERRNO | 38)]                             # 13  ENOSYS
    return b"".join(prog)


def install_seccomp() -> None:
    """Install :func:`_filter` in this process (needs ``no_new_privs``); ``OSError`` on failure."""
    prog = _filter()
    buf = ctypes.create_string_buffer(prog, len(prog))

    class FProg(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fprog = FProg(len(prog) // 8, ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")


@dataclass
class Pod:
    """The grading pod's restrictions; each flag ``False`` leaves one out."""
    uid: int
    writable: list[str] = field(default_factory=list)   # PVCs: mounted read-write
    readable: list[str] = field(default_factory=list)   # the image: repository, Python
    non_root: bool = True
    drop_caps: bool = True
    no_new_privs: bool = True
    seccomp: bool = True
    read_only_root: bool = True
    no_egress: bool = True
    sa_token: bool = False          # True: mount a service-account token as Kubernetes would
    listener_port: int | None = None  # no_egress=False: a TCP listener on loopback ("the API")

    def script(self, argv: list[str], env: dict[str, str]) -> str:
        """The shell script (run as root by :meth:`run`) that builds the pod and runs ``argv``."""
        q = shlex.quote
        lines = ["set -e", "stage=$(mktemp -d /dev/shm/attnlab-pod-XXXXXX)",
                 'trap \'umount -l "$stage" 2>/dev/null; rmdir "$stage" 2>/dev/null; true\' EXIT',
                 'mount -t tmpfs tmpfs "$stage"']
        paths = [(p, True) for p in self.writable] + [(p, False) for p in self.readable]
        for i, (p, _) in enumerate(paths):
            lines += [f'{"mkdir" if os.path.isdir(p) else "touch"} "$stage/{i}"',
                      f'mount --bind {q(p)} "$stage/{i}"']
        lines.append("mount -t tmpfs -o mode=1777 tmpfs /tmp")    # emptyDir
        lines.append("mount -t tmpfs -o mode=755 tmpfs /root")    # the image has no root home
        for b in sorted({str(b) for p, _ in paths if (b := _blocker(Path(p)))}):
            if b.split("/")[1] not in ("tmp", "root"):  # those are fresh already
                lines.append(f"mount -t tmpfs -o mode=755 tmpfs {q(b)}")  # a 0700 folder above a clone
        for i, (p, rw) in enumerate(paths):
            lines += [f"mkdir -p {q(p)}" if os.path.isdir(p) else
                      f"mkdir -p {q(os.path.dirname(p))}; touch {q(p)}",
                      f'mount --bind "$stage/{i}" {q(p)}']
            if not rw:
                lines.append(f"mount -o remount,bind,ro {q(p)}")
        if self.sa_token:
            lines += ["mount -t tmpfs tmpfs /run",
                      "mkdir -p /run/secrets/kubernetes.io/serviceaccount",
                      "echo token > /run/secrets/kubernetes.io/serviceaccount/token"]
        if self.read_only_root:
            lines.append("mount -o remount,bind,ro /")
        lines += ['umount -l "$stage"', 'rmdir "$stage"']
        if self.listener_port:
            lines += ["ip link set lo up",
                      f"{q(sys.executable)} -c 'import socket,time;s=socket.socket();"
                      f"s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);"
                      f"s.bind((\"127.0.0.1\",{self.listener_port}));s.listen();time.sleep(60)' >/dev/null 2>&1 &",
                      "sleep 0.5"]
        cmd = []
        if self.non_root:
            cmd += ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups"]
            if self.drop_caps:
                cmd += ["--inh-caps=-all", "--bounding-set=-all"]
            if self.no_new_privs:
                cmd += ["--no-new-privs"]
            cmd += ["--"]
        cmd += ["env", "-i", *(f"{k}={v}" for k, v in env.items())]
        if self.seccomp:
            cmd += [sys.executable, "-I", os.path.abspath(__file__), "--seccomp-exec", "--"]
        lines += ["set +e", " ".join(map(q, cmd + argv)), "rc=$?"]
        lines += ["kill $(jobs -p) 2>/dev/null || true", "exit $rc"]
        return "\n".join(lines)

    def run(self, argv: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
        """Run ``argv`` in the pod (as root here: ``unshare`` builds the namespaces)."""
        ns = ["unshare", "--mount", "--propagation", "private"] + (["--net"] if self.no_egress or self.listener_port else [])
        return subprocess.run([*ns, "sh", "-c", self.script(argv, env)], capture_output=True, text=True,
                              timeout=timeout, cwd="/")


if __name__ == "__main__" and sys.argv[1:2] == ["--seccomp-exec"]:
    install_seccomp()
    argv = sys.argv[3:]
    os.execvp(argv[0], argv)
