"""Sizing benchmark for a one-machine class (the figures of ``deploy/SIZING.md``); not a test.

    .venv/bin/python benchmarks/bench_hub.py --students 3 --submissions 40 --jobs 2    # as root

As root, with the environments of ``scripts/ensure_hub.sh``: makes accounts unique to the run,
installs a class with ``deploy/jupyterhub/install.sh --start`` (PostgreSQL gradebook where Debian's
package is installed) and measures, over HTTP as the students would:

* hub start: ``--start`` of an installed class until ``/hub/health`` answers;
* user-server start: all students' servers requested at once, each until ready;
* memory per student (PSS of all their processes, MiB): server only; the exercise of set 02 open
  with every code cell run (the reference answers filled in); and the exercise plus lesson 02 open,
  both kernels having run every cell;
* grading: ``--submissions`` submissions of set 02 (reference answers and the QA library's wrong
  cases) graded by the grader account with the documented command into the class's gradebook.

Writes ``artifacts/hub/sizing.json`` and prints it; ``--uninstall`` runs and the accounts are removed
at the end, whatever happened.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "hub"))  # the hub test's helpers (a benchmark reuses them, never the reverse)
sys.path.insert(0, str(REPO))

import test_hub_e2e as hub  # noqa: E402 - the hub test's HTTP helpers

A = hub.A


def pss_mib(user: str) -> float:
    """Proportional set size of all processes of ``user``, MiB (shared pages split between users)."""
    import pwd
    total = 0
    for pid in hub._pids_of(pwd.getpwnam(user).pw_uid):
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
            total += int(next(ln for ln in text.splitlines() if ln.startswith("Pss:")).split()[1])
        except (OSError, StopIteration, ValueError):
            continue
    return round(total / 1024, 1)


def run_notebook_in_kernel(k, user: str, path: str, timeout: float = 300) -> int:
    """Open ``path`` as JupyterLab does (a session and its kernel) and run every code cell over the
    kernel's websocket (errors do not stop it); returns the number of cells run. The kernel stays."""
    import websocket
    sess = hub.server(k, user, "POST", "api/sessions", "open notebook", json={
        "path": path, "type": "notebook", "name": Path(path).name, "kernel": {"name": "python3"}}).json()
    nb = hub.server(k, user, "GET", f"api/contents/{path}", "read notebook").json()["content"]
    ws = websocket.create_connection(
        f"{k.url.replace('http', 'ws', 1)}/user/{user}/api/kernels/{sess['kernel']['id']}/channels",
        header=[f"Authorization: token {k.tokens[user]}"], timeout=timeout)
    n = 0
    try:
        for cell in nb["cells"]:
            if cell["cell_type"] != "code":
                continue
            msg_id = uuid.uuid4().hex
            ws.send(json.dumps({
                "header": {"msg_id": msg_id, "username": user, "session": uuid.uuid4().hex,
                           "msg_type": "execute_request", "version": "5.3", "date": ""},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": cell["source"], "silent": False, "store_history": True,
                            "user_expressions": {}, "allow_stdin": False, "stop_on_error": False}}))
            while True:
                reply = json.loads(ws.recv())
                if reply.get("parent_header", {}).get("msg_id") == msg_id and reply["msg_type"] == "execute_reply":
                    break
            n += 1
    finally:
        ws.close()
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=3)
    ap.add_argument("--submissions", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    why = hub._missing()
    if why:
        print(f"bench_hub: {why}", file=sys.stderr)
        return 2
    run = secrets.token_hex(3)
    course = f"z{run}"
    students = [f"{course}s{i}" for i in range(args.students)]
    instructor = f"{course}in"
    base = Path(tempfile.mkdtemp(prefix=f"attnlab-{course}-"))
    base.chmod(0o755)
    k = hub.Klass(base, hub._free_port())
    hub._copy_checkout(hub.ROOT, k.checkout)  # install.sh may close its checkout: it gets a copy of its own
    k.env["ATTNLAB_COURSE_ID"] = course
    k.passwords = {u: secrets.token_urlsafe(12) for u in (*students, instructor)}
    grader = f"grader-{course}"
    created: list[str] = []
    out: dict = {"machine": {"cpus": os.cpu_count(), "load_avg_1min_at_start": os.getloadavg()[0],
                             "mem_total_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)},
                 "students": args.students, "submissions": args.submissions, "jobs": args.jobs}
    try:
        (base / "home").mkdir(mode=0o755)
        for u in k.passwords:
            subprocess.run(["useradd", "-m", "-d", str(base / "home" / u), "-s", "/bin/bash", u], check=True)
            created.append(u)
        subprocess.run(["chpasswd"], input="".join(f"{u}:{p}\n" for u, p in k.passwords.items()), text=True, check=True)
        install = ["--instructors", instructor, "--graders", "", "--students", ",".join(students),
                   "--port", str(k.port), "--start"]
        t0 = time.monotonic()
        r = k.install(*install)
        assert r.returncode == 0, r.stdout + r.stderr
        out["install_and_start_s"] = round(time.monotonic() - t0, 1)
        out["gradebook"] = k.settings()["ATTNLAB_DB"].split(":")[0]
        # hub start alone: stop the hub (TERM), then --start again with the same settings
        pid = int((k.srv / "hub" / "jupyterhub.pid").read_text())
        os.kill(pid, 15)
        while Path(f"/proc/{pid}").exists():
            time.sleep(0.1)
        t0 = time.monotonic()
        r = k.install(*install)
        assert r.returncode == 0, r.stdout + r.stderr
        out["hub_start_s"] = round(time.monotonic() - t0, 1)

        for u in k.passwords:
            hub.login_and_token(k, u)
        course_dir = Path(k.settings()["ATTNLAB_GRADER_HOME"]) / "course"
        r = subprocess.run(["runuser", "-l", grader, "-c", f'cp -r "$ATTNLAB_CLONE/solutions/{A}" ~/course/source/'],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        deadline = time.monotonic() + 90
        while k.request("GET", f"/services/{course}/formgrader/api/assignments", instructor).status_code != 200:
            assert time.monotonic() < deadline, "formgrader not reachable"
            time.sleep(0.5)
        for step in ("assign", "release"):
            r = k.check(k.request("POST", f"/services/{course}/formgrader/api/assignment/{A}/{step}", instructor), step)
            assert r.json().get("success"), (step, r.text[:500])

        starts = hub.start_servers(k, students)
        out["server_start_s"] = sorted(starts.values())
        repo = k.settings()["ATTNLAB_GIT_SYSTEM_CONFIG"].rsplit("/", 1)[0] + "/lessons.git"
        mem = {"server_only": [], "exercise_open": [], "exercise_and_lesson_open": []}
        from attnlab_grader.tests import qa
        for u in students:
            mem["server_only"].append(pss_mib(u))
            hub.server(k, u, "POST", "assignments/fetch", "fetch", data={"course_id": course, "assignment_id": A})
            hub.server(k, u, "PUT", f"api/contents/{A}/{A}.ipynb", "save", json={
                "type": "notebook", "format": "json",
                "content": json.loads(json.dumps(qa.reference_submission(A, u)))})
            run_notebook_in_kernel(k, u, f"{A}/{A}.ipynb")
            mem["exercise_open"].append(pss_mib(u))
            hub.git_pull(k, u, f"file://{repo}")
            run_notebook_in_kernel(k, u, f"lessons/{A}.ipynb")
            mem["exercise_and_lesson_open"].append(pss_mib(u))
        out["memory_pss_mib"] = {key: {"each": v, "median": statistics.median(v), "max": max(v)}
                                 for key, v in mem.items()}

        # grading: a class of submissions into the gradebook, as the grader account
        cases = [None, *qa.spec(A).wrong]
        for i in range(args.submissions):
            sid = f"{course}x{i:04d}"
            case = cases[i % len(cases)]
            nb = qa.reference_submission(A, sid) if case is None else qa.wrong_submission(A, sid, case)
            qa.write(course_dir, sid, A, nb)
        subprocess.run(["chown", "-R", f"{grader}:{grader}", str(course_dir / "submitted")], check=True)
        t0 = time.monotonic()
        r = subprocess.run(["runuser", "-l", grader, "-c", f'cd "$ATTNLAB_CLONE" && python -m attnlab_grader grade '
                            f'~/course --assignment {A} --db "$ATTNLAB_DB" --jobs {args.jobs}'],
                           capture_output=True, text=True, timeout=3600)
        assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
        out["grading_s"] = round(time.monotonic() - t0, 1)
        out["load_avg_1min_at_end"] = os.getloadavg()[0]
    finally:
        try:
            k.install("--uninstall", timeout=300)
        finally:
            for u in created:
                subprocess.run(["pkill", "-KILL", "-u", u], capture_output=True)
                time.sleep(0.2)
                subprocess.run(["userdel", u], capture_output=True)
            shutil.rmtree(base, ignore_errors=True)
    hub.ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (hub.ARTIFACTS / "sizing.json").write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
