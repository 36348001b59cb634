"""Find every read and write of an environment variable in the project's Python code, by the syntax
tree, and judge them by the declarations of the role whose code each file is (``scripts/settings_catalog.py``:
the learner's ``attnlab.settings``, the grader's ``attnlab_grader.records.settings``, the hub's
``deploy/jupyterhub/settings.py``, the setup scripts' and the test suite's) (:func:`problems`).  Used by
``tests/test_environment_reads.py`` and ``tests/test_no_environ_writes.py``.

A *read* is ``os.environ[NAME]``, ``os.environ.get(NAME)``, ``os.getenv(NAME)``, ``NAME in os.environ``
(also through ``from os import environ, getenv``), click's ``envvar=NAME``, and the same through a
local alias of the environment: ``env = os.environ``, ``_env = os.environ.get``,
``environ = os.environ if environ is None else environ``, or a parameter whose default is
``os.environ`` (``def configure(c, env=os.environ)``).  A name that is a loop variable over a literal
tuple of strings (``{k: os.environ[k] for k in ("A", "B")}``, or a name bound to one) reads each of
those strings; any other computed name is reported as ``None`` so the caller can refuse it.  Copying
the whole environment (``dict(os.environ)``, ``os.environ.copy()``, ``.items()``) is not a read of a
variable.  Notebook sources (``lessons/src``, ``solutions/*.pct.py``) parse with their IPython lines
(``%magic``, ``!cmd``) blanked; ``%env NAME=value`` counts as a write.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import settings_catalog  # noqa: E402
from settings_catalog import is_test, role_of  # noqa: E402,F401 - is_test: the tests' import of it

from attnlab.settings import PREFIX, SettingsModel  # noqa: E402

_READ_METHODS = {"get"}
#: how the settings table writes "no value" (a direct reader's ``""`` default agrees with these)
_NOTHING = {"empty", "unset"}
_ENV_MAGIC = re.compile(r"\s*%(set_env\s|env\s+[^\s=]+(\s*=|\s+)\S)")
_MAGIC = re.compile(r"\s*(%%?[A-Za-z_]|![A-Za-z_./])")
_WRITE_METHODS = {"setdefault", "update", "pop", "popitem", "clear", "__setitem__", "__delitem__"}


@dataclass(frozen=True)
class Read:
    """One read: ``name`` (``None`` when the code computes it), its ``line``, ``in_assert`` (the
    read is part of an ``assert`` statement: a test checking what the environment holds) and the
    ``default`` it falls back to when that is a literal string (``os.environ.get(NAME, "8081")``)."""

    name: str | None
    line: int
    in_assert: bool
    default: str | None = None


def _is_os_attr(node: ast.AST, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and \
        isinstance(node.value, ast.Name) and node.value.id == "os"


class _Scanner(ast.NodeVisitor):
    def __init__(self, imported: set[str]):
        self.environ = {"environ"} & imported  # names bound to os.environ
        self.getters = {"getenv"} & imported  # names bound to os.environ.get / os.getenv
        self.loops: list[dict[str, tuple[str, ...]]] = [{}]
        self.lists: dict[str, tuple[str, ...]] = {}  # names bound to a literal tuple/list of strings
        self.reads: list[Read] = []
        self.asserts = 0

    # ------------------------------------------------------------------ what is the environment
    def is_environ(self, node: ast.AST) -> bool:
        return _is_os_attr(node, "environ") or (isinstance(node, ast.Name) and node.id in self.environ)

    def is_getter(self, node: ast.AST) -> bool:
        return _is_os_attr(node, "getenv") or (isinstance(node, ast.Name) and node.id in self.getters) or \
            (isinstance(node, ast.Attribute) and node.attr in _READ_METHODS and self.is_environ(node.value))

    def _environ_valued(self, node: ast.AST | None) -> str | None:
        """``"environ"`` / ``"getter"`` when ``node`` evaluates to the environment or its getter."""
        if node is None:
            return None
        if isinstance(node, ast.IfExp):
            return self._environ_valued(node.body) or self._environ_valued(node.orelse)
        if isinstance(node, ast.BoolOp):
            return next(filter(None, (self._environ_valued(v) for v in node.values)), None)
        if self.is_environ(node):
            return "environ"
        if self.is_getter(node):
            return "getter"
        return None

    def _bind(self, name: str, node: ast.AST | None) -> None:
        kind = self._environ_valued(node)
        if kind == "environ":
            self.environ.add(name)
        elif kind == "getter":
            self.getters.add(name)

    # ------------------------------------------------------------------ names
    def _names(self, node: ast.AST) -> list[str | None]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name):
            for frame in reversed(self.loops):
                if node.id in frame:
                    return list(frame[node.id])
        return [None]

    def _record(self, key: ast.AST, line: int, default: ast.AST | None = None) -> None:
        literal = default.value if isinstance(default, ast.Constant) and isinstance(default.value, str) else None
        for name in self._names(key):
            self.reads.append(Read(name, line, self.asserts > 0, literal))

    def _literal_strings(self, node: ast.AST) -> tuple[str, ...] | None:
        if isinstance(node, ast.Name):
            return self.lists.get(node.id)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts and \
                all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
            return tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
        return None

    # ------------------------------------------------------------------ visitors
    def visit_Assert(self, node: ast.Assert) -> None:
        self.asserts += 1
        self.generic_visit(node)
        self.asserts -= 1

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            if isinstance(t, ast.Name):
                self._bind(t.id, node.value)
                values = self._literal_strings(node.value)
                if values is not None:
                    self.lists[t.id] = values
        self.generic_visit(node)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
            self._bind(arg.arg, default)
        for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults):
            self._bind(arg.arg, kw_default)
        self.generic_visit(node)

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def _with_loops(self, generators: list[tuple[ast.AST, ast.AST]], body) -> None:
        frame = {}
        for target, iterable in generators:
            values = self._literal_strings(iterable)
            if isinstance(target, ast.Name) and values is not None:
                frame[target.id] = values
        self.loops.append(frame)
        body()
        self.loops.pop()

    def visit_For(self, node: ast.For) -> None:
        self._with_loops([(node.target, node.iter)], lambda: self.generic_visit(node))

    def _visit_comprehension(self, node) -> None:
        self._with_loops([(g.target, g.iter) for g in node.generators], lambda: self.generic_visit(node))

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self.is_environ(node.value) and not isinstance(node.ctx, (ast.Store, ast.Del)):
            self._record(node.slice, node.lineno)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if self.is_getter(node.func) and node.args:
            self._record(node.args[0], node.lineno, node.args[1] if len(node.args) > 1 else None)
        for kw in node.keywords:  # click reads an option's environment variable itself
            if kw.arg == "envvar":
                for key in (kw.value.elts if isinstance(kw.value, (ast.List, ast.Tuple)) else [kw.value]):
                    self._record(key, node.lineno)
            elif kw.arg == "auto_envvar_prefix":
                self.reads.append(Read(None, node.lineno, self.asserts > 0))
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)) and self.is_environ(right):
                self._record(node.left, node.lineno)
        self.generic_visit(node)


def _imported_from_os(tree: ast.AST, source: str) -> set[str]:
    out: set[str] = set()
    if not re.search(r"from\s+os\s+import", source):
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            out |= {a.asname or a.name for a in node.names if a.name in {"environ", "getenv"} and not a.asname}
    return out


def parse(source: str) -> ast.Module:
    """``source`` parsed; a notebook's IPython lines (``%magic``, ``!shell``) count as ``pass``."""
    lines = [(ln[:len(ln) - len(ln.lstrip())] + "pass") if _MAGIC.match(ln) else ln for ln in source.splitlines()]
    return ast.parse("\n".join(lines))


def environment_reads(source: str) -> list[Read]:
    """Every read of an environment variable in ``source`` (Python), in line order."""
    if not any(word in source for word in ("environ", "getenv", "envvar")):  # no read is written without one
        return []
    tree = parse(source)
    scanner = _Scanner(_imported_from_os(tree, source))
    scanner.visit(tree)
    return sorted(scanner.reads, key=lambda r: (r.line, r.name or ""))


def environment_writes(source: str) -> list[int]:
    """Line numbers where ``source`` writes the process environment (``os.environ[k] = v``,
    ``del os.environ[k]``, ``os.environ.update/setdefault/pop/clear``, ``os.putenv/unsetenv``, a
    notebook's ``%env NAME=value`` and ``%set_env``)."""
    if "environ" not in source and "env" not in source:  # no write can be written without either
        return []
    tree = parse(source)
    environ = {"environ"} & _imported_from_os(tree, source)

    def is_environ(node: ast.AST) -> bool:
        return _is_os_attr(node, "environ") or (isinstance(node, ast.Name) and node.id in environ)

    lines = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else \
            [node.target] if isinstance(node, ast.AugAssign) else []
        if any(isinstance(t, ast.Subscript) and is_environ(t.value) for t in targets):
            lines.append(node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if (f.attr in _WRITE_METHODS and is_environ(f.value)) or \
                    (f.attr in {"putenv", "unsetenv"} and isinstance(f.value, ast.Name) and f.value.id == "os"):
                lines.append(node.lineno)
    lines += [n for n, ln in enumerate(source.splitlines(), 1) if _ENV_MAGIC.match(ln)]
    return sorted(lines)


# ---------------------------------------------------------------------- the project's rules
#: the sandbox child sets its own process environment before running a submission: allowed.
ENV_WRITERS_ALLOWED = {"autograder/attnlab_grader/sandbox/zygote.py", "autograder/attnlab_grader/sandbox/procs.py"}


def project_files(root: Path) -> list[str]:
    """The Python files of the project at ``root``: tracked, and new ones git does not ignore."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.py"],
                         cwd=root, capture_output=True, check=True, text=True).stdout.split("\0")
    return sorted({f for f in out if f and (root / f).is_file() and not (root / f).is_symlink()})


def _model_of(role: settings_catalog.Role, name: str) -> str | None:
    """``"CourseSettings.ci"`` when ``role``'s declaring module reads ``name`` through a settings model."""
    field = name[len(PREFIX):].lower()
    for value in vars(role.load()).values():
        if isinstance(value, type) and issubclass(value, SettingsModel) and value is not SettingsModel \
                and field in value.model_fields:
            return f"{value.__name__}.{field}"
    return None


def read_problems(rel: str, source: str) -> list[str]:
    """What is wrong with the environment reads in ``source`` (the file ``rel``), one line each: a read
    of a variable its role (:func:`settings_catalog.role_of`) does not declare, of an ``ATTNLAB_`` one
    from the environment directly (outside the direct readers), of a computed name."""
    out = []
    role = role_of(rel)
    direct = settings_catalog.direct_readers()
    ignored = settings_catalog.ignored()
    declared = settings_catalog.declarations()
    platform = settings_catalog.platform_variables(role)
    if rel in direct and (m := re.search(r"^[ \t]*(from|import)[ \t]+attnlab\b", source, re.M)):
        line = source[:m.start()].count("\n") + 1
        out.append(f"{rel}:{line}: imports attnlab, so it is no longer a direct reader; read its settings "
                   f"through its role's settings model and remove it from DIRECT_READERS ({role.home})")
    for r in environment_reads(source):
        where = f"{rel}:{r.line}"
        if r.name is None:
            out.append(f"{where}: reads an environment variable whose name is computed; read each declared "
                       "variable by name (through its role's settings model)")
        elif r.name in platform:
            continue
        elif r.name in ignored:
            if not is_test(rel):
                out.append(f"{where}: {r.name} is declared as not a setting (IGNORED), yet read here")
        elif is_test(rel) and r.in_assert and r.name in declared:
            continue  # a test may check what the environment holds for any role
        elif role.name not in declared.get(r.name, {}):
            others = ", ".join(declared.get(r.name, {}))
            out.append(f"{where}: {r.name} is neither declared by the {role.name} (this file's role) in {role.home} "
                       "nor listed in its PLATFORM_VARIABLES; declare it there"
                       + (f" (declared by: {others})" if others else ""))
        elif rel in direct:  # the hub's own environment has no attnlab: the same default as declared
            table = declared[r.name][role.name].default  # type: ignore[attr-defined]
            if r.default is not None and r.default != table and not (r.default == "" and table in _NOTHING):
                out.append(f"{where}: {r.name} defaults to {r.default!r} here but to {table!r} in "
                           f"{role.home}; make them agree")
        elif (model := _model_of(role, r.name)) is None:
            out.append(f"{where}: {r.name} is read from the environment directly but declared only as data "
                       f"({role.home}); move it into a settings model and read it from there")
        else:
            out.append(f"{where}: {r.name} is read from the environment directly; read it through its settings "
                       f"model ({model} in {role.home})")
    return out


def write_problems(rel: str, source: str) -> list[str]:
    """Writes of the process environment in ``source`` that are not allowed (outside tests and the
    sandbox child)."""
    if is_test(rel) or rel in ENV_WRITERS_ALLOWED:
        return []
    return [f"{rel}:{n}: writes os.environ; pass env= to the child process or a setting to the function instead"
            for n in environment_writes(source)]


def problems(root: Path, reads: bool = True, writes: bool = True) -> list[str]:
    """Every read problem (``reads``) and write problem (``writes``) in the project at ``root``."""
    out = []
    for rel in project_files(root):
        source = (root / rel).read_text(encoding="utf-8")
        out += (read_problems(rel, source) if reads else []) + (write_problems(rel, source) if writes else [])
    return out
