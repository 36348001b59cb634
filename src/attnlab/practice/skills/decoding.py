"""Lesson 08: teacher-forcing targets, top-k and top-p filtering, greedy decoding."""
from __future__ import annotations

import torch

from ._common import Skill, f64, register, show


def _targets_build(rng):
    T = rng.randint(4, 6)
    ids = [rng.randint(0, 30) for _ in range(T + 2)]
    prompt = (f"A token stream is ids = {show(ids)}. A training window of block_size T = {T} starts at position 0, "
              f"so the model's input is x = ids[0:{T}]. Give the **targets y** (one per input position).")
    return prompt, {"ids": ids, "T": T}


def _targets_reference(d):
    from attnlab.data import get_batch

    data = torch.tensor(d["ids"][: d["T"] + 1])  # T + 1 tokens: the only window starts at 0
    _, y = get_batch(data, d["T"], 1, generator=torch.Generator().manual_seed(0))  # (1, T)
    return y[0].tolist()


register(Skill(
    name="next_token_targets", lesson="08", title="Next-token targets (shift by one)", kind="int_list",
    build=_targets_build, reference=_targets_reference, solve=lambda d: d["ids"][1: d["T"] + 1],
    mistakes={
        "target_no_shift": lambda d: d["ids"][: d["T"]],
        "target_shift_two": lambda d: d["ids"][2: d["T"] + 2],
        "targets_block_plus_one": lambda d: d["ids"][1: d["T"] + 2],
    },
    hints=("At every position the model predicts what comes next.",
           "y[t] = ids[t + 1] for t = 0 .. T − 1, i.e. y = ids[1 : T + 1]."),
))


def _topk_build(rng):
    logits = rng.sample(range(-1, 5), 5)
    k = rng.choice([2, 3])
    prompt = (f"Next-token logits over 5 tokens: {show(logits)}. Apply **top-k filtering with k = {k}** and give the "
              "resulting sampling **probabilities** of all 5 tokens to **2 decimals**.")
    return prompt, {"logits": logits, "k": k}


def _kept(d, k):
    threshold = sorted(d["logits"], reverse=True)[k - 1]
    return [v >= threshold for v in d["logits"]]


def _topk_working(d, m):
    return m.softmax(d["logits"], _kept(d, d["k"]))


def _topk_reference(d):
    from attnlab.nn import top_k_filter

    return top_k_filter(f64(d["logits"]), d["k"]).softmax(-1)


def _topk_exact(d, k):
    from ..working import EXACT

    return EXACT.softmax(d["logits"], _kept(d, k))


register(Skill(
    name="top_k_probs", lesson="08", title="Top-k filtering", kind="vector", decimals=2,
    build=_topk_build, solve=None, working=_topk_working, reference=_topk_reference,
    mistakes={
        "top_k_plus_one": lambda d: _topk_exact(d, d["k"] + 1),
        "top_k_no_renorm": lambda d: f64(d["logits"]).softmax(-1) * torch.tensor(_kept(d, d["k"])),
        "top_k_as_greedy": lambda d: _topk_exact(d, 1),
    },
    hints=("Everything outside the k largest logits gets probability 0; the rest must still sum to 1.",
           "Set the other logits to −inf, then softmax: p_i = exp(l_i) / Σ_{kept} exp(l_j) for kept tokens."),
))


def _topp_build(rng):
    while True:
        probs = [rng.randint(1, 9) * 0.05 for _ in range(4)]
        last = 1.0 - sum(probs)
        if last > 0.02 and len({round(p, 2) for p in probs + [last]}) == 5:
            break
    probs = [round(p, 2) for p in probs] + [round(last, 2)]
    ordered = sorted(probs, reverse=True)
    m = rng.randint(1, 3)
    low, high = sum(ordered[:m]), sum(ordered[: m + 1])
    p = round((low + high) / 2, 3)
    prompt = (f"Next-token probabilities over tokens 0..4: {show(probs)}. Apply **top-p (nucleus) filtering with "
              f"p = {p}**. Which token ids are kept? Answer as a list, e.g. [0, 3].")
    return prompt, {"probs": probs, "p": p}


def _topp_reference(d):
    from attnlab.nn import top_p_filter

    kept = torch.isfinite(top_p_filter(torch.log(f64(d["probs"])), d["p"]))
    return [i for i, keep in enumerate(kept.tolist()) if keep]


def _nucleus(d, order, include_crossing=True):
    """Walk ``order`` adding probabilities; stop once the mass reaches p (keeping the crossing token or not)."""
    kept, mass = [], 0.0
    for i in order:
        if mass >= d["p"] - 1e-12:
            break
        if not include_crossing and mass + d["probs"][i] >= d["p"] - 1e-12:
            break
        kept.append(i)
        mass += d["probs"][i]
    return sorted(kept) or None


def _by_prob(d):
    return sorted(range(5), key=lambda i: -d["probs"][i])


register(Skill(
    name="top_p_tokens", lesson="08", title="Top-p (nucleus) filtering", kind="int_set",
    build=_topp_build, solve=lambda d: _nucleus(d, _by_prob(d)), reference=_topp_reference,
    mistakes={
        "top_p_excludes_crossing": lambda d: _nucleus(d, _by_prob(d), include_crossing=False),
        "top_p_unsorted": lambda d: _nucleus(d, range(5)),
        "top_p_one_past": lambda d: sorted(_nucleus(d, _by_prob(d)) + [_by_prob(d)[len(_nucleus(d, _by_prob(d)))]]),
    },
    hints=("Sort the tokens by probability and add them up from the top until you reach p.",
           "Keep tokens in descending order while the mass of the tokens before them is below p; the token that "
           "makes the total reach p is kept."),
))


def _greedy_build(rng):
    logits = [round(rng.uniform(-2, 3), 1) for _ in range(6)]
    while len(set(logits)) < 6 or logits.index(max(logits)) == 5:
        logits = [round(rng.uniform(-2, 3), 1) for _ in range(6)]
    temperature = rng.choice([0.5, 0.7, 1.5])
    prompt = (f"Logits over token ids 0..5: {show(logits)}, temperature {temperature}. Which token id does "
              "**greedy decoding** pick?")
    return prompt, {"logits": logits, "temperature": temperature}


def _greedy_reference(d):
    from attnlab.nn import sample_next_token

    return int(sample_next_token(f64([d["logits"]]), temperature=d["temperature"], greedy=True)[0])


register(Skill(
    name="greedy_next_token", lesson="08", title="Greedy next token", kind="int",
    build=_greedy_build, reference=_greedy_reference, solve=lambda d: d["logits"].index(max(d["logits"])),
    mistakes={
        "greedy_one_based": lambda d: d["logits"].index(max(d["logits"])) + 1,
        "greedy_argmin": lambda d: d["logits"].index(min(d["logits"])),
        "greedy_value_not_id": lambda d: int(max(d["logits"])) if float(max(d["logits"])).is_integer() else None,
    },
    hints=("Greedy decoding does not sample; temperature does not change which logit is largest.",
           "Pick the index of the largest logit (indices start at 0)."),
))
