"""The capstone's ladder: a GPT built up one piece at a time, each rung trained briefly.

Lesson 09 trains the full GPT at once; the ladder shows what each piece buys. Every rung is a
character-level language model with the interface of :class:`attnlab.nn.GPT`
(``model(idx, targets) -> (logits (B, L, V), loss)``, a ``config`` with ``block_size``), so
:func:`attnlab.training.train` trains it:

==============  =====================================================================
rung            model
==============  =====================================================================
``uniform``     every character equally likely: logits 0, loss ln V, nothing to train
``bigram``      a (V, V) table of next-character logits: context of one character
``one_head``    token + learned position embedding -> ONE causal self-attention head
                (width d_model) -> tied output layer
``multi_head``  the same with ``n_heads`` heads of width d_k = d_model / n_heads
``ffn``         + a position-wise GELU feed-forward network after the attention
``residual_ln`` one pre-LN decoder block: residual connections, LayerNorms, final LN
                (``attnlab.nn.GPT`` with one layer)
``stack``       ``n_layers`` such blocks: ``attnlab.nn.GPT`` itself
==============  =====================================================================

The bigram and the stack are the two ends of Karpathy's "Let's build GPT" (2023) progression;
the pieces are Vaswani et al. 2017 (§3.2 attention, §3.3 FFN, §3.1 residual + LayerNorm) in
the pre-LN arrangement of GPT-2 (Radford et al. 2019).

Every module comes from :mod:`attnlab.nn` (no second copy). A learner can plug in their own
pieces from exercises 02, 05 and 06 through :class:`Components`; each supplied module is
loaded with the weights the reference module was initialised with, so a correct piece gives the
reference's losses and a wrong one shows what it costs. :func:`check_components` compares each
piece with the reference on random inputs and probes causality.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from attnlab.nn import GPT, GPTConfig, FeedForward, MultiHeadAttention, causal_mask, merge_heads, split_heads
from attnlab.nn import scaled_dot_product_attention as reference_attention
from attnlab.nn.positional import LearnedPositionalEmbedding
from attnlab.training import TrainConfig, estimate_loss, train

__all__ = ["RUNGS", "RUNG_LABELS", "LadderConfig", "Components", "RungResult", "build_rung",
           "attention_module", "train_ladder", "check_components", "leaks_future"]

#: The rungs, bottom to top.
RUNGS = ("uniform", "bigram", "one_head", "multi_head", "ffn", "residual_ln", "stack")
#: Short labels for tables and plots.
RUNG_LABELS = {
    "uniform": "uniform", "bigram": "bigram", "one_head": "1 head", "multi_head": "multi-head",
    "ffn": "+ FFN", "residual_ln": "+ residual & LN", "stack": "block stack",
}


@dataclass(frozen=True)
class LadderConfig:
    """Sizes and training settings shared by every rung (same seed, batches and steps).

    Defaults keep a rung at a few seconds on a 2-core CPU: d_model 64, context 32, 4 heads,
    4 layers for the stack, 200 AdamW steps of 16 windows. ``ValueError`` (from
    :class:`~attnlab.nn.GPTConfig` / :class:`~attnlab.training.TrainConfig`) names a bad field.
    """

    vocab_size: int
    block_size: int = 32
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 4
    steps: int = 200
    batch_size: int = 16
    learning_rate: float = 3e-3
    warmup_iters: int = 20
    eval_interval: int = 50
    eval_iters: int = 8
    seed: int = 1337
    #: torch threads while training (tiny models run fastest on one); None = the count in force when the
    #: ladder trains.  Either way the count is fixed for the whole run (the training loop's load-driven
    #: thread governor is off): a rung's losses do not depend on how busy the machine is.
    num_threads: int | None = 1

    def gpt_config(self, n_layers: int | None = None, n_heads: int | None = None) -> GPTConfig:
        """The :class:`GPTConfig` of a rung (no dropout, biases, pre-LN, learned positions)."""
        return GPTConfig(self.vocab_size, self.block_size, self.d_model, n_heads or self.n_heads,
                         n_layers or self.n_layers, dropout=0.0, bias=True)

    def train_config(self) -> TrainConfig:
        """The :class:`TrainConfig` every rung is trained with (CPU, fp32, a fixed thread count)."""
        threads = self.num_threads if self.num_threads is not None else torch.get_num_threads()
        return TrainConfig(max_iters=self.steps, batch_size=self.batch_size, learning_rate=self.learning_rate,
                           min_lr=self.learning_rate / 10, warmup_iters=min(self.warmup_iters, self.steps - 1),
                           eval_interval=self.eval_interval, eval_iters=self.eval_iters, seed=self.seed,
                           device="cpu", precision="fp32", threads=threads)


@dataclass(frozen=True)
class Components:
    """Learner-supplied pieces (each optional; ``None`` = the :mod:`attnlab.nn` reference).

    Attributes:
        attention: a function ``(q, k, v, mask) -> (out, weights)`` with the contract of
            :func:`attnlab.nn.scaled_dot_product_attention` (exercise 02): ``q: (B, H, L, d_k)``,
            bool ``mask`` broadcastable to ``(L, S)``, True = may attend. Used inside
            :func:`attention_module` when ``mha`` is not given.
        mha: a class with the constructor ``(d_model, n_heads, bias=...)`` and the forward of
            :class:`attnlab.nn.MultiHeadAttention` (exercise 05): called as
            ``mha(x, is_causal=True)`` (and by the blocks with ``attn_mask``,
            ``key_padding_mask``, ``cache`` = None), returning ``(out (B, L, d_model), weights)``;
            parameters ``w_q, w_k, w_v, w_o``.
        ffn: a class with the constructor ``(d_model, d_ff, activation=..., bias=...)`` and
            ``forward(x)`` of :class:`attnlab.nn.FeedForward` (exercise 06); parameters ``w_1, w_2``.
        block_forward: ``(x, self_attn, ffn, norm1, norm2, norm_first) -> x`` (exercise 06);
            ``self_attn(h)`` returns ``(out, weights)``, already causal.
    """

    attention: Callable | None = None
    mha: type | None = None
    ffn: type | None = None
    block_forward: Callable | None = None


def attention_module(attention: Callable) -> type:
    """A :class:`~attnlab.nn.MultiHeadAttention` whose heads use ``attention(q, k, v, mask)``.

    Only causal or unmasked self-attention without a cache (what the ladder needs):
    ``split_heads`` -> ``attention`` with ``causal_mask(L, L)`` -> ``merge_heads`` -> ``w_o``, the
    explicit path of the reference (same parameters, so the same weights load into it).

    Raises (forward):
        ValueError: key/value, a mask or a cache given (not supported by this adapter).
    """

    class AttentionWith(MultiHeadAttention):
        def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None, *,
                    attn_mask: Tensor | None = None, key_padding_mask: Tensor | None = None,
                    need_weights: bool = False, cache=None, is_causal: bool = False):
            """``query: (B, L, d_model) -> (out (B, L, d_model), weights (B, H, L, L) or None)``."""
            if key is not None or value is not None or attn_mask is not None or key_padding_mask is not None \
                    or cache is not None:
                raise ValueError("attention_module supports causal or unmasked self-attention only "
                                 "(no key/value, masks or cache).")
            L = query.shape[1]
            q = split_heads(self.w_q(query), self.n_heads)  # (B, H, L, d_k)
            k = split_heads(self.w_k(query), self.n_heads)
            v = split_heads(self.w_v(query), self.n_heads)
            mask = causal_mask(L, L, device=query.device) if is_causal else None  # (L, L)
            out, weights = attention(q, k, v, mask)  # (B, H, L, d_k), (B, H, L, L)
            return self.w_o(merge_heads(out)), (weights if need_weights else None)

    AttentionWith.__name__ = AttentionWith.__qualname__ = f"AttentionWith[{getattr(attention, '__name__', 'fn')}]"
    return AttentionWith


def _mha_class(components: Components) -> type:
    if components.mha is not None:
        return components.mha
    if components.attention is not None:
        return attention_module(components.attention)
    return MultiHeadAttention


def _replace(parent: nn.Module, name: str, new: nn.Module, what: str) -> None:
    """Put ``new`` at ``parent.<name>`` with the weights of the module it replaces."""
    old = getattr(parent, name)
    try:
        new.load_state_dict(old.state_dict())
    except RuntimeError as err:
        raise ValueError(f"your {what} must have the parameters of the reference "
                         f"({', '.join(old.state_dict())}): {err}") from None
    setattr(parent, name, new)


def _loss(logits: Tensor, targets: Tensor | None) -> Tensor | None:
    """Mean next-token cross-entropy of ``logits: (B, L, V)`` against ``targets: (B, L)``, or None."""
    if targets is None:
        return None
    B, L, V = logits.shape
    return F.cross_entropy(logits.reshape(B * L, V), targets.reshape(B * L))


class UniformLM(nn.Module):
    """Every character equally likely: logits ``(B, L, V)`` of zeros, loss exactly ln V. No parameters."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        """``idx: (B, L)`` long -> ``(logits (B, L, V), mean cross-entropy or None)``, as :class:`~attnlab.nn.GPT`."""
        logits = torch.zeros(*idx.shape, self.config.vocab_size)  # (B, L, V)
        return logits, _loss(logits, targets)


class BigramLM(nn.Module):
    """Next-character logits from the current character only: a ``(V, V)`` table (``table``)."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.table = nn.Embedding(config.vocab_size, config.vocab_size)
        self.apply(GPT._init_weights)

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        """``idx: (B, L)`` long -> ``(logits (B, L, V), mean cross-entropy or None)``, as :class:`~attnlab.nn.GPT`."""
        logits = self.table(idx)  # (B, L, V)
        return logits, _loss(logits, targets)


class AttentionLM(nn.Module):
    """Embeddings -> causal multi-head self-attention -> optional FFN -> tied output layer.

    No residual connections and no LayerNorm (those come with the ``residual_ln`` rung).
    Submodules: ``tok_emb``, ``pos_emb``, ``attn`` (the ``mha`` class), ``ffn`` (or None),
    ``lm_head`` (weight tied to ``tok_emb``), initialised as :class:`attnlab.nn.GPT`.
    """

    def __init__(self, config: GPTConfig, components: Components = Components(), ffn: bool = False) -> None:
        super().__init__()
        c = self.config = config
        self.tok_emb = nn.Embedding(c.vocab_size, c.d_model)
        self.pos_emb = LearnedPositionalEmbedding(c.block_size, c.d_model)
        self.attn = MultiHeadAttention(c.d_model, c.n_heads, bias=c.bias)
        self.ffn = FeedForward(c.d_model, c.ff_width, activation="gelu", bias=c.bias) if ffn else None
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight
        self.apply(GPT._init_weights)
        mha = _mha_class(components)
        if mha is not MultiHeadAttention:
            _replace(self, "attn", mha(c.d_model, c.n_heads, bias=c.bias), "attention module")
        if ffn and components.ffn is not None:
            _replace(self, "ffn", components.ffn(c.d_model, c.ff_width, activation="gelu", bias=c.bias),
                     "feed-forward module")

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
        """``idx: (B, L)`` long -> ``(logits (B, L, V), mean cross-entropy or None)``, as :class:`~attnlab.nn.GPT`."""
        x = self.pos_emb(self.tok_emb(idx))  # (B, L, d_model)
        x, _ = self.attn(x, is_causal=True)  # (B, L, d_model)
        if self.ffn is not None:
            x = self.ffn(x)
        logits = self.lm_head(x)  # (B, L, V)
        return logits, _loss(logits, targets)


class _BlockWith(nn.Module):
    """A GPT block whose forward is the learner's ``block_forward`` (pre-LN), same submodules and names."""

    def __init__(self, block: nn.Module, block_forward: Callable) -> None:
        super().__init__()
        self.self_attn, self.ffn, self.norm1, self.norm3 = block.self_attn, block.ffn, block.norm1, block.norm3
        self.block_forward = block_forward

    def forward(self, x: Tensor, *, is_causal: bool = True, cache=None) -> Tensor:
        """``x: (B, L, d_model) -> (B, L, d_model)`` through ``block_forward``; ValueError with a cache."""
        if cache is not None:
            raise ValueError("a ladder block with your block_forward has no KV cache")

        def self_attn(h):
            return self.self_attn(h, is_causal=is_causal)

        return self.block_forward(x, self_attn, self.ffn, self.norm1, self.norm3, True)


def _gpt(config: GPTConfig, components: Components) -> GPT:
    """:class:`attnlab.nn.GPT` with the learner's pieces swapped into every block."""
    model = GPT(config)
    mha = _mha_class(components)
    for i, block in enumerate(model.blocks):
        if mha is not MultiHeadAttention:
            _replace(block, "self_attn", mha(config.d_model, config.n_heads, bias=config.bias), "attention module")
        if components.ffn is not None:
            _replace(block, "ffn", components.ffn(config.d_model, config.ff_width, activation="gelu",
                                                  bias=config.bias), "feed-forward module")
        if components.block_forward is not None:
            model.blocks[i] = _BlockWith(block, components.block_forward)
    return model


def build_rung(name: str, config: LadderConfig, components: Components | None = None) -> nn.Module:
    """The model of rung ``name`` (one of :data:`RUNGS`), initialised from ``config.seed``.

    The same seed gives the same initial weights whatever ``components`` holds (a learner's
    module receives the weights of the reference module it replaces).

    Raises:
        ValueError: unknown rung, or a supplied module whose parameters differ from the reference's.
    """
    components = components or Components()
    torch.manual_seed(config.seed)
    if name == "uniform":
        return UniformLM(config.gpt_config(n_layers=1))
    if name == "bigram":
        return BigramLM(config.gpt_config(n_layers=1))
    if name in ("one_head", "multi_head", "ffn"):
        heads = 1 if name == "one_head" else config.n_heads
        return AttentionLM(config.gpt_config(n_layers=1, n_heads=heads), components, ffn=name == "ffn")
    if name == "residual_ln":
        return _gpt(config.gpt_config(n_layers=1), components)
    if name == "stack":
        return _gpt(config.gpt_config(), components)
    raise ValueError(f"unknown rung {name!r}; the rungs are {', '.join(RUNGS)}.")


@dataclass
class RungResult:
    """One trained rung: final validation and training loss (nats per character), the loss
    history of :func:`attnlab.training.train` (``iter``, ``train``, ``val``), parameters, seconds."""

    name: str
    val_loss: float
    train_loss: float
    history: dict[str, list[float]] = field(repr=False)
    n_params: int = 0
    seconds: float = 0.0
    leaks_future: bool = False

    @property
    def label(self) -> str:
        """The rung's short name for tables and plots (:data:`RUNG_LABELS`)."""
        return RUNG_LABELS[self.name]


def leaks_future(model: nn.Module, vocab_size: int, block_size: int, seed: int = 0) -> bool:
    """True when an output at a position ``< t`` changes when only tokens at positions ``>= t`` change.

    A language model must return False (it would otherwise read the answer; lesson 07's
    perturbation test). Uses one random ``(2, block_size)`` batch and ``t = block_size // 2``.
    A causal model gives bit-identical earlier logits; any change larger than 1e-6 of the
    logits' scale counts (a freshly initialised model's leak is small, but not that small).
    """
    gen = torch.Generator().manual_seed(seed)
    idx = torch.randint(vocab_size, (2, block_size), generator=gen)
    changed = idx.clone()
    t = block_size // 2
    changed[:, t:] = (changed[:, t:] + 1 + torch.randint(vocab_size - 1, changed[:, t:].shape, generator=gen)) % vocab_size
    was_training = model.training
    model.eval()
    with torch.no_grad():
        a, b = model(idx)[0][:, :t], model(changed)[0][:, :t]
    model.train(was_training)
    return bool((a - b).abs().max() > 1e-6 * a.abs().max())


def train_ladder(train_data: Tensor, val_data: Tensor, config: LadderConfig, components: Components | None = None,
                 rungs: tuple[str, ...] = RUNGS, callback: Callable[[RungResult], None] | None = None
                 ) -> dict[str, RungResult]:
    """Train every rung in ``rungs`` for ``config.steps`` steps with the same seed and batches.

    Args:
        train_data, val_data: ``(N,)`` int64 token ids (e.g. from :func:`attnlab.data.train_val_split`).
        config: sizes and training settings (:class:`LadderConfig`).
        components: learner pieces to plug in (default: all from :mod:`attnlab.nn`).
        rungs: which rungs, in order.
        callback: called with each :class:`RungResult` as soon as it is done (e.g. to print).

    Returns:
        ``{rung name: RungResult}`` in the order of ``rungs``. The uniform rung is not trained
        (it has no parameters): its loss is ln V on any batch.

    Raises:
        ValueError: an unknown rung, a supplied module with other parameters, or data too short.
    """
    results = {}
    tcfg = config.train_config()
    threads = torch.get_num_threads()
    if config.num_threads is not None:
        torch.set_num_threads(config.num_threads)
    try:
        for name in rungs:
            results[name] = _train_rung(name, train_data, val_data, config, tcfg, components)
            if callback is not None:
                callback(results[name])
    finally:
        torch.set_num_threads(threads)
    return results


def _train_rung(name, train_data, val_data, config, tcfg, components) -> RungResult:
    """Build and train one rung (see :func:`train_ladder`)."""
    import time

    model = build_rung(name, config, components)
    t0 = time.perf_counter()
    n_params = sum(p.numel() for p in model.parameters())
    if n_params == 0:
        losses = estimate_loss(model, {"train": train_data, "val": val_data}, batch_size=config.batch_size,
                               eval_iters=config.eval_iters, generator=torch.Generator().manual_seed(config.seed + 1),
                               device="cpu")
        history = {"iter": [0, config.steps], "train": [losses["train"]] * 2, "val": [losses["val"]] * 2}
    else:
        history = train(model, train_data, val_data, tcfg, progress=False).history
    leak = name not in ("uniform", "bigram") and leaks_future(model, config.vocab_size, config.block_size)
    return RungResult(name, history["val"][-1], history["train"][-1], history, n_params,
                      time.perf_counter() - t0, leak)


def check_components(components: Components, d_model: int = 16, n_heads: int = 4, L: int = 7,
                     seed: int = 0) -> list[str]:
    """Compare each supplied piece with its :mod:`attnlab.nn` reference on random inputs.

    Returns a list of problems in words (empty: every supplied piece matches, to 1e-4). The
    attention function is checked with and without a causal mask; the modules receive the
    reference's weights; ``block_forward`` is checked on a pre-LN block. Exceptions raised by a
    piece are reported, not raised.
    """
    problems = []
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(2, L, d_model, generator=gen)  # (B, L, d_model)

    def differs(a: Tensor, b: Tensor) -> str | None:
        if tuple(a.shape) != tuple(b.shape):
            return f"shape {tuple(a.shape)}, expected {tuple(b.shape)}"
        err = float((a - b).abs().max())
        return None if err < 1e-4 else f"max abs difference {err:.3g} from the reference"

    def attempt(what: str, fn: Callable[[], str | None]) -> None:
        try:
            msg = fn()
        except Exception as err:  # noqa: BLE001 - a learner's piece may raise anything
            msg = f"raised {type(err).__name__}: {err}"
        if msg:
            problems.append(f"{what}: {msg}")

    if (attention := components.attention) is not None:
        q, k, v = (torch.randn(2, n_heads, L, d_model // n_heads, generator=gen) for _ in range(3))
        for mask, what in ((None, "attention without a mask"), (causal_mask(L, L), "attention with the causal mask")):
            def attention_differs(mask: torch.Tensor | None = mask) -> str | None:
                return differs(attention(q, k, v, mask)[0], reference_attention(q, k, v, mask)[0])
            attempt(what, attention_differs)
    torch.manual_seed(seed)
    ref_mha = MultiHeadAttention(d_model, n_heads).eval()
    for cls, what in ((components.mha, "mha"), (None if components.mha else components.attention, "attention_module")):
        if cls is None:
            continue
        cls = attention_module(cls) if what == "attention_module" else cls

        def run_mha(cls=cls):
            mine = cls(d_model, n_heads, bias=True)
            mine.load_state_dict(ref_mha.state_dict())
            mine.eval()
            with torch.no_grad():
                return differs(mine(x, is_causal=True)[0], ref_mha(x, is_causal=True)[0])
        attempt(f"{what} (causal self-attention)", run_mha)
    if components.ffn is not None:
        ref_ffn = FeedForward(d_model, 4 * d_model, activation="gelu")

        def run_ffn():
            mine = components.ffn(d_model, 4 * d_model, activation="gelu", bias=True)
            mine.load_state_dict(ref_ffn.state_dict())
            with torch.no_grad():
                return differs(mine(x), ref_ffn(x))
        attempt("ffn (GELU)", run_ffn)
    if components.block_forward is not None:
        cfg = GPTConfig(11, L, d_model, n_heads, 1)
        torch.manual_seed(seed)
        ref = GPT(cfg).eval()
        torch.manual_seed(seed)
        mine = _gpt(cfg, replace(Components(), block_forward=components.block_forward)).eval()
        idx = torch.randint(11, (2, L), generator=gen)

        def run_block():
            with torch.no_grad():
                return differs(mine(idx)[0], ref(idx)[0])
        attempt("block_forward (pre-LN)", run_block)
    return problems

