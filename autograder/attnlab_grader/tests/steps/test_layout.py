"""One nbgrader step per module of ``attnlab_grader/steps/`` (nbgrader's own layout), each with its own
test module here: every module except ``__init__`` and ``nbgrader_config`` defines exactly one step class
(a preprocessor, an exchange, an export plugin), or one step with its plugin (late penalties) and the
feedback step that recomputes the same penalty, and ``tests/steps/test_<module>.py`` exists."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from nbgrader.exchange.abc import Exchange
from nbgrader.plugins import BasePlugin
from nbgrader.preprocessors import NbGraderPreprocessor

import attnlab_grader.steps as steps

HERE = Path(__file__).resolve().parent
MODULES = sorted(m.name for m in pkgutil.iter_modules(steps.__path__) if m.name != "nbgrader_config")
#: the one module allowed more than one step: the penalty step, its plugin and the feedback's recomputation
GROUPED = {"late_penalties": {"AttnlabLatePenalties", "LatePolicy", "ReapplyLatePenalties"}}


def step_classes(name: str) -> set[str]:
    """The nbgrader step classes a module of ``steps/`` defines (not those it imports)."""
    module = importlib.import_module(f"attnlab_grader.steps.{name}")
    return {n for n, obj in vars(module).items()
            if inspect.isclass(obj) and obj.__module__ == module.__name__
            and issubclass(obj, (NbGraderPreprocessor, Exchange, BasePlugin))}


def test_the_steps_are_the_ones_listed():
    """The module list this test walks is the package's (a new step module is checked too)."""
    assert MODULES == ["answers", "export", "late_penalties", "metadata_check", "outcome", "overwrite_cells",
                       "release", "sandbox_grade", "verify"]


@pytest.mark.parametrize("name", MODULES)
def test_each_module_defines_one_step(name):
    """Exactly one step class, or the late-penalty group."""
    found = step_classes(name)
    if name in GROUPED:
        assert found == GROUPED[name]
    else:
        assert len(found) == 1, f"steps/{name}.py defines {sorted(found) or 'no step'}: one step per module"


@pytest.mark.parametrize("name", MODULES)
def test_each_module_has_its_test_module(name):
    """``tests/steps/test_<module>.py`` exists and tests something."""
    path = HERE / f"test_{name}.py"
    assert path.is_file(), f"steps/{name}.py has no tests/steps/test_{name}.py"
    assert "\ndef test_" in path.read_text(encoding="utf-8")
