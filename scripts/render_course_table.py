"""Render the README's course table from the course registry (src/attnlab/course.py).

    python scripts/render_course_table.py            # print the table
    python scripts/render_course_table.py --write    # rewrite it in README.md, between the markers
    python scripts/render_course_table.py --check    # exit 1 (saying what to run) if README.md is stale

The table lives in README.md between ``START`` and ``END`` (HTML comments, invisible on GitHub); only
that block is ever rewritten. ``tests/test_course_registry.py`` runs the same comparison as ``--check``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
START = "<!-- course-table:start: generated from src/attnlab/course.py by scripts/render_course_table.py -->"
END = "<!-- course-table:end -->"
COMMAND = "python scripts/render_course_table.py --write"


def _table() -> str:
    try:
        from attnlab.course import course_table_markdown
    except ImportError:  # run from a clone without the package installed
        sys.path.insert(0, str(ROOT / "src"))
        from attnlab.course import course_table_markdown
    return course_table_markdown()


def splice(readme: str, table: str) -> str:
    """``readme`` with the text between ``START`` and ``END`` replaced by ``table``.

    Raises ValueError when the markers are missing, repeated or out of order (nothing is guessed)."""
    starts, ends = readme.count(START), readme.count(END)
    if starts != 1 or ends != 1 or readme.index(START) > readme.index(END):
        raise ValueError(f"README.md must hold the line {START!r} once, followed later by {END!r} once "
                         f"(found {starts} and {ends}); put them around the course table")
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite the table in README.md")
    mode.add_argument("--check", action="store_true", help="exit 1 if README.md's table is not the rendered one")
    args = ap.parse_args(argv)
    table = _table()
    if not (args.write or args.check):
        sys.stdout.write(table)
        return 0
    readme = README.read_text(encoding="utf-8")
    try:
        fresh = splice(readme, table)
    except ValueError as err:
        print(err, file=sys.stderr)
        return 1
    if args.check:
        if fresh != readme:
            print(f"README.md's course table differs from src/attnlab/course.py; run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    if fresh != readme:
        README.write_text(fresh, encoding="utf-8")
        print("README.md: course table rewritten")
    else:
        print("README.md: course table already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
