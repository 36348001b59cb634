"""Render the tables that are generated from code into Markdown: the README's course table (from the
course registry, src/attnlab/course.py) and docs/settings.md's tables of every ``ATTNLAB_*`` variable, one
per role (gathered from each role's declarations by scripts/settings_catalog.py).

    python scripts/render_tables.py                    # print both tables
    python scripts/render_tables.py --write            # rewrite them in README.md and docs/settings.md
    python scripts/render_tables.py --check            # exit 1 (saying what to run) if a file is stale
    python scripts/render_tables.py --check settings   # only one table: course or settings

Each table lives between two marker lines (HTML comments, invisible on GitHub); only that block is ever
rewritten, and nothing is guessed when the markers are missing. ``tests/test_course_registry.py`` and
``tests/test_settings.py`` run the same comparison as ``--check``.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = "python scripts/render_tables.py --write"


@dataclass(frozen=True)
class Table:
    """One generated block: ``path`` (from the repository root) holds it between ``start`` and ``end``;
    ``<module>.<function>()`` renders it from the file ``source``."""

    name: str
    path: str
    source: str
    module: str
    function: str

    @property
    def start(self) -> str:
        return (f"<!-- {self.name}-table:start: generated from {self.source} "
                f"by scripts/render_tables.py -->")

    @property
    def end(self) -> str:
        return f"<!-- {self.name}-table:end -->"

    def render(self) -> str:
        """The table as the code renders it now (imported from this clone's src/ and scripts/ when attnlab is
        not installed or this script is imported from elsewhere)."""
        try:
            module = importlib.import_module(self.module)
        except ImportError:
            for folder in ("src", "scripts"):
                if str(ROOT / folder) not in sys.path:
                    sys.path.insert(0, str(ROOT / folder))
            module = importlib.import_module(self.module)
        return getattr(module, self.function)()

    def splice(self, text: str, table: str) -> str:
        """``text`` (the file's content) with the lines between the markers replaced by ``table``.

        Raises ValueError when the markers are missing, repeated or out of order."""
        starts, ends = text.count(self.start), text.count(self.end)
        if starts != 1 or ends != 1 or text.index(self.start) > text.index(self.end):
            raise ValueError(f"{self.path} must hold the line {self.start!r} once, followed later by {self.end!r} "
                             f"once (found {starts} and {ends}); put them around the {self.name} table")
        head, rest = text.split(self.start, 1)
        _, tail = rest.split(self.end, 1)
        return f"{head}{self.start}\n{table}{self.end}{tail}"


TABLES = {t.name: t for t in (Table("course", "README.md", "src/attnlab/course.py", "attnlab.course",
                                    "course_table_markdown"),
                              Table("settings", "docs/settings.md", "scripts/settings_catalog.py", "settings_catalog",
                                    "settings_markdown"))}


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tables", nargs="*", metavar="TABLE", help=f"which tables ({', '.join(TABLES)}); default: all")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite the tables in their files")
    mode.add_argument("--check", action="store_true", help="exit 1 if a file's table is not the rendered one")
    args = ap.parse_args(argv)
    unknown = [name for name in args.tables if name not in TABLES]
    if unknown:
        ap.error(f"no table {unknown[0]!r}; the tables are {', '.join(TABLES)}")
    status = 0
    for table in (TABLES[name] for name in (args.tables or TABLES)):
        rendered = table.render()
        if not (args.write or args.check):
            sys.stdout.write(rendered)
            continue
        path = root / table.path
        text = path.read_text(encoding="utf-8")
        try:
            fresh = table.splice(text, rendered)
        except ValueError as err:
            print(err, file=sys.stderr)
            status = 1
            continue
        if args.check:
            if fresh != text:
                print(f"{table.path}'s {table.name} table differs from {table.source}; "
                      f"run `{COMMAND}`", file=sys.stderr)
                status = 1
        elif fresh != text:
            path.write_text(fresh, encoding="utf-8")
            print(f"{table.path}: {table.name} table rewritten")
        else:
            print(f"{table.path}: {table.name} table already up to date")
    return status


if __name__ == "__main__":
    sys.exit(main())
