"""The ``ATTNLAB_*`` variables of the JupyterHub and Kubernetes recipes, declared as data.

JupyterHub's configuration, its LTI login and the course website's service run in the hub's own
environment, which has no attnlab, and ``install.sh`` and ``scripts/ensure_hub.sh`` are shell: they read
these variables from the environment directly (:data:`DIRECT_READERS`), so they are declared here as rows
for ``docs/settings.md`` and the tests, not as a settings model.  A file listed in :data:`DIRECT_READERS`
falls back to the default written here (``tests/test_environment_reads.py`` compares them).  This module
is read by ``scripts/settings_catalog.py`` only; nothing in the hub imports it.
"""
from __future__ import annotations

from attnlab.settings import Variable, variable

#: the hub's variables (install.sh writes most of them to the class's env file)
VARIABLES: tuple[Variable, ...] = (
    variable("HUB_HOME", "path", "/opt/attnlab-hub", "Folder of the hub and course environments."),
    variable("HUB_PYTHON", "path", "/usr/bin/python3", "Interpreter scripts/ensure_hub.sh builds the hub environments with."),
    variable("COURSE_ENV", "path", "$ATTNLAB_HUB_HOME/course-env", "The course environment single-user servers run in."),
    variable("COURSE_ID", "str", "attnlab", "Course id: names the grader account, groups, database, class folder "
             "and LTI launch record."),
    variable("SRV", "path", "/srv/attnlab-<course id>", "Everything of one class (exchange, state, clone)."),
    variable("CLONE", "path", "/opt/attnlab-hub/course", "The course repository the hub's grader account reads "
             "(read-only); formgrader's nbgrader config loads the grader from it."),
    variable("EXCHANGE", "path", "/srv/nbgrader/exchange", "nbgrader exchange folder (Exchange.root) of every "
             "user's server (install.sh: $ATTNLAB_SRV/exchange)."),
    variable("DB", "URL", "unset", "Gradebook URL formgrader and the grader account use (install.sh keeps a class's "
             "once chosen)."),
    variable("BIND_IP", "IP address", "127.0.0.1", "Where the hub listens (TLS belongs to a reverse proxy)."),
    variable("HUB_URL", "URL", "http://127.0.0.1:8000", "The hub's bind URL."),
    variable("HUB_PORT", "int", "8081", "Port of the hub's internal API."),
    variable("PROXY_API_PORT", "int", "8001", "Port of the proxy's API."),
    variable("FORMGRADER_PORT", "int", "9999", "Port of the formgrader service."),
    variable("HUB_STATE", "path", "/srv/jupyterhub", "Folder of the hub's cookie secret and database."),
    variable("CULL_TIMEOUT", "int (s)", "3600", "Seconds of inactivity before a user's server is stopped."),
    variable("MEM_LIMIT", "size", "2G", "Memory limit of each user's server."),
    variable("CPU_LIMIT", "float", "1", "CPU limit of each user's server."),
    variable("GRADER_USER", "str", "grader-<course id>", "System account formgrader runs as."),
    variable("GRADER_HOME", "path", "/home/<grader user>", "Home of the grader account (holds course/)."),
    variable("GRADER_SITE", "path", "unset", "Grader-only packages on formgrader's PYTHONPATH (students lack them)."),
    variable("INSTRUCTORS", "comma list", "empty", "Hub users with the instructor role."),
    variable("GRADERS", "comma list", "empty", "Hub users with the grader role."),
    variable("STUDENTS_GROUP", "str", "attnlab-students", "Hub group of the students."),
    variable("GIT_SYSTEM_CONFIG", "path", "unset", "Git system config the hub gives servers (lesson updates)."),
    variable("LESSONS_REPO", "URL", "unset", "The class's lesson repository students' servers pull at each start."),
    variable("SITE_DIR", "path", "unset", "The built course website the hub serves at /services/course/ "
             "(install.sh: $ATTNLAB_SRV/site)."),
    variable("SITE_PORT", "int", "10101", "Port of the course website's service behind the hub (install.sh picks "
             "a free one)."),
    variable("LTI_ISSUER", "URL", "required for LTI", "The LMS's LTI 1.3 issuer."),
    variable("LTI_CLIENT_ID", "comma list", "required for LTI", "The LMS's client id(s) for this tool."),
    variable("LTI_AUTHORIZE_URL", "URL", "required for LTI", "The LMS's OIDC authorization endpoint."),
    variable("LTI_JWKS_URL", "URL", "required for LTI", "The LMS's public key set."),
    variable("LTI_USERNAME_CLAIM", "str", "sub", "The launch claim that becomes the hub user name."),
    variable("LTI_REQUIRE_UNIX_ACCOUNT", "bool", "1", "1 refuses a launch by someone without a system account."),
    variable("LTI_URI_SCHEME", "str", "from X-Forwarded-Proto", "Scheme of the hub's public URL for LTI redirects."),
    variable("LTI_LAUNCHES", "path", "/var/lib/attnlab-lti/<course id>/launches.jsonl",
             "Where the hub's LTI login records each launch (JSON lines)."),
)

#: files that read ``ATTNLAB_*`` variables from the environment directly instead of through a settings
#: model, and why.  Every name they read is declared in :data:`VARIABLES`.
DIRECT_READERS: dict[str, str] = {
    "deploy/jupyterhub/jupyterhub_config.py": "JupyterHub's configuration; runs in the hub's own environment, "
                                              "which has no attnlab.",
    "deploy/jupyterhub/attnlab_lti.py": "the hub's LTI authenticator; runs in the hub's own environment.",
    "deploy/jupyterhub/course_site.py": "the course website's hub service; runs in the hub's own environment.",
    "deploy/jupyterhub/nbgrader_config_global.py": "nbgrader's configuration of every user's server; students' "
                                                   "servers lack the grader's settings.",
    "deploy/jupyterhub/grader_nbgrader_config.py": "formgrader's nbgrader configuration; reads ATTNLAB_CLONE "
                                                   "before the grader it loads from that clone is importable.",
}

#: variables the platform defines that the hub's code reads directly: name -> who sets it and what it gives.
PLATFORM_VARIABLES: dict[str, str] = {
    "JUPYTERHUB_CRYPT_KEY": "JupyterHub's key for encrypting auth state: the LTI login keeps launch claims "
                            "only when it is set.",
    "JUPYTERHUB_SERVICE_PREFIX": "JupyterHub, in a managed service: its URL prefix (the course website's "
                                 "/services/course/).",
    "JUPYTERHUB_SERVICE_URL": "JupyterHub, in a managed service: where it listens (the course website).",
}
