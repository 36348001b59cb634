"""Grading spec for exercise 08 (see autograder/AUTHORING.md). Never released to students.

Inputs are drawn at grading time from a generator the grader seeds with os.urandom;
references come from attnlab.nn and run in the grader, outside the student's sandbox.
``greedy_decode`` is called on a small GPT that the sandbox builds from ``GPT_SETUP`` (the
sandbox has no attnlab) with random weights drawn by the grader; the reference loads the
same weights into ``attnlab.nn.GPT`` and calls ``GPT.generate(greedy=True)``.
"""
import numpy as np
import torch
import torch.nn.functional as F

from attnlab.nn import GPT, GPTConfig, KVCache, causal_mask
from attnlab.nn import scaled_dot_product_attention as ref_sdpa
from attnlab.nn import top_k_filter as ref_top_k
from attnlab.nn import top_p_filter as ref_top_p
from attnlab_grader.judging.reference_gpt import GPT_SETUP  # the GPT built in the sandbox (one home, parity tested)
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck

A = "08_training_and_decoding"


def t64(x):
    return torch.as_tensor(x, dtype=torch.float64)


GREEDY_SETUP = GPT_SETUP + '''
def _grader_greedy(I):
    m = _GraderGPT(*I["cfg"])
    m.load_state_dict({k[2:]: v for k, v in I.items() if k.startswith("w:")}, strict=True)
    m = m.double().eval()
    return greedy_decode(m, I["idx"], I["n"])
'''
CFG_NAMES = ("vocab_size", "block_size", "d_model", "n_heads", "n_layers")


def _greedy_draw(rng, trial):
    V, H = int(rng.integers(5, 13)), int(rng.choice([1, 2]))
    d_model, n_layers, block_size = H * int(rng.integers(2, 5)), int(rng.integers(1, 3)), int(rng.integers(4, 9))
    if trial == 1:
        n_layers = 2  # forced: a mistake in chaining the blocks shows only with more than one

    ref = GPT(GPTConfig(V, block_size, d_model, H, n_layers))
    inp = {"cfg": [V, block_size, d_model, H, n_layers]}
    for name, p in ref.state_dict().items():
        if name == "lm_head.weight":
            continue  # tied to tok_emb.weight
        scale = 0.3 if name.endswith("bias") else 1.0
        base = 1.0 if name.startswith(("norm", "blocks")) and "norm" in name and name.endswith("weight") else 0.0
        inp["w:" + name] = base + scale * rng.standard_normal(tuple(p.shape))
    B = int(rng.integers(1, 4)) if trial != 2 else 3
    T = int(rng.integers(1, block_size + 1)) if trial != 2 else block_size  # trial 2 slides the window every step
    inp["idx"] = rng.integers(0, V, size=(B, T))
    # trial 3: n = 0, the boundary the docstring allows (the prompt comes back unchanged)
    inp["n"] = [int(rng.integers(1, 4)), int(rng.integers(3, 8)), int(rng.integers(5, 8)), 0][trial]
    return inp


def greedy_inputs(rng, trial):
    inp = _greedy_draw(rng, trial)
    if trial == 2:
        # Small random models often predict one constant token whatever the context; then no
        # window could be told from another. Redraw (bounded) until the model's greedy choices
        # depend on the oldest token of a full window, so cropping to block_size - 1 shows.
        for _ in range(50):
            if not torch.equal(greedy_ref(**inp), _greedy_window(inp, inp["cfg"][1] - 1)):
                break
            inp = _greedy_draw(rng, trial)
    return inp


def _greedy_window(inp, window):
    model = _loaded_gpt(inp)
    idx = torch.as_tensor(inp["idx"])
    with torch.no_grad():
        for _ in range(inp["n"]):
            logits, _ = model(idx[:, -window:])
            idx = torch.cat([idx, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return idx


def _loaded_gpt(inp):
    model = GPT(GPTConfig(*inp["cfg"])).double().eval()
    state = {k[2:]: torch.as_tensor(v, dtype=torch.float32).double() for k, v in inp.items() if k.startswith("w:")}
    state["lm_head.weight"] = state["tok_emb.weight"]
    model.load_state_dict(state)
    return model


def greedy_ref(**inp):
    model = _loaded_gpt(inp)
    return model.generate(torch.as_tensor(inp["idx"]), inp["n"], greedy=True, use_cache=False)


def greedy_first_position(**inp):
    model = _loaded_gpt(inp)
    idx = torch.as_tensor(inp["idx"])
    for _ in range(inp["n"]):
        logits, _ = model(idx[:, -model.config.block_size:])
        idx = torch.cat([idx, logits[:, 0].argmax(-1, keepdim=True)], dim=1)
    return idx


# ------------------------------------------------------------------ other inputs and references
def shift_inputs(rng):
    B, T = int(rng.integers(1, 5)), int(rng.integers(2, 9))
    return {"idx": rng.integers(0, 50, size=(B, T + 1))}


def loss_inputs(rng, trial):
    """Trial 0: several positions and rows, so a sum or a last-position-only loss always differs;
    last trial: logits of a few hundred (a confident model's): a log-softmax or logsumexp passes, a
    log of an exp that overflows in float32 (exp(89) = inf) gives inf or nan."""
    B, T, V = int(rng.integers(1, 4)), int(rng.integers(1, 7)), int(rng.integers(2, 12))
    if trial == 0:
        B, T = max(B, 2), max(T, 2)
    scale = 3.0 if trial < 2 else float(rng.uniform(150, 400))
    return {"logits": rng.standard_normal((B, T, V)) * scale, "targets": rng.integers(0, V, size=(B, T))}


def loss_ref(logits, targets, reduce="mean"):
    x = t64(logits)
    return F.cross_entropy(x.reshape(-1, x.shape[-1]), torch.as_tensor(targets).reshape(-1), reduction=reduce)


def top_k_inputs(rng, trial):
    """Trial 1: k = 1 (only the largest logit of a row, with its ties, is kept); trial 2: k > V (a k not
    clamped to V crashes); trial 3: the k-th largest logit of every row is
    tied with the next one (all ties are kept), in a 3-D batch; trial 4: k = V exactly (nothing is
    filtered; indexing the first dropped logit, at k, crashes)."""
    shape = (int(rng.integers(1, 4)), int(rng.integers(3, 10)))
    if trial == 3:
        shape = (int(rng.integers(1, 3)),) + shape
    k = int(rng.integers(1, shape[-1])) if trial != 2 else shape[-1] + int(rng.integers(1, 4))
    if trial == 1:
        k = 1
    if trial == 4:
        k = shape[-1]
    logits = rng.standard_normal(shape) * 2
    if trial == 3:
        rows = logits.reshape(-1, shape[-1])
        for row in rows:
            order = np.argsort(-row)
            row[order[k]] = row[order[k - 1]]  # tie between the k-th and (k+1)-th largest
        logits = rows.reshape(shape)
    return {"logits": logits, "k": k}


def top_p_inputs(rng, trial):
    """Trial 0: p falls inside the mass of the second or a later token of row 0 (the token that
    crosses p is not the most probable one, so dropping it, or keeping only the first, shows)."""
    shape = (int(rng.integers(1, 4)), int(rng.integers(3, 10)))
    logits = rng.standard_normal(shape) * 2
    p = [float(rng.uniform(0.3, 0.9)), float(rng.uniform(0.05, 0.6)), 1.0][trial % 3]
    if trial == 0:
        probs = np.sort(np.exp(logits[0] - logits[0].max()))[::-1]
        probs /= probs.sum()
        j = int(rng.integers(1, shape[-1] - 1))  # the crossing token's rank, 1 .. V - 2
        p = float(probs[:j].sum() + rng.uniform(0.2, 0.8) * probs[j])
    return {"logits": logits, "p": p}


def top_k_exactly_k(logits, k):
    x = t64(logits)
    keep = torch.zeros_like(x, dtype=torch.bool).scatter(-1, x.topk(min(k, x.shape[-1]), dim=-1).indices, True)
    return x.masked_fill(~keep, float("-inf"))


def top_p_no_unsort(logits, p):
    x = t64(logits)
    sx, _ = torch.sort(x, dim=-1, descending=True)
    probs = sx.softmax(-1)
    drop = (probs.cumsum(-1) - probs) >= p
    return x.masked_fill(drop, float("-inf"))


def top_p_drop_crossing(logits, p, keep_first=False):
    x = t64(logits)
    sx, order = torch.sort(x, dim=-1, descending=True)
    drop_sorted = sx.softmax(-1).cumsum(-1) > p
    if keep_first:  # ... but the most probable token always stays
        drop_sorted[..., 0] = False
    return x.masked_fill(drop_sorted.scatter(-1, order, drop_sorted), float("-inf"))


def cache_inputs(rng, trial):
    """Trial 0: nothing cached; trial 1: one new position after a long cache (65-80 positions: a cache
    kept in a fixed 16- or 64-slot buffer fails); trial 2: several new positions, B = H = 2, d_v != d_k."""
    B, H, d_k, d_v = int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(2, 6)), int(rng.integers(2, 6))
    if trial == 2:  # two sequences and two heads (axes mixed up show); a scale by sqrt(d_v) shows
        B, H, d_v = 2, 2, (d_k + 1 if d_v == d_k else d_v)
    S_old, L_new = [(0, int(rng.integers(2, 6))), (int(rng.integers(65, 81)), 1), (int(rng.integers(1, 5)), int(rng.integers(2, 4)))][trial]
    inp = {"q": rng.standard_normal((B, H, L_new, d_k)), "k": rng.standard_normal((B, H, L_new, d_k)),
           "v": rng.standard_normal((B, H, L_new, d_v)), "cache_k": None, "cache_v": None}
    if S_old:
        inp["cache_k"] = rng.standard_normal((B, H, S_old, d_k))
        inp["cache_v"] = rng.standard_normal((B, H, S_old, d_v))
    return inp


def cache_ref(q, k, v, cache_k, cache_v, mask_fn=None, new_first=False, drop_oldest=False, window=None):
    if drop_oldest and cache_k is not None:  # the oldest cached position is lost on every update
        cache_k, cache_v = cache_k[:, :, 1:], cache_v[:, :, 1:]
    cache = KVCache()
    if cache_k is not None and not new_first:
        cache.update(t64(cache_k), t64(cache_v))
    k_all, v_all = cache.update(t64(k), t64(v))
    if window is not None:  # a cache kept in a fixed number of slots: only the newest positions survive
        k_all, v_all = k_all[:, :, -window:], v_all[:, :, -window:]
    if cache_k is not None and new_first:
        cache.update(t64(cache_k), t64(cache_v))
        k_all, v_all = cache.k, cache.v
    L, S = q.shape[2], k_all.shape[2]
    mask = causal_mask(L, S) if mask_fn is None else mask_fn(L, S)
    out, _ = ref_sdpa(t64(q), k_all, v_all, mask)
    return out, k_all, v_all


CHECKS = [
    ByHandCheck("test_targets_by_hand", variable="y", skill="next_token_targets"),
    FunctionCheck(
        "test_shift_targets", target="shift_targets", inputs=shift_inputs, call="shift_targets(_I['idx'])",
        reference=lambda idx: (torch.as_tensor(idx)[:, :-1], torch.as_tensor(idx)[:, 1:]),
        mistakes={"target_no_shift": lambda idx: (idx[:, :-1], idx[:, :-1]),
                  "targets_shifted_backwards": lambda idx: (idx[:, 1:], idx[:, :-1])}),
    FunctionCheck(
        "test_next_token_loss", target="next_token_loss", inputs=loss_inputs,
        call="next_token_loss(_I['logits'], _I['targets'])", reference=loss_ref, atol=1e-4,
        mistakes={"loss_summed": lambda logits, targets: loss_ref(logits, targets, "sum"),
                  "loss_missing_minus": lambda logits, targets: -loss_ref(logits, targets)},
        forbid_attrs=("cross_entropy", "nll_loss", "CrossEntropyLoss", "NLLLoss"), forbid_ops=("nll_loss",)),
    FunctionCheck(
        "test_greedy_decode", target="greedy_decode", inputs=greedy_inputs, trials=4, setup=GREEDY_SETUP,
        call="_grader_greedy(_I)", reference=greedy_ref, atol=0.0, rtol=0.0,
        mistakes={"next_token_from_first_position": greedy_first_position},
        forbid_attrs=("generate", "sample_next_token")),
    FunctionCheck(
        "test_top_k_filter", target="top_k_filter", inputs=top_k_inputs, trials=5,
        call="top_k_filter(_I['logits'], _I['k'])", reference=lambda logits, k: ref_top_k(t64(logits), k),
        mistakes={"top_k_plus_one": lambda logits, k: ref_top_k(t64(logits), k + 1),
                  "top_k_smallest": lambda logits, k: -ref_top_k(-t64(logits), k),
                  "top_k_drops_ties": top_k_exactly_k,
                  "filter_fill_wrong_sign": (  # dropped logits set to +inf, or to NaN
                      lambda logits, k: ref_top_k(t64(logits), k).nan_to_num(nan=float("nan"), neginf=float("inf")),
                      lambda logits, k: ref_top_k(t64(logits), k).nan_to_num(neginf=float("nan")))}),
    FunctionCheck(
        "test_top_p_filter", target="top_p_filter", inputs=top_p_inputs, trials=3,
        call="top_p_filter(_I['logits'], _I['p'])", reference=lambda logits, p: ref_top_p(t64(logits), p),
        mistakes={"top_p_left_sorted": top_p_no_unsort,
                  "top_p_excludes_crossing": (top_p_drop_crossing,
                                              lambda logits, p: top_p_drop_crossing(logits, p, keep_first=True))}),
    FunctionCheck(
        "test_attend_with_cache", target="attend_with_cache", inputs=cache_inputs, trials=3, atol=1e-4,
        call="attend_with_cache(_I['q'], _I['k'], _I['v'], _I['cache_k'], _I['cache_v'])", reference=cache_ref,
        mistakes={"causal_kv_misaligned":
                  lambda **i: cache_ref(**i, mask_fn=lambda L, S: torch.ones(L, S, dtype=torch.bool).tril()),
                  "missing_causal_mask": lambda **i: cache_ref(**i, mask_fn=lambda L, S: None),
                  "kv_cache_prepends": lambda **i: cache_ref(**i, new_first=True),
                  "kv_cache_drops_oldest": (lambda **i: cache_ref(**i, drop_oldest=True),
                                            lambda **i: cache_ref(**i, window=16), lambda **i: cache_ref(**i, window=64))},
        forbid_attrs=("scaled_dot_product_attention", "MultiheadAttention"), forbid_ops=("scaled_dot_product",)),
    ByHandCheck("test_cache_bytes_by_hand", variable="n_bytes", skill="kv_cache_bytes"),
]
TIMEOUT = 20
