"""Packages per role, installed, not only cloned.

* A learner's install (`pip install attnlab`, what ./start.sh sets up) holds the course, `attnlab check`
  and the grader's judging engine, and none of the grader's own dependencies (PostgreSQL driver,
  similarity, LTI): a fresh venv with the built wheel and exactly its base requirements has no
  psycopg, copydetect, pylti1p3 or jwt, `attnlab check` grades a reference copy there, and an
  instructor command that needs them says in one sentence what to install.
* `pip install 'attnlab[grader]'` adds them, and `attnlab-grade` runs.
* An administrator's non-editable install gives `attnlab-grade`, which finds its nbgrader config
  (package data), the course's solutions (--solutions / ATTNLAB_SOLUTIONS, deliberately not shipped)
  and the Tiny Shakespeare data.

The venvs are cheap: the built wheel plus the distributions its requirements name, hard-linked from
this environment (pip then checks, offline, that nothing is missing), so no test downloads the course's
dependencies again; only `[grader]`'s few packages come from the package index, pinned by the lock.
"""
from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import uuid
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "constraints" / "py3.11.txt"
#: import name -> distribution of what only grading needs (pyproject.toml's [grader] extra)
GRADER_ONLY = {"psycopg": "psycopg", "copydetect": "copydetect", "pylti1p3": "pylti1p3", "jwt": "pyjwt"}


def test_the_package_list_names_every_package_of_the_library_and_the_grader():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = set()
    for top, base in (("attnlab", ROOT / "src" / "attnlab"), ("attnlab_grader", ROOT / "autograder" / "attnlab_grader")):
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            if "tests" not in rel:
                on_disk.add(".".join((top, *rel)))
    assert on_disk <= set(cfg["packages"]), f"add to [tool.setuptools] packages: {sorted(on_disk - set(cfg['packages']))}"
    assert cfg["package-dir"]["attnlab._data"] == "data"
    assert (ROOT / "data" / "tinyshakespeare" / "input.txt").is_file()


def test_no_file_names_the_grader_by_an_import_name_it_does_not_have():
    """The name ``autograder`` belongs to another PyPI project: the grader's import name is ``attnlab_grader``.
    No tracked file imports or runs a package ``autograder`` (``import``/``from``/``-m``), and the folder
    ``autograder/`` holds Python code only inside the package ``autograder/attnlab_grader/`` (its documentation and
    the default course folder sit beside it), so ``autograder`` itself is never importable from the clone."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split("\0")
    code_there = [f for f in files if f.startswith("autograder/") and f.endswith(".py")
                  and not f.startswith("autograder/attnlab_grader/")]
    assert not code_there, f"Python files under autograder/ outside its package attnlab_grader/: {code_there}"
    assert not (ROOT / "autograder" / "__init__.py").exists()
    pattern = re.compile(r"^\s*(?:import|from)\s+autograder\b|-m\s+autograder\b", re.M)
    naming = [f for f in files if f and f != "tests/test_install.py" and (ROOT / f).is_file()
              and f.endswith((".py", ".sh", ".md", ".toml", ".yaml", ".yml", ".cfg", ".txt", "Makefile"))
              and pattern.search((ROOT / f).read_text(encoding="utf-8", errors="replace"))]
    assert not naming, f"files that import or run a package named autograder: {naming}"


def test_python_m_attnlab_grader_works_in_the_clone():
    r = subprocess.run([sys.executable, "-m", "attnlab_grader", "paths"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"solutions        {ROOT / 'solutions'}" in r.stdout


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    assert r.returncode == 0, f"{cmd}:\n{(r.stdout + r.stderr)[-3000:]}"
    return r


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """attnlab's wheel, built once from a clean copy of the repository (tracked and new files)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    files = _run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT).stdout.splitlines()
    for rel in files:
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
          str(src), "-w", str(tmp / "dist")])
    return next((tmp / "dist").glob("attnlab-*.whl"))


def _closure(extras: tuple[str, ...]) -> list[md.Distribution]:
    """The installed distributions that ``attnlab[extras]`` requires, transitively (markers evaluated
    for this interpreter, each requirement's own extras followed), read from their metadata."""
    wanted: dict[str, set[str]] = {}
    todo = [("attnlab", set(extras))]
    found: dict[str, md.Distribution] = {}
    while todo:
        name, want = todo.pop()
        key = canonicalize_name(name)
        if key in found and want <= wanted[key]:
            continue
        wanted[key] = wanted.get(key, set()) | want
        dist = found[key] = md.distribution(name)
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker and not any(req.marker.evaluate({"extra": e}) for e in ("", *wanted[key])):
                continue
            todo.append((req.name, set(req.extras)))
    return [d for k, d in found.items() if k != "attnlab"]


def _link(dists: list[md.Distribution], venv: Path) -> None:
    """Hard-link (copy where linking fails) every file of ``dists`` into ``venv``, at the same place
    relative to the environment; scripts in bin/ are left out (their first line names this Python)."""
    prefix = Path(sys.prefix).resolve()
    for dist in dists:
        for f in dist.files or []:
            src = Path(os.path.normpath(dist.locate_file(f)))
            try:
                rel = src.relative_to(prefix)
            except ValueError:
                continue
            if rel.parts[0] == "bin" or not src.is_file():
                continue
            dst = venv / rel
            if dst.exists():
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst)
            except OSError:
                shutil.copy2(src, dst)


def _role_venv(tmp: Path, wheel: Path, extras: tuple[str, ...] = ()) -> tuple[Path, dict]:
    """A fresh venv holding the wheel and exactly the distributions ``attnlab[extras]`` requires.
    pip installs the wheel with its dependencies, from no index at all: it fails if one is missing."""
    venv = tmp / f"venv-{'-'.join(extras) or 'base'}"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    _link(_closure(extras), venv)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "PYTHONPATH", "ATTNLAB_", "VIRTUAL_ENV", "PIP_"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    offline = {**env, "PIP_CONFIG_FILE": os.devnull}  # no index and no find-links from pip's configuration
    target = f"{wheel}[{','.join(extras)}]" if extras else str(wheel)
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-index",
          "-c", str(LOCK), target], env=offline)
    _run([sys.executable, "-m", "pip", "--python", str(py), "check"], env=offline)
    return venv, env


def _importable(py: Path, env: dict, names) -> list[str]:
    code = f"import importlib.util as u, json; print(json.dumps([m for m in {list(names)!r} if u.find_spec(m)]))"
    return json.loads(_run([str(py), "-c", code], env=env, cwd=py.parent).stdout)


def test_the_grader_only_packages_are_the_grader_extra_and_the_base_install_needs_none_of_them():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    grader = {canonicalize_name(Requirement(r).name) for r in project["optional-dependencies"]["grader"]}
    assert grader == set(GRADER_ONLY.values())
    assert not base & grader
    # what attnlab-grade reads back from the installed metadata to say what is missing
    from attnlab_grader.classroom.extras import grader_requirements, missing_grader_packages
    assert {canonicalize_name(n) for n in grader_requirements()} == grader
    assert missing_grader_packages() == []  # this environment is ./test.sh's: every extra installed
    # and nothing the learner's install pulls in brings one back
    pulled = {canonicalize_name(d.metadata["Name"]) for d in _closure(())}
    assert not pulled & grader, sorted(pulled & grader)


@pytest.mark.slow
def test_a_learners_install_has_no_grader_only_package_and_attnlab_check_grades_there(tmp_path, wheel):
    from attnlab_grader.sandbox import sandbox_support
    from attnlab_grader.tests import qa

    venv, env = _role_venv(tmp_path, wheel)
    py = venv / "bin" / "python"
    assert _importable(py, env, [*GRADER_ONLY, "attnlab", "attnlab_grader.classroom.pipeline", "nbgrader", "jupyterlab"]) \
        == ["attnlab", "attnlab_grader.classroom.pipeline", "nbgrader", "jupyterlab"]
    installed = {canonicalize_name(line.split("==")[0]) for line in _run(
        [sys.executable, "-m", "pip", "--python", str(py), "list", "--format=freeze"], env=env).stdout.split()}
    assert not installed & set(GRADER_ONLY.values()), sorted(installed & set(GRADER_ONLY.values()))

    # an instructor's command that needs them: one sentence saying what to install, no traceback
    course = tmp_path / "course"
    course.mkdir()
    r = subprocess.run([str(venv / "bin" / "attnlab-grade"), "similarity", str(course), "--assignment", "x"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert "No module named 'copydetect'" in r.stderr and "pip install 'attnlab[grader]'" in r.stderr, r.stderr

    # `attnlab check` on a reference copy, in a private folder outside the clone
    learner = f"chk-{uuid.uuid4().hex[:8]}"
    a = "01_routing_and_soft_lookup"
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    nb = home / "my copy.ipynb"
    nbformat.write(qa.reference_submission(a, learner), str(nb))
    r = _run([str(venv / "bin" / "attnlab"), "--learner", learner, "check", str(nb)], cwd=home,
             env={**env, "ATTNLAB_SOLUTIONS": str(ROOT / "solutions"), "ATTNLAB_HOME": str(home / ".attnlab"),
                  "TMPDIR": str(home)})
    last = r.stdout.rstrip().splitlines()[-1]
    if sandbox_support() is None:  # the full check: the grader's judgement, every item passed
        got, _, rest = last.partition(" / ")
        assert rest.endswith(" points") and float(got) == float(rest.split()[0]) > 0, r.stdout
        assert "✘" not in r.stdout, r.stdout
    else:  # no sandbox on this machine: the visible checks, and it says why
        assert "sandbox" in r.stdout, r.stdout


@pytest.mark.slow
def test_the_grader_extra_adds_them_and_attnlab_grade_runs(tmp_path, wheel):
    venv, env = _role_venv(tmp_path, wheel)
    py = venv / "bin" / "python"
    assert _importable(py, env, GRADER_ONLY) == []
    # pip installs the extra as an instructor would: from the package index, pinned by the lock
    # (torch and the rest are already there, so only [grader]'s own packages are fetched)
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "-c", str(LOCK),
          f"{wheel}[grader]"], env=env)
    assert _importable(py, env, GRADER_ONLY) == list(GRADER_ONLY)
    r = _run([str(venv / "bin" / "attnlab-grade"), "--help"], env=env, cwd=tmp_path)
    for word in ("grade", "release", "similarity", "lti-passback"):
        assert re.search(rf"^\s+{word}\b", r.stdout, flags=re.M), r.stdout
    course = tmp_path / "course"
    course.mkdir()
    r = subprocess.run([str(venv / "bin" / "attnlab-grade"), "similarity", str(course), "--assignment", "x"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 1 and "no graded submissions of x" in r.stderr, r.stdout + r.stderr


@pytest.mark.slow
def test_a_non_editable_install_runs_attnlab_grade_with_its_config_solutions_and_data(tmp_path, wheel):
    # An administrator's route, cheaply: the wheel installed (no deps) into a fresh venv that borrows
    # this environment's dependencies by a path entry.
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
    assert f"nbgrader config  {site / 'attnlab_grader' / 'steps' / 'nbgrader_config.py'}\n" in r.stdout
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
    unreadable = [p for p in (site / "attnlab_grader").rglob("*") if p.is_file() and not p.stat().st_mode & 0o004]
    assert not unreadable, unreadable[:5]
    # test-support and benchmark code stays in the clone: no QA helpers, tests or bench installed
    shipped = {p.relative_to(site / "attnlab_grader").as_posix() for p in (site / "attnlab_grader").rglob("*.py")}
    assert not {"qa.py", "bench.py"} & shipped and not any(p.startswith("tests/") for p in shipped), sorted(shipped)
