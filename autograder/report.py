"""``python -m autograder report COURSE --assignment A``: the instructor's view of the class.

Reads what ``grade`` wrote -- ``COURSE/reports/<A>/<student>.json`` (one per submission:
``status``, ``items`` with each test cell's ``ok``/``points``/``max_points``/``message``/``flag``,
``flags``, ``reason``) and, when present, ``COURSE/grades.csv`` -- and renders one
self-contained HTML page, ``COURSE/reports/<A>/class.html``:

* the score distribution of the class and, per item, how many students earned it, made a
  **named mistake** (a mistake the grader recognised), were wrong otherwise, or were not graded;
* per item, the named mistakes ranked by how many students made them, and the other kinds of
  failure (timed out, wrong shape, stub left, ...), with the students concerned;
* the submissions flagged for review and those that could not be graded, with the reasons;
* where the class stands on the course's skills (the ``attnlab.practice`` skill of every by-hand
  item, the function each code item asks for) for this assignment and for every assignment
  graded in ``COURSE`` so far.

Figures are matplotlib PNGs embedded as ``data:`` URIs (the file can be mailed or opened from
JupyterLab's file browser).  Every string a student controls -- ids, messages that quote their
code's exceptions, flags -- is HTML-escaped; figures only carry item ids and mistake names,
which come from the course's ``grading.py`` and the misconception catalogue.
"""
from __future__ import annotations

import base64
import csv
import html
import io
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .verdict import NAMED_MISTAKE, PASSED
from .grade_report import read_reports

#: Outcome of one (student, item): earned, named mistake, other wrong answer, not graded.
OUTCOMES = ("earned", "named mistake", "other failure", "not graded")
#: Okabe-Ito colours (readable with every common colour-vision deficiency), one per outcome.
COLOURS = {"earned": "#009E73", "named mistake": "#E69F00", "other failure": "#D55E00",
           "not graded": "#BBBBBB"}

_FUNCTION_MISTAKE = re.compile(r"matches a known mistake:\s*(?P<name>.+?)\s*$")
_BY_HAND_MISTAKE = re.compile(r"it looks like (?P<title>.+?)\.\s")


class ReportError(RuntimeError):
    """Nothing to report on (no graded submissions for the assignment); the message says why."""


# ----------------------------------------------------------------------------- reading
def named_mistake(item: dict) -> str | None:
    """The name of the mistake the grader recognised in one report item, or ``None``.

    Reads the structured field ``item["mistake"]`` (or ``item["misconception"]``), which the grader
    writes with every verdict (:mod:`autograder.verdict`); an item of a report written before
    verdicts carried their kind (no ``kind`` field) is recognised by the two messages the grader
    wrote then:
    ``"<target>: the result matches a known mistake: <name>"`` (``FunctionCheck.mistakes``; a
    catalogued misconception written out as ``"<title>. <why>"`` is shown by its title) and
    ``"`var`: Not quite: it looks like <title>. <why>"`` (a by-hand answer matching an
    ``attnlab.practice`` misconception, shown by its catalogue title without the leading "you").
    """
    if item.get("ok"):
        return None
    for key in ("mistake", "misconception"):
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return _misconception_label(value.strip())
    if item.get("kind"):
        return None  # a verdict with its kind: no mistake field means none was recognised
    message = str(item.get("message") or "")
    m = _FUNCTION_MISTAKE.search(message)
    if m:  # a catalogued misconception may be written out as "<title>. <why>": keep the title
        return _catalogue_title(m.group("name")) or m.group("name")
    m = _BY_HAND_MISTAKE.search(message)
    if m:
        return _strip_you(m.group("title"))
    return None


def _misconception_label(name: str) -> str:
    try:
        from attnlab.practice import MISCONCEPTIONS
    except ImportError:  # pragma: no cover - the grader always has attnlab
        return name
    m = MISCONCEPTIONS.get(name)
    return _strip_you(m.title) if m else name


def _catalogue_title(text: str) -> str | None:
    """The title (without "you ") of the catalogued misconception ``text`` starts with, if any."""
    try:
        from attnlab.practice import MISCONCEPTIONS
    except ImportError:  # pragma: no cover
        return None
    for m in MISCONCEPTIONS.values():
        if text == m.title or text.startswith(m.title + "."):
            return _strip_you(m.title)
    return None


def _strip_you(title: str) -> str:
    return title[4:] if title.lower().startswith("you ") else title


#: Reports written before verdicts carried their kind: (pattern on the item message, failure
#: kind) for failures that are not a named mistake; the first match wins.
_KINDS = [
    (r"^no credit: this test cell was tampered", "test cell tampered with"),
    (r"no credit pending instructor review", "held for review (suspicious code)"),
    (r"^no credit: .*(ran the library operation|uses?|used|reference)", "used the library version"),
    (r"^no credit: .*returned an object of type", "returned an unsupported type"),
    (r"^timed out", "timed out (an infinite loop?)"),
    (r"^out of memory", "ran out of memory"),
    (r"^crashed", "crashed (sys.exit or the process died)"),
    (r"^error: NotImplementedError", "not attempted (stub left)"),
    (r"^error: (?P<exc>[A-Za-z_][A-Za-z0-9_]{0,40})\b", "raised {exc}"),
    (r"still None", "not answered"),
    (r"must be the numbers themselves", "by-hand answer written as code"),
    (r"answer cell .* does not assign|is missing", "not answered"),
    (r"answer cell .* is not valid Python", "answer cell is not valid Python"),
    (r"I could not read that answer", "answer in a form that cannot be read"),
    (r": shape \(|has shape|axes but|entries but should have", "wrong shape"),
    (r"must be a bool tensor", "wrong dtype (mask not bool)"),
    (r"NaN/inf", "NaN/inf where none belong"),
    (r"returned None", "returned None"),
    (r"expected \d+ returned values|returned values", "wrong number of returned values"),
    (r"values differ from the reference|first wrong entry|is not right|differs from the reference",
     "wrong values (no known mistake)"),
]


def failure_kind(item: dict) -> str:
    """A short, fixed name for a failed item that is not a named mistake: the ``kind`` the grader
    wrote with its verdict (:mod:`autograder.verdict`).  Only a report written before verdicts
    carried their kind is read from its message text (``_KINDS``)."""
    kind = item.get("kind")
    if isinstance(kind, str) and kind.strip() and kind not in (PASSED, NAMED_MISTAKE):
        return kind
    message = str(item.get("message") or "")
    body = message.split(": ", 1)[1] if re.match(r"^[\w`]+: ", message) and not re.match(
        r"^(no credit|timed out|out of memory|crashed|error): ", message) else message
    for text in (message, body):
        for pattern, kind in _KINDS:
            m = re.search(pattern, text)
            if m:
                return kind.format(**m.groupdict())
    return "other"


def _read_grades(course: Path, assignment: str, csv_path: Path | None) -> dict[str, dict]:
    """``{student: grades.csv row}`` for ``assignment`` (empty when there is no CSV)."""
    candidates = [csv_path] if csv_path else [course / "grades.csv", course / f"grades-{assignment}.csv"]
    rows: dict[str, dict] = {}
    for path in candidates:
        if path is None or not Path(path).is_file():
            continue
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                if row.get("assignment") in (assignment, None) and row.get("student_id"):
                    rows[row["student_id"]] = row
    return rows


@dataclass
class Skill:
    """What one item practises: an ``attnlab.practice`` skill, or writing one function."""

    key: str
    title: str
    lesson: str = ""


def _item_skills(course: Path, assignment: str) -> tuple[dict[str, Skill], list[str], str | None]:
    """``({grade_id: Skill}, [grade_ids in the spec's order], problem)`` from the set's grading.py.

    Looks in ``COURSE/source/<A>/grading.py`` (what ``grade`` staged), then the course repository's
    ``solutions/<A>/grading.py``.  A spec that cannot be loaded leaves the map empty and says why.
    """
    from .course import SOLUTIONS
    from .spec import load_spec
    for path in (course / "source" / assignment / "grading.py", SOLUTIONS / assignment / "grading.py"):
        if not path.is_file():
            continue
        try:
            spec = load_spec(path)
        except Exception as err:  # noqa: BLE001 - the report still renders without skills
            return {}, [], f"{path} could not be loaded ({type(err).__name__}: {err})"
        skills, order = {}, []
        for check in spec.checks:
            order.append(check.grade_id)
            skills[check.grade_id] = _skill_of(check, assignment)
        return skills, order, None
    return {}, [], f"no grading.py for {assignment} (looked in {course / 'source'} and {SOLUTIONS})"


def _skill_of(check, assignment: str) -> Skill:
    name = getattr(check, "skill", None)
    if name:
        try:
            from attnlab.practice import get_skill
            s = get_skill(name)
            return Skill(name, s.title, s.lesson)
        except Exception:  # noqa: BLE001 - an unknown skill name is still a skill
            return Skill(name, name)
    target = getattr(check, "target", None) or check.grade_id
    return Skill(f"code:{target}", f"writes {target}()", assignment[:2])


# ----------------------------------------------------------------------------- the model
@dataclass
class ItemStats:
    grade_id: str
    max_points: float = 0.0
    skill: Skill | None = None
    outcomes: dict[str, list[str]] = field(default_factory=lambda: {o: [] for o in OUTCOMES})
    mistakes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    failures: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))

    def ranked_mistakes(self) -> list[tuple[str, list[str]]]:
        return sorted(self.mistakes.items(), key=lambda kv: (-len(kv[1]), kv[0]))

    def ranked_failures(self) -> list[tuple[str, list[tuple[str, str]]]]:
        return sorted(self.failures.items(), key=lambda kv: (-len(kv[1]), kv[0]))


@dataclass
class ClassReport:
    """Everything the page shows, computed from the reports (see :func:`build`)."""

    course: Path
    assignment: str
    reports: list[dict]
    grades: dict[str, dict]
    items: list[ItemStats]
    problems: list[str]
    skills_note: str | None
    course_skills: dict[str, dict]
    generated: str

    @property
    def graded(self) -> list[dict]:
        return [r for r in self.reports if r["status"] != "error"]

    @property
    def flagged(self) -> list[dict]:
        return [r for r in self.reports if r["status"] == "flagged" or (r["flags"] and r["status"] != "error")]

    @property
    def errored(self) -> list[dict]:
        return [r for r in self.reports if r["status"] == "error"]

    @property
    def max_score(self) -> float:
        return sum(i.max_points for i in self.items)

    def ranked_mistakes(self) -> list[tuple[str, str, list[str]]]:
        """``(grade_id, mistake, students)`` over all items, most frequent first."""
        rows = [(i.grade_id, name, who) for i in self.items for name, who in i.mistakes.items()]
        return sorted(rows, key=lambda r: (-len(r[2]), r[0], r[1]))


def build(course, assignment: str, csv_path=None) -> ClassReport:
    """Read ``COURSE/reports/<assignment>/*.json`` (and grades.csv) into a :class:`ClassReport`.

    Raises :class:`ReportError` when the assignment has no report files (not graded yet).
    """
    course = Path(course)
    folder = course / "reports" / assignment
    reports, problems = read_reports(course, assignment)
    if not reports:
        raise ReportError(f"no grading reports in {folder}: grade the assignment first "
                          f"(python -m autograder grade {course} --assignment {assignment})")
    skills, order, skills_note = _item_skills(course, assignment)
    items = _items(reports, order, skills)
    return ClassReport(course=course, assignment=assignment, reports=reports,
                       grades=_read_grades(course, assignment, Path(csv_path) if csv_path else None),
                       items=items, problems=problems, skills_note=skills_note,
                       course_skills=_course_skills(course),
                       generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


def _items(reports: list[dict], order: list[str], skills: dict[str, Skill]) -> list[ItemStats]:
    """Items that some report has, in the spec's order (then first seen); the spec's items when
    no report has any (every submission errored)."""
    present: list[str] = []
    for rep in reports:
        present += [g for g in rep["items"] if g not in present]
    seen = [g for g in order if g in present] + [g for g in present if g not in order] if present else list(order)
    stats = {g: ItemStats(g, skill=skills.get(g)) for g in seen}
    for rep in reports:
        for gid, it in rep["items"].items():
            if isinstance(it, dict):
                try:
                    stats[gid].max_points = max(stats[gid].max_points, float(it.get("max_points") or 0))
                except (TypeError, ValueError):
                    pass
    for rep in reports:
        student = rep["student"]
        for gid, st in stats.items():
            it = rep["items"].get(gid)
            if rep["status"] == "error" or not isinstance(it, dict):
                st.outcomes["not graded"].append(student)
            elif it.get("ok"):
                st.outcomes["earned"].append(student)
            elif (name := named_mistake(it)) is not None:
                st.outcomes["named mistake"].append(student)
                st.mistakes[name].append(student)
            else:
                st.outcomes["other failure"].append(student)
                st.failures[failure_kind(it)].append((student, str(it.get("message") or "")))
    return list(stats.values())


def _course_skills(course: Path) -> dict[str, dict]:
    """``{skill key: {"title", "right", "total", "assignments"}}`` over every graded assignment."""
    out: dict[str, dict] = {}
    root = course / "reports"
    if not root.is_dir():
        return out
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        reports, _ = read_reports(course, folder.name)
        if not reports:
            continue
        skills, order, _ = _item_skills(course, folder.name)
        for st in _items(reports, order, skills):
            skill = st.skill or Skill(f"item:{st.grade_id}", st.grade_id)
            rec = out.setdefault(skill.key, {"title": skill.title, "right": 0, "total": 0, "assignments": set()})
            rec["right"] += len(st.outcomes["earned"])
            rec["total"] += sum(len(st.outcomes[o]) for o in OUTCOMES[:3])
            rec["assignments"].add(folder.name)
    return out


# ----------------------------------------------------------------------------- figures
_DPI = 144  # 1.5x the CSS pixel (96 per inch): sharp on high-density screens, shown at its CSS size


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _png_width(src: str) -> int | None:
    """CSS width of a ``_png`` data URI (its pixel width at 96 per inch), from the PNG header."""
    try:
        head = base64.b64decode(src.split(",", 1)[1][:64])
        return round(int.from_bytes(head[16:20], "big") * 96 / _DPI)
    except (IndexError, ValueError):
        return None


def _figure(width: float, height: float):
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend
    fig = Figure(figsize=(width, height))
    fig.set_layout_engine("constrained")
    return fig


def figure_scores(rep: ClassReport) -> str | None:
    """Histogram of the autograded score of every graded submission."""
    scores = [float(r.get("score") or 0.0) for r in rep.graded]
    if not scores:
        return None
    top = rep.max_score or max(scores) or 1.0
    fig = _figure(7.0, 2.6)
    ax = fig.add_subplot()
    step = 1.0 if top <= 30 else top / 30
    bins = [i * step - step / 2 for i in range(int(round(top / step)) + 2)]
    ax.hist(scores, bins=bins, color="#0072B2", edgecolor="white")
    med = statistics.median(scores)
    ax.axvline(med, color="#333333", linestyle="--", linewidth=1)
    ax.annotate(f"median {med:g}", (med, 1), xycoords=("data", "axes fraction"), xytext=(4, -12),
                textcoords="offset points", fontsize=9)
    ax.set_xlim(-step, top + step)
    ax.set_xlabel(f"autograded score (of {top:g})")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def figure_items(rep: ClassReport) -> str | None:
    """One horizontal bar per item: share of students per outcome (stacked)."""
    if not rep.items:
        return None
    items = rep.items[::-1]  # matplotlib draws the first bar at the bottom
    n = len(rep.reports)
    fig = _figure(9.6, 0.42 * len(items) + 1.2)
    ax = fig.add_subplot()
    left = [0] * len(items)
    for outcome in OUTCOMES:
        counts = [len(st.outcomes[outcome]) for st in items]
        bars = ax.barh(range(len(items)), counts, left=left, color=COLOURS[outcome], label=outcome,
                       edgecolor="white", height=0.7)
        for bar, c in zip(bars, counts):
            if c and bar.get_width() >= max(1, n * 0.06):
                ax.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2, str(c),
                        ha="center", va="center", fontsize=9,
                        color="white" if outcome in ("earned", "other failure") else "black")
        left = [a + b for a, b in zip(left, counts)]
    ax.set_yticks(range(len(items)), [f"{st.grade_id} ({st.max_points:g} pt)" for st in items], fontsize=9)
    ax.set_xlim(0, n)
    ax.set_xlabel("students")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend(ncols=4, loc="lower left", bbox_to_anchor=(0, 1.0), frameon=False, fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def figure_mistakes(rep: ClassReport, top: int = 10) -> str | None:
    """The most frequent named mistakes of the assignment (students per mistake)."""
    rows = rep.ranked_mistakes()[:top]
    if not rows:
        return None
    rows = rows[::-1]
    fig = _figure(9.6, 0.38 * len(rows) + 0.9)
    ax = fig.add_subplot()
    ax.barh(range(len(rows)), [len(r[2]) for r in rows], color=COLOURS["named mistake"], height=0.6)
    ax.set_yticks(range(len(rows)), [_short(f"{name}  [{gid}]", 70) for gid, name, _ in rows], fontsize=9)
    ax.set_xlabel("students who made it")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def figure_skills(skills: list[tuple[str, int, int]], title: str) -> str | None:
    """Share right per skill: ``skills`` = ``[(label, right, total)]``."""
    rows = [s for s in skills if s[2]]
    if not rows:
        return None
    rows = rows[::-1]
    fig = _figure(9.6, 0.36 * len(rows) + 1.0)
    ax = fig.add_subplot()
    share = [100.0 * r / t for _, r, t in rows]
    colours = ["#009E73" if s >= 80 else "#E69F00" if s >= 50 else "#D55E00" for s in share]
    ax.barh(range(len(rows)), share, color=colours, height=0.6)
    for y, s in enumerate(share):
        ax.text(min(s, 100) + 1, y, f"{s:.0f}%", va="center", fontsize=9)
    ax.set_yticks(range(len(rows)), [_short(label, 60) for label, _, _ in rows], fontsize=9)
    ax.set_xlim(0, 110)
    ax.set_xticks([0, 25, 50, 75, 100])
    ax.axvline(80, color="#999999", linewidth=0.8, linestyle=":")
    ax.set_xlabel("% of graded answers right")
    ax.set_title(title, fontsize=9, loc="left")
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# ----------------------------------------------------------------------------- HTML
def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _img(src: str | None, alt: str, cls: str = "fig") -> str:
    if not src:
        return ""
    width = _png_width(src)
    size = f' width="{width}"' if width else ""
    return f'<img class="{cls}" src="{src}"{size} alt="{_e(alt)}">'


def _students(names: list[str], limit: int = 12) -> str:
    shown = ", ".join(_e(n) for n in names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return shown + more


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:0;background:#f6f7f9}
main{max-width:1040px;margin:0 auto;padding:20px 28px 60px;background:#fff}
h1{font-size:22px;margin:6px 0 2px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.sub{color:#666;margin:0 0 14px}
.cards{display:flex;gap:10px;flex-wrap:wrap;margin:12px 0}
.card{border:1px solid #e1e4e8;border-radius:6px;padding:8px 14px;min-width:110px}
.card b{display:block;font-size:20px} .card span{color:#666;font-size:12px}
.card.warn b{color:#b35900} .card.bad b{color:#b00020}
table{border-collapse:collapse;width:100%;margin:6px 0 12px;font-size:13px}
th,td{border-bottom:1px solid #eee;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#fafbfc;font-weight:600} td.n{text-align:right;white-space:nowrap;width:1%}
.fig{max-width:100%;height:auto;display:block;margin:6px 0}
.item{border:1px solid #e1e4e8;border-radius:6px;padding:8px 14px;margin:10px 0}
.item h3{margin:4px 0 6px} .muted{color:#777} .pill{display:inline-block;border-radius:9px;padding:0 7px;font-size:12px}
.pill.flagged{background:#fff1d6;color:#8a5300} .pill.error{background:#fde2e4;color:#9b0020}
.pill.graded{background:#dff5ec;color:#006b4a} .pill.other{background:#eee;color:#444}
.bar{display:inline-block;height:9px;background:#E69F00;border-radius:2px;vertical-align:middle;margin-right:6px}
code{background:#f3f4f6;padding:0 3px;border-radius:3px}
details summary{cursor:pointer;color:#0b5cad}
ul.kinds{margin:4px 0;padding-left:18px}
"""


def _pill(status: str) -> str:
    cls = status if status in ("flagged", "error", "graded") else "other"
    return f'<span class="pill {cls}">{_e(status)}</span>'


def render(rep: ClassReport) -> str:
    """The class report as one self-contained HTML page (figures inline)."""
    n = len(rep.reports)
    graded = rep.graded
    scores = [float(r.get("score") or 0.0) for r in graded]
    med = statistics.median(scores) if scores else 0.0
    full = sum(1 for s in scores if rep.max_score and s >= rep.max_score - 1e-9)
    times = [float(r["seconds"]) for r in rep.reports if isinstance(r.get("seconds"), (int, float))]
    out = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Class report: {_e(rep.assignment)}</title><style>{_CSS}</style></head><body><main>",
        f'<h1>Class report: <code>{_e(rep.assignment)}</code></h1>',
        f'<p class="sub">Course folder <code>{_e(rep.course)}</code> · {n} submissions · generated '
        f'{_e(rep.generated)} by <code>python -m autograder report</code>. Autograded points only; '
        "manually graded answers are in formgrader.</p>",
        '<div class="cards">',
        f'<div class="card"><b>{len(graded)}</b><span>graded</span></div>',
        f'<div class="card"><b>{med:g} / {rep.max_score:g}</b><span>median autograded score</span></div>',
        f'<div class="card"><b>{full}</b><span>full marks</span></div>',
        f'<div class="card{" warn" if rep.flagged else ""}"><b>{len(rep.flagged)}</b><span>flagged for review</span></div>',
        f'<div class="card{" bad" if rep.errored else ""}"><b>{len(rep.errored)}</b><span>could not be graded</span></div>',
    ]
    if times:
        out.append(f'<div class="card"><b>{statistics.median(times):.1f} s</b><span>median grading time</span></div>')
    out.append("</div>")
    if rep.problems:
        out.append('<p class="muted">Skipped report files: ' + "; ".join(_e(p) for p in rep.problems) + "</p>")

    out.append('<h2 id="scores">Score distribution</h2>')
    out.append(_img(figure_scores(rep), f"histogram of the autograded scores of {len(graded)} graded submissions"))
    out.append('<h2 id="items">Items</h2><p class="muted">Per test item: students who earned it, made a '
               "mistake the grader recognised, failed otherwise, or whose submission could not be graded.</p>")
    out.append(_img(figure_items(rep), "stacked bars: outcome per item"))
    out.append(_items_table(rep))

    out.append('<h2 id="mistakes">Named mistakes</h2>')
    ranked = rep.ranked_mistakes()
    if ranked:
        out.append('<p class="muted">Mistakes the grader recognised (a known wrong implementation or a '
                   "catalogued misconception), most frequent first. Worth a word in the next lecture.</p>")
        out.append(_img(figure_mistakes(rep), "bar chart: students per named mistake"))
        top = max(len(r[2]) for r in ranked)
        out.append("<table class=\"mistakes\"><tr><th>mistake</th><th>item</th><th>students</th><th>who</th></tr>")
        for gid, name, who in ranked:
            width = int(90 * len(who) / top)
            out.append(f'<tr><td>{_e(name)}</td><td><code>{_e(gid)}</code></td><td class="n">'
                       f'<span class="bar" style="width:{width}px"></span>{len(who)}</td>'
                       f"<td>{_students(who)}</td></tr>")
        out.append("</table>")
    else:
        out.append("<p>No named mistake was recognised in this assignment.</p>")
    out.append(_per_item(rep))
    out.append(_review(rep))
    out.append(_skills(rep))
    out.append(_students_table(rep))
    out.append("</main></body></html>")
    return "\n".join(x for x in out if x)


def _items_table(rep: ClassReport) -> str:
    rows = ['<table class="items"><tr><th>item</th><th>skill</th><th>points</th>'
            + "".join(f'<th class="n">{o}</th>' for o in OUTCOMES) + "<th>most frequent named mistake</th></tr>"]
    for st in rep.items:
        ranked = st.ranked_mistakes()
        top = f"{_e(ranked[0][0])} ({len(ranked[0][1])})" if ranked else '<span class="muted">–</span>'
        skill = _e(st.skill.title) if st.skill else '<span class="muted">–</span>'
        rows.append(f"<tr><td><code>{_e(st.grade_id)}</code></td><td>{skill}</td><td class=\"n\">{st.max_points:g}</td>"
                    + "".join(f'<td class="n">{len(st.outcomes[o])}</td>' for o in OUTCOMES)
                    + f"<td>{top}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def _per_item(rep: ClassReport) -> str:
    out = ['<h2 id="per-item">Per item: what went wrong</h2>']
    for st in rep.items:
        wrong = sum(len(st.outcomes[o]) for o in ("named mistake", "other failure"))
        if not wrong:
            continue
        out.append(f'<div class="item"><h3><code>{_e(st.grade_id)}</code> '
                   f'<span class="muted">{wrong} of {len(rep.graded)} graded students lost '
                   f"{_points(st.max_points)}</span></h3>")
        if st.mistakes:
            out.append("<b>Named mistakes</b><ul class=\"kinds\">")
            for name, who in st.ranked_mistakes():
                out.append(f"<li>{_e(name)}: <b>{len(who)}</b> ({_students(who)})</li>")
            out.append("</ul>")
        if st.failures:
            out.append("<b>Other failures</b><ul class=\"kinds\">")
            for kind, rows in st.ranked_failures():
                out.append(f"<li>{_e(kind)}: <b>{len(rows)}</b> ({_students([r[0] for r in rows])})"
                           "<details><summary>the grader's messages</summary><table>")
                for student, message in rows[:50]:
                    out.append(f"<tr><td>{_e(student)}</td><td>{_e(_short(message, 300))}</td></tr>")
                out.append("</table></details></li>")
            out.append("</ul>")
        out.append("</div>")
    return "\n".join(out) if len(out) > 1 else ""


def _points(p: float) -> str:
    return f"{p:g} point" if p == 1 else f"{p:g} points"


def _review(rep: ClassReport) -> str:
    out = ['<h2 id="review">Flagged and not graded</h2>']
    if not rep.flagged and not rep.errored:
        out.append("<p>Every submission was graded; none was flagged.</p>")
        return "\n".join(out)
    out.append('<table class="review"><tr><th>student</th><th>status</th><th>reasons</th></tr>')
    for r in rep.errored + [r for r in rep.flagged if r not in rep.errored]:
        reasons = [str(r.get("reason") or "")] if r["status"] == "error" else [str(f) for f in r["flags"]]
        reasons = [x for x in reasons if x] or ["(no reason recorded)"]
        items = "".join(f"<li>{_e(_short(x, 400))}</li>" for x in reasons)
        out.append(f"<tr><td>{_e(r['student'])}</td><td>{_pill(r['status'])}</td><td><ul class=\"kinds\">{items}</ul></td></tr>")
    out.append("</table><p class=\"muted\">Flagged submissions keep no credit on the flagged items until you "
               "review them in formgrader; submissions that could not be graded have no score.</p>")
    return "\n".join(out)


def _skills(rep: ClassReport) -> str:
    out = ['<h2 id="skills">Skills</h2>']
    per: dict[str, list] = {}
    for st in rep.items:
        skill = st.skill or Skill(f"item:{st.grade_id}", st.grade_id)
        rec = per.setdefault(skill.key, [skill.title, 0, 0, []])
        rec[1] += len(st.outcomes["earned"])
        rec[2] += sum(len(st.outcomes[o]) for o in OUTCOMES[:3])
        rec[3].append(st.grade_id)
    rows = [(title, right, total) for title, right, total, _ in per.values()]
    out.append('<p class="muted">Share of graded answers that were right, per skill (by-hand items are '
               "<code>attnlab.practice</code> skills a student can practise with <code>mastery_check</code>; "
               "code items are named after the function they ask for). Dotted line: 80%.</p>")
    if rep.skills_note:
        out.append(f'<p class="muted">{_e(rep.skills_note)}</p>')
    out.append(_img(figure_skills(rows, f"{rep.assignment}"), "bar chart: % right per skill in this assignment"))
    out.append('<table class="skills"><tr><th>skill</th><th>items</th><th class="n">right</th><th class="n">graded</th></tr>')
    for title, right, total, gids in per.values():
        out.append(f"<tr><td>{_e(title)}</td><td>{', '.join(f'<code>{_e(g)}</code>' for g in gids)}</td>"
                   f'<td class="n">{right}</td><td class="n">{total}</td></tr>')
    out.append("</table>")
    others = {a for rec in rep.course_skills.values() for a in rec["assignments"]} - {rep.assignment}
    if others:
        rows = sorted(((f"{rec['title']}  ({', '.join(sorted(a[:2] for a in rec['assignments']))})",
                        rec["right"], rec["total"]) for rec in rep.course_skills.values()),
                      key=lambda r: r[1] / r[2] if r[2] else 1.0)
        out.append(f"<h3>Across the course ({len(others) + 1} graded assignments)</h3>")
        out.append(_img(figure_skills(rows, "all graded assignments, weakest first"),
                        "bar chart: % right per skill across the course"))
    return "\n".join(out)


def _students_table(rep: ClassReport) -> str:
    out = ['<h2 id="students">Students</h2><details><summary>every submission '
           f"({len(rep.reports)})</summary>",
           '<table class="students"><tr><th>student</th><th>status</th><th class="n">autograded</th>'
           '<th class="n">total (grades.csv)</th><th>items lost</th></tr>']
    for r in sorted(rep.reports, key=lambda r: r["student"]):
        row = rep.grades.get(r["student"], {})
        lost = [g for g, it in r["items"].items() if isinstance(it, dict) and not it.get("ok")]
        auto = "" if r["status"] == "error" else f"{float(r.get('score') or 0):g}"
        out.append(f"<tr><td>{_e(r['student'])}</td><td>{_pill(row.get('status') or r['status'])}</td>"
                   f'<td class="n">{_e(auto)}</td><td class="n">{_e(row.get("score", ""))}</td>'
                   f"<td>{', '.join(f'<code>{_e(g)}</code>' for g in lost)}</td></tr>")
    out.append("</table></details>")
    return "\n".join(out)


def write(course, assignment: str, out=None, csv_path=None) -> Path:
    """Render the report to ``out`` (default ``COURSE/reports/<assignment>/class.html``)."""
    rep = build(course, assignment, csv_path=csv_path)
    dest = Path(out) if out else Path(course) / "reports" / assignment / "class.html"
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.write_text(render(rep), encoding="utf-8")
    tmp.replace(dest)
    return dest
