"""The repository keeps its promises: one environment description, stripped notebooks, data shipped."""
from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject_packages() -> set[str]:
    """Every distribution the two pyprojects require: attnlab's (base and extras) and the grader's
    (autograder/pyproject.toml, but attnlab itself)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"]) + [r for extra in project["optional-dependencies"].values() for r in extra]
    grader = tomllib.loads((ROOT / "autograder" / "pyproject.toml").read_text())["project"]["dependencies"]
    return {_name(r) for r in reqs + grader} - {"attnlab"}


def _environment_yml_pip_packages() -> set[str]:
    names, in_pip = set(), False
    for line in (ROOT / "environment.yml").read_text().splitlines():
        stripped = line.split("#", 1)[0].rstrip()
        if re.match(r"^\s*- pip:\s*$", stripped):
            in_pip = True
            continue
        if in_pip:
            m = re.match(r"^\s+- (.+)$", stripped)
            if not m:
                if stripped.strip():
                    in_pip = False
                continue
            item = m.group(1).strip()
            if item.startswith("-"):  # -c constraints/py3.11.txt, -e .[dev,site], -e ./autograder
                continue
            names.add(_name(item))
    return names


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints" / "py3.11.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints/py3.11.txt line {line!r} is not an exact pin (name==version)"
            pins[_name(name)] = version
    return pins


def test_environment_yml_names_the_same_packages_as_pyproject():
    assert _environment_yml_pip_packages() == _pyproject_packages()


def test_environment_yml_uses_the_constraints_and_editable_install():
    text = (ROOT / "environment.yml").read_text()
    assert "-c constraints/py3.11.txt" in text and "- -e .[dev,site]\n" in text and "- -e ./autograder\n" in text


def test_every_dependency_is_pinned_and_torch_is_the_cpu_release():
    pins = _constraints()
    missing = sorted(_pyproject_packages() - set(pins))
    assert not missing, f"pin these in constraints/py3.11.txt: {missing}"
    assert pins["torch"] == "2.13.0"


def test_committed_notebooks_have_no_outputs():
    tracked = subprocess.run(
        ["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    dirty = []
    for rel in tracked:
        nb = json.loads((ROOT / rel).read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count")):
                dirty.append(rel)
                break
    assert not dirty, f"strip outputs (nbstripout) from: {dirty}"


def test_shakespeare_is_shipped_with_its_source():
    text = (ROOT / "data" / "tinyshakespeare" / "input.txt").read_text()
    assert len(text) > 1_000_000 and text.startswith("First Citizen:")
    assert (ROOT / "data" / "README.md").exists()


def test_package_imports_from_src():
    import attnlab

    assert Path(attnlab.__file__).resolve().is_relative_to(ROOT / "src")
