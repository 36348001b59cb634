"""The nbgrader source notebooks are built from their text source (solutions/NN_x/NN_x.pct.py).

Fast: reads and compares, executes nothing. Fix a failure with `python scripts/build_solutions.py`
(or `make solutions`) after editing the .pct.py file, then `make exercises`; after editing a notebook
in Jupyter, `python scripts/build_solutions.py --from-notebooks solutions/NN_x/NN_x.ipynb`.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
_spec = importlib.util.spec_from_file_location("build_solutions", ROOT / "scripts" / "build_solutions.py")
build_solutions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_solutions)

SETS = sorted(p.name for p in SOLUTIONS.iterdir() if (p / f"{p.name}.ipynb").exists())
NBGRADER_KEYS = ("grade", "solution", "locked", "grade_id", "points", "schema_version", "task")


def _copy_set(name: str, tmp_path: Path) -> Path:
    """A copy of one set's notebook and text source in tmp_path/solutions/<name>."""
    folder = tmp_path / "solutions" / name
    folder.mkdir(parents=True)
    for suffix in (".ipynb", build_solutions.SUFFIX):
        shutil.copy(SOLUTIONS / name / f"{name}{suffix}", folder)
    return folder


def test_every_set_has_a_text_source_and_nothing_else_does():
    texts = sorted(p.parent.name for p in SOLUTIONS.glob(f"*/*{build_solutions.SUFFIX}"))
    assert len(SETS) >= 10 and texts == SETS
    assert all(p.name == f"{p.parent.name}{build_solutions.SUFFIX}"
               for p in SOLUTIONS.glob(f"*/*{build_solutions.SUFFIX}"))


def test_notebooks_are_what_their_sources_build():
    """Byte for byte: the committed .ipynb is what the build writes from the committed .pct.py."""
    assert build_solutions.sets() and [p.name for p in build_solutions.sets()] == SETS
    problems = build_solutions.stale()
    assert not problems, "\n".join(problems) + f"\nrun: {build_solutions.COMMAND}, then make exercises"


@pytest.mark.parametrize("name", SETS)
def test_text_keeps_what_nbgrader_reads(name):
    """Cell types, sources, nbgrader metadata, ids and kernelspec of the notebook, read from the text
    alone (so `--from-notebooks` after a Jupyter edit loses nothing), and the markers are intact."""
    nb = nbformat.read(SOLUTIONS / name / f"{name}.ipynb", as_version=4)
    text = (SOLUTIONS / name / f"{name}{build_solutions.SUFFIX}").read_text(encoding="utf-8")
    rebuilt = build_solutions.notebook_from_text(text, name)
    assert rebuilt.metadata["kernelspec"] == nb.metadata["kernelspec"]
    assert rebuilt.metadata["kernelspec"]["name"] == "python3"
    assert [(c.id, c.cell_type, c.source) for c in rebuilt.cells] == [(c.id, c.cell_type, c.source) for c in nb.cells]
    got = [{k: c.metadata["nbgrader"].get(k) for k in NBGRADER_KEYS} for c in rebuilt.cells]
    assert got == [{k: c.metadata["nbgrader"].get(k) for k in NBGRADER_KEYS} for c in nb.cells]
    for marker in ("### BEGIN SOLUTION", "### END SOLUTION", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"):
        assert build_solutions.expand(text, name).count(marker) == sum(c.source.count(marker) for c in nb.cells) > 0, marker
    # the text is the canonical form (by-hand items and docstrings from attnlab.nn stand as their markers)
    assert build_solutions.collapse(build_solutions.text_from_notebook(nb, name), text, name) == text


def test_an_edited_source_is_detected(tmp_path):
    """Changing a solution line or a cell's points makes the check fail and the build rewrite the notebook."""
    folder = _copy_set("03_masks", tmp_path)
    text = folder / f"03_masks{build_solutions.SUFFIX}"
    assert build_solutions.stale(tmp_path / "solutions") == []
    original = text.read_text(encoding="utf-8")
    for edit in (original.replace(".tril()", ".triu()", 1),
                 original.replace('"points": 2,', '"points": 3,', 1)):
        assert edit != original
        text.write_text(edit, encoding="utf-8")
        problems = build_solutions.stale(tmp_path / "solutions")
        assert len(problems) == 1 and "03_masks.ipynb differs from" in problems[0]
        assert build_solutions.main(["--check"], root=tmp_path / "solutions") == 1
        assert build_solutions.main([], root=tmp_path / "solutions") == 0
        assert build_solutions.stale(tmp_path / "solutions") == []
        assert (folder / "03_masks.ipynb").read_text(encoding="utf-8") == build_solutions.build(text)


def test_check_names_the_file_and_the_command(tmp_path, capsys):
    folder = _copy_set("02_scaled_dot_product_attention", tmp_path)
    (folder / "02_scaled_dot_product_attention.ipynb").write_text("{}", encoding="utf-8")
    assert build_solutions.main(["--check"], root=tmp_path / "solutions") == 1
    err = capsys.readouterr().err
    assert "02_scaled_dot_product_attention.ipynb differs from" in err and "build_solutions.py" in err


def test_build_is_idempotent(tmp_path):
    folder = _copy_set("05_multi_head_attention", tmp_path)
    before = (folder / "05_multi_head_attention.ipynb").read_bytes()
    for _ in range(2):
        assert build_solutions.main([], root=tmp_path / "solutions") == 0
        assert (folder / "05_multi_head_attention.ipynb").read_bytes() == before


def test_from_notebooks_handles_one_file_and_a_jupyter_edit(tmp_path, capsys):
    """A notebook saved by Jupyter (outputs, a new cell, a changed grade) is copied back into its text
    source; only the named set is touched; the notebook is then what the text builds."""
    root = tmp_path / "solutions"
    other = _copy_set("03_masks", tmp_path)
    folder = _copy_set("09_capstone", tmp_path)
    other_text = (other / f"03_masks{build_solutions.SUFFIX}").read_bytes()
    ipynb = folder / "09_capstone.ipynb"
    nb = nbformat.read(ipynb, as_version=4)
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    nb.cells[1].execution_count = 3
    nb.cells.insert(2, nbformat.v4.new_markdown_cell("A note with no nbgrader metadata."))
    nb.cells[-1].metadata["nbgrader"]["points"] = 7
    nbformat.write(nb, ipynb)
    assert build_solutions.main(["--from-notebooks", str(ipynb)], root=root) == 0
    assert "09_capstone.pct.py" in capsys.readouterr().out
    assert (other / f"03_masks{build_solutions.SUFFIX}").read_bytes() == other_text
    assert build_solutions.stale(root) == []
    built = json.loads(ipynb.read_text(encoding="utf-8"))
    assert built["cells"][1]["outputs"] == [] and built["cells"][1]["execution_count"] is None
    assert built["cells"][2]["source"] == ["A note with no nbgrader metadata."] and built["cells"][2]["id"]
    assert built["cells"][-1]["metadata"]["nbgrader"]["points"] == 7
    assert build_solutions.main(["--from-notebooks", "09_capstone"], root=root) == 0  # a name works too


def test_ids_come_from_grade_ids_unless_the_header_names_one():
    text = "\n\n".join([
        '# %% nbgrader={"grade": false, "grade_id": "setup", "locked": true, "schema_version": 3, "solution": false}\nx = 1',
        '# %% id="7" nbgrader={"grade": false, "grade_id": "other", "locked": true, "schema_version": 3, "solution": false}\ny = 2',
        "# %% [markdown]\n# no metadata"]) + "\n"
    nb = build_solutions.notebook_from_text(text)
    assert [c.id for c in nb.cells] == ["setup", "7", "cell-2"]
    assert "id" not in nb.cells[1].metadata and nb.cells[1].metadata["nbgrader"]["grade_id"] == "other"
    with pytest.raises(ValueError, match="both have id 'setup'"):
        build_solutions.notebook_from_text(text.replace('grade_id": "other"', 'grade_id": "setup"')
                                           .replace('id="7" ', ""))


def test_the_text_source_is_never_released():
    """nbgrader's generate_assignment skips files matching CourseDirectory.ignore; the text source holds the
    solutions, so it must match (the slow release tests then find no extra file in exercises/)."""
    from nbgrader.utils import is_ignored
    from traitlets.config.loader import PyFileConfigLoader
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "autograder" / "attnlab_grader" / "steps")).load_config()
    ignore = list(cfg.CourseDirectory.ignore)
    for name in SETS:
        assert is_ignored(str(SOLUTIONS / name / f"{name}{build_solutions.SUFFIX}"), ignore)
        assert not is_ignored(str(SOLUTIONS / name / f"{name}.ipynb"), ignore)
        assert not (ROOT / "exercises" / name / f"{name}{build_solutions.SUFFIX}").exists()


def test_a_new_set_needs_only_its_text(tmp_path):
    folder = tmp_path / "solutions" / "11_new"
    folder.mkdir(parents=True)
    shutil.copy(SOLUTIONS / "03_masks" / f"03_masks{build_solutions.SUFFIX}", folder / f"11_new{build_solutions.SUFFIX}")
    assert "11_new.ipynb is missing" in build_solutions.stale(tmp_path / "solutions")[0]
    assert build_solutions.main(["11_new"], root=tmp_path / "solutions") == 0
    assert (folder / "11_new.ipynb").read_bytes() == (SOLUTIONS / "03_masks" / "03_masks.ipynb").read_bytes()
    assert build_solutions.stale(tmp_path / "solutions") == []


def test_docstrings_come_from_attnlab_nn():
    """A marker takes the reference's docstring from its source file: the notebooks carry attnlab.nn's own
    text, a drifted signature or a wrong target is refused, and a notebook edit of such a docstring is not
    silently copied back into the text source."""
    text = (SOLUTIONS / "04_positional_encoding" / f"04_positional_encoding{build_solutions.SUFFIX}"
            ).read_text(encoding="utf-8")
    marker = "    # docstring from attnlab.nn.positional.sinusoidal_encoding\n"
    assert marker in text and '"""The sinusoidal position table' not in text
    nb = build_solutions.notebook_from_text(text, "04_positional_encoding")
    from attnlab.nn import positional
    cell = next(c for c in nb.cells if "def sinusoidal_encoding(" in c.source)
    assert positional.sinusoidal_encoding.__doc__ in cell.source
    drifted = text.replace("base: float = 10000.0, device=None", "base: float = 100.0, device=None", 1)
    with pytest.raises(ValueError, match="signature differs"):
        build_solutions.notebook_from_text(drifted, "04_positional_encoding")
    with pytest.raises(ValueError, match="defines no no_such_encoding"):
        build_solutions.notebook_from_text(text.replace("positional.sinusoidal_encoding\n",
                                                        "positional.no_such_encoding\n", 1))
    with pytest.raises(ValueError, match="first line under a def"):
        build_solutions.notebook_from_text(text.replace(marker, "", 1).replace(  # above the def, not under it
            "def sinusoidal_encoding(", marker.strip() + "\ndef sinusoidal_encoding(", 1))
    edited = build_solutions.text_from_notebook(nb, "04_positional_encoding").replace(
        "The sinusoidal position table of", "The sine table of", 1)
    with pytest.raises(ValueError, match="sinusoidal_encoding supplies was changed"):
        build_solutions.collapse_docstrings(edited, text, "04_positional_encoding")


def test_without_raises_leaves_out_only_the_raises_section():
    """``, without Raises`` takes the library's docstring with its ``Raises:`` section (and nothing else)
    replaced by the sentence that the checks are not asked (the round trip back to the marker:
    test_from_notebooks_keeps_the_docstring_markers, on set 05's such markers); a docstring with no such section is refused (the marker would promise a removal that does not happen)."""
    from attnlab.nn import masks
    text = (SOLUTIONS / "03_masks" / f"03_masks{build_solutions.SUFFIX}").read_text(encoding="utf-8")
    marker = "    # docstring from attnlab.nn.masks.causal_mask, without Raises\n"
    assert marker in text
    nb = build_solutions.notebook_from_text(text, "03_masks")
    cell = next(c for c in nb.cells if c.source.startswith("def causal_mask("))
    library = masks.causal_mask.__doc__
    head, _, rest = library.partition("    Raises:\n")
    tail = rest[rest.index("\n\n"):]  # from the blank line that ends the section
    assert "Raises:" in library and "Raises:" not in cell.source
    assert head in cell.source and tail in cell.source
    assert "not asked in this exercise and not graded" in cell.source and "attnlab.nn.masks.causal_mask" in cell.source
    with pytest.raises(ValueError, match="no 'Raises:' section"):
        build_solutions.reference_docstring("attnlab.nn.sampling.sample_next_token", "", without_raises=True)


def test_from_notebooks_keeps_the_docstring_markers(tmp_path):
    """Writing the text back from an unchanged notebook gives the same text source, markers included."""
    folder = _copy_set("05_multi_head_attention", tmp_path)
    text = folder / f"05_multi_head_attention{build_solutions.SUFFIX}"
    before = text.read_bytes()
    assert b"# docstring from attnlab.nn.mha.MultiHeadAttention.forward" in before
    assert build_solutions.main(["--from-notebooks", "05_multi_head_attention"], root=tmp_path / "solutions") == 0
    assert text.read_bytes() == before


def test_a_by_hand_marker_is_the_three_cells_of_the_item():
    """One line names the skill, the item and the answer's variable; the build writes the problem cell,
    the answer cell (the instructor's copy computes the learner's own answer) and the locked form check
    under the grade id the grader judges, ``test_<item>_by_hand``."""
    text = (SOLUTIONS / "02_scaled_dot_product_attention" / f"02_scaled_dot_product_attention{build_solutions.SUFFIX}"
            ).read_text(encoding="utf-8")
    marker = '# %% by-hand skill="sdpa_scores" item="scores" variable="scores"\n'
    assert marker in text and "show_problem(" not in text
    nb = build_solutions.notebook_from_text(text, "02")
    cells = {c.id: c for c in nb.cells}
    assert cells["show_scores"].source.startswith('show_problem("sdpa_scores", f"{ASSIGNMENT}/test_scores_by_hand")')
    assert cells["scores_by_hand"].metadata["nbgrader"]["solution"] is True
    assert 'scores = get_skill("sdpa_scores")' in cells["scores_by_hand"].source
    test = cells["test_scores_by_hand"]
    assert test.metadata["nbgrader"]["grade"] is True and test.metadata["nbgrader"]["points"] == 1
    assert 'check_form("sdpa_scores", scores)' in test.source and "### BEGIN HIDDEN TESTS" in test.source
    with pytest.raises(ValueError, match="missing: \\['variable'\\]"):
        build_solutions.notebook_from_text(text.replace(' variable="scores"', "", 1), "02")
    edited = build_solutions.text_from_notebook(nb, "02").replace("check_form(\"sdpa_scores\", scores)",
                                                                  "check_form(\"sdpa_scores\", scores + 1)", 1)
    with pytest.raises(ValueError, match="by-hand item .* was changed in the notebook"):
        build_solutions.collapse(edited, text, "02")
