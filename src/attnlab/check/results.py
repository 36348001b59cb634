"""What ``attnlab check`` found: one :class:`CheckedItem` (the grader's
:class:`~attnlab_grader.judging.verdict.Verdict` of an autograded item, with its points) per test cell, one
:class:`WrittenAnswer` per answer a person grades, gathered in a :class:`CheckReport`."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from attnlab_grader.judging import verdict as V
from attnlab_grader.judging.verdict import Verdict

from .policy import SelfCheckMode


@dataclass(frozen=True)
class CheckedItem:
    """One autograded item (a test cell) as the check judged it.

    ``verdict``: the grader's :class:`~attnlab_grader.judging.verdict.Verdict` (in the ``visible`` mode, what
    the notebook's own test cell said, as a Verdict); ``max_points``: the item's points, ``None`` in the
    ``visible`` mode (not judged)."""

    grade_id: str
    verdict: Verdict
    max_points: float | None = None

    @property
    def status(self) -> str:
        """``"passed"``, ``"not attempted"`` (the Verdict's kind is ``NOT_ATTEMPTED``: its answer cells still
        hold the released stub) or ``"failed"``."""
        if self.verdict.ok:
            return "passed"
        return "not attempted" if self.verdict.kind == V.NOT_ATTEMPTED else "failed"

    @property
    def points(self) -> float | None:
        """Points earned: ``max_points`` when the verdict is ok, else 0 (``None`` in the ``visible`` mode)."""
        if self.max_points is None:
            return None
        return self.max_points if self.verdict.ok else 0.0

    @property
    def message(self) -> str:
        """What the learner reads (the verdict's message)."""
        return self.verdict.message

    @property
    def mistakes(self) -> list[str]:
        """Names from ``attnlab.practice.misconceptions.MISCONCEPTIONS`` the item's values match."""
        return [str(m) for m in (self.verdict.mistakes or ([self.verdict.mistake] if self.verdict.mistake else []))
                if m]

    def as_dict(self) -> dict:
        """The item as ``--json`` writes it: ``grade_id``, ``status``, ``message``, ``points``,
        ``max_points``, ``mistakes``."""
        return {"grade_id": self.grade_id, "status": self.status, "message": self.message, "points": self.points,
                "max_points": self.max_points, "mistakes": self.mistakes}


@dataclass
class WrittenAnswer:
    """A written answer, graded by a person.  ``model_answer``/``rubric`` are filled only in the
    ``full`` mode and only once ``attempted`` (a non-empty answer that differs from the stub)."""

    grade_id: str
    max_points: float
    attempted: bool
    model_answer: str | None = None
    rubric: str | None = None


@dataclass
class CheckReport:
    """What one ``attnlab check`` found; :meth:`text` is what it prints."""

    notebook: str
    assignment: str
    learner: str
    mode: SelfCheckMode
    why: str = ""  #: why this mode (visible: what was not run and why; off: who switched it off)
    items: list[CheckedItem] = field(default_factory=list)
    written: list[WrittenAnswer] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  #: the grader's flags and notes, refusals

    @property
    def score(self) -> float:
        """Points earned on the items the check could judge."""
        return sum(i.points or 0.0 for i in self.items)

    @property
    def max_score(self) -> float:
        """Points of the items the check could judge (0 in the ``visible`` and ``off`` modes)."""
        return sum(i.max_points or 0.0 for i in self.items)

    def to_json(self) -> str:
        """The report as JSON (the fields, the mode's name, ``score`` and ``max_score``)."""
        data = asdict(self)
        data["items"] = [i.as_dict() for i in self.items]
        data["mode"] = self.mode.value
        data["score"], data["max_score"] = self.score, self.max_score
        return json.dumps(data, indent=1)

    def text(self) -> str:
        """The printed report; its last line is ``X / Y points`` (except in the ``off`` mode)."""
        out = [f"{self.notebook}: exercise set {self.assignment}, learner id {self.learner!r}"]
        if self.mode is SelfCheckMode.OFF:
            out.append(self.why)
            return "\n".join(out)
        if self.mode is SelfCheckMode.FULL:
            out.append("Checked with the grader's own checks: your functions ran in its sandbox on fresh random "
                       "inputs and were compared with the reference; by-hand numbers are your own.")
        else:
            out.append(self.why)
        out.append("")
        width = max([len(i.grade_id) for i in self.items] + [4])
        for item in self.items:
            mark = {"passed": "✔", "failed": "✘", "not attempted": "–"}.get(item.status, "?")
            pts = f"{_num(item.points)} / {_num(item.max_points)}" if item.max_points is not None else item.status
            line = f"{mark} {item.grade_id:<{width}}  {pts:>9}  {item.message}"
            if item.mistakes:
                line += f"  [mistake: {', '.join(item.mistakes)}]"
            out.append(line)
        for note in self.notes:
            out.append(f"! {note}")
        if self.written:
            out += ["", "Written answers (graded by your instructor, not counted in the points below):"]
            for w in self.written:
                head = f"  {w.grade_id} ({_num(w.max_points)} points): "
                if not w.attempted:
                    out.append(head + "not attempted yet: write your answer in its cell, save, and check "
                               "again" + (" to see the model answer and the rubric." if self.mode is
                                          SelfCheckMode.FULL else "."))
                elif w.model_answer is None:
                    out.append(head + "answered; your instructor grades it (no model answer is shown here).")
                else:
                    out.append(head + "answered. Compare it with the model answer and the rubric:")
                    out += ["    Model answer: " + _indent(w.model_answer, 4)]
                    out += ["    Rubric: " + _indent(w.rubric or "(none given for this answer)", 4)]
        out += ["", f"{_num(self.score)} / {_num(self.max_score)} points"]
        return "\n".join(out)


def _num(x: float | None) -> str:
    x = x or 0.0
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _indent(text: str, n: int) -> str:
    return text.strip().replace("\n", "\n" + " " * n)
