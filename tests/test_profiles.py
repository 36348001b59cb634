"""The test profiles in the root conftest: which skips fail the run under which profile."""
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
_spec = importlib.util.spec_from_file_location("attnlab_root_conftest", ROOT_CONFTEST)
_profiles = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _profiles  # dataclasses look their module up there
_spec.loader.exec_module(_profiles)
PROFILES, required_group = _profiles.PROFILES, _profiles.required_group


def test_profiles_declare_the_sandbox_required_for_both_ci_users():
    assert "sandbox" in PROFILES["root"] and "sandbox" in PROFILES["user"]
    assert {"postgres", "hub", "e2e"} <= PROFILES["root"]


@pytest.mark.parametrize(("nodeid", "profile", "group"), [
    ("autograder/attnlab_grader/tests/test_sandbox.py::test_x", "root", "sandbox"),
    ("autograder/attnlab_grader/tests/test_sandbox.py::test_x", "user", "sandbox"),
    ("autograder/attnlab_grader/tests/test_rootless.py::test_x", "user", None),       # an ordinary user needs no switch
    ("autograder/attnlab_grader/tests/test_rootless.py::test_x", "root", "sandbox"),
    ("tests/hub/test_hub_e2e.py::test_x", "root", "hub"),
    ("tests/hub/test_hub_e2e.py::test_x", "user", None),
    ("tests/practice/test_store.py::test_x", "root", None),
    ("autograder/attnlab_grader/tests/test_sandbox.py::test_x", None, None),          # no profile: nothing required
])
def test_required_group(nodeid, profile, group):
    assert required_group(nodeid, profile) == group


def test_a_skip_in_a_required_group_fails_the_run(tmp_path):
    """Run pytest on a throwaway tree with this conftest: the same skip fails only under a profile."""
    root = tmp_path / "repo"
    (root / "tests" / "hub").mkdir(parents=True)
    (root / "conftest.py").write_text(
        ROOT_CONFTEST.read_text())
    suite = ROOT_CONFTEST.parent / "tests" / "suite_settings.py"  # the settings the conftest reads the profile from
    (root / "tests" / "suite_settings.py").write_text(suite.read_text())
    (root / "tests" / "hub" / "test_probe.py").write_text(textwrap.dedent("""
        import pytest
        def test_needs_hub():
            pytest.skip("no JupyterHub here")
    """))
    def run(profile):
        env = {"PATH": "/usr/bin:/bin", "ATTNLAB_TEST_PROFILE": profile}
        return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider",
                               "-q", "tests/hub/test_probe.py"], cwd=root, env=env,
                              capture_output=True, text=True, timeout=120)
    under_root, under_user = run("root"), run("user")
    assert under_root.returncode == 1 and "no JupyterHub here" in under_root.stdout, under_root.stdout
    assert under_user.returncode == 0 and "1 skipped" in under_user.stdout, under_user.stdout
