"""Build the nbgrader source notebooks (solutions/NN_x/NN_x.ipynb) from their text source (NN_x.pct.py).

Each exercise set is authored as a jupytext "py:percent" file next to its notebook,
``solutions/NN_x/NN_x.pct.py``. Jupytext's own cell-header syntax carries what nbgrader needs::

    # %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
    # %% nbgrader={"grade": true, "grade_id": "test_softmax", "locked": true, "points": 2, "schema_version": 3, "solution": false}

All cell metadata is kept (``cell_metadata_filter: all``), the notebook metadata too (kernelspec,
language_info). The cell ``id`` is not cell metadata in nbformat and jupytext drops it, so it is
written into the header as ``id="..."`` only where it differs from the cell's nbgrader ``grade_id``
(the convention, autograder/AUTHORING.md); a cell with neither gets ``cell-<index>``. The ``.ipynb``
is written by nbformat exactly as Jupyter saves it, without outputs.

Why ``.pct.py`` (jupytext's suffix for paired percent scripts) and not ``NN_x.py``: the file must not
reach students. ``CourseDirectory.ignore`` (autograder/nbgrader_config.py) lists ``*.pct.py``, so
nbgrader never copies it into a release, and the QA loaders read only ``wrong/*.py`` and
``honest/*.py``. A separate ``solutions/src/`` folder is not possible: every folder of ``solutions/``
is an nbgrader assignment (formgrader would list ``src``).

    python scripts/build_solutions.py                     # (re)write every solutions/*/*.ipynb from its .pct.py
    python scripts/build_solutions.py 03_masks            # only these sets (names, folders or files)
    python scripts/build_solutions.py --check             # exit 1 and name the notebooks that are out of date
    python scripts/build_solutions.py --from-notebooks solutions/09_capstone/09_capstone.ipynb
                      # write the .pct.py from a notebook edited in Jupyter (all sets when none is named)

``make solutions`` runs the first, ``make notebooks`` builds lessons and solutions, ``make check-notebooks``
checks both. tests/notebooks/test_solutions_source.py runs the check (no execution, about a second).
``--from-notebooks`` keeps sources and metadata, drops outputs, refuses (writing nothing) when the text
could not rebuild the notebook exactly, and re-serialises the ``.ipynb`` so that the check passes.
After any change, regenerate ``exercises/`` with ``make exercises``.
"""
from __future__ import annotations

import argparse
import copy
import importlib.util
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from autograder.course import solutions_dir  # noqa: E402 - the course's solutions/ (ATTNLAB_SOLUTIONS overrides)

SOLUTIONS = solutions_dir()

SUFFIX = ".pct.py"  # also in CourseDirectory.ignore (autograder/nbgrader_config.py): never released
TEXT_METADATA = {"notebook_metadata_filter": "all,-jupytext.text_representation.jupytext_version",
                 "cell_metadata_filter": "all"}
COMMAND = "python scripts/build_solutions.py  (or make solutions)"

# one serialisation for every committed notebook: the lessons' (nbformat.writes + newline)
_spec = importlib.util.spec_from_file_location("build_lessons", Path(__file__).with_name("build_lessons.py"))
build_lessons = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_lessons)
notebook_text = build_lessons.notebook_text


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def notebook_from_text(text: str, name: str = "<text>") -> nbformat.NotebookNode:
    """The notebook (nbformat 4.5, no outputs) that a set's py:percent text describes.

    Cell ids: the header's ``id="..."``, else the nbgrader ``grade_id``, else ``cell-<index>``.
    Raises ValueError naming ``name`` when the text has no cells or two cells get the same id.
    """
    text_nb = jupytext.reads(text, fmt="py:percent")
    if not text_nb.cells:
        raise ValueError(f"{name}: no cells found (does it use '# %%' cell markers?)")
    nb = nbformat.v4.new_notebook()
    nb.metadata = {k: v for k, v in text_nb.metadata.items() if k != "jupytext"}
    new_cell = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell,
                "raw": nbformat.v4.new_raw_cell}
    seen = {}
    for i, cell in enumerate(text_nb.cells):
        metadata = dict(cell.metadata)
        cell_id = str(metadata.pop("id", None) or _grade_id(cell) or f"cell-{i}")
        if cell_id in seen:
            raise ValueError(f"{name}: cells {seen[cell_id]} and {i} both have id {cell_id!r}; "
                             "give one a unique grade_id (or id=\"...\" in its '# %%' header)")
        seen[cell_id] = i
        new = new_cell[cell.cell_type](cell.source, metadata=metadata)
        new.id = cell_id
        nb.cells.append(new)
    nbformat.validate(nb)
    return nb


def stripped(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` without outputs, execution counts and jupytext pairing metadata."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("jupytext", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def text_from_notebook(nb: nbformat.NotebookNode, name: str = "<notebook>") -> str:
    """The py:percent text of a notebook: sources, all cell metadata, ids that differ from grade_id.

    Raises ValueError when a cell's metadata already has an ``id`` key (it would be read as the cell id).
    """
    nb = stripped(nb)
    nb.metadata["jupytext"] = dict(TEXT_METADATA)
    for i, cell in enumerate(nb.cells):
        if "id" in cell.metadata:
            raise ValueError(f"{name}: cell {i} has metadata key 'id', which the text form reserves for the cell id")
        header = {} if cell.get("id") == _grade_id(cell) else {"id": cell.get("id") or f"cell-{i}"}
        cell.metadata = {**header, **cell.metadata}
    return jupytext.writes(nb, fmt="py:percent")


def text_path(ipynb: Path) -> Path:
    return ipynb.with_name(ipynb.stem + SUFFIX)


def notebook_path(text: Path) -> Path:
    return text.with_name(text.name[: -len(SUFFIX)] + ".ipynb")


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def sets(root: Path = SOLUTIONS, only: list[str] | None = None) -> list[Path]:
    """Set folders of ``root`` (``NN_x`` holding ``NN_x.ipynb`` or ``NN_x.pct.py``), or those named in ``only``
    (set names, folders, notebooks or text files). Raises SystemExit for a name that is no set."""
    found = sorted(p for p in Path(root).iterdir() if p.is_dir() and
                   ((p / f"{p.name}.ipynb").exists() or (p / f"{p.name}{SUFFIX}").exists()))
    if not only:
        return found
    chosen = []
    for item in only:
        path = Path(item)
        folder = path.parent if path.suffix in (".ipynb", ".py") else path
        match = next((p for p in found if p.name == folder.name), None)
        if match is None:
            raise SystemExit(f"{item}: not an exercise set in {_rel(Path(root))}/ "
                             f"(known: {', '.join(p.name for p in found)})")
        chosen.append(match)
    return chosen


def stale(root: Path = SOLUTIONS, only: list[str] | None = None) -> list[str]:
    """Sets whose .ipynb is not byte for byte what their .pct.py builds, or that have only one of the two."""
    problems = []
    for folder in sets(root, only):
        ipynb, text = folder / f"{folder.name}.ipynb", folder / f"{folder.name}{SUFFIX}"
        if not text.exists():
            problems.append(f"{_rel(ipynb)} has no text source {text.name} "
                            f"(create it: python scripts/build_solutions.py --from-notebooks {_rel(ipynb)})")
        elif not ipynb.exists():
            problems.append(f"{_rel(ipynb)} is missing (build it from {_rel(text)})")
        elif ipynb.read_text(encoding="utf-8") != build(text):
            problems.append(f"{_rel(ipynb)} differs from {_rel(text)}")
    return problems


def build(text: Path) -> str:
    """The committed JSON text of the notebook that ``text`` (a .pct.py file) builds."""
    return notebook_text(notebook_from_text(text.read_text(encoding="utf-8"), _rel(text)))


def from_notebook(ipynb: Path) -> list[str]:
    """Write ``ipynb``'s text source and re-serialise ``ipynb`` as the build writes it; what was written.

    Raises ValueError (writing nothing) when the text would not rebuild the notebook's cells,
    metadata and ids exactly (outputs and execution counts are dropped on purpose).
    """
    nb = stripped(nbformat.read(ipynb, as_version=4))
    text = text_from_notebook(nb, _rel(ipynb))
    rebuilt = notebook_from_text(text, _rel(text_path(ipynb)))
    if rebuilt != nb:
        where = next((i for i, (a, b) in enumerate(zip(nb.cells, rebuilt.cells)) if a != b),
                     "metadata" if nb.metadata != rebuilt.metadata else min(len(nb.cells), len(rebuilt.cells)))
        raise ValueError(f"{_rel(ipynb)}: the text form would not rebuild the notebook (first difference: "
                         f"cell {where}); nothing written")
    json_text = notebook_text(rebuilt)
    # the text of the notebook as the build writes it (key order etc.), so a second run writes nothing
    text = text_from_notebook(nbformat.reads(json_text, as_version=4), _rel(ipynb))
    written = []
    target = text_path(ipynb)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
        written.append(f"wrote {_rel(target)}")
    if ipynb.read_text(encoding="utf-8") != json_text:
        ipynb.write_text(json_text, encoding="utf-8")
        written.append(f"re-serialised {_rel(ipynb)} (same cells and metadata; outputs dropped)")
    return written


def main(argv: list[str] | None = None, root: Path = SOLUTIONS) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*", metavar="SET",
                        help="exercise sets to handle (name, folder, .ipynb or .pct.py); default: all")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="only report notebooks that are out of date")
    mode.add_argument("--from-notebooks", action="store_true",
                      help="write NN_x.pct.py from NN_x.ipynb (after editing the notebook in Jupyter)")
    args = parser.parse_args(argv)
    folders = sets(root, args.only)
    if not folders:
        print(f"no exercise sets in {root}", file=sys.stderr)
        return 1
    if args.from_notebooks:
        for folder in folders:
            ipynb = folder / f"{folder.name}.ipynb"
            if not ipynb.exists():
                print(f"{_rel(ipynb)} is missing", file=sys.stderr)
                return 1
            try:
                for line in from_notebook(ipynb):
                    print(line)
            except ValueError as err:
                print(err, file=sys.stderr)
                return 1
        return 0
    if args.check:
        problems = stale(root, args.only)
        for line in problems:
            print(line, file=sys.stderr)
        if problems:
            print(f"run: {COMMAND}, then make exercises", file=sys.stderr)
        return 1 if problems else 0
    for folder in folders:
        ipynb, text = folder / f"{folder.name}.ipynb", folder / f"{folder.name}{SUFFIX}"
        if not text.exists():
            print(f"{_rel(ipynb)} has no text source; create it with --from-notebooks {_rel(ipynb)}",
                  file=sys.stderr)
            return 1
        try:
            json_text = build(text)
        except ValueError as err:
            print(err, file=sys.stderr)
            return 1
        if not ipynb.exists() or ipynb.read_text(encoding="utf-8") != json_text:
            ipynb.write_text(json_text, encoding="utf-8")
            print(f"built {_rel(ipynb)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
