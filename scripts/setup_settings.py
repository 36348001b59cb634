"""The ``ATTNLAB_*`` variables the setup scripts read (``scripts/setup.sh``, ``scripts/lock.sh``,
``start.sh``), declared as data: they are shell, and run before the course environment exists.
``scripts/settings_catalog.py`` reads :data:`VARIABLES` for ``docs/settings.md`` and the tests.
"""
from __future__ import annotations

from attnlab.settings import Variable, variable

#: the setup scripts' variables
VARIABLES: tuple[Variable, ...] = (
    variable("PYTHON", "path", "first supported python3.X", "Interpreter scripts/setup.sh builds .venv with."),
    variable("TORCH_INDEX", "URL", "unset", "Extra package index holding the torch CPU wheel (setup, lock)."),
    variable("LOCK_UPGRADE", "bool", "0", "1 makes scripts/lock.sh take the newest versions, not the current pins."),
    variable("HEADLESS", "bool", "0", "1 makes start.sh set up and check without starting JupyterLab."),
    variable("ROOT_DIR", "path", "the clone", "Folder start.sh serves (same as --root-dir)."),
    variable("COURSE", "path", "autograder/course", "nbgrader course folder start.sh creates (and checks is inside "
             "the server's root)."),
    variable("EXCHANGE", "path", "unset", "nbgrader exchange folder; unset and without nbgrader's shared one, "
             "start.sh creates a private COURSE/.exchange."),
)

#: the setup scripts are shell: no Python code of theirs reads a platform variable
PLATFORM_VARIABLES: dict[str, str] = {}
