"""The class report's figures (matplotlib PNGs as ``data:`` URIs) and its HTML page, drawn from
the :class:`attnlab_grader.reports.class_report.ClassReport` that :func:`attnlab_grader.reports.class_report.build` reads."""
from __future__ import annotations

import base64
import html
import io
import statistics


from pathlib import Path

from attnlab_grader.reports.class_report import COLOURS, OUTCOMES, ClassReport, Skill, _course_skills, build  # noqa: F401

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
        for bar, c in zip(bars, counts, strict=True):
            if c and bar.get_width() >= max(1, n * 0.06):
                ax.text(bar.get_x() + bar.get_width() / 2, bar.get_y() + bar.get_height() / 2, str(c),
                        ha="center", va="center", fontsize=9,
                        color="white" if outcome in ("earned", "other failure") else "black")
        left = [a + b for a, b in zip(left, counts, strict=True)]
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
.item h3{margin:4px 0 6px} .muted{color:#595959} .pill{display:inline-block;border-radius:9px;padding:0 7px;font-size:12px}
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
        f'{_e(rep.generated)} by <code>python -m attnlab_grader report</code>. Autograded points only; '
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
    if rep.back_to_manual:
        out.append('<h2 id="back-to-manual">Grade again by hand</h2><p>These answers changed after they were '
                   "graded by hand, so they wait for manual grading in formgrader again; every other manual "
                   "grade was kept.</p><ul>"
                   + "".join(f"<li><code>{_e(r['student'])}</code>: "
                             + ", ".join(f"<code>{_e(i)}</code>" for i in r["back_to_manual"]) + "</li>"
                             for r in rep.back_to_manual) + "</ul>")

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


def write(course, assignment: str, out=None, csv_path=None, solutions=None) -> Path:
    """Render the report to ``out`` (default ``COURSE/reports/<assignment>/class.html``); item skills
    come from the staged spec, else ``solutions`` (:func:`attnlab_grader.records.course.solutions_dir`)."""
    rep = build(course, assignment, csv_path=csv_path, solutions=solutions)
    dest = Path(out) if out else Path(course) / "reports" / assignment / "class.html"
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.write_text(render(rep), encoding="utf-8")
    tmp.replace(dest)
    return dest
