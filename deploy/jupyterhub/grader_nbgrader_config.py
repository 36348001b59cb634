"""nbgrader settings of the shared grader account (copy to ~grader-<course>/nbgrader_config.py).

Formgrader (the hub service ``<course>``) runs in the grader's home; the course folder is a
subfolder of it (formgrader refuses a course root outside its server root). Assignment sources,
the grading steps and their order come from the course repository's own configuration, so a
release made from formgrader never contains ``grading.py`` and autograding uses the sandbox.
``ATTNLAB_CLONE`` (the hub's variable, deploy/jupyterhub/settings.py) is read directly, since the grader
comes from that clone; the rest are the grader's settings (``attnlab_grader.records.settings``).
"""
import os
import sys

CLONE = os.environ.get("ATTNLAB_CLONE", "/opt/attnlab-hub/course")  # the course repository, read-only
GRADER = os.path.join(CLONE, "autograder")
if GRADER not in sys.path:
    sys.path.insert(0, GRADER)  # the attnlab_grader package (grading steps)

from attnlab_grader.records.settings import grader_settings  # noqa: E402 - docs/settings.md

settings = grader_settings()
c = get_config()  # noqa: F821 - provided by traitlets
load_subconfig(os.path.join(CLONE, "autograder", "attnlab_grader", "steps", "nbgrader_config.py"))  # noqa: F821
c.CourseDirectory.root = str(settings.course or os.path.expanduser("~/course"))
c.CourseDirectory.course_id = settings.course_id
c.Exchange.root = str(settings.exchange or "/srv/nbgrader/exchange")
if settings.db:  # the gradebook `python -m attnlab_grader grade --db` writes to
    from attnlab_grader.records.course import normalize_db_url
    c.CourseDirectory.db_url = normalize_db_url(settings.db)
