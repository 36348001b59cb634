"""Sphinx configuration of the course website (``make site``; see docs/site.md).

Sphinx + myst-nb + sphinx-book-theme, the engine of Jupyter Book 1, because it builds offline. The
lessons are read from their jupytext sources (lessons/src/*.py) and executed once into jupyter-cache's
store (site/_build/.jupyter_cache): an unchanged lesson is not executed again. The pages that are
generated from the course (lesson overviews, mastery cards, exercise sets) are written by
site/_ext/attnlab_site.py before Sphinx reads its sources.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE / "_ext"))

# The lesson kernels' environment (short training runs, a throwaway learner store, matplotlib's inline
# backend) is given to Sphinx's process by scripts/build_site.py (kernel_env), which `make site` runs.

project = "attnlab: attention, from the routing problem to a small GPT"
author = "attnlab authors"
copyright = "attnlab authors (MIT licence)"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "attnlab_site",
]
exclude_patterns = ["_build", "_ext", "vendor", "assets", "conf.py", "**.ipynb_checkpoints", "README.md"]
nitpicky = True
numfig = True

# Sources: Markdown pages and the lessons' jupytext percent files (read with jupytext, no copies as
# notebooks). The header of a lesson source keeps no cell metadata: nothing the site needs lives there.
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb", ".py": "myst-nb"}
nb_custom_formats = {".py": ["jupytext.reads", {"fmt": "py:percent"}]}
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 6  # included documents are shifted down a level ({include} :heading-offset:)

# Execution: every lesson, cached; a cell error fails the build. Exercise sets are shown as students
# receive them, not executed.
nb_execution_mode = "cache"
nb_execution_cache_path = str(HERE / "_build" / ".jupyter_cache")
nb_execution_timeout = 600  # seconds per cell: lesson 09 trains its model in one cell
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_execution_excludepatterns = ["exercises/*", "mastery/*", "course/*", "learners/*", "instructors/*",
                                "api/*", "index.md", "benchmarks.md"]
nb_merge_streams = True
# a lesson's checked claims (attnlab.fast.timing.claim) are data for the lesson tests; the page shows their text.
# myst-nb warns about a bundle's unknown MIME type while parsing, before the priority below drops it, so that
# warning (the claims' type is the only one the lessons publish) is not an error of the strict build
nb_mime_priority_overrides = [("*", "application/vnd.attnlab.claim+json", None)]
suppress_warnings: list[str] = ["mystnb.unknown_mime_type"]
# Widgets: rendered from the state saved at execution, by the vendored widget manager (no CDN).
nb_ipywidgets_js = {
    "requirejs/require.min.js": {},
    "jupyter-widgets/embed-amd.js": {"data-jupyter-widgets-cdn": "_static/jupyter-widgets/"},
}
# Before requirejs (priority 400 < 500): where the manager's modules live (attnlab_site adds it).
# Equations: MathJax from the site itself (vendor/mathjax), not from a CDN.
mathjax_path = "mathjax/tex-mml-chtml.js"
html_domain_indices = False  # no module index page (its collapse icons have no text alternative)
html_static_path = ["vendor", "assets"]  # vendor: third-party files; assets: the site's own
html_js_files = ["attnlab-site.js"]

# Autodoc: the library's docstrings (Google style: Args / Returns / Shape).
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "sphinx_book_theme"
html_title = "attnlab"
html_favicon = "assets/favicon.svg"  # a browser asks for one; without it, a 404 in the console
html_context = {"default_mode": "light"}  # the theme's colour mode before a reader picks one
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "home_page_in_toc": True,
}
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False

# Types of other libraries (torch, numpy) named in signatures: not pages of this site (no network for
# intersphinx). Everything of attnlab itself must resolve.
nitpick_ignore_regex = [
    ("py:class", r"(torch|numpy|np|collections|typing)\..*"),
    ("py:class", r"Tensor|Module|Generator|optional|callable"),
    ("py:obj", r"(torch|numpy)\..*"),
]
nitpick_ignore_regex += [
    ("py:class", r"os\.PathLike"),
    # napoleon reads a property docstring "One line: ..." as "type: description"
    ("py:class", r"One line|The FFN hidden width actually used"),
    ("py:exc", r"ValueError / TypeError"),
]
# attnlab.training and attnlab.checkpoint, named by the docstrings of attnlab.fast, have no page on the site.
nitpick_ignore_regex += [("py:(func|mod|class)", r"attnlab\.(training|checkpoint)(\..*)?")]
