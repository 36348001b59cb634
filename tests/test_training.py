"""Unit tests of attnlab.training: schedule, loop, checkpoints (CPU, tiny, seeded)."""

from __future__ import annotations

import math

import pytest
import torch

from attnlab.nn import GPT, GPTConfig
from attnlab.training import (
    TrainConfig,
    estimate_loss,
    load_checkpoint,
    lr_at,
    make_optimizer,
    save_checkpoint,
    train,
)

VOCAB = 8


def tiny_model(seed: int = 0) -> GPT:
    torch.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=VOCAB, block_size=8, d_model=32, n_heads=2, n_layers=1, dropout=0.0))


def cyclic_tokens(n: int = 400) -> torch.Tensor:
    """0 1 2 ... 7 0 1 2 ...: the next token is fully determined by the current one."""
    return torch.arange(n) % VOCAB


def fast_cfg(**overrides) -> TrainConfig:
    base = dict(max_iters=20, batch_size=8, learning_rate=1e-2, min_lr=1e-3, warmup_iters=0,
                eval_interval=1000, eval_iters=2, device="cpu", seed=0)
    return TrainConfig(**{**base, **overrides})


def test_loss_decreases_on_repeating_text():
    data = cyclic_tokens()
    result = train(tiny_model(), data[:320], data[320:], fast_cfg(), progress=False)
    first, last = result.history["train"][0], result.history["train"][-1]
    assert result.iters_done == 20
    assert first > 0.8 * math.log(VOCAB)  # untrained: close to uniform over 8 symbols
    assert last < 0.5 * first, f"loss went {first:.3f} -> {last:.3f}; expected it to halve"
    assert result.history["val"][-1] < 0.5 * result.history["val"][0]


def test_training_is_reproducible_with_a_seed():
    data = cyclic_tokens()
    a = train(tiny_model(), data[:320], data[320:], fast_cfg(max_iters=5), progress=False)
    b = train(tiny_model(), data[:320], data[320:], fast_cfg(max_iters=5), progress=False)
    assert a.history["train"] == b.history["train"]


def test_callback_sees_every_evaluation_and_time_limit_stops_early():
    data = cyclic_tokens()
    seen = []
    result = train(tiny_model(), data[:320], data[320:], fast_cfg(max_iters=10, eval_interval=4),
                   callback=lambda h: seen.append(list(h["iter"])), progress=False)
    assert seen[-1] == [0, 4, 8, 10]  # evaluations at 0, 4, 8 and after the last step
    stopped = train(tiny_model(), data[:320], data[320:], fast_cfg(max_iters=1000, time_limit_s=0.0),
                    progress=False)
    assert stopped.iters_done == 1


def test_lr_schedule_warms_up_then_decays_to_min_lr():
    cfg = TrainConfig(max_iters=100, learning_rate=1e-3, min_lr=1e-4, warmup_iters=10)
    warm = [lr_at(s, cfg) for s in range(10)]
    assert all(a < b for a, b in zip(warm, warm[1:]))
    assert lr_at(10, cfg) == pytest.approx(1e-3)
    decay = [lr_at(s, cfg) for s in range(10, 101)]
    assert all(a >= b for a, b in zip(decay, decay[1:]))
    assert lr_at(100, cfg) == pytest.approx(1e-4) and lr_at(500, cfg) == pytest.approx(1e-4)


def test_weight_decay_only_on_matrices():
    opt = make_optimizer(tiny_model(), TrainConfig(weight_decay=0.1))
    decayed, plain = opt.param_groups
    assert decayed["weight_decay"] == 0.1 and all(p.dim() >= 2 for p in decayed["params"])
    assert plain["weight_decay"] == 0.0 and all(p.dim() < 2 for p in plain["params"])


def test_estimate_loss_restores_training_mode():
    model = tiny_model().train()
    data = cyclic_tokens()
    losses = estimate_loss(model, {"val": data}, batch_size=4, eval_iters=2)
    assert model.training and set(losses) == {"val"} and losses["val"] > 0


@pytest.mark.parametrize("bad", [dict(max_iters=0), dict(learning_rate=2.0), dict(min_lr=1.0),
                                 dict(device="tpu")])
def test_train_config_rejects_bad_values(bad):
    with pytest.raises(ValueError, match="TrainConfig"):
        TrainConfig(**bad)


def test_train_rejects_float_or_short_data():
    with pytest.raises(ValueError, match="1-D integer tensor"):
        train(tiny_model(), torch.rand(100), cyclic_tokens(), fast_cfg(), progress=False)
    with pytest.raises(ValueError, match="block_size"):
        train(tiny_model(), cyclic_tokens(5), cyclic_tokens(), fast_cfg(), progress=False)


def test_checkpoint_round_trip_is_exact(tmp_path):
    data = cyclic_tokens()
    model = tiny_model()
    result = train(model, data[:320], data[320:], fast_cfg(max_iters=3), progress=False)
    path = save_checkpoint(tmp_path / "sub" / "gpt.pt", model, result.optimizer, step=3, extra={"note": "x"})

    loaded, step, extra = load_checkpoint(path)  # rebuilt from the stored GPTConfig
    assert isinstance(loaded, GPT) and loaded.config == model.config
    assert step == 3 and extra == {"note": "x"}
    idx = data[:8][None]  # (1, 8)
    model.eval(), loaded.eval()
    assert torch.equal(model(idx)[0], loaded(idx)[0])

    fresh = tiny_model(seed=1)
    opt = make_optimizer(fresh, fast_cfg())
    load_checkpoint(path, model=fresh, optimizer=opt)
    saved_state = result.optimizer.state_dict()["state"]
    for key, value in opt.state_dict()["state"].items():
        assert torch.equal(value["exp_avg"], saved_state[key]["exp_avg"])


def test_missing_checkpoint_says_so(tmp_path):
    with pytest.raises(FileNotFoundError, match="No checkpoint"):
        load_checkpoint(tmp_path / "nope.pt")


def test_corrupt_or_truncated_checkpoint_gives_clear_error(tmp_path):
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"definitely not a torch file")
    with pytest.raises(ValueError, match="corrupt"):
        load_checkpoint(garbage)

    good = save_checkpoint(tmp_path / "good.pt", tiny_model())
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[:200])
    with pytest.raises(ValueError, match="corrupt"):
        load_checkpoint(truncated)

    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(2)}, other)
    with pytest.raises(ValueError, match="not an attnlab checkpoint"):
        load_checkpoint(other)


def test_checkpoint_for_a_different_shape_is_rejected(tmp_path):
    path = save_checkpoint(tmp_path / "gpt.pt", tiny_model())
    torch.manual_seed(0)
    wider = GPT(GPTConfig(vocab_size=VOCAB, block_size=8, d_model=64, n_heads=2, n_layers=1))
    with pytest.raises(ValueError, match="do not fit"):
        load_checkpoint(path, model=wider)


# --- attnlab.viz_model: the inspection helpers lesson 09 and 10 rely on -------------------

def test_attention_maps_are_causal_distributions_and_leave_no_hooks():
    from attnlab.viz_model import attention_maps

    model = GPT(GPTConfig(vocab_size=VOCAB, block_size=8, d_model=32, n_heads=2, n_layers=3))
    idx = cyclic_tokens(6)[None].repeat(2, 1)  # (2, 6)
    maps = attention_maps(model, idx)
    assert len(maps) == 3 and all(m.shape == (2, 2, 6, 6) for m in maps)
    for m in maps:
        torch.testing.assert_close(m.sum(-1), torch.ones(2, 2, 6))
        assert torch.all(m.triu(diagonal=1) == 0)  # nothing above the diagonal: causal
    for block in model.blocks:
        assert not block.self_attn._forward_pre_hooks and not block.self_attn._forward_hooks


def test_head_pattern_scores_on_a_known_previous_token_head():
    from attnlab.viz_model import head_pattern_scores, name_heads

    W = torch.zeros(1, 1, 5, 5)  # (B, H, L, L): query 0 -> itself, query i -> key i - 1
    W[0, 0, 0, 0] = 1
    W[0, 0, torch.arange(1, 5), torch.arange(4)] = 1
    scores = head_pattern_scores([W], "a b c")
    assert scores["previous"][0, 0] == pytest.approx(1.0)
    assert scores["self"][0, 0] == pytest.approx(0.0)
    assert scores["space"][0, 0] == pytest.approx(0.5)  # queries 1..4 read 'a', ' ', 'b', ' '
    assert name_heads(scores)[0, 0] == "previous-token"
    with pytest.raises(ValueError, match="token sequence"):
        head_pattern_scores([W], "abc")


def test_cost_helpers():
    from attnlab.viz_model import fit_loglog_slope, score_matrix_bytes

    x = [10, 20, 40, 80]
    assert fit_loglog_slope(x, [3 * v**2 for v in x]) == pytest.approx(2.0)
    assert score_matrix_bytes(1024, B=2, H=4, dtype=torch.float16) == 2 * 4 * 1024 * 1024 * 2


def test_auto_device_picks_the_gpu_when_one_is_visible(monkeypatch):
    from attnlab.training import TrainConfig

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert TrainConfig().resolved_device() == "cuda"
    assert TrainConfig(device="cpu").resolved_device() == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert TrainConfig().resolved_device() == "cpu"


# --- the GPU path's options, each checked for numerical parity on the CPU -------------------

def _losses(**overrides):
    data = cyclic_tokens()
    cfg = fast_cfg(max_iters=12, eval_interval=4, **overrides)
    return train(tiny_model(), data[:320], data[320:], cfg, progress=False)


def test_fused_adamw_is_the_default_where_available_and_matches_the_loop_version():
    from attnlab.training import make_optimizer as mk

    fused = mk(tiny_model(), fast_cfg())
    assert fused.defaults["fused"] is True  # torch has a fused CPU AdamW
    plain = mk(tiny_model(), fast_cfg(fused_optimizer=False))
    assert not plain.defaults["fused"]
    a, b = _losses(), _losses(fused_optimizer=False)
    for key in ("train", "val"):
        assert a.history[key] == pytest.approx(b.history[key], abs=1e-5)


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_autocast_precisions_train_like_fp32(precision):
    from attnlab.training import resolve_precision

    assert resolve_precision("auto", "cpu") == "fp32"
    assert resolve_precision(precision, "cpu") == precision
    ref, low = _losses(precision="fp32"), _losses(precision=precision)
    assert low.history["train"][0] == pytest.approx(ref.history["train"][0], abs=0.02)  # same start
    assert low.history["val"][-1] == pytest.approx(ref.history["val"][-1], abs=0.05)  # same end
    assert low.history["val"][-1] < 0.7 * low.history["val"][0]  # and it really learned


def test_fp16_uses_a_grad_scaler(monkeypatch):
    from attnlab import training

    made = []
    original = torch.amp.GradScaler

    class Spy(original):
        def __init__(self, *args, **kwargs):
            made.append(args)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(torch.amp, "GradScaler", Spy)
    opt = training.make_optimizer(tiny_model(), fast_cfg())
    training.make_train_step(tiny_model(), opt, fast_cfg(precision="fp16"))
    training.make_train_step(tiny_model(), opt, fast_cfg(precision="bf16"))
    assert made == [("cpu",)]  # only fp16 scales the loss


def test_compiled_training_matches_eager():
    ref, compiled = _losses(), _losses(compile="eager")  # the compile path, without a C++ toolchain
    assert compiled.history["val"] == pytest.approx(ref.history["val"], abs=1e-5)


def test_train_step_never_reads_the_loss_back(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.Tensor, "item", lambda self: calls.append(1) or float(self.float().mean()))
    from attnlab.training import make_optimizer as mk, make_train_step

    model = tiny_model()
    step = make_train_step(model, mk(model, fast_cfg()), fast_cfg())
    x = torch.randint(0, VOCAB, (4, 8))
    loss = step(x, x, 1e-3)
    assert calls == [] and loss.dim() == 0 and not loss.requires_grad


def test_timing_is_optional_and_iterations_are_counted_without_it():
    untimed = _losses(time_steps=False)
    assert untimed.step_ms == [] and untimed.iters_done == 12
    assert len(_losses().step_ms) == 12  # on the CPU timing is free, so it is on by default


def test_batches_are_pinned_and_non_blocking_on_a_gpu(monkeypatch):
    from attnlab import training

    seen = []
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self: seen.append("pin") or self)
    real_to = torch.Tensor.to
    monkeypatch.setattr(torch.Tensor, "to", lambda self, *a, **k: seen.append(k.get("non_blocking")) or real_to(self, "cpu"))
    training._batch(cyclic_tokens(), 8, 2, torch.Generator().manual_seed(0), "cuda")
    assert [s for s in seen if s is not None] == ["pin", True, "pin", True]  # (get_batch's own .to() calls: None)
    seen.clear()
    training._batch(cyclic_tokens(), 8, 2, torch.Generator().manual_seed(0), "cpu")
    assert "pin" not in seen


def test_compile_setting_names_a_mode_or_a_backend(monkeypatch):
    from attnlab import training

    calls = []
    monkeypatch.setattr(torch, "compile", lambda model, **kw: calls.append(kw) or model)
    m = torch.nn.Linear(2, 2)
    assert training.compile_model(m, False) is m and calls == []
    for how, kw in ((True, {}), ("reduce-overhead", {"mode": "reduce-overhead"}), ("eager", {"backend": "eager"}),
                    ("inductor", {"backend": "inductor"})):
        training.compile_model(m, how)
        assert calls[-1] == kw
    with pytest.raises(ValueError, match="compile"):
        TrainConfig(compile="")
    assert training.uses_cuda_graphs(TrainConfig(compile="reduce-overhead"), "cuda:0")
    assert not training.uses_cuda_graphs(TrainConfig(compile="reduce-overhead"), "cpu")
    assert not training.uses_cuda_graphs(TrainConfig(compile=True), "cuda")


def test_a_cuda_graph_step_marks_each_iteration_and_returns_its_own_loss(monkeypatch):
    """With CUDA graphs (compile="reduce-overhead" on a GPU) each step starts a new graph
    iteration and hands back a copy of the loss, not the graph's reused output buffer."""
    from attnlab import training

    marks = []
    monkeypatch.setattr(training, "uses_cuda_graphs", lambda cfg, device: True)
    monkeypatch.setattr(torch.compiler, "cudagraph_mark_step_begin", lambda: marks.append(1))
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, block_size=8, d_model=16, n_heads=2, n_layers=1))
    cfg = TrainConfig(batch_size=2, compile="reduce-overhead")
    step = training.make_train_step(model, training.make_optimizer(model, cfg), cfg)
    x = torch.randint(0, 11, (2, 8))
    losses = [step(x, x, 1e-3) for _ in range(3)]
    assert len(marks) == 3 and losses[0].data_ptr() != losses[1].data_ptr()


def test_a_step_frees_the_last_gradients_before_its_forward_pass():
    """The previous step's gradients must not live beside this step's activations (peak memory):
    when the forward pass starts, no parameter holds a gradient any more; after the step they do."""
    from attnlab import training

    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, block_size=8, d_model=16, n_heads=2, n_layers=1))
    cfg = TrainConfig(batch_size=2)
    step = training.make_train_step(model, training.make_optimizer(model, cfg), cfg)
    seen = []
    model.register_forward_pre_hook(lambda mod, args: seen.append(sum(p.grad is not None for p in mod.parameters())))
    x = torch.randint(0, 11, (2, 8))
    for _ in range(3):
        step(x, x, 1e-3)
        assert all(p.grad is not None for p in model.parameters())
    assert seen == [0, 0, 0]
