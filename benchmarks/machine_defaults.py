"""The library's defaults for this machine against float32 on every CPU, side by side.

``attnlab.fast.policy`` chooses the precision (bf16 where the CPU computes it natively) and the
torch thread count (the CPUs the process may really use, idle ones only) that
``attnlab.training.train`` runs with. This script times one training step of lesson 09's
capstone recipe (nanoGPT's CPU recipe: 4 layers, 4 heads, d_model 128, block 64, batch 12) under
those defaults against the same step in float32 with one torch thread per CPU (torch's own
default), alternating the two round by round in one process (``paired.compare``), so that the
load of the moment hits both alike. Ratio = fp32-all-CPUs time / defaults time (> 1: the defaults
are faster).

Usage:  python benchmarks/machine_defaults.py [--rounds 40] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from paired import compare, describe, machine  # noqa: E402


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--out", type=Path, default=None, help="write the result as JSON here")
    args = p.parse_args(argv)

    from bench_capstone import build_model, recipe, shakespeare_splits

    from attnlab.data import get_batch
    from attnlab.fast import machine_policy, to_fast
    from attnlab.training import make_optimizer, make_train_step

    policy = machine_policy("cpu")
    all_cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    tok, train_data, _ = shakespeare_splits()
    sides = {}
    for name, precision, threads in (("defaults", policy.precision, policy.threads), ("fp32_all_cpus", "fp32", all_cpus)):
        model = to_fast(build_model(tok.vocab_size, fused=True)).train()  # the same initial weights on both sides
        cfg = recipe(10, precision=precision, threads=threads)
        sides[name] = (make_train_step(model, make_optimizer(model, cfg), cfg, "cpu"), threads)
    gen = torch.Generator().manual_seed(0)
    batches = [get_batch(train_data, 64, 12, gen) for _ in range(args.rounds + args.warmup)]
    its = {name: iter(batches) for name in sides}

    def run(name):
        step, threads = sides[name]
        torch.set_num_threads(threads)
        step(*next(its[name]), 1e-3)

    result = compare(lambda: run("defaults"), lambda: run("fp32_all_cpus"), rounds=args.rounds, warmup=args.warmup)
    record = {"machine": machine(), "policy": policy.summary, "defaults": {"precision": policy.precision,
              "threads": policy.threads}, "baseline": {"precision": "fp32", "threads": all_cpus}, **result}
    print(policy.summary)
    print(describe(f"defaults ({policy.precision}, {policy.threads} thread(s)) vs fp32 with {all_cpus} threads",
                   result))
    if args.out:
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    return record


if __name__ == "__main__":
    main()
