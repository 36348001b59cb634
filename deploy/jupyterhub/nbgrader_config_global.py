"""nbgrader settings for EVERY user of the hub (installed as <course-env>/etc/jupyter/nbgrader_config.py).

Students fetch, submit and fetch feedback through nbgrader's filesystem exchange; the course id
is fixed, so students need no hub group to see the course.
"""
from attnlab.settings import grader_settings  # the course environment's attnlab (docs/settings.md)

c = get_config()  # noqa: F821 - provided by traitlets
settings = grader_settings()
c.CourseDirectory.course_id = settings.course_id
c.Exchange.root = str(settings.exchange or "/srv/nbgrader/exchange")
# `attnlab check` in a graded class: only the notebook's own check cells, never the grader's hidden
# inputs or model answers ("full", "visible" or "off"; per set: c.SelfCheck.assignments = {...}).
# Read from this system-wide file only, so students cannot change it (see attnlab/check.py).
c.SelfCheck.default = "visible"
