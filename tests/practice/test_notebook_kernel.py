"""In a real Jupyter kernel (headless, as the lesson tests run), gate/mastery_check/practice show
widget cards, finish without waiting for input, and record progress."""
import json

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow  # starts a kernel


def test_gate_mastery_check_and_card_run_headless_in_a_kernel(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("ATTNLAB_HOME", str(home))
    monkeypatch.setenv("ATTNLAB_LEARNER", "kernel")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell('from attnlab.practice import gate, mastery_check, practice\ngate("03")'),
        nbformat.v4.new_code_cell('card = practice("sdpa_scale")\n'
                                  'card.answer.value = card.expected_text()\ncard.check_button.click()\ncard'),
        nbformat.v4.new_code_cell('mastery_check("03")'),
    ]
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    mimes = [list(o.get("data", {})) for c in nb.cells for o in c.outputs]
    assert all(o.output_type != "error" for c in nb.cells for o in c.outputs)
    widget = "application/vnd.jupyter.widget-view+json"
    gate_out, card_out, check_out = ([m for o in c.outputs for m in o.get("data", {})] for c in nb.cells)
    assert "text/markdown" in gate_out and gate_out.count(widget) == 2, mimes  # two missing prerequisites
    assert card_out.count(widget) == 1
    assert check_out.count(widget) == 6  # the six skills of lesson 03 (five numeric, one conceptual)
    progress = json.loads((home / "progress" / "kernel.json").read_text())
    assert progress["skills"]["sdpa_scale"]["streak"] == 1 and progress["lesson"] == "03"
