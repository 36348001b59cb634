"""nbgrader configuration for formgrader and the nbgrader CLI started from the repository root.

nbgrader reads this file last (it is in the working directory), after the deployment's own
``nbgrader_config.py``/``.json`` in Jupyter's config path (``~/.jupyter``, ``{sys.prefix}/etc/jupyter``,
``/etc/jupyter``, ``$JUPYTER_CONFIG_DIR``, ``$JUPYTER_CONFIG_PATH``). So that the deployment wins, this
file only supplies DEFAULTS and then re-applies the deployment's files on top. Precedence, highest first:

1. ``ATTNLAB_COURSE`` (CourseDirectory.root), ``ATTNLAB_EXCHANGE`` (Exchange.root), ``ATTNLAB_DB``
   (CourseDirectory.db_url, the URL ``python -m attnlab_grader grade --db`` takes);
2. the deployment's nbgrader config files (e.g. ``c.Exchange.root = "/srv/nbgrader/exchange"`` in
   ``/etc/jupyter/nbgrader_config.py``, ``c.CourseDirectory.root`` in an instructor's ``~/.jupyter``);
3. these defaults: the course folder ``autograder/course`` (git-ignored), assignment sources read from
   ``solutions/``, and the exchange nbgrader's standard ``/usr/local/share/nbgrader/exchange`` when that
   folder exists, else a private one in ``COURSE/.exchange`` (one person on one machine).

The grading engine's settings (preprocessors, course id ``attnlab``) come from
``autograder/attnlab_grader/steps/nbgrader_config.py``; a deployment may override the course id too. See autograder/README.md.
"""
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_grader = os.path.join(_here, "autograder")
if _grader not in sys.path:  # config files are exec'd by Jupyter; make the attnlab_grader package importable
    sys.path.insert(0, _grader)

from jupyter_core.paths import jupyter_config_path  # noqa: E402
from traitlets.config import Config  # noqa: E402
from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader  # noqa: E402

from attnlab_grader.records.settings import grader_settings  # noqa: E402

c = get_config()  # noqa: F821 - provided by traitlets
load_subconfig(os.path.join(_here, "autograder", "attnlab_grader", "steps", "nbgrader_config.py"))  # noqa: F821


def _deployment_config() -> Config:
    """The deployment's nbgrader config files, merged in nbgrader's own order (later wins)."""
    merged = Config()
    for folder in reversed(jupyter_config_path()):  # lowest priority first, as traitlets loads them
        if os.path.abspath(folder) == _here:
            continue
        for loader in (JSONFileConfigLoader, PyFileConfigLoader):
            name = "nbgrader_config" + (".json" if loader is JSONFileConfigLoader else ".py")
            if os.path.isfile(os.path.join(folder, name)):
                try:
                    merged.merge(loader(name, path=folder).load_config())
                except Exception as e:  # nbgrader itself warns about a broken file; don't hide it twice
                    print(f"attnlab: ignoring {os.path.join(folder, name)}: {e}", file=sys.stderr)
    return merged


_deployed = _deployment_config()
c.merge(_deployed)

_settings = grader_settings()  # ATTNLAB_COURSE, ATTNLAB_EXCHANGE, ATTNLAB_DB (docs/settings.md)
if _settings.course:
    c.CourseDirectory.root = os.path.abspath(_settings.course)
elif "CourseDirectory.root" not in _deployed:
    c.CourseDirectory.root = os.path.join(_here, "autograder", "course")
if "CourseDirectory.source_directory" not in _deployed:
    # An absolute source_directory is joined as-is by nbgrader's CourseDirectory.format_path.
    c.CourseDirectory.source_directory = os.path.join(_here, "solutions")

_NBGRADER_EXCHANGE = "/usr/local/share/nbgrader/exchange"  # nbgrader's own default
if _settings.exchange:
    c.Exchange.root = os.path.abspath(_settings.exchange)
elif "Exchange.root" not in _deployed:
    if os.path.isdir(_NBGRADER_EXCHANGE):
        c.Exchange.root = _NBGRADER_EXCHANGE
    else:  # nothing shared is set up: a private exchange in the course folder. Loading this file
        # creates nothing: nbgrader's release creates the exchange, and ./start.sh creates this
        # private one before formgrader starts (formgrader hides its exchange pages when it is missing).
        c.Exchange.root = os.path.join(c.CourseDirectory.root, ".exchange")

# A PostgreSQL (or other SQLAlchemy) gradebook instead of COURSE/gradebook.db: the same URL that
# `python -m attnlab_grader grade --db URL` takes (it also reads ATTNLAB_DB), so formgrader and the
# grading pipeline share one gradebook. postgresql://... means the psycopg 3 driver.
if _settings.db:
    from attnlab_grader.records.course import normalize_db_url
    c.CourseDirectory.db_url = normalize_db_url(_settings.db)
