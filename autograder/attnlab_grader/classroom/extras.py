"""What grading needs beyond a learner's install: the dependencies of the ``attnlab-grader`` distribution.

A learner's environment (``pip install attnlab``, ``./start.sh``) holds the course library and the
judging part of this package (``attnlab check`` grades with it); the instructor's features that talk to
a PostgreSQL gradebook, compare submissions or pass grades back to an LMS come with the grader's own
distribution, ``attnlab-grader`` (``autograder/pyproject.toml``), and the packages it requires.  Their
list has one home, that file's ``[project] dependencies``; this module reads it back from the installed
metadata (or, in a clone where only the learner's distribution is installed, from the file beside this
package), so ``attnlab-grade`` can say in one sentence what is missing instead of a traceback.
"""
from __future__ import annotations

import importlib.metadata as md
import re
import tomllib
from pathlib import Path

import click

DIST = "attnlab-grader"
#: the grader's pyproject in a clone: autograder/pyproject.toml, beside the package folder
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
INSTALL = ("install the grader's distribution from the course repository with pip install ./autograder "
           "(in a clone: bash scripts/setup.sh --extras grader)")


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~(;]", requirement.strip(), maxsplit=1)[0]


def grader_requirements() -> list[str]:
    """Distribution names the grader requires beyond ``attnlab`` (e.g. ``["psycopg", "copydetect", ...]``),
    from the installed ``attnlab-grader`` metadata, else from ``autograder/pyproject.toml`` beside this
    package (a clone); ``[]`` when neither is there."""
    try:
        requires = [r for r in md.requires(DIST) or [] if not re.search(r"\bextra\s*==", r.partition(";")[2])]
    except md.PackageNotFoundError:
        try:
            project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
        except (OSError, ValueError, KeyError):
            return []
        if project.get("name") != DIST:
            return []
        requires = list(project.get("dependencies", []))
    return [n for n in map(_name, requires) if n.lower() != "attnlab"]


def missing_grader_packages() -> list[str]:
    """The distributions the grader requires that are not installed here (``[]`` in a grader's install)."""
    missing = []
    for name in grader_requirements():
        try:
            md.version(name)
        except md.PackageNotFoundError:
            missing.append(name)
    return missing


class GraderGroup(click.Group):
    """``attnlab-grade``'s command group: a command that fails to import a module while the grader's
    packages are missing ends with one sentence saying what to install (exit status 1), not a traceback."""

    def invoke(self, ctx: click.Context):
        """Run the command; a missing grader-only package ends in one sentence naming what to install (exit 1)."""
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as err:
            missing = missing_grader_packages()
            if not missing:
                raise
            raise click.ClickException(
                f"{err}: this command needs the grader's packages, which this environment lacks "
                f"({', '.join(missing)}); {INSTALL}.") from None
