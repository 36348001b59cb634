"""Course paths, nbgrader configuration, and the ``release`` command (regenerates exercises/)."""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from attnlab_grader.judging.course_files import EXERCISES, REPO, assignments, solutions_dir  # noqa: F401 - their home

CONFIG_FILE = Path(__file__).resolve().parents[1] / "steps" / "nbgrader_config.py"


def _alembic_head() -> str:
    """The gradebook schema's alembic revision, read in this process from nbgrader's migration scripts.

    nbgrader's own ``get_alembic_version`` runs the ``alembic`` script found on ``PATH``, which is
    missing when the grader runs from an environment that is not activated; this answers the same
    question (``alembic heads``) without a child process, so no ``PATH`` has to change."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import _temp_alembic_ini
    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        head = ScriptDirectory.from_config(Config(ini)).get_current_head()
    if not head:
        raise RuntimeError("nbgrader's gradebook migrations name no head revision; reinstall nbgrader")
    return head


def _quiet_imports() -> None:
    # jsonschema's optional rfc3987_syntax import costs ~3 s per process and nbgrader never
    # validates URI formats (measured on nbgrader 0.9.6).
    sys.modules.setdefault("rfc3987_syntax", None)
    # A new gradebook records its schema revision; nbgrader finds it with a child process that needs
    # the `alembic` script on PATH. Answer in-process instead (measured: same revision).
    import nbgrader.api
    nbgrader.api.get_alembic_version = _alembic_head


class GradebookUnavailable(RuntimeError):
    """The ``--db`` URL is malformed, names a driver that is not installed, or cannot be reached."""


class GradebookLost(GradebookUnavailable):
    """The gradebook stopped answering during a grading run, after the submissions were graded.

    ``summaries`` (``{assignment: Summary}``) say what each submission came to; what was recorded
    before stays in the gradebook, and running the same command again completes the class."""

    def __init__(self, message: str, summaries: dict):
        super().__init__(message)
        self.summaries = summaries


#: What a submission's reason says when the gradebook's server went away while it was recorded.
GRADEBOOK_LOST = ("the gradebook's database stopped answering while this submission was being recorded ({}); "
                  "its grade is not complete: grade again once the database is back")


def is_connection_loss(err: BaseException | None) -> bool:
    """Whether ``err`` (or an exception it was raised from) is the gradebook's database failing or cutting the
    connection, judged by class: SQLAlchemy's ``OperationalError`` or ``DisconnectionError``, psycopg's
    ``OperationalError`` (a refused connection, a server shutdown), or a closed socket (``ConnectionError``)."""
    from sqlalchemy.exc import DisconnectionError, OperationalError
    kinds: tuple[type[BaseException], ...] = (OperationalError, DisconnectionError, ConnectionError)
    try:
        import psycopg
        kinds += (psycopg.OperationalError,)
    except ImportError:  # a SQLite gradebook: no driver
        pass
    seen = 0
    while err is not None and seen < 20:  # the chain of causes, bounded
        if isinstance(err, kinds):
            return True
        err, seen = err.__cause__ or err.__context__, seen + 1
    return False


def normalize_db_url(db_url: str | None) -> str | None:
    """The gradebook URL SQLAlchemy should use.

    ``postgresql://...`` and ``postgres://...`` mean the psycopg 3 driver that attnlab ships
    (SQLAlchemy's bare ``postgresql://`` would ask for psycopg2, which is not installed);
    a URL naming a driver explicitly (``postgresql+psycopg2://``) or another database is
    left as it is.  ``None`` stays ``None`` (the course's SQLite file).
    """
    if not db_url:
        return None
    for prefix in ("postgresql://", "postgres://"):
        if db_url.startswith(prefix):
            return "postgresql+psycopg://" + db_url[len(prefix):]
    return db_url


def check_gradebook(db_url: str | None) -> None:
    """Connect once to ``db_url`` and raise :class:`GradebookUnavailable` with a clear message.

    Run before grading so a typo or a stopped server is one sentence, not a traceback from a
    worker process.  SQLite URLs are not checked (nbgrader creates the file).
    """
    db_url = normalize_db_url(db_url)
    if not db_url or db_url.startswith("sqlite"):
        return
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError
    try:
        url = make_url(db_url)
    except ArgumentError as e:
        raise GradebookUnavailable(f"--db {db_url!r} is not a database URL ({e}); "
                                   "use e.g. postgresql://USER@HOST:5432/DBNAME") from None
    shown = url.render_as_string(hide_password=True)
    try:
        engine = create_engine(url, connect_args={"connect_timeout": 10}
                               if url.get_backend_name() == "postgresql" else {})
    except (NoSuchModuleError, ImportError) as e:
        raise GradebookUnavailable(f"no driver for gradebook URL {shown}: {e}. The grader's packages "
                                   "(the attnlab-grader distribution, pip install ./autograder) bring psycopg 3: install them and write "
                                   "the URL as postgresql://... or postgresql+psycopg://...") from None
    try:
        with engine.connect() as conn:
            conn.execute(text("select 1"))
    except SQLAlchemyError as e:
        reason = str(getattr(e, "orig", None) or e).strip().splitlines()[0]
        raise GradebookUnavailable(f"cannot open the gradebook at {shown}: {reason}. Check that the "
                                   "server is running, the database exists (createdb) and the user "
                                   "may connect; nothing was graded.") from None
    finally:
        engine.dispose()


def load_config(root: str | os.PathLike, db_url: str | None = None, item_timeout: float | None = None,
                slot: int | None = None, mechanism: str | None = None):
    """nbgrader Config for a course rooted at ``root`` (gradebook default: root/gradebook.db).

    ``item_timeout``, ``slot`` and ``mechanism``, when given, set ``SandboxGrade``'s traitlets of
    the same names (``timeout``, ``slot``: the grading worker's number, ``mechanism``: the sandbox
    to use); every grader setting lives in this config, none in environment variables."""
    _quiet_imports()
    from traitlets.config.loader import PyFileConfigLoader
    cfg = PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config()
    root = os.path.abspath(root)
    cfg.CourseDirectory.root = root
    cfg.CourseDirectory.db_url = normalize_db_url(db_url) or f"sqlite:///{os.path.join(root, 'gradebook.db')}"
    cfg.Exchange.root = os.path.join(root, ".exchange")
    # nbgrader grades the checked copies attnlab_grader.records.intake.stage writes, never submitted/ itself
    from attnlab_grader.records.intake import STAGED_DIR
    cfg.CourseDirectory.submitted_directory = STAGED_DIR
    cfg.Application.log_level = "WARN"
    # the pipeline reports a kept earlier result itself (summary, grades sheet); formgrader's
    # Autograde has no such report, so there AutogradeOutcome makes it a failure
    cfg.AutogradeOutcome.fail_when_kept = False
    if item_timeout:
        cfg.SandboxGrade.timeout = float(item_timeout)
    if slot is not None:
        cfg.SandboxGrade.slot = int(slot)
    if mechanism:
        cfg.SandboxGrade.mechanism = mechanism
    return cfg


def api_for(root, db_url=None, item_timeout=None, slot=None, mechanism=None):
    """An ``NbGraderAPI`` for the course at ``root`` (arguments: :func:`load_config`)."""
    _quiet_imports()
    import logging
    from nbgrader.apps import NbGraderAPI
    for name in ("traitlets", "NbGraderAPI", "nbgrader"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # nbgrader's gradebook logs a failed commit to tornado's app_log with its traceback and SQL ("Rolling back
    # session due to database error"); the exception itself reaches the grader, which says what happened in one
    # sentence per submission, so that log would only print a traceback on the instructor's terminal
    logging.getLogger("tornado.application").setLevel(logging.CRITICAL)
    import warnings
    warnings.filterwarnings("ignore", message=".*not in session.*")  # SQLAlchemy 2 noise, harmless
    return NbGraderAPI(config=load_config(root, db_url, item_timeout, slot, mechanism))


def stage_source(root: str | os.PathLike, assignment: str, solutions: str | os.PathLike | None = None) -> Path:
    """Copy ``<solutions>/<assignment>`` (:func:`solutions_dir`) into ``<root>/source/<assignment>``
    (replacing it)."""
    src = solutions_dir(solutions) / assignment
    if not (src / f"{assignment}.ipynb").exists():
        raise SystemExit(f"no source notebook {src / (assignment + '.ipynb')}; "
                         f"known assignments: {', '.join(assignments(solutions))}")
    dst = Path(root) / "source" / assignment
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    return dst


def generate(root, assignment: str, db_url=None, solutions=None) -> Path:
    """Run nbgrader ``generate_assignment`` for ``assignment`` in the course at ``root``."""
    stage_source(root, assignment, solutions)
    res = api_for(root, db_url).generate_assignment(assignment, force=True, create=True)
    if not res["success"]:
        raise RuntimeError(f"generate_assignment {assignment} failed:\n{res.get('error') or res.get('log')}")
    return Path(root) / "release" / assignment


def generate_many(root, names: list[str], db_url=None, solutions=None) -> dict[str, str]:
    """``generate`` for several assignments with ONE API and gradebook (much faster than one
    ``generate`` each).  Returns ``{name: error}`` for the sets that failed (the others are ready)."""
    errors, api = {}, None
    for name in names:
        try:
            stage_source(root, name, solutions)
            api = api or api_for(root, db_url)
            res = api.generate_assignment(name, force=True, create=True)
            if not res["success"]:
                errors[name] = f"generate_assignment {name} failed:\n{res.get('error') or res.get('log')}"
        except Exception as err:  # noqa: BLE001 - one broken set must not stop the others
            errors[name] = f"generate_assignment {name} failed: {type(err).__name__}: {err}"
    return errors


def release(names: list[str] | None = None, dest: Path = EXERCISES, solutions=None) -> list[Path]:
    """Regenerate ``dest/<name>`` for each assignment from the solutions folder (:func:`solutions_dir`
    of ``solutions``; the one command)."""
    out = []
    with tempfile.TemporaryDirectory(prefix="attnlab-release-") as tmp:
        api = None
        for name in names or assignments(solutions):
            stage_source(tmp, name, solutions)
            api = api or api_for(tmp)  # one gradebook and one API for all sets: much faster
            res = api.generate_assignment(name, force=True, create=True)
            if not res["success"]:
                raise RuntimeError(f"generate_assignment {name} failed:\n{res.get('error') or res.get('log')}")
            target = Path(dest) / name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(Path(tmp) / "release" / name, target)
            for nb_path in target.glob("*.ipynb"):
                _normalise(nb_path)
            out.append(target)
    return out


def _normalise(path: Path) -> None:
    """Stable JSON layout for committed notebooks (sorted keys, 1-space indent, newline)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def notebook_signature(path: Path) -> dict:
    """What must match between committed and regenerated exercises (sources + metadata)."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = [{"type": c["cell_type"], "source": "".join(c["source"]) if isinstance(c["source"], list)
              else c["source"], "metadata": c.get("metadata", {})} for c in nb["cells"]]
    return {"metadata": nb.get("metadata", {}), "cells": cells}
