"""The ``attnlab`` console script: CliRunner, a real piped subprocess, and a pseudo-terminal."""
import os
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from click.testing import CliRunner

from attnlab.cli import main
from attnlab.practice import ProgressStore, format_answer, get_skill, seed_for

SCRIPT = Path(sys.executable).parent / "attnlab"


def typed(learner, skill, attempt):
    v = get_skill(skill).variant(seed_for(learner, skill, attempt))
    return format_answer(v.answer, v.kind, v.decimals)


def test_skills_and_progress_tables():
    runner = CliRunner()
    out = runner.invoke(main, ["skills"])
    assert out.exit_code == 0 and "sdpa_full" in out.output and "kv_cache_bytes" in out.output
    out = runner.invoke(main, ["skills", "--lesson", "3"])
    assert "causal_mask_build" in out.output and "sdpa_full" not in out.output
    out = runner.invoke(main, ["progress"])
    assert out.exit_code == 0 and "not started" in out.output


def test_practice_with_cliRunner_input_hint_wrong_and_quit():
    runner = CliRunner()
    answer = typed("test-learner", "sdpa_scale", 0)
    out = runner.invoke(main, ["practice", "sdpa_scale"], input=f"999\nh\n{answer}\nq\n")
    assert out.exit_code == 0, out.output
    assert "not right" in out.output and "Hint 1/2" in out.output and "does not count" in out.output
    rec = ProgressStore().peek("sdpa_scale")
    assert rec.hints == 1 and rec.streak == 0 and rec.attempts == 2


def test_unknown_skill_is_a_usage_error():
    out = CliRunner().invoke(main, ["practice", "sdpa_ful"])
    assert out.exit_code == 2 and "sdpa_full" in out.output


@pytest.mark.slow  # a real subprocess imports torch (several seconds on a busy machine)
def test_piped_session_end_to_end_masters_a_skill(tmp_path):
    env = dict(os.environ, ATTNLAB_HOME=str(tmp_path), ATTNLAB_LEARNER="pipe", OMP_NUM_THREADS="1")
    answers = "\n".join(typed("pipe", "warmup_scores_shape", a) for a in range(3)) + "\n"
    proc = subprocess.run([str(SCRIPT), "practice", "warmup_scores_shape"], input=answers, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("✔") == 3 and "Mastered" in proc.stdout
    assert ProgressStore("pipe", tmp_path).peek("warmup_scores_shape").mastered is True


@pytest.mark.slow
def test_interactive_session_under_a_pseudo_terminal(tmp_path):
    env = dict(os.environ, ATTNLAB_HOME=str(tmp_path), ATTNLAB_LEARNER="tty", OMP_NUM_THREADS="1")
    child = pexpect.spawn(str(SCRIPT), ["practice", "uniform_loss"], env=env, encoding="utf-8", timeout=60)
    try:
        child.expect("answer> ")
        child.sendline("1.0")
        child.expect("not right")
        child.expect("answer> ")
        child.sendline("n")
        child.expect("answer> ")
        child.sendline(typed("tty", "uniform_loss", 1))
        child.expect("1/3 in a row")
        child.expect("answer> ")
        child.sendline("q")
        child.expect("Bye!")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert ProgressStore("tty", tmp_path).peek("uniform_loss").streak == 1


@pytest.mark.parametrize("args", [["gate", "03"], ["gate", "03", "--override"]])
def test_gate_command(args):
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0 and "Lesson 03 gate" in out.output


def test_progress_table_shows_mastered_in_progress_and_due():
    from attnlab.practice import practice_item

    item = practice_item("sdpa_scale", n_required=1)
    item.check(item.variant.answer)
    other = practice_item("uniform_loss")
    other.check(other.variant.answer)
    store = ProgressStore()
    store.update("sdpa_scale", lambda r: r.but(due_lesson="00", due_at=15 * 86400.0))  # make the review due now
    out = CliRunner().invoke(main, ["progress"])
    assert out.exit_code == 0
    rows = {line.split("│")[2].strip(): line for line in out.output.splitlines() if line.count("│") > 3}
    assert "due for review" in rows["sdpa_scale"] and "in progress" in rows["uniform_loss"]
    assert "not started" in rows["sdpa_full"] and "lesson 00 or 1970-01-1" in rows["sdpa_scale"]


def test_learner_flag_is_passed_to_the_command_and_leaves_the_environment_alone(tmp_path, monkeypatch):
    """``--learner`` names the progress file the command writes, over ATTNLAB_LEARNER, and is not
    written into the process environment."""
    monkeypatch.setenv("ATTNLAB_HOME", str(tmp_path))
    monkeypatch.setenv("ATTNLAB_LEARNER", "from-env")
    answer = typed("flagged", "warmup_scores_shape", 0) + "\nq\n"
    out = CliRunner().invoke(main, ["--learner", "flagged", "practice", "warmup_scores_shape"], input=answer)
    assert out.exit_code == 0, out.output
    assert os.environ["ATTNLAB_LEARNER"] == "from-env"
    assert ProgressStore("flagged", tmp_path).peek("warmup_scores_shape").attempts == 1
    assert not (tmp_path / "progress" / "from-env.json").exists()
    out = CliRunner().invoke(main, ["--learner", "flagged", "progress"])
    assert "Progress of flagged" in out.output
    out = CliRunner().invoke(main, ["progress"])  # without the flag, the environment's learner
    assert "Progress of from-env" in out.output


def test_problems_are_numbered_across_sessions_and_in_progress_means_answered():
    """A second session goes on from the first: its first problem is not 'Problem 1' again. A skill whose
    problem was shown but never answered is 'not started', one with an answer 'in progress'."""
    runner = CliRunner()
    out = runner.invoke(main, ["practice", "uniform_loss"], input="q\n")
    assert "Problem 1 of uniform_loss (1 this session)" in out.output, out.output
    rows = {line.split("│")[2].strip(): line for line in runner.invoke(main, ["progress"]).output.splitlines()
            if line.count("│") > 3}
    assert "not started" in rows["uniform_loss"]
    first = typed("test-learner", "uniform_loss", 0)
    out = runner.invoke(main, ["practice", "uniform_loss"], input=f"{first}\nq\n")
    assert "Problem 1 of uniform_loss (1 this session)" in out.output and "✔" in out.output, out.output
    number = ProgressStore().peek("uniform_loss").current + 1
    assert number >= 2 and f"Problem {number} of uniform_loss (2 this session)" in out.output, out.output
    out = runner.invoke(main, ["practice", "uniform_loss"], input="q\n")  # a new session: the same open problem
    assert f"Problem {number} of uniform_loss (1 this session)" in out.output, out.output
    rows = {line.split("│")[2].strip(): line for line in runner.invoke(main, ["progress"]).output.splitlines()
            if line.count("│") > 3}
    assert "in progress" in rows["uniform_loss"] and "not started" in rows["sdpa_full"]


def test_review_runs_the_due_reviews():
    """`attnlab review` says when nothing is due; with two reviews due it puts one problem of each: a right
    answer passes its review, a wrong one puts its skill back into practice, and it says so."""
    from attnlab.practice import practice_item

    runner = CliRunner()
    out = runner.invoke(main, ["review"])
    assert out.exit_code == 0 and "No reviews are due now" in out.output
    for skill in ("sdpa_scale", "uniform_loss"):
        item = practice_item(skill, n_required=1)
        assert item.check(item.variant.answer).correct and item.mastered
    out = runner.invoke(main, ["review"])
    assert "No reviews are due now. The next one:" in out.output
    store = ProgressStore()
    for skill in ("sdpa_scale", "uniform_loss"):
        store.update(skill, lambda r: r.but(due_at=1.0))  # both due by the clock
    right = practice_item("sdpa_scale", review=True).variant
    wrong = practice_item("uniform_loss", review=True).variant
    answers = {"sdpa_scale": format_answer(right.answer, right.kind, right.decimals),
               "uniform_loss": format_answer(wrong.answer + 1.0, wrong.kind, wrong.decimals)}
    # due_reviews lists skills by lesson: the right answer ends the first review, the wrong one is left with n
    out = runner.invoke(main, ["review"], input=f"{answers['sdpa_scale']}\n{answers['uniform_loss']}\nn\n")
    assert out.exit_code == 0, out.output
    assert "2 reviews due: sdpa_scale, uniform_loss" in out.output and "Review 2 of 2" in out.output
    assert "Review passed" in out.output and "back in practice" in out.output
    assert "Reviews passed: 1; back in practice: 1; still due: 0" in out.output, out.output
    store = ProgressStore()
    assert store.peek("sdpa_scale").mastered and not store.peek("uniform_loss").mastered
