"""The grader is installed, not only cloned: `pip install .` (non-editable) gives
`attnlab-grade`, which finds its nbgrader config (package data), the course's solutions
(--solutions / ATTNLAB_SOLUTIONS, deliberately not shipped) and the Tiny Shakespeare data."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_package_list_names_every_package_of_the_library_and_the_grader():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = set()
    for top, base in (("attnlab", ROOT / "src" / "attnlab"), ("autograder", ROOT / "autograder")):
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            if "tests" not in rel:
                on_disk.add(".".join((top, *rel)))
    assert on_disk <= set(cfg["packages"]), f"add to [tool.setuptools] packages: {sorted(on_disk - set(cfg['packages']))}"
    assert cfg["package-dir"]["attnlab._data"] == "data"
    assert (ROOT / "data" / "tinyshakespeare" / "input.txt").is_file()


def test_python_m_autograder_still_works_in_the_clone():
    r = subprocess.run([sys.executable, "-m", "attnlab_grader", "paths"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"solutions        {ROOT / 'solutions'}" in r.stdout


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    assert r.returncode == 0, f"{cmd}:\n{(r.stdout + r.stderr)[-3000:]}"
    return r


@pytest.mark.slow
def test_a_non_editable_install_runs_attnlab_grade_with_its_config_solutions_and_data(tmp_path):
    # An administrator's route, cheaply: a clean copy of the repository -> wheel -> installed
    # (no deps) into a fresh venv that borrows this environment's dependencies by a path entry.
    src = tmp_path / "src"
    files = _run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT).stdout.splitlines()
    for rel in files:
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
          str(src), "-w", str(tmp_path / "dist")])
    wheel = next((tmp_path / "dist").glob("attnlab-*.whl"))
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
          "--no-index", str(wheel)])
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    # this environment's packages (torch, nbgrader, click...), appended as a plain path: its .pth
    # files (the editable attnlab of the clone) are not processed
    (site / "zz_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "PYTHONPATH", "ATTNLAB_SOLUTIONS", "ATTNLAB_DATA"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    grade = str(venv / "bin" / "attnlab-grade")
    work = tmp_path / "elsewhere"
    work.mkdir()

    r = _run([grade, "--help"], cwd=work, env=env)
    for word in ("grade", "release", "paths", "--solutions", "ATTNLAB_SOLUTIONS"):
        assert word in r.stdout, r.stdout
    where = _run([py, "-c", "import attnlab_grader, attnlab; print(attnlab_grader.__file__); print(attnlab.__file__)"],
                 cwd=work, env=env).stdout.split()
    assert all(Path(p).is_relative_to(site) for p in where), where  # the installed copies, not the clone

    r = subprocess.run([grade, "paths"], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr  # no solutions without a clone: says how to give them
    assert "(MISSING)" in r.stdout and "--solutions DIR or set ATTNLAB_SOLUTIONS" in r.stderr
    assert f"nbgrader config  {site / 'attnlab_grader' / 'nbgrader_config.py'}\n" in r.stdout
    assert f"data             {site / 'attnlab' / '_data' / 'tinyshakespeare' / 'input.txt'}\n" in r.stdout

    solutions = tmp_path / "srv" / "solutions"  # e.g. /srv/attnlab/solutions, instructors only
    shutil.copytree(ROOT / "solutions", solutions)
    for args, extra in (([grade, "--solutions", str(solutions), "paths"], {}),
                        ([grade, "paths"], {"ATTNLAB_SOLUTIONS": str(solutions)})):
        r = _run(args, cwd=work, env={**env, **extra})
        assert f"solutions        {solutions}\n" in r.stdout and "MISSING" not in r.stdout
    text = _run([py, "-c", "from attnlab.data import load_shakespeare; print(len(load_shakespeare()))"],
                cwd=work, env=env).stdout
    assert int(text) > 1_000_000
    # installed root-owned for everyone: every installed file readable by all
    unreadable = [p for p in (site / "autograder").rglob("*") if p.is_file() and not p.stat().st_mode & 0o004]
    assert not unreadable, unreadable[:5]
    # test-support and benchmark code stays in the clone: no QA helpers, tests or bench installed
    shipped = {p.relative_to(site / "autograder").as_posix() for p in (site / "autograder").rglob("*.py")}
    assert not {"qa.py", "bench.py"} & shipped and not any(p.startswith("tests/") for p in shipped), sorted(shipped)
