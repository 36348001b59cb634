"""Docstring coverage of the course library (scripts/docstring_coverage.py): at least 95 % of attnlab's
public names have a docstring, and the count itself sees what it should (``__all__``, private names,
methods and properties of public classes). What a docstring must say is judged by tests/nn/test_nn_package.py."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("docstring_coverage", ROOT / "scripts" / "docstring_coverage.py")
docstring_coverage = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("docstring_coverage", docstring_coverage)  # its dataclass looks its module up
_spec.loader.exec_module(docstring_coverage)

REQUIRED = 95.0


def test_attnlab_public_names_are_documented():
    names = docstring_coverage.public_names(ROOT / "src" / "attnlab")
    assert len(names) > 300  # the walk found the package (modules, classes, functions, methods)
    missing = [f"{n.qualname} ({n.path}:{n.line})" for n in names if not n.documented]
    pct = docstring_coverage.coverage(names)
    assert pct >= REQUIRED, f"{pct:.1f} % of attnlab's public names documented (< {REQUIRED} %); missing:\n" + \
        "\n".join(missing)


def test_grader_public_names_are_documented():
    """The grader's package (its tests left out) meets the same bar as the course library."""
    root = ROOT / "autograder" / "attnlab_grader"
    names = docstring_coverage.public_names(root, exclude=(root / "tests",))
    assert len(names) > 250
    missing = [f"{n.qualname} ({n.path}:{n.line})" for n in names if not n.documented]
    pct = docstring_coverage.coverage(names)
    assert pct >= REQUIRED, f"{pct:.1f} % of attnlab_grader's public names documented (< {REQUIRED} %); missing:\n" + \
        "\n".join(missing)


def test_the_count_follows_all_private_names_and_methods(tmp_path, capsys):
    pkg = tmp_path / "pkg"
    (pkg / "_private").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""The package."""\n')
    (pkg / "_private" / "__init__.py").write_text("def hidden():\n    pass\n")
    (pkg / "listed.py").write_text(
        '"""Listed."""\n__all__ = ["Shown"]\n\n'
        "def helper():\n    pass\n\n"            # public-looking but not in __all__: not counted
        'class Shown:\n    """A class."""\n\n'
        "    def __init__(self):\n        pass\n\n"  # documented by the class docstring: not counted
        "    @property\n    def size(self):\n        return 1\n\n"
        '    def run(self):\n        """Runs."""\n')
    (pkg / "plain.py").write_text("def public():\n    pass\n\ndef _private():\n    pass\n")
    names = {n.qualname: n.documented for n in docstring_coverage.public_names(pkg)}
    assert names == {"pkg": True, "pkg.listed": True, "pkg.listed.Shown": True, "pkg.listed.Shown.size": False,
                     "pkg.listed.Shown.run": True, "pkg.plain": False, "pkg.plain.public": False}
    assert docstring_coverage.main([str(pkg), "--min", "60"]) == 1
    out = capsys.readouterr().out
    assert "method pkg.listed.Shown.size has no docstring" in out and "4 of 7 public names documented (57.1 %)" in out
    assert docstring_coverage.main([str(pkg), "--min", "50", "--summary"]) == 0


def test_rule_mode_names_docstrings_without_the_errors_raised_or_the_shapes(tmp_path, capsys):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        '"""The package."""\n'
        "def checked(x):\n"
        '    """Does a thing."""\n'
        "    def inner():\n        raise KeyError\n"  # a nested function's raise is not this function's
        "    if x is None:\n        raise ValueError('x')\n\n"
        "def shaped(q: 'Tensor'):\n"
        '    """Scores of ``q: (B, L, d_k)``.\n\n    Raises:\n        TypeError: never.\n    """\n\n'
        "def unshaped(q: 'Tensor'):\n"
        '    """Scores of q."""\n')
    names = {n.qualname: n.missing_rule for n in docstring_coverage.public_names(pkg)}
    assert names == {"pkg": (), "pkg.checked": ("errors",), "pkg.shaped": (), "pkg.unshaped": ("shapes",)}
    assert docstring_coverage.main([str(pkg), "--rule"]) == 0
    out = capsys.readouterr().out
    assert "function pkg.checked: docstring names no errors" in out
    assert "1 of 3 documented functions and methods name the errors" in out
