"""The built course website, read as files: what it holds and what it must never hold.

* every lesson of the course registry is a page (that each executed cleanly and drew a figure:
  tests/notebooks/test_lessons.py, on the notebooks this build executed);
* every lesson's plan page states the registry's time, gate and skills;
* no solution, hidden test or grading spec of ``solutions/`` reaches any file of the site;
* every figure's text alternative is specific (not empty, not a file name, not a generic word, says what
  is plotted);
* every internal link, anchor and image of every page resolves;
* the build is strict: a broken reference, a missing image or a lesson cell's error fails it.
"""
from __future__ import annotations

import html as htmllib
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from site_build import ARTIFACTS, ROOT, pages

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("site")]

sys.path.insert(0, str(ROOT / "scripts"))
import build_site  # noqa: E402 - the strict build's one command line


# ------------------------------------------------------------------------------------------ helpers
class _Page(HTMLParser):
    """Links, ids, images (with alt) and text of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.images: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag in ("script", "img") and a.get("src"):
            self.links.append(a["src"])
        if tag == "link" and a.get("href"):
            self.links.append(a["href"])
        if tag == "img":
            self.images.append((a.get("src") or "", a.get("alt")))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(path: Path) -> _Page:
    """Parse one page; inline images (``<img>`` in outputs) are found inside raw HTML too."""
    page = _Page()
    page.feed(path.read_text(errors="replace"))
    return page


def _external(url: str) -> bool:
    return bool(urlsplit(url).scheme) or url.startswith("//")


# Words describe() (src/attnlab/figure_alt.py) and authors use for a figure's form, not its content.
FORM_WORDS = {"figure", "figures", "panel", "panels", "heatmap", "line", "lines", "bar", "bars", "points",
              "point", "versus", "legend", "image", "plot", "plots", "chart", "graph", "picture", "the",
              "and", "with", "of", "a", "an", "output", "diagram", "axis", "axes", "left", "right"}
GENERIC = re.compile(r"^\s*(figure|image|plot|chart|graph|picture|output|diagram|img)\s*\d*\s*[.:]?\s*$", re.I)
FILE_NAME = re.compile(r"(^[\w./\\-]+\.(png|jpe?g|svg|gif|webp)$)|(^data:)|(_images/)|(^[\w-]+/[\w./-]+$)", re.I)


def alt_problem(alt: str | None) -> str | None:
    """Why ``alt`` is not a specific text alternative for a figure, or None when it is."""
    if alt is None or not alt.strip():
        return "no alt text"
    text = alt.strip()
    if FILE_NAME.search(text):
        return "a file name or path, not a description"
    if GENERIC.match(text):
        return "a generic word, not a description"
    words = [w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z_\-]{2,}", text)]
    content = [w for w in words if w not in FORM_WORDS]
    if len(content) < 2:
        return "does not say what is plotted (no title, axis or legend words)"
    return None


def _secret_lines() -> dict[str, str]:
    """Lines only the instructor has: solution cells, hidden tests, grading specs and answer corpora of
    ``solutions/``, minus any line that is also (as a line or inside one) in what students and readers get
    anyway: the student notebooks, the lessons, the library, the documents the site includes. Maps line ->
    where it comes from."""
    public = []
    for nb_path in (ROOT / "exercises").glob("*/*.ipynb"):
        nb = nbformat.read(nb_path, as_version=4)
        public += ["\n".join(c.source for c in nb.cells)]
    for pattern in ("lessons/src/*.py", "src/**/*.py", "autograder/*.md", "deploy/**/*.md", "docs/*.md",
                    "benchmarks/*.md"):
        public += [p.read_text(errors="replace") for p in ROOT.glob(pattern)]
    public_text = re.sub(r"[ \t]+", " ", "\n".join(public))
    secrets: dict[str, str] = {}
    regions = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS)\n(.*?)### END \1", re.S)
    for src in (ROOT / "solutions").glob("*/*.pct.py"):
        for kind, body in regions.findall(src.read_text()):
            for ln in body.splitlines():
                secrets.setdefault(ln.strip(), f"{src.relative_to(ROOT)} ({kind.lower()})")
    for spec in list((ROOT / "solutions").glob("*/grading*.py")) + list((ROOT / "solutions").glob("*/*/*.py")):
        for ln in spec.read_text(errors="replace").splitlines():
            secrets.setdefault(ln.strip(), str(spec.relative_to(ROOT)))
    # short or common lines (``return out``, ``)``) say nothing about an answer
    return {ln: where for ln, where in secrets.items()
            if len(ln) >= 24 and not ln.startswith(("import ", "from "))
            and re.sub(r"[ \t]+", " ", ln) not in public_text}


def site_text(html: Path) -> str:
    """All text of the built site a reader can get: page text (tags removed) and every other text file."""
    parts = []
    for path in sorted(html.rglob("*")):
        if not path.is_file() or path.suffix in (".png", ".jpg", ".woff", ".woff2", ".ico", ".svg"):
            continue
        raw = path.read_text(errors="replace")
        parts.append(htmllib.unescape("".join(parse(path).text)) if path.suffix == ".html" else raw)
    return "\n".join(parts)


def leaked(text: str, secrets: dict[str, str]) -> list[str]:
    """The secret lines found in ``text`` (whitespace inside a line normalised)."""
    flat = re.sub(r"[ \t]+", " ", text)
    return [f"{where}: {ln!r}" for ln, where in secrets.items() if re.sub(r"[ \t]+", " ", ln) in flat]


# ------------------------------------------------------------------------------------------ tests
def test_every_lesson_is_a_page(site_html):
    """(That each lesson executed without an error and drew a figure: tests/notebooks/test_lessons.py.)"""
    from attnlab.course import lessons

    for entry in lessons():
        stem = entry.notebook.removesuffix(".ipynb")
        page = site_html / "lessons" / f"{stem}.html"
        assert page.is_file(), f"lesson {entry.id} has no page"
        assert f"Lesson {entry.id}" in "".join(parse(page).text), f"{page.name} is not lesson {entry.id}"


def test_lesson_plan_pages_state_the_registry(site_html):
    from attnlab.course import lessons
    from attnlab.practice import skills_for_lesson

    for entry in lessons():
        text = " ".join("".join(parse(site_html / "course" / f"{entry.id}.html").text).split())
        assert f"Lesson {entry.id} · {entry.title}" in text
        assert f"about {entry.minutes} min" in text, f"lesson {entry.id}: its time is not on its page"
        for name in entry.prerequisites:
            assert name in text, f"lesson {entry.id}: gate skill {name} is not on its page"
        for skill in skills_for_lesson(entry.id):
            assert skill.name in text, f"lesson {entry.id}: skill {skill.name} is not on its page"
            card = "".join(parse(site_html / "mastery" / f"{entry.id}.html").text)
            assert f"attnlab practice {skill.name}" in card, f"no practice pointer for {skill.name}"
        if entry.exercise:
            assert (site_html / "exercises" / f"{entry.exercise}.html").is_file()


def test_no_solution_hidden_test_or_grading_spec_reaches_the_site(site_html):
    secrets = _secret_lines()
    assert len(secrets) > 50, f"too few secret lines found ({len(secrets)}): did solutions/ move?"
    found = leaked(site_text(site_html), secrets)
    assert not found, "instructor-only text in the built site:\n" + "\n".join(found[:20])
    built = {p.name for p in site_html.rglob("*")}
    assert not {n for n in built if n.startswith("grading") and n.endswith(".py")}, "a grading spec was copied"


def test_the_leak_check_finds_a_planted_solution_line():
    secrets = _secret_lines()
    line, where = next(iter(secrets.items()))
    page = f"<p>A worked example.</p><pre>    {line}</pre>"
    assert leaked(htmllib.unescape(page), secrets) == [f"{where}: {line!r}"]
    assert leaked("<p>nothing of the instructor's here</p>", secrets) == []


def test_every_figure_has_specific_alt_text(site_html):
    problems, seen = [], 0
    for path in pages(site_html):
        for src, alt in parse(path).images:
            seen += 1
            why = alt_problem(alt)
            if why:
                problems.append(f"{path.relative_to(site_html)}: {why}: alt={alt!r} src={src[:60]!r}")
    lesson_imgs = sum(len(parse(p).images) for p in (site_html / "lessons").glob("*.html"))
    assert lesson_imgs >= 11, f"only {lesson_imgs} figures in the lesson pages"
    (ARTIFACTS / "alt_problems.txt").write_text("\n".join(problems))
    assert not problems, f"{len(problems)} of {seen} images lack a specific text alternative:\n" + \
        "\n".join(problems[:30])


@pytest.mark.parametrize("alt, ok", [
    (None, False), ("", False), ("Figure", False), ("figure 3", False), ("image.png", False),
    ("_images/abc123.png", False), ("Figure. 2 lines", False), ("Figure. a 4x4 heatmap", False),
    ("Figure. Attention weights; a 4x4 heatmap; query versus key", True),
    ("Softmax weights as the temperature T grows: 3 lines, weight versus T", True),
])
def test_the_alt_judge_tells_specific_from_generic(alt, ok):
    assert (alt_problem(alt) is None) == ok, f"{alt!r}: {alt_problem(alt)}"


def test_every_internal_link_anchor_and_image_resolves(site_html):
    parsed = {p: parse(p) for p in pages(site_html)}
    broken = []
    for path, page in parsed.items():
        for link in page.links:
            if _external(link):  # http(s), mailto: checked by nobody offline
                continue
            parts = urlsplit(link)
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{path.relative_to(site_html)} -> {link}: no such file")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(site_html)} -> {link}: no such anchor")
    assert len(parsed) >= 40, f"only {len(parsed)} pages built"
    assert not broken, f"{len(broken)} broken internal links:\n" + "\n".join(broken[:30])


STRICT_CASES = {
    "broken_reference": ("index.md", "# Test\n\nSee {doc}`no-such-page`.\n", "no-such-page"),
    "missing_image": ("index.md", "# Test\n\n![a plot of nothing](no-such-image.png)\n", "no-such-image.png"),
    "cell_error": ("index.md", "# Test\n\n```{toctree}\nbroken\n```\n", "ExecutionError"),
}


@pytest.mark.parametrize("case", sorted(STRICT_CASES))
def test_the_strict_build_fails_on(case, tmp_path):
    name, text, expected = STRICT_CASES[case]
    src = tmp_path / "src"
    src.mkdir()
    (src / name).write_text(text)
    if case == "cell_error":
        (src / "broken.py").write_text("# %% [markdown]\n# # Broken lesson\n\n# %%\n1 / 0\n")
    cmd = build_site.sphinx_command(src, tmp_path / "out", "-D", "nb_execution_mode=force")
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, env=build_site.kernel_env())
    assert out.returncode != 0, f"{case}: the strict build passed:\n{out.stderr[-2000:]}"
    assert expected in out.stdout + out.stderr, f"{case}: the failure does not name {expected!r}:\n" \
        f"{out.stderr[-2000:]}"
    # and the same page without the fault builds (the failure is the fault's, not the harness's)
    (src / name).write_text("# Test\n\nFine.\n")
    (src / "broken.py").unlink(missing_ok=True)
    ok = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, env=build_site.kernel_env())
    assert ok.returncode == 0, f"{case}: the fault-free page did not build:\n{ok.stderr[-2000:]}"


def test_widgets_and_equations_use_the_vendored_scripts(site_html):
    """A page with saved widget state loads the vendored widget manager and MathJax from _static, never from
    a CDN."""
    with_state = [p for p in pages(site_html)
                  if "application/vnd.jupyter.widget-state+json" in p.read_text(errors="replace")]
    assert with_state, "no page holds saved widget state (are the lessons' widgets executed?)"
    for p in with_state:
        text = p.read_text(errors="replace")
        assert "_static/jupyter-widgets/embed-amd.js" in text and "_static/requirejs/require.min.js" in text, p
        assert "cdn.jsdelivr" not in text and "cdnjs" not in text and "unpkg.com" not in text, p
        assert "_static/mathjax/tex-mml-chtml.js" in text, f"{p}: equations not drawn by the vendored MathJax"
