"""Lesson 08: teacher-forcing targets, perplexity, top-k and top-p filtering, greedy decoding, beam search."""
from __future__ import annotations

import itertools
import math

import torch

from ._common import Either, Skill, f64, register, show


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


def _topk_renormalised(d, m):
    """The same probabilities computed another way: softmax over all the tokens, then the kept ones divided by
    their total (renormalised)."""
    p = m.softmax(d["logits"])
    kept = _kept(d, d["k"])
    total = m.r(sum((v for v, k in zip(p, kept, strict=True) if k), 0.0))
    return [m.r(v / total) if k else 0.0 for v, k in zip(p, kept, strict=True)]


def _topk_reference(d):
    from attnlab.nn import top_k_filter

    return top_k_filter(f64(d["logits"]), d["k"]).softmax(-1)


def _topk_linear(d):
    """The kept logits divided by their sum (no exp); None when that sum is 0."""
    kept = _kept(d, d["k"])
    total = sum(v for v, keep in zip(d["logits"], kept, strict=True) if keep)
    return [v / total if keep else 0.0 for v, keep in zip(d["logits"], kept, strict=True)] if total else None


def _exact_softmax(logits, keep):
    """The exact softmax over the ``keep`` logits (the others 0)."""
    from ..working import EXACT

    return EXACT.softmax(logits, keep)


def _topk_exact(d, k):
    from ..working import EXACT

    return EXACT.softmax(d["logits"], _kept(d, k))


register(Skill(
    name="top_k_probs", lesson="08", title="Top-k filtering", kind="vector", decimals=2,
    build=_topk_build, solve=None, working=_topk_working, reference=_topk_reference,
    orders=(_topk_renormalised, lambda d, m: m.softmax_shifted(d["logits"], _kept(d, d["k"]))),
    mistakes={
        "top_k_plus_one": lambda d: _topk_exact(d, d["k"] + 1),
        "top_k_no_renorm": lambda d: f64(d["logits"]).softmax(-1) * torch.tensor(_kept(d, d["k"])),
        "top_k_as_greedy": lambda d: _topk_exact(d, 1),
        "top_k_linear_renorm": lambda d: _topk_linear(d),
        "top_k_smallest": lambda d: _exact_softmax(d["logits"], _kept({"logits": [-v for v in d["logits"]]}, d["k"])),
        "softmax_no_normalise": lambda d: [math.exp(v) if keep else 0.0
                                           for v, keep in zip(d["logits"], _kept(d, d["k"]), strict=True)],
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
        "ranks_not_ids": lambda d: list(range(len(_nucleus(d, _by_prob(d))))),
        "index_from_one": lambda d: [i + 1 for i in _nucleus(d, _by_prob(d))],
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


# -------------------------------------------------------------------- perplexity

_PPL_PROBS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9)


def _ppl_build(rng):
    form = rng.choice(["probs", "probs", "mean", "sum"])
    if form == "probs":
        n = rng.choice([3, 4])
        probs = [rng.choice(_PPL_PROBS) for _ in range(n)]
        while len(set(probs)) == 1:
            probs[0] = rng.choice(_PPL_PROBS)
        prompt = (f"A language model reads a text of {n} tokens. The probabilities it gave to the **correct** next "
                  f"tokens were p = {show(probs)}. What is its **perplexity** on this text, to **2 decimals**?")
        return prompt, {"form": form, "probs": probs}
    if form == "mean":
        loss = rng.randint(30, 300) / 100
        prompt = (f"A model's validation cross-entropy (F.cross_entropy, natural log, mean over tokens) is "
                  f"{loss:.2f} nats per token. What is its **perplexity**, to **2 decimals**?")
        return prompt, {"form": form, "loss": loss}
    n = rng.randint(3, 6)
    total = round(n * rng.randint(40, 220) / 100, 2)
    prompt = (f"F.cross_entropy(logits, targets, reduction='sum') over N = {n} tokens returned {total:.2f} "
              "(nats, summed over the tokens). What is the model's **perplexity** on these tokens, to **2 decimals**?")
    return prompt, {"form": form, "loss": total, "n": n}


def _mean_nll(d, m):
    """The mean negative log-likelihood in nats (each −ln p and the mean written down)."""
    if d["form"] == "probs":
        nll = [m.r(-m.log(p)) for p in d["probs"]]
        return m.r(sum(nll, 0.0) / len(nll))
    if d["form"] == "mean":
        return d["loss"]
    return m.r(d["loss"] / d["n"])


def _ppl_working(d, m):
    return m.exp(_mean_nll(d, m))


def _ppl_reference(d):
    """exp of F.cross_entropy with logits = log p (the probability of the target is exactly p)."""
    import torch.nn.functional as F

    if d["form"] == "probs":
        p = f64(d["probs"])  # (N,)
        logits = torch.stack([torch.log(p), torch.log1p(-p)], dim=-1)  # (N, 2): target 0 has probability p
        nll = F.cross_entropy(logits, torch.zeros(len(p), dtype=torch.long))  # mean over the N tokens
    else:
        nll = f64(d["loss"] / (d["n"] if d["form"] == "sum" else 1))
    return float(torch.exp(nll))


def _exact_nll(d):
    from ..working import EXACT

    return _mean_nll(d, EXACT)


def _nll_base(d, log):
    """Mean −log p with another logarithm (None when only a loss is given)."""
    return sum(-log(p) for p in d["probs"]) / len(d["probs"]) if d["form"] == "probs" else None


register(Skill(
    name="perplexity", lesson="08", title="Perplexity from probabilities or a loss", kind="number", decimals=2,
    build=_ppl_build, solve=None, working=_ppl_working, reference=_ppl_reference,
    kinds=("from token probabilities", "from a loss"),
    kind_of_data=lambda d: "from token probabilities" if d["form"] == "probs" else "from a loss",
    mistakes={
        "loss_summed": lambda d: (math.exp(sum(-math.log(p) for p in d["probs"])) if d["form"] == "probs"
                                  else math.exp(d["loss"]) if d["form"] == "sum" else None),
        "ppl_log2_then_exp": lambda d: math.exp(_nll_base(d, math.log2)) if d["form"] == "probs" else None,
        "ppl_log10_then_exp": lambda d: math.exp(_nll_base(d, math.log10)) if d["form"] == "probs" else None,
        "ppl_base2_of_nats": lambda d: 2.0 ** _exact_nll(d),
        "ppl_arithmetic_mean": lambda d: (sum(1 / p for p in d["probs"]) / len(d["probs"])
                                          if d["form"] == "probs" else None),
        "ppl_reciprocal": lambda d: math.exp(-_exact_nll(d)),
        "ppl_is_loss": lambda d: _exact_nll(d),
    },
    hints=("Perplexity is the exponential of the mean per-token loss (in nats): it is always at least 1.",
           "PPL = exp((1/N) Σ −ln p_t): take −ln of each probability, average them (a summed loss: divide by N), "
           "then exp. Equivalently (p_1 ⋯ p_N)^(−1/N), the geometric mean of 1/p."),
))


# -------------------------------------------------------------------- beam search
# A tiny table: p(y1) for the first token, p(y2 | y1) for the second, probabilities in tenths so that every
# sequence probability p(y1) · p(y2 | y1) is exact to 2 decimals.

_ASKS = {"sequences": "beam after step 2", "probs": "beam probabilities", "greedy": "greedy vs beam"}


def _row(rng, V):
    """V distinct probabilities in tenths (ints) that sum to 10."""
    while True:
        cuts = sorted(rng.sample(range(1, 10), V - 1))
        row = [b - a for a, b in zip([0] + cuts, cuts + [10])]
        if len(set(row)) == V:
            return row


def _ranked(d, k, key):
    """Beam search over the table, extensions ranked by ``key(p1, p2)`` (tenths): the k kept (y1, y2), or None
    when a tie decides which are kept or their order."""
    first, nxt = d["first"], d["next"]
    starts = sorted(range(d["V"]), key=lambda a: -first[a])[:k]  # step 1: the score is p(y1) alone
    cands = sorted(((a, b) for a in starts for b in range(d["V"])), key=lambda s: -key(first[s[0]], nxt[s[0]][s[1]]))
    scores = [key(first[a], nxt[a][b]) for a, b in cands]
    if len(set(scores[: k + 1])) < min(k + 1, len(scores)):
        return None
    return cands[:k]


def _product(p1, p2):
    return p1 * p2


def _tenths(d):
    return {"V": d["V"], "first": [round(10 * p) for p in d["first"]],
            "next": [[round(10 * p) for p in row] for row in d["next"]]}


def _prob(d, seq):
    """p(y1) · p(y2 | y1), exact to 2 decimals (products of tenths)."""
    return round(d["first"][seq[0]] * d["next"][seq[0]][seq[1]], 2)


def _beam_answer(d, beam, greedy=None):
    """The asked answer for ``beam`` (a list of (y1, y2)); ``greedy``: the greedy sequence (for the greedy ask)."""
    if beam is None:
        return None
    if d["ask"] == "sequences":
        return [list(s) for s in beam]
    if d["ask"] == "probs":
        return [_prob(d, s) for s in beam]
    return [list(greedy or _ranked(_tenths(d), 1, _product)[0]), list(beam[0])]


def _beam_solve(d, k=None, key=_product):
    return _beam_answer(d, _ranked(_tenths(d), d["k"] if k is None else k, key))


def _beam_build(rng):
    ask = rng.choice(list(_ASKS))
    for _ in range(200):
        V = rng.choice([2, 3])
        k = 3 if V == 3 and rng.random() < 0.25 else 2
        tenths = {"V": V, "first": _row(rng, V), "next": [_row(rng, V) for _ in range(V)]}
        beam = _ranked(tenths, k, _product)
        if beam is None:
            continue
        greedy = _ranked(tenths, 1, _product)[0]
        if ask == "greedy" and greedy == beam[0]:
            continue  # the beam finds a better sequence than greedy: else "beam = greedy" would be right here
        break
    d = {"V": V, "k": k, "ask": ask, "first": [t / 10 for t in tenths["first"]],
         "next": [[t / 10 for t in row] for row in tenths["next"]]}
    table = "; ".join(f"p(y₂ | y₁ = {a}) = {show(row)}" for a, row in enumerate(d["next"]))
    head = (f"A toy model over the tokens 0..{V - 1} generates two tokens. First token: p(y₁) = {show(d['first'])}. "
            f"Second token: {table}. ")
    if ask == "sequences":
        q = (f"Run **beam search with beam width k = {k}** for the two steps. Which {k} sequences are in the beam "
             f"after step 2? Give them **best first**, one row [y₁, y₂] per sequence, e.g. "
             f"{show([[V - 1, 0], [0, V - 1], [0, 0]][:k])}.")
    elif ask == "probs":
        q = (f"Run **beam search with beam width k = {k}** for the two steps. Give the **probabilities** "
             f"p(y₁, y₂) of the {k} sequences in the beam after step 2, **best first**, e.g. "
             f"{show([0.3, 0.2, 0.1][:k])} (exact: each is a product of two table entries).")
    else:
        q = (f"Which sequence does **greedy decoding** pick, and which is the best sequence found by **beam search "
             f"with beam width k = {k}**? Answer [[greedy y₁, y₂], [beam y₁, y₂]], e.g. [[0, 1], [1, 0]].")
    return head + q, d


def _beam_reference(d):
    """attnlab.nn.sampling.beam_search on the table (prompt: one start token V, never generated)."""
    from attnlab.nn.sampling import beam_search

    first, nxt = f64(d["first"]).log(), f64(d["next"]).log()  # (V,), (V, V)

    def next_logits(ids):  # (n, t) -> (n, V)
        return first.expand(len(ids), -1) if ids.shape[1] == 1 else nxt[ids[:, -1]]

    def run(width):
        return beam_search(next_logits, torch.tensor([d["V"]]), 2, beam_width=width)

    hyps = run(d["k"])
    if d["ask"] == "probs":
        return [math.exp(h.log_prob) for h in hyps]
    if d["ask"] == "sequences":
        return [h.tokens[1:].tolist() for h in hyps]
    return [run(1)[0].tokens[1:].tolist(), hyps[0].tokens[1:].tolist()]


def _beam_greedy(d):
    """k = 1: the greedy answer in the asked form."""
    greedy = _ranked(_tenths(d), 1, _product)
    if d["ask"] == "greedy":
        return [list(greedy[0]), list(greedy[0])]
    return _beam_answer(d, greedy)


def _beam_first_greedy(d):
    """Only the best first token survives step 1; its k best continuations are kept."""
    t = _tenths(d)
    g = _ranked(t, 1, _product)[0][0]
    beam = sorted(((g, b) for b in range(d["V"])), key=lambda s: -t["next"][g][s[1]])[: d["k"]]
    return _beam_answer(d, beam) if d["ask"] != "greedy" else None  # for "greedy" it is the greedy answer


def _not_for_greedy(d, answer):
    """A ranking slip that leaves the best sequence unchanged does not bear on the greedy-vs-beam question."""
    return None if d["ask"] == "greedy" and answer == _beam_solve(d) else answer


def _rankings(d, k, key, most=720):
    """Every beam (the k kept (y1, y2), best first) that ranking the extensions by ``key(p1, p2)`` (tenths) can
    give, one per way of breaking its ties; None when there are more than ``most`` ways."""
    t = _tenths(d)
    first, nxt = t["first"], t["next"]
    starts = sorted(range(d["V"]), key=lambda a: -first[a])[:k]  # step 1: p(y1) alone, no ties (distinct row)
    cands = [(a, b) for a in starts for b in range(d["V"])]
    groups: list[list[tuple[int, int]]] = []
    for score in sorted({key(first[a], nxt[a][b]) for a, b in cands}, reverse=True):
        groups.append([c for c in cands if key(first[c[0]], nxt[c[0]][c[1]]) == score])
        if sum(map(len, groups)) >= k:
            break
    if math.prod(math.factorial(len(g)) for g in groups) > most:
        return None
    beams = []
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        beam = [c for part in parts for c in part][:k]
        if beam not in beams:
            beams.append(beam)
    return beams


def _tie_free(d, answers):
    """The typed answers a ranking slip gives, whichever way the learner broke its ties (an :class:`Either`).
    Without a tie, its one answer; with ties, the right answer left out (a way of breaking a tie that happens
    to give it cannot be caught by this problem); None if nothing is left."""
    if len(answers) == 1:
        return answers[0]
    right = _beam_solve(d)
    kept = []
    for answer in answers:
        if answer is not None and answer != right and answer not in kept:
            kept.append(answer)
    return Either(kept) if kept else None


def _beam_sum(d):
    """Extensions ranked by p(y1) + p(y2 | y1); their 'probabilities' reported as those sums."""
    beams = _rankings(d, d["k"], lambda a, b: a + b) or []
    if d["ask"] != "probs":
        return _tie_free(d, [_not_for_greedy(d, _beam_answer(d, beam)) for beam in beams])
    return _tie_free(d, [[round(d["first"][a] + d["next"][a][b], 1) for a, b in beam] for beam in beams])


def _beam_last(d):
    """Extensions ranked by the last step's probability p(y2 | y1) only (reported as their score)."""
    beams = _rankings(d, d["k"], lambda a, b: b) or []
    if d["ask"] != "probs":
        return _tie_free(d, [_not_for_greedy(d, _beam_answer(d, beam)) for beam in beams])
    return _tie_free(d, [[d["next"][a][b] for a, b in beam] for beam in beams])


def _beam_unsorted(d):
    """The right beam listed worst first (sorted the wrong way; for k = 2 the only other order)."""
    beam = _ranked(_tenths(d), d["k"], _product)
    return _beam_answer(d, beam[::-1]) if d["ask"] != "greedy" else None


register(Skill(
    name="beam_search_steps", lesson="08", title="Beam search by hand (two steps)", kind="matrix",
    build=_beam_build, solve=_beam_solve, reference=_beam_reference,
    kinds=tuple(_ASKS.values()), kind_of_data=lambda d: _ASKS[d["ask"]],
    mistakes={
        "beam_as_greedy": _beam_greedy,
        "beam_greedy_first_step": _beam_first_greedy,
        "beam_rank_last_step": _beam_last,
        "beam_sum_probs": _beam_sum,
        "beam_not_best_first": _beam_unsorted,
    },
    hints=("A sequence's probability is the product of its step probabilities; the beam keeps the k most probable "
           "prefixes at every step, step 1 included.",
           "Step 1: keep the k most probable first tokens. Step 2: extend each by every token, score each "
           "sequence by p(y₁) · p(y₂ | y₁) (or add the log-probabilities), keep the k highest, best first. "
           "Greedy decoding is k = 1: the best first token, then its best second token."),
))
