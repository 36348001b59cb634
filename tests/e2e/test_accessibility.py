"""Accessibility in a real headless Chromium: axe-core on what a learner and an instructor see,
and the practice card used from the keyboard alone.

axe-core (``axe.min.js`` as bundled by the ``axe-playwright-python`` package; nothing is
downloaded) runs in the page and reports WCAG violations, each with an impact
(minor/moderate/serious/critical). A page fails on any **serious** or **critical** violation;
the message lists each rule id, the elements it hit and the rule's help URL. All results are
written to ``artifacts/e2e/axe-<page>.json``.

lessons     every lesson notebook opened in JupyterLab, as a learner first sees it (the rendered
            text, equations, tables and code); axe runs on the notebook's cells, not on
            JupyterLab's own menus, side bars and code editor, which the course does not make;
lesson 02   run top to bottom (Run All Cells): the same check on its outputs (figures drawn by
            ``attnlab.viz``, the slider, the mastery card);
report      the class report of a graded class (``python -m attnlab_grader report``), the whole page;
card        the mastery card: axe on the card; then keyboard only -- Tab reaches the answer
            field, typed text and Space on Check give feedback, Tab reaches Next and Space
            gives a fresh problem; the feedback text wraps (no horizontal overflow) at 1280 px
            and at 400 px wide, and no control of the card sticks out of it.

Same server, browser and skip rules as ``test_browser.py`` (the fixtures in conftest.py).
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from e2e_lab import NOTEBOOK

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.xdist_group("e2e")]

BLOCKING = ("serious", "critical")  # axe impacts that fail a page
LESSON02 = "lessons/02_scaled_dot_product_attention.ipynb"
REPORT_COURSE = "autograder/attnlab_grader/tests/fixtures/class_report"
REPORT_ASSIGNMENT = "02_scaled_dot_product_attention"
CARD, ANSWER, CHECK, NEXT, FEEDBACK = (".attnlab-card", ".attnlab-answer", ".attnlab-check",
                                       ".attnlab-next", ".attnlab-feedback")
# What the course writes in a notebook: every cell's rendered text and outputs. JupyterLab's own
# controls inside a cell (the code editor, the collapse-heading button, prompts) are JupyterLab's
# to fix, and so is the notebook's list container. The handle of an ipywidgets slider
# (noUiSlider's role="slider" <div>) gets no accessible name from ipywidgets 8, whatever the
# widget's description: it stays out of the check (the slider's visible label names it, and the
# browser test moves it with the arrow keys).
LESSON_CONTEXT = {
    "include": [[f"{NOTEBOOK} .jp-Cell"]],
    "exclude": [[".jp-InputArea-editor"], [".jp-collapseHeadingButton"], [".jp-InputPrompt"],
                [".jp-OutputPrompt"], [".jp-Collapser"], [".noUi-handle"]],
}
MAX_TABS = 12  # key presses allowed to reach a control of the card from the one before


@pytest.fixture(scope="module")
def axe():
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


def blocking(axe, target, name: str, artifacts_dir, context=None) -> list[str]:
    """Run axe on ``target`` (a Playwright page or frame), limited to ``context`` (a CSS selector)
    when given; save the results and return one line per serious/critical violation."""
    results = axe.run(target, context=context, options={"resultTypes": ["violations"]})
    violations = results.response["violations"]
    (artifacts_dir / f"axe-{name}.json").write_text(json.dumps(violations, indent=1))
    lines = []
    for v in violations:
        if v.get("impact") in BLOCKING:
            where = "; ".join(" ".join(map(str, n["target"])) for n in v["nodes"][:5])
            more = f" (+{len(v['nodes']) - 5} more)" if len(v["nodes"]) > 5 else ""
            lines.append(f"{name}: [{v['impact']}] {v['id']}: {v['help']} -- {where}{more} -- {v['helpUrl']}")
    return lines


def lessons(server) -> list[str]:
    return sorted(p.relative_to(server.root).as_posix()
                  for p in (server.root / "lessons").glob("[0-9][0-9]_*.ipynb"))


def test_every_lesson_has_no_serious_accessibility_violation(lab, lab_server, page, axe, artifacts_dir):
    found = lessons(lab_server)
    assert found, "no lesson notebooks in lessons/"
    problems: list[str] = []
    for rel in found:
        lab.open(rel)
        problems += blocking(axe, page, rel.split("/")[-1].removesuffix(".ipynb"), artifacts_dir,
                             context=LESSON_CONTEXT)
    assert not problems, "serious/critical accessibility violations:\n" + "\n".join(problems)


def test_class_report_has_no_serious_accessibility_violation(lab_server, page, axe, artifacts_dir):
    course = lab_server.root / REPORT_COURSE
    if not course.is_dir():
        pytest.skip(f"e2e: {REPORT_COURSE} is not in the repository (autograder/attnlab_grader/tests/make_report_fixture.py)")
    out = subprocess.run([sys.executable, "-m", "attnlab_grader", "report", str(course), "--assignment",
                          REPORT_ASSIGNMENT], cwd=lab_server.root, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"autograder report failed:\n{out.stdout}\n{out.stderr[-2000:]}"
    html = course / "reports" / REPORT_ASSIGNMENT / "class.html"
    page.goto(html.as_uri())  # the standalone page an instructor opens or shares
    page.locator("h1").first.wait_for(timeout=30_000)
    problems = blocking(axe, page, "class-report", artifacts_dir)
    assert not problems, "serious/critical accessibility violations:\n" + "\n".join(problems)


def _focused_in(page, card_sel: str, control: str) -> bool:
    """True when the focused element is (inside) ``control`` of the card."""
    return page.evaluate(
        "([card, sel]) => { const a = document.activeElement; const c = document.querySelector(card);"
        " return !!(a && c && c.contains(a) && a.closest(sel)); }", [card_sel, control])


def _tab_to(page, card_sel: str, control: str, what: str) -> int:
    for presses in range(1, MAX_TABS + 1):
        page.keyboard.press("Tab")
        if _focused_in(page, card_sel, control):
            return presses
    active = page.evaluate("() => { const a = document.activeElement;"
                           " return a ? a.outerHTML.slice(0, 200) : null; }")
    raise AssertionError(f"{MAX_TABS} Tab presses did not reach {what}; focus is on {active}")


def _overflow(page, width: int) -> dict:
    page.set_viewport_size({"width": width, "height": 800})
    page.wait_for_timeout(300)  # JupyterLab lays the panel out again on resize
    return page.locator(f"{CARD} {FEEDBACK}").first.evaluate(
        "(el) => { el.scrollIntoView({block: 'center'}); const inner = el.querySelector('div') || el;"
        " const card = el.closest('.attnlab-card'); const nb = el.closest('.jp-Notebook');"
        " return {scroll: el.scrollWidth, client: el.clientWidth, inner: inner.scrollWidth,"
        " innerClient: inner.clientWidth, card: card && card.clientWidth, notebook: nb && nb.clientWidth,"
        " cut: [...card.querySelectorAll('button, input')].filter(b =>"
        "   b.getBoundingClientRect().right > card.getBoundingClientRect().right + 1)"
        "   .map(b => b.textContent.trim() || b.tagName),"
        " text: el.textContent.trim()}; }")


def test_lesson02_outputs_and_practice_card_accessible_from_the_keyboard(lab, lab_server, page, axe,
                                                                         artifacts_dir):
    from attnlab.practice import format_answer, get_skill

    if not (lab_server.root / LESSON02).exists():
        pytest.skip(f"e2e: {LESSON02} is not in the repository")
    lab.open(LESSON02)
    lab.menu("Run", "Run All Cells")
    lab.wait_executed(timeout_s=120)
    problems = blocking(axe, page, "02_scaled_dot_product_attention-run", artifacts_dir,
                        context=LESSON_CONTEXT)

    card = page.locator(CARD).first
    card.wait_for(timeout=15_000)
    card.scroll_into_view_if_needed()
    classes = (card.get_attribute("class") or "").split()
    name = next(c[len("attnlab-skill-"):] for c in classes if c.startswith("attnlab-skill-"))
    seed = next(int(c[len("attnlab-seed-"):]) for c in classes if c.startswith("attnlab-seed-"))
    card_sel = f"{CARD}.attnlab-skill-{name}"
    problems += blocking(axe, page, "practice-card", artifacts_dir, context=card_sel)
    assert not problems, "serious/critical accessibility violations:\n" + "\n".join(problems)

    # keyboard only: start from the card's title (a click puts no control in focus)
    card.locator(".attnlab-title, b").first.click()
    _tab_to(page, card_sel, f"{ANSWER} input", "the answer field")
    skill = get_skill(name)
    variant = skill.variant(seed)
    wrong = skill.wrong_answers(variant)
    text = format_answer(next(iter(wrong.values())), variant.kind, variant.decimals) if wrong else "0"
    page.keyboard.type(text)
    _tab_to(page, card_sel, f"{CHECK}", "the Check button")
    # ipywidgets sends a model's state at most one message at a time and queues the rest, so the
    # Check button's click can overtake the last keystrokes of a fast typist: wait for the answer
    # box's value to reach the kernel (it echoes into the widget's DOM value) and the kernel to idle
    lab.wait_idle()
    page.wait_for_timeout(500)
    page.keyboard.press("Space")
    expected = skill.check(variant, text)
    feedback = page.locator(f"{card_sel} {FEEDBACK}").first
    page.wait_for_function("([el, s]) => el.textContent.includes(s)",
                           arg=[feedback.element_handle(), expected.message[:60]], timeout=15_000)
    assert not expected.correct and "Correct" not in feedback.text_content().splitlines()[0], (
        feedback.text_content())

    # the feedback wraps: no horizontal overflow, wide and narrow
    for width in (1280, 400):
        if width < 600:  # a learner on a narrow screen closes JupyterLab's file browser first
            current = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
            if current.count():
                current.first.click()
        got = _overflow(page, width)
        page.screenshot(path=str(artifacts_dir / f"a11y-feedback-{width}px.png"))
        assert got["scroll"] <= got["client"] + 1 and got["inner"] <= got["innerClient"] + 1, (
            f"at {width} px the feedback overflows sideways: {got}")
        assert not got["cut"], f"at {width} px these controls stick out of the card: {got['cut']}"
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_timeout(300)

    # Next is reachable and works from the keyboard
    page.locator(f"{card_sel} {CHECK}").first.focus()
    _tab_to(page, card_sel, f"{NEXT}", "the Next problem button")
    page.keyboard.press("Space")
    page.wait_for_function(
        "([sel, old]) => { const el = document.querySelector(sel); return el &&"
        " [...el.classList].some(c => c.startsWith('attnlab-seed-') && c !== old); }",
        arg=[CARD, f"attnlab-seed-{seed}"], timeout=15_000)
