"""No library code writes the process environment: a CLI flag or a child's environment is passed
explicitly (the sandbox child setting its own environment is the one exception)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from envscan import ENV_WRITERS_ALLOWED, environment_writes, is_test, problems, project_files

ROOT = Path(__file__).resolve().parents[1]


def test_environ_write_detector_finds_every_form():
    src = ("import os\nfrom os import environ\nos.environ['A'] = '1'\nos.environ.setdefault('B', '1')\n"
           "environ.update(C='1')\ndel os.environ['A']\nos.putenv('D', '1')\nx = os.environ.get('E')\n"
           "env = dict(os.environ, F='1')\nenv['G'] = '1'\n%env H=1\n%env\n%env PATH\n%set_env I 1\n"
           "%env J 2\n")
    assert environment_writes(src) == [3, 4, 5, 6, 7, 11, 14, 15]


def test_no_project_code_outside_the_tests_writes_the_process_environment():
    """All project code (package, grader, hub recipes, scripts, benchmarks, lesson and solution
    sources, nbgrader configs); the test of this scan is in tests/test_environment_reads.py."""
    code = [f for f in project_files(ROOT) if not is_test(f) and f not in ENV_WRITERS_ALLOWED]
    assert len(code) > 300 and any(f.startswith("scripts/") for f in code)  # the scan sees the project
    found = problems(ROOT, reads=False)
    assert not found, "\n".join(found)


def test_a_new_gradebook_records_alembics_head_without_alembic_on_path(tmp_path, monkeypatch):
    """The grader no longer puts its environment's bin/ on PATH: a new gradebook gets its schema
    revision in-process, the same one the ``alembic heads`` script reports."""
    import sqlite3
    import sys

    from attnlab_grader.records.course import _quiet_imports
    _quiet_imports()
    from nbgrader.api import Gradebook
    from nbgrader.dbutil import _temp_alembic_ini
    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        cli = subprocess.run([str(Path(sys.executable).parent / "alembic"), "-c", ini, "heads"],
                             capture_output=True, text=True, check=True).stdout.split()[0]
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    db = tmp_path / "gradebook.db"
    with Gradebook(f"sqlite:///{db}", "attnlab"):
        pass
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT version_num FROM alembic_version").fetchall() == [(cli,)]


def test_solutions_flag_reaches_the_command_without_touching_the_environment(tmp_path, monkeypatch):
    """``attnlab-grade --solutions DIR paths`` reports DIR (over ATTNLAB_SOLUTIONS) and leaves the
    process environment as it was; the variable alone still works."""
    import os

    from click.testing import CliRunner

    from attnlab_grader.classroom.main import cli
    flag, env = tmp_path / "flag", tmp_path / "env"
    flag.mkdir()
    env.mkdir()
    monkeypatch.setenv("ATTNLAB_SOLUTIONS", str(env))
    out = CliRunner().invoke(cli, ["--solutions", str(flag), "paths"])
    line = next(ln for ln in out.output.splitlines() if ln.startswith("solutions"))
    assert str(flag) in line and os.environ["ATTNLAB_SOLUTIONS"] == str(env)
    out = CliRunner().invoke(cli, ["paths"])
    assert str(env) in next(ln for ln in out.output.splitlines() if ln.startswith("solutions"))
