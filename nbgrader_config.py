"""nbgrader configuration for formgrader and the nbgrader CLI started from the repository root.

A thin wrapper around ``autograder/nbgrader_config.py`` (the real configuration). The course folder
(submitted/, autograded/, feedback/, gradebook.db) is ``$ATTNLAB_COURSE``, default ``autograder/course``
(git-ignored); ``python -m autograder grade`` writes the same layout. Assignment sources are read
from ``solutions/``. See autograder/README.md.
"""
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
if _here not in sys.path:  # config files are exec'd by Jupyter; make the autograder package importable
    sys.path.insert(0, _here)

c = get_config()  # noqa: F821 - provided by traitlets
load_subconfig(os.path.join(_here, "autograder", "nbgrader_config.py"))  # noqa: F821
c.CourseDirectory.root = os.environ.get("ATTNLAB_COURSE", os.path.join(_here, "autograder", "course"))
# Formgrader lists the course's assignments straight from a clone: the sources are solutions/
# (an absolute source_directory is joined as-is by nbgrader's CourseDirectory.format_path).
c.CourseDirectory.source_directory = os.path.join(_here, "solutions")
# A writable exchange inside the course folder (the default /usr/local/share/... is not).
c.Exchange.root = os.path.join(c.CourseDirectory.root, ".exchange")
os.makedirs(c.Exchange.root, exist_ok=True)
# A PostgreSQL (or other SQLAlchemy) gradebook instead of COURSE/gradebook.db: the same URL that
# `python -m autograder grade --db URL` takes (it also reads ATTNLAB_DB), so formgrader and the
# grading pipeline share one gradebook. postgresql://... means the psycopg 3 driver.
if os.environ.get("ATTNLAB_DB"):
    from autograder.course import normalize_db_url
    c.CourseDirectory.db_url = normalize_db_url(os.environ["ATTNLAB_DB"])
