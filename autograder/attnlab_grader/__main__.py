"""``python -m attnlab_grader``: the instructor's command line, :func:`attnlab_grader.classroom.main.cli`.

This file ships with the learner's distribution (beside the package's ``__init__``); the commands come with the
instructor's distribution, ``attnlab-grader``.  Without it, this says in one sentence what to install.
"""
from __future__ import annotations

import sys

try:
    from attnlab_grader.classroom.main import cli
except ModuleNotFoundError as err:  # a learner's install: judging and sandbox only
    if not (err.name or "").startswith("attnlab_grader."):
        raise
    sys.exit("python -m attnlab_grader: the instructor's commands come with the grader's distribution, "
             "attnlab-grader, which is not installed here; install it from the course repository with "
             "pip install ./autograder (in a clone: bash scripts/setup.sh --extras grader).")

if __name__ == "__main__":
    cli()
