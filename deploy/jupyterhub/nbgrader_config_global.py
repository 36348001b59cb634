"""nbgrader settings for EVERY user of the hub (installed as <course-env>/etc/jupyter/nbgrader_config.py).

Students fetch, submit and fetch feedback through nbgrader's filesystem exchange; the course id
is fixed, so students need no hub group to see the course.  ``ATTNLAB_COURSE_ID`` and
``ATTNLAB_EXCHANGE`` are the hub's variables (deploy/jupyterhub/settings.py, docs/settings.md), read here
directly: students' servers do not hold the grader's settings.
"""
import os

c = get_config()  # noqa: F821 - provided by traitlets
c.CourseDirectory.course_id = os.environ.get("ATTNLAB_COURSE_ID", "attnlab")
c.Exchange.root = os.environ.get("ATTNLAB_EXCHANGE", "/srv/nbgrader/exchange")
# `attnlab check` in a graded class: only the notebook's own check cells, never the grader's hidden
# inputs or model answers ("full", "visible" or "off"; per set: c.SelfCheck.assignments = {...}).
# Read from this system-wide file only, so students cannot change it (see attnlab/check.py).
c.SelfCheck.default = "visible"
