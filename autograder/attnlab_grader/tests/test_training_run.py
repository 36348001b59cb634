"""Set 09's training run is judged on the weights the student's loop produced, measured by the
grader on held-out text the sandbox never received; nothing the student's code reports counts.
In process (no sandbox): the verdict function is what the grader runs on the sandbox's value."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from attnlab_grader.tests import qa

A = "09_capstone"


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def run():
    """The check, the loaded grading.py's names and one pinned draw (slice and seed from
    ``default_rng(0)``).  The grader keeps one draw per process (``_RUN_DRAW``): the cache is
    emptied before and after, so what ran earlier in this worker never picks this module's draw."""
    spec = qa.spec(A)
    check = spec.check_for("test_training_run")
    import types
    grading = types.SimpleNamespace(**check.verdict.__globals__)  # the loaded grading.py's names
    draw_cache = check.verdict.__globals__["_RUN_DRAW"]
    draw_cache.clear()
    try:
        raw = check.draw(np.random.default_rng(0))[0]
        yield check, grading, raw
    finally:
        draw_cache.clear()


def _weights(grading, raw, steps):
    """The course's run in the grader (as the verdict's reference), after ``steps`` steps."""
    _, m = grading._course_run(raw["start"], raw["seed"], raw["V"], steps, raw["B"], grading._reference_train_step)
    return {k: v.detach().double().numpy() for k, v in m.named_parameters()}


def test_held_out_text_never_reaches_the_sandbox(run):
    check, grading, raw = run
    sent = check.jobs(np.random.default_rng(1))[0]["trials"][0]
    held_out = grading._ids()[raw["start"] + 20_000:raw["start"] + 24_000]
    assert set(sent) == {"train", "start", "V", "steps", "B", "seed", "cfg"}
    assert len(sent["train"]["v"]) == 20_000 and sent["train"]["v"][-50:] != list(held_out[:50])


def _sent(weights, model="TinyGPT"):
    return {"model": model, "weights": weights}


def test_reported_numbers_and_untrained_weights_earn_nothing(run):
    check, grading, raw = run
    assert not check.judge((0.5, 3.3), raw, "s").ok  # a loss handed back is not a model
    untrained = _weights(grading, raw, 0)
    out = check.judge(_sent(untrained), raw, "s")
    assert not out.ok and "held-out" in out.message, out.message
    broken = dict(untrained, **{"tok_emb.weight": np.full_like(untrained["tok_emb.weight"], np.nan)})
    assert not check.judge(_sent(broken), raw, "s").ok
    assert not check.judge(_sent({k: v for k, v in untrained.items() if k != "norm_f.weight"}), raw, "s").ok
    assert not check.judge(_sent(untrained, model="mine"), raw, "s").ok  # only the two models the sandbox trains


def test_weights_trained_by_the_course_recipe_pass_and_say_which_model_trained(run):
    check, grading, raw = run
    grading.reference_run(**raw)
    key = (raw["start"], raw["seed"], raw["V"], raw["steps"], raw["B"])
    trained = {k: v.double().numpy() for k, v in grading._REFERENCE_WEIGHTS[key].items()}
    mine = check.judge(_sent(trained), raw, "s")
    assert mine.ok and "your TinyGPT trained" in mine.message, mine.message
    course = check.judge(_sent(trained, model="GPT"), raw, "s")
    assert course.ok and "the course's GPT" in course.message, course.message


def _sandbox_namespace(grading, case=None):
    """RUN_SETUP executed as the sandbox executes it (after the answer cells; attnlab not used by
    them): the reference solution's answer cells, or those of the QA case ``wrong/<case>.py``."""
    nb = qa.reference_submission(A, "s") if case is None else qa.wrong_submission(A, "s", case)
    return _namespace_of(grading, nb)


def _namespace_of(grading, nb):
    import math

    import torch.nn.functional as F
    from torch import Tensor, nn

    ns = {"math": math, "np": np, "torch": torch, "nn": nn, "F": F, "Tensor": Tensor}
    for gid in ("train_step", "causal_self_attention", "block", "tiny_gpt"):
        exec(qa.cell(nb, gid).source, ns)  # noqa: S102 - the QA's own answer cells
    exec(grading.RUN_SETUP, ns)  # noqa: S102 - the spec's sandbox setup
    return ns


def _inputs(raw, steps):
    return dict(raw, steps=steps, train=torch.as_tensor(raw["train"]), cfg=dict(raw["cfg"]))


def test_the_sandbox_trains_the_learners_tinygpt_when_it_is_right(run):
    """The learner's own TinyGPT (the reference solution's) passes the probe and is what trains; the
    weights come back under attnlab.nn.GPT's names and, after a few steps, equal the course run's
    (same initial weights, same batches: the learner's model computes the same thing)."""
    check, grading, raw = run
    ns = _sandbox_namespace(grading)
    inp = _inputs(raw, 3)
    assert ns["_student_model"](inp) is not None
    sent = ns["_grader_run"](inp)
    assert sent["model"] == "TinyGPT"
    assert set(sent["weights"]) == set(dict(grading._run_model(raw["V"]).named_parameters()))
    course = _weights(grading, raw, 3)
    for name, value in sent["weights"].items():
        np.testing.assert_allclose(value.double().numpy(), course[name], atol=2e-5, err_msg=name)


@pytest.mark.parametrize("case", ["gpt_untied_head", "gpt_no_scale", "gpt_returns_logits_only"])
def test_the_sandbox_trains_the_course_gpt_when_the_learners_model_is_wrong(run, case):
    """A wrong TinyGPT (an extra output layer, a missing scale, no loss) fails the probe, so the
    learner's train_step is judged on the course's GPT: a wrong model part is not charged twice."""
    check, grading, raw = run
    ns = _sandbox_namespace(grading, case)
    assert ns["_student_model"](_inputs(raw, 1)) is None
    assert ns["_grader_run"](_inputs(raw, 1))["model"] == "GPT"


def _held_out_gap(check, grading, raw, ns):
    sent = ns["_grader_run"](_inputs(raw, raw["steps"]))
    model = grading._run_model(raw["V"])
    state = {k: v.float() for k, v in sent["weights"].items()}
    state["lm_head.weight"] = state["tok_emb.weight"]
    model.load_state_dict(state)
    return grading.held_out_loss(model, raw["start"], raw["seed"]) - grading.reference_run(**raw)[0]


def test_the_runs_clip_never_binds_on_a_right_step(run):
    """A clip that binds would rescale accumulated gradients back to a normal size (a train_step
    without zero_grad would still train): on the course's own run every gradient norm stays below
    the clip the run passes."""
    check, grading, raw = run
    from attnlab.data import get_batch
    torch.manual_seed(raw["seed"])
    m = grading._run_model(raw["V"])
    opt = torch.optim.AdamW(m.parameters(), lr=grading.RUN_CFG["lr"], weight_decay=0.0)
    gen = torch.Generator().manual_seed(raw["seed"])
    train = torch.as_tensor(raw["train"])
    norms = []
    for _ in range(raw["steps"]):
        x, y = get_batch(train, grading.RUN_CFG["block"], raw["B"], gen)
        opt.zero_grad()
        m(x, y)[1].backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(m.parameters(), float("inf"))))
        opt.step()
    assert max(norms) < grading.RUN_CFG["clip"] / 10, max(norms)


@pytest.mark.parametrize("case", ["step_no_zero_grad", "step_zero_grad_after_backward", "step_fakes_the_loss"])
def test_a_loop_that_does_not_train_lands_far_above_the_tolerance(run, case):
    """Each QA train_step that must lose the training run does so with room: at least twice the
    tolerance above the course's run, while the reference solution's loop stays within a fifth of it."""
    check, grading, raw = run
    assert _held_out_gap(check, grading, raw, _sandbox_namespace(grading)) < grading.TOLERANCE / 5
    assert _held_out_gap(check, grading, raw, _sandbox_namespace(grading, case)) > 2 * grading.TOLERANCE


def _sent_by(grading, raw, ns):
    sent = ns["_grader_run"](_inputs(raw, raw["steps"]))
    return _sent({k: v.double().numpy() for k, v in sent["weights"].items()}, model=sent["model"])


def test_a_loop_that_trains_on_the_wrong_targets_loses_the_run_by_name(run):
    """A train_step that computes its own loss with the targets shifted once more trains, but the
    token after next: its weights are not the course run's, and they are the named loop's run from the
    same initial weights, so the verdict names the mistake from the catalogue."""
    check, grading, raw = run
    ns = _sandbox_namespace(grading, "step_own_loss_shifted_again")
    out = check.judge(_sent_by(grading, raw, ns), raw, "s")
    assert not out.ok and out.mistake == "target_shift_two", (out.ok, out.mistake, out.message)


def test_weights_trained_elsewhere_earn_nothing_although_their_loss_is_good(run):
    """Provenance: a train_step that, on a model of the run's size, puts in weights trained elsewhere
    (the same recipe from other initial weights) reaches the course run's held-out loss, yet its
    weights are not what any step produces from the grader's initial weights: zero, in words."""
    check, grading, raw = run
    ns = _sandbox_namespace(grading, "step_loads_weights_trained_elsewhere")
    assert abs(_held_out_gap(check, grading, raw, ns)) < grading.TOLERANCE  # the quality alone would pass
    out = check.judge(_sent_by(grading, raw, _sandbox_namespace(grading, "step_loads_weights_trained_elsewhere")),
                      raw, "s")
    assert not out.ok and "not the ones the course's train_step produces" in out.message, out.message


def test_correct_loops_agree_with_the_course_run_far_inside_the_tolerance(run):
    """The provenance tolerance is not what makes a correct loop pass: the learner's TinyGPT (the
    reference's, and the float64 one of honest/) trained by a correct step ends more than ten times
    inside TRAJECTORY_TOLERANCE of the course's run (what well-posed draws keep, see
    WELL_POSED_DISTANCE), while a loop that skips every other update lands at least 10 times the
    tolerance away."""
    check, grading, raw = run
    assert grading.well_posed(raw["start"], raw["seed"], raw["V"])
    names = set(dict(grading._run_model(raw["V"]).named_parameters()))
    for nb in (qa.reference_submission(A, "s"), qa.honest_submission(A, "s", "gpt_fused_attention_float64")):
        ns = _namespace_of(grading, nb)
        sent = ns["_grader_run"](_inputs(raw, raw["steps"]))
        assert sent["model"] == "TinyGPT" and set(sent["weights"]) == names
        assert grading.trajectory_distance(sent["weights"], **raw) < grading.TRAJECTORY_TOLERANCE / 10
    ns = _sandbox_namespace(grading, "step_updates_every_other_call")
    sent = ns["_grader_run"](_inputs(raw, raw["steps"]))
    assert grading.trajectory_distance(sent["weights"], **raw) > 10 * grading.TRAJECTORY_TOLERANCE
