"""Grading spec for exercise 09 (see autograder/AUTHORING.md). Never released to students.

Inputs are drawn at grading time from a generator the grader seeds with os.urandom.
The sandbox has no attnlab and no files, so the GPT used by ``train_step`` and by the
training run is built there from ``GPT_SETUP`` (``attnlab.nn.GPT``'s own source, shipped by
attnlab_grader/sandbox_gpt.py, parity tested), and the Tiny Shakespeare slice
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
* the assembled GPT, three items judged each on its own: ``CausalSelfAttention`` (fresh sizes, one
  trial of 65-80 positions where a mask sliced from a fixed 16 or 64 table fails), ``Block`` with the
  course's attention put in place of the student's, and ``TinyGPT`` (logits and loss) with the
  course's blocks put in place of the student's, all holding the same random weights (large enough
  that the 1/sqrt(d_k) scale, the causal mask and every LayerNorm change the outputs), compared with
  ``attnlab.nn`` holding those weights.  Weights are loaded by parameter name, so a registered mask
  buffer (nanoGPT's way) is no reason to refuse a correct model.  Named mistakes are made on the
  course's own modules (their weights, their switches, or a function ``attnlab.nn.mha`` calls
  replaced while it runs), never with a second model; what the sandbox's trial signature shows (an
  error only on the long trial, an extra ``(V, d_model)`` parameter) names a mistake too.
* which model the training run trains: the student's ``TinyGPT`` when it computes ``attnlab.nn.GPT``'s
  logits and loss on a probe with large random weights (else the course's GPT, so that a wrong part
  is not charged twice), from the course run's initial weights; either way only the weights come back,
  under ``attnlab.nn.GPT``'s names.
"""
import contextlib
import math

import numpy as np
import torch
from torch import nn

from attnlab.data import CharTokenizer, load_shakespeare
from attnlab.nn import GPT, GPTConfig, MultiHeadAttention
from attnlab.nn import sample_next_token as ref_sample
from attnlab_grader.sandbox_gpt import GPT_SETUP
from attnlab_grader.spec import ByHandCheck, FunctionCheck, Outcome, mistake_outcome

A = "09_capstone"
TOLERANCE = 0.25  # nats above the grader's reference run on the same slice, seed and steps
STEPS = 80
BATCH = 32




class JudgedCheck(FunctionCheck):
    """A FunctionCheck whose verdict comes from ``verdict(value, **raw) -> message | None``
    (None = correct, or an ``Outcome`` of its own) instead of a comparison with one reference value."""

    def __init__(self, *args, verdict, ok_message, **kwargs):
        super().__init__(*args, reference=lambda **raw: None, **kwargs)
        self.verdict, self.ok_message = verdict, ok_message

    def judge(self, value, raw, student):
        try:
            msg = self.verdict(value, **raw)
        except Exception as err:  # noqa: BLE001 - a malformed return value
            msg = f"{self.target}: unexpected return value ({type(err).__name__}: {err})"
        if isinstance(msg, Outcome):
            return msg
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


# ------------------------------------------------------------------ training run
#: The recipe: a one-layer GPT (block 32, d_model 32, 2 heads) trained for STEPS AdamW steps of
#: BATCH windows.  Measured on 7 slices, paired with the course's run (held-out loss 2.52-2.76,
#: the character-frequency model ~3.3): no clipping or clipping before backward (right enough:
#: another trajectory) -0.02 to +0.09; no zero_grad +0.50 to +0.70; targets shifted by two +0.41
#: to +0.73 nats above the course's run; TOLERANCE sits between.
RUN_CFG = {"block": 32, "d_model": 32, "heads": 2, "layers": 1, "lr": 8e-3}
RUN_SETUP = PARTS_SETUP + '''
def _grader_batch(data, L, B, gen):
    # the course's get_batch (attnlab.data.get_batch), drawing from gen exactly as it does
    starts = torch.randint(len(data) - L, (B,), generator=gen)  # (B,)
    windows = data.unfold(0, L + 1, 1).index_select(0, starts)  # (B, L + 1)
    return windows[:, :-1].long().contiguous(), windows[:, 1:].long().contiguous()


def _into_tiny(tiny, course):
    # copy the course GPT's parameters into TinyGPT by name; every parameter on both sides
    src = dict(course.named_parameters())
    mine = dict(tiny.named_parameters())
    names = {}
    for name in mine:
        gpt = name
        for a, b in _TO_GPT_PAIRS:
            gpt = gpt.replace(a, b)
        names[name] = gpt
    if sorted(names.values()) != sorted(src) or any(mine[n].shape != src[g].shape for n, g in names.items()):
        raise ValueError("TinyGPT's parameters are not attnlab.nn.GPT's")
    with torch.no_grad():
        for n, g in names.items():
            mine[n].copy_(src[g])
    return names


def _student_model(I):
    # your TinyGPT when it computes attnlab.nn.GPT's logits and loss on a probe with large random
    # weights (every part shows there); else None and the course's GPT is trained
    C = I["cfg"]
    try:
        gen = torch.Generator().manual_seed(I["seed"] + 7)
        course = _GraderGPT(I["V"], C["block"], C["d_model"], C["heads"], C["layers"]).eval()
        with torch.no_grad():
            for name, p in course.named_parameters():
                base = (1.0 if name.endswith("weight") else 0.0) if "norm" in name else 0.0
                p.copy_(base + (0.3 if "norm" in name else 0.5) * torch.randn(p.shape, generator=gen))
        tiny = TinyGPT(I["V"], C["block"], C["d_model"], C["heads"], C["layers"]).eval()
        _into_tiny(tiny, course)
        idx = torch.randint(I["V"], (2, C["block"]), generator=gen)
        y = torch.randint(I["V"], (2, C["block"]), generator=gen)
        with torch.no_grad():
            want, want_loss = course(idx, y)
            got, got_loss = tiny(idx, y)
            plain = tiny(idx[:, :5])
        right = (isinstance(got, torch.Tensor) and got.shape == want.shape
                 and torch.allclose(got, want, rtol=1e-3, atol=1e-3)
                 and isinstance(got_loss, torch.Tensor) and abs(float(got_loss) - float(want_loss)) < 1e-3
                 and isinstance(plain, tuple) and plain[1] is None)
        return TinyGPT(I["V"], C["block"], C["d_model"], C["heads"], C["layers"]) if right else None
    except Exception:
        return None


def _grader_run(I):
    C = I["cfg"]
    torch.manual_seed(I["seed"])
    m = _GraderGPT(I["V"], C["block"], C["d_model"], C["heads"], C["layers"])
    for mod in m.modules():
        if isinstance(mod, (nn.Linear, nn.Embedding)):
            nn.init.normal_(mod.weight, 0.0, 0.02)
        if isinstance(mod, nn.Linear) and mod.bias is not None:  # the tied output layer has none
            nn.init.zeros_(mod.bias)
    tiny = _student_model(I)
    names = None
    if tiny is not None:
        names = _into_tiny(tiny, m)  # the same initial weights as the course's run
        m = tiny
    m.train()
    opt = torch.optim.AdamW(m.parameters(), lr=C["lr"], weight_decay=0.0, foreach=True)
    gen = torch.Generator().manual_seed(I["seed"])
    train = I["train"]
    for _ in range(I["steps"]):
        x, y = _grader_batch(train, C["block"], I["B"], gen)
        train_step(m, opt, x, y, grad_clip=1.0)
    # only the weights leave the sandbox (under attnlab.nn.GPT's names): the grader loads them into
    # attnlab.nn.GPT and measures the loss itself, on text the sandbox never saw
    weights = {(names[n] if names else n): p.detach().clone() for n, p in m.named_parameters()}
    return {"model": "TinyGPT" if names else "GPT", "weights": weights}
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
    if not isinstance(value, dict) or set(map(str, value)) != {"model", "weights"}:
        return "the training run did not leave the model's parameters in place (the grader reads them after the run)"
    which, value = value["model"], value["weights"]
    if which not in ("TinyGPT", "GPT") or not isinstance(value, dict) or set(map(str, value)) != set(params):
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
    trained = (_YOUR_MODEL if which == "TinyGPT" else _COURSE_MODEL)
    if val <= ref_val + TOLERANCE:
        return Outcome(True, f"training run: {trained} trained by your train_step for {STEPS} steps on the grader's "
                             f"batches reaches a held-out loss of {val:.2f}, measured by the grader on the weights it "
                             f"produced; the course's run on the same text, seed and batches: {ref_val:.2f}")
    return (f"after {STEPS} training steps of {trained} with your train_step (on the course's batches) the loss on "
            f"held-out text is {val:.2f} (measured by the grader on the weights your step produced); the course's "
            f"train_step reaches {ref_val:.2f} on the same text, seed, batches and steps (the character-frequency "
            f"model: {unigram:.2f}), and yours must be within {TOLERANCE} of that: check zero_grad, backward, "
            "the clipping and optimizer.step()")


#: Which model the sandbox trained (it trains the student's TinyGPT when it computes what attnlab.nn.GPT
#: computes on a probe; otherwise the course's GPT, so that a wrong model part is not charged twice).
_YOUR_MODEL = "your TinyGPT"
_COURSE_MODEL = ("the course's GPT (your TinyGPT did not compute attnlab.nn.GPT's logits and loss on the grader's "
                 "probe, so your train_step was judged on the course's model; see the TinyGPT items)")


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
            return "raised " + type(err).__name__ + ": " + str(err)[:300]
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
    """Trial 1 is long (65-80 positions): a mask sliced from a fixed 16 x 16 or 64 x 64 table fails there."""
    H, _, d = _sizes(rng)
    L = int(rng.integers(3, 13)) if trial == 0 else int(rng.integers(65, 81))
    w = _draw_weights(rng, 2, 2, d, H, 1)
    inp = {"w:" + k[len("blocks.0.attn."):]: v for k, v in w.items() if k.startswith("blocks.0.attn.")}
    inp.update({"d": d, "H": H, "L": L, "long": trial == 1, "x": rng.standard_normal((int(rng.integers(1, 4)), L, d))})
    return inp


def block_inputs(rng):
    H, _, d = _sizes(rng)
    L = int(rng.integers(3, 10))
    w = _draw_weights(rng, 2, L, d, H, 1)
    inp = {"w:" + k[len("blocks.0."):]: v for k, v in w.items() if k.startswith("blocks.0.")}
    inp.update({"d": d, "H": H, "T": L, "x": rng.standard_normal((int(rng.integers(1, 4)), L, d))})
    return inp


def model_inputs(rng, trial):
    """Trial 0: fewer positions than block_size (positions off by one show as shifted rows); trial 1:
    the full context (they run off the table)."""
    H, _, d = _sizes(rng)
    T, n_layers, V = int(rng.integers(5, 11)), int(rng.integers(1, 3)), int(rng.integers(5, 16))
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
        if isinstance(value, str):
            if raw.get("long") and value.startswith("raised"):
                out = mistake_outcome(self.target, ("fixed_size_mask_buffer",))
                out.message = (f"{out.message} (it worked on short sequences and on {raw['L']} positions it "
                               f"{value}; a table of at least block_size positions, or a mask built for L, is right)")
                return out
            return Outcome(False, f"{self.target}: {value}")
        if isinstance(value, tuple) and len(value) == 4:  # the model: (logits, loss, no-target loss is None, extras)
            logits, loss, plain_none, extra = value
            if loss is None:
                return Outcome(False, "TinyGPT(idx, targets) returned no loss: with targets, return the mean "
                                      "cross-entropy of the logits against them, F.cross_entropy(logits.view(B * L, V), "
                                      "targets.view(B * L)), as attnlab.nn.GPT does")
            if plain_none is not True:
                return Outcome(False, "TinyGPT(idx) without targets must return (logits, None): the loss is None "
                                      "when there are no targets")
            out = super().judge((logits, loss, plain_none), raw, student)
            untied = [e for e in str(extra).split(";") if e.endswith(f"[{raw['V']}, {raw['d']}]")]
            if not out.ok and out.mistake is None and untied:
                return mistake_outcome(self.target, ("untied_output_layer",))
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
    PartCheck(
        "test_causal_self_attention", target="CausalSelfAttention", inputs=attention_inputs, trials=2,
        setup=ATTN_SETUP, call="_run_attention(_I)", reference=attention_ref, atol=1e-4, rtol=1e-4,
        mistakes=_models(attention_ref, no_scale="no_scale", scale_by_d_model="scale_by_d_model",
                         scale_by_dk="scale_by_dk", missing_causal_mask_gpt="no_causal",
                         causal_upper_triangle="causal_upper_triangle",
                         reshape_without_transpose=("split_without_transpose", "both_without_transpose"),
                         merge_without_transpose="merge_without_transpose",
                         softmax_wrong_axis=("softmax_over_queries", "softmax_over_heads"),
                         keys_projected_with_w_q="keys_projected_with_w_q"),
        forbid_attrs=_PART_FORBID),
    PartCheck(
        "test_block", target="Block", inputs=block_inputs, trials=1, setup=BLOCK_SETUP, call="_run_block(_I)",
        reference=block_ref, atol=1e-4, rtol=1e-4,
        mistakes=_models(block_ref, block_post_ln="post_ln", gpt_ffn_relu="relu", gelu_tanh_approximation="gelu_tanh",
                         ffn_no_activation="no_activation", one_norm_for_both_sublayers="one_norm",
                         residual_adds_normalised_input="residual_adds_normalised",
                         ffn_reads_block_input="ffn_reads_input"),
        forbid_attrs=_PART_FORBID),
    PartCheck(
        "test_tiny_gpt", target="TinyGPT", inputs=model_inputs, trials=2, setup=MODEL_SETUP, call="_run_model(_I)",
        reference=model_ref, atol=1e-4, rtol=1e-4,
        mistakes=_models(model_ref, forget_position_embedding="no_positions", positions_off_by_one="positions_off_by_one",
                         final_layernorm_missing="no_final_norm", loss_summed="loss_summed",
                         loss_last_position_only="loss_last_position", target_shift_two="targets_shifted_again"),
        forbid_attrs=_PART_FORBID),
]
TIMEOUT = 60  # per item; the training run takes 1-4 s on a busy 2-core machine
