"""The small GPT that grading builds inside the sandbox: ``attnlab.nn.GPT``'s own source.

The sandbox hides ``attnlab`` (``import attnlab`` fails there by design), so sets 08 (greedy
decoding) and 09 (training step and run) cannot import the model.  ``GPT_SETUP`` is setup code
built here, on the grader's side, from the source of the very ``attnlab.nn`` modules the grader
imports (``inspect.getsource``): ``attnlab/nn/gpt.py`` and every module it imports relatively
(found by parsing the imports, executed in dependency order).  Inside the sandbox it executes each
module into a fresh private module object (``_attnlab_grader_nn.<name>``); the relative imports
resolve through ``sys.modules`` entries that exist only while the model is built and are removed
before any student code runs again.  There is no second, hand-kept model.

What the setup leaves in the student's namespace: one name, ``_GraderGPT(vocab_size, block_size,
d_model, n_heads, n_layers)``, a factory returning ``GPT(GPTConfig(...))`` (pre-LN, GELU FFN,
learned positions, output layer tied to the token embedding) with two adapters of the grader's
weight exchange: ``state_dict()`` leaves out ``lm_head.weight`` (it IS ``tok_emb.weight``) and
``load_state_dict`` accepts a state without it.  The decoding methods (``generate`` and its
helper) are removed from the private class: set 08 asks the student to write greedy decoding,
so the model they are handed must not carry the answer.  What a student can still reach through
the model object is listed in ``SECURITY.md`` ("Reference code inside the sandbox").

``autograder/attnlab_grader/tests/test_spec.py`` runs ``GPT_SETUP`` as the sandbox does (without ``attnlab``
importable) and checks parity with ``attnlab.nn.GPT`` and that nothing else leaks.  One home:
specs import ``GPT_SETUP`` from here, never each other.
"""
from __future__ import annotations

import ast
import importlib
import inspect

#: The package whose source is shipped into the sandbox, and the module holding ``GPT``.
PACKAGE, ROOT_MODULE = "attnlab.nn", "gpt"
#: The private package name the modules get inside the sandbox (never importable there otherwise).
PRIVATE = "_attnlab_grader_nn"
#: Methods removed from the sandbox's private GPT class (the student writes decoding).
REMOVED = ("generate", "_decode_loop")


def _relative_imports(source: str) -> list[str]:
    """Sibling modules a module imports relatively (``from .x import a`` / ``from . import x``)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.level != 1:
                raise ValueError(f"{PACKAGE}: only one-level relative imports can be shipped, got level {node.level}")
            out.extend([node.module] if node.module else [a.name for a in node.names])
    return out


def module_sources(root: str = ROOT_MODULE) -> list[tuple[str, str]]:
    """``[(name, source), ...]`` of ``attnlab.nn.<root>`` and its relative imports, dependencies first."""
    order, seen = [], set()

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in stack:
            raise ValueError(f"{PACKAGE}: circular relative import {' -> '.join(stack + (name,))}")
        if name in seen:
            return
        source = inspect.getsource(importlib.import_module(f"{PACKAGE}.{name}"))
        for dep in _relative_imports(source):
            visit(dep, stack + (name,))
        seen.add(name)
        order.append((name, source))

    visit(root, ())
    return order


_BUILD = '''
def _grader_build_gpt(sources, private, removed):
    import sys
    import types
    names = [private] + [f"{private}.{name}" for name, _ in sources]
    before = {n: sys.modules[n] for n in names if n in sys.modules}
    try:
        package = types.ModuleType(private)
        package.__path__ = []
        sys.modules[private] = package
        for name, source in sources:
            module = types.ModuleType(f"{private}.{name}")
            module.__package__ = private
            sys.modules[module.__name__] = module
            exec(compile(source, f"<attnlab.nn.{name}>", "exec"), module.__dict__)
            setattr(package, name, module)
        GPT, GPTConfig = package.gpt.GPT, package.gpt.GPTConfig
    finally:
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(before)
    for name in removed:
        delattr(GPT, name)

    def tied_in(module, state, prefix, *args):  # the grader sends tok_emb.weight once
        if prefix + "tok_emb.weight" in state:
            state.setdefault(prefix + "lm_head.weight", state[prefix + "tok_emb.weight"])

    def tied_out(module, state, prefix, *args):
        state.pop(prefix + "lm_head.weight", None)

    def _GraderGPT(vocab_size, block_size, d_model, n_heads, n_layers):
        model = GPT(GPTConfig(vocab_size, block_size, d_model, n_heads, n_layers))
        model.register_load_state_dict_pre_hook(tied_in)
        model.register_state_dict_post_hook(tied_out)
        return model
    return _GraderGPT


'''


def gpt_setup() -> str:
    """The setup code: defines ``_GraderGPT`` (and nothing else) in the namespace it runs in."""
    return (_BUILD + f"_GraderGPT = _grader_build_gpt({tuple(module_sources())!r}, {PRIVATE!r}, {REMOVED!r})\n"
            "del _grader_build_gpt\n")


GPT_SETUP = gpt_setup()


def builds_reference(check: dict) -> bool:
    """Whether the sandbox check ``check`` (a job's ``{"id", "setup", "extract", ...}``) builds this
    reference model: its setup runs :data:`GPT_SETUP`.  Such checks run apart from the others
    (``isolated``: a child of their own), so the reference code they bring into the sandbox is never
    in the process while any function they do not grade is graded."""
    return GPT_SETUP in str(check.get("setup", ""))
