"""What the grader takes from a submission folder, and how submission text may reach people.

nbgrader reads ``submitted/<student>/<assignment>/`` itself: it globs the student id (``star*``
matches a classmate), strips spaces around it (``lee `` becomes ``lee``), follows symbolic links
and copies every extra file with ``shutil.copy`` into ``autograded/`` and then ``feedback/``.
The pipeline therefore never lets nbgrader see a submission folder.  :func:`stage` reads exactly
two files from it -- the notebook and an optional ``timestamp.txt`` -- through file descriptors
that refuse symbolic links (``O_NOFOLLOW``, relative to a directory opened the same way),
checks what it read (regular file, size cap, UTF-8, JSON, nesting depth, notebook format), and
writes a sanitized copy under ``<course>/.intake/<student>/<assignment>/``; nbgrader grades that
copy (``CourseDirectory.submitted_directory``) on exactly that folder (:func:`autograde_exact`).

Text a submission controls reaches people only through :mod:`attnlab_grader.records.text_safety`.
"""
from __future__ import annotations

import errno
import glob
import json
import os
import re
import shutil
import stat
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from traitlets import Bool, Integer
from traitlets.config import Configurable

from attnlab_grader.records.text_safety import csv_cell, safe_json, safe_text  # noqa: F401 - re-exported (their home: text_safety)
from attnlab_grader.sandbox.wire import json_depth

#: The folder (relative to the course root) that holds the sanitized copies nbgrader grades.
STAGED_DIR = ".intake"
#: Folders an editor or nbgrader leaves in an assignment folder; skipped, never read.
SKIPPED_DIRS = frozenset({".ipynb_checkpoints", "__pycache__"})


class SubmissionRefused(Exception):
    """The submission folder cannot be graded; the message says what was wrong, in words."""


class SubmissionIntake(Configurable):
    """Limits on what the grader reads from a submission folder (configurable in nbgrader_config.py
    as ``c.SubmissionIntake.<name>``, or ``python -m attnlab_grader grade --max-notebook-mb``)."""

    max_notebook_bytes = Integer(20 * 2**20, help="Largest notebook file accepted (bytes); a "
                                 "larger one is refused with its size in the reason.").tag(config=True)
    max_json_depth = Integer(64, help="Deepest nesting of JSON arrays/objects accepted in a "
                             "notebook (real notebooks stay below 20).").tag(config=True)
    max_cells = Integer(1000, help="Most cells accepted in a notebook (the course's notebooks have "
                        "at most a few dozen); a notebook with more is refused with the count in the "
                        "reason, before nbgrader spends minutes on it.").tag(config=True)
    max_timestamp_bytes = Integer(256, help="Largest timestamp.txt accepted (bytes).").tag(config=True)
    accept_single_misnamed = Bool(True, help="Grade the only .ipynb of a folder whose notebook "
                                  "has another name (e.g. '03_masks (1).ipynb'), with a note in "
                                  "the report; several candidates are refused.").tag(config=True)


@dataclass
class Taken:
    """What :func:`take` read: the notebook's bytes, the timestamp text, and notes for the report."""

    notebook: bytes
    timestamp: str | None = None
    notes: list[str] = field(default_factory=list)
    #: nbgrader's exchange writes ``submission_secret.txt`` at submit; release_feedback needs it
    #: in ``feedback/<id>/<set>/`` to name the student's feedback file (hex text, checked here).
    secret: str | None = None


# ---------------------------------------------------------------- student ids

def student_glob(student: str) -> str:
    """A glob pattern that nbgrader (``--student``/``CourseDirectory.student_id`` is a glob whose
    surrounding spaces are stripped) matches with exactly the folder ``student``: glob characters
    escaped, leading/trailing whitespace wrapped in ``[ ]`` so that stripping cannot remove it."""
    pat = glob.escape(student)
    if not pat.strip():
        return "".join(f"[{c}]" for c in pat)
    i, j = len(pat) - len(pat.lstrip()), len(pat.rstrip())
    return "".join(f"[{c}]" for c in pat[:i]) + pat[i:j] + "".join(f"[{c}]" for c in pat[j:])


def check_student_id(student: str) -> None:
    """Raise :class:`SubmissionRefused` for a folder name that cannot be a student id."""
    if student in ("", ".", ".."):
        raise SubmissionRefused(f"{student!r} is not a student folder name")
    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in student):
        raise SubmissionRefused(f"the folder name {safe_text(student)!r} contains control characters "
                                "(a newline or a terminal escape); rename the folder to the student's id")


def submission_folders(root, assignment: str) -> list[str]:
    """Student ids (folder names, exactly as on disk) under ``root/submitted`` that hold
    ``assignment``: one per folder, whatever characters it contains.  Entries that are symbolic
    links are included so that :func:`stage` refuses them with a reason."""
    base = Path(root, "submitted")
    if not base.is_dir():
        return []
    out = []
    with os.scandir(base) as it:
        for entry in it:
            if entry.name in SKIPPED_DIRS:
                continue
            if os.path.lexists(os.path.join(entry.path, assignment)) or entry.is_symlink():
                out.append(entry.name)
    return sorted(out)


# ---------------------------------------------------------------- reading a submission

_KIND = {stat.S_IFREG: "a file", stat.S_IFLNK: "a symbolic link", stat.S_IFDIR: "a folder", stat.S_IFIFO: "a named pipe (FIFO)",
         stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device"}


def _kind(mode: int) -> str:
    return _KIND.get(stat.S_IFMT(mode), "not a regular file")


def _open_dir(name: str, dir_fd: int | None, what: str) -> int:
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            try:
                kind = _kind(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
            except OSError:
                kind = "not a folder"
            raise SubmissionRefused(f"{what} is {kind}, not a folder; only a real folder holding the "
                                    "notebook is graded") from None
        raise SubmissionRefused(f"{what} cannot be opened ({err.strerror})") from None


def _read_regular(name: str, dir_fd: int, limit: int, what: str) -> bytes:
    """Bytes of the regular file ``name`` (never following a link, never blocking on a FIFO)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError as err:
        raise SubmissionRefused(f"{what} cannot be read ({err.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise SubmissionRefused(f"{what} is {_kind(st.st_mode)}, not a regular file; submit the file "
                                "itself")
    if st.st_size > limit:
        raise SubmissionRefused(f"{what} is {_size(st.st_size)}, over the {_size(limit)} limit; "
                                "clear the outputs (Edit > Clear Outputs of All Cells), save and resubmit")
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped between stat and open
            raise SubmissionRefused(f"{what} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise SubmissionRefused(f"{what} is over the {_size(limit)} limit; clear the outputs and resubmit")
    return data


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 2**10:.1f} KB" if n >= 2**10 else f"{n} bytes"


def check_notebook_bytes(data: bytes, name: str, limits: SubmissionIntake) -> tuple[bytes, list[str]]:
    """``(notebook bytes, notes)``: ``data`` read as the nbformat-4 notebook it stands for, as UTF-8
    JSON nbgrader can read, and a note for each honest difference that was normalized (a byte-order
    mark, missing cell fields, bad cell ids: :mod:`attnlab_grader.judging.notebook_file`).  Raises
    :class:`SubmissionRefused` otherwise; the message names what is wrong (encoding, JSON syntax,
    nesting, format)."""
    from attnlab_grader.judging.notebook_file import decode, repair
    try:
        text, notes = decode(data)
    except UnicodeDecodeError as err:
        raise SubmissionRefused(
            f"{name} is not UTF-8 text (byte 0x{data[err.start]:02x} at position {err.start} cannot be "
            "decoded): it was saved by another program or corrupted; open it in Jupyter, save it and "
            "resubmit, or start again from exercises/") from None
    if len(text) - len(text.lstrip("[{ \t\r\n")) > limits.max_json_depth:
        raise SubmissionRefused(f"{name} is JSON nested more than {limits.max_json_depth} levels deep; "
                                "this is not a notebook Jupyter writes: start again from exercises/")
    try:
        nb = json.loads(text)
    except RecursionError:
        raise SubmissionRefused(f"{name} is JSON nested more than {limits.max_json_depth} levels deep; "
                                "this is not a notebook Jupyter writes: start again from exercises/") from None
    except json.JSONDecodeError as err:
        raise SubmissionRefused(f"{name} is not valid notebook JSON ({err.msg} at line {err.lineno}, "
                                f"column {err.colno}): the file was cut off or edited outside Jupyter; "
                                "re-download it or start again from exercises/, and resubmit") from None
    if json_depth(nb, limits.max_json_depth) > limits.max_json_depth:
        raise SubmissionRefused(f"{name} is JSON nested more than {limits.max_json_depth} levels deep; "
                                "this is not a notebook Jupyter writes: start again from exercises/")
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise SubmissionRefused(f"{name} is JSON but not a Jupyter notebook (it has no list of "
                                "'cells'); submit the .ipynb from exercises/")
    if nb.get("nbformat") != 4:
        raise SubmissionRefused(f"{name} uses notebook format {safe_text(nb.get('nbformat'))!s}; save "
                                "it with Jupyter (format 4) and resubmit")
    if len(nb["cells"]) > limits.max_cells:
        raise SubmissionRefused(f"{name} has {len(nb['cells'])} cells, over the limit of {limits.max_cells} "
                                "(the released notebook has a few dozen); delete the cells you added for "
                                "experiments, save and resubmit")
    bad = next((i for i, c in enumerate(nb["cells"]) if not isinstance(c, dict)
                or not isinstance(c.get("source", ""), (str, list))
                or not isinstance(c.get("metadata", {}), dict)
                or c.get("cell_type") not in ("code", "markdown", "raw", "heading")), None)
    if bad is not None:
        raise SubmissionRefused(f"{name}: cell {bad + 1} is not a notebook cell (no cell type, text source or "
                                "metadata); the file was edited outside Jupyter")
    repaired = repair(nb)
    if repaired:
        text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    import nbformat
    try:  # what nbgrader will read and write, validated here so that it never fails later
        nbformat.validate(nbformat.reads(text, as_version=4))
    except Exception as err:  # noqa: BLE001 - nbformat raises many types; the words matter
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise SubmissionRefused(f"{name} cannot be read as a notebook ({safe_text(first)[:200]}); "
                                "start again from exercises/") from None
    return text.encode("utf-8"), notes + repaired


SECRET = "submission_secret.txt"
#: Entries (files and folders) of a sub-folder beside the notebook checked before it is ignored.
MAX_SUBFOLDER_ENTRIES = 10_000


def _check_subfolder(parent_fd: int, name: str, limits, shown: str | None = None, depth: int = 0,
                     seen: list | None = None) -> None:
    """Refuse a folder beside the notebook that holds a link, a pipe, a socket or a device
    (walked through descriptors, never following links; at most :data:`MAX_SUBFOLDER_ENTRIES`
    entries, 16 levels); plain files and folders are fine: the folder is ignored, never read."""
    shown = shown or safe_text(name)
    seen = seen if seen is not None else [0]
    if depth > 16:
        raise SubmissionRefused(f"the folder '{shown}' beside the notebook is nested more than 16 levels "
                                "deep; submit the notebook alone")
    fd = _open_dir(name, parent_fd, f"'{shown}'")
    try:
        with os.scandir(fd) as it:
            entries = list(it)
        for e in entries:
            seen[0] += 1
            if seen[0] > MAX_SUBFOLDER_ENTRIES:
                raise SubmissionRefused(f"a folder beside the notebook holds more than {MAX_SUBFOLDER_ENTRIES} "
                                        "entries; submit the notebook alone")
            st = e.stat(follow_symlinks=False)
            where = f"{shown}/{safe_text(e.name)}"
            if stat.S_ISDIR(st.st_mode):
                _check_subfolder(fd, e.name, limits, where, depth + 1, seen)
            elif not stat.S_ISREG(st.st_mode):
                raise SubmissionRefused(
                    f"the submission contains '{where}', which is {_kind(st.st_mode)}; only regular files "
                    "and folders of them are accepted (no links, pipes or devices): remove it and resubmit")
    finally:
        os.close(fd)


def take(folder, assignment: str, limits: SubmissionIntake | None = None) -> Taken:
    """Read ``folder`` (``submitted/<student>/<assignment>``): the notebook, ``timestamp.txt`` and
    the exchange's ``submission_secret.txt``.

    Raises :class:`SubmissionRefused` (the reason in words) when the folder or anything in it
    (sub-folders included) is a symbolic link, a FIFO, a socket or a device, when the notebook is
    missing, too large, not UTF-8, not JSON or nested too deeply, or when ``timestamp.txt`` is not a
    date.  Other regular files, sub-folders (data, checkpoints) and ``.ipynb_checkpoints`` are
    ignored (never read; a note says which folders); a UTF-8 byte-order mark before the notebook's
    JSON is removed (with a note)."""
    limits = limits or SubmissionIntake()
    folder = Path(folder)
    expected = f"{assignment}.ipynb"
    parent = _open_dir(str(folder.parent), None, f"the student folder '{safe_text(folder.parent.name)}'")
    try:
        fd = _open_dir(folder.name, parent, f"the folder '{safe_text(folder.parent.name)}/{assignment}'")
    finally:
        os.close(parent)
    try:
        entries = {e.name: e for e in os.scandir(fd)}
        notes, ignored = [], []
        for name, entry in sorted(entries.items()):
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                continue
            if stat.S_ISDIR(st.st_mode) and name in SKIPPED_DIRS:
                continue
            if name == expected and stat.S_ISDIR(st.st_mode):
                raise SubmissionRefused(f"'{expected}' is a folder, not a notebook file; submit the "
                                        "notebook itself")
            if stat.S_ISDIR(st.st_mode) and not name.endswith(".ipynb"):
                _check_subfolder(fd, name, limits)  # data, checkpoints: never read, but no links inside
                ignored.append(name)
                continue
            raise SubmissionRefused(
                f"the submission contains '{safe_text(name)}', which is {_kind(st.st_mode)}; only "
                "regular files and folders of them are accepted (no links, pipes or devices): remove it "
                "and resubmit")
        if ignored:
            notes.append(f"the folder{'s' if len(ignored) > 1 else ''} "
                         f"{', '.join(repr(safe_text(n) + '/') for n in ignored[:5])} beside the notebook "
                         f"{'were' if len(ignored) > 1 else 'was'} ignored (only the notebook is graded)")
        if expected in entries:
            chosen = expected
        else:
            found = sorted(n for n in entries if n.endswith(".ipynb"))
            if len(found) == 1 and limits.accept_single_misnamed:
                chosen = found[0]
                notes.append(f"graded '{safe_text(chosen)}' as '{expected}' (the only notebook in the "
                             "folder; please keep the released name)")
            elif found:
                raise SubmissionRefused(
                    f"expected the notebook '{expected}' but found {len(found)} other notebook"
                    f"{'s' if len(found) > 1 else ''} "
                    f"({', '.join(repr(safe_text(n)) for n in found[:5])}); keep one, named '{expected}'")
            else:
                raise SubmissionRefused(f"no notebook in the submission: expected '{expected}'")
        files = sorted(n for n, e in entries.items() if n not in (chosen, "timestamp.txt", SECRET)
                       and stat.S_ISREG(e.stat(follow_symlinks=False).st_mode))
        if files:
            shown = ", ".join(repr(safe_text(n)) for n in files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
            notes.append(f"the file{'s' if len(files) > 1 else ''} {shown} beside the notebook "
                         f"{'were' if len(files) > 1 else 'was'} ignored (only the notebook is graded)")
        data = _read_regular(chosen, fd, limits.max_notebook_bytes, f"the notebook '{safe_text(chosen)}'")
        data, read_notes = check_notebook_bytes(data, f"the notebook '{safe_text(chosen)}'", limits)
        notes += read_notes
        timestamp = None
        if "timestamp.txt" in entries:
            raw = _read_regular("timestamp.txt", fd, limits.max_timestamp_bytes, "timestamp.txt")
            timestamp = _parse_timestamp(raw)
        secret = None
        if SECRET in entries:
            raw = _read_regular(SECRET, fd, 1024, SECRET)
            text = raw.decode("ascii", "replace").strip()
            if re.fullmatch(r"[0-9a-fA-F]{16,512}", text):
                secret = text
            else:
                notes.append(f"{SECRET} is not the hex token nbgrader's submit writes; it was left out, "
                             "so this student's feedback cannot be released through the exchange")
        return Taken(data, timestamp, notes, secret)
    finally:
        os.close(fd)


def _parse_timestamp(raw: bytes) -> str | None:
    from nbgrader.utils import parse_utc
    try:
        text = raw.decode("utf-8").strip()
        if not text:
            return None
        parse_utc(text)
    except (UnicodeDecodeError, ValueError, OverflowError):
        raise SubmissionRefused("timestamp.txt does not hold a date and time (as nbgrader writes it, "
                                "e.g. 2026-11-20 14:03:00.000000 UTC); restore or remove it") from None
    return text


def stage(root, assignment: str, student: str, limits: SubmissionIntake | None = None) -> Taken:
    """Write the sanitized copy ``root/.intake/<student>/<assignment>/`` that nbgrader grades:
    the notebook (as ``<assignment>.ipynb``), the validated ``timestamp.txt`` and
    ``submission_secret.txt``, nothing else.

    An earlier copy is removed first (also when the submission is refused, so that nothing stale
    is graded).  Raises :class:`SubmissionRefused`."""
    check_student_id(student)
    dest = Path(root, STAGED_DIR, student, assignment)
    if dest.exists() or dest.is_symlink():
        shutil.rmtree(dest) if dest.is_dir() and not dest.is_symlink() else dest.unlink()
    taken = take(Path(root, "submitted", student, assignment), assignment, limits)
    dest.mkdir(parents=True)
    (dest / f"{assignment}.ipynb").write_bytes(taken.notebook)
    if taken.timestamp:
        (dest / "timestamp.txt").write_text(taken.timestamp + "\n", encoding="utf-8")
    if taken.secret:
        (dest / SECRET).write_text(taken.secret, encoding="ascii")
    return taken


# ---------------------------------------------------------------- running nbgrader on exact folders

def _exact(converter_cls):
    """``converter_cls`` (an nbgrader converter) that processes exactly the folders of
    ``students``: nbgrader's own ``init_notebooks`` globs the student id and then globs again the
    *paths it found* (``<step>/star*/<assignment>/*.ipynb``), so a folder named ``star*`` pulls in
    ``starlight``'s notebook.  Here the notebooks are listed, never globbed."""
    from nbgrader.converters.base import NbGraderException

    class Exact(converter_cls):
        students: list[str] = []
        failures: list[BaseException] = []  #: what each failed conversion raised (set per run by :func:`_run`)

        def init_notebooks(self) -> None:
            self.assignments, self.notebooks = {}, []
            for student in self.students:
                folder = self._format_source(self.coursedir.assignment_id, student)
                try:
                    names = sorted(n for n in os.listdir(folder) if n.endswith(".ipynb")
                                   and os.path.isfile(os.path.join(folder, n))
                                   and not os.path.islink(os.path.join(folder, n)))
                except OSError:
                    names = []
                if names:
                    self.assignments[folder] = [os.path.join(folder, n) for n in names]
            if not self.assignments:
                raise NbGraderException(f"no notebooks for {', '.join(map(repr, self.students))} in "
                                        f"{self._format_source(self.coursedir.assignment_id, '*')}")

        def _kept(self, method, *args):
            """Run nbgrader's own ``method``; an exception it raises is kept (the object, typed) before nbgrader
            catches it and only logs its text, then raised on for nbgrader to handle as usual."""
            try:
                return method(*args)
            except BaseException as err:
                self.failures.append(err)
                raise

        def init_destination(self, *args):
            return self._kept(super().init_destination, *args)

        def init_assignment(self, *args):
            return self._kept(super().init_assignment, *args)

        def convert_single_notebook(self, *args):
            return self._kept(super().convert_single_notebook, *args)

        def set_permissions(self, *args):
            return self._kept(super().set_permissions, *args)

    Exact.__name__ = converter_cls.__name__
    return Exact


def _run(app) -> dict:
    """nbgrader's ``capture_log(app)`` (``{"success", "error", "log"}``) plus ``"failure"``: the last exception a
    conversion raised, as the object (``None`` when none did), so callers judge a failure by its class and never
    by nbgrader's log text."""
    from nbgrader.utils import capture_log
    app.failures = []
    res = capture_log(app)
    res["failure"] = app.failures[-1] if app.failures else None
    return res


def autograde_exact(api, assignment: str, student: str) -> dict:
    """``api.autograde(assignment, student, force=True, create=True)`` on exactly the folder
    ``student`` (see :func:`_exact`); returns nbgrader's ``{"success", "error", "log"}`` and ``"failure"``, the
    exception that stopped it (:func:`_run`)."""
    from nbgrader.converters import Autograde
    from nbgrader.utils import temp_attrs
    with temp_attrs(api.coursedir, assignment_id=assignment, student_id=student_glob(student)):
        app = _exact(Autograde)(coursedir=api.coursedir, parent=api)
        app.students = [student]
        app.force, app.create_student = True, True
        return _run(app)


def feedback_exact(api, assignment: str, students: list[str]) -> dict:
    """``api.generate_feedback(assignment, force=True)`` for exactly these students' folders; the result as
    :func:`autograde_exact`'s."""
    from nbgrader.converters import GenerateFeedback
    from nbgrader.utils import temp_attrs
    from traitlets.config import Config
    c = Config()
    c.HTMLExporter.template_name = "feedback"
    with temp_attrs(api.coursedir, assignment_id=assignment):
        app = _exact(GenerateFeedback)(coursedir=api.coursedir, parent=api)
        app.update_config(c)
        app.students = list(students)
        app.force = True
        return _run(app)
