"""Render docs/settings.md's table of every ``ATTNLAB_*`` variable from src/attnlab/settings.py.

    python scripts/render_settings_table.py            # print the table
    python scripts/render_settings_table.py --write    # rewrite it in docs/settings.md, between the markers
    python scripts/render_settings_table.py --check    # exit 1 (saying what to run) if docs/settings.md is stale

Only the block between ``START`` and ``END`` (HTML comments) is ever rewritten.
``tests/test_settings.py`` runs the same comparison as ``--check``.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "settings.md"
START = "<!-- settings-table:start: generated from src/attnlab/settings.py by scripts/render_settings_table.py -->"
END = "<!-- settings-table:end -->"
COMMAND = "python scripts/render_settings_table.py --write"


def _table() -> str:
    try:
        from attnlab.settings import settings_table_markdown
    except ImportError:  # run from a clone without the package installed
        sys.path.insert(0, str(ROOT / "src"))
        from attnlab.settings import settings_table_markdown
    return settings_table_markdown()


def splice(doc: str, table: str) -> str:
    """``doc`` with the text between ``START`` and ``END`` replaced by ``table``.

    Raises ValueError when the markers are missing, repeated or out of order (nothing is guessed)."""
    starts, ends = doc.count(START), doc.count(END)
    if starts != 1 or ends != 1 or doc.index(START) > doc.index(END):
        raise ValueError(f"docs/settings.md must hold the line {START!r} once, followed later by {END!r} once "
                         f"(found {starts} and {ends}); put them around the settings table")
    head, rest = doc.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite the table in docs/settings.md")
    mode.add_argument("--check", action="store_true", help="exit 1 if docs/settings.md's table is not the rendered one")
    args = ap.parse_args(argv)
    table = _table()
    if not (args.write or args.check):
        sys.stdout.write(table)
        return 0
    doc = DOC.read_text(encoding="utf-8")
    try:
        fresh = splice(doc, table)
    except ValueError as err:
        print(err, file=sys.stderr)
        return 1
    if args.check:
        if fresh != doc:
            print(f"docs/settings.md's table differs from src/attnlab/settings.py; run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    if fresh != doc:
        DOC.write_text(fresh, encoding="utf-8")
        print("docs/settings.md: settings table rewritten")
    else:
        print("docs/settings.md: settings table already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
