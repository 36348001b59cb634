"""Seeds and variants: reproducible per seed, different across learners and attempts."""
import subprocess
import sys

import pytest

from attnlab.practice import all_skills, get_skill, learner_id, seed_for
from attnlab.practice.core import _variant

SKILLS = [s.name for s in all_skills()]


def test_seed_for_is_a_stable_hash_independent_of_python_hash_seed():
    here = seed_for("alice", "sdpa_full", 2)
    code = "from attnlab.practice import seed_for; print(seed_for('alice', 'sdpa_full', 2))"
    for hash_seed in ("0", "123"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": hash_seed, "PATH": ""})
        assert int(out.stdout) == here
    assert 0 <= here < 2**63


def test_seed_for_differs_across_learners_keys_and_attempts():
    seeds = {seed_for(lrn, key, a) for lrn in ("alice", "bob") for key in ("x", "y") for a in range(5)}
    assert len(seeds) == 20
    with pytest.raises(TypeError):
        seed_for("alice", "x", "0")


def test_learner_id_from_env_and_profile(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNLAB_LEARNER", "Ada Lovelace/../x")
    lid = learner_id()  # safe as a file name: no slash, no space; a hash keeps it apart from "Ada-Lovelace-..-x"
    assert lid.startswith("Ada-Lovelace-..-x-") and len(lid) == len("Ada-Lovelace-..-x-") + 8, lid
    monkeypatch.delenv("ATTNLAB_LEARNER")
    monkeypatch.setenv("ATTNLAB_HOME", str(tmp_path))
    (tmp_path / "profile.json").write_text('{"learner": "grace"}')
    assert learner_id() == "grace"


@pytest.mark.parametrize("name", SKILLS)
def test_same_seed_same_variant(name):
    skill = get_skill(name)
    a = skill.variant(12345)
    _variant.cache_clear()  # recompute from scratch, not from the cache
    b = skill.variant(12345)
    assert (a.prompt, dict(a.data), a.answer) == (b.prompt, dict(b.data), b.answer)


@pytest.mark.parametrize("name", SKILLS)
def test_variants_differ_across_learners_and_attempts(name):
    skill = get_skill(name)
    alice = [skill.variant(seed_for("alice", name, a)).prompt for a in range(6)]
    bob = [skill.variant(seed_for("bob", name, a)).prompt for a in range(6)]
    assert len(set(alice)) > 1, "a retry must be a new problem"
    assert alice != bob, "two learners must see different problems"


def test_attnlab_home_default_and_env(monkeypatch, tmp_path):
    from pathlib import Path

    from attnlab.practice import attnlab_home

    monkeypatch.setenv("ATTNLAB_HOME", str(tmp_path))
    assert attnlab_home() == tmp_path
    monkeypatch.delenv("ATTNLAB_HOME")
    assert attnlab_home() == Path.home() / ".attnlab"
