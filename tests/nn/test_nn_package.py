"""Package surface: re-exports from attnlab, docstrings of every public name."""

import inspect
import subprocess
import sys

import pytest

import attnlab
import attnlab.nn as nn


def test_key_names_reexported_from_attnlab():
    for name in attnlab._NN_EXPORTS:
        assert getattr(attnlab, name) is getattr(nn, name)
    from attnlab import GPT, MultiHeadAttention  # noqa: F401
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        attnlab.not_a_name


def test_import_attnlab_does_not_import_torch():
    code = "import sys, attnlab; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("name", nn.__all__)
def test_public_names_are_documented(name):
    obj = getattr(nn, name)
    doc = inspect.getdoc(obj) or ""
    assert len(doc) > 60, f"{name} needs a real docstring"
    if inspect.isclass(obj) and hasattr(obj, "forward"):
        assert len(inspect.getdoc(obj.forward) or "") > 20 or "forward" in doc, f"{name}.forward is undocumented"
