"""Exercise 09's assembled GPT, judged part by part (see grading.py): the sandbox helpers that load
the grader's weights into a student module by parameter name and put the course's attention and
blocks in place of the student's, the three parts' trial inputs, their references on ``attnlab.nn``
and the named mistakes made on those references.  Loaded by grading.py with
``attnlab_grader.judging.spec.load_sibling``; never released to students (nbgrader ignores ``grading_*.py``).
"""
import contextlib
import math
from dataclasses import replace

import torch
from torch import nn

from attnlab.nn import GPT, GPTConfig, MultiHeadAttention
from attnlab_grader.judging.reference_gpt import GPT_SETUP
from attnlab_grader.judging.spec import FunctionCheck, Verdict, mistake_verdict


# ------------------------------------------------------------------ the assembled GPT: sandbox helpers
#: TinyGPT's parameter names -> attnlab.nn.GPT's (the exercise's table says which is which).
_TO_GPT = (("pos_emb.", "pos_emb.emb."), (".attn.", ".self_attn."), (".w_1.", ".ffn.w_1."), (".w_2.", ".ffn.w_2."),
           (".norm2.", ".norm3."))

#: Sandbox helpers of the three parts.  ``_load_params`` loads the grader's weights into a student
#: module by parameter name: buffers (a registered causal-mask table, nanoGPT's way) are the
#: module's own business, which a strict ``load_state_dict`` would refuse although the model is
#: right.  The adapters put the course's own attention and block (``attnlab.nn``'s source, shipped
#: by ``GPT_SETUP``) in place of the student's, holding the same weights, so that each part is
#: judged on its own: a wrong attention costs the attention's points, not the block's and model's.
LOAD_SETUP = f"\n_TO_GPT_PAIRS = {_TO_GPT!r}\n" + '''
def _load_params(module, I, skip=None):
    params = dict(module.named_parameters())
    for key, value in I.items():
        if not key.startswith("w:") or (skip and key[2:].startswith(skip)):
            continue
        name = key[2:]
        if name not in params:
            raise KeyError(f"the module has no parameter {name!r}: keep the __init__ as given "
                           "(the grader loads its weights by these names)")
        if tuple(params[name].shape) != tuple(value.shape):
            raise ValueError(f"the parameter {name!r} has shape {tuple(params[name].shape)}, "
                             f"expected {tuple(value.shape)}: keep the __init__ as given")
        with torch.no_grad():
            params[name].copy_(value)
    return ";".join(f"{n}:{list(p.shape)}" for n, p in params.items()
                    if "w:" + n not in I and not (skip and n.startswith(skip)))


'''
PARTS_SETUP = GPT_SETUP + LOAD_SETUP + '''
class _CourseAttention(nn.Module):
    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, x, *args, **kwargs):
        return self.mha(x, is_causal=True)[0]


class _CourseBlock(nn.Module):
    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x, *args, **kwargs):
        return self.block(x, is_causal=True)


def _course_blocks(I, n_layers, under="blocks."):
    g = _GraderGPT(2, I["T"], I["d"], I["H"], n_layers)
    params = dict(g.named_parameters())
    for key, value in I.items():
        if key.startswith("w:" + under):
            name = key[2:] if under == "blocks." else "blocks.0." + key[2:]  # under="": one block's names
            for tiny, gpt in _TO_GPT_PAIRS:
                name = name.replace(tiny, gpt)
            with torch.no_grad():
                params[name].copy_(value)
    return g.blocks
'''


# ------------------------------------------------------------------ the assembled GPT, part by part
ATTN_SETUP = LOAD_SETUP + '''  # the attention needs no course model
def _run_attention(I):
    m = CausalSelfAttention(I["d"], I["H"])
    _load_params(m, I)
    m.eval()
    with torch.no_grad():
        if not I["long"]:
            return m(I["x"])
        try:  # the long trial: an error only here is the signature of a fixed-size mask table
            return m(I["x"])
        except (RuntimeError, IndexError, ValueError) as err:
            return {"raised": type(err).__name__, "message": str(err)[:300]}
'''

BLOCK_SETUP = PARTS_SETUP + '''
def _run_block(I):
    b = Block(I["d"], I["H"])
    _load_params(b, I)
    b.attn = _CourseAttention(_course_blocks(I, 1, under="")[0].self_attn)  # judged without your attention
    b.eval()
    with torch.no_grad():
        return b(I["x"])
'''

MODEL_SETUP = PARTS_SETUP + '''
def _run_model(I):
    m = TinyGPT(I["V"], I["T"], I["d"], I["H"], I["n_layers"])
    extra = _load_params(m, I, skip="blocks.")
    course = _course_blocks(I, I["n_layers"])
    for i in range(I["n_layers"]):
        m.blocks[i] = _CourseBlock(course[i])  # judged without your blocks
    m.eval()
    with torch.no_grad():
        out = m(I["idx"], I["y"])
        plain = m(I["idx"])
    if not (isinstance(out, tuple) and len(out) == 2 and isinstance(plain, tuple) and len(plain) == 2):
        return ("returned " + type(out).__name__ + ": TinyGPT(idx, targets) must return the pair (logits, loss) "
                "and TinyGPT(idx) the pair (logits, None), as attnlab.nn.GPT does")
    return out[0], out[1], plain[1] is None, extra
'''


def _draw_weights(rng, V, T, d, H, n_layers):
    """Random weights for TinyGPT's parameters (its names), large enough that the 1/sqrt(d_k)
    scale, the causal mask, the LayerNorms' gains and the GELU's shape change every output."""
    out = {}
    for name, p in GPT(GPTConfig(V, T, d, H, n_layers)).state_dict().items():
        if name == "lm_head.weight":
            continue
        shape = tuple(p.shape)
        if "norm" in name:
            out[_tiny_name(name)] = (1.0 if name.endswith("weight") else 0.0) + 0.3 * rng.standard_normal(shape)
        elif "emb" in name:
            out[_tiny_name(name)] = rng.standard_normal(shape)
        else:
            out[_tiny_name(name)] = 0.5 * rng.standard_normal(shape)
    return out


def _sizes(rng):
    H, d_k = int(rng.choice([2, 3, 4])), int(rng.integers(2, 5))  # H, d_k >= 2: head layout and scale matter
    return H, d_k, H * d_k


def attention_inputs(rng, trial):
    """Trial 0 has a batch of 2 or 3 (a batch axis moved with the heads shows); trial 1 is long (65-80
    positions): a mask sliced from a fixed 16 x 16 or 64 x 64 table fails there."""
    H, _, d = _sizes(rng)
    L = int(rng.integers(3, 13)) if trial == 0 else int(rng.integers(65, 81))
    w = _draw_weights(rng, 2, 2, d, H, 1)
    inp = {"w:" + k[len("blocks.0.attn."):]: v for k, v in w.items() if k.startswith("blocks.0.attn.")}
    B = int(rng.integers(2, 4)) if trial == 0 else int(rng.integers(1, 4))
    inp.update({"d": d, "H": H, "L": L, "long": trial == 1, "x": rng.standard_normal((B, L, d))})
    return inp


def block_inputs(rng):
    H, _, d = _sizes(rng)
    L = int(rng.integers(3, 10))
    w = _draw_weights(rng, 2, L, d, H, 1)
    inp = {"w:" + k[len("blocks.0."):]: v for k, v in w.items() if k.startswith("blocks.0.")}
    inp.update({"d": d, "H": H, "T": L, "x": rng.standard_normal((int(rng.integers(2, 4)), L, d))})  # B >= 2
    return inp


def model_inputs(rng, trial):
    """Trial 0: fewer positions than block_size (positions off by one show as shifted rows); trial 1:
    the full context (they run off the table)."""
    H, _, d = _sizes(rng)
    T, V = int(rng.integers(5, 11)), int(rng.integers(5, 16))
    n_layers = 2 if trial == 1 else int(rng.integers(1, 3))  # forced: chaining mistakes need two blocks
    L = T if trial == 1 else int(rng.integers(3, T))
    B = int(rng.integers(2, 4))
    inp = {"w:" + k: v for k, v in _draw_weights(rng, V, T, d, H, n_layers).items()}
    inp.update({"V": V, "T": T, "d": d, "H": H, "n_layers": n_layers,
                "idx": rng.integers(0, V, size=(B, L)), "y": rng.integers(0, V, size=(B, L))})
    return inp


def _tiny_name(gpt_name):
    for tiny, gpt in _TO_GPT:
        gpt_name = gpt_name.replace(gpt, tiny)
    return gpt_name


def _gpt_name(tiny_name):
    for tiny, gpt in _TO_GPT:
        tiny_name = tiny_name.replace(tiny, gpt)
    return tiny_name


def _state(inp, to=lambda k: k):
    """The drawn weights as float64 tensors (as the sandbox receives them: float32), renamed by ``to``."""
    return {to(k[2:]): torch.as_tensor(v, dtype=torch.float32).double() for k, v in inp.items() if k.startswith("w:")}


# The mistakes are made on the course's own modules: their weights, their switches, or one of the
# functions attnlab.nn.mha calls (split_heads, merge_heads, causal_mask, scaled_dot_product_attention)
# replaced while the reference runs.  Never a second, hand-kept model.
def _split_without_transpose(x, n_heads):  # (B, L, d) read straight as (B, H, L, d_k)
    B, L, d = x.shape
    return x.reshape(B, n_heads, L, d // n_heads)


def _merge_without_transpose(x):  # (B, H, L, d_k) read straight as (B, L, H * d_k)
    B, H, L, d_k = x.shape
    return x.reshape(B, L, H * d_k)


def _sdpa_softmax_over(dim):
    def sdpa(q, k, v, mask=None, dropout_p=0.0):
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=dim)
        return weights @ v, weights
    return sdpa


def _upper_causal(L, S=None, device=None):
    S = L if S is None else S
    return torch.ones(L, S, dtype=torch.bool, device=device).triu()


@torch.no_grad()
def attention_ref(mistake=None, **inp):
    """The course's causal multi-head attention (``attnlab.nn.MultiHeadAttention(is_causal=True)``)
    on ``x`` with the drawn weights, or a named mistake made on it."""
    from unittest import mock

    import attnlab.nn.mha as mha_module
    mha = MultiHeadAttention(inp["d"], inp["H"]).double().eval()
    mha.fused = False  # the explicit path, whose pieces the mistakes replace
    state = _state(inp)
    d_k = inp["d"] // inp["H"]
    factor = {"no_scale": math.sqrt(d_k), "scale_by_d_model": math.sqrt(d_k / inp["d"]),
              "scale_by_dk": 1 / math.sqrt(d_k)}.get(mistake)
    if factor is not None:  # Q scaled by f: the scores are divided by sqrt(d_k) / f
        state["w_q.weight"], state["w_q.bias"] = state["w_q.weight"] * factor, state["w_q.bias"] * factor
    if mistake == "keys_projected_with_w_q":
        state["w_k.weight"], state["w_k.bias"] = state["w_q.weight"], state["w_q.bias"]
    mha.load_state_dict(state)
    patches = {"split_without_transpose": {"split_heads": _split_without_transpose},
               "both_without_transpose": {"split_heads": _split_without_transpose,
                                          "merge_heads": _merge_without_transpose},
               "merge_without_transpose": {"merge_heads": _merge_without_transpose},
               "softmax_over_queries": {"scaled_dot_product_attention": _sdpa_softmax_over(-2)},
               "softmax_over_heads": {"scaled_dot_product_attention": _sdpa_softmax_over(1)},
               "causal_upper_triangle": {"causal_mask": _upper_causal}}.get(mistake, {})
    with mock.patch.multiple(mha_module, **patches) if patches else contextlib.nullcontext():
        return mha(torch.as_tensor(inp["x"], dtype=torch.float32).double(), is_causal=mistake != "no_causal")[0]


@torch.no_grad()
def block_ref(mistake=None, **inp):
    """The course's pre-LN block (``attnlab.nn.GPT``'s ``DecoderBlock``) on ``x`` with the drawn
    weights, or a named mistake made on it."""
    model = GPT(GPTConfig(2, inp["T"], inp["d"], inp["H"], 1)).double().eval()
    block = model.blocks[0]
    block.load_state_dict(_state(inp, lambda k: _gpt_name("blocks.0." + k)[len("blocks.0."):]))
    x = torch.as_tensor(inp["x"], dtype=torch.float32).double()

    def attn(h):
        return block.self_attn(h, is_causal=True)[0]
    if mistake == "post_ln":
        block.norm_first = False
    elif mistake == "relu":
        block.ffn.act = torch.relu
    elif mistake == "gelu_tanh":
        block.ffn.act = lambda h: torch.nn.functional.gelu(h, approximate="tanh")
    elif mistake == "no_activation":
        block.ffn.act = lambda h: h
    elif mistake == "one_norm":
        block.norm3 = block.norm1
    elif mistake == "residual_adds_normalised":
        n = block.norm1(x)
        h = n + attn(n)
        return h + block.ffn(block.norm3(h))
    elif mistake == "ffn_reads_input":
        return x + attn(block.norm1(x)) + block.ffn(block.norm3(x))
    return block(x, is_causal=True)


@torch.no_grad()
def model_ref(mistake=None, **inp):
    """``(logits, loss, True)`` of ``attnlab.nn.GPT`` holding the drawn weights (True: without
    targets the loss is None), or of a named mistake made on it."""
    model = GPT(GPTConfig(inp["V"], inp["T"], inp["d"], inp["H"], inp["n_layers"])).double().eval()
    state = _state(inp, _gpt_name)
    state["lm_head.weight"] = state["tok_emb.weight"]
    if mistake == "no_positions":
        state["pos_emb.emb.weight"] = torch.zeros_like(state["pos_emb.emb.weight"])
    elif mistake == "positions_off_by_one":  # positions 1 .. L: row t holds the vector of t + 1
        pos = state["pos_emb.emb.weight"]
        state["pos_emb.emb.weight"] = torch.cat([pos[1:], torch.full_like(pos[:1], float("nan"))])
    model.load_state_dict(state)
    if mistake == "no_final_norm":
        model.norm_f = nn.Identity()
    idx, y = torch.as_tensor(inp["idx"]), torch.as_tensor(inp["y"])
    logits, loss = model(idx, y)
    F = torch.nn.functional
    if mistake == "loss_summed":
        loss = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="sum")
    elif mistake == "loss_last_position":
        loss = F.cross_entropy(logits[:, -1], y[:, -1])
    elif mistake == "targets_shifted_again":  # the targets are already the next tokens
        loss = F.cross_entropy(logits[:, :-1].flatten(0, 1), y[:, 1:].flatten())
    return logits, loss, True


class PartCheck(FunctionCheck):
    """A part of the assembled GPT (attention, block or model), judged on its own.  Beyond the
    comparison with the course's module and the named mistakes made on it, the sandbox's trial
    signature is read: an error only on the long trial (a fixed-size mask table), a model that
    returns no loss, an extra ``(V, d_model)`` parameter (an untied output layer)."""

    def judge(self, value, raw, student):
        if isinstance(value, dict) and set(value) == {"raised", "message"}:  # the long trial's error, as a record
            what = f"raised {value['raised']}: {value['message']}"
            if raw.get("long"):
                out = mistake_verdict(self.target, ("fixed_size_mask_buffer",))
                return replace(out, reason=f"{out.message} (it worked on short sequences and on {raw['L']} positions "
                                           f"it {what}; a table of at least block_size positions, or a mask built "
                                           "for L, is right)")
            return Verdict(False, f"{self.target}: {what}")
        if isinstance(value, tuple) and len(value) == 4:  # the model: (logits, loss, no-target loss is None, extras)
            logits, loss, plain_none, extra = value
            if loss is None:
                return Verdict(False, "TinyGPT(idx, targets) returned no loss: with targets, return the mean "
                                      "cross-entropy of the logits against them, F.cross_entropy(logits.view(B * L, V), "
                                      "targets.view(B * L)), as attnlab.nn.GPT does")
            if plain_none is not True:
                return Verdict(False, "TinyGPT(idx) without targets must return (logits, None): the loss is None "
                                      "when there are no targets")
            out = super().judge((logits, loss, plain_none), raw, student)
            untied = [e for e in str(extra).split(";") if e.endswith(f"[{raw['V']}, {raw['d']}]")]
            if not out.ok and out.mistake is None and untied:
                return mistake_verdict(self.target, ("untied_output_layer",))
            return out
        return super().judge(value, raw, student)


def _models(ref, **switches):
    """``FunctionCheck.mistakes`` for mistakes made on the course's module by ``ref(switch, **inputs)``:
    catalogue name -> one switch, or a tuple of switches when one mistake can be made several ways."""
    def model(switch):
        return lambda **inp: ref(switch, **inp)
    return {name: tuple(model(s) for s in sw) if isinstance(sw, tuple) else model(sw) for name, sw in switches.items()}


_PART_FORBID = ("MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer",
                "multi_head_attention_forward")
