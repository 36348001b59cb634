"""Every page of the built course website in headless Chromium (Debian's, driven by Playwright; nothing is
downloaded): it loads with no console error, no failed request and no uncaught script error; the widgets
saved with the lessons are drawn by the vendored widget manager; every image in the drawn page (widget
outputs included) has a specific text alternative; and axe-core (bundled by ``axe-playwright-python``) finds
no serious or critical violation on any page -- the whole page, nothing excluded. Results per page go to
``artifacts/site/axe-<page>.json``.

The site is served over HTTP from a local port, as ``./start.sh --site`` serves it.
"""
from __future__ import annotations

import functools
import http.server
import json
import threading

import pytest

from suite_settings import suite_settings
from site_build import ARTIFACTS, pages
from test_site_content import alt_problem

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.xdist_group("site")]

CHROMIUM = suite_settings().chromium
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BLOCKING = ("serious", "critical")
WIDGET_VIEW = 'script[type="application/vnd.jupyter.widget-view+json"]'


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the test reports failures itself
        pass


@pytest.fixture(scope="module")
def served(site_html):
    """The built site on http://127.0.0.1:<free port>/ for the module's tests."""
    handler = functools.partial(_Quiet, directory=str(site_html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", site_html
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"site: {CHROMIUM} not found; install Debian's chromium (bash scripts/ensure_chromium.sh, "
                    "needs root + apt-get) to check the website in a browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("site: the playwright Python package is missing (pip install -e '.[dev]')")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _visit(context, url: str):
    """Open ``url``; return the page and the problems seen while loading it (console errors, failed
    requests, uncaught errors)."""
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"uncaught: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
    try:
        page.goto(url, wait_until="load", timeout=60_000)
        if page.locator(WIDGET_VIEW).count():
            # the manager replaces each saved view with the drawn widget (class jupyter-widgets / widget-*)
            page.wait_for_function("() => document.querySelectorAll('.jupyter-widgets.widget-container, "
                                   ".widget-inline-hbox, .widget-output, .jupyter-widgets-view').length > 0",
                                   timeout=60_000)
        # equations: wait until MathJax has typeset the page (its startup promise), where it is loaded
        page.evaluate("() => (window.MathJax && MathJax.startup && MathJax.startup.promise)"
                      " ? MathJax.startup.promise.then(() => true) : true")
    except Exception as err:  # noqa: BLE001 - a page that does not finish loading is one more problem
        problems.append(f"did not finish loading: {str(err).splitlines()[0]}")
    return page, problems


def test_every_page_loads_cleanly_with_specific_alt_text_and_no_serious_axe_finding(served, browser):
    from axe_playwright_python.sync_playwright import Axe

    base, html = served
    axe = Axe()
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    load_problems, axe_problems, alt_problems, widget_pages = [], [], [], []
    all_pages = pages(html)
    try:
        for path in all_pages:
            rel = path.relative_to(html).as_posix()
            page, problems = _visit(context, base + rel)
            load_problems += [f"{rel}: {p}" for p in problems]
            if page.locator(WIDGET_VIEW).count():
                widget_pages.append(rel)
            for alt in page.eval_on_selector_all("img", "els => els.map(e => e.getAttribute('alt'))"):
                why = alt_problem(alt)
                if why:
                    alt_problems.append(f"{rel}: {why}: {alt!r}")
            results = axe.run(page, options={"resultTypes": ["violations"]})
            violations = results.response["violations"]
            name = rel.replace("/", "_").removesuffix(".html")
            (ARTIFACTS / f"axe-{name}.json").write_text(json.dumps(violations, indent=1))
            for v in violations:
                if v.get("impact") in BLOCKING:
                    where = "; ".join(" ".join(map(str, n["target"])) for n in v["nodes"][:4])
                    axe_problems.append(f"{rel}: [{v['impact']}] {v['id']}: {v['help']} -- {where}")
            page.close()
    finally:
        context.close()
    assert len(all_pages) >= 40, f"only {len(all_pages)} pages"
    assert widget_pages, "no page drew a widget from its saved state"
    assert not load_problems, "pages that did not load cleanly:\n" + "\n".join(load_problems[:30])
    assert not alt_problems, "drawn images without a specific text alternative:\n" + "\n".join(alt_problems[:30])
    assert not axe_problems, "serious/critical accessibility violations:\n" + "\n".join(axe_problems[:40])


def test_a_lesson_slider_is_drawn_and_named(served, browser):
    """Lesson 02's d_k slider is drawn from its saved state, with its value, and its handle has a name."""
    base, _ = served
    context = browser.new_context()
    try:
        page, problems = _visit(context, base + "lessons/02_scaled_dot_product_attention.html")
        handle = page.locator('.noUi-handle[role="slider"]').first
        handle.wait_for(timeout=30_000)
        assert handle.get_attribute("aria-label") == "d_k", "the slider handle has no accessible name"
        assert handle.get_attribute("aria-valuenow") not in (None, ""), "the slider shows no saved value"
        assert not problems, problems
    finally:
        context.close()
