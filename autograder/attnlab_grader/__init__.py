"""attnlab's grader: nbgrader steps that grade exercise notebooks in a sandbox (``attnlab-grade``).

Two distributions install this package: the learner's ``attnlab`` brings this file, ``__main__``,
``judging`` and ``sandbox`` (what ``attnlab check`` needs); the instructor's ``attnlab-grader``
(``autograder/pyproject.toml``) brings ``records``, ``steps``, ``reports`` and ``classroom``.  Installed
together they share one folder.  Where the instructor's part is installed into a folder of its own on
``PYTHONPATH`` (a hub's grader-site, readable by the graders only), :func:`pkgutil.extend_path` adds
that folder's ``attnlab_grader/`` to this package, so both parts import as one.
"""
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
