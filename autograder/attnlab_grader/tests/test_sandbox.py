"""The sandbox itself: untrusted code cannot reach files, network, the grader, or other items.

Every test runs under each mechanism this user can build (as root: ``root`` and ``userns``; as an
ordinary user: ``userns`` and ``bwrap``); ``test_rootless.py`` runs this file as an ordinary user.
"""
from __future__ import annotations

import errno
import os
import pwd
import socket
from pathlib import Path

import pytest

from suite_settings import suite_settings
from attnlab_grader.records.course import REPO
from attnlab_grader.sandbox import Sandbox, mechanism_support

from attnlab_grader.tests.conftest import needs_sandbox

pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.xdist_group("grading-2")]

#: What this user tests: root its own mechanism; an ordinary user both unprivileged ones (as root,
#: test_rootless.py runs this file again as an ordinary user: userns/bwrap started by root are not
#: real deployments).  ATTNLAB_TEST_MECHANISMS=root,userns overrides.
WANTED = suite_settings().mechanisms or \
    (("root",) if os.geteuid() == 0 else ("userns", "bwrap"))
MECHANISMS = [m for m in WANTED if mechanism_support()[m] is None] or ["none"]
#: RLIMIT_NPROC is not enforced for real uid 0 (kernel): with a nested mechanism started by root a
#: check could start threads.  Real deployments of userns/bwrap run as an ordinary user.
NPROC_ENFORCED = {"root": True, "userns": os.geteuid() != 0, "bwrap": os.geteuid() != 0,
                  "landlock": os.geteuid() != 0}  # landlock: tests/k8s runs this file in a grading pod


def _ops(trial: dict) -> list[str]:
    """A trial's watch records (``{"kind", "op"}``) in the words a report's evidence shows them in."""
    from attnlab_grader.sandbox.wire import record_text
    return [record_text(r) for r in trial["forbidden_ops"]]


PROBE = r'''
import os, socket, threading, ctypes
def attempt(fn):
    try:
        fn()
        return "ALLOWED"
    except BaseException as e:
        return type(e).__name__
def _read(p):
    with open(p) as f:
        f.read(1)
def _write(p):
    with open(p, "a") as f:
        f.write("x")
def _net(port):
    socket.create_connection(("127.0.0.1", port), timeout=1).close()
def _kill(pids):
    import time
    if not pids:
        raise ProcessLookupError("no other process is visible")
    for p in pids:
        os.kill(p, 9)
    time.sleep(0.2)
    for p in pids:  # a namespace's init ignores signals from inside: kill() succeeds, nothing dies
        try:
            with open(f"/proc/{p}/status") as f:
                if "zombie" not in f.read():
                    raise PermissionError(f"process {p} survived SIGKILL")
        except FileNotFoundError:
            pass
def _kill_parent():
    _kill([os.getppid()] if os.getppid() else [])
def _kill_others():
    _kill([int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()])
def _fork():
    if os.fork() == 0:
        os._exit(0)
def _thread():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
def _reveal(path):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.unshare(0x10000000 | 0x00020000)  # a new user+mount namespace of our own, if allowed
    if libc.umount2(path.encode(), 2) != 0:
        raise OSError(ctypes.get_errno(), "umount2")
    _read(path + "/gradebook.db")
'''


@pytest.fixture(scope="module", params=MECHANISMS)
def box(request, tmp_path_factory):
    if request.param == "none":
        pytest.skip(f"no sandbox mechanism here: {mechanism_support()}")
    secret = tmp_path_factory.mktemp("course") / "gradebook.db"
    secret.write_text("grades")
    other = secret.parent / "submitted" / "bob" / "02" / "02.ipynb"
    other.parent.mkdir(parents=True)
    other.write_text("{}")
    os.chmod(secret, 0o644)
    with Sandbox(slot=7, hide=[str(secret.parent)], mechanism=request.param) as sb:
        yield sb, secret


def run(sb, extract, cells=(), timeout=5):
    reply = sb.run({"timeout": timeout, "mem_mb": 512, "cells": [["c", PROBE], *cells],
                    "checks": [{"id": "x", "extract": extract, "trials": [{}]}]})
    return reply["results"]["x"]


def test_files_network_and_privileges_are_out_of_reach(box):
    sb, secret = box
    # a listener this test opens on the grader's loopback: reachable from here (checked), so a refused
    # connection from inside the sandbox means isolation, not a closed port. Only loopback is tried.
    # Where the grader itself has no loopback (a pod-like network namespace with no interface up,
    # tests/k8s), there is nothing to reach; the sandbox must still be refused.
    listener = socket.create_server(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError as err:
        assert err.errno == errno.ENETUNREACH, err  # only "no network at all" excuses an unreachable listener
    targets = {
        "solutions": REPO / "solutions" / "02_scaled_dot_product_attention" / "grading.py",
        "repo": REPO / "pyproject.toml",
        "gradebook": secret,
        "attnlab_src": REPO / "src" / "attnlab" / "nn" / "attention.py",
        "nbgrader_config": REPO / "nbgrader_config.py",
        "other_student": secret.parent / "submitted" / "bob" / "02" / "02.ipynb",
        "root_home": Path(pwd.getpwnam("root").pw_dir) / ".bash_history",  # the superuser's home, wherever it is
    }
    extract = ("__result__ = {'uid': str(os.getuid()), " + ", ".join(f"'{k}': attempt(lambda: _read('{v}'))" for k, v in targets.items())
               + f", 'write_gradebook': attempt(lambda: _write('{secret}'))"
               + f", 'write_config': attempt(lambda: _write('{REPO / 'attnlab_grader' / 'nbgrader_config.py'}'))"
               + f", 'loopback': attempt(lambda: _net({port}))"
               + ", 'import_attnlab': attempt(lambda: __import__('attnlab'))"
               + ", 'kill_parent': attempt(_kill_parent)"
               + ", 'kill_others': attempt(_kill_others)"
               + ", 'become_root': attempt(lambda: os.setuid(0))"
               + ", 'thread': attempt(_thread), 'fork': attempt(_fork)"
               + f", 'unmount_course': attempt(lambda: _reveal('{secret.parent}'))}}")
    try:
        res = run(sb, extract)
    finally:
        listener.close()
    assert res["status"] == "ok", res
    got = {k: v for k, v in res["trials"][0]["value"]["__dict__"].items()}
    denied = list(targets) + ["write_gradebook", "write_config", "loopback", "import_attnlab",
                              "kill_parent", "kill_others", "become_root", "unmount_course"]
    if NPROC_ENFORCED[sb.mechanism]:
        denied += ["thread", "fork"]
    for key in denied:
        assert got[key] != "ALLOWED", (sb.mechanism, key, got)
    assert got["uid"] == str(sb.uid)
    assert secret.read_text() == "grades"
    assert run(sb, "__result__ = 1")["status"] == "ok"  # the sandbox survived all of it


@pytest.mark.parametrize("code,status", [
    ("while True:\n    try:\n        pass\n    except KeyboardInterrupt:\n        pass", "timeout"),
    ("import os\nos._exit(0)", "crashed"),
    ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", "timeout"),
    ("import signal, os\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nos.kill(os.getpid(), signal.SIGSEGV)", "crashed"),
])
def test_runaway_code_is_stopped(box, code, status):
    sb, _ = box
    probe = ("def _mine():\n"  # processes of this uid (another may exit while /proc is read)
             "    out = []\n"
             "    for p in os.listdir('/proc'):\n"
             "        try:\n"
             "            if p.isdigit() and p != '1' and open(f'/proc/{p}/status').read().count('Uid:\\t%d' % os.getuid()):\n"
             "                out.append(p)\n"
             "        except FileNotFoundError:\n"
             "            pass\n"
             "    return out\n"
             "__result__ = sorted(_mine())")
    # landlock (a grading pod): no PID namespace, so the grader's own processes share the uid and
    # are visible; the item may add none to them
    before = run(sb, probe) if sb.mechanism == "landlock" else None
    res = sb.run({"timeout": 3, "mem_mb": 256, "cells": [], "checks": [{"id": "x", "extract": code, "trials": [{}]}]})
    assert res["results"]["x"]["status"] == status
    # the sandbox is still healthy and no process of the item survived
    # pid 1 is the zygote (root) or, in nested mechanisms, the check's own trusted init
    after = run(sb, probe)
    assert after["status"] == "ok"
    assert before is None or before["status"] == "ok", before
    want = len(before["trials"][0]["value"]["__seq__"]) if before else 1  # else only the probe itself
    assert len(after["trials"][0]["value"]["__seq__"]) == want


def test_memory_bomb_hits_the_limit(box):
    sb, _ = box
    res = run(sb, "x = bytearray(8 * 1024**3)")
    assert res["trials"][0]["status"] == "error" and res["trials"][0]["memory"]


def test_subclass_results_are_not_serialised(box):
    sb, _ = box
    cls = "class Always(torch.Tensor):\n    def __eq__(self, other):\n        return True\n"
    res = run(sb, "__result__ = torch.zeros(2).as_subclass(Always)", cells=[["d", cls]])
    assert "__unsupported__" in res["trials"][0]["value"]


SOFTMAX_VIA_LIBRARY = "def softmax(x, dim=-1):\n    return torch.softmax(x, dim)\n"


def _watched(sb, cells, timeout=5):
    reply = sb.run({"timeout": timeout, "mem_mb": 512, "cells": [["c", PROBE], *cells],
                    "checks": [{"id": "x", "extract": "__result__ = softmax(torch.ones(2, 3))",
                                "trials": [{}, {}], "forbid_ops": ["softmax"]}]})
    return reply["results"]["x"]


def test_forbidden_op_is_recorded_outside_the_check(box):
    """The watch's record lives in the job process: clearing what the check can reach, forging the
    result pipe or exiting after the library call changes nothing (runs without the static scan)."""
    sb, _ = box
    plain = _watched(sb, [["s", SOFTMAX_VIA_LIBRARY]])
    assert all("aten._softmax.default" in _ops(t) for t in plain["trials"]), plain
    clear = ("import gc, sys\n"
             "def softmax(x, dim=-1):\n    r = torch.softmax(x, dim)\n"
             "    f = sys._getframe()\n    while f is not None:\n"
             "        for v in list(f.f_locals.values()):\n"
             "            if type(v) is list and v and all(type(s) is str for s in v):\n"
             "                v.clear()\n"
             "        f = f.f_back\n"
             "    for o in gc.get_objects():\n"
             "        if type(o) is list and o and all(type(s) is str and 'aten' in s for s in o):\n            o.clear()\n"
             "    return r\n")
    cleared = _watched(sb, [["s", clear]])
    assert cleared["status"] == "ok" and cleared["trials"], cleared
    assert all(_ops(t) for t in cleared["trials"]), cleared
    forge = ("import json\n"
             "def softmax(x, dim=-1):\n    r = torch.softmax(x, dim)\n"
             "    trial = {'status': 'ok', 'forbidden_ops': [], 'value': {'__array__': r.tolist(), "
             "'shape': list(r.shape), 'dtype': 'torch.float32'}}\n"
             "    fake = json.dumps({'cell_errors': [], 'status': 'ok', 'trials': [trial, trial]}).encode()\n"
             "    for fd in range(3, 64):\n        try:\n            os.write(fd, fake)\n        except OSError:\n            pass\n"
             "    os._exit(0)\n")
    forged = _watched(sb, [["s", forge]])
    # the check ended inside the first trial: the forged second trial claims no forbidden op, but
    # the first one's record stands, and one trial with a forbidden op costs the item (sandbox_grade._runtime)
    assert forged.get("status") != "ok" or any(_ops(t) for t in forged["trials"]), forged


def test_library_call_in_another_thread_cannot_run(box):
    """A thread would escape the watch of the calling thread: a check may not start one."""
    sb, _ = box
    if not NPROC_ENFORCED[sb.mechanism]:
        pytest.skip("RLIMIT_NPROC does not bind real uid 0 (nested mechanism started by root)")
    thread = ("import threading\n"
              "def softmax(x, dim=-1):\n    out = {}\n"
              "    t = threading.Thread(target=lambda: out.update(r=torch.softmax(x, dim)))\n"
              "    t.start()\n    t.join()\n    return out['r']\n")
    res = _watched(sb, [["s", thread]])
    assert all(t["status"] == "error" and "thread" in t["error"] for t in res["trials"]), res
    proc = ("import multiprocessing\n"
            "def softmax(x, dim=-1):\n    with multiprocessing.get_context('fork').Pool(1) as p:\n"
            "        return torch.tensor(p.apply(torch.softmax, (x, dim)))\n")
    res = _watched(sb, [["s", proc]])
    assert all(t["status"] != "ok" or _ops(t) for t in res.get("trials", [res])), res


def _check(sb, cells, setup, extract, trials=1, forbid=("softmax",), timeout=5):
    reply = sb.run({"timeout": timeout, "mem_mb": 512, "cells": [["c", PROBE], *cells],
                    "checks": [{"id": "x", "setup": setup, "extract": extract, "trials": [{"x": [[1.0, 2.0]]}] * trials,
                                "forbid_ops": list(forbid)}]})
    return reply["results"]["x"]


def test_a_broken_result_pipe_is_that_items_verdict(box):
    """Deeply nested JSON (or garbage) forged on the result pipe ends as this item's verdict with a
    reason; the job and the rest of the submission carry on (runs without the static scan)."""
    sb, _ = box
    for payload in ("b'{\"trials\": [' + b'[' * 100000 + b']' * 100000 + b']}'", "b'\\xff' * 100"):
        forge = ("def f(x):\n    for fd in range(3, 64):\n        try:\n"
                 f"            os.write(fd, {payload})\n        except OSError:\n            pass\n    os._exit(0)\n")
        res = _check(sb, [["s", forge]], "", "__result__ = f(1)")
        assert res["status"] == "crashed" and "nothing was compared" in res["error"], res


def test_every_line_of_student_code_runs_under_the_watch(box):
    """The grader's setup and extraction use references taken before student code ran; student
    code that runs inside them (a replaced torch.tensor, Tensor.detach) runs under the watch, and
    replacing library attributes is recorded outside the check (runs without the static scan)."""
    sb, _ = box
    setup = "_X = torch.tensor(__inputs__['x'])\n"
    spy = ("_seen = {}\n_orig = torch.tensor\n"
           "def _spy(*a, **k):\n    t = _orig(*a, **k)\n    _seen['r'] = torch.softmax(t, -1)\n    return t\n"
           "torch.tensor = _spy\n"
           "def softmax(x, dim=-1):\n    return _seen['r']\n")
    res = _check(sb, [["s", spy]], setup, "__result__ = softmax(_X)")
    ops = _ops(res["trials"][0])
    assert any("softmax" in op and not op.startswith("changed") for op in ops), res
    assert "changed library: torch.tensor" in ops, res
    detach = ("T = torch.Tensor\n_d = T.detach\nT.detach = lambda self: _d(self) * 0\n"
              "def double(x):\n    return x * 2\n")
    res = _check(sb, [["s", detach]], setup, "__result__ = double(_X)")
    trial = res["trials"][0]
    assert trial["value"]["__array__"] == [[2.0, 4.0]], res  # the grader's detach, not the student's
    assert "changed library: torch.Tensor.detach" in _ops(trial), res
    shadow = ("def double(x):\n    return x * 2\n"
              "torch = None\nF = None\nisinstance = lambda *a: True\ndict = list\n")
    res = _check(sb, [["s", shadow]], setup, "__result__ = double(_X)")
    trial = res["trials"][0]
    assert trial["status"] == "ok" and trial["value"]["__array__"] == [[2.0, 4.0]], res
    assert _ops(trial) == [], res


def test_one_child_runs_every_check_and_a_failure_stays_in_its_check(box):
    """A submission's checks share one child (the cells run once: same child token, one cell run), each with its
    own time bound; a check that crashes the child, loops past its bound or forges a result ends as
    that check's verdict only, and the checks after it run in a fresh child (cells run again there).
    A library replaced during one check is recorded for every later check of that child too; the
    gradient mode and default dtype an earlier check changed are back as the cells left them."""
    sb, _ = box
    cells = [["count", "import os\nRUNS = []\nRUNS.append(1)\nCHILD = os.urandom(8).hex()\n"]]
    ident = "__result__ = [CHILD, len(RUNS)]"
    checks = [{"id": "a", "extract": ident, "trials": [{}]},
              {"id": "b", "extract": ident + "\ntorch.tanh = torch.sigmoid\ntorch.set_grad_enabled(False)\n"
                                             "torch.set_default_dtype(torch.float64)\ntorch.manual_seed(7)", "trials": [{}]},
              {"id": "c", "extract": "__result__ = [CHILD, len(RUNS)] if torch.is_grad_enabled() and "
                                    "torch.get_default_dtype() == torch.float32 else 'state leaked'", "trials": [{}, {}]},
              {"id": "crash", "extract": "os._exit(0)", "trials": [{}]},
              {"id": "d", "extract": ident, "trials": [{}]},
              {"id": "loop", "extract": "while True:\n    pass", "trials": [{}]},
              {"id": "forged", "extract": "for fd in range(3, 64):\n    try:\n        os.write(fd, b'\\xff' * 64)\n"
                                          "    except OSError:\n        pass\nwhile True:\n    pass", "trials": [{}]},
              {"id": "e", "extract": ident, "trials": [{}]},
              {"id": "apart", "extract": ident, "trials": [{}], "isolated": True},
              {"id": "apart2", "extract": ident, "trials": [{}], "isolated": True}]
    reply = sb.run({"timeout": 2, "mem_mb": 256, "cells": cells, "checks": checks})["results"]

    def seen(gid, t=0):
        trial = reply[gid]["trials"][t]
        assert trial["status"] == "ok", reply[gid]
        child, runs = trial["value"]["__seq__"]
        return child, runs["__scalar__"]
    pid_a, runs = seen("a")
    assert runs == 1 and seen("b")[0] == seen("c")[0] == seen("c", 1)[0] == pid_a  # one child, cells once
    assert _ops(reply["a"]["trials"][0]) == []
    assert "changed library: torch.tanh" in _ops(reply["c"]["trials"][0]), reply["c"]
    assert reply["crash"]["status"] == "crashed" and "exited" in reply["crash"]["error"], reply["crash"]
    pid_d, runs_d = seen("d")
    assert pid_d != pid_a and runs_d == 1  # a fresh child ran the cells again
    assert reply["loop"]["status"] == "timeout", reply["loop"]
    assert reply["forged"]["status"] == "crashed" and "nothing was compared" in reply["forged"]["error"]
    assert seen("e")[0] not in (pid_a, pid_d)
    # isolated checks: apart from the others, together in a child of their own
    assert seen("apart")[0] == seen("apart2")[0] not in (pid_a, pid_d, seen("e")[0])


def test_cells_that_never_finish_end_every_check_once(box):
    """An answer cell that loops forever: every check times out, after one bound (not one per check)."""
    import time
    sb, _ = box
    t0 = time.monotonic()
    reply = sb.run({"timeout": 2, "mem_mb": 256, "cells": [["spin", "while True:\n    pass\n"]],
                    "checks": [{"id": g, "extract": "__result__ = 1", "trials": [{}], "isolated": g == "d"}
                               for g in "abcd"]})["results"]
    assert all(reply[g]["status"] == "timeout" for g in "abcd"), reply
    assert time.monotonic() - t0 < 2 * 4, "each check waited for the cells again"


#: The library function reached by a name no static scan can read (runs without the scan).
COMPUTED_NAME = ("import builtins\n_get = vars(builtins)['get' + 'attr']\n"
                 "def sdpa(q, k, v):\n"
                 "    fn = _get(F, 'multi_head_' + 'attention_forward')\n"
                 "    eye = torch.eye(q.shape[-1])\n"
                 "    out, w = fn(q, k, v, q.shape[-1], 1, None, None, None, None, False, 0.0, eye,\n"
                 "                torch.zeros(q.shape[-1]), True, use_separate_proj_weight=True, q_proj_weight=eye,\n"
                 "                k_proj_weight=eye, v_proj_weight=eye, need_weights=True)\n"
                 "    return w\n"
                 "def layer(d):\n    return _get(nn, 'Multihead' + 'Attention')(d, 1)\n")


def test_library_function_reached_by_a_computed_name_is_recorded(box):
    """A check's forbidden library *functions and classes* (``forbid_names``) are watched at run time
    by what runs, not by how it was named: ``F.multi_head_attention_forward`` reached through a
    computed string (its ``need_weights`` path runs no fused operation the dispatch watch would see)
    and ``nn.MultiheadAttention`` built the same way are recorded; an honest check is not."""
    sb, _ = box
    q = "torch.randn(4, 1, 8)"
    checks = [{"id": "fn", "extract": f"__result__ = sdpa({q}, {q}, {q})", "trials": [{}],
               "forbid_names": ["multi_head_attention_forward", "MultiheadAttention"]},
              {"id": "cls", "extract": "__result__ = layer(8).in_proj_weight.shape[0]", "trials": [{}],
               "forbid_names": ["MultiheadAttention"], "forbid_ops": ["multi_head_attention"]},
              {"id": "honest", "extract": f"__result__ = torch.softmax({q}, -1)", "trials": [{}],
               "forbid_names": ["multi_head_attention_forward"]},
              {"id": "unwatched", "extract": f"__result__ = sdpa({q}, {q}, {q})", "trials": [{}]}]
    reply = sb.run({"timeout": 5, "mem_mb": 512, "cells": [["s", COMPUTED_NAME]], "checks": checks})["results"]
    fn, cls = reply["fn"]["trials"][0], reply["cls"]["trials"][0]
    assert fn["status"] == "ok" and "call: multi_head_attention_forward (in torch.nn.functional)" in _ops(fn), fn
    assert any(op.startswith("call: ") and "MultiheadAttention.__init__" in op for op in _ops(cls)), cls
    assert _ops(reply["honest"]["trials"][0]) == [], reply["honest"]
    assert _ops(reply["unwatched"]["trials"][0]) == [], reply["unwatched"]


def test_added_library_attributes_and_lying_values_change_nothing(box):
    """Adding an attribute that shadows a C method (``Tensor.shape``, ``Tensor.tolist``), patching a
    module the grader's setup may use (``torch.nn.init``), swapping it in ``sys.modules`` (what the
    setup's own ``import`` finds), neutering the watch's own dispatch mode or leaving a mode of one's own
    active is recorded like a replacement; turning the
    value into data never calls the student's objects (a numpy-scalar look-alike, a dict key whose
    ``__str__`` would run code)."""
    sb, _ = box
    q = "torch.ones(2, 3)"
    added = ("def f(x):\n    return x * 2\n"
             "[torch][0].Tensor.shape = property(lambda s: (1,))\n[torch][0].nn.init.normal_ = lambda t, *a, **k: t\n")
    res = _check(sb, [["s", added]], "", f"__result__ = f({q})", forbid=())
    trial = res["trials"][0]
    assert trial["value"]["shape"] == [2, 3], res  # the grader's own size(), not the student's property
    assert {"changed library: torch.Tensor.shape", "changed library: torch.nn.init.normal_"} <= set(_ops(trial)), res
    swapped = "import sys, types\nsys.modules['torch.nn.functional'] = types.ModuleType('fake')\ndef f(x):\n    return x\n"
    res = _check(sb, [["s", swapped]], "", f"__result__ = f({q})", forbid=())
    assert "changed library: sys.modules.torch.nn.functional" in _ops(res["trials"][0]), res
    neuter = ("import torch.utils._python_dispatch as d\n"
              "d.TorchDispatchMode.__enter__ = lambda self: self\nd.TorchDispatchMode.__exit__ = lambda self, *a: None\n"
              "def softmax(x, dim=-1):\n    return torch.softmax(x, dim)\n")
    res = _check(sb, [["s", neuter]], "", f"__result__ = softmax({q})")
    assert "changed library: torch.utils._python_dispatch.TorchDispatchMode.__enter__" in _ops(res["trials"][0]), res
    lingering = ("from torch.overrides import TorchFunctionMode\nclass M(TorchFunctionMode):\n    pass\n"
                 "def f(x):\n    M().__enter__()\n    return x\n")
    res = _check(sb, [["s", lingering]], "", f"__result__ = f({q})", forbid=())
    assert "changed library: a torch function mode left active" in _ops(res["trials"][0]), res
    liar = ("class K:\n    def __str__(self):\n        torch.softmax(torch.ones(2), 0)\n        return 'k'\n"
            "    def __hash__(self):\n        return 1\n"
            "class S(float):\n    __module__ = 'numpy'\n    def __float__(self):\n        return 0.0\n")
    res = _check(sb, [["s", liar]], "", "__result__ = {K(): 1}")
    trial = res["trials"][0]
    assert trial["status"] == "error" and "key of type" in trial["error"] and not _ops(trial), res
    res = _check(sb, [["s", liar]], "", "__result__ = S(3.0)")
    assert res["trials"][0]["value"]["__unsupported__"] == "numpy.S", res


def test_a_students_exception_describes_itself_under_the_watch(box):
    """The message of an exception raised by student code is the student's own code (``__str__``): it
    runs under the watch (a library call there is recorded), one whose ``__str__`` raises ends as a
    message saying so, and neither ends the check."""
    sb, _ = box
    cells = [["s", "class Loud(Exception):\n    def __str__(self):\n        return str(torch.softmax(torch.ones(2), 0))\n"
                   "class Mute(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n"
                   "def loud(x):\n    raise Loud()\n"
                   "def mute(x):\n    raise Mute()\n"]]
    loud = _check(sb, cells, "", "__result__ = loud(1)")
    trial = loud["trials"][0]
    assert trial["status"] == "error" and trial["exception"] == "Loud", loud
    assert any("softmax" in op for op in _ops(trial)), loud
    mute = _check(sb, cells, "", "__result__ = mute(1)")
    trial = mute["trials"][0]
    assert mute["status"] == "ok" and trial["status"] == "error", mute
    assert "Mute (its message could not be shown: RuntimeError)" in trial["error"], mute
