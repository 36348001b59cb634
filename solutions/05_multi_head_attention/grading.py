"""Grading spec for exercise 05 (see autograder/AUTHORING.md). Never released to students."""
import numpy as np
import torch

from attnlab.nn import MultiHeadAttention as RefMHA
from attnlab.nn import merge_heads as ref_merge
from attnlab.nn import split_heads as ref_split
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck

A = "05_multi_head_attention"
PARAMS = ("w_q.weight", "w_q.bias", "w_k.weight", "w_k.bias", "w_v.weight", "w_v.bias", "w_o.weight", "w_o.bias")


def t64(x):
    return torch.as_tensor(x, dtype=torch.float64)


def split_inputs(rng):
    H, d_k = int(rng.integers(2, 5)), int(rng.integers(2, 5))  # H = 1 or d_k = 1 hides layout mistakes
    B, L = int(rng.integers(1, 4)), int(rng.integers(2, 6))
    return {"x": rng.standard_normal((B, L, H * d_k)), "n_heads": H}


def merge_inputs(rng):
    B, H, L, d_k = (int(n) for n in rng.integers(1, 5, size=4))
    H, L = max(H, 2), max(L, 2)  # H = 1 or L = 1 makes a merge without the transpose look right
    return {"x": rng.standard_normal((B, H, L, d_k))}


def mha_inputs(rng, trial):
    H = int(rng.choice([2, 3, 4]))
    d_model = H * int(rng.integers(2, 5))
    B, L = int(rng.integers(1 if trial != 2 else 2, 4)), int(rng.integers(2, 6))  # trial 2: B >= 2 (see there)
    S = L if trial != 1 else int(rng.integers(2, 7))
    inp = {name: rng.standard_normal((d_model, d_model) if name.endswith("weight") else (d_model,)) * 0.5
           for name in PARAMS}
    inp.update({"d_model": d_model, "n_heads": H, "query": rng.standard_normal((B, L, d_model)),
                "key": None, "value": None, "attn_mask": None, "key_padding_mask": None,
                "need_weights": trial != 1, "is_causal": False, "dropout": 0.0})
    if trial == 1:  # cross-attention with padding
        inp["key"] = rng.standard_normal((B, S, d_model))
        inp["value"] = rng.standard_normal((B, S, d_model))
        lengths = rng.integers(1, S + 1, size=B)
        lengths[0] = int(rng.integers(1, S))  # right padding; at least one sequence is padded
        inp["key_padding_mask"] = np.arange(S)[None, :] < lengths[:, None]  # (B, S)
    if trial == 2:  # per-example (B, L, S) attention mask, B >= 2: lined up with the heads it no longer broadcasts
        m = rng.random((B, L, S)) < 0.6
        m[..., 0] = True
        inp["attn_mask"] = m
    if trial == 3:  # causal over more than 64 positions (a mask sliced from a 16 x 16 or 64 x 64 buffer fails)
        L = int(rng.integers(65, 97))
        inp.update(query=rng.standard_normal((1, L, d_model)), is_causal=True)
    if trial == 5:  # key given and value left out (value defaults to the key, not the query); a per-head
        # (B, H, L, S) attn_mask; dropout set but the module in eval mode (no dropout may act)
        inp["key"] = rng.standard_normal((B, L, d_model))
        m = rng.random((B, H, L, L)) < 0.6
        m[..., 0] = True
        m[0, 0, 0, 1:], m[0, 1, 0, :] = False, True  # heads 0 and 1 differ in row 0
        inp.update(attn_mask=m, dropout=0.5)
    if trial == 6:  # is_causal with S > L (the queries are the LAST L positions) and right padding
        S = L + int(rng.integers(2, 5))
        inp["key"] = rng.standard_normal((B, S, d_model))
        inp["value"] = rng.standard_normal((B, S, d_model))
        lengths = rng.integers(S - L + 1, S + 1, size=B)
        lengths[0] = S - 1  # batch 0: the last key is padding, seen by the last query row
        inp.update(key_padding_mask=np.arange(S)[None, :] < lengths[:, None], is_causal=True)
    if trial == 4:  # both masks at once, a 2-D (L, S) attn_mask, cross-attention: AND differs from OR
        S = max(S, 3) if S != L else L + 1
        inp["key"] = rng.standard_normal((B, S, d_model))
        inp["value"] = rng.standard_normal((B, S, d_model))
        lengths = rng.integers(2, S + 1, size=B)
        lengths[0] = S - 1  # batch 0: the last key is padding
        inp["key_padding_mask"] = np.arange(S)[None, :] < lengths[:, None]  # (B, S)
        m = rng.random((L, S)) < 0.6
        m[:, 0] = True  # every query keeps key 0 (a real token)
        m[0, S - 1] = True  # allowed by attn_mask, blocked by padding in batch 0
        m[0, 1], m[1:, 1] = False, True  # blocked by attn_mask, real key; rows 0 and 1 differ
        inp["attn_mask"] = m
    return inp


MHA_SETUP = """
def _run_mha(I):
    try:  # the class docstring's Raises: n_heads that does not divide d_model is a ValueError
        MultiHeadAttention(I["d_model"], I["d_model"] + 1)
        raised = 0.0
    except ValueError:
        raised = 1.0
    except Exception:  # noqa: BLE001 - another error is not the documented ValueError
        raised = 0.0
    m = MultiHeadAttention(I["d_model"], I["n_heads"], dropout=I["dropout"])
    m.load_state_dict({k: I[k] for k in %r})
    m.eval()
    with torch.no_grad():
        out, w = m(I["query"], I["key"], I["value"], attn_mask=I["attn_mask"],
                   key_padding_mask=I["key_padding_mask"], need_weights=I["need_weights"],
                   is_causal=I["is_causal"])
    return out, w, raised
""" % (PARAMS,)


def with_raised(model):
    """``model(**inputs) -> (out, weights)`` as ``_run_mha`` returns it: ``(out, weights, 1.0)``, the 1.0
    saying that ``MultiHeadAttention(d_model, d_model + 1)`` raised ValueError as the docstring promises."""
    def run(**inp):
        return (*model(**inp), 1.0)
    return run


def ref_mha(**inp):
    m = RefMHA(inp["d_model"], inp["n_heads"], dropout=inp["dropout"]).double()
    m.load_state_dict({k: t64(inp[k]) for k in PARAMS})
    m.eval()

    def opt(name, conv):
        return None if inp[name] is None else conv(inp[name])
    with torch.no_grad():
        out, w = m(t64(inp["query"]), opt("key", t64), opt("value", t64), attn_mask=opt("attn_mask", torch.as_tensor),
                   key_padding_mask=opt("key_padding_mask", torch.as_tensor), need_weights=inp["need_weights"],
                   is_causal=inp["is_causal"])
    return out, w


def mha_model(scale_by_d_model=False, w_o=True, k_proj="w_k", v_proj="w_v", value_from="key",
              attn_mask=True, combine="and", causal_from="end", padding_inverted=False, causal_alone=False):
    """An explicit float64 multi-head attention with one known mistake switched on (for naming
    the mistake in feedback): returns ``model(**inputs) -> (out, weights or None)``."""
    def model(**inp):
        W = {name: t64(inp[name]) for name in PARAMS}
        H, d_model = inp["n_heads"], inp["d_model"]
        d_k = d_model // H

        def lin(x, name):
            return x @ W[f"{name}.weight"].T + W[f"{name}.bias"]

        query = t64(inp["query"])
        key = query if inp["key"] is None else t64(inp["key"])
        value = t64(inp["value"]) if inp["value"] is not None else key if value_from == "key" else query
        B, L, S = query.shape[0], query.shape[1], key.shape[1]

        def split(x):
            return x.reshape(B, x.shape[1], H, d_k).transpose(1, 2)
        q, k, v = split(lin(query, "w_q")), split(lin(key, k_proj)), split(lin(value, v_proj))
        mask = None
        if attn_mask and inp["attn_mask"] is not None:
            m = torch.as_tensor(inp["attn_mask"])
            mask = m[:, None] if m.dim() == 3 else m
        if inp["key_padding_mask"] is not None:
            pad = torch.as_tensor(inp["key_padding_mask"])[:, None, None, :]
            pad = ~pad if padding_inverted else pad
            mask = pad if mask is None else (mask & pad if combine == "and" else mask | pad)
        if inp["is_causal"]:
            causal = torch.ones(L, S, dtype=torch.bool).tril(S - L if causal_from == "end" else 0)
            mask = causal if mask is None or causal_alone else mask & causal
        scores = q @ k.transpose(-2, -1) / (d_model if scale_by_d_model else d_k) ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, L, d_model)
        out = lin(out, "w_o") if w_o else out
        return out, (weights if inp["need_weights"] else None)
    return model


#: Known mistakes of MultiHeadAttention.forward, each a model of what it computes (wrapped by :func:`with_raised`).
MHA_MISTAKES = {
    "forget_w_o": mha_model(w_o=False),
    "scale_by_d_model": mha_model(scale_by_d_model=True),
    "keys_projected_with_w_q": mha_model(k_proj="w_q"),
    "values_projected_with_w_k": mha_model(v_proj="w_k"),
    "value_defaults_to_query": mha_model(value_from="query"),
    "attn_mask_ignored": mha_model(attn_mask=False),
    "combine_with_or": mha_model(combine="or"),
    "inverted_mask": mha_model(padding_inverted=True),
    "causal_kv_misaligned": mha_model(causal_from="start"),
    "combine_drops_masks": mha_model(causal_alone=True),
}


CHECKS = [
    ByHandCheck("test_shape_by_hand", variable="shape", skill="mha_shape_trace"),
    ByHandCheck("test_scores_shape_by_hand", variable="scores_shape", skill="mha_scores_shape"),
    ByHandCheck("test_merge_by_hand", variable="merged", skill="merge_heads_values"),
    ByHandCheck("test_params_by_hand", variable="n_params", skill="mha_param_count"),
    FunctionCheck(
        "test_split_heads", target="split_heads", inputs=split_inputs, trials=3,
        call="split_heads(_I['x'], _I['n_heads'])", reference=lambda x, n_heads: ref_split(t64(x), n_heads),
        mistakes={"reshape_without_transpose": lambda x, n_heads: t64(x).reshape(x.shape[0], n_heads, x.shape[1], -1)},
        forbid_attrs=("rearrange",)),
    FunctionCheck(
        "test_merge_heads", target="merge_heads", inputs=merge_inputs, trials=3,
        call="merge_heads(_I['x'])", reference=lambda x: ref_merge(t64(x)),
        mistakes={"reshape_without_transpose": lambda x: t64(x).reshape(x.shape[0], x.shape[2], -1),
                  "heads_wrong_order": lambda x: ref_merge(t64(x).flip(1))},
        forbid_attrs=("rearrange",)),
    FunctionCheck(
        "test_mha_forward", target="MultiHeadAttention", inputs=mha_inputs, trials=7, setup=MHA_SETUP,
        call="_run_mha(_I)", reference=with_raised(ref_mha), atol=1e-4,
        mistakes={"heads_not_checked": lambda **inp: (*ref_mha(**inp), 0.0),
                  **{name: with_raised(model) for name, model in MHA_MISTAKES.items()}},
        forbid_attrs=("MultiheadAttention", "multi_head_attention_forward"),
        forbid_ops=("multi_head_attention",)),
]
