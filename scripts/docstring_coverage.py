"""How many public names of a Python package have a docstring, and which do not.

Public names, read from the source files (nothing is imported, so the count needs no torch or
database and cannot run package code):

* every module whose dotted path has no part starting with ``_`` (``__init__`` counts as its package);
* in each such module, the functions and classes it defines at top level: those listed in its
  ``__all__`` when it has a literal one, else those whose name does not start with ``_``
  (a name re-exported from another module is counted where it is defined);
* in each public class, its methods and properties whose name does not start with ``_``
  (``__init__`` is documented in the class docstring, as in PyTorch and numpydoc).

A name counts as documented when it has a non-empty docstring. ``--rule`` also lists the documented
functions and methods whose docstring misses a part of the project's rule that can be read from the
code: the errors raised (the function has a ``raise``, its docstring names no error) and the shapes of
tensor arguments (an argument annotated ``Tensor`` or ``ndarray``, and no shape such as ``(B, L, d_model)``
in the docstring). Units, dtypes and sources need a reader; ``tests/nn/test_nn_package.py`` checks the
whole rule for ``attnlab.nn`` and ``attnlab.fast``.

    python scripts/docstring_coverage.py src/attnlab            # percentage and the undocumented names
    python scripts/docstring_coverage.py src/attnlab --min 95   # exit 1 below 95 %
    python scripts/docstring_coverage.py autograder --exclude autograder/attnlab_grader/tests --summary
    python scripts/docstring_coverage.py src/attnlab --rule     # also: documented, but errors or shapes missing
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
SHAPE = re.compile(r"\([^()\s][^()]*,[^()]*\)|\(\w+,\)|shapes? (do|does) not apply", re.I)  # (B, L, d), (N,)
ERRORS = re.compile(r"Raises|Error\b|Exception|raise", re.I)


@dataclass(frozen=True)
class Name:
    """One public name: ``qualname`` is ``module.Class.method`` (dotted), ``kind`` is module, class,
    function or method; ``path``/``line`` locate it; ``documented`` says it has a non-empty docstring."""

    qualname: str
    kind: str
    path: str
    line: int
    documented: bool
    missing_rule: tuple[str, ...] = ()


def _literal_all(tree: ast.Module) -> set[str] | None:
    """The names of a module-level ``__all__ = [...]`` (or tuple), or None when there is none we can read."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            return {str(v) for v in value}
    return None


def _missing_rule(node: ast.AST) -> tuple[str, ...]:
    """The parts of the rule a function's docstring visibly lacks: ``errors`` and/or ``shapes``."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ()
    doc = ast.get_docstring(node) or ""
    own = [n for n in ast.walk(node) if not (isinstance(n, DEFS) and n is not node)]
    nested = {id(m) for n in ast.walk(node) if isinstance(n, DEFS) and n is not node for m in ast.walk(n)}
    missing = []
    if any(isinstance(n, ast.Raise) and n.exc is not None and id(n) not in nested for n in own) \
            and not ERRORS.search(doc):
        missing.append("errors")
    arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    if any(a.annotation is not None and re.search(r"\b(Tensor|ndarray)\b", ast.unparse(a.annotation))
           for a in arguments) and not SHAPE.search(doc):
        missing.append("shapes")
    return tuple(missing)


def _has_doc(node: ast.AST) -> bool:
    assert isinstance(node, (ast.Module, *DEFS))
    return bool((ast.get_docstring(node) or "").strip())


def module_name(path: Path, root: Path) -> str:
    """Dotted module name of ``path`` in the package at ``root`` (``root``'s own name first)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def public_names(root: Path, exclude: tuple[Path, ...] = ()) -> list[Name]:
    """Every public name of the package at ``root`` (a folder), in file order.

    Raises SyntaxError (with the file name) when a file does not parse.
    """
    names: list[Name] = []
    for path in sorted(root.rglob("*.py")):
        if any(path.is_relative_to(e) for e in exclude):
            continue
        module = module_name(path, root)
        if any(part.startswith("_") for part in module.split(".")):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names.append(Name(module, "module", str(path), 1, _has_doc(tree)))
        listed = _literal_all(tree)
        for node in tree.body:
            if not isinstance(node, DEFS):
                continue
            if (node.name not in listed) if listed is not None else node.name.startswith("_"):
                continue
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            names.append(Name(f"{module}.{node.name}", kind, str(path), node.lineno, _has_doc(node),
                              _missing_rule(node)))
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and not member.name.startswith("_"):
                        names.append(Name(f"{module}.{node.name}.{member.name}", "method", str(path),
                                          member.lineno, _has_doc(member), _missing_rule(member)))
    return names


def coverage(names: list[Name]) -> float:
    """Percentage of ``names`` that are documented (100.0 for no names)."""
    return 100.0 * sum(n.documented for n in names) / len(names) if names else 100.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path, help="the package folder, e.g. src/attnlab")
    parser.add_argument("--exclude", type=Path, action="append", default=[],
                        help="a folder or file of the package to leave out (repeatable)")
    parser.add_argument("--min", type=float, default=None, help="exit 1 when coverage (percent) is below this")
    parser.add_argument("--summary", action="store_true", help="print only the totals, not the missing names")
    parser.add_argument("--rule", action="store_true",
                        help="also list documented functions whose docstring names no error they raise or no shape")
    args = parser.parse_args(argv)
    if not (args.package / "__init__.py").is_file():
        parser.error(f"{args.package} is not a package folder (it has no __init__.py)")
    names = public_names(args.package, tuple(args.exclude))
    missing = [n for n in names if not n.documented]
    if not args.summary:
        for n in missing:
            print(f"{n.path}:{n.line}: {n.kind} {n.qualname} has no docstring")
    pct = coverage(names)
    print(f"{args.package}: {len(names) - len(missing)} of {len(names)} public names documented ({pct:.1f} %)")
    if args.rule:
        lacking = [n for n in names if n.documented and n.missing_rule]
        if not args.summary:
            for n in lacking:
                print(f"{n.path}:{n.line}: {n.kind} {n.qualname}: docstring names no {' and no '.join(n.missing_rule)}")
        checked = sum(n.kind in ("function", "method") and n.documented for n in names)
        print(f"{args.package}: {checked - len(lacking)} of {checked} documented functions and methods name the "
              f"errors they raise and the shapes of their tensor arguments")
    if args.min is not None and pct < args.min:
        print(f"below the required {args.min:g} %: document the names listed above", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
