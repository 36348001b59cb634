"""Test profiles: the groups of tests that a profile requires to RUN, not merely to pass.

Several groups skip, saying why, where the machine lacks what they need (a sandbox mechanism,
PostgreSQL, JupyterHub, a browser).  That is right on a learner's laptop and wrong in CI: a green
run that skipped the sandbox never exercised the grader.  A profile names the groups that must run;
under it, a skip inside a required group is turned into a failure that quotes the skip's reason.

The profile comes from ``ATTNLAB_TEST_PROFILE`` (``./test.sh`` sets it when ``CI`` is set):

========  ==========================================================================
profile   required groups
========  ==========================================================================
``root``  every group below (CI runs as root, and ``./test.sh`` installs what they need;
          ``k8s`` and ``slurm`` also need a kernel with Landlock ABI 4 or later, as CI's has)
``user``  ``sandbox`` (an ordinary user with bubblewrap / user namespaces)
(unset)   none: every skip is reported, none fails
========  ==========================================================================
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

# tests/ holds the suite's own modules (suite_settings, envscan): importable from every test, the
# grader's included, whichever file pytest collects first
_TESTS = str(Path(__file__).resolve().parent / "tests")
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from suite_settings import suite_settings  # noqa: E402


@dataclass(frozen=True)
class Group:
    """A group of tests selected by node-id prefix, minus tests that may skip on this profile."""

    name: str
    prefixes: tuple[str, ...]
    #: node-id prefixes whose skips are legitimate under the given profile (profile -> prefixes)
    exempt: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def holds(self, nodeid: str, profile: str) -> bool:
        if not nodeid.startswith(self.prefixes):
            return False
        allowed = dict(self.exempt).get(profile, ())
        return not nodeid.startswith(allowed) if allowed else True


GROUPS = (
    Group("sandbox", ("autograder/attnlab_grader/tests/",),
          exempt=(("user", ("autograder/attnlab_grader/tests/test_rootless.py",      # already an ordinary user
                            "autograder/attnlab_grader/tests/test_mechanisms.py::test_root_",  # needs chown
                            "autograder/attnlab_grader/tests/test_postgres.py",
                            # makes the students' Unix accounts
                            "autograder/attnlab_grader/tests/test_grade_life.py::test_two_students_",
                            "autograder/attnlab_grader/tests/test_grade_life.py::test_a_request_the_graders_cannot_read",
                            # the hub writes the LTI launch record as root
                            "autograder/attnlab_grader/tests/test_lms.py::test_lms_launch_record_cannot_be_redirected")),)),
    Group("postgres", ("autograder/attnlab_grader/tests/test_postgres.py",)),
    Group("hub", ("tests/hub/",)),
    Group("k8s", ("tests/k8s/",)),
    Group("slurm", ("tests/slurm/",)),
    Group("e2e", ("tests/e2e/",)),
    Group("site", ("tests/site/",)),  # the course website: built, and checked in Chromium
)

PROFILES: dict[str, frozenset[str]] = {
    "root": frozenset(g.name for g in GROUPS),
    "user": frozenset({"sandbox"}),
}


def _profile() -> str | None:
    name = (suite_settings().test_profile or "").strip()
    if not name:
        return None
    if name not in PROFILES:
        raise pytest.UsageError(f"ATTNLAB_TEST_PROFILE={name!r} is not a profile; use one of "
                                f"{', '.join(sorted(PROFILES))} or leave it unset")
    return name


def required_group(nodeid: str, profile: str | None) -> str | None:
    """The name of the required group that ``nodeid`` belongs to under ``profile``, or None."""
    if profile is None:
        return None
    for group in GROUPS:
        if group.name in PROFILES[profile] and group.holds(nodeid, profile):
            return group.name
    return None


def pytest_configure(config):
    config.attnlab_profile = _profile()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    group = required_group(report.nodeid, item.config.attnlab_profile)
    if group is None:
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = (f"required group {group!r} skipped under test profile "
                       f"{item.config.attnlab_profile!r}: {reason}")
