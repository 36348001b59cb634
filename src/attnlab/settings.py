"""Every ``ATTNLAB_*`` environment variable, declared once, typed.

Three kinds live here:

* :class:`CourseSettings`, :class:`GraderSettings` and :class:`SuiteSettings` are the settings the
  Python code of this package, of the grader and of the test suite reads at run time. They are
  pydantic-settings models (``env_prefix="ATTNLAB_"``): build one from the environment
  (``CourseSettings()``), or with a command-line flag as an override (``CourseSettings(learner="ada")``:
  keyword arguments beat the environment), and pass it to what needs it. :func:`course_settings`,
  :func:`grader_settings` and :func:`suite_settings` build them and turn a malformed value
  (``ATTNLAB_MASTERY_N=three``) into a :class:`SettingsError` naming the variable in one sentence;
  :func:`grader_default` is a click option's default read from :class:`GraderSettings`.
* :data:`OTHER_VARIABLES` declares, as data, the variables read where ``attnlab`` cannot be imported:
  the shell scripts (setup, ``start.sh``, ``test.sh``), JupyterHub's configuration (:data:`DIRECT_READERS`)
  and the Kubernetes recipes.
* :data:`PLATFORM_VARIABLES` lists the variables JupyterHub, Jupyter, Kubernetes or the operating
  system define that code reads directly.

:func:`variables` joins the declarations into one sorted list; ``scripts/render_tables.py``
renders it into ``docs/settings.md``. ``tests/test_settings.py`` fails when any file of the repository
names an ``ATTNLAB_`` variable this module does not declare, when a declared name is used nowhere,
and when the table is stale; ``tests/test_environment_reads.py`` fails when Python code reads a
variable that is neither declared nor a platform variable, or reads an ``ATTNLAB_`` variable from
the environment directly (``os.environ``, click's ``envvar=``) instead of through a settings model
outside :data:`DIRECT_READERS`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

PREFIX = "ATTNLAB_"

#: who reads a variable: the course library and notebooks, the grader (``attnlab_grader``, the nbgrader
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
    """What the grader (``attnlab_grader``, the course's ``nbgrader_config.py``) reads from ``ATTNLAB_*``."""

    solutions: Path | None = _field(None, "path", ("grader",),
                                    "The course's solutions/ folder (grading specs, source notebooks); "
                                    "same as attnlab-grade --solutions.", shown="the clone's solutions/")
    db: str | None = _field(None, "URL", ("grader", "hub"),
                            "Gradebook URL (postgresql://... or sqlite:///...); same as --db.",
                            shown="sqlite in the course folder")
    course: Path | None = _field(None, "path", ("grader", "hub", "setup"),
                                 "nbgrader course folder (CourseDirectory.root) formgrader opens.",
                                 shown="autograder/course (the hub's grader account: ~/course)")
    exchange: Path | None = _field(None, "path", ("grader", "hub"),
                                   "nbgrader exchange folder (Exchange.root).",
                                   shown="nbgrader's default (the hub's configs: /srv/nbgrader/exchange)")
    course_id: str = _field("attnlab", "str", ("grader", "hub"),
                            "Course id: names the grader account, groups, database and class folder.")
    lti_launches: Path | None = _field(None, "path", ("grader", "hub"),
                                       "The hub's LTI launch record (JSON lines).",
                                       shown="/var/lib/attnlab-lti/<course id>/launches.jsonl")
    clone: Path = _field(Path("/opt/attnlab-hub/course"), "path", ("grader", "hub", "tests"),
                         "The course repository the hub's grader account reads (read-only).")
    shards: int | None = _field(None, "int >= 1", ("grader",),
                                "How many shards a Slurm array task or Kubernetes completion is one of (a rerun "
                                "of one index keeps the class's count); same as shard grade --shards.",
                                shown="the array's task count (Slurm), the listing's length (Kubernetes)", ge=1)

    def solutions_dir(self, repo: Path) -> Path:
        """The solutions folder: :attr:`solutions`, else ``repo/solutions`` (absolute)."""
        return Path(self.solutions or repo / "solutions").resolve()


class SuiteSettings(_Settings):
    """What the test suite (``conftest.py``, ``tests/``, ``autograder/attnlab_grader/tests/``) reads from ``ATTNLAB_*``."""

    test_profile: str | None = _field(None, "str", ("tests",),
                                      "Test profile whose required groups must not skip (root or user).",
                                      shown="unset (CI: root or user)")
    test_mechanisms: str = _field("", "comma list", ("tests",),
                                  "Sandbox mechanisms the sandbox tests exercise.", shown="every available")
    stability_draws: int = _field(5, "int >= 1", ("tests",),
                                  "Draws per case and check in the verdict-stability test.", ge=1)
    stability_slow_draws: int = _field(0, "int >= 0", ("tests",),
                                       "Draws of set 09's training-run check in that test.", ge=0)
    chromium: Path = _field(Path("/usr/bin/chromium"), "path", ("tests",),
                            "Browser the end-to-end tests drive.")
    hub_home: Path = _field(Path("/opt/attnlab-hub"), "path", ("hub", "setup", "tests"),
                            "Folder of the hub and course environments.")

    @property
    def mechanisms(self) -> tuple[str, ...]:
        """:attr:`test_mechanisms` split at commas (empty: every available mechanism)."""
        return tuple(m.strip() for m in self.test_mechanisms.split(",") if m.strip())


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


def grader_default(field: str) -> Callable[[], Any]:
    """A click option's ``default=``: :class:`GraderSettings`'s ``field``, read when the command runs,
    so the option's environment variable is read here, typed, and not by click a second time.

    Raises:
        ValueError: ``field`` is not a :class:`GraderSettings` field (at definition time).
        SettingsError: when called, a variable holds a malformed value."""
    if field not in GraderSettings.model_fields:
        raise ValueError(f"{field!r} is not a GraderSettings field; use one of {sorted(GraderSettings.model_fields)}")
    return lambda: getattr(grader_settings(), field)


def suite_settings(**overrides) -> SuiteSettings:
    """:class:`SuiteSettings` from the environment, ``overrides`` winning.

    Raises:
        SettingsError: a variable holds a malformed value (one sentence naming it)."""
    return _build(SuiteSettings, overrides)


#: every settings model, in the order the table's readers meet them
MODELS: tuple[type[BaseSettings], ...] = (CourseSettings, GraderSettings, SuiteSettings)


def _v(name: str, type_: str, default: str, readers: tuple[Reader, ...], meaning: str) -> Variable:
    return Variable(PREFIX + name, type_, default, readers, meaning)


#: the variables no Python settings model above reads: they are read where ``attnlab`` cannot be
#: imported (shell scripts, JupyterHub's own environment: :data:`DIRECT_READERS`) or only passed on to
#: a child process (the Kubernetes recipes, ./test.sh).
OTHER_VARIABLES: tuple[Variable, ...] = (
    # setup scripts and start.sh
    _v("PYTHON", "path", "first supported python3.X", ("setup",), "Interpreter scripts/setup.sh builds .venv with."),
    _v("TORCH_INDEX", "URL", "unset", ("setup",), "Extra package index holding the torch CPU wheel (setup, lock)."),
    _v("LOCK_UPGRADE", "bool", "0", ("setup",), "1 makes scripts/lock.sh take the newest versions, not the current pins."),
    _v("HEADLESS", "bool", "0", ("setup", "tests"), "1 makes start.sh set up and check without starting JupyterLab."),
    _v("ROOT_DIR", "path", "the clone", ("setup",), "Folder start.sh serves (same as --root-dir)."),
    _v("HUB_PYTHON", "path", "/usr/bin/python3", ("setup",), "Interpreter scripts/ensure_hub.sh builds the hub environments with."),
    # JupyterHub recipe (install.sh writes most of these to the class's env file) and Kubernetes
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
    _v("GRADER_SITE", "path", "unset", ("hub", "tests"), "Grader-only packages on formgrader's PYTHONPATH (students lack them)."),
    _v("INSTRUCTORS", "comma list", "empty", ("hub",), "Hub users with the instructor role."),
    _v("GRADERS", "comma list", "empty", ("hub",), "Hub users with the grader role."),
    _v("STUDENTS_GROUP", "str", "attnlab-students", ("hub",), "Hub group of the students."),
    _v("GIT_SYSTEM_CONFIG", "path", "unset", ("hub", "tests"), "Git system config the hub gives servers (lesson updates)."),
    _v("LESSONS_REPO", "URL", "unset", ("hub",), "The class's lesson repository students' servers pull at each start."),
    _v("SITE_DIR", "path", "unset", ("hub",), "The built course website the hub serves at /services/course/ (install.sh: $ATTNLAB_SRV/site)."),
    _v("SITE_PORT", "int", "10101", ("hub",), "Port of the course website's service behind the hub (install.sh picks a free one)."),
    _v("LTI_ISSUER", "URL", "required for LTI", ("hub",), "The LMS's LTI 1.3 issuer."),
    _v("LTI_CLIENT_ID", "comma list", "required for LTI", ("hub",), "The LMS's client id(s) for this tool."),
    _v("LTI_AUTHORIZE_URL", "URL", "required for LTI", ("hub",), "The LMS's OIDC authorization endpoint."),
    _v("LTI_JWKS_URL", "URL", "required for LTI", ("hub",), "The LMS's public key set."),
    _v("LTI_USERNAME_CLAIM", "str", "sub", ("hub",), "The launch claim that becomes the hub user name."),
    _v("LTI_REQUIRE_UNIX_ACCOUNT", "bool", "1", ("hub",), "1 refuses a launch by someone without a system account."),
    _v("LTI_URI_SCHEME", "str", "from X-Forwarded-Proto", ("hub",), "Scheme of the hub's public URL for LTI redirects."),
    # the Slurm array script (deploy/slurm/grade-array.sbatch)
    _v("ASSIGNMENTS", "space-separated list", "required", ("grader",),
       "Assignments each Slurm array task grades, in the order given to shard prepare."),
    _v("GRADE_PYTHON", "path", "python3", ("grader",), "The course environment's python that Slurm array tasks run."),
    _v("GRADE_ARGS", "str", "empty", ("grader",), "Further options of each Slurm array task's shard grade command."),
    _v("DB_FILE", "path", "unset", ("grader",),
       "File holding the gradebook URL for Slurm array tasks (keeps its password off command lines)."),
    # the test suite
    _v("TEST_WORKERS", "int", "2", ("tests",), "pytest-xdist workers ./test.sh starts."),
)

#: names that are deliberately NOT settings (the sandbox's slot and mechanism are nbgrader traitlets);
#: tests set them to prove they are ignored, and no other code may read them.
IGNORED: dict[str, str] = {
    PREFIX + "SANDBOX": "not read: the sandbox mechanism is SandboxGrade.mechanism in the nbgrader config.",
    PREFIX + "GRADER_SLOT": "not read: the grading slot is SandboxGrade.slot in the nbgrader config.",
}


#: variables the platform defines (not this project), which code of this repository reads directly:
#: name -> who sets it and what the code takes from it.  Any other variable Python code reads must be
#: declared above (``tests/test_environment_reads.py`` fails otherwise).
PLATFORM_VARIABLES: dict[str, str] = {
    "JUPYTERHUB_USER": "JupyterHub, in each user's server: the hub user name (the learner id when "
                       "ATTNLAB_LEARNER is unset; the author of a grade change).",
    "JUPYTERHUB_CRYPT_KEY": "JupyterHub's key for encrypting auth state: the LTI login keeps launch claims "
                            "only when it is set.",
    "JPY_SESSION_NAME": "Jupyter Server, in each kernel: the notebook's path (`attnlab check` finds its notebook).",
    "CPU_LIMIT": "JupyterHub's spawner, in each user's server: the CPU limit (the fast path's thread count).",
    "KUBERNETES_SERVICE_HOST": "Kubernetes, in every pod: the API server's address (the grading job).",
    "KUBERNETES_SERVICE_PORT": "Kubernetes, in every pod: the API server's port (the grading job).",
    "JOB_COMPLETION_INDEX": "Kubernetes, in each pod of an Indexed Job: the pod's index (the line of the "
                            "listing it grades).",
    "SLURM_ARRAY_TASK_ID": "Slurm, in each task of a job array: the task's index (its shard of the listing).",
    "SLURM_ARRAY_TASK_COUNT": "Slurm, in each task of a job array: the array's number of tasks (the shard count).",
    "JUPYTERHUB_SERVICE_PREFIX": "JupyterHub, in a managed service: its URL prefix (the course website's "
                                 "/services/course/).",
    "JUPYTERHUB_SERVICE_URL": "JupyterHub, in a managed service: where it listens (the course website).",
    "PATH": "The operating system: tests and benchmarks put the running environment's bin/ first for a child.",
}

#: files that read ``ATTNLAB_*`` variables from ``os.environ`` directly instead of through a settings
#: model, and why: they run where ``attnlab`` is not installed.  Every name they read is still declared
#: here (in :data:`OTHER_VARIABLES` or a model).
DIRECT_READERS: dict[str, str] = {
    "deploy/jupyterhub/jupyterhub_config.py": "JupyterHub's configuration; runs in the hub's own environment, "
                                              "which has no attnlab.",
    "deploy/jupyterhub/attnlab_lti.py": "the hub's LTI authenticator; runs in the hub's own environment.",
    "deploy/jupyterhub/course_site.py": "the course website's hub service; runs in the hub's own environment.",
}


def declared_in(name: str) -> str | None:
    """Where ``name`` (``ATTNLAB_...``) is declared: ``"CourseSettings.ci"`` for a model field,
    ``"OTHER_VARIABLES"`` for a variable declared as data only, ``None`` when it is not declared."""
    for model in MODELS:
        field = name[len(PREFIX):].lower() if name.startswith(PREFIX) else None
        if field in model.model_fields:
            return f"{model.__name__}.{field}"
    return "OTHER_VARIABLES" if any(v.name == name for v in OTHER_VARIABLES) else None


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
    for v in [*(v for model in MODELS for v in _model_variables(model)), *OTHER_VARIABLES]:
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
    rows += ["", "Platform variables (set by JupyterHub, Jupyter, Kubernetes or the operating system; "
             "code reads them directly):", ""]
    for name, why in sorted(PLATFORM_VARIABLES.items()):
        rows.append(f"- `{name}`: {why}")
    rows += ["", "Files that read `ATTNLAB_*` variables from the environment directly (each name they read "
             "is declared above):", ""]
    for path, why in sorted(DIRECT_READERS.items()):
        rows.append(f"- `{path}`: {why}")
    return "\n".join(rows) + "\n"


__all__ = ["PREFIX", "Reader", "Variable", "CourseSettings", "GraderSettings", "SuiteSettings", "MODELS",
           "SettingsError", "course_settings", "grader_settings", "grader_default", "suite_settings", "OTHER_VARIABLES", "IGNORED",
           "PLATFORM_VARIABLES", "DIRECT_READERS", "declared_in", "variables", "settings_table_markdown"]
