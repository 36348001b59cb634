"""The gradebook on a real PostgreSQL server (``grade --db postgresql://...``).

A throwaway cluster is created with Debian's ``initdb``/``pg_ctl`` in a temp folder and
listens on a free loopback port (``scripts/ensure_postgres.sh``, run by ``./test.sh``,
installs the server binaries when it can).  A small class of set 03 is graded with the
documented command line; the grades must land in PostgreSQL (not in a SQLite file), match
the sandbox's reports, and come out in the CSV.  Without the server binaries the test skips
and says why.
"""
from __future__ import annotations

import csv
import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from attnlab_grader.tests import qa
from attnlab_grader.records.course import GradebookUnavailable, check_gradebook, normalize_db_url

from attnlab_grader.tests.conftest import needs_sandbox

A = "03_masks"


def _pg_bindir() -> str | None:
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2]), reverse=True)
    if shutil.which("initdb"):
        dirs.insert(0, os.path.dirname(os.path.realpath(shutil.which("initdb"))))
    return next((d for d in dirs if os.access(os.path.join(d, "initdb"), os.X_OK)), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def postgres(cluster):
    """``postgresql://attnlab@127.0.0.1:PORT/gradebook`` of a cluster that lives for this module."""
    return cluster[0]


@pytest.fixture(scope="module")
def cluster():
    """``(url, pg)``: the database URL of a throwaway cluster that lives for this module, and
    ``server(program, *args)`` running one of its server programs as the server's user (for
    ``pg_ctl``: this cluster, and ``start`` with its options)."""
    bindir = _pg_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not installed: "
                    "run scripts/ensure_postgres.sh as root, or apt-get install postgresql")
    run_as: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="attnlab-pg-"))
    if os.geteuid() == 0:  # the server refuses to run as root
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root but there is no 'postgres' user to run the server as")
        os.chown(base, pw.pw_uid, pw.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    data, log = base / "data", base / "server.log"

    def pg(*cmd):
        return subprocess.run([*run_as, *cmd], capture_output=True, text=True, timeout=120)

    r = pg(f"{bindir}/initdb", "-D", str(data), "-U", "attnlab", "--auth=trust", "-E", "UTF8", "--no-sync")
    assert r.returncode == 0, f"initdb failed:\n{r.stdout}\n{r.stderr}"
    opts = f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c fsync=off"
    r = pg(f"{bindir}/pg_ctl", "-D", str(data), "-l", str(log), "-w", "-t", "60", "start", "-o", opts)
    assert r.returncode == 0, f"pg_ctl start failed:\n{r.stdout}\n{r.stderr}\n{log.read_text() if log.exists() else ''}"
    try:
        r = pg(f"{bindir}/createdb", "-h", "127.0.0.1", "-p", str(port), "-U", "attnlab", "gradebook")
        assert r.returncode == 0, f"createdb failed:\n{r.stderr}"
        def server(prog, *args):
            if prog == "pg_ctl":  # this cluster, started with the options above
                args = ("-D", str(data), "-l", str(log), *args, *(("-o", opts) if "start" in args else ()))
            return pg(f"{bindir}/{prog}", *args)
        yield f"postgresql://attnlab@127.0.0.1:{port}/gradebook", server
    finally:
        pg(f"{bindir}/pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)


def test_urls_mean_psycopg3_and_bad_urls_are_explained():
    assert normalize_db_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_db_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalize_db_url("postgresql+psycopg2://u@h/db") == "postgresql+psycopg2://u@h/db"
    assert normalize_db_url(None) is None
    check_gradebook(None)  # SQLite default: nothing to check
    with pytest.raises(GradebookUnavailable, match="not a database URL"):
        check_gradebook("not a url")
    with pytest.raises(GradebookUnavailable, match="no driver"):
        check_gradebook("mysql+nosuchdriver://u@h/db")
    port = _free_port()  # nothing listens there
    with pytest.raises(GradebookUnavailable, match=r"cannot open the gradebook at .*nothing was graded"):
        check_gradebook(f"postgresql://attnlab:s3cret@127.0.0.1:{port}/gradebook")
    try:
        check_gradebook(f"postgresql://attnlab:s3cret@127.0.0.1:{port}/gradebook")
    except GradebookUnavailable as e:
        assert "s3cret" not in str(e), "the password must not be printed"


@needs_sandbox
@pytest.mark.slow
@pytest.mark.xdist_group("grading-2")
def test_class_graded_into_postgresql(postgres, tmp_path):
    from nbgrader.api import Gradebook

    root = tmp_path / "course"
    qa.write(root, "reference", A, qa.reference_submission(A, "reference"))
    qa.write(root, "untouched", A, qa.release_notebook(A))
    wrong = next(iter(qa.spec(A).wrong))
    wrong_student = next(f"wrong-{i}" for i in range(50) if qa.mistake_differs(A, f"wrong-{i}", wrong))
    qa.write(root, wrong_student, A, qa.wrong_submission(A, wrong_student, wrong))
    breaks = set(qa.spec(A).wrong[wrong].breaks)

    # the documented command, as an instructor types it
    proc = subprocess.run([sys.executable, "-m", "attnlab_grader", "grade", str(root), "-a", A, "--db", postgres],
                          capture_output=True, text=True, timeout=600, cwd=Path(__file__).resolve().parents[3])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "graded 3, failed 0" in proc.stdout, proc.stdout
    assert not (root / "gradebook.db").exists(), "grades went to a SQLite file, not to PostgreSQL"

    # the grades live in PostgreSQL, read back with nbgrader's own Gradebook
    with Gradebook(normalize_db_url(postgres), "attnlab") as gb:
        assert sorted(s.id for s in gb.students) == sorted(["reference", "untouched", wrong_student])
        ref = gb.find_submission(A, "reference")
        blank = gb.find_submission(A, "untouched")
        bad = gb.find_submission(A, wrong_student)
        max_auto = ref.max_code_score
        assert max_auto > 0
        assert ref.code_score == pytest.approx(max_auto)
        assert blank.code_score == 0
        lost = {g.name for nb in bad.notebooks for g in nb.grades
                if g.cell.cell_type == "code" and (g.score or 0) < g.max_score}
        assert lost == breaks, (lost, breaks)
        scores = {s: gb.find_submission(A, s).score for s in ("reference", "untouched", wrong_student)}

    with open(root / "grades.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    assert set(rows) == set(scores)
    for student, score in scores.items():
        assert float(rows[student]["score"]) == pytest.approx(score), (student, rows[student])
        assert rows[student]["status"] == "graded"

    # re-grading the same class updates the same rows (no duplicates, same scores)
    proc = subprocess.run([sys.executable, "-m", "attnlab_grader", "grade", str(root), "-a", A, "--db", postgres,
                           "--no-feedback"], capture_output=True, text=True, timeout=600,
                          cwd=Path(__file__).resolve().parents[3])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with Gradebook(normalize_db_url(postgres), "attnlab") as gb:
        assert len(gb.students) == 3
        assert {s: gb.find_submission(A, s).score for s in scores} == pytest.approx(scores)


def test_cli_says_what_is_wrong_with_an_unreachable_database(tmp_path):
    port = _free_port()
    (tmp_path / "submitted").mkdir()
    proc = subprocess.run([sys.executable, "-m", "attnlab_grader", "grade", str(tmp_path), "-a", A,
                           "--db", f"postgresql://attnlab@127.0.0.1:{port}/gradebook"],
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[3])
    assert proc.returncode != 0
    if "sandbox" in proc.stderr and "cannot grade" in proc.stderr:
        pytest.skip("sandbox unavailable here; the database check comes after it")
    assert "cannot open the gradebook" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


@needs_sandbox
@pytest.mark.slow
@pytest.mark.xdist_group("grading-2")
def test_postgres_stopped_mid_grade_is_a_clear_error_and_a_rerun_completes(cluster, tmp_path):
    """The gradebook's server goes down in the middle of ``grade`` (after the first submissions are
    recorded) and comes back: the submissions in flight end with one clear sentence (never a
    traceback), what was recorded before stays, and running the same command again grades the class."""
    import time

    from nbgrader.api import Gradebook
    url, server = cluster
    db = url.rsplit("/", 1)[0] + "/restart"
    r = server("createdb", "-h", "127.0.0.1", "-p", url.rsplit(":", 1)[1].split("/")[0], "-U", "attnlab", "restart")
    assert r.returncode == 0, r.stderr
    root = tmp_path / "course"
    students = [f"s{i:02d}" for i in range(12)]
    for s in students:
        qa.write(root, s, A, qa.reference_submission(A, s))
    cmd = [sys.executable, "-m", "attnlab_grader", "grade", str(root), "-a", A, "--db", db, "--jobs", "1",
           "--no-feedback"]
    repo = Path(__file__).resolve().parents[3]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=repo)
    reports = root / "reports" / A
    try:
        deadline = time.monotonic() + 300
        while len(list(reports.glob("*.json"))) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, "the class was graded before the server could be stopped"
        stop = server("pg_ctl", "-m", "fast", "-w", "stop")
        assert stop.returncode == 0, stop.stderr
        down_at = time.monotonic()
        time.sleep(4)  # at least one submission meets the stopped server
        start = server("pg_ctl", "-w", "-t", "60", "start")
        assert start.returncode == 0, start.stdout + start.stderr
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - down_at >= 4
    text = out + err
    assert "Traceback" not in text, text
    failed = [ln for ln in out.splitlines() if ln.strip().startswith("FAILED")]
    stopped_whole_run = proc.returncode != 0
    assert failed or stopped_whole_run, text
    for ln in failed:
        assert "the gradebook's database stopped answering" in ln and "grade again" in ln, ln
    if stopped_whole_run:
        assert "the gradebook's database stopped answering" in err and "run the same grade command again" in err, text
    # nothing recorded before the stop is lost
    graded_before = [s for s in students if (reports / f"{s}.json").exists()
                     and '"status": "graded"' in (reports / f"{s}.json").read_text()]
    with Gradebook(normalize_db_url(db), "attnlab") as gb:
        for s in graded_before:
            sub = gb.find_submission(A, s)
            assert sub.code_score == pytest.approx(sub.max_code_score) and sub.max_code_score > 0, s
    # the same command again completes the class
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=repo)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"graded {len(students)}, failed 0" in again.stdout, again.stdout
    with Gradebook(normalize_db_url(db), "attnlab") as gb:
        for s in students:
            sub = gb.find_submission(A, s)
            assert sub.code_score == pytest.approx(sub.max_code_score), s
    with open(root / "grades.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    assert {s: rows[s]["status"] for s in students} == dict.fromkeys(students, "graded")
