"""The Markdown results logs of the grading benchmarks (autograder/BENCHMARK.md, benchmarks/RESULTS.md).

Each run appends one section: a dated heading, the machine it ran on (cores, load, Python), then its table.
"""
from __future__ import annotations

import os
import platform
import time
from pathlib import Path


def heading(title: str) -> str:
    """A run's ``### YYYY-MM-DD HH:MM UTC · title`` heading (the time is now, in UTC)."""
    return f"### {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {title}"


def machine() -> str:
    """One sentence on the machine: CPU cores, the 1/5/15-minute load averages, the Python version."""
    load = os.getloadavg()
    return (f"Machine: {os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
            f"(shared with other jobs), Python {platform.python_version()}.")


def emit(text: str, out: str | None, root: Path) -> None:
    """Print ``text`` and, when ``out`` names a file (relative to ``root`` unless absolute), append it there."""
    print(text)
    if out:
        path = Path(out) if os.path.isabs(out) else root / out
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")
