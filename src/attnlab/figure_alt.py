"""Text alternatives for the course's matplotlib figures in a notebook.

JupyterLab draws an ``image/png`` output as an ``<img>`` with no ``alt`` text, so a screen
reader announces nothing but "image" (WCAG 2.2 success criterion 1.1.1, *Non-text Content*;
axe-core rule ``image-alt``). :func:`install` registers an IPython ``text/html`` formatter for
:class:`matplotlib.figure.Figure`: every figure a lesson shows (``plt.show()``, the inline
backend's end-of-cell display, ``display(fig)``, a widget's ``Output``) then carries an HTML
``<img>`` whose ``alt`` is :func:`describe` of the figure, next to the usual ``image/png``
(JupyterLab shows the HTML; other front ends and the lesson tests read the PNG).

``attnlab/__init__.py`` calls :func:`install` when attnlab is imported inside an IPython
kernel, so every lesson gets it from its first ``from attnlab... import``.
"""
from __future__ import annotations

import base64
import html
from typing import Any

ALT_ATTRIBUTE = "attnlab_alt"  # a figure's own description, when its author set one
MAX_LABELS = 8  # text labels of a diagram quoted in its description, at most


def describe(fig: Any) -> str:
    """A one-paragraph text alternative for ``fig`` (a :class:`matplotlib.figure.Figure`).

    Uses ``fig.attnlab_alt`` when set; otherwise names what the figure shows, per panel: its
    title, axis labels, the kind of marks (lines, bars, points, an image/heatmap with its rows x
    columns), the legend's entries and, for a diagram (a panel without axis lines, or without title and
    axis labels), its text labels (at most ``MAX_LABELS``; on such a panel patches are "shapes", not
    "bars"). Never raises: an unreadable figure is "Figure".
    """
    own = getattr(fig, ALT_ATTRIBUTE, None)
    if own:
        return str(own)
    try:
        parts = []
        sup = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) else ""
        axes = [ax for ax in fig.get_axes() if ax.get_visible() and ax.get_label() != "<colorbar>"]
        for ax in axes:
            bits = []
            title = " ".join(t.get_text() for t in (ax.title, ax._left_title, ax._right_title)
                             if t.get_text()).strip()
            if title:
                bits.append(title)
            marks = []
            if ax.images:
                rows, cols = ax.images[0].get_array().shape[:2]
                marks.append(f"a {rows}x{cols} heatmap")
            lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")] or ax.get_lines()
            if lines:
                marks.append(f"{len(lines)} line{'s' if len(lines) != 1 else ''}")
            if ax.patches:  # bars on a chart; on an axes drawn without axis lines, a diagram's shapes
                marks.append(f"{len(ax.patches)} {'bars' if ax.axison else 'shapes'}")
            if ax.collections and not ax.images:
                marks.append("points")
            if marks:
                bits.append(", ".join(marks))
            xl, yl = ax.get_xlabel(), ax.get_ylabel()
            if xl or yl:
                bits.append(" versus ".join(x for x in (yl, xl) if x))
            if not ax.axison or not (title or xl or yl):  # a diagram: its words are in its text labels
                words = [" ".join(t.get_text().split()) for t in ax.texts if t.get_visible() and t.get_text().strip()]
                if words:
                    bits.append("labelled: " + "; ".join(words[:MAX_LABELS])
                                + (f" (+{len(words) - MAX_LABELS} more)" if len(words) > MAX_LABELS else ""))
            legend = ax.get_legend()
            if legend:
                labels = [t.get_text() for t in legend.get_texts() if t.get_text()]
                if labels:
                    bits.append("legend: " + ", ".join(labels))
            if bits:
                parts.append("; ".join(bits))
        head = f"Figure: {sup}. " if sup else "Figure. "
        if len(parts) > 1:
            return head + f"{len(parts)} panels. " + " | ".join(parts)
        return head + (parts[0] if parts else "")
    except Exception:  # noqa: BLE001 - a description must never break a plot
        return "Figure"


def install(shell: Any = None) -> bool:
    """Register the ``text/html`` formatter (an ``<img>`` with ``alt``) for matplotlib figures in
    ``shell`` (default: the running IPython). Returns False outside IPython. Idempotent.

    The PNG inside the HTML is drawn by the ``image/png`` formatter the shell has for figures
    (the inline backend's, with its dpi and tight bounding box), so both outputs look the same.
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    formatters = shell.display_formatter.formatters
    png, html_formatter = formatters.get("image/png"), formatters.get("text/html")
    if png is None or html_formatter is None:
        return False

    def figure_html(fig):
        try:
            data = png.lookup(fig)(fig)
        except KeyError:  # no inline backend in this shell: draw it as the inline backend does
            from IPython.core.pylabtools import print_figure

            data = print_figure(fig, "png", bbox_inches="tight")
        if isinstance(data, tuple):  # (data, metadata)
            data = data[0]
        if not data:
            return None
        b64 = data if isinstance(data, str) else base64.b64encode(data).decode()
        return f'<img src="data:image/png;base64,{b64}" alt="{html.escape(describe(fig), quote=True)}">'

    # registered on the base class: the inline backend drops every formatter's entry for Figure
    # itself whenever it is (re)configured (IPython.core.pylabtools.select_figure_formats)
    html_formatter.for_type_by_name("matplotlib.figure", "FigureBase", figure_html)
    return True
