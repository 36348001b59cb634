"""Grading spec for exercise 09 (see autograder/AUTHORING.md). Never released to students.

Inputs are drawn at grading time from a generator the grader seeds with os.urandom.
The sandbox has no attnlab and no files, so the GPT used by ``train_step`` and by the
training run is built there from ``GPT_SETUP`` (``attnlab.nn.GPT``'s own source, shipped by
autograder/attnlab_grader/judging/reference_gpt.py, parity tested), and the Tiny Shakespeare slice
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
  held-out text the sandbox never received, with its own batches.  The course's get_batch and
  train_step run the same recipe (slice, seed, initial weights, model, optimiser, steps) in the grader,
  once per grading process.  Credited when the weights are that run's (provenance: within
  TRAJECTORY_TOLERANCE of its change, so weights trained elsewhere or a loop that under-trains get
  zero) and the held-out loss is within TOLERANCE nats of it.  Nothing the student's code returns or
  reports (a loss, the model's own forward) is trusted: a train_step that changes nothing leaves
  initial weights, whatever it claims.  Tolerances: see ``grading_training_run.py``.
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

import numpy as np
import torch

from attnlab.nn import GPT, GPTConfig
from attnlab.nn import sample_next_token as ref_sample
from attnlab.nn import top_k_filter as ref_top_k
from attnlab.nn import top_p_filter as ref_top_p
from attnlab_grader.judging.reference_gpt import GPT_SETUP
from attnlab_grader.judging.spec import ByHandCheck, FunctionCheck, Verdict, load_sibling

A = "09_capstone"




class JudgedCheck(FunctionCheck):
    """A FunctionCheck whose verdict comes from ``verdict(value, **raw) -> message | None``
    (None = correct, or a ``Verdict`` of its own) instead of a comparison with one reference value."""

    def __init__(self, *args, verdict, ok_message, **kwargs):
        super().__init__(*args, reference=lambda **raw: None, **kwargs)
        self.verdict, self.ok_message = verdict, ok_message

    def judge(self, value, raw, student):
        try:
            msg = self.verdict(value, **raw)
        except Exception as err:  # noqa: BLE001 - a malformed return value
            msg = f"{self.target}: unexpected return value ({type(err).__name__}: {err})"
        if isinstance(msg, Verdict):
            return msg
        return Verdict(True, self.ok_message) if msg is None else Verdict(False, msg)


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
    counted twice, backward() called twice, divided by the batch size (B >= 2 there) -- changes the
    update instead of being clipped away; and two layers."""
    V, H = int(rng.integers(5, 13)), int(rng.choice([1, 2]))
    d, n_layers, L = H * int(rng.integers(2, 5)), 2 if trial == 1 else int(rng.integers(1, 3)), int(rng.integers(3, 8))
    inp = {"cfg": [V, L, d, H, n_layers]}
    ref = GPT(GPTConfig(V, L, d, H, n_layers))
    for name, p in ref.state_dict().items():
        if name != "lm_head.weight":
            base = 1.0 if "norm" in name and name.endswith("weight") else 0.0
            inp["w:" + name] = base + 0.3 * rng.standard_normal(tuple(p.shape))
    for name, p in ref.named_parameters():
        inp["g:" + name] = rng.standard_normal(tuple(p.shape))
    B = int(rng.integers(2, 4)) if trial == 1 else int(rng.integers(1, 4))  # trial 1: a loss divided by B shows
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


_parts = load_sibling(__file__, "grading_gpt_parts")
_run = load_sibling(__file__, "grading_training_run")
STEPS, TOLERANCE, RUN_SETUP, run_inputs, run_verdict = (_run.STEPS, _run.TOLERANCE, _run.RUN_SETUP, _run.run_inputs,
                                                         _run.run_verdict)
PartCheck, _models, _PART_FORBID = _parts.PartCheck, _parts._models, _parts._PART_FORBID
ATTN_SETUP, BLOCK_SETUP, MODEL_SETUP = _parts.ATTN_SETUP, _parts.BLOCK_SETUP, _parts.MODEL_SETUP
attention_inputs, block_inputs, model_inputs = _parts.attention_inputs, _parts.block_inputs, _parts.model_inputs
attention_ref, block_ref, model_ref = _parts.attention_ref, _parts.block_ref, _parts.model_ref


# ------------------------------------------------------------------ sample_next_token
def sample_inputs(rng, trial):
    """One option per trial: a temperature below 1 alone, with top-k, above 1 with top-p, with both
    filters (sampled: the order top-k then top-p shows), and greedy with a temperature and both filters
    (which it ignores), and the boundaries, each on a trial of its own: ``top_k = V`` (an index at k
    crashes) and ``top_k > V`` (a k not clamped crashes), both with ``top_p = 1`` (nothing is filtered), and
    ``top_k = 1`` (only the most probable token can be drawn).  Temperatures on both sides of 1: a
    temperature applied only one way shows."""
    B, V = 200, int(rng.integers(4, 16))
    opts = [{"temperature": float(rng.uniform(0.3, 0.9)), "top_k": None, "top_p": None, "greedy": False},  # T < 1
            {"temperature": float(rng.uniform(0.5, 2.0)), "top_k": int(rng.integers(1, V)), "top_p": None, "greedy": False},
            {"temperature": float(rng.uniform(1.2, 3.0)), "top_k": None, "top_p": float(rng.uniform(0.3, 0.9)),
             "greedy": False},  # T > 1
            {"temperature": float(rng.uniform(0.3, 3.0)), "top_k": int(rng.integers(2, V)),
             "top_p": float(rng.uniform(0.3, 0.9)), "greedy": False},
            {"temperature": float(rng.uniform(0.3, 3.0)), "top_k": int(rng.integers(2, V)),
             "top_p": float(rng.uniform(0.3, 0.9)), "greedy": True},
            {"temperature": float(rng.uniform(0.5, 2.0)), "top_k": V, "top_p": 1.0, "greedy": False},  # k = V
            {"temperature": float(rng.uniform(0.5, 2.0)), "top_k": V + int(rng.integers(1, 4)), "top_p": 1.0,
             "greedy": False},  # k > V
            {"temperature": float(rng.uniform(0.5, 2.0)), "top_k": 1, "top_p": None, "greedy": False}][trial]  # k = 1
    return {"logits": rng.standard_normal((B, V)) * 2, "seed": int(rng.integers(1 << 30)), **opts}


def sample_ref(logits, seed, temperature, top_k, top_p, greedy, mult=False, p_first=False, no_greedy=False,
               temp_as=None):
    lg = torch.as_tensor(logits, dtype=torch.float32)  # the dtype the sandbox decodes to
    gen = torch.Generator().manual_seed(seed)
    if temp_as is not None:  # the temperature ignored (1.0), or applied only above / below 1
        temperature = temp_as(temperature)
    if mult:
        lg, temperature = lg * temperature * temperature, temperature  # logits multiplied by T instead of divided
    if p_first and top_k is not None and top_p is not None and not greedy:  # top-p on the full distribution first
        lg = ref_top_k(ref_top_p(lg / temperature, top_p), top_k)
        return ref_sample(lg, generator=gen)
    return ref_sample(lg, temperature=temperature, top_k=top_k, top_p=top_p, greedy=greedy and not no_greedy,
                      generator=gen)


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
                ok_message=f"training run: after {STEPS} steps your loop produced the course run's weights from the "
                           f"grader's initial weights and batches, within {TOLERANCE} nats of its held-out loss"),
    FunctionCheck(
        "test_sample_next_token", target="sample_next_token", inputs=sample_inputs, trials=8, setup="",
        call="sample_next_token(_I['logits'], temperature=_I['temperature'], top_k=_I['top_k'], top_p=_I['top_p'], "
             "greedy=_I['greedy'], generator=torch.Generator().manual_seed(_I['seed']))",
        reference=sample_ref, atol=0, rtol=0,
        mistakes={"temperature_multiplies": lambda **i: sample_ref(**i, mult=True),
                  "top_p_before_top_k": lambda **i: sample_ref(**i, p_first=True),
                  "temperature_ignored": (lambda **i: sample_ref(**i, temp_as=lambda t: 1.0),
                                          lambda **i: sample_ref(**i, temp_as=lambda t: max(t, 1.0)),  # only above 1
                                          lambda **i: sample_ref(**i, temp_as=lambda t: min(t, 1.0))),  # only below
                  "greedy_flag_ignored": lambda **i: sample_ref(**i, no_greedy=True)},
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
