"""Every ATTNLAB_* variable is declared by the roles that read it (the learner's src/attnlab/settings.py, the
grader's attnlab_grader/records/settings.py, the hub's deploy/jupyterhub/settings.py, the setup scripts' and
the test suite's; gathered by scripts/settings_catalog.py), listed in docs/settings.md, and used."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from attnlab.settings import PREFIX, CourseSettings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import render_tables  # noqa: E402
import settings_catalog  # noqa: E402

NAME = re.compile(PREFIX + r"[A-Z0-9_]*")
#: where the declarations themselves live (a name found only here is used nowhere)
HOMES = settings_catalog.homes()


def _tracked() -> dict[str, str]:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True,
                           text=True).stdout.split("\0")
    out = {}
    for rel in filter(None, files):
        path = ROOT / rel
        if path.is_file() and not path.is_symlink():
            out[rel] = path.read_text(encoding="utf-8", errors="ignore")
    return out


def _is_test(rel: str) -> bool:
    return rel.startswith("tests/") or "/tests/" in rel or rel in {"conftest.py", "test.sh"}


def problems(files: dict[str, str], declared: set[str], ignored: set[str]) -> list[str]:
    """What is wrong with the ``ATTNLAB_`` names in ``files`` ({path: text}): names read or set that
    are not declared, ignored names outside the tests, declared names that nothing uses."""
    out, used = [], set()
    known = declared | ignored
    for rel, text in files.items():
        for lineno, line in enumerate(text.splitlines(), 1):
            for m in NAME.finditer(line):
                name = m.group()
                if name.endswith("_"):  # a prefix (``ATTNLAB_LTI_*``, startswith("ATTNLAB_"))
                    if not any(k.startswith(name) for k in known):
                        out.append(f"{rel}:{lineno}: prefix {name} matches no declared variable")
                    continue
                if name not in known:
                    out.append(f"{rel}:{lineno}: {name} is not declared by any role (scripts/settings_catalog.py)")
                elif name in ignored and not _is_test(rel) and rel not in HOMES:
                    out.append(f"{rel}:{lineno}: {name} is declared as not a setting, yet read here")
                if rel not in HOMES:
                    used.add(name)
    out += [f"{name} is declared but no file reads or sets it; remove its declaration"
            for name in sorted(declared - used)]
    return out


def test_every_attnlab_variable_in_the_repository_is_declared_and_every_declared_one_used():
    names = set(settings_catalog.declarations())
    found = problems(_tracked(), names, set(settings_catalog.ignored()))
    assert not found, "\n".join(found)


def test_the_roles_declarations_agree_and_each_lives_with_its_code():
    assert not settings_catalog.problems()
    homes = {r.name: r.home for r in settings_catalog.ROLES}
    assert homes["learner"] == "src/attnlab/settings.py" and homes["grader"].startswith("autograder/")
    assert homes["hub"].startswith("deploy/") and homes["tests"].startswith("tests/")
    assert all(settings_catalog.role_of(home).name == name for name, home in homes.items())
    learner = {v.name for v in settings_catalog.BY_NAME["learner"].load().VARIABLES}
    # the learner's library declares only what the course library, the lessons and attnlab check read
    assert learner == {PREFIX + n for n in ("HOME", "LEARNER", "DATA", "GATE_OVERRIDE", "MASTERY_N", "CI",
                                            "SOLUTIONS")}
    import attnlab.settings as library
    assert not {"GraderSettings", "SuiteSettings", "grader_settings", "suite_settings"} & set(vars(library))


def test_the_scan_reports_an_undeclared_name_an_unused_one_and_an_ignored_one_read():
    new, old, gone = PREFIX + "NEW_KNOB", PREFIX + "OLD", PREFIX + "SANDBOX"
    files = {"src/x.py": f'os.environ.get("{new}")\nos.environ["{gone}"]\n',
             "tests/test_x.py": f'monkeypatch.setenv("{gone}", "1")  # {PREFIX}LTI_*\n',
             "deploy/hub.py": f'env["{PREFIX}LTI_ISSUER"]\n'}
    got = problems(files, {old, PREFIX + "LTI_ISSUER"}, {gone})
    assert got == [f"src/x.py:1: {new} is not declared by any role (scripts/settings_catalog.py)",
                   f"src/x.py:2: {gone} is declared as not a setting, yet read here",
                   f"{old} is declared but no file reads or sets it; remove its declaration"]


def test_docs_settings_table_is_generated_from_the_declarations():
    table = render_tables.TABLES["settings"]
    doc = (ROOT / table.path).read_text(encoding="utf-8")
    fresh = table.splice(doc, table.render())
    assert fresh == doc, f"docs/settings.md is stale; run `{render_tables.COMMAND}`"
    for name, by_role in settings_catalog.declarations().items():
        assert f"`{name}`" in doc and all(v.meaning and v.type and v.default for v in by_role.values())
    for role in settings_catalog.ROLES:  # one table per role
        assert f"## {role.name}\n" in doc and f"`{role.home}`" in doc


def test_settings_read_the_environment_and_a_flag_overrides_it(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNLAB_MASTERY_N", "5")
    monkeypatch.setenv("ATTNLAB_GATE_OVERRIDE", "1")
    monkeypatch.setenv("ATTNLAB_LEARNER", "env-learner")
    monkeypatch.setenv("ATTNLAB_DATA", "")  # empty counts as unset
    s = CourseSettings()
    assert (s.mastery_n, s.gate_override, s.learner, s.data) == (5, True, "env-learner", None)
    assert CourseSettings(learner="flag-learner").learner == "flag-learner"
    monkeypatch.setenv("ATTNLAB_SOLUTIONS", str(tmp_path))
    assert CourseSettings().solutions_dir(ROOT) == tmp_path.resolve()
    assert CourseSettings(solutions=None).solutions_dir(ROOT) == (ROOT / "solutions").resolve()
    from attnlab_grader.records.course import solutions_dir  # the grader reads the learner's setting
    assert solutions_dir() == tmp_path.resolve() and solutions_dir(ROOT) == ROOT.resolve()


def test_a_malformed_value_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv("ATTNLAB_MASTERY_N", "three")
    with pytest.raises(ValidationError, match="mastery_n"):
        CourseSettings()
    monkeypatch.setenv("ATTNLAB_MASTERY_N", "0")
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        CourseSettings()


def test_library_reads_go_through_the_settings_and_a_bad_value_is_one_sentence(monkeypatch, tmp_path):
    from attnlab.practice import mastery, seeding
    from attnlab.settings import SettingsError
    from attnlab.training import is_ci
    monkeypatch.setenv("ATTNLAB_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("ATTNLAB_CI", "true")
    monkeypatch.setenv("ATTNLAB_MASTERY_N", "4")
    assert (seeding.attnlab_home(), is_ci(), mastery.mastery_threshold()) == (tmp_path / "h", True, 4)
    monkeypatch.setenv("ATTNLAB_MASTERY_N", "three")
    with pytest.raises(SettingsError) as err:
        mastery.mastery_threshold()
    assert str(err.value).startswith("ATTNLAB_MASTERY_N='three' is not valid") and str(err.value).count(". ") == 0


def test_suite_settings_split_the_mechanisms_and_refuse_a_bad_count(monkeypatch):
    from suite_settings import suite_settings

    from attnlab.settings import SettingsError
    monkeypatch.setenv("ATTNLAB_TEST_MECHANISMS", " root, ,bwrap")
    monkeypatch.setenv("ATTNLAB_STABILITY_DRAWS", "7")
    s = suite_settings()
    assert (s.mechanisms, s.stability_draws, s.stability_slow_draws) == (("root", "bwrap"), 7, 0)
    monkeypatch.setenv("ATTNLAB_TEST_MECHANISMS", "")
    assert suite_settings().mechanisms == ()  # empty: every available mechanism
    monkeypatch.setenv("ATTNLAB_STABILITY_SLOW_DRAWS", "-1")
    with pytest.raises(SettingsError, match="^ATTNLAB_STABILITY_SLOW_DRAWS='-1' is not valid"):
        suite_settings()


def test_a_click_default_reads_the_grader_setting_when_the_command_runs(monkeypatch):
    from attnlab_grader.records.settings import grader_default
    db = grader_default("db")  # defined at import time of a command line, before the variable is set
    monkeypatch.setenv("ATTNLAB_DB", "sqlite:///later.db")
    assert db() == "sqlite:///later.db"
    monkeypatch.setenv("ATTNLAB_DB", "")
    assert db() is None  # empty counts as unset, as for every setting
    with pytest.raises(ValueError, match="'dbb' is not a GraderSettings field"):
        grader_default("dbb")
