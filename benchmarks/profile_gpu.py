"""Where does a GPU training step of the large recipe go? attnlab, the reference, and a hybrid.

Three loops on the recipe of ``gpu_large.py`` (6L/6H/384d, block 256, batch 64, bf16):
``attnlab`` (attnlab's model in attnlab's loop), ``reference`` (the nanoGPT-layout model in
nanoGPT's loop) and ``hybrid`` (attnlab's model in nanoGPT's loop: separates the model's cost
from the loop's). Each is timed eager and (``--compile``) compiled, in alternating rounds of
``--steps`` steps between two synchronisations; then the torch profiler's top CUDA kernels and
CPU operators of one eager step of each side, and the count of host-device synchronisations.

Usage:  python benchmarks/profile_gpu.py [--compile] [--steps 100] [--rounds 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gpu_large  # noqa: E402


def build(kind: str, s: dict, vocab: int, train_data, val_data, device: str, compile: bool):
    if kind.startswith("attnlab"):
        how = "reduce-overhead" if (compile and kind == "attnlab-ro") else compile
        return gpu_large.Attnlab(s, vocab, train_data, val_data, device, how, "bf16" if device != "cpu" else "fp32")
    side = gpu_large.Reference(s, vocab, train_data, val_data, device, compile, "bf16" if device != "cpu" else "fp32")
    if kind == "hybrid":
        from attnlab.nn import GPT, GPTConfig

        torch.manual_seed(1337)
        side.model = GPT(GPTConfig(vocab, s["block"], s["d"], s["n_heads"], s["n_layers"], dropout=s["dropout"],
                                   bias=False)).to(device).train()
        side.opt = gpu_large.nanogpt_optimizer(side.model, s["lr"], (0.9, 0.99), 0.1)
        side.runner = torch.compile(side.model) if compile else side.model
    return side


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--compile", action="store_true")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    from attnlab.training import default_device

    device = default_device()
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    s = dict(gpu_large.QUICK if args.quick else gpu_large.RECIPE)
    vocab, train_data, val_data = gpu_large.prepare(device)
    lines = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    for compile in ([False, True] if args.compile else [False]):
        sides = {k: build(k, s, vocab, train_data, val_data, device, compile)
                 for k in ("attnlab", "reference", "hybrid") + (("attnlab-ro",) if compile else ())}
        for side in sides.values():  # warm-up (and compilation)
            side.steps(3)
            sync()
        times = {k: [] for k in sides}
        issue = {k: [] for k in sides}
        for r in range(args.rounds):
            for k in (list(sides) if r % 2 == 0 else list(sides)[::-1]):
                sync()
                t0 = time.perf_counter()
                sides[k].steps(args.steps)
                t1 = time.perf_counter()
                sync()
                times[k].append(1000 * (time.perf_counter() - t0) / args.steps)
                issue[k].append(1000 * (t1 - t0) / args.steps)
        for k in sides:
            say(f"compile={compile} {k:9s}: {statistics.median(times[k]):.3f} ms/step (rounds {[round(t, 2) for t in times[k]]}); "
                f"host returns after {statistics.median(issue[k]):.3f} ms/step")
        if not compile:
            from torch.profiler import ProfilerActivity, profile

            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
            for k in ("attnlab", "reference"):
                sync()
                with profile(activities=acts) as prof:
                    sides[k].steps(10)
                    sync()
                ka = prof.key_averages()
                key = "self_device_time_total" if device.startswith("cuda") else "self_cpu_time_total"
                table = ka.table(sort_by=key, row_limit=30)
                syncs = {e.key: e.count for e in ka if "ynchronize" in e.key or "Memcpy" in e.key or "item" in e.key
                         or "local_scalar_dense" in e.key}
                say(f"--- profile of 10 eager steps, {k}: syncs/copies {syncs}")
                say(table)
                say(ka.table(sort_by="cpu_time_total", row_limit=20))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "profile_gpu.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
