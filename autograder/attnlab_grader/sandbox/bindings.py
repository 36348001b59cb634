"""How names are bound in a submission's cells, as Python binds them: which statements bind a
module-level name (:func:`module_bindings`), which module-level names a definition reads
(:func:`global_reads`, with each function's locals kept apart), and where a forbidden library
name is used (:func:`forbidden_uses`).  Read by :func:`attnlab_grader.sandbox.scan.reference_use`."""
from __future__ import annotations

import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _own_scope(node: ast.AST):
    """The nodes that belong to ``node``'s own scope, and the scopes nested in it (yielded, not
    entered).  The parts of a nested scope Python evaluates in the enclosing one (decorators,
    default values, annotations, base classes, a comprehension's first iterable) are yielded as
    the enclosing scope's."""
    todo = _inner_parts(node)
    while todo:
        n = todo.pop()
        yield n
        todo += _outer_parts(n) if isinstance(n, _SCOPES) else list(ast.iter_child_nodes(n))


def _outer_parts(n: ast.AST) -> list[ast.AST]:
    """The parts of the scope ``n`` (a definition, lambda, class or comprehension) that Python
    evaluates in the enclosing scope: decorators, default values, annotations, base classes, a
    comprehension's first iterable."""
    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = n.args
        out = [*getattr(n, "decorator_list", ()), *a.defaults, *(d for d in a.kw_defaults if d is not None)]
        if not isinstance(n, ast.Lambda):
            out += [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                    if x is not None and x.annotation is not None]
            out += [n.returns] if n.returns is not None else []
        return out
    if isinstance(n, ast.ClassDef):
        return [*n.decorator_list, *n.bases, *n.keywords]
    if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return [n.generators[0].iter]
    return []


def _inner_parts(node: ast.AST) -> list[ast.AST]:
    """The children of ``node`` that belong to its own scope: for a definition, lambda or
    comprehension, not the parts Python evaluates in the enclosing scope (those are the enclosing
    scope's, and visiting them twice made nested definitions cost 2**depth)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return list(node.body)
    if isinstance(node, ast.Lambda):
        return [node.body]
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        out: list[ast.AST] = [node.elt]
    elif isinstance(node, ast.DictComp):
        out = [node.key, node.value]
    else:
        return list(ast.iter_child_nodes(node))
    for i, gen in enumerate(node.generators):
        out += [gen.target, *gen.ifs] + ([gen.iter] if i else [])
    return out


def _params(node) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = node.args
        return {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if x is not None}
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
    return set()


def _stored(n: ast.AST) -> set[str]:
    """Names a node of a scope binds in that scope."""
    if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
        return {n.id}
    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {n.name}
    if isinstance(n, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.split(".")[0] for a in n.names if a.name != "*"}
    if isinstance(n, ast.ExceptHandler) and n.name:
        return {n.name}
    if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
        return {n.name}
    if isinstance(n, ast.MatchMapping) and n.rest:
        return {n.rest}
    return set()


def global_reads(node: ast.AST, enclosing: frozenset = frozenset(), outer: bool = True) -> set[str]:
    """Names ``node`` (a module-level statement or a definition) reads from the module's
    namespace, following Python's scoping: a name bound in a function (parameter, assignment,
    import, nested ``def``...) is local there unless declared ``global``; a nested function also
    sees its enclosing functions' locals; a class body's names are not visible in its methods.
    ``outer``: include what a definition's decorators, defaults and annotations read (False for a
    nested scope, whose enclosing scope already read them).  Linear in the size of ``node``."""
    if isinstance(node, _SCOPES) and outer:
        out = global_reads(node, enclosing, outer=False)
        for part in _outer_parts(node):
            out |= global_reads(part, enclosing)
        return out
    if not isinstance(node, _SCOPES):
        out = set()
        for n in [node, *_own_scope(node)]:
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                out.add(n.id)
            elif isinstance(n, _SCOPES) and n is not node:
                out |= global_reads(n, enclosing, outer=False)
        return out
    own = list(_own_scope(node))
    declared = {g for n in own if isinstance(n, ast.Global) for g in n.names}
    local = set() if isinstance(node, ast.ClassDef) else (_params(node) | {x for n in own for x in _stored(n)})
    local -= declared
    out = set()
    for n in own:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local \
                and (n.id in declared or n.id not in enclosing):
            out.add(n.id)
        elif isinstance(n, _SCOPES):
            inner = enclosing if isinstance(node, ast.ClassDef) else frozenset(enclosing | local)
            out |= global_reads(n, inner, outer=False)
    return out


def module_bindings(trees: dict[str, ast.Module | None]) -> dict[str, list[tuple[str, ast.AST]]]:
    """Every way a module-level name is bound in the cells: ``{name: [(cell_id, node)]}`` where
    ``node`` is the statement that binds it (a ``def``/``class``, an import, a plain, annotated
    or augmented assignment, a ``for``/``with`` target, ``:=``, ``except ... as``, a ``match``
    capture, also inside ``if``/``try``/loops) or a function that declares it ``global``."""
    out: dict[str, list[tuple[str, ast.AST]]] = {}

    def add(names, cell_id, node):
        for name in names:
            out.setdefault(name, []).append((cell_id, node))

    for cell_id, tree in trees.items():
        if tree is None:
            continue
        todo = list(tree.body)
        while todo:
            stmt = todo.pop()
            names = set()
            for n in [stmt, *_own_scope(stmt)] if not isinstance(stmt, _SCOPES) else [stmt]:
                names |= _stored(n)
                if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
                    names.add(n.target.id)
            add(names, cell_id, stmt)
            for n in ast.walk(stmt):  # functions anywhere that assign module names via `global`
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    declared = {g for m in _own_scope(n) if isinstance(m, ast.Global) for g in m.names}
                    add(declared, cell_id, n)
    return out


def library_name(name: str) -> str:
    """How a library's function or class name is compared with a forbidden one: without case and
    underscores, so that the function and its module form match (``softmax`` ~ ``nn.Softmax``,
    ``log_softmax`` ~ ``nn.LogSoftmax``, ``multi_head_attention_forward`` as itself)."""
    return name.replace("_", "").lower()


def forbidden_uses(node: ast.AST, forbid: tuple[str, ...], target: str):
    """``(line, name)`` for each use of a ``forbid`` name in ``node``: an attribute (``F.softmax``,
    ``nn.Softmax``, ``x.softmax``: compared as :func:`library_name`), a name (exactly: the student's
    own definitions have free names), or an imported name or module path (``from
    torch.nn.functional import scaled_dot_product_attention as f``; importing a library function
    under the target's own name is left to the run-time watch, as a later ``def`` of the target
    replaces it)."""
    library = {library_name(f): f for f in forbid}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and library_name(sub.attr) in library:
            yield sub.lineno, sub.attr
        elif isinstance(sub, ast.Name) and sub.id in forbid and sub.id != target:
            yield sub.lineno, sub.id
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            for a in sub.names:
                bound = a.asname or a.name.split(".")[0]
                parts = a.name.split(".") + (sub.module.split(".") if getattr(sub, "module", None) else [])
                hit = next((p for p in parts if library_name(p) in library and (p != target or bound != target)), None)
                if hit:
                    yield sub.lineno, hit
