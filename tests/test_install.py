"""Packages per role, installed, not only cloned: two distributions from this repository.

* The learner's, ``attnlab`` (``pyproject.toml``; ``pip install .``, what ./start.sh sets up), holds the
  course, ``attnlab check`` with the grader's judging and sandbox, the students' commands, and no
  instructor code: its wheel has ``attnlab_grader/judging`` and ``sandbox`` and none of ``records``,
  ``steps``, ``reports``, ``classroom``; a fresh venv with that wheel and exactly its requirements has
  none of the grader's own dependencies (PostgreSQL driver, similarity, LTI), ``python -m attnlab_grader``
  says in one sentence what to install, and ``attnlab check`` judges a set-02 notebook from that install
  alone.
* The instructor's, ``attnlab-grader`` (``autograder/pyproject.toml``), adds the rest of the package
  (no file in common) and those dependencies; ``attnlab-grade`` runs, its old students' spellings too.
* An administrator's non-editable install of both gives ``attnlab-grade``, which finds its nbgrader
  config, the course's solutions (--solutions / ATTNLAB_SOLUTIONS, deliberately not shipped) and the
  Tiny Shakespeare data; the grader's distribution in a folder of its own on ``PYTHONPATH`` (a hub's
  grader-site) joins the learner's package.

The venvs are cheap: the built wheels plus the distributions their requirements name, hard-linked from
this environment (pip then checks, offline, that nothing is missing), so no test downloads anything.
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
import zipfile
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "constraints" / "py3.11.txt"
GRADER_PYPROJECT = ROOT / "autograder" / "pyproject.toml"
#: import name -> distribution of what only grading needs (autograder/pyproject.toml's dependencies)
GRADER_ONLY = {"psycopg": "psycopg", "copydetect": "copydetect", "pylti1p3": "pylti1p3", "jwt": "pyjwt"}
#: the grader's layers that only the instructor's distribution carries
UPPER = ("records", "steps", "reports", "classroom")
SET_02 = "02_scaled_dot_product_attention"


def _packages(pyproject: Path) -> set[str]:
    return set(tomllib.loads(pyproject.read_text())["tool"]["setuptools"]["packages"])


def test_the_two_package_lists_cover_the_library_and_the_grader_and_share_nothing():
    learner, grader = _packages(ROOT / "pyproject.toml"), _packages(GRADER_PYPROJECT)
    on_disk = set()
    for top, base in (("attnlab", ROOT / "src" / "attnlab"), ("attnlab_grader", ROOT / "autograder" / "attnlab_grader")):
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            if "tests" not in rel:
                on_disk.add(".".join((top, *rel)))
    assert on_disk <= learner | grader, f"add to a [tool.setuptools] packages: {sorted(on_disk - learner - grader)}"
    assert not learner & grader, sorted(learner & grader)
    # the learner's: the library, the grader's package itself, judging and sandbox; the grader's: the rest
    assert {p for p in learner if p.startswith("attnlab_grader")} == \
        {p for p in on_disk if p == "attnlab_grader" or p.split(".")[1:2] in (["judging"], ["sandbox"])}
    assert grader == {p for p in on_disk if p.split(".")[1:2] and p.split(".")[1] in UPPER}
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
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
def wheels(tmp_path_factory) -> dict[str, Path]:
    """Both distributions' wheels, ``{"attnlab": ..., "attnlab-grader": ...}``, built once from a clean copy
    of the repository (tracked and new files), as an administrator builds them."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    files = _run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT).stdout.splitlines()
    for rel in files:
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    for project in (src, src / "autograder"):
        _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
              str(project), "-w", str(tmp / "dist")])
    return {"attnlab": next((tmp / "dist").glob("attnlab-*.whl")),
            "attnlab-grader": next((tmp / "dist").glob("attnlab_grader-*.whl"))}


def _grader_files(wheel: Path) -> set[str]:
    """The files a wheel puts under ``attnlab_grader/``."""
    return {n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("attnlab_grader/")}


def _closure(roots: tuple[str, ...]) -> list[md.Distribution]:
    """The installed distributions that the distributions ``roots`` require, transitively (markers
    evaluated for this interpreter, each requirement's own extras followed), read from their metadata;
    the course's own two distributions left out (the tests install them from their wheels)."""
    wanted: dict[str, set[str]] = {}
    todo: list[tuple[str, set[str]]] = [(r, set()) for r in roots]
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
    return [d for k, d in found.items() if k not in ("attnlab", "attnlab-grader")]


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


def _env() -> dict:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTEST", "PYTHONPATH", "ATTNLAB_", "VIRTUAL_ENV", "PIP_"))}


def _role_venv(tmp: Path, wheels: dict[str, Path], dists: tuple[str, ...]) -> tuple[Path, dict]:
    """A fresh venv holding the wheels of ``dists`` and exactly the distributions they require.
    pip installs the wheels with their dependencies, from no index at all: it fails if one is missing."""
    venv = tmp / f"venv-{'-'.join(dists)}"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    _link(_closure(dists), venv)
    env = _env()
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    offline = {**env, "PIP_CONFIG_FILE": os.devnull}  # no index and no find-links from pip's configuration
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-index",
          "-c", str(LOCK), *(str(wheels[d]) for d in dists)], env=offline)
    _run([sys.executable, "-m", "pip", "--python", str(py), "check"], env=offline)
    return venv, env


def _importable(py: Path, env: dict, names) -> list[str]:
    code = f"import importlib.util as u, json; print(json.dumps([m for m in {list(names)!r} if u.find_spec(m)]))"
    return json.loads(_run([str(py), "-c", code], env=env, cwd=py.parent).stdout)


def _borrowing_venv(tmp: Path, name: str) -> tuple[Path, Path, dict]:
    """``(python, site-packages, environment)`` of a fresh venv that borrows this environment's
    dependencies (torch, nbgrader, click...) by a path entry: this environment's purelib appended as a
    plain path, so its .pth files (the clone's editable attnlab and attnlab-grader) are not processed."""
    venv = tmp / name
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    (site / "zz_deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = _env()
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return py, site, env


def _linked_venv(tmp: Path, name: str) -> tuple[Path, Path, dict]:
    """``(python, site-packages, environment)`` of a fresh venv holding this environment's dependencies as
    hard links (a copy where the two are on different filesystems), without the clone's attnlab and
    attnlab-grader: a learner's venv in every respect that matters to the sandbox, which mounts back only the
    interpreter and the venv it runs from (a dependency borrowed by a path entry would be hidden there)."""
    venv = tmp / name
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    py = venv / "bin" / "python"
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    here = Path(sysconfig.get_path("purelib"))

    def link(src, dst):
        try:
            os.link(src, dst)
        except OSError:  # another filesystem: copy
            shutil.copy2(src, dst)

    for entry in here.iterdir():
        if entry.name.startswith(("attnlab", "__editable__", "_attnlab")) or entry.name == "__pycache__":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, site / entry.name, copy_function=link, symlinks=True)
        else:
            link(entry, site / entry.name)
    env = _env()
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return py, site, env


def test_the_grader_only_packages_are_the_graders_distribution_and_the_learners_needs_none_of_them():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    grader_project = tomllib.loads(GRADER_PYPROJECT.read_text())["project"]
    base = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    assert "grader" not in project.get("optional-dependencies", {}), "the grader is a distribution, not an extra"
    needs = {canonicalize_name(Requirement(r).name): Requirement(r) for r in grader_project["dependencies"]}
    assert str(needs.pop("attnlab").specifier) == f"=={project['version']}" == f"=={grader_project['version']}"
    grader = set(needs)
    assert grader == set(GRADER_ONLY.values())
    assert not base & grader
    assert grader_project["scripts"] == {"attnlab-grade": "attnlab_grader.classroom.main:cli"}
    assert "attnlab-grade" not in project["scripts"]
    # what attnlab-grade reads back from the installed metadata to say what is missing
    from attnlab_grader.classroom.extras import grader_requirements, missing_grader_packages
    assert {canonicalize_name(n) for n in grader_requirements()} == grader
    assert missing_grader_packages() == []  # this environment is ./test.sh's: the grader installed
    # and nothing the learner's install pulls in brings one back
    pulled = {canonicalize_name(d.metadata["Name"]) for d in _closure(("attnlab",))}
    assert not pulled & grader, sorted(pulled & grader)


def test_this_environment_has_both_distributions_editable_and_one_regular_package():
    """./test.sh's route (scripts/setup.sh --extras grader): both distributions editable from the clone,
    and ``attnlab_grader`` one regular package there (its ``__init__`` run, every layer found)."""
    # the installed record in site-packages (an editable install in compat mode also leaves the project's own
    # egg-info on sys.path, which importlib.metadata may meet first)
    installed = {d.metadata["Name"]: d for d in md.distributions(path=[sysconfig.get_path("purelib")])}
    for name, where in (("attnlab", ROOT), ("attnlab-grader", ROOT / "autograder")):
        direct = json.loads(installed[name].read_text("direct_url.json") or "{}")
        assert direct.get("dir_info", {}).get("editable") and direct["url"] == where.as_uri(), (name, direct)
    code = ("import attnlab_grader, attnlab_grader.classroom.cli as c, attnlab_grader.judging as j; "
            "print(attnlab_grader.__file__); print(c.__file__); print(j.__file__)")
    out = _run([sys.executable, "-c", code], cwd="/", env=_env()).stdout.split()
    base = ROOT / "autograder" / "attnlab_grader"
    assert out == [str(base / "__init__.py"), str(base / "classroom" / "cli.py"), str(base / "judging" / "__init__.py")]


def test_the_learners_wheel_holds_judging_and_sandbox_and_the_graders_the_rest(wheels):
    learner, grader = _grader_files(wheels["attnlab"]), _grader_files(wheels["attnlab-grader"])
    assert not learner & grader, sorted(learner & grader)  # one package folder, no file installed twice
    top = {n.split("/")[1] for n in learner}
    assert top == {"__init__.py", "__main__.py", "judging", "sandbox"}, sorted(top)
    assert {n.split("/")[1] for n in grader} == set(UPPER), sorted(grader)[:10]
    shipped = {n.removeprefix("attnlab_grader/") for n in learner | grader}
    on_disk = {p.relative_to(ROOT / "autograder" / "attnlab_grader").as_posix()
               for p in (ROOT / "autograder" / "attnlab_grader").rglob("*.py")
               if "tests" not in p.parts and p.name not in ("qa.py", "bench.py")}
    assert on_disk <= shipped, sorted(on_disk - shipped)


@pytest.mark.slow
def test_a_learners_install_has_no_instructor_code_and_no_grader_only_package(tmp_path, wheels):
    venv, env = _role_venv(tmp_path, wheels, ("attnlab",))
    py = venv / "bin" / "python"
    assert _importable(py, env, [*GRADER_ONLY, "attnlab", "attnlab_grader.judging", "nbgrader", "jupyterlab"]) \
        == ["attnlab", "attnlab_grader.judging", "nbgrader", "jupyterlab"]
    for layer in UPPER:
        assert _importable(py, env, [f"attnlab_grader.{layer}"]) == [], layer
    installed = {canonicalize_name(line.split("==")[0]) for line in _run(
        [sys.executable, "-m", "pip", "--python", str(py), "list", "--format=freeze"], env=env).stdout.split()}
    assert not installed & set(GRADER_ONLY.values()), sorted(installed & set(GRADER_ONLY.values()))
    assert not (venv / "bin" / "attnlab-grade").exists()

    # the instructor's entry: one sentence saying what to install, no traceback
    r = subprocess.run([str(py), "-m", "attnlab_grader", "grade", "x", "--assignment", "x"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stdout + r.stderr
    line = r.stderr.strip()
    assert "\n" not in line and "attnlab-grader" in line and "pip install ./autograder" in line, line
    # the students' commands are there
    r = _run([str(venv / "bin" / "attnlab"), "--help"], env=env, cwd=tmp_path)
    assert re.search(r"^\s+regrade-request\b", r.stdout, re.M) and re.search(r"^\s+practice-attach\b", r.stdout, re.M)


@pytest.mark.slow
def test_attnlab_check_judges_a_set_02_notebook_from_the_learners_wheel_alone(tmp_path, wheels):
    """The learner's wheel installed by itself (no dependencies) into a venv that holds only the
    third-party packages: ``python -m attnlab.cli check`` judges the items of a set-02 reference copy
    (full mode where a sandbox works), so the learner's library needs nothing above judging."""
    from attnlab_grader.sandbox import sandbox_support
    from attnlab_grader.tests import qa

    py, site, env = _linked_venv(tmp_path, "venv-check")
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps", "--no-index",
          str(wheels["attnlab"])], env={**env, "PIP_CONFIG_FILE": os.devnull})
    where = _run([py, "-c", "import attnlab, attnlab_grader; print(attnlab.__file__); print(*attnlab_grader.__path__)"],
                 cwd="/", env=env).stdout.split()
    assert all(Path(p).is_relative_to(site) for p in where), where  # the wheel's copies, not the clone's
    assert _importable(py, env, [f"attnlab_grader.{layer}" for layer in UPPER]) == []

    learner = f"chk-{uuid.uuid4().hex[:8]}"
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    nb = home / "my copy.ipynb"
    nbformat.write(qa.reference_submission(SET_02, learner), str(nb))
    r = subprocess.run([str(py), "-m", "attnlab.cli", "--learner", learner, "check", str(nb)],
                       cwd=home, capture_output=True, text=True, timeout=600,
                       env={**env, "ATTNLAB_SOLUTIONS": str(ROOT / "solutions"), "ATTNLAB_HOME": str(home / ".attnlab"),
                            "TMPDIR": str(home)})
    assert r.returncode == 0 and "Traceback" not in r.stderr, (r.stdout + r.stderr)[-4000:]
    last = r.stdout.rstrip().splitlines()[-1]
    judged = re.findall(r"^[✔✘–] ", r.stdout, re.M)
    assert judged, r.stdout  # items were judged, one line each
    if sandbox_support() is None:  # the full check: the grader's judgement, every item passed
        assert "Checked with the grader's own checks" in r.stdout, r.stdout
        got, _, rest = last.partition(" / ")
        assert rest.endswith(" points") and float(got) == float(rest.split()[0]) > 0, r.stdout
        assert "✘" not in r.stdout, r.stdout
    else:  # no sandbox on this machine: the visible checks, and it says why
        assert "sandbox" in r.stdout, r.stdout


@pytest.mark.slow
def test_the_graders_distribution_adds_the_rest_and_attnlab_grade_runs(tmp_path, wheels):
    venv, env = _role_venv(tmp_path, wheels, ("attnlab", "attnlab-grader"))
    py = venv / "bin" / "python"
    assert _importable(py, env, [*GRADER_ONLY, *(f"attnlab_grader.{layer}" for layer in UPPER)]) == \
        [*GRADER_ONLY, *(f"attnlab_grader.{layer}" for layer in UPPER)]
    # both distributions in one folder: each file recorded by exactly one of them
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    owners: dict[str, list[str]] = {}
    for name in ("attnlab", "attnlab-grader"):
        for f in md.Distribution.at(next(site.glob(f"{name.replace('-', '_')}-*.dist-info"))).files or []:
            if f.parts[0] == "attnlab_grader" and f.suffix == ".py":
                owners.setdefault(f.as_posix(), []).append(name)
    assert owners and all(len(o) == 1 for o in owners.values()), {f: o for f, o in owners.items() if len(o) > 1}
    r = _run([str(venv / "bin" / "attnlab-grade"), "--help"], env=env, cwd=tmp_path)
    for word in ("grade", "release", "similarity", "lti-passback", "regrade-request"):
        assert re.search(rf"^\s+{word}\b", r.stdout, flags=re.M), r.stdout
    course = tmp_path / "course"
    course.mkdir()
    r = subprocess.run([str(venv / "bin" / "attnlab-grade"), "similarity", str(course), "--assignment", "x"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode == 1 and "no graded submissions of x" in r.stderr, r.stdout + r.stderr
    # the students' old spelling: one line naming the command it is now, then the command's own answer
    r = subprocess.run([str(py), "-m", "attnlab_grader", "regrade-request", SET_02, "test_x", "--reason", "r",
                        "--exchange", str(tmp_path / "exchange"), "--course", "c1"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    first, *rest = r.stderr.strip().splitlines()
    assert first.startswith("attnlab-grade regrade-request is now `attnlab regrade-request`"), r.stderr
    assert r.returncode == 1 and "takes no regrade requests yet" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.slow
def test_a_non_editable_install_runs_attnlab_grade_with_its_config_solutions_and_data(tmp_path, wheels):
    # An administrator's route, cheaply: both wheels installed (no deps) into a fresh venv that borrows
    # this environment's dependencies by a path entry.
    py, site, env = _borrowing_venv(tmp_path, "venv")
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
          "--no-index", str(wheels["attnlab"]), str(wheels["attnlab-grader"])],
         env={**env, "PIP_CONFIG_FILE": os.devnull})
    env = {k: v for k, v in env.items() if not k.startswith(("ATTNLAB_SOLUTIONS", "ATTNLAB_DATA"))}
    grade = str(py.parent / "attnlab-grade")
    work = tmp_path / "elsewhere"
    work.mkdir()

    r = _run([grade, "--help"], cwd=work, env=env)
    for word in ("grade", "release", "paths", "--solutions", "ATTNLAB_SOLUTIONS"):
        assert word in r.stdout, r.stdout
    where = _run([py, "-c", "import attnlab_grader.classroom, attnlab; print(attnlab_grader.classroom.__file__); "
                  "print(attnlab.__file__)"], cwd=work, env=env).stdout.split()
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


@pytest.mark.slow
def test_the_graders_distribution_in_a_folder_of_its_own_joins_the_learners_package(tmp_path, wheels):
    """A hub's layout (scripts/ensure_hub.sh): the learner's distribution in the environment, the grader's
    installed with ``--target`` into a folder of its own; with that folder on ``PYTHONPATH`` the instructor's
    commands import, without it they do not."""
    py, site, env = _borrowing_venv(tmp_path, "venv-hub")
    offline = {**env, "PIP_CONFIG_FILE": os.devnull}
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps", "--no-index",
          str(wheels["attnlab"])], env=offline)
    gs = tmp_path / "grader-site"
    _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(gs),
          str(wheels["attnlab-grader"])], env=offline)
    assert not (gs / "attnlab_grader" / "__init__.py").exists()
    probe = [py, "-c", "import attnlab_grader.classroom.cli as c; print(c.__file__)"]
    r = subprocess.run(probe, cwd="/", env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "No module named 'attnlab_grader.classroom'" in r.stderr, r.stdout + r.stderr
    r = _run(probe, cwd="/", env={**env, "PYTHONPATH": str(gs)})
    assert Path(r.stdout.strip()).is_relative_to(gs), r.stdout
    r = _run([py, "-m", "attnlab_grader", "--help"], cwd="/", env={**env, "PYTHONPATH": str(gs)})
    assert re.search(r"^\s+regrade-queue\b", r.stdout, re.M), r.stdout
