"""QA cases written as real Python files: ``solutions/<A>/wrong/<name>.py`` and ``honest/<name>.py``."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

@dataclass
class Case:
    """A QA submission written as a real Python file: ``solutions/<A>/wrong/<name>.py`` (a realistic
    mistake) or ``solutions/<A>/honest/<name>.py`` (a correct solution written differently).

    File format (py:percent-like)::

        # breaks: test_mha_forward, test_other     (wrong/ only: the items it must lose)
        # mistake: combine_with_or          (optional: a name in attnlab.practice.misconceptions)
        # xfail: reason                            (optional, honest/ only: a known false refusal)
        # %% cell: causal_mask                     (replaces that answer cell of the reference;
        ...source...                                in a by-hand cell, {answer} stands for the
                                                    student's right numbers)
        # %% patch: mha_forward                    (the reference cell with lines replaced:
        # - old text                                each '# - ' line's text, which must occur once,
        # + new text                                becomes the following '# + ' lines, indented
        # + second new line                         like the old text's line)
        # %% added                                 (a cell the student added, inserted before the
        ...source...                                next section's cell, else at the end)

    ``sections`` is ``[(kind, grade_id or None, text)]`` in file order, ``kind`` one of
    ``"cell"``, ``"patch"``, ``"added"``."""

    name: str
    path: Path
    sections: list[tuple[str, str | None, str]]
    breaks: tuple[str, ...] = ()
    mistake: str | None = None
    xfail: str | None = None

    @property
    def cells(self) -> set[str]:
        """The answer cells this case changes."""
        return {gid for _, gid, _ in self.sections if gid}

    def patches(self, text: str) -> list[tuple[str, str]]:
        """``[(old, new)]`` of a patch section's text: each ``# - old`` line is followed by one or
        more ``# + new`` lines (joined with newlines; a bare ``# +`` is an empty line)."""
        edits: list[tuple[str, list[str]]] = []
        for ln in text.splitlines():
            if ln.startswith("# - "):
                edits.append((ln[4:], []))
            elif (ln.startswith("# + ") or ln == "# +") and edits:
                edits[-1][1].append(ln[4:])
        if not edits or any(not new for _, new in edits):
            raise ValueError(f"{self.path}: a patch section needs '# - old' lines, each followed by '# + new' lines")
        return [(old, "\n".join(new)) for old, new in edits]


def _parse_case(path: Path) -> Case:
    import re
    head: dict[str, str] = {}
    sections: list[tuple[str, str | None, list[str]]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.fullmatch(r"# %% (?:(cell|patch): *(\w+)|(added))\s*", line)
        if m:
            sections.append((m.group(1) or "added", m.group(2), []))
        elif sections:
            sections[-1][2].append(line)
        else:
            h = re.fullmatch(r"# *(breaks|mistake|xfail): *(.*)", line)
            if h:
                head[h.group(1)] = h.group(2).strip()
    if not any(gid for _, gid, _ in sections):
        raise ValueError(f"{path}: no '# %% cell: <grade_id>' or '# %% patch: <grade_id>' section")
    breaks = tuple(b.strip() for b in head.get("breaks", "").split(",") if b.strip())
    case = Case(path.stem, path, [(k, gid, "\n".join(lines).strip() + "\n") for k, gid, lines in sections],
                breaks, head.get("mistake"), head.get("xfail"))
    for kind, _, text in case.sections:
        if kind == "patch":
            case.patches(text)
    return case


def load_cases(folder: str | os.PathLike, kind: str) -> dict[str, Case]:
    """``{name: Case}`` from ``folder/<kind>/*.py`` (``kind`` = ``"wrong"`` or ``"honest"``), sorted."""
    return {p.stem: _parse_case(p) for p in sorted(Path(folder, kind).glob("*.py"))}
