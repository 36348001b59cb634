"""Grading spec for exercise 10 (see autograder/AUTHORING.md). Never released to students.

Configurations are drawn at grading time from a generator the grader seeds with os.urandom.
References run in the grader: memory from the bytes of real tensors / attnlab's KVCache on
small cases and the same formula on large ones, FLOPs from torch's FlopCounterMode on
attnlab's MultiHeadAttention, parameters from attnlab.nn.count_parameters on the same module
the sandbox builds.
"""
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from attnlab.nn import KVCache, MultiHeadAttention
from attnlab.nn import count_parameters as ref_count
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck

A = "10_costs_and_limits"


def as_int(x):
    return torch.tensor(int(x), dtype=torch.float64)  # exact for the sizes drawn here (< 2**53)


# ------------------------------------------------------------------ attention weights
def score_inputs(rng, trial):
    """Trial 0 small (the reference allocates the tensor); trial 1 large, with B >= 3 (a count that
    forgets the batch, or reads B = 2 as a factor, shows)."""
    if trial == 0:
        return {"B": int(rng.integers(1, 4)), "H": int(rng.integers(1, 5)), "L": int(rng.integers(2, 40)),
                "dtype_bytes": int(rng.choice([2, 4, 8]))}
    return {"B": int(rng.integers(3, 33)), "H": int(rng.choice([8, 12, 16, 32])), "L": int(rng.choice([512, 2048, 8192])),
            "dtype_bytes": 2}


def score_ref(B, H, L, dtype_bytes):
    if B * H * L * L <= 50_000:
        dtype = {2: torch.float16, 4: torch.float32, 8: torch.float64}[dtype_bytes]
        w = torch.zeros(B, H, L, L, dtype=dtype)
        return as_int(w.numel() * w.element_size())
    return as_int(B * H * L * L * dtype_bytes)


# ------------------------------------------------------------------ KV cache
def kv_inputs(rng, trial):
    """Trial 0 small (real caches are filled), n_layers and B never 2 (forgetting either would look like
    the missing factor 2 of K and V); trial 1 large, B >= 3 (a count that forgets the batch shows)."""
    if trial == 0:
        H = int(rng.integers(1, 4))
        return {"n_layers": int(rng.choice([1, 3])), "B": int(rng.choice([1, 3])), "t": int(rng.integers(1, 12)),
                "d_model": H * int(rng.integers(1, 5)), "bytes_per": 4}
    return {"n_layers": int(rng.integers(6, 81)), "B": int(rng.integers(3, 65)), "t": int(rng.choice([1024, 4096, 32768])),
            "d_model": int(rng.choice([768, 4096, 8192])), "bytes_per": int(rng.choice([1, 2, 4]))}


def kv_ref(n_layers, B, t, d_model, bytes_per):
    if n_layers * B * t * d_model <= 50_000 and bytes_per == 4:
        total = 0
        for _ in range(n_layers):  # one real cache per layer, filled with t positions
            c = KVCache()
            c.update(torch.zeros(B, 1, t, d_model), torch.zeros(B, 1, t, d_model))
            total += c.k.numel() * c.k.element_size() + c.v.numel() * c.v.element_size()
        return as_int(total)
    return as_int(2 * n_layers * B * t * d_model * bytes_per)


# ------------------------------------------------------------------ FLOPs
def flops_inputs(rng, trial):
    """Trial 0: self-attention (S = L); trials 1, 2: cross-attention with S != L, B >= 2 and H >= 2 (a
    count right only for self-attention, one sequence or one head shows)."""
    H = int(rng.choice([1, 2, 3, 4])) if trial == 0 else int(rng.choice([2, 3, 4]))
    L = int(rng.integers(1, 9))
    S = L if trial == 0 else int(rng.choice([n for n in range(1, 9) if n != L]))
    return {"B": int(rng.integers(1, 4)) if trial == 0 else int(rng.integers(2, 4)), "L": L, "S": S,
            "d_model": H * int(rng.integers(1, 5)), "n_heads": H}


def flops_ref(B, L, S, d_model, n_heads):
    mha = MultiHeadAttention(d_model, n_heads)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        mha(torch.zeros(B, L, d_model), torch.zeros(B, S, d_model), torch.zeros(B, S, d_model), need_weights=True)
    return as_int(counter.get_total_flops())


# ------------------------------------------------------------------ parameters
MODULE_SETUP = '''
def _grader_module(I):
    with torch.device("meta" if I.get("meta") else "cpu"):  # meta: shapes only, no storage
        return _grader_module_here(I)

def _grader_module_here(I):
    V, d, h = I["V"], I["d"], I["h"]
    torch.manual_seed(0)
    m = nn.ModuleDict({"emb": nn.Embedding(V, d), "mlp": nn.Sequential(nn.Linear(d, h), nn.GELU(), nn.Linear(h, d)),
                       "norm": nn.LayerNorm(d), "head": nn.Linear(d, V, bias=False)})
    if I["tie"]:
        m["head"].weight = m["emb"].weight
    m.register_buffer("mask", torch.ones(I["buf"], I["buf"], dtype=torch.bool))
    if I["freeze"]:
        m["norm"].requires_grad_(False)
        m["emb"].weight.requires_grad_(False)
    return m
'''


def params_inputs(rng, trial):
    """Trial 0 tied, on the meta device (shapes only: a count reading storage is caught); trial 1 untied
    with frozen parts counted (trainable_only=False: a count that always skips frozen ones shows);
    trial 2 tied with frozen parts skipped (trainable_only=True)."""
    return {"V": int(rng.integers(3, 30)), "d": int(rng.integers(2, 9)), "h": int(rng.integers(2, 20)),
            "tie": trial != 1, "buf": int(rng.integers(2, 9)), "freeze": trial >= 1, "trainable_only": trial >= 2,
            "meta": trial == 0}


PARAMS_CALL = '''
def _params_call(f, I):
    n = f(_grader_module(I), trainable_only=I['trainable_only'])
    try:  # the docstring's Raises: a module that is not an nn.Module (a tensor) is a TypeError
        f(torch.zeros(2, 3))
        raised = False
    except TypeError:
        raised = True
    except Exception:  # noqa: BLE001 - another error is not the documented TypeError
        raised = False
    return n, raised
'''


def either_raise(model):
    """``model``'s count with the TypeError check kept or left out (the count names the mistake)."""
    return tuple(_with_flag(model, flag) for flag in (True, False))


def _with_flag(model, flag):
    return lambda **i: (model(**i), flag)


def params_ref(trainable=None, weights_only=False, **inp):
    """The course's count; ``trainable`` True/False: the count as if trainable_only were that value;
    ``weights_only``: only the tensors named ``*weight`` (the biases forgotten)."""
    ns = {"torch": torch, "nn": nn}
    exec(MODULE_SETUP, ns)  # the same course-written module builder as in the sandbox
    only = inp["trainable_only"] if trainable is None else trainable
    m = ns["_grader_module"](inp)
    if weights_only:
        return as_int(sum(p.numel() for n, p in m.named_parameters()
                          if n.endswith("weight") and (p.requires_grad or not only)))
    return as_int(ref_count(m, trainable_only=only))


CHECKS = [
    ByHandCheck("test_memory_by_hand", variable="weight_bytes", skill="attention_memory"),
    ByHandCheck("test_flops_by_hand", variable="flops", skill="attention_flops"),
    FunctionCheck(
        "test_attention_score_bytes", target="attention_score_bytes", inputs=score_inputs, trials=2, rtol=0, atol=0,
        call="attention_score_bytes(_I['B'], _I['H'], _I['L'], _I['dtype_bytes'])", reference=score_ref,
        mistakes={"scores_forget_heads": lambda B, H, L, dtype_bytes: as_int(B * L * L * dtype_bytes),
                  "scores_linear_in_length": lambda B, H, L, dtype_bytes: as_int(B * H * L * dtype_bytes),
                  "forget_batch": lambda B, H, L, dtype_bytes: as_int(H * L * L * dtype_bytes)}),
    FunctionCheck(
        "test_kv_cache_bytes", target="kv_cache_bytes", inputs=kv_inputs, trials=2, rtol=0, atol=0,
        call="kv_cache_bytes(_I['n_layers'], _I['B'], _I['t'], _I['d_model'], _I['bytes_per'])", reference=kv_ref,
        mistakes={"kv_forget_factor_two": lambda **i: as_int(kv_ref(**i) / 2),
                  "forget_layers": lambda **i: as_int(kv_ref(**i) / i["n_layers"]),
                  "forget_batch": lambda **i: as_int(kv_ref(**i) / i["B"])}),
    FunctionCheck(
        "test_mha_flops", target="mha_flops", inputs=flops_inputs, trials=3, rtol=0, atol=0,
        call="mha_flops(_I['B'], _I['L'], _I['S'], _I['d_model'], _I['n_heads'])", reference=flops_ref,
        mistakes={"kv_times_heads":
                  lambda B, L, S, d_model, n_heads: as_int(4 * B * (L + S) * d_model**2 + 4 * B * L * S * d_model * n_heads),
                  "flops_forget_factor_two": lambda **i: as_int(flops_ref(**i) / 2),
                  "keys_length_from_queries": (  # everything on the L queries; or only K, V projected from L
                      lambda **i: flops_ref(**{**i, "S": i["L"]}),
                      lambda B, L, S, d_model, n_heads: as_int(8 * B * L * d_model**2 + 4 * B * L * S * d_model)),
                  "forget_batch": lambda **i: as_int(flops_ref(**i) / i["B"])},
        forbid_attrs=("FlopCounterMode", "flop_counter")),
    FunctionCheck(
        "test_count_parameters", target="count_parameters", inputs=params_inputs, trials=3, rtol=0, atol=0,
        setup=MODULE_SETUP + PARAMS_CALL, call="_params_call(count_parameters, _I)",
        reference=lambda **i: (params_ref(**i), True),
        mistakes={"module_type_not_checked": lambda **i: (params_ref(**i), False),
                  "count_state_dict": either_raise(
                      lambda **i: as_int(sum(t.numel() for t in _module(i).state_dict().values()))),
                  "count_ignores_trainable_only": (either_raise(lambda **i: params_ref(trainable=False, **i))  # never skips
                                                   + either_raise(lambda **i: params_ref(trainable=True, **i))),  # always
                  "params_without_bias": either_raise(lambda **i: params_ref(weights_only=True, **i))}),
]
TIMEOUT = 10


def _module(inp):
    ns = {"torch": torch, "nn": nn}
    exec(MODULE_SETUP, ns)
    return ns["_grader_module"](inp)
