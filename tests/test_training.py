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
                eval_interval=1000, eval_iters=2, device="cpu", seed=0, precision="fp32", threads=1)
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
    train(tiny_model(), data[:320], data[320:], fast_cfg(max_iters=10, eval_interval=4),
               callback=lambda h: seen.append(list(h["iter"])), progress=False)
    assert seen[-1] == [0, 4, 8, 10]  # evaluations at 0, 4, 8 and after the last step
    stopped = train(tiny_model(), data[:320], data[320:], fast_cfg(max_iters=1000, time_limit_s=0.0),
                    progress=False)
    assert stopped.iters_done == 1


def test_lr_schedule_warms_up_then_decays_to_min_lr():
    cfg = TrainConfig(max_iters=100, learning_rate=1e-3, min_lr=1e-4, warmup_iters=10)
    warm = [lr_at(s, cfg) for s in range(10)]
    assert all(a < b for a, b in zip(warm, warm[1:], strict=False))
    assert lr_at(10, cfg) == pytest.approx(1e-3)
    decay = [lr_at(s, cfg) for s in range(10, 101)]
    assert all(a >= b for a, b in zip(decay, decay[1:], strict=False))
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


# --- the machine policy: default precision and threads (attnlab.fast.policy) -----------------------------


def _cpuinfo(tmp_path, flags: str, key: str = "flags") -> str:
    path = tmp_path / f"cpuinfo-{abs(hash((flags, key)))}"
    path.write_text(f"processor\t: 0\nmodel name\t: test\n{key}\t\t: {flags}\n\n")
    return str(path)


def test_auto_precision_is_bf16_only_where_the_cpu_computes_it_natively(tmp_path, monkeypatch):
    from attnlab.training import resolve_precision

    assert resolve_precision("auto", "cpu", cpuinfo=_cpuinfo(tmp_path, "fpu sse2 avx512f avx512_bf16")) == "bf16"
    assert resolve_precision("auto", "cpu", cpuinfo=_cpuinfo(tmp_path, "fpu sse2 amx_tile amx_bf16")) == "bf16"
    assert resolve_precision("auto", "cpu", cpuinfo=_cpuinfo(tmp_path, "fpu sse2 avx2 avx512f")) == "fp32"
    assert resolve_precision("auto", "cpu", cpuinfo=_cpuinfo(tmp_path, "fp asimd bf16", "Features")) == "fp32"
    assert resolve_precision("auto", "cpu", cpuinfo=tmp_path / "absent") == "fp32"  # e.g. macOS: no /proc
    assert resolve_precision("auto", "mps", cpuinfo=_cpuinfo(tmp_path, "avx512_bf16")) == "fp32"
    assert resolve_precision("fp16", "cpu", cpuinfo=_cpuinfo(tmp_path, "avx512_bf16")) == "fp16"  # asked for
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    assert resolve_precision("auto", "cuda:0") == "fp16"
    with pytest.raises(ValueError, match="precision must be one of"):
        resolve_precision("half", "cpu")


def _cgroup(tmp_path, files: dict[str, str], proc: str = "0::/\n"):
    root = tmp_path / "cgroup"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    root.mkdir(exist_ok=True)
    (tmp_path / "proc_cgroup").write_text(proc)
    return root, tmp_path / "proc_cgroup"


@pytest.mark.parametrize("files, proc, want", [
    ({"cpu.max": "200000 100000\n"}, "0::/\n", 2.0),  # a container limited to 2 CPUs
    ({"cpu.max": "max 100000\n"}, "0::/\n", None),  # no quota
    ({"user.slice/cpu.max": "150000 100000", "user.slice/user-1000.slice/cpu.max": "max 100000"},
     "0::/user.slice/user-1000.slice\n", 1.5),  # systemd: the parent slice's CPUQuota applies
    ({"hub/cpu.max": "400000 100000", "hub/u1/cpu.max": "50000 100000"}, "0::/hub/u1\n", 0.5),  # the smaller
    ({"cpu/cpu.cfs_quota_us": "300000", "cpu/cpu.cfs_period_us": "100000"}, "", 3.0),  # cgroup v1
    ({"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}, "", None),  # v1 without quota
    ({}, "", None),  # nothing mounted
])
def test_cgroup_cpu_quota_is_read_from_the_process_cgroup_and_its_parents(tmp_path, files, proc, want):
    from attnlab.fast.policy import cgroup_cpu_limit

    root, proc_file = _cgroup(tmp_path, files, proc)
    assert cgroup_cpu_limit(root, proc_file) == want


def test_idle_cpus_are_measured_on_the_allowed_cpus_only(tmp_path):
    from attnlab.fast.policy import idle_cpus

    stat = tmp_path / "stat"
    line = "cpu{} {user} 0 0 {idle} 0 0 0 0 0 0"
    stat.write_text("\n".join(["cpu  0 0 0 0 0 0 0 0"] + [line.format(i, user=0, idle=0) for i in range(3)]))
    after = "\n".join([line.format(0, user=100, idle=0), line.format(1, user=25, idle=75),
                       line.format(2, user=0, idle=100)])
    assert idle_cpus({0, 1}, stat=stat, interval_s=0.1, sleep=lambda s: stat.write_text(after)) == pytest.approx(0.75)
    assert idle_cpus({7}, stat=stat, interval_s=0.1, sleep=lambda s: None) is None  # cpu 7 not in the file


@pytest.mark.parametrize("limits, want", [
    (dict(affinity={0, 1}), 2),
    (dict(affinity={0, 1}, idle=0.3), 1),  # a loaded 2-core machine: one thread, not two fighting for a core
    (dict(affinity={0, 1}, idle=1.8), 2),  # nearly idle
    (dict(affinity=set(range(16)), cgroup_limit=4.0), 4),  # a pod limited to 4 CPUs on a 16-core node
    (dict(affinity=set(range(16)), cgroup_limit=0.5), 1),  # half a CPU: still one thread
    (dict(affinity=set(range(16)), hub_limit=2.0, idle=12.0), 2),  # the hub's per-user limit
    (dict(affinity={0, 1, 2, 3}, cgroup_limit=3.0, hub_limit=8.0, idle=3.9), 3),
])
def test_thread_count_is_the_smallest_limit(limits, want):
    from attnlab.fast.policy import thread_count

    assert thread_count(**limits) == want


def test_machine_policy_says_what_it_chose_in_one_line(tmp_path):
    from attnlab.training import machine_policy

    root, proc = _cgroup(tmp_path, {"cpu.max": "300000 100000"})
    policy = machine_policy("cpu", cpuinfo=_cpuinfo(tmp_path, "avx512_bf16"), cgroup_root=root,
                            proc_self_cgroup=proc, environ={"CPU_LIMIT": "2"}, affinity=set(range(8)),
                            interval_s=0)
    assert (policy.precision, policy.threads, policy.cgroup_limit, policy.hub_limit) == ("bf16", 2, 3.0, 2.0)
    assert policy.summary == ("bf16 (this CPU computes bf16 natively); 2 torch thread(s) "
                              "(8 CPUs allowed, cgroup quota 3.0, hub limit 2.0).")
    plain = machine_policy("cpu", cpuinfo=_cpuinfo(tmp_path, "avx2"), cgroup_root=root, proc_self_cgroup=proc,
                           environ={"CPU_LIMIT": "not a number"}, affinity={0}, interval_s=0)
    assert (plain.precision, plain.threads, plain.hub_limit) == ("fp32", 1, None)
    assert "no native bf16" in plain.summary and "\n" not in plain.summary
    asked = machine_policy("cpu", "fp32", 3, cpuinfo=_cpuinfo(tmp_path, "avx512_bf16"), cgroup_root=root,
                           proc_self_cgroup=proc, environ={}, affinity={0}, interval_s=0)
    assert asked.threads == 3 and asked.summary == "fp32 (as configured); 3 torch thread(s) (as configured)."
    with pytest.raises(ValueError, match="threads must be a positive int"):
        machine_policy("cpu", threads=0, interval_s=0)


def test_thread_governor_runs_on_the_cpus_other_work_leaves_free(tmp_path):
    """Between two looks 1 s apart on a 2-CPU machine: both CPUs busy while this process used 1 CPU
    second -> other work held 1 CPU -> 1 thread; then one CPU busy and all of it this process's ->
    nothing else runs -> 2 threads; a cgroup quota of 1 CPU still caps it; an unreadable stat file
    leaves the count as it was."""
    from attnlab.fast.policy import MachinePolicy, ThreadGovernor

    stat = tmp_path / "stat"
    jiffies = {0: [0, 0], 1: [0, 0]}  # cpu -> [busy, idle], 100 per second

    def write(busy0: int, busy1: int) -> None:
        jiffies[0][0] += busy0
        jiffies[0][1] += 100 - busy0
        jiffies[1][0] += busy1
        jiffies[1][1] += 100 - busy1
        stat.write_text("cpu  0 0 0 0 0 0 0 0\n" + "\n".join(
            f"cpu{c} {b} 0 0 {i} 0 0 0 0 0 0" for c, (b, i) in jiffies.items()))

    clock, own = [0.0], [0.0]
    def governor(cgroup_limit=None):
        policy = MachinePolicy("cpu", "bf16", 2, 2, cgroup_limit, None, 2.0, True)
        return ThreadGovernor(policy, affinity={0, 1}, stat=stat, clock=lambda: clock[0], cpu_clock=lambda: own[0])

    def tick(busy0: int, busy1: int, own_s: float) -> None:
        write(busy0, busy1)
        clock[0] += 1.0
        own[0] += own_s

    write(0, 0)
    g = governor()
    tick(100, 100, 1.0)
    assert g.look() == 1 and g.free == pytest.approx(1.0)
    tick(100, 0, 1.0)
    assert g.look() == 2 and g.free == pytest.approx(2.0)
    tick(100, 100, 2.0)  # this process alone on both CPUs (two threads): still 2
    assert g.look() == 2
    tick(100, 60, 1.0)  # other work used 0.6 CPU: 1.4 free -> 1 thread
    assert g.look() == 1 and g.free == pytest.approx(1.4)
    capped = governor(cgroup_limit=1.0)
    tick(0, 0, 0.0)
    assert capped.look() == 1 and capped.free == pytest.approx(2.0)
    stat.unlink()
    clock[0] += 1.0
    assert g.look() == 1  # unreadable: unchanged


def test_train_re_decides_threads_only_when_the_policy_chooses_them():
    from attnlab.training import THREAD_LOOK_EVERY

    data = cyclic_tokens()
    previous = torch.get_num_threads()
    pinned = train(tiny_model(), data[:320], data[320:], fast_cfg(max_iters=2 * THREAD_LOOK_EVERY), progress=False)
    assert pinned.thread_changes == [] and torch.get_num_threads() == previous  # threads=1 was asked for
    auto = train(tiny_model(), data[:320], data[320:], fast_cfg(max_iters=2 * THREAD_LOOK_EVERY, threads=None),
                 progress=False)
    assert torch.get_num_threads() == previous
    assert all(step % THREAD_LOOK_EVERY == 0 and n >= 1 for step, n in auto.thread_changes)
    assert ("Re-decided" in auto.settings) == bool(auto.thread_changes)


def test_train_runs_with_the_configured_threads_and_restores_them():
    data = cyclic_tokens()
    previous = torch.get_num_threads()
    seen = []
    try:
        torch.set_num_threads(2)
        train(tiny_model(), data[:320], data[320:], fast_cfg(max_iters=2, eval_interval=1, threads=1),
              callback=lambda h: seen.append(torch.get_num_threads()), progress=False)
        assert seen and set(seen) == {1} and torch.get_num_threads() == 2
        result = train(tiny_model(), data[:320], data[320:], fast_cfg(max_iters=1, precision="bf16", threads=1),
                       progress=False)
        assert (result.precision, result.threads) == ("bf16", 1)
        assert result.settings == "bf16 (as configured); 1 torch thread(s) (as configured)."
    finally:
        torch.set_num_threads(previous)
    with pytest.raises(ValueError, match="threads must be a positive int"):
        TrainConfig(threads=0)


# --- a reference GPT is trained through its fast twin -------------------------------------------------------


def test_training_a_reference_gpt_trains_its_fast_twin_and_copies_the_weights_back():
    from attnlab.fast import FastGPT, fast_state_dict

    data = cyclic_tokens()
    ref = tiny_model()
    before = {k: v.clone() for k, v in ref.state_dict().items()}
    synced = []
    result = train(ref, data[:320], data[320:], fast_cfg(max_iters=6, eval_interval=3), progress=False,
                   callback=lambda h: synced.append(ref.blocks[0].self_attn.w_q.weight.clone()))
    assert isinstance(result.trained, FastGPT) and not isinstance(ref, FastGPT)
    assert not torch.equal(ref.blocks[0].self_attn.w_q.weight, before["blocks.0.self_attn.w_q.weight"])
    assert not torch.equal(synced[0], synced[1])  # the callback saw the weights of the moment
    trained = fast_state_dict(ref.state_dict())
    assert all(torch.equal(trained[k], v) for k, v in result.trained.state_dict().items())
    assert ref.blocks[0].ffn.w_1.weight.data_ptr() == result.trained.blocks[0].ffn.w_1.weight.data_ptr()  # one copy
    ref.eval(), result.trained.eval()
    x = data[:8][None]
    torch.testing.assert_close(ref(x)[0], result.trained(x)[0])
    config = tiny_model().config
    torch.manual_seed(0)
    direct = FastGPT(config)  # the same initial weights, trained as a FastGPT directly
    other = train(direct, data[:320], data[320:], fast_cfg(max_iters=6, eval_interval=3), progress=False)
    assert other.history["val"] == result.history["val"] and other.trained is direct


def test_a_gpt_with_a_learner_module_is_trained_as_it_is():
    from attnlab.nn import FeedForward

    calls = []

    class LearnerFFN(FeedForward):
        def forward(self, x):
            calls.append(1)
            return super().forward(x)

    data = cyclic_tokens()
    model = tiny_model()
    model.blocks[0].ffn = LearnerFFN(32, 128, activation="gelu")
    result = train(model, data[:320], data[320:], fast_cfg(max_iters=3), progress=False)
    assert result.trained is model and len(calls) >= 3  # the learner's forward ran in every step


def test_a_fast_gpt_checkpoint_is_a_reference_checkpoint(tmp_path):
    from attnlab.fast import FastGPT, to_fast

    ref = tiny_model()
    fast = to_fast(ref)
    path = save_checkpoint(tmp_path / "fast.pt", fast)
    loaded, _, _ = load_checkpoint(path)  # rebuilt as attnlab.nn.GPT
    assert type(loaded) is GPT
    assert all(torch.equal(loaded.state_dict()[k], v) for k, v in ref.state_dict().items())
    into_fast, _, _ = load_checkpoint(save_checkpoint(tmp_path / "ref.pt", ref), model=FastGPT(ref.config))
    x = torch.randint(0, VOCAB, (2, 8))
    torch.testing.assert_close(into_fast(x)[0], ref(x)[0])
