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
reach students. ``CourseDirectory.ignore`` (autograder/attnlab_grader/steps/nbgrader_config.py) lists ``*.pct.py``, so
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

By-hand items: the three cells of a question answered with pen and paper (the learner's own variant of
a practice skill shown by ``show_problem``, the answer cell, the locked form check whose hidden test the
grader fills in) are written as one marker, expanded by :func:`by_hand_cells`::

    # %% by-hand skill="sdpa_scores" item="scores" variable="scores"
    # answer: scores = [[...], [...]]  the scaled scores, one list per query row (2 decimals)
    # Graded outside your kernel: the numbers in `scores` are checked against your own variant.

(optional ``ids="a b c"`` for the three cell ids, ``points="N"``; the grade ids are ``show_<item>``,
``<item>_by_hand`` and ``test_<item>_by_hand``; the comment lines after ``# answer:`` up to the blank
line are the hidden-test note).

Docstrings from ``attnlab.nn``: where an exercise asks for a function of the reference library under
the same name and signature, its docstring is not copied into the text source. The line right under
the ``def`` reads ``# docstring from attnlab.nn.masks.causal_mask`` (the defining module and the
qualified name, e.g. ``attnlab.nn.mha.MultiHeadAttention.forward`` for a method), and the build puts
the reference's docstring there, read from its source file as written (indented like the marker).
The build refuses a marker whose ``def`` differs from the reference's (arguments, defaults,
annotations, return annotation), so the exercise's contract cannot drift from the library's; the
solution body below it stays the exercise's own. A change to such a docstring in ``attnlab.nn``
makes ``--check`` fail until the notebooks (and ``exercises/``) are rebuilt.
``--from-notebooks`` puts the markers of the existing text source back, and refuses when the notebook
changed a by-hand item (change its marker) or a docstring that comes from ``attnlab.nn`` (change it there).

``# docstring from attnlab.nn.masks.causal_mask, without Raises`` takes the docstring without its
``Raises:`` section and puts :data:`NOT_ASKED` in its place: for an exercise that does not ask for the
library's argument checks, so that every ``Raises:`` a graded function's docstring shows is one the
grader tries (autograder/AUTHORING.md, "Every documented contract is tested as written").
"""
from __future__ import annotations

import argparse
import ast
import copy
import importlib.util
import re
import sys
import textwrap
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from attnlab_grader.records.course import solutions_dir  # noqa: E402 - the course's solutions/ (ATTNLAB_SOLUTIONS overrides)

SOLUTIONS = solutions_dir()

SUFFIX = ".pct.py"  # also in CourseDirectory.ignore (autograder/attnlab_grader/steps/nbgrader_config.py): never released
TEXT_METADATA = {"notebook_metadata_filter": "all,-jupytext.text_representation.jupytext_version",
                 "cell_metadata_filter": "all"}
COMMAND = "python scripts/build_solutions.py  (or make solutions)"

# one serialisation for every committed notebook: the lessons' (nbformat.writes + newline)
_spec = importlib.util.spec_from_file_location("build_lessons", Path(__file__).with_name("build_lessons.py"))
build_lessons = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_lessons)
notebook_text = build_lessons.notebook_text


# "# docstring from attnlab.nn.<module>.<qualname>[, without Raises]" on its own line, right under a def or class line
DOCSTRING_MARKER = re.compile(r"^(?P<indent>[ \t]*)# docstring from (?P<target>attnlab(?:\.\w+)+)"
                              r"(?P<without>,[ \t]*without Raises)?[ \t]*$", re.M)

#: What stands in a docstring taken ``without Raises`` where the library's ``Raises:`` section was
#: (``{target}``: the library's function, whose own docstring lists its checks).
NOT_ASKED = ("Argument checks: not asked in this exercise and not graded;\n"
             "``{target}`` makes them (its docstring's Raises).")


def _reference(target: str) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, list[str]]:
    """The AST node and source lines of ``target`` (``attnlab.<module path>.<qualified name>``).

    The module is found on disk from the installed ``attnlab`` package (nothing is imported, so torch
    is not loaded). Raises ValueError when no module or no function/class of that name exists.
    """
    spec = importlib.util.find_spec("attnlab")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(f"{target}: the attnlab package is not installed (run scripts/setup.sh)")
    base = Path(list(spec.submodule_search_locations)[0])
    parts = target.split(".")[1:]
    for i in range(len(parts) - 1, 0, -1):
        folder = base.joinpath(*parts[:i])
        for module in (folder.with_suffix(".py"), folder / "__init__.py"):
            if not module.is_file():
                continue
            lines = module.read_text(encoding="utf-8").splitlines()
            body: list[ast.stmt] = ast.parse("\n".join(lines)).body
            node = None
            for name in parts[i:]:
                node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                             and n.name == name), None)
                if node is None:
                    break
                body = node.body
            if node is not None:
                return node, lines
            raise ValueError(f"{target}: {module.relative_to(base.parent)} defines no {'.'.join(parts[i:])}")
    raise ValueError(f"{target}: no such module in attnlab")


def _signature(node: ast.AST) -> str:
    """What must agree between an exercise's def and the reference's: arguments, defaults, annotations."""
    if isinstance(node, ast.ClassDef):
        return ast.dump(ast.Tuple([*node.bases, *node.keywords], ast.Load()))
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    return ast.dump(node.args) + "->" + (ast.dump(node.returns) if node.returns else "")


def _drop_raises(text: str, target: str) -> str:
    """``text`` (a docstring as written) with its ``Raises:`` section (the header line and every line
    indented deeper, up to the next line indented as the header or less) replaced by :data:`NOT_ASKED`.
    Raises ValueError when it has no ``Raises:`` section (the marker would promise a removal that
    does not happen)."""
    lines = text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.strip() == "Raises:"), None)
    if at is None:
        raise ValueError(f"{target}: its docstring has no 'Raises:' section to leave out; drop ', without Raises'")
    pad = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
    end = at + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > len(pad)):
        end += 1
    while end > at + 1 and not lines[end - 1].strip():  # keep the blank line before the next section
        end -= 1
    note = [pad + line for line in NOT_ASKED.format(target=target).split("\n")]
    return "\n".join(lines[:at] + note + lines[end:])


def reference_docstring(target: str, indent: str = "", without_raises: bool = False) -> str:
    """The docstring of ``target`` in attnlab as its source file writes it, re-indented to ``indent``;
    with ``without_raises``, its ``Raises:`` section replaced by :data:`NOT_ASKED` (:func:`_drop_raises`)."""
    node, lines = _reference(target)
    first = node.body[0] if node.body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        raise ValueError(f"{target} has no docstring to take")
    assert first.end_lineno is not None
    col = first.col_offset
    text = "\n".join(line[col:] if not line[:col].strip() else line
                     for line in lines[first.lineno - 1:first.end_lineno])
    if without_raises:
        text = _drop_raises(text, target)
    return textwrap.indent(text, indent)


def _marker_docstring(m: re.Match, indent: str | None = None) -> str:
    """The docstring a :data:`DOCSTRING_MARKER` match stands for (indented as the marker unless ``indent``)."""
    return reference_docstring(m["target"], m["indent"] if indent is None else indent, bool(m["without"]))


def expand_docstrings(text: str, name: str = "<text>") -> str:
    """``text`` with each ``# docstring from attnlab...`` marker replaced by the reference's docstring.

    Raises ValueError naming ``name`` when a marker's target does not exist, has no docstring, the
    marker is not the first line under a ``def``/``class``, or that definition's signature differs
    from the reference's.
    """
    markers = list(DOCSTRING_MARKER.finditer(text))
    if not markers:
        return text
    expanded = DOCSTRING_MARKER.sub(_marker_docstring, text)
    try:
        tree = ast.parse(expanded)
    except SyntaxError as err:
        raise ValueError(f"{name}: not Python after the docstring markers were expanded ({err})") from None
    line_of = {}  # line number of a marker in the expanded text -> target
    shift = 0
    for m in markers:
        line = text.count("\n", 0, m.start()) + 1 + shift
        line_of[line] = m["target"]
        shift += _marker_docstring(m, "").count("\n")
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            target = line_of.get(node.body[0].lineno)
            if target is None or not isinstance(node.body[0], ast.Expr):
                continue
            reference, _ = _reference(target)
            if node.name != reference.name or _signature(node) != _signature(reference):
                raise ValueError(f"{name}: line {node.lineno}: '{node.name}' takes its docstring from {target}, "
                                 f"but its name or signature differs from the reference's; make them agree "
                                 f"(or write the docstring in the text source instead of the marker)")
            found.add(target)
    missing = [m["target"] for m in markers if m["target"] not in found]
    if missing:
        raise ValueError(f"{name}: '# docstring from {missing[0]}' must be the first line under a def or class")
    return expanded


def collapse_docstrings(text: str, source: str, name: str = "<notebook>") -> str:
    """``text`` (expanded, e.g. written from a notebook) with the docstring markers of ``source`` put back.

    Raises ValueError naming ``name`` when the notebook no longer holds a reference docstring that the
    text source takes from attnlab (it was edited in the notebook: edit attnlab instead).
    """
    start = 0
    for m in DOCSTRING_MARKER.finditer(source):
        docstring = _marker_docstring(m) + "\n"
        at = text.find(docstring, start)
        while at > 0 and text[at - 1] != "\n":
            at = text.find(docstring, at + 1)
        if at < 0:
            raise ValueError(f"{name}: the docstring that {m['target']} supplies was changed in the notebook; "
                             f"change it in attnlab (the notebook's copy is built from there); nothing written")
        marker = m.group(0) + "\n"
        text = text[:at] + marker + text[at + len(docstring):]
        start = at + len(marker)
    return text


# A by-hand item: "# %% by-hand skill=... item=... variable=... [ids="a b c"] [points=N]", then "# answer: ...",
# then the hidden-test note (comment lines up to the blank line that ends the block).
BY_HAND_MARKER = re.compile(r"^# %% by-hand (?P<attrs>.*)\n# answer: (?P<answer>.*)\n(?P<hidden>(?:# .*\n)+)", re.M)
_NBGRADER = '"grade": {}, "grade_id": "{}", "locked": {}, {}"schema_version": 3, "solution": {}'


def by_hand_cells(match: re.Match, name: str = "<text>") -> str:
    """The three cells of a by-hand item that a ``# %% by-hand`` marker stands for.

    The learner sees their own variant of a practice skill (``show_problem``), types the answer into
    ``variable`` (the instructor's copy computes it from the same seed), and the locked test cell
    checks only its form; the grader judges the numbers against the learner's variant, under the
    grade id ``test_<item>_by_hand``. Raises ValueError naming ``name`` for a missing or unknown
    attribute, or ``ids`` that are not three.
    """
    attrs = dict(re.findall(r'(\w+)="([^"]*)"', match["attrs"]))
    unknown = set(attrs) - {"skill", "item", "variable", "ids", "points"}
    missing = {"skill", "item", "variable"} - set(attrs)
    ids = attrs.get("ids", "").split() or [""] * 3
    if unknown or missing or len(ids) != 3 or not attrs.get("points", "1").isdigit():
        raise ValueError(f"{name}: by-hand marker {match['attrs']!r} needs skill=, item=, variable= (and optionally "
                         f'ids="three ids", points=N); unknown: {sorted(unknown)}, missing: {sorted(missing)}')
    skill, item, var = attrs["skill"], attrs["item"], attrs["variable"]
    key = f'f"{{ASSIGNMENT}}/test_{item}_by_hand"'

    def head(i: int, grade: bool, grade_id: str, locked: bool, points: str, solution: bool) -> str:
        meta = _NBGRADER.format(str(grade).lower(), grade_id, str(locked).lower(), points, str(solution).lower())
        return "# %%" + (f' id="{ids[i]}"' if ids[i] else "") + " nbgrader={" + meta + "}\n"

    return (head(0, False, f"show_{item}", True, "", False)
            + f"show_problem(\"{skill}\", {key})  # your own numbers (learner id above)\n\n"
            + head(1, False, f"{item}_by_hand", False, "", True)
            + f"# answer: {match['answer']}\n### BEGIN SOLUTION\n"
            + "from attnlab.practice import get_skill, learner_id, seed_for  # instructor copy, never released\n"
            + f"{var} = get_skill(\"{skill}\").variant(seed_for(learner_id(), {key})).answer  # students type the numbers\n"
            + "### END SOLUTION\n\n"
            + head(2, True, f"test_{item}_by_hand", True, f'"points": {attrs.get("points", "1")}, ', False)
            + f"print(check_form(\"{skill}\", {var}))  # readable? (right or wrong is graded later)\n\n"
            + f"### BEGIN HIDDEN TESTS\n{match['hidden']}### END HIDDEN TESTS\n")


def expand(text: str, name: str = "<text>") -> str:
    """``text`` with its by-hand markers and docstring markers expanded (what jupytext then reads)."""
    return expand_docstrings(BY_HAND_MARKER.sub(lambda m: by_hand_cells(m, name), text), name)


def collapse(text: str, source: str, name: str = "<notebook>") -> str:
    """``text`` (fully expanded, e.g. written from a notebook) with the by-hand and docstring markers of
    ``source`` put back where their expansions stand unchanged. Raises ValueError naming ``name`` when a
    by-hand item or a docstring from attnlab was edited in the notebook (edit the text source or attnlab)."""
    start = 0
    for m in BY_HAND_MARKER.finditer(source):
        cells = by_hand_cells(m, name)
        at = text.find(cells, start)
        if at < 0:
            raise ValueError(f"{name}: the by-hand item {m['attrs']!r} was changed in the notebook; change its "
                             f"'# %% by-hand' marker in the text source instead; nothing written")
        text = text[:at] + m.group(0) + text[at + len(cells):]
        start = at + len(m.group(0))
    return collapse_docstrings(text, source, name)


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def notebook_from_text(text: str, name: str = "<text>") -> nbformat.NotebookNode:
    """The notebook (nbformat 4.5, no outputs) that a set's py:percent text describes.

    By-hand and docstring markers are expanded first (:func:`expand`). Cell ids: the header's
    ``id="..."``, else the nbgrader ``grade_id``, else ``cell-<index>``. Raises ValueError naming
    ``name`` when the text has no cells, two cells get the same id, or a marker is wrong.
    """
    text_nb = jupytext.reads(expand(text, name), fmt="py:percent")
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
    target = text_path(ipynb)
    source = target.read_text(encoding="utf-8") if target.exists() else ""
    text = collapse(text_from_notebook(nb, _rel(ipynb)), source, _rel(ipynb))
    rebuilt = notebook_from_text(text, _rel(text_path(ipynb)))
    if rebuilt != nb:
        where = next((i for i, (a, b) in enumerate(zip(nb.cells, rebuilt.cells)) if a != b),
                     "metadata" if nb.metadata != rebuilt.metadata else min(len(nb.cells), len(rebuilt.cells)))
        raise ValueError(f"{_rel(ipynb)}: the text form would not rebuild the notebook (first difference: "
                         f"cell {where}); nothing written")
    json_text = notebook_text(rebuilt)
    # the text of the notebook as the build writes it (key order etc.), so a second run writes nothing
    text = collapse(text_from_notebook(nbformat.reads(json_text, as_version=4), _rel(ipynb)), source, _rel(ipynb))
    written = []
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
            build_lessons.write_built(ipynb, build(text), _rel(ipynb))
        except ValueError as err:
            print(err, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
