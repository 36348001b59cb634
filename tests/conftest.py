"""Shared test settings: CPU only, deterministic, headless plotting, isolated learner store."""
import os

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_attnlab_home(tmp_path, monkeypatch):
    """Every test gets its own learner store so no test sees another's progress."""
    monkeypatch.setenv("ATTNLAB_HOME", str(tmp_path / "attnlab-home"))
    monkeypatch.setenv("ATTNLAB_LEARNER", "test-learner")
    try:
        import torch

        torch.manual_seed(0)
        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        pass
    yield
