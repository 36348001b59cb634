"""A small driver for the JupyterLab pages the browser test uses (Playwright, sync API).

Everything waits on real DOM states (cell prompts, kernel status, widget classes), never
on fixed sleeps. Selectors are JupyterLab 4 / ipywidgets 8 DOM classes:

* ``.jp-NotebookPanel:not(.lm-mod-hidden)``: the notebook tab in front;
* ``.jp-Cell`` in document order (the default ``contentVisibility`` windowing keeps every
  cell attached, so the n-th ``.jp-Cell`` is the n-th cell of the file);
* ``.jp-InputArea-prompt`` reads ``[ ]:``, ``[*]:`` or ``[7]:``;
* a widget's ``add_class("x")`` puts class ``x`` on the widget's outer element.
"""
from __future__ import annotations

import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import LabServer

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "e2e"
LEARNER = "e2e-student"

NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"
# What IPython prints for an exception, as JupyterLab renders it (tracebacks, SyntaxErrors).
ERROR_JS = r"/Traceback \(most recent call last\)|Cell In\[\d+\], line \d+/"

# JS: state of the given code cells (indices into .jp-Cell) of the front notebook.
_CELL_STATE = """
([indices, errorRe]) => {
  const nb = document.querySelector('%s .jp-Notebook');
  if (!nb) return {ready: false, why: 'no notebook'};
  const cells = [...nb.querySelectorAll('.jp-Cell')];
  const re = new RegExp(errorRe.slice(1, -1));
  const want = indices === null ? cells.map((_, i) => i) : indices;
  const out = {ready: true, pending: [], errors: [], n: cells.length};
  for (const i of want) {
    const c = cells[i];
    if (!c) { out.ready = false; out.pending.push(i); continue; }
    if (!c.classList.contains('jp-CodeCell')) continue;
    const p = (c.querySelector('.jp-InputArea-prompt')?.textContent || '').trim();
    if (!/^\\[\\d+\\]:$/.test(p)) { out.ready = false; out.pending.push(i); }
    const text = [...c.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent).join('\\n');
    if (re.test(text)) out.errors.push([i, text.slice(0, 1500)]);
  }
  return out;
}
""" % NOTEBOOK


class Lab:
    """Helpers bound to one Playwright ``page`` and one ``LabServer``."""

    def __init__(self, page, server, timeout_s: float = 60):
        self.page, self.server = page, server
        self.timeout_ms = int(timeout_s * 1000)

    # ------------------------------------------------------------------ navigation
    def open(self, path: str) -> None:
        """Open ``path`` (relative to the server root) alone in a fresh workspace (``?reset``:
        tabs from earlier steps are not restored) and wait for its kernel to be idle."""
        self.page.goto(self.server.url(f"/lab/tree/{path}?reset"))
        self.wait_notebook()

    def reload(self) -> None:
        self.page.reload()
        self.wait_notebook()

    def wait_notebook(self) -> None:
        self.page.locator(f"{NOTEBOOK} .jp-Notebook .jp-Cell").first.wait_for(timeout=self.timeout_ms)
        self.wait_idle()

    def wait_idle(self) -> None:
        """Kernel connected and idle (status bar reads '<kernel> | Idle')."""
        self.page.locator(".jp-StatusBar-TextItem", has_text=re.compile(r"\| Idle$")).first.wait_for(
            timeout=self.timeout_ms)

    def wait_settled(self, selector: str, quiet_s: float = 1.0, timeout_s: float = 30) -> str:
        """Wait until the kernel is idle and ``selector``'s text stopped changing for ``quiet_s``."""
        deadline = time.monotonic() + timeout_s
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            text = self.page.locator(selector).first.text_content()
            busy = self.page.locator(".jp-StatusBar-TextItem", has_text=re.compile(r"\| Busy$")).count()
            if text != last or busy:
                last, since = text, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                return text or ""
            self.page.wait_for_timeout(150)
        raise AssertionError(f"{selector} kept changing (or the kernel stayed busy) for {timeout_s:.0f} s")

    def menu(self, top: str, item: str | re.Pattern) -> None:
        """Click menu bar ``top`` then the item labelled exactly ``item`` (or matching a regex)."""
        if isinstance(item, str):
            item = re.compile(f"^{re.escape(item)}$")
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(top)}$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=item).click()

    # ------------------------------------------------------------------ cells
    def cells(self):
        return self.page.locator(f"{NOTEBOOK} .jp-Notebook .jp-Cell")

    def cell(self, index: int):
        return self.cells().nth(index)

    def cell_state(self, indices: list[int] | None = None) -> dict:
        return self.page.evaluate(_CELL_STATE, [indices, ERROR_JS])

    def wait_executed(self, indices: list[int] | None = None, timeout_s: float | None = None) -> dict:
        """Wait until the code cells (all, or ``indices``) show an execution count.

        Raises AssertionError at once if any of them shows a Python traceback, naming the
        cell and quoting the error; on timeout, names the cells still pending.
        """
        deadline = time.monotonic() + (timeout_s or self.timeout_ms / 1000)
        state: dict = {}
        while time.monotonic() < deadline:
            state = self.cell_state(indices)
            if state.get("errors"):
                i, text = state["errors"][0]
                raise AssertionError(f"cell {i} shows an error:\n{text}")
            if state.get("ready"):
                return state
            self.page.wait_for_timeout(200)  # poll interval, not a fixed wait for an outcome
        raise AssertionError(f"cells still not executed after {timeout_s or self.timeout_ms / 1000:.0f} s: "
                             f"{state.get('pending')} (of {state.get('n')})")

    def select(self, index: int) -> None:
        """Select cell ``index`` in command mode (click its prompt, then Escape)."""
        cell = self.cell(index)
        cell.scroll_into_view_if_needed()
        cell.locator(".jp-InputPrompt").first.click()
        self.page.keyboard.press("Escape")

    def run_cell(self, index: int) -> None:
        """Run cell ``index`` in place (Ctrl+Enter in command mode) and wait for it."""
        prompt = self.cell(index).locator(".jp-InputArea-prompt").first
        before = (prompt.text_content() or "").strip()
        self.select(index)
        self.page.keyboard.press("Control+Enter")
        # JupyterLab shows [*] at once; don't take an old execution count for the new run
        deadline = time.monotonic() + 5
        while (prompt.text_content() or "").strip() == before and before != "[*]:" \
                and time.monotonic() < deadline:
            self.page.wait_for_timeout(50)
        self.wait_executed([index])

    def source(self, index: int) -> str:
        """The text the cell's editor shows (scrolled into view: editors render lazily)."""
        cell = self.cell(index)
        cell.scroll_into_view_if_needed()
        line = cell.locator(".cm-content .cm-line")
        line.first.wait_for(state="attached", timeout=self.timeout_ms)
        deadline = time.monotonic() + 10
        text = ""
        while time.monotonic() < deadline:
            text = "\n".join(line.all_text_contents())
            if text.strip():
                break
            self.page.wait_for_timeout(100)  # poll: the editor fills in after it attaches
        return text

    def set_source(self, index: int, code: str) -> None:
        """Replace the text of cell ``index`` as a student would: click, select all, type."""
        editor = self.cell(index).locator(".cm-content").first
        editor.scroll_into_view_if_needed()
        editor.click()
        self.page.keyboard.press("Control+a")
        self.page.keyboard.press("Delete")
        # insert_text types the text as one input event: no auto-indent, no auto-closed brackets
        self.page.keyboard.insert_text(code)
        got = self.source(index)
        assert _norm(got) == _norm(code), f"cell {index} reads back differently:\n{got}"
        self.page.keyboard.press("Escape")

    def save(self) -> None:
        """Ctrl+S and wait until the tab is no longer marked dirty."""
        self.page.keyboard.press("Control+s")
        self.page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty").wait_for(
            state="detached", timeout=self.timeout_ms)

    def output_text(self, index: int) -> str:
        return "\n".join(self.cell(index).locator(".jp-OutputArea-output").all_text_contents())


def _norm(text: str) -> str:
    return "\n".join(line.rstrip().replace("\u00a0", " ") for line in text.strip().splitlines())


class Steps:
    """Named steps: each saves a screenshot when done, or fails naming itself.

    ``with steps("open lesson 02"): ...`` -- on any timeout or assertion inside, a
    ``FAILED-...`` screenshot is saved and an AssertionError names the step, the cause,
    and the tail of the server log.
    """

    def __init__(self, page, server: LabServer, outdir: Path):
        self.page, self.server, self.outdir = page, server, outdir
        self.count = 0
        self.timings: list[tuple[str, float]] = []
        self.console: list[str] = []
        page.on("console", lambda msg: self.console.append(f"{msg.type}: {msg.text}")
                if msg.type == "error" else None)
        page.on("pageerror", lambda err: self.console.append(f"pageerror: {err}"))

    def _shot(self, name: str) -> Path:
        self.count += 1
        slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")
        path = self.outdir / f"{self.count:02d}-{slug}.png"
        try:
            self.page.screenshot(path=str(path))
        except Exception:  # noqa: BLE001 - a failed screenshot must not hide the real failure
            pass
        return path

    @contextmanager
    def __call__(self, name: str, screenshot: bool = True):
        from playwright.sync_api import Error as PlaywrightError

        start = time.monotonic()
        try:
            yield
        except (PlaywrightError, AssertionError) as err:
            shot = self._shot(f"FAILED {name}")
            console = "\n".join(self.console[-10:]) or "(none)"
            raise AssertionError(
                f"e2e step '{name}' failed after {time.monotonic() - start:.1f} s: "
                f"{str(err).splitlines()[0] if str(err) else type(err).__name__}\n"
                f"screenshot: {shot}\nbrowser console errors:\n{console}\n"
                f"server log tail:\n{self.server.log_tail(15)}"
            ) from err
        self.timings.append((name, time.monotonic() - start))
        if screenshot:
            self._shot(name)
