"""The course registry: the one home of the course's lessons, their order, titles, notebooks,
exercise sets, gate prerequisites and estimated times. The data is ``course.toml`` next to this
module (one ``[[lesson]]`` table per lesson); this module reads it once, checks it and serves it as
frozen :class:`Lesson` values.

Everything else reads it: :func:`attnlab.practice.gate` and the mastery engine
(:mod:`attnlab.practice.mastery`: ``LESSONS``, ``LAST_LESSON``, ``PREREQUISITES`` are derived from
it), the grader's assignment list (:func:`attnlab_grader.records.course.assignments`), the ``attnlab gate`` command,
and the README's course table (:func:`course_table_markdown`, written by
``python scripts/render_tables.py --write``; ``tests/test_course_registry.py`` fails when the
README, the lesson notebooks' titles or the ``solutions/`` and ``exercises/`` folders disagree with it).

Times are **estimates**, not measurements with learners:

* ``minutes`` (a lesson): the lesson authors' estimates;
* ``exercise_minutes``: estimated at about 5 minutes per graded nbgrader point of the set, rounded to
  5 minutes (points in ``solutions/`` when this was written: 01-03: 11, 04: 9, 05: 12, 06-07: 10,
  08: 12, 09: 11, 10: 9).

Measured times sit apart from the estimates, in ``measured_times.json`` next to this module
(:func:`measured_minutes`): the median minutes on task learners' own kernels recorded
(:mod:`attnlab.practice.time_on_task`), as an instructor's ``attnlab-grade class-mastery COURSE
--times-out FILE`` writes them from the practice summaries students submitted.  The course table shows
them in their own column, and says so while there are none.

Source: the course's own design (README "The course", the lessons' "You will be able to" cells); no
paper.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources

__all__ = ["Lesson", "UnknownLesson", "lesson_id", "lessons", "lesson", "exercise_sets", "course_table_markdown",
           "load_lessons", "measured_minutes"]

#: The measured medians' file next to this module (absent until an instructor publishes some).
MEASURED_FILE = "measured_times.json"


@dataclass(frozen=True)
class Lesson:
    """One lesson of the course and the exercise set that follows it.

    ``id``: two digits, ``"00"`` .. ``"10"``. ``title``: the notebook's heading after
    ``"Lesson NN · "`` (a test compares). ``notebook``: the file name in ``lessons/`` (its text source
    is ``lessons/src/<stem>.py``). ``outcomes``: what a learner will be able to do (the README's
    "you will be able to"). ``prerequisites``: skill names (``attnlab.practice`` skills of earlier
    lessons) that the lesson's gate checks. ``minutes`` / ``exercise_minutes``: estimated working time
    (see the module docstring); ``time_note``: a remark shown after the lesson time. ``exercise``: the
    nbgrader assignment name (folder of ``solutions/`` and ``exercises/``), or None (lesson 00 has none).
    """

    id: str
    title: str
    notebook: str
    outcomes: str
    prerequisites: tuple[str, ...]
    minutes: int
    exercise: str | None = None
    exercise_minutes: int | None = None
    time_note: str = ""

    @property
    def number(self) -> int:
        """The lesson number as an int (``"03"`` -> 3)."""
        return int(self.id)

    @property
    def notebook_path(self) -> str:
        """The notebook relative to the repository root, POSIX style (``lessons/03_masks.ipynb``)."""
        return f"lessons/{self.notebook}"

    @property
    def source_path(self) -> str:
        """The notebook's text source relative to the repository root (``lessons/src/03_masks.py``)."""
        return f"lessons/src/{self.notebook.removesuffix('.ipynb')}.py"

    @property
    def exercise_path(self) -> str | None:
        """The student notebook of the exercise set relative to the repository root, or None."""
        return f"exercises/{self.exercise}/{self.exercise}.ipynb" if self.exercise else None


#: the registry's data file, next to this module (package data): one ``[[lesson]]`` table per lesson
DATA_FILE = "course.toml"
_FIELDS: dict[str, type] = {"id": str, "title": str, "notebook": str, "outcomes": str, "prerequisites": list, "minutes": int,
           "exercise": str, "exercise_minutes": int, "time_note": str}
_REQUIRED = {"id", "title", "notebook", "outcomes", "prerequisites", "minutes"}


def load_lessons(text: str, where: str = DATA_FILE) -> tuple[Lesson, ...]:
    """The lessons a registry data file (TOML) describes, in file order, checked.

    Each ``[[lesson]]`` table has the fields of :class:`Lesson`; ``exercise`` and
    ``exercise_minutes`` are left out for a lesson without an exercise set.

    Raises:
        ValueError: naming ``where`` and the lesson, for a TOML syntax error, an unknown or missing
            field, a field of the wrong type, an id that is not the next two-digit number, or an
            ``exercise`` given without ``exercise_minutes`` (or the reverse).
    """
    try:
        tables = tomllib.loads(text).get("lesson", [])
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{where}: not valid TOML ({err})") from None
    entries = []
    for n, table in enumerate(tables):
        name = f"{where}: lesson {n} ({table.get('id', 'no id')})"
        unknown, missing = set(table) - set(_FIELDS), _REQUIRED - set(table)
        if unknown or missing:
            raise ValueError(f"{name}: unknown fields {sorted(unknown)}, missing fields {sorted(missing)}")
        for key, value in table.items():
            wrong = not isinstance(value, _FIELDS[key]) or isinstance(value, bool)
            if wrong or (isinstance(value, list) and not all(isinstance(v, str) for v in value)):
                raise ValueError(f"{name}: {key} must be {_FIELDS[key].__name__}"
                                 f"{' of skill names' if key == 'prerequisites' else ''}, got {value!r}")
        if table["id"] != f"{n:02d}":
            raise ValueError(f"{name}: ids run 00, 01, ... in file order; expected {n:02d}")
        if ("exercise" in table) != ("exercise_minutes" in table):
            raise ValueError(f"{name}: give exercise and exercise_minutes together, or neither")
        entries.append(Lesson(**{**table, "prerequisites": tuple(table["prerequisites"])}))
    if not entries:
        raise ValueError(f"{where}: no [[lesson]] tables")
    return tuple(entries)


_LESSONS = load_lessons(resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8"))
_BY_ID = {entry.id: entry for entry in _LESSONS}


class UnknownLesson(ValueError):
    """Raised by :func:`lesson` for a lesson the course does not have (or an id that is not a number).

    The message says what was asked for and the valid range, e.g. ``there is no lesson 11 in this
    course: the lessons are 00 to 10``; ``requested`` holds the argument as given.
    """

    def __init__(self, requested: object):
        self.requested = requested
        text = str(requested).strip()
        try:
            lesson_id(text)
            shown = text
        except ValueError:
            shown = repr(requested)
        super().__init__(f"there is no lesson {shown} in this course: the lessons are "
                         f"{_LESSONS[0].id} to {_LESSONS[-1].id}")


def lesson_id(lesson: str | int) -> str:
    """Normalise ``3``, ``"3"``, ``"03"`` or ``"03_masks"`` to ``"03"`` (whether or not the course has it).

    Raises ValueError (``lesson must look like '03' or 3``) when the text does not start with digits.
    """
    text = str(lesson).strip()
    digits = text.split("_", 1)[0]
    if not digits.isdigit():
        raise ValueError(f"lesson must look like '03' or 3, got {lesson!r}")
    return f"{int(digits):02d}"


def lessons() -> tuple[Lesson, ...]:
    """Every lesson of the course, in order (``"00"`` first)."""
    return _LESSONS


def lesson(which: str | int) -> Lesson:
    """The lesson ``which`` names: ``3``, ``"3"``, ``"03"`` or ``"03_masks"``.

    Raises :class:`UnknownLesson` (a ValueError) naming the argument and the valid range when the
    course has no such lesson or the argument is not a lesson number.
    """
    try:
        return _BY_ID[lesson_id(which)]
    except (KeyError, ValueError):
        raise UnknownLesson(which) from None


def exercise_sets() -> tuple[str, ...]:
    """The nbgrader assignment names (folders of ``solutions/`` and ``exercises/``), in lesson order."""
    return tuple(entry.exercise for entry in _LESSONS if entry.exercise)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def measured_minutes(text: str | None = None) -> tuple[str | None, dict[str, tuple[float, int]]]:
    """``(date measured, {unit: (median minutes, learners)})`` from ``measured_times.json`` (or
    ``text``, its content), units as :func:`attnlab.practice.time_on_task.unit_of` names them
    (``"lesson 03"``, ``"exercise 03_masks"``); ``(None, {})`` when the file is absent.

    Raises ValueError (naming the file and what is wrong) when the file is not in the form
    ``{"measured_at": "YYYY-MM-DD", "units": {unit: {"median": minutes, "learners": n}}}``."""
    import json
    if text is None:
        try:
            text = resources.files(__package__).joinpath(MEASURED_FILE).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None, {}
    try:
        doc = json.loads(text)
        units = {str(u): (float(d["median"]), int(d["learners"])) for u, d in doc["units"].items()}
        when = str(doc["measured_at"])
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"src/attnlab/{MEASURED_FILE} is not the file `attnlab-grade class-mastery --times-out` "
                         f"writes ({type(err).__name__}: {err}); write it again with that command") from None
    return when, units


def _measured_cell(entry: Lesson, units: dict[str, tuple[float, int]]) -> str:
    parts = []
    for label, unit in (("lesson", f"lesson {entry.id}"), ("exercise", f"exercise {entry.exercise}")):
        if unit in units:
            median, n = units[unit]
            parts.append(f"{label} {median:.0f} min ({n} learner{'s' if n != 1 else ''})")
    return ", ".join(parts) or "–"


def course_table_markdown(measured: tuple[str | None, dict[str, tuple[float, int]]] | None = None) -> str:
    """The README's course table (GitHub Markdown, links relative to the repository root), with a
    closing line giving the total estimated time. Ends with a newline.

    ``measured``: what :func:`measured_minutes` returns (default: read it); the column "measured
    (median)" shows it, and the closing line says when nothing has been measured yet."""
    when, units = measured if measured is not None else measured_minutes()
    rows = ["| # | lesson | you will be able to | gate: skills needed first | time (estimate) | measured (median) "
            "| exercise (autograded) |",
            "|---|---|---|---|---|---|---|"]
    for entry in _LESSONS:
        gate = ", ".join(f"`{name}`" for name in entry.prerequisites) or "–"
        time = f"{entry.minutes} min" + (f" ({entry.time_note})" if entry.time_note else "")
        exercise = (f"[{entry.exercise}]({entry.exercise_path}), about {entry.exercise_minutes} min"
                    if entry.exercise else "–")
        rows.append(f"| {entry.id} | [{_cell(entry.title)}]({entry.notebook_path}) | {_cell(entry.outcomes)} | "
                    f"{gate} | {time} | {_measured_cell(entry, units)} | {exercise} |")
    lesson_total = sum(entry.minutes for entry in _LESSONS)
    exercise_total = sum(entry.exercise_minutes or 0 for entry in _LESSONS)
    closing = (f"The measured column is the median time on task learners' own kernels recorded (cells run, "
                f"pauses over 10 minutes not counted), as submitted with their practice summaries up to {when}."
                if units else "No learner has been timed yet: the measured column fills in once an instructor "
                "publishes the times learners' kernels recorded (`attnlab-grade class-mastery --times-out`).")
    rows += ["", f"In all about {lesson_total / 60:.0f} h of lessons and {exercise_total / 60:.0f} h of exercises "
                 "(estimates: lesson times are the authors', exercise times about 5 minutes per graded point). "
                 + closing]
    return "\n".join(rows) + "\n"
