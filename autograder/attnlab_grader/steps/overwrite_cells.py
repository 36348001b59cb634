"""nbgrader's ``OverwriteCells``, warning only about locked cells a student really changed.

A test cell with hidden tests reaches students without them: ``generate_assignment`` stores the
full cell in the gradebook, then ``ClearHiddenTests`` removes the lines between ``BEGIN HIDDEN
TESTS`` and ``END HIDDEN TESTS`` from the released copy. At autograde nbgrader's ``OverwriteCells``
compares each locked cell with the gradebook's copy, finds the checksums differ, logs ``Attribute
'checksum' for cell X has changed!`` and puts the full cell back. So every honest submission logs
that warning once for each test cell with hidden tests, which reads like tampering and hides the
real cases among them.

:class:`QuietOverwriteCells` first puts back, without a word, the source of a locked cell whose
text is exactly what was released (the gradebook's source with the hidden tests cleared by the same
``ClearHiddenTests`` settings); every other difference goes to nbgrader's own step unchanged, which
reports it and restores the cell as before. Grading is the same either way: the cell that runs is
the gradebook's.

Source: nbgrader 0.9 ``nbgrader/preprocessors/overwritecells.py`` and ``clearhiddentests.py``.
"""
from __future__ import annotations

from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells


def released_source(source: str, clear: ClearHiddenTests | None = None) -> str:
    """The text students received for a locked cell whose full text is ``source``.

    ``source`` (str): the cell as the gradebook holds it. ``clear``: the ``ClearHiddenTests`` step
    whose delimiters the release used (default: nbgrader's, ``BEGIN/END HIDDEN TESTS``). Returns
    ``source`` without its hidden-test regions (unchanged when it has none). Raises
    ``RuntimeError`` (nbgrader's) for an unclosed or nested region.
    """
    cell = NotebookNode(cell_type="code", source=source, metadata={})
    (clear or ClearHiddenTests())._remove_hidden_test_region(cell)
    return cell.source


class QuietOverwriteCells(OverwriteCells):
    """``OverwriteCells`` that does not report a locked cell received as released (see the module)."""

    def preprocess_cell(self, cell: NotebookNode, resources: Any, cell_index: int):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None and cell.cell_type == "code":
            try:
                source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source_cell = None  # nbgrader's step reports it
            if (source_cell is not None and source_cell.locked and utils.is_locked(cell)
                    and cell.source != source_cell.source
                    and cell.source == released_source(source_cell.source, ClearHiddenTests(config=self.config))):
                cell.source = source_cell.source
        return super().preprocess_cell(cell, resources, cell_index)
