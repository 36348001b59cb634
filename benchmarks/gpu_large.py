"""nanoGPT's shakespeare_char GPU recipe on one GPU: attnlab and the nanoGPT-layout reference side by side.

Both models train the whole recipe in one process, in *chunks* of ``eval_interval`` steps that
alternate (attnlab first in even chunks, the reference first in odd ones), each chunk timed
between two ``torch.cuda.synchronize()`` calls. Evaluations sit between chunks and are timed
on their own. Each chunk gives one paired ratio ``reference time / attnlab time`` (> 1: attnlab
faster); the first chunk holds compilation and warm-up and is reported apart, not in the median.

* **attnlab** trains as :func:`attnlab.training.train` does on a GPU: ``make_optimizer`` (fused
  AdamW), ``make_train_step`` (bf16 autocast, clipping, no read-back of the loss),
  ``attnlab.training._batch`` (pinned host memory, non-blocking copies), ``lr_at``,
  ``estimate_loss``, and ``torch.compile`` with ``--compile``.
* **reference**: ``NanoLayoutGPT`` (``nanogpt_order.py``: nanoGPT's layout, tied embedding,
  ``F.scaled_dot_product_attention(is_causal=True)``) in nanoGPT's ``train.py`` loop as documented:
  fused AdamW on CUDA with its parameter grouping, batches from ``torch.randint`` windows through
  pinned memory, the next batch fetched while the forward pass runs, bf16 autocast, the loss read
  back every ``log_interval`` = 10 steps, ``torch.compile`` with ``--compile``.

The recipe is ``config/train_shakespeare_char.py``: 6 layers, 6 heads, d_model 384, block 256,
batch 64, dropout 0.2, no biases, AdamW lr 1e-3 (100 warm-up steps, cosine to 1e-4 at 5,000),
betas (0.9, 0.99), weight decay 0.1, clip 1.0, evaluation every 250 steps on 200 batches of each
split. nanoGPT reports about 3 minutes on an A100 and a best validation loss of 1.4697.

Usage (GPU):  python benchmarks/gpu_large.py --compile --out benchmarks/gpu_large.json
Usage (test): python benchmarks/gpu_large.py --quick   # tiny sizes on the CPU, seconds

The JSON is rewritten after every chunk, so a run cut short still leaves what it measured.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from paired import _spread, machine  # noqa: E402
from nanogpt_order import NanoLayoutGPT, nanogpt_optimizer  # noqa: E402

RECIPE = dict(n_layers=6, n_heads=6, d=384, block=256, batch=64, dropout=0.2, steps=5000, eval_interval=250,
              eval_iters=200, lr=1e-3, min_lr=1e-4, warmup=100, log_interval=10)
QUICK = dict(RECIPE, n_layers=2, n_heads=2, d=32, block=16, batch=4, steps=12, eval_interval=4, eval_iters=2,
             warmup=2)
NANOGPT_REPORTED = {"best_val": 1.4697, "time": "about 3 minutes on one A100"}


def _nanogpt_lr(it: int, s: dict) -> float:
    """nanoGPT's ``get_lr``: linear warm-up, cosine decay to ``min_lr`` at ``steps``, then flat."""
    if it < s["warmup"]:
        return s["lr"] * (it + 1) / (s["warmup"] + 1)
    if it > s["steps"]:
        return s["min_lr"]
    ratio = (it - s["warmup"]) / (s["steps"] - s["warmup"])
    return s["min_lr"] + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (s["lr"] - s["min_lr"])


class Reference:
    """nanoGPT's training loop around the layout model (see the module docstring)."""

    def __init__(self, s: dict, vocab: int, train_data, val_data, device: str, compile: bool, precision: str):
        from attnlab.training import autocast_context

        torch.manual_seed(1337)
        self.model = NanoLayoutGPT(vocab, s["block"], s["n_layers"], s["n_heads"], s["d"], s["dropout"]).to(device)
        self.opt = nanogpt_optimizer(self.model, s["lr"], (0.9, 0.99), 0.1)
        self.runner = torch.compile(self.model) if compile else self.model
        self.ctx = lambda: autocast_context(precision, device)
        self.s, self.device, self.splits = s, device, {"train": train_data, "val": val_data}
        self.gen = torch.Generator().manual_seed(1337)
        self.it = 0
        self.next = self.batch("train")

    def batch(self, split: str):
        data, block = self.splits[split], self.s["block"]
        ix = torch.randint(len(data) - block, (self.s["batch"],), generator=self.gen)
        x = torch.stack([data[i:i + block] for i in ix])
        y = torch.stack([data[i + 1:i + 1 + block] for i in ix])
        if self.device.startswith("cuda"):
            return x.pin_memory().to(self.device, non_blocking=True), y.pin_memory().to(self.device, non_blocking=True)
        return x, y

    def steps(self, n: int) -> None:
        for _ in range(n):
            lr = _nanogpt_lr(self.it, self.s)
            for group in self.opt.param_groups:
                group["lr"] = lr
            x, y = self.next
            with self.ctx():
                _, loss = self.runner(x, y)
            self.next = self.batch("train")  # fetched while the GPU runs the forward pass
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.opt.step()
            self.opt.zero_grad(set_to_none=True)
            if self.it % self.s["log_interval"] == 0:
                loss.item()  # nanoGPT prints the loss every log_interval steps: a read-back
            self.it += 1

    @torch.no_grad()
    def evaluate(self) -> dict:
        self.model.eval()
        out = {}
        for split in ("train", "val"):
            losses = []
            for _ in range(self.s["eval_iters"]):
                with self.ctx():
                    losses.append(self.runner(*self.batch(split))[1].item())
            out[split] = sum(losses) / len(losses)
        self.model.train()
        return out


class Attnlab:
    """attnlab's GPT trained by the pieces :func:`attnlab.training.train` is made of."""

    def __init__(self, s: dict, vocab: int, train_data, val_data, device: str, compile: bool, precision: str):
        from attnlab.fast import FastGPT
        from attnlab.nn import GPTConfig
        from attnlab.training import TrainConfig, compile_model, make_optimizer, make_train_step

        self.cfg = TrainConfig(max_iters=s["steps"], batch_size=s["batch"], learning_rate=s["lr"], min_lr=s["min_lr"],
                               warmup_iters=s["warmup"], eval_interval=s["eval_interval"], eval_iters=s["eval_iters"],
                               device=device, precision=precision, compile=compile)
        torch.manual_seed(1337)
        self.model = FastGPT(GPTConfig(vocab, s["block"], s["d"], s["n_heads"], s["n_layers"], dropout=s["dropout"],
                                       bias=False)).to(device).train()
        opt = make_optimizer(self.model, self.cfg)
        self.runner = compile_model(self.model, compile)
        self.step_fn = make_train_step(self.runner, opt, self.cfg, device)
        self.s, self.device, self.splits = s, device, {"train": train_data, "val": val_data}
        self.batch_gen = torch.Generator().manual_seed(self.cfg.seed)
        self.eval_gen = torch.Generator().manual_seed(self.cfg.seed + 1)
        self.it = 0

    def steps(self, n: int) -> None:
        from attnlab.training import _batch, lr_at

        for _ in range(n):
            x, y = _batch(self.splits["train"], self.s["block"], self.s["batch"], self.batch_gen, self.device)
            self.step_fn(x, y, lr_at(self.it, self.cfg))
            self.it += 1

    def evaluate(self) -> dict:
        from attnlab.training import autocast_context, estimate_loss, resolve_precision

        with autocast_context(resolve_precision(self.cfg.precision, self.device), self.device):
            return estimate_loss(self.runner, self.splits, batch_size=self.s["batch"], eval_iters=self.s["eval_iters"],
                                 generator=self.eval_gen, device=self.device)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def prepare(device: str):
    """nanoGPT's process-wide settings for ``device`` and the data: ``(vocab_size, train, val)``.

    On CUDA, TF32 matrix products as nanoGPT's ``train.py`` sets them (process-wide, so both
    sides get them); Tiny Shakespeare as characters, first 90 % / last 10 %, 1-D int64 tensors.
    """
    from attnlab.data import CharTokenizer, load_shakespeare, train_val_split

    if device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    text = load_shakespeare()
    tok = CharTokenizer(text)
    return (tok.vocab_size, *train_val_split(torch.tensor(tok.encode(text), dtype=torch.long)))


def run(s: dict, device: str, compile: bool, precision: str, out: Path | None, attnlab_compile: str | None = None) -> dict:
    if compile:  # the compiler's one-off start-up (imports, worker pool) on neither side's clock
        torch.compile(lambda t: t * 2)(torch.ones(2, device=device))
    vocab, train_data, val_data = prepare(device)
    sides = {"attnlab": Attnlab(s, vocab, train_data, val_data, device,
                                (attnlab_compile or True) if compile else False, precision),
             "reference": Reference(s, vocab, train_data, val_data, device, compile, precision)}
    record = {"benchmark": "gpu_large", "recipe": {k: v for k, v in s.items()}, "device": device,
              "precision": precision, "compile": compile, "attnlab_compile": (attnlab_compile or True) if compile else False, "machine": machine(), "nanogpt_reported": NANOGPT_REPORTED,
              "sides": {name: {"chunk_s": [], "eval_s": [], "evals": []} for name in sides}}

    def evaluate(step: int) -> None:
        for name, side in sides.items():
            _sync(device)
            t0 = time.perf_counter()
            losses = side.evaluate()
            _sync(device)
            r = record["sides"][name]
            r["eval_s"].append(round(time.perf_counter() - t0, 3))
            r["evals"].append({"iter": step, "train": round(losses["train"], 4), "val": round(losses["val"], 4)})
            print(f"[{name}] step {step}: train {losses['train']:.4f} val {losses['val']:.4f}", flush=True)

    evaluate(0)
    done, chunk = 0, 0
    while done < s["steps"]:
        n = min(s["eval_interval"], s["steps"] - done)
        order = ("attnlab", "reference") if chunk % 2 == 0 else ("reference", "attnlab")
        for name in order:
            _sync(device)
            t0 = time.perf_counter()
            sides[name].steps(n)
            _sync(device)
            record["sides"][name]["chunk_s"].append(round(time.perf_counter() - t0, 4))
            record["sides"][name]["steps"] = sides[name].it
        done, chunk = done + n, chunk + 1
        evaluate(done)
        _summarise(record, s)
        if out is not None:
            out.write_text(json.dumps(record, indent=2) + "\n")
    return record


def _summarise(record: dict, s: dict) -> None:
    a, r = record["sides"]["attnlab"], record["sides"]["reference"]
    for side in (a, r):
        side["train_s"] = round(sum(side["chunk_s"]), 2)
        side["train_s_after_first_chunk"] = round(sum(side["chunk_s"][1:]), 2)
        side["total_s"] = round(side["train_s"] + sum(side["eval_s"]), 2)
        side["best_val"] = min(e["val"] for e in side["evals"])
        side["final_val"] = side["evals"][-1]["val"]
        later = side["chunk_s"][1:]
        side["ms_per_step_after_first_chunk"] = round(1000 * sum(later) / (s["eval_interval"] * len(later)), 3) if later else None
    ratios = [rr / max(aa, 1e-9) for aa, rr in zip(a["chunk_s"][1:], r["chunk_s"][1:], strict=False)]
    record["paired"] = {
        "ratio_chunks_after_first": _spread(ratios) if ratios else None,
        "ratio_first_chunk": round(r["chunk_s"][0] / max(a["chunk_s"][0], 1e-9), 4),
        "ratio_total_time": round(r["total_s"] / max(a["total_s"], 1e-9), 4),
    }


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes on the CPU (the test)")
    p.add_argument("--steps", type=int, default=None, help="optimizer steps (default: the recipe's 5000)")
    p.add_argument("--compile", action="store_true", help="torch.compile both models (nanoGPT's default)")
    p.add_argument("--attnlab-compile", default=None,
                   help="attnlab's TrainConfig.compile instead (e.g. reduce-overhead: CUDA graphs); needs --compile")
    p.add_argument("--precision", default="auto", choices=("auto", "bf16", "fp16", "fp32"),
                   help="auto = bf16 autocast on a GPU that has it, fp16 otherwise, fp32 on a CPU")
    p.add_argument("--eval-iters", type=int, default=None, help="batches per loss estimate (default: the recipe's 200)")
    p.add_argument("--device", default="auto")
    p.add_argument("--out", type=Path, default=None, help="JSON written after every chunk")
    args = p.parse_args(argv)
    from attnlab.training import default_device, resolve_precision

    s = dict(QUICK if args.quick else RECIPE)
    if args.steps:
        s["steps"] = args.steps
    if args.eval_iters:
        s["eval_iters"] = args.eval_iters
    device = default_device() if args.device == "auto" else args.device
    precision = resolve_precision(args.precision, device)
    record = run(s, device, args.compile, precision, args.out, args.attnlab_compile)
    a, r, pr = record["sides"]["attnlab"], record["sides"]["reference"], record["paired"]
    w = pr["ratio_chunks_after_first"]
    print(f"device {record['machine']['gpu'] or 'cpu'}, torch {record['machine']['torch']}, {precision}, "
          f"compile {args.compile}")
    for name, side in (("attnlab", a), ("reference", r)):
        print(f"{name:9s}: train {side['train_s']:.1f} s ({side['ms_per_step_after_first_chunk']} ms/step after "
              f"the first chunk), evals {sum(side['eval_s']):.1f} s, best val {side['best_val']:.4f}, "
              f"final val {side['final_val']:.4f}")
    if w:
        print(f"paired ratio per chunk (reference / attnlab, first chunk excluded): {w['median']:.3f} "
              f"[{w['q1']:.3f}-{w['q3']:.3f}] ({w['min']:.3f}-{w['max']:.3f}), n={w['n']}; "
              f"whole run {pr['ratio_total_time']:.3f}")
    return record


if __name__ == "__main__":
    main()
