"""The instructor's setting for ``attnlab check``: which mode (:class:`SelfCheckMode`) each
exercise set may be checked in (:class:`SelfCheck`, read by :func:`load_policy` from the
system-wide nbgrader configuration only), and :class:`CheckError`."""
from __future__ import annotations

import enum
import os
import sys

from traitlets import CaselessStrEnum, Dict
from traitlets.config import Configurable

class CheckError(ValueError):
    """The notebook cannot be checked at all (missing file, unknown exercise set); the message is
    one sentence saying what was wrong and what to do."""


class SelfCheckMode(str, enum.Enum):
    """What ``attnlab check`` may do for an exercise set."""

    FULL = "full"        #: the grader's own checks, hidden trial inputs, by-hand numbers, model answers
    VISIBLE = "visible"  #: only the notebook's visible test cells; nothing hidden is used or shown
    OFF = "off"          #: self-checking switched off by the instructor


class SelfCheck(Configurable):
    """The instructor's setting for ``attnlab check`` (``c.SelfCheck.*`` in the deployment's
    nbgrader configuration; see the module docstring)."""

    default = CaselessStrEnum([m.value for m in SelfCheckMode], default_value=SelfCheckMode.FULL.value,
                              help="Mode for every exercise set not named in `assignments`: 'full', 'visible' "
                           "or 'off'.").tag(config=True)
    assignments = Dict(value_trait=CaselessStrEnum([m.value for m in SelfCheckMode]), default_value={},
                       help="Per exercise set, e.g. {'09_capstone': 'off'}; wins over `default`.").tag(config=True)

    def mode_for(self, assignment: str) -> SelfCheckMode:
        """The mode for ``assignment`` (e.g. ``"03_masks"``)."""
        return SelfCheckMode(str(self.assignments.get(assignment, self.default)).lower())


def _system_config_dirs() -> list[str]:
    """The Jupyter configuration folders only an administrator writes, lowest priority first:
    ``/etc/jupyter``-like system folders, then ``{sys.prefix}/etc/jupyter`` (the environment's)."""
    from jupyter_core.paths import ENV_CONFIG_PATH, SYSTEM_CONFIG_PATH
    return list(reversed(SYSTEM_CONFIG_PATH)) + list(reversed(ENV_CONFIG_PATH))


def load_policy(config_dirs: list[str] | None = None) -> SelfCheck:
    """The :class:`SelfCheck` setting from the ``nbgrader_config.py``/``.json`` files in
    ``config_dirs`` (default: the system-wide Jupyter configuration folders), later folders winning.

    A file that cannot be read is skipped with a note on stderr (nbgrader warns about it too); a
    mode that is not ``full``/``visible``/``off`` raises :class:`CheckError`.
    """
    from traitlets.config import Config
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader
    merged = Config()
    for folder in _system_config_dirs() if config_dirs is None else config_dirs:
        for loader, name in ((JSONFileConfigLoader, "nbgrader_config.json"),
                             (PyFileConfigLoader, "nbgrader_config.py")):
            if os.path.isfile(os.path.join(folder, name)):
                try:
                    merged.merge(loader(name, path=folder).load_config())
                except Exception as err:  # noqa: BLE001 - a broken deployment file must not stop the check
                    print(f"attnlab check: ignoring {os.path.join(folder, name)}: {err}", file=sys.stderr)
    from traitlets import TraitError
    try:
        policy = SelfCheck(config=merged)
        policy.mode_for("")
    except (TraitError, ValueError) as err:
        raise CheckError(f"the course's self-check setting (c.SelfCheck in nbgrader_config) is not valid ({err}); "
                         "ask your instructor: each mode must be 'full', 'visible' or 'off'.") from None
    return policy
