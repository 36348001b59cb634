"""Fast checks of autograder/attnlab_grader/records/intake.py and the grading steps' guards (no sandbox, no nbgrader run).

The class-level proof (a whole crafted class graded next to honest classmates) is
test_intake.py; these run everywhere, also where the sandbox is unavailable.
"""
from __future__ import annotations

import glob
import json
import os

import nbformat
import pytest

from attnlab_grader.records.intake import (SubmissionIntake, SubmissionRefused, csv_cell, safe_json, safe_text,
                               stage, student_glob, take)

A = "02_scaled_dot_product_attention"


def _folder(tmp_path, student="alice"):
    d = tmp_path / "submitted" / student / A
    d.mkdir(parents=True)
    return d


def _notebook(d, name=f"{A}.ipynb", **meta):
    nb = nbformat.v4.new_notebook(metadata=meta)
    nb.cells.append(nbformat.v4.new_code_cell("x = 1"))
    nbformat.write(nb, str(d / name))
    return d / name


@pytest.mark.parametrize("student", ["star*", "lee[2]", "lee ", " lee", "  ", "a?b", "-rf", "zoë", ".hidden",
                                     "[x]", "x]"])
def test_student_glob_matches_exactly_its_folder(tmp_path, student):
    from nbgrader.coursedir import CourseDirectory
    for name in {student, "starlight", "lee2", "lee", "leeX", "axb", "x", "a b"}:
        (tmp_path / name).mkdir(exist_ok=True)
    pattern = CourseDirectory(student_id=student_glob(student)).student_id  # nbgrader strips spaces
    assert glob.glob(os.path.join(glob.escape(str(tmp_path)), pattern)) == [str(tmp_path / student)]


def test_safe_text_neutralises_terminal_and_bidi_controls():
    raw = "ok\x1b[2J\x07\x9b\u202eevil\u200b\nline"
    out = safe_text(raw)
    assert out == "ok\\x1b[2J\\x07\\x9b\\u202eevil\\u200b\\nline"
    assert safe_text(out) == out  # idempotent
    assert safe_json({"k\x1b": ["\x1b", 1, None]}) == {"k\\x1b": ["\\x1b", 1, None]}
    assert safe_text("é中文 ok") == "é中文 ok"


@pytest.mark.parametrize("cell,expected", [("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"), ("+1", "'+1"),
                                           ("-bob", "'-bob"), ("@SUM(A1)", "'@SUM(A1)"), ("bob", "bob"),
                                           ("\x1b[31m=x", "\\x1b[31m=x")])
def test_csv_cells_are_not_formulas(cell, expected):
    assert csv_cell(cell) == expected


def test_take_reads_only_the_notebook_and_timestamp(tmp_path):
    d = _folder(tmp_path)
    _notebook(d)
    (d / "timestamp.txt").write_text("2026-11-20 14:03:00.000000 UTC\n")
    (d / "extra.py").write_text("print('ignored')")
    (d / ".ipynb_checkpoints").mkdir()
    os.symlink("/nonexistent", d / ".ipynb_checkpoints" / "link")  # inside a skipped folder: never read
    taken = stage(tmp_path, A, "alice")
    assert "".join(json.loads(taken.notebook)["cells"][0]["source"]) == "x = 1"
    assert taken.timestamp.startswith("2026-11-20")
    staged = tmp_path / ".intake" / "alice" / A
    assert sorted(p.name for p in staged.iterdir()) == [f"{A}.ipynb", "timestamp.txt"]


def test_the_exchange_secret_is_carried_to_feedback_and_checked(tmp_path):
    """nbgrader's release_feedback names a student's feedback file with submission_secret.txt
    (written by `nbgrader submit`): without it in the staged copy, releasing feedback fails for
    the whole class (the hub end-to-end test caught this)."""
    d = _folder(tmp_path)
    _notebook(d)
    (d / "submission_secret.txt").write_text("ab12" * 32)
    stage(tmp_path, A, "alice")
    staged = tmp_path / ".intake" / "alice" / A
    assert (staged / "submission_secret.txt").read_text() == "ab12" * 32
    d2 = _folder(tmp_path, "bob")
    _notebook(d2)
    (d2 / "submission_secret.txt").write_text("../../etc/passwd\n" + "x" * 600)
    taken = stage(tmp_path, A, "bob")
    assert taken.secret is None and any("submission_secret.txt" in n for n in taken.notes)
    assert not (tmp_path / ".intake" / "bob" / A / "submission_secret.txt").exists()


def test_a_refused_submission_leaves_no_stale_copy(tmp_path):
    d = _folder(tmp_path)
    _notebook(d)
    stage(tmp_path, A, "alice")
    (d / f"{A}.ipynb").write_bytes(b"\x80\xfe")
    with pytest.raises(SubmissionRefused, match="not UTF-8"):
        stage(tmp_path, A, "alice")
    assert not (tmp_path / ".intake" / "alice" / A).exists()


@pytest.mark.parametrize("make,needle", [
    (lambda d: os.symlink(d.parent, d / "up"), "symbolic link"),
    (lambda d: os.mkfifo(d / "pipe"), "named pipe"),
    (lambda d: ((d / "data" / "deep").mkdir(parents=True), os.symlink("/etc/passwd", d / "data" / "deep" / "x")),
     "data/deep/x', which is a symbolic link"),
    (lambda d: ((d / "data").mkdir(), os.mkfifo(d / "data" / "pipe")), "named pipe"),
    (lambda d: (d / "timestamp.txt").write_text("\x00\x01"), "timestamp.txt"),
    (lambda d: (d / "timestamp.txt").write_text("x" * 1000), "timestamp.txt is 1000 bytes"),
])
def test_take_refuses_what_is_not_a_regular_file(tmp_path, make, needle):
    d = _folder(tmp_path)
    _notebook(d)
    make(d)
    with pytest.raises(SubmissionRefused, match=needle):
        take(d, A)


@pytest.mark.parametrize("content,needle", [
    (b'{"cells": [', "not valid notebook JSON"),
    (b'{"cells": [], "metadata": {"x": ' + b"[" * 3000 + b"]" * 3000 + b"}}", "nested more than 64"),
    (b"\x89PNG\r\n", "not UTF-8"),
    (b"[1, 2]", "not a Jupyter notebook"),
    (b'{"cells": [], "nbformat": 3, "metadata": {}}', "notebook format 3"),
    (b'{"cells": [7], "nbformat": 4, "nbformat_minor": 5, "metadata": {}}', "cell 1 is not a notebook cell"),
])
def test_take_says_what_is_wrong_with_the_notebook(tmp_path, content, needle):
    d = _folder(tmp_path)
    (d / f"{A}.ipynb").write_bytes(content)
    with pytest.raises(SubmissionRefused, match=needle):
        take(d, A)


def test_size_cap_is_a_setting(tmp_path):
    d = _folder(tmp_path)
    _notebook(d)
    take(d, A)
    with pytest.raises(SubmissionRefused, match="over the 100 bytes limit"):
        take(d, A, SubmissionIntake(max_notebook_bytes=100))


def test_misnamed_notebook(tmp_path):
    d = _folder(tmp_path)
    _notebook(d, f"{A} (1).ipynb")
    assert "(1).ipynb" in take(d, A).notes[0]
    with pytest.raises(SubmissionRefused, match="found 1 other notebook "):
        take(d, A, SubmissionIntake(accept_single_misnamed=False))
    _notebook(d, "other.ipynb")
    with pytest.raises(SubmissionRefused, match="found 2 other notebooks"):
        take(d, A)


def test_control_characters_in_a_folder_name_are_refused(tmp_path):
    d = _folder(tmp_path, "bob\nalice")
    _notebook(d)
    with pytest.raises(SubmissionRefused, match="control characters"):
        stage(tmp_path, A, "bob\nalice")


def test_symlinked_student_folder_is_refused(tmp_path):
    d = _folder(tmp_path, "alice")
    _notebook(d)
    os.symlink(tmp_path / "submitted" / "alice", tmp_path / "submitted" / "mallory")
    with pytest.raises(SubmissionRefused, match="symbolic link"):
        stage(tmp_path, A, "mallory")


def test_reason_is_judged_from_the_exception_class_never_the_log():
    """Why nbgrader could not grade a submission comes from the exception that stopped it, by class: our steps'
    refusal in its own words, a lost database said as such (also when wrapped), broken JSON, a damaged nbgrader
    schema and a too-deep notebook in words, anything else its first line; no exception at all says so."""
    import json

    import sqlalchemy.exc
    from nbformat.reader import NotJSONError
    from nbgrader.nbgraderformat.common import SchemaTooOldError

    from attnlab_grader.classroom.pipeline import _reason
    from attnlab_grader.steps.verify import SubmissionError
    assert _reason(SubmissionError("cell 'x' was deleted; copy it back")) == ("cell 'x' was deleted; copy it back", False)
    busy, lost = _reason(sqlalchemy.exc.OperationalError("INSERT ...", {}, Exception("database is locked")))
    assert lost and "database is locked" in busy and "OperationalError" not in busy
    try:  # a database failure raised from inside another error still counts as the database's
        try:
            raise sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception("server closed the connection"))
        except sqlalchemy.exc.OperationalError as inner:
            raise RuntimeError("autograde failed") from inner
    except RuntimeError as wrapped:
        assert _reason(wrapped)[1] is True
    assert "not valid notebook JSON" in _reason(NotJSONError("Notebook does not appear to be JSON"))[0]
    assert "not valid notebook JSON" in _reason(json.JSONDecodeError("Expecting value", "x", 0))[0]
    schema, lost = _reason(SchemaTooOldError("Outdated schema version: 0 (expected 3)", 0, 3))
    assert schema.startswith("the nbgrader metadata of a cell is damaged") and "Outdated schema" in schema
    assert not lost
    assert "nested too deeply" in _reason(RecursionError("maximum recursion depth exceeded"))[0]
    # the words of a message that merely mention a database or a traceback classify nothing
    assert _reason(ValueError("the database cell is broken")) == ("the database cell is broken", False)
    nothing, lost = _reason(None)
    assert "gave no reason" in nothing and not lost


def test_connection_loss_is_judged_by_class():
    """A refused or cut database connection is recognised by the exception's class (and its causes), a message
    that only names one is not."""
    import sqlalchemy.exc

    from attnlab_grader.records.course import is_connection_loss
    assert is_connection_loss(sqlalchemy.exc.OperationalError("x", {}, Exception("gone")))
    assert is_connection_loss(ConnectionRefusedError("refused"))
    assert not is_connection_loss(ValueError("OperationalError: server closed the connection"))
    assert not is_connection_loss(None)


class _DeepCheck:
    """A by-hand check whose comparison overflows the stack (a value nested too deeply)."""

    grade_id, kind, target, forbid_attrs = "test_x", "by_hand", None, ()

    def read(self, cells):
        return [[1]]

    def judge(self, value, raw, student):
        raise RecursionError("maximum recursion depth exceeded")


def test_one_items_crash_stays_in_that_item():
    from attnlab_grader.judging import verdict as V
    from attnlab_grader.judging.engine import _judge
    outcome, flag = _judge(_DeepCheck(), None, {}, "s", [], {}, [], None)
    assert not outcome.ok and "nested too deeply" in outcome.message and flag is None
    assert outcome.kind is V.NESTED


def test_nesting_is_read_from_the_exception_class_not_its_words():
    """An error raised while handling a RecursionError is nesting; an error that only says the words is not."""
    from attnlab_grader.judging.values import nested_too_deeply
    try:
        try:
            raise RecursionError("maximum recursion depth exceeded")
        except RecursionError as inner:
            raise TypeError("could not convert") from inner
    except TypeError as err:
        assert nested_too_deeply(err)
    assert not nested_too_deeply(TypeError("maximum recursion depth exceeded while calling a Python object"))


def test_course_kernel_is_accepted():
    from attnlab_grader.steps.verify import ACCEPTED_KERNELS, SubmissionError, VerifySubmission
    assert {"python3", "attnlab"} <= set(ACCEPTED_KERNELS)
    def nb(name):
        return nbformat.v4.new_notebook(metadata={"kernelspec": {"name": name, "display_name": name}})
    for name in ACCEPTED_KERNELS:
        VerifySubmission()._verify(nb(name), nb("python3"), ("s", A, A))
    with pytest.raises(SubmissionError, match="'ir'"):
        VerifySubmission()._verify(nb("ir"), nb("python3"), ("s", A, A))


def test_honest_uploads_are_accepted_and_say_what_was_ignored(tmp_path):
    """A notebook with a sub-folder beside it (data, checkpoints), saved with a UTF-8 byte-order
    mark, is graded; the notes say what was ignored or removed, and nbformat reads the staged copy."""
    d = _folder(tmp_path)
    path = _notebook(d)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    (d / "data" / "ckpt").mkdir(parents=True)
    (d / "data" / "ckpt" / "model.pt").write_bytes(b"\0" * 10)
    (d / "figures").mkdir()
    taken = stage(tmp_path, A, "alice")
    assert any("'data/', 'figures/'" in n and "ignored" in n for n in taken.notes), taken.notes
    assert any("byte-order mark" in n for n in taken.notes), taken.notes
    staged = tmp_path / ".intake" / "alice" / A
    assert sorted(p.name for p in staged.iterdir()) == [f"{A}.ipynb"]
    assert nbformat.read(str(staged / f"{A}.ipynb"), as_version=4).cells[0].source == "x = 1"


def test_any_python_kernel_is_accepted_with_a_note():
    from attnlab_grader.steps.verify import SubmissionError, check_kernel
    def nb(**meta):
        return nbformat.v4.new_notebook(metadata=meta)
    conda = nb(kernelspec={"name": "conda-env-dl-py", "display_name": "Python [conda env:dl]", "language": "python"})
    assert "'conda-env-dl-py'" in check_kernel(conda) and "ignored" in check_kernel(conda)
    assert check_kernel(nb(kernelspec={"name": "attnlab", "display_name": "x"})) is None
    assert "ignored" in check_kernel(nb(kernelspec={"name": "venv", "display_name": "v"}, language_info={"name": "python"}))
    with pytest.raises(SubmissionError, match="'ir'.*not Python"):
        check_kernel(nb(kernelspec={"name": "ir", "display_name": "R", "language": "R"}))
    # no language stated: a kernel named Python, or none at all (a notebook written by a tool), is accepted
    assert "ignored" in check_kernel(nb(kernelspec={"name": "myenv", "display_name": "Python (myenv)"}))
    assert "no kernel" in check_kernel(nb())
    with pytest.raises(SubmissionError, match="'ir'.*not Python"):
        check_kernel(nb(kernelspec={"name": "ir", "display_name": "R"}))
    with pytest.raises(SubmissionError, match="not Python"):
        check_kernel(nb(language_info={"name": "julia"}))


def test_any_result_from_the_pipe_ends_as_that_items_verdict():
    """wire.check_result never raises: a forged or broken result (deeply nested JSON, not JSON,
    the wrong shape) is one crashed item with a reason; a valid one gets the watch's record, and
    an operation of the answer cells counts against the checks that forbid it only."""
    from attnlab_grader.sandbox.wire import check_result, ended, watch_records
    check = {"forbid_ops": ["aten.bmm", "aten._softmax"]}
    for data in [b'{"trials": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}",
                 b'{"trials": [{"value": ' + b"[" * 200 + b"]" * 200 + b"}]}",
                 b"[" * 1_000_000, b"\xff\xfe{", b'{"trials": ["x"]}', b'{"cell_errors": [7]}', b"42"]:
        res = check_result(data, {}, 0, check)
        assert res["status"] == "crashed" and "nothing was compared" in res["error"], (data[:40], res)
    records = watch_records(b"3.1\top\taten._softmax.default\nc\top\taten.bmm.default\nc\top\taten.mm.default\n"
                            b"2.0\top\taten.bmm.default\nnonsense\n3.1\tforged\taten.mm.default\n3.1\taten.mm.default\n")
    data = b'{"status": "ok", "cell_errors": [], "trials": [{"status": "ok", "forbidden_ops": []}, {}]}'
    ok = check_result(data, records, 3, check, records["c"])
    op = lambda name: {"kind": "op", "op": name}  # noqa: E731 - the typed record of an operation
    assert ok["trials"][0]["forbidden_ops"] == [op("aten.bmm.default")]  # the child's own claim is replaced
    assert ok["trials"][1]["forbidden_ops"] == [op("aten._softmax.default"), op("aten.bmm.default")]
    # a check that forbids nothing: the cells' operations do not count against it
    assert check_result(data, records, 3, {"forbid_ops": []}, records["c"])["trials"][0]["forbidden_ops"] == []
    assert ended(9)["status"] in ("crashed", "timeout")


def test_a_library_call_counts_against_the_checks_that_forbid_its_name():
    """A call the watch recorded (a ``call`` of ``<qualified name> (in <module>)``) counts against a check whose
    ``forbid_names`` has a part of that name (not of its module's), compared without case and underscores (``Softmax.forward``
    for ``softmax``), and against no other check."""
    from attnlab_grader.sandbox.wire import forbidden_by, record_text, watch_line, watch_records
    mha = ("call", "multi_head_attention_forward (in torch.nn.functional)")
    module = ("call", "Softmax.forward (in torch.nn.modules.activation)")
    assert forbidden_by({"forbid_names": ["multi_head_attention_forward"]}, mha)
    assert forbidden_by({"forbid_names": ["softmax"]}, module)
    assert not forbidden_by({"forbid_names": ["softmax"]}, mha)
    assert not forbidden_by({"forbid_ops": ["softmax"]}, mha)  # an operation's name is not a call's
    assert not forbidden_by({"forbid_names": ["rearrange"]}, ("call", "reduce (in einops.einops)"))
    assert not forbidden_by({"forbid_names": ["flop_counter"]}, ("call", "FlopCounterMode.__init__ (in torch.utils.flop_counter)"))
    assert forbidden_by({}, ("changed", "torch.tensor"))  # a replaced library always counts
    # the record kind travels as a field of the line: an operation whose name reads like a call stays an operation
    assert watch_records(watch_line("0.0", "op", "call: softmax\tx")) == {"0.0": {("op", "call: softmax x")}}
    assert record_text({"kind": "call", "op": mha[1]}) == "call: " + mha[1]
    assert record_text({"kind": "changed", "op": "torch.tensor"}) == "changed library: torch.tensor"


def _raw_notebook(d, mutate, encode=lambda text: text.encode()):
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nb.cells += [nbformat.v4.new_markdown_cell("# title"), nbformat.v4.new_code_cell("x = 1")]
    raw = json.loads(nbformat.writes(nb))
    mutate(raw)
    (d / f"{A}.ipynb").write_bytes(encode(json.dumps(raw, indent=1)))


def _drop_fields(nb):
    del nb["cells"][0]["metadata"]
    del nb["cells"][1]["outputs"], nb["cells"][1]["execution_count"]


def _bad_ids(nb):
    nb["cells"][0]["id"] = "cell 1 / copy!"
    nb["cells"][1]["id"] = nb["cells"][0]["id"]


def _empty_nbgrader(nb):
    nb["cells"][1]["metadata"]["nbgrader"] = {"grade": False, "solution": False, "locked": False}  # the toolbar's "-"
    nb["cells"][0]["metadata"]["nbgrader"] = {}


def _loose_outputs(nb):
    nb["cells"][1]["outputs"] = [{"output_type": "display_data", "data": {"text/plain": "x"}},
                                 {"output_type": "execute_result", "data": {"text/plain": "1"}, "metadata": {}},
                                 {"output_type": "error", "ename": "E", "evalue": "v"}, {"output_type": "nonsense"}]
    nb["cells"][0]["outputs"] = []


def _format3_leftovers(nb):
    del nb["metadata"], nb["nbformat_minor"]
    nb["cells"][0].update(cell_type="heading", level=1, source="title")


@pytest.mark.parametrize("mutate,encode,needle", [
    (_loose_outputs, None, "1 cell output(s) were not valid"),
    (_format3_leftovers, None, "nbformat_minor"),
    (_drop_fields, None, "were missing or misplaced and were completed"),
    (_bad_ids, None, "cell id(s)"),
    (_empty_nbgrader, None, "2 cell(s) had empty nbgrader metadata"),
    (lambda nb: None, lambda text: text.replace("\n", "\r\n").encode("utf-16"), "UTF-16 byte-order mark"),
])
def test_honest_notebook_files_are_read_with_a_note(tmp_path, mutate, encode, needle):
    """A notebook file that differs only in what says nothing about the answers (missing required
    cell or output fields, outputs on a markdown cell, a format-3 heading cell, no format minor version,
    invalid or duplicated cell ids, empty nbgrader metadata, UTF-16 with CRLF line ends from a Windows
    tool) is staged as the valid notebook it stands for, with a note; its content is kept."""
    d = _folder(tmp_path)
    _raw_notebook(d, mutate, encode or (lambda text: text.encode()))
    (d / f"{A}-Copy1.ipynb").write_text("{}")
    (d / ".DS_Store").write_bytes(b"\0")
    taken = stage(tmp_path, A, "alice")
    assert any(needle in n for n in taken.notes), taken.notes
    assert any(f"'{A}-Copy1.ipynb'" in n and "ignored" in n for n in taken.notes), taken.notes
    nb = nbformat.reads(taken.notebook.decode("utf-8"), as_version=4)
    nbformat.validate(nb)
    assert [c.source for c in nb.cells][1:] == ["x = 1"] and nb.cells[0].source.endswith("title")
    assert "nbgrader" not in nb.cells[1].metadata and "nbgrader" not in nb.cells[0].metadata


def test_a_notebook_with_thousands_of_cells_is_refused_at_once(tmp_path):
    """Tens of thousands of (tiny) cells within the size cap would keep nbgrader busy for minutes
    (50 000 markdown cells: 80 s): a notebook over the cell limit is refused before grading, with the
    count and the limit in the reason."""
    d = _folder(tmp_path)
    nb = json.loads(nbformat.writes(nbformat.v4.new_notebook()))
    nb["cells"] = [{"cell_type": "markdown", "id": f"c{i}", "metadata": {}, "source": "x"} for i in range(1500)]
    (d / f"{A}.ipynb").write_text(json.dumps(nb))
    with pytest.raises(SubmissionRefused, match="1500 cells, over the limit of 1000"):
        stage(tmp_path, A, "alice")
    assert stage(tmp_path, A, "alice", SubmissionIntake(max_cells=2000)).notebook
