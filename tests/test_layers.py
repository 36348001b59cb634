"""The import rules of ARCHITECTURE.md, read from the code's own import statements (AST, nothing imported).

Each rule names a layer and the packages it may not import. A rule is checked on every ``import`` and
``from ... import`` in the layer's files, including imports inside functions, so an upward import cannot
hide in a function body.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"


def _module_of(path: Path) -> str:
    rel = path.relative_to(SRC if path.is_relative_to(SRC) else ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> set[str]:
    """Every absolute module name ``path`` imports (relative imports resolved against its package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_of(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            names.add(mod)
            names.update(f"{mod}.{alias.name}" for alias in node.names)
    return names


def _files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py") if "tests" not in p.parts)


#: (layer, its folders, packages it must not import, folders inside the layer exempt from the rule)
RULES = [
    ("attnlab.nn is the bottom: it imports no other part of the course",
     ("src/attnlab/nn",), ("attnlab.fast", "attnlab.practice", "attnlab.check", "attnlab.training", "attnlab_grader")),
    ("attnlab.fast builds on attnlab.nn only",
     ("src/attnlab/fast",), ("attnlab.practice", "attnlab.check", "attnlab_grader")),
    ("the library below attnlab.check never imports the grader",
     ("src/attnlab",), ("attnlab_grader",), ("src/attnlab/check",)),
    ("attnlab.check imports only the grader's judging and sandbox (a learner's install has no more)",
     ("src/attnlab",), ("attnlab_grader.classroom", "attnlab_grader.reports", "attnlab_grader.steps",
                        "attnlab_grader.records")),
    ("the grader's judging and sandbox import nothing above them, nor nbgrader",
     ("autograder/attnlab_grader/judging", "autograder/attnlab_grader/sandbox"),
     ("attnlab_grader.classroom", "attnlab_grader.reports", "attnlab_grader.steps", "attnlab_grader.records",
      "nbgrader")),
    ("the sandbox never imports the grader's steps, reports or instructor tools",
     ("autograder/attnlab_grader/sandbox",), ("attnlab_grader.classroom.pipeline", "attnlab_grader.reports.class_report", "attnlab_grader.classroom",
                                   "attnlab_grader.records.intake", "attnlab_grader.steps.export")),
]


@pytest.mark.parametrize("rule", RULES, ids=[r[0] for r in RULES])
def test_imports_point_down(rule):
    name, folders, forbidden, *rest = rule
    exempt = tuple(ROOT / e for e in (rest[0] if rest else ()))
    files = [p for p in _files(*folders) if not any(p.is_relative_to(e) for e in exempt)]
    assert files, f"{name}: no files found in {folders}"
    bad = sorted(f"{p.relative_to(ROOT)} imports {m}" for p in files for m in imported_modules(p)
                 if any(m == f or m.startswith(f + ".") for f in forbidden))
    assert not bad, f"{name}:\n  " + "\n  ".join(bad)


def test_the_rule_reader_sees_imports_inside_functions(tmp_path):
    """The reader is not blind to a function-local import (the way an upward import usually hides)."""
    mod = SRC / "attnlab" / "_probe_layers.py"
    assert not mod.exists()
    try:
        mod.write_text("def f():\n    from attnlab_grader.classroom import cli\n    from .nn import GPT\n")
        found = imported_modules(mod)
    finally:
        mod.unlink()
    assert "attnlab_grader.classroom" in found and "attnlab.nn.GPT" in found
