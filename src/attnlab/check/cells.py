"""Reading an exercise notebook for ``attnlab check``: which exercise set it is
(:func:`find_assignment`), its autograded items and their answer cells, stubs left in place, written
answers, and the model answer and rubric of a source notebook's written-answer cell."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .policy import CheckError



def _known_sets() -> list[str]:
    from attnlab.course import exercise_sets
    names = list(exercise_sets())
    try:
        from attnlab_grader.judging.course_files import assignments
        names += [a for a in assignments() if a not in names]
    except Exception:  # noqa: BLE001 - no grader around: the course's own sets
        pass
    return names


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))  # a byte-order mark some editors write is not an error
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def find_assignment(path: str | os.PathLike, given: str | None = None) -> str:
    """The exercise set ``path`` belongs to: ``given`` if set (must be a known set), else the set
    its file name starts with (``03_masks.ipynb``, ``03_masks (1).ipynb``), else the
    ``ASSIGNMENT = "..."`` its setup cell assigns.  Raises :class:`CheckError` when none fits."""
    known = _known_sets()
    if given:
        if given not in known:
            raise CheckError(f"{given!r} is not an exercise set of this course; use one of {', '.join(known)}.")
        return given
    stem = Path(path).name
    for name in sorted(known, key=len, reverse=True):
        if stem.startswith(name):
            return name
    nb = _read_json(Path(path))
    cells = nb.get("cells", []) if isinstance(nb, dict) else []
    for cell in cells if isinstance(cells, list) else []:
        src = cell.get("source", "") if isinstance(cell, dict) else ""
        src = "".join(src) if isinstance(src, list) else str(src)
        m = re.search(r'^ASSIGNMENT\s*=\s*["\'](\w+)["\']', src, flags=re.M)
        if m and m.group(1) in known:
            return m.group(1)
    raise CheckError(f"cannot tell which exercise set {Path(path).name} is (its name does not start with one "
                     f"and its setup cell names none); pass --assignment, one of {', '.join(known)}.")


# ------------------------------------------------------------------ reading notebook cells


def _nbg(cell) -> dict:
    meta = cell.get("metadata", {}) if isinstance(cell, dict) else {}
    nbg = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    return nbg if isinstance(nbg, dict) else {}


def _gid(cell, missing: str = "") -> str:
    """The cell's nbgrader ``grade_id`` as text (``missing`` when it has none)."""
    gid = _nbg(cell).get("grade_id")
    return str(gid) if gid is not None else missing


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _stubs() -> tuple[str, str]:
    """The code and text stubs a release writes into answer cells
    (:data:`attnlab_grader.judging.course_files.CODE_STUB` and ``TEXT_STUB``)."""
    from attnlab_grader.judging.course_files import CODE_STUB, TEXT_STUB
    return CODE_STUB, TEXT_STUB


def _items_of(nb: dict) -> list[tuple[dict, list[dict]]]:
    """``[(test cell, [its answer cells])]``: each autograded test cell with the answer cells
    between the previous test cell and it."""
    out, pending = [], []
    for cell in nb.get("cells", []):
        meta = _nbg(cell)
        if meta.get("solution") and not meta.get("grade"):
            pending.append(cell)
        elif meta.get("grade") and not meta.get("solution") and cell.get("cell_type") == "code":
            out.append((cell, pending))
            pending = []
    return out


def _unattempted(answers: list[dict], code_stub: str) -> str | None:
    """The name of the first answer cell that still holds the released code stub, else None."""
    stub_line = code_stub.strip().splitlines()[-1].strip()
    for cell in answers:
        lines = [ln.strip() for ln in _source(cell).splitlines()]
        if stub_line in lines and code_stub.strip().splitlines()[0].strip() in lines:
            return _nbg(cell).get("grade_id", "?")
    return None


def _written_cells(nb: dict, auto: set[str]) -> list[dict]:
    return [c for c in nb.get("cells", []) if _nbg(c).get("grade") and _nbg(c).get("solution")
            and _gid(c) not in auto]


def _attempted(text: str, released: str | None, text_stub: str, code_stub: str = "") -> bool:
    """A written answer is attempted when it no longer holds a stub (text, or code for an answer
    written in a code cell) and differs from the released cell (the question alone is not an attempt)."""
    def norm(s):
        return " ".join(s.split())
    if text_stub in text or not norm(text) or (code_stub and norm(code_stub) in norm(text)):
        return False
    if released is not None and norm(text) in (norm(released), norm(released.replace(text_stub, ""))):
        return False
    return True


def _model_answer(source_cell_text: str) -> tuple[str, str | None]:
    """``(model answer, rubric)`` from a source notebook's written-answer cell: the text between
    ``### BEGIN SOLUTION`` and ``### END SOLUTION``; a paragraph starting ``**Rubric`` in it is the
    rubric."""
    m = re.search(r"#+ *BEGIN SOLUTION\s*\n(.*?)\n\s*#+ *END SOLUTION", source_cell_text, flags=re.S)
    body = (m.group(1) if m else source_cell_text).strip()
    parts = re.split(r"\n\s*\n(?=\*\*Rubric)", body, maxsplit=1)
    if len(parts) == 2:
        return parts[0].strip(), re.sub(r"^\*\*Rubric[^*]*\*\*\s*", "", parts[1].strip())
    return body, None


def _defining(nb: dict, name: str | None) -> list[dict]:
    """The answer cells of ``nb`` that define ``name`` (``def name(`` or ``class name``): where a test
    cell with no answer cells of its own (one that exercises functions written earlier, such as a
    training run) finds the work it depends on."""
    if not name:
        return []
    pattern = re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b", re.M)
    return [c for c in nb.get("cells", []) if _nbg(c).get("solution") and not _nbg(c).get("grade")
            and pattern.search(_source(c))]
