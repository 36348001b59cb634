"""Training helpers for attnlab's GPT: one config, one loop, checkpoints.

The loop is the standard recipe for small GPTs (Radford et al. 2018; the nanoGPT
``shakespeare_char`` recipe): next-token cross-entropy with teacher forcing (the target is
the input shifted by one position), AdamW with weight decay on the matrices only, linear
warm-up followed by cosine decay of the learning rate, and gradient-norm clipping.

Shapes: batches are ``x, y: (B, L)`` int64 token ids with ``L = model.config.block_size``;
``model(x, y)`` returns ``(logits (B, L, V), loss ())``.

Speed (``benchmarks/run_paired.py`` measures it side by side with a nanoGPT-layout reference):
an ``attnlab.nn.GPT`` is stepped through its fast twin (:mod:`attnlab.fast`: the same model, W_Q,
W_K, W_V packed once), the precision and torch's thread count default to what the machine runs
fastest (:func:`attnlab.fast.policy.machine_policy`: bf16 where the CPU computes it natively, the
CPUs the process may really use, re-decided every 50 steps as the load changes), AdamW runs as one fused kernel per parameter group where torch
has one (CPU and CUDA), the step never waits for the device (no ``.item()``, no synchronisation
unless ``time_steps``), and on a GPU batches travel from pinned memory without blocking, under bf16 autocast (fp16 with a
gradient scaler where bf16 is unsupported); ``compile=True`` adds ``torch.compile``, and
``compile="reduce-overhead"`` also records CUDA graphs (on an H100 the large recipe then steps 2.5x
faster than nanoGPT's compiled loop: ``benchmarks/gpu_large.py``, RESULTS.md). Every option is
tested for numerical parity on the CPU.

Nothing here is specific to a lesson: lesson 09 and ``benchmarks/bench_capstone.py`` both call
:func:`train`. Checkpoints live in :mod:`attnlab.checkpoint` and are re-exported here.
"""

from __future__ import annotations

import contextlib
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable, cast

import torch
from torch import Tensor

from attnlab.checkpoint import CHECKPOINT_FORMAT, load_checkpoint, save_checkpoint
from attnlab.fast.policy import PRECISIONS, MachinePolicy, ThreadGovernor, machine_policy, resolve_precision

__all__ = [
    "TrainConfig", "TrainResult", "default_device", "is_ci", "seed_everything", "lr_at",
    "make_optimizer", "make_train_step", "compile_model", "autocast_context", "resolve_precision", "machine_policy",
    "MachinePolicy", "estimate_loss", "train",
    "save_checkpoint", "load_checkpoint", "CHECKPOINT_FORMAT",
]

THREAD_LOOK_EVERY = 50  # steps between two looks of the ThreadGovernor (a few seconds on a CPU)


def is_ci() -> bool:
    """True when the environment variable ``ATTNLAB_CI`` is ``1`` (lessons shrink their runs)."""
    from attnlab.settings import course_settings
    return course_settings().ci


def default_device() -> str:
    """``"cuda"`` when a CUDA GPU is visible, else ``"cpu"``."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def seed_everything(seed: int) -> None:
    """Seed Python's, and torch's (CPU and CUDA) random number generators."""
    random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings (the model's shape lives in ``GPTConfig``).

    Raises ``ValueError`` on construction if a value is out of range.
    """

    max_iters: int = 2000          # optimizer steps
    batch_size: int = 32           # B sequences of block_size tokens per step
    learning_rate: float = 1e-3    # peak learning rate, reached after warm-up
    min_lr: float = 1e-4           # floor of the cosine decay (usually learning_rate / 10)
    warmup_iters: int = 100        # linear warm-up from 0 to learning_rate
    lr_decay_iters: int | None = None  # cosine decays until this step; None = max_iters
    weight_decay: float = 0.1      # AdamW decay, applied to >= 2-D parameters only
    beta1: float = 0.9
    beta2: float = 0.99            # a bit above 0.95: few tokens per step on a small model
    grad_clip: float = 1.0         # clip the global gradient norm; 0 = no clipping
    eval_interval: int = 250       # estimate train/val loss every this many steps (and at the end)
    eval_iters: int = 20           # batches averaged per loss estimate
    seed: int = 1337
    device: str = "auto"           # "auto" = cuda if available else cpu
    time_limit_s: float | None = None  # stop early (with a final evaluation) after this long
    precision: str = "auto"        # "auto": bf16 autocast on a GPU (fp16 + GradScaler without bf16) and on a CPU
                                   # with native bf16, else fp32 (attnlab.fast.policy)
    threads: int | None = None     # torch threads during train(); None = the machine's policy (attnlab.fast.policy)
    fused_optimizer: bool | None = None  # None = AdamW's fused kernel where torch has one for the device
    compile: bool | str = False    # torch.compile the model; a string names a mode ("reduce-overhead": CUDA graphs) or a backend
    time_steps: bool | None = None  # record step_ms; None = on CPU only (a GPU would need a sync per step)

    def __post_init__(self) -> None:
        positive = ("max_iters", "batch_size", "eval_interval", "eval_iters")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"TrainConfig.{name} must be >= 1, got {getattr(self, name)}.")
        if not 0 < self.learning_rate < 1:
            raise ValueError(f"TrainConfig.learning_rate must be in (0, 1), got {self.learning_rate}.")
        if not 0 <= self.min_lr <= self.learning_rate:
            raise ValueError(
                f"TrainConfig.min_lr must be in [0, learning_rate={self.learning_rate}], got {self.min_lr}."
            )
        if self.warmup_iters < 0 or self.weight_decay < 0 or self.grad_clip < 0:
            raise ValueError("TrainConfig.warmup_iters, weight_decay and grad_clip must be >= 0.")
        if self.device not in ("auto", "cpu") and not self.device.startswith(("cuda", "mps")):
            raise ValueError(f"TrainConfig.device must be 'auto', 'cpu', 'cuda[:i]' or 'mps', got {self.device!r}.")
        if isinstance(self.compile, str) and not self.compile:
            raise ValueError("TrainConfig.compile must be True/False, a torch.compile mode or a backend name, got ''.")
        if self.threads is not None and (not isinstance(self.threads, int) or self.threads < 1):
            raise ValueError(f"TrainConfig.threads must be a positive int or None (the machine's policy), "
                             f"got {self.threads!r}.")
        if self.precision not in PRECISIONS:
            raise ValueError(f"TrainConfig.precision must be one of {PRECISIONS}, got {self.precision!r}.")

    def resolved_device(self) -> str:
        return default_device() if self.device == "auto" else self.device


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Learning rate at ``step``: linear warm-up, then cosine decay to ``cfg.min_lr``.

    Warm-up follows Vaswani et al. 2017 §5.3 in spirit (their schedule then decays as
    step^-0.5); the cosine decay is the GPT-2/nanoGPT choice.
    """
    decay_iters = cfg.lr_decay_iters or cfg.max_iters
    if step < cfg.warmup_iters:
        return cfg.learning_rate * (step + 1) / (cfg.warmup_iters + 1)
    if step >= decay_iters:
        return cfg.min_lr
    progress = (step - cfg.warmup_iters) / max(1, decay_iters - cfg.warmup_iters)  # 0 -> 1
    cosine = 0.5 * (1.0 + math.cos(math.pi * progress))  # 1 -> 0
    return cfg.min_lr + cosine * (cfg.learning_rate - cfg.min_lr)


def make_optimizer(model: torch.nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on matrices (linear weights, embeddings) and none on biases/norms.

    ``cfg.fused_optimizer``: ``None`` uses torch's fused AdamW kernel (one call per group
    instead of about ten per parameter) where torch has one for the parameters' device, else
    the default implementation; ``True`` insists (``RuntimeError`` from torch if unsupported);
    ``False`` never fuses. The update is the same formula either way (tested to 1e-6).
    """
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if p.dim() >= 2], "weight_decay": cfg.weight_decay},
        {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0},
    ]
    lr, betas = cfg.learning_rate, (cfg.beta1, cfg.beta2)
    if cfg.fused_optimizer is None:
        try:
            return torch.optim.AdamW(groups, lr=lr, betas=betas, fused=True)
        except (RuntimeError, ValueError):  # no fused kernel for this device/dtype in this torch
            return torch.optim.AdamW(groups, lr=lr, betas=betas)
    return torch.optim.AdamW(groups, lr=lr, betas=betas, fused=cfg.fused_optimizer)


COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile_model(model: torch.nn.Module, how: bool | str) -> torch.nn.Module:
    """``torch.compile(model)`` as ``TrainConfig.compile`` asks; ``model`` itself when ``how`` is False.

    ``True``: the default mode. A string in :data:`COMPILE_MODES` is a mode: ``"reduce-overhead"``
    also records CUDA graphs on a GPU, so a step costs the host a few launches instead of hundreds
    (what a small model on a fast GPU waits for); any other string names a backend (``"inductor"``,
    ``"eager"``: the compile path without a C++ toolchain, as the tests run it).
    """
    if not how:
        return model
    # torch.compile wraps an nn.Module in an OptimizedModule (an nn.Module); its annotation only
    # says "a callable", so the casts name the type it returns for a module.
    if how is True:
        return cast(torch.nn.Module, torch.compile(model))
    compiled = torch.compile(model, mode=how) if how in COMPILE_MODES else torch.compile(model, backend=how)
    return cast(torch.nn.Module, compiled)


def uses_cuda_graphs(cfg: "TrainConfig", device: str) -> bool:
    """Whether ``cfg.compile`` records CUDA graphs on ``device`` (their outputs are reused buffers)."""
    return device.startswith("cuda") and cfg.compile in ("reduce-overhead", "max-autotune")


def autocast_context(precision: str, device: str):
    """``torch.autocast`` for ``"bf16"``/``"fp16"`` on ``device``'s type; a no-op for ``"fp32"``.

    Under autocast, matrix products run in the low-precision dtype while softmax, LayerNorm
    and the loss stay in float32; the parameters and the optimizer state stay float32.
    """
    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device_type=device.split(":")[0], dtype=dtype)


def make_train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, cfg: TrainConfig,
                    device: str = "cpu", precision: str | None = None) -> Callable[[Tensor, Tensor, float], Tensor]:
    """One optimizer step as a function ``step(x, y, lr) -> loss``, the step :func:`train` runs.

    ``x, y: (B, L)`` int64 batches already on ``device``. The step sets the learning rate,
    runs forward under ``precision`` (None: ``cfg.precision`` by :func:`resolve_precision`), backward (through
    a ``GradScaler`` for fp16), clips the gradient norm to ``cfg.grad_clip`` and updates. It
    never reads a value back from the device: the returned loss is a tensor (0-D, float32).
    ``model`` may be a ``torch.compile`` wrapper of the module that ``optimizer`` updates.
    """
    precision = resolve_precision(precision or cfg.precision, device)
    scaler = torch.amp.GradScaler(device.split(":")[0]) if precision == "fp16" else None
    params = [p for group in optimizer.param_groups for p in group["params"]]
    groups = optimizer.param_groups
    graphs = uses_cuda_graphs(cfg, device)

    def step(x: Tensor, y: Tensor, lr: float) -> Tensor:
        for group in groups:
            group["lr"] = lr
        if graphs:  # a new iteration: the graphs may reuse the buffers of the last one
            torch.compiler.cudagraph_mark_step_begin()
        optimizer.zero_grad(set_to_none=True)  # before the forward pass: the last step's gradients
        with autocast_context(precision, device):  # are not kept alive beside this step's activations
            _, loss = model(x, y)
        if scaler is None:
            loss.backward()
            if cfg.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
            optimizer.step()
        else:  # fp16: scale the loss so small gradients do not underflow, unscale before clipping
            scaler.scale(loss).backward()
            if cfg.grad_clip > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
            scaler.step(optimizer)
            scaler.update()
        return loss.detach().clone() if graphs else loss.detach()  # a graph's output buffer is reused

    return step


def _batch(data: Tensor, block_size: int, batch_size: int, generator: torch.Generator, device: str):
    from attnlab.data import get_batch

    x, y = get_batch(data, block_size, batch_size, generator)  # (B, L), (B, L): y = x shifted by one
    if device.startswith("cuda"):  # page-locked host memory: the copy runs asynchronously
        return x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(device, non_blocking=True)
    return x.to(device), y.to(device)


def _block_size(model: torch.nn.Module) -> int:
    """``model.config.block_size``: the context length of a model trained here (any config object with
    ``block_size``, e.g. ``GPTConfig``; AttributeError without one)."""
    config: Any = model.config  # the model's own config class: nn.Module's annotation cannot know it
    return config.block_size


@torch.no_grad()
def estimate_loss(
    model: torch.nn.Module,
    splits: dict[str, Tensor],
    *,
    batch_size: int,
    eval_iters: int,
    generator: torch.Generator | None = None,
    device: str | None = None,
) -> dict[str, float]:
    """Mean cross-entropy over ``eval_iters`` random batches of each split (model in eval mode).

    Args:
        model: a model with ``config.block_size`` whose ``forward(x, y)`` returns ``(logits, loss)``.
        splits: name -> 1-D int64 tensor of token ids, e.g. ``{"train": t, "val": v}``.
    Returns:
        name -> mean loss (nats per token). The model's train/eval mode is restored.
    """
    generator = generator or torch.Generator().manual_seed(0)
    device = device or next(model.parameters()).device.type
    block_size = _block_size(model)
    was_training = model.training
    model.eval()
    out = {}
    for name, data in splits.items():
        # clone: a compiled model with CUDA graphs reuses its output buffer at the next call
        losses = [model(*_batch(data, block_size, batch_size, generator, device))[1].clone() for _ in range(eval_iters)]
        out[name] = sum(torch.stack(losses).tolist()) / len(losses)  # one read-back per split, not per batch
    model.train(was_training)
    return out


@dataclass
class TrainResult:
    """What :func:`train` returns: the loss history, timing and the optimizer (for checkpoints)."""

    history: dict[str, list[float]]  # "iter", "train", "val", "lr", "elapsed_s" at each evaluation
    step_ms: list[float] = field(repr=False)  # wall time of every optimizer step, ms (empty if not timed)
    elapsed_s: float = 0.0
    iters_done: int = 0
    optimizer: torch.optim.Optimizer | None = field(default=None, repr=False)  # over the model given to train()
    trained: torch.nn.Module | None = field(default=None, repr=False)  # the module stepped (a GPT's fast twin)
    precision: str = "fp32"  # the precision the steps ran in ("fp32", "bf16", "fp16")
    threads: int = 0  # torch threads during training (restored afterwards)
    settings: str = ""  # one line: precision and threads, and why (attnlab.fast.policy.MachinePolicy.summary)
    thread_changes: list[tuple[int, int]] = field(default_factory=list)  # (step, threads) the governor switched to

    @property
    def final_train_loss(self) -> float:
        return self.history["train"][-1]

    @property
    def final_val_loss(self) -> float:
        return self.history["val"][-1]

    @property
    def median_ms_per_iter(self) -> float:
        import statistics  # here, not at import: decimal/fractions cost ~2 MB of every training process

        return statistics.median(self.step_ms) if self.step_ms else float("nan")


def train(
    model: torch.nn.Module,
    train_data: Tensor,
    val_data: Tensor,
    cfg: TrainConfig,
    callback: Callable[[dict[str, list[float]]], Any] | None = None,
    progress: bool = True,
) -> TrainResult:
    """Train ``model`` on next-token prediction; evaluate every ``cfg.eval_interval`` steps.

    An ``attnlab.nn.GPT`` made of its own modules (:func:`attnlab.fast.convert.has_fast_twin`: no
    submodule swapped for a learner's, no hooks) is trained through its fast twin
    (:func:`attnlab.fast.to_fast`: the same model with W_Q, W_K, W_V packed, tested equal forward
    and backward) whose storage ``model``'s parameters then share
    (:func:`attnlab.fast.convert.share_weights`: one copy in memory), so ``model`` holds the
    weights of every step -- in ``callback``, after training, after an interrupt -- and
    ``TrainResult.optimizer`` is an optimizer over ``model`` holding the
    trained state (:func:`attnlab.fast.convert.reference_optimizer_state`). Other models are
    trained as they are.

    Precision and threads follow ``cfg`` (``"auto"`` / ``None``: :func:`machine_policy`, whose
    ``summary`` says what was chosen); with ``cfg.threads=None`` on a CPU the thread count is
    re-decided every ``THREAD_LOOK_EVERY`` steps from the CPUs other work leaves free
    (:class:`attnlab.fast.policy.ThreadGovernor`; ``TrainResult.thread_changes`` lists the
    switches). torch's thread count is restored afterwards.

    Args:
        model: e.g. ``attnlab.nn.GPT``; moved to ``cfg.resolved_device()``.
        train_data, val_data: 1-D int64 tensors of token ids (each longer than block_size + 1).
        cfg: optimisation settings.
        callback: called with the history dict after every evaluation (e.g. a live plot).
        progress: show a tqdm progress bar.
    Returns:
        A :class:`TrainResult`; the history always ends with an evaluation of the final model.
    Raises:
        ValueError: if a split is not a 1-D integer tensor long enough for one block.
    """
    block_size = _block_size(model)
    for name, data in (("train_data", train_data), ("val_data", val_data)):
        if data.dim() != 1 or data.is_floating_point() or data.numel() < block_size + 2:
            raise ValueError(
                f"{name} must be a 1-D integer tensor of token ids with more than block_size + 1 = "
                f"{block_size + 1} tokens, got dtype {data.dtype}, shape {tuple(data.shape)}."
            )
    from attnlab.fast import has_fast_twin, reference_optimizer_state, share_weights, to_fast

    seed_everything(cfg.seed)
    device = cfg.resolved_device()
    policy = machine_policy(device, cfg.precision, cfg.threads)
    model.to(device).train()
    twin = to_fast(model) if has_fast_twin(model) else None
    if twin is not None:
        share_weights(model, twin)  # one copy of the weights: the model sees every step of its twin

    previous_threads = torch.get_num_threads()
    torch.set_num_threads(policy.threads)
    governor = ThreadGovernor(policy) if cfg.threads is None and device == "cpu" else None
    try:
        result = _train(twin or model, train_data, val_data, cfg, device, policy.precision, callback, progress,
                        governor)
    finally:
        torch.set_num_threads(previous_threads)
    result.precision, result.threads, result.settings = policy.precision, policy.threads, policy.summary
    if result.thread_changes:
        changes = ", ".join(f"{n} at step {step}" for step, n in result.thread_changes)
        result.settings += f" Re-decided as the load changed: {changes}."
    if twin is not None:  # hand back an optimizer over the caller's model, as if it had been stepped itself
        assert result.optimizer is not None  # _train always returns the optimizer it stepped
        optimizer = make_optimizer(model, cfg)
        optimizer.load_state_dict(reference_optimizer_state(result.optimizer, twin))
        result.optimizer = optimizer
    return result


def _train(model: torch.nn.Module, train_data: Tensor, val_data: Tensor, cfg: TrainConfig, device: str,
           precision: str, callback, progress: bool, governor: ThreadGovernor | None = None) -> TrainResult:
    """The loop of :func:`train` on the module it trains (arguments checked, threads set; ``governor``:
    re-decide the thread count every ``THREAD_LOOK_EVERY`` steps)."""
    block_size = _block_size(model)
    optimizer = make_optimizer(model, cfg)
    time_steps = (not device.startswith("cuda")) if cfg.time_steps is None else cfg.time_steps
    runner = compile_model(model, cfg.compile)
    train_step = make_train_step(runner, optimizer, cfg, device, precision)
    batch_gen = torch.Generator().manual_seed(cfg.seed)
    eval_gen = torch.Generator().manual_seed(cfg.seed + 1)
    splits = {"train": train_data, "val": val_data}
    history: dict[str, list[float]] = {"iter": [], "train": [], "val": [], "lr": [], "elapsed_s": []}
    step_ms: list[float] = []
    thread_changes: list[tuple[int, int]] = []
    start = time.perf_counter()

    def evaluate(step: int) -> None:
        with autocast_context(precision, device):
            losses = estimate_loss(runner, splits, batch_size=cfg.batch_size, eval_iters=cfg.eval_iters,
                                   generator=eval_gen, device=device)
        for key, value in (("iter", step), ("train", losses["train"]), ("val", losses["val"]),
                           ("lr", lr_at(step, cfg)), ("elapsed_s", time.perf_counter() - start)):
            history[key].append(value)
        if callback is not None:
            callback(history)

    if progress:
        from tqdm.auto import tqdm  # a widget in Jupyter, text in a terminal

        bar = tqdm(range(cfg.max_iters), desc="training", mininterval=0.5)
    else:
        bar = _Silent(range(cfg.max_iters))
    iters_done = 0
    for step in bar:
        if step % cfg.eval_interval == 0:
            evaluate(step)
            bar.set_postfix(train=f"{history['train'][-1]:.3f}", val=f"{history['val'][-1]:.3f}")
        t0 = time.perf_counter()
        x, y = _batch(train_data, block_size, cfg.batch_size, batch_gen, device)  # (B, L) each
        train_step(x, y, lr_at(step, cfg))
        iters_done = step + 1
        if time_steps:
            if device.startswith("cuda"):
                torch.cuda.synchronize()  # only when timing: otherwise the GPU runs ahead of Python
            step_ms.append(1000 * (time.perf_counter() - t0))
        if cfg.time_limit_s is not None and time.perf_counter() - start > cfg.time_limit_s:
            break
        if governor is not None and iters_done % THREAD_LOOK_EVERY == 0 and governor.look() != torch.get_num_threads():
            torch.set_num_threads(governor.threads)
            thread_changes.append((iters_done, governor.threads))
    bar.close()
    evaluate(iters_done)
    return TrainResult(history, step_ms, time.perf_counter() - start, iters_done, optimizer, model,
                       thread_changes=thread_changes)


class _Silent:
    """Stands in for a tqdm bar when progress=False (importing tqdm.auto pulls in IPython)."""

    def __init__(self, iterable):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def set_postfix(self, **kwargs) -> None:
        pass

    def close(self) -> None:
        pass
