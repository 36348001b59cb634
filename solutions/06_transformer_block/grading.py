"""Grading spec for exercise 06 (see autograder/AUTHORING.md). Never released to students.

Inputs and weights are drawn at grading time from a generator the grader seeds with
os.urandom; references come from attnlab.nn (FeedForward, EncoderBlock with the same
weights, count_parameters) and run in the grader, outside the student's sandbox.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from attnlab.nn import EncoderBlock
from attnlab.nn import FeedForward as RefFeedForward
from attnlab.nn import count_parameters as ref_count
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck

A = "06_transformer_block"


def t64(x):
    return torch.as_tensor(x, dtype=torch.float64)


# ------------------------------------------------------------------ FeedForward
def ffn_inputs(rng, trial):
    """Leading axes (B, L), (L,) or none, by trial; relu and gelu alternate."""
    n = trial + 1
    d, d_ff = int(rng.integers(3, 9)), int(rng.integers(4, 17))
    lead = [(int(rng.integers(1, 3)), int(rng.integers(1, 5))), (int(rng.integers(1, 5)),), ()][n % 3]
    return {"x": rng.standard_normal(lead + (d,)) * 1.5, "w1": rng.standard_normal((d_ff, d)) / math.sqrt(d),
            "b1": rng.standard_normal(d_ff) * 0.5, "w2": rng.standard_normal((d, d_ff)) / math.sqrt(d_ff),
            "b2": rng.standard_normal(d) * 0.5, "activation": ["relu", "gelu"][n % 2]}


FFN_SETUP = """
def _ffn_call(cls, I):
    d_ff, d = I['w1'].shape
    try:  # the docstring's Raises: another activation is a ValueError
        cls(d, d_ff, activation='tanh')
        raised = 0.0
    except ValueError:
        raised = 1.0
    except Exception:  # noqa: BLE001 - another error is not the documented ValueError
        raised = 0.0
    ffn = cls(d, d_ff, activation=I['activation'])
    with torch.no_grad():
        ffn.w_1.weight.copy_(I['w1']); ffn.w_1.bias.copy_(I['b1'])
        ffn.w_2.weight.copy_(I['w2']); ffn.w_2.bias.copy_(I['b2'])
        return [ffn(I['x']), raised]
"""


def ref_ffn(x, w1, b1, w2, b2, activation, act=None, raises=True):
    """``[output, 1.0 if activation='tanh' raised ValueError else 0.0]`` (what ``_ffn_call`` returns)."""
    if act is not None:
        h = act(t64(x) @ t64(w1).T + t64(b1))
        return [h @ t64(w2).T + t64(b2), float(raises)]
    ffn = RefFeedForward(w1.shape[1], w1.shape[0], activation=activation).double()
    with torch.no_grad():
        ffn.w_1.weight.copy_(t64(w1)), ffn.w_1.bias.copy_(t64(b1))
        ffn.w_2.weight.copy_(t64(w2)), ffn.w_2.bias.copy_(t64(b2))
        return [ffn(t64(x)), float(raises)]


# ------------------------------------------------------------------ block_forward
def block_inputs(rng, trial):
    """Pre-LN and post-LN alternate by trial."""
    d, h = int(rng.choice([4, 6, 8])), int(rng.choice([1, 2]))
    d_ff, B, L = 2 * d, int(rng.integers(1, 3)), int(rng.integers(2, 6))
    g = lambda *s: rng.standard_normal(s) / math.sqrt(s[-1])  # noqa: E731
    raw = {"x": rng.standard_normal((B, L, d)) * 2.0 + 0.5, "n_heads": h, "norm_first": trial % 2 == 0}
    for name in ("wq", "wk", "wv", "wo"):
        raw[name] = g(d, d)
    for name in ("bq", "bk", "bv", "bo", "b2"):
        raw[name] = rng.standard_normal(d) * 0.3
    raw.update(w1=g(d_ff, d), b1=rng.standard_normal(d_ff) * 0.3, w2=g(d, d_ff),
               g1=1 + 0.3 * rng.standard_normal(d), be1=0.3 * rng.standard_normal(d),
               g2=1 + 0.3 * rng.standard_normal(d), be2=0.3 * rng.standard_normal(d))
    return raw


# Sandbox side: the submodules are built with plain torch (attnlab does not exist there):
# torch's MultiheadAttention holding the same W_Q, W_K, W_V, W_O, an FFN and two LayerNorms.
BLOCK_SETUP = """
class _SelfAttn(nn.Module):
    def __init__(self, I):
        super().__init__()
        d = I['wq'].shape[0]
        self.mha = nn.MultiheadAttention(d, I['n_heads'], batch_first=True)
        with torch.no_grad():
            self.mha.in_proj_weight.copy_(torch.cat([I['wq'], I['wk'], I['wv']]))
            self.mha.in_proj_bias.copy_(torch.cat([I['bq'], I['bk'], I['bv']]))
            self.mha.out_proj.weight.copy_(I['wo']); self.mha.out_proj.bias.copy_(I['bo'])
    def forward(self, query, key=None, value=None, **kwargs):  # called as self_attn(t) or self_attn(q, k, v)
        key = query if key is None else key
        value = key if value is None else value
        return self.mha(query, key, value, need_weights=False)[0], None

def _linear(w, b):
    lin = nn.Linear(w.shape[1], w.shape[0])
    with torch.no_grad():
        lin.weight.copy_(w); lin.bias.copy_(b)
    return lin

def _norm(g, b):
    ln = nn.LayerNorm(g.shape[0])
    with torch.no_grad():
        ln.weight.copy_(g); ln.bias.copy_(b)
    return ln

def _block_call(f, I):
    ffn = nn.Sequential(_linear(I['w1'], I['b1']), nn.ReLU(), _linear(I['w2'], I['b2']))
    with torch.no_grad():
        return f(I['x'], _SelfAttn(I), ffn, _norm(I['g1'], I['be1']), _norm(I['g2'], I['be2']), I['norm_first'])
"""


def _ref_block(raw, norm_first):
    d = raw["wq"].shape[0]
    blk = EncoderBlock(d, raw["n_heads"], raw["w1"].shape[0], norm_first=norm_first).double().eval()
    sa, ffn = blk.self_attn, blk.ffn
    params = {sa.w_q.weight: "wq", sa.w_q.bias: "bq", sa.w_k.weight: "wk", sa.w_k.bias: "bk",
              sa.w_v.weight: "wv", sa.w_v.bias: "bv", sa.w_o.weight: "wo", sa.w_o.bias: "bo",
              ffn.w_1.weight: "w1", ffn.w_1.bias: "b1", ffn.w_2.weight: "w2", ffn.w_2.bias: "b2",
              blk.norm1.weight: "g1", blk.norm1.bias: "be1", blk.norm2.weight: "g2", blk.norm2.bias: "be2"}
    with torch.no_grad():
        for p, name in params.items():
            p.copy_(t64(raw[name]))
    return blk


def ref_block(**raw):
    with torch.no_grad():
        return _ref_block(raw, raw["norm_first"])(t64(raw["x"]))


def _block_variant(raw, kind):
    """What a known mistake computes, from the library block's own submodules."""
    blk = _ref_block(raw, raw["norm_first"])
    x = t64(raw["x"])
    sa = lambda t: blk.self_attn(t)[0]  # noqa: E731
    n1, n2, ffn = blk.norm1, blk.norm2, blk.ffn
    with torch.no_grad():
        if kind == "swapped":
            return _ref_block(raw, not raw["norm_first"])(x)
        if raw["norm_first"]:
            if kind == "residual_from_normalised":
                h = n1(x) + sa(n1(x))
                return n2(h) + ffn(n2(h))
            if kind == "ffn_reads_x":
                h = x + sa(n1(x))
                return h + ffn(n2(x))
            if kind == "one_norm":
                h = x + sa(n1(x))
                return h + ffn(n1(h))
            if kind == "kv_from_stream":  # queries normalised, keys and values from the raw stream
                h = x + blk.self_attn(n1(x), x, x)[0]
                return h + ffn(n2(h))
        else:
            if kind == "normalise_branch":
                h = x + n1(sa(x))
                return h + n2(ffn(h))
            if kind == "ffn_reads_x":
                h = n1(x + sa(x))
                return n2(h + ffn(x))
            if kind == "one_norm":
                h = n1(x + sa(x))
                return n1(h + ffn(h))
    raise ValueError("mistake does not apply to this norm order")


# ------------------------------------------------------------------ counting
_MODULES = """
def _build_module(I):
    with torch.device('meta' if I.get('meta') else 'cpu'):  # meta: shapes only, no storage
        return _build_module_here(I)

def _build_module_here(I):
    kind, a, b, c = I['spec']
    if kind == 0:
        m = nn.Sequential(nn.Linear(a, b), nn.LayerNorm(b), nn.Linear(b, c, bias=False))
    elif kind == 1:
        m = nn.Module()
        m.emb = nn.Embedding(a, b)
        m.head = nn.Linear(b, a, bias=False)
        m.head.weight = m.emb.weight  # tied
        m.norm = nn.LayerNorm(b)
        m.register_buffer('table', torch.zeros(c, b))
    else:
        m = nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, c))
        m.register_buffer('mask', torch.ones(a, a))
    if I['frozen']:
        m[0].requires_grad_(False) if kind != 1 else m.norm.requires_grad_(False)
    return m
"""
COUNT_SETUP = _MODULES + """
def _count_call(f, I):
    m = _build_module(I)
    try:  # the docstring's Raises: a module that is not an nn.Module (a tensor) is a TypeError
        f(torch.zeros(2, 3))
        raised = 0.0
    except TypeError:
        raised = 1.0
    except Exception:  # noqa: BLE001 - another error is not the documented TypeError
        raised = 0.0
    return [f(m), f(m, trainable_only=True), raised]
"""
_grader_ns = {"nn": nn, "torch": torch}
exec(_MODULES, _grader_ns)  # the same builder in the grader, for attnlab's count_parameters


def count_inputs(rng, trial):
    """One module kind per trial (plain, tied embedding with a buffer, with a buffer); trial 2's
    module lives on the meta device (how a large model is counted without allocating it): a
    count that reads storage (data_ptr, untyped_storage) instead of the parameters is caught."""
    return {"spec": [(trial + 1) % 3] + [int(n) for n in rng.integers(2, 12, size=3)], "frozen": True,
            "meta": trial == 2}


def ref_counts(spec, frozen, meta=False, mistake=None, raises=True):
    """Both counts (all parameters, trainable only), then 1.0 if a tensor raised TypeError (``raises``)."""
    return [*_counts(spec, frozen, meta, mistake), float(raises)]


def count_mistake(mistake):
    """The counts of ``mistake``, with the TypeError check kept or left out (the counts name the mistake)."""
    return tuple(_count_model(mistake, flag) for flag in (True, False))


def _count_model(mistake, flag):
    return lambda **r: ref_counts(**r, mistake=mistake, raises=flag)


def _counts(spec, frozen, meta, mistake):
    m = _grader_ns["_build_module"]({"spec": spec, "frozen": frozen, "meta": meta})
    if mistake == "tensors":
        return [float(len(list(m.parameters()))), float(sum(1 for p in m.parameters() if p.requires_grad))]
    if mistake == "ignores_trainable":
        return [ref_count(m), ref_count(m)]
    if mistake == "always_trainable":  # frozen parameters skipped whatever trainable_only says
        return [ref_count(m, trainable_only=True), ref_count(m, trainable_only=True)]
    if mistake == "weights_only":  # only the tensors named *weight: biases (linear and LayerNorm) forgotten
        ps = [p for n, p in m.named_parameters() if n.endswith("weight")]
        return [sum(p.numel() for p in ps), sum(p.numel() for p in ps if p.requires_grad)]
    if mistake == "tied_twice":  # every module's own parameters: a tied matrix counted under both modules
        ps = list(m.named_parameters(remove_duplicate=False))
        return [sum(p.numel() for _, p in ps), sum(p.numel() for _, p in ps if p.requires_grad)]
    if mistake == "state_dict":
        n = sum(t.numel() for t in m.state_dict().values())
        return [n, n]
    return [ref_count(m), ref_count(m, trainable_only=True)]


def block_count_inputs(rng):
    cases = []
    for _ in range(4):
        h = int(rng.choice([1, 2, 4, 8]))
        d = h * int(rng.integers(1, 17))
        cases.append([d, h, d * int(rng.choice([1, 2, 4])) + int(rng.integers(0, 3)), bool(rng.random() < 0.5)])
    cases[0][3], cases[1][3] = True, False
    return {"cases": cases}


def ref_block_counts(cases, drop=None):
    out = []
    for d, h, d_ff, bias in cases:
        with torch.device("meta"):
            blk = EncoderBlock(d, h, d_ff, bias=bias)
        n = ref_count(blk)
        if drop == "w_o":
            n -= d * d + (d if bias else 0)
        elif drop == "norms":
            n -= 2 * d * (2 if bias else 1)
        elif drop == "heads":
            n += (h - 1) * 4 * d * d
        elif drop == "bias_always":
            n = count_with_bias(d, h, d_ff)
        elif drop == "norm_bias_kept" and not bias:  # the two LayerNorms keep their bias
            n += 2 * d
        elif drop == "no_bias":  # biases left out although bias=True
            with torch.device("meta"):
                n = ref_count(EncoderBlock(d, h, d_ff, bias=False))
        out.append(n)
    return np.array(out, dtype=np.float64)


def count_with_bias(d, h, d_ff):
    with torch.device("meta"):
        return ref_count(EncoderBlock(d, h, d_ff, bias=True))


CHECKS = [
    ByHandCheck("test_layernorm_by_hand", variable="ln_out", skill="layernorm_by_hand"),
    ByHandCheck("test_block_params_by_hand", variable="n_params", skill="block_param_count"),
    FunctionCheck(
        "test_feed_forward", target="FeedForward", inputs=ffn_inputs, setup=FFN_SETUP,
        call="_ffn_call(FeedForward, _I)", reference=ref_ffn, trials=4, atol=1e-4,
        mistakes={"activation_not_checked": lambda **r: ref_ffn(**r, raises=False),
                  "ffn_no_activation": lambda **r: ref_ffn(**r, act=lambda h: h),
                  "ffn_activation_ignored": (lambda **r: ref_ffn(**r, act=F.relu),   # always ReLU
                                             lambda **r: ref_ffn(**r, act=F.gelu)),  # always GELU
                  "gelu_tanh_approximation":
                      lambda **r: ref_ffn(**r, act=lambda h: F.gelu(h, approximate="tanh")
                                          if r["activation"] == "gelu" else F.relu(h))},
        forbid_attrs=("TransformerEncoderLayer",)),
    FunctionCheck(
        "test_block_forward", target="block_forward", inputs=block_inputs, setup=BLOCK_SETUP,
        call="_block_call(block_forward, _I)", reference=ref_block, trials=4, atol=1e-4,
        mistakes={"post_ln_as_pre_ln":
                      lambda **r: _block_variant(r, "swapped"),
                  "residual_adds_normalised_input":
                      lambda **r: _block_variant(r, "residual_from_normalised"),
                  "ln_on_sublayer_output":
                      lambda **r: _block_variant(r, "normalise_branch"),
                  "ffn_reads_block_input":
                      lambda **r: _block_variant(r, "ffn_reads_x"),
                  "one_norm_for_both_sublayers": lambda **r: _block_variant(r, "one_norm"),
                  "pre_ln_keys_not_normalised": lambda **r: _block_variant(r, "kv_from_stream")},
        forbid_attrs=("TransformerEncoderLayer", "TransformerEncoder")),
    FunctionCheck(
        "test_count_parameters", target="count_parameters", inputs=count_inputs, setup=COUNT_SETUP,
        call="_count_call(count_parameters, _I)", reference=ref_counts, trials=3, atol=0.0, rtol=0.0,
        mistakes={"module_type_not_checked": lambda **r: ref_counts(**r, raises=False),
                  "count_tensors_not_scalars": count_mistake("tensors"),
                  "count_ignores_trainable_only": count_mistake("ignores_trainable") + count_mistake("always_trainable"),
                  "tied_head_counted_twice": count_mistake("tied_twice"),
                  "params_without_bias": count_mistake("weights_only"),
                  "count_state_dict": count_mistake("state_dict")}),
    FunctionCheck(
        "test_count_block_parameters", target="count_block_parameters", inputs=block_count_inputs,
        call="[count_block_parameters(*c[:3], bias=c[3]) for c in _I['cases']]", reference=ref_block_counts,
        trials=2, atol=0.0, rtol=0.0,
        mistakes={"forget_w_o": lambda cases: ref_block_counts(cases, "w_o"),
                  "forget_layernorm_params": lambda cases: ref_block_counts(cases, "norms"),
                  "params_times_heads": lambda cases: ref_block_counts(cases, "heads"),
                  "params_without_bias": lambda cases: ref_block_counts(cases, "no_bias"),
                  "count_bias_when_disabled": (lambda cases: ref_block_counts(cases, "bias_always"),
                                               lambda cases: ref_block_counts(cases, "norm_bias_kept"))},
        forbid_attrs=("TransformerEncoderLayer", "TransformerEncoder", "MultiheadAttention")),  # by formula
]
