"""Benchmark: attnlab's GPT on Tiny Shakespeare with nanoGPT's CPU recipe for shakespeare_char.

Recipe (nanoGPT README, "I only have a macbook" / CPU run, on top of
config/train_shakespeare_char.py and train.py's defaults):
n_layer 4, n_head 4, n_embd 128, block_size 64, batch_size 12, dropout 0.0, bias False,
AdamW lr 1e-3, betas (0.9, 0.99), weight decay 0.1, warm-up 100 steps, cosine decay to
min_lr 1e-4 over lr_decay_iters = max_iters = 2000, grad clip 1.0, eval every 250 steps
on eval_iters = 20 batches per split. This is lesson 09's default capstone run. Precision and
threads are the library's defaults for the machine (``attnlab.fast.policy``: bf16 where the CPU
computes it natively, threads from the CPU affinity, cgroup quota, hub limit and idle CPUs), as a
learner gets them; ``--threads N`` / ``--precision fp32`` pin them instead.

Measures and writes to ``benchmarks/results.json`` (and a table in ``RESULTS.md`` when
``--write-md``):
* the main run (fused attention path): wall time incl. evaluations, median ms/iter, it/s,
  peak RSS, final train/val loss;
* the reference model (``attnlab.nn.GPT`` with the explicit attention, as the lessons write it)
  stepped directly: median ms/iter over a shorter run;
* KV-cache generation (``attnlab.fast``, what generation uses): tokens/s with and without the
  cache for 256 new tokens;
* the attention cost curve of lesson 10 (time and allocated bytes vs L, both paths).

A loaded machine, reproducibly (``--load N``): N CPU-bound neighbour processes (``while True``:
what a class's other users running cells are) run for the main run's whole duration, on top of
whatever else the machine runs; the 1-minute load average is sampled every 5 s while the run
lasts and recorded (``main_run.loadavg_during``: median, min, max), with the neighbours' count,
the policy's choice and every thread change of the run.

Usage:  python benchmarks/bench_capstone.py                 # full: the lesson's run, then the rest
        python benchmarks/bench_capstone.py --iters 200     # quick check of the script
        python benchmarks/bench_capstone.py --main-only --load 3 --out benchmarks/capstone_loaded_2core.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def shakespeare_splits():
    """``(tokenizer, train_data, val_data)``: Tiny Shakespeare as characters, first 90 % / last 10 %."""
    from attnlab.data import CharTokenizer, load_shakespeare, train_val_split

    text = load_shakespeare()
    tok = CharTokenizer(text)
    data = torch.tensor(tok.encode(text), dtype=torch.long)  # (N,)
    return (tok, *train_val_split(data, 0.9))


def build_model(vocab_size: int, fused: bool, seed: int = 1337, block_size: int = 64):
    from attnlab.nn import GPT, GPTConfig

    torch.manual_seed(seed)
    cfg = GPTConfig(vocab_size=vocab_size, block_size=block_size, d_model=128, n_heads=4, n_layers=4,
                    dropout=0.0, bias=False, fused_attention=fused)
    return GPT(cfg)


def recipe(iters: int, eval_interval: int = 250, **settings):
    from attnlab.training import TrainConfig

    return TrainConfig(max_iters=iters, batch_size=12, learning_rate=1e-3, min_lr=1e-4, warmup_iters=100,
                       lr_decay_iters=iters, weight_decay=0.1, beta1=0.9, beta2=0.99, grad_clip=1.0,
                       eval_interval=eval_interval, eval_iters=20, seed=1337, device="cpu", **settings)


def recipe_record(iters: int) -> dict:
    """The recipe's settings, as recorded with every result."""
    return {"n_layer": 4, "n_head": 4, "n_embd": 128, "block_size": 64, "batch_size": 12, "max_iters": iters,
            "dropout": 0.0, "bias": False, "lr": 1e-3, "min_lr": 1e-4, "warmup": 100, "betas": [0.9, 0.99],
            "weight_decay": 0.1, "grad_clip": 1.0, "eval_interval": 250, "eval_iters": 20}


def reference_step_ms(model, train_data, cfg, iters: int) -> float:
    """Median ms of ``iters`` optimizer steps of ``model`` itself (no fast twin), float32."""
    import dataclasses

    from attnlab.data import get_batch
    from attnlab.training import make_optimizer, make_train_step

    cfg = dataclasses.replace(cfg, precision="fp32")
    step = make_train_step(model.train(), make_optimizer(model, cfg), cfg, "cpu")
    gen = torch.Generator().manual_seed(0)
    times = []
    for _ in range(iters):
        x, y = get_batch(train_data, model.config.block_size, cfg.batch_size, gen)
        t0 = time.perf_counter()
        step(x, y, cfg.learning_rate)
        times.append(1000 * (time.perf_counter() - t0))
    return statistics.median(times)


@torch.no_grad()
def generation_speed(model, new_tokens: int, use_cache: bool, repeats: int = 3) -> float:
    """Median tokens/s of ``model.generate`` from a one-token prompt."""
    model.eval()
    rates = []
    for r in range(repeats):
        prompt = torch.zeros(1, 1, dtype=torch.long)  # (1, 1)
        gen = torch.Generator().manual_seed(r)
        t0 = time.perf_counter()
        model.generate(prompt, new_tokens, temperature=1.0, top_k=None, use_cache=use_cache, generator=gen)
        rates.append(new_tokens / (time.perf_counter() - t0))
    return statistics.median(rates)


# A neighbour: a busy loop that also ends when its parent (this benchmark) is gone, however it ended.
NEIGHBOUR = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    pass\n"


@contextmanager
def neighbours(n: int):
    """Run ``n`` CPU-bound processes (a busy loop each) for the duration of the ``with`` block.

    Each starts in a session of its own, as another user's kernel or job is: under Linux's
    autogroup scheduling (``/proc/sys/kernel/sched_autogroup_enabled``) the CPU is shared between
    sessions first, so neighbours in the benchmark's own session would only split the benchmark's
    share. They are stopped by their own ids when the block ends (and stop themselves if this
    process dies first). ``n = 0`` starts nothing."""
    procs = [subprocess.Popen([sys.executable, "-c", NEIGHBOUR], start_new_session=True) for _ in range(n)]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


class LoadSampler:
    """Samples the 1-minute load average every ``every_s`` seconds in a daemon thread."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s, self.samples = every_s, [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> "LoadSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    def summary(self) -> dict:
        return {"median": round(statistics.median(self.samples), 2), "min": round(min(self.samples), 2),
                "max": round(max(self.samples), 2), "samples": len(self.samples), "every_s": self.every_s}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iters", type=int, default=2000, help="training steps of the main run (recipe: 2000)")
    p.add_argument("--explicit-iters", type=int, default=200, help="steps of the reference model timed")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: the machine's policy)")
    p.add_argument("--precision", choices=("auto", "fp32", "bf16"), default="auto")
    p.add_argument("--new-tokens", type=int, default=256)
    p.add_argument("--cost-lengths", type=str, default="64,128,256,512,1024,2048")
    p.add_argument("--out", type=Path, default=HERE / "results.json")
    p.add_argument("--write-md", action="store_true", help="also rewrite the table in RESULTS.md")
    p.add_argument("--note", type=str, default="", help="conditions, e.g. 'shared machine, noisy'")
    p.add_argument("--save-checkpoint", type=Path, default=None, help="save the trained model here")
    p.add_argument("--md-only", action="store_true", help="only rewrite RESULTS.md from --out's JSON")
    p.add_argument("--load", type=int, default=0,
                   help="start this many CPU-bound neighbour processes for the main run (a loaded machine)")
    p.add_argument("--main-only", action="store_true",
                   help="only the main run (no reference model, generation or cost curve); implies no --write-md")
    args = p.parse_args(argv)
    if args.md_only:
        results = json.loads(args.out.read_text())
        write_markdown(results, HERE / "RESULTS.md")
        return results

    from attnlab.fast import machine_policy, to_fast
    from attnlab.nn import count_parameters
    from attnlab.training import train
    from attnlab.viz_model import attention_cost_curve, fit_loglog_slope

    tok, train_data, val_data = shakespeare_splits()
    model = build_model(tok.vocab_size, fused=True)
    with neighbours(args.load), LoadSampler() as load:
        time.sleep(5 if args.load else 0)  # let the neighbours' load show before the policy looks
        load_before = os.getloadavg()
        policy = machine_policy("cpu", args.precision, args.threads)
        threads = policy.threads
        print(f"[1/4] main run: {args.iters} iters, {args.load} neighbour process(es); {policy.summary} "
              f"Load average {load_before[0]:.1f}", flush=True)
        cfg = recipe(args.iters, precision=args.precision, threads=args.threads)  # train() applies the policy
        t0, cpu0 = time.perf_counter(), time.process_time()
        report = lambda h: print(f"  step {h['iter'][-1]:>5}: train {h['train'][-1]:.4f}, val {h['val'][-1]:.4f}, "  # noqa: E731
                                 f"{h['elapsed_s'][-1]:.0f} s, load {os.getloadavg()[0]:.1f}", flush=True)
        main_run = train(model, train_data, val_data, cfg, callback=report, progress=sys.stderr.isatty())
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    load_after = os.getloadavg()
    rss = peak_rss_mb()
    if args.save_checkpoint:
        from attnlab.training import save_checkpoint

        save_checkpoint(args.save_checkpoint, model, main_run.optimizer, main_run.iters_done,
                        extra={"chars": "".join(tok.chars), "val_loss": main_run.final_val_loss})
    main_record = {
        "wall_s": round(wall, 1), "iters": main_run.iters_done,
        "median_ms_per_iter": round(main_run.median_ms_per_iter, 2),
        "iters_per_s": round(1000 / main_run.median_ms_per_iter, 2),
        "iters_per_s_overall": round(main_run.iters_done / wall, 2),
        "cpu_s": round(cpu, 1), "cpu_share": round(cpu / wall, 3),  # CPU time this process got / wall time
        "peak_rss_mb": round(rss, 1),
        "final_train_loss": round(main_run.final_train_loss, 4),
        "final_val_loss": round(main_run.final_val_loss, 4),
        "neighbour_processes": args.load, "loadavg_during": load.summary(),
        "settings": main_run.settings, "thread_changes": getattr(main_run, "thread_changes", None),
        "history": {k: [round(v, 4) for v in vals] for k, vals in main_run.history.items()},
    }
    machine_record = {"platform": platform.platform(), "python": platform.python_version(),
                      "torch": torch.__version__, "threads": threads, "threads_pinned": bool(args.threads),
                      "precision": policy.precision, "policy": policy.summary, "cpu_count": os.cpu_count(),
                      "loadavg_before": [round(x, 2) for x in load_before],
                      "loadavg_after_main_run": [round(x, 2) for x in load_after]}
    date = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    mr = main_record
    print(f"main: {mr['iters']} it in {mr['wall_s']} s ({mr['iters_per_s_overall']} it/s overall, median "
          f"{mr['median_ms_per_iter']} ms/it; {mr['cpu_s']} CPU-s, {mr['cpu_share']:.0%} of a CPU), train {mr['final_train_loss']}, val {mr['final_val_loss']}; "
          f"load average during the run {mr['loadavg_during']}; {main_run.settings}", flush=True)
    if args.main_only:
        results = {"date_utc": date, "conditions": args.note, "machine": machine_record,
                   "recipe": recipe_record(args.iters), "parameters": count_parameters(model), "main_run": main_record}
        args.out.write_text(json.dumps(results, indent=2) + "\n")
        return results

    print(f"[2/4] the reference model, explicit attention, stepped directly: {args.explicit_iters} iters", flush=True)
    torch.set_num_threads(threads)
    explicit_ms = reference_step_ms(build_model(tok.vocab_size, fused=False), train_data, cfg, args.explicit_iters)

    print(f"[3/4] generation, {args.new_tokens} new tokens, with and without KV cache", flush=True)
    # The recipe's block_size is 64: after 64 tokens the window slides and GPT.generate must
    # rebuild the cache each step (learned positions cannot shift), so the cache only helps
    # for the first 63 tokens. A same-width model with a context that holds all tokens shows
    # the cache's real effect (speed does not depend on the weights being trained).
    fast = to_fast(model)  # what generation uses
    with_cache = generation_speed(fast, args.new_tokens, use_cache=True)
    without_cache = generation_speed(fast, args.new_tokens, use_cache=False)
    long_model = to_fast(build_model(tok.vocab_size, fused=True, block_size=args.new_tokens + 1))
    long_with = generation_speed(long_model, args.new_tokens, use_cache=True)
    long_without = generation_speed(long_model, args.new_tokens, use_cache=False)

    print("[4/4] attention cost curve", flush=True)
    lengths = [int(x) for x in args.cost_lengths.split(",")]
    curve = attention_cost_curve(lengths, B=1, H=4, d_k=32, repeats=5)
    fit_from = 2 if len(lengths) > 3 else 0

    results = {
        "date_utc": date,
        "conditions": args.note,
        "machine": machine_record,
        "recipe": recipe_record(args.iters),
        "parameters": count_parameters(model),
        "main_run": main_record,
        "explicit_path": {
            "iters": args.explicit_iters, "precision": "fp32",
            "median_ms_per_iter": round(explicit_ms, 2),
            "iters_per_s": round(1000 / explicit_ms, 2),
        },
        "generation": {"new_tokens": args.new_tokens, "tokens_per_s_with_cache": round(with_cache, 1),
                       "tokens_per_s_without_cache": round(without_cache, 1),
                       "speedup": round(with_cache / without_cache, 2),
                       "long_context_block_size": args.new_tokens + 1,
                       "long_context_tokens_per_s_with_cache": round(long_with, 1),
                       "long_context_tokens_per_s_without_cache": round(long_without, 1),
                       "long_context_speedup": round(long_with / long_without, 2)},
        "attention_cost": {**curve, "B": 1, "H": 4, "d_k": 32, "fit_from_index": fit_from,
                           "slope_explicit_time": round(fit_loglog_slope(lengths[fit_from:], curve["explicit_ms"][fit_from:]), 2),
                           "slope_fused_time": round(fit_loglog_slope(lengths[fit_from:], curve["fused_ms"][fit_from:]), 2),
                           "slope_explicit_bytes": round(fit_loglog_slope(lengths[fit_from:], curve["explicit_bytes"][fit_from:]), 2),
                           "slope_fused_bytes": round(fit_loglog_slope(lengths[fit_from:], curve["fused_bytes"][fit_from:]), 2)},
        "targets": {"val_loss_max": 1.89, "nanogpt_readme_val": "about 1.88", "nanogpt_recipe_here_seed_1337": 1.8857,
                    "speed": "compared only side by side: benchmarks/run_paired.py (key 'paired')"},
    }
    mr = results["main_run"]
    results["targets"]["met_val_loss"] = mr["final_val_loss"] <= 1.89 if args.iters >= 2000 else None
    if args.out.is_file():  # keep run_paired.py's side-by-side results
        previous = json.loads(args.out.read_text())
        if "paired" in previous:
            results["paired"] = previous["paired"]
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    summary = (f"main: {mr['iters']} it in {mr['wall_s']} s, {mr['median_ms_per_iter']} ms/it "
               f"({mr['iters_per_s']} it/s), peak RSS {mr['peak_rss_mb']} MB, train {mr['final_train_loss']}, "
               f"val {mr['final_val_loss']}\nexplicit path: {results['explicit_path']['median_ms_per_iter']} ms/it "
               f"({results['explicit_path']['iters_per_s']} it/s)\nKV cache (block 64): {with_cache:.0f} vs "
               f"{without_cache:.0f} tok/s ({results['generation']['speedup']}x); (block {args.new_tokens + 1}): "
               f"{long_with:.0f} vs {long_without:.0f} tok/s ({results['generation']['long_context_speedup']}x)\nattention cost slopes (time): explicit "
               f"{results['attention_cost']['slope_explicit_time']}, fused {results['attention_cost']['slope_fused_time']}")
    print(summary)
    if args.write_md:
        write_markdown(results, HERE / "RESULTS.md")
    return results


NOTES_MARKER = "<!-- hand-written notes below: kept when the tables above are regenerated -->"


def write_markdown(r: dict, path: Path) -> None:
    """Write the tables of ``r`` to ``path``, keeping any hand-written notes after NOTES_MARKER."""
    notes = NOTES_MARKER + "\n"
    if path.exists() and NOTES_MARKER in path.read_text():
        notes = path.read_text()[path.read_text().index(NOTES_MARKER):]
    mr, ex, g, c = r["main_run"], r["explicit_path"], r["generation"], r["attention_cost"]
    rows = "\n".join(
        f"| {L} | {e:.3f} | {f:.3f} | {eb / 2**20:.2f} | {fb / 2**20:.2f} | {sb / 2**20:.2f} |"
        for L, e, f, eb, fb, sb in zip(c["L"], c["explicit_ms"], c["fused_ms"], c["explicit_bytes"],
                                       c["fused_bytes"], c["score_bytes"], strict=True))
    path.write_text(f"""# Capstone benchmark results

Produced by `python benchmarks/bench_capstone.py --write-md` (raw numbers: `results.json`).

**Conditions:** {r['conditions'] or 'not recorded'}
Run at {r['date_utc']}, torch {r['machine']['torch']}, {r['machine']['threads']} threads
(`torch.set_num_threads`), {r['machine']['cpu_count']} CPUs visible, {r['machine']['platform']}.
Precision and threads: {r['machine'].get('policy', 'float32 (recorded before the machine policy)')}

## Training: nanoGPT's CPU recipe for shakespeare_char

4 layers, 4 heads, d_model 128, block 64, batch 12, dropout 0, no biases, AdamW 1e-3
(betas 0.9/0.99, wd 0.1), 100 warm-up steps, cosine to 1e-4, clip 1.0, eval every 250
steps on 20 batches. {r['parameters']:,} parameters.

Absolute times below hold only for the machine and load named under **Conditions**; for a
comparison with nanoGPT use the paired ratios (`run_paired.py`, section "Side by side" below).

| metric | attnlab (this machine, this load) | nanoGPT's own figure |
|---|---|---|
| iterations | {mr['iters']} | 2000 |
| wall time (incl. evals) | {mr['wall_s']} s | – (not measured here) |
| median ms / iter (`train`: attnlab.fast) | {mr['median_ms_per_iter']} | – |
| iterations / s (`train`: attnlab.fast) | {mr['iters_per_s']} | – |
| median ms / iter (attnlab.nn, explicit attention, fp32, {ex['iters']} iters) | {ex['median_ms_per_iter']} | - |
| iterations / s (attnlab.nn, explicit attention) | {ex['iters_per_s']} | - |
| peak RSS | {mr['peak_rss_mb']} MB | – (paired RSS: see below) |
| final train loss | {mr['final_train_loss']} | - |
| final val loss | {mr['final_val_loss']} | about 1.88 (nanoGPT's README); 1.8857 (its recipe run here, seed 1337, its RNG order) |

## Generation with and without the KV cache ({g['new_tokens']} new tokens, batch 1, one-token prompt)

The trained recipe model has block_size 64: past 64 tokens the window slides and `GPT.generate`
rebuilds the cache every step (learned positions cannot shift), so the cache helps only for the
first 63 tokens. The second column uses an untrained model of the same width whose context
({g['long_context_block_size']}) holds every generated token; speed does not depend on the weights.

| | recipe model (block 64) | block {g['long_context_block_size']} |
|---|---|---|
| tokens / s with cache | {g['tokens_per_s_with_cache']} | {g['long_context_tokens_per_s_with_cache']} |
| tokens / s without cache | {g['tokens_per_s_without_cache']} | {g['long_context_tokens_per_s_without_cache']} |
| speed-up | {g['speedup']}x | {g['long_context_speedup']}x |

## Attention cost vs sequence length (B=1, H=4, d_k=32, causal, float32, one call)

Fitted log-log slopes (from L = {c['L'][c['fit_from_index']]}): time explicit {c['slope_explicit_time']},
fused {c['slope_fused_time']}; bytes allocated explicit {c['slope_explicit_bytes']}, fused {c['slope_fused_bytes']}.

| L | explicit ms | fused ms | explicit MiB allocated | fused MiB allocated | one L×L score tensor MiB |
|---|---|---|---|---|---|
{rows}

{notes}""")


if __name__ == "__main__":
    main()
