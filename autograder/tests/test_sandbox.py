"""The sandbox itself: untrusted code cannot reach files, network, the grader, or other items."""
from __future__ import annotations

import os

import pytest

from autograder.course import REPO
from autograder.sandbox import Sandbox

from .conftest import needs_sandbox

pytestmark = [needs_sandbox, pytest.mark.slow, pytest.mark.xdist_group("grading-2")]

PROBE = r'''
import os, socket
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
def _net():
    socket.create_connection(("127.0.0.1", 22), timeout=1)
def _net_out():
    socket.create_connection(("1.1.1.1", 80), timeout=1)
'''


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    secret = tmp_path_factory.mktemp("course") / "gradebook.db"
    secret.write_text("grades")
    other = secret.parent / "submitted" / "bob" / "02" / "02.ipynb"
    other.parent.mkdir(parents=True)
    other.write_text("{}")
    os.chmod(secret, 0o644)
    with Sandbox(slot=7, hide=[str(secret.parent)]) as sb:
        yield sb, secret


def run(sb, extract, cells=(), timeout=5):
    reply = sb.run({"timeout": timeout, "mem_mb": 512, "cells": [["c", PROBE], *cells],
                    "checks": [{"id": "x", "extract": extract, "trials": [{}]}]})
    return reply["results"]["x"]


def test_files_network_and_privileges_are_out_of_reach(box):
    sb, secret = box
    targets = {
        "solutions": REPO / "solutions" / "02_scaled_dot_product_attention" / "grading.py",
        "repo": REPO / "pyproject.toml",
        "gradebook": secret,
        "attnlab_src": REPO / "src" / "attnlab" / "nn" / "attention.py",
        "nbgrader_config": REPO / "nbgrader_config.py",
        "other_student": secret.parent / "submitted" / "bob" / "02" / "02.ipynb",
        "root_home": "/root/.bash_history",
    }
    extract = ("__result__ = {" + ", ".join(f"'{k}': attempt(lambda: _read('{v}'))" for k, v in targets.items())
               + f", 'write_gradebook': attempt(lambda: _write('{secret}'))"
               + f", 'write_config': attempt(lambda: _write('{REPO / 'autograder' / 'nbgrader_config.py'}'))"
               + ", 'loopback': attempt(_net), 'internet': attempt(_net_out)"
               + ", 'import_attnlab': attempt(lambda: __import__('attnlab'))"
               + ", 'kill_parent': attempt(lambda: os.kill(os.getppid(), 9))"
               + ", 'kill_init': attempt(lambda: os.kill(1, 9))"
               + ", 'uid': str(os.getuid())}")
    res = run(sb, extract)
    assert res["status"] == "ok", res
    got = {k: v for k, v in res["trials"][0]["value"]["__dict__"].items()}
    for key in list(targets) + ["write_gradebook", "write_config", "loopback", "internet", "import_attnlab", "kill_parent", "kill_init"]:
        assert got[key] != "ALLOWED", (key, got)
    assert got["uid"] == str(sb.uid)
    assert secret.read_text() == "grades"


@pytest.mark.parametrize("code,status", [
    ("while True:\n    try:\n        pass\n    except KeyboardInterrupt:\n        pass", "timeout"),
    ("import os\nos._exit(0)", "crashed"),
    ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", "timeout"),
    ("import signal, os\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nos.kill(os.getpid(), signal.SIGSEGV)", "crashed"),
])
def test_runaway_code_is_stopped(box, code, status):
    sb, _ = box
    res = sb.run({"timeout": 3, "mem_mb": 256, "cells": [], "checks": [{"id": "x", "extract": code, "trials": [{}]}]})
    assert res["results"]["x"]["status"] == status
    # the sandbox is still healthy and no process of the item survived
    after = run(sb, "__result__ = sorted(p for p in os.listdir('/proc') if p.isdigit() and open(f'/proc/{p}/status').read().count('Uid:\\t%d' % os.getuid()))")
    assert after["status"] == "ok"
    assert len(after["trials"][0]["value"]["__seq__"]) == 1  # only the probe itself


def test_memory_bomb_hits_the_limit(box):
    sb, _ = box
    res = run(sb, "x = bytearray(8 * 1024**3)")
    assert res["trials"][0]["status"] == "error" and res["trials"][0]["memory"]


def test_subclass_results_are_not_serialised(box):
    sb, _ = box
    cls = "class Always(torch.Tensor):\n    def __eq__(self, other):\n        return True\n"
    res = run(sb, "__result__ = torch.zeros(2).as_subclass(Always)", cells=[["d", cls]])
    assert "__unsupported__" in res["trials"][0]["value"]
