"""The learner id a notebook ran under, published as data for the grader.

The setup cell of every graded notebook prints :func:`attnlab.practice.problem.learner_note`, which
also publishes the id with :func:`publish_learner_id`: one ``display_data`` output of the MIME type
:data:`LEARNER_MIME` holding ``{"learner_id": "<id>"}``.  The grader reads it back with
:func:`learner_ids_in` (before it clears the outputs) to *flag* by-hand numbers drawn for another
id; the id is the student's own claim, so it is never used to credit anything.
"""
from __future__ import annotations

from typing import Any

#: MIME type of the output holding the learner id (a JSON object ``{"learner_id": str}``).
LEARNER_MIME = "application/vnd.attnlab.learner+json"
#: At most this many ids are read from one notebook (a notebook run under several ids in turn).
MAX_IDS = 8


def publish_learner_id(learner: str) -> None:
    """Publish ``learner`` (a learner id, see :func:`attnlab.practice.seeding.as_learner_id`) as one
    ``display_data`` output of MIME type :data:`LEARNER_MIME`.  Outside a Jupyter/IPython kernel there
    is no notebook to write to and nothing happens.  Never raises for a missing IPython."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython ships with the course
        return
    if get_ipython() is None:
        return
    display({LEARNER_MIME: {"learner_id": str(learner)}}, raw=True)


def learner_ids_in(nb: Any) -> list[str]:
    """The learner ids the outputs of notebook ``nb`` (an ``nbformat`` node or its plain dict) record
    under :data:`LEARNER_MIME`, normalised like :func:`attnlab.practice.seeding.as_learner_id`
    (Unicode NFC: one name typed two ways is one id), first seen first, at most :data:`MAX_IDS`.

    Outputs without the record (a notebook saved before the id was published, or never run) give
    ``[]``; a record of the wrong shape (not an object, no string ``learner_id``) is skipped.
    Never raises for malformed notebooks."""
    from .practice.seeding import as_learner_id
    found: list[str] = []
    cells = nb.get("cells", []) if isinstance(nb, dict) else []
    for cell in cells if isinstance(cells, list) else []:
        outputs = cell.get("outputs", []) if isinstance(cell, dict) and cell.get("cell_type") == "code" else []
        for out in outputs if isinstance(outputs, list) else []:
            data = out.get("data") if isinstance(out, dict) else None
            record = data.get(LEARNER_MIME) if isinstance(data, dict) else None
            value = record.get("learner_id") if isinstance(record, dict) else None
            if isinstance(value, str) and value.strip() and len(value) <= 256:
                found.append(as_learner_id(value))
    return list(dict.fromkeys(found))[:MAX_IDS]


__all__ = ["LEARNER_MIME", "publish_learner_id", "learner_ids_in"]
