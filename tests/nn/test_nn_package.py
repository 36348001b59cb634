"""Package surface: re-exports from attnlab, complete __all__ lists, docstrings of every public name by the rule."""

import inspect
import re
import subprocess
import sys

import pytest

import attnlab
import attnlab.fast as fast
import attnlab.nn as nn


def test_key_names_reexported_from_attnlab():
    assert set(attnlab._NN_EXPORTS) <= set(nn.__all__)  # only documented public names are re-exported
    for name in attnlab._NN_EXPORTS:
        assert getattr(attnlab, name) is getattr(nn, name)
    from attnlab import GPT, MultiHeadAttention  # noqa: F401
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = attnlab.not_a_name


def test_nn_all_lists_every_public_name_its_modules_define():
    """``attnlab.nn.__all__`` is complete: every public class or function defined in a module of
    ``attnlab.nn`` (and of ``attnlab.fast``) is listed, so none goes undocumented by the test below."""
    import pkgutil

    for pkg in (nn, fast):
        defined = set()
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name.startswith("_"):
                continue
            module = __import__(f"{pkg.__name__}.{info.name}", fromlist=["x"])
            defined |= {n for n, v in vars(module).items() if not n.startswith("_")
                        and (inspect.isclass(v) or inspect.isfunction(v)) and v.__module__ == module.__name__}
        missing = defined - set(pkg.__all__)
        assert not missing, f"public in {pkg.__name__} but not in its __all__: {sorted(missing)}"


def test_import_attnlab_does_not_import_torch():
    code = "import sys, attnlab; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


SHAPE = re.compile(r"\([^()\s][^()]*,[^()]*\)|(?i:shapes do not apply)")  # e.g. (B, H, L, d_k), (..., V)
SOURCE = re.compile(r"(19|20)\d\d|§|nanoGPT|PyTorch|torch")  # a paper's year/section, or the library followed
NO_SHAPE = {"GPTConfig", "TransformerConfig", "count_parameters", "AttentionPlan", "BlockPlan", "MachinePolicy"}


def _docs(obj) -> str:
    parts = [inspect.getdoc(obj) or ""]
    if inspect.isclass(obj):
        parts += [inspect.getdoc(obj.__dict__[m]) or "" for m in ("forward", "__init__", "update") if m in obj.__dict__]
    return "\n".join(parts)


def _raises(obj) -> bool:
    try:
        return bool(re.search(r"\braise [A-Z]|\bcheck_[a-z_]+\(", inspect.getsource(obj)))
    except (OSError, TypeError):
        return False


@pytest.mark.parametrize("pkg, name", [(nn, n) for n in nn.__all__] + [(fast, n) for n in fast.__all__])
def test_public_names_are_documented_by_the_rule(pkg, name):
    """Shapes (a parenthesised layout such as ``(B, L, d_model)``), a source (paper and year or
    section, or the library whose convention is followed), both in the name's docstring or its
    module's, and the errors raised wherever the code raises or calls a check."""
    obj = getattr(pkg, name)
    doc = _docs(obj)
    assert len(doc) > 60, f"{name} needs a real docstring"
    module_doc = sys.modules[obj.__module__].__doc__ or ""  # a convention shared by a module is stated once there
    if name not in NO_SHAPE:
        assert SHAPE.search(doc + module_doc), f"{name}: say the shapes (e.g. ``x: (B, L, d_model)``)"
    assert SOURCE.search(doc + module_doc), f"{name}: cite the source"
    if _raises(obj):
        assert re.search(r"Raises|ValueError|TypeError", doc), f"{name} raises: document the errors"


def test_the_rule_rejects_a_docstring_without_shapes_source_or_errors():
    def bare(x):
        """Compute the thing for the given input and return it to the caller, as expected."""
        if x is None:
            raise ValueError("x")
        return x

    doc = _docs(bare)
    assert not SHAPE.search(doc) and not SOURCE.search(doc) and _raises(bare)
