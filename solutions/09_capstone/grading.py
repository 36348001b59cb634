"""Grading spec for exercise 09 (see autograder/AUTHORING.md). Never released to students.

Inputs are drawn at grading time from a generator the grader seeds with os.urandom.
The sandbox has no attnlab and no files, so the GPT used by ``train_step`` and by the
training run is built there from ``GPT_SETUP`` (``attnlab.nn.GPT``'s own source, shipped by
autograder/sandbox_gpt.py, parity tested), and the Tiny Shakespeare slice
travels as an input (token ids encoded by the grader with ``attnlab.data.CharTokenizer``).

* ``get_batch``: properties judged in the grader (windows of data, shift, coverage of all
  start positions, reproducible with a generator), since any uniform draw is correct.
* ``train_step``: one step on a float64 GPT with stale gradients present and a small
  ``grad_clip``; the loss and updated weights are compared with the same step done in the
  grader on ``attnlab.nn.GPT`` with the same weights.
* training run: STEPS steps of the student's train_step in the sandbox, on batches the grader's own
  copy of ``attnlab.data.get_batch`` draws there (``get_batch`` is judged by its own item: a
  correct get_batch that draws its windows another way would otherwise train on other batches,
  and 80 steps on other batches move the loss by up to about 0.3 nats); only the *weights* come back.  The grader loads them into ``attnlab.nn.GPT`` and measures the loss on
  held-out text the sandbox never received, with its own batches; the course's get_batch and
  train_step run the same recipe (slice, seed, model, optimiser, steps) in the grader, once per
  grading process, and the student's held-out loss must be within TOLERANCE nats of that run
  (paired on the same slice: a threshold against the character-frequency model alone let a
  train_step without zero_grad through on about 1 slice in 10).  Nothing the student's code
  returns or reports (a loss, the model's own forward) is trusted: a train_step that changes
  nothing leaves initial weights, whatever it claims.  Separation: see ``RUN_CFG``.
* ``TinyGPT``: the student's assembled model (causal multi-head attention, pre-LN blocks with a GELU
  FFN, positions, final LayerNorm, tied output layer) is built with fresh sizes, loaded with random
  weights (large enough that the 1/sqrt(d_k) scale and the causal mask change every logit), and its
  logits are compared with ``attnlab.nn.GPT`` holding the same weights. Named mistakes are made on
  the reference model itself (its weights or its block switches), never with a second model.
"""
import math

import numpy as np
import torch
from torch import nn

from attnlab.data import CharTokenizer, load_shakespeare
from attnlab.nn import GPT, FeedForward, GPTConfig
from attnlab.nn import sample_next_token as ref_sample
from autograder.sandbox_gpt import GPT_SETUP
from autograder.spec import ByHandCheck, FunctionCheck, Outcome

A = "09_capstone"
TOLERANCE = 0.25  # nats above the grader's reference run on the same slice, seed and steps
STEPS = 80
BATCH = 32




class JudgedCheck(FunctionCheck):
    """A FunctionCheck whose verdict comes from ``verdict(value, **raw) -> message | None``
    (None = correct) instead of a comparison with one reference value."""

    def __init__(self, *args, verdict, ok_message, **kwargs):
        super().__init__(*args, reference=lambda **raw: None, **kwargs)
        self.verdict, self.ok_message = verdict, ok_message

    def judge(self, value, raw, student):
        try:
            msg = self.verdict(value, **raw)
        except Exception as err:  # noqa: BLE001 - a malformed return value
            msg = f"{self.target}: unexpected return value ({type(err).__name__}: {err})"
        return Outcome(True, self.ok_message) if msg is None else Outcome(False, msg)


# ------------------------------------------------------------------ get_batch
BATCH_SETUP = '''
def _grader_batches(I):
    data = I["data"]
    a = get_batch(data, I["L"], I["B"], torch.Generator().manual_seed(I["seed"]))
    b = get_batch(data, I["L"], I["B"], torch.Generator().manual_seed(I["seed"]))
    c = get_batch(data, I["L"], I["B"], torch.Generator().manual_seed(I["seed"] + 1))
    return (a[0], a[1], b[0], c[0], str(a[0].dtype), str(a[1].dtype))
'''


def batch_inputs(rng):
    N, L = int(rng.integers(12, 30)), int(rng.integers(2, 7))
    return {"data": rng.permutation(1000)[:N], "L": L, "B": 40 * (N - L), "seed": int(rng.integers(1 << 30))}


def batch_verdict(value, data, L, B, seed):
    if not isinstance(value, tuple) or len(value) != 6:
        return "get_batch must return a pair (x, y) of tensors"
    x, y, x_again, x_other, x_dtype, y_dtype = value
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
        return "get_batch must return a pair (x, y) of tensors"
    if x.shape != (B, L) or y.shape != (B, L):
        return f"x and y must be (batch_size, block_size) = {(B, L)}, got {x.shape} and {y.shape}"
    if x_dtype != "torch.int64" or y_dtype != "torch.int64":
        return f"x and y must be long (int64) token ids, got {x_dtype} and {y_dtype}"
    pos = {int(tok): i for i, tok in enumerate(data)}  # the tokens of data are distinct
    starts = set()
    for row_x, row_y in zip(x.astype(np.int64), y.astype(np.int64), strict=True):
        s = pos.get(int(row_x[0]))
        if s is None or s + L > len(data) or not np.array_equal(row_x, data[s:s + L]):
            return "a row of x is not a contiguous window of data"
        if s + L + 1 > len(data) or not np.array_equal(row_y, data[s + 1:s + L + 1]):
            if np.array_equal(row_y, row_x):
                return "y equals x: the targets must be the window shifted by one position"
            return "a row of y is not the window of x shifted by one (y[:, t] must be data[start + t + 1])"
        starts.add(s)
    if not np.array_equal(x, x_again):
        return "two calls with the same generator seed gave different batches: draw the starts with generator=generator"
    if np.array_equal(x, x_other):
        return "two different generator seeds gave the same batch"
    missing = sorted(set(range(len(data) - L)) - starts)
    if missing:
        return (f"with N = {len(data)} and block_size = {L}, start positions {missing[:5]} never occurred in "
                f"{B} windows: every start whose window and targets fit must be possible")
    return None


# ------------------------------------------------------------------ train_step
STEP_SETUP = GPT_SETUP + '''
def _grader_step(I):
    torch.manual_seed(0)
    m = _GraderGPT(*I["cfg"])
    m.load_state_dict({k[2:]: v for k, v in I.items() if k.startswith("w:")})
    m = m.double().train()
    for name, p in m.named_parameters():
        p.grad = I["g:" + name].double()  # stale gradients of a previous step
    opt = torch.optim.SGD(m.parameters(), lr=I["lr"])
    loss = train_step(m, opt, I["x"], I["y"], grad_clip=I["clip"])
    state = m.state_dict()
    return loss, torch.cat([state[k].flatten() for k in sorted(state)])
'''


def _ref_model(inp):
    model = GPT(GPTConfig(*inp["cfg"])).double().train()
    state = {k[2:]: torch.as_tensor(v, dtype=torch.float32).double() for k, v in inp.items() if k.startswith("w:")}
    state["lm_head.weight"] = state["tok_emb.weight"]
    model.load_state_dict(state)
    return model


def step_inputs(rng, trial):
    """Trial 0: a small ``grad_clip`` (clipping acts: a missing clip is caught); trial 1: a clip far
    above the gradient's norm (clipping does nothing), so a gradient of the wrong size -- the loss
    counted twice, backward() called twice -- changes the update instead of being clipped away."""
    V, H = int(rng.integers(5, 13)), int(rng.choice([1, 2]))
    d, n_layers, L = H * int(rng.integers(2, 5)), int(rng.integers(1, 3)), int(rng.integers(3, 8))
    inp = {"cfg": [V, L, d, H, n_layers]}
    ref = GPT(GPTConfig(V, L, d, H, n_layers))
    for name, p in ref.state_dict().items():
        if name != "lm_head.weight":
            base = 1.0 if "norm" in name and name.endswith("weight") else 0.0
            inp["w:" + name] = base + 0.3 * rng.standard_normal(tuple(p.shape))
    for name, p in ref.named_parameters():
        inp["g:" + name] = rng.standard_normal(tuple(p.shape))
    B = int(rng.integers(1, 4))
    inp.update({"x": rng.integers(0, V, size=(B, L)), "y": rng.integers(0, V, size=(B, L)),
                "lr": float(rng.uniform(0.05, 0.5)),
                "clip": float(rng.uniform(0.01, 0.1)) if trial == 0 else 1e6})
    return inp


def step_ref(clip_first=False, no_clip=False, no_zero=False, loss_scale=1.0, **inp):
    model = _ref_model(inp)
    for name, p in model.named_parameters():
        p.grad = torch.as_tensor(inp["g:" + name], dtype=torch.float32).double()
    opt = torch.optim.SGD(model.parameters(), lr=inp["lr"])
    if not no_zero:
        opt.zero_grad(set_to_none=True)
    _, loss = model(torch.as_tensor(inp["x"]), torch.as_tensor(inp["y"]))
    (loss * loss_scale).backward()
    if not no_clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), inp["clip"])
    opt.step()
    state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
    return torch.tensor(loss.item(), dtype=torch.float64), torch.cat([state[k].flatten() for k in sorted(state)])


# ------------------------------------------------------------------ training run
#: The recipe: a one-layer GPT (block 32, d_model 32, 2 heads) trained for STEPS AdamW steps of
#: BATCH windows.  Measured on 7 slices, paired with the course's run (held-out loss 2.52-2.76,
#: the character-frequency model ~3.3): no clipping or clipping before backward (right enough:
#: another trajectory) -0.02 to +0.09; no zero_grad +0.50 to +0.70; targets shifted by two +0.41
#: to +0.73 nats above the course's run; TOLERANCE sits between.
RUN_CFG = {"block": 32, "d_model": 32, "heads": 2, "layers": 1, "lr": 8e-3}
RUN_SETUP = GPT_SETUP + '''
def _grader_batch(data, L, B, gen):
    # the course's get_batch (attnlab.data.get_batch), drawing from gen exactly as it does
    starts = torch.randint(len(data) - L, (B,), generator=gen)  # (B,)
    windows = data.unfold(0, L + 1, 1).index_select(0, starts)  # (B, L + 1)
    return windows[:, :-1].long().contiguous(), windows[:, 1:].long().contiguous()


def _grader_run(I):
    C = I["cfg"]
    torch.manual_seed(I["seed"])
    m = _GraderGPT(I["V"], C["block"], C["d_model"], C["heads"], C["layers"])
    for mod in m.modules():
        if isinstance(mod, (nn.Linear, nn.Embedding)):
            nn.init.normal_(mod.weight, 0.0, 0.02)
        if isinstance(mod, nn.Linear) and mod.bias is not None:  # the tied output layer has none
            nn.init.zeros_(mod.bias)
    m.train()
    opt = torch.optim.AdamW(m.parameters(), lr=C["lr"], weight_decay=0.0, foreach=True)
    gen = torch.Generator().manual_seed(I["seed"])
    train = I["train"]
    for _ in range(I["steps"]):
        x, y = _grader_batch(train, C["block"], I["B"], gen)
        train_step(m, opt, x, y, grad_clip=1.0)
    # only the weights leave the sandbox: the grader loads them into attnlab.nn.GPT and measures
    # the loss itself, on text the sandbox never saw
    return {name: p.detach().clone() for name, p in m.named_parameters()}
'''
_TEXT = {}
#: One draw of the training text and seed per grading process (from the first grading-time
#: generator that asks): every submission a worker grades trains on the same slice, so the
#: course's own run on it is done once per process, not once per submission.
_RUN_DRAW = {}
_REFERENCE = {}
_REFERENCE_WEIGHTS = {}  # the course run's trained parameters, by the same key (for the QA tests)


def _ids():
    if "ids" not in _TEXT:
        text = load_shakespeare()
        _TEXT["ids"] = np.array(CharTokenizer(text).encode(text), dtype=np.int64)
    return _TEXT["ids"]


def run_inputs(rng):
    """The training slice (20 000 characters) and seed; the 4 000 characters after the slice are
    the grader's held-out text and are never sent to the sandbox."""
    ids = _ids()
    if "draw" not in _RUN_DRAW:
        _RUN_DRAW["draw"] = (int(rng.integers(0, len(ids) - 24_000)), int(rng.integers(1 << 30)))
    start, seed = _RUN_DRAW["draw"]
    return {"train": ids[start:start + 20_000], "start": start, "V": int(ids.max()) + 1, "steps": STEPS,
            "B": BATCH, "seed": seed, "cfg": dict(RUN_CFG)}


def _run_model(V):
    c = RUN_CFG
    return GPT(GPTConfig(V, c["block"], c["d_model"], c["heads"], c["layers"]))


def held_out_loss(model, start, seed):
    """Mean next-token cross-entropy (nats) of ``model`` on 256 windows of the held-out text after
    the training slice, drawn with the grader's own generator."""
    ids = torch.as_tensor(_ids()[start + 20_000:start + 24_000])
    T = RUN_CFG["block"]
    gen = torch.Generator().manual_seed(seed + 1)
    model.eval()
    total = 0.0
    with torch.no_grad():
        for _ in range(4):
            s = torch.randint(len(ids) - T - 1, (64,), generator=gen)
            o = torch.arange(T)
            total += model(ids[s[:, None] + o], ids[s[:, None] + o + 1])[1].item()
    return total / 4


def _reference_train_step(model, optimizer, x, y, grad_clip=1.0):
    """The exercise's train_step as the course writes it (the reference solution)."""
    optimizer.zero_grad(set_to_none=True)
    _, loss = model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.item()


def reference_run(start, seed, V, steps=STEPS, B=BATCH, **_):
    """``(held-out loss, character-frequency loss)`` of the course's own ``get_batch``
    (:func:`attnlab.data.get_batch`) and train_step on the same recipe, slice and seed, on
    ``attnlab.nn.GPT`` in the grader; computed once per (slice, seed) in a process."""
    key = (start, seed, V, steps, B)
    if key not in _REFERENCE:
        from attnlab.data import get_batch
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # as in the sandbox: the same numbers
        try:
            torch.manual_seed(seed)
            m = _run_model(V)
            for mod in m.modules():
                if isinstance(mod, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(mod.weight, 0.0, 0.02)
                if isinstance(mod, nn.Linear) and mod.bias is not None:
                    nn.init.zeros_(mod.bias)
            m.train()
            opt = torch.optim.AdamW(m.parameters(), lr=RUN_CFG["lr"], weight_decay=0.0, foreach=True)
            gen = torch.Generator().manual_seed(seed)
            train = torch.as_tensor(_ids()[start:start + 20_000])
            for _ in range(steps):
                x, y = get_batch(train, RUN_CFG["block"], B, gen)
                _reference_train_step(m, opt, x, y, grad_clip=1.0)
            ref = held_out_loss(m, start, seed)
            _REFERENCE_WEIGHTS[key] = {k: v.detach().clone() for k, v in m.named_parameters()}
        finally:
            torch.set_num_threads(threads)
        ids = _ids()
        counts = np.bincount(ids[start:start + 20_000], minlength=V).astype(np.float64) + 1
        unigram = float(-np.log(counts / counts.sum())[ids[start + 20_000:start + 24_000]].mean())
        _REFERENCE[key] = (ref, unigram)
    return _REFERENCE[key]


def run_verdict(value, **raw):
    """Judge the weights the student's loop produced: loaded into ``attnlab.nn.GPT`` here, measured
    on held-out text the sandbox never saw; nothing the student's code reports is used."""
    model = _run_model(raw["V"])
    params = dict(model.named_parameters())
    if not isinstance(value, dict) or set(map(str, value)) != set(params):
        return "the training run did not leave the model's parameters in place (the grader reads them after the run)"
    state = {}
    for name, p in params.items():
        v = value[name]
        if not isinstance(v, np.ndarray) or v.shape != tuple(p.shape) or not np.isfinite(v).all():
            return (f"after the training run the parameter {name} is not a finite tensor of shape "
                    f"{tuple(p.shape)} (the training diverged or replaced it)")
        state[name] = torch.as_tensor(v, dtype=torch.float32)
    state["lm_head.weight"] = state["tok_emb.weight"]  # tied, as in the model the sandbox trained
    model.load_state_dict(state)
    val = held_out_loss(model, raw["start"], raw["seed"])
    ref_val, unigram = reference_run(**raw)
    if val <= ref_val + TOLERANCE:
        return None
    return (f"after {STEPS} training steps with your train_step (on the course's batches) the model's loss on "
            f"held-out text is {val:.2f} (measured by the grader on the weights your step produced); the course's "
            f"train_step reaches {ref_val:.2f} on the same text, seed, batches and steps (the character-frequency "
            f"model: {unigram:.2f}), and yours must be within {TOLERANCE} of that: check zero_grad, backward, "
            "the clipping and optimizer.step()")


# ------------------------------------------------------------------ TinyGPT (the assembled model)
#: TinyGPT's parameter names -> attnlab.nn.GPT's (the exercise's table says which is which).
_TO_GPT = (("pos_emb.", "pos_emb.emb."), (".attn.", ".self_attn."), (".w_1.", ".ffn.w_1."), (".w_2.", ".ffn.w_2."),
           (".norm2.", ".norm3."))

TINY_SETUP = """
def _run_tiny(I):
    m = TinyGPT(I["V"], I["T"], I["d"], I["H"], I["n_layers"])
    m.load_state_dict({k[2:]: v for k, v in I.items() if k.startswith("w:")})
    m.eval()
    with torch.no_grad():
        return m(I["idx"])
"""


def tiny_inputs(rng, trial):
    H, d_k = int(rng.choice([2, 3, 4])), int(rng.integers(2, 5))  # H, d_k >= 2: head layout and scale matter
    d, T, n_layers = H * d_k, int(rng.integers(5, 11)), int(rng.integers(1, 3))
    V = int(rng.integers(5, 16))
    L = T if trial == 1 else int(rng.integers(3, T))  # trial 1: the full context; else fewer positions
    inp = {"V": V, "T": T, "d": d, "H": H, "n_layers": n_layers, "idx": rng.integers(0, V, size=(int(rng.integers(1, 4)), L))}
    ref = GPT(GPTConfig(V, T, d, H, n_layers))
    for name, p in ref.state_dict().items():
        if name == "lm_head.weight":
            continue
        tiny = _tiny_name(name)
        if "norm" in name and name.endswith("weight"):
            inp["w:" + tiny] = 1.0 + 0.3 * rng.standard_normal(tuple(p.shape))
        elif "emb" in name:
            inp["w:" + tiny] = rng.standard_normal(tuple(p.shape))
        else:
            inp["w:" + tiny] = 0.5 * rng.standard_normal(tuple(p.shape))
    return inp


def _tiny_name(gpt_name):
    for tiny, gpt in _TO_GPT:
        gpt_name = gpt_name.replace(gpt, tiny)
    return gpt_name


def _gpt_name(tiny_name):
    for tiny, gpt in _TO_GPT:
        tiny_name = tiny_name.replace(tiny, gpt)
    return tiny_name


def _tiny_ref_model(inp):
    """attnlab.nn.GPT in float64 holding the drawn weights (as the sandbox receives them: float32)."""
    model = GPT(GPTConfig(inp["V"], inp["T"], inp["d"], inp["H"], inp["n_layers"])).double().eval()
    state = {_gpt_name(k[2:]): torch.as_tensor(v, dtype=torch.float32).double() for k, v in inp.items() if k.startswith("w:")}
    state["lm_head.weight"] = state["tok_emb.weight"]
    model.load_state_dict(state)
    return model


@torch.no_grad()
def tiny_ref(mistake=None, **inp):
    """The reference logits, or those of a named mistake made on the reference model itself."""
    model = _tiny_ref_model(inp)
    idx = torch.as_tensor(inp["idx"])
    causal = True
    if mistake == "no_scale":  # Q scaled by √d_k cancels the 1/√d_k
        for block in model.blocks:
            block.self_attn.w_q.weight.mul_(math.sqrt(inp["d"] // inp["H"]))
            block.self_attn.w_q.bias.mul_(math.sqrt(inp["d"] // inp["H"]))
    elif mistake == "no_causal":
        causal = False
    elif mistake == "post_ln":
        for block in model.blocks:
            block.norm_first = False  # LN(x + f(x)) with the same LayerNorms
    elif mistake == "no_final_norm":
        model.norm_f = nn.Identity()
    elif mistake == "no_positions":
        model.pos_emb.emb.weight.zero_()
    elif mistake == "relu":
        for block in model.blocks:
            relu = FeedForward(inp["d"], 4 * inp["d"], activation="relu").double()
            relu.load_state_dict(block.ffn.state_dict())
            block.ffn = relu
    if causal:
        return model(idx)[0]
    x = model.pos_emb(model.tok_emb(idx))  # GPT.forward with the blocks called without the causal mask
    for block in model.blocks:
        x = block(x, is_causal=False)
    return model.lm_head(model.norm_f(x))


# ------------------------------------------------------------------ sample_next_token
def sample_inputs(rng, trial):
    B, V = 200, int(rng.integers(4, 16))
    opts = [{"temperature": float(rng.uniform(0.5, 2.0)), "top_k": None, "top_p": None, "greedy": False},
            {"temperature": float(rng.uniform(0.5, 2.0)), "top_k": int(rng.integers(1, V)), "top_p": None, "greedy": False},
            {"temperature": float(rng.uniform(0.3, 3.0)), "top_k": None, "top_p": float(rng.uniform(0.3, 0.9)), "greedy": False},
            {"temperature": float(rng.uniform(0.3, 3.0)), "top_k": int(rng.integers(2, V)),
             "top_p": float(rng.uniform(0.3, 0.9)), "greedy": bool(rng.random() < 0.3)}][trial]
    return {"logits": rng.standard_normal((B, V)) * 2, "seed": int(rng.integers(1 << 30)), **opts}


def sample_ref(logits, seed, temperature, top_k, top_p, greedy, mult=False):
    lg = torch.as_tensor(logits, dtype=torch.float32)  # the dtype the sandbox decodes to
    if mult:
        lg, temperature = lg * temperature * temperature, temperature  # logits multiplied by T instead of divided
    return ref_sample(lg, temperature=temperature, top_k=top_k, top_p=top_p, greedy=greedy,
                      generator=torch.Generator().manual_seed(seed))


CHECKS = [
    ByHandCheck("test_params_by_hand", variable="n_params", skill="gpt_param_count"),
    ByHandCheck("test_uniform_by_hand", variable="start_loss", skill="uniform_loss"),
    JudgedCheck("test_get_batch", target="get_batch", inputs=batch_inputs, trials=2, setup=BATCH_SETUP,
                call="_grader_batches(_I)", verdict=batch_verdict,
                ok_message="get_batch: windows, shift, coverage and reproducibility are right on fresh data"),
    FunctionCheck(
        "test_train_step", target="train_step", inputs=step_inputs, trials=2, setup=STEP_SETUP,
        call="_grader_step(_I)", reference=step_ref, atol=1e-6, rtol=1e-6,
        mistakes={"no_zero_grad": lambda **i: step_ref(no_zero=True, **i),
                  "no_grad_clipping": lambda **i: step_ref(no_clip=True, **i)}),
    JudgedCheck("test_training_run", target="train_step", inputs=run_inputs, trials=1, setup=RUN_SETUP,
                call="_grader_run(_I)", verdict=run_verdict,
                ok_message=f"training run: after {STEPS} steps the weights your loop produced reach a held-out loss "
                           f"within {TOLERANCE} nats of the course's own run on the same text"),
    FunctionCheck(
        "test_sample_next_token", target="sample_next_token", inputs=sample_inputs, trials=4, setup="",
        call="sample_next_token(_I['logits'], temperature=_I['temperature'], top_k=_I['top_k'], top_p=_I['top_p'], "
             "greedy=_I['greedy'], generator=torch.Generator().manual_seed(_I['seed']))",
        reference=sample_ref, atol=0, rtol=0,
        mistakes={"temperature_multiplies": lambda **i: sample_ref(**i, mult=True)},
        forbid_attrs=("sample_next_token", "generate")),
    FunctionCheck(
        "test_tiny_gpt", target="TinyGPT", inputs=tiny_inputs, trials=3, setup=TINY_SETUP, call="_run_tiny(_I)",
        reference=tiny_ref, atol=1e-4, rtol=1e-4,
        mistakes={"no_scale": lambda **i: tiny_ref("no_scale", **i),
                  "missing_causal_mask_gpt": lambda **i: tiny_ref("no_causal", **i),
                  "block_post_ln": lambda **i: tiny_ref("post_ln", **i),
                  "final_layernorm_missing": lambda **i: tiny_ref("no_final_norm", **i),
                  "forget_position_embedding": lambda **i: tiny_ref("no_positions", **i),
                  "gpt_ffn_relu": lambda **i: tiny_ref("relu", **i)},
        forbid_attrs=("MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer",
                      "multi_head_attention_forward")),
]
TIMEOUT = 60  # per item; the training run takes 1-4 s on a busy 2-core machine
