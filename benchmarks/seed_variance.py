"""How much does the capstone recipe's final validation loss vary with the seed?

Trains nanoGPT's CPU recipe for shakespeare_char (the same model and schedule as
``bench_capstone.py``) once per seed and reports, for each run, the step-2000 validation loss
estimated as nanoGPT does (20 random batches) and on the whole validation split (every
non-overlapping 64-token window). Losses are deterministic per seed; wall time is not recorded.

    python benchmarks/seed_variance.py --seeds 1337 1 2 3 [--threads 1] [--out benchmarks/seed_variance.json]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_capstone import build_model, recipe, shakespeare_splits  # noqa: E402  (same model and schedule)


@torch.no_grad()
def full_split_loss(model, data: torch.Tensor, block_size: int = 64, chunk: int = 256) -> float:
    """Mean next-token cross-entropy over every non-overlapping window of the split."""
    model.eval()
    n = (len(data) - 1) // block_size
    x = data[: n * block_size].view(n, block_size)  # (n, L)
    y = data[1 : n * block_size + 1].view(n, block_size)  # (n, L): targets shifted by one
    total = 0.0
    for i in range(0, n, chunk):
        _, loss = model(x[i : i + chunk], y[i : i + chunk])
        total += loss.item() * len(x[i : i + chunk])
    return total / n


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[1337, 1, 2, 3])
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    from attnlab.training import train

    tok, train_data, val_data = shakespeare_splits()
    runs = []
    for seed in args.seeds:
        model = build_model(tok.vocab_size, fused=True, seed=seed)
        cfg = dataclasses.replace(recipe(args.iters, precision="fp32", threads=args.threads), seed=seed)
        result = train(model, train_data, val_data, cfg, progress=False)
        run = {"seed": seed, "val_20_batches": round(result.final_val_loss, 4),
               "val_full_split": round(full_split_loss(model, val_data), 4)}
        print(json.dumps(run), flush=True)
        runs.append(run)
    out = {"iters": args.iters, "runs": runs,
           "mean_val_20_batches": round(statistics.mean(r["val_20_batches"] for r in runs), 4),
           "mean_val_full_split": round(statistics.mean(r["val_full_split"] for r in runs), 4)}
    if args.out:
        args.out.write_text(json.dumps(out, indent=2) + "\n")
    return out


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
