"""No library code writes the process environment: a CLI flag or a child's environment is passed
explicitly (the sandbox child setting its own environment is the one exception)."""
from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


#: the sandbox (its zygote before any job, a submission's child before running it) sets its own process
#: environment: allowed.
ENV_WRITERS_ALLOWED = {"autograder/sandbox/zygote.py", "autograder/sandbox/procs.py"}
_MUTATORS = {"setdefault", "update", "pop", "popitem", "clear", "__setitem__", "__delitem__"}


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or \
        (isinstance(node, ast.Name) and node.id == "environ")


def environ_writes(source: str) -> list[int]:
    """Line numbers where ``source`` writes the process environment (``os.environ[k] = v``,
    ``del os.environ[k]``, ``os.environ.update/setdefault/pop/clear``, ``os.putenv/unsetenv``)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else \
            [node.target] if isinstance(node, ast.AugAssign) else []
        if any(isinstance(t, ast.Subscript) and _is_environ(t.value) for t in targets):
            lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if (f.attr in _MUTATORS and _is_environ(f.value)) or f.attr in {"putenv", "unsetenv"}:
                lines.append(node.lineno)
    return sorted(lines)


def test_environ_write_detector_finds_every_form():
    src = ("import os\nfrom os import environ\nos.environ['A'] = '1'\nos.environ.setdefault('B', '1')\n"
           "environ.update(C='1')\ndel os.environ['A']\nos.putenv('D', '1')\nx = os.environ.get('E')\n"
           "env = dict(os.environ, F='1')\nenv['G'] = '1'\n")
    assert environ_writes(src) == [3, 4, 5, 6, 7]


def test_no_library_code_writes_the_process_environment():
    files = subprocess.run(["git", "ls-files", "src", "autograder", "nbgrader_config.py"], cwd=ROOT,
                           capture_output=True, check=True, text=True).stdout.split()
    library = [f for f in files if f.endswith(".py") and "/tests/" not in f and f not in ENV_WRITERS_ALLOWED]
    assert len(library) > 30  # the scan sees the library
    found = [f"{f}:{n}" for f in library for n in environ_writes((ROOT / f).read_text(encoding="utf-8"))]
    assert not found, ("library code writes os.environ (pass an env= to the child or a setting to the "
                       "function instead): " + ", ".join(found))


def test_a_new_gradebook_records_alembics_head_without_alembic_on_path(tmp_path, monkeypatch):
    """The grader no longer puts its environment's bin/ on PATH: a new gradebook gets its schema
    revision in-process, the same one the ``alembic heads`` script reports."""
    import sqlite3
    import sys

    from autograder.course import _quiet_imports
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

    from autograder.__main__ import cli
    flag, env = tmp_path / "flag", tmp_path / "env"
    flag.mkdir()
    env.mkdir()
    monkeypatch.setenv("ATTNLAB_SOLUTIONS", str(env))
    out = CliRunner().invoke(cli, ["--solutions", str(flag), "paths"])
    line = next(ln for ln in out.output.splitlines() if ln.startswith("solutions"))
    assert str(flag) in line and os.environ["ATTNLAB_SOLUTIONS"] == str(env)
    out = CliRunner().invoke(cli, ["paths"])
    assert str(env) in next(ln for ln in out.output.splitlines() if ln.startswith("solutions"))
