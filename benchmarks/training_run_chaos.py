"""Set 09's training run: how chaotic each draw is, and how far correct loops end from the course's run.

For each draw of slice and seed (as the grader draws them, without the well-posed filter) it prints
the draw's ``chaos`` (the course's run in float64 against the float32 one, as ``trajectory_distance``
measures) and the ``trajectory_distance`` of two correct loops run through the sandbox's own code
(``RUN_SETUP``): the reference solution's TinyGPT (float32) and the honest float64 TinyGPT.  The summary
gives the share of draws above ``WELL_POSED_DISTANCE`` and, among the admitted draws, the largest
distance of a correct loop (and, for comparison, the largest on the draws the grader redraws):
``WELL_POSED_DISTANCE`` in grading_training_run.py is chosen from these.

    python -m benchmarks.training_run_chaos --draws 400     # about 2 s a draw on one core
"""
from __future__ import annotations

import argparse
import types

import numpy as np
import torch

from attnlab_grader.tests import qa
from attnlab_grader.tests.test_training_run import _namespace_of

A = "09_capstone"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=40)
    ap.add_argument("--first", type=int, default=0, help="index of the first draw (to split a run)")
    args = ap.parse_args()
    torch.set_num_threads(1)  # as in the sandbox and the grader
    check = qa.spec(A).check_for("test_training_run")
    g = types.SimpleNamespace(**check.verdict.__globals__)
    loops = [("reference", qa.reference_submission(A, "s")),
             ("float64", qa.honest_submission(A, "s", "gpt_fused_attention_float64"))]
    ids = g._ids()
    V = int(ids.max()) + 1
    admitted, refused, worst, worst_redrawn = 0, 0, 0.0, 0.0
    for d in range(args.first, args.first + args.draws):
        rng = np.random.default_rng(5000 + d)
        start, seed = int(rng.integers(0, len(ids) - 24_000)), int(rng.integers(1 << 30))
        c = g.chaos(start, seed, V)
        raw = {"train": torch.as_tensor(ids[start:start + 20_000]), "start": start, "V": V, "steps": g.STEPS,
               "B": g.BATCH, "seed": seed, "cfg": dict(g.RUN_CFG)}
        dists = []
        for _, nb in loops:
            ns = _namespace_of(g, nb)  # the answer cells, then the spec's sandbox setup
            sent = ns["_grader_run"](dict(raw, cfg=dict(raw["cfg"])))
            dists.append(g.trajectory_distance(sent["weights"], **raw))
        ok = c < g.WELL_POSED_DISTANCE
        print(f"draw {d}: slice at {start}, seed {seed}: chaos {c:.2e} ({'admitted' if ok else 'redrawn'}); "
              + ", ".join(f"{name} {x:.2e}" for (name, _), x in zip(loops, dists)), flush=True)
        if ok:
            admitted += 1
            worst = max(worst, *dists)
        else:
            refused += 1
            worst_redrawn = max(worst_redrawn, *dists)
    print(f"{refused} of {admitted + refused} draws above WELL_POSED_DISTANCE = {g.WELL_POSED_DISTANCE:.1e} (redrawn)")
    print(f"admitted draws: largest distance of a correct loop {worst:.2e} "
          f"(TRAJECTORY_TOLERANCE {g.TRAJECTORY_TOLERANCE} is {g.TRAJECTORY_TOLERANCE / max(worst, 1e-12):.0f} times it); "
          f"on the redrawn draws {worst_redrawn:.2e}")


if __name__ == "__main__":
    main()
