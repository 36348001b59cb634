"""attnlab against references, measured side by side (``paired.py``): training and the KV cache.

One command prints the paired ratios (reference time / attnlab time, > 1 = attnlab faster) and
writes them to ``benchmarks/results.json`` (key ``"paired"``) and to ``RESULTS.md`` (between the
``paired`` markers):

* ``train_cpu_recipe``: one optimizer step of nanoGPT's CPU recipe for shakespeare_char (4 layers,
  4 heads, d_model 128, block 64, batch 12, no dropout, no biases): ``attnlab.training``'s step
  (:func:`attnlab.training.make_train_step` on ``attnlab.fast.FastGPT``, what ``train`` steps) against the
  nanoGPT-layout model of ``nanogpt_order.py`` with nanoGPT's optimiser grouping and step order.
  Both see the same batches of Tiny Shakespeare.
* ``train_cpu_recipe_bf16``: the same with attnlab's ``precision="bf16"`` (autocast) option.
* ``train_large_recipe``: nanoGPT's shakespeare_char GPU recipe shape (6 layers, 6 heads,
  d_model 384, block 256, dropout 0.2) for a few steps at a small batch (``--large-batch``).
* ``train_large_recipe_bf16``: the same with attnlab's ``precision="bf16"``. (The whole large
  recipe on a GPU is ``gpu_large.py``.)
* ``kv_cache``: greedy generation of ``--new-tokens`` tokens from a one-token prompt with
  ``FastGPT.generate`` (cache on) against a minimal pre-allocated KV-cache decoder written here on
  the same weights (tokens checked identical), and ``FastGPT.generate`` with against without cache.
* ``memory``: peak RSS of a short capstone run (attnlab's ``train``) and of the reference's
  training loop, each in a fresh subprocess, alternating.

Usage:  python benchmarks/run_paired.py                   # full (about 10-20 min on 2 loaded cores)
        python benchmarks/run_paired.py --quick --out /tmp/p.json --md /tmp/p.md   # tiny sizes, seconds
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from paired import compare, describe, machine, spread_text  # noqa: E402
from nanogpt_order import NanoLayoutGPT, nanogpt_optimizer  # noqa: E402

MD_START, MD_END = "<!-- paired:start -->", "<!-- paired:end -->"
FULL = {"cpu": dict(n_layers=4, n_heads=4, d=128, block=64, batch=12, dropout=0.0, rounds=40, warmup=3),
        "large": dict(n_layers=6, n_heads=6, d=384, block=256, batch=8, dropout=0.2, rounds=8, warmup=1),
        "kv": dict(n_layers=4, n_heads=4, d=128, new_tokens=1024, rounds=5, nocache_rounds=2)}
QUICK = {"cpu": dict(n_layers=2, n_heads=2, d=32, block=16, batch=2, dropout=0.0, rounds=3, warmup=1),
         "large": dict(n_layers=2, n_heads=2, d=48, block=32, batch=2, dropout=0.2, rounds=3, warmup=1),
         "kv": dict(n_layers=2, n_heads=2, d=32, new_tokens=32, rounds=3, nocache_rounds=2)}


def _batches(data: torch.Tensor, block: int, batch: int, n: int):
    from attnlab.data import get_batch

    gen = torch.Generator().manual_seed(0)
    return [get_batch(data, block, batch, gen) for _ in range(n)]  # n x ((B, L), (B, L))


def training_pair(shape: dict, data: torch.Tensor, vocab: int, precision: str = "fp32") -> dict:
    """Paired step times: attnlab's training step vs the nanoGPT-layout reference (same batches)."""
    from attnlab.fast import FastGPT
    from attnlab.nn import GPTConfig
    from attnlab.training import TrainConfig, make_optimizer, make_train_step

    s = shape
    cfg = TrainConfig(learning_rate=1e-3, min_lr=1e-4, weight_decay=0.1, beta1=0.9, beta2=0.99, grad_clip=1.0,
                      batch_size=s["batch"], device="cpu", precision=precision)
    torch.manual_seed(1337)
    ours = FastGPT(GPTConfig(vocab, s["block"], s["d"], s["n_heads"], s["n_layers"], dropout=s["dropout"], bias=False))
    ours.train()
    ours_step = make_train_step(ours, make_optimizer(ours, cfg), cfg)
    torch.manual_seed(1337)
    ref = NanoLayoutGPT(vocab, s["block"], s["n_layers"], s["n_heads"], s["d"], dropout=s["dropout"]).train()
    ref_opt = nanogpt_optimizer(ref, 1e-3, (0.9, 0.99), 0.1)

    def ref_step(x, y):  # nanoGPT's order: forward, backward, clip, step, zero_grad
        _, loss = ref(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ref.parameters(), 1.0)
        ref_opt.step()
        ref_opt.zero_grad(set_to_none=True)

    batches = _batches(data, s["block"], s["batch"], s["warmup"] + s["rounds"])
    it = {"ours": iter(batches), "ref": iter(batches)}  # both sides see the same batch sequence
    result = compare(lambda: ours_step(*next(it["ours"]), 1e-3), lambda: ref_step(*next(it["ref"])),
                     rounds=s["rounds"], warmup=s["warmup"])
    return {"shape": s, "precision": precision, **result}


@torch.no_grad()
def reference_generate(model, idx: torch.Tensor, new_tokens: int) -> torch.Tensor:
    """Greedy decoding of attnlab's (pre-LN, learned-position) GPT with a minimal pre-allocated KV cache.

    Written for the benchmark: one ``(B, H, T_total, d_k)`` buffer per layer for keys and for
    values, filled in place; no argument checks. ``idx: (B, T)`` -> ``(B, T + new_tokens)``.
    """
    c = model.config
    B, T = idx.shape
    H, d = c.n_heads, c.d_model
    total = T + new_tokens
    layers = []
    for blk in model.blocks:
        a = blk.self_attn
        wqkv = torch.cat([a.w_q.weight, a.w_k.weight, a.w_v.weight])  # (3d, d)
        bqkv = None if a.w_q.bias is None else torch.cat([a.w_q.bias, a.w_k.bias, a.w_v.bias])
        layers.append((blk.norm1, wqkv, bqkv, a.w_o, blk.norm3, blk.ffn.w_1, blk.ffn.w_2,
                       torch.empty(B, H, total, d // H), torch.empty(B, H, total, d // H)))
    wte, wpe = model.tok_emb.weight, model.pos_emb.weight
    out = torch.empty(B, total, dtype=torch.long)
    out[:, :T] = idx
    pos, inp = 0, idx
    for _ in range(new_tokens):
        L = inp.shape[1]
        x = wte[inp] + wpe[pos:pos + L]  # (B, L, d)
        for ln1, wqkv, bqkv, wo, ln2, w1, w2, kbuf, vbuf in layers:
            q, k, v = F.linear(ln1(x), wqkv, bqkv).view(B, L, 3, H, d // H).permute(2, 0, 3, 1, 4)  # 3 x (B, H, L, dk)
            kbuf[:, :, pos:pos + L] = k
            vbuf[:, :, pos:pos + L] = v
            y = F.scaled_dot_product_attention(q, kbuf[:, :, :pos + L], vbuf[:, :, :pos + L], is_causal=L > 1)
            x = x + wo(y.transpose(1, 2).reshape(B, L, d))
            x = x + w2(F.gelu(w1(ln2(x))))
        nxt = F.linear(model.norm_f(x[:, -1]), wte).argmax(-1)  # (B,)
        pos += L
        out[:, pos] = nxt
        inp = out[:, pos:pos + 1]
    return out


def kv_pair(shape: dict, vocab: int) -> dict:
    """FastGPT.generate with its cache vs the minimal pre-allocated reference, and with vs without cache."""
    from attnlab.fast import to_fast
    from attnlab.nn import GPT, GPTConfig

    s = shape
    n = s["new_tokens"]
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab, n + 1, s["d"], s["n_heads"], s["n_layers"], bias=False)).eval()
    prompt = torch.zeros(1, 1, dtype=torch.long)
    fast = to_fast(model)  # what generation uses: the same weights, W_Q, W_K, W_V packed
    ours = fast.generate(prompt, n, greedy=True)
    ref = reference_generate(model, prompt, n)
    identical = bool(torch.equal(ours, ref))
    vs_ref = compare(lambda: fast.generate(prompt, n, greedy=True), lambda: reference_generate(model, prompt, n),
                     rounds=s["rounds"], warmup=1)
    vs_nocache = compare(lambda: fast.generate(prompt, n, greedy=True),
                         lambda: fast.generate(prompt, n, greedy=True, use_cache=False),
                         rounds=s["nocache_rounds"], warmup=0)
    return {"shape": s, "tokens_identical_to_reference": identical, "vs_reference": vs_ref,
            "vs_no_cache": vs_nocache}


def memory_child(kind: str, iters: int, threads: int) -> dict:
    """One short capstone run (``attnlab``: ``attnlab.training.train``; ``reference``: the layout
    model with nanoGPT's optimiser and loop) in this process; returns its peak RSS."""
    torch.set_num_threads(threads)
    from bench_capstone import build_model, recipe, shakespeare_splits

    tok, train_data, val_data = shakespeare_splits()
    cfg = recipe(iters, precision="fp32", threads=threads)  # like for like with the fp32 reference, threads as pinned
    if kind == "attnlab":
        from attnlab.training import train

        train(build_model(tok.vocab_size, fused=True), train_data, val_data, cfg, progress=False)
    else:
        from attnlab.data import get_batch

        torch.manual_seed(1337)
        model = NanoLayoutGPT(tok.vocab_size, 64, 4, 4, 128).train()
        opt = nanogpt_optimizer(model, cfg.learning_rate, (cfg.beta1, cfg.beta2), cfg.weight_decay)
        gen = torch.Generator().manual_seed(1337)
        for step in range(iters + 1):
            if step % cfg.eval_interval == 0 or step == iters:
                model.eval()
                with torch.no_grad():
                    for data in (train_data, val_data):
                        [model(*get_batch(data, 64, cfg.batch_size, gen))[1].item() for _ in range(cfg.eval_iters)]
                model.train()
            _, loss = model(*get_batch(train_data, 64, cfg.batch_size, gen))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            opt.step()
            opt.zero_grad(set_to_none=True)
    return {"kind": kind, "peak_rss_mb": peak_rss_mb()}


def peak_rss_mb() -> float:
    """This process's peak resident memory, MB: ``VmHWM`` of /proc/self/status (Linux).

    Not ``getrusage``'s ``ru_maxrss``: Linux carries that across ``exec``, so a child started by
    a big parent would report the parent's peak.
    """
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)  # kB -> MB
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def memory_pairs(pairs: int, iters: int, threads: int) -> dict:
    """Peak RSS of each side in fresh subprocesses, alternating attnlab / reference ``pairs`` times."""
    rss = {"attnlab": [], "reference": []}
    for i in range(pairs):
        for kind in (("attnlab", "reference") if i % 2 == 0 else ("reference", "attnlab")):
            cmd = [sys.executable, str(Path(__file__).resolve()), "--memory-child", kind, "--memory-iters", str(iters),
                   "--threads", str(threads)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            rss[kind].append(json.loads(done.stdout.strip().splitlines()[-1])["peak_rss_mb"])
    import statistics

    diffs = [round(a - r, 1) for a, r in zip(rss["attnlab"], rss["reference"], strict=True)]  # per pair, MB
    return {"iters": iters, "pairs": pairs, "peak_rss_mb": rss,
            "max_attnlab_mb": max(rss["attnlab"]), "max_reference_mb": max(rss["reference"]),
            "median_attnlab_mb": statistics.median(rss["attnlab"]),
            "median_reference_mb": statistics.median(rss["reference"]),
            "attnlab_minus_reference_per_pair_mb": diffs,
            "pairs_attnlab_not_higher": sum(d <= 0 for d in diffs),
            "attnlab_not_higher": max(rss["attnlab"]) <= min(rss["reference"])}  # every attnlab run <= every reference run


def markdown(r: dict) -> str:
    """The paired section of RESULTS.md for results ``r``."""
    m = r["machine"]
    lines = [MD_START, "## Side by side with the references (paired ratios)", "",
             f"Produced by `python benchmarks/run_paired.py{' --quick' if r['quick'] else ''}`, last run started "
             f"{m['date_utc']} (each row names when its run started): "
             f"{m['nproc']} CPUs, {m['torch_threads']} torch thread(s), load average {m['loadavg_1_5_15']} at the "
             f"start, torch {m['torch']}, avx512_bf16 {m['cpu_avx512_bf16']}, GPU: {m['gpu'] or 'none'}. "
             f"{r.get('note', '')}", "",
             "Ratio = reference time / attnlab time per round (> 1: attnlab faster); median [quartiles] (min-max) "
             "of the rounds (fewer than 4 rounds: the rounds themselves), on the wall clock and on this process's CPU time (less disturbed by other load). "
             "The absolute medians hold only for the machine and load stated with them.", "",
             "| comparison | rounds | wall ratio | CPU-time ratio | attnlab / reference median ms (wall) "
             "| load 1-min before→after | run started (UTC), threads |",
             "|---|---|---|---|---|---|---|"]

    def row(name, x, when):
        w, c = x["ratio_wall"], x["ratio_cpu"]
        return (f"| {name} | {w['n']} | {spread_text(w, bold=True)} | {spread_text(c, bold=True)} "
                f"| {x['candidate_ms']['wall']:.1f} / {x['reference_ms']['wall']:.1f} "
                f"| {x['load_before'][0]}→{x['load_after'][0]} "
                f"| {when.get('date_utc', '?')[:16]}, {when.get('torch_threads', '?')} |")

    for key, name in (("train_cpu_recipe", "training step, CPU recipe (4L/4H/128d, block 64, batch {batch})"),
                      ("train_cpu_recipe_bf16", "same, attnlab precision='bf16' vs reference fp32"),
                      ("train_large_recipe", "training step, large recipe (6L/6H/384d, block 256, batch {batch}, dropout 0.2)"),
                      ("train_large_recipe_bf16", "same, attnlab precision='bf16' vs reference fp32")):
        if key in r:
            lines.append(row(name.format(batch=r[key]["shape"]["batch"]), r[key], r[key].get("measured", {})))
    if "kv_cache" in r:
        kv = r["kv_cache"]
        n = kv["shape"]["new_tokens"]
        when = kv.get("measured", {})
        lines.append(row(f"KV cache: generate {n} tokens vs minimal pre-allocated cache (tokens identical: "
                         f"{kv['tokens_identical_to_reference']})", kv["vs_reference"], when))
        lines.append(row(f"KV cache: generate {n} tokens, cache vs no cache", kv["vs_no_cache"], when))
    if "memory" in r:
        mem = r["memory"]
        lines += ["", f"Peak RSS, short capstone run ({mem['iters']} steps with evaluations), fresh subprocess each, "
                  f"alternating (VmHWM): attnlab {mem['peak_rss_mb']['attnlab']} MB, reference "
                  f"{mem['peak_rss_mb']['reference']} MB"
                  + (f" (medians {mem['median_attnlab_mb']} / {mem['median_reference_mb']} MB; attnlab not higher in "
                     f"{mem['pairs_attnlab_not_higher']} of {mem['pairs']} pairs)" if "median_attnlab_mb" in mem else "")
                  + f"; run started {mem.get('measured', {}).get('date_utc', '?')}."]
    lines.append(MD_END)
    return "\n".join(lines)


def write_outputs(r: dict, out: Path | None, md: Path | None) -> None:
    """Merge ``r`` into ``out`` (JSON, key "paired") and replace the paired section of ``md``.

    Comparisons not run this time (``--only``) keep their earlier results, each with the machine
    state it was measured in (``measured``); the section is rendered from the merged results.
    """
    if out is not None:
        existing = json.loads(out.read_text()) if out.is_file() else {}
        merged = {**existing.get("paired", {}), **r}
        existing["paired"] = merged
        out.write_text(json.dumps(existing, indent=2) + "\n")
        r = merged
    if md is not None:
        text = md.read_text() if md.is_file() else ""
        section = markdown(r)
        if MD_START in text and MD_END in text:
            head, rest = text.split(MD_START, 1)
            text = head + section + rest.split(MD_END, 1)[1]
        else:
            text = text + ("\n" if text else "") + section + "\n"
        md.write_text(text)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, a few rounds: checks the harness in seconds")
    p.add_argument("--threads", type=int, default=2, help="torch threads (the course machine has 2 cores)")
    p.add_argument("--only", nargs="+", choices=("cpu", "bf16", "large", "large-bf16", "kv", "memory"), default=None)
    p.add_argument("--rounds", type=int, default=None, help="override the CPU recipe's rounds")
    p.add_argument("--large-batch", type=int, default=None)
    p.add_argument("--new-tokens", type=int, default=None)
    p.add_argument("--memory-pairs", type=int, default=2)
    p.add_argument("--memory-iters", type=int, default=300)
    p.add_argument("--memory-child", choices=("attnlab", "reference"), default=None, help=argparse.SUPPRESS)
    p.add_argument("--note", default="", help="conditions to record, e.g. 'shared machine, 8 users'")
    p.add_argument("--out", type=Path, default=None, help="JSON to merge into (default: benchmarks/results.json; "
                                                          "none with --quick)")
    p.add_argument("--md", type=Path, default=None, help="markdown to update (default: benchmarks/RESULTS.md; "
                                                         "none with --quick)")
    args = p.parse_args(argv)
    if args.memory_child:
        result = memory_child(args.memory_child, args.memory_iters, args.threads)
        print(json.dumps(result))
        return result
    torch.set_num_threads(args.threads)
    shapes = {k: dict(v) for k, v in (QUICK if args.quick else FULL).items()}
    if args.rounds:
        shapes["cpu"]["rounds"] = args.rounds
    if args.large_batch:
        shapes["large"]["batch"] = args.large_batch
    if args.new_tokens:
        shapes["kv"]["new_tokens"] = args.new_tokens
    only = set(args.only or (("cpu", "bf16", "large", "large-bf16", "kv") if args.quick
                             else ("cpu", "bf16", "large", "large-bf16", "kv", "memory")))

    from bench_capstone import shakespeare_splits

    tok, train_data, _ = shakespeare_splits()
    r = {"quick": args.quick, "note": args.note, "machine": machine()}
    print(f"machine: {r['machine']}", flush=True)
    steps = (("cpu", "train_cpu_recipe", lambda: training_pair(shapes["cpu"], train_data, tok.vocab_size)),
             ("bf16", "train_cpu_recipe_bf16", lambda: training_pair(shapes["cpu"], train_data, tok.vocab_size, "bf16")),
             ("large", "train_large_recipe", lambda: training_pair(shapes["large"], train_data, tok.vocab_size)),
             ("large-bf16", "train_large_recipe_bf16",
              lambda: training_pair(shapes["large"], train_data, tok.vocab_size, "bf16")),
             ("kv", "kv_cache", lambda: kv_pair(shapes["kv"], tok.vocab_size)),
             ("memory", "memory", lambda: memory_pairs(args.memory_pairs, args.memory_iters, args.threads)))
    out = args.out if args.out or args.quick else HERE / "results.json"
    md = args.md if args.md or args.quick else HERE / "RESULTS.md"
    for flag, key, fn in steps:
        if flag not in only:
            continue
        r[key] = {**fn(), "measured": {k: r["machine"][k] for k in ("date_utc", "torch_threads", "loadavg_1_5_15")}}
        r["machine_after"] = {"loadavg_1_5_15": machine()["loadavg_1_5_15"]}
        write_outputs(r, out, md)  # after every comparison: an interrupted run keeps what it measured
        if key == "kv_cache":
            print(describe("kv_cache vs minimal reference", r[key]["vs_reference"]), flush=True)
            print(describe("kv_cache vs no cache", r[key]["vs_no_cache"]), flush=True)
            print(f"  tokens identical to the reference: {r[key]['tokens_identical_to_reference']}", flush=True)
        elif key == "memory":
            print(f"memory: {r[key]['peak_rss_mb']}", flush=True)
        else:
            print(describe(key, r[key]), flush=True)
    return r


if __name__ == "__main__":
    main()
