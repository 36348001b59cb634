"""What an honest notebook file may differ in, and how the grader reads it anyway.

Editors and tools write the same notebook in different ways that say nothing about the answers:
a byte-order mark (UTF-8 from some editors, UTF-16 from Windows tools), cells without the
``metadata``/``outputs``/``execution_count`` keys the format requires (hand-made or converted
notebooks), cell ids that are missing, duplicated (a cell copied between notebooks) or not of the
format's alphabet, and an ``nbgrader`` metadata entry that marks nothing (left by the Create
Assignment toolbar).
:func:`decode` and :func:`repair` turn such a file into the notebook it stands for and return a
note for each thing they changed, which the report shows; content (sources, nbgrader metadata with
a grade id, outputs) is never changed.  Called by :func:`attnlab_grader.records.intake.check_notebook_bytes`
(a submission) and by ``attnlab check`` (a learner's own copy).
"""
from __future__ import annotations

import codecs
import re
import uuid

#: Byte-order marks read as what they announce (UTF-8's is removed).
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig", "UTF-8"), (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
         (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"))
#: A cell id as nbformat 4.5 defines it.
_CELL_ID = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")


def decode(data: bytes) -> tuple[str, list[str]]:
    """``(text, notes)`` of a notebook file's bytes: UTF-8, with a UTF-8 or UTF-16 byte-order mark
    removed (and said in ``notes``).  Raises ``UnicodeDecodeError`` for bytes that are none of these."""
    for bom, codec, shown in _BOMS:
        if data.startswith(bom):
            return data.decode(codec), [f"the notebook began with a {shown} byte-order mark (written by some "
                                        "editors); it was read as " + shown + " text"]
    return data.decode("utf-8"), []


#: What each kind of output must hold (nbformat 4), and what a missing optional-looking field becomes.
_OUTPUT_FIELDS = {"stream": {"name": "stdout", "text": ""}, "display_data": {"data": {}, "metadata": {}},
                  "execute_result": {"data": {}, "metadata": {}, "execution_count": None},
                  "error": {"ename": "", "evalue": "", "traceback": []}}


def _output(out) -> int | None:
    """Complete one output in place: the number of fields added, ``None`` for something that is not
    an output at all."""
    if not isinstance(out, dict) or out.get("output_type") not in _OUTPUT_FIELDS:
        return None
    missing = [key for key in _OUTPUT_FIELDS[out["output_type"]] if key not in out]
    for key in missing:
        out[key] = _OUTPUT_FIELDS[out["output_type"]][key]
    return len(missing)


def _idle_nbgrader(meta) -> bool:
    """Whether a cell's ``nbgrader`` metadata marks nothing: not a mapping, or no grade id and none of
    grade/solution/locked/task set (what the Create Assignment toolbar's "-" leaves)."""
    if not isinstance(meta, dict):
        return True
    return not meta.get("grade_id") and not any(meta.get(k) for k in ("grade", "solution", "locked", "task"))


def repair(nb: dict) -> list[str]:
    """Complete the structure of the notebook ``nb`` (parsed JSON, a dict with a list of cells) in
    place, as nbformat 4 requires; return one note per kind of change (none when nothing changed).

    * a notebook or cell without ``metadata`` gets ``{}``; a missing or non-numeric format minor
      version is read as 4.5; a code cell without ``outputs``/``execution_count`` gets ``[]``/``None``,
      another cell loses them; an output gets the fields its kind requires, and something that is not
      an output is left out (outputs are not graded); format 3's ``heading`` cell becomes markdown;
    * an ``nbgrader`` metadata entry that marks nothing (``{}``, no grade id and no grade/solution/
      locked flag, or not a mapping) is removed;
    * with format 4.5 or later, a cell id that is missing, not of the format's alphabet or used by
      an earlier cell is replaced by a fresh one (ids say nothing about the answers)."""
    added, emptied, ids, outputs = 0, 0, 0, 0
    notes = []
    if not isinstance(nb.get("metadata"), dict):
        nb["metadata"], added = {}, added + 1
    if type(nb.get("nbformat_minor")) is not int or nb["nbformat_minor"] < 0:
        nb["nbformat_minor"] = 5
        notes.append("the notebook's format version (nbformat_minor) was missing or not a number; it was read as 4.5")
    seen: set[str] = set()
    with_ids = nb["nbformat_minor"] >= 5
    for cell in nb["cells"]:
        if "metadata" not in cell:
            cell["metadata"], added = {}, added + 1
        if cell.get("cell_type") == "heading":  # format 3's heading cell: the markdown it stands for
            level = cell.pop("level", 1)
            text = "".join(cell["source"]) if isinstance(cell.get("source"), list) else str(cell.get("source", ""))
            cell.update(cell_type="markdown", source="#" * (level if type(level) is int and 0 < level < 7 else 1) + " " + text)
            added += 1
        if cell.get("cell_type") == "code":
            for key, empty in (("outputs", []), ("execution_count", None)):
                if key not in cell:
                    cell[key], added = empty, added + 1
            fixed = [_output(o) for o in cell["outputs"]] if isinstance(cell["outputs"], list) else []
            kept = [o for o, n in zip(cell["outputs"], fixed) if n is not None]
            added += sum(n for n in fixed if n)
            outputs += (len(cell["outputs"]) if isinstance(cell["outputs"], list) else 1) - len(kept)
            cell["outputs"] = kept
        else:
            for key in ("outputs", "execution_count"):  # only code cells have them
                if key in cell:
                    del cell[key]
                    added += 1
        meta = cell["metadata"]
        if isinstance(meta, dict) and "nbgrader" in meta and _idle_nbgrader(meta["nbgrader"]):
            del meta["nbgrader"]
            emptied += 1
        if with_ids:
            cid = cell.get("id")
            if not isinstance(cid, str) or not _CELL_ID.match(cid) or cid in seen:
                cid = uuid.uuid4().hex[:8]
                while cid in seen:
                    cid = uuid.uuid4().hex[:8]
                cell["id"], ids = cid, ids + 1
            seen.add(cid)
    if outputs:
        notes.append(f"{outputs} cell output(s) were not valid notebook outputs and were left out (outputs are "
                     "not graded)")
    if added:
        notes.append(f"{added} field(s) the notebook format requires (metadata, outputs, execution counts) "
                     "were missing or misplaced and were completed")
    if emptied:
        notes.append(f"{emptied} cell(s) had empty nbgrader metadata (marking no graded or answer cell, as the "
                     "Create Assignment toolbar leaves it); it was removed")
    if ids:
        notes.append(f"{ids} cell id(s) were missing, duplicated or not valid ids; they were replaced "
                     "(ids do not affect grading)")
    return notes
