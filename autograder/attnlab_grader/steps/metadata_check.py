"""nbgrader's ``CheckCellMetadata`` step with the metadata schema compiled once per process.

nbgrader validates every cell's ``metadata.nbgrader`` with ``jsonschema.validate``, which first
checks the schema itself against its meta-schema, on every cell, twice per notebook (sanitize and
autograde): about 10 ms a cell, a tenth of a set-09 submission's grading time.  The schema is
nbgrader's own file and never changes in a run, so :class:`CheckCellMetadataOnce` validates each
cell against a validator built once from it.  Everything else is nbgrader's: the schema-version
checks, the grade-id, points and cell-type rules, duplicate ids, and the error a corrupted cell
raises (``nbgrader.nbgraderformat.ValidationError``, the best match among the schema errors, as
``jsonschema.validate`` picks it).
"""
from __future__ import annotations

import traceback
from typing import Any

from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from nbformat.notebooknode import NotebookNode
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.preprocessors import CheckCellMetadata

_VALIDATORS: dict[int, Any] = {}  # schema version -> jsonschema validator of nbgrader's schema


class _SchemaOnce(BaseMetadataValidator):
    """nbgrader's per-cell schema check, against a validator built once per schema version."""

    def validate_cell(self, cell: NotebookNode) -> None:
        """Raise ``SchemaTooOldError``/``SchemaTooNewError`` for another schema version (nbgrader's
        own check), else ``ValidationError`` (jsonschema's) when ``metadata.nbgrader`` breaks the schema."""
        if "nbgrader" not in cell.metadata:
            return
        if cell.metadata["nbgrader"].get("schema_version", 0) != self.schema_version:
            super().validate_cell(cell)  # raises nbgrader's version error
            return
        validator = _VALIDATORS.get(self.schema_version)
        if validator is None:
            cls = validator_for(self.schema)
            cls.check_schema(self.schema)  # once, as jsonschema.validate does on every call
            validator = _VALIDATORS[self.schema_version] = cls(self.schema)
        error = best_match(validator.iter_errors(cell.metadata["nbgrader"]))
        if error is not None:
            raise error


class OnceMetadataValidator(MetadataValidator, _SchemaOnce):
    """nbgrader's current ``MetadataValidator`` (schema v3) whose per-cell schema check is
    :class:`_SchemaOnce`'s; its own rules (grade ids, points, cell types, duplicates) run unchanged."""


class CheckCellMetadataOnce(CheckCellMetadata):
    """``CheckCellMetadata`` (nbgrader) validating with :class:`OnceMetadataValidator`: the same
    notebooks pass and the same ones fail, with the same message."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        """Validate every cell's nbgrader metadata; raises ``ValidationError`` (nbgrader's message
        "the nbgrader metadata may be corrupted") when one is invalid."""
        try:
            OnceMetadataValidator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            msg = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(msg)
            raise ValidationError(msg) from None
        return nb, resources
