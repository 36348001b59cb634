"""Where does one training step of attnlab's GPT spend its time?

Runs the capstone/nanoGPT-recipe model (4 layers, 4 heads, d_model 128, block 64, batch 12)
and, for comparison, a deliberately minimal GPT of the same size written directly with
``torch.nn`` (one fused QKV projection, ``F.scaled_dot_product_attention(is_causal=True)``,
no argument checks). Steps of the two models are *interleaved*, so background load on a
shared machine hits both alike and the ratio stays meaningful even when absolute times do not.

Prints: median ms/step of each (and of attnlab's explicit attention path), their ratio, and the
torch profiler's top operators for attnlab's fused step.

Usage:  python benchmarks/profile_step.py [--threads 2] [--steps 40]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn


class MinimalBlock(nn.Module):
    """Pre-LN block, no biases, same parameter count as attnlab's DecoderBlock(bias=False)."""

    def __init__(self, d: int, h: int) -> None:
        super().__init__()
        self.h = h
        self.ln1, self.ln2 = nn.LayerNorm(d, bias=False), nn.LayerNorm(d, bias=False)
        self.qkv = nn.Linear(d, 3 * d, bias=False)  # W_q, W_k, W_v stacked: one matmul
        self.proj = nn.Linear(d, d, bias=False)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        B, L, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)  # 3 × (B, L, D)
        q, k, v = (t.view(B, L, self.h, D // self.h).transpose(1, 2) for t in (q, k, v))  # (B, H, L, d_k)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, L, d_k)
        x = x + self.proj(a.transpose(1, 2).reshape(B, L, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class MinimalGPT(nn.Module):
    def __init__(self, V: int, T: int, d: int, h: int, n: int) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(V, d), nn.Embedding(T, d)
        self.blocks = nn.ModuleList(MinimalBlock(d, h) for _ in range(n))
        self.ln_f = nn.LayerNorm(d, bias=False)
        self.head = nn.Linear(d, V, bias=False)
        self.head.weight = self.tok.weight  # weight tying, as attnlab's GPT

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))  # (B, L, d)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))  # (B, L, V)
        return logits, F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=40)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)

    from attnlab.fast import FastGPT
    from attnlab.nn import GPT, GPTConfig, count_parameters

    torch.manual_seed(0)
    V, T, d, h, n, B = 65, 64, 128, 4, 4, 12
    models = {
        "attnlab.fast (what train steps)": FastGPT(GPTConfig(V, T, d, h, n, dropout=0.0, bias=False)),
        "attnlab.nn (fused)": GPT(GPTConfig(V, T, d, h, n, dropout=0.0, bias=False, fused_attention=True)),
        "attnlab.nn (explicit)": GPT(GPTConfig(V, T, d, h, n, dropout=0.0, bias=False, fused_attention=False)),
        "minimal torch": MinimalGPT(V, T, d, h, n),
    }
    for name, m in models.items():
        print(f"{name:<20} {count_parameters(m):,} parameters")
    opts = {name: torch.optim.AdamW(m.parameters(), lr=1e-3) for name, m in models.items()}
    x, y = torch.randint(V, (B, T)), torch.randint(V, (B, T))  # (B, L) each

    def step(name):
        t0 = time.perf_counter()
        _, loss = models[name](x, y)
        opts[name].zero_grad(set_to_none=True)
        loss.backward()
        opts[name].step()
        return 1000 * (time.perf_counter() - t0)

    for name in models:  # warm-up
        for _ in range(3):
            step(name)
    times = {name: [] for name in models}
    for _ in range(args.steps):  # interleaved: load spikes hit every model alike
        for name in models:
            times[name].append(step(name))
    med = {name: statistics.median(t) for name, t in times.items()}
    for name, ms in med.items():
        print(f"{name:<32} median {ms:7.2f} ms/step  ({1000 / ms:5.1f} steps/s)")
    fast, fused, explicit = (med[k] for k in ("attnlab.fast (what train steps)", "attnlab.nn (fused)",
                                              "attnlab.nn (explicit)"))
    print(f"attnlab.fast / minimal torch: {fast / med['minimal torch']:.2f}x; attnlab.nn fused / minimal torch: "
          f"{fused / med['minimal torch']:.2f}x; explicit / fused: {explicit / fused:.2f}x")

    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(5):
            step("attnlab.fast (what train steps)")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))


if __name__ == "__main__":
    main()
