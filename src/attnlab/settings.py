"""Every ``ATTNLAB_*`` environment variable, declared once, typed.

Two kinds live here:

* :class:`CourseSettings` and :class:`GraderSettings` are the settings Python code of this package
  and of the grader reads at run time. They are pydantic-settings models (``env_prefix="ATTNLAB_"``):
  build one from the environment (``CourseSettings()``), or with a command-line flag as an override
  (``CourseSettings(learner="ada")``: keyword arguments beat the environment), and pass it to what
  needs it. :func:`course_settings` and :func:`grader_settings` build them and turn a malformed
  value (``ATTNLAB_MASTERY_N=three``) into a :class:`SettingsError` naming the variable in one sentence.
* :data:`OTHER_VARIABLES` declares, as data, the variables read elsewhere: by the shell scripts
  (setup, ``start.sh``), the JupyterHub and Kubernetes recipes (``deploy/``), and the test suite.

:func:`variables` joins both into one sorted list; ``scripts/render_tables.py`` renders it
into ``docs/settings.md`` and ``tests/test_settings.py`` fails when any file of the repository reads
or sets an ``ATTNLAB_`` name this module does not declare, when a declared name is used nowhere, and
when the table is stale.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

PREFIX = "ATTNLAB_"

#: who reads a variable: the course library and notebooks, the grader (``autograder``, the nbgrader
#: configs), the JupyterHub / Kubernetes recipes, the setup scripts, the test suite.
Reader = Literal["course", "grader", "hub", "setup", "tests"]


@dataclass(frozen=True)
class Variable:
    """One environment variable: ``name`` (with the ``ATTNLAB_`` prefix), its ``type`` and
    ``default`` as a reader would write them, who reads it (``readers``) and a one-line ``meaning``."""

    name: str
    type: str
    default: str
    readers: tuple[Reader, ...]
    meaning: str


def _field(default, type_: str, readers: tuple[Reader, ...], meaning: str, shown: str | None = None, **kw):
    """A settings field whose declaration row (type as written, readers, default as shown) rides along."""
    return Field(default, description=meaning,
                 json_schema_extra={"type": type_, "readers": list(readers), "shown": shown}, **kw)


class _Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=PREFIX, env_ignore_empty=True, extra="ignore", frozen=True)


class CourseSettings(_Settings):
    """What the course library (``attnlab``) and the lesson notebooks read from ``ATTNLAB_*``."""

    home: Path = _field(Path("~/.attnlab"), "path", ("course",),
                        "Folder of the learner's progress store and profile.json.")
    learner: str | None = _field(None, "str", ("course", "hub"),
                                 "Learner id that names the progress file and seeds by-hand numbers "
                                 "(else JUPYTERHUB_USER, profile.json, the OS user).", shown="unset")
    data: Path | None = _field(None, "path", ("course",),
                               "Folder holding tinyshakespeare/input.txt (else the packaged copy or data/).",
                               shown="unset")
    gate_override: bool = _field(False, "bool", ("course",), "1 opens every lesson gate regardless of mastery.")
    mastery_n: int = _field(3, "int >= 1", ("course",),
                            "Correct answers in a row a skill needs to count as mastered.", ge=1)
    ci: bool = _field(False, "bool", ("course", "tests"),
                      "1 shrinks the lessons' training runs and measurements (the automated test run).")

    @property
    def home_dir(self) -> Path:
        """:attr:`home` with ``~`` expanded."""
        return self.home.expanduser()


class GraderSettings(_Settings):
    """What the grader (``autograder``, the course's ``nbgrader_config.py``) reads from ``ATTNLAB_*``."""

    solutions: Path | None = _field(None, "path", ("grader",),
                                    "The course's solutions/ folder (grading specs, source notebooks); "
                                    "same as attnlab-grade --solutions.", shown="the clone's solutions/")
    db: str | None = _field(None, "URL", ("grader", "hub"),
                            "Gradebook URL (postgresql://... or sqlite:///...); same as --db.",
                            shown="sqlite in the course folder")
    course: Path | None = _field(None, "path", ("grader", "hub", "setup"),
                                 "nbgrader course folder (CourseDirectory.root) formgrader opens.",
                                 shown="autograder/course")
    exchange: Path | None = _field(None, "path", ("grader", "hub"),
                                   "nbgrader exchange folder (Exchange.root).", shown="nbgrader's default")
    course_id: str = _field("attnlab", "str", ("grader", "hub"),
                            "Course id: names the grader account, groups, database and class folder.")
    lti_launches: Path | None = _field(None, "path", ("grader", "hub"),
                                       "The hub's LTI launch record (JSON lines).",
                                       shown="/var/lib/attnlab-lti/<course id>/launches.jsonl")

    def solutions_dir(self, repo: Path) -> Path:
        """The solutions folder: :attr:`solutions`, else ``repo/solutions`` (absolute)."""
        return Path(self.solutions or repo / "solutions").resolve()


class SettingsError(ValueError):
    """An ``ATTNLAB_*`` variable holds a value of the wrong type; the message names it and the fix."""


def _build(model, overrides: dict):
    try:
        return model(**overrides)
    except ValidationError as err:
        first = err.errors()[0]
        name = PREFIX + str(first["loc"][0]).upper() if first.get("loc") else model.__name__
        raise SettingsError(f"{name}={first.get('input')!r} is not valid ({first['msg'][0].lower()}"
                            f"{first['msg'][1:]}); set it to a valid value or unset it "
                            "(docs/settings.md lists every variable).") from None


def course_settings(**overrides) -> CourseSettings:
    """:class:`CourseSettings` from the environment, ``overrides`` (command-line flags) winning.

    Raises:
        SettingsError: a variable holds a malformed value (one sentence naming it)."""
    return _build(CourseSettings, overrides)


def grader_settings(**overrides) -> GraderSettings:
    """:class:`GraderSettings` from the environment, ``overrides`` (command-line flags) winning.

    Raises:
        SettingsError: a variable holds a malformed value (one sentence naming it)."""
    return _build(GraderSettings, overrides)


def _v(name: str, type_: str, default: str, readers: tuple[Reader, ...], meaning: str) -> Variable:
    return Variable(PREFIX + name, type_, default, readers, meaning)


#: the variables no Python settings model above reads: shell scripts, the hub and Kubernetes recipes,
#: the test suite.
OTHER_VARIABLES: tuple[Variable, ...] = (
    # setup scripts and start.sh
    _v("PYTHON", "path", "first supported python3.X", ("setup",), "Interpreter scripts/setup.sh builds .venv with."),
    _v("TORCH_INDEX", "URL", "unset", ("setup",), "Extra package index holding the torch CPU wheel (setup, lock)."),
    _v("LOCK_UPGRADE", "bool", "0", ("setup",), "1 makes scripts/lock.sh take the newest versions, not the current pins."),
    _v("HEADLESS", "bool", "0", ("setup", "tests"), "1 makes start.sh set up and check without starting JupyterLab."),
    _v("ROOT_DIR", "path", "the clone", ("setup",), "Folder start.sh serves (same as --root-dir)."),
    _v("HUB_PYTHON", "path", "/usr/bin/python3", ("setup",), "Interpreter scripts/ensure_hub.sh builds the hub environments with."),
    # JupyterHub recipe (install.sh writes most of these to the class's env file) and Kubernetes
    _v("HUB_HOME", "path", "/opt/attnlab-hub", ("hub", "setup", "tests"), "Folder of the hub and course environments."),
    _v("COURSE_ENV", "path", "$ATTNLAB_HUB_HOME/course-env", ("hub",), "The course environment single-user servers run in."),
    _v("SRV", "path", "/srv/attnlab-<course id>", ("hub",), "Everything of one class (exchange, state, clone)."),
    _v("BIND_IP", "IP address", "127.0.0.1", ("hub",), "Where the hub listens (TLS belongs to a reverse proxy)."),
    _v("HUB_URL", "URL", "http://127.0.0.1:8000", ("hub",), "The hub's bind URL."),
    _v("HUB_PORT", "int", "8081", ("hub",), "Port of the hub's internal API."),
    _v("PROXY_API_PORT", "int", "8001", ("hub",), "Port of the proxy's API."),
    _v("FORMGRADER_PORT", "int", "9999", ("hub",), "Port of the formgrader service."),
    _v("HUB_STATE", "path", "/srv/jupyterhub", ("hub",), "Folder of the hub's cookie secret and database."),
    _v("CULL_TIMEOUT", "int (s)", "3600", ("hub",), "Seconds of inactivity before a user's server is stopped."),
    _v("MEM_LIMIT", "size", "2G", ("hub",), "Memory limit of each user's server."),
    _v("CPU_LIMIT", "float", "1", ("hub",), "CPU limit of each user's server."),
    _v("GRADER_USER", "str", "grader-<course id>", ("hub",), "System account formgrader runs as."),
    _v("GRADER_HOME", "path", "/home/<grader user>", ("hub", "tests"), "Home of the grader account (holds course/)."),
    _v("INSTRUCTORS", "comma list", "empty", ("hub",), "Hub users with the instructor role."),
    _v("GRADERS", "comma list", "empty", ("hub",), "Hub users with the grader role."),
    _v("STUDENTS_GROUP", "str", "attnlab-students", ("hub",), "Hub group of the students."),
    _v("CLONE", "path", "/opt/attnlab-hub/course", ("hub", "tests"), "The course repository the grader reads (read-only)."),
    _v("GIT_SYSTEM_CONFIG", "path", "unset", ("hub", "tests"), "Git system config the hub gives servers (lesson updates)."),
    _v("LTI_ISSUER", "URL", "required for LTI", ("hub",), "The LMS's LTI 1.3 issuer."),
    _v("LTI_CLIENT_ID", "comma list", "required for LTI", ("hub",), "The LMS's client id(s) for this tool."),
    _v("LTI_AUTHORIZE_URL", "URL", "required for LTI", ("hub",), "The LMS's OIDC authorization endpoint."),
    _v("LTI_JWKS_URL", "URL", "required for LTI", ("hub",), "The LMS's public key set."),
    _v("LTI_USERNAME_CLAIM", "str", "sub", ("hub",), "The launch claim that becomes the hub user name."),
    _v("LTI_REQUIRE_UNIX_ACCOUNT", "bool", "1", ("hub",), "1 refuses a launch by someone without a system account."),
    _v("LTI_URI_SCHEME", "str", "from X-Forwarded-Proto", ("hub",), "Scheme of the hub's public URL for LTI redirects."),
    # the test suite
    _v("TEST_PROFILE", "str", "unset (CI: root or user)", ("tests",), "Test profile whose required groups must not skip."),
    _v("TEST_WORKERS", "int", "2", ("tests",), "pytest-xdist workers ./test.sh starts."),
    _v("TEST_MECHANISMS", "comma list", "every available", ("tests",), "Sandbox mechanisms the sandbox tests exercise."),
    _v("STABILITY_DRAWS", "int", "5", ("tests",), "Draws per case and check in the verdict-stability test."),
    _v("STABILITY_SLOW_DRAWS", "int", "0", ("tests",), "Draws of set 09's training-run check in that test."),
    _v("CHROMIUM", "path", "/usr/bin/chromium", ("tests",), "Browser the end-to-end tests drive."),
)

#: names that are deliberately NOT settings (the sandbox's slot and mechanism are nbgrader traitlets);
#: tests set them to prove they are ignored, and no other code may read them.
IGNORED: dict[str, str] = {
    PREFIX + "SANDBOX": "not read: the sandbox mechanism is SandboxGrade.mechanism in the nbgrader config.",
    PREFIX + "GRADER_SLOT": "not read: the grading slot is SandboxGrade.slot in the nbgrader config.",
}


def _model_variables(model: type[BaseSettings]) -> list[Variable]:
    out = []
    for field_name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        readers = tuple(extra.get("readers") or ())  # type: ignore[arg-type]
        shown = extra.get("shown")
        if shown is None:
            d = info.default
            shown = ("1" if d else "0") if isinstance(d, bool) else str(d)
        out.append(Variable(PREFIX + field_name.upper(), str(extra.get("type")), str(shown), readers,  # type: ignore[arg-type]
                            info.description or ""))
    return out


def variables() -> list[Variable]:
    """Every declared ``ATTNLAB_*`` variable, sorted by name (a name read by several readers once)."""
    seen: dict[str, Variable] = {}
    for v in [*_model_variables(CourseSettings), *_model_variables(GraderSettings), *OTHER_VARIABLES]:
        if v.name in seen:
            raise ValueError(f"{v.name} is declared twice; declare each variable once")
        seen[v.name] = v
    return sorted(seen.values(), key=lambda v: v.name)


def settings_table_markdown() -> str:
    """The Markdown table of :func:`variables` (what ``docs/settings.md`` holds between its markers)."""
    rows = ["| variable | type | default | read by | meaning |", "|---|---|---|---|---|"]
    for v in variables():
        rows.append(f"| `{v.name}` | {v.type} | {v.default} | {', '.join(v.readers)} | {v.meaning} |")
    rows.append("")
    rows.append("Not settings (ignored on purpose; tests set them to prove it):")
    rows.append("")
    for name, why in sorted(IGNORED.items()):
        rows.append(f"- `{name}`: {why}")
    return "\n".join(rows) + "\n"


__all__ = ["PREFIX", "Reader", "Variable", "CourseSettings", "GraderSettings", "SettingsError", "course_settings",
           "grader_settings", "OTHER_VARIABLES", "IGNORED",
           "variables", "settings_table_markdown"]
