"""Every environment variable the project's Python code reads is declared by the role whose code reads it
(or is a platform variable that role lists; scripts/settings_catalog.py gathers the roles), ``ATTNLAB_*``
ones are read through the role's settings model, and
no code outside the tests writes the process environment (the sandbox child setting its own is the
one exception).  The scan covers all project code: the package, the grader, the hub recipes, scripts,
benchmarks, lesson and solution sources, the nbgrader configs and the tests."""
from __future__ import annotations

import subprocess
import tempfile
import uuid
from pathlib import Path

from envscan import ENV_WRITERS_ALLOWED, environment_reads, problems, project_files, settings_catalog

from attnlab.settings import PREFIX

ROOT = Path(__file__).resolve().parents[1]

#: the areas of project code the scan must see (a file list missing one of them is a broken scan)
AREAS = ("src/", "autograder/attnlab_grader/", "deploy/", "scripts/", "benchmarks/", "lessons/src/", "solutions/",
         "nbgrader_config.py", "conftest.py", "tests/")


def test_every_environment_read_is_declared_and_attnlab_ones_go_through_the_settings():
    found = problems(ROOT, writes=False)  # writes: tests/test_no_environ_writes.py
    assert not found, "\n".join(found)


def test_every_listed_platform_variable_is_read_by_its_roles_code():
    read: dict[str, set[str]] = {}
    for rel in project_files(ROOT):
        names = {r.name for r in environment_reads((ROOT / rel).read_text(encoding="utf-8"))}
        read.setdefault(settings_catalog.role_of(rel).name, set()).update(n for n in names if n)
    for role in settings_catalog.ROLES:
        stale = sorted(set(settings_catalog.platform_variables(role)) - read.get(role.name, set()))
        assert not stale, f"PLATFORM_VARIABLES of {role.home} lists {stale}, which no code of the {role.name} reads"


def test_every_listed_direct_reader_reads_an_attnlab_variable():
    idle = [f for f in settings_catalog.direct_readers() if not any(
        (r.name or "").startswith(PREFIX) for r in environment_reads((ROOT / f).read_text(encoding="utf-8")))]
    assert not idle, f"DIRECT_READERS lists {idle}, which read no {PREFIX}* variable; remove them"


def test_the_scan_sees_every_area_of_the_project():
    files = project_files(ROOT)
    missing = [a for a in AREAS if not any(f == a or f.startswith(a) for f in files)]
    assert not missing, f"the scan sees no Python file in {missing}"
    assert any(f.endswith(".pct.py") for f in files) and any(f.endswith("grading.py") for f in files)
    assert set(settings_catalog.direct_readers()) | ENV_WRITERS_ALLOWED <= set(files), \
        "an allow-listed file no longer exists"


def test_read_detector_finds_every_form_and_nothing_else():
    src = """import os
from os import environ, getenv
a = os.environ["A"]
b = os.environ.get("B", "")
c = os.getenv("C")
d = environ.get("D")
e = getenv("E")
f = "F" in os.environ or "G" not in environ
_env = os.environ.get
h = _env("H")
def cfg(c, env=os.environ):
    return env["I"], env.get("J")
def pol(environ=None):
    environ = os.environ if environ is None else environ
    return environ.get("K")
NEED = ["L", "M"]
missing = [k for k in NEED if not os.environ.get(k)]
passed = {k: os.environ[k] for k in ("N",)}
for name in names():
    os.environ.get(name)
assert os.environ["O"] == "1"
child = dict(os.environ, P="1")
child["Q"] = "1"
copy = os.environ.copy()
copy.get("R")
items = [k for k, v in os.environ.items() if k.startswith("S")]
os.environ["T"] = "1"
%env U=1
opt = click.option("--v", envvar="V", show_envvar=True)
cli(auto_envvar_prefix="W")
"""
    got = [(r.name, r.line, r.in_assert) for r in environment_reads(src)]
    assert [r.default for r in environment_reads(src)][:2] == [None, ""]
    assert got == [("A", 3, False), ("B", 4, False), ("C", 5, False), ("D", 6, False), ("E", 7, False),
                   ("F", 8, False), ("G", 8, False), ("H", 10, False), ("I", 12, False), ("J", 12, False),
                   ("K", 15, False), ("L", 17, False), ("M", 17, False), ("N", 18, False), (None, 20, False),
                   ("O", 21, True), ("V", 29, False), (None, 30, False)]


def test_the_scan_fails_naming_file_line_and_variable():
    """The test of the test: a project (a temporary git repository, private and removed afterwards,
    pass or fail) with one file per kind of mistake in each area; the scan names each, and nothing else."""
    tag = uuid.uuid4().hex[:8].upper()
    undeclared, other = f"{PREFIX}NOT_DECLARED_{tag}", f"PROJECT_KNOB_{tag}"
    files = {
        "src/attnlab/x.py": f'import os\nA = os.environ.get("{undeclared}")\nB = os.getenv("{PREFIX}CI")\n',
        "autograder/y.py": f'from os import environ\nif "{other}" in environ:\n    pass\n',
        "deploy/jupyterhub/jupyterhub_config.py": f'import os\nX = os.environ["{PREFIX}HUB_PORT"]\n'
                                                  f'Y = os.environ.get("{undeclared}")\n'
                                                  f'Z = os.environ.get("{PREFIX}CULL_TIMEOUT", "60")\n'
                                                  f'W = os.environ.get("{PREFIX}INSTRUCTORS", "")\n',
        "deploy/jupyterhub/attnlab_lti.py": 'import os\nimport attnlab.nn\n',
        "scripts/z.py": 'import os\nos.environ["MPLBACKEND"] = "Agg"\nP = os.environ["PATH"]\n',
        "benchmarks/b.py": f'import os\nget = os.environ.get\nV = get("{PREFIX}HUB_PORT")\n',
        "lessons/src/01_x.py": f'# %%\n%matplotlib inline\nimport os\nCI = os.environ.get("{PREFIX}CI") == "1"\n',
        "solutions/01_x/x.pct.py": 'import os\nK = {k: os.environ[k] for k in ("JUPYTERHUB_USER", "HOME")}\n',
        "solutions/01_x/grading.py": 'import os\ndef f(env=os.environ, k="A"):\n    return env[k]\n',
        "nbgrader_config.py": f'import os\nif os.environ.get("{PREFIX}SANDBOX"):\n    pass\n',
        "conftest.py": f'import os\nP = os.environ.get("{PREFIX}TEST_PROFILE")\n',
        "tests/test_t.py": f'import os\nos.environ["X"] = "1"\nassert os.environ["{PREFIX}LEARNER"] == "a"\n',
        "autograder/attnlab_grader/sandbox/zygote.py": 'import os\nos.environ.update({"HOME": "/tmp"})\n',
    }
    with tempfile.TemporaryDirectory(prefix="attnlab-envscan-") as tmp:  # mode 0700
        project = Path(tmp)
        for rel, text in files.items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(text, encoding="utf-8")
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        subprocess.run(["git", "add", "src", "deploy"], cwd=project, check=True)  # tracked and untracked both seen
        got = problems(project)
    assert not Path(tmp).exists()
    expected = [
        f"autograder/y.py:2: {other} is neither declared",
        "benchmarks/b.py:3: ATTNLAB_HUB_PORT is neither declared by the tests (this file's role) in "
        "tests/suite_settings.py nor listed in its PLATFORM_VARIABLES; declare it there (declared by: hub)",
        "conftest.py:2: ATTNLAB_TEST_PROFILE is read from the environment directly; read it through its settings "
        "model (SuiteSettings.test_profile in tests/suite_settings.py)",
        "deploy/jupyterhub/attnlab_lti.py:2: imports attnlab, so it is no longer a direct reader",
        f"deploy/jupyterhub/jupyterhub_config.py:3: {undeclared} is neither declared",
        "deploy/jupyterhub/jupyterhub_config.py:4: ATTNLAB_CULL_TIMEOUT defaults to '60' here but to '3600'",
        "lessons/src/01_x.py:4: ATTNLAB_CI is read from the environment directly; read it through its settings "
        "model (CourseSettings.ci in src/attnlab/settings.py)",
        "nbgrader_config.py:2: ATTNLAB_SANDBOX is declared as not a setting",
        "scripts/z.py:3: PATH is neither declared by the setup (this file's role)",  # the tests' platform variable
        "scripts/z.py:2: writes os.environ",
        "solutions/01_x/grading.py:3: reads an environment variable whose name is computed",
        "solutions/01_x/x.pct.py:2: HOME is neither declared",
        f"src/attnlab/x.py:2: {undeclared} is neither declared",
        "src/attnlab/x.py:3: ATTNLAB_CI is read from the environment directly; read it through its settings model",
    ]
    assert len(got) == len(expected), "\n".join(got)
    for line, want in zip(got, expected):
        assert line.startswith(want), f"{line!r} does not start with {want!r}"
