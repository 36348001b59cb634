"""Static scan of a submission's solution cells (runs in the grader, never in the sandbox).

The scan reads **exactly the source the sandbox runs**: IPython's transformation of each
cell (:func:`runnable`); a cell whose transformation is not valid Python is not run at all.

Two kinds of findings:

* **reference use** -- the code a check grades (its ``target`` and the helpers it calls)
  uses a forbidden name, e.g. ``F.scaled_dot_product_attention`` in
  ``scaled_dot_product_attention``: that check gets no credit.
* **suspicious code** -- anything an exercise never needs and tampering does need (deny by
  default: every autograded item gets no credit and the submission is flagged so the
  instructor can review it, and override the score in formgrader if it was innocent):

  - imports outside the allow-list (``attnlab``, ``os``, ``sys``, ``threading``, ...), and any
    imported *name* or module attribute that resolves to a module outside the allow-list or
    to an OS/introspection facility (``from torch import os``, ``torch.multiprocessing``,
    ``torch._C``, ``np.ctypeslib``, ``typing.sys``, ``torch.builtins.getattr``): resolved
    here by importing the allowed module, so no list of attacks is needed;
  - private (``_``-prefixed) attributes of modules, dunder attributes, and the attributes
    that reach interpreter frames or code (``f_back``, ``f_globals``, ``gi_frame``,
    ``tb_frame``, ...);
  - dynamic code and introspection builtins (``exec``, ``eval``, ``__import__``,
    ``getattr``, ``globals``, ``vars``, ``open``, ``get_ipython`` ...);
  - assignments to attributes of modules (``np.allclose = ...``, monkeypatching);
  - a cell whose IPython transformation differs in validity from its plain source (the
    notebook would run something else than what it shows).
"""
from __future__ import annotations

import ast
import builtins
import functools
import importlib
import time
import types
from dataclasses import dataclass

from IPython.core.inputtransformer2 import TransformerManager

from attnlab_grader.sandbox.bindings import forbidden_uses, global_reads, module_bindings

BANNED_NAMES = {"exec", "eval", "compile", "__import__", "open", "getattr", "setattr", "delattr",
                "globals", "locals", "vars", "breakpoint", "get_ipython",
                "memoryview", "__builtins__", "builtins", "__loader__", "__spec__"}
ALLOWED_DUNDERS = {"__init__", "__name__", "__repr__", "__call__", "__doc__", "__version__"}
#: Attributes that reach the interpreter's frames, code objects or tracing hooks, on any object.
INTROSPECTION_ATTRS = {
    "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "f_lasti", "f_lineno",
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code",
    "tb_frame", "tb_next", "co_code", "co_consts", "co_names", "func_globals", "func_code",
    "_getframe", "settrace", "setprofile", "_current_frames", "addaudithook", "get_type_hints",
    "ForwardRef",
}
#: Names of modules (or parts of a dotted module path) that give OS, process, thread, native-code or
#: code-loading facilities; a resolved module whose path has one is refused even inside an allowed
#: package (``torch.multiprocessing``, ``np.ctypeslib``, ``torch.utils.cpp_extension``).
DANGEROUS_MODULE_PARTS = {
    "os", "sys", "builtins", "threading", "_thread", "multiprocessing", "subprocess", "ctypes",
    "ctypeslib", "gc", "inspect", "importlib", "socket", "signal", "shutil", "pickle", "marshal",
    "types", "io", "posix", "pathlib", "tempfile", "mmap", "resource", "asyncio", "concurrent",
    "code", "runpy", "hub", "cpp_extension", "package", "library", "serialization", "distributed",
    "weakref", "traceback", "dis", "faulthandler", "atexit", "sysconfig", "site", "pty", "fcntl",
    "jit", "fx", "overrides", "compiler", "export", "onnx",  # code from strings/graphs, lists of every function
}
#: Attribute names that are such modules, refused on *any* object: a module reached through a
#: variable (``t = torch; t.os``) is not resolved statically, its attribute name still says it.
MODULE_ATTRS = {"os", "sys", "builtins", "threading", "_thread", "multiprocessing", "subprocess", "ctypes",
                "ctypeslib", "gc", "inspect", "importlib", "socket", "shutil", "pickle", "marshal", "posix"}
#: Functions of allowed libraries that read files or unpickle (arbitrary code) -- never needed here.
LOADERS = {"load", "loads", "fromfile", "memmap", "DataSource", "load_library", "from_file"}
#: Names every answer cell sees without importing them (the sandbox's preamble, ``attnlab_grader.sandbox.watch.PREAMBLE``).
PREAMBLE = {"math": "math", "np": "numpy", "torch": "torch", "nn": "torch.nn",
            "F": "torch.nn.functional", "Tensor": "torch.Tensor"}
_MISSING = object()
#: Bounds on what the scan (and the sandbox) take from a submission, so that a pasted data dump
#: ends as a per-item verdict with a reason instead of minutes of parsing and gigabytes of memory.
#: Answer cells of the course are a few KB (the largest is 6 KB).
MAX_CELL_CHARS = 50_000
#: All answer cells (and added cells' definitions) of one submission together.
MAX_SUBMISSION_CHARS = 200_000
#: Syntax-tree nodes of one cell (50 000 characters of ordinary code stay below this).
MAX_CELL_NODES = 30_000
#: Wall-clock budget of :func:`suspicious` for one submission (seconds).  Within the bounds
#: above the scan takes well under it (measured: at most 1 s for a 50 000-character cell of
#: dense attribute chains, 4 s for a whole submission at the bounds, on one core);
#: reaching it is a finding (credit withheld pending review), never a hang.
SCAN_SECONDS = 10.0
_ATTNLAB = "imports attnlab (the reference library) instead of writing the code"


@dataclass
class Finding:
    """One suspicious construct the static scan found: the cell's grade id, the line in it, and what it is."""
    cell: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"cell '{self.cell}' line {self.line}: {self.what}"


def to_python(source: str) -> str:
    """IPython cell source -> plain Python (magics become calls, which the scan then flags)."""
    return TransformerManager().transform_cell(source)


def _parse(src: str) -> ast.Module | None:
    try:
        return ast.parse(src)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # ValueError: null bytes
        return None


def _count_nodes(tree: ast.AST, limit: int) -> int:
    n = 0
    for _ in ast.walk(tree):
        n += 1
        if n > limit:
            break
    return n


def _kb(n: int) -> str:
    return f"{n / 1000:.0f} KB" if n < 1_000_000 else f"{n / 1_000_000:.1f} MB"


@functools.lru_cache(maxsize=512)
def _prepared(src: str) -> tuple[str | None, ast.Module | None, str | None]:
    """``(python source, tree, None)`` for a cell the sandbox may run, else ``(…, None, reason)``.

    Computed once per distinct cell source in a grading process (the scan, every check's
    reference-use test and the sandbox job all read this one result)."""
    if len(src) > MAX_CELL_CHARS:
        return None, None, (f"this cell has {_kb(len(src))} of text, over the {_kb(MAX_CELL_CHARS)} limit "
                            "for an answer cell; it was not run (remove pasted data or outputs from it)")
    try:
        py = to_python(src)
        tree = ast.parse(py)
    except (SyntaxError, ValueError) as err:
        where = f", line {err.lineno}" if getattr(err, "lineno", None) else ""
        return None, None, (f"SyntaxError: {getattr(err, 'msg', err)}{where}; "
                            "this cell is not valid Python and was not run")
    except (RecursionError, MemoryError):
        return None, None, "this cell is nested too deeply to be read; it was not run"
    if _count_nodes(tree, MAX_CELL_NODES) > MAX_CELL_NODES:
        return None, None, (f"this cell has more than {MAX_CELL_NODES} syntax elements (the course's answers "
                            "have a few hundred); it was not run")
    return py, tree, None


class NotRead(str):
    """A cell the grader did not read (too large to look into), in place of its source: it is not
    scanned, not run and not counted in :data:`MAX_SUBMISSION_CHARS`; ``reason`` says why, in words."""
    reason: str

    def __new__(cls, reason: str) -> "NotRead":
        obj = super().__new__(cls, "")
        obj.reason = reason
        return obj


def _admitted(cells: list[tuple[str, str]]):
    """Yield ``(cell_id, source, python, tree, reason)`` in order; cells past
    :data:`MAX_SUBMISSION_CHARS` in total, and :class:`NotRead` cells, are not run (``tree`` None,
    ``reason`` says why)."""
    total = 0
    for cell_id, src in cells:
        if isinstance(src, NotRead):
            yield cell_id, src, None, None, src.reason
            continue
        total += len(src)
        if total > MAX_SUBMISSION_CHARS and len(src) <= MAX_CELL_CHARS:
            yield cell_id, src, None, None, (f"the answer cells hold more than {_kb(MAX_SUBMISSION_CHARS)} "
                                             "of text together; this cell and the ones after it were not run")
            continue
        py, tree, reason = _prepared(src)
        yield cell_id, src, py, tree, reason


def runnable(cells: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], dict[str, dict]]:
    """What the sandbox runs: ``([(cell_id, python source)], {cell_id: cell error})``.

    The source is IPython's transformation of the cell (what a Jupyter kernel would run and
    what :func:`suspicious` scans); a cell whose transformation is not valid Python, or that is
    over the size bounds (:data:`MAX_CELL_CHARS`, :data:`MAX_SUBMISSION_CHARS`,
    :data:`MAX_CELL_NODES`), is not run and is reported as a cell error with the reason.
    """
    run, errors = [], {}
    for cell_id, _src, py, tree, reason in _admitted(cells):
        if tree is None:
            errors[cell_id] = {"cell": cell_id, "error": reason}
        else:
            run.append((cell_id, py))
    return run, errors


def parse_cells(cells: list[tuple[str, str]]) -> dict[str, ast.Module | None]:
    """``{cell_id: tree}`` of the cells the sandbox runs (``None`` for a cell it does not run)."""
    return {cell_id: tree for cell_id, _src, _py, tree, _reason in _admitted(cells)}


def _module_problem(name: str, allowed: tuple[str, ...]) -> str | None:
    """Why the module ``name`` (a dotted path) may not be used, or ``None``."""
    parts = name.split(".")
    if parts[0] == "attnlab":
        return "the reference library"
    if parts[0] not in allowed:
        return "not needed by this exercise"
    bad = [p for p in parts[1:] if p.startswith("_") or p in DANGEROUS_MODULE_PARTS]
    if bad:
        return f"'{bad[0]}' gives OS/interpreter access"
    return None


def _object_problem(obj, allowed: tuple[str, ...]) -> str | None:
    """Why a resolved object may not be reached from student code, or ``None``."""
    if isinstance(obj, types.ModuleType):
        why = _module_problem(obj.__name__, allowed)
        return f"module '{obj.__name__}' ({why})" if why else None
    if any(obj is getattr(builtins, n, _MISSING) for n in BANNED_NAMES):
        return f"the builtin '{getattr(obj, '__name__', obj)}'"
    try:
        mod = getattr(obj, "__module__", None)
    except Exception:  # noqa: BLE001
        return None
    if isinstance(mod, str) and (callable(obj) or isinstance(obj, type)):
        if any(p in DANGEROUS_MODULE_PARTS or p in ("posix", "nt") for p in mod.split(".")):
            return f"'{getattr(obj, '__name__', '?')}' from module '{mod}'"
    return None


def _getattr(obj, name):
    try:
        return getattr(obj, name, _MISSING)
    except Exception:  # noqa: BLE001 - e.g. a deprecated alias that raises
        return _MISSING


def _import(name: str):
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a module that does not import fails in the sandbox too
        return _MISSING


def _lookup(path: str):
    """The object a dotted path names (``torch.nn.functional``, ``torch.Tensor.detach``), found
    as Python would: import the first module, then attribute by attribute (a sub-module that is
    not yet an attribute is imported); ``_MISSING`` when it cannot be resolved."""
    parts = path.split(".")
    obj = _import(parts[0])
    done = parts[0]
    for part in parts[1:]:
        if obj is _MISSING:
            return _MISSING
        nxt = _getattr(obj, part)
        if nxt is _MISSING and isinstance(obj, types.ModuleType):
            nxt = _import(f"{done}.{part}")
        obj, done = nxt, f"{done}.{part}"
    return obj


def _chain(node: ast.AST) -> tuple[str | None, list[str]]:
    """``a.b.c`` -> ``("a", ["b", "c"])``; anything else -> ``(None, [...])``."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return (node.id if isinstance(node, ast.Name) else None), attrs[::-1]


class _OutOfTime(Exception):
    pass


def _attribute_problem(attr: str, library: str | None = None) -> str | None:
    """Why reading attribute ``attr`` is refused, in words, or ``None``.

    Of any object (``library`` is None): a dunder outside :data:`ALLOWED_DUNDERS`, interpreter
    introspection (:data:`INTROSPECTION_ATTRS`), a module that gives OS access (:data:`MODULE_ATTRS`).
    Of the library object the scan resolved as ``library`` (e.g. ``"torch.nn"``): a private attribute,
    or a function that reads files or unpickles (:data:`LOADERS`)."""
    dunder = attr.startswith("__") and attr.endswith("__")
    rules = ((dunder and attr not in ALLOWED_DUNDERS, f"accesses '{attr}'"),
             (attr in INTROSPECTION_ATTRS, f"accesses '{attr}' (interpreter introspection)"),
             (attr in MODULE_ATTRS, f"accesses '.{attr}' (a module that gives OS/interpreter access)")) \
        if library is None else \
        ((attr.startswith("_") and not dunder, f"accesses the private attribute '{library}.{attr}'"),
         (attr in LOADERS, f"uses '{library}.{attr}' (reads files / unpickles; never needed here)"))
    return next((why for refused, why in rules if refused), None)


class _Scanner:
    def __init__(self, allowed: tuple[str, ...], deadline: float | None = None):
        self.allowed = tuple(allowed)
        #: name -> dotted path of the library object it is bound to (a module, a class or a
        #: function of an allowed library): from the preamble, imports, and plain or annotated
        #: assignments / ``:=`` of a name or an attribute chain of such a name (``t = torch``,
        #: ``T: Any = torch.Tensor``).  Bindings are followed wherever they are made.
        self.modules: dict[str, str] = dict(PREAMBLE)
        self.found: list[Finding] = []
        self.deadline = deadline
        self._ticks = 0

    def tick(self):
        self._ticks += 1
        if self.deadline is not None and self._ticks % 512 == 0 and time.monotonic() > self.deadline:
            raise _OutOfTime

    def aliases(self, tree):
        """Record names bound to library objects by assignment (see :attr:`modules`)."""
        for node in ast.walk(tree):
            self.tick()
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            base, attrs = _chain(value)
            if base is None or base not in self.modules:
                continue
            path = ".".join([self.modules[base], *attrs])
            for t in targets:
                if isinstance(t, ast.Name):
                    self.modules[t.id] = path

    def flag(self, cell, node, what):
        self.found.append(Finding(cell, getattr(node, "lineno", 0), what))

    def imports(self, cell, node):
        if isinstance(node, ast.Import):
            for a in node.names:
                why = _module_problem(a.name, self.allowed)
                if why:
                    self.flag(cell, node, _ATTNLAB if a.name.split(".")[0] == "attnlab"
                              else f"imports '{a.name}' ({why})")
                    continue
                if a.asname:
                    self.modules[a.asname] = a.name
                else:
                    self.modules[a.name.split(".")[0]] = a.name.split(".")[0]
            return
        mod = node.module or ""
        why = "relative import" if node.level else _module_problem(mod, self.allowed)
        if why:
            self.flag(cell, node, _ATTNLAB if mod.split(".")[0] == "attnlab" else f"imports from '{mod}' ({why})")
            return
        base = _import(mod)
        for a in node.names:
            if a.name == "*":
                self.flag(cell, node, f"'from {mod} import *' (import the names you need)")
                continue
            if a.name.startswith("_"):
                self.flag(cell, node, f"imports the private name '{a.name}' from '{mod}'")
                continue
            obj = _getattr(base, a.name) if base is not _MISSING else _MISSING
            if obj is _MISSING and base is not _MISSING:
                obj = _import(f"{mod}.{a.name}")
            why = _object_problem(obj, self.allowed) if obj is not _MISSING else None
            if why:
                self.flag(cell, node, f"'from {mod} import {a.name}' reaches {why}")
            elif isinstance(obj, types.ModuleType):
                self.modules[a.asname or a.name] = obj.__name__
            elif obj is not _MISSING:  # a class or function of the library (from torch import Tensor as T)
                self.modules[a.asname or a.name] = f"{mod}.{a.name}"

    def attribute(self, cell, node):
        """Flag the attribute access ``node`` (an ``ast.Attribute`` in ``cell``) when it is refused
        (:func:`_attribute_problem`) or, followed from a library name, reaches a refused object."""
        attr = node.attr
        why = _attribute_problem(attr)
        if why:
            self.flag(cell, node, why)
        if why or (attr.startswith("__") and attr.endswith("__")):
            return
        base, attrs = _chain(node)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and base in self.modules:
            self.flag(cell, node, f"assigns to '{ast.unparse(node)}' (monkeypatching a library)")
        if base not in self.modules or not attrs or attrs[-1] != attr:
            return
        path = self.modules[base]
        obj = _lookup(path)
        for a in attrs:  # resolve torch.nn.functional.softmax step by step, as Python would
            why = _attribute_problem(a, path)
            if why:
                self.flag(cell, node, why)
                return
            if obj is _MISSING:
                return
            obj = _getattr(obj, a)
            path = f"{path}.{a}"
            if obj is _MISSING:
                return
            why = _object_problem(obj, self.allowed)
            if why:
                self.flag(cell, node, f"'{ast.unparse(node)}' reaches {why}")
                return

    def scan(self, cell, tree):
        for node in ast.walk(tree):
            self.tick()
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports(cell, node)
        self.aliases(tree)
        for node in ast.walk(tree):
            self.tick()
            if isinstance(node, ast.Name) and node.id in BANNED_NAMES:
                self.flag(cell, node, f"uses '{node.id}' (dynamic code / introspection)")
            elif isinstance(node, ast.Attribute):
                self.attribute(cell, node)


def suspicious(cells: list[tuple[str, str]], allowed_imports: tuple[str, ...],
               seconds: float = SCAN_SECONDS) -> list[Finding]:
    """Findings that withhold all autograded credit pending review.

    Bounded: cells over the size bounds are not run and not scanned (:func:`runnable` reports
    them); the scan of the rest stops after ``seconds`` of wall-clock time with a finding that
    says so."""
    scanner = _Scanner(allowed_imports, time.monotonic() + seconds)
    try:
        for cell_id, src, _py, tree, reason in _admitted(cells):
            if tree is None:
                if reason and reason.startswith("SyntaxError") and len(src) <= MAX_CELL_CHARS \
                        and _parse(src) is not None:
                    scanner.found.append(Finding(cell_id, 0, "IPython's transformation of this cell is not valid "
                                                             "Python although the cell itself is (it was not run)"))
                continue
            scanner.scan(cell_id, tree)
    except _OutOfTime:
        scanner.found.append(Finding("*", 0, f"the static scan did not finish within {seconds:g} s "
                                             "(the code is unusually large); it must be reviewed by hand"))
    return scanner.found


def reference_use(cells: list[tuple[str, str]], target: str, forbid: tuple[str, ...]) -> list[Finding]:
    """Uses of ``forbid`` names inside ``target`` or anything it reaches.

    Names are followed the way Python binds them (:func:`attnlab_grader.sandbox.bindings.module_bindings`,
    :func:`attnlab_grader.sandbox.bindings.global_reads`): a helper function or class, an alias made by ``import ... as``,
    ``from ... import x as y``, a plain, annotated or augmented assignment, a loop target, a
    function assigning a ``global``; locals of a function never lead elsewhere."""
    if not forbid:
        return []
    bindings = module_bindings(parse_cells(cells))
    seen, todo, found = set(), [target], []
    while todo:
        name = todo.pop()
        if name in seen or name not in bindings:
            continue
        seen.add(name)
        for cell_id, node in bindings[name]:
            for line, used in forbidden_uses(node, forbid, target):
                found.append(Finding(cell_id, line, f"'{target}' uses '{used}' (the library version of what "
                                                    "it must implement)"))
            todo += [n for n in global_reads(node) if n not in seen]
    return found
