"""Timing demonstrations in lessons 01, 02 and 09 tell the truth about time (fast: reads the lesson
sources and times two sleeps).

Proves: ``paired_ratio`` reports the slower call's ratio with quartiles, restores torch's thread
count and says what it measured on; ``claim`` reports a claim that did not hold instead of raising;
in the lessons, no cell times with a one-shot best-of timing, every timing or training cell is
preceded by text stating its expected time, and the measured claims are checked in the cells (the
executed-lesson test, ``tests/notebooks/test_lessons.py``, asserts that each holds).
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import torch

from attnlab.fast.timing import claim, paired_ratio

ROOT = Path(__file__).resolve().parents[1]
TIMED = ("01_routing_problem", "02_scaled_dot_product_attention", "09_capstone_gpt")
#: Calls that make a cell long or timed: it must say beforehand how long it takes.
LONG = re.compile(r"\b(paired_ratio|train_ladder|train|cache_speedup)\(")
TIME_WORDS = re.compile(r"\b(seconds?|minutes?|min)\b")


def test_paired_ratio_names_the_slower_side_with_its_spread_and_restores_threads():
    before = torch.get_num_threads()
    r = paired_ratio(lambda: time.sleep(0.004), lambda: time.sleep(0.0005), rounds=5, warmup=1)
    assert r.q1 <= r.median <= r.q3 and r.q1 > 2, r
    assert r.a_ms > r.b_ms and r.rounds == 5 and "torch thread" in r.machine and "load average" in r.machine
    assert "quartiles" in r.text("slow", "fast") and torch.get_num_threads() == before
    with pytest.raises(ValueError, match="at least 3 rounds"):
        paired_ratio(lambda: None, lambda: None, rounds=2)


def test_a_claim_that_does_not_hold_is_reported_not_raised(capsys):
    assert claim(False, "the RNN is slower", "ratio 0.8") is False
    assert "NOT on this machine" in capsys.readouterr().out
    assert claim(True, "the RNN is slower", "ratio 5") is True
    assert "as the text says" in capsys.readouterr().out


def _cells(name):
    text = (ROOT / "lessons" / "src" / f"{name}.py").read_text(encoding="utf-8")
    return [c for c in re.split(r"^# %%", text, flags=re.M) if c.strip()]


@pytest.mark.parametrize("name", TIMED)
def test_every_long_or_timed_cell_states_its_time_before_it_runs_and_checks_its_claims(name):
    cells = _cells(name)
    markdown_before = ""
    checked = 0
    for cell in cells:
        if cell.startswith(" [markdown]"):
            markdown_before = cell
            continue
        code = "\n".join(line for line in cell.splitlines() if not line.lstrip().startswith("#"))
        assert "best_time" not in code and "best = min(" not in code, f"{name}: a one-shot best-of timing"
        if LONG.search(code):
            assert TIME_WORDS.search(markdown_before), \
                f"{name}: the text before this cell does not state its time:\n{code[:300]}"
        checked += "claim(" in code
    assert checked, f"{name}: no cell checks the text's measured claims with claim()"
