"""Spread of set 09's training-run measures over fresh draws: correct loops and mis-training loops.

For each draw (training slice and seed, as the grader draws them) every loop trains in process,
through the sandbox's own run code (``RUN_SETUP``), and prints its provenance distance
(``trajectory_distance``: ``|W - W_course| / |W_course - W_initial|``) and its held-out loss minus the
course run's.  Loops: the reference solution and every ``honest/`` case (correct), every ``wrong/``
case that changes ``train_step``, and a family of further under-/mis-training loops defined here.
The last lines give, per group, the largest distance of a correct loop and the smallest of a wrong
one: ``TRAJECTORY_TOLERANCE`` in grading_training_run.py is chosen between them.

    python benchmarks/training_run_spread.py --draws 8        # about 25 s a draw on one core
"""
from __future__ import annotations

import argparse
import types

import numpy as np
import torch

from attnlab_grader.tests import qa
from attnlab_grader.tests.test_stability import _namespace

A = "09_capstone"

_STEP = '''
def train_step(model, optimizer, x, y, grad_clip=1.0):
    {pre}
    optimizer.zero_grad(set_to_none=True)
    _, loss = model(x, y)
    {loss}.backward()
    {clip}
    {step}
    return loss.item()
_n = [0]
'''
#: Mis-training loops beyond the QA corpus: ``(pre, loss, clip, step)`` filled into one template.
FAMILY = {
    "trains_on_70_of_80_calls": ("_n[0] += 1", "loss", "torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)",
                                 "optimizer.step() if _n[0] <= 70 else None"),
    "updates_every_fourth_call": ("_n[0] += 1", "loss", "torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)",
                                  "optimizer.step() if _n[0] % 4 == 0 else None"),
    "lr_times_0.8": ("[g.__setitem__('lr', 0.006 * 0.8) for g in optimizer.param_groups]", "loss",
                     "torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)", "optimizer.step()"),
    "two_steps_per_call": ("pass", "loss", "torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)",
                           "optimizer.step(); optimizer.step()"),
    "clip_fixed_at_1": ("pass", "loss", "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)", "optimizer.step()"),
    "half_the_batch": ("x, y = x[: len(x) // 2], y[: len(y) // 2]", "loss",
                       "torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)", "optimizer.step()"),
    "targets_are_inputs": ("y = x", "loss", "torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)",
                           "optimizer.step()"),
    "l2_penalty_added": ("pass", "(loss + 1e-4 * sum((p ** 2).sum() for p in model.parameters()))",
                         "torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)", "optimizer.step()"),
    "embeddings_frozen": ("pass", "loss", "[setattr(p, 'grad', None) for n, p in model.named_parameters() if 'emb' in n]",
                          "optimizer.step()"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=8)
    ap.add_argument("--first", type=int, default=0, help="index of the first draw (to split a run)")
    args = ap.parse_args()
    torch.set_num_threads(1)  # as in the sandbox
    check = qa.spec(A).check_for("test_training_run")
    g = types.SimpleNamespace(**check.verdict.__globals__)
    sp = qa.spec(A)
    loops = [("honest", "reference", qa.reference_submission(A, "s"), "")]
    loops += [("honest", n, qa.honest_submission(A, "s", n), "") for n in sp.honest]
    loops += [("wrong", n, qa.wrong_submission(A, "s", n), "") for n, c in sp.wrong.items()
              if "train_step" in c.cells and "test_training_run" in c.breaks]
    loops += [("wrong", n, qa.reference_submission(A, "s"), _STEP.format(pre=p, loss=lo, clip=c, step=st))
              for n, (p, lo, c, st) in FAMILY.items()]
    worst = {"honest": 0.0, "wrong": np.inf}
    nearest = {}
    for d in range(args.first, args.first + args.draws):
        check.verdict.__globals__["_RUN_DRAW"].clear()
        raw = check.draw(np.random.default_rng(1000 + d))[0]
        ref_val = g.reference_run(**raw)[0]
        print(f"draw {d}: slice at {raw['start']}, seed {raw['seed']}, course run's held-out loss {ref_val:.3f}")
        for kind, name, nb, extra in loops:
            ns = _namespace(nb)
            exec(extra, ns)  # noqa: S102 - the benchmark's own loops
            exec(g.RUN_SETUP, ns)  # noqa: S102 - the spec's sandbox setup
            sent = ns["_grader_run"](dict(raw, train=torch.as_tensor(raw["train"]), cfg=dict(raw["cfg"])))
            w = {k: v.detach() for k, v in sent["weights"].items()}
            dist = g.trajectory_distance(w, **raw)
            model = g._run_model(raw["V"])
            model.load_state_dict(dict({k: v.float() for k, v in w.items()}, **{"lm_head.weight": w["tok_emb.weight"].float()}))
            gap = g.held_out_loss(model, raw["start"], raw["seed"]) - ref_val
            print(f"  {kind:6s} {name:40s} {sent['model']:7s} distance {dist:9.2e}  held-out {gap:+.3f}", flush=True)
            if kind == "honest":
                worst["honest"] = max(worst["honest"], dist)
            elif dist < worst["wrong"]:
                worst["wrong"], nearest["wrong"] = dist, name
    print(f"largest distance of a correct loop: {worst['honest']:.4f}")
    print(f"smallest distance of a wrong loop:  {worst['wrong']:.4f} ({nearest.get('wrong')})")
    print(f"TRAJECTORY_TOLERANCE = {g.TRAJECTORY_TOLERANCE}")


if __name__ == "__main__":
    main()
