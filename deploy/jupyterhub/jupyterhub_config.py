"""JupyterHub for one attnlab class on one machine (see deploy/jupyterhub/README.md).

``install.sh`` writes the environment variables read below into ``<class>/hub/class.env`` and
starts the hub with them. Production choices:

* users log in with their machine accounts (PAM); the members of two Unix groups may log in:
  ``ATTNLAB_STUDENTS_GROUP`` (students) and ``formgrade-<course>`` (instructors and graders);
  nobody is a hub admin;
* each user's JupyterLab runs as that user (SystemdSpawner when the host runs systemd: memory
  and CPU limits are enforced by cgroups; LocalProcessSpawner otherwise: limits are advisory),
  from the shared course environment ``$ATTNLAB_HUB_HOME/course-env`` (readable by all; a learner's
  install, without the grader-only packages), with one BLAS/OpenMP thread per kernel and the hub
  user name as the learner id;
* lessons arrive with nbgitpuller from a repository of the lesson notebooks only (no solutions, no
  text sources): a server starts at nbgitpuller's page (``Spawner.default_url``), so the first login
  clones the lessons and every later start merges new lesson commits without touching the
  student's own edits, then opens JupyterLab on them;
* a hub restart leaves users' servers running (``cleanup_servers`` off: the next hub finds them in
  its database); the proxy, formgrader and the culler record their PIDs (``<state>/*.pid``,
  ``~grader-<course>/.formgrader.pid``), which ``install.sh --start`` reads to stop what a hub that
  died left behind;
* assignments go through nbgrader's filesystem exchange (``ATTNLAB_EXCHANGE``; install.sh puts it in
  the class folder);
* one class, several graders (nbgrader's documented set-up): formgrader runs as a hub service
  named after the course, as the shared grader account ``grader-<course>``, reachable by the
  members of the hub group ``formgrade-<course>`` and nobody else (no admin rights, no access to
  students' servers, no user list); the gradebook is PostgreSQL where Debian's package is installed;
  the grader's distribution and the grader-only packages (attnlab-grader: the instructor's code, the
  PostgreSQL driver, copydetect, LTI)
  are on ``PYTHONPATH`` for this service only (``ATTNLAB_GRADER_SITE``, readable by the grader
  account only);
* students' servers hide nbgrader's instructor tools (the course environment's defaults, see
  ``scripts/ensure_hub.sh``); the formgrader service turns them on with its own config path;
* jupyterhub-idle-culler stops servers idle for ``ATTNLAB_CULL_TIMEOUT`` seconds.
"""
import os
import shutil
from urllib.parse import urlencode

c = get_config()  # noqa: F821 - provided by JupyterHub

HUB_HOME = os.environ.get("ATTNLAB_HUB_HOME", "/opt/attnlab-hub")
COURSE_ENV = os.environ.get("ATTNLAB_COURSE_ENV", os.path.join(HUB_HOME, "course-env"))
COURSE_ID = os.environ.get("ATTNLAB_COURSE_ID", "attnlab")
GRADER = os.environ.get("ATTNLAB_GRADER_USER", f"grader-{COURSE_ID}")
GRADER_HOME = os.environ.get("ATTNLAB_GRADER_HOME", f"/home/{GRADER}")
GRADER_SITE = os.environ.get("ATTNLAB_GRADER_SITE")  # the grader's distribution and packages (install.sh: <class>/grader-site)
INSTRUCTORS = [u for u in os.environ.get("ATTNLAB_INSTRUCTORS", "").split(",") if u]
GRADERS = [u for u in os.environ.get("ATTNLAB_GRADERS", "").split(",") if u]
STAFF = sorted(set(INSTRUCTORS) | set(GRADERS))  # same hub rights: formgrader for this course
STUDENTS_GROUP = os.environ.get("ATTNLAB_STUDENTS_GROUP", "attnlab-students")
FORMGRADER_PORT = int(os.environ.get("ATTNLAB_FORMGRADER_PORT", "9999"))
HUB_PORT = int(os.environ.get("ATTNLAB_HUB_PORT", "8081"))
PROXY_API_PORT = int(os.environ.get("ATTNLAB_PROXY_API_PORT", "8001"))
CULL_TIMEOUT = int(os.environ.get("ATTNLAB_CULL_TIMEOUT", "3600"))
STATE = os.environ.get("ATTNLAB_HUB_STATE", "/srv/jupyterhub")  # cookie secret, hub database
MEM_LIMIT = os.environ.get("ATTNLAB_MEM_LIMIT", "2G")  # measured <= 0.7 GiB with two notebooks open; SIZING.md
CPU_LIMIT = float(os.environ.get("ATTNLAB_CPU_LIMIT", "1"))

# ---------------------------------------------------------------- hub, proxy, state
c.JupyterHub.bind_url = os.environ.get("ATTNLAB_HUB_URL", "http://127.0.0.1:8000")  # TLS at a reverse proxy
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = HUB_PORT
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PROXY_API_PORT}"
c.ConfigurableHTTPProxy.pid_file = os.path.join(STATE, "jupyterhub-proxy.pid")
c.ConfigurableHTTPProxy.command = [os.path.join(HUB_HOME, "proxy", "node_modules", ".bin",
                                                "configurable-http-proxy")]
c.JupyterHub.cookie_secret_file = os.path.join(STATE, "jupyterhub_cookie_secret")
c.JupyterHub.db_url = f"sqlite:///{os.path.join(STATE, 'jupyterhub.sqlite')}"
c.JupyterHub.pid_file = os.path.join(STATE, "jupyterhub.pid")
c.JupyterHub.cleanup_servers = False  # a restart (install.sh --restart, a new --port) keeps users' servers
#: the start line of a service that records its PID in the file given first (read by install.sh)
WRITE_PID = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"']

# ---------------------------------------------------------------- who may log in
c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_groups = {STUDENTS_GROUP, f"formgrade-{COURSE_ID}"}  # PAM/local groups
c.Authenticator.admin_users = set()  # least privilege: no hub admin (root manages the hub)
c.PAMAuthenticator.open_sessions = False  # no systemd-logind session per login

# ---------------------------------------------------------------- each user's server
if shutil.which("systemctl") and os.path.isdir("/run/systemd/system"):
    c.JupyterHub.spawner_class = "systemdspawner.SystemdSpawner"
    c.SystemdSpawner.isolate_tmp = True
    c.SystemdSpawner.isolate_devices = True
    c.SystemdSpawner.disable_user_sudo = True
    c.SystemdSpawner.unit_name_template = f"jupyter-{COURSE_ID}-{{USERNAME}}"  # several classes per host
else:
    c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.Spawner.cmd = [os.path.join(COURSE_ENV, "bin", "jupyterhub-singleuser")]
LESSONS_REPO = os.environ.get("ATTNLAB_LESSONS_REPO")  # install.sh: file://<class>/lessons.git
if LESSONS_REPO:  # every server start pulls the lessons (nbgitpuller merges, keeping the student's edits)
    c.Spawner.default_url = "/git-pull?" + urlencode({"repo": LESSONS_REPO, "branch": "main",
                                                      "targetpath": "lessons", "urlpath": "lab/tree/lessons"})
else:
    c.Spawner.default_url = "/lab"
c.Spawner.notebook_dir = "~"
# a terminal is bash with the server's environment (the course's python and attnlab first on
# PATH: students file regrade requests there); Jupyter's default login shell resets PATH from /etc/profile
c.Spawner.args = ["--ServerApp.terminado_settings=shell_command=/bin/bash"]
c.Spawner.mem_limit = MEM_LIMIT
c.Spawner.cpu_limit = CPU_LIMIT
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {
    # one thread per kernel: 200 kernels on 32 cores must not each start 32 OpenMP threads
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    # by-hand numbers are seeded by the learner id, which must be the nbgrader student id
    "ATTNLAB_LEARNER": lambda spawner: spawner.user.name,
    "PATH": f"{os.path.join(COURSE_ENV, 'bin')}:/usr/local/bin:/usr/bin:/bin",
}

#: settings a deployment may move (exchange, course id, course repository, gradebook URL), passed on
#: to every user's server and to formgrader when the hub was started with them
PASS_ON = {k: os.environ[k] for k in ("ATTNLAB_EXCHANGE", "ATTNLAB_COURSE_ID", "ATTNLAB_CLONE",
                                      "ATTNLAB_DB") if k in os.environ}
# students get neither the gradebook URL nor the course repository's path
c.Spawner.environment.update({k: v for k, v in PASS_ON.items() if k in ("ATTNLAB_EXCHANGE", "ATTNLAB_COURSE_ID")})
GIT_SYSTEM_CONFIG = os.environ.get("ATTNLAB_GIT_SYSTEM_CONFIG")
if GIT_SYSTEM_CONFIG:
    # nbgitpuller runs git as the student; git refuses the root-owned lessons repository unless
    # safe.directory names it in a protected (system or global) configuration, and its file://
    # transport drops command-line settings: install.sh writes a system configuration that
    # includes /etc/gitconfig and adds the lessons repository
    c.Spawner.environment["GIT_CONFIG_SYSTEM"] = GIT_SYSTEM_CONFIG

# ---------------------------------------------------------------- nbgrader: one class, several graders
c.JupyterHub.load_groups = {
    f"formgrade-{COURSE_ID}": {"users": STAFF},
    f"nbgrader-{COURSE_ID}": {"users": []},
}
c.JupyterHub.load_roles = [
    {"name": f"formgrade-{COURSE_ID}", "groups": [f"formgrade-{COURSE_ID}"],
     "scopes": [f"access:services!service={COURSE_ID}", "list:services",
                f"read:services!service={COURSE_ID}"]},
    # the course_list extension in a user's server asks the hub which course services exist
    {"name": "server", "scopes": ["inherit"]},
    # jupyterhub-idle-culler: exactly the scopes its README lists for culling servers
    {"name": "idle-culler", "services": ["idle-culler"],
     "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"]},
]
c.JupyterHub.services = [{
    "name": COURSE_ID,
    "url": f"http://127.0.0.1:{FORMGRADER_PORT}",
    # listens on "url"; umask 077: what formgrader writes (submissions, grades) is the grader's only
    # (nbgrader sets the modes of what it releases into the exchange itself)
    "command": ["/bin/sh", "-c", 'umask 077 && echo $$ > "$0" && exec "$@"',
                os.path.join(GRADER_HOME, ".formgrader.pid"), os.path.join(COURSE_ENV, "bin", "jupyterhub-singleuser")],
    "user": GRADER,
    "cwd": GRADER_HOME,
    "environment": {"JUPYTERHUB_DEFAULT_URL": "/lab", "OMP_NUM_THREADS": "1", "HOME": GRADER_HOME,
                    "SHELL": "/bin/bash",
                    # nbgrader's formgrader and create-assignment on (students' servers have them off)
                    "JUPYTER_CONFIG_PATH": os.path.join(HUB_HOME, "grader-jupyter"),
                    "ATTNLAB_COURSE": os.path.join(GRADER_HOME, "course"),
                    "PATH": f"{os.path.join(COURSE_ENV, 'bin')}:/usr/local/bin:/usr/bin:/bin", **PASS_ON,
                    # the grader-only packages: this service (and its kernels, terminals) only
                    **({"PYTHONPATH": GRADER_SITE} if GRADER_SITE else {})},
    "oauth_no_confirm": True,
}, {
    # stops users' servers idle for CULL_TIMEOUT seconds (their files stay; a login starts them again)
    "name": "idle-culler",
    "command": [*WRITE_PID, os.path.join(STATE, "idle-culler.pid"),
                os.path.join(HUB_HOME, "hub", "bin", "jupyterhub-idle-culler"), f"--timeout={CULL_TIMEOUT}"],
}]

# ---------------------------------------------------------------- the course website (course_site.py)
# Every logged-in user reads the built site at /services/course/ without starting a server: a static file
# server behind the hub's login, run as "nobody" (install_site.sh makes the site readable by all).
SITE_DIR = os.environ.get("ATTNLAB_SITE_DIR")
if SITE_DIR and os.path.isfile(os.path.join(SITE_DIR, "index.html")):
    c.JupyterHub.services.append({
        "name": "course",
        "url": f"http://127.0.0.1:{int(os.environ.get('ATTNLAB_SITE_PORT', '10101'))}",
        # the program beside the site (install_site.sh): the hub's state folder is private, and this runs as nobody
        "command": [os.path.join(HUB_HOME, "hub", "bin", "python"),
                    os.path.join(os.path.dirname(SITE_DIR), "site-service", "course_site.py")],
        "user": "nobody",
        "cwd": "/",
        "environment": {"ATTNLAB_SITE_DIR": SITE_DIR},
        "oauth_no_confirm": True,
    })
    c.JupyterHub.load_roles.append(
        {"name": "user", "scopes": ["self", "access:services!service=course"]})
