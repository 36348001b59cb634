# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -all
#     notebook_metadata_filter: kernelspec,-jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %%
from attnlab.practice import gate

gate("08")

# %% [markdown]
# # Lesson 08 · Training and decoding
#
# A decoder stack (lesson 07) turns a prefix into a probability distribution over the next token. This lesson covers the
# two things we do with that distribution:
#
# * **training**: make the distribution put high probability on the token that really comes next, for every position
#   of every training text, all in one parallel pass (*teacher forcing*);
# * **decoding**: turn the distribution back into text, one token at a time (*greedy*, *temperature*, *top-k*, *top-p*),
#   fast enough to be useful (*KV cache*).
#
# Along the way we meet the two ways training and generation can disagree: **exposure bias**, and a **missing causal mask**,
# which we will break on purpose to watch a model cheat.
#
# **You will be able to:** write the shifted next-token loss, implement greedy decoding, predict what temperature, top-k and
# top-p do to a distribution, explain and measure the KV cache's speed-up and memory, and diagnose a model trained without its mask.
#
# Runtime: about 30 s with `ATTNLAB_CI=1`, about 2 minutes without (longer training gives nicer samples).

# %%
import math
import time

import ipywidgets as widgets
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from IPython.display import display
from torch import nn

from attnlab.data import CharTokenizer, get_batch, load_shakespeare, train_val_split
from attnlab.nn import (
    GPT,
    DecoderBlock,
    GPTConfig,
    KVCache,
    LearnedPositionalEmbedding,
    apply_temperature,
    sample_next_token,
    top_k_filter,
    top_p_filter,
)
from attnlab.settings import course_settings

CI = course_settings().ci  # the automatic tests shrink every experiment
torch.manual_seed(0)
plt.rcParams["figure.dpi"] = 90

text = load_shakespeare()
tok = CharTokenizer(text)
V = tok.vocab_size
data = torch.tensor(tok.encode(text), dtype=torch.long)
train_data, val_data = train_val_split(data, 0.9)
print(f"{len(text):,} characters, vocabulary of {V}; {len(train_data):,} for training, {len(val_data):,} for validation")

# %% [markdown]
# ## 1 · The autoregressive factorisation
#
# By the chain rule of probability, *any* distribution over sequences can be written as a product of next-token conditionals:
#
# $$
# p(x_1, x_2, \dots, x_T) = \prod_{t=1}^{T} p(x_t \mid x_1, \dots, x_{t-1}) = \prod_{t=1}^{T} p(x_t \mid x_{<t}).
# $$
#
# A decoder-only Transformer models each factor: the logits $z_t \in \mathbb{R}^{V}$ at position $t$ give
# $p_\theta(x_{t+1} \mid x_{\le t}) = \mathrm{softmax}(z_t)$. Training maximises the log-likelihood of real text, i.e. minimises the
# average **negative log-likelihood** (cross-entropy), measured in nats per token:
#
# $$
# \mathcal{L}(\theta) = -\frac{1}{T-1}\sum_{t=1}^{T-1} \log p_\theta(x_{t+1} \mid x_{\le t}).
# $$
#
# A model that knows nothing spreads probability evenly: $\mathcal{L} = \ln V = \ln 65 \approx 4.17$ nats per character.
# That is the number an untrained model should start near.

# %% [markdown]
# ## 2 · Teacher forcing: inputs and targets are the same text, shifted by one
#
# During training we feed the model the **true** prefix at every position (the "teacher" forces the right history), and ask
# every position for its next token. The target sequence is the input shifted left by one:

# %%
snippet = "To be, or not"
ids = tok.encode(snippet)
inputs, targets = ids[:-1], ids[1:]  # position t reads x_t and must predict x_{t+1}
print("position :", " ".join(f"{t:>3}" for t in range(len(inputs))))
print("input    :", " ".join(f"{tok.decode([i])!r:>3}" for i in inputs))
print("target   :", " ".join(f"{tok.decode([i])!r:>3}" for i in targets))

# %% [markdown]
# Position 0 sees only `T` and must say `o`; position 5 sees `To be,` and must say a space; and so on. All 12 predictions
# come out of **one** forward pass, and they are honest only because the causal mask stops position $t$ from reading
# the input at $t+1$, which *is* its target (lesson 07). `attnlab.data.get_batch` cuts random training windows this way,
# and `GPT(idx, targets)` returns the mean cross-entropy. Let us recompute that loss by hand for an untrained GPT:

# %%
x_tf = torch.tensor([inputs])  # (B=1, T=12)
y_tf = torch.tensor([targets])  # (1, 12)
torch.manual_seed(0)
gpt_small = GPT(GPTConfig(vocab_size=V, block_size=64, d_model=64, n_heads=4, n_layers=2))
logits, loss = gpt_small(x_tf, y_tf)  # logits: (1, 12, V)

log_probs = logits.log_softmax(dim=-1)  # (1, 12, V)
nll_per_position = -log_probs[0, torch.arange(len(targets)), y_tf[0]]  # (12,): -log p(correct next char)
print("per-position NLL:", [round(v, 2) for v in nll_per_position.tolist()])
print(f"mean = {nll_per_position.mean().item():.4f}   vs  ln V = {math.log(V):.4f}")
torch.testing.assert_close(nll_per_position.mean(), loss)
torch.testing.assert_close(F.cross_entropy(logits.reshape(-1, V), y_tf.reshape(-1)), loss)
print("✓ matches the loss returned by GPT(idx, targets)")

xb, yb = get_batch(train_data, block_size=8, batch_size=2, generator=torch.Generator().manual_seed(0))
assert torch.equal(xb[:, 1:], yb[:, :-1])  # y is x shifted left by one
print("a get_batch window:", repr(tok.decode(xb[0])), "->", repr(tok.decode(yb[0])))

# %% [markdown]
# ### The decoder of an encoder–decoder model: `<bos>` and the shift to the right
#
# A GPT reads and predicts the *same* text, so shifting it by one is all it needs. The decoder of an
# encoder–decoder model (lesson 07) must *produce* a target sentence $y_1 \dots y_n$ that is not in its
# input at all, and its first prediction $y_1$ still needs a position to be made at. So the decoder's
# input is the target **shifted right** by one place, with a special **begin-of-sequence** token `<bos>`
# in front; the targets end with an **end-of-sequence** token `<eos>`, so that the model also learns when
# to stop:
#
# $$ \text{decoder input} = [\texttt{<bos>}, y_1, \dots, y_n], \qquad
#    \text{targets} = [y_1, \dots, y_n, \texttt{<eos>}]. $$
#
# Position $t$ reads `<bos>` and $y_1 \dots y_t$ (causal mask) and must say $y_{t+1}$: the same
# one-step shift as above. At generation time the decoder starts from `[<bos>]` alone and appends its own
# predictions until it emits `<eos>`. Common mistakes: feeding the unshifted target (position $t$ can then
# read its own answer, the loss drops to almost 0 and generation fails), and forgetting `<eos>` (the
# model never learns to stop).
#
# **Padding belongs in the loss too.** Sentences in a batch have different lengths, so targets are padded
# with a `<pad>` id. The attention padding mask (lesson 03) stops real tokens from *reading* pads, but the
# loss would still ask the model to *predict* `<pad>` at every padded position, and those easy, meaningless
# predictions would be averaged into the loss. `F.cross_entropy(..., ignore_index=PAD)` skips them: the
# mean is taken over the real targets only.

# %%
PAD, BOS, EOS = 0, 1, 2
targets_batch = [[7, 8, 9], [5, 6]]                                 # two target sentences (token ids)
n_max = max(len(t) for t in targets_batch) + 1                      # + <eos>
dec_in = torch.full((2, n_max), PAD)                                # (B, T) decoder inputs
dec_tgt = torch.full((2, n_max), PAD)                               # (B, T) targets
for b, t in enumerate(targets_batch):
    dec_in[b, : len(t) + 1] = torch.tensor([BOS] + t)               # shifted right behind <bos>
    dec_tgt[b, : len(t) + 1] = torch.tensor(t + [EOS])              # the sentence, then <eos>
print("decoder input:\n", dec_in, "\ntargets:\n", dec_tgt)

logits_pad = torch.randn(2, n_max, 10, generator=torch.Generator().manual_seed(0))  # (B, T, vocab) any logits
loss_ignore = F.cross_entropy(logits_pad.reshape(-1, 10), dec_tgt.reshape(-1), ignore_index=PAD)
per_token = F.cross_entropy(logits_pad.reshape(-1, 10), dec_tgt.reshape(-1), reduction="none")
real = dec_tgt.reshape(-1) != PAD
torch.testing.assert_close(loss_ignore, per_token[real].mean())     # = mean over the real targets
loss_with_pads = per_token.mean()                                   # the mistake: pads averaged in
print(f"{int(real.sum())} real targets of {real.numel()}: loss with ignore_index {loss_ignore:.3f}, "
      f"with the pads averaged in {loss_with_pads:.3f}")

# %% [markdown]
# ## 3 · Training a small character model
#
# For the rest of the lesson we need a model that has learned *something*. We assemble a small decoder-only language
# model from attnlab blocks: token embedding + learned positions + 2 `DecoderBlock`s without cross-attention + final
# LayerNorm + read-out. It is the GPT layout with one extra switch, `causal`, which §8 uses to break it on purpose.
# The training loop is the standard one: sample a batch, compute the shifted next-token loss, step the optimiser.

# %%
BLOCK = 32  # context length


class CharLM(nn.Module):
    """Decoder-only character LM from attnlab blocks; ``causal=False`` removes the mask (for §8 only)."""

    def __init__(self, causal: bool = True, d_model: int = 64, n_layers: int = 2, n_heads: int = 4):
        super().__init__()
        self.causal = causal
        self.tok = nn.Embedding(V, d_model)
        self.pos = LearnedPositionalEmbedding(BLOCK, d_model)
        self.blocks = nn.ModuleList(
            DecoderBlock(d_model, n_heads, 4 * d_model, norm_first=True, cross_attention=False) for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, V)

    def forward(self, idx: torch.Tensor, causal: bool | None = None) -> torch.Tensor:
        """idx: (B, T) token ids -> logits (B, T, V). ``causal`` overrides the training-time setting."""
        causal = self.causal if causal is None else causal
        h = self.pos(self.tok(idx))  # (B, T, d_model)
        for block in self.blocks:
            h = block(h, is_causal=causal)  # (B, T, d_model)
        return self.head(self.norm(h))  # (B, T, V)


def train_lm(causal: bool, steps: int, batch_size: int = 32, lr: float = 3e-3):
    torch.manual_seed(0)
    model = CharLM(causal)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        x, y = get_batch(train_data, BLOCK, batch_size, gen)  # (B, T) each; y = x shifted by one
        loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))  # teacher-forced next-token loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model.eval(), losses


@torch.no_grad()
def val_loss(model: CharLM, causal: bool = True, n_batches: int = 4) -> float:
    gen = torch.Generator().manual_seed(123)
    total = 0.0
    for _ in range(n_batches):
        x, y = get_batch(val_data, BLOCK, 64, gen)
        total += F.cross_entropy(model(x, causal=causal).reshape(-1, V), y.reshape(-1)).item()
    return total / n_batches


STEPS = 120 if CI else 600
t0 = time.perf_counter()
lm, lm_losses = train_lm(causal=True, steps=STEPS)
print(f"trained {STEPS} steps in {time.perf_counter() - t0:.1f} s; "
      f"train loss {sum(lm_losses[-10:]) / 10:.2f}, validation loss {val_loss(lm):.2f} nats/char (start: ln V = {math.log(V):.2f})")

# %% [markdown]
# ### Perplexity: the loss as a number of choices
#
# A loss in nats per character is hard to picture. Its exponential, the **perplexity**
# $\mathrm{PPL} = \exp\big(\tfrac1N \sum_t -\log p(x_t \mid x_{<t})\big)$, is easier: a model with perplexity $k$ is as
# uncertain, on average, as a uniform choice among $k$ characters. A uniform model over the vocabulary has perplexity
# exactly $V$; a perfect model has 1. Perplexity is only comparable between models with the **same tokenizer** (a word
# model and a character model predict different things), and it must be computed from the plain cross-entropy, never from
# a smoothed loss (below).
#
# ### Label smoothing
#
# The one-hot target asks the model to put probability 1 on the right token, which it can only approach by making its
# logits ever larger: over-confidence. **Label smoothing** (Szegedy et al. 2016; the original Transformer used
# $\varepsilon = 0.1$) trains against a softened target, $1 - \varepsilon$ on the right token and $\varepsilon$ spread
# uniformly over all $V$ tokens:
#
# $$ \mathcal{L}_\varepsilon = (1 - \varepsilon)\,\big(-\log p_y\big) + \varepsilon \cdot \frac1V \sum_{v} \big(-\log p_v\big). $$
#
# Vaswani et al. report that it hurts perplexity (the model learns to be less sure) but improves BLEU. In PyTorch it is
# one argument, `F.cross_entropy(..., label_smoothing=0.1)`:

# %%
val_nll = val_loss(lm)
print(f"validation loss {val_nll:.3f} nats/char -> perplexity {math.exp(val_nll):.2f} "
      f"(a uniform guess over the vocabulary: {V})")

eps = 0.1
x_ls, y_ls = get_batch(val_data, BLOCK, 8, torch.Generator().manual_seed(5))
with torch.no_grad():
    logp_ls = lm(x_ls).log_softmax(-1).reshape(-1, V)  # (B*T, V)
nll_ls = -logp_ls.gather(1, y_ls.reshape(-1, 1)).squeeze(1)  # -log p of the right token
smoothed_by_hand = ((1 - eps) * nll_ls + eps * (-logp_ls).mean(dim=1)).mean()
smoothed = F.cross_entropy(logp_ls, y_ls.reshape(-1), label_smoothing=eps)
torch.testing.assert_close(smoothed, smoothed_by_hand)
print(f"plain cross-entropy {nll_ls.mean():.3f}, label-smoothed (eps = {eps}) {smoothed:.3f}: "
      f"the smoothed loss is not the model's NLL, so exp() of it is not a perplexity")


# %% [markdown]
# ## 4 · Greedy decoding
#
# At generation time there is no teacher: the prefix is whatever the model has produced so far. The simplest decoder takes the
# single most probable token every step,
#
# $$ \hat x_{t+1} = \arg\max_{v}\; p_\theta(v \mid \hat x_{\le t}), $$
#
# appends it, and repeats. It is deterministic and fast, but *locally* greedy: the best next token need not start the best
# continuation, and on a small model greedy text often falls into loops.

# %%
@torch.no_grad()
def generate(model, prompt_ids: torch.Tensor, n_new: int, **sampling) -> torch.Tensor:
    """Autoregressive loop: prompt_ids (1, t) -> (1, t + n_new). ``sampling`` goes to sample_next_token."""
    idx = prompt_ids
    for _ in range(n_new):
        out = model(idx[:, -BLOCK:])  # run on (at most) the last BLOCK tokens
        logits = out[0] if isinstance(out, tuple) else out  # GPT returns (logits, loss)
        next_id = sample_next_token(logits[:, -1, :], **sampling)  # (1,) from the LAST position's logits
        idx = torch.cat([idx, next_id[:, None]], dim=1)  # append and go again
    return idx


prompt = torch.tensor([tok.encode("ROMEO:\n")])
print(tok.decode(generate(lm, prompt, 150, greedy=True)[0]))

# %% [markdown]
# The same loop drives `GPT.generate` in the library. As a check, our loop and `GPT.generate(greedy=True, use_cache=False)`
# must produce identical tokens (here on the untrained GPT from §2, where any bug would show up as a mismatch):

# %%
mine = generate(gpt_small, prompt, 40, greedy=True)
library = gpt_small.generate(prompt, 40, greedy=True, use_cache=False)
assert torch.equal(mine, library)
print("✓ our greedy loop matches GPT.generate(greedy=True)")

# %% [markdown]
# ### Beam search: keep several candidates
#
# Greedy decoding maximises each step, but what we usually want is the most probable **whole** continuation,
#
# $$ \log p(y_1 \dots y_n) = \sum_{t=1}^{n} \log p(y_t \mid y_{<t}) . $$
#
# Trying every sequence is hopeless ($65^{20} \approx 2 \times 10^{36}$ for 20 characters). **Beam search** is the compromise:
# keep the $k$ best prefixes (the *beam*, $k$ = its width), extend each by every token, and keep the $k$ best of the
# $k \cdot V$ extensions by summed log-probability. $k = 1$ is greedy decoding; a beam wide enough never to prune anything
# ($k \ge V^{n-1}$) is exhaustive search. `attnlab.nn.sampling.beam_search` implements it (tested against an exhaustive
# search on a tiny model).
#
# *Worked example.* A three-token toy language: after `<s>`, token A has probability 0.6 and B 0.4; after A the best
# next token has 0.4, after B it has 0.9. Greedy takes A and ends with $0.6 \cdot 0.4 = 0.24$; a beam of width 2 also
# keeps B and finds $0.4 \cdot 0.9 = 0.36$.

# %%
from attnlab.nn.sampling import beam_search

toy = {0: [0.0, 0.6, 0.4], 1: [0.3, 0.4, 0.3], 2: [0.05, 0.9, 0.05]}  # last token -> next-token probabilities
names = {0: "<s>", 1: "A", 2: "B"}
toy_logits = lambda ids: torch.tensor([toy[int(seq[-1])] for seq in ids]).log()  # noqa: E731  (n, t) -> (n, V)
for width in (1, 2):
    best = beam_search(toy_logits, torch.tensor([0]), 2, beam_width=width)[0]
    print(f"width {width}: {' '.join(names[t] for t in best.tokens.tolist())}   p = {math.exp(best.log_prob):.2f}")
assert math.isclose(math.exp(beam_search(toy_logits, torch.tensor([0]), 2, beam_width=2)[0].log_prob), 0.4 * 0.9,
                    abs_tol=1e-6)

# %% [markdown]
# **The bias towards short outputs.** When a beam may stop (by emitting an end token), every extra token multiplies in
# one more probability below 1, so the summed log-probability of a long answer is almost always lower than that of a
# short one, and an unnormalised beam search prefers to stop early, sometimes with an empty answer. The usual fix
# (Wu et al. 2016) ranks finished beams by a *length-normalised* score, $\log p(y) / n^{\alpha}$ with $\alpha$ around
# 0.6 to 1. In the toy below, stopping at once has probability 0.4, while a four-token answer has
# $0.6 \cdot 0.8^3 \approx 0.31$ in total but much likelier tokens one by one:

# %%
stop_toy = {3: [0.4, 0.6, 0.0], 1: [0.2, 0.8, 0.0], 2: [0.0, 0.0, 1.0]}  # token 0 = end, 3 = start
stop_logits = lambda ids: torch.tensor([stop_toy[int(seq[-1])] for seq in ids]).log()  # noqa: E731
for alpha in (0.0, 1.0):
    best = beam_search(stop_logits, torch.tensor([3]), 4, beam_width=3, eos_id=0, length_alpha=alpha)[0]
    print(f"alpha {alpha}: tokens {best.tokens.tolist()[1:]}, p = {math.exp(best.log_prob):.3f}, score {best.score:.3f}")

# %% [markdown]
# **Try it** on the character model: the beam width and the length of the continuation. Look at the summed
# log-probability (higher is more probable): does a wider beam find more probable text than greedy? Is the text better?

# %%
lm_logits = lambda ids: lm(ids[:, -BLOCK:])[:, -1]  # noqa: E731  (n, t) -> (n, V) logits of the last position


@torch.no_grad()
def beam_panel(width=4, n_new=40):
    for k in sorted({1, width}):
        best = beam_search(lm_logits, prompt[0], n_new, beam_width=k)[0]
        text_k = tok.decode(best.tokens[prompt.shape[1]:].tolist())
        print(f"width {k}: log p = {best.log_prob:7.2f}   {text_k!r}")


widgets.interact(beam_panel, width=widgets.IntSlider(value=4, min=1, max=8, description="beam width"),
                 n_new=widgets.IntSlider(value=40, min=10, max=80, step=10, description="characters"));

# %% [markdown]
# On open-ended text the most probable continuation is often dull or repetitive (Holtzman et al., ICLR 2020), so chat models and
# story generators *sample* (next section), while beam search is used where one right answer exists: translation,
# summarisation, speech recognition. Common mistakes: multiplying probabilities instead of summing log-probabilities
# (the product underflows to 0 after a few hundred tokens), ranking beams by the last token's probability instead of the
# whole prefix's, and comparing finished beams of different lengths without length normalisation.

# %% [markdown]
# ## 5 · Sampling: temperature, top-k and top-p
#
# To get varied text we *sample* $\hat x_{t+1} \sim p$ instead of taking the argmax, after reshaping the distribution:
#
# * **Temperature** $\tau > 0$ divides the logits: $p_i = \dfrac{e^{z_i/\tau}}{\sum_j e^{z_j/\tau}}$. $\tau < 1$ sharpens
#   (towards greedy as $\tau \to 0$), $\tau > 1$ flattens (towards uniform).
# * **Top-k** keeps the $k$ most probable tokens, sets the others' logits to $-\infty$, and renormalises.
# * **Top-p** (nucleus sampling, Holtzman et al. 2020) keeps the *smallest* set of most probable tokens whose total probability
#   reaches $p$, and renormalises. Unlike top-k, the number kept adapts: few tokens when the model is confident, many when it is not.
#
# In `attnlab.nn` the order is temperature, then top-k, then top-p, then sample (`sample_next_token`).
#
# **Worked example.** Five tokens with logits $z = (2.0,\ 1.0,\ 0.5,\ 0.0,\ -1.0)$.
# * $\tau = 1$: $e^{z} = (7.389, 2.718, 1.649, 1.000, 0.368)$, sum $13.124$, so $p = (0.563, 0.207, 0.126, 0.076, 0.028)$.
# * $\tau = 0.5$: $e^{z/\tau} = (54.60, 7.389, 2.718, 1.000, 0.135)$, sum $65.84$, so $p = (0.829, 0.112, 0.041, 0.015, 0.002)$.
# * top-$k$, $k = 2$: keep $7.389$ and $2.718$: $p = (0.731, 0.269, 0, 0, 0)$.
# * top-$p$, $p = 0.8$: cumulative mass $0.563,\ 0.770,\ 0.896$: two tokens are not enough (0.770 < 0.8), three are. Keep three:
#   $p = (0.563, 0.207, 0.126)/0.896 = (0.628, 0.231, 0.141, 0, 0)$.

# %%
z = torch.tensor([2.0, 1.0, 0.5, 0.0, -1.0])
show = lambda p: [round(v, 3) for v in p.tolist()]  # noqa: E731
print("tau = 1     :", show(z.softmax(-1)))
print("tau = 0.5   :", show(apply_temperature(z, 0.5).softmax(-1)))
print("top-k, k=2  :", show(top_k_filter(z, 2).softmax(-1)))
print("top-p, p=0.8:", show(top_p_filter(z, 0.8).softmax(-1)))
torch.testing.assert_close(top_k_filter(z, 2).softmax(-1), torch.tensor([0.731, 0.269, 0, 0, 0]), atol=1e-3, rtol=0)
torch.testing.assert_close(top_p_filter(z, 0.8).softmax(-1), torch.tensor([0.628, 0.231, 0.141, 0, 0]), atol=1e-3, rtol=0)
print("✓ the library's filters agree with the hand computation")

# %% [markdown]
# ### Try it: shape the next-character distribution
#
# The panel shows our trained model's distribution for the character after the prompt below (grey: the raw $\tau = 1$
# distribution; colour: after your temperature and filters, renormalised), and a sample of text generated with the same settings.
# Try $\tau = 0.3$ vs $2$; $k = 1$ (what is that?); $p = 0.5$ vs $0.99$. How many characters does top-p keep after `"the kin"`
# compared with after `"ROMEO:\n"`?

# %%
sampling_out = widgets.Output()


@torch.no_grad()
def show_sampling(prompt_text: str = "KING RICHARD:\nWhat is th", temperature: float = 0.8, top_k: int = 10,
                  top_p: float = 0.9, seed: int = 0) -> None:
    prompt_ids = torch.tensor([tok.encode(prompt_text or "\n")])
    logits = lm(prompt_ids[:, -BLOCK:])[0, -1]  # (V,)
    raw = logits.softmax(-1)
    shaped = top_p_filter(top_k_filter(apply_temperature(logits, temperature), top_k), top_p).softmax(-1)
    order = raw.argsort(descending=True)[:20]  # the 20 most likely characters under the raw model
    labels = [repr(tok.decode([i]))[1:-1] or "␣" for i in order.tolist()]
    labels = ["␣" if s == " " else s for s in labels]
    sample = generate(lm, prompt_ids, 120, temperature=temperature, top_k=top_k, top_p=top_p,
                      generator=torch.Generator().manual_seed(seed))
    with sampling_out:
        sampling_out.clear_output(wait=True)
        fig, ax = plt.subplots(figsize=(9, 3))
        pos = torch.arange(len(order))
        ax.bar(pos - 0.2, raw[order], width=0.4, color="lightgrey", label="raw model (τ = 1)")
        ax.bar(pos + 0.2, shaped[order], width=0.4, color="tab:blue", label=f"τ={temperature}, k={top_k}, p={top_p}")
        ax.set_xticks(pos, labels)
        ax.set_ylabel("probability")
        ax.set_title(f"next character after {prompt_text[-20:]!r}: {int((shaped > 0).sum())} of {V} kept")
        ax.legend()
        plt.show()
        print(tok.decode(sample[0]))


controls = {
    "prompt_text": widgets.Text(value="KING RICHARD:\nWhat is th", description="prompt"),
    "temperature": widgets.FloatSlider(value=0.8, min=0.1, max=2.0, step=0.1, description="temperature"),
    "top_k": widgets.IntSlider(value=10, min=1, max=V, description="top-k"),
    "top_p": widgets.FloatSlider(value=0.9, min=0.05, max=1.0, step=0.05, description="top-p"),
    "seed": widgets.IntSlider(value=0, min=0, max=20, description="seed"),
}
widgets.interactive_output(show_sampling, controls)
display(widgets.VBox([widgets.HBox([controls["prompt_text"], controls["seed"]]),
                      widgets.HBox([controls["temperature"], controls["top_k"], controls["top_p"]]), sampling_out]))

# %% [markdown]
# ## 6 · The KV cache: why each new token costs $O(t)$, not $O(t^2)$
#
# The naive loop of §4 re-runs the model on the whole prefix for every new token. But look at what a causal layer computes
# at step $t$: the keys and values of positions $1..t-1$ are **exactly the same** as at the previous step, because (causal
# theorem!) nothing about a position changes when later tokens arrive. Only the new token is new. So we can
#
# 1. keep, per layer, the keys $K$ and values $V$ of all previous positions (the **KV cache**);
# 2. at each step feed **only the newest token**: compute its $q, k, v$, append $k, v$ to the cache, and let the one query
#    attend to all $t$ cached keys.
#
# | per new token, per layer | without cache | with cache |
# |---|---|---|
# | projections $W_Q, W_K, W_V, W_O$, FFN | $t$ rows: $O(t\, d^2)$ | 1 row: $O(d^2)$ |
# | attention scores | $t \times t$: $O(t^2 d)$ | $1 \times t$: $O(t\, d)$ |
#
# Generating $n$ tokens therefore costs $O(n^2)$ in attention with the cache instead of $O(n^3)$ without. The price is memory:
#
# $$ \text{cache bytes} = 2 \cdot n_\text{layers} \cdot B \cdot t \cdot d_\text{model} \cdot \text{bytes per number} $$
#
# (the 2 is for K and V; all heads together are $d_\text{model}$ wide). `GPT.generate(use_cache=True)` uses one
# `attnlab.nn.KVCache` per layer, pre-allocated: each new key and value goes into the next free slot (the storage doubles
# when full) instead of copying everything with `torch.cat` at every step (and `causal_mask(L, S)` with $S > L$ aligns queries with the cached keys). Let us **measure**:
# time per generated token, against its position, with and without the cache, on a random GPT (the weights do not matter for speed).
#
# First the cache as a picture: at every step one new query, one new key/value column appended, every earlier column reused.

# %%
from attnlab.diagrams import kv_cache_steps

kv_cache_steps()
plt.show()

# %%
N_NEW, REPEATS = (112, 4) if CI else (400, 5)
torch.manual_seed(0)
timing_gpt = GPT(GPTConfig(vocab_size=V, block_size=512, d_model=128, n_heads=4, n_layers=4)).eval()

step_times: list[float] = []  # filled by two hooks: one forward call of the GPT = one generated token
_start: list[float] = []
hooks = [timing_gpt.register_forward_pre_hook(lambda mod, args: _start.append(time.perf_counter())),
         timing_gpt.register_forward_hook(lambda mod, args, out: step_times.append(time.perf_counter() - _start[-1]))]

per_token, totals, outputs = {}, {True: [], False: []}, {}
runs = {True: [], False: []}
for _ in range(REPEATS):  # interleaved, so a burst of load on a shared machine hits both the same
    for use_cache in (True, False):
        step_times.clear()
        t0 = time.perf_counter()
        outputs[use_cache] = timing_gpt.generate(torch.zeros(1, 1, dtype=torch.long), N_NEW, greedy=True,
                                                 use_cache=use_cache)
        totals[use_cache].append(time.perf_counter() - t0)
        runs[use_cache].append(list(step_times))
for use_cache in (True, False):  # the median over repeats, per position (ms): robust to outliers
    per_token[use_cache] = [1e3 * float(torch.tensor(times).median()) for times in zip(*runs[use_cache])]
    totals[use_cache] = float(torch.tensor(totals[use_cache]).median())
for h in hooks:
    h.remove()

assert torch.equal(outputs[True], outputs[False])  # the cache changes the cost, never the result
print("✓ identical tokens with and without the cache")


def running_median(values, k=15):
    return [sorted(values[max(0, i - k + 1):i + 1])[len(values[max(0, i - k + 1):i + 1]) // 2] for i in range(len(values))]


fig, ax = plt.subplots(figsize=(8, 3.4))
for use_cache, colour in ((False, "tab:red"), (True, "tab:green")):
    ms = per_token[use_cache]
    ax.plot(range(1, len(ms) + 1), ms, color=colour, alpha=0.25, lw=0.8)
    ax.plot(range(1, len(ms) + 1), running_median(ms), color=colour, lw=2,
            label=f"{'with' if use_cache else 'without'} KV cache ({totals[use_cache]:.2f} s for {N_NEW} tokens)")
ax.set_xlabel("position t of the generated token")
ax.set_ylabel("time for this token (ms)")
ax.set_ylim(bottom=0)
ax.set_title("Cost of each new token (random 4-layer GPT, d_model = 128, CPU)")
ax.legend()
plt.show()
slope = {}
for use_cache in (False, True):
    ms = per_token[use_cache]
    # least-squares trend of the per-token time against the position, in ms per 100 positions
    pos = torch.arange(1, len(ms) + 1, dtype=torch.float64)
    y = torch.tensor(ms, dtype=torch.float64)
    slope[use_cache] = 100 * float(((pos - pos.mean()) * (y - y.mean())).sum() / ((pos - pos.mean()) ** 2).sum())
    print(f"{'with   ' if use_cache else 'without'} cache: tokens 2-21 {sum(ms[1:21]) / 20:.2f} ms/token, "
          f"last 20 tokens {sum(ms[-20:]) / 20:.2f} ms/token, trend {slope[use_cache]:+.2f} ms per 100 positions")
print(f"median over {REPEATS} interleaved runs; total {totals[False]:.2f} s without the cache vs "
      f"{totals[True]:.2f} s with it ({totals[False] / totals[True]:.1f}x)")
if slope[False] > 2 * max(slope[True], 0.0) and slope[False] > 0:
    print("the trend is clear in this run: the cost per token grows with the position only without the cache")
else:
    print("this run was too noisy to show the trend (a busy machine?): run the cell again")

# %% [markdown]
# Without the cache the cost per token climbs with the position: every step re-reads the whole prefix. With it the cost
# stays almost flat: at this small size the $O(t\,d)$ attention over the cache is cheap next to the fixed $O(d^2)$ work per
# token. The printed trends put numbers on both slopes. For the first few tokens the two are about equal (the cache even
# adds a little bookkeeping), so the saving grows with the length of the text. Timings on a shared machine are noisy: that
# is why the runs are interleaved, the median per position is kept, and the trend is fitted over all positions rather
# than read off two points.
#
# **How big is the cache?** Let us count the bytes actually stored and compare with the formula:

# %%
caches = [KVCache() for _ in timing_gpt.blocks]
t_fill = outputs[True].shape[1]  # all the tokens generated above
with torch.no_grad():
    timing_gpt(outputs[True], caches=caches)  # fill one cache per layer with t_fill positions
stored = sum(c.k.numel() * c.k.element_size() + c.v.numel() * c.v.element_size() for c in caches)
cfg = timing_gpt.config
formula = 2 * cfg.n_layers * 1 * t_fill * cfg.d_model * 4  # B = 1, float32 = 4 bytes
print(f"cached K and V per layer: {tuple(caches[0].k.shape)} = (B, H, t, d_k) each")
print(f"stored {stored:,} bytes; formula 2·n_layers·B·t·d_model·4 = {formula:,} bytes")
assert stored == formula


def cache_bytes(n_layers, d_model, t, batch=1, bytes_per=2):
    return 2 * n_layers * batch * t * d_model * bytes_per


print(f"GPT-2 small (12 layers, d=768), 1,024 tokens, fp16 : {cache_bytes(12, 768, 1024) / 2**20:.1f} MiB per sequence")
print(f"a 7B-class model (32 layers, d=4096), 4,096 tokens : {cache_bytes(32, 4096, 4096) / 2**30:.1f} GiB per sequence")


# %% [markdown]
# For large models serving many users, the cache, not the weights, is often what fills the accelerator's memory; this is
# why variants such as multi-query and grouped-query attention (fewer K/V heads) exist (lesson 05 compares them).

# %% [markdown]
# ## 7 · Exposure bias
#
# Teacher forcing trains every prediction on a **perfect** prefix. At generation time the prefix contains the model's own
# choices, and some of them are mistakes. The model has never been trained on prefixes with its own kind of errors, so one
# slip can push it into unfamiliar territory where it slips again: errors compound. This train/test mismatch is called
# **exposure bias**.
#
# A cheap way to feel it: corrupt a fraction of the *input* characters of validation windows (as if earlier predictions had gone
# wrong), keep the targets clean, and see what happens to the loss.

# %%
@torch.no_grad()
def loss_with_corrupted_prefix(rate: float) -> float:
    gen = torch.Generator().manual_seed(7)
    x, y = get_batch(val_data, BLOCK, 256, gen)
    flip = torch.rand(x.shape, generator=gen) < rate
    x = torch.where(flip, torch.randint(0, V, x.shape, generator=gen), x)  # random wrong characters
    return F.cross_entropy(lm(x).reshape(-1, V), y.reshape(-1)).item()


for rate in (0.0, 0.05, 0.1, 0.2):
    print(f"{rate:4.0%} of the prefix characters wrong -> next-character loss {loss_with_corrupted_prefix(rate):.2f}")

# %% [markdown]
# Every percent of noise in the history costs accuracy on the next character, and in real generation that next character
# becomes part of the history too. Remedies exist (scheduled sampling, sequence-level training, RL fine-tuning, and simply
# better models that make fewer first mistakes), but teacher forcing stays the default because it is fast and parallel.
# Sampling settings also matter here: a low temperature or small $p$ avoids the unlikely tokens that derail a continuation,
# at the price of blander text.

# %% [markdown]
# ## 8 · What if the causal mask is dropped during training?
#
# Suppose a bug removes the causal mask during training, but generation (where the future does not exist) works as usual.
# With teacher forcing the target at position $t$ is the *input* at position $t+1$, and without the mask attention can simply
# read it. We train the same model twice, same seed, same batches, and change only `causal`:

# %%
t0 = time.perf_counter()
leaky, leaky_losses = train_lm(causal=False, steps=STEPS)
print(f"trained the unmasked model in {time.perf_counter() - t0:.1f} s")


def smooth(values, k=10):  # running mean, to see the trend through the batch-to-batch noise
    return [sum(values[max(0, i - k + 1):i + 1]) / len(values[max(0, i - k + 1):i + 1]) for i in range(len(values))]


rows = [("causal mask", lm, lm_losses), ("no mask in training", leaky, leaky_losses)]
results = {name: (sum(losses[-10:]) / 10, val_loss(model, causal=False), val_loss(model, causal=True))
           for name, model, losses in rows}

fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 3.4), gridspec_kw={"width_ratios": [3, 2]})
ax.plot(smooth(lm_losses), color="tab:green", label="causal mask (correct)")
ax.plot(smooth(leaky_losses), color="tab:red", label="no mask during training (bug)")
ax.axhline(math.log(V), color="grey", ls=":", lw=1, label="uniform guess, ln V")
ax.set_xlabel("training step")
ax.set_ylabel("training loss (nats / char)")
ax.set_title("Training: the buggy model looks far better")
ax.legend()
names = list(results)
ax2.bar([0, 1], [results[n][2] for n in names], color=["tab:green", "tab:red"])
ax2.axhline(math.log(V), color="grey", ls=":", lw=1)
ax2.set_xticks([0, 1], names)
ax2.set_ylabel("validation loss (nats / char)")
ax2.set_title("Used for generation (causal mask on)")
ax2.set_ylim(0, 1.15 * max(r[2] for r in results.values()))
for i, n in enumerate(names):
    ax2.text(i, results[n][2] + 0.05, f"{results[n][2]:.2f}", ha="center")
plt.tight_layout()
plt.show()

print(f"{'model':22s} {'train loss':>10s} {'val loss, no mask':>18s} {'val loss, causal (= generation)':>32s}")
for name, (train_l, val_open, val_causal) in results.items():
    print(f"{name:22s} {train_l:10.2f} {val_open:18.2f} {val_causal:32.2f}")

# %%
for name, model, _ in rows:
    with_mask = lambda idx, m=model: m(idx, causal=True)  # noqa: E731  generation: the causal mask is on
    sample = generate(with_mask, prompt, 120, temperature=0.8, generator=torch.Generator().manual_seed(0))
    print(f"--- {name} ---\n{tok.decode(sample[0])}\n")

# %% [markdown]
# **What happened.** Without the mask the training loss collapses towards zero: the model learned to *copy* the next
# character from the input, not to predict it. On validation text with the same (missing) mask it still looks excellent,
# which is how this bug survives code review. But evaluate it the way it will be used, where the next character is not
# there to copy (causal mask on), and the loss is far *worse* than the uniform guess $\ln V$: it never learned to predict
# anything. Its generated text is noise, while the honest model produces Shakespeare-shaped text.
#
# Lesson: a training loss that looks too good to be true, in a language model, usually is. The causal-mask perturbation check
# of lesson 07 catches this bug in one line.

# %% [markdown]
# ## Common mistakes
#
# * **Off-by-one targets**: using `y = x` (predict the current token, trivially) or shifting the wrong way. The target at position $t$ is $x_{t+1}$.
# * **Reading the wrong logits at generation**: the next token comes from the *last* position, `logits[:, -1, :]`.
# * **Forgetting `model.eval()`** before generating: dropout stays on and the samples get noisier (`GPT.generate` switches to eval for you).
# * **Temperature after top-p**: the nucleus then depends on the unscaled distribution. Apply temperature first, then filter, then sample.
# * **Treating $k$ and $p$ as interchangeable**: top-k keeps a fixed number of tokens, top-p a fixed probability mass.
# * **Caching with a non-causal model**: the cache is valid only because old positions never change, which is a consequence of the causal mask.
# * **Exceeding the context**: learned (absolute) positions stop at `block_size`. Past it `GPT.generate` crops to the
#   last `block_size` tokens and recomputes them every step, so the KV cache no longer saves work; it cannot slide
#   either, because the kept keys were computed at their old positions. A model with rotary positions
#   (`GPTConfig(positional="rotary")`) encodes only distances, so it keeps its cache and slides it
#   (`KVCache(window=block_size)`): each new token attends to the last `block_size` tokens, one token per step. That is
#   sliding-window attention, not identical to recomputing the window.
# * **Trusting a suspiciously low training loss**: check that no position can see its own target.
#
# ## Summary
#
# * $p(x_{1:T}) = \prod_t p(x_t \mid x_{<t})$; training minimises the next-token cross-entropy, all positions at once.
# * Teacher forcing: input = text, target = text shifted left by one; honest only with the causal mask.
# * Decoding: greedy (argmax), or sampling after temperature → top-k → top-p.
# * KV cache: reuse past keys/values; per-token cost $O(t)$ instead of re-running the prefix; memory $2\,n_\text{layers} B\, t\, d_\text{model}$ numbers.
# * Exposure bias: trained on gold prefixes, used on its own; a model trained without its mask learns to copy and fails at generation.
#
# Next: lesson 09 puts everything together and trains a GPT on Tiny Shakespeare.

# %%
from attnlab.practice import mastery_check

mastery_check("08")
