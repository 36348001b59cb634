"""The progress store: atomic JSON per learner, checksum, corrupt/hand-edited files backed up and recovered."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from attnlab.practice import ProgressStore
from attnlab.practice.record import SkillRecord
from attnlab.practice.store import SCHEMA


def _backups(store):
    return sorted(store.path.parent.glob(store.path.name + ".corrupt-*"))


def test_roundtrip_schema_checksum_and_no_temp_files(tmp_path):
    store = ProgressStore("ann", tmp_path)
    store.put("sdpa_full", SkillRecord(streak=2))
    doc = json.loads(store.path.read_text())
    assert doc["schema"] == SCHEMA and len(doc["checksum"]) == 64 and doc["learner"] == "ann"
    assert ProgressStore("ann", tmp_path).peek("sdpa_full").streak == 2
    assert [p.name for p in store.path.parent.iterdir() if p.name.endswith(".tmp")] == []
    assert store.path == tmp_path / "progress" / "ann.json"


def test_one_file_per_learner(tmp_path):
    a, b = ProgressStore("ann", tmp_path), ProgressStore("ben", tmp_path)
    a.put("x", SkillRecord(streak=1))
    b.visit("01")
    assert ProgressStore("ben", tmp_path).peek("x").streak == 0


def test_invalid_json_is_backed_up_and_last_good_copy_recovered(tmp_path):
    store = ProgressStore("ann", tmp_path)
    store.put("sdpa_full", SkillRecord(mastered=True, streak=3))
    store.path.write_text('{"schema": 2, "skills": {"sdpa_full": ')  # truncated write
    with pytest.warns(UserWarning, match="not valid JSON"):
        again = ProgressStore("ann", tmp_path)
    assert again.peek("sdpa_full").mastered is True  # nothing earned is lost
    backups = _backups(again)
    assert len(backups) == 1 and backups[0].read_text().startswith('{"schema": 2, "skills"')
    assert any(str(backups[0]) in n for n in again.notices)
    with_warnings = ProgressStore("ann", tmp_path)  # the recovered file is clean again
    assert with_warnings.notices == [] and with_warnings.peek("sdpa_full").mastered is True


def test_hand_edited_file_is_detected_backed_up_and_valid_records_kept(tmp_path):
    store = ProgressStore("ann", tmp_path)
    store.put("sdpa_full", SkillRecord(streak=2))
    store.put("causal_mask_build", SkillRecord(mastered=True))
    doc = json.loads(store.path.read_text())
    doc["skills"]["sdpa_full"]["streak"] = "many"  # invalid type: dropped
    doc["skills"]["causal_mask_build"]["attempts"] = 9  # valid: kept
    store.path.write_text(json.dumps(doc))
    with pytest.warns(UserWarning, match="changed outside attnlab"):
        again = ProgressStore("ann", tmp_path)
    assert again.peek("causal_mask_build").mastered is True
    assert again.peek("causal_mask_build").attempts == 9
    assert "sdpa_full" not in again.data["skills"]
    assert len(_backups(again)) == 1 and "recovered 1 skill record" in again.notices[0]


def test_garbage_without_any_good_copy_starts_afresh_but_keeps_the_backup(tmp_path):
    path = tmp_path / "progress" / "ann.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x00\xffnot json at all")
    with pytest.warns(UserWarning):
        store = ProgressStore("ann", tmp_path)
    assert store.data["skills"] == {} and len(_backups(store)) == 1
    assert "nothing could be recovered" in store.notices[0]


_UNWRITABLE_HOME = """
import sys, warnings
from attnlab.practice.store import ProgressStore, SkillRecord
store = ProgressStore("ann", sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    store.put("x", SkillRecord(streak=1))
assert any("Could not" in str(w.message) for w in caught), [str(w.message) for w in caught]
assert store.peek("x").streak == 1
print("kept in memory")
"""


def test_unwritable_home_never_crashes(tmp_path):
    """A home the learner cannot write: a warning, progress kept in memory, no crash. Root can write
    anywhere through CAP_DAC_OVERRIDE, so as root the learner's process runs without it (``setpriv``
    drops it from the bounding set): the same permission check an ordinary learner meets."""
    home = tmp_path / "ro"
    home.mkdir()
    home.chmod(0o500)
    cmd = [sys.executable, "-c", _UNWRITABLE_HOME, str(home)]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "as root this test needs util-linux's setpriv to drop CAP_DAC_OVERRIDE"
        cmd = [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner", *cmd]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        home.chmod(0o700)
    assert r.returncode == 0 and "kept in memory" in r.stdout, r.stdout + r.stderr
    assert not list(home.iterdir()), "nothing may be written into an unwritable home"


def test_home_is_a_file_never_crashes(tmp_path):
    home = tmp_path / "file"
    home.write_text("x")
    with pytest.warns(UserWarning, match="Could not read"):
        store = ProgressStore("ann", home)
    store.put("x", SkillRecord(streak=1))  # already in memory only: no second warning
    assert store.peek("x").streak == 1


def test_two_store_objects_never_overwrite_each_others_progress(tmp_path):
    from attnlab.practice import practice_item

    a = practice_item("sdpa_scale", ProgressStore("ann", tmp_path))  # e.g. the gate's card
    b = practice_item("uniform_loss", ProgressStore("ann", tmp_path))  # e.g. the mastery check's card
    assert a.check(a.variant.answer).correct
    assert b.check(b.variant.answer).correct  # b's store re-reads a's write before saving
    fresh = ProgressStore("ann", tmp_path)
    assert fresh.peek("sdpa_scale").streak == 1 and fresh.peek("uniform_loss").streak == 1
    a.next()
    assert a.check(a.variant.answer).correct
    assert ProgressStore("ann", tmp_path).peek("uniform_loss").streak == 1
    assert ProgressStore("ann", tmp_path).peek("sdpa_scale").streak == 2
