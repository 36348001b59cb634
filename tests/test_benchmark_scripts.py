"""The comparison in benchmarks/nanogpt_order.py rests on two facts, checked here at test size:
attnlab's GPT computes the same loss and gradients as an independent GPT in nanoGPT's layout
holding the same weights, and the nanoGPT-order loop is deterministic for a seed."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def nano():
    sys.path.insert(0, str(BENCH))
    try:
        import nanogpt_order
        yield nanogpt_order
    finally:
        sys.path.remove(str(BENCH))


def test_attnlab_gpt_equals_the_nanogpt_layout_model_on_the_same_weights(nano):
    torch.manual_seed(0)
    ref = nano.NanoLayoutGPT(65, 64, 4, 4, 128)
    ours = nano.to_attnlab(ref, 65)  # asserts equal loss and lm_head gradient itself
    x = torch.randint(0, 65, (2, 64), generator=torch.Generator().manual_seed(1))
    y = torch.roll(x, -1, dims=1)
    l_ref, l_ours = ref(x, y)[1], ours(x, y)[1]
    l_ref.backward()
    l_ours.backward()
    assert torch.allclose(l_ref, l_ours, atol=1e-6)
    d = 128
    g_qkv = ref.transformer["h"][2].attn["c_attn"].weight.grad
    attn = ours.blocks[2].self_attn
    torch.testing.assert_close(torch.cat([attn.w_q.weight.grad, attn.w_k.weight.grad, attn.w_v.weight.grad]),
                               g_qkv, atol=1e-6, rtol=1e-4)
    torch.testing.assert_close(ours.blocks[3].ffn.w_2.weight.grad, ref.transformer["h"][3].mlp["c_proj"].weight.grad,
                               atol=1e-6, rtol=1e-4)
    assert g_qkv.shape == (3 * d, d)


def test_a_wrong_weight_copy_is_caught(nano, monkeypatch):
    torch.manual_seed(0)
    ref = nano.NanoLayoutGPT(65, 64, 4, 4, 128)
    with torch.no_grad():  # swap W_Q and W_K of layer 0 in the reference: the copy must notice
        w = ref.transformer["h"][0].attn["c_attn"].weight
        ours_before = w.clone()
        w[:128], w[128:256] = ours_before[128:256], ours_before[:128]
    model = nano.to_attnlab(ref, 65)  # a faithful copy of the swapped weights still agrees
    with torch.no_grad():
        model.blocks[0].self_attn.w_q.weight.copy_(ours_before[:128])  # now it does not
    x = torch.randint(0, 65, (2, 64), generator=torch.Generator().manual_seed(1))
    assert not torch.allclose(ref(x, x)[1], model(x, x)[1], atol=1e-6)


def test_nanogpt_order_training_is_deterministic(nano):
    data = torch.randint(0, 65, (5000,), generator=torch.Generator().manual_seed(2))
    runs = []
    for _ in range(2):
        torch.manual_seed(3)
        ref = nano.NanoLayoutGPT(65, 64, 4, 4, 128)
        runs.append(nano.train_nanogpt_order(nano.to_attnlab(ref, 65), data[:4000], data[4000:], iters=3))
    assert runs[0]["val_20_batches"] == runs[1]["val_20_batches"]
    assert runs[0]["val_full_split"] == runs[1]["val_full_split"]


@pytest.fixture(scope="module")
def harness():
    sys.path.insert(0, str(BENCH))
    try:
        import paired
        import run_paired
        yield paired, run_paired
    finally:
        sys.path.remove(str(BENCH))


def test_paired_ratios_alternate_order_and_see_a_slower_reference(harness):
    import time

    paired, _ = harness
    calls = []

    def fast():
        calls.append("c")

    def slow():
        calls.append("r")
        t0 = time.process_time()
        while time.process_time() - t0 < 0.004:  # burn CPU, so both clocks see it
            pass

    result = paired.compare(fast, slow, rounds=4, warmup=1)
    assert calls == ["c", "r"] + ["c", "r", "r", "c", "c", "r", "r", "c"]  # warm-up, then alternating
    assert result["ratio_wall"]["n"] == 4 and result["ratio_cpu"]["median"] > 2  # reference slower: ratio > 1
    assert result["ratio_wall"]["q1"] <= result["ratio_wall"]["median"] <= result["ratio_wall"]["q3"]
    assert len(result["load_before"]) == 3 and result["reference_ms"]["cpu"] >= 4
    with pytest.raises(ValueError, match="rounds >= 1"):
        paired.compare(fast, slow, rounds=0)


def test_a_spread_of_fewer_than_four_rounds_shows_the_rounds_not_quartiles(harness):
    """Two rounds of 15.27x and 26.59x must read as those two rounds, not as quartiles
    "[12.4-29.4]" extrapolated beyond both samples."""
    paired, _ = harness
    two = paired._spread([15.27, 26.59])
    text = paired.spread_text(two)
    assert text == "20.930 (rounds: 15.27, 26.59)" and "[" not in text
    assert paired.spread_text(paired._spread([1.0, 2.0, 4.0])) == "2.000 (rounds: 1.00, 2.00, 4.00)"
    many = paired.spread_text(paired._spread([1.0, 2.0, 3.0, 4.0, 5.0]), bold=True)
    assert many.startswith("**3.000** [") and "(1.00-5.00)" in many


def test_the_kv_reference_decodes_like_attnlab(harness):
    from attnlab.fast import to_fast
    from attnlab.nn import GPT, GPTConfig

    _, run = harness
    torch.manual_seed(0)
    m = GPT(GPTConfig(11, 20, 16, 2, 2, bias=False)).eval()
    prompt = torch.randint(0, 11, (2, 3))
    want = run.reference_generate(m, prompt, 12)
    assert torch.equal(want, m.generate(prompt, 12, greedy=True))
    assert torch.equal(want, to_fast(m).generate(prompt, 12, greedy=True))  # what the benchmark times


def test_quick_run_prints_and_writes_every_comparison(harness, tmp_path, capsys):
    _, run = harness
    out, md = tmp_path / "r.json", tmp_path / "R.md"
    md.write_text("# title\n\nbefore\n<!-- paired:start -->\nold\n<!-- paired:end -->\nafter\n")
    out.write_text('{"main_run": {"iters": 1}}')
    run.main(["--quick", "--threads", "1", "--out", str(out), "--md", str(md)])
    printed = capsys.readouterr().out
    for name in ("train_cpu_recipe:", "train_cpu_recipe_bf16:", "train_large_recipe:", "train_large_recipe_bf16:",
                 "kv_cache vs minimal",
                 "kv_cache vs no cache", "tokens identical to the reference: True"):
        assert name in printed
    data = __import__("json").loads(out.read_text())
    assert data["main_run"] == {"iters": 1}  # merged, not overwritten
    assert data["paired"]["machine"]["nproc"] >= 1 and data["paired"]["kv_cache"]["tokens_identical_to_reference"]
    text = md.read_text()
    assert text.startswith("# title\n\nbefore\n") and text.endswith("after\n") and "\nold\n" not in text
    assert "| training step, CPU recipe" in text and "load average" in text


def test_gpu_large_benchmark_runs_both_sides_in_alternating_chunks(tmp_path):
    """benchmarks/gpu_large.py at test size on the CPU: both sides train the same number of steps
    in timed chunks, are evaluated at the same steps, and the JSON holds the paired ratios."""
    sys.path.insert(0, str(BENCH))
    try:
        import gpu_large
    finally:
        sys.path.remove(str(BENCH))
    torch.manual_seed(0)
    out = tmp_path / "gpu_large.json"
    record = gpu_large.main(["--quick", "--device", "cpu", "--out", str(out)])
    import json

    assert json.loads(out.read_text())["paired"] == record["paired"]
    q = gpu_large.QUICK
    n_chunks = -(-q["steps"] // q["eval_interval"])
    for side in record["sides"].values():
        assert side["steps"] == q["steps"] and len(side["chunk_s"]) == n_chunks
        assert [e["iter"] for e in side["evals"]] == list(range(0, q["steps"] + 1, q["eval_interval"]))
        assert side["evals"][-1]["val"] < side["evals"][0]["val"]  # both actually train
    assert record["paired"]["ratio_chunks_after_first"]["n"] == n_chunks - 1
    assert gpu_large._nanogpt_lr(0, q) < gpu_large._nanogpt_lr(q["warmup"], q) == q["lr"]


def test_capstone_load_neighbours_are_busy_other_sessions_stopped_after_the_run():
    """bench_capstone --load N: each neighbour runs in a session of its own (as another user's kernel,
    so autogroup scheduling counts it as other work, not as part of the benchmark's own share), uses
    CPU while the block lasts, and is gone after it, also when the block raises."""
    import os
    import time

    sys.path.insert(0, str(BENCH))
    try:
        import bench_capstone
    finally:
        sys.path.remove(str(BENCH))
    with pytest.raises(RuntimeError), bench_capstone.neighbours(2) as procs:
        time.sleep(0.5)
        assert len(procs) == 2
        for proc in procs:
            assert proc.poll() is None and os.getsid(proc.pid) == proc.pid != os.getsid(0)
            with open(f"/proc/{proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            assert int(fields[11]) + int(fields[12]) > 0  # utime + stime: it has been running
        raise RuntimeError("the run failed")
    assert all(proc.returncode is not None for proc in procs)
    with bench_capstone.LoadSampler(every_s=0.05) as load:
        time.sleep(0.2)
    summary = load.summary()
    assert summary["samples"] >= 3 and summary["min"] <= summary["median"] <= summary["max"]


def test_capstone_main_only_records_load_policy_speed_and_loss(tmp_path):
    """A short --main-only run writes what the loaded-machine record needs: neighbours, load average
    during the run, the policy's choice and thread changes, wall and CPU time, steps/s, losses."""
    import json

    sys.path.insert(0, str(BENCH))
    try:
        import bench_capstone
    finally:
        sys.path.remove(str(BENCH))
    out = tmp_path / "capstone.json"
    bench_capstone.main(["--main-only", "--iters", "20", "--threads", "1", "--out", str(out)])
    mr = json.loads(out.read_text())["main_run"]
    assert mr["iters"] == 20 and mr["neighbour_processes"] == 0 and mr["thread_changes"] == []
    assert mr["loadavg_during"]["samples"] >= 2 and 0 < mr["cpu_share"] and mr["cpu_s"] > 0
    assert mr["history"]["iter"] == [0, 20] and mr["final_val_loss"] < mr["history"]["val"][0]
    assert "1 torch thread(s) (as configured)" in mr["settings"]
