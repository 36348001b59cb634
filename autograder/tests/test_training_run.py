"""Set 09's training run is judged on the weights the student's loop produced, measured by the
grader on held-out text the sandbox never received; nothing the student's code reports counts.
In process (no sandbox): the verdict function is what the grader runs on the sandbox's value."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.tests import qa

A = "09_capstone"


@pytest.fixture(scope="module")
def run():
    spec = qa.spec(A)
    check = spec.check_for("test_training_run")
    import types
    grading = types.SimpleNamespace(**check.verdict.__globals__)  # the loaded grading.py's names
    raw = check.draw(np.random.default_rng(0))[0]
    return check, grading, raw


def _weights(grading, raw, steps):
    from attnlab.data import get_batch
    torch.manual_seed(raw["seed"])
    m = grading._run_model(raw["V"])
    for mod in m.modules():
        if isinstance(mod, (torch.nn.Linear, torch.nn.Embedding)):
            torch.nn.init.normal_(mod.weight, 0.0, 0.02)
        if isinstance(mod, torch.nn.Linear) and mod.bias is not None:
            torch.nn.init.zeros_(mod.bias)
    opt = torch.optim.AdamW(m.parameters(), lr=grading.RUN_CFG["lr"], weight_decay=0.0)
    gen = torch.Generator().manual_seed(raw["seed"])
    train = torch.as_tensor(raw["train"])
    for _ in range(steps):
        x, y = get_batch(train, grading.RUN_CFG["block"], raw["B"], gen)
        grading._reference_train_step(m, opt, x, y)
    return {k: v.detach().double().numpy() for k, v in m.named_parameters()}


def test_held_out_text_never_reaches_the_sandbox(run):
    check, grading, raw = run
    sent = check.jobs(np.random.default_rng(1))[0]["trials"][0]
    held_out = grading._ids()[raw["start"] + 20_000:raw["start"] + 24_000]
    assert set(sent) == {"train", "start", "V", "steps", "B", "seed", "cfg"}
    assert len(sent["train"]["v"]) == 20_000 and sent["train"]["v"][-50:] != list(held_out[:50])


def test_reported_numbers_and_untrained_weights_earn_nothing(run):
    check, grading, raw = run
    assert not check.judge((0.5, 3.3), raw, "s").ok  # a loss handed back is not a model
    untrained = _weights(grading, raw, 0)
    out = check.judge(untrained, raw, "s")
    assert not out.ok and "held-out" in out.message, out.message
    broken = dict(untrained, **{"tok_emb.weight": np.full_like(untrained["tok_emb.weight"], np.nan)})
    assert not check.judge(broken, raw, "s").ok
    assert not check.judge({k: v for k, v in untrained.items() if k != "norm_f.weight"}, raw, "s").ok


def test_weights_trained_by_the_course_recipe_pass(run):
    check, grading, raw = run
    grading.reference_run(**raw)
    key = (raw["start"], raw["seed"], raw["V"], raw["steps"], raw["B"])
    trained = {k: v.double().numpy() for k, v in grading._REFERENCE_WEIGHTS[key].items()}
    assert check.judge(trained, raw, "s").ok
