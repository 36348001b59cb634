"""Choosing the sandbox mechanism, refusing clearly, cgroup reporting, and root leaving nothing root-owned.

Fast tests: no sandbox is started here (``test_sandbox.py`` and ``test_rootless.py`` do that).
"""
from __future__ import annotations

import os

import pytest

from attnlab_grader import sandbox
from attnlab_grader.classroom.pipeline import give_back_to_owner


@pytest.fixture
def probes(monkeypatch):
    """Replace the probes: ``probes(root=..., userns=..., bwrap=...)`` (None = works)."""
    def set_(**reasons):
        monkeypatch.setattr(sandbox, "_probe", lambda m: reasons.get(m))
        sandbox.mechanism_support.cache_clear()
    yield set_
    sandbox.mechanism_support.cache_clear()


def test_strongest_working_mechanism_is_chosen(probes, monkeypatch):
    monkeypatch.setenv("ATTNLAB_SANDBOX", "bwrap")  # environment variables are not settings
    probes(root="not running as root")
    assert sandbox.choose_mechanism() == "userns"
    probes(root="not running as root", userns="Operation not permitted")
    assert sandbox.choose_mechanism() == "bwrap"
    probes()
    assert sandbox.choose_mechanism() == "root"


def test_refuses_in_one_sentence_naming_what_to_enable(probes):
    probes(root="not running as root", userns="unshare failed: Operation not permitted",
           bwrap="bubblewrap is not installed")
    with pytest.raises(sandbox.SandboxUnavailable) as err:
        sandbox.choose_mechanism()
    msg = str(err.value)
    for needle in ("kernel.unprivileged_userns_clone=1", "apt-get install bubblewrap", "as root",
                   "bubblewrap is not installed", "Operation not permitted"):
        assert needle in msg, needle
    assert msg.count(". ") == 0 and msg.endswith(".")
    assert sandbox.sandbox_support() == msg


def test_a_pinned_mechanism_is_used_or_refused(probes):
    probes(bwrap="bubblewrap is not installed")
    assert sandbox.choose_mechanism("userns") == "userns"
    with pytest.raises(sandbox.SandboxUnavailable, match="bubblewrap is not installed"):
        sandbox.choose_mechanism("bwrap")
    with pytest.raises(ValueError, match="unknown sandbox mechanism 'chroot'"):
        sandbox.choose_mechanism("chroot")


def test_sandbox_settings_are_traitlets_not_environment(monkeypatch):
    """Slot, hidden paths and mechanism come from nbgrader's config (pipeline: one slot per worker)."""
    from attnlab_grader.records.course import load_config
    from attnlab_grader.steps.sandbox_grade import SandboxGrade
    monkeypatch.setenv("ATTNLAB_GRADER_SLOT", "9")
    cfg = load_config("/tmp/course", slot=3, mechanism="userns")
    cfg.SandboxGrade.hidden_paths = ["/srv/secret"]
    pre = SandboxGrade(config=cfg)
    assert (pre.slot, pre.mechanism, pre.hidden_paths) == (3, "userns", ["/srv/secret"])
    assert SandboxGrade().slot == 0 and SandboxGrade().mechanism == ""
    with pytest.raises(Exception, match="mechanism"):
        SandboxGrade(mechanism="chroot")


def test_bwrap_view_hides_the_course_but_keeps_a_venv_inside_it():
    course = "/usr/share/attnlab-course"  # under a visible top-level directory
    venv = f"{course}/.venv"
    cmd = sandbox._wrap("bwrap", ["python"], hide=[course], keep=[venv])
    tmpfs = [i for i, a in enumerate(cmd) if a == "--tmpfs" and cmd[i + 1] == course]
    keep = [i for i, a in enumerate(cmd) if a == "--ro-bind" and cmd[i + 1] == venv]
    if os.path.isdir(venv):  # only existing folders are bound
        assert tmpfs and keep and tmpfs[0] < keep[0]
    assert "--unshare-all" in cmd and "--die-with-parent" in cmd
    assert cmd[cmd.index("--") + 1:] == ["python"]
    for top in ("/data", "/root", "/home", "/tmp/x"):
        assert top not in cmd


def test_cgroup_limit_is_reported_either_way():
    path, why = sandbox.worker_cgroup(slot=15, mem_mb=64)
    try:
        assert (path is None) == bool(why)
        if path:
            assert open(os.path.join(path, "memory.max")).read().strip() == str(64 * 2**20)
            assert open(os.path.join(path, "pids.max")).read().strip() == str(sandbox.CGROUP_PIDS)
        else:
            assert "cgroup" in why
    finally:
        if path:
            os.rmdir(path)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown)")
def test_root_hands_the_course_back_to_its_owner(tmp_path):
    course = tmp_path / "course"
    (course / "feedback" / "s").mkdir(parents=True)
    (course / "feedback" / "s" / "a.html").write_text("x")
    (course / "gradebook.db").write_text("x")
    outside = tmp_path / "outside.txt"
    outside.write_text("root's own")
    os.symlink(outside, course / "link")
    csv = tmp_path / "grades.csv"
    csv.write_text("x")
    os.chown(course, 65534, 65534)
    give_back_to_owner(course, [csv])
    for p in [course, *course.rglob("*")]:
        assert p.lstat().st_uid == 65534, p
    assert outside.stat().st_uid == 0  # the link was not followed
    assert csv.stat().st_uid == 65534
