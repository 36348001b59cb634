"""scripts/setup.sh takes the resolver-made lock of the interpreter it uses, refuses one it has no lock
for in one sentence, and works for an ordinary user with Debian's own python3."""
from __future__ import annotations

import os
import pwd
import re
import shutil
import stat
import secrets
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]
LOCKS = sorted((ROOT / "constraints").glob("py*.txt"))
LOCKED = [p.stem[2:] for p in LOCKS]  # ["3.11"]
TEST_USER_PREFIX = "attnlab-setup-"  # + a random suffix: an account unique to the run, removed after


def _mini_repo(tmp: Path) -> Path:
    """The files setup.sh reads before it creates .venv: enough to test its choice of interpreter."""
    repo = tmp / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", repo / "scripts")
    shutil.copytree(ROOT / "constraints", repo / "constraints")
    shutil.copy(ROOT / "pyproject.toml", repo)
    return repo


def _fake_python(path: Path, version: str) -> Path:
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _assert_one_sentence(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got:\n{stderr}"
    line = lines[0]
    assert line.startswith("attnlab setup: ") and line.endswith(".")
    assert not re.search(r"[.!?] [A-Z]", line), f"more than one sentence: {line}"
    return line


def test_every_claimed_python_has_a_lock_and_the_claims_agree():
    assert LOCKED, "no constraints/py*.txt"
    spec = SpecifierSet(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"])
    for minor in range(8, 16):
        v = f"3.{minor}"
        assert (f"{v}.0" in spec) == (v in LOCKED), f"requires-python {spec} vs locks {LOCKED} on {v}"
    env = (ROOT / "environment.yml").read_text()
    conda_py = re.search(r"^\s*- python=(\S+)", env, re.M).group(1)
    assert conda_py in LOCKED and f"-c constraints/py{conda_py}.txt" in env
    readme = (ROOT / "README.md").read_text()
    quickstart = readme.split("## The course")[0]
    claimed = "/".join(LOCKED)
    assert f"Python {claimed}" in quickstart
    for v in ("3.10", "3.12", "3.13"):
        if v not in LOCKED:
            assert not re.search(rf"Python[^.\n]*{re.escape(v)}", quickstart), f"README still claims {v}"
    for lock in LOCKS:
        text = lock.read_text()
        assert "bash scripts/lock.sh" in text, f"{lock.name} does not say how to regenerate it"
        assert re.search(r"^torch==2\.13\.0$", text, re.M), f"{lock.name} must pin torch==2.13.0"


@pytest.mark.parametrize("version, reason", [("3.9.18", "is too old"), ("3.12.1", "is not supported"),
                                             ("3.13.0", "is not supported")])
def test_an_interpreter_without_a_lock_is_refused_in_one_sentence(tmp_path, version, reason):
    if version[:4] in LOCKED:
        pytest.skip(f"{version} has a lock now")
    repo = _mini_repo(tmp_path)
    fake = _fake_python(tmp_path / "python", version)
    r = subprocess.run([shutil.which("bash"), str(repo / "scripts" / "setup.sh")], capture_output=True, text=True,
                       env={**os.environ, "ATTNLAB_PYTHON": str(fake)}, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    line = _assert_one_sentence(r.stderr)
    assert f"Python {version} ({fake}) {reason}" in line
    assert f"Python {'/'.join(LOCKED)}" in line and "ATTNLAB_PYTHON" in line
    assert not (repo / ".venv").exists()


def test_no_supported_python_on_path_names_what_was_found(tmp_path):
    repo = _mini_repo(tmp_path)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("cat", "cut", "dirname", "grep", "head", "ls", "paste", "sed", "sha256sum", "sort", "tr"):
        (bindir / tool).symlink_to(shutil.which(tool))
    _fake_python(bindir / "python3", "3.12.1")
    r = subprocess.run([shutil.which("bash"), str(repo / "scripts" / "setup.sh")], capture_output=True, text=True,
                       env={"PATH": str(bindir), "HOME": str(tmp_path)}, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    line = _assert_one_sentence(r.stderr)
    assert f"no Python {'/'.join(LOCKED)} found (found: python3 3.12.1)" in line


def _pip_settings() -> dict[str, str]:
    """This machine's pip configuration (find-links to the torch CPU wheel, extra indexes) as PIP_*
    variables, so the test user sees what an administrator's /etc/pip.conf would give every user."""
    env = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
    out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"^[^.]*\.([\w-]+)='(.*)'$", line)
        if m:
            env.setdefault("PIP_" + m.group(1).upper().replace("-", "_"), m.group(2))
    return env


def _ordinary_user() -> tuple[str, list[str]]:
    """(name, command prefix) of a non-root user: this one, or, when we are root, a new account whose
    name is unique to the run (the caller removes it with :func:`_remove_user`, pass or fail)."""
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid()).pw_name, []
    if not shutil.which("runuser") or not shutil.which("useradd"):
        pytest.skip("running as root without runuser/useradd: cannot become an ordinary user")
    user = TEST_USER_PREFIX + secrets.token_hex(3)
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", user], check=True)
    return user, ["runuser", "-u", user, "--"]


def _remove_user(user: str, become: list[str]) -> None:
    if become:  # an account this run made
        subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
        subprocess.run(["userdel", "--remove", user], capture_output=True)


@pytest.mark.slow
def test_debian_python3_as_an_ordinary_user_resolves_its_lock():
    """The whole route of `./start.sh` up to installing: Debian's /usr/bin/python3 (3.11.2 on Debian 12),
    a clone owned by an ordinary user, .venv created, and pip resolving the lock with the torch CPU
    build and none of the grader's extra (`setup.sh --dry-run`; a full install takes minutes and is left
    to the README's own commands)."""
    system_py = Path("/usr/bin/python3")
    if not system_py.exists():
        pytest.skip("no /usr/bin/python3 on this machine")
    version = subprocess.run([system_py, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                             capture_output=True, text=True).stdout.strip()
    if version.rsplit(".", 1)[0] not in LOCKED:
        pytest.skip(f"/usr/bin/python3 is {version}; locks: {LOCKED} (the refusal is tested above)")
    user, become = _ordinary_user()
    home = Path(pwd.getpwnam(user).pw_dir)
    work = Path(tempfile.mkdtemp(prefix="attnlab-setup-", dir="/tmp"))
    try:
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split("\n")
        clone = work / "attnlab"
        for rel in filter(None, files):
            src = ROOT / rel
            if src.is_file():
                (clone / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, clone / rel)
        if become:
            shutil.chown(work, user)
            subprocess.run(["chown", "-R", user, str(work)], check=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "USER": user,
               "ATTNLAB_PYTHON": str(system_py), **_pip_settings()}
        r = subprocess.run([*become, "env", "-i", *[f"{k}={v}" for k, v in env.items()],
                            "bash", "scripts/setup.sh", "--dry-run"],
                           cwd=clone, capture_output=True, text=True, timeout=420)
        out = r.stdout + r.stderr
        assert r.returncode == 0, out[-4000:]
        assert f"creating .venv with Python {version} ({system_py})" in out
        assert f"resolving constraints/py{version.rsplit('.', 1)[0]}.txt + torch==2.13.0+cpu" in out
        would = next(line for line in out.splitlines() if line.startswith("Would install"))
        assert " torch-2.13.0+cpu " in would + " " and " nbgrader-0.9.6 " in would + " "
        assert not re.search(r"\bnvidia-", would), "the CUDA build of torch was chosen"
        # a learner's route (start.sh): none of what only grading needs (pyproject.toml's [grader] extra)
        grader_only = re.findall(r"(?i)\b(psycopg|copydetect|pylti1p3|pyjwt)-\d", would)
        assert not grader_only, f"the learner's install resolves grader-only packages: {grader_only}"
        venv_owner = (clone / ".venv").stat().st_uid
        assert venv_owner == pwd.getpwnam(user).pw_uid
    finally:
        shutil.rmtree(work, ignore_errors=True)
        _remove_user(user, become)
