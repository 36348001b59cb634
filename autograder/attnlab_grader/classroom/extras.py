"""What grading needs beyond a learner's install: the ``[grader]`` extra of the ``attnlab`` distribution.

A learner's environment (``pip install attnlab``, ``./start.sh``) holds the course library and the
judging part of this package (``attnlab check`` grades with it); the instructor's features that talk to
a PostgreSQL gradebook, compare submissions or pass grades back to an LMS need the packages of
``pip install 'attnlab[grader]'``.  Their list has one home, ``pyproject.toml``'s
``[project.optional-dependencies] grader``; this module reads it back from the installed metadata, so
``attnlab-grade`` can say in one sentence what is missing instead of a traceback.
"""
from __future__ import annotations

import importlib.metadata as md
import re

import click

EXTRA = "grader"
_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*["']""" + EXTRA + r"""["']""")


def grader_requirements() -> list[str]:
    """Distribution names in the ``[grader]`` extra (e.g. ``["psycopg", "copydetect", ...]``), from the
    installed ``attnlab`` metadata; ``[]`` when ``attnlab`` is not installed (a bare clone on ``sys.path``)."""
    try:
        requires = md.requires("attnlab") or []
    except md.PackageNotFoundError:
        return []
    names = []
    for req in requires:
        spec, _, marker = req.partition(";")
        if _EXTRA_MARKER.search(marker):
            names.append(re.split(r"[\s\[<>=!~(]", spec.strip(), maxsplit=1)[0])
    return names


def missing_grader_packages() -> list[str]:
    """The distributions of the ``[grader]`` extra that are not installed here (``[]`` in a grader's install)."""
    missing = []
    for name in grader_requirements():
        try:
            md.version(name)
        except md.PackageNotFoundError:
            missing.append(name)
    return missing


class GraderGroup(click.Group):
    """``attnlab-grade``'s command group: a command that fails to import a module while the ``[grader]``
    packages are missing ends with one sentence saying what to install (exit status 1), not a traceback."""

    def invoke(self, ctx: click.Context):
        """Run the command; a missing grader-only package ends in one sentence naming the extra to install (exit 1)."""
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as err:
            missing = missing_grader_packages()
            if not missing:
                raise
            raise click.ClickException(
                f"{err}: this command needs the grader's packages, which this environment lacks "
                f"({', '.join(missing)}); install them with pip install 'attnlab[{EXTRA}]' "
                f"(in a clone: bash scripts/setup.sh --extras {EXTRA}).") from None
