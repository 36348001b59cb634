"""Pages of the course website generated from the course itself, written before Sphinx reads its sources.

* ``lessons/NN_*.py``: the lessons' jupytext sources (``lessons/src``), copied unchanged so that Sphinx
  and jupyter-cache see them inside the site (myst-nb reads them with jupytext and executes them);
* ``course/NN.md``: one page per lesson with its time, gate and skills, from the course registry
  (:mod:`attnlab.course`) and the skill registry (:mod:`attnlab.practice`): never restated by hand;
* ``mastery/NN.md``: each skill of the lesson as a worked problem (a fixed example, the worked answer
  folded away) and the command that practises it;
* ``exercises/NN_*.ipynb``: the exercise sets as students receive them (``exercises/``, nbgrader's
  release: no solutions, no hidden tests, no grading specs).

A file is written only when its text changes, so an unchanged page is not read again and an unchanged
lesson is not executed again (jupyter-cache keys on the notebook's content). Stale generated files are
removed. The folders are git-ignored: they are build products.

Also: a link in an included document (``{include}`` of autograder/*.md, deploy/**/README.md, ...) to another
included document leads to the page that includes it; one to any other file of the repository is shown as
the file's path in code style; one to a file that does not exist stays an error (strict build).
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

SITE = Path(__file__).resolve().parents[1]
ROOT = SITE.parent
GENERATED = ("lessons", "course", "mastery", "exercises")


def _write(path: Path, text: str | bytes, written: set[Path]) -> None:
    """Write ``path`` when its content differs (keeps mtimes of unchanged pages)."""
    written.add(path)
    data = text.encode() if isinstance(text, str) else text
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _prune(folder: Path, keep: set[Path]) -> None:
    if not folder.is_dir():
        return
    for p in folder.rglob("*"):
        if p.is_file() and p not in keep:
            p.unlink()


def _md_cell(text: str) -> str:
    """One line of text for a list-table cell."""
    return " ".join(text.split())


def lesson_page(entry: Any, skills: list[Any], skill_lesson: dict[str, str]) -> str:
    """The overview page of one lesson (MyST Markdown): time, gate, skills, exercise set."""
    stem = entry.notebook.removesuffix(".ipynb")
    time = f"about {entry.minutes} min" + (f" ({entry.time_note})" if entry.time_note else "")
    gate = ", ".join(f"{{ref}}`{name} <skill-{name}>` (lesson {skill_lesson[name]}, "
                     f"{{numref}}`plan-{skill_lesson[name]}`)" for name in entry.prerequisites) \
        or "none: this lesson is open from the start"
    practised = ", ".join(f"{{ref}}`{s.name} <skill-{s.name}>`" for s in skills) or "none"
    rows = [
        ("The lesson", f"{{doc}}`../lessons/{stem}`, {time}"),
        ("You will be able to", _md_cell(entry.outcomes)),
        ("Gate: skills needed first", gate),
        ("Skills checked after it", practised),
    ]
    if entry.exercise:
        rows.append(("Exercise set (autograded)",
                     f"{{doc}}`../exercises/{entry.exercise}`, about {entry.exercise_minutes} min"))
    table = "\n".join(f"* - {head}\n  - {body}" for head, body in rows)
    return f"""(course-{entry.id})=
# Lesson {entry.id} · {entry.title}

:::{{list-table}} Lesson {entry.id} at a glance
:name: plan-{entry.id}
:header-rows: 0
:stub-columns: 1
:widths: 25 75

{table}
:::

The lesson's first cell is its gate: it checks the skills above and offers practice for any that is not
mastered yet (it never stops you; `attnlab gate {entry.id}` runs the same check in a terminal). The skills
checked after the lesson, as worked problems: {{doc}}`../mastery/{entry.id}`.
"""


def mastery_page(entry: Any, skills: list[Any]) -> str:
    """The mastery cards of one lesson: each skill as a worked problem with the answer folded away."""
    parts = [f"(mastery-{entry.id})=\n# Mastery cards · lesson {entry.id}\n",
             f"Each card is one skill of {{doc}}`../lessons/{entry.notebook.removesuffix('.ipynb')}`, shown "
             "with one fixed example; open the fold to see the worked answer. To practise a skill on fresh "
             "numbers until it is mastered, run `attnlab practice SKILL` in a terminal, or use the practice "
             "card at the end of the lesson in JupyterLab.\n"]
    if not skills:
        parts.append("This lesson has no skills of its own.\n")
    for skill in skills:
        variant = skill.variant(0)
        hint = html.escape(skill.hints[0])
        worked = html.escape(skill.worked(variant))
        parts.append(f"""(skill-{skill.name})=
## {skill.title}

{variant.prompt}

```{{raw}} html
<details class="attnlab-worked"><summary>Hint</summary><p>{hint}</p></details>
<details class="attnlab-worked"><summary>Worked answer</summary><p>{worked}</p></details>
```

Practise this skill: `attnlab practice {skill.name}`.
""")
    return "\n".join(parts)


def generate(app: Sphinx | None = None) -> None:
    """Write every generated page (see the module docstring)."""
    from attnlab.course import lessons
    from attnlab.practice import all_skills

    written: set[Path] = set()
    for src in sorted((ROOT / "lessons" / "src").glob("[0-9][0-9]_*.py")):
        _write(SITE / "lessons" / src.name, src.read_bytes(), written)
    skills = all_skills()
    skill_lesson = {s.name: s.lesson for s in skills}
    index = ["# Course plan\n", "One page per lesson: its time, its gate and the skills checked after it, "
             "read from the course registry.\n", "```{toctree}\n:maxdepth: 1\n"]
    mastery_index = ["# Mastery cards\n", "Every skill the course checks, one page per lesson.\n",
                     "```{toctree}\n:maxdepth: 1\n"]
    exercise_index = ["# Exercise sets\n",
                      "The autograded exercise sets as students receive them: the solutions and hidden tests "
                      "stay with the instructor. Download a set from JupyterLab's assignment list (in a class) "
                      "or open `exercises/` in your copy of the course; `attnlab check NOTEBOOK` grades your "
                      "copy as the grader does.\n", "```{toctree}\n:maxdepth: 1\n"]
    for entry in lessons():
        own = [s for s in skills if s.lesson == entry.id]
        _write(SITE / "course" / f"{entry.id}.md", lesson_page(entry, own, skill_lesson), written)
        _write(SITE / "mastery" / f"{entry.id}.md", mastery_page(entry, own), written)
        index.append(f"{entry.id}\n")
        mastery_index.append(f"{entry.id}\n")
        if entry.exercise:
            src = ROOT / entry.exercise_path
            _write(SITE / "exercises" / f"{entry.exercise}.ipynb", src.read_bytes(), written)
            exercise_index.append(f"{entry.exercise}\n")
    for folder, text in (("course", index), ("mastery", mastery_index), ("exercises", exercise_index)):
        _write(SITE / folder / "index.md", "".join(text) + "```\n", written)
    for folder in GENERATED:
        _prune(SITE / folder, written)


def _included_pages() -> dict[Path, str]:
    """The repository documents that pages of the site include (``{include}``), mapped to the page that
    includes the whole document (else one that includes a part of it)."""
    whole: dict[Path, str] = {}
    part: dict[Path, str] = {}
    for page in sorted(SITE.rglob("*.md")):
        if set(page.relative_to(SITE).parts) & {"_build", "vendor", *GENERATED}:
            continue
        blocks = page.read_text().split("```{include}")[1:]
        for block in blocks:
            head, _, rest = block.partition("\n")
            target = (page.parent / head.strip()).resolve()
            options = rest.split("```", 1)[0]
            found = part if (":start-after:" in options or ":end-before:" in options) else whole
            found.setdefault(target, page.relative_to(SITE).with_suffix("").as_posix())
    return {**part, **whole}  # a page that includes the whole document wins over one with a part of it


def _repo_file_link(app: Sphinx, env: Any, node: Any, contnode: nodes.Element) -> nodes.Element | None:
    """A link, in an included repository document, to another repository file.

    To a document that a page includes: a link to that page. To any other existing file of the repository
    (code, configuration): the file's path in code style, since the site does not publish it. To a file that
    does not exist: None, so the strict build reports the broken link.
    """
    if node.get("reftype") != "myst":
        return None
    target = str(node.get("reftarget", ""))
    if not target or "://" in target or target.startswith("#"):
        return None
    if node.get("refdomain") == "doc" and target in env.all_docs:
        return None  # a page of the site: MyST resolves it
    path, _, anchor = target.partition("#")
    anchor = anchor or str(node.get("reftargetid") or "")
    source = Path(node.source or env.doc2path(node["refdoc"])).resolve()
    if node.get("refdomain") == "doc":  # MyST found a file and named it as a document path
        path = path if Path(path).is_absolute() else str(Path(env.srcdir) / path)
    cand = Path(path) if Path(path).is_absolute() else (source.parent / path)
    cand = cand.resolve()
    if not cand.exists() and cand.with_suffix(".md").exists():
        cand = cand.with_suffix(".md")
    try:
        rel = cand.relative_to(ROOT)
    except ValueError:
        return None
    if not cand.exists() or not rel.parts or rel.parts[0] == "site":
        return None
    page = _included_pages().get(cand)
    if page is not None:
        uri = app.builder.get_relative_uri(node["refdoc"], page) + (f"#{anchor}" if anchor else "")
        ref = nodes.reference("", "", internal=True, refuri=uri)
        ref += contnode
        return ref
    text = contnode.astext()
    return nodes.literal(text, text if text and text != target else rel.as_posix())


class RepositoryLinks(SphinxPostTransform):
    """Runs :func:`_repo_file_link` on MyST links before MyST's own resolver (priority 9) warns about them."""

    default_priority = 8

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst" or not node.children:
                continue
            new = _repo_file_link(self.app, self.env, node, node[0].deepcopy())
            if new is not None:
                node.replace_self(new)


def _library_object(app: Sphinx, env: Any, node: Any, contnode: nodes.Element) -> nodes.Element | None:
    """A Python reference to an attnlab object by the module that defines it (``attnlab.nn.mha.attention_mask``)
    or by its bare name (``KVCache``), resolved to where the API pages document it (``attnlab.nn.attention_mask``),
    when exactly one documented object matches."""
    if node.get("refdomain") != "py":
        return None
    target = str(node.get("reftarget", ""))
    domain = env.get_domain("py")
    name = target.rsplit(".", 1)[-1]
    if target.startswith("attnlab."):
        matches = [full for full in domain.objects
                   if full.rsplit(".", 1)[-1] == name and full.startswith("attnlab.")
                   and target.startswith(full.rsplit(".", 1)[0].rsplit(".", 1)[0])]
    elif "." not in target:
        matches = [full for full in domain.objects if full.startswith("attnlab.") and full.endswith("." + name)
                   and full.count(".") == 2]
    else:
        return None
    if len(matches) != 1:
        return None
    return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], matches[0], node, contnode)


def _skip_described_attribute(app: Sphinx, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    """Skip a class attribute known only from its annotation (a dataclass field): its class's "Attributes:"
    section describes it, and describing it twice is an error of the strict build."""
    if what == "class" and type(obj) is object:  # autodoc's placeholder for an annotation-only attribute
        return True
    return None


def _drop_property_attributes(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Drop, from a class's "Attributes:" section, an entry for a property: autodoc documents the property
    from its own docstring (two descriptions of one name fail the strict build)."""
    if what != "class" or "Attributes:" not in [ln.strip() for ln in lines]:
        return
    out, section, skipping = [], None, False
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if line.strip() == "Attributes:":
            section = indent
        elif section is not None and line.strip() and indent <= section:
            section = None
        if section is not None and indent == section + 4 and line.strip():
            entry = line.strip().split(":", 1)[0].split(" ", 1)[0]
            skipping = isinstance(getattr(obj, entry, None), property)
        elif section is not None and indent <= section + 4 and line.strip():
            skipping = False
        if not skipping:
            out.append(line)
    lines[:] = out


def _forget_failed_build(app: Sphinx, exception: Exception | None) -> None:
    """After a build with warnings or an error, drop the saved environment: the next build then reads every
    page again and reports the same warnings (an incremental build only reports pages it reads)."""
    if exception is not None or getattr(app, "_warncount", 0):
        (Path(app.doctreedir) / "environment.pickle").unlink(missing_ok=True)


def setup(app: Sphinx) -> dict[str, Any]:
    """Sphinx extension entry point."""
    app.connect("builder-inited", generate)
    app.add_post_transform(RepositoryLinks)
    app.add_js_file("attnlab-require-config.js", priority=400)  # before requirejs: see the file
    app.connect("build-finished", _forget_failed_build)
    app.connect("missing-reference", _library_object)
    app.connect("autodoc-skip-member", _skip_described_attribute)
    app.connect("autodoc-process-docstring", _drop_property_attributes, priority=400)  # before napoleon (500)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":  # pragma: no cover - `python site/_ext/attnlab_site.py` writes the pages
    generate()
    print(f"generated pages under {SITE}")
