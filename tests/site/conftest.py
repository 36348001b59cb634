"""Fixtures for the website tests: the built site (tests/site/site_build.py)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from site_build import build_site  # noqa: E402


@pytest.fixture(scope="session")
def site_html() -> Path:
    """``site/_build/html``, built (or brought up to date) once per test process."""
    return build_site()
