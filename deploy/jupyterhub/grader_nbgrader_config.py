"""nbgrader settings of the shared grader account (copy to ~grader-<course>/nbgrader_config.py).

Formgrader (the hub service ``<course>``) runs in the grader's home; the course folder is a
subfolder of it (formgrader refuses a course root outside its server root). Assignment sources,
the grading steps and their order come from the course repository's own configuration, so a
release made from formgrader never contains ``grading.py`` and autograding uses the sandbox.
"""
import os
import sys

CLONE = os.environ.get("ATTNLAB_CLONE", "/opt/attnlab-hub/course")  # the course repository, read-only
if CLONE not in sys.path:
    sys.path.insert(0, CLONE)  # the autograder package (grading steps)

c = get_config()  # noqa: F821 - provided by traitlets
load_subconfig(os.path.join(CLONE, "autograder", "nbgrader_config.py"))  # noqa: F821
c.CourseDirectory.root = os.environ.get("ATTNLAB_COURSE", os.path.expanduser("~/course"))
c.CourseDirectory.course_id = os.environ.get("ATTNLAB_COURSE_ID", "attnlab")
c.Exchange.root = os.environ.get("ATTNLAB_EXCHANGE", "/srv/nbgrader/exchange")
if os.environ.get("ATTNLAB_DB"):  # the gradebook `python -m autograder grade --db` writes to
    from autograder.course import normalize_db_url
    c.CourseDirectory.db_url = normalize_db_url(os.environ["ATTNLAB_DB"])
