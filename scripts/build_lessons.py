"""Build the lesson notebooks (lessons/NN_*.ipynb) from their text source (lessons/src/NN_*.py).

The lessons are authored as jupytext "py:percent" files: ``# %%`` starts a code cell,
``# %% [markdown]`` a markdown cell whose lines are commented with ``# ``. The ``.ipynb`` files
next to them are generated, committed without outputs, so JupyterLab opens them directly.

    python scripts/build_lessons.py            # (re)write every lessons/NN_*.ipynb from lessons/src/
    python scripts/build_lessons.py --check    # exit 1 and name the files that are out of date
    python scripts/build_lessons.py --from-notebooks   # one-off: write lessons/src/ from the notebooks
    python scripts/build_lessons.py --coverage # fill the "cell" column of docs/coverage.md from its anchors

``make lessons`` runs the first. tests/notebooks/test_lessons_source.py runs the check (no
execution, about a second). Edit the ``.py`` file, never the ``.ipynb``: a notebook edited in
JupyterLab must be copied back with ``--from-notebooks`` (it keeps only sources, not outputs).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
SOURCES = LESSONS / "src"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
# the text form keeps only the kernelspec in its header and no cell metadata
TEXT_METADATA = {"notebook_metadata_filter": "kernelspec,-jupytext.text_representation.jupytext_version",
                 "cell_metadata_filter": "-all"}


def notebook_from_source(source: Path) -> nbformat.NotebookNode:
    """The stripped notebook (no outputs, ids "0", "1", ...) that a lesson's .py source describes.

    Raises ValueError naming the file when it has no cells.
    """
    text_nb = jupytext.read(source, fmt="py:percent")
    if not text_nb.cells:
        raise ValueError(f"{source}: no cells found (does it use '# %%' cell markers?)")
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": dict(KERNELSPEC)}
    for i, cell in enumerate(text_nb.cells):
        if cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(cell.source)
        elif cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(cell.source)
        else:
            new = nbformat.v4.new_raw_cell(cell.source)
        new.id = str(i)
        nb.cells.append(new)
    nbformat.validate(nb)
    return nb


def notebook_text(nb: nbformat.NotebookNode) -> str:
    """The committed JSON text of ``nb`` (nbformat's serialisation plus a final newline)."""
    return nbformat.writes(nb) + "\n"


def write_built(path: Path, text: str, shown: str) -> None:
    """Write ``text`` to ``path`` unless it already holds exactly that, saying ``built <shown>`` when it writes."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
        print(f"built {shown}")


def source_text(nb: nbformat.NotebookNode) -> str:
    """The py:percent text of a notebook's cells (outputs and cell metadata dropped)."""
    nb = nbformat.from_dict(nb)
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "jupytext": dict(TEXT_METADATA)}
    for cell in nb.cells:
        cell.metadata = {}
    return jupytext.writes(nb, fmt="py:percent")


def pairs() -> list[tuple[Path, Path]]:
    """(source .py, notebook .ipynb) for every lesson source."""
    return [(src, LESSONS / f"{src.stem}.ipynb") for src in sorted(SOURCES.glob("[0-9][0-9]_*.py"))]


def stale() -> list[str]:
    """Lessons whose .ipynb is not what their .py source builds, or that have only one of the two."""
    problems = []
    for src, ipynb in pairs():
        if not ipynb.exists():
            problems.append(f"{ipynb.relative_to(ROOT)} is missing (build it from {src.relative_to(ROOT)})")
        elif ipynb.read_text(encoding="utf-8") != notebook_text(notebook_from_source(src)):
            problems.append(f"{ipynb.relative_to(ROOT)} differs from {src.relative_to(ROOT)}")
    built = {ipynb for _, ipynb in pairs()}
    for ipynb in sorted(LESSONS.glob("[0-9][0-9]_*.ipynb")):
        if ipynb not in built:
            problems.append(f"{ipynb.relative_to(ROOT)} has no text source in {SOURCES.relative_to(ROOT)}/")
    return problems


COVERAGE = ROOT / "docs" / "coverage.md"


def _coverage_lines() -> list[str]:
    return COVERAGE.read_text(encoding="utf-8").splitlines()


def coverage_rows() -> list[dict]:
    """The rows of docs/coverage.md: topic, seeds, lesson ("NN"), cell (as written), anchor, line index."""
    rows = []
    for i, line in enumerate(_coverage_lines()):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].isdigit():
            rows.append({"line": i, "n": cells[0], "topic": cells[1], "seeds": cells[2], "lesson": cells[3],
                         "cell": cells[4], "anchor": cells[5].strip("`")})
    return rows


def _cell_sources(lesson: str) -> list[str]:
    matches = sorted(LESSONS.glob(f"{lesson}_*.ipynb"))
    return [cell.source for cell in nbformat.read(matches[0], as_version=4).cells] if matches else []


def find_cell(lesson: str, anchor: str, _cache: dict | None = None) -> int | None:
    """Index of the first cell of lesson NN whose source contains ``anchor`` (None when none does)."""
    if _cache is None:
        _cache = {}
    if lesson not in _cache:
        _cache[lesson] = _cell_sources(lesson)
    sources = _cache[lesson]
    return next((i for i, source in enumerate(sources) if anchor in source), None)


def coverage_problems() -> list[str]:
    """Rows of docs/coverage.md whose anchor is not in the lesson, or whose cell number is stale."""
    problems, cache = [], {}
    for row in coverage_rows():
        found = find_cell(row["lesson"], row["anchor"], cache)
        if found is None:
            problems.append(f"row {row['n']} ({row['topic']}): {row['anchor']!r} is in no cell of lesson {row['lesson']}")
        elif row["cell"] != str(found):
            problems.append(f"row {row['n']} ({row['topic']}): cell {row['cell']} should be {found}")
    return problems


def fill_coverage() -> None:
    lines, cache = _coverage_lines(), {}
    for row in coverage_rows():
        found = find_cell(row["lesson"], row["anchor"], cache)
        cell = "MISSING" if found is None else str(found)
        lines[row["line"]] = (f"| {row['n']} | {row['topic']} | {row['seeds']} | {row['lesson']} | {cell} | "
                              f"`{row['anchor']}` |")
    COVERAGE.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="only report notebooks that are out of date")
    mode.add_argument("--coverage", action="store_true", help="fill the cell column of docs/coverage.md")
    mode.add_argument("--from-notebooks", action="store_true",
                      help="write lessons/src/*.py from the notebooks (sources only)")
    args = parser.parse_args(argv)
    if args.coverage:
        fill_coverage()
        problems = coverage_problems()
        for line in problems:
            print(line, file=sys.stderr)
        return 1 if problems else 0
    if args.from_notebooks:
        SOURCES.mkdir(exist_ok=True)
        for ipynb in sorted(LESSONS.glob("[0-9][0-9]_*.ipynb")):
            target = SOURCES / f"{ipynb.stem}.py"
            target.write_text(source_text(nbformat.read(ipynb, as_version=4)), encoding="utf-8")
            print(f"wrote {target.relative_to(ROOT)}")
        return 0
    if args.check:
        problems = stale()
        for line in problems:
            print(line, file=sys.stderr)
        if problems:
            print("run: python scripts/build_lessons.py  (or make lessons)", file=sys.stderr)
        return 1 if problems else 0
    if not pairs():
        print(f"no lesson sources in {SOURCES}", file=sys.stderr)
        return 1
    for src, ipynb in pairs():
        write_built(ipynb, notebook_text(notebook_from_source(src)), str(ipynb.relative_to(ROOT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
