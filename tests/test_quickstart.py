"""The README's first command, in its non-interactive form, works."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_start_check_sets_up_and_runs_headless_smoke(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    result = subprocess.run(
        ["bash", str(ROOT / "start.sh"), "--check"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "smoke: OK" in output
    assert "served the first lesson and /formgrader" in output
