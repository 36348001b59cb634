"""The test suite's ``ATTNLAB_*`` settings: what ``conftest.py``, ``tests/`` and
``autograder/attnlab_grader/tests/`` read (the root ``conftest.py`` puts this folder on ``sys.path``, so
every test imports it as ``suite_settings``).  How many pytest-xdist workers run is pytest's own ``-n``
(``./test.sh -n 4``), not a variable.  ``scripts/settings_catalog.py`` reads :data:`VARIABLES` for
``docs/settings.md``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from attnlab.settings import SettingsModel, Variable, build, model_variables, setting


class SuiteSettings(SettingsModel):
    """What the test suite (``conftest.py``, ``tests/``, ``autograder/attnlab_grader/tests/``) reads from ``ATTNLAB_*``."""

    test_profile: str | None = setting(None, "str", "Test profile whose required groups must not skip (root or user).",
                                       shown="unset (CI: root or user)")
    test_mechanisms: str = setting("", "comma list", "Sandbox mechanisms the sandbox tests exercise.",
                                   shown="every available")
    stability_draws: int = setting(5, "int >= 1", "Draws per case and check in the verdict-stability test.", ge=1)
    stability_slow_draws: int = setting(0, "int >= 0", "Draws of set 09's training-run check in that test.", ge=0)
    chromium: Path = setting(Path("/usr/bin/chromium"), "path", "Browser the end-to-end tests drive.")
    hub_home: Path = setting(Path("/opt/attnlab-hub"), "path", "Folder of the hub and course environments "
                             "(scripts/ensure_hub.sh builds them; the hub test uses them).")

    @property
    def mechanisms(self) -> tuple[str, ...]:
        """:attr:`test_mechanisms` split at commas (empty: every available mechanism)."""
        return tuple(m.strip() for m in self.test_mechanisms.split(",") if m.strip())


def suite_settings(**overrides: Any) -> SuiteSettings:
    """:class:`SuiteSettings` from the environment, ``overrides`` winning.

    Raises:
        attnlab.settings.SettingsError: a variable holds a malformed value (one sentence naming it)."""
    return build(SuiteSettings, **overrides)


#: the test suite's variables
VARIABLES: tuple[Variable, ...] = model_variables(SuiteSettings)

#: variables the platform defines that the tests and benchmarks read directly
PLATFORM_VARIABLES: dict[str, str] = {
    "PATH": "The operating system: tests and benchmarks put the running environment's bin/ first for a child.",
}
