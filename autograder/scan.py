"""Static scan of a submission's solution cells (runs in the grader, never in the sandbox).

Two kinds of findings:

* **reference use** -- the code a check grades (its ``target`` and the helpers it calls)
  uses a forbidden name, e.g. ``F.scaled_dot_product_attention`` in
  ``scaled_dot_product_attention``: that check gets no credit.
* **suspicious code** -- anything an exercise never needs and tampering does need:
  imports outside the allow-list (``attnlab``, ``os``, ``sys``, ``importlib``, ``ctypes``,
  ...), dynamic code (``exec``, ``eval``, ``__import__``, ``getattr``...), dunder attribute
  access, IPython hooks (``get_ipython``), ``global``-scope monkeypatching of modules
  (``np.allclose = ...``).  Deny by default: every autograded item gets no credit and
  the submission is flagged so the instructor can review it (and override the score in
  formgrader if it was innocent).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from IPython.core.inputtransformer2 import TransformerManager

BANNED_NAMES = {"exec", "eval", "compile", "__import__", "open", "getattr", "setattr", "delattr",
                "globals", "locals", "vars", "breakpoint", "input", "get_ipython", "exit", "quit",
                "memoryview", "__builtins__", "builtins", "help"}
ALLOWED_DUNDERS = {"__init__", "__name__", "__repr__", "__call__", "__doc__", "__version__"}


@dataclass
class Finding:
    cell: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"cell '{self.cell}' line {self.line}: {self.what}"


def to_python(source: str) -> str:
    """IPython cell source -> plain Python (magics become calls, which the scan then flags)."""
    return TransformerManager().transform_cell(source)


def parse_cells(cells: list[tuple[str, str]]) -> dict[str, ast.Module | None]:
    out = {}
    for cell_id, src in cells:
        try:
            out[cell_id] = ast.parse(to_python(src))
        except SyntaxError:
            out[cell_id] = None
    return out


def suspicious(cells: list[tuple[str, str]], allowed_imports: tuple[str, ...]) -> list[Finding]:
    """Findings that withhold all autograded credit pending review."""
    found = []
    for cell_id, tree in parse_cells(cells).items():
        if tree is None:
            continue
        for node in ast.walk(tree):
            line = getattr(node, "lineno", 0)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for n in names:
                    if n.split(".")[0] not in allowed_imports or getattr(node, "level", 0):
                        what = ("imports attnlab (the reference library) instead of writing the code"
                                if n.split(".")[0] == "attnlab" else f"imports '{n}' (not needed by this exercise)")
                        found.append(Finding(cell_id, line, what))
            elif isinstance(node, ast.Name) and node.id in BANNED_NAMES:
                found.append(Finding(cell_id, line, f"uses '{node.id}' (dynamic code / introspection)"))
            elif isinstance(node, ast.Attribute):
                if node.attr.startswith("__") and node.attr.endswith("__") and node.attr not in ALLOWED_DUNDERS:
                    found.append(Finding(cell_id, line, f"accesses '{node.attr}'"))
                if isinstance(node.ctx, (ast.Store, ast.Del)):
                    base = node.value
                    while isinstance(base, ast.Attribute):
                        base = base.value
                    if isinstance(base, ast.Name) and base.id != "self":
                        found.append(Finding(cell_id, line,
                                             f"assigns to '{ast.unparse(node)}' (monkeypatching)"))
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                pass
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "attnlab" in node.value:
                found.append(Finding(cell_id, line, "mentions 'attnlab' in a string"))
    return found


def reference_use(cells: list[tuple[str, str]], target: str, forbid: tuple[str, ...]) -> list[Finding]:
    """Uses of ``forbid`` names inside ``target`` or any top-level helper it reaches."""
    if not forbid:
        return []
    defs: dict[str, tuple[str, ast.AST]] = {}
    for cell_id, tree in parse_cells(cells).items():
        if tree is None:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs[node.name] = (cell_id, node)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        defs[t.id] = (cell_id, node)
    seen, todo, found = set(), [target], []
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        cell_id, node = defs[name]
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in defs and sub.id not in seen:
                todo.append(sub.id)
            used = sub.attr if isinstance(sub, ast.Attribute) else sub.id if isinstance(sub, ast.Name) else None
            if used in forbid and not (isinstance(sub, ast.Name) and used == target):
                found.append(Finding(cell_id, getattr(sub, "lineno", 0),
                                     f"'{target}' uses '{used}' (the library version of what it must implement)"))
    return found
