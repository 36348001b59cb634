"""Shared fixtures for the autograder tests."""
from __future__ import annotations

import pytest

from autograder.course import SOLUTIONS
from autograder.sandbox import sandbox_support

GRADED = sorted(p.parent.name for p in SOLUTIONS.glob("*/grading.py")
                if (p.parent / f"{p.parent.name}.ipynb").exists())

needs_sandbox = pytest.mark.skipif(sandbox_support() is not None,
                                   reason=f"sandbox unavailable: {sandbox_support()}")
