"""The grader's ``ATTNLAB_*`` settings: what ``attnlab_grader``, the course's ``nbgrader_config.py`` and the
Slurm array script (``deploy/slurm/grade-array.sbatch``) read.

:class:`GraderSettings` is a settings model (``attnlab.settings.SettingsModel``): :func:`grader_settings`
builds it from the environment, a command-line flag winning, and :func:`grader_default` is a click option's
default read from it when the command runs.  What a command-line option (``--shards``, ``--jobs``) or an
nbgrader traitlet (``c.SandboxGrade.timeout``, ``c.SandboxGrade.mechanism``) sets is not a variable.  The
solutions folder is the learner's setting (``attnlab.settings.CourseSettings.solutions``): ``attnlab check``
reads it too.  ``docs/settings.md`` renders :data:`VARIABLES` (``scripts/settings_catalog.py``).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from attnlab.settings import SettingsModel, Variable, build, model_variables, setting, variable


class GraderSettings(SettingsModel):
    """What the grader (``attnlab_grader``, the course's ``nbgrader_config.py``) reads from ``ATTNLAB_*``."""

    db: str | None = setting(None, "URL", "Gradebook URL (postgresql://... or sqlite:///...); same as --db.",
                             shown="sqlite in the course folder")
    course: Path | None = setting(None, "path", "nbgrader course folder (CourseDirectory.root) formgrader opens.",
                                  shown="autograder/course (the hub's grader account: ~/course)")
    exchange: Path | None = setting(None, "path", "nbgrader exchange folder (Exchange.root).",
                                    shown="nbgrader's default (the hub's configs: /srv/nbgrader/exchange)")
    course_id: str = setting("attnlab", "str", "Course id: names the grader account, groups, database and class "
                             "folder.")
    lti_launches: Path | None = setting(None, "path", "The hub's LTI launch record (JSON lines); same as "
                                        "the LTI commands' --launches.",
                                        shown="/var/lib/attnlab-lti/<course id>/launches.jsonl")


def grader_settings(**overrides: Any) -> GraderSettings:
    """:class:`GraderSettings` from the environment, ``overrides`` (command-line flags) winning.

    Raises:
        attnlab.settings.SettingsError: a variable holds a malformed value (one sentence naming it)."""
    return build(GraderSettings, **overrides)


def grader_default(field: str) -> Callable[[], Any]:
    """A click option's ``default=``: :class:`GraderSettings`'s ``field``, read when the command runs,
    so the option's environment variable is read here, typed, and not by click a second time.

    Raises:
        ValueError: ``field`` is not a :class:`GraderSettings` field (at definition time).
        attnlab.settings.SettingsError: when called, a variable holds a malformed value."""
    if field not in GraderSettings.model_fields:
        raise ValueError(f"{field!r} is not a GraderSettings field; use one of {sorted(GraderSettings.model_fields)}")
    return lambda: getattr(grader_settings(), field)


#: the grader's variables: :class:`GraderSettings`, and the Slurm array script's (a shell script)
VARIABLES: tuple[Variable, ...] = (
    *model_variables(GraderSettings),
    variable("ASSIGNMENTS", "space-separated list", "required",
             "Assignments each Slurm array task grades, in the order given to shard prepare."),
    variable("GRADE_PYTHON", "path", "python3", "The course environment's python that Slurm array tasks run."),
    variable("GRADE_ARGS", "str", "empty", "Further options of each Slurm array task's shard grade command "
             "(a rerun of one index: --shards N)."),
    variable("DB_FILE", "path", "unset",
             "File holding the gradebook URL for Slurm array tasks (keeps its password off command lines)."),
)

#: names that are deliberately NOT settings (the sandbox's slot and mechanism are nbgrader traitlets);
#: tests set them to prove they are ignored, and no other code may read them.
IGNORED: dict[str, str] = {
    "ATTNLAB_SANDBOX": "not read: the sandbox mechanism is SandboxGrade.mechanism in the nbgrader config.",
    "ATTNLAB_GRADER_SLOT": "not read: the grading slot is SandboxGrade.slot in the nbgrader config.",
}

#: variables the platform defines that the grader reads directly: name -> who sets it and what it gives.
PLATFORM_VARIABLES: dict[str, str] = {
    "JUPYTERHUB_USER": "JupyterHub, in formgrader's terminal: the hub user name (the author of a grade change).",
    "KUBERNETES_SERVICE_HOST": "Kubernetes, in every pod: the API server's address (the grading job).",
    "KUBERNETES_SERVICE_PORT": "Kubernetes, in every pod: the API server's port (the grading job).",
    "JOB_COMPLETION_INDEX": "Kubernetes, in each pod of an Indexed Job: the pod's index (the line of the "
                            "listing it grades).",
    "SLURM_ARRAY_TASK_ID": "Slurm, in each task of a job array: the task's index (its shard of the listing).",
    "SLURM_ARRAY_TASK_COUNT": "Slurm, in each task of a job array: the array's number of tasks (the shard count).",
}
