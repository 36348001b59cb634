"""The learner's ``ATTNLAB_*`` settings, and the few parts every role's settings are built from.

Each role declares the environment variables it reads beside its own code:

* the learner (this package, the lesson notebooks, ``attnlab check``): :class:`CourseSettings`, here;
* the grader: ``attnlab_grader.records.settings`` (``GraderSettings``, the Slurm array's variables);
* the JupyterHub and Kubernetes recipes: ``deploy/jupyterhub/settings.py`` (declared as data: the hub's
  own environment has no attnlab, so its files read the environment directly);
* the setup scripts (``scripts/setup.sh``, ``start.sh``): ``scripts/setup_settings.py``;
* the test suite and benchmarks: ``tests/suite_settings.py`` (``SuiteSettings``).

A role's module names its variables in ``VARIABLES`` (a settings model's fields through
:func:`model_variables`, and rows made with :func:`variable` for variables only its scripts read), and
the platform's variables its Python code reads in ``PLATFORM_VARIABLES``.  A settings model is a
:class:`SettingsModel` (pydantic-settings, ``env_prefix="ATTNLAB_"``): build one from the environment,
or with a command-line flag as an override (``CourseSettings(learner="ada")``: keyword arguments beat the
environment), through :func:`build`, which turns a malformed value (``ATTNLAB_MASTERY_N=three``) into a
:class:`SettingsError` naming the variable in one sentence.

``scripts/settings_catalog.py`` gathers the roles: ``scripts/render_tables.py`` renders one table per
role into ``docs/settings.md``, and the tests (``tests/test_settings.py``,
``tests/test_environment_reads.py``) fail when a file names an ``ATTNLAB_`` variable no role declares,
when Python code reads a variable its own role does not declare, or reads an ``ATTNLAB_`` variable from
the environment directly instead of through its role's settings model.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

PREFIX = "ATTNLAB_"


@dataclass(frozen=True)
class Variable:
    """One environment variable as a role declares it: ``name`` (with the ``ATTNLAB_`` prefix), its
    ``type`` and ``default`` as a reader would write them, and a one-line ``meaning``."""

    name: str
    type: str
    default: str
    meaning: str


def setting(default: Any, type_: str, meaning: str, shown: str | None = None, **kw: Any) -> Any:
    """A settings model's field whose declaration row rides along: ``type_`` as a reader writes it, the
    ``meaning``, and the default as the table ``shown`` (else the field's default); ``kw`` goes to
    pydantic's ``Field`` (``ge=1``...)."""
    return Field(default, description=meaning, json_schema_extra={"type": type_, "shown": shown}, **kw)


def variable(name: str, type_: str, default: str, meaning: str) -> Variable:
    """A declaration row for a variable no settings model reads (a script's, the hub's): ``name``
    without the prefix."""
    return Variable(PREFIX + name, type_, default, meaning)


class SettingsModel(BaseSettings):
    """The base of every role's settings model: variables ``ATTNLAB_<FIELD>``, an empty value counts as
    unset, other variables are ignored, and a built model is read-only."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_ignore_empty=True, extra="ignore", frozen=True)


class SettingsError(ValueError):
    """An ``ATTNLAB_*`` variable holds a value of the wrong type; the message names it and the fix."""


Model = TypeVar("Model", bound=SettingsModel)


def build(model: type[Model], **overrides: Any) -> Model:
    """``model`` from the environment, ``overrides`` (command-line flags) winning.

    Raises:
        SettingsError: a variable holds a malformed value (one sentence naming it)."""
    try:
        return model(**overrides)
    except ValidationError as err:
        first = err.errors()[0]
        name = PREFIX + str(first["loc"][0]).upper() if first.get("loc") else model.__name__
        raise SettingsError(f"{name}={first.get('input')!r} is not valid ({first['msg'][0].lower()}"
                            f"{first['msg'][1:]}); set it to a valid value or unset it "
                            "(docs/settings.md lists every variable).") from None


def model_variables(model: type[BaseSettings]) -> tuple[Variable, ...]:
    """The declaration rows of ``model``'s fields, in field order."""
    out = []
    for field_name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        shown = extra.get("shown")
        if shown is None:
            d = info.default
            shown = ("1" if d else "0") if isinstance(d, bool) else str(d)
        out.append(Variable(PREFIX + field_name.upper(), str(extra.get("type")), str(shown), info.description or ""))
    return tuple(out)


class CourseSettings(SettingsModel):
    """What the course library (``attnlab``, ``attnlab check``) and the lesson notebooks read from ``ATTNLAB_*``."""

    home: Path = setting(Path("~/.attnlab"), "path", "Folder of the learner's progress store and profile.json.")
    learner: str | None = setting(None, "str", "Learner id that names the progress file and seeds by-hand numbers "
                                  "(else JUPYTERHUB_USER, profile.json, the OS user).", shown="unset")
    data: Path | None = setting(None, "path", "Folder holding tinyshakespeare/input.txt (else the packaged copy "
                                "or data/).", shown="unset")
    gate_override: bool = setting(False, "bool", "1 opens every lesson gate regardless of mastery.")
    mastery_n: int = setting(3, "int >= 1", "Correct answers in a row a skill needs to count as mastered.", ge=1)
    ci: bool = setting(False, "bool", "1 shrinks the lessons' training runs and measurements (the automated test run).")
    solutions: Path | None = setting(None, "path", "The course's solutions/ folder (grading specs, source notebooks) "
                                     "that attnlab check and the grader judge against; same as attnlab-grade "
                                     "--solutions.", shown="the clone's solutions/")

    @property
    def home_dir(self) -> Path:
        """:attr:`home` with ``~`` expanded."""
        return self.home.expanduser()

    def solutions_dir(self, repo: Path) -> Path:
        """The solutions folder: :attr:`solutions`, else ``repo/solutions`` (absolute)."""
        return Path(self.solutions or repo / "solutions").resolve()


def course_settings(**overrides: Any) -> CourseSettings:
    """:class:`CourseSettings` from the environment, ``overrides`` (command-line flags) winning.

    Raises:
        SettingsError: a variable holds a malformed value (one sentence naming it)."""
    return build(CourseSettings, **overrides)


#: the learner's variables
VARIABLES: tuple[Variable, ...] = model_variables(CourseSettings)

#: variables the platform defines (not this project) that the learner's code reads directly: name -> who
#: sets it and what the code takes from it.
PLATFORM_VARIABLES: dict[str, str] = {
    "JUPYTERHUB_USER": "JupyterHub, in each user's server: the hub user name (the learner id when "
                       "ATTNLAB_LEARNER is unset).",
    "JPY_SESSION_NAME": "Jupyter Server, in each kernel: the notebook's path (`attnlab check` finds its notebook).",
    "CPU_LIMIT": "JupyterHub's spawner, in each user's server: the CPU limit (the fast path's thread count).",
}


__all__ = ["PREFIX", "Variable", "setting", "variable", "SettingsModel", "SettingsError", "build", "model_variables",
           "CourseSettings", "course_settings", "VARIABLES", "PLATFORM_VARIABLES"]
